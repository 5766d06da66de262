"""The MCP handshake of an installed patchgate, driven by the Python `mcp` package's stdio client
(pinned in scripts/install-checkers), as tests/it/install.rs runs it:

    python handshake.py REPOSITORY COMMAND [ARG...]

COMMAND ARG... starts the server (`/venv/bin/patchgate mcp`, `uvx ... patchgate mcp`, the npm
launcher), in REPOSITORY, with this process's environment. The repository holds app.py with
OLD. Steps: initialize, tools/list, one apply_patch that replaces OLD with NEW. Prints
"first call: S s" (the time from start to the initialize answer) and "ok: handshake" when every
step behaved; raises (exit 1) at the first that did not.
"""

import asyncio
import os
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

OLD = "return 'Hello, ' + name"
NEW = "return f'Hello, {name}!'"


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}")


async def main(repo: Path, command: list) -> None:
    params = StdioServerParameters(
        command=command[0], args=command[1:], cwd=str(repo), env=dict(os.environ)
    )
    started = time.monotonic()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(f"first call: {time.monotonic() - started:.2f} s")
            check(init.server_info.name == "patchgate", "initialize names patchgate")
            names = [t.name for t in (await session.list_tools()).tools]
            check("apply_patch" in names, f"tools/list: {names}")
            edit = {"file_path": "app.py", "old_string": OLD, "new_string": NEW}
            r = await session.call_tool(
                "apply_patch", {"patch": {"edits": [edit]}, "checks": "none"}
            )
            check(r.is_error is False, f"apply_patch succeeds: {r.structured_content}")
            check(r.structured_content["status"] == "applied", "status applied")
            check(NEW in (repo / "app.py").read_text(), "app.py changed on disk")
    print("ok: handshake")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2:]))
