use super::*;
use crate::syntax::symbols;

fn set<'a>(names: &[&'a str]) -> HashSet<&'a str> {
    names.iter().copied().collect()
}

/// (name, line, column) of the occurrences, and of those that may define.
fn found(lang: Language, text: &str, names: &[&str]) -> Vec<(String, usize, usize, bool)> {
    occurrences(lang, text, &set(names))
        .expect("lexed")
        .into_iter()
        .map(|o| (o.name, o.line, o.column, o.may_define))
        .collect()
}

fn lines(found: &[(String, usize, usize, bool)]) -> Vec<usize> {
    found.iter().map(|f| f.1).collect()
}

/// The lexer agrees with the parser on `text`: every use the parser lists is an occurrence,
/// every occurrence of a name is a use unless one of them is flagged `may_define`, and every
/// definition's name has a flagged occurrence.
fn agrees_with_the_parser(rel: &str, text: &str) {
    let lang = Language::from_path(rel).expect("covered");
    let parsed = symbols::of(rel, text).expect("parsed");
    let contextual = match lang {
        Language::Python => Family::Python,
        Language::Rust => Family::Rust,
        Language::Go => Family::Go,
        _ => Family::Script,
    }
    .contextual_keywords();
    let names: HashSet<&str> = parsed
        .uses
        .iter()
        .map(|u| u.0.as_str())
        .chain(parsed.definitions.iter().map(|d| d.name.as_str()))
        .filter(|n| !contextual.contains(n) && !KEYWORDS.contains(n) && !n.starts_with('#'))
        // Rust's wildcard and Go's blank identifier are never a name a use refers to (the
        // parsers list `_` inside a macro's tokens, the lexer finds it in every pattern).
        .filter(|n| !(*n == "_" && matches!(lang, Language::Rust | Language::Go)))
        .collect();
    let occ = occurrences(lang, text, &names).expect("lexed");
    let at: HashSet<(&str, usize, usize)> = occ
        .iter()
        .map(|o| (o.name.as_str(), o.line, o.column))
        .collect();
    for (name, line, col) in &parsed.uses {
        if names.contains(name.as_str()) {
            assert!(
                at.contains(&(name.as_str(), *line, *col)),
                "{rel}: the use of `{name}` at {line}:{col} was not found"
            );
        }
    }
    let uses: HashSet<(&str, usize, usize)> = parsed
        .uses
        .iter()
        .map(|(n, l, c)| (n.as_str(), *l, *c))
        .collect();
    // An occurrence the parser does not list is a definition's name or a local's (its binding
    // or a use of it): then the file has a flagged occurrence, and is parsed.
    // Per name: the check looks for one name as much as for several.
    let flagged: HashSet<&str> = occ
        .iter()
        .filter(|o| o.may_define)
        .map(|o| o.name.as_str())
        .collect();
    for o in &occ {
        assert!(
            flagged.contains(o.name.as_str())
                || uses.contains(&(o.name.as_str(), o.line, o.column)),
            "{rel}: `{}` at {}:{} is no use and nothing is flagged",
            o.name,
            o.line,
            o.column
        );
    }
    for d in &parsed.definitions {
        if names.contains(d.name.as_str()) {
            assert!(
                occ.iter().any(|o| o.name == d.name && o.may_define),
                "{rel}: the definition of `{}` is not flagged",
                d.name
            );
        }
    }
}

/// Keywords and Rust's primitive types, which the parsers list as identifiers in some places
/// only (a macro's tokens): never a definition's name, so never a name the reference check
/// looks for.
const KEYWORDS: &[&str] = &[
    "as",
    "async",
    "await",
    "break",
    "const",
    "continue",
    "crate",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "def",
    "class",
    "import",
    "from",
    "pass",
    "None",
    "True",
    "False",
    "not",
    "and",
    "or",
    "is",
    "lambda",
    "with",
    "yield",
    "function",
    "var",
    "new",
    "this",
    "typeof",
    "func",
    "go",
    "chan",
    "defer",
    "package",
    "range",
    "select",
    "switch",
    "case",
    "default",
    "interface",
    "map",
    "str",
    "bool",
    "char",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "f32",
    "f64",
];

const PYTHON: &str = r#"'''Module doc mentions load_rows and MAX_ROWS.'''
import os
from app.store import load_rows, save_rows as keep_rows

MAX_ROWS = 10
LIMITS: dict = {"load_rows": 1}


class RowCache(object):
    """load_rows is cached here."""

    def fetch_rows(self, key, default=None):
        # load_rows(key) in a comment
        rows = load_rows(key) or default
        msg = f"{load_rows.__name__}: {len(rows):>{MAX_ROWS}} rows {{load_rows}} {key!r}"
        raw = rb'load_rows\' still raw' + r"load_rows"
        return [keep_rows(r) for r in rows if r], msg, raw


@decorate(load_rows)
def run_all(argv=os.environ):
    text = """
    load_rows()
    """
    value = load_rows(argv, limit=MAX_ROWS) \
        + keep_rows(argv)
    lam = lambda x: load_rows(x)
    return RowCache().fetch_rows(value), text, lam, f'{"nested"} {load_rows}'
"#;

const SCRIPT: &str = r#"#!/usr/bin/env node
// loadRows in a comment
import { loadRows, saveRows as keepRows } from "./store";
/* loadRows
   in a block */
export const MAX_ROWS = 10, loadAll = () => loadRows(1);
let counter = 0;

export class RowCache {
  #loadRows = 1;
  constructor(limit) { this.limit = limit ?? MAX_ROWS; }
  fetchRows(key) {
    const rows = loadRows(key) || [];
    const msg = `${loadRows.name}: ${rows.length} {loadRows} ${`${keepRows(key)}`}`;
    const re = /loadRows["'`]/g, half = rows.length / 2 / counter;
    return { rows, loadRows, half, msg, re, n: this.#loadRows };
  }
  static async reloadRows() { return loadRows(0); }
}

export function runAll(argv) {
  outer: for (const a of argv) {
    if (a === 'loadRows') continue outer;
    keepRows(loadRows(a));
  }
  return new RowCache(MAX_ROWS).fetchRows(argv) ? 'x\'loadRows' : "y";
}
"#;

const TYPED: &str = r#"import { loadRows } from './store';

export interface RowShape { id: number; loadRows?: string }
export type RowList<T> = Array<T>;
export enum Mode { Fast, Slow }
declare function externalRows(n: number): RowShape[];

export abstract class RowCache<T extends RowShape> {
  private rows: RowList<T> = [];
  abstract reloadRows(): void;
  fetchRows(key: string): RowList<T> {
    const found = loadRows(key) as RowList<T>;
    return found.length > 0 ? found : externalRows(Mode.Fast);
  }
}

export const runAll = (argv: string[]): number => loadRows(argv).length;
"#;

const RUST: &str = r##"//! Doc mentions load_rows.
use std::fmt;

/* load_rows /* nested load_rows */ still a comment load_rows */
pub const MAX_ROWS: usize = 10;
static mut COUNTER: usize = 0;

pub struct RowCache<'rows> {
    rows: &'rows [String],
}

impl<'rows> fmt::Display for RowCache<'rows> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} load_rows {load_rows}", load_rows(self.rows))
    }
}

pub fn load_rows(rows: &[String]) -> usize {
    let raw = r#"load_rows "quoted" "#;
    let bytes = b"load_rows";
    let c = '"';
    let q = b'\'';
    'outer: for r in rows {
        if r.is_empty() {
            break 'outer;
        }
    }
    rows.len() + raw.len() + bytes.len() + c.len_utf8() + q as usize + MAX_ROWS
}

macro_rules! twice {
    ($load_rows:expr) => {
        $load_rows + load_rows(&[])
    };
}

fn run_all(cache: &RowCache) -> usize {
    twice!(load_rows(cache.rows))
}
"##;

const GO: &str = r#"// Package store mentions LoadRows.
package store

import (
	"fmt"
	"strings"
)

/* LoadRows in a block */
const (
	MaxRows = 10
	MinRows, MidRows = 1, 5
)

type (
	RowCache struct {
		Rows []string `json:"LoadRows"`
	}
	RowList []string
)

const Limit, Other = 3, 4

func LoadRows(rows []string) int {
	r := '\''
	return len(rows) + int(r) + MaxRows
}

func (c *RowCache) FetchRows(key string) RowList {
	s := fmt.Sprintf("LoadRows %d", LoadRows(c.Rows))
	return strings.Split(s+`LoadRows
	raw`, " ")
}
"#;

#[test]
fn the_lexer_agrees_with_the_parser_on_every_name() {
    agrees_with_the_parser("a.py", PYTHON);
    agrees_with_the_parser("a.js", SCRIPT);
    agrees_with_the_parser("a.ts", TYPED);
    agrees_with_the_parser("a.rs", RUST);
    agrees_with_the_parser("a.go", GO);
}

#[test]
fn python_strings_comments_and_f_string_fields() {
    let f = found(Language::Python, PYTHON, &["load_rows"]);
    // Not in the docstrings, comments, plain or raw strings, nor `{{load_rows}}`; in the
    // f-string fields (also nested quotes) and everywhere in code.
    assert_eq!(lines(&f), vec![3, 14, 15, 20, 25, 27, 28]);
    assert!(f.iter().all(|o| !o.3), "{f:?}");
    let c = found(
        Language::Python,
        PYTHON,
        &["MAX_ROWS", "fetch_rows", "RowCache"],
    );
    let flagged: Vec<(&str, usize)> = c
        .iter()
        .filter(|o| o.3)
        .map(|o| (o.0.as_str(), o.1))
        .collect();
    assert_eq!(
        flagged,
        vec![("MAX_ROWS", 5), ("RowCache", 9), ("fetch_rows", 12)]
    );
}

#[test]
fn script_strings_templates_regexes_and_private_names() {
    let f = found(Language::JavaScript, SCRIPT, &["loadRows"]);
    // Not in comments, strings, the regex or `#loadRows`; in template substitutions (nested
    // too), the shorthand property and code.
    assert_eq!(lines(&f), vec![3, 6, 13, 14, 16, 18, 24]);
    let flagged = found(
        Language::JavaScript,
        SCRIPT,
        &["MAX_ROWS", "loadAll", "fetchRows"],
    );
    assert_eq!(
        flagged
            .iter()
            .filter(|o| o.3)
            .map(|o| o.1)
            .collect::<Vec<_>>(),
        // The two declarations and the method; `MAX_ROWS` read as a value (lines 11 and 26)
        // may be a local too, as far as the lexer can tell.
        vec![6, 6, 11, 12, 26]
    );
    // The label after `continue` is not a use.
    let labels = found(Language::JavaScript, SCRIPT, &["outer"]);
    assert_eq!(lines(&labels), vec![22]);
}

#[test]
fn rust_nested_comments_raw_strings_chars_lifetimes_and_macros() {
    let f = found(Language::Rust, RUST, &["load_rows"]);
    // Not in the nested comment, the raw, byte or format strings, nor `$load_rows`; in macro
    // arguments and bodies.
    assert_eq!(lines(&f), vec![14, 18, 33, 38]);
    assert_eq!(
        f.iter().filter(|o| o.3).map(|o| o.1).collect::<Vec<_>>(),
        vec![18]
    );
    // A lifetime or a label is an identifier to the parser.
    assert_eq!(lines(&found(Language::Rust, RUST, &["rows"])).len(), 10);
    assert_eq!(
        lines(&found(Language::Rust, RUST, &["outer"])),
        vec![23, 25]
    );
    // The type an impl is for may be defined there (an impl counts as a definition).
    let r = found(Language::Rust, RUST, &["RowCache"]);
    assert_eq!(
        r.iter().map(|o| (o.1, o.3)).collect::<Vec<_>>(),
        vec![(8, true), (12, true), (37, false)]
    );
}

#[test]
fn go_groups_raw_strings_and_runes() {
    let f = found(Language::Go, GO, &["LoadRows"]);
    assert_eq!(
        f.iter().map(|o| (o.1, o.3)).collect::<Vec<_>>(),
        vec![(24, true), (30, false)]
    );
    let g = found(
        Language::Go,
        GO,
        &["MidRows", "RowList", "Other", "FetchRows"],
    );
    assert_eq!(g.len(), 5);
    assert!(g.iter().all(|o| o.3), "{g:?}");
}

#[test]
fn it_declines_what_it_cannot_be_sure_of() {
    let names = set(&["loadRows", "match"]);
    let no = |lang, text: &str| occurrences(lang, text, &names).is_none();
    assert!(no(Language::Tsx, "const a = <Row load={loadRows} />;\n"));
    assert!(no(Language::TypeScript, "const a = <T>loadRows;\n"));
    assert!(no(Language::JavaScript, "const a = 'open\nloadRows;\n"));
    assert!(no(Language::Python, "x = match\n"), "a contextual keyword");
    assert!(no(Language::Rust, "fn a() { loadRows(\n"), "unbalanced");
    assert!(
        no(Language::Rust, "/* /* */ loadRows\n"),
        "a comment left open"
    );
    assert!(no(Language::Go, "x := \"open\nloadRows\n"));
    // A comparison is no JSX.
    let yes = occurrences(Language::Tsx, "if (a < loadRows) {}\n", &set(&["loadRows"]));
    assert_eq!(yes.map(|v| v.len()), Some(1));
}

#[test]
fn columns_count_characters() {
    let f = found(Language::Python, "s = 'é'; load_rows()\n", &["load_rows"]);
    assert_eq!((f[0].1, f[0].2), (1, 10));
}

/// Real code: this crate's own Rust sources, and every Python, JS and TS file under `tests/`.
#[test]
fn the_lexer_agrees_with_the_parser_on_this_repository() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            // Not through symbolic links: a fixture may hold a loop.
            let Ok(kind) = e.file_type() else {
                continue;
            };
            if kind.is_dir() {
                walk(&p, out);
            } else if p
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| matches!(x, "rs" | "py" | "js" | "ts" | "go"))
                && kind.is_file()
            {
                out.push(p);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src/syntax"), &mut files);
    walk(&root.join("tests"), &mut files);
    files.sort();
    // A debug build parses slowly: a sample of at most 80 files.
    let step = files.len() / 80 + 1;
    let files: Vec<_> = files.into_iter().step_by(step).collect();
    let mut checked = 0;
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let rel = path.to_string_lossy().to_string();
        let Some(parsed) = symbols::of(&rel, &text) else {
            continue;
        };
        // Files with syntax errors on purpose are for the parser's error recovery, not this.
        let lang = Language::from_path(&rel).expect("covered");
        if crate::syntax::languages::parse(lang, &text).is_none_or(|t| t.root_node().has_error())
            || parsed.uses.is_empty()
        {
            continue;
        }
        let all: HashSet<&str> = parsed.uses.iter().map(|u| u.0.as_str()).collect();
        if occurrences(lang, &text, &all).is_none() {
            continue;
        }
        agrees_with_the_parser(&rel, &text);
        checked += 1;
    }
    assert!(checked > 20, "only {checked} files compared");
}

/// (line, flagged) of each occurrence of `name`.
fn flags(lang: Language, text: &str, name: &str) -> Vec<(usize, bool)> {
    found(lang, text, &[name])
        .into_iter()
        .map(|f| (f.1, f.3))
        .collect()
}

#[test]
fn a_local_binding_is_flagged_a_call_or_an_import_is_not() {
    let js = "import {\n  loadRows,\n} from \"./a\";\nexport { loadRows };\nfunction f({ loadRows }) {\n  return loadRows(1) + this.loadRows;\n}\nconst g = loadRows => 1;\n";
    assert_eq!(
        flags(Language::JavaScript, js, "loadRows"),
        vec![
            (2, false),
            (4, false),
            (5, true),
            (6, false),
            (6, false),
            (8, true)
        ]
    );
    let py = "from a import (\n    load_rows,\n)\n\n\ndef f(load_rows=None):\n    load_rows = 1\n    return load_rows(2), m.load_rows, [load_rows]\n";
    assert_eq!(
        flags(Language::Python, py, "load_rows"),
        vec![
            (2, false),
            (6, true),
            (7, true),
            (8, false),
            (8, false),
            (8, false)
        ]
    );
    let rs = "use crate::cli::ready;\nfn f(ready: bool) -> bool {\n    let r = cli::ready();\n    ready && ready!() && Ready\n}\n";
    assert_eq!(
        flags(Language::Rust, rs, "ready"),
        vec![(1, false), (2, true), (3, false), (4, true), (4, false)]
    );
}
