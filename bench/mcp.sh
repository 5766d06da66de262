#!/usr/bin/env bash
# patchgate mcp benchmark: the first and the second `apply_patch` of one session, per language.
#
#   bench/mcp.sh
#   PATCHGATE_BASE=/path/to/older/patchgate bench/mcp.sh    # an older build side by side
#
# Per language, a generated project of ten 30-function modules with its usual tools configured
# (bench/mcp_driver.py says which), two clean one-edit patches with the default checks, applied
# through ONE `patchgate mcp` session: the first and the second `apply_patch` call, timed from
# the request to its answer. Medians over ROUNDS fresh repositories; the variants (language x
# binary) run in an order rotated by round. Target (the issue): the second call at most a third
# of the first. On the JS project the same two patches also go through two separate
# `patchgate apply` runs (CLI_LANGS), for the cost of a call without the server.
# The pinned tools come from scripts/install-checkers (.tools/: eslint, prettier, ruff, go);
# cargo, clippy and rustfmt from the Rust toolchain. A language whose tools are missing is skipped.
#
# Environment knobs: ROUNDS (default 5), LANGS (default "js py go rust rust-warned go-warned
# rust-ws"; the two -warned projects have a warning before any patch), CLI_LANGS
# (default "js"), REPORT (default /tmp/bench-mcp.md: the markdown section written), BENCH_OUT=DIR
# keeps the raw JSON (default: discarded), PATCHGATE / PATCHGATE_BASE (bench/lib.sh).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
log() { printf '\n== [%3d s] %s\n' "$SECONDS" "$*"; }
ROUNDS=${ROUNDS:-5}
LANGS=${LANGS:-js py go rust rust-warned go-warned rust-ws}
CLI_LANGS=${CLI_LANGS:-js}
REPORT=${REPORT:-/tmp/bench-mcp.md}

if [ -f "$ROOT/.tools/path" ]; then PATH="$(cat "$ROOT/.tools/path"):$PATH"; fi
# The go toolchain's own binary, not a launcher in front of it (a pip-installed go is a Python
# script that starts an interpreter per call): what a Go developer's PATH has.
if command -v go >/dev/null 2>&1 && goroot=$(go env GOROOT 2>/dev/null) && [ -x "$goroot/bin/go" ]; then
    PATH="$goroot/bin:$PATH"
fi
export PATH
for tool in python3 git; do
    command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool not found" >&2; exit 1; }
done
NODE_MODULES="$ROOT/.tools/node/node_modules"
have() {
    case "$1" in
        js) command -v node >/dev/null 2>&1 && [ -f "$NODE_MODULES/eslint/package.json" ] \
                && [ -f "$NODE_MODULES/prettier/package.json" ] ;;
        py) command -v ruff >/dev/null 2>&1 ;;
        go | go-warned) command -v go >/dev/null 2>&1 && command -v gofmt >/dev/null 2>&1 ;;
        rust | rust-warned | rust-ws) command -v cargo >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1 \
                && command -v rustfmt >/dev/null 2>&1 ;;
        *) echo "error: unknown language $1 (js py go rust rust-warned go-warned rust-ws)" >&2; exit 1 ;;
    esac
}
run_langs=()
for lang in $LANGS; do
    if have "$lang"; then run_langs+=("$lang"); else echo "note: $lang skipped (its tools are missing; scripts/install-checkers)"; fi
done
[ "${#run_langs[@]}" -gt 0 ] || { echo "error: no language has its tools" >&2; exit 1; }
bench_build

log "mcp first vs second call: ${run_langs[*]}; $ROUNDS rounds"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
nm=""
[ -d "$NODE_MODULES" ] && nm=$(cd "$NODE_MODULES" && pwd -P)
langs_csv=$(IFS=,; echo "${run_langs[*]}")
python3 "$ROOT/bench/mcp_driver.py" --pg "$PG" --base "$PG_BASE" --langs "$langs_csv" \
    --cli-langs "${CLI_LANGS// /,}" --rounds "$ROUNDS" --work "$WORK/repos" --node-modules "$nm" \
    > "$OUT/mcp.json"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT/mcp.json" "$PG_DESC" "$PG_BASE_DESC" "$load_before" "$load_after" > "$REPORT" <<'PY'
import json, os, platform, subprocess, sys, datetime
d = json.load(open(sys.argv[1]))
m, desc, base_desc = d["median"], sys.argv[2], sys.argv[3]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
def version(*argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "-"
tools = {"js": ("node", "--version"), "py": ("ruff", "--version"), "go": ("go", "version"),
         "rust": ("cargo", "clippy", "--version")}
used = {tools[l.split("-")[0]] for l in d["langs"]}
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
print(f"Machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; {now}; "
      f"{'; '.join(version(*t) for t in sorted(used))}; {d['rounds']} rounds, medians; "
      f"load average (1, 5, 15 min) {sys.argv[4]} before, {sys.argv[5]} after.\n")
names = {"pg": f"patchgate {desc}", "base": f"base {base_desc}"}
print("| project (checks) | binary | how | first call | second call | second / first |")
print("|---|---|---|---:|---:|---:|")
checks = d.get("checks", {})
for lang in d["langs"]:
    for b in d["binaries"]:
        for how in ("mcp", "cli"):
            key = f"{b}/{lang}/{how}"
            if key + "/first" not in m:
                continue
            f, s = m[key + "/first"], m[key + "/second"]
            ran = ", ".join(c for c in checks.get(f"{b}/{lang}/mcp", []) if c not in ("syntax", "references"))
            what = "one `patchgate mcp` session" if how == "mcp" else "two `patchgate apply` runs"
            print(f"| {lang} ({ran}) | {names[b]} | {what} | {f*1000:,.0f} ms | {s*1000:,.0f} ms "
                  f"| **{s/f:.2f}** |")
if "base" in d["binaries"]:
    print("\nSecond call, this build / base:",
          ", ".join(f"{l} {m[f'pg/{l}/mcp/second'] / m[f'base/{l}/mcp/second']:.2f}" for l in d["langs"]))
PY
cat "$REPORT"
python3 - "$OUT/mcp.json" >"$OUT/figures.part" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["median"]
for lang in d["langs"]:
    f, s = m.get(f"pg/{lang}/mcp/first"), m.get(f"pg/{lang}/mcp/second")
    if f and s:
        print(f"h\tMCP {lang}: the second apply_patch of a session\t{s * 1000:.0f}\tthe first call\t{f * 1000:.0f}\tms\t0.33")
PY
figures_from "$OUT/figures.part"
