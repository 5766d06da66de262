//! What the command line writes: a report, an error or a usage error in the chosen format, to
//! stdout (stderr for a human-readable error), and the exit code each implies.

use std::io::{IsTerminal, Write};

use clap::ValueEnum;

use crate::error::{Error, Kind};
use crate::report::{Report, render_human, render_markdown, render_sarif};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Human,
    Json,
    Markdown,
    /// SARIF 2.1.0, for code scanning and review bots (`apply` and `check` only).
    Sarif,
}

/// A machine-readable `--format` on a command line that clap refused: the usage error is then
/// reported in that format, so a script reading stdout still gets one document.
pub(super) fn requested_format(args: &[std::ffi::OsString]) -> Option<OutputFormat> {
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

/// A command line clap refused (or `--help` / `--version`, which exit 0).
pub(super) fn usage_error(e: &clap::Error, requested: Option<OutputFormat>) -> i32 {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return 0;
    }
    if e.kind() != ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        && let Some(format) = requested
    {
        let err = Error::Usage {
            message: e.kind().to_string(),
            help: e.to_string().lines().next().unwrap_or_default().to_string(),
        };
        return print_error(&err, format);
    }
    let _ = e.print();
    Kind::Usage.exit().code()
}

pub(super) fn print_report(report: &Report, format: OutputFormat) -> i32 {
    for n in &report.notes {
        eprintln!("{n}");
    }
    let text = match format {
        OutputFormat::Json => {
            // Streamed: the report of a large batch is as large as its diffs.
            let out = std::io::stdout().lock();
            report_write_error(report.write_json(out));
            crate::timing::mark("report rendered and written");
            return report.exit().code();
        }
        OutputFormat::Markdown => render_markdown(report),
        OutputFormat::Sarif => render_sarif(report),
        OutputFormat::Human => render_human(report, color_stdout()),
    };
    crate::timing::mark("report rendered");
    emit(&text);
    crate::timing::mark("report written");
    report.exit().code()
}

pub(super) fn print_error(err: &Error, format: OutputFormat) -> i32 {
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
pub(super) fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    report_write_error(out.write_all(text.as_bytes()).and_then(|_| out.flush()));
}

/// A reader that went away (a closed pipe) is not an error; anything else is said on stderr.
fn report_write_error(written: std::io::Result<()>) {
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("patchgate: cannot write output: {e}");
    }
}
