//! Incremental parsing: the edits that turn one text into another, a reparse from the first
//! text's tree, and a small process-wide cache of recent trees, so that the syntax gate, the
//! reference check and the next patch of a long-running server (whose original is often the
//! last patch's result) parse each text at most once, and the patched text only where it
//! changed.
//!
//! Invariants:
//! - A reparse gives the same tree as a full parse of the same text (tree-sitter reuses only
//!   the nodes the edits leave untouched); the tests compare the two on random edits.
//! - The cache is keyed by language and the whole text (compared byte for byte, never by hash
//!   alone), holds at most [`MAX_ENTRIES`] trees of at most [`MAX_TEXT_BYTES`] of text in all,
//!   and forgets the least recently used first. A tree is never modified in place: callers get
//!   a clone (a reference count, not a copy).

use std::sync::{Mutex, PoisonError};

use similar::{Algorithm, DiffTag, TextDiff};
use tree_sitter::{InputEdit, Point, Tree};

use super::languages::{self, Language};

/// Trees kept at most.
const MAX_ENTRIES: usize = 32;
/// Text kept at most, all entries together; a larger text is parsed but not kept.
const MAX_TEXT_BYTES: usize = 4 << 20;
/// A changed middle (after the common prefix and suffix are cut) longer than this is split
/// into hunks by a line diff, so that edits far apart do not make everything between them
/// look changed.
const ONE_EDIT_BYTES: usize = 4096;

struct Entry {
    lang: Language,
    text: Box<str>,
    tree: Tree,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The tree of `text`: cached, else reparsed from the cached tree of `base` (the text it was
/// made from), else parsed from scratch; kept for the next caller. `None`: not a tree-sitter
/// language, or the parse ran out of time.
pub fn tree(lang: Language, text: &str, base: Option<&str>) -> Option<Tree> {
    if let Some(t) = cached(lang, text) {
        return Some(t);
    }
    let tree = match base.and_then(|b| cached(lang, b).map(|t| (b, t))) {
        Some((b, base_tree)) => reparse(lang, &base_tree, b, text)?,
        None => languages::parse(lang, text)?,
    };
    keep(lang, text, &tree);
    Some(tree)
}

/// The tree of `text` made from `base_tree` (the tree of `base`), or the cached one; kept.
pub fn tree_from(lang: Language, text: &str, base: &str, base_tree: &Tree) -> Option<Tree> {
    if let Some(t) = cached(lang, text) {
        return Some(t);
    }
    let tree = reparse(lang, base_tree, base, text)?;
    keep(lang, text, &tree);
    Some(tree)
}

/// The cached tree of exactly `text`, if any.
pub fn cached(lang: Language, text: &str) -> Option<Tree> {
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let i = cache
        .iter()
        .rposition(|e| e.lang == lang && e.text.len() == text.len() && *e.text == *text)?;
    let entry = cache.remove(i);
    let tree = entry.tree.clone();
    cache.push(entry);
    Some(tree)
}

/// Empties the cache (for measurements that must start cold).
pub fn forget() {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner).clear();
}

fn keep(lang: Language, text: &str, tree: &Tree) {
    if text.len() > MAX_TEXT_BYTES / 4 {
        return;
    }
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if cache
        .iter()
        .any(|e| e.lang == lang && e.text.len() == text.len() && *e.text == *text)
    {
        return;
    }
    cache.push(Entry {
        lang,
        text: text.into(),
        tree: tree.clone(),
    });
    let mut bytes: usize = cache.iter().map(|e| e.text.len()).sum();
    while cache.len() > MAX_ENTRIES || bytes > MAX_TEXT_BYTES {
        let gone = cache.remove(0);
        bytes -= gone.text.len();
    }
}

/// `text` parsed reusing `base_tree`, the tree of `base`: only what [`edits`] marks changed is
/// parsed again. A tree with errors is parsed again from scratch: tree-sitter's error recovery
/// depends on what it reuses, so an incremental tree with errors can differ from a full parse
/// of the same text (where the errors are placed and how much structure survives), and the
/// gate's verdict must not depend on how a text was reached.
pub fn reparse(lang: Language, base_tree: &Tree, base: &str, text: &str) -> Option<Tree> {
    let mut old = base_tree.clone();
    for e in edits(base, text) {
        old.edit(&e);
    }
    let tree = languages::parse_from(lang, text, &old)?;
    if tree.root_node().has_error() {
        return languages::parse(lang, text);
    }
    Some(tree)
}

/// The edits that turn `before` into `after`, in order, each in the coordinates of the text
/// the earlier ones produced (as `Tree::edit` takes them). One edit for a change confined to
/// a few KB; otherwise one per hunk of a line diff, each cut to its own common prefix and
/// suffix. Every offset is on a character boundary of both texts.
pub fn edits(before: &str, after: &str) -> Vec<InputEdit> {
    let one = languages::single_edit(before, after);
    let (changed_old, changed_new) = (
        one.old_end_byte - one.start_byte,
        one.new_end_byte - one.start_byte,
    );
    if changed_old.max(changed_new) <= ONE_EDIT_BYTES {
        return if changed_old == 0 && changed_new == 0 {
            Vec::new()
        } else {
            vec![one]
        };
    }
    let old_lines = line_starts(before);
    let new_starts = line_starts(after);
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(std::time::Duration::from_millis(100))
        .diff_lines(before, after);
    let mut out = Vec::new();
    // (old start line, old end line, new start line, new end line) of the hunk being gathered.
    let mut hunk: Option<(usize, usize, usize, usize)> = None;
    let flush = |h: (usize, usize, usize, usize), out: &mut Vec<InputEdit>| {
        let at =
            |starts: &[usize], line: usize, len: usize| starts.get(line).copied().unwrap_or(len);
        let (os, oe) = (
            at(&old_lines, h.0, before.len()),
            at(&old_lines, h.1, before.len()),
        );
        let (ns, ne) = (
            at(&new_starts, h.2, after.len()),
            at(&new_starts, h.3, after.len()),
        );
        if let Some(e) = hunk_edit(before, after, (os, oe), (ns, ne), &new_starts) {
            out.push(e);
        }
    };
    for op in diff.ops() {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            if let Some(h) = hunk.take() {
                flush(h, &mut out);
            }
            continue;
        }
        hunk = Some(match hunk {
            Some((os, _, ns, _)) => (os, old.end, ns, new.end),
            None => (old.start, old.end, new.start, new.end),
        });
    }
    if let Some(h) = hunk {
        flush(h, &mut out);
    }
    out
}

/// The edit for one hunk: `before[old]` became `after[new]`; the text before the hunk is the
/// same in both, so the start is the same offset in the intermediate text and in `after`.
fn hunk_edit(
    before: &str,
    after: &str,
    (os, oe): (usize, usize),
    (ns, ne): (usize, usize),
    new_starts: &[usize],
) -> Option<InputEdit> {
    let (o, n) = (before.get(os..oe)?, after.get(ns..ne)?);
    let inner = languages::single_edit(o, n);
    if inner.start_byte == inner.old_end_byte && inner.start_byte == inner.new_end_byte {
        return None;
    }
    let start = ns + inner.start_byte;
    let old_len = inner.old_end_byte - inner.start_byte;
    let new_end = ns + inner.new_end_byte;
    let point = |at: usize| {
        let row = new_starts.partition_point(|&s| s <= at).saturating_sub(1);
        Point::new(row, at - new_starts[row])
    };
    let start_position = point(start);
    let removed = &o[inner.start_byte..inner.old_end_byte];
    let old_end_position = match memchr::memrchr(b'\n', removed.as_bytes()) {
        Some(last) => Point::new(
            start_position.row + memchr::memchr_iter(b'\n', removed.as_bytes()).count(),
            removed.len() - last - 1,
        ),
        None => Point::new(start_position.row, start_position.column + removed.len()),
    };
    Some(InputEdit {
        start_byte: start,
        old_end_byte: start + old_len,
        new_end_byte: new_end,
        start_position,
        old_end_position,
        new_end_position: point(new_end),
    })
}

/// Byte offset where each line starts (a final newline starts no line).
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    starts
}

#[cfg(test)]
mod tests;
