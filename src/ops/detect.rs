//! `detect`: every checker considered for a path (or one file per project under a directory),
//! whether the project uses it and on what evidence, and where its program is.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Context;
use crate::checks::checker::{Checker, Locate};
use crate::checks::select::{self, Considered, Verdict};
use crate::error::Error;
use crate::project::config::Config;
use crate::project::detect::{self, Lang, Project};
use crate::project::evidence::Evidence;
use crate::repo::Repo;

#[derive(Serialize)]
struct CheckerInfo {
    name: &'static str,
    kind: crate::checks::Kind,
    #[serde(flatten)]
    verdict: Verdict,
    /// Whether its program was found (for a used checker).
    #[serde(skip_serializing_if = "Option::is_none")]
    available: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

#[derive(Serialize)]
struct DetectOut {
    path: String,
    lang: Option<Lang>,
    project: Option<Project>,
    /// The checkers that run on this file.
    checkers: Vec<&'static str>,
    reason: String,
    /// Every checker considered, used or not, with its evidence or the reason.
    considered: Vec<CheckerInfo>,
}

/// Which path to describe.
#[derive(Debug, Clone, Default, clap::Args, Deserialize, JsonSchema)]
pub struct Request {
    /// A file or directory (default: the repository root, or the current directory on the
    /// command line).
    pub path: Option<PathBuf>,
}

/// The detection: one entry per file considered.
#[derive(Serialize)]
#[serde(transparent)]
pub struct Detection(Vec<DetectOut>);

impl Detection {
    /// The entries as JSON (an array), as `detect --format json` prints them.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The listing for a person.
    pub fn render_human(&self) -> String {
        human(&self.0)
    }
}

/// The checkers considered for the request's path (or the context's directory).
pub fn run(request: &Request, ctx: &Context) -> Result<Detection, Error> {
    detect_all(&ctx.dir, request.path.as_deref()).map(Detection)
}

fn detect_all(dir: &Path, path: Option<&Path>) -> Result<Vec<DetectOut>, Error> {
    let repo = Repo::discover(dir)?;
    let workdir = repo.require_workdir()?.to_path_buf();
    let base = Context::at(Some(dir)).base();
    let target = path.map(|p| super::under(&base, p)).unwrap_or(base);
    let rel = repo
        .roots
        .resolve(&target.to_string_lossy())
        .map(|r| r.rel)
        .or_else(|e| {
            if std::fs::canonicalize(&target).ok().as_deref() == Some(workdir.as_path()) {
                Ok(String::new())
            } else {
                Err(e)
            }
        })
        .map_err(|m| Error::Usage {
            message: m,
            help: "name a path inside the repository".into(),
        })?;
    let config = Config::load(&workdir)?;
    let ev = Evidence::new(&workdir);
    let consider = |f: &str| select::consider(&workdir, &ev, &config, None, f);
    let files = if rel.is_empty() || workdir.join(&rel).is_dir() {
        let all = super::check::list_files(&workdir, if rel.is_empty() { "." } else { &rel })?;
        // One representative file per (language, project): a directory summary, not a listing.
        let mut seen = std::collections::HashSet::new();
        all.into_iter()
            .filter(|f| {
                detect::lang_of(f)
                    .and_then(|l| detect::project_of(&workdir, f, l))
                    .is_some_and(|p| seen.insert((p.lang, p.rel_root.clone())))
            })
            .collect()
    } else {
        vec![rel]
    };
    Ok(files
        .iter()
        .map(|f| describe(&workdir, &config, f, consider(f)))
        .collect())
}

fn describe(workdir: &Path, config: &Config, rel: &str, considered: Vec<Considered>) -> DetectOut {
    let lang = detect::lang_of(rel);
    let project = lang.and_then(|l| detect::project_of(workdir, rel, l));
    let reason = match (lang, &project) {
        (None, _) => "no language checker knows this file type".to_string(),
        (Some(l), Some(p)) => format!(
            "{} file in the project at {}/ (found {})",
            l.name(),
            if p.rel_root.is_empty() {
                "."
            } else {
                &p.rel_root
            },
            p.marker
        ),
        (Some(l), None) => format!(
            "{} file, but no {} above it up to the repository root",
            l.name(),
            l.markers().join(" / ")
        ),
    };
    DetectOut {
        path: rel.to_string(),
        lang,
        checkers: considered
            .iter()
            .filter(|c| c.used())
            .map(|c| c.checker.name)
            .collect(),
        considered: considered
            .iter()
            .map(|c| info(workdir, config, c))
            .collect(),
        project,
        reason,
    }
}

fn info(workdir: &Path, config: &Config, c: &Considered) -> CheckerInfo {
    let (available, detail) = if c.used() {
        match program_of(workdir, config, c.checker, c.project.as_ref()) {
            Ok(d) => (Some(true), Some(d)),
            Err(d) => (Some(false), Some(d)),
        }
    } else {
        (None, None)
    };
    CheckerInfo {
        name: c.checker.name,
        kind: c.checker.kind,
        verdict: c.verdict.clone(),
        available,
        detail,
    }
}

/// Where a used checker's program is (or why it is missing).
fn program_of(
    workdir: &Path,
    config: &Config,
    checker: &Checker,
    project: Option<&Project>,
) -> Result<String, String> {
    let Some(locate) = checker.locate else {
        return Ok("built in".into());
    };
    let l = Locate {
        config,
        checker: checker.name,
        project_root: project.map_or(workdir, |p| p.root.as_path()),
        repo_root: workdir,
    };
    locate(&l).map(|argv| {
        argv.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    })
}

fn human(outs: &[DetectOut]) -> String {
    let mut text = String::new();
    if outs.is_empty() {
        text.push_str("no file here that a checker knows\n");
    }
    for o in outs {
        text.push_str(&format!("{}: {}\n", o.path, o.reason));
        for c in &o.considered {
            let line = match (&c.verdict, c.available) {
                (Verdict::Used { evidence, .. }, Some(true)) => format!(
                    "  ✓ {}: used — {evidence} ({})\n",
                    c.name,
                    c.detail.as_deref().unwrap_or("")
                ),
                (Verdict::Used { evidence, .. }, _) => format!(
                    "  ✗ {}: used — {evidence}, but {}\n",
                    c.name,
                    c.detail.as_deref().unwrap_or("not found")
                ),
                (Verdict::NotUsed { why }, _) => format!("  - {}: not used — {why}\n", c.name),
            };
            text.push_str(&line);
        }
    }
    text
}
