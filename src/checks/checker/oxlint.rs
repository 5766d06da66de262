//! oxlint where the project configures it (`.oxlintrc.json(c)`, `oxlint.config.*`, a script,
//! lint-staged entry or pre-commit hook running it). oxlint has no stdin mode: one run per batch
//! on a scratch copy that carries each file's nearest configuration.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::runners::{self, Source};
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "oxlint",
    config_files: &[
        ".oxlintrc.json",
        ".oxlintrc.jsonc",
        "oxlint.config.ts",
        "oxlint.config.mts",
    ],
    commands: &["oxlint"],
    precommit_ids: &["oxlint"],
    dependencies: &["oxlint", "oxlint-tsgolint"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "oxlint",
    files: Files::Lang(Lang::Node),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::Project,
    locate: Some(|l| l.program("oxlint")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let sources: Vec<Source> = call
        .files
        .iter()
        .map(|i| Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        })
        .collect();
    let scratch = crate::fs::layout::scratch(call.git_dir);
    match runners::oxlint(
        call.argv,
        call.repo_root,
        call.cwd,
        &sources,
        call.args,
        &scratch,
        call.timeout,
    ) {
        Ran::Done(all) => Ran::Done(super::biome_lint::per_file(call, all)),
        other => other.relay(),
    }
}
