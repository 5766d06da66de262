#!/usr/bin/env bash
# patchgate references benchmark: the built-in dangling-reference check on a repository of about
# 100,000 lines, for a 5-file patch, side by side with `git grep -w NAME` (the by-hand way to find
# the call sites of a name) and with the same patch under `--checks none` (the floor: parse, plan
# and report, no check; the difference is the check's own cost).
#
#   bench/references.sh
#
# Repositories (generated, one per language, committed): py/ (a package `app` of 10 subpackages x
# 30 modules) and js/ (src/ of 10 folders x 30 ES modules); about 330 lines per file, 100,000 lines
# per repository. Each module defines 14 functions of 15-25 lines (names like
# `parse_invoice_totals`, unique across the repository) and a small class; it imports 6-8 functions
# from other modules and every function calls two of them and one of its own module's. Two names
# are used across modules on purpose:
#   wide    one function (py `compute_ledger_balance`, js `computeLedgerBalance`) imported and
#           called by 40 other modules
#   narrow  one function (py `format_audit_entry`, js `formatAuditEntry`) used by 4 other modules
# Patches (5 files each, JSON, `replace_all` of the whole name):
#   complete  renames narrow in its module and its 4 users: every use updated, the check passes
#   broken    renames wide in its module and 4 of its 40 users: 36 modules still use the old name,
#             the check refuses (exit 1, one finding per use)
#   bodies    5 modules, a constant in one function body each: no definition removed (the fast
#             path, what most patches are)
#
# What is timed (hyperfine -N, no shell; R = the repository):
#   patchgate apply P.json -C R --dry-run --format json --checks references   (each patch)
#   patchgate apply P.json -C R --dry-run --format json --checks none         (each patch: floor)
#   git -C R grep -w NAME                                                     (wide and narrow)
# Before timing, each patchgate verdict is checked (exit status, status, finding count against the
# uses the generator wrote) and so is git grep's line count.
#
# Environment knobs: RUNS (default 30 per command), ROUNDS (default 5: every command runs
# RUNS/ROUNDS times per round, the commands in turn, so a change of background load hits all of them
# alike; one warm-up run per command in the first round), MODULES (default 30 per folder),
# BENCH_OUT=DIR keeps the raw hyperfine JSON and the tables in DIR, PATCHGATE=/path measures that
# binary instead of building this checkout (bench/lib.sh).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${RUNS:-30}
ROUNDS=${ROUNDS:-5}
PER_ROUND=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
MODULES=${MODULES:-30}

log() { printf '\n== [%3d s] %s\n' "$SECONDS" "$*"; }

bench_tools
bench_build
rm -f "$OUT"/refs.round*.json "$OUT/figures.part"
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
    echo "temp dir fs: $(df -T "$WORK" | awk 'NR==2 {print $2}') on $dev ($WORK)"
    echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) (at start)"
    echo "patchgate:   $("$PG" --version 2>/dev/null || echo '?') at $PG_DESC"
    echo "git:         $(git --version)"
    echo "hyperfine:   $(hyperfine --version)"
} | tee "$OUT/machine.txt"

# ---------------------------------------------------------------- repositories
log "generating two repositories (Python, JavaScript) and three 5-file patches each"
python3 - "$WORK" "$MODULES" <<'EOF'
import json, os, random, sys

work, per_folder = sys.argv[1], int(sys.argv[2])
FOLDERS = ["core", "billing", "accounts", "reports", "storage", "api", "jobs", "auth", "search", "notify"]
VERBS = ["load", "parse", "merge", "scan", "split", "count", "render", "check", "build", "apply",
         "fetch", "store", "update", "resolve", "collect", "filter", "export", "import", "sync", "validate"]
NOUNS = ["invoice", "customer", "ledger", "order", "payment", "account", "report", "session", "token",
         "record", "profile", "batch", "schedule", "entry", "message", "refund", "discount", "address",
         "product", "shipment", "receipt", "balance", "quota", "audit", "event"]
QUALS = ["totals", "rows", "items", "fields", "summary", "state", "history", "index", "limits",
         "window", "keys", "status"]
FUNCS = 14
WIDE_USERS, NARROW_USERS = 40, 4


def snake(parts):
    return "_".join(parts)


def camel(parts):
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def generate(lang):
    rng = random.Random(11)
    combos = [(v, n, q) for v in VERBS for n in NOUNS for q in QUALS]
    rng.shuffle(combos)
    # The two names used across modules on purpose are kept out of the random pool.
    special = {"wide": ("compute", "ledger", "balance"), "narrow": ("format", "audit", "entry")}
    name = snake if lang == "py" else camel
    mods = [(f, i) for f in FOLDERS for i in range(per_folder)]
    funcs = {}  # module index -> its function names
    pool = iter(combos)
    for m in range(len(mods)):
        funcs[m] = [name(next(pool)) for _ in range(FUNCS)]
    wide_home, narrow_home = 0, 1  # core/mod_00, core/mod_01
    wide, narrow = name(special["wide"]), name(special["narrow"])
    funcs[wide_home][0] = wide
    funcs[narrow_home][0] = narrow
    others = [m for m in range(len(mods)) if m not in (wide_home, narrow_home)]
    wide_users = sorted(rng.sample(others, WIDE_USERS))
    narrow_users = sorted(rng.sample([m for m in others if m not in wide_users], NARROW_USERS))

    def path(m):
        f, i = mods[m]
        return f"app/{f}/mod_{i:02d}.py" if lang == "py" else f"src/{f}/mod_{i:02d}.js"

    def module_ref(m):
        f, i = mods[m]
        return f"app.{f}.mod_{i:02d}"

    texts, uses = {}, {wide: {}, narrow: {}}
    for m in range(len(mods)):
        r = random.Random(1000 + m)
        # Imports: 6-8 functions (never the two special ones) from 3-4 other modules.
        imported = {}
        for src in r.sample([x for x in range(len(mods)) if x != m], r.randint(3, 4)):
            picks = [fn for fn in funcs[src] if fn not in (wide, narrow)]
            imported[src] = r.sample(picks, 2)
        specials = []
        if m in wide_users:
            imported.setdefault(wide_home, []).append(wide)
            specials.append(wide)
        if m in narrow_users:
            imported.setdefault(narrow_home, []).append(narrow)
            specials.append(narrow)
        callable_ = [fn for fns in imported.values() for fn in fns if fn not in (wide, narrow)]
        own = funcs[m]
        limit = f"DEFAULT_LIMIT_{m}"
        out = []
        if lang == "py":
            f, i = mods[m]
            out += [f'"""The {f} module {i}: generated for the patchgate references benchmark."""', "",
                    "import logging", ""]
            for src, fns in sorted(imported.items()):
                out.append(f"from {module_ref(src)} import {', '.join(sorted(fns))}")
            out += ["", f"LOG = logging.getLogger(__name__)", f"{limit} = {m % 17 + 10}", ""]
        else:
            f, i = mods[m]
            out += [f"// The {f} module {i}: generated for the patchgate references benchmark.", ""]
            for src, fns in sorted(imported.items()):
                rel = os.path.relpath(path(src), os.path.dirname(path(m)))
                rel = rel if rel.startswith(".") else "./" + rel
                out.append(f"import {{ {', '.join(sorted(fns))} }} from \"{rel}\";")
            out += ["", f"export const {limit} = {m % 17 + 10};", ""]
        # The special names are called in two functions each (and imported once above).
        special_at = {}
        for s in specials:
            for k in r.sample(range(1, FUNCS), 2):
                special_at.setdefault(k, []).append(s)
        for k, fn in enumerate(own):
            a, b = r.sample(callable_, 2)
            local = own[(k + 1) % FUNCS]
            n = r.randint(2, 9)
            extra = special_at.get(k, [])
            if lang == "py":
                out += ["", f"def {fn}(records, limit={limit}):",
                        f'    """{fn.replace("_", " ").capitalize()} for the given records."""',
                        "    total = 0", "    seen = set()",
                        "    for index, record in enumerate(records):",
                        "        if index >= limit:", "            break",
                        '        key = record.get("id")',
                        f"        if key in seen or index % {n} == 0:", "            continue",
                        "        seen.add(key)",
                        '        if record.get("skip"):', "            continue",
                        f"        value = {a}([record], limit)",
                        "        total += len(value) if value else 0"]
                for s in extra:
                    out.append(f"        total += len({s}([record], limit) or [])")
                out += ["    if not seen:",
                        f'        LOG.debug("{fn}: nothing seen")',
                        f"        return {local}([], limit)",
                        '    result = {"total": total, "count": len(seen)}',
                        f"    return {b}([result], limit)", ""]
            else:
                out += [f"export function {fn}(records, limit = {limit}) {{",
                        "  let total = 0;", "  const seen = new Set();",
                        "  for (const [index, record] of records.entries()) {",
                        "    if (index >= limit) {", "      break;", "    }",
                        "    const key = record.id;",
                        f"    if (seen.has(key) || index % {n} === 0) {{", "      continue;", "    }",
                        "    seen.add(key);",
                        f"    const value = {a}([record], limit);",
                        "    total += value ? value.length : 0;"]
                for s in extra:
                    out.append(f"    total += ({s}([record], limit) || []).length;")
                out += ["  }", "  if (seen.size === 0) {",
                        f'    console.debug("{fn}: nothing seen");',
                        f"    return {local}([], limit);", "  }",
                        "  const result = { total, count: seen.size };",
                        f"  return {b}([result], limit);", "}", ""]
        # A small class, so methods and classes are in the mix too.
        cls = "".join(p.capitalize() for p in own[0].replace("_", " ").split()) if lang == "py" else own[0][0].upper() + own[0][1:]
        cls += f"Cache{m}"
        if lang == "py":
            out += ["", f"class {cls}:", f'    """A cache in front of {own[0]}."""', "",
                    "    def __init__(self, limit=None):", f"        self.limit = limit or {limit}",
                    "        self.entries = {}", "",
                    f"    def lookup_entry_{m}(self, key, records):", "        if key not in self.entries:",
                    f"            self.entries[key] = {own[0]}(records, self.limit)",
                    "        return self.entries[key]", ""]
        else:
            out += [f"export class {cls} {{", "  constructor(limit) {", f"    this.limit = limit ?? {limit};",
                    "    this.entries = new Map();", "  }", "",
                    f"  lookupEntry{m}(key, records) {{", "    if (!this.entries.has(key)) {",
                    f"      this.entries.set(key, {own[0]}(records, this.limit));", "    }",
                    "    return this.entries.get(key);", "  }", "}", ""]
        text = "\n".join(out).rstrip("\n") + "\n"
        texts[path(m)] = text
        for s in specials:
            # Uses of the name as an identifier: the import and each call.
            uses[s][path(m)] = sum(line.count(s) for line in text.splitlines())
    root = os.path.join(work, lang)
    for p, t in texts.items():
        full = os.path.join(root, "repo", p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(t)
    if lang == "py":
        for f in FOLDERS:
            open(os.path.join(root, "repo", "app", f, "__init__.py"), "w").close()
        open(os.path.join(root, "repo", "app", "__init__.py"), "w").close()
    else:
        with open(os.path.join(root, "repo", "package.json"), "w") as fh:
            json.dump({"name": "bench-refs", "private": True, "type": "module"}, fh, indent=2)
            fh.write("\n")

    def rename_patch(old, new, files):
        return {"message": f"Rename {old} to {new}", "edits": [
            {"file_path": p, "edits": [{"old_string": old, "new_string": new, "replace_all": True}]}
            for p in files]}

    new_narrow = name(("render", "audit", "entry"))
    new_wide = name(("compute", "ledger", "total"))
    complete = [path(narrow_home)] + [path(m) for m in narrow_users]
    broken = [path(wide_home)] + [path(m) for m in wide_users[:4]]
    bodies = [path(m) for m in others[100:] if m not in wide_users and m not in narrow_users][:5]
    patches = {
        "complete": rename_patch(narrow, new_narrow, complete),
        "broken": rename_patch(wide, new_wide, broken),
        "bodies": {"message": "Tune limits", "edits": [
            {"file_path": p, "old_string": "index >= limit", "new_string": "index > limit",
             "replace_all": True} for p in bodies]},
    }
    for k, v in patches.items():
        assert len(v["edits"]) == 5, (k, len(v["edits"]))
        with open(os.path.join(root, f"{k}.json"), "w") as fh:
            json.dump(v, fh, indent=1)
    left = {p: n for p, n in uses[wide].items() if p not in broken}
    expect = {
        "wide": wide, "narrow": narrow,
        "broken_findings": sum(left.values()), "broken_files": len(left),
        "grep_wide": sum(uses[wide].values()) + texts[path(wide_home)].count(wide),
        "grep_narrow": sum(uses[narrow].values()) + texts[path(narrow_home)].count(narrow),
        "files": len(texts), "lines": sum(t.count("\n") for t in texts.values()),
        "bytes": sum(len(t) for t in texts.values()),
    }
    with open(os.path.join(root, "expect.json"), "w") as fh:
        json.dump(expect, fh)
    print(f"{lang}: {expect['files']} files, {expect['lines']} lines, {expect['bytes'] // 1024} KB; "
          f"wide {wide}: {len(uses[wide])} users, {expect['grep_wide']} occurrences; "
          f"narrow {narrow}: {len(uses[narrow])} users; broken leaves {expect['broken_findings']} "
          f"uses in {expect['broken_files']} files")


generate("py")
generate("js")
EOF
for lang in py js; do
    (cd "$WORK/$lang/repo" && git init -q -b main && git add -A && git commit -q -m init && git gc -q)
done

# ---------------------------------------------------------------- verdicts
log "checking each verdict once"
for lang in py js; do
    L="$WORK/$lang"
    for p in complete broken bodies; do
        for checks in references none; do
            set +e
            "$PG" apply "$L/$p.json" -C "$L/repo" --dry-run --format json --checks "$checks" >"$OUT/$lang.$p.$checks.json"
            rc=$?
            set -e
            python3 - "$OUT/$lang.$p.$checks.json" "$rc" "$L/expect.json" "$lang" "$p" "$checks" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rc, exp, lang, p, checks = int(sys.argv[2]), json.load(open(sys.argv[3])), sys.argv[4], sys.argv[5], sys.argv[6]
reports = [c for c in r.get("checks") or [] if c["checker"] == "references"]
findings = [f for c in reports for f in c.get("findings") or []]
files = {c["path"] for c in reports if c.get("findings")}
print(f"{lang} {p:<8} --checks {checks:<10}: exit {rc}, status {r['status']}, "
      f"{len(reports)} references reports, {len(findings)} findings in {len(files)} files")
if checks == "none" or p != "broken":
    ok = rc == 0 and r["status"] == "dry_run" and not findings
    ok = ok and (checks == "none") == (not reports) and all(c["status"] == "pass" for c in reports)
else:
    ok = (rc != 0 and r["status"] == "checks_failed" and len(findings) == exp["broken_findings"]
          and len(files) == exp["broken_files"]
          and all(f.get("rule") == "dangling-reference" and f.get("new", True) for f in findings))
if not ok:
    want = (f"exit 1, {exp['broken_findings']} findings in {exp['broken_files']} files"
            if p == "broken" and checks == "references" else "exit 0, no findings")
    sys.exit(f"error: {lang} {p} --checks {checks}: unexpected verdict (expected {want})")
EOF
        done
    done
    for which in wide narrow; do
        name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$L/expect.json" "$which")
        want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["grep_" + sys.argv[2]])' "$L/expect.json" "$which")
        got=$(git -C "$L/repo" grep -w -o "$name" | wc -l)
        echo "$lang git grep -w $name: $got occurrences in $(git -C "$L/repo" grep -w -l "$name" | wc -l) files"
        [ "$got" -eq "$want" ] || { echo "error: git grep found $got, expected $want" >&2; exit 1; }
    done
done

# ---------------------------------------------------------------- timing
CMDS=()
add() { CMDS+=(-n "$1" "$2"); }
for lang in py js; do
    L="$WORK/$lang"
    for p in complete broken bodies; do
        add "$lang: $p: --checks references" "$PG apply $L/$p.json -C $L/repo --dry-run --format json --checks references"
        add "$lang: $p: --checks none" "$PG apply $L/$p.json -C $L/repo --dry-run --format json --checks none"
    done
    for which in wide narrow; do
        name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$L/expect.json" "$which")
        add "$lang: git grep -w $which" "git -C $L/repo grep -w $name"
    done
done
log "timing: $(( ${#CMDS[@]} / 3 )) commands, $ROUNDS rounds of $PER_ROUND run(s) each (+1 warm-up in the first round)"
for r in $(seq "$ROUNDS"); do
    w=0; [ "$r" -eq 1 ] && w=1
    hyperfine -N -i --style none --warmup "$w" --runs "$PER_ROUND" --export-json "$OUT/refs.round$r.json" \
        "${CMDS[@]}" >"$OUT/refs.round$r.log" 2>&1 || { cat "$OUT/refs.round$r.log"; exit 1; }
    echo "round $r/$ROUNDS done at $SECONDS s (load avg $(cut -d' ' -f1 /proc/loadavg))"
done

# ---------------------------------------------------------------- results
log "results"
python3 - "$OUT" <<'EOF' | tee "$OUT/summary.txt"
import glob, json, os, statistics, sys
out = sys.argv[1]
times, cpu = {}, {}
for p in sorted(glob.glob(os.path.join(out, "refs.round*.json"))):
    for r in json.load(open(p))["results"]:
        times.setdefault(r["command"], []).extend(x * 1000 for x in r["times"])
        cpu.setdefault(r["command"], []).append((r["user"] + r["system"]) * 1000)  # mean of the round
med = {k: statistics.median(v) for k, v in times.items()}
mcpu = {k: statistics.median(v) for k, v in cpu.items()}
w = max(len(k) for k in times)
# CPU = user + system time of the process (median of the per-round means): on a busy machine the
# wall time of a single-threaded check varies with the load, its CPU time much less.
print(f"{'command':<{w}}  {'runs':>4}  {'median ms':>9}  {'min ms':>7}  {'max ms':>7}  {'CPU ms':>7}")
print("-" * (w + 45))
for k, v in times.items():
    print(f"{k:<{w}}  {len(v):>4}  {med[k]:>9.1f}  {min(v):>7.1f}  {max(v):>7.1f}  {mcpu[k]:>7.1f}")
print()
for lang in ("py", "js"):
    grep = med[f"{lang}: git grep -w wide"]
    for p in ("complete", "broken", "bodies"):
        ref, none = med[f"{lang}: {p}: --checks references"], med[f"{lang}: {p}: --checks none"]
        cost, ccost = ref - none, mcpu[f"{lang}: {p}: --checks references"] - mcpu[f"{lang}: {p}: --checks none"]
        print(f"{lang} {p:<8}: check's own cost {cost:6.1f} ms wall, {ccost:6.1f} ms CPU (target < 50 ms of CPU: "
              f"{'met' if ccost < 50 else 'NOT met'}); whole run {ref:6.1f} ms = {ref / grep:.1f}x git grep -w "
              f"({grep:.1f} ms)")
        with open(os.path.join(out, "figures.part"), "a") as f:
            # The check's own cost against the floor (the same run without the check) and against
            # the by-hand way of finding the uses.
            f.write(f"g\treferences {lang} {p}: the check's own CPU (target < 50 ms)\t{ccost:.1f}\t"
                    f"git grep -w wide, whole run\t{grep:.1f}\tms\t\n")
            f.write(f"g\treferences {lang} {p}: whole run\t{ref:.1f}\tthe same run, --checks none\t{none:.1f}\tms\t\n")
EOF
figures_from "$OUT/figures.part"
echo
echo "load avg at end: $(cut -d' ' -f1-3 /proc/loadavg); total $SECONDS s before clean-up" | tee -a "$OUT/machine.txt"
if [ -n "${BENCH_OUT:-}" ]; then echo "raw results kept in $BENCH_OUT"; fi
