//! A copy of one project (a Cargo workspace, a Go module) inside patchgate's worktree, for the
//! checkers that only work on a whole package (clippy, go vet): they see the user's working tree
//! (uncommitted and untracked-but-not-ignored files included) with the patch laid over it.
//!
//! It lives at `<git dir>/patchgate/node_modules/mirror/<project path>` (apart from the staged files, so the two
//! never disagree about what a file holds) and is kept between runs: a manifest
//! of (size, mtime) per file lets each run copy only what changed in the working tree since the
//! last one, so a second check of the same project costs O(changed files), and the build caches
//! that live next to it (a Cargo target directory) stay warm. Files the patch touches are written
//! from memory over the copies.
//!
//! Invariant: a mirror file is trusted only if both the working tree's file and the mirror's copy
//! still have the stamps recorded when it was copied. All projects share one mirror tree (a
//! nested project's files are also its parent's), but each keeps its own manifest, so a patch laid
//! over a file by one project's run must be noticed by every other project's next sync: checking
//! the copy itself does that without any cross-manifest bookkeeping, and a crash between an
//! overlay and a manifest write cannot leave a patched file passing for the working tree's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::runner::Cmd;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    /// Repository path → (working-tree file's stamp, the copy's stamp) when it was copied.
    files: BTreeMap<String, (Stamp, CopyStamp)>,
}

/// Size and mtime (ns) of a working-tree file.
type Stamp = (u64, i128);
/// Inode, size and mtime (ns) of a mirror copy: an overlay rewrites the file (a new inode).
type CopyStamp = (u64, u64, i128);

/// Under a directory named `node_modules` on purpose: JavaScript test runners started in the
/// user's own tree (`node --test`, jest, vitest) skip `node_modules` but not `.git`, and would
/// otherwise discover (and run) the mirror's copies of the project's tests.
fn mirror_base(git_dir: &Path) -> PathBuf {
    git_dir
        .join("patchgate")
        .join("node_modules")
        .join("mirror")
}

/// A repository path and the content to lay over the mirror there (`None`: deleted).
pub struct Overlay<'a> {
    pub rel: &'a str,
    pub content: Option<&'a [u8]>,
}

pub struct Mirror {
    /// The mirrored project's root (absolute, inside patchgate's worktree).
    pub root: PathBuf,
    /// Where repository paths start (`root` is `base/<project path>`).
    base: PathBuf,
    manifest_path: PathBuf,
    manifest: Manifest,
}

fn stamp(md: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    (
        md.len(),
        md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128,
    )
}

fn copy_stamp(md: &std::fs::Metadata) -> CopyStamp {
    use std::os::unix::fs::MetadataExt;
    let (len, mtime) = stamp(md);
    (md.ino(), len, mtime)
}

impl Mirror {
    /// Brings the mirror of `project_rel` (relative to the repository root, `""` for the root) up
    /// to date with the working tree.
    pub fn sync(repo_root: &Path, git_dir: &Path, project_rel: &str) -> Result<Mirror, String> {
        let base = mirror_base(git_dir);
        let root = if project_rel.is_empty() {
            base.clone()
        } else {
            base.join(project_rel)
        };
        let key = if project_rel.is_empty() {
            "_root".to_string()
        } else {
            project_rel.replace('/', "__")
        };
        let manifest_path = git_dir
            .join("patchgate")
            .join("mirrors")
            .join(format!("{key}.json"));
        let mut manifest: Manifest = std::fs::read(&manifest_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();

        // Tracked and untracked-but-not-ignored files: what a build in the working tree would see.
        let mut cmd = Cmd::new("git", repo_root).args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ]);
        if !project_rel.is_empty() {
            cmd = cmd.args(["--", project_rel]);
        }
        let out = cmd
            .timeout(Duration::from_secs(120))
            .run()
            .map_err(|e| format!("git ls-files: {e}"))?;
        if !out.success() {
            return Err(format!("git ls-files failed: {}", out.stderr_str().trim()));
        }
        let listed: Vec<String> = out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        let mut seen = std::collections::HashSet::with_capacity(listed.len());
        for rel in &listed {
            seen.insert(rel.as_str());
            let src = repo_root.join(rel);
            let Ok(md) = std::fs::symlink_metadata(&src) else {
                continue;
            };
            if !md.is_file() {
                continue;
            }
            let s = stamp(&md);
            let dst = base.join(rel);
            let fresh = manifest.files.get(rel).is_some_and(|(src, copy)| {
                *src == s && std::fs::symlink_metadata(&dst).is_ok_and(|d| copy_stamp(&d) == *copy)
            });
            if fresh {
                continue;
            }
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            let _ = std::fs::remove_file(&dst);
            std::fs::copy(&src, &dst).map_err(|e| format!("copy {rel}: {e}"))?;
            let copied = std::fs::symlink_metadata(&dst).map_err(|e| format!("copy {rel}: {e}"))?;
            manifest.files.insert(rel.clone(), (s, copy_stamp(&copied)));
        }
        let gone: Vec<String> = manifest
            .files
            .keys()
            .filter(|k| !seen.contains(k.as_str()))
            .cloned()
            .collect();
        for rel in gone {
            let _ = std::fs::remove_file(base.join(&rel));
            manifest.files.remove(&rel);
        }
        let m = Mirror {
            root,
            base,
            manifest_path,
            manifest,
        };
        m.save()?;
        Ok(m)
    }

    fn save(&self) -> Result<(), String> {
        if let Some(p) = self.manifest_path.parent() {
            std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
        }
        let text = serde_json::to_vec(&self.manifest).map_err(|e| e.to_string())?;
        std::fs::write(&self.manifest_path, text).map_err(|e| e.to_string())
    }

    /// The repository paths copied from the working tree (not the files an overlay created).
    pub fn listed(&self) -> impl Iterator<Item = &str> {
        self.manifest.files.keys().map(String::as_str)
    }

    /// Where a repository path lives in the mirror.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    /// Writes `content` (or removes the file, for `None`) at a repository path inside the mirror.
    /// The next sync of any project that holds the path sees a copy whose stamp it did not record,
    /// and restores the working tree's version.
    pub fn overlay(&self, git_dir: &Path, rel: &str, content: Option<&[u8]>) -> Result<(), String> {
        let dst = mirror_base(git_dir).join(rel);
        match content {
            Some(bytes) => {
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                let _ = std::fs::remove_file(&dst);
                std::fs::write(&dst, bytes).map_err(|e| format!("{}: {e}", dst.display()))?;
            }
            None => {
                let _ = std::fs::remove_file(&dst);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    }

    /// A nested project's file patched in its own mirror run must not pass for the working
    /// tree's in the enclosing project's next run (each keeps its own manifest).
    #[test]
    fn a_file_overlaid_by_one_project_is_restored_for_another() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("sub")).expect("sub");
        std::fs::write(root.join("a.py"), "x = 1\n").expect("a");
        std::fs::write(root.join("sub/m.py"), "y = 1\n").expect("m");
        let git_dir = root.join(".git");
        let mirrored = mirror_base(&git_dir).join("sub/m.py");

        // Run 1: the enclosing project is mirrored (and records sub/m.py as copied).
        Mirror::sync(root, &git_dir, "").expect("sync root");
        // Run 2: the nested project lays a patch over sub/m.py (a rejected patch, say).
        let sub = Mirror::sync(root, &git_dir, "sub").expect("sync sub");
        sub.overlay(&git_dir, "sub/m.py", Some(b"y = (\n"))
            .expect("overlay");
        assert_eq!(std::fs::read(&mirrored).expect("read"), b"y = (\n");
        // Run 3: the enclosing project again. The working tree still says `y = 1`.
        Mirror::sync(root, &git_dir, "").expect("sync root again");
        assert_eq!(std::fs::read(&mirrored).expect("read"), b"y = 1\n");
        // And the nested project's own next run too.
        sub.overlay(&git_dir, "sub/m.py", None)
            .expect("overlay a deletion");
        Mirror::sync(root, &git_dir, "sub").expect("sync sub again");
        assert_eq!(std::fs::read(&mirrored).expect("read"), b"y = 1\n");
    }
}
