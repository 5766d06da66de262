//! A copy of one project (a Cargo workspace, a Go module) inside patchgate's worktree, for the
//! checkers that only work on a whole package (clippy, go vet): they see the user's working tree
//! (uncommitted and untracked-but-not-ignored files included) with the patch laid over it.
//!
//! It lives at `<git dir>/patchgate/node_modules/mirror/<project path>` (apart from the staged files, so the two
//! never disagree about what a file holds) and is kept between runs: a manifest
//! of (size, mtime) per file lets each run copy only what changed in the working tree since the
//! last one, so a second check of the same project costs O(changed files), and the build caches
//! that live next to it (a Cargo target directory) stay warm. Files the patch touches are written
//! from memory and dropped from the manifest, so the next run restores them from the working tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::runner::Cmd;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    files: BTreeMap<String, (u64, i128)>,
}

/// Under a directory named `node_modules` on purpose: JavaScript test runners started in the
/// user's own tree (`node --test`, jest, vitest) skip `node_modules` but not `.git`, and would
/// otherwise discover (and run) the mirror's copies of the project's tests.
fn mirror_base(git_dir: &Path) -> PathBuf {
    git_dir
        .join("patchgate")
        .join("node_modules")
        .join("mirror")
}

pub struct Mirror {
    /// The mirrored project's root (absolute, inside patchgate's worktree).
    pub root: PathBuf,
    manifest_path: PathBuf,
    manifest: Manifest,
}

fn stamp(md: &std::fs::Metadata) -> (u64, i128) {
    use std::os::unix::fs::MetadataExt;
    (
        md.len(),
        md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128,
    )
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
            if manifest.files.get(rel) == Some(&s) {
                continue;
            }
            let dst = base.join(rel);
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            let _ = std::fs::remove_file(&dst);
            std::fs::copy(&src, &dst).map_err(|e| format!("copy {rel}: {e}"))?;
            manifest.files.insert(rel.clone(), s);
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

    /// Writes `content` (or removes the file, for `None`) at a repository path inside the mirror,
    /// and forgets its stamp so the next sync restores the working tree's version.
    pub fn overlay(
        &mut self,
        git_dir: &Path,
        rel: &str,
        content: Option<&[u8]>,
    ) -> Result<(), String> {
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
        self.manifest.files.remove(rel);
        self.save()
    }
}
