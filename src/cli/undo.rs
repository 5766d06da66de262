//! `patchgate undo`: revert the last written patch (or the one named), or list the history.

use std::fmt::Write;

use super::output::{OutputFormat, emit, print_error, print_report};
use crate::ops::{self, Context, undo::HistoryItem};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Every run that writes reports a patch_id; `patchgate undo --list` shows \
the recent ones (the last 50 are kept). Exit codes: 0 undone, 3 unknown patch id or nothing to \
undo, 4 a file changed since the patch wrote it (each is named; nothing is written) or the \
branch moved."
)]
pub(super) struct UndoArgs {
    #[command(flatten)]
    request: ops::undo::Request,
    /// List the recorded patches, newest first, and whether each is in effect.
    #[arg(long, conflicts_with_all = ["patch_id", "dry_run"])]
    list: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub(super) format: OutputFormat,
}

pub(super) fn run(a: &UndoArgs, ctx: &Context) -> i32 {
    if a.list {
        return match ops::undo::list(ctx) {
            Ok(items) => {
                emit(&render_list(&items, a.format));
                0
            }
            Err(e) => print_error(&e, a.format),
        };
    }
    match ops::undo::run(&a.request, ctx) {
        Ok(report) => print_report(&report, a.format),
        Err(e) => print_error(&e, a.format),
    }
}
fn render_list(items: &[HistoryItem], format: OutputFormat) -> String {
    if format == OutputFormat::Json {
        let v = serde_json::json!({"version": 1, "patches": items});
        return format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default());
    }
    let mut out = String::new();
    if items.is_empty() {
        out.push_str("no patches recorded in this working tree\n");
        return out;
    }
    for it in items {
        let state = match &it.undone_by {
            Some(by) => format!("undone by {by}"),
            None => "in effect".to_string(),
        };
        let place = match (&it.branch, &it.commit) {
            (Some(b), Some(c)) => format!("commit {} on {b}", &c[..c.len().min(12)]),
            _ => "working tree".to_string(),
        };
        let line = if format == OutputFormat::Markdown {
            format!(
                "- `{}` {}: {} ({place}; {} files; {state})",
                it.patch_id,
                kind_name(it),
                it.message,
                it.files.len()
            )
        } else {
            format!(
                "{}  {:<5} {}  [{place}; {} files; {state}]",
                it.patch_id,
                kind_name(it),
                it.message,
                it.files.len()
            )
        };
        let _ = writeln!(out, "{line}");
    }
    out
}

fn kind_name(it: &HistoryItem) -> &'static str {
    match it.kind {
        crate::txn::history::Kind::Apply => "apply",
        crate::txn::history::Kind::Undo => "undo",
    }
}
