//! Resolving a patch's `file_path` to a place inside the repository, safely.
//!
//! Every path is checked before anything is read: a path that leaves the working tree (`../`, an
//! absolute path elsewhere, a symlink whose target is outside), or that reaches into `.git` (the
//! repository's own data, where an edit could plant a hook), is invalid input. The check is lexical
//! first and then follows every symlink that exists on the way, because a lexically clean
//! `src/link/x` may still land in `/etc` through `src/link`.
//!
//! The result names the file by its real path (`Resolved::real`, every in-repository symlink on
//! the way followed), and that is the path every later read and write uses, through [`crate::fs`]:
//! it walks from the root without following any symlink, so a symlink that appears on the real
//! path after this check (a folder swapped between planning and writing) is refused at the write.

use std::path::{Component, Path, PathBuf};

/// What [`Roots::follow`] tells apart on the way to a file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    Symlink,
    Other,
}

/// Where a patch path lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Normalised relative path as written (`/`-separated): the name used in reports and records.
    pub rel: String,
    /// The path of the file's content with every symlink followed, relative to the root. Equal to
    /// `rel` unless a symlink is on the way.
    pub real: String,
    /// The last component is itself a symlink (delete and move act on the link, not its target).
    pub is_link: bool,
    /// A folder on the way is a symlink (inside the repository): `git apply` refuses such a path
    /// ("beyond a symbolic link"), and so does a diff here.
    pub through_link: bool,
}

/// Folders (absolute, with every symlink before them followed) already found to be plain
/// directories by [`Roots::resolve_cached`].
#[derive(Debug, Default)]
pub struct PlainDirs(std::collections::HashSet<PathBuf>);

/// The repository root and git directory, canonical, for containment checks; and the root open,
/// for every read and write of a resolved path ([`crate::fs`]).
#[derive(Debug, Clone)]
pub struct Roots {
    pub root: PathBuf,
    pub git_dirs: Vec<PathBuf>,
    tree: std::sync::Arc<crate::fs::Root>,
}

impl Roots {
    /// Opens `root` (canonical) once; `git_dirs` are the git directories paths must stay out of.
    pub fn new(root: PathBuf, git_dirs: Vec<PathBuf>) -> std::io::Result<Roots> {
        let tree = std::sync::Arc::new(crate::fs::Root::open(&root)?);
        Ok(Roots {
            root,
            git_dirs,
            tree,
        })
    }

    /// The open root: a resolved path (`Resolved::real`, or a journal's or history's path once
    /// validated) is read and written through it, never through [`Roots::abs`], so that a symlink
    /// appearing on the path after it was checked is refused, not followed.
    pub fn fs(&self) -> &crate::fs::Root {
        &self.tree
    }

    pub fn abs(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Resolves `given` without looking at the file system (for a commit's tree, where symlinks
    /// are entries, not directories to walk through).
    pub fn resolve_lexical(&self, given: &str) -> Result<Resolved, String> {
        let rel = self.lexical(given)?;
        Ok(Resolved {
            real: rel.clone(),
            rel,
            is_link: false,
            through_link: false,
        })
    }

    /// Resolves `given`; `Err` is a sentence saying why it is refused.
    pub fn resolve(&self, given: &str) -> Result<Resolved, String> {
        self.resolve_cached(given, &mut PlainDirs::default())
    }

    /// [`Roots::resolve`] for one of many paths resolved together (a patch's): a folder found to
    /// be a plain directory, not a symlink, is not looked at again for the next path under it.
    /// Only for paths resolved at about the same moment: a folder replaced by a symlink later is
    /// still refused where it is read or written ([`crate::fs`] never follows one), but would no
    /// longer be followed here.
    pub fn resolve_cached(&self, given: &str, plain: &mut PlainDirs) -> Result<Resolved, String> {
        let rel = self.lexical(given)?;
        self.follow(given, rel, plain)
    }

    /// The normalised relative form of `given`, checked lexically.
    fn lexical(&self, given: &str) -> Result<String, String> {
        let p = Path::new(given);
        let rel_path = if p.is_absolute() {
            self.strip_root(p).ok_or_else(|| {
                format!(
                    "`{given}` is outside the repository ({}); use a path inside it, relative to its root",
                    self.root.display()
                )
            })?
        } else {
            p.to_path_buf()
        };
        let mut parts: Vec<String> = Vec::new();
        for c in rel_path.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(format!(
                            "`{given}` leaves the repository through `..`; paths must stay inside the repository root"
                        ));
                    }
                }
                Component::Normal(s) => match s.to_str() {
                    Some(s) => parts.push(s.to_string()),
                    None => return Err(format!("`{given}` is not valid UTF-8")),
                },
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!("`{given}` is outside the repository"));
                }
            }
        }
        if parts.is_empty() {
            return Err(format!("`{given}` names the repository root, not a file"));
        }
        if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
            return Err(format!(
                "`{given}` is inside `.git`: patchgate never edits git's own files"
            ));
        }
        Ok(parts.join("/"))
    }

    /// Follows the symlinks that exist on the way: each one must stay inside the root.
    fn follow(&self, given: &str, rel: String, plain: &mut PlainDirs) -> Result<Resolved, String> {
        let parts: Vec<&str> = rel.split('/').collect();
        let mut real = self.root.clone();
        let mut is_link = false;
        let mut through_link = false;
        for (i, part) in parts.iter().enumerate() {
            let next = real.join(part);
            let folder = i + 1 < parts.len();
            if folder && plain.0.contains(&next) {
                real = next;
                continue;
            }
            match self.kind_at(&next) {
                Some(Kind::Dir) if folder => {
                    plain.0.insert(next.clone());
                    real = next;
                }
                Some(Kind::Symlink) => {
                    let last = i + 1 == parts.len();
                    is_link = last;
                    through_link |= !last;
                    match std::fs::canonicalize(&next) {
                        Ok(target) => {
                            self.check_inside(&target, given)?;
                            real = target;
                        }
                        // Dangling: the link's text decides where a write would go.
                        Err(_) => {
                            let target =
                                std::fs::read_link(&next).map_err(|e| format!("`{given}`: {e}"))?;
                            let joined = next.parent().unwrap_or(&self.root).join(target);
                            let normal = normalize(&joined);
                            self.check_inside(&normal, given)?;
                            real = normal;
                        }
                    }
                }
                _ => real = next,
            }
        }
        // Unix paths: `/` is the only separator; a backslash is part of a file name.
        let real_rel = real
            .strip_prefix(&self.root)
            .ok()
            .and_then(|r| r.to_str())
            .map(str::to_string)
            .ok_or_else(|| format!("`{given}` resolves outside the repository"))?;
        if real_rel.is_empty() {
            return Err(format!(
                "`{given}` resolves to the repository root, not a file"
            ));
        }
        Ok(Resolved {
            rel,
            real: real_rel,
            is_link,
            through_link,
        })
    }

    /// What is at `path` (inside the root), not following it: looked up from the open root, a
    /// walk of the path's own components rather than of every folder above the repository too
    /// (a thousand-file patch spent a third of its path resolution there). `None`: nothing, or
    /// not readable.
    fn kind_at(&self, path: &Path) -> Option<Kind> {
        use rustix::fs::{AtFlags, FileType};
        let st = match path.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => {
                rustix::fs::statat(self.tree.as_fd(), rel, AtFlags::SYMLINK_NOFOLLOW).ok()?
            }
            _ => rustix::fs::lstat(path).ok()?,
        };
        Some(match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        })
    }

    fn check_inside(&self, target: &Path, given: &str) -> Result<(), String> {
        if !target.starts_with(&self.root) {
            return Err(format!(
                "`{given}` goes through a symlink to {}, outside the repository",
                target.display()
            ));
        }
        if self.git_dirs.iter().any(|g| target.starts_with(g))
            || target.strip_prefix(&self.root).ok().is_some_and(|r| {
                r.components()
                    .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
            })
        {
            return Err(format!("`{given}` goes through a symlink into `.git`"));
        }
        Ok(())
    }

    /// An absolute path made relative to the root, canonicalising its longest existing ancestor so
    /// that a path spelled through a symlinked directory (e.g. `/tmp` → `/private/tmp`) still counts.
    fn strip_root(&self, p: &Path) -> Option<PathBuf> {
        let p = normalize(p);
        if let Ok(r) = p.strip_prefix(&self.root) {
            return Some(r.to_path_buf());
        }
        let mut ancestor = p.as_path();
        let mut tail = Vec::new();
        loop {
            if let Ok(c) = std::fs::canonicalize(ancestor) {
                let mut full = c;
                for t in tail.iter().rev() {
                    full.push(t);
                }
                return full.strip_prefix(&self.root).ok().map(Path::to_path_buf);
            }
            tail.push(ancestor.file_name()?.to_owned());
            ancestor = ancestor.parent()?;
        }
    }
}

/// Lexical normalisation (`.` dropped, `..` applied), without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether repository path `rel` is folder `dir` itself or inside it (`dir` repository-relative,
/// `""` the root): by whole components, so `src/lib` is not inside `src/li`.
pub fn within(rel: &str, dir: &str) -> bool {
    dir.is_empty() || rel == dir || rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// A path patchgate stored (a journal's, a history entry's, the re-run record's) is inside the
/// working tree and not into `.git`: relative, `/`-separated, without `.`/`..`/empty components.
pub fn rel_path(p: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err("is empty".into());
    }
    if p.starts_with('/') {
        return Err(format!("`{p}` is absolute"));
    }
    if p.contains('\0') || p.contains('\n') {
        return Err(format!("`{p:?}` holds a NUL or newline"));
    }
    for c in p.split('/') {
        match c {
            "" => return Err(format!("`{p}` has an empty component")),
            "." | ".." => return Err(format!("`{p}` has a `{c}` component")),
            _ if c.eq_ignore_ascii_case(".git") => {
                return Err(format!("`{p}` is inside `.git`"));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> (tempfile::TempDir, Roots) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canon");
        std::fs::create_dir_all(root.join(".git")).expect("git dir");
        std::fs::create_dir_all(root.join("src")).expect("src");
        let r = Roots::new(root.clone(), vec![root.join(".git")]).expect("open root");
        (dir, r)
    }

    #[test]
    fn within_goes_by_whole_components() {
        assert!(within("src/lib/a.ts", "src/lib") && within("src/lib", "src/lib"));
        assert!(within("a.ts", "") && within("", ""));
        assert!(!within("src/library/a.ts", "src/lib") && !within("src", "src/lib"));
    }

    #[test]
    fn plain_and_absolute_paths() {
        let (_d, r) = roots();
        assert_eq!(r.resolve("src/a.rs").expect("ok").rel, "src/a.rs");
        assert_eq!(r.resolve("./src/../src/a.rs").expect("ok").rel, "src/a.rs");
        let abs = r.root.join("src/a.rs");
        assert_eq!(
            r.resolve(abs.to_str().expect("utf8")).expect("ok").rel,
            "src/a.rs"
        );
    }

    #[test]
    fn escapes_are_refused() {
        let (_d, r) = roots();
        for bad in [
            "../x",
            "src/../../x",
            "/etc/passwd",
            ".git/config",
            "src/.GIT/x",
            ".",
            "src/..",
        ] {
            assert!(r.resolve(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn symlinks_are_followed_and_checked() {
        let (d, r) = roots();
        let outside = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink(outside.path(), r.root.join("out")).expect("link");
        std::os::unix::fs::symlink(r.root.join(".git"), r.root.join("g")).expect("link");
        std::fs::write(r.root.join("src/real.txt"), "x").expect("write");
        std::os::unix::fs::symlink("real.txt", r.root.join("src/alias.txt")).expect("link");
        std::os::unix::fs::symlink("../../nowhere", r.root.join("src/dangling")).expect("link");
        assert!(r.resolve("out/file").unwrap_err().contains("outside"));
        assert!(r.resolve("g/config").unwrap_err().contains(".git"));
        assert!(r.resolve("src/dangling").is_err());
        let ok = r.resolve("src/alias.txt").expect("inside link");
        assert_eq!(
            (ok.rel.as_str(), ok.real.as_str(), ok.is_link),
            ("src/alias.txt", "src/real.txt", true)
        );
        drop(d);
    }

    #[test]
    fn paths_resolved_together_land_where_each_alone_does() {
        let (_d, r) = roots();
        let root = r.root.clone();
        std::fs::create_dir_all(root.join("src/deep/er")).expect("dirs");
        std::fs::create_dir_all(root.join("lib")).expect("lib");
        std::os::unix::fs::symlink("deep", root.join("src/alias")).expect("link");
        std::os::unix::fs::symlink("../../lib", root.join("src/deep/up")).expect("link");
        std::os::unix::fs::symlink(root.join(".git"), root.join("src/g")).expect("link");
        std::fs::write(root.join("src/deep/er/f"), "x").expect("write");
        std::os::unix::fs::symlink("f", root.join("src/deep/er/l")).expect("link");
        let paths = [
            "src/deep/er/f",
            "src/alias/er/f",
            "src/alias/up/x.rs",
            "src/deep/up/x.rs",
            "src/deep/er/l",
            "src/alias/er/l",
            "src/g/config",
            "src/alias/er/f/nope",
            "src/new/dir/file",
            "src/deep/er/f",
        ];
        // In both orders, with one cache: the same answer as each path resolved on its own.
        for order in [paths.to_vec(), paths.iter().rev().copied().collect()] {
            let mut plain = PlainDirs::default();
            for p in order {
                assert_eq!(r.resolve_cached(p, &mut plain), r.resolve(p), "{p}");
            }
        }
        let mut plain = PlainDirs::default();
        let via = r
            .resolve_cached("src/alias/up/x.rs", &mut plain)
            .expect("inside");
        assert_eq!((via.real.as_str(), via.through_link), ("lib/x.rs", true));
        assert!(plain.0.contains(&root.join("src")), "{plain:?}");
    }
}
