//! The `apply` pipeline: patch → plan → stage → decide → switch → report.
//!
//! Three modes share it: the working tree only (default), `--commit` (a commit on HEAD, then the
//! working tree and the index entries of the patched files), and `--branch NAME` (a commit on
//! another branch, no working tree involved). Exit codes follow from the report: invalid input
//! anywhere in the batch is 3 (it wins over failed edits, docs/report.md), a failed edit is 2, an
//! environment problem (a file or ref that moved, a lock, a failed write) is 4. In every case but
//! success nothing user-visible was changed.

use std::path::PathBuf;

use crate::checks::{self, CheckFile};
use crate::error::Error;
use crate::patch::Patch;
use crate::plan::{self, record::Record};
use crate::repo::Repo;
use crate::report::{Report, Status};
use crate::txn::journal::Mode;
use crate::txn::{commit, history, lock, recover, run};

#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Where to look for the repository.
    pub dir: PathBuf,
    pub dry_run: bool,
    pub lenient: bool,
    /// Commit on the current branch (or detached HEAD).
    pub commit: bool,
    /// Commit on this branch instead, leaving the working tree, index and HEAD alone.
    pub branch: Option<String>,
    /// The commit message (else the patch's `message`, else a generated summary).
    pub message: Option<String>,
    /// The checks to run on the patched files (`None`: `--checks none`).
    pub checks: Option<checks::Options>,
    /// `--verify build,test,typecheck` (`None`: no verify).
    pub verify: Option<crate::verify::run::Options>,
}

impl ApplyOptions {
    fn mode(&self) -> Mode {
        match (&self.branch, self.commit) {
            (Some(_), _) => Mode::Branch,
            (None, true) => Mode::Commit,
            (None, false) => Mode::Worktree,
        }
    }
}

/// Applies a parsed patch; `Err` when the run could not start (no repository, a lock, a merge in
/// progress); every later failure is in the report.
pub fn apply(patch: &Patch, opts: &ApplyOptions) -> Result<Report, Error> {
    let repo = Repo::discover(&opts.dir)?;
    let mode = opts.mode();
    if mode != Mode::Branch {
        repo.require_workdir()?;
    }
    lock::check_state(&repo.git)?;
    // A run that writes nothing (a rejected or invalid patch, a dry run) must not write into .git
    // either, so the mutex is taken only when an interrupted transaction needs recovering first,
    // or once the plan is known to be applied. Write-back and the ref CAS verify everything the
    // plan read, so nothing is lost by planning before the lock.
    let mut mutex = None;
    let mut recovered = Vec::new();
    if recover::pending(&repo.git, &repo.git_dir) {
        mutex = Some(lock::acquire(&repo.git_dir)?);
        recovered = recover::recover_all(&repo.git, &repo.git_dir)?;
    }

    // Where the patch applies: the ref to move and the commit under it.
    let (refname, old_tip) = match (&opts.branch, mode) {
        (Some(name), _) => {
            let refname = branch_refname(name)?;
            lock::check_branch_free(&repo.git, &refname)?;
            let tip = repo.git.refname_to_id(&refname).ok();
            (Some(refname), tip)
        }
        (None, Mode::Commit) => {
            lock::check_index(&repo.git_dir)?;
            let (name, tip) = commit::head_target(&repo.git)?;
            (Some(name), tip)
        }
        _ => (None, None),
    };
    let head = repo.git.head().ok().and_then(|h| h.target());
    let base_oid = match mode {
        // A new branch starts from HEAD.
        Mode::Branch => old_tip.or(head),
        Mode::Commit => old_tip,
        Mode::Worktree => head,
    };
    let base = match base_oid {
        Some(o) => Some(repo.git.find_commit(o).map_err(Error::git)?),
        None => None,
    };

    let mut record = Record::load(&repo.git_dir);
    let base_tree = match &base {
        Some(c) => Some(c.tree().map_err(Error::git)?),
        None => None,
    };
    let empty_tree;
    let source = match mode {
        Mode::Branch => {
            let tree = match &base_tree {
                Some(t) => t,
                None => {
                    let oid = repo
                        .git
                        .treebuilder(None)
                        .and_then(|b| b.write())
                        .map_err(Error::git)?;
                    empty_tree = repo.git.find_tree(oid).map_err(Error::git)?;
                    &empty_tree
                }
            };
            plan::Source::Tree {
                repo: &repo.git,
                tree,
            }
        }
        _ => plan::Source::WorkTree,
    };
    crate::timing::mark("repository opened");
    let mut plan = plan::plan(
        patch,
        &repo.roots,
        &source,
        &record,
        plan::Options {
            lenient: opts.lenient,
            history: Some(plan::History {
                repo: &repo.git,
                git_dir: &repo.git_dir,
                base: base_oid,
                worktree: mode != Mode::Branch,
            }),
        },
    );
    crate::timing::mark("planned");
    let mut report = Report::from_plan(&plan, &patch.source);
    report.root = Some(repo.roots.root.clone());
    crate::timing::mark("report built");
    for r in &recovered {
        report.notes.push(format!(
            "note: finished an interrupted transaction ({}): {}",
            r.id,
            match r.outcome {
                recover::Direction::RolledBack => "rolled back",
                recover::Direction::RolledForward => "rolled forward",
            }
        ));
    }

    if plan.has_invalid() {
        report.mark_unwritten("other edits of the batch are invalid");
        report.fail(&Error::InvalidEdits {
            count: plan.outcomes.iter().filter(|o| o.invalid).count(),
            total: plan.outcomes.len(),
        });
        return Ok(report);
    }
    if plan.has_failed() {
        report.status = Status::Rejected;
        report.mark_unwritten("other edits of the batch failed");
        return Ok(report);
    }
    if plan.changes.is_empty() {
        // Every edit was already applied: nothing to stage, commit or write.
        report.status = if opts.dry_run {
            Status::DryRun
        } else {
            Status::Applied
        };
        return Ok(report);
    }
    // Read once: checks and verify share it, and a bad file is reported before either runs.
    let config = if opts.checks.is_some() || opts.verify.is_some() {
        crate::project::config::Config::load(&repo.roots.root)?
    } else {
        crate::project::config::Config::default()
    };
    if let Some(check_opts) = &opts.checks {
        config.check_names(check_opts.only.as_deref())?;
        let files = check_files(&repo, &plan);
        let removed = removed_files(&plan);
        let ctx = checks::run::Ctx {
            repo_root: &repo.roots.root,
            git_dir: &repo.git_dir,
            config: &config,
            opts: check_opts,
            removed: &removed,
        };
        let outcome = checks::run::run(&ctx, &files);
        crate::timing::mark("checked");
        for (rel, bytes) in outcome.fixed {
            plan.set_after(&rel, bytes);
        }
        report.checks = outcome.reports;
        if outcome.blocked {
            report.status = Status::ChecksFailed;
            report.mark_unwritten("the checks failed");
            return Ok(report);
        }
    }
    if let Some(vopts) = &opts.verify
        && !vopts.steps.is_empty()
    {
        let projects = projects_of(&repo, &plan);
        // The working tree is the baseline: only failures the patch introduced block.
        let changes: Vec<crate::verify::run::Change> = plan
            .changes
            .iter()
            .map(|c| crate::verify::run::Change {
                rel: &c.rel,
                before: c.before.bytes(),
                after: c.after.bytes(),
            })
            .collect();
        let (reports, blocked) = crate::verify::run::run(
            &repo.roots.root,
            &repo.git_dir,
            &config,
            &projects,
            crate::verify::run::Subject::Patch(&changes),
            vopts,
        );
        report.verify = reports;
        if blocked {
            report.status = Status::ChecksFailed;
            report.mark_unwritten("verify failed");
            return Ok(report);
        }
    }
    report.list_files(&plan);
    if opts.dry_run {
        report.status = Status::DryRun;
        return Ok(report);
    }
    let _mutex = recover::lock_for_switch(&repo.git, &repo.git_dir, mutex, "patch")?;

    let message = opts
        .message
        .clone()
        .or_else(|| patch.message.clone())
        .unwrap_or_else(|| commit::summary_message(&plan.files));
    let mut record_lines = plan.digests.clone();
    if let Some(d) = &plan.patch_digest {
        record_lines.push(Record::patch_line(d, &plan.final_state));
    }
    let history = history::Meta {
        kind: history::Kind::Apply,
        undoes: None,
        message: message.clone(),
        moves: plan
            .files
            .iter()
            .filter_map(|f| {
                Some(history::Move {
                    from: f.from.clone()?,
                    to: f.path.clone(),
                })
            })
            .collect(),
        time: history::now_secs(),
    };
    let done = run::run(
        &repo,
        run::Request {
            mode,
            changes: &plan.changes,
            base: base.as_ref(),
            refname: refname.as_deref(),
            old_tip,
            message: &message,
            commit_as: Vec::new(),
            record_lines,
            record: Some(&mut record),
            history,
        },
    );
    let done = match done {
        Ok(d) => d,
        Err(run::Failed::Start(e)) => return Err(e),
        Err(run::Failed::Switch(e)) => {
            report.mark_unwritten("the transaction was stopped (see error)");
            report.fail(&e);
            return Ok(report);
        }
    };
    if mode != Mode::Branch {
        // As `git apply` does: a folder that deleted or moved files left empty goes too.
        crate::txn::remove_emptied_dirs(&repo.roots, &plan.changes);
    }
    report.notes.extend(done.notes);
    report.patch_id = Some(done.id);
    report.status = if mode == Mode::Worktree {
        Status::Applied
    } else {
        Status::Committed
    };
    report.commit = done.commit.map(|o| o.to_string());
    report.branch = refname
        .as_deref()
        .and_then(|r| r.strip_prefix("refs/heads/"))
        .map(str::to_string);
    Ok(report)
}

/// The files the checkers look at: every file the plan leaves with content (a moved file is
/// compared with its content before the move).
fn check_files(repo: &Repo, plan: &plan::Plan) -> Vec<CheckFile> {
    plan.files
        .iter()
        .filter_map(|f| {
            Some(CheckFile {
                rel: f.path.clone(),
                real: repo.roots.abs(&f.path),
                before: f.before.clone(),
                after: f.after.clone()?,
                from: f.from.clone(),
            })
        })
        .collect()
}

/// The paths the plan removes (deleted files, and the old paths of moved ones), with their
/// original content.
fn removed_files(plan: &plan::Plan) -> Vec<(String, std::sync::Arc<Vec<u8>>)> {
    // A moved file is gone from its old path too: left there, a package checker would see both
    // copies (Go: every definition "redeclared in this block").
    plan.files
        .iter()
        .filter_map(|f| match (&f.after, &f.from) {
            (None, _) => Some((f.path.clone(), f.before.clone()?)),
            (Some(_), Some(from)) => Some((from.clone(), f.before.clone()?)),
            (Some(_), None) => None,
        })
        .collect()
}

/// The projects (one per language and nearest marker) that the patched files belong to.
fn projects_of(repo: &Repo, plan: &plan::Plan) -> Vec<crate::project::detect::Project> {
    let mut out: Vec<crate::project::detect::Project> = Vec::new();
    for c in &plan.changes {
        let Some(lang) = crate::project::detect::lang_of(&c.rel) else {
            continue;
        };
        if let Some(p) = crate::project::detect::project_of(&repo.roots.root, &c.rel, lang)
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

/// `refs/heads/NAME`, if NAME is a branch name `git check-ref-format --branch` accepts: a valid
/// ref name that does not start with `-` and is not `HEAD`. `@{…}` forms (`@{u}`, `@{-1}`) are
/// refused by the ref name rules: name the branch itself. A full `refs/heads/NAME` is taken as
/// that branch.
fn branch_refname(name: &str) -> Result<String, Error> {
    let short = name.strip_prefix("refs/heads/").unwrap_or(name);
    let refname = format!("refs/heads/{short}");
    let reserved = short.starts_with('-') || short == "HEAD";
    if reserved || name.starts_with("refs/") && !name.starts_with("refs/heads/") {
        return Err(bad_branch(name));
    }
    if !git2::Reference::is_valid_name(&refname) {
        return Err(bad_branch(name));
    }
    Ok(refname)
}

fn bad_branch(name: &str) -> Error {
    Error::Usage {
        message: format!("`{name}` is not a valid branch name"),
        help: "use a name like `bot/fixups`: not `HEAD`, not starting with `-`, no `..`, `@{`, \
               spaces, `~^:?*[\\` or control characters, no component starting with `.` or \
               ending with `.lock` (`git check-ref-format --branch NAME` says whether git takes it)"
            .into(),
    }
}
