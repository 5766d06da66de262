#!/usr/bin/env bash
# patchgate mcp benchmark: the warm server against separate runs, one command.
#
#   bench/mcp.sh
#
# On a JS project with eslint (@eslint/js recommended) and prettier configured (ten 150-line
# files), two clean one-edit patches with the default checks, applied
# - through ONE `patchgate mcp` session: the first and the second `apply_patch` call;
# - through two separate `patchgate apply` runs on an identical repository;
# side by side in the same rounds (the order alternating), medians over ROUNDS (default 9) fresh
# repository pairs. Target (the issue): the second call at most a third of the first.
# The pinned tools come from scripts/install-checkers (.tools/node/node_modules).
#
# Environment knobs: ROUNDS (default 9), REPORT (default /tmp/bench-mcp.md: the markdown section
# written), BENCH_OUT=DIR keeps the raw JSON (default: discarded).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
log() { printf '\n== [%3d s] %s\n' "$SECONDS" "$*"; }
ROUNDS=${ROUNDS:-9}
REPORT=${REPORT:-/tmp/bench-mcp.md}

for tool in python3 git node; do
    command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool not found" >&2; exit 1; }
done
NODE_MODULES="$ROOT/.tools/node/node_modules"
[ -f "$NODE_MODULES/eslint/package.json" ] && [ -f "$NODE_MODULES/prettier/package.json" ] \
    || { echo "error: run scripts/install-checkers first ($NODE_MODULES)" >&2; exit 1; }
bench_build

log "mcp vs apply: $ROUNDS rounds"
python3 "$ROOT/bench/mcp_driver.py" "$PG" "$(cd "$NODE_MODULES" && pwd -P)" "$ROUNDS" "$WORK/repos" \
    > "$OUT/mcp.json"

python3 - "$OUT/mcp.json" "$PG_DESC" "$ROUNDS" > "$REPORT" <<'PY'
import json, os, platform, subprocess, sys, datetime
d = json.load(open(sys.argv[1]))
m = d["median"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
print(f"Machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; node {node}; "
      f"{datetime.date.today()}; patchgate {sys.argv[2]}; {sys.argv[3]} rounds, medians.\n")
print("| | first patch | second patch | second / first |")
print("|---|---|---|---|")
print(f"| one `patchgate mcp` session | {m['mcp_first']*1000:.0f} ms | {m['mcp_second']*1000:.0f} ms "
      f"| {m['mcp_second']/m['mcp_first']:.2f} |")
print(f"| two `patchgate apply` runs | {m['cli_first']*1000:.0f} ms | {m['cli_second']*1000:.0f} ms "
      f"| {m['cli_second']/m['cli_first']:.2f} |")
PY
cat "$REPORT"
