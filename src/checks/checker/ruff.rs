//! `ruff check`: Python's linter where the project configures it (`ruff.toml`, `[tool.ruff]`, a
//! script or pre-commit hook running it).
//!
//! One run per project batch on a scratch copy that carries the configuration chain
//! (`checks::ruff_batch`); if that batch fails as a whole, one stdin run per file.

use std::path::Path;

use super::{Batch, Call, Checker, FileOut, Files, Out, Uses, each_file, findings, formatted};
use crate::checks::ruff_batch;
use crate::checks::tools::{self, Invocation, Ran};
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "ruff",
    config_files: &["ruff.toml", ".ruff.toml"],
    pyproject_tables: &["tool.ruff", "tool.ruff.lint"],
    commands: &["ruff check"],
    precommit_ids: &["ruff", "ruff-check"],
    dependencies: &["ruff"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "ruff",
    files: Files::Lang(Lang::Python),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::Project,
    locate: Some(|l| l.program("ruff")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    batch(call, true)
}

/// ruff (check or format) over the call's files: one batch, else one stdin run per file.
pub(super) fn batch(call: &Call, lint: bool) -> Ran<Out> {
    let texts: Vec<(&str, &str)> = call.files.iter().map(|i| (i.rel, i.text())).collect();
    match ruff_batch::run(call.argv, call.repo_root, &texts, lint, call.timeout) {
        Ran::Done(ruff_batch::Out::Formatted(out)) => Ran::Done(Out::Files(
            out.into_iter()
                .map(|(_, f)| FileOut::Formatted(f))
                .collect(),
        )),
        Ran::Done(ruff_batch::Out::Findings(all)) => Ran::Done(Out::Files(
            call.files
                .iter()
                .map(|i| {
                    FileOut::Findings(all.iter().filter(|f| f.path == i.rel).cloned().collect())
                })
                .collect(),
        )),
        Ran::Missing(m) => Ran::Missing(m),
        Ran::Timeout => Ran::Timeout,
        // A configuration this batch could not reproduce: one stdin run per file.
        Ran::Skipped(_) | Ran::Error(_) | Ran::Unready { .. } => per_file(call, lint),
    }
}

fn per_file(call: &Call, lint: bool) -> Ran<Out> {
    let project = match call.project() {
        Ok(p) => p,
        Err(e) => return e,
    };
    each_file(call, |i| {
        let inv = Invocation {
            argv: call.argv.to_vec(),
            project,
            real: i.real,
            timeout: call.timeout,
        };
        if !lint {
            return formatted(tools::ruff_format(&inv, i.text()));
        }
        findings(match tools::ruff_check(&inv, i.text()) {
            Ran::Done(f) => Ran::Done(
                f.into_iter()
                    .filter(|x| Path::new(&x.path) == i.real || x.path == i.rel)
                    .collect(),
            ),
            other => other,
        })
    })
}
