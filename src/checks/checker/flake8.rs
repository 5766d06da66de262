//! flake8 where the project configures it (`.flake8`, `[flake8]` in setup.cfg or tox.ini, a
//! pre-commit hook — whose `args:` are passed on —, or a script running it). flake8 reads its
//! configuration from the working directory, so it runs where that configuration is.

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, findings};
use crate::checks::runners::{self, Source};
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "flake8",
    config_files: &[".flake8"],
    pyproject_tables: &["tool.flake8"],
    ini_sections: &[("setup.cfg", "flake8"), ("tox.ini", "flake8")],
    commands: &["flake8"],
    precommit_ids: &["flake8"],
    dependencies: &["flake8", "flake8-*"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "flake8",
    files: Files::Lang(Lang::Python),
    kind: Kind::Lint,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::PerFile,
    locate: Some(|l| l.program("flake8")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    each_file(call, |i| {
        let src = Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        };
        findings(runners::flake8(
            call.argv,
            call.cwd,
            &src,
            call.args,
            call.timeout,
        ))
    })
}
