//! Near-miss search for an `old_string` that the exact substring search did not find.
//!
//! This module owns two questions, both asked only after an exact search failed:
//! [`diagnose`] ("where did the user probably mean?") and [`relaxed_match`] ("is there
//! exactly one place that differs only in whitespace or typography, and can `new_string`
//! be re-indented to fit it?", used by `--lenient`).
//!
//! # Layout
//!
//! * this module: the public result types, the tuning constants and [`diagnose`], which
//!   combines the searches below into ranked candidates;
//! * `align`: the `lines` rung, old lines found in order with one dropped or one added line;
//! * `lines`: line splitting, the needle, trimmed and Unicode-folded line keys, the
//!   fast hasher, and the KMP search for whitespace and Unicode windows;
//! * `fuzzy`: the linear fuzzy shortlist (multiset tallies, coverage, tokens, collapsed
//!   line hashes) and its reranking by similarity;
//! * `reindent`: [`relaxed_match`] and the two methods that re-indent `new_string` to
//!   fit the matched lines.
//!
//! # Algorithm
//!
//! Everything works on whole lines. A miss splits the file into lines and hashes them once
//! ([`FileLines`]); the ladder, the look-back and the ranking share them. The needle is split on `'\n'`; a final `'\n'` ends the
//! last line rather than starting an empty one. The haystack is split the same way, so a
//! file's trailing newline does not create a phantom last line.
//!
//! * **Whitespace / Unicode windows**: each line is reduced to a key (trimmed of spaces,
//!   tabs and `'\r'`; for Unicode also typographic dashes, quotes, odd spaces and the
//!   ellipsis folded to ASCII). Keys are interned to integers and the needle's key sequence
//!   is found with KMP, so even a highly repetitive file costs O(n + k), not O(n * k).
//!   Folding only adds equalities, so Unicode windows are the folded matches minus the
//!   whitespace ones.
//! * **Line alignments** (`align`): the needle's lines found in order as whole lines, with the
//!   file holding a few extra lines between two of them (a line dropped from `old_string`) or
//!   one needle line absent (a line added to it), by two Z-function passes over interned line
//!   hashes, O(n + k).
//! * **Fuzzy windows**: Levenshtein on every window is far too slow on large files, so a
//!   linear shortlist comes first. Each line is hashed after trimming and collapsing inner
//!   whitespace; a window's primary score is how many of its line hashes are in the
//!   needle's hash multiset, kept incrementally while sliding. A secondary score counts
//!   shared identifier-like tokens the same way, so a one-line needle with a typo (where no
//!   line hash can match) still gets a meaningful shortlist. The best 10 windows per length
//!   (k-1, k, k+1) survive. Tokens only break ties between equal line scores, so they are
//!   counted only in windows whose line score can make the ten. Within each overlapping group of those, the window with the
//!   fewest whole-line edits (strsim Levenshtein over line hashes) represents the group,
//!   and only representatives get the char-level strsim score on their collapsed text.
//!
//! # Invariants
//!
//! * Nothing here panics on any input; byte ranges start and end at line boundaries, which
//!   are char boundaries because `'\n'` is ASCII.
//! * Reported similarity is rounded to 2 decimals and capped at 0.99: exact matches never
//!   reach this module, so 1.0 would claim more than is true.
//! * `diagnose` never returns overlapping candidates, and candidates follow the ladder of
//!   [`Candidate::rank`] whatever their scores: whitespace and Unicode matches whose
//!   indentation is shifted by one prefix on every line, verbatim lines candidates (every
//!   matched line byte for byte), whitespace and Unicode matches that need a different shift
//!   per line, other lines candidates, fuzzy windows (which only fill when no lines candidate
//!   was found). A verbatim lines candidate overlapping an uneven relaxed match replaces it
//!   (the block one closing line short or long: `}` dropped or repeated between two braces of
//!   different depth); any other overlap keeps the relaxed match. Fuzzy windows touching any
//!   whitespace or Unicode match are discarded as worse descriptions of it.
//! * Only whitespace and Unicode candidates are ever applied (by `--lenient`); a lines
//!   candidate carries a `note` saying which line was dropped or added, and is advice only.
//! * A needle with no non-blank line locates nothing (it would "match" every blank run).
//! * A needle ending in `'\n'` makes [`relaxed_match`] replace the matched last line's
//!   `'\n'` too. If that line is the file's unterminated last line, the range ends at EOF
//!   and one trailing `'\n'` is dropped from the replacement, preserving the file's
//!   "no newline at end of file" state.

mod align;
mod blocks;
mod fuzzy;
mod lines;
mod lookback;
mod rank;
mod reindent;
mod stale;
mod symbol;
#[cfg(test)]
mod tests;

use std::ops::Range;

use fuzzy::{coverage_prefix, fuzzy_candidates, round_similarity, similarity};
pub use lines::FileLines;
use lines::{Needle, relaxed_starts};
pub use rank::{Explained, Lookback, Query, explain, explain_in};
pub use reindent::relaxed_match;
pub use stale::{ChangeSource, History, PastPatch, no_patches};

/// Fuzzy search is skipped beyond these sizes: the shortlist is linear, but reranking and
/// the per-line tables would make a diagnostic cost more than the edit it explains.
const MAX_FUZZY_NEEDLE: usize = 1 << 20;
const MAX_FUZZY_HAYSTACK: usize = 64 << 20;
/// Windows kept per length for reranking; they cluster around the true location, so a
/// handful is enough to contain the exact-boundary window and its off-by-one neighbours.
const SHORTLIST_PER_LEN: usize = 10;
/// Above this product of lengths, quadratic Levenshtein is replaced by linear Sørensen–Dice.
const LEVENSHTEIN_BUDGET: usize = 4_000_000;
const MIN_FUZZY_SIMILARITY: f64 = 0.5;
const MAX_INEXACT_SIMILARITY: f64 = 0.99;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateKind {
    Whitespace,
    Unicode,
    /// Every old line in order, with one line dropped from or added to `old_string`.
    Lines,
    Fuzzy,
    /// The current text of the definition or block around a line of `old_string` that stands
    /// in the file (a signature, a header): a body recalled from memory.
    Symbol,
    /// `old_string` was in an earlier version of the file: the current text of the region that
    /// replaced it, and the change that did.
    Stale,
}

impl CandidateKind {
    /// The name reports use (`"whitespace"`, `"unicode"`, `"lines"`, `"fuzzy"`, `"symbol"`,
    /// `"stale"`).
    pub fn name(self) -> &'static str {
        match self {
            CandidateKind::Whitespace => "whitespace",
            CandidateKind::Unicode => "unicode",
            CandidateKind::Lines => "lines",
            CandidateKind::Fuzzy => "fuzzy",
            CandidateKind::Symbol => "symbol",
            CandidateKind::Stale => "stale",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub kind: CandidateKind,
    /// For `Lines`: which line of `old_string` is not in the file, or which file lines are
    /// not in `old_string`; for `Symbol`: which line anchored it; for `Stale`: which change
    /// replaced the text, and where it is now.
    pub note: Option<String>,
    /// 1-based inclusive line numbers in the haystack.
    pub start_line: usize,
    pub end_line: usize,
    /// 0.0..=1.0, rounded to 2 decimals.
    pub similarity: f64,
    /// Byte range of the candidate's whole lines in the haystack (from the start of
    /// start_line to the end of end_line, excluding its '\n').
    pub byte_range: Range<usize>,
    /// Whitespace / Unicode: one indentation prefix swapped on every line (a re-indented
    /// copy). Lines: every matched line (at least two) is byte for byte in the file. Stale:
    /// `old_string` stood whole in the earlier version. Symbol: anchored by a unique definition
    /// line. Fuzzy: never.
    strong: bool,
    /// For `Stale`: the change that replaced the text.
    pub source: Option<ChangeSource>,
}

impl Candidate {
    /// Place on the ladder, lower first: whitespace, Unicode and lines candidates that are
    /// strong (see the field), then relaxed matches needing uneven re-indentation, other
    /// lines candidates, and fuzzy windows.
    pub fn rank(&self) -> u8 {
        match (self.kind, self.strong) {
            (CandidateKind::Whitespace, true) => 0,
            (CandidateKind::Unicode, true) => 1,
            (CandidateKind::Lines, true) => 2,
            (CandidateKind::Whitespace, false) => 3,
            (CandidateKind::Unicode, false) => 4,
            (CandidateKind::Lines, false) => 5,
            (CandidateKind::Fuzzy | CandidateKind::Symbol | CandidateKind::Stale, _) => 6,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Relaxed {
    /// Whitespace or Unicode only.
    pub kind: CandidateKind,
    pub start_line: usize,
    pub end_line: usize,
    /// Byte range in the haystack to replace.
    pub byte_range: Range<usize>,
    /// `new` re-indented to the file's indentation.
    pub replacement: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RelaxedOutcome {
    /// Exactly one whitespace-or-unicode match, and `new` could be re-indented consistently.
    Unique(Relaxed),
    /// Several relaxed matches: (start_line, end_line) of each.
    Ambiguous(Vec<(usize, usize)>),
    /// A single relaxed match exists but the indentation relation is not uniform, so
    /// re-indenting `new` would be a guess.
    NotReindentable {
        start_line: usize,
        end_line: usize,
    },
    None,
}

/// Up to `max` candidates, best first (by [`Candidate::rank`]); no two overlapping.
pub fn diagnose(haystack: &str, needle: &str, max: usize) -> Vec<Candidate> {
    diagnose_in(&FileLines::new(haystack), needle, max)
}

/// [`diagnose`] on a file whose lines were split (and maybe hashed) already: what the ranking
/// ([`explain_in`]) of the same miss reuses.
pub fn diagnose_in(file: &FileLines, needle: &str, max: usize) -> Vec<Candidate> {
    let Some(needle) = Needle::parse(needle) else {
        return Vec::new();
    };
    if max == 0 {
        return Vec::new();
    }
    let haystack = file.text;
    let lines = &file.lines[..];
    let k = needle.lines.len();
    let (ws, uni) = relaxed_starts(haystack, lines, &needle);

    let mut out = relaxed_candidates(haystack, lines, &needle, &ws, &uni, max);

    crate::timing::mark("suggest: whitespace and unicode");
    // A verbatim alignment can still outrank an unevenly re-indented relaxed match, so the
    // lines rung runs whenever one of those is among the candidates, even with no slot free.
    let lines_rung = out.len() < max || out.iter().any(|c| !c.strong);
    // One hash per file line, shared by the lines and fuzzy rungs: hashing is a pass over
    // every byte of the file, the largest fixed cost of both.
    let line_hashes: &[u64] = if lines_rung { file.hashes() } else { &[] };
    if lines_rung {
        lines_candidates(haystack, lines, line_hashes, &needle, max, &mut out);
    }

    // A lines candidate already explains every old line; a fuzzy window elsewhere would be a
    // far weaker guess, and skipping it keeps such a miss within a few milliseconds.
    let has_lines = out.iter().any(|c| c.kind == CandidateKind::Lines);
    if out.len() < max
        && !has_lines
        && needle.body.len() <= MAX_FUZZY_NEEDLE
        && haystack.len() <= MAX_FUZZY_HAYSTACK
    {
        // Any fuzzy window touching an exact-modulo-whitespace match is just a worse
        // description of it, so all of them (not only the reported ones) block.
        let covered = coverage_prefix(lines.len(), ws.iter().chain(&uni).map(|&s| s..s + k));
        crate::timing::mark("suggest: lines");
        let fuzzy = fuzzy_candidates(
            haystack,
            lines,
            line_hashes,
            &needle,
            &covered,
            max - out.len(),
        );
        out.extend(fuzzy);
        crate::timing::mark("suggest: fuzzy");
    }
    out
}

/// The whitespace then Unicode relaxed matches, each group by similarity; at most `max`, none
/// overlapping.
fn relaxed_candidates(
    haystack: &str,
    lines: &[Range<usize>],
    needle: &Needle,
    ws: &[usize],
    uni: &[usize],
    max: usize,
) -> Vec<Candidate> {
    let k = needle.lines.len();
    let mut out: Vec<Candidate> = Vec::new();
    for (kind, starts) in [
        (CandidateKind::Whitespace, ws),
        (CandidateKind::Unicode, uni),
    ] {
        // Take the first non-overlapping windows by position and score only those: a
        // repetitive file can hold thousands of matches and each score is quadratic.
        let mut group: Vec<Candidate> = Vec::new();
        for &s in starts {
            if out.len() + group.len() >= max {
                break;
            }
            let (first, last) = (s + 1, s + k);
            if out
                .iter()
                .chain(&group)
                .any(|c| c.start_line <= last && first <= c.end_line)
            {
                continue;
            }
            let byte_range = lines[s].start..lines[s + k - 1].end;
            let sim = similarity(&haystack[byte_range.clone()], needle.body);
            group.push(Candidate {
                kind,
                note: None,
                start_line: first,
                end_line: last,
                similarity: round_similarity(sim),
                byte_range,
                strong: reindent::uniform_shift(haystack, lines, needle, s),
                source: None,
            });
        }
        group.sort_by(|a, b| {
            b.similarity
                .total_cmp(&a.similarity)
                .then(a.start_line.cmp(&b.start_line))
        });
        out.extend(group);
    }

    out
}

/// Merges the line alignments into `out`: verbatim ones displace the relaxed matches they
/// read better than; the result is re-ranked and cut to `max`.
fn lines_candidates(
    haystack: &str,
    lines: &[Range<usize>],
    line_hashes: &[u64],
    needle: &Needle,
    max: usize,
    out: &mut Vec<Candidate>,
) {
    let overlap =
        |a: &Candidate, b: &Candidate| a.start_line <= b.end_line && b.start_line <= a.end_line;
    let mut found: Vec<Candidate> = Vec::new();
    // Old lines found verbatim describe a place better than any reading that needs
    // re-indentation: verbatim alignments rank first among alignments, and above a relaxed
    // match that needs a different indentation shift per line (typically the same block
    // one closing line short or long), which gives way where they overlap. A relaxed match
    // shifted evenly keeps its place and any overlap.
    // A verbatim alignment further down the list can still make the cut: keep up to
    // `max` of each.
    let (mut promoted, mut others) = (0, 0);
    for a in align::aligned(haystack, lines, line_hashes, needle) {
        if promoted >= max {
            break;
        }
        let promote = a.verbatim;
        if !promote && others >= max {
            continue;
        }
        let (first, last) = (a.start + 1, a.end);
        let hits = |c: &Candidate| c.start_line <= last && first <= c.end_line;
        // A reading over a relaxed match is only news when it is verbatim and that match
        // uneven.
        let blocked = found.iter().any(|f| hits(f) && (f.strong || !promote))
            || out.iter().any(|r| hits(r) && (r.strong || !promote))
            || (a.covers_relaxed
                && (!a.verbatim || reindent::uniform_shift(haystack, lines, needle, a.start)));
        if blocked {
            continue;
        }
        if promote {
            promoted += 1;
            let before = found.len();
            found.retain(|f| !hits(f));
            others = others.saturating_sub(before - found.len());
        } else {
            others += 1;
        }
        let byte_range = lines[a.start].start..lines[a.end - 1].end;
        let sim = similarity(&haystack[byte_range.clone()], needle.body);
        found.push(Candidate {
            kind: CandidateKind::Lines,
            note: Some(a.note(needle)),
            start_line: first,
            end_line: last,
            similarity: round_similarity(sim),
            byte_range,
            strong: promote,
            source: None,
        });
    }
    out.retain(|r| !found.iter().any(|f| overlap(f, r)));
    out.extend(found);
    // Stable: within a rank, relaxed matches keep their similarity order and alignments
    // their own.
    out.sort_by_key(Candidate::rank);
    out.truncate(max);
}
