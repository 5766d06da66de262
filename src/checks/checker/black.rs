//! black where the project uses it (`[tool.black]` — black reads no other file —, a pre-commit
//! hook, or a script running it), on stdin with the file's real path.

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, formatted};
use crate::checks::runners::{self, Source};
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "black",
    pyproject_tables: &["tool.black"],
    commands: &["black"],
    precommit_ids: &["black", "black-jupyter"],
    dependencies: &["black"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "black",
    files: Files::Lang(Lang::Python),
    kind: Kind::Format,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::PerFile,
    locate: Some(|l| l.program("black")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    each_file(call, |i| {
        let src = Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        };
        formatted(runners::black(
            call.argv,
            call.cwd,
            &src,
            call.args,
            call.timeout,
        ))
    })
}
