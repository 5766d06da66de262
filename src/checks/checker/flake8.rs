//! flake8 where the project configures it (`.flake8`, `[flake8]` in setup.cfg or tox.ini, a
//! pre-commit hook — whose `args:` are passed on —, or a script running it). flake8 reads its
//! configuration from the working directory, so it runs where that configuration is.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, findings};
use crate::checks::exec::{
    Ran, Source, flag, kept, python_complaint, relative_to, run_tool, with_value,
};
use crate::checks::finding::RawFinding;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "flake8",
    config_files: &[".flake8"],
    pyproject_tables: &["tool.flake8"],
    ini_sections: &[("setup.cfg", "flake8"), ("tox.ini", "flake8")],
    commands: &["flake8"],
    precommit_ids: &["flake8"],
    dependencies: &["flake8", "flake8-*"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "flake8",
    files: Files::Lang(Lang::Python),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::PerFile,
    locate: Some(|l| l.program("flake8")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    each_file(call, |i| {
        let src = Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        };
        findings(flake8(call.argv, call.cwd, &src, call.args, call.timeout))
    })
}

/// `flake8 --stdin-display-name <path relative to cwd> -`, run in `cwd` (flake8 reads
/// `.flake8`/`setup.cfg`/`tox.ini` from the working directory, and matches `exclude` and
/// `per-file-ignores` against the display name). rc 1 with findings; rc 1 with none (a
/// traceback from a bad configuration value) is an error.
pub(super) fn flake8(
    argv: &[OsString],
    cwd: &Path,
    file: &Source,
    extra: &[String],
    timeout: Duration,
) -> Ran<Vec<RawFinding>> {
    let mut args = kept(
        extra,
        &[
            flag("-q"),
            flag("-qq"),
            flag("--quiet"),
            flag("--tee"),
            with_value("--output-file"),
            with_value("--stdin-display-name"),
        ],
    );
    // After the extra arguments: argparse lets the last one win.
    args.extend(["--format=default", "--no-show-source", "--color=never"].map(OsString::from));
    args.push("--stdin-display-name".into());
    args.push(relative_to(file.real, cwd).into_os_string());
    args.push("-".into());
    let out = match run_tool(argv, cwd, args, Some(file.text), &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stderr = out.stderr_str();
    if !matches!(out.code, Some(0 | 1)) || stderr.contains("Traceback (most recent call last)") {
        return Ran::Error(python_complaint(&stderr));
    }
    match output::flake8_text(&out.stdout_str()) {
        Ok(found) if found.is_empty() && out.code == Some(1) => {
            Ran::Error(python_complaint(&stderr))
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
    //! `flake8 F…` and `flake8 --stdin-display-name F -` with the default format (flake8 7.5.0):
    //! one `path:row:col: CODE text` line per finding on stdout, nothing when clean.
    //!
    //! Quirks handled:
    //! - there is no JSON format (`--format=json` prints the word `json` per finding), so this is the
    //!   text format; the path may itself hold `:` and spaces, so a line is split at the first
    //!   `:<row>:<col>: ` after a non-empty path;
    //! - `row` is 1-based, but 0 for a file that could not be read (`E902 FileNotFoundError…`);
    //!   `col` is 1-based (E999's is CPython's offset plus one);
    //! - flake8 has no severity: `W…` codes (pycodestyle's warnings) are warnings, every other code
    //!   an error;
    //! - a configuration may add summary lines (`count`: a bare number; `statistics`: `2     F401 …`;
    //!   `benchmark`: `0.01  seconds elapsed`): lines that start with a digit are skipped. Any other
    //!   line is not flake8's default format (a plugin's formatter, `show-source`): a [`ParseError`],
    //!   since reading it as "no findings" would pass a broken patch.

    use std::sync::LazyLock;

    use ::regex::Regex;

    use crate::checks::parse::{ParseError, RawFinding, Severity, error, excerpt};

    #[allow(
        clippy::expect_used,
        reason = "a constant pattern: its tests compile it"
    )]
    static LINE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(.+?):(\d+):(\d+): (\S+) ?(.*)$").expect("a valid constant pattern")
    });

    /// Parses flake8's default output.
    pub(super) fn flake8_text(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
        let mut found = Vec::new();
        for line in stdout.lines() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim().is_empty() || line.starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            let Some(caps) = LINE.captures(line) else {
                return Err(error(
                    "flake8",
                    format!("not a `path:row:col: CODE text` line: {}", excerpt(line)),
                ));
            };
            let number = |i: usize| -> Result<usize, ParseError> {
                caps[i]
                    .parse()
                    .map_err(|_| error("flake8", format!("number too large in: {}", excerpt(line))))
            };
            let code = caps[4].to_string();
            found.push(RawFinding {
                path: caps[1].to_string(),
                line: number(2)?,
                column: number(3)?,
                severity: if code.starts_with('W') {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                rule: code,
                message: caps[5].to_string(),
            });
        }
        Ok(found)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn one_finding_per_line() {
            let found = flake8_text(include_str!("../parse/testdata/flake8-findings.txt")).unwrap();
            let summary: Vec<(usize, usize, &str)> = found
                .iter()
                .map(|f| (f.line, f.column, f.rule.as_str()))
                .collect();
            assert_eq!(
                summary,
                [
                    (1, 1, "F401"),
                    (1, 1, "F401"),
                    (1, 10, "E401"),
                    (1, 10, "E231"),
                    (4, 7, "E201"),
                    (5, 5, "F841"),
                    (5, 5, "E741"),
                    (5, 12, "E702"),
                    (5, 24, "E261"),
                    (5, 41, "E501"),
                ]
            );
            assert!(found.iter().all(|f| f.path == "pkg/bad.py"));
            assert!(found.iter().all(|f| f.severity == Severity::Error));
            assert_eq!(found[0].message, "'os' imported but unused");
            assert_eq!(found[9].message, "line too long (56 > 40 characters)");
        }

        #[test]
        fn syntax_error_is_e999_alone() {
            let found = flake8_text(include_str!("../parse/testdata/flake8-syntax.txt")).unwrap();
            assert_eq!(found.len(), 1);
            assert_eq!(
                (found[0].rule.as_str(), found[0].line, found[0].column),
                ("E999", 1, 8)
            );
            assert_eq!(found[0].message, "SyntaxError: invalid syntax");
        }

        #[test]
        fn an_unreadable_file_is_e902_on_row_zero() {
            let found = flake8_text(include_str!("../parse/testdata/flake8-missing.txt")).unwrap();
            assert_eq!(found.len(), 1);
            assert_eq!(
                (found[0].rule.as_str(), found[0].line, found[0].column),
                ("E902", 0, 1)
            );
        }

        #[test]
        fn a_path_with_colons_and_spaces_is_kept_whole() {
            let found = flake8_text(include_str!("../parse/testdata/flake8-odd-path.txt")).unwrap();
            assert_eq!(found[0].path, "pkg/odd:name 1.py");
            assert_eq!((found[0].line, found[0].rule.as_str()), (1, "F401"));
        }

        #[test]
        fn clean_is_empty_and_summaries_are_skipped() {
            assert_eq!(
                flake8_text(include_str!("../parse/testdata/flake8-clean.txt")),
                Ok(vec![])
            );
            let with_stats =
                "a.py:1:1: W291 trailing whitespace\n1     W291 trailing whitespace\n1\n";
            let found = flake8_text(with_stats).unwrap();
            assert_eq!(found.len(), 1);
            assert_eq!(found[0].severity, Severity::Warning);
        }

        #[test]
        fn another_format_is_an_error() {
            assert!(flake8_text("json\njson\n").is_err());
            let stderr = include_str!("../parse/testdata/flake8-config-error-stderr.txt");
            assert!(flake8_text(stderr).is_err());
        }

        #[test]
        fn never_panics_on_any_recording_or_truncation() {
            crate::checks::parse::recordings::each_prefix(|s| {
                let _ = flake8_text(s);
            });
        }
    }
}
