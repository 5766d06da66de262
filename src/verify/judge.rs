//! Step 3 of a project's verification: each step's report, its failures marked new or old
//! against the baseline, its status and note (see `run`'s module doc), then the hints, which
//! read the sources of the verified state.

use std::borrow::Cow;

use super::baseline::{self, Maps};
use super::execute::StepRun;
use super::hints;
use super::prepare::Prepared;
use super::{BaselineUse, Ctx, Done, Failure, Status, Subject, VerifyReport};
use crate::project::detect::Project;

/// The reports of the steps run; `switched`: the mirror holds the original state now, so it is
/// restored before the hints read the sources.
pub(super) fn judge_all(
    cx: &Ctx,
    project: &Project,
    ready: &Prepared,
    done: Vec<Done>,
    switched: bool,
) -> Vec<VerifyReport> {
    let maps = Maps::new(&ready.changes);
    let patch = matches!(cx.subject, Subject::Patch(_) | Subject::Branch(_));
    let mut judged: Vec<(VerifyReport, StepRun)> = done
        .into_iter()
        .map(|d| judge(d, &ready.shown, &maps, patch))
        .collect();
    let want_hints = judged.iter().any(|(r, _)| r.status == Status::Fail);
    if switched && want_hints {
        let restored = ready.resync(cx).and_then(|m| cx.lay(&m, &ready.checked));
        if restored.is_err() {
            // The sources are the original's: hints without call sites are still right.
            for (r, run) in &mut judged {
                if r.status == Status::Fail {
                    r.hints = hints::hints(project.lang, &r.failures, &run.text);
                }
            }
            return judged.into_iter().map(|(r, _)| r).collect();
        }
    }
    for (r, run) in &mut judged {
        if r.status != Status::Fail {
            continue;
        }
        let text = if patch {
            baseline::without_old(&run.text, &run.failures)
        } else {
            Cow::Borrowed(run.text.as_str())
        };
        let about: Vec<Failure> = r
            .failures
            .iter()
            .filter(|f| f.new || !patch)
            .cloned()
            .collect();
        r.hints.extend(hints::hints_with_sites(
            project.lang,
            &about,
            &text,
            &ready.project_dir,
        ));
    }
    judged.into_iter().map(|(r, _)| r).collect()
}

/// The step's report: its failures marked new or old, its status and note (see the module doc).
fn judge(mut d: Done, shown: &str, maps: &Maps, patch: bool) -> (VerifyReport, StepRun) {
    let mut report = VerifyReport {
        step: d.step,
        project: shown.to_string(),
        command: d.plan.command(),
        status: d.run.status,
        failures: Vec::new(),
        hints: Vec::new(),
        duration_ms: d.run.duration_ms + d.baseline_ms,
        note: d.run.note.take(),
        baseline: None,
    };
    report.hints.extend(d.run.help.take());
    if d.run.status == Status::Timeout {
        report
            .hints
            .push("a step timed out: look for a hang, a deadlock or an unclosed resource".into());
    }
    if let Some((base, source)) = d.baseline.take() {
        baseline::mark(
            &mut d.run.failures,
            base.as_ref().ok().map(Vec::as_slice),
            maps,
        );
        let total = d.run.failures.len();
        let old = d.run.failures.iter().filter(|f| !f.failure.new).count();
        let whence = match source {
            BaselineUse::Cached => "baseline: cached".to_string(),
            BaselineUse::Ran => format!("baseline: ran in {:.1} s", d.baseline_ms as f64 / 1000.0),
            BaselineUse::Same => "baseline: the same state".to_string(),
            BaselineUse::Unavailable => String::new(),
        };
        let since = if patch { "before the patch" } else { "at HEAD" };
        let failures = |n: usize| if n == 1 { "failure" } else { "failures" };
        let said = match &base {
            Err(why) if patch => format!(
                "no baseline: {why}; only failures in the patched files block ({old} of {total} outside them)"
            ),
            Err(why) => format!("no baseline: {why}"),
            Ok(_) if old == 0 => format!("none of the failures was there {since} ({whence})"),
            Ok(_) if old == total && patch => format!(
                "{total} {} {} already there {since} ({whence})",
                failures(total),
                if total == 1 { "was" } else { "were" }
            ),
            Ok(_) => format!(
                "{old} of {total} {} {} already there {since} ({whence})",
                failures(total),
                if old == 1 { "was" } else { "were" }
            ),
        };
        report.note = Some(match report.note.take() {
            Some(n) => format!("{n}; {said}"),
            None => said,
        });
        report.baseline = Some(source);
        if patch && old == total {
            report.status = Status::Pass;
        }
    }
    // New failures first, each group in the tool's order.
    d.run.failures.sort_by_key(|f| !f.failure.new);
    report.failures = d.run.failures.iter().map(|f| f.failure.clone()).collect();
    (report, d.run)
}
