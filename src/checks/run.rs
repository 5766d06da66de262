//! Scheduling the checks: which checker runs on which files, in parallel, and what each verdict
//! is under the gate.
//!
//! With `--fix`, two phases: formatters first (their output becomes the content), then linters on
//! that content; without it, formatters and linters run together. Within a phase every job runs on a rayon pool: a per-file tool is one job per file;
//! a tool that takes many files (the node bridge, clippy, go vet, a custom command) is one job per
//! project batch, never one per file.
//!
//! The baseline (the same checker on the original content) is computed only for files that have
//! findings, so a clean patch costs one run per checker; and it is cached by content (`baseline`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::config::{Config, Custom, Kind};
use super::detect::{self, Lang, Project};
use super::finding::{Finding, RawFinding};
use super::gate::{self, LineMap};
use super::package::{self, Overlay};
use super::tools::{self, Invocation, Ran};
use super::{CheckFile, CheckReport, Gate, Options, Outcome, Status, baseline, custom, node};

pub struct Ctx<'a> {
    pub repo_root: &'a Path,
    pub git_dir: &'a Path,
    pub config: &'a Config,
    pub opts: &'a Options,
}

/// A file as the checkers see it.
#[derive(Clone)]
struct Item {
    rel: String,
    real: std::path::PathBuf,
    before: Option<Arc<String>>,
    text: Arc<String>,
}

impl Item {
    fn map(&self) -> LineMap {
        match &self.before {
            Some(b) => LineMap::new(b, &self.text),
            None => LineMap::all_new(&self.text),
        }
    }
}

enum Job {
    /// ruff over a project batch (falls back to `PerFile` runs if the batch fails as a whole).
    Ruff {
        checker: &'static str,
        kind: Kind,
        project: Project,
        items: Vec<Item>,
    },
    PerFile {
        checker: &'static str,
        kind: Kind,
        project: Project,
        item: Item,
    },
    Node {
        checker: &'static str,
        kind: Kind,
        project: Project,
        items: Vec<Item>,
    },
    Package {
        checker: &'static str,
        project: Project,
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

impl Ctx<'_> {
    fn enabled(&self, checker: &str) -> bool {
        !self.config.disabled(checker)
            && self
                .opts
                .only
                .as_ref()
                .is_none_or(|only| only.iter().any(|c| c == checker))
    }

    fn timeout(&self, checker: &str, kind: Kind) -> Duration {
        self.config.timeout(checker, kind, self.opts.timeout)
    }
}

/// Runs every applicable checker on `files` (deleted files have nothing to check).
pub fn run(ctx: &Ctx, files: &[CheckFile]) -> Outcome {
    let mut items: Vec<(Item, Option<Project>)> = Vec::new();
    let mut reports = Vec::new();
    for f in files {
        let text = match std::str::from_utf8(&f.after) {
            Ok(t) => t.to_string(),
            Err(_) => continue,
        };
        let before = f
            .before
            .as_ref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .map(|s| Arc::new(s.to_string()));
        let project =
            detect::lang_of(&f.rel).and_then(|l| detect::project_of(ctx.repo_root, &f.rel, l));
        items.push((
            Item {
                rel: f.rel.clone(),
                real: f.real.clone(),
                before,
                text: Arc::new(text),
            },
            project,
        ));
    }

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(ctx.opts.jobs)
        .build();
    let bar = progress_bar(ctx.opts.progress);
    let run_jobs = |mut jobs: Vec<Job>| -> Vec<JobResult> {
        bar.inc_length(jobs.len() as u64);
        // The long jobs (a node start, a cargo or go build) first, in FIFO order, so every worker
        // starts on one of them and the quick per-file tools fill in around them.
        jobs.sort_by_key(|j| matches!(j, Job::PerFile { .. } | Job::Ruff { .. }));
        let results = std::sync::Mutex::new(Vec::with_capacity(jobs.len()));
        let run_all = || {
            rayon::scope_fifo(|s| {
                for j in jobs {
                    let results = &results;
                    let bar = &bar;
                    s.spawn_fifo(move |_| {
                        let r = run_job(ctx, j);
                        bar.inc(1);
                        results.lock().unwrap_or_else(|p| p.into_inner()).push(r);
                    });
                }
            })
        };
        match &pool {
            Ok(p) => p.install(run_all),
            Err(_) => run_all(),
        }
        results.into_inner().unwrap_or_else(|p| p.into_inner())
    };

    let mut fixed: BTreeMap<String, String> = BTreeMap::new();
    if ctx.opts.fix {
        // Phase 1: formatters; their output is the content the linters must see.
        for r in run_jobs(jobs_for(ctx, &items, Kind::Format)) {
            reports.extend(r.reports);
            fixed.extend(r.fixed);
        }
        for (item, _) in &mut items {
            if let Some(t) = fixed.get(&item.rel) {
                item.text = Arc::new(t.clone());
            }
        }
        // Phase 2: linters, on the formatted content.
        for r in run_jobs(jobs_for(ctx, &items, Kind::Lint)) {
            reports.extend(r.reports);
        }
    } else {
        // Without --fix nothing depends on the formatters: one pool for all, so prettier and
        // eslint (a node start each) run side by side instead of one after the other.
        let mut jobs = jobs_for(ctx, &items, Kind::Format);
        jobs.extend(jobs_for(ctx, &items, Kind::Lint));
        for r in run_jobs(jobs) {
            reports.extend(r.reports);
        }
    }
    bar.finish_and_clear();
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

fn jobs_for(ctx: &Ctx, items: &[(Item, Option<Project>)], kind: Kind) -> Vec<Job> {
    let mut jobs = Vec::new();
    let mut batches: BTreeMap<(&'static str, String), (Project, Vec<Item>)> = BTreeMap::new();
    for (item, project) in items {
        let Some(project) = project else { continue };
        let [fmt, lint] = project.lang.default_checkers();
        let checker = if kind == Kind::Format { fmt } else { lint };
        if !ctx.enabled(checker) {
            continue;
        }
        match (project.lang, kind) {
            (Lang::Node, _)
            | (Lang::Python, _)
            | (Lang::Rust, Kind::Lint)
            | (Lang::Go, Kind::Lint) => {
                batches
                    .entry((checker, project.rel_root.clone()))
                    .or_insert_with(|| (project.clone(), Vec::new()))
                    .1
                    .push(item.clone());
            }
            _ => jobs.push(Job::PerFile {
                checker,
                kind,
                project: project.clone(),
                item: item.clone(),
            }),
        }
    }
    for ((checker, _), (project, items)) in batches {
        if project.lang == Lang::Python {
            jobs.push(Job::Ruff {
                checker,
                kind,
                project,
                items,
            });
        } else if project.lang == Lang::Node {
            jobs.push(Job::Node {
                checker,
                kind,
                project,
                items,
            });
        } else {
            jobs.push(Job::Package {
                checker,
                project,
                items,
            });
        }
    }
    for c in ctx.config.customs() {
        if c.kind != kind || !ctx.enabled(&c.name) {
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

fn report(item: &Item, checker: &str, kind: Kind, status: Status, started: Instant) -> CheckReport {
    CheckReport {
        path: item.rel.clone(),
        checker: checker.to_string(),
        kind,
        status,
        findings: Vec::new(),
        diff: None,
        duration_ms: started.elapsed().as_millis() as u64,
        note: None,
        help: None,
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
    let mut r = report(item, checker, kind, status, started);
    r.note = note;
    r.help = help;
    r
}

fn run_job(ctx: &Ctx, job: Job) -> JobResult {
    match job {
        Job::Ruff {
            checker,
            kind,
            project,
            items,
        } => ruff_batch(ctx, checker, kind, &project, &items),
        Job::PerFile {
            checker,
            kind,
            project,
            item,
        } => per_file(ctx, checker, kind, &project, &item),
        Job::Node {
            checker,
            kind,
            project,
            items,
        } => node_batch(ctx, checker, kind, &project, &items),
        Job::Package {
            checker,
            project,
            items,
        } => package_batch(ctx, checker, &project, &items),
        Job::Custom { custom, items } => custom_batch(ctx, &custom, &items),
    }
}

/// A formatter's verdict from its output.
fn format_report(
    ctx: &Ctx,
    item: &Item,
    checker: &str,
    formatted: String,
    started: Instant,
    fixed: &mut Vec<(String, String)>,
) -> CheckReport {
    let mut r = report(item, checker, Kind::Format, Status::Pass, started);
    if formatted == *item.text {
        return r;
    }
    let (diff, _, _) = crate::report::unified_diff(
        &item.rel,
        &item.rel,
        Some(item.text.as_bytes()),
        Some(formatted.as_bytes()),
    );
    r.diff = Some(diff);
    if ctx.opts.fix {
        r.note = Some("formatted (--fix): the formatted content is what gets written".into());
        fixed.push((item.rel.clone(), formatted));
        return r;
    }
    r.findings = gate::format_findings(&item.text, &formatted, &item.map());
    r.status = verdict(ctx.opts.gate, &r.findings);
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
    let mut r = report(item, checker, Kind::Lint, Status::Pass, started);
    r.findings = gate::mark(raw, base, &item.map());
    r.status = verdict(gate_mode, &r.findings);
    // The file had an original, findings need comparing with it, and there is no baseline: the
    // checker failed or timed out on the original text. Nothing can be shown to predate the patch,
    // so every finding counts as new (the safe side); say so, or the blame looks arbitrary.
    if item.before.is_some() && base.is_none() && !raw.is_empty() {
        r.note = Some(format!(
            "{checker} could not check the file's original text (it failed or timed out on it), so \
             no finding can be shown to predate the patch: all count as new; re-run, or raise its \
             timeout in .patchgate.toml"
        ));
    }
    r
}

fn per_file(
    ctx: &Ctx,
    checker: &'static str,
    kind: Kind,
    project: &Project,
    item: &Item,
) -> JobResult {
    let started = Instant::now();
    let timeout = ctx.timeout(checker, kind);
    let mut fixed = Vec::new();
    let binary = match checker {
        "ruff-format" | "ruff" => "ruff",
        other => other,
    };
    let argv = match tools::program(ctx.config, checker, binary, &project.root, ctx.repo_root) {
        Ok(a) => a,
        Err(m) => {
            return JobResult {
                reports: vec![non_result::<()>(
                    item,
                    checker,
                    kind,
                    Ran::Missing(m),
                    timeout,
                    started,
                )],
                fixed,
            };
        }
    };
    let inv = Invocation {
        argv,
        project,
        real: &item.real,
        timeout,
    };
    let rep = match checker {
        "ruff" => {
            let lint = |text: &str| match tools::ruff_check(&inv, text) {
                Ran::Done(f) => Ran::Done(
                    f.into_iter()
                        .filter(|x| Path::new(&x.path) == item.real || x.path == item.rel)
                        .collect::<Vec<_>>(),
                ),
                other => other,
            };
            match lint(&item.text) {
                Ran::Done(raw) if raw.is_empty() => {
                    report(item, checker, kind, Status::Pass, started)
                }
                Ran::Done(raw) => {
                    // No original (a created file): everything is new.
                    let base = item.before.as_ref().and_then(|b| {
                        baseline_for(ctx, checker, &item.rel, b, || match lint(b) {
                            Ran::Done(f) => Some(f),
                            _ => None,
                        })
                    });
                    lint_report(item, checker, ctx.opts.gate, &raw, base.as_deref(), started)
                }
                other => non_result(item, checker, kind, other, timeout, started),
            }
        }
        _ => {
            let ran = match checker {
                "ruff-format" => tools::ruff_format(&inv, &item.text),
                "rustfmt" => tools::rustfmt(&inv, &item.text),
                _ => tools::gofmt(&inv, &item.text),
            };
            match ran {
                Ran::Done(formatted) => {
                    format_report(ctx, item, checker, formatted, started, &mut fixed)
                }
                other => non_result(item, checker, kind, other, timeout, started),
            }
        }
    };
    JobResult {
        reports: vec![rep],
        fixed,
    }
}

fn ruff_batch(
    ctx: &Ctx,
    checker: &'static str,
    kind: Kind,
    project: &Project,
    items: &[Item],
) -> JobResult {
    let started = Instant::now();
    let timeout = ctx.timeout(checker, kind);
    let per_file_fallback = || {
        let mut r = JobResult {
            reports: Vec::new(),
            fixed: Vec::new(),
        };
        for i in items {
            let one = per_file(ctx, checker, kind, project, i);
            r.reports.extend(one.reports);
            r.fixed.extend(one.fixed);
        }
        r
    };
    let argv = match tools::program(ctx.config, checker, "ruff", &project.root, ctx.repo_root) {
        Ok(a) => a,
        Err(_) => return per_file_fallback(),
    };
    let texts: Vec<(&str, &str)> = items
        .iter()
        .map(|i| (i.rel.as_str(), i.text.as_str()))
        .collect();
    let lint = kind == Kind::Lint;
    match super::ruff_batch::run(&argv, ctx.repo_root, &texts, lint, timeout) {
        Ran::Done(super::ruff_batch::Out::Formatted(out)) => {
            let mut fixed = Vec::new();
            let reports = items
                .iter()
                .zip(out)
                .map(|(i, (_, formatted))| {
                    format_report(ctx, i, checker, formatted, started, &mut fixed)
                })
                .collect();
            JobResult { reports, fixed }
        }
        Ran::Done(super::ruff_batch::Out::Findings(all)) => {
            let mine = |rel: &str| -> Vec<RawFinding> {
                all.iter().filter(|f| f.path == rel).cloned().collect()
            };
            // Baselines for the files with findings: cached ones, then one batch run for the rest.
            let mut bases: BTreeMap<String, Vec<RawFinding>> = BTreeMap::new();
            let mut to_run: Vec<(&str, &str)> = Vec::new();
            for i in items.iter().filter(|i| !mine(&i.rel).is_empty()) {
                if let Some(b) = &i.before {
                    match baseline::get(ctx.git_dir, checker, &i.rel, b.as_bytes()) {
                        Some(hit) => {
                            bases.insert(i.rel.clone(), hit);
                        }
                        None => to_run.push((&i.rel, b)),
                    }
                }
            }
            if !to_run.is_empty()
                && let Ran::Done(super::ruff_batch::Out::Findings(base_all)) =
                    super::ruff_batch::run(&argv, ctx.repo_root, &to_run, true, timeout)
            {
                for (rel, b) in &to_run {
                    let found: Vec<RawFinding> = base_all
                        .iter()
                        .filter(|f| f.path == *rel)
                        .cloned()
                        .collect();
                    baseline::put(ctx.git_dir, checker, rel, b.as_bytes(), &found);
                    bases.insert(rel.to_string(), found);
                }
            }
            let reports = items
                .iter()
                .map(|i| {
                    let base = if i.before.is_some() {
                        bases.get(&i.rel).map(Vec::as_slice)
                    } else {
                        None
                    };
                    lint_report(i, checker, ctx.opts.gate, &mine(&i.rel), base, started)
                })
                .collect();
            JobResult {
                reports,
                fixed: Vec::new(),
            }
        }
        // A missing ruff or a timeout is the same verdict per file; anything else (a config this
        // batch could not reproduce) falls back to one stdin run per file.
        Ran::Missing(m) => JobResult {
            reports: items
                .iter()
                .map(|i| {
                    non_result::<()>(i, checker, kind, Ran::Missing(m.clone()), timeout, started)
                })
                .collect(),
            fixed: Vec::new(),
        },
        Ran::Timeout => JobResult {
            reports: items
                .iter()
                .map(|i| non_result::<()>(i, checker, kind, Ran::Timeout, timeout, started))
                .collect(),
            fixed: Vec::new(),
        },
        Ran::Skipped(_) | Ran::Error(_) | Ran::Unready { .. } => per_file_fallback(),
    }
}

/// The cached baseline, or `compute` (stored on success).
fn baseline_for(
    ctx: &Ctx,
    checker: &str,
    rel: &str,
    before: &str,
    compute: impl FnOnce() -> Option<Vec<RawFinding>>,
) -> Option<Vec<RawFinding>> {
    if let Some(hit) = baseline::get(ctx.git_dir, checker, rel, before.as_bytes()) {
        return Some(hit);
    }
    let fresh = compute()?;
    baseline::put(ctx.git_dir, checker, rel, before.as_bytes(), &fresh);
    Some(fresh)
}

fn node_batch(
    ctx: &Ctx,
    checker: &'static str,
    kind: Kind,
    project: &Project,
    items: &[Item],
) -> JobResult {
    let started = Instant::now();
    let timeout = ctx.timeout(checker, kind);
    let mut fixed = Vec::new();
    let fail_all = |ran: Ran<()>| JobResult {
        reports: items
            .iter()
            .map(|i| non_result(i, checker, kind, ran.clone(), timeout, started))
            .collect(),
        fixed: Vec::new(),
    };
    let Some(module) = node::find_module(checker, &project.root, ctx.repo_root) else {
        return fail_all(Ran::Missing(format!(
            "{checker} not found in node_modules or on PATH"
        )));
    };
    let tool = if checker == "eslint" {
        node::NodeTool::Eslint
    } else {
        node::NodeTool::Prettier
    };
    let scratch = ctx.git_dir.join("patchgate").join("node");
    let call = |texts: Vec<(&Item, &str)>| {
        let files: Vec<node::NodeFile> = texts
            .iter()
            .map(|(i, t)| node::NodeFile {
                path: i.real.clone(),
                text: t.to_string(),
            })
            .collect();
        node::run(tool, &module, &project.root, &files, &scratch, timeout)
    };
    let results = match call(items.iter().map(|i| (i, i.text.as_str())).collect()) {
        Ok(r) => r,
        Err(node::NodeError::Missing(m)) => return fail_all(Ran::Missing(m)),
        Err(node::NodeError::Timeout) => return fail_all(Ran::Timeout),
        Err(node::NodeError::Failed(m)) => return fail_all(Ran::Error(m)),
    };
    let mut reports = Vec::new();
    let mut need_baseline: Vec<(&Item, Vec<RawFinding>)> = Vec::new();
    for (item, res) in items.iter().zip(results) {
        match res {
            node::FileResult::Format {
                formatted: Some(f),
                error: None,
                ..
            } => {
                reports.push(format_report(ctx, item, checker, f, started, &mut fixed));
            }
            node::FileResult::Format { error: Some(e), .. } => {
                reports.push(non_result::<()>(
                    item,
                    checker,
                    kind,
                    Ran::Error(e),
                    timeout,
                    started,
                ));
            }
            node::FileResult::Format {
                formatted: None, ..
            } => {
                reports.push(non_result::<()>(
                    item,
                    checker,
                    kind,
                    Ran::Skipped("ignored by the prettier configuration".into()),
                    timeout,
                    started,
                ));
            }
            node::FileResult::Lint { ignored: true, .. } => {
                reports.push(non_result::<()>(
                    item,
                    checker,
                    kind,
                    Ran::Skipped("ignored by the eslint configuration".into()),
                    timeout,
                    started,
                ));
            }
            node::FileResult::Lint { findings, .. } if findings.is_empty() => {
                reports.push(report(item, checker, kind, Status::Pass, started));
            }
            node::FileResult::Lint { findings, .. } => need_baseline.push((item, findings)),
        }
    }
    if !need_baseline.is_empty() {
        // Baselines: cached ones, then one bridge call for the rest.
        let mut bases: BTreeMap<String, Vec<RawFinding>> = BTreeMap::new();
        let mut to_run: Vec<(&Item, &str)> = Vec::new();
        for (item, _) in &need_baseline {
            if let Some(b) = &item.before {
                match baseline::get(ctx.git_dir, checker, &item.rel, b.as_bytes()) {
                    Some(hit) => {
                        bases.insert(item.rel.clone(), hit);
                    }
                    None => to_run.push((item, b.as_str())),
                }
            }
        }
        if !to_run.is_empty()
            && let Ok(res) = call(to_run.clone())
        {
            for ((item, b), r) in to_run.iter().zip(res) {
                if let node::FileResult::Lint { findings, .. } = r {
                    baseline::put(ctx.git_dir, checker, &item.rel, b.as_bytes(), &findings);
                    bases.insert(item.rel.clone(), findings);
                }
            }
        }
        for (item, raw) in need_baseline {
            let base = if item.before.is_some() {
                bases.get(&item.rel).map(Vec::as_slice)
            } else {
                None
            };
            reports.push(lint_report(
                item,
                checker,
                ctx.opts.gate,
                &raw,
                base,
                started,
            ));
        }
    }
    JobResult { reports, fixed }
}

fn package_batch(ctx: &Ctx, checker: &'static str, project: &Project, items: &[Item]) -> JobResult {
    let started = Instant::now();
    let kind = Kind::Lint;
    let timeout = ctx.timeout(checker, kind);
    let binary = if checker == "clippy" { "cargo" } else { "go" };
    let fail_all = |ran: Ran<()>| JobResult {
        reports: items
            .iter()
            .map(|i| non_result(i, checker, kind, ran.clone(), timeout, started))
            .collect(),
        fixed: Vec::new(),
    };
    let argv = match tools::program(ctx.config, checker, binary, &project.root, ctx.repo_root) {
        Ok(a) => a,
        Err(m) => return fail_all(Ran::Missing(m)),
    };
    let run_with = |before: bool| {
        let context = ctx
            .opts
            .context
            .iter()
            .filter(|(rel, _)| !items.iter().any(|i| &i.rel == rel))
            .map(|(rel, content)| Overlay {
                rel,
                content: content.as_deref().map(|b| b.as_slice()),
            });
        let overlays: Vec<Overlay> = context
            .chain(items.iter().map(|i| Overlay {
                rel: &i.rel,
                content: if before {
                    i.before.as_ref().map(|b| b.as_bytes())
                } else {
                    Some(i.text.as_bytes())
                },
            }))
            .collect();
        if checker == "clippy" {
            package::clippy(
                &argv,
                ctx.repo_root,
                ctx.git_dir,
                project,
                &overlays,
                timeout,
                ctx.opts.offline,
            )
        } else {
            package::go_lint(
                &argv,
                ctx.repo_root,
                ctx.git_dir,
                project,
                &overlays,
                timeout,
                ctx.opts.offline,
            )
        }
    };
    let raw = match run_with(false) {
        Ran::Done(f) => f,
        Ran::Skipped(s) => return fail_all(Ran::Skipped(s)),
        Ran::Missing(s) => return fail_all(Ran::Missing(s)),
        Ran::Timeout => return fail_all(Ran::Timeout),
        Ran::Error(s) => return fail_all(Ran::Error(s)),
        Ran::Unready { message, help } => return fail_all(Ran::Unready { message, help }),
    };
    let by_file = |all: &[RawFinding], rel: &str| -> Vec<RawFinding> {
        all.iter().filter(|f| f.path == rel).cloned().collect()
    };
    let any_findings = items.iter().any(|i| !by_file(&raw, &i.rel).is_empty());
    let base_all = if any_findings && items.iter().any(|i| i.before.is_some()) {
        match run_with(true) {
            Ran::Done(f) => Some(f),
            _ => None,
        }
    } else {
        None
    };
    let reports = items
        .iter()
        .map(|i| {
            let mine = by_file(&raw, &i.rel);
            let base = match (&i.before, &base_all) {
                (Some(_), Some(all)) => Some(by_file(all, &i.rel)),
                _ => None,
            };
            lint_report(i, checker, ctx.opts.gate, &mine, base.as_deref(), started)
        })
        .collect();
    JobResult {
        reports,
        fixed: Vec::new(),
    }
}

fn custom_batch(ctx: &Ctx, c: &Custom, items: &[Item]) -> JobResult {
    let started = Instant::now();
    let timeout = c
        .timeout
        .or(ctx.opts.timeout)
        .unwrap_or_else(|| ctx.timeout(&c.name, c.kind));
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
