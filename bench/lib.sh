# Shared by the bench scripts (sourced, not run): tools, the build, the scratch directory.
# Each script sets its own knobs first, then calls these.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
APT_UPDATED=0
apt_install() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        $SUDO apt-get update -qq
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

# bench_tools: hyperfine and GNU time (installed with apt only if missing), strace if it can be had
# (optional: without it the breakdowns that need it are skipped), then every program named.
bench_tools() {
    command -v hyperfine >/dev/null 2>&1 || apt_install hyperfine
    [ -x /usr/bin/time ] || apt_install time
    command -v strace >/dev/null 2>&1 || apt_install strace \
        || echo "note: strace could not be installed; the breakdowns that need it are skipped"
    local tool
    for tool in hyperfine python3 git cargo "$@"; do
        command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool not found" >&2; exit 1; }
    done
}

# bench_build: `cargo build --release`, then a private copy of the binary as $PG in a fresh $WORK
# (removed on exit; $OUT is BENCH_OUT or $WORK/out). The copy is found where cargo put it
# (CARGO_TARGET_DIR honoured), so a stale binary is never measured, and a concurrent rebuild
# cannot swap it mid-run.
# Knobs: PATCHGATE=/path/to/patchgate measures that binary instead (no build; e.g. an older
# commit's release build); PATCHGATE_BASE=/path/to/patchgate also copies a second binary as
# $PG_BASE, for the scripts that time it side by side with $PG (empty when unset).
# $PG_DESC and $PG_BASE_DESC say which commit each binary is (for the machine block).
bench_build() {
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
    OUT=${BENCH_OUT:-$WORK/out}
    mkdir -p "$OUT" "$WORK/bin"
    if [ -n "${PATCHGATE:-}" ]; then
        [ -x "$PATCHGATE" ] || { echo "error: PATCHGATE=$PATCHGATE is not an executable" >&2; exit 1; }
        cp "$PATCHGATE" "$WORK/bin/patchgate"
        PG_DESC=$(describe_binary "$PATCHGATE")
    else
        log "cargo build --release"
        (cd "$ROOT" && cargo build --release --quiet)
        local target
        target=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps \
            | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
        cp "$target/release/patchgate" "$WORK/bin/patchgate"
        PG_DESC="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (+ uncommitted src changes)')"
    fi
    PG="$WORK/bin/patchgate"
    PG_BASE=""
    PG_BASE_DESC=""
    if [ -n "${PATCHGATE_BASE:-}" ]; then
        [ -x "$PATCHGATE_BASE" ] || { echo "error: PATCHGATE_BASE=$PATCHGATE_BASE is not an executable" >&2; exit 1; }
        cp "$PATCHGATE_BASE" "$WORK/bin/patchgate-base"
        PG_BASE="$WORK/bin/patchgate-base"
        PG_BASE_DESC=$(describe_binary "$PATCHGATE_BASE")
    fi
}

# describe_binary PATH: HEAD of the git worktree the binary lies in (a target/ inside the checkout
# it was built from; rebuild after checking out another commit), or "?" when there is none.
describe_binary() {
    local dir
    dir=$(cd "$(dirname "$1")" && pwd)
    if git -C "$dir" rev-parse --short HEAD >/dev/null 2>&1; then
        echo "$(git -C "$dir" rev-parse --short HEAD) ($1)"
    else
        echo "? ($1)"
    fi
}

# figure SECTION NAME VALUE PEER PEER_VALUE UNIT [TARGET]: one figure as a ratio to its peer measured
# in the same run. Prints it, and appends it to $BENCH_FIGURES (a TSV file, when set) so that
# bench/run.sh can print every benchmark's figures in one table at the end. TARGET is the ratio the
# figure must stay at or under ("1.5" for "<= 1.5x"), or empty.
figure() {
    local section=$1 name=$2 value=$3 peer=$4 peer_value=$5 unit=$6 target=${7:-}
    local ratio
    ratio=$(awk -v a="$value" -v b="$peer_value" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }')
    printf 'figure: (%s) %s: %s %s vs %s %s %s = %sx%s\n' "$section" "$name" "$value" "$unit" "$peer" \
        "$peer_value" "$unit" "$ratio" "${target:+ (target <= ${target}x)}"
    if [ -n "${BENCH_FIGURES:-}" ]; then
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$section" "$name" "$value" "$peer" "$peer_value" "$unit" \
            "$ratio" "$target" >>"$BENCH_FIGURES"
    fi
}

# figures_from FILE: `figure` for each line of FILE (tab-separated: section, name, value, peer,
# peer value, unit, target), as the scripts' Python summaries write them.
figures_from() {
    [ -f "$1" ] || return 0
    local section name value peer peer_value unit target
    while IFS=$'\t' read -r section name value peer peer_value unit target; do
        figure "$section" "$name" "$value" "$peer" "$peer_value" "$unit" "$target"
    done <"$1"
}
