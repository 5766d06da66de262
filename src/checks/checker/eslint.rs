//! eslint, through the node bridge (`checks::node`), where the project configures it (flat
//! `eslint.config.*`, legacy `.eslintrc*` or package.json `"eslintConfig"`, a script, lint-staged
//! entry or pre-commit hook running it). With no configuration eslint reports an error on every
//! file, so a dependency alone is not evidence. A project that uses xo runs xo instead.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::node::{self, NodeTool};
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    config_files: &[
        "eslint.config.js",
        "eslint.config.mjs",
        "eslint.config.cjs",
        "eslint.config.ts",
        "eslint.config.mts",
        "eslint.config.cts",
        ".eslintrc",
        ".eslintrc.js",
        ".eslintrc.cjs",
        ".eslintrc.json",
        ".eslintrc.yml",
        ".eslintrc.yaml",
    ],
    package_json_keys: &["eslintConfig"],
    pyproject_tables: &[],
    ini_sections: &[],
    commands: &["eslint"],
    precommit_ids: &["eslint"],
    dependencies: &["eslint"],
};

pub static CHECKER: Checker = Checker {
    name: "eslint",
    files: Files::Lang(Lang::Node),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, Some(super::xo::replaces)),
    batch: Batch::Project,
    locate: Some(node::locate),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    node::run_checker(NodeTool::Eslint, call)
}
