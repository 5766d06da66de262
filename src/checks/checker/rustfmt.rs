//! rustfmt: every Cargo project's formatter, on stdin from the file's own directory (so it finds
//! `rustfmt.toml`), with the package's edition.

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, formatted};
use crate::checks::tools::{self, Invocation, Ran};
use crate::project::config::Kind;
use crate::project::detect::Lang;

pub static CHECKER: Checker = Checker {
    name: "rustfmt",
    files: Files::Lang(Lang::Rust),
    kind: Kind::Format,
    uses: Uses::Always,
    batch: Batch::PerFile,
    locate: Some(|l| l.program("rustfmt")),
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
        formatted(tools::rustfmt(&inv, i.text()))
    })
}
