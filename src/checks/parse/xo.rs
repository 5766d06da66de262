//! `xo --stdin --stdin-filename F --reporter=json` (xo 1.2.3, which bundles ESLint 9.39.5): the
//! ESLint JSON array, read by [`eslint_json`](super::eslint::eslint_json), which this module
//! re-exports as [`xo_json`] and checks against recorded xo output.
//!
//! What differs from plain ESLint, verified on the recordings:
//! - each file result carries extra keys (`usedDeprecatedRules`, `source`), which are ignored;
//! - every xo rule is an error (`severity` 2), plugin rules are prefixed (`@stylistic/semi`);
//! - a file xo ignores (`dist/`, its `ignores`) gives `[]`, not an entry with no messages: the
//!   runner tells that apart from a clean file;
//! - the exit code is 0 on stdin even with errors, and a configuration error prints nothing on
//!   stdout (a node stack trace on stderr, rc 1): empty output is an error here too.

pub use super::eslint::eslint_json as xo_json;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::finding::Severity;

    #[test]
    fn findings_are_the_eslint_messages() {
        let found = xo_json(include_str!("testdata/xo-findings.txt")).unwrap();
        let summary: Vec<(usize, usize, &str)> = found
            .iter()
            .map(|f| (f.line, f.column, f.rule.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                (1, 7, "no-unused-vars"),
                (2, 1, "no-debugger"),
                (4, 1, "@stylistic/indent"),
                (4, 9, "@stylistic/quotes"),
                (4, 12, "@stylistic/semi"),
            ]
        );
        assert!(found.iter().all(|f| f.severity == Severity::Error));
        assert!(found.iter().all(|f| f.path == "/tmp/pg/rec/xo/src/bad.js"));
    }

    #[test]
    fn a_syntax_error_is_rule_parse() {
        let found = xo_json(include_str!("testdata/xo-syntax.txt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].rule.as_str(), found[0].line, found[0].column),
            ("parse", 1, 12)
        );
        assert!(found[0].message.starts_with("Parsing error:"));
    }

    #[test]
    fn clean_and_ignored_have_no_findings() {
        assert_eq!(xo_json(include_str!("testdata/xo-clean.txt")), Ok(vec![]));
        let ignored = include_str!("testdata/xo-ignored.txt");
        assert_eq!(ignored.trim(), "[]");
        assert_eq!(xo_json(ignored), Ok(vec![]));
    }

    #[test]
    fn a_configuration_error_prints_no_report() {
        assert!(xo_json("").is_err());
        assert!(xo_json(include_str!("testdata/xo-config-error-stderr.txt")).is_err());
    }
}
