//! The built-in dangling-reference check (`checks::references`): a definition the patch removes
//! or renames whose old name is still used elsewhere. Needs no tool; on unless disabled.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::exec::Ran;
use crate::checks::references;
use crate::project::config::Kind;

pub static CHECKER: Checker = Checker {
    name: "references",
    files: Files::Any(references::applies),
    kind: Kind::Lint,
    uses: Uses::BuiltIn,
    batch: Batch::Patch,
    locate: None,
    run,
};

fn run(call: &Call) -> Ran<Out> {
    match references::check(call.repo_root, call.files, call.removed) {
        Ok(f) => Ran::Done(Out::Package(f)),
        Err(e) => Ran::Error(e),
    }
}
