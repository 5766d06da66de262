//! `go vet` (or `golangci-lint run` where installed): every Go module's linter, over every
//! package of the module in the mirror, findings anywhere in them (a missed call site in another
//! package is a new finding there).

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::package;
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;

pub static CHECKER: Checker = Checker {
    name: "go-lint",
    files: Files::Lang(Lang::Go),
    kind: Kind::Lint,
    uses: Uses::Always,
    batch: Batch::Package,
    locate: Some(|l| l.program("go")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let project = match call.project() {
        Ok(p) => p,
        Err(e) => return e,
    };
    let overlays = package::overlays(call);
    match package::go_lint(
        call.argv,
        call.repo_root,
        call.git_dir,
        project,
        &overlays,
        call.timeout,
        call.offline,
    ) {
        Ran::Done(f) => Ran::Done(Out::Package(f)),
        other => other.relay(),
    }
}
