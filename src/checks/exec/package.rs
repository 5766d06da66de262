//! What whole-package tools share (the package checkers, `checks::checker::clippy` and
//! `checks::checker::go_lint`, and verify's steps).
//!
//! Such a tool cannot be pointed at one file, so it runs in a mirror of the project (see
//! `project::mirror`) with the patched (or, for a baseline, the original) content laid over it
//! ([`overlays`], `mirror_with`), and its findings are mapped to repository paths. Cargo gets a persistent target directory of patchgate's own
//! (`<git dir>/patchgate/cargo-target`), so repeated checks are incremental and never fight the
//! user's editor over `target/`'s lock; clippy runs are serialized, since they share it.
//!
//! Before either runs, `prepare` makes sure the project's dependencies are in the local cache and
//! the toolchain is new enough; what it cannot fix is an `error` with a help, not cargo's raw line.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use super::{Ran, first_lines};
use crate::checks::finding::RawFinding;
use crate::project::detect::Project;
use crate::project::mirror::Mirror;
use crate::project::prepare::{self, Diagnosis};
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

pub(crate) fn join_rel(base: &str, rel: &str) -> String {
    let rel = rel.trim_start_matches("./");
    if base.is_empty() {
        rel.to_string()
    } else {
        format!("{base}/{rel}")
    }
}

pub(crate) fn run_cmd(cmd: Cmd) -> Result<crate::runner::Output, Ran<Vec<RawFinding>>> {
    super::ran(cmd.run())
}

/// The mirror of `rel` (repository-relative) with `overlays` laid over it.
pub(crate) fn mirror_with(
    repo_root: &Path,
    git_dir: &Path,
    rel: &str,
    overlays: &[Overlay],
) -> Result<Mirror, String> {
    let mirror = Mirror::sync(repo_root, git_dir, rel)?;
    for o in overlays {
        mirror.overlay(git_dir, o.rel, o.content)?;
    }
    Ok(mirror)
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
    let out = super::ran(meta.run())?;
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
