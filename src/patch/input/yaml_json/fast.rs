//! A direct reader for the shape nearly every YAML patch has: a block sequence of block mappings
//! (bare, or under `edits:` beside `message:`), keys written plainly, values that are double- or
//! single-quoted strings, literal block strings (`|`, `|-`, `|+`), `true`/`false`, whole numbers
//! and simple unquoted words, with comment and blank lines between them.
//!
//! Invariant: it either gives exactly what the full YAML reader gives for the document (every
//! value, and the location of every entry, `file_path` and `expect_sha256` as [`span_of`] reads
//! it), or declines with `None`; it never reports an error. Anything it is not sure of (flow
//! collections, anchors, tags, folded or indented block strings, a tab or carriage return outside
//! a string, an unknown or repeated key, an unquoted value that YAML could read as null, a bool
//! or a number, a document near the reader's budget) makes it decline, and the full reader then
//! gives the result and every error message as before. The full reader costs about ten times as
//! much, mostly for locations nobody reads unless an edit is invalid.
//!
//! [`span_of`]: super::span_of

use miette::SourceSpan;

use super::{EDIT_KEYS, RawEdit, RawSubEdit, RawTop, Sp, TOP_KEYS};

/// Declines documents past this many YAML nodes (collections and scalars): the full reader
/// refuses more than 250,000, and near that bound it alone decides.
pub(super) const MAX_NODES: usize = 200_000;

/// The document read directly, or `None` when the full reader must read it. `limit` is the
/// reader's budget for scalar text: a larger document is left to it.
pub(super) fn parse(text: &str, limit: usize) -> Option<RawTop> {
    if text.len() > limit || !all_printable(text) {
        return None;
    }
    let mut r = Reader {
        b: text.as_bytes(),
        text,
        pos: 0,
        nodes: 0,
    };
    let top = r.top()?;
    (r.nodes <= MAX_NODES).then_some(top)
}

/// Only characters YAML takes as they are (tab and line feed, printable ASCII, and the
/// printable ranges above it): no carriage return, no control character, no byte-order mark.
pub(super) fn all_printable(text: &str) -> bool {
    // ASCII first, 64 bytes at a time without an early exit, which the compiler turns into
    // vector compares: a byte-by-byte `all` was a fifth of a large patch's parse.
    let ascii_ok = |c: u8| c == b'\t' || c == b'\n' || (0x20..0x7f).contains(&c);
    let mut chunks = text.as_bytes().chunks_exact(64);
    let plain = chunks
        .by_ref()
        .all(|chunk| chunk.iter().fold(true, |ok, &c| ok & ascii_ok(c)))
        && chunks.remainder().iter().all(|&c| ascii_ok(c));
    if plain {
        return true;
    }
    text.chars().all(|c| {
        matches!(c, '\t' | '\n' | '\u{20}'..='\u{7e}' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fefe}' | '\u{ff00}'..='\u{fffd}' | '\u{10000}'..)
    })
}

enum Value {
    Str(String, Option<SourceSpan>),
    Bool(bool),
    Int(i64, SourceSpan),
    Block(String),
}

struct Reader<'a> {
    b: &'a [u8],
    text: &'a str,
    pos: usize,
    nodes: usize,
}

impl Reader<'_> {
    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(b'\n')
    }

    fn eof(&self) -> bool {
        self.pos >= self.b.len()
    }

    /// Spaces from `pos`.
    fn indent(&self) -> usize {
        let rest = self.b.get(self.pos..).unwrap_or_default();
        rest.iter().take_while(|c| **c == b' ').count()
    }

    /// Past blank and comment lines, from the start of a line; `None` on a tab or a document
    /// marker.
    fn skip_blank(&mut self) -> Option<()> {
        while !self.eof() {
            let n = self.indent();
            match self.at(self.pos + n) {
                b'\n' => self.pos += n + 1,
                b'#' => self.next_line(),
                b'\t' => return None,
                _ if n == 0
                    && (self.b[self.pos..].starts_with(b"---")
                        || self.b[self.pos..].starts_with(b"...")) =>
                {
                    return None;
                }
                _ => return Some(()),
            }
        }
        Some(())
    }

    fn next_line(&mut self) {
        self.pos = match self.b[self.pos..].iter().position(|c| *c == b'\n') {
            Some(i) => self.pos + i + 1,
            None => self.b.len(),
        };
    }

    /// The rest of a line after a value: spaces, maybe a comment, the line's end.
    fn end_of_line(&mut self) -> Option<()> {
        let start = self.pos;
        while self.at(self.pos) == b' ' {
            self.pos += 1;
        }
        match self.at(self.pos) {
            b'\n' => {
                self.pos = (self.pos + 1).min(self.b.len());
                Some(())
            }
            b'#' if self.pos > start => {
                self.next_line();
                Some(())
            }
            _ => None,
        }
    }

    fn top(&mut self) -> Option<RawTop> {
        self.skip_blank()?;
        if self.eof() {
            return None;
        }
        let n = self.indent();
        if self.at(self.pos + n) == b'-' {
            let edits = self.seq(n)?;
            return self.eof().then_some(RawTop {
                message: None,
                edits,
            });
        }
        if n != 0 {
            return None;
        }
        self.nodes += 1;
        let (mut message, mut edits) = (None, None);
        while !self.eof() {
            if self.indent() != 0 {
                return None;
            }
            let (key, _) = self.key()?;
            match key {
                "message" if message.is_none() => match self.value(0)? {
                    Value::Str(s, _) | Value::Block(s) => message = Some(s),
                    _ => return None,
                },
                "edits" if edits.is_none() => edits = Some(self.nested_seq(0)?),
                _ => return None,
            }
            self.skip_blank()?;
        }
        Some(RawTop {
            message,
            edits: edits?,
        })
    }

    /// A plain key and its colon, at `pos`; `pos` ends after the colon.
    fn key(&mut self) -> Option<(&'static str, usize)> {
        let start = self.pos;
        let len = self.b[start..]
            .iter()
            .take_while(|c| c.is_ascii_lowercase() || **c == b'_' || c.is_ascii_digit())
            .count();
        let after = self.at(start + len + 1);
        if len == 0 || self.at(start + len) != b':' || !(after == b' ' || after == b'\n') {
            return None;
        }
        let name = &self.text[start..start + len];
        let key = TOP_KEYS.iter().chain(EDIT_KEYS).find(|k| **k == name)?;
        self.pos = start + len + 1;
        self.nodes += 1;
        Some((key, start))
    }

    /// A block sequence as a mapping's value: on the lines after the key, indented at least as
    /// much as the key (`indent`).
    fn nested_seq<T: Entry>(&mut self, indent: usize) -> Option<Vec<Sp<T>>> {
        self.end_of_line()?;
        self.skip_blank()?;
        let n = self.indent();
        if self.eof() || n < indent || self.at(self.pos + n) != b'-' {
            return None;
        }
        self.seq(n)
    }

    /// A block sequence of mappings whose dashes stand at column `n`; ends before the first line
    /// that is not one of its entries.
    fn seq<T: Entry>(&mut self, n: usize) -> Option<Vec<Sp<T>>> {
        self.nodes += 1;
        let mut out = Vec::new();
        loop {
            // At a line indented `n` whose next character is `-`.
            self.pos += n + 1;
            let spaces = self.indent();
            if spaces == 0 {
                return None;
            }
            self.pos += spaces;
            let start = self.pos;
            let entry = self.mapping::<T>(n + 1 + spaces)?;
            out.push(Sp {
                value: entry,
                span: Some(SourceSpan::from((start, 0))),
            });
            if self.eof() {
                return Some(out);
            }
            let ind = self.indent();
            if ind != n || self.at(self.pos + n) != b'-' {
                return (ind <= n).then_some(out);
            }
        }
    }

    /// A block mapping whose keys stand at column `m`, the first one at `pos`.
    fn mapping<T: Entry>(&mut self, m: usize) -> Option<T> {
        self.nodes += 1;
        let mut e = T::default();
        loop {
            let (key, _) = self.key()?;
            if key == "edits" {
                if !T::GROUPS || e.has(key) {
                    return None;
                }
                e.group(self.nested_seq(m)?);
            } else {
                let v = self.value(m)?;
                e.set(key, v)?;
            }
            self.skip_blank()?;
            if self.eof() {
                return Some(e);
            }
            let ind = self.indent();
            if ind < m {
                return Some(e);
            }
            if ind > m {
                return None;
            }
            self.pos += m;
        }
    }

    /// A scalar value after its key's colon, in a mapping whose keys stand at column `m`; `pos`
    /// ends at the start of the next line.
    fn value(&mut self, m: usize) -> Option<Value> {
        let spaces = self.indent();
        if spaces == 0 {
            return None;
        }
        self.pos += spaces;
        self.nodes += 1;
        let start = self.pos;
        let v = match self.at(start) {
            b'"' | b'\'' => {
                let s = self.quoted(m)?;
                Value::Str(s, Some(SourceSpan::from((start, self.pos - start))))
            }
            b'|' => return self.literal(m).map(Value::Block),
            _ => return self.plain(),
        };
        self.end_of_line()?;
        Some(v)
    }

    /// An unquoted value on one line: `true`, `false`, a whole number, or a word YAML cannot
    /// read as anything but a string.
    fn plain(&mut self) -> Option<Value> {
        let start = self.pos;
        let line_end = self.b[start..]
            .iter()
            .position(|c| *c == b'\n')
            .map_or(self.b.len(), |i| start + i);
        let line = &self.text[start..line_end];
        // ` #` starts a comment.
        let word = line[..line.find(" #").unwrap_or(line.len())].trim_end_matches(' ');
        let ok_char = |c: u8| c.is_ascii_alphanumeric() || b"_./+=,@~ -".contains(&c);
        if !word.bytes().all(ok_char) {
            return None;
        }
        self.pos = (line_end + 1).min(self.b.len());
        let span = SourceSpan::from((start, word.len()));
        match word {
            "true" => return Some(Value::Bool(true)),
            "false" => return Some(Value::Bool(false)),
            _ => {}
        }
        let digits = word.strip_prefix('-').unwrap_or(word);
        if word == "0"
            || (digits.len() <= 17
                && digits.starts_with(|c: char| ('1'..='9').contains(&c))
                && digits.bytes().all(|c| c.is_ascii_digit()))
        {
            return Some(Value::Int(word.parse().ok()?, span));
        }
        let first = word.bytes().next()?;
        let special = [
            "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf",
        ]
        .iter()
        .any(|w| w.eq_ignore_ascii_case(word));
        if special || !(first.is_ascii_alphabetic() || first == b'_' || first == b'/') {
            return None;
        }
        Some(Value::Str(word.to_string(), Some(span)))
    }

    /// A double- or single-quoted string from its opening quote; `pos` ends after the closing
    /// one. Line breaks fold as YAML folds them; continuation lines must be indented past `m`.
    fn quoted(&mut self, m: usize) -> Option<String> {
        let q = self.b[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            // Plain content up to the next byte that is not: the quote, a line break, or in
            // double quotes a backslash (a search, not a step per byte: a patch of 1,000 edits
            // is mostly indented code).
            let run_start = self.pos;
            let rest = &self.b[run_start..];
            let n = match q {
                b'"' => memchr::memchr3(b'"', b'\\', b'\n', rest),
                _ => memchr::memchr2(q, b'\n', rest),
            }?;
            self.pos = run_start + n;
            out.push_str(&self.text[run_start..self.pos]);
            match self.b[self.pos] {
                b'\n' => {
                    // Spaces and tabs before a line break are not content: those of this run
                    // go (an escaped one, written by `escape`, stays).
                    let trailing = rest[..n]
                        .iter()
                        .rev()
                        .take_while(|c| matches!(**c, b' ' | b'\t'))
                        .count();
                    out.truncate(out.len() - trailing);
                    self.pos += 1;
                    let breaks = self.fold(m)?;
                    if breaks == 0 {
                        out.push(' ');
                    } else {
                        out.extend(std::iter::repeat_n('\n', breaks));
                    }
                }
                b'\'' if q == b'\'' && self.at(self.pos + 1) == b'\'' => {
                    out.push('\'');
                    self.pos += 2;
                }
                c if c == q => {
                    self.pos += 1;
                    return Some(out);
                }
                _ => self.escape(&mut out, m)?,
            }
        }
    }

    /// After a line break inside a quoted string: skips the empty lines and the next line's
    /// indentation, which must pass `m`; returns how many empty lines there were.
    fn fold(&mut self, m: usize) -> Option<usize> {
        let mut breaks = 0;
        loop {
            let n = self.indent();
            match self.at(self.pos + n) {
                b'\n' if self.pos + n < self.b.len() => {
                    breaks += 1;
                    self.pos += n + 1;
                }
                b'\t' => return None,
                _ if n <= m || self.pos + n >= self.b.len() => return None,
                _ => {
                    self.pos += n;
                    return Some(breaks);
                }
            }
        }
    }

    /// A double-quoted string's escape, at its backslash.
    fn escape(&mut self, out: &mut String, m: usize) -> Option<()> {
        let c = *self.b.get(self.pos + 1)?;
        self.pos += 2;
        let simple = match c {
            b'0' => '\0',
            b'a' => '\u{7}',
            b'b' => '\u{8}',
            b't' | b'\t' => '\t',
            b'n' => '\n',
            b'v' => '\u{b}',
            b'f' => '\u{c}',
            b'r' => '\r',
            b'e' => '\u{1b}',
            b' ' => ' ',
            b'"' => '"',
            b'/' => '/',
            b'\\' => '\\',
            b'N' => '\u{85}',
            b'_' => '\u{a0}',
            b'L' => '\u{2028}',
            b'P' => '\u{2029}',
            b'x' | b'u' | b'U' => {
                let len = match c {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = self.text.get(self.pos..self.pos + len)?;
                if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                    return None;
                }
                self.pos += len;
                char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
            }
            b'\n' => {
                // An escaped line break joins the lines without a space.
                let breaks = self.fold(m)?;
                out.extend(std::iter::repeat_n('\n', breaks));
                return Some(());
            }
            _ => return None,
        };
        out.push(simple);
        Some(())
    }

    /// A literal block string from its `|`, in a mapping whose keys stand at column `m`.
    fn literal(&mut self, m: usize) -> Option<String> {
        self.pos += 1;
        let chomp = self.at(self.pos);
        if matches!(chomp, b'-' | b'+') {
            self.pos += 1;
        }
        self.end_of_line()?;
        let mut out = String::new();
        let mut indent: Option<usize> = None;
        // Empty lines not yet known to be inside the content, and the longest leading one.
        let (mut breaks, mut leading) = (0usize, 0usize);
        while !self.eof() {
            let n = self.indent();
            if self.pos + n >= self.b.len() {
                return None;
            }
            let c = self.b[self.pos + n];
            if c == b'\n' {
                match indent {
                    Some(k) if n > k => {
                        flush_breaks(&mut out, &mut breaks);
                        out.push_str(&self.text[self.pos + k..self.pos + n]);
                        out.push('\n');
                    }
                    Some(_) => breaks += 1,
                    None => {
                        leading = leading.max(n);
                        breaks += 1;
                    }
                }
                self.pos += n + 1;
                continue;
            }
            let k = match indent {
                Some(k) => k,
                None if n > m && n >= leading => *indent.insert(n),
                None => return None,
            };
            if n < k {
                if c == b'\t' {
                    return None;
                }
                break;
            }
            let end = self.pos + self.b[self.pos..].iter().position(|c| *c == b'\n')?;
            flush_breaks(&mut out, &mut breaks);
            out.push_str(&self.text[self.pos + k..end]);
            out.push('\n');
            self.pos = end + 1;
        }
        indent?;
        match chomp {
            b'-' => {
                out.pop();
            }
            b'+' => out.extend(std::iter::repeat_n('\n', breaks)),
            _ => {}
        }
        Some(out)
    }
}

fn flush_breaks(out: &mut String, breaks: &mut usize) {
    out.extend(std::iter::repeat_n('\n', *breaks));
    *breaks = 0;
}

/// An edit or a grouped edit, filled key by key.
trait Entry: Default {
    const GROUPS: bool;
    fn has(&self, key: &str) -> bool;
    /// `None` for a key this kind does not take, a repeated key, or a value of the wrong type.
    fn set(&mut self, key: &str, v: Value) -> Option<()>;
    fn group(&mut self, _edits: Vec<Sp<RawSubEdit>>) {}
}

impl Entry for RawEdit {
    const GROUPS: bool = true;

    fn has(&self, key: &str) -> bool {
        match key {
            "edits" => self.edits.is_some(),
            "file_path" => self.file_path.is_some(),
            "create" => self.create.is_some(),
            "delete" => self.delete.is_some(),
            "append" => self.append.is_some(),
            "move_to" => self.move_to.is_some(),
            "old_string" => self.old_string.is_some(),
            "new_string" => self.new_string.is_some(),
            "replace_all" => self.replace_all.is_some(),
            "start_line" => self.start_line.is_some(),
            "end_line" => self.end_line.is_some(),
            "within" => self.within.is_some(),
            "expect_sha256" => self.expect_sha256.is_some(),
            _ => true,
        }
    }

    fn set(&mut self, key: &str, v: Value) -> Option<()> {
        if self.has(key) {
            return None;
        }
        match key {
            "file_path" => self.file_path = Some(located(v)?),
            "create" => self.create = Some(boolean(v)?),
            "delete" => self.delete = Some(boolean(v)?),
            "append" => self.append = Some(boolean(v)?),
            "move_to" => self.move_to = Some(text(v)?),
            "old_string" => self.old_string = Some(text(v)?),
            "new_string" => self.new_string = Some(text(v)?),
            "replace_all" => self.replace_all = Some(boolean(v)?),
            "start_line" => self.start_line = Some(number(v)?),
            "end_line" => self.end_line = Some(number(v)?),
            "within" => self.within = Some(text(v)?),
            "expect_sha256" => self.expect_sha256 = Some(located(v)?),
            _ => return None,
        }
        Some(())
    }

    fn group(&mut self, edits: Vec<Sp<RawSubEdit>>) {
        self.edits = Some(edits);
    }
}

impl Entry for RawSubEdit {
    const GROUPS: bool = false;

    fn has(&self, key: &str) -> bool {
        match key {
            "old_string" => self.old_string.is_some(),
            "new_string" => self.new_string.is_some(),
            "replace_all" => self.replace_all.is_some(),
            "start_line" => self.start_line.is_some(),
            "end_line" => self.end_line.is_some(),
            "within" => self.within.is_some(),
            "expect_sha256" => self.expect_sha256.is_some(),
            _ => true,
        }
    }

    fn set(&mut self, key: &str, v: Value) -> Option<()> {
        if self.has(key) {
            return None;
        }
        match key {
            "old_string" => self.old_string = Some(text(v)?),
            "new_string" => self.new_string = Some(text(v)?),
            "replace_all" => self.replace_all = Some(boolean(v)?),
            "start_line" => self.start_line = Some(number(v)?),
            "end_line" => self.end_line = Some(number(v)?),
            "within" => self.within = Some(text(v)?),
            "expect_sha256" => self.expect_sha256 = Some(located(v)?),
            _ => return None,
        }
        Some(())
    }
}

/// A string whose location is read (`file_path`, `expect_sha256`): a block string's location is
/// the full reader's to tell.
fn located(v: Value) -> Option<Sp<String>> {
    match v {
        Value::Str(value, span) => Some(Sp { value, span }),
        _ => None,
    }
}

/// A string whose location nobody reads.
fn text(v: Value) -> Option<Sp<String>> {
    match v {
        Value::Str(value, span) => Some(Sp { value, span }),
        Value::Block(value) => Some(Sp { value, span: None }),
        _ => None,
    }
}

fn boolean(v: Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(b),
        _ => None,
    }
}

fn number(v: Value) -> Option<Sp<i64>> {
    match v {
        Value::Int(value, span) => Some(Sp {
            value,
            span: Some(span),
        }),
        _ => None,
    }
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
