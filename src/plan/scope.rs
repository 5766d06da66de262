//! Where a replacement searches: the whole file, its `start_line`/`end_line` window, the
//! definition named by `within`, or the intersection of the last two.
//!
//! Invariants:
//! - A scope is one or more byte ranges of the document's text, sorted, disjoint and non-empty,
//!   each starting at a line start and ending after a line's `\n` (or at the end of the text):
//!   a definition counts by whole lines, so an `old_string` that starts with the indentation of
//!   its first line still matches.
//! - `within` is resolved on the text as it is when the edit runs (after the batch's earlier
//!   edits of the file), so its line numbers are the ones the report gives.
//! - A symbol that cannot be resolved to exactly one symbol never falls back to the whole file:
//!   the edit fails with the candidates, since searching elsewhere is the wrong-place edit the
//!   caller asked to rule out.

use std::ops::Range;
use std::sync::Arc;

use super::doc::TextDoc;
use super::suggest::{self, Candidate, RelaxedOutcome};
use super::{EditStatus, Snippet, Step};
use crate::patch::{LineWindow, Replace};
use crate::syntax::symbols::Definition;
use crate::syntax::symbols::lookup::{self, Lookup, LookupError};

/// How many candidates a miss reports.
pub(super) const MAX_CANDIDATES: usize = 3;
/// How many the ladder offers for ranking with the rest of the evidence (see `suggest::explain`).
pub(super) const POOL: usize = 6;

pub(super) struct Scope {
    pub ranges: Vec<Range<usize>>,
    /// ` inside `Config.parse` (lines 3-9)` when `within` narrowed the search, for messages.
    pub inside: String,
    /// `within` was given: a miss suggests from inside the ranges first.
    pub symbol: bool,
}

impl Scope {
    /// The 1-based inclusive line window of each range, for the line-based searches.
    pub(super) fn line_windows(&self, doc: &TextDoc) -> Vec<(usize, usize)> {
        self.ranges
            .iter()
            .map(|r| doc.line_range(&(r.start..r.end.max(r.start + 1).min(doc.text().len()))))
            .collect()
    }

    /// Whether lines `a..=b` lie inside one of the ranges.
    pub(super) fn holds_lines(&self, doc: &TextDoc, a: usize, b: usize) -> bool {
        self.line_windows(doc)
            .iter()
            .any(|&(lo, hi)| lo <= a && b <= hi)
    }
}

/// The scope of `r` in `doc`, or the step that explains why there is none.
pub(super) fn resolve(doc: &TextDoc, shown: &str, r: &Replace) -> Result<Scope, Box<Step>> {
    let window = match r.window {
        None => 0..doc.text().len(),
        Some(w) => doc.window_range(w).ok_or_else(|| {
            Box::new(Step::msg(
                EditStatus::NotFound,
                format!(
                    "start_line {} is past the end of {shown}, which has {} lines",
                    w.start,
                    doc.line_count()
                ),
            ))
        })?,
    };
    let Some(symbol) = &r.within else {
        return Ok(Scope {
            ranges: vec![window],
            inside: String::new(),
            symbol: false,
        });
    };
    let defs = match lookup::lookup(shown, doc.text(), symbol) {
        Ok(Lookup::Found(defs)) => defs,
        Ok(Lookup::NotFound(nearest)) => {
            return Err(Box::new(not_found(doc, shown, symbol, &nearest)));
        }
        Ok(Lookup::Ambiguous(all)) => return Err(Box::new(ambiguous(doc, shown, symbol, &all))),
        Err(e) => {
            let why = match e {
                LookupError::NoParser => format!(
                    "{shown} is not a Python, JavaScript, TypeScript, Rust or Go file, so `within` \
                     cannot find `{symbol}` in it; use start_line/end_line instead"
                ),
                LookupError::Unparsed => format!(
                    "{shown} could not be parsed in time, so `within` cannot find `{symbol}` in it; \
                     use start_line/end_line instead"
                ),
                LookupError::Syntax { line } => format!(
                    "{shown} has a syntax error at line {line}, so where `{symbol}` ends is a guess; \
                     fix the error first, or use start_line/end_line instead of `within`"
                ),
            };
            return Err(Box::new(Step::msg(EditStatus::Error, why)));
        }
    };
    let mut parts: Vec<Range<usize>> = defs
        .iter()
        .filter_map(|d| {
            doc.window_range(LineWindow {
                start: d.start_line,
                end: Some(d.end_line),
            })
        })
        .collect();
    parts.sort_by_key(|p| p.start);
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for p in parts {
        let p = p.start.max(window.start)..p.end.min(window.end);
        if p.is_empty() {
            continue;
        }
        match ranges.last_mut() {
            Some(last) if p.start <= last.end => last.end = last.end.max(p.end),
            _ => ranges.push(p),
        }
    }
    let lines = defs
        .iter()
        .map(|d| format!("{}-{}", d.start_line, d.end_line))
        .collect::<Vec<_>>()
        .join(", ");
    let inside = format!(" inside `{symbol}` (lines {lines})");
    if ranges.is_empty() {
        return Err(Box::new(Step::msg(
            EditStatus::NotFound,
            format!(
                "`{symbol}` is at lines {lines} of {shown}, outside start_line/end_line: \
                 nothing is left to search; fix the line window or drop it"
            ),
        )));
    }
    Ok(Scope {
        ranges,
        inside,
        symbol: true,
    })
}

fn not_found(doc: &TextDoc, shown: &str, symbol: &str, nearest: &[Definition]) -> Step {
    let mut msg = format!("`within`: no definition of `{symbol}` in {shown}");
    if nearest.is_empty() {
        msg.push_str(" (it defines no functions, classes or types)");
    } else {
        let names: Vec<String> = nearest.iter().map(lookup::describe).collect();
        msg.push_str(&format!("; nearest names: {}", names.join(", ")));
    }
    let mut s = Step::msg(EditStatus::NotFound, msg);
    s.snippet = labelled(doc, shown, nearest, "nearest name");
    s
}

fn ambiguous(doc: &TextDoc, shown: &str, symbol: &str, all: &[Definition]) -> Step {
    let names: Vec<String> = all.iter().map(lookup::describe).collect();
    let mut s = Step::msg(
        EditStatus::Ambiguous,
        format!(
            "`within`: `{symbol}` names {} definitions in {shown}: {}; qualify it with the \
             enclosing name (e.g. `{}`)",
            all.len(),
            names.join(", "),
            all.first().map_or(symbol, |d| d.qualified.as_str()),
        ),
    );
    s.lines = all.iter().map(|d| (d.start_line, d.end_line)).collect();
    s.snippet = labelled(doc, shown, all, "candidate");
    s
}

fn labelled(doc: &TextDoc, shown: &str, defs: &[Definition], what: &str) -> Option<Snippet> {
    if defs.is_empty() {
        return None;
    }
    let text = doc.text();
    Some(Snippet {
        path: shown.to_string(),
        text: Arc::new(text.to_string()),
        labels: defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.start_byte <= d.end_byte && d.end_byte <= text.len())
            .map(|(i, d)| {
                (
                    d.start_byte..d.end_byte,
                    format!("{what} {}: {}", i + 1, d.qualified),
                )
            })
            .collect(),
    })
}

/// Suggestions for a miss: from inside the symbol first, then from the rest of the file; no two
/// overlapping. Without `within`, the whole file's, as always.
/// `file` is the whole text's.
pub(super) fn diagnose(
    doc: &TextDoc,
    file: &suggest::FileLines,
    old: &str,
    scope: &Scope,
    max: usize,
) -> Vec<Candidate> {
    let text = doc.text();
    if !scope.symbol {
        return suggest::diagnose_in(file, old, max);
    }
    let mut inside: Vec<Candidate> = Vec::new();
    for r in &scope.ranges {
        let shift = doc.line_of(r.start) - 1;
        inside.extend(
            suggest::diagnose(&text[r.clone()], old, max)
                .into_iter()
                .map(|mut c| {
                    c.start_line += shift;
                    c.end_line += shift;
                    c.byte_range = c.byte_range.start + r.start..c.byte_range.end + r.start;
                    c
                }),
        );
    }
    inside.sort_by(|a, b| {
        a.rank()
            .cmp(&b.rank())
            .then(b.similarity.total_cmp(&a.similarity))
            .then(a.start_line.cmp(&b.start_line))
    });
    inside.truncate(max);
    let mut out = inside;
    for c in suggest::diagnose_in(file, old, max) {
        if out.len() >= max {
            break;
        }
        if !out
            .iter()
            .any(|o| o.start_line <= c.end_line && c.start_line <= o.end_line)
        {
            out.push(c);
        }
    }
    out
}

/// `--lenient`'s relaxed match, inside the scope: one relaxed match across all its ranges, or
/// the outcome that says why not.
pub(super) fn relaxed(
    doc: &TextDoc,
    old: &str,
    new: &str,
    r: &Replace,
    scope: &Scope,
) -> RelaxedOutcome {
    let text = doc.text();
    if !scope.symbol {
        let line_window = r.window.map(|w| (w.start, w.end.unwrap_or(usize::MAX)));
        return keep_line_break(
            text,
            new,
            r,
            suggest::relaxed_match(text, old, new, line_window),
        );
    }
    let mut found: Vec<RelaxedOutcome> = Vec::new();
    let mut spots: Vec<(usize, usize)> = Vec::new();
    for w in scope.line_windows(doc) {
        match suggest::relaxed_match(text, old, new, Some(w)) {
            RelaxedOutcome::None => {}
            RelaxedOutcome::Ambiguous(many) => spots.extend(many),
            RelaxedOutcome::Unique(m) => {
                spots.push((m.start_line, m.end_line));
                found.push(RelaxedOutcome::Unique(m));
            }
            one @ RelaxedOutcome::NotReindentable {
                start_line,
                end_line,
            } => {
                spots.push((start_line, end_line));
                found.push(one);
            }
        }
    }
    match spots.len() {
        0 => RelaxedOutcome::None,
        1 => keep_line_break(text, new, r, found.pop().unwrap_or(RelaxedOutcome::None)),
        _ => {
            spots.sort_unstable();
            RelaxedOutcome::Ambiguous(spots)
        }
    }
}

/// A converted hunk's relaxed match on the file's unterminated last line writes the hunk's new
/// text with its final line break, as its exact match does (see [`super::whole`]); a YAML edit's
/// keeps the file without one.
fn keep_line_break(text: &str, new: &str, r: &Replace, out: RelaxedOutcome) -> RelaxedOutcome {
    match out {
        RelaxedOutcome::Unique(mut m)
            if r.whole_lines
                && m.byte_range.end == text.len()
                && !text.ends_with('\n')
                && new.ends_with('\n')
                && !m.replacement.ends_with('\n') =>
        {
            m.replacement.push('\n');
            RelaxedOutcome::Unique(m)
        }
        other => other,
    }
}

/// For a miss inside a symbol: where `old_string` does stand, exactly, elsewhere in the file
/// (the usual reason is a `within` naming the wrong symbol).
pub(super) fn outside_note(doc: &TextDoc, old: &str, scope: &Scope) -> Option<String> {
    if !scope.symbol || old.is_empty() {
        return None;
    }
    let spots: Vec<String> = memchr::memmem::find_iter(doc.text().as_bytes(), old.as_bytes())
        .take(3)
        .map(|i| match doc.line_range(&(i..i + old.len())) {
            (a, b) if a == b => a.to_string(),
            (a, b) => format!("{a}-{b}"),
        })
        .collect();
    let first = spots.first()?;
    Some(if spots.len() == 1 {
        format!(". old_string does occur outside the symbol, at line {first}: check `within`")
    } else {
        format!(
            ". old_string does occur outside the symbol, at lines {}: check `within`",
            spots.join(", ")
        )
    })
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
