//! biome's linter where the project configures biome (`biome.json(c)`, a script, lint-staged
//! entry or pre-commit hook running `biome lint` / `biome check`), unless its configuration turns
//! the linter off. One run per batch on a scratch copy (biome's stdin mode gives no diagnostics).

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::biome_format::biome_complaint;
use super::{Batch, Call, Checker, Files, Out, Uses, per_input};
use crate::checks::exec::scratch_tree::ScratchTree;
use crate::checks::exec::{Ran, Source, flag, kept, relative_to, run_tool, with_value};
use crate::checks::finding::RawFinding;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::{Evidence, Signals, Use};

pub static SIGNALS: Signals = Signals {
    name: "biome (lint)",
    config_files: super::biome_format::CONFIGS,
    commands: &["biome lint", "biome check", "biome ci"],
    precommit_ids: &["biome-lint", "biome-check", "biome-ci"],
    dependencies: &["@biomejs/biome"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "biome-lint",
    files: Files::Lang(Lang::Node),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, Some(unless_off)),
    batch: Batch::Project,
    locate: Some(|l| l.program("biome")),
    run,
};

fn unless_off(ev: &Evidence, rel: &str, verdict: Use) -> Use {
    super::biome_format::section_off(ev, rel, verdict, "linter")
}

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
    match biome_lint(
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

/// biome's linter and assist (`biome check` with the formatter off, the formatter being the
/// other checker) on a batch, in a [`ScratchTree`] under `scratch` (under the system temporary
/// directory if `scratch` is inside a `.git` directory), run from `cwd`'s place in
/// it. Findings: categories `lint/…`, `assist/…`, `parse` (syntax errors), on repository paths;
/// files biome's configuration ignores are dropped by biome without a word.
pub(super) fn biome_lint(
    argv: &[OsString],
    repo_root: &Path,
    cwd: &Path,
    files: &[Source],
    extra: &[String],
    scratch: &Path,
    timeout: Duration,
) -> Ran<Vec<RawFinding>> {
    // With no paths biome would lint its whole working directory.
    if files.is_empty() {
        return Ran::Done(Vec::new());
    }
    let texts: Vec<(&str, &str)> = files.iter().map(|f| (f.rel, f.text)).collect();
    // biome's scanner skips everything below a `.git` directory, nested `biome.json` files
    // included (verified: a tree in `<repo>/.git/patchgate/scratch` lost them), so such a
    // scratch directory is traded for the system's temporary one.
    let in_git = scratch.components().any(|c| c.as_os_str() == ".git");
    let scratch = if in_git {
        std::env::temp_dir()
    } else {
        scratch.to_path_buf()
    };
    let tree = match ScratchTree::build(repo_root, &scratch, "biome-", &texts, cwd) {
        Ok(t) => t,
        Err(e) => return Ran::Error(e),
    };
    let tool_cwd = tree.path(relative_to(cwd, repo_root));
    let mut args: Vec<OsString> = vec!["check".into()];
    args.extend(kept(
        extra,
        &[
            flag("--write"),
            flag("--fix"),
            flag("--unsafe"),
            with_value("--reporter"),
            with_value("--reporter-file"),
            with_value("--max-diagnostics"),
            with_value("--diagnostic-level"),
            with_value("--formatter-enabled"),
            with_value("--stdin-file-path"),
        ],
    ));
    args.extend(
        [
            "--colors=off",
            "--reporter=json",
            "--formatter-enabled=false",
            "--max-diagnostics=none",
            "--no-errors-on-unmatched",
        ]
        .map(OsString::from),
    );
    args.extend(files.iter().map(|f| tree.path(f.rel).into_os_string()));
    let out = match run_tool(argv, &tool_cwd, args, None, &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stdout = out.stdout_str();
    if !matches!(out.code, Some(0 | 1)) || stdout.trim().is_empty() {
        return Ran::Error(tree.unmask(&biome_complaint(&out.stderr_str()), repo_root));
    }
    match output::biome_json(&stdout) {
        Ok(found) => Ran::Done(
            found
                .into_iter()
                .filter(|f| f.rule != "format")
                .map(|mut f| {
                    if let Some(rel) = tree.repo_path(&f.path, &tool_cwd) {
                        f.path = rel;
                    }
                    f
                })
                .collect(),
        ),
        Err(e) => Ran::Error(e.to_string()),
    }
}

mod output {
    //! `biome check --reporter=json F…` and `biome lint --reporter=json F…` (biome 2.6.8).
    //!
    //! Quirks handled:
    //! - the JSON is one object `{"summary":…,"diagnostics":[…],"command":…}` on stdout; stderr gets a
    //!   warning that the JSON reporter is experimental, and a configuration error prints nothing on
    //!   stdout (rc 1), so empty output is a failed run, not a clean one;
    //! - the rule is the diagnostic's `category`: `lint/<group>/<rule>`, `assist/source/…`, `parse`
    //!   (a syntax error), `format` (the file would be reformatted) and others; all are kept, choosing
    //!   among them is the caller's business;
    //! - `format` diagnostics (and any without a position) have line 0 and column 0: they become
    //!   whole-file findings (line 0, column 0), which is what 0 means in a [`RawFinding`];
    //! - `location.path` is relative to the cwd for a file below it, else as given;
    //! - `line`/`column` are 1-based, the column counted in characters (`"héllo😀"; debugger` puts
    //!   `debugger` at 21, not 22 in UTF-16 units or 25 in bytes);
    //! - severity `fatal` is an error, `hint` an info;
    //! - `summary.diagnosticsNotPrinted` > 0 means biome dropped findings (its `--max-diagnostics`
    //!   cap, 20 by default): an error, since a silently shortened list would pass a patch.

    use serde::Deserialize;

    use crate::checks::parse::{ParseError, RawFinding, Severity, error, severity_word};

    #[derive(Deserialize)]
    struct Report {
        #[serde(default)]
        summary: Option<Summary>,
        diagnostics: Vec<Diagnostic>,
    }

    #[derive(Deserialize)]
    struct Summary {
        #[serde(rename = "diagnosticsNotPrinted", default)]
        not_printed: u64,
    }

    #[derive(Deserialize)]
    struct Diagnostic {
        severity: String,
        message: String,
        #[serde(default)]
        category: Option<String>,
        #[serde(default)]
        location: Option<Location>,
    }

    #[derive(Deserialize)]
    struct Location {
        #[serde(default)]
        path: Option<String>,
        #[serde(default)]
        start: Option<Position>,
    }

    #[derive(Deserialize)]
    struct Position {
        line: usize,
        column: usize,
    }

    /// Parses the JSON object `biome check|lint --reporter=json` prints on stdout.
    pub(super) fn biome_json(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
        if stdout.trim().is_empty() {
            return Err(error(
                "biome",
                "empty output (a clean run prints a JSON report)",
            ));
        }
        let report: Report =
            serde_json::from_str(stdout).map_err(|e| error("biome", format!("bad JSON: {e}")))?;
        if let Some(s) = &report.summary
            && s.not_printed > 0
        {
            return Err(error(
                "biome",
                format!(
                    "{} diagnostics were not printed (raise --max-diagnostics)",
                    s.not_printed
                ),
            ));
        }
        report
            .diagnostics
            .into_iter()
            .map(|d| {
                let severity = match d.severity.as_str() {
                    "fatal" => Severity::Error,
                    "hint" => Severity::Info,
                    word => severity_word(word)
                        .ok_or_else(|| error("biome", format!("unknown severity `{word}`")))?,
                };
                let (path, start) = match d.location {
                    Some(l) => (l.path.unwrap_or_default(), l.start),
                    None => (String::new(), None),
                };
                let (line, column) = start.map_or((0, 0), |p| (p.line, p.column));
                // A position on line 0 is biome's "no position" (format diagnostics): no column either.
                let column = if line == 0 { 0 } else { column };
                Ok(RawFinding {
                    path,
                    line,
                    column,
                    rule: d.category.unwrap_or_default(),
                    severity,
                    message: d.message,
                })
            })
            .collect()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn summary(found: &[RawFinding]) -> Vec<(&str, usize, usize, &str, Severity)> {
            found
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
                .collect()
        }

        #[test]
        fn check_output_has_lint_assist_and_whole_file_format_findings() {
            let found = biome_json(include_str!("../parse/testdata/biome-check.txt")).unwrap();
            assert_eq!(
                summary(&found),
                [
                    (
                        "src/bad.js",
                        1,
                        7,
                        "lint/correctness/noUnusedVariables",
                        Severity::Warning
                    ),
                    ("src/bad.js", 2, 1, "lint/style/useConst", Severity::Warning),
                    (
                        "src/bad.js",
                        3,
                        1,
                        "lint/suspicious/noDebugger",
                        Severity::Error
                    ),
                    (
                        "src/bad.js",
                        4,
                        1,
                        "assist/source/organizeImports",
                        Severity::Error
                    ),
                    ("src/bad.js", 0, 0, "format", Severity::Error),
                ]
            );
            assert_eq!(found[0].message, "This variable unused is unused.");
        }

        #[test]
        fn lint_output_with_a_syntax_error_and_unicode_columns() {
            let found = biome_json(include_str!("../parse/testdata/biome-lint.txt")).unwrap();
            let parse: Vec<_> = found.iter().filter(|f| f.rule == "parse").collect();
            assert_eq!(parse.len(), 1);
            assert_eq!(
                (parse[0].path.as_str(), parse[0].line, parse[0].column),
                ("src/syntax.js", 1, 12)
            );
            assert_eq!(parse[0].message, "expected `)` but instead found `;`");
            // `const s = "héllo😀"; debugger;`: biome counts characters.
            let uni = found
                .iter()
                .find(|f| f.path == "src/uni.js" && f.rule.ends_with("noDebugger"))
                .unwrap();
            assert_eq!((uni.line, uni.column), (1, 21));
            assert!(found.iter().all(|f| f.rule != "format"));
            assert_eq!(found.len(), 8);
        }

        #[test]
        fn clean_report_is_empty() {
            assert_eq!(
                biome_json(include_str!("../parse/testdata/biome-clean.txt")),
                Ok(vec![])
            );
        }

        #[test]
        fn dropped_diagnostics_are_an_error() {
            let out = r#"{"summary":{"diagnosticsNotPrinted":3},"diagnostics":[]}"#;
            assert!(biome_json(out).unwrap_err().0.contains("3 diagnostics"));
        }

        #[test]
        fn empty_garbage_truncated_and_unknown_severity_are_errors() {
            assert!(biome_json("").is_err());
            assert!(biome_json("configuration ━━━ × Biome exited").is_err());
            let full = include_str!("../parse/testdata/biome-check.txt");
            assert!(biome_json(&full[..full.len() - 30]).is_err());
            let odd = r#"{"diagnostics":[{"severity":"loud","message":"m"}]}"#;
            assert!(biome_json(odd).unwrap_err().0.contains("loud"));
        }

        #[test]
        fn never_panics_on_any_recording_or_truncation() {
            crate::checks::parse::recordings::each_prefix(|s| {
                let _ = biome_json(s);
            });
        }
    }
}
