//! The markdown rendering, for an agent's context window: the verdict first, then what needs
//! fixing (the places the checks blame on the patch, file and line; each miss with its best
//! candidates and their real text), then what changed. Short: a diff is shown only for a dry run,
//! and candidate texts are capped.

use std::fmt::Write;

use super::{Report, Status, candidate_kind_name, hunk_note, status_name};
use crate::plan::EditStatus;

const MAX_SUGGESTION_LINES: usize = 40;

pub fn render_markdown(r: &Report) -> String {
    let mut out = String::new();
    let bad: Vec<_> = r
        .edits
        .iter()
        .filter(|e| !matches!(e.status, EditStatus::Applied | EditStatus::AlreadyApplied))
        .collect();
    let _ = writeln!(out, "## patchgate: {}\n", verdict(r, bad.len()));
    preamble(r, &mut out);
    // What the agent has to fix, file and line, before any detail.
    if r.status == Status::ChecksFailed {
        out.push_str(&super::checks::markdown_to_fix(&r.checks));
    }
    for e in &bad {
        missed_edit(e, &mut out);
    }
    out.push_str(&super::checks::verify_markdown(&r.verify));
    out.push_str(&super::checks::markdown(&r.checks));
    applied_notes(r, &mut out);
    files(r, &mut out);
    out
}

/// The verdict of the headline (`bad`: the edits that did not apply).
fn verdict(r: &Report, bad: usize) -> String {
    let total = r.edits.len();
    match r.status {
        Status::Applied | Status::Committed | Status::DryRun if r.undid.is_some() => {
            undo_verdict(r)
        }
        Status::Applied => format!("applied {total} edits to {} files", r.files.len()),
        Status::Committed => format!("committed {total} edits to {} files", r.files.len()),
        Status::DryRun => format!(
            "dry run OK: {total} edits would apply to {} files; nothing written",
            r.files.len()
        ),
        Status::Rejected => format!(
            "rejected: {} of {total} edits did not apply; nothing written",
            bad
        ),
        Status::ChecksFailed => format!(
            "checks failed: {}; nothing written",
            super::checks::summary(&r.checks, r.patch.is_some())
                .unwrap_or_else(|| "the patch introduced problems".into())
        ),
        Status::Clean => "checks passed".to_string(),
        Status::Error => "error; nothing written".to_string(),
    }
}

/// The patch id, the paths changed since a patch being undone wrote them, and the error.
fn preamble(r: &Report, out: &mut String) {
    if let Some(id) = &r.patch_id {
        match &r.undid {
            Some(u) => {
                let _ = writeln!(
                    out,
                    "patch_id: `{id}` (undid `{u}`; `patchgate undo {id}` redoes it)\n"
                );
            }
            None => {
                let _ = writeln!(out, "patch_id: `{id}` (`patchgate undo {id}` reverts it)\n");
            }
        }
    }
    if !r.changed_since.is_empty() {
        let _ = writeln!(out, "Changed since the patch wrote them:");
        for p in &r.changed_since {
            let _ = writeln!(out, "- `{p}`");
        }
        out.push('\n');
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "**Error ({}):** {}", e.kind, e.message);
        if let (Some(l), Some(c)) = (e.line, e.column) {
            let _ = writeln!(out, "at line {l}, column {c} of the patch");
        }
        if let Some(h) = &e.help {
            let _ = writeln!(out, "\nFix: {h}");
        }
        out.push('\n');
    }
}

/// An edit that did not apply: why, where it matched too often, its candidates' real text.
fn missed_edit(e: &super::EditReport, out: &mut String) {
    let what = if e.invalid {
        "invalid"
    } else {
        status_name(e.status)
    };
    let _ = writeln!(
        out,
        "### edit {} `{}`{}: {what}\n",
        e.index,
        e.file_path,
        hunk_note(e)
    );
    if let Some(m) = &e.message {
        let _ = writeln!(out, "{m}\n");
    }
    if e.status == EditStatus::Ambiguous && !e.lines.is_empty() {
        let ranges: Vec<String> = e.lines.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        let _ = writeln!(out, "Matches at lines: {}\n", ranges.join(", "));
    }
    for s in &e.suggestions {
        let note = s
            .note
            .as_deref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "Candidate lines {}-{} ({}, {:.0}% similar){note}:\n```",
            s.start_line,
            s.end_line,
            candidate_kind_name(s.kind),
            s.similarity * 100.0
        );
        let lines: Vec<&str> = s.text.lines().collect();
        for l in lines.iter().take(MAX_SUGGESTION_LINES) {
            let _ = writeln!(out, "{l}");
        }
        if lines.len() > MAX_SUGGESTION_LINES {
            let _ = writeln!(out, "… ({} more lines)", lines.len() - MAX_SUGGESTION_LINES);
        }
        let _ = writeln!(out, "```\n");
    }
}

/// The edits already applied, and how the others applied where it is worth a word.
fn applied_notes(r: &Report, out: &mut String) {
    let already = r
        .edits
        .iter()
        .filter(|e| e.status == EditStatus::AlreadyApplied)
        .count();
    if already > 0 {
        let _ = writeln!(
            out,
            "{already} edits were already applied (no change needed).\n"
        );
    }
    let relaxed: Vec<_> = r
        .edits
        .iter()
        .filter(|e| {
            e.status == EditStatus::Applied
                && e.match_kind
                    .is_some_and(|m| m != crate::plan::MatchKind::Exact)
        })
        .collect();
    for e in relaxed {
        let _ = writeln!(
            out,
            "- edit {} `{}` applied by a relaxed match: {}",
            e.index,
            e.file_path,
            e.message.as_deref().unwrap_or("")
        );
    }
    // An exact match worth a word: a hunk read as its format's own tool reads it, or a file that
    // codex's Add File or Move replaced.
    let written = matches!(
        r.status,
        Status::Applied | Status::Committed | Status::DryRun
    );
    for e in r.edits.iter().filter(|e| {
        written
            && e.status == EditStatus::Applied
            && e.match_kind
                .is_none_or(|m| m == crate::plan::MatchKind::Exact)
    }) {
        if let Some(m) = &e.message {
            let _ = writeln!(out, "- edit {} `{}`: {m}", e.index, e.file_path);
        }
    }
}

/// The files a written (or dry-run) patch changed, and a dry run's diffs.
fn files(r: &Report, out: &mut String) {
    if matches!(
        r.status,
        Status::Applied | Status::Committed | Status::DryRun
    ) && !r.files.is_empty()
    {
        let _ = writeln!(out, "### Files\n");
        for f in &r.files {
            let name = match &f.from {
                Some(from) => format!("{from} → {}", f.path),
                None => f.path.clone(),
            };
            let hash = f
                .sha256
                .as_deref()
                .map(|h| format!(" sha256 `{h}`"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- {} `{name}` (+{} −{}){}{hash}",
                f.change.name(),
                f.added,
                f.removed,
                super::ModeReport::note(f.mode.as_ref(), "→")
            );
        }
        if r.status == Status::DryRun {
            for f in &r.files {
                let _ = writeln!(out, "\n```diff\n{}```", f.diff);
            }
        }
    }
}

/// The headline of an undo (shared with the human rendering).
pub(crate) fn undo_verdict(r: &Report) -> String {
    let id = r.undid.as_deref().unwrap_or("");
    let n = r.files.len();
    match r.status {
        Status::DryRun => {
            format!("dry run OK: undoing patch {id} would restore {n} files; nothing written")
        }
        Status::Committed => format!(
            "undid patch {id}: a revert commit restores {n} files{}",
            r.branch
                .as_deref()
                .map(|b| format!(" on {b}"))
                .unwrap_or_default()
        ),
        _ => format!("undid patch {id}: restored {n} files"),
    }
}
