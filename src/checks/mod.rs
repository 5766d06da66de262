//! Checks: the project's own linters and formatters, run on the patched content of the edited
//! files, in parallel, blaming only what the patch introduced (docs/checks.md).
//!
//! How each checker sees the patched content without the user's working tree being touched is
//! its own file's business (`checker::<tool>`: evidence, invocation, batching, output parsing);
//! docs/checks.md has the table. In short: stdin with the real path (rustfmt, gofmt, black,
//! flake8, xo, `biome format`), a scratch copy carrying the configuration (ruff, biome's linter,
//! oxlint), the node bridge over the tools' APIs (eslint, prettier), a mirror of the package with
//! the patch laid over it (clippy, go vet), and, for custom checkers (`.patchgate.toml`), the
//! patched files materialized in a scratch directory of patchgate's.
//!
//! Modules: `checker` (one file per checker, listed in one table), `config` (`.patchgate.toml`
//! read against the table), `select` (which checkers run on a file, and why), `exec` (what
//! running a checker needs: stdin runs, the scratch tree, the node bridge and its warm hosts,
//! whole-package runs in the mirror), `custom`, `parse` (output formats several callers read),
//! `finding` (the one shape of a finding), `references` (dangling references, built in),
//! `pairing` and `gate` (new vs old findings), `baseline` (cached original results), `run`
//! (jobs, timeouts, statuses, verdicts), `schedule` (the jobs' order and lanes: the external
//! tools' processes first, the built-in checks beside them).
//! What a project is lives in [`crate::project`]: which checkers its files show it uses
//! (`evidence`, reading the signals each checker declares), `.patchgate.toml`'s shape (`config`),
//! how a program is found (`tools`), and the worktree whole-package tools run in with its
//! dependencies and toolchain (`mirror`, `prepare`).

pub mod baseline;
pub mod checker;
pub mod config;
pub mod context;
pub mod custom;
pub mod exec;
pub mod finding;
pub mod gate;
pub mod imports;
pub mod pairing;
pub mod parse;
pub mod references;
pub mod run;
pub mod schedule;
pub mod select;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

pub use crate::project::config::Kind;
pub use context::Context;
pub use finding::Finding;

/// One file to check: where it really is, and its content before and after the patch.
#[derive(Debug, Clone)]
pub struct CheckFile {
    /// Repository-relative path.
    pub rel: String,
    /// Absolute path in the working tree (it may not exist yet, for a created file).
    pub real: PathBuf,
    /// The original content (`None`: the patch creates the file).
    pub before: Option<Arc<Vec<u8>>>,
    pub after: Arc<Vec<u8>>,
    /// The path the original content stood at, when the patch moved the file.
    pub from: Option<String>,
}

/// Which findings block.
// The same names serve `--gate` (clap) and the MCP server's `gate` argument (serde, schemars).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    /// Block only on findings the patch introduced.
    #[default]
    New,
    /// Block on every finding in the edited files.
    Any,
    /// Report, never block.
    Off,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub gate: Gate,
    pub fix: bool,
    pub require_tools: bool,
    /// Overrides every checker's timeout.
    pub timeout: Option<Duration>,
    /// Worker threads (`-j`); 0 = one per core.
    pub jobs: usize,
    /// `--checks LIST`: only these checkers (None = all that apply).
    pub only: Option<Vec<String>>,
    /// Show a progress bar on stderr (when it is a terminal) once checks take longer than a moment.
    pub progress: bool,
    /// Other files of the state under check whose content differs from the working tree, laid over
    /// the package mirrors too (`check --staged`: the index's version of files with unstaged
    /// changes, and untracked files as absent), so nothing unstaged leaks into the verdict;
    /// `apply --branch`: the branch's, made only if a check reads it.
    pub context: Context,
    /// `--offline`: never download a package checker's dependencies (`cargo fetch`,
    /// `go mod download`); missing ones make the checker `error` with a help.
    pub offline: bool,
}

/// A file of the state under check (path, content; `None`: absent) that the working tree lacks.
pub type ContextFile = (String, Option<Arc<Vec<u8>>>);

/// A file a change removes, with its original content.
pub type RemovedFile = (String, Arc<Vec<u8>>);

impl Default for Options {
    fn default() -> Self {
        Options {
            gate: Gate::New,
            fix: false,
            require_tools: false,
            timeout: None,
            jobs: 0,
            only: None,
            progress: false,
            context: Context::none(),
            offline: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Missing,
    Error,
    Timeout,
    Skipped,
}

/// One checker's verdict on one file (the `checks[]` entries of the report).
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub path: String,
    pub checker: String,
    pub kind: Kind,
    pub status: Status,
    pub findings: Vec<Finding>,
    pub diff: Option<String>,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What to run so the checker can run (with an `error` it could do nothing about).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The file is one the patch did not change (a package checker's or the references check's
    /// finding elsewhere, blamed on the patch); the reports' summaries count these apart.
    #[serde(skip)]
    pub untouched: bool,
}

impl serde::Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            Kind::Format => "format",
            Kind::Lint => "lint",
        })
    }
}

/// Everything the checks decided.
#[derive(Debug, Default)]
pub struct Outcome {
    pub reports: Vec<CheckReport>,
    /// With `--fix`: new content for files the formatters rewrote.
    pub fixed: Vec<(String, Vec<u8>)>,
    /// The gate's verdict: some check blocks the patch.
    pub blocked: bool,
}
