//! Finishing or undoing a transaction that a crash interrupted.
//!
//! Which way to go is decided by facts, never guessed:
//! - for `commit` and `branch`, the ref, whatever the phase: if it reaches the transaction's
//!   commit the commit was published, so the working tree and index roll forward to it;
//!   otherwise everything rolls back;
//! - for `worktree`, whether it landed: its history entry is written once every file has been
//!   switched (or, when that failed, the journal says `committed`); with it the batch rolls
//!   forward (every file already holds its new content, synced), without it back, whatever the
//!   phase (only the old contents are objects). A version 1 journal, from an older patchgate
//!   that staged the new contents too, rolls forward once it says `switching`.
//!
//! A file is only ever moved between the transaction's two states: if it holds the state we are
//! going to, it is left; if it holds the other one, it is rewritten; if it holds neither (the
//! user edited it after the crash), it is left alone and reported. Then the transaction's temp
//! files (any process's: a `recover` killed while restoring leaves its own), the directories it
//! created (if empty) and its pin ref are removed, and the journal last.
//!
//! A journal is checked field by field before anything acts on it ([`super::validate`]): a forged
//! or corrupt one is refused and left where it is. Every file is reached from the working tree's
//! root without following symlinks ([`crate::fs`]).

use std::path::Path;

use git2::{Oid, Repository};

use super::journal::{Journal, Mode, Phase, State};
use crate::error::Error;
use crate::fault;
use crate::fs::{Kind, Root};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    RolledBack,
    RolledForward,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Recovered {
    pub id: String,
    pub mode: Mode,
    pub outcome: Direction,
    /// Paths rewritten to reach the outcome.
    pub restored: Vec<String>,
    /// Paths that held neither state and were left as they are.
    pub left_alone: Vec<String>,
}

/// Whether an interrupted transaction left anything: a journal, a transaction pin, a pin's lock,
/// or a history pin without its entry (a working-tree transaction pins its entry beside its own
/// pin, before its journal may be written: a kill between them leaves that pin alone).
pub fn pending(repo: &Repository, git_dir: &Path) -> bool {
    let journals = std::fs::read_dir(crate::fs::layout::journals(git_dir))
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    // The files of a pin folder (a pin, or a pin's lock).
    let names_in = |p: &String| -> Vec<String> {
        std::fs::read_dir(repo.commondir().join(p))
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let txn_spaces = crate::fs::layout::txn_pin_spaces(git_dir);
    let txn_locks = txn_spaces
        .iter()
        .any(|p| names_in(p).iter().any(|n| n.ends_with(".lock")));
    // The history's pins, loose (a pin written by a run is; an orphan a kill left is too).
    let history_pins: Vec<String> = crate::fs::layout::history_pin_spaces(git_dir)
        .iter()
        .flat_map(names_in)
        .collect();
    let history_left = history_pins.iter().any(|n| n.ends_with(".lock")) || {
        let entries: std::collections::HashSet<String> =
            std::fs::read_dir(crate::fs::layout::history(git_dir))
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
        // An entry written ahead (`history::prepare`) by a run killed before it landed is a
        // temp file there, with or without its pin.
        history_pins
            .iter()
            .any(|id| !entries.contains(&format!("{id}.json")))
            || entries.iter().any(|n| is_own_temp(n))
    };
    journals || txn_locks || history_left || !super::refs::pins_in(repo, &txn_spaces).is_empty()
}

/// The mutex for a run that is about to switch (`held`, if the run already took it to recover
/// first). Another run may have died between this run's check and its lock: its files are
/// half-switched, and this run's plan read them. Recover that one, and ask for a re-run of this one
/// (`what`: "patch" or "undo") rather than guess.
pub fn lock_for_switch(
    repo: &Repository,
    git_dir: &Path,
    held: Option<super::lock::Mutex>,
    what: &str,
) -> Result<super::lock::Mutex, Error> {
    if let Some(m) = held {
        return Ok(m);
    }
    let m = super::lock::acquire(git_dir)?;
    if pending(repo, git_dir) {
        recover_all(repo, git_dir)?;
        return Err(Error::Recover {
            id: "concurrent".into(),
            message: format!(
                "another patchgate run was interrupted while this {what} was planning; it has been recovered"
            ),
            help: format!("re-run the {what}: nothing of it was written"),
        });
    }
    Ok(m)
}

/// Recovers every interrupted transaction of this git dir. The caller holds the mutex, so any
/// journal found belongs to a process that is gone.
pub fn recover_all(repo: &Repository, git_dir: &Path) -> Result<Vec<Recovered>, Error> {
    // First, so that rolling forward can write the history pin a killed run was writing.
    remove_pin_locks(repo, git_dir);
    let workdir = canonical_workdir(repo);
    let mut done = Vec::new();
    for (path, journal) in Journal::load_all(git_dir) {
        let journal = journal.map_err(|e| Error::Recover {
            id: path.display().to_string(),
            message: format!("the journal cannot be read: {e}"),
            help: format!(
                "inspect or remove {} by hand; the transaction's objects are pinned under refs/patchgate/txn/",
                path.display()
            ),
        })?;
        super::validate::journal(&journal, &path, git_dir, workdir.as_deref())?;
        done.push(recover_one(repo, git_dir, &journal)?);
    }
    cleanup_orphans(repo, git_dir);
    Ok(done)
}

/// After a panic in a command that may have been running a transaction on the repository at
/// `dir`: finishes or rolls back what it left (under the mutex, as `patchgate recover` does).
/// How many transactions were recovered; 0 when nothing was pending.
pub fn recover_after(dir: &std::path::Path) -> Result<usize, crate::error::Error> {
    let repo = crate::repo::Repo::discover(dir)?;
    if !pending(&repo.git, &repo.git_dir) {
        return Ok(0);
    }
    let _mutex = super::lock::acquire(&repo.git_dir)?;
    recover_all(&repo.git, &repo.git_dir).map(|d| d.len())
}

/// The error a panic that escaped a command ends it with, after recovering the repository at
/// `repo_dir` (when the command may have been running a transaction there).
pub fn internal_error(message: String, repo_dir: Option<&std::path::Path>) -> crate::error::Error {
    let mut help = "this is a bug in patchgate: please report it with this message".to_string();
    if let Some(dir) = repo_dir {
        match recover_after(dir) {
            Ok(0) => {}
            Ok(_) => help.push_str(
                "; the transaction it interrupted was finished or rolled back, as `patchgate \
                 recover` does",
            ),
            Err(e) => help.push_str(&format!(
                "; the transaction it interrupted could not be recovered ({e}): run `patchgate \
                 recover`"
            )),
        }
    }
    crate::error::Error::Internal { message, help }
}

/// This repository's working tree, canonical (as journals record it); `None` when bare.
fn canonical_workdir(repo: &Repository) -> Option<std::path::PathBuf> {
    repo.workdir().and_then(|w| std::fs::canonicalize(w).ok())
}

fn direction(repo: &Repository, git_dir: &Path, j: &Journal) -> Direction {
    match (j.mode, j.phase) {
        (_, Phase::RollingBack) => Direction::RolledBack,
        (Mode::Worktree, Phase::Committed) => Direction::RolledForward,
        // An older patchgate's journal: the new contents were staged, and it rolled forward
        // once its switch had begun.
        (Mode::Worktree, Phase::Switching) if j.version == 1 => Direction::RolledForward,
        (Mode::Worktree, Phase::Staged) if j.version == 1 => Direction::RolledBack,
        // It stays `staged` on disk while its files are switched (see `run`): landed or not is
        // the history entry's to say.
        (Mode::Worktree, Phase::Staged | Phase::Switching) => {
            match super::history::has(git_dir, &j.id) {
                true => Direction::RolledForward,
                false => Direction::RolledBack,
            }
        }
        // The ref is the fact, whatever the phase: a journal stays `staged` through its switch
        // and compare-and-swap (version 3; an older one said `switching`, then `committed`), and
        // a power loss can lose a ref update an older journal already recorded as `committed`
        // (it was not durable yet): then nothing was published, and the files go back. Only
        // this transaction makes its commit, so a ref that reaches it was moved by it.
        (Mode::Commit | Mode::Branch, Phase::Staged | Phase::Switching | Phase::Committed) => {
            // Published if the ref reaches our commit: it may have moved on since (someone
            // committed on top after the crash), and that must not undo ours.
            let current = j
                .refname
                .as_deref()
                .and_then(|r| repo.refname_to_id(r).ok());
            let ours = j
                .new_commit
                .as_deref()
                .and_then(|c| git2::Oid::from_str(c).ok());
            match (current, ours) {
                (Some(cur), Some(new))
                    if cur == new || repo.graph_descendant_of(cur, new).unwrap_or(false) =>
                {
                    Direction::RolledForward
                }
                _ => Direction::RolledBack,
            }
        }
    }
}

/// A ref lock our killed process left. libgit2 creates `<ref>.lock`, writes the new value into it
/// and renames it: a lock holding our new commit is ours; an empty one is ours if it stays empty
/// (a live git fills its lock within microseconds). Any other content belongs to someone else
/// and is not touched.
fn remove_our_ref_lock(repo: &Repository, j: &Journal) {
    let (Some(refname), Some(new)) = (&j.refname, &j.new_commit) else {
        return;
    };
    let base = if refname == "HEAD" {
        repo.path()
    } else {
        repo.commondir()
    };
    let lock = base.join(format!("{refname}.lock"));
    let ours = |c: &str| c.trim() == new;
    match std::fs::read_to_string(&lock) {
        Ok(c) if ours(&c) => {
            let _ = std::fs::remove_file(&lock);
        }
        Ok(c) if c.is_empty() => {
            std::thread::sleep(std::time::Duration::from_millis(500));
            if std::fs::read_to_string(&lock).is_ok_and(|c| c.is_empty() || ours(&c)) {
                let _ = std::fs::remove_file(&lock);
            }
        }
        _ => {}
    }
}

pub fn recover_one(repo: &Repository, git_dir: &Path, j: &Journal) -> Result<Recovered, Error> {
    remove_our_ref_lock(repo, j);
    remove_pin_locks(repo, git_dir);
    let dir = direction(repo, git_dir, j);
    let tree = match &j.workdir {
        Some(workdir) if j.mode != Mode::Branch => {
            Some(Root::open(workdir).map_err(|e| Error::io("open", workdir, e))?)
        }
        _ => None,
    };
    let (restored, left_alone) = match &tree {
        Some(fs) => move_files(repo, fs, j, dir)?,
        None => (Vec::new(), Vec::new()),
    };
    if dir == Direction::RolledForward
        && j.mode == Mode::Commit
        && let Some(workdir) = &j.workdir
    {
        let paths: Vec<String> = j
            .files
            .iter()
            .filter(|f| !left_alone.contains(&f.path))
            .map(|f| f.path.clone())
            .collect();
        super::commit::update_index(repo, git_dir, workdir, &paths, &j.files)?;
    }
    if let Some(fs) = &tree {
        remove_temps(fs, j);
        if dir == Direction::RolledBack {
            remove_new_dirs(fs, j);
        }
    }
    if dir == Direction::RolledForward {
        // The patch landed: `undo` must know it, and a retry must find it applied. Neither
        // may keep the recovery itself from finishing.
        let _ = super::history::record(repo, git_dir, j, None, None);
        let _ = crate::plan::record::Record::load(git_dir).append(&j.record);
    }
    super::index::settle();
    super::stage::unpin(repo, &j.pin_ref)?;
    fault::point("recover-unpinned");
    j.remove(git_dir)
        .map_err(|e| Error::io("remove", j.path(git_dir), e))?;
    Ok(Recovered {
        id: j.id.clone(),
        mode: j.mode,
        outcome: dir,
        restored,
        left_alone,
    })
}

/// Puts the working tree back after a failed switch: the old contents, then the temp files and
/// the directories the switch created. (What `recover` does for a transaction rolled back.)
pub fn undo(
    repo: &Repository,
    workdir: &Path,
    j: &Journal,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let fs = Root::open(workdir).map_err(|e| Error::io("open", workdir, e))?;
    let moved = move_files(repo, &fs, j, Direction::RolledBack)?;
    remove_temps(&fs, j);
    remove_new_dirs(&fs, j);
    Ok(moved)
}

/// Brings each journaled file to the state `dir` asks for.
pub fn move_files(
    repo: &Repository,
    fs: &Root,
    j: &Journal,
    dir: Direction,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let mut restored = Vec::new();
    let mut left = Vec::new();
    for f in &j.files {
        let (want, other) = match dir {
            Direction::RolledForward => (&f.new, &f.old),
            Direction::RolledBack => (&f.old, &f.new),
        };
        let fail = |e| Error::fs("read", fs.path(), &f.path, e);
        if holds(fs, &f.path, want).map_err(fail)? {
            continue;
        }
        // A state whose blob is not in git cannot be written: a landed working-tree
        // transaction's new contents are named by id only, and a file that holds its old state
        // again after the crash was put back by the user.
        if !holds(fs, &f.path, other).map_err(fail)? || !writable(repo, want) {
            left.push(f.path.clone());
            continue;
        }
        put(repo, fs, &f.path, want)?;
        restored.push(f.path.clone());
        fault::point("recover-restored");
    }
    Ok((restored, left))
}

/// Whether `rel` holds `state`: by content, and for a file by its executable bit too (a
/// transaction may change only that), never by its other permission bits. A symlink on the way
/// is an error: the path changed, and nothing may be written along it.
fn holds(fs: &Root, rel: &str, state: &State) -> std::io::Result<bool> {
    let md = match fs.lstat(rel) {
        Ok(m) => m,
        Err(e) if crate::fs::is_symlink_error(&e) => return Err(e),
        Err(_) => return Ok(false),
    };
    let blob_of = |b: &[u8]| Oid::hash_object(git2::ObjectType::Blob, b).ok();
    Ok(match state {
        State::Missing => md.is_none(),
        State::File { oid, mode } => {
            let executable = *mode != crate::fs::NEW_FILE_MODE && mode & 0o111 != 0;
            md.is_some_and(|m| m.kind == Kind::File && (m.mode & 0o111 != 0) == executable)
                && fs
                    .read(rel)
                    .ok()
                    .and_then(|b| blob_of(&b))
                    .is_some_and(|o| o.to_string() == *oid)
        }
        State::Symlink { oid } => {
            md.is_some_and(|m| m.kind == Kind::Symlink)
                && fs
                    .read_link(rel)
                    .ok()
                    .and_then(|t| blob_of(t.as_os_str().as_encoded_bytes()))
                    .is_some_and(|o| o.to_string() == *oid)
        }
        State::Other => true,
    })
}

/// Whether [`put`] can write `state`: its blob, if it has one, is in the object database.
fn writable(repo: &Repository, state: &State) -> bool {
    match state {
        State::File { oid, .. } | State::Symlink { oid } => Oid::from_str(oid)
            .ok()
            .zip(repo.odb().ok())
            .is_some_and(|(o, odb)| odb.exists(o)),
        State::Missing | State::Other => true,
    }
}

fn put(repo: &Repository, fs: &Root, rel: &str, state: &State) -> Result<(), Error> {
    let blob = |oid: &str| -> Result<Vec<u8>, Error> {
        let o = Oid::from_str(oid).map_err(Error::git)?;
        Ok(repo.find_blob(o).map_err(Error::git)?.content().to_vec())
    };
    let fail = |action, e| Error::fs(action, fs.path(), rel, e);
    let parents = |fs: &Root| -> Result<(), Error> {
        if let Some((parent, _)) = rel.rsplit_once('/') {
            fs.create_dirs(parent)
                .map_err(|e| fail("create the folder of", e))?;
        }
        Ok(())
    };
    match state {
        State::Missing => match fs.remove_file(rel) {
            Err(e) if !crate::fs::gone(&e) => Err(fail("delete", e)),
            _ => Ok(()),
        },
        State::File { oid, mode } => {
            let bytes = blob(oid)?;
            parents(fs)?;
            let mode = if *mode == crate::fs::NEW_FILE_MODE {
                crate::fs::default_file_mode()
            } else {
                *mode
            };
            fs.atomic_write_with(rel, &bytes, mode, || fault::point("recover-before-rename"))
                .map_err(|e| fail("write", e))
        }
        State::Symlink { oid } => {
            use std::os::unix::ffi::OsStrExt;
            let target = blob(oid)?;
            parents(fs)?;
            let (d, name) = fs
                .parent_of(rel)
                .map_err(|e| fail("open the folder of", e))?;
            let tmp = crate::fs::temp_name(name);
            d.symlink(Path::new(std::ffi::OsStr::from_bytes(&target)), &tmp)
                .and_then(|()| d.rename(&tmp, name))
                .map_err(|e| {
                    let _ = d.unlink(&tmp);
                    fail("create a symlink at", e)
                })
        }
        State::Other => Ok(()),
    }
}

/// Temp files next to the files the transaction touched: the transaction's own, and those of a
/// `recover` that was itself killed while restoring (any pid: the caller holds the mutex, so no
/// live patchgate is writing in this working tree).
fn remove_temps(fs: &Root, j: &Journal) {
    let mut by_dir: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for f in &j.files {
        let (parent, name) = f.path.rsplit_once('/').unwrap_or(("", f.path.as_str()));
        by_dir.entry(parent).or_default().push(name);
    }
    for (parent, names) in by_dir {
        let Ok(d) = fs.dir(parent) else {
            continue;
        };
        let Ok(entries) = d.names() else {
            continue;
        };
        for e in entries {
            if names.iter().any(|n| crate::fs::is_temp_for(&e, n)) {
                let _ = d.unlink(&e);
            }
        }
    }
}

fn remove_new_dirs(fs: &Root, j: &Journal) {
    let mut dirs: Vec<&String> = j.new_dirs.iter().collect();
    // Deepest first, so a parent is empty by the time it is tried.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    for d in dirs {
        let _ = fs.remove_dir(d);
    }
}

/// Lock files of pin refs, the transaction's and the history's (a kill while a pin was being
/// written). Only patchgate writes under `refs/patchgate/`, and the caller holds patchgate's
/// mutex, so any such lock is stale.
fn remove_pin_locks(repo: &Repository, git_dir: &Path) {
    let [txn, txn_legacy] = crate::fs::layout::txn_pin_spaces(git_dir);
    let [history, history_legacy] = crate::fs::layout::history_pin_spaces(git_dir);
    for prefix in [txn, txn_legacy, history, history_legacy] {
        let Ok(entries) = std::fs::read_dir(repo.commondir().join(prefix)) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().ends_with(".lock") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Whether `name` is a temp file patchgate made in one of its own folders ([`crate::fs::temp_name`]).
fn is_own_temp(name: &str) -> bool {
    name.starts_with('.') && name.contains(".patchgate-") && name.ends_with(".tmp")
}

/// Pins without a journal (a crash while staging) and stray temp files in patchgate's own dir.
fn cleanup_orphans(repo: &Repository, git_dir: &Path) {
    remove_pin_locks(repo, git_dir);
    let journals: Vec<String> = Journal::load_all(git_dir)
        .into_iter()
        .filter_map(|(_, j)| j.ok().map(|j| j.pin_ref))
        .collect();
    let spaces = crate::fs::layout::txn_pin_spaces(git_dir);
    for name in super::refs::pins_in(repo, &spaces) {
        if !journals.contains(&name) {
            let _ = super::stage::unpin(repo, &name);
        }
    }
    // A working-tree transaction pins its history entry before its switch: one rolled back (or
    // killed before its journal) leaves that pin without an entry.
    super::history::remove_orphan_pins(repo, git_dir);
    super::objects::sweep_temp(
        &repo.commondir().join("objects"),
        std::time::Duration::from_secs(3600),
    );
    for d in [
        crate::fs::layout::root(git_dir),
        crate::fs::layout::journals(git_dir),
        crate::fs::layout::history(git_dir),
    ] {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if is_own_temp(&name) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}
