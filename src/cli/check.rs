//! `patchgate check` (the checkers on existing files, or on the staged content) and `patchgate
//! verify` (build / test / typecheck the current state).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::checks::{self, CheckFile};
use crate::cli::{OutputFormat, print_error, print_report};
use crate::error::Error;
use crate::project::detect;
use crate::repo::Repo;
use crate::report::{Report, Status};
use crate::runner::Cmd;

/// The files to check and their "before" (HEAD's content), from the working tree or the index.
fn collect(
    repo: &Repo,
    paths: &[PathBuf],
    staged: bool,
    cwd: &Path,
) -> Result<Vec<CheckFile>, Error> {
    let workdir = repo.require_workdir()?;
    let head_tree = repo.git.head().ok().and_then(|h| h.peel_to_tree().ok());
    let head_blob = |rel: &str| -> Option<Arc<Vec<u8>>> {
        let tree = head_tree.as_ref()?;
        let entry = tree.get_path(Path::new(rel)).ok()?;
        let blob = repo.git.find_blob(entry.id()).ok()?;
        Some(Arc::new(blob.content().to_vec()))
    };
    let wanted: Option<Vec<String>> = if paths.is_empty() {
        None
    } else {
        let mut out = Vec::new();
        for p in paths {
            let abs = if p.is_absolute() {
                p.clone()
            } else {
                cwd.join(p)
            };
            let rel = repo
                .roots
                .resolve(&abs.to_string_lossy())
                .map_err(|m| Error::Usage {
                    message: m,
                    help: "name files inside the repository".into(),
                })?
                .rel;
            if workdir.join(&rel).is_dir() {
                out.extend(list_files(workdir, &rel)?);
            } else {
                out.push(rel);
            }
        }
        Some(out)
    };
    let mut files = Vec::new();
    if staged {
        let index = staged_index(repo, cwd)?;
        let diff = repo
            .git
            .diff_tree_to_index(head_tree.as_ref(), Some(&index), None)
            .map_err(Error::git)?;
        let mut changed = Vec::new();
        for d in diff.deltas() {
            if let Some(p) = d.new_file().path().and_then(|p| p.to_str()) {
                changed.push(p.to_string());
            }
        }
        let targets = wanted.unwrap_or(changed);
        for rel in targets {
            let Some(entry) = index.get_path(Path::new(&rel), 0) else {
                continue;
            };
            let Ok(blob) = repo.git.find_blob(entry.id) else {
                continue;
            };
            files.push(CheckFile {
                real: workdir.join(&rel),
                before: head_blob(&rel),
                after: Arc::new(blob.content().to_vec()),
                rel,
                from: None,
            });
        }
    } else {
        let targets = match wanted {
            Some(w) => w,
            None => changed_in_worktree(repo)?,
        };
        for rel in targets {
            let Ok(bytes) = std::fs::read(workdir.join(&rel)) else {
                continue;
            };
            files.push(CheckFile {
                real: workdir.join(&rel),
                before: head_blob(&rel),
                after: Arc::new(bytes),
                rel,
                from: None,
            });
        }
    }
    Ok(files)
}

pub(super) fn list_files(workdir: &Path, rel_dir: &str) -> Result<Vec<String>, Error> {
    let out = Cmd::new("git", workdir)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            rel_dir,
        ])
        .run()
        .map_err(|e| Error::git_caused(format!("git ls-files: {e}"), "install git", e))?;
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

fn changed_in_worktree(repo: &Repo) -> Result<Vec<String>, Error> {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    let statuses = repo.git.statuses(Some(&mut opts)).map_err(Error::git)?;
    Ok(statuses
        .iter()
        .filter(|s| !s.status().is_wt_deleted() && !s.status().is_index_deleted())
        .filter_map(|s| s.path().map(str::to_string))
        .collect())
}

/// The index `--staged` means: inside a hook of `git commit -a` / `git commit <paths>`, the content
/// being committed is in a temporary index git names in GIT_INDEX_FILE (libgit2 does not read it;
/// a relative name is taken from where the command runs, as `git -C` does).
fn staged_index(repo: &Repo, cwd: &Path) -> Result<git2::Index, Error> {
    match std::env::var_os("GIT_INDEX_FILE").filter(|v| !v.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            git2::Index::open(&if p.is_absolute() { p } else { cwd.join(p) }).map_err(Error::git)
        }
        None => repo.git.index().map_err(Error::git),
    }
}

/// For `--staged`: every file whose working-tree content is not what the index holds (unstaged
/// changes: the index's version; untracked files: absent), so package checkers see the index.
fn staged_context(repo: &Repo, cwd: &Path) -> Result<Vec<checks::ContextFile>, Error> {
    let index = staged_index(repo, cwd)?;
    let mut opts = git2::DiffOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let diff = repo
        .git
        .diff_index_to_workdir(Some(&index), Some(&mut opts))
        .map_err(Error::git)?;
    let mut out = Vec::new();
    for d in diff.deltas() {
        let Some(rel) = d
            .new_file()
            .path()
            .or(d.old_file().path())
            .and_then(|p| p.to_str())
        else {
            continue;
        };
        let content = index
            .get_path(Path::new(rel), 0)
            .and_then(|e| repo.git.find_blob(e.id).ok())
            .map(|b| Arc::new(b.content().to_vec()));
        out.push((rel.to_string(), content));
    }
    Ok(out)
}

pub(crate) fn run_check(
    dir: &Path,
    paths: &[PathBuf],
    staged: bool,
    opts: checks::Options,
    format: OutputFormat,
) -> i32 {
    match check_report(dir, paths, staged, opts) {
        Ok(r) => print_report(&r, format),
        Err(e) => print_error(&e, format),
    }
}

/// The checkers on `paths` (or on every changed / staged file), as a report.
pub(crate) fn check_report(
    dir: &Path,
    paths: &[PathBuf],
    staged: bool,
    mut opts: checks::Options,
) -> Result<Report, Error> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let cwd = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        cwd.join(dir)
    };
    let repo = Repo::discover(dir)?;
    let files = collect(&repo, paths, staged, &cwd)?;
    if staged {
        opts.context = staged_context(&repo, &cwd)?;
    }
    let config = crate::project::config::Config::load(&repo.roots.root)?;
    config.check_names(opts.only.as_deref())?;
    let ctx = checks::run::Ctx {
        repo_root: &repo.roots.root,
        git_dir: &repo.git_dir,
        config: &config,
        opts: &opts,
        removed: &[],
    };
    let outcome = checks::run::run(&ctx, &files);
    let mut report = if outcome.blocked {
        Report::empty(Status::ChecksFailed)
    } else {
        Report::empty(Status::Clean)
    };
    report.checks = outcome.reports;
    report.root = Some(repo.roots.root.clone());
    Ok(report)
}

/// `patchgate verify`: the steps on the current state of the chosen projects.
pub(crate) fn run_verify(
    dir: &Path,
    path: Option<&Path>,
    opts: &crate::verify::run::Options,
    format: OutputFormat,
) -> i32 {
    let result = (|| -> Result<Report, Error> {
        let repo = Repo::discover(dir)?;
        let workdir = repo.require_workdir()?.to_path_buf();
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let base = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            cwd.join(dir)
        };
        let mut targets: Vec<String> = match path {
            Some(p) => {
                let abs = if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    base.join(p)
                };
                vec![
                    repo.roots
                        .resolve(&abs.to_string_lossy())
                        .map(|r| r.rel)
                        .unwrap_or_default(),
                ]
            }
            None => changed_in_worktree(&repo)?,
        };
        if targets.is_empty() {
            targets.push(
                repo.roots
                    .resolve(&base.to_string_lossy())
                    .map(|r| r.rel)
                    .unwrap_or_default(),
            );
        }
        let mut projects: Vec<detect::Project> = Vec::new();
        for t in &targets {
            // A directory stands for a file inside it, for the marker walk.
            let probe_dir = if t.is_empty() || workdir.join(t).is_dir() {
                Some(t.clone())
            } else {
                None
            };
            for lang in [
                detect::Lang::Python,
                detect::Lang::Node,
                detect::Lang::Rust,
                detect::Lang::Go,
            ] {
                let rel = match &probe_dir {
                    Some(d) if d.is_empty() => "_".to_string(),
                    Some(d) => format!("{d}/_"),
                    None if detect::lang_of(t) == Some(lang) => t.clone(),
                    None => continue,
                };
                if let Some(p) = detect::project_of(&workdir, &rel, lang)
                    && !projects.contains(&p)
                {
                    projects.push(p);
                }
            }
        }
        let config = crate::project::config::Config::load(&workdir)?;
        // The state as it is; HEAD says which failures were already there.
        let uncommitted =
            crate::verify::baseline::head::uncommitted(&repo.git, &workdir).map_err(Error::git)?;
        let changes: Option<Vec<crate::verify::run::Change>> = uncommitted
            .as_ref()
            .map(|u| u.iter().map(|c| c.change()).collect());
        let (reports, blocked) = crate::verify::run::run(
            &workdir,
            &repo.git_dir,
            &config,
            &projects,
            crate::verify::run::Subject::Worktree(changes.as_deref()),
            opts,
        );
        let mut report = if blocked {
            Report::empty(Status::ChecksFailed)
        } else {
            Report::empty(Status::Clean)
        };
        report.verify = reports;
        report.root = Some(workdir.clone());
        Ok(report)
    })();
    match result {
        Ok(r) => print_report(&r, format),
        Err(e) => print_error(&e, format),
    }
}
