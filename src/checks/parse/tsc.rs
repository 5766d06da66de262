//! `tsc --noEmit -p tsconfig.json --pretty false` (TypeScript 5.x and the native 7.x): text on
//! stdout, the only format tsc has.
//!
//! Quirks handled:
//! - a diagnostic reads `src/bad.ts(1,7): error TS2322: Type …` with the path relative to the
//!   cwd and a 1-based line and column; the rule is `TS2322`;
//! - tsconfig errors are diagnostics of `tsconfig.json(1,24)` (e.g. TS5023, unknown option);
//! - global diagnostics have no location (`error TS6053: File '…' not found.`, `error TS5112:
//!   tsconfig.json is present but will not be loaded …`): path `""`, line and column 0;
//! - continuation lines are indented by two spaces (`  Types of parameters …`, `  The file is
//!   in the program because:`) and are appended to the message, keeping any deeper indent;
//! - category `error` → error, `warning` → warning, `message` → info;
//! - a clean run prints nothing; anything else (the help text printed when there is no
//!   tsconfig.json, `--pretty` output) is a [`ParseError`].

use std::sync::LazyLock;

use regex::Regex;

use super::{ParseError, RawFinding, Severity, error, excerpt};

/// `path(line,col): category TScode: message`, or the same without `path(line,col): `.
#[allow(
    clippy::expect_used,
    reason = "a constant pattern: its tests compile it"
)]
static DIAGNOSTIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:(?P<path>.+?)\((?P<line>\d+),(?P<column>\d+)\): )?(?P<category>error|warning|message) (?P<code>TS\d+): (?P<message>.*)$",
    )
    .expect("constant regex")
});

/// Parses the diagnostics `tsc --pretty false` prints on stdout.
pub fn tsc_text(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
    let mut found: Vec<RawFinding> = Vec::new();
    for line in stdout.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if let Some(more) = line.strip_prefix("  ") {
            let Some(last) = found.last_mut() else {
                return Err(error("tsc", format!("unexpected line: {}", excerpt(line))));
            };
            last.message.push('\n');
            last.message.push_str(more);
            continue;
        }
        let Some(caps) = DIAGNOSTIC.captures(line) else {
            return Err(error("tsc", format!("unexpected line: {}", excerpt(line))));
        };
        let number = |name: &str| -> Result<usize, ParseError> {
            caps.name(name).map_or(Ok(0), |m| {
                m.as_str()
                    .parse()
                    .map_err(|_| error("tsc", format!("bad {name} in: {}", excerpt(line))))
            })
        };
        let severity = match &caps["category"] {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            _ => Severity::Info,
        };
        found.push(RawFinding {
            path: caps.name("path").map_or("", |m| m.as_str()).to_string(),
            line: number("line")?,
            column: number("column")?,
            rule: caps["code"].to_string(),
            severity,
            message: caps["message"].to_string(),
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_with_a_continued_message() {
        let found = tsc_text(include_str!("testdata/tsc-violation.txt")).unwrap();
        let summary: Vec<(&str, usize, usize, &str)> = found
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.column, f.rule.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("src/bad.ts", 1, 7, "TS2322"),
                ("src/bad.ts", 1, 7, "TS6133"),
                ("src/chain.ts", 1, 14, "TS2322"),
                ("src/deep.ts", 2, 21, "TS2322"),
                ("src/deep.ts", 4, 10, "TS6133"),
            ]
        );
        assert!(found.iter().all(|f| f.severity == Severity::Error));
        assert_eq!(
            found[0].message,
            "Type 'string' is not assignable to type 'number'."
        );
        assert_eq!(
            found[2].message,
            "Type '(a: number) => void' is not assignable to type '(a: string) => void'.\n\
             Types of parameters 'a' and 'a' are incompatible.\n  \
             Type 'string' is not assignable to type 'number'."
        );
    }

    #[test]
    fn syntax_error() {
        let found = tsc_text(include_str!("testdata/tsc-syntax.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "src/syn.ts");
        assert_eq!((found[0].line, found[0].column), (1, 9));
        assert_eq!(found[0].rule, "TS1109");
        assert_eq!(found[0].message, "Expression expected.");
    }

    #[test]
    fn tsconfig_error_is_a_finding_on_tsconfig() {
        let found = tsc_text(include_str!("testdata/tsc-config.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "tsconfig.json");
        assert_eq!((found[0].line, found[0].column), (1, 24));
        assert_eq!(found[0].rule, "TS5023");
        assert!(found[0].message.contains("'bogusOpt'"));
    }

    #[test]
    fn global_diagnostic_has_no_location() {
        let found = tsc_text(include_str!("testdata/tsc-global.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].path.as_str(), found[0].line, found[0].column),
            ("", 0, 0)
        );
        assert_eq!(found[0].rule, "TS6053");
        assert_eq!(
            found[0].message,
            "File '/tmp/pg/ts-clean/src/nope.ts' not found.\n\
             The file is in the program because:\n  \
             Part of 'files' list in tsconfig.json"
        );
    }

    #[test]
    fn clean_run_prints_nothing() {
        assert_eq!(tsc_text(include_str!("testdata/tsc-clean.txt")), Ok(vec![]));
    }

    #[test]
    fn help_text_without_tsconfig_is_an_error() {
        let err = tsc_text(include_str!("testdata/tsc-noconfig.txt")).unwrap_err();
        assert_eq!(err.0, "tsc: unexpected line: Version 7.0.2");
    }

    #[test]
    fn garbage_and_odd_paths() {
        assert!(tsc_text("  dangling continuation\n").is_err());
        assert!(tsc_text("src/a.ts:1:7 - error TS2322: pretty output\n").is_err());
        let found = tsc_text("src/a (1).ts(3,4): warning TS1: w\r\n").unwrap();
        assert_eq!(found[0].path, "src/a (1).ts");
        assert_eq!((found[0].line, found[0].column), (3, 4));
        assert_eq!(found[0].severity, Severity::Warning);
    }
}
