//! Text mechanics shared by the pipeline's stages: what two versions of a file differ by.
//!
//! Owns the unified diff every report format shows and the checks hand to an agent
//! ([`unified_diff`]). Knows nothing of patches, plans or checkers: it takes bytes and names.

mod diff;

pub use diff::{Changed, unified_diff, unified_diff_within};
