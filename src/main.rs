//! The `patchgate` binary: everything lives in the library; this maps it to a process exit code,
//! and hands the command line the MCP server it starts for `patchgate mcp`.

fn main() {
    patchgate::malloc::tune();
    patchgate::fdtable::reserve();
    patchgate::panics::install_hook();
    patchgate::timing::init();
    let code = patchgate::cli::run(std::env::args_os().collect(), patchgate::mcp::serve);
    std::process::exit(code);
}
