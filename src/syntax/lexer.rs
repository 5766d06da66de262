//! Where given names occur as identifiers in a source file, found by a tokenizer instead of a
//! parse: comments and strings are skipped (Python f-string fields, JS/TS template
//! substitutions and Rust macro arguments are code, as the parsers see them), every other word
//! is an identifier token. About a hundred times cheaper than a tree-sitter parse, for the
//! dangling-reference check's scan of the files that still mention a removed name.
//!
//! Invariants:
//! - An occurrence is what [`super::symbols::of`] lists as a use, or the name node of a
//!   definition. The lexer cannot tell the two apart, so it flags every occurrence that could be
//!   a definition's name (`may_define`: after `def`, `fn`, `class`, `const`, in a Rust `impl`
//!   header, a Go declaration group …), or of a local binding (anything but a call, a macro,
//!   a member or a path's part: the parse leaves a local's uses out), erring towards flagging;
//!   a caller that must know parses the file then.
//! - When the text could fool it, it answers `None` rather than guess: a string or regex
//!   literal left open at the end of its line, a `<` where JSX or a TypeScript type assertion
//!   may start, a name that is also a contextual keyword of the language (`match`, `async`,
//!   `union`), anything unbalanced at the end.

use std::collections::HashSet;

use super::languages::Language;

/// One occurrence of a wanted name as an identifier token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub name: String,
    /// 1-based line and character column, as [`super::symbols::of`] gives them.
    pub line: usize,
    pub column: usize,
    /// It may be the name of a definition, or of a binding local to a function (only a parse
    /// can tell).
    pub may_define: bool,
}

/// The occurrences of `names` as identifiers in `text`, in source order. `None`: not a language
/// the lexer knows, or a text it cannot be sure about (see the module doc).
pub fn occurrences(lang: Language, text: &str, names: &HashSet<&str>) -> Option<Vec<Occurrence>> {
    let family = match lang {
        Language::Python => Family::Python,
        Language::JavaScript | Language::TypeScript | Language::Tsx => Family::Script,
        Language::Rust => Family::Rust,
        Language::Go => Family::Go,
        Language::Json | Language::Toml | Language::Yaml => return None,
    };
    let contextual = family.contextual_keywords();
    if names.iter().any(|n| contextual.contains(n)) {
        return None;
    }
    let mut lx = Lexer {
        b: text.as_bytes(),
        text,
        fam: family,
        names,
        i: 0,
        row: 0,
        line_start: 0,
        line_first: None,
        prev: Tok::None,
        stack: Vec::new(),
        impl_header: false,
        import: None,
        out: Vec::new(),
    };
    lx.code()?;
    if lx.stack.is_empty() {
        Some(lx.out)
    } else {
        None
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Python,
    Script,
    Rust,
    Go,
}

impl Family {
    /// Words the grammar treats as keywords in some places and identifiers in others.
    fn contextual_keywords(self) -> &'static [&'static str] {
        match self {
            Family::Python => &[
                "match", "case", "type", "_", "print", "exec", "await", "async",
            ],
            Family::Script => &[
                "async",
                "await",
                "get",
                "set",
                "static",
                "of",
                "from",
                "as",
                "type",
                "declare",
                "abstract",
                "readonly",
                "namespace",
                "module",
                "interface",
                "enum",
                "implements",
                "package",
                "private",
                "protected",
                "public",
                "yield",
                "let",
                "keyof",
                "infer",
                "is",
                "asserts",
                "satisfies",
                "accessor",
                "override",
                "global",
                "require",
                "unique",
                "any",
                "number",
                "string",
                "boolean",
                "symbol",
                "object",
                "never",
                "unknown",
                "bigint",
                "undefined",
                "constructor",
                "target",
                "meta",
            ],
            Family::Rust => &[
                "union",
                "default",
                "macro_rules",
                "raw",
                "auto",
                "dyn",
                "safe",
            ],
            Family::Go => &[],
        }
    }

    /// Words after which a name is being defined.
    fn definers(self) -> &'static [&'static str] {
        match self {
            Family::Python => &["def", "class", "type"],
            Family::Script => &[
                "function",
                "class",
                "interface",
                "type",
                "enum",
                "namespace",
                "module",
                "const",
                "let",
                "var",
                "get",
                "set",
                "static",
                "async",
                "abstract",
                "declare",
                "readonly",
                "public",
                "private",
                "protected",
                "override",
                "accessor",
            ],
            Family::Rust => &[
                "fn", "struct", "union", "enum", "type", "const", "static", "trait", "mod", "mut",
            ],
            Family::Go => &["func", "type", "const"],
        }
    }
}

/// The previous significant token.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok {
    None,
    /// A word: its byte range.
    Word(usize, usize),
    Punct(u8),
    /// A number, string, template or regex literal.
    Value,
}

/// What an open bracket is, so that its closing one resumes the right scan.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Paren,
    Bracket,
    Brace,
    /// A Go `const (` or `type (` group: every name in it may be declared.
    Group,
    /// `${` of a JS/TS template literal.
    Template,
    /// `{` of a Python f-string field: the string's quote, whether triple.
    Field(u8, bool),
    /// `{` of a field nested in a format spec (`{x:>{width}}`).
    SpecField,
}

struct Lexer<'a, 'n> {
    b: &'a [u8],
    text: &'a str,
    fam: Family,
    names: &'n HashSet<&'n str>,
    i: usize,
    /// 0-based line of `i`, and where it starts.
    row: usize,
    line_start: usize,
    /// The first word of the current line, once there is one.
    line_first: Option<(usize, usize)>,
    prev: Tok,
    stack: Vec<Open>,
    /// Rust: between `impl` and its `{` (or `;`): the implemented type is named there.
    impl_header: bool,
    /// Python and JS/TS: inside an import (or `export { … }`) statement, which started at this
    /// bracket depth: the names there are imported, never bound locally.
    import: Option<usize>,
    out: Vec<Occurrence>,
}

fn is_word_start(c: u8, fam: Family) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 || (c == b'$' && fam == Family::Script)
}

fn is_word(c: u8, fam: Family) -> bool {
    is_word_start(c, fam) || c.is_ascii_digit()
}

impl<'a> Lexer<'a, '_> {
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    fn newline(&mut self) {
        if self.import.is_some_and(|d| self.stack.len() <= d) {
            self.import = None;
        }
        self.i += 1;
        self.row += 1;
        self.line_start = self.i;
        self.line_first = None;
    }

    /// Skips `n` bytes of a literal or comment, counting the lines it spans.
    fn skip(&mut self, n: usize) {
        let end = (self.i + n).min(self.b.len());
        while self.i < end {
            if self.b[self.i] == b'\n' {
                self.newline();
            } else {
                self.i += 1;
            }
        }
    }

    fn word_text(&self, (s, e): (usize, usize)) -> &'a str {
        self.text.get(s..e).unwrap_or_default()
    }

    /// Code until the end of the text, or until the bracket that resumes a literal closes.
    fn code(&mut self) -> Option<()> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b'\n' => self.newline(),
                b' ' | b'\t' | b'\r' | 0x0c => self.i += 1,
                b'#' if self.fam == Family::Python => self.line_comment(),
                b'#' if self.fam == Family::Script && self.i == 0 && self.at(1) == b'!' => {
                    self.line_comment()
                }
                b'/' if self.fam != Family::Python && self.at(1) == b'/' => self.line_comment(),
                b'/' if self.fam != Family::Python && self.at(1) == b'*' => self.block_comment()?,
                b'"' | b'\'' if self.fam == Family::Python => self.py_string(b"")?,
                b'"' | b'\'' | b'`' if self.fam == Family::Script => {
                    self.i += 1;
                    if c == b'`' {
                        self.template()?;
                    } else {
                        self.quoted(c, false)?;
                    }
                }
                b'"' if self.fam == Family::Rust => {
                    self.i += 1;
                    self.quoted(b'"', true)?;
                }
                b'\'' if self.fam == Family::Rust => self.rust_quote()?,
                b'"' | b'\'' if self.fam == Family::Go => {
                    self.i += 1;
                    self.quoted(c, false)?;
                }
                b'`' if self.fam == Family::Go => {
                    let end = memchr::memchr(b'`', &self.b[self.i + 1..])?;
                    self.skip(end + 2);
                    self.prev = Tok::Value;
                }
                b'/' if self.fam == Family::Script && self.operand_expected() => self.regex()?,
                b'<' if self.fam == Family::Script
                    && self.operand_expected()
                    && (is_word_start(self.at(1), self.fam) || self.at(1) == b'>') =>
                {
                    // JSX (whose text is neither code nor string) or a type assertion.
                    return None;
                }
                b'0'..=b'9' => self.number(),
                _ if is_word_start(c, self.fam) => self.word()?,
                b'(' | b'[' | b'{' => self.open(c),
                b')' | b']' | b'}' => self.close(c)?,
                b':' if matches!(self.stack.last(), Some(Open::Field(..))) => {
                    // A format spec: text up to the field's end, fields nested in it aside.
                    self.format_spec()?;
                }
                b'!' if matches!(self.stack.last(), Some(Open::Field(..)))
                    && matches!(self.at(1), b'r' | b's' | b'a')
                    && matches!(self.at(2), b'}' | b':') =>
                {
                    self.i += 2;
                }
                _ => {
                    if c == b';' && self.fam == Family::Rust {
                        self.impl_header = false;
                    }
                    if c == b';' {
                        self.import = None;
                    }
                    self.prev = Tok::Punct(c);
                    self.i += 1;
                }
            }
        }
        Some(())
    }

    fn line_comment(&mut self) {
        self.i = memchr::memchr(b'\n', &self.b[self.i..]).map_or(self.b.len(), |k| self.i + k);
    }

    /// `/* … */`, nested in Rust.
    fn block_comment(&mut self) -> Option<()> {
        let nested = self.fam == Family::Rust;
        let mut depth = 0usize;
        loop {
            if self.i >= self.b.len() {
                return None;
            }
            if self.at(0) == b'/' && self.at(1) == b'*' && (nested || depth == 0) {
                depth += 1;
                self.i += 2;
            } else if self.at(0) == b'*' && self.at(1) == b'/' {
                depth -= 1;
                self.i += 2;
                if depth == 0 {
                    return Some(());
                }
            } else {
                self.skip(1);
            }
        }
    }

    /// A string after its opening quote `q`, to its closing one. `multiline`: a line break may
    /// be part of it (Rust); elsewhere only an escaped one may.
    fn quoted(&mut self, q: u8, multiline: bool) -> Option<()> {
        loop {
            match self.b.get(self.i)? {
                b'\\' => self.skip(2),
                b'\n' if !multiline => return None,
                &c if c == q => {
                    self.i += 1;
                    self.prev = Tok::Value;
                    return Some(());
                }
                _ => self.skip(1),
            }
        }
    }

    /// A JS/TS template literal's text after '`' (or after a substitution's `}`).
    fn template(&mut self) -> Option<()> {
        loop {
            match self.b.get(self.i)? {
                b'\\' => self.skip(2),
                b'`' => {
                    self.i += 1;
                    self.prev = Tok::Value;
                    return Some(());
                }
                b'$' if self.at(1) == b'{' => {
                    self.i += 2;
                    self.stack.push(Open::Template);
                    self.prev = Tok::Punct(b'{');
                    return Some(());
                }
                _ => self.skip(1),
            }
        }
    }

    /// A Python string at its opening quote; `prefix` is the letters before it (`rb`, `f` …).
    fn py_string(&mut self, prefix: &[u8]) -> Option<()> {
        let q = self.at(0);
        let triple = self.at(1) == q && self.at(2) == q;
        self.i += if triple { 3 } else { 1 };
        let format = prefix
            .iter()
            .any(|c| matches!(c, b'f' | b'F' | b't' | b'T'));
        self.py_body(q, triple, format)
    }

    /// The rest of a Python string, to its end or to the next f-string field.
    fn py_body(&mut self, q: u8, triple: bool, format: bool) -> Option<()> {
        loop {
            let c = *self.b.get(self.i)?;
            match c {
                b'\\' => self.skip(2),
                b'\n' if !triple => return None,
                b'{' | b'}' if format && self.at(1) == c => self.i += 2,
                b'{' if format => {
                    self.i += 1;
                    self.stack.push(Open::Field(q, triple));
                    self.prev = Tok::Punct(b'{');
                    return Some(());
                }
                _ if c == q && (!triple || (self.at(1) == q && self.at(2) == q)) => {
                    self.i += if triple { 3 } else { 1 };
                    self.prev = Tok::Value;
                    return Some(());
                }
                _ => self.skip(1),
            }
        }
    }

    /// After `:` in an f-string field: the spec's text, to a field nested in it (code, back
    /// here at its `}`) or to the field's own `}` (then the string goes on).
    fn format_spec(&mut self) -> Option<()> {
        loop {
            match *self.b.get(self.i)? {
                b'{' => {
                    self.i += 1;
                    self.stack.push(Open::SpecField);
                    self.prev = Tok::Punct(b'{');
                    return Some(());
                }
                b'}' => return self.close(b'}'),
                b'\n' => self.newline(),
                _ => self.i += 1,
            }
        }
    }

    /// Rust `'`: a character literal, or a lifetime or label (whose name the parser lists as
    /// an identifier, so it is lexed as a word next).
    fn rust_quote(&mut self) -> Option<()> {
        if self.at(1) == b'\\' {
            self.i += 1;
            return self.quoted(b'\'', false);
        }
        let ch = self.text.get(self.i + 1..)?.chars().next()?;
        if self.b.get(self.i + 1 + ch.len_utf8()) == Some(&b'\'') {
            self.i += 2 + ch.len_utf8();
            self.prev = Tok::Value;
        } else {
            self.i += 1;
            self.prev = Tok::Punct(b'\'');
        }
        Some(())
    }

    /// Whether a `/` here starts a regex (an operand is expected) rather than a division.
    fn operand_expected(&self) -> bool {
        match self.prev {
            Tok::None => true,
            Tok::Value => false,
            Tok::Punct(c) => !matches!(c, b')' | b']'),
            Tok::Word(s, e) => matches!(
                self.word_text((s, e)),
                "return"
                    | "typeof"
                    | "instanceof"
                    | "in"
                    | "of"
                    | "new"
                    | "delete"
                    | "void"
                    | "throw"
                    | "case"
                    | "do"
                    | "else"
                    | "yield"
                    | "await"
            ),
        }
    }

    fn regex(&mut self) -> Option<()> {
        self.i += 1;
        let mut class = false;
        loop {
            match *self.b.get(self.i)? {
                b'\\' => self.i += 2,
                b'\n' => return None,
                b'[' => {
                    class = true;
                    self.i += 1;
                }
                b']' => {
                    class = false;
                    self.i += 1;
                }
                b'/' if !class => {
                    self.i += 1;
                    while self.at(0).is_ascii_alphabetic() {
                        self.i += 1;
                    }
                    self.prev = Tok::Value;
                    return Some(());
                }
                _ => self.i += 1,
            }
        }
    }

    fn number(&mut self) {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if is_word(c, self.fam) || (c == b'.' && self.at(1).is_ascii_digit()) {
                self.i += 1;
            } else {
                break;
            }
        }
        self.prev = Tok::Value;
    }

    fn open(&mut self, c: u8) {
        let kind = match c {
            b'(' if self.fam == Family::Go
                && matches!(self.prev, Tok::Word(s, e)
                    if matches!(self.word_text((s, e)), "const" | "type")) =>
            {
                Open::Group
            }
            b'(' => Open::Paren,
            b'[' => Open::Bracket,
            _ => {
                self.impl_header = false;
                Open::Brace
            }
        };
        self.stack.push(kind);
        self.prev = Tok::Punct(c);
        self.i += 1;
    }

    /// A closing bracket. One that closes a template substitution or an f-string field
    /// resumes that literal's scan, to its end or its next field. `None`: it closes nothing.
    fn close(&mut self, c: u8) -> Option<()> {
        let open = self.stack.pop()?;
        let fits = match (open, c) {
            (Open::Paren | Open::Group, b')') | (Open::Bracket, b']') | (Open::Brace, b'}') => true,
            (Open::Template, b'}') => {
                self.i += 1;
                return self.template();
            }
            (Open::SpecField, b'}') => {
                self.i += 1;
                return self.format_spec();
            }
            (Open::Field(q, triple), b'}') => {
                self.i += 1;
                return self.py_body(q, triple, true);
            }
            _ => false,
        };
        if !fits {
            return None;
        }
        self.prev = Tok::Punct(c);
        self.i += 1;
        Some(())
    }

    fn word(&mut self) -> Option<()> {
        let start = self.i;
        while self.i < self.b.len() && is_word(self.b[self.i], self.fam) {
            self.i += 1;
        }
        let w = &self.b[start..self.i];
        let next = self.at(0);
        // String prefixes and raw identifiers.
        match self.fam {
            Family::Python
                if (next == b'"' || next == b'\'')
                    && w.len() <= 2
                    && w.iter().all(|c| {
                        matches!(c.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f' | b't')
                    }) =>
            {
                let prefix = w.to_vec();
                return self.py_string(&prefix);
            }
            Family::Rust if matches!(w, b"b" | b"c" | b"r" | b"br" | b"cr") => {
                if next == b'\'' && w == b"b" {
                    self.i += 1;
                    return self.quoted(b'\'', false);
                }
                let raw = w.ends_with(b"r");
                let hashes = self.b[self.i..].iter().take_while(|&&c| c == b'#').count();
                if next == b'"' && !raw {
                    self.i += 1;
                    return self.quoted(b'"', true);
                }
                if raw && self.at(hashes) == b'"' {
                    self.i += hashes + 1;
                    let mut close = vec![b'"'];
                    close.extend(std::iter::repeat_n(b'#', hashes));
                    let end = memchr::memmem::find(&self.b[self.i..], &close)?;
                    self.skip(end + close.len());
                    self.prev = Tok::Value;
                    return Some(());
                }
                if w == b"r" && hashes == 1 && is_word_start(self.at(1), self.fam) {
                    // `r#name`: its text is not the plain name.
                    self.i += 1;
                    while self.i < self.b.len() && is_word(self.b[self.i], self.fam) {
                        self.i += 1;
                    }
                    self.prev = Tok::Word(start, self.i);
                    return Some(());
                }
            }
            _ => {}
        }
        let range = (start, self.i);
        let name = self.word_text(range);
        if self.names.contains(name) && !self.hidden(start) {
            let may_define = self.may_define(name, start);
            let line = self.row + 1;
            let column = self
                .text
                .get(self.line_start..start)
                .map_or(1, |h| h.chars().count() + 1);
            self.out.push(Occurrence {
                name: name.to_string(),
                line,
                column,
                may_define,
            });
        }
        if self.fam == Family::Rust && name == "impl" {
            self.impl_header = true;
        }
        self.track_import(name);
        if self.line_first.is_none() {
            self.line_first = Some(range);
        }
        self.prev = Tok::Word(start, self.i);
        Some(())
    }

    /// Notes where an import statement starts and ends (`from` ends a JS/TS one's names).
    fn track_import(&mut self, word: &str) {
        let starts = self.line_first.is_none()
            && match self.fam {
                Family::Python => matches!(word, "import" | "from"),
                Family::Script => {
                    word == "import"
                        || (word == "export"
                            && self.b[self.i..].iter().find(|c| !c.is_ascii_whitespace())
                                == Some(&b'{'))
                }
                Family::Rust | Family::Go => false,
            };
        if starts && self.import.is_none() {
            self.import = Some(self.stack.len());
        } else if self.fam == Family::Script && word == "from" {
            self.import = None;
        }
    }

    /// A word the parsers do not list as this identifier: JS `#name` (the private name's text
    /// has its `#`), Rust `$name` (a macro metavariable), a JS label after `break`/`continue`.
    fn hidden(&self, start: usize) -> bool {
        let before = start.checked_sub(1).map(|k| self.b[k]);
        match self.fam {
            Family::Script => {
                before == Some(b'#')
                    || matches!(self.prev, Tok::Word(s, e)
                        if matches!(self.word_text((s, e)), "break" | "continue"))
            }
            Family::Rust => before == Some(b'$'),
            _ => false,
        }
    }

    /// Whether the word just read (`self.i` is past it, it began at `start`) may name a
    /// definition, or a local binding ([`crate::syntax::symbols`] leaves those and their uses
    /// out: a parse tells them apart).
    fn may_define(&self, name: &str, start: usize) -> bool {
        self.may_define_item(name) || self.may_bind_locally(name, start)
    }

    /// Whether the word may be bound inside a function (a parameter, a `let`, an assignment, a
    /// pattern …), by what surrounds it, erring towards yes. Never when it is called (`name(`),
    /// a macro, a member (`.name`), an object (`name.x`), a path's part (`a::name`,
    /// `name::x`) or imported, nor in Rust a capitalised name (a type, a constant, a variant). Python, where
    /// a function's every name may be assigned, narrower: an assignment's or annotation's target
    /// (`name =`, `name :=`, `name +=`, `name:`), a `for`, `as`, `lambda` or starred target, a
    /// `def` line's parameters, a tuple's first target.
    fn may_bind_locally(&self, name: &str, start: usize) -> bool {
        if self.import.is_some() {
            return false;
        }
        let blank = |c: &&u8| matches!(c, b' ' | b'\t');
        let mut after = self.b[self.i..].iter().skip_while(blank).copied();
        let (n1, n2) = (after.next(), after.next());
        let mut before = self.b[..start].iter().rev().skip_while(blank).copied();
        let (b1, b2) = (before.next(), before.next());
        if matches!(n1, Some(b'(' | b'!' | b'.'))
            || b1 == Some(b'.')
            || (n1 == Some(b':') && n2 == Some(b':'))
            || (b1 == Some(b':') && b2 == Some(b':'))
        {
            return false;
        }
        let prev_word = match self.prev {
            Tok::Word(s, e) => Some(self.word_text((s, e))),
            _ => None,
        };
        match self.fam {
            Family::Rust => !name.starts_with(|c: char| c.is_uppercase()),
            Family::Python => {
                let first_word = self.line_first.map(|r| self.word_text(r));
                let assigned = match (n1, n2) {
                    (Some(b'='), n) => n != Some(b'='),
                    (Some(b':'), _) => true,
                    (Some(op), Some(b'=')) => b"+-*/%&|^@<>".contains(&op),
                    (Some(b'/' | b'*' | b'<' | b'>'), Some(c)) => c == n1.unwrap_or(0),
                    _ => false,
                };
                assigned
                    || prev_word.is_some_and(|w| matches!(w, "for" | "as" | "lambda"))
                    || b1 == Some(b'*')
                    || matches!(first_word, Some("def" | "for" | "lambda" | "async"))
                    || (n1 == Some(b',') && self.line_first.is_none())
            }
            Family::Script | Family::Go => true,
        }
    }

    /// Whether the word may name a definition (an item, a class member …).
    fn may_define_item(&self, name: &str) -> bool {
        let prev_word = match self.prev {
            Tok::Word(s, e) => Some(self.word_text((s, e))),
            _ => None,
        };
        if prev_word.is_some_and(|w| self.fam.definers().contains(&w)) {
            return true;
        }
        let first_word = self.line_first.map(|r| self.word_text(r));
        let first_on_line = self.line_first.is_none();
        match self.fam {
            Family::Python => first_on_line && is_constant_name(name),
            Family::Rust => self.impl_header,
            Family::Go => {
                matches!(self.stack.last(), Some(Open::Group))
                    || (self.prev == Tok::Punct(b')') && first_word == Some("func"))
                    || (self.prev == Tok::Punct(b',') && first_word == Some("const"))
            }
            Family::Script => self.prev == Tok::Punct(b'*') || self.script_definition_follows(),
        }
    }

    /// JS/TS: what follows the word makes it a declarator (`= …`, `: T`), a method (`(…) {`,
    /// `(…): T`) or a generic one (`<`).
    fn script_definition_follows(&self) -> bool {
        let rest = &self.b[self.i..];
        let skip_blank = |k: usize| {
            k + rest[k.min(rest.len())..]
                .iter()
                .take_while(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
                .count()
        };
        let k = skip_blank(0);
        match rest.get(k) {
            Some(b'=') => !matches!(rest.get(k + 1), Some(b'=' | b'>')),
            Some(b':' | b'<') => true,
            Some(b'(') => {
                // The matching `)`, then `{` or `:` (a method), not `;`, `.`, `)` … (a call).
                let mut depth = 0usize;
                for (j, &c) in rest.iter().enumerate().skip(k).take(4096) {
                    match c {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                let n = skip_blank(j + 1);
                                return matches!(rest.get(n), Some(b'{' | b':'));
                            }
                        }
                        _ => {}
                    }
                }
                true
            }
            _ => false,
        }
    }
}

/// `MAX_SIZE`, `DEFAULT_2`: what a Python module constant looks like.
fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests;
