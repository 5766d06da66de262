//! A file's language (by extension) and its project (the **nearest** marker above it).
//!
//! The walk goes from the file's directory up to the repository root and stops at the first
//! directory holding a marker of the file's language, so a monorepo with `go.mod`, `Cargo.toml`,
//! `package.json` and `pyproject.toml` in different folders gives each file its own project. A file
//! with no marker of its language above it has no project (and `patchgate detect` says why).

use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    Python,
    Node,
    Rust,
    Go,
}

impl Lang {
    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Node => "node",
            Lang::Rust => "rust",
            Lang::Go => "go",
        }
    }

    pub fn markers(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &[
                "pyproject.toml",
                "setup.py",
                "setup.cfg",
                "ruff.toml",
                ".ruff.toml",
            ],
            Lang::Node => &["package.json"],
            Lang::Rust => &["Cargo.toml"],
            Lang::Go => &["go.mod"],
        }
    }
}

/// The language of a file, by extension.
pub fn lang_of(rel: &str) -> Option<Lang> {
    let ext = Path::new(rel).extension()?.to_str()?;
    Some(match ext {
        "py" | "pyi" => Lang::Python,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Lang::Node,
        "rs" => Lang::Rust,
        "go" => Lang::Go,
        _ => return None,
    })
}

/// A project: its language, the directory of its nearest marker, and the marker's name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Project {
    pub lang: Lang,
    /// Absolute.
    pub root: PathBuf,
    /// Relative to the repository root (`""` for the root itself).
    pub rel_root: String,
    pub marker: String,
}

/// Finds the nearest marker of `lang` above `rel` (inclusive of the repository root).
pub fn project_of(repo_root: &Path, rel: &str, lang: Lang) -> Option<Project> {
    let mut dir = Path::new(rel).parent();
    loop {
        let rel_dir = dir.unwrap_or(Path::new(""));
        let abs = repo_root.join(rel_dir);
        for m in lang.markers() {
            if abs.join(m).is_file() {
                return Some(Project {
                    lang,
                    root: abs,
                    rel_root: rel_dir.to_string_lossy().into_owned(),
                    marker: m.to_string(),
                });
            }
        }
        match dir {
            Some(d) if !d.as_os_str().is_empty() => dir = d.parent(),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_marker_wins_in_a_monorepo() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for (p, c) in [
            ("pyproject.toml", ""),
            ("py/pkg/setup.cfg", ""),
            ("web/package.json", "{}"),
            ("rs/Cargo.toml", ""),
            ("go/go.mod", "module x"),
        ] {
            let f = root.join(p);
            std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
            std::fs::write(f, c).expect("write");
        }
        let p = |rel: &str| lang_of(rel).and_then(|l| project_of(root, rel, l));
        assert_eq!(
            p("py/pkg/mod/a.py").map(|p| p.rel_root),
            Some("py/pkg".into())
        );
        assert_eq!(p("tools/x.py").map(|p| p.rel_root), Some(String::new()));
        assert_eq!(
            p("web/src/a.ts").map(|p| p.marker),
            Some("package.json".into())
        );
        assert_eq!(p("rs/src/lib.rs").map(|p| p.rel_root), Some("rs".into()));
        assert_eq!(p("go/cmd/main.go").map(|p| p.rel_root), Some("go".into()));
        assert_eq!(p("web/a.go"), None, "no go.mod above it");
        assert_eq!(lang_of("README.md"), None);
    }
}
