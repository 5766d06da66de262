use super::*;

/// (qualified, start_line, end_line) of each definition a lookup names.
fn found(rel: &str, text: &str, query: &str) -> Vec<(String, usize, usize)> {
    match lookup(rel, text, query) {
        Ok(Lookup::Found(defs)) => lines(&defs),
        other => panic!("{query} in {rel}: expected Found, got {other:?}"),
    }
}

fn ambiguous(rel: &str, text: &str, query: &str) -> Vec<(String, usize, usize)> {
    match lookup(rel, text, query) {
        Ok(Lookup::Ambiguous(defs)) => lines(&defs),
        other => panic!("{query} in {rel}: expected Ambiguous, got {other:?}"),
    }
}

fn nearest(rel: &str, text: &str, query: &str) -> Vec<String> {
    match lookup(rel, text, query) {
        Ok(Lookup::NotFound(defs)) => defs.into_iter().map(|d| d.qualified).collect(),
        other => panic!("{query} in {rel}: expected NotFound, got {other:?}"),
    }
}

fn lines(defs: &[Definition]) -> Vec<(String, usize, usize)> {
    defs.iter()
        .map(|d| (d.qualified.clone(), d.start_line, d.end_line))
        .collect()
}

fn one(q: &str, start: usize, end: usize) -> Vec<(String, usize, usize)> {
    vec![(q.to_string(), start, end)]
}

const PY: &str = "\
class Config:
    def parse(self):
        return 1

    @staticmethod
    def load():
        return 2


class Other:
    def parse(self):
        return 3


def outer():
    def inner():
        return 4
    return inner


def parse():
    return 5
";

#[test]
fn python_methods_nested_functions_and_exact_paths() {
    assert_eq!(found("m.py", PY, "Config.parse"), one("Config.parse", 2, 3));
    assert_eq!(
        found("m.py", PY, "Other::parse"),
        one("Other.parse", 11, 12)
    );
    // The decorator belongs to the method.
    assert_eq!(found("m.py", PY, "Config.load"), one("Config.load", 5, 7));
    assert_eq!(found("m.py", PY, "outer.inner"), one("outer.inner", 16, 17));
    // A unique suffix is enough.
    assert_eq!(found("m.py", PY, "inner"), one("outer.inner", 16, 17));
    // The top-level function matches the whole path, so the methods do not compete.
    assert_eq!(found("m.py", PY, "parse"), one("parse", 21, 22));
    assert_eq!(found("m.py", PY, "Config"), one("Config", 1, 7));
}

#[test]
fn python_same_method_in_two_classes_is_ambiguous() {
    let text = "class A:\n    def run(self):\n        pass\n\nclass B:\n    def run(self):\n        pass\n";
    assert_eq!(
        ambiguous("m.py", text, "run"),
        vec![("A.run".to_string(), 2, 3), ("B.run".to_string(), 6, 7)]
    );
    assert_eq!(found("m.py", text, "B.run"), one("B.run", 6, 7));
}

#[test]
fn a_missing_symbol_gives_the_nearest_names() {
    assert_eq!(
        nearest("m.py", PY, "Config.prase"),
        vec!["Config.parse", "Other.parse", "parse"]
    );
    assert_eq!(nearest("m.py", PY, "Confg")[0], "Config");
    assert_eq!(nearest("m.py", "x = 1\n", "Config"), Vec::<String>::new());
}

const TS: &str = "\
export class Store {
  load(): number {
    return 1;
  }
  handle = () => {
    return 2;
  };
}

export class Cache {
  load(): number {
    return 3;
  }
}

export function outer() {
  function inner() {
    return 4;
  }
  const helper = () => 5;
  return inner() + helper();
}

export interface Shape {
  area(): number;
}

namespace Geo {
  export function area() {}
}
";

#[test]
fn typescript_classes_fields_nested_and_namespaces() {
    assert_eq!(found("m.ts", TS, "Store.load"), one("Store.load", 2, 4));
    assert_eq!(found("m.ts", TS, "Cache.load"), one("Cache.load", 11, 13));
    assert_eq!(found("m.ts", TS, "Store.handle"), one("Store.handle", 5, 7));
    assert_eq!(found("m.ts", TS, "outer.inner"), one("outer.inner", 17, 19));
    assert_eq!(
        found("m.ts", TS, "outer.helper"),
        one("outer.helper", 20, 20)
    );
    assert_eq!(found("m.ts", TS, "Shape"), one("Shape", 24, 26));
    assert_eq!(found("m.ts", TS, "Geo.area"), one("Geo.area", 29, 29));
    // `export` belongs to the class.
    assert_eq!(found("m.ts", TS, "Store"), one("Store", 1, 8));
    assert_eq!(
        ambiguous("m.ts", TS, "load"),
        vec![
            ("Store.load".to_string(), 2, 4),
            ("Cache.load".to_string(), 11, 13)
        ]
    );
    // The same text through the TSX and JavaScript grammars (no types in the JS copy).
    assert_eq!(found("m.tsx", TS, "Store.load"), one("Store.load", 2, 4));
}

#[test]
fn javascript_methods_and_arrow_functions() {
    let js = "class A {\n  run() {\n    return 1;\n  }\n  click = () => {\n    go();\n  };\n}\n\nconst make = function () {\n  function step() {}\n};\n";
    assert_eq!(found("m.js", js, "A.run"), one("A.run", 2, 4));
    assert_eq!(found("m.js", js, "A.click"), one("A.click", 5, 7));
    assert_eq!(found("m.js", js, "make.step"), one("make.step", 11, 11));
}

const RS: &str = "\
#[derive(Debug)]
pub struct Config {
    path: String,
}

impl Config {
    pub fn new() -> Self {
        Config { path: String::new() }
    }
}

impl std::fmt::Display for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, \"{}\", self.path)
    }
}

impl Config {
    pub fn parse(&self) -> usize {
        fn helper() -> usize {
            1
        }
        helper()
    }
}

mod net {
    pub struct Config;
    impl Config {
        pub fn new() -> Self {
            Config
        }
    }
}
";

#[test]
fn rust_reopened_impls_trait_impls_and_the_type_with_its_impls() {
    // Found in whichever impl block holds it.
    assert_eq!(
        found("m.rs", RS, "Config::parse"),
        one("Config::parse", 19, 24)
    );
    assert_eq!(found("m.rs", RS, "Config.new"), one("Config::new", 7, 9));
    // A trait impl's method belongs to the type.
    assert_eq!(found("m.rs", RS, "Config::fmt"), one("Config::fmt", 13, 15));
    assert_eq!(
        found("m.rs", RS, "Config::parse::helper"),
        one("Config::parse::helper", 20, 22)
    );
    // The type is the struct and every impl block of it (attributes included).
    assert_eq!(
        found("m.rs", RS, "Config"),
        vec![
            ("Config".to_string(), 1, 4),
            ("Config".to_string(), 6, 10),
            ("std::fmt::Display for Config".to_string(), 12, 16),
            ("Config".to_string(), 18, 25),
        ]
    );
    // One impl block by its label.
    assert_eq!(
        found("m.rs", RS, "Display for Config"),
        one("std::fmt::Display for Config", 12, 16)
    );
    assert_eq!(
        found("m.rs", RS, "net::Config::new"),
        one("net::Config::new", 30, 32)
    );
}

#[test]
fn rust_same_path_twice_is_ambiguous() {
    let text = "struct A;\nimpl A {\n    fn go() {}\n}\nimpl A {\n    fn go() {}\n}\n";
    assert_eq!(
        ambiguous("m.rs", text, "A::go"),
        vec![("A::go".to_string(), 3, 3), ("A::go".to_string(), 6, 6)]
    );
    // Two modules' `new`, asked for without a module.
    assert_eq!(
        ambiguous(
            "m.rs",
            "mod a {\n    fn new() {}\n}\nmod b {\n    fn new() {}\n}\n",
            "new"
        ),
        vec![("a::new".to_string(), 2, 2), ("b::new".to_string(), 5, 5)]
    );
}

const GO: &str = "\
package srv

type Server struct {
\taddr string
}

func (s *Server) Start() error {
\treturn nil
}

type Client struct{}

func (c Client) Start() error {
\treturn nil
}

func Start() {}
";

#[test]
fn go_methods_by_receiver_type() {
    assert_eq!(found("m.go", GO, "Server.Start"), one("Server.Start", 7, 9));
    assert_eq!(
        found("m.go", GO, "Client::Start"),
        one("Client.Start", 13, 15)
    );
    assert_eq!(found("m.go", GO, "Server"), one("Server", 3, 5));
    assert_eq!(found("m.go", GO, "Start"), one("Start", 17, 17));
    let no_top = GO.replace("func Start() {}\n", "");
    assert_eq!(
        ambiguous("m.go", &no_top, "Start"),
        vec![
            ("Server.Start".to_string(), 7, 9),
            ("Client.Start".to_string(), 13, 15)
        ]
    );
}

#[test]
fn files_without_a_parser_or_with_errors_are_refused() {
    assert_eq!(
        lookup("notes.txt", "Config", "Config"),
        Err(LookupError::NoParser)
    );
    assert_eq!(lookup("a.json", "{}", "x"), Err(LookupError::NoParser));
    assert_eq!(
        lookup(
            "m.py",
            "def ok():\n    pass\n\ndef broken(:\n    pass\n",
            "ok"
        ),
        Err(LookupError::Syntax { line: 4 })
    );
}

#[test]
fn query_segments_and_descriptions() {
    assert_eq!(segments("a::b.c"), vec!["a", "b", "c"]);
    assert_eq!(segments(" Config . parse "), vec!["Config", "parse"]);
    assert!(segments("::").is_empty());
    let d = match lookup("m.py", PY, "Config.parse") {
        Ok(Lookup::Found(d)) => d,
        other => panic!("{other:?}"),
    };
    assert_eq!(describe(&d[0]), "Config.parse (method, lines 2-3)");
}

/// The reference check's view is unchanged: nested functions and class fields stay out of it.
#[test]
fn definitions_still_leave_out_nested_items() {
    let names: Vec<String> = super::super::definitions("m.ts", TS)
        .expect("covered")
        .into_iter()
        .map(|d| d.qualified)
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.contains("inner") || n.contains("handle")),
        "{names:?}"
    );
}

/// Successive lookups reuse the last tree; the answers are those of a fresh parse.
#[test]
fn lookups_after_an_edit_see_the_edited_text() {
    assert_eq!(found("m.py", PY, "Other.parse"), one("Other.parse", 11, 12));
    let edited = PY.replace("class Other:\n", "import os\n\n\nclass Other:\n");
    assert_eq!(
        found("m.py", &edited, "Other.parse"),
        one("Other.parse", 14, 15)
    );
    let renamed = edited.replace(
        "def parse(self):\n        return 3",
        "def load(self):\n        return 3",
    );
    assert_eq!(
        found("m.py", &renamed, "Other.load"),
        one("Other.load", 14, 15)
    );
    assert!(!nearest("m.py", &renamed, "Other.parse").contains(&"Other.parse".to_string()));
    // Another language in between, and back.
    assert_eq!(found("m.go", GO, "Server.Start"), one("Server.Start", 7, 9));
    assert_eq!(found("m.py", PY, "Other.parse"), one("Other.parse", 11, 12));
    // A syntax error introduced by an edit is seen.
    let broken = PY.replace("def load():", "def load(:");
    assert_eq!(
        lookup("m.py", &broken, "Config"),
        Err(LookupError::Syntax { line: 6 })
    );
}

#[test]
fn overloads_are_one_symbol_with_their_implementation() {
    let ts = "export function pick(a: string): string;\nexport function pick(a: number): number;\nexport function pick(a: any) {\n  return a;\n}\n\nclass Box {\n  get(a: string): string;\n  get(a: any) {\n    return a;\n  }\n}\n";
    assert_eq!(
        found("m.ts", ts, "pick"),
        vec![
            ("pick".to_string(), 1, 1),
            ("pick".to_string(), 2, 2),
            ("pick".to_string(), 3, 5)
        ]
    );
    assert_eq!(
        found("m.ts", ts, "Box.get"),
        vec![
            ("Box.get".to_string(), 8, 8),
            ("Box.get".to_string(), 9, 11)
        ]
    );
    let py = "from typing import overload\n\n\n@overload\ndef f(a: int) -> int: ...\n@typing.overload\ndef f(a: str) -> str: ...\ndef f(a):\n    return a\n";
    assert_eq!(
        found("m.py", py, "f"),
        vec![
            ("f".to_string(), 4, 5),
            ("f".to_string(), 6, 7),
            ("f".to_string(), 8, 9)
        ]
    );
    // A near miss names the implementation, not a signature.
    match lookup("m.ts", ts, "pik") {
        Ok(Lookup::NotFound(n)) => assert_eq!(lines(&n[..1]), one("pick", 3, 5)),
        other => panic!("{other:?}"),
    }
    // Two implementations are still two functions.
    let twice = "def f():\n    pass\n\ndef f():\n    pass\n";
    assert_eq!(ambiguous("m.py", twice, "f").len(), 2);
}

#[test]
fn nested_definitions_of_a_piece_of_a_file() {
    let py = "@decorator\ndef outer(a):\n    def inner():\n        return a\n    return inner\n";
    let defs = super::nested_definitions("m.py", py).expect("parses");
    let spans: Vec<(&str, usize, usize)> = defs
        .iter()
        .map(|d| (d.qualified.as_str(), d.start_line, d.end_line))
        .collect();
    assert_eq!(spans, vec![("outer", 1, 5), ("outer.inner", 3, 4)]);
    assert!(super::nested_definitions("m.py", "def f(:\n").is_none());
    assert!(super::nested_definitions("m.css", "a {}\n").is_none());
}
