//! The relative module specifiers a JavaScript or TypeScript file imports (`./util.js`,
//! `../lib`), from its tree-sitter tree: what a patch that moves or deletes a module can leave
//! pointing at nothing.
//!
//! Read where the language says a module is named: `import … from "x"`, `import "x"`,
//! `export … from "x"`, `import("x")`, `require("x")` and TypeScript's `import a = require("x")`,
//! each with a plain string literal. A specifier in a comment, in any other string, or built at
//! run time (a template with a substitution, a variable) is not one; bare specifiers (`react`,
//! `@scope/pkg`, `#internal`) and aliases resolve through configuration and are left out.

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
    if !matches!(
        lang,
        Language::JavaScript | Language::TypeScript | Language::Tsx
    ) {
        return Vec::new();
    }
    let lines = Lines::new(text);
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    // Pre-order over the whole tree, without recursion (deep trees are real).
    'walk: loop {
        let node = cursor.node();
        if let Some(s) = module_string(node, text) {
            let name = &text[s.byte_range()];
            if let Some(spec) = literal(name).filter(|t| is_relative(t)) {
                let p = s.start_position();
                out.push(Specifier {
                    text: spec.to_string(),
                    line: p.row + 1,
                    column: lines.char_column(p.row + 1, p.column),
                });
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    out
}

/// The string node that names a module in `node`, if `node` is an import, a re-export, an
/// `import()` or `require()` call, or TypeScript's `import … = require()`.
fn module_string<'t>(node: Node<'t>, text: &str) -> Option<Node<'t>> {
    match node.kind() {
        "import_statement" | "export_statement" | "import_require_clause" => node
            .child_by_field_name("source")
            .filter(|s| s.kind() == "string"),
        "call_expression" => {
            let callee = node.child_by_field_name("function")?;
            let calls_module = match callee.kind() {
                "import" => true,
                "identifier" => text.get(callee.byte_range()) == Some("require"),
                _ => false,
            };
            if !calls_module {
                return None;
            }
            let args = node.child_by_field_name("arguments")?;
            let first = args.named_child(0)?;
            (first.kind() == "string" && args.named_child_count() == 1).then_some(first)
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
fn is_relative(spec: &str) -> bool {
    spec == "." || spec == ".." || spec.starts_with("./") || spec.starts_with("../")
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
    }
}
