//! black where the project uses it (`[tool.black]` — black reads no other file —, a pre-commit
//! hook, or a script running it), on stdin with the file's real path.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, formatted};
use crate::checks::exec::{Ran, Source, flag, kept, python_complaint, run_tool, with_value};
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::Signals;

pub static SIGNALS: Signals = Signals {
    name: "black",
    pyproject_tables: &["tool.black"],
    commands: &["black"],
    precommit_ids: &["black", "black-jupyter"],
    dependencies: &["black"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "black",
    files: Files::Lang(Lang::Python),
    kind: Kind::Format,
    uses: Uses::Evidence(&SIGNALS, None),
    batch: Batch::PerFile,
    locate: Some(|l| l.program("black")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    each_file(call, |i| {
        let src = Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        };
        formatted(black(call.argv, call.cwd, &src, call.args, call.timeout))
    })
}

/// `black -q --stdin-filename <real path> -`: the formatted source on stdout (rc 0). rc 123 is a
/// syntax error, reported with black's `error: cannot parse: …` line; other failures (a bad
/// `[tool.black]`, rc 1 or 2) with black's message or a traceback's last line. A file the
/// configuration force-excludes is echoed unchanged, which reads as "already formatted".
pub(super) fn black(
    argv: &[OsString],
    cwd: &Path,
    file: &Source,
    extra: &[String],
    timeout: Duration,
) -> Ran<String> {
    let mut args: Vec<OsString> = vec!["-q".into()];
    args.extend(kept(
        extra,
        &[
            flag("--check"),
            flag("--diff"),
            flag("--color"),
            flag("--no-color"),
            flag("-v"),
            flag("--verbose"),
            with_value("--stdin-filename"),
            with_value("-c"),
            with_value("--code"),
        ],
    ));
    args.push("--stdin-filename".into());
    args.push(file.real.as_os_str().to_owned());
    args.push("-".into());
    let out = match run_tool(argv, cwd, args, Some(file.text), &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stderr = out.stderr_str();
    match out.code {
        Some(0) if !stderr.contains("Traceback (most recent call last)") => {
            Ran::Done(out.stdout_str())
        }
        Some(123) => Ran::Error(
            stderr
                .lines()
                .find(|l| l.starts_with("error: cannot "))
                .map_or_else(|| python_complaint(&stderr), |l| l.trim().to_string()),
        ),
        _ => Ran::Error(python_complaint(&stderr)),
    }
}
