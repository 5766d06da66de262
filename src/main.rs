//! The `patchgate` binary: everything lives in the library; this maps it to a process exit code.

fn main() {
    patchgate::panics::install_hook();
    patchgate::timing::init();
    let code = patchgate::cli::run(std::env::args_os().collect());
    std::process::exit(code);
}
