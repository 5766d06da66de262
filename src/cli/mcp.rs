//! `patchgate mcp [-C DIR]`: serves the Model Context Protocol on stdio (`crate::mcp`). Stdout
//! belongs to the protocol, so a failure to start is reported on stderr only.

use std::path::PathBuf;

use crate::error::Error;

#[derive(Debug, clap::Args)]
pub(super) struct McpArgs {
    /// Serve the repository at DIR (default: the current directory's).
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    config: super::mcp_config::PrintConfigArgs,
}

pub(super) fn run(a: McpArgs) -> i32 {
    match super::mcp_config::snippet(&a.config, a.dir.as_deref()) {
        Some(Ok(text)) => {
            super::emit(&text);
            return 0;
        }
        Some(Err(e)) => return report(&e),
        None => {}
    }
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
