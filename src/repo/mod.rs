//! Finding the repository a run works in.
//!
//! The repository is discovered from the starting directory (`-C DIR`, else the current one), the
//! way `git` does, and honours `GIT_DIR`/`GIT_WORK_TREE` when they are set, because inside a git
//! hook they are how git says which repository the hook is running for. Paths in a patch are
//! relative to the working tree's root, never to the directory patchgate was started in, so a
//! patch means the same thing wherever it is run from.

use std::path::{Path, PathBuf};

use crate::error::Error;

mod durable;
pub mod index;
mod roots;

pub use durable::{durable_git, git_fsync_args};
pub use roots::{PlainDirs, Resolved, Roots, rel_path, within};

/// A handle on a repository being opened on another thread.
type Opening = std::sync::mpsc::Receiver<Result<git2::Repository, git2::Error>>;

/// A second handle on a repository, being opened on another thread ([`Repo::open_second_ahead`]).
pub struct Second {
    path: PathBuf,
    ahead: Option<Opening>,
}

impl Second {
    /// The handle opened ahead (waiting for it if it is still being opened), or, when there is
    /// none or it failed, one opened now.
    pub fn open(self) -> Result<git2::Repository, git2::Error> {
        match self.ahead.and_then(|rx| rx.recv().ok()) {
            Some(Ok(repo)) => Ok(repo),
            _ => git2::Repository::open(&self.path),
        }
    }
}

pub struct Repo {
    pub git: git2::Repository,
    /// Canonical working tree root; for a bare repository, its git dir (nothing is read from it).
    pub roots: Roots,
    /// This working tree's own git directory (`.git`, or `.git/worktrees/NAME` for a linked one).
    pub git_dir: PathBuf,
    pub workdir: Option<PathBuf>,
    /// A second handle being opened ahead, for a transaction's staging thread.
    second: std::sync::Mutex<Option<Opening>>,
}

fn env_path(name: &str, base: &Path) -> Option<PathBuf> {
    let v = std::env::var_os(name).filter(|v| !v.is_empty())?;
    let p = PathBuf::from(v);
    Some(if p.is_absolute() { p } else { base.join(p) })
}

impl Repo {
    pub fn discover(start: &Path) -> Result<Repo, Error> {
        durable_git();
        let not_found = |e: git2::Error| match e.code() {
            git2::ErrorCode::NotFound => Error::NotARepo {
                path: start.to_path_buf(),
            },
            // libgit2 opens SHA-1 repositories only; staged objects are named by SHA-1 too.
            _ if e.message().contains("object format") => Error::git_caused(
                format!("cannot open the repository: {}", e.message()),
                "patchgate works on SHA-1 repositories only (`git init` without \
                 --object-format=sha256)",
                e,
            ),
            _ => Error::git(e),
        };
        let git = match env_path("GIT_DIR", start) {
            Some(dir) => {
                let git = git2::Repository::open(&dir).map_err(not_found)?;
                if let Some(wt) = env_path("GIT_WORK_TREE", start) {
                    git.set_workdir(&wt, false).map_err(Error::git)?;
                }
                git
            }
            None => git2::Repository::discover(start).map_err(not_found)?,
        };
        let git_dir =
            std::fs::canonicalize(git.path()).map_err(|e| Error::io("resolve", git.path(), e))?;
        let workdir = match git.workdir() {
            Some(w) => Some(std::fs::canonicalize(w).map_err(|e| Error::io("resolve", w, e))?),
            None => None,
        };
        let mut git_dirs = vec![git_dir.clone()];
        if let Ok(common) = std::fs::canonicalize(git.commondir())
            && common != git_dir
        {
            git_dirs.push(common);
        }
        let root = workdir.clone().unwrap_or_else(|| git_dir.clone());
        let roots = Roots::new(root.clone(), git_dirs).map_err(|e| Error::io("open", &root, e))?;
        Ok(Repo {
            roots,
            git,
            git_dir,
            workdir,
            second: std::sync::Mutex::new(None),
        })
    }

    /// Starts opening a second handle on this repository on another thread, for a transaction
    /// that will stage its objects on one ([`Repo::second`]): opening a repository reads its
    /// configuration files, and the staging thread, which started by doing that, was what the
    /// switch of a one-edit patch waited for. Opened while the plan is made, on a core that is
    /// idle then. Nothing happens if no thread can be started.
    pub fn open_second_ahead(&self) {
        let path = self.git.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        let started = std::thread::Builder::new()
            .name("open".into())
            .spawn(move || {
                // The receiver may be gone (the run wrote nothing): the handle is then dropped.
                let _ = tx.send(git2::Repository::open(&path));
            })
            .is_ok();
        if started && let Ok(mut slot) = self.second.lock() {
            *slot = Some(rx);
        }
    }

    /// A second handle on this repository, to be opened on the thread that uses it: the one
    /// [`Repo::open_second_ahead`] started, or a new one.
    pub fn second(&self) -> Second {
        Second {
            path: self.git.path().to_path_buf(),
            ahead: self.second.lock().ok().and_then(|mut slot| slot.take()),
        }
    }

    /// The working tree, or the error that says this repository has none.
    pub fn require_workdir(&self) -> Result<&Path, Error> {
        self.workdir.as_deref().ok_or_else(|| Error::BareRepo {
            path: self.git_dir.clone(),
        })
    }
}

/// The blob id git gives `bytes`.
pub fn blob_id(bytes: &[u8]) -> git2::Oid {
    blob_id_of_parts(&[bytes])
}

/// The blob id git gives the concatenation of `parts`.
pub fn blob_id_of_parts(parts: &[&[u8]]) -> git2::Oid {
    use sha1::{Digest, Sha1};
    let mut h = Sha1::new();
    let len: usize = parts.iter().map(|p| p.len()).sum();
    h.update(format!("blob {len}\0").as_bytes());
    for p in parts {
        h.update(p);
    }
    let digest = h.finalize();
    // A SHA-1 digest is 20 bytes: exactly an Oid.
    git2::Oid::from_bytes(&digest).unwrap_or_else(|_| git2::Oid::zero())
}

/// Runs the real git in unit tests.
#[cfg(test)]
pub(crate) mod test_git {
    use std::path::Path;

    /// Runs git in `dir` with the system configuration ignored and `env` set, and fails the test
    /// unless it succeeds; returns its stderr, where `git fsck` writes its warnings.
    pub(crate) fn git_ok(dir: &Path, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .envs(env.iter().copied())
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}
