#!/usr/bin/env python3
"""A bot-style batch for a real project: two edits in each of its source files.

    real_batch.py REPO EXTS OUT.json      e.g. real_batch.py ~/src/zod py,js,ts /tmp/zod.json

For every tracked file of REPO whose name ends with one of EXTS (comma-separated suffixes, so
`js` takes `.mjs` and `.cjs` too), UTF-8, without CR, and with at least four lines of more than 12 characters that occur exactly once in it: two
edits appending a comment (`#` for .py, `//` otherwise) to two of those lines (a quarter and three
quarters of the way through). Every `old_string` is unique in its file, so every edit applies and
the batch takes patchgate's one-pass path. Prints how many files and edits it wrote. Standard
library and git only; deterministic for a given checkout. BENCHMARKS.md (u) used it on requests,
waitress, express and zod.
"""
import json
import os
import subprocess
import sys


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    root, exts, out = sys.argv[1], tuple(sys.argv[2].split(",")), sys.argv[3]
    files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.split()
    edits, nfiles = [], 0
    for f in files:
        if not f.endswith(exts):
            continue
        try:
            text = open(os.path.join(root, f), encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        if "\r" in text:
            continue
        once = [l for l in text.split("\n")
                if len(l.strip()) > 12 and text.count(l) == 1 and not l.rstrip().endswith("\\")]
        if len(once) < 4:
            continue
        picks = [once[len(once) // 4], once[3 * len(once) // 4]]
        if picks[0] == picks[1]:
            continue
        mark = "#" if f.endswith(".py") else "//"
        for line in picks:
            edits.append({"file_path": f, "old_string": line + "\n",
                          "new_string": f"{line}  {mark} batch\n"})
        nfiles += 1
    with open(out, "w") as fh:
        json.dump({"edits": edits}, fh, indent=1)
    print(nfiles, "files", len(edits), "edits")


if __name__ == "__main__":
    main()
