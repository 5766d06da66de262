//! `apply`: patch → plan → gate → switch → report.
//!
//! Three modes share it: the working tree only (default), `commit` (a commit on HEAD, then the
//! working tree and the index entries of the patched files), and `branch` (a commit on another
//! branch, no working tree involved). Exit codes follow from the report: invalid input anywhere
//! in the batch is 3 (it wins over failed edits, docs/report.md), a failed edit is 2, an
//! environment problem (a file or ref that moved, a lock, a failed write) is 4. In every case but
//! success nothing user-visible was changed.

use git2::Oid;
use schemars::JsonSchema;
use serde::Deserialize;

use super::Context;
use crate::checks::{self, CheckFile};
use crate::error::Error;
use crate::patch::{InputFormat, InputOptions, Patch};
use crate::plan::{self, Plan, record::Record};
use crate::project::config::Config;
use crate::repo::Repo;
use crate::report::{Report, Status};
use crate::txn::journal::Mode;
use crate::txn::{commit, history, lock, recover, run};

/// Everything `apply` takes besides the patch itself (a file on the command line, a JSON
/// object or text for MCP: each adapter's own).
#[derive(Debug, Clone, Default, clap::Args, Deserialize, JsonSchema)]
pub struct Request {
    /// The patch's format: a patchgate YAML/JSON patch, codex's `*** Begin Patch` envelope,
    /// Aider's SEARCH/REPLACE blocks or a unified diff (`auto`: told from the content).
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    #[serde(default, deserialize_with = "super::null_as_default")]
    #[schemars(with = "Option<InputFormat>", extend("default" = "auto"))]
    pub input: InputFormat,
    /// A unified diff's strip level, as `git apply -p N`: N leading folders are dropped from every
    /// file name (default: the `a/`/`b/` prefix of a git diff; guessed for a plain `diff -u`).
    #[arg(short = 'p', long = "strip", value_name = "N")]
    pub strip: Option<usize>,
    /// A unified diff's hunks without context that only add lines are placed by their line
    /// number, as `git apply --unidiff-zero` (the report says so); without it they are refused.
    #[arg(long)]
    #[serde(default)]
    pub unidiff_zero: bool,
    /// A unified diff's file names are under this folder of the repository (after `strip`), as
    /// `git apply --directory`: for a diff made inside a folder of the repository.
    #[arg(long, value_name = "ROOT")]
    pub directory: Option<String>,
    /// Verify every edit and run the checks, and show the diff; write nothing.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
    /// Also apply a unique match that differs only in whitespace or typographic characters,
    /// re-indenting new_string (fuzzy candidates are never applied).
    #[arg(long)]
    #[serde(default)]
    pub lenient: bool,
    /// Commit the patched files on the current branch (or detached HEAD); the working tree and
    /// the index entries of those files then match the commit.
    #[arg(long, conflicts_with = "branch")]
    #[serde(default)]
    pub commit: bool,
    /// Commit on this branch (created from HEAD if missing) without touching the working tree,
    /// the index or HEAD.
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
    /// The commit message (default: the patch's `message`, else a summary).
    #[arg(short = 'm', long = "message", value_name = "MSG")]
    pub message: Option<String>,
    /// Run the formatters in write mode on the patched files before the gate; the formatted
    /// content is what gets written or committed.
    #[arg(long)]
    #[serde(default)]
    pub fix: bool,
    /// Also run the projects' own build / test / typecheck on the patched state (comma-separated
    /// subset of `build,test,typecheck`); a failure the patch introduced blocks.
    #[arg(long, value_name = "LIST")]
    pub verify: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub check: super::check::Settings,
}

impl Request {
    /// How a unified diff is read; `cwd_prefix` is where the command runs in the work tree.
    pub fn input_options(&self, cwd_prefix: Option<String>) -> InputOptions {
        InputOptions {
            strip: self.strip,
            unidiff_zero: self.unidiff_zero,
            directory: self.directory.clone(),
            cwd_prefix,
        }
    }

    /// Whether any option of a unified diff is set.
    pub fn has_diff_options(&self) -> bool {
        self.strip.is_some() || self.unidiff_zero || self.directory.is_some()
    }

    fn mode(&self) -> Mode {
        match (&self.branch, self.commit) {
            (Some(_), _) => Mode::Branch,
            (None, true) => Mode::Commit,
            (None, false) => Mode::Worktree,
        }
    }

    /// The checks and verify steps to run, validated before anything is read.
    fn gates(&self, progress: bool) -> Result<Gates, Error> {
        if self.commit && self.branch.is_some() {
            return Err(Error::Usage {
                message: "commit and branch cannot be used together".into(),
                help: "commit on the current branch, or on another one with branch".into(),
            });
        }
        let checks = self.check.options(self.fix, progress)?;
        let verify = match &self.verify {
            Some(list) => Some(crate::verify::run::Options {
                steps: crate::verify::run::Step::parse_list(list).map_err(|m| Error::Usage {
                    message: m,
                    help: "e.g. --verify build,test".into(),
                })?,
                require_tools: self.check.require_tools,
                timeout: None,
                offline: self.check.offline,
            }),
            None => None,
        };
        Ok(Gates {
            checks,
            verify,
            branch: None,
        })
    }
}

/// What judges the patched state: the checks (`None`: `checks = none`) and verify's steps.
struct Gates {
    checks: Option<checks::Options>,
    verify: Option<crate::verify::run::Options>,
    /// `--branch`: the files whose content on the branch differs from the working tree's
    /// ([`super::branch_state`]), for both gates; `None` in the other modes.
    branch: Option<checks::Context>,
}

/// Where the patch applies: the ref to move (commit modes), the commit under it, and the commit
/// the plan reads from.
struct Target {
    mode: Mode,
    refname: Option<String>,
    old_tip: Option<Oid>,
    base: Option<Oid>,
}

/// Applies a parsed patch; `Err` when the run could not start (no repository, a lock, a merge in
/// progress, an invalid option); every later failure is in the report.
pub fn run(request: &Request, patch: &Patch, ctx: &Context) -> Result<Report, Error> {
    run_in(request, patch, ctx, Repo::discover(&ctx.dir))
}

/// [`run`] in the repository found from `ctx.dir` already (or the error of looking for it): the
/// command line finds it while the patch is parsed. An invalid option is still told first.
pub fn run_in(
    request: &Request,
    patch: &Patch,
    ctx: &Context,
    repo: Result<Repo, Error>,
) -> Result<Report, Error> {
    let mut gates = request.gates(ctx.progress)?;
    let repo = repo?;
    let mode = request.mode();
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
    let target = target(&repo, request, mode)?;
    let mut record = Record::load(&repo.git_dir);
    crate::timing::mark("repository opened");
    let mut plan = plan_on(&repo, patch, &target, &record, request.lenient)?;
    crate::timing::mark("planned");
    let mut report = Report::from_plan(&plan, &patch.source);
    report.root = Some(repo.roots.root.clone());
    crate::timing::mark("report built");
    report.notes.extend(recovered.iter().map(recovered_note));

    if !judge_plan(&plan, &mut report, request.dry_run) {
        return Ok(report);
    }
    if !request.dry_run && mode == Mode::Worktree {
        // For the working-tree transaction's staging thread (the only one that stages on a
        // thread of its own): opened while the checks run.
        repo.open_second_ahead();
    }
    if mode == Mode::Branch && (gates.checks.is_some() || gates.verify.is_some()) {
        // The gates judge the branch, not the working tree: whatever differs between them is
        // laid over (`branch_state`). Only for a plan that reaches them, and listed only if one
        // of them reads it.
        let context = super::branch_state::context(&repo, target.base)?;
        if let Some(opts) = gates.checks.as_mut() {
            opts.context = context.clone();
        }
        gates.branch = Some(context);
    }
    let passed = gate(&repo, &mut plan, &mut report, &gates)?;
    // A check that could not list the branch's files judged nothing of the branch: as strict as
    // when they were listed before the gates, the run stops (a checker's `error` alone would not
    // block, and the branch would be made unjudged).
    if let Some(e) = gates.branch.as_ref().and_then(checks::Context::failed) {
        return Err(super::branch_state::unlisted(&e));
    }
    if !passed {
        return Ok(report);
    }
    if request.dry_run {
        report.list_files(&plan);
        report.status = Status::DryRun;
        return Ok(report);
    }
    let mutex = recover::lock_for_switch(&repo.git, &repo.git_dir, mutex, "patch")?;
    // The commit message (or the history's): the request's, the patch's, or a summary.
    let message = request.message.clone().or_else(|| patch.message.clone());
    let report = switch(
        &repo,
        message,
        &plan,
        &target,
        &mut record,
        report,
        ctx.json,
    );
    drop(mutex);
    crate::exit::dispose((plan, record, repo));
    report
}

fn recovered_note(r: &recover::Recovered) -> String {
    format!(
        "note: finished an interrupted transaction ({}): {}",
        r.id,
        match r.outcome {
            recover::Direction::RolledBack => "rolled back",
            recover::Direction::RolledForward => "rolled forward",
        }
    )
}

/// The ref to move and the commit under it, per mode.
fn target(repo: &Repo, request: &Request, mode: Mode) -> Result<Target, Error> {
    let (refname, old_tip) = match (&request.branch, mode) {
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
    let base = match mode {
        // A new branch starts from HEAD.
        Mode::Branch => old_tip.or(head),
        Mode::Commit => old_tip,
        Mode::Worktree => head,
    };
    Ok(Target {
        mode,
        refname,
        old_tip,
        base,
    })
}

/// Every edit matched and applied in memory: against the working tree, or (`branch`) against
/// the base commit's tree (an empty one for an unborn branch).
fn plan_on(
    repo: &Repo,
    patch: &Patch,
    target: &Target,
    record: &Record,
    lenient: bool,
) -> Result<Plan, Error> {
    let tree = match (target.mode, target.base) {
        (Mode::Branch, Some(oid)) => Some(
            repo.git
                .find_commit(oid)
                .and_then(|c| c.tree())
                .map_err(Error::git)?,
        ),
        (Mode::Branch, None) => {
            let oid = repo
                .git
                .treebuilder(None)
                .and_then(|b| b.write())
                .map_err(Error::git)?;
            Some(repo.git.find_tree(oid).map_err(Error::git)?)
        }
        _ => None,
    };
    let source = match &tree {
        Some(tree) => plan::Source::Tree {
            repo: &repo.git,
            tree,
        },
        None => plan::Source::WorkTree,
    };
    Ok(plan::plan(
        patch,
        &repo.roots,
        &source,
        record,
        plan::Options {
            lenient,
            history: Some(plan::History {
                repo: &repo.git,
                git_dir: &repo.git_dir,
                base: target.base,
                worktree: target.mode != Mode::Branch,
                patches: &|| crate::txn::history::past_patches(&repo.git_dir),
            }),
        },
    ))
}

/// The plan's own verdict: `false` (the report is final) for invalid input, a failed edit, or
/// nothing left to change.
fn judge_plan(plan: &Plan, report: &mut Report, dry_run: bool) -> bool {
    if plan.has_invalid() {
        report.mark_unwritten("other edits of the batch are invalid");
        report.fail(&Error::InvalidEdits {
            count: plan.outcomes.iter().filter(|o| o.invalid).count(),
            total: plan.outcomes.len(),
        });
        return false;
    }
    if plan.has_failed() {
        report.status = Status::Rejected;
        report.mark_unwritten("other edits of the batch failed");
        return false;
    }
    if plan.changes.is_empty() {
        // Every edit was already applied: nothing to stage, commit or write.
        report.status = if dry_run {
            Status::DryRun
        } else {
            Status::Applied
        };
        return false;
    }
    true
}

/// The checks, then verify, on the patched state (`--fix`'s output goes into the plan): `false`
/// when one blocks (the report then says which).
fn gate(repo: &Repo, plan: &mut Plan, report: &mut Report, gates: &Gates) -> Result<bool, Error> {
    // Read once: checks and verify share it, and a bad file is reported before either runs.
    let config = if gates.checks.is_some() || gates.verify.is_some() {
        Config::load(&repo.roots.root)?
    } else {
        Config::default()
    };
    if let Some(opts) = &gates.checks {
        config.check_names(opts.only.as_deref())?;
        let files = check_files(repo, plan);
        let removed = removed_files(plan);
        let patched: Vec<checks::ContextFile> = files
            .iter()
            .map(|f| (f.rel.clone(), Some(f.after.clone())))
            .chain(removed.iter().map(|(rel, _)| (rel.clone(), None)))
            .collect();
        let ctx = checks::run::Ctx {
            repo_root: &repo.roots.root,
            git_dir: &repo.git_dir,
            config: &config,
            opts,
            removed: &removed,
            patched: &patched,
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
            return Ok(false);
        }
    }
    if let Some(opts) = &gates.verify
        && !opts.steps.is_empty()
    {
        let projects = projects_of(repo, plan);
        // The working tree (`--branch`: the branch's base) is the baseline: only failures the
        // patch introduced block.
        let mut changes: Vec<crate::verify::run::Change> = plan
            .changes
            .iter()
            .map(|c| crate::verify::run::Change {
                rel: &c.rel,
                before: c.before.bytes(),
                after: c.after.bytes(),
            })
            .collect();
        let subject = match &gates.branch {
            Some(context) => {
                let patched: std::collections::HashSet<&str> =
                    plan.changes.iter().map(|c| c.rel.as_str()).collect();
                let context = context
                    .files()
                    .map_err(|e| super::branch_state::unlisted(&e))?;
                changes.extend(
                    context
                        .iter()
                        .filter(|(rel, _)| !patched.contains(rel.as_str()))
                        .map(|(rel, content)| {
                            let bytes = content.as_deref().map(Vec::as_slice);
                            crate::verify::run::Change {
                                rel,
                                before: bytes,
                                after: bytes,
                            }
                        }),
                );
                crate::verify::run::Subject::Branch
            }
            None => crate::verify::run::Subject::Patch,
        };
        let (reports, blocked) = crate::verify::run::run(
            &repo.roots.root,
            &repo.git_dir,
            &config,
            &projects,
            subject(&changes),
            opts,
        );
        report.verify = reports;
        if blocked {
            report.status = Status::ChecksFailed;
            report.mark_unwritten("verify failed");
            return Ok(false);
        }
    }
    Ok(true)
}

/// The verified plan written as one transaction (worktree, commit or branch), recorded in the
/// history and the re-run record. `message`: the commit's (or the history's), a summary when
/// `None`; `json`: the report is printed as JSON ([`Context::json`]).
fn switch(
    repo: &Repo,
    message: Option<String>,
    plan: &Plan,
    target: &Target,
    record: &mut Record,
    mut report: Report,
    json: bool,
) -> Result<Report, Error> {
    let message = message.unwrap_or_else(|| commit::summary_message(&plan.files));
    let mut record_lines = plan.digests.clone();
    if let Some(d) = &plan.patch_digest {
        record_lines.push(Record::patch_line(d, &plan.final_state));
    }
    let base = match target.base {
        Some(o) => Some(repo.git.find_commit(o).map_err(Error::git)?),
        None => None,
    };
    let req = run::Request {
        mode: target.mode,
        changes: &plan.changes,
        base: base.as_ref(),
        refname: target.refname.as_deref(),
        old_tip: target.old_tip,
        message: &message,
        commit_as: Vec::new(),
        record_lines,
        record: Some(record),
        history: history_meta(plan, message.clone()),
        // Hashed here, on every core, before the diffs below take them.
        hashed: Some(crate::txn::stage::hash(&plan.changes)),
    };
    // The report's diffs (a large part of a big batch's work) are computed while the
    // transaction runs: they need only the plan, and the transaction spends much of its time
    // waiting on the file system. The report's two large fields are rendered as JSON there too
    // (used if they do not change; see `report::rendered`). On this one thread: shared with the
    // thread pool, the diffs of a large batch held both cores while the switch waited for them.
    let edits = &report.edits;
    let (done, (files, files_json, edits_json)) = std::thread::scope(|s| {
        let files = s.spawn(|| {
            use crate::report::rendered::render_ahead;
            let files = crate::report::file_reports_with(plan, false);
            if !json {
                return (files, None, None);
            }
            let files_size: usize = files.iter().map(|f| 256 + f.diff.len()).sum();
            let edits_size: usize = edits.iter().map(|e| 512 + e.text_len()).sum();
            let files_json = render_ahead(&files, files_size);
            (files, files_json, render_ahead(&**edits, edits_size))
        });
        let done = run::run(repo, req);
        let files = files
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (done, files)
    });
    report.files = files.into();
    report.files.keep(files_json);
    report.edits.keep(edits_json);
    let done = match done {
        Ok(d) => d,
        Err(run::Failed::Start(e)) => return Err(e),
        Err(run::Failed::Switch(e)) => {
            report.mark_unwritten("the transaction was stopped (see error)");
            report.fail(&e);
            return Ok(report);
        }
    };
    if target.mode != Mode::Branch {
        // As `git apply` does: a folder that deleted or moved files left empty goes too.
        crate::txn::remove_emptied_dirs(&repo.roots, &plan.changes);
    }
    report.notes.extend(done.notes);
    report.patch_id = Some(done.id);
    report.status = if target.mode == Mode::Worktree {
        Status::Applied
    } else {
        Status::Committed
    };
    report.commit = done.commit.map(|o| o.to_string());
    report.branch = target
        .refname
        .as_deref()
        .and_then(|r| r.strip_prefix("refs/heads/"))
        .map(str::to_string);
    Ok(report)
}

fn history_meta(plan: &Plan, message: String) -> history::Meta {
    history::Meta {
        kind: history::Kind::Apply,
        undoes: None,
        message,
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
    }
}

/// The files the checkers look at: every file the plan leaves with content (a moved file is
/// compared with its content before the move).
fn check_files(repo: &Repo, plan: &Plan) -> Vec<CheckFile> {
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
fn removed_files(plan: &Plan) -> Vec<(String, std::sync::Arc<Vec<u8>>)> {
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
fn projects_of(repo: &Repo, plan: &Plan) -> Vec<crate::project::detect::Project> {
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
