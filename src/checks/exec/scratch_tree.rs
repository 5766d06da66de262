//! A throwaway tree that looks like the repository to a linter that cannot read patched text on
//! stdin (biome's linter, oxlint), with the patched files in it, built without writing anything
//! into the user's working tree.
//!
//! Layout, under a fresh directory of the caller's scratch dir: every directory on the way from
//! the repository root to a patched file (and to the tool's working directory) is a real
//! directory; in each of them, the patched files are written with their patched text, other
//! regular files up to [`COPY_MAX`] are copied, and every other entry (subdirectories off the way,
//! `node_modules`, big files) is a symlink to the real one. `.git` is left out.
//!
//! Why this shape: configuration is found where the tool would find it for the real file —
//! upward from the file or the working directory, `extends` of a sibling file or an npm package
//! through the `node_modules` link, `.gitignore` and nested configs — and copies, not links, of
//! the files in those directories, because biome's scanner skips symlinked files (a symlinked
//! nested `biome.json` was silently not applied). Linting reads only; the links are never written
//! through, and removing the tree removes the links, not what they point to.
//!
//! Invariants: repository paths must be relative and plain (no `..`, no root): anything else is
//! refused, so a hostile path cannot write outside the tree; the tree is deleted when the
//! [`ScratchTree`] is dropped.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// Regular files up to this size in a mirrored directory are copied, bigger ones (lockfiles,
/// bundles) linked.
pub const COPY_MAX: u64 = 256 * 1024;

pub struct ScratchTree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

/// `rel` as a plain relative path, or why not.
fn plain(rel: &str) -> Result<PathBuf, String> {
    let p = Path::new(rel);
    if rel.is_empty() || !p.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(format!("not a plain repository path: {rel:?}"));
    }
    Ok(p.to_path_buf())
}

fn io(what: &str, p: &Path, e: std::io::Error) -> String {
    format!("cannot {what} {}: {e}", p.display())
}

impl ScratchTree {
    /// Builds the tree for `files` (repository path, patched text) of the repository at
    /// `repo_root`, also mirroring the way to `cwd` (a directory in the repository), in a new
    /// directory `<prefix>…` under `scratch`.
    pub fn build(
        repo_root: &Path,
        scratch: &Path,
        prefix: &str,
        files: &[(&str, &str)],
        cwd: &Path,
    ) -> Result<ScratchTree, String> {
        std::fs::create_dir_all(scratch).map_err(|e| io("create", scratch, e))?;
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(scratch)
            .map_err(|e| io("create a directory in", scratch, e))?;
        // Tools print canonical paths; mapping them back needs the same spelling.
        let root = std::fs::canonicalize(dir.path()).map_err(|e| io("resolve", dir.path(), e))?;
        let cwd_rel = cwd.strip_prefix(repo_root).map_err(|_| {
            format!(
                "{} is not inside the repository {}",
                cwd.display(),
                repo_root.display()
            )
        })?;
        if !cwd_rel
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(format!("not a plain directory: {}", cwd.display()));
        }
        let mut patched = BTreeSet::new();
        let mut ways = BTreeSet::new();
        ways.insert(PathBuf::new());
        for (rel, _) in files {
            let p = plain(rel)?;
            ways.extend(p.ancestors().skip(1).map(Path::to_path_buf));
            patched.insert(p);
        }
        ways.extend(cwd_rel.ancestors().map(Path::to_path_buf));
        // Parents sort before their children: each directory exists before its entries.
        for way in &ways {
            let here = root.join(way);
            std::fs::create_dir_all(&here).map_err(|e| io("create", &here, e))?;
            let real = repo_root.join(way);
            let entries = match std::fs::read_dir(&real) {
                Ok(e) => e,
                // A directory the patch creates.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io("read", &real, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| io("read", &real, e))?;
                let name = entry.file_name();
                let child = way.join(&name);
                if name == ".git" || ways.contains(&child) || patched.contains(&child) {
                    continue;
                }
                let dst = root.join(&child);
                let meta = entry
                    .metadata()
                    .map_err(|e| io("inspect", &entry.path(), e))?;
                if meta.is_file() && meta.len() <= COPY_MAX {
                    std::fs::copy(entry.path(), &dst).map_err(|e| io("copy", &entry.path(), e))?;
                } else {
                    std::os::unix::fs::symlink(entry.path(), &dst)
                        .map_err(|e| io("link", &dst, e))?;
                }
            }
        }
        for (rel, text) in files {
            let dst = root.join(rel);
            std::fs::write(&dst, text).map_err(|e| io("write", &dst, e))?;
        }
        Ok(ScratchTree { _dir: dir, root })
    }

    /// The tree's root, the repository root's stand-in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where a repository path is in the tree.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join(rel)
    }

    /// `text` (a tool's complaint) with the tree's root spelled as the repository's.
    pub fn unmask(&self, text: &str, repo_root: &Path) -> String {
        text.replace(&*self.root.to_string_lossy(), &repo_root.to_string_lossy())
    }

    /// The repository path of a path a tool printed (absolute, or relative to `tool_cwd`), or
    /// `None` for a path outside the tree.
    pub fn repo_path(&self, printed: &str, tool_cwd: &Path) -> Option<String> {
        let abs = tool_cwd.join(printed);
        let rel = abs.strip_prefix(&self.root).ok()?;
        let parts: Vec<String> = rel
            .components()
            .map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                Component::CurDir => Some(String::new()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some(
            parts
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("/"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn the_tree_copies_the_way_links_the_rest_and_leaves_out_git() {
        let repo = tempfile::tempdir().expect("tempdir");
        let r = repo.path();
        for d in [".git", "src/deep", "node_modules/pkg", "other"] {
            fs::create_dir_all(r.join(d)).expect("mkdir");
        }
        fs::write(r.join("biome.json"), "{}").expect("write");
        fs::write(r.join("src/a.js"), "old").expect("write");
        fs::write(r.join("src/big.js"), vec![b'x'; COPY_MAX as usize + 1]).expect("write");
        fs::write(r.join("other/o.js"), "o").expect("write");
        let scratch = tempfile::tempdir().expect("scratch");
        let cwd = r.join("src");
        let t = ScratchTree::build(
            r,
            scratch.path(),
            "t-",
            &[("src/a.js", "new"), ("src/new/n.js", "n")],
            &cwd,
        )
        .expect("built");
        let kind = |rel: &str| {
            let m = fs::symlink_metadata(t.path(rel)).ok()?;
            Some(if m.file_type().is_symlink() {
                "link"
            } else if m.is_dir() {
                "dir"
            } else {
                "file"
            })
        };
        assert_eq!(kind("biome.json"), Some("file"));
        assert_eq!(kind("src"), Some("dir"));
        assert_eq!(kind("src/big.js"), Some("link"));
        assert_eq!(kind("src/deep"), Some("link"));
        assert_eq!(kind("node_modules"), Some("link"));
        assert_eq!(kind("other"), Some("link"));
        assert_eq!(kind(".git"), None);
        assert_eq!(fs::read_to_string(t.path("src/a.js")).expect("read"), "new");
        assert_eq!(
            fs::read_to_string(t.path("src/new/n.js")).expect("read"),
            "n"
        );
        assert_eq!(fs::read_to_string(r.join("src/a.js")).expect("read"), "old");
        let printed = t.root().join("src/a.js");
        assert_eq!(
            t.repo_path(printed.to_str().expect("utf-8"), Path::new("/elsewhere")),
            Some("src/a.js".to_string())
        );
        assert_eq!(
            t.repo_path("new/n.js", &t.path("src")),
            Some("src/new/n.js".to_string())
        );
        assert_eq!(t.repo_path("/etc/passwd", t.root()), None);
        let root = t.root().to_path_buf();
        drop(t);
        assert!(!root.exists(), "the tree is removed on drop");
        assert!(
            r.join("node_modules/pkg").is_dir(),
            "links removed, not targets"
        );
        assert!(r.join("other/o.js").is_file());
    }

    #[test]
    fn paths_that_leave_the_tree_are_refused() {
        let repo = tempfile::tempdir().expect("tempdir");
        let scratch = tempfile::tempdir().expect("scratch");
        for bad in ["../x.js", "/etc/x.js", "a/../../x.js", ""] {
            let r =
                ScratchTree::build(repo.path(), scratch.path(), "t-", &[(bad, "")], repo.path());
            assert!(r.is_err(), "{bad:?} was accepted");
        }
        let outside = ScratchTree::build(repo.path(), scratch.path(), "t-", &[], Path::new("/"));
        assert!(outside.is_err());
    }
}
