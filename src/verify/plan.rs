//! The command of each verify step, per language, run the way the project configures it and no
//! stricter (each overridable in `.patchgate.toml` `[verify.<lang>]`):
//!
//! | | build | test | typecheck |
//! |---|---|---|---|
//! | Rust | `cargo build --all-targets` | `cargo test --no-fail-fast` | `cargo check --all-targets` |
//! | Go | `go build ./...` | `go test -json ./...` | `go vet ./...` |
//! | Node | `<pm> run build` | `<pm> run test` | `<pm> run typecheck`, else `tsc --noEmit` |
//! | Python | `python -m compileall -q .` | `python -m pytest --junitxml` | `python -m mypy -O json` |
//!
//! A step a project does not have is left out (`Ok(None)`): no `build`/`test` script in a Node
//! project, no `typecheck` script and no `tsconfig.json`, and, for Python, **no mypy
//! configuration**: mypy is run only where the project configures it (`mypy.ini`, `.mypy.ini`,
//! `[tool.mypy]` in `pyproject.toml`, `[mypy]` in `setup.cfg`, in the project's directory or one
//! above it up to the repository root, where mypy itself looks), from the project's root, with
//! no flag but its JSON output, so it reads its own configuration; the target is the
//! configuration's `files` (or `packages`/`modules`) when set, else `.`. Without a
//! configuration, mypy's defaults on every file would report what the project never checks.
//! tsc likewise runs with the project's own `tsconfig.json`, from the project's root (its
//! `node_modules` install first, then the repository's up to the root, then PATH).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Step;
use crate::project::config::{Config, StepCommands};
use crate::project::detect::{Lang, Project};
use crate::project::tools::{project_local, which};

/// How a step's output becomes failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parser {
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

pub struct Plan {
    pub argv: Vec<OsString>,
    pub env: Vec<(String, OsString)>,
    pub parser: Parser,
    /// pytest's report file, read after the run.
    pub junit: Option<PathBuf>,
}

impl Plan {
    /// The command as shown in the report.
    pub fn command(&self) -> String {
        self.argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What identifies the command for the baseline cache: the argv and environment, without
    /// the per-run report file.
    pub fn identity(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for a in &self.argv {
            let a = a.to_string_lossy();
            if !a.starts_with("--junitxml=") {
                out.extend_from_slice(a.as_bytes());
            }
            out.push(0);
        }
        for (k, v) in &self.env {
            out.extend_from_slice(k.as_bytes());
            out.push(b'=');
            out.extend_from_slice(v.to_string_lossy().as_bytes());
            out.push(0);
        }
        out
    }
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

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Where a step runs and what it may need.
pub struct Where<'a> {
    pub config: &'a Config,
    pub repo_root: &'a Path,
    pub git_dir: &'a Path,
    pub project: &'a Project,
    /// The project's directory in the mirror.
    pub dir: &'a Path,
    pub cargo_pkg: Option<&'a str>,
}

/// The command for a step, `Ok(None)` when the project has no such step.
pub fn plan_step(at: &Where, step: Step) -> Result<Option<Plan>, String> {
    let generic = |argv: Vec<String>| Plan {
        argv: argv.into_iter().map(OsString::from).collect(),
        env: Vec::new(),
        parser: Parser::Generic,
        junit: None,
    };
    let project = at.project;
    if let Some(cmd) = override_for(at.config, project.lang, step).filter(|c| !c.is_empty()) {
        return Ok(Some(generic(cmd)));
    }
    let plan = match project.lang {
        Lang::Rust => rust(at, step),
        Lang::Go => go(step),
        Lang::Node => match node(at, step)? {
            Some(p) => p,
            None => return Ok(None),
        },
        Lang::Python => match python(at, step) {
            Some(p) => p,
            None => return Ok(None),
        },
    };
    Ok(Some(plan))
}

fn rust(at: &Where, step: Step) -> Plan {
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
    if let Some(p) = at.cargo_pkg {
        argv.extend(os(&["-p", p]));
    }
    Plan {
        argv,
        env: vec![
            (
                "CARGO_TARGET_DIR".into(),
                crate::fs::layout::cargo_target(at.git_dir).into_os_string(),
            ),
            ("CARGO_TERM_COLOR".into(), "never".into()),
        ],
        parser,
        junit: None,
    }
}

fn go(step: Step) -> Plan {
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

fn node(at: &Where, step: Step) -> Result<Option<Plan>, String> {
    let scripts: serde_json::Value = std::fs::read(at.dir.join("package.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .map(|v| v["scripts"].clone())
        .unwrap_or_default();
    let pm = package_manager(&at.project.root, at.repo_root);
    Ok(match (step, scripts.get(step.name()).is_some()) {
        (_, true) => Some(Plan {
            argv: os(&[pm, "run", step.name()]),
            env: vec![("CI".into(), "true".into())],
            parser: match step {
                Step::Typecheck => Parser::Tsc,
                Step::Test => Parser::NodeTest,
                Step::Build => Parser::Generic,
            },
            junit: None,
        }),
        (Step::Typecheck, false) if at.dir.join("tsconfig.json").is_file() => {
            let tsc = match project_local("tsc", &at.project.root, at.repo_root) {
                Some(p) => p.into_os_string(),
                None => which("tsc")
                    .ok_or("tsc not found in node_modules or on PATH")?
                    .into_os_string(),
            };
            Some(Plan {
                argv: vec![tsc, "--noEmit".into(), "--pretty".into(), "false".into()],
                env: Vec::new(),
                parser: Parser::Tsc,
                junit: None,
            })
        }
        _ => None,
    })
}

fn python(at: &Where, step: Step) -> Option<Plan> {
    let python = project_local("python", &at.project.root, at.repo_root)
        .map_or_else(|| OsString::from("python3"), PathBuf::into_os_string);
    let src = at.dir.join("src");
    let mut pythonpath = at.dir.as_os_str().to_owned();
    if src.is_dir() {
        pythonpath.push(":");
        pythonpath.push(src.as_os_str());
    }
    let env = vec![
        ("PYTHONPATH".to_string(), pythonpath),
        ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
    ];
    let module = |m: &str, args: &[&str]| {
        let mut argv = vec![python.clone(), "-m".into(), m.into()];
        argv.extend(os(args));
        argv
    };
    Some(match step {
        Step::Build => Plan {
            argv: module("compileall", &["-q", "."]),
            env,
            parser: Parser::Compileall,
            junit: None,
        },
        Step::Test => {
            let junit = crate::fs::layout::pytest_junit(at.git_dir, std::process::id());
            let mut argv = module("pytest", &["-q", "-p", "no:cacheprovider"]);
            argv.push(format!("--junitxml={}", junit.display()).into());
            Plan {
                argv,
                env,
                parser: Parser::Pytest,
                junit: Some(junit),
            }
        }
        Step::Typecheck => {
            let config = mypy_config(at.dir, at.repo_root, &at.project.root)?;
            let mut argv = module("mypy", &["-O", "json"]);
            if !config.has_targets {
                argv.push(".".into());
            }
            Plan {
                argv,
                env,
                parser: Parser::Mypy,
                junit: None,
            }
        }
    })
}

/// A mypy configuration that applies to a project.
#[derive(Debug, PartialEq, Eq)]
pub struct MypyConfig {
    pub path: PathBuf,
    /// It names what to check (`files`, `packages` or `modules`): mypy needs no target.
    pub has_targets: bool,
}

/// The mypy configuration mypy would read from `dir` (the project's root in the mirror), looked
/// up as mypy does: `mypy.ini`, `.mypy.ini`, `pyproject.toml` with `[tool.mypy]`, `setup.cfg`
/// with `[mypy]`, in `dir` and then each directory above it up to the repository's root (the
/// mirror's counterpart of `real_root`'s ancestors inside `repo_root`).
pub fn mypy_config(dir: &Path, repo_root: &Path, real_root: &Path) -> Option<MypyConfig> {
    let depth = real_root
        .strip_prefix(repo_root)
        .map_or(0, |r| r.components().count());
    let mut d = dir.to_path_buf();
    for level in 0..=depth {
        if let Some(c) = mypy_config_in(&d) {
            return Some(c);
        }
        if level < depth {
            d = d.parent()?.to_path_buf();
        }
    }
    None
}

fn mypy_config_in(dir: &Path) -> Option<MypyConfig> {
    const TARGETS: [&str; 3] = ["files", "packages", "modules"];
    for name in ["mypy.ini", ".mypy.ini"] {
        let path = dir.join(name);
        if let Ok(text) = std::fs::read_to_string(&path) {
            let has_targets = ini_section_keys(&text, "mypy")
                .iter()
                .any(|k| TARGETS.contains(&k.as_str()));
            return Some(MypyConfig { path, has_targets });
        }
    }
    let path = dir.join("pyproject.toml");
    if let Ok(text) = std::fs::read_to_string(&path)
        && let Ok(doc) = text.parse::<toml::Table>()
        && let Some(table) = doc
            .get("tool")
            .and_then(|t| t.get("mypy"))
            .and_then(|m| m.as_table())
    {
        let has_targets = TARGETS.iter().any(|k| table.contains_key(*k));
        return Some(MypyConfig { path, has_targets });
    }
    let path = dir.join("setup.cfg");
    if let Ok(text) = std::fs::read_to_string(&path)
        && ini_has_section(&text, "mypy")
    {
        let has_targets = ini_section_keys(&text, "mypy")
            .iter()
            .any(|k| TARGETS.contains(&k.as_str()));
        return Some(MypyConfig { path, has_targets });
    }
    None
}

fn ini_section(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .map(str::trim)
}

fn ini_has_section(text: &str, section: &str) -> bool {
    text.lines().any(|l| ini_section(l) == Some(section))
}

/// The keys of `[section]` (lowercased, continuation and comment lines skipped).
fn ini_section_keys(text: &str, section: &str) -> Vec<String> {
    let mut inside = false;
    let mut keys = Vec::new();
    for line in text.lines() {
        if let Some(s) = ini_section(line) {
            inside = s == section;
            continue;
        }
        let t = line.trim();
        if !inside || line.starts_with([' ', '\t']) || t.starts_with(['#', ';']) {
            continue;
        }
        if let Some(i) = t.find(['=', ':']) {
            keys.push(t[..i].trim().to_ascii_lowercase());
        }
    }
    keys
}

/// The package manager a Node project uses, from its lockfile (the project's directory up to
/// the repository root: a workspace's lockfile is at its root).
fn package_manager(project_root: &Path, repo_root: &Path) -> &'static str {
    let mut d = Some(project_root);
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
        d = x.parent().filter(|p| p.starts_with(repo_root));
    }
    "npm"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    #[test]
    fn mypy_runs_only_where_configured() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(root, "pkg/pyproject.toml", "[project]\nname = \"x\"\n");
        write(root, "pkg/setup.cfg", "[flake8]\nmax-line-length = 99\n");
        let pkg = root.join("pkg");
        assert_eq!(mypy_config(&pkg, root, &pkg), None);

        // Found in the repository root (above the project), as mypy would.
        write(
            root,
            "setup.cfg",
            "[metadata]\nname = x\n\n[mypy]\nstrict = True\n",
        );
        let found = mypy_config(&pkg, root, &pkg).expect("root setup.cfg");
        assert_eq!(
            found,
            MypyConfig {
                path: root.join("setup.cfg"),
                has_targets: false
            }
        );
        // The project's own configuration wins, and `files` there makes the target.
        write(
            root,
            "pkg/pyproject.toml",
            "[project]\nname = \"x\"\n\n[tool.mypy]\nfiles = [\"src\"]\n",
        );
        let found = mypy_config(&pkg, root, &pkg).expect("pyproject");
        assert!(found.has_targets && found.path.ends_with("pkg/pyproject.toml"));
        // mypy.ini comes first, with or without targets.
        write(
            root,
            "pkg/mypy.ini",
            "[mypy]\npython_version = 3.11\n\n[mypy-x.*]\nfiles = y\n",
        );
        let found = mypy_config(&pkg, root, &pkg).expect("mypy.ini");
        assert!(!found.has_targets && found.path.ends_with("pkg/mypy.ini"));
        write(
            root,
            "pkg/mypy.ini",
            "[mypy]\nfiles =\n    a.py,\n    b.py\n",
        );
        assert!(mypy_config(&pkg, root, &pkg).expect("mypy.ini").has_targets);
    }

    #[test]
    fn a_workspace_lockfile_at_the_root_names_the_package_manager() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        write(&root, "pnpm-lock.yaml", "");
        write(&root, "packages/app/package.json", "{}");
        write(dir.path(), "yarn.lock", "");
        assert_eq!(package_manager(&root.join("packages/app"), &root), "pnpm");
        // Never above the repository.
        std::fs::remove_file(root.join("pnpm-lock.yaml")).expect("rm");
        assert_eq!(package_manager(&root.join("packages/app"), &root), "npm");
    }
}
