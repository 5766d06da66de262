//! Running the verify steps (build, test, typecheck) of each project the patch touches, on the
//! patched state, judged against the same steps on the original state.
//!
//! Where the commands run: in the project's mirror (`project::mirror`, outside the repository),
//! the working tree with the patch laid over it, so the user's tree is untouched until the
//! decision. What keeps that fast and real:
//! - Rust: `CARGO_TARGET_DIR` is patchgate's persistent `.git/patchgate/cargo-target` (shared with
//!   clippy), so a second `cargo test` after a one-line patch rebuilds one crate, not the world;
//!   the user's `~/.cargo` registry is used as is, `--offline`;
//! - Go: the user's module and build caches (GOMODCACHE, GOCACHE) as they are, `GOPROXY=off`;
//! - Rust and Go: dependencies missing from those caches are fetched first, unless offline, and a
//!   toolchain too old for the project is an `error` with a hint, not a build failure
//!   (`project::prepare`);
//! - Node: the project's `node_modules` (and those of the directories above it, up to the
//!   repository root: a workspace's hoisted install) linked into the mirror; the package
//!   manager chosen from the lockfile;
//! - Python: the project's own virtualenv (`.venv`/`venv`, else `python3`), with the mirror first
//!   on `PYTHONPATH` so an editable install of the real tree does not shadow the patched code.
//!
//! The commands are in [`super::plan`]. A step a project does not have (no `test` script, no mypy
//! configuration) is left out of the report; a missing toolchain is `missing` and blocks only
//! with `--require-tools`.
//!
//! **The baseline.** What fails is judged against the same step on the original state
//! ([`super::baseline`] has the rules): only failures the patch introduced block. A step that
//! passes needs no baseline (the common case costs nothing more); for a failed one it comes from
//! the cache (`baseline: cached`, keyed by the original's content), or the steps that need one
//! run again on the original (the mirror re-synced without the overlays), once per state. A step
//! whose failures were all there before is `pass`, with a note saying how many. [`Subject`] says
//! what the two states are:
//! - `apply` ([`Subject::Patch`]): the patched state is verified; the working tree is the
//!   original;
//! - `patchgate verify` ([`Subject::Worktree`]): the working tree is verified as it is, and
//!   every failure in it fails the step (it reports the state, not a change); the baseline is
//!   HEAD (the uncommitted changes undone), so each failure says whether it was already there
//!   at HEAD (`new: false`), and the note how many were. With nothing uncommitted in the
//!   project the run is its own baseline, and its result is cached for the next `apply`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::Failure;
use super::baseline::{self, Maps, cache};
use super::execute::{Found, Layout, StepRun, execute};
use super::hints;
use super::plan::{self, Plan};
use crate::checks::exec::package::{CARGO, GO, cargo_package};
use crate::project::config::Config;
use crate::project::detect::{Lang, Project};
use crate::project::mirror::Mirror;
use crate::project::prepare::{self, Toolchain};
use crate::project::tools::Ran;
use crate::project::tools::program;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Build,
    Test,
    Typecheck,
}

impl Step {
    pub fn parse_list(s: &str) -> Result<Vec<Step>, String> {
        s.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| match x {
                "build" => Ok(Step::Build),
                "test" => Ok(Step::Test),
                "typecheck" => Ok(Step::Typecheck),
                other => Err(format!(
                    "unknown verify step `{other}` (use build, test, typecheck)"
                )),
            })
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Step::Build => "build",
            Step::Test => "test",
            Step::Typecheck => "typecheck",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Missing,
    Error,
    Timeout,
}

/// Where a step's baseline came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineUse {
    /// The same step on the same original state ran before.
    Cached,
    /// Run on the original state now.
    Ran,
    /// The verified state is the original (nothing changed in the project): its own run.
    Same,
    /// None could be had; the note says why.
    Unavailable,
}

/// One step on one project (the `verify[]` entries of the report).
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub step: Step,
    /// The project's directory, relative to the repository root (`.` for the root).
    pub project: String,
    pub command: String,
    pub status: Status,
    /// New failures first.
    pub failures: Vec<Failure>,
    pub hints: Vec<String>,
    /// The step's time, its baseline's run included.
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Present when the step failed on the verified state and was compared with a baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineUse>,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub steps: Vec<Step>,
    pub require_tools: bool,
    /// Per step; default 10 minutes (or `[verify] timeout`).
    pub timeout: Option<Duration>,
    /// Never download dependencies (`--offline`).
    pub offline: bool,
}

pub use crate::project::mirror::Overlay;

/// A file whose content differs between the original state and the verified one (`None`:
/// absent there).
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    pub rel: &'a str,
    pub before: Option<&'a [u8]>,
    pub after: Option<&'a [u8]>,
}

/// What is verified, and what it is judged against (see the module doc).
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// The working tree with these changes laid over it; the working tree is the baseline.
    Patch(&'a [Change<'a>]),
    /// The working tree as it is; HEAD is the baseline (these changes: HEAD → working tree),
    /// `None` without a HEAD commit.
    Worktree(Option<&'a [Change<'a>]>),
}

impl<'a> Subject<'a> {
    fn changes(&self) -> &'a [Change<'a>] {
        match *self {
            Subject::Patch(c) | Subject::Worktree(Some(c)) => c,
            Subject::Worktree(None) => &[],
        }
    }
}

/// Runs the steps on every project; returns the reports and whether they block.
pub fn run(
    repo_root: &std::path::Path,
    git_dir: &std::path::Path,
    config: &Config,
    projects: &[Project],
    subject: Subject,
    opts: &Options,
) -> (Vec<VerifyReport>, bool) {
    let timeout = opts
        .timeout
        .or(config.verify.timeout.map(Duration::from_secs))
        .unwrap_or(Duration::from_secs(600));
    let cx = Ctx {
        repo_root,
        git_dir,
        config,
        subject,
        timeout,
        offline: opts.offline,
    };
    let mut reports = Vec::new();
    for p in projects {
        reports.extend(verify_project(&cx, p, &opts.steps));
    }
    // The first failures first: a failing step before passing ones.
    reports.sort_by_key(|r| (r.status != Status::Fail, r.project.clone()));
    let blocked = reports.iter().any(|r| match r.status {
        Status::Fail => true,
        Status::Missing | Status::Error | Status::Timeout => opts.require_tools,
        Status::Pass => false,
    });
    (reports, blocked)
}

struct Ctx<'a> {
    repo_root: &'a std::path::Path,
    git_dir: &'a std::path::Path,
    config: &'a Config,
    subject: Subject<'a>,
    timeout: Duration,
    offline: bool,
}

/// A step run on the verified state, and what its judgement needs.
struct Done {
    step: Step,
    plan: Plan,
    run: StepRun,
    /// The baseline's failures (or why there are none) and where they came from.
    baseline: Option<(Result<Vec<Found>, String>, BaselineUse)>,
    baseline_ms: u64,
}

fn lay(mirror: &Mirror, cx: &Ctx, overlays: &[Overlay]) -> Result<(), String> {
    overlays
        .iter()
        .try_for_each(|o| mirror.overlay(cx.git_dir, o.rel, o.content))
}

fn verify_project(cx: &Ctx, project: &Project, steps: &[Step]) -> Vec<VerifyReport> {
    let shown = if project.rel_root.is_empty() {
        ".".to_string()
    } else {
        project.rel_root.clone()
    };
    let started = Instant::now();
    let fail_all = |status: Status, note: String| -> Vec<VerifyReport> {
        steps
            .iter()
            .map(|s| VerifyReport {
                step: *s,
                project: shown.clone(),
                command: String::new(),
                status,
                failures: Vec::new(),
                hints: Vec::new(),
                duration_ms: started.elapsed().as_millis() as u64,
                note: Some(note.clone()),
                baseline: None,
            })
            .collect()
    };
    let unready_all = |u: prepare::Unready| -> Vec<VerifyReport> {
        let mut all = fail_all(Status::Error, u.message);
        for r in &mut all {
            r.hints.push(u.help.clone());
        }
        all
    };
    // Rust mirrors the whole workspace; everything else the project directory.
    let mut toolchain: Option<(Toolchain, Vec<OsString>)> = None;
    let (mirror_rel, cargo_pkg) = if project.lang == Lang::Rust {
        let cargo = match program(cx.config, "cargo", "cargo", &project.root, cx.repo_root) {
            Ok(a) => a,
            Err(m) => return fail_all(Status::Missing, m),
        };
        let found = match cargo_package::<()>(&cargo, cx.repo_root, project, cx.timeout) {
            Ok((ws, name)) => (ws, Some(name)),
            Err(Ran::Missing(m)) => return fail_all(Status::Missing, m),
            Err(Ran::Timeout) => {
                return fail_all(Status::Timeout, "cargo metadata timed out".into());
            }
            Err(Ran::Skipped(m)) | Err(Ran::Error(m)) => return fail_all(Status::Error, m),
            Err(Ran::Unready { message, help }) => {
                return unready_all(prepare::Unready { message, help });
            }
            Err(Ran::Done(())) => return Vec::new(),
        };
        toolchain = Some((Toolchain::Cargo, cargo));
        found
    } else {
        if project.lang == Lang::Go {
            toolchain = Some((Toolchain::Go, vec![OsString::from("go")]));
        }
        (project.rel_root.clone(), None)
    };
    let _serial = match project.lang {
        Lang::Rust => Some(CARGO.lock().unwrap_or_else(|p| p.into_inner())),
        Lang::Go => Some(GO.lock().unwrap_or_else(|p| p.into_inner())),
        _ => None,
    };
    let sync = || Mirror::sync(cx.repo_root, cx.git_dir, &mirror_rel);
    let mirror = match sync() {
        Ok(m) => m,
        Err(e) => return fail_all(Status::Error, e),
    };
    // The two states, as overlays on the mirrored working tree.
    let changes: Vec<&Change> = cx
        .subject
        .changes()
        .iter()
        .filter(|c| mirror.covers(c.rel))
        .collect();
    let overlays = |after: bool| -> Vec<Overlay> {
        changes
            .iter()
            .map(|c| Overlay {
                rel: c.rel,
                content: if after { c.after } else { c.before },
            })
            .collect()
    };
    let (checked, original) = match cx.subject {
        Subject::Patch(_) => (overlays(true), Some(Vec::new())),
        Subject::Worktree(Some(_)) => (Vec::new(), Some(overlays(false))),
        Subject::Worktree(None) => (Vec::new(), None),
    };
    let checked_id = mirror.state_id(&checked);
    let original_id = original.as_ref().map(|o| mirror.state_id(o));
    if let Err(e) = lay(&mirror, cx, &checked) {
        return fail_all(Status::Error, e);
    }
    let mirror_root = mirror.root.clone();
    let prefix = if mirror_rel.is_empty() {
        String::new()
    } else {
        format!("{mirror_rel}/")
    };
    let project_dir = if project.rel_root == mirror_rel {
        mirror_root.clone()
    } else {
        mirror_root.join(
            project
                .rel_root
                .strip_prefix(&prefix)
                .unwrap_or(&project.rel_root),
        )
    };
    if project.lang == Lang::Node {
        link_node_modules(cx, project, &mirror_root, &mirror_rel);
    }
    let layout = Layout {
        project_dir: &project_dir,
        mirror_root: &mirror_root,
        mirror_rel: &mirror_rel,
    };
    let key =
        |state: &str, step: Step, plan: &Plan| cache::key(state, project, cx.repo_root, step, plan);
    // Rust and Go: the dependencies in the caches, a toolchain new enough (for each state: a
    // patched Cargo.toml or go.mod may need others).
    let real_dir = prepare::real_dir(cx.repo_root, &mirror_rel);
    let prep = toolchain.as_ref().map(|(t, argv)| prepare::Package {
        toolchain: *t,
        argv,
        git_dir: cx.git_dir,
        mirror: &mirror,
        mirror_rel: &mirror_rel,
        package_rel: &project.rel_root,
        real_dir: &real_dir,
        overlays: &checked,
        offline: cx.offline,
        timeout: cx.timeout,
    });
    if let Some(p) = &prep
        && let Err(u) = p.ensure()
    {
        return unready_all(u);
    }

    // 1. Every step on the verified state.
    let mut out = Vec::new();
    let mut done: Vec<Done> = Vec::new();
    for &step in steps {
        let at = plan::Where {
            config: cx.config,
            repo_root: cx.repo_root,
            git_dir: cx.git_dir,
            project,
            dir: &project_dir,
            cargo_pkg: cargo_pkg.as_deref(),
        };
        let plan = match plan::plan_step(&at, step) {
            Ok(Some(p)) => p,
            Ok(None) => continue,
            Err(m) => {
                out.push(VerifyReport {
                    step,
                    project: shown.clone(),
                    command: String::new(),
                    status: Status::Missing,
                    failures: Vec::new(),
                    hints: Vec::new(),
                    duration_ms: 0,
                    note: Some(m),
                    baseline: None,
                });
                continue;
            }
        };
        let run = execute(&plan, step, &layout, prep.as_ref(), cx.timeout);
        cache::put(cx.git_dir, &key(&checked_id, step, &plan), &run);
        done.push(Done {
            step,
            plan,
            run,
            baseline: None,
            baseline_ms: 0,
        });
    }

    // 2. A baseline for each step that failed: the cache, else one run on the original state.
    let mut to_run = Vec::new();
    for (i, d) in done.iter_mut().enumerate() {
        if d.run.status != Status::Fail {
            continue;
        }
        let usable = |c: &cache::Cached| {
            baseline::usable(c.status, &c.failures, None).map(<[Found]>::to_vec)
        };
        d.baseline = match &original_id {
            None => {
                // Nothing was committed: everything is new since then.
                d.run.note = Some("no HEAD commit to compare with: every failure is new".into());
                None
            }
            Some(id) if *id == checked_id => Some((
                baseline::usable(d.run.status, &d.run.failures, None).map(<[Found]>::to_vec),
                BaselineUse::Same,
            )),
            Some(id) => match cache::get(cx.git_dir, &key(id, d.step, &d.plan)) {
                Some(c) => Some((usable(&c), BaselineUse::Cached)),
                None => {
                    to_run.push(i);
                    None
                }
            },
        };
    }
    let switched = !to_run.is_empty();
    if let (true, Some(id), Some(original)) = (switched, &original_id, &original) {
        // The mirror re-synced undoes the patch; `verify` lays HEAD's content over it.
        let back = sync().and_then(|m| lay(&m, cx, original).map(|()| m));
        let back_prep = match (&back, &toolchain) {
            (Ok(m), Some((t, argv))) => Some(prepare::Package {
                toolchain: *t,
                argv,
                git_dir: cx.git_dir,
                mirror: m,
                mirror_rel: &mirror_rel,
                package_rel: &project.rel_root,
                real_dir: &real_dir,
                overlays: original,
                offline: cx.offline,
                timeout: cx.timeout,
            }),
            _ => None,
        };
        let ready = match &back_prep {
            Some(p) => p.ensure().map_err(|u| u.message),
            None => back.as_ref().map(|_| ()).map_err(Clone::clone),
        };
        for i in to_run {
            let d = &mut done[i];
            d.baseline = Some(match &ready {
                Err(e) => (
                    Err(format!("the original state could not be prepared: {e}")),
                    BaselineUse::Unavailable,
                ),
                Ok(()) => {
                    let base = execute(&d.plan, d.step, &layout, back_prep.as_ref(), cx.timeout);
                    cache::put(cx.git_dir, &key(id, d.step, &d.plan), &base);
                    d.baseline_ms = base.duration_ms;
                    (
                        baseline::usable(base.status, &base.failures, base.note.as_deref())
                            .map(<[Found]>::to_vec),
                        BaselineUse::Ran,
                    )
                }
            });
        }
    }

    // 3. The judgement; then the hints, which read the sources of the verified state.
    let maps = Maps::new(&changes);
    let patch = matches!(cx.subject, Subject::Patch(_));
    let mut judged: Vec<(VerifyReport, StepRun)> = done
        .into_iter()
        .map(|d| judge(d, &shown, &maps, patch))
        .collect();
    let want_hints = judged.iter().any(|(r, _)| r.status == Status::Fail);
    if switched && want_hints {
        let restored = sync().and_then(|m| lay(&m, cx, &checked));
        if restored.is_err() {
            // The sources are the original's: hints without call sites are still right.
            for (r, run) in &mut judged {
                if r.status == Status::Fail {
                    r.hints = hints::hints(project.lang, &r.failures, &run.text);
                }
            }
            return finish(out, judged);
        }
    }
    for (r, run) in &mut judged {
        if r.status != Status::Fail {
            continue;
        }
        let text = if patch {
            baseline::without_old(&run.text, &run.failures)
        } else {
            std::borrow::Cow::Borrowed(run.text.as_str())
        };
        let about: Vec<Failure> = r
            .failures
            .iter()
            .filter(|f| f.new || !patch)
            .cloned()
            .collect();
        r.hints.extend(hints::hints_with_sites(
            project.lang,
            &about,
            &text,
            &project_dir,
        ));
    }
    finish(out, judged)
}

fn finish(mut out: Vec<VerifyReport>, judged: Vec<(VerifyReport, StepRun)>) -> Vec<VerifyReport> {
    out.extend(judged.into_iter().map(|(r, _)| r));
    out
}

/// The step's report: its failures marked new or old, its status and note (see the module doc).
fn judge(mut d: Done, shown: &str, maps: &Maps, patch: bool) -> (VerifyReport, StepRun) {
    let mut report = VerifyReport {
        step: d.step,
        project: shown.to_string(),
        command: d.plan.command(),
        status: d.run.status,
        failures: Vec::new(),
        hints: Vec::new(),
        duration_ms: d.run.duration_ms + d.baseline_ms,
        note: d.run.note.take(),
        baseline: None,
    };
    report.hints.extend(d.run.help.take());
    if d.run.status == Status::Timeout {
        report
            .hints
            .push("a step timed out: look for a hang, a deadlock or an unclosed resource".into());
    }
    if let Some((base, source)) = d.baseline.take() {
        baseline::mark(
            &mut d.run.failures,
            base.as_ref().ok().map(Vec::as_slice),
            maps,
        );
        let total = d.run.failures.len();
        let old = d.run.failures.iter().filter(|f| !f.failure.new).count();
        let whence = match source {
            BaselineUse::Cached => "baseline: cached".to_string(),
            BaselineUse::Ran => format!("baseline: ran in {:.1} s", d.baseline_ms as f64 / 1000.0),
            BaselineUse::Same => "baseline: the same state".to_string(),
            BaselineUse::Unavailable => String::new(),
        };
        let since = if patch { "before the patch" } else { "at HEAD" };
        let failures = |n: usize| if n == 1 { "failure" } else { "failures" };
        let said = match &base {
            Err(why) if patch => format!(
                "no baseline: {why}; only failures in the patched files block ({old} of {total} outside them)"
            ),
            Err(why) => format!("no baseline: {why}"),
            Ok(_) if old == 0 => format!("none of the failures was there {since} ({whence})"),
            Ok(_) if old == total && patch => format!(
                "{total} {} {} already there {since} ({whence})",
                failures(total),
                if total == 1 { "was" } else { "were" }
            ),
            Ok(_) => format!(
                "{old} of {total} {} {} already there {since} ({whence})",
                failures(total),
                if old == 1 { "was" } else { "were" }
            ),
        };
        report.note = Some(match report.note.take() {
            Some(n) => format!("{n}; {said}"),
            None => said,
        });
        report.baseline = Some(source);
        if patch && old == total {
            report.status = Status::Pass;
        }
    }
    // New failures first, each group in the tool's order.
    d.run.failures.sort_by_key(|f| !f.failure.new);
    report.failures = d.run.failures.iter().map(|f| f.failure.clone()).collect();
    (report, d.run)
}

/// Links the real `node_modules` of the project's directory and of each directory above it (up
/// to the repository root) into the mirror, where the mirror has none: dependencies as the user
/// installed them, hoisted ones included.
fn link_node_modules(cx: &Ctx, project: &Project, mirror_root: &std::path::Path, mirror_rel: &str) {
    let base: PathBuf = match mirror_rel {
        "" => mirror_root.to_path_buf(),
        rel => {
            let depth = rel.split('/').count();
            let mut b = mirror_root.to_path_buf();
            for _ in 0..depth {
                b.pop();
            }
            b
        }
    };
    let mut rel = Some(project.rel_root.as_str());
    while let Some(r) = rel {
        let real = cx.repo_root.join(r).join("node_modules");
        let link = base.join(r).join("node_modules");
        if real.is_dir()
            && std::fs::symlink_metadata(&link).is_err()
            && link.parent().is_some_and(|p| p.is_dir())
        {
            let _ = std::os::unix::fs::symlink(&real, &link);
        }
        rel = match r.rsplit_once('/') {
            Some((parent, _)) => Some(parent),
            None if r.is_empty() => None,
            None => Some(""),
        };
    }
}
