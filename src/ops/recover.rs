//! `recover`: finish or undo what an interrupted run left, and say which.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Context;
use crate::error::Error;
use crate::repo::Repo;
use crate::txn::{lock, recover};

/// What `recover` did: every interrupted transaction and its direction (`clean`: there was none).
#[derive(Debug, Serialize)]
pub struct Recovery {
    version: u32,
    status: &'static str,
    transactions: Vec<recover::Recovered>,
}

/// `recover` takes no options: what it does follows from the journal.
#[derive(Debug, Clone, Default, clap::Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {}

/// Brings every interrupted transaction of the repository to its old or new state, under the
/// repository's mutex.
pub fn run(_request: &Request, ctx: &Context) -> Result<Recovery, Error> {
    let repo = Repo::discover(&ctx.dir)?;
    let _mutex = lock::acquire(&repo.git_dir)?;
    let done = recover::recover_all(&repo.git, &repo.git_dir)?;
    Ok(Recovery {
        version: 1,
        status: if done.is_empty() {
            "clean"
        } else {
            "recovered"
        },
        transactions: done,
    })
}

impl Recovery {
    /// The JSON document `recover --format json` prints.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The account for a person (also the markdown one: it has no structure to add).
    pub fn render_human(&self) -> String {
        let mut out = String::new();
        if self.transactions.is_empty() {
            out.push_str("nothing to recover: no interrupted transaction\n");
        }
        for t in &self.transactions {
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
        out
    }
}
