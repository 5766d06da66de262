//! What a checker reports, in one shape for every tool.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// A finding as a tool printed it: the path is the tool's own spelling (absolute, or relative to
/// the directory it ran in), to be mapped back to a repository path by the caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawFinding {
    pub path: String,
    /// 1-based; 0 when the tool gives no line (a whole-file finding).
    pub line: usize,
    /// 1-based; 0 when the tool gives no column.
    pub column: usize,
    pub rule: String,
    pub severity: Severity,
    pub message: String,
}

/// A finding on a file of the patch, and whether the patch introduced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub line: usize,
    pub column: usize,
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    pub new: bool,
}

/// Why a tool's output could not be read as findings (the checker's status becomes `error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
