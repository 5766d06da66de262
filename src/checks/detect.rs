//! Which checkers apply to a file: by its extension and the **nearest** project marker above it.
//!
//! The walk goes from the file's directory up to the repository root and stops at the first
//! directory holding a marker of the file's language, so a monorepo with `go.mod`, `Cargo.toml`,
//! `package.json` and `pyproject.toml` in different folders gives each file its own project. A file
//! with no marker of its language above it gets no checkers (and `patchgate detect` says why).

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

    /// The default checkers: (format, lint).
    pub fn default_checkers(self) -> [&'static str; 2] {
        match self {
            Lang::Python => ["ruff-format", "ruff"],
            Lang::Node => ["prettier", "eslint"],
            Lang::Rust => ["rustfmt", "clippy"],
            Lang::Go => ["gofmt", "go-lint"],
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

/// Why a file has (or lacks) checkers, for `patchgate detect`.
#[derive(Debug, Clone, Serialize)]
pub struct Detection {
    pub path: String,
    pub lang: Option<Lang>,
    pub project: Option<Project>,
    pub checkers: Vec<String>,
    pub reason: String,
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

/// The detection for one file.
pub fn detect(repo_root: &Path, rel: &str) -> Detection {
    let Some(lang) = lang_of(rel) else {
        return Detection {
            path: rel.to_string(),
            lang: None,
            project: None,
            checkers: Vec::new(),
            reason: "no checker knows this file type".into(),
        };
    };
    match project_of(repo_root, rel, lang) {
        Some(p) => Detection {
            path: rel.to_string(),
            lang: Some(lang),
            reason: format!(
                "{} file in the project at {}/ (found {})",
                lang.name(),
                if p.rel_root.is_empty() {
                    "."
                } else {
                    &p.rel_root
                },
                p.marker
            ),
            checkers: lang
                .default_checkers()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            project: Some(p),
        },
        None => Detection {
            path: rel.to_string(),
            lang: Some(lang),
            project: None,
            checkers: Vec::new(),
            reason: format!(
                "{} file, but no {} above it up to the repository root",
                lang.name(),
                lang.markers().join(" / ")
            ),
        },
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
        let d = detect(root, "py/pkg/mod/a.py");
        assert_eq!(
            d.project.as_ref().map(|p| p.rel_root.as_str()),
            Some("py/pkg")
        );
        assert_eq!(d.checkers, vec!["ruff-format", "ruff"]);
        assert_eq!(
            detect(root, "tools/x.py").project.map(|p| p.rel_root),
            Some(String::new())
        );
        assert_eq!(
            detect(root, "web/src/a.ts").project.map(|p| p.marker),
            Some("package.json".into())
        );
        assert_eq!(
            detect(root, "rs/src/lib.rs").checkers,
            vec!["rustfmt", "clippy"]
        );
        assert_eq!(
            detect(root, "go/cmd/main.go").project.map(|p| p.rel_root),
            Some("go".into())
        );
        let none = detect(root, "web/a.go");
        assert!(
            none.checkers.is_empty() && none.reason.contains("go.mod"),
            "{}",
            none.reason
        );
        assert!(detect(root, "README.md").checkers.is_empty());
    }
}
