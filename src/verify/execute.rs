//! Running one planned step in the mirror and reading its failures: the exit status, the parsed
//! failures (with where each came from, which the baseline comparison needs) and the raw output
//! (which the hints read).
//!
//! Failures leave here with repository paths: the tools print paths in the mirror or relative
//! to where they ran, and the report (and the baseline cache, which outlives the mirror's
//! location) must not depend on either.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Failure;
use super::parse;
use super::plan::{Parser, Plan};
use super::{Status, Step};
use crate::project::prepare;
use crate::runner::{Cmd, RunError};

/// Where a failure came from, for the comparison with the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A compiler's or type checker's error: the same file, place, code and message means the
    /// same failure.
    Diagnostic,
    /// A test (or a test file that did not load): the same name means the same test.
    Test,
    /// The step failed and nothing could be read from its output: its output's tail.
    Unparsed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Found {
    pub failure: Failure,
    pub origin: Origin,
}

/// A step's run on one state.
#[derive(Debug, Clone)]
pub struct StepRun {
    pub status: Status,
    pub failures: Vec<Found>,
    /// stdout and stderr, for the hints (empty when the step did not finish).
    pub text: String,
    pub note: Option<String>,
    /// What to run, when the step could not run for the toolchain's or the caches' sake.
    pub help: Option<String>,
    pub duration_ms: u64,
}

/// The mirror's layout, for turning the tools' paths into repository paths.
pub struct Layout<'a> {
    /// The project's directory in the mirror (where the step runs).
    pub project_dir: &'a Path,
    /// The mirrored directory's root in the mirror, and its repository path.
    pub mirror_root: &'a Path,
    pub mirror_rel: &'a str,
}

/// Runs `plan` in the project's mirror directory; a Rust or Go package goes through `prep`
/// (dependencies fetched once more if the cache lost them; the toolchain's own failures, not
/// the code's, said in plain words as an `error`).
pub fn execute(
    plan: &Plan,
    step: Step,
    at: &Layout,
    prep: Option<&prepare::Package>,
    timeout: Duration,
) -> StepRun {
    let started = std::time::Instant::now();
    let mut cmd = Cmd::new(plan.argv[0].clone(), at.project_dir)
        .args(plan.argv[1..].iter().cloned())
        .timeout(timeout);
    for (k, v) in &plan.env {
        cmd = cmd.env(k, v);
    }
    if let Some(junit) = &plan.junit {
        // A report left by an earlier run with the same pid must not be read as this one's.
        let _ = std::fs::remove_file(junit);
    }
    let mut run = StepRun {
        status: Status::Pass,
        failures: Vec::new(),
        text: String::new(),
        note: None,
        help: None,
        duration_ms: 0,
    };
    let ran = match prep {
        Some(p) => p.run(|| cmd.run()).and_then(|r| match r {
            Ok(o) if !o.success() && !o.timed_out => match p.explain(&o.stderr_str()) {
                Some(u) => Err(u),
                None => Ok(Ok(o)),
            },
            r => Ok(r),
        }),
        None => Ok(cmd.run()),
    };
    let result = match ran {
        Ok(r) => r,
        Err(u) => {
            run.status = Status::Error;
            run.note = Some(u.message);
            run.help = Some(u.help);
            if let Some(junit) = &plan.junit {
                let _ = std::fs::remove_file(junit);
            }
            run.duration_ms = started.elapsed().as_millis() as u64;
            return run;
        }
    };
    match result {
        Err(RunError::NotFound(p)) => {
            run.status = Status::Missing;
            run.note = Some(format!("{} not found on PATH", p.to_string_lossy()));
        }
        Err(e) => {
            run.status = Status::Error;
            run.note = Some(e.to_string());
        }
        Ok(o) if o.timed_out => {
            run.status = Status::Timeout;
            run.note = Some(format!(
                "killed after {} s with its child processes",
                timeout.as_secs()
            ));
        }
        Ok(o) => {
            let (stdout, stderr) = (o.stdout_str(), o.stderr_str());
            let text = format!("{stdout}\n{stderr}");
            let mut failures = failures_of(plan.parser, &stdout, &stderr, plan.junit.as_deref());
            locate(plan.parser, &mut failures, at);
            if plan.parser == Parser::Pytest && !o.success() && missing_module(&text, "pytest") {
                run.status = Status::Missing;
                run.note = Some("pytest is not installed in the project's Python".into());
            } else if plan.parser == Parser::Mypy && !o.success() && missing_module(&text, "mypy") {
                run.status = Status::Missing;
                run.note = Some("mypy is not installed".into());
            } else if !o.success() {
                run.status = Status::Fail;
                if failures.is_empty() {
                    failures.push(Found {
                        failure: Failure {
                            name: step.name().to_string(),
                            file: None,
                            line: None,
                            message: tail(&text, 20),
                            new: true,
                        },
                        origin: Origin::Unparsed,
                    });
                }
            } else if step == Step::Typecheck && plan.parser == Parser::Mypy && !failures.is_empty()
            {
                run.status = Status::Fail;
            }
            if run.status == Status::Fail {
                run.failures = failures;
            }
            run.text = text;
        }
    }
    if let Some(junit) = &plan.junit {
        let _ = std::fs::remove_file(junit);
    }
    run.duration_ms = started.elapsed().as_millis() as u64;
    run
}

/// Repository paths for the failures (see the module doc).
fn locate(parser: Parser, failures: &mut [Found], at: &Layout) {
    for f in failures.iter_mut().map(|f| &mut f.failure) {
        if parser == Parser::NodeTest && Path::new(&f.name).is_absolute() {
            // A test file that did not load is named by its path in the mirror.
            f.name = repo_path(&f.name, at);
        }
        if parser == Parser::GoTest
            && let Some(file) = f.file.as_deref().filter(|x| !x.contains('/'))
            && let Some(found) = go_test_file(&f.name, file, at.project_dir)
        {
            f.file = Some(found);
        }
        if let Some(file) = &f.file {
            f.file = Some(repo_path(file, at));
        }
    }
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
fn repo_path(file: &str, at: &Layout) -> String {
    let p = Path::new(file.trim_start_matches("./"));
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        at.project_dir.join(p)
    };
    match abs.strip_prefix(at.mirror_root) {
        Ok(r) if at.mirror_rel.is_empty() => r.to_string_lossy().into_owned(),
        Ok(r) => format!("{}/{}", at.mirror_rel, r.to_string_lossy()),
        Err(_) => file.to_string(),
    }
}

fn failures_of(parser: Parser, stdout: &str, stderr: &str, junit: Option<&Path>) -> Vec<Found> {
    use crate::checks::parse as cp;
    let both = format!("{stdout}\n{stderr}");
    let as_found = |failures: Vec<Failure>, origin: Origin| {
        failures
            .into_iter()
            .map(move |failure| Found { failure, origin })
    };
    // A test run's failures without a name are the build's (go's compiler errors).
    let tests = |failures: Vec<Failure>| {
        failures
            .into_iter()
            .map(|failure| Found {
                origin: if failure.name.is_empty() {
                    Origin::Diagnostic
                } else {
                    Origin::Test
                },
                failure,
            })
            .collect::<Vec<_>>()
    };
    let diagnostics = |f: Vec<Failure>| as_found(f, Origin::Diagnostic).collect::<Vec<_>>();
    match parser {
        Parser::Cargo => diagnostics(
            cp::cargo::cargo_json(stdout)
                .map(|f| parse::compiler(&f))
                .unwrap_or_default(),
        ),
        Parser::CargoTest => {
            let mut f = diagnostics(
                cp::cargo::cargo_json(stdout)
                    .map(|f| parse::compiler(&f))
                    .unwrap_or_default(),
            );
            f.extend(as_found(parse::libtest(&both), Origin::Test));
            f
        }
        Parser::GoBuild => diagnostics(parse::go_build_text(&both)),
        Parser::GoTest => tests(parse::go_test_json(&both)),
        Parser::NodeTest => tests(parse::node_test(&both)),
        Parser::GoVet => diagnostics(
            cp::go::go_vet_text(stderr)
                .map(|f| parse::compiler(&f))
                .unwrap_or_default(),
        ),
        Parser::Tsc => diagnostics(
            cp::tsc::tsc_text(stdout)
                .map(|f| parse::compiler(&f))
                .unwrap_or_default(),
        ),
        Parser::Mypy => diagnostics(
            cp::mypy::mypy_json(stdout)
                .map(|f| parse::compiler(&f))
                .unwrap_or_default(),
        ),
        Parser::Compileall => diagnostics(parse::python_compile(&both)),
        Parser::Pytest => tests(
            junit
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|x| parse::pytest_junit(&x).ok())
                .unwrap_or_default(),
        ),
        Parser::Generic => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_test_failures_tell_tests_from_compile_errors() {
        let stdout = include_str!("testdata/cargo-build.json");
        let found = failures_of(Parser::CargoTest, stdout, "", None);
        assert!(!found.is_empty());
        assert!(found.iter().all(|f| f.origin == Origin::Diagnostic));
        let text = include_str!("testdata/cargo-test-failures.txt");
        let found = failures_of(Parser::CargoTest, "", text, None);
        assert!(!found.is_empty());
        assert!(found.iter().all(|f| f.origin == Origin::Test));
    }

    #[test]
    fn go_test_build_errors_are_diagnostics() {
        for json in [
            include_str!("testdata/go-test-setup.json"),
            include_str!("testdata/go-test.json"),
        ] {
            let found = failures_of(Parser::GoTest, json, "", None);
            assert!(!found.is_empty());
            for f in &found {
                let want = if f.failure.name.is_empty() {
                    Origin::Diagnostic
                } else {
                    Origin::Test
                };
                assert_eq!(f.origin, want, "{f:#?}");
            }
        }
        let found = failures_of(
            Parser::GoTest,
            include_str!("testdata/go-test.json"),
            "",
            None,
        );
        assert!(found.iter().any(|f| f.origin == Origin::Test));
        assert!(found.iter().any(|f| f.origin == Origin::Diagnostic));
    }

    #[test]
    fn paths_become_repository_paths() {
        let at = Layout {
            project_dir: Path::new("/cache/m/mirror/web/app"),
            mirror_root: Path::new("/cache/m/mirror/web"),
            mirror_rel: "web",
        };
        assert_eq!(repo_path("src/a.ts", &at), "web/app/src/a.ts");
        assert_eq!(repo_path("/cache/m/mirror/web/x.ts", &at), "web/x.ts");
        assert_eq!(repo_path("/usr/lib/x.ts", &at), "/usr/lib/x.ts");
    }
}
