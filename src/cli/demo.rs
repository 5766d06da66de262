//! `patchgate demo`: the bundled example, end to end, with no setup.
//!
//! Copies the example repository (embedded in the binary) into a scratch directory, commits it,
//! then shows what patchgate is for: a patch whose miss is explained with the real text (nothing
//! written), a multi-file patch applied all at once, the same patch re-run as a no-op, a patch
//! that the project's own linter refuses, and a rename that forgets its callers, refused by the
//! built-in gate on any machine.

use std::path::Path;

use super::output::{OutputFormat, emit, print_report};
use crate::ops::{self, Context};

const FILES: &[(&str, &str)] = &[
    (
        "app/config.py",
        include_str!("../../examples/demo/repo/app/config.py"),
    ),
    (
        "app/main.py",
        include_str!("../../examples/demo/repo/app/main.py"),
    ),
    ("app.cfg", include_str!("../../examples/demo/repo/app.cfg")),
    (
        "CHANGELOG.md",
        include_str!("../../examples/demo/repo/CHANGELOG.md"),
    ),
    (
        "pyproject.toml",
        include_str!("../../examples/demo/repo/pyproject.toml"),
    ),
];
const PATCH: &str = include_str!("../../examples/demo/patch.yaml");
const MISS: &str = include_str!("../../examples/demo/miss.yaml");
const LINT: &str = include_str!("../../examples/demo/lint.yaml");
const BROKEN: &str = include_str!("../../examples/demo/broken.yaml");

pub(super) fn run() -> i32 {
    match run_inner() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("patchgate demo: {e}");
            crate::error::Kind::Io.exit().code()
        }
    }
}

fn run_inner() -> Result<i32, Box<dyn std::error::Error>> {
    let dir = tempfile::Builder::new()
        .prefix("patchgate-demo-")
        .tempdir()?
        .keep();
    make_repo(&dir)?;
    emit(&format!(
        "Scratch copy of the example repository: {}\n\n",
        dir.display()
    ));

    let step = |title: &str, yaml: &str, name: &str, require_tools: bool| {
        step(&dir, title, yaml, name, require_tools)
    };
    let miss = step(
        "1. A patch with stale old_strings: nothing is written, each miss is explained",
        MISS,
        "miss.yaml",
        false,
    )?;
    let applied = step(
        "2. A multi-file rename, applied all or nothing",
        PATCH,
        "patch.yaml",
        false,
    )?;
    let rerun = step(
        "3. The same patch again: already applied, exit 0",
        PATCH,
        "patch.yaml",
        false,
    )?;
    // Where ruff is installed, its new finding blocks; where it is not (a fresh machine before
    // `scripts/test`), the demo says so and asks for the checker: a missing one blocks too, so
    // the step shows what it promises either way.
    let has_ruff = crate::project::tools::which("ruff").is_some();
    let lint = step(
        if has_ruff {
            "4. A patch that adds an unused import: the project's own ruff blames it, nothing is written"
        } else {
            "4. A patch that adds an unused import: ruff is not installed here (scripts/test installs \
             it into .tools/), and --require-tools makes a missing checker block: nothing is written"
        },
        LINT,
        "lint.yaml",
        !has_ruff,
    )?;
    let broken = step(
        "5. A rename that forgets its callers in other files: the built-in references check \
         (no tool needed) shows each use left behind, nothing is written",
        BROKEN,
        "broken.yaml",
        false,
    )?;
    emit(&format!(
        "Inspect the result: git -C {} diff\n",
        dir.display()
    ));
    Ok(
        if miss == 2 && applied == 0 && rerun == 0 && lint == 1 && broken == 1 {
            0
        } else {
            1
        },
    )
}

/// One step of the demo: the patch applied as `patchgate apply NAME` would, its report shown,
/// and its exit code.
fn step(
    dir: &Path,
    title: &str,
    yaml: &str,
    name: &str,
    require_tools: bool,
) -> Result<i32, Box<dyn std::error::Error>> {
    let flag = if require_tools {
        " --require-tools"
    } else {
        ""
    };
    emit(&format!("━━ {title}\n$ patchgate apply {name}{flag}\n\n"));
    let patch = crate::patch::parse(yaml, name)?;
    // The project's own checkers, where installed (a missing one is reported, and blocks only
    // with --require-tools).
    let request = ops::apply::Request {
        check: ops::check::Settings {
            require_tools,
            ..Default::default()
        },
        ..Default::default()
    };
    let ctx = Context {
        dir: dir.to_path_buf(),
        progress: false,
        json: false,
    };
    let report = ops::apply::run(&request, &patch, &ctx)?;
    let code = print_report(&report, OutputFormat::Human);
    emit(&format!("(exit {code})\n\n"));
    Ok(code)
}

fn make_repo(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let repo = git2::Repository::init(dir)?;
    let mut index = repo.index()?;
    for (path, text) in FILES {
        let full = dir.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, text)?;
        index.add_path(Path::new(path))?;
    }
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    // A fixed identity: the demo must not depend on the user's git configuration.
    let sig = git2::Signature::now("patchgate demo", "demo@patchgate.invalid")?;
    repo.commit(Some("HEAD"), &sig, &sig, "Example project", &tree, &[])?;
    Ok(())
}
