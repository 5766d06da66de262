"""codex apply-patch: the fixture scenarios and the patch texts of the unit tests.

Scenarios (codex-rs/apply-patch/tests/fixtures/scenarios/*/): input/ is the starting tree,
patch.txt the input, expected/ the tree codex leaves (codex's own harness compares trees only and
ignores the exit code, so expected/ equal to input/ means codex refused).

Unit tests (src/lib.rs, src/parser.rs) are read from the Rust source at run time. UNIT_TESTS says
which kind each test is; the texts themselves (patches, file contents, expected results) are
always taken from the source, never copied here:
  argv      the test passes a command line to codex's invocation parser and asserts the hunks
            (and the `cd` directory) it recognises, or that it is not an apply_patch call
  apply     the test writes files into a temporary directory, applies a patch, and asserts the
            resulting contents (`assert_eq!(contents, ..)`, `content:`, `new_content:`,
            `!path.exists()`); the temporary directory's absolute paths become paths relative
            to the repository (codex resolves both alike; absolute paths have their own case)
  parse     the test asserts what `parse_patch_text` (or a helper on a fragment of a patch)
            returns for a text: an error (codex refuses) or the parsed hunks; the starting tree
            is made of exactly the chunks' old lines (with unique filler lines between them),
            so codex's result follows from the asserted hunks alone
"""

import os
from typing import Any, Dict, List, Optional, Tuple

from . import rustsrc as rs
from .core import Case, HarnessError, PeerAnswer, Tree, describe_tree_change

SUBDIR = "codex-rs/apply-patch"

_NOT_A_PATCH = (
    "codex's invocation rules (which command lines it intercepts as apply_patch), not a patch"
)

# test name -> kind, or ("skip", reason). A test of these files that is not listed is reported
# as skipped ("not classified"), so that a new upstream test shows up instead of vanishing.
UNIT_TESTS: Dict[str, Dict[str, Any]] = {
    "lib.rs": {
        "test_implicit_patch_single_arg_is_error": ("skip", _NOT_A_PATCH),
        "test_implicit_patch_bash_script_is_error": ("skip", _NOT_A_PATCH),
        "test_literal": "argv",
        "test_literal_applypatch": "argv",
        "test_heredoc": "argv",
        "test_heredoc_non_login_shell": "argv",
        "test_heredoc_wrapped_with_shell_snapshot": "argv",
        "test_heredoc_wrapped_with_shell_snapshot_mismatched_shells": "argv",
        "test_heredoc_applypatch": "argv",
        "test_powershell_heredoc": "argv",
        "test_powershell_heredoc_no_profile": "argv",
        "test_pwsh_heredoc": "argv",
        "test_cmd_heredoc_with_cd": "argv",
        "test_heredoc_with_leading_cd": "argv",
        "test_cd_with_semicolon_is_ignored": "argv",
        "test_cd_or_apply_patch_is_ignored": "argv",
        "test_cd_pipe_apply_patch_is_ignored": "argv",
        "test_cd_single_quoted_path_with_spaces": "argv",
        "test_cd_double_quoted_path_with_spaces": "argv",
        "test_echo_and_apply_patch_is_ignored": "argv",
        "test_apply_patch_with_arg_is_ignored": "argv",
        "test_double_cd_then_apply_patch_is_ignored": "argv",
        "test_cd_two_args_is_ignored": "argv",
        "test_cd_then_apply_patch_then_extra_is_ignored": "argv",
        "test_echo_then_cd_and_apply_patch_is_ignored": "argv",
        "test_add_file_hunk_creates_file_with_contents": "apply",
        "test_delete_file_hunk_removes_file": "apply",
        "test_update_file_hunk_modifies_content": "apply",
        "test_update_file_hunk_can_move_file": "apply",
        "test_multiple_update_chunks_apply_to_single_file": "apply",
        "test_update_file_hunk_interleaved_changes": "apply",
        "test_preserve_crlf_line_endings_on_update": "apply",
        "test_preserve_crlf_embedded_carriage_returns_on_append": "apply",
        "test_pure_addition_chunk_followed_by_removal": "apply",
        "test_update_line_with_unicode_dash": "apply",
        "test_unified_diff": "apply",
        "test_unified_diff_first_line_replacement": "apply",
        "test_unified_diff_last_line_replacement": "apply",
        "test_derive_new_contents_lf_trailing_newline": "apply",
        "test_unified_diff_insert_at_eof": "apply",
        "test_unified_diff_interleaved_changes": "apply",
        "test_apply_patch_should_resolve_absolute_paths_in_cwd": "apply",
        # asserts only the move's destination under the `cd` directory; the content written
        # there is the chunk's `+` line
        "test_apply_patch_resolves_move_path_with_effective_cwd": "apply",
        "test_apply_patch_fails_on_write_error": (
            "skip",
            "a read-only file makes codex's write fail: the environment, not a patch result",
        ),
    },
    "parser.rs": {
        "test_parse_patch_streaming": (
            "skip",
            "codex's streaming parser reports progress while a patch arrives; its output is "
            "never applied",
        ),
        "test_parse_patch_streaming_large_patch_by_character": (
            "skip",
            "codex's streaming parser reports progress while a patch arrives; its output is "
            "never applied",
        ),
        "test_parse_patch": "parse",
        "test_parse_patch_accepts_relative_and_absolute_hunk_paths": "parse",
        "test_hunk_resolve_path_accepts_relative_and_absolute_paths": (
            "skip",
            "resolves paths of hunk values built in the test; there is no patch text",
        ),
        "test_parse_patch_lenient": "parse",
        "test_parse_one_hunk": "parse",
        "test_update_file_chunk": "parse",
    },
}


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _tree_of(root: str) -> Tree:
    tree: Tree = {}
    if not os.path.isdir(root):
        return tree
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            full = os.path.join(dirpath, name)
            tree[os.path.relpath(full, root)] = ("file", _read(full), False)
    return tree


def scenario_cases(checkout: str) -> List[Case]:
    base = os.path.join(checkout, SUBDIR, "tests/fixtures/scenarios")
    if not os.path.isdir(base):
        raise HarnessError(f"no {SUBDIR}/tests/fixtures/scenarios under {checkout}")
    cases = []
    for name in sorted(os.listdir(base)):
        d = os.path.join(base, name)
        if not os.path.isdir(d):
            continue
        before = _tree_of(os.path.join(d, "input"))
        expected = _tree_of(os.path.join(d, "expected"))
        applied = expected != before
        says = (
            describe_tree_change(before, expected) if applied else "refuses (expected/ is input/)"
        )
        cases.append(
            Case(
                suite="codex",
                id=f"codex/scenario/{name}",
                source=os.path.relpath(os.path.join(d, "patch.txt"), checkout),
                input_format="codex",
                patches=[_read(os.path.join(d, "patch.txt"))],
                files={p: e[1] for p, e in before.items()},
                peer=PeerAnswer(applied, expected, says),
            )
        )
    return cases


# ---------------------------------------------------------------------------------------------
# From parsed hunks to a starting tree and codex's result


def _rel(path: str) -> str:
    return path[len(rs.ROOT) + 1 :] if path.startswith(rs.ROOT + "/") else path


def _lines(lines: List[str]) -> str:
    return "".join(line + "\n" for line in lines)


def synthesize(hunks: List[dict]) -> Tuple[Dict[str, str], Dict[str, str]]:
    """A starting tree holding exactly the hunks' old lines, and codex's result on it."""
    before: Dict[str, str] = {}
    after: Dict[str, str] = {}
    filler = 0

    def fill(path: str) -> str:
        nonlocal filler
        filler += 1
        return f"peer-suites filler {filler} of {path}"

    for h in hunks:
        kind = h.get("_type")
        path = _rel(str(h.get("path")))
        if kind == "AddFile":
            after[path] = h["contents"]
        elif kind == "DeleteFile":
            before[path] = f"content of {path}\n"
            after.pop(path, None)
        elif kind == "UpdateFile":
            old: List[str] = [fill(path)]
            new: List[str] = list(old)
            tail: List[str] = []
            for chunk in h["chunks"]:
                if not chunk["old_lines"]:
                    tail += chunk["new_lines"]  # codex appends a pure addition at the end
                    continue
                ctx = [chunk["change_context"]] if chunk.get("change_context") else []
                old += ctx + chunk["old_lines"]
                new += ctx + chunk["new_lines"]
                if not chunk.get("is_end_of_file"):
                    f = fill(path)
                    old.append(f)
                    new.append(f)
            before[path] = _lines(old)
            dest = _rel(str(h["move_path"])) if h.get("move_path") else path
            after.pop(path, None)
            after[dest] = _lines(new + tail)
        else:
            raise HarnessError(f"unknown hunk {kind}")
    for path, content in before.items():
        if (
            path not in after
            and not any(
                h.get("_type") == "DeleteFile" and _rel(str(h.get("path"))) == path for h in hunks
            )
            and not any(
                h.get("_type") == "UpdateFile" and _rel(str(h.get("path"))) == path for h in hunks
            )
        ):
            after[path] = content
    return before, after


def _files_named(patch: str) -> Dict[str, str]:
    """Files a refused patch names, so that the refusal can only be about the text."""
    files = {}
    for line in patch.splitlines():
        s = line.strip()
        for marker in ("*** Update File: ", "*** Delete File: "):
            if s.startswith(marker):
                files[_rel(s[len(marker) :])] = "x\n"
    return files


def _tree(files: Dict[str, Any]) -> Tree:
    out: Tree = {}
    for p, c in files.items():
        out[p] = ("file", c.encode("utf-8") if isinstance(c, str) else c, False)
    return out


def _check_known(value: Any, what: str, test: str) -> Any:
    def walk(v: Any) -> None:
        if isinstance(v, rs.Unknown):
            raise HarnessError(f"{test}: cannot read {what} ({v.what}); the test changed shape")
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk(value)
    return value


# ---------------------------------------------------------------------------------------------
# Unit tests


class _Module:
    def __init__(self, path: str):
        self.path = path
        self.toks = rs.tokenize(_read(path).decode("utf-8"))
        self.fns = rs.functions(self.toks)
        self.params = rs.fn_params(self.toks)
        self.attrs = rs.test_attrs(self.toks)
        # the test module's helpers (wrap_patch, heredoc_script, ...): the only functions the
        # evaluator calls; codex's own functions are what the tests assert on, never evaluated
        start = rs.test_module_start(self.toks)
        first_line = self.toks[start].line if start else 0
        self.helpers = {
            name: fn
            for name, fn in self.fns.items()
            if start and fn[0] >= first_line and "test" not in self.attrs.get(name, [])
        }

    def evaluator(self, body: List[rs.Tok]) -> rs.Evaluator:
        ev = rs.Evaluator({}, self.helpers)
        ev.fn_params = self.params
        ev.run_lets(body)
        return ev


def _argv_case(mod: _Module, test: str, body: List[rs.Tok], source: str) -> List[Case]:
    ev = mod.evaluator(body)
    single_add = None
    if "expected_single_add" in mod.helpers:
        single_add = ev._user_fn("expected_single_add", [])
    scripts: List[Tuple[str, Optional[List[dict]], Optional[str], bool]] = []
    for fn, matches in (
        ("assert_match", True),
        ("assert_match_args", True),
        ("assert_not_match", False),
    ):
        for _, args in rs.find_calls(body, fn):
            arg = ev.eval(args[0])
            text = arg[-1] if isinstance(arg, list) else arg
            workdir = ev.eval(args[1]) if matches else None
            scripts.append((text, single_add if matches else None, workdir, matches))
    if (
        not scripts
    ):  # `let args = ...; match maybe_parse_apply_patch(&args) { ... assert_eq!(hunks, ..) }`
        args = ev.scope.get("args")
        hunks, workdir = None, None
        for _, a in rs.find_macro_calls(body, "assert_eq"):
            lhs = [t.value for t in a[0]]
            if lhs == ["hunks"]:
                hunks = ev.eval(a[1])
            elif lhs == ["workdir"]:
                workdir = ev.eval(a[1])
        if isinstance(args, list) and hunks is not None:
            scripts.append((args[-1], hunks, workdir, True))
    if len(scripts) != 1:
        raise HarnessError(f"{test}: expected one command line, found {len(scripts)}")
    text, hunks, workdir, matches = _check_known(scripts[0], "the command line", test)
    if matches:
        _, after = synthesize(hunks)
        if workdir:
            after = {f"{workdir}/{p}": c for p, c in after.items()}
        peer = PeerAnswer(True, _tree(after), describe_tree_change({}, _tree(after)))
    else:
        peer = PeerAnswer(
            False, None, "not an apply_patch call: codex hands the script to the shell"
        )
    return [
        Case(
            "codex",
            f"codex/unit/{os.path.basename(mod.path)}/{test}",
            source,
            "codex",
            [text.encode("utf-8")],
            {},
            peer,
        )
    ]


def _apply_case(mod: _Module, test: str, body: List[rs.Tok], source: str) -> List[Case]:
    ev = mod.evaluator(body)
    # the starting files
    files: Dict[str, Any] = {}
    for _, args in rs.find_calls(body, "write"):
        path, content = ev.eval(args[0]), ev.eval(args[1])
        _check_known((path, content), "a written file", test)
        files[_rel(path)] = content
    # the input: the command line's script or patch if there is one, else the first patch text
    text = None
    for name in ("shell_script", "argv", "args", "patch"):
        for v in ev.history.get(name, []):
            if isinstance(v, list) and v and isinstance(v[-1], str):
                v = v[-1]
            if isinstance(v, str):
                text = v
                break
        if text is not None:
            break
    if text is None:
        raise HarnessError(f"{test}: no patch text found")
    text = text.replace(rs.ROOT + "/", "")
    # codex's result
    after = dict(files)
    target = next(iter(files), None)
    reads = {}
    for i, t in enumerate(body):  # let NAME = ...read_to_string(PATH)...
        if t.kind == "ident" and t.value == "let":
            j = i + 1
            if body[j].value == "mut":
                j += 1
            k = j
            while k < len(body) and body[k].value != ";":
                if body[k].value == "read_to_string" and body[k + 1].value == "(":
                    end = rs.matching(body, k + 1)
                    reads[body[j].value] = _rel(str(ev.eval(body[k + 2 : end])))
                    break
                k += 1
    expectations = 0
    for _, args in rs.find_macro_calls(body, "assert_eq"):
        names = [t.value for t in args[0] if t.kind == "ident"]
        if len(args[0]) == 1 and names and names[0] in reads:
            after[reads[names[0]]] = ev.eval(args[1])
            expectations += 1
        elif names == ["new_contents"]:
            after[target] = ev.eval(args[1])
            expectations += 1
    for i, t in enumerate(body):  # `content: "..".to_string()` / `new_content: ..`
        if (
            t.kind == "ident"
            and t.value in ("content", "new_content")
            and i + 1 < len(body)
            and body[i + 1].value == ":"
            and body[i - 1].value in ("{", ",")
        ):
            end = i + 2
            while body[end].value not in (",", "}"):
                if body[end].value in "([{":
                    end = rs.matching(body, end)
                end += 1
            after[target] = ev.eval(body[i + 2 : end])
            expectations += 1
    for _, args in rs.find_macro_calls(body, "assert"):
        toks = args[0]
        if len(toks) >= 5 and toks[0].value == "!" and toks[-3].value == "exists":
            gone = _rel(str(ev.eval(toks[1:-4])))
            after.pop(gone, None)
            expectations += 1
    note = ""
    if test == "test_apply_patch_resolves_move_path_with_effective_cwd":
        moved = ev.scope.get("worktree_dir"), ev.scope.get("source_name"), ev.scope.get("dest_name")
        _check_known(moved, "the move", test)
        src, dest = f"{_rel(moved[0])}/{moved[1]}", f"{_rel(moved[0])}/{moved[2]}"
        new_line = [x[1:] for x in text.splitlines() if x.startswith("+")]
        after.pop(src, None)
        after[dest] = _lines(new_line)
        note = "codex asserts the destination; its content is the chunk's `+` line"
        expectations += 1
    if not expectations:
        raise HarnessError(f"{test}: no expected result found")
    _check_known((files, after), "the expected files", test)
    peer = PeerAnswer(True, _tree(after), describe_tree_change(_tree(files), _tree(after)))
    return [
        Case(
            "codex",
            f"codex/unit/{os.path.basename(mod.path)}/{test}",
            source,
            "codex",
            [text.encode("utf-8")],
            files,
            peer,
            note=note,
        )
    ]


def _parse_cases(mod: _Module, test: str, body: List[rs.Tok], line: int, rel: str) -> List[Case]:
    ev = mod.evaluator(body)
    cases = []
    for n, (aline, args) in enumerate(rs.find_macro_calls(body, "assert_eq"), start=1):
        lhs, rhs = args[0], args[1]
        text = None
        for fn in ("parse_patch_text", "parse_one_hunk", "parse_update_file_chunk"):
            calls = rs.find_calls(lhs, fn)
            if not calls:
                continue
            fargs = calls[0][1]
            value = ev.eval(fargs[0])
            if fn == "parse_patch_text":
                mode = [t.value for t in fargs[1] if t.kind == "ident"][-1]
                if isinstance(value, str) and mode == "Strict" and value.lstrip().startswith("<<"):
                    text = None  # codex parses leniently: the Lenient assertion is the answer
                    break
                text = value
            elif isinstance(value, list):
                # a helper on a fragment: the same lines inside an envelope
                header = [] if fn == "parse_one_hunk" else ["*** Update File: chunk.txt"]
                end = [] if value and value[-1] == "*** End Patch" else ["*** End Patch"]
                text = "\n".join(["*** Begin Patch", *header, *value, *end])
            break
        if text is None:
            continue
        expected = ev.eval(rhs)
        if isinstance(expected, tuple) and expected[0] == "Ok":
            expected = expected[1]
        if isinstance(expected, dict) and expected.get("_type") == "ApplyPatchArgs":
            expected = expected["hunks"]
        if isinstance(expected, tuple) and len(expected) == 2 and isinstance(expected[0], dict):
            chunk = expected[0]  # (UpdateFileChunk, lines consumed)
            expected = [
                {"_type": "UpdateFile", "path": "chunk.txt", "move_path": None, "chunks": [chunk]}
            ]
        cid = f"codex/unit/{rel}/{test}#{n}"
        src = f"{SUBDIR}/src/{rel}:{aline}"
        _check_known(text, "the patch text", cid)
        if isinstance(expected, tuple) and expected[0] == "Err":
            files = _files_named(text)
            peer = PeerAnswer(False, None, f"refuses: {_err_text(expected[1])}")
        elif (
            isinstance(expected, rs.Unknown)
            and expected.what.startswith("Vec::new")
            or expected == []
        ):
            files = {}
            peer = PeerAnswer(
                False, None, "parses no hunk; applying it fails (`No files were modified.`)"
            )
        else:
            _check_known(expected, "the expected hunks", cid)
            files, after = synthesize(expected)
            peer = PeerAnswer(True, _tree(after), describe_tree_change(_tree(files), _tree(after)))
        cases.append(
            Case(
                "codex",
                cid,
                src,
                "codex",
                [text.encode("utf-8")],
                files,
                peer,
                note="starting tree made of the asserted hunks' old lines",
            )
        )
    if not cases:
        raise HarnessError(f"{test}: no parse assertion found")
    return cases


def _err_text(err: Any) -> str:
    if isinstance(err, dict):
        msg = err.get("0") or err.get("message")
        return str(msg if not isinstance(msg, rs.Unknown) else err.get("_type"))[:120]
    return "parse error"


def unit_cases(checkout: str) -> List[Case]:
    cases: List[Case] = []
    for rel, table in UNIT_TESTS.items():
        path = os.path.join(checkout, SUBDIR, "src", rel)
        if not os.path.isfile(path):
            raise HarnessError(f"no {SUBDIR}/src/{rel} under {checkout}")
        mod = _Module(path)
        for test, (line, body) in mod.fns.items():
            if not test.startswith("test_"):
                continue
            source = f"{SUBDIR}/src/{rel}:{line}"
            cid = f"codex/unit/{rel}/{test}"
            kind = table.get(test, ("skip", "not classified in UNIT_TESTS (a new upstream test?)"))
            if "windows" in mod.attrs.get(test, []):
                kind = ("skip", "runs on Windows only (#[cfg(windows)])")
            if isinstance(kind, tuple):
                cases.append(Case("codex", cid, source, "codex", [], {}, skip=kind[1]))
                continue
            try:
                if kind == "argv":
                    cases += _argv_case(mod, test, body, source)
                elif kind == "apply":
                    cases += _apply_case(mod, test, body, source)
                else:
                    cases += _parse_cases(mod, test, body, line, rel)
            except (HarnessError, ValueError, IndexError, KeyError, TypeError, AttributeError) as e:
                cases.append(Case("codex", cid, source, "codex", [], {}, error=f"not read: {e}"))
    return merge_duplicates(cases)


def merge_duplicates(cases: List[Case]) -> List[Case]:
    """Tests that feed patchgate the same input with the same expectation count once."""
    seen: Dict[tuple, Case] = {}
    out = []
    for c in cases:
        if c.skip or c.error:
            out.append(c)
            continue
        key = (
            tuple(c.patches),
            tuple(sorted((k, str(v)) for k, v in c.files.items())),
            c.peer.applied,
            None if c.peer.tree is None else tuple(sorted(c.peer.tree.items())),
        )
        if key in seen:
            seen[key].also.append(c.id)
        else:
            seen[key] = c
            out.append(c)
    return out


def cases(checkout: str, features: Optional[dict] = None) -> List[Case]:
    return scenario_cases(checkout) + unit_cases(checkout)
