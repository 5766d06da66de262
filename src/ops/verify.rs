//! `verify`: the projects' own build / test / typecheck on the current state, judged against
//! HEAD (only failures the uncommitted changes introduced block).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::Context;
use crate::error::Error;
use crate::project::detect::{self, Lang, Project};
use crate::repo::Repo;
use crate::report::{Report, Status};
use crate::verify::run::{Change, Options, Step, Subject};

/// What to verify, and how.
#[derive(Debug, Clone, clap::Args, Deserialize, JsonSchema)]
pub struct Request {
    /// A file or directory whose project(s) to verify (default: the projects of the files changed
    /// since HEAD, else the one of the current directory).
    pub path: Option<PathBuf>,
    /// Which steps (comma-separated).
    #[arg(long, value_name = "LIST", default_value = "build,test,typecheck")]
    #[serde(default = "all_steps")]
    pub steps: String,
    /// A missing toolchain fails too.
    #[arg(long)]
    #[serde(default)]
    pub require_tools: bool,
    /// Timeout per step, in seconds (default 600).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Never download the Rust / Go dependencies (`cargo fetch`, `go mod download`); missing ones
    /// make the step `error` with what to run.
    #[arg(long)]
    #[serde(default)]
    pub offline: bool,
}

fn all_steps() -> String {
    "build,test,typecheck".into()
}

impl Request {
    fn options(&self) -> Result<Options, Error> {
        Ok(Options {
            steps: Step::parse_list(&self.steps).map_err(|m| Error::Usage {
                message: m,
                help: "e.g. --steps build,test".into(),
            })?,
            require_tools: self.require_tools,
            timeout: self.timeout.map(std::time::Duration::from_secs),
            offline: self.offline,
        })
    }
}

/// The steps on the current state of the chosen projects, as a report.
pub fn run(request: &Request, ctx: &Context) -> Result<Report, Error> {
    let opts = request.options()?;
    let repo = Repo::discover(&ctx.dir)?;
    let workdir = repo.require_workdir()?.to_path_buf();
    let targets = targets(&repo, &ctx.base(), request.path.as_deref())?;
    let projects = projects_for(&workdir, &targets);
    let config = crate::project::config::Config::load(&workdir)?;
    // The state as it is; HEAD says which failures were already there.
    let uncommitted =
        crate::verify::baseline::head::uncommitted(&repo.git, &workdir).map_err(Error::git)?;
    let changes: Option<Vec<Change>> = uncommitted
        .as_ref()
        .map(|u| u.iter().map(|c| c.change()).collect());
    let (reports, blocked) = crate::verify::run::run(
        &workdir,
        &repo.git_dir,
        &config,
        &projects,
        Subject::Worktree(changes.as_deref()),
        &opts,
    );
    let mut report = Report::empty(if blocked {
        Status::ChecksFailed
    } else {
        Status::Clean
    });
    report.verify = reports;
    report.root = Some(workdir);
    Ok(report)
}

/// The repository paths whose projects to verify: `path`, else every changed file, else the
/// directory the command runs in.
fn targets(repo: &Repo, base: &Path, path: Option<&Path>) -> Result<Vec<String>, Error> {
    let rel_of = |p: &Path| {
        repo.roots
            .resolve(&p.to_string_lossy())
            .map(|r| r.rel)
            .unwrap_or_default()
    };
    let mut targets = match path {
        Some(p) => vec![rel_of(&super::under(base, p))],
        None => super::check::changed_in_worktree(repo)?,
    };
    if targets.is_empty() {
        targets.push(rel_of(base));
    }
    Ok(targets)
}

/// The projects (one per language and nearest marker) of the targets; a directory stands for
/// a file inside it, for the marker walk.
fn projects_for(workdir: &Path, targets: &[String]) -> Vec<Project> {
    let mut projects: Vec<Project> = Vec::new();
    for t in targets {
        let probe_dir = (t.is_empty() || workdir.join(t).is_dir()).then(|| t.clone());
        for lang in [Lang::Python, Lang::Node, Lang::Rust, Lang::Go] {
            let rel = match &probe_dir {
                Some(d) if d.is_empty() => "_".to_string(),
                Some(d) => format!("{d}/_"),
                None if detect::lang_of(t) == Some(lang) => t.clone(),
                None => continue,
            };
            if let Some(p) = detect::project_of(workdir, &rel, lang)
                && !projects.contains(&p)
            {
                projects.push(p);
            }
        }
    }
    projects
}
