//! Finding the repository a run works in.
//!
//! The repository is discovered from the starting directory (`-C DIR`, else the current one), the
//! way `git` does. Paths in a patch are relative to the working tree's root, never to the directory
//! patchgate was started in, so a patch means the same thing wherever it is run from.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::plan::paths::Roots;

pub struct Repo {
    pub git: git2::Repository,
    pub roots: Roots,
    /// This working tree's own git directory (`.git`, or `.git/worktrees/NAME` for a linked one).
    pub git_dir: PathBuf,
}

impl Repo {
    pub fn discover(start: &Path) -> Result<Repo, Error> {
        let git = git2::Repository::discover(start).map_err(|e| match e.code() {
            git2::ErrorCode::NotFound => Error::NotARepo {
                path: start.to_path_buf(),
            },
            _ => Error::git(e),
        })?;
        let workdir = git.workdir().ok_or_else(|| Error::BareRepo {
            path: git.path().to_path_buf(),
        })?;
        let root = std::fs::canonicalize(workdir).map_err(|e| Error::io("resolve", workdir, e))?;
        let git_dir =
            std::fs::canonicalize(git.path()).map_err(|e| Error::io("resolve", git.path(), e))?;
        let mut git_dirs = vec![git_dir.clone()];
        if let Ok(common) = std::fs::canonicalize(git.commondir())
            && common != git_dir
        {
            git_dirs.push(common);
        }
        Ok(Repo {
            git,
            roots: Roots { root, git_dirs },
            git_dir,
        })
    }
}
