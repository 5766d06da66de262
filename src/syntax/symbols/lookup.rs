//! Finding one symbol's definition by name, for an edit scoped with `within`.
//!
//! A query is a name with its enclosing names, separated by `.` or `::` in any language
//! (`Config.parse`, `Config::parse`, `outer.inner`, Go's `Server.Start` for a method whose
//! receiver is `*Server`). It matches a definition whose path ends with the query's segments;
//! where some definitions match the whole path exactly, only those count, so a top-level
//! `parse` stays addressable next to `Config.parse`.
//!
//! Invariants:
//! - Every definition counts, nested ones included: functions inside functions, classes inside
//!   functions, class fields holding an arrow function (unlike the reference check's view).
//! - Several definitions with the same path are one symbol only when at most one of them is
//!   not a part: a Rust impl block, or an overload declaration (a TypeScript function or method
//!   signature, a Python `@overload`). So `Config` is its struct (or enum, trait) plus every
//!   `impl Config` and `impl Trait for Config`, a method is found in whichever impl block holds
//!   it, and an overloaded function is its signatures plus its implementation. Anything else
//!   found more than once is [`Lookup::Ambiguous`].
//! - A file with a syntax error is refused ([`LookupError::Syntax`]): a definition's extent
//!   is a guess around an error, and a scope that silently misses lines is the wrong-place
//!   edit `within` exists to prevent.

use std::cell::RefCell;

use tree_sitter::Tree;

use super::{Collector, Container, DefKind, Definition};
use crate::syntax::languages::{self, Language};

thread_local! {
    /// The text last looked up and its tree. The scoped edits of a batch usually come one after
    /// another on one file, each seeing the text the previous one left: reparsing only the
    /// changed part keeps a group of them on a large file from parsing it once per edit.
    static LAST: RefCell<Option<(Language, String, Tree)>> = const { RefCell::new(None) };
}

/// The outcome of a lookup in a file that parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The symbol's definitions, in source order: one, or a Rust type with its impl blocks.
    Found(Vec<Definition>),
    /// Nothing by that name: the definitions with the most similar names, best first.
    NotFound(Vec<Definition>),
    /// The name fits more than one symbol: every candidate definition, in source order.
    Ambiguous(Vec<Definition>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// Not a language the built-in parsers cover.
    NoParser,
    /// The parser gave up (time budget).
    Unparsed,
    /// The file has a syntax error at this 1-based line.
    Syntax { line: usize },
}

/// How many nearest names a miss reports.
const NEAREST: usize = 3;

/// Looks `query` up among the definitions of `text`, a file at `rel` (its extension picks the
/// language).
pub fn lookup(rel: &str, text: &str, query: &str) -> Result<Lookup, LookupError> {
    let lang = Language::from_path(rel)
        .filter(|l| l.is_tree_sitter())
        .ok_or(LookupError::NoParser)?;
    let tree = tree_of(lang, text).ok_or(LookupError::Unparsed)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(LookupError::Syntax {
            line: first_error_line(root),
        });
    }
    let mut c = Collector::new(lang, text);
    c.nested = true;
    c.scope(root, "", Container::Module);
    let entries: Vec<Entry> = c
        .defs
        .into_iter()
        .zip(c.paths)
        .enumerate()
        .map(|(i, (def, path))| Entry {
            part: def.kind == DefKind::Impl || c.overloads.contains(&i),
            def,
            path,
        })
        .collect();
    Ok(resolve(&entries, query))
}

/// Every definition of `text` that a lookup sees (nested ones included), in source order, from
/// a fresh parse that leaves the lookup's tree alone: for a piece of a file cut at a top-level
/// item, where a miss wants the exact extent of one definition. `None` without a tree-sitter
/// parser for `rel`, or when the text does not parse cleanly (an extent around an error is a
/// guess).
pub fn nested_definitions(rel: &str, text: &str) -> Option<Vec<Definition>> {
    let lang = Language::from_path(rel).filter(|l| l.is_tree_sitter())?;
    let tree = languages::parse(lang, text)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut c = Collector::new(lang, text);
    c.nested = true;
    c.scope(root, "", Container::Module);
    Some(c.defs)
}

/// The tree of `text`, incrementally from the last one when there is one. An incremental parse
/// is exact whatever the two texts are; a similar text only makes it cheaper.
fn tree_of(lang: Language, text: &str) -> Option<Tree> {
    LAST.with(|cell| {
        let Ok(mut last) = cell.try_borrow_mut() else {
            return languages::parse(lang, text);
        };
        let tree = match last.as_ref() {
            Some((l, t, tree)) if *l == lang && t == text => tree.clone(),
            Some((l, t, tree)) if *l == lang => {
                languages::reparse(lang, tree, &languages::single_edit(t, text), text)?
            }
            _ => languages::parse(lang, text)?,
        };
        *last = Some((lang, text.to_string(), tree.clone()));
        Some(tree)
    })
}

/// The segments of a query or path: `a.b::c` → `[a, b, c]`, blanks dropped.
pub fn segments(name: &str) -> Vec<&str> {
    name.split("::")
        .flat_map(|p| p.split('.'))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// A short description for messages: `Config.parse (method, lines 3-9)`.
pub fn describe(d: &Definition) -> String {
    let kind = match d.kind {
        DefKind::Function => "function",
        DefKind::Method => "method",
        DefKind::Class => "class",
        DefKind::Struct => "struct",
        DefKind::Enum => "enum",
        DefKind::Trait => "trait",
        DefKind::Interface => "interface",
        DefKind::TypeAlias => "type",
        DefKind::Constant => "constant",
        DefKind::Impl => "impl",
    };
    let lines = if d.start_line == d.end_line {
        format!("line {}", d.start_line)
    } else {
        format!("lines {}-{}", d.start_line, d.end_line)
    };
    format!("{} ({kind}, {lines})", d.qualified)
}

struct Entry {
    def: Definition,
    /// What the query is compared with (a Rust impl's type path, not its `Trait for Type`).
    path: String,
    /// A Rust impl block or an overload declaration: one part of a symbol defined in several.
    part: bool,
}

fn resolve(entries: &[Entry], query: &str) -> Lookup {
    let want = segments(query);
    if want.is_empty() {
        return Lookup::NotFound(Vec::new());
    }
    // (entry, whole path matched)
    let hits: Vec<(&Entry, bool)> = entries
        .iter()
        .filter_map(|e| {
            let exact = |segs: &[&str]| segs == want.as_slice();
            let suffix = |segs: &[&str]| segs.ends_with(&want);
            let path = segments(&e.path);
            // `Display for Config` names one impl block by its label.
            let label = (e.def.kind == DefKind::Impl).then(|| segments(&e.def.qualified));
            if exact(&path) || label.as_deref().is_some_and(exact) {
                Some((e, true))
            } else if suffix(&path) || label.as_deref().is_some_and(suffix) {
                Some((e, false))
            } else {
                None
            }
        })
        .collect();
    if hits.is_empty() {
        return Lookup::NotFound(nearest(entries, &want));
    }
    let any_exact = hits.iter().any(|(_, exact)| *exact);
    let hits: Vec<&Entry> = hits
        .into_iter()
        .filter(|(_, exact)| *exact || !any_exact)
        .map(|(e, _)| e)
        .collect();
    let defs: Vec<Definition> = hits.iter().map(|e| e.def.clone()).collect();
    let one_path = hits.iter().all(|e| e.path == hits[0].path);
    let whole = hits.iter().filter(|e| !e.part).count();
    if one_path && whole <= 1 {
        Lookup::Found(defs)
    } else {
        Lookup::Ambiguous(defs)
    }
}

/// The definitions whose names are most like the query's, best first, one per name.
fn nearest(entries: &[Entry], want: &[&str]) -> Vec<Definition> {
    let query = want.join(".").to_lowercase();
    let last = want.last().map(|s| s.to_lowercase()).unwrap_or_default();
    let mut scored: Vec<(f64, &Entry)> = entries
        .iter()
        .map(|e| {
            let whole = strsim::normalized_damerau_levenshtein(
                &query,
                &segments(&e.def.qualified).join(".").to_lowercase(),
            );
            let name = strsim::normalized_damerau_levenshtein(&last, &e.def.name.to_lowercase());
            // A right name under the wrong parent is nearly right; a right parent alone is not.
            (whole.max(name * 0.95), e)
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(a.1.def.start_line.cmp(&b.1.def.start_line))
    });
    // One line per name; of a symbol in parts, its whole definition (the implementation, the
    // struct) rather than a signature or an impl block.
    let mut out: Vec<&Entry> = Vec::new();
    for (_, e) in scored {
        match out.iter().position(|o| o.def.qualified == e.def.qualified) {
            Some(i) if out[i].part && !e.part => out[i] = e,
            Some(_) => {}
            None if out.len() < NEAREST => out.push(e),
            None => {}
        }
    }
    out.into_iter().map(|e| e.def.clone()).collect()
}

/// The line of the first error or missing node, pre-order.
fn first_error_line(root: tree_sitter::Node) -> usize {
    let mut node = root;
    'down: loop {
        if node.is_error() || node.is_missing() {
            return node.start_position().row + 1;
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if child.has_error() {
                node = child;
                continue 'down;
            }
        }
        return node.start_position().row + 1;
    }
}

#[cfg(test)]
#[path = "lookup_tests.rs"]
mod tests;
