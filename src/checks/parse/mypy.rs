//! `mypy -O json FILE...` (`--output json`, mypy 1.11+; recorded with mypy 2.4.1): JSON lines
//! on stdout, one object per diagnostic.
//!
//! Quirks handled:
//! - **`column` is 0-based** in JSON (11 in JSON is 12 in the text output): 1 is added;
//! - **except for syntax errors** (`"code": "syntax"`), whose JSON column is already 1-based (it
//!   matches ruff's column for the same file, and the text output shows it one too far);
//! - a negative line or column (mypy's "unknown") becomes 0;
//! - `severity` `note` → info (e.g. `reveal_type`); a `hint` ("See https://…") is appended to
//!   the message on its own line, as the text output prints it as a separate note;
//! - the rule is `code` (`return-value`, `arg-type`, `syntax`), `""` when null;
//! - paths are relative to the cwd; errors in imported modules are reported too (the caller
//!   filters by path);
//! - a clean run prints an empty line. A blocking error outside the JSON (a missing file goes to
//!   stderr) leaves the summary `Found 1 error in 1 file (errors prevented further checking)` on
//!   stdout: that, like any non-JSON line, is a [`ParseError`].

use serde::Deserialize;

use super::{ParseError, RawFinding, error, excerpt, severity_word};

#[derive(Deserialize)]
struct Diagnostic {
    file: String,
    line: i64,
    column: i64,
    message: String,
    hint: Option<String>,
    code: Option<String>,
    severity: String,
}

/// Parses the JSON lines `mypy -O json` prints on stdout.
pub fn mypy_json(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
    let mut found = Vec::new();
    for (n, line) in stdout.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !line.starts_with('{') {
            return Err(error(
                "mypy",
                format!("line {}: not JSON: {}", n + 1, excerpt(line)),
            ));
        }
        let d: Diagnostic = serde_json::from_str(line)
            .map_err(|e| error("mypy", format!("line {}: bad JSON: {e}", n + 1)))?;
        let severity = severity_word(&d.severity)
            .ok_or_else(|| error("mypy", format!("unknown severity `{}`", d.severity)))?;
        let code = d.code.unwrap_or_default();
        let column = match usize::try_from(d.column) {
            Ok(column) if code == "syntax" => column,
            Ok(column) => column + 1,
            Err(_) => 0,
        };
        let mut message = d.message;
        if let Some(hint) = d.hint.filter(|h| !h.is_empty()) {
            message.push('\n');
            message.push_str(&hint);
        }
        found.push(RawFinding {
            path: d.file,
            line: usize::try_from(d.line).unwrap_or(0),
            column,
            rule: code,
            severity,
            message,
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::finding::Severity;

    #[test]
    fn columns_become_one_based() {
        let found = mypy_json(include_str!("testdata/mypy-violation.txt")).unwrap();
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
        // The text output (--show-column-numbers) says pkg/c.py:1:10, pkg/bad.py:5:12, 10:18, 11:17.
        assert_eq!(
            summary,
            [
                ("pkg/c.py", 1, 10, "assignment", Severity::Error),
                ("pkg/c.py", 2, 7, "name-defined", Severity::Error),
                ("pkg/bad.py", 5, 12, "return-value", Severity::Error),
                ("pkg/bad.py", 10, 18, "arg-type", Severity::Error),
                ("pkg/bad.py", 11, 17, "misc", Severity::Info),
            ]
        );
        assert_eq!(
            found[2].message,
            r#"Incompatible return value type (got "int", expected "str")"#
        );
        assert_eq!(found[4].message, r#"Revealed type is "list[int]""#);
    }

    #[test]
    fn syntax_error_columns_are_already_one_based() {
        let found = mypy_json(include_str!("testdata/mypy-syntax.txt")).unwrap();
        // ruff on the same file (ruff-syntax.txt) reports 1:7 and 1:8.
        let positions: Vec<(usize, usize)> = found.iter().map(|f| (f.line, f.column)).collect();
        assert_eq!(positions, [(1, 7), (1, 8)]);
        assert!(found.iter().all(|f| f.rule == "syntax"));
        assert_eq!(found[1].message, "Expected `)`, found newline");
    }

    #[test]
    fn hint_is_appended() {
        let found = mypy_json(include_str!("testdata/mypy-import.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].line, found[0].column), (1, 1));
        assert_eq!(found[0].rule, "import-not-found");
        assert!(
            found[0]
                .message
                .starts_with("Cannot find implementation or library stub")
        );
        assert!(found[0].message.ends_with(
            "\nSee https://mypy.readthedocs.io/en/stable/running_mypy.html#missing-imports"
        ));
    }

    #[test]
    fn clean_run_is_an_empty_line() {
        let out = include_str!("testdata/mypy-clean.txt");
        assert_eq!(out, "\n");
        assert_eq!(mypy_json(out), Ok(vec![]));
        assert_eq!(mypy_json(""), Ok(vec![]));
    }

    #[test]
    fn summary_of_a_blocking_error_is_not_json() {
        let err = mypy_json(include_str!("testdata/mypy-missing.txt")).unwrap_err();
        assert!(err.0.contains("line 1: not JSON: Found 1 error"), "{err}");
    }

    #[test]
    fn truncated_and_unknown_values_are_errors() {
        let full = include_str!("testdata/mypy-violation.txt");
        let first = full.lines().next().unwrap();
        assert!(mypy_json(&first[..first.len() - 5]).is_err());
        let odd = r#"{"file": "a.py", "line": 1, "column": 0, "message": "m", "hint": null, "code": null, "severity": "fatal"}"#;
        assert!(mypy_json(odd).unwrap_err().0.contains("`fatal`"));
        let unknown = r#"{"file": "a.py", "line": -1, "column": -1, "message": "m", "hint": null, "code": null, "severity": "error"}"#;
        let found = mypy_json(unknown).unwrap();
        assert_eq!(
            (found[0].line, found[0].column, found[0].rule.as_str()),
            (0, 0, "")
        );
    }
}
