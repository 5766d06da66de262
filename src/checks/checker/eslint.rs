//! eslint, through the node bridge (`checks::exec::node`), where the project configures it (flat
//! `eslint.config.*`, legacy `.eslintrc*` or package.json `"eslintConfig"`, a script, lint-staged
//! entry or pre-commit hook running it). With no configuration eslint reports an error on every
//! file, so a dependency alone is not evidence. A project that uses xo runs xo instead.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::exec::Ran;
use crate::checks::exec::node::{NodeApi, NodeTool};
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

/// eslint's configuration files, flat (`eslint.config.*`) and legacy (`.eslintrc*`).
pub const CONFIGS: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    ".eslintrc.json",
    ".eslintrc",
];

pub static SIGNALS: Signals = Signals {
    name: "eslint",
    config_files: CONFIGS,
    package_json_keys: &["eslintConfig"],
    commands: &["eslint"],
    precommit_ids: &["eslint"],
    dependencies: &[
        "eslint",
        "@eslint/js",
        "typescript-eslint",
        "eslint-config-*",
        "eslint-plugin-*",
    ],
    ..Signals::NONE
};

/// eslint through the bridge's ESLint-API driver.
pub const NODE: NodeTool = NodeTool {
    package: "eslint",
    api: NodeApi::Lint,
    configs: CONFIGS,
    ignore_files: &[],
};

pub static CHECKER: Checker = Checker {
    name: "eslint",
    files: Files::Lang(Lang::Node),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, Some(super::xo::replaces)),
    batch: Batch::Project,
    locate: Some(super::node_locate),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    super::node_run(NODE, call)
}

/// Is this config file (a path or a name) an eslint legacy (eslintrc) config? Such a project
/// needs its own eslint (eslint ≥ 9 refuses eslintrc), which `locate` finds first.
pub fn is_eslint_legacy(config: &std::path::Path) -> bool {
    config
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".eslintrc"))
}
