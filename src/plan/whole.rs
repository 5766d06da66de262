//! Exact matching of a replacement's old text: as a substring (YAML/JSON `old_string`), or as
//! whole lines (a codex chunk, an aider block, a diff hunk: [`Replace::whole_lines`]); and
//! aider's fallback readings of a SEARCH text ([`Fallback`]).
//!
//! Invariants:
//! - A whole-line match starts at the start of the text or right after a `\n`, and ends right
//!   after a `\n` (the old text's own last line break) or at the end of the text. An old text
//!   without a final line break therefore only matches the file's unterminated last line, and one
//!   with a final line break also matches the file's unterminated last line (the line break is
//!   then the one the file lacks). Nothing else: never inside a line, never joining two lines.
//! - Matches are searched only inside the scope's ranges, which start at line starts and end
//!   after a line's `\n` or at the end of the text, so a whole-line match inside a range is a
//!   whole-line match of the file.
//! - A fallback never relaxes anything but what it names: each of its texts needs an exact,
//!   whole-line, unique match, and `...` pieces must stand in order.

use std::ops::Range;

use super::doc::TextDoc;
use super::scope::Scope;
use super::{EditStatus, MatchKind, Snippet, Step};
use crate::patch::{Fallback, Replace};

/// Every exact match of `old` in the scope: overlapping ones included (ambiguity counts them),
/// or, for `replace_all`, the leftmost non-overlapping ones.
pub(super) fn find(text: &str, scope: &Scope, old: &str, r: &Replace) -> Vec<Range<usize>> {
    let mut matches: Vec<Range<usize>> = Vec::new();
    for window in &scope.ranges {
        if r.whole_lines {
            matches.extend(line_matches(text, window.clone(), old));
        } else {
            let hay = &text[window.clone()];
            let at = |i: usize| window.start + i..window.start + i + old.len();
            if r.replace_all {
                matches.extend(memchr::memmem::find_iter(hay.as_bytes(), old.as_bytes()).map(at));
            } else {
                matches.extend(overlapping_matches(hay, old).map(at));
            }
        }
    }
    if r.whole_lines && r.replace_all {
        // Leftmost first, then the next one that starts after it ends.
        let mut kept: Vec<Range<usize>> = Vec::with_capacity(matches.len());
        for m in matches {
            if kept.last().is_none_or(|k| k.end <= m.start) {
                kept.push(m);
            }
        }
        return kept;
    }
    matches
}

/// The whole-line occurrences of `old` inside `window` of `text`, in order, overlapping ones
/// included (see the module invariants).
pub(super) fn line_matches(text: &str, window: Range<usize>, old: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    if old.is_empty() || window.end > text.len() || window.start > window.end {
        return out;
    }
    let bytes = text.as_bytes();
    let line_start = |at: usize| at == 0 || bytes[at - 1] == b'\n';
    let ends_line = old.ends_with('\n');
    let hay = &text[window.clone()];
    for i in overlapping_matches(hay, old) {
        let start = window.start + i;
        let end = start + old.len();
        if line_start(start) && (ends_line || end == text.len()) {
            out.push(start..end);
        }
    }
    // The old text's last line break stands for the end of a file that has none.
    if ends_line && !text.ends_with('\n') && window.end == text.len() {
        let body = &old[..old.len() - 1];
        if let Some(start) = text.len().checked_sub(body.len())
            && start < text.len()
            && start >= window.start
            && line_start(start)
            && text.ends_with(body)
        {
            out.push(start..text.len());
        }
    }
    out
}

/// Start offsets of every occurrence of `needle`, overlapping ones included. (memchr's SIMD
/// searcher: a batch searches every file once per edit, and std's `find` was a tenth of the plan.)
pub(super) fn overlapping_matches<'a>(
    hay: &'a str,
    needle: &'a str,
) -> impl Iterator<Item = usize> + 'a {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + finder.find(hay.as_bytes().get(from..)?)?;
        // Next search starts one character later (a char boundary).
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
        Some(at)
    })
}

/// Aider's exact fallbacks, in order, for a block whose SEARCH text is not in the file as it is:
/// the step they lead to (applied, or ambiguous), or `None` to go on with the usual miss. A note
/// for that miss (why the `...` reading did not apply) goes into `note`.
pub(super) fn fallback(
    doc: &mut TextDoc,
    shown: &str,
    r: &Replace,
    scope: &Scope,
    note: &mut Option<String>,
) -> Option<Step> {
    for fb in &r.fallbacks {
        match fb {
            Fallback::Without { old, new, what } => {
                let (old, new) = (fold(old), fold(new));
                let mut found = find(doc.text(), scope, &old, r);
                if let Some(near) = &r.near
                    && (found.len() > 1 || near.at_eof)
                {
                    found = super::near::narrow(doc, found, near);
                }
                match found.len() {
                    0 => {}
                    1 => {
                        let lines = vec![doc.line_range(&found[0])];
                        doc.replace(found[0].clone(), &new);
                        let mut s = Step::applied(Some(MatchKind::Exact), 1, lines);
                        s.message = Some(format!(
                            "applied without {what}, which the file does not have there (as the \
                             format's own tool does)"
                        ));
                        return Some(s);
                    }
                    n => {
                        return Some(ambiguous(
                            doc,
                            shown,
                            &found,
                            format!(
                                "the hunk's text is not in {shown}{} as it is, and without {what} \
                                 it occurs {n} times: add lines to make it unique",
                                scope.inside
                            ),
                        ));
                    }
                }
            }
            Fallback::Pieces(Err(why)) => *note = Some(why.clone()),
            Fallback::Pieces(Ok(pieces)) => {
                if let Some(step) = elided(doc, shown, r, scope, pieces) {
                    return Some(step);
                }
            }
        }
    }
    None
}

/// `...` elision: every non-empty piece found once (whole lines), each after the previous one,
/// then all replaced; or the step that says why not. `None` when a piece is not in the file (the
/// usual miss follows).
fn elided(
    doc: &mut TextDoc,
    shown: &str,
    r: &Replace,
    scope: &Scope,
    pieces: &[(String, String)],
) -> Option<Step> {
    let mut spots: Vec<(Range<usize>, String)> = Vec::new();
    for (i, (old, new)) in pieces.iter().enumerate() {
        let (old, new) = (fold(old), fold(new));
        if old.is_empty() {
            continue;
        }
        let found = find(doc.text(), scope, &old, r);
        let nth = i + 1;
        match found.as_slice() {
            [] => return None,
            [one] => {
                if let Some((prev, _)) = spots.last()
                    && one.start < prev.end
                {
                    let (a, b) = doc.line_range(one);
                    let (pa, pb) = doc.line_range(prev);
                    return Some(Step::msg(
                        EditStatus::NotFound,
                        format!(
                            "SEARCH is not in {shown}{} as it is; read with its `...` lines as \
                             elisions, its piece {nth} is at lines {a}-{b}, not after the piece \
                             before it (lines {pa}-{pb}): re-read the file",
                            scope.inside
                        ),
                    ));
                }
                spots.push((one.clone(), new.into_owned()));
            }
            many => {
                return Some(ambiguous(
                    doc,
                    shown,
                    many,
                    format!(
                        "SEARCH is not in {shown}{} as it is; read with its `...` lines as \
                         elisions, its piece {nth} occurs {} times: add lines to that piece to \
                         make it unique",
                        scope.inside,
                        many.len()
                    ),
                ));
            }
        }
    }
    if spots.is_empty() {
        return None;
    }
    let lines = spots.iter().map(|(m, _)| doc.line_range(m)).collect();
    let n = spots.len();
    for (m, new) in spots.into_iter().rev() {
        doc.replace(m, &new);
    }
    let mut s = Step::applied(Some(MatchKind::Exact), n, lines);
    s.message = Some(format!(
        "applied SEARCH as {n} pieces around its `...` lines (aider's elision), each found once, in order"
    ));
    Some(s)
}

fn fold(s: &str) -> std::borrow::Cow<'_, str> {
    super::doc::fold_eol(s)
}

fn ambiguous(doc: &TextDoc, shown: &str, found: &[Range<usize>], message: String) -> Step {
    let mut s = Step::msg(EditStatus::Ambiguous, message);
    s.lines = doc.line_ranges(found);
    s.snippet = Some(Snippet {
        path: shown.to_string(),
        text: std::sync::Arc::new(doc.text().to_string()),
        labels: found
            .iter()
            .enumerate()
            .map(|(i, m)| (m.clone(), format!("match {}", i + 1)))
            .collect(),
    });
    s
}

#[cfg(test)]
#[path = "whole_tests.rs"]
mod tests;
