//! `cargo clippy --message-format=json [-p PKG] [-- -D warnings]` and
//! `cargo check --message-format=json`: JSON lines on stdout.
//!
//! Quirks handled:
//! - only `"reason": "compiler-message"` lines are findings; `compiler-artifact`,
//!   `build-script-executed` and `build-finished` are skipped, and so are non-JSON lines;
//! - the position is the span with `is_primary: true`, which is not always the first one
//!   (E0382 lists "value moved here" first);
//! - a span's `file_name` is relative to the **workspace root**, not the package (kept as is);
//! - messages without spans ("aborting due to …", `failure-note` "For more information about
//!   this error …") are not findings;
//! - the rule is `code.code` (`clippy::needless_return`, `unused_variables`, `E0425`), or `""`
//!   when `code` is null (e.g. a parse error "this file contains an unclosed delimiter");
//! - `level` error → error, warning → warning, note/help → info; `-D warnings` turns warnings
//!   into `"level": "error"`.
//!
//! A clean run still prints `compiler-artifact` and `build-finished`, so output with no JSON
//! line at all is an error (empty output is accepted: cargo printed nothing on stdout, e.g.
//! because Cargo.toml failed to parse, and the exit code tells that story).

use serde::Deserialize;

use super::{ParseError, RawFinding, Severity, error, excerpt};

#[derive(Deserialize)]
struct Line {
    reason: String,
    message: Option<Diagnostic>,
}

#[derive(Deserialize)]
struct Diagnostic {
    message: String,
    level: String,
    code: Option<Code>,
    #[serde(default)]
    spans: Vec<Span>,
}

#[derive(Deserialize)]
struct Code {
    code: String,
}

#[derive(Deserialize)]
struct Span {
    file_name: String,
    line_start: usize,
    column_start: usize,
    is_primary: bool,
}

/// Parses the JSON lines `cargo clippy`/`cargo check --message-format=json` print on stdout.
pub fn cargo_json(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
    let mut found = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut json_lines = 0;
    for (n, text) in stdout.lines().enumerate() {
        let text = text.trim();
        if !text.starts_with('{') {
            continue;
        }
        let line: Line = serde_json::from_str(text)
            .map_err(|e| error("cargo", format!("line {}: bad JSON: {e}", n + 1)))?;
        json_lines += 1;
        if line.reason != "compiler-message" {
            continue;
        }
        let Some(diagnostic) = line.message else {
            return Err(error(
                "cargo",
                format!("line {}: compiler-message without a message", n + 1),
            ));
        };
        // `--all-targets` compiles a library twice (lib and lib test): the same diagnostic
        // comes once per target, and cargo's own human output shows it once.
        if let Some(finding) = finding(diagnostic)
            && seen.insert(format!("{finding:?}"))
        {
            found.push(finding);
        }
    }
    if json_lines == 0 && !stdout.trim().is_empty() {
        let first = stdout.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(error(
            "cargo",
            format!("no JSON messages in the output: {}", excerpt(first)),
        ));
    }
    Ok(found)
}

/// The finding at the primary span of one diagnostic, or `None` for span-less notes.
fn finding(d: Diagnostic) -> Option<RawFinding> {
    let severity = match d.level.as_str() {
        "error" | "error: internal compiler error" => Severity::Error,
        "warning" => Severity::Warning,
        "note" | "help" => Severity::Info,
        _ => return None, // failure-note and future levels carry no position of their own
    };
    let span = d
        .spans
        .iter()
        .find(|s| s.is_primary)
        .or_else(|| d.spans.first())?;
    Some(RawFinding {
        path: span.file_name.clone(),
        line: span.line_start,
        column: span.column_start,
        rule: d.code.map(|c| c.code).unwrap_or_default(),
        severity,
        message: d.message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clippy_warnings_in_a_workspace_member_keep_workspace_relative_paths() {
        let found = cargo_json(include_str!("testdata/cargo-clippy-warnings.txt")).unwrap();
        let summary: Vec<(&str, usize, usize, &str, Severity)> = found
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.line,
                    f.column,
                    f.rule.as_str(),
                    f.severity,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "crates/a/src/lib.rs",
                    6,
                    9,
                    "unused_variables",
                    Severity::Warning
                ),
                (
                    "crates/a/src/lib.rs",
                    2,
                    5,
                    "clippy::needless_return",
                    Severity::Warning
                ),
                (
                    "crates/a/src/lib.rs",
                    7,
                    5,
                    "clippy::len_zero",
                    Severity::Warning
                ),
            ]
        );
        assert_eq!(found[1].message, "unneeded `return` statement");
    }

    #[test]
    fn deny_warnings_makes_them_errors() {
        let found = cargo_json(include_str!("testdata/cargo-clippy-deny.txt")).unwrap();
        assert_eq!(found.len(), 3);
        assert!(found.iter().all(|f| f.severity == Severity::Error));
        assert_eq!(found[2].rule, "clippy::len_zero");
    }

    #[test]
    fn errors_use_the_primary_span_and_skip_failure_notes() {
        let out = include_str!("testdata/cargo-check-errors.txt");
        assert!(out.contains(r#""level":"failure-note""#));
        let found = cargo_json(out).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].rule, "E0425");
        assert_eq!((found[0].line, found[0].column), (2, 5));
        assert!(
            found[0]
                .message
                .contains("cannot find value `missing_name`")
        );
        // E0382's first span is the secondary "value moved here" at 7:13.
        assert_eq!(found[1].rule, "E0382");
        assert_eq!(found[1].path, "crates/b/src/lib.rs");
        assert_eq!((found[1].line, found[1].column), (9, 5));
        assert_eq!(found[1].severity, Severity::Error);
    }

    #[test]
    fn syntax_error_has_no_code() {
        let found = cargo_json(include_str!("testdata/cargo-check-syntax.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, "");
        assert_eq!(found[0].path, "crates/c/src/lib.rs");
        assert_eq!((found[0].line, found[0].column), (3, 3));
        assert_eq!(found[0].message, "this file contains an unclosed delimiter");
    }

    #[test]
    fn clean_run_has_only_artifacts() {
        assert_eq!(
            cargo_json(include_str!("testdata/cargo-clean.txt")),
            Ok(vec![])
        );
        assert_eq!(cargo_json(""), Ok(vec![]));
    }

    #[test]
    fn non_json_lines_and_spanless_messages_are_skipped() {
        let out = concat!(
            "   Compiling x v0.1.0\n",
            r#"{"reason":"compiler-message","message":{"message":"aborting due to 1 previous error","level":"error","code":null,"spans":[]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"message":"n","level":"note","code":null,"spans":[{"file_name":"src/a.rs","line_start":4,"column_start":2,"is_primary":true}]}}"#,
            "\n",
            r#"{"reason":"build-finished","success":false}"#,
            "\n",
        );
        let found = cargo_json(out).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Info);
        assert_eq!((found[0].path.as_str(), found[0].line), ("src/a.rs", 4));
    }

    #[test]
    fn garbage_and_truncated_output_are_errors() {
        let err = cargo_json("error: no such command: `clipy`\n").unwrap_err();
        assert!(err.0.contains("no JSON messages"), "{err}");
        let full = include_str!("testdata/cargo-clippy-warnings.txt");
        let first = full.lines().next().unwrap();
        let err = cargo_json(&first[..first.len() / 2]).unwrap_err();
        assert!(err.0.starts_with("cargo: line 1: bad JSON"), "{err}");
    }
}
