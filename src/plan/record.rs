//! The record of applied edits that makes re-runs no-ops.
//!
//! One line per applied edit, the hex SHA-256 of (operation, path, old, new, replace_all), in
//! `<git dir>/patchgate/applied`. A retry of the same patch finds its edits here and reports them
//! `already_applied` instead of `not_found`. Without a record entry a miss stays a miss even when
//! `new_string` is present: guessing would turn a stale `old_string` into a silent false success.
//!
//! The record is per working tree (a linked worktree has its own git dir), append-only, and trimmed
//! to the newest `KEEP` entries when it grows past twice that, so it never grows without bound.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::patch::Op;

const KEEP: usize = 20_000;

#[derive(Debug, Default)]
pub struct Record {
    path: Option<PathBuf>,
    seen: HashSet<String>,
    /// Whole patches: digest → the states (path → content hash) they left, newest last.
    patches: HashMap<String, Vec<PatchState>>,
    lines: usize,
}

/// What a whole patch left: every path it touched and the hash of its content (`None`: absent).
pub type PatchState = Vec<(String, Option<String>)>;

#[derive(Serialize, Deserialize)]
struct PatchLine {
    patch: String,
    files: PatchState,
}

impl Record {
    /// Loads the record of a git dir; a missing or unreadable record is an empty one (a record only
    /// ever turns a miss into `already_applied`, so losing it is safe).
    pub fn load(git_dir: &Path) -> Record {
        let path = crate::fs::layout::applied(git_dir);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut seen = HashSet::new();
        let mut patches: HashMap<String, Vec<PatchState>> = HashMap::new();
        // A line that is not one patchgate writes is ignored, never acted on (its paths would
        // be read by the planner).
        for line in text.lines().filter(|l| record_line(l).is_ok()) {
            if line.starts_with('{') {
                if let Ok(p) = serde_json::from_str::<PatchLine>(line) {
                    patches.entry(p.patch).or_default().push(p.files);
                }
            } else {
                seen.insert(line.to_string());
            }
        }
        Record {
            lines: text.lines().count(),
            path: Some(path),
            seen,
            patches,
        }
    }

    /// The states a whole patch left, each time it was applied.
    pub fn patch_states(&self, digest: &str) -> Option<&Vec<PatchState>> {
        self.patches.get(digest)
    }

    /// The record line for a whole patch.
    pub fn patch_line(digest: &str, files: &PatchState) -> String {
        serde_json::to_string(&PatchLine {
            patch: digest.to_string(),
            files: files.clone(),
        })
        .unwrap_or_default()
    }

    pub fn contains(&self, digest: &str) -> bool {
        self.seen.contains(digest)
    }

    /// Appends digests, and fsyncs: a record that lost entries would make a retry report
    /// `not_found` for edits that did land.
    pub fn append(&mut self, digests: &[String]) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let fresh: Vec<&String> = digests.iter().filter(|d| !self.seen.contains(*d)).collect();
        if fresh.is_empty() {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if self.lines + fresh.len() > 2 * KEEP {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let mut kept: Vec<&str> = text.lines().collect();
            let drop = kept.len().saturating_sub(KEEP);
            kept.drain(..drop);
            let mut out = kept.join("\n");
            for d in &fresh {
                out.push('\n');
                out.push_str(d);
            }
            out.push('\n');
            crate::fs::atomic_write(path, out.as_bytes(), None)?;
            self.lines = kept.len() + fresh.len();
        } else {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            let mut buf = String::new();
            for d in &fresh {
                buf.push_str(d);
                buf.push('\n');
            }
            f.write_all(buf.as_bytes())?;
            if crate::fs::fsync_enabled() {
                f.sync_data()?;
            }
            self.lines += fresh.len();
        }
        for d in fresh {
            if !d.starts_with('{') {
                self.seen.insert(d.clone());
            }
        }
        Ok(())
    }
}

/// The digest of a whole patch from its edits' digests, in order.
pub fn combine(parts: &[String]) -> String {
    let mut h = Sha256::new();
    h.update(b"patchgate-patch-v1");
    for p in parts {
        h.update(p.as_bytes());
        h.update(b"\n");
    }
    format!("{:x}", h.finalize())
}

/// The digest of one edit.
pub fn digest(path: &str, op: &Op) -> String {
    let mut h = Sha256::new();
    let mut field = |s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    field("patchgate-edit-v1");
    field(path);
    match op {
        Op::Replace(r) => {
            field("replace");
            field(&r.old);
            field(&r.new);
            field(if r.replace_all { "all" } else { "one" });
        }
        Op::Create { content } => {
            field("create");
            field(content);
        }
        Op::Delete => field("delete"),
        Op::Append { text, create } => {
            field(if *create {
                "append-or-create"
            } else {
                "append"
            });
            field(text);
        }
        Op::Move { to, replace } => {
            field("move");
            field(to);
            if let Some(r) = replace {
                field(&r.old);
                field(&r.new);
                field(if r.replace_all { "all" } else { "one" });
            }
        }
        Op::Mode { executable } => {
            field("mode");
            field(if *executable { "100755" } else { "100644" });
        }
        Op::Link { old, new } => {
            field("symlink");
            field(old.as_deref().unwrap_or("\0"));
            field(new.as_deref().unwrap_or("\0"));
        }
        Op::Copy { to } => {
            field("copy");
            field(to);
        }
        Op::Binary(b) => {
            field("binary");
            field(b.old_id.as_deref().unwrap_or("-"));
            field(b.new_id.as_deref().unwrap_or("-"));
        }
        Op::Insert(i) => {
            field("insert");
            field(&i.line.to_string());
            field(&i.text);
        }
    }
    format!("{:x}", h.finalize())
}

/// A line of the re-run record: an edit's digest, or a whole patch's state.
pub fn record_line(line: &str) -> Result<(), String> {
    if line.len() == 64 && line.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(());
    }
    #[derive(serde::Deserialize)]
    struct PatchLine {
        patch: String,
        files: Vec<(String, Option<String>)>,
    }
    let p: PatchLine = serde_json::from_str(line).map_err(|e| format!("not a record line: {e}"))?;
    if !(p.patch.len() == 64 && p.patch.bytes().all(|b| b.is_ascii_hexdigit())) {
        return Err("a patch digest is not 64 hex digits".into());
    }
    for (path, _) in &p.files {
        crate::repo::rel_path(path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::Replace;

    #[test]
    fn digests_distinguish_fields() {
        let r = |old: &str, new: &str| {
            Op::Replace(Replace {
                old: old.into(),
                new: new.into(),
                replace_all: false,
                window: None,
                within: None,
                near: None,
                whole_lines: false,
                fallbacks: Vec::new(),
            })
        };
        assert_ne!(digest("a", &r("ab", "c")), digest("a", &r("a", "bc")));
        assert_ne!(digest("a", &r("x", "y")), digest("b", &r("x", "y")));
        assert_eq!(digest("a", &r("x", "y")), digest("a", &r("x", "y")));
    }

    #[test]
    fn append_and_reload() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (abc, def) = ("abc".repeat(21) + "a", "def".repeat(21) + "d");
        let mut rec = Record::load(dir.path());
        assert!(!rec.contains(&abc));
        rec.append(&[abc.clone(), def.clone(), "../forged".into()])
            .expect("append");
        let rec = Record::load(dir.path());
        assert!(rec.contains(&abc) && rec.contains(&def));
        assert!(
            !rec.contains("../forged"),
            "a line patchgate never writes is ignored"
        );
    }
}
