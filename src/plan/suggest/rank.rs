//! Explaining a miss with everything the agent gave: the ladder's candidates ([`super::diagnose`]),
//! `stale` and `symbol` candidates, and the evidence that ranks look-alikes (the lines and rare
//! names `new_string` keeps from `old_string`, the line window, the agent's previous edit of the
//! file).
//!
//! # Order
//!
//! Candidates come in tiers, and the ladder's order holds inside the first five:
//! 0. whitespace / Unicode matches re-indented evenly (what `--lenient` applies);
//! 1. `stale`: `old_string`, whole, was in an earlier version of the file;
//! 2. `lines` candidates whose lines are the file's byte for byte;
//! 3. whitespace / Unicode matches re-indented unevenly;
//! 4. other `lines` candidates;
//! 5. the rest, by evidence: `symbol` candidates, `stale` candidates that hold most of the lines,
//!    and `fuzzy` windows. Their score is the similarity, plus how much of `new_string`'s kept
//!    evidence the candidate holds (kept lines weighted by how rare they are in the file and by
//!    what they are, definitions first, comments last; kept rare names and string literals),
//!    plus the strength of a symbol's anchor, plus being inside the line window the edit gave,
//!    plus standing where the agent's previous patch changed the file. A symbol or stale
//!    candidate takes the place of a fuzzy window it overlaps (the same place, with its real
//!    extent), keeping the better similarity for its score.
//!
//! With `within`, candidates inside the symbol come first whatever their tier (the scope is what
//! the agent asked for).
//!
//! # Invariants
//!
//! * No two returned candidates overlap; at most `max` are returned.
//! * A fuzzy window of an `old_string` shaped like a whole block (brackets its first line opens
//!   and its last line closes, or a header with every other line deeper) never ends inside the
//!   block its first line opens: it is extended to the block's end, within a bounded length.
//! * Never empty when a non-trivial line of `old_string` stands in the file (as a line, inside a
//!   line, or by a rare name it mentions): the last resort points at the best such line and the
//!   block around it.
//! * Nothing here applies anything.

use std::ops::Range;

use super::blocks::{self, Structure};
use super::fuzzy::{collapsed_hash, round_similarity, similarity};
use super::lines::{FileLines, Needle};
use super::stale::{self, History};
use super::symbol;
use super::{Candidate, CandidateKind};

/// How much each kind of evidence adds to a weak candidate's score (its similarity is 0..1).
const KEPT_WEIGHT: f64 = 0.3;
const ANCHOR_WEIGHT: f64 = 0.25;
const PARTIAL_STALE_WEIGHT: f64 = 0.2;
const WINDOW_WEIGHT: f64 = 0.15;
const LAST_EDIT_WEIGHT: f64 = 0.1;
const PREFIX_WEIGHT: f64 = 0.15;
/// Look-alikes: weak candidates this close in score whose texts are this similar to each other.
const TIE_SCORE: f64 = 0.05;
const TIE_TEXTS: f64 = 0.8;
/// Look-alikes whose evidence differs by more than this were told apart by it.
const TIE_EVIDENCE: f64 = 0.02;
/// A rare name is in at most this many lines of the file.
const RARE_LINES: usize = 3;

/// Where a miss can look back for earlier versions of the file.
#[derive(Clone, Copy)]
pub struct Lookback<'a> {
    pub history: History<'a>,
    /// The file's path in the repository (what git and patchgate's history name it by).
    pub key: &'a str,
    /// The file's bytes on disk when the plan read it.
    pub original: Option<&'a [u8]>,
}

/// What the agent gave for one miss.
pub struct Query<'a> {
    /// The file's text as the edit sees it (line endings folded).
    pub text: &'a str,
    pub old: &'a str,
    pub new: &'a str,
    /// The path, whose extension says how blocks and comments are written.
    pub path: &'a str,
    /// The line windows (1-based, inclusive) the edit asked to search; empty for the whole file.
    pub window: &'a [(usize, usize)],
    /// The window comes from `within`: candidates inside it come first.
    pub within: bool,
    pub lookback: Option<Lookback<'a>>,
}

/// A miss explained: the candidates, best first, and what the message adds.
#[derive(Debug, Default)]
pub struct Explained {
    pub candidates: Vec<Candidate>,
    /// `old_string` is an earlier version's text: which change replaced it, and where it is now.
    pub stale: Option<String>,
    /// Look-alike candidates that nothing in the edit tells apart (1-based line ranges).
    pub tie: Vec<(usize, usize)>,
}

struct Entry {
    c: Candidate,
    tier: u8,
    score: f64,
    /// The part of `score` that the edit's other evidence gave (kept lines and names, the line
    /// window, the previous edit): look-alikes it separates are not a tie.
    evidence: f64,
    /// A symbol or stale candidate whose extent says more than a fuzzy window's: a whole
    /// definition, or the region that replaced the text.
    extent: bool,
}

fn tier(c: &Candidate) -> u8 {
    match (c.kind, c.strong) {
        (CandidateKind::Whitespace | CandidateKind::Unicode, true) => 0,
        (CandidateKind::Stale, true) => 1,
        (CandidateKind::Lines, true) => 2,
        (CandidateKind::Whitespace | CandidateKind::Unicode, false) => 3,
        (CandidateKind::Lines, false) => 4,
        _ => 5,
    }
}

fn overlaps(a: &Candidate, b: &Candidate) -> bool {
    a.start_line <= b.end_line && b.start_line <= a.end_line
}

/// Ranks `base` (the ladder's candidates, a wider pool than will be shown) together with the
/// stale and symbol candidates, and returns the best `max`.
pub fn explain(q: &Query, base: Vec<Candidate>, max: usize) -> Explained {
    explain_in(q, &FileLines::new(q.text), base, max)
}

/// [`explain`] with the file's lines (and line hashes) of the [`super::diagnose_in`] that made
/// `base`; `file` is `q.text`'s.
pub fn explain_in(q: &Query, file: &FileLines, base: Vec<Candidate>, max: usize) -> Explained {
    debug_assert!(std::ptr::eq(file.text, q.text));
    let Some(needle) = Needle::parse(q.old) else {
        let mut candidates = base;
        candidates.truncate(max);
        return Explained {
            candidates,
            ..Explained::default()
        };
    };
    let lines = &file.lines[..];
    let stale = q
        .lookback
        .as_ref()
        .and_then(|lb| stale::find(&lb.history, lb.key, file, lb.original, &needle, q.old));
    crate::timing::mark("suggest: stale");
    let settled = base.iter().any(|c| tier(c) <= 2);
    let weak = !settled || base.iter().any(|c| tier(c) == 5) || base.is_empty();
    let mut entries: Vec<Entry> = base
        .into_iter()
        .map(|c| Entry {
            tier: tier(&c),
            score: c.similarity,
            evidence: 0.0,
            extent: false,
            c,
        })
        .collect();
    if let Some(s) = &stale {
        entries.push(Entry {
            tier: tier(&s.candidate),
            score: s.candidate.similarity + if s.exact { 0.0 } else { PARTIAL_STALE_WEIGHT },
            evidence: 0.0,
            extent: true,
            c: s.candidate.clone(),
        });
    }
    if weak && !lines.is_empty() {
        add_structural(q, lines, file.hashes(), &needle, settled, &mut entries);
    }
    let mut out = best_entries(q, entries, max);
    let tie = ties(q.text, &out);
    // Look-alikes nothing tells apart are listed in file order, not by a difference in score
    // that says nothing (one id shorter than another).
    order_ties(&mut out, &tie);
    Explained {
        stale: stale.map(|s| s.message),
        candidates: out.into_iter().map(|e| e.c).collect(),
        tie,
    }
}

/// Adds what the file's structure suggests for a weak or empty ladder: symbol candidates (when
/// the ladder settled nothing), whole-block windows, evidence weights, and the last resort.
fn add_structural(
    q: &Query,
    lines: &[Range<usize>],
    hashes: &[u64],
    needle: &Needle,
    settled: bool,
    entries: &mut Vec<Entry>,
) {
    let st = Structure::new(q.text, lines, q.path);
    crate::timing::mark("suggest: structure");
    if !settled {
        for f in symbol::candidates(q.text, lines, hashes, &st, needle, q.path) {
            entries.push(Entry {
                tier: 5,
                score: f.candidate.similarity + ANCHOR_WEIGHT * f.strength,
                evidence: 0.0,
                extent: f.whole,
                c: f.candidate,
            });
        }
        crate::timing::mark("suggest: symbol");
    }
    if symbol::whole_shape(needle, st.family) {
        extend_windows(q.text, lines, &st, needle, entries);
    }
    absorb(entries);
    weigh(q, lines, hashes, &st, needle, entries);
    if entries.is_empty() {
        entries.extend(
            last_resort(q.text, lines, hashes, &st, needle).map(|c| Entry {
                tier: 5,
                score: c.similarity,
                evidence: 0.0,
                extent: false,
                c,
            }),
        );
    }
}

/// The best `max` entries, none overlapping: those in scope first, then by tier, weak ones by
/// score.
fn best_entries(q: &Query, mut entries: Vec<Entry>, max: usize) -> Vec<Entry> {
    let in_scope = |c: &Candidate| {
        q.window
            .iter()
            .any(|&(a, b)| a <= c.start_line && c.end_line <= b)
    };
    // Stable: inside a tier the ladder's own order stands, and weak candidates by score.
    entries.sort_by(|a, b| {
        let scope = |e: &Entry| q.within && !in_scope(&e.c);
        scope(a)
            .cmp(&scope(b))
            .then(a.tier.cmp(&b.tier))
            .then(if a.tier == 5 && b.tier == 5 {
                b.score.total_cmp(&a.score)
            } else {
                std::cmp::Ordering::Equal
            })
    });
    let mut out: Vec<Entry> = Vec::new();
    for e in entries {
        if out.len() >= max {
            break;
        }
        if !out.iter().any(|o| overlaps(&o.c, &e.c)) {
            out.push(e);
        }
    }
    out
}

/// Puts the tied entries in file order, in the places the tied ones held.
fn order_ties(out: &mut Vec<Entry>, tie: &[(usize, usize)]) {
    if tie.is_empty() {
        return;
    }
    let at: Vec<usize> = (0..out.len())
        .filter(|&i| tie.contains(&(out[i].c.start_line, out[i].c.end_line)))
        .collect();
    let mut tied: Vec<Entry> = Vec::new();
    for &i in at.iter().rev() {
        tied.push(out.remove(i));
    }
    tied.sort_by_key(|e| e.c.start_line);
    for (&i, e) in at.iter().zip(tied) {
        out.insert(i, e);
    }
}

/// Extends fuzzy windows that stop inside the block their first line opens.
fn extend_windows(
    text: &str,
    lines: &[Range<usize>],
    st: &Structure,
    needle: &Needle,
    entries: &mut [Entry],
) {
    let k = needle.lines.len();
    let limit = (2 * k).max(k + 30);
    let last = needle.lines.last().map(|l| collapsed_hash(l));
    for e in entries.iter_mut() {
        if e.c.kind != CandidateKind::Fuzzy {
            continue;
        }
        let (a, b) = (e.c.start_line - 1, e.c.end_line - 1);
        // A window whose last line is old_string's own last line ends where the agent stopped.
        if matches!(st.family, blocks::Family::Brace { .. })
            || last != Some(collapsed_hash(&text[lines[b].clone()]))
        {
            let end = st.block_end(a);
            if end > b && end + 1 - a <= limit {
                e.c.end_line = end + 1;
                e.c.byte_range = lines[a].start..lines[end].end;
                e.c.similarity =
                    round_similarity(similarity(&text[e.c.byte_range.clone()], needle.body));
            }
        }
    }
}

/// A symbol or stale candidate with an extent of its own replaces the fuzzy windows it overlaps:
/// the same place, with its syntactic extent or its history; its score keeps the better
/// similarity. A symbol candidate that is only the window its anchors give gives way to a fuzzy
/// window it overlaps (the better-measured description of the same place), lending it the
/// strength of its anchors.
fn absorb(entries: &mut Vec<Entry>) {
    let mut i = 0;
    while i < entries.len() {
        let kind = entries[i].c.kind;
        let weak = |e: &Entry| e.tier == 5 && e.c.kind == CandidateKind::Fuzzy;
        if entries[i].tier != 5 || !matches!(kind, CandidateKind::Symbol | CandidateKind::Stale) {
            i += 1;
            continue;
        }
        let me = entries[i].c.clone();
        if !entries[i].extent {
            let bonus = entries[i].score - me.similarity;
            let host = entries
                .iter_mut()
                .filter(|e| weak(e) && overlaps(&e.c, &me))
                .max_by(|a, b| a.score.total_cmp(&b.score));
            if let Some(h) = host {
                h.score += bonus;
                entries.remove(i);
                continue;
            }
            i += 1;
            continue;
        }
        // A window reaching well past the candidate's extent describes more than it does (a
        // duplicated method and its neighbour, say): both stay, and the better score wins. A
        // window that starts on the same definition holds the same anchors, so it gets the same
        // bonus: the anchors tell where, not how far (an old_string running past the end of the
        // function into the next definition's first line is that window, not the function).
        let within =
            |c: &Candidate| c.start_line + 2 >= me.start_line && c.end_line <= me.end_line + 2;
        let anchored = |c: &Candidate| c.start_line <= me.start_line && me.start_line <= c.end_line;
        let bonus = entries[i].score - me.similarity;
        let mut best = 0.0f64;
        let mut j = 0;
        while j < entries.len() {
            if j != i && weak(&entries[j]) && overlaps(&entries[j].c, &me) && within(&entries[j].c)
            {
                best = best.max(entries[j].c.similarity);
                entries.remove(j);
                if j < i {
                    i -= 1;
                }
            } else {
                if j != i && weak(&entries[j]) && anchored(&entries[j].c) {
                    entries[j].score += bonus;
                }
                j += 1;
            }
        }
        if best > entries[i].c.similarity {
            entries[i].score += best - entries[i].c.similarity;
        }
        i += 1;
    }
}

/// Weights of the evidence `new_string` keeps from `old_string`, and the other evidence of
/// place, added to weak candidates' scores.
fn weigh(
    q: &Query,
    lines: &[Range<usize>],
    hashes: &[u64],
    st: &Structure,
    needle: &Needle,
    entries: &mut [Entry],
) {
    if !entries.iter().any(|e| e.tier == 5) {
        return;
    }
    let marks = kept_marks(q, lines, hashes, st, needle);
    let held: Vec<f64> = entries
        .iter()
        .map(|e| {
            marks
                .iter()
                .filter(|(lines, _)| {
                    lines
                        .iter()
                        .any(|&l| e.c.start_line <= l + 1 && l < e.c.end_line)
                })
                .map(|(_, w)| w)
                .sum()
        })
        .collect();
    let most = held.iter().copied().fold(0.0f64, f64::max);
    let last = q
        .lookback
        .as_ref()
        .and_then(|lb| stale::last_edit(&lb.history, lb.key, q.text));
    // A comment copied exactly can stand above the wrong function: the first line of code.
    let first = needle
        .lines
        .iter()
        .map(|l| l.trim())
        .find(|l| {
            !l.is_empty()
                && !["//", "#", "/*", "*", "--", "<!--"]
                    .iter()
                    .any(|c| l.starts_with(c))
        })
        .unwrap_or_default();
    for (e, h) in entries.iter_mut().zip(held) {
        if e.tier != 5 {
            continue;
        }
        let mut add = 0.0;
        if most > 0.0 {
            add += KEPT_WEIGHT * h / most;
        }
        let inside = q
            .window
            .iter()
            .any(|&(a, b)| a <= e.c.start_line && e.c.end_line <= b);
        if inside && !q.within {
            add += WINDOW_WEIGHT;
        }
        if let Some((a, b)) = last
            && e.c.start_line <= b + 5
            && a <= e.c.end_line + 5
        {
            add += LAST_EDIT_WEIGHT;
        }
        add += PREFIX_WEIGHT * prefix_share(first, q.text.get(e.c.byte_range.clone()));
        e.score += add;
        e.evidence += add;
    }
}

/// How much of `first` (old_string's first line of code, trimmed) a line of a candidate's text
/// starts with, as a share of `first`: agents recall how a statement starts (the call, the
/// assignment's target) better than how it ends.
fn prefix_share(first: &str, text: Option<&str>) -> f64 {
    let Some(text) = text else {
        return 0.0;
    };
    if first.is_empty() {
        return 0.0;
    }
    let common = text
        .lines()
        .take(200)
        .map(|l| {
            first
                .bytes()
                .zip(l.trim().bytes())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0);
    // A shared keyword or bracket says nothing about the place.
    if common < 8 {
        return 0.0;
    }
    common as f64 / first.len() as f64
}

/// The evidence `new_string` keeps: each kept line's file lines and weight (rarer and more
/// telling lines weigh more), and each kept rare name's or string literal's lines.
fn kept_marks(
    q: &Query,
    lines: &[Range<usize>],
    hashes: &[u64],
    st: &Structure,
    needle: &Needle,
) -> Vec<(Vec<usize>, f64)> {
    let mut out = Vec::new();
    let Some(new) = Needle::parse(q.new) else {
        return out;
    };
    let new_lines: std::collections::HashSet<u64> =
        new.lines.iter().map(|l| collapsed_hash(l)).collect();
    let mut seen = std::collections::HashSet::new();
    for l in &needle.lines {
        let h = collapsed_hash(l);
        if blocks::is_trivial(l) || !new_lines.contains(&h) || !seen.insert(h) {
            continue;
        }
        let at: Vec<usize> = (0..hashes.len()).filter(|&i| hashes[i] == h).collect();
        if at.is_empty() || at.len() > 8 {
            continue;
        }
        let class = if st.is_comment(at[0]) {
            0.25
        } else if blocks::is_definition(l, st.family) {
            1.0
        } else {
            0.6
        };
        let w = class / at.len() as f64;
        out.push((at, w));
    }
    let new_tokens: std::collections::HashSet<&str> = tokens(q.new).collect();
    let mut names: Vec<&str> = tokens(q.old).filter(|t| new_tokens.contains(t)).collect();
    names.sort_unstable();
    names.dedup();
    for t in names.into_iter().take(40) {
        let mut at: Vec<usize> = Vec::new();
        for i in memchr::memmem::find_iter(q.text.as_bytes(), t.as_bytes()) {
            let l = lines.partition_point(|r| r.end < i);
            if at.last() != Some(&l) {
                at.push(l);
            }
            if at.len() > RARE_LINES {
                break;
            }
        }
        if !at.is_empty() && at.len() <= RARE_LINES {
            // A string literal (a route, a key, a message) kept by new_string names its place
            // as well as a whole line does.
            let class = if t.starts_with(['"', '\'', '`']) {
                1.0
            } else {
                0.5
            };
            let w = class / at.len() as f64;
            out.push((at, w));
        }
    }
    out
}

/// Names (identifiers of at least four characters) and string literals (with their quotes) of a
/// text: what a kept rare token can be.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'\'' || b == b'"' || b == b'`' {
                let close = memchr::memchr2(b, b'\n', &bytes[i + 1..]).map(|e| i + 1 + e);
                if let Some(e) = close.filter(|&e| bytes[e] == b)
                    && e - i >= 4
                {
                    let t = &text[i..=e];
                    i = e + 1;
                    return Some(t);
                }
                i += 1;
                continue;
            }
            if b.is_ascii_alphabetic() || b == b'_' {
                let s = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                if i - s >= 4 {
                    return Some(&text[s..i]);
                }
                continue;
            }
            i += 1;
        }
        None
    })
}

/// Weak candidates at the top that look alike (close scores, near-equal texts) and that no
/// evidence separated: their line ranges, in file order.
fn ties(text: &str, out: &[Entry]) -> Vec<(usize, usize)> {
    let Some(first) = out.first().filter(|e| e.tier == 5) else {
        return Vec::new();
    };
    let body = |e: &Entry| text.get(e.c.byte_range.clone()).unwrap_or_default();
    let mut tied: Vec<(usize, usize)> = out
        .iter()
        .skip(1)
        .filter(|e| {
            e.tier == 5
                && e.c.kind == first.c.kind
                && first.score - e.score <= TIE_SCORE + 1e-9
                && (first.evidence - e.evidence).abs() < TIE_EVIDENCE
                && similarity(body(first), body(e)) >= TIE_TEXTS
        })
        .map(|e| (e.c.start_line, e.c.end_line))
        .collect();
    if tied.is_empty() {
        return tied;
    }
    tied.push((first.c.start_line, first.c.end_line));
    tied.sort_unstable();
    tied
}

/// How good a last-resort anchor is, lower first: its class (a definition, code, a comment; plus 3
/// when it stands inside a longer line), how many file lines carry it, and its length (longer
/// first).
type Grade = (u8, usize, std::cmp::Reverse<usize>);

/// The last resort of a miss with no candidate: the best line of `old_string` that stands in the
/// file (a whole line repeated up to twenty times, or a part of one longer line), or else the
/// line naming the most of its rare names; with the block it opens.
fn last_resort(
    text: &str,
    lines: &[Range<usize>],
    hashes: &[u64],
    st: &Structure,
    needle: &Needle,
) -> Option<Candidate> {
    let n = lines.len();
    let (note, a, b) = match best_line(text, lines, hashes, st, needle) {
        Some(best) => line_note(text, lines, st, needle, best),
        None => names_note(text, lines, needle)?,
    };
    let b = b.min(n - 1).max(a);
    let byte_range = lines[a].start..lines[b].end;
    Some(Candidate {
        kind: CandidateKind::Symbol,
        note: Some(note),
        start_line: a + 1,
        end_line: b + 1,
        similarity: round_similarity(similarity(&text[byte_range.clone()], needle.body)),
        byte_range,
        strong: false,
        source: None,
    })
}

/// The best-graded line of `old_string` that stands in the file, as (needle line, file line,
/// grade).
fn best_line(
    text: &str,
    lines: &[Range<usize>],
    hashes: &[u64],
    st: &Structure,
    needle: &Needle,
) -> Option<(usize, usize, Grade)> {
    let n = lines.len();
    // (needle line, file line, grade): lower grade is better.
    let mut best: Option<(usize, usize, Grade)> = None;
    let mut consider = |j: usize, i: usize, grade: Grade| {
        if best.as_ref().is_none_or(|b| grade < b.2) {
            best = Some((j, i, grade));
        }
    };
    for (j, l) in needle.lines.iter().enumerate() {
        if blocks::is_trivial(l) {
            continue;
        }
        let h = collapsed_hash(l);
        let at: Vec<usize> = (0..n).filter(|&i| hashes[i] == h).take(21).collect();
        let class = |i: usize| {
            if st.is_comment(i) {
                2
            } else if blocks::is_definition(l, st.family) {
                0
            } else {
                1
            }
        };
        if !at.is_empty() && at.len() <= 20 {
            consider(
                j,
                at[0],
                (class(at[0]), at.len(), std::cmp::Reverse(l.trim().len())),
            );
            continue;
        }
        let t = l.trim();
        if t.len() >= 8 {
            let inside: Vec<usize> = memchr::memmem::find_iter(text.as_bytes(), t.as_bytes())
                .map(|p| lines.partition_point(|r| r.end < p))
                .take(4)
                .collect();
            if let Some(&i) = inside.first()
                && inside.len() <= 3
            {
                consider(
                    j,
                    i,
                    (3 + class(i), inside.len(), std::cmp::Reverse(t.len())),
                );
            }
        }
    }
    best
}

/// The note and lines `(a, b)` for old_string's line `j` found at file line `i`, with the block
/// that line opens.
fn line_note(
    text: &str,
    lines: &[Range<usize>],
    st: &Structure,
    needle: &Needle,
    (j, i, (grade, count, _)): (usize, usize, Grade),
) -> (String, usize, usize) {
    let end = symbol::close_window(st, i, i, (needle.lines.len() * 3).max(30));
    let shown: String = text[lines[i].clone()].trim().chars().take(60).collect();
    let how = if grade >= 3 { "stands inside" } else { "is" };
    let times = if count > 1 {
        format!(" (one of {count} such lines)")
    } else {
        String::new()
    };
    (
        format!(
            "line {} of old_string {how} line {} of the file{times} (`{shown}`); nothing \
             else of it was found",
            j + 1,
            i + 1
        ),
        i,
        end,
    )
}

/// The note and line for the file line naming the most of old_string's rare names, if any.
fn names_note(
    text: &str,
    lines: &[Range<usize>],
    needle: &Needle,
) -> Option<(String, usize, usize)> {
    let mut count: Vec<(usize, usize)> = Vec::new();
    let mut names: Vec<&str> = tokens(needle.body)
        .filter(|t| t.len() >= 5 && !t.starts_with(['"', '\'', '`']))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut found: Vec<&str> = Vec::new();
    for t in &names {
        let mut hit = false;
        for p in memchr::memmem::find_iter(text.as_bytes(), t.as_bytes()).take(50) {
            let l = lines.partition_point(|r| r.end < p);
            match count.iter_mut().find(|(x, _)| *x == l) {
                Some((_, c)) => *c += 1,
                None => count.push((l, 1)),
            }
            hit = true;
        }
        if hit {
            found.push(t);
        }
    }
    let &(i, _) = count
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))?;
    Some((
        format!(
            "no line of old_string is in the file, but it names {}, which line {} \
             mentions",
            found
                .iter()
                .take(3)
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", "),
            i + 1
        ),
        i,
        i,
    ))
}
