#!/usr/bin/env bash
# patchgate benchmarks: one command, every benchmark, each figure a ratio to its peer measured in the
# same run.
#
#   bench/run.sh            everything below, then one table of every figure (20-40 min here)
#   SUITE=core bench/run.sh (a), (a1)-(a3), (b), (c) only (1-3 min)
#
# Here, on the scratch directory's file system (ext4 on a default machine), and once more with the
# scratch data on tmpfs (/dev/shm) when it is one:
# (a) 1,000 edits over 200 files: patchgate (default = fsync on / PATCHGATE_FSYNC=0 / --dry-run) vs
#     `git apply` of the same change as a unified diff
# (a1) one edit to one file with a full undo history (an agent's usual patch) vs `git apply`
# (a2) 1,200 edits over 600 files (more than a descriptor table of 256 holds open) vs `git apply`
# (a3) 200 edits, one in each of 200 files (a bot's rename across a project) vs `git apply`
# (b) miss diagnosis on a 10,000-line file (and the matching hit, for comparison)
# (c) peak memory (max RSS) of the (a) runs
# Then, each by its own script with the same binary (PATCHGATE=...) and fewer runs:
# (d) bench/txn.sh        --commit at 500 and 50,000 files vs `git add` + `git commit`
# (e) bench/checks.sh     checks of 20 Python + 20 JS files vs the checkers run by hand
# (g) bench/references.sh the references check vs `git grep -w`
# (syntax) cargo bench --bench syntax: the syntax gate per language vs a full parse
# (o) bench/large.sh      large inputs vs git apply, with peak memory
# (h) bench/mcp.sh        the second apply_patch of an MCP session vs the first, per language
# Each script appends its figures to one file ($BENCH_FIGURES, see `figure` in bench/lib.sh); the
# table at the end prints them all with their targets.
#
# Environment knobs: SUITE (all | core), RUNS (default 30 per command), ROUNDS (default 5), WARMUP
# (default 3, first round), MEM_RUNS (default 5), PATCHGATE_BASE (an older build: timed in (a)'s
# rounds too, as "patchgate before"), SKIP (names of the scripts above to leave out, e.g.
# "mcp large"), BENCH_OUT=DIR keeps the raw hyperfine JSON and the printed tables in DIR (default:
# discarded). Scratch data goes to a fresh `mktemp -d` directory, removed on exit.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BENCH="$ROOT/bench"
RUNS=${RUNS:-30}      # timed runs per command, split over ROUNDS
ROUNDS=${ROUNDS:-5}
WARMUP=${WARMUP:-3}   # warm-up runs in the first round (1 in each later round)
PER_ROUND=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
MEM_RUNS=${MEM_RUNS:-5}

log() { printf '\n== %s\n' "$*"; }

# rounds NAME PEER [hyperfine options and commands...]: ROUNDS rounds of hyperfine (PER_ROUND runs
# per command, the warm-up in the first round), the commands interleaved by round so that a change
# of background load hits them all alike; then the table of medians, each as a ratio to PEER's, in
# $OUT/NAME.table.
rounds() {
    local name=$1 peer=$2; shift 2
    local r w
    for r in $(seq "$ROUNDS"); do
        w=$WARMUP; [ "$r" -gt 1 ] && w=1
        hyperfine -N --style none --warmup "$w" --runs "$PER_ROUND" \
            --export-json "$OUT/$name.round$r.json" "$@" \
            >>"$OUT/$name.hyperfine.log" 2>&1 || { cat "$OUT/$name.hyperfine.log"; exit 1; }
        echo "round $r/$ROUNDS done"
    done
    python3 "$BENCH/summarize.py" "$peer" "$OUT"/"$name".round*.json >"$OUT/$name.table"
    grep -v '^#tsv' "$OUT/$name.table"
}

SUITE=${SUITE:-all}
SKIP=${SKIP:-}
case "$SUITE" in all|core) ;; *) echo "error: SUITE=$SUITE: expected all or core" >&2; exit 2 ;; esac

bench_tools
bench_build
# Every figure of this run (and of the scripts it calls) as one TSV line; see `figure` in lib.sh.
# A nested run (the tmpfs pass) appends to its caller's file.
BENCH_FIGURES=${BENCH_FIGURES:-$OUT/figures.tsv}
export BENCH_FIGURES
[ "$SUITE" = all ] && : >"$BENCH_FIGURES"
FS_LABEL=$(df -T "$WORK" | awk 'NR==2 {print $2}')
rm -f "$OUT"/a.round*.json "$OUT"/a1.round*.json "$OUT"/a2.round*.json "$OUT"/a3.round*.json "$OUT"/b.round*.json "$OUT"/*.hyperfine.log

# ---------------------------------------------------------------- machine
log "machine"
{
    echo "date:        $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "nproc:       $(nproc)"
    echo "cpu:         $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "memory:      $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel:      $(uname -sr)"
    fs=$(df -T "$WORK" | awk 'NR==2 {print $2}')
    dev=$(df "$WORK" | awk 'NR==2 {print $1}')
    if [ "$fs" = ext4 ] && [ -r "/sys/fs/ext4/${dev#/dev/}/journal_task" ]; then
        [ "$(cat "/sys/fs/ext4/${dev#/dev/}/journal_task")" = "<none>" ] && fs="ext4, no journal" || fs="ext4, journaled"
    fi
    echo "temp dir fs: $fs on $dev, mount options $(awk -v d="$dev" '$1 == d {print $4; exit}' /proc/mounts) ($WORK)"
    echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) (at start)"
    [ -r /proc/pressure/io ] && echo "io pressure: $(head -1 /proc/pressure/io) (at start)"
    echo "patchgate:   $("$PG" --version 2>/dev/null || echo '?') at $PG_DESC"
    echo "git:         $(git --version)"
    echo "hyperfine:   $(hyperfine --version)"
} | tee "$OUT/machine.txt"

git_quiet() { git -c user.name=bench -c user.email=bench@example.invalid -c init.defaultBranch=main "$@"; }
make_repo() { # DIR: commit everything in DIR as the initial state
    (cd "$1" && git_quiet init -q && git_quiet add -A && git_quiet commit -q -m init)
}

# ================================================================= (a) 1,000 edits over 200 files
log "(a) generating 200 files / 1,000 edits"
A="$WORK/a"
python3 "$BENCH/gen.py" edits "$A"
make_repo "$A/repo"
# The same change as a unified diff: the edits applied (by the generator, in Python) to a copy, then git diff.
cp -a "$A/repo" "$A/diffrepo"
cp -a "$A/expected/." "$A/diffrepo/"
git -C "$A/diffrepo" diff --no-color --no-ext-diff >"$A/edits.diff"
echo "edits.yaml: $(wc -c <"$A/edits.yaml") bytes; edits.diff: $(wc -l <"$A/edits.diff") lines"

log "(a) checking once that both tools produce the same tree"
cp -a "$A/repo" "$A/check_pg"
cp -a "$A/repo" "$A/check_git"
(cd "$A/check_pg" && "$PG" apply "$A/edits.yaml" --checks none --format json >"$A/check_pg.json")
(cd "$A/check_git" && git apply "$A/edits.diff")
python3 - "$A/check_pg.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
st = [e["status"] for e in r["edits"]]
assert r["status"] == "applied" and len(st) == 1000 and set(st) == {"applied"}, (r["status"], len(st), set(st))
assert len(r["files"]) == 200, len(r["files"])
print("patchgate: status applied, 1000 edits applied, 200 files changed")
EOF
diff -r --exclude=.git "$A/check_pg" "$A/check_git" >/dev/null
diff -r --exclude=.git "$A/check_pg" "$A/expected" >/dev/null
modes() { (cd "$1" && find . -path ./.git -prune -o -type f -printf '%m %p\n' | sort); }
[ "$(modes "$A/check_pg")" = "$(modes "$A/check_git")" ]
echo "trees byte-identical (and same file modes): patchgate == git apply == expected"
rm -rf "$A/check_pg" "$A/check_git" "$A/diffrepo"

log "(a) timing (hyperfine: $ROUNDS rounds of $PER_ROUND runs per command, after warm-up; every run starts from the pristine repository)"
cd "$A/repo"
# Every run starts from the same repository: working tree checked out again, and .git restored from a
# copy taken after the initial commit. Restoring .git (not only `rm -f .git/patchgate/applied`, the
# record that makes a re-run a no-op) also drops what an earlier run left behind on purpose: the
# git objects of the staged state and the checker mirror under .git/patchgate/, either of which would
# make later runs cheaper than a patch patchgate has not seen before. `sync` so dirty pages left by
# the reset are not flushed during a timed run.
git -C "$A/repo" gc -q  # objects into one pack, so the copy below is a handful of files
cp -a "$A/repo/.git" "$A/pristine.git"
RESET="bash -c 'rm -rf .git && cp -a $A/pristine.git .git && git checkout -q -- . && sync'"
PATCH_ARGS="apply $A/edits.yaml --checks none --format json"
# The default rows run patchgate itself, as `git apply` is run: through `env -u` each of its runs
# paid for a second exec (0.8 ms here, 7 % of git apply's time), which the peer did not.
unset PATCHGATE_FSYNC
# Rounds interleave the commands, so a change of background load hits all of them alike.
# PATCHGATE_BASE: an older build in the same rounds, for a before-and-after in one run.
BEFORE=()
[ -n "$PG_BASE" ] && BEFORE=(-n "patchgate before: $PG_BASE_DESC (fsync on)" "$PG_BASE $PATCH_ARGS")
rounds a "git apply" --prepare "$RESET" \
    -n "git apply" "git apply $A/edits.diff" \
    -n "patchgate (fsync on, default)" "$PG $PATCH_ARGS" \
    "${BEFORE[@]}" \
    -n "patchgate, human report (the default format)" "$PG apply $A/edits.yaml --checks none" \
    -n "patchgate (PATCHGATE_FSYNC=0)" "env PATCHGATE_FSYNC=0 $PG $PATCH_ARGS" \
    -n "patchgate --dry-run (plan only)" "$PG $PATCH_ARGS --dry-run"
eval "$RESET"

if command -v strace >/dev/null 2>&1; then
    log "(a) where the time goes: file-system operations of one run of each (strace)"
    TRACE="strace -ff -qq -e trace=openat,mkdir,rename,unlink,fsync,fdatasync"
    eval "$RESET"; $TRACE -o "$OUT/a.ops.git.txt" git apply "$A/edits.diff"
    eval "$RESET"; env -u PATCHGATE_FSYNC $TRACE -o "$OUT/a.ops.pg1.txt" "$PG" $PATCH_ARGS >/dev/null
    eval "$RESET"; env PATCHGATE_FSYNC=0 $TRACE -o "$OUT/a.ops.pg0.txt" "$PG" $PATCH_ARGS >/dev/null
    eval "$RESET"; $TRACE -o "$OUT/a.ops.dry.txt" "$PG" $PATCH_ARGS --dry-run >/dev/null
    eval "$RESET"
    python3 "$BENCH/fsops.py" "$A/repo" "git apply=$OUT/a.ops.git.txt" "patchgate=$OUT/a.ops.pg1.txt" \
        "FSYNC=0=$OUT/a.ops.pg0.txt" "--dry-run=$OUT/a.ops.dry.txt" | tee "$OUT/a.ops.table"

    log "(a) syscall latency of one run (strace -f -c -w: wall-clock time inside each syscall, summed over threads; strace slows every call down)"
    for mode in 1 0; do
        eval "$RESET"
        env PATCHGATE_FSYNC=$mode strace -f -c -w -o "$OUT/a.strace.fsync$mode.txt" "$PG" $PATCH_ARGS >/dev/null
        echo "-- patchgate, PATCHGATE_FSYNC=$mode: top 8 syscalls by time"
        awk 'NR<=2 || (NR>2 && NR<=10)' "$OUT/a.strace.fsync$mode.txt"
        grep -E ' total$' "$OUT/a.strace.fsync$mode.txt" || true
    done
    eval "$RESET"
    strace -f -c -w -o "$OUT/a.strace.git.txt" git apply "$A/edits.diff"
    echo "-- git apply: top 8 syscalls by time"
    awk 'NR<=2 || (NR>2 && NR<=10)' "$OUT/a.strace.git.txt"
    grep -E ' total$' "$OUT/a.strace.git.txt" || true
    eval "$RESET"
fi

# ================================================================= (c) peak memory of the (a) runs
log "(c) peak memory (/usr/bin/time -v, $MEM_RUNS runs each, median of max RSS)"
max_rss_kb() { # command...: prints max RSS in KB of one run from the pristine tree
    eval "$RESET"
    /usr/bin/time -v -o "$WORK/time.txt" "$@" >/dev/null
    awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$WORK/time.txt"
}
: >"$OUT/c.tsv"
mem_case() { # NAME command...
    local name=$1; shift
    local vals=()
    for _ in $(seq "$MEM_RUNS"); do vals+=("$(max_rss_kb "$@")"); done
    printf '%s\t%s\n' "$name" "${vals[*]}" >>"$OUT/c.tsv"
}
mem_case "git apply" git apply "$A/edits.diff"
mem_case "patchgate (fsync on, default)" env -u PATCHGATE_FSYNC "$PG" $PATCH_ARGS
mem_case "patchgate (PATCHGATE_FSYNC=0)" env PATCHGATE_FSYNC=0 "$PG" $PATCH_ARGS
mem_case "patchgate --dry-run (plan only)" "$PG" $PATCH_ARGS --dry-run
eval "$RESET"
python3 - "$OUT/c.tsv" >"$OUT/c.table" <<'EOF'
import statistics, sys
print(f"{'command':<32}  {'median max RSS':>14}  {'min':>8}  {'max':>8}")
print("-" * 68)
for line in open(sys.argv[1]):
    name, vals = line.rstrip("\n").split("\t")
    kb = [int(v) for v in vals.split()]
    med = int(statistics.median(kb))
    print(f"{name:<32}  {med / 1024:>11.1f} MB  {min(kb) / 1024:>5.1f} MB  {max(kb) / 1024:>5.1f} MB")
    print(f"#tsv\t{name}\t{med}")
EOF
grep -v '^#tsv' "$OUT/c.table"
cd "$WORK"

# ================================================================= (a1) one edit, full undo history
# An agent's usual patch: one edit to one file of a repository where patchgate has written many
# patches before (its undo history full: 50 entries, each with its pin ref), against `git apply`
# of the same one-hunk diff. Only the working tree is reset between runs; the history stays full.
log "(a1) one edit with a full undo history (50 entries) vs git apply of the same hunk"
A1="$WORK/a1"
mkdir -p "$A1/repo"
for i in $(seq 20); do seq 1 300 | sed "s/^/line $i /" >"$A1/repo/f$i.txt"; done
make_repo "$A1/repo"
printf 'edits:\n  - file_path: f3.txt\n    old_string: "line 3 150\\n"\n    new_string: "line 3 150 changed\\n"\n' >"$A1/one.yaml"
(cd "$A1/repo" && sed -i 's/^line 3 150$/line 3 150 changed/' f3.txt && git diff --no-color >"$A1/one.diff" && git checkout -q -- .)
cd "$A1/repo"
for i in $(seq 26); do
    for w in one two; do
        printf -- '- {file_path: f5.txt, old_string: "line 5 7\\n", new_string: "line 5 7 %s\\n"}\n' "$w" >"$A1/fill.yaml"
        "$PG" apply "$A1/fill.yaml" --checks none >/dev/null
        git checkout -q -- .
    done
done
echo "undo history: $(ls .git/patchgate/history | wc -l) entries, $(git for-each-ref refs/patchgate/history | wc -l) pins"
RESET1="git checkout -q -- ."
BEFORE1=()
[ -n "$PG_BASE" ] && BEFORE1=(-n "patchgate before: $PG_BASE_DESC" "$PG_BASE apply $A1/one.yaml --checks none --format json")
rounds a1 "git apply" --prepare "$RESET1" \
    -n "git apply" "git apply $A1/one.diff" \
    -n "patchgate (one edit, full history)" "$PG apply $A1/one.yaml --checks none --format json" \
    "${BEFORE1[@]}"
eval "$RESET1"
cd "$WORK"

# ================================================================= (a2), (a3) other shapes of batch
# batch_case NAME KIND LABEL: gen.py KIND's batch applied by patchgate and, as a unified diff, by
# `git apply`, timed in the same rounds (and by PATCHGATE_BASE's build), after checking once that
# patchgate's tree is the expected one.
batch_case() {
    local name=$1 kind=$2 label=$3
    local dir="$WORK/$name"
    log "($name) $label vs git apply of the same change"
    python3 "$BENCH/gen.py" "$kind" "$dir"
    make_repo "$dir/repo"
    cp -a "$dir/repo" "$dir/diffrepo"
    cp -a "$dir/expected/." "$dir/diffrepo/"
    git -C "$dir/diffrepo" diff --no-color --no-ext-diff >"$dir/edits.diff"
    cp -a "$dir/repo" "$dir/check_pg"
    (cd "$dir/check_pg" && "$PG" apply "$dir/edits.yaml" --checks none >/dev/null)
    diff -r --exclude=.git "$dir/check_pg" "$dir/expected" >/dev/null
    echo "patchgate's tree == expected"
    rm -rf "$dir/check_pg" "$dir/diffrepo"
    cd "$dir/repo"
    git gc -q
    cp -a .git "$dir/pristine.git"
    local reset="bash -c 'rm -rf .git && cp -a $dir/pristine.git .git && git checkout -q -- . && sync'"
    local before=()
    [ -n "$PG_BASE" ] && before=(-n "patchgate before: $PG_BASE_DESC" "$PG_BASE apply $dir/edits.yaml --checks none --format json")
    rounds "$name" "git apply" --prepare "$reset" \
        -n "git apply" "git apply $dir/edits.diff" \
        -n "patchgate" "$PG apply $dir/edits.yaml --checks none --format json" \
        "${before[@]}"
    eval "$reset"
    cd "$WORK"
}
# More files than a descriptor table of 256 slots (what hyperfine, bash and most launchers hand
# down) holds: the batch keeps each temp file open until it is synced, so the table grows while
# the run's threads share it (src/fdtable.rs).
batch_case a2 spread "1,200 edits over 600 files"
# A bot's rename across a project: one edit in each file.
batch_case a3 single "200 edits, one in each of 200 files"

# ================================================================= (b) miss diagnosis
log "(b) generating a 10,000-line file and a 20-line old_string (re-indented, one line altered)"
B="$WORK/b"
python3 "$BENCH/gen.py" miss "$B"
make_repo "$B/repo"
cd "$B/repo"

log "(b) suggestion check (once)"
set +e
"$PG" apply "$B/miss.yaml" --checks none --format json >"$B/miss.json"
MISS_RC=$?
set -e
SUGGEST_RESULT=$(python3 - "$B/miss.json" "$B/miss_expect.json" "$MISS_RC" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
rc = int(sys.argv[3])
e = r["edits"][0]
s = e.get("suggestions") or []
got = (s[0]["start_line"], s[0]["end_line"]) if s else None
ok = rc == 2 and e["status"] == "not_found" and got == (want["start_line"], want["end_line"])
detail = f"exit {rc}, status {e['status']}, {len(s)} suggestion(s)"
if s:
    detail += f"; suggestions[0] = lines {got[0]}-{got[1]} kind {s[0]['kind']} similarity {s[0]['similarity']:.3f}"
detail += f"; expected lines {want['start_line']}-{want['end_line']}"
print(("PASS" if ok else "FAIL") + ": " + detail)
EOF
)
echo "$SUGGEST_RESULT" | tee "$OUT/b.check"

log "(b) timing (hyperfine -i, the miss exits 2: $ROUNDS rounds of $PER_ROUND runs per command, after warm-up)"
rounds b "hit: apply hit.yaml --dry-run" -i \
    -n "miss: apply miss.yaml" "$PG apply $B/miss.yaml --checks none --format json" \
    -n "hit: apply hit.yaml --dry-run" "$PG apply $B/hit.yaml --checks none --format json --dry-run"
cd "$WORK"

# ================================================================= summary
tsv() { awk -F'\t' -v n="$2" '$1 == "#tsv" && $2 == n {print $'"$3"'}' "$1"; }
log "results"
echo "(a) 1,000 edits over 200 files (ratio = median / median of git apply)"
grep -v '^#tsv' "$OUT/a.table"
echo
echo "(a1) one edit with a full undo history (ratio = median / median of git apply)"
grep -v '^#tsv' "$OUT/a1.table"
echo
echo "(a2) 1,200 edits over 600 files (ratio = median / median of git apply)"
grep -v '^#tsv' "$OUT/a2.table"
echo
echo "(a3) 200 edits, one in each of 200 files (ratio = median / median of git apply)"
grep -v '^#tsv' "$OUT/a3.table"
echo
echo "(b) miss diagnosis, 10,000-line file (ratio = median / median of the hit)"
grep -v '^#tsv' "$OUT/b.table"
echo
echo "(c) peak memory of the (a) runs"
grep -v '^#tsv' "$OUT/c.table"

GIT_MS=$(tsv "$OUT/a.table" "git apply" 3)
PG_MS=$(tsv "$OUT/a.table" "patchgate (fsync on, default)" 3)
PGN_MS=$(tsv "$OUT/a.table" "patchgate (PATCHGATE_FSYNC=0)" 3)
DRY_MS=$(tsv "$OUT/a.table" "patchgate --dry-run (plan only)" 3)
MISS_MS=$(tsv "$OUT/b.table" "miss: apply miss.yaml" 3)
PG_KB=$(tsv "$OUT/c.table" "patchgate (fsync on, default)" 3)
GIT_KB=$(tsv "$OUT/c.table" "git apply" 3)
python3 - "$GIT_MS" "$PG_MS" "$PGN_MS" "$DRY_MS" "$MISS_MS" "$PG_KB" "$GIT_KB" "$SUGGEST_RESULT" <<'EOF' | tee "$OUT/summary.txt"
import sys
git, pg, pgn, dry, miss = (float(x) for x in sys.argv[1:6])
pg_kb, git_kb = int(sys.argv[6]), int(sys.argv[7])
check = sys.argv[8]
met = lambda ok: "met" if ok else "NOT met"
print()
print("phases of the patchgate run (differences of medians):")
print(f"  plan + report (--dry-run)          {dry:7.1f} ms")
print(f"  stage + journal + write-back       {pgn - dry:7.1f} ms  (PATCHGATE_FSYNC=0 minus --dry-run)")
print(f"  fsync (durability)                 {pg - pgn:7.1f} ms  (default minus PATCHGATE_FSYNC=0)")
print()
print("targets:")
print(f"  (a) patchgate within 1.5x of git apply: fsync on {pg / git:.2f}x -> {met(pg / git <= 1.5)}; "
      f"PATCHGATE_FSYNC=0 {pgn / git:.2f}x -> {met(pgn / git <= 1.5)}")
print(f"  (b) miss diagnosis under 10 ms: {miss:.1f} ms -> {met(miss < 10)}; suggestion {check.split(':')[0]}")
print(f"  (c) max RSS under 50 MB: {pg_kb / 1024:.1f} MB -> {met(pg_kb < 50 * 1024)} (git apply: {git_kb / 1024:.1f} MB)")
EOF
HIT_MS=$(tsv "$OUT/b.table" "hit: apply hit.yaml --dry-run" 3)
figure a "apply 1,000 edits / 200 files, fsync on, $FS_LABEL" "$PG_MS" "git apply" "$GIT_MS" ms 1.5
figure a "apply 1,000 edits / 200 files, PATCHGATE_FSYNC=0, $FS_LABEL" "$PGN_MS" "git apply" "$GIT_MS" ms 1.5
figure a "apply 1,000 edits / 200 files, human report, $FS_LABEL" "$(tsv "$OUT/a.table" "patchgate, human report (the default format)" 3)" "git apply" "$GIT_MS" ms 1.5
figure a1 "apply one edit, undo history full, $FS_LABEL" "$(tsv "$OUT/a1.table" "patchgate (one edit, full history)" 3)" "git apply" "$(tsv "$OUT/a1.table" "git apply" 3)" ms
figure a2 "apply 1,200 edits over 600 files, $FS_LABEL" "$(tsv "$OUT/a2.table" "patchgate" 3)" "git apply" "$(tsv "$OUT/a2.table" "git apply" 3)" ms 1.5
figure a3 "apply one edit in each of 200 files, $FS_LABEL" "$(tsv "$OUT/a3.table" "patchgate" 3)" "git apply" "$(tsv "$OUT/a3.table" "git apply" 3)" ms 1.5
figure c "peak memory of the (a) apply, $FS_LABEL" "$PG_KB" "git apply" "$GIT_KB" KB
figure b "miss diagnosis, 10,000-line file (target < 10 ms), $FS_LABEL" "$MISS_MS" "the hit, --dry-run" "$HIT_MS" ms

if [ "$SUITE" = all ]; then
    skipped() { case " $SKIP " in *" $1 "*) echo "($1 skipped: SKIP=$SKIP)"; return 0 ;; esac; return 1; }
    # Each script in its own scratch and output directory, with this run's binary and fewer runs.
    sub() { # NAME SCRIPT [VAR=VALUE...]
        local name=$1 script=$2; shift 2
        skipped "$name" && return 0
        log "($name) $script"
        local out=""
        [ -n "${BENCH_OUT:-}" ] && out="$BENCH_OUT/$name" && mkdir -p "$out"
        env PATCHGATE="${PATCHGATE:-$PG}" BENCH_OUT="$out" "$@" bash "$BENCH/$script" \
            || echo "warning: $script failed (exit $?); its figures are missing from the table"
    }
    if [ "$(df -T /dev/shm 2>/dev/null | awk 'NR==2 {print $2}')" = tmpfs ] && ! skipped tmpfs; then
        log "(a)-(c) again with the scratch data on tmpfs"
        env TMPDIR=/dev/shm SUITE=core PATCHGATE="${PATCHGATE:-$PG}" BENCH_OUT= bash "$BENCH/run.sh" \
            || echo "warning: the tmpfs pass failed; its figures are missing from the table"
    fi
    sub txn txn.sh RUNS=10 ROUNDS=5 WT_RUNS=0 WT_REMOVE_RUNS=0 STRACE_RUNS=0
    sub checks checks.sh RUNS=5 ROUNDS=5
    sub references references.sh RUNS=10 ROUNDS=5
    if ! skipped syntax; then
        log "(syntax) cargo bench --bench syntax"
        (cd "$ROOT" && RUNS=30 cargo bench --quiet --bench syntax) \
            || echo "warning: the syntax benchmark failed; its figures are missing from the table"
    fi
    sub large large.sh RUNS=3
    sub mcp mcp.sh ROUNDS=5 REPORT="$WORK/mcp.md"

    log "every figure (ratio = patchgate / its peer, medians of the same run)"
    python3 - "$BENCH_FIGURES" <<'EOF' | tee "$OUT/figures.table"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
w = max([len(f"({r[0]}) {r[1]}") for r in rows] + [10])
p = max([len(r[3]) for r in rows] + [4])
print(f"{'figure':<{w}}  {'patchgate':>14}  {'peer':<{p}}  {'peer value':>14}  {'ratio':>7}  target")
print("-" * (w + p + 56))
for sec, name, val, peer, pval, unit, ratio, target in rows:
    verdict = ""
    if target:
        try:
            verdict = f"<= {target}x: " + ("met" if float(ratio) <= float(target) else "NOT met")
        except ValueError:
            verdict = f"<= {target}x: ?"
    def fmt(v):
        if v in ("", "nan"):
            return "-"
        x = float(v)
        return f"{x:,.{3 if abs(x) < 1 else 2 if abs(x) < 10 else 1}f} {unit}"
    print(f"{f'({sec}) {name}':<{w}}  {fmt(val):>14}  {peer:<{p}}  {fmt(pval):>14}  {ratio:>6}x  {verdict}")
EOF
fi
echo
echo "load avg at end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${BENCH_OUT:-}" ]; then echo; echo "raw results kept in $BENCH_OUT"; fi
