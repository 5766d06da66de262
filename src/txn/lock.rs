//! Preconditions of a transaction: one patchgate at a time per repository, no git operation in
//! progress, and (for commits) an index nobody else holds.
//!
//! The mutual exclusion is an advisory `flock` on `<git dir>/patchgate/mutex`, not a lock file
//! that exists only while held: the kernel releases an flock when its process dies, so a `kill -9`
//! can never leave a stale lock that blocks the next run, and no "is that pid still alive?" guess
//! (with pid reuse) is ever needed. The file itself stays; it holds the last holder's pid, for
//! the message a second run prints.
//!
//! One subtlety: an flock belongs to the open file description, and a child being spawned shares
//! our descriptors until its `exec` closes them (they are close-on-exec). If patchgate is killed
//! while it is spawning `git`, that orphan holds the lock for the instant until its `exec`; and
//! in a process that uses the library, any thread's spawn briefly holds a copy of a lock another
//! thread has just released. So a busy lock whose recorded holder is dead (or is this very
//! process) is polled for a few seconds instead of refused: the copy goes as soon as the child
//! runs. A live foreign holder is refused after a short grace.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use git2::{Repository, RepositoryState};

use crate::error::Error;

/// Held for the whole transaction; released on drop (or by the kernel on any exit).
#[derive(Debug)]
pub struct Mutex {
    _file: File,
}

pub fn acquire(git_dir: &Path) -> Result<Mutex, Error> {
    let dir = crate::fs::layout::root(git_dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let path = crate::fs::layout::mutex(git_dir);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::io("open", &path, e))?;
    let start = Instant::now();
    loop {
        // SAFETY: flock(2) on a descriptor we own; no memory is involved.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            break;
        }
        let mut text = String::new();
        let _ = file.rewind();
        let _ = file.read_to_string(&mut text);
        // Empty: the holder has just taken the lock and not yet written its pid; ask again.
        let pid: u32 = text.trim().parse().unwrap_or(0);
        let foreign = pid != 0 && pid != std::process::id() && alive(pid);
        let grace = if foreign { LIVE_GRACE } else { ORPHAN_GRACE };
        if start.elapsed() >= grace {
            return Err(Error::Busy { pid });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = writeln!(file, "{}", std::process::id());
    Ok(Mutex { _file: file })
}

/// How long a lock held by a dead holder's orphaned child is waited for (see the module doc).
const ORPHAN_GRACE: Duration = Duration::from_secs(5);
/// A live patchgate may be finishing: a moment's patience costs little, a refusal costs a re-run.
const LIVE_GRACE: Duration = Duration::from_millis(200);

fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists; EPERM means it does.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
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
        // A foreign live holder: a child process that keeps the locked description.
        let mut holder = keep_lock_in_child(&held, "2");
        std::fs::write(
            dir.path().join("patchgate/mutex"),
            format!("{}\n", holder.id()),
        )
        .expect("pid");
        drop(held);
        let start = Instant::now();
        match acquire(dir.path()) {
            Err(Error::Busy { pid }) => assert_eq!(pid, holder.id()),
            other => panic!("expected Busy, got {other:?}"),
        }
        assert!(
            start.elapsed() < ORPHAN_GRACE,
            "a live holder is refused after a short grace"
        );
        holder.wait().expect("holder");
        acquire(dir.path()).expect("free again");
    }

    /// Spawns `sleep secs` holding a copy of the lock's descriptor, as a child in its spawn window.
    fn keep_lock_in_child(held: &Mutex, secs: &str) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        let fd = held._file.as_raw_fd();
        let mut sleeper = std::process::Command::new("sleep");
        sleeper.arg(secs);
        // SAFETY: only async-signal-safe fcntl between fork and exec.
        unsafe {
            sleeper.pre_exec(move || {
                libc::fcntl(fd, libc::F_SETFD, 0);
                Ok(())
            });
        }
        sleeper.spawn().expect("spawn sleep")
    }

    /// The orphan case of the module doc: a process that is not a patchgate shares the locked
    /// descriptor while the recorded holder is long dead. The next run must wait for it, not
    /// report a busy repository.
    #[test]
    fn a_lock_kept_by_a_dead_holders_orphan_is_waited_for() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = acquire(dir.path()).expect("first");
        let mut sleeper = keep_lock_in_child(&held, "1");
        // A pid that existed and is gone: a reaped child's.
        let mut dead = std::process::Command::new("true").spawn().expect("true");
        let dead_pid = dead.id();
        dead.wait().expect("wait");
        std::fs::write(dir.path().join("patchgate/mutex"), format!("{dead_pid}\n")).expect("pid");
        drop(held);
        let start = Instant::now();
        let again = acquire(dir.path());
        sleeper.wait().expect("sleeper");
        assert!(again.is_ok(), "refused: {again:?}");
        assert!(
            start.elapsed() >= Duration::from_millis(100),
            "the lock was not held at all"
        );
    }
}
