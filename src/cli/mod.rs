//! The command line: argument parsing, reading the patch, choosing the output format, and mapping
//! every outcome to the documented exit code (docs/report.md). Argument errors exit 3, not clap's 2,
//! because 2 means "an edit did not apply".

pub(crate) mod check;
mod completions;
mod demo;
pub(crate) mod detect;
mod mcp;
pub mod options;
mod recover;
mod undo;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::apply::apply;
use crate::error::{Error, Kind};
use crate::report::{Report, render_human, render_markdown, render_sarif};

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
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Verify and apply a patch (YAML, JSON, codex, aider or a unified diff; `-` or nothing reads
    /// standard input).
    Apply(ApplyArgs),
    /// Run the checkers on existing files, or with --staged on the staged content.
    Check(CheckCmdArgs),
    /// Show which checkers apply to a path, and why.
    Detect(DetectArgs),
    /// Run the projects' build / test / typecheck on the current state, with parsed failures and hints.
    Verify(VerifyArgs),
    /// Revert the last written patch (or the one named) if none of its files changed since.
    Undo(undo::UndoArgs),
    /// Finish or roll back a transaction that was interrupted (a crash, kill -9, power loss).
    Recover(RecoverArgs),
    /// Print a JSON Schema: of the patch file (default) or of the JSON report.
    Schema(SchemaArgs),
    /// Serve the Model Context Protocol on stdio (tools apply_patch, check, detect, undo) for agents.
    Mcp(mcp::McpArgs),
    /// Run `apply` on a scratch copy of the bundled example repository and patch.
    Demo,
    /// Print the shell completion script for SHELL.
    Completions(CompletionsArgs),
    /// Print the man page (roff); with a subcommand, that subcommand's page.
    Man(ManArgs),
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

#[derive(Debug, clap::Args)]
struct RecoverArgs {
    /// Run as if started in DIR.
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    format: OutputFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Human,
    Json,
    Markdown,
    /// SARIF 2.1.0, for code scanning and review bots (`apply` and `check` only).
    Sarif,
}

/// `--format sarif` on a command whose output is not a list of findings (detect, verify,
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

#[derive(Debug, clap::Args)]
struct ApplyArgs {
    /// The patch file; `-` or nothing reads standard input.
    patch: Option<PathBuf>,
    /// The patch's format: a patchgate YAML/JSON patch, codex's `*** Begin Patch` envelope, Aider's
    /// SEARCH/REPLACE blocks or a unified diff (`auto`: told from the content).
    #[arg(long, value_enum, default_value_t = crate::patch::InputFormat::Auto)]
    input: crate::patch::InputFormat,
    /// A unified diff's strip level, as `git apply -p N`: N leading folders are dropped from every
    /// file name (default: the `a/`/`b/` prefix of a git diff; guessed for a plain `diff -u`).
    #[arg(short = 'p', long = "strip", value_name = "N")]
    strip: Option<usize>,
    /// A unified diff's hunks without context that only add lines are placed by their line
    /// number, as `git apply --unidiff-zero` (the report says so); without it they are refused.
    #[arg(long)]
    unidiff_zero: bool,
    /// A unified diff's file names are under ROOT (after `--strip`), as `git apply --directory`:
    /// for a diff made inside a folder of the repository.
    #[arg(long, value_name = "ROOT")]
    directory: Option<String>,
    /// Run as if started in DIR (the repository is discovered from there).
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Verify every edit and print the diff; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also apply a unique match that differs only in whitespace or typographic characters,
    /// re-indenting new_string (fuzzy candidates are never applied).
    #[arg(long)]
    lenient: bool,
    /// Commit the patched files on the current branch (or detached HEAD); the working tree and
    /// the index entries of those files then match the commit.
    #[arg(long, conflicts_with = "branch")]
    commit: bool,
    /// Commit on branch NAME (created from HEAD if missing) without touching the working tree,
    /// the index or HEAD.
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
    /// The commit message (default: the patch's `message`, else a summary).
    #[arg(short = 'm', long = "message", value_name = "MSG")]
    message: Option<String>,
    /// Run the formatters in write mode on the patched files before the gate; the formatted
    /// content is what gets written or committed.
    #[arg(long)]
    fix: bool,
    /// Also run the projects' own build / test / typecheck on the patched state (comma-separated:
    /// build,test,typecheck); a failing step fails the gate.
    #[arg(long, value_name = "LIST")]
    verify: Option<String>,
    #[command(flatten)]
    check: CheckArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    format: OutputFormat,
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// Which checkers to run: `auto` (all that the projects use), `none`, or a comma-separated
    /// list of checker names (see `patchgate detect`, or a custom checker from .patchgate.toml).
    #[arg(long, default_value = "auto", value_name = "auto|none|LIST")]
    checks: String,
    /// Which findings block: `new` (only what the patch introduced), `any`, or `off` (report only).
    #[arg(long, value_enum, default_value_t = crate::checks::Gate::New)]
    gate: crate::checks::Gate,
    /// A checker that is missing, crashes or times out blocks too.
    #[arg(long)]
    require_tools: bool,
    /// Timeout for every checker, in seconds (default: lint 30, format 10, clippy / go vet 300).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Checker jobs in parallel (default: one per core).
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 0)]
    jobs: usize,
    /// Never download dependencies for clippy / go vet (`cargo fetch`, `go mod download`);
    /// missing ones make the checker `error` with what to run. Also implied by
    /// CARGO_NET_OFFLINE=true (Rust) and GOPROXY=off (Go).
    #[arg(long)]
    offline: bool,
}

impl CheckArgs {
    fn choice(&self) -> options::CheckChoice {
        options::CheckChoice {
            checks: self.checks.clone(),
            gate: self.gate,
            require_tools: self.require_tools,
            timeout: self.timeout,
            jobs: self.jobs,
            offline: self.offline,
            progress: true,
        }
    }
}

#[derive(Debug, clap::Args)]
struct CheckCmdArgs {
    /// Files or directories to check (default: every file changed since HEAD, or staged with --staged).
    paths: Vec<PathBuf>,
    /// Check the staged content (the index), not the working tree: what a commit would record.
    #[arg(long)]
    staged: bool,
    /// Run as if started in DIR.
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    check: CheckArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    format: OutputFormat,
}

#[derive(Debug, clap::Args)]
struct VerifyArgs {
    /// A file or directory whose project(s) to verify (default: the projects of the files changed
    /// since HEAD, else the one of the current directory).
    path: Option<PathBuf>,
    /// Which steps (comma-separated).
    #[arg(long, value_name = "LIST", default_value = "build,test,typecheck")]
    steps: String,
    /// Run as if started in DIR.
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
    /// A missing toolchain fails too.
    #[arg(long)]
    require_tools: bool,
    /// Timeout per step, in seconds (default 600).
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Never download the Rust / Go dependencies (`cargo fetch`, `go mod download`); missing ones
    /// make the step `error` with what to run.
    #[arg(long)]
    offline: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    format: OutputFormat,
}

#[derive(Debug, clap::Args)]
struct DetectArgs {
    /// A file or directory (default: the current directory).
    path: Option<PathBuf>,
    /// Run as if started in DIR.
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    format: OutputFormat,
}

/// Runs the command line and returns the process exit code.
pub fn run(args: Vec<std::ffi::OsString>) -> i32 {
    let requested = requested_format(&args);
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return 0;
            }
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return Kind::Usage.exit().code();
            }
            if let Some(format) = requested {
                let err = Error::Usage {
                    message: e.kind().to_string(),
                    help: e.to_string().lines().next().unwrap_or_default().to_string(),
                };
                return print_error(&err, format);
            } else {
                let _ = e.print();
            }
            return Kind::Usage.exit().code();
        }
    };
    // A command that may run a transaction: where, so a panic can be followed by recovery.
    let repo_dir = match &cli.command {
        Command::Apply(a) => Some(a.dir.clone()),
        Command::Undo(u) => Some(u.dir()),
        Command::Recover(r) => Some(r.dir.clone()),
        _ => None,
    }
    .map(|d| d.unwrap_or_else(|| PathBuf::from(".")));
    match crate::panics::catch(|| dispatch(cli.command)) {
        Ok(code) => code,
        Err(message) => internal_error(message, repo_dir.as_deref(), requested),
    }
}

/// A panic that escaped a command: the repository is brought to the old or the new state (what
/// `patchgate recover` does after a crash), then the bug is reported, exit 4.
fn internal_error(
    message: String,
    repo_dir: Option<&std::path::Path>,
    format: Option<OutputFormat>,
) -> i32 {
    print_error(
        &crate::txn::recover::internal_error(message, repo_dir),
        format.unwrap_or(OutputFormat::Human),
    )
}

fn dispatch(command: Command) -> i32 {
    match command {
        Command::Apply(a) => run_apply(a),
        Command::Check(c) => {
            let opts = match c.check.choice().check_options() {
                Ok(o) => o,
                Err(e) => return print_error(&e, c.format),
            };
            check::run_check(
                &c.dir.unwrap_or_else(|| PathBuf::from(".")),
                &c.paths,
                c.staged,
                opts,
                c.format,
            )
        }
        Command::Verify(v) => {
            if let Some(code) = refuse_sarif("verify", v.format) {
                return code;
            }
            let steps = match crate::verify::run::Step::parse_list(&v.steps) {
                Ok(s) => s,
                Err(m) => {
                    return print_error(
                        &Error::Usage {
                            message: m,
                            help: "e.g. --steps build,test".into(),
                        },
                        v.format,
                    );
                }
            };
            let opts = crate::verify::run::Options {
                steps,
                require_tools: v.require_tools,
                timeout: v.timeout.map(std::time::Duration::from_secs),
                offline: v.offline,
            };
            check::run_verify(
                &v.dir.unwrap_or_else(|| PathBuf::from(".")),
                v.path.as_deref(),
                &opts,
                v.format,
            )
        }
        Command::Detect(d) => {
            if let Some(code) = refuse_sarif("detect", d.format) {
                return code;
            }
            detect::run_detect(
                &d.dir.unwrap_or_else(|| PathBuf::from(".")),
                d.path.as_deref(),
                d.format,
            )
        }
        Command::Undo(u) => {
            if let Some(code) = refuse_sarif("undo", u.format) {
                return code;
            }
            undo::run(u)
        }
        Command::Recover(r) => {
            if let Some(code) = refuse_sarif("recover", r.format) {
                return code;
            }
            recover::run(r.dir.unwrap_or_else(|| PathBuf::from(".")), r.format)
        }
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
        Command::Mcp(m) => mcp::run(m),
        Command::Completions(c) => completions::completions(c.shell),
        Command::Man(m) => completions::man(m.command.as_deref()),
    }
}

/// A machine-readable `--format` on a command line that clap refused: the usage error is then
/// reported in that format, so a script reading stdout still gets one document.
fn requested_format(args: &[std::ffi::OsString]) -> Option<OutputFormat> {
    let value = args
        .windows(2)
        .filter(|w| w[0] == "--format")
        .map(|w| w[1].to_string_lossy().into_owned())
        .chain(args.iter().filter_map(|a| {
            a.to_str()
                .and_then(|a| a.strip_prefix("--format="))
                .map(str::to_string)
        }))
        .last()?;
    match value.as_str() {
        "json" => Some(OutputFormat::Json),
        "sarif" => Some(OutputFormat::Sarif),
        _ => None,
    }
}

fn run_apply(a: ApplyArgs) -> i32 {
    let dir = a.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let choice = options::ApplyChoice {
        dir: dir.clone(),
        dry_run: a.dry_run,
        lenient: a.lenient,
        commit: a.commit,
        branch: a.branch.clone(),
        message: a.message.clone(),
        fix: a.fix,
        verify: a.verify.clone(),
        check: a.check.choice(),
    };
    let input_opts = crate::patch::InputOptions {
        strip: a.strip,
        unidiff_zero: a.unidiff_zero,
        directory: a.directory.clone(),
        cwd_prefix: cwd_prefix(&dir),
    };
    let result = read_patch(a.patch.as_deref(), &dir, a.input, &input_opts).and_then(|patch| {
        crate::timing::mark("patch parsed");
        apply(&patch, &choice.options()?)
    });
    match result {
        Ok(report) => print_report(&report, a.format),
        Err(err) => print_error(&err, a.format),
    }
}

pub(crate) fn print_report(report: &Report, format: OutputFormat) -> i32 {
    for n in &report.notes {
        eprintln!("{n}");
    }
    let text = match format {
        OutputFormat::Json => format!("{}\n", report.to_json()),
        OutputFormat::Markdown => render_markdown(report),
        OutputFormat::Sarif => render_sarif(report),
        OutputFormat::Human => render_human(report, color_stdout()),
    };
    crate::timing::mark("report rendered");
    emit(&text);
    crate::timing::mark("report written");
    report.exit().code()
}

pub(crate) fn print_error(err: &Error, format: OutputFormat) -> i32 {
    match format {
        OutputFormat::Json => emit(&format!("{}\n", Report::from_error(err).to_json())),
        OutputFormat::Markdown => emit(&render_markdown(&Report::from_error(err))),
        OutputFormat::Sarif => emit(&render_sarif(&Report::from_error(err))),
        OutputFormat::Human => eprint!("{}", render_error(err)),
    }
    err.exit().code()
}

/// A miette rendering of an error (source snippet, label, help).
fn render_error(err: &Error) -> String {
    let handler = miette::GraphicalReportHandler::new_themed(
        if std::io::stderr().is_terminal() && no_color_unset() {
            miette::GraphicalTheme::unicode()
        } else {
            miette::GraphicalTheme::unicode_nocolor()
        },
    );
    let mut out = String::new();
    let _ = handler.render_report(&mut out, err);
    out
}

fn no_color_unset() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn color_stdout() -> bool {
    std::io::stdout().is_terminal() && no_color_unset()
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("patchgate: cannot write output: {e}");
    }
}

/// Where DIR stands in its repository's work tree (`src/app`, or `""` at the root): a
/// traditional diff's names are relative to it, as for `git apply`. `None` outside a work tree
/// (the apply itself then says so).
fn cwd_prefix(dir: &std::path::Path) -> Option<String> {
    let repo = crate::repo::Repo::discover(dir).ok()?;
    let root = repo.workdir?;
    let here = std::fs::canonicalize(dir).ok()?;
    let rel = here.strip_prefix(&root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

fn read_patch(
    path: Option<&std::path::Path>,
    dir: &std::path::Path,
    input: crate::patch::InputFormat,
    opts: &crate::patch::InputOptions,
) -> Result<crate::patch::Patch, Error> {
    use crate::patch::limit;
    let max = limit::max_bytes()?;
    let (name, bytes) = match path {
        None if std::io::stdin().is_terminal() => {
            return Err(Error::Usage {
                message: "no patch given".into(),
                help: "pass a patch file (`patchgate apply edits.yaml`) or pipe one in (`... | patchgate apply -`)".into(),
            });
        }
        Some(p) if p.as_os_str() != "-" => {
            let full = if p.is_absolute() {
                p.to_path_buf()
            } else {
                dir.join(p)
            };
            let shown = full.display().to_string();
            let read_err = |source| Error::PatchRead {
                path: shown.clone(),
                source,
            };
            let file = std::fs::File::open(&full).map_err(read_err)?;
            let md = file.metadata().map_err(read_err)?;
            if md.is_dir() {
                return Err(read_err(std::io::Error::other("it is a directory")));
            }
            // A regular file is judged by its size before a byte is read; anything else (a
            // device, a FIFO) has no size to trust and is cut off just past the limit.
            if md.is_file() && md.len() > max {
                return Err(limit::too_big(&shown, max));
            }
            let hint = md.is_file().then_some(md.len());
            (
                p.display().to_string(),
                limit::read_bounded(file, &shown, max, hint)?,
            )
        }
        _ => {
            // A file redirected to stdin (`< big.yaml`) has a size to judge by, like a named one.
            let redirected = std::fs::metadata("/proc/self/fd/0")
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len());
            if redirected.is_some_and(|len| len > max) {
                return Err(limit::too_big("<stdin>", max));
            }
            (
                "<stdin>".to_string(),
                limit::read_bounded(std::io::stdin().lock(), "<stdin>", max, redirected)?,
            )
        }
    };
    crate::patch::parse_input_with(&bytes, &name, input, opts)
}
