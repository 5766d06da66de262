"""What every suite shares: cases, temporary repositories, running patchgate, and judging.

A case is one input a peer's own test suite feeds its tool, with the peer's answer: the tree the
peer leaves behind (or "refused": it leaves the tree as it was). The harness builds the same
starting tree in a fresh git repository, runs the built patchgate binary on the same input, and
compares the trees byte for byte (file content, the executable bit, symlink targets).

Verdicts:
  agree       same resulting tree; or both refuse
  documented  patchgate refuses, changes nothing, and the case is one of the deliberate
              differences listed in DOCUMENTED (all-or-nothing, `ambiguous`, `--lenient`,
              no fuzzy file names), each citing docs/input-formats.md; a `--lenient` one only
              if patchgate run again with --lenient gives the peer's tree
  disagree    anything else; "WRONG PLACE" when patchgate exited 0 with a tree that differs
              from the peer's (it wrote an edit the peer did not write), "CHANGED ON FAILURE"
              when it exited non-zero and still changed the tree
  skipped     the peer's test asserts something that is not a patch result (see the reason)
"""

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple, Union

DOC = "docs/input-formats.md#deliberate-differences-from-the-peers"

# The deliberate differences (docs/input-formats.md, "Deliberate differences from the peers").
DIFFERENCE_KINDS = {
    "all-or-nothing": "the peer applies the hunks that match and leaves the rest; patchgate "
    "applies all or nothing",
    "ambiguous": "Aider edits the first of several matches; patchgate reports `ambiguous`",
    "lenient": "the peer matches ignoring whitespace or typographic characters; patchgate does "
    "that only with --lenient",
    "fuzzy-names": "Aider resolves a file name that is not in the repository to a similar one "
    "(or tries the other files in the chat); patchgate takes the path as written",
    "hunk-garbage": "git apply skips lines that look like hunk lines outside a hunk as garbage; "
    "patchgate refuses them (a hunk whose counts are short would lose its rest silently)",
}

# Which cases are deliberate differences: case id -> (kind, one-line reason). Kept as data so
# that a reader sees every exception in one place; a case listed here that patchgate handles
# like the peer simply agrees.
DOCUMENTED: Dict[str, Tuple[str, str]] = {
    # git
    "git/t4135/diff-from-svn": (
        "hunk-garbage",
        "Subversion's `@@ +1 0,0 @@` and a stray `-` line for a deleted empty file: git skips "
        "them, patchgate refuses the patch (docs/input-formats.md, differences from git apply)",
    ),
    # codex
    "codex/scenario/015_failure_after_partial_success_leaves_changes": (
        "all-or-nothing",
        "codex writes created.txt, then fails on the missing file; patchgate writes nothing",
    ),
    "codex/unit/lib.rs/test_update_line_with_unicode_dash": (
        "lenient",
        "codex folds an EN DASH and a NON-BREAKING HYPHEN to `-`; patchgate needs --lenient",
    ),
    # aider: replace_most_similar_chunk tests
    "aider/replace/test_replace_part_with_missing_leading_whitespace": (
        "lenient",
        "Aider matches lines whose indentation is missing from SEARCH; patchgate needs --lenient",
    ),
    "aider/replace/test_replace_part_with_missing_varied_leading_whitespace": (
        "lenient",
        "Aider matches lines whose indentation is missing from SEARCH; patchgate needs --lenient",
    ),
    "aider/replace/test_replace_part_with_just_some_missing_leading_whitespace": (
        "lenient",
        "Aider matches lines whose indentation differs from SEARCH; patchgate needs --lenient",
    ),
    "aider/replace/test_replace_part_with_missing_leading_whitespace_including_blank_line": (
        "lenient",
        "Aider drops SEARCH's leading blank line and re-indents; patchgate needs --lenient",
    ),
    "aider/replace/test_replace_multiple_matches": (
        "ambiguous",
        "SEARCH `line1` occurs twice; Aider edits the first, patchgate reports `ambiguous`",
    ),
    "aider/replace/test_replace_multiple_matches_missing_whitespace": (
        "ambiguous",
        "SEARCH `line1` matches two indented lines; Aider edits the first, patchgate refuses",
    ),
    "aider/find_filename/test_find_filename#6": (
        "fuzzy-names",
        "`file1_py` names no file; Aider picks the similar chat file `file1.py`",
    ),
    "aider/find_filename/test_find_filename#7": (
        "fuzzy-names",
        "`\\windows__init__.py` names no file; Aider picks a similar chat file name",
    ),
    "aider/find_filename/test_find_filename#2": (
        "fuzzy-names",
        "`file3.py` is not in the repository; Aider picks the chat file `dir/file3.py` by its "
        "base name",
    ),
}


class HarnessError(Exception):
    """The harness itself cannot run a case (a checkout lacks a file, a test changed shape)."""


# A tree: relative path -> ("file", bytes, executable) or ("link", target).
Tree = Dict[str, tuple]
FileSpec = Union[str, bytes, tuple]


@dataclass
class PeerAnswer:
    """What the peer does with the case's input."""

    applied: bool
    tree: Optional[Tree]  # the peer's resulting tree (None: computed by `oracle` at run time)
    says: str  # one line: what the peer does, for the report


@dataclass
class Case:
    suite: str
    id: str  # suite/group/name, what -k matches
    source: str  # where the case comes from in the peer's checkout (file:line or path)
    input_format: str  # --input for patchgate
    patches: List[bytes]  # applied in order (git apply with several files applies each in turn)
    files: Dict[str, FileSpec]  # the starting tree
    peer: Optional[PeerAnswer] = None
    # When the peer's answer is computed by running the peer (git apply, Aider's functions):
    oracle: Optional[Callable[[str], PeerAnswer]] = None
    extra_args: List[str] = field(default_factory=list)
    dry_run: bool = False
    skip: Optional[str] = None  # reason the case cannot be judged
    error: Optional[str] = None  # the harness could not read the case (a test changed shape?)
    note: str = ""  # shown with the verdict (e.g. how the case was reconstructed)
    also: List[str] = field(default_factory=list)  # identical cases merged into this one


@dataclass
class Result:
    case: Case
    verdict: str  # agree | documented | disagree | skipped | error
    peer: Optional[PeerAnswer] = None
    pg_exit: Optional[int] = None
    pg_summary: str = ""
    wrong_place: bool = False
    changed_on_failure: bool = False
    detail: List[str] = field(default_factory=list)
    documented: Optional[Tuple[str, str]] = None
    lenient_check: Optional[str] = None

    def to_json(self) -> dict:
        out = {
            "id": self.case.id,
            "suite": self.case.suite,
            "source": self.case.source,
            "verdict": self.verdict,
            "wrong_place": self.wrong_place,
            "changed_on_failure": self.changed_on_failure,
            "patchgate_exit": self.pg_exit,
            "patchgate": self.pg_summary,
            "peer": self.peer.says if self.peer else None,
            "peer_applied": self.peer.applied if self.peer else None,
            "detail": self.detail,
            "note": self.case.note or None,
            "also": self.case.also or None,
        }
        if self.documented:
            kind, reason = self.documented
            out["documented"] = {"kind": kind, "reason": reason, "doc": DOC}
            if self.lenient_check:
                out["documented"]["with_lenient"] = self.lenient_check
        if self.case.skip:
            out["skip_reason"] = self.case.skip
        return out


# ---------------------------------------------------------------------------------------------
# Trees and repositories


def snapshot(root: str) -> Tree:
    tree: Tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != ".git"]
        names = list(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in names:
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if os.path.islink(full):
                tree[rel] = ("link", os.readlink(full))
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    data = f.read()
                tree[rel] = ("file", data, bool(os.stat(full).st_mode & 0o100))
    return tree


def write_tree(root: str, files: Dict[str, FileSpec]) -> None:
    for rel, spec in files.items():
        full = os.path.join(root, rel)
        os.makedirs(os.path.dirname(full) or root, exist_ok=True)
        if isinstance(spec, tuple) and spec[0] == "link":
            os.symlink(spec[1], full)
            continue
        executable = False
        if isinstance(spec, tuple):
            spec, executable = spec[0], spec[1]
        data = spec.encode("utf-8") if isinstance(spec, str) else spec
        with open(full, "wb") as f:
            f.write(data)
        os.chmod(full, 0o755 if executable else 0o644)


def git(repo: str, *args: str, check: bool = True, input: Optional[bytes] = None):
    env = dict(os.environ)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    env.update(
        GIT_AUTHOR_NAME="peer-suites",
        GIT_AUTHOR_EMAIL="peer-suites@example.invalid",
        GIT_COMMITTER_NAME="peer-suites",
        GIT_COMMITTER_EMAIL="peer-suites@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    proc = subprocess.run(
        ["git", *args], cwd=repo, input=input, capture_output=True, env=env, timeout=120
    )
    if check and proc.returncode != 0:
        raise HarnessError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc


def make_repo(parent: str, name: str, files: Dict[str, FileSpec]) -> str:
    """A git repository holding `files`, committed (so both tools start from a clean HEAD)."""
    repo = os.path.join(parent, name)
    os.makedirs(repo)
    git(repo, "init", "-q")
    git(repo, "config", "core.autocrlf", "false")
    git(repo, "config", "core.filemode", "true")
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "preimage")
    return repo


# ---------------------------------------------------------------------------------------------
# patchgate


@dataclass
class PgRun:
    exit: int
    summary: str
    tree: Tree
    runs: List[dict]


def patchgate_features(binary: str) -> Dict[str, Optional[str]]:
    """Options of `patchgate apply` this harness can use, found in its --help."""
    try:
        text = subprocess.run(
            [binary, "apply", "--help"], capture_output=True, text=True, timeout=60
        ).stdout
    except OSError as e:
        raise HarnessError(f"cannot run {binary}: {e}") from e
    strip = None
    for flag in ("--strip", "-p"):
        if f"{flag} <" in text or f"{flag}=" in text or f" {flag}," in text:
            strip = flag
            break
    zero = "--unidiff-zero" if "--unidiff-zero" in text else None
    return {"strip": strip, "unidiff_zero": zero}


def summarize_report(exit_code: int, stdout: bytes, stderr: bytes) -> str:
    try:
        report = json.loads(stdout.decode("utf-8", errors="replace"))
    except ValueError:
        msg = stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"exit {exit_code}: " + (" / ".join(msg[:3]) if msg else "(no report)")
    parts = [f"exit {exit_code} {report.get('status')}"]
    error = report.get("error")
    if isinstance(error, dict):
        parts.append(str(error.get("message") or error))
    elif error:
        parts.append(str(error))
    for edit in report.get("edits") or []:
        status = edit.get("status")
        if status == "applied" and not edit.get("note"):
            continue
        hunk = edit.get("hunk") or {}
        where = edit.get("file_path")
        if hunk:
            where = f"{where} hunk {hunk.get('index')}"
        line = f"edit {edit.get('index')} ({where}): {status}"
        if edit.get("message"):
            line += f": {edit['message']}"
        if edit.get("note"):
            line += f" [note: {edit['note']}]"
        parts.append(line)
    return "; ".join(p for p in parts if p)[:600]


def run_patchgate(
    binary: str, repo: str, case: Case, scratch: str, extra: Tuple[str, ...] = ()
) -> PgRun:
    """Run patchgate once per patch of the case, stopping at the first failure."""
    runs = []
    exit_code = 0
    summaries = []
    for i, patch in enumerate(case.patches):
        patch_file = os.path.join(scratch, f"patch-{i}.in")
        with open(patch_file, "wb") as f:
            # a test's absolute paths into its temporary directory point into the repository
            f.write(patch.replace(b"@ROOT@", os.path.realpath(repo).encode()))
        cmd = [binary, "apply", patch_file, "--input", case.input_format, "--checks", "none"]
        cmd += ["--format", "json", "-C", repo, *case.extra_args, *extra]
        if case.dry_run:
            cmd.append("--dry-run")
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=120)
        except subprocess.TimeoutExpired as e:
            raise HarnessError(f"patchgate timed out: {' '.join(cmd)}") from e
        exit_code = proc.returncode
        summaries.append(summarize_report(proc.returncode, proc.stdout, proc.stderr))
        runs.append({"cmd": cmd, "exit": proc.returncode})
        if proc.returncode != 0:
            break
    summary = (
        summaries[0]
        if len(summaries) == 1
        else " | ".join(f"patch {i + 1}: {s}" for i, s in enumerate(summaries))
    )
    return PgRun(exit_code, summary, snapshot(repo), runs)


# ---------------------------------------------------------------------------------------------
# Judging


def describe_tree_change(before: Tree, after: Tree, limit: int = 4) -> str:
    changes = []
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a == b:
            continue
        if a is None:
            changes.append(f"creates {path}{entry_brief(b)}")
        elif b is None:
            changes.append(f"deletes {path}")
        else:
            changes.append(f"changes {path}{entry_brief(b)}")
    if not changes:
        return "no change"
    more = f", +{len(changes) - limit} more" if len(changes) > limit else ""
    return ", ".join(changes[:limit]) + more


def entry_brief(entry: tuple) -> str:
    if entry[0] == "link":
        return f" (symlink -> {entry[1]})"
    data = entry[1]
    text = data[:60].decode("utf-8", errors="replace")
    more = "…" if len(data) > 60 else ""
    mode = ", executable" if entry[2] else ""
    return f" ({text!r}{more}{mode})"


def tree_diff(expected: Tree, actual: Tree, limit: int = 3) -> List[str]:
    """Lines saying how patchgate's tree differs from the peer's."""
    import difflib

    out = []
    for path in sorted(set(expected) | set(actual)):
        a, b = expected.get(path), actual.get(path)
        if a == b:
            continue
        if len(out) >= limit * 8:
            out.append("  …")
            break
        if a is None:
            out.append(f"  {path}: patchgate has it{entry_brief(b)}, the peer does not")
        elif b is None:
            out.append(f"  {path}: the peer has it{entry_brief(a)}, patchgate does not")
        elif a[0] != b[0] or a[0] == "link":
            out.append(f"  {path}: peer{entry_brief(a)} vs patchgate{entry_brief(b)}")
        elif a[1] == b[1]:
            out.append(f"  {path}: same content, executable peer={a[2]} patchgate={b[2]}")
        else:
            ta = a[1].decode("utf-8", errors="replace").splitlines(keepends=True)
            tb = b[1].decode("utf-8", errors="replace").splitlines(keepends=True)
            diff = list(difflib.unified_diff(ta, tb, "peer/" + path, "patchgate/" + path, n=1))
            out.extend("  " + repr(d.rstrip("\n"))[1:-1] for d in diff[:14])
            if len(diff) > 14:
                out.append("  …")
    return out


def judge(
    case: Case,
    peer: PeerAnswer,
    before: Tree,
    pg: PgRun,
    rerun_lenient: Optional[Callable[[], PgRun]] = None,
) -> Result:
    res = Result(case, "agree", peer=peer, pg_exit=pg.exit, pg_summary=pg.summary)
    peer_tree = peer.tree if peer.tree is not None else before
    pg_changed = pg.tree != before
    same = pg.tree == peer_tree
    if case.dry_run and pg.exit == 0 and not pg_changed and peer_tree == before:
        return res
    if same and (pg.exit == 0) == peer.applied:
        return res
    if same and not peer.applied and pg.exit != 0:
        return res
    if not peer.applied and pg.exit != 0 and not pg_changed and peer_tree == before:
        return res  # both refuse (a peer that fails after writing part of it does not)
    res.verdict = "disagree"
    if pg.exit != 0 and pg_changed:
        res.changed_on_failure = True
    if pg.exit == 0 and not same:
        res.wrong_place = True
    if not res.wrong_place and not res.changed_on_failure and pg.exit != 0:
        doc = DOCUMENTED.get(case.id)
        if doc:
            res.verdict = "documented"
            res.documented = doc
            if doc[0] != "lenient" or rerun_lenient is None:
                return res
            # the difference is only documented if --lenient then does what the peer does
            again = rerun_lenient()
            if again.exit == 0 and again.tree == peer_tree:
                res.lenient_check = "agrees with --lenient"
                return res
            res.verdict = "disagree"
            res.lenient_check = f"still differs with --lenient: {again.summary[:300]}"
            res.detail.append(
                "  listed as a --lenient difference, but with --lenient patchgate gives: "
                + again.summary[:300]
            )
            if again.exit == 0:
                res.wrong_place = True
            res.detail.extend(tree_diff(peer_tree, again.tree))
            return res
    if same and peer.applied and pg.exit != 0:
        res.detail.append("  same tree, but patchgate's exit code says it failed")
    if same and not peer.applied and pg.exit == 0:
        res.detail.append("  same tree, but patchgate exits 0 where the peer refuses")
    res.detail.extend(tree_diff(peer_tree, pg.tree))
    return res


def keep_or_remove(path: str, keep: Optional[str], case_id: str) -> None:
    if keep:
        dest = os.path.join(keep, case_id.replace("/", "__"))
        if os.path.exists(dest):
            shutil.rmtree(dest)
        shutil.move(path, dest)
    else:
        shutil.rmtree(path, ignore_errors=True)


def run_case(binary: str, case: Case, keep: Optional[str]) -> Result:
    if case.skip:
        return Result(case, "skipped")
    if case.error:
        return Result(case, "error", detail=[f"  harness: {case.error}"])
    scratch = tempfile.mkdtemp(prefix="peer-suites-")
    try:
        try:
            repo = make_repo(scratch, "patchgate", case.files)
            before = snapshot(repo)
            peer = case.peer if case.peer is not None else case.oracle(scratch)
            pg = run_patchgate(binary, repo, case, scratch)

            def rerun_lenient() -> PgRun:
                repo2 = make_repo(scratch, "patchgate-lenient", case.files)
                return run_patchgate(binary, repo2, case, scratch, extra=("--lenient",))

            return judge(case, peer, before, pg, rerun_lenient)
        except HarnessError as e:
            res = Result(case, "error")
            res.detail.append(f"  harness: {e}")
            return res
    finally:
        keep_or_remove(scratch, keep, case.id)
