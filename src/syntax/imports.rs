//! The modules a file imports by path, from its tree-sitter tree: what a patch that moves or
//! deletes a module can leave pointing at nothing. JavaScript and TypeScript: the relative
//! specifiers (`./util.js`, `../lib`). Python: every `import` and `from … import` ([`python`]).
//!
//! Read where the language says a module is named: `import … from "x"`, `import "x"`,
//! `export … from "x"`, `import("x")`, `require("x")`, TypeScript's `import a = require("x")` and
//! a vitest or jest mock (`vi.mock("x", …)`, `jest.requireActual("x")`), each with a plain string
//! literal. A specifier in a comment, in any other string, or built at
//! run time (a template with a substitution, a variable) is not one; bare specifiers (`react`,
//! `@scope/pkg`, `#internal`) and aliases resolve through configuration: [`module_specifiers`]
//! gives them too, for a caller that reads it (`checks::imports::aliases`).

use tree_sitter::{Node, Tree};

use super::languages::Language;
use super::text::Lines;

/// One relative specifier: its text without the quotes, and where its string starts (1-based
/// line and character column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Specifier {
    pub text: String,
    pub line: usize,
    pub column: usize,
}

/// The relative specifiers of `text` in source order; empty for a language without them here.
pub fn relative_specifiers(lang: Language, text: &str, tree: &Tree) -> Vec<Specifier> {
    let mut out = module_specifiers(lang, text, tree);
    out.retain(|s| is_relative(&s.text));
    out
}

/// Every module specifier of `text` in source order, bare ones too (`react`, an alias such as
/// `@/lib/x`): for a caller that knows the project's aliases.
pub fn module_specifiers(lang: Language, text: &str, tree: &Tree) -> Vec<Specifier> {
    if !matches!(
        lang,
        Language::JavaScript | Language::TypeScript | Language::Tsx
    ) {
        return Vec::new();
    }
    let lines = Lines::new(text);
    let mut out = Vec::new();
    preorder(tree, |node| {
        if let Some(s) = module_string(node, text) {
            let name = text.get(s.byte_range()).unwrap_or_default();
            if let Some(spec) = literal(name) {
                let p = s.start_position();
                out.push(Specifier {
                    text: spec.to_string(),
                    line: p.row + 1,
                    column: lines.char_column(p.row + 1, p.column),
                });
            }
        }
    });
    out
}

/// Visits every node of `tree` in pre-order, without recursion (deep trees are real).
fn preorder<'t>(tree: &'t Tree, mut visit: impl FnMut(Node<'t>)) {
    let mut cursor = tree.walk();
    loop {
        visit(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// What a test runner's module mocks are called (`vi.mock("./x", factory)`, `jest.requireActual`):
/// the runner resolves their path as an import's, so a moved module leaves them behind too.
const MOCKS: &[&str] = &[
    "mock",
    "doMock",
    "unmock",
    "doUnmock",
    "importActual",
    "importMock",
    "requireActual",
    "requireMock",
];

/// The string node that names a module in `node`, if `node` is an import, a re-export, an
/// `import()` or `require()` call, TypeScript's `import … = require()`, or a vitest / jest mock
/// ([`MOCKS`]).
fn module_string<'t>(node: Node<'t>, text: &str) -> Option<Node<'t>> {
    match node.kind() {
        "import_statement" | "export_statement" | "import_require_clause" => node
            .child_by_field_name("source")
            .filter(|s| s.kind() == "string"),
        "call_expression" => {
            let callee = node.child_by_field_name("function")?;
            let source = |n: Node| text.get(n.byte_range());
            // A mock takes the module, then a factory or options.
            let (calls_module, most_args) = match callee.kind() {
                "import" => (true, 1),
                "identifier" => (source(callee) == Some("require"), 1),
                "member_expression" => {
                    let runner = callee.child_by_field_name("object").and_then(source);
                    let method = callee.child_by_field_name("property").and_then(source);
                    let mocks = matches!(runner, Some("vi" | "jest"))
                        && method.is_some_and(|m| MOCKS.contains(&m));
                    (mocks, 2)
                }
                _ => (false, 0),
            };
            if !calls_module {
                return None;
            }
            let args = node.child_by_field_name("arguments")?;
            let first = args.named_child(0)?;
            (first.kind() == "string" && args.named_child_count() <= most_args).then_some(first)
        }
        _ => None,
    }
}

/// A string literal's value, when it is written plainly (quotes around text with no escape).
fn literal(quoted: &str) -> Option<&str> {
    let inner = quoted
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| quoted.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))?;
    (!inner.contains('\\') && !inner.is_empty()).then_some(inner)
}

/// `./x`, `../x`, `.` and `..`: resolved against the importing file's folder.
pub fn is_relative(spec: &str) -> bool {
    spec == "." || spec == ".." || spec.starts_with("./") || spec.starts_with("../")
}

/// One Python import: `from ..pkg.mod import a, b` is `dots` 2, `module` `["pkg", "mod"]`,
/// `names` `["a", "b"]`; `import pkg.mod` is `dots` 0, `module` `["pkg", "mod"]`, no names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonImport {
    pub dots: usize,
    pub module: Vec<String>,
    /// The names a `from` import takes (a submodule or an attribute; `*` is left out).
    pub names: Vec<String>,
    /// Where the module's name starts (1-based line and character column).
    pub line: usize,
    pub column: usize,
    /// Inside a `try` whose `except` catches `ImportError` or `ModuleNotFoundError` (or
    /// anything): the code expects the module to be missing.
    pub guarded: bool,
}

impl PythonImport {
    /// The module as written: `..pkg.mod`, `.`, `pkg.mod`.
    pub fn written(&self) -> String {
        format!("{}{}", ".".repeat(self.dots), self.module.join("."))
    }
}

/// The imports of a Python file, in source order (inside functions and conditions too: an
/// import anywhere fails when its module is gone).
pub fn python(text: &str, tree: &Tree) -> Vec<PythonImport> {
    let lines = Lines::new(text);
    let dotted = |n: Node| -> Vec<String> {
        text.get(n.byte_range())
            .unwrap_or_default()
            .split('.')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect()
    };
    let at = |n: Node| {
        let p = n.start_position();
        (p.row + 1, lines.char_column(p.row + 1, p.column))
    };
    let mut out = Vec::new();
    preorder(tree, |node| match node.kind() {
        "import_statement" => {
            let mut c = node.walk();
            for name in node.children_by_field_name("name", &mut c) {
                let module = match name.kind() {
                    "aliased_import" => name.child_by_field_name("name"),
                    _ => Some(name),
                };
                if let Some(m) = module.filter(|m| m.kind() == "dotted_name") {
                    let (line, column) = at(m);
                    out.push(PythonImport {
                        dots: 0,
                        module: dotted(m),
                        names: Vec::new(),
                        line,
                        column,
                        guarded: guarded(node, text),
                    });
                }
            }
        }
        "import_from_statement" => {
            if let Some(m) = node.child_by_field_name("module_name") {
                let (dots, module) = match m.kind() {
                    "relative_import" => {
                        let prefix = m
                            .named_child(0)
                            .filter(|p| p.kind() == "import_prefix")
                            .map_or(0, |p| p.byte_range().len());
                        let mut c = m.walk();
                        let rest = m
                            .named_children(&mut c)
                            .find(|c| c.kind() == "dotted_name")
                            .map(dotted)
                            .unwrap_or_default();
                        (prefix, rest)
                    }
                    _ => (0, dotted(m)),
                };
                let mut c = node.walk();
                let names = node
                    .children_by_field_name("name", &mut c)
                    .filter_map(|n| match n.kind() {
                        "aliased_import" => n.child_by_field_name("name"),
                        _ => Some(n),
                    })
                    .filter_map(|n| text.get(n.byte_range()))
                    .map(|n| n.trim().to_string())
                    .collect();
                let (line, column) = at(m);
                out.push(PythonImport {
                    dots,
                    module,
                    names,
                    line,
                    column,
                    guarded: guarded(node, text),
                });
            }
        }
        _ => {}
    });
    out
}

/// Whether `node` sits in the body of a `try` that catches a failed import.
fn guarded(node: Node, text: &str) -> bool {
    let mut at = node;
    while let Some(parent) = at.parent() {
        if parent.kind() == "try_statement" && at.kind() == "block" {
            let mut c = parent.walk();
            let catches = parent.named_children(&mut c).any(|clause| {
                clause.kind() == "except_clause" && {
                    let head = text.get(clause.byte_range()).unwrap_or_default();
                    let head = head.split(':').next().unwrap_or_default().trim();
                    head == "except"
                        || head.contains("ImportError")
                        || head.contains("ModuleNotFoundError")
                        || head.contains("Exception")
                }
            });
            if catches {
                return true;
            }
        }
        at = parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(rel: &str, text: &str) -> Vec<(String, usize, usize)> {
        let lang = Language::from_path(rel).expect("a language");
        let tree = super::super::languages::parse(lang, text).expect("a tree");
        relative_specifiers(lang, text, &tree)
            .into_iter()
            .map(|s| (s.text, s.line, s.column))
            .collect()
    }

    #[test]
    fn every_way_of_naming_a_module_and_nothing_else() {
        let js = "import a from './a.js';\nimport './side';\nexport { b } from \"../b\";\n\
                  export * from './c/index.js';\nconst d = require('./d');\n\
                  const e = await import('./e.mjs');\n// import x from './comment';\n\
                  const s = './just-a-string';\nimport react from 'react';\n\
                  const f = require(`./${name}`);\nconst g = require('./g', 1);\n\
                  import h from '@scope/h';\nobj.require('./method');\n";
        assert_eq!(
            specs("src/x.js", js),
            vec![
                ("./a.js".to_string(), 1, 15),
                ("./side".to_string(), 2, 8),
                ("../b".to_string(), 3, 19),
                ("./c/index.js".to_string(), 4, 15),
                ("./d".to_string(), 5, 19),
                ("./e.mjs".to_string(), 6, 24),
            ]
        );
        let ts = "import type { T } from './types';\nimport fs = require('./fs-shim');\n\
                  export type { U } from '../u.js';\nconst é = 1; import v from './v';\n";
        assert_eq!(
            specs("src/x.ts", ts),
            vec![
                ("./types".to_string(), 1, 24),
                ("./fs-shim".to_string(), 2, 21),
                ("../u.js".to_string(), 3, 24),
                ("./v".to_string(), 4, 28),
            ]
        );
        assert!(specs("src/x.py", "from . import a\n").is_empty());
        // A test runner's mocks name modules as imports do; other calls named `mock` do not.
        let test = "vi.mock('./api', () => ({ get: vi.fn() }));\njest.requireActual('../util');\n\
                    const real = await vi.importActual('./cfg');\n\
                    server.mock('./route');\nvi.mock('./a', {}, 3);\nvi.fn('./not');\n";
        assert_eq!(
            specs("src/x.test.ts", test),
            vec![
                ("./api".to_string(), 1, 9),
                ("../util".to_string(), 2, 20),
                ("./cfg".to_string(), 3, 36),
            ]
        );
    }

    #[test]
    fn python_imports_as_written() {
        let text = "import os\nimport pkg.mod as m, other\nfrom . import config, tools as t\n\
                    from ..base.util import load\nfrom .x import *\nfrom pkg import (a,\n    b)\n\
                    def f():\n    import late.one\n\
                    try:\n    from ._speedups import fast\nexcept ImportError:\n    fast = None\n\
                    try:\n    from .must import it\nexcept ValueError:\n    pass\n";
        let tree = super::super::languages::parse(Language::Python, text).expect("a tree");
        let got: Vec<(String, Vec<String>, usize, usize)> = python(text, &tree)
            .into_iter()
            .map(|i| (i.written(), i.names, i.line, i.column))
            .collect();
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                ("os".to_string(), v(&[]), 1, 8),
                ("pkg.mod".to_string(), v(&[]), 2, 8),
                ("other".to_string(), v(&[]), 2, 22),
                (".".to_string(), v(&["config", "tools"]), 3, 6),
                ("..base.util".to_string(), v(&["load"]), 4, 6),
                (".x".to_string(), v(&[]), 5, 6),
                ("pkg".to_string(), v(&["a", "b"]), 6, 6),
                ("late.one".to_string(), v(&[]), 9, 12),
                ("._speedups".to_string(), v(&["fast"]), 11, 10),
                (".must".to_string(), v(&["it"]), 15, 10),
            ]
        );
        let guarded: Vec<bool> = python(text, &tree).iter().map(|i| i.guarded).collect();
        assert_eq!(
            guarded,
            [
                false, false, false, false, false, false, false, false, true, false
            ]
        );
    }
}
