"""Times `patchgate mcp` against `patchgate apply` on a JS/TS project (bench/mcp.sh runs it).

    python3 mcp_driver.py PATCHGATE NODE_MODULES ROUNDS WORKDIR

Each round builds two identical fresh repositories (package.json, eslint.config.js with
@eslint/js recommended, .prettierrc.json, node_modules linked to NODE_MODULES, ten source files)
and applies the same two patches (one clean edit in src/m0.js, then one in src/m1.js) with default
checks: in the first repository through ONE `patchgate mcp` session (raw JSON-RPC on its stdio),
in the second through two separate `patchgate apply` runs. The order of the two alternates by
round. Prints one JSON object: every sample in seconds and their medians.
"""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(path: Path, node_modules: str) -> None:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "bench")
    git(path, "config", "user.email", "bench@example.invalid")
    (path / "package.json").write_text('{"name": "bench", "private": true, "type": "module"}\n')
    (path / "eslint.config.js").write_text(
        'import js from "@eslint/js";\n\nexport default [js.configs.recommended];\n'
    )
    (path / ".prettierrc.json").write_text("{}\n")
    (path / ".gitignore").write_text("node_modules\n")
    os.symlink(node_modules, path / "node_modules")
    (path / "src").mkdir()
    for i in range(10):
        body = "".join(
            f"export function f{i}_{j}(a, b) {{\n  const s = a + b * {j};\n  return s - {i};\n}}\n\n"
            for j in range(30)
        )
        (path / "src" / f"m{i}.js").write_text(body)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")


def patch(i: int) -> dict:
    return {"edits": [{
        "file_path": f"src/m{i}.js",
        "old_string": f"  const s = a + b * 3;\n  return s - {i};",
        "new_string": f"  const sum = a + b * 3;\n  return sum - {i};",
    }]}


class Session:
    def __init__(self, pg: str, repo: Path):
        self.p = subprocess.Popen([pg, "mcp", "-C", str(repo)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
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
        if result.get("isError") or result["structuredContent"]["status"] != "applied":
            raise SystemExit(f"apply_patch failed: {json.dumps(result)[:2000]}")
        return took

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def cli_apply(pg: str, repo: Path, p) -> float:
    start = time.perf_counter()
    out = subprocess.run([pg, "apply", "-", "-C", str(repo), "--format", "json"],
                         input=json.dumps(p), capture_output=True, text=True)
    took = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"patchgate apply failed: {out.stdout[:2000]} {out.stderr[:2000]}")
    return took


def main():
    pg, node_modules, rounds, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    samples = {"mcp_first": [], "mcp_second": [], "cli_first": [], "cli_second": []}
    for r in range(rounds):
        a, b = work / f"r{r}-mcp", work / f"r{r}-cli"
        make_repo(a, node_modules)
        make_repo(b, node_modules)

        def via_mcp():
            s = Session(pg, a)
            samples["mcp_first"].append(s.apply(patch(0)))
            samples["mcp_second"].append(s.apply(patch(1)))
            s.close()

        def via_cli():
            samples["cli_first"].append(cli_apply(pg, b, patch(0)))
            samples["cli_second"].append(cli_apply(pg, b, patch(1)))

        for f in ([via_mcp, via_cli] if r % 2 == 0 else [via_cli, via_mcp]):
            f()
    medians = {k: statistics.median(v) for k, v in samples.items()}
    medians["mcp_second_over_first"] = medians["mcp_second"] / medians["mcp_first"]
    print(json.dumps({"rounds": rounds, "median": medians, "samples": samples}, indent=1))


main()
