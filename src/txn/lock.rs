//! Preconditions of a transaction: one patchgate at a time per repository, no git operation in
//! progress, and (for commits) an index nobody else holds.
//!
//! The mutual exclusion is an advisory `flock` on `<git dir>/patchgate/mutex`, not a lock file
//! that exists only while held: the kernel releases an flock when its process dies, so a `kill -9`
//! can never leave a stale lock that blocks the next run, and no "is that pid still alive?" guess
//! (with pid reuse) is ever needed. The file itself stays; it holds the last holder's pid, for
//! the message a second run prints.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

use git2::{Repository, RepositoryState};

use crate::error::Error;

/// Held for the whole transaction; released on drop (or by the kernel on any exit).
#[derive(Debug)]
pub struct Mutex {
    _file: File,
}

pub fn acquire(git_dir: &Path) -> Result<Mutex, Error> {
    let dir = git_dir.join("patchgate");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let path = dir.join("mutex");
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::io("open", &path, e))?;
    // SAFETY: flock(2) on a descriptor we own; no memory is involved.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        let pid = text.trim().parse().unwrap_or(0);
        return Err(Error::Busy { pid });
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = writeln!(file, "{}", std::process::id());
    Ok(Mutex { _file: file })
}

/// Refuses to run in the middle of a merge, rebase, cherry-pick, revert, bisect or `git am`.
pub fn check_state(repo: &Repository) -> Result<(), Error> {
    let state = match repo.state() {
        RepositoryState::Clean => return Ok(()),
        RepositoryState::Merge => "merge",
        RepositoryState::Revert | RepositoryState::RevertSequence => "revert",
        RepositoryState::CherryPick | RepositoryState::CherryPickSequence => "cherry-pick",
        RepositoryState::Bisect => "bisect",
        RepositoryState::Rebase
        | RepositoryState::RebaseInteractive
        | RepositoryState::RebaseMerge => "rebase",
        RepositoryState::ApplyMailbox | RepositoryState::ApplyMailboxOrRebase => "`git am`",
    };
    Err(Error::RepoState {
        state: state.into(),
    })
}

/// For commits: no git command may be running on this repository (inside a hook, git exports
/// `GIT_INDEX_FILE` and is about to move HEAD itself), and the index must not be locked.
pub fn check_index(git_dir: &Path) -> Result<(), Error> {
    if std::env::var_os("GIT_INDEX_FILE").is_some() {
        return Err(Error::InsideGit);
    }
    let lock = git_dir.join("index.lock");
    if lock.exists() {
        return Err(Error::IndexLocked { path: lock });
    }
    Ok(())
}

/// For `--branch`: the branch must not be checked out in any worktree of the repository.
pub fn check_branch_free(repo: &Repository, refname: &str) -> Result<(), Error> {
    let checked_out = |r: &Repository| {
        r.find_reference("HEAD")
            .ok()
            .and_then(|h| h.symbolic_target().map(|t| t == refname))
            .unwrap_or(false)
    };
    let name = refname.trim_start_matches("refs/heads/").to_string();
    if !repo.is_bare() && checked_out(repo) {
        return Err(Error::BranchCheckedOut {
            name,
            worktree: repo.workdir().unwrap_or(repo.path()).to_path_buf(),
        });
    }
    // From a linked worktree, `worktrees()` lists only the linked ones: the main worktree is the
    // common dir's.
    if repo.is_worktree()
        && let Ok(main) = Repository::open(repo.commondir())
        && !main.is_bare()
        && checked_out(&main)
    {
        return Err(Error::BranchCheckedOut {
            name,
            worktree: main.workdir().unwrap_or(main.path()).to_path_buf(),
        });
    }
    if let Ok(names) = repo.worktrees() {
        for wt_name in names.iter().flatten() {
            if let Ok(wt) = repo.find_worktree(wt_name)
                && let Ok(r) = Repository::open_from_worktree(&wt)
                && checked_out(&r)
            {
                return Err(Error::BranchCheckedOut {
                    name,
                    worktree: wt.path().to_path_buf(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_the_lock_dies_with_its_holder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = acquire(dir.path()).expect("first");
        match acquire(dir.path()) {
            Err(Error::Busy { pid }) => assert_eq!(pid, std::process::id()),
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(held);
        acquire(dir.path()).expect("free again");
    }
}
