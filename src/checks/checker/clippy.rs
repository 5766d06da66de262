//! `cargo clippy`: every Cargo project's linter, over the whole package (tests and benches
//! included, `--all-targets`) in the mirror, findings anywhere in it.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::package;
use crate::checks::tools::Ran;
use crate::project::config::Kind;
use crate::project::detect::Lang;

pub static CHECKER: Checker = Checker {
    name: "clippy",
    files: Files::Lang(Lang::Rust),
    kind: Kind::Lint,
    uses: Uses::Always,
    batch: Batch::Package,
    locate: Some(|l| l.program("cargo")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let project = match call.project() {
        Ok(p) => p,
        Err(e) => return e,
    };
    let overlays = package::overlays(call);
    match package::clippy(
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
