//! oxlint where the project configures it (`.oxlintrc.json(c)`, `oxlint.config.*`, a script,
//! lint-staged entry or pre-commit hook running it). oxlint has no stdin mode: one run per batch
//! on a scratch copy that carries each file's nearest configuration.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{Batch, Call, Checker, Files, Out, Uses, per_input};
use crate::checks::exec::scratch_tree::ScratchTree;
use crate::checks::exec::{
    Ran, Source, first_lines, flag, kept, relative_to, run_tool, with_value,
};
use crate::checks::finding::RawFinding;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "oxlint",
    config_files: &[
        ".oxlintrc.json",
        ".oxlintrc.jsonc",
        "oxlint.config.ts",
        "oxlint.config.mts",
    ],
    commands: &["oxlint"],
    precommit_ids: &["oxlint"],
    dependencies: &["oxlint", "oxlint-tsgolint"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "oxlint",
    files: Files::Lang(Lang::Node),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::Project,
    locate: Some(|l| l.program("oxlint")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let sources: Vec<Source> = call
        .files
        .iter()
        .map(|i| Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        })
        .collect();
    let scratch = crate::fs::layout::scratch(call.git_dir);
    match oxlint(
        call.argv,
        call.repo_root,
        call.cwd,
        &sources,
        call.args,
        &scratch,
        call.timeout,
    ) {
        Ran::Done(all) => Ran::Done(per_input(call, all)),
        other => other.relay(),
    }
}

/// `oxlint --format json` on a batch, in a [`ScratchTree`] under `scratch` (oxlint finds each
/// file's nearest `.oxlintrc.json` from the file's own path, so the tree carries them), run from
/// `cwd`'s place in it; findings on repository paths.
pub(super) fn oxlint(
    argv: &[OsString],
    repo_root: &Path,
    cwd: &Path,
    files: &[Source],
    extra: &[String],
    scratch: &Path,
    timeout: Duration,
) -> Ran<Vec<RawFinding>> {
    // With no paths oxlint would lint its whole working directory.
    if files.is_empty() {
        return Ran::Done(Vec::new());
    }
    let texts: Vec<(&str, &str)> = files.iter().map(|f| (f.rel, f.text)).collect();
    let tree = match ScratchTree::build(repo_root, scratch, "oxlint-", &texts, cwd) {
        Ok(t) => t,
        Err(e) => return Ran::Error(e),
    };
    // oxlint reads `.eslintignore` from its working directory only, and, given a file outside
    // that directory, resolves even the files inside it with the wrong configuration (a nested
    // `.oxlintrc.json` in the working directory was ignored): run in `cwd` when the batch is
    // below it, as a per-project batch is, else from the root.
    let cwd_rel = relative_to(cwd, repo_root);
    let tool_cwd = if files.iter().all(|f| Path::new(f.rel).starts_with(&cwd_rel)) {
        tree.path(&cwd_rel)
    } else {
        tree.root().to_path_buf()
    };
    let mut args: Vec<OsString> = kept(
        extra,
        &[
            flag("--fix"),
            flag("--fix-suggestions"),
            flag("--fix-dangerously"),
            with_value("--format"),
            with_value("-f"),
        ],
    );
    args.extend(["--format", "json", "--no-error-on-unmatched-pattern"].map(OsString::from));
    // Relative: oxlint refuses a path with `..`, and all are below its working directory.
    args.extend(
        files
            .iter()
            .map(|f| relative_to(&tree.path(f.rel), &tool_cwd).into_os_string()),
    );
    let out = match run_tool(argv, &tool_cwd, args, None, &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    if !matches!(out.code, Some(0 | 1)) {
        return Ran::Error(first_lines(&format!(
            "{}\n{}",
            out.stderr_str(),
            out.stdout_str()
        )));
    }
    match output::oxlint_json(&out.stdout_str()) {
        Ok(found) => Ran::Done(
            found
                .into_iter()
                .map(|mut f| {
                    if let Some(rel) = tree.repo_path(&f.path, &tool_cwd) {
                        f.path = rel;
                    }
                    f
                })
                .collect(),
        ),
        // oxlint's complaint is on stdout, naming the scratch copy of the configuration.
        Err(_) => Ran::Error(tree.unmask(
            &first_lines(&format!("{}\n{}", out.stdout_str(), out.stderr_str())),
            repo_root,
        )),
    }
}

mod output {
    //! `oxlint --format json F…` (oxlint 1.94.0).
    //!
    //! Quirks handled:
    //! - everything goes to stdout, and the JSON object is not always alone there: with no file left
    //!   to lint (missing, ignored, unsupported extension) a line `No files found to lint…` comes
    //!   before it. So the JSON is taken from the first line that starts with `{`; output with no such
    //!   line is oxlint's complaint (a configuration it cannot read or build: `Failed to parse oxlint
    //!   configuration file…`) and a [`ParseError`] quoting its first line;
    //! - it is an object `{"diagnostics":[…],"number_of_files":…}`, not ESLint's array;
    //! - the rule is `code` as oxlint spells it (`eslint(no-debugger)`, `typescript(…)`); a syntax
    //!   error has no `code` and gets the rule `parse`;
    //! - the position is the first label's `span`: `line` 1-based, `column` 1-based in UTF-8 bytes
    //!   (after `"héllo😀"` it is 25); no label → 0, 0;
    //! - `filename` is relative to the cwd, or absolute for a file given absolute outside it;
    //! - severity `warning` / `error`, `advice` an info.

    use serde::Deserialize;

    use crate::checks::parse::{ParseError, RawFinding, Severity, error, excerpt, severity_word};

    #[derive(Deserialize)]
    struct Report {
        diagnostics: Vec<Diagnostic>,
    }

    #[derive(Deserialize)]
    struct Diagnostic {
        message: String,
        #[serde(default)]
        code: Option<String>,
        severity: String,
        #[serde(default)]
        filename: String,
        #[serde(default)]
        labels: Vec<Label>,
    }

    #[derive(Deserialize)]
    struct Label {
        span: Span,
    }

    #[derive(Deserialize)]
    struct Span {
        #[serde(default)]
        line: usize,
        #[serde(default)]
        column: usize,
    }

    /// The JSON part of oxlint's stdout: from the first line that starts with `{`.
    fn json_part(stdout: &str) -> Option<&str> {
        let mut at = 0;
        for line in stdout.split_inclusive('\n') {
            if line.starts_with('{') {
                return Some(&stdout[at..]);
            }
            at += line.len();
        }
        None
    }

    /// Parses what `oxlint --format json` prints on stdout.
    pub(super) fn oxlint_json(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
        let Some(json) = json_part(stdout) else {
            let first = stdout.lines().find(|l| !l.trim().is_empty());
            return Err(error(
                "oxlint",
                match first {
                    Some(l) => format!("no JSON report: {}", excerpt(l)),
                    None => "empty output (a clean run prints a JSON report)".to_string(),
                },
            ));
        };
        let report: Report =
            serde_json::from_str(json).map_err(|e| error("oxlint", format!("bad JSON: {e}")))?;
        report
            .diagnostics
            .into_iter()
            .map(|d| {
                let severity = match d.severity.as_str() {
                    "advice" => Severity::Info,
                    word => severity_word(word)
                        .ok_or_else(|| error("oxlint", format!("unknown severity `{word}`")))?,
                };
                let (line, column) = d
                    .labels
                    .first()
                    .map_or((0, 0), |l| (l.span.line, l.span.column));
                Ok(RawFinding {
                    path: d.filename,
                    line,
                    column,
                    rule: d.code.unwrap_or_else(|| "parse".to_string()),
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
        fn findings_with_rule_severity_and_byte_columns() {
            let found = oxlint_json(include_str!("../parse/testdata/oxlint-findings.txt")).unwrap();
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
                    // `const s = "héllo😀"; debugger;`: the column counts bytes.
                    ("src/uni.js", 1, 25, "eslint(no-debugger)", Severity::Error),
                    (
                        "src/bad.js",
                        2,
                        7,
                        "eslint(no-unused-vars)",
                        Severity::Warning
                    ),
                    ("src/bad.js", 1, 1, "eslint(no-debugger)", Severity::Error),
                    ("src/bad.js", 4, 7, "eslint(eqeqeq)", Severity::Warning),
                ]
            );
            assert_eq!(found[3].message, "Expected === and instead saw ==");
        }

        #[test]
        fn a_syntax_error_has_no_code_and_gets_rule_parse() {
            let found = oxlint_json(include_str!("../parse/testdata/oxlint-syntax.txt")).unwrap();
            assert_eq!(found.len(), 1);
            assert_eq!(
                (found[0].rule.as_str(), found[0].line, found[0].column),
                ("parse", 1, 12)
            );
            assert_eq!(found[0].severity, Severity::Error);
        }

        #[test]
        fn clean_and_no_files_are_empty() {
            assert_eq!(
                oxlint_json(include_str!("../parse/testdata/oxlint-clean.txt")),
                Ok(vec![])
            );
            let none = include_str!("../parse/testdata/oxlint-nofiles.txt");
            assert!(none.starts_with("No files found to lint"));
            assert_eq!(oxlint_json(none), Ok(vec![]));
        }

        #[test]
        fn a_configuration_error_is_an_error_quoting_oxlint() {
            for rec in [
                include_str!("../parse/testdata/oxlint-config-error.txt"),
                include_str!("../parse/testdata/oxlint-config-syntax.txt"),
            ] {
                let e = oxlint_json(rec).unwrap_err();
                assert!(
                    e.0.contains("Failed to parse oxlint configuration file"),
                    "{e}"
                );
            }
        }

        #[test]
        fn empty_truncated_and_unknown_severity_are_errors() {
            assert!(oxlint_json("").is_err());
            let full = include_str!("../parse/testdata/oxlint-findings.txt");
            assert!(oxlint_json(&full[..full.len() / 2]).is_err());
            let odd = r#"{"diagnostics":[{"message":"m","severity":"loud","filename":"a.js"}]}"#;
            assert!(oxlint_json(odd).unwrap_err().0.contains("loud"));
            // A `{` inside a complaint line is not the report.
            assert!(oxlint_json("Failed: expected `{` here\n").is_err());
        }

        #[test]
        fn never_panics_on_any_recording_or_truncation() {
            crate::checks::parse::recordings::each_prefix(|s| {
                let _ = oxlint_json(s);
            });
        }
    }
}
