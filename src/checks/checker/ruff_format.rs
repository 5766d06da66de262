//! `ruff format`: Python's formatter where the project asks for it (`[tool.ruff.format]`, a
//! `[format]` table in `ruff.toml`, a `ruff format` script or pre-commit hook); `[tool.ruff]`
//! alone configures the linter only.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::exec::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "ruff format",
    pyproject_tables: &["tool.ruff.format"],
    toml_tables: &[("ruff.toml", "format"), (".ruff.toml", "format")],
    commands: &["ruff format"],
    precommit_ids: &["ruff-format"],
    dependencies: &["ruff"],
    ..Signals::NONE
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
