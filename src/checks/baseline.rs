//! Baseline results (a checker's findings on the original content), cached by content.
//!
//! The key is the checker, the path (rules can depend on it) and the original bytes, so an
//! unchanged file is never linted twice as a baseline, across runs; any change to the file makes
//! a new key. Entries live in `<git dir>/patchgate/cache/baseline/` (at most 4,096: each package
//! run prunes the oldest); a corrupt or missing entry is simply recomputed. (A change of the
//! checker's configuration is not part of the key: after one, `rm -r .git/patchgate/cache`
//! forgets the old results.) A package checker keeps its runs here too
//! (`checks::exec::package::Remembered`). An entry may hold the findings of some rules only
//! (eslint's original checked with the rules the patched text broke): it says which, and only
//! [`get_for`] reads it, for patched findings of those rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
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

/// A baseline of some rules only (a linter told to run just the rules the patched text broke):
/// it holds every finding of those rules and none of the others. [`get`] does not read it (a
/// list is a whole baseline, this is not one).
#[derive(Serialize, Deserialize)]
struct OfRules {
    rules: BTreeSet<String>,
    findings: Vec<RawFinding>,
}

/// What the cache knows of a file's baseline.
pub enum Known {
    /// Every rule's findings.
    All,
    /// The findings of these rules only.
    Rules(BTreeSet<String>),
}

/// What the cache holds for `rel`'s original `before`, if anything.
pub fn known(git_dir: &Path, checker: &str, rel: &str, before: &[u8]) -> Option<Known> {
    let bytes = std::fs::read(entry(git_dir, checker, rel, before)).ok()?;
    if serde_json::from_slice::<Vec<RawFinding>>(&bytes).is_ok() {
        return Some(Known::All);
    }
    let of: OfRules = serde_json::from_slice(&bytes).ok()?;
    Some(Known::Rules(of.rules))
}

/// The cached baseline of `rel`'s original `before` as far as patched findings of `rules` need
/// it: a whole one, or one of rules that include these (a comparison is rule by rule, so the
/// findings of other rules could only ever match nothing).
pub fn get_for<'r>(
    git_dir: &Path,
    checker: &str,
    rel: &str,
    before: &[u8],
    mut rules: impl Iterator<Item = &'r str>,
) -> Option<Vec<RawFinding>> {
    let bytes = std::fs::read(entry(git_dir, checker, rel, before)).ok()?;
    if let Ok(all) = serde_json::from_slice::<Vec<RawFinding>>(&bytes) {
        return Some(all);
    }
    let of: OfRules = serde_json::from_slice(&bytes).ok()?;
    rules.all(|r| of.rules.contains(r)).then_some(of.findings)
}

/// [`put`] for a baseline of `rules` only.
pub fn put_rules(
    git_dir: &Path,
    checker: &str,
    rel: &str,
    before: &[u8],
    rules: BTreeSet<String>,
    findings: Vec<RawFinding>,
) {
    write(git_dir, checker, rel, before, &OfRules { rules, findings });
}

/// Entries kept in the cache: a package run prunes it to three quarters of this (a file's
/// baseline, written much more often, does not read the folder).
const MAX_ENTRIES: usize = 4096;

/// Prunes the cache to its most recent entries (see `MAX_ENTRIES`).
pub fn prune(git_dir: &Path) {
    crate::fs::prune_cache(&crate::fs::layout::baseline_cache(git_dir), MAX_ENTRIES);
}

pub fn put(git_dir: &Path, checker: &str, rel: &str, before: &[u8], findings: &[RawFinding]) {
    write(git_dir, checker, rel, before, &findings);
}

fn write(git_dir: &Path, checker: &str, rel: &str, before: &[u8], value: &impl Serialize) {
    let path = entry(git_dir, checker, rel, before);
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(text) = serde_json::to_vec(value)
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
