#!/usr/bin/env bash
# patchgate checks benchmark: one patch editing 20 Python and 20 JavaScript files, every checker on,
# side by side with running the same checkers by hand.
#
#   bench/checks.sh
#
# Projects (generated, one git repository): py/ (pyproject.toml, [tool.ruff.lint] select = E, F,
# [tool.ruff.format]; 20 files of 50-100 lines) and js/ (package.json, eslint.config.js with
# @eslint/js recommended, .prettierrc.json {} (prettier defaults); 20 files of 50-100 lines;
# js/node_modules -> the checkers installed by
# scripts/install-checkers). The patch makes 2 edits in each of the 40 files. Two copies:
#   clean  every file passes every checker, before and after the patch
#   dirty  every file also has one pre-existing finding the patch does not touch (an unused import
#          `sys` in Python, F401; an unused constant in JavaScript, no-unused-vars), so the gate
#          needs the baseline (the checker on the original content) of all 40 files; it is cached in
#          .git/patchgate/cache/baseline/
#
# What is timed (hyperfine -N; every command is `sh -c 'cd DIR && exec …'`, DIR = the repository or
# its py/ or js/ project; "CPU ms" in the table = user + system time of the command and its children):
#   (a) patchgate apply p.yaml --dry-run --format json          (dry run: the tree stays pristine,
#       all checks still run; default -j = one job per core) and the same with -j 1;
#       on dirty: "cold" = the cache removed before every run (--prepare 'rm -rf .git/patchgate/cache'),
#                 "warm" = the cache left from the previous run
#   (b) by hand, the four checkers once over the 40 files, one after the other, one shell:
#       sh -c 'cd py && ruff format --check F…; ruff check F…; cd ../js && prettier --check F…; eslint F…'
#       (hyperfine -i: on dirty, ruff check and eslint exit 1)
#   (c) each of the four alone (sh -c 'cd py && ruff format --check F…', …); the slowest median is (c)
#   what-ifs, for the breakdown (clean copy): patchgate --checks eslint (one node bridge alone);
#       --checks prettier,eslint (both bridges, none of the 40 per-file ruff processes); and
#       sh -c 'patchgate … --checks prettier,eslint & cd py && ruff format --check --no-cache F…;
#              ruff check --no-cache F…; wait' (an estimate of patchgate with ruff run once per
#       project instead of once per file); and --checks ruff-format,ruff,prettier,eslint (the four
#       tools without the built-in syntax and references checkers: the difference is what the
#       built-ins cost)
#   then one run of each patchgate variant under strace: the processes it starts, and when.
# ruff keeps its own cache (py/.ruff_cache) between the hand runs, as it would for a user.
#
# Environment knobs: RUNS (default 10 per command), ROUNDS (default 10: every command runs RUNS/ROUNDS
# times per round, the commands in turn, so a change of background load hits all of them alike; one
# warm-up run per command in the first round only),
# BENCH_OUT=DIR keeps the raw hyperfine JSON and the tables in DIR,
# PATCHGATE=/path measures that binary instead of building this checkout (bench/lib.sh),
# PATCHGATE_BASE=/path times a second binary (e.g. an older commit's release build) side by side:
#   its (a) variants ("base: …") run in the same rounds, on copies of the same two repositories
#   (their own baseline caches), and the summary gives each variant's ratio to its base.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${RUNS:-10}
ROUNDS=${ROUNDS:-10}
PER_ROUND=$(( (RUNS + ROUNDS - 1) / ROUNDS ))

log() { printf '\n== [%3d s] %s\n' "$SECONDS" "$*"; }

bench_tools node

log "checkers (scripts/install-checkers)"
TOOLS_PATH=$("$ROOT/scripts/install-checkers")
export PATH="$TOOLS_PATH:$PATH"
NODE_MODULES="$ROOT/.tools/node/node_modules"
for tool in ruff prettier eslint; do
    command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool not found after install-checkers" >&2; exit 1; }
done

bench_build
rm -f "$OUT"/*.round*.json "$OUT/figures.part"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid

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
    [ -z "$PG_BASE" ] || echo "base:        $("$PG_BASE" --version 2>/dev/null || echo '?') at $PG_BASE_DESC"
    echo "checkers:    ruff $(ruff --version | cut -d' ' -f2), prettier $(prettier --version), eslint $(eslint --version | tr -d v), node $(node --version | tr -d v)"
    echo "hyperfine:   $(hyperfine --version)"
} | tee "$OUT/machine.txt"

# ---------------------------------------------------------------- projects
log "generating the projects (40 files, clean and dirty copies) and the patch"
python3 - "$WORK" <<'EOF'
import json, os, random, sys

work = sys.argv[1]
N = 20
VERBS = ["load", "parse", "merge", "scan", "split", "count", "render", "check"]


def py_file(i, dirty, rng):
    out = [f'"""Module {i}: generated for the patchgate checks benchmark."""', "", "import os"]
    if dirty:
        out.append("import sys")
    out += ["", f"LIMIT_{i} = {i + 10}", f'LABEL_{i} = "module {i}"', ""]
    for k, verb in enumerate(rng.sample(VERBS, rng.randint(3, 5))):
        n = rng.randint(2, 9)
        out += [
            "",
            f"def {verb}_{i}_{k}(path, limit=None):",
            f'    """{verb.capitalize()} the first lines of path."""',
            "    if limit is None:",
            f"        limit = LIMIT_{i}",
            "    result = []",
            '    with open(os.path.join("data", path)) as handle:',
            "        for number, line in enumerate(handle):",
            "            if number >= limit:",
            "                break",
            f"            if number % {n} == 0:",
            "                result.append(line.rstrip())",
            "    if not result:",
            f'        raise ValueError("{verb} {i}.{k}: empty")',
            "    return result",
            "",
        ]
    return "\n".join(out).rstrip("\n") + "\n"


def js_file(i, dirty, rng):
    out = [f"// Module {i}: generated for the patchgate checks benchmark.", ""]
    if dirty:
        out += [f"const unusedValue{i} = {i};", ""]
    out += [f"export const LIMIT_{i} = {i + 10};", f'export const LABEL_{i} = "module {i}";', ""]
    for k, verb in enumerate(rng.sample(VERBS, rng.randint(3, 5))):
        n = rng.randint(2, 9)
        out += [
            f"export function {verb}{i}x{k}(items, limit = LIMIT_{i}) {{",
            "  const result = [];",
            "  for (const [index, item] of items.entries()) {",
            "    if (index >= limit) {",
            "      break;",
            "    }",
            f"    if (index % {n} === 0) {{",
            "      result.push(String(item).trim());",
            "    }",
            "  }",
            "  if (result.length === 0) {",
            f'    throw new Error("{verb} {i}.{k}: empty");',
            "  }",
            "  return result;",
            "}",
            "",
        ]
    return "\n".join(out).rstrip("\n") + "\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


edits = []
for variant in ("clean", "dirty"):
    rng = random.Random(7)
    repo = os.path.join(work, variant)
    write(os.path.join(repo, ".gitignore"), "node_modules\n.ruff_cache\n")
    write(os.path.join(repo, "py", "pyproject.toml"),
          '[project]\nname = "bench-py"\nversion = "0.1.0"\n\n[tool.ruff.lint]\nselect = ["E", "F"]\n\n[tool.ruff.format]\n')
    write(os.path.join(repo, "js", "package.json"),
          json.dumps({"name": "bench-js", "version": "0.1.0", "private": True, "type": "module"}, indent=2) + "\n")
    write(os.path.join(repo, "js", "eslint.config.js"),
          'import js from "@eslint/js";\n\nexport default [js.configs.recommended];\n')
    # patchgate runs a project's own tools only: the configuration says prettier is used.
    write(os.path.join(repo, "js", ".prettierrc.json"), "{}\n")
    for i in range(N):
        write(os.path.join(repo, "py", "pkg", f"mod_{i:02d}.py"), py_file(i, variant == "dirty", rng))
        write(os.path.join(repo, "js", "src", f"mod_{i:02d}.js"), js_file(i, variant == "dirty", rng))
        if variant == "clean":
            edits += [
                {"file_path": f"py/pkg/mod_{i:02d}.py", "edits": [
                    {"old_string": f"LIMIT_{i} = {i + 10}\n", "new_string": f"LIMIT_{i} = {i + 11}\n"},
                    {"old_string": f'LABEL_{i} = "module {i}"', "new_string": f'LABEL_{i} = "module {i} (edited)"'},
                ]},
                {"file_path": f"js/src/mod_{i:02d}.js", "edits": [
                    {"old_string": f"LIMIT_{i} = {i + 10};", "new_string": f"LIMIT_{i} = {i + 11};"},
                    {"old_string": f'LABEL_{i} = "module {i}";', "new_string": f'LABEL_{i} = "module {i} (edited)";'},
                ]},
            ]
# JSON is valid YAML; patchgate reads either.
with open(os.path.join(work, "p.yaml"), "w") as f:
    json.dump({"message": "bench: 40 files", "edits": edits}, f, indent=1)
with open(os.path.join(work, "py.files"), "w") as f:
    f.write(" ".join(f"pkg/mod_{i:02d}.py" for i in range(N)) + "\n")
with open(os.path.join(work, "js.files"), "w") as f:
    f.write(" ".join(f"src/mod_{i:02d}.js" for i in range(N)) + "\n")
EOF
PYF=$(cat "$WORK/py.files")
JSF=$(cat "$WORK/js.files")
for v in clean dirty; do
    R="$WORK/$v"
    ln -s "$NODE_MODULES" "$R/js/node_modules"
    # Normalise with the formatters once (not timed), so the files are formatter-clean.
    (cd "$R/py" && ruff format -q $PYF)
    (cd "$R/js" && prettier --log-level warn --write $JSF)
    (cd "$R" && git init -q -b main && git add -A && git commit -q -m init)
    # The base binary gets its own copies: its baseline cache must not warm the current one's.
    [ -z "$PG_BASE" ] || cp -a "$R" "$WORK/base_$v"
done

# The checkers by hand, on a tree: exit status of each (0 = clean), and counts of findings.
hand_status() { # DIR -> "format:N lint:N prettier:N eslint:N" (exit codes)
    local s1 s2 s3 s4
    (cd "$1/py" && ruff format --check -q $PYF >/dev/null 2>&1) && s1=0 || s1=$?
    (cd "$1/py" && ruff check -q $PYF >/dev/null 2>&1) && s2=0 || s2=$?
    (cd "$1/js" && prettier --check $JSF >/dev/null 2>&1) && s3=0 || s3=$?
    (cd "$1/js" && eslint $JSF >/dev/null 2>&1) && s4=0 || s4=$?
    echo "ruff-format:$s1 ruff:$s2 prettier:$s3 eslint:$s4"
}
count_findings() { # DIR -> "ruff N, eslint N"
    local r e
    r=$(cd "$1/py" && ruff check --output-format concise $PYF 2>/dev/null | grep -c ': [EF][0-9]' || true)
    e=$(cd "$1/js" && eslint --format json $JSF 2>/dev/null | python3 -c 'import json,sys; print(sum(len(f["messages"]) for f in json.load(sys.stdin)))')
    echo "ruff $r findings, eslint $e findings"
}

log "verifying the projects: before and after the patch, by hand and through patchgate"
for v in clean dirty; do
    R="$WORK/$v"
    after="$WORK/after_$v"
    cp -a "$R" "$after"
    (cd "$after" && "$PG" apply "$WORK/p.yaml" --checks none --format json >/dev/null)
    before_s=$(hand_status "$R"); after_s=$(hand_status "$after")
    before_f=$(count_findings "$R"); after_f=$(count_findings "$after")
    echo "$v before: $before_s; $before_f"
    echo "$v after:  $after_s; $after_f"
    [ "$(git -C "$after" diff --name-only | wc -l)" -eq 40 ] || { echo "error: the patch did not change 40 files" >&2; exit 1; }
    if [ "$v" = clean ]; then
        want="ruff-format:0 ruff:0 prettier:0 eslint:0"
        [ "$before_s" = "$want" ] && [ "$after_s" = "$want" ] || { echo "error: clean project not clean" >&2; exit 1; }
    else
        want="ruff 20 findings, eslint 20 findings"
        [ "$before_f" = "$want" ] && [ "$after_f" = "$want" ] || { echo "error: dirty project: expected one finding per file" >&2; exit 1; }
        [ "${before_s% *}" = "ruff-format:0 ruff:1 prettier:0" ] || { echo "error: dirty project: formatters not clean" >&2; exit 1; }
    fi
    rm -rf "$after"
    # Through patchgate (dry run, checks on): must pass the gate, with every checker having run.
    for bin in "$PG" $PG_BASE; do
    name=$v; D=$R
    [ "$bin" = "$PG" ] || { name="base $v"; D="$WORK/base_$v"; }
    rm -rf "$D/.git/patchgate/cache"
    set +e
    (cd "$D" && "$bin" apply "$WORK/p.yaml" --dry-run --format json >"$OUT/report.$v.json")
    rc=$?
    set -e
    python3 - "$OUT/report.$v.json" "$rc" "$name" <<'EOF'
import json, sys
from collections import Counter
r = json.load(open(sys.argv[1]))
rc, v = int(sys.argv[2]), sys.argv[3]
checks = r.get("checks") or {}
reports = checks.get("reports") if isinstance(checks, dict) else checks
reports = reports or []
by = Counter((c["checker"], c["status"]) for c in reports)
findings = sum(len(c.get("findings") or []) for c in reports)
print(f"{v}: patchgate --dry-run exit {rc}, status {r['status']}; checker reports: "
      + ", ".join(f"{k[0]} {k[1]} x{n}" for k, n in sorted(by.items()))
      + f"; findings reported {findings} (all pre-existing: {all(not f.get('new') for c in reports for f in c.get('findings') or [])})")
ok = rc == 0 and all(by[(c, "pass")] == 20 for c in ("ruff-format", "ruff", "prettier", "eslint"))
if not ok:
    sys.exit(f"error: {v}: expected exit 0 and 20 passing reports per checker")
EOF
    done
done

# The what-if runs (below) must do what they say: exit 0, and only the named checkers ran.
for only in eslint prettier,eslint ruff-format,ruff,prettier,eslint; do
    (cd "$WORK/clean" && "$PG" apply "$WORK/p.yaml" --dry-run --format json --checks "$only" >"$WORK/only.json") \
        || { echo "error: patchgate --checks $only failed" >&2; exit 1; }
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); got=sorted({c["checker"] for c in r["checks"] if c["status"]=="pass"}); want=sorted(sys.argv[2].split(",")); assert got==want and len(r["checks"])==20*len(want), (got, want)' \
        "$WORK/only.json" "$only"
done
echo "what-if runs checked: --checks eslint, prettier,eslint and ruff-format,ruff,prettier,eslint pass, with only those checkers"

# ---------------------------------------------------------------- timing
CMDS=()
add() { CMDS+=(--prepare "$1" -n "$2" "$3"); }
for v in clean dirty; do
    R="$WORK/$v"
    if [ "$v" = clean ]; then
        add "true" "clean: patchgate" "sh -c 'cd $R && exec $PG apply $WORK/p.yaml --dry-run --format json'"
        add "true" "clean: patchgate -j 1" "sh -c 'cd $R && exec $PG apply $WORK/p.yaml --dry-run --format json -j 1'"
        # What-ifs (breakdown): one node bridge alone; both bridges without the 40 ruff processes;
        # both bridges alongside ONE ruff format and ONE ruff check process over the 20 files (no
        # ruff cache, as patchgate has none): an estimate of a run with ruff batched per project.
        add "true" "clean: what-if: patchgate --checks eslint" "sh -c 'cd $R && exec $PG apply $WORK/p.yaml --dry-run --format json --checks eslint'"
        add "true" "clean: what-if: patchgate --checks prettier,eslint" "sh -c 'cd $R && exec $PG apply $WORK/p.yaml --dry-run --format json --checks prettier,eslint'"
        add "true" "clean: what-if: --checks prettier,eslint || ruff x2" "sh -c 'cd $R && $PG apply $WORK/p.yaml --dry-run --format json --checks prettier,eslint >/dev/null & cd $R/py && ruff format --check -q --no-cache $PYF; ruff check -q --no-cache $PYF; wait'"
        # The four tools alone: without the built-in syntax and references checkers.
        add "true" "clean: what-if: patchgate --checks <the four tools>" "sh -c 'cd $R && exec $PG apply $WORK/p.yaml --dry-run --format json --checks ruff-format,ruff,prettier,eslint'"
        if [ -n "$PG_BASE" ]; then
            B="$WORK/base_clean"
            add "true" "clean: base: patchgate" "sh -c 'cd $B && exec $PG_BASE apply $WORK/p.yaml --dry-run --format json'"
            add "true" "clean: base: patchgate -j 1" "sh -c 'cd $B && exec $PG_BASE apply $WORK/p.yaml --dry-run --format json -j 1'"
        fi
    else
        add "rm -rf $R/.git/patchgate/cache" "dirty: patchgate, cold cache" "sh -c 'cd $R && exec $PG apply $WORK/p.yaml --dry-run --format json'"
        add "true" "dirty: patchgate, warm cache" "sh -c 'cd $R && exec $PG apply $WORK/p.yaml --dry-run --format json'"
        add "rm -rf $R/.git/patchgate/cache" "dirty: patchgate -j 1, cold cache" "sh -c 'cd $R && exec $PG apply $WORK/p.yaml --dry-run --format json -j 1'"
        if [ -n "$PG_BASE" ]; then
            B="$WORK/base_dirty"
            add "rm -rf $B/.git/patchgate/cache" "dirty: base: patchgate, cold cache" "sh -c 'cd $B && exec $PG_BASE apply $WORK/p.yaml --dry-run --format json'"
            add "true" "dirty: base: patchgate, warm cache" "sh -c 'cd $B && exec $PG_BASE apply $WORK/p.yaml --dry-run --format json'"
            add "rm -rf $B/.git/patchgate/cache" "dirty: base: patchgate -j 1, cold cache" "sh -c 'cd $B && exec $PG_BASE apply $WORK/p.yaml --dry-run --format json -j 1'"
        fi
    fi
    add "true" "$v: (b) all four by hand" "sh -c 'cd $R/py && ruff format --check -q $PYF; ruff check -q $PYF; cd ../js && prettier --check $JSF; eslint $JSF'"
    add "true" "$v: (c) ruff format --check" "sh -c 'cd $R/py && exec ruff format --check -q $PYF'"
    add "true" "$v: (c) ruff check" "sh -c 'cd $R/py && exec ruff check -q $PYF'"
    add "true" "$v: (c) prettier --check" "sh -c 'cd $R/js && exec prettier --check $JSF'"
    add "true" "$v: (c) eslint" "sh -c 'cd $R/js && exec eslint $JSF'"
done
log "timing: $(( ${#CMDS[@]} / 5 )) commands, $ROUNDS rounds of $PER_ROUND run(s) each (+1 warm-up in the first round)"
for r in $(seq "$ROUNDS"); do
    w=0; [ "$r" -eq 1 ] && w=1
    hyperfine -N -i --style none --warmup "$w" --runs "$PER_ROUND" --export-json "$OUT/checks.round$r.json" \
        "${CMDS[@]}" >"$OUT/checks.round$r.log" 2>&1 || { cat "$OUT/checks.round$r.log"; exit 1; }
    echo "round $r/$ROUNDS done at $SECONDS s"
done

# ---------------------------------------------------------------- where the time goes
# One run of each patchgate variant under strace (execve, openat and exits; seccomp-filtered): which
# processes it starts, and when each starts and ends relative to patchgate's start. A node process is
# named by the package it loads (node_modules/prettier or node_modules/eslint). strace slows the run
# down (node opens ~1,000 files), so the spans matter here, not the totals.
if command -v strace >/dev/null 2>&1; then
    log "where the time goes: processes started by one patchgate run (strace -f -e trace=execve,openat)"
    trace() { # NAME DIR PREP ARGS...
        local name=$1 dir=$2 prep=$3; shift 3
        sh -c "$prep"
        (cd "$dir" && strace -f --seccomp-bpf -ttt -q -e trace=execve,openat -o "$OUT/strace.$name.txt" \
            "$PG" apply "$WORK/p.yaml" --dry-run --format json "$@" >"$OUT/strace.$name.json" || true)
    }
    trace clean "$WORK/clean" true
    trace clean-j1 "$WORK/clean" true -j 1
    trace dirty-cold "$WORK/dirty" "rm -rf $WORK/dirty/.git/patchgate/cache"
    trace dirty-warm "$WORK/dirty" true
    python3 - "$OUT" <<'EOF' | tee "$OUT/timeline.txt"
import os, re, sys
out = sys.argv[1]
for name in ("clean", "clean-j1", "dirty-cold", "dirty-warm"):
    start = end = None
    procs = {}  # pid -> {"t0": first execve, "prog": last execve's program, "tool": node package, "t1": exit}
    for line in open(os.path.join(out, f"strace.{name}.txt")):
        m = re.match(r"(\d+)\s+(\d+\.\d+)\s+(.*)", line)
        if not m:
            continue
        pid, t, rest = int(m.group(1)), float(m.group(2)), m.group(3)
        if start is None:
            start, main = t, pid
        if pid == main:
            if rest.startswith("+++ exited"):
                end = t
            continue
        if rest.startswith("execve("):
            p = procs.setdefault(pid, {"t0": t, "tool": None, "t1": None})
            p["prog"] = os.path.basename(re.match(r'execve\("([^"]+)"', rest).group(1))
            p["args"] = rest
        elif rest.startswith("openat(") and pid in procs and procs[pid]["tool"] is None:
            for tool in ("eslint", "prettier"):
                if f"/node_modules/{tool}/" in rest:
                    procs[pid]["tool"] = tool
        elif rest.startswith("+++ exited") and pid in procs:
            procs[pid]["t1"] = t
    rows = {}
    for p in procs.values():
        if p["t1"] is None:
            continue
        if p["prog"] == "ruff":
            kind = "ruff format" if '"format"' in p["args"] else "ruff check"
        elif p["prog"] == "node":
            kind = f"node ({p['tool'] or '?'})"
        else:
            kind = p["prog"]
        rows.setdefault(kind, []).append(((p["t0"] - start) * 1000, (p["t1"] - start) * 1000))
    print(f"-- {name}: whole run {(end - start) * 1000:.0f} ms under strace; processes started:")
    for kind, spans in sorted(rows.items(), key=lambda kv: min(a for a, _ in kv[1])):
        if kind.startswith("node"):
            each = ", ".join(f"{a:.0f}-{b:.0f} ms" for a, b in sorted(spans))
            print(f"   {kind:<17} x{len(spans):<3} {each}")
        else:
            print(f"   {kind:<17} x{len(spans):<3} first start {min(a for a, _ in spans):5.0f} ms, last end "
                  f"{max(b for _, b in spans):5.0f} ms, summed wall {sum(b - a for a, b in spans):5.0f} ms")
EOF
fi

# ---------------------------------------------------------------- results
log "results"
python3 - "$OUT" <<'EOF' | tee "$OUT/summary.txt"
import glob, json, os, statistics, sys
out = sys.argv[1]
times, cpu = {}, {}
for p in sorted(glob.glob(os.path.join(out, "checks.round*.json"))):
    for r in json.load(open(p))["results"]:
        times.setdefault(r["command"], []).extend(x * 1000 for x in r["times"])
        cpu.setdefault(r["command"], []).append((r["user"] + r["system"]) * 1000)  # mean of the round
med = {k: statistics.median(v) for k, v in times.items()}
ncpu = os.cpu_count()
w = max(len(k) for k in times)
# CPU = user + system time of the command and all its children (hyperfine): with 2 cores, no
# schedule can make a run take less wall time than about CPU / 2.
print(f"{'command':<{w}}  {'runs':>4}  {'median ms':>9}  {'min ms':>7}  {'max ms':>7}  {'CPU ms':>7}")
print("-" * (w + 45))
for k, v in times.items():
    print(f"{k:<{w}}  {len(v):>4}  {med[k]:>9.0f}  {min(v):>7.0f}  {max(v):>7.0f}  {statistics.median(cpu[k]):>7.0f}")
met = lambda ok: "met" if ok else "NOT met"
for v in ("clean", "dirty"):
    b = med[f"{v}: (b) all four by hand"]
    c_name, c = max(((k, m) for k, m in med.items() if k.startswith(f"{v}: (c)")), key=lambda km: km[1])
    print()
    print(f"{v}: (b) = {b:.0f} ms; (c) = slowest single checker = {c_name.split('(c) ')[1]}, {c:.0f} ms")
    for k, m in med.items():
        if k.startswith(f"{v}: patchgate"):
            print(f"  {k:<36} {m:6.0f} ms  = {m / b:.2f}x (b) (target <= 0.6: {met(m / b <= 0.6)}),"
                  f" {m / c:.2f}x (c) (target <= 1.3: {met(m / c <= 1.3)});"
                  f" CPU {statistics.median(cpu[k]):.0f} ms, so >= {statistics.median(cpu[k]) / ncpu:.0f} ms on {ncpu} cores")
    for k, m in med.items():
        if k.startswith(f"{v}: base: "):
            now = med.get(f"{v}: " + k[len(f"{v}: base: "):])
            vs = f"; this build {now:.0f} ms = {now / m:.2f}x the base" if now else ""
            print(f"  {k:<36} {m:6.0f} ms  = {m / b:.2f}x (b), {m / c:.2f}x (c){vs}")
    for k, m in med.items():
        if k.startswith(f"{v}: what-if"):
            print(f"  {k[len(v) + 2:]:<50} {m:6.0f} ms  = {m / b:.2f}x (b), {m / c:.2f}x (c)  (not patchgate as shipped)")
    with open(os.path.join(out, "figures.part"), "a") as f:
        for k, m in med.items():
            if k.startswith(f"{v}: patchgate"):
                f.write(f"e\tchecks, {k}\t{m:.0f}\tthe four checkers by hand, in sequence\t{b:.0f}\tms\t0.6\n")
                f.write(f"e\tchecks, {k}\t{m:.0f}\tthe slowest alone ({c_name.split('(c) ')[1]})\t{c:.0f}\tms\t1.3\n")
EOF
figures_from "$OUT/figures.part"
echo
echo "load avg at end: $(cut -d' ' -f1-3 /proc/loadavg); total $SECONDS s before clean-up" | tee -a "$OUT/machine.txt"
if [ -n "${BENCH_OUT:-}" ]; then echo "raw results kept in $BENCH_OUT"; fi
