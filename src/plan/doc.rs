//! A text file held for editing, with its bytes preserved exactly.
//!
//! Matching works on one view of the file: UTF-8 text with every `\r\n` folded to `\n` and a leading
//! BOM set aside. The folded endings are remembered one flag per `\n`, so that encoding the document
//! again gives back the original bytes, and a replacement takes the line endings of the text it
//! replaces. Invariants:
//! - `crlf.len()` equals the number of `\n` in `text`;
//! - `decode(b)?.encode() == b` for every text file `b` (tested below);
//! - a lone `\r` (not before `\n`) is ordinary content and is never touched.
//!
//! That is how a CRLF file stays CRLF when `old_string`/`new_string` came with LF, and how a mixed
//! file keeps each untouched line's ending (rewritten line endings are the failure most reported
//! against other editing tools, e.g. claude-code #164, codex #4003).

use std::ops::Range;

use super::super::patch::LineWindow;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextDoc {
    bom: bool,
    text: String,
    /// One flag per `\n` in `text`: was it `\r\n` on disk?
    crlf: Vec<bool>,
}

/// Why a file cannot be edited as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    Binary,
    Utf16,
    NotUtf8 { line: usize, column: usize },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Binary => f.write_str(
                "is a binary file (it contains NUL bytes); patchgate edits text files only",
            ),
            DecodeError::Utf16 => f.write_str(
                "is UTF-16 encoded; patchgate edits UTF-8 text only (convert it, e.g. with iconv)",
            ),
            DecodeError::NotUtf8 { line, column } => write!(
                f,
                "is not valid UTF-8 (first invalid byte at line {line}, column {column}); patchgate edits UTF-8 text only"
            ),
        }
    }
}

/// Folds `\r\n` to `\n`: how `old_string`/`new_string` are compared with a document.
pub fn fold_eol(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains("\r\n") {
        std::borrow::Cow::Owned(s.replace("\r\n", "\n"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

impl TextDoc {
    pub fn decode(bytes: &[u8]) -> Result<TextDoc, DecodeError> {
        if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
            return Err(DecodeError::Utf16);
        }
        if bytes.contains(&0) {
            return Err(DecodeError::Binary);
        }
        let (bom, body) = match bytes.strip_prefix(b"\xef\xbb\xbf") {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        let raw = std::str::from_utf8(body).map_err(|e| {
            let good = &body[..e.valid_up_to()];
            let line = good.iter().filter(|b| **b == b'\n').count() + 1;
            let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
            DecodeError::NotUtf8 { line, column }
        })?;
        // The common case, a file without a single CR, is a copy and a SIMD count.
        if memchr::memchr(b'\r', raw.as_bytes()).is_none() {
            return Ok(TextDoc {
                bom,
                text: raw.to_string(),
                crlf: vec![false; memchr_count(raw.as_bytes())],
            });
        }
        let mut text = String::with_capacity(raw.len());
        let mut crlf = Vec::new();
        let mut rest = raw;
        while let Some(i) = rest.find('\n') {
            let is_crlf = i > 0 && rest.as_bytes()[i - 1] == b'\r';
            text.push_str(&rest[..if is_crlf { i - 1 } else { i }]);
            text.push('\n');
            crlf.push(is_crlf);
            rest = &rest[i + 1..];
        }
        text.push_str(rest);
        Ok(TextDoc { bom, text, crlf })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(self.text.len() + self.crlf.iter().filter(|c| **c).count() + 3);
        if self.bom {
            out.extend_from_slice(b"\xef\xbb\xbf");
        }
        // Without CRLF endings the text is the bytes: one copy, not an intermediate string too
        // (that was a second copy of a whole 50 MB file at the peak).
        if self.has_crlf() {
            out.extend_from_slice(self.encode_range(0..self.text.len()).as_bytes());
        } else {
            out.extend_from_slice(self.text.as_bytes());
        }
        out
    }

    /// The bytes [`TextDoc::encode`] gives, as its two parts (the byte order mark, possibly
    /// empty, and the text), when the document has no CRLF ending to put back.
    pub fn encoded_parts(&self) -> Option<[&[u8]; 2]> {
        let bom: &[u8] = if self.bom { b"\xef\xbb\xbf" } else { b"" };
        (!self.has_crlf()).then_some([bom, self.text.as_bytes()])
    }

    /// [`TextDoc::encode`], taking the document: a text without a BOM or a CRLF ending is its
    /// bytes already, and is handed over without a copy.
    pub fn into_bytes(self) -> Vec<u8> {
        if self.bom || self.has_crlf() {
            self.encode()
        } else {
            self.text.into_bytes()
        }
    }

    /// The original text of `range` (a range of [`TextDoc::text`]), with its own line endings.
    pub fn encode_range(&self, range: Range<usize>) -> String {
        let slice = &self.text[range.clone()];
        if !self.crlf.contains(&true) {
            return slice.to_string();
        }
        let mut nl = self.newlines_before(range.start);
        let mut out = String::with_capacity(slice.len() + 8);
        let mut rest = slice;
        while let Some(i) = rest.find('\n') {
            out.push_str(&rest[..i]);
            if self.crlf.get(nl).copied().unwrap_or(false) {
                out.push('\r');
            }
            out.push('\n');
            nl += 1;
            rest = &rest[i + 1..];
        }
        out.push_str(rest);
        out
    }

    /// The folded text that matching runs on.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn newlines_before(&self, offset: usize) -> usize {
        memchr_count(&self.text.as_bytes()[..offset])
    }

    /// The ending new lines get when nothing closer says: the file's majority (LF on a tie or in a
    /// file with no line break at all).
    fn dominant_crlf(&self) -> bool {
        let n = self.crlf.iter().filter(|c| **c).count();
        n * 2 > self.crlf.len()
    }

    /// Replaces `range` of the folded text with `new` (already folded). New line breaks take the
    /// ending that the replaced text had (its majority), or, for a replacement inside one line, the
    /// ending of that line.
    pub fn replace(&mut self, range: Range<usize>, new: &str) {
        let first_nl = self.newlines_before(range.start);
        let removed = memchr_count(&self.text.as_bytes()[range.clone()]);
        let style = if removed > 0 {
            let c = self.crlf[first_nl..first_nl + removed]
                .iter()
                .filter(|c| **c)
                .count();
            if c * 2 == removed {
                self.dominant_crlf()
            } else {
                c * 2 > removed
            }
        } else {
            self.crlf
                .get(first_nl)
                .copied()
                .unwrap_or_else(|| self.dominant_crlf())
        };
        let added = memchr_count(new.as_bytes());
        self.crlf.splice(
            first_nl..first_nl + removed,
            std::iter::repeat_n(style, added),
        );
        self.text.replace_range(range, new);
    }

    /// Replaces every range of `ranges` with `new` (already folded), with exactly the result of
    /// [`TextDoc::replace`] on each range from the last to the first, in one pass over the text
    /// (one `replace` per range moves the tail and recounts line breaks from the start every
    /// time: quadratic in a `replace_all` with many matches). `ranges` must be sorted and
    /// disjoint; when they are not, it falls back to one `replace` per range.
    pub fn replace_all(&mut self, ranges: &[Range<usize>], new: &str) {
        let sorted = ranges
            .windows(2)
            .all(|w| w[0].start <= w[0].end && w[0].end <= w[1].start);
        if !sorted || ranges.last().is_some_and(|r| r.end > self.text.len()) {
            for r in ranges.iter().rev() {
                self.replace(r.clone(), new);
            }
            return;
        }
        let bytes = self.text.as_bytes();
        let added = memchr_count(new.as_bytes());
        // Forward: each range's first line break index, its line breaks and how many were CRLF,
        // and the flag of the first line break in the original text between it and the next one.
        struct Spot {
            first_nl: usize,
            removed: usize,
            crlf: usize,
            gap_flag: Option<bool>,
        }
        let mut spots = Vec::with_capacity(ranges.len());
        let (mut at, mut nl) = (0, 0);
        for (i, r) in ranges.iter().enumerate() {
            nl += memchr_count(&bytes[at..r.start]);
            let removed = memchr_count(&bytes[r.clone()]);
            let crlf = self.crlf[nl..nl + removed].iter().filter(|c| **c).count();
            let gap_end = ranges.get(i + 1).map_or(bytes.len(), |n| n.start);
            let gap_flag =
                memchr::memchr(b'\n', &bytes[r.end..gap_end]).map(|_| self.crlf[nl + removed]);
            spots.push(Spot {
                first_nl: nl,
                removed,
                crlf,
                gap_flag,
            });
            nl += removed;
            at = r.end;
        }
        // Backward, as the one-by-one replacements run: the style each range's new line breaks
        // take depends on the file's majority and the next line break as they are by then.
        let mut total = self.crlf.len();
        let mut total_crlf = self.crlf.iter().filter(|c| **c).count();
        let mut styles = vec![false; spots.len()];
        // The flag of the first line break at or after the end of the range being replaced.
        let mut after: Option<bool> = None;
        for (k, s) in spots.iter().enumerate().rev() {
            let next = s.gap_flag.or(if k + 1 < spots.len() && added > 0 {
                Some(styles[k + 1])
            } else {
                after
            });
            let dominant = total_crlf * 2 > total;
            let style = if s.removed > 0 {
                if s.crlf * 2 == s.removed {
                    dominant
                } else {
                    s.crlf * 2 > s.removed
                }
            } else {
                next.unwrap_or(dominant)
            };
            styles[k] = style;
            after = next;
            total = total - s.removed + added;
            total_crlf = total_crlf - s.crlf + if style { added } else { 0 };
        }
        // Forward again: the new text and flags.
        let grown = ranges.len() * new.len();
        let mut text = String::with_capacity(self.text.len() + grown);
        let mut crlf = Vec::with_capacity(total);
        let (mut at, mut nl) = (0, 0);
        for ((r, s), style) in ranges.iter().zip(&spots).zip(styles) {
            text.push_str(&self.text[at..r.start]);
            text.push_str(new);
            crlf.extend_from_slice(&self.crlf[nl..s.first_nl]);
            crlf.extend(std::iter::repeat_n(style, added));
            nl = s.first_nl + s.removed;
            at = r.end;
        }
        text.push_str(&self.text[at..]);
        crlf.extend_from_slice(&self.crlf[nl..]);
        self.text = text;
        self.crlf = crlf;
    }

    /// The length of the byte order mark the file starts with (0 or 3).
    pub fn bom_len(&self) -> usize {
        if self.bom { 3 } else { 0 }
    }

    /// Whether any line ends with `\r\n` on disk.
    pub fn has_crlf(&self) -> bool {
        self.crlf.contains(&true)
    }

    /// The document with each of `pieces` (sorted, disjoint ranges of [`TextDoc::text`]) replaced
    /// by its text (folded), built once: for a document without CRLF endings (see
    /// [`TextDoc::has_crlf`]), where it is exactly [`TextDoc::replace`] on each piece.
    pub(crate) fn splice_lf(&self, pieces: &[(Range<usize>, &str)]) -> TextDoc {
        debug_assert!(!self.has_crlf());
        let grown: usize = pieces.iter().map(|(_, n)| n.len()).sum();
        let mut text = String::with_capacity(self.text.len() + grown);
        let mut at = 0;
        for (r, new) in pieces {
            text.push_str(&self.text[at..r.start]);
            text.push_str(new);
            at = r.end;
        }
        text.push_str(&self.text[at..]);
        let crlf = vec![false; memchr_count(text.as_bytes())];
        TextDoc {
            bom: self.bom,
            text,
            crlf,
        }
    }

    /// Appends `add` (folded), first ending the last line if it is not ended.
    pub fn append(&mut self, add: &str) {
        let end = self.text.len();
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.replace(end..end, &format!("\n{add}"));
        } else {
            let style = self.dominant_crlf();
            self.text.push_str(add);
            self.crlf
                .extend(std::iter::repeat_n(style, memchr_count(add.as_bytes())));
        }
    }

    /// 1-based line of a byte offset in the folded text.
    pub fn line_of(&self, offset: usize) -> usize {
        self.newlines_before(offset) + 1
    }

    /// 1-based inclusive line range covered by a match (a match ending in `\n` ends on that line).
    pub fn line_range(&self, range: &Range<usize>) -> (usize, usize) {
        let start = self.line_of(range.start);
        let last = if range.end > range.start {
            range.end - 1
        } else {
            range.start
        };
        (
            start,
            start + memchr_count(&self.text.as_bytes()[range.start..last]),
        )
    }

    /// [`TextDoc::line_range`] of each of `ranges`, counting line breaks once from one range to
    /// the next when they are in order of their starts (a count from the start of the text per
    /// range is quadratic in the number of matches).
    pub fn line_ranges(&self, ranges: &[Range<usize>]) -> Vec<(usize, usize)> {
        let bytes = self.text.as_bytes();
        let (mut at, mut line) = (0, 1);
        ranges
            .iter()
            .map(|r| {
                if r.start < at {
                    (at, line) = (0, 1);
                }
                line += memchr_count(&bytes[at..r.start]);
                at = r.start;
                let last = if r.end > r.start { r.end - 1 } else { r.start };
                (line, line + memchr_count(&bytes[r.start..last]))
            })
            .collect()
    }

    /// Number of lines (a final line without `\n` counts; an empty file has 0).
    pub fn line_count(&self) -> usize {
        let n = self.crlf.len();
        if self.text.is_empty() || self.text.ends_with('\n') {
            n
        } else {
            n + 1
        }
    }

    /// Byte range of a line window, or `None` when it starts past the last line.
    pub fn window_range(&self, w: LineWindow) -> Option<Range<usize>> {
        let count = self.line_count();
        if w.start > count.max(1) {
            return None;
        }
        let start = self.offset_of_line(w.start);
        let end = match w.end {
            Some(e) if e < count => self.offset_of_line(e + 1),
            _ => self.text.len(),
        };
        Some(start..end)
    }

    fn offset_of_line(&self, line: usize) -> usize {
        if line <= 1 {
            return 0;
        }
        let mut seen = 1;
        for (i, b) in self.text.bytes().enumerate() {
            if b == b'\n' {
                seen += 1;
                if seen == line {
                    return i + 1;
                }
            }
        }
        self.text.len()
    }
}

fn memchr_count(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(b: &[u8]) {
        let d = TextDoc::decode(b).expect("text");
        assert_eq!(d.encode(), b, "round trip of {b:?}");
        assert_eq!(d.into_bytes(), b, "round trip of {b:?}, taken");
    }

    #[test]
    fn bytes_round_trip() {
        for b in [
            &b""[..],
            b"a",
            b"a\n",
            b"a\r\nb\r\n",
            b"a\r\nb\nc\r\n",
            b"a\rb\r\r\nc",
            b"\xef\xbb\xbfhello\r\n",
            b"\ttab\n  spaces\t\n",
            "unicode \u{2014} \u{201c}q\u{201d}\n".as_bytes(),
        ] {
            roundtrip(b);
        }
    }

    #[test]
    fn crlf_file_stays_crlf_with_lf_replacement() {
        let mut d = TextDoc::decode(b"one\r\ntwo\r\nthree\r\n").expect("text");
        let at = d.text().find("two\n").expect("found");
        d.replace(at..at + 4, "2\n2b\n");
        assert_eq!(d.encode(), b"one\r\n2\r\n2b\r\nthree\r\n");
    }

    #[test]
    fn mixed_file_keeps_untouched_endings() {
        let mut d = TextDoc::decode(b"a\r\nb\nc\r\nd\n").expect("text");
        let at = d.text().find('c').expect("found");
        d.replace(at..at + 1, "C");
        assert_eq!(d.encode(), b"a\r\nb\nC\r\nd\n");
        // Inside one line, new breaks take that line's ending.
        let at = d.text().find('b').expect("found");
        d.replace(at..at + 1, "b1\nb2");
        assert_eq!(d.encode(), b"a\r\nb1\nb2\nC\r\nd\n");
    }

    /// `replace_all` against its definition, one `replace` per range from the last, on files
    /// with every mix of endings and replacements that add, drop or keep line breaks.
    #[test]
    fn replace_all_is_one_replace_per_range_from_the_last() {
        let files: [&[u8]; 8] = [
            b"a x b x\nx c\n",
            b"x\r\nx\r\nx\r\n",
            b"x\nx\r\nx\r\nx x\n",
            b"\xef\xbb\xbfx\r\ny x\nx",
            b"x x x",
            b"x\r\n\nx\nx\r\n\r\nx",
            b"ax\rx\r\nx\n",
            b"no match here\r\n",
        ];
        let edits = [
            ("x", "y"),
            ("x", "1\n2"),
            ("x", "\n"),
            ("x", ""),
            ("x\n", "z"),
            ("x\n", "p\nq\nr\n"),
            ("\nx", "-"),
            ("\n", "\n\n"),
        ];
        for bytes in files {
            for (old, new) in edits {
                let start = TextDoc::decode(bytes).expect("text");
                let ranges: Vec<Range<usize>> =
                    memchr::memmem::find_iter(start.text().as_bytes(), old.as_bytes())
                        .map(|i| i..i + old.len())
                        .collect();
                let mut want = start.clone();
                for r in ranges.iter().rev() {
                    want.replace(r.clone(), new);
                }
                let mut got = start.clone();
                got.replace_all(&ranges, new);
                assert_eq!(got, want, "{old:?} -> {new:?} in {bytes:?}");
                let lines: Vec<_> = ranges.iter().map(|r| start.line_range(r)).collect();
                assert_eq!(start.line_ranges(&ranges), lines, "{old:?} in {bytes:?}");
            }
        }
    }

    #[test]
    fn append_ends_the_last_line_first() {
        let mut d = TextDoc::decode(b"x\r\ny").expect("text");
        d.append("z\n");
        assert_eq!(d.encode(), b"x\r\ny\r\nz\r\n");
        let mut d = TextDoc::decode(b"").expect("text");
        d.append("z\n");
        assert_eq!(d.encode(), b"z\n");
    }

    #[test]
    fn refuses_binary_utf16_and_bad_utf8() {
        assert_eq!(TextDoc::decode(b"a\0b"), Err(DecodeError::Binary));
        assert_eq!(TextDoc::decode(b"\xff\xfea\0"), Err(DecodeError::Utf16));
        assert_eq!(
            TextDoc::decode(b"ok\nab\xffc"),
            Err(DecodeError::NotUtf8 { line: 2, column: 3 })
        );
    }

    #[test]
    fn lines_and_windows() {
        let d = TextDoc::decode(b"l1\nl2\nl3\nl4").expect("text");
        assert_eq!(d.line_count(), 4);
        assert_eq!(d.line_range(&(3..6)), (2, 2));
        assert_eq!(d.line_range(&(3..7)), (2, 3));
        let w = d
            .window_range(LineWindow {
                start: 2,
                end: Some(3),
            })
            .expect("window");
        assert_eq!(&d.text()[w], "l2\nl3\n");
        assert!(
            d.window_range(LineWindow {
                start: 9,
                end: None
            })
            .is_none()
        );
        assert_eq!(d.encode_range(0..3), "l1\n");
        let c = TextDoc::decode(b"l1\r\nl2\r\n").expect("text");
        assert_eq!(c.encode_range(0..6), "l1\r\nl2\r\n");
    }
}
