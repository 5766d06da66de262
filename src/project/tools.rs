//! Finding a program, by one rule for the checks and verify alike.
//!
//! Order: `.patchgate.toml`'s `command` for the checker; then the project's own installs, from the
//! project's directory up to the repository root (never above it: a virtualenv in the user's home
//! belongs to another project), `.venv/bin`, `venv/bin` and `node_modules/.bin` at each level;
//! then PATH. Never a download (`npx`).
//!
//! Also [`Ran`]: what running a tool gave, the one outcome type of the checks and verify.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::config::Config;

/// What running a tool gave.
#[derive(Debug, Clone)]
pub enum Ran<T> {
    Done(T),
    /// The tool's configuration excludes the file, or the tool does not apply to it.
    Skipped(String),
    Missing(String),
    Error(String),
    /// The checker cannot run on this machine as it is (dependencies not downloaded, a toolchain
    /// too old for the project): a plain sentence and what to run. Reported as `error`.
    Unready {
        message: String,
        help: String,
    },
    Timeout,
}

impl<T> Ran<T> {
    /// A run without a result as a run of another type (a result here is an internal error).
    pub fn relay<U>(self) -> Ran<U> {
        match self {
            Ran::Done(_) => Ran::Error("internal: no result".into()),
            Ran::Skipped(s) => Ran::Skipped(s),
            Ran::Missing(s) => Ran::Missing(s),
            Ran::Error(s) => Ran::Error(s),
            Ran::Unready { message, help } => Ran::Unready { message, help },
            Ran::Timeout => Ran::Timeout,
        }
    }
}

/// A program on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The project's own install of `binary`: `.venv/bin`, `venv/bin`, `node_modules/.bin`, from
/// `project_root` up to `repo_root` (inclusive), nearest first.
pub fn project_local(binary: &str, project_root: &Path, repo_root: &Path) -> Option<PathBuf> {
    let mut dir = Some(project_root);
    while let Some(d) = dir {
        for sub in [".venv/bin", "venv/bin", "node_modules/.bin"] {
            let p = d.join(sub).join(binary);
            if p.is_file() {
                return Some(p);
            }
        }
        if d == repo_root {
            break;
        }
        dir = d.parent().filter(|p| p.starts_with(repo_root));
    }
    None
}

/// The argv prefix for a checker: the configured command, a project-local binary, or PATH.
pub fn program(
    config: &Config,
    checker: &str,
    binary: &str,
    project_root: &Path,
    repo_root: &Path,
) -> Result<Vec<OsString>, String> {
    // `Config::load` refuses an empty command; a library caller's hand-made config gets PATH.
    if let Some(cmd) = config.command_override(checker).filter(|c| !c.is_empty()) {
        let prog = &cmd[0];
        let exists = if prog.contains('/') {
            let p = Path::new(prog);
            let p = if p.is_absolute() {
                p.to_path_buf()
            } else {
                repo_root.join(p)
            };
            p.exists()
        } else {
            which(prog).is_some()
        };
        if !exists {
            return Err(format!("{prog} not found on PATH (from .patchgate.toml)"));
        }
        return Ok(cmd.iter().map(OsString::from).collect());
    }
    project_local(binary, project_root, repo_root)
        .or_else(|| which(binary))
        .map(|p| vec![p.into_os_string()])
        .ok_or_else(|| format!("{binary} not found on PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_local_is_searched_up_to_the_repository_root_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outer = dir.path();
        let repo = outer.join("repo");
        let proj = repo.join("pkg/a");
        std::fs::create_dir_all(&proj).expect("mkdir");
        for bin in [outer.join(".venv/bin"), repo.join("node_modules/.bin")] {
            std::fs::create_dir_all(&bin).expect("mkdir");
        }
        std::fs::write(outer.join(".venv/bin/ruff"), "").expect("write");
        std::fs::write(repo.join("node_modules/.bin/biome"), "").expect("write");
        assert_eq!(
            project_local("biome", &proj, &repo),
            Some(repo.join("node_modules/.bin/biome"))
        );
        assert_eq!(
            project_local("ruff", &proj, &repo),
            None,
            "above the repository"
        );
    }
}
