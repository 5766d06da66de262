//! Finding a checker's program, and the per-file tools that read the patched text on stdin:
//! `ruff format`, `ruff check`, `rustfmt`, `gofmt`.
//!
//! Programs are found by `project::tools::program` (one rule for every caller). Each tool gets the
//! file's real path (ruff's `--stdin-filename`, rustfmt's working directory) so the project's
//! configuration is discovered exactly as if the patched file were on disk.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::finding::RawFinding;
use super::parse;
use crate::project::detect::Project;
use crate::runner::{Cmd, Output, RunError};

pub use crate::project::tools::Ran;

/// A checker process's outcome as a [`Ran`]: its output, or why there is none (timed out, not
/// installed, could not start).
pub fn ran<T>(result: Result<Output, RunError>) -> Result<Output, Ran<T>> {
    match result {
        Ok(o) if o.timed_out => Err(Ran::Timeout),
        Ok(o) => Ok(o),
        Err(RunError::NotFound(p)) => Err(Ran::Missing(format!(
            "{} not found on PATH",
            p.to_string_lossy()
        ))),
        Err(e) => Err(Ran::Error(e.to_string())),
    }
}

fn run(argv: &[OsString], cwd: &Path, stdin: &str, timeout: Duration) -> Result<Output, Ran<()>> {
    let cmd = Cmd::new(argv[0].clone(), cwd)
        .timeout(timeout)
        .stdin(stdin.as_bytes().to_vec())
        .args(argv[1..].iter().cloned());
    ran(cmd.run())
}

/// The first lines of a tool's complaint, for a one-line note.
pub fn first_lines(s: &str) -> String {
    let t: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(3).collect();
    t.join(" | ")
}

/// The nearest existing directory of a path that may not exist yet.
fn existing_dir(p: &Path) -> PathBuf {
    let mut d = p.parent();
    while let Some(x) = d {
        if x.is_dir() {
            return x.to_path_buf();
        }
        d = x.parent();
    }
    PathBuf::from("/")
}

pub struct Invocation<'a> {
    pub argv: Vec<OsString>,
    pub project: &'a Project,
    pub real: &'a Path,
    pub timeout: Duration,
}

pub fn ruff_format(inv: &Invocation, text: &str) -> Ran<String> {
    let mut argv = inv.argv.clone();
    argv.extend(["format", "--force-exclude", "--stdin-filename"].map(OsString::from));
    argv.push(inv.real.as_os_str().to_owned());
    argv.push("-".into());
    let out = match run(&argv, &inv.project.root, text, inv.timeout) {
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

pub fn ruff_check(inv: &Invocation, text: &str) -> Ran<Vec<RawFinding>> {
    let mut argv = inv.argv.clone();
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
    argv.push(inv.real.as_os_str().to_owned());
    argv.push("-".into());
    let out = match run(&argv, &inv.project.root, text, inv.timeout) {
        Ok(o) => o,
        Err(r) => return r.relay(),
    };
    match out.code {
        Some(0) | Some(1) if out.stdout.iter().all(u8::is_ascii_whitespace) => {
            Ran::Skipped("excluded by the ruff configuration".into())
        }
        Some(0) | Some(1) => match parse::ruff::ruff_json(&out.stdout_str()) {
            Ok(f) => Ran::Done(f),
            Err(e) => Ran::Error(format!("unreadable ruff output: {e}")),
        },
        _ => Ran::Error(first_lines(&out.stderr_str())),
    }
}

/// The edition rustfmt must be told (it does not read Cargo.toml): the package's, following
/// `edition.workspace = true` to the workspace manifest; 2015 (cargo's default) when unset.
pub fn rust_edition(project_root: &Path) -> String {
    let read = |p: &Path| -> Option<toml::Table> { std::fs::read_to_string(p).ok()?.parse().ok() };
    let Some(manifest) = read(&project_root.join("Cargo.toml")) else {
        return "2015".into();
    };
    let edition = manifest.get("package").and_then(|p| p.get("edition"));
    match edition {
        Some(toml::Value::String(s)) => s.clone(),
        Some(toml::Value::Table(t))
            if t.get("workspace").and_then(|v| v.as_bool()) == Some(true) =>
        {
            let mut dir = project_root.parent();
            while let Some(d) = dir {
                if let Some(ws) = read(&d.join("Cargo.toml"))
                    && let Some(e) = ws
                        .get("workspace")
                        .and_then(|w| w.get("package"))
                        .and_then(|p| p.get("edition"))
                        .and_then(|e| e.as_str())
                {
                    return e.to_string();
                }
                dir = d.parent();
            }
            "2015".into()
        }
        _ => "2015".into(),
    }
}

pub fn rustfmt(inv: &Invocation, text: &str) -> Ran<String> {
    let mut argv = inv.argv.clone();
    argv.extend([
        "--edition".into(),
        rust_edition(&inv.project.root).into(),
        "--emit".into(),
        "stdout".into(),
    ]);
    argv.extend(["--color", "never"].map(OsString::from));
    // On stdin rustfmt reads its configuration from the working directory upward.
    let cwd = existing_dir(inv.real);
    let out = match run(&argv, &cwd, text, inv.timeout) {
        Ok(o) => o,
        Err(r) => return r.relay(),
    };
    match out.code {
        Some(0) => Ran::Done(out.stdout_str()),
        _ => Ran::Error(first_lines(&out.stderr_str())),
    }
}

pub fn gofmt(inv: &Invocation, text: &str) -> Ran<String> {
    let out = match run(&inv.argv, &inv.project.root, text, inv.timeout) {
        Ok(o) => o,
        Err(r) => return r.relay(),
    };
    match out.code {
        Some(0) => Ran::Done(out.stdout_str()),
        _ => Ran::Error(first_lines(&out.stderr_str())),
    }
}
