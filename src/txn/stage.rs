//! Staging: the post-patch state recorded as git objects.
//!
//! Cost is O(edited files), never O(repository): one blob per changed path's old content, so a
//! crash can always be undone, and for a commit one per new content (written in parallel by
//! [`super::objects`], only where missing; a working-tree transaction, which rolls back until it
//! has landed, never writes its new contents: [`Keep`]), then `TreeUpdateBuilder` rewrites only
//! the trees on the paths that changed, starting from the base commit's tree. Nothing is checked out. The trees and commits are made
//! by libgit2 in memory (a private handle of the repository with a mempack in front of its
//! object database) and then written, with the blobs' batch before them, by [`super::objects`],
//! which syncs them as a batch; the pin ref is written (and synced, with its folder) by libgit2
//! (see `repo::durable_git`) once every object it reaches is on the disk, before the first file
//! is replaced. The journal needs only the blob ids ([`hash`]):
//! a working-tree transaction writes it, and prepares its temp files, while [`stage`] runs on
//! another thread (`run`). A commit's tree records each patched file as `git
//! add` would store it (`filters`); where that differs from the working-tree bytes, both blobs are
//! pinned.
//!
//! No checkout happens here: the checkers that need files on disk get them from patchgate's
//! worktree of the project (`project::mirror`), materialised only
//! when such a checker runs and kept between runs; the others read the patched content from
//! memory. A `git worktree add` per run would be O(repository): 1.0–1.4 s for 50,000 files here
//! (BENCHMARKS.md (d)), 6–59 s for 100,000 on a 2-core machine, and as long again to remove.
//!
//! The transaction's objects are pinned by `refs/patchgate/txn/<worktree key>/<id>` (for a
//! commit, a commit whose tree is the staged tree and whose parents are the user-visible commit
//! and a commit of the old contents; for the working tree, that commit of the old contents), so
//! `git gc` cannot collect them while the transaction lives; the ref is deleted when it ends.

use std::path::Path;

use git2::{FileMode, Oid, Repository, Signature};

use super::journal::{FileEntry, State};
use crate::error::Error;
use crate::plan::{Disk, PathChange};

/// What staging produced.
#[derive(Debug)]
pub struct Staged {
    pub pin_ref: String,
    /// What the pin ref points at: a commit that reaches every blob the transaction names that
    /// git has.
    pub pin: Oid,
    /// The post-patch tree (base tree + the changes).
    pub tree: Oid,
    /// The commit to publish (commit modes only).
    pub commit: Option<Oid>,
    /// What the undo history's pin (`history::pin_name`) was set to, ahead of the entry: the
    /// pin's own commit for a working-tree transaction, the history's commit of the changed
    /// blobs (`history::pin_commit`) for the others.
    pub history_pin: Oid,
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

/// The bytes a path's blob holds: a file's content or a link's target.
fn blob_bytes(disk: &Disk) -> Option<&[u8]> {
    match disk {
        Disk::File { bytes, .. } => Some(bytes),
        Disk::Symlink { target } => Some(target.as_os_str().as_encoded_bytes()),
        Disk::Missing | Disk::Dir | Disk::Other => None,
    }
}

/// The journal's state for `disk`, whose blob (if any) is `oid`.
fn state_of(disk: &Disk, oid: Option<Oid>) -> State {
    match (disk, oid) {
        (Disk::File { mode, .. }, Some(oid)) => State::File {
            oid: oid.to_string(),
            mode: *mode,
        },
        (Disk::Symlink { .. }, Some(oid)) => State::Symlink {
            oid: oid.to_string(),
        },
        (Disk::Missing, _) => State::Missing,
        _ => State::Other,
    }
}

fn file_mode(state: &State) -> Option<(Oid, FileMode)> {
    match state {
        State::File { oid, mode } => Oid::from_str(oid).ok().map(|o| {
            let m = if *mode != crate::fs::NEW_FILE_MODE && mode & 0o111 != 0 {
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

/// Which state of the paths a tree records.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    /// The working-tree bytes after the patch.
    New,
    /// What a commit records after the patch: `New` through git's filters.
    Committed,
}

/// A tree: `base` with each path set to its state on `side`.
fn tree_with(
    repo: &Repository,
    base: Option<&git2::Tree>,
    files: &[FileEntry],
    side: Side,
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
        let state = if side == Side::Old { &f.old } else { &f.new };
        let absent = side == Side::Committed
            && f.uncommitted
            && f.committed.as_deref() == Some(super::journal::ABSENT);
        match file_mode(state).filter(|_| !absent) {
            Some((oid, mode)) => {
                let committed = f.committed.as_deref().and_then(|c| Oid::from_str(c).ok());
                let oid = match (side, committed) {
                    (Side::Committed, Some(c)) => c,
                    _ => oid,
                };
                b.upsert(f.path.as_str(), oid, mode);
            }
            None if absent => {
                if base.get_path(Path::new(&f.path)).is_ok() {
                    b.remove(f.path.as_str());
                }
            }
            None => {
                // Removing a path the base tree lacks is an error in libgit2; it is a no-op here.
                if matches!(state, State::Missing) && base.get_path(Path::new(&f.path)).is_ok() {
                    b.remove(f.path.as_str());
                }
            }
        }
    }
    b.create_updated(repo, base).map_err(|e| {
        Error::git_caused(
            format!("cannot build the commit's tree: {}", e.message()),
            "a path of the patch is a file in the commit where the patch needs a directory (or the \
             reverse): commit that change of the working tree first, then re-run",
            e,
        )
    })
}

/// A plan's paths by blob id, hashed but not yet written: what the journal records, known
/// before any object is.
#[derive(Debug, Clone)]
pub struct Hashed {
    pub files: Vec<FileEntry>,
    /// The id of every old content, path by path ([`old_contents`]'s order).
    old_ids: Vec<Oid>,
    /// The id of every new content, path by path ([`new_contents`]'s order).
    new_ids: Vec<Oid>,
}

/// The old contents of `changes` that are blobs, path by path.
fn old_contents(changes: &[PathChange]) -> Vec<&[u8]> {
    changes
        .iter()
        .filter_map(|c| blob_bytes(&c.before))
        .collect()
}

/// The new contents of `changes` that are blobs, path by path.
fn new_contents(changes: &[PathChange]) -> Vec<&[u8]> {
    changes
        .iter()
        .filter_map(|c| blob_bytes(&c.after))
        .collect()
}

/// Hashes the old and new content of every path (in parallel) that the plan did not hash
/// already ([`PathChange::ids`]); writes nothing.
pub fn hash(changes: &[PathChange]) -> Hashed {
    // Each blob side, with its id when the plan knows it: old sides first, then new ones.
    let sides: Vec<(&[u8], Option<Oid>)> = [false, true]
        .into_iter()
        .flat_map(|new| {
            changes.iter().filter_map(move |c| {
                let (disk, known) = match new {
                    false => (&c.before, c.ids.map(|i| i.0)),
                    true => (&c.after, c.ids.map(|i| i.1)),
                };
                blob_bytes(disk).map(|b| (b, known))
            })
        })
        .collect();
    let todo: Vec<&[u8]> = sides
        .iter()
        .filter(|(_, known)| known.is_none())
        .map(|(b, _)| *b)
        .collect();
    let mut computed = super::objects::blob_ids(&todo).into_iter();
    let mut ids: Vec<Oid> = sides
        .iter()
        .map(|(bytes, known)| {
            let id = known.or_else(|| computed.next());
            // Every test checks the plan's ids against the bytes they name.
            debug_assert!(
                known.is_none_or(|k| k == crate::repo::blob_id(bytes)),
                "the plan's blob id does not name its bytes"
            );
            id.unwrap_or_else(|| crate::repo::blob_id(bytes))
        })
        .collect();
    let old_count = changes
        .iter()
        .filter(|c| blob_bytes(&c.before).is_some())
        .count();
    let new_ids = ids.split_off(old_count);
    let old_ids = ids;
    let (mut next_old, mut next_new) = (old_ids.iter().copied(), new_ids.iter().copied());
    let files = changes
        .iter()
        .map(|c| {
            let old = state_of(
                &c.before,
                blob_bytes(&c.before).and_then(|_| next_old.next()),
            );
            let new = state_of(&c.after, blob_bytes(&c.after).and_then(|_| next_new.next()));
            FileEntry {
                path: c.rel.clone(),
                old,
                new,
                committed: None,
                uncommitted: false,
            }
        })
        .collect();
    Hashed {
        files,
        old_ids,
        new_ids,
    }
}

/// The pin ref of transaction `id`.
pub fn pin_ref(git_dir: &Path, id: &str) -> String {
    format!("{}/{id}", crate::fs::layout::txn_pins(git_dir))
}

/// Which contents a transaction needs as objects before its switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Old and new (a commit names the new blobs; recovery may roll either way).
    Both,
    /// Only the old: a working-tree transaction rolls back until it has landed, and what it
    /// keeps afterwards (the undo history) needs the old contents only, the new ones being
    /// named by id (see `journal`).
    Old,
}

/// The most bytes of blobs written in one batch with a commit's trees (see [`stage`]).
const BLOBS_WITH_TREES: u64 = 16 << 20;

/// Writes the objects of a plan (hashed by [`hash`]) and pins them under
/// `refs/patchgate/txn/<key>/<id>`.
#[allow(clippy::too_many_arguments)]
pub fn stage(
    repo: &Repository,
    git_dir: &Path,
    id: &str,
    changes: &[PathChange],
    hashed: Hashed,
    keep: Keep,
    base: Option<&git2::Commit>,
    commit: Option<CommitSpec>,
    commit_as: &[(String, State)],
) -> Result<Staged, Error> {
    let odb = repo.odb().map_err(Error::git)?;
    let objects_dir = repo.commondir().join("objects");
    let sync = crate::fs::fsync_enabled();
    // Old contents always, so a crash can always be undone; they are usually HEAD's already,
    // and only the missing ones are written.
    let (mut contents, mut ids) = (old_contents(changes), hashed.old_ids);
    if keep == Keep::Both {
        contents.extend(new_contents(changes));
        ids.extend(hashed.new_ids);
    }
    let blobs: Vec<super::objects::Object> = ids
        .iter()
        .zip(&contents)
        .map(|(id, bytes)| super::objects::Object {
            id: *id,
            kind: git2::ObjectType::Blob,
            bytes,
        })
        .collect();
    // A commit's blobs are written in one batch with the trees and commits that name them (one
    // round of syncs, not two), unless they are large: until then the trees' memory store holds a
    // copy of each. A working-tree transaction's blobs (usually none) go first, as its pin is
    // one commit.
    let with_trees = keep == Keep::Both
        && contents.iter().map(|c| c.len() as u64).sum::<u64>() <= BLOBS_WITH_TREES;
    if !with_trees {
        super::objects::write_objects(&odb, &objects_dir, &blobs, sync)?;
        crate::timing::mark("stage: blobs written");
    }
    let mut files = hashed.files;
    if commit.is_some() {
        filter_for_commit(repo, git_dir, changes, &mut files)?;
        keep_uncommitted(&mut files, commit_as);
        crate::timing::mark("stage: filters decided");
    }
    // The trees and commits are made in memory (libgit2 would write and sync each file, and its
    // folder, one after another), then written as one batch like the blobs: in a repository
    // that is only an object database, the disk's objects as alternates (read, never written)
    // and a memory store taking every write. Opening the repository a second time instead read
    // its configuration files again, a tenth of a millisecond the switch waited for.
    let mem_odb = git2::Odb::new().map_err(Error::git)?;
    let objects = objects_dir
        .to_str()
        .ok_or_else(|| Error::io("open", &objects_dir, std::io::ErrorKind::InvalidData.into()))?;
    mem_odb.add_disk_alternate(objects).map_err(Error::git)?;
    let _mempack = mem_odb.add_new_mempack_backend(1000).map_err(Error::git)?;
    if with_trees {
        // The trees may name only objects the store has (libgit2 checks).
        for b in &blobs {
            if !odb.exists_ext(b.id, git2::OdbLookupFlags::NO_REFRESH) {
                let id = mem_odb
                    .write(git2::ObjectType::Blob, b.bytes)
                    .map_err(Error::git)?;
                if id != b.id {
                    return Err(Error::Internal {
                        message: format!("a blob hashed as {} is {id}", b.id),
                        help: "please report this".into(),
                    });
                }
            }
        }
    }
    let mem = Repository::from_odb(mem_odb).map_err(Error::git)?;
    let base = match base {
        Some(c) => Some(mem.find_commit(c.id()).map_err(Error::git)?),
        None => None,
    };
    let (tree, new_commit, pin, history_pin) = match keep {
        Keep::Both => {
            let (tree, commit, pin) = build(&mem, id, base.as_ref(), &files, commit)?;
            // The undo history's commit of the changed blobs, made here with the others so
            // that it is written in their batch rather than by the history after the switch.
            let history = super::history::pin_commit(&mem, &files, id)?;
            (tree, commit, pin, history)
        }
        Keep::Old => {
            let old = old_pin(&mem, None, &files)?;
            (old.tree_id(), None, old.id(), old.id())
        }
    };
    crate::timing::mark("stage: trees built");
    let mut new = new_objects(&mem, &odb, pin)?;
    if history_pin != pin {
        // It names only blobs: after the pin's objects is as good as anywhere.
        new.extend(new_objects(&mem, &odb, history_pin)?);
    }
    // The blobs first: loose objects appear one after another, each after the ones it names.
    let mut batch = if with_trees { blobs } else { Vec::new() };
    batch.extend(new.iter().map(|(id, kind, bytes)| super::objects::Object {
        id: *id,
        kind: *kind,
        bytes,
    }));
    super::objects::write_objects(&odb, &objects_dir, &batch, sync)?;
    crate::timing::mark("stage: objects written");
    let pin_ref = pin_ref(git_dir, id);
    // The history entry's pin is written now, beside the transaction's own (each is a file and
    // a folder to sync; one after the other they were what the switch waited for), so that after
    // the switch only the entry is left to write. Until the entry exists it is an orphan, which a
    // transaction that does not land, and recovery, remove (`history::remove_orphan_pins`).
    let history_name = super::history::pin_name(git_dir, id);
    let common = repo.commondir().to_path_buf();
    std::thread::scope(|s| {
        let history = {
            let (common, name) = (&common, history_name.as_str());
            s.spawn(move || super::refs::write_pin(common, name, history_pin))
        };
        let own = super::refs::write_pin(&common, &pin_ref, pin)
            .map_err(|e| Error::io("write the transaction's pin in", git_dir, e));
        let history = history
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
            .map_err(|e| Error::io("write the history pin in", git_dir, e));
        own.and(history)
    })?;
    Ok(Staged {
        pin_ref,
        pin,
        tree,
        commit: new_commit,
        history_pin,
        files,
    })
}

/// A commit (no parents) whose tree is `base` with each path at its old state: what pins the
/// old contents.
fn old_pin<'r>(
    repo: &'r Repository,
    base: Option<&git2::Tree>,
    files: &[FileEntry],
) -> Result<git2::Commit<'r>, Error> {
    let old_tree = tree_with(repo, base, files, Side::Old)?;
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
    repo.find_commit(old_pin).map_err(Error::git)
}

/// The trees and commits of a transaction, in `repo` (whose objects stay in memory): the tree to
/// commit, the commit to publish (when `commit` is given), and the pin, a commit that reaches the
/// old contents, the new tree and the published commit.
fn build(
    repo: &Repository,
    id: &str,
    base: Option<&git2::Commit>,
    files: &[FileEntry],
    commit: Option<CommitSpec>,
) -> Result<(Oid, Option<Oid>, Oid), Error> {
    let base_tree = match base {
        Some(c) => Some(c.tree().map_err(Error::git)?),
        None => None,
    };
    let tree = tree_with(repo, base_tree.as_ref(), files, Side::Committed)?;
    // The pin must also reach the working-tree bytes that recovery writes back; they are in
    // another tree only where a filter changed a committed blob.
    let worktree_tree = if files.iter().any(|f| f.committed.is_some()) {
        tree_with(repo, base_tree.as_ref(), files, Side::New)?
    } else {
        tree
    };

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

    let old_pin = old_pin(repo, base_tree.as_ref(), files)?;
    let sig = pin_signature()?;
    let new_t = repo.find_tree(worktree_tree).map_err(Error::git)?;
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
    Ok((tree, new_commit, pin))
}

/// An object made in memory: its id, its type, its bytes.
type NewObject = (Oid, git2::ObjectType, Vec<u8>);
/// An object read, waiting for the objects it names.
type Read = (git2::ObjectType, Vec<u8>);

/// Every commit and tree reachable from `start` that the object database `disk` lacks, read
/// from `mem` (which made them): what [`build`] created. Blobs are written before the trees
/// that name them, so a walk stops at them; it stops at every object `disk` has, too (the
/// base commit and the trees the patch did not touch), so its cost is the size of what is new.
///
/// In the order they may be written: every object after the ones it names (post-order), since
/// loose objects appear under their names one after another and a kill between two must not
/// leave a commit or tree naming one that is not there (`git fsck`: "broken link"). A walk that
/// listed a commit before its tree left exactly that when the staging was killed between them.
fn new_objects(mem: &Repository, disk: &git2::Odb, start: Oid) -> Result<Vec<NewObject>, Error> {
    let odb = mem.odb().map_err(Error::git)?;
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // `Some(object)`: its children are done, it goes out now; `None`: to be looked at.
    let mut todo: Vec<(Oid, Option<Read>)> = vec![(start, None)];
    while let Some((id, read)) = todo.pop() {
        if let Some((kind, bytes)) = read {
            out.push((id, kind, bytes));
            continue;
        }
        if !seen.insert(id) || disk.exists_ext(id, git2::OdbLookupFlags::NO_REFRESH) {
            continue;
        }
        let o = match odb.read(id) {
            Ok(o) => o,
            // Lacking everywhere, so not made here (a partial clone's tree, say): not ours to
            // write, and only the paths the patch changed were needed to make the new trees.
            Err(e) if e.code() == git2::ErrorCode::NotFound && id != start => continue,
            Err(e) => return Err(Error::git(e)),
        };
        // Below its children on the stack: it goes out once they all have. (An object seen
        // again through another parent is already out or below that parent: a DAG has no
        // path back to an object still waiting for its children.)
        todo.push((id, Some((o.kind(), o.data().to_vec()))));
        match o.kind() {
            git2::ObjectType::Commit => {
                let c = mem.find_commit(id).map_err(Error::git)?;
                todo.push((c.tree_id(), None));
                todo.extend(c.parent_ids().map(|p| (p, None)));
            }
            git2::ObjectType::Tree => {
                let t = mem.find_tree(id).map_err(Error::git)?;
                todo.extend(
                    t.iter()
                        .filter(|e| e.kind() == Some(git2::ObjectType::Tree))
                        .map(|e| (e.id(), None)),
                );
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Marks the entries whose commit must record `want` rather than the new working-tree content
/// (`uncommitted`): the undo of a `--commit` patch commits exactly the inverse of that commit,
/// and the uncommitted changes the patch took along go back to the working tree only.
fn keep_uncommitted(files: &mut [FileEntry], commit_as: &[(String, State)]) {
    let blob = |s: &State| match s {
        State::File { oid, .. } | State::Symlink { oid } => Some(oid.clone()),
        State::Missing | State::Other => None,
    };
    for (path, want) in commit_as {
        let Some(f) = files.iter_mut().find(|f| f.path == *path) else {
            continue;
        };
        // Only a file or link in the working tree can differ from the commit's entry here.
        let Some(new) = blob(&f.new) else {
            continue;
        };
        if matches!(want, State::Other) {
            continue;
        }
        let want = blob(want);
        if f.committed.clone().unwrap_or(new) != want.clone().unwrap_or_default() {
            f.committed = Some(want.unwrap_or_else(|| super::journal::ABSENT.to_string()));
            f.uncommitted = true;
        }
    }
}

/// Sets `committed` on the entries whose new content git's filters store differently
/// ([`super::filters`]).
fn filter_for_commit(
    repo: &Repository,
    git_dir: &Path,
    changes: &[PathChange],
    files: &mut [FileEntry],
) -> Result<(), Error> {
    let contents: Vec<(usize, &str, &[u8])> = changes
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match &c.after {
            Disk::File { bytes, .. } => Some((i, c.rel.as_str(), bytes.as_slice())),
            _ => None,
        })
        .collect();
    let pairs: Vec<(&str, &[u8])> = contents.iter().map(|(_, p, b)| (*p, *b)).collect();
    let ids = super::filters::committed_blobs(repo, git_dir, &pairs)?;
    for ((i, _, _), id) in contents.iter().zip(ids) {
        let f = &mut files[*i];
        if let (Some(id), State::File { oid, .. }) = (id, &f.new)
            && id.to_string() != *oid
        {
            f.committed = Some(id.to_string());
        }
    }
    Ok(())
}

/// Deletes a pin ref under `refs/patchgate/` (missing is fine: it is what we want), and the
/// folders of loose refs that this leaves empty, as git does: a run leaves nothing under
/// `refs/patchgate/` that it did not mean to keep. Any other ref is refused.
pub fn unpin(repo: &Repository, pin_ref: &str) -> Result<(), Error> {
    if !pin_ref.starts_with(crate::fs::layout::REFS)
        || super::validate::check_ref_format(pin_ref).is_err()
    {
        return Err(Error::Internal {
            message: format!("`{pin_ref}` is not a patchgate pin"),
            help: "please report this; no ref was deleted".into(),
        });
    }
    if let Ok(mut r) = repo.find_reference(pin_ref) {
        r.delete().map_err(Error::git)?;
    }
    // Deepest first; a folder that still holds a ref (or is being written) is not empty.
    let mut folder = Path::new(pin_ref).parent();
    while let Some(f) =
        folder.filter(|f| f.starts_with(crate::fs::layout::REFS.trim_end_matches('/')))
    {
        if std::fs::remove_dir(repo.commondir().join(f)).is_err() {
            break;
        }
        folder = f.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The new objects come children first, a subtree shared by two folders included: written
    /// in this order, a kill between two never leaves an object naming a missing one.
    #[test]
    fn new_objects_come_after_the_objects_they_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let disk = Repository::init(dir.path()).expect("init");
        let blob = disk.blob(b"content\n").expect("blob");
        let mem = Repository::open(disk.path()).expect("open");
        let mem_odb = mem.odb().expect("odb");
        let _mempack = mem_odb.add_new_mempack_backend(1000).expect("mempack");
        let tree = |entries: &[(&str, Oid, i32)]| {
            let mut tb = mem.treebuilder(None).expect("treebuilder");
            for (name, id, mode) in entries {
                tb.insert(name, *id, *mode).expect("insert");
            }
            tb.write().expect("tree")
        };
        let leaf = tree(&[("c.txt", blob, 0o100644)]);
        let mid = tree(&[("b", leaf, 0o040000), ("d.txt", blob, 0o100644)]);
        // `mid` twice (two folders with the same content) and `leaf` once more on its own.
        let root = tree(&[
            ("a", mid, 0o040000),
            ("x", mid, 0o040000),
            ("y", leaf, 0o040000),
        ]);
        let sig = git2::Signature::new("t", "t@localhost", &git2::Time::new(0, 0)).expect("sig");
        let root_tree = mem.find_tree(root).expect("root");
        let commit = mem
            .commit(None, &sig, &sig, "m", &root_tree, &[])
            .expect("commit");
        let objects = new_objects(&mem, &disk.odb().expect("odb"), commit).expect("walk");
        let order: Vec<Oid> = objects.iter().map(|(id, _, _)| *id).collect();
        assert_eq!(
            order.len(),
            4,
            "commit, root, mid and leaf, each once: {order:?}"
        );
        let at = |id: Oid| order.iter().position(|o| *o == id).expect("listed");
        assert!(at(leaf) < at(mid), "{order:?}");
        assert!(at(mid) < at(root), "{order:?}");
        assert!(at(root) < at(commit), "{order:?}");
    }
}
