//! The built-in syntax gate, live: a syntax error a patch introduces blocks, in Python,
//! JavaScript, TypeScript, TSX, Rust, Go, JSON, TOML and YAML, with the line of the error; an error
//! that was already in the file does not; and it needs no tool at all, not even on PATH.

use std::ffi::OsStr;

use serde_json::json;

use super::{checkers_on, refused};
use crate::checks::{apply_with_path, check, findings, patch};
use crate::harness::{TestRepo, assert_subset, path_with_only_git};

/// A clean file of each language, and one that already has a syntax error on line 1 (2 for Go).
const FILES: &[(&str, &str)] = &[
    (
        "app.py",
        "def add(a, b):\n    return a + b\n\n\ndef other():\n    return 2\n",
    ),
    (
        "app.js",
        "export function add(a, b) {\n  return a + b;\n}\n\nexport function other() {\n  return 2;\n}\n",
    ),
    (
        "app.ts",
        "export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport function other(): number {\n  return 2;\n}\n",
    ),
    (
        "view.tsx",
        "export function View(): JSX.Element {\n  return <div>hi</div>;\n}\n\nexport function other(): number {\n  return 2;\n}\n",
    ),
    (
        "lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn other() -> i32 {\n    2\n}\n",
    ),
    (
        "main.go",
        "package main\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc other() int {\n\treturn 2\n}\n",
    ),
    (
        "data.json",
        "{\n  \"name\": \"demo\",\n  \"version\": 1\n}\n",
    ),
    ("conf.toml", "[package]\nname = \"demo\"\nversion = \"1\"\n"),
    ("conf.yaml", "name: demo\nitems:\n  - a\n  - b\n"),
    (
        "legacy.py",
        "def broken(:\n    pass\n\n\ndef other():\n    return 2\n",
    ),
    (
        "legacy.js",
        "export const broken = (1;\n\nexport function other() {\n  return 2;\n}\n",
    ),
    (
        "legacy.ts",
        "export const broken: number = (1;\n\nexport function other(): number {\n  return 2;\n}\n",
    ),
    (
        "legacy.tsx",
        "export const el = <div>{1</div>;\n\nexport function other(): number {\n  return 2;\n}\n",
    ),
    (
        "legacy.rs",
        "pub fn broken( -> i32 {\n    1\n}\n\npub fn other() -> i32 {\n    2\n}\n",
    ),
    (
        "legacy.go",
        "package main\n\nfunc broken( int {\n\treturn 1\n}\n\nfunc other() int {\n\treturn 2\n}\n",
    ),
    ("legacy.json", "{\n  \"a\": 1,,\n  \"b\": 2\n}\n"),
    ("legacy.toml", "a = = 1\nb = 2\n"),
    ("legacy.yaml", "a: [1\nb: 2\n"),
];

/// The files at the repository root: no project marker, so no checker but the syntax gate.
fn sources() -> TestRepo {
    FILES
        .iter()
        .fold(TestRepo::new(), |r, (rel, text)| r.file(rel, text))
        .commit()
}

/// (file, old, new, line of the error, what its message says).
type Case = (&'static str, &'static str, &'static str, u64, &'static str);

const BREAKS: &[Case] = &[
    (
        "app.py",
        "    return 2\n",
        "    x = 1\n      return 2\n",
        7,
        "unexpected indent",
    ),
    (
        "app.py",
        "    return 2\n",
        "    return (2\n",
        6,
        "never closed",
    ),
    (
        "app.js",
        "  return 2;\n}\n",
        "  return 2;\n}\n}\n",
        8,
        "unexpected `}`",
    ),
    ("app.js", "  return 2;", "  return f(2;", 6, "missing `)`"),
    (
        "app.ts",
        "  return 2;\n}\n",
        "  return 2;\n}\n}\n",
        8,
        "unexpected `}`",
    ),
    ("app.ts", "  return 2;", "  return f(2;", 6, "missing `)`"),
    (
        "view.tsx",
        "  return 2;\n}\n",
        "  return 2;\n}\n}\n",
        8,
        "unexpected `}`",
    ),
    ("view.tsx", "  return 2;", "  return f(2;", 6, "missing `)`"),
    ("lib.rs", "    2\n}\n", "    2\n}\n}\n", 8, "unexpected `}`"),
    ("lib.rs", "    2\n", "    f(2\n", 6, "missing `)`"),
    (
        "main.go",
        "\treturn 2\n}\n",
        "\treturn 2\n}\n}\n",
        10,
        "unexpected `}`",
    ),
    ("main.go", "\treturn 2", "\treturn f(2", 8, "missing `)`"),
    ("data.json", "\"version\": 1", "\"version\" 1", 3, ""),
    ("conf.toml", "version = \"1\"", "version = \"1", 3, ""),
    ("conf.yaml", "  - b\n", "  - b\n bad: [1\n", 5, ""),
];

#[test]
fn a_syntax_error_the_patch_introduces_blocks_at_its_line() {
    let repo = sources();
    for &(rel, old, new, line, says) in BREAKS {
        let report = refused(&repo, &patch(rel, old, new), rel, "syntax");
        // The built-in checks: references too, for the languages whose names it can follow.
        let want: &[&str] = if [".json", ".toml", ".yaml"].iter().any(|e| rel.ends_with(e)) {
            &["syntax"]
        } else {
            &["references", "syntax"]
        };
        assert_eq!(checkers_on(&report, rel), want, "{rel}: {report:#}");
        let c = check(&report, rel, "syntax");
        let found = findings(c);
        assert_eq!(found.len(), 1, "{rel} {new:?}: {c:#}");
        assert_subset(
            &found[0],
            &json!({"line": line, "rule": "syntax", "severity": "error", "new": true}),
            &format!("{rel} {new:?}"),
        );
        let message = found[0]["message"].as_str().unwrap_or("");
        assert!(message.contains(says), "{rel} {new:?}: {c:#}");
    }
}

#[test]
fn a_file_already_broken_elsewhere_accepts_an_unrelated_edit() {
    let repo = sources();
    let edits = [
        ("legacy.py", "    return 2\n", "    return 3\n"),
        ("legacy.js", "  return 2;", "  return 3;"),
        ("legacy.ts", "  return 2;", "  return 3;"),
        ("legacy.tsx", "  return 2;", "  return 3;"),
        ("legacy.rs", "    2\n", "    3\n"),
        ("legacy.go", "\treturn 2", "\treturn 3"),
        ("legacy.json", "\"b\": 2", "\"b\": 3"),
        ("legacy.toml", "b = 2", "b = 3"),
        ("legacy.yaml", "b: 2", "b: 3"),
    ];
    for (rel, old, new) in edits {
        let report = super::applied(&repo, rel, old, new);
        let c = check(&report, rel, "syntax");
        assert_eq!(c["findings"], json!([]), "{rel}: {c:#}");
    }
    // The same files still refuse a new error: the gate compared, it did not give up.
    refused(
        &repo,
        &patch("legacy.js", "  return 3;", "  return f(3;"),
        "legacy.js",
        "syntax",
    );
    refused(
        &repo,
        &patch("legacy.py", "    return 3\n", "    return (3\n"),
        "legacy.py",
        "syntax",
    );
}

/// One project per language, each configured for its usual checkers (ruff, prettier + eslint,
/// rustfmt + clippy, gofmt + go vet), and a PATH without any of them: they are `missing` (no
/// `--require-tools`: not blocking), and the syntax gate alone still blocks.
#[test]
fn the_syntax_gate_blocks_with_no_tool_on_path() {
    let repo = TestRepo::new()
        .file(
            "py/pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"E\", \"F\"]\n\n[tool.ruff.format]\n",
        )
        .file("py/app.py", FILES[0].1)
        .file(
            "web/package.json",
            "{\"name\": \"demo\", \"private\": true, \"type\": \"module\"}\n",
        )
        .file("web/.prettierrc.json", "{}\n")
        .file("web/eslint.config.js", "export default [];\n")
        .file("web/app.ts", FILES[2].1)
        .file(
            "rs/Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .file("rs/src/lib.rs", FILES[4].1)
        .file("go/go.mod", "module example.com/demo\n\ngo 1.21\n")
        .file("go/main.go", FILES[5].1)
        .commit();
    let scratch = tempfile::tempdir().expect("tempdir");
    let path = path_with_only_git(scratch.path());
    let cases = [
        (
            "py/app.py",
            "    return 2\n",
            "    return (2\n",
            6,
            ["ruff-format", "ruff"],
        ),
        (
            "web/app.ts",
            "  return 2;",
            "  return f(2;",
            6,
            ["prettier", "eslint"],
        ),
        (
            "rs/src/lib.rs",
            "    2\n",
            "    f(2\n",
            6,
            ["rustfmt", "clippy"],
        ),
        (
            "go/main.go",
            "\treturn 2",
            "\treturn f(2",
            8,
            ["gofmt", "go-lint"],
        ),
    ];
    for (rel, old, new, line, others) in cases {
        let before = repo.snapshot();
        let run = apply_with_path(&repo, &patch(rel, old, new), &[], OsStr::new(&path));
        run.assert_code(1);
        let report = run.json();
        assert_eq!(report["status"], "checks_failed", "{report:#}");
        let c = check(&report, rel, "syntax");
        assert_eq!(c["status"], "fail", "{c:#}");
        assert_subset(
            &c["findings"],
            &json!([{"line": line, "new": true}]),
            &format!("{rel} findings"),
        );
        for other in others {
            let o = check(&report, rel, other);
            assert_eq!(o["status"], "missing", "{rel}: {o:#}");
        }
        assert_eq!(
            repo.snapshot(),
            before,
            "{rel}: the refused patch was written"
        );
    }
    // A clean edit applies: the missing checkers do not block.
    let run = apply_with_path(
        &repo,
        &patch("py/app.py", "    return 2\n", "    return 3\n"),
        &[],
        OsStr::new(&path),
    );
    run.assert_code(0);
    assert_eq!(run.json()["status"], "applied", "{}", run.stdout);
}
