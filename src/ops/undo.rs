//! `undo`: revert a patch that patchgate wrote, only if nothing changed it since.
//!
//! The patch comes from the history (`txn::history`): the last one still in effect, or the one
//! named. Its files must each hold exactly what it wrote (in the working tree; for a committed
//! patch, in the ref's tip too), else nothing is written and every file that changed is named
//! (exit 4). The revert is then an ordinary transaction (`txn::run`), with the same journal,
//! fault points and recovery as `apply`:
//! - a working-tree patch: each file back to its state before (created files removed, deleted
//!   ones restored with their mode, moves moved back);
//! - a committed patch: a revert commit on the same ref by compare-and-swap; when that ref is the
//!   one checked out here, the working tree and index entries of its files follow, as `apply
//!   --commit` does; otherwise only the ref moves, as `apply --branch` does. A later unrelated
//!   commit on the ref is fine: only the patch's files are reverted.
//!
//! The undo is recorded in the history like any patch, so undoing it redoes the original.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::Oid;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Context;

use crate::error::Error;
use crate::plan::{ChangeKind, Disk, FileChange, PathChange, Plan};
use crate::repo::Repo;
use crate::repo::blob_id;
use crate::report::{Report, Status};
use crate::txn::history::{self, Entry, Kind, Meta, Move};
use crate::txn::journal::{Mode, State};
use crate::txn::{commit, lock, recover, run};

/// Which patch to undo.
#[derive(Debug, Clone, Default, clap::Args, Deserialize, JsonSchema)]
pub struct Request {
    /// The patch to undo (a `patch_id` from a report, or a unique prefix of one); default: the
    /// last patch that is still in effect. Undoing an undo redoes the patch.
    pub patch_id: Option<String>,
    /// Check that the patch can be undone and show what would be restored; write nothing.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
}

/// One patch of the history, as `patchgate undo --list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryItem {
    pub patch_id: String,
    pub kind: Kind,
    /// The patch this one undid (kind `undo`).
    pub undoes: Option<String>,
    /// The later patch that undid this one, if its effect is reverted.
    pub undone_by: Option<String>,
    /// Seconds since the epoch.
    pub time: u64,
    pub mode: Mode,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub message: String,
    pub files: Vec<String>,
}

/// The history of this working tree, newest first.
pub fn list(ctx: &Context) -> Result<Vec<HistoryItem>, Error> {
    let repo = Repo::discover(&ctx.dir)?;
    let entries = checked_history(&repo)?;
    let undone = history::undone(&entries);
    Ok(entries
        .iter()
        .rev()
        .map(|e| HistoryItem {
            patch_id: e.patch_id.clone(),
            kind: e.kind,
            undoes: e.undoes.clone(),
            undone_by: undone.get(&e.patch_id).cloned(),
            time: e.time,
            mode: e.mode,
            branch: e.refname.as_deref().map(short_ref),
            commit: e.commit.clone(),
            message: e.subject().to_string(),
            files: e.files.iter().map(|f| f.path.clone()).collect(),
        })
        .collect())
}

/// The history, every entry valid: a damaged or forged entry is refused (naming its file and
/// field), never acted on, and never silently skipped either (it may be the patch to undo).
fn checked_history(repo: &Repo) -> Result<Vec<Entry>, Error> {
    let (entries, mut bad) = history::load_checked(&repo.git_dir);
    match bad.is_empty() {
        true => Ok(entries),
        false => Err(bad.swap_remove(0)),
    }
}

fn short_ref(r: &str) -> String {
    r.strip_prefix("refs/heads/").unwrap_or(r).to_string()
}

/// Undoes a patch; `Err` when the run could not start (no repository, a lock, an unknown id);
/// a refusal because files changed since is a report with `changed_since` (exit 4).
pub fn run(request: &Request, ctx: &Context) -> Result<Report, Error> {
    let repo = Repo::discover(&ctx.dir)?;
    lock::check_state(&repo.git)?;
    let (mutex, notes) = recover_first(&repo)?;
    let entries = checked_history(&repo)?;
    let undone = history::undone(&entries);
    let target = pick(&entries, &undone, request.patch_id.as_deref())?;
    let mut report = Report::empty(Status::Applied);
    report.notes = notes;
    report.undid = Some(target.patch_id.clone());

    let place = place_of(&repo, target)?;
    let (plan, commit_as) = match plan_undo(&repo, target, &place)? {
        Ok(p) => p,
        Err(Refused::Changed(paths)) => {
            report.changed_since = paths.clone();
            report.fail(&Error::ChangedSince {
                id: target.patch_id.clone(),
                paths,
            });
            return Ok(report);
        }
        Err(Refused::ThroughSymlink { path, link }) => {
            report.fail(&Error::ThroughSymlink {
                id: target.patch_id.clone(),
                path,
                link,
            });
            return Ok(report);
        }
    };
    report.list_files(&plan);
    if request.dry_run {
        report.status = Status::DryRun;
        return Ok(report);
    }
    let _mutex = recover::lock_for_switch(&repo.git, &repo.git_dir, mutex, "undo")?;
    write_revert(&repo, target, &place, &plan, commit_as, report)
}

/// An interrupted transaction is finished before anything is read (holding the mutex from
/// then on), with a note saying so.
fn recover_first(repo: &Repo) -> Result<(Option<lock::Mutex>, Vec<String>), Error> {
    if !recover::pending(&repo.git, &repo.git_dir) {
        return Ok((None, Vec::new()));
    }
    let mutex = lock::acquire(&repo.git_dir)?;
    let notes = recover::recover_all(&repo.git, &repo.git_dir)?
        .iter()
        .map(|r| format!("note: finished an interrupted transaction ({}) first", r.id))
        .collect();
    Ok((Some(mutex), notes))
}

/// The revert as a transaction of its own, recorded in the history as an undo of `target`.
fn write_revert(
    repo: &Repo,
    target: &Entry,
    place: &Place,
    plan: &Plan,
    commit_as: Vec<(String, State)>,
    mut report: Report,
) -> Result<Report, Error> {
    let message = revert_message(target);
    let base = match place.tip {
        Some(t) => Some(repo.git.find_commit(t).map_err(Error::git)?),
        None => None,
    };
    let meta = Meta {
        kind: Kind::Undo,
        undoes: Some(target.patch_id.clone()),
        message: message.clone(),
        moves: target
            .moves
            .iter()
            .map(|m| Move {
                from: m.to.clone(),
                to: m.from.clone(),
            })
            .collect(),
        time: history::now_secs(),
    };
    let done = run::run(
        repo,
        run::Request {
            mode: place.mode,
            changes: &plan.changes,
            base: base.as_ref(),
            refname: place.refname.as_deref(),
            old_tip: place.tip,
            message: &message,
            commit_as,
            record_lines: Vec::new(),
            record: None,
            history: meta,
            hashed: None,
        },
    );
    match done {
        Ok(d) => {
            if place.mode != Mode::Branch {
                crate::txn::remove_emptied_dirs(&repo.roots, &plan.changes);
            }
            report.notes.extend(d.notes);
            report.patch_id = Some(d.id);
            report.commit = d.commit.map(|o| o.to_string());
            report.branch = place
                .refname
                .as_deref()
                .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_string));
            report.status = if place.mode == Mode::Worktree {
                Status::Applied
            } else {
                Status::Committed
            };
            Ok(report)
        }
        Err(run::Failed::Start(e)) => Err(e),
        Err(run::Failed::Switch(e)) => {
            report.files.clear();
            report.fail(&e);
            Ok(report)
        }
    }
}

/// The patch to undo: the one named (a full id or a unique prefix), else the newest applied
/// patch still in effect.
fn pick<'a>(
    entries: &'a [Entry],
    undone: &HashMap<String, String>,
    id: Option<&str>,
) -> Result<&'a Entry, Error> {
    let recent = || {
        let ids: Vec<String> = entries
            .iter()
            .rev()
            .take(5)
            .map(|e| format!("{} ({})", e.patch_id, e.subject()))
            .collect();
        if ids.is_empty() {
            "the history is empty: no patch has been written in this working tree yet".to_string()
        } else {
            format!(
                "recent patches, newest first: {}; `patchgate undo --list` shows them all",
                ids.join(", ")
            )
        }
    };
    let Some(id) = id else {
        return match entries
            .iter()
            .rev()
            .find(|e| e.kind == Kind::Apply && !undone.contains_key(&e.patch_id))
        {
            Some(e) => Ok(e),
            None if entries.is_empty() => Err(Error::NothingToUndo {
                reason: "no patch has been written in this working tree yet".into(),
                help: "`patchgate undo` reverts what `patchgate apply` wrote; the history keeps the last 50 patches".into(),
            }),
            None => Err(Error::NothingToUndo {
                reason: "every patch in the history is already undone".into(),
                help: format!("to redo, undo an undo by its id: {}", recent()),
            }),
        };
    };
    let exact = entries.iter().find(|e| e.patch_id == id);
    let found = match exact {
        Some(e) => e,
        None => {
            let matches: Vec<&Entry> = entries
                .iter()
                .filter(|e| !id.is_empty() && e.patch_id.starts_with(id))
                .collect();
            match matches.as_slice() {
                [one] => *one,
                _ => {
                    return Err(Error::UnknownPatch {
                        id: id.to_string(),
                        help: recent(),
                    });
                }
            }
        }
    };
    if let Some(by) = undone.get(&found.patch_id) {
        return Err(Error::AlreadyUndone {
            id: found.patch_id.clone(),
            by: by.clone(),
        });
    }
    Ok(found)
}

/// Where the revert is written.
struct Place {
    mode: Mode,
    /// The ref to move (commit modes).
    refname: Option<String>,
    /// Where it is now.
    tip: Option<Oid>,
}

fn place_of(repo: &Repo, e: &Entry) -> Result<Place, Error> {
    if e.mode == Mode::Worktree {
        repo.require_workdir()?;
        return Ok(Place {
            mode: Mode::Worktree,
            refname: None,
            tip: None,
        });
    }
    let Some(refname) = e.refname.clone() else {
        return Err(Error::git_msg(
            format!("the history entry of patch {} names no ref", e.patch_id),
            "the entry is damaged; revert the commit by hand (`git revert`)",
        ));
    };
    // The ref checked out here: the working tree and index follow, as with `apply --commit`.
    if repo.workdir.is_some() {
        let (head_ref, head_tip) = commit::head_target(&repo.git)?;
        if head_ref == refname {
            lock::check_index(&repo.git_dir)?;
            return Ok(Place {
                mode: Mode::Commit,
                refname: Some(refname),
                tip: head_tip,
            });
        }
    }
    if refname == "HEAD" {
        return Err(Error::RefMoved {
            refname,
            detail: "the patch was committed on a detached HEAD that is no longer checked out"
                .into(),
        });
    }
    lock::check_branch_free(&repo.git, &refname)?;
    let tip = repo
        .git
        .refname_to_id(&refname)
        .map_err(|_| Error::RefMoved {
            refname: refname.clone(),
            detail: "the branch no longer exists".into(),
        })?;
    Ok(Place {
        mode: Mode::Branch,
        refname: Some(refname),
        tip: Some(tip),
    })
}

/// What the revert commit records for each path of `e`: the entry of the patch's commit's parent
/// (the inverse of that commit), which is not the restored working-tree content when the patch
/// took uncommitted changes along (`apply --commit` commits a file whole, as `git commit <paths>`
/// does). Those changes go back to the working tree and stay uncommitted. Empty for a
/// working-tree patch, and for a commit without a parent (its tree has nothing to go back to).
fn inverse_of_commit(repo: &Repo, e: &Entry) -> Result<Vec<(String, State)>, Error> {
    if e.mode == Mode::Worktree {
        return Ok(Vec::new());
    }
    let Some(commit) = e.commit.as_deref() else {
        return Ok(Vec::new());
    };
    let commit = Oid::from_str(commit)
        .and_then(|o| repo.git.find_commit(o))
        .map_err(Error::git)?;
    let Ok(parent) = commit.parent(0) else {
        return Ok(Vec::new());
    };
    let tree = parent.tree().map_err(Error::git)?;
    Ok(e.files
        .iter()
        .map(|f| {
            let state = match tree.get_path(Path::new(&f.path)) {
                Err(_) => State::Missing,
                Ok(en) if en.kind() != Some(git2::ObjectType::Blob) => State::Other,
                Ok(en) if en.filemode() == 0o120000 => State::Symlink {
                    oid: en.id().to_string(),
                },
                Ok(en) => State::File {
                    oid: en.id().to_string(),
                    mode: en.filemode() as u32,
                },
            };
            (f.path.clone(), state)
        })
        .collect())
}

/// The state a committed patch's commit records for a file: `new` through git's filters, or,
/// for an undo that kept uncommitted changes out of its commit, the blob it committed instead.
fn committed_state(f: &crate::txn::journal::FileEntry) -> State {
    match (&f.new, f.committed.as_deref()) {
        (_, Some(crate::txn::journal::ABSENT)) if f.uncommitted => State::Missing,
        (State::File { mode, .. }, Some(c)) => State::File {
            oid: c.to_string(),
            mode: *mode,
        },
        (State::Symlink { .. }, Some(c)) if f.uncommitted => State::Symlink { oid: c.to_string() },
        _ => f.new.clone(),
    }
}

type Planned = (Plan, Vec<(String, State)>);

/// Why the files of a patch cannot be restored.
enum Refused {
    /// These paths no longer hold what the patch wrote.
    Changed(Vec<String>),
    /// This path now leads through a symlink (`link`, the first one on the way), which undo
    /// never follows: not a change of the file, and not fixed by editing it.
    ThroughSymlink { path: String, link: String },
}

/// The first folder on the way to `rel` (relative to the working tree) that is a symlink now, when
/// the path cannot be reached from the root without following one.
fn symlink_on_path(repo: &Repo, rel: &str) -> Option<String> {
    match repo.roots.fs().parent_of(rel) {
        Err(e) if crate::fs::is_symlink_error(&e) => {}
        _ => return None,
    }
    let root = &repo.roots.root;
    let parts: Vec<&str> = rel.split('/').collect();
    (1..parts.len())
        .map(|n| parts[..n].join("/"))
        .find(|p| std::fs::symlink_metadata(root.join(p)).is_ok_and(|m| m.file_type().is_symlink()))
        .or_else(|| Some(rel.rsplit_once('/').map_or(rel, |(p, _)| p).to_string()))
}

/// The changes that revert `e` at `place` and what the revert commit records where that is not
/// their working-tree content, or why they cannot be made.
fn plan_undo(repo: &Repo, e: &Entry, place: &Place) -> Result<Result<Planned, Refused>, Error> {
    let tree = match place.tip {
        Some(t) if place.mode != Mode::Worktree => Some(
            repo.git
                .find_commit(t)
                .and_then(|c| c.tree())
                .map_err(Error::git)?,
        ),
        _ => None,
    };
    let mut changed = Vec::new();
    let mut changes = Vec::new();
    for f in &e.files {
        if matches!(f.old, State::Other) || matches!(f.new, State::Other) {
            return Err(Error::git_msg(
                format!(
                    "patch {} changed {} from or to something that is not a file",
                    e.patch_id, f.path
                ),
                "undo it by hand",
            ));
        }
        // A patch that changed the executable bit must find it as it left it; otherwise the
        // mode is the user's business and is kept.
        let mode_changed = match (&f.old, &f.new) {
            (State::File { mode: a, .. }, State::File { mode: b, .. }) => {
                executable(*a) != executable(*b)
            }
            _ => false,
        };
        // A commit records the new content as git's filters stored it, which may not be the
        // working-tree bytes (`txn::filters`).
        let committed = committed_state(f);
        let in_tree_ok = match &tree {
            Some(t) => tree_holds(t, &f.path, &committed, mode_changed),
            None => true,
        };
        let (current, expected) = match place.mode {
            Mode::Branch => match &tree {
                Some(t) => (disk_in_tree(repo, t, &f.path)?, &committed),
                None => (Disk::Missing, &committed),
            },
            _ => {
                if let Some(link) = symlink_on_path(repo, &f.path) {
                    return Ok(Err(Refused::ThroughSymlink {
                        path: f.path.clone(),
                        link,
                    }));
                }
                (crate::plan::disk_at(repo.roots.fs(), &f.path), &f.new)
            }
        };
        if !in_tree_ok || !disk_holds(&current, expected, mode_changed) {
            changed.push(f.path.clone());
            continue;
        }
        let after = restore(repo, &f.old, &current, mode_changed)?;
        if after != current {
            changes.push(PathChange {
                rel: f.path.clone(),
                before: current,
                after,
                read: None,
                ids: None,
            });
        }
    }
    if !changed.is_empty() {
        return Ok(Err(Refused::Changed(changed)));
    }
    let files = file_changes(&changes, &e.moves);
    let mut commit_as = inverse_of_commit(repo, e)?;
    commit_as.retain(|(p, _)| changes.iter().any(|c| c.rel == *p));
    Ok(Ok((
        Plan {
            outcomes: Vec::new(),
            changes,
            files,
            digests: Vec::new(),
            patch_digest: None,
            final_state: Vec::new(),
        },
        commit_as,
    )))
}

/// Whether a file mode (as recorded or on disk) is executable.
fn executable(mode: u32) -> bool {
    mode != crate::fs::NEW_FILE_MODE && mode & 0o111 != 0
}

/// Whether a path's state is the one recorded: by content, and by the executable bit when the
/// patch changed it (`exec`).
fn disk_holds(disk: &Disk, state: &State, exec: bool) -> bool {
    match (state, disk) {
        (State::Missing, Disk::Missing) => true,
        (State::File { oid, mode }, Disk::File { bytes, mode: now }) => {
            blob_id(bytes).to_string() == *oid && (!exec || executable(*mode) == executable(*now))
        }
        (State::Symlink { oid }, Disk::Symlink { target }) => {
            blob_id(target.as_os_str().as_encoded_bytes()).to_string() == *oid
        }
        _ => false,
    }
}

fn tree_holds(tree: &git2::Tree, path: &str, state: &State, exec: bool) -> bool {
    let entry = tree.get_path(Path::new(path)).ok();
    match (state, entry) {
        (State::Missing, None) => true,
        (State::File { oid, mode }, Some(en)) => {
            en.kind() == Some(git2::ObjectType::Blob)
                && en.filemode() != 0o120000
                && en.id().to_string() == *oid
                && (!exec || executable(*mode) == (en.filemode() == 0o100755))
        }
        (State::Symlink { oid }, Some(en)) => {
            en.filemode() == 0o120000 && en.id().to_string() == *oid
        }
        _ => false,
    }
}

fn blob(repo: &Repo, oid: &str) -> Result<Vec<u8>, Error> {
    let o = Oid::from_str(oid).map_err(Error::git)?;
    let b = repo.git.find_blob(o).map_err(|e| {
        Error::git_caused(
            format!(
                "the content recorded for undo is gone from the object database: {}",
                e.message()
            ),
            "the history's pins under refs/patchgate/history/ were removed; this patch can only \
             be reverted by hand",
            e,
        )
    })?;
    Ok(b.content().to_vec())
}

fn disk_in_tree(repo: &Repo, tree: &git2::Tree, path: &str) -> Result<Disk, Error> {
    let Ok(en) = tree.get_path(Path::new(path)) else {
        return Ok(Disk::Missing);
    };
    if en.kind() != Some(git2::ObjectType::Blob) {
        return Ok(Disk::Other);
    }
    let bytes = blob(repo, &en.id().to_string())?;
    Ok(match en.filemode() {
        0o120000 => Disk::Symlink {
            target: PathBuf::from(String::from_utf8_lossy(&bytes).into_owned()),
        },
        m => Disk::File {
            bytes: Arc::new(bytes),
            mode: if m & 0o111 != 0 { 0o755 } else { 0o644 },
        },
    })
}

/// The state to restore: the recorded one, with the mode the file has now when it still exists
/// (a later `chmod` is the user's), its executable bit put back when the patch changed it.
fn restore(repo: &Repo, state: &State, current: &Disk, exec: bool) -> Result<Disk, Error> {
    Ok(match state {
        State::Missing | State::Other => Disk::Missing,
        State::File { oid, mode } => {
            let mode = match current {
                Disk::File { mode: now, .. } if exec && executable(*mode) => {
                    now | ((now & 0o444) >> 2)
                }
                Disk::File { mode: now, .. } if exec => now & !0o111,
                Disk::File { mode: now, .. } => *now,
                _ => *mode,
            };
            Disk::File {
                bytes: Arc::new(blob(repo, oid)?),
                mode,
            }
        }
        State::Symlink { oid } => Disk::Symlink {
            target: PathBuf::from(String::from_utf8_lossy(&blob(repo, oid)?).into_owned()),
        },
    })
}

/// The files as the report shows them: a move back is one entry, from where the patch moved it.
fn file_changes(changes: &[PathChange], moves: &[Move]) -> Vec<FileChange> {
    let by_path: HashMap<&str, &PathChange> = changes.iter().map(|c| (c.rel.as_str(), c)).collect();
    let mut out = Vec::new();
    let mut shown: Vec<&str> = Vec::new();
    for m in moves {
        if let (Some(to), Some(from)) = (by_path.get(m.to.as_str()), by_path.get(m.from.as_str()))
            && from.before == Disk::Missing
            && to.after == Disk::Missing
        {
            out.push(FileChange::new(
                m.from.clone(),
                Some(m.to.clone()),
                ChangeKind::Renamed,
                &to.before,
                &from.after,
            ));
            shown.extend([m.from.as_str(), m.to.as_str()]);
        }
    }
    for c in changes {
        if shown.contains(&c.rel.as_str()) {
            continue;
        }
        let change = match (&c.before, &c.after) {
            (Disk::Missing, _) => ChangeKind::Created,
            (_, Disk::Missing) => ChangeKind::Deleted,
            _ => ChangeKind::Modified,
        };
        out.push(FileChange::new(
            c.rel.clone(),
            None,
            change,
            &c.before,
            &c.after,
        ));
    }
    out
}

/// `Revert "<subject>"` as git writes it, and `Reapply "<subject>"` for the revert of a revert.
fn revert_message(e: &Entry) -> String {
    let subject = e.subject();
    let title = match subject
        .strip_prefix("Revert \"")
        .and_then(|s| s.strip_suffix('"'))
    {
        Some(inner) => format!("Reapply \"{inner}\""),
        None => format!("Revert \"{subject}\""),
    };
    let what = match &e.commit {
        Some(c) => format!("This reverts commit {c}."),
        None => format!("This reverts patchgate patch {}.", e.patch_id),
    };
    format!("{title}\n\n{what}\n")
}
