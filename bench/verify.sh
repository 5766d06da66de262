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
# Environment knobs: RUNS (default 15 per warm command), ROUNDS (default 3), COLD_RUNS (default 5),
# MODULES (default 20), LINES (default 150), REPORT (default /tmp/bench-verify.md: the markdown
# section written), BENCH_OUT=DIR keeps the raw hyperfine JSON (default: discarded).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${RUNS:-15}
ROUNDS=${ROUNDS:-3}
PER_ROUND=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
COLD_RUNS=${COLD_RUNS:-5}
MODULES=${MODULES:-20}
LINES=${LINES:-150}
REPORT=${REPORT:-/tmp/bench-verify.md}

log() { printf '\n== %s\n' "$*"; }
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

bench_tools
bench_build

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
git_quiet() { git -c user.name=bench -c user.email=bench@example.invalid -c init.defaultBranch=main "$@"; }
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
MIRROR="$REPO/.git/patchgate/node_modules/mirror"
[ -d "$MIRROR" ] || { echo "error: no project mirror at $MIRROR (did --verify run?)" >&2; exit 1; }
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
open(report, "w").write("\n".join(lines))
print("\n".join(lines))
EOF
