//! Where blocks start and end, from a file's text alone: bracket depth (with the language's
//! strings and comments skipped), matching tags, Markdown sections and indentation. This is what
//! a `symbol` candidate, the "never cut a block short" rule and the last-resort anchor use to
//! find the extent of a definition or block in any file, with or without a grammar.
//!
//! # Algorithm
//!
//! One pass over the text ([`Structure::new`]) records per line its indentation, the bracket
//! depth at its start, whether it starts inside a string, a block comment or brackets opened on
//! an earlier line (a continuation), and whether it holds only a comment. The comment and string
//! syntax comes from the file's extension ([`Family`]); an unknown extension counts nothing but
//! indentation. [`Structure::block_end`] then tries, in order: a Markdown heading's section, an
//! HTML/JSX element's closing tag, the brackets the line opens, and the lines indented deeper
//! than it (plus a closing line such as `end` or `}` at its own indentation).
//!
//! # Invariants
//!
//! * Linear in the size of the text; nothing here panics on any input (all indexing is by line
//!   numbers below the line count, and cut points are at ASCII bytes).
//! * A block always contains the line it starts at: `block_end(l) >= l`.
//! * Strings that are not closed on their line end there, except JavaScript template literals
//!   and Python triple-quoted strings: an apostrophe in prose or a YAML scalar cannot swallow
//!   the rest of a file.

use std::ops::Range;

/// How a language writes comments and strings, as far as brackets and block ends care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    /// C-like: `//` and `/* */` comments, brackets delimit blocks.
    Brace {
        /// `'` delimits strings (JavaScript, PHP, CSS); otherwise it is a char literal or a
        /// lifetime and is skipped only when it is a short char literal.
        quote_strings: bool,
        /// `` ` `` delimits a string that may span lines (JavaScript, TypeScript, Go).
        backtick: bool,
        /// `//` starts a comment (not in plain CSS, where `url(http://…)` would be cut).
        slash_comments: bool,
    },
    /// `#` comments, `'`/`"` strings and triple-quoted strings.
    Python,
    /// `#` comments and `'`/`"` strings: Ruby, shell, YAML, TOML, R, Perl, Elixir.
    Hash,
    /// `--` comments and `{- -}` blocks: Haskell, Elm, Lua, SQL.
    Dash,
    /// HTML-like: `<!-- -->` comments, blocks are elements (Vue, Svelte, Astro, XML).
    Markup,
    /// Markdown and reStructuredText: sections under headings, nested list items.
    Markdown,
    /// Indentation only.
    Plain,
}

impl Family {
    pub(super) fn of(path: &str) -> Family {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let ext = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        let brace = |quote_strings, backtick| Family::Brace {
            quote_strings,
            backtick,
            slash_comments: true,
        };
        match ext.as_str() {
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => brace(true, true),
            "go" => brace(false, true),
            "php" | "dart" | "groovy" | "gradle" | "scss" | "less" | "json" | "jsonc" => {
                brace(true, false)
            }
            "css" => Family::Brace {
                quote_strings: true,
                backtick: false,
                slash_comments: false,
            },
            "rs" | "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "cs" | "java" | "kt"
            | "kts" | "swift" | "scala" | "zig" | "sol" | "proto" | "m" | "mm" => {
                brace(false, false)
            }
            "py" | "pyi" | "pyw" => Family::Python,
            "rb" | "rake" | "gemspec" | "sh" | "bash" | "zsh" | "yaml" | "yml" | "toml" | "r"
            | "pl" | "pm" | "ex" | "exs" | "cr" | "nim" | "coffee" | "cfg" | "ini" | "conf" => {
                Family::Hash
            }
            "hs" | "lhs" | "elm" | "lua" | "sql" | "purs" => Family::Dash,
            "html" | "htm" | "xml" | "vue" | "svelte" | "astro" | "xhtml" | "svg" | "jinja"
            | "j2" | "erb" | "hbs" | "njk" | "liquid" => Family::Markup,
            "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc" => Family::Markdown,
            _ => Family::Plain,
        }
    }

    fn counts_brackets(self) -> bool {
        !matches!(self, Family::Markup | Family::Markdown | Family::Plain)
    }

    /// Elements (`<section>` … `</section>`) are blocks here: markup, and JSX in JavaScript.
    fn has_tags(self) -> bool {
        matches!(
            self,
            Family::Markup
                | Family::Markdown
                | Family::Brace {
                    backtick: true,
                    quote_strings: true,
                    ..
                }
        )
    }
}

/// The shape of one file: per line, what [`Structure::block_end`] needs.
pub(super) struct Structure<'a> {
    text: &'a str,
    lines: &'a [Range<usize>],
    pub(super) family: Family,
    /// Indentation width (a tab counts 4), `None` for a blank line.
    indent: Vec<Option<u32>>,
    /// Bracket depth at the start of each line; one more entry for the end of the text.
    depth: Vec<i32>,
    /// The line starts inside a string or a block comment.
    in_string: Vec<bool>,
    /// The line holds only a comment (or starts inside a block comment).
    comment: Vec<bool>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lex {
    Code,
    /// A string closed by this byte; `triple` for `"""`/`'''`; `multiline` when it may span lines.
    Str {
        close: u8,
        triple: bool,
        multiline: bool,
    },
    /// A block comment closed by this marker.
    Block(&'static [u8]),
}

impl<'a> Structure<'a> {
    pub(super) fn new(text: &'a str, lines: &'a [Range<usize>], path: &str) -> Structure<'a> {
        let family = Family::of(path);
        let n = lines.len();
        let mut s = Structure {
            text,
            lines,
            family,
            indent: Vec::with_capacity(n),
            depth: Vec::with_capacity(n + 1),
            in_string: Vec::with_capacity(n),
            comment: Vec::with_capacity(n),
        };
        let mut state = Lex::Code;
        let mut depth = 0i32;
        for r in lines {
            let line = text.as_bytes().get(r.clone()).unwrap_or_default();
            s.indent.push(indent_of(line));
            s.depth.push(depth);
            s.in_string.push(state != Lex::Code);
            let starts_comment = match state {
                Lex::Block(_) => true,
                Lex::Str { .. } => false,
                Lex::Code => line_comment_start(family, trim_start(line)),
            };
            s.comment.push(starts_comment);
            state = lex_line(family, line, state, &mut depth);
        }
        s.depth.push(depth);
        s
    }

    pub(super) fn len(&self) -> usize {
        self.lines.len()
    }

    pub(super) fn line(&self, i: usize) -> &'a str {
        self.lines
            .get(i)
            .and_then(|r| self.text.get(r.clone()))
            .unwrap_or_default()
    }

    pub(super) fn is_blank(&self, i: usize) -> bool {
        self.indent.get(i).is_none_or(Option::is_none)
    }

    pub(super) fn is_comment(&self, i: usize) -> bool {
        self.comment.get(i).copied().unwrap_or(false)
    }

    pub(super) fn indent(&self, i: usize) -> Option<u32> {
        self.indent.get(i).copied().flatten()
    }

    /// The line continues a statement begun above: it starts inside a string, a comment or
    /// brackets that an earlier line opened.
    fn continues(&self, i: usize, from: usize) -> bool {
        self.in_string.get(i).copied().unwrap_or(false)
            || (self.family.counts_brackets() && self.depth[i] > self.depth[from])
    }

    /// The last line of the block that line `l` starts (0-based, inclusive; `l` itself when it
    /// starts none).
    pub(super) fn block_end(&self, l: usize) -> usize {
        let n = self.len();
        if l >= n || self.is_blank(l) {
            return l.min(n.saturating_sub(1));
        }
        if self.family == Family::Markdown
            && let Some(e) = self.section_end(l)
        {
            return e;
        }
        if self.family.has_tags()
            && let Some(e) = self.element_end(l)
        {
            return e;
        }
        if self.family.counts_brackets() && !self.in_string[l] {
            let d0 = self.depth[l];
            if self.depth[l + 1] > d0 {
                let mut m = l + 1;
                while m < n && self.depth[m + 1] > d0 {
                    m += 1;
                }
                let m = m.min(n - 1);
                // Where indentation makes the blocks, closing brackets end only the header (a
                // signature over several lines); the body below is deeper.
                if matches!(self.family, Family::Python | Family::Hash | Family::Dash) {
                    return m.max(self.indented_end(l));
                }
                return m;
            }
            // A balanced header whose block opens on the next line (`if (x)` then `{`).
            if let Some(next) = (l + 1..n).find(|&i| !self.is_blank(i))
                && next <= l + 2
                && self.line(next).trim_start().starts_with('{')
                && self.indent(next) <= self.indent(l)
            {
                return self.block_end(next);
            }
        }
        self.indented_end(l)
    }

    /// Line `l` and every following line indented deeper than it or continuing it, then a
    /// closing line (`end`, `}`, `)`, …) at its own indentation.
    fn indented_end(&self, l: usize) -> usize {
        let n = self.len();
        let Some(i0) = self.indent(l) else {
            return l;
        };
        let mut last = l;
        let mut m = l + 1;
        while m < n {
            match self.indent(m) {
                None => {}
                Some(i) if i > i0 || self.continues(m, l) => last = m,
                Some(_) => break,
            }
            m += 1;
        }
        if m < n && self.indent(m) == Some(i0) && is_closer(self.line(m)) {
            last = m;
        }
        last
    }

    /// A Markdown heading's section: up to the next heading of the same or a higher level.
    fn section_end(&self, l: usize) -> Option<usize> {
        let level = heading_level(self.line(l))?;
        let n = self.len();
        let mut end = n - 1;
        for m in l + 1..n {
            if heading_level(self.line(m)).is_some_and(|h| h <= level) {
                end = m - 1;
                break;
            }
        }
        while end > l && self.is_blank(end) {
            end -= 1;
        }
        Some(end)
    }

    /// An element opened on line `l` and closed on a later line: the line of its closing tag.
    fn element_end(&self, l: usize) -> Option<usize> {
        let line = self.line(l).trim_start();
        let name = open_tag_name(line)?;
        // Closed (or self-closed) on the same line: not a block.
        let mut depth = tag_balance(line, name);
        if depth <= 0 {
            return None;
        }
        // Elements are rarely longer than this; a missing closing tag must not cost a scan of a
        // huge file per candidate.
        let last = (l + 5_000).min(self.len());
        for m in l + 1..last {
            depth += tag_balance(self.line(m), name);
            if depth <= 0 {
                return Some(m);
            }
        }
        None
    }

    /// The first line of the definition or block line `l` belongs to as its header: `l` itself,
    /// or the decorators and attributes right above it.
    pub(super) fn block_start(&self, l: usize) -> usize {
        let mut s = l;
        while s > 0 {
            let prev = self.line(s - 1).trim();
            let attr = prev.starts_with('@')
                || prev.starts_with("#[")
                || (prev.starts_with('[')
                    && prev.ends_with(']')
                    && self.family != Family::Markdown);
            if attr && self.indent(s - 1) == self.indent(l) {
                s -= 1;
            } else {
                break;
            }
        }
        s
    }

    /// The block that encloses line `l`: the nearest line above it, indented less, whose block
    /// reaches `l`. `None` at the top level.
    pub(super) fn enclosing(&self, l: usize) -> Option<(usize, usize)> {
        let i = self.indent(l)?;
        let mut p = l;
        // Bounded: a block header far above is no use as a suggestion anyway.
        let floor = l.saturating_sub(2_000);
        while p > floor {
            p -= 1;
            let Some(ip) = self.indent(p) else {
                continue;
            };
            if ip < i && !self.in_string[p] && !self.is_comment(p) {
                let e = self.block_end(p);
                if e >= l {
                    return Some((self.block_start(p), e));
                }
            }
        }
        None
    }
}

fn indent_of(line: &[u8]) -> Option<u32> {
    let mut w = 0u32;
    for &b in line {
        match b {
            b' ' => w += 1,
            b'\t' => w += 4,
            b'\r' => {}
            _ => return Some(w),
        }
    }
    None
}

fn trim_start(line: &[u8]) -> &[u8] {
    let i = line
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .unwrap_or(line.len());
    &line[i..]
}

fn line_comment_start(family: Family, t: &[u8]) -> bool {
    match family {
        Family::Brace { slash_comments, .. } => {
            (slash_comments && t.starts_with(b"//")) || t.starts_with(b"/*") || t.starts_with(b"*")
        }
        Family::Python | Family::Hash => t.starts_with(b"#") && !t.starts_with(b"#["),
        Family::Dash => t.starts_with(b"--") || t.starts_with(b"{-"),
        Family::Markup | Family::Markdown => t.starts_with(b"<!--"),
        Family::Plain => t.starts_with(b"//") || t.starts_with(b"# ") || t.starts_with(b"/*"),
    }
}

/// Bytes that can change the lexer's state or the bracket depth in code, in some family: a
/// comment's or string's first byte, a bracket. Every other byte of code is skipped unread.
const CODE_STOPS: [bool; 256] = {
    let mut t = [false; 256];
    let stops = b"/#-{<\"'`([])}";
    let mut i = 0;
    while i < stops.len() {
        t[stops[i] as usize] = true;
        i += 1;
    }
    t
};

/// Lexes one line from `state`, updating the bracket depth; returns the state at its end.
/// Bytes that cannot end a string or comment or matter in code are skipped in bulk: this runs
/// on every byte of the file on a miss.
fn lex_line(family: Family, line: &[u8], mut state: Lex, depth: &mut i32) -> Lex {
    let counts = family.counts_brackets();
    let mut i = 0;
    while i < line.len() {
        let skip = match state {
            Lex::Code => line[i..].iter().position(|&b| CODE_STOPS[b as usize]),
            Lex::Str { close, .. } => memchr::memchr2(b'\\', close, &line[i..]),
            Lex::Block(close) => memchr::memchr(close[0], &line[i..]),
        };
        match skip {
            Some(d) => i += d,
            None => break,
        }
        let b = line[i];
        match state {
            Lex::Block(close) => {
                if line[i..].starts_with(close) {
                    state = Lex::Code;
                    i += close.len();
                    continue;
                }
            }
            Lex::Str {
                close,
                triple,
                multiline,
            } => {
                if b == b'\\' {
                    i += 2;
                    continue;
                }
                if b == close {
                    if !triple {
                        state = Lex::Code;
                    } else if line[i..].starts_with(&[close, close, close]) {
                        state = Lex::Code;
                        i += 3;
                        continue;
                    }
                }
                let _ = multiline;
            }
            Lex::Code => {
                let rest = &line[i..];
                if line_comment_at(family, rest) {
                    break;
                }
                if let Some((close, skip)) = block_comment_at(family, rest) {
                    state = Lex::Block(close);
                    i += skip;
                    continue;
                }
                match b {
                    b'"' | b'\'' | b'`' => {
                        if let Some((next, skip)) = string_at(family, rest) {
                            state = next;
                            i += skip;
                            continue;
                        }
                    }
                    b'{' | b'(' | b'[' if counts => *depth += 1,
                    b'}' | b')' | b']' if counts => *depth -= 1,
                    _ => {}
                }
            }
        }
        i += 1;
    }
    match state {
        // An unterminated one-line string ends with its line.
        Lex::Str {
            multiline: false, ..
        } => Lex::Code,
        other => other,
    }
}

fn line_comment_at(family: Family, rest: &[u8]) -> bool {
    match family {
        Family::Brace { slash_comments, .. } => slash_comments && rest.starts_with(b"//"),
        Family::Python | Family::Hash => rest.starts_with(b"#") && !rest.starts_with(b"#{"),
        Family::Dash => rest.starts_with(b"--"),
        Family::Markup | Family::Markdown | Family::Plain => false,
    }
}

fn block_comment_at(family: Family, rest: &[u8]) -> Option<(&'static [u8], usize)> {
    match family {
        Family::Brace { .. } if rest.starts_with(b"/*") => Some((b"*/", 2)),
        Family::Dash if rest.starts_with(b"{-") => Some((b"-}", 2)),
        Family::Markup | Family::Markdown if rest.starts_with(b"<!--") => Some((b"-->", 4)),
        _ => None,
    }
}

/// A string starting at `rest[0]`: the state inside it and the bytes its opening takes.
fn string_at(family: Family, rest: &[u8]) -> Option<(Lex, usize)> {
    let q = rest[0];
    let one = |multiline| {
        Some((
            Lex::Str {
                close: q,
                triple: false,
                multiline,
            },
            1,
        ))
    };
    match family {
        Family::Python if q != b'`' => {
            if rest.starts_with(&[q, q, q]) {
                Some((
                    Lex::Str {
                        close: q,
                        triple: true,
                        multiline: true,
                    },
                    3,
                ))
            } else {
                one(false)
            }
        }
        Family::Hash if q != b'`' => one(false),
        Family::Dash if q == b'"' => one(false),
        Family::Brace {
            quote_strings,
            backtick,
            ..
        } => match q {
            b'"' => one(false),
            b'`' if backtick => one(true),
            b'\'' if quote_strings => one(false),
            // A char literal ('x', '\n', '\u{1F600}'); anything else is a lifetime or a prime.
            b'\'' => {
                let close = rest.iter().skip(1).take(12).position(|&c| c == b'\'')?;
                let inner = &rest[1..=close];
                let char_like = inner.first() == Some(&b'\\')
                    || std::str::from_utf8(inner).is_ok_and(|s| s.chars().count() == 1);
                char_like.then_some((Lex::Code, close + 2))
            }
            _ => None,
        },
        _ => None,
    }
}

/// A line that closes a block at the block's own indentation.
fn is_closer(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() {
        return false;
    }
    if matches!(
        t.trim_end_matches([';', ',']),
        "end" | "end)" | "fi" | "done" | "esac" | "endif" | "endfor" | "endwhile" | "endfunction"
    ) {
        return true;
    }
    (t.starts_with('}') || t.starts_with(')') || t.starts_with(']') || t.starts_with("</"))
        && t.len() <= 8
}

fn heading_level(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    ((1..=6).contains(&hashes) && t.as_bytes().get(hashes) == Some(&b' ')).then_some(hashes)
}

/// `section` for a line starting `<section …`; `None` for closing tags, comments, doctypes.
fn open_tag_name(t: &str) -> Option<&str> {
    let rest = t.strip_prefix('<')?;
    let len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'.' || *b == b':')
        .count();
    let name = rest.get(..len)?;
    let void = matches!(
        name.to_ascii_lowercase().as_str(),
        "br" | "hr"
            | "img"
            | "input"
            | "meta"
            | "link"
            | "area"
            | "base"
            | "col"
            | "embed"
            | "source"
            | "track"
            | "wbr"
            | "param"
    );
    (len > 0 && rest.as_bytes()[0].is_ascii_alphabetic() && !void).then_some(name)
}

/// Opening minus closing tags named `name` on one line (a self-closing one counts neither).
fn tag_balance(line: &str, name: &str) -> i32 {
    let mut n = 0;
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'<', &bytes[i..]) {
        let at = i + at;
        let rest = &line[at + 1..];
        let (closing, rest) = match rest.strip_prefix('/') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let follows = rest.as_bytes().get(name.len()).copied();
        if rest.starts_with(name)
            && follows.is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'-' || b == b'.'))
        {
            if closing {
                n -= 1;
            } else {
                let end = rest.find('>').map(|e| &rest[..e]);
                if end.is_none_or(|tag| !tag.ends_with('/')) {
                    n += 1;
                }
            }
        }
        i = at + 1;
    }
    n
}

/// Whether a trimmed line is too plain to locate anything by itself: blank, punctuation only,
/// a lone keyword, or under four characters.
pub(super) fn is_trivial(line: &str) -> bool {
    let t = line.trim();
    if t.chars().filter(|c| c.is_alphanumeric()).count() < 3 {
        return true;
    }
    let word = t
        .trim_end_matches([';', ':', ',', '{', '(', ')', '}'])
        .trim();
    matches!(
        word,
        "return"
            | "break"
            | "continue"
            | "pass"
            | "else"
            | "end"
            | "try"
            | "finally"
            | "do"
            | "then"
            | "done"
            | "default"
            | "begin"
            | "None"
            | "null"
            | "true"
            | "false"
            | "return None"
            | "return null"
            | "return true"
            | "return false"
            | "return self"
            | "return this"
            | "else if"
            | "} else"
            | "</div>"
            | "<div>"
            | "end if"
    )
}

/// Whether a line starts a definition (a function, method, class, type, module, a named arrow
/// function) or a section heading: the best kind of anchor.
pub(super) fn is_definition(line: &str, family: Family) -> bool {
    let t = line.trim();
    if family == Family::Markdown {
        return heading_level(t).is_some();
    }
    let mut rest = t;
    loop {
        let word_end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '(' || c == ')'))
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        if matches!(
            word,
            "export"
                | "default"
                | "pub"
                | "pub(crate)"
                | "pub(super)"
                | "async"
                | "static"
                | "public"
                | "private"
                | "protected"
                | "internal"
                | "override"
                | "virtual"
                | "abstract"
                | "final"
                | "sealed"
                | "partial"
                | "unsafe"
                | "extern"
                | "inline"
                | "readonly"
                | "declare"
                | "open"
                | "data"
        ) && word_end < rest.len()
        {
            rest = rest[word_end..].trim_start();
            continue;
        }
        break;
    }
    let first = rest
        .split(|c: char| c.is_whitespace() || c == '(' || c == '<' || c == ':')
        .next()
        .unwrap_or("");
    if matches!(
        first,
        "def"
            | "class"
            | "function"
            | "function*"
            | "fn"
            | "func"
            | "struct"
            | "enum"
            | "trait"
            | "interface"
            | "impl"
            | "module"
            | "type"
            | "namespace"
            | "record"
            | "object"
            | "fun"
            | "sub"
            | "mod"
            | "union"
            | "macro_rules!"
            | "defmodule"
            | "defp"
            | "instance"
            | "newtype"
    ) {
        return true;
    }
    if (first == "const" || first == "let" || first == "var")
        && (rest.contains("=>") || rest.contains("function") || rest.ends_with("= {"))
    {
        return true;
    }
    if matches!(family, Family::Brace { .. }) {
        // A C-like method: `ReturnType Name(…)` opening its body, not a call or a statement.
        let control = matches!(
            first,
            "if" | "for"
                | "while"
                | "switch"
                | "return"
                | "new"
                | "else"
                | "catch"
                | "await"
                | "throw"
                | "case"
                | "using"
                | "lock"
                | "foreach"
        );
        if !control && rest.contains('(') && (t.ends_with('{') || t.ends_with(')')) {
            let head = &rest[..rest.find('(').unwrap_or(rest.len())];
            let words: Vec<&str> = head.split_whitespace().collect();
            return words.len() >= 2 && !head.contains('=') && !head.contains('.');
        }
    }
    if family == Family::Dash {
        // Haskell: `name :: Type` or `name args =` at the top level.
        return line.starts_with(|c: char| c.is_ascii_lowercase())
            && (t.contains(" :: ") || t.ends_with(" =") || t.ends_with("= do"));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::lines::line_ranges;
    use super::*;

    fn ends(text: &str, path: &str) -> Vec<usize> {
        let lines = line_ranges(text);
        let s = Structure::new(text, &lines, path);
        (0..lines.len()).map(|l| s.block_end(l) + 1).collect()
    }

    #[test]
    fn python_def_with_a_multi_line_signature_and_a_docstring() {
        let py = "def f(\n    a,\n):\n    \"\"\"Doc\n\nmore\"\"\"\n    return a\n\nx = 1\n";
        assert_eq!(ends(py, "m.py")[0], 7);
    }

    #[test]
    fn braces_skip_strings_and_comments() {
        let js = "function f() {\n  const s = \"}\"; // }\n  /* } */\n  return `\n}`;\n}\nf();\n";
        assert_eq!(ends(js, "a.js")[0], 6);
    }

    #[test]
    fn an_arrow_component_ends_at_its_closing_brace() {
        let js = "const A = ({\n  x,\n}) => {\n  return (\n    <div>{x}</div>\n  );\n};\nexport default A;\n";
        assert_eq!(ends(js, "a.js")[0], 7);
    }

    #[test]
    fn rust_lifetimes_are_not_strings() {
        let rs = "fn f<'a>(x: &'a str) -> char {\n    let c = '{';\n    c\n}\n";
        assert_eq!(ends(rs, "a.rs")[0], 4);
    }

    #[test]
    fn ruby_blocks_end_with_end() {
        let rb = "  if active\n    a\n\n    b\n  end\n  c\n";
        assert_eq!(ends(rb, "a.rb")[0], 5);
    }

    #[test]
    fn html_elements_end_at_their_closing_tag() {
        let html = "<section id=\"a\">\n  <p>x</p>\n<section>\n</section>\n</section>\n<p>\n";
        let e = ends(html, "p.astro");
        assert_eq!((e[0], e[1], e[2]), (5, 2, 4));
    }

    #[test]
    fn css_rules_and_urls() {
        let css = ":root {\n  --bg: url(http://x/a.png);\n  --fg: #fff;\n}\nbody {}\n";
        assert_eq!(ends(css, "s.css")[0], 4);
    }

    #[test]
    fn markdown_sections_and_list_items() {
        let md = "# A\ntext\n## B\n- item\n  - sub\n- next\n\n# C\n";
        let e = ends(md, "r.md");
        assert_eq!((e[0], e[2], e[3]), (6, 6, 5));
    }

    #[test]
    fn definitions_and_trivial_lines() {
        let f = Family::of("a.ts");
        assert!(is_definition("export async function run(x) {", f));
        assert!(is_definition("  const View = ({ a }) => {", f));
        assert!(!is_definition("  if (x) {", f));
        assert!(!is_definition("  foo(bar);", f));
        assert!(is_definition(
            "    public void Tick(float dt) {",
            Family::of("a.cs")
        ));
        assert!(is_definition("    def run(self):", Family::of("a.py")));
        assert!(is_trivial("  }"));
        assert!(is_trivial("    return"));
        assert!(is_trivial("  });"));
        assert!(!is_trivial("    return total"));
    }
}
