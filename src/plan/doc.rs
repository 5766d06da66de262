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
        out.extend_from_slice(self.encode_range(0..self.text.len()).as_bytes());
        out
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
