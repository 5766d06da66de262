"""python-unidiff: its sample diffs (tests/samples/*.diff), judged by `git apply`.

The samples come without the files they were made from, so each case builds a starting tree
from the diff itself, parsed by unidiff (loaded from the checkout): every file the diff modifies,
removes or renames holds each hunk's old lines at the hunk's old line numbers, with unique filler
lines between them (a pure rename gets a one-line file). The oracle is the real `git apply` on
that tree, with the strip level (`-pN`) and `--unidiff-zero` the diff needs: the first of -p1,
-p0, -p2, -p3 under which `git apply --check` accepts the diff and its tree (placing the old
files under their old names, else their new names). patchgate gets the same diff with the same
options where it has them. unidiff's own view of each file (added, removed, renamed, modified,
binary, its path) is printed with the case.
"""

import importlib.util
import os
import re
import sys
import tempfile
import threading
from typing import Dict, List, Optional, Tuple

from .core import Case, HarnessError, git, make_repo
from .gitapply import git_oracle, strip_args

_LOCK = threading.Lock()


def load_unidiff(checkout: str):
    init = os.path.join(checkout, "unidiff", "__init__.py")
    if not os.path.isfile(init):
        raise HarnessError(f"no unidiff/__init__.py under {checkout}")
    with _LOCK:
        saved = {k: v for k, v in sys.modules.items() if k == "unidiff" or k.startswith("unidiff.")}
        try:
            for k in saved:
                del sys.modules[k]
            spec = importlib.util.spec_from_file_location(
                "unidiff", init, submodule_search_locations=[os.path.dirname(init)]
            )
            mod = importlib.util.module_from_spec(spec)
            sys.modules["unidiff"] = mod
            spec.loader.exec_module(mod)
            return mod
        finally:
            for k in [k for k in sys.modules if k == "unidiff" or k.startswith("unidiff.")]:
                del sys.modules[k]
            sys.modules.update(saved)


def _unquote(name: str) -> str:
    """A git-quoted name ("a/x\\303\\251") as the bytes-decoded string git means."""
    if not (name.startswith('"') and name.endswith('"')):
        return name
    body = name[1:-1]
    out = bytearray()
    i = 0
    esc = {"n": 10, "t": 9, '"': 34, "\\": 92, "a": 7, "b": 8, "f": 12, "r": 13, "v": 11}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n in "01234567":
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out.append(esc.get(n, ord(n)))
            i += 2
            continue
        out += c.encode("utf-8")
        i += 1
    return out.decode("utf-8", errors="replace")


def _strip(name: str, p: int) -> Optional[str]:
    """`name` without its first p components, as git apply -pN does (slashes collapse)."""
    if name in (None, "/dev/null"):
        return None
    name = _unquote(name.split("\t")[0])
    parts = [x for x in name.split("/") if x != ""]
    if len(parts) <= p:
        return None
    return "/".join(parts[p:])


def _file_text(pf, prefer_source: bool = True) -> str:
    """The old side of one patched file: each hunk's old lines at its old line numbers."""
    lines: List[str] = []
    for hunk in pf:
        start = max(hunk.source_start, 1)
        while len(lines) < start - 1:
            lines.append(f"peer-suites filler {len(lines) + 1}\n")
        # the old side: context and removed lines, as many as the header counts (unidiff may
        # append the blank line that separates two file diffs), and a following "\ No newline"
        src, taken = [], 0
        for line in hunk:
            if line.line_type == "\\" and src and src[-1][1]:
                src[-1] = (src[-1][0].rstrip("\n"), False)
            elif line.line_type == "+":
                if src:
                    src[-1] = (src[-1][0], False)
            elif line.line_type in (" ", "-", "") and taken < hunk.source_length:
                src.append((line.value or "\n", True))
                taken += 1
        lines += [v for v, _ in src]
    if not lines:
        lines.append("peer-suites content before the rename\n")
    return "".join(lines)


def _describe(pf) -> str:
    kind = (
        "added"
        if pf.is_added_file
        else "removed"
        if pf.is_removed_file
        else "renamed"
        if pf.is_rename
        else "modified"
    )
    extra = " (binary)" if getattr(pf, "is_binary_file", False) else ""
    return f"{pf.path} {kind}{extra}"


def _needs_zero(text: str) -> bool:
    """A hunk without context that only adds lines: git apply needs --unidiff-zero."""
    return bool(re.search(r"^@@ -[1-9]\d*,0 \+\d+(?:,\d+)? @@", text, re.M))


def _trees(patchset, p: int, use_target: bool) -> Dict[str, str]:
    files: Dict[str, str] = {}
    for pf in patchset:
        if pf.is_added_file or getattr(pf, "is_binary_file", False) and pf.is_added_file:
            continue
        name = _strip(pf.target_file if use_target else pf.source_file, p)
        if name is None:
            name = _strip(pf.source_file if use_target else pf.target_file, p)
        if name is None:
            continue
        files[name] = _file_text(pf)
    return files


def _choose(text: bytes, patchset, zero: bool) -> Tuple[int, Dict[str, str], bool]:
    """The first strip level (and placement of the old files) git apply --check accepts."""
    for p in (1, 0, 2, 3):
        for use_target in (False, True):
            files = _trees(patchset, p, use_target) if patchset is not None else {}
            with tempfile.TemporaryDirectory() as d:
                repo = make_repo(d, "check", files)
                patch = os.path.join(d, "x.diff")
                with open(patch, "wb") as f:
                    f.write(text)
                args = ["apply", "--check", f"-p{p}"] + (["--unidiff-zero"] if zero else [])
                if git(repo, *args, patch, check=False).returncode == 0:
                    return p, files, True
            if patchset is None:
                break
    for p in (1, 0, 2, 3):  # nothing applies: place the old files under the first usable names
        files = _trees(patchset, p, False) if patchset is not None else {}
        if files or patchset is None:
            return p, files, False
    return 1, {}, False


def cases(checkout: str, features: Optional[dict] = None) -> List[Case]:
    features = features or {}
    samples = os.path.join(checkout, "tests", "samples")
    if not os.path.isdir(samples):
        raise HarnessError(f"no tests/samples under {checkout}")
    ud = load_unidiff(checkout)
    out = []
    for name in sorted(os.listdir(samples)):
        if not name.endswith(".diff"):
            continue
        with open(os.path.join(samples, name), "rb") as f:
            text = f.read()
        try:
            patchset = ud.PatchSet(text.decode("utf-8", errors="surrogateescape"))
            view = "unidiff: " + "; ".join(_describe(pf) for pf in patchset)
        except Exception as e:  # a sample unidiff itself rejects
            patchset, view = None, f"unidiff rejects it: {type(e).__name__}: {str(e)[:100]}"
        zero = _needs_zero(text.decode("utf-8", errors="replace"))
        p, files, ok = _choose(text, patchset, zero)
        git_args = [f"-p{p}"] + (["--unidiff-zero"] if zero else [])
        extra = strip_args(features, p)
        notes = [
            view,
            f"git apply {' '.join(git_args)}" + ("" if ok else " (no strip level works)"),
        ]
        if p != 1 and not extra:
            notes.append(f"patchgate has no strip option, so it runs without -p{p}")
        if zero:
            if features.get("unidiff_zero"):
                extra = extra + [features["unidiff_zero"]]
            else:
                notes.append("patchgate has no --unidiff-zero option")
        out.append(
            Case(
                "unidiff",
                f"unidiff/{name}",
                f"tests/samples/{name}",
                "diff",
                [text],
                files,
                oracle=git_oracle(files, [text], git_args),
                extra_args=extra,
                note="; ".join(notes),
            )
        )
    return out
