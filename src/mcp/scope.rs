//! Where the server may act: the repository it was started in, and the roots the client declared
//! (MCP `roots/list`), nothing else.
//!
//! Every tool argument that picks a directory or a file (`repository`, `check`'s `paths`,
//! `detect`'s `path`) goes through [`Scope::confine`] before anything reads it. A path is judged
//! by where it really is: `..` is folded and the longest existing prefix is resolved through its
//! symlinks, so neither `../..` nor a symlink out of the repository gets past. (The patch's own
//! `file_path`s are confined again by the plan, to the repository the patch applies to.)

use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Scope {
    /// The working tree of the repository the server was started in (canonical).
    pub home: PathBuf,
    /// The client's roots (canonical directories), when it declared any.
    pub roots: Vec<PathBuf>,
}

impl Scope {
    pub fn new(home: PathBuf) -> Scope {
        Scope {
            home,
            roots: Vec::new(),
        }
    }

    /// Every area a path may be in.
    fn areas(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.home.as_path()).chain(self.roots.iter().map(PathBuf::as_path))
    }

    /// Whether `real` (already resolved) is inside an allowed area.
    pub fn allows(&self, real: &Path) -> bool {
        self.areas().any(|a| real.starts_with(a))
    }

    /// `given` (absolute, or relative to `base`) resolved, if it lies inside an allowed area;
    /// otherwise a message that says where the server may act.
    pub fn confine(&self, base: &Path, given: &str) -> Result<PathBuf, String> {
        let real = resolve(base, Path::new(given));
        if self.allows(&real) {
            return Ok(real);
        }
        let mut areas: Vec<String> = self.areas().map(|a| a.display().to_string()).collect();
        areas.dedup();
        Err(format!(
            "`{given}` resolves to {}, outside the repository this server works in ({})",
            real.display(),
            areas.join(", ")
        ))
    }
}

/// `given` made absolute, `.`/`..` folded, and its longest existing prefix resolved through
/// symlinks (the rest, which does not exist yet, appended as written).
pub fn resolve(base: &Path, given: &Path) -> PathBuf {
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        base.join(given)
    };
    let mut lexical = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return lexical,
        }
    }
}

/// A `file://` URI of a client root as a local path (other schemes are not places on disk).
pub fn root_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///x` or `file://localhost/x`.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let decoded = percent_decode(path)?;
    Path::new(&decoded).canonicalize().ok()
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let d = tempfile::tempdir().expect("tempdir");
        let base = d.path().canonicalize().expect("canonical");
        let (repo, other) = (base.join("repo"), base.join("other"));
        std::fs::create_dir_all(repo.join("src")).expect("mkdir");
        std::fs::create_dir_all(&other).expect("mkdir");
        (d, repo, other)
    }

    #[test]
    fn paths_inside_pass_and_escapes_are_refused() {
        let (_d, repo, other) = setup();
        let scope = Scope::new(repo.clone());
        assert_eq!(scope.confine(&repo, "src"), Ok(repo.join("src")));
        assert_eq!(
            scope.confine(&repo, "src/new/x.js"),
            Ok(repo.join("src/new/x.js"))
        );
        let abs = repo.join("src").display().to_string();
        assert_eq!(scope.confine(&other, &abs), Ok(repo.join("src")));
        let err = scope.confine(&repo, "../other").expect_err("outside");
        assert!(err.contains("outside the repository"), "{err}");
        assert!(scope.confine(&repo, "/etc").is_err());
        // A symlink inside pointing out is judged by its target.
        std::os::unix::fs::symlink(&other, repo.join("link")).expect("symlink");
        assert!(scope.confine(&repo, "link/x").is_err());
        // The repository's name as a prefix of another directory is not inside it.
        std::fs::create_dir_all(repo.with_file_name("repo2")).expect("mkdir");
        assert!(scope.confine(&repo, "../repo2").is_err());
    }

    #[test]
    fn client_roots_widen_the_scope() {
        let (_d, repo, other) = setup();
        let mut scope = Scope::new(repo.clone());
        let uri = format!("file://{}", other.display()).replace(' ', "%20");
        scope.roots.push(root_path(&uri).expect("a root"));
        assert_eq!(scope.confine(&repo, "../other"), Ok(other.clone()));
        assert_eq!(root_path("https://example.com/x"), None);
    }
}
