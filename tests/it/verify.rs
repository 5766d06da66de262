//! Verify, live: `apply --verify build,test,typecheck` and `patchgate verify` on real small
//! projects in each language (a Rust crate, a Go module, a Node project with a tsconfig and a
//! `node --test` script, a Python package with pytest tests), with the real toolchains.
//!
//! Per language: a rename that misses a call site fails the build (Rust, Go) or the type check
//! (Node, Python) with the failure at the missed call site and a hint naming the old name, and
//! leaves the repository untouched; the complete rename passes and commits; a patch that breaks
//! a unit test fails `--verify test` with the test's name and message. Then `patchgate verify`
//! on a working tree with a failing test, and a missing toolchain (`missing`, blocking only with
//! `--require-tools`).
//!
//! Every test asks [`require`] for its toolchain first: locally a missing one skips the test
//! with a loud `SKIPPED:` line on stderr; in CI (`CI=true`) it fails the test. The pinned tools
//! come from `scripts/install-checkers` (go, tsc, pytest and mypy in its venv, whose `python3`
//! must come first on PATH: a project without a `.venv` is verified with `python3`).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::harness::{BIN, Run, TestRepo, on_path, tools_node_modules};

// ---------------------------------------------------------------------------------------------
// Tools

/// Whether the toolchain of `lang` (`rust`, `go`, `node`, `python`) is available. When it is
/// not: in CI the test fails; locally it prints a loud `SKIPPED: <why>` and the test returns.
fn require(lang: &str) -> bool {
    let missing = match lang {
        "rust" => on_path("cargo")
            .is_none()
            .then(|| "cargo is not on PATH".to_string()),
        "go" => on_path("go")
            .is_none()
            .then(|| "go is not on PATH".to_string()),
        "node" => {
            let tsc = tools_node_modules().join("typescript/package.json");
            if on_path("node").is_none() || on_path("npm").is_none() {
                Some("node or npm is not on PATH".to_string())
            } else if !tsc.is_file() {
                Some(format!(
                    "typescript is not installed ({} is missing)",
                    tsc.display()
                ))
            } else {
                None
            }
        }
        "python" => {
            let ok = Command::new("python3")
                .args(["-c", "import pytest, mypy"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            (!ok).then(|| "python3 on PATH cannot import pytest and mypy".to_string())
        }
        other => panic!("unknown toolchain {other}"),
    };
    let Some(why) = missing else {
        return true;
    };
    let test = std::thread::current().name().unwrap_or("?").to_string();
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: {why} (CI=true: every toolchain the verify tests drive must be installed; see scripts/install-checkers)"
    );
    // Straight to the process's stderr: libtest captures `eprintln!` of passing tests.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {test}: {why} (run scripts/test, or export PATH=\"$(scripts/install-checkers):$PATH\")"
    );
    false
}

// ---------------------------------------------------------------------------------------------
// Projects: each a committed repository in a fresh temporary directory.

fn rust_project() -> TestRepo {
    TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .file(".gitignore", "/target\n")
        .file(
            "src/lib.rs",
            "pub mod ops;\n\
             \n\
             pub fn total(xs: &[i64]) -> i64 {\n\
             \x20   xs.iter().fold(0, |acc, &x| ops::add_numbers(acc, x))\n\
             }\n\
             \n\
             #[cfg(test)]\n\
             mod tests {\n\
             \x20   use super::*;\n\
             \n\
             \x20   #[test]\n\
             \x20   fn total_sums() {\n\
             \x20       assert_eq!(total(&[1, 2, 3]), 6, \"total of 1, 2, 3\");\n\
             \x20   }\n\
             }\n",
        )
        .file(
            "src/ops.rs",
            "pub fn add_numbers(a: i64, b: i64) -> i64 {\n\
             \x20   a + b\n\
             }\n\
             \n\
             pub fn double(x: i64) -> i64 {\n\
             \x20   add_numbers(x, x)\n\
             }\n\
             \n\
             #[cfg(test)]\n\
             mod tests {\n\
             \x20   use super::*;\n\
             \n\
             \x20   #[test]\n\
             \x20   fn doubles() {\n\
             \x20       assert_eq!(double(21), 42, \"double of 21\");\n\
             \x20   }\n\
             }\n",
        )
        .commit()
}

fn go_project() -> TestRepo {
    TestRepo::new()
        .file("go.mod", "module example.com/calc\n\ngo 1.22\n")
        .file(
            "mathx/mathx.go",
            "package mathx\n\n\
             // AddNumbers adds two numbers.\n\
             func AddNumbers(a, b int) int {\n\
             \treturn a + b\n\
             }\n",
        )
        .file(
            "mathx/mathx_test.go",
            "package mathx\n\n\
             import \"testing\"\n\n\
             func TestAddNumbers(t *testing.T) {\n\
             \tif got := AddNumbers(2, 3); got != 5 {\n\
             \t\tt.Errorf(\"AddNumbers(2, 3) = %d, want 5\", got)\n\
             \t}\n\
             }\n",
        )
        .file(
            "main.go",
            "package main\n\n\
             import (\n\
             \t\"fmt\"\n\n\
             \t\"example.com/calc/mathx\"\n\
             )\n\n\
             func main() {\n\
             \tfmt.Println(mathx.AddNumbers(1, 2))\n\
             }\n",
        )
        .commit()
}

/// JavaScript checked by tsc (`checkJs`), tested by `node --test`; the pinned tools' modules
/// are the project's `node_modules` (a link, ignored by git).
fn node_project() -> TestRepo {
    let repo = TestRepo::new()
        .file(
            "package.json",
            r#"{
  "name": "calc",
  "version": "1.0.0",
  "private": true,
  "type": "module",
  "scripts": {
    "test": "node --test"
  }
}
"#,
        )
        .file(
            "tsconfig.json",
            r#"{
  "compilerOptions": {
    "target": "es2022",
    "module": "nodenext",
    "strict": true,
    "noEmit": true,
    "allowJs": true,
    "checkJs": true
  },
  "include": ["src"]
}
"#,
        )
        .file(".gitignore", "node_modules\n")
        .file(
            "src/math.js",
            "/**\n * @param {number} a\n * @param {number} b\n * @returns {number}\n */\n\
             export function addNumbers(a, b) {\n  return a + b;\n}\n",
        )
        .file(
            "src/total.js",
            "import { addNumbers } from \"./math.js\";\n\
             \n\
             /**\n * @param {number[]} xs\n * @returns {number}\n */\n\
             export function total(xs) {\n  return xs.reduce((acc, x) => addNumbers(acc, x), 0);\n}\n",
        )
        .file(
            "test/math.test.js",
            "import { test } from \"node:test\";\n\
             import assert from \"node:assert/strict\";\n\
             import { addNumbers } from \"../src/math.js\";\n\
             import { total } from \"../src/total.js\";\n\
             \n\
             test(\"addNumbers adds\", () => {\n  assert.equal(addNumbers(2, 3), 5);\n});\n\
             \n\
             test(\"total sums\", () => {\n  assert.equal(total([1, 2, 3]), 6);\n});\n",
        );
    std::os::unix::fs::symlink(tools_node_modules(), repo.path().join("node_modules"))
        .expect("link node_modules");
    repo.commit()
}

fn python_project() -> TestRepo {
    TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\nrequires-python = \">=3.9\"\n\n\
             [tool.mypy]\nwarn_unused_configs = true\n",
        )
        .file("calc/__init__.py", "")
        .file(
            "calc/ops.py",
            "def add_numbers(a: int, b: int) -> int:\n    return a + b\n",
        )
        .file(
            "calc/total.py",
            "from calc import ops\n\n\n\
             def total(xs: list[int]) -> int:\n\
             \x20   acc = 0\n\
             \x20   for x in xs:\n\
             \x20       acc = ops.add_numbers(acc, x)\n\
             \x20   return acc\n",
        )
        .file(
            "tests/test_ops.py",
            "from calc.ops import add_numbers\n\
             from calc.total import total\n\n\n\
             def test_add_numbers() -> None:\n\
             \x20   assert add_numbers(2, 3) == 5\n\n\n\
             def test_total() -> None:\n\
             \x20   assert total([1, 2, 3]) == 6\n",
        )
        .commit()
}

// ---------------------------------------------------------------------------------------------
// Patches and reports

/// A patch as JSON: `edits` is `[(file, old, new, replace_all)]`.
fn patch(edits: &[(&str, &str, &str, bool)]) -> String {
    let edits: Vec<Value> = edits
        .iter()
        .map(|(file, old, new, all)| {
            json!({"file_path": file, "old_string": old, "new_string": new, "replace_all": all})
        })
        .collect();
    json!({ "message": "verify test patch", "edits": edits }).to_string()
}

/// The `verify[]` entry of `step` (exactly one).
#[track_caller]
fn step<'a>(report: &'a Value, step: &str) -> &'a Value {
    let found: Vec<&Value> = report["verify"]
        .as_array()
        .unwrap_or_else(|| panic!("no verify array in:\n{report:#}"))
        .iter()
        .filter(|v| v["step"] == step)
        .collect();
    assert_eq!(found.len(), 1, "one `{step}` entry in:\n{report:#}");
    found[0]
}

#[track_caller]
fn failures(entry: &Value) -> &Vec<Value> {
    entry["failures"]
        .as_array()
        .unwrap_or_else(|| panic!("no failures array in {entry:#}"))
}

/// A failed step whose failures include one at `file:line`, with a hint that names `name`.
#[track_caller]
fn assert_failed_at(report: &Value, step_name: &str, file: &str, line: u64, name: &str) {
    let entry = step(report, step_name);
    assert_eq!(entry["status"], "fail", "{entry:#}");
    assert!(
        failures(entry)
            .iter()
            .any(|f| f["file"] == file && f["line"] == line),
        "no failure at {file}:{line} in {entry:#}"
    );
    let hints = entry["hints"].as_array().expect("hints array");
    assert!(
        hints
            .iter()
            .any(|h| h.as_str().is_some_and(|h| h.contains(name))),
        "no hint naming `{name}` in {entry:#}"
    );
}

/// A failed step with a failure named `name` whose message contains `message`.
#[track_caller]
fn assert_test_failed(report: &Value, name: &str, message: &str) -> Value {
    let entry = step(report, "test");
    assert_eq!(entry["status"], "fail", "{entry:#}");
    failures(entry)
        .iter()
        .find(|f| f["name"] == name)
        .filter(|f| f["message"].as_str().is_some_and(|m| m.contains(message)))
        .unwrap_or_else(|| panic!("no failure `{name}` with message `{message}` in {entry:#}"))
        .clone()
}

#[track_caller]
fn assert_passed(report: &Value, steps: &[&str]) {
    for s in steps {
        let entry = step(report, s);
        assert_eq!(entry["status"], "pass", "{entry:#}");
        assert_eq!(failures(entry).len(), 0, "{entry:#}");
    }
}

/// `apply --verify <steps> --checks none` must refuse `patch`: exit 1, `checks_failed`, every
/// edit verified but not written, and the repository (files, index, HEAD, refs) as it was.
#[track_caller]
fn refused(repo: &TestRepo, patch: &str, steps: &str) -> Value {
    let before = repo.snapshot();
    let run = repo.apply(patch, &["--verify", steps, "--checks", "none"]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_eq!(report["files"], json!([]), "{report:#}");
    assert_eq!(
        repo.snapshot(),
        before,
        "the repository changed:\n{report:#}"
    );
    // (The target directory's files are not leftovers: cargo's incremental `….lock` files. The
    // mirror is outside the repository.)
    let leftovers: Vec<String> = repo
        .leftovers()
        .into_iter()
        .filter(|l| !l.contains("/.git/patchgate/cargo-target/"))
        .collect();
    assert_eq!(
        leftovers,
        Vec::<String>::new(),
        "leftovers after a refused run"
    );
    report
}

/// `apply --verify <steps> --checks none --commit` must pass and commit: exit 0, and HEAD's
/// `file` contains `new_name` and no longer `old_name`.
#[track_caller]
fn committed(repo: &TestRepo, patch: &str, steps: &str, file: &str, old: &str, new: &str) {
    let head = repo.head();
    let run = repo.apply(patch, &["--verify", steps, "--checks", "none", "--commit"]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "committed", "{report:#}");
    let steps: Vec<&str> = steps.split(',').collect();
    assert_passed(&report, &steps);
    assert_ne!(repo.head(), head, "HEAD did not move");
    let shown = repo.git(&["show", &format!("HEAD:{file}")]);
    assert!(
        shown.contains(new) && !shown.contains(old),
        "HEAD:{file}:\n{shown}"
    );
    assert_eq!(repo.read_str(file), shown, "working tree and HEAD differ");
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "tree not clean");
}

/// No pytest report or other file left in `.git/patchgate` but the mirror, caches and records.
#[track_caller]
fn no_scratch_left(repo: &TestRepo) {
    let dir = repo.path().join(".git/patchgate");
    let stray: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".xml") || n.ends_with(".tmp"))
        .collect();
    assert_eq!(
        stray,
        Vec::<String>::new(),
        "scratch files in {}",
        dir.display()
    );
}

// ---------------------------------------------------------------------------------------------
// Rust

const RUST_PARTIAL: &[(&str, &str, &str, bool)] =
    &[("src/ops.rs", "add_numbers(", "sum_two(", true)];

#[test]
fn rust_rename_missing_a_call_site_fails_the_build() {
    if !require("rust") {
        return;
    }
    let repo = rust_project();
    let report = refused(&repo, &patch(RUST_PARTIAL), "build");
    // `ops::add_numbers(acc, x)` in lib.rs was not renamed.
    assert_failed_at(&report, "build", "src/lib.rs", 4, "add_numbers");
    let f = &failures(step(&report, "build"))[0];
    assert_eq!(f["name"], "E0425", "{f:#}");
}

#[test]
fn rust_complete_rename_builds_tests_and_commits() {
    if !require("rust") {
        return;
    }
    let repo = rust_project();
    let mut edits = RUST_PARTIAL.to_vec();
    edits.push(("src/lib.rs", "ops::add_numbers(", "ops::sum_two(", false));
    committed(
        &repo,
        &patch(&edits),
        "build,test",
        "src/ops.rs",
        "add_numbers",
        "sum_two",
    );
    assert!(repo.read_str("src/lib.rs").contains("ops::sum_two(acc, x)"));
    // The build ran in patchgate's mirror with its own target directory, not the user's tree.
    assert!(!repo.exists("target"));
    assert!(repo.path().join(".git/patchgate/cargo-target").is_dir());
}

#[test]
fn rust_broken_unit_test_fails_the_test_step() {
    if !require("rust") {
        return;
    }
    let repo = rust_project();
    let p = patch(&[("src/ops.rs", "    a + b\n", "    a * b\n", false)]);
    let report = refused(&repo, &p, "test");
    let f = assert_test_failed(&report, "ops::tests::doubles", "double of 21");
    assert_eq!((&f["file"], &f["line"]), (&json!("src/ops.rs"), &json!(15)));
    assert!(
        f["message"].as_str().unwrap().contains("left: 441"),
        "{f:#}"
    );
    let f = assert_test_failed(&report, "tests::total_sums", "total of 1, 2, 3");
    assert_eq!((&f["file"], &f["line"]), (&json!("src/lib.rs"), &json!(13)));
}

// ---------------------------------------------------------------------------------------------
// Go

const GO_PARTIAL: &[(&str, &str, &str, bool)] = &[
    ("mathx/mathx.go", "AddNumbers", "SumTwo", true),
    (
        "mathx/mathx_test.go",
        "AddNumbers(2, 3);",
        "SumTwo(2, 3);",
        false,
    ),
];

#[test]
fn go_rename_missing_a_call_site_fails_the_build() {
    if !require("go") {
        return;
    }
    let repo = go_project();
    let report = refused(&repo, &patch(GO_PARTIAL), "build");
    // `mathx.AddNumbers(1, 2)` in main.go was not renamed.
    assert_failed_at(&report, "build", "main.go", 10, "AddNumbers");
    let f = &failures(step(&report, "build"))[0];
    assert!(
        f["message"].as_str().unwrap().contains("AddNumbers"),
        "{f:#}"
    );
}

#[test]
fn go_complete_rename_builds_tests_and_commits() {
    if !require("go") {
        return;
    }
    let repo = go_project();
    let mut edits = GO_PARTIAL.to_vec();
    edits.push(("mathx/mathx_test.go", "\"AddNumbers(", "\"SumTwo(", false));
    edits.push(("main.go", "mathx.AddNumbers(", "mathx.SumTwo(", false));
    committed(
        &repo,
        &patch(&edits),
        "build,test",
        "main.go",
        "AddNumbers",
        "SumTwo",
    );
    assert!(!repo.read_str("mathx/mathx.go").contains("AddNumbers"));
}

#[test]
fn go_broken_unit_test_fails_the_test_step() {
    if !require("go") {
        return;
    }
    let repo = go_project();
    let p = patch(&[("mathx/mathx.go", "return a + b", "return a - b", false)]);
    let report = refused(&repo, &p, "test");
    let f = assert_test_failed(
        &report,
        "example.com/calc/mathx.TestAddNumbers",
        "AddNumbers(2, 3) = -1, want 5",
    );
    // go prints the position relative to the package directory: reported from the root.
    assert_eq!(
        (&f["file"], &f["line"]),
        (&json!("mathx/mathx_test.go"), &json!(7)),
        "{f:#}"
    );
}

// ---------------------------------------------------------------------------------------------
// Node

const NODE_PARTIAL: &[(&str, &str, &str, bool)] = &[
    (
        "src/math.js",
        "export function addNumbers(",
        "export function sumTwo(",
        false,
    ),
    ("test/math.test.js", "addNumbers", "sumTwo", true),
];

#[test]
fn node_rename_missing_a_call_site_fails_the_typecheck() {
    if !require("node") {
        return;
    }
    let repo = node_project();
    let report = refused(&repo, &patch(NODE_PARTIAL), "typecheck");
    // `import { addNumbers }` in total.js was not renamed; there is no `typecheck` script, so
    // this is `tsc --noEmit` from the project's node_modules.
    assert_failed_at(&report, "typecheck", "src/total.js", 1, "addNumbers");
    let entry = step(&report, "typecheck");
    assert!(
        entry["command"].as_str().unwrap().contains("tsc --noEmit"),
        "{entry:#}"
    );
    assert_eq!(failures(entry)[0]["name"], "TS2305", "{entry:#}");
}

#[test]
fn node_partial_rename_fails_the_tests_with_the_missing_export() {
    if !require("node") {
        return;
    }
    let repo = node_project();
    let report = refused(&repo, &patch(NODE_PARTIAL), "test");
    // The test file does not load: one failure named by the file (in the repository, not the
    // mirror), with node's error as the message, and the same hint as tsc's.
    let f = assert_test_failed(
        &report,
        "test/math.test.js",
        "does not provide an export named 'addNumbers'",
    );
    assert_eq!(f["file"], "test/math.test.js", "{f:#}");
    let hints = &step(&report, "test")["hints"];
    assert!(hints.to_string().contains("`addNumbers`"), "{hints}");
}

#[test]
fn node_complete_rename_typechecks_tests_and_commits() {
    if !require("node") {
        return;
    }
    let repo = node_project();
    let mut edits = NODE_PARTIAL.to_vec();
    edits.push(("src/total.js", "addNumbers", "sumTwo", true));
    committed(
        &repo,
        &patch(&edits),
        "typecheck,test",
        "src/total.js",
        "addNumbers",
        "sumTwo",
    );
}

#[test]
fn node_broken_unit_test_fails_the_test_step() {
    if !require("node") {
        return;
    }
    let repo = node_project();
    let p = patch(&[("src/math.js", "return a + b;", "return a * b;", false)]);
    let report = refused(&repo, &p, "test");
    let f = assert_test_failed(&report, "addNumbers adds", "6 !== 5");
    assert_eq!(
        (&f["file"], &f["line"]),
        (&json!("test/math.test.js"), &json!(6)),
        "{f:#}"
    );
    assert_test_failed(&report, "total sums", "0 !== 6");
}

// ---------------------------------------------------------------------------------------------
// Python

const PYTHON_PARTIAL: &[(&str, &str, &str, bool)] = &[
    ("calc/ops.py", "def add_numbers(", "def sum_two(", false),
    ("tests/test_ops.py", "add_numbers", "sum_two", true),
];

#[test]
fn python_rename_missing_a_call_site_fails_the_typecheck() {
    if !require("python") {
        return;
    }
    let repo = python_project();
    let report = refused(&repo, &patch(PYTHON_PARTIAL), "typecheck");
    // `ops.add_numbers(acc, x)` in total.py was not renamed.
    assert_failed_at(&report, "typecheck", "calc/total.py", 7, "add_numbers");
    assert_eq!(
        failures(step(&report, "typecheck"))[0]["name"],
        "attr-defined"
    );
}

#[test]
fn python_complete_rename_typechecks_tests_and_commits() {
    if !require("python") {
        return;
    }
    let repo = python_project();
    let mut edits = PYTHON_PARTIAL.to_vec();
    edits.push(("calc/total.py", "ops.add_numbers(", "ops.sum_two(", false));
    committed(
        &repo,
        &patch(&edits),
        "typecheck,test",
        "calc/total.py",
        "add_numbers",
        "sum_two",
    );
    no_scratch_left(&repo);
}

#[test]
fn python_broken_unit_test_fails_the_test_step() {
    if !require("python") {
        return;
    }
    let repo = python_project();
    let p = patch(&[("calc/ops.py", "return a + b", "return a - b", false)]);
    let report = refused(&repo, &p, "test");
    let f = assert_test_failed(
        &report,
        "tests/test_ops.py::test_add_numbers",
        "assert -1 == 5",
    );
    assert_eq!(
        (&f["file"], &f["line"]),
        (&json!("tests/test_ops.py"), &json!(6)),
        "{f:#}"
    );
    assert_test_failed(&report, "tests/test_ops.py::test_total", "assert -6 == 6");
    // pytest's JUnit report is read and removed.
    no_scratch_left(&repo);
}

// ---------------------------------------------------------------------------------------------
// `patchgate verify` on the working tree

/// `patchgate verify --steps test` with `file` edited in the working tree (not committed): exit
/// 1, `checks_failed`, the failing test reported; the working tree left as the user made it.
#[track_caller]
fn verify_reports(repo: &TestRepo, file: &str, old: &str, new: &str, test: &str, message: &str) {
    let edited = repo.read_str(file).replacen(old, new, 1);
    repo.write(file, &edited);
    let before = repo.snapshot();
    let run = repo.run(&["verify", "--steps", "test", "--format", "json"]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_test_failed(&report, test, message);
    assert_eq!(repo.snapshot(), before, "verify changed the repository");
    assert_eq!(repo.read_str(file), edited);
    // The same tree with the change undone passes.
    repo.git(&["checkout", "--", file]);
    let run = repo.run(&["verify", "--steps", "test", ".", "--format", "json"]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "clean", "{report:#}");
    assert_passed(&report, &["test"]);
}

#[test]
fn verify_subcommand_reports_a_failing_rust_test() {
    if !require("rust") {
        return;
    }
    let repo = rust_project();
    verify_reports(
        &repo,
        "src/ops.rs",
        "a + b",
        "a - b",
        "ops::tests::doubles",
        "double of 21",
    );
}

#[test]
fn verify_subcommand_reports_a_failing_go_test() {
    if !require("go") {
        return;
    }
    let repo = go_project();
    verify_reports(
        &repo,
        "mathx/mathx.go",
        "return a + b",
        "return a * b",
        "example.com/calc/mathx.TestAddNumbers",
        "AddNumbers(2, 3) = 6, want 5",
    );
}

#[test]
fn verify_subcommand_reports_a_failing_node_test() {
    if !require("node") {
        return;
    }
    let repo = node_project();
    verify_reports(
        &repo,
        "src/math.js",
        "return a + b;",
        "return a - b;",
        "addNumbers adds",
        "-1 !== 5",
    );
}

#[test]
fn verify_subcommand_reports_a_failing_python_test() {
    if !require("python") {
        return;
    }
    let repo = python_project();
    verify_reports(
        &repo,
        "calc/ops.py",
        "return a + b",
        "return a * b",
        "tests/test_ops.py::test_add_numbers",
        "assert 6 == 5",
    );
    no_scratch_left(&repo);
}

// ---------------------------------------------------------------------------------------------
// A missing toolchain

fn run_with_path(dir: &Path, args: &[&str], path: &OsString) -> Run {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .expect("patchgate runs");
    Run::from(out)
}

#[track_caller]
fn assert_all_missing(report: &Value, steps: &[&str]) {
    for s in steps {
        let entry = step(report, s);
        assert_eq!(entry["status"], "missing", "{entry:#}");
        assert!(
            entry["note"].as_str().is_some_and(|n| n.contains("go")),
            "the note names the missing tool: {entry:#}"
        );
    }
}

#[test]
fn missing_go_toolchain_is_reported_and_blocks_only_with_require_tools() {
    let repo = go_project();
    let scratch = tempfile::tempdir().expect("tempdir");
    let path = crate::harness::path_without("go", scratch.path());
    let pfile = scratch.path().join("p.json");
    std::fs::write(
        &pfile,
        patch(&[("mathx/mathx.go", "return a + b", "return a - b", false)]),
    )
    .expect("write patch");
    let pfile = pfile.to_str().expect("utf8");
    let apply = |extra: &[&str]| {
        let mut args = vec![
            "apply",
            pfile,
            "--format",
            "json",
            "--verify",
            "build,test",
            "--checks",
            "none",
        ];
        args.extend_from_slice(extra);
        run_with_path(repo.path(), &args, &path)
    };

    // With --require-tools: refused, nothing written.
    let before = repo.snapshot();
    let run = apply(&["--require-tools"]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_all_missing(&report, &["build", "test"]);
    assert_eq!(repo.snapshot(), before);

    // `patchgate verify` likewise: clean without --require-tools, failed with it.
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify", ".", "--steps", "build,test", "--format", "json"];
        args.extend_from_slice(extra);
        run_with_path(repo.path(), &args, &path)
    };
    let run = verify(&[]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "clean", "{report:#}");
    assert_all_missing(&report, &["build", "test"]);
    let run = verify(&["--require-tools"]);
    run.assert_code(1);
    assert_eq!(run.json()["status"], "checks_failed");

    // Without it: reported, not blocking; the patch (which would fail the tests) is applied.
    let run = apply(&[]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "applied", "{report:#}");
    assert_all_missing(&report, &["build", "test"]);
    assert!(repo.read_str("mathx/mathx.go").contains("return a - b"));
}
