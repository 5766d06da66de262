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
//! The baseline: projects that already have type errors, a vet finding and a failing test
//! accept a correct patch and refuse one that breaks a test that passed (Python, Go); the second
//! patch on the same base takes its baseline from the cache (`"baseline": "cached"`, and a test
//! that counts its runs in a marker file); `patchgate verify` says which failures were there at
//! HEAD. The mirror is the same project as the real tree: each step's pass/fail and error count
//! in the mirror equal the same command's in place (TypeScript with `verbatimModuleSyntax` and
//! mixed module formats, Python with a mypy configuration, Go, Rust).
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

// ---------------------------------------------------------------------------------------------
// The baseline: what was already broken does not block

/// The failures of `entry` whose `new` is `new`, by name.
#[track_caller]
fn names(entry: &Value, new: bool) -> Vec<String> {
    failures(entry)
        .iter()
        .filter(|f| f["new"] == new)
        .map(|f| f["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A step that failed on the patched state only with failures that were already there: `pass`,
/// compared with a baseline from `source`, every failure `new: false`, and the note says so.
#[track_caller]
fn passed_with_old(report: &Value, step_name: &str, source: &str, count: usize) {
    let entry = step(report, step_name);
    assert_eq!(entry["status"], "pass", "{entry:#}");
    assert_eq!(entry["baseline"], source, "{entry:#}");
    assert_eq!(failures(entry).len(), count, "{entry:#}");
    assert!(
        failures(entry).iter().all(|f| f["new"] == false),
        "{entry:#}"
    );
    let note = entry["note"].as_str().unwrap_or_default();
    let said = match count {
        1 => "1 failure was already there before the patch".to_string(),
        n => format!("{n} failures were already there before the patch"),
    };
    assert!(note.contains(&said), "{entry:#}");
}

/// A Python package with mypy configured (`files`), two type errors and a failing test in
/// `calc/legacy.py` and `tests/test_legacy.py` before any patch; the failing test appends a
/// line to `marker` each time it runs (outside the repository).
fn python_legacy_project(marker: &Path) -> TestRepo {
    TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.mypy]\nfiles = [\"calc\"]\n",
        )
        .file(".gitignore", "__pycache__/\n.mypy_cache/\n")
        .file("calc/__init__.py", "")
        .file(
            "calc/ops.py",
            "def add_numbers(a: int, b: int) -> int:\n    return a + b\n",
        )
        .file(
            "calc/legacy.py",
            "def legacy_total(xs: list[int]) -> int:\n\
             \x20   return \"not an int\"\n\n\n\
             def legacy_name() -> str:\n\
             \x20   return 42\n",
        )
        .file(
            "tests/test_ops.py",
            "from calc.ops import add_numbers\n\n\n\
             def test_add_numbers() -> None:\n\
             \x20   assert add_numbers(2, 3) == 5\n",
        )
        .file(
            "tests/test_legacy.py",
            format!(
                "import pathlib\n\n\n\
                 def test_legacy_is_broken() -> None:\n\
                 \x20   with pathlib.Path({:?}).open(\"a\") as f:\n\
                 \x20       f.write(\"ran\\n\")\n\
                 \x20   assert 1 + 1 == 3\n",
                marker.to_str().expect("utf8")
            ),
        )
        .commit()
}

fn runs(marker: &Path) -> usize {
    std::fs::read_to_string(marker)
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn python_existing_failures_do_not_block_and_the_baseline_is_cached() {
    if !require("python") {
        return;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let marker = scratch.path().join("legacy-runs");
    let repo = python_legacy_project(&marker);

    // A docstring on the file with the type errors: they move down two lines, and are still
    // the same errors. The failing test was failing before. Accepted.
    let docstring = patch(&[(
        "calc/legacy.py",
        "def legacy_total(",
        "\"\"\"Legacy helpers.\"\"\"\n\n\ndef legacy_total(",
        false,
    )]);
    let run = repo.apply(
        &docstring,
        &[
            "--verify",
            "build,test,typecheck",
            "--checks",
            "none",
            "--dry-run",
        ],
    );
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "dry_run", "{report:#}");
    assert_passed(&report, &["build"]);
    passed_with_old(&report, "typecheck", "ran", 2);
    let lines: Vec<&Value> = failures(step(&report, "typecheck"))
        .iter()
        .map(|f| &f["line"])
        .collect();
    assert_eq!(
        lines,
        [&json!(5), &json!(9)],
        "reported at the patched lines"
    );
    passed_with_old(&report, "test", "ran", 1);
    assert_eq!(
        names(step(&report, "test"), false),
        ["tests/test_legacy.py::test_legacy_is_broken"]
    );
    // The test suite ran twice: on the patched state and on the original.
    assert_eq!(runs(&marker), 2);

    // A patch that breaks a test that passed, on the same base: refused, with the new failure
    // told apart from the old one. The baseline comes from the cache: the suite runs once.
    let breaking = patch(&[("calc/ops.py", "return a + b", "return a - b", false)]);
    let report = refused(&repo, &breaking, "test,typecheck");
    let entry = step(&report, "test");
    assert_eq!(entry["status"], "fail", "{entry:#}");
    assert_eq!(entry["baseline"], "cached", "{entry:#}");
    assert!(
        entry["note"]
            .as_str()
            .unwrap_or_default()
            .contains("1 of 2 failures was already there before the patch (baseline: cached)"),
        "{entry:#}"
    );
    assert_eq!(names(entry, true), ["tests/test_ops.py::test_add_numbers"]);
    assert_eq!(
        names(entry, false),
        ["tests/test_legacy.py::test_legacy_is_broken"]
    );
    // New failures first.
    assert_eq!(failures(entry)[0]["new"], true, "{entry:#}");
    passed_with_old(&report, "typecheck", "cached", 2);
    assert_eq!(runs(&marker), 3);

    // `patchgate verify` reports the state as it is (a failing test fails it), and says which
    // failures were already there at HEAD: HEAD's state is the same base, cached.
    repo.write(
        "calc/ops.py",
        "def add_numbers(a: int, b: int) -> int:\n    return a * b\n",
    );
    let run = repo.run(&["verify", "--steps", "test", "--format", "json"]);
    run.assert_code(1);
    let report = run.json();
    let entry = step(&report, "test");
    assert_eq!(entry["status"], "fail", "{entry:#}");
    assert_eq!(entry["baseline"], "cached", "{entry:#}");
    assert_eq!(names(entry, true), ["tests/test_ops.py::test_add_numbers"]);
    assert_eq!(
        names(entry, false),
        ["tests/test_legacy.py::test_legacy_is_broken"]
    );
    assert!(
        entry["note"]
            .as_str()
            .unwrap_or_default()
            .contains("1 of 2 failures was already there at HEAD"),
        "{entry:#}"
    );
    assert_eq!(runs(&marker), 4);
    // Nothing uncommitted: the run is its own baseline; the state still fails.
    repo.git(&["checkout", "--", "calc/ops.py"]);
    let run = repo.run(&["verify", "--steps", "test", "--format", "json"]);
    run.assert_code(1);
    let entry = step(&run.json(), "test").clone();
    assert_eq!(entry["baseline"], "same", "{entry:#}");
    assert_eq!(names(&entry, false).len(), 1, "{entry:#}");
    assert_eq!(runs(&marker), 5);
    no_scratch_left(&repo);
}

#[test]
fn python_without_mypy_configuration_is_not_typechecked() {
    if !require("python") {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"x\"\nversion = \"0.1.0\"\n",
        )
        .file("x/__init__.py", "def f() -> int:\n    return \"s\"\n")
        .commit();
    let p = patch(&[("x/__init__.py", "def f()", "def g()", false)]);
    let run = repo.apply(&p, &["--verify", "build,typecheck", "--checks", "none"]);
    run.assert_code(0);
    let report = run.json();
    assert_passed(&report, &["build"]);
    let steps: Vec<&Value> = report["verify"]
        .as_array()
        .expect("verify")
        .iter()
        .map(|v| &v["step"])
        .collect();
    assert_eq!(steps, [&json!("build")], "{report:#}");
}

/// A Go module with a vet finding (unreachable code) and a failing test in package `legacy`.
fn go_legacy_project() -> TestRepo {
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
            "legacy/legacy.go",
            "package legacy\n\n\
             import \"fmt\"\n\n\
             func Describe(n int) string {\n\
             \tif n < 0 {\n\
             \t\treturn \"negative\"\n\
             \t\tpanic(\"unreachable\")\n\
             \t}\n\
             \treturn fmt.Sprint(n, \" items\")\n\
             }\n",
        )
        .file(
            "legacy/legacy_test.go",
            "package legacy\n\n\
             import \"testing\"\n\n\
             func TestDescribe(t *testing.T) {\n\
             \tif got := Describe(2); got != \"two items\" {\n\
             \t\tt.Errorf(\"Describe(2) = %q\", got)\n\
             \t}\n\
             }\n",
        )
        .commit()
}

#[test]
fn go_existing_failures_do_not_block_and_the_baseline_is_cached() {
    if !require("go") {
        return;
    }
    let repo = go_legacy_project();
    let doc = patch(&[(
        "legacy/legacy.go",
        "func Describe(",
        "// Describe says how many items there are.\n// It is old.\nfunc Describe(",
        false,
    )]);
    let run = repo.apply(
        &doc,
        &[
            "--verify",
            "build,test,typecheck",
            "--checks",
            "none",
            "--dry-run",
        ],
    );
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "dry_run", "{report:#}");
    assert_passed(&report, &["build"]);
    passed_with_old(&report, "typecheck", "ran", 1);
    let f = &failures(step(&report, "typecheck"))[0];
    assert_eq!(
        (&f["file"], &f["line"]),
        (&json!("legacy/legacy.go"), &json!(10)),
        "{f:#}"
    );
    passed_with_old(&report, "test", "ran", 1);
    assert_eq!(
        names(step(&report, "test"), false),
        ["example.com/calc/legacy.TestDescribe"]
    );

    let breaking = patch(&[("mathx/mathx.go", "return a + b", "return a - b", false)]);
    let report = refused(&repo, &breaking, "build,test,typecheck");
    let entry = step(&report, "test");
    assert_eq!(entry["baseline"], "cached", "{entry:#}");
    assert_eq!(
        names(entry, true),
        ["example.com/calc/mathx.TestAddNumbers"]
    );
    assert_eq!(
        names(entry, false),
        ["example.com/calc/legacy.TestDescribe"]
    );
    passed_with_old(&report, "typecheck", "cached", 1);
    assert_passed(&report, &["build"]);

    // A new vet finding in the file that has an old one blocks; the old one does not.
    let vet = patch(&[(
        "legacy/legacy.go",
        "\treturn fmt.Sprint(n, \" items\")\n",
        "\treturn fmt.Sprint(n, \" items\")\n\tpanic(\"unreachable too\")\n",
        false,
    )]);
    let report = refused(&repo, &vet, "typecheck");
    let entry = step(&report, "typecheck");
    assert_eq!(entry["status"], "fail", "{entry:#}");
    let new: Vec<&Value> = failures(entry)
        .iter()
        .filter(|f| f["new"] == true)
        .collect();
    assert_eq!(new.len(), 1, "{entry:#}");
    assert_eq!(new[0]["line"], 11, "{entry:#}");
}

// ---------------------------------------------------------------------------------------------
// The mirror is the same project as the real tree

/// `patchgate verify --steps <steps> .` on an unchanged project: per step, its status and how
/// many failures it reported.
fn in_mirror(repo: &TestRepo, steps: &str) -> Vec<(String, String, usize)> {
    let run = repo.run(&["verify", "--steps", steps, ".", "--format", "json"]);
    let report = run.json();
    report["verify"]
        .as_array()
        .unwrap_or_else(|| panic!("no verify array:\n{report:#}"))
        .iter()
        .map(|v| {
            (
                v["step"].as_str().unwrap_or_default().to_string(),
                v["status"].as_str().unwrap_or_default().to_string(),
                failures(v).len(),
            )
        })
        .collect()
}

/// A command run in the repository itself: whether it succeeded, stdout, stderr.
fn in_place(repo: &TestRepo, argv: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(repo.path())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn status(ok: bool) -> String {
    if ok { "pass" } else { "fail" }.to_string()
}

fn errors(findings: Vec<patchgate::checks::finding::RawFinding>) -> usize {
    patchgate::verify::parse::compiler(&findings).len()
}

#[track_caller]
fn assert_same(mirror: &[(String, String, usize)], place: &[(&str, String, usize)]) {
    let place: Vec<(String, String, usize)> = place
        .iter()
        .map(|(s, st, n)| (s.to_string(), st.clone(), *n))
        .collect();
    let mut mirror = mirror.to_vec();
    mirror.sort();
    let mut place = place;
    place.sort();
    assert_eq!(mirror, place, "mirror (left) and in place (right) differ");
}

#[test]
fn mirror_matches_in_place_typescript_module_formats() {
    if !require("node") {
        return;
    }
    // `"type": "commonjs"` with `moduleResolution: bundler` and `verbatimModuleSyntax`: ES
    // syntax is fine in place; under a `node_modules` directory tsc reads the package's type and
    // reports every import and export. A folder of `"type": "module"` beside it, and one real
    // error.
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"mix\", \"version\": \"1.0.0\", \"type\": \"commonjs\"}\n",
        )
        .file(
            "tsconfig.json",
            r#"{
  "compilerOptions": {
    "target": "es2022",
    "module": "esnext",
    "moduleResolution": "bundler",
    "verbatimModuleSyntax": true,
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true
  },
  "include": ["src"]
}
"#,
        )
        .file(".gitignore", "node_modules\n")
        .file(
            "src/math.ts",
            "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
        )
        .file(
            "src/main.ts",
            "import { add } from \"./math\";\nimport { twice } from \"./esm/util\";\n\n\
             export const n: number = add(1, twice(2));\nexport const s: string = n;\n",
        )
        .file("src/esm/package.json", "{\"type\": \"module\"}\n")
        .file(
            "src/esm/util.ts",
            "export function twice(x: number): number {\n  return 2 * x;\n}\n",
        );
    std::os::unix::fs::symlink(tools_node_modules(), repo.path().join("node_modules"))
        .expect("link node_modules");
    let repo = repo.commit();
    let mirror = in_mirror(&repo, "typecheck");
    let tsc = tools_node_modules().join(".bin/tsc");
    let (ok, out, _) = in_place(
        &repo,
        &[tsc.to_str().expect("utf8"), "--noEmit", "--pretty", "false"],
        &[],
    );
    let count = errors(patchgate::checks::parse::tsc_text(&out).expect("tsc output"));
    assert_eq!(count, 1, "in place: one error (string = number):\n{out}");
    assert_same(&mirror, &[("typecheck", status(ok), count)]);
}

#[test]
fn mirror_matches_in_place_python() {
    if !require("python") {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"p\"\nversion = \"0.1.0\"\n\n[tool.mypy]\nstrict = true\n",
        )
        .file(".gitignore", "__pycache__/\n.mypy_cache/\n")
        .file(
            "p/__init__.py",
            "def f(x):\n    return x\n\n\ndef g() -> int:\n    return \"s\"\n",
        )
        .file(
            "tests/test_p.py",
            "from p import g\n\n\ndef test_g() -> None:\n    assert g() == 1\n\n\n\
             def test_ok() -> None:\n    assert True\n",
        )
        .commit();
    let mirror = in_mirror(&repo, "build,test,typecheck");
    let (ok, out, _) = in_place(&repo, &["python3", "-m", "mypy", "-O", "json", "."], &[]);
    let mypy = errors(patchgate::checks::parse::mypy_json(&out).expect("mypy output"));
    assert!(
        mypy >= 2,
        "in place: strict mypy finds the untyped def and the str:\n{out}"
    );
    let (test_ok, out, _) = in_place(
        &repo,
        &["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        &[("PYTHONDONTWRITEBYTECODE", "1")],
    );
    assert!(out.contains("1 failed, 1 passed"), "{out}");
    let (build_ok, _, _) = in_place(&repo, &["python3", "-m", "compileall", "-q", "."], &[]);
    assert_same(
        &mirror,
        &[
            ("typecheck", status(ok), mypy),
            ("test", status(test_ok), 1),
            ("build", status(build_ok), 0),
        ],
    );
}

#[test]
fn mirror_matches_in_place_go() {
    if !require("go") {
        return;
    }
    let repo = go_legacy_project();
    let mirror = in_mirror(&repo, "build,test,typecheck");
    let env = [
        ("GOTOOLCHAIN", "local"),
        ("GOPROXY", "off"),
        ("GOFLAGS", "-buildvcs=false"),
    ];
    let (vet_ok, _, err) = in_place(&repo, &["go", "vet", "./..."], &env);
    let vet = errors(patchgate::checks::parse::go_vet_text(&err).expect("vet output"));
    let (test_ok, out, err) = in_place(&repo, &["go", "test", "-json", "./..."], &env);
    let tests = patchgate::verify::parse::go_test_json(&format!("{out}\n{err}")).len();
    let (build_ok, _, _) = in_place(&repo, &["go", "build", "./..."], &env);
    assert_eq!((vet, tests), (1, 1), "in place");
    assert_same(
        &mirror,
        &[
            ("typecheck", status(vet_ok), vet),
            ("test", status(test_ok), tests),
            ("build", status(build_ok), 0),
        ],
    );
}

#[test]
fn mirror_matches_in_place_rust() {
    if !require("rust") {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"r\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .file(".gitignore", "/target\n")
        .file(
            "src/lib.rs",
            "pub fn f() -> i32 {\n    \"s\"\n}\n\npub fn g() -> u8 {\n    1\n}\n",
        )
        .commit();
    let mirror = in_mirror(&repo, "build,typecheck");
    let (ok, out, _) = in_place(
        &repo,
        &[
            "cargo",
            "check",
            "--all-targets",
            "--message-format=json",
            "--offline",
        ],
        &[("CARGO_TERM_COLOR", "never")],
    );
    let count = errors(patchgate::checks::parse::cargo_json(&out).expect("cargo output"));
    let (build_ok, out, _) = in_place(
        &repo,
        &[
            "cargo",
            "build",
            "--all-targets",
            "--message-format=json",
            "--offline",
        ],
        &[("CARGO_TERM_COLOR", "never")],
    );
    let build = errors(patchgate::checks::parse::cargo_json(&out).expect("cargo output"));
    assert_eq!((count, build), (1, 1), "in place");
    assert_same(
        &mirror,
        &[
            ("typecheck", status(ok), count),
            ("build", status(build_ok), build),
        ],
    );
}

#[test]
fn mirror_matches_in_place_node_workspace_member() {
    if !require("node") {
        return;
    }
    // A member of a workspace: its tsconfig extends the root's, and its test imports a package
    // installed (hoisted) in the root's node_modules only.
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"ws\", \"private\": true, \"workspaces\": [\"packages/*\"]}\n",
        )
        .file(
            "tsconfig.base.json",
            "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true, \"target\": \"es2022\", \
             \"module\": \"nodenext\", \"skipLibCheck\": true}}\n",
        )
        .file(".gitignore", "node_modules\n")
        .file(
            "packages/app/package.json",
            "{\"name\": \"app\", \"version\": \"1.0.0\", \"type\": \"module\", \
             \"scripts\": {\"test\": \"node --test\"}}\n",
        )
        .file(
            "packages/app/tsconfig.json",
            "{\"extends\": \"../../tsconfig.base.json\", \"include\": [\"src\"]}\n",
        )
        .file(
            "packages/app/src/a.ts",
            "export function f(x) {\n  return x;\n}\n",
        )
        .file(
            "packages/app/test/ts.test.js",
            "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\
             import ts from \"typescript\";\n\n\
             test(\"typescript is installed\", () => {\n  assert.equal(typeof ts.version, \"string\");\n});\n",
        );
    std::os::unix::fs::symlink(tools_node_modules(), repo.path().join("node_modules"))
        .expect("link node_modules");
    let repo = repo.commit();
    let run = repo.run(&[
        "verify",
        "--steps",
        "typecheck,test",
        "packages/app",
        "--format",
        "json",
    ]);
    let report = run.json();
    let app = repo.path().join("packages/app");
    let tsc = tools_node_modules().join(".bin/tsc");
    let out = Command::new(&tsc)
        .args(["--noEmit", "--pretty", "false"])
        .current_dir(&app)
        .output()
        .expect("tsc runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let in_place = patchgate::checks::parse::tsc_text(&stdout).expect("tsc output");
    assert_eq!(in_place.len(), 1, "in place: one implicit any:\n{stdout}");
    let entry = step(&report, "typecheck");
    assert_eq!(entry["status"], "fail", "{entry:#}");
    assert_eq!(failures(entry).len(), 1, "{entry:#}");
    assert_eq!(failures(entry)[0]["name"], in_place[0].rule, "{entry:#}");
    assert_eq!(
        failures(entry)[0]["file"],
        "packages/app/src/a.ts",
        "{entry:#}"
    );
    let test = step(&report, "test");
    assert_eq!(test["status"], "pass", "{test:#}");
}

#[test]
fn verify_without_a_commit_counts_every_failure_as_new() {
    if !require("python") {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"x\"\nversion = \"0.1.0\"\n",
        )
        .file(
            "tests/test_x.py",
            "def test_x() -> None:\n    assert 1 == 2\n",
        );
    let run = repo.run(&["verify", "--steps", "test", ".", "--format", "json"]);
    run.assert_code(1);
    let report = run.json();
    let entry = step(&report, "test");
    assert_eq!(entry["status"], "fail", "{entry:#}");
    assert_eq!(names(entry, true), ["tests/test_x.py::test_x"], "{entry:#}");
    assert!(entry.get("baseline").is_none(), "{entry:#}");
    assert!(
        entry["note"]
            .as_str()
            .is_some_and(|n| n.contains("no HEAD commit")),
        "{entry:#}"
    );
}

/// `--branch` verifies the branch: the working tree's uncommitted edit of the tests (which would
/// have hidden the patch's breakage) is not what runs; the branch's tests are, and the patch is
/// refused with the branch left unmade. The same patch without the breakage is committed there.
#[test]
fn branch_mode_verifies_the_branch_not_the_working_tree() {
    if !require("python") {
        return;
    }
    let repo = python_project();
    repo.write(
        "tests/test_ops.py",
        "def test_nothing() -> None:\n    assert True\n",
    );
    let args = ["--branch", "fix", "--verify", "test", "--checks", "none"];
    let run = repo.apply(
        &patch(&[("calc/ops.py", "return a + b", "return a - b", false)]),
        &args,
    );
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_test_failed(
        &report,
        "tests/test_ops.py::test_add_numbers",
        "assert -1 == 5",
    );
    let made = |name: &str| repo.has_ref(name);
    assert!(!made("refs/heads/fix"), "a refused patch made the branch");

    let run = repo.apply(&patch(&[("calc/total.py", "acc", "running", true)]), &args);
    run.assert_code(0);
    assert!(made("refs/heads/fix"));
    assert!(repo.read_str("tests/test_ops.py").contains("test_nothing"));
}

/// `--branch` judges failures against the branch: a test the branch already fails (the working
/// tree holds the user's uncommitted fix) is not the harmless patch's doing, so the patch is
/// committed there, the failure said to be old; judged against the working tree it was new.
#[test]
fn branch_mode_judges_failures_against_the_branch() {
    if !require("python") {
        return;
    }
    let repo = python_project();
    repo.write(
        "calc/ops.py",
        "def add_numbers(a: int, b: int) -> int:\n    return a + b + 1\n",
    );
    repo.git(&["commit", "-qam", "broken"]);
    repo.git(&["checkout", "HEAD~1", "--", "calc/ops.py"]);
    let run = repo.apply(
        &patch(&[("calc/total.py", "acc", "running", true)]),
        &["--branch", "fix", "--verify", "test", "--checks", "none"],
    );
    run.assert_code(0);
    let report = run.json();
    passed_with_old(&report, "test", "ran", 2);
    assert!(repo.git(&["show", "fix:calc/total.py"]).contains("running"));
}
