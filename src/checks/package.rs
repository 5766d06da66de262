//! The whole-package linters: `cargo clippy` and `go vet` (or `golangci-lint` where installed).
//!
//! They cannot be pointed at one file, so they run in a mirror of the project (see `mirror`)
//! with the patched (or, for a baseline, the original) content laid over it, and their findings
//! are filtered to the edited files. Cargo gets a persistent target directory of patchgate's own
//! (`<git dir>/patchgate/cargo-target`), so repeated checks are incremental and never fight the
//! user's editor over `target/`'s lock; clippy runs are serialized, since they share it.
//!
//! Before either runs, `prepare` makes sure the project's dependencies are in the local cache and
//! the toolchain is new enough; what it cannot fix is an `error` with a help, not cargo's raw line.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use super::finding::RawFinding;
use super::parse;
use super::tools::{Ran, first_lines};
use crate::project::detect::Project;
use crate::project::mirror::Mirror;
use crate::project::prepare::{self, Diagnosis, Toolchain};
use crate::project::tools::which;
use crate::runner::Cmd;

/// Cargo runs share patchgate's target directory: one at a time.
pub static CARGO: Mutex<()> = Mutex::new(());
/// Go runs share the build cache and the mirror of a module: one at a time.
pub static GO: Mutex<()> = Mutex::new(());

pub use crate::project::mirror::Overlay;

fn rel_of(repo_root: &Path, abs: &Path) -> Option<String> {
    abs.strip_prefix(repo_root)
        .ok()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
}

fn join_rel(base: &str, rel: &str) -> String {
    let rel = rel.trim_start_matches("./");
    if base.is_empty() {
        rel.to_string()
    } else {
        format!("{base}/{rel}")
    }
}

fn run_cmd(cmd: Cmd) -> Result<crate::runner::Output, Ran<Vec<RawFinding>>> {
    super::tools::ran(cmd.run())
}

/// The Cargo workspace root (repository-relative) and the package spec (`name@version`) of
/// `project`, read from the real tree with `cargo metadata` (which needs no build and no network).
pub fn cargo_package<T>(
    argv: &[OsString],
    repo_root: &Path,
    project: &Project,
    timeout: Duration,
) -> Result<(String, String), Ran<T>> {
    let meta = Cmd::new(argv[0].clone(), &project.root)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .timeout(timeout);
    let out = super::tools::ran(meta.run())?;
    if !out.success() {
        // A manifest this cargo cannot read (a newer edition) says so in plain words.
        if let Some(Diagnosis::Toolchain { message, help }) =
            prepare::diagnose_cargo(&out.stderr_str())
        {
            return Err(Ran::Unready { message, help });
        }
        return Err(Ran::Error(format!(
            "cargo metadata: {}",
            first_lines(&out.stderr_str())
        )));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Ran::Error(format!("cargo metadata output: {e}")))?;
    let manifest = project.root.join("Cargo.toml");
    // `name@version`, not the bare name: a crate whose dev-dependencies pull in a published
    // copy of itself (itoa does) makes `-p itoa` ambiguous, and cargo refuses it.
    let name = meta["packages"].as_array().and_then(|ps| {
        ps.iter()
            .find(|p| p["manifest_path"].as_str().map(Path::new) == Some(manifest.as_path()))
            .and_then(|p| {
                let name = p["name"].as_str()?;
                Some(match p["version"].as_str() {
                    Some(v) => format!("{name}@{v}"),
                    None => name.to_string(),
                })
            })
    });
    let Some(name) = name else {
        return Err(Ran::Skipped(format!(
            "{} is not a package (a virtual workspace manifest?)",
            manifest.display()
        )));
    };
    let ws_root = meta["workspace_root"]
        .as_str()
        .map(Path::new)
        .unwrap_or(&project.root);
    let Some(ws_rel) = rel_of(repo_root, ws_root) else {
        return Err(Ran::Error(
            "the Cargo workspace root is outside the repository".into(),
        ));
    };
    Ok((ws_rel, name.to_string()))
}

/// `cargo clippy` on the package of `project`, findings with repository-relative paths.
pub fn clippy(
    argv: &[OsString],
    repo_root: &Path,
    git_dir: &Path,
    project: &Project,
    overlays: &[Overlay],
    timeout: Duration,
    offline: bool,
) -> Ran<Vec<RawFinding>> {
    let _serial = CARGO.lock().unwrap_or_else(|p| p.into_inner());
    let (ws_rel, name) = match cargo_package(argv, repo_root, project, timeout) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let name = name.as_str();
    let mirror = match Mirror::sync(repo_root, git_dir, &ws_rel) {
        Ok(m) => m,
        Err(e) => return Ran::Error(e),
    };
    for o in overlays {
        if let Err(e) = mirror.overlay(git_dir, o.rel, o.content) {
            return Ran::Error(e);
        }
    }
    let real_dir = prepare::real_dir(repo_root, &ws_rel);
    let prep = prepare::Package {
        toolchain: Toolchain::Cargo,
        argv,
        git_dir,
        mirror: &mirror,
        mirror_rel: &ws_rel,
        package_rel: &project.rel_root,
        real_dir: &real_dir,
        overlays,
        offline,
        timeout,
    };
    if let Err(u) = prep.ensure() {
        return u.into();
    }
    let mut cmd = Cmd::new(argv[0].clone(), &mirror.root)
        .args(argv[1..].iter().cloned())
        .args([
            "clippy",
            "--message-format=json",
            "--all-targets",
            "--offline",
            "-p",
            name,
        ])
        .env("CARGO_TARGET_DIR", crate::fs::layout::cargo_target(git_dir))
        .timeout(timeout);
    cmd = cmd.env("CARGO_TERM_COLOR", "never");
    let out = match prep.run(|| run_cmd(cmd.clone())) {
        Ok(Ok(o)) => o,
        Ok(Err(r)) => return r,
        Err(u) => return u.into(),
    };
    let findings = match parse::cargo::cargo_json(&out.stdout_str()) {
        Ok(f) => f,
        Err(e) => return Ran::Error(format!("unreadable cargo output: {e}")),
    };
    if !out.success() && findings.is_empty() {
        if let Some(u) = prep.explain(&out.stderr_str()) {
            return u.into();
        }
        return Ran::Error(first_lines(&out.stderr_str()));
    }
    Ran::Done(
        findings
            .into_iter()
            .map(|mut f| {
                f.path = join_rel(&ws_rel, &f.path);
                f
            })
            .collect(),
    )
}

/// `golangci-lint run` when it is installed, else `go vet`, on every package of the module.
pub fn go_lint(
    go: &[OsString],
    repo_root: &Path,
    git_dir: &Path,
    project: &Project,
    overlays: &[Overlay],
    timeout: Duration,
    offline: bool,
) -> Ran<Vec<RawFinding>> {
    let _serial = GO.lock().unwrap_or_else(|p| p.into_inner());
    let mirror = match Mirror::sync(repo_root, git_dir, &project.rel_root) {
        Ok(m) => m,
        Err(e) => return Ran::Error(e),
    };
    for o in overlays {
        if let Err(e) = mirror.overlay(git_dir, o.rel, o.content) {
            return Ran::Error(e);
        }
    }
    // Every package of the module, not only the edited ones: a patch breaks the packages that
    // use what it changed (a missed call site in another package), and the build cache keeps
    // the untouched packages cheap.
    let dirs = ["./..."];
    let real_dir = prepare::real_dir(repo_root, &project.rel_root);
    let prep = prepare::Package {
        toolchain: Toolchain::Go,
        argv: go,
        git_dir,
        mirror: &mirror,
        mirror_rel: &project.rel_root,
        package_rel: &project.rel_root,
        real_dir: &real_dir,
        overlays,
        offline,
        timeout,
    };
    if let Err(u) = prep.ensure() {
        return u.into();
    }
    // Offline as always (a user's GOPROXY kept): `prepare` did any downloading.
    let base = |prog: OsString| {
        let cmd = prepare::go_env(Cmd::new(prog, &mirror.root), false);
        cmd.env(
            "GOPROXY",
            std::env::var_os("GOPROXY").unwrap_or_else(|| "off".into()),
        )
        .timeout(timeout)
    };
    if let Some(golangci) = which("golangci-lint") {
        let cmd = base(golangci.into_os_string())
            .args(["run", "--output.json.path", "stdout", "--show-stats=false"])
            .args(dirs.iter());
        let out = match prep.run(|| run_cmd(cmd.clone())) {
            Ok(Ok(o)) => o,
            Ok(Err(r)) => return r,
            Err(u) => return u.into(),
        };
        if !matches!(out.code, Some(0) | Some(1))
            && let Some(u) = prep.explain(&out.stderr_str())
        {
            return u.into();
        }
        return match (out.code, parse::go::golangci_json(&out.stdout_str())) {
            (Some(0) | Some(1), Ok(f)) => Ran::Done(
                f.into_iter()
                    .map(|mut x| {
                        x.path = join_rel(&project.rel_root, &x.path);
                        x
                    })
                    .collect(),
            ),
            _ => Ran::Error(format!("golangci-lint: {}", first_lines(&out.stderr_str()))),
        };
    }
    let cmd = base(go[0].clone())
        .args(go[1..].iter().cloned())
        .arg("vet")
        .args(dirs.iter());
    let out = match prep.run(|| run_cmd(cmd.clone())) {
        Ok(Ok(o)) => o,
        Ok(Err(r)) => return r,
        Err(u) => return u.into(),
    };
    let text = out.stderr_str();
    // Before the findings: `main.go:3:8: module lookup disabled by GOPROXY=off` looks like one.
    if !out.success()
        && let Some(u) = prep.explain(&text)
    {
        return u.into();
    }
    let findings = match parse::go::go_vet_text(&text) {
        Ok(f) => f,
        Err(e) => return Ran::Error(format!("unreadable go vet output: {e}")),
    };
    if !out.success() && findings.is_empty() {
        return Ran::Error(first_lines(&text));
    }
    let mirror_root = mirror.root.to_string_lossy().into_owned();
    Ran::Done(
        findings
            .into_iter()
            .map(|mut f| {
                let p = f
                    .path
                    .strip_prefix(&format!("{mirror_root}/"))
                    .unwrap_or(&f.path)
                    .to_string();
                f.path = join_rel(&project.rel_root, &p);
                f
            })
            .collect(),
    )
}

/// What a package run lays over the mirror: the state's other differing files (`check
/// --staged`), then the call's files (absent ones deleted), then, for the patched state, the
/// files the patch deletes inside the project (the baseline keeps them: it is the original).
pub fn overlays<'a>(call: &'a super::checker::Call<'a>) -> Vec<Overlay<'a>> {
    let inside = |rel: &str| {
        call.project.is_none_or(|p| {
            p.rel_root.is_empty()
                || rel
                    .strip_prefix(p.rel_root.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    };
    let deleted = call
        .removed
        .iter()
        .filter(|_| !call.baseline)
        .filter(move |(rel, _)| inside(rel))
        .map(|(rel, _)| Overlay { rel, content: None });
    let context = call
        .context
        .iter()
        .filter(|(rel, _)| !call.files.iter().any(|i| i.rel == rel))
        .map(|(rel, content)| Overlay {
            rel,
            content: content.as_deref().map(|b| b.as_slice()),
        });
    context
        .chain(call.files.iter().map(|i| Overlay {
            rel: i.rel,
            content: i.text.map(str::as_bytes),
        }))
        .chain(deleted)
        .collect()
}
