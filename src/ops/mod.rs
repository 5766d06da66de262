//! The operations patchgate offers: [`apply`], [`check`], [`detect`], [`verify`], [`mod@undo`] and
//! [`recover`], each a `run` from one request to its outcome (a [`Report`](crate::report::Report),
//! or the operation's own result), with no knowledge of who asked.
//!
//! One request type per operation is the whole contract of its options: it derives the command
//! line's arguments (clap) and the MCP tool's input (serde, with the JSON Schema from schemars),
//! so a flag and a tool argument cannot drift apart. What only one front end has (the CLI's patch
//! file, `-C` and `--format`; MCP's inline patch and `repository`) stays in that adapter (`cli/`,
//! `mcp/`), which never imports the other.
//!
//! Invariant: nothing here prints to stdout (it is the MCP protocol's); notes go into the report.

pub mod apply;
mod branch_state;
pub mod check;
pub mod detect;
pub mod recover;
pub mod undo;
pub mod verify;

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// What an operation needs besides its request, which the adapters know and the request does not.
#[derive(Debug, Clone)]
pub struct Context {
    /// Where the repository is discovered from (`-C DIR`, or the MCP call's repository).
    pub dir: PathBuf,
    /// A progress bar on stderr when it is a terminal; never for a protocol server, whose
    /// stderr is the client's log.
    pub progress: bool,
    /// The report is printed as JSON (`--format json`, the MCP server's answers): its two large
    /// fields are then serialised while the transaction runs ([`crate::report::rendered`]), work
    /// that any other format would throw away.
    pub json: bool,
}

impl Context {
    /// The command line's context: `dir` (default `.`), with progress.
    pub fn at(dir: Option<&Path>) -> Context {
        Context {
            dir: dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            progress: true,
            json: false,
        }
    }

    /// `dir` made absolute against the current directory (relative paths in a request are
    /// taken from it).
    fn base(&self) -> PathBuf {
        if self.dir.is_absolute() {
            self.dir.clone()
        } else {
            std::env::current_dir()
                .unwrap_or_else(|_| PathBuf::from("."))
                .join(&self.dir)
        }
    }
}

/// An MCP argument given as `null` means its default, as leaving it out does (clients send
/// `null` for arguments they do not set); the schema says so with `Option<T>`.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `path` taken from `base` when relative.
fn under(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}
