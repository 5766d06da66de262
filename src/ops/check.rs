//! `check`: the checkers on existing files (or on the staged content), and the check settings
//! `apply` shares: which checkers, which findings block, time limits.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::Context;
use crate::checks::{self, CheckFile, Gate};
use crate::error::Error;
use crate::repo::Repo;
use crate::report::{Report, Status};
use crate::runner::Cmd;

/// The check settings of `apply` and `check`.
#[derive(Debug, Clone, clap::Args, Deserialize, JsonSchema)]
pub struct Settings {
    /// Which checkers to run: `auto` (all that the projects use), `none`, or a comma-separated
    /// list of checker names (see `detect`, or a custom checker from .patchgate.toml).
    #[arg(long, default_value = "auto", value_name = "auto|none|LIST")]
    #[serde(default = "auto", deserialize_with = "null_as_auto")]
    #[schemars(with = "Option<String>", extend("default" = "auto"))]
    pub checks: String,
    /// Which findings block: `new` (only what the change introduced), `any`, or `off` (report
    /// only).
    #[arg(long, value_enum, default_value_t = Gate::New)]
    #[serde(default, deserialize_with = "super::null_as_default")]
    #[schemars(with = "Option<Gate>", extend("default" = "new"))]
    pub gate: Gate,
    /// A checker that is missing, crashes or times out blocks too.
    #[arg(long)]
    #[serde(default)]
    pub require_tools: bool,
    /// Timeout for every checker, in seconds (default: lint 30, format 10, clippy / go vet 300).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Checker jobs in parallel (default: one per core).
    // Not an MCP argument (serde skips it, so the schema does not list it): a server runs one
    // job per core.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 0)]
    #[serde(skip)]
    pub jobs: usize,
    /// Never download dependencies for clippy / go vet (`cargo fetch`, `go mod download`);
    /// missing ones make the checker `error` with what to run. Also implied by
    /// CARGO_NET_OFFLINE=true (Rust) and GOPROXY=off (Go).
    #[arg(long)]
    #[serde(default)]
    pub offline: bool,
}

fn auto() -> String {
    "auto".into()
}

fn null_as_auto<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_else(auto))
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            checks: auto(),
            gate: Gate::New,
            require_tools: false,
            timeout: None,
            jobs: 0,
            offline: false,
        }
    }
}

impl Settings {
    /// The checks to run (`None`: `checks = none`).
    pub fn options(&self, fix: bool, progress: bool) -> Result<Option<checks::Options>, Error> {
        let only = match self.checks.trim() {
            "none" => return Ok(None),
            "auto" | "" => None,
            list => Some(
                list.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
        };
        Ok(Some(checks::Options {
            gate: self.gate,
            fix,
            require_tools: self.require_tools,
            timeout: self.timeout()?,
            jobs: self.jobs,
            only,
            offline: self.offline,
            progress,
            context: checks::Context::none(),
        }))
    }

    fn timeout(&self) -> Result<Option<std::time::Duration>, Error> {
        match self.timeout {
            Some(t)
                if t > 0.0
                    && let Ok(d) = std::time::Duration::try_from_secs_f64(t) =>
            {
                Ok(Some(d))
            }
            Some(t) => Err(Error::Usage {
                message: format!("--timeout {t} is not a positive number of seconds"),
                help: "e.g. --timeout 20".into(),
            }),
            None => Ok(None),
        }
    }

    /// The options of `check`: `checks = none` still runs nothing, but as an empty selection.
    fn check_options(&self, progress: bool) -> Result<checks::Options, Error> {
        Ok(self
            .options(false, progress)?
            .unwrap_or_else(|| checks::Options {
                only: Some(Vec::new()),
                progress,
                ..Default::default()
            }))
    }
}

/// What to check, and how.
#[derive(Debug, Clone, Default, clap::Args, Deserialize, JsonSchema)]
pub struct Request {
    /// Files or directories to check (default: every file changed since HEAD, or every staged
    /// file with `staged`).
    #[serde(default)]
    pub paths: Vec<PathBuf>,
    /// Check the staged content (the index), not the working tree: what a commit would record.
    #[arg(long)]
    #[serde(default)]
    pub staged: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub settings: Settings,
}

/// The checkers on the request's paths (or on every changed / staged file), as a report.
pub fn run(request: &Request, ctx: &Context) -> Result<Report, Error> {
    let mut opts = request.settings.check_options(ctx.progress)?;
    let cwd = ctx.base();
    let repo = Repo::discover(&ctx.dir)?;
    let named = named(&repo, &request.paths, &cwd)?;
    let files = collect(&repo, named.as_deref(), request.staged, &cwd)?;
    // What the change deletes, with HEAD's content: the references check looks for what still
    // uses it (a name it defined, a module path naming it). With paths, the deletions among
    // them (a deleted file named, or one under a named folder).
    let removed: Vec<checks::RemovedFile> = deleted(&repo, request.staged, &cwd)?
        .into_iter()
        .filter(|(rel, _)| {
            named
                .as_ref()
                .is_none_or(|n| n.iter().any(|d| crate::repo::within(rel, d)))
        })
        .collect();
    if request.staged {
        opts.context = checks::Context::of(staged_context(&repo, &cwd)?);
    }
    let config = crate::project::config::Config::load(&repo.roots.root)?;
    config.check_names(opts.only.as_deref())?;
    let ctx = checks::run::Ctx {
        repo_root: &repo.roots.root,
        git_dir: &repo.git_dir,
        config: &config,
        opts: &opts,
        removed: &removed,
        patched: &[],
    };
    let outcome = checks::run::run(&ctx, &files);
    let mut report = Report::empty(if outcome.blocked {
        Status::ChecksFailed
    } else {
        Status::Clean
    });
    report.checks = outcome.reports;
    report.root = Some(repo.roots.root.clone());
    Ok(report)
}

/// The files to check and their "before" (HEAD's content), from the working tree or the index.
fn collect(
    repo: &Repo,
    named: Option<&[String]>,
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
    let wanted = match named {
        Some(n) => Some(expand(workdir, n)?),
        None => None,
    };
    let mut files = Vec::new();
    let mut push = |rel: String, after: Vec<u8>| {
        files.push(CheckFile {
            real: workdir.join(&rel),
            before: head_blob(&rel),
            after: Arc::new(after),
            rel,
            from: None,
        });
    };
    if staged {
        let index = staged_index(repo, cwd)?;
        let targets = match wanted {
            Some(w) => w,
            None => staged_paths(repo, head_tree.as_ref(), &index)?,
        };
        for rel in targets {
            let blob = index
                .get_path(Path::new(&rel), 0)
                .and_then(|entry| repo.git.find_blob(entry.id).ok());
            if let Some(blob) = blob {
                let bytes = blob.content().to_vec();
                push(rel, bytes);
            }
        }
    } else {
        let targets = match wanted {
            Some(w) => w,
            None => changed_in_worktree(repo)?,
        };
        for rel in targets {
            if let Ok(bytes) = std::fs::read(workdir.join(&rel)) {
                push(rel, bytes);
            }
        }
    }
    Ok(files)
}

/// The repository paths the user named (`""`: the repository's root), or `None` for "every
/// changed file".
fn named(repo: &Repo, paths: &[PathBuf], cwd: &Path) -> Result<Option<Vec<String>>, Error> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for p in paths {
        let abs = super::under(cwd, p);
        // `check .` at the top: every file, as a linter's `.` means.
        if abs.canonicalize().is_ok_and(|c| c == repo.roots.root) {
            out.push(String::new());
            continue;
        }
        let rel = repo
            .roots
            .resolve(&abs.to_string_lossy())
            .map_err(|m| Error::Usage {
                message: m,
                help: "name files inside the repository".into(),
            })?
            .rel;
        out.push(rel);
    }
    Ok(Some(out))
}

/// The files of the named paths: a folder (or the root) gives every file under it.
fn expand(workdir: &Path, named: &[String]) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    for rel in named {
        if rel.is_empty() {
            out.extend(list_files(workdir, ".")?);
        } else if workdir.join(rel).is_dir() {
            out.extend(list_files(workdir, rel)?);
        } else {
            out.push(rel.clone());
        }
    }
    Ok(out)
}

/// The files HEAD has and the working tree (or, `staged`, the index) does not, with HEAD's
/// content.
fn deleted(repo: &Repo, staged: bool, cwd: &Path) -> Result<Vec<checks::RemovedFile>, Error> {
    let Some(head_tree) = repo.git.head().ok().and_then(|h| h.peel_to_tree().ok()) else {
        return Ok(Vec::new());
    };
    let paths: Vec<String> = if staged {
        let index = staged_index(repo, cwd)?;
        let diff = repo
            .git
            .diff_tree_to_index(Some(&head_tree), Some(&index), None)
            .map_err(Error::git)?;
        diff.deltas()
            .filter(|d| d.status() == git2::Delta::Deleted)
            .filter_map(|d| d.old_file().path().and_then(|p| p.to_str()))
            .map(str::to_string)
            .collect()
    } else {
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(false);
        let statuses = repo.git.statuses(Some(&mut opts)).map_err(Error::git)?;
        let workdir = repo.require_workdir()?;
        // Gone from the working tree, whatever the index says (`git rm --cached` keeps the file:
        // the working tree still has it).
        statuses
            .iter()
            .filter(|s| s.status().is_wt_deleted() || s.status().is_index_deleted())
            .filter_map(|s| s.path().map(str::to_string))
            .filter(|rel| std::fs::symlink_metadata(workdir.join(rel)).is_err())
            .collect()
    };
    Ok(paths
        .into_iter()
        .filter_map(|rel| {
            let entry = head_tree.get_path(Path::new(&rel)).ok()?;
            let blob = repo.git.find_blob(entry.id()).ok()?;
            Some((rel, Arc::new(blob.content().to_vec())))
        })
        .collect())
}

/// The paths whose staged content differs from HEAD's.
fn staged_paths(
    repo: &Repo,
    head_tree: Option<&git2::Tree>,
    index: &git2::Index,
) -> Result<Vec<String>, Error> {
    let diff = repo
        .git
        .diff_tree_to_index(head_tree, Some(index), None)
        .map_err(Error::git)?;
    Ok(diff
        .deltas()
        .filter_map(|d| d.new_file().path().and_then(|p| p.to_str()))
        .map(str::to_string)
        .collect())
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

pub(super) fn changed_in_worktree(repo: &Repo) -> Result<Vec<String>, Error> {
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
