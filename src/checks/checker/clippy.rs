//! `cargo clippy`: every Cargo project's linter, over the whole package (tests and benches
//! included, `--all-targets`) in the mirror, findings anywhere in it.
//!
//! A patch across several packages of a workspace is one job per package, but one cargo run per
//! state: the first job's run names every package the patch changes (`-p app -p engine`), and
//! leaves the findings to the others' jobs (`Remembered::keep`, `Remembered::shared`). One run
//! builds the shared crates once and checks the packages side by side; separate runs took twice
//! as long. The workspace's packages come from `cargo metadata` (`CargoPackage::members`). A
//! cargo before 1.74 rejects the run's `--keep-going`; each package then runs alone.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::exec::package::{
    CARGO, Remembered, cargo_package, join_rel, mirror_with, run_cmd,
};
use crate::checks::exec::{Ran, first_lines};
use crate::checks::finding::RawFinding;
use crate::checks::parse;
use crate::project::config::Kind;
use crate::project::detect::{Lang, Project};
use crate::project::mirror::Overlay;
use crate::project::prepare::{self, Toolchain};
use crate::runner::Cmd;

pub static CHECKER: Checker = Checker {
    name: "clippy",
    files: Files::Lang(Lang::Rust),
    kind: Kind::Lint,
    uses: Uses::Always,
    batch: Batch::Package,
    locate: Some(|l| l.program("cargo")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let project = match call.project() {
        Ok(p) => p,
        Err(e) => return e,
    };
    let overlays = match call.overlays() {
        Ok(o) => o,
        Err(e) => return Ran::Error(e),
    };
    match clippy(call, project, &overlays) {
        Ran::Done(f) => Ran::Done(Out::Package(f)),
        other => other.relay(),
    }
}

/// `cargo clippy` on the package of `project`, findings with repository-relative paths.
fn clippy(call: &Call, project: &Project, overlays: &[Overlay]) -> Ran<Vec<RawFinding>> {
    let (argv, repo_root, git_dir) = (call.argv, call.repo_root, call.git_dir);
    let (timeout, offline, baseline) = (call.timeout, call.offline, call.baseline);
    let _serial = CARGO.lock().unwrap_or_else(|p| p.into_inner());
    let package = match cargo_package(argv, repo_root, project, timeout) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let (ws_rel, name) = (package.ws_rel.as_str(), package.spec.as_str());
    let mirror = match mirror_with(repo_root, git_dir, ws_rel, overlays) {
        Ok(m) => m,
        Err(e) => return Ran::Error(e),
    };
    let runs = Remembered::new(git_dir, "clippy", name, argv, &mirror, overlays, baseline);
    if let Some(found) = runs.shared().or_else(|| runs.taken()) {
        return Ran::Done(found);
    }
    // The packages whose own clippy jobs this run stands for: those with a patched Rust file
    // (a patched README in another crate starts no job there).
    let rust = |rel: &&str| crate::project::detect::lang_of(rel) == Some(Lang::Rust);
    let along = package.others_holding(
        call.patched
            .iter()
            .map(|(rel, _)| rel.as_str())
            .filter(rust),
    );
    let real_dir = prepare::real_dir(repo_root, ws_rel);
    let prep = prepare::Package {
        toolchain: Toolchain::Cargo,
        argv,
        git_dir,
        mirror: &mirror,
        mirror_rel: ws_rel,
        package_rel: &project.rel_root,
        real_dir: &real_dir,
        overlays,
        offline,
        timeout,
    };
    if let Err(u) = prep.ensure() {
        return u.into();
    }
    let command = |along: &[String]| {
        Cmd::new(argv[0].clone(), &mirror.root)
            .args(argv[1..].iter().cloned())
            .args([
                "clippy",
                "--message-format=json",
                "--all-targets",
                "--offline",
                "-p",
                name,
            ])
            .args(along.iter().flat_map(|spec| ["-p", spec.as_str()]))
            // A package that does not build must not stop the others' lints, as it would not
            // in runs of their own.
            .args((!along.is_empty()).then_some("--keep-going"))
            .env("CARGO_TARGET_DIR", crate::fs::layout::cargo_target(git_dir))
            .env("CARGO_TERM_COLOR", "never")
            .timeout(timeout)
    };
    let run = |along: &[String]| match prep.run(|| run_cmd(command(along))) {
        Ok(Ok(out)) => match parse::cargo::cargo_json(&out.stdout_str()) {
            Ok(findings) => Ok((out, findings)),
            Err(e) => Err(Ran::Error(format!("unreadable cargo output: {e}"))),
        },
        Ok(Err(r)) => Err(r),
        Err(u) => Err(u.into()),
    };
    let (mut out, mut findings) = match run(&along) {
        Ok(x) => x,
        Err(r) => return r,
    };
    // cargo before 1.74 has no `--keep-going` and rejects it: this package alone, as before.
    let mut along = along;
    if !along.is_empty()
        && !out.success()
        && findings.is_empty()
        && out.stderr_str().contains("--keep-going")
    {
        along.clear();
        (out, findings) = match run(&along) {
            Ok(x) => x,
            Err(r) => return r,
        };
    }
    if !out.success() && findings.is_empty() {
        if let Some(u) = prep.explain(&out.stderr_str()) {
            return u.into();
        }
        return Ran::Error(first_lines(&out.stderr_str()));
    }
    let findings: Vec<RawFinding> = findings
        .into_iter()
        .map(|mut f| {
            f.path = join_rel(ws_rel, &f.path);
            f
        })
        .collect();
    runs.keep(&findings, &along);
    Ran::Done(findings)
}
