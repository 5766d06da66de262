//! Verify: the project's own build, test and typecheck commands on the patched state, judged
//! against the same commands on the original state.
//!
//! - [`run`]: the driver (each project's steps in its mirror, then the baselines they need);
//! - [`plan`]: the command of each step per language, as the project configures it;
//! - [`execute`]: running a step and reading its failures;
//! - [`baseline`]: which failures were already there (the cache, the comparison, HEAD's state);
//! - [`parse`]: each tool's output; [`hints`]: what to do about common errors.

pub mod baseline;
pub mod execute;
pub mod hints;
pub mod parse;
pub mod plan;
pub mod run;

use serde::{Deserialize, Serialize};

/// One failure a verify step found: a failing test, a compiler or type error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The test's full name, or the diagnostic's code (`E0425`, `TS2304`), or "" when none.
    pub name: String,
    /// Repository-relative or tool-relative path, as the tool printed it.
    pub file: Option<String>,
    pub line: Option<usize>,
    pub message: String,
    /// Whether the failure is the patch's: `false` when the same step on the original state
    /// already had it (the same test failing; the same error, code and message at the
    /// corresponding line), and, when that baseline could not be had, when it is outside the
    /// patched files. Only new failures block `apply`. (`patchgate verify`: new since HEAD.)
    pub new: bool,
}
