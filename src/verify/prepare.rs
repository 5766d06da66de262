//! Step 1 of a project's verification: its mirror (the Cargo workspace for Rust, else the
//! project's directory) with the verified state laid over it, the overlays of both states, and,
//! for Rust and Go, the dependencies in the caches and a toolchain new enough.
//!
//! Invariant: a project that cannot be prepared yields one report per step saying why (`missing`
//! without the toolchain, `error` otherwise), never a partial run.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::MutexGuard;
use std::time::Instant;

use super::{Change, Ctx, Overlay, Status, Step, Subject, VerifyReport};
use crate::checks::exec::package::{CARGO, GO, cargo_package};
use crate::project::detect::{Lang, Project};
use crate::project::mirror::Mirror;
use crate::project::prepare::{self, Toolchain};
use crate::project::tools::{Ran, program};

/// A project ready for its steps.
pub(super) struct Prepared<'a> {
    /// The project's directory as reports show it (`.` for the root).
    pub(super) shown: String,
    /// The mirrored directory, repository-relative (the Cargo workspace, or the project).
    pub(super) mirror_rel: String,
    /// The Cargo package spec (`name@version`) for Rust.
    pub(super) cargo_pkg: Option<String>,
    /// The package itself, repository-relative (whose `rust-version` counts).
    pub(super) package_rel: String,
    /// The toolchain `project::prepare` makes ready (Rust, Go), with its command.
    pub(super) toolchain: Option<(Toolchain, Vec<OsString>)>,
    pub(super) mirror: Mirror,
    /// The project's directory in the mirror (where the steps run).
    pub(super) project_dir: PathBuf,
    /// The mirrored directory in the user's tree, for the help.
    pub(super) real_dir: PathBuf,
    /// The changes inside the mirror.
    pub(super) changes: Vec<&'a Change<'a>>,
    /// The verified state's overlays, and the original's (`None`: no HEAD to compare with).
    pub(super) checked: Vec<Overlay<'a>>,
    pub(super) original: Option<Vec<Overlay<'a>>>,
    pub(super) checked_id: String,
    pub(super) original_id: Option<String>,
    /// Cargo and go runs share caches: one project at a time.
    pub(super) _serial: Option<MutexGuard<'static, ()>>,
}

/// One report per step, all with the same status and note: the project could not be prepared.
pub(super) fn fail_all(
    shown: &str,
    steps: &[Step],
    started: Instant,
    status: Status,
    note: String,
    hint: Option<String>,
) -> Vec<VerifyReport> {
    steps
        .iter()
        .map(|s| VerifyReport {
            step: *s,
            project: shown.to_string(),
            command: String::new(),
            status,
            failures: Vec::new(),
            hints: hint.iter().cloned().collect(),
            duration_ms: started.elapsed().as_millis() as u64,
            note: Some(note.clone()),
            baseline: None,
        })
        .collect()
}

/// The project's mirror with the verified state laid over it, ready for its steps; or the
/// reports saying why not.
pub(super) fn prepare<'a>(
    cx: &Ctx<'a>,
    project: &Project,
    steps: &[Step],
) -> Result<Prepared<'a>, Vec<VerifyReport>> {
    let shown = if project.rel_root.is_empty() {
        ".".to_string()
    } else {
        project.rel_root.clone()
    };
    let started = Instant::now();
    let fail = |status: Status, note: String| fail_all(&shown, steps, started, status, note, None);
    let unready = |u: prepare::Unready| {
        fail_all(
            &shown,
            steps,
            started,
            Status::Error,
            u.message,
            Some(u.help),
        )
    };
    let (mirror_rel, cargo_pkg, toolchain) = match mirrored(cx, project) {
        Ok(m) => m,
        Err(Ran::Unready { message, help }) => {
            return Err(unready(prepare::Unready { message, help }));
        }
        Err(Ran::Missing(m)) => return Err(fail(Status::Missing, m)),
        Err(Ran::Timeout) => return Err(fail(Status::Timeout, "cargo metadata timed out".into())),
        Err(Ran::Skipped(m)) | Err(Ran::Error(m)) => return Err(fail(Status::Error, m)),
        Err(Ran::Done(())) => return Err(Vec::new()),
    };
    let _serial = match project.lang {
        Lang::Rust => Some(CARGO.lock().unwrap_or_else(|p| p.into_inner())),
        Lang::Go => Some(GO.lock().unwrap_or_else(|p| p.into_inner())),
        _ => None,
    };
    let mirror =
        Mirror::sync(cx.repo_root, cx.git_dir, &mirror_rel).map_err(|e| fail(Status::Error, e))?;
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
        Subject::Branch(_) => (overlays(true), Some(overlays(false))),
        Subject::Worktree(Some(_)) => (Vec::new(), Some(overlays(false))),
        Subject::Worktree(None) => (Vec::new(), None),
    };
    let checked_id = mirror.state_id(&checked);
    let original_id = original.as_ref().map(|o| mirror.state_id(o));
    cx.lay(&mirror, &checked)
        .map_err(|e| fail(Status::Error, e))?;
    let project_dir = project_dir(&mirror.root, &mirror_rel, project);
    if project.lang == Lang::Node {
        link_node_modules(cx, project, &mirror.root, &mirror_rel);
    }
    let real_dir = prepare::real_dir(cx.repo_root, &mirror_rel);
    let ready = Prepared {
        shown,
        mirror_rel,
        cargo_pkg,
        package_rel: project.rel_root.clone(),
        toolchain,
        mirror,
        project_dir,
        real_dir,
        changes,
        checked,
        original,
        checked_id,
        original_id,
        _serial,
    };
    // Rust and Go: the dependencies in the caches, a toolchain new enough (for each state: a
    // patched Cargo.toml or go.mod may need others).
    if let Some(p) = ready.package(cx, &ready.mirror, &ready.checked)
        && let Err(u) = p.ensure()
    {
        let shown = ready.shown.clone();
        return Err(fail_all(
            &shown,
            steps,
            started,
            Status::Error,
            u.message,
            Some(u.help),
        ));
    }
    Ok(ready)
}

impl Ctx<'_> {
    /// Lays `overlays` over `mirror`.
    pub(super) fn lay(&self, mirror: &Mirror, overlays: &[Overlay]) -> Result<(), String> {
        overlays
            .iter()
            .try_for_each(|o| mirror.overlay(self.git_dir, o.rel, o.content))
    }
}

impl Prepared<'_> {
    /// The mirror synced again from the working tree (the verified state's overlays gone).
    pub(super) fn resync(&self, cx: &Ctx) -> Result<Mirror, String> {
        Mirror::sync(cx.repo_root, cx.git_dir, &self.mirror_rel)
    }

    /// What `project::prepare` needs for a state of this project laid over `mirror` (Rust and
    /// Go only).
    pub(super) fn package<'b>(
        &'b self,
        cx: &'b Ctx,
        mirror: &'b Mirror,
        overlays: &'b [Overlay<'b>],
    ) -> Option<prepare::Package<'b>> {
        self.toolchain.as_ref().map(|(t, argv)| prepare::Package {
            toolchain: *t,
            argv,
            git_dir: cx.git_dir,
            mirror,
            mirror_rel: &self.mirror_rel,
            package_rel: &self.package_rel,
            real_dir: &self.real_dir,
            overlays,
            offline: cx.offline,
            timeout: cx.timeout,
        })
    }
}

/// What to mirror: Rust the whole Cargo workspace (and the package's spec), everything else the
/// project's directory; and the toolchain to make ready.
#[allow(clippy::type_complexity)]
fn mirrored(
    cx: &Ctx,
    project: &Project,
) -> Result<(String, Option<String>, Option<(Toolchain, Vec<OsString>)>), Ran<()>> {
    match project.lang {
        Lang::Rust => {
            let cargo = program(cx.config, "cargo", "cargo", &project.root, cx.repo_root)
                .map_err(Ran::Missing)?;
            let p = cargo_package::<()>(&cargo, cx.repo_root, project, cx.timeout)?;
            Ok((p.ws_rel, Some(p.spec), Some((Toolchain::Cargo, cargo))))
        }
        Lang::Go => Ok((
            project.rel_root.clone(),
            None,
            Some((Toolchain::Go, vec![OsString::from("go")])),
        )),
        _ => Ok((project.rel_root.clone(), None, None)),
    }
}

/// The project's directory in the mirror of `mirror_rel`.
fn project_dir(mirror_root: &std::path::Path, mirror_rel: &str, project: &Project) -> PathBuf {
    if project.rel_root == mirror_rel {
        return mirror_root.to_path_buf();
    }
    let prefix = if mirror_rel.is_empty() {
        String::new()
    } else {
        format!("{mirror_rel}/")
    };
    mirror_root.join(
        project
            .rel_root
            .strip_prefix(&prefix)
            .unwrap_or(&project.rel_root),
    )
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
