//! Which parser covers a file, chosen by its extension alone, and the tree-sitter parsers
//! themselves.
//!
//! Invariants:
//! - The grammar follows the extension exactly: `.ts/.mts/.cts` use the TypeScript grammar and
//!   `.tsx` the TSX grammar (each rejects the other's valid code), `.js/.jsx/.mjs/.cjs` the
//!   JavaScript grammar, which includes JSX.
//! - One parser per language per thread, created on first use and reused: creating a parser and
//!   loading a grammar costs more than an incremental reparse.
//! - A parse is bounded in time; a parse that runs out returns `None` and leaves the thread's
//!   parser reset for the next caller.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{InputEdit, ParseOptions, Parser, Point, Tree};

/// A language the built-in parsers cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Rust,
    Go,
    Json,
    Toml,
    Yaml,
}

/// How many tree-sitter languages there are (the first six variants).
const TREE_SITTER_COUNT: usize = 6;

/// A parse that takes longer than this is abandoned: the gate then says nothing about the file
/// rather than holding up the whole patch (a 2,000-line file takes about 10 ms).
const PARSE_BUDGET: Duration = Duration::from_secs(3);

impl Language {
    /// The language of a repository-relative path, from its extension (case-insensitive).
    pub fn from_path(rel: &str) -> Option<Language> {
        let name = rel.rsplit(['/', '\\']).next().unwrap_or(rel);
        let (stem, ext) = name.rsplit_once('.')?;
        if stem.is_empty() {
            // `.json` alone is a dotfile, not a JSON file with an empty name.
            return None;
        }
        Some(match ext.to_ascii_lowercase().as_str() {
            "py" | "pyi" => Language::Python,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "rs" => Language::Rust,
            "go" => Language::Go,
            "json" | "jsonc" => Language::Json,
            "toml" => Language::Toml,
            "yaml" | "yml" => Language::Yaml,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Rust => "Rust",
            Language::Go => "Go",
            Language::Json => "JSON",
            Language::Toml => "TOML",
            Language::Yaml => "YAML",
        }
    }

    /// Whether a tree-sitter grammar parses this language (the others have whole-document
    /// parsers that stop at the first error).
    pub fn is_tree_sitter(self) -> bool {
        self.slot().is_some()
    }

    fn slot(self) -> Option<usize> {
        match self {
            Language::Python => Some(0),
            Language::JavaScript => Some(1),
            Language::TypeScript => Some(2),
            Language::Tsx => Some(3),
            Language::Rust => Some(4),
            Language::Go => Some(5),
            Language::Json | Language::Toml | Language::Yaml => None,
        }
    }

    fn grammar(self) -> Option<tree_sitter::Language> {
        Some(match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Json | Language::Toml | Language::Yaml => return None,
        })
    }
}

thread_local! {
    static PARSERS: RefCell<[Option<Parser>; TREE_SITTER_COUNT]> =
        const { RefCell::new([const { None }; TREE_SITTER_COUNT]) };
}

/// Parses `text` from scratch. `None`: not a tree-sitter language, or the parse ran out of time.
pub fn parse(lang: Language, text: &str) -> Option<Tree> {
    with_parser(lang, |parser| run(parser, text, None))
}

/// Parses `after` reusing `before_tree`, the tree of the original text, where `edit` (from
/// [`single_edit`]) is the one byte range where the two differ: only that part is parsed again.
pub fn reparse(lang: Language, before_tree: &Tree, edit: &InputEdit, after: &str) -> Option<Tree> {
    let mut old = before_tree.clone();
    old.edit(edit);
    with_parser(lang, |parser| run(parser, after, Some(&old)))
}

/// Parses `text` reusing `old`, a tree already edited to match it.
pub(super) fn parse_from(lang: Language, text: &str, old: &Tree) -> Option<Tree> {
    with_parser(lang, |parser| run(parser, text, Some(old)))
}

/// The smallest single edit that turns `before` into `after` (common prefix and suffix removed,
/// both cut on character boundaries).
pub fn single_edit(before: &str, after: &str) -> InputEdit {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let mut prefix = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    while !before.is_char_boundary(prefix) || !after.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let room = b.len().min(a.len()) - prefix;
    let mut suffix = b
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    while !before.is_char_boundary(b.len() - suffix) || !after.is_char_boundary(a.len() - suffix) {
        suffix -= 1;
    }
    let old_end = b.len() - suffix;
    let new_end = a.len() - suffix;
    InputEdit {
        start_byte: prefix,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point_at(b, prefix),
        old_end_position: point_at(b, old_end),
        new_end_position: point_at(a, new_end),
    }
}

/// The (row, byte column) of byte offset `at`, both 0-based, as tree-sitter counts them.
fn point_at(text: &[u8], at: usize) -> Point {
    let head = &text[..at];
    let row = memchr::memchr_iter(b'\n', head).count();
    let line_start = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    Point {
        row,
        column: at - line_start,
    }
}

fn with_parser<T>(lang: Language, f: impl FnOnce(&mut Parser) -> Option<T>) -> Option<T> {
    let slot = lang.slot()?;
    PARSERS.with(|cell| {
        let mut parsers = cell.try_borrow_mut().ok()?;
        let entry = &mut parsers[slot];
        if entry.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&lang.grammar()?).ok()?;
            *entry = Some(parser);
        }
        f(entry.as_mut()?)
    })
}

fn run(parser: &mut Parser, text: &str, old: Option<&Tree>) -> Option<Tree> {
    let deadline = Instant::now() + PARSE_BUDGET;
    let mut progress = |_: &tree_sitter::ParseState| {
        if Instant::now() > deadline {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = text.as_bytes();
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        old,
        Some(ParseOptions::new().progress_callback(&mut progress)),
    );
    if tree.is_none() {
        // A cancelled parse would otherwise be resumed by the next call on this parser.
        parser.reset();
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_pick_the_grammar() {
        let cases = [
            ("a/b.py", Some(Language::Python)),
            ("b.pyi", Some(Language::Python)),
            ("x.JS", Some(Language::JavaScript)),
            ("x.jsx", Some(Language::JavaScript)),
            ("x.mjs", Some(Language::JavaScript)),
            ("x.cjs", Some(Language::JavaScript)),
            ("x.ts", Some(Language::TypeScript)),
            ("x.mts", Some(Language::TypeScript)),
            ("x.cts", Some(Language::TypeScript)),
            ("x.d.ts", Some(Language::TypeScript)),
            ("x.tsx", Some(Language::Tsx)),
            ("src/lib.rs", Some(Language::Rust)),
            ("main.go", Some(Language::Go)),
            ("package.json", Some(Language::Json)),
            ("Cargo.toml", Some(Language::Toml)),
            (".github/workflows/ci.yml", Some(Language::Yaml)),
            ("k8s.yaml", Some(Language::Yaml)),
            ("run.sh", None),
            ("Makefile", None),
            (".json", None),
            ("dir.py/README", None),
        ];
        for (path, want) in cases {
            assert_eq!(Language::from_path(path), want, "{path}");
        }
    }

    #[test]
    fn every_grammar_loads_with_this_core() {
        for lang in [
            Language::Python,
            Language::JavaScript,
            Language::TypeScript,
            Language::Tsx,
            Language::Rust,
            Language::Go,
        ] {
            let tree = parse(lang, "").expect("the grammar's ABI is one the core reads");
            assert!(!tree.root_node().has_error(), "{lang:?}");
        }
        assert!(parse(Language::Json, "{}").is_none());
    }

    #[test]
    fn single_edit_finds_the_changed_range_on_char_boundaries() {
        let e = single_edit("ab\ncé\nx", "ab\ncè\nx");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (4, 6, 6));
        assert_eq!(e.start_position, Point { row: 1, column: 1 });
        // Repeated text: the prefix and suffix must not overlap.
        let e = single_edit("aaa", "aaaa");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (3, 3, 4));
        let e = single_edit("same", "same");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (4, 4, 4));
    }

    #[test]
    fn incremental_reparse_matches_a_full_parse() {
        let before = "fn a() {\n    let x = 1;\n}\n\nfn b() {}\n";
        let after = "fn a() {\n    let x = (1;\n}\n\nfn b() {}\n";
        let old = parse(Language::Rust, before).expect("parse");
        let inc =
            reparse(Language::Rust, &old, &single_edit(before, after), after).expect("reparse");
        let full = parse(Language::Rust, after).expect("parse");
        assert_eq!(
            inc.root_node().to_sexp(),
            full.root_node().to_sexp(),
            "the reused tree must give the same result"
        );
        assert!(inc.root_node().has_error());
        // And back, from the broken tree to the original (how the gate parses the original).
        let back =
            reparse(Language::Rust, &inc, &single_edit(after, before), before).expect("reparse");
        assert_eq!(back.root_node().to_sexp(), old.root_node().to_sexp());
        let py_before = "def f(a):\n    if a:\n        return 1\n    return 2\n";
        let py_after = "def f(a):\n    if a:\n        return (1\n    return 2\n";
        let broken = parse(Language::Python, py_after).expect("parse");
        let back = reparse(
            Language::Python,
            &broken,
            &single_edit(py_after, py_before),
            py_before,
        )
        .expect("reparse");
        assert_eq!(
            back.root_node().to_sexp(),
            parse(Language::Python, py_before)
                .expect("parse")
                .root_node()
                .to_sexp()
        );
    }
}
