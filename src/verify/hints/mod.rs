//! Hints for common errors of a failed verify step, from a table of patterns per language
//! (`table::TABLE`): an undefined name, an unresolved import or missing module, a call that
//! no longer matches a changed signature (with the other call sites), a variable declared and
//! not used, a missing go.sum entry, a test timeout.
//!
//! The patterns are matched against the failures (`name: message`) and the step's raw output.
//! JSON output is read as the text it carries: the `rendered` diagnostic of each
//! `cargo … --message-format=json` line (rustc's E0061 names the function only in its
//! "function defined here" note), the `Output` of each `go test -json` event and the `message`
//! of other JSON lines (`mypy -O json`). Hints are de-duplicated (one per name), ordered by the
//! table (most useful first), at most [`MAX_HINTS`].

mod sites;
mod table;

pub use self::sites::call_sites;

use std::collections::HashSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use self::table::TABLE;
use super::Failure;
use crate::project::detect::Lang;

/// At most this many hints are given.
pub const MAX_HINTS: usize = 5;
/// Only this much of the output is searched (a runaway log must not stall the report).
const MAX_OUTPUT_BYTES: usize = 2 * 1024 * 1024;

/// The table's regexes, compiled once (a row whose regex does not compile is skipped; a unit
/// test makes sure none is).
static COMPILED: LazyLock<Vec<Option<Regex>>> =
    LazyLock::new(|| TABLE.iter().map(|(_, p, _)| Regex::new(p).ok()).collect());

/// Hints for `failures` and the step's `output` in a `lang` project.
pub fn hints(lang: Lang, failures: &[Failure], output: &str) -> Vec<String> {
    collect(lang, failures, output, None)
}

/// [`hints`], with the other call sites of a function whose signature changed listed from the
/// source files under `root` (the directory the tool ran in, which its paths are relative
/// to), and tsc's TS2554 callee read from the source.
pub fn hints_with_sites(
    lang: Lang,
    failures: &[Failure],
    output: &str,
    root: &Path,
) -> Vec<String> {
    collect(lang, failures, output, Some(root))
}

/// A text to match: a failure (with its location) or a block of the output.
struct Text {
    body: String,
    at: Option<(String, usize)>,
}

fn collect(lang: Lang, failures: &[Failure], output: &str, root: Option<&Path>) -> Vec<String> {
    let texts = texts(failures, output);
    let mut hints = Vec::new();
    let mut names = HashSet::new();
    for ((row_lang, _, template), regex) in TABLE.iter().zip(COMPILED.iter()) {
        let Some(regex) = regex.as_ref().filter(|_| *row_lang == lang) else {
            continue;
        };
        for text in &texts {
            for caps in regex.captures_iter(&text.body) {
                let Some((key, hint)) = render(template, &caps, text, failures, root, &names)
                else {
                    continue;
                };
                if names.insert(key) && !hints.contains(&hint) {
                    hints.push(hint);
                    if hints.len() == MAX_HINTS {
                        return hints;
                    }
                }
            }
        }
    }
    hints
}

/// The failures as `name: message`, then the output (JSON lines read as their text) split into
/// blocks at lines that start with `error` or `warning`.
fn texts(failures: &[Failure], output: &str) -> Vec<Text> {
    let mut texts: Vec<Text> = failures
        .iter()
        .map(|f| Text {
            body: if f.name.is_empty() {
                f.message.clone()
            } else {
                format!("{}: {}", f.name, f.message)
            },
            at: f.file.clone().zip(f.line),
        })
        .collect();
    let mut cut = output.len().min(MAX_OUTPUT_BYTES);
    while !output.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut block = String::new();
    for line in readable(&output[..cut]).lines() {
        if (line.starts_with("error") || line.starts_with("warning")) && !block.is_empty() {
            texts.push(Text {
                body: std::mem::take(&mut block),
                at: None,
            });
        }
        block.push_str(line);
        block.push('\n');
    }
    if !block.is_empty() {
        texts.push(Text {
            body: block,
            at: None,
        });
    }
    texts
}

/// The output with each JSON line replaced by the text it carries: cargo's
/// `message.rendered`, go test's `Output`, mypy's `message`.
fn readable(output: &str) -> String {
    let mut text = String::with_capacity(output.len());
    for line in output.lines() {
        let value = line
            .trim_start()
            .starts_with('{')
            .then(|| serde_json::from_str::<serde_json::Value>(line).ok())
            .flatten();
        let carried = value.as_ref().and_then(|v| {
            v.pointer("/message/rendered")
                .or_else(|| v.get("Output"))
                .or_else(|| v.get("message"))
                .and_then(|s| s.as_str())
        });
        match (value.is_some(), carried) {
            (_, Some(carried)) => {
                text.push_str(carried);
                if !carried.ends_with('\n') {
                    text.push('\n');
                }
            }
            (true, None) => {}
            (false, None) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}

/// The hint of one match and its de-duplication key (the name it is about), or `None` when the
/// name already has a hint (before the call sites are scanned for it again).
fn render(
    template: &str,
    caps: &Captures,
    text: &Text,
    failures: &[Failure],
    root: Option<&Path>,
    done: &HashSet<String>,
) -> Option<(String, String)> {
    let group = |name: &str| caps.name(name).map(|m| m.as_str());
    // Where the call is, for a row that captures a position instead of a name (TS2554).
    let at: Option<(String, usize, Option<usize>)> = match (group("file"), group("line")) {
        (Some(file), Some(line)) => Some((
            file.to_string(),
            line.parse().ok()?,
            group("col").and_then(|c| c.parse().ok()),
        )),
        _ => text.at.clone().map(|(file, line)| (file, line, None)),
    };
    let name = match group("name") {
        Some(name) => Some(name.to_string()),
        None => root.and_then(|root| {
            let (file, line, col) = at.as_ref()?;
            sites::callee_at(root, file, *line, *col)
        }),
    };
    // An unresolved callee (no root to read it from) gets one hint, not one per call.
    let key = name.clone().unwrap_or_else(|| template.to_string());
    if done.contains(&key) {
        return None;
    }
    let callee = match (&name, &at) {
        (Some(name), _) => format!("`{name}`"),
        (None, Some((file, line, _))) => format!("the function called at {file}:{line}"),
        (None, None) => "a function".to_string(),
    };
    let mut hint = template
        .replace("{name}", name.as_deref().unwrap_or(""))
        .replace("{callee}", &callee);
    if let Some(prefix) = hint.strip_suffix(": {sites}").map(str::to_string) {
        hint = match (root, &name) {
            (Some(root), Some(name)) => {
                let reported: Vec<(String, usize)> = failures
                    .iter()
                    .filter_map(|f| Some((normalize(f.file.as_deref()?, root), f.line?)))
                    .collect();
                let others: Vec<String> = call_sites(name, root)
                    .into_iter()
                    .filter(|site| {
                        !reported
                            .iter()
                            .any(|(file, line)| *site == format!("{file}:{line}"))
                    })
                    .collect();
                if others.is_empty() {
                    format!("{prefix} (no other call sites found)")
                } else {
                    format!("{prefix}: {}", others.join(", "))
                }
            }
            _ => prefix,
        };
    }
    Some((key, hint))
}

/// A tool's path as a `root`-relative, `/`-separated one.
fn normalize(path: &str, root: &Path) -> String {
    let path = Path::new(path);
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").map(str::to_string).unwrap_or(text)
}

#[cfg(test)]
mod tests;
