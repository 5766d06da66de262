//! `ruff format`: Python's formatter where the project asks for it (`[tool.ruff.format]`, a
//! `[format]` table in `ruff.toml`, a `ruff format` script or pre-commit hook); `[tool.ruff]`
//! alone configures the linter only.

use std::path::Path;

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::{Evidence, Signals, Use};

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
    uses: Uses::Evidence(&SIGNALS, Some(ruff_toml_format)),
    batch: Batch::Project,
    locate: Some(|l| l.program("ruff")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    super::ruff::batch(call, false)
}

/// A `[format]` table in the nearest `ruff.toml` / `.ruff.toml` (the signals cannot look inside).
fn ruff_toml_format(ev: &Evidence, rel: &str, verdict: Use) -> Use {
    if matches!(verdict, Use::Used { .. }) {
        return verdict;
    }
    static RUFF_TOML: Signals = Signals {
        config_files: &["ruff.toml", ".ruff.toml"],
        package_json_keys: &[],
        pyproject_tables: &[],
        ini_sections: &[],
        commands: &[],
        precommit_ids: &[],
        dependencies: &[],
    };
    let Use::Used { config_dir, .. } = ev.uses(rel, &RUFF_TOML) else {
        return verdict;
    };
    let has_format = |name: &str| {
        std::fs::read_to_string(config_dir.join(name))
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .is_some_and(|t| t.contains_key("format"))
    };
    match ["ruff.toml", ".ruff.toml"].into_iter().find(|n| has_format(n)) {
        Some(name) => Use::Used {
            evidence: format!("[format] in {}", Path::new(name).display()),
            config_dir,
            args: Vec::new(),
        },
        None => verdict,
    }
}
