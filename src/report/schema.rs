//! The JSON Schema of the JSON report (`patchgate schema report`), for the consumers of
//! `--format json` of `apply`, `check` and `verify`.
//!
//! Invariants: every object whose shape the code fixes has `additionalProperties: false` and lists
//! every field the serialiser writes (optional ones are left out of `required`), so a field added
//! to [`Report`](super::Report) or its parts without a schema entry fails the tests that validate
//! real reports. The enums' values are produced by serialising every variant of the Rust enums,
//! and each list is guarded by an exhaustive `match`: a new variant does not compile until it is
//! listed here.

use serde::Serialize;
use serde_json::{Value, json};

use crate::plan::suggest::CandidateKind;
use crate::plan::{ChangeKind, EditStatus, MatchKind};

/// The JSON Schema (draft 2020-12) of the report.
pub fn json_schema() -> Value {
    let nullable_string = json!({"type": ["string", "null"]});
    let line = json!({"type": "integer", "minimum": 1});
    let suggestion = strict(
        json!({
            "start_line": line,
            "end_line": line,
            "similarity": {"type": "number", "minimum": 0, "maximum": 1},
            "kind": {"enum": candidate_kinds()},
            "text": {"type": "string", "description": "The file's actual text for those lines."},
            "note": {"type": "string", "description": "For `lines`: which line of old_string is missing from the file, or which file line is extra; for `symbol`: which line of old_string anchored it; for `stale`: which change replaced the text and where it is now."},
            "source": strict(
                json!({
                    "patch_id": {"type": "string", "description": "A patch in patchgate's history (`patchgate undo --list`) changed the text."},
                    "commit": {"type": "string", "pattern": "^[0-9a-f]{40}([0-9a-f]{24})?$", "description": "This commit changed the text."},
                    "uncommitted": {"const": true, "description": "The working tree's uncommitted changes changed the text (it is the file as committed in HEAD)."},
                    "subject": {"type": "string", "description": "The first line of the patch's or the commit's message."}
                }),
                &[],
                &["patch_id", "commit", "uncommitted", "subject"],
            )
        }),
        &["start_line", "end_line", "similarity", "kind", "text"],
        &["note", "source"],
    );
    let edit = strict(
        json!({
            "index": {"type": "integer", "minimum": 0,
                      "description": "The edit's position in the flattened patch (grouped edits one by one)."},
            "file_path": {"type": "string"},
            "status": {"enum": edit_statuses()},
            "match": {"enum": nullable(match_kinds())},
            "replacements": {"type": "integer", "minimum": 0},
            "lines": {"type": "array", "items": {
                "type": "array", "prefixItems": [line, line], "items": false,
                "minItems": 2, "maxItems": 2}},
            "suggestions": {"type": "array", "items": {"$ref": "#/$defs/suggestion"}},
            "message": nullable_string,
            "kind": {"enum": ["stale"], "description": "On an `error` edit whose expect_sha256 did not match the file."},
            "hunk": strict(
                json!({
                    "index": {"type": "integer", "minimum": 1,
                              "description": "The hunk's number in the patch, from 1."},
                    "header": {"type": "string", "description": "The hunk's header line as written."}
                }),
                &["index", "header"],
                &[],
            )
        }),
        &[
            "index",
            "file_path",
            "status",
            "match",
            "replacements",
            "lines",
            "suggestions",
            "message",
        ],
        &["hunk", "kind"],
    );
    let file = strict(
        json!({
            "path": {"type": "string"},
            "change": {"enum": change_kinds()},
            "from": {"type": "string", "description": "The old path of a renamed file."},
            "diff": {"type": "string", "description": "Unified diff of the file."},
            "sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$",
                       "description": "SHA-256 (hex) of the bytes written, after --fix; null for a deleted file or a symlink."},
            "mode": {
                "type": "object",
                "description": "git's mode of each side, where it matters: the mode changed, or a created or deleted file is an executable or a symlink.",
                "properties": {
                    "old": {"enum": ["100644", "100755", "120000", null], "description": "null: there was no file."},
                    "new": {"enum": ["100644", "100755", "120000", null], "description": "null: there is no file."}
                },
                "required": ["old", "new"],
                "additionalProperties": false
            }
        }),
        &["path", "change", "diff", "sha256"],
        &["from", "mode"],
    );
    let finding = strict(
        json!({
            "line": {"type": "integer", "minimum": 0, "description": "0: the whole file."},
            "column": {"type": "integer", "minimum": 0, "description": "0: no column."},
            "rule": {"type": "string"},
            "severity": {"enum": ["error", "warning", "info"]},
            "message": {"type": "string"},
            "new": {"type": "boolean", "description": "Introduced by the patch (only new findings block under --gate new)."}
        }),
        &["line", "column", "rule", "severity", "message", "new"],
        &[],
    );
    let check = strict(
        json!({
            "path": {"type": "string"},
            "checker": {"type": "string"},
            "kind": {"enum": ["format", "lint"]},
            "status": {"enum": ["pass", "fail", "missing", "error", "timeout", "skipped"]},
            "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
            "diff": nullable_string,
            "duration_ms": {"type": "integer", "minimum": 0},
            "note": {"type": "string"},
            "help": {"type": "string", "description": "What to run so the checker can run."}
        }),
        &[
            "path",
            "checker",
            "kind",
            "status",
            "findings",
            "diff",
            "duration_ms",
        ],
        &["note", "help"],
    );
    let failure = strict(
        json!({
            "name": {"type": "string"},
            "file": nullable_string,
            "line": {"type": ["integer", "null"], "minimum": 0},
            "message": {"type": "string"},
            "new": {"type": "boolean"}
        }),
        &["name", "file", "line", "message", "new"],
        &[],
    );
    let verify = strict(
        json!({
            "step": {"enum": ["build", "test", "typecheck"]},
            "project": {"type": "string"},
            "command": {"type": "string"},
            "status": {"enum": ["pass", "fail", "missing", "error", "timeout"]},
            "failures": {"type": "array", "items": {"$ref": "#/$defs/failure"}},
            "hints": {"type": "array", "items": {"type": "string"}},
            "duration_ms": {"type": "integer", "minimum": 0},
            "note": {"type": "string"},
            "baseline": {"enum": ["cached", "ran", "same", "unavailable"]}
        }),
        &[
            "step",
            "project",
            "command",
            "status",
            "failures",
            "hints",
            "duration_ms",
        ],
        &["note", "baseline"],
    );
    let error = strict(
        json!({
            "kind": {"enum": ERROR_KINDS},
            "message": {"type": "string"},
            "help": nullable_string,
            "line": line,
            "column": line
        }),
        &["kind", "message", "help"],
        &["line", "column"],
    );
    let mut report = strict(
        json!({
            "version": {"const": 1},
            "status": {"enum": report_statuses()},
            "commit": nullable_string,
            "branch": nullable_string,
            "edits": {"type": "array", "items": {"$ref": "#/$defs/edit"}},
            "patch_id": {"type": ["string", "null"],
                         "description": "What `patchgate undo` takes to revert this run's writes; null when nothing was written."},
            "undid": {"type": "string", "description": "For `undo`: the patch it reverted."},
            "changed_since": {"type": "array", "items": {"type": "string"},
                              "description": "For a refused `undo`: the files that changed since the patch wrote them."},
            "files": {"type": "array", "items": {"$ref": "#/$defs/file"}},
            "checks": {"type": "array", "items": {"$ref": "#/$defs/check"}},
            "verify": {"type": "array", "items": {"$ref": "#/$defs/verify"}},
            "error": {"$ref": "#/$defs/error"}
        }),
        &[
            "version", "status", "commit", "branch", "edits", "patch_id", "files", "checks",
            "verify",
        ],
        &["error", "undid", "changed_since"],
    );
    report["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    report["title"] = json!("patchgate report");
    report["description"] = json!(
        "The one JSON object `patchgate apply|check|verify --format json` prints on stdout (docs/report.md)."
    );
    report["$defs"] = json!({
        "edit": edit, "suggestion": suggestion, "file": file, "check": check,
        "finding": finding, "verify": verify, "failure": failure, "error": error
    });
    report
}

/// Every `error.kind` the report can carry ([`crate::error::Error::kind`], and `internal` for a report
/// that could not be serialised).
pub(super) const ERROR_KINDS: &[&str] = &[
    "invalid_patch",
    "usage",
    "config",
    "invalid_edits",
    "not_a_repository",
    "bare_repository",
    "git",
    "concurrent_modification",
    "invalid_state",
    "no_identity",
    "ref_moved",
    "operation_in_progress",
    "index_locked",
    "inside_git_command",
    "busy",
    "branch_checked_out",
    "recover_failed",
    "rollback_failed",
    "unknown_patch",
    "nothing_to_undo",
    "already_undone",
    "changed_since",
    "io",
    "internal",
];

/// An object schema with exactly these properties.
fn strict(properties: Value, required: &[&str], optional: &[&str]) -> Value {
    debug_assert_eq!(
        properties.as_object().map_or(0, |o| o.len()),
        required.len() + optional.len()
    );
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": properties
    })
}

fn nullable(mut values: Vec<Value>) -> Vec<Value> {
    values.push(Value::Null);
    values
}

fn names<T: Serialize>(all: &[T]) -> Vec<Value> {
    all.iter()
        .map(|v| serde_json::to_value(v).unwrap_or(Value::Null))
        .collect()
}

fn report_statuses() -> Vec<Value> {
    use super::Status as S;
    // A new status must be listed below before this compiles.
    let _exhaustive = |s: S| match s {
        S::Applied | S::Committed | S::DryRun | S::Clean | S::Rejected | S::ChecksFailed => {}
        S::Error => {}
    };
    names(&[
        S::Applied,
        S::Committed,
        S::DryRun,
        S::Clean,
        S::Rejected,
        S::ChecksFailed,
        S::Error,
    ])
}

fn edit_statuses() -> Vec<Value> {
    use EditStatus as S;
    let _exhaustive = |s: S| match s {
        S::Applied | S::AlreadyApplied | S::NotFound | S::Ambiguous | S::Error => {}
    };
    names(&[
        S::Applied,
        S::AlreadyApplied,
        S::NotFound,
        S::Ambiguous,
        S::Error,
    ])
}

fn match_kinds() -> Vec<Value> {
    use MatchKind as M;
    let _exhaustive = |m: M| match m {
        M::Exact | M::Whitespace | M::Unicode => {}
    };
    names(&[M::Exact, M::Whitespace, M::Unicode])
}

fn candidate_kinds() -> Vec<Value> {
    use CandidateKind as C;
    let _exhaustive = |c: C| match c {
        C::Whitespace | C::Unicode | C::Lines | C::Fuzzy | C::Symbol | C::Stale => {}
    };
    names(&[
        C::Whitespace,
        C::Unicode,
        C::Lines,
        C::Fuzzy,
        C::Symbol,
        C::Stale,
    ])
}

fn change_kinds() -> Vec<Value> {
    use ChangeKind as C;
    let _exhaustive = |c: C| match c {
        C::Modified | C::Created | C::Deleted | C::Renamed => {}
    };
    names(&[C::Modified, C::Created, C::Deleted, C::Renamed])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The enums written by hand (checks, verify, severities) are those the serialiser writes.
    #[test]
    fn hand_written_enums_match_the_serialisers() {
        use crate::checks::finding::Severity;
        use crate::checks::{Kind, Status as CheckStatus};
        use crate::verify::run::{BaselineUse, Status as VerifyStatus, Step};
        let s = json_schema();
        let d = &s["$defs"];
        let enum_of = |v: &Value| v["enum"].as_array().cloned().unwrap_or_default();
        let _e = |k: CheckStatus| match k {
            CheckStatus::Pass
            | CheckStatus::Fail
            | CheckStatus::Missing
            | CheckStatus::Error
            | CheckStatus::Timeout
            | CheckStatus::Skipped => {}
        };
        assert_eq!(
            enum_of(&d["check"]["properties"]["status"]),
            names(&[
                CheckStatus::Pass,
                CheckStatus::Fail,
                CheckStatus::Missing,
                CheckStatus::Error,
                CheckStatus::Timeout,
                CheckStatus::Skipped
            ])
        );
        let _e = |k: Kind| match k {
            Kind::Format | Kind::Lint => {}
        };
        assert_eq!(
            enum_of(&d["check"]["properties"]["kind"]),
            names(&[Kind::Format, Kind::Lint])
        );
        let _e = |k: Severity| match k {
            Severity::Error | Severity::Warning | Severity::Info => {}
        };
        assert_eq!(
            enum_of(&d["finding"]["properties"]["severity"]),
            names(&[Severity::Error, Severity::Warning, Severity::Info])
        );
        let _e = |k: VerifyStatus| match k {
            VerifyStatus::Pass
            | VerifyStatus::Fail
            | VerifyStatus::Missing
            | VerifyStatus::Error
            | VerifyStatus::Timeout => {}
        };
        assert_eq!(
            enum_of(&d["verify"]["properties"]["status"]),
            names(&[
                VerifyStatus::Pass,
                VerifyStatus::Fail,
                VerifyStatus::Missing,
                VerifyStatus::Error,
                VerifyStatus::Timeout
            ])
        );
        let _e = |k: Step| match k {
            Step::Build | Step::Test | Step::Typecheck => {}
        };
        assert_eq!(
            enum_of(&d["verify"]["properties"]["step"]),
            names(&[Step::Build, Step::Test, Step::Typecheck])
        );
        let _e = |k: BaselineUse| match k {
            BaselineUse::Cached
            | BaselineUse::Ran
            | BaselineUse::Same
            | BaselineUse::Unavailable => {}
        };
        assert_eq!(
            enum_of(&d["verify"]["properties"]["baseline"]),
            names(&[
                BaselineUse::Cached,
                BaselineUse::Ran,
                BaselineUse::Same,
                BaselineUse::Unavailable
            ])
        );
    }

    /// The schema lists exactly the error kinds there are ([`Kind::ALL`], which a test in
    /// error.rs holds to the variants).
    #[test]
    fn error_kinds_cover_the_errors() {
        use crate::error::Kind;
        let all: std::collections::BTreeSet<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        let listed: std::collections::BTreeSet<&str> = ERROR_KINDS.iter().copied().collect();
        assert_eq!((listed, ERROR_KINDS.len()), (all, Kind::ALL.len()));
    }
}
