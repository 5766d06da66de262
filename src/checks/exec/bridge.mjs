// patchgate's node bridge: runs the project's own node tool through its API (a linter through
// the ESLint API, "api": "lint"; a formatter through prettier's, "api": "format"), on
// in-memory file contents, all files of a batch in this one process (node startup costs ~0.3 s).
//
// Usage: node bridge.mjs <input.json>      one batch, then exit
//        node bridge.mjs --serve             a warm host (patchgate mcp): one request per line on
//                                            stdin (the input document plus "id"), one answer line
//                                            per request on stdout (the output document plus
//                                            "id"); the loaded tools and eslint engines stay in
//                                            memory; exits when stdin closes (its server is gone).
//   input:  {"tool": <package>, "api": "lint"|"format", "moduleDir", "projectRoot", "ignoreFiles": [..],
//            "files": [{"path", "text", "before"?}]}
//   "before" (optional): the file's original text. When the patched text has findings (lint) or
//   would be reformatted (format), the original is checked too, in this same process, and its
//   result is the file's "baseline" (same shape as a result); a clean file never costs it.
//   A linter's baseline runs only the rules the patched text broke, where the linter can be told
//   so (ESLint's `ruleFilter`): its "rules" lists them, and it holds no other rule's findings.
//   "beforeRules" (optional): the rules whose findings on "before" are known (cached); none is
//   computed when they include every rule the patched text broke, else they run along.
//   output: ONE line of JSON on stdout, the last line written:
//     {"pid", "version", "ok": true, "results": [..]} or {"pid", "ok": false, "error"}
//   lint result:     {"ignored": bool, "messages": [{ruleId, severity, message, line, column, fatal}]}
//   format result:   {"formatted": string|null, "error": string|null}
// Results are in the order of the input files.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import nodeModule, { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import v8 from "node:v8";

// V8 hands a function to its optimising compiler (TurboFan) after a few thousand calls: right
// for a program that runs for minutes, a waste for a check of a few hundred milliseconds, which
// then spends more CPU compiling the tool's hot paths than running them. Ten times as many calls
// first: eslint and prettier on 20 files each used a third less CPU (node 20 and 22), and a
// 1,000-file eslint run was no slower (BENCHMARKS.md (z)). The flags are V8's own and were
// renamed in V8 12 (node 22); set before the tools load, they apply to all of their code.
v8.setFlagsFromString(
  Number(process.versions.v8.split(".")[0]) >= 12
    ? "--invocation-count-for-turbofan=30000 --invocation-count-for-osr=8000"
    : "--interrupt-budget=675840",
);

// The tools' own command lines do this (eslint's and prettier's bin scripts): node (>= 22.8)
// keeps the compiled code of every module loaded from here on in its cache folder (the same one
// those command lines use), so a later start does not compile eslint's hundreds of modules again.
// Older nodes have no such cache.
nodeModule.enableCompileCache?.();

// A project config that logs (console.log in eslint.config.js) must not corrupt our document.
console.log = console.info = console.debug = console.error;

function emit(doc) {
  const line = JSON.stringify({ pid: process.pid, ...doc }) + "\n";
  process.stdout.write(line, () => process.exit(0));
}

// Node's own export resolution for an ESM import of the package root: the first condition among
// import/node/default, in the order the package lists them. Falls back to "main" via require.
function pickTarget(t) {
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    for (const x of t) {
      const r = pickTarget(x);
      if (r) return r;
    }
    return null;
  }
  if (t && typeof t === "object") {
    if (Object.keys(t).some((k) => k.startsWith("."))) return pickTarget(t["."]);
    for (const [k, v] of Object.entries(t)) {
      if (k === "import" || k === "node" || k === "default") {
        const r = pickTarget(v);
        if (r) return r;
      }
    }
  }
  return null;
}

async function loadTool(moduleDir) {
  const pkgPath = path.join(moduleDir, "package.json");
  const pkg = JSON.parse(fs.readFileSync(pkgPath, "utf8"));
  const target = pkg.exports ? pickTarget(pkg.exports) : null;
  const entry = target
    ? path.resolve(moduleDir, target)
    : createRequire(pkgPath).resolve(moduleDir);
  const mod = await import(pathToFileURL(entry).href);
  return { mod, version: pkg.version };
}

// A CommonJS package imported from ESM exposes module.exports as `default`; named exports are
// only there when node's lexer detected them, so look in both places.
function member(mod, name) {
  return mod[name] ?? mod.default?.[name];
}

// The rules an engine runs: all, or (`only`, for a baseline) those in the set. An ESLint without
// the `ruleFilter` option (before 9.x) rejects it; that engine always runs all.
function newEngine(mod, input) {
  const ESLint = member(mod, "ESLint");
  if (typeof ESLint !== "function") throw new Error("this eslint has no ESLint class");
  const rules = { only: null };
  const ruleFilter = ({ ruleId }) => rules.only === null || rules.only.has(ruleId);
  try {
    const engine = new ESLint({ cwd: input.projectRoot, ruleFilter });
    return { engine, rules };
  } catch {
    return { engine: new ESLint({ cwd: input.projectRoot }), rules: null };
  }
}

async function eslint(mod, input, { engine, rules } = newEngine(mod, input)) {
  const lint = async (text, filePath) => {
    const out = await engine.lintText(text, { filePath, warnIgnored: false });
    const messages = (out[0]?.messages ?? []).map((m) => ({
      ruleId: m.ruleId ?? null,
      severity: m.severity,
      message: m.message,
      line: m.line ?? 0,
      column: m.column ?? 0,
      fatal: Boolean(m.fatal),
    }));
    return { ignored: out.length === 0, messages };
  };
  const results = [];
  for (const f of input.files) {
    // isPathIgnored is also true for a file no config block matches (e.g. .ts with @eslint/js).
    if (await engine.isPathIgnored(f.path)) {
      results.push({ ignored: true, messages: [] });
      continue;
    }
    const result = await lint(f.text, f.path);
    if (typeof f.before === "string" && !result.ignored && result.messages.length > 0) {
      // The original's findings are only compared with the patched text's, rule by rule: the
      // rules that fired are all it needs (half the work of a full lint with `recommended`). A
      // message without a rule (a parse error, an unused directive) needs every rule.
      // "beforeRules": the rules whose findings on the original patchgate has cached; if
      // those cover the ones that fired, the original is not checked again.
      const fired = result.messages.every((m) => m.ruleId)
        ? new Set(result.messages.map((m) => m.ruleId))
        : null;
      const known = Array.isArray(f.beforeRules) ? new Set(f.beforeRules) : null;
      if (!(fired && known && [...fired].every((r) => known.has(r)))) {
        const only = rules && fired ? new Set([...fired, ...(known ?? [])]) : null;
        if (only) rules.only = only;
        try {
          result.baseline = await lint(f.before, f.path);
        } finally {
          if (rules) rules.only = null;
        }
        if (only) result.baseline.rules = [...only].sort();
      }
    }
    results.push(result);
  }
  return results;
}

async function prettier(mod, input) {
  const getFileInfo = member(mod, "getFileInfo");
  const resolveConfig = member(mod, "resolveConfig");
  const format = member(mod, "format");
  if (typeof format !== "function") throw new Error("this prettier has no format()");
  // A warm host must see config files created or edited since its last batch.
  await member(mod, "clearConfigCache")?.();
  const results = [];
  for (const f of input.files) {
    // Config or ignore-file errors here concern the whole project: let them fail the batch.
    const info = await getFileInfo(f.path, { ignorePath: input.ignoreFiles, resolveConfig: true });
    if (info.ignored || !info.inferredParser) {
      results.push({ formatted: null, error: null });
      continue;
    }
    const options = (await resolveConfig(f.path, { editorconfig: true })) ?? {};
    const run = async (text) => {
      try {
        return { formatted: await format(text, { ...options, filepath: f.path }), error: null };
      } catch (e) {
        // A syntax error belongs to this one file, not to the batch.
        return { formatted: null, error: String(e?.message ?? e) };
      }
    };
    const result = await run(f.text);
    if (typeof f.before === "string" && result.formatted !== null && result.formatted !== f.text) {
      result.baseline = await run(f.before);
    }
    results.push(result);
  }
  return results;
}

async function serve() {
  const tools = new Map(); // moduleDir -> { mod, version }
  const engines = new Map(); // moduleDir + projectRoot -> { engine, rules } (its configs stay loaded)
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let id = null;
    let doc;
    try {
      const input = JSON.parse(line);
      id = input.id ?? null;
      if (!tools.has(input.moduleDir)) tools.set(input.moduleDir, await loadTool(input.moduleDir));
      const { mod, version } = tools.get(input.moduleDir);
      let results;
      if (input.api === "lint") {
        const key = input.moduleDir + "\0" + input.projectRoot;
        if (!engines.has(key)) engines.set(key, newEngine(mod, input));
        results = await eslint(mod, input, engines.get(key));
      } else {
        results = await prettier(mod, input);
      }
      doc = { ok: true, version, results };
    } catch (e) {
      doc = { ok: false, error: String(e?.message ?? e) };
    }
    process.stdout.write(JSON.stringify({ pid: process.pid, id, ...doc }) + "\n");
  }
  process.exit(0);
}

if (process.argv[2] === "--serve") {
  await serve();
} else {
  try {
    const input = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
    const { mod, version } = await loadTool(input.moduleDir);
    const run = input.api === "lint" ? eslint : prettier;
    emit({ ok: true, version, results: await run(mod, input) });
  } catch (e) {
    emit({ ok: false, error: String(e?.message ?? e) });
  }
}
