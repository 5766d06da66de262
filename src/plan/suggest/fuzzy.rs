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
    let distance = levenshtein(
        &a_rest[..a_rest.len() - suffix],
        &b_rest[..b_rest.len() - suffix],
    );
    1.0 - distance as f64 / longest as f64
}

/// The Levenshtein distance of two char slices (the number strsim's `generic_levenshtein`
/// gives), by Myers' bit-parallel algorithm in blocks of 64 chars of the shorter slice:
/// O(⌈m / 64⌉ · n) word operations instead of m · n cells. A re-indented candidate shares no
/// long prefix with `old_string`, and scoring a few such windows of a few hundred chars cell by
/// cell was a millisecond of every miss.
pub(super) fn levenshtein(a: &[char], b: &[char]) -> usize {
    let (p, t) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let m = p.len();
    if m == 0 {
        return t.len();
    }
    let blocks = m.div_ceil(64);
    // Per distinct char of the pattern, the bit mask of its positions, one word per block.
    let mut slot: FastMap<char, usize> = FastMap::default();
    let mut peq: Vec<u64> = Vec::new();
    for (i, &c) in p.iter().enumerate() {
        let next = slot.len();
        let s = *slot.entry(c).or_insert(next);
        if s == next {
            peq.resize(peq.len() + blocks, 0);
        }
        peq[s * blocks + i / 64] |= 1 << (i % 64);
    }
    let none = vec![0u64; blocks];
    // Vertical deltas of the current column, +1 (pv) or -1 (mv) per pattern row: column 0 is
    // 0, 1, 2, ... so every delta starts at +1.
    let mut pv = vec![!0u64; blocks];
    let mut mv = vec![0u64; blocks];
    let last = 1u64 << ((m - 1) % 64);
    let mut score = m as i64;
    for c in t {
        let eqs = slot
            .get(c)
            .map_or(&none[..], |&s| &peq[s * blocks..(s + 1) * blocks]);
        // Row 0 grows by one per text char: the horizontal delta entering the first block.
        let mut h_in: i64 = 1;
        for w in 0..blocks {
            let high = if w + 1 == blocks { last } else { 1 << 63 };
            let (p_v, m_v) = (pv[w], mv[w]);
            let mut eq = eqs[w];
            let x_v = eq | m_v;
            if h_in < 0 {
                eq |= 1;
            }
            let x_h = ((eq & p_v).wrapping_add(p_v) ^ p_v) | eq;
            let mut p_h = m_v | !(x_h | p_v);
            let mut m_h = p_v & x_h;
            let h_out = if p_h & high != 0 {
                1
            } else if m_h & high != 0 {
                -1
            } else {
                0
            };
            p_h <<= 1;
            m_h <<= 1;
            if h_in < 0 {
                m_h |= 1;
            } else if h_in > 0 {
                p_h |= 1;
            }
            pv[w] = m_h | !(x_v | p_h);
            mv[w] = p_h & x_v;
            h_in = h_out;
        }
        score += h_in;
    }
    usize::try_from(score).unwrap_or(0)
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

/// The hash of the line's [`words`] joined by one space (0 for a line without words): two lines
/// hash alike exactly when they differ only in whitespace (modulo collisions).
///
/// It runs on every line of the file. Most lines already are their collapsed form once their
/// indentation and trailing whitespace are cut (words apart by single spaces, no tab or `\r`
/// between them): found with two vectorised scans, those are hashed in place, eight bytes at a
/// time. Only the others are collapsed into a buffer first. (Hashing word by word cost a
/// byte-serial scan and a tail mix per word: a fifth of a miss in a 10,000-line file.)
pub(super) fn collapsed_hash(line: &str) -> u64 {
    let is_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
    let bytes = line.as_bytes();
    let Some(start) = bytes.iter().position(|b| !is_ws(b)) else {
        return 0;
    };
    let end = bytes
        .iter()
        .rposition(|b| !is_ws(b))
        .map_or(start, |e| e + 1);
    let core = &bytes[start..end];
    if memchr::memchr2(b'\t', b'\r', core).is_none() && memchr::memmem::find(core, b"  ").is_none()
    {
        return hash_bytes(0, core);
    }
    let mut collapsed = Vec::with_capacity(core.len());
    for word in runs(core, |b| !is_ws(&b)) {
        if !collapsed.is_empty() {
            collapsed.push(b' ');
        }
        collapsed.extend_from_slice(word);
    }
    hash_bytes(0, &collapsed)
}

/// The maximal runs of bytes that `keep` accepts, in order.
fn runs(bytes: &[u8], keep: impl Fn(u8) -> bool) -> impl Iterator<Item = &[u8]> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !keep(bytes[i]) {
            i += 1;
        }
        let s = i;
        while i < bytes.len() && keep(bytes[i]) {
            i += 1;
        }
        (i > s).then(|| &bytes[s..i])
    })
}

/// Hashes of identifier-like runs; non-ASCII bytes count as word bytes so UTF-8 words stay whole.
fn for_each_token(line: &str, mut f: impl FnMut(u64)) {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    runs(line.as_bytes(), is_word).for_each(|t| f(hash_bytes(0, t)));
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
    /// One bit per value of a hash's top [`FILTER_BITS`] bits, set for the needle's hashes: most
    /// of a file's tokens are not the needle's, and this answers for them without a map lookup.
    filter: Vec<u64>,
}

const FILTER_BITS: u32 = 12;

fn filter_bit(h: u64) -> (usize, u64) {
    let b = h >> (64 - FILTER_BITS);
    ((b / 64) as usize, 1 << (b % 64))
}

impl Multiset {
    /// The needle slot of `h`, if the needle has it.
    fn slot(&self, h: u64) -> Option<u32> {
        let (word, bit) = filter_bit(h);
        if self.filter[word] & bit == 0 {
            return None;
        }
        self.slot_of.get(&h).copied()
    }

    fn new(hashes: impl Iterator<Item = u64>) -> Self {
        let mut set = Multiset {
            slot_of: FastMap::default(),
            need: Vec::new(),
            filter: vec![0; 1 << (FILTER_BITS - 6)],
        };
        for h in hashes {
            let (word, bit) = filter_bit(h);
            set.filter[word] |= bit;
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

/// What the sliding pass needs per file line: the needle slot of its hash for every line, and
/// the needle token slots of the lines that a window worth counting tokens for holds (tokenizing
/// every line of a large file was most of the rung's time).
struct FileIndex<'a> {
    hay: &'a str,
    lines: &'a [Range<usize>],
    line_hash: &'a [u64],
    /// Needle slot of the line's hash, or NO_SLOT.
    line_slot: Vec<u32>,
    /// Line i's needle token slots are `token_slots[a..b]` for `token_span[i] = (a, b)`, once
    /// tokenized (`a == u32::MAX` before).
    token_span: Vec<(u32, u32)>,
    token_slots: Vec<u32>,
}

const UNTOKENIZED: (u32, u32) = (u32::MAX, 0);

impl<'a> FileIndex<'a> {
    fn new(
        hay: &'a str,
        lines: &'a [Range<usize>],
        line_hash: &'a [u64],
        line_set: &Multiset,
    ) -> Self {
        FileIndex {
            hay,
            lines,
            line_hash,
            line_slot: line_hash
                .iter()
                .map(|&h| line_set.slot(h).unwrap_or(NO_SLOT))
                .collect(),
            token_span: vec![UNTOKENIZED; line_hash.len()],
            token_slots: Vec::new(),
        }
    }

    /// Adds line `i`'s tokens to (or removes them from) the token tally, tokenizing it first
    /// if needed. Only tokens the needle has can score, so the rest are not stored at all.
    fn update_tokens(&mut self, i: usize, add: bool, token_set: &Multiset, tokens: &mut Tally) {
        if self.token_span[i] == UNTOKENIZED {
            let a = self.token_slots.len();
            let slots = &mut self.token_slots;
            for_each_token(&self.hay[self.lines[i].clone()], |h| {
                slots.extend(token_set.slot(h))
            });
            // Needles and files are capped before the fuzzy rung, far below u32::MAX tokens.
            let to_u32 = |x: usize| u32::try_from(x).unwrap_or(u32::MAX - 1);
            self.token_span[i] = (to_u32(a), to_u32(self.token_slots.len()));
        }
        let (a, b) = self.token_span[i];
        for &s in &self.token_slots[a as usize..b as usize] {
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
///
/// Token hits only order windows of equal line hits, so they are counted only for windows
/// that can make the list: with at least `SHORTLIST_PER_LEN` eligible windows holding a
/// needle line, a window with fewer line hits than the `SHORTLIST_PER_LEN`-th most has that
/// many strictly better windows ahead of it whatever its tokens. The others are visited in
/// order with one token tally moved along (each line added and removed at most once per
/// length), so the list is the one sliding over every window gives.
fn shortlist(
    index: &mut FileIndex,
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
        let eligible = |start: usize| covered[start + len] == covered[start];
        // Line hits of every window, by sliding: a line has at most one slot.
        let mut line_hits: Vec<usize> = Vec::with_capacity(n + 1 - len);
        let mut line_tally = Tally::new(&line_set.need);
        for end in 0..n {
            if index.line_slot[end] != NO_SLOT {
                line_tally.update(index.line_slot[end], true);
            }
            if end >= len && index.line_slot[end - len] != NO_SLOT {
                line_tally.update(index.line_slot[end - len], false);
            }
            if end + 1 >= len {
                line_hits.push(line_tally.hits);
            }
        }
        let mut ranked: Vec<usize> = (0..line_hits.len())
            .filter(|&s| line_hits[s] > 0 && eligible(s))
            .map(|s| line_hits[s])
            .collect();
        let floor = if ranked.len() >= SHORTLIST_PER_LEN {
            let (_, nth, _) = ranked.select_nth_unstable_by(SHORTLIST_PER_LEN - 1, |a, b| b.cmp(a));
            *nth
        } else {
            0
        };

        let mut best: Vec<((usize, usize), usize)> = Vec::with_capacity(SHORTLIST_PER_LEN + 1);
        let mut token_tally = Tally::new(&token_set.need);
        // The lines the token tally holds: `held.start..held.end`.
        let mut held = 0..0;
        for (start, &hits) in line_hits.iter().enumerate() {
            if hits < floor || !eligible(start) {
                continue;
            }
            let end = start + len;
            if start >= held.end {
                for i in held.clone() {
                    index.update_tokens(i, false, token_set, &mut token_tally);
                }
                held = start..start;
            }
            for i in held.end..end {
                index.update_tokens(i, true, token_set, &mut token_tally);
            }
            for i in held.start..start {
                index.update_tokens(i, false, token_set, &mut token_tally);
            }
            held = start..end;
            let score = (hits, token_tally.hits);
            if score == (0, 0) {
                continue;
            }
            // A full list whose last window scores at least as well keeps it (the search below
            // would put this one past the end).
            if best.len() == SHORTLIST_PER_LEN && best[SHORTLIST_PER_LEN - 1].0 >= score {
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
    let mut index = FileIndex::new(hay, lines, line_hashes, &line_set);
    let mut shortlist = shortlist(&mut index, &line_set, &token_set, k, covered);

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random strings over a small alphabet (so edits are common), some
    /// longer than one and two 64-char blocks, some with multi-byte chars.
    fn strings() -> Vec<String> {
        let alphabet: Vec<char> = "ab c\n{}é→".chars().collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = vec![String::new()];
        for len in [1, 2, 5, 63, 64, 65, 100, 127, 128, 129, 200, 300] {
            for _ in 0..4 {
                let k = (next() % 4 + 2) as usize;
                out.push(
                    (0..len)
                        .map(|_| alphabet[(next() as usize) % k.min(alphabet.len())])
                        .collect(),
                );
            }
        }
        out
    }

    #[test]
    fn bit_parallel_levenshtein_equals_the_dynamic_programme() {
        let all = strings();
        for a in &all {
            for b in &all {
                let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                assert_eq!(
                    levenshtein(&ca, &cb),
                    strsim::generic_levenshtein(&ca, &cb),
                    "{a:?} / {b:?}"
                );
            }
        }
    }

    #[test]
    fn collapsed_hash_and_tokens_split_as_before() {
        let line = "  \tfoo  bar\r\tbaz_1(qux, \u{e9}t\u{e9})  ";
        let joined = words(line).collect::<Vec<_>>().join(" ");
        assert_eq!(collapsed_hash(line), hash_bytes(0, joined.as_bytes()));
        assert_eq!(collapsed_hash(&joined), hash_bytes(0, joined.as_bytes()));
        assert_eq!(collapsed_hash("a b"), collapsed_hash(" a\t b \r"));
        assert_eq!(collapsed_hash("a b"), collapsed_hash("a  b"));
        assert_eq!(collapsed_hash("    x = f(y)  "), collapsed_hash("x = f(y)"));
        assert_ne!(collapsed_hash("a b"), collapsed_hash("ab"));
        assert_ne!(collapsed_hash("a b c"), collapsed_hash("a bc"));
        assert_eq!(collapsed_hash(""), 0);
        assert_eq!(collapsed_hash(" \t\r "), 0);
        let mut got = Vec::new();
        for_each_token(line, |h| got.push(h));
        let want: Vec<u64> = ["foo", "bar", "baz_1", "qux", "\u{e9}t\u{e9}"]
            .iter()
            .map(|t| hash_bytes(0, t.as_bytes()))
            .collect();
        assert_eq!(got, want);
    }
}
