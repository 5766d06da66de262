//! The human rendering: miette diagnostics for every edit that did not apply (the file's text
//! with each candidate underlined, or the patch entry for invalid input), then a summary and the
//! diff, coloured when the output is a terminal.

use std::fmt::Write;
use std::sync::Arc;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource};

use super::source::FileSource;
use thiserror::Error;

use super::{Report, Status, hunk_note, status_name};
use crate::plan::EditStatus;

#[derive(Debug, Error, Diagnostic)]
#[error("{title}")]
struct EditDiagnostic {
    title: String,
    #[source_code]
    src: Option<NamedSource<FileSource>>,
    #[label(collection)]
    labels: Vec<LabeledSpan>,
    #[help]
    help: Option<String>,
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

struct Paint(bool);

impl Paint {
    fn p(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("{code}{s}{RESET}")
        } else {
            s.to_string()
        }
    }
}

/// Renders a report for a person; `color` adds ANSI colours.
pub fn render_human(r: &Report, color: bool) -> String {
    let paint = Paint(color);
    let handler = GraphicalReportHandler::new_themed(if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    })
    .with_context_lines(1);
    let mut out = String::new();

    for e in &r.edits {
        if matches!(e.status, EditStatus::Applied | EditStatus::AlreadyApplied) {
            continue;
        }
        let diag = edit_diagnostic(r, e);
        let _ = handler.render_report(&mut out, &diag);
        out.push('\n');
    }

    out.push_str(&super::checks::verify_human(&r.verify, &|ok, line| {
        paint.p(if ok { GREEN } else { RED }, line)
    }));
    out.push_str(&super::checks::human(&r.checks, &|ok, line| {
        paint.p(if ok { GREEN } else { RED }, line)
    }));

    // Invalid edits were each shown above; the headline counts them.
    if let Some(err) = r
        .error
        .as_ref()
        .filter(|e| e.kind != crate::error::Kind::InvalidEdits)
    {
        let _ = writeln!(out, "{} {}", paint.p(RED, "error:"), err.message);
        if let Some(h) = &err.help {
            let _ = writeln!(out, "  help: {h}");
        }
    }

    let already = r
        .edits
        .iter()
        .filter(|e| e.status == EditStatus::AlreadyApplied)
        .count();
    let headline = headline(r, &paint);
    let _ = write!(out, "{}", paint.p(BOLD, &headline));
    if already > 0 {
        let _ = write!(out, " ({already} already applied)");
    }
    out.push('\n');
    if let Some(id) = &r.patch_id {
        let _ = match &r.undid {
            Some(u) => writeln!(
                out,
                "  patch {id}: undid {u} (`patchgate undo {id}` redoes it)"
            ),
            None => writeln!(out, "  patch {id} (`patchgate undo {id}` reverts it)"),
        };
    }
    for p in &r.changed_since {
        let _ = writeln!(out, "  changed since: {p}");
    }

    if matches!(
        r.status,
        Status::Applied | Status::Committed | Status::DryRun
    ) {
        written(r, &paint, &mut out);
    }
    out
}

/// A failed or invalid edit as a diagnostic: the patch's span for an invalid edit, the file with
/// its candidates for a miss.
fn edit_diagnostic(r: &Report, e: &super::EditReport) -> EditDiagnostic {
    let what = if e.invalid {
        "invalid edit".to_string()
    } else {
        status_name(e.status).replace('_', " ")
    };
    let title = format!("edit {} ({}{}): {what}", e.index, e.file_path, hunk_note(e));
    let mut help = e.message.clone();
    let (src, labels) = if e.invalid {
        match (&r.patch, e.patch_span) {
            (Some(p), Some(span)) => (
                Some(NamedSource::new(
                    p.name.clone(),
                    FileSource(Arc::clone(&p.text)),
                )),
                vec![LabeledSpan::new_with_span(Some("this edit".into()), span)],
            ),
            _ => (None, Vec::new()),
        }
    } else if let Some(sn) = &e.snippet {
        (
            Some(NamedSource::new(
                sn.path.clone(),
                FileSource(Arc::clone(&sn.text)),
            )),
            sn.labels
                .iter()
                .map(|(range, label)| {
                    LabeledSpan::new_with_span(
                        Some(label.clone()),
                        (range.start, range.end - range.start),
                    )
                })
                .collect(),
        )
    } else {
        (None, Vec::new())
    };
    if e.status == EditStatus::Ambiguous && labels.is_empty() {
        let ranges: Vec<String> = e.lines.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        help = Some(format!(
            "{} (lines {})",
            help.unwrap_or_default(),
            ranges.join(", ")
        ));
    }
    EditDiagnostic {
        title,
        src,
        labels,
        help,
    }
}

/// The one line that says what happened, in its colour.
fn headline(r: &Report, paint: &Paint) -> String {
    let applied = r
        .edits
        .iter()
        .filter(|e| e.status == EditStatus::Applied)
        .count();
    let failed = r
        .edits
        .iter()
        .filter(|e| !matches!(e.status, EditStatus::Applied | EditStatus::AlreadyApplied))
        .count();
    let total = r.edits.len();
    match r.status {
        Status::Applied | Status::Committed | Status::DryRun if r.undid.is_some() => paint.p(
            if r.status == Status::DryRun {
                CYAN
            } else {
                GREEN
            },
            &super::markdown::undo_verdict(r),
        ),
        Status::Applied | Status::Committed => paint.p(
            GREEN,
            &format!(
                "applied {applied} of {total} edits to {} files",
                r.files.len()
            ),
        ),
        Status::DryRun => paint.p(
            CYAN,
            &format!(
                "dry run: {applied} of {total} edits would apply to {} files; nothing was written",
                r.files.len()
            ),
        ),
        Status::Rejected => paint.p(
            RED,
            &format!("rejected: {failed} of {total} edits did not apply; nothing was written"),
        ),
        Status::ChecksFailed => paint.p(
            RED,
            &format!(
                "checks failed: {}; nothing was written",
                super::checks::summary(&r.checks, r.patch.is_some())
                    .unwrap_or_else(|| "the patch introduced problems".into())
            ),
        ),
        Status::Clean => paint.p(GREEN, "checks passed"),
        Status::Error => {
            let invalid = r.edits.iter().filter(|e| e.invalid).count();
            let msg = if invalid > 0 {
                format!(
                    "invalid input: {invalid} of {total} edits are invalid ({failed} with problems in all); nothing was written"
                )
            } else {
                "nothing was written".to_string()
            };
            paint.p(RED, &msg)
        }
    }
}

/// What a written (or dry-run) patch changed: the files with their counts, the notes on how
/// edits applied, and for a dry run the diffs.
fn written(r: &Report, paint: &Paint, out: &mut String) {
    for f in &r.files {
        let name = match &f.from {
            Some(from) => format!("{from} -> {}", f.path),
            None => f.path.clone(),
        };
        let _ = writeln!(
            out,
            "  {:<9} {name}  {} {}{}",
            f.change.name(),
            paint.p(GREEN, &format!("+{}", f.added)),
            paint.p(RED, &format!("-{}", f.removed)),
            super::ModeReport::note(f.mode.as_ref(), "->")
        );
    }
    // How an edit applied, where it is worth saying: a relaxed match, a reading of the hunk
    // other than as written, a file replaced by codex's Add File or Move.
    for e in r.edits.iter().filter(|e| e.status == EditStatus::Applied) {
        if let Some(m) = &e.message {
            let _ = writeln!(
                out,
                "  note: edit {} ({}{}): {m}",
                e.index,
                e.file_path,
                hunk_note(e)
            );
        }
    }
    if r.status == Status::DryRun {
        for f in &r.files {
            out.push('\n');
            out.push_str(&colour_diff(&f.diff, paint));
        }
    }
}

fn colour_diff(diff: &str, paint: &Paint) -> String {
    if !paint.0 {
        return diff.to_string();
    }
    let mut out = String::with_capacity(diff.len() + 64);
    for line in diff.split_inclusive('\n') {
        let code = if line.starts_with("+++") || line.starts_with("---") {
            BOLD
        } else if line.starts_with('+') {
            GREEN
        } else if line.starts_with('-') {
            RED
        } else if line.starts_with("@@") {
            CYAN
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(line);
        } else {
            let body = line.strip_suffix('\n').unwrap_or(line);
            out.push_str(&paint.p(code, body));
            if line.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}
