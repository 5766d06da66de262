//! `ruff format`: Python's formatter where the project asks for it (`[tool.ruff.format]`, a
//! `ruff format` script or pre-commit hook); `[tool.ruff]` alone configures the linter only.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    config_files: &[],
    package_json_keys: &[],
    pyproject_tables: &["tool.ruff.format"],
    ini_sections: &[],
    commands: &["ruff format"],
    precommit_ids: &["ruff-format"],
    dependencies: &["ruff"],
};

pub static CHECKER: Checker = Checker {
    name: "ruff-format",
    files: Files::Lang(Lang::Python),
    kind: Kind::Format,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::Project,
    locate: Some(|l| l.program("ruff")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    super::ruff::batch(call, false)
}
