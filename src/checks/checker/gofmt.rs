//! gofmt: every Go module's formatter, on stdin.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, formatted};
use crate::checks::exec::{Ran, first_lines, run_stdin};
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
        formatted(gofmt(call.argv, &project.root, i.text(), call.timeout))
    })
}

fn gofmt(argv: &[OsString], root: &Path, text: &str, timeout: Duration) -> Ran<String> {
    let out = match run_stdin(argv, root, text, timeout) {
        Ok(o) => o,
        Err(r) => return r.relay(),
    };
    match out.code {
        Some(0) => Ran::Done(out.stdout_str()),
        _ => Ran::Error(first_lines(&out.stderr_str())),
    }
}
