//! patchgate: apply a batch of multi-file edits to a git repository all or nothing.
//!
//! The modules follow the pipeline a patch goes through (docs/architecture.md: imports only go
//! down). Under them all, the ground floor: [`fs`] (every working-tree file operation, resolved
//! from the repository root without following symlinks; atomic writes; `fs::layout`, every path of
//! patchgate's own state), [`repo`] (the repository and the path rules of a patch), [`text`]
//! (unified diffs), [`runner`], [`error`], [`fault`] (test-only crash points), [`malloc`] (the
//! allocator's settings) and [`timing`]:
//! - [`patch`]: the input formats (YAML/JSON edits, codex `*** Begin Patch`, Aider
//!   SEARCH/REPLACE, unified diffs) read into one list of typed edits;
//! - [`plan`]: every edit matched and applied in memory; misses diagnosed;
//! - [`project`]: what a project is and which tools it uses (shared by the checks and verify);
//! - [`syntax`]: the built-in parsers (tree-sitter and document parsers): syntax errors the
//!   patch introduced, definitions and uses;
//! - [`checks`], [`verify`]: the gate over the patched state;
//! - [`txn`]: the verified plan written back atomically;
//! - [`report`]: the outcome as JSON, markdown, SARIF or human diagnostics, and the exit code it
//!   implies ([`Report::exit`]);
//! - [`ops`]: the operations (apply, check, detect, verify, undo, recover), each a `run` from
//!   one request type to its outcome; the request derives both front ends' arguments;
//! - [`cli`], [`mcp`]: the command line and the Model Context Protocol server, thin adapters
//!   over [`ops`] that never call each other;
//! - [`panics`]: a bug contained to the checker or the command it happened in;
//! - [`fuzz`]: the fuzz targets' bodies and their invariants (run by `fuzz/` and by `cargo test`).

pub mod checks;
pub mod cli;
pub mod error;
pub mod exit;
pub mod fault;
pub mod fdtable;
pub mod fs;
pub mod fuzz;
pub mod malloc;
pub mod mcp;
pub mod ops;
pub mod panics;
pub mod par;
pub mod patch;
pub mod plan;
pub mod project;
pub mod repo;
pub mod report;
pub mod runner;
pub mod syntax;
#[cfg(test)]
pub(crate) mod testgen;
pub mod text;
pub mod timing;
pub mod txn;
pub mod verify;

pub use error::{Error, Exit, Kind};
pub use ops::Context;
/// Applies a parsed patch ([`patch::parse_input`]) as `patchgate apply` does.
pub use ops::apply::{Request as ApplyRequest, run as apply};
/// Runs the checkers on existing files as `patchgate check` does.
pub use ops::check::{Request as CheckRequest, run as check};
pub use report::{Report, Status};
