//! gofmt: every Go module's formatter, on stdin.

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, formatted};
use crate::checks::tools::{self, Invocation, Ran};
use crate::project::config::Kind;
use crate::project::detect::Lang;

pub static CHECKER: Checker = Checker {
    name: "gofmt",
    files: Files::Lang(Lang::Go),
    kind: Kind::Format,
    uses: Uses::Always,
    batch: Batch::PerFile,
    locate: Some(|l| l.program("gofmt")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let project = match call.project() {
        Ok(p) => p,
        Err(e) => return e,
    };
    each_file(call, |i| {
        let inv = Invocation {
            argv: call.argv.to_vec(),
            project,
            real: i.real,
            timeout: call.timeout,
        };
        formatted(tools::gofmt(&inv, i.text()))
    })
}
