//! `ruff check --output-format json FILE...` and `ruff check --output-format json --stdin-filename F -`.
//!
//! Quirks handled:
//! - the output is one JSON array, `[]` when clean (also for `--force-exclude`d files), so empty
//!   output is not a clean run but a failed one;
//! - `filename` is absolute (the stdin filename too, resolved against the cwd; it need not exist);
//! - syntax errors are findings: ruff 0.17.6 gives them `"code": "invalid-syntax"` (kept as the
//!   rule), older versions gave `"code": null`, which becomes the rule `syntax`;
//! - a missing file is the finding `E902` at 1:1, not an error;
//! - `severity` is always `"error"` in 0.17.6; absent (older versions) also means error.

use serde::Deserialize;

use super::{ParseError, RawFinding, Severity, error, severity_word};

#[derive(Deserialize)]
struct Diagnostic {
    code: Option<String>,
    filename: String,
    location: Option<Location>,
    message: String,
    severity: Option<String>,
}

#[derive(Deserialize)]
struct Location {
    row: usize,
    column: usize,
}

/// Parses the JSON array `ruff check --output-format json` prints on stdout.
pub fn ruff_json(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
    if stdout.trim().is_empty() {
        return Err(error("ruff", "empty output (a clean run prints `[]`)"));
    }
    let diagnostics: Vec<Diagnostic> =
        serde_json::from_str(stdout).map_err(|e| error("ruff", format!("bad JSON: {e}")))?;
    diagnostics
        .into_iter()
        .map(|d| {
            let severity = match d.severity.as_deref() {
                None => Severity::Error,
                Some(word) => severity_word(word)
                    .ok_or_else(|| error("ruff", format!("unknown severity `{word}`")))?,
            };
            let (line, column) = d.location.map_or((0, 0), |l| (l.row, l.column));
            Ok(RawFinding {
                path: d.filename,
                line,
                column,
                rule: d.code.unwrap_or_else(|| "syntax".to_string()),
                severity,
                message: d.message,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violations_keep_code_position_and_absolute_path() {
        let found = ruff_json(include_str!("testdata/ruff-violation.txt")).unwrap();
        let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(rules, ["E401", "F401", "F401", "F841"]);
        let unused = &found[3];
        assert_eq!(unused.path, "/tmp/pg/py/pkg/bad.py");
        assert_eq!((unused.line, unused.column), (5, 5));
        assert_eq!(unused.severity, Severity::Error);
        assert_eq!(
            unused.message,
            "Local variable `y` is assigned to but never used"
        );
        assert_eq!((found[2].line, found[2].column), (1, 12));
        assert!(found[2].message.contains("`sys` imported but unused"));
    }

    #[test]
    fn syntax_errors_are_findings() {
        let found = ruff_json(include_str!("testdata/ruff-syntax.txt")).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].rule, "invalid-syntax");
        assert_eq!(found[0].path, "/tmp/pg/py/pkg/syn.py");
        assert_eq!((found[0].line, found[0].column), (1, 7));
        assert!(found[1].message.contains("found newline"));
    }

    #[test]
    fn null_code_becomes_syntax() {
        let out = r#"[{"code":null,"filename":"/p/a.py","location":{"row":2,"column":3},"message":"Expected an expression"}]"#;
        let found = ruff_json(out).unwrap();
        assert_eq!(found[0].rule, "syntax");
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!((found[0].line, found[0].column), (2, 3));
    }

    #[test]
    fn stdin_filename_is_reported_absolute() {
        let found = ruff_json(include_str!("testdata/ruff-stdin.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "/tmp/pg/py/pkg/new.py");
        assert_eq!(found[0].rule, "F401");
        assert_eq!((found[0].line, found[0].column), (1, 8));
    }

    #[test]
    fn missing_file_is_an_e902_finding() {
        let found = ruff_json(include_str!("testdata/ruff-missing.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, "E902");
        assert_eq!(found[0].path, "/tmp/pg/py/pkg/missing.py");
        assert!(found[0].message.contains("No such file"));
    }

    #[test]
    fn clean_run_is_an_empty_array() {
        assert_eq!(
            ruff_json(include_str!("testdata/ruff-clean.txt")),
            Ok(vec![])
        );
    }

    #[test]
    fn empty_garbage_and_truncated_output_are_errors() {
        assert!(ruff_json("").unwrap_err().0.contains("empty output"));
        assert!(ruff_json("All checks passed!\n").is_err());
        let full = include_str!("testdata/ruff-violation.txt");
        let err = ruff_json(&full[..full.len() / 2]).unwrap_err();
        assert!(err.0.starts_with("ruff: bad JSON"), "{err}");
        assert!(ruff_json(r#"[{"code":"E1"}]"#).is_err());
    }
}
