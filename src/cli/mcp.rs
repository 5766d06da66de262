//! `patchgate mcp [-C DIR]`: serves the Model Context Protocol on stdio (`crate::mcp`). Stdout
//! belongs to the protocol, so a failure to start is reported on stderr only.

use std::path::PathBuf;

use crate::error::Error;

#[derive(Debug, clap::Args)]
pub(super) struct McpArgs {
    /// Serve the repository at DIR (default: the current directory's).
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub(super) fn run(a: McpArgs) -> i32 {
    let dir = a.dir.unwrap_or_else(|| PathBuf::from("."));
    match crate::mcp::serve(&dir) {
        Ok(()) => 0,
        Err(e) => report(&e),
    }
}

fn report(e: &Error) -> i32 {
    eprint!("{}", super::render_error(e));
    e.exit().code()
}
