//! Names bound inside a function (its parameters, a Rust or JS `let`, a Python assignment, a Go
//! `:=` …) and where a plain use of such a name means the local, not an item of the same name
//! elsewhere. Without it a correct rename was refused: ripgrep's `hiargs.rs` keeps
//! `let is_readable_stdin = grep::cli::is_stdin_readable();` after the function
//! `is_readable_stdin` is renamed, and its two later uses of the variable read as the old
//! function's.
//!
//! Invariants:
//! - Only plain variable references are ever shadowed (`identifier` leaves, JS shorthand
//!   properties): never a field or property (`x.name`, `self.name`), a type, the last part of a
//!   path (`a::name`, Python `m.name`), nor a module-level binding (that is a definition).
//! - A scope is never wider than the language gives it: a Rust, JS `let`/`const` or Go binding
//!   from its statement's end to its block's end (a JS `var`: the function); parameters the whole
//!   function; a Python name assigned anywhere in a function (and not declared `global` or
//!   `nonlocal` there) the whole function, as Python resolves it; a comprehension's variable the
//!   comprehension.
//! - A Rust item nested in a function (`fn`, `const`, `static`) sees none of its locals, nor
//!   does a nested Python function that declares the name `global`.
//! - Erring is towards not shadowing: a Rust or Go pattern name that starts with a capital letter
//!   (a constant or a unit variant in a `match`) and a Python or JS import are not bindings.

use std::collections::{HashMap, HashSet};

use tree_sitter::{Node, Tree};

use super::Language;

/// The local bindings of one file.
#[derive(Default)]
pub(super) struct Locals {
    /// Per name: the byte ranges where a plain use of it is the local.
    scopes: HashMap<String, Vec<(usize, usize)>>,
    /// Start bytes of the binding names themselves (not uses of anything).
    binders: HashSet<usize>,
    /// Python: per name, the functions that declare it `global` (an enclosing function's
    /// local of that name does not reach into them).
    globals: HashMap<String, Vec<(usize, usize)>>,
}

impl Locals {
    /// Whether the identifier leaf `node` names a local binding or a use of one.
    pub(super) fn covers(&self, lang: Language, node: Node, name: &str) -> bool {
        if self.binders.contains(&node.start_byte()) {
            return true;
        }
        let Some(ranges) = self.scopes.get(name) else {
            return false;
        };
        let at = node.start_byte();
        // A Rust item nested in the function (an `fn`, a `const`, a `static`) does not see the
        // function's locals: a name used in it that the scope's start precedes is the item's.
        let item = (lang == Language::Rust)
            .then(|| {
                ancestors(node)
                    .find(|a| matches!(a.kind(), "function_item" | "const_item" | "static_item"))
                    .map(|a| a.start_byte())
            })
            .flatten();
        let global_from = |s: usize| {
            self.globals
                .get(name)
                .is_some_and(|g| g.iter().any(|&(gs, ge)| s < gs && gs <= at && at < ge))
        };
        ranges
            .iter()
            .any(|&(s, e)| s <= at && at < e && item.is_none_or(|i| i < s) && !global_from(s))
            && is_plain_reference(lang, node)
    }
}

/// A variable reference, not a field, a property, a type or a path's last part.
fn is_plain_reference(lang: Language, node: Node) -> bool {
    let in_field = |parent_kind: &str, field: &str| {
        node.parent().is_some_and(|p| {
            p.kind() == parent_kind
                && p.child_by_field_name(field)
                    .is_some_and(|f| f.start_byte() == node.start_byte())
        })
    };
    match node.kind() {
        "identifier" => match lang {
            // Any part of a path (`a::name`, `name::x`) is not a local.
            Language::Rust => !node.parent().is_some_and(|p| {
                matches!(p.kind(), "scoped_identifier" | "scoped_type_identifier")
            }),
            Language::Python => {
                !in_field("attribute", "attribute") && !in_field("keyword_argument", "name")
            }
            _ => true,
        },
        "shorthand_property_identifier" => true,
        _ => false,
    }
}

/// The local bindings of `tree` (a parse of `text` in `lang`).
pub(super) fn of(lang: Language, text: &str, tree: &Tree) -> Locals {
    let mut b = Binder {
        lang,
        text,
        out: Locals::default(),
    };
    let mut cursor = tree.walk();
    // Pre-order over the whole tree, without recursion (deep trees are real).
    'walk: loop {
        b.visit(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    b.out
}

struct Binder<'a> {
    lang: Language,
    text: &'a str,
    out: Locals,
}

impl Binder<'_> {
    fn bind(&mut self, name: Node, scope: (usize, usize)) {
        let Some(text) = self.text.get(name.byte_range()) else {
            return;
        };
        self.out.binders.insert(name.start_byte());
        self.out
            .scopes
            .entry(text.to_string())
            .or_default()
            .push(scope);
    }

    fn bind_all(&mut self, names: Vec<Node>, scope: (usize, usize)) {
        for n in names {
            self.bind(n, scope);
        }
    }

    fn visit(&mut self, node: Node) {
        match self.lang {
            Language::Rust => self.rust(node),
            Language::Python => self.python(node),
            Language::JavaScript | Language::TypeScript | Language::Tsx => self.script(node),
            Language::Go => self.go(node),
            Language::Json | Language::Toml | Language::Yaml => {}
        }
    }

    fn rust(&mut self, node: Node) {
        let field = |n: &str| node.child_by_field_name(n);
        match node.kind() {
            "let_declaration" => {
                if let (Some(p), Some(parent)) = (field("pattern"), node.parent()) {
                    let names = rust_pattern(self.text, p);
                    self.bind_all(names, (node.end_byte(), parent.end_byte()));
                }
            }
            "parameters" | "closure_parameters" => {
                let Some(owner) = node.parent() else { return };
                let Some(body) = owner.child_by_field_name("body") else {
                    return;
                };
                for child in named_children(node) {
                    let pattern = if child.kind() == "parameter" {
                        child.child_by_field_name("pattern")
                    } else {
                        Some(child)
                    };
                    if let Some(p) = pattern {
                        let names = rust_pattern(self.text, p);
                        self.bind_all(names, range(body));
                    }
                }
            }
            "for_expression" => {
                if let (Some(p), Some(body)) = (field("pattern"), field("body")) {
                    let names = rust_pattern(self.text, p);
                    self.bind_all(names, range(body));
                }
            }
            "let_condition" => {
                // `if let` / `while let`: the pattern's names hold from the condition on, to
                // the end of the `if` (its `else` too: erring wide within one expression).
                let owner = ancestors(node)
                    .find(|a| matches!(a.kind(), "if_expression" | "while_expression"));
                if let (Some(p), Some(owner)) = (field("pattern"), owner) {
                    let names = rust_pattern(self.text, p);
                    self.bind_all(names, (node.end_byte(), owner.end_byte()));
                }
            }
            "match_arm" => {
                if let Some(p) = field("pattern") {
                    let names = rust_pattern(self.text, p);
                    self.bind_all(names, range(node));
                }
            }
            _ => {}
        }
    }

    fn python(&mut self, node: Node) {
        if node.kind() == "for_in_clause" {
            // A comprehension's variable is its own (Python 3), at module level too.
            if let (Some(l), Some(owner)) = (node.child_by_field_name("left"), node.parent()) {
                let names = python_target(l);
                self.bind_all(names, range(owner));
            }
            return;
        }
        if !matches!(node.kind(), "function_definition" | "lambda") {
            return;
        }
        // Python decides per function: a name assigned anywhere in it is local everywhere in
        // it (a use before the assignment is an error, not the global).
        let mut names: Vec<Node> = Vec::new();
        if let Some(params) = node.child_by_field_name("parameters") {
            for p in named_children(params) {
                names.extend(python_parameter(p));
            }
        }
        let mut declared: HashSet<&str> = HashSet::new();
        if let Some(body) = node.child_by_field_name("body") {
            let mut stack = vec![body];
            while let Some(n) = stack.pop() {
                match n.kind() {
                    // Their own scopes: a nested function's locals are its own, a class
                    // body's names are attributes.
                    "function_definition" | "lambda" | "class_definition" => continue,
                    "global_statement" | "nonlocal_statement" => {
                        let listed = named_children(n)
                            .into_iter()
                            .filter_map(|i| self.text.get(i.byte_range()));
                        for name in listed {
                            declared.insert(name);
                            if n.kind() == "global_statement" {
                                self.out
                                    .globals
                                    .entry(name.to_string())
                                    .or_default()
                                    .push(range(node));
                            }
                        }
                        continue;
                    }
                    "assignment" | "augmented_assignment" | "for_statement" => {
                        if let Some(l) = n.child_by_field_name("left") {
                            names.extend(python_target(l));
                        }
                    }
                    "named_expression" => names.extend(n.child_by_field_name("name")),
                    "as_pattern" => {
                        if let Some(alias) = n.child_by_field_name("alias") {
                            names.extend(named_children(alias).into_iter().flat_map(python_target));
                        }
                    }
                    _ => {}
                }
                stack.extend(named_children(n));
            }
        }
        let scope = range(node);
        for n in names {
            if self
                .text
                .get(n.byte_range())
                .is_some_and(|t| !declared.contains(t))
            {
                self.bind(n, scope);
            }
        }
    }

    fn script(&mut self, node: Node) {
        let field = |n: &str| node.child_by_field_name(n);
        match node.kind() {
            "lexical_declaration" | "variable_declaration" => {
                let Some(parent) = node.parent() else { return };
                // Module-level declarations are definitions.
                if parent.kind() == "program"
                    || (parent.kind() == "export_statement"
                        && parent.parent().is_some_and(|g| g.kind() == "program"))
                {
                    return;
                }
                let scope = if node.kind() == "variable_declaration" {
                    ancestors(node)
                        .find(|a| is_script_function(a.kind()))
                        .map_or(range(parent), range)
                } else {
                    range(parent)
                };
                for d in named_children(node) {
                    if d.kind() == "variable_declarator"
                        && let Some(name) = d.child_by_field_name("name")
                    {
                        let names = script_pattern(name);
                        self.bind_all(names, scope);
                    }
                }
            }
            "formal_parameters" => {
                let Some(owner) = node.parent() else { return };
                for p in named_children(node) {
                    let names = script_pattern(p);
                    self.bind_all(names, range(owner));
                }
            }
            "arrow_function" => {
                if let Some(p) = field("parameter") {
                    self.bind(p, range(node));
                }
            }
            "catch_clause" => {
                if let Some(p) = field("parameter") {
                    let names = script_pattern(p);
                    self.bind_all(names, range(node));
                }
            }
            "for_in_statement" if field("kind").is_some() => {
                if let Some(l) = field("left") {
                    let names = script_pattern(l);
                    self.bind_all(names, range(node));
                }
            }
            _ => {}
        }
    }

    fn go(&mut self, node: Node) {
        let field = |n: &str| node.child_by_field_name(n);
        match node.kind() {
            "short_var_declaration" => {
                if let (Some(l), Some(parent)) = (field("left"), node.parent()) {
                    let names = go_names(named_children(l));
                    self.bind_all(names, (node.end_byte(), parent.end_byte()));
                }
            }
            "range_clause" => {
                let owner = node.parent();
                if let (Some(l), Some(owner)) = (field("left"), owner) {
                    let names = go_names(named_children(l));
                    self.bind_all(names, range(owner));
                }
            }
            "var_spec" => {
                // Inside a function only: a package-level `var` is a definition.
                let Some(block) = ancestors(node).find(|a| a.kind() == "block") else {
                    return;
                };
                let names = go_names(
                    node.children_by_field_name("name", &mut node.walk())
                        .collect(),
                );
                self.bind_all(names, (node.end_byte(), block.end_byte()));
            }
            "parameter_declaration" | "variadic_parameter_declaration" => {
                let owner = ancestors(node).find(|a| {
                    matches!(
                        a.kind(),
                        "function_declaration" | "method_declaration" | "func_literal"
                    )
                });
                let Some(body) = owner.and_then(|o| o.child_by_field_name("body")) else {
                    return;
                };
                let names = go_names(
                    node.children_by_field_name("name", &mut node.walk())
                        .collect(),
                );
                self.bind_all(names, range(body));
            }
            _ => {}
        }
    }
}

fn range(n: Node) -> (usize, usize) {
    (n.start_byte(), n.end_byte())
}

fn named_children(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

fn ancestors(n: Node) -> impl Iterator<Item = Node> {
    std::iter::successors(n.parent(), |p| p.parent())
}

fn starts_upper(text: &str, n: Node) -> bool {
    text.get(n.byte_range())
        .and_then(|t| t.chars().next())
        .is_some_and(char::is_uppercase)
}

/// The names a Rust pattern binds.
fn rust_pattern<'t>(text: &str, p: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack = vec![p];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" if !starts_upper(text, n) => out.push(n),
            "tuple_struct_pattern" => {
                let ty = n.child_by_field_name("type").map(|t| t.start_byte());
                stack.extend(
                    named_children(n)
                        .into_iter()
                        .filter(|c| Some(c.start_byte()) != ty),
                );
            }
            "struct_pattern" => stack.extend(
                named_children(n)
                    .into_iter()
                    .filter(|c| c.kind() == "field_pattern"),
            ),
            "field_pattern" => match n.child_by_field_name("pattern") {
                Some(p) => stack.push(p),
                None => out.extend(
                    n.child_by_field_name("name")
                        .filter(|m| m.kind() == "shorthand_field_identifier"),
                ),
            },
            "captured_pattern" | "mut_pattern" | "ref_pattern" | "reference_pattern"
            | "tuple_pattern" | "slice_pattern" | "or_pattern" | "match_pattern" => {
                // A `match` arm's guard is an expression, not a pattern.
                let guard = n.child_by_field_name("condition").map(|c| c.start_byte());
                stack.extend(
                    named_children(n)
                        .into_iter()
                        .filter(|c| Some(c.start_byte()) != guard),
                );
            }
            _ => {}
        }
    }
    out
}

/// The names a Python assignment target or `for` target binds.
fn python_target(n: Node) -> Vec<Node> {
    match n.kind() {
        "identifier" => vec![n],
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "list_splat_pattern"
        | "tuple"
        | "list"
        | "parenthesized_expression" => named_children(n)
            .into_iter()
            .flat_map(python_target)
            .collect(),
        _ => Vec::new(),
    }
}

/// The names a Python parameter binds.
fn python_parameter(p: Node) -> Vec<Node> {
    match p.kind() {
        "identifier" => vec![p],
        "default_parameter" | "typed_default_parameter" => p
            .child_by_field_name("name")
            .map(python_target)
            .unwrap_or_default(),
        "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => named_children(p)
            .into_iter()
            .filter(|c| c.kind() != "type")
            .flat_map(python_parameter)
            .collect(),
        _ => Vec::new(),
    }
}

/// The names a JS/TS binding pattern (or parameter) binds.
fn script_pattern(p: Node) -> Vec<Node> {
    match p.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => vec![p],
        "required_parameter" | "optional_parameter" => p
            .child_by_field_name("pattern")
            .or_else(|| p.child_by_field_name("name"))
            .map(script_pattern)
            .unwrap_or_default(),
        "assignment_pattern" | "object_assignment_pattern" => p
            .child_by_field_name("left")
            .map(script_pattern)
            .unwrap_or_default(),
        "pair_pattern" => p
            .child_by_field_name("value")
            .map(script_pattern)
            .unwrap_or_default(),
        "object_pattern" | "array_pattern" | "rest_pattern" => named_children(p)
            .into_iter()
            .flat_map(script_pattern)
            .collect(),
        _ => Vec::new(),
    }
}

fn is_script_function(kind: &str) -> bool {
    matches!(
        kind,
        "function_declaration"
            | "function_expression"
            | "function"
            | "arrow_function"
            | "method_definition"
            | "generator_function_declaration"
            | "generator_function"
    )
}

/// The identifiers of a Go left-hand side (`_` binds nothing).
fn go_names(list: Vec<Node>) -> Vec<Node> {
    list.into_iter()
        .filter(|n| n.kind() == "identifier")
        .collect()
}
