//! What one `patchgate mcp` session keeps between `apply_patch` calls on a Cargo workspace, and
//! when it lets go: the package clippy is asked for (no `cargo metadata` again until a manifest
//! changes), and the shared target directory's build of a package no later patch touched. And
//! what the next call takes from the last one on any project: a package checker's baseline (the
//! original state is the state the last patch left, which clippy or go vet already checked), and
//! what a warm node host leaves for the next session (its tool's compiled code).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::checks::{check, require_all};
use crate::harness::{BIN, TestRepo};

/// A raw JSON-RPC session on the server's stdio, its stderr (timings on) in a file.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: i64,
    stderr: PathBuf,
}

impl Session {
    fn start(repo: &Path, stderr: PathBuf) -> Session {
        Session::start_with(repo, stderr, &[])
    }

    fn start_with(repo: &Path, stderr: PathBuf, env: &[(&str, &Path)]) -> Session {
        let mut child = Command::new(BIN)
            .args(["mcp"])
            .current_dir(repo)
            .envs(env.iter().copied())
            .env("PATCHGATE_TIMINGS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("spawn patchgate mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Session {
            child,
            stdin,
            stdout,
            next: 0,
            stderr,
        };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "warm", "version": "0"}}),
        );
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").expect("write");
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "the server closed stdout");
            let msg: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// `apply_patch` of one edit; the report, which must say applied.
    fn apply(&mut self, file: &str, old: &str, new: &str) -> Value {
        self.apply_edits(json!([{"file_path": file, "old_string": old, "new_string": new}]))
    }

    /// `apply_patch` of `edits`; the report, which must say applied.
    fn apply_edits(&mut self, edits: Value) -> Value {
        let msg = self.request(
            "tools/call",
            json!({"name": "apply_patch", "arguments": {"patch": {"edits": edits}}}),
        );
        let report = msg["result"]["structuredContent"].clone();
        assert_eq!(report["status"], "applied", "{msg:#}");
        report
    }

    /// How many timing lines so far end with `label`.
    fn marks(&self, label: &str) -> usize {
        std::fs::read_to_string(&self.stderr)
            .expect("stderr")
            .lines()
            .filter(|l| l.starts_with("patchgate timing:") && l.ends_with(label))
            .count()
    }

    /// How many package runs so far named the package `spec` (`name@version`): as the package
    /// the run was for, or along with it. Which of two packages' jobs takes cargo's lock first
    /// (and so leads the run) is a race, so a test counts both ways of being named.
    fn runs_naming(&self, spec: &str) -> usize {
        let led = format!("package run: clippy package {spec} ");
        let along = format!("package run: along {spec}");
        std::fs::read_to_string(&self.stderr)
            .expect("stderr")
            .lines()
            .filter(|l| l.starts_with("patchgate timing:"))
            .filter(|l| l.contains(&led) || l.ends_with(&along))
            .count()
    }

    /// How many clippy runs so far checked `state` (`patched` or `original`).
    fn clippy_runs(&self, state: &str) -> usize {
        std::fs::read_to_string(&self.stderr)
            .expect("stderr")
            .lines()
            .filter(|l| l.contains("package run: clippy ") && l.ends_with(state))
            .count()
    }

    fn close(mut self) {
        drop(self.stdin);
        let status = self.child.wait().expect("exit");
        assert!(status.success(), "{status:?}");
    }
}

const RUST_TOOLS: &[&str] = &["cargo", "rustfmt", "clippy"];

fn manifest(name: &str, version: &str, deps: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"{version}\"\nedition = \"2021\"\n\n[dependencies]\n{deps}"
    )
}

/// A workspace: `app` calls `engine` (a path dependency).
fn workspace() -> TestRepo {
    TestRepo::new()
        .file(
            "Cargo.toml",
            "[workspace]\nmembers = [\"app\", \"engine\"]\nresolver = \"2\"\n",
        )
        .file(".gitignore", "/target\n")
        .file("engine/Cargo.toml", manifest("engine", "0.1.0", ""))
        .file(
            "engine/src/lib.rs",
            "pub fn scale(a: i64, b: i64) -> i64 {\n    let s = a + b * 3;\n    s - 1\n}\n",
        )
        .file(
            "app/Cargo.toml",
            manifest("app", "0.1.0", "engine = { path = \"../engine\" }\n"),
        )
        .file(
            "app/src/lib.rs",
            "pub fn run(a: i64) -> i64 {\n    let t = engine::scale(a, 2);\n    t + 1\n}\n",
        )
        .commit()
}

/// Every file of `dir` whose name starts with `prefix`, with its modification time.
fn built(dir: &Path, prefix: &str) -> BTreeMap<String, SystemTime> {
    let found: BTreeMap<_, _> = std::fs::read_dir(dir)
        .expect("deps dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| {
            let mtime = e.metadata().expect("meta").modified().expect("mtime");
            (e.file_name().to_string_lossy().into_owned(), mtime)
        })
        .collect();
    assert!(!found.is_empty(), "no {prefix}* in {}", dir.display());
    found
}

#[test]
fn a_session_keeps_the_package_and_the_untouched_build_until_a_manifest_changes() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = workspace();
    let log = repo.path().join(".git/mcp-stderr.txt");
    let mut s = Session::start(repo.path(), log);
    let metadata = "cargo package: cargo metadata";
    let cached = "cargo package: cached";

    // 1. A patch of both packages: both built (cold), in one cargo run; one `cargo metadata`
    // answers for both (it describes the workspace).
    let r = s.apply_edits(json!([
        {"file_path": "engine/src/lib.rs", "old_string": "a + b * 3", "new_string": "b * 3 + a"},
        {"file_path": "app/src/lib.rs", "old_string": "t + 1", "new_string": "t + 2"}]));
    assert_eq!(check(&r, "engine/src/lib.rs", "clippy")["status"], "pass");
    assert_eq!(check(&r, "app/src/lib.rs", "clippy")["status"], "pass");
    let after_one = (s.marks(metadata), s.marks(cached));
    let deps = repo.path().join(".git/patchgate/cargo-target/debug/deps");
    let engine = built(&deps, "libengine-");

    // 2. A patch of `app` alone: the same target directory, engine's build reused as it is. Its
    // file, laid over the mirror by call 1 and written to the working tree since, holds the same
    // bytes: not copied again, so cargo does not check engine again. No `cargo metadata`.
    let r = s.apply("app/src/lib.rs", "t + 2", "t + 3");
    assert_eq!(check(&r, "app/src/lib.rs", "clippy")["status"], "pass");
    assert_eq!(
        built(&deps, "libengine-"),
        engine,
        "engine was checked again"
    );
    assert_eq!(after_one, (1, 1));
    assert_eq!((s.marks(metadata), s.marks(cached)), (1, 2));

    // 3. app's manifest changed (a new version): read again, and clippy is asked for
    // `app@0.2.0` (the cached `app@0.1.0` would match no package).
    repo.write(
        "app/Cargo.toml",
        manifest("app", "0.2.0", "engine = { path = \"../engine\" }\n"),
    );
    repo.git(&["commit", "-qam", "app 0.2.0"]);
    let r = s.apply("app/src/lib.rs", "t + 3", "t + 4");
    assert_eq!(check(&r, "app/src/lib.rs", "clippy")["status"], "pass");
    assert_eq!((s.marks(metadata), s.marks(cached)), (2, 2));

    // 4. The workspace root's manifest changed: read again too.
    repo.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"app\", \"engine\"]\nresolver = \"2\"\n\n[workspace.metadata.x]\ny = 1\n",
    );
    repo.git(&["commit", "-qam", "workspace metadata"]);
    let r = s.apply("app/src/lib.rs", "t + 4", "t + 5");
    assert_eq!(check(&r, "app/src/lib.rs", "clippy")["status"], "pass");
    assert_eq!((s.marks(metadata), s.marks(cached)), (3, 2));
    s.close();
}

/// A crate with a warning clippy gives before any patch (`&Vec<i64>` as an argument), so every
/// patched run has findings and needs the original state's.
fn warned_crate() -> TestRepo {
    TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"warned\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        )
        .file(".gitignore", "/target\n")
        .file(
            "src/lib.rs",
            "pub mod calc;\n\npub fn total(xs: &Vec<i64>) -> i64 {\n    xs.iter().sum()\n}\n",
        )
        .file("src/calc.rs", "pub fn step(a: i64) -> i64 {\n    a + 1\n}\n")
        .commit()
}

/// A session's next patch starts from the state its last one left: the baseline clippy run of
/// call 2 (the original state, with the pre-existing warning) is call 1's patched run, taken
/// as it was instead of run again. A new warning is still refused with it.
#[test]
fn the_next_calls_baseline_is_the_last_calls_patched_run() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = warned_crate();
    let log = repo.path().join(".git/mcp-stderr.txt");
    let mut s = Session::start(repo.path(), log);
    let remembered = "package baseline: remembered";

    // 1. The warning is there before and after: the baseline is run (nothing to take yet).
    let r = s.apply("src/calc.rs", "a + 1", "a + 2");
    assert_eq!(check(&r, "src/calc.rs", "clippy")["status"], "pass");
    assert_eq!(s.marks(remembered), 0);

    // 2. Its original is call 1's patched state: taken, not run.
    let r = s.apply("src/calc.rs", "a + 2", "a + 3");
    assert_eq!(check(&r, "src/calc.rs", "clippy")["status"], "pass");
    assert_eq!(s.marks(remembered), 1);

    // 3. A new warning of the same kind, in another function: new against the baseline taken.
    let msg = s.request(
        "tools/call",
        json!({"name": "apply_patch", "arguments": {"patch": {"edits": [{
            "file_path": "src/calc.rs",
            "old_string": "pub fn step(a: i64) -> i64 {",
            "new_string": "pub fn count(xs: &Vec<i64>) -> usize {\n    xs.len()\n}\n\npub fn step(a: i64) -> i64 {"}]}}}),
    );
    let report = &msg["result"]["structuredContent"];
    assert_eq!(report["status"], "checks_failed", "{msg:#}");
    let c = check(report, "src/calc.rs", "clippy");
    assert_eq!(c["status"], "fail", "{c:#}");
    assert!(
        c["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["new"] == true && f["line"] == 1),
        "{c:#}"
    );
    assert_eq!(s.marks(remembered), 2);
    assert_eq!(
        repo.read_str("src/calc.rs"),
        "pub fn step(a: i64) -> i64 {\n    a + 3\n}\n"
    );
    s.close();
}

/// The same for `go vet` over a module with a warning before any patch (a `Printf` verb that
/// does not match its argument).
#[test]
fn a_go_modules_next_baseline_is_the_last_calls_patched_run() {
    if !require_all(&["go", "gofmt"]) {
        return;
    }
    let repo = TestRepo::new()
        .file("go.mod", "module example.com/w\n\ngo 1.21\n")
        .file(
            "main.go",
            "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"%d\\n\", \"x\")\n\tfmt.Println(step(1))\n}\n",
        )
        .file("step.go", "package main\n\nfunc step(a int) int {\n\treturn a + 1\n}\n")
        .commit();
    let log = repo.path().join(".git/mcp-stderr.txt");
    let mut s = Session::start(repo.path(), log);
    let remembered = "package baseline: remembered";
    let r = s.apply("step.go", "a + 1", "a + 2");
    assert_eq!(check(&r, "step.go", "go-lint")["status"], "pass");
    assert_eq!(s.marks(remembered), 0);
    let r = s.apply("step.go", "a + 2", "a + 3");
    assert_eq!(check(&r, "step.go", "go-lint")["status"], "pass");
    assert_eq!(s.marks(remembered), 1);
    s.close();
}

/// A patch across both crates of a workspace with a warning before it, so that each state is
/// checked: one cargo run per state names both packages (`-p app -p engine`: the shared crate
/// built once, the packages side by side), and the other package's job takes its findings. The
/// next call's baselines are both that run's. A new warning is still refused.
#[test]
fn a_patch_across_a_workspace_is_one_cargo_run_per_state() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = workspace();
    repo.write(
        "engine/src/lib.rs",
        "pub fn scale(a: i64, b: i64) -> i64 {\n    let s = a + b * 3;\n    s - 1\n}\n\npub fn total(xs: &Vec<i64>) -> i64 {\n    xs.iter().sum()\n}\n",
    );
    repo.git(&["commit", "-qam", "a warning"]);
    let log = repo.path().join(".git/mcp-stderr.txt");
    let mut s = Session::start(repo.path(), log);
    let shared = "package run: shared";
    let remembered = "package baseline: remembered";

    // 1. Patched and original state: a cargo run each, for both packages.
    let r = s.apply_edits(json!([
        {"file_path": "engine/src/lib.rs", "old_string": "a + b * 3", "new_string": "b * 3 + a"},
        {"file_path": "app/src/lib.rs", "old_string": "t + 1", "new_string": "t + 2"}]));
    let engine = check(&r, "engine/src/lib.rs", "clippy");
    assert_eq!(engine["status"], "pass", "{r:#}");
    assert_eq!(engine["findings"][0]["new"], false, "{r:#}");
    assert_eq!(check(&r, "app/src/lib.rs", "clippy")["status"], "pass");
    assert_eq!(
        (s.clippy_runs("patched"), s.clippy_runs("original")),
        (1, 1)
    );
    assert_eq!(s.marks(shared), 2);

    // 2. Both baselines are call 1's patched run; the patched state is one run again, and the
    // warning it adds in `app` is new.
    let msg = s.request(
        "tools/call",
        json!({"name": "apply_patch", "arguments": {"patch": {"edits": [
            {"file_path": "engine/src/lib.rs", "old_string": "s - 1", "new_string": "s - 2"},
            {"file_path": "app/src/lib.rs", "old_string": "pub fn run(",
             "new_string": "pub fn count(xs: &Vec<i64>) -> usize {\n    xs.len()\n}\n\npub fn run("}]}}}),
    );
    let report = &msg["result"]["structuredContent"];
    assert_eq!(report["status"], "checks_failed", "{msg:#}");
    let app = check(report, "app/src/lib.rs", "clippy");
    assert_eq!(app["status"], "fail", "{app:#}");
    assert_eq!(
        check(report, "engine/src/lib.rs", "clippy")["status"],
        "pass"
    );
    assert_eq!(
        (s.clippy_runs("patched"), s.clippy_runs("original")),
        (2, 1)
    );
    assert_eq!(s.marks(remembered), 2);

    // 3. engine's version bumped (app's manifests unchanged): the workspace is read again, and
    // the run names `engine@0.2.0`, not the `engine@0.1.0` the session knew.
    repo.write("engine/Cargo.toml", manifest("engine", "0.2.0", ""));
    repo.git(&["commit", "-qam", "engine 0.2.0"]);
    let r = s.apply_edits(json!([
        {"file_path": "engine/src/lib.rs", "old_string": "s - 1", "new_string": "s - 3"},
        {"file_path": "app/src/lib.rs", "old_string": "t + 2", "new_string": "t + 3"}]));
    assert_eq!(
        check(&r, "engine/src/lib.rs", "clippy")["status"],
        "pass",
        "{r:#}"
    );
    assert_eq!(
        check(&r, "app/src/lib.rs", "clippy")["status"],
        "pass",
        "{r:#}"
    );
    assert_eq!(s.clippy_runs("patched"), 3);
    // Both runs (the original's too: the version bump made a state no run saw) named engine,
    // as the package it ran for or along with app (which job leads is a race).
    assert_eq!(s.runs_naming("engine@0.2.0"), 2);
    assert_eq!(
        s.runs_naming("engine@0.1.0"),
        3,
        "calls 1 and 2's runs only"
    );

    // 4. A patch of app's code and of a text file in engine: engine has no clippy job, and app's
    // run does not check it along.
    repo.write("engine/NOTES.md", "notes\n");
    repo.git(&["add", "engine/NOTES.md"]);
    repo.git(&["commit", "-qm", "notes"]);
    let r = s.apply_edits(json!([
        {"file_path": "engine/NOTES.md", "old_string": "notes", "new_string": "more notes"},
        {"file_path": "app/src/lib.rs", "old_string": "t + 3", "new_string": "t + 4"}]));
    assert_eq!(
        check(&r, "app/src/lib.rs", "clippy")["status"],
        "pass",
        "{r:#}"
    );
    assert_eq!(
        (s.clippy_runs("patched"), s.runs_naming("engine@0.2.0")),
        (4, 2)
    );
    s.close();
}

/// A warm node host keeps the compiled code of its tool's modules (on a node without a compile
/// cache of its own) once it has answered, not at its exit: the server kills the hosts' process
/// groups, so a host never exits by itself.
#[test]
fn a_warm_node_host_keeps_its_compiled_code_before_it_is_stopped() {
    if !require_all(&["prettier", "eslint", "@eslint/js"]) {
        return;
    }
    let repo = TestRepo::new();
    crate::checks::node_setup(&repo);
    let repo = repo.commit();
    let cache = tempfile::tempdir().expect("cache home");
    let log = tempfile::NamedTempFile::new().expect("stderr file");
    let mut s = Session::start_with(
        repo.path(),
        log.path().to_path_buf(),
        &[("XDG_CACHE_HOME", cache.path())],
    );
    let report = s.apply("src/app.js", "  return a + b;\n", "  return b + a;\n");
    assert_eq!(
        check(&report, "src/app.js", "eslint")["status"],
        "pass",
        "{report:#}"
    );
    let node_caches = crate::checks::node_keeps_compiled_code();
    let root = cache.path().join("patchgate/node-code");
    let bundles = || -> Vec<PathBuf> {
        let versions = std::fs::read_dir(&root).into_iter().flatten().flatten();
        let files = versions.flat_map(|v| std::fs::read_dir(v.path()).into_iter().flatten());
        files
            .flatten()
            .map(|f| f.path())
            .filter(|p| p.extension().is_some_and(|e| e == "bin"))
            .collect()
    };
    // Written right after the answer: a moment to finish writing.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !node_caches && bundles().is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kept = bundles();
    if node_caches {
        assert!(kept.is_empty(), "node keeps its own: {kept:?}");
    } else {
        // eslint's host's (prettier's modules are ES modules, which this cache does not hold).
        assert_eq!(kept.len(), 1, "{kept:?}");
    }
    s.close();
}
