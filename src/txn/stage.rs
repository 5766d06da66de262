//! Staging: the post-patch state recorded as git objects, and a working directory that holds the
//! patched files for the checkers.
//!
//! Cost is O(edited files), never O(repository): one blob per changed path (and one for its old
//! content, so a crash can always be undone), then `TreeUpdateBuilder` rewrites only the trees on
//! the paths that changed, starting from the base commit's tree. Nothing is checked out.
//!
//! Why not `git worktree add` per run: a full checkout of a 100,000-file repository took 6–59 s
//! here (PRIOR-ART), and removing it as long again. Instead patchgate keeps one directory,
//! `<git dir>/patchgate/worktree/`, that mirrors the staged content of the paths that patches touch;
//! a manifest of blob ids lets each run rewrite only the files whose content differs from what is
//! already there. It is a cache, not a registered git worktree, so `git worktree list` and
//! `git worktree prune` never see it, and a crash cannot leave an orphaned worktree registration.
//!
//! The transaction's objects are pinned by `refs/patchgate/txn/<id>` (a commit whose tree is the
//! staged tree and whose parents are the user-visible commit, if any, and a commit of the old
//! contents), so `git gc` cannot collect them while the transaction lives; the ref is deleted when
//! it ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{FileMode, Oid, Repository, Signature};

use super::journal::{FileEntry, State};
use crate::error::Error;
use crate::plan::{Disk, PathChange};

/// What staging produced.
#[derive(Debug)]
pub struct Staged {
    pub pin_ref: String,
    /// The post-patch tree (base tree + the changes).
    pub tree: Oid,
    /// The commit to publish (commit modes only).
    pub commit: Option<Oid>,
    pub files: Vec<FileEntry>,
}

/// The commit to create, when the mode publishes one.
pub struct CommitSpec<'a> {
    pub message: &'a str,
    pub author: &'a Signature<'a>,
    pub committer: &'a Signature<'a>,
}

fn pin_signature() -> Result<Signature<'static>, Error> {
    Signature::new("patchgate", "patchgate@localhost", &git2::Time::new(0, 0)).map_err(Error::git)
}

fn state_of(repo: &Repository, disk: &Disk, written: &mut Vec<Oid>) -> Result<State, Error> {
    Ok(match disk {
        Disk::Missing => State::Missing,
        Disk::File { bytes, mode } => {
            let oid = repo.blob(bytes).map_err(Error::git)?;
            written.push(oid);
            State::File {
                oid: oid.to_string(),
                mode: *mode,
            }
        }
        Disk::Symlink { target } => {
            let oid = repo
                .blob(target.as_os_str().as_encoded_bytes())
                .map_err(Error::git)?;
            written.push(oid);
            State::Symlink {
                oid: oid.to_string(),
            }
        }
        Disk::Dir | Disk::Other => State::Other,
    })
}

fn file_mode(state: &State) -> Option<(Oid, FileMode)> {
    match state {
        State::File { oid, mode } => Oid::from_str(oid).ok().map(|o| {
            let m = if *mode != super::NEW_FILE_MODE && mode & 0o111 != 0 {
                FileMode::BlobExecutable
            } else {
                FileMode::Blob
            };
            (o, m)
        }),
        State::Symlink { oid } => Oid::from_str(oid).ok().map(|o| (o, FileMode::Link)),
        State::Missing | State::Other => None,
    }
}

/// A tree: `base` with each path set to its state (`new` or `old`).
fn tree_with(
    repo: &Repository,
    base: Option<&git2::Tree>,
    files: &[FileEntry],
    old: bool,
) -> Result<Oid, Error> {
    let empty;
    let base = match base {
        Some(t) => t,
        None => {
            let oid = repo
                .treebuilder(None)
                .and_then(|b| b.write())
                .map_err(Error::git)?;
            empty = repo.find_tree(oid).map_err(Error::git)?;
            &empty
        }
    };
    let mut b = git2::build::TreeUpdateBuilder::new();
    for f in files {
        let state = if old { &f.old } else { &f.new };
        match file_mode(state) {
            Some((oid, mode)) => {
                b.upsert(f.path.as_str(), oid, mode);
            }
            None => {
                // Removing a path the base tree lacks is an error in libgit2; it is a no-op here.
                if matches!(state, State::Missing) && base.get_path(Path::new(&f.path)).is_ok() {
                    b.remove(f.path.as_str());
                }
            }
        }
    }
    b.create_updated(repo, base).map_err(Error::git)
}

/// Writes the objects of a plan and pins them under `refs/patchgate/txn/<id>`.
pub fn stage(
    repo: &Repository,
    id: &str,
    changes: &[PathChange],
    base: Option<&git2::Commit>,
    commit: Option<CommitSpec>,
) -> Result<Staged, Error> {
    let mut written = Vec::new();
    let mut files = Vec::with_capacity(changes.len());
    for c in changes {
        files.push(FileEntry {
            path: c.rel.clone(),
            old: state_of(repo, &c.before, &mut written)?,
            new: state_of(repo, &c.after, &mut written)?,
        });
    }
    let base_tree = match base {
        Some(c) => Some(c.tree().map_err(Error::git)?),
        None => None,
    };
    let tree = tree_with(repo, base_tree.as_ref(), &files, false)?;
    let old_tree = tree_with(repo, base_tree.as_ref(), &files, true)?;

    let new_commit = match commit {
        Some(spec) => {
            let t = repo.find_tree(tree).map_err(Error::git)?;
            let parents: Vec<&git2::Commit> = base.into_iter().collect();
            Some(
                repo.commit(
                    None,
                    spec.author,
                    spec.committer,
                    spec.message,
                    &t,
                    &parents,
                )
                .map_err(Error::git)?,
            )
        }
        None => None,
    };

    // The pin: a commit that reaches the old contents, the new tree and the published commit.
    let sig = pin_signature()?;
    let old_t = repo.find_tree(old_tree).map_err(Error::git)?;
    let old_pin = repo
        .commit(
            None,
            &sig,
            &sig,
            "patchgate: contents before the transaction",
            &old_t,
            &[],
        )
        .map_err(Error::git)?;
    let old_pin = repo.find_commit(old_pin).map_err(Error::git)?;
    let new_t = repo.find_tree(tree).map_err(Error::git)?;
    let published = match new_commit {
        Some(c) => Some(repo.find_commit(c).map_err(Error::git)?),
        None => None,
    };
    let mut parents = vec![&old_pin];
    if let Some(p) = published.as_ref() {
        parents.push(p);
    }
    let pin = repo
        .commit(
            None,
            &sig,
            &sig,
            &format!("patchgate transaction {id}"),
            &new_t,
            &parents,
        )
        .map_err(Error::git)?;
    let pin_ref = format!("refs/patchgate/txn/{id}");
    repo.reference(&pin_ref, pin, false, "patchgate: pin transaction")
        .map_err(Error::git)?;
    if super::fsync_enabled() {
        sync_loose_objects(repo, &written);
    }
    Ok(Staged {
        pin_ref,
        tree,
        commit: new_commit,
        files,
    })
}

/// Loose objects are not fsynced by libgit2; a crash of the machine (not just the process) could
/// otherwise lose content the journal points to.
fn sync_loose_objects(repo: &Repository, oids: &[Oid]) {
    use rayon::prelude::*;
    let objects = repo.commondir().join("objects");
    let mut files: Vec<PathBuf> = oids
        .iter()
        .map(|oid| {
            let hex = oid.to_string();
            objects.join(&hex[..2]).join(&hex[2..])
        })
        .collect();
    files.sort();
    files.dedup();
    // In parallel: the file system can commit concurrent syncs together.
    files.par_iter().for_each(|p| {
        if let Ok(f) = std::fs::File::open(p) {
            let _ = f.sync_all();
        }
    });
    let dirs: std::collections::BTreeSet<&Path> = files.iter().filter_map(|p| p.parent()).collect();
    dirs.par_iter().for_each(|d| {
        if let Ok(f) = std::fs::File::open(d) {
            let _ = f.sync_all();
        }
    });
}

/// Deletes a transaction's pin ref (missing is fine: it is what we want).
pub fn unpin(repo: &Repository, pin_ref: &str) -> Result<(), Error> {
    match repo.find_reference(pin_ref) {
        Ok(mut r) => r.delete().map_err(Error::git),
        Err(_) => Ok(()),
    }
}

/// The directory patchgate owns for materialised staged files.
pub fn worktree_dir(git_dir: &Path) -> PathBuf {
    git_dir.join("patchgate").join("worktree")
}

/// Mirrors the staged content of `files` into the patchgate worktree, rewriting only what differs
/// from the manifest of what is already there. Returns the number of files written.
pub fn materialize(repo: &Repository, git_dir: &Path, files: &[FileEntry]) -> Result<usize, Error> {
    let dir = worktree_dir(git_dir);
    let manifest_path = git_dir.join("patchgate").join("worktree.manifest");
    let mut manifest: BTreeMap<String, String> = std::fs::read(&manifest_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut written = 0;
    for f in files {
        let target = dir.join(&f.path);
        match &f.new {
            State::File { oid, mode } => {
                if manifest.get(&f.path) == Some(oid) && target.is_file() {
                    continue;
                }
                let blob = Oid::from_str(oid)
                    .and_then(|o| repo.find_blob(o))
                    .map_err(Error::git)?;
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
                }
                let _ = std::fs::remove_file(&target);
                std::fs::write(&target, blob.content())
                    .map_err(|e| Error::io("write", &target, e))?;
                if *mode != super::NEW_FILE_MODE {
                    use std::os::unix::fs::PermissionsExt;
                    let _ =
                        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(*mode));
                }
                manifest.insert(f.path.clone(), oid.clone());
                written += 1;
            }
            _ => {
                let _ = std::fs::remove_file(&target);
                manifest.remove(&f.path);
            }
        }
    }
    let text = serde_json::to_vec(&manifest)
        .map_err(|e| Error::io("write", &manifest_path, std::io::Error::other(e)))?;
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    std::fs::write(&manifest_path, text).map_err(|e| Error::io("write", &manifest_path, e))?;
    Ok(written)
}
