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
//   "codeCache" (optional): a private folder for the compiled code of the tool's modules, on a
//   node without a compile cache of its own (see keepCompiledCode); "codeCacheCheck": true runs
//   without it, and turns it off for the tool if this run succeeds (see turnCompiledCodeOff).
//   "beforeRules" (optional): the rules whose findings on "before" are known (cached); none is
//   computed when they include every rule the patched text broke, else they run along.
//   output: ONE line of JSON on stdout, the last line written:
//     {"pid", "fromCache", "version", "ok": true, "results": [..]} or
//     {"pid", "fromCache", "ok": false, "error"} ("fromCache": modules run from keepCompiledCode's
//     cache by this process)
//   lint result:     {"ignored": bool, "messages": [{ruleId, severity, message, line, column, fatal}]}
//   format result:   {"formatted": string|null, "error": string|null}
// Results are in the order of the input files.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import nodeModule, { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";
import crypto from "node:crypto";

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

// Node before 22.1 keeps no compiled code between runs, and a check's node spends a tenth to a
// fifth of its start compiling eslint's few hundred CommonJS modules (and typescript-eslint's
// typescript.js, 9 MB, when a config checks types). So, where node has no cache of its own, the
// bridge keeps V8's code cache of the tool's modules (those under node_modules) in patchgate's
// cache folder ("codeCache" of the first input), the way v8-compile-cache did for eslint's own
// command line up to eslint 8: one file per node version and tool installation, read once at
// the start, and written again when the process ends if a module was compiled afresh. An entry
// is named by the module's path and content: V8 itself checks only the source's length, its own
// version and flags, and rejects an entry that fails those.
//
// A module that calls import() is never compiled from the cache: V8 11 (node 20) loses the
// dynamic import callback of code read from one, and such an import() fails. Its entry is empty
// and node compiles it. Which modules do is decided when an entry is written, by acorn's
// tokenizer (eslint's own parser's), for modules whose text has "import(" at all. Should the
// cache still make a tool fail, patchgate runs the batch again without it, which turns it off
// (turnCompiledCodeOff).
let keeping = false;
// How many modules this process ran from the cache: an answer says so ("fromCache"), so that
// patchgate runs a failed batch again without the cache only when the cache could be the cause.
let fromCache = 0;
let saveCompiledCode = () => {};
function keepCompiledCode(dir, moduleDir) {
  const Module = nodeModule.Module ?? nodeModule;
  const compile = Module.prototype?._compile;
  if (keeping || nodeModule.enableCompileCache || typeof dir !== "string") return;
  if (typeof compile !== "function" || typeof Module.wrap !== "function") return;
  keeping = true;
  const { folder, file } = bundleOf(dir, moduleDir);
  // A cache that cannot be written (a read-only home in a sandbox) would cost every run the
  // work of writing it; there is none then.
  try {
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    fs.accessSync(folder, fs.constants.W_OK);
  } catch {
    return;
  }
  const known = readBundle(file);
  if (known === null) return;
  // Compiled afresh, a module's import() works with node's default loader (node >= 20.12);
  // without it, a module whose text may call import() is left to node.
  const loader = vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  quietly(/USE_MAIN_CONTEXT_DEFAULT_LOADER/);
  const used = new Map();
  let fresh = false;
  const sep = `${path.sep}node_modules${path.sep}`;
  Module.prototype._compile = function (content, filename, ...rest) {
    // Only CommonJS is ours: node >= 20.19 also hands this an ES module that is require()d
    // (its format "module") or that it finds to be one when it cannot parse it as CommonJS.
    const commonjs = rest[0] === undefined || rest[0] === "commonjs";
    const ours = commonjs && filename.includes(sep) && !content.startsWith("#!");
    const key = ours ? hash(filename, content) : "";
    const cachedData = known.get(key);
    const mayImport = key !== "" && cachedData === undefined && IMPORT_CALL.test(content);
    if (cachedData?.length === 0) used.set(key, cachedData);
    if (key === "" || cachedData?.length === 0 || (mayImport && loader === undefined)) {
      return compile.call(this, content, filename, ...rest);
    }
    let script;
    try {
      const options = { filename, cachedData, importModuleDynamically: loader };
      script = new vm.Script(Module.wrap(content), options);
    } catch {
      // ES module syntax in a file node took for CommonJS (or an error node reports its way).
      return compile.call(this, content, filename, ...rest);
    }
    const rejected = cachedData === undefined || script.cachedDataRejected;
    fresh ||= rejected;
    if (!rejected) fromCache += 1;
    used.set(key, rejected ? { script, content: mayImport ? content : null } : cachedData);
    // What node's own _compile passes (its makeRequireFunction, without policies).
    const mod = this;
    const require = (id) => mod.require(id);
    const resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
    resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
    require.resolve = resolve;
    require.main = process.mainModule;
    require.extensions = Module._extensions;
    require.cache = Module._cache;
    const wrapper = script.runInThisContext({ displayErrors: true });
    return wrapper.call(mod.exports, mod.exports, require, mod, filename, path.dirname(filename));
  };
  // Written once the work is done (at the exit of a one-batch run, after each answer of a warm
  // host, whose process group is killed, not ended), so that an entry holds every function the
  // run compiled, not just the module's top level.
  saveCompiledCode = () => {
    if (!fresh) return;
    fresh = false;
    const acorn = findAcorn(moduleDir);
    const entries = [...used].map(([key, v]) => {
      if (Buffer.isBuffer(v)) return [key, v];
      const imports = v.content !== null && importsAtRunTime(v.content, acorn);
      return [key, imports ? Buffer.alloc(0) : v.script.createCachedData()];
    });
    // The entries this run did not load stay while the bundle is under 32 MiB, so that runs
    // loading different modules (another config's plugins) do not write it in turn; past that,
    // they are what a tool's upgrade left behind.
    let size = entries.reduce((n, [, d]) => n + d.length, 0);
    for (const [key, data] of known) {
      if (used.has(key) || size + data.length > 32 << 20) continue;
      entries.push([key, data]);
      size += data.length;
    }
    for (const [key, data] of entries) known.set(key, data);
    for (const [key, data] of entries) used.set(key, data);
    writeBundle(folder, file, entries);
  };
  process.once("exit", saveCompiledCode);
}

function hash(...parts) {
  const h = crypto.createHash("sha1");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
}

// Where the compiled code of the tool installed at `moduleDir` is kept: projects that link one
// installation share it.
function bundleOf(dir, moduleDir) {
  const folder = path.join(dir, `node-${process.version}-${process.arch}`);
  let tool = String(moduleDir);
  try {
    tool = fs.realpathSync(tool);
  } catch {}
  return { folder, file: path.join(folder, `${hash(tool)}.bin`) };
}

// patchgate runs a batch again without the cache ("codeCacheCheck") when the tool failed with
// it; this run succeeding says the cache was the cause, and it is turned off for the tool.
function turnCompiledCodeOff(input) {
  if (input.codeCacheCheck !== true || typeof input.codeCache !== "string") return;
  const { folder, file } = bundleOf(input.codeCache, input.moduleDir);
  writeBundle(folder, file, [["off", Buffer.alloc(0)]]);
}

// The bundle: a 4-byte little-endian length, that many bytes of JSON {key: [offset, length]}
// (offsets into what follows), then the entries. Anything unreadable is an empty cache; an
// entry "off" turns the cache off (null).
function readBundle(file) {
  const known = new Map();
  try {
    const bytes = fs.readFileSync(file);
    const size = bytes.readUInt32LE(0);
    const index = JSON.parse(bytes.subarray(4, 4 + size).toString("utf8"));
    const body = bytes.subarray(4 + size);
    if ("off" in index) return null;
    for (const [key, [offset, length]] of Object.entries(index)) {
      if (offset + length <= body.length) known.set(key, body.subarray(offset, offset + length));
    }
  } catch {}
  return known;
}

// Written under a temp name and renamed: two bridges ending together leave one whole bundle.
function writeBundle(folder, file, entries) {
  const index = {};
  let offset = 0;
  for (const [key, data] of entries) {
    index[key] = [offset, data.length];
    offset += data.length;
  }
  const head = Buffer.from(JSON.stringify(index), "utf8");
  const size = Buffer.alloc(4);
  size.writeUInt32LE(head.length, 0);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    const body = Buffer.concat([size, head, ...entries.map(([, d]) => d)]);
    fs.writeFileSync(tmp, body, { mode: 0o600 });
    fs.renameSync(tmp, file);
    forgetOldBundles(folder);
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {}
  }
}

// A node version's folder keeps the bundles of the 16 tools' installations written last (each
// is about a megabyte), so projects with their own node_modules come and go without it growing;
// and a bundle's temp file an hour old, left by a bridge killed while writing it (another may be
// writing one now). The folders of other node versions go once none of their files has been
// written or read for 30 days: an upgraded node leaves its old one's behind for good otherwise.
function forgetOldBundles(folder) {
  const names = fs.readdirSync(folder);
  const stamped = (n) => {
    const at = path.join(folder, n);
    return [fs.statSync(at).mtimeMs, at];
  };
  const bundles = names.filter((n) => n.endsWith(".bin")).map(stamped);
  bundles.sort((a, b) => b[0] - a[0]);
  const left = names.filter((n) => n.endsWith(".tmp")).map(stamped);
  const stale = left.filter(([mtime]) => Date.now() - mtime > 3600e3);
  for (const [, at] of [...bundles.slice(16), ...stale]) fs.rmSync(at, { force: true });
  forgetOtherNodes(folder);
}

const UNUSED_NODE_DAYS = 30;

// Another node version's folder, unused for UNUSED_NODE_DAYS: the last time any of its files was
// written or read (a read sets the access time at most once a day on a `relatime` mount, never
// on `noatime`, where a bundle only read goes after 30 days and is written again on its next
// use). Only folders named as `bundleOf` names them are looked at.
function forgetOtherNodes(folder) {
  const parent = path.dirname(folder);
  const now = Date.now();
  for (const name of fs.readdirSync(parent)) {
    const at = path.join(parent, name);
    if (at === folder || !/^node-v[0-9][0-9.]*-[a-z0-9]+$/.test(name)) continue;
    try {
      let last = fs.lstatSync(at).mtimeMs;
      for (const f of fs.readdirSync(at)) {
        const st = fs.lstatSync(path.join(at, f));
        last = Math.max(last, st.mtimeMs, st.atimeMs);
      }
      if (now - last > UNUSED_NODE_DAYS * 86400e3) fs.rmSync(at, { recursive: true, force: true });
    } catch {}
  }
}

const IMPORT_CALL = /\bimport\s*\(/;

// Whether a module's code calls import(): the keyword followed by a parenthesis, in acorn's
// tokens (a string, a template or a comment that says "import(" is not a call; typescript.js
// has five). Without acorn, or if it cannot read the module, the answer is the safe one: any
// line with "import(" outside a comment line (JSDoc's `@typedef {import("x")}` is in many
// modules) says yes. Only a wrong "no" would cost; a wrong "yes" keeps a module out.
function importsAtRunTime(content, acorn) {
  if (acorn) {
    try {
      const { _import, parenL } = acorn.tokTypes;
      let last = null;
      const options = { ecmaVersion: "latest", allowHashBang: true, allowReturnOutsideFunction: true };
      for (const token of acorn.tokenizer(content, options)) {
        if (last === _import && token.type === parenL) return true;
        last = token.type;
      }
      return false;
    } catch {}
  }
  for (const line of content.split("\n")) {
    if (!IMPORT_CALL.test(line)) continue;
    let code = line.trim();
    if (code.startsWith("//")) continue;
    if (code.startsWith("*") || code.startsWith("/*")) {
      // The rest of a comment: code may follow its end on the same line.
      const end = code.indexOf("*/");
      if (end < 0) continue;
      code = code.slice(end + 2);
    }
    if (IMPORT_CALL.test(code)) return true;
  }
  return false;
}

// eslint's acorn (through espree, its parser), when the tool has one.
function findAcorn(moduleDir) {
  try {
    const tool = createRequire(path.join(String(moduleDir), "package.json"));
    let acorn;
    try {
      acorn = tool("acorn");
    } catch {
      acorn = createRequire(tool.resolve("espree"))("acorn");
    }
    return typeof acorn?.tokenizer === "function" && acorn.tokTypes ? acorn : null;
  } catch {
    return null;
  }
}

// Drops node's warnings whose message matches `pattern` (an experimental API used on purpose).
function quietly(pattern) {
  const emit = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    if (pattern.test(String(warning?.message ?? warning))) return;
    return emit.call(this, warning, ...rest);
  };
}

// A project config that logs (console.log in eslint.config.js) must not corrupt our document.
console.log = console.info = console.debug = console.error;

function emit(doc) {
  const line = JSON.stringify({ pid: process.pid, fromCache, ...doc }) + "\n";
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
      keepCompiledCode(input.codeCache, input.moduleDir);
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
    process.stdout.write(JSON.stringify({ pid: process.pid, id, fromCache, ...doc }) + "\n");
    saveCompiledCode();
  }
  process.exit(0);
}

if (process.argv[2] === "--serve") {
  await serve();
} else {
  try {
    const input = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
    if (input.codeCacheCheck !== true) keepCompiledCode(input.codeCache, input.moduleDir);
    const { mod, version } = await loadTool(input.moduleDir);
    const run = input.api === "lint" ? eslint : prettier;
    const results = await run(mod, input);
    turnCompiledCodeOff(input);
    emit({ ok: true, version, results });
  } catch (e) {
    emit({ ok: false, error: String(e?.message ?? e) });
  }
}
