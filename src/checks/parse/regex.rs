//! Any line-oriented checker output, read with a user-supplied regex (for checkers configured
//! with a `pattern`, e.g. `ruff check --output-format concise` or `mypy --show-column-numbers`).
//!
//! The pattern is matched against each line (a trailing `\r` removed); lines that do not match
//! (summaries such as `Found 6 errors.`) are skipped. Named groups:
//! - `file` (required): the path, as the tool spells it;
//! - `line`, `column`: 1-based numbers, 0 when the group is absent or did not take part;
//! - `rule`: `""` when absent;
//! - `severity`: error, warning (warn), info or note, case-insensitive; error when absent;
//! - `message`: `""` when absent.
//!
//! Problems with the pattern (an invalid regex, no `file` group, a group of another name) and
//! with what it captured (a `line` that is not a number, an unknown severity word) are
//! [`ParseError`]s naming the problem.

use ::regex::Regex;

use super::{ParseError, RawFinding, Severity, error, excerpt, severity_word};

const GROUPS: [&str; 6] = ["file", "line", "column", "rule", "severity", "message"];

/// Parses `output` line by line with `pattern`.
pub fn regex_lines(output: &str, pattern: &str) -> Result<Vec<RawFinding>, ParseError> {
    let re = Regex::new(pattern).map_err(|e| error("pattern", format!("invalid regex: {e}")))?;
    if let Some(unknown) = re.capture_names().flatten().find(|n| !GROUPS.contains(n)) {
        return Err(error(
            "pattern",
            format!(
                "unknown group `{unknown}` (the groups are {})",
                GROUPS.join(", ")
            ),
        ));
    }
    if !re.capture_names().flatten().any(|n| n == "file") {
        return Err(error(
            "pattern",
            "no `file` group: name the path with (?P<file>...)",
        ));
    }
    let mut found = Vec::new();
    for line in output.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let Some(caps) = re.captures(line) else {
            continue;
        };
        let text = |name: &str| caps.name(name).map_or("", |m| m.as_str());
        let number = |name: &str| -> Result<usize, ParseError> {
            match caps.name(name).map(|m| m.as_str().trim()) {
                None | Some("") => Ok(0),
                Some(digits) => digits.parse().map_err(|_| {
                    error(
                        "pattern",
                        format!(
                            "group `{name}` captured `{digits}`, not a number, in: {}",
                            excerpt(line)
                        ),
                    )
                }),
            }
        };
        let severity = match text("severity") {
            "" => Severity::Error,
            word => severity_word(word).ok_or_else(|| {
                error(
                    "pattern",
                    format!(
                        "group `severity` captured `{word}`, not error, warning, info or note, in: {}",
                        excerpt(line)
                    ),
                )
            })?,
        };
        found.push(RawFinding {
            path: text("file").to_string(),
            line: number("line")?,
            column: number("column")?,
            rule: text("rule").to_string(),
            severity,
            message: text("message").to_string(),
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUFF_CONCISE: &str = r"^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<rule>[\w-]+):? (?:\[\*\] )?(?P<message>.*)$";
    const MYPY_TEXT: &str = r"^(?P<file>[^:]+):(?P<line>\d+):(?:(?P<column>\d+):)? (?P<severity>\w+): (?P<message>.*?)(?:  \[(?P<rule>[\w-]+)\])?$";

    #[test]
    fn ruff_concise_output() {
        let found = regex_lines(
            include_str!("testdata/regex-ruff-concise.txt"),
            RUFF_CONCISE,
        )
        .unwrap();
        let summary: Vec<(&str, usize, usize, &str)> = found
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.column, f.rule.as_str()))
            .collect();
        // The summary lines (`Found 6 errors.`, `[*] 3 fixable …`) do not match.
        assert_eq!(
            summary,
            [
                ("pkg/bad.py", 1, 1, "E401"),
                ("pkg/bad.py", 1, 8, "F401"),
                ("pkg/bad.py", 1, 12, "F401"),
                ("pkg/bad.py", 5, 5, "F841"),
                ("pkg/syn.py", 1, 7, "invalid-syntax"),
                ("pkg/syn.py", 1, 8, "invalid-syntax"),
            ]
        );
        assert!(found.iter().all(|f| f.severity == Severity::Error));
        assert_eq!(found[0].message, "Multiple imports on one line");
        assert_eq!(
            found[4].message,
            "Expected a parameter or the end of the parameter list"
        );
    }

    #[test]
    fn mypy_text_with_severity_words() {
        let found = regex_lines(include_str!("testdata/regex-mypy-text.txt"), MYPY_TEXT).unwrap();
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
                ("pkg/imp.py", 1, 1, "import-not-found", Severity::Error),
                ("pkg/imp.py", 1, 1, "", Severity::Info),
                ("pkg/bad.py", 5, 12, "return-value", Severity::Error),
                ("pkg/bad.py", 10, 18, "arg-type", Severity::Error),
                ("pkg/bad.py", 11, 17, "", Severity::Info),
            ]
        );
        assert_eq!(
            found[2].message,
            r#"Incompatible return value type (got "int", expected "str")"#
        );
    }

    #[test]
    fn only_file_is_required() {
        let found = regex_lines("src/a.js\nsrc/b.js\r\n", r"^(?P<file>\S+)$").unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].path, "src/b.js");
        assert_eq!((found[1].line, found[1].column), (0, 0));
        assert_eq!(
            (found[1].rule.as_str(), found[1].message.as_str()),
            ("", "")
        );
        assert_eq!(found[1].severity, Severity::Error);
        let found = regex_lines("a.py WARNING x\n", r"^(?P<file>\S+) (?P<severity>\w+)").unwrap();
        assert_eq!(found[0].severity, Severity::Warning);
    }

    #[test]
    fn no_output_no_findings() {
        assert_eq!(regex_lines("", RUFF_CONCISE), Ok(vec![]));
    }

    #[test]
    fn pattern_problems_are_named() {
        let err = regex_lines("", r"(?P<file>[").unwrap_err();
        assert!(err.0.starts_with("pattern: invalid regex"), "{err}");
        let err = regex_lines("", r"^(?P<path>\S+):(?P<line>\d+)").unwrap_err();
        assert!(err.0.contains("unknown group `path`"), "{err}");
        let err = regex_lines("", r"^(\S+):(?P<line>\d+)").unwrap_err();
        assert!(err.0.contains("no `file` group"), "{err}");
    }

    #[test]
    fn captured_values_that_do_not_fit_are_errors() {
        let err = regex_lines("a.py:x: m\n", r"^(?P<file>[^:]+):(?P<line>[^:]+):").unwrap_err();
        assert!(err.0.contains("group `line` captured `x`"), "{err}");
        let err =
            regex_lines("a.py: hint: m\n", r"^(?P<file>[^:]+): (?P<severity>\w+):").unwrap_err();
        assert!(err.0.contains("captured `hint`"), "{err}");
    }
}
