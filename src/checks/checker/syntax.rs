//! The built-in syntax gate (`crate::syntax`): every edited Python, JavaScript, TypeScript/TSX,
//! Rust, Go, JSON, TOML and YAML file is parsed in-process, and a syntax error the patch
//! introduced blocks. Needs no tool; on unless disabled (`[checkers.syntax] disabled = true`).

use super::{Batch, Call, Checker, FileOut, Files, Out, Uses};
use crate::checks::exec::Ran;
use crate::checks::finding::{RawFinding, Severity};
use crate::project::config::Kind;
use crate::syntax::languages::Language;

pub static CHECKER: Checker = Checker {
    name: "syntax",
    files: Files::Any(|rel| Language::from_path(rel).is_some()),
    kind: Kind::Lint,
    uses: Uses::BuiltIn,
    batch: Batch::PerFile,
    locate: None,
    run,
};

fn run(call: &Call) -> Ran<Out> {
    Ran::Done(Out::Files(
        call.files
            .iter()
            .map(|i| {
                // A baseline run has nothing to compare with; the gate compares itself.
                let before = if call.baseline { None } else { i.before };
                match crate::syntax::new_errors(i.rel, before, i.text()) {
                    None => FileOut::Skipped("not parsed (too large or too slow to parse)".into()),
                    Some(errors) => FileOut::Findings(
                        errors
                            .into_iter()
                            .map(|e| RawFinding {
                                path: i.rel.to_string(),
                                line: e.line,
                                column: e.column,
                                rule: "syntax".into(),
                                severity: Severity::Error,
                                message: if e.near {
                                    format!("{} (near here) — `{}`", e.message, e.snippet)
                                } else {
                                    format!("{} — `{}`", e.message, e.snippet)
                                },
                            })
                            .collect(),
                    ),
                }
            })
            .collect(),
    ))
}
