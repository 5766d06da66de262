//! xo: an eslint wrapper with its own rules (and, with `--prettier`, prettier). A project that
//! uses xo runs xo itself, never its eslint or prettier separately.

use crate::project::evidence::{Evidence, Signals, Use};

pub static SIGNALS: Signals = Signals {
    config_files: &[
        "xo.config.js",
        "xo.config.cjs",
        "xo.config.mjs",
        "xo.config.ts",
        "xo.config.cts",
        "xo.config.mts",
    ],
    package_json_keys: &["xo"],
    pyproject_tables: &[],
    ini_sections: &[],
    commands: &["xo"],
    precommit_ids: &["xo"],
    dependencies: &["xo"],
};

/// For eslint and prettier: not used where the project uses xo.
pub fn replaces(ev: &Evidence, rel: &str, verdict: Use) -> Use {
    match ev.uses(rel, &SIGNALS) {
        Use::Used { evidence, .. } => Use::NotUsed {
            why: format!("the project uses xo ({evidence}), which runs it itself"),
        },
        Use::NotUsed { .. } => verdict,
    }
}
