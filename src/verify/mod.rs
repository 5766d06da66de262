//! Verify: the project's own build, test and typecheck commands on the patched state.

pub mod hints;
pub mod parse;
pub mod run;

use serde::Serialize;

/// One failure a verify step found: a failing test, a compiler or type error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The test's full name, or the diagnostic's code (`E0425`, `TS2304`), or "" when none.
    pub name: String,
    /// Repository-relative or tool-relative path, as the tool printed it.
    pub file: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}
