//! `patchgate verify`'s baseline: HEAD. The working tree is verified as it is; the same steps
//! on the working tree with its uncommitted changes undone (HEAD's content laid over every file
//! that differs, untracked files removed) tell which failures were already there at HEAD.

use std::path::Path;

use crate::verify::Change;

/// A file whose working-tree content is not HEAD's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncommitted {
    pub rel: String,
    /// HEAD's content (`None`: not in HEAD).
    pub head: Option<Vec<u8>>,
    /// The working tree's (`None`: deleted).
    pub now: Option<Vec<u8>>,
}

impl Uncommitted {
    pub fn change(&self) -> Change<'_> {
        Change {
            rel: &self.rel,
            before: self.head.as_deref(),
            after: self.now.as_deref(),
        }
    }
}

/// A file larger than this is left as it is in the baseline (its content is not read).
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The working tree's differences from HEAD (staged or not, untracked-but-not-ignored files
/// included; symbolic links and submodules left out); `None` when there is no HEAD commit.
pub fn uncommitted(
    git: &git2::Repository,
    workdir: &Path,
) -> Result<Option<Vec<Uncommitted>>, git2::Error> {
    let Some(tree) = git.head().ok().and_then(|h| h.peel_to_tree().ok()) else {
        return Ok(None);
    };
    let mut opts = git2::DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_typechange(true);
    let diff = git.diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))?;
    let blob = |f: &git2::DiffFile| {
        matches!(
            f.mode(),
            git2::FileMode::Blob | git2::FileMode::BlobExecutable
        )
    };
    let mut out = Vec::new();
    for d in diff.deltas() {
        let (old, new) = (d.old_file(), d.new_file());
        let Some(rel) = new
            .path()
            .or_else(|| old.path())
            .and_then(|p| p.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        let head = if blob(&old) && !old.id().is_zero() {
            let b = git.find_blob(old.id())?;
            if b.size() as u64 > MAX_BYTES {
                continue;
            }
            Some(b.content().to_vec())
        } else {
            None
        };
        let path = workdir.join(&rel);
        let now = match std::fs::symlink_metadata(&path) {
            Ok(md) if md.is_file() && md.len() <= MAX_BYTES => {
                Some(std::fs::read(&path).map_err(|e| git2::Error::from_str(&e.to_string()))?)
            }
            Ok(md) if md.is_file() => continue,
            Ok(_) => continue,
            Err(_) => None,
        };
        if head.is_none() && now.is_none() || head == now {
            continue;
        }
        out.push(Uncommitted { rel, head, now });
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
            .args(args)
            .current_dir(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn lists_what_differs_from_head() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        git(root, &["init", "-q"]);
        let repo = git2::Repository::open(root).expect("open");
        assert_eq!(uncommitted(&repo, root).expect("diff"), None);
        for (f, t) in [
            ("a.py", "a\n"),
            ("b.py", "b\n"),
            ("c.py", "c\n"),
            (".gitignore", "*.log\n"),
        ] {
            std::fs::write(root.join(f), t).expect("write");
        }
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "init"]);
        std::fs::write(root.join("a.py"), "a2\n").expect("edit");
        std::fs::write(root.join("b.py"), "b2\n").expect("edit");
        git(root, &["add", "b.py"]);
        std::fs::remove_file(root.join("c.py")).expect("rm");
        std::fs::create_dir(root.join("new")).expect("mkdir");
        std::fs::write(root.join("new/d.py"), "d\n").expect("write");
        std::fs::write(root.join("x.log"), "ignored\n").expect("write");
        let mut got = uncommitted(&repo, root).expect("diff").expect("head");
        got.sort_by(|a, b| a.rel.cmp(&b.rel));
        let want = |rel: &str, head: Option<&str>, now: Option<&str>| Uncommitted {
            rel: rel.into(),
            head: head.map(|s| s.as_bytes().to_vec()),
            now: now.map(|s| s.as_bytes().to_vec()),
        };
        assert_eq!(
            got,
            [
                want("a.py", Some("a\n"), Some("a2\n")),
                want("b.py", Some("b\n"), Some("b2\n")),
                want("c.py", Some("c\n"), None),
                want("new/d.py", None, Some("d\n")),
            ]
        );
    }
}
