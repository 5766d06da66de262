//! Planning: every edit of a patch checked and applied in memory, nothing written.
//!
//! The planner holds a small virtual file system: each path the patch touches is read once from the
//! working tree into a slot, and edits apply to the slots in order, so later edits of a file see the
//! result of earlier ones, and after a `move_to` the file is found under its new name. Every edit is
//! tried, even after one failed, so the report shows every problem of the batch at once.
//!
//! Invariants:
//! - Nothing here writes to disk. The output is a [`Plan`]: per-edit outcomes, and the exact before
//!   and after state of every path that changes (the before state is what write-back re-verifies).
//! - An edit applies only on an exact match (line endings aside, see [`doc`]) unless `lenient` is
//!   set, and then only on a *unique* whitespace/unicode match; a fuzzy candidate is never applied.
//! - `lines` are always the line numbers of the file as it was just before that edit.
//!
//! The rooms: [`model`] (the outcomes and the [`Plan`]), `vfs` (the files in memory, read once),
//! `planner` (the batch, edit by edit, and the net change per path), `batch` (a file's plain
//! replacements planned in one pass, with the same outcomes), `edits` and `diffops` (one
//! edit of each kind), `matching` (one replacement in one document, and a miss explained, with
//! `suggest`, `scope`, `whole` and `near`), [`doc`] (line endings and positions), [`record`] (what
//! was applied before, for a retry).

mod batch;
mod diffops;
pub mod doc;
mod edits;
mod matching;
pub mod model;
mod near;
mod planner;
pub mod record;
mod scope;
pub mod suggest;
mod vfs;
mod whole;

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use miette::SourceSpan;

use crate::patch::{Edit, Hunk, Op, Patch, Replace};
use crate::repo::{Resolved, Roots};
use doc::{TextDoc, fold_eol};
use record::Record;
use suggest::{CandidateKind, ChangeSource, RelaxedOutcome};
pub use suggest::{History, PastPatch};

pub use matching::*;
pub use model::*;
pub use planner::*;
pub use vfs::*;
