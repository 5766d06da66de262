//! Near-miss search for an `old_string` that the exact substring search did not find.
//!
//! This module owns two questions, both asked only after an exact search failed:
//! [`diagnose`] ("where did the user probably mean?") and [`relaxed_match`] ("is there
//! exactly one place that differs only in whitespace or typography, and can `new_string`
//! be re-indented to fit it?", used by `--lenient`).
//!
//! # Algorithm
//!
//! Everything works on whole lines. The needle is split on `'\n'`; a final `'\n'` ends the
//! last line rather than starting an empty one. The haystack is split the same way, so a
//! file's trailing newline does not create a phantom last line.
//!
//! * **Whitespace / Unicode windows**: each line is reduced to a key (trimmed of spaces,
//!   tabs and `'\r'`; for Unicode also typographic dashes, quotes, odd spaces and the
//!   ellipsis folded to ASCII). Keys are interned to integers and the needle's key sequence
//!   is found with KMP, so even a highly repetitive file costs O(n + k), not O(n * k).
//!   Folding only adds equalities, so Unicode windows are the folded matches minus the
//!   whitespace ones.
//! * **Fuzzy windows**: Levenshtein on every window is far too slow on large files, so a
//!   linear shortlist comes first. Each line is hashed after trimming and collapsing inner
//!   whitespace; a window's primary score is how many of its line hashes are in the
//!   needle's hash multiset, kept incrementally while sliding. A secondary score counts
//!   shared identifier-like tokens the same way, so a one-line needle with a typo (where no
//!   line hash can match) still gets a meaningful shortlist. The best 10 windows per length
//!   (k-1, k, k+1) survive. Within each overlapping group of those, the window with the
//!   fewest whole-line edits (strsim Levenshtein over line hashes) represents the group,
//!   and only representatives get the char-level strsim score on their collapsed text.
//!
//! # Invariants
//!
//! * Nothing here panics on any input; byte ranges start and end at line boundaries, which
//!   are char boundaries because `'\n'` is ASCII.
//! * Reported similarity is rounded to 2 decimals and capped at 0.99: exact matches never
//!   reach this module, so 1.0 would claim more than is true.
//! * `diagnose` never returns overlapping candidates, and whitespace and Unicode candidates
//!   precede fuzzy ones whatever their scores; fuzzy windows touching any whitespace or
//!   Unicode match are discarded as worse descriptions of it.
//! * A needle with no non-blank line locates nothing (it would "match" every blank run).
//! * A needle ending in `'\n'` makes [`relaxed_match`] replace the matched last line's
//!   `'\n'` too. If that line is the file's unterminated last line, the range ends at EOF
//!   and one trailing `'\n'` is dropped from the replacement, preserving the file's
//!   "no newline at end of file" state.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::ops::Range;

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
    Fuzzy,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub kind: CandidateKind,
    /// 1-based inclusive line numbers in the haystack.
    pub start_line: usize,
    pub end_line: usize,
    /// 0.0..=1.0, rounded to 2 decimals.
    pub similarity: f64,
    /// Byte range of the candidate's whole lines in the haystack (from the start of
    /// start_line to the end of end_line, excluding its '\n').
    pub byte_range: Range<usize>,
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

struct Needle<'a> {
    /// The needle without its final '\n', i.e. exactly the text its lines cover.
    body: &'a str,
    lines: Vec<&'a str>,
    trailing_newline: bool,
}

impl<'a> Needle<'a> {
    /// `None` for needles that cannot locate anything (empty or only blank lines).
    fn parse(needle: &'a str) -> Option<Self> {
        let (body, trailing_newline) = match needle.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (needle, false),
        };
        let lines: Vec<&str> = body.split('\n').collect();
        if lines.iter().all(|l| is_blank(l)) {
            return None;
        }
        Some(Needle {
            body,
            lines,
            trailing_newline,
        })
    }
}

/// Byte ranges of the haystack's lines, '\n' excluded. A final '\n' ends the last line
/// rather than opening an empty one, so line numbers agree with editors.
fn line_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for piece in text.split('\n') {
        ranges.push(start..start + piece.len());
        start += piece.len() + 1;
    }
    if ranges
        .last()
        .is_some_and(|r| r.is_empty() && r.start == text.len())
    {
        ranges.pop();
    }
    ranges
}

/// Word-at-a-time multiplicative hash (the FxHash recipe). Line and token hashing touch
/// every byte of the file, and a byte-serial hash or SipHash dominated the run time; DoS
/// resistance buys nothing for a one-shot diagnostic.
const HASH_K: u64 = 0x517c_c1b7_2722_0a95;

fn mix(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(HASH_K)
}

fn hash_bytes(mut h: u64, bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = mix(
            h,
            u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        );
    }
    // The length goes into the tail word so "a" and "a\0" cannot collide.
    let tail = chunks
        .remainder()
        .iter()
        .fold(bytes.len() as u64, |acc, &b| (acc << 8) | u64::from(b));
    mix(h, tail)
}

#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        // A multiply leaves the low bits (the table index) the weakest; rotate high ones in.
        self.0.rotate_left(26)
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash_bytes(self.0, bytes);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = mix(self.0, n);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

fn trim_ws(s: &str) -> &str {
    // Byte-wise because the trimmed set is ASCII: cut points next to ASCII bytes are
    // always char boundaries, and this runs on every line of the file more than once.
    let is_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
    let bytes = s.as_bytes();
    let start = bytes.iter().position(|b| !is_ws(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !is_ws(b))
        .map_or(start, |i| i + 1);
    s.get(start..end).unwrap_or_default()
}

fn is_blank(s: &str) -> bool {
    trim_ws(s).is_empty()
}

/// Leading indentation; '\r' is excluded because it is never intended indentation.
fn indent(s: &str) -> &str {
    &s[..s.len() - s.trim_start_matches([' ', '\t']).len()]
}

fn fold_char(c: char) -> Option<&'static str> {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => Some("-"),
        '\u{2018}'..='\u{201B}' => Some("'"),
        '\u{201C}'..='\u{201F}' => Some("\""),
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => Some(" "),
        '\u{2026}' => Some("..."),
        _ => None,
    }
}

/// Folded-and-trimmed key; borrows unless a character actually needs folding, so plain
/// ASCII files allocate nothing.
fn unicode_key(s: &str) -> Cow<'_, str> {
    if s.is_ascii() || !s.chars().any(|c| fold_char(c).is_some()) {
        return Cow::Borrowed(trim_ws(s));
    }
    let mut folded = String::with_capacity(s.len());
    for c in s.chars() {
        match fold_char(c) {
            Some(rep) => folded.push_str(rep),
            None => folded.push(c),
        }
    }
    Cow::Owned(trim_ws(&folded).to_owned())
}

/// 0-based start lines of every run of consecutive file keys equal to the needle keys
/// (overlapping runs included). Keys are interned so KMP compares integers.
fn match_starts<K: Eq + Hash>(needle: Vec<K>, file: impl Iterator<Item = K>) -> Vec<usize> {
    let mut ids: FastMap<K, usize> = FastMap::default();
    let pattern: Vec<usize> = needle
        .into_iter()
        .map(|key| {
            let next = ids.len();
            *ids.entry(key).or_insert(next)
        })
        .collect();
    let k = pattern.len();
    if k == 0 {
        return Vec::new();
    }
    let mut fail = vec![0usize; k];
    let mut len = 0;
    for i in 1..k {
        while len > 0 && pattern[i] != pattern[len] {
            len = fail[len - 1];
        }
        if pattern[i] == pattern[len] {
            len += 1;
        }
        fail[i] = len;
    }
    let mut starts = Vec::new();
    let mut matched = 0;
    for (i, key) in file.enumerate() {
        // A key absent from the needle can never extend a match.
        let id = ids.get(&key).copied();
        while matched > 0 && Some(pattern[matched]) != id {
            matched = fail[matched - 1];
        }
        if Some(pattern[matched]) == id {
            matched += 1;
        }
        if matched == k {
            starts.push(i + 1 - k);
            matched = fail[k - 1];
        }
    }
    starts
}

/// (whitespace starts, unicode-only starts), both ascending.
fn relaxed_starts(hay: &str, lines: &[Range<usize>], needle: &Needle) -> (Vec<usize>, Vec<usize>) {
    let text = |r: &Range<usize>| &hay[r.clone()];
    let ws = match_starts(
        needle.lines.iter().map(|l| trim_ws(l)).collect(),
        lines.iter().map(|r| trim_ws(text(r))),
    );
    // Every folded character is non-ASCII, so pure-ASCII inputs cannot add folded matches.
    if hay.is_ascii() && needle.body.is_ascii() {
        return (ws, Vec::new());
    }
    let folded = match_starts(
        needle.lines.iter().map(|l| unicode_key(l)).collect(),
        lines.iter().map(|r| unicode_key(text(r))),
    );
    let uni = folded
        .into_iter()
        .filter(|s| ws.binary_search(s).is_err())
        .collect();
    (ws, uni)
}

fn round_similarity(x: f64) -> f64 {
    ((x * 100.0).round() / 100.0).clamp(0.0, MAX_INEXACT_SIMILARITY)
}

/// strsim's normalized Levenshtein, made affordable: Levenshtein distance is unchanged by
/// removing a common prefix and suffix, and near-misses share most of their text, so the
/// quadratic core usually runs on a few dozen chars. Chars are decoded once into slices
/// rather than re-decoded in strsim's inner loop.
fn similarity(a: &str, b: &str) -> f64 {
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

/// Up to `max` candidates, best first: every Whitespace candidate, then Unicode, then Fuzzy
/// ones to fill; no two overlapping.
pub fn diagnose(haystack: &str, needle: &str, max: usize) -> Vec<Candidate> {
    let Some(needle) = Needle::parse(needle) else {
        return Vec::new();
    };
    if max == 0 {
        return Vec::new();
    }
    let lines = line_ranges(haystack);
    let k = needle.lines.len();
    let (ws, uni) = relaxed_starts(haystack, &lines, &needle);

    let mut out: Vec<Candidate> = Vec::new();
    for (kind, starts) in [
        (CandidateKind::Whitespace, &ws),
        (CandidateKind::Unicode, &uni),
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
                start_line: first,
                end_line: last,
                similarity: round_similarity(sim),
                byte_range,
            });
        }
        group.sort_by(|a, b| {
            b.similarity
                .total_cmp(&a.similarity)
                .then(a.start_line.cmp(&b.start_line))
        });
        out.extend(group);
    }

    if out.len() < max
        && needle.body.len() <= MAX_FUZZY_NEEDLE
        && haystack.len() <= MAX_FUZZY_HAYSTACK
    {
        // Any fuzzy window touching an exact-modulo-whitespace match is just a worse
        // description of it, so all of them (not only the reported ones) block.
        let covered = coverage_prefix(lines.len(), ws.iter().chain(&uni).map(|&s| s..s + k));
        let fuzzy = fuzzy_candidates(haystack, &lines, &needle, &covered, max - out.len());
        out.extend(fuzzy);
    }
    out
}

/// `prefix[i]` = number of covered lines before line i, so "does window a..b touch a
/// covered line" is one subtraction instead of a scan over all spans.
fn coverage_prefix(n: usize, spans: impl Iterator<Item = Range<usize>>) -> Vec<u32> {
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

fn collapsed_hash(line: &str) -> u64 {
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
    fn new(hay: &str, lines: &[Range<usize>], line_set: &Multiset, token_set: &Multiset) -> Self {
        let mut index = FileIndex {
            line_hash: Vec::with_capacity(lines.len()),
            line_slot: Vec::with_capacity(lines.len()),
            token_start: Vec::with_capacity(lines.len() + 1),
            token_slots: Vec::new(),
        };
        for r in lines {
            let text = &hay[r.clone()];
            let hash = collapsed_hash(text);
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

fn fuzzy_candidates(
    hay: &str,
    lines: &[Range<usize>],
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
    let index = FileIndex::new(hay, lines, &line_set, &token_set);
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
                start_line: w.start + 1,
                end_line: w.start + w.len,
                similarity: sim,
                byte_range: window[0].start..window[w.len - 1].end,
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

/// `lines`: optional 1-based inclusive line window; a match must lie entirely inside it.
pub fn relaxed_match(
    haystack: &str,
    needle: &str,
    new: &str,
    lines: Option<(usize, usize)>,
) -> RelaxedOutcome {
    let Some(needle) = Needle::parse(needle) else {
        return RelaxedOutcome::None;
    };
    let ranges = line_ranges(haystack);
    let k = needle.lines.len();
    let (ws, uni) = relaxed_starts(haystack, &ranges, &needle);
    let inside = |s: &usize| lines.is_none_or(|(lo, hi)| s + 1 >= lo && s + k <= hi);
    let mut hits: Vec<(usize, CandidateKind)> = ws
        .iter()
        .filter(|s| inside(s))
        .map(|&s| (s, CandidateKind::Whitespace))
        .chain(
            uni.iter()
                .filter(|s| inside(s))
                .map(|&s| (s, CandidateKind::Unicode)),
        )
        .collect();
    hits.sort_by_key(|&(s, _)| s);
    let (start, kind) = match hits.as_slice() {
        [] => return RelaxedOutcome::None,
        [only] => *only,
        many => {
            return RelaxedOutcome::Ambiguous(many.iter().map(|&(s, _)| (s + 1, s + k)).collect());
        }
    };
    let (start_line, end_line) = (start + 1, start + k);
    let matched = &ranges[start..start + k];
    let pairs: Vec<(&str, &str)> = needle
        .lines
        .iter()
        .zip(matched)
        .filter(|(n, _)| !is_blank(n))
        .map(|(n, r)| (indent(n), indent(&haystack[r.clone()])))
        .collect();
    let new_lines: Vec<&str> = new.split('\n').collect();
    let Some(mut replacement) = reindent_prefix(&pairs, &new_lines)
        .or_else(|| reindent_levels(&pairs, &new_lines, haystack.len().saturating_add(new.len())))
    else {
        return RelaxedOutcome::NotReindentable {
            start_line,
            end_line,
        };
    };
    let mut end = matched[k - 1].end;
    if needle.trailing_newline {
        if haystack.as_bytes().get(end) == Some(&b'\n') {
            end += 1;
        } else if replacement.ends_with('\n') {
            // The needle's final '\n' matched the end of a file that has none; dropping the
            // replacement's one keeps the file's "no newline at end" state instead of
            // silently adding one.
            replacement.pop();
        }
    }
    RelaxedOutcome::Unique(Relaxed {
        kind,
        start_line,
        end_line,
        byte_range: matched[0].start..end,
        replacement,
    })
}

/// Re-indents each non-blank line of `new` with `f`; blank lines are kept verbatim because
/// they carry no indentation relation and the caller asked for trailing whitespace as given.
fn rebuild(new_lines: &[&str], mut f: impl FnMut(&str) -> Option<String>) -> Option<String> {
    let mut out = Vec::with_capacity(new_lines.len());
    for line in new_lines {
        out.push(if is_blank(line) {
            (*line).to_owned()
        } else {
            f(line)?
        });
    }
    Some(out.join("\n"))
}

/// Method A: needle_indent = S + r and file_indent = D + r for one S, D on every line.
/// The shortest working S is chosen: if a longer S also works, it yields identical output
/// on the lines it accepts, while the shorter one accepts more lines of `new`.
fn reindent_prefix(pairs: &[(&str, &str)], new_lines: &[&str]) -> Option<String> {
    let (first_needle, first_file) = pairs.first()?;
    let common = pairs.iter().fold(first_needle.len(), |acc, (n, _)| {
        acc.min(
            n.bytes()
                .zip(first_needle.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        )
    });
    let (from, to) = (0..=common).find_map(|s_len| {
        let rest = &first_needle[s_len..];
        let to = first_file.strip_suffix(rest)?;
        let fits = pairs
            .iter()
            .all(|(n, f)| f.strip_suffix(&n[s_len..]) == Some(to));
        fits.then(|| (&first_needle[..s_len], to))
    })?;
    rebuild(new_lines, |line| {
        line.strip_prefix(from).map(|rest| format!("{to}{rest}"))
    })
}

#[derive(Clone, Copy)]
enum Unit {
    Tabs,
    Spaces(usize),
}

/// One side's indentation unit: all tabs, or all spaces with the gcd width. Mixed sides
/// have no unit, because a level count would then depend on an unknown tab width.
fn unit_of<'a>(indents: impl Iterator<Item = &'a str>) -> Option<Unit> {
    let (mut tabs, mut width) = (false, 0usize);
    for ind in indents.filter(|i| !i.is_empty()) {
        if ind.bytes().all(|b| b == b'\t') {
            tabs = true;
        } else if ind.bytes().all(|b| b == b' ') {
            width = gcd(width, ind.len());
        } else {
            return None;
        }
    }
    match (tabs, width) {
        (true, 0) => Some(Unit::Tabs),
        (true, _) => None,
        (false, 0) => Some(Unit::Spaces(4)),
        (false, w) => Some(Unit::Spaces(w)),
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn level(ind: &str, unit: Unit) -> Option<usize> {
    match unit {
        _ if ind.is_empty() => Some(0),
        Unit::Tabs => ind.bytes().all(|b| b == b'\t').then_some(ind.len()),
        Unit::Spaces(w) => {
            (ind.bytes().all(|b| b == b' ') && ind.len().is_multiple_of(w)).then_some(ind.len() / w)
        }
    }
}

/// Method B: both sides measured in levels of their own unit, related by one constant
/// offset; covers tabs-vs-spaces, which no prefix swap can express.
fn reindent_levels(pairs: &[(&str, &str)], new_lines: &[&str], limit: usize) -> Option<String> {
    let needle_unit = unit_of(pairs.iter().map(|p| p.0))?;
    let file_unit = unit_of(pairs.iter().map(|p| p.1))?;
    let mut offset = None;
    for (n, f) in pairs {
        let delta = level(f, file_unit)? as i64 - level(n, needle_unit)? as i64;
        if *offset.get_or_insert(delta) != delta {
            return None;
        }
    }
    let offset = offset?;
    rebuild(new_lines, |line| {
        let ind = indent(line);
        let target = usize::try_from(level(ind, needle_unit)? as i64 + offset).ok()?;
        let prefix = match file_unit {
            Unit::Tabs => "\t".repeat(target),
            // An indent wider than both inputs together cannot be what anyone meant, and
            // must fail the method rather than overflow or exhaust memory.
            Unit::Spaces(w) => " ".repeat(target.checked_mul(w).filter(|&n| n <= limit)?),
        };
        Some(format!("{prefix}{}", &line[ind.len()..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unique(outcome: RelaxedOutcome) -> Relaxed {
        match outcome {
            RelaxedOutcome::Unique(r) => r,
            other => panic!("expected Unique, got {other:?}"),
        }
    }

    fn apply(hay: &str, r: &Relaxed) -> String {
        format!(
            "{}{}{}",
            &hay[..r.byte_range.start],
            r.replacement,
            &hay[r.byte_range.end..]
        )
    }

    /// Checks every invariant callers rely on, whatever the input.
    fn assert_well_formed(hay: &str, found: &[Candidate], max: usize) {
        assert!(found.len() <= max);
        for (i, c) in found.iter().enumerate() {
            assert!(
                hay.get(c.byte_range.clone()).is_some(),
                "{c:?} not on char boundaries"
            );
            assert!((0.0..=1.0).contains(&c.similarity));
            assert!(c.start_line >= 1 && c.start_line <= c.end_line);
            for d in &found[i + 1..] {
                assert!(
                    c.end_line < d.start_line || d.end_line < c.start_line,
                    "{c:?} overlaps {d:?}"
                );
                let rank = |k| {
                    [
                        CandidateKind::Whitespace,
                        CandidateKind::Unicode,
                        CandidateKind::Fuzzy,
                    ]
                    .iter()
                    .position(|x| *x == k)
                };
                assert!(rank(c.kind) <= rank(d.kind), "kinds out of order");
            }
        }
    }

    #[test]
    fn shifted_indentation_is_a_whitespace_candidate() {
        let hay =
            "fn main() {\n    let a = 1;\n    if a > 0 {\n        println!(\"big\");\n    }\n}\n";
        let needle = "if a > 0 {\n    println!(\"big\");\n}";
        let found = diagnose(hay, needle, 3);
        assert_eq!(found[0].kind, CandidateKind::Whitespace);
        assert_eq!((found[0].start_line, found[0].end_line), (3, 5));
        assert_eq!(
            &hay[found[0].byte_range.clone()],
            "    if a > 0 {\n        println!(\"big\");\n    }"
        );
        assert!(found[0].similarity > 0.5 && found[0].similarity < 1.0);
        assert_well_formed(hay, &found, 3);
    }

    #[test]
    fn trailing_spaces_are_whitespace_and_relaxed() {
        let hay = "a = 1;   \nb = 2;\t\nc = 3;\n";
        let found = diagnose(hay, "a = 1;\nb = 2;", 3);
        assert_eq!(
            (found[0].kind, found[0].start_line, found[0].end_line),
            (CandidateKind::Whitespace, 1, 2)
        );
        let r = unique(relaxed_match(
            hay,
            "a = 1;\nb = 2;",
            "a = 10;\nb = 20;",
            None,
        ));
        assert_eq!(apply(hay, &r), "a = 10;\nb = 20;\nc = 3;\n");
    }

    #[test]
    fn tabs_versus_spaces_reindent_by_levels() {
        let hay = "impl X {\n\tfn f() {\n\t\told();\n\t}\n}\n";
        let needle = "    fn f() {\n        old();\n    }\n";
        let new = "    fn f() {\n        old();\n\n        extra();\n    }\n";
        let r = unique(relaxed_match(hay, needle, new, None));
        assert_eq!(
            (r.kind, r.start_line, r.end_line),
            (CandidateKind::Whitespace, 2, 4)
        );
        assert_eq!(
            r.replacement,
            "\tfn f() {\n\t\told();\n\n\t\textra();\n\t}\n"
        );
        // The needle ended with '\n', so the range swallows line 4's '\n' too.
        assert_eq!(
            apply(hay, &r),
            "impl X {\n\tfn f() {\n\t\told();\n\n\t\textra();\n\t}\n}\n"
        );
    }

    #[test]
    fn uniform_shift_swaps_the_indent_prefix() {
        let hay = "mod m {\n        if x {\n            y();\n        }\n}";
        let needle = "if x {\n    y();\n}";
        let new = "if x {\n    y();\n  \n    z();   \n}";
        let r = unique(relaxed_match(hay, needle, new, None));
        // Blank lines and trailing whitespace of `new` are kept as given.
        assert_eq!(
            r.replacement,
            "        if x {\n            y();\n  \n            z();   \n        }"
        );
        assert_eq!(
            &hay[r.byte_range.clone()],
            "        if x {\n            y();\n        }"
        );
    }

    #[test]
    fn typographic_punctuation_is_a_unicode_candidate() {
        let hay = "intro\n  let s = \u{201C}hello\u{201D} \u{2013} it\u{2019}s\u{2026}\nend\n";
        let needle = "let s = \"hello\" - it's...";
        let found = diagnose(hay, needle, 3);
        assert_eq!(
            (found[0].kind, found[0].start_line),
            (CandidateKind::Unicode, 2)
        );
        let r = unique(relaxed_match(hay, needle, "let s = \"bye\";", None));
        assert_eq!(
            (r.kind, r.replacement.as_str()),
            (CandidateKind::Unicode, "  let s = \"bye\";")
        );
    }

    fn generated(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("    let value_{i} = compute({i}, \"{i}\");\n"))
            .collect()
    }

    #[test]
    fn fuzzy_finds_drifted_window_in_ten_thousand_lines() {
        let hay = generated(10_000);
        let needle: String = (5000..5020)
            .map(|i| match i {
                5010 => format!("        let value_{i} = compute({i}, \"changed\");\n"),
                _ => format!("        let value_{i} = compute({i}, \"{i}\");\n"),
            })
            .collect();
        let found = diagnose(&hay, &needle, 3);
        assert_well_formed(&hay, &found, 3);
        let top = &found[0];
        assert_eq!(
            (top.kind, top.start_line, top.end_line),
            (CandidateKind::Fuzzy, 5001, 5020)
        );
        let ranges = line_ranges(&hay);
        assert_eq!(top.byte_range, ranges[5000].start..ranges[5019].end);
        assert!(top.similarity >= 0.9);
    }

    #[test]
    fn one_line_typo_is_found_through_tokens() {
        let hay = generated(2000);
        let found = diagnose(&hay, "let value_1234 = compute(1234, \"123\");", 1);
        assert_eq!(
            (found[0].kind, found[0].start_line),
            (CandidateKind::Fuzzy, 1235)
        );
    }

    #[test]
    fn several_relaxed_matches_are_ambiguous_until_a_window_picks_one() {
        let hay = "  x = 1;\n  y = 2;\nother\n\tx = 1;\n\ty = 2;\n";
        let needle = "x = 1;\ny = 2;";
        assert_eq!(
            relaxed_match(hay, needle, "z", None),
            RelaxedOutcome::Ambiguous(vec![(1, 2), (4, 5)])
        );
        let first = unique(relaxed_match(hay, needle, "x = 3;\ny = 4;", Some((1, 3))));
        assert_eq!(
            (first.start_line, first.replacement.as_str()),
            (1, "  x = 3;\n  y = 4;")
        );
        // A match straddling the window's edge does not count.
        let second = unique(relaxed_match(hay, needle, "x = 3;\ny = 4;", Some((2, 5))));
        assert_eq!(
            (second.start_line, second.replacement.as_str()),
            (4, "\tx = 3;\n\ty = 4;")
        );
        assert_eq!(
            relaxed_match(hay, needle, "z", Some((2, 4))),
            RelaxedOutcome::None
        );
    }

    #[test]
    fn nonuniform_indentation_is_not_reindented() {
        // Needle 0 -> 2 spaces, file 4 -> 1: neither a prefix swap nor a level offset.
        let hay = "    a\n b\n";
        let outcome = relaxed_match(hay, "a\n  b", "a\n  c", None);
        assert_eq!(
            outcome,
            RelaxedOutcome::NotReindentable {
                start_line: 1,
                end_line: 2
            }
        );
        // Levels fit, but a `new` line at a fractional level cannot be rendered in tabs.
        let outcome = relaxed_match("\tp\n\t\tq\n", "  p\n    q", "  p\n     r", None);
        assert_eq!(
            outcome,
            RelaxedOutcome::NotReindentable {
                start_line: 1,
                end_line: 2
            }
        );
    }

    #[test]
    fn trailing_newline_of_needle_extends_range_or_mirrors_missing_eol() {
        let r = unique(relaxed_match("foo\nbar", "  foo\n", "  baz\n", None));
        assert_eq!(
            (r.byte_range.clone(), r.replacement.as_str()),
            (0..4, "baz\n")
        );
        // The file's last line has no '\n': keep it that way.
        let hay = "x\nfoo";
        let r = unique(relaxed_match(hay, "  foo\n", "  baz\n", None));
        assert_eq!(apply(hay, &r), "x\nbaz");
    }

    #[test]
    fn candidates_never_overlap() {
        let hay = " x\n x\n x\n x\n x\n";
        let found = diagnose(hay, "x\nx", 5);
        assert_eq!(
            found.iter().map(|c| c.start_line).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert!(
            matches!(relaxed_match(hay, "x\nx", "y", None), RelaxedOutcome::Ambiguous(v) if v.len() == 4)
        );
        let repetitive: String = (0..60).map(|i| format!("  step_{}();\n", i % 3)).collect();
        let found = diagnose(&repetitive, "step_0();\nstep_1();\nstep_9();", 10);
        assert!(found.iter().any(|c| c.kind == CandidateKind::Fuzzy));
        assert_well_formed(&repetitive, &found, 10);
    }

    #[test]
    fn multibyte_text_keeps_char_boundaries() {
        let hay = "// 日本語のコメント\n    naïve → café 😀 \u{201C}q\u{201D}\n    ünïcödé\u{00A0}line ✓\n";
        let found = diagnose(hay, "naïve → café 😀 \"q\"\nünïcödé line ✓", 3);
        assert_eq!(
            (found[0].kind, found[0].start_line, found[0].end_line),
            (CandidateKind::Unicode, 2, 3)
        );
        let fuzzy = diagnose(hay, "naïve → cafe 😀 q\nünïcödé lines ✓", 3);
        assert_eq!(fuzzy[0].kind, CandidateKind::Fuzzy);
        assert_well_formed(hay, &fuzzy, 3);
    }

    #[test]
    fn degenerate_inputs_yield_nothing() {
        assert!(diagnose("", "x", 3).is_empty());
        assert!(diagnose("abc\n", "", 3).is_empty());
        assert!(diagnose("a\n\n\nb\n", "\n\n", 3).is_empty());
        assert!(diagnose("  a\n", "a", 0).is_empty());
        assert!(diagnose("\n", "  \t\n", 3).is_empty());
        assert_eq!(relaxed_match("", "x", "y", None), RelaxedOutcome::None);
        assert_eq!(
            relaxed_match("a\n\n", "\n", "y", None),
            RelaxedOutcome::None
        );
        assert_eq!(
            relaxed_match("  a\n", "a", "b", Some((5, 1))),
            RelaxedOutcome::None
        );
    }

    #[test]
    fn needle_longer_than_file() {
        let hay = "alpha();\nbeta();\n";
        let found = diagnose(hay, "alpha();\nbeta();\ngamma();\ndelta();\nepsilon();", 3);
        assert_well_formed(hay, &found, 3);
        assert!(found.iter().all(|c| c.end_line <= 2));
        assert_eq!(
            relaxed_match(hay, "alpha();\nbeta();\ngamma();", "x", None),
            RelaxedOutcome::None
        );
    }

    #[test]
    fn arbitrary_inputs_never_panic() {
        const ALPHABET: [&str; 14] = [
            "a", "b", "x();", " ", "\t", "\n", "\n", "\r", "é", "\u{201C}", "\u{2014}", "\u{00A0}",
            "😀", "…",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |bound: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % bound as u64) as usize
        };
        for _ in 0..1500 {
            let mut text = |max_len: usize| -> String {
                let len = next(max_len);
                (0..len).map(|_| ALPHABET[next(ALPHABET.len())]).collect()
            };
            let (hay, needle, new) = (text(60), text(12), text(12));
            let max = next(5);
            assert_well_formed(&hay, &diagnose(&hay, &needle, max), max);
            let window = (next(2) == 0).then(|| (next(8), next(12)));
            if let RelaxedOutcome::Unique(r) = relaxed_match(&hay, &needle, &new, window) {
                assert!(hay.get(r.byte_range.clone()).is_some());
            }
        }
    }
}
