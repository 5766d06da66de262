//! One request type per operation: the command line's flags and the MCP tool's input schema are
//! both derived from it, so every field is in both, and each front end adds only its own.

use std::collections::BTreeSet;

use clap::CommandFactory;
use serde_json::Value;

/// The fields of a request type, from its JSON Schema.
fn fields<T: schemars::JsonSchema>() -> BTreeSet<String> {
    let schema = schemars::schema_for!(T);
    keys(&schema.as_value()["properties"])
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// A subcommand's flags (long names, `-` as `_`) and positionals.
fn flags(subcommand: &str) -> BTreeSet<String> {
    let cli = patchgate::cli::Cli::command();
    let sub = cli.find_subcommand(subcommand).expect("subcommand");
    sub.get_arguments()
        .filter_map(|a| match a.get_long() {
            Some(l) => Some(l.replace('-', "_")),
            None if a.is_positional() => Some(a.get_id().to_string()),
            None => None,
        })
        .collect()
}

fn tool_arguments(tool: &str) -> BTreeSet<String> {
    let tools = patchgate::mcp::tools::list();
    let t = tools.iter().find(|t| t.name == tool).expect("tool");
    keys(&Value::Object((*t.input_schema).clone())["properties"])
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Every field of `fields` is a flag and a tool argument; what else each side has is exactly
/// its adapter's own.
fn assert_one_request(
    fields: &BTreeSet<String>,
    subcommand: &str,
    tool: &str,
    cli_only: &[&str],
    mcp_only: &[&str],
) {
    let flags = flags(subcommand);
    let args = tool_arguments(tool);
    assert!(fields.len() >= 2, "{fields:?}");
    for f in fields {
        assert!(
            flags.contains(f),
            "`{f}` is not a flag of `{subcommand}`: {flags:?}"
        );
        assert!(
            args.contains(f),
            "`{f}` is not an argument of `{tool}`: {args:?}"
        );
    }
    assert_eq!(&flags - fields, set(cli_only), "{subcommand}'s own flags");
    assert_eq!(&args - fields, set(mcp_only), "{tool}'s own arguments");
}

#[test]
fn apply_flags_and_the_apply_patch_schema_come_from_one_request() {
    let fields = fields::<patchgate::ops::apply::Request>();
    for f in [
        "input", "strip", "dry_run", "commit", "branch", "checks", "gate", "timeout",
    ] {
        assert!(fields.contains(f), "the request lacks `{f}`");
    }
    assert_one_request(
        &fields,
        "apply",
        "apply_patch",
        // `jobs` is the command line's: a server uses one job per core.
        &["patch", "format", "jobs"],
        &["patch", "patch_text", "repository"],
    );
}

#[test]
fn check_detect_and_undo_flags_and_schemas_come_from_one_request_each() {
    assert_one_request(
        &fields::<patchgate::ops::check::Request>(),
        "check",
        "check",
        &["format", "jobs"],
        &["repository"],
    );
    let detect = fields::<patchgate::ops::detect::Request>();
    assert_eq!(detect, set(&["path"]));
    assert_eq!(&flags("detect") - &detect, set(&["format"]));
    assert_eq!(&tool_arguments("detect") - &detect, set(&["repository"]));
    assert_one_request(
        &fields::<patchgate::ops::undo::Request>(),
        "undo",
        "undo",
        &["format", "list"],
        &["repository"],
    );
}

#[test]
fn an_unknown_tool_argument_is_refused_with_the_known_ones() {
    let scope = patchgate::mcp::scope::Scope::new(std::env::temp_dir());
    let mut args = serde_json::Map::new();
    args.insert("patch".into(), serde_json::json!({"edits": []}));
    args.insert("dryrun".into(), Value::Bool(true));
    let Ok(r) = patchgate::mcp::tools::call("apply_patch", args, &scope) else {
        panic!("apply_patch is a tool");
    };
    assert_eq!(r.is_error, Some(true));
    let s = r.structured_content.expect("a report");
    assert_eq!(s["error"]["kind"], "usage", "{s}");
    let message = s["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("unknown field `dryrun`"), "{message}");
    assert!(message.contains("`dry_run`"), "{message}");
}

/// MCP's `patch` object is read as a value, with the same edits and the same refusals as the
/// same document given as text.
#[test]
fn a_patch_object_reads_as_the_same_document_as_text() {
    let doc = serde_json::json!({"message": "m", "edits": [
        {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true},
        {"file_path": "b.py", "create": true, "new_string": "y\n"},
        {"file_path": "c.py", "edits": [{"old_string": "p", "new_string": "q", "start_line": 2}]},
        {"file_path": "d.py", "create": true, "delete": true},
    ]});
    let text = patchgate::patch::parse(&doc.to_string(), "patch").expect("text");
    let value = patchgate::patch::parse_value(doc, "patch").expect("value");
    let shape = |p: &patchgate::patch::Patch| {
        p.edits
            .iter()
            .map(|e| {
                format!(
                    "{} {} {:?} {:?}",
                    e.index, e.file_path, e.op, e.expect_sha256
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(&value), shape(&text));
    assert_eq!(value.message.as_deref(), Some("m"));
    assert!(value.edits[3].op.is_err(), "an invalid edit stays invalid");

    let bad = serde_json::json!({"edits": [{"file_path": "a.py", "old_strin": "x"}]});
    let from_text = patchgate::patch::parse(&bad.to_string(), "patch").expect_err("text");
    let from_value = patchgate::patch::parse_value(bad, "patch").expect_err("value");
    let message = |e: &patchgate::Error| match e {
        patchgate::Error::Patch(p) => (p.message.clone(), p.help.clone()),
        other => panic!("not a patch error: {other}"),
    };
    assert_eq!(message(&from_value), message(&from_text));
    assert!(message(&from_value).0.contains("old_strin"));
}

/// An MCP client's `null` for an argument it does not set means the default, as before the
/// request types were shared.
#[test]
fn null_arguments_mean_their_defaults() {
    let r: patchgate::ops::apply::Request = serde_json::from_value(
        serde_json::json!({"checks": null, "gate": null, "input": null, "strip": null}),
    )
    .expect("nulls are defaults");
    assert_eq!(r.check.checks, "auto");
    assert_eq!(r.check.gate, patchgate::checks::Gate::New);
    assert_eq!(r.input, patchgate::patch::InputFormat::Auto);
    let r: patchgate::ops::check::Request =
        serde_json::from_value(serde_json::json!({"gate": "any"})).expect("gate");
    assert_eq!(r.settings.gate, patchgate::checks::Gate::Any);
}
