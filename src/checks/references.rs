//! Dangling references, built in: a definition the patch removes or renames whose old name is
//! still used elsewhere (the missed call site of a rename, the most common multi-file refactoring
//! mistake), found with the built-in parsers, no tool needed.
//!
//! How:
//! 1. Definitions (function, method, class, struct, enum, trait, interface, type alias, constant)
//!    of each changed file before and after the patch, and of each deleted file before: a name
//!    defined before and not after is a candidate.
//! 2. One pass over the repository's files (tracked, and untracked but not ignored) of the same
//!    language family (the patched content where the patch changes a file) with a multi-pattern
//!    search for the candidates as whole words, in parallel. A file that contains one is lexed
//!    ([`lexer`]: identifier tokens outside comments and strings); it is parsed (definitions
//!    and uses from one tree) only when the patch changed it, or when an occurrence may be a
//!    definition's name, or when the lexer cannot be sure of the text.
//! 3. A candidate counts only if it had exactly one definition in the project before and has
//!    none after (a name defined elsewhere too is not dangling), and, for a method, only if its
//!    name is a compound one (`parse_config`, `getUser`): a method called `get` or `append` shares
//!    its name with library methods whose calls look the same, and nothing here knows types.
//! 4. Every use of a counted name as an identifier (not in a comment or a string) in a file the
//!    patch did not change, or in a changed file on a line the patch did not write, is a finding.
//!
//! Invariant: it never reports a name the original state did not define exactly once, so a
//! correct rename (every use updated) passes.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;

use super::checker::Input;
use super::finding::{RawFinding, Severity};
use super::gate::LineMap;
use crate::runner::Cmd;
use crate::syntax::Language;
use crate::syntax::lexer;
use crate::syntax::symbols::{self, DefKind, Definition};

/// Which files can use a name defined in a file of `lang`.
fn family(lang: Language) -> u8 {
    match lang {
        Language::Python => 1,
        Language::JavaScript | Language::TypeScript | Language::Tsx => 2,
        Language::Rust => 3,
        Language::Go => 4,
        _ => 0,
    }
}

/// Whether the references check looks at this file.
pub fn applies(rel: &str) -> bool {
    Language::from_path(rel).is_some_and(|l| family(l) != 0)
        // A component's `<script>` imports modules (`imports`); its names are not read here.
        || super::imports::is_component(rel)
}

/// A removed definition: its name, where it was, and its language family.
struct Gone {
    name: String,
    family: u8,
    from: String,
    line: usize,
}

/// The dangling uses the patch leaves: findings with repository-relative paths.
pub fn check(
    files: &[Input],
    removed: &[(String, std::sync::Arc<Vec<u8>>)],
    tracked: &Tracked,
) -> Result<Vec<RawFinding>, String> {
    let gone = removed_definitions(files, removed);
    if gone.is_empty() {
        return Ok(Vec::new());
    }
    let changed: BTreeMap<&str, &Input> = files.iter().map(|i| (i.rel, i)).collect();
    let deleted: BTreeSet<&str> = removed.iter().map(|(r, _)| r.as_str()).collect();
    let names: Vec<&str> = gone.iter().map(|g| g.name.as_str()).collect();
    let families: BTreeSet<u8> = gone.iter().map(|g| g.family).collect();
    let ac = AhoCorasick::new(&names).map_err(|e| e.to_string())?;
    let wanted: HashSet<&str> = names.iter().copied().collect();

    // The state after the patch, for every file of the families that holds a candidate as a
    // word: read and searched in parallel, then each parsed once (definitions and uses).
    let mut paths: Vec<String> = tracked.get()?.to_vec();
    // Created files and the new paths of moved ones are not tracked yet.
    paths.extend(files.iter().map(|i| i.rel.to_string()));
    paths.sort();
    paths.dedup();
    let hits: Vec<Hit> = paths
        .par_iter()
        .filter(|rel| !deleted.contains(rel.as_str()))
        .filter_map(|rel| {
            let lang = Language::from_path(rel).filter(|l| families.contains(&family(*l)))?;
            let input = changed.get(rel.as_str());
            let text = match input {
                Some(i) => i.text().to_string(),
                None => tracked.read(rel)?,
            };
            if !has_word(&ac, &text) {
                return None;
            }
            let symbols = match input {
                // Parsed already for its definitions (and by the syntax gate): cached.
                Some(i) => symbols::of_cached(rel, &text, i.before)?,
                None => match lexed(lang, &text, &wanted) {
                    Some(s) => s,
                    None => symbols::of(rel, &text)?,
                },
            };
            Some(Hit {
                rel: rel.clone(),
                family: family(lang),
                symbols,
            })
        })
        .collect();

    // Still defined somewhere after the patch (in another file, unchanged or patched, or moved
    // within its own): not dangling. An unchanged file defines after what it defined before, so
    // this also rules out a name that had a second definition.
    let defined_after: BTreeSet<(u8, &str)> = hits
        .iter()
        .flat_map(|h| {
            h.symbols
                .definitions
                .iter()
                .map(move |d| (h.family, d.name.as_str()))
        })
        .collect();
    // Defined twice in the changed or deleted files, both removed: not the one definition.
    let mut count: BTreeMap<(u8, &str), usize> = BTreeMap::new();
    for g in &gone {
        *count.entry((g.family, g.name.as_str())).or_default() += 1;
    }
    let dangling: BTreeMap<(u8, &str), &Gone> = gone
        .iter()
        .filter(|g| count.get(&(g.family, g.name.as_str())) == Some(&1))
        .filter(|g| !defined_after.contains(&(g.family, g.name.as_str())))
        .map(|g| ((g.family, g.name.as_str()), g))
        .collect();
    if dangling.is_empty() {
        return Ok(Vec::new());
    }

    let mut out = Vec::new();
    for h in &hits {
        let map = changed.get(h.rel.as_str()).map(|i| match i.before {
            Some(b) => LineMap::new(b, i.text()),
            None => LineMap::all_new(i.text()),
        });
        for (name, line, column) in &h.symbols.uses {
            let Some(g) = dangling.get(&(h.family, name.as_str())) else {
                continue;
            };
            // In a changed file, only where the patch did not write: what the patch wrote is
            // its author's intent, and the compilers and linters see it.
            if map.as_ref().is_some_and(|m| m.changed(*line)) {
                continue;
            }
            out.push(RawFinding {
                path: h.rel.clone(),
                line: *line,
                column: *column,
                rule: "dangling-reference".into(),
                severity: Severity::Error,
                message: format!(
                    "`{name}` is no longer defined but is still used here (it was defined at \
                     {}:{})",
                    g.from, g.line
                ),
            });
        }
    }
    Ok(out)
}

/// The uses of `names` in an unchanged file, from the lexer: enough when none of them can be
/// a definition's name (it then defines none of the candidates, and its other definitions do
/// not matter). `None`: the file needs a parse.
fn lexed(lang: Language, text: &str, names: &HashSet<&str>) -> Option<symbols::Symbols> {
    let found = lexer::occurrences(lang, text, names)?;
    if found.iter().any(|o| o.may_define) {
        return None;
    }
    Some(symbols::Symbols {
        definitions: Vec::new(),
        uses: found
            .into_iter()
            .map(|o| (o.name, o.line, o.column))
            .collect(),
    })
}

/// A file that holds a candidate name, after the patch.
struct Hit {
    rel: String,
    family: u8,
    symbols: symbols::Symbols,
}

/// Names defined before and not after, per changed or deleted file.
fn removed_definitions(
    files: &[Input],
    removed: &[(String, std::sync::Arc<Vec<u8>>)],
) -> Vec<Gone> {
    let mut gone = Vec::new();
    let mut push = |rel: &str, before: &str, after: Option<&str>| {
        let Some(lang) = Language::from_path(rel).filter(|l| family(*l) != 0) else {
            return;
        };
        // Through the tree cache: the patched text is reparsed from the original's tree only
        // where it changed, and the syntax gate reuses it.
        let Some(defs) = symbols::definitions_cached(rel, before, None) else {
            return;
        };
        let now: BTreeSet<String> = after
            .and_then(|a| symbols::definitions_cached(rel, a, Some(before)))
            .unwrap_or_default()
            .into_iter()
            .map(|d| d.name)
            .collect();
        for d in defs
            .into_iter()
            .filter(|d| counts(d) && !now.contains(&d.name))
        {
            gone.push(Gone {
                name: d.name,
                family: family(lang),
                from: rel.to_string(),
                line: d.start_line,
            });
        }
    };
    for i in files {
        if let Some(b) = i.before
            && b != i.text()
        {
            push(i.rel, b, Some(i.text()));
        }
    }
    for (rel, bytes) in removed {
        if let Ok(b) = std::str::from_utf8(bytes) {
            push(rel, b, None);
        }
    }
    gone
}

/// The kinds of definition whose removal can leave uses behind.
fn counts(d: &Definition) -> bool {
    let short = d.name.chars().count() < 3;
    match d.kind {
        DefKind::Impl => false,
        DefKind::Method => !short && compound(&d.name),
        _ => !short && !d.name.starts_with("__"),
    }
}

/// `parse_config`, `getUser`, `HTTPError`: a name made of several words.
fn compound(name: &str) -> bool {
    let inner = name.trim_matches('_');
    inner.contains('_') || inner.chars().skip(1).any(|c| c.is_uppercase())
}

/// Whether `text` holds one of the patterns as a whole word.
fn has_word(ac: &AhoCorasick, text: &str) -> bool {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    ac.find_overlapping_iter(b).any(|m| {
        (m.start() == 0 || !word(b[m.start() - 1])) && (m.end() == b.len() || !word(b[m.end()]))
    })
}

/// The repository's files that git tracks or would track (untracked but not ignored), relative:
/// listed once, when the first of the checks that look across files asks (a patch that removes
/// nothing and renames nothing needs no list). With a context (`check --staged`, `apply
/// --branch`), the files of the state under check: the context's absent files left out, its
/// others added, and their texts read from it.
pub struct Tracked<'a> {
    repo_root: &'a Path,
    context: &'a super::Context,
    list: std::sync::OnceLock<Result<Vec<String>, String>>,
}

impl<'a> Tracked<'a> {
    pub fn new(repo_root: &'a Path, context: &'a super::Context) -> Tracked<'a> {
        Tracked {
            repo_root,
            context,
            list: std::sync::OnceLock::new(),
        }
    }

    pub fn get(&self) -> Result<&[String], String> {
        match self.list.get_or_init(|| {
            let context = self.context.files()?;
            let mut list: Vec<String> = tracked(self.repo_root)?
                .into_iter()
                .filter(|rel| !matches!(self.context.get(rel), Some(None)))
                .collect();
            list.extend(
                context
                    .iter()
                    .filter(|(_, content)| content.is_some())
                    .map(|(rel, _)| rel.clone()),
            );
            list.sort();
            list.dedup();
            Ok(list)
        }) {
            Ok(l) => Ok(l),
            Err(e) => Err(e.clone()),
        }
    }

    /// The text of `rel` in the state under check (`None`: absent, or not UTF-8).
    pub fn read(&self, rel: &str) -> Option<String> {
        match self.context.get(rel) {
            Some(Some(bytes)) => String::from_utf8(bytes.to_vec()).ok(),
            Some(None) => None,
            None => String::from_utf8(std::fs::read(self.repo_root.join(rel)).ok()?).ok(),
        }
    }
}

fn tracked(repo_root: &Path) -> Result<Vec<String>, String> {
    let out = Cmd::new("git", repo_root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .timeout(std::time::Duration::from_secs(30))
        .run()
        .map_err(|e| e.to_string())?;
    if !out.success() {
        return Err(format!("git ls-files: {}", out.stderr_str().trim()));
    }
    Ok(out.nul_separated())
}
