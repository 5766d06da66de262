//! The result of a run, in the shape docs/report.md describes, its four renderings (human,
//! markdown, JSON, SARIF), and the JSON Schema of its JSON form ([`json_schema`]).
//!
//! [`Report`] serialises to exactly the documented JSON object (`version`, `status`, `commit`,
//! `branch`, `edits`, `patch_id`, `files`, `checks`, `verify`), plus an `error` object when the run ended in
//! invalid input or an environment problem, so a caller always learns why from the same stream.
//! Fields the renderers need but JSON consumers do not (snippets for miette, the patch text) are
//! skipped by serde.

mod checks;
mod human;
mod markdown;
pub mod rendered;
mod sarif;
mod schema;
mod source;

pub use human::render_human;
pub use markdown::render_markdown;
pub use sarif::{render_sarif, sarif_log};
pub use schema::json_schema;

use std::collections::HashMap;

use serde::Serialize;

pub use rendered::Rendered;

use crate::error::{Error, Exit, Kind};
use crate::patch::PatchSource;
use crate::plan::suggest::CandidateKind;
use crate::plan::{
    ChangeKind, EditOutcome, EditStatus, ErrorKind, FileChange, MatchKind, Plan, Snippet,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Applied,
    Committed,
    DryRun,
    /// `patchgate check`: every check passed.
    Clean,
    Rejected,
    ChecksFailed,
    Error,
}

impl Status {
    /// The exit code of a run that ended in this status; `error` is the error's kind when the
    /// status is `Error` (a report without one is a bug: exit 4, as `internal`).
    pub fn exit(self, error: Option<Kind>) -> Exit {
        match self {
            Status::Applied | Status::Committed | Status::DryRun | Status::Clean => Exit::Success,
            Status::ChecksFailed => Exit::ChecksFailed,
            Status::Rejected => Exit::EditFailed,
            Status::Error => error.unwrap_or(Kind::Internal).exit(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub version: u32,
    pub status: Status,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub edits: Rendered<Vec<EditReport>>,
    /// The id `patchgate undo` takes for what this run wrote (`None`: nothing was written).
    pub patch_id: Option<String>,
    /// For `undo`: the patch it reverted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undid: Option<String>,
    /// For `undo` refused: every file that changed since the patch wrote it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed_since: Vec<String>,
    pub files: Rendered<Vec<FileReport>>,
    pub checks: Vec<crate::checks::CheckReport>,
    pub verify: Vec<crate::verify::run::VerifyReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorReport>,
    #[serde(skip)]
    pub patch: Option<PatchSource>,
    /// Notes for humans (e.g. "checks are not run by this build"), shown on stderr.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// The repository's root, when the run found one: SARIF's `%SRCROOT%`.
    #[serde(skip)]
    pub root: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EditReport {
    pub index: usize,
    pub file_path: String,
    pub status: EditStatus,
    #[serde(rename = "match")]
    pub match_kind: Option<MatchKind>,
    pub replacements: usize,
    pub lines: Vec<[usize; 2]>,
    pub suggestions: Vec<SuggestionReport>,
    pub message: Option<String>,
    /// The hunk of a codex, aider or diff patch this edit came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hunk: Option<crate::patch::Hunk>,
    /// Present on some `error` edits: `"stale"` when `expect_sha256` did not match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<ErrorKind>,
    #[serde(skip)]
    pub invalid: bool,
    #[serde(skip)]
    pub patch_span: Option<miette::SourceSpan>,
    #[serde(skip)]
    pub snippet: Option<Snippet>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SuggestionReport {
    pub start_line: usize,
    pub end_line: usize,
    pub similarity: f64,
    pub kind: CandidateKind,
    /// For `lines`: which line of `old_string` is not in the file, or which file lines are not
    /// in `old_string`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub text: String,
    /// For `stale`: the change that replaced the text `old_string` still has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceReport>,
}

/// What changed a file since the text of a `stale` suggestion's `old_string`: one of a patch in
/// patchgate's history (`patch_id`), a commit (`commit`), or the working tree's uncommitted
/// changes (`uncommitted`); with the patch's or commit's subject.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SourceReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub uncommitted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl From<&crate::plan::suggest::ChangeSource> for SourceReport {
    fn from(s: &crate::plan::suggest::ChangeSource) -> SourceReport {
        use crate::plan::suggest::ChangeSource as C;
        match s {
            C::Patch { id, subject } => SourceReport {
                patch_id: Some(id.clone()),
                subject: Some(subject.clone()),
                ..SourceReport::default()
            },
            C::Commit { id, subject } => SourceReport {
                commit: Some(id.clone()),
                subject: Some(subject.clone()),
                ..SourceReport::default()
            },
            C::Uncommitted => SourceReport {
                uncommitted: true,
                ..SourceReport::default()
            },
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub path: String,
    pub change: ChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub diff: String,
    /// SHA-256 (hex) of the bytes written (after `--fix`); `None` for a deleted file or a
    /// symlink.
    pub sha256: Option<String>,
    /// git's mode of each side, where it matters: the mode changed, or a created or deleted
    /// file is an executable or a symlink.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ModeReport>,
    #[serde(skip)]
    pub added: usize,
    #[serde(skip)]
    pub removed: usize,
}

/// `files[].mode`: git's modes as it writes them (`100644`, `100755`, `120000`); `null` where
/// there is no file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModeReport {
    pub old: Option<String>,
    pub new: Option<String>,
}

impl ModeReport {
    /// ` (mode 100644 -> 100755)` after a file's line in the human and markdown reports.
    pub(crate) fn note(m: Option<&ModeReport>, arrow: &str) -> String {
        let Some(m) = m else {
            return String::new();
        };
        let name = |s: &Option<String>| s.clone().unwrap_or_else(|| "none".into());
        format!(" (mode {} {arrow} {})", name(&m.old), name(&m.new))
    }

    /// The modes of a changed file, when the report shows them.
    fn of(f: &FileChange) -> Option<ModeReport> {
        let (old, new) = f.modes;
        let plain = |m: Option<u32>| m.is_none_or(|m| m == 0o100644);
        if old == new || (plain(old) && plain(new)) && (old.is_none() || new.is_none()) {
            return None;
        }
        let name = |m: Option<u32>| m.map(|m| format!("{m:o}"));
        Some(ModeReport {
            old: name(old),
            new: name(new),
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ErrorReport {
    pub kind: Kind,
    pub message: String,
    pub help: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Serialize for EditStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            EditStatus::Applied => "applied",
            EditStatus::AlreadyApplied => "already_applied",
            EditStatus::NotFound => "not_found",
            EditStatus::Ambiguous => "ambiguous",
            EditStatus::Error => "error",
        })
    }
}

impl Serialize for MatchKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            MatchKind::Exact => "exact",
            MatchKind::Whitespace => "whitespace",
            MatchKind::Unicode => "unicode",
        })
    }
}

impl Serialize for CandidateKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(candidate_kind_name(*self))
    }
}

pub(crate) fn candidate_kind_name(k: CandidateKind) -> &'static str {
    k.name()
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            ErrorKind::Stale => "stale",
        })
    }
}

impl Serialize for ChangeKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// ` (hunk 2 `@@ -3 +3 @@`)` after an edit's name, or nothing.
pub(crate) fn hunk_note(e: &EditReport) -> String {
    match &e.hunk {
        Some(h) => format!(", hunk {} `{}`", h.index, h.header),
        None => String::new(),
    }
}

pub(crate) fn status_name(s: EditStatus) -> &'static str {
    match s {
        EditStatus::Applied => "applied",
        EditStatus::AlreadyApplied => "already_applied",
        EditStatus::NotFound => "not_found",
        EditStatus::Ambiguous => "ambiguous",
        EditStatus::Error => "error",
    }
}

impl Report {
    /// A report with nothing in it yet.
    pub fn empty(status: Status) -> Report {
        Report {
            version: 1,
            status,
            commit: None,
            branch: None,
            edits: Rendered::default(),
            patch_id: None,
            undid: None,
            changed_since: Vec::new(),
            files: Rendered::default(),
            checks: Vec::new(),
            verify: Vec::new(),
            error: None,
            patch: None,
            notes: Vec::new(),
            root: None,
        }
    }

    /// A run that ended before any edit was looked at.
    pub fn from_error(err: &Error) -> Report {
        let mut r = Report::empty(Status::Error);
        r.error = Some(error_report(err));
        r
    }

    /// The report of a plan; the status is set by the caller once it knows what was done.
    /// The edits' outcomes; the changed files (with their diffs, the costly part) are listed by
    /// [`Report::list_files`] (or [`file_reports`], while the transaction runs) once the batch is
    /// known to be written (or a dry run), so a rejected batch never computes diffs it would not
    /// show.
    pub fn from_plan(plan: &Plan, patch: &PatchSource) -> Report {
        let mut r = Report::empty(Status::Applied);
        r.patch = Some(patch.clone());
        r.edits = plan
            .outcomes
            .iter()
            .map(edit_report)
            .collect::<Vec<_>>()
            .into();
        r
    }

    /// Lists the plan's changed files, with the contents as finally written (after `--fix`).
    pub fn list_files(&mut self, plan: &Plan) {
        self.files = file_reports(plan).into();
    }

    /// A batch that is not written: edits that verified say so, and no file is listed as changed.
    pub fn mark_unwritten(&mut self, why: &str) {
        self.files.clear();
        for e in &mut self.edits {
            if e.status == EditStatus::Applied && e.message.is_none() {
                e.message = Some(format!("verified, but not written: {why}"));
            }
        }
    }

    /// Marks the run failed by an error after planning (edit outcomes stay visible).
    pub fn fail(&mut self, err: &Error) {
        self.status = Status::Error;
        self.error = Some(error_report(err));
    }

    /// The process exit code: a function of the status (and, for `error`, of the error's kind),
    /// so that no command sets it by hand.
    pub fn exit(&self) -> Exit {
        self.status.exit(self.error.as_ref().map(|e| e.kind))
    }

    /// [`Report::to_json`] and a line break, written to `out` as it is made: a large batch's
    /// report (600 KB for 1,000 edits) is never held whole in memory, let alone twice.
    pub fn write_json(&self, out: impl std::io::Write) -> std::io::Result<()> {
        use std::io::Write;
        let mut out = std::io::BufWriter::with_capacity(64 << 10, out);
        let _renderings = rendered::WritingJson::start();
        // Keeps an I/O error's kind (a closed pipe is not an error to report).
        serde_json::to_writer_pretty(&mut out, self).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        out.flush()
    }

    pub fn to_json(&self) -> String {
        let _renderings = rendered::WritingJson::start();
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"version\":1,\"status\":\"error\",\"error\":{{\"kind\":\"internal\",\"message\":\"{e}\"}}}}"))
    }
}

pub(crate) fn error_report(err: &Error) -> ErrorReport {
    let (line, column) = match err {
        Error::Patch(p) => (p.line, p.column),
        _ => (None, None),
    };
    ErrorReport {
        kind: err.kind(),
        message: err.to_string(),
        help: err.help_text(),
        line,
        column,
    }
}

impl EditReport {
    /// About the size of its pretty JSON, less a few hundred bytes of fixed fields: its free
    /// text (message, suggestions) and its line ranges (one per replacement of a `replace_all`).
    pub fn text_len(&self) -> usize {
        let suggestions: usize = self.suggestions.iter().map(|s| 128 + s.text.len()).sum();
        self.message.as_ref().map_or(0, String::len) + suggestions + 64 * self.lines.len()
    }
}

fn edit_report(o: &EditOutcome) -> EditReport {
    EditReport {
        index: o.index,
        file_path: o.file_path.clone(),
        status: o.status,
        match_kind: o.match_kind,
        replacements: o.replacements,
        lines: o.lines.iter().map(|(a, b)| [*a, *b]).collect(),
        suggestions: o
            .suggestions
            .iter()
            .map(|s| SuggestionReport {
                start_line: s.start_line,
                end_line: s.end_line,
                similarity: s.similarity,
                kind: s.kind,
                note: s.note.clone(),
                text: s.text.clone(),
                source: s.source.as_ref().map(SourceReport::from),
            })
            .collect(),
        message: o.message.clone(),
        hunk: o.origin.clone(),
        kind: o.error_kind,
        invalid: o.invalid,
        patch_span: o.patch_span,
        snippet: o.snippet.clone(),
    }
}

/// The per-file diffs, computed in parallel: for a large batch they are the biggest part of
/// building the report.
pub fn file_reports(plan: &Plan) -> Vec<FileReport> {
    file_reports_with(plan, true)
}

/// [`file_reports`], on this thread alone unless `share` (and the diffs are worth sharing).
pub fn file_reports_with(plan: &Plan, share: bool) -> Vec<FileReport> {
    // The plan hashed every path's new content already (for the re-run record).
    let hashed: HashMap<&str, &str> = plan
        .final_state
        .iter()
        .filter_map(|(path, h)| Some((path.as_str(), h.as_deref()?)))
        .collect();
    let size = |f: &FileChange| {
        f.before.as_ref().map_or(0, |b| b.len()) + f.after.as_ref().map_or(0, |b| b.len())
    };
    let report = |f: &FileChange| file_report(f, hashed.get(f.path.as_str()).copied());
    match share {
        true => crate::par::map_sized(&plan.files, size, report),
        false => plan.files.iter().map(report).collect(),
    }
}

/// `after_sha256`: the SHA-256 of `f`'s new content when it is known.
fn file_report(f: &FileChange, after_sha256: Option<&str>) -> FileReport {
    let old_name = f.from.as_deref().unwrap_or(&f.path);
    // A symlink's diff is the one of its target's text, as git shows it.
    fn side<'f>(
        bytes: &'f Option<std::sync::Arc<Vec<u8>>>,
        link: &'f Option<std::path::PathBuf>,
    ) -> Option<&'f [u8]> {
        match link {
            Some(t) => Some(t.as_os_str().as_encoded_bytes()),
            None => bytes.as_deref().map(Vec::as_slice),
        }
    }
    let (before, after) = (side(&f.before, &f.links.0), side(&f.after, &f.links.1));
    let mode = ModeReport::of(f);
    let (mut diff, added, removed) = match (before, after, &f.changed, &f.links) {
        (Some(b), Some(a), _, _) if b == a => (String::new(), 0, 0),
        (Some(b), Some(a), Some(changed), (None, None)) if f.from.is_none() => {
            crate::text::unified_diff_within(&f.path, b, a, changed)
        }
        _ => crate::text::unified_diff(old_name, &f.path, before, after),
    };
    if let Some(m) = &mode {
        let header = match (&m.old, &m.new) {
            (Some(o), Some(n)) => format!("old mode {o}\nnew mode {n}\n"),
            (None, Some(n)) => format!("new file mode {n}\n"),
            (Some(o), None) => format!("deleted file mode {o}\n"),
            (None, None) => String::new(),
        };
        diff.insert_str(0, &header);
    }
    FileReport {
        path: f.path.clone(),
        change: f.change,
        from: f.from.clone(),
        diff,
        sha256: f.after.as_deref().map(|b| match after_sha256 {
            Some(h) => h.to_string(),
            None => {
                use sha2::{Digest, Sha256};
                format!("{:x}", Sha256::digest(b))
            }
        }),
        mode,
        added,
        removed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Kind;

    /// The documented exit code of every status (docs/report.md), spelled out: no wildcard, so a
    /// new status does not compile until it has one.
    fn documented(s: Status) -> i32 {
        match s {
            Status::Applied | Status::Committed | Status::DryRun | Status::Clean => 0,
            Status::ChecksFailed => 1,
            Status::Rejected => 2,
            Status::Error => unreachable!("depends on the error's kind"),
        }
    }

    #[test]
    fn the_exit_code_follows_the_status() {
        for s in [
            Status::Applied,
            Status::Committed,
            Status::DryRun,
            Status::Clean,
            Status::ChecksFailed,
            Status::Rejected,
        ] {
            assert_eq!(Report::empty(s).exit().code(), documented(s), "{s:?}");
        }
        // `error`: the error's kind decides, whatever was planned before it.
        let invalid = Error::InvalidEdits { count: 1, total: 1 };
        let mut r = Report::empty(Status::Rejected);
        r.fail(&invalid);
        assert_eq!((r.status, r.exit().code()), (Status::Error, 3));
        let busy = Error::Busy { pid: 1 };
        assert_eq!(Report::from_error(&busy).exit().code(), 4);
        for k in Kind::ALL {
            assert_eq!(Status::Error.exit(Some(*k)), k.exit(), "{k}");
        }
        // An `error` report always carries its error; one without is a bug, reported as such.
        assert_eq!(Status::Error.exit(None), Kind::Internal.exit());
    }

    #[test]
    fn the_json_kind_is_the_errors_name() {
        let r = Report::from_error(&Error::RepoState {
            state: "rebase".into(),
        });
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).expect("json");
        assert_eq!(v["error"]["kind"], "operation_in_progress");
        assert_eq!(v["status"], "error");
        assert!(v.get("exit").is_none(), "{v}");
    }

    /// `write_json` prints the same bytes whether the edits and files were rendered ahead of
    /// time or not; a change made after the rendering shows (any mutable access drops it); and
    /// no serialisation but `write_json` and `to_json` (the same layout) uses a rendering (one
    /// kept on purpose for other values shows only there).
    #[test]
    fn renderings_made_ahead_print_what_the_report_holds() {
        let edit = |index: usize, message: Option<&str>| EditReport {
            index,
            file_path: format!("src/ünïcode {index}.py"),
            status: EditStatus::Applied,
            match_kind: Some(MatchKind::Exact),
            replacements: 1,
            lines: vec![[index + 1, index + 3]],
            suggestions: vec![SuggestionReport {
                start_line: 4,
                end_line: 5,
                similarity: 0.93,
                kind: CandidateKind::Whitespace,
                text: "\tquote \" and\nline".into(),
                note: None,
                source: None,
            }],
            message: message.map(str::to_string),
            hunk: None,
            kind: None,
            invalid: false,
            patch_span: None,
            snippet: None,
        };
        let file = |path: &str| FileReport {
            path: path.into(),
            change: ChangeKind::Modified,
            from: None,
            diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b \"q\"\n".into(),
            sha256: Some("ab".repeat(32)),
            mode: None,
            added: 1,
            removed: 1,
        };
        let mut report = Report::empty(Status::Applied);
        report.edits = vec![edit(0, None), edit(1, Some("m"))].into();
        report.files = vec![file("a.py"), file("b/c.py")].into();
        report.patch_id = Some("p1".into());
        let json = |r: &Report| {
            let mut out = Vec::new();
            r.write_json(&mut out).expect("write");
            String::from_utf8(out).expect("utf8")
        };
        let plain = json(&report);
        report.edits.keep(rendered::render(&*report.edits));
        report.files.keep(rendered::render(&*report.files));
        assert_eq!(json(&report), plain);
        // Empty lists, rendered.
        let mut empty = Report::empty(Status::Applied);
        let plain_empty = json(&empty);
        empty.edits.keep(rendered::render(&*empty.edits));
        assert_eq!(json(&empty), plain_empty);
        // A change after the rendering: by index, by iteration, by clearing.
        report.edits[1].message = Some("changed".into());
        assert!(json(&report).contains("\"changed\""));
        report.edits.keep(rendered::render(&*report.edits));
        for e in &mut report.edits {
            e.replacements = 7;
        }
        assert!(json(&report).contains("\"replacements\": 7"));
        report.files.clear();
        assert!(json(&report).contains("\"files\": []"));
        // A rendering of something else shows in `write_json` and `to_json` only (the MCP
        // server's `serde_json::to_value` sees the value).
        report.files = vec![file("a.py")].into();
        report.files.keep(rendered::render(&vec![file("other.py")]));
        assert!(json(&report).contains("other.py"));
        assert!(report.to_json().contains("other.py"));
        let value = serde_json::to_value(&report).expect("value");
        assert_eq!(value["files"][0]["path"], "a.py");
        let compact = serde_json::to_string(&report).expect("json");
        assert!(compact.contains("a.py") && !compact.contains("other.py"));
        // Large fields are not rendered ahead; an edit's size counts its line ranges (a
        // `replace_all` has one per replacement).
        assert!(rendered::render_ahead(&vec![1u8], 10).is_some());
        assert!(rendered::render_ahead(&vec![1u8], rendered::AHEAD_MAX + 1).is_none());
        let mut many = edit(0, None);
        many.lines = vec![[1, 1]; 40_000];
        let pretty = serde_json::to_string_pretty(&many).expect("json").len();
        assert!(
            many.text_len() + 512 >= pretty / 2,
            "{} for {pretty}",
            many.text_len()
        );
    }

    /// A file's `sha256` is the hash of its new content, whether the plan hashed it already (a
    /// batch) or not (an undo's plan has no final state), and follows a `--fix` rewrite.
    #[test]
    fn file_sha256_is_the_new_contents() {
        use crate::plan::Disk;
        use sha2::{Digest, Sha256};
        let file = |b: &[u8]| Disk::File {
            bytes: std::sync::Arc::new(b.to_vec()),
            mode: 0o644,
        };
        let change = FileChange::new(
            "a.py".into(),
            None,
            ChangeKind::Modified,
            &file(b"x = 1\n"),
            &file(b"x = 2\n"),
        );
        let mut plan = Plan {
            outcomes: Vec::new(),
            changes: Vec::new(),
            files: vec![change],
            digests: Vec::new(),
            patch_digest: None,
            final_state: Vec::new(),
        };
        let hex = |b: &[u8]| format!("{:x}", Sha256::digest(b));
        let sha = |plan: &Plan| file_reports(plan)[0].sha256.clone();
        assert_eq!(sha(&plan), Some(hex(b"x = 2\n")));
        plan.final_state = vec![("a.py".into(), Some(hex(b"x = 2\n")))];
        assert_eq!(sha(&plan), Some(hex(b"x = 2\n")));
        plan.set_after("a.py", b"x = 3\n".to_vec());
        assert_eq!(sha(&plan), Some(hex(b"x = 3\n")));
        let report = &file_reports(&plan)[0];
        assert!(report.diff.contains("+x = 3"), "{}", report.diff);
    }
}
