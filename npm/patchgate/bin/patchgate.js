#!/usr/bin/env node
// The `patchgate` command of the npm package: runs the prebuilt binary of the platform package
// that npm installed (an optional dependency named patchgate-<os>-<cpu>; npm skips those whose
// "os"/"cpu" do not match). stdin/stdout/stderr are the child's own, so `patchgate mcp` speaks
// MCP straight to the client; the exit code and a terminating signal are passed on.
// PATCHGATE_BINARY names another binary to run instead. Exit 4 (an environment problem, as
// patchgate's own) when there is no binary to run.
"use strict";
const { spawn } = require("child_process");
const path = require("path");

function binary() {
  if (process.env.PATCHGATE_BINARY) return process.env.PATCHGATE_BINARY;
  const pkg = `patchgate-${process.platform}-${process.arch}`;
  try {
    return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", "patchgate");
  } catch (e) {
    process.stderr.write(
      `patchgate: no prebuilt binary for ${process.platform}-${process.arch} (package ${pkg} is not installed)\n` +
        "help: reinstall without --no-optional / --omit=optional, or install patchgate with " +
        "`pip install patchgate` or `cargo install patchgate`\n"
    );
    process.exit(4);
  }
}

const child = spawn(binary(), process.argv.slice(2), { stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (e) => {
  process.stderr.write(`patchgate: cannot run ${e.path || "the binary"}: ${e.message}\n`);
  process.exit(4);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code);
  }
});
