//! The tools `patchgate mcp` offers: their arguments (and the JSON Schemas derived from them),
//! the descriptions that teach an agent the contract, and each call turned into the same
//! pipeline the command line runs (`crate::apply`, `check`, `detect`, `crate::undo`), with the same option
//! building (`crate::cli::options`).
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

use crate::cli::options::{ApplyChoice, CheckChoice};
use crate::error::{Error, Exit};
use crate::patch::InputFormat;
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

/// `patchgate undo`'s options, as a tool's arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoArgs {
    /// The patch to revert (a full `patch_id` or a unique prefix); default: the last one still in
    /// effect.
    pub patch_id: Option<String>,
    /// Check and show what would be restored; write nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// The repository to work in (default: the one the server was started in).
    pub repository: Option<String>,
}

/// `patchgate apply`'s options, as a tool's arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch as an object, the same shape as a patch file:
    /// {"message"?: string, "edits": [{"file_path", "old_string", "new_string", "replace_all"?}, ...]}
    /// or just the list of edits.
    pub patch: Option<Value>,
    /// The patch as text, in any input format (see `input`).
    pub patch_text: Option<String>,
    /// The format of `patch_text` (default `auto`: told from the content).
    pub input: Option<InputFormat>,
    /// For a unified diff: drop this many leading folders from every file name, as
    /// `git apply -p N` (default: the `a/`/`b/` prefix of a git diff; guessed for a plain
    /// `diff -u`).
    pub strip: Option<usize>,
    /// For a unified diff: its file names are under this folder of the repository (after
    /// `strip`), as `git apply --directory`.
    pub directory: Option<String>,
    /// For a unified diff: place hunks without context that only add lines by their line
    /// number, as `git apply --unidiff-zero` (the report says so).
    #[serde(default)]
    pub unidiff_zero: bool,
    /// Verify every edit and run the checks; write nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Commit the patched files on the current branch.
    #[serde(default)]
    pub commit: bool,
    /// Commit on this branch (created from HEAD if missing) without touching the working tree.
    pub branch: Option<String>,
    /// The commit message (default: the patch's `message`, else a summary).
    pub message: Option<String>,
    /// Run the formatters in write mode first; the formatted content is what gets written.
    #[serde(default)]
    pub fix: bool,
    /// Also run the projects' build / test / typecheck (comma-separated subset of
    /// `build,test,typecheck`); a failure the patch introduced blocks.
    pub verify: Option<String>,
    /// Also apply a unique match that differs only in whitespace or typographic characters.
    #[serde(default)]
    pub lenient: bool,
    #[serde(flatten)]
    pub check: CheckArgs,
    /// The repository to work in, if the client's roots hold several (default: the one the
    /// server was started in).
    pub repository: Option<String>,
}

/// The check settings shared by `apply_patch` and `check`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct CheckArgs {
    /// Which checkers: `auto` (all the project uses; default), `none`, or a comma-separated list
    /// of names (see `detect`).
    pub checks: Option<String>,
    /// Which findings block: `new` (only what the change introduced; default), `any`, `off`.
    pub gate: Option<GateArg>,
    /// A checker that is missing, crashes or times out blocks too.
    #[serde(default)]
    pub require_tools: bool,
    /// Never download dependencies for clippy / go vet.
    #[serde(default)]
    pub offline: bool,
    /// Timeout for every checker, in seconds.
    pub timeout: Option<f64>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckToolArgs {
    /// Files or directories to check (default: every file changed since HEAD, or every staged
    /// file with `staged`).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Check the staged content (the index), not the working tree.
    #[serde(default)]
    pub staged: bool,
    #[serde(flatten)]
    pub check: CheckArgs,
    /// The repository to work in (default: the one the server was started in).
    pub repository: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DetectArgs {
    /// A file or directory (default: the repository root).
    pub path: Option<String>,
    /// The repository to work in (default: the one the server was started in).
    pub repository: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GateArg {
    New,
    Any,
    Off,
}

impl CheckArgs {
    fn choice(&self) -> CheckChoice {
        CheckChoice {
            checks: self.checks.clone().unwrap_or_else(|| "auto".into()),
            gate: match self.gate {
                None | Some(GateArg::New) => crate::checks::Gate::New,
                Some(GateArg::Any) => crate::checks::Gate::Any,
                Some(GateArg::Off) => crate::checks::Gate::Off,
            },
            require_tools: self.require_tools,
            timeout: self.timeout,
            jobs: 0,
            offline: self.offline,
            // Stdout is the protocol, stderr is the client's log: no progress bar.
            progress: false,
        }
    }
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
    let args = Value::Object(args);
    Ok(match name {
        "apply_patch" => match parse_args::<ApplyPatchArgs>(args) {
            Ok(a) => apply_patch(a, scope),
            Err(e) => error_result(&e),
        },
        "check" => match parse_args::<CheckToolArgs>(args) {
            Ok(a) => check(a, scope),
            Err(e) => error_result(&e),
        },
        "detect" => match parse_args::<DetectArgs>(args) {
            Ok(a) => detect(a, scope),
            Err(e) => error_result(&e),
        },
        "undo" => match parse_args::<UndoArgs>(args) {
            Ok(a) => undo(a, scope),
            Err(e) => error_result(&e),
        },
        _ => return Err(UnknownTool),
    })
}

fn parse_args<T: for<'de> Deserialize<'de>>(args: Value) -> Result<T, Error> {
    serde_json::from_value(args).map_err(|e| Error::Usage {
        message: format!("invalid arguments: {e}"),
        help: "see the tool's input schema (tools/list)".into(),
    })
}

fn apply_patch(a: ApplyPatchArgs, scope: &Scope) -> CallToolResult {
    let run = || -> Result<Report, Error> {
        let dir = repository(scope, a.repository.as_deref())?;
        let patch = match (&a.patch, &a.patch_text) {
            (Some(_), None) if a.strip.is_some() || a.unidiff_zero || a.directory.is_some() => {
                return Err(Error::Usage {
                    message: "`strip`, `directory` and `unidiff_zero` are options of a unified diff, given as \
                              `patch_text`; `patch` is a patchgate edit list"
                        .into(),
                    help: "leave them out, or give the diff as `patch_text`".into(),
                });
            }
            (Some(p), None) => {
                let bytes = serde_json::to_vec(p).unwrap_or_default();
                crate::patch::parse_input(&bytes, "patch", InputFormat::Json)?
            }
            (None, Some(text)) => crate::patch::parse_input_with(
                text.as_bytes(),
                "patch_text",
                a.input.unwrap_or_default(),
                &crate::patch::InputOptions {
                    strip: a.strip,
                    unidiff_zero: a.unidiff_zero,
                    directory: a.directory.clone(),
                    cwd_prefix: None,
                },
            )?,
            _ => {
                return Err(Error::Usage {
                    message: "give exactly one of `patch` (an object) and `patch_text` (a string)"
                        .into(),
                    help: "e.g. {\"patch\": {\"edits\": [{\"file_path\": \"src/a.js\", \"old_string\": \"...\", \"new_string\": \"...\"}]}}".into(),
                });
            }
        };
        let choice = ApplyChoice {
            dir,
            dry_run: a.dry_run,
            lenient: a.lenient,
            commit: a.commit,
            branch: a.branch.clone(),
            message: a.message.clone(),
            fix: a.fix,
            verify: a.verify.clone(),
            check: a.check.choice(),
        };
        crate::apply::apply(&patch, &choice.options()?)
    };
    match run() {
        Ok(report) => report_result(&report),
        Err(e) => error_result(&e),
    }
}

fn check(a: CheckToolArgs, scope: &Scope) -> CallToolResult {
    let run = || -> Result<Report, Error> {
        let dir = repository(scope, a.repository.as_deref())?;
        let paths = a
            .paths
            .iter()
            .map(|p| confine_in(scope, &dir, p))
            .collect::<Result<Vec<PathBuf>, Error>>()?;
        let opts = a.check.choice().check_options()?;
        crate::cli::check::check_report(&dir, &paths, a.staged, opts)
    };
    match run() {
        Ok(report) => report_result(&report),
        Err(e) => error_result(&e),
    }
}

fn undo(a: UndoArgs, scope: &Scope) -> CallToolResult {
    let run = || -> Result<Report, Error> {
        let dir = repository(scope, a.repository.as_deref())?;
        crate::undo::undo(&crate::undo::UndoOptions {
            dir,
            patch_id: a.patch_id.clone(),
            dry_run: a.dry_run,
        })
    };
    match run() {
        Ok(report) => report_result(&report),
        Err(e) => error_result(&e),
    }
}

fn detect(a: DetectArgs, scope: &Scope) -> CallToolResult {
    let run = || -> Result<(Value, String), Error> {
        let dir = repository(scope, a.repository.as_deref())?;
        let path = match &a.path {
            Some(p) => Some(confine_in(scope, &dir, p)?),
            None => None,
        };
        crate::cli::detect::detect_both(&dir, path.as_deref())
    };
    match run() {
        Ok((json, text)) => {
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            r.structured_content = Some(serde_json::json!({ "files": json }));
            r
        }
        Err(e) => error_result(&e),
    }
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
