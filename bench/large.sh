#!/usr/bin/env bash
# Large inputs: `patchgate apply --checks none` vs `git apply` of the same change, side by side in
# one run, each case in its own fresh repository: replace_all with 80,000 matches, one line changed in each of 8,000 functions (a replace_all), one edit in a
# 50 MB file, one edit in a 200,000-line file, and 20,000 edits in one patch. Prints the median
# wall time and the peak RSS (GNU time's %M) of RUNS runs, and each figure as a ratio to git apply.
# Knobs: RUNS (default 5); CASES (a subset of the five names); SCALE (default 1) multiplies every
# case's size (lines, matches, edits), to show how the times grow; PATCHGATE=/path/to/patchgate measures that binary instead of a fresh
# `cargo build --release`; PATCHGATE_BASE=/path/to/patchgate also times an older build (before).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/bench/lib.sh"  # figure
RUNS=${RUNS:-5}
SCALE=${SCALE:-1}
[ -x /usr/bin/time ] || { echo "error: GNU time (/usr/bin/time) is needed" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -n "${PATCHGATE:-}" ]; then
    PG=$PATCHGATE
else
    (cd "$ROOT" && cargo build --release --quiet)
    PG="$ROOT/target/release/patchgate"
fi
PG_BASE=${PATCHGATE_BASE:-}

# gen CASE DIR: a repository with the case's file committed, its patch (DIR.yaml) and the same
# change as a unified diff (DIR.diff).
gen() {
    python3 - "$1" "$2" "$SCALE" <<'PY'
import json, sys
case, d, scale = sys.argv[1], sys.argv[2], int(sys.argv[3])
import os
os.makedirs(d)
if case == "replace_all":
    before = "let value = old_name(old_name);\n" * (40_000 * scale)
    after = before.replace("old_name", "new_name")
    edits = [("old_name", "new_name", True)]
elif case == "many_places":  # one line changed in each of 8,000 functions, by replace_all
    before = "".join(f"fn f{i}(x: u32) -> u32 {{\n    old_call_{i}(x)\n}}\n\n" for i in range(8_000 * scale))
    after = before.replace("old_call_", "new_call_")
    edits = [("old_call_", "new_call_", True)]
elif case == "50mb":
    lines = [f"line {i:09d} of a large generated file, padded to a fixed width ......\n" for i in range(700_000 * scale)]
    before = "".join(lines)
    mid = len(lines) // 2
    lines[mid] = "the changed line\n"
    after = "".join(lines)
    edits = [(before.splitlines(True)[mid], "the changed line\n", False)]
elif case == "200k_lines":
    lines = [f"value_{i} = compute({i})\n" for i in range(200_000 * scale)]
    before = "".join(lines)
    old = lines[150_000 * scale]
    lines[150_000 * scale] = f"value_{150_000 * scale} = compute(-1)\n"
    after = "".join(lines)
    edits = [(old, lines[150_000 * scale], False)]
else:  # 20k_edits: every 10th line of a 200,000-line file
    lines = [f"value_{i} = compute({i})\n" for i in range(200_000 * scale)]
    before = "".join(lines)
    edits = []
    for i in range(0, 200_000 * scale, 10):
        new = f"value_{i} = compute({i} + 1)\n"
        edits.append((lines[i], new, False))
        lines[i] = new
    after = "".join(lines)
open(f"{d}/big.txt", "w").write(before)
open(f"{d}.after", "w").write(after)
with open(f"{d}.yaml", "w") as fh:
    fh.write("edits:\n")
    for old, new, every in edits:
        fh.write(f'  - file_path: "big.txt"\n    old_string: {json.dumps(old)}\n    new_string: {json.dumps(new)}\n')
        if every:
            fh.write("    replace_all: true\n")
PY
    (cd "$2" && git init -q && git add big.txt && git -c user.name=b -c user.email=b@b commit -qm base \
        && cp "$2.after" big.txt && git diff >"$2.diff" && git checkout -q -- big.txt)
}

# measure NAME DIR CMD...: RUNS runs of CMD in DIR (reset to HEAD before each), checking the
# written bytes each time; prints "median_s peak_kb".
measure() {
    local name=$1 dir=$2
    shift 2
    local times=() peak=0 i t m
    for ((i = 0; i < RUNS; i++)); do
        git -C "$dir" checkout -q -- . && git -C "$dir" clean -qfdx
        # Not a re-run: without its record, each run applies the patch as one never seen before.
        rm -f "$dir/.git/patchgate/applied"
        (cd "$dir" && /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" >/dev/null 2>"$WORK/err") \
            || { echo "error: $name failed:" >&2; cat "$WORK/err" >&2; exit 1; }
        cmp -s "$dir/big.txt" "$dir.after" || { echo "error: $name wrote other bytes" >&2; exit 1; }
        read -r t m <"$WORK/time"
        times+=("$t")
        ((m > peak)) && peak=$m
    done
    echo "$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') $peak"
}

# row CASE NAME MEDIAN PEAK GIT_MEDIAN
row() {
    awk -v c="$1" -v n="$2" -v t="$3" -v m="$4" -v g="$5" 'BEGIN {
        printf "%-12s %-18s %9.2f %9s %10.1f\n", c, n, t, (g > 0 ? sprintf("%.1f", t / g) : "-"), m / 1024 }'
}

echo "scale $SCALE, $RUNS runs each, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %-18s %9s %9s %10s\n' case tool median_s x_git peak_MB
for c in ${CASES:-replace_all many_places 50mb 200k_lines 20k_edits}; do
    D="$WORK/$c"
    gen "$c" "$D"
    read -r gt gm < <(measure "git apply" "$D" git apply "$D.diff")
    row "$c" "git apply" "$gt" "$gm" "$gt"
    if [ -n "$PG_BASE" ]; then
        read -r t m < <(measure "patchgate (before)" "$D" "$PG_BASE" apply "$D.yaml" --checks none)
        row "$c" "patchgate (before)" "$t" "$m" "$gt"
    fi
    read -r t m < <(measure patchgate "$D" "$PG" apply "$D.yaml" --checks none)
    row "$c" "patchgate" "$t" "$m" "$gt"
    figure o "large input $c (scale $SCALE), wall time" "$t" "git apply" "$gt" s
    figure o "large input $c (scale $SCALE), peak RSS" "$m" "git apply" "$gm" KB
done
