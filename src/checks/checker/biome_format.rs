//! biome's formatter where the project configures biome (`biome.json(c)`, a script, lint-staged
//! entry or pre-commit hook running `biome format` / `biome check`), unless its configuration
//! turns the formatter off (`"formatter": {"enabled": false}`). Run on stdin from the directory
//! of the configuration: biome must run with its working directory inside the project.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, formatted};
use crate::checks::exec::{
    Ran, Source, first_lines, flag, kept, relative_to, run_tool, with_value,
};
use crate::project::config::Kind;
use crate::project::detect::Lang;
use crate::project::evidence::{Evidence, Signals, Use};

pub const CONFIGS: &[&str] = &["biome.json", "biome.jsonc"];

pub static SIGNALS: Signals = Signals {
    name: "biome (format)",
    config_files: CONFIGS,
    commands: &["biome format", "biome check", "biome ci"],
    precommit_ids: &["biome-format", "biome-check", "biome-ci"],
    dependencies: &["@biomejs/biome"],
    ..Signals::NONE
};

pub static CHECKER: Checker = Checker {
    name: "biome-format",
    files: Files::Lang(Lang::Node),
    kind: Kind::Format,
    uses: Uses::Evidence(&SIGNALS, Some(unless_off)),
    batch: Batch::PerFile,
    locate: Some(|l| l.program("biome")),
    run,
};

fn unless_off(ev: &Evidence, rel: &str, verdict: Use) -> Use {
    section_off(ev, rel, verdict, "formatter")
}

/// Turns a biome checker off where the file's nearest biome configuration says
/// `"<section>": {"enabled": false}` (biome's default is on).
pub(super) fn section_off(ev: &Evidence, rel: &str, verdict: Use, section: &str) -> Use {
    if !verdict.is_used() {
        return verdict;
    }
    let off = ev
        .find_config(rel, CONFIGS)
        .and_then(|config| ev.json_flag(&config, &format!("/{section}/enabled")))
        == Some(false);
    if off {
        return Use::NotUsed {
            why: format!("biome's configuration turns the {section} off ({section}.enabled)"),
        };
    }
    verdict
}

fn run(call: &Call) -> Ran<Out> {
    each_file(call, |i| {
        let src = Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        };
        formatted(biome_format(
            call.argv,
            call.cwd,
            &src,
            call.args,
            call.timeout,
        ))
    })
}

/// `biome format --stdin-file-path=<path relative to cwd>`: the formatted text (rc 0 whether or
/// not it changed). A path biome ignores, or a file kind it does not format, is echoed with "The
/// content was not formatted because …" on stderr: [`Ran::Skipped`]. A syntax error (rc 1, no
/// output) is an error.
pub(super) fn biome_format(
    argv: &[OsString],
    cwd: &Path,
    file: &Source,
    extra: &[String],
    timeout: Duration,
) -> Ran<String> {
    let mut args: Vec<OsString> = vec!["format".into(), "--colors=off".into()];
    args.extend(kept(
        extra,
        &[
            flag("--write"),
            flag("--fix"),
            with_value("--stdin-file-path"),
            with_value("--reporter"),
        ],
    ));
    let mut path = OsString::from("--stdin-file-path=");
    path.push(relative_to(file.real, cwd));
    args.push(path);
    let out = match run_tool(argv, cwd, args, Some(file.text), &[], timeout) {
        Ok(o) => o,
        Err(why) => return why,
    };
    let stderr = out.stderr_str();
    if let Some(line) = stderr
        .lines()
        .find(|l| l.contains("The content was not formatted because"))
    {
        return Ran::Skipped(line.trim().to_string());
    }
    match out.code {
        Some(0) => Ran::Done(out.stdout_str()),
        _ => Ran::Error(biome_complaint(&stderr)),
    }
}

/// biome's complaint, from its framed stderr: the `×` lines (the reason, then "Biome exited
/// because …"), without the frame.
pub(super) fn biome_complaint(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.trim().strip_prefix('×'))
        .map(str::trim)
        .filter(|l| !l.starts_with("Some errors were emitted"))
        .take(3)
        .collect();
    if lines.is_empty() {
        first_lines(stderr)
    } else {
        lines.join(" | ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One biome.jsonc (comments allowed) turns the formatter off: biome-format is not used there,
    /// biome-lint still is.
    #[test]
    fn a_section_turned_off_in_the_configuration_is_not_used() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("biome.jsonc"),
            "{\n  // the linter only\n  \"formatter\": { \"enabled\": false /* off */ }\n}\n",
        )
        .expect("write");
        let ev = Evidence::new(dir.path());
        let verdict = |c: &Checker| match &c.uses {
            Uses::Evidence(s, Some(refine)) => refine(&ev, "src/a.ts", ev.uses("src/a.ts", s)),
            _ => panic!("biome checkers refine their evidence"),
        };
        match verdict(&CHECKER) {
            Use::NotUsed { why } => assert!(why.contains("formatter.enabled"), "{why}"),
            used => panic!("the formatter is off: {used:?}"),
        }
        assert!(verdict(&super::super::biome_lint::CHECKER).is_used());
    }
}
