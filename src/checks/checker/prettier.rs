//! prettier, through the node bridge (`checks::exec::node`), where the project configures it
//! (`.prettierrc*`, `prettier.config.*`, package.json `"prettier"`, a script, lint-staged entry or
//! pre-commit hook running it). A dependency alone is not evidence: a project may declare prettier
//! only to format its Markdown. A project that uses xo does not run prettier separately.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::exec::Ran;
use crate::checks::exec::node::{NodeApi, NodeTool};
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "prettier",
    config_files: &[
        ".prettierrc",
        ".prettierrc.json",
        ".prettierrc.yaml",
        ".prettierrc.yml",
        ".prettierrc.json5",
        ".prettierrc.toml",
        ".prettierrc.js",
        ".prettierrc.mjs",
        ".prettierrc.cjs",
        ".prettierrc.ts",
        ".prettierrc.mts",
        ".prettierrc.cts",
        "prettier.config.js",
        "prettier.config.mjs",
        "prettier.config.cjs",
        "prettier.config.ts",
        "prettier.config.mts",
        "prettier.config.cts",
    ],
    package_json_keys: &["prettier"],
    commands: &["prettier"],
    precommit_ids: &["prettier"],
    dependencies: &["prettier"],
    ..Signals::NONE
};

/// prettier through the bridge's formatter driver; `.prettierignore` is handed to its API.
pub const NODE: NodeTool = NodeTool {
    package: "prettier",
    api: NodeApi::Format,
    configs: SIGNALS.config_files,
    ignore_files: &[".prettierignore"],
};

pub static CHECKER: Checker = Checker {
    name: "prettier",
    files: Files::Lang(Lang::Node),
    kind: Kind::Format,
    uses: Uses::Evidence(&SIGNALS, Some(super::xo::replaces)),
    batch: Batch::Project,
    locate: Some(super::node_locate),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    super::node_run(NODE, call)
}
