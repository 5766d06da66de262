//! Running biome (format and lint), oxlint, black, flake8 and xo on patched text, one function
//! per checker, each returning a [`Ran`] with findings on repository paths or the formatted text.
//!
//! Every function takes the program's argv (already resolved), the directory the tool runs in
//! (`cwd`: where the project's configuration lives, inside the repository), the file(s) as
//! [`Source`]s, extra arguments (a pre-commit hook's `args:`) and a timeout. How each sees the
//! patched text without the user's working tree being touched:
//! - black, flake8, xo and `biome format` read it on stdin, told the file's path so that
//!   configuration, excludes and per-file ignores apply as for the file on disk;
//! - biome's linter and oxlint have no usable stdin mode (biome `check`/`lint` on stdin only say
//!   "the contents aren't fixed"; oxlint has none): they lint a [`ScratchTree`] in the caller's
//!   scratch directory (biome: never one inside `.git`, where its scanner sees no nested
//!   configuration), one process per batch, findings mapped back to repository paths;
//! - xo writes caches and, for TypeScript, a copy of the input under the project's
//!   `node_modules/.cache`: `CACHE_DIR` sends that into the scratch directory (see [`xo`]).
//!
//! Extra arguments that would change what the tool prints (`--check` for black, `-q` for flake8,
//! `--reporter` for xo…) are dropped, since the output must stay the one that is parsed; this
//! module's own output options come after the extra ones where the tool lets the last one win.
//! A missing program is [`Ran::Missing`] (through [`tools::ran`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::finding::RawFinding;
use super::parse;
use super::scratch_tree::ScratchTree;
use super::tools::{self, Ran, first_lines};
use crate::runner::{Cmd, Output};

/// One file to check.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// Repository-relative, `/`-separated: the path findings are reported on.
    pub rel: &'a str,
    /// Absolute path in the working tree (it may not exist yet, for a created file).
    pub real: &'a Path,
    /// The content to check (the patched text, or the original one for a baseline).
    pub text: &'a str,
}

/// An option to drop from the extra arguments; `value`: it takes the next argument unless given
/// as `--opt=value`.
struct Strip {
    name: &'static str,
    value: bool,
}

const fn flag(name: &'static str) -> Strip {
    Strip { name, value: false }
}

const fn with_value(name: &'static str) -> Strip {
    Strip { name, value: true }
}

fn kept(extra: &[String], drop: &[Strip]) -> Vec<OsString> {
    let mut out = Vec::with_capacity(extra.len());
    let mut it = extra.iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, _)) if n.starts_with("--") => (n, true),
            _ => (a.as_str(), false),
        };
        match drop.iter().find(|d| d.name == name) {
            Some(d) => {
                if d.value && !inline {
                    it.next();
                }
            }
            None => out.push(OsString::from(a)),
        }
    }
    out
}

/// Runs the tool; `Err` is the [`Ran`] for a run with no output (not installed, timed out, could
/// not start).
fn run<T>(
    argv: &[OsString],
    cwd: &Path,
    args: Vec<OsString>,
    stdin: Option<&str>,
    env: &[(&str, &Path)],
    timeout: Duration,
) -> Result<Output, Ran<T>> {
    let Some((program, pre)) = argv.split_first() else {
        return Err(Ran::Error("empty command".into()));
    };
    let mut cmd = Cmd::new(program.clone(), cwd)
        .args(pre.iter().cloned())
        .args(args)
        .timeout(timeout);
    if let Some(text) = stdin {
        cmd = cmd.stdin(text.as_bytes().to_vec());
    }
    for (k, v) in env {
        cmd = cmd.env(*k, *v);
    }
    tools::ran(cmd.run())
}

/// `path` relative to `base` when below it, else as is.
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    path.strip_prefix(base)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

/// biome's complaint, from its framed stderr: the `×` lines (the reason, then "Biome exited
/// because …"), without the frame.
fn biome_complaint(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.trim().strip_prefix('×'))
        .map(str::trim)
        .filter(|l| !l.starts_with("Some errors were emitted"))
        .take(3)
        .collect();
    if lines.is_empty() {
        first_lines(stderr)
    } else {
        lines.join(" | ")
    }
}

/// A Python tool's complaint: the exception line of a traceback, else the first lines.
fn python_complaint(stderr: &str) -> String {
    if stderr.contains("Traceback (most recent call last)")
        && let Some(last) = stderr.lines().rev().find(|l| !l.trim().is_empty())
    {
        return last.trim().to_string();
    }
    first_lines(stderr)
}

/// A node tool's complaint: the `…Error: message` lines of its stack trace (an AggregateError
/// names its cause on a later one), else the first lines.
fn node_complaint(stderr: &str) -> String {
    let errors: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.split_once(": ").is_some_and(|(head, _)| {
                head.ends_with("Error") && head.chars().all(|c| c.is_ascii_alphanumeric())
            })
        })
        .take(2)
        .collect();
    if errors.is_empty() {
        first_lines(stderr)
    } else {
        errors.join(" | ")
    }
}

/// `biome format --stdin-file-path=<path relative to cwd>`: the formatted text (rc 0 whether or
/// not it changed). A path biome ignores, or a file kind it does not format, is echoed with "The
/// content was not formatted because …" on stderr: [`Ran::Skipped`]. A syntax error (rc 1, no
/// output) is an error.
pub fn biome_format(
    argv: &[OsString],
    cwd: &Path,
    file: &Source,
    extra: &[String],
    timeout: Duration,
) -> Ran<String> {
    let mut args: Vec<OsString> = vec!["format".into(), "--colors=off".into()];
    args.extend(kept(
        extra,
        &[
            flag("--write"),
            flag("--fix"),
            with_value("--stdin-file-path"),
            with_value("--reporter"),
        ],
    ));
    let mut path = OsString::from("--stdin-file-path=");
    path.push(relative_to(file.real, cwd));
    args.push(path);
    let out = match run(argv, cwd, args, Some(file.text), &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stderr = out.stderr_str();
    if let Some(line) = stderr
        .lines()
        .find(|l| l.contains("The content was not formatted because"))
    {
        return Ran::Skipped(line.trim().to_string());
    }
    match out.code {
        Some(0) => Ran::Done(out.stdout_str()),
        _ => Ran::Error(biome_complaint(&stderr)),
    }
}

/// biome's linter and assist (`biome check` with the formatter off, the formatter being the
/// other checker) on a batch, in a [`ScratchTree`] under `scratch` (under the system temporary
/// directory if `scratch` is inside a `.git` directory), run from `cwd`'s place in
/// it. Findings: categories `lint/…`, `assist/…`, `parse` (syntax errors), on repository paths;
/// files biome's configuration ignores are dropped by biome without a word.
pub fn biome_lint(
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
    let out = match run(argv, &tool_cwd, args, None, &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stdout = out.stdout_str();
    if !matches!(out.code, Some(0 | 1)) || stdout.trim().is_empty() {
        return Ran::Error(tree.unmask(&biome_complaint(&out.stderr_str()), repo_root));
    }
    match parse::biome::biome_json(&stdout) {
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

/// `oxlint --format json` on a batch, in a [`ScratchTree`] under `scratch` (oxlint finds each
/// file's nearest `.oxlintrc.json` from the file's own path, so the tree carries them), run from
/// `cwd`'s place in it; findings on repository paths.
pub fn oxlint(
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
    let out = match run(argv, &tool_cwd, args, None, &[], timeout) {
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
    match parse::oxlint::oxlint_json(&out.stdout_str()) {
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

/// `black -q --stdin-filename <real path> -`: the formatted source on stdout (rc 0). rc 123 is a
/// syntax error, reported with black's `error: cannot parse: …` line; other failures (a bad
/// `[tool.black]`, rc 1 or 2) with black's message or a traceback's last line. A file the
/// configuration force-excludes is echoed unchanged, which reads as "already formatted".
pub fn black(
    argv: &[OsString],
    cwd: &Path,
    file: &Source,
    extra: &[String],
    timeout: Duration,
) -> Ran<String> {
    let mut args: Vec<OsString> = vec!["-q".into()];
    args.extend(kept(
        extra,
        &[
            flag("--check"),
            flag("--diff"),
            flag("--color"),
            flag("--no-color"),
            flag("-v"),
            flag("--verbose"),
            with_value("--stdin-filename"),
            with_value("-c"),
            with_value("--code"),
        ],
    ));
    args.push("--stdin-filename".into());
    args.push(file.real.as_os_str().to_owned());
    args.push("-".into());
    let out = match run(argv, cwd, args, Some(file.text), &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stderr = out.stderr_str();
    match out.code {
        Some(0) if !stderr.contains("Traceback (most recent call last)") => {
            Ran::Done(out.stdout_str())
        }
        Some(123) => Ran::Error(
            stderr
                .lines()
                .find(|l| l.starts_with("error: cannot "))
                .map_or_else(|| python_complaint(&stderr), |l| l.trim().to_string()),
        ),
        _ => Ran::Error(python_complaint(&stderr)),
    }
}

/// `flake8 --stdin-display-name <path relative to cwd> -`, run in `cwd` (flake8 reads
/// `.flake8`/`setup.cfg`/`tox.ini` from the working directory, and matches `exclude` and
/// `per-file-ignores` against the display name). rc 1 with findings; rc 1 with none (a
/// traceback from a bad configuration value) is an error.
pub fn flake8(
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
    let out = match run(argv, cwd, args, Some(file.text), &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stderr = out.stderr_str();
    if !matches!(out.code, Some(0 | 1)) || stderr.contains("Traceback (most recent call last)") {
        return Ran::Error(python_complaint(&stderr));
    }
    match parse::flake8::flake8_text(&out.stdout_str()) {
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
pub fn xo(
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
    let out = match run(
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
    match parse::xo::xo_json(&stdout) {
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

#[cfg(test)]
#[path = "runners_tests.rs"]
mod tests;
