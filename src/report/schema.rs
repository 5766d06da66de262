//! The JSON Schema of the report that `--format json` prints (and `patchgate mcp` returns as
//! structured content). It states what every consumer may rely on: the top-level fields and
//! their types, the status values; inner objects stay open so that adding a field is never a
//! breaking change.

use serde_json::{Value, json};

/// The report's JSON Schema (draft 2020-12).
pub fn json_schema() -> Value {
    let nullable_string = json!({"type": ["string", "null"]});
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "patchgate report",
        "type": "object",
        "required": ["version", "status", "edits", "files", "checks", "verify"],
        "properties": {
            "version": {"type": "integer", "const": 1},
            "status": {"enum": [
                "applied", "committed", "dry_run", "clean", "rejected", "checks_failed", "error"
            ]},
            "commit": nullable_string,
            "branch": nullable_string,
            "edits": {"type": "array", "items": {
                "type": "object",
                "required": ["index", "file_path", "status", "suggestions"],
                "properties": {
                    "index": {"type": "integer", "minimum": 0},
                    "file_path": {"type": "string"},
                    "status": {"enum": [
                        "applied", "already_applied", "not_found", "ambiguous", "error"
                    ]},
                    "suggestions": {"type": "array", "items": {
                        "type": "object",
                        "required": ["start_line", "end_line", "similarity", "kind", "text"],
                        "properties": {
                            "start_line": {"type": "integer", "minimum": 1},
                            "end_line": {"type": "integer", "minimum": 1},
                            "similarity": {"type": "number"},
                            "kind": {"type": "string"},
                            "text": {"type": "string"}
                        }
                    }},
                    "message": nullable_string
                }
            }},
            "files": {"type": "array", "items": {
                "type": "object",
                "required": ["path", "change", "diff"],
                "properties": {
                    "path": {"type": "string"},
                    "change": {"enum": ["modified", "created", "deleted", "renamed"]},
                    "diff": {"type": "string"}
                }
            }},
            "checks": {"type": "array", "items": {
                "type": "object",
                "required": ["checker", "status"],
                "properties": {
                    "checker": {"type": "string"},
                    "status": {"type": "string"},
                    "findings": {"type": "array"}
                }
            }},
            "verify": {"type": "array", "items": {"type": "object"}},
            "error": {
                "type": "object",
                "required": ["kind", "message"],
                "properties": {
                    "kind": {"type": "string"},
                    "message": {"type": "string"},
                    "help": nullable_string
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::report::Report;

    /// Every required top-level field is in the JSON the code emits, with the type the schema says.
    #[test]
    fn an_error_report_has_every_required_field() {
        let schema = json_schema();
        let err = Error::Usage {
            message: "x".into(),
            help: "y".into(),
        };
        let report: Value =
            serde_json::from_str(&Report::from_error(&err).to_json()).expect("json");
        for field in schema["required"].as_array().expect("required") {
            let name = field.as_str().expect("name");
            assert!(report.get(name).is_some(), "{name} missing from {report}");
        }
        let statuses = schema["properties"]["status"]["enum"]
            .as_array()
            .expect("enum");
        assert!(statuses.contains(&report["status"]), "{}", report["status"]);
        assert!(report["error"]["kind"].is_string());
    }
}
