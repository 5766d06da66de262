//! The checks part of the human and markdown reports: what blocks first (new findings, grouped by
//! file, with the formatter's diff), then what did not run, then a count of what passed; and the
//! count of new problems the summary lines give.
//!
//! A *problem* is a place (file and line) where a failing check has a new finding: a missed call
//! site that both the compiler and the references check report is one problem, not two.

use std::fmt::Write;

use crate::checks::finding::Finding;
use crate::checks::{CheckReport, Status};

/// One place the patch broke, with every new finding there.
pub(super) struct Problem<'a> {
    pub path: &'a str,
    pub line: usize,
    /// In a file the patch did not change.
    pub untouched: bool,
    /// `(checker, finding)`, in the order of the report.
    pub findings: Vec<(&'a str, &'a Finding)>,
}

/// The new findings of failing checks, one entry per place, ordered by file and line.
pub(super) fn problems(checks: &[CheckReport]) -> Vec<Problem<'_>> {
    let mut out: Vec<Problem> = Vec::new();
    for r in checks.iter().filter(|r| r.status == Status::Fail) {
        for f in r.findings.iter().filter(|f| f.new) {
            match out
                .iter_mut()
                .find(|p| p.path == r.path && p.line == f.line)
            {
                Some(p) => {
                    p.untouched |= r.untouched;
                    p.findings.push((&r.checker, f));
                }
                None => out.push(Problem {
                    path: &r.path,
                    line: f.line,
                    untouched: r.untouched,
                    findings: vec![(&r.checker, f)],
                }),
            }
        }
    }
    out.sort_by(|a, b| (a.path, a.line).cmp(&(b.path, b.line)));
    out
}

/// What blocked, for a summary line: "2 new problems caused by this patch (1 in a file it did
/// not change)". `None` when no check has a new finding (a failed verify step, `--gate any` on
/// old findings): then the caller's generic wording stands. `patch`: the run applied a patch
/// (`patchgate check` has none to blame).
pub(super) fn summary(checks: &[CheckReport], patch: bool) -> Option<String> {
    let found = problems(checks);
    let n = found.len();
    if n == 0 {
        return None;
    }
    let elsewhere = found.iter().filter(|p| p.untouched).count();
    let mut line = format!(
        "{n} new problem{}{}",
        if n == 1 { "" } else { "s" },
        if patch { " caused by this patch" } else { "" }
    );
    if elsewhere > 0 {
        let files = if elsewhere == 1 { "a file" } else { "files" };
        let _ = if patch {
            write!(line, " ({elsewhere} in {files} it did not change)")
        } else {
            write!(line, " ({elsewhere} outside the files checked)")
        };
    }
    Some(line)
}

/// Markdown: the places to fix, file and line first, one line each (for the top of the report).
pub(super) fn markdown_to_fix(checks: &[CheckReport]) -> String {
    let found = problems(checks);
    let mut out = String::new();
    if found.is_empty() {
        return out;
    }
    let _ = writeln!(out, "### To fix\n");
    for p in found {
        let what: Vec<String> = p
            .findings
            .iter()
            .map(|(checker, f)| format!("{checker} `{}`: {}", f.rule, f.message))
            .collect();
        let _ = writeln!(
            out,
            "- `{}:{}` — {}{}",
            p.path,
            p.line,
            what.join("; "),
            if p.untouched {
                " (in a file the patch did not change)"
            } else {
                ""
            }
        );
    }
    out.push('\n');
    out
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Missing => "missing",
        Status::Error => "error",
        Status::Timeout => "timeout",
        Status::Skipped => "skipped",
    }
}

fn kind_word(r: &CheckReport) -> &'static str {
    match r.kind {
        crate::checks::Kind::Format => "format",
        crate::checks::Kind::Lint => "lint",
    }
}

/// Plain text for the human report (`paint` colours a line red/green when asked).
pub(super) fn human(checks: &[CheckReport], paint: &dyn Fn(bool, &str) -> String) -> String {
    let mut out = String::new();
    if checks.is_empty() {
        return out;
    }
    out.push_str("checks:\n");
    for r in checks.iter().filter(|r| r.status == Status::Fail) {
        let new = r.findings.iter().filter(|f| f.new).count();
        let _ = writeln!(
            out,
            "{}",
            paint(
                false,
                &format!(
                    "  ✗ {} — {} ({}): {} finding(s), {new} new{}",
                    r.path,
                    r.checker,
                    kind_word(r),
                    r.findings.len(),
                    if r.untouched {
                        ", in a file the patch did not change"
                    } else {
                        ""
                    }
                )
            )
        );
        let mut sorted: Vec<_> = r.findings.iter().collect();
        sorted.sort_by_key(|f| (!f.new, f.line, f.column));
        // A formatter's hunks that were already there are one summary line, not a wall of text.
        let format = r.kind == crate::checks::Kind::Format;
        let old = r.findings.iter().filter(|f| !f.new).count();
        if format && old > 0 && new > 0 {
            sorted.retain(|f| f.new);
        }
        for f in sorted {
            let _ = writeln!(
                out,
                "      {}:{} {} {}{}",
                f.line,
                f.column,
                f.rule,
                f.message,
                if f.new {
                    "  [new]"
                } else {
                    "  (already there)"
                }
            );
        }
        if format && old > 0 && new > 0 {
            let _ = writeln!(
                out,
                "      ({old} formatting hunk{} already there before the patch, not shown)",
                if old == 1 { "" } else { "s" }
            );
        }
        if let Some(d) = &r.diff {
            for l in d.lines().take(40) {
                let _ = writeln!(out, "      {l}");
            }
        }
    }
    // Not run: one line per checker and reason, not one per file (and what to do, under it).
    type Reason<'a> = (&'a str, Status, Option<&'a str>, Option<&'a str>);
    let mut not_run: Vec<(Reason, Vec<&str>)> = Vec::new();
    for r in checks
        .iter()
        .filter(|r| matches!(r.status, Status::Missing | Status::Error | Status::Timeout))
    {
        let key = (
            r.checker.as_str(),
            r.status,
            r.note.as_deref(),
            r.help.as_deref(),
        );
        match not_run.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1.push(&r.path),
            None => not_run.push((key, vec![&r.path])),
        }
    }
    for ((checker, status, note, help), paths) in not_run {
        let on = if paths.len() == 1 {
            paths[0].to_string()
        } else {
            format!("{} files", paths.len())
        };
        let _ = writeln!(
            out,
            "  ! {checker}: {} on {on}{}",
            status_word(status),
            note.map(|n| format!(" ({n})")).unwrap_or_default()
        );
        if let Some(h) = help {
            let _ = writeln!(out, "      help: {h}");
        }
    }
    let passed: Vec<_> = checks.iter().filter(|r| r.status == Status::Pass).collect();
    let old_only = passed.iter().filter(|r| !r.findings.is_empty()).count();
    let skipped = checks
        .iter()
        .filter(|r| r.status == Status::Skipped)
        .count();
    let mut line = format!("  ✓ {} passed", passed.len());
    if old_only > 0 {
        let _ = write!(line, " ({old_only} with findings that were already there)");
    }
    if skipped > 0 {
        let _ = write!(line, ", {skipped} skipped");
    }
    let _ = writeln!(out, "{}", paint(true, &line));
    out
}

/// Markdown: new findings first, grouped by file.
pub(super) fn markdown(checks: &[CheckReport]) -> String {
    let mut out = String::new();
    if checks.is_empty() {
        return out;
    }
    let failing: Vec<_> = checks.iter().filter(|r| r.status == Status::Fail).collect();
    let new_total: usize = failing
        .iter()
        .map(|r| r.findings.iter().filter(|f| f.new).count())
        .sum();
    let _ = writeln!(out, "### Checks: {new_total} new finding(s)\n");
    let mut files: Vec<&str> = failing.iter().map(|r| r.path.as_str()).collect();
    files.dedup();
    for file in files {
        let _ = writeln!(out, "#### `{file}`\n");
        for r in failing.iter().filter(|r| r.path == file) {
            let mut fs: Vec<_> = r.findings.iter().collect();
            fs.sort_by_key(|f| (!f.new, f.line));
            for f in fs {
                let _ = writeln!(
                    out,
                    "- {} `{}` line {}:{} — {}{}",
                    r.checker,
                    f.rule,
                    f.line,
                    f.column,
                    f.message,
                    if f.new {
                        " **(new)**"
                    } else {
                        " (already there)"
                    }
                );
            }
            if let Some(d) = &r.diff {
                let _ = writeln!(out, "\n```diff\n{}```", d);
            }
        }
        out.push('\n');
    }
    let not_run: Vec<_> = checks
        .iter()
        .filter(|r| matches!(r.status, Status::Missing | Status::Error | Status::Timeout))
        .collect();
    if !not_run.is_empty() {
        let _ = writeln!(out, "Not run:");
        for r in not_run {
            let _ = writeln!(
                out,
                "- `{}` {}: {}{}",
                r.path,
                r.checker,
                status_word(r.status),
                r.note
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            );
            if let Some(h) = &r.help {
                let _ = writeln!(out, "  - help: {h}");
            }
        }
        out.push('\n');
    }
    let passed = checks.iter().filter(|r| r.status == Status::Pass).count();
    let _ = writeln!(out, "{passed} check(s) passed.\n");
    out
}

fn verify_status(s: crate::verify::run::Status) -> &'static str {
    use crate::verify::run::Status as V;
    match s {
        V::Pass => "pass",
        V::Fail => "fail",
        V::Missing => "missing",
        V::Error => "error",
        V::Timeout => "timeout",
    }
}

/// The verify steps for the human report: failing steps with their first failures and hints.
pub(super) fn verify_human(
    steps: &[crate::verify::run::VerifyReport],
    paint: &dyn Fn(bool, &str) -> String,
) -> String {
    use crate::verify::run::Status as V;
    let mut out = String::new();
    if steps.is_empty() {
        return out;
    }
    out.push_str("verify:\n");
    for r in steps {
        let ok = r.status == V::Pass;
        // The step's name, not its Debug form: lowercasing the whole line instead mangled
        // the command's paths and the note.
        let head = format!(
            "  {} {} in {} ({}): {}{}",
            if ok { "✓" } else { "✗" },
            r.step.name(),
            r.project,
            r.command,
            verify_status(r.status),
            r.note
                .as_deref()
                .map(|n| format!(" — {n}"))
                .unwrap_or_default()
        );
        let _ = writeln!(out, "{}", paint(ok, &head));
        for f in r.failures.iter().take(10) {
            let loc = match (&f.file, f.line) {
                (Some(file), Some(line)) => format!("{file}:{line}: "),
                (Some(file), None) => format!("{file}: "),
                _ => String::new(),
            };
            let first = f.message.lines().next().unwrap_or_default();
            let _ = writeln!(
                out,
                "      {loc}{}{first}",
                if f.name.is_empty() {
                    String::new()
                } else {
                    format!("[{}] ", f.name)
                }
            );
        }
        for h in &r.hints {
            let _ = writeln!(out, "      hint: {h}");
        }
    }
    out
}

/// The verify steps for the markdown report, failures first.
pub(super) fn verify_markdown(steps: &[crate::verify::run::VerifyReport]) -> String {
    let mut out = String::new();
    if steps.is_empty() {
        return out;
    }
    let _ = writeln!(out, "### Verify\n");
    for r in steps {
        let _ = writeln!(
            out,
            "- **{:?}** in `{}`: {} (`{}`){}",
            r.step,
            r.project,
            verify_status(r.status),
            r.command,
            r.note
                .as_deref()
                .map(|n| format!(" — {n}"))
                .unwrap_or_default()
        );
        for f in r.failures.iter().take(10) {
            let loc = match (&f.file, f.line) {
                (Some(file), Some(line)) => format!("`{file}:{line}` "),
                (Some(file), None) => format!("`{file}` "),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "  - {loc}{} {}",
                f.name,
                f.message.lines().next().unwrap_or_default()
            );
        }
        for h in &r.hints {
            let _ = writeln!(out, "  - hint: {h}");
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Kind;

    fn missing(path: &str, checker: &str) -> CheckReport {
        CheckReport {
            path: path.into(),
            checker: checker.into(),
            kind: Kind::Lint,
            status: Status::Missing,
            findings: Vec::new(),
            diff: None,
            duration_ms: 0,
            note: Some("ruff not found on PATH".into()),
            help: None,
            untouched: false,
        }
    }

    #[test]
    fn checkers_that_did_not_run_get_one_line_each() {
        let reports = [
            missing("a.py", "ruff"),
            missing("b.py", "ruff"),
            missing("c.py", "ruff-format"),
        ];
        let text = human(&reports, &|_, l| l.to_string());
        assert!(
            text.contains("  ! ruff: missing on 2 files (ruff not found on PATH)\n"),
            "{text}"
        );
        assert!(
            text.contains("  ! ruff-format: missing on c.py (ruff not found on PATH)\n"),
            "{text}"
        );
        assert_eq!(text.matches("! ").count(), 2, "{text}");
    }

    #[test]
    fn a_help_is_shown_under_its_note() {
        let unready = |path: &str| CheckReport {
            status: Status::Error,
            note: Some("dependencies not downloaded (offline)".into()),
            help: Some("run `cargo fetch` in /p, or unset CARGO_NET_OFFLINE".into()),
            checker: "clippy".into(),
            ..missing(path, "clippy")
        };
        let reports = [unready("src/a.rs"), unready("src/b.rs")];
        let text = human(&reports, &|_, l| l.to_string());
        assert!(
            text.contains(
                "  ! clippy: error on 2 files (dependencies not downloaded (offline))\n      \
                 help: run `cargo fetch` in /p, or unset CARGO_NET_OFFLINE\n"
            ),
            "{text}"
        );
        let md = markdown(&reports);
        assert!(
            md.contains(
                "- `src/a.rs` clippy: error (dependencies not downloaded (offline))\n  - help: \
                 run `cargo fetch` in /p, or unset CARGO_NET_OFFLINE\n"
            ),
            "{md}"
        );
    }
}

#[cfg(test)]
mod summary_tests {
    use super::*;
    use crate::checks::Kind;
    use crate::checks::finding::Severity;

    fn failing(path: &str, checker: &str, at: &[(usize, bool)], untouched: bool) -> CheckReport {
        CheckReport {
            path: path.into(),
            checker: checker.into(),
            kind: Kind::Lint,
            status: Status::Fail,
            findings: at
                .iter()
                .map(|&(line, new)| Finding {
                    line,
                    column: 5,
                    rule: format!("{checker}-rule"),
                    severity: Severity::Error,
                    message: format!("{checker} says so"),
                    new,
                })
                .collect(),
            diff: None,
            duration_ms: 0,
            note: None,
            help: None,
            untouched,
        }
    }

    /// A missed call site in an untouched file that the compiler and the references check both
    /// report, and an old finding next to a new one in the edited file.
    fn missed_call_site() -> Vec<CheckReport> {
        vec![
            failing("src/a.rs", "clippy", &[(3, false), (9, true)], false),
            failing("src/cli.rs", "clippy", &[(4, true)], true),
            failing("src/cli.rs", "references", &[(4, true)], true),
        ]
    }

    #[test]
    fn the_summary_counts_places_and_those_in_untouched_files() {
        assert_eq!(
            summary(&missed_call_site(), true).as_deref(),
            Some("2 new problems caused by this patch (1 in a file it did not change)")
        );
        let one = [failing("a.py", "ruff", &[(2, true)], false)];
        assert_eq!(
            summary(&one, true).as_deref(),
            Some("1 new problem caused by this patch")
        );
        let elsewhere = [
            failing("b.py", "references", &[(2, true), (7, true)], true),
            failing("c.py", "references", &[(1, true)], true),
        ];
        assert_eq!(
            summary(&elsewhere, true).as_deref(),
            Some("3 new problems caused by this patch (3 in files it did not change)")
        );
        assert_eq!(
            summary(&elsewhere, false).as_deref(),
            Some("3 new problems (3 outside the files checked)")
        );
    }

    #[test]
    fn no_new_finding_gives_no_summary() {
        // `--gate any` on a finding that was already there; a passing check is never counted.
        let old = [failing("a.py", "ruff", &[(2, false)], false)];
        assert_eq!(summary(&old, true), None);
        let mut passed = failing("a.py", "ruff", &[(2, true)], false);
        passed.status = Status::Pass;
        assert_eq!(summary(&[passed], true), None);
        assert_eq!(markdown_to_fix(&old), "");
    }

    #[test]
    fn markdown_lists_each_place_to_fix_once_with_what_each_checker_said() {
        let md = markdown_to_fix(&missed_call_site());
        assert_eq!(
            md,
            "### To fix\n\n\
             - `src/a.rs:9` — clippy `clippy-rule`: clippy says so\n\
             - `src/cli.rs:4` — clippy `clippy-rule`: clippy says so; references \
             `references-rule`: references says so (in a file the patch did not change)\n\n"
        );
    }
}
