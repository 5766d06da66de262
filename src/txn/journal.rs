//! The transaction journal: what a crashed run was doing, so `patchgate recover` can finish it.
//!
//! One JSON file per transaction in `<git dir>/patchgate/txn/<id>.json`, replaced atomically (and
//! fsynced) at every phase change. It names every path the transaction touches with the git blob
//! id of its old and its new content. The blobs of the state recovery may have to write are
//! pinned by `refs/patchgate/txn/<worktree key>/<id>`: both states for `commit`/`branch`
//! (either may be rebuilt, whatever the working tree holds after a crash), the old state only
//! for `worktree`, which always rolls back until it has landed; its new contents are named by id
//! only, never written as objects (deciding whether a file holds them needs no more).
//!
//! Phases: `staged` (objects written; from then on files may be replaced and, for
//! `commit`/`branch`, the ref compare-and-swapped), `rolling_back` when the run itself decided to
//! undo, and `committed` for a working-tree run that landed but could not write its history entry.
//! The phase does not decide recovery, facts do: for commit modes the ref (whether it reaches the
//! transaction's commit), for `worktree` the transaction's history entry, which is written once
//! every file is switched: with it recovery rolls forward, without it back (see `recover`).
//! Older journals: version 2 also said `switching` before the first file was replaced and, for a
//! commit, `committed` after the ref moved (read as version 3 reads them: the ref decides); a
//! version 1 journal (which staged the new contents too) rolls forward from `switching`, as it
//! did then.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The version new journals are written with (see the module doc for what 1 meant).
pub const VERSION: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Write the working tree only.
    Worktree,
    /// Commit on the current branch (or detached HEAD), then write the working tree and index.
    Commit,
    /// Commit on another branch; no working tree involved.
    Branch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Staged,
    Switching,
    RollingBack,
    Committed,
}

/// A path's state, by git object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    Missing,
    File {
        oid: String,
        mode: u32,
    },
    Symlink {
        oid: String,
    },
    /// A directory or special file the transaction does not touch.
    Other,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub old: State,
    pub new: State,
    /// The blob the commit records for `new` when it is not `new`'s own: the content after
    /// git's clean filters and end-of-line conversion (see `filters`). `new` stays the
    /// working-tree bytes, which is what recovery and undo write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed: Option<String>,
    /// The commit records `committed` (the zero id: the path is absent from it) although the
    /// working tree holds something else after the transaction: the difference stays the user's
    /// uncommitted work, and the index entry follows the commit, not the working tree. Set by the
    /// undo of a `--commit` patch that took uncommitted changes along (see `undo`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncommitted: bool,
}

/// The id `committed` holds for a path that an `uncommitted` entry's commit does not have.
pub const ABSENT: &str = "0000000000000000000000000000000000000000";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Journal {
    pub version: u32,
    pub id: String,
    pub pid: u32,
    pub mode: Mode,
    pub phase: Phase,
    pub pin_ref: String,
    /// The ref the transaction moves (commit modes).
    pub refname: Option<String>,
    /// The ref's value before (None: the ref did not exist).
    pub old_oid: Option<String>,
    pub new_commit: Option<String>,
    /// The working tree root (worktree and commit modes).
    pub workdir: Option<PathBuf>,
    pub files: Vec<FileEntry>,
    /// Directories that did not exist before and that write-back may create.
    pub new_dirs: Vec<String>,
    /// Lines for the re-run record, written when the transaction completes (or rolls forward).
    #[serde(default)]
    pub record: Vec<String>,
    /// What the history entry of this transaction says besides its files (see `history`).
    #[serde(default)]
    pub history: Option<super::history::Meta>,
}

impl Journal {
    pub fn path(&self, git_dir: &Path) -> PathBuf {
        crate::fs::layout::journals(git_dir).join(format!("{}.json", self.id))
    }

    /// Writes (or replaces) the journal durably.
    pub fn save(&self, git_dir: &Path) -> std::io::Result<()> {
        let d = crate::fs::layout::journals(git_dir);
        std::fs::create_dir_all(&d)?;
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        crate::fs::atomic_write(&self.path(git_dir), &text, Some(0o644))
    }

    pub fn set_phase(&mut self, phase: Phase, git_dir: &Path) -> std::io::Result<()> {
        self.phase = phase;
        self.save(git_dir)
    }

    pub fn remove(&self, git_dir: &Path) -> std::io::Result<()> {
        match std::fs::remove_file(self.path(git_dir)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Every journal left in a git dir (unreadable ones as errors, with their path).
    pub fn load_all(git_dir: &Path) -> Vec<(PathBuf, Result<Journal, String>)> {
        let Ok(entries) = std::fs::read_dir(crate::fs::layout::journals(git_dir)) else {
            return Vec::new();
        };
        let mut out: Vec<(PathBuf, Result<Journal, String>)> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let j = std::fs::read(&p)
                    .map_err(|e| e.to_string())
                    .and_then(|b| serde_json::from_slice::<Journal>(&b).map_err(|e| e.to_string()));
                (p, j)
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// A transaction id: time-ordered and unique enough for one repository.
pub fn new_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}-{:06}-{}",
        now.as_secs(),
        now.subsec_micros(),
        std::process::id()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut j = Journal {
            version: 1,
            id: new_id(),
            pid: 1,
            mode: Mode::Commit,
            phase: Phase::Staged,
            pin_ref: "refs/patchgate/txn/x".into(),
            refname: Some("refs/heads/main".into()),
            old_oid: None,
            new_commit: Some("abc".into()),
            workdir: None,
            files: vec![FileEntry {
                path: "a".into(),
                old: State::Missing,
                new: State::File {
                    oid: "def".into(),
                    mode: 0o644,
                },
                committed: None,
                uncommitted: false,
            }],
            new_dirs: vec![],
            record: vec![],
            history: None,
        };
        j.save(dir.path()).expect("save");
        j.set_phase(Phase::Committed, dir.path()).expect("phase");
        let all = Journal::load_all(dir.path());
        assert_eq!(all.len(), 1);
        let back = all[0].1.as_ref().expect("parsed");
        assert_eq!(back.phase, Phase::Committed);
        assert_eq!(back.files[0].new, j.files[0].new);
        j.remove(dir.path()).expect("remove");
        assert!(Journal::load_all(dir.path()).is_empty());
    }
}
