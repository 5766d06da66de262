//! Running the verify steps (build, test, typecheck) of each project the patch touches, on the
//! patched state, and turning their output into failures and hints.
//!
//! Where the commands run: in the project's mirror inside patchgate's worktree (`checks::mirror`),
//! the working tree with the patch laid over it, so the user's tree is untouched until the
//! decision. What keeps that fast and real:
//! - Rust: `CARGO_TARGET_DIR` is patchgate's persistent `.git/patchgate/cargo-target` (shared with
//!   clippy), so a second `cargo test` after a one-line patch rebuilds one crate, not the world;
//!   the user's `~/.cargo` registry is used as is, `--offline`;
//! - Go: the user's module and build caches (GOMODCACHE, GOCACHE) as they are, `GOPROXY=off`;
//! - Rust and Go: dependencies missing from those caches are fetched first, unless offline, and a
//!   toolchain too old for the project is an `error` with a hint, not a build failure
//!   (`project::prepare`);
//! - Node: the project's `node_modules` linked into the mirror; the package manager chosen from the
//!   lockfile;
//! - Python: the project's own virtualenv (`.venv`/`venv`, else `python3`), with the mirror first
//!   on `PYTHONPATH` so an editable install of the real tree does not shadow the patched code.
//!
//! Commands per language and step (each overridable in `.patchgate.toml` `[verify.<lang>]`):
//!
//! | | build | test | typecheck |
//! |---|---|---|---|
//! | Rust | `cargo build --all-targets` | `cargo test --no-fail-fast` | `cargo check --all-targets` |
//! | Go | `go build ./...` | `go test -json ./...` | `go vet ./...` |
//! | Node | `<pm> run build` | `<pm> run test` | `<pm> run typecheck`, else `tsc --noEmit` |
//! | Python | `python -m compileall -q .` | `python -m pytest --junitxml` | `mypy -O json .` |
//!
//! A step a project does not have (no `test` script) is left out of the report. A failing step
//! blocks; a missing toolchain is `missing` and blocks only with `--require-tools`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Failure;
use super::hints;
use super::parse;
use crate::checks::package::{CARGO, GO, cargo_package};
use crate::checks::tools::Ran;
use crate::project::config::{Config, StepCommands};
use crate::project::detect::{Lang, Project};
use crate::project::mirror::Mirror;
use crate::project::prepare::{self, Toolchain};
use crate::project::tools::{program, project_local, which};
use crate::runner::{Cmd, RunError};

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

    fn name(self) -> &'static str {
        match self {
            Step::Build => "build",
            Step::Test => "test",
            Step::Typecheck => "typecheck",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Missing,
    Error,
    Timeout,
}

/// One step on one project (the `verify[]` entries of the report).
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub step: Step,
    /// The project's directory, relative to the repository root (`.` for the root).
    pub project: String,
    pub command: String,
    pub status: Status,
    pub failures: Vec<Failure>,
    pub hints: Vec<String>,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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

/// Runs the steps on every project; returns the reports and whether they block.
pub fn run(
    repo_root: &Path,
    git_dir: &Path,
    config: &Config,
    projects: &[Project],
    overlays: &[Overlay],
    opts: &Options,
) -> (Vec<VerifyReport>, bool) {
    let timeout = opts
        .timeout
        .or(config.verify.timeout.map(Duration::from_secs))
        .unwrap_or(Duration::from_secs(600));
    let mut reports = Vec::new();
    for p in projects {
        reports.extend(verify_project(
            repo_root, git_dir, config, p, overlays, opts, timeout,
        ));
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

fn overrides(config: &Config, lang: Lang) -> Option<&StepCommands> {
    match lang {
        Lang::Python => config.verify.python.as_ref(),
        Lang::Node => config.verify.node.as_ref(),
        Lang::Rust => config.verify.rust.as_ref(),
        Lang::Go => config.verify.go.as_ref(),
    }
}

fn override_for(config: &Config, lang: Lang, step: Step) -> Option<Vec<String>> {
    let c = overrides(config, lang)?;
    match step {
        Step::Build => c.build.clone(),
        Step::Test => c.test.clone(),
        Step::Typecheck => c.typecheck.clone(),
    }
}

/// How a step's output becomes failures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parser {
    Cargo,
    CargoTest,
    GoBuild,
    GoTest,
    GoVet,
    NodeTest,
    Tsc,
    Pytest,
    Mypy,
    Compileall,
    Generic,
}

struct Plan {
    argv: Vec<OsString>,
    env: Vec<(String, OsString)>,
    parser: Parser,
    /// pytest's report file, read after the run.
    junit: Option<PathBuf>,
}

fn verify_project(
    repo_root: &Path,
    git_dir: &Path,
    config: &Config,
    project: &Project,
    overlays: &[Overlay],
    opts: &Options,
    timeout: Duration,
) -> Vec<VerifyReport> {
    let steps = &opts.steps[..];
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
    let mut toolchain = None;
    let (mirror_rel, cargo_pkg) = if project.lang == Lang::Rust {
        let cargo = match program(config, "cargo", "cargo", &project.root, repo_root) {
            Ok(a) => a,
            Err(m) => return fail_all(Status::Missing, m),
        };
        let found = match cargo_package::<()>(&cargo, repo_root, project, timeout) {
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
    let mirror = match Mirror::sync(repo_root, git_dir, &mirror_rel) {
        Ok(m) => m,
        Err(e) => return fail_all(Status::Error, e),
    };
    let prefix = if mirror_rel.is_empty() {
        String::new()
    } else {
        format!("{mirror_rel}/")
    };
    for o in overlays.iter().filter(|o| o.rel.starts_with(&prefix)) {
        if let Err(e) = mirror.overlay(git_dir, o.rel, o.content) {
            return fail_all(Status::Error, e);
        }
    }
    let project_dir = if project.rel_root == mirror_rel {
        mirror.root.clone()
    } else {
        mirror.root.join(
            project
                .rel_root
                .strip_prefix(&prefix)
                .unwrap_or(&project.rel_root),
        )
    };
    if project.lang == Lang::Node {
        // Dependencies the user installed: reachable from the mirror as they are.
        let real = project.root.join("node_modules");
        let link = project_dir.join("node_modules");
        if real.is_dir() && std::fs::symlink_metadata(&link).is_err() {
            let _ = std::os::unix::fs::symlink(&real, &link);
        }
    }
    let real_dir = prepare::real_dir(repo_root, &mirror_rel);
    let prep = toolchain.as_ref().map(|(t, argv)| prepare::Package {
        toolchain: *t,
        argv,
        git_dir,
        mirror: &mirror,
        mirror_rel: &mirror_rel,
        package_rel: &project.rel_root,
        real_dir: &real_dir,
        overlays,
        offline: opts.offline,
        timeout,
    });
    if let Some(p) = &prep
        && let Err(u) = p.ensure()
    {
        return unready_all(u);
    }

    let mut out = Vec::new();
    for &step in steps {
        let step_started = Instant::now();
        let plan = match plan_step(
            config,
            repo_root,
            project,
            &project_dir,
            git_dir,
            step,
            cargo_pkg.as_deref(),
        ) {
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
                });
                continue;
            }
        };
        let command = plan
            .argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let mut cmd = Cmd::new(plan.argv[0].clone(), &project_dir)
            .args(plan.argv[1..].iter().cloned())
            .timeout(timeout);
        for (k, v) in &plan.env {
            cmd = cmd.env(k, v);
        }
        if let Some(junit) = &plan.junit {
            // A report left by an earlier run with the same pid must not be read as this one's.
            let _ = std::fs::remove_file(junit);
        }
        let mut report = VerifyReport {
            step,
            project: shown.clone(),
            command,
            status: Status::Pass,
            failures: Vec::new(),
            hints: Vec::new(),
            duration_ms: 0,
            note: None,
        };
        let ran = match &prep {
            Some(p) => p.run(|| cmd.run()).and_then(|r| match (r, p) {
                // Not the code's failure: the toolchain's or the caches' (said in plain words).
                (Ok(o), p) if !o.success() && !o.timed_out => match p.explain(&o.stderr_str()) {
                    Some(u) => Err(u),
                    None => Ok(Ok(o)),
                },
                (r, _) => Ok(r),
            }),
            None => Ok(cmd.run()),
        };
        let result = match ran {
            Ok(r) => r,
            Err(u) => {
                report.status = Status::Error;
                report.note = Some(u.message);
                report.hints.push(u.help);
                report.duration_ms = step_started.elapsed().as_millis() as u64;
                out.push(report);
                continue;
            }
        };
        match result {
            Err(RunError::NotFound(p)) => {
                report.status = Status::Missing;
                report.note = Some(format!("{} not found on PATH", p.to_string_lossy()));
            }
            Err(e) => {
                report.status = Status::Error;
                report.note = Some(e.to_string());
            }
            Ok(o) if o.timed_out => {
                report.status = Status::Timeout;
                report.note = Some(format!(
                    "killed after {} s with its child processes",
                    timeout.as_secs()
                ));
                report.hints.push(
                    "a step timed out: look for a hang, a deadlock or an unclosed resource".into(),
                );
            }
            Ok(o) => {
                let text = format!("{}\n{}", o.stdout_str(), o.stderr_str());
                let mut failures = failures_of(
                    plan.parser,
                    &o.stdout_str(),
                    &o.stderr_str(),
                    plan.junit.as_deref(),
                );
                if plan.parser == Parser::NodeTest {
                    // A test file that did not load is named by its path in the mirror.
                    for f in &mut failures {
                        if Path::new(&f.name).is_absolute() {
                            f.name = repo_path(&f.name, &project_dir, &mirror.root, &mirror_rel);
                        }
                    }
                }
                if plan.parser == Parser::GoTest {
                    for f in &mut failures {
                        if let Some(file) = f.file.as_deref().filter(|x| !x.contains('/'))
                            && let Some(at) = go_test_file(&f.name, file, &project_dir)
                        {
                            f.file = Some(at);
                        }
                    }
                }
                if plan.parser == Parser::Pytest && !o.success() && missing_module(&text, "pytest")
                {
                    report.status = Status::Missing;
                    report.note = Some("pytest is not installed in the project's Python".into());
                } else if plan.parser == Parser::Mypy
                    && !o.success()
                    && missing_module(&text, "mypy")
                {
                    report.status = Status::Missing;
                    report.note = Some("mypy is not installed".into());
                } else if !o.success() {
                    report.status = Status::Fail;
                    if failures.is_empty() {
                        failures.push(Failure {
                            name: step.name().to_string(),
                            file: None,
                            line: None,
                            message: tail(&text, 20),
                        });
                    }
                } else if step == Step::Typecheck
                    && plan.parser == Parser::Mypy
                    && !failures.is_empty()
                {
                    report.status = Status::Fail;
                }
                for f in &mut failures {
                    if let Some(file) = &f.file {
                        f.file = Some(repo_path(file, &project_dir, &mirror.root, &mirror_rel));
                    }
                }
                if report.status == Status::Fail {
                    report.hints =
                        hints::hints_with_sites(project.lang, &failures, &text, &project_dir);
                }
                report.failures = failures;
            }
        }
        if let Some(junit) = &plan.junit {
            let _ = std::fs::remove_file(junit);
        }
        report.duration_ms = step_started.elapsed().as_millis() as u64;
        out.push(report);
    }
    out
}

fn missing_module(text: &str, module: &str) -> bool {
    text.contains(&format!("No module named {module}"))
        || text.contains(&format!("No module named '{module}'"))
}

/// The last lines of a step's output (machine-readable JSON lines left out) for a failure no
/// parser recognised.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('{'))
        .collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// `go test` prints a test's position relative to its package's directory (`calc_test.go:7`):
/// the file relative to the module root (`calc/calc_test.go`), found from the failure's name
/// (`example.com/demo/calc.TestAdd`) and the module path in `dir/go.mod`.
fn go_test_file(name: &str, file: &str, dir: &Path) -> Option<String> {
    let gomod = std::fs::read_to_string(dir.join("go.mod")).ok()?;
    let module = gomod.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        rest.starts_with([' ', '\t'])
            .then(|| rest.trim().trim_matches('"').to_string())
    })?;
    name.match_indices('.').find_map(|(i, _)| {
        let package = &name[..i];
        let sub = if package == module {
            ""
        } else {
            package.strip_prefix(&module)?.strip_prefix('/')?
        };
        let rel = if sub.is_empty() {
            file.to_string()
        } else {
            format!("{sub}/{file}")
        };
        dir.join(&rel).is_file().then_some(rel)
    })
}

/// A path as a tool printed it (absolute in the mirror, or relative to where it ran) → the
/// repository path.
fn repo_path(file: &str, project_dir: &Path, mirror_root: &Path, mirror_rel: &str) -> String {
    let p = Path::new(file.trim_start_matches("./"));
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        project_dir.join(p)
    };
    match abs.strip_prefix(mirror_root) {
        Ok(r) if mirror_rel.is_empty() => r.to_string_lossy().into_owned(),
        Ok(r) => format!("{mirror_rel}/{}", r.to_string_lossy()),
        Err(_) => file.to_string(),
    }
}

fn failures_of(parser: Parser, stdout: &str, stderr: &str, junit: Option<&Path>) -> Vec<Failure> {
    use crate::checks::parse as cp;
    let both = format!("{stdout}\n{stderr}");
    match parser {
        Parser::Cargo => cp::cargo::cargo_json(stdout)
            .map(|f| parse::compiler(&f))
            .unwrap_or_default(),
        Parser::CargoTest => {
            let mut f = cp::cargo::cargo_json(stdout)
                .map(|f| parse::compiler(&f))
                .unwrap_or_default();
            f.extend(parse::libtest(&both));
            f
        }
        Parser::GoBuild => parse::go_build_text(&both),
        Parser::GoTest => parse::go_test_json(&both),
        Parser::NodeTest => parse::node_test(&both),
        Parser::GoVet => cp::go::go_vet_text(stderr)
            .map(|f| parse::compiler(&f))
            .unwrap_or_default(),
        Parser::Tsc => cp::tsc::tsc_text(stdout)
            .map(|f| parse::compiler(&f))
            .unwrap_or_default(),
        Parser::Mypy => cp::mypy::mypy_json(stdout)
            .map(|f| parse::compiler(&f))
            .unwrap_or_default(),
        Parser::Compileall => parse::python_compile(&both),
        Parser::Pytest => junit
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|x| parse::pytest_junit(&x).ok())
            .unwrap_or_default(),
        Parser::Generic => Vec::new(),
    }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// The command for a step, `Ok(None)` when the project has no such step.
fn plan_step(
    config: &Config,
    repo_root: &Path,
    project: &Project,
    dir: &Path,
    git_dir: &Path,
    step: Step,
    cargo_pkg: Option<&str>,
) -> Result<Option<Plan>, String> {
    let generic = |argv: Vec<String>| Plan {
        argv: argv.into_iter().map(OsString::from).collect(),
        env: Vec::new(),
        parser: Parser::Generic,
        junit: None,
    };
    if let Some(cmd) = override_for(config, project.lang, step).filter(|c| !c.is_empty()) {
        return Ok(Some(generic(cmd)));
    }
    let plan = match project.lang {
        Lang::Rust => {
            let mut argv = os(&["cargo"]);
            let (sub, parser): (&[&str], Parser) = match step {
                Step::Build => (
                    &["build", "--all-targets", "--message-format=json"],
                    Parser::Cargo,
                ),
                Step::Test => (
                    &["test", "--no-fail-fast", "--message-format=json"],
                    Parser::CargoTest,
                ),
                Step::Typecheck => (
                    &["check", "--all-targets", "--message-format=json"],
                    Parser::Cargo,
                ),
            };
            argv.extend(os(sub));
            argv.push("--offline".into());
            if let Some(p) = cargo_pkg {
                argv.extend(os(&["-p", p]));
            }
            Plan {
                argv,
                env: vec![
                    (
                        "CARGO_TARGET_DIR".into(),
                        git_dir
                            .join("patchgate")
                            .join("cargo-target")
                            .into_os_string(),
                    ),
                    ("CARGO_TERM_COLOR".into(), "never".into()),
                ],
                parser,
                junit: None,
            }
        }
        Lang::Go => {
            let (argv, parser) = match step {
                Step::Build => (os(&["go", "build", "./..."]), Parser::GoBuild),
                Step::Test => (os(&["go", "test", "-json", "./..."]), Parser::GoTest),
                Step::Typecheck => (os(&["go", "vet", "./..."]), Parser::GoVet),
            };
            let var = |k: &str, d: &str| {
                (
                    k.to_string(),
                    std::env::var_os(k).unwrap_or_else(|| d.into()),
                )
            };
            Plan {
                argv,
                env: vec![
                    var("GOTOOLCHAIN", "local"),
                    var("GOPROXY", "off"),
                    var("GOFLAGS", "-buildvcs=false"),
                ],
                parser,
                junit: None,
            }
        }
        Lang::Node => {
            let scripts: serde_json::Value = std::fs::read(dir.join("package.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .map(|v| v["scripts"].clone())
                .unwrap_or_default();
            let pm = package_manager(dir);
            match (step, scripts.get(step.name()).is_some()) {
                (_, true) => Plan {
                    argv: os(&[pm, "run", step.name()]),
                    env: vec![("CI".into(), "true".into())],
                    parser: match step {
                        Step::Typecheck => Parser::Tsc,
                        Step::Test => Parser::NodeTest,
                        Step::Build => Parser::Generic,
                    },
                    junit: None,
                },
                (Step::Typecheck, false) if dir.join("tsconfig.json").is_file() => {
                    let local = dir.join("node_modules/.bin/tsc");
                    let tsc = if local.exists() {
                        local.into_os_string()
                    } else {
                        which("tsc")
                            .ok_or("tsc not found in node_modules or on PATH")?
                            .into_os_string()
                    };
                    Plan {
                        argv: vec![tsc, "--noEmit".into(), "--pretty".into(), "false".into()],
                        env: Vec::new(),
                        parser: Parser::Tsc,
                        junit: None,
                    }
                }
                _ => return Ok(None),
            }
        }
        Lang::Python => {
            let python = project_local("python", &project.root, repo_root)
                .map_or_else(|| OsString::from("python3"), PathBuf::into_os_string);
            let src = dir.join("src");
            let mut pythonpath = dir.as_os_str().to_owned();
            if src.is_dir() {
                pythonpath.push(":");
                pythonpath.push(src.as_os_str());
            }
            let env = vec![
                ("PYTHONPATH".to_string(), pythonpath),
                ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            ];
            match step {
                Step::Build => Plan {
                    argv: vec![
                        python,
                        "-m".into(),
                        "compileall".into(),
                        "-q".into(),
                        ".".into(),
                    ],
                    env,
                    parser: Parser::Compileall,
                    junit: None,
                },
                Step::Test => {
                    let junit = git_dir
                        .join("patchgate")
                        .join(format!("pytest-{}.xml", std::process::id()));
                    Plan {
                        argv: vec![
                            python,
                            "-m".into(),
                            "pytest".into(),
                            "-q".into(),
                            "-p".into(),
                            "no:cacheprovider".into(),
                            format!("--junitxml={}", junit.display()).into(),
                        ],
                        env,
                        parser: Parser::Pytest,
                        junit: Some(junit),
                    }
                }
                Step::Typecheck => Plan {
                    argv: vec![
                        python,
                        "-m".into(),
                        "mypy".into(),
                        "-O".into(),
                        "json".into(),
                        ".".into(),
                    ],
                    env,
                    parser: Parser::Mypy,
                    junit: None,
                },
            }
        }
    };
    Ok(Some(plan))
}

/// The package manager a Node project uses, from its lockfile.
fn package_manager(dir: &Path) -> &'static str {
    let mut d = Some(dir);
    while let Some(x) = d {
        if x.join("pnpm-lock.yaml").exists() {
            return "pnpm";
        }
        if x.join("yarn.lock").exists() {
            return "yarn";
        }
        if x.join("bun.lockb").exists() || x.join("bun.lock").exists() {
            return "bun";
        }
        if x.join("package-lock.json").exists() {
            return "npm";
        }
        d = x.parent();
    }
    "npm"
}
