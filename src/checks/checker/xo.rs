//! xo: an eslint wrapper with its own rules (and, with `--prettier`, prettier). A project that
//! uses xo runs xo itself, never its eslint or prettier separately. One stdin run per file
//! (about 3 s each: xo loads typescript-eslint and many plugins).

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, findings};
use crate::checks::runners::{self, Source};
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::{Evidence, Signals, Use};

pub static SIGNALS: Signals = Signals {
    name: "xo",
    config_files: &[
        "xo.config.js",
        "xo.config.cjs",
        "xo.config.mjs",
        "xo.config.ts",
        "xo.config.cts",
        "xo.config.mts",
        ".xo-config",
        ".xo-config.json",
        ".xo-config.js",
        ".xo-config.cjs",
    ],
    package_json_keys: &["xo"],
    commands: &["xo"],
    dependencies: &["xo"],
    ..Signals::NONE
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

pub static CHECKER: Checker = Checker {
    name: "xo",
    files: Files::Lang(Lang::Node),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::PerFile,
    locate: Some(|l| l.program("xo")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let scratch = crate::fs::layout::scratch(call.git_dir);
    each_file(call, |i| {
        let src = Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        };
        findings(runners::xo(
            call.argv,
            call.cwd,
            &src,
            call.args,
            &scratch,
            call.timeout,
        ))
    })
}
