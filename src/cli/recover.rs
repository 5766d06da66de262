//! `patchgate recover`: finish or undo what an interrupted run left, and say which.

use std::path::PathBuf;

use serde::Serialize;

use crate::cli::{OutputFormat, emit, print_error};
use crate::error::Error;
use crate::repo::Repo;
use crate::txn::{lock, recover};

#[derive(Serialize)]
struct RecoverReport {
    version: u32,
    status: &'static str,
    transactions: Vec<recover::Recovered>,
}

pub(super) fn run(dir: PathBuf, format: OutputFormat) -> i32 {
    let result = (|| -> Result<Vec<recover::Recovered>, Error> {
        let repo = Repo::discover(&dir)?;
        let _mutex = lock::acquire(&repo.git_dir)?;
        recover::recover_all(&repo.git, &repo.git_dir)
    })();
    let done = match result {
        Ok(d) => d,
        Err(e) => return print_error(&e, format),
    };
    let report = RecoverReport {
        version: 1,
        status: if done.is_empty() {
            "clean"
        } else {
            "recovered"
        },
        transactions: done,
    };
    match format {
        OutputFormat::Json => emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        )),
        _ => {
            let mut out = String::new();
            if report.transactions.is_empty() {
                out.push_str("nothing to recover: no interrupted transaction\n");
            }
            for t in &report.transactions {
                let what = match t.outcome {
                    recover::Direction::RolledBack => "rolled back to the state before the patch",
                    recover::Direction::RolledForward => "rolled forward to the patched state",
                };
                out.push_str(&format!("transaction {}: {what}\n", t.id));
                for p in &t.restored {
                    out.push_str(&format!("  restored {p}\n"));
                }
                for p in &t.left_alone {
                    out.push_str(&format!(
                        "  left {p} as it is: it was changed after the interruption (compare it with `git diff`)\n"
                    ));
                }
            }
            emit(&out);
        }
    }
    0
}
