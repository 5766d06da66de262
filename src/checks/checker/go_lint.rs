//! `go vet` (or `golangci-lint run` where installed): every Go module's linter, over every
//! package of the module in the mirror, findings anywhere in them (a missed call site in another
//! package is a new finding there).

use std::ffi::OsString;
use std::path::Path;

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::exec::package::{GO, Remembered, join_rel, mirror_with, run_cmd};
use crate::checks::exec::{Ran, first_lines};
use crate::checks::finding::RawFinding;
use crate::checks::parse;
use crate::project::config::Kind;
use crate::project::detect::{Lang, Project};
use crate::project::mirror::Overlay;
use crate::project::prepare::{self, Toolchain};
use crate::project::tools::which;
use crate::runner::Cmd;

pub static CHECKER: Checker = Checker {
    name: "go-lint",
    files: Files::Lang(Lang::Go),
    kind: Kind::Lint,
    uses: Uses::Always,
    batch: Batch::Package,
    locate: Some(|l| l.program("go")),
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
    match go_lint(call, project, &overlays) {
        Ran::Done(f) => Ran::Done(Out::Package(f)),
        other => other.relay(),
    }
}

/// `golangci-lint run` when it is installed, else `go vet`, on every package of the module.
fn go_lint(call: &Call, project: &Project, overlays: &[Overlay]) -> Ran<Vec<RawFinding>> {
    let (go, repo_root, git_dir) = (call.argv, call.repo_root, call.git_dir);
    let (timeout, offline, baseline) = (call.timeout, call.offline, call.baseline);
    let _serial = GO.lock().unwrap_or_else(|p| p.into_inner());
    let mirror = match mirror_with(repo_root, git_dir, &project.rel_root, overlays) {
        Ok(m) => m,
        Err(e) => return Ran::Error(e),
    };
    let golangci_lint = which("golangci-lint");
    let tool: Vec<OsString> = match &golangci_lint {
        Some(p) => vec![p.clone().into_os_string()],
        None => go.to_vec(),
    };
    let runs = Remembered::new(
        git_dir, "go-lint", "./...", &tool, &mirror, overlays, baseline,
    );
    if let Some(found) = runs.taken() {
        return Ran::Done(found);
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
    let ran = if let Some(program) = golangci_lint {
        let cmd = base(program.into_os_string())
            .args(["run", "--output.json.path", "stdout", "--show-stats=false"])
            .args(dirs.iter());
        golangci(&prep, cmd, &project.rel_root)
    } else {
        let cmd = base(go[0].clone())
            .args(go[1..].iter().cloned())
            .arg("vet")
            .args(dirs.iter());
        vet(&prep, cmd, &mirror.root, &project.rel_root)
    };
    if let Ran::Done(findings) = &ran {
        runs.keep(findings, &[]);
    }
    ran
}

/// `golangci-lint run` as prepared in `cmd`: its JSON findings, on repository paths.
fn golangci(prep: &prepare::Package, cmd: Cmd, rel_root: &str) -> Ran<Vec<RawFinding>> {
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
    match (out.code, parse::go::golangci_json(&out.stdout_str())) {
        (Some(0) | Some(1), Ok(f)) => Ran::Done(
            f.into_iter()
                .map(|mut x| {
                    x.path = join_rel(rel_root, &x.path);
                    x
                })
                .collect(),
        ),
        _ => Ran::Error(format!("golangci-lint: {}", first_lines(&out.stderr_str()))),
    }
}

/// `go vet` as prepared in `cmd` (run in the mirror at `mirror_root`): its findings on stderr,
/// on repository paths.
fn vet(
    prep: &prepare::Package,
    cmd: Cmd,
    mirror_root: &Path,
    rel_root: &str,
) -> Ran<Vec<RawFinding>> {
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
    let mirror_root = mirror_root.to_string_lossy().into_owned();
    Ran::Done(
        findings
            .into_iter()
            .map(|mut f| {
                let p = f
                    .path
                    .strip_prefix(&format!("{mirror_root}/"))
                    .unwrap_or(&f.path)
                    .to_string();
                f.path = join_rel(rel_root, &p);
                f
            })
            .collect(),
    )
}
