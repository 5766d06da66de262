//! The command line: a thin adapter over [`crate::ops`]. It parses the arguments (each
//! operation's request is flattened into its subcommand), reads the patch file, chooses the
//! output format, and maps every outcome to the documented exit code (docs/report.md). Argument
//! errors exit 3, not clap's 2, because 2 means "an edit did not apply".
//!
//! It does not know the MCP server: `patchgate mcp` calls the server function `main` hands in.

mod apply;
mod completions;
mod demo;
mod mcp_config;
mod output;
mod undo;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};

use crate::error::Error;
use crate::ops::{self, Context};
pub use output::OutputFormat;
use output::{emit, print_error, print_report};

#[derive(Debug, Parser)]
#[command(
    name = "patchgate",
    version,
    about = "Apply a batch of multi-file edits to a git repository, all or nothing",
    long_about = "Apply a batch of multi-file edits (YAML or JSON, or a codex, aider or unified-diff \
patch) to a git repository all or nothing: \
every old_string is verified in memory first, a miss is explained with the file's real text and \
line numbers, and only a fully verified batch is written."
)]
pub struct Cli {
    /// Run as if started in DIR (the repository is discovered from there), as `git -C`; before
    /// or after the subcommand.
    #[arg(short = 'C', value_name = "DIR", global = true)]
    dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Verify and apply a patch (YAML, JSON, codex, aider or a unified diff; `-` or nothing reads
    /// standard input).
    Apply(apply::ApplyArgs),
    /// Run the checkers on existing files, or with --staged on the staged content.
    Check(Formatted<ops::check::Request>),
    /// Show which checkers apply to a path, and why.
    Detect(Formatted<ops::detect::Request>),
    /// Run the projects' build / test / typecheck on the current state, with parsed failures and hints.
    Verify(Formatted<ops::verify::Request>),
    /// Revert the last written patch (or the one named) if none of its files changed since.
    Undo(undo::UndoArgs),
    /// Finish or roll back a transaction that was interrupted (a crash, kill -9, power loss).
    Recover(Formatted<ops::recover::Request>),
    /// Print a JSON Schema: of the patch file (default) or of the JSON report.
    Schema(SchemaArgs),
    /// Serve the Model Context Protocol on stdio (tools apply_patch, check, detect, undo) for
    /// agents; `-C DIR` serves the repository at DIR.
    Mcp(mcp_config::PrintConfigArgs),
    /// Run `apply` on a scratch copy of the bundled example repository and patch.
    Demo,
    /// Print the shell completion script for SHELL.
    Completions(CompletionsArgs),
    /// Print the man page (roff); with a subcommand, that subcommand's page.
    Man(ManArgs),
}

/// An operation's request and the output format: all a subcommand without a patch takes.
#[derive(Debug, clap::Args)]
struct Formatted<R: clap::Args> {
    #[command(flatten)]
    request: R,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    format: OutputFormat,
}

#[derive(Debug, clap::Args)]
struct SchemaArgs {
    /// Which schema.
    #[arg(value_enum, default_value_t = SchemaKind::Patch)]
    which: SchemaKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SchemaKind {
    /// The patch file (`patchgate apply`'s input).
    Patch,
    /// The JSON report (`--format json` of apply, check and verify).
    Report,
}

#[derive(Debug, clap::Args)]
struct ManArgs {
    /// A subcommand whose page to print (`patchgate man apply` is patchgate-apply(1)).
    command: Option<String>,
}

#[derive(Debug, clap::Args)]
struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// The MCP server `patchgate mcp` runs on stdio, for the repository at the directory given.
pub type Serve = fn(&Path) -> Result<(), Error>;

/// Runs the command line and returns the process exit code; `serve` is the MCP server.
pub fn run(args: Vec<std::ffi::OsString>, serve: Serve) -> i32 {
    let requested = output::requested_format(&args);
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => return output::usage_error(&e, requested),
    };
    // A command that may run a transaction: where, so a panic can be followed by recovery.
    let repo_dir = matches!(
        cli.command,
        Command::Apply(_) | Command::Undo(_) | Command::Recover(_)
    )
    .then(|| cli.dir.clone().unwrap_or_else(|| PathBuf::from(".")));
    let ctx = Context::at(cli.dir.as_deref());
    match crate::panics::catch(|| dispatch(cli.command, cli.dir.as_deref(), &ctx, serve)) {
        Ok(code) => code,
        Err(message) => print_error(
            &crate::txn::recover::internal_error(message, repo_dir.as_deref()),
            requested.unwrap_or(OutputFormat::Human),
        ),
    }
}

/// `dir` is `-C`'s value as given (the MCP snippet makes it absolute); `ctx` is where to run.
fn dispatch(command: Command, dir: Option<&Path>, ctx: &Context, serve: Serve) -> i32 {
    match command {
        Command::Apply(a) => apply::run(&a, ctx),
        Command::Check(c) => report_of(ops::check::run(&c.request, ctx), c.format),
        Command::Verify(v) => match refuse_sarif("verify", v.format) {
            Some(code) => code,
            None => report_of(ops::verify::run(&v.request, ctx), v.format),
        },
        Command::Detect(d) => match refuse_sarif("detect", d.format) {
            Some(code) => code,
            None => detect(&d.request, ctx, d.format),
        },
        Command::Undo(u) => match refuse_sarif("undo", u.format) {
            Some(code) => code,
            None => undo::run(&u, ctx),
        },
        Command::Recover(r) => match refuse_sarif("recover", r.format) {
            Some(code) => code,
            None => recover(&r.request, ctx, r.format),
        },
        Command::Schema(s) => {
            let schema = match s.which {
                SchemaKind::Patch => crate::patch::json_schema(),
                SchemaKind::Report => crate::report::json_schema(),
            };
            let text = serde_json::to_string_pretty(&schema).unwrap_or_default();
            emit(&format!("{text}\n"));
            0
        }
        Command::Demo => demo::run(),
        Command::Mcp(p) => match mcp_config::snippet(&p, dir) {
            Some(Ok(text)) => {
                emit(&text);
                0
            }
            Some(Err(e)) => print_error(&e, OutputFormat::Human),
            None => match serve(&ctx.dir) {
                Ok(()) => 0,
                // Stdout belongs to the protocol: a failure to start is said on stderr only.
                Err(e) => print_error(&e, OutputFormat::Human),
            },
        },
        Command::Completions(c) => completions::completions(c.shell),
        Command::Man(m) => completions::man(m.command.as_deref()),
    }
}

/// `--format sarif` on a command whose output is not a list of findings (detect, verify, undo,
/// recover): a usage error, exit 3, said on stderr.
fn refuse_sarif(command: &str, format: OutputFormat) -> Option<i32> {
    (format == OutputFormat::Sarif).then(|| {
        print_error(
            &Error::Usage {
                message: format!("`patchgate {command}` has no SARIF output"),
                help: "--format sarif is for `apply` and `check`; use --format json here".into(),
            },
            OutputFormat::Human,
        )
    })
}

fn report_of(result: Result<crate::report::Report, Error>, format: OutputFormat) -> i32 {
    match result {
        Ok(r) => print_report(&r, format),
        Err(e) => print_error(&e, format),
    }
}

fn detect(request: &ops::detect::Request, ctx: &Context, format: OutputFormat) -> i32 {
    match ops::detect::run(request, ctx) {
        Ok(d) if format == OutputFormat::Json => {
            let json = serde_json::to_string_pretty(&d.to_json()).unwrap_or_default();
            emit(&format!("{json}\n"));
            0
        }
        Ok(d) => {
            emit(&d.render_human());
            0
        }
        Err(e) => print_error(&e, format),
    }
}

fn recover(request: &ops::recover::Request, ctx: &Context, format: OutputFormat) -> i32 {
    match ops::recover::run(request, ctx) {
        Ok(r) if format == OutputFormat::Json => {
            emit(&format!("{}\n", r.to_json()));
            0
        }
        Ok(r) => {
            emit(&r.render_human());
            0
        }
        Err(e) => print_error(&e, format),
    }
}
