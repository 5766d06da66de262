//! Baseline results (a checker's findings on the original content), cached by content.
//!
//! The key is the checker, the path (rules can depend on it) and the original bytes, so an
//! unchanged file is never linted twice as a baseline, across runs; any change to the file makes
//! a new key. Entries live in `<git dir>/patchgate/cache/baseline/` (at most 4,096: each package
//! run prunes the oldest); a corrupt or missing entry is simply recomputed. (A change of the
//! checker's configuration is not part of the key: after one, `rm -r .git/patchgate/cache`
//! forgets the old results.) A package checker keeps its runs here too
//! (`checks::exec::package::Remembered`).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::checker::FileOut;
use super::finding::{RawFinding, Severity};

fn entry(git_dir: &Path, checker: &str, rel: &str, before: &[u8]) -> PathBuf {
    let mut h = Sha256::new();
    for part in [checker.as_bytes(), rel.as_bytes(), before] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    let hex = format!("{:x}", h.finalize());
    crate::fs::layout::baseline_cache(git_dir).join(format!("{hex}.json"))
}

pub fn get(git_dir: &Path, checker: &str, rel: &str, before: &[u8]) -> Option<Vec<RawFinding>> {
    let bytes = std::fs::read(entry(git_dir, checker, rel, before)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Entries kept in the cache: a package run prunes it to three quarters of this (a file's
/// baseline, written much more often, does not read the folder).
const MAX_ENTRIES: usize = 4096;

/// Prunes the cache to its most recent entries (see [`MAX_ENTRIES`]).
pub fn prune(git_dir: &Path) {
    crate::fs::prune_cache(&crate::fs::layout::baseline_cache(git_dir), MAX_ENTRIES);
}

pub fn put(git_dir: &Path, checker: &str, rel: &str, before: &[u8], findings: &[RawFinding]) {
    let path = entry(git_dir, checker, rel, before);
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(text) = serde_json::to_vec(findings)
    {
        // A cache: a lost write only costs a re-run next time.
        let _ = crate::fs::atomic_write(&path, &text, Some(0o644));
    }
}

/// What a checker's verdict on the original text `before` of `rel` gives as its baseline: a
/// linter's findings, or the original lines a formatter wanted to rewrite (as findings of rule
/// `format`); `None` without a verdict (skipped, failed: everything then counts as new).
pub fn of(rel: &str, before: &str, out: FileOut) -> Option<Vec<RawFinding>> {
    match out {
        FileOut::Findings(f) => Some(f),
        FileOut::Formatted(f) => Some(
            super::gate::unformatted_lines(before, &f)
                .into_iter()
                .map(|line| RawFinding {
                    path: rel.to_string(),
                    line,
                    column: 0,
                    rule: "format".into(),
                    severity: Severity::Error,
                    message: String::new(),
                })
                .collect(),
        ),
        FileOut::Skipped(_) | FileOut::Error(_) => None,
    }
}
