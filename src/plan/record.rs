//! The record of applied edits that makes re-runs no-ops.
//!
//! One line per applied edit, the hex SHA-256 of (operation, path, old, new, replace_all), in
//! `<git dir>/patchgate/applied`. A retry of the same patch finds its edits here and reports them
//! `already_applied` instead of `not_found`. Without a record entry a miss stays a miss even when
//! `new_string` is present: guessing would turn a stale `old_string` into a silent false success.
//!
//! The record is per working tree (a linked worktree has its own git dir), append-only, and trimmed
//! to the newest `KEEP` lines and `KEEP_BYTES` bytes when it grows past twice either, so it never
//! grows without bound: a whole patch's line lists every path it touched, so a few hundred large
//! patches made a record of tens of megabytes that every run read. A whole patch's line is only
//! parsed (and checked) when that patch is applied again; loading the record reads the digests.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::patch::Op;

const KEEP: usize = 20_000;
const KEEP_BYTES: usize = 4 << 20;

#[derive(Debug, Default)]
pub struct Record {
    path: Option<PathBuf>,
    seen: HashSet<String>,
    /// The record as read.
    text: String,
    /// Whole patches: digest → where in `text` their lines are (the states they left, path →
    /// content hash), oldest first.
    patches: HashMap<String, Vec<std::ops::Range<usize>>>,
    lines: usize,
    bytes: usize,
}

/// How a whole patch's line starts (`serde_json` writes the fields in order); the digest follows.
const PATCH_PREFIX: &str = "{\"patch\":\"";

/// The digest a whole patch's line names, read without parsing the line.
fn patch_digest_of(line: &str) -> Option<&str> {
    let d = line.strip_prefix(PATCH_PREFIX)?.get(..64)?;
    let rest = &line[PATCH_PREFIX.len() + 64..];
    (is_digest(d) && rest.starts_with("\",\"files\":")).then_some(d)
}

fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
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
        let mut patches: HashMap<String, Vec<std::ops::Range<usize>>> = HashMap::new();
        let mut lines = 0;
        let mut at = 0;
        // A line that is not one patchgate writes is ignored, never acted on (its paths would
        // be read by the planner); a whole patch's line is checked when it is used.
        for line in text.split_inclusive('\n') {
            let range = at..at + line.len();
            at += line.len();
            lines += 1;
            let line = line.strip_suffix('\n').unwrap_or(line);
            if is_digest(line) {
                seen.insert(line.to_string());
            } else if let Some(d) = patch_digest_of(line) {
                patches
                    .entry(d.to_string())
                    .or_default()
                    .push(range.start..range.start + line.len());
            }
        }
        Record {
            lines,
            bytes: text.len(),
            path: Some(path),
            seen,
            text,
            patches,
        }
    }

    /// The states a whole patch left, each time it was applied (its lines that pass
    /// [`record_line`]'s checks).
    pub fn patch_states(&self, digest: &str) -> Option<Vec<PatchState>> {
        let states: Vec<PatchState> = self
            .patches
            .get(digest)?
            .iter()
            .filter_map(|r| self.text.get(r.clone()))
            .filter(|line| record_line(line).is_ok())
            .filter_map(|line| serde_json::from_str::<PatchLine>(line).ok())
            .map(|p| p.files)
            .collect();
        (!states.is_empty()).then_some(states)
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
        // A whole patch's line that is on record already adds nothing (the same patch applied
        // again to the same files): without this, a patch applied a thousand times had a
        // thousand identical lines, each checked against the disk on the next retry.
        let mut lines_now: HashSet<&str> = HashSet::new();
        let fresh: Vec<&String> = digests
            .iter()
            .filter(|d| !self.seen.contains(*d))
            .filter(|d| match patch_digest_of(d) {
                Some(digest) => {
                    let on_record = self.patches.get(digest).is_some_and(|ranges| {
                        ranges
                            .iter()
                            .any(|r| self.text.get(r.clone()) == Some(d.as_str()))
                    });
                    !on_record && lines_now.insert(d.as_str())
                }
                None => true,
            })
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let fresh_bytes: usize = fresh.iter().map(|d| d.len() + 1).sum();
        if self.lines + fresh.len() > 2 * KEEP || self.bytes + fresh_bytes > 2 * KEEP_BYTES {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let mut kept: Vec<&str> = text.lines().collect();
            // The newest lines, at most KEEP of them and KEEP_BYTES in all (the new ones count).
            let mut budget = KEEP_BYTES.saturating_sub(fresh_bytes);
            let mut keep = 0;
            for l in kept.iter().rev().take(KEEP) {
                if l.len() + 1 > budget {
                    break;
                }
                budget -= l.len() + 1;
                keep += 1;
            }
            let drop = kept.len() - keep;
            kept.drain(..drop);
            let mut out = String::new();
            for l in kept.iter().copied().chain(fresh.iter().map(|d| d.as_str())) {
                out.push_str(l);
                out.push('\n');
            }
            crate::fs::atomic_write(path, out.as_bytes(), None)?;
            self.lines = kept.len() + fresh.len();
            self.bytes = out.len();
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
            self.bytes += buf.len();
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

/// What [`digest`] of `op` costs, in bytes of hashing (`crate::par`'s measure): its text, and
/// about a kilobyte's worth for the fixed part (the hasher, its fields, the hex).
pub fn digest_cost(op: &Op) -> usize {
    let text = match op {
        Op::Replace(r)
        | Op::Move {
            replace: Some(r), ..
        } => r.old.len() + r.new.len(),
        Op::Create { content: t } | Op::Append { text: t, .. } => t.len(),
        _ => 0,
    };
    1024 + text
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
    if is_digest(line) {
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

    /// A whole patch's line is found by its digest and parsed only when asked for; one whose
    /// paths fail the checks (forged) gives nothing.
    #[test]
    fn whole_patch_lines_are_read_when_asked_for() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (d1, d2) = ("1".repeat(64), "2".repeat(64));
        let state: PatchState = vec![("src/a.py".into(), Some("f".repeat(64)))];
        let forged: PatchState = vec![("../outside".into(), None)];
        let mut rec = Record::load(dir.path());
        rec.append(&[
            Record::patch_line(&d1, &state),
            Record::patch_line(&d2, &forged),
            Record::patch_line(&d1, &state),
        ])
        .expect("append");
        let mut rec = Record::load(dir.path());
        assert_eq!(
            rec.patch_states(&d1),
            Some(vec![state.clone()]),
            "kept once"
        );
        assert_eq!(rec.patch_states(&d2), None, "a forged line is never used");
        assert_eq!(rec.patch_states(&"3".repeat(64)), None);
        // The same patch leaving the same state again adds no line; another state does.
        let other: PatchState = vec![("src/a.py".into(), Some("e".repeat(64)))];
        rec.append(&[Record::patch_line(&d1, &state)])
            .expect("append");
        rec.append(&[Record::patch_line(&d1, &other)])
            .expect("append");
        let rec = Record::load(dir.path());
        assert_eq!(rec.patch_states(&d1), Some(vec![state, other]));
        assert_eq!(rec.lines, 3);
    }

    /// Whole patches' lines are large (every path a patch touched): the record is bounded in
    /// bytes as well as in lines, keeping the newest.
    #[test]
    fn the_record_stays_bounded_in_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut rec = Record::load(dir.path());
        // About 100 KB per line: a patch of ~1,000 files.
        let state: PatchState = (0..1_000)
            .map(|i| (format!("pkg/module_{i:04}.py"), Some("e".repeat(64))))
            .collect();
        let mut last = String::new();
        for n in 0..120u32 {
            last = format!("{n:064x}");
            rec.append(&[Record::patch_line(&last, &state)])
                .expect("append");
        }
        let size = std::fs::metadata(crate::fs::layout::applied(dir.path()))
            .expect("record")
            .len() as usize;
        assert!(size <= 2 * KEEP_BYTES, "record of {size} bytes");
        let rec = Record::load(dir.path());
        assert_eq!(
            rec.patch_states(&last),
            Some(vec![state]),
            "the newest is kept"
        );
        assert_eq!(
            rec.patch_states(&format!("{:064x}", 0)),
            None,
            "the oldest went"
        );
    }
}
