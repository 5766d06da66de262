//! The checks part of the human and markdown reports: what blocks first (new findings, grouped by
//! file, with the formatter's diff), then what did not run, then a count of what passed.

use std::fmt::Write;

use crate::checks::{CheckReport, Status};

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
pub fn human(checks: &[CheckReport], paint: &dyn Fn(bool, &str) -> String) -> String {
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
                    "  ✗ {} — {} ({}): {} finding(s), {new} new",
                    r.path,
                    r.checker,
                    kind_word(r),
                    r.findings.len()
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
pub fn markdown(checks: &[CheckReport]) -> String {
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
pub fn verify_human(
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
        let head = format!(
            "  {} {:?} in {} ({}): {}{}",
            if ok { "✓" } else { "✗" },
            r.step,
            r.project,
            r.command,
            verify_status(r.status),
            r.note
                .as_deref()
                .map(|n| format!(" — {n}"))
                .unwrap_or_default()
        )
        .to_lowercase();
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
pub fn verify_markdown(steps: &[crate::verify::run::VerifyReport]) -> String {
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
