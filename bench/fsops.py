#!/usr/bin/env python3
"""Counts the file-system operations of one traced run, by kind and by where they land.

    fsops.py REPO_DIR NAME=TRACE [NAME=TRACE ...]

TRACE is the output prefix of `strace -ff -e trace=openat,mkdir,rename,unlink,fsync,fdatasync -o TRACE ...`
run inside REPO_DIR (-ff: one file TRACE.<tid> per thread, so no call is split across lines). Prints one column per trace: files created (openat O_CREAT), directories created,
renames, unlinks, fsyncs (fsync + fdatasync), plain opens; created files split by location.
"""

import glob
import re
import sys
from collections import Counter

LINE = re.compile(r'^(?:\d+ +)?(\w+)\((.*)\) += (-?\d+)')
PATH = re.compile(r'"([^"]*)"')


def where(path, repo):
    if path.startswith(repo + "/"):
        path = path[len(repo) + 1:]
    elif path.startswith("/"):
        return "outside the repository"
    if path.startswith(".git/objects"):
        return ".git/objects"
    if path.startswith(".git/patchgate/worktree"):
        return ".git/patchgate/worktree"
    if path.startswith(".git/"):
        return ".git (other)"
    return "working tree"


def count(trace, repo):
    c = Counter()
    lines = [ln for f in sorted(glob.glob(trace + ".*")) for ln in open(f)]
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        call, args, ret = m.group(1), m.group(2), int(m.group(3))
        p = PATH.search(args)
        loc = where(p.group(1), repo) if p else None
        if call == "openat":
            if "O_CREAT" in args:
                if ret >= 0:
                    c["files created"] += 1
                    c[f"  created in {loc}"] += 1
            else:
                c["opens (read / no create)"] += 1
        elif call == "mkdir":
            if ret == 0:
                c["directories created"] += 1
        elif call == "rename":
            c["renames"] += 1
        elif call == "unlink":
            if ret == 0:
                c["unlinks (successful)"] += 1
        elif call in ("fsync", "fdatasync"):
            c["fsync / fdatasync"] += 1
    return c


def main():
    repo = sys.argv[1].rstrip("/")
    cols = [(a.rsplit("=", 1)[0], count(a.rsplit("=", 1)[1], repo)) for a in sys.argv[2:]]
    keys = ["files created", "  created in working tree", "  created in .git/objects",
            "  created in .git/patchgate/worktree", "  created in .git (other)",
            "  created in outside the repository", "directories created", "renames",
            "unlinks (successful)", "fsync / fdatasync", "opens (read / no create)"]
    keys = [k for k in keys if any(c[k] for _, c in cols) or not k.startswith("  ")]
    w = max(len(k) for k in keys)
    cw = [max(len(n), 6) for n, _ in cols]
    print(f"{'per run':<{w}}  " + "  ".join(f"{n:>{x}}" for (n, _), x in zip(cols, cw)))
    print("-" * (w + 2 + sum(x + 2 for x in cw)))
    for k in keys:
        print(f"{k:<{w}}  " + "  ".join(f"{c[k]:>{x}}" for (_, c), x in zip(cols, cw)))


if __name__ == "__main__":
    main()
