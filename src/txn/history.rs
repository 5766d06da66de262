//! The history of written patches, which `patchgate undo` reads.
//!
//! Every transaction that writes (apply in any mode, and undo itself) leaves one entry: a JSON file
//! `<git dir>/patchgate/history/<patch id>.json` naming, per path, the blob (or absence) before and
//! after, the moves, the mode, and for a commit the ref and the commit. The patch id is the
//! transaction id, so ids sort by time.
//!
//! Invariants:
//! - Every blob an entry names stays in the object database, except the new contents of a
//!   working-tree transaction, named by id only (undo restores old contents, and needs the ids
//!   of the new ones only to tell whether a file still holds them): a small commit whose tree
//!   lists those blobs is pinned by `refs/patchgate/history/<worktree key>/<id>`, so `git gc` keeps them for as
//!   long as the entry exists. The ref is written before the JSON file (a working-tree
//!   transaction's, before its switch), and removed after it; a ref without its file is an
//!   orphan, removed by recovery and by the next apply.
//! - An entry is written when its transaction completes, and by `recover` when it rolls one
//!   forward; writing it twice writes the same bytes (everything in it comes from the journal).
//! - The history is bounded: beyond [`KEEP`] entries the oldest are dropped with their pins.
//! - Entries are never edited: whether a patch has been undone is derived from the later entries
//!   that undo it ([`undone`]).
//! - An entry is checked field by field before it is used ([`super::validate::entry`]); one that
//!   fails is reported by `undo` and never acted on (not even pruned).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::journal::{FileEntry, Journal, Mode, State};
use crate::error::Error;

/// How many entries are kept.
pub const KEEP: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Apply,
    Undo,
}

/// A file moved by the patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub from: String,
    pub to: String,
}

/// What the journal carries for the history besides its files: decided before the switch, so
/// that `recover` writes the same entry the run would have.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    pub kind: Kind,
    /// The patch this one undoes (kind `undo`).
    pub undoes: Option<String>,
    /// The commit message, or the patch's message, or a summary.
    pub message: String,
    pub moves: Vec<Move>,
    /// Seconds since the epoch when the run started.
    pub time: u64,
}

/// One written patch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub version: u32,
    pub patch_id: String,
    pub kind: Kind,
    pub undoes: Option<String>,
    pub time: u64,
    pub mode: Mode,
    /// The ref a committed patch moved (`refs/heads/…`, or `HEAD` when detached).
    #[serde(rename = "ref")]
    pub refname: Option<String>,
    pub commit: Option<String>,
    /// The ref's value before the commit (`None`: a new branch, or not a commit).
    pub parent: Option<String>,
    pub message: String,
    pub files: Vec<FileEntry>,
    pub moves: Vec<Move>,
    pub pin: String,
}

impl Entry {
    /// The first line of the message.
    pub fn subject(&self) -> &str {
        self.message.lines().next().unwrap_or("")
    }
}

/// Every entry as the planner's look-back reads it (oldest first): which blobs each patch
/// replaced, by path.
pub fn past_patches(git_dir: &Path) -> Vec<crate::plan::PastPatch> {
    use super::journal::State;
    let oid_of = |s: &State| match s {
        State::File { oid, .. } => git2::Oid::from_str(oid).ok(),
        _ => None,
    };
    load_all(git_dir)
        .into_iter()
        .map(|e| crate::plan::PastPatch {
            subject: e.subject().to_string(),
            files: e
                .files
                .iter()
                .map(|f| (f.path.clone(), oid_of(&f.old), oid_of(&f.new)))
                .collect(),
            id: e.patch_id,
        })
        .collect()
}

/// Whether transaction `id` has its entry: a working-tree transaction has landed once it has
/// (see `recover`).
pub fn has(git_dir: &Path, id: &str) -> bool {
    std::fs::read(entry_path(git_dir, id))
        .ok()
        .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
        .is_some_and(|e| e.patch_id == id)
}

fn entry_path(git_dir: &Path, id: &str) -> PathBuf {
    crate::fs::layout::history(git_dir).join(format!("{id}.json"))
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// Writes the entry of a completed (or rolled-forward) transaction, then drops the oldest
/// entries beyond [`KEEP`]. A journal without history metadata (written by an older version)
/// records nothing. `pinned`: a commit already on the disk that reaches every blob the entry
/// keeps (a working-tree transaction's own pin, its old contents), which the entry's pin may
/// point at instead of a commit made here (two objects, each synced, after the switch).
/// `ahead`: the entry already written and synced under a temp name ([`prepare`]), so that only
/// its rename is left.
pub fn record(
    repo: &Repository,
    git_dir: &Path,
    j: &Journal,
    pinned: Option<Oid>,
    ahead: Option<Ahead>,
) -> Result<(), Error> {
    if j.history.is_none() {
        return Ok(());
    }
    let pin = pin_name(git_dir, &j.id);
    let target = match pinned {
        Some(c) => c,
        None => pin_commit(repo, &j.files, &j.id)?,
    };
    // A working-tree transaction's staging wrote it already, before the switch
    // (`stage::stage`): only the entry is left to write then.
    if repo.refname_to_id(&pin).ok() != Some(target) {
        pin_as(repo, &pin, target)?;
    }
    crate::fault::point("history-pinned");
    let path = entry_path(git_dir, &j.id);
    match ahead {
        Some(entry) => {
            // Written before the switch from a copy of the journal: it must be what the journal
            // as it ends would write (checked in debug builds, which the tests run).
            #[cfg(debug_assertions)]
            assert_eq!(
                entry_text(git_dir, j).ok().flatten().as_deref(),
                Some(entry.text.as_slice()),
                "the history entry written ahead differs from the transaction's"
            );
            entry.file.publish()
        }
        None => {
            let Some(text) = entry_text(git_dir, j)? else {
                return Ok(());
            };
            let d = crate::fs::layout::history(git_dir);
            std::fs::create_dir_all(&d).map_err(|e| Error::io("create", &d, e))?;
            crate::fs::atomic_write(&path, &text, Some(ENTRY_MODE))
        }
    }
    .map_err(|e| Error::io("write", &path, e))?;
    prune(repo, git_dir, KEEP);
    Ok(())
}

/// The mode of an entry's file.
const ENTRY_MODE: u32 = 0o644;

/// Writes transaction `j`'s entry to a temp file beside its place and syncs it, so that after
/// the switch [`record`] only renames it: a working-tree transaction does this on a thread beside
/// its staging, while the journal and the temp files are written, and a sync in parallel costs
/// nothing on a disk where the entry's sync after the switch was a wait of its own. `None` when
/// there is no entry to keep or it could not be written ([`record`] writes it then, as usual).
pub fn prepare(git_dir: &Path, j: &Journal) -> Option<Ahead> {
    let text = entry_text(git_dir, j).ok()??;
    std::fs::create_dir_all(crate::fs::layout::history(git_dir)).ok()?;
    let file =
        crate::fs::prepare_write(&entry_path(git_dir, &j.id), &text, Some(ENTRY_MODE)).ok()?;
    Some(Ahead {
        file,
        #[cfg(debug_assertions)]
        text,
    })
}

/// A history entry written ahead ([`prepare`]), until [`record`] publishes it or it is dropped
/// (its temp file removed).
pub struct Ahead {
    file: crate::fs::Prepared,
    /// What was written, to compare with the journal the transaction ends with.
    #[cfg(debug_assertions)]
    text: Vec<u8>,
}

impl Ahead {
    /// Removes the entry's temp file: the transaction did not land.
    pub fn discard(self) {
        self.file.discard();
    }
}

/// Transaction `j`'s entry as its file holds it; `None` when the journal keeps no history
/// metadata.
fn entry_text(git_dir: &Path, j: &Journal) -> Result<Option<Vec<u8>>, Error> {
    let Some(meta) = &j.history else {
        return Ok(None);
    };
    let entry = Entry {
        version: 1,
        patch_id: j.id.clone(),
        kind: meta.kind,
        undoes: meta.undoes.clone(),
        time: meta.time,
        mode: j.mode,
        refname: j.refname.clone(),
        commit: j.new_commit.clone(),
        parent: j.old_oid.clone(),
        message: meta.message.clone(),
        files: j.files.clone(),
        moves: meta.moves.clone(),
        pin: pin_name(git_dir, &j.id),
    };
    serde_json::to_vec_pretty(&entry)
        .map(Some)
        .map_err(|e| Error::Internal {
            message: format!("cannot serialise the history entry: {e}"),
            help: "please report this".into(),
        })
}

/// The pin ref of transaction `id`'s entry.
pub fn pin_name(git_dir: &Path, id: &str) -> String {
    format!("{}/{}", crate::fs::layout::history_pins(git_dir), id)
}

fn pin_as(repo: &Repository, pin: &str, target: Oid) -> Result<(), Error> {
    super::refs::write_pin(repo.commondir(), pin, target)
        .map_err(|e| Error::io("write the undo history's pin in", repo.commondir(), e))
}

/// Removes the history pins (current and legacy namespaces) whose entry is not among `entries`
/// (the entry files listed by [`entry_files`]).
fn remove_pins_without(
    repo: &Repository,
    git_dir: &Path,
    entries: &std::collections::HashSet<&Path>,
) {
    let spaces = crate::fs::layout::history_pin_spaces(git_dir);
    for name in super::refs::pins_in(repo, &spaces) {
        let id = name.rsplit('/').next().unwrap_or("");
        if !entries.contains(entry_path(git_dir, id).as_path()) {
            let _ = super::stage::unpin(repo, &name);
        }
    }
}

/// Removes every history pin without an entry: one a crash left between the pin and its entry,
/// or a transaction that did not land. Under the mutex (no transaction of this working tree is
/// between its pin and its entry then).
pub fn remove_orphan_pins(repo: &Repository, git_dir: &Path) {
    let files = entry_files(git_dir);
    let entries: std::collections::HashSet<&Path> = files.iter().map(PathBuf::as_path).collect();
    remove_pins_without(repo, git_dir, &entries);
}

/// A commit (no parents, fixed signature and date, so the same blobs give the same commit) whose
/// tree lists every blob the entry names that git has, by id. A working-tree transaction's new
/// contents are named by id only (never written as objects: undo needs the old contents, and
/// only the ids of the new ones, to tell whether a file still holds them); a tree naming a
/// missing blob would break `git gc` and `git fsck`.
pub(super) fn pin_commit(repo: &Repository, files: &[FileEntry], id: &str) -> Result<Oid, Error> {
    let odb = repo.odb().map_err(Error::git)?;
    let mut tb = repo.treebuilder(None).map_err(Error::git)?;
    for f in files {
        for (s, old) in [(&f.old, true), (&f.new, false)] {
            let oid = match s {
                State::File { oid, .. } | State::Symlink { oid } => oid,
                State::Missing | State::Other => continue,
            };
            let o = Oid::from_str(oid).map_err(Error::git)?;
            // No refresh: a missing new blob is the usual case, and a rescan of the packs per
            // miss is what made a large working-tree batch slow.
            if !old && !odb.exists_ext(o, git2::OdbLookupFlags::NO_REFRESH) {
                continue;
            }
            tb.insert(oid.as_str(), o, 0o100644).map_err(Error::git)?;
        }
        // The blob an undo committed instead of the working tree's (the patch's parent's,
        // which a rewritten branch may no longer reach).
        if let Some(c) = f
            .committed
            .as_deref()
            .filter(|c| *c != super::journal::ABSENT)
        {
            let o = Oid::from_str(c).map_err(Error::git)?;
            tb.insert(c, o, 0o100644).map_err(Error::git)?;
        }
    }
    let tree = tb.write().map_err(Error::git)?;
    let tree = repo.find_tree(tree).map_err(Error::git)?;
    let sig = git2::Signature::new("patchgate", "patchgate@localhost", &git2::Time::new(0, 0))
        .map_err(Error::git)?;
    repo.commit(
        None,
        &sig,
        &sig,
        &format!("patchgate history {id}"),
        &tree,
        &[],
    )
    .map_err(Error::git)
}

/// Every valid entry, oldest first (what pruning may act on: a damaged or forged entry is never
/// acted on, and stays for [`load_checked`] to report).
pub fn load_all(git_dir: &Path) -> Vec<Entry> {
    load_checked(git_dir).0
}

/// Every entry, oldest first, and an error for each file that is not a valid entry (unreadable,
/// not an entry, or a field that fails [`super::validate::entry`]).
pub fn load_checked(git_dir: &Path) -> (Vec<Entry>, Vec<Error>) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for p in entry_files(git_dir) {
        match load_entry(git_dir, &p) {
            Ok(e) => out.push(e),
            Err(err) => bad.push(err),
        }
    }
    out.sort_by_key(|e| id_order(&e.patch_id));
    (out, bad)
}

/// The history's entry files, oldest first (an id starts with its time; see [`id_order`]).
fn entry_files(git_dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(crate::fs::layout::history(git_dir)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort_by_key(|p| id_order(&p.file_stem().unwrap_or_default().to_string_lossy()));
    paths
}

/// One entry file, read and checked ([`super::validate::entry`]).
fn load_entry(git_dir: &Path, p: &Path) -> Result<Entry, Error> {
    let parsed = std::fs::read(p)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<Entry>(&b).map_err(|e| e.to_string()));
    match parsed {
        Ok(e) => super::validate::entry(&e, p, git_dir).map(|()| e),
        Err(why) => Err(super::validate::error(
            p,
            super::validate::Bad {
                field: "(the file)".into(),
                problem: format!("is not a history entry: {why}"),
            },
        )),
    }
}

/// Ids are `<secs>-<micros>-<pid>`: ordered by time, numerically.
fn id_order(id: &str) -> (u64, u64, String) {
    let mut parts = id.splitn(3, '-');
    let secs = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let micros = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    (secs, micros, parts.next().unwrap_or("").to_string())
}

/// The entries whose effect has been reverted, each with the entry that reverted it: an entry is
/// undone when a later entry undoes it and that one is not undone itself (so an undo of an undo
/// puts the first back).
pub fn undone(entries: &[Entry]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    // Newest first: whether an entry is undone depends only on newer ones.
    for e in entries.iter().rev() {
        if !out.contains_key(&e.patch_id)
            && let Some(t) = &e.undoes
        {
            out.entry(t.clone()).or_insert_with(|| e.patch_id.clone());
        }
    }
    out
}

/// Drops the oldest entry files beyond the newest `keep` (the file first, then its pin), and pins
/// whose entry is gone (a crash between the two). Best effort: a leftover is retried next time.
pub fn prune(repo: &Repository, git_dir: &Path, keep: usize) {
    // Only the files beyond the newest `keep` are read (a large patch's entry is hundreds of KB,
    // and reading all of them cost every apply tens of milliseconds); of those, only a valid
    // entry is removed: a damaged or forged one is never acted on.
    let files = entry_files(git_dir);
    let excess = files.len().saturating_sub(keep);
    let mut removed = std::collections::HashSet::new();
    for p in &files[..excess] {
        if let Ok(e) = load_entry(git_dir, p) {
            let path = entry_path(git_dir, &e.patch_id);
            if std::fs::remove_file(&path).is_ok() {
                removed.insert(path);
            }
            let _ = super::stage::unpin(repo, &e.pin);
        }
    }
    // A pin whose entry is gone: the entries were just listed (one folder read, rather than a
    // look-up per pin); a damaged entry left in place keeps its pin.
    let kept: std::collections::HashSet<&Path> = files
        .iter()
        .filter(|p| !removed.contains(*p))
        .map(PathBuf::as_path)
        .collect();
    remove_pins_without(repo, git_dir, &kept);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, undoes: Option<&str>) -> Entry {
        Entry {
            version: 1,
            patch_id: id.into(),
            kind: if undoes.is_some() {
                Kind::Undo
            } else {
                Kind::Apply
            },
            undoes: undoes.map(str::to_string),
            time: 0,
            mode: Mode::Worktree,
            refname: None,
            commit: None,
            parent: None,
            message: String::new(),
            files: Vec::new(),
            moves: Vec::new(),
            pin: String::new(),
        }
    }

    #[test]
    fn an_undo_of_an_undo_puts_the_patch_back() {
        let a = entry("1-1-1", None);
        let u = entry("2-1-1", Some("1-1-1"));
        assert_eq!(
            undone(&[a.clone(), u.clone()]),
            HashMap::from([("1-1-1".to_string(), "2-1-1".to_string())])
        );
        let r = entry("3-1-1", Some("2-1-1"));
        assert_eq!(
            undone(&[a, u, r]),
            HashMap::from([("2-1-1".to_string(), "3-1-1".to_string())])
        );
    }

    #[test]
    fn ids_order_by_time_numerically() {
        assert!(id_order("999-000001-5") < id_order("1000-000000-1"));
        assert!(id_order("1000-000002-1") > id_order("1000-000001-9"));
    }
}
