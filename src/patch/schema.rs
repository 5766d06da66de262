//! The JSON Schema of the patch file (`patchgate schema`).
//!
//! Written by hand rather than derived: the parser's raw types carry location wrappers that a
//! derive cannot describe, and a hand-written schema can say which keys go together (`oneOf`), which
//! is what an agent generating patches needs. A test keeps it in step with the parser's keys.

use serde_json::{Value, json};

pub fn json_schema() -> Value {
    let path = json!({"type": "string", "minLength": 1,
        "description": "Path relative to the repository root, or absolute inside it."});
    let within = json!({"type": "string", "minLength": 1, "pattern": "[^.:\\s]",
        "description": "Search old_string only inside this symbol's definition: a function, method, class, struct, enum, impl, trait or interface, nested with `.` or `::` (`Config.parse`). Python, JavaScript, TypeScript, Rust and Go files."});
    let guard = json!({"type": "string", "pattern": "^[0-9a-fA-F]{64}$",
        "description": "SHA-256 (hex) of the file's bytes as read before this patch; on a mismatch the edit is an error of kind `stale` and nothing is written."});
    let replacement_props = json!({
        "expect_sha256": guard,
        "old_string": {"type": "string", "minLength": 1, "description": "Exact text to replace (must differ from new_string)."},
        "new_string": {"type": "string", "description": "Replacement text; empty deletes the match."},
        "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence instead of requiring exactly one."},
        "start_line": {"type": "integer", "minimum": 1, "description": "Search only from this 1-based line (inclusive)."},
        "end_line": {"type": "integer", "minimum": 1, "description": "Search only up to this 1-based line (inclusive)."},
        "within": within.clone()
    });
    let mut replace_props = replacement_props.clone();
    replace_props["file_path"] = path.clone();
    let mut move_props = replacement_props.clone();
    move_props["file_path"] = path.clone();
    move_props["move_to"] =
        json!({"type": "string", "minLength": 1, "description": "New path; later edits use it."});

    let edit = json!({
        "oneOf": [
            {"title": "replace", "type": "object", "additionalProperties": false,
             "required": ["file_path", "old_string", "new_string"], "properties": replace_props},
            {"title": "group", "type": "object", "additionalProperties": false,
             "required": ["file_path", "edits"],
             "properties": {"file_path": path, "within": within, "expect_sha256": guard, "edits": {"type": "array", "items": {
                 "type": "object", "additionalProperties": false,
                 "required": ["old_string", "new_string"], "properties": replacement_props}}}},
            {"title": "create", "type": "object", "additionalProperties": false,
             "required": ["file_path", "create", "new_string"],
             "properties": {"file_path": path, "create": {"const": true}, "expect_sha256": guard,
                            "new_string": {"type": "string", "description": "The new file's content."}}},
            {"title": "delete", "type": "object", "additionalProperties": false,
             "required": ["file_path", "delete"],
             "properties": {"file_path": path, "delete": {"const": true}, "expect_sha256": guard}},
            {"title": "append", "type": "object", "additionalProperties": false,
             "required": ["file_path", "append", "new_string"],
             "properties": {"file_path": path, "append": {"const": true}, "expect_sha256": guard,
                            "new_string": {"type": "string", "minLength": 1,
                                           "description": "Appended text; a newline is added first if the file lacks one."}}},
            {"title": "move", "type": "object", "additionalProperties": false,
             "required": ["file_path", "move_to"], "properties": move_props}
        ]
    });
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "patchgate patch",
        "description": "A batch of edits applied all or nothing. Either a list of edits, or an object with `edits` and an optional commit `message`.",
        "$defs": {"edit": edit},
        "oneOf": [
            {"type": "array", "items": {"$ref": "#/$defs/edit"}},
            {"type": "object", "additionalProperties": false, "required": ["edits"],
             "properties": {"message": {"type": "string"},
                            "edits": {"type": "array", "items": {"$ref": "#/$defs/edit"}}}}
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every key the schema names is one the parser accepts, and the reverse: a new parser key
    /// without a schema entry (or a typo in either) fails here.
    #[test]
    fn schema_keys_match_the_parser() {
        let s = json_schema();
        let mut keys = BTreeSet::new();
        for variant in s["$defs"]["edit"]["oneOf"].as_array().into_iter().flatten() {
            for k in variant["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                keys.insert(k.clone());
            }
        }
        let parser: BTreeSet<String> = super::super::input::yaml_json::tests_support::EDIT_KEYS
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(keys, parser);
    }
}
