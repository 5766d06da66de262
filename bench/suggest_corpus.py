#!/usr/bin/env python3
"""Suggestion quality on misses with a dropped, duplicated or added line, measured on real code.

  suggest_corpus.py [--cases N] [--seed S] [--time-cases N] [--runs N] PROJECT...

Each PROJECT is a git checkout (only read). From its tracked source files (.py .js .mjs .cjs .ts
.tsx .go .rs) the script draws blocks of 3-20 lines and makes one agent mistake per block:

  drop  one interior line of the block is left out of old_string;
  dup   one line of the block appears twice in old_string;
  add   a line from elsewhere in the same file is inserted into old_string.

A perturbed old_string that still occurs verbatim in the file is not a miss and is skipped. The
sampled files are copied into a scratch git repository (under $TMPDIR, removed afterwards; nothing
is written to the projects), all of a project's cases go into one patch, and `patchgate apply
--dry-run --checks none --format json` runs on it once (every edit is tried, and a miss changes
nothing, so the cases do not disturb each other). Per case: does the top suggestion cover exactly
the block's lines, is the block among the suggestions at all, is there no suggestion at all (every
case has its old lines in order in the file, so none should end that way), and the kind of the top
suggestion. A top suggestion elsewhere whose text is byte for byte the block's text is counted
separately as "same text" (the needle cannot tell those places apart), and "either" is the
share that is one or the other.

Timing: the files of the projects are concatenated into one 10,000-line file, and --time-cases
misses of each kind in it are run one patch at a time, --runs times each. Reported: the median
wall time of the whole `patchgate apply` process, and the median time of the planning step that
reads the file and diagnoses the miss (from PATCHGATE_TIMINGS=1: "edits matched" minus "edits
digested").

PATCHGATE=/path/to/patchgate selects the binary (default: target/release/patchgate of this
checkout, which must be built). Python 3 standard library only.
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EXTS = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs")
KINDS = ("drop", "dup", "add")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "PATCHGATE_CORPUS_CHANGE"


def git(cwd, *args, capture=True):
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=capture, text=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    ).stdout


def source_files(project):
    out = []
    for rel in git(project, "ls-files").splitlines():
        if not rel.endswith(EXTS) or re.search(r"(^|/)(vendor|node_modules|dist)/|\.min\.", rel):
            continue
        path = os.path.join(project, rel)
        try:
            if os.path.islink(path) or os.path.getsize(path) > 512 * 1024:
                continue
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.replace("\r\n", "\n").split("\n")
        if len(lines) >= 30:
            out.append((rel, text, lines))
    return out


def perturb(rng, kind, lines, start, length):
    """old_string lines for one mistake in lines[start:start+length], or None."""
    block = lines[start:start + length]
    if kind == "drop":
        j = rng.randrange(1, length - 1)
        return block[:j] + block[j + 1:]
    if kind == "dup":
        j = rng.randrange(length)
        return block[:j + 1] + block[j:]
    pool = [l for l in lines if l.strip() and l not in block]
    if not pool:
        return None
    j = rng.randrange(length + 1)
    return block[:j] + [rng.choice(pool)] + block[j:]


def make_cases(rng, files, n):
    """n cases (spread over the three kinds) over files: dicts with the edit and the truth."""
    weights = [len(f[2]) for f in files]
    cases, seen, tries = [], set(), 0
    while len(cases) < n and tries < n * 50:
        tries += 1
        kind = KINDS[len(cases) % len(KINDS)]
        rel, text, lines = rng.choices(files, weights)[0]
        length = rng.randint(3, 20)
        body_lines = len(lines) - (1 if lines[-1] == "" else 0)
        if body_lines < length:
            continue
        start = rng.randrange(body_lines - length + 1)
        block = lines[start:start + length]
        if sum(1 for l in block if l.strip()) < 2:
            continue
        needle = perturb(rng, kind, lines, start, length)
        if needle is None:
            continue
        old = "\n".join(needle) + "\n"
        folded = text.replace("\r\n", "\n")
        if old in folded or (rel, old) in seen:
            continue
        seen.add((rel, old))
        # The block exactly as the file holds it (a CRLF file keeps its '\r's), without the line
        # break after its last line, which is how suggestions report text.
        raw = "\n".join(text.split("\n")[start:start + length])
        cases.append({
            "kind": kind, "file": rel, "start": start + 1, "end": start + length,
            "text": raw[:-1] if raw.endswith("\r") else raw, "old": old,
        })
    return cases


def repo_with(files, dest):
    for rel, text in files:
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "-c", "user.name=bench", "-c", "user.email=bench@invalid", "commit", "-qm", "corpus")


def apply(pg, repo, cases, timings=False):
    patch = [{"file_path": c["file"], "old_string": c["old"], "new_string": c["old"] + MARK + "\n"}
             for c in cases]
    patch_path = repo.rstrip("/") + ".patch.json"
    with open(patch_path, "w", encoding="utf-8") as f:
        json.dump(patch, f)
    env = dict(os.environ)
    if timings:
        env["PATCHGATE_TIMINGS"] = "1"
    t0 = time.perf_counter()
    run = subprocess.run([pg, "apply", patch_path, "--dry-run", "--checks", "none", "--format", "json"],
                         cwd=repo, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    os.remove(patch_path)
    if run.returncode not in (0, 2):
        sys.exit(f"patchgate exited {run.returncode}:\n{run.stderr}")
    return json.loads(run.stdout), run.stderr, wall


def judge(case, edit):
    sugg = edit.get("suggestions") or []
    want = (case["start"], case["end"])
    at = [(s["start_line"], s["end_line"]) for s in sugg]
    top = sugg[0] if sugg else None
    return {
        "kind": case["kind"],
        "status": edit["status"],
        "top_right": bool(top) and at[0] == want,
        "same_text": bool(top) and at[0] != want and top["text"] == case["text"],
        "listed": want in at,
        "none": not sugg,
        "top_kind": top["kind"] if top else None,
    }


def summarize(label, results):
    n = len(results)
    if n == 0:
        return
    pct = lambda k: 100.0 * sum(1 for r in results if r[k]) / n
    kinds = {}
    for r in results:
        kinds[r["top_kind"]] = kinds.get(r["top_kind"], 0) + 1
    kinds_s = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))
    either = 100.0 * sum(1 for r in results if r["top_right"] or r["same_text"]) / n
    print(f"| {label} | {n} | {pct('top_right'):.1f} % | {pct('same_text'):.1f} % | {either:.1f} % | "
          f"{pct('listed'):.1f} % | {sum(1 for r in results if r['none'])} | {kinds_s} |")


def timing(pg, projects, rng, per_kind, runs, scratch):
    parts, total = [], 0
    for project in projects:
        for rel, text, lines in source_files(project):
            body = lines[:-1] if lines[-1] == "" else lines
            take = body[: 10_000 - total]
            parts.extend(take)
            total += len(take)
            if total >= 10_000:
                break
        if total >= 10_000:
            break
    if total < 10_000:
        print("timing skipped: fewer than 10,000 source lines")
        return
    big = "\n".join(parts) + "\n"
    repo = os.path.join(scratch, "big")
    os.makedirs(repo)
    repo_with([("big.txt", big)], repo)
    files = [("big.txt", big, big.split("\n"))]
    cases = make_cases(rng, files, per_kind * len(KINDS))
    walls, plans, results = [], [], []
    for case in cases:
        for i in range(runs):
            report, stderr, wall = apply(pg, repo, [case], timings=True)
            marks = dict((m.group(2), float(m.group(1))) for m in
                         re.finditer(r"timing:\s+([\d.]+) ms\s+(.+)", stderr))
            walls.append(wall * 1000)
            if "plan: edits matched" in marks and "plan: edits digested" in marks:
                plans.append(marks["plan: edits matched"] - marks["plan: edits digested"])
            if i == 0:
                results.append(judge(case, report["edits"][0]))
    print(f"\n10,000-line file ({len(big.encode())} bytes), {len(cases)} misses x {runs} runs:")
    print(f"- whole `patchgate apply` run: median {statistics.median(walls):.1f} ms, "
          f"max {max(walls):.1f} ms")
    if plans:
        print(f"- planning (read + diagnose the miss): median {statistics.median(plans):.2f} ms, "
              f"max {max(plans):.2f} ms")
    print("\n| set | cases | top right | same text elsewhere | either | in top 3 | no suggestion | top kinds |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    summarize("10,000-line file", results)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("projects", nargs="+")
    ap.add_argument("--cases", type=int, default=600, help="cases per project (default 600)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--time-cases", type=int, default=20, help="timed misses per kind (default 20)")
    ap.add_argument("--runs", type=int, default=5, help="runs per timed miss (default 5)")
    ap.add_argument("--failures", type=int, default=0, help="print up to N wrong top suggestions")
    args = ap.parse_args()
    pg = os.path.abspath(os.environ.get("PATCHGATE") or os.path.join(ROOT, "target", "release", "patchgate"))
    if not os.access(pg, os.X_OK):
        sys.exit(f"{pg} not found: run `cargo build --release` or set PATCHGATE")
    rng = random.Random(args.seed)
    scratch = tempfile.mkdtemp(prefix="pg-suggest-")
    all_results, failures = [], []
    try:
        print("| project | cases | top right | same text elsewhere | either | in top 3 | no suggestion | top kinds |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for project in args.projects:
            name = os.path.basename(os.path.normpath(project))
            files = source_files(project)
            if not files:
                continue
            cases = make_cases(rng, files, args.cases)
            used = sorted({c["file"] for c in cases})
            repo = os.path.join(scratch, name)
            os.makedirs(repo)
            by_rel = {rel: text for rel, text, _ in files}
            repo_with([(rel, by_rel[rel]) for rel in used], repo)
            report, _, _ = apply(pg, repo, cases)
            results = [judge(c, e) for c, e in zip(cases, report["edits"])]
            for c, r, e in zip(cases, results, report["edits"]):
                r["project"] = name
                if not r["top_right"] and not r["same_text"]:
                    failures.append((name, c, e))
            summarize(name, results)
            all_results.extend(results)
        for kind in KINDS:
            summarize(f"all: {kind}", [r for r in all_results if r["kind"] == kind])
        summarize("**all**", all_results)
        for name, c, e in failures[: args.failures]:
            top = (e.get("suggestions") or [None])[0]
            print(f"\n--- {name} {c['file']} {c['kind']} want {c['start']}-{c['end']}; top "
                  f"{top and (top['start_line'], top['end_line'], top['kind'], top.get('note'))}")
            print(c["old"])
        if args.time_cases > 0:
            timing(pg, args.projects, rng, args.time_cases, args.runs, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
