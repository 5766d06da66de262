//! The built-in dangling-reference check: a definition the patch removes or renames whose old
//! name is still used elsewhere (`checks::references`), and a JS/TS or Python import whose module
//! the patch moves or deletes (`checks::imports`). Needs no tool; on unless disabled.

use super::{Batch, Call, Checker, Files, Out, Uses};
use crate::checks::exec::Ran;
use crate::checks::{imports, references};
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
    let tracked = references::Tracked::new(call.repo_root, call.context);
    let names = references::check(call.files, call.removed, &tracked);
    let modules = imports::check(
        call.repo_root,
        call.files,
        call.removed,
        call.context,
        call.patched,
        &tracked,
    );
    // A state whose context could not be made was read as the working tree's: say so rather
    // than judge the wrong files.
    if let Some(e) = call.context.failed() {
        return Ran::Error(e);
    }
    match (names, modules) {
        (Ok(mut f), Ok(m)) => {
            f.extend(m);
            Ran::Done(Out::Package(f))
        }
        (Err(e), _) | (_, Err(e)) => Ran::Error(e),
    }
}
