//! The tool runs of the checkers that read patched text on stdin or from a scratch tree (biome,
//! oxlint, black, flake8, xo), each in its own file, against the real tools on temporary projects. A tool that is not on PATH
//! skips its tests locally (loudly) and fails them in CI (`CI=true`); `scripts/install-checkers`
//! installs the pinned versions.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::biome_format::{biome_complaint, biome_format};
use super::biome_lint::biome_lint;
use super::black::black;
use super::flake8::flake8;
use super::oxlint::oxlint;
use super::xo::xo;
use crate::checks::exec::{Ran, Source, flag, kept, node_complaint, python_complaint, with_value};
use crate::checks::finding::RawFinding;

const T: Duration = Duration::from_secs(60);

/// The tool's argv, or None (skipped) when it is not installed outside CI.
fn tool(name: &str) -> Option<Vec<OsString>> {
    match crate::project::tools::which(name) {
        Some(p) => Some(vec![p.into_os_string()]),
        None if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{name} is not on PATH (scripts/install-checkers installs it)")
        }
        None => {
            eprintln!("SKIPPED: {name} is not on PATH (scripts/install-checkers installs it)");
            None
        }
    }
}

/// A temporary project (canonical path) with `files` written into it.
fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    for (rel, text) in files {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, text).expect("write");
    }
    (dir, root)
}

/// Every file under `root` with its content, to show a run changed nothing.
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn src<'a>(root: &Path, rel: &'a str, text: &'a str) -> (PathBuf, &'a str, &'a str) {
    (root.join(rel), rel, text)
}

fn summary(found: &[RawFinding]) -> Vec<(&str, usize, &str)> {
    let mut s: Vec<_> = found
        .iter()
        .map(|f| (f.path.as_str(), f.line, f.rule.as_str()))
        .collect();
    s.sort();
    s
}

fn done<T: std::fmt::Debug>(r: Ran<T>) -> T {
    match r {
        Ran::Done(t) => t,
        other => panic!("not done: {other:?}"),
    }
}

const UNFORMATTED_JS: &str = "function f(){return 1}\n";

#[test]
fn biome_format_follows_the_projects_biome_json() {
    let Some(biome_argv) = tool("biome") else {
        return;
    };
    let (_d, root) = project(&[(
        "biome.json",
        r#"{ "formatter": { "indentStyle": "space" } }"#,
    )]);
    let (real, rel, text) = src(&root, "src/new/a.js", UNFORMATTED_JS);
    let file = Source {
        rel,
        real: &real,
        text,
    };
    let out = done(biome_format(&biome_argv, &root, &file, &[], T));
    assert_eq!(out, "function f() {\n  return 1;\n}\n");
    // Without the configuration biome indents with tabs: the project's file made the difference.
    let (_e, bare) = project(&[]);
    let real = bare.join("a.js");
    let file = Source {
        rel: "a.js",
        real: &real,
        text: UNFORMATTED_JS,
    };
    assert_eq!(
        done(biome_format(&biome_argv, &bare, &file, &[], T)),
        "function f() {\n\treturn 1;\n}\n"
    );
    // Extra arguments are passed on.
    let wide = ["--indent-width=8".to_string()];
    let file = Source {
        rel,
        real: &root.join(rel),
        text: UNFORMATTED_JS,
    };
    assert_eq!(
        done(biome_format(&biome_argv, &root, &file, &wide, T)),
        "function f() {\n        return 1;\n}\n"
    );
}

#[test]
fn biome_format_skips_ignored_files_and_reports_syntax_errors() {
    let Some(biome_argv) = tool("biome") else {
        return;
    };
    let (_d, root) = project(&[(
        "biome.json",
        r#"{ "files": { "includes": ["**", "!**/gen/**"] } }"#,
    )]);
    // biome 2.6.8 matches `files.includes` on stdin only for a file that exists on disk.
    let real = root.join("gen/a.js");
    fs::create_dir_all(root.join("gen")).expect("mkdir");
    fs::write(&real, "").expect("write");
    let file = Source {
        rel: "gen/a.js",
        real: &real,
        text: UNFORMATTED_JS,
    };
    match biome_format(&biome_argv, &root, &file, &[], T) {
        Ran::Skipped(why) => assert!(why.contains("is ignored"), "{why}"),
        other => panic!("{other:?}"),
    }
    let real = root.join("src/a.js");
    let file = Source {
        rel: "src/a.js",
        real: &real,
        text: "const a = (;\n",
    };
    match biome_format(&biome_argv, &root, &file, &[], T) {
        Ran::Error(why) => assert!(why.contains("expected `)`"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn biome_lint_sees_the_patched_text_with_each_files_configuration() {
    let Some(biome_argv) = tool("biome") else {
        return;
    };
    let (_d, root) = project(&[
        (
            "biome.json",
            r#"{ "vcs": { "enabled": true, "clientKind": "git", "useIgnoreFile": true },
                 "files": { "includes": ["**", "!**/skip/**"] },
                 "extends": ["./configs/base.json"] }"#,
        ),
        (
            "configs/base.json",
            r#"{ "linter": { "rules": { "style": { "useConst": "off" } } } }"#,
        ),
        (".gitignore", "gen/\n"),
        (
            "web/biome.json",
            r#"{ "root": false, "extends": "//",
                 "linter": { "rules": { "suspicious": { "noDebugger": "off" } } } }"#,
        ),
        ("src/a.js", "export const a = 1;\n"),
    ]);
    let before = snapshot(&root);
    let bad = "let x = 1;\ndebugger;\n\nexport { x };\n";
    let texts = [
        ("src/a.js", bad),
        ("src/clean.js", "export const c = 1;\n"),
        ("web/w.js", bad),
        ("gen/g.js", bad),
        ("src/skip/s.js", bad),
        ("src/syntax.js", "const a = (;\n"),
        (
            "src/imports.js",
            "import { b } from './b.js';\nimport { a } from './a.js';\nexport { a, b };\n",
        ),
    ];
    let reals: Vec<PathBuf> = texts.iter().map(|(r, _)| root.join(r)).collect();
    let files: Vec<Source> = texts
        .iter()
        .zip(&reals)
        .map(|((rel, text), real)| Source { rel, real, text })
        .collect();
    let scratch = tempfile::tempdir().expect("scratch");
    let found = done(biome_lint(
        &biome_argv,
        &root,
        &root,
        &files,
        &[],
        scratch.path(),
        T,
    ));
    assert_eq!(
        summary(&found),
        [
            ("src/a.js", 2, "lint/suspicious/noDebugger"),
            ("src/imports.js", 1, "assist/source/organizeImports"),
            ("src/syntax.js", 1, "lint/correctness/noUnusedVariables"),
            ("src/syntax.js", 1, "parse"),
        ],
        "the patched text of src/a.js is linted, web/ has its nested config (noDebugger off), \
         gen/ is gitignored, skip/ excluded by files.includes, the base config's useConst off is extended, no format findings"
    );
    assert_eq!(before, snapshot(&root), "the project was not touched");
    assert_eq!(
        fs::read_dir(scratch.path()).expect("scratch").count(),
        0,
        "the scratch tree is gone"
    );
    // From the nested project's directory the same files get the same findings, also with the
    // scratch directory where patchgate keeps it, inside the repository's git directory.
    let web = root.join("web");
    let in_git = root.join(".git/patchgate/scratch");
    let found = done(biome_lint(
        &biome_argv,
        &root,
        &web,
        &files[..3],
        &[],
        &in_git,
        T,
    ));
    assert_eq!(
        summary(&found),
        [("src/a.js", 2, "lint/suspicious/noDebugger")]
    );
}

#[test]
fn biome_lint_reports_a_configuration_error() {
    let Some(biome_argv) = tool("biome") else {
        return;
    };
    let (_d, root) = project(&[(
        "biome.json",
        r#"{ "formatter": { "indentStyle": "spaces" } }"#,
    )]);
    let real = root.join("a.js");
    let files = [Source {
        rel: "a.js",
        real: &real,
        text: "debugger;\n",
    }];
    let scratch = tempfile::tempdir().expect("scratch");
    match biome_lint(&biome_argv, &root, &root, &files, &[], scratch.path(), T) {
        Ran::Error(why) => assert!(why.contains("unknown value `spaces`"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn oxlint_uses_the_nearest_config_of_each_file() {
    let Some(oxlint_argv) = tool("oxlint") else {
        return;
    };
    let (_d, root) = project(&[
        (
            ".oxlintrc.json",
            r#"{ "rules": { "no-debugger": "error" } }"#,
        ),
        (
            "sub/.oxlintrc.json",
            r#"{ "rules": { "no-debugger": "off", "eqeqeq": "error" } }"#,
        ),
        ("src/a.js", "export const a = 1;\n"),
    ]);
    let before = snapshot(&root);
    let bad = "export let y = 2;\ndebugger;\nif (y == 2) { y = 3; }\n";
    let texts = [
        ("src/a.js", bad),
        ("sub/b.js", bad),
        ("src/clean.js", "export const c = 1;\n"),
    ];
    let reals: Vec<PathBuf> = texts.iter().map(|(r, _)| root.join(r)).collect();
    let files: Vec<Source> = texts
        .iter()
        .zip(&reals)
        .map(|((rel, text), real)| Source { rel, real, text })
        .collect();
    let scratch = tempfile::tempdir().expect("scratch");
    let sub = root.join("sub");
    let found = done(oxlint(
        &oxlint_argv,
        &root,
        &sub,
        &files,
        &[],
        scratch.path(),
        T,
    ));
    assert_eq!(
        summary(&found),
        [
            ("src/a.js", 2, "eslint(no-debugger)"),
            ("sub/b.js", 3, "eslint(eqeqeq)"),
        ]
    );
    assert_eq!(before, snapshot(&root), "the project was not touched");
    // A batch below `cwd` runs there, where oxlint reads `.eslintignore`.
    fs::write(root.join("sub/.eslintignore"), "ignored.js\n").expect("write");
    let ignored_real = root.join("sub/ignored.js");
    let below = [
        files[1],
        Source {
            rel: "sub/ignored.js",
            real: &ignored_real,
            text: bad,
        },
    ];
    let in_git = root.join(".git/patchgate/scratch");
    let found = done(oxlint(&oxlint_argv, &root, &sub, &below, &[], &in_git, T));
    assert_eq!(summary(&found), [("sub/b.js", 3, "eslint(eqeqeq)")]);
    fs::write(
        root.join("sub/.oxlintrc.json"),
        r#"{ "rules": { "no-such-rule-xyz": "error" } }"#,
    )
    .expect("write");
    match oxlint(&oxlint_argv, &root, &root, &files, &[], scratch.path(), T) {
        Ran::Error(why) => assert!(
            why.contains("Rule 'no-such-rule-xyz' not found")
                && why.contains(&root.join("sub/.oxlintrc.json").display().to_string()),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn black_formats_with_the_projects_line_length() {
    let Some(black_argv) = tool("black") else {
        return;
    };
    let (_d, root) = project(&[("pyproject.toml", "[tool.black]\nline-length = 40\n")]);
    let text = "x = [1111111111, 2222222222, 3333333333, 4]\n";
    let real = root.join("pkg/x.py");
    let file = Source {
        rel: "pkg/x.py",
        real: &real,
        text,
    };
    let out = done(black(&black_argv, &root, &file, &[], T));
    assert_eq!(
        out,
        "x = [\n    1111111111,\n    2222222222,\n    3333333333,\n    4,\n]\n"
    );
    // Already formatted text comes back unchanged; extra arguments win over the config.
    let wide = ["--line-length=88".to_string(), "--check".to_string()];
    assert_eq!(done(black(&black_argv, &root, &file, &wide, T)), text);
    let file = Source {
        rel: "pkg/x.py",
        real: &real,
        text: "print(1))\n",
    };
    match black(&black_argv, &root, &file, &[], T) {
        Ran::Error(why) => assert!(why.starts_with("error: cannot parse: "), "{why}"),
        other => panic!("{other:?}"),
    }
    fs::write(root.join("pyproject.toml"), "[tool.black\n").expect("write");
    let file = Source {
        rel: "pkg/x.py",
        real: &real,
        text,
    };
    match black(&black_argv, &root, &file, &[], T) {
        // A traceback (tomllib.TOMLDecodeError) or "Error: Could not open file …pyproject.toml".
        Ran::Error(why) => assert!(why.contains("Expected ']'"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn flake8_reads_the_config_of_its_working_directory() {
    let Some(flake8_argv) = tool("flake8") else {
        return;
    };
    let (_d, root) = project(&[(
        ".flake8",
        "[flake8]\nmax-line-length = 20\nper-file-ignores = pkg/gen_*.py:F401\n",
    )]);
    let text = "import os\nx = 'longer than twenty'\n";
    let real = root.join("pkg/x.py");
    let file = Source {
        rel: "pkg/x.py",
        real: &real,
        text,
    };
    let found = done(flake8(&flake8_argv, &root, &file, &[], T));
    assert_eq!(
        summary(&found),
        [("pkg/x.py", 1, "F401"), ("pkg/x.py", 2, "E501")]
    );
    // Pre-commit style arguments apply; `-q` would hide the lines and is dropped.
    let args = ["--max-line-length=88".to_string(), "-q".to_string()];
    let found = done(flake8(&flake8_argv, &root, &file, &args, T));
    assert_eq!(summary(&found), [("pkg/x.py", 1, "F401")]);
    // per-file-ignores match the display name, relative to the working directory.
    let gen_real = root.join("pkg/gen_a.py");
    let gen_file = Source {
        rel: "pkg/gen_a.py",
        real: &gen_real,
        text: "import os\n",
    };
    assert_eq!(done(flake8(&flake8_argv, &root, &gen_file, &[], T)), vec![]);
    let clean = Source {
        rel: "pkg/x.py",
        real: &real,
        text: "x = 1\n",
    };
    assert_eq!(done(flake8(&flake8_argv, &root, &clean, &[], T)), vec![]);
    fs::write(root.join(".flake8"), "[flake8]\nmax-line-length = x\n").expect("write");
    match flake8(&flake8_argv, &root, &file, &[], T) {
        Ran::Error(why) => assert!(why.starts_with("ValueError: "), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn xo_lints_stdin_with_the_projects_config_and_writes_nothing_there() {
    let Some(xo_argv) = tool("xo") else { return };
    let (_d, root) = project(&[(
        "package.json",
        r#"{"name":"x","type":"module","xo":{"space":true}}"#,
    )]);
    let before = snapshot(&root);
    let scratch = tempfile::tempdir().expect("scratch");
    let text = "export default function f() {\n\tdebugger;\n}\n";
    let real = root.join("src/a.js");
    let file = Source {
        rel: "src/a.js",
        real: &real,
        text,
    };
    let found = done(xo(&xo_argv, &root, &file, &[], scratch.path(), T));
    assert_eq!(
        summary(&found),
        [
            ("src/a.js", 2, "@stylistic/indent"),
            ("src/a.js", 2, "no-debugger")
        ],
        "space: true from package.json makes the tab a finding"
    );
    let real = root.join("dist/a.js");
    let ignored = Source {
        rel: "dist/a.js",
        real: &real,
        text,
    };
    assert!(matches!(
        xo(&xo_argv, &root, &ignored, &[], scratch.path(), T),
        Ran::Skipped(_)
    ));
    assert_eq!(
        before,
        snapshot(&root),
        "no node_modules/.cache in the project"
    );
}

#[test]
fn a_missing_program_is_missing() {
    let argv = [OsString::from("patchgate-no-such-tool")];
    let (_d, root) = project(&[]);
    let real = root.join("a.py");
    let file = Source {
        rel: "a.py",
        real: &real,
        text: "",
    };
    assert!(matches!(
        black(&argv, &root, &file, &[], T),
        Ran::Missing(_)
    ));
    assert!(matches!(
        flake8(&argv, &root, &file, &[], T),
        Ran::Missing(_)
    ));
    let scratch = tempfile::tempdir().expect("scratch");
    assert!(matches!(
        oxlint(&argv, &root, &root, &[file], &[], scratch.path(), T),
        Ran::Missing(_)
    ));
    let nothing = biome_lint(&argv, &root, &root, &[], &[], scratch.path(), T);
    assert!(
        matches!(nothing, Ran::Done(f) if f.is_empty()),
        "no files, no run"
    );
    assert!(matches!(
        biome_format(&[], &root, &file, &[], T),
        Ran::Error(_)
    ));
}

#[test]
fn extra_arguments_that_change_the_output_are_dropped() {
    let extra: Vec<String> = [
        "--max-line-length=88",
        "-q",
        "--output-file",
        "out.txt",
        "--format=pylint",
        "--tee",
    ]
    .map(String::from)
    .to_vec();
    let drop = [
        flag("-q"),
        flag("--tee"),
        with_value("--output-file"),
        with_value("--format"),
    ];
    assert_eq!(
        kept(&extra, &drop),
        vec![OsString::from("--max-line-length=88")]
    );
}

#[test]
fn complaints_are_one_line_from_the_recorded_stderr() {
    let rec = |name: &str| {
        fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("src/checks/parse/testdata")
                .join(name),
        )
        .expect("recording")
    };
    assert_eq!(
        biome_complaint(&rec("biome-config-error-stderr.txt")),
        "Found an unknown value `spaces`. | Biome exited because the configuration resulted in errors. Please fix them."
    );
    assert_eq!(
        python_complaint(&rec("flake8-config-error-stderr.txt")),
        "ValueError: invalid literal for int() with base 10: 'x'"
    );
    assert!(
        node_complaint(&rec("xo-config-error-stderr.txt"))
            .starts_with("TypeError: Key \"rules\": Key \"no-such-rule-zz\"")
    );
    let aggregate = node_complaint(&rec("xo-config-throws-stderr.txt"));
    assert!(
        aggregate.starts_with("AggregateError: Error resolving XO config"),
        "{aggregate}"
    );
    assert!(aggregate.ends_with("Error: boom"), "{aggregate}");
    let black_err = rec("black-syntax-stderr.txt");
    assert!(black_err.starts_with("error: cannot parse: "));
}

/// xo exits before node flushes a large report into a pipe (stdout stopped at 64 KiB on a real
/// project): a report of several hundred KiB arrives whole.
#[test]
fn xo_a_report_larger_than_a_pipe_buffer_arrives_whole() {
    let Some(xo_argv) = tool("xo") else { return };
    let (_d, root) = project(&[(
        "package.json",
        r#"{"name":"x","type":"module","xo":{"space":true}}"#,
    )]);
    let scratch = tempfile::tempdir().expect("scratch");
    // 1,500 `debugger` statements: about 300 bytes of JSON each.
    let mut text = String::from("export default function f() {\n");
    for _ in 0..1500 {
        text.push_str("  debugger;\n");
    }
    text.push_str("}\n");
    let real = root.join("src/a.js");
    let file = Source {
        rel: "src/a.js",
        real: &real,
        text: &text,
    };
    let found = done(xo(&xo_argv, &root, &file, &[], scratch.path(), T));
    let debuggers = found.iter().filter(|f| f.rule == "no-debugger").count();
    assert_eq!(
        debuggers, 1500,
        "every finding of the report, not the first 64 KiB of it"
    );
}
