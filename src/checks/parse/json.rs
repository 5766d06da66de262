//! The generic JSON format for custom checkers: a JSON array of finding objects, or JSON lines
//! (one object per line). Nothing at all is a clean run.
//!
//! Each object names its fields in whichever common spelling the checker uses:
//! - path: `file`, `path` or `filename` (required, a string);
//! - `line`, and `column` or `col`: 1-based numbers, 0 when absent or null;
//! - rule: `rule` or `code` (a string or a number), `""` when absent;
//! - severity: `severity` or `level`, error/warning (warn)/info/note, case-insensitive; error
//!   when absent;
//! - message: `message` or `text`, `""` when absent.
//!
//! A value of the wrong type (a string line, a negative column, an unknown severity word) is a
//! [`ParseError`] that names the finding and the key, rather than a silently wrong finding.

use serde_json::{Map, Value};

use super::{ParseError, RawFinding, Severity, error, excerpt, severity_word};

/// Parses a JSON array, or JSON lines, of finding objects.
pub fn generic_json(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return Ok(vec![]);
    }
    let objects: Vec<Value> = if trimmed.starts_with('[') {
        serde_json::from_str(trimmed).map_err(|e| error("json", format!("bad JSON array: {e}")))?
    } else {
        trimmed
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(n, line)| {
                serde_json::from_str(line).map_err(|e| {
                    error(
                        "json",
                        format!("line {}: bad JSON ({e}): {}", n + 1, excerpt(line)),
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    objects
        .iter()
        .enumerate()
        .map(|(i, value)| {
            let object = value
                .as_object()
                .ok_or_else(|| error("json", format!("finding {}: not an object", i + 1)))?;
            finding(object).map_err(|reason| error("json", format!("finding {}: {reason}", i + 1)))
        })
        .collect()
}

/// The first of `keys` present (and not null) in `object`, with the key it was found under.
fn field<'a>(
    object: &'a Map<String, Value>,
    keys: &[&'static str],
) -> Option<(&'static str, &'a Value)> {
    keys.iter()
        .find_map(|&key| object.get(key).filter(|v| !v.is_null()).map(|v| (key, v)))
}

fn string(object: &Map<String, Value>, keys: &[&'static str]) -> Result<Option<String>, String> {
    match field(object, keys) {
        None => Ok(None),
        Some((_, Value::String(s))) => Ok(Some(s.clone())),
        Some((key, Value::Number(n))) if key == "rule" || key == "code" => Ok(Some(n.to_string())),
        Some((key, other)) => Err(format!("`{key}` is {other}, not a string")),
    }
}

fn number(object: &Map<String, Value>, keys: &[&'static str]) -> Result<usize, String> {
    match field(object, keys) {
        None => Ok(0),
        Some((key, value)) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("`{key}` is {value}, not a line or column number")),
    }
}

fn finding(object: &Map<String, Value>) -> Result<RawFinding, String> {
    let path =
        string(object, &["file", "path", "filename"])?.ok_or("no `file`, `path` or `filename`")?;
    let severity = match string(object, &["severity", "level"])? {
        None => Severity::Error,
        Some(word) => severity_word(&word)
            .ok_or_else(|| format!("severity `{word}` is not error, warning, info or note"))?,
    };
    Ok(RawFinding {
        path,
        line: number(object, &["line"])?,
        column: number(object, &["column", "col"])?,
        rule: string(object, &["rule", "code"])?.unwrap_or_default(),
        severity,
        message: string(object, &["message", "text"])?.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Both recordings come from a tiny custom checker (a Python script flagging TODOs and tabs)
    // that spells its keys differently on purpose from one finding to the next.

    #[test]
    fn array_with_mixed_key_spellings() {
        let found = generic_json(include_str!("testdata/json-array.txt")).unwrap();
        assert_eq!(
            found,
            [
                RawFinding {
                    path: "a.py".into(),
                    line: 1,
                    column: 10,
                    rule: "T001".into(),
                    severity: Severity::Warning,
                    message: "TODO left in code".into(),
                },
                RawFinding {
                    path: "a.py".into(),
                    line: 3,
                    column: 1,
                    rule: "W191".into(),
                    severity: Severity::Error,
                    message: "tab character".into(),
                },
                RawFinding {
                    path: "README.md".into(),
                    line: 0,
                    column: 0,
                    rule: "doc".into(),
                    severity: Severity::Info,
                    message: "docs are checked elsewhere".into(),
                },
            ]
        );
    }

    #[test]
    fn json_lines() {
        let found = generic_json(include_str!("testdata/json-lines.txt")).unwrap();
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
                ("a.py", 1, 0, "todo", Severity::Warning),
                ("a.py", 3, 1, "tabs", Severity::Error),
                ("README.md", 0, 0, "doc", Severity::Info),
            ]
        );
        assert_eq!(found[1].message, "tab character");
    }

    #[test]
    fn mypy_json_lines_fit_too() {
        // mypy's keys are file/line/column/code/severity/message; its 0-based column is taken
        // as is here (use the mypy parser for mypy).
        let found = generic_json(include_str!("testdata/mypy-violation.txt")).unwrap();
        assert_eq!(found.len(), 5);
        assert_eq!(
            (found[0].path.as_str(), found[0].line, found[0].column),
            ("pkg/c.py", 1, 9)
        );
        assert_eq!(found[0].rule, "assignment");
        assert_eq!(found[4].severity, Severity::Info);
    }

    #[test]
    fn clean_runs() {
        assert_eq!(
            generic_json(include_str!("testdata/json-clean.txt")),
            Ok(vec![])
        );
        assert_eq!(generic_json(""), Ok(vec![]));
        assert_eq!(generic_json("\n\n"), Ok(vec![]));
    }

    #[test]
    fn numeric_codes_and_nulls() {
        let found =
            generic_json(r#"[{"file":"a","line":null,"code":401,"level":"NOTE","text":null}]"#)
                .unwrap();
        assert_eq!((found[0].line, found[0].rule.as_str()), (0, "401"));
        assert_eq!(
            (found[0].severity, found[0].message.as_str()),
            (Severity::Info, "")
        );
    }

    #[test]
    fn bad_values_name_the_finding_and_key() {
        let cases = [
            (
                r#"[{"line": 1}]"#,
                "finding 1: no `file`, `path` or `filename`",
            ),
            (
                r#"[{"file": "a"}, {"file": "b", "line": "3"}]"#,
                "finding 2: `line` is \"3\"",
            ),
            (r#"{"file": "a", "col": -1}"#, "finding 1: `col` is -1"),
            (r#"{"file": "a", "severity": "fatal"}"#, "severity `fatal`"),
            (r#"[1]"#, "finding 1: not an object"),
            (r#"{"path": ["a"]}"#, "`path` is [\"a\"], not a string"),
        ];
        for (input, expected) in cases {
            let err = generic_json(input).unwrap_err();
            assert!(err.0.contains(expected), "{input}: {err}");
        }
    }

    #[test]
    fn garbage_and_truncated_output_are_errors() {
        let full = include_str!("testdata/json-array.txt");
        assert!(
            generic_json(&full[..full.len() / 2])
                .unwrap_err()
                .0
                .contains("bad JSON array")
        );
        let lines = include_str!("testdata/json-lines.txt");
        let err = generic_json(&lines[..lines.len() - 10]).unwrap_err();
        assert!(err.0.contains("line 3: bad JSON"), "{err}");
        assert!(generic_json("Traceback (most recent call last):\n").is_err());
    }
}
