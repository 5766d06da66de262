"""patchgate mcp driven by the Python `mcp` package's stdio client (pinned in
scripts/install-checkers), as tests/it/mcp.rs runs it:

    python client.py PATCHGATE_BINARY REPOSITORY

The repository holds app.py (see tests/it/mcp.rs). The client declares the repository as its
one root, so the server's roots/list path is exercised too. Prints "ok: all steps" and exits 0
when every step behaved; raises (exit 1) at the first that did not.
"""

import asyncio
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client, types

STALE = "def greet(name):\n    return \"Hello, \" + name"
NEW = "def greet(name):\n    return f'Hello, {name}!'"


def check(cond, what, result=None):
    if not cond:
        extra = ""
        if result is not None:
            extra = f"\nstructured: {result.structured_content}\ntext: {text(result)}"
        raise AssertionError(what + extra)
    print(f"  ok: {what}")


def text(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main(binary: str, repo: Path) -> None:
    root = types.Root(uri=repo.resolve().as_uri(), name="repository")

    async def list_roots(_context):
        return types.ListRootsResult(roots=[root])

    params = StdioServerParameters(command=binary, args=["mcp"], cwd=str(repo))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            init = await session.initialize()
            check(init.server_info.name == "patchgate", "initialize")

            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            check(names == ["apply_patch", "check", "detect", "undo"], f"tools/list: {names}")
            for t in tools:
                check(t.input_schema.get("type") == "object", f"{t.name} has an input schema")
                check(t.output_schema is not None, f"{t.name} has an output schema")

            stale = {"file_path": "app.py", "old_string": STALE, "new_string": NEW}
            r = await session.call_tool("apply_patch", {"patch": {"edits": [stale]}, "checks": "none"})
            s = r.structured_content
            check(r.is_error is True, "a stale old_string is an error", r)
            check(s["edits"][0]["status"] == "not_found", "the edit is not_found", r)
            suggestion = s["edits"][0]["suggestions"][0]
            check(suggestion["start_line"] == 1, "the suggestion is at line 1", r)
            check("Hello, " in (repo / "app.py").read_text() and NEW not in (repo / "app.py").read_text(),
                  "nothing was written")

            retry = {"file_path": "app.py", "old_string": suggestion["text"], "new_string": NEW}
            r = await session.call_tool("apply_patch", {"patch": {"edits": [retry]}})
            check(r.is_error is False, "the retry with the suggestion's text applies", r)
            check(r.structured_content["status"] == "applied", "status applied", r)
            check(NEW in (repo / "app.py").read_text(), "the file changed")

            (repo / "broken.py").write_text("def broken(:\n    pass\n")
            subprocess.run(["git", "add", "broken.py"], cwd=repo, check=True)
            r = await session.call_tool("check", {"staged": True, "checks": "syntax"})
            check(r.is_error is True, "check on a staged syntax error fails", r)
            check(r.structured_content["checks"][0]["path"] == "broken.py", "it names broken.py", r)

            for tool, args in [("check", {"paths": ["/etc/passwd"]}), ("detect", {"path": ".."})]:
                r = await session.call_tool(tool, args)
                check(r.is_error is True and "outside" in r.structured_content["error"]["message"],
                      f"{tool} outside the repository is refused", r)

            r = await session.call_tool("apply_patch", {"patch_text": "edits: [1"})
            check(r.is_error is True and r.structured_content["status"] == "error",
                  "an invalid patch is a tool error", r)
    print("ok: all steps")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
