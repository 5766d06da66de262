#!/usr/bin/env python3
"""Generates the benchmark inputs for bench/run.sh (standard library only, deterministic).

    gen.py edits OUT_DIR   -> OUT_DIR/repo/ (200 Python-like files, not yet committed),
                              OUT_DIR/edits.yaml (1,000 edits, 5 per file),
                              OUT_DIR/expected/ (the tree after the edits, applied here in Python)
    gen.py spread OUT_DIR  -> the same with 600 files and 2 edits each (1,200 edits): more files
                              than a descriptor table of 256 slots holds open at once
    gen.py single OUT_DIR  -> the same with 200 files and 1 edit each
    gen.py miss OUT_DIR    -> OUT_DIR/repo/big.py (10,000 lines), OUT_DIR/miss.yaml,
                              OUT_DIR/hit.yaml (same edit, exact text),
                              OUT_DIR/miss_expect.json ({"start_line": .., "end_line": ..})
"""

import json
import os
import random
import sys

FILES = 200
EDITS_PER_FILE = 5

VERBS = ["load", "parse", "build", "merge", "render", "fetch", "store", "check", "scan", "split",
         "join", "count", "index", "encode", "decode", "flush", "apply", "resolve", "collect", "emit"]
NOUNS = ["config", "record", "token", "buffer", "header", "entry", "window", "cursor", "packet",
         "segment", "report", "option", "schema", "message", "frame", "target", "symbol", "batch"]
VARS = ["value", "items", "result", "count", "offset", "limit", "name", "data", "key", "total",
        "state", "path", "size", "acc", "chunk", "line", "node", "ctx"]


def function(rng, name, indent=""):
    """One Python-like function of 8-16 lines; every line mentions `name`'s serial so it is unique."""
    a, b, c = rng.sample(VARS, 3)
    n = rng.randint(2, 97)
    body = [
        f"def {name}({a}, {b}=None):",
        f'    """{name.replace("_", " ").capitalize()} from {a} and {b}."""',
        f"    {c} = []",
        f"    if {b} is None:",
        f"        {b} = {n}",
        f"    for i, item in enumerate({a}):",
        f"        if i % {n} == 0:",
        f"            {c}.append(({name!r}, item, {b}))",
    ]
    for _ in range(rng.randint(0, 6)):
        v = rng.choice(VARS)
        body.append(f"        {v}_{rng.randint(100, 999)} = len({c}) * {rng.randint(2, 50)}")
    body += [
        f"    if not {c}:",
        f'        raise ValueError("{name}: empty {a}")',
        f"    return {c}",
        "",
        "",
    ]
    return [indent + line if line else line for line in body]


def gen_file(rng, fidx):
    """Returns (text, list of function line-spans) for one file of ~200-400 lines."""
    lines = [f'"""Module {fidx:03d}: generated for the patchgate benchmark."""', "",
             "import os", "import sys", "", ""]
    target = rng.randint(200, 400)
    k = 0
    spans = []
    while len(lines) < target:
        name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{fidx:03d}_{k:02d}"
        f = function(rng, name)
        spans.append((len(lines), len(lines) + len(f) - 2, name))  # exclude the two blank lines
        lines += f
        k += 1
    return "\n".join(lines) + "\n", lines, spans


def gen_edits(out, files=FILES, per_file=EDITS_PER_FILE):
    rng = random.Random(1000)
    repo = os.path.join(out, "repo")
    expected = os.path.join(out, "expected")
    edits = []
    for fidx in range(files):
        sub = f"pkg{fidx % 10}"
        rel = f"{sub}/mod_{fidx:03d}.py"
        text, lines, spans = gen_file(rng, fidx)
        for d in (repo, expected):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        with open(os.path.join(repo, rel), "w", newline="") as fh:
            fh.write(text)
        new_text = text
        # `per_file` edits in as many distinct functions, spread over the file, each 1-3
        # consecutive lines.
        chosen = sorted(rng.sample(range(len(spans)), per_file))
        for j in chosen:
            start, end, name = spans[j]
            while True:  # draw until the 1-3 lines are unique in the file, before and after earlier edits
                nlines = rng.randint(1, 3)
                first = rng.randint(start, max(start, end - nlines + 1))
                old = "\n".join(lines[first:first + nlines]) + "\n"
                if text.count(old) == 1 and new_text.count(old) == 1:
                    break
            # a plausible change: rename the function's serial and add a trailing comment.
            new = old.replace(name, name + "_v2")
            if new == old:
                new = old[:-1] + "  # checked\n"
            assert text.count(old) == 1, (rel, old)
            assert new_text.count(old) == 1, (rel, old)
            new_text = new_text.replace(old, new, 1)
            edits.append((rel, old, new))
        with open(os.path.join(expected, rel), "w", newline="") as fh:
            fh.write(new_text)
    # YAML with JSON-style double-quoted scalars (every string here is plain ASCII).
    with open(os.path.join(out, "edits.yaml"), "w") as fh:
        fh.write(f'message: "benchmark: {len(edits)} edits over {files} files"\nedits:\n')
        for rel, old, new in edits:
            fh.write(f"  - file_path: {json.dumps(rel)}\n")
            fh.write(f"    old_string: {json.dumps(old)}\n")
            fh.write(f"    new_string: {json.dumps(new)}\n")
    print(f"{len(edits)} edits over {files} files")


def gen_miss(out):
    rng = random.Random(2000)
    repo = os.path.join(out, "repo")
    os.makedirs(repo, exist_ok=True)
    lines = ['"""One big generated module."""', "", ""]
    k = 0
    while len(lines) < 10_000:
        name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{k:04d}"
        # methods of a class body: indented by 4
        lines += function(rng, name, indent="    ")
        k += 1
    lines = lines[:10_000]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(repo, "big.py"), "w", newline="") as fh:
        fh.write(text)
    # 20 lines from the middle, starting at a function's first line.
    mid = 5000
    while not lines[mid].lstrip().startswith("def "):
        mid += 1
    block = lines[mid:mid + 20]
    # indentation changed (4 spaces removed = the method pasted as a top-level function) ...
    copied = [ln[4:] if ln.startswith("    ") else ln for ln in block]
    # ... and one line altered (a line in the middle of the block).
    alter = 9
    copied[alter] = copied[alter].rstrip() + " + 1"
    old = "\n".join(copied) + "\n"
    assert old not in text
    with open(os.path.join(out, "miss.yaml"), "w") as fh:
        fh.write("edits:\n")
        fh.write('  - file_path: "big.py"\n')
        fh.write(f"    old_string: {json.dumps(old)}\n")
        fh.write(f"    new_string: {json.dumps(old.replace('def ', 'def new_', 1))}\n")
    # the same edit with the exact text (a hit), to separate start-up + read + search from diagnosis.
    exact = "\n".join(block) + "\n"
    assert text.count(exact) == 1
    with open(os.path.join(out, "hit.yaml"), "w") as fh:
        fh.write("edits:\n")
        fh.write('  - file_path: "big.py"\n')
        fh.write(f"    old_string: {json.dumps(exact)}\n")
        fh.write(f"    new_string: {json.dumps(exact.replace('def ', 'def new_', 1))}\n")
    with open(os.path.join(out, "miss_expect.json"), "w") as fh:
        json.dump({"start_line": mid + 1, "end_line": mid + 20}, fh)
    print(f"big.py: {len(lines)} lines; old_string = lines {mid + 1}-{mid + 20}, re-indented, line {mid + 1 + alter} altered")


if __name__ == "__main__":
    {
        "edits": gen_edits,
        "spread": lambda out: gen_edits(out, files=600, per_file=2),
        "single": lambda out: gen_edits(out, files=200, per_file=1),
        "miss": gen_miss,
    }[sys.argv[1]](sys.argv[2])
