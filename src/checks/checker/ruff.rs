//! `ruff check`: Python's linter where the project configures it (`ruff.toml`, `[tool.ruff]`, a
//! script or pre-commit hook running it).
//!
//! One run per project batch on a scratch copy that carries the configuration chain
//! (`copy_batch`); if that batch fails as a whole, one stdin run per file. `ruff format`
//! (`ruff_format`) shares both ways.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{Batch, Call, Checker, FileOut, Files, Out, Uses, each_file, findings, formatted};
use crate::checks::exec::{Ran, first_lines, run_stdin};
use crate::checks::finding::RawFinding;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "ruff",
    config_files: &["ruff.toml", ".ruff.toml"],
    pyproject_tables: &["tool.ruff", "tool.ruff.lint"],
    commands: &["ruff check"],
    precommit_ids: &["ruff", "ruff-check"],
    dependencies: &["ruff"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "ruff",
    files: Files::Lang(Lang::Python),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::Project,
    locate: Some(|l| l.program("ruff")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    batch(call, true)
}

/// ruff (check or format) over the call's files: one batch, else one stdin run per file.
pub(super) fn batch(call: &Call, lint: bool) -> Ran<Out> {
    // One file (an agent's usual patch) goes to ruff on stdin, as a person would run it: the
    // scratch copy (a folder, the file, the configuration, ruff's cache, the clean-up) was 3.5
    // ms of an 8 ms job, and the stdin run reads the real tree's configuration as it is.
    if call.files.len() == 1 {
        crate::timing::mark("ruff: one file, on stdin");
        return per_file(call, lint);
    }
    let texts: Vec<(&str, &str)> = call.files.iter().map(|i| (i.rel, i.text())).collect();
    match copy_batch::run(call.argv, call.repo_root, &texts, lint, call.timeout) {
        Ran::Done(copy_batch::Out::Formatted(out)) => Ran::Done(Out::Files(
            out.into_iter()
                .map(|(_, f)| FileOut::Formatted(f))
                .collect(),
        )),
        Ran::Done(copy_batch::Out::Findings(all)) => Ran::Done(Out::Files(
            call.files
                .iter()
                .map(|i| {
                    FileOut::Findings(all.iter().filter(|f| f.path == i.rel).cloned().collect())
                })
                .collect(),
        )),
        Ran::Missing(m) => Ran::Missing(m),
        Ran::Timeout => Ran::Timeout,
        // A configuration this batch could not reproduce: one stdin run per file.
        Ran::Skipped(_) | Ran::Error(_) | Ran::Unready { .. } => per_file(call, lint),
    }
}

fn per_file(call: &Call, lint: bool) -> Ran<Out> {
    let project = match call.project() {
        Ok(p) => p,
        Err(e) => return e,
    };
    each_file(call, |i| {
        let (root, real) = (project.root.as_path(), i.real);
        if !lint {
            return formatted(ruff_format(call.argv, root, real, i.text(), call.timeout));
        }
        findings(
            match ruff_check(call.argv, root, real, i.text(), call.timeout) {
                Ran::Done(f) => Ran::Done(
                    f.into_iter()
                        .filter(|x| Path::new(&x.path) == i.real || x.path == i.rel)
                        .collect(),
                ),
                other => other,
            },
        )
    })
}

fn ruff_format(
    argv: &[OsString],
    root: &Path,
    real: &Path,
    text: &str,
    timeout: Duration,
) -> Ran<String> {
    let mut argv = argv.to_vec();
    argv.extend(["format", "--force-exclude", "--stdin-filename"].map(OsString::from));
    argv.push(real.as_os_str().to_owned());
    argv.push("-".into());
    let out = match run_stdin(&argv, root, text, timeout) {
        Ok(o) => o,
        Err(r) => return r.relay(),
    };
    match out.code {
        Some(0) if out.stdout.is_empty() && !text.is_empty() => {
            Ran::Skipped("excluded by the ruff configuration".into())
        }
        Some(0) => Ran::Done(out.stdout_str()),
        _ => Ran::Error(first_lines(&out.stderr_str())),
    }
}

fn ruff_check(
    argv: &[OsString],
    root: &Path,
    real: &Path,
    text: &str,
    timeout: Duration,
) -> Ran<Vec<RawFinding>> {
    let mut argv = argv.to_vec();
    argv.extend(
        [
            "check",
            "--output-format",
            "json",
            "--force-exclude",
            "--no-fix",
            "--stdin-filename",
        ]
        .map(OsString::from),
    );
    argv.push(real.as_os_str().to_owned());
    argv.push("-".into());
    let out = match run_stdin(&argv, root, text, timeout) {
        Ok(o) => o,
        Err(r) => return r.relay(),
    };
    match out.code {
        Some(0) | Some(1) if out.stdout.iter().all(u8::is_ascii_whitespace) => {
            Ran::Skipped("excluded by the ruff configuration".into())
        }
        Some(0) | Some(1) => match output::ruff_json(&out.stdout_str()) {
            Ok(f) => Ran::Done(f),
            Err(e) => Ran::Error(format!("unreadable ruff output: {e}")),
        },
        _ => Ran::Error(first_lines(&out.stderr_str())),
    }
}

mod copy_batch {
    //! ruff once per project batch instead of once per file.
    //!
    //! ruff reads only one file on stdin, and 40 ruff processes cost more CPU than the whole rest of a
    //! check run. So the batch's patched texts are written, at their repository paths, into a scratch
    //! directory that also holds a copy of every ruff configuration file (`pyproject.toml`,
    //! `ruff.toml`, `.ruff.toml`) on the way from each file up to the repository root: ruff discovers
    //! configuration from each file's path, so it finds the same settings there as in the real tree,
    //! with paths relative to them unchanged (`per-file-ignores`, `exclude` with `--force-exclude`).
    //! The directory is outside the repository (a `.git` component in the path would match ruff's
    //! default excludes) and removed when the run ends. If the batch run fails as a whole (a
    //! configuration that `extend`s a file outside what was copied, say), or a configuration file
    //! lies above the repository root (ruff would find it from the real paths, not from the scratch
    //! directory's), the caller falls back to one run per file on stdin. ruff's cache is off there:
    //! nothing would ever read it again.

    use std::collections::BTreeSet;
    use std::ffi::OsString;
    use std::path::Path;
    use std::time::Duration;

    use super::output;
    use crate::checks::exec::{Ran, first_lines, ran};
    use crate::checks::finding::RawFinding;
    use crate::runner::Cmd;

    const CONFIGS: &[&str] = &["pyproject.toml", "ruff.toml", ".ruff.toml"];

    /// `ruff format` (formatted texts, by repository path) or `ruff check` (findings with repository
    /// paths) over `files` (repository path, text).
    pub(super) enum Out {
        Formatted(Vec<(String, String)>),
        Findings(Vec<RawFinding>),
    }

    /// Whether a folder above `repo_root` holds a file ruff may read its configuration from:
    /// from a real path ruff walks up past the root (when the repository has none of its own, or
    /// one `extend`s it), which a path in the scratch directory would not reach.
    fn above_root(repo_root: &Path) -> bool {
        repo_root
            .ancestors()
            .skip(1)
            .any(|dir| CONFIGS.iter().any(|name| dir.join(name).is_file()))
    }

    pub(super) fn run(
        argv: &[OsString],
        repo_root: &Path,
        files: &[(&str, &str)],
        lint: bool,
        timeout: Duration,
    ) -> Ran<Out> {
        if above_root(repo_root) {
            return Ran::Skipped("a ruff configuration above the repository root".into());
        }
        let scratch = match tempfile::Builder::new().prefix("patchgate-ruff-").tempdir() {
            Ok(d) => d,
            Err(e) => return Ran::Error(format!("cannot create a scratch directory: {e}")),
        };
        let root = match std::fs::canonicalize(scratch.path()) {
            Ok(r) => r,
            Err(e) => return Ran::Error(e.to_string()),
        };
        let mut dirs: BTreeSet<String> = BTreeSet::new();
        for (rel, text) in files {
            let dst = root.join(rel);
            if let Some(parent) = dst.parent()
                && let Err(e) = std::fs::create_dir_all(parent)
            {
                return Ran::Error(e.to_string());
            }
            if let Err(e) = std::fs::write(&dst, text) {
                return Ran::Error(e.to_string());
            }
            let mut d = Path::new(rel).parent();
            while let Some(dir) = d {
                dirs.insert(dir.to_string_lossy().into_owned());
                d = dir.parent();
            }
            dirs.insert(String::new());
        }
        for d in &dirs {
            for name in CONFIGS {
                let src = repo_root.join(d).join(name);
                if src.is_file() {
                    let _ = std::fs::create_dir_all(root.join(d));
                    if let Err(e) = std::fs::copy(&src, root.join(d).join(name)) {
                        return Ran::Error(e.to_string());
                    }
                }
            }
        }
        let mut args: Vec<OsString> = argv[1..].to_vec();
        if lint {
            args.extend(
                [
                    "check",
                    "--output-format",
                    "json",
                    "--force-exclude",
                    "--no-fix",
                    "--no-cache",
                    "--",
                ]
                .map(OsString::from),
            );
        } else {
            args.extend(
                ["format", "--force-exclude", "--quiet", "--no-cache", "--"].map(OsString::from),
            );
        }
        args.extend(files.iter().map(|(rel, _)| OsString::from(*rel)));
        let out = match ran(Cmd::new(argv[0].clone(), &root)
            .args(args)
            .timeout(timeout)
            .run())
        {
            Ok(o) => o,
            Err(why) => return why,
        };
        if !matches!(out.code, Some(0) | Some(1)) {
            return Ran::Error(first_lines(&out.stderr_str()));
        }
        if lint {
            let prefix = format!("{}/", root.display());
            match output::ruff_json(&out.stdout_str()) {
                Ok(found) => Ran::Done(Out::Findings(
                    found
                        .into_iter()
                        .map(|mut f| {
                            f.path = f.path.strip_prefix(&prefix).unwrap_or(&f.path).to_string();
                            f
                        })
                        .collect(),
                )),
                Err(e) => Ran::Error(format!("unreadable ruff output: {e}")),
            }
        } else {
            let mut formatted = Vec::with_capacity(files.len());
            for (rel, _) in files {
                match std::fs::read_to_string(root.join(rel)) {
                    Ok(t) => formatted.push((rel.to_string(), t)),
                    Err(e) => return Ran::Error(e.to_string()),
                }
            }
            Ran::Done(Out::Formatted(formatted))
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// ruff itself; in CI its absence fails the test, locally it is skipped loudly.
        fn ruff() -> Option<Vec<OsString>> {
            match crate::project::tools::which("ruff") {
                Some(p) => Some(vec![p.into_os_string()]),
                None if std::env::var("CI").as_deref() == Ok("true") => {
                    panic!("ruff is not on PATH")
                }
                None => {
                    eprintln!("SKIPPED: ruff is not on PATH (scripts/test installs it)");
                    None
                }
            }
        }

        #[test]
        fn the_batch_sees_each_files_own_configuration_and_excludes() {
            let Some(argv) = ruff() else { return };
            let repo = tempfile::tempdir().expect("tempdir");
            let root = repo.path();
            std::fs::write(
                root.join("pyproject.toml"),
                "[tool.ruff]\nextend-exclude = [\"gen\"]\n[tool.ruff.lint]\nselect = [\"F\"]\n",
            )
            .expect("write");
            std::fs::create_dir_all(root.join("sub")).expect("mkdir");
            std::fs::write(
                root.join("sub/ruff.toml"),
                "line-length = 20\n[lint]\nselect = [\"E501\"]\n",
            )
            .expect("write");
            let unused = "import os\n";
            let long = "x = 'a long line that is longer than twenty'\nimport os\n";
            let files = [("a.py", unused), ("sub/b.py", long), ("gen/c.py", unused)];
            let found = match run(&argv, root, &files, true, Duration::from_secs(30)) {
                Ran::Done(Out::Findings(f)) => f,
                _ => panic!("the batch run failed"),
            };
            let got: Vec<(&str, &str, usize)> = found
                .iter()
                .map(|f| (f.path.as_str(), f.rule.as_str(), f.line))
                .collect();
            assert_eq!(got, vec![("a.py", "F401", 1), ("sub/b.py", "E501", 1)]);
            // Nothing of the repository was touched: the copies live elsewhere.
            assert!(!root.join("a.py").exists());
        }

        #[test]
        fn the_batch_formats_with_each_files_configuration() {
            let Some(argv) = ruff() else { return };
            let repo = tempfile::tempdir().expect("tempdir");
            let root = repo.path();
            std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"x\"\n")
                .expect("write");
            std::fs::create_dir_all(root.join("sub")).expect("mkdir");
            std::fs::write(
                root.join("sub/ruff.toml"),
                "[format]\nquote-style = \"single\"\n",
            )
            .expect("write");
            let files = [("a.py", "x = 'q'\n"), ("sub/b.py", "x = \"q\"\n")];
            let out = match run(&argv, root, &files, false, Duration::from_secs(30)) {
                Ran::Done(Out::Formatted(f)) => f,
                _ => panic!("the batch run failed"),
            };
            assert_eq!(
                out,
                vec![
                    ("a.py".to_string(), "x = \"q\"\n".to_string()),
                    ("sub/b.py".to_string(), "x = 'q'\n".to_string())
                ]
            );
        }
    }
}

pub(super) mod output {
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

    use crate::checks::parse::{ParseError, RawFinding, Severity, error, severity_word};

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
    pub(crate) fn ruff_json(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
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
            let found = ruff_json(include_str!("../parse/testdata/ruff-violation.txt")).unwrap();
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
            let found = ruff_json(include_str!("../parse/testdata/ruff-syntax.txt")).unwrap();
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
            let found = ruff_json(include_str!("../parse/testdata/ruff-stdin.txt")).unwrap();
            assert_eq!(found.len(), 1);
            assert_eq!(found[0].path, "/tmp/pg/py/pkg/new.py");
            assert_eq!(found[0].rule, "F401");
            assert_eq!((found[0].line, found[0].column), (1, 8));
        }

        #[test]
        fn missing_file_is_an_e902_finding() {
            let found = ruff_json(include_str!("../parse/testdata/ruff-missing.txt")).unwrap();
            assert_eq!(found.len(), 1);
            assert_eq!(found[0].rule, "E902");
            assert_eq!(found[0].path, "/tmp/pg/py/pkg/missing.py");
            assert!(found[0].message.contains("No such file"));
        }

        #[test]
        fn clean_run_is_an_empty_array() {
            assert_eq!(
                ruff_json(include_str!("../parse/testdata/ruff-clean.txt")),
                Ok(vec![])
            );
        }

        #[test]
        fn empty_garbage_and_truncated_output_are_errors() {
            assert!(ruff_json("").unwrap_err().0.contains("empty output"));
            assert!(ruff_json("All checks passed!\n").is_err());
            let full = include_str!("../parse/testdata/ruff-violation.txt");
            let err = ruff_json(&full[..full.len() / 2]).unwrap_err();
            assert!(err.0.starts_with("ruff: bad JSON"), "{err}");
            assert!(ruff_json(r#"[{"code":"E1"}]"#).is_err());
        }

        /// On every recording and its truncations (every tool's): an `Ok` or an `Err`, never a
        /// panic.
        #[test]
        fn never_panics_on_any_recording_or_truncation() {
            crate::checks::parse::recordings::each_prefix(|s| {
                let _ = ruff_json(s);
            });
        }
    }
}
