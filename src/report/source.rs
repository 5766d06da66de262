//! A file's text as miette reads it for a diagnostic, read from near the span instead of from
//! the top of the file.
//!
//! miette finds a span's line number and its context lines by walking the text byte by byte
//! from the start, once per label and once more for the whole snippet: a miss near the end of a
//! 10,000-line file paid about a millisecond per walk, more than the rest of its rendering.
//! [`FileSource`] hands miette's own walk only the text from a line a few lines above the span
//! and adds back what it skipped (the byte offset and the lines before), so every answer is the
//! one miette gives for the whole text: the same bytes, span, line, column and line count (the
//! tests compare them on every span of texts mixing `\n`, `\r\n` and lone `\r`).
//!
//! Invariant: the window starts right after a `\n` (or at 0) with at least
//! `context_lines_before + 1` whole lines between it and the span, so miette's walk sees the same
//! line starts it would have kept from the whole text.

use std::sync::Arc;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// A file's whole text, read by miette from near each span.
#[derive(Debug, Clone)]
pub(super) struct FileSource(pub(super) Arc<String>);

impl SourceCode for FileSource {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let text = self.0.as_bytes();
        let start = window_start(text, span.offset(), context_lines_before + 1);
        let inner = text[start..].read_span(
            &SourceSpan::new((span.offset() - start).into(), span.len()),
            context_lines_before,
            context_lines_after,
        )?;
        let skipped = line_breaks(&text[..start]);
        Ok(Box::new(MietteSpanContents::new(
            inner.data(),
            SourceSpan::new((inner.span().offset() + start).into(), inner.span().len()),
            inner.line() + skipped,
            inner.column(),
            inner.line_count() + skipped,
        )))
    }
}

/// The offset just after the `\n` that has `lines` more `\n`s between it and `offset`, or 0 when
/// there are not that many.
fn window_start(text: &[u8], offset: usize, lines: usize) -> usize {
    let mut end = offset.min(text.len());
    for _ in 0..=lines {
        match memchr::memrchr(b'\n', &text[..end]) {
            Some(i) => end = i,
            None => return 0,
        }
    }
    end + 1
}

/// The line breaks miette counts in `text`: every `\n` (a `\r\n` once) and every `\r` not
/// followed by `\n`.
fn line_breaks(text: &[u8]) -> usize {
    let lone_cr = memchr::memchr_iter(b'\r', text)
        .filter(|&i| text.get(i + 1) != Some(&b'\n'))
        .count();
    memchr::memchr_iter(b'\n', text).count() + lone_cr
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field miette's renderer reads, from a span read.
    fn fields(c: &dyn SpanContents<'_>) -> (Vec<u8>, usize, usize, usize, usize, usize) {
        (
            c.data().to_vec(),
            c.span().offset(),
            c.span().len(),
            c.line(),
            c.column(),
            c.line_count(),
        )
    }

    /// Texts built from every short sequence of pieces, so line breaks of each kind meet at every
    /// position.
    fn texts() -> Vec<String> {
        let pieces = ["ab", "\n", "\r\n", "\r", "x", "\n\n"];
        let mut out = vec![String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..4 {
            let mut next = Vec::new();
            for t in &frontier {
                for p in pieces {
                    next.push(format!("{t}{p}"));
                }
            }
            out.extend(next.iter().cloned());
            frontier = next;
        }
        out
    }

    #[test]
    fn every_span_reads_as_miette_reads_the_whole_text() {
        let mut compared = 0usize;
        for text in texts() {
            let src = FileSource(Arc::new(text.clone()));
            // Spans inside the text, as a report's are (miette itself panics on some others).
            for offset in 0..=text.len() {
                for len in [0, 1, 2, 5]
                    .into_iter()
                    .filter(|l| offset + l <= text.len())
                {
                    for (before, after) in [(0, 0), (1, 1), (2, 0), (0, 2), (3, 3)] {
                        let span = SourceSpan::new(offset.into(), len);
                        let want = text.as_str().read_span(&span, before, after);
                        let got = src.read_span(&span, before, after);
                        match (want, got) {
                            (Ok(w), Ok(g)) => {
                                assert_eq!(
                                    fields(&*w),
                                    fields(&*g),
                                    "{text:?} at {offset}+{len}, context {before}/{after}"
                                );
                                compared += 1;
                            }
                            (Err(_), Err(_)) => {}
                            (w, g) => panic!(
                                "{text:?} at {offset}+{len}: miette {:?}, window {:?}",
                                w.is_ok(),
                                g.is_ok()
                            ),
                        }
                    }
                }
            }
        }
        assert!(compared > 20_000, "only {compared} spans compared");
    }

    #[test]
    fn a_span_near_the_end_of_a_long_file_reads_only_its_neighbourhood() {
        let text: String = (1..=10_000).map(|i| format!("line {i}\n")).collect();
        let offset = text.find("line 9000\n").unwrap_or(0);
        assert!(window_start(text.as_bytes(), offset, 2) > offset - 40);
        let src = FileSource(Arc::new(text.clone()));
        let span = SourceSpan::new(offset.into(), 4);
        let got = src.read_span(&span, 1, 1).map(|c| fields(&*c));
        let want = text.as_str().read_span(&span, 1, 1).map(|c| fields(&*c));
        assert_eq!(got.ok(), want.ok());
    }
}
