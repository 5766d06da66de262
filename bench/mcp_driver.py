"""Times the first and the second `apply_patch` of a `patchgate mcp` session per language
(bench/mcp.sh runs it).

    python3 mcp_driver.py --pg PATCHGATE [--base PATCHGATE] --langs js,py,go,rust,rust-warned,go-warned,rust-ws
                          --rounds N --work DIR [--node-modules DIR] [--cli-langs js]

Each round builds, per language and per binary, a fresh repository of ten 30-function modules
(generated here, no third-party code):
- js: package.json (`"type": "module"`), eslint.config.js with @eslint/js recommended,
  .prettierrc.json, node_modules linked to --node-modules (eslint, prettier);
- py: pyproject.toml with `[tool.ruff.lint]` and `[tool.ruff.format]` (ruff, ruff format);
- go: go.mod of a module with no dependencies (gofmt, go vet);
- rust: a crate with no dependencies and its Cargo.lock (rustfmt, cargo clippy);
- rust-warned, go-warned: the rust crate and the go module with a file their linter (clippy,
  go vet) warns about before any patch, so each call also needs the original state's findings;
- rust-ws: a workspace of two such crates, `app` calling `core` (a path dependency); the first
  patch edits both crates (so both are checked cold), the second `app` alone;
and applies two clean one-edit patches (module 0, then module 1; each new variable's name with a
nonce, so no run meets content an earlier one cached) with the default checks
through ONE `patchgate mcp` session (raw JSON-RPC on its stdio; the time from sending
`tools/call` to its answer). For the languages in --cli-langs, a further identical repository
gets the two patches as two separate `patchgate apply` runs. The variants of a round run in an
order rotated by round. Prints one JSON object: every sample in seconds, and medians.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def js_files(path: Path, opts) -> None:
    (path / "package.json").write_text('{"name": "bench", "private": true, "type": "module"}\n')
    (path / "eslint.config.js").write_text(
        'import js from "@eslint/js";\n\nexport default [js.configs.recommended];\n'
    )
    (path / ".prettierrc.json").write_text("{}\n")
    (path / ".gitignore").write_text("node_modules\n")
    os.symlink(opts.node_modules, path / "node_modules")
    (path / "src").mkdir()
    for i in range(10):
        body = "".join(
            f"export function f{i}_{j}(a, b) {{\n  const s = a + b * {j};\n  return s - {i};\n}}\n\n"
            for j in range(30)
        )
        (path / "src" / f"m{i}.js").write_text(body)


def py_files(path: Path, opts) -> None:
    (path / "pyproject.toml").write_text(
        '[project]\nname = "bench"\nversion = "0.1.0"\n\n'
        '[tool.ruff]\nline-length = 100\n\n'
        '[tool.ruff.lint]\nselect = ["E", "F", "W"]\n\n'
        '[tool.ruff.format]\nquote-style = "double"\n'
    )
    (path / "bench").mkdir()
    (path / "bench" / "__init__.py").write_text("")
    for i in range(10):
        body = "\n\n".join(
            f"def f{i}_{j}(a, b):\n    s = a + b * {j + 2}\n    return s - {i + 1}\n"
            for j in range(30)
        )
        (path / "bench" / f"m{i}.py").write_text(body)


def go_files(path: Path, opts) -> None:
    (path / "go.mod").write_text("module example.com/bench\n\ngo 1.22\n")
    for i in range(10):
        body = "package bench\n\n" + "\n".join(
            f"func F{i}_{j}(a, b int) int {{\n\ts := a + b*{j + 2}\n\treturn s - {i + 1}\n}}\n"
            for j in range(30)
        )
        (path / f"m{i}.go").write_text(body)


def rust_files(path: Path, opts) -> None:
    (path / "Cargo.toml").write_text(
        '[package]\nname = "bench"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    )
    (path / ".gitignore").write_text("/target\n")
    (path / "src").mkdir()
    (path / "src" / "lib.rs").write_text("".join(f"pub mod m{i};\n" for i in range(10)))
    for i in range(10):
        body = "\n".join(
            f"pub fn f{i}_{j}(a: i64, b: i64) -> i64 {{\n    let s = a + b * {j + 2};\n"
            f"    s - {i + 1}\n}}\n"
            for j in range(30)
        )
        (path / "src" / f"m{i}.rs").write_text(body)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=path, check=True,
                   capture_output=True)


def rust_ws_files(path: Path, opts) -> None:
    """A workspace: `app` (ten modules) over a path dependency `core` (ten more)."""
    (path / "Cargo.toml").write_text('[workspace]\nmembers = ["app", "core"]\nresolver = "2"\n')
    (path / ".gitignore").write_text("/target\n")
    for name, deps in (("core", ""), ("app", 'core = { path = "../core" }\n')):
        (path / name / "src").mkdir(parents=True)
        (path / name / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{deps}"
        )
        (path / name / "src" / "lib.rs").write_text("".join(f"pub mod m{i};\n" for i in range(10)))
        for i in range(10):
            call = f"    core::m{i}::f{i}_{{j}}(s, b)\n" if name == "app" else f"    s - {i + 1}\n"
            body = "\n".join(
                f"pub fn f{i}_{j}(a: i64, b: i64) -> i64 {{\n    let s = a + b * {j + 2};\n"
                + call.format(j=j)
                + "}\n"
                for j in range(30)
            )
            (path / name / "src" / f"m{i}.rs").write_text(body)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=path, check=True,
                   capture_output=True)


def rust_warned_files(path: Path, opts) -> None:
    """The crate of `rust` with a module clippy warns about before any patch (`&Vec` arguments):
    every patched run has findings, so the original state's run (the baseline) is needed."""
    rust_files(path, opts)
    (path / "src" / "warned.rs").write_text("".join(
        f"pub fn total{k}(xs: &Vec<i64>) -> i64 {{\n    xs.iter().sum()\n}}\n\n" for k in range(3)
    ).rstrip("\n") + "\n")
    with open(path / "src" / "lib.rs", "a") as f:
        f.write("pub mod warned;\n")


def go_warned_files(path: Path, opts) -> None:
    """The module of `go` with a file go vet warns about before any patch (a `Printf` verb that
    does not match its argument)."""
    go_files(path, opts)
    (path / "warned.go").write_text(
        'package bench\n\nimport "fmt"\n\nfunc Warned() {\n\tfmt.Printf("%d\\n", "x")\n}\n'
    )


LANGS = {
    # language: (files, patched file of module i, old text, new text)
    "js": (js_files, "src/m{i}.js", "  const s = a + b * 3;\n  return s - {i};",
           "  const sum = a + b * 3;\n  return sum - {i};"),
    "py": (py_files, "bench/m{i}.py", "    s = a + b * 5\n    return s - {i1}",
           "    total = a + b * 5\n    return total - {i1}"),
    "go": (go_files, "m{i}.go", "\ts := a + b*5\n\treturn s - {i1}",
           "\tsum := a + b*5\n\treturn sum - {i1}"),
    "rust": (rust_files, "src/m{i}.rs", "    let s = a + b * 5;\n    s - {i1}",
             "    let sum = a + b * 5;\n    sum - {i1}"),
    "rust-warned": (rust_warned_files, "src/m{i}.rs", "    let s = a + b * 5;\n    s - {i1}",
                    "    let sum = a + b * 5;\n    sum - {i1}"),
    "go-warned": (go_warned_files, "m{i}.go", "\ts := a + b*5\n\treturn s - {i1}",
                  "\tsum := a + b*5\n\treturn sum - {i1}"),
    "rust-ws": (rust_ws_files, "{crate}/src/m{i}.rs", "    let s = a + b * 5;\n    {tail}",
                "    let sum = a + b * 5;\n    {tail_new}"),
}


def make_repo(path: Path, lang: str, opts) -> None:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "bench")
    git(path, "config", "user.email", "bench@example.invalid")
    LANGS[lang][0](path, opts)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")


def edit(lang: str, i: int, nonce: str, crate: str = "") -> dict:
    _, file, old, new = LANGS[lang]
    tail = f"s - {i + 1}" if crate == "core" else f"core::m{i}::f{i}_3(s, b)"
    fields = {"i": i, "i1": i + 1, "crate": crate, "tail": tail,
              "tail_new": tail.replace("s", "sum", 1)}
    # The new variable's name carries a nonce: content no earlier run has seen, or a tool's
    # cache keyed by content outside the fresh repository (go's build cache, which holds vet's
    # results) would answer from an earlier round.
    new_text = new.format(**fields)
    for name in ("sum", "total"):
        new_text = new_text.replace(name, f"{name}_{nonce}")
    return {
        "file_path": file.format(**fields),
        "old_string": old.format(**fields),
        "new_string": new_text,
    }


def patch(lang: str, i: int) -> dict:
    nonce = "n" + os.urandom(4).hex()
    if lang == "rust-ws":
        # First both crates (module 0 of each), then `app` alone (module 1).
        crates = ["core", "app"] if i == 0 else ["app"]
        return {"edits": [edit(lang, i, nonce, c) for c in crates]}
    return {"edits": [edit(lang, i, nonce)]}


class Session:
    def __init__(self, pg: str, repo: Path):
        # BENCH_MCP_STDERR=FILE keeps the servers' stderr (PATCHGATE_TIMINGS=1 puts phases there).
        log = os.environ.get("BENCH_MCP_STDERR")
        stderr = open(log, "a") if log else subprocess.DEVNULL
        self.p = subprocess.Popen([pg, "mcp", "-C", str(repo)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=stderr, text=True)
        self.next = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.next:
                return msg

    def apply(self, p) -> float:
        start = time.perf_counter()
        msg = self.request("tools/call", {"name": "apply_patch", "arguments": {"patch": p}})
        took = time.perf_counter() - start
        result = msg["result"]
        sc = result.get("structuredContent") or {}
        if result.get("isError") or sc.get("status") != "applied":
            raise SystemExit(f"apply_patch failed: {json.dumps(result)[:3000]}")
        ran = {c.get("checker") or c.get("name") for c in sc.get("checks", [])
               if isinstance(c, dict)}
        return took, ran

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def cli_apply(pg: str, repo: Path, p) -> float:
    start = time.perf_counter()
    out = subprocess.run([pg, "apply", "-", "-C", str(repo), "--format", "json"],
                         input=json.dumps(p), capture_output=True, text=True)
    took = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"patchgate apply failed: {out.stdout[:2000]} {out.stderr[:2000]}")
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", required=True)
    ap.add_argument("--base", default="")
    ap.add_argument("--langs", default="js,py,go,rust,rust-ws")
    ap.add_argument("--cli-langs", default="")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--node-modules", default="")
    opts = ap.parse_args()
    binaries = {"pg": opts.pg}
    if opts.base:
        binaries["base"] = opts.base
    langs = [lang for lang in opts.langs.split(",") if lang]
    cli_langs = [lang for lang in opts.cli_langs.split(",") if lang]
    samples = {}
    checks = {}

    def put(key, value):
        samples.setdefault(key, []).append(value)

    variants = []
    for lang in langs:
        for b, pg in binaries.items():
            variants.append((lang, b, pg, "mcp"))
            if lang in cli_langs:
                variants.append((lang, b, pg, "cli"))
    for r in range(opts.rounds):
        shift = r % len(variants)
        for lang, b, pg, how in variants[shift:] + variants[:shift]:
            repo = opts.work / f"r{r}-{lang}-{b}-{how}"
            make_repo(repo, lang, opts)
            key = f"{b}/{lang}/{how}"
            if how == "mcp":
                s = Session(pg, repo)
                first, ran = s.apply(patch(lang, 0))
                second, _ = s.apply(patch(lang, 1))
                s.close()
                checks[key] = sorted(c for c in ran if c)
            else:
                first = cli_apply(pg, repo, patch(lang, 0))
                second = cli_apply(pg, repo, patch(lang, 1))
            put(key + "/first", first)
            put(key + "/second", second)
            print(f"round {r} {key}: first {first * 1000:.0f} ms, second {second * 1000:.0f} ms",
                  file=sys.stderr)
    medians = {k: statistics.median(v) for k, v in samples.items()}
    print(json.dumps({"rounds": opts.rounds, "langs": langs, "binaries": list(binaries),
                      "cli_langs": cli_langs, "checks": checks, "median": medians,
                      "samples": samples}, indent=1))


main()
