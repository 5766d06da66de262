//! The locations of a JSON patch's entries, `file_path` and `expect_sha256` values, found by a
//! direct walk of the text, so that a JSON patch need not be read a second time by the YAML
//! reader only for them.
//!
//! Invariant: it gives exactly the locations the YAML reader's re-read would give (an entry at
//! its `{`, a string from its opening to its closing quote), or declines with `false` and leaves
//! the patch as it was; the caller then re-reads as before. It declines on anything it is not sure
//! the YAML reader reads alike: tabs or carriage returns between tokens, characters YAML does not
//! print, surrogate escapes, `null`, fractions, nested values other than `edits`, a key with an
//! escape, and documents near the YAML reader's node budget or past the size limit.

use miette::SourceSpan;

use super::RawTop;
use super::fast::{MAX_NODES, all_printable};

#[derive(Default)]
struct EntrySpans {
    entry: usize,
    file_path: Option<SourceSpan>,
    expect_sha256: Option<SourceSpan>,
    subs: Vec<EntrySpans>,
}

/// Sets the locations of `raw`, which serde_json read from `text`; `false` when it declines.
pub(super) fn locate(text: &str, raw: &mut RawTop, limit: usize) -> bool {
    if text.len() > limit || !all_printable(text) {
        return false;
    }
    let mut w = Walker {
        b: text.as_bytes(),
        pos: 0,
        nodes: 0,
    };
    let Some(entries) = w.top() else {
        return false;
    };
    if w.nodes > MAX_NODES || entries.len() != raw.edits.len() {
        return false;
    }
    let fits = entries.iter().zip(&raw.edits).all(|(s, e)| {
        s.subs.len() == e.value.edits.as_ref().map_or(0, Vec::len)
            && s.file_path.is_some() == e.value.file_path.is_some()
            && s.expect_sha256.is_some() == e.value.expect_sha256.is_some()
    });
    if !fits {
        return false;
    }
    for (s, e) in entries.into_iter().zip(&mut raw.edits) {
        e.span = Some(SourceSpan::from((s.entry, 1)));
        if let Some(p) = &mut e.value.file_path {
            p.span = s.file_path;
        }
        if let Some(x) = &mut e.value.expect_sha256 {
            x.span = s.expect_sha256;
        }
        for (ss, sub) in s.subs.into_iter().zip(e.value.edits.iter_mut().flatten()) {
            sub.span = Some(SourceSpan::from((ss.entry, 1)));
            if let Some(x) = &mut sub.value.expect_sha256 {
                x.span = ss.expect_sha256;
            }
        }
    }
    true
}

struct Walker<'a> {
    b: &'a [u8],
    pos: usize,
    nodes: usize,
}

impl Walker<'_> {
    fn at(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// Past spaces and line feeds; `None` at a tab or a carriage return.
    fn ws(&mut self) -> Option<()> {
        while let Some(c) = self.at() {
            match c {
                b' ' | b'\n' => self.pos += 1,
                b'\t' | b'\r' => return None,
                _ => break,
            }
        }
        Some(())
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws()?;
        (self.at()? == c).then(|| self.pos += 1)
    }

    fn top(&mut self) -> Option<Vec<EntrySpans>> {
        self.ws()?;
        let entries = if self.at()? == b'[' {
            self.entries(true)?
        } else {
            self.eat(b'{')?;
            self.nodes += 1;
            let mut entries = None;
            self.members(|w, key| match key {
                "message" => w.scalar().map(|_| ()),
                "edits" => {
                    entries = Some(w.entries(true)?);
                    Some(())
                }
                _ => None,
            })?;
            entries?
        };
        self.ws()?;
        (self.pos == self.b.len()).then_some(entries)
    }

    /// An object's members to its `}`, each value read by `value`.
    fn members(&mut self, mut value: impl FnMut(&mut Self, &str) -> Option<()>) -> Option<()> {
        self.ws()?;
        if self.at()? == b'}' {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.ws()?;
            let (start, len) = self.string()?;
            let key = std::str::from_utf8(&self.b[start + 1..start + len - 1]).ok()?;
            if key.contains('\\') {
                return None;
            }
            self.nodes += 1;
            self.eat(b':')?;
            self.ws()?;
            self.nodes += 1;
            value(self, key)?;
            self.ws()?;
            match self.at()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array of entries (`groups`: they may hold `edits`).
    fn entries(&mut self, groups: bool) -> Option<Vec<EntrySpans>> {
        self.eat(b'[')?;
        self.nodes += 1;
        let mut out = Vec::new();
        self.ws()?;
        if self.at()? == b']' {
            self.pos += 1;
            return Some(out);
        }
        loop {
            self.ws()?;
            if self.at()? != b'{' {
                return None;
            }
            let mut e = EntrySpans {
                entry: self.pos,
                ..EntrySpans::default()
            };
            self.pos += 1;
            self.nodes += 1;
            self.members(|w, key| {
                match key {
                    "file_path" if groups => e.file_path = Some(w.located()?),
                    "expect_sha256" => e.expect_sha256 = Some(w.located()?),
                    "edits" if groups => e.subs = w.entries(false)?,
                    _ => w.scalar()?,
                }
                Some(())
            })?;
            out.push(e);
            self.ws()?;
            match self.at()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    fn located(&mut self) -> Option<SourceSpan> {
        let (start, len) = self.string()?;
        Some(SourceSpan::from((start, len)))
    }

    /// A string, `true`, `false` or a whole number.
    fn scalar(&mut self) -> Option<()> {
        match self.at()? {
            b'"' => self.string().map(|_| ()),
            b't' if self.b[self.pos..].starts_with(b"true") => {
                self.pos += 4;
                Some(())
            }
            b'f' if self.b[self.pos..].starts_with(b"false") => {
                self.pos += 5;
                Some(())
            }
            _ => {
                if self.at()? == b'-' {
                    self.pos += 1;
                }
                let digits = self.b[self.pos..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                if digits == 0 || digits > 17 {
                    return None;
                }
                self.pos += digits;
                (!matches!(self.at(), Some(b'.' | b'e' | b'E'))).then_some(())
            }
        }
    }

    /// A string from its opening quote: its offset and length with the quotes.
    fn string(&mut self) -> Option<(usize, usize)> {
        let start = self.pos;
        if self.at()? != b'"' {
            return None;
        }
        self.pos += 1;
        loop {
            let run = self.b[self.pos..]
                .iter()
                .position(|c| *c == b'"' || *c == b'\\' || *c < 0x20)?;
            self.pos += run;
            match self.b[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Some((start, self.pos - start));
                }
                b'\\' => {
                    let e = *self.b.get(self.pos + 1)?;
                    if e == b'u' {
                        let hex = self.b.get(self.pos + 2..self.pos + 6)?;
                        // A surrogate (half of a pair) is read differently by the two readers.
                        if matches!(hex[0], b'd' | b'D')
                            && matches!(hex[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                        {
                            return None;
                        }
                        self.pos += 6;
                    } else {
                        self.pos += 2;
                    }
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
#[path = "json_spans_tests.rs"]
mod tests;
