//! `patchgate completions SHELL` and `patchgate man`: shell completions and the man page,
//! generated from the same clap definitions the parser uses, so they cannot drift from the CLI.
//! Both print to stdout and exit 0 (an unknown subcommand for `man` exits 3); a closed pipe is not an error (see [`emit`]).

use clap::CommandFactory;

use super::Cli;
use super::output::emit;

/// Prints the completion script for `shell`.
pub(super) fn completions(shell: clap_complete::Shell) -> i32 {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "patchgate", &mut out);
    emit(&String::from_utf8_lossy(&out));
    0
}

/// Prints the man page (roff): the top-level page, which lists every subcommand as
/// `patchgate-NAME(1)`, or with `sub` that subcommand's own page under that name.
pub(super) fn man(sub: Option<&str>) -> i32 {
    let mut cmd = Cli::command();
    if let Some(name) = sub {
        let Some(found) = cmd.find_subcommand(name) else {
            eprintln!("patchgate: no subcommand `{name}` (see `patchgate --help`)");
            return crate::error::Kind::Usage.exit().code();
        };
        let page = format!("patchgate-{name}");
        cmd = found
            .clone()
            .display_name(page)
            .bin_name(format!("patchgate {name}"));
    }
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd)
        .source(format!("patchgate {}", env!("CARGO_PKG_VERSION")))
        .manual("patchgate manual");
    match man.render(&mut out) {
        Ok(()) => {
            emit(&String::from_utf8_lossy(&out));
            0
        }
        Err(e) => {
            eprintln!("patchgate: cannot render the man page: {e}");
            crate::error::Kind::Io.exit().code()
        }
    }
}
