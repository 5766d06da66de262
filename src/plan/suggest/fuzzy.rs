//! Fuzzy windows: a linear shortlist of windows sharing the most collapsed line hashes and
//! identifier tokens with the needle (multiset tallies kept incrementally while sliding,
//! with whitespace and Unicode matches masked out by a coverage prefix), then reranking of
//! the shortlist by whole-line edits and char-level similarity.

use std::ops::Range;

use super::lines::{FastMap, Needle, hash_bytes};
use super::{
    Candidate, CandidateKind, LEVENSHTEIN_BUDGET, MAX_INEXACT_SIMILARITY, MIN_FUZZY_SIMILARITY,
    SHORTLIST_PER_LEN,
};

pub(super) fn round_similarity(x: f64) -> f64 {
    ((x * 100.0).round() / 100.0).clamp(0.0, MAX_INEXACT_SIMILARITY)
}

/// strsim's normalized Levenshtein, made affordable: Levenshtein distance is unchanged by
/// removing a common prefix and suffix, and near-misses share most of their text, so the
/// quadratic core usually runs on a few dozen chars. Chars are decoded once into slices
/// rather than re-decoded in strsim's inner loop.
pub(super) fn similarity(a: &str, b: &str) -> f64 {
    if a.len().saturating_mul(b.len()) >= LEVENSHTEIN_BUDGET {
        return strsim::sorensen_dice(a, b);
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (&a[prefix..], &b[prefix..]);
    let suffix = a_rest
        .iter()
        .rev()
        .zip(b_rest.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let a_core = a_rest[..a_rest.len() - suffix].to_vec();
    let b_core = b_rest[..b_rest.len() - suffix].to_vec();
    let distance = strsim::generic_levenshtein(&a_core, &b_core);
    1.0 - distance as f64 / longest as f64
}
/// `prefix[i]` = number of covered lines before line i, so "does window a..b touch a
/// covered line" is one subtraction instead of a scan over all spans.
pub(super) fn coverage_prefix(n: usize, spans: impl Iterator<Item = Range<usize>>) -> Vec<u32> {
    let mut delta = vec![0i64; n + 1];
    for span in spans {
        delta[span.start] += 1;
        delta[span.end.min(n)] -= 1;
    }
    let mut prefix = Vec::with_capacity(n + 1);
    let (mut depth, mut count) = (0i64, 0u32);
    prefix.push(0);
    for d in &delta[..n] {
        depth += d;
        count += u32::from(depth > 0);
        prefix.push(count);
    }
    prefix
}

/// Words of the line, i.e. the pieces between whitespace runs. Two lines collapse to the
/// same text exactly when their word sequences are equal, which lets the hash work on
/// whole words instead of byte by byte.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split([' ', '\t', '\r']).filter(|w| !w.is_empty())
}

pub(super) fn collapsed_hash(line: &str) -> u64 {
    words(line).fold(0, |h, w| hash_bytes(h, w.as_bytes()))
}

/// Hashes of identifier-like runs; non-ASCII bytes count as word bytes so UTF-8 words stay whole.
fn for_each_token(line: &str, mut f: impl FnMut(u64)) {
    let is_word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80;
    line.as_bytes()
        .split(|b| !is_word(b))
        .filter(|t| !t.is_empty())
        .for_each(|t| f(hash_bytes(0, t)));
}

/// The line-normalised text fuzzy scores compare: words joined by one space, lines by '\n'.
fn collapsed_text<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut text = String::new();
    for (i, line) in lines.enumerate() {
        if i > 0 {
            text.push('\n');
        }
        for (j, w) in words(line).enumerate() {
            if j > 0 {
                text.push(' ');
            }
            text.push_str(w);
        }
    }
    text
}

/// A multiset of needle hashes as dense slots, so window counts live in a plain array.
struct Multiset {
    slot_of: FastMap<u64, u32>,
    need: Vec<u32>,
}

impl Multiset {
    fn new(hashes: impl Iterator<Item = u64>) -> Self {
        let mut set = Multiset {
            slot_of: FastMap::default(),
            need: Vec::new(),
        };
        for h in hashes {
            // Needles are capped at 1 MiB before fuzzy search, so slots fit in u32.
            let next = u32::try_from(set.need.len()).unwrap_or(NO_SLOT);
            let slot = *set.slot_of.entry(h).or_insert(next);
            if slot == next {
                set.need.push(0);
            }
            if let Some(count) = set.need.get_mut(slot as usize) {
                *count += 1;
            }
        }
        set
    }
}

const NO_SLOT: u32 = u32::MAX;

/// Incremental multiset intersection size: each add/remove is O(1), so sliding a window
/// over the whole file is linear.
struct Tally<'a> {
    need: &'a [u32],
    have: Vec<u32>,
    hits: usize,
}

impl<'a> Tally<'a> {
    fn new(need: &'a [u32]) -> Self {
        Tally {
            need,
            have: vec![0; need.len()],
            hits: 0,
        }
    }
    fn update(&mut self, slot: u32, add: bool) {
        let s = slot as usize;
        if add {
            self.have[s] += 1;
            if self.have[s] <= self.need[s] {
                self.hits += 1;
            }
        } else {
            if self.have[s] <= self.need[s] {
                self.hits -= 1;
            }
            self.have[s] -= 1;
        }
    }
}

/// What the sliding pass needs per file line, computed once rather than per window length.
struct FileIndex {
    line_hash: Vec<u64>,
    /// Needle slot of the line's hash, or NO_SLOT.
    line_slot: Vec<u32>,
    /// Needle token slots of all lines, flat; line i owns `token_start[i]..token_start[i + 1]`.
    token_start: Vec<usize>,
    token_slots: Vec<u32>,
}

impl FileIndex {
    fn new(
        hay: &str,
        lines: &[Range<usize>],
        line_hashes: &[u64],
        line_set: &Multiset,
        token_set: &Multiset,
    ) -> Self {
        let mut index = FileIndex {
            line_hash: Vec::with_capacity(lines.len()),
            line_slot: Vec::with_capacity(lines.len()),
            token_start: Vec::with_capacity(lines.len() + 1),
            token_slots: Vec::new(),
        };
        for (r, &hash) in lines.iter().zip(line_hashes) {
            let text = &hay[r.clone()];
            index.line_hash.push(hash);
            index
                .line_slot
                .push(line_set.slot_of.get(&hash).copied().unwrap_or(NO_SLOT));
            index.token_start.push(index.token_slots.len());
            // Only tokens the needle has can score, so the rest are not stored at all.
            for_each_token(text, |h| {
                index.token_slots.extend(token_set.slot_of.get(&h))
            });
        }
        index.token_start.push(index.token_slots.len());
        index
    }

    fn update(&self, i: usize, add: bool, lines: &mut Tally, tokens: &mut Tally) {
        if self.line_slot[i] != NO_SLOT {
            lines.update(self.line_slot[i], add);
        }
        for &s in &self.token_slots[self.token_start[i]..self.token_start[i + 1]] {
            tokens.update(s, add);
        }
    }
}

struct Shortlisted {
    start: usize,
    len: usize,
    /// (line-hash hits, token hits) from the sliding count.
    hits: (usize, usize),
    /// Whole-line edits between window and needle; 0 when too large to compute.
    line_distance: usize,
}

/// The best `SHORTLIST_PER_LEN` windows of each length by (line hits, token hits), ties to
/// the earlier window; windows touching a covered (whitespace/unicode) line are skipped
/// here so they cannot crowd out real alternatives.
fn shortlist(
    index: &FileIndex,
    line_set: &Multiset,
    token_set: &Multiset,
    k: usize,
    covered: &[u32],
) -> Vec<Shortlisted> {
    let n = index.line_hash.len();
    // Lengths around k, clamped to the file so a needle longer than the file still gets
    // the whole file considered once.
    let mut lengths: Vec<usize> = [k.saturating_sub(1), k, k + 1]
        .into_iter()
        .filter(|&l| l >= 1 && l <= n)
        .collect();
    if lengths.is_empty() && n > 0 {
        lengths.push(n);
    }
    let mut shortlist = Vec::new();
    for len in lengths {
        let mut best: Vec<((usize, usize), usize)> = Vec::with_capacity(SHORTLIST_PER_LEN + 1);
        let mut line_tally = Tally::new(&line_set.need);
        let mut token_tally = Tally::new(&token_set.need);
        for end in 0..n {
            index.update(end, true, &mut line_tally, &mut token_tally);
            if end >= len {
                index.update(end - len, false, &mut line_tally, &mut token_tally);
            }
            let Some(start) = (end + 1).checked_sub(len) else {
                continue;
            };
            let score = (line_tally.hits, token_tally.hits);
            if score == (0, 0) || covered[start + len] > covered[start] {
                continue;
            }
            // Strictly better evicts; equal scores queue behind, so earlier windows win ties.
            let at = best.partition_point(|(s, _)| *s >= score);
            if at < SHORTLIST_PER_LEN {
                best.insert(at, (score, start));
                best.truncate(SHORTLIST_PER_LEN);
            }
        }
        shortlist.extend(best.into_iter().map(|(hits, start)| Shortlisted {
            start,
            len,
            hits,
            line_distance: 0,
        }));
    }
    shortlist
}

pub(super) fn fuzzy_candidates(
    hay: &str,
    lines: &[Range<usize>],
    line_hashes: &[u64],
    needle: &Needle,
    covered: &[u32],
    want: usize,
) -> Vec<Candidate> {
    let k = needle.lines.len();
    let needle_hashes: Vec<u64> = needle.lines.iter().map(|l| collapsed_hash(l)).collect();
    let line_set = Multiset::new(needle_hashes.iter().copied());
    let mut needle_tokens = Vec::new();
    for l in &needle.lines {
        for_each_token(l, |h| needle_tokens.push(h));
    }
    let token_set = Multiset::new(needle_tokens.into_iter());
    let index = FileIndex::new(hay, lines, line_hashes, &line_set, &token_set);
    let mut shortlist = shortlist(&index, &line_set, &token_set, k, covered);

    // The shortlist clusters around each plausible location, and char-level Levenshtein on
    // every member is what made this slow (~0.8 ms per 20-line window). Within a cluster the
    // best-aligned window is the one with the fewest whole-line edits, which strsim computes
    // on the line hashes in k*len steps; so keep only the best-aligned window of each
    // overlapping group and spend char-level scoring on those. Measured on real sources this
    // also puts the exact intended range on top far more often than char-level alone,
    // which tends to prefer a window that drops a line.
    for w in &mut shortlist {
        if k.saturating_mul(w.len) < LEVENSHTEIN_BUDGET {
            let window = index.line_hash[w.start..w.start + w.len].to_vec();
            w.line_distance = strsim::generic_levenshtein(&needle_hashes, &window);
        }
    }
    shortlist.sort_by(|a, b| {
        (a.line_distance.cmp(&b.line_distance))
            .then(b.hits.cmp(&a.hits))
            .then(a.len.abs_diff(k).cmp(&b.len.abs_diff(k)))
            .then(a.start.cmp(&b.start))
    });
    let mut representatives: Vec<&Shortlisted> = Vec::new();
    for w in &shortlist {
        if !representatives
            .iter()
            .any(|r| r.start < w.start + w.len && w.start < r.start + r.len)
        {
            representatives.push(w);
        }
    }

    let needle_text = collapsed_text(needle.lines.iter().copied());
    let mut scored: Vec<Candidate> = representatives
        .into_iter()
        .filter_map(|w| {
            let window = &lines[w.start..w.start + w.len];
            let text = collapsed_text(window.iter().map(|r| &hay[r.clone()]));
            let sim = round_similarity(similarity(&text, &needle_text));
            (sim >= MIN_FUZZY_SIMILARITY).then(|| Candidate {
                kind: CandidateKind::Fuzzy,
                note: None,
                start_line: w.start + 1,
                end_line: w.start + w.len,
                similarity: sim,
                byte_range: window[0].start..window[w.len - 1].end,
                strong: false,
                source: None,
            })
        })
        .collect();
    scored.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then(a.start_line.cmp(&b.start_line))
    });
    scored.truncate(want);
    scored
}
