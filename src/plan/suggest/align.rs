//! Line alignment: an `old_string` whose lines all stand in the file, in order and each as a
//! whole line (exact, or equal once whitespace is collapsed), except that one line was dropped
//! from it (the file has one to [`MAX_GAP`] lines between two of its lines) or one line was added
//! to it (one of its lines is not in that run of the file: a duplicated or invented line).
//!
//! Character-level similarity misses exactly these: a three-line block whose long middle line
//! was dropped shares little text with any three-line window, although both remaining lines occur
//! verbatim one line apart. Lines are compared as whole units instead.
//!
//! # Algorithm
//!
//! Each line is reduced to the hash of its whitespace-collapsed words, and the needle's hashes are
//! interned to small integers (file lines the needle does not have get a value no needle line
//! has). Two Z-function passes over `needle ++ separator ++ file` (forward, and both reversed) give
//! for every file line `s` how many leading needle lines match from `s` (`fwd[s]`), and for every
//! end `e` how many trailing needle lines match ending just before `e` (`bwd[e]`). A drop after
//! needle line `j` with `g` file lines in between is `fwd[s] >= j` and `bwd[s + k + g] >= k - j`;
//! an added needle line `j` is `fwd[s] >= j` and `bwd[s + k - 1] >= k - 1 - j`. So every start is
//! tested in constant time and the whole search is O(n + k), however repetitive the file.
//!
//! # Invariants
//!
//! * A candidate covers whole file lines, and every needle line except at most one added line is
//!   matched inside it, in order.
//! * A window that matches every needle line contiguously is not reported here (it is a
//!   whitespace match, found by the rung above); a gap or added-line reading starting at the
//!   same line is, flagged `covers_relaxed`, for the caller to keep only when it is verbatim
//!   and the relaxed match there is uneven.
//! * Where several positions of the gap or the added line fit, the one whose lines match byte
//!   for byte most often is reported (`settle`).
//! * An added first or last needle line whose neighbouring file line resembles it is a changed
//!   line, not an added one, and is left to the fuzzy search, which reports the full window.
//! * Nothing here is ever applied, with or without `--lenient`.

use std::ops::Range;

use super::fuzzy::{collapsed_hash, similarity};
use super::lines::{FastMap, Needle, is_blank};

/// The most file lines accepted between two consecutive needle lines.
pub(super) const MAX_GAP: usize = 3;
/// Above this many structural matches only the first ones (by cost, then position) are ranked
/// by exactness: each ranking step is O(k), and a pathological file can offer one per line.
const MAX_RANKED: usize = 256;
/// An added end line this similar to the file line beside it was changed, not added.
const CHANGED_LINE_SIMILARITY: f64 = 0.6;

const SEPARATOR: u32 = u32::MAX - 1;
const ABSENT: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// The file has `lines` lines between needle lines `after` and `after + 1` (1-based).
    Gap { after: usize, lines: usize },
    /// Needle line `line` (0-based) is not in the file.
    Added { line: usize },
}

#[derive(Debug, Clone)]
pub(super) struct Aligned {
    /// 0-based file lines `start..end`.
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) shape: Shape,
    /// Every matched line (at least two) is the file's byte for byte, line endings aside: the
    /// text was copied from here, indentation included.
    pub(super) verbatim: bool,
    /// The needle's lines also stand contiguously from `start` (equal once whitespace is
    /// collapsed): this reading competes with a relaxed match there.
    pub(super) covers_relaxed: bool,
    /// The lowest position the gap or the added line can take (see [`settle`]).
    lowest: usize,
}

impl Aligned {
    /// How far the needle is from the file here: lines the file has extra, or one added line.
    fn cost(&self) -> usize {
        match self.shape {
            Shape::Gap { lines, .. } => lines,
            Shape::Added { .. } => 1,
        }
    }

    /// What differs, in the terms the user wrote `old_string` in (1-based lines).
    pub(super) fn note(&self, needle: &Needle) -> String {
        match self.shape {
            Shape::Gap { after, lines } => {
                let first = self.start + after + 1;
                let which = if lines == 1 {
                    format!("an extra line {first}")
                } else {
                    format!("extra lines {first}-{}", first + lines - 1)
                };
                format!(
                    "the file has {which} between lines {after} and {} of old_string",
                    after + 1
                )
            }
            Shape::Added { line } => {
                let mut note = format!("line {} of old_string is not in the file", line + 1);
                if line > 0
                    && collapsed_hash(needle.lines[line]) == collapsed_hash(needle.lines[line - 1])
                {
                    note.push_str(&format!(" (it repeats line {line})"));
                } else if repeats(needle, line) {
                    note.push_str(&format!(" (it repeats line {})", line + 2));
                }
                note
            }
        }
    }
}

/// Z-function: `z[i]` = length of the longest common prefix of `s` and `s[i..]` (`z[0]` = 0).
fn z_function(s: &[u32]) -> Vec<usize> {
    let n = s.len();
    let mut z = vec![0; n];
    let (mut l, mut r) = (0, 0);
    for i in 1..n {
        if i < r {
            z[i] = (r - i).min(z[i - l]);
        }
        while i + z[i] < n && s[z[i]] == s[i + z[i]] {
            z[i] += 1;
        }
        if i + z[i] > r {
            l = i;
            r = i + z[i];
        }
    }
    z
}

/// For each file position, the length of the needle prefix matching there.
fn prefix_matches(needle: &[u32], file: impl Iterator<Item = u32>) -> Vec<usize> {
    let k = needle.len();
    let mut s: Vec<u32> = Vec::with_capacity(k + 1 + file.size_hint().0);
    s.extend_from_slice(needle);
    s.push(SEPARATOR);
    s.extend(file);
    let mut z = z_function(&s);
    z.drain(..k + 1);
    z
}

/// Every alignment of the needle with one dropped or one added line, best first.
/// `line_hashes[i]` is `collapsed_hash` of file line `i`.
pub(super) fn aligned(
    hay: &str,
    lines: &[Range<usize>],
    line_hashes: &[u64],
    needle: &Needle,
) -> Vec<Aligned> {
    let k = needle.lines.len();
    let n = lines.len().min(line_hashes.len());
    if k < 2 || n == 0 {
        return Vec::new();
    }
    let mut ids: FastMap<u64, u32> = FastMap::default();
    let pattern: Vec<u32> = needle
        .lines
        .iter()
        .map(|l| {
            // Needles are far shorter than u32::MAX - 1 lines (they are capped upstream).
            let next = u32::try_from(ids.len()).unwrap_or(SEPARATOR - 1);
            *ids.entry(collapsed_hash(l)).or_insert(next)
        })
        .collect();
    let file: Vec<u32> = line_hashes[..n]
        .iter()
        .map(|h| ids.get(h).copied().unwrap_or(ABSENT))
        .collect();
    let fwd = prefix_matches(&pattern, file.iter().copied());
    let rev_pattern: Vec<u32> = pattern.iter().rev().copied().collect();
    let rev = prefix_matches(&rev_pattern, file.iter().rev().copied());
    // bwd[e]: trailing needle lines matching file lines ..e; rev[t] starts at file line n-1-t.
    let bwd = |e: usize| if e == 0 { 0 } else { rev[n - e] };

    let mut found = Vec::new();
    for (s, &f) in fwd.iter().enumerate() {
        if f >= 1 {
            for g in 1..=MAX_GAP {
                let e = s + k + g;
                if e > n {
                    break;
                }
                let lo = 1.max(k.saturating_sub(bwd(e)));
                let hi = (k - 1).min(f);
                if lo <= hi {
                    found.push(Aligned {
                        start: s,
                        end: e,
                        shape: Shape::Gap {
                            after: hi,
                            lines: g,
                        },
                        verbatim: false,
                        covers_relaxed: f >= k,
                        lowest: lo,
                    });
                    break;
                }
            }
        }
        // An added line leaves k - 1 lines matched: with k = 2 that is one line alone, which
        // says nothing (a two-line old_string with a typo would be "found" at every lone
        // `return this;` of the file, above the real place one character off).
        let e = s + k - 1;
        if k >= 3 && e <= n {
            let lo = (k - 1).saturating_sub(bwd(e));
            let hi = (k - 1).min(f);
            if lo <= hi {
                found.push(Aligned {
                    start: s,
                    end: e,
                    shape: Shape::Added { line: hi },
                    verbatim: false,
                    covers_relaxed: f >= k,
                    lowest: lo,
                });
            }
        }
    }
    found.retain(|a| plausible(hay, lines, needle, a));
    found.sort_by_key(|a| (a.cost(), a.start));
    found.truncate(MAX_RANKED);
    // Among equally distant alignments: first those that account for every needle line (a
    // repeated line is accounted for by its twin; of the two, it needs no extra file lines),
    // then the one whose lines match byte for byte (indentation included), which is where the
    // text was copied from.
    let mut ranked: Vec<(usize, usize, Aligned)> = found
        .into_iter()
        .map(|mut a| {
            let exact = settle(hay, lines, needle, &mut a);
            let class = match a.shape {
                Shape::Added { line } if repeats(needle, line) => 0,
                Shape::Gap { .. } => 1,
                Shape::Added { .. } => 2,
            };
            // One matched line says little about where a two-line needle came from.
            let matched = pairs(&a, k).count();
            a.verbatim = exact == matched && matched >= 2;
            (class, exact, a)
        })
        .collect();
    ranked.sort_by(|(ca, ea, a), (cb, eb, b)| {
        (a.cost().cmp(&b.cost()))
            .then(ca.cmp(cb))
            .then(eb.cmp(ea))
            .then(a.start.cmp(&b.start))
    });
    ranked.into_iter().map(|(_, _, a)| a).collect()
}

/// Where in `a.lowest..=` its current position the gap or the added line goes: the position
/// whose pairs match byte for byte most often (ties keep the latest, the structural choice),
/// among those where an added line fits. Returns the number of byte-exact pairs.
///
/// Whitespace-collapsed hashes cannot tell `    }` from `}`: after `        }` `    }` `}` lost
/// its middle line, the gap fits after either brace of the needle, and only the byte-exact
/// reading says which file line is the extra one.
fn settle(hay: &str, lines: &[Range<usize>], needle: &Needle, a: &mut Aligned) -> usize {
    let k = needle.lines.len();
    let same = |j: usize, i: usize| {
        lines
            .get(i)
            .is_some_and(|r| strip_cr(&hay[r.clone()]) == strip_cr(needle.lines[j]))
    };
    // exact(p) = head[p] + tail[p]: head counts needle lines before position p, matched from
    // the window's start; tail those from p on (Gap) or after p (Added), matched after the
    // extra file lines or the skipped needle line.
    let (hi, shift, skip) = match a.shape {
        Shape::Gap { after, lines } => (after, lines, 0),
        Shape::Added { line } => (line, 0, 1),
    };
    let lo = a.lowest.min(hi);
    let mut head = vec![0usize; hi + 1];
    for j in 0..hi {
        head[j + 1] = head[j] + usize::from(same(j, a.start + j));
    }
    let mut tail = vec![0usize; k + 2];
    for j in (lo + skip..k).rev() {
        // Gap: needle line j sits `shift` lines further down; Added: one line further up.
        let i = (a.start + j + shift).checked_sub(skip);
        tail[j] = tail[j + 1] + usize::from(i.is_some_and(|i| same(j, i)));
    }
    let exact_at = |p: usize| head[p] + tail[(p + skip).min(k)];
    let fits = |p: usize| skip == 0 || added_fits(hay, lines, needle, a, p);
    // `plausible` kept this alignment, so some position fits.
    let mut best = (lo..=hi).rev().find(|&p| fits(p)).unwrap_or(hi);
    for p in (lo..best).rev() {
        if exact_at(p) > exact_at(best) && fits(p) {
            best = p;
        }
    }
    a.shape = match a.shape {
        Shape::Gap { lines, .. } => Shape::Gap { after: best, lines },
        Shape::Added { .. } => Shape::Added { line: best },
    };
    exact_at(best)
}

/// Whether needle line `line` (0-based) repeats the line before or after it.
fn repeats(needle: &Needle, line: usize) -> bool {
    let same = |other: usize| {
        needle
            .lines
            .get(other)
            .is_some_and(|l| collapsed_hash(l) == collapsed_hash(needle.lines[line]))
    };
    (line > 0 && same(line - 1)) || same(line + 1)
}

fn strip_cr(s: &str) -> &str {
    s.strip_suffix('\r').unwrap_or(s)
}

/// The pairs (needle line, file line) an alignment matches.
fn pairs(a: &Aligned, k: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    (0..k).filter_map(move |j| match a.shape {
        Shape::Gap { after, lines } => Some((j, a.start + j + if j < after { 0 } else { lines })),
        Shape::Added { line } if j == line => None,
        Shape::Added { line } => Some((j, a.start + j - usize::from(j > line))),
    })
}

/// Rejects alignments that say nothing (only blank lines matched) and added lines that are
/// really changed lines: an added end line whose neighbouring file line resembles it, unless
/// the alignment can take its added line from the interior instead.
fn plausible(hay: &str, lines: &[Range<usize>], needle: &Needle, a: &Aligned) -> bool {
    let k = needle.lines.len();
    if pairs(a, k).all(|(j, _)| is_blank(needle.lines[j])) {
        return false;
    }
    match a.shape {
        Shape::Gap { .. } => true,
        Shape::Added { line } => {
            (a.lowest.min(line)..=line).any(|p| added_fits(hay, lines, needle, a, p))
        }
    }
}

/// Whether needle line `p` can be the added one of `a`: an interior line always can; a first or
/// last line only when the file line beside the window does not resemble it (then it was
/// changed, and the fuzzy search reports the full window).
fn added_fits(hay: &str, lines: &[Range<usize>], needle: &Needle, a: &Aligned, p: usize) -> bool {
    let k = needle.lines.len();
    let beside = if p == 0 {
        a.start.checked_sub(1)
    } else if p == k - 1 {
        Some(a.end).filter(|&e| e < lines.len())
    } else {
        None
    };
    beside.is_none_or(|i| {
        let file_line = hay[lines[i].clone()].trim();
        let added = needle.lines[p].trim();
        similarity(file_line, added) < CHANGED_LINE_SIMILARITY
    })
}
