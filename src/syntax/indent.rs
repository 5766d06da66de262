//! Python indentation errors, which tree-sitter accepts (a body not indented after `if a:` parses
//! as an empty block): a small tokenizer finds where logical lines start and checks their
//! indentation the way CPython's tokenizer and parser do, with CPython's messages.
//!
//! Invariants:
//! - Only the start of a logical line is measured: lines inside brackets, inside a
//!   triple-quoted string (f-strings included, their replacement fields being code), after a
//!   backslash continuation, and blank or comment-only lines are skipped.
//! - The check goes on after an error, assuming what the author most likely meant (an unexpected
//!   indent opens a level), so an early error does not hide or invent later ones: the gate
//!   compares the errors of the original with those of the patched text.
//! - Indentation is measured twice, with tabs to the next multiple of 8 and with a tab as one
//!   column; where the two disagree on the nesting it is CPython's TabError.

/// What is wrong with a line's indentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IndentKind {
    /// A line indented deeper than the block it is in, with no `:` line before it.
    Unexpected,
    /// A block opener (`if a:`) whose next line is not indented deeper.
    Expected,
    /// A dedent to a column that no enclosing block started at.
    Unindent,
    /// Tabs and spaces mixed so that the nesting depends on the tab width.
    Tab,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct IndentError {
    /// 1-based line.
    pub line: usize,
    /// 0-based byte column of the line's first token.
    pub col: usize,
    pub kind: IndentKind,
    pub message: String,
}

/// Nested f-strings deeper than this are not followed (hostile input would otherwise recurse
/// without bound); Python itself limits the nesting far below it.
const MAX_NESTING: usize = 64;

/// The indentation errors of a Python source text, in line order.
pub(super) fn check(text: &str) -> Vec<IndentError> {
    let mut lexer = Lexer {
        s: text.as_bytes(),
        i: 0,
        line: 1,
    };
    if lexer.s.starts_with("\u{feff}".as_bytes()) {
        lexer.i = 3;
    }
    let mut out = Vec::new();
    // (columns with tab width 8, columns with tab width 1) of each open block.
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    // The last logical line, when it ended with `:` : (its line, its first keyword).
    let mut opener: Option<(usize, String)> = None;
    while lexer.i < lexer.s.len() {
        let line = lexer.line;
        let (col, alt, width) = lexer.indentation();
        if lexer.rest_of_line_is_blank() {
            lexer.skip_line();
            continue;
        }
        let pending = opener.take();
        let (top, top_alt) = *stack.last().unwrap_or(&(0, 0));
        let mut error = |kind: IndentKind, message: String| {
            out.push(IndentError {
                line,
                col: width,
                kind,
                message,
            })
        };
        if col > top {
            if pending.is_none() {
                error(IndentKind::Unexpected, "unexpected indent".into());
            } else if alt <= top_alt {
                error(IndentKind::Tab, TAB_MESSAGE.into());
            }
            stack.push((col, alt));
        } else {
            if let Some((at, keyword)) = &pending {
                error(IndentKind::Expected, expected_message(*at, keyword));
            }
            while stack.len() > 1 && stack.last().is_some_and(|&(c, _)| c > col) {
                stack.pop();
            }
            match stack.last() {
                Some(&(c, _)) if c != col => {
                    error(
                        IndentKind::Unindent,
                        "unindent does not match any outer indentation level".into(),
                    );
                    stack.push((col, alt));
                }
                Some(&(_, a)) if a != alt => error(IndentKind::Tab, TAB_MESSAGE.into()),
                _ => {}
            }
        }
        let keyword = lexer.first_keyword();
        if lexer.logical_line() {
            opener = Some((line, keyword));
        }
    }
    if let Some((at, keyword)) = opener {
        let last = lexer.line - usize::from(lexer.s.last() == Some(&b'\n'));
        out.push(IndentError {
            line: last.max(at),
            col: 0,
            kind: IndentKind::Expected,
            message: expected_message(at, &keyword),
        });
    }
    out
}

const TAB_MESSAGE: &str = "inconsistent use of tabs and spaces in indentation";

fn expected_message(line: usize, keyword: &str) -> String {
    let what = match keyword {
        "def" => "function definition".to_string(),
        "class" => "class definition".to_string(),
        "if" | "elif" | "else" | "for" | "while" | "try" | "except" | "finally" | "with"
        | "match" | "case" => format!("'{keyword}' statement"),
        _ => return format!("expected an indented block after line {line}"),
    };
    format!("expected an indented block after {what} on line {line}")
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    /// The 1-based line of `i`.
    line: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.s.get(self.i + ahead).copied()
    }

    /// Consumes the leading whitespace: (columns, tab-as-one columns, bytes).
    fn indentation(&mut self) -> (usize, usize, usize) {
        let (mut col, mut alt, start) = (0, 0, self.i);
        while let Some(c) = self.peek(0) {
            match c {
                b' ' => {
                    col += 1;
                    alt += 1;
                }
                b'\t' => {
                    col = (col / 8 + 1) * 8;
                    alt += 1;
                }
                // A form feed resets the column, as in CPython.
                b'\x0c' => {
                    col = 0;
                    alt = 0;
                }
                _ => break,
            }
            self.i += 1;
        }
        (col, alt, self.i - start)
    }

    fn rest_of_line_is_blank(&self) -> bool {
        matches!(self.peek(0), None | Some(b'\n' | b'#'))
            || (self.peek(0) == Some(b'\r') && matches!(self.peek(1), None | Some(b'\n')))
    }

    fn skip_line(&mut self) {
        match memchr::memchr(b'\n', &self.s[self.i..]) {
            Some(n) => {
                self.i += n + 1;
                self.line += 1;
            }
            None => self.i = self.s.len(),
        }
    }

    /// The first word of the logical line (the one after `async`), without consuming it.
    fn first_keyword(&self) -> String {
        let word = |from: usize| {
            let end = self.s[from..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                .map_or(self.s.len(), |n| from + n);
            (std::str::from_utf8(&self.s[from..end]).unwrap_or(""), end)
        };
        let (first, end) = word(self.i);
        if first == "async" {
            let next = self.s[end..]
                .iter()
                .position(|c| !matches!(c, b' ' | b'\t'))
                .map_or(self.s.len(), |n| end + n);
            return word(next).0.to_string();
        }
        first.to_string()
    }

    /// Consumes one logical line, up to and including its final newline; true when its last
    /// token is a `:` (it opens a block).
    fn logical_line(&mut self) -> bool {
        let mut depth = 0usize;
        let mut colon = false;
        while let Some(c) = self.peek(0) {
            match c {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    if depth == 0 {
                        return colon;
                    }
                }
                b' ' | b'\t' | b'\r' | b'\x0c' => self.i += 1,
                b'#' => {
                    let n =
                        memchr::memchr(b'\n', &self.s[self.i..]).unwrap_or(self.s.len() - self.i);
                    self.i += n;
                }
                b'\\' => {
                    // A continuation joins the next line; anything else after it is an error
                    // tree-sitter reports.
                    self.i += 1;
                    if self.peek(0) == Some(b'\r') {
                        self.i += 1;
                    }
                    if self.peek(0) == Some(b'\n') {
                        self.i += 1;
                        self.line += 1;
                    }
                }
                _ => {
                    colon = c == b':';
                    match c {
                        b'(' | b'[' | b'{' => {
                            depth += 1;
                            self.i += 1;
                        }
                        b')' | b']' | b'}' => {
                            depth = depth.saturating_sub(1);
                            self.i += 1;
                        }
                        b'"' | b'\'' => self.string(Prefix::default(), 0),
                        c if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => self.word(0),
                        _ => self.i += 1,
                    }
                }
            }
        }
        colon
    }

    /// An identifier, keyword or number; a string when it is a string prefix followed by a quote.
    fn word(&mut self, nesting: usize) {
        let start = self.i;
        while self
            .peek(0)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
        {
            self.i += 1;
        }
        if matches!(self.peek(0), Some(b'"' | b'\''))
            && let Some(prefix) = Prefix::parse(&self.s[start..self.i])
        {
            self.string(prefix, nesting);
        }
    }

    /// A string literal starting at its opening quote.
    fn string(&mut self, prefix: Prefix, nesting: usize) {
        let Some(q) = self.peek(0) else { return };
        let triple = self.peek(1) == Some(q) && self.peek(2) == Some(q);
        self.i += if triple { 3 } else { 1 };
        while let Some(c) = self.peek(0) {
            match c {
                b'\\' => {
                    // Raw or not, a backslash keeps the next character (a quote, a newline)
                    // inside the string.
                    self.i += 1;
                    if self.peek(0) == Some(b'\r') {
                        self.i += 1;
                    }
                    if self.peek(0) == Some(b'\n') {
                        self.line += 1;
                    }
                    self.i += 1;
                }
                b'\n' => {
                    if !triple {
                        // Unterminated: tree-sitter reports it; the next line is code again.
                        return;
                    }
                    self.line += 1;
                    self.i += 1;
                }
                _ if c == q => {
                    if !triple {
                        self.i += 1;
                        return;
                    }
                    if self.peek(1) == Some(q) && self.peek(2) == Some(q) {
                        self.i += 3;
                        return;
                    }
                    self.i += 1;
                }
                b'{' if prefix.format => {
                    if self.peek(1) == Some(b'{') {
                        self.i += 2;
                    } else {
                        self.i += 1;
                        if nesting >= MAX_NESTING {
                            continue;
                        }
                        self.replacement_field(nesting + 1);
                    }
                }
                _ => self.i += 1,
            }
        }
    }

    /// The code inside an f-string's `{…}`, up to and including the closing `}`.
    fn replacement_field(&mut self, nesting: usize) {
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            match c {
                b'}' if depth == 0 => {
                    self.i += 1;
                    return;
                }
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    self.i += 1;
                }
                b')' | b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    self.i += 1;
                }
                b'"' | b'\'' => self.string(Prefix::default(), nesting),
                b'\n' => {
                    self.line += 1;
                    self.i += 1;
                }
                c if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => self.word(nesting),
                _ => self.i += 1,
            }
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Prefix {
    /// An f-string or t-string: `{…}` holds code.
    format: bool,
}

impl Prefix {
    /// `r`, `b`, `u`, `f`, `t` and their two-letter combinations, any case.
    fn parse(word: &[u8]) -> Option<Prefix> {
        if word.is_empty() || word.len() > 2 {
            return None;
        }
        let lower: Vec<u8> = word.iter().map(u8::to_ascii_lowercase).collect();
        let ok = matches!(
            lower.as_slice(),
            b"r" | b"u" | b"b" | b"f" | b"t" | b"br" | b"rb" | b"fr" | b"rf" | b"tr" | b"rt"
        );
        ok.then(|| Prefix {
            format: lower.contains(&b'f') || lower.contains(&b't'),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(usize, IndentKind)> {
        check(text).into_iter().map(|e| (e.line, e.kind)).collect()
    }

    #[test]
    fn valid_code_has_no_errors() {
        let text = "\u{feff}import os\n\n\nclass A:\n    \"\"\"Doc.\n\nstill doc\n\"\"\"\n\n    def f(self, a,\n  b):\n        x = [\n1,\n    2]\n        if a: return 1\n        s = f\"{a['k']:>{b}} {{x}}\" + rb'\\'' \\\n   + 'y'\n        t = f'''\n{a}\n'''\n        # comment at any column\n  # another\n        return {\n    'a': 1}\n\n\nasync def g():\n    async with x:\n        pass\n\nmatch p:\n    case 1:\n        pass\n";
        assert_eq!(check(text), vec![]);
        assert_eq!(check(""), vec![]);
        assert_eq!(check("\n\n# only a comment"), vec![]);
        assert_eq!(check("x = 1\r\nif x:\r\n    y = 2\r\n"), vec![]);
    }

    #[test]
    fn body_not_indented_after_a_block_opener() {
        let errors = check("a = 1\n\nif a:\nb = 2\n");
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].line, 4);
        assert_eq!(errors[0].kind, IndentKind::Expected);
        assert_eq!(
            errors[0].message,
            "expected an indented block after 'if' statement on line 3"
        );
        let errors = check("class A:\n    def f(self):\n    pass\n");
        assert_eq!(
            errors[0].message,
            "expected an indented block after function definition on line 2"
        );
        let errors = check("async def f():\n# nothing\n");
        assert_eq!(errors[0].line, 2);
        assert_eq!(
            errors[0].message,
            "expected an indented block after function definition on line 1"
        );
    }

    #[test]
    fn unexpected_indent_and_unindent() {
        assert_eq!(
            kinds("a = 1\n    b = 2\n"),
            vec![(2, IndentKind::Unexpected)]
        );
        assert_eq!(kinds("  a = 1\n"), vec![(1, IndentKind::Unexpected)]);
        assert_eq!(
            kinds("if a:\n    b = 1\n  c = 2\nd = 3\n"),
            vec![(3, IndentKind::Unindent)]
        );
        let e = &check("if a:\n    b = 1\n  c = 2\n")[0];
        assert_eq!(
            e.message,
            "unindent does not match any outer indentation level"
        );
        assert_eq!(e.col, 2);
    }

    #[test]
    fn tabs_and_spaces_that_depend_on_the_tab_width() {
        // 8 spaces, then a tab: equal with tab width 8, not with tab width 1.
        assert_eq!(
            kinds("if a:\n        b = 1\n\tc = 2\n"),
            vec![(3, IndentKind::Tab)]
        );
        // Tabs throughout are fine.
        assert_eq!(kinds("if a:\n\tb = 1\n\tif b:\n\t\tc = 2\n"), vec![]);
    }

    #[test]
    fn strings_brackets_and_continuations_hide_line_starts() {
        assert_eq!(
            kinds("x = '''\n    not code\n'''\ny = (1,\n        2)\n"),
            vec![]
        );
        assert_eq!(kinds("x = 1 + \\\n        2\n"), vec![]);
        // A colon inside a string or brackets does not open a block.
        assert_eq!(kinds("x = 'a:'\ny = {1:\n2}\n"), vec![]);
        // Nested quotes in a replacement field (Python 3.12).
        assert_eq!(kinds("x = f\"{d[\"k\"]}:\"\ny = 1\n"), vec![]);
        // An escaped quote does not end a raw string.
        assert_eq!(kinds("x = r'\\'' \ny = 1\n"), vec![]);
    }

    #[test]
    fn checking_goes_on_after_an_error() {
        assert_eq!(
            kinds("a = 1\n    b = 2\n    c = 3\nd = 4\nif d:\ne = 5\n"),
            vec![(2, IndentKind::Unexpected), (6, IndentKind::Expected)]
        );
    }
}
