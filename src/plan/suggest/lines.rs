//! Lines and line keys: splitting needle and haystack into lines, the trimmed and
//! Unicode-folded keys that whitespace and Unicode matches compare, the word-at-a-time
//! hash shared with the fuzzy search, and the KMP search over interned keys that finds
//! every relaxed (whitespace or Unicode) window.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::ops::Range;

pub(super) struct Needle<'a> {
    /// The needle without its final '\n', i.e. exactly the text its lines cover.
    pub(super) body: &'a str,
    pub(super) lines: Vec<&'a str>,
    pub(super) trailing_newline: bool,
}

impl<'a> Needle<'a> {
    /// `None` for needles that cannot locate anything (empty or only blank lines).
    pub(super) fn parse(needle: &'a str) -> Option<Self> {
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
pub(super) fn line_ranges(text: &str) -> Vec<Range<usize>> {
    // memchr rather than `split('\n')`: this runs on every byte of the file, and the char
    // searcher behind `split` was a visible part of a miss's time.
    let mut ranges = Vec::with_capacity(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        ranges.push(start..end);
        start = end + 1;
    }
    if start < text.len() {
        ranges.push(start..text.len());
    }
    ranges
}

/// What every rung needs of the file, computed once per miss and handed down: the text, its
/// line ranges and (on first use) the collapsed hash of each line.
pub struct FileLines<'a> {
    pub(super) text: &'a str,
    pub(super) lines: Vec<Range<usize>>,
    hashes: std::cell::OnceCell<Vec<u64>>,
}

impl<'a> FileLines<'a> {
    pub fn new(text: &'a str) -> Self {
        FileLines {
            text,
            lines: line_ranges(text),
            hashes: std::cell::OnceCell::new(),
        }
    }

    /// `collapsed_hash` of each line, in order.
    pub(super) fn hashes(&self) -> &[u64] {
        self.hashes.get_or_init(|| {
            self.lines
                .iter()
                .map(|r| super::fuzzy::collapsed_hash(&self.text[r.clone()]))
                .collect()
        })
    }
}

/// Word-at-a-time multiplicative hash (the FxHash recipe). Line and token hashing touch
/// every byte of the file, and a byte-serial hash or SipHash dominated the run time; DoS
/// resistance buys nothing for a one-shot diagnostic.
const HASH_K: u64 = 0x517c_c1b7_2722_0a95;

fn mix(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(HASH_K)
}

pub(super) fn hash_bytes(mut h: u64, bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = mix(
            h,
            u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        );
    }
    // The length goes into the tail word so "a" and "a\0" cannot collide: the tail is the
    // length shifted left by the remaining bytes, then those bytes big-endian (what shifting
    // each in after the length gives, in one load instead of a loop).
    let rest = chunks.remainder();
    let mut word = [0u8; 8];
    word[8 - rest.len()..].copy_from_slice(rest);
    let len = bytes.len() as u64;
    let high = if rest.is_empty() {
        len
    } else {
        len << (8 * rest.len())
    };
    mix(h, high | u64::from_be_bytes(word))
}

#[derive(Default)]
pub(super) struct Fx(u64);

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

pub(super) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

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

pub(super) fn is_blank(s: &str) -> bool {
    trim_ws(s).is_empty()
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
/// A file key of `None` is one the caller knows no needle key equals.
fn match_starts<K: Eq + Hash>(needle: Vec<K>, file: impl Iterator<Item = Option<K>>) -> Vec<usize> {
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
        let id = key.and_then(|key| ids.get(&key).copied());
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
pub(super) fn relaxed_starts(
    hay: &str,
    lines: &[Range<usize>],
    needle: &Needle,
) -> (Vec<usize>, Vec<usize>) {
    let text = |r: &Range<usize>| &hay[r.clone()];
    // A file line whose trimmed length no needle line has cannot equal one: most lines are
    // ruled out by their length without hashing them.
    let mut lengths: Vec<bool> = Vec::new();
    for l in &needle.lines {
        let len = trim_ws(l).len();
        if lengths.len() <= len {
            lengths.resize(len + 1, false);
        }
        lengths[len] = true;
    }
    let ws = match_starts(
        needle.lines.iter().map(|l| trim_ws(l)).collect(),
        lines.iter().map(|r| {
            let t = trim_ws(text(r));
            lengths.get(t.len()).copied().unwrap_or(false).then_some(t)
        }),
    );
    // Every folded character is non-ASCII, so pure-ASCII inputs cannot add folded matches.
    if hay.is_ascii() && needle.body.is_ascii() {
        return (ws, Vec::new());
    }
    let folded = match_starts(
        needle.lines.iter().map(|l| unicode_key(l)).collect(),
        lines.iter().map(|r| Some(unicode_key(text(r)))),
    );
    let uni = folded
        .into_iter()
        .filter(|s| ws.binary_search(s).is_err())
        .collect();
    (ws, uni)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_word_is_the_length_then_the_last_bytes() {
        // The tail as it was computed byte by byte.
        let by_bytes = |mut h: u64, bytes: &[u8]| {
            let mut chunks = bytes.chunks_exact(8);
            for c in &mut chunks {
                h = mix(h, u64::from_le_bytes(c.try_into().unwrap()));
            }
            let tail = chunks
                .remainder()
                .iter()
                .fold(bytes.len() as u64, |acc, &b| (acc << 8) | u64::from(b));
            mix(h, tail)
        };
        let text: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        for len in 0..text.len() {
            for seed in [0, 0x1234_5678_9abc_def0] {
                assert_eq!(hash_bytes(seed, &text[..len]), by_bytes(seed, &text[..len]));
            }
        }
    }

    #[test]
    fn line_ranges_match_editors() {
        let ranges = |t: &str| line_ranges(t);
        assert_eq!(ranges(""), Vec::<Range<usize>>::new());
        assert_eq!(ranges("a"), vec![0..1]);
        assert_eq!(ranges("a\n"), vec![0..1]);
        assert_eq!(ranges("\n"), vec![0..0]);
        assert_eq!(ranges("a\n\nb"), vec![0..1, 2..2, 3..4]);
        assert_eq!(ranges("a\nb\n\n"), vec![0..1, 2..3, 4..4]);
    }
}
