//! One transaction, from verified path changes to a changed repository: stage, journal, switch
//! (write-back and/or the ref's compare-and-swap, then the index), history, cleanup.
//!
//! `apply` and `undo` both end here, so they share every guarantee and every fault point: the
//! caller has planned the changes (each path's state before and after), checked what it needs
//! to, and holds the mutex. On an error during the switch everything user-visible is as before
//! (or the journal is kept for `patchgate recover` when an undo failed); once the switch is done
//! the transaction has landed, and what fails after it is a warning.

use git2::Oid;

use super::history::{self, Meta};
use super::journal::{self, Journal, Mode, Phase};
use super::{commit, recover, stage};
use crate::error::Error;
use crate::fault;
use crate::plan::PathChange;
use crate::plan::record::Record;
use crate::repo::Repo;

/// What to publish.
pub struct Request<'a> {
    pub mode: Mode,
    pub changes: &'a [PathChange],
    /// The commit the new commit goes on (commit modes; `None`: an unborn branch).
    pub base: Option<&'a git2::Commit<'a>>,
    /// The ref to move (commit modes).
    pub refname: Option<&'a str>,
    /// Where that ref is now (`None`: it does not exist yet).
    pub old_tip: Option<Oid>,
    /// The commit message (commit modes).
    pub message: &'a str,
    /// What the commit records for some paths when that is not their new working-tree content
    /// (the undo of a `--commit` patch; see `stage`); empty for `apply`.
    pub commit_as: Vec<(String, super::journal::State)>,
    /// Lines for the re-run record, and the record they go to (loaded here when not given).
    pub record_lines: Vec<String>,
    pub record: Option<&'a mut Record>,
    pub history: Meta,
    /// The paths' blob ids when the caller hashed them already ([`stage::hash`] of `changes`):
    /// `apply` does so before it starts the report's diffs on the other cores, so the two do not
    /// compete.
    pub hashed: Option<stage::Hashed>,
}

/// A transaction that landed.
#[derive(Debug)]
pub struct Done {
    /// The transaction id, which is the patch id of the history.
    pub id: String,
    pub commit: Option<Oid>,
    /// Warnings for the report (a step after the point of no return that failed).
    pub notes: Vec<String>,
}

/// How a transaction ended when it did not land.
#[derive(Debug)]
pub enum Failed {
    /// Nothing was started: the objects could not be staged or the journal written.
    Start(Error),
    /// The switch was stopped and undone (see the error); nothing user-visible changed.
    Switch(Error),
}

pub fn run(repo: &Repo, mut req: Request) -> Result<Done, Failed> {
    let mode = req.mode;
    let identities = match mode {
        Mode::Worktree => None,
        _ => Some((
            commit::identity(&repo.git, "author").map_err(Failed::Start)?,
            commit::identity(&repo.git, "committer").map_err(Failed::Start)?,
        )),
    };
    let id = journal::new_id();
    let hashed = match req.hashed.take() {
        Some(h) => h,
        None => stage::hash(req.changes),
    };
    crate::timing::mark("hashed");
    if mode != Mode::Worktree {
        // The commit to publish names the new blobs: everything is staged before the journal.
        let staged = stage::stage(
            &repo.git,
            &repo.git_dir,
            &id,
            req.changes,
            hashed,
            stage::Keep::Both,
            req.base,
            identities.as_ref().map(|(a, c)| stage::CommitSpec {
                message: req.message,
                author: a,
                committer: c,
            }),
            &req.commit_as,
        )
        .map_err(Failed::Start)?;
        crate::timing::mark("staged");
        fault::point("staged");
        let mut j = journal_for(repo, &req, &id, staged.commit, staged.files.clone());
        // The history entry is written ahead, synced under a temp name, on another thread while
        // the journal is saved and the switch runs, so that after the switch only its rename is
        // left (as a working-tree transaction's is, beside its staging).
        let for_entry = entry_copy(&mut j);
        let git_dir = repo.git_dir.clone();
        let entry = std::thread::Builder::new()
            .spawn(move || history::prepare(&git_dir, &for_entry))
            .map_or(Entry::None, Entry::Pending);
        return transact(repo, req, j, Staging::Done(Box::new(staged), entry));
    }
    // The working tree alone rolls back until it has landed, so only the old contents git lacks
    // are written (usually none: a clean file's old content is HEAD's blob), on another thread
    // while the write-back verifies the files and writes and syncs its temp files, and waited
    // for before the first file is replaced (see `Staging`). The new contents are never written
    // as objects: the journal and the undo history name them by id, which is all that deciding
    // "does this file hold the new state" needs. The pin holds just the changed paths' old
    // contents (no commit tree), so HEAD's tree, which may disagree with the working tree about
    // files and directories, never gets in the way. Beside the staging, another thread writes
    // the history entry under a temp name, synced, so that after the switch only its rename is
    // left.
    let mut j = journal_for(repo, &req, &id, None, hashed.files.clone());
    let for_entry = entry_copy(&mut j);
    let second = repo.second();
    let (git_dir, changes) = (&repo.git_dir, req.changes);
    std::thread::scope(|s| {
        let id = id.as_str();
        let handle = s.spawn(move || {
            fault::point("staging");
            // The entry beside the objects and pins: their syncs wait together.
            std::thread::scope(|s| {
                // Without a thread (a limit on threads) the history writes the entry as before.
                let entry = std::thread::Builder::new()
                    .spawn_scoped(s, || history::prepare(git_dir, &for_entry))
                    .ok();
                let staged = second.open().map_err(Error::git).and_then(|git| {
                    stage::stage(
                        &git,
                        git_dir,
                        id,
                        changes,
                        hashed,
                        stage::Keep::Old,
                        None,
                        None,
                        &[],
                    )
                });
                // A panic there only loses the head start: the history writes the entry then.
                let entry = entry.and_then(|h| h.join().ok()).flatten();
                Ok((staged?, entry))
            })
        });
        transact(repo, req, j, Staging::Running(handle))
    })
}

/// A copy of `j` for the thread that writes the history entry ahead, without the re-run record's
/// lines (thousands for a large batch), which the entry does not keep and which are not copied.
fn entry_copy(j: &mut Journal) -> Journal {
    let record = std::mem::take(&mut j.record);
    let copy = j.clone();
    j.record = record;
    copy
}

/// What a working-tree transaction's staging thread returns: the objects, and the history entry
/// written ahead (see [`history::prepare`]).
type Staged = (stage::Staged, Option<history::Ahead>);

/// The history entry written ahead of the switch, if it was.
enum Entry {
    None,
    Ready(history::Ahead),
    /// Being written on another thread (a commit's: see [`run`]).
    Pending(std::thread::JoinHandle<Option<history::Ahead>>),
}

impl From<Option<history::Ahead>> for Entry {
    fn from(entry: Option<history::Ahead>) -> Entry {
        entry.map_or(Entry::None, Entry::Ready)
    }
}

/// The objects of a transaction: staged, or being staged on another thread.
enum Staging<'scope> {
    Running(std::thread::ScopedJoinHandle<'scope, Result<Staged, Error>>),
    /// The objects, and the history entry when it was written ahead (taken by the history).
    Done(Box<stage::Staged>, Entry),
    /// Staging failed (the error was returned where it was waited for).
    Failed,
}

impl Staging<'_> {
    /// Waits for the objects: from here on they are written, synced and pinned, so recovery
    /// can rebuild either state from them.
    fn wait(&mut self) -> Result<(), Error> {
        if let Staging::Running(_) = self {
            let Staging::Running(h) = std::mem::replace(self, Staging::Failed) else {
                return Ok(());
            };
            let (staged, entry) = h
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            *self = Staging::Done(Box::new(staged), entry.into());
            crate::timing::mark("staged");
            fault::point("staged");
        }
        match self {
            Staging::Failed => Err(internal("the transaction's objects were not staged")),
            _ => Ok(()),
        }
    }

    fn commit(&self) -> Option<Oid> {
        match self {
            Staging::Done(s, _) => s.commit,
            _ => None,
        }
    }

    /// The undo history's pin, set ahead of its entry (see `stage::Staged::history_pin`).
    fn history_pin(&self) -> Option<Oid> {
        match self {
            Staging::Done(s, _) => Some(s.history_pin),
            _ => None,
        }
    }

    /// The history entry written ahead, for the history to publish; an entry not taken is
    /// removed with the staging (its temp file never appears under its name).
    fn take_entry(&mut self) -> Option<history::Ahead> {
        match self {
            // A panic there only loses the head start: the history writes the entry then.
            Staging::Done(_, entry) => match std::mem::replace(entry, Entry::None) {
                Entry::None => None,
                Entry::Ready(e) => Some(e),
                Entry::Pending(h) => h.join().ok().flatten(),
            },
            _ => None,
        }
    }
}

/// Journal `j`, switch, history and cleanup of a transaction whose objects are `staging`.
fn transact(
    repo: &Repo,
    req: Request,
    mut j: Journal,
    mut staging: Staging,
) -> Result<Done, Failed> {
    let mode = req.mode;
    let id = j.id.clone();
    let pin_ref = j.pin_ref.clone();
    // A transaction that stops before its switch leaves no pin: the objects are waited for
    // (they may still be being written) before it is removed.
    let unpin = |staging: &mut Staging| {
        let _ = staging.wait();
        let _ = stage::unpin(&repo.git, &pin_ref);
        // The staging pinned the history's entry ahead (and may have written the entry under a
        // temp name); there will be no entry.
        let _ = stage::unpin(&repo.git, &history::pin_name(&repo.git_dir, &id));
        if let Some(entry) = staging.take_entry() {
            entry.discard();
        }
    };
    let journal_err = |e: std::io::Error| {
        Error::io(
            "write the journal in",
            crate::fs::layout::journals(&repo.git_dir),
            e,
        )
    };
    if let Err(e) = j.save(&repo.git_dir) {
        unpin(&mut staging);
        return Err(Failed::Start(journal_err(e)));
    }
    crate::timing::mark("journaled");
    fault::point("journaled");

    let result = switch(
        repo,
        mode,
        &mut j,
        req.changes,
        req.refname,
        req.old_tip,
        &mut staging,
    );
    crate::timing::mark("switched");
    let mut notes = Vec::new();
    let mut finished = true;
    match result {
        Ok(None) => {}
        Ok(Some(warning)) => {
            // Published, but a last step failed: the journal stays for `patchgate recover`.
            notes.push(warning);
            finished = false;
        }
        Err(e) => {
            // Undone (or never started): the journal and pin go, the report says why. An undo
            // that failed keeps them: `patchgate recover` needs the old contents they hold.
            if !matches!(e, Error::RollbackFailed { .. }) {
                unpin(&mut staging);
                let _ = j.remove(&repo.git_dir);
            }
            return Err(Failed::Switch(e));
        }
    }
    // The history and the record before the journal goes. For a working-tree transaction the
    // history entry is the point of no return (recovery rolls forward once it exists, back
    // before); for a commit, the ref is. A kill in between leaves a journal that recovery rolls
    // forward (writing them again is a no-op), never a landed patch that `undo` does not know
    // about. When the entry could not be written, the journal says `committed` instead, so that
    // a cleanup that fails too leaves a landed patch for recovery to finish, not to roll back.
    // A working-tree transaction's pin holds exactly its old contents, which is what its history
    // entry keeps; a commit's pin reaches the base commit's history too, so its entry gets a pin
    // of its own blobs. Either was set by the staging.
    let pinned = staging.history_pin();
    let entry = staging.take_entry();
    if !keep_history_and_record(repo, &j, pinned, entry, req.record, &mut notes)
        && mode == Mode::Worktree
    {
        let _ = j.set_phase(Phase::Committed, &repo.git_dir);
    }
    crate::timing::mark("recorded");
    // The index written directly is durable before the journal that would redo it goes.
    super::index::settle();
    fault::point("before-cleanup");
    if finished {
        // The patch has landed: a failed cleanup is a warning (the next run finishes it), never
        // an error that would claim nothing changed.
        let cleanup = stage::unpin(&repo.git, &pin_ref)
            .and_then(|()| j.remove(&repo.git_dir).map_err(journal_err));
        if let Err(e) = cleanup {
            notes.push(format!(
                "warning: the patch was applied, but cleaning up its transaction failed ({e}); the next run (or `patchgate recover`) finishes it"
            ));
        }
    }
    crate::timing::mark("cleaned up");
    Ok(Done {
        id: id.to_string(),
        commit: staging.commit(),
        notes,
    })
}

/// The journal of a transaction, before anything user-visible changes.
fn journal_for(
    repo: &Repo,
    req: &Request,
    id: &str,
    new_commit: Option<Oid>,
    files: Vec<journal::FileEntry>,
) -> Journal {
    Journal {
        version: journal::VERSION,
        id: id.to_string(),
        pid: std::process::id(),
        mode: req.mode,
        phase: Phase::Staged,
        pin_ref: stage::pin_ref(&repo.git_dir, id),
        refname: req.refname.map(str::to_string),
        old_oid: req.old_tip.map(|o| o.to_string()),
        new_commit: new_commit.map(|o| o.to_string()),
        workdir: repo.workdir.clone().filter(|_| req.mode != Mode::Branch),
        files,
        new_dirs: if req.mode == Mode::Branch {
            Vec::new()
        } else {
            super::missing_parents(&repo.roots, req.changes)
        },
        record: req.record_lines.clone(),
        history: Some(req.history.clone()),
    }
}

/// Saves the landed transaction's history entry and appends its lines to the re-run record (loaded
/// here when the caller did not hand it over); a failure of either is a warning in `notes`.
/// Whether the history entry was written.
fn keep_history_and_record(
    repo: &Repo,
    j: &Journal,
    pinned: Option<Oid>,
    entry: Option<history::Ahead>,
    record: Option<&mut Record>,
    notes: &mut Vec<String>,
) -> bool {
    let kept = match history::record(&repo.git, &repo.git_dir, j, pinned, entry) {
        Ok(()) => true,
        Err(e) => {
            notes.push(format!(
                "warning: the patch was written, but its undo history could not be saved ({e}); `patchgate undo` will not know it"
            ));
            false
        }
    };
    let mut loaded;
    let record = match record {
        Some(r) => r,
        None => {
            loaded = Record::default();
            if !j.record.is_empty() {
                loaded = Record::load(&repo.git_dir);
            }
            &mut loaded
        }
    };
    if let Err(e) = record.append(&j.record) {
        // The edits landed; only a retry's `already_applied` is weakened.
        notes.push(format!(
            "warning: could not update the re-run record in {}: {e}",
            crate::fs::layout::root(&repo.git_dir).display()
        ));
    }
    kept
}

/// The user-visible switch. On error, everything it changed has been undone; `Ok(Some(warning))`
/// means the commit is published but a step after it (the index) must be finished by `recover`.
fn switch(
    repo: &Repo,
    mode: Mode,
    j: &mut Journal,
    changes: &[PathChange],
    refname: Option<&str>,
    old_tip: Option<Oid>,
    staging: &mut Staging,
) -> Result<Option<String>, Error> {
    let git_dir = repo.git_dir.clone();
    let msg = |m: &str| format!("patchgate: {m}");
    let new_commit = staging.commit();
    match mode {
        Mode::Worktree => write_files(repo, j, changes, staging).map(|()| None),
        Mode::Commit => {
            let (refname, new_commit) = match (refname, new_commit) {
                (Some(r), Some(c)) => (r, c),
                _ => return Err(internal("commit mode without a ref or commit")),
            };
            // Fail early (before touching files) when HEAD already moved; the CAS below is what
            // makes it exact.
            let (_, now) = commit::head_target(&repo.git)?;
            if now != old_tip {
                return Err(Error::RefMoved {
                    refname: refname.to_string(),
                    detail: "HEAD changed since the patch was planned".into(),
                });
            }
            write_files(repo, j, changes, staging)?;
            crate::timing::mark("commit: files written");
            fault::point("before-cas");
            if let Err(e) =
                commit::compare_and_swap(&repo.git, refname, new_commit, old_tip, &msg("commit"))
            {
                // Not published: put the files back.
                let _ = j.set_phase(Phase::RollingBack, &git_dir);
                if let Some(workdir) = &repo.workdir {
                    match recover::undo(&repo.git, workdir, j) {
                        Ok((_, left)) if !left.is_empty() => {
                            return Err(Error::UndoneExcept {
                                cause: e.to_string(),
                                left,
                            });
                        }
                        Ok(_) => {}
                        Err(_) => {
                            return Err(Error::RollbackFailed {
                                paths: j.files.iter().map(|f| f.path.clone()).collect(),
                            });
                        }
                    }
                }
                return Err(e);
            }
            fault::point("after-cas");
            crate::timing::mark("commit: ref moved");
            let workdir = repo.require_workdir()?;
            let paths: Vec<String> = changes.iter().map(|c| c.rel.clone()).collect();
            if let Err(e) = commit::update_index(&repo.git, &git_dir, workdir, &paths, &j.files) {
                return Ok(Some(format!(
                    "warning: committed, but the index could not be updated ({e}); run `patchgate recover`"
                )));
            }
            fault::point("after-index");
            Ok(None)
        }
        Mode::Branch => {
            let (refname, new_commit) = match (refname, new_commit) {
                (Some(r), Some(c)) => (r, c),
                _ => return Err(internal("branch mode without a ref or commit")),
            };
            commit::compare_and_swap(
                &repo.git,
                refname,
                new_commit,
                old_tip,
                &msg("commit on branch"),
            )?;
            fault::point("after-cas");
            Ok(None)
        }
    }
}

/// The write-back of the changes, once the objects are staged (recovery may need them from the
/// first replaced file on); the journal says `RollingBack` before an undo. Otherwise it stays
/// `staged` on disk through the switch: recovery goes by facts, not by the phase (the history
/// entry for the working tree, the ref for a commit: see `recover`), so a `switching` or
/// `committed` written here, each a file and a folder synced, would decide nothing.
fn write_files(
    repo: &Repo,
    j: &mut Journal,
    changes: &[PathChange],
    staging: &mut Staging,
) -> Result<(), Error> {
    let git_dir = &repo.git_dir;
    let mut before_switch = || staging.wait();
    let mut jb = j.clone();
    let mut before_rollback = || {
        let _ = jb.set_phase(Phase::RollingBack, git_dir);
    };
    super::write_back(
        &repo.roots,
        changes,
        super::Hooks {
            before_switch: &mut before_switch,
            before_rollback: &mut before_rollback,
        },
    )?;
    Ok(())
}

fn internal(what: &str) -> Error {
    Error::Internal {
        message: what.to_string(),
        help: "please report this".into(),
    }
}
