//! The tools `patchgate mcp` offers: their arguments (and the JSON Schemas derived from them),
//! the descriptions that teach an agent the contract, and each call run by the operation the
//! command line runs too ([`crate::ops`]). A tool's arguments are that operation's request
//! (the same type the command line's flags come from), flattened, plus what only MCP has: the
//! patch inline, and `repository`.
//!
//! Invariant: every outcome of a known tool is a tool result, never a protocol error. A rejected
//! patch, failed checks, an invalid patch or argument, a path outside the scope and an
//! environment problem are results with `isError: true` that carry the report: its markdown as
//! text, its JSON as structured content (an error report from [`Report::from_error`] when the run
//! could not start).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Exit};
use crate::ops::{self, Context};
use crate::report::{Report, render_markdown};

use super::scope::Scope;

const APPLY_PATCH: &str = "\
Apply a batch of edits to files of the repository, all or nothing, then run the project's own \
formatters and linters on the result and gate on what the patch introduced.

Give the patch as `patch` (an object: {\"edits\": [{\"file_path\", \"old_string\", \"new_string\"}, ...]}, \
the same shape as a patch file; an entry may also `create`, `delete`, `append` or `move_to`) or as \
`patch_text` (YAML/JSON, a codex `*** Begin Patch` envelope, aider SEARCH/REPLACE blocks or a \
unified diff). Each `old_string` must occur exactly once (or set `replace_all`).

Nothing is written unless every edit verifies and the checks pass. A miss returns isError with \
the report: that edit is `not_found` or `ambiguous`, with `suggestions` (line range, similarity, \
kind, and `text`, the file's real text there). Retry with a suggestion's `text` as `old_string`. \
`dry_run: true` verifies and checks without writing. The result is the report: markdown as text, \
JSON as structured content (status, edits, files with diffs, checks with findings).";

const CHECK: &str = "\
Run the project's own formatters and linters on files as they are: `paths` (files or directories \
of the repository), or every file changed since HEAD; with `staged: true`, the staged content \
(what a commit would record), whatever the working tree holds. Writes nothing. isError when a \
check fails under the gate (`new`: only findings on changed lines block; `any`; `off`). The \
result is the report: markdown as text, JSON as structured content.";

const DETECT: &str = "\
Show which checkers apply to a path (a file, or one file per project under a directory; default \
the repository root), whether each project uses them and on what evidence, and where each \
checker's program is. Writes nothing.";

const UNDO: &str = "\
Revert a patch this repository's patchgate wrote: `patch_id` (from an earlier apply_patch result) \
or, without it, the last patch still in effect. Files are restored only if each still holds \
exactly what that patch wrote; otherwise isError names every file that changed since and \
nothing is written. A committed patch gets a revert commit on its branch. The result has its own \
`patch_id`: undoing that redoes the patch. `dry_run: true` shows what would be restored.";

/// `undo`'s arguments: its request, and where.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UndoArgs {
    #[serde(flatten)]
    pub request: ops::undo::Request,
    /// The repository to work in (default: the one the server was started in).
    pub repository: Option<String>,
}

/// `apply_patch`'s arguments: the patch (an object or text, where the command line reads a
/// file), its request, and where.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch as an object, the same shape as a patch file:
    /// {"message"?: string, "edits": [{"file_path", "old_string", "new_string", "replace_all"?}, ...]}
    /// or just the list of edits.
    pub patch: Option<Value>,
    /// The patch as text, in any input format (see `input`).
    pub patch_text: Option<String>,
    #[serde(flatten)]
    pub request: ops::apply::Request,
    /// The repository to work in, if the client's roots hold several (default: the one the
    /// server was started in).
    pub repository: Option<String>,
}

/// `check`'s arguments: its request, and where.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CheckToolArgs {
    #[serde(flatten)]
    pub request: ops::check::Request,
    /// The repository to work in (default: the one the server was started in).
    pub repository: Option<String>,
}

/// `detect`'s arguments: its request, and where.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DetectArgs {
    #[serde(flatten)]
    pub request: ops::detect::Request,
    /// The repository to work in (default: the one the server was started in).
    pub repository: Option<String>,
}

/// Every tool the server lists.
pub fn list() -> Vec<Tool> {
    let report = report_schema();
    let detect_out: JsonObject = match serde_json::json!({
        "type": "object",
        "properties": {
            "files": {"type": "array", "items": {"type": "object"}},
            "error": {"type": "object"}
        }
    }) {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    };
    vec![
        Tool::new(
            "apply_patch",
            APPLY_PATCH,
            schema_for_type::<ApplyPatchArgs>(),
        )
        .with_title("Apply a patch, all or nothing")
        .with_raw_output_schema(Arc::clone(&report))
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(true)
                .open_world(false),
        ),
        Tool::new("check", CHECK, schema_for_type::<CheckToolArgs>())
            .with_title("Run the project's checkers")
            .with_raw_output_schema(report)
            .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        Tool::new("detect", DETECT, schema_for_type::<DetectArgs>())
            .with_title("Which checkers apply, and why")
            .with_raw_output_schema(Arc::new(detect_out))
            .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        Tool::new("undo", UNDO, schema_for_type::<UndoArgs>())
            .with_title("Revert a written patch, if nothing changed since")
            .with_raw_output_schema(report_schema())
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(false)
                    .destructive(true)
                    .idempotent(false)
                    .open_world(false),
            ),
    ]
}

fn report_schema() -> Arc<JsonObject> {
    match crate::report::json_schema() {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

/// A tool the server does not have.
pub struct UnknownTool;

/// Runs one tool call to its result (blocking: call it off the async executor). A panic inside
/// becomes an `internal` error result, after the repository it may have been writing is
/// recovered; the server goes on serving.
pub fn call(name: &str, args: JsonObject, scope: &Scope) -> Result<CallToolResult, UnknownTool> {
    let named = args
        .get("repository")
        .and_then(Value::as_str)
        .map(str::to_string);
    crate::panics::catch(|| call_tool(name, args, scope)).unwrap_or_else(|message| {
        let dir = repository(scope, named.as_deref()).unwrap_or_else(|_| scope.home.clone());
        Ok(error_result(&crate::txn::recover::internal_error(
            message,
            Some(&dir),
        )))
    })
}

fn call_tool(name: &str, args: JsonObject, scope: &Scope) -> Result<CallToolResult, UnknownTool> {
    Ok(match name {
        "apply_patch" => result_of(parse_args(args).and_then(|a| apply_patch(a, scope))),
        "check" => result_of(parse_args(args).and_then(|a| check(a, scope))),
        "detect" => match parse_args(args).and_then(|a| detect(a, scope)) {
            Ok(d) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(d.render_human())]);
                r.structured_content = Some(serde_json::json!({ "files": d.to_json() }));
                r
            }
            Err(e) => error_result(&e),
        },
        "undo" => result_of(parse_args(args).and_then(|a| undo(a, scope))),
        _ => return Err(UnknownTool),
    })
}

/// A tool's arguments: only the names its schema lists (flattened requests cannot make serde
/// refuse the others), then their values.
fn parse_args<T: for<'de> Deserialize<'de> + JsonSchema + 'static>(
    args: JsonObject,
) -> Result<T, Error> {
    let schema = schema_for_type::<T>();
    let known = schema.get("properties").and_then(Value::as_object);
    if let Some(known) = known
        && let Some(unknown) = args.keys().find(|k| !known.contains_key(*k))
    {
        let names: Vec<String> = known.keys().map(|k| format!("`{k}`")).collect();
        return Err(Error::Usage {
            message: format!(
                "invalid arguments: unknown field `{unknown}`, expected one of {}",
                names.join(", ")
            ),
            help: "see the tool's input schema (tools/list)".into(),
        });
    }
    serde_json::from_value(Value::Object(args)).map_err(|e| Error::Usage {
        message: format!("invalid arguments: {e}"),
        help: "see the tool's input schema (tools/list)".into(),
    })
}

fn apply_patch(a: ApplyPatchArgs, scope: &Scope) -> Result<Report, Error> {
    let dir = repository(scope, a.repository.as_deref())?;
    let request = &a.request;
    let patch = match (a.patch, &a.patch_text) {
        (Some(_), None) if request.has_diff_options() => {
            return Err(Error::Usage {
                message: "`strip`, `directory` and `unidiff_zero` are options of a unified diff, given as \
                          `patch_text`; `patch` is a patchgate edit list"
                    .into(),
                help: "leave them out, or give the diff as `patch_text`".into(),
            });
        }
        // The object is the patch: read as it is, not written out and parsed again.
        (Some(p), None) => crate::patch::parse_value(p, "patch")?,
        (None, Some(text)) => crate::patch::parse_input_with(
            text.as_bytes(),
            "patch_text",
            request.input,
            &request.input_options(None),
        )?,
        _ => {
            return Err(Error::Usage {
                message: "give exactly one of `patch` (an object) and `patch_text` (a string)"
                    .into(),
                help: "e.g. {\"patch\": {\"edits\": [{\"file_path\": \"src/a.js\", \"old_string\": \"...\", \"new_string\": \"...\"}]}}".into(),
            });
        }
    };
    ops::apply::run(request, &patch, &context(dir))
}

/// A call's context: its repository, and no progress bar (stderr is the client's log).
fn context(dir: PathBuf) -> Context {
    Context {
        dir,
        progress: false,
        json: true,
    }
}

fn check(mut a: CheckToolArgs, scope: &Scope) -> Result<Report, Error> {
    let dir = repository(scope, a.repository.as_deref())?;
    a.request.paths = a
        .request
        .paths
        .iter()
        .map(|p| confine_in(scope, &dir, &p.to_string_lossy()))
        .collect::<Result<Vec<PathBuf>, Error>>()?;
    ops::check::run(&a.request, &context(dir))
}

fn undo(a: UndoArgs, scope: &Scope) -> Result<Report, Error> {
    let dir = repository(scope, a.repository.as_deref())?;
    ops::undo::run(&a.request, &context(dir))
}

fn detect(mut a: DetectArgs, scope: &Scope) -> Result<ops::detect::Detection, Error> {
    let dir = repository(scope, a.repository.as_deref())?;
    if let Some(p) = &a.request.path {
        a.request.path = Some(confine_in(scope, &dir, &p.to_string_lossy())?);
    }
    ops::detect::run(&a.request, &context(dir))
}

/// The working tree a call acts on: the server's repository, or the one named, if it is in scope.
fn repository(scope: &Scope, given: Option<&str>) -> Result<PathBuf, Error> {
    let Some(given) = given else {
        return Ok(scope.home.clone());
    };
    let dir = scope.confine(&scope.home, given).map_err(outside)?;
    // The repository around that directory must itself be in scope: a root inside a larger
    // repository does not open the rest of it.
    let repo = crate::repo::Repo::discover(&dir)?;
    let top = repo.require_workdir()?;
    if !scope.allows(top) {
        return Err(outside(format!(
            "`{given}` is in the repository at {}, outside this server's scope",
            top.display()
        )));
    }
    Ok(dir)
}

fn confine_in(scope: &Scope, dir: &Path, given: &str) -> Result<PathBuf, Error> {
    let path = scope.confine(dir, given).map_err(outside)?;
    // Inside the scope but in another repository than the one the call works in.
    let top = crate::repo::Repo::discover(dir)?;
    match top.require_workdir() {
        Ok(w) if path.starts_with(w) => Ok(path),
        _ => Err(outside(format!(
            "`{given}` is not inside the repository this call works in ({})",
            dir.display()
        ))),
    }
}

fn outside(message: String) -> Error {
    Error::Usage {
        message,
        help: "name paths inside the repository the server was started in (or a root the client declared)".into(),
    }
}

/// A run's report (or the error that kept it from starting) as a tool result.
fn result_of(result: Result<Report, Error>) -> CallToolResult {
    match result {
        Ok(report) => report_result(&report),
        Err(e) => error_result(&e),
    }
}

/// A report as a tool result: an error unless the run succeeded.
fn report_result(report: &Report) -> CallToolResult {
    let json = serde_json::to_value(report).unwrap_or(Value::Null);
    let mut r = CallToolResult::success(vec![ContentBlock::text(render_markdown(report))]);
    r.structured_content = Some(json);
    r.is_error = Some(report.exit() != Exit::Success);
    r
}

fn error_result(err: &Error) -> CallToolResult {
    report_result(&Report::from_error(err))
}
