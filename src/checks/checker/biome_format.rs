//! biome's formatter where the project configures biome (`biome.json(c)`, a script, lint-staged
//! entry or pre-commit hook running `biome format` / `biome check`), unless its configuration
//! turns the formatter off (`"formatter": {"enabled": false}`). Run on stdin from the directory
//! of the configuration: biome must run with its working directory inside the project.

use std::path::Path;

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, formatted};
use crate::checks::runners::{self, Source};
use crate::checks::tools::Ran;
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

fn unless_off(_: &Evidence, _: &str, verdict: Use) -> Use {
    section_off(verdict, "formatter")
}

/// Turns a biome checker off where the configuration found says `"<section>": {"enabled": false}`.
pub(super) fn section_off(verdict: Use, section: &str) -> Use {
    let Use::Used { config_dir, .. } = &verdict else {
        return verdict;
    };
    if enabled(config_dir, section) == Some(false) {
        return Use::NotUsed {
            why: format!("biome's configuration turns the {section} off ({section}.enabled)"),
        };
    }
    verdict
}

/// `<section>.enabled` in the biome configuration of `dir` (JSONC: comments are allowed).
fn enabled(dir: &Path, section: &str) -> Option<bool> {
    let text = ["biome.json", "biome.jsonc"]
        .iter()
        .find_map(|n| std::fs::read_to_string(dir.join(n)).ok())?;
    let doc: serde_json::Value = serde_json::from_str(&strip_comments(&text)).ok()?;
    doc.get(section)?.get("enabled")?.as_bool()
}

/// JSONC to JSON: line and block comments outside strings removed, trailing commas kept as
/// they are (biome's own files rarely have them; such a file reads as "no setting").
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_str = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn run(call: &Call) -> Ran<Out> {
    each_file(call, |i| {
        let src = Source {
            rel: i.rel,
            real: i.real,
            text: i.text(),
        };
        formatted(runners::biome_format(
            call.argv,
            call.cwd,
            &src,
            call.args,
            call.timeout,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_are_ignored_and_a_disabled_formatter_is_seen() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("biome.jsonc"),
            "{\n  // the linter only\n  \"formatter\": { \"enabled\": false /* off */ },\n  \"x\": \"a//b\"\n}\n",
        )
        .expect("write");
        assert_eq!(enabled(dir.path(), "formatter"), Some(false));
        assert_eq!(enabled(dir.path(), "linter"), None);
    }
}
