"""git's apply tests: t4101-apply-nonl, t4109-apply-multifrag, t4110-apply-scan and
t4135-apply-weird-filenames, judged by the real `git apply`.

Each `git apply` of these scripts is one case. Its starting tree is rebuilt from the script
(t4101's `(echo a; echo b) >frotz.0` lines are run with sh; t4135's `try_filename` calls, its
`reset_preimage` and `echo preimage >...` steps, and its Subversion diff written by a heredoc are
read from the script text), its patches are the script's data files under t/t41NN/. The peer's
answer is what `git apply` (with the test's options, all patch files in one call as the test
does) leaves in a repository holding that tree; patchgate gets the same patches one after the
other (`-pN` as its strip option when it has one). The test's own expectation (`test_cmp`, and
`test_expect_failure` where git is known to fail) is printed with the case.
"""

import os
import re
import shlex
import subprocess
import tempfile
from typing import Dict, List, Optional

from .core import Case, HarnessError, PeerAnswer, describe_tree_change, git, make_repo, snapshot

SCRIPTS = (
    "t4101-apply-nonl.sh",
    "t4109-apply-multifrag.sh",
    "t4110-apply-scan.sh",
    "t4135-apply-weird-filenames.sh",
)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def git_oracle(
    files: Dict[str, object],
    patches: List[bytes],
    args: List[str],
    expect: Optional[Dict[str, Optional[bytes]]] = None,
):
    """The peer's answer: `git apply ARGS patch...` in a repository holding `files`.

    `expect` is the test's own expectation (path -> content, None: the file is gone); when git
    succeeds and its tree does not meet it, the harness is wrong, not patchgate."""

    def oracle(scratch: str) -> PeerAnswer:
        repo = make_repo(scratch, "git-apply", files)
        before = snapshot(repo)
        names = []
        for i, p in enumerate(patches):
            name = os.path.join(scratch, f"git-{i}.patch")
            with open(name, "wb") as f:
                f.write(p)
            names.append(name)
        proc = git(repo, "apply", *args, *names, check=False)
        after = snapshot(repo)
        if proc.returncode == 0:
            for path, content in (expect or {}).items():
                got = after.get(path)
                if (got[1] if got else None) != content:
                    raise HarnessError(f"git apply does not give the test's {path}")
            return PeerAnswer(True, after, describe_tree_change(before, after))
        err = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        says = "git apply fails: " + (err[0] if err else f"exit {proc.returncode}")
        if after != before:
            says += f" (after writing: {describe_tree_change(before, after)})"
        return PeerAnswer(False, after, says)

    return oracle


def strip_args(features: dict, p: int) -> List[str]:
    if p == 1 or not features.get("strip"):
        return []
    return [features["strip"], str(p)]


def _case(
    tid: str,
    source: str,
    files,
    patches: List[bytes],
    git_args: List[str],
    features,
    note: str,
    p: int = 1,
    expect=None,
) -> Case:
    extra = strip_args(features, p)
    if p != 1 and not extra:
        note += f"; patchgate has no strip option, so it runs without -p{p}"
    return Case(
        "git",
        tid,
        source,
        "diff",
        patches,
        files,
        oracle=git_oracle(files, patches, git_args, expect),
        extra_args=extra,
        note=note,
    )


def t4101(tdir: str, features) -> List[Case]:
    script = _read(os.path.join(tdir, "t4101-apply-nonl.sh")).decode()
    setup = [x for x in script.splitlines() if re.match(r"^\(echo .*\) >frotz\.\d+$", x)]
    if not setup:
        raise HarnessError("t4101: no `(echo ...) >frotz.N` setup lines")
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["sh", "-c", "\n".join(setup)], cwd=d, check=True)
        frotz = {int(n.split(".")[1]): _read(os.path.join(d, n)) for n in os.listdir(d)}
    cases = []
    for i in sorted(frotz):
        for j in sorted(frotz):
            diff = os.path.join(tdir, "t4101", f"diff.{i}-{j}")
            if i == j or not os.path.exists(diff):
                continue
            cases.append(
                _case(
                    f"git/t4101/diff.{i}-{j}",
                    f"t/t4101/diff.{i}-{j}",
                    {"frotz": frotz[i]},
                    [_read(diff)],
                    [],
                    features,
                    note=f"test expects frotz to become frotz.{j}",
                    expect={"frotz": frotz[j]},
                )
            )
    return cases


def _apply_lines(script: str):
    """(test title, patch files, expected file) of each `git apply ... && test_cmp` test."""
    out = []
    for m in re.finditer(r"test_expect_success '([^']*)' '(.*?)\n'", script, re.S):
        title, body = m.group(1), m.group(2)
        idx = body.find("git apply")
        cmp_ = re.search(r"test_cmp (\S+) (\S+)", body)
        if idx < 0:
            continue
        rest = body[idx + len("git apply") :].split("&&")[0]
        words = shlex.split(rest.replace("\\\n", " "))
        out.append((title, words, cmp_.groups() if cmp_ else None))
    return out


def multi_patch(tdir: str, name: str, features) -> List[Case]:
    """t4109 / t4110: several patch files in one `git apply`, from an empty tree."""
    script_name = next(s for s in SCRIPTS if s.startswith(name))
    script = _read(os.path.join(tdir, script_name)).decode()
    cases = []
    for n, (title, words, cmp_) in enumerate(_apply_lines(script), start=1):
        paths = []
        for w in words:
            w = w.replace("$TEST_DIRECTORY", tdir)
            if not os.path.isabs(w):
                w = os.path.join(tdir, name, w)
            paths.append(w)
        patches = [_read(p) for p in paths]
        rel = " ".join(os.path.relpath(p, tdir) for p in paths)
        compared, expect = "", None
        if cmp_:
            names = [x.strip('"').replace("$TEST_DIRECTORY", tdir) for x in cmp_]
            compared = " vs ".join(os.path.basename(x) for x in names)
            data = [x for x in names if os.path.isabs(x)]
            work = [x for x in names if not os.path.isabs(x)]
            if len(data) == 1 and len(work) == 1:
                expect = {work[0]: _read(data[0])}
        cases.append(
            _case(
                f"git/{name}/{n}",
                f"t/{script_name} ({title})",
                {},
                patches,
                [],
                features,
                note=f"git apply {rel}; test compares {compared}; patchgate applies each in turn",
                expect=expect,
            )
        )
    return cases


def t4135(tdir: str, features) -> List[Case]:
    script_name = "t4135-apply-weird-filenames.sh"
    script = _read(os.path.join(tdir, script_name)).decode()
    vector = os.path.join(tdir, "t4135")
    cases = []
    for m in re.finditer(r"^try_filename (.*)$", script, re.M):
        args = shlex.split(m.group(1))
        desc, post = args[0], args[1]
        exp = (args[3:6] + ["success"] * 3)[:3] if len(args) > 3 else ["success"] * 3
        for style, prefix, before, e in (
            ("git-style file creation patch", "git", {}, exp[0]),
            ("traditional patch", "diff", {post: "preimage\n"}, exp[1]),
            ("traditional file creation patch", "add", {}, exp[2]),
        ):
            patch = os.path.join(vector, f"{prefix}-{desc}.diff")
            known = "" if e == "success" else " (test_expect_failure: git is known to fail)"
            cases.append(
                _case(
                    f"git/t4135/{prefix}-{desc}",
                    f"t/t4135/{prefix}-{desc}.diff",
                    dict(before),
                    [_read(patch)],
                    [],
                    features,
                    note=f"{desc}, {style}: test expects {post!r} to read postimage{known}",
                    expect={post: b"postimage\n"} if e == "success" else None,
                )
            )
    # the three stand-alone tests on traditional patches
    for m in re.finditer(r"test_expect_success '([^']*)' '(.*?)\n'", script, re.S):
        title, body = m.group(1), m.group(2)
        ap = re.search(r'git apply (?:-v )?"\$vector/([^"]+)"', body)
        cmp_ = re.search(r"test_cmp expected (.+)$", body, re.M)
        if not ap or not cmp_:
            continue
        post = shlex.split(cmp_.group(1))[0]
        cases.append(
            _case(
                f"git/t4135/{ap.group(1)}",
                f"t/t4135/{ap.group(1)}",
                {},
                [_read(os.path.join(vector, ap.group(1)))],
                [],
                features,
                note=f"{title}: test expects {post!r} to read postimage",
                expect={post: b"postimage\n"},
            )
        )
    # the Subversion diff, written by a heredoc in the script and applied with -p2
    svn = re.search(r"cat >diff-from-svn <<\\EOF\n(.*?)\nEOF\n", script, re.S)
    if svn:
        body = re.search(
            r"test_expect_success '(apply handles a diff generated by Subversion)' '(.*?)\n'",
            script,
            re.S,
        )
        p = int(re.search(r"git apply -p(\d+)", body.group(2)).group(1)) if body else 2
        cases.append(
            _case(
                "git/t4135/diff-from-svn",
                f"t/{script_name} (heredoc diff-from-svn)",
                {"Makefile": ""},
                [(svn.group(1) + "\n").encode()],
                [f"-p{p}"],
                features,
                note=f"git apply -p{p}: test expects Makefile to be deleted",
                p=p,
                expect={"Makefile": None},
            )
        )
    return cases


def cases(checkout: str, features: Optional[dict] = None) -> List[Case]:
    features = features or {}
    tdir = os.path.join(checkout, "t")
    for s in SCRIPTS:
        if not os.path.isfile(os.path.join(tdir, s)):
            raise HarnessError(f"no t/{s} under {checkout}")
    return (
        t4101(tdir, features)
        + multi_patch(tdir, "t4109", features)
        + multi_patch(tdir, "t4110", features)
        + t4135(tdir, features)
    )
