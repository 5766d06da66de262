//! `eslint --format json FILE...` and `eslint --stdin --stdin-filename F --format json` (ESLint 9/10).
//!
//! Quirks handled:
//! - the output is one JSON array with an entry per file, `[]` when every file was ignored with
//!   `--no-warn-ignored`, so empty output is a failed run, not a clean one;
//! - `filePath` is absolute (for stdin, the stdin filename resolved against the cwd);
//! - a parse error is a message with `"ruleId": null, "fatal": true`: rule `parse`;
//! - other messages without a rule (e.g. "Unused eslint-disable directive") get the rule `""`;
//! - ignored files (an ignore pattern, node_modules, or no matching config block) produce a
//!   warning "File ignored because …" / "File ignored by default …" with no line or column:
//!   these say nothing about the code and are dropped;
//! - `severity` 2 is an error, 1 a warning; `line`/`column` are 1-based and absent → 0.

use serde::Deserialize;

use super::{ParseError, RawFinding, Severity, error};

#[derive(Deserialize)]
struct FileResult {
    #[serde(rename = "filePath")]
    file_path: String,
    messages: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(rename = "ruleId")]
    rule_id: Option<String>,
    severity: u8,
    message: String,
    line: Option<usize>,
    column: Option<usize>,
    #[serde(default)]
    fatal: bool,
}

impl Message {
    /// The "File ignored because …" warning for a file ESLint did not lint.
    fn is_ignored_file_notice(&self) -> bool {
        self.rule_id.is_none()
            && !self.fatal
            && self.line.unwrap_or(0) == 0
            && self.message.starts_with("File ignored ")
    }
}

/// Parses the JSON array `eslint --format json` prints on stdout.
pub fn eslint_json(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
    if stdout.trim().is_empty() {
        return Err(error(
            "eslint",
            "empty output (a clean run prints a JSON array)",
        ));
    }
    let files: Vec<FileResult> =
        serde_json::from_str(stdout).map_err(|e| error("eslint", format!("bad JSON: {e}")))?;
    let mut found = Vec::new();
    for file in files {
        for m in file.messages {
            if m.is_ignored_file_notice() {
                continue;
            }
            let severity = match m.severity {
                2 => Severity::Error,
                1 => Severity::Warning,
                other => return Err(error("eslint", format!("unknown severity {other}"))),
            };
            let rule = match m.rule_id {
                Some(rule) => rule,
                None if m.fatal => "parse".to_string(),
                None => String::new(),
            };
            found.push(RawFinding {
                path: file.file_path.clone(),
                line: m.line.unwrap_or(0),
                column: m.column.unwrap_or(0),
                rule,
                severity,
                message: m.message,
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_finding_per_message_with_severity_from_the_number() {
        let found = eslint_json(include_str!("testdata/eslint-violation.txt")).unwrap();
        let summary: Vec<(usize, usize, &str, Severity)> = found
            .iter()
            .map(|f| (f.line, f.column, f.rule.as_str(), f.severity))
            .collect();
        assert_eq!(
            summary,
            [
                (1, 7, "no-unused-vars", Severity::Error),
                (2, 1, "no-undef", Severity::Error),
                (2, 1, "no-console", Severity::Warning),
                (2, 13, "no-undef", Severity::Error),
            ]
        );
        assert!(found.iter().all(|f| f.path == "/tmp/pg/js/src/bad.js"));
        assert_eq!(found[3].message, "'nme' is not defined.");
    }

    #[test]
    fn fatal_parse_error_gets_rule_parse() {
        let found = eslint_json(include_str!("testdata/eslint-syntax.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, "parse");
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!((found[0].line, found[0].column), (1, 11));
        assert!(
            found[0]
                .message
                .starts_with("Parsing error: Unexpected token")
        );
    }

    #[test]
    fn ignored_file_notices_are_not_findings() {
        // src/ignored.js (ignore pattern), src/t.ts (no matching config) and a clean file.
        let out = include_str!("testdata/eslint-ignored.txt");
        assert!(out.contains("File ignored because of a matching ignore pattern"));
        assert!(out.contains("File ignored because no matching configuration was supplied"));
        assert_eq!(eslint_json(out), Ok(vec![]));
    }

    #[test]
    fn unused_directive_has_no_rule_but_is_kept() {
        let found = eslint_json(include_str!("testdata/eslint-directive.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, "");
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(found[0].path, "/tmp/pg/js/src/directive.js");
        assert_eq!((found[0].line, found[0].column), (1, 1));
        assert!(
            found[0]
                .message
                .starts_with("Unused eslint-disable directive")
        );
    }

    #[test]
    fn stdin_path_is_the_absolute_stdin_filename() {
        let found = eslint_json(include_str!("testdata/eslint-stdin.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "/tmp/pg/js/src/new.js");
        assert_eq!(found[0].rule, "no-unused-vars");
        assert_eq!((found[0].line, found[0].column), (1, 5));
    }

    #[test]
    fn clean_file_and_all_ignored_are_empty() {
        assert_eq!(
            eslint_json(include_str!("testdata/eslint-clean.txt")),
            Ok(vec![])
        );
        assert_eq!(eslint_json("[]\n"), Ok(vec![]));
    }

    #[test]
    fn missing_position_is_zero() {
        let out =
            r#"[{"filePath":"/p/a.js","messages":[{"ruleId":"x","severity":1,"message":"m"}]}]"#;
        let found = eslint_json(out).unwrap();
        assert_eq!((found[0].line, found[0].column), (0, 0));
    }

    #[test]
    fn empty_garbage_and_truncated_output_are_errors() {
        assert!(eslint_json("").is_err());
        assert!(eslint_json("Oops! Something went wrong! :(\n").is_err());
        let full = include_str!("testdata/eslint-violation.txt");
        assert!(eslint_json(&full[..full.len() - 40]).is_err());
        let bad_severity =
            r#"[{"filePath":"/p/a.js","messages":[{"ruleId":"x","severity":0,"message":"m"}]}]"#;
        assert!(
            eslint_json(bad_severity)
                .unwrap_err()
                .0
                .contains("severity 0")
        );
    }
}
