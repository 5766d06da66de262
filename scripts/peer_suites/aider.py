"""Aider: the cases of tests/basic/test_editblock.py, judged by Aider's own code.

The test file is read with Python's `ast` at run time. Each test becomes one or more cases:
  parse          `find_original_update_blocks(edit, ...)`: the reply text as it stands; the
                 starting tree gives every file the blocks name their SEARCH texts in order,
                 separated by unique filler lines (a block whose SEARCH is empty creates its file)
  replace        `replace_most_similar_chunk(whole, part, replace)`: a file holding `whole` and
                 one block (SEARCH `part`, REPLACE `replace`)
  do_replace     `strip_quoted_wrapping(text, ...)`: what `do_replace` does with a SEARCH text
                 wrapped in a file name and a fence; the file holds the unwrapped text
  find_filename  each `find_filename(lines, fence, valid_fnames)` assertion: `lines` written
                 before a block, the valid names as files in the repository (and in the chat)
  coder          a full-coder test (`Coder.create` + a mocked model reply): its files and reply

The peer's answer is computed by Aider itself: aider/coders/editblock_coder.py is loaded from
the checkout (with stand-ins for the modules it imports but these functions do not use) and the
reply goes through the same steps as `Coder.apply_updates`: `get_edits`, `apply_edits_dry_run`,
the new-file handling of `allowed_to_edit`, then `apply_edits` (which writes the blocks that
match and raises for the rest). Every test's own assertions are checked against that answer;
a mismatch is a harness error, not a verdict.
"""

import ast
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
import types
from typing import Any, Dict, List, Optional, Tuple

from .core import Case, HarnessError, PeerAnswer, describe_tree_change, snapshot, write_tree

TEST_FILE = "tests/basic/test_editblock.py"
MODULE_FILE = "aider/coders/editblock_coder.py"
TRIPLE = ("```", "```")

_LOAD_LOCK = threading.Lock()


def load_editblock(checkout: str):
    """aider/coders/editblock_coder.py of the checkout, with stand-ins for its heavy imports."""
    path = os.path.join(checkout, MODULE_FILE)
    if not os.path.isfile(path):
        raise HarnessError(f"no {MODULE_FILE} under {checkout}")
    with _LOAD_LOCK:
        saved = {k: v for k, v in sys.modules.items() if k == "aider" or k.startswith("aider.")}
        try:
            for k in saved:
                del sys.modules[k]
            pkg = types.ModuleType("aider")
            pkg.__path__ = [os.path.join(checkout, "aider")]
            coders = types.ModuleType("aider.coders")
            coders.__path__ = [os.path.join(checkout, "aider/coders")]
            utils = types.ModuleType("aider.utils")
            dump = types.ModuleType("aider.dump")
            dump.dump = lambda *a, **k: None
            base = types.ModuleType("aider.coders.base_coder")
            base.Coder = type("Coder", (), {})
            prompts = types.ModuleType("aider.coders.editblock_prompts")
            prompts.EditBlockPrompts = type("EditBlockPrompts", (), {})
            pkg.utils, pkg.dump, pkg.coders = utils, dump, coders
            for name, mod in {
                "aider": pkg,
                "aider.coders": coders,
                "aider.utils": utils,
                "aider.dump": dump,
                "aider.coders.base_coder": base,
                "aider.coders.editblock_prompts": prompts,
            }.items():
                sys.modules[name] = mod
            spec = importlib.util.spec_from_file_location("aider.coders.editblock_coder", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            return module
        finally:
            for k in [k for k in sys.modules if k == "aider" or k.startswith("aider.")]:
                del sys.modules[k]
            sys.modules.update(saved)


class _IO:
    """The parts of aider.io.InputOutput that the edit block code calls."""

    def __init__(self, dry_run: bool):
        self.dry_run = dry_run
        self.errors: List[str] = []

    def read_text(self, filename, silent=False):
        try:
            with open(str(filename), "r", encoding="utf-8") as f:
                return f.read()
        except (OSError, UnicodeError) as e:
            self.errors.append(str(e))
            return None

    def write_text(self, filename, content, *args, **kwargs):
        if self.dry_run:
            return
        with open(str(filename), "w", encoding="utf-8") as f:
            f.write(content)

    def tool_error(self, *a, **k):
        pass

    tool_output = tool_warning = tool_error


def run_aider(
    eb, root: str, reply: str, chat: List[str], fence=TRIPLE, dry_run: bool = False
) -> Tuple[bool, Optional[List[tuple]], str]:
    """Apply a model reply in `root` as Aider's coder does. Returns (ok, edits, message)."""
    coder = eb.EditBlockCoder.__new__(eb.EditBlockCoder)
    coder.partial_response_content = reply
    coder.fence = fence
    coder.shell_commands = []
    coder.dry_run = dry_run
    coder.io = _IO(dry_run)
    coder.abs_fnames = {os.path.abspath(os.path.join(root, f)) for f in chat}
    coder.abs_root_path = lambda p: os.path.abspath(os.path.join(root, p))
    coder.get_rel_fname = lambda p: os.path.relpath(p, root)
    coder.get_inchat_relative_files = lambda: sorted(
        os.path.relpath(p, root) for p in coder.abs_fnames
    )
    try:
        edits = coder.get_edits()
        edits = coder.apply_edits_dry_run(edits)
        # Coder.prepare_to_edit / allowed_to_edit: a file that does not exist is created (empty)
        # once the user confirms, and every edited file joins the chat
        for path, _, _ in edits:
            full = coder.abs_root_path(path)
            if full not in coder.abs_fnames and not os.path.exists(full) and not dry_run:
                os.makedirs(os.path.dirname(full), exist_ok=True)
                open(full, "a").close()
            coder.abs_fnames.add(full)
        coder.apply_edits(edits)
        return True, edits, ""
    except ValueError as e:
        return False, None, str(e.args[0]).strip().splitlines()[-1][:200] if e.args else "error"
    except Exception as e:  # Coder.apply_updates reports any other exception and stops too
        return False, None, f"exception while updating files: {type(e).__name__}: {e}"


# ---------------------------------------------------------------------------------------------
# Reading the test file


class _Unknown(Exception):
    pass


class _Env:
    def __init__(self):
        self.vars: Dict[str, Any] = {"__tmp__": 0}

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.JoinedStr):
            out = []
            for v in node.values:
                out.append(v.value if isinstance(v, ast.Constant) else str(self.eval(v.value)))
            return "".join(out)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add)):
            a, b = self.eval(node.left), self.eval(node.right)
            return a * b if isinstance(node.op, ast.Mult) else a + b
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.eval(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Name):
            if node.id in self.vars:
                return self.vars[node.id]
            raise _Unknown(node.id)
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "name"
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "Path"
        ):
            return os.path.basename(self.eval(node.value.args[0]))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "mkstemp":
            self.vars["__tmp__"] += 1
            return (None, f"tmpfile{self.vars['__tmp__']}")
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict":
            return {}
        raise _Unknown(ast.dump(node)[:80])


def _call_name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
    return None


def _find_call(node: ast.AST, name: str) -> Optional[ast.Call]:
    for sub in ast.walk(node):
        if _call_name(sub) == name:
            return sub
    return None


class _Test:
    """One test method, walked statement by statement."""

    def __init__(self, fn: ast.FunctionDef):
        self.fn = fn
        self.env = _Env()
        self.files: Dict[str, str] = {}  # written with open(name, "w")
        self.reply: Optional[str] = None  # coder.partial_response_content = ...
        self.asserts: List[Tuple[int, ast.AST, ast.AST]] = []
        self.raises = False
        self.calls: Dict[str, ast.Call] = {}
        self.reads: Dict[str, str] = {}  # content var -> file var
        self.coder_kwargs: Dict[str, Any] = {}
        self.expect: List[Tuple[str, Any]] = []  # (file, content) asserted after a read_text
        self._walk(fn.body)

    def _walk(self, stmts: List[ast.stmt]) -> None:
        for st in stmts:
            if isinstance(st, ast.Assign):
                target = st.targets[0]
                call = _call_name(st.value)
                if call == "read_text":
                    path_node = st.value.func.value.args[0]
                    self.reads[target.id] = self.env.eval(path_node)
                try:
                    value = self.env.eval(st.value)
                except _Unknown:
                    value = None
                if isinstance(target, ast.Name):
                    if value is not None:
                        self.env.vars[target.id] = value
                elif isinstance(target, ast.Tuple) and isinstance(value, tuple):
                    for t, v in zip(target.elts, value):
                        if isinstance(t, ast.Name):
                            self.env.vars[t.id] = v
                elif (
                    isinstance(target, ast.Attribute) and target.attr == "partial_response_content"
                ):
                    self.reply = value
                for name in ("find_original_update_blocks", "create", "replace_most_similar_chunk"):
                    c = _find_call(st.value, name)
                    if c is not None:
                        self.calls[name] = c
                        if name == "create":
                            for kw in c.keywords:
                                try:
                                    self.coder_kwargs[kw.arg] = self.env.eval(kw.value)
                                except _Unknown:
                                    self.coder_kwargs[kw.arg] = None
            elif isinstance(st, ast.With):
                for item in st.items:
                    ce = item.context_expr
                    if _call_name(ce) == "assertRaises":
                        self.raises = True
                    if _call_name(ce) == "open" and len(ce.args) > 1:
                        path = self.env.eval(ce.args[0])
                        for inner in st.body:
                            w = _find_call(inner, "write")
                            if w is not None:
                                self.files[path] = self.env.eval(w.args[0])
                for name in ("find_original_update_blocks",):
                    c = _find_call(st, name)
                    if c is not None:
                        self.calls[name] = c
                if not any(_call_name(i.context_expr) == "open" for i in st.items):
                    self._walk(st.body)
            elif isinstance(st, ast.FunctionDef):
                self._walk(st.body)
            elif isinstance(st, ast.Expr):
                call = st.value
                if _call_name(call) == "assertEqual":
                    self.asserts.append((st.lineno, call.args[0], call.args[1]))
                    a = call.args[0]
                    if isinstance(a, ast.Name) and a.id in self.reads:
                        self.expect.append((self.reads[a.id], self.env.eval(call.args[1])))
                for name in ("find_original_update_blocks", "replace_most_similar_chunk"):
                    c = _find_call(call, name)
                    if c is not None:
                        self.calls[name] = c


def _blocks_text(path: str, search: str, replace: str) -> str:
    return f"{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


# ---------------------------------------------------------------------------------------------
# Cases


def _peer(eb, files: Dict[str, str], reply: str, chat: List[str], fence, dry_run: bool):
    """An oracle: run Aider on the starting tree in a scratch folder."""

    def oracle(scratch: str) -> PeerAnswer:
        root = os.path.join(scratch, "aider")
        os.makedirs(root)
        write_tree(root, files)
        before = snapshot(root)
        ok, _, message = run_aider(eb, root, reply, chat, fence, dry_run)
        after = snapshot(root)
        if ok:
            return PeerAnswer(True, after, describe_tree_change(before, after))
        partial = describe_tree_change(before, after)
        says = f"fails: {message}" + ("" if after == before else f" (after writing: {partial})")
        return PeerAnswer(False, after, says)

    return oracle


def _parse_files(eb, reply: str, fence, valid) -> Tuple[Dict[str, str], Optional[List[tuple]]]:
    try:
        blocks = [b for b in eb.find_original_update_blocks(reply, fence, valid) if b[0]]
    except ValueError:
        return {}, None
    files: Dict[str, List[str]] = {}
    n = 0
    for path, search, _ in blocks:
        if not search.strip():
            continue
        n += 1
        parts = files.setdefault(path, [f"peer-suites filler {n} of {path}\n"])
        n += 1
        parts += [
            search if search.endswith("\n") else search + "\n",
            f"peer-suites filler {n} of {path}\n",
        ]
    return {p: "".join(v) for p, v in files.items()}, blocks


def _check(cond: bool, test: str, what: str) -> None:
    if not cond:
        raise HarnessError(f"{test}: Aider's code and its test disagree on {what}")


def _test_cases(eb, t: _Test, source: str) -> List[Case]:
    name = t.fn.name
    env = t.env.vars
    out: List[Case] = []
    if "create" in t.calls and t.reply is not None:  # a full coder test
        chat = env.get("files") or []
        dry = bool(t.coder_kwargs.get("dry_run"))
        expect = dict(t.expect)
        ok, _, _ = run_aider_check(eb, t.files, t.reply, chat, TRIPLE, dry, expect, name)
        out.append(
            Case(
                "aider",
                f"aider/coder/{name}",
                source,
                "aider",
                [t.reply.encode()],
                dict(t.files),
                oracle=_peer(eb, dict(t.files), t.reply, chat, TRIPLE, dry),
                dry_run=dry,
            )
        )
    elif "find_original_update_blocks" in t.calls:
        c = t.calls["find_original_update_blocks"]
        reply = t.env.eval(c.args[0])
        fence, valid = TRIPLE, None
        for kw in c.keywords:
            if kw.arg == "fence":
                fence = t.env.eval(kw.value)
            elif kw.arg == "valid_fnames":
                valid = t.env.eval(kw.value)
        files, blocks = _parse_files(eb, reply, fence, valid)
        _check((blocks is None) == t.raises, name, "whether the reply is refused")
        for _, a, b in t.asserts:
            if isinstance(a, ast.Name) and a.id in ("edits",) and blocks is not None:
                _check(
                    [tuple(x) for x in blocks] == [tuple(x) for x in t.env.eval(b)],
                    name,
                    "the blocks",
                )
        out.append(
            Case(
                "aider",
                f"aider/parse/{name}",
                source,
                "aider",
                [reply.encode()],
                files,
                oracle=_peer(eb, files, reply, list(valid or []), fence, False),
                note="each file holds its blocks' SEARCH texts between filler lines",
            )
        )
    elif "replace_most_similar_chunk" in t.calls:
        whole, part, repl = env["whole"], env["part"], env["replace"]
        expected = env["expected_output"]
        _check(eb.replace_most_similar_chunk(whole, part, repl) == expected, name, "the result")
        reply = _blocks_text("file.txt", part, repl)
        files = {"file.txt": whole}
        out.append(
            Case(
                "aider",
                f"aider/replace/{name}",
                source,
                "aider",
                [reply.encode()],
                files,
                oracle=_peer(eb, files, reply, ["file.txt"], TRIPLE, False),
            )
        )
    elif name.startswith("test_strip_quoted_wrapping"):
        call = _find_call(t.fn, "strip_quoted_wrapping")
        text = t.env.eval(call.args[0])
        fname = t.env.eval(call.args[1]) if len(call.args) > 1 else "file.txt"
        expected = env["expected_output"]
        _check(
            eb.strip_quoted_wrapping(text, fname if len(call.args) > 1 else None) == expected,
            name,
            "the unwrapped text",
        )
        search = text if text.endswith("\n") else text + "\n"
        reply = _blocks_text(fname, search, "peer-suites replacement\n")
        files = {fname: expected}
        out.append(
            Case(
                "aider",
                f"aider/do_replace/{name}",
                source,
                "aider",
                [reply.encode()],
                files,
                oracle=_peer(eb, files, reply, [fname], TRIPLE, False),
                note="the test's text as a SEARCH section; the file holds the unwrapped text",
            )
        )
    elif name == "test_find_filename" or _find_call(t.fn, "find_filename") is not None:
        out += _find_filename_cases(eb, t, source)
    return out


def run_aider_check(eb, files, reply, chat, fence, dry, expect, test):
    """Run Aider once in a scratch folder to check the test's own assertions hold."""
    root = tempfile.mkdtemp(prefix="peer-suites-aider-")
    try:
        write_tree(root, files)
        ok, edits, msg = run_aider(eb, root, reply, chat, fence, dry)
        for path, content in expect.items():
            with open(os.path.join(root, path), encoding="utf-8") as f:
                _check(f.read() == content, test, f"the content of {path}")
        return ok, edits, msg
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _find_filename_cases(eb, t: _Test, source: str) -> List[Case]:
    """One case per `find_filename` assertion, in the test's order."""
    out = []
    env = _Env()
    n = 0
    for st in t.fn.body:
        if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name):
            try:
                env.vars[st.targets[0].id] = env.eval(st.value)
            except _Unknown:
                pass
            continue
        if not (isinstance(st, ast.Expr) and _call_name(st.value) == "assertEqual"):
            continue
        a, b = st.value.args[0], st.value.args[1]
        call, want = (a, b) if _call_name(a) == "find_filename" else (b, a)
        if _call_name(call) != "find_filename":
            continue
        n += 1
        lines, fence, valid = (env.eval(x) for x in call.args)
        want = env.eval(want)
        _check(eb.find_filename(list(lines), fence, valid) == want, t.fn.name, f"assertion {n}")
        # (a line ending with the file's name would be taken for a file-name line)
        files = {v: f"the content of {v} for this case\n" for v in valid}
        if want in files:
            search, replace = files[want], f"edited by case {n}\n"
        else:
            search, replace = "", f"created by case {n}\n"
        reply = "".join(line + "\n" for line in lines)
        reply += f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"
        if lines and lines[-1].startswith(fence[0]):
            reply += fence[1] + "\n"
        out.append(
            Case(
                "aider",
                f"aider/find_filename/{t.fn.name}#{n}",
                f"{TEST_FILE}:{st.lineno}",
                "aider",
                [reply.encode()],
                files,
                oracle=_peer(eb, files, reply, list(valid), fence, False),
                note=f"Aider's test expects the block to go to {want!r}",
            )
        )
    return out


def cases(checkout: str, features: Optional[dict] = None) -> List[Case]:
    path = os.path.join(checkout, TEST_FILE)
    if not os.path.isfile(path):
        raise HarnessError(f"no {TEST_FILE} under {checkout}")
    eb = load_editblock(checkout)
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out: List[Case] = []
    for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)]:
        for fn in [n for n in cls.body if isinstance(n, ast.FunctionDef)]:
            if not fn.name.startswith("test_"):
                continue
            source = f"{TEST_FILE}:{fn.lineno}"
            try:
                found = _test_cases(eb, _Test(fn), source)
            except (HarnessError, _Unknown, KeyError, IndexError, TypeError, AttributeError) as e:
                found = [
                    Case(
                        "aider", f"aider/{fn.name}", source, "aider", [], {}, error=f"not read: {e}"
                    )
                ]
            if not found:
                found = [
                    Case(
                        "aider",
                        f"aider/{fn.name}",
                        source,
                        "aider",
                        [],
                        {},
                        skip="no patch text: the test checks a helper on its own",
                    )
                ]
            out += found
    return out
