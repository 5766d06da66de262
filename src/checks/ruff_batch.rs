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
//! configuration that `extend`s a file outside what was copied, say), the caller falls back to one
//! run per file on stdin.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::finding::RawFinding;
use super::parse;
use super::tools::{Ran, first_lines};
use crate::runner::Cmd;

const CONFIGS: &[&str] = &["pyproject.toml", "ruff.toml", ".ruff.toml"];

/// `ruff format` (formatted texts, by repository path) or `ruff check` (findings with repository
/// paths) over `files` (repository path, text).
pub enum Out {
    Formatted(Vec<(String, String)>),
    Findings(Vec<RawFinding>),
}

pub fn run(
    argv: &[OsString],
    repo_root: &Path,
    files: &[(&str, &str)],
    lint: bool,
    timeout: Duration,
) -> Ran<Out> {
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
                "--",
            ]
            .map(OsString::from),
        );
    } else {
        args.extend(["format", "--force-exclude", "--quiet", "--"].map(OsString::from));
    }
    args.extend(files.iter().map(|(rel, _)| OsString::from(*rel)));
    let out = match super::tools::ran(
        Cmd::new(argv[0].clone(), &root)
            .args(args)
            .timeout(timeout)
            .run(),
    ) {
        Ok(o) => o,
        Err(why) => return why,
    };
    if !matches!(out.code, Some(0) | Some(1)) {
        return Ran::Error(first_lines(&out.stderr_str()));
    }
    if lint {
        let prefix = format!("{}/", root.display());
        match parse::ruff::ruff_json(&out.stdout_str()) {
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
            None if std::env::var("CI").as_deref() == Ok("true") => panic!("ruff is not on PATH"),
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
        std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"x\"\n").expect("write");
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
