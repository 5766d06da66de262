//! The checkers, live (docs/checks.md): the real ruff, prettier, eslint, rustfmt, clippy, gofmt and
//! go vet, and custom checkers, run by the real binary on real temporary git repositories.
//!
//! Every test that needs a checker asks [`require`] first: locally a missing checker skips the
//! test with a loud `SKIPPED:` line on stderr; in CI (`CI=true`) it fails the test. The pinned
//! checkers come from `scripts/install-checkers` (`scripts/test` puts them on PATH).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{BIN, Run, TestRepo, assert_subset, on_path, sha256_hex, tools_node_modules};

// ---------------------------------------------------------------------------------------------
// Tools

/// Whether `tool` (a program, `clippy`, or a node package of the pinned tools) is available. When
/// it is not: in CI the test fails; locally it prints a loud `SKIPPED: <why>` and the test returns.
pub(crate) fn require(tool: &str) -> bool {
    let missing = match tool {
        "eslint" | "prettier" | "@eslint/js" => {
            let pkg = tools_node_modules().join(tool).join("package.json");
            if on_path("node").is_none() {
                Some("node is not on PATH".to_string())
            } else if !pkg.is_file() {
                Some(format!(
                    "{tool} is not installed ({} is missing)",
                    pkg.display()
                ))
            } else {
                None
            }
        }
        "clippy" => {
            let ok = Command::new("cargo")
                .args(["clippy", "--version"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            (!ok).then(|| "cargo clippy is not installed (rustup component add clippy)".to_string())
        }
        program => on_path(program)
            .is_none()
            .then(|| format!("{program} is not on PATH")),
    };
    let Some(why) = missing else {
        return true;
    };
    let test = std::thread::current().name().unwrap_or("?").to_string();
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: {why} (CI=true: every checker the tests drive must be installed; see scripts/install-checkers)"
    );
    // Straight to the process's stderr: libtest captures `eprintln!` of passing tests.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {test}: {why} (run scripts/test, or export PATH=\"$(scripts/install-checkers):$PATH\")"
    );
    false
}

pub(crate) fn require_all(tools: &[&str]) -> bool {
    tools.iter().all(|t| require(t))
}

// ---------------------------------------------------------------------------------------------
// Running patchgate and reading its report

/// A one-edit patch, as JSON (no YAML quoting to get wrong around tabs, quotes and `%`).
pub(crate) fn patch(file: &str, old: &str, new: &str) -> String {
    json!({"edits": [{"file_path": file, "old_string": old, "new_string": new}]}).to_string()
}

/// The `checks[]` entry of `checker` on `path`.
#[track_caller]
pub(crate) fn check<'a>(report: &'a Value, path: &str, checker: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|cs| {
            cs.iter()
                .find(|c| c["path"] == path && c["checker"] == checker)
        })
        .unwrap_or_else(|| panic!("no {checker} report on {path} in:\n{report:#}"))
}

#[track_caller]
pub(crate) fn findings(c: &Value) -> &Vec<Value> {
    c["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings array in {c:#}"))
}

/// Runs the real binary in `dir` with `PATH` replaced (when given), killing it and failing the
/// test if it has not finished after `limit`.
fn run_bounded(dir: &Path, args: &[&OsStr], path_var: Option<&OsStr>, limit: Duration) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(p) = path_var {
        cmd.env("PATH", p);
    }
    let mut child = cmd.spawn().expect("patchgate runs");
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("patchgate {args:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// `patchgate apply <patch> --format json ARGS` with `PATH` replaced.
pub(crate) fn apply_with_path(
    repo: &TestRepo,
    patch: &str,
    args: &[&str],
    path_var: &OsStr,
) -> Run {
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), patch).expect("write patch");
    let mut all: Vec<&OsStr> = vec![
        OsStr::new("apply"),
        pfile.path().as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ];
    all.extend(args.iter().map(OsStr::new));
    run_bounded(repo.path(), &all, Some(path_var), Duration::from_secs(120))
}

// ---------------------------------------------------------------------------------------------
// One fixture per language

/// A tiny project of one language, and the edits the scenarios apply to it.
struct Lang {
    tools: &'static [&'static str],
    /// Writes the project (the repository is committed afterwards).
    setup: fn(&TestRepo),
    format_checker: &'static str,
    lint_checker: &'static str,
    /// A clean file.
    file: &'static str,
    /// An edit of `file` that adds one lint finding at `lint_line`, whose rule or message
    /// contains `lint_says`.
    lint_edit: (&'static str, &'static str),
    lint_line: u64,
    lint_says: &'static str,
    /// A file that already has one finding at `legacy_line`, and an edit of another of its lines
    /// that adds none.
    legacy: &'static str,
    legacy_edit: (&'static str, &'static str),
    legacy_line: u64,
    /// An edit of `file` whose new text the formatter rewrites to `formatted`.
    format_edit: (&'static str, &'static str),
    formatted: &'static str,
}

impl Lang {
    fn repo(&self) -> TestRepo {
        let repo = TestRepo::new();
        (self.setup)(&repo);
        repo.commit()
    }
}

fn python_setup(repo: &TestRepo) {
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"E\", \"F\"]\n\n[tool.ruff.format]\n",
    );
    repo.write(
        "app.py",
        "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\n",
    );
    repo.write("legacy.py", "import os\n\n\ndef other():\n    return 2\n");
}

const PYTHON: Lang = Lang {
    tools: &["ruff"],
    setup: python_setup,
    format_checker: "ruff-format",
    lint_checker: "ruff",
    file: "app.py",
    lint_edit: ("    return a + b\n", "    total = 0\n    return a + b\n"),
    lint_line: 2,
    lint_says: "F841",
    legacy: "legacy.py",
    legacy_edit: ("    return 2\n", "    return 3\n"),
    legacy_line: 1,
    format_edit: ("    return a + b\n", "    return a+b+1\n"),
    formatted: "    return a + b + 1\n",
};

/// A module JS project with the pinned eslint (recommended rules) and prettier, linked in.
pub(crate) fn node_setup(repo: &TestRepo) {
    repo.write(
        "package.json",
        "{\"name\": \"demo\", \"private\": true, \"type\": \"module\"}\n",
    );
    repo.write(
        "eslint.config.js",
        "import js from \"@eslint/js\";\n\nexport default [js.configs.recommended];\n",
    );
    repo.write(".prettierrc.json", "{}\n");
    repo.write(".gitignore", "node_modules\n");
    std::os::unix::fs::symlink(tools_node_modules(), repo.path().join("node_modules"))
        .expect("symlink node_modules");
    repo.write(
        "src/app.js",
        "export function add(a, b) {\n  return a + b;\n}\n",
    );
    repo.write(
        "src/legacy.js",
        "const old = 1;\n\nexport function other() {\n  return 2;\n}\n",
    );
}

const NODE: Lang = Lang {
    tools: &["prettier", "eslint", "@eslint/js"],
    setup: node_setup,
    format_checker: "prettier",
    lint_checker: "eslint",
    file: "src/app.js",
    lint_edit: (
        "  return a + b;\n",
        "  const unused = 1;\n  return a + b;\n",
    ),
    lint_line: 2,
    lint_says: "no-unused-vars",
    legacy: "src/legacy.js",
    legacy_edit: ("  return 2;\n", "  return 3;\n"),
    legacy_line: 1,
    format_edit: ("  return a + b;\n", "  return a+b+1;\n"),
    formatted: "  return a + b + 1;\n",
};

fn rust_setup(repo: &TestRepo) {
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    repo.write(".gitignore", "/target\n");
    repo.write(
        "src/lib.rs",
        "pub mod legacy;\n\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    repo.write(
        "src/legacy.rs",
        "pub fn old() -> i32 {\n    return 1;\n}\n\npub fn other() -> i32 {\n    2\n}\n",
    );
}

const RUST: Lang = Lang {
    tools: &["cargo", "rustfmt", "clippy"],
    setup: rust_setup,
    format_checker: "rustfmt",
    lint_checker: "clippy",
    file: "src/lib.rs",
    lint_edit: ("    a + b\n", "    return a + b;\n"),
    lint_line: 4,
    lint_says: "clippy::needless_return",
    legacy: "src/legacy.rs",
    legacy_edit: ("    2\n", "    3\n"),
    legacy_line: 2,
    format_edit: ("    a + b\n", "    a+b+1\n"),
    formatted: "    a + b + 1\n",
};

fn go_setup(repo: &TestRepo) {
    repo.write("go.mod", "module example.com/demo\n\ngo 1.21\n");
    repo.write(
        "main.go",
        "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
    );
    repo.write(
        "legacy.go",
        "package main\n\nimport \"fmt\"\n\nfunc legacy() {\n\tfmt.Printf(\"%d\\n\", \"old\")\n}\n\nfunc other() int {\n\treturn 2\n}\n",
    );
}

const GO: Lang = Lang {
    tools: &["go", "gofmt"],
    setup: go_setup,
    format_checker: "gofmt",
    lint_checker: "go-lint",
    file: "main.go",
    lint_edit: (
        "\tfmt.Println(\"hi\")\n",
        "\tfmt.Println(\"hi\")\n\tfmt.Printf(\"%d\\n\", \"x\")\n",
    ),
    lint_line: 7,
    lint_says: "Printf format %d has arg \"x\" of wrong type string",
    legacy: "legacy.go",
    legacy_edit: ("\treturn 2\n", "\treturn 3\n"),
    legacy_line: 6,
    format_edit: ("\tfmt.Println(\"hi\")\n", "\tfmt.Println( \"hello\" )\n"),
    formatted: "\tfmt.Println(\"hello\")\n",
};

// ---------------------------------------------------------------------------------------------
// The four scenarios, for each language

/// (1) A patch that introduces a lint finding is rolled back: exit 1, `checks_failed`, the finding
/// at its line marked new, and nothing on disk (or in git) changed.
fn new_finding_is_rolled_back(lang: &Lang) {
    if !require_all(lang.tools) {
        return;
    }
    let repo = lang.repo();
    let before = repo.snapshot();
    let original = repo.read_str(lang.file);
    let run = repo.apply(&patch(lang.file, lang.lint_edit.0, lang.lint_edit.1), &[]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_eq!(report["files"], json!([]), "{report:#}");
    let lint = check(&report, lang.file, lang.lint_checker);
    assert_eq!(lint["status"], "fail", "{lint:#}");
    let found = findings(lint);
    assert_eq!(
        found.len(),
        1,
        "exactly the one finding the patch added: {lint:#}"
    );
    assert_subset(
        &found[0],
        &json!({"line": lang.lint_line, "new": true}),
        "finding",
    );
    let says = format!(
        "{} {}",
        found[0]["rule"].as_str().unwrap_or(""),
        found[0]["message"].as_str().unwrap_or("")
    );
    assert!(says.contains(lang.lint_says), "{says}");
    // The formatter had nothing to say: the lint finding alone blocked the patch.
    assert_eq!(
        check(&report, lang.file, lang.format_checker)["status"],
        "pass",
        "{report:#}"
    );
    assert_eq!(
        repo.read_str(lang.file),
        original,
        "the rejected patch was written"
    );
    assert_eq!(
        repo.snapshot(),
        before,
        "the working tree, index or refs changed"
    );
}

/// (2) A patch in a file that already had a finding, adding none: passes under `--gate new` (the
/// finding reported as old), fails under `--gate any`.
fn preexisting_finding_blocks_only_gate_any(lang: &Lang) {
    if !require_all(lang.tools) {
        return;
    }
    let repo = lang.repo();
    let original = repo.read_str(lang.legacy);
    let p = patch(lang.legacy, lang.legacy_edit.0, lang.legacy_edit.1);
    let old_finding = json!([{"line": lang.legacy_line, "new": false}]);

    let any = repo.apply(&p, &["--gate", "any"]);
    any.assert_code(1);
    let report = any.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    let lint = check(&report, lang.legacy, lang.lint_checker);
    assert_eq!(lint["status"], "fail", "{lint:#}");
    assert_subset(&lint["findings"], &old_finding, "findings under --gate any");
    assert_eq!(
        repo.read_str(lang.legacy),
        original,
        "--gate any wrote the file"
    );

    let new = repo.apply(&p, &["--gate", "new"]);
    new.assert_code(0);
    let report = new.json();
    assert_eq!(report["status"], "applied", "{report:#}");
    let lint = check(&report, lang.legacy, lang.lint_checker);
    assert_eq!(lint["status"], "pass", "{lint:#}");
    assert_subset(&lint["findings"], &old_finding, "findings under --gate new");
    assert_eq!(
        repo.read_str(lang.legacy),
        original.replacen(lang.legacy_edit.0, lang.legacy_edit.1, 1)
    );
}

/// (3) A patch that breaks formatting fails, with the formatter's diff in `checks[].diff`.
fn broken_formatting_fails_with_the_diff(lang: &Lang) {
    if !require_all(lang.tools) {
        return;
    }
    let repo = lang.repo();
    let original = repo.read_str(lang.file);
    let (old, bad) = lang.format_edit;
    let run = repo.apply(&patch(lang.file, old, bad), &[]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    let fmt = check(&report, lang.file, lang.format_checker);
    assert_eq!(fmt["kind"], "format", "{fmt:#}");
    assert_eq!(fmt["status"], "fail", "{fmt:#}");
    let diff = fmt["diff"]
        .as_str()
        .unwrap_or_else(|| panic!("no diff: {fmt:#}"));
    for want in [
        format!("--- a/{}\n+++ b/{}\n", lang.file, lang.file),
        format!("\n-{bad}"),
        format!("\n+{}", lang.formatted),
    ] {
        assert!(diff.contains(&want), "the diff lacks {want:?}:\n{diff}");
    }
    assert!(findings(fmt).iter().any(|f| f["new"] == true), "{fmt:#}");
    // Only the formatter objected.
    assert_eq!(
        check(&report, lang.file, lang.lint_checker)["status"],
        "pass",
        "{report:#}"
    );
    assert_eq!(
        repo.read_str(lang.file),
        original,
        "the rejected patch was written"
    );
}

/// (4) The same patch with `--fix` passes; the formatted content is what gets written, and with
/// `--commit` what gets committed.
fn fix_writes_and_commits_formatted_content(lang: &Lang) {
    if !require_all(lang.tools) {
        return;
    }
    let (old, bad) = lang.format_edit;
    let p = patch(lang.file, old, bad);
    for commit in [false, true] {
        let repo = lang.repo();
        let head = repo.head();
        let original = repo.read_str(lang.file);
        let expected = original.replacen(old, lang.formatted, 1);
        let args: &[&str] = if commit {
            &["--fix", "--commit", "-m", "formatted"]
        } else {
            &["--fix"]
        };
        let run = repo.apply(&p, args);
        run.assert_code(0);
        let report = run.json();
        assert_eq!(
            report["status"],
            if commit { "committed" } else { "applied" },
            "{report:#}"
        );
        let fmt = check(&report, lang.file, lang.format_checker);
        assert_eq!(fmt["status"], "pass", "{fmt:#}");
        assert!(
            fmt["note"].as_str().is_some_and(|n| n.contains("--fix")),
            "{fmt:#}"
        );
        assert_eq!(
            check(&report, lang.file, lang.lint_checker)["status"],
            "pass",
            "{report:#}"
        );
        assert_eq!(
            repo.read_str(lang.file),
            expected,
            "written content (commit: {commit})"
        );
        // The reported digest is of the formatted bytes, not of what the patch asked for.
        let file = report["files"]
            .as_array()
            .and_then(|fs| fs.iter().find(|f| f["path"] == lang.file))
            .unwrap_or_else(|| panic!("{} not in files: {report:#}", lang.file));
        assert_eq!(
            file["sha256"].as_str(),
            Some(crate::harness::sha256_hex(&repo.read(lang.file)).as_str()),
            "{report:#}"
        );
        let at_head = repo.git(&["show", &format!("HEAD:{}", lang.file)]);
        if commit {
            assert_eq!(at_head, expected, "committed content");
            assert_eq!(repo.git(&["status", "--porcelain", "--", lang.file]), "");
        } else {
            assert_eq!(repo.head(), head);
            assert_eq!(at_head, original, "HEAD moved without --commit");
        }
    }
}

macro_rules! language_tests {
    ($($module:ident: $lang:expr;)*) => {$(
        mod $module {
            #[test]
            fn new_lint_finding_is_rolled_back() {
                super::new_finding_is_rolled_back(&$lang);
            }

            #[test]
            fn preexisting_finding_passes_gate_new_and_fails_gate_any() {
                super::preexisting_finding_blocks_only_gate_any(&$lang);
            }

            #[test]
            fn broken_formatting_fails_with_the_formatter_diff() {
                super::broken_formatting_fails_with_the_diff(&$lang);
            }

            #[test]
            fn fix_writes_and_commits_formatted_content() {
                super::fix_writes_and_commits_formatted_content(&$lang);
            }
        }
    )*};
}

language_tests! {
    python: super::PYTHON;
    node: super::NODE;
    rust: super::RUST;
    go: super::GO;
}

// ---------------------------------------------------------------------------------------------
// Missing checkers, timeouts, custom checkers

#[test]
fn a_missing_checker_is_a_note_and_blocks_only_with_require_tools() {
    // No checker needed: this is about ruff being absent.
    let repo = PYTHON.repo();
    let scratch = tempfile::tempdir().expect("tempdir");
    let path = crate::harness::path_without("ruff", scratch.path());
    assert!(
        std::env::split_paths(&path).any(|d| d.join("git").is_file()),
        "git must stay on PATH"
    );
    let original = repo.read_str("app.py");
    let p = patch("app.py", PYTHON.lint_edit.0, PYTHON.lint_edit.1);
    let missing = |report: &Value| {
        for checker in ["ruff-format", "ruff"] {
            let c = check(report, "app.py", checker);
            assert_eq!(c["status"], "missing", "{c:#}");
            let note = c["note"]
                .as_str()
                .unwrap_or_else(|| panic!("no note: {c:#}"));
            assert!(
                !note.contains('\n') && !note.is_empty(),
                "one line: {note:?}"
            );
            assert!(note.contains("ruff not found"), "{note}");
        }
    };

    let run = apply_with_path(&repo, &p, &["--require-tools"], &path);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    missing(&report);
    assert_eq!(repo.read_str("app.py"), original);

    let run = apply_with_path(&repo, &p, &[], &path);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "applied", "{report:#}");
    missing(&report);
    assert_eq!(
        repo.read_str("app.py"),
        original.replacen(PYTHON.lint_edit.0, PYTHON.lint_edit.1, 1)
    );
}

/// A TOML basic string (JSON's escapes are valid TOML).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

fn toml_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| toml_str(s)).collect();
    format!("[{}]", quoted.join(", "))
}

/// Whether process `pid` still runs (a zombie, killed but not yet reaped, counts as dead).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

#[test]
fn a_hanging_custom_checker_times_out_and_its_children_are_killed() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let pidfile = scratch.path().join("pid");
    let script = format!("sleep 30 & echo $! > '{}'; sleep 30", pidfile.display());
    let config = format!(
        "[checkers.hang]\ncommand = {}\nglobs = [\"*.txt\"]\ntimeout = 1\n",
        toml_list(&["sh", "-c", &script, "{files}"])
    );
    let repo = TestRepo::new()
        .file(".patchgate.toml", config)
        .file("notes.txt", "one\n")
        .commit();
    let p = patch("notes.txt", "one\n", "one\ntwo\n");
    for (args, code) in [(&["--require-tools"][..], 1), (&[][..], 0)] {
        let _ = std::fs::remove_file(&pidfile);
        let pfile = tempfile::NamedTempFile::new().expect("patch file");
        std::fs::write(pfile.path(), &p).expect("write patch");
        let mut all: Vec<&OsStr> = ["apply", "--format", "json"].map(OsStr::new).to_vec();
        all.push(pfile.path().as_os_str());
        all.extend(args.iter().map(OsStr::new));
        // It must finish (long) before the checker's own 30 s sleeps would.
        let run = run_bounded(repo.path(), &all, None, Duration::from_secs(25));
        run.assert_code(code);
        let report = run.json();
        let c = check(&report, "notes.txt", "hang");
        assert_eq!(c["status"], "timeout", "{c:#}");
        assert!(
            c["note"].as_str().is_some_and(|n| n.contains("killed")),
            "{c:#}"
        );
        let pid: u32 = std::fs::read_to_string(&pidfile)
            .expect("the checker wrote its background child's pid")
            .trim()
            .parse()
            .expect("a pid");
        // SIGKILL is delivered asynchronously: give the kernel a moment before looking.
        let waited = Instant::now();
        while alive(pid) && waited.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let survived = alive(pid);
        if survived {
            // Our own grandchild: do not leave it behind.
            // SAFETY: kill(2) on one pid we know, no memory involved.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
        assert!(
            !survived,
            "the checker's background sleep (pid {pid}) survived the timeout"
        );
    }
    assert_eq!(repo.read_str("notes.txt"), "one\ntwo\n");
}

/// A repository with a custom checker and a text file that already has a finding on line 1; the
/// patch adds one on line 3.
fn custom_checker_repo(config: &str) -> (TestRepo, Run) {
    let repo = TestRepo::new()
        .file(".patchgate.toml", config)
        .file("docs/notes.txt", "TODO FIXME: an old one\nplain\n")
        .file("other.md", "TODO FIXME: not matched by the globs\n")
        .commit();
    let run = repo.apply(
        &patch(
            "docs/notes.txt",
            "plain\n",
            "plain\nTODO FIXME: a new one\n",
        ),
        &[],
    );
    (repo, run)
}

fn assert_custom_findings(repo: &TestRepo, run: &Run, checker: &str, rule: &str) {
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_eq!(
        report["checks"].as_array().map(Vec::len),
        Some(1),
        "{report:#}"
    );
    let c = check(&report, "docs/notes.txt", checker);
    assert_eq!(c["status"], "fail", "{c:#}");
    assert_subset(
        &c["findings"],
        &json!([
            {"line": 1, "rule": rule, "new": false},
            {"line": 3, "rule": rule, "new": true},
        ]),
        "findings",
    );
    assert_eq!(
        repo.read_str("docs/notes.txt"),
        "TODO FIXME: an old one\nplain\n"
    );
}

#[test]
fn a_custom_checker_with_regex_output_reports_findings_at_their_lines() {
    let script = "grep -Hn TODO \"$@\" || true";
    let config = format!(
        "[checkers.todo]\ncommand = {}\nglobs = [\"docs/**/*.txt\"]\noutput = \"regex\"\npattern = {}\n",
        toml_list(&["sh", "-c", script, "todo", "{files}"]),
        toml_str(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<rule>TODO)(?P<message>.*)$"),
    );
    let (repo, run) = custom_checker_repo(&config);
    assert_custom_findings(&repo, &run, "todo", "TODO");
}

#[test]
fn a_custom_checker_with_json_output_reports_findings_at_their_lines() {
    let script = r#"awk '/FIXME/ { printf "{\"file\": \"%s\", \"line\": %d, \"rule\": \"fixme\", \"message\": \"a FIXME\"}\n", FILENAME, FNR }' "$@""#;
    let config = format!(
        "[checkers.fixme]\ncommand = {}\nglobs = [\"*.txt\"]\noutput = \"json\"\n",
        toml_list(&["sh", "-c", script, "fixme", "{files}"]),
    );
    let (repo, run) = custom_checker_repo(&config);
    assert_custom_findings(&repo, &run, "fixme", "fixme");
}

// ---------------------------------------------------------------------------------------------
// A monorepo, check --staged, the baseline cache

#[test]
fn a_monorepo_gives_each_file_its_own_checkers_and_detect_explains_them() {
    if !require_all(&[
        "ruff",
        "prettier",
        "eslint",
        "@eslint/js",
        "cargo",
        "rustfmt",
        "clippy",
        "go",
        "gofmt",
    ]) {
        return;
    }
    let repo = TestRepo::new();
    for (dir, lang) in [("py", &PYTHON), ("web", &NODE), ("rs", &RUST), ("go", &GO)] {
        // The language's fixture, built in a scratch repository, then moved into its folder.
        let project = TestRepo::new();
        (lang.setup)(&project);
        std::fs::remove_dir_all(project.path().join(".git")).expect("drop the scratch .git");
        let dest = repo.path().join(dir);
        std::fs::create_dir_all(&dest).expect("mkdir");
        crate::harness::copy_tree(project.path(), &dest);
    }
    let repo = repo.commit();
    let edits = json!({"edits": [
        {"file_path": "py/app.py", "old_string": "a + b", "new_string": "a - b"},
        {"file_path": "web/src/app.js", "old_string": "a + b", "new_string": "a - b"},
        {"file_path": "rs/src/lib.rs", "old_string": "a + b", "new_string": "a - b"},
        {"file_path": "go/main.go", "old_string": "\"hi\"", "new_string": "\"hello\""},
    ]});
    let run = repo.apply(&edits.to_string(), &[]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "applied", "{report:#}");
    let mut per_path: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for c in report["checks"].as_array().expect("checks") {
        assert_eq!(c["status"], "pass", "{c:#}");
        per_path
            .entry(c["path"].as_str().expect("path").to_string())
            .or_default()
            .push(c["checker"].as_str().expect("checker").to_string());
    }
    let want: std::collections::BTreeMap<String, Vec<String>> = [
        ("go/main.go", ["gofmt", "go-lint", "references", "syntax"]),
        ("py/app.py", ["ruff-format", "references", "ruff", "syntax"]),
        (
            "rs/src/lib.rs",
            ["rustfmt", "clippy", "references", "syntax"],
        ),
        (
            "web/src/app.js",
            ["prettier", "eslint", "references", "syntax"],
        ),
    ]
    .into_iter()
    .map(|(p, cs)| (p.to_string(), cs.map(String::from).to_vec()))
    .collect();
    assert_eq!(per_path, want, "{report:#}");

    let detect = repo.run(&["detect", ".", "--format", "json"]);
    detect.assert_code(0);
    let got = detect.json();
    let mut entries: Vec<&Value> = got.as_array().expect("a list").iter().collect();
    entries.sort_by_key(|e| e["lang"].as_str().unwrap_or("").to_string());
    let expect = |lang: &str, dir: &str, marker: &str, checkers: [&str; 4]| {
        json!({
            "lang": lang,
            "project": {"lang": lang, "rel_root": dir, "marker": marker},
            "checkers": checkers,
            "reason": format!("{lang} file in the project at {dir}/ (found {marker})"),
        })
    };
    assert_subset(
        &json!(entries),
        &json!([
            expect(
                "go",
                "go",
                "go.mod",
                ["syntax", "references", "gofmt", "go-lint"]
            ),
            expect(
                "node",
                "web",
                "package.json",
                ["syntax", "references", "prettier", "eslint"]
            ),
            expect(
                "python",
                "py",
                "pyproject.toml",
                ["syntax", "references", "ruff-format", "ruff"]
            ),
            expect(
                "rust",
                "rs",
                "Cargo.toml",
                ["syntax", "references", "rustfmt", "clippy"]
            ),
        ]),
        "detect",
    );
    // Every checker considered is listed: used ones with their program found, the others with
    // the reason they are not used.
    for e in &entries {
        for c in e["considered"].as_array().expect("considered") {
            match c["verdict"].as_str() {
                Some("used") => assert_eq!(c["available"], true, "{c:#}"),
                Some("not_used") => {
                    assert!(c["why"].as_str().is_some_and(|w| !w.is_empty()), "{c:#}")
                }
                _ => panic!("no verdict: {c:#}"),
            }
        }
    }
    let python = entries
        .iter()
        .find(|e| e["lang"] == "python")
        .expect("python");
    let black = python["considered"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == "black"))
        .expect("black considered");
    assert_eq!(black["verdict"], "not_used", "{black:#}");
    for e in &entries {
        let path = e["path"].as_str().expect("path");
        let dir = e["project"]["rel_root"].as_str().expect("rel_root");
        assert!(path.starts_with(&format!("{dir}/")), "{e:#}");
        let root = e["project"]["root"].as_str().expect("root");
        assert!(Path::new(root).ends_with(dir), "{e:#}");
    }
    // The Node tools are the project's own (its node_modules), not whatever PATH has.
    let node = entries
        .iter()
        .find(|e| e["lang"] == "node")
        .expect("node entry");
    for t in node["considered"].as_array().expect("considered") {
        let name = t["name"].as_str().unwrap_or("");
        if !["prettier", "eslint"].contains(&name) {
            continue;
        }
        let detail = t["detail"].as_str().unwrap_or("");
        assert!(
            detail.ends_with(&format!("/web/node_modules/{name}")),
            "{t:#}"
        );
    }
    // One file: the same explanation.
    let one = repo.run(&["detect", "rs/src/lib.rs", "--format", "json"]);
    one.assert_code(0);
    assert_subset(
        &one.json(),
        &json!([{"path": "rs/src/lib.rs", "lang": "rust", "checkers": ["syntax", "references", "rustfmt", "clippy"]}]),
        "detect one file",
    );
}

#[test]
fn check_staged_reports_on_the_index_and_changes_nothing() {
    if !require("ruff") {
        return;
    }
    let repo = PYTHON.repo();
    // Staged: an unused import. Working tree: the import fixed away, another (clean) change.
    repo.write(
        "app.py",
        "import os\n\n\ndef add(a, b):\n    return a + b\n",
    );
    repo.git(&["add", "app.py"]);
    repo.write("app.py", "def add(a, b):\n    return a + b + 0\n");
    let before = repo.snapshot();
    let staged_diff = repo.git(&["diff", "--cached"]);

    let staged = repo.run(&["check", "--staged", "--format", "json"]);
    staged.assert_code(1);
    let report = staged.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    let ruff = check(&report, "app.py", "ruff");
    assert_eq!(ruff["status"], "fail", "{ruff:#}");
    assert_subset(
        &ruff["findings"],
        &json!([{"line": 1, "rule": "F401", "new": true}]),
        "staged findings",
    );
    assert_eq!(
        repo.snapshot(),
        before,
        "check --staged changed the working tree or index"
    );

    let plain = repo.run(&["check", "--format", "json"]);
    plain.assert_code(0);
    let report = plain.json();
    assert_eq!(report["status"], "clean", "{report:#}");
    assert_eq!(
        check(&report, "app.py", "ruff")["status"],
        "pass",
        "{report:#}"
    );
    assert_eq!(
        check(&report, "app.py", "ruff-format")["status"],
        "pass",
        "{report:#}"
    );
    assert_eq!(
        repo.snapshot(),
        before,
        "check changed the working tree or index"
    );
    assert_eq!(repo.git(&["diff", "--cached"]), staged_diff);
}

/// docs/checks.md: with `--staged`, "unstaged edits never leak into a pre-commit verdict", and that
/// includes the unstaged edits of the *other* files of the package clippy compiles.
#[test]
fn check_staged_does_not_see_unstaged_edits_of_the_rest_of_the_package() {
    if !require_all(RUST.tools) {
        return;
    }
    let repo = RUST.repo();
    // Staged: lib.rs calls legacy::helper(), which only the unstaged legacy.rs defines, so the
    // commit this would make does not compile.
    repo.write(
        "src/lib.rs",
        "pub mod legacy;\n\npub fn add(a: i32, b: i32) -> i32 {\n    a + b + legacy::helper()\n}\n",
    );
    repo.git(&["add", "src/lib.rs"]);
    let legacy = repo.read_str("src/legacy.rs");
    repo.write(
        "src/legacy.rs",
        format!("{legacy}\npub fn helper() -> i32 {{\n    3\n}}\n"),
    );
    let before = repo.snapshot();

    let staged = repo.run(&["check", "--staged", "--format", "json"]);
    staged.assert_code(1);
    let report = staged.json();
    let clippy = check(&report, "src/lib.rs", "clippy");
    assert_eq!(clippy["status"], "fail", "{clippy:#}");
    assert_subset(
        &clippy["findings"],
        &json!([{"line": 4, "rule": "E0425", "new": true}]),
        "staged findings",
    );
    // The working tree as a whole compiles.
    repo.run(&["check", "--format", "json"]).assert_code(0);
    assert_eq!(repo.snapshot(), before);
}

fn baseline_entries(repo: &TestRepo) -> Vec<PathBuf> {
    let dir = repo.path().join(".git/patchgate/cache/baseline");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|es| es.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn the_baseline_is_cached_and_reused() {
    if !require("ruff") {
        return;
    }
    let repo = PYTHON.repo();
    let p = patch(PYTHON.legacy, PYTHON.legacy_edit.0, PYTHON.legacy_edit.1);
    let ruff_on_legacy = |run: &Run| {
        let report = run.json();
        check(&report, PYTHON.legacy, "ruff").clone()
    };
    assert!(baseline_entries(&repo).is_empty());

    // First run: the original has F401, so its baseline is computed and stored.
    let first = repo.apply(&p, &["--dry-run"]);
    first.assert_code(0);
    let ruff = ruff_on_legacy(&first);
    assert_subset(
        &ruff["findings"],
        &json!([{"line": 1, "rule": "F401", "new": false}]),
        "first run",
    );
    let entries = baseline_entries(&repo);
    assert_eq!(
        entries.len(),
        1,
        "one baseline (ruff on legacy.py): {entries:?}"
    );
    let cached = std::fs::read_to_string(&entries[0]).expect("read the cache entry");
    assert!(cached.contains("F401"), "{cached}");

    // Second run: same verdict, from the same entry.
    let second = repo.apply(&p, &["--dry-run"]);
    second.assert_code(0);
    assert_subset(
        &ruff_on_legacy(&second)["findings"],
        &json!([{"line": 1, "rule": "F401", "new": false}]),
        "second run",
    );
    assert_eq!(baseline_entries(&repo), entries);

    // The entry is what the gate reads: a baseline that (falsely) says the original was clean
    // turns the old finding into a new one. ruff was not re-run on the original.
    std::fs::write(&entries[0], "[]").expect("tamper with the cache");
    let third = repo.apply(&p, &["--dry-run"]);
    third.assert_code(1);
    assert_subset(
        &ruff_on_legacy(&third)["findings"],
        &json!([{"line": 1, "rule": "F401", "new": true}]),
        "tampered cache",
    );

    // Without the cache the baseline is computed again, and stored again.
    std::fs::remove_dir_all(repo.path().join(".git/patchgate/cache")).expect("drop the cache");
    let fourth = repo.apply(&p, &["--dry-run"]);
    fourth.assert_code(0);
    assert_subset(
        &ruff_on_legacy(&fourth)["findings"],
        &json!([{"line": 1, "rule": "F401", "new": false}]),
        "recomputed",
    );
    assert_eq!(baseline_entries(&repo), entries);
    assert!(
        std::fs::read_to_string(&entries[0])
            .expect("read")
            .contains("F401")
    );
}

// ---------------------------------------------------------------------------------------------
// The README's first command

/// `patchgate demo` in the environment of the run, and the scratch repository it left.
fn run_demo(path: &std::ffi::OsStr) -> (crate::harness::Run, tempfile::TempDir) {
    let home = tempfile::tempdir().expect("tmp");
    let out = Command::new(crate::harness::BIN)
        .arg("demo")
        .env("PATH", path)
        .env("NO_COLOR", "1")
        // The scratch copy goes under a directory this test removes.
        .env("TMPDIR", home.path())
        .stdin(Stdio::null())
        .output()
        .expect("demo runs");
    (crate::harness::Run::from(out), home)
}

/// The demo's scratch repository, from the line that names it.
fn demo_repo(run: &crate::harness::Run) -> std::path::PathBuf {
    let line = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Scratch copy of the example repository: "))
        .unwrap_or_else(|| panic!("no scratch path in:\n{}", run.stdout));
    std::path::PathBuf::from(line)
}

/// Step 4 promises "nothing is written", with or without ruff: where ruff is installed its new
/// finding blocks; on a fresh machine without it, `--require-tools` makes the missing checker block.
#[test]
fn demo_keeps_its_promises_with_and_without_ruff() {
    let scratch = tempfile::tempdir().expect("tmp");
    let (run, _home) = run_demo(&crate::harness::path_without("ruff", scratch.path()));
    run.assert_code(0);
    let repo = demo_repo(&run);
    assert!(
        run.stdout.contains("ruff is not installed here") && run.stdout.contains("--require-tools"),
        "{}",
        run.stdout
    );
    let main = std::fs::read_to_string(repo.join("app/main.py")).expect("main.py");
    assert!(
        !main.contains("import os"),
        "step 4 wrote its unused import:\n{main}"
    );
    assert!(
        std::fs::read_to_string(repo.join("tests/test_config.py")).is_ok(),
        "step 2 applied"
    );

    if !require("ruff") {
        return;
    }
    let (run, _home) = run_demo(&std::env::var_os("PATH").unwrap_or_default());
    run.assert_code(0);
    let repo = demo_repo(&run);
    assert!(
        run.stdout.contains("the project's own ruff blames it") && run.stdout.contains("F401"),
        "{}",
        run.stdout
    );
    let main = std::fs::read_to_string(repo.join("app/main.py")).expect("main.py");
    assert!(
        !main.contains("import os"),
        "step 4 wrote its unused import:\n{main}"
    );
}

/// eslint checks an original with just the rules its patched text broke (half the work of every
/// rule), and the cache says which rules its entry holds: a later patch of the same original that
/// breaks another rule has the original checked again with that rule too; one that breaks none
/// takes the entry as it is.
#[test]
fn an_eslint_baseline_holds_the_rules_broken_and_grows_with_them() {
    if !require_all(NODE.tools) {
        return;
    }
    let repo = NODE.repo();
    repo.write(
        "src/legacy.js",
        "const old = 1;\n\nexport function other() {\n  missing();\n  return 2;\n}\n",
    );
    repo.git(&["commit", "-qam", "an undefined call"]);
    let eslint = |run: &Run| check(&run.json(), "src/legacy.js", "eslint").clone();
    let entry = || {
        let entries = baseline_entries(&repo);
        assert_eq!(entries.len(), 1, "{entries:?}");
        let text = std::fs::read_to_string(&entries[0]).expect("the entry");
        (entries[0].clone(), text)
    };

    // 1. The patch removes the undefined call; the unused constant stays, and is old. The
    // original was linted with no-unused-vars alone: no-undef is not in its baseline.
    let fix = patch("src/legacy.js", "  missing();\n", "");
    let run = repo.apply(&fix, &["--dry-run"]);
    run.assert_code(0);
    assert_subset(
        &eslint(&run)["findings"],
        &json!([{"line": 1, "rule": "no-unused-vars", "new": false}]),
        "first patch",
    );
    let (_, kept) = entry();
    assert!(
        kept.contains("no-unused-vars") && !kept.contains("no-undef"),
        "{kept}"
    );

    // 2. Another undefined call beside the first: no-undef fired, so the original is checked
    // again with it; the old call is old, the new one new.
    let run = repo.apply(
        &patch(
            "src/legacy.js",
            "  return 2;\n",
            "  another();\n  return 2;\n",
        ),
        &["--dry-run"],
    );
    run.assert_code(1);
    assert_subset(
        &eslint(&run)["findings"],
        &json!([
            {"line": 1, "rule": "no-unused-vars", "new": false},
            {"line": 4, "rule": "no-undef", "new": false},
            {"line": 5, "rule": "no-undef", "new": true}
        ]),
        "second patch",
    );
    let (path, kept) = entry();
    assert!(kept.contains("no-undef"), "{kept}");

    // 3. The first patch again: its rule is among the entry's, which is taken as it is (a
    // tampered entry without findings turns the old finding new: the original was not linted).
    let tampered = kept.replace(r#""findings":["#, r#""findings":[],"was":["#);
    assert_ne!(tampered, kept);
    std::fs::write(&path, tampered).expect("tamper");
    let run = repo.apply(&fix, &["--dry-run"]);
    run.assert_code(1);
    assert_subset(
        &eslint(&run)["findings"],
        &json!([{"line": 1, "rule": "no-unused-vars", "new": true}]),
        "taken from the cache",
    );
}

/// `patchgate apply --dry-run --checks eslint` of the patch in `patch`, with `cache` as the user
/// cache (where the bridge keeps compiled code).
fn eslint_dry_run(repo: &TestRepo, patch: &Path, cache: &Path) -> Run {
    let out = Command::new(BIN)
        .args([
            "apply",
            "--dry-run",
            "--checks",
            "eslint",
            "--format",
            "json",
        ])
        .arg(patch)
        .current_dir(repo.path())
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::null())
        .output()
        .expect("patchgate runs");
    Run::from(out)
}

/// A bundle of the bridge's compiled code: the length of its index, and the index.
fn bundle_index(bytes: &[u8]) -> (usize, serde_json::Map<String, Value>) {
    let size = u32::from_le_bytes(bytes[..4].try_into().expect("a length")) as usize;
    let index: Value = serde_json::from_slice(&bytes[4..4 + size]).expect("the index");
    (size, index.as_object().expect("an object").clone())
}

/// A package for [`local_plugin_project`]: its name, its package.json, its files and texts.
type Package<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

/// A module project whose eslint config uses the rule `local/no-foo` of a plugin in its own
/// `node_modules` (eslint linked from the pinned tools), `packages` written there;
/// `src/app.js` is clean. Committed.
fn local_plugin_project(packages: &[Package]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        "{\"name\": \"demo\", \"private\": true, \"type\": \"module\"}\n",
    );
    repo.write(
        "eslint.config.js",
        "import local from \"eslint-plugin-local\";\n\n\
         export default [{ plugins: { local }, rules: { \"local/no-foo\": \"error\" } }];\n",
    );
    repo.write(".gitignore", "node_modules\n");
    repo.write("src/app.js", "export const bar = 1;\n");
    let modules = repo.path().join("node_modules");
    std::fs::create_dir_all(&modules).expect("node_modules");
    for m in ["eslint", "@eslint"] {
        std::os::unix::fs::symlink(tools_node_modules().join(m), modules.join(m)).expect("link");
    }
    for (name, manifest, files) in packages {
        let dir = modules.join(name);
        std::fs::create_dir_all(&dir).expect("a package");
        std::fs::write(dir.join("package.json"), manifest).expect("its manifest");
        for (file, text) in *files {
            std::fs::write(dir.join(file), text).expect("a file");
        }
    }
    repo.commit()
}

/// The patch that names a constant `foo`, in a file outside the repository.
fn foo_patch() -> tempfile::NamedTempFile {
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    let edit = patch(
        "src/app.js",
        "export const bar = 1;\n",
        "export const foo = 1;\n",
    );
    std::fs::write(pfile.path(), edit).expect("write the patch");
    pfile
}

/// Whether the node on PATH keeps its modules' compiled code itself (`module.enableCompileCache`,
/// node >= 22.8), so that the bridge keeps none.
pub(crate) fn node_keeps_compiled_code() -> bool {
    let probe = Command::new("node")
        .args(["-p", "typeof require('module').enableCompileCache"])
        .output()
        .expect("node runs");
    String::from_utf8_lossy(&probe.stdout).trim() == "function"
}

/// On a node without a compile cache of its own (before 22.1), the bridge keeps the compiled code
/// of eslint's modules in the user cache (`$XDG_CACHE_HOME/patchgate/node-code/`): the first run
/// writes it, later runs read it and write nothing (V8 took every entry), with the same verdict.
/// eslint's config loader imports the project's config at run time and stays node's to compile
/// (from a cache, node 20's import() fails: every later run here would). A damaged cache is an
/// empty one.
/// On a node with a compile cache the bridge leaves it to node and keeps nothing.
#[test]
fn eslint_keeps_its_compiled_code_where_node_keeps_none() {
    if !require_all(NODE.tools) {
        return;
    }
    let repo = NODE.repo();
    let cache = tempfile::tempdir().expect("cache home");
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(
        pfile.path(),
        patch("src/app.js", NODE.lint_edit.0, NODE.lint_edit.1),
    )
    .expect("write the patch");
    let run = |repo: &TestRepo| -> Run {
        let run = eslint_dry_run(repo, pfile.path(), cache.path());
        run.assert_code(1);
        assert_subset(
            &check(&run.json(), "src/app.js", "eslint")["findings"],
            &json!([{"line": 2, "rule": "no-unused-vars", "new": true}]),
            "the verdict",
        );
        run
    };
    // The bundles: path, size, content hash and inode (a bundle written again is a new file).
    type Kept = Vec<(PathBuf, usize, String, u64)>;
    let kept = || -> Kept {
        use std::os::unix::fs::MetadataExt;
        let root = cache.path().join("patchgate/node-code");
        let mut all = Vec::new();
        for version in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            let files = std::fs::read_dir(version.path()).expect("a version");
            for f in files.flatten() {
                let ino = f.metadata().expect("a bundle").ino();
                let bytes = std::fs::read(f.path()).expect("a bundle");
                all.push((f.path(), bytes.len(), sha256_hex(&bytes), ino));
            }
        }
        all
    };
    let this = |all: Kept, bundle: &Path| all.into_iter().find(|(p, ..)| p == bundle);
    let node_caches = node_keeps_compiled_code();

    run(&repo);
    let first = kept();
    if node_caches {
        assert!(first.is_empty(), "node has its own cache: {first:?}");
        return;
    }
    assert_eq!(first.len(), 1, "one bundle for eslint: {first:?}");
    let bundle = first[0].0.clone();
    assert!(first[0].1 > 100_000, "{first:?}");
    // Its index: an entry per module, an empty one for each module node compiles itself
    // (eslint's config loader among them).
    let bytes = std::fs::read(&bundle).expect("the bundle");
    let size = u32::from_le_bytes(bytes[..4].try_into().expect("a length")) as usize;
    let index: Value = serde_json::from_slice(&bytes[4..4 + size]).expect("the index");
    let index = index.as_object().expect("an object");
    let empty = index.values().filter(|e| e[1] == 0).count();
    assert!(
        index.len() > 100 && (1..10).contains(&empty),
        "{} entries, {empty} empty",
        index.len()
    );

    run(&repo);
    assert_eq!(kept(), first, "a run that read every entry writes nothing");
    // Another project linking the same installation shares the bundle.
    let other = NODE.repo();
    run(&other);
    assert_eq!(kept(), first, "the installation's bundle, read as it is");

    // A module this run does not load (another config's plugin) stays when the bundle is
    // written again: here one of eslint's entries is dropped from the index, so the next run
    // compiles it afresh and writes the bundle, and an entry of no module is added.
    let index_of = bundle_index;
    let (size, mut index) = index_of(&bytes);
    let body = &bytes[4 + size..];
    let dropped = index
        .iter()
        .find(|(_, e)| e[1].as_u64() > Some(0))
        .map(|(k, _)| k.clone())
        .expect("an entry");
    index.remove(&dropped);
    index.insert("0".repeat(40), json!([body.len(), 3]));
    let head = Value::Object(index).to_string();
    let mut edited = (head.len() as u32).to_le_bytes().to_vec();
    edited.extend_from_slice(head.as_bytes());
    edited.extend_from_slice(body);
    edited.extend_from_slice(b"abc");
    std::fs::write(&bundle, &edited).expect("edit the bundle");
    run(&repo);
    let (_, index) = index_of(&std::fs::read(&bundle).expect("the bundle"));
    assert!(
        index.contains_key(&dropped),
        "the module compiled afresh is back"
    );
    assert!(
        index.contains_key(&"0".repeat(40)),
        "the entry not loaded stays"
    );

    // Bundles of other installations, older: the folder keeps the 16 written last.
    let folder = bundle.parent().expect("the version's folder");
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    for i in 0..20 {
        let f = std::fs::File::create(folder.join(format!("{i:040}.bin"))).expect("a bundle");
        f.set_modified(old).expect("an old mtime");
    }
    // And the temp files of bridges killed while writing: one of two hours ago goes, one being
    // written now stays.
    let killed = folder.join(format!("{}.bin.1.tmp", "a".repeat(40)));
    let writing = folder.join(format!("{}.bin.2.tmp", "b".repeat(40)));
    let f = std::fs::File::create(&killed).expect("a temp file");
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(7200))
        .expect("an old mtime");
    std::fs::File::create(&writing).expect("a temp file");
    // Other node versions' folders: one unused for 40 days goes; one whose bundle was read
    // yesterday stays, and so does a folder the bridge did not name.
    let root = folder.parent().expect("the node-code folder");
    let days_ago = |d: u64| std::time::SystemTime::now() - Duration::from_secs(d * 86400);
    let plant = |name: &str, read: std::time::SystemTime| {
        let dir = root.join(name);
        std::fs::create_dir(&dir).expect("a version's folder");
        let f =
            std::fs::File::create(dir.join(format!("{}.bin", "c".repeat(40)))).expect("a bundle");
        let times = std::fs::FileTimes::new().set_modified(days_ago(40));
        f.set_times(times.set_accessed(read)).expect("its times");
        let d = std::fs::File::open(&dir).expect("the folder");
        d.set_times(times.set_accessed(days_ago(40)))
            .expect("its times");
        dir
    };
    let unused = plant("node-v18.19.1-x64", days_ago(40));
    let read = plant("node-v21.7.3-x64", days_ago(1));
    let unnamed = plant("node-old-copy", days_ago(40));

    // Every entry's bytes overwritten, the index left whole: V8 rejects them all.
    let bytes = std::fs::read(&bundle).expect("the bundle");
    let size = u32::from_le_bytes(bytes[..4].try_into().expect("a length")) as usize;
    let mut damaged = bytes.clone();
    damaged[4 + size..].fill(0x55);
    std::fs::write(&bundle, &damaged).expect("damage");
    run(&repo);
    assert!(!killed.exists() && writing.exists());
    std::fs::remove_file(&writing).expect("remove");
    assert!(!unused.exists(), "a node version unused for 40 days goes");
    assert!(
        read.exists() && unnamed.exists(),
        "a version read yesterday stays"
    );
    for dir in [read, unnamed] {
        std::fs::remove_dir_all(dir).expect("remove");
    }
    let all = kept();
    assert_eq!(all.len(), 16, "the 16 written last");
    let again = this(all, &bundle).expect("this bundle kept");
    assert!(
        again.2 != sha256_hex(&damaged) && again.1 > 100_000,
        "written again"
    );
    // Not a bundle at all.
    std::fs::write(&bundle, b"not a bundle").expect("damage");
    run(&repo);
    let again = this(kept(), &bundle).expect("this bundle kept");
    assert!(again.1 > 100_000, "written again");
}

/// A tool's CommonJS module may require() an ES module (node >= 20.19), or one node finds to be
/// an ES module only when it cannot parse it as CommonJS: both stay node's to load, on the first
/// run and on those that read the compiled code (here a local eslint plugin, CommonJS, whose rule
/// takes its message from an ES-module package and its name from a package with no type).
#[test]
fn eslint_plugins_that_require_es_modules_load_with_the_compiled_code_kept() {
    if !require_all(NODE.tools) {
        return;
    }
    let plugin = "const { say } = require(\"local-messages\");\nconst { name } = require(\"local-name\");\n\
        module.exports = { rules: { \"no-foo\": { meta: { schema: [] }, create(context) {\n\
        return { Identifier(node) { if (node.name === name) context.report({ node, message: say(name) }); } };\n\
        } } } };\n";
    let repo = local_plugin_project(&[
        (
            "eslint-plugin-local",
            "{\"name\": \"eslint-plugin-local\", \"main\": \"index.js\"}\n",
            &[("index.js", plugin)],
        ),
        (
            "local-messages",
            "{\"name\": \"local-messages\", \"type\": \"module\", \"main\": \"index.js\"}\n",
            &[(
                "index.js",
                "export function say(name) {\n  return `no ${name} here`;\n}\n",
            )],
        ),
        (
            "local-name",
            "{\"name\": \"local-name\", \"main\": \"index.js\"}\n",
            &[("index.js", "export const name = \"foo\";\n")],
        ),
    ]);
    let cache = tempfile::tempdir().expect("cache home");
    let pfile = foo_patch();
    for run in 1..=3 {
        let got = eslint_dry_run(&repo, pfile.path(), cache.path());
        got.assert_code(1);
        assert_subset(
            &check(&got.json(), "src/app.js", "eslint")["findings"],
            &json!([{"line": 1, "rule": "local/no-foo", "message": "no foo here", "new": true}]),
            &format!("run {run}"),
        );
    }
}

/// Compiled code that makes the tool fail is not the tool's verdict: the batch runs again
/// without the cache, which that run turns off for the installation. Here the cache holds, under
/// a local plugin's name and content, the code of another text of the same length that throws
/// (V8 checks only the length), as a damaged or forged entry could.
#[test]
fn compiled_code_that_makes_eslint_fail_is_dropped_for_eslints_own_verdict() {
    use sha1::{Digest, Sha1};
    if !require_all(NODE.tools) || node_keeps_compiled_code() {
        return;
    }
    const GOOD: &str = "module.exports = { rules: { \"no-foo\": { meta: { schema: [] }, create(context) {\n\
        return { Identifier(node) { if (node.name === \"foo\") context.report({ node, message: \"no foo\" }); } };\n\
        } } } };\n";
    let bad = format!(
        "throw new Error(\"poisoned\");\n{}\n",
        "/".repeat(GOOD.len() - 30)
    );
    assert_eq!(bad.len(), GOOD.len());
    let manifest = "{\"name\": \"eslint-plugin-local\", \"main\": \"index.js\"}\n";
    let repo = local_plugin_project(&[("eslint-plugin-local", manifest, &[("index.js", &bad)])]);
    let plugin = repo
        .path()
        .join("node_modules/eslint-plugin-local/index.js");
    let cache = tempfile::tempdir().expect("cache home");
    let pfile = foo_patch();
    let run = || eslint_dry_run(&repo, pfile.path(), cache.path());
    let bundle = || -> PathBuf {
        let root = cache.path().join("patchgate/node-code");
        let version = std::fs::read_dir(&root)
            .expect("node-code")
            .flatten()
            .next();
        let files = std::fs::read_dir(version.expect("a version").path()).expect("a version");
        files.flatten().map(|f| f.path()).next().expect("a bundle")
    };
    let index_of = bundle_index;
    let key = |text: &str| {
        let file = plugin.canonicalize().expect("the plugin's path");
        let mut h = Sha1::new();
        for part in [file.to_string_lossy().as_bytes(), text.as_bytes()] {
            h.update(part);
            h.update(b"\0");
        }
        format!("{:x}", h.finalize())
    };

    // 1. The throwing plugin: eslint fails with and without the cache; its code is kept.
    let first = run();
    assert_eq!(
        check(&first.json(), "src/app.js", "eslint")["status"],
        "error",
        "{}",
        first.stdout
    );
    let path = bundle();
    let bytes = std::fs::read(&path).expect("the bundle");
    let (size, mut index) = index_of(&bytes);
    let entry = index.remove(&key(&bad)).expect("the throwing text's entry");
    // 2. That code, named as the working plugin's.
    index.insert(key(GOOD), entry);
    let head = Value::Object(index).to_string();
    let mut forged = (head.len() as u32).to_le_bytes().to_vec();
    forged.extend_from_slice(head.as_bytes());
    forged.extend_from_slice(&bytes[4 + size..]);
    std::fs::write(&path, forged).expect("forge");
    std::fs::write(&plugin, GOOD).expect("the working plugin");

    // 3. eslint's own verdict, and the cache turned off; then again, without it.
    for step in ["the cache dropped", "the cache off"] {
        let got = run();
        got.assert_code(1);
        assert_subset(
            &check(&got.json(), "src/app.js", "eslint")["findings"],
            &json!([{"line": 1, "rule": "local/no-foo", "new": true}]),
            step,
        );
        let (_, index) = index_of(&std::fs::read(&path).expect("the bundle"));
        assert!(index.contains_key("off"), "{step}: {index:?}");
    }
}

/// A checker that fails on the original text leaves no baseline: its findings on the patched text
/// all count as new (the safe side), and the report says why instead of blaming silently.
#[test]
fn a_baseline_the_checker_could_not_produce_is_explained() {
    // Fails unless the patched line is present, i.e. on every original text.
    let script = "grep -q 'a new one' \"$@\" || { echo 'cannot parse' >&2; exit 2; }; grep -Hn TODO \"$@\" || true";
    let config = format!(
        "[checkers.todo]\ncommand = {}\nglobs = [\"docs/**/*.txt\"]\noutput = \"regex\"\npattern = {}\n",
        toml_list(&["sh", "-c", script, "todo", "{files}"]),
        toml_str(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<rule>TODO)(?P<message>.*)$"),
    );
    let (repo, run) = custom_checker_repo(&config);
    run.assert_code(1);
    let report = run.json();
    let c = check(&report, "docs/notes.txt", "todo");
    assert_subset(
        &c["findings"],
        &json!([
            {"line": 1, "rule": "TODO", "new": true},
            {"line": 3, "rule": "TODO", "new": true},
        ]),
        "findings",
    );
    assert!(
        c["note"]
            .as_str()
            .is_some_and(|n| n.contains("original text") && n.contains("all count as new")),
        "{c:#}"
    );
    assert_eq!(
        repo.read_str("docs/notes.txt"),
        "TODO FIXME: an old one\nplain\n"
    );
}

/// `patchgate <args>` run in `dir` under `strace -f -qq -y -e trace=<calls>` (`-y`: each
/// descriptor shown with its path): the log and the run. `None` when strace is missing outside CI
/// (in CI a missing strace fails the test).
pub fn traced(
    dir: &std::path::Path,
    calls: &str,
    args: &[&str],
) -> Option<(String, crate::harness::Run)> {
    if !crate::checks::require("strace") {
        return None;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let log = scratch.path().join("strace.log");
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-y", "-e", &format!("trace={calls}"), "-o"])
        .arg(&log)
        .arg(crate::harness::BIN)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("strace runs");
    let text = std::fs::read_to_string(&log).expect("strace log");
    Some((text, crate::harness::Run::from(out)))
}

/// A repository inside a larger project whose `ruff.toml` lies above the repository root: ruff,
/// run by hand on the real files, follows it, and so does the gate, for one patched file (ruff on
/// stdin) and for several (a scratch copy would not reach it: one stdin run each instead).
#[test]
fn a_ruff_configuration_above_the_repository_root_is_followed() {
    if !require("ruff") {
        return;
    }
    let outer = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        outer.path().join("ruff.toml"),
        "line-length = 40\n\n[lint]\nselect = [\"E501\"]\n",
    )
    .expect("write ruff.toml");
    let repo = TestRepo::new_in(outer.path())
        // A project without a ruff table of its own (ruff walks past such a pyproject.toml)
        // whose pre-commit hook runs ruff.
        .file(
            "pyproject.toml",
            "[project]\nname = \"inner\"\nversion = \"0.1.0\"\n",
        )
        .file(
            ".pre-commit-config.yaml",
            "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.6.0\n    \
             hooks:\n      - id: ruff\n",
        )
        .file("a.py", "x = 1\n")
        .file("b.py", "y = 2\n")
        .commit();
    let long = |name: &str| format!("{name} = \"a string longer than the forty of ruff.toml\"\n");
    let edit = |file: &str, old: &str| json!({"file_path": file, "old_string": old, "new_string": long(&old[..1])});
    // By hand, as the witness: ruff reads the outer configuration.
    std::fs::write(repo.path().join("a.py"), long("x")).expect("write");
    let by_hand = Command::new("ruff")
        .args(["check", "--no-cache", "--output-format", "concise", "a.py"])
        .current_dir(repo.path())
        .output()
        .expect("ruff runs");
    assert!(
        String::from_utf8_lossy(&by_hand.stdout).contains("E501"),
        "{by_hand:?}"
    );
    repo.git(&["checkout", "--", "a.py"]);

    for edits in [
        json!([edit("a.py", "x = 1\n")]),
        json!([edit("a.py", "x = 1\n"), edit("b.py", "y = 2\n")]),
    ] {
        let files = edits.as_array().map_or(0, Vec::len);
        let run = repo.apply(&edits.to_string(), &["--checks", "ruff"]);
        run.assert_code(1);
        let report = run.json();
        for file in ["a.py", "b.py"].into_iter().take(files) {
            let ruff = check(&report, file, "ruff");
            assert_eq!(ruff["status"], "fail", "{files} file(s): {ruff:#}");
            assert_subset(
                &ruff["findings"],
                &json!([{"line": 1, "rule": "E501", "new": true}]),
                "the outer configuration's rule",
            );
        }
        assert_eq!(repo.git(&["status", "--porcelain"]), "", "nothing written");
    }
}

/// One patched Python file goes to ruff on stdin, as a person runs it (a scratch copy of the file
/// and its configuration was 3.5 ms of an 8 ms job); several share one ruff run on a scratch copy.
/// (`a_ruff_configuration_above_the_repository_root_is_followed` has findings both ways.)
#[test]
fn one_python_file_goes_to_ruff_on_stdin_and_several_to_one_run() {
    if !require("ruff") {
        return;
    }
    let repo = PYTHON.repo();
    // Clean edits: no finding, so no baseline run (of one file, on stdin) besides.
    let app = json!({"file_path": "app.py", "old_string": "a + b\n", "new_string": "a + b + 0\n"});
    repo.write("two.py", "def two():\n    return 2\n");
    repo.git(&["add", "two.py"]);
    repo.git(&["commit", "-qm", "two"]);
    let two =
        json!({"file_path": "two.py", "old_string": "return 2\n", "new_string": "return 2 + 0\n"});
    for (edits, on_stdin) in [(json!([app]), true), (json!([app, two]), false)] {
        let run = repo.apply_env(
            &edits.to_string(),
            &["--dry-run", "--format", "json"],
            &[("PATCHGATE_TIMINGS", "1")],
        );
        run.assert_code(0);
        assert_eq!(
            run.stderr.matches("ruff: one file, on stdin").count(),
            if on_stdin { 2 } else { 0 },
            "ruff and ruff format on stdin for one file only: {}",
            run.stderr
        );
        for checker in ["ruff", "ruff-format"] {
            assert_eq!(check(&run.json(), "app.py", checker)["status"], "pass");
        }
    }
}

/// `--branch` builds clippy's mirror from the branch: a call to a function the branch has and
/// the working tree's uncommitted edit removed compiles there and passes; the working tree would
/// have failed the build.
#[test]
fn branch_mode_runs_clippy_on_the_branch_not_the_working_tree() {
    if !require_all(RUST.tools) {
        return;
    }
    let repo = RUST.repo();
    repo.write("src/legacy.rs", "pub fn old() -> i32 {\n    return 1;\n}\n");
    let edit = json!([{"file_path": "src/lib.rs", "old_string": "    a + b\n",
                       "new_string": "    a + b + legacy::other()\n"}]);
    let run = repo.apply(
        &edit.to_string(),
        &["--branch", "fix", "--checks", "clippy"],
    );
    run.assert_code(0);
    let report = run.json();
    assert_eq!(
        check(&report, "src/lib.rs", "clippy")["status"],
        "pass",
        "{report:#}"
    );
    assert!(
        repo.git(&["show", "fix:src/lib.rs"])
            .contains("legacy::other()")
    );
    // The working tree is as the user left it.
    assert!(!repo.read_str("src/legacy.rs").contains("other"));
}

/// `check PATHS` looks at the deletions among the named paths (a deleted file named, or one
/// under a named folder): the references check finds what still uses them. `.` at the top names
/// every file, as a linter's `.` does.
#[test]
fn check_named_paths_see_their_deletions_and_dot_is_every_file() {
    let repo = TestRepo::new()
        .file("lib/util.py", "def helper():\n    return 1\n")
        .file("app.py", "from lib.util import helper\n\nhelper()\n")
        .file("lib/__init__.py", "")
        .commit();
    repo.git(&["rm", "-q", "lib/util.py"]);
    let dangling = |args: &[&str]| {
        let mut all = vec!["check", "--checks", "references", "--format", "json"];
        all.extend_from_slice(args);
        let run = repo.run(&all);
        let report = run.json();
        let found = report["checks"].as_array().is_some_and(|cs| {
            cs.iter().any(|c| {
                c["path"] == "app.py" && c["checker"] == "references" && c["status"] == "fail"
            })
        });
        assert_eq!(run.code, if found { 1 } else { 0 }, "{args:?}: {report:#}");
        found
    };
    assert!(dangling(&[]), "every change");
    assert!(dangling(&["lib/util.py"]), "the deleted file named");
    assert!(dangling(&["lib"]), "its folder named");
    assert!(dangling(&["."]), "the root");
    assert!(
        !dangling(&["lib/__init__.py"]),
        "a file beside it: not its deletion"
    );
}
