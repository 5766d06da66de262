//! The project's own eslint and prettier, run on patched text that exists only in memory.
//!
//! This module owns finding a tool's package ([`find_module`]) and running one batch of files
//! through it ([`run`]). It does not go through the tools' CLIs, for two reasons: a CLI takes at
//! most one in-memory file (`--stdin`), so a batch would cost one node start (~0.3 s) per file;
//! and the working tree must not be touched before the patch is accepted, so the patched text
//! cannot be written where the CLI would read it. Instead a small bridge script (`bridge.mjs`,
//! embedded here) loads the tool's API in ONE node process and hands it each file's text
//! together with its REAL path, so configs, eslint `ignores` and `.prettierignore` are resolved
//! exactly as for the file on disk. The batch reaches the bridge as a JSON file in the caller's
//! scratch directory (children of [`Cmd`] get a null stdin by default). A long-running server
//! (`patchgate mcp`) keeps the bridge running between batches instead ([`super::node_host`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::checks::finding::{RawFinding, Severity};
use crate::runner::{Cmd, RunError};

const BRIDGE: &str = include_str!("bridge.mjs");

pub struct NodeFile {
    /// Absolute real path: config and ignore files are resolved from it.
    pub path: PathBuf,
    /// The patched content, which is what gets checked (not the file on disk).
    pub text: String,
    /// The original content, when its result may be needed as the file's baseline: the bridge
    /// checks it in the same process, only if the patched content has findings (or would be
    /// reformatted), so a clean file costs nothing and a dirty one no second node start.
    pub before: Option<String>,
    /// The rules whose findings on `before` are known already (a cached baseline of some rules):
    /// the bridge checks it only if the patched text breaks another rule.
    pub before_rules: Option<Vec<String>>,
}

/// Which of the bridge's two drivers runs a tool: a linter through the ESLint API (an `ESLint`
/// engine per project, findings per file), or a formatter through prettier's (`format()`, the
/// formatted text per file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeApi {
    Lint,
    Format,
}

/// A node tool as its checker declares it (`checks::checker::<tool>::NODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeTool {
    /// The npm package (and binary) name, for [`find_module`].
    pub package: &'static str,
    pub api: NodeApi,
    /// The tool's configuration file names: a change to one restarts a warm host.
    pub configs: &'static [&'static str],
    /// Ignore files the API reads only when given them (the CLI would find them itself), looked
    /// up in the project root and the repository root.
    pub ignore_files: &'static [&'static str],
}

impl NodeTool {
    /// The npm package (and binary) name, for [`find_module`].
    pub fn package(self) -> &'static str {
        self.package
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileResult {
    /// eslint: findings (RawFinding.path = the real path), or ignored by the project's config.
    Lint {
        path: PathBuf,
        findings: Vec<RawFinding>,
        ignored: bool,
    },
    /// prettier: the formatted text, or None when ignored (.prettierignore) or no parser is
    /// inferred.
    Format {
        path: PathBuf,
        formatted: Option<String>,
        error: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeError {
    /// node, or the tool's package, is not installed.
    Missing(String),
    Timeout,
    /// The batch failed as a whole (crash, config error): the tool's message.
    Failed(String),
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeError::Missing(m) | NodeError::Failed(m) => f.write_str(m),
            NodeError::Timeout => f.write_str("timed out"),
        }
    }
}

/// The package directory of a tool: `node_modules/<name>` found walking up from `project_root`
/// to `repo_root` (project-local wins), else the binary on PATH followed through symlinks to its
/// package.
pub fn find_module(name: &str, project_root: &Path, repo_root: &Path) -> Option<PathBuf> {
    for dir in project_root.ancestors() {
        let candidate = dir.join("node_modules").join(name);
        if candidate.join("package.json").is_file() {
            return Some(candidate);
        }
        // Never look above the repository: a stray node_modules in $HOME is not the project's.
        if dir == repo_root {
            break;
        }
    }
    find_on_path(name, &std::env::var_os("PATH")?)
}

fn find_on_path(name: &str, path_var: &std::ffi::OsStr) -> Option<PathBuf> {
    let bin = std::env::split_paths(path_var)
        .map(|d| d.join(name))
        .find(|p| p.is_file())?;
    // npm's bin entries are symlinks into the package (`.bin/eslint -> ../eslint/bin/eslint.js`,
    // `/usr/local/bin/eslint -> ../lib/node_modules/eslint/bin/eslint.js`).
    let real = bin.canonicalize().ok()?;
    let is_pkg = |d: &Path| {
        std::fs::read_to_string(d.join("package.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .is_some_and(|v| v["name"] == name)
    };
    real.ancestors()
        .skip(1)
        .find(|d| is_pkg(d))
        .map(Path::to_path_buf)
}

/// The bridge's one line of output (see the head of bridge.mjs).
#[derive(Deserialize, Default)]
#[serde(default)]
struct BridgeDoc {
    pid: u32,
    /// How many modules the bridge's process ran from its compiled-code cache.
    #[serde(rename = "fromCache")]
    from_cache: u64,
    ok: bool,
    error: Option<String>,
    results: Vec<BridgeResult>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct BridgeResult {
    ignored: bool,
    messages: Vec<EslintMessage>,
    formatted: Option<String>,
    error: Option<String>,
    /// The original text's result (when asked for and needed).
    baseline: Option<Box<BridgeResult>>,
    /// A baseline's rules, when only those ran (the rules the patched text broke).
    rules: Option<Vec<String>>,
}

/// A file's baseline as the bridge computed it along with the patched text's result.
pub struct Baseline {
    pub result: FileResult,
    /// The only rules that ran, when the linter was told to run just those (see the bridge):
    /// then the result holds no other rule's findings, and is that file's baseline for a
    /// patched result whose findings are of exactly these rules.
    pub rules: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EslintMessage {
    rule_id: Option<String>,
    severity: u8,
    message: String,
    line: usize,
    column: usize,
    fatal: bool,
}

#[cfg(test)]
thread_local! {
    /// The pid of each bridge this thread started (0 until it answered): lets a test count node
    /// processes without racing the tests on other threads.
    static BRIDGES: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

pub fn run(
    tool: NodeTool,
    module_dir: &Path,
    project_root: &Path,
    files: &[NodeFile],
    scratch: &Path,
    timeout: Duration,
) -> Result<Vec<FileResult>, NodeError> {
    let all = run_with_baselines(tool, module_dir, project_root, files, scratch, timeout)?;
    Ok(all.into_iter().map(|(r, _)| r).collect())
}

/// [`run`], with each file's baseline: the result on its original text (`NodeFile::before`),
/// computed by the same process when the patched text's result needed one.
pub fn run_with_baselines(
    tool: NodeTool,
    module_dir: &Path,
    project_root: &Path,
    files: &[NodeFile],
    scratch: &Path,
    timeout: Duration,
) -> Result<Vec<(FileResult, Option<Baseline>)>, NodeError> {
    let name = tool.package();
    if !module_dir.join("package.json").is_file() {
        let why = format!("{name} not found in node_modules or on PATH");
        return Err(NodeError::Missing(why));
    }
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let failed = |what: &str, e: &dyn std::fmt::Display| NodeError::Failed(format!("{what}: {e}"));
    let code_cache = crate::fs::layout::cache_home().map(|h| crate::fs::layout::node_code(&h));
    let mut doc = serde_json::json!({
        "tool": name,
        "codeCache": code_cache,
        "api": match tool.api { NodeApi::Lint => "lint", NodeApi::Format => "format" },
        "moduleDir": module_dir.to_string_lossy(),
        "projectRoot": project_root.to_string_lossy(),
        "ignoreFiles": ignore_files(project_root, tool.ignore_files),
        "files": files.iter()
            .map(|f| {
                let mut file = serde_json::json!({"path": f.path.to_string_lossy(), "text": f.text});
                if let Some(b) = &f.before {
                    file["before"] = b.as_str().into();
                }
                if let Some(r) = &f.before_rules {
                    file["beforeRules"] = r.clone().into();
                }
                file
            })
            .collect::<Vec<_>>(),
    });
    #[cfg(test)]
    BRIDGES.with_borrow_mut(|b| b.push(0));
    let warm = super::node_host::warm();
    let first = if warm {
        let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
        super::node_host::request(
            tool,
            module_dir,
            project_root,
            &doc,
            &paths,
            BRIDGE,
            timeout,
        )
        .and_then(|line| {
            serde_json::from_str::<BridgeDoc>(&line)
                .map_err(|e| failed(&format!("{name} (the node host's answer)"), &e))
        })
    } else {
        one_shot(name, project_root, &doc, scratch, timeout)
    };
    // A tool that failed with the bridge's compiled-code cache (bridge.mjs) runs again without
    // it, in a process of its own: if that run succeeds, the cache was the cause, the bridge
    // turns it off for that installation, and a warm host (which holds the cached code) is
    // stopped. Either way the verdict is the tool's own.
    let doc = match first {
        first if code_cache.is_some() && may_be_the_cache(&first) => {
            doc["codeCacheCheck"] = true.into();
            match one_shot(name, project_root, &doc, scratch, timeout) {
                Ok(d) if d.ok => {
                    if warm {
                        super::node_host::forget(tool, module_dir, project_root);
                    }
                    d
                }
                _ => first?,
            }
        }
        first => first?,
    };
    #[cfg(test)]
    BRIDGES.with_borrow_mut(|b| b.last_mut().map(|p| *p = doc.pid));
    if !doc.ok {
        return Err(failed(name, &doc.error.unwrap_or_default()));
    }
    if doc.results.len() != files.len() {
        let why = format!("{} results for {} files", doc.results.len(), files.len());
        return Err(failed(name, &why));
    }
    let result = |path: &Path, r: BridgeResult| match tool.api {
        NodeApi::Lint => FileResult::Lint {
            findings: r
                .messages
                .into_iter()
                .map(|m| finding(path, m, name))
                .collect(),
            ignored: r.ignored,
            path: path.to_path_buf(),
        },
        NodeApi::Format => FileResult::Format {
            path: path.to_path_buf(),
            formatted: r.formatted,
            error: r.error,
        },
    };
    let results = files.iter().zip(doc.results).map(|(f, mut r)| {
        // Only an asked-for baseline counts: a stray one would be for text we did not send.
        let base = r.baseline.take().filter(|_| f.before.is_some());
        let base = base.map(|mut b| Baseline {
            rules: b.rules.take(),
            result: result(&f.path, *b),
        });
        (result(&f.path, r), base)
    });
    Ok(results.collect())
}

/// Whether a batch's failure may come from the bridge's compiled-code cache: the tool failed
/// after running code from it, or node itself crashed (no answer tells). A tool that is
/// missing or timed out, or that failed with no cached code run (node keeps its own cache, or
/// the bridge had none yet), fails for its own reasons.
fn may_be_the_cache(first: &Result<BridgeDoc, NodeError>) -> bool {
    match first {
        Ok(doc) => !doc.ok && doc.from_cache > 0,
        Err(e) => matches!(e, NodeError::Failed(_)),
    }
}

/// One node process for one batch: the input as a file in a private scratch directory (children
/// of [`Cmd`] get a null stdin), the answer on the last line of stdout.
fn one_shot(
    name: &str,
    project_root: &Path,
    doc: &serde_json::Value,
    scratch: &Path,
    timeout: Duration,
) -> Result<BridgeDoc, NodeError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| NodeError::Failed(format!("{what}: {e}"));
    // A private directory per call: batches may run concurrently in the same scratch dir (which
    // does not exist yet on a repository's first run).
    std::fs::create_dir_all(scratch)
        .map_err(|e| failed("cannot create a scratch directory", &e))?;
    let dir = tempfile::Builder::new()
        .prefix("node-bridge-")
        .tempdir_in(scratch)
        .map_err(|e| failed("cannot create a scratch directory", &e))?;
    let (bridge, input) = (dir.path().join("bridge.mjs"), dir.path().join("input.json"));
    std::fs::write(&bridge, BRIDGE).map_err(|e| failed("cannot write the bridge", &e))?;
    std::fs::write(&input, doc.to_string()).map_err(|e| failed("cannot write the input", &e))?;
    let out = Cmd::new("node", project_root)
        .args([&bridge, &input])
        .timeout(timeout)
        .run()
        .map_err(|e| match e {
            RunError::NotFound(_) => NodeError::Missing("node not found on PATH".into()),
            e => failed("node", &e),
        })?;
    if out.timed_out {
        return Err(NodeError::Timeout);
    }
    // The document is the last line; anything before it is stray output we do not own.
    let stdout = out.stdout_str();
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty());
    match last.and_then(|l| serde_json::from_str::<BridgeDoc>(l).ok()) {
        Some(doc) => Ok(doc),
        None => {
            // Only a crash of node itself gets here (the bridge reports errors it can catch).
            let why = out
                .stderr_str()
                .trim()
                .chars()
                .take(4000)
                .collect::<String>();
            Err(failed(&format!("{name} (node exit {:?})", out.code), &why))
        }
    }
}

fn finding(path: &Path, m: EslintMessage, tool: &str) -> RawFinding {
    RawFinding {
        path: path.to_string_lossy().into_owned(),
        line: m.line,
        column: m.column,
        // The ESLint API gives a parse error no rule id; name it so reports can still group it.
        rule: m
            .rule_id
            .unwrap_or_else(|| if m.fatal { "parse-error" } else { tool }.to_string()),
        severity: [Severity::Warning, Severity::Error][usize::from(m.severity >= 2)],
        message: m.message,
    }
}

/// The ignore files named `names` that the tool's CLI would honour when run from the project
/// root, plus the repository root's: the API only reads the ignore files it is given.
fn ignore_files(project_root: &Path, names: &[&str]) -> Vec<String> {
    let git_root = project_root.ancestors().find(|d| d.join(".git").exists());
    let mut dirs = vec![project_root];
    dirs.extend(git_root.filter(|g| *g != project_root));
    let files = dirs
        .into_iter()
        .flat_map(|d| names.iter().map(move |n| d.join(n)));
    files
        .filter(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The bridge's two drivers, as the eslint and prettier checkers declare them.
    const ESLINT: NodeTool = NodeTool {
        package: "eslint",
        api: NodeApi::Lint,
        configs: &["eslint.config.js"],
        ignore_files: &[],
    };
    const PRETTIER: NodeTool = NodeTool {
        package: "prettier",
        api: NodeApi::Format,
        configs: &[".prettierrc"],
        ignore_files: &[".prettierignore"],
    };
    use std::fs;

    /// A temp project wired to the installed tools, or None (after the project's skip rule).
    fn project(eslint_config: Option<&str>) -> Option<(tempfile::TempDir, PathBuf)> {
        let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/node/node_modules");
        let missing = if Cmd::new("node", ".").arg("--version").run().is_err() {
            Some("node not found on PATH".to_string())
        } else {
            ["eslint", "prettier", "@eslint/js"]
                .into_iter()
                .find(|m| !modules.join(m).join("package.json").is_file())
                .map(|m| format!("{m} not installed in {}", modules.display()))
        };
        if let Some(why) = missing {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
            eprintln!("SKIPPED: {why} (run scripts/install-checkers)");
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::os::unix::fs::symlink(&modules, root.join("node_modules")).expect("symlink");
        write(&root, "package.json", r#"{"type":"module"}"#);
        if let Some(cfg) = eslint_config {
            write(&root, "eslint.config.js", cfg);
        }
        Some((dir, root))
    }

    const RECOMMENDED: &str = "import js from \"@eslint/js\";\n\
        export default [{ ignores: [\"src/gen/**\"] }, js.configs.recommended];\n";

    fn write(root: &Path, rel: &str, text: &str) {
        fs::create_dir_all(root.join(rel).parent().expect("parent")).expect("mkdir");
        fs::write(root.join(rel), text).expect("write");
    }

    type Got = Result<Vec<FileResult>, NodeError>;

    /// Runs one batch of (relative path, patched text) through `tool`.
    fn go(tool: NodeTool, root: &Path, list: &[(&str, &str)], ms: u64) -> Got {
        let file = |(p, t): &(&str, &str)| NodeFile {
            path: root.join(p),
            text: t.to_string(),
            before: None,
            before_rules: None,
        };
        let files: Vec<NodeFile> = list.iter().map(file).collect();
        let module = find_module(tool.package(), root, root).expect("module");
        let scratch = tempfile::tempdir().expect("scratch");
        run(
            tool,
            &module,
            root,
            &files,
            scratch.path(),
            Duration::from_millis(ms),
        )
    }

    fn lint(r: &FileResult) -> (&[RawFinding], bool) {
        match r {
            FileResult::Lint {
                findings: f,
                ignored: i,
                ..
            } => (f, *i),
            _ => panic!("{r:?}"),
        }
    }

    fn format(r: &FileResult) -> (Option<&str>, Option<&str>) {
        match r {
            FileResult::Format {
                formatted: f,
                error: e,
                ..
            } => (f.as_deref(), e.as_deref()),
            _ => panic!("{r:?}"),
        }
    }

    #[test]
    fn eslint_lints_the_patched_text_not_the_disk_and_honours_ignores() {
        let Some((_d, root)) = project(Some(RECOMMENDED)) else {
            return;
        };
        write(&root, "src/a.js", "export const a = 1;\n");
        let patched = "export const a = 1;\n\nlet unused = 2;\n";
        let list = [
            ("src/a.js", patched),
            ("src/gen/x.js", "let u;\n"),
            ("src/b.js", "x = ;\n"),
        ];
        let r = go(ESLINT, &root, &list, 60_000).expect("runs");
        let (findings, ignored) = lint(&r[0]);
        assert!(!ignored && findings.len() == 1, "{findings:?}");
        let f = &findings[0];
        let got = (f.line, f.column, f.rule.as_str(), f.severity);
        assert_eq!(got, (3, 5, "no-unused-vars", Severity::Error));
        assert_eq!(f.path, root.join("src/a.js").to_string_lossy());
        assert_eq!(lint(&r[1]), (&[][..], true));
        assert_eq!(lint(&r[2]).0[0].rule, "parse-error");
        let on_disk = fs::read_to_string(root.join("src/a.js")).expect("read");
        assert_eq!(
            on_disk, "export const a = 1;\n",
            "the working tree was touched"
        );
    }

    /// An original is linted with the rules its patched text broke, and says so; a patched text
    /// with a message of no rule (a parse error) has its original linted with every rule.
    #[test]
    fn eslint_checks_an_original_with_the_rules_the_patched_text_broke() {
        let Some((_d, root)) = project(Some(RECOMMENDED)) else {
            return;
        };
        let before = "let unused = 1;\nmissing();\n";
        let files = [
            ("a.js", "let unused = 2;\n"),
            ("b.js", "let unused = 2;\nx = ;\n"),
        ]
        .map(|(p, text)| NodeFile {
            path: root.join(p),
            text: text.to_string(),
            before: Some(before.to_string()),
            before_rules: None,
        });
        let module = find_module(ESLINT.package(), &root, &root).expect("module");
        let scratch = tempfile::tempdir().expect("scratch");
        let got = run_with_baselines(
            ESLINT,
            &module,
            &root,
            &files,
            scratch.path(),
            Duration::from_secs(60),
        )
        .expect("runs");
        let rules =
            |r: &FileResult| -> Vec<String> { lint(r).0.iter().map(|f| f.rule.clone()).collect() };
        let a = got[0].1.as_ref().expect("a's baseline");
        assert_eq!(
            a.rules.as_deref(),
            Some(&["no-unused-vars".to_string()][..])
        );
        assert_eq!(rules(&a.result), ["no-unused-vars"]);
        let b = got[1].1.as_ref().expect("b's baseline");
        assert_eq!(b.rules, None);
        assert_eq!(rules(&b.result), ["no-unused-vars", "no-undef"]);
    }

    /// A failed batch runs again without the compiled-code cache only when that cache could be
    /// the cause.
    #[test]
    fn only_a_failure_after_cached_code_ran_is_tried_again_without_it() {
        let doc = |ok: bool, from_cache: u64| -> Result<BridgeDoc, NodeError> {
            Ok(BridgeDoc {
                ok,
                from_cache,
                ..BridgeDoc::default()
            })
        };
        assert!(may_be_the_cache(&doc(false, 3)));
        assert!(!may_be_the_cache(&doc(false, 0)), "no cached code ran");
        assert!(!may_be_the_cache(&doc(true, 3)), "it did not fail");
        assert!(may_be_the_cache(&Err(NodeError::Failed("crashed".into()))));
        assert!(!may_be_the_cache(&Err(NodeError::Timeout)));
        assert!(!may_be_the_cache(&Err(NodeError::Missing("node".into()))));
    }

    #[test]
    fn eslint_without_a_config_fails_the_batch() {
        let Some((_d, root)) = project(None) else {
            return;
        };
        let err = go(ESLINT, &root, &[("a.js", "let a;\n")], 60_000).err();
        assert!(
            matches!(&err, Some(NodeError::Failed(m)) if m.contains("config")),
            "{err:?}"
        );
    }

    #[test]
    fn prettier_formats_per_config_and_ignore_files() {
        let Some((_d, root)) = project(None) else {
            return;
        };
        write(&root, "src/sub/.prettierrc", r#"{"semi": false}"#);
        write(&root, ".prettierignore", "src/vendor.js\n");
        let (bad, good) = ("let  a=1", "let a = 1;\n");
        let list = [
            ("src/bad.js", bad),
            ("src/good.js", good),
            ("src/sub/c.js", good),
            ("src/vendor.js", bad),
            ("src/data.xyz", "?"),
            ("src/syn.js", "x = ;\n"),
        ];
        let r = go(PRETTIER, &root, &list, 60_000).expect("runs");
        let got: Vec<_> = r.iter().map(format).collect();
        let want = [Some(good), Some(good), Some("let a = 1\n"), None, None];
        assert_eq!(got[..5], want.map(|f| (f, None)));
        let (None, Some(err)) = got[5] else {
            panic!("{got:?}")
        };
        assert!(err.contains("Unexpected token"), "{err}");
        assert!(!root.join("src/bad.js").exists(), "a file was written");
    }

    #[test]
    fn twenty_files_take_one_node_process() {
        let Some((_d, root)) = project(Some(RECOMMENDED)) else {
            return;
        };
        let texts: Vec<_> = (0..20)
            .map(|i| (format!("f{i}.js"), format!("let v{i};\n")))
            .collect();
        let list: Vec<_> = texts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let start = std::time::Instant::now();
        let r = go(ESLINT, &root, &list, 60_000).expect("runs");
        eprintln!("eslint, 20 files, one call: {:?}", start.elapsed());
        let bridges = BRIDGES.with_borrow(|b| b.clone());
        assert!(
            bridges.len() == 1 && bridges[0] > 0,
            "node processes: {bridges:?}"
        );
        assert_eq!(r.len(), 20);
        for (i, r) in r.iter().enumerate() {
            assert_eq!(
                lint(r).0[0].message,
                format!("'v{i}' is defined but never used.")
            );
        }
    }

    #[test]
    fn a_slow_batch_times_out() {
        let Some((_d, root)) = project(Some(RECOMMENDED)) else {
            return;
        };
        let err = go(ESLINT, &root, &[("a.js", "")], 1).err();
        assert_eq!(err, Some(NodeError::Timeout));
    }

    #[test]
    fn find_module_prefers_the_project_then_follows_path_symlinks() {
        let d = tempfile::tempdir().expect("tempdir");
        let (repo, global) = (d.path().join("repo"), d.path().join("global"));
        let pkgs = [
            repo.join("node_modules/eslint"),
            global.join("lib/node_modules/eslint"),
        ];
        for pkg in &pkgs {
            write(pkg, "package.json", r#"{"name":"eslint"}"#);
            write(pkg, "bin/eslint.js", "");
        }
        write(&global, "bin/.keep", "");
        let target = "../lib/node_modules/eslint/bin/eslint.js";
        std::os::unix::fs::symlink(target, global.join("bin/eslint")).expect("ln");
        let app = repo.join("packages/app");
        assert_eq!(find_module("eslint", &app, &repo).as_ref(), Some(&pkgs[0]));
        let on_path = find_on_path("eslint", global.join("bin").as_os_str());
        assert_eq!(on_path, pkgs[1].canonicalize().ok());
        assert_eq!(find_on_path("eslint", d.path().as_os_str()), None);
        let err = run(PRETTIER, &app, &app, &[], &app, Duration::ZERO).err();
        let want = "prettier not found in node_modules or on PATH";
        assert_eq!(err, Some(NodeError::Missing(want.into())));
    }
}
