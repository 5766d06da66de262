//! The `apply` pipeline: patch → plan → decision → write-back → report.
//!
//! Exit codes follow from the report: invalid input anywhere in the batch is 3 (it wins over
//! failed edits, DESIGN §1), a failed edit is 2, an environment problem (concurrent modification,
//! a write that failed) is 4. In every case but success nothing was written.

use std::path::PathBuf;

use crate::error::{Error, Exit};

use crate::patch::Patch;
use crate::plan::{self, record::Record};
use crate::repo::Repo;
use crate::report::{Report, Status};

#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Where to look for the repository.
    pub dir: PathBuf,
    pub dry_run: bool,
    pub lenient: bool,
}

/// Applies a parsed patch; `Err` only when no repository could be opened.
pub fn apply(patch: &Patch, opts: &ApplyOptions) -> Result<Report, Error> {
    let repo = Repo::discover(&opts.dir)?;
    let mut record = Record::load(&repo.git_dir);
    let plan = plan::plan(
        patch,
        &repo.roots,
        &record,
        plan::Options {
            lenient: opts.lenient,
        },
    );
    let mut report = Report::from_plan(&plan, &patch.source);

    if plan.has_invalid() {
        report.fail(&Error::InvalidEdits {
            count: plan.outcomes.iter().filter(|o| o.invalid).count(),
            total: plan.outcomes.len(),
        });
        return Ok(report);
    }
    if plan.has_failed() {
        report.status = Status::Rejected;
        report.exit = Exit::EditFailed;
        return Ok(report);
    }
    if opts.dry_run {
        report.status = Status::DryRun;
        return Ok(report);
    }
    if let Err(e) = crate::txn::write_back(&repo.roots, &plan.changes) {
        report.fail(&e);
        return Ok(report);
    }
    if let Err(e) = record.append(&plan.digests) {
        // The edits landed; only a retry's `already_applied` is weakened.
        report.notes.push(format!(
            "warning: could not update the re-run record in {}: {e}",
            repo.git_dir.join("patchgate").display()
        ));
    }
    report.status = Status::Applied;
    Ok(report)
}
