//! The command line: argument parsing, reading the patch, choosing the output format, and mapping
//! every outcome to the documented exit code (docs/report.md). Argument errors exit 3, not clap's 2,
//! because 2 means "an edit did not apply".

mod check;
mod completions;
mod demo;
mod detect;
mod recover;

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::apply::{ApplyOptions, apply};
use crate::error::{Error, Exit};
use crate::report::{Report, render_human, render_markdown};

/// A patch on stdin or in a file larger than this is refused: no real batch of edits is this big,
/// and reading it whole into memory should not be how a typo ends a run.
const MAX_PATCH_BYTES: u64 = 256 << 20;

#[derive(Debug, Parser)]
#[command(
    name = "patchgate",
    version,
    about = "Apply a batch of multi-file edits to a git repository, all or nothing",
    long_about = "Apply a batch of multi-file edits (YAML or JSON) to a git repository all or nothing: \
every old_string is verified in memory first, a miss is explained with the file's real text and \
line numbers, and only a fully verified batch is written."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Verify and apply a patch file (YAML or JSON; `-` or nothing reads standard input).
    Apply(ApplyArgs),
    /// Run the checkers on existing files, or with --staged on the staged content.
    Check(CheckCmdArgs),
    /// Show which checkers apply to a path, and why.
    Detect(DetectArgs),
    /// Run the projects' build / test / typecheck on the current state, with parsed failures and hints.
    Verify(VerifyArgs),
    /// Finish or roll back a transaction that was interrupted (a crash, kill -9, power loss).
    Recover(RecoverArgs),
    /// Print a JSON Schema: of the patch file (default) or of the JSON report.
    Schema(SchemaArgs),
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
}

#[derive(Debug, clap::Args)]
struct ApplyArgs {
    /// The patch file; `-` or nothing reads standard input.
    patch: Option<PathBuf>,
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
    fn options(&self, fix: bool) -> Result<Option<crate::checks::Options>, Error> {
        let only = match self.checks.as_str() {
            "none" => return Ok(None),
            "auto" | "" => None,
            list => Some(
                list.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
        };
        let timeout = match self.timeout {
            Some(t)
                if t > 0.0
                    && let Ok(d) = std::time::Duration::try_from_secs_f64(t) =>
            {
                Some(d)
            }
            Some(t) => {
                return Err(Error::Usage {
                    message: format!("--timeout {t} is not a positive number of seconds"),
                    help: "e.g. --timeout 20".into(),
                });
            }
            None => None,
        };
        Ok(Some(crate::checks::Options {
            gate: self.gate,
            fix,
            require_tools: self.require_tools,
            timeout,
            jobs: self.jobs,
            only,
            offline: self.offline,
            progress: true,
            context: Vec::new(),
        }))
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
    let json_requested = wants_json(&args);
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
                return Exit::InvalidInput.code();
            }
            if json_requested {
                let err = Error::Usage {
                    message: e.kind().to_string(),
                    help: e.to_string().lines().next().unwrap_or_default().to_string(),
                };
                emit(&Report::from_error(&err).to_json());
            } else {
                let _ = e.print();
            }
            return Exit::InvalidInput.code();
        }
    };
    match cli.command {
        Command::Apply(a) => run_apply(a),
        Command::Check(c) => {
            let opts = match c.check.options(false) {
                Ok(Some(o)) => o,
                Ok(None) => crate::checks::Options {
                    only: Some(Vec::new()),
                    ..Default::default()
                },
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
        Command::Detect(d) => detect::run_detect(
            &d.dir.unwrap_or_else(|| PathBuf::from(".")),
            d.path.as_deref(),
            d.format,
        ),
        Command::Recover(r) => recover::run(r.dir.unwrap_or_else(|| PathBuf::from(".")), r.format),
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
        Command::Completions(c) => completions::completions(c.shell),
        Command::Man(m) => completions::man(m.command.as_deref()),
    }
}

fn wants_json(args: &[std::ffi::OsString]) -> bool {
    args.windows(2)
        .any(|w| w[0] == "--format" && w[1] == "json")
        || args.iter().any(|a| a == "--format=json")
}

fn run_apply(a: ApplyArgs) -> i32 {
    let dir = a.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let result = read_patch(a.patch.as_deref(), &dir).and_then(|patch| {
        crate::timing::mark("patch parsed");
        let checks = a.check.options(a.fix)?;
        let verify = match &a.verify {
            Some(list) => Some(crate::verify::run::Options {
                steps: crate::verify::run::Step::parse_list(list).map_err(|m| Error::Usage {
                    message: m,
                    help: "e.g. --verify build,test".into(),
                })?,
                require_tools: a.check.require_tools,
                timeout: None,
                offline: a.check.offline,
            }),
            None => None,
        };
        let opts = ApplyOptions {
            dir: dir.clone(),
            dry_run: a.dry_run,
            lenient: a.lenient,
            commit: a.commit,
            branch: a.branch.clone(),
            message: a.message.clone(),
            checks,
            verify,
        };
        apply(&patch, &opts)
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
        OutputFormat::Human => render_human(report, color_stdout()),
    };
    crate::timing::mark("report rendered");
    emit(&text);
    crate::timing::mark("report written");
    report.exit.code()
}

pub(crate) fn print_error(err: &Error, format: OutputFormat) -> i32 {
    match format {
        OutputFormat::Json => emit(&format!("{}\n", Report::from_error(err).to_json())),
        OutputFormat::Markdown => emit(&render_markdown(&Report::from_error(err))),
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

fn read_patch(
    path: Option<&std::path::Path>,
    dir: &std::path::Path,
) -> Result<crate::patch::Patch, Error> {
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
            let read_err = |source| Error::PatchRead {
                path: full.display().to_string(),
                source,
            };
            let md = std::fs::metadata(&full).map_err(read_err)?;
            if md.is_dir() {
                return Err(read_err(std::io::Error::other("it is a directory")));
            }
            if md.len() > MAX_PATCH_BYTES {
                return Err(too_big(&full.display().to_string()));
            }
            (
                p.display().to_string(),
                std::fs::read(&full).map_err(read_err)?,
            )
        }
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .take(MAX_PATCH_BYTES + 1)
                .read_to_end(&mut buf)
                .map_err(|source| Error::PatchRead {
                    path: "<stdin>".into(),
                    source,
                })?;
            if buf.len() as u64 > MAX_PATCH_BYTES {
                return Err(too_big("<stdin>"));
            }
            ("<stdin>".to_string(), buf)
        }
    };
    crate::patch::parse_bytes(&bytes, &name)
}

fn too_big(name: &str) -> Error {
    Error::Usage {
        message: format!(
            "the patch {name} is larger than {} MiB",
            MAX_PATCH_BYTES >> 20
        ),
        help: "split the batch into several patches".into(),
    }
}
