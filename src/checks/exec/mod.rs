//! What running a checker needs beyond the checker itself, shared by the checkers' own files
//! (`checks::checker::<tool>`): starting a tool on patched text and reading why it produced
//! nothing, and the machinery some checkers share:
//! - [`scratch_tree`]: a throwaway tree that looks like the repository, for tools that read files
//!   only (no usable stdin mode);
//! - [`node`] and [`node_host`]: the bridge that runs a node tool's API on in-memory text, one
//!   process per batch (kept warm for the MCP server);
//! - [`package`]: whole-package tools in the mirror (the cargo workspace, the locks serializing
//!   cargo and go, the overlays of a call).
//!
//! Nothing here knows a checker by name: each checker's file says how its tool is invoked,
//! batched and read. A missing program is [`Ran::Missing`] (through `ran`). Extra arguments a
//! project gives a tool (a pre-commit hook's `args:`) that would change what it prints are
//! dropped by the checker (`kept`), since the output must stay the one that is parsed; a
//! checker's own output options come after the extra ones where the tool lets the last one win.

pub mod node;
pub mod node_host;
pub mod package;
pub mod scratch_tree;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::runner::{Cmd, Output, RunError};

pub use crate::project::tools::Ran;

/// A checker process's outcome as a [`Ran`]: its output, or why there is none (timed out, not
/// installed, could not start).
pub(crate) fn ran<T>(result: Result<Output, RunError>) -> Result<Output, Ran<T>> {
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

/// The first lines of a tool's complaint, for a one-line note.
pub(crate) fn first_lines(s: &str) -> String {
    let t: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(3).collect();
    t.join(" | ")
}

/// Runs `argv` in `cwd` with `stdin`; `Err` is the [`Ran`] for a run with no output.
pub(crate) fn run_stdin(
    argv: &[OsString],
    cwd: &Path,
    stdin: &str,
    timeout: Duration,
) -> Result<Output, Ran<()>> {
    let cmd = Cmd::new(argv[0].clone(), cwd)
        .timeout(timeout)
        .stdin(stdin.as_bytes().to_vec())
        .args(argv[1..].iter().cloned());
    ran(cmd.run())
}

/// Runs the tool; `Err` is the [`Ran`] for a run with no output (not installed, timed out, could
/// not start).
pub(crate) fn run_tool<T>(
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
    ran(cmd.run())
}

/// The nearest existing directory of a path that may not exist yet.
pub(crate) fn existing_dir(p: &Path) -> PathBuf {
    let mut d = p.parent();
    while let Some(x) = d {
        if x.is_dir() {
            return x.to_path_buf();
        }
        d = x.parent();
    }
    PathBuf::from("/")
}

/// `path` relative to `base` when below it, else as is.
pub(crate) fn relative_to(path: &Path, base: &Path) -> PathBuf {
    path.strip_prefix(base)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

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
pub(crate) struct Strip {
    pub(crate) name: &'static str,
    pub(crate) value: bool,
}

pub(crate) const fn flag(name: &'static str) -> Strip {
    Strip { name, value: false }
}

pub(crate) const fn with_value(name: &'static str) -> Strip {
    Strip { name, value: true }
}

/// The extra arguments without the options in `drop` (see [`Strip`]).
pub(crate) fn kept(extra: &[String], drop: &[Strip]) -> Vec<OsString> {
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

/// A Python tool's complaint: the exception line of a traceback, else the first lines.
pub(crate) fn python_complaint(stderr: &str) -> String {
    if stderr.contains("Traceback (most recent call last)")
        && let Some(last) = stderr.lines().rev().find(|l| !l.trim().is_empty())
    {
        return last.trim().to_string();
    }
    first_lines(stderr)
}

/// A node tool's complaint: the `…Error: message` lines of its stack trace (an AggregateError
/// names its cause on a later one), else the first lines.
pub(crate) fn node_complaint(stderr: &str) -> String {
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
