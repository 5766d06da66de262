#!/usr/bin/env bash
# patchgate verify benchmark: one command.
#
#   bench/verify.sh
#
# On a generated Rust crate without dependencies (MODULES modules x ~LINES lines, each with unit
# tests), a one-line patch checked with
#   patchgate apply p.yaml --verify test --checks none --dry-run
# - cold: .git/patchgate removed before every run (mirror and cargo target directory built anew);
# - warm: the second and later runs (patchgate's persistent .git/patchgate/cargo-target);
# against `cargo test` run directly in the working tree, warm (after one build):
# - nothing changed since the last build (no compilation: test binaries run only);
# - the same one-line change made in the tree before each run (one crate recompiled, as patchgate's
#   warm run must).
# Target (the issue): the warm patchgate run within 1.5x of a warm `cargo test` in place.
#
# The warm commands run in ROUNDS interleaved rounds (patchgate, cargo test, cargo test after the
# edit, then again), so a change of background load hits all of them alike.
#
# Then the baseline (part "typecheck"): on a generated Python package that mypy (configured in
# pyproject.toml) already faults PY_MODULES x PY_ERRORS times, a docstring-only patch checked with
#   patchgate apply py.yaml --verify typecheck --checks none --dry-run
# passes (every error was already there); its cost with the baseline to compute (the first
# patch on a base: mypy on the patched state and on the original; `.git/patchgate/cache/verify`
# removed before each run) against the second patch on the same base (baseline cached: mypy
# once), and mypy in place after the same edit for scale. The mirror and mypy's cache in it stay warm throughout.
#
# Environment knobs: PARTS (default "test typecheck"), RUNS (default 15 per warm command), ROUNDS
# (default 3), COLD_RUNS (default 5), MODULES (default 20), LINES (default 150), PY_RUNS (default
# 10), PY_MODULES (default 40), PY_ERRORS (default 35), TOOLS_PATH (PATH entries with python3 that
# imports mypy; default: `scripts/install-checkers`' output when python3 on PATH cannot), REPORT
# (default /tmp/bench-verify.md: the markdown sections written), BENCH_OUT=DIR keeps the raw
# hyperfine JSON (default: discarded). The mirrors live under $WORK/cache (XDG_CACHE_HOME).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${RUNS:-15}
ROUNDS=${ROUNDS:-3}
PER_ROUND=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
COLD_RUNS=${COLD_RUNS:-5}
MODULES=${MODULES:-20}
LINES=${LINES:-150}
REPORT=${REPORT:-/tmp/bench-verify.md}
PARTS=${PARTS:-test typecheck}
PY_RUNS=${PY_RUNS:-10}
PY_PER_ROUND=$(( (PY_RUNS + ROUNDS - 1) / ROUNDS ))
PY_MODULES=${PY_MODULES:-40}
PY_ERRORS=${PY_ERRORS:-35}
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
git_quiet() { git -c user.name=bench -c user.email=bench@example.invalid -c init.defaultBranch=main "$@"; }

log() { printf '\n== %s\n' "$*"; }
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

bench_tools
bench_build
# patchgate's mirrors (outside the repository) in the scratch directory, found and removed with it.
export XDG_CACHE_HOME="$WORK/cache"
: >"$REPORT"

run_crate() {
# ---------------------------------------------------------------- the crate
log "generating a crate: $MODULES modules x ~$LINES lines"
REPO="$WORK/crate"
python3 - "$REPO" "$MODULES" "$LINES" <<'EOF'
import os, sys
root, modules, lines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(os.path.join(root, "src"))
with open(os.path.join(root, "Cargo.toml"), "w") as f:
    f.write('[package]\nname = "benchcrate"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n')
with open(os.path.join(root, ".gitignore"), "w") as f:
    f.write("/target\n")
with open(os.path.join(root, "src", "lib.rs"), "w") as f:
    for m in range(modules):
        f.write(f"pub mod m{m:02};\n")
    f.write("\npub fn checksum() -> i64 {\n    let mut s = 0i64;\n")
    for m in range(modules):
        f.write(f"    s = s.wrapping_add(m{m:02}::run(10));\n")
    f.write("    s\n}\n")
for m in range(modules):
    out = [f"//! Module {m}: arithmetic helpers and their tests.", "", "use std::collections::HashMap;", ""]
    k = 0
    # Functions until the module is about `lines` long (each block ~12 lines, tests ~8 each).
    while len(out) < lines * 0.55:
        out += [
            f"/// Step {k} of module {m}.",
            f"pub fn f{k}(x: i64) -> i64 {{",
            f"    let base = x.wrapping_mul({k + 3}).wrapping_add({m + 1});",
            f"    let mut acc = base;",
            f"    for i in 0..{(k % 5) + 2} {{",
            f"        acc = acc.wrapping_add(i * {k + 1});",
            "    }",
            f"    acc ^ {m * 7 + k}",
            "}",
            "",
        ]
        k += 1
    out += [
        "/// Every step, keyed by index.",
        "pub fn table(x: i64) -> HashMap<usize, i64> {",
        "    let mut t = HashMap::new();",
    ]
    for i in range(k):
        out.append(f"    t.insert({i}, f{i}(x));")
    out += ["    t", "}", "", "pub fn run(x: i64) -> i64 {", "    table(x).values().fold(0i64, |a, v| a.wrapping_add(*v))", "}", ""]
    out += ["#[cfg(test)]", "mod tests {", "    use super::*;", ""]
    for i in range(k):
        out += [
            "    #[test]",
            f"    fn f{i}_is_deterministic() {{",
            f"        assert_eq!(f{i}(5), f{i}(5));",
            f"        assert_ne!(f{i}(1), f{i}(1) ^ 1);",
            "    }",
            "",
        ]
    out += ["    #[test]", "    fn table_has_every_step() {", f"        assert_eq!(table(2).len(), {k});", "    }", "}"]
    with open(os.path.join(root, "src", f"m{m:02}.rs"), "w") as f:
        f.write("\n".join(out) + "\n")
EOF
(cd "$REPO" && git_quiet init -q && git_quiet add -A && git_quiet commit -q -m init)
SRC_LINES=$(cat "$REPO"/src/*.rs | wc -l)
TESTS=$(grep -c '#\[test\]' "$REPO"/src/*.rs | awk -F: '{s += $2} END {print s}')
echo "$SRC_LINES lines of Rust in $((MODULES + 1)) files, $TESTS unit tests"

# The one-line patch: a constant in the middle module (the tests still pass).
MID=$(printf 'm%02d' $((MODULES / 2)))
OLD_LINE=$(grep -m1 'let base = x.wrapping_mul(3)' "$REPO/src/$MID.rs")
NEW_LINE=${OLD_LINE/wrapping_mul(3)/wrapping_mul(4)}
python3 - "$WORK/p.yaml" "src/$MID.rs" "$OLD_LINE" "$NEW_LINE" <<'EOF'
import json, sys
path, file, old, new = sys.argv[1:]
# JSON is valid YAML: no quoting to get wrong.
json.dump({"message": "one-line change", "edits": [{"file_path": file, "old_string": old, "new_string": new}]},
          open(path, "w"), indent=2)
EOF
# The same change in the working tree, toggled before each in-place run (a real edit each time).
cp "$REPO/src/$MID.rs" "$WORK/orig.rs"
sed "s/wrapping_mul(3)/wrapping_mul(4)/" "$WORK/orig.rs" >"$WORK/edited.rs"
cmp -s "$WORK/orig.rs" "$WORK/edited.rs" && { echo "error: the edit changed nothing" >&2; exit 1; }
TOGGLE="bash -c 'if cmp -s $REPO/src/$MID.rs $WORK/orig.rs; then cp $WORK/edited.rs $REPO/src/$MID.rs; else cp $WORK/orig.rs $REPO/src/$MID.rs; fi'"

PG_CMD="$PG apply $WORK/p.yaml --verify test --checks none --dry-run --format json"
cd "$REPO"

log "checking once: the patch passes, the tree is untouched"
rm -rf .git/patchgate
$PG_CMD >"$WORK/once.json"
python3 - "$WORK/once.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
v = r["verify"]
assert r["status"] == "dry_run" and len(v) == 1 and v[0]["status"] == "pass", json.dumps(r, indent=1)
print(f'status {r["status"]}; verify: {v[0]["command"]} -> {v[0]["status"]}')
EOF
git diff --quiet && echo "working tree unchanged"

# ---------------------------------------------------------------- timing
log "timing: patchgate cold ($COLD_RUNS runs; .git/patchgate removed before each)"
hyperfine -N --style basic --runs "$COLD_RUNS" --prepare "rm -rf $REPO/.git/patchgate" \
    --export-json "$OUT/cold.json" -n "patchgate cold" "$PG_CMD"

log "timing: warm, $ROUNDS rounds of $PER_ROUND runs per command (each after 1 warm-up run)"
cargo test --quiet >/dev/null 2>&1  # the one build in place
for r in $(seq "$ROUNDS"); do
    hyperfine -N --style basic --warmup 1 --runs "$PER_ROUND" \
        --export-json "$OUT/warm.round$r.json" -n "patchgate warm" "$PG_CMD"
    hyperfine -N --style basic --warmup 1 --runs "$PER_ROUND" \
        --export-json "$OUT/inplace.round$r.json" -n "cargo test (no change)" "cargo test --quiet"
    hyperfine -N --style basic --warmup 1 --runs "$PER_ROUND" --prepare "$TOGGLE" \
        --export-json "$OUT/inplace-edit.round$r.json" -n "cargo test (after the edit)" "cargo test --quiet"
    cp "$WORK/orig.rs" "src/$MID.rs"
    echo "round $r/$ROUNDS done"
done
git diff --quiet

# ---------------------------------------------------------------- where the time goes
log "where the time goes (warm)"
# Per warm run: its wall time, and the verify step's own time from its report (`duration_ms`:
# cargo test in the mirror); the difference is patchgate's (cargo metadata, mirror sync, the rest).
python3 - "$OUT/split.json" $PG_CMD <<'EOF'
import json, subprocess, sys, time
split = []
for _ in range(10):
    t = time.monotonic()
    out = subprocess.run(sys.argv[2:], capture_output=True, check=True).stdout
    wall = time.monotonic() - t
    split.append([wall, json.loads(out)["verify"][0]["duration_ms"] / 1000])
json.dump(split, open(sys.argv[1], "w"))
EOF
hyperfine -N --style basic --warmup 1 --runs "$RUNS" --export-json "$OUT/metadata.json" \
    -n "cargo metadata" "cargo metadata --no-deps --format-version 1 --offline"
# The same cargo test as patchgate's, in the mirror, with nothing changed since the last run.
MIRROR=$(find "$XDG_CACHE_HOME/patchgate" -mindepth 2 -maxdepth 2 -type d -name mirror | head -n1)
[ -d "$MIRROR" ] || { echo "error: no project mirror under $XDG_CACHE_HOME/patchgate (did --verify run?)" >&2; exit 1; }
hyperfine -N --style basic --warmup 1 --runs "$RUNS" --export-json "$OUT/mirror.json" \
    -n "cargo test in the mirror (no change)" \
    "env -C $MIRROR CARGO_TARGET_DIR=$REPO/.git/patchgate/cargo-target CARGO_TERM_COLOR=never cargo test --no-fail-fast --message-format=json --offline -p benchcrate"

# ---------------------------------------------------------------- report
log "report -> $REPORT"
python3 - "$OUT" "$REPORT" <<EOF
import json, statistics, sys
out, report = sys.argv[1], sys.argv[2]
import glob
def med(name):
    files = sorted(glob.glob(f"{out}/{name}.json") + glob.glob(f"{out}/{name}.round*.json"))
    times = [t for f in files for t in json.load(open(f))["results"][0]["times"]]
    return statistics.median(times), min(times), max(times), len(times)
cold, warm, inplace, edit = med("cold"), med("warm"), med("inplace"), med("inplace-edit")
meta, mirror = med("metadata"), med("mirror")
split = json.load(open(f"{out}/split.json"))
split_wall = statistics.median(w for w, _ in split)
step = statistics.median(s for _, s in split)
rest = statistics.median(w - s for w, s in split)
target = 1.5
r_noop, r_edit = warm[0] / inplace[0], warm[0] / edit[0]
def row(label, m, base=None):
    ratio = f"{m[0] / base:.2f}x" if base else ""
    return f"| {label} | {m[0]:.3f} | {m[1]:.3f} – {m[2]:.3f} | {m[3]} | {ratio} | {m[0] / edit[0]:.2f}x |"
lines = []
lines.append("## Verify: \`apply --verify test\` on a Rust crate vs \`cargo test\` in place")
lines.append("")
lines.append("\`bench/verify.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'))")
lines.append("")
lines.append("Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), "
             "$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) memory, $(uname -sr); "
             "load average $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end; "
             "$(cargo --version), hyperfine $(hyperfine --version | cut -d' ' -f2); "
             "patchgate release build at $PG_DESC.")
lines.append("")
lines.append("Crate: $MODULES modules, $SRC_LINES lines of Rust, $TESTS unit tests, no dependencies. "
             "Patch: one line of \`src/$MID.rs\` (a constant; the tests still pass).")
lines.append("")
lines.append("Command: \`patchgate apply p.yaml --verify test --checks none --dry-run --format json\` "
             "(runs \`cargo test --no-fail-fast --message-format=json --offline -p benchcrate\` in the mirror, "
             "\`CARGO_TARGET_DIR=.git/patchgate/cargo-target\`). Cold: \`.git/patchgate\` removed before each run. "
             "In place: \`cargo test --quiet\` in the working tree after one build, either with nothing changed "
             "or with the same one-line change toggled in before each run.")
lines.append("")
lines.append("| command | median (s) | min – max (s) | runs | vs cargo test, no change | vs cargo test after the edit |")
lines.append("|---|---|---|---|---|---|")
lines.append(row("patchgate, cold", cold, inplace[0]))
lines.append(row("patchgate, warm (2nd+ run)", warm, inplace[0]))
lines.append(row("\`cargo test\` in place, no change", inplace, inplace[0]))
lines.append(row("\`cargo test\` in place, after the same edit", edit, inplace[0]))
lines.append("")
met_noop = "met" if r_noop <= target else "NOT met"
met_edit = "met" if r_edit <= target else "NOT met"
lines.append(f"**Target (warm run within {target}x of a warm \`cargo test\` in place):** "
             f"{met_edit} against \`cargo test\` after the same one-line edit ({r_edit:.2f}x, the like-for-like "
             f"comparison: both recompile the crate and run its tests); {met_noop} against a \`cargo test\` "
             f"with nothing to recompile ({r_noop:.2f}x).")
lines.append("")
lines.append(f"Where the warm run's time goes (medians of {len(split)} further warm runs, each split by its own report):")
lines.append("")
lines.append(f"- the verify step (patchgate's own \`duration_ms\`: \`cargo test\` in the mirror, which recompiles "
             f"the crate the patch touched and runs its tests): {step:.3f} s of {split_wall:.3f} s;")
lines.append(f"- the rest, {rest:.3f} s: \`cargo metadata\` to find the workspace and package "
             f"({meta[0]:.3f} s alone), the mirror sync and the overlay of the patched file, planning, process start and the report;")
lines.append(f"- for scale: the same \`cargo test\` in the mirror with nothing changed takes {mirror[0]:.3f} s, "
             f"so recompiling the touched crate is about {max(step - mirror[0], 0):.3f} s of the step;")
lines.append(f"- cold: {cold[0]:.3f} s, a first build of the crate and its test harness into the empty "
             f"\`.git/patchgate/cargo-target\` (once per repository; later runs reuse it).")
lines.append("")
open(report, "a").write("\n".join(lines) + "\n\n")
print("\n".join(lines))
EOF
}

# ---------------------------------------------------------------- the baseline: --verify typecheck
run_typecheck() {
if [ -z "${TOOLS_PATH:-}" ] && ! python3 -c 'import mypy' 2>/dev/null; then
    log "checkers (scripts/install-checkers): python3 on PATH cannot import mypy"
    TOOLS_PATH=$("$ROOT/scripts/install-checkers")
fi
[ -n "${TOOLS_PATH:-}" ] && export PATH="$TOOLS_PATH:$PATH"
python3 -c 'import mypy' || { echo "error: python3 cannot import mypy (set TOOLS_PATH)" >&2; exit 1; }

log "generating a Python package: $PY_MODULES modules, $PY_ERRORS type errors each"
PY="$WORK/py"
python3 - "$PY" "$PY_MODULES" "$PY_ERRORS" <<'EOF'
import os, sys
root, modules, errors = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(os.path.join(root, "pkg"))
with open(os.path.join(root, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "pkg"\nversion = "0.1.0"\n\n[tool.mypy]\nfiles = ["pkg"]\n')
with open(os.path.join(root, ".gitignore"), "w") as f:
    f.write("__pycache__/\n.mypy_cache/\n")
open(os.path.join(root, "pkg", "__init__.py"), "w").close()
for m in range(modules):
    out = [f'"""Module {m}."""', "from __future__ import annotations", ""]
    if m > 0:
        out += [f"from pkg.m{m - 1:02} import good0 as previous", ""]
    else:
        out += ["", "def previous(x: int) -> int:", "    return x", ""]
    for k in range(errors):
        out += [
            "",
            f"def good{k}(x: int) -> int:",
            f"    return previous(x) + {k}",
            "",
            "",
            f"def bad{k}(x: int) -> str:",
            f"    return x * {k + 1}",
        ]
    with open(os.path.join(root, "pkg", f"m{m:02}.py"), "w") as f:
        f.write("\n".join(out) + "\n")
EOF
(cd "$PY" && git_quiet init -q && git_quiet add -A && git_quiet commit -q -m init)
PY_LINES=$(cat "$PY"/pkg/*.py | wc -l)
PY_MID=$(printf 'm%02d' $((PY_MODULES / 2)))
# Two patches on the same base, each a docstring grown to five lines (every error of the module
# moves, and is still the same error); the timed runs alternate between them, so each run is a
# new patch on the same base (mypy in the mirror re-checks the module and the ones importing it).
for v in a b; do
python3 - "$WORK/py-$v.yaml" "pkg/$PY_MID.py" "\"\"\"Module $((PY_MODULES / 2)).\"\"\"" "$v" <<'EOF'
import json, sys
path, file, old, variant = sys.argv[1:]
new = old[:-3] + f"\n\nHelpers for the benchmark ({variant}), with errors that were\nalready there.\n\"\"\""
json.dump({"message": "docstring", "edits": [{"file_path": file, "old_string": old, "new_string": new}]},
          open(path, "w"), indent=2)
EOF
done
cp "$WORK/py-a.yaml" "$WORK/py.yaml"
PY_TOGGLE="if cmp -s $WORK/py.yaml $WORK/py-a.yaml; then cp $WORK/py-b.yaml $WORK/py.yaml; else cp $WORK/py-a.yaml $WORK/py.yaml; fi"
# The same edit in place, toggled before each in-place run.
cp "$PY/pkg/$PY_MID.py" "$WORK/py-orig.py"
python3 - "$WORK/py-a.yaml" "$WORK/py-orig.py" "$WORK/py-edited.py" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))["edits"][0]
text = open(sys.argv[2]).read()
assert text.count(e["old_string"]) == 1
open(sys.argv[3], "w").write(text.replace(e["old_string"], e["new_string"]))
EOF
PY_EDIT="if cmp -s $PY/pkg/$PY_MID.py $WORK/py-orig.py; then cp $WORK/py-edited.py $PY/pkg/$PY_MID.py; else cp $WORK/py-orig.py $PY/pkg/$PY_MID.py; fi"
PY_CMD="$PG apply $WORK/py.yaml --verify typecheck --checks none --dry-run --format json"
cd "$PY"

log "checking once: the patch passes, every mypy error was already there"
$PY_CMD >"$WORK/py-first.json"
$PY_CMD >"$WORK/py-second.json"
python3 - "$WORK/py-first.json" "$WORK/py-second.json" "$((PY_MODULES * PY_ERRORS))" <<'EOF'
import json, sys
want = int(sys.argv[3])
for path, source in ((sys.argv[1], "ran"), (sys.argv[2], "cached")):
    r = json.load(open(path))
    v = r["verify"]
    assert r["status"] == "dry_run" and len(v) == 1, json.dumps(r, indent=1)
    t = v[0]
    assert t["status"] == "pass" and t["baseline"] == source, json.dumps(t, indent=1)[:2000]
    assert len(t["failures"]) == want and not any(f["new"] for f in t["failures"]), (len(t["failures"]), want)
    print(f'{t["command"]} -> {t["status"]}, {len(t["failures"])} old failures; {t["note"]}')
EOF
git diff --quiet && echo "working tree unchanged"

log "timing: $ROUNDS rounds of $PY_PER_ROUND runs per command"
python3 -m mypy -O json >/dev/null 2>&1 || true  # mypy's cache in place, once
for r in $(seq "$ROUNDS"); do
    hyperfine -N --style basic --runs "$PY_PER_ROUND" \
        --prepare "bash -c 'rm -rf $PY/.git/patchgate/cache/verify; $PY_TOGGLE'" \
        --export-json "$OUT/py-first.round$r.json" -n "first patch on the base (baseline run)" "$PY_CMD"
    hyperfine -N --style basic --warmup 1 --runs "$PY_PER_ROUND" --prepare "bash -c '$PY_TOGGLE'" \
        --export-json "$OUT/py-second.round$r.json" -n "second patch on the base (baseline cached)" "$PY_CMD"
    hyperfine -N -i --style basic --warmup 1 --runs "$PY_PER_ROUND" --prepare "bash -c '$PY_EDIT'" \
        --export-json "$OUT/py-mypy.round$r.json" -n "mypy in place, after the same edit" "python3 -m mypy -O json"
    cp "$WORK/py-orig.py" "pkg/$PY_MID.py"
    echo "round $r/$ROUNDS done"
done
git diff --quiet

log "report -> $REPORT"
python3 - "$OUT" "$REPORT" <<EOF
import glob, json, statistics, sys
out, report = sys.argv[1], sys.argv[2]
def med(name):
    files = sorted(glob.glob(f"{out}/{name}.round*.json"))
    times = [t for f in files for t in json.load(open(f))["results"][0]["times"]]
    return statistics.median(times), min(times), max(times), len(times)
first, second, mypy = med("py-first"), med("py-second"), med("py-mypy")
def row(label, m):
    return f"| {label} | {m[0]:.3f} | {m[1]:.3f} – {m[2]:.3f} | {m[3]} | {m[0] / mypy[0]:.2f}x |"
lines = []
lines.append("## Verify against a baseline: the second \`--verify typecheck\` on the same base")
lines.append("")
lines.append("\`bench/verify.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'))")
lines.append("")
lines.append("Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), "
             "$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) memory, $(uname -sr); "
             "load average $LOAD_START at the start of the script, $(cut -d' ' -f1-3 /proc/loadavg) at the end; "
             "$(python3 -m mypy --version), hyperfine $(hyperfine --version | cut -d' ' -f2); "
             "patchgate release build at $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' + uncommitted src changes').")
lines.append("")
lines.append("Package: $PY_MODULES modules, $PY_LINES lines of Python, mypy configured in \`pyproject.toml\` "
             "(\`[tool.mypy] files = [\"pkg\"]\`), $((PY_MODULES * PY_ERRORS)) mypy errors before any patch "
             "(each module imports the one before it). Patch: the docstring of \`pkg/$PY_MID.py\` grown from one "
             "line to five (its errors move; none is new).")
lines.append("")
lines.append("Command: \`patchgate apply py.yaml --verify typecheck --checks none --dry-run --format json\` "
             "(\`python -m mypy -O json\` in the mirror). The step fails on the patched state, so it needs "
             "its baseline: on the first patch on a base, mypy runs again on the original state "
             "(\`.git/patchgate/cache/verify\` removed before each run); on the second, the baseline comes from "
             "the cache. Both pass, every error reported as already there. The runs alternate between two such "
             "patches (different docstrings), so each is a new patch on the same base. The mirror and mypy's "
             "cache in it are warm in both (not an agent's first call). In place: mypy in the working tree with "
             "the same docstring edit toggled in before each run.")
lines.append("")
lines.append("| command | median (s) | min – max (s) | runs | vs mypy in place |")
lines.append("|---|---|---|---|---|")
lines.append(row("first patch on the base (baseline run)", first))
lines.append(row("second patch on the base (baseline cached)", second))
lines.append(row("\`python -m mypy -O json\` in place, after the same edit (warm cache)", mypy))
lines.append("")
lines.append(f"The cached baseline saves {first[0] - second[0]:.3f} s per patch ({second[0] / first[0]:.2f}x of the first).")
lines.append("")
open(report, "a").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
}

part test && run_crate
part typecheck && run_typecheck
echo "report: $REPORT"
