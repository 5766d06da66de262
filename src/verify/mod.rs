//! Verify: the project's own build, test and typecheck commands on the patched state, judged
//! against the same commands on the original state.
//!
//! This module holds the types (the options, what is verified, the reports); the driver runs
//! each project in three steps:
//! - [`run`]: the driver, and the steps on the verified state, then the baselines they need;
//! - `prepare`: the project's mirror with the verified state laid over it, its toolchain ready;
//! - `judge`: each step's failures marked new or old, its status and note, and the hints;
//! - [`plan`]: the command of each step per language, as the project configures it;
//! - [`execute`]: running a step and reading its failures;
//! - [`baseline`]: which failures were already there (the cache, the comparison, HEAD's state);
//! - [`parse`]: each tool's output; [`hints`]: what to do about common errors.

pub mod baseline;
pub mod execute;
pub mod hints;
mod judge;
pub mod parse;
pub mod plan;
mod prepare;
pub mod run;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::project::config::Config;
use execute::StepRun;
use plan::Plan;

pub use crate::project::mirror::Overlay;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Build,
    Test,
    Typecheck,
}

impl Step {
    pub fn parse_list(s: &str) -> Result<Vec<Step>, String> {
        s.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| match x {
                "build" => Ok(Step::Build),
                "test" => Ok(Step::Test),
                "typecheck" => Ok(Step::Typecheck),
                other => Err(format!(
                    "unknown verify step `{other}` (use build, test, typecheck)"
                )),
            })
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Step::Build => "build",
            Step::Test => "test",
            Step::Typecheck => "typecheck",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Missing,
    Error,
    Timeout,
}

/// Where a step's baseline came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineUse {
    /// The same step on the same original state ran before.
    Cached,
    /// Run on the original state now.
    Ran,
    /// The verified state is the original (nothing changed in the project): its own run.
    Same,
    /// None could be had; the note says why.
    Unavailable,
}

/// One step on one project (the `verify[]` entries of the report).
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub step: Step,
    /// The project's directory, relative to the repository root (`.` for the root).
    pub project: String,
    pub command: String,
    pub status: Status,
    /// New failures first.
    pub failures: Vec<Failure>,
    pub hints: Vec<String>,
    /// The step's time, its baseline's run included.
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Present when the step failed on the verified state and was compared with a baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineUse>,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub steps: Vec<Step>,
    pub require_tools: bool,
    /// Per step; default 10 minutes (or `[verify] timeout`).
    pub timeout: Option<Duration>,
    /// Never download dependencies (`--offline`).
    pub offline: bool,
}

/// A file whose content differs between the original state and the verified one (`None`:
/// absent there).
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    pub rel: &'a str,
    pub before: Option<&'a [u8]>,
    pub after: Option<&'a [u8]>,
}

/// What is verified, and what it is judged against (see the module doc).
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// The working tree with these changes laid over it; the working tree is the baseline.
    Patch(&'a [Change<'a>]),
    /// `apply --branch`: the branch's state, as these changes over the working tree: the patch's
    /// (base → patched) and every other file the branch holds otherwise than the working tree
    /// (the same content before and after, or absent in both); the branch's base is the baseline.
    Branch(&'a [Change<'a>]),
    /// The working tree as it is; HEAD is the baseline (these changes: HEAD → working tree),
    /// `None` without a HEAD commit.
    Worktree(Option<&'a [Change<'a>]>),
}

impl<'a> Subject<'a> {
    pub(crate) fn changes(&self) -> &'a [Change<'a>] {
        match *self {
            Subject::Patch(c) | Subject::Branch(c) | Subject::Worktree(Some(c)) => c,
            Subject::Worktree(None) => &[],
        }
    }
}

/// What every project of a run shares.
struct Ctx<'a> {
    repo_root: &'a Path,
    git_dir: &'a Path,
    config: &'a Config,
    subject: Subject<'a>,
    timeout: Duration,
    offline: bool,
}

/// A step run on the verified state, and what its judgement needs.
struct Done {
    step: Step,
    plan: Plan,
    run: StepRun,
    /// The baseline's failures (or why there are none) and where they came from.
    baseline: Option<(Result<Vec<execute::Found>, String>, BaselineUse)>,
    baseline_ms: u64,
}
