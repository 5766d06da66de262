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
//!   original; with `--branch` ([`Subject::Branch`]) both states are the branch's (its files
//!   that differ from the working tree laid over it too), the base the original;
//! - `patchgate verify` ([`Subject::Worktree`]): the working tree is verified as it is, and
//!   every failure in it fails the step (it reports the state, not a change); the baseline is
//!   HEAD (the uncommitted changes undone), so each failure says whether it was already there
//!   at HEAD (`new: false`), and the note how many were. With nothing uncommitted in the
//!   project the run is its own baseline, and its result is cached for the next `apply`.

use std::time::Duration;

use super::baseline::{self, cache};
use super::execute::{Found, Layout, execute};
use super::judge;
use super::plan;
use super::prepare::{self, Prepared};
use super::{Ctx, Done};
use crate::project::config::Config;
use crate::project::detect::Project;

// The types live in `verify` (its `mod.rs`); these are the paths callers outside it use.
pub use super::{BaselineUse, Change, Options, Status, Step, Subject, VerifyReport};

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

/// One project: prepared (step 1), its steps run on the verified state and the baselines of the
/// failed ones had (step 2), then judged (step 3).
fn verify_project(cx: &Ctx, project: &Project, steps: &[Step]) -> Vec<VerifyReport> {
    let ready = match prepare::prepare(cx, project, steps) {
        Ok(r) => r,
        Err(reports) => return reports,
    };
    let layout = Layout {
        project_dir: &ready.project_dir,
        mirror_root: &ready.mirror.root,
        mirror_rel: &ready.mirror_rel,
    };
    let (mut out, mut done) = run_steps(cx, project, &ready, &layout, steps);
    let switched = baselines(cx, project, &ready, &layout, &mut done);
    out.extend(judge::judge_all(cx, project, &ready, done, switched));
    out
}

/// Every step on the verified state (a step the project does not have is left out; one whose
/// command cannot be found is `missing`); each run is cached for a later baseline.
fn run_steps(
    cx: &Ctx,
    project: &Project,
    ready: &Prepared,
    layout: &Layout,
    steps: &[Step],
) -> (Vec<VerifyReport>, Vec<Done>) {
    let prep = ready.package(cx, &ready.mirror, &ready.checked);
    let mut out = Vec::new();
    let mut done: Vec<Done> = Vec::new();
    for &step in steps {
        let at = plan::Where {
            config: cx.config,
            repo_root: cx.repo_root,
            git_dir: cx.git_dir,
            project,
            dir: &ready.project_dir,
            cargo_pkg: ready.cargo_pkg.as_deref(),
        };
        let plan = match plan::plan_step(&at, step) {
            Ok(Some(p)) => p,
            Ok(None) => continue,
            Err(m) => {
                out.push(VerifyReport {
                    step,
                    project: ready.shown.clone(),
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
        let run = execute(&plan, step, layout, prep.as_ref(), cx.timeout);
        let key = cache::key(&ready.checked_id, project, cx.repo_root, step, &plan);
        cache::put(cx.git_dir, &key, &run);
        done.push(Done {
            step,
            plan,
            run,
            baseline: None,
            baseline_ms: 0,
        });
    }
    (out, done)
}

/// A baseline for each step that failed: the verified state's own run when it is the original,
/// the cache, else one run on the original state (the mirror re-synced, the original's overlays
/// laid over it). Whether the mirror was switched to the original.
fn baselines(
    cx: &Ctx,
    project: &Project,
    ready: &Prepared,
    layout: &Layout,
    done: &mut [Done],
) -> bool {
    let key = |id: &str, d: &Done| cache::key(id, project, cx.repo_root, d.step, &d.plan);
    let mut to_run = Vec::new();
    for (i, d) in done.iter_mut().enumerate() {
        if d.run.status != Status::Fail {
            continue;
        }
        let usable = |c: &cache::Cached| {
            baseline::usable(c.status, &c.failures, None).map(<[Found]>::to_vec)
        };
        d.baseline = match &ready.original_id {
            None => {
                // Nothing was committed: everything is new since then.
                d.run.note = Some("no HEAD commit to compare with: every failure is new".into());
                None
            }
            Some(id) if *id == ready.checked_id => Some((
                baseline::usable(d.run.status, &d.run.failures, None).map(<[Found]>::to_vec),
                BaselineUse::Same,
            )),
            Some(id) => match cache::get(cx.git_dir, &key(id, d)) {
                Some(c) => Some((usable(&c), BaselineUse::Cached)),
                None => {
                    to_run.push(i);
                    None
                }
            },
        };
    }
    let switched = !to_run.is_empty();
    let (true, Some(id), Some(original)) = (switched, &ready.original_id, &ready.original) else {
        return switched;
    };
    // The mirror re-synced undoes the patch; `verify` lays HEAD's content over it.
    let back = ready
        .resync(cx)
        .and_then(|m| cx.lay(&m, original).map(|()| m));
    let back_prep = match &back {
        Ok(m) => ready.package(cx, m, original),
        Err(_) => None,
    };
    let prepared = match &back_prep {
        Some(p) => p.ensure().map_err(|u| u.message),
        None => back.as_ref().map(|_| ()).map_err(Clone::clone),
    };
    for i in to_run {
        let d = &mut done[i];
        d.baseline = Some(match &prepared {
            Err(e) => (
                Err(format!("the original state could not be prepared: {e}")),
                BaselineUse::Unavailable,
            ),
            Ok(()) => {
                let base = execute(&d.plan, d.step, layout, back_prep.as_ref(), cx.timeout);
                cache::put(cx.git_dir, &key(id, d), &base);
                d.baseline_ms = base.duration_ms;
                (
                    baseline::usable(base.status, &base.failures, base.note.as_deref())
                        .map(<[Found]>::to_vec),
                    BaselineUse::Ran,
                )
            }
        });
    }
    switched
}
