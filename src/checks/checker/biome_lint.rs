//! biome's linter where the project configures biome (`biome.json(c)`, a script, lint-staged
//! entry or pre-commit hook running `biome lint` / `biome check`), unless its configuration turns
//! the linter off. One run per batch on a scratch copy (biome's stdin mode gives no diagnostics).

use super::{Batch, Call, Checker, FileOut, Files, Out, Uses};
use crate::checks::runners::{self, Source};
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::{Evidence, Signals, Use};

pub static SIGNALS: Signals = Signals {
    name: "biome (lint)",
    config_files: super::biome_format::CONFIGS,
    commands: &["biome lint", "biome check", "biome ci"],
    precommit_ids: &["biome-lint", "biome-check", "biome-ci"],
    dependencies: &["@biomejs/biome"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "biome-lint",
    files: Files::Lang(Lang::Node),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, Some(unless_off)),
    batch: Batch::Project,
    locate: Some(|l| l.program("biome")),
    run,
};

fn unless_off(ev: &Evidence, rel: &str, verdict: Use) -> Use {
    super::biome_format::section_off(ev, rel, verdict, "linter")
}

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
    match runners::biome_lint(
        call.argv,
        call.repo_root,
        call.cwd,
        &sources,
        call.args,
        &scratch,
        call.timeout,
    ) {
        Ran::Done(all) => Ran::Done(per_file(call, all)),
        other => other.relay(),
    }
}

/// A batch's findings (on repository paths) as one verdict per input.
pub(super) fn per_file(call: &Call, all: Vec<crate::checks::finding::RawFinding>) -> Out {
    Out::Files(
        call.files
            .iter()
            .map(|i| FileOut::Findings(all.iter().filter(|f| f.path == i.rel).cloned().collect()))
            .collect(),
    )
}
