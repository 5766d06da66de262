//! Parsers from the output of a verify step (a test run, a build, a type check) to
//! [`Failure`]s, one file per tool family, each tested on output recorded from the real tool
//! (`src/verify/testdata/`, produced on tiny projects with cargo 1.95, go 1.27.3 and 1.19.8,
//! pytest 9.2, mypy 2.4.1, tsc 7.0.2 and CPython 3.11).
//!
//! - [`libtest`]: `cargo test` (libtest's text, stdout and stderr together);
//! - [`go_test_json`]: `go test -json ./...`; [`go_build_text`]: `go build ./...` (stderr);
//! - [`node_test`]: `node --test` (TAP or spec reporter) behind a Node project's `test` script;
//! - [`pytest_junit`]: the report of `pytest --junitxml=PATH`;
//! - [`python_compile`]: `python -m compileall -q .` (stdout);
//! - [`compiler`]: findings of the checkers' parsers (`cargo build --message-format=json` →
//!   [`cargo_json`](crate::checks::parse::cargo_json), `tsc --noEmit` →
//!   [`tsc_text`](crate::checks::parse::tsc_text), `mypy -O json` →
//!   [`mypy_json`](crate::checks::parse::mypy_json), `go vet`) turned into failures.
//!
//! No parser panics: output that is not what the tool prints gives no failures (the step's
//! exit code still tells that it failed), except for [`pytest_junit`], whose input is a file
//! that must be a JUnit report, so garbage there is an `Err` with the reason.

mod go_build;
mod go_test;
mod libtest;
mod node_test;
mod python;

pub use self::go_build::go_build_text;
pub use self::go_test::go_test_json;
pub use self::libtest::libtest;
pub use self::node_test::node_test;
pub use self::python::{pytest_junit, python_compile};

use super::Failure;
use crate::checks::finding::{RawFinding, Severity};

/// The errors among a checker's findings as failures (warnings and notes are dropped): the
/// rule (`E0425`, `TS2304`, `name-defined`) is the name, an empty path or a 0 line is `None`.
pub fn compiler(findings: &[RawFinding]) -> Vec<Failure> {
    findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| Failure {
            new: true,
            name: f.rule.clone(),
            file: (!f.path.is_empty()).then(|| f.path.clone()),
            line: (f.line > 0).then_some(f.line),
            message: f.message.clone(),
        })
        .collect()
}

/// At most this many lines of a message are kept (a long assertion diff or stack is cut).
const MAX_MESSAGE_LINES: usize = 40;

/// `lines` trimmed of surrounding blank lines, cut to [`MAX_MESSAGE_LINES`], joined by `\n`.
fn message<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let lines: Vec<&str> = lines.into_iter().collect();
    let start = lines.iter().position(|l| !l.trim().is_empty());
    let end = lines.iter().rposition(|l| !l.trim().is_empty());
    let (Some(start), Some(end)) = (start, end) else {
        return String::new();
    };
    let kept = &lines[start..=end];
    let mut text = kept
        .iter()
        .take(MAX_MESSAGE_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    if kept.len() > MAX_MESSAGE_LINES {
        text.push_str(&format!(
            "\n… ({} more lines)",
            kept.len() - MAX_MESSAGE_LINES
        ));
    }
    text
}

/// `path` without a leading `./` (go and compileall print `./a.go`, `./a.py`).
fn plain_path(path: &str) -> String {
    path.strip_prefix("./").unwrap_or(path).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(path: &str, line: usize, rule: &str, severity: Severity, message: &str) -> RawFinding {
        RawFinding {
            path: path.into(),
            line,
            column: 1,
            rule: rule.into(),
            severity,
            message: message.into(),
        }
    }

    #[test]
    fn compiler_keeps_errors_only() {
        let findings = [
            raw(
                "src/lib.rs",
                3,
                "E0425",
                Severity::Error,
                "cannot find value `x`",
            ),
            raw(
                "src/lib.rs",
                4,
                "unused_variables",
                Severity::Warning,
                "unused",
            ),
            raw("", 0, "TS6053", Severity::Error, "File 'a.ts' not found."),
            raw("a.py", 2, "misc", Severity::Info, "Revealed type"),
        ];
        assert_eq!(
            compiler(&findings),
            [
                Failure {
                    new: true,
                    name: "E0425".into(),
                    file: Some("src/lib.rs".into()),
                    line: Some(3),
                    message: "cannot find value `x`".into(),
                },
                Failure {
                    new: true,
                    name: "TS6053".into(),
                    file: None,
                    line: None,
                    message: "File 'a.ts' not found.".into(),
                },
            ]
        );
    }

    #[test]
    fn compiler_on_recorded_cargo_tsc_and_mypy_output() {
        use crate::checks::parse::{cargo_json, mypy_json, tsc_text};
        let cargo = compiler(&cargo_json(include_str!("../testdata/cargo-build.json")).unwrap());
        let summary: Vec<(&str, Option<usize>)> =
            cargo.iter().map(|f| (f.name.as_str(), f.line)).collect();
        assert_eq!(
            summary,
            [
                ("E0432", Some(1)),
                ("E0432", Some(2)),
                ("E0425", Some(26)),
                ("E0061", Some(9)),
                ("E0425", Some(13)),
                ("E0308", Some(18)),
                ("E0433", Some(22)),
            ]
        );
        assert_eq!(cargo[2].file.as_deref(), Some("src/lib.rs"));
        assert_eq!(
            cargo[2].message,
            "cannot find value `missing_value` in this scope"
        );

        let tsc = compiler(&tsc_text(include_str!("../testdata/tsc.txt")).unwrap());
        assert_eq!(tsc.len(), 9);
        assert_eq!(tsc[2].name, "TS2554");
        assert_eq!(
            (tsc[2].file.as_deref(), tsc[2].line),
            (Some("src/main.ts"), Some(6))
        );
        assert_eq!(tsc[2].message, "Expected 2 arguments, but got 1.");

        let mypy = compiler(&mypy_json(include_str!("../testdata/mypy.json")).unwrap());
        let names: Vec<&str> = mypy.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "import-not-found",
                "call-arg",
                "name-defined",
                "return-value"
            ]
        );
        assert_eq!(mypy[2].message, r#"Name "undefined_thing" is not defined"#);
    }

    #[test]
    fn message_trims_blank_edges_and_cuts_long_text() {
        assert_eq!(message(["", "a", "", "b", "  "]), "a\n\nb");
        assert_eq!(message(["", " "]), "");
        let many: Vec<String> = (0..50).map(|i| i.to_string()).collect();
        let cut = message(many.iter().map(String::as_str));
        assert!(cut.ends_with("39\n… (10 more lines)"), "{cut}");
    }

    /// Every parser on every recording, on prefixes of it (output cut by a timeout) and on
    /// every other tool's output: never a panic.
    #[test]
    fn no_parser_panics_on_any_recording_or_truncation() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/verify/testdata");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let cuts = (0..=text.len())
                .step_by(37)
                .chain([text.len()])
                .filter(|&i| text.is_char_boundary(i));
            for cut in cuts {
                let input = &text[..cut];
                let _ = libtest(input);
                let _ = node_test(input);
                let _ = go_test_json(input);
                let _ = go_build_text(input);
                let _ = pytest_junit(input);
                let _ = python_compile(input);
            }
            seen += 1;
        }
        assert!(seen >= 20, "only {seen} recordings");
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::Failure;

    /// (name, file, line) of each failure: what most parser tests compare.
    pub(crate) fn summary(failures: &[Failure]) -> Vec<(&str, Option<&str>, Option<usize>)> {
        failures
            .iter()
            .map(|f| (f.name.as_str(), f.file.as_deref(), f.line))
            .collect()
    }
}
