#!/usr/bin/env bash
# patchgate transaction benchmark: staging + commit of a 5-file patch on generated git repositories
# of 500 and 50,000 files, side by side with the `git worktree add` route on the same repositories.
#
#   bench/txn.sh
#
# What is timed (hyperfine -N: one process per run, no shell unless written; R = the repository):
#   patchgate              patchgate apply p5.yaml -C R --commit --checks none --format json
#                          (PATCHGATE_FSYNC unset by this script: durability on, the default)
#   patchgate fsync=0      the same with PATCHGATE_FSYNC=0 (durability off)
#   patchgate no-commit    the same without --commit: stage + journal + write-back, no commit and
#                          no index update (breakdown)
#   patchgate --dry-run    the same with --dry-run: plan + report only (breakdown)
#   git update-index       git -C R update-index --add --remove -- <the 5 paths>, with the 5 patched
#                          files copied in: the one git command patchgate runs after a commit; it
#                          rewrites the whole index (breakdown)
#   git update-index, index.skipHash=true   the same without the SHA-1 of the index (breakdown)
#   git add + commit       sh -c 'git -C R add -- <the 5 paths> && git -C R commit -q -m msg', with
#                          the 5 patched files copied in: what a user or a bot does by hand to commit
#                          the same change (the peer of `patchgate apply --commit`)
#   worktree route         sh WT_CMD = git -C R worktree add -q --detach WT HEAD &&
#                                      cp -R patched/. WT/ && git -C WT commit -qam msg
# Not timed (hyperfine --prepare, before every run):
#   patchgate, update-index: git reset -q --hard <base>, rm -f .git/patchgate/applied (the re-run
#     record: without it a re-run is a no-op), the loose objects (the base commit is packed, so every loose
#     object is one a previous run wrote: each run writes its objects as for a patch never seen
#     before), sync (update-index: then the 5 patched files copied in).
#   worktree route: the previous worktree moved out of the way and `git worktree prune` (the
#     equivalent of `git worktree remove --force`, with the deletion of its files deferred: on this
#     machine's ext4 (mounted with `discard`), creating 50,000 files right after deleting 50,000
#     files is many times slower, and that would be charged to the timed `worktree add`), loose
#     objects removed, sync. With WT_REMOVE_RUNS>0 (default 3), the route is also timed at 50,000
#     files with `git worktree remove --force` of the previous worktree right before each run.
# The patchgate and update-index commands of both sizes are run in ROUNDS rounds (RUNS/ROUNDS runs
# each per round, after one warm-up), so a change of background load hits all of them alike.
#
# With PATCHGATE_BASE=<an older build>, "patchgate before" times it in the same rounds (--commit,
# fsync on), for a before-and-after in one run.
#
# Environment knobs: RUNS (default 30 per command), ROUNDS (default 10), WT_RUNS (default 10: the
# worktree route; 0 leaves it out), WT_REMOVE_RUNS (default 3), STRACE_RUNS (default 5),
# BENCH_OUT=DIR keeps the raw hyperfine JSON and the tables in DIR.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${RUNS:-30}
ROUNDS=${ROUNDS:-10}
PER_ROUND=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
WT_RUNS=${WT_RUNS:-10}
WT_REMOVE_RUNS=${WT_REMOVE_RUNS:-3}
STRACE_RUNS=${STRACE_RUNS:-5}
SIZES=(500 50000)

log() { printf '\n== [%3d s] %s\n' "$SECONDS" "$*"; }

bench_tools
bench_build
mkdir -p "$WORK/trash"

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
unset PATCHGATE_FSYNC

# ---------------------------------------------------------------- machine
log "machine"
{
    echo "date:        $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "nproc:       $(nproc)"
    echo "cpu:         $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "memory:      $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel:      $(uname -sr)"
    dev=$(df "$WORK" | awk 'NR==2 {print $1}')
    echo "temp dir fs: $(df -T "$WORK" | awk 'NR==2 {print $2}') on $dev, mount options $(awk -v d="$dev" '$1 == d {print $4; exit}' /proc/mounts) ($WORK)"
    echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) (at start)"
    echo "patchgate:   $("$PG" --version 2>/dev/null || echo '?') at $PG_DESC"
    echo "git:         $(git --version) ($(command -v git))"
    echo "hyperfine:   $(hyperfine --version)"
} | tee "$OUT/machine.txt"

# ---------------------------------------------------------------- repositories
# DIR N: N Python-like files of ~15 lines, 100 per directory (pkgNNNN/mod_NN.py); the 5 files the
# patch edits (spread over the directories: first, 1/4, 1/2, 3/4, last), their patched copies in
# DIR.patched/, and the patch DIR.p5.yaml.
gen_repo() {
    python3 - "$1" "$2" <<'EOF'
import os, sys
out, n = sys.argv[1], int(sys.argv[2])
def text(i):
    return (f'"""Module {i}: generated for the patchgate benchmark."""\n\nimport os\n\n\n'
            f'def compute_{i}(value, limit=None):\n    if limit is None:\n        limit = {i % 97 + 2}\n'
            f'    total = 0\n    for item in range(value):\n        total += item % limit\n'
            f'    return total + 1\n\n\ndef name_{i}():\n    return os.path.join("pkg", "mod_{i}")\n')
for i in range(n):
    d = os.path.join(out, f"pkg{i // 100:04d}")
    if i % 100 == 0:
        os.makedirs(d)
    with open(os.path.join(d, f"mod_{i % 100:02d}.py"), "w") as f:
        f.write(text(i))
dirs = n // 100
picked = sorted({0, dirs // 4, dirs // 2, 3 * dirs // 4, dirs - 1})
assert len(picked) == 5
lines = ['message: "bench: 5 files"', "edits:"]
for d in picked:
    rel = f"pkg{d:04d}/mod_07.py"
    lines.append(f'  - {{file_path: {rel}, old_string: "return total + 1", new_string: "return total + 2"}}')
    os.makedirs(os.path.join(out + ".patched", f"pkg{d:04d}"))
    with open(os.path.join(out + ".patched", rel), "w") as f:
        f.write(text(d * 100 + 7).replace("return total + 1", "return total + 2"))
with open(out + ".p5.yaml", "w") as f:
    f.write("\n".join(lines) + "\n")
with open(out + ".paths", "w") as f:
    f.write(" ".join(f"pkg{d:04d}/mod_07.py" for d in picked) + "\n")
EOF
    (
        cd "$1"
        git init -q -b main
        git config core.logAllRefUpdates false  # no reflogs: the loose objects of a run can be removed
        git add -A
        git commit -q -m init
        git repack -adq  # the base commit is in one pack; every loose object is a run's
    )
}

for n in "${SIZES[@]}"; do
    log "generating the $n-file repository"
    s=$(date +%s%N)
    gen_repo "$WORK/r$n" "$n"
    echo "generated and committed in $(( ($(date +%s%N) - s) / 1000000 )) ms;" \
        "index $(stat -c %s "$WORK/r$n/.git/index") bytes; the patch edits $(cat "$WORK/r$n.paths")"
done

# Prepare scripts (not timed). $1 = repository.
cat >"$WORK/prep_pg.sh" <<'EOF'
#!/bin/sh
set -e
cd "$1"
git reset -q --hard "$(cat .git/bench-base)"
rm -f .git/patchgate/applied .git/ORIG_HEAD
rm -rf .git/objects/[0-9a-f][0-9a-f]
sync
EOF
cat >"$WORK/prep_ui.sh" <<'EOF'
#!/bin/sh
set -e
cd "$1"
git reset -q --hard "$(cat .git/bench-base)"
rm -f .git/ORIG_HEAD
rm -rf .git/objects/[0-9a-f][0-9a-f]
cp -R "$1.patched/." "$1/"
sync
EOF
# $1 = repository, $2 = worktree path, $3 = trash dir, $4 = "remove" to delete the old worktree now
cat >"$WORK/prep_wt.sh" <<'EOF'
#!/bin/sh
set -e
if [ -d "$2" ]; then
    if [ "${4:-}" = remove ]; then
        git -C "$1" worktree remove --force "$2"
    else
        mv "$2" "$3/wt.$(date +%s%N)"
    fi
fi
git -C "$1" worktree prune
rm -rf "$1"/.git/objects/[0-9a-f][0-9a-f]
sync
EOF
chmod +x "$WORK"/prep_*.sh
for n in "${SIZES[@]}"; do git -C "$WORK/r$n" rev-parse HEAD >"$WORK/r$n/.git/bench-base"; done

log "checking once that both routes commit the same tree"
for n in "${SIZES[@]}"; do
    R="$WORK/r$n"
    "$WORK/prep_pg.sh" "$R"
    (cd "$R" && "$PG" apply "$R.p5.yaml" --commit --checks none --format json >"$WORK/check.json")
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["status"]=="committed", r["status"]' "$WORK/check.json"
    [ -z "$(git -C "$R" status --porcelain)" ] || { echo "error: tree not clean after patchgate" >&2; exit 1; }
    pg_tree=$(git -C "$R" rev-parse HEAD^{tree})
    git -C "$R" worktree add -q --detach "$WORK/wt_check" "$(cat "$R/.git/bench-base")"
    cp -R "$R.patched/." "$WORK/wt_check/"
    git -C "$WORK/wt_check" commit -qam msg
    wt_tree=$(git -C "$WORK/wt_check" rev-parse HEAD^{tree})
    git -C "$R" worktree remove --force "$WORK/wt_check"
    [ "$pg_tree" = "$wt_tree" ] || { echo "error: trees differ ($pg_tree vs $wt_tree)" >&2; exit 1; }
    echo "$n files: committed tree $pg_tree from both routes; working tree and index clean"
    "$WORK/prep_pg.sh" "$R"
done

# ---------------------------------------------------------------- timing
log "timing patchgate and git update-index: $ROUNDS rounds of $PER_ROUND runs per command (+1 warm-up per round)"
CMDS=()
for n in "${SIZES[@]}"; do
    R="$WORK/r$n"
    P="$R.p5.yaml"
    PATHS=$(cat "$R.paths")
    CMDS+=(--prepare "$WORK/prep_pg.sh $R" -n "$n patchgate" "$PG apply $P -C $R --commit --checks none --format json")
    [ -n "$PG_BASE" ] && CMDS+=(--prepare "$WORK/prep_pg.sh $R" -n "$n patchgate before" "$PG_BASE apply $P -C $R --commit --checks none --format json")
    CMDS+=(--prepare "$WORK/prep_pg.sh $R" -n "$n patchgate fsync=0" "env PATCHGATE_FSYNC=0 $PG apply $P -C $R --commit --checks none --format json")
    CMDS+=(--prepare "$WORK/prep_pg.sh $R" -n "$n patchgate no-commit" "$PG apply $P -C $R --checks none --format json")
    CMDS+=(--prepare "$WORK/prep_pg.sh $R" -n "$n patchgate --dry-run" "$PG apply $P -C $R --dry-run --checks none --format json")
    CMDS+=(--prepare "$WORK/prep_ui.sh $R" -n "$n git update-index" "git -C $R update-index --add --remove -- $PATHS")
    CMDS+=(--prepare "$WORK/prep_ui.sh $R" -n "$n git update-index, index.skipHash=true" "git -C $R -c index.skipHash=true update-index --add --remove -- $PATHS")
    CMDS+=(--prepare "$WORK/prep_ui.sh $R" -n "$n git add + commit" "sh -c 'git -C $R add -- $PATHS && git -C $R commit -q -m msg'")
done
for r in $(seq "$ROUNDS"); do
    hyperfine -N --style none --warmup 1 --runs "$PER_ROUND" --export-json "$OUT/txn.round$r.json" \
        "${CMDS[@]}" >"$OUT/txn.round$r.log" 2>&1 || { cat "$OUT/txn.round$r.log"; exit 1; }
    echo "round $r/$ROUNDS done at $SECONDS s"
done
for n in "${SIZES[@]}"; do "$WORK/prep_pg.sh" "$WORK/r$n"; done

for n in "${SIZES[@]}"; do
    [ "$WT_RUNS" -gt 0 ] || break  # WT_RUNS=0: no worktree route
    R="$WORK/r$n"
    WT="$WORK/wt$n"
    log "$n files: timing the worktree route ($WT_RUNS runs, 1 warm-up)"
    cat >"$WORK/wt_cmd.sh" <<EOF
#!/bin/sh
git -C "$R" worktree add -q --detach "$WT" HEAD && cp -R "$R.patched/." "$WT/" && git -C "$WT" commit -qam msg
EOF
    hyperfine -N --style none --warmup 1 --runs "$WT_RUNS" --export-json "$OUT/wt.$n.json" \
        --prepare "$WORK/prep_wt.sh $R $WT $WORK/trash" -n "$n worktree route" "sh $WORK/wt_cmd.sh" \
        >"$OUT/wt.$n.log" 2>&1 || { cat "$OUT/wt.$n.log"; exit 1; }
    "$WORK/prep_wt.sh" "$R" "$WT" "$WORK/trash"
    rm -rf "$WORK/trash"/*  # the deferred deletions, now rather than during a later timed run
    sync
    if [ "$n" = 50000 ] && [ "$WT_REMOVE_RUNS" -gt 0 ]; then
        log "$n files: timing the worktree route with git worktree remove --force right before ($WT_REMOVE_RUNS runs)"
        sh "$WORK/wt_cmd.sh"  # a worktree to remove before the first timed run
        hyperfine -N --style none --warmup 0 --runs "$WT_REMOVE_RUNS" --export-json "$OUT/wtrm.$n.json" \
            --prepare "$WORK/prep_wt.sh $R $WT $WORK/trash remove" -n "$n worktree route, remove before" "sh $WORK/wt_cmd.sh" \
            >"$OUT/wtrm.$n.log" 2>&1 || { cat "$OUT/wtrm.$n.log"; exit 1; }
        "$WORK/prep_wt.sh" "$R" "$WT" "$WORK/trash" remove
    fi
    "$WORK/prep_pg.sh" "$R"
done
cd "$WORK"

# ---------------------------------------------------------------- where the time goes (strace)
# One patchgate run traced (strace -f --seccomp-bpf -ttt, execve and exits only: little overhead): wall time of the
# whole run vs of its one child, `git update-index`.
if command -v strace >/dev/null 2>&1; then
    log "where the time goes: patchgate's own work vs its git update-index child (strace -f, $STRACE_RUNS runs each)"
    for n in "${SIZES[@]}"; do
        R="$WORK/r$n"
        for i in $(seq "$STRACE_RUNS"); do
            "$WORK/prep_pg.sh" "$R"
            (cd "$R" && strace -f --seccomp-bpf -ttt -q -e trace=execve -o "$OUT/strace.$n.$i.txt" \
                "$PG" apply "$R.p5.yaml" --commit --checks none --format json >/dev/null)
        done
        "$WORK/prep_pg.sh" "$R"
    done
fi

# ---------------------------------------------------------------- results
log "results"
python3 - "$OUT" "${SIZES[@]}" <<'EOF' | tee "$OUT/summary.txt"
import glob, json, os, re, statistics, sys

out, sizes = sys.argv[1], [int(x) for x in sys.argv[2:]]
times = {}  # (size, name) -> run times in ms, over all rounds
for p in sorted(glob.glob(os.path.join(out, "txn.round*.json"))) + sorted(glob.glob(os.path.join(out, "wt*.json"))):
    for r in json.load(open(p))["results"]:
        n, name = r["command"].split(" ", 1)
        times.setdefault((int(n), name), []).extend(x * 1000 for x in r["times"])
med = {k: statistics.median(v) for k, v in times.items()}
g = lambda n, name: med.get((n, name), float("nan"))
small, big = sizes[0], sizes[-1]
names = list(dict.fromkeys(name for _, name in times))

w = max(len(x) for x in names)
head = f"{'command':<{w}}  " + "  ".join(f"{f'{n} files: median':>18} {'(min-max)':>17}" for n in sizes) + f"  {'ratio':>6}"
print(head)
print("-" * len(head))
for name in names:
    cells = []
    for n in sizes:
        t = times.get((n, name))
        cells.append(f"{med[(n, name)]:>15.1f} ms {f'({min(t):.0f}-{max(t):.0f}, n={len(t)})':>17}" if t else f"{'-':>18} {'':>17}")
    ratio = g(big, name) / g(small, name) if (small, name) in med and (big, name) in med else float("nan")
    print(f"{name:<{w}}  " + "  ".join(cells) + (f"  {ratio:>5.2f}x" if ratio == ratio else ""))

met = lambda ok: "met" if ok else "NOT met"
print()
print("targets (ratios of medians):")
for n in sizes:
    r = g(n, "patchgate") / g(n, "git add + commit")
    print(f"  patchgate --commit / git add + git commit at {n} files = {r:.2f}x  (target <= 0.45x at {big}: {met(r <= 0.45)})")
if (big, "patchgate before") in med:
    r = g(big, "patchgate") / g(big, "patchgate before")
    print(f"  patchgate --commit / the build before (PATCHGATE_BASE) at {big} files = {r:.2f}x"
          f"  (before: {g(big, 'patchgate before') / g(big, 'git add + commit'):.2f}x of git add + git commit)")
with open(os.path.join(out, "figures.tsv"), "w") as f:
    for n in sizes:
        f.write(f"{n}\t{g(n, 'patchgate'):.1f}\t{g(n, 'git add + commit'):.1f}\n")
for name in ("patchgate", "patchgate fsync=0"):
    r = g(big, name) / g(small, name)
    print(f"  {name:<18} at {big} files / at {small} files = {r:.2f}x  (target <= 1.5x: {met(r <= 1.5)})")
for name in ("patchgate", "patchgate fsync=0"):
    for wt in ("worktree route", "worktree route, remove before"):
        if (big, wt) in med:
            r = g(big, name) / g(big, wt)
            print(f"  {name:<18} / {wt:<30} at {big} files = {100 * r:5.2f}%  (target < 5%: {met(r < 0.05)})")
print()
print("where patchgate's time goes (differences of medians):")
for n in sizes:
    pg, nf, nc, dry, ui, uis = (g(n, x) for x in ("patchgate", "patchgate fsync=0", "patchgate no-commit",
                                                  "patchgate --dry-run", "git update-index",
                                                  "git update-index, index.skipHash=true"))
    print(f"  {n} files: total {pg:.1f} ms = plan+report (--dry-run) {dry:.1f}"
          f" + stage/journal/write-back (no-commit - dry-run) {nc - dry:.1f}"
          f" + commit and index update (patchgate - no-commit) {pg - nc:.1f};"
          f" git update-index alone {ui:.1f} (of which SHA-1 of the index ~{ui - uis:.1f});"
          f" fsync cost (patchgate - fsync=0) {pg - nf:.1f}")
print(f"  growth {small} -> {big} files: patchgate {g(big, 'patchgate') - g(small, 'patchgate'):+.1f} ms,"
      f" git update-index alone {g(big, 'git update-index') - g(small, 'git update-index'):+.1f} ms,"
      f" --dry-run {g(big, 'patchgate --dry-run') - g(small, 'patchgate --dry-run'):+.1f} ms,"
      f" no-commit {g(big, 'patchgate no-commit') - g(small, 'patchgate no-commit'):+.1f} ms")

# strace: whole run vs the git update-index child.
def spans(path):
    start = end = None
    child = {}
    for line in open(path):
        m = re.match(r"(\d+)\s+(\d+\.\d+)\s+(.*)", line)
        if not m:
            continue
        pid, t, rest = int(m.group(1)), float(m.group(2)), m.group(3)
        if start is None:
            start, main = t, pid
        if rest.startswith("execve(") and "update-index" in rest:
            child.setdefault(pid, [t, None])  # first attempt of the PATH search: just after the fork
        if rest.startswith("+++ exited"):
            if pid == main:
                end = t
            elif pid in child:
                child[pid][1] = t
    ui = sum(b - a for a, b in child.values() if b is not None)
    return (end - start) * 1000, ui * 1000
for n in sizes:
    files = sorted(glob.glob(os.path.join(out, f"strace.{n}.*.txt")))
    if not files:
        continue
    sp = [spans(f) for f in files]
    tot = statistics.median(s[0] for s in sp)
    ui = statistics.median(s[1] for s in sp)
    own = statistics.median(s[0] - s[1] for s in sp)
    print(f"  strace, {n} files ({len(sp)} runs, medians): whole run {tot:.1f} ms = patchgate's own"
          f" work {own:.1f} ms + its git update-index child {ui:.1f} ms ({100 * ui / tot:.0f}%)")
EOF
echo
echo "index sizes: $(for n in "${SIZES[@]}"; do printf '%s files %s bytes; ' "$n" "$(stat -c %s "$WORK/r$n/.git/index")"; done)"
while IFS=$'\t' read -r n pg peer; do
    target=""; [ "$n" = "${SIZES[-1]}" ] && target=0.45
    figure d "apply --commit, 5 files in a repository of $n files" "$pg" "git add + git commit" "$peer" ms $target
done <"$OUT/figures.tsv"
echo "load avg at end: $(cut -d' ' -f1-3 /proc/loadavg); total $SECONDS s before clean-up" | tee -a "$OUT/machine.txt"
if [ -n "${BENCH_OUT:-}" ]; then echo "raw results kept in $BENCH_OUT"; fi
