//! Scheduling the checks: which checker runs on which files, in parallel, and what each verdict
//! is under the gate.
//!
//! Every built-in checker comes from the one table (`checker::TABLE`) through `select`, which
//! decides per file whether the file's project uses it. Jobs follow the checker's [`Batch`]: one
//! per file, one per project batch (files sharing a configuration directory), or one per package;
//! custom checkers from `.patchgate.toml` are one job each. Within a phase the jobs run on the
//! lanes of `schedule` (external tools first, the built-ins beside them). With `--fix`, two
//! phases: formatters first (their output becomes the content), then linters on that content;
//! without it, all together.
//!
//! The baseline (the same checker on the original content) is computed only for files with
//! findings (or formatter hunks), so a clean patch costs one run per checker, and it is cached by
//! content (`baseline`), the same way for every batching kind. A checker may compute it along
//! with its run (the node bridge checks an original in the same process when the patched text
//! needs it) and put it in the cache, where the baseline step then finds it. A package checker's findings in
//! files the patch did not touch are compared with the package's baseline as they are (the file
//! is unchanged, so no line mapping is needed); new ones are reported under that file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::checker::{Batch, Call, Checker, FileOut, Input, Locate, Out, Uses};
use super::exec::Ran;
use super::finding::{Finding, RawFinding};
use super::gate::{self, LineMap};
use super::schedule::{self, Class};
use super::select::{self, Considered, Verdict};
use super::{CheckFile, CheckReport, Gate, Options, Outcome, Status, baseline, custom};
use crate::project::config::{Config, Custom, Kind};
use crate::project::detect::Project;
use crate::project::evidence::Evidence;

pub struct Ctx<'a> {
    pub repo_root: &'a Path,
    pub git_dir: &'a Path,
    pub config: &'a Config,
    pub opts: &'a Options,
    /// Files the patch deletes, with their original content (what they defined is gone).
    pub removed: &'a [(String, Arc<Vec<u8>>)],
    /// Every file the patch changes, with its new content (`None`: gone), for the package
    /// checkers to lay over their mirror when they check the patched state (see
    /// [`Call::overlays`]); empty when the state checked is the working tree itself.
    pub patched: &'a [super::ContextFile],
}

/// A file as the checkers see it.
#[derive(Clone)]
struct Item {
    rel: String,
    real: PathBuf,
    before: Option<Arc<String>>,
    text: Arc<String>,
    /// Where `before` stood, for a moved file.
    from: Option<String>,
}

impl Item {
    fn map(&self) -> LineMap {
        match &self.before {
            Some(b) => LineMap::new(b, &self.text),
            None => LineMap::all_new(&self.text),
        }
    }

    fn input(&self) -> Input<'_> {
        Input {
            rel: &self.rel,
            real: &self.real,
            text: Some(&self.text),
            before: self.before.as_deref().map(String::as_str),
            from: self.from.as_deref(),
        }
    }
}

enum Job {
    Table {
        checker: &'static Checker,
        project: Option<Project>,
        cwd: PathBuf,
        args: Vec<String>,
        items: Vec<Item>,
    },
    Custom {
        custom: Custom,
        items: Vec<Item>,
    },
}

struct JobResult {
    reports: Vec<CheckReport>,
    fixed: Vec<(String, String)>,
}

/// A whole-package checker's default timeout: its first run on a checkout builds the package
/// and its dependencies (minutes for a real crate), later ones are incremental.
const PACKAGE_TIMEOUT: Duration = Duration::from_secs(300);

impl Ctx<'_> {
    fn timeout(&self, checker: &str, kind: Kind) -> Duration {
        self.config.timeout(checker, kind, self.opts.timeout)
    }

    fn timeout_of(&self, checker: &Checker) -> Duration {
        let default = (checker.batch == Batch::Package).then_some(PACKAGE_TIMEOUT);
        self.config
            .timeout_or(checker.name, checker.kind, self.opts.timeout, default)
    }

    fn custom_enabled(&self, name: &str) -> bool {
        !self.config.disabled(name)
            && self
                .opts
                .only
                .as_ref()
                .is_none_or(|only| only.iter().any(|c| c == name))
    }
}

/// Runs every applicable checker on `files` (deleted files have nothing to check).
pub fn run(ctx: &Ctx, files: &[CheckFile]) -> Outcome {
    super::exec::package::forget_shared();
    let ev = Evidence::new(ctx.repo_root);
    let mut items = items(ctx, &ev, files);
    let for_removed = for_removed(ctx, &ev);
    crate::timing::mark("checks: checkers selected");
    let bar = progress_bar(ctx.opts.progress);
    let run_jobs = |jobs: Vec<Job>| run_jobs(ctx, &bar, jobs);

    let mut reports = Vec::new();
    let mut fixed: BTreeMap<String, String> = BTreeMap::new();
    if ctx.opts.fix {
        // Phase 1: formatters; their output is the content the linters must see.
        for r in run_jobs(jobs_for(ctx, &items, &for_removed, Kind::Format)) {
            reports.extend(r.reports);
            fixed.extend(r.fixed);
        }
        for (item, _) in &mut items {
            if let Some(t) = fixed.get(&item.rel) {
                item.text = Arc::new(t.clone());
            }
        }
        // Phase 2: linters, on the formatted content.
        for r in run_jobs(jobs_for(ctx, &items, &for_removed, Kind::Lint)) {
            reports.extend(r.reports);
        }
    } else {
        // Without --fix nothing depends on the formatters: one pool for all, so prettier and
        // eslint (a node start each) run side by side instead of one after the other.
        let mut jobs = jobs_for(ctx, &items, &for_removed, Kind::Format);
        jobs.extend(jobs_for(ctx, &items, &for_removed, Kind::Lint));
        for r in run_jobs(jobs) {
            reports.extend(r.reports);
        }
    }
    bar.finish_and_clear();
    merge_untouched(&mut reports);
    reports.sort_by(|a, b| {
        (a.path.as_str(), a.kind as u8, a.checker.as_str()).cmp(&(
            b.path.as_str(),
            b.kind as u8,
            b.checker.as_str(),
        ))
    });
    let blocked = reports.iter().any(|r| match r.status {
        Status::Fail => ctx.opts.gate != Gate::Off,
        Status::Missing | Status::Error | Status::Timeout => ctx.opts.require_tools,
        Status::Pass | Status::Skipped => false,
    });
    Outcome {
        reports,
        fixed: if ctx.opts.fix {
            fixed
                .into_iter()
                .map(|(k, v)| (k, v.into_bytes()))
                .collect()
        } else {
            Vec::new()
        },
        blocked,
    }
}

/// One report per file the patch did not change and checker: a package run sees the files of
/// the packages it builds, and a run for the crates of a cross-crate patch is every crate's (see
/// `checker::clippy`), so two package jobs can both report a finding the patch caused in the
/// same untouched file. Their findings are merged, each once.
fn merge_untouched(reports: &mut Vec<CheckReport>) {
    let mut first: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut merged: Vec<CheckReport> = Vec::with_capacity(reports.len());
    for r in reports.drain(..) {
        if !r.untouched {
            merged.push(r);
            continue;
        }
        match first.get(&(r.path.clone(), r.checker.clone())) {
            Some(&i) => {
                let kept = &mut merged[i];
                for f in r.findings {
                    if !kept.findings.contains(&f) {
                        kept.findings.push(f);
                    }
                }
                if r.status == Status::Fail {
                    kept.status = Status::Fail;
                }
            }
            None => {
                first.insert((r.path.clone(), r.checker.clone()), merged.len());
                merged.push(r);
            }
        }
    }
    *reports = merged;
}

/// Each text file to check, with the checkers considered for it (a binary file has none).
fn items(ctx: &Ctx, ev: &Evidence, files: &[CheckFile]) -> Vec<(Item, Vec<Considered>)> {
    let mut items: Vec<(Item, Vec<Considered>)> = Vec::new();
    for f in files {
        let Ok(text) = std::str::from_utf8(&f.after) else {
            continue;
        };
        let before = f
            .before
            .as_ref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .map(|s| Arc::new(s.to_string()));
        let considered = select::consider(
            ctx.repo_root,
            ev,
            ctx.config,
            ctx.opts.only.as_deref(),
            &f.rel,
        );
        items.push((
            Item {
                rel: f.rel.clone(),
                real: f.real.clone(),
                before,
                text: Arc::new(text.to_string()),
                from: f.from.clone(),
            },
            considered,
        ));
    }
    items
}

/// The checkers a deleted file starts. It has nothing to check, but the checkers that look past
/// the edited files (the references check over the patch, clippy and go vet over the package)
/// must run for it even when no changed file would start them: a patch that only deletes a
/// module whose function is still used elsewhere.
fn for_removed(ctx: &Ctx, ev: &Evidence) -> Vec<Considered> {
    ctx.removed
        .iter()
        .flat_map(|(rel, _)| {
            select::consider(ctx.repo_root, ev, ctx.config, ctx.opts.only.as_deref(), rel)
        })
        .filter(|c| matches!(c.checker.batch, Batch::Patch | Batch::Package))
        .collect()
}

/// Runs `jobs` (`schedule`): the external tools' processes first, on `-j` lanes, the built-in
/// checks beside them.
fn run_jobs(ctx: &Ctx, bar: &indicatif::ProgressBar, jobs: Vec<Job>) -> Vec<JobResult> {
    bar.inc_length(jobs.len() as u64);
    // The long jobs first (a cargo or go build, then a node start or one run over a batch), so
    // the quick per-file tools fill in around them; in each of those, linters before formatters:
    // a linter's run is the longer one (eslint against prettier, go vet against gofmt), and
    // started last it would end last, alone on its lane.
    let class = |j: &Job| match j {
        Job::Table { checker, .. } if checker.locate.is_none() => Class::BuiltIn,
        Job::Table { checker, .. } => {
            let batch = match checker.batch {
                Batch::Package => 0,
                Batch::Project | Batch::Patch => 1,
                Batch::PerFile => 2,
            };
            Class::External(2 * batch + u8::from(checker.kind == Kind::Format))
        }
        Job::Custom { .. } => Class::External(2),
    };
    schedule::run_all(jobs, ctx.opts.jobs, class, |j| {
        let r = run_job(ctx, j);
        bar.inc(1);
        r
    })
}

/// A bar on stderr that appears only if the checks are still running after a moment (a fast run
/// prints nothing), and only on a terminal.
fn progress_bar(wanted: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    let bar = indicatif::ProgressBar::hidden();
    if !wanted || !std::io::stderr().is_terminal() {
        return bar;
    }
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{spinner} checks {pos}/{len} {elapsed}")
    {
        bar.set_style(style);
    }
    let later = bar.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        if !later.is_finished() {
            later.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            later.enable_steady_tick(Duration::from_millis(120));
        }
    });
    bar
}

/// The jobs of one kind: `items` with the checkers each is considered for, and `for_removed`,
/// the patch-wide and package checkers considered for deleted files (which start a job with no
/// item of their own).
fn jobs_for(
    ctx: &Ctx,
    items: &[(Item, Vec<Considered>)],
    for_removed: &[Considered],
    kind: Kind,
) -> Vec<Job> {
    let mut jobs = Vec::new();
    let mut batches: BTreeMap<BatchKey, (Option<Project>, Vec<Item>)> = BTreeMap::new();
    for c in for_removed.iter().filter(|c| c.checker.kind == kind) {
        if let Verdict::Used { cwd, args, .. } = &c.verdict {
            let (key, project) = batch_key(c, cwd, args);
            batches.entry(key).or_insert_with(|| (project, Vec::new()));
        }
    }
    for (item, considered) in items {
        for c in considered.iter().filter(|c| c.checker.kind == kind) {
            let Verdict::Used { cwd, args, .. } = &c.verdict else {
                continue;
            };
            if c.checker.batch == Batch::PerFile {
                jobs.push(Job::Table {
                    checker: c.checker,
                    project: c.project.clone(),
                    cwd: cwd.clone(),
                    args: args.clone(),
                    items: vec![item.clone()],
                });
                continue;
            }
            let (key, project) = batch_key(c, cwd, args);
            batches
                .entry(key)
                .or_insert_with(|| (project, Vec::new()))
                .1
                .push(item.clone());
        }
    }
    for ((name, _, cwd, args), (project, items)) in batches {
        let Some(checker) = super::checker::by_name(name) else {
            continue;
        };
        let cwd = if cwd.as_os_str().is_empty() {
            project
                .as_ref()
                .map_or_else(|| ctx.repo_root.to_path_buf(), |p| p.root.clone())
        } else {
            cwd
        };
        jobs.push(Job::Table {
            checker,
            project,
            cwd,
            args,
            items,
        });
    }
    for c in ctx.config.customs() {
        if c.kind != kind || !ctx.custom_enabled(&c.name) {
            continue;
        }
        let matched: Vec<Item> = items
            .iter()
            .filter(|(i, _)| c.matches(&i.rel))
            .map(|(i, _)| i.clone())
            .collect();
        if !matched.is_empty() {
            jobs.push(Job::Custom {
                custom: c,
                items: matched,
            });
        }
    }
    jobs
}

/// Checker, project root, working directory and arguments: files with the same key share a run.
type BatchKey = (&'static str, String, PathBuf, Vec<String>);

/// The batch a file joins for checker `c` (not per-file), and the project that batch runs for.
fn batch_key(c: &Considered, cwd: &Path, args: &[String]) -> (BatchKey, Option<Project>) {
    let checker = c.checker;
    let rel_root = match checker.batch {
        Batch::Patch => String::new(),
        _ => c
            .project
            .as_ref()
            .map(|p| p.rel_root.clone())
            .unwrap_or_default(),
    };
    // A package is one run whatever the configuration directories, the patch one run whatever
    // the projects; a project batch splits where files find different configurations (or hooks
    // give other args).
    let (cwd_key, args_key) = match checker.batch {
        Batch::Package | Batch::Patch => (PathBuf::new(), Vec::new()),
        _ => (cwd.to_path_buf(), args.to_vec()),
    };
    let project = match checker.batch {
        Batch::Patch => None,
        _ => c.project.clone(),
    };
    ((checker.name, rel_root, cwd_key, args_key), project)
}

fn report(rel: &str, checker: &str, kind: Kind, status: Status, started: Instant) -> CheckReport {
    CheckReport {
        path: rel.to_string(),
        checker: checker.to_string(),
        kind,
        status,
        findings: Vec::new(),
        diff: None,
        duration_ms: started.elapsed().as_millis() as u64,
        note: None,
        help: None,
        untouched: false,
    }
}

/// The verdict on findings under the gate.
fn verdict(gate: Gate, findings: &[Finding]) -> Status {
    let blocking = match gate {
        Gate::New => findings.iter().any(|f| f.new),
        Gate::Any | Gate::Off => !findings.is_empty(),
    };
    if blocking { Status::Fail } else { Status::Pass }
}

/// A report for a run that produced no verdict on the file.
fn non_result<T>(
    item: &Item,
    checker: &str,
    kind: Kind,
    ran: Ran<T>,
    timeout: Duration,
    started: Instant,
) -> CheckReport {
    let (status, note, help) = match ran {
        Ran::Done(_) => (Status::Pass, None, None),
        Ran::Skipped(s) => (Status::Skipped, Some(s), None),
        Ran::Missing(s) => (Status::Missing, Some(s), None),
        Ran::Error(s) => (Status::Error, Some(s), None),
        Ran::Unready { message, help } => (Status::Error, Some(message), Some(help)),
        Ran::Timeout => (
            Status::Timeout,
            Some(format!(
                "killed after {} s (with its child processes)",
                timeout.as_secs_f64()
            )),
            None,
        ),
    };
    let mut r = report(&item.rel, checker, kind, status, started);
    r.note = note;
    r.help = help;
    r
}

fn run_job(ctx: &Ctx, job: Job) -> JobResult {
    let started = Instant::now();
    let (name, kind, items, project) = match &job {
        Job::Table {
            checker,
            items,
            project,
            ..
        } => (checker.name.to_string(), checker.kind, items, project),
        Job::Custom { custom, items } => (custom.name.clone(), custom.kind, items, &None),
    };
    let files = items.len();
    // Where a crashed job's verdict goes: its files, else (a job for deleted files only) its
    // project's folder.
    let mut places: Vec<String> = items.iter().map(|i| i.rel.clone()).collect();
    if places.is_empty() {
        places.push(project.as_ref().map_or_else(
            || ".".to_string(),
            |p| {
                if p.rel_root.is_empty() {
                    ".".to_string()
                } else {
                    p.rel_root.clone()
                }
            },
        ));
    }
    // A bug in one checker (its runner or its output's parser) is that checker's `error`; the
    // other checkers' verdicts stand. Nothing here writes outside patchgate's caches.
    let r = crate::panics::catch(|| {
        crate::fault::point(&format!("check:{name}"));
        match job {
            Job::Table {
                checker,
                project,
                cwd,
                args,
                items,
            } => table_job(ctx, checker, project.as_ref(), &cwd, &args, &items),
            Job::Custom { custom, items } => custom_batch(ctx, &custom, &items),
        }
    })
    .unwrap_or_else(|message| JobResult {
        reports: places
            .iter()
            .map(|rel| {
                let mut r = report(rel, &name, kind, Status::Error, started);
                r.note = Some(format!("{name} crashed inside patchgate: {message}"));
                r.help = Some(
                    "this is a bug in patchgate, please report it with the note; the other \
                     checkers ran, and `--checks` can leave this one out until it is fixed"
                        .into(),
                );
                r
            })
            .collect(),
        fixed: Vec::new(),
    });
    if crate::timing::enabled() {
        // Per job, so a slow checker shows up by name (the marks of parallel jobs interleave).
        crate::timing::mark(&format!(
            "check job done: {name}, {files} file(s), {:.2} ms",
            started.elapsed().as_secs_f64() * 1e3
        ));
    }
    r
}

/// One table checker over its batch: run, baseline where needed, gate.
fn table_job(
    ctx: &Ctx,
    checker: &'static Checker,
    project: Option<&Project>,
    cwd: &Path,
    args: &[String],
    items: &[Item],
) -> JobResult {
    let started = Instant::now();
    let kind = checker.kind;
    let timeout = ctx.timeout_of(checker);
    let fail_all = |ran: Ran<()>| JobResult {
        reports: items
            .iter()
            .map(|i| non_result(i, checker.name, kind, ran.clone(), timeout, started))
            .collect(),
        fixed: Vec::new(),
    };
    let argv = match checker.locate {
        None => Vec::new(),
        Some(locate) => {
            let l = Locate {
                config: ctx.config,
                checker: checker.name,
                project_root: project.map_or(cwd, |p| p.root.as_path()),
                repo_root: ctx.repo_root,
            };
            match locate(&l) {
                Ok(a) => a,
                Err(m) => return fail_all(Ran::Missing(m)),
            }
        }
    };
    let call_on = |inputs: &[Input], baseline: bool| {
        (checker.run)(&Call {
            argv: &argv,
            cwd,
            project,
            repo_root: ctx.repo_root,
            git_dir: ctx.git_dir,
            files: inputs,
            args,
            timeout,
            context: &ctx.opts.context,
            patched: ctx.patched,
            removed: ctx.removed,
            baseline,
            offline: ctx.opts.offline,
        })
    };
    // With --fix a formatter's output is taken, not gated: no baseline can be needed, so its
    // checker is not handed the originals (a checker may check them along, see `node_run`).
    let needs_base = !(ctx.opts.fix && kind == Kind::Format);
    let inputs: Vec<Input> = items
        .iter()
        .map(|i| Input {
            before: i
                .before
                .as_deref()
                .map(String::as_str)
                .filter(|_| needs_base),
            ..i.input()
        })
        .collect();
    match call_on(&inputs, false) {
        Ran::Done(Out::Files(outs)) if outs.len() == items.len() => {
            files_verdicts(ctx, checker, items, outs, &call_on, started)
        }
        Ran::Done(Out::Files(_)) => fail_all(Ran::Error(format!(
            "internal: {} gave a verdict count that does not match its files",
            checker.name
        ))),
        Ran::Done(Out::Package(all)) => {
            package_verdicts(ctx, checker, items, all, &call_on, started)
        }
        other => fail_all(other.relay()),
    }
}

/// Per-file verdicts of a checker that reports each input file.
fn files_verdicts(
    ctx: &Ctx,
    checker: &'static Checker,
    items: &[Item],
    outs: Vec<FileOut>,
    call_on: &dyn Fn(&[Input], bool) -> Ran<Out>,
    started: Instant,
) -> JobResult {
    let name = checker.name;
    let kind = checker.kind;
    let timeout = ctx.timeout_of(checker);
    let self_gated = matches!(checker.uses, Uses::BuiltIn);
    let mut reports = Vec::new();
    let mut fixed = Vec::new();
    // Files whose verdict needs the original's: (item, patched output).
    let mut pending: Vec<(&Item, FileOut)> = Vec::new();
    for (item, out) in items.iter().zip(outs) {
        match out {
            FileOut::Formatted(f) if f == *item.text => {
                reports.push(report(&item.rel, name, kind, Status::Pass, started));
            }
            FileOut::Formatted(f) if ctx.opts.fix => {
                let mut r = report(&item.rel, name, kind, Status::Pass, started);
                r.diff = Some(diff_of(item, &f));
                r.note =
                    Some("formatted (--fix): the formatted content is what gets written".into());
                fixed.push((item.rel.clone(), f));
                reports.push(r);
            }
            FileOut::Findings(f) if f.is_empty() => {
                reports.push(report(&item.rel, name, kind, Status::Pass, started));
            }
            FileOut::Findings(f) if self_gated => {
                // A built-in checker compares with the original itself: what it reports is new.
                let mut r = report(&item.rel, name, kind, Status::Pass, started);
                r.findings = gate::mark(&f, None, &LineMap::all_new(&item.text));
                r.status = verdict(ctx.opts.gate, &r.findings);
                reports.push(r);
            }
            FileOut::Skipped(s) => {
                reports.push(non_result::<()>(
                    item,
                    name,
                    kind,
                    Ran::Skipped(s),
                    timeout,
                    started,
                ));
            }
            FileOut::Error(e) => {
                reports.push(non_result::<()>(
                    item,
                    name,
                    kind,
                    Ran::Error(e),
                    timeout,
                    started,
                ));
            }
            out => pending.push((item, out)),
        }
    }
    if pending.is_empty() {
        return JobResult { reports, fixed };
    }
    let bases = baselines(ctx, checker, &pending, call_on);
    for (item, out) in pending {
        let base = bases.get(&item.rel).map(Vec::as_slice);
        reports.push(match out {
            FileOut::Formatted(f) => format_report(ctx, item, name, &f, base, started),
            FileOut::Findings(raw) => lint_report(item, name, ctx.opts.gate, &raw, base, started),
            _ => continue,
        });
    }
    JobResult { reports, fixed }
}

/// The baselines of the pending files that have an original: cached ones, then one run of the
/// checker on the original texts for the rest. A formatter's baseline is the original lines it
/// wanted to rewrite (as findings of rule `format`).
fn baselines(
    ctx: &Ctx,
    checker: &Checker,
    pending: &[(&Item, FileOut)],
    call_on: &dyn Fn(&[Input], bool) -> Ran<Out>,
) -> BTreeMap<String, Vec<RawFinding>> {
    let mut bases = BTreeMap::new();
    let mut to_run: Vec<&Item> = Vec::new();
    for (item, out) in pending {
        let Some(b) = &item.before else { continue };
        // A lint's baseline may hold just the rules it needs (see `baseline::get_for`).
        let cached = match out {
            FileOut::Findings(found) => {
                let rules = found.iter().map(|f| f.rule.as_str());
                baseline::get_for(ctx.git_dir, checker.name, &item.rel, b.as_bytes(), rules)
            }
            _ => baseline::get(ctx.git_dir, checker.name, &item.rel, b.as_bytes()),
        };
        match cached {
            Some(hit) => {
                bases.insert(item.rel.clone(), hit);
            }
            None => to_run.push(item),
        }
    }
    if to_run.is_empty() {
        return bases;
    }
    let inputs: Vec<Input> = to_run
        .iter()
        .map(|i| Input {
            rel: &i.rel,
            real: &i.real,
            text: i.before.as_deref().map(String::as_str),
            before: None,
            from: None,
        })
        .collect();
    if let Ran::Done(Out::Files(outs)) = call_on(&inputs, true)
        && outs.len() == to_run.len()
    {
        for (item, out) in to_run.iter().zip(outs) {
            let Some(b) = &item.before else { continue };
            // No verdict on the original: no baseline (everything counts as new).
            let Some(found) = baseline::of(&item.rel, b, out) else {
                continue;
            };
            baseline::put(ctx.git_dir, checker.name, &item.rel, b.as_bytes(), &found);
            bases.insert(item.rel.clone(), found);
        }
    }
    bases
}

fn diff_of(item: &Item, formatted: &str) -> String {
    crate::text::unified_diff(
        &item.rel,
        &item.rel,
        Some(item.text.as_bytes()),
        Some(formatted.as_bytes()),
    )
    .0
}

/// A formatter's verdict on a file it would rewrite. The report's diff holds only the new hunks;
/// hunks that were already there are counted in the note.
fn format_report(
    ctx: &Ctx,
    item: &Item,
    checker: &str,
    formatted: &str,
    base: Option<&[RawFinding]>,
    started: Instant,
) -> CheckReport {
    let mut r = report(&item.rel, checker, Kind::Format, Status::Pass, started);
    let dirty: Option<BTreeSet<usize>> = match (&item.before, base) {
        (Some(_), Some(b)) => Some(b.iter().map(|f| f.line).collect()),
        // A created file has no original: every hunk is new.
        (None, _) => Some(BTreeSet::new()),
        (Some(_), None) => None,
    };
    r.findings = gate::format_findings(&item.text, formatted, &item.map(), dirty.as_ref());
    r.status = verdict(ctx.opts.gate, &r.findings);
    let old = r.findings.iter().filter(|f| !f.new).count();
    let shown = if ctx.opts.gate == Gate::New && old > 0 {
        gate::only_new_hunks(&item.text, formatted, &r.findings)
    } else {
        formatted.to_string()
    };
    if shown != *item.text {
        r.diff = Some(diff_of(item, &shown));
    }
    if old > 0 && ctx.opts.gate == Gate::New {
        r.note = Some(format!(
            "{old} formatting hunk{} already there before the patch (not shown)",
            if old == 1 { " was" } else { "s were" }
        ));
    }
    if item.before.is_some() && dirty.is_none() {
        r.note = Some(format!(
            "{checker} could not format the file's original text, so every hunk on a changed \
             line counts as new"
        ));
    }
    r
}

fn lint_report(
    item: &Item,
    checker: &str,
    gate_mode: Gate,
    raw: &[RawFinding],
    base: Option<&[RawFinding]>,
    started: Instant,
) -> CheckReport {
    let mut r = report(&item.rel, checker, Kind::Lint, Status::Pass, started);
    r.findings = gate::mark(raw, base, &item.map());
    r.status = verdict(gate_mode, &r.findings);
    // The file had an original, findings need comparing with it, and there is no baseline: the
    // checker failed or timed out on it. Nothing can be shown to predate the patch, so every
    // finding counts as new (the safe side); say so, or the blame looks arbitrary.
    if item.before.is_some() && base.is_none() && !raw.is_empty() {
        r.note = Some(format!(
            "{checker} could not check the file's original text (it failed or timed out on it), so \
             no finding can be shown to predate the patch: all count as new; re-run, or raise its \
             timeout in .patchgate.toml"
        ));
    }
    r
}

/// Verdicts of a whole-package checker: the edited files as usual, and new findings in files the
/// patch did not touch (a missed call site) under those files.
fn package_verdicts(
    ctx: &Ctx,
    checker: &'static Checker,
    items: &[Item],
    all: Vec<RawFinding>,
    call_on: &dyn Fn(&[Input], bool) -> Ran<Out>,
    started: Instant,
) -> JobResult {
    let name = checker.name;
    let by_file = |all: &[RawFinding], rel: &str| -> Vec<RawFinding> {
        all.iter().filter(|f| f.path == rel).cloned().collect()
    };
    // A built-in checker compares with the original itself: what it reports is new.
    let base_all = if matches!(checker.uses, Uses::BuiltIn) {
        Some(Vec::new())
    } else if all.is_empty() {
        None
    } else {
        // The original state: a moved file's content stands at its old path (which the mirror
        // holds), not at its new one as well, or every definition in it would be declared twice.
        let inputs: Vec<Input> = items
            .iter()
            .map(|i| Input {
                rel: &i.rel,
                real: &i.real,
                text: match i.from {
                    Some(_) => None,
                    None => i.before.as_deref().map(String::as_str),
                },
                before: None,
                from: None,
            })
            .collect();
        match call_on(&inputs, true) {
            Ran::Done(Out::Package(f)) => Some(f),
            _ => None,
        }
    };
    let mut reports: Vec<CheckReport> = items
        .iter()
        .map(|i| {
            let mine = by_file(&all, &i.rel);
            let base = match (&i.before, &base_all) {
                (Some(_), Some(b)) => Some(by_file(b, i.from.as_deref().unwrap_or(&i.rel))),
                _ => None,
            };
            lint_report(i, name, ctx.opts.gate, &mine, base.as_deref(), started)
        })
        .collect();
    // Untouched files: only with a baseline can a finding there be blamed on the patch. A file
    // the patch changes in another package is not one: it was laid over this run's mirror (see
    // `Call::overlays`), and its own package's job reports on it (reported here too, a finding
    // was counted twice, once as "in a file the patch did not change").
    if let Some(base_all) = &base_all {
        let touched: BTreeSet<&str> = items
            .iter()
            .map(|i| i.rel.as_str())
            .chain(ctx.patched.iter().map(|(rel, _)| rel.as_str()))
            .collect();
        let others: BTreeSet<&str> = all
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| !touched.contains(p))
            .collect();
        for path in others {
            let mine = by_file(&all, path);
            let base = by_file(base_all, path);
            let mut findings = gate::mark_unchanged(&mine, &base);
            findings.retain(|f| f.new);
            if findings.is_empty() {
                continue;
            }
            let mut r = report(path, name, Kind::Lint, Status::Pass, started);
            r.findings = findings;
            r.status = if ctx.opts.gate == Gate::Off {
                Status::Pass
            } else {
                Status::Fail
            };
            r.note = Some("in a file the patch did not change: caused by the patch".into());
            r.untouched = true;
            reports.push(r);
        }
    }
    JobResult {
        reports,
        fixed: Vec::new(),
    }
}

fn custom_batch(ctx: &Ctx, c: &Custom, items: &[Item]) -> JobResult {
    let started = Instant::now();
    let timeout = ctx.timeout(&c.name, c.kind);
    let after: Vec<(&str, &[u8])> = items
        .iter()
        .map(|i| (i.rel.as_str(), i.text.as_bytes()))
        .collect();
    let raw = match custom::run(ctx.git_dir, c, &after, "after", timeout) {
        Ran::Done(f) => f,
        other => {
            let reports = items
                .iter()
                .map(|i| non_result(i, &c.name, c.kind, other.clone(), timeout, started))
                .collect();
            return JobResult {
                reports,
                fixed: Vec::new(),
            };
        }
    };
    let by_file = |all: &[RawFinding], rel: &str| -> Vec<RawFinding> {
        all.iter().filter(|f| f.path == rel).cloned().collect()
    };
    let with_before: Vec<(&str, &[u8])> = items
        .iter()
        .filter(|i| !by_file(&raw, &i.rel).is_empty())
        .filter_map(|i| i.before.as_ref().map(|b| (i.rel.as_str(), b.as_bytes())))
        .collect();
    let base_all = if with_before.is_empty() {
        None
    } else {
        match custom::run(ctx.git_dir, c, &with_before, "before", timeout) {
            Ran::Done(f) => Some(f),
            _ => None,
        }
    };
    let reports = items
        .iter()
        .map(|i| {
            let mine = by_file(&raw, &i.rel);
            let base = match (&i.before, &base_all) {
                (Some(_), Some(all)) => Some(by_file(all, &i.rel)),
                _ => None,
            };
            let mut r = lint_report(i, &c.name, ctx.opts.gate, &mine, base.as_deref(), started);
            r.kind = c.kind;
            r
        })
        .collect();
    JobResult {
        reports,
        fixed: Vec::new(),
    }
}
