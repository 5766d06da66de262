//! The hint engine on real recorded output (`src/verify/testdata/`).
use super::*;
use crate::checks::parse::{cargo_json, mypy_json, tsc_text};
use crate::verify::parse::{compiler, go_build_text, go_test_json, pytest_junit};

const IMPORT: &str = "check the import path or add the dependency";
const UNDEFINED: &str = "is not defined: did you forget to import it, or rename it everywhere?";
const TIMEOUT: &str = "look for a hang, a deadlock or an unclosed resource";

fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn rust_human_and_json_output_give_the_same_hints() {
    let expected = [
        format!("cannot resolve `std::collections::HashMapp`: {IMPORT}"),
        format!("cannot resolve `serde_json`: {IMPORT}"),
        format!("cannot resolve `helpers`: {IMPORT}"),
        // E0061 names the function only in its "function defined here" note.
        "the signature of `scale` changed: update its other call sites".to_string(),
        format!("`missing_value` {UNDEFINED}"),
    ];
    let human = include_str!("../testdata/cargo-build.txt");
    assert_eq!(hints(Lang::Rust, &[], human), expected);
    let json = include_str!("../testdata/cargo-build.json");
    let failures = compiler(&cargo_json(json).unwrap());
    assert_eq!(hints(Lang::Rust, &failures, json), expected);
    // The failures alone do not name E0061's function; E0433 is then an undefined name.
    assert_eq!(
        hints(Lang::Rust, &failures, ""),
        [
            format!("cannot resolve `std::collections::HashMapp`: {IMPORT}"),
            format!("cannot resolve `serde_json`: {IMPORT}"),
            format!("`missing_value` {UNDEFINED}"),
            format!("`format_label` {UNDEFINED}"),
            format!("`helpers` {UNDEFINED}"),
        ]
    );
    // Another language's table does not apply.
    assert_eq!(hints(Lang::Go, &failures, json), Vec::<String>::new());
}

#[test]
fn rust_signature_change_lists_the_other_call_sites() {
    let dir = tempfile::tempdir().unwrap();
    let lib = "pub fn scale(x: i32, factor: i32) -> i32 {\n    x * factor\n}\n\n\
               pub fn area(w: i32) -> i32 {\n    scale(w)\n}\n";
    write_tree(
        dir.path(),
        &[
            ("src/lib.rs", lib),
            (
                "src/bin/tool.rs",
                "fn main() {\n    println!(\"{}\", rs_build::scale(2, 3));\n}\n",
            ),
            ("target/debug/build/x.rs", "scale(1);\n"),
        ],
    );
    let json = include_str!("../testdata/cargo-build.json");
    let failures = compiler(&cargo_json(json).unwrap());
    let found = hints_with_sites(Lang::Rust, &failures, json, dir.path());
    assert_eq!(
        found[3],
        "the signature of `scale` changed: update its other call sites: \
         src/lib.rs:6, src/bin/tool.rs:2"
    );
}

#[test]
fn rust_test_timeout() {
    let out = include_str!("../testdata/cargo-test-killed.txt");
    assert_eq!(
        hints(Lang::Rust, &[], out),
        [format!(
            "a test timed out (`tests::hangs` ran for over 60 seconds): {TIMEOUT}"
        )]
    );
}

#[test]
fn go_build_errors_from_test_json_and_build_text() {
    let expected = [
        "the signature of `Scale` changed: update its other call sites".to_string(),
        format!("`Missing` {UNDEFINED}"),
        "`unused` is declared and not used: use it or remove it".to_string(),
    ];
    let json = include_str!("../testdata/go-test.json");
    assert_eq!(hints(Lang::Go, &go_test_json(json), json), expected);
    let text = include_str!("../testdata/go-build.txt");
    assert_eq!(hints(Lang::Go, &go_build_text(text), text), expected);
    // go 1.19's wording: `unused declared but not used`.
    let old = include_str!("../testdata/go-test-go119.txt");
    assert_eq!(hints(Lang::Go, &go_test_json(old), old), expected);
}

#[test]
fn go_signature_change_lists_call_sites_outside_the_reported_errors() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[
            (
                "build/build.go",
                "package build\n\nfunc Scale(x, f int) int { return x * f }\n\n\
                 func Area(w int) int {\n\tunused := 3\n\treturn Scale(w) + Missing(w)\n}\n\n\
                 func Big() int { return Scale(1, 2, 3) }\n",
            ),
            (
                "cmd/tool/main.go",
                "package main\n\nimport \"example.com/demo/build\"\n\n\
                 func main() { println(build.Scale(2, 3)) }\n",
            ),
            ("vendor/x/x.go", "func f() { Scale(1) }\n"),
        ],
    );
    let text = include_str!("../testdata/go-build.txt");
    let found = hints_with_sites(Lang::Go, &go_build_text(text), text, dir.path());
    assert_eq!(
        found[0],
        "the signature of `Scale` changed: update its other call sites: cmd/tool/main.go:5"
    );
    // Without failures to exclude, the reported lines are listed too.
    let found = hints_with_sites(Lang::Go, &[], text, dir.path());
    assert_eq!(
        found[0],
        "the signature of `Scale` changed: update its other call sites: \
         build/build.go:7, build/build.go:10, cmd/tool/main.go:5"
    );
}

#[test]
fn go_modules_go_sum_and_timeouts() {
    let json = include_str!("../testdata/go-test-setup.json");
    assert_eq!(
        hints(Lang::Go, &go_test_json(json), json),
        [
            format!("cannot resolve `github.com/pkg/errors`: {IMPORT}"),
            format!("cannot resolve `strngs`: {IMPORT}"),
        ]
    );
    let tidy = "run `go mod tidy` (go.sum lacks an entry for `github.com/google/uuid`)";
    let json = include_str!("../testdata/go-test-gosum.json");
    assert_eq!(hints(Lang::Go, &go_test_json(json), json), [tidy]);
    let text = include_str!("../testdata/go-build-gosum.txt");
    assert_eq!(hints(Lang::Go, &[], text), [tidy]);
    for recording in [
        include_str!("../testdata/go-test-timeout.json"),
        include_str!("../testdata/go-test-timeout-go119.json"),
    ] {
        assert_eq!(
            hints(Lang::Go, &go_test_json(recording), recording),
            [format!("a test timed out after 1s: {TIMEOUT}")]
        );
        assert_eq!(
            hints(Lang::Go, &go_test_json(recording), ""),
            [format!("a test timed out after 1s: {TIMEOUT}")]
        );
    }
}

#[test]
fn python_pytest_failures_and_collection_error() {
    let failures = pytest_junit(include_str!("../testdata/pytest-junit.xml")).unwrap();
    let expected = [
        "the signature of `scale` changed: update its other call sites".to_string(),
        format!("`nme` {UNDEFINED}"),
        format!("a test timed out after 1.0s: {TIMEOUT}"),
    ];
    assert_eq!(hints(Lang::Python, &failures, ""), expected);
    let console = include_str!("../testdata/pytest-console.txt");
    assert_eq!(hints(Lang::Python, &[], console), expected);
    let failures = pytest_junit(include_str!("../testdata/pytest-more.xml")).unwrap();
    assert_eq!(
        hints(Lang::Python, &failures, ""),
        [
            "the signature of `scale` changed: update its other call sites",
            "`scal` is not exported there: check the spelling, or rename it everywhere",
        ]
    );
    let failures = pytest_junit(include_str!("../testdata/pytest-collect.xml")).unwrap();
    assert_eq!(
        hints(Lang::Python, &failures, ""),
        [format!("cannot resolve `requestz`: {IMPORT}")]
    );
}

#[test]
fn python_mypy_json_and_text() {
    let expected = [
        format!("cannot resolve `yamlx`: {IMPORT}"),
        "the signature of `scale` changed: update its other call sites".to_string(),
        format!("`undefined_thing` {UNDEFINED}"),
    ];
    let json = include_str!("../testdata/mypy.json");
    let failures = compiler(&mypy_json(json).unwrap());
    assert_eq!(hints(Lang::Python, &failures, ""), expected);
    let text = include_str!("../testdata/mypy.txt");
    assert_eq!(hints(Lang::Python, &[], text), expected);

    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[
            (
                "pkg/calc.py",
                "def scale(x, factor):\n    return x * factor\n\n\ndef area(w):\n    return scale(w)\n",
            ),
            (
                "pkg/typed.py",
                "from pkg.calc import scale\n\n\ndef run(n: int) -> int:\n    return scale(n) + 1\n",
            ),
            (".venv/lib/site.py", "scale(1)\n"),
        ],
    );
    // mypy reported pkg/typed.py:6 in the recorded project; here the call is on line 5.
    let found = hints_with_sites(Lang::Python, &failures, "", dir.path());
    assert_eq!(
        found[1],
        "the signature of `scale` changed: update its other call sites: \
         pkg/calc.py:6, pkg/typed.py:5"
    );
}

#[test]
fn typescript_errors_and_the_ts2554_callee() {
    let out = include_str!("../testdata/tsc.txt");
    let failures = compiler(&tsc_text(out).unwrap());
    let expected = [
        format!("cannot resolve `left-padx`: {IMPORT}"),
        // tsc does not name the callee: without the source, the position stands for it.
        "the signature of the function called at src/main.ts:6 changed: update its other \
         call sites"
            .to_string(),
        format!("`formatName` {UNDEFINED}"),
        format!("`zqxwv` {UNDEFINED}"),
        "`scal` is not exported there: check the spelling, or rename it everywhere".to_string(),
    ];
    assert_eq!(hints(Lang::Node, &failures, out), expected);
    assert_eq!(hints(Lang::Node, &[], out), expected);
    assert_eq!(hints(Lang::Node, &failures, ""), expected);

    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[
            (
                "src/util.ts",
                "export function scale(x: number, factor: number): number {\n  return x * factor;\n}\n",
            ),
            (
                "src/main.ts",
                "import { scale } from \"./util.js\";\nimport { thing } from \"left-padx\";\n\n\
                 export function area(w: number): number {\n  const unused = 3;\n  return scale(w);\n}\n\n\
                 export function big(): number {\n  return scale(1, 2, 3);\n}\n",
            ),
            (
                "src/report.ts",
                "import { scale } from \"./util.js\";\nexport const r = scale(2, 3);\n",
            ),
            ("node_modules/lib/index.ts", "scale(1)\n"),
        ],
    );
    let found = hints_with_sites(Lang::Node, &failures, out, dir.path());
    assert_eq!(
        found[1],
        "the signature of `scale` changed: update its other call sites: src/report.ts:2"
    );
    assert_eq!(found.len(), MAX_HINTS);
}

#[test]
fn unused_names_in_typescript() {
    let out = include_str!("../testdata/tsc.txt");
    let unused: Vec<&str> = out.lines().filter(|l| l.contains("TS6133")).collect();
    assert_eq!(
        hints(Lang::Node, &[], &unused.join("\n")),
        [
            "`unused` is declared and not used: use it or remove it",
            "`unusedParam` is declared and not used: use it or remove it",
        ]
    );
}

#[test]
fn node_test_file_that_imports_a_renamed_export() {
    let out = include_str!("../testdata/node-test-load-tap.txt");
    let failures = crate::verify::parse::node_test(out);
    let expected =
        ["`addNumbers` is not exported there: check the spelling, or rename it everywhere"];
    assert_eq!(hints(Lang::Node, &failures, ""), expected);
    assert_eq!(hints(Lang::Node, &[], out), expected);
}

#[test]
fn readable_output_unwraps_cargo_and_go_json() {
    let text = readable(include_str!("../testdata/cargo-build.json"));
    assert!(text.starts_with("error[E0432]: unresolved import `std::collections::HashMapp`\n"));
    assert!(!text.contains("\"reason\""));
    let text = readable(include_str!("../testdata/go-test-timeout.json"));
    assert!(text.contains("panic: test timed out after 1s\n\trunning tests:\n\t\tTestHang (1s)\n"));
    assert_eq!(readable("plain\n{not json\n"), "plain\n{not json\n");
}

#[test]
fn duplicates_are_dropped_and_hints_are_capped() {
    let many: String = (0..20)
        .map(|i| format!("a.go:{i}:1: undefined: name{i}\n"))
        .collect();
    let found = hints(Lang::Go, &[], &many);
    assert_eq!(found.len(), MAX_HINTS);
    assert_eq!(found[0], format!("`name0` {UNDEFINED}"));
    let twice = "a.go:1:1: undefined: x\nb.go:2:1: undefined: x\n";
    assert_eq!(hints(Lang::Go, &[], twice).len(), 1);
    assert_eq!(hints(Lang::Go, &[], ""), Vec::<String>::new());
}

/// Every recording, whole and cut, in every language, with and without a root: no panic.
#[test]
fn no_recording_makes_the_engine_panic() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/verify/testdata");
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[("src/main.ts", "x\n"), ("pkg/calc.py", "scale(\n")],
    );
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let cut = (0..=text.len() / 2)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap();
        for input in [text.as_str(), &text[..cut]] {
            let failures = [Failure {
                new: true,
                name: "TS2554".into(),
                file: Some("src/main.ts".into()),
                line: Some(99),
                message: "Expected 2 arguments, but got 1.".into(),
            }];
            for lang in [Lang::Rust, Lang::Go, Lang::Python, Lang::Node] {
                assert!(hints(lang, &failures, input).len() <= MAX_HINTS);
                assert!(hints_with_sites(lang, &failures, input, root.path()).len() <= MAX_HINTS);
            }
        }
        seen += 1;
    }
    assert!(seen >= 25, "only {seen} recordings");
}
