//! xo: an eslint wrapper with its own rules (and, with `--prettier`, prettier). A project that
//! uses xo runs xo itself, never its eslint or prettier separately. One stdin run per file
//! (about 3 s each: xo loads typescript-eslint and many plugins).

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, findings};
use crate::checks::exec::{Ran, Source, flag, kept, node_complaint, run_tool, with_value};
use crate::checks::finding::RawFinding;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::{Evidence, Signals, Use};

pub static SIGNALS: Signals = Signals {
    name: "xo",
    config_files: &[
        "xo.config.js",
        "xo.config.cjs",
        "xo.config.mjs",
        "xo.config.ts",
        "xo.config.cts",
        "xo.config.mts",
        ".xo-config",
        ".xo-config.json",
        ".xo-config.js",
        ".xo-config.cjs",
    ],
    package_json_keys: &["xo"],
    commands: &["xo"],
    dependencies: &["xo"],
    ..Signals::NONE
};

/// For eslint and prettier: not used where the project uses xo.
pub fn replaces(ev: &Evidence, rel: &str, verdict: Use) -> Use {
    match ev.uses(rel, &SIGNALS) {
        Use::Used { evidence, .. } => Use::NotUsed {
            why: format!("the project uses xo ({evidence}), which runs it itself"),
        },
        Use::NotUsed { .. } => verdict,
    }
}

pub static CHECKER: Checker = Checker {
    name: "xo",
    files: Files::Lang(Lang::Node),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::PerFile,
    locate: Some(|l| l.program("xo")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let scratch = crate::fs::layout::scratch(call.git_dir);
    each_file(call, |i| {
        let src = Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        };
        findings(xo(
            call.argv,
            call.cwd,
            &src,
            call.args,
            &scratch,
            call.timeout,
        ))
    })
}

/// `xo --stdin --stdin-filename <real path> --reporter=json`, run in `cwd` (the project root:
/// xo 1.2.3 looks for its configuration from there and the file's path). The exit code says
/// nothing on stdin (0 despite errors), so the output decides: the ESLint array. `[]` means xo
/// ignored the file.
///
/// xo keeps caches in `<project>/node_modules/.cache/xo-linter` (creating `node_modules` if
/// needed), and lints a TypeScript file that is not on disk from a copy it writes there; with
/// `CACHE_DIR` pointing into `scratch` all of that stays out of the working tree. The price:
/// such a new TypeScript file, and a TypeScript file no `tsconfig.json` includes (xo writes its
/// fallback tsconfig into the project's cache regardless of `CACHE_DIR`), cannot be linted:
/// [`Ran::Skipped`] says so.
pub(super) fn xo(
    argv: &[OsString],
    cwd: &Path,
    file: &Source,
    extra: &[String],
    scratch: &Path,
    timeout: Duration,
) -> Ran<Vec<RawFinding>> {
    let cache = scratch.join("xo-cache");
    if let Err(e) = std::fs::create_dir_all(&cache) {
        return Ran::Error(format!("cannot create {}: {e}", cache.display()));
    }
    let mut args = kept(
        extra,
        &[
            flag("--fix"),
            flag("--open"),
            flag("--stdin"),
            with_value("--reporter"),
            with_value("--stdin-filename"),
            with_value("--print-config"),
        ],
    );
    args.extend(["--stdin", "--reporter=json", "--stdin-filename"].map(OsString::from));
    args.push(file.real.as_os_str().to_owned());
    // xo exits before node has flushed a large report into a pipe: its stdout stops at 64 KiB
    // (seen on a real project's test file). A file is written in full, so the shell sends the
    // report there.
    let report = match tempfile::Builder::new()
        .prefix("xo-report-")
        .suffix(".json")
        .tempfile_in(&cache)
    {
        Ok(f) => f,
        Err(e) => {
            return Ran::Error(format!(
                "cannot create a report file in {}: {e}",
                cache.display()
            ));
        }
    };
    let mut wrapped: Vec<OsString> = vec![
        "sh".into(),
        "-c".into(),
        "exec \"$0\" \"$@\" > \"$PATCHGATE_XO_REPORT\"".into(),
    ];
    wrapped.extend(argv.iter().cloned());
    let out = match run_tool(
        &wrapped,
        cwd,
        args,
        Some(file.text),
        &[
            ("CACHE_DIR", cache.as_path()),
            ("PATCHGATE_XO_REPORT", report.path()),
        ],
        timeout,
    ) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stdout = std::fs::read_to_string(report.path()).unwrap_or_default();
    if !stdout.trim_start().starts_with('[') {
        return Ran::Error(node_complaint(&out.stderr_str()));
    }
    let typescript = file
        .real
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "ts" | "tsx" | "mts" | "cts"));
    if stdout.trim() == "[]" {
        return Ran::Skipped(if typescript && !file.real.exists() {
            "xo 1.2.3 lints a new TypeScript file only from a copy in node_modules/.cache".into()
        } else {
            "ignored by the xo configuration".into()
        });
    }
    match output::xo_json(&stdout) {
        Ok(found)
            if typescript
                && found
                    .iter()
                    .any(|f| f.rule == "parse" && f.message.contains("tsconfig.xo.json")) =>
        {
            Ran::Skipped("no tsconfig.json includes this file (xo would write a fallback into node_modules/.cache)".into())
        }
        Ok(found) => Ran::Done(
            found
                .into_iter()
                .map(|mut f| {
                    f.path = file.rel.to_string();
                    f
                })
                .collect(),
        ),
        Err(e) => Ran::Error(e.to_string()),
    }
}

mod output {
    //! `xo --stdin --stdin-filename F --reporter=json` (xo 1.2.3, which bundles ESLint 9.39.5): the
    //! ESLint JSON array, read by [`eslint_json`](crate::checks::parse::eslint_json), which this module
    //! re-exports as [`xo_json`] and checks against recorded xo output.
    //!
    //! What differs from plain ESLint, verified on the recordings:
    //! - each file result carries extra keys (`usedDeprecatedRules`, `source`), which are ignored;
    //! - every xo rule is an error (`severity` 2), plugin rules are prefixed (`@stylistic/semi`);
    //! - a file xo ignores (`dist/`, its `ignores`) gives `[]`, not an entry with no messages: the
    //!   runner tells that apart from a clean file;
    //! - the exit code is 0 on stdin even with errors, and a configuration error prints nothing on
    //!   stdout (a node stack trace on stderr, rc 1): empty output is an error here too.

    pub(super) use crate::checks::parse::eslint_json as xo_json;

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::checks::finding::Severity;

        #[test]
        fn findings_are_the_eslint_messages() {
            let found = xo_json(include_str!("../parse/testdata/xo-findings.txt")).unwrap();
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
            let found = xo_json(include_str!("../parse/testdata/xo-syntax.txt")).unwrap();
            assert_eq!(found.len(), 1);
            assert_eq!(
                (found[0].rule.as_str(), found[0].line, found[0].column),
                ("parse", 1, 12)
            );
            assert!(found[0].message.starts_with("Parsing error:"));
        }

        #[test]
        fn clean_and_ignored_have_no_findings() {
            assert_eq!(
                xo_json(include_str!("../parse/testdata/xo-clean.txt")),
                Ok(vec![])
            );
            let ignored = include_str!("../parse/testdata/xo-ignored.txt");
            assert_eq!(ignored.trim(), "[]");
            assert_eq!(xo_json(ignored), Ok(vec![]));
        }

        #[test]
        fn a_configuration_error_prints_no_report() {
            assert!(xo_json("").is_err());
            assert!(xo_json(include_str!("../parse/testdata/xo-config-error-stderr.txt")).is_err());
        }
    }
}
