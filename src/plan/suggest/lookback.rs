//! The look-back's walk of a file's commits ([`super::stale`]), kept on disk between runs.
//!
//! Finding the versions before the last commits that changed a file means walking up to
//! `MAX_WALK` commits along first parents and looking the path up in each tree: a few
//! milliseconds on a long history, paid again by every `patchgate apply` process that misses in
//! that file. The walk is a function of the commit it starts from and the path only, so its
//! outcome is kept in `<git dir>/patchgate/cache/lookback/<key>.json`, the key a hash of both
//! (`rm -r .git/patchgate/cache` forgets it, and loses nothing else): a new
//! HEAD (or a branch tip with `--branch`) is another key, so a commit that changes the file's
//! history is never answered from a stale walk. A walk that its time budget cut short is kept
//! with the commit where it stopped, and the next run goes on from there.
//!
//! Invariants:
//! - Bounded: at most [`MAX_FILES`] entries (the oldest dropped beyond), each under
//!   [`MAX_ENTRY`] bytes; only walks worth keeping are written ([`worth_keeping`]).
//! - The cache is advice, never trusted: an entry is used only if it parses, names the commit
//!   and path asked for, holds well-formed object ids of objects this repository has, and stays
//!   within the bounds; anything else (corrupt, forged, from another version) is ignored and
//!   overwritten. It holds object ids and commit subjects only, never a path that is opened, and
//!   nothing is read or written through a symlink in place of its folders.
//! - Writing it never fails a run: errors are ignored. It is written by a temp file and a rename
//!   (not fsynced: a torn entry after a power loss is ignored like a corrupt one).

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::stale::{ChangeSource, Version};

/// Entries kept; beyond, the oldest are removed down to three quarters.
pub(super) const MAX_FILES: usize = 256;
/// An entry larger than this is not read.
const MAX_ENTRY: u64 = 64 << 10;
/// A commit subject is kept up to this many characters.
const MAX_SUBJECT: usize = 200;
/// Walks shorter than this many commits (and not cut short) are cheap enough to redo.
const MIN_KEPT_WALK: usize = 8;

/// A walk of a file's commits from `base`, possibly unfinished.
#[derive(Clone, Default)]
pub(super) struct Walk {
    /// The versions before each commit that changed the file, newest first.
    pub(super) versions: Vec<Version>,
    /// Commits walked so far.
    pub(super) walked: usize,
    /// Where an unfinished walk goes on: the commit reached and the file's blob in it.
    pub(super) resume: Option<(Oid, Option<Oid>)>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    version: u32,
    base: String,
    path: String,
    walked: usize,
    resume: Option<Resume>,
    versions: Vec<Stored>,
}

#[derive(Serialize, Deserialize)]
struct Resume {
    commit: String,
    blob: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    blob: String,
    commit: String,
    subject: String,
}

/// Whether a walk is worth writing down: long enough to cost something, or cut short (so the
/// next run goes on rather than starts over).
pub(super) fn worth_keeping(w: &Walk) -> bool {
    w.walked >= MIN_KEPT_WALK || w.resume.is_some()
}

fn dir(git_dir: &Path) -> Option<PathBuf> {
    // Our own folders, not a symlink that someone put in their place.
    let pg = git_dir.join("patchgate");
    let cache = pg.join("cache");
    let d = cache.join("lookback");
    for p in [&pg, &cache, &d] {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            _ => return None,
        }
    }
    Some(d)
}

fn key(base: Oid, path: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(base.as_bytes());
    h.update([0]);
    h.update(path.as_bytes());
    format!("{:x}", h.finalize())[..32].to_string()
}

fn oid(repo: &Repository, s: &str) -> Option<Oid> {
    let well_formed = (s.len() == 40 || s.len() == 64)
        && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let o = Oid::from_str(s).ok().filter(|_| well_formed)?;
    repo.odb().ok()?.exists(o).then_some(o)
}

/// The kept walk of `path` from `base`, if there is a valid one.
pub(super) fn load(
    repo: &Repository,
    git_dir: &Path,
    base: Oid,
    path: &str,
    max_walk: usize,
    max_changes: usize,
) -> Option<Walk> {
    let file = dir(git_dir)?.join(format!("{}.json", key(base, path)));
    let md = std::fs::symlink_metadata(&file).ok()?;
    if !md.is_file() || md.len() > MAX_ENTRY {
        return None;
    }
    let e: Entry = serde_json::from_slice(&std::fs::read(&file).ok()?).ok()?;
    if e.version != 1
        || e.base != base.to_string()
        || e.path != path
        || e.walked > max_walk
        || e.versions.len() > max_changes
    {
        return None;
    }
    let resume = match &e.resume {
        None => None,
        Some(r) => Some((
            oid(repo, &r.commit)?,
            match &r.blob {
                Some(b) => Some(oid(repo, b)?),
                None => None,
            },
        )),
    };
    let mut versions = Vec::with_capacity(e.versions.len());
    for v in &e.versions {
        versions.push(Version {
            oid: oid(repo, &v.blob)?,
            source: ChangeSource::Commit {
                id: oid(repo, &v.commit)?.to_string(),
                subject: v.subject.chars().take(MAX_SUBJECT).collect(),
            },
        });
    }
    Some(Walk {
        versions,
        walked: e.walked,
        resume,
    })
}

/// Keeps a walk (best effort), then bounds the folder.
pub(super) fn store(git_dir: &Path, base: Oid, path: &str, w: &Walk) {
    let Some(d) = dir(git_dir) else {
        return;
    };
    let entry = Entry {
        version: 1,
        base: base.to_string(),
        path: path.to_string(),
        walked: w.walked,
        resume: w.resume.map(|(c, b)| Resume {
            commit: c.to_string(),
            blob: b.map(|b| b.to_string()),
        }),
        versions: w
            .versions
            .iter()
            .filter_map(|v| match &v.source {
                ChangeSource::Commit { id, subject } => Some(Stored {
                    blob: v.oid.to_string(),
                    commit: id.clone(),
                    subject: subject.chars().take(MAX_SUBJECT).collect(),
                }),
                _ => None,
            })
            .collect(),
    };
    let Ok(bytes) = serde_json::to_vec(&entry) else {
        return;
    };
    if bytes.len() as u64 > MAX_ENTRY
        || std::fs::create_dir_all(&d).is_err()
        || dir(git_dir).is_none()
    {
        return;
    }
    let name = format!("{}.json", key(base, path));
    let tmp = d.join(format!(".{name}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, &bytes).is_err() || std::fs::rename(&tmp, d.join(&name)).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return;
    }
    prune(&d);
}

/// Drops the oldest entries (and temp files of killed runs) once there are too many.
fn prune(d: &Path) {
    crate::fs::prune_cache(d, MAX_FILES);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with_commit() -> (tempfile::TempDir, Repository, Oid, Oid) {
        let d = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(d.path()).expect("init");
        let blob = repo.blob(b"hello\n").expect("blob");
        let mut tb = repo.treebuilder(None).expect("tb");
        tb.insert("a.txt", blob, 0o100644).expect("insert");
        let tree = repo.find_tree(tb.write().expect("write")).expect("tree");
        let sig = git2::Signature::now("t", "t@example.com").expect("sig");
        let c = repo
            .commit(None, &sig, &sig, "first", &tree, &[])
            .expect("commit");
        drop(tree);
        drop(tb);
        (d, repo, c, blob)
    }

    fn walk(c: Oid, blob: Oid) -> Walk {
        Walk {
            versions: vec![Version {
                oid: blob,
                source: ChangeSource::Commit {
                    id: c.to_string(),
                    subject: "first".into(),
                },
            }],
            walked: 12,
            resume: Some((c, Some(blob))),
        }
    }

    #[test]
    fn a_kept_walk_comes_back_for_its_commit_and_path_only() {
        let (_d, repo, c, blob) = repo_with_commit();
        let git_dir = repo.path().to_path_buf();
        store(&git_dir, c, "a.txt", &walk(c, blob));
        let w = load(&repo, &git_dir, c, "a.txt", 200, 20).expect("kept");
        assert_eq!((w.walked, w.versions.len()), (12, 1));
        assert_eq!(w.resume, Some((c, Some(blob))));
        assert!(load(&repo, &git_dir, c, "b.txt", 200, 20).is_none());
        assert!(load(&repo, &git_dir, blob, "a.txt", 200, 20).is_none());
    }

    #[test]
    fn a_corrupt_or_forged_entry_is_ignored() {
        let (_d, repo, c, blob) = repo_with_commit();
        let git_dir = repo.path().to_path_buf();
        let file = git_dir
            .join("patchgate/cache/lookback")
            .join(format!("{}.json", key(c, "a.txt")));
        let forge = |json: serde_json::Value| {
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(&file, serde_json::to_vec(&json).expect("json")).expect("write");
            load(&repo, &git_dir, c, "a.txt", 200, 20)
        };
        let good = |versions: serde_json::Value| {
            serde_json::json!({"version": 1, "base": c.to_string(), "path": "a.txt",
                "walked": 3, "resume": null, "versions": versions})
        };
        let v = |blob: &str, commit: &str| serde_json::json!([{"blob": blob, "commit": commit, "subject": "s"}]);
        assert!(forge(good(v(&blob.to_string(), &c.to_string()))).is_some());
        // An object the repository does not have, a path instead of an id, another path.
        let absent = "1".repeat(40);
        assert!(forge(good(v(&absent, &c.to_string()))).is_none());
        assert!(forge(good(v("../../etc/passwd", &c.to_string()))).is_none());
        assert!(forge(good(v(&blob.to_string().to_uppercase(), &c.to_string()))).is_none());
        let mut other = good(serde_json::json!([]));
        other["path"] = "../outside".into();
        assert!(forge(other).is_none());
        let mut long = good(serde_json::json!([]));
        long["walked"] = 100_000.into();
        assert!(forge(long).is_none());
        std::fs::write(&file, b"{not json").expect("write");
        assert!(load(&repo, &git_dir, c, "a.txt", 200, 20).is_none());
        // Its folder replaced by a symlink: neither read nor written through.
        let elsewhere = tempfile::tempdir().expect("tempdir");
        std::fs::remove_dir_all(git_dir.join("patchgate/cache/lookback")).expect("rm");
        std::os::unix::fs::symlink(elsewhere.path(), git_dir.join("patchgate/cache/lookback"))
            .expect("ln");
        store(&git_dir, c, "a.txt", &walk(c, blob));
        assert_eq!(
            std::fs::read_dir(elsewhere.path()).expect("ls").count(),
            0,
            "written through a symlink"
        );
        assert!(load(&repo, &git_dir, c, "a.txt", 200, 20).is_none());
    }

    #[test]
    fn the_folder_is_bounded() {
        let (_d, repo, c, blob) = repo_with_commit();
        let git_dir = repo.path().to_path_buf();
        for i in 0..MAX_FILES + 10 {
            store(&git_dir, c, &format!("f{i}.txt"), &walk(c, blob));
        }
        let n = std::fs::read_dir(git_dir.join("patchgate/cache/lookback"))
            .expect("ls")
            .count();
        assert!(n <= MAX_FILES, "{n} entries");
    }
}
