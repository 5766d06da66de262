//! Line and column arithmetic shared by the parsers: byte offsets to 1-based lines and
//! 1-based character columns, and the trimmed source line a report shows.
//!
//! Invariants: a text has at least one line; a final newline ends the last line rather than
//! starting an empty one; `\r` before `\n` is not part of a line's text.

pub(super) struct Lines<'a> {
    text: &'a str,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

/// A report shows at most this many characters of a source line.
const SNIPPET_CHARS: usize = 120;

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        if starts.len() > 1 && starts.last() == Some(&text.len()) {
            starts.pop();
        }
        Lines { text, starts }
    }

    pub(super) fn count(&self) -> usize {
        self.starts.len()
    }

    /// The text of 1-based `line` (clamped to the existing lines), without its line ending.
    pub(super) fn text(&self, line: usize) -> &'a str {
        let i = line.clamp(1, self.count()) - 1;
        let start = self.starts[i];
        let end = self.starts.get(i + 1).map_or(self.text.len(), |&s| s - 1);
        let raw = &self.text[start..end.max(start)];
        let raw = raw.strip_suffix('\n').unwrap_or(raw);
        raw.strip_suffix('\r').unwrap_or(raw)
    }

    /// (1-based line, 0-based byte column) of byte offset `at`; past the end is the end of the
    /// last line.
    pub(super) fn position(&self, at: usize) -> (usize, usize) {
        let at = at.min(self.text.len());
        let i = self.starts.partition_point(|&s| s <= at).saturating_sub(1);
        (i + 1, at - self.starts[i])
    }

    /// The 1-based character column of 0-based byte column `byte_col` on `line` (clamped to the
    /// line's end, rounded down to a character boundary).
    pub(super) fn char_column(&self, line: usize, byte_col: usize) -> usize {
        let text = self.text(line);
        let mut end = byte_col.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].chars().count() + 1
    }
}

/// A source line as a report shows it: without surrounding whitespace, cut to about 120
/// characters.
pub(super) fn snippet(line: &str) -> String {
    let line = line.trim();
    if line.chars().count() <= SNIPPET_CHARS {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(SNIPPET_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let l = Lines::new("ab\r\ncé d\n");
        assert_eq!(l.count(), 2);
        assert_eq!(l.text(1), "ab");
        assert_eq!(l.text(2), "cé d");
        assert_eq!(l.text(9), "cé d");
        assert_eq!(l.position(5), (2, 1));
        assert_eq!(l.position(100), (2, 6));
        assert_eq!(l.char_column(2, 3), 3);
        assert_eq!(l.char_column(2, 2), 2, "inside a character rounds down");
        let empty = Lines::new("");
        assert_eq!((empty.count(), empty.text(1)), (1, ""));
        assert_eq!(Lines::new("a\nb").count(), 2);
    }

    #[test]
    fn snippets_are_trimmed_and_cut() {
        assert_eq!(snippet("   let x = 1;  "), "let x = 1;");
        let long = "x".repeat(300);
        let s = snippet(&long);
        assert_eq!(s.chars().count(), SNIPPET_CHARS);
        assert!(s.ends_with('…'));
    }
}
