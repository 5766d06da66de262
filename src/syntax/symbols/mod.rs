//! Definitions and identifier uses of a source file, from one tree-sitter parse: what a
//! dangling-reference check compares across files, and what symbol-scoped edits address.
//!
//! Invariants:
//! - Definitions are the ones another file or another part of the file can refer to by name:
//!   module-level items, class and impl members, items of nested modules and namespaces.
//!   Anything declared inside a function body is local and left out (its name says nothing about
//!   other files).
//! - A definition's range covers what belongs to it when it is moved or deleted: Python
//!   decorators, JS/TS `export`, Rust attributes directly above it, the whole Go declaration
//!   when it declares one name.
//! - `qualified` joins the enclosing names with the language's separator: `.` for Python,
//!   JS/TS and Go methods (`Config.parse`), `::` for Rust (`Config::parse`, `net::Config`).
//! - [`lookup`] sees more: it also walks function bodies, for `within` on nested functions.
//! - Uses are identifier-like leaves (variables, types, fields, properties), never text in
//!   comments or strings; the name node of each definition is not a use of it, nor is a
//!   name bound inside a function or a use of it there (`locals`: a parameter, a `let`, a
//!   Python assignment …), which means the local, not an item of the same name.

mod locals;
pub mod lookup;

use std::collections::HashSet;

use tree_sitter::{Node, Tree};

use super::languages::{self, Language};
use super::text::Lines;
use super::trees;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefKind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    TypeAlias,
    Constant,
    Impl,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    /// The name with its enclosing classes, impls, modules or namespaces.
    pub qualified: String,
    pub kind: DefKind,
    /// 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    pub start_byte: usize,
    pub end_byte: usize,
}

/// The definitions of `text`, in source order. `None`: not a language with definitions here
/// (Python, JavaScript, TypeScript/TSX, Rust and Go are).
pub fn definitions(rel: &str, text: &str) -> Option<Vec<Definition>> {
    let lang = Language::from_path(rel)?;
    let tree = languages::parse(lang, text)?;
    Some(definitions_in(lang, text, &tree))
}

/// [`definitions`] of a text the syntax gate parses too (a file the patch changes), through
/// the tree cache: `base` is the text it was made from, whose cached tree it is reparsed from.
pub fn definitions_cached(rel: &str, text: &str, base: Option<&str>) -> Option<Vec<Definition>> {
    let lang = Language::from_path(rel)?;
    let tree = trees::tree(lang, text, base)?;
    Some(definitions_in(lang, text, &tree))
}

fn definitions_in(lang: Language, text: &str, tree: &Tree) -> Vec<Definition> {
    let mut out = Collector::new(lang, text);
    out.scope(tree.root_node(), "", Container::Module);
    out.defs
}

/// Every identifier-like use in `text`: (name, 1-based line, 1-based character column), in
/// source order, without the definitions' own name nodes. `None` as for [`definitions`].
pub fn identifier_uses(rel: &str, text: &str) -> Option<Vec<(String, usize, usize)>> {
    of(rel, text).map(|s| s.uses)
}

/// A file's definitions and identifier uses, from one parse.
pub struct Symbols {
    pub definitions: Vec<Definition>,
    /// As [`identifier_uses`] gives them.
    pub uses: Vec<(String, usize, usize)>,
}

/// [`definitions`] and [`identifier_uses`] together, for the price of one parse.
pub fn of(rel: &str, text: &str) -> Option<Symbols> {
    let lang = Language::from_path(rel)?;
    let tree = languages::parse(lang, text)?;
    Some(symbols_in(lang, text, &tree))
}

/// [`of`] through the tree cache, as [`definitions_cached`].
pub fn of_cached(rel: &str, text: &str, base: Option<&str>) -> Option<Symbols> {
    let lang = Language::from_path(rel)?;
    let tree = trees::tree(lang, text, base)?;
    Some(symbols_in(lang, text, &tree))
}

fn symbols_in(lang: Language, text: &str, tree: &Tree) -> Symbols {
    let mut defs = Collector::new(lang, text);
    defs.scope(tree.root_node(), "", Container::Module);
    let lines = Lines::new(text);
    let locals = locals::of(lang, text, tree);
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    // Pre-order over the whole tree, without recursion (deep trees are real).
    'walk: loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            let name = text.get(node.byte_range()).unwrap_or_default();
            if is_identifier(lang, node.kind())
                && !defs.names.contains(&node.start_byte())
                && !locals.covers(lang, node, name)
            {
                let p = node.start_position();
                let line = p.row + 1;
                out.push((name.to_string(), line, lines.char_column(line, p.column)));
            }
        } else if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    Symbols {
        definitions: defs.defs,
        uses: out,
    }
}

fn is_identifier(lang: Language, kind: &str) -> bool {
    match lang {
        Language::Python => kind == "identifier",
        Language::JavaScript | Language::TypeScript | Language::Tsx => matches!(
            kind,
            "identifier"
                | "property_identifier"
                | "private_property_identifier"
                | "shorthand_property_identifier"
                | "shorthand_property_identifier_pattern"
                | "type_identifier"
        ),
        Language::Rust => matches!(
            kind,
            "identifier" | "type_identifier" | "field_identifier" | "shorthand_field_identifier"
        ),
        Language::Go => matches!(
            kind,
            "identifier" | "type_identifier" | "field_identifier" | "package_identifier"
        ),
        Language::Json | Language::Toml | Language::Yaml => false,
    }
}

/// What the nodes being visited are members of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Module,
    /// A class (or a Rust impl or trait): its functions are methods.
    Class,
}

struct Collector<'a> {
    lang: Language,
    text: &'a str,
    defs: Vec<Definition>,
    /// Per definition (same index): the path its members are qualified with. Equal to
    /// `qualified` except for a Rust impl, whose `qualified` names the trait too.
    paths: Vec<String>,
    /// Start bytes of the definitions' name nodes.
    names: HashSet<usize>,
    /// Also walk function bodies (nested functions and classes), for symbol lookup.
    nested: bool,
    /// Indexes of the definitions that are overload declarations (TypeScript signatures,
    /// Python `@overload`): parts of the one function they declare, for symbol lookup.
    overloads: HashSet<usize>,
}

impl<'a> Collector<'a> {
    fn new(lang: Language, text: &'a str) -> Collector<'a> {
        Collector {
            lang,
            text,
            defs: Vec::new(),
            paths: Vec::new(),
            names: HashSet::new(),
            nested: false,
            overloads: HashSet::new(),
        }
    }

    fn sep(&self) -> &'static str {
        if self.lang == Language::Rust {
            "::"
        } else {
            "."
        }
    }

    fn text_of(&self, node: Node) -> &'a str {
        self.text.get(node.byte_range()).unwrap_or_default()
    }

    /// Records a definition named by `name_node`, spanning `span`.
    fn add(&mut self, kind: DefKind, name_node: Node, span: Node, prefix: &str) -> String {
        let name = self.text_of(name_node).to_string();
        self.add_named(kind, name, Some(name_node), span, prefix)
    }

    fn add_named(
        &mut self,
        kind: DefKind,
        name: String,
        name_node: Option<Node>,
        span: Node,
        prefix: &str,
    ) -> String {
        let qualified = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}{}{name}", self.sep())
        };
        if let Some(n) = name_node {
            self.names.insert(n.start_byte());
        }
        let start = self.extended_start(span);
        let end = span.end_position();
        let end_line = if end.column == 0 && end.row > start.start_position().row {
            end.row
        } else {
            end.row + 1
        };
        self.defs.push(Definition {
            name,
            qualified: qualified.clone(),
            kind,
            start_line: start.start_position().row + 1,
            end_line,
            start_byte: start.start_byte(),
            end_byte: span.end_byte(),
        });
        self.paths.push(qualified.clone());
        qualified
    }

    /// In nested mode, the definitions inside a function's body, qualified by the function.
    fn body(&mut self, body: Option<Node>, qualified: &str) {
        if let Some(body) = body.filter(|_| self.nested) {
            self.scope(body, qualified, Container::Module);
        }
    }

    /// `@overload` or `@typing.overload` among a decorated definition's decorators.
    fn is_overload(&self, decorated: Node) -> bool {
        let mut cursor = decorated.walk();
        decorated
            .named_children(&mut cursor)
            .filter(|d| d.kind() == "decorator")
            .any(|d| {
                let t = self.text_of(d).trim_start_matches('@').trim();
                t == "overload" || t.ends_with(".overload")
            })
    }

    /// Where a definition starts when moved: Rust attributes directly above it belong to it.
    fn extended_start<'t>(&self, span: Node<'t>) -> Node<'t> {
        let mut start = span;
        if self.lang == Language::Rust {
            while let Some(prev) = start.prev_sibling() {
                if prev.kind() != "attribute_item" {
                    break;
                }
                start = prev;
            }
        }
        start
    }

    /// The members of `node` (a module, class body, impl body, namespace …).
    fn scope(&mut self, node: Node, prefix: &str, container: Container) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match self.lang {
                Language::Python => self.python(child, child, prefix, container),
                Language::JavaScript | Language::TypeScript | Language::Tsx => {
                    self.script(child, child, prefix, container)
                }
                Language::Rust => self.rust(child, prefix, container),
                Language::Go => self.go(child),
                Language::Json | Language::Toml | Language::Yaml => {}
            }
        }
    }

    /// `span` is the node the definition covers (a decorated definition around `node`).
    fn python(&mut self, node: Node, span: Node, prefix: &str, container: Container) {
        match node.kind() {
            "decorated_definition" => {
                if let Some(inner) = node.child_by_field_name("definition") {
                    self.python(inner, node, prefix, container);
                }
            }
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let kind = if container == Container::Class {
                        DefKind::Method
                    } else {
                        DefKind::Function
                    };
                    if span.kind() == "decorated_definition" && self.is_overload(span) {
                        self.overloads.insert(self.defs.len());
                    }
                    let q = self.add(kind, name, span, prefix);
                    self.body(node.child_by_field_name("body"), &q);
                }
            }
            "class_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let q = self.add(DefKind::Class, name, span, prefix);
                    if let Some(body) = node.child_by_field_name("body") {
                        self.scope(body, &q, Container::Class);
                    }
                }
            }
            "type_alias_statement" => {
                if let Some(name) = node.child_by_field_name("left") {
                    let name = name.child_by_field_name("name").unwrap_or(name);
                    self.add(DefKind::TypeAlias, name, span, prefix);
                }
            }
            "expression_statement" if container == Container::Module => {
                let Some(assign) = node.named_child(0).filter(|a| a.kind() == "assignment") else {
                    return;
                };
                if let Some(left) = assign.child_by_field_name("left")
                    && left.kind() == "identifier"
                    && is_constant_name(self.text_of(left))
                {
                    self.add(DefKind::Constant, left, span, prefix);
                }
            }
            // Definitions under `if TYPE_CHECKING:`, `try: … except ImportError:` and the like
            // are still module or class members.
            "if_statement" | "elif_clause" | "else_clause" | "try_statement" | "except_clause"
            | "finally_clause" | "with_statement" => {
                let mut cursor = node.walk();
                let parts: Vec<Node> = node.named_children(&mut cursor).collect();
                for part in parts {
                    match part.kind() {
                        "block" => self.scope(part, prefix, container),
                        "elif_clause" | "else_clause" | "except_clause" | "finally_clause" => {
                            self.python(part, part, prefix, container)
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// JavaScript and TypeScript; `span` is the `export` statement around `node`, if any.
    fn script(&mut self, node: Node, span: Node, prefix: &str, container: Container) {
        let name = node.child_by_field_name("name");
        match (node.kind(), name) {
            ("export_statement", _) => {
                if let Some(decl) = node.child_by_field_name("declaration") {
                    self.script(decl, node, prefix, container);
                }
            }
            ("ambient_declaration", _) => {
                let mut cursor = node.walk();
                let inner: Vec<Node> = node.named_children(&mut cursor).collect();
                for decl in inner {
                    self.script(decl, span, prefix, container);
                }
            }
            (
                "function_declaration" | "generator_function_declaration" | "function_signature",
                Some(n),
            ) => {
                if node.kind() == "function_signature" {
                    self.overloads.insert(self.defs.len());
                }
                let q = self.add(DefKind::Function, n, span, prefix);
                self.body(node.child_by_field_name("body"), &q);
            }
            // An overload of a class method: only for lookup, as part of the method.
            ("method_signature", Some(n)) if self.nested && container == Container::Class => {
                self.overloads.insert(self.defs.len());
                self.add(DefKind::Method, n, span, prefix);
            }
            ("class_declaration" | "abstract_class_declaration" | "class", Some(n)) => {
                let q = self.add(DefKind::Class, n, span, prefix);
                if let Some(body) = node.child_by_field_name("body") {
                    self.scope(body, &q, Container::Class);
                }
            }
            ("method_definition" | "abstract_method_signature", Some(n))
                if container == Container::Class =>
            {
                let q = self.add(DefKind::Method, n, span, prefix);
                self.body(node.child_by_field_name("body"), &q);
            }
            // `handle = () => {}` in a class body: a method in all but syntax. Only for lookup:
            // the reference check leaves class fields alone.
            ("field_definition" | "public_field_definition", _)
                if self.nested && container == Container::Class =>
            {
                let name = node
                    .child_by_field_name("property")
                    .or_else(|| node.child_by_field_name("name"));
                let value = node.child_by_field_name("value");
                if let (Some(n), Some(v)) = (name, value)
                    && is_function_value(v.kind())
                {
                    let q = self.add(DefKind::Method, n, span, prefix);
                    self.body(v.child_by_field_name("body"), &q);
                }
            }
            ("interface_declaration", Some(n)) => {
                self.add(DefKind::Interface, n, span, prefix);
            }
            ("type_alias_declaration", Some(n)) => {
                self.add(DefKind::TypeAlias, n, span, prefix);
            }
            ("enum_declaration", Some(n)) => {
                self.add(DefKind::Enum, n, span, prefix);
            }
            ("internal_module" | "module", Some(n)) => {
                // A namespace qualifies its members but is not itself a definition kind here.
                let q = if prefix.is_empty() {
                    self.text_of(n).to_string()
                } else {
                    format!("{prefix}.{}", self.text_of(n))
                };
                if let Some(body) = node.child_by_field_name("body") {
                    self.scope(body, &q, Container::Module);
                }
            }
            ("expression_statement", _) => {
                if let Some(inner) = node
                    .named_child(0)
                    .filter(|n| n.kind() == "internal_module")
                {
                    self.script(inner, span, prefix, container);
                }
            }
            ("lexical_declaration" | "variable_declaration", _)
                if container == Container::Module =>
            {
                let is_const = node.child(0).is_some_and(|k| k.kind() == "const");
                let mut cursor = node.walk();
                let declarators: Vec<Node> = node
                    .named_children(&mut cursor)
                    .filter(|d| d.kind() == "variable_declarator")
                    .collect();
                let single = declarators.len() == 1;
                for d in declarators {
                    let Some(n) = d
                        .child_by_field_name("name")
                        .filter(|n| n.kind() == "identifier")
                    else {
                        continue;
                    };
                    let value = d.child_by_field_name("value");
                    let function = value.is_some_and(|v| is_function_value(v.kind()));
                    let kind = match (function, is_const) {
                        (true, _) => DefKind::Function,
                        (false, true) => DefKind::Constant,
                        (false, false) => continue,
                    };
                    // With several names in one statement each covers only its declarator.
                    let q = self.add(kind, n, if single { span } else { d }, prefix);
                    if function {
                        self.body(value.and_then(|v| v.child_by_field_name("body")), &q);
                    }
                }
            }
            _ => {}
        }
    }

    fn rust(&mut self, node: Node, prefix: &str, container: Container) {
        let name = node.child_by_field_name("name");
        match (node.kind(), name) {
            ("function_item" | "function_signature_item", Some(n)) => {
                let kind = if container == Container::Class {
                    DefKind::Method
                } else {
                    DefKind::Function
                };
                let q = self.add(kind, n, node, prefix);
                self.body(node.child_by_field_name("body"), &q);
            }
            ("struct_item" | "union_item", Some(n)) => {
                self.add(DefKind::Struct, n, node, prefix);
            }
            ("enum_item", Some(n)) => {
                self.add(DefKind::Enum, n, node, prefix);
            }
            ("type_item", Some(n)) => {
                self.add(DefKind::TypeAlias, n, node, prefix);
            }
            ("const_item" | "static_item", Some(n)) => {
                self.add(DefKind::Constant, n, node, prefix);
            }
            ("trait_item", Some(n)) => {
                let q = self.add(DefKind::Trait, n, node, prefix);
                if let Some(body) = node.child_by_field_name("body") {
                    self.scope(body, &q, Container::Class);
                }
            }
            ("mod_item", Some(n)) => {
                if let Some(body) = node.child_by_field_name("body") {
                    let q = if prefix.is_empty() {
                        self.text_of(n).to_string()
                    } else {
                        format!("{prefix}::{}", self.text_of(n))
                    };
                    self.scope(body, &q, Container::Module);
                }
            }
            ("impl_item", _) => {
                let Some(ty) = node.child_by_field_name("type") else {
                    return;
                };
                let base = base_type_name(ty).unwrap_or(ty);
                let type_name = self.text_of(base).to_string();
                // `impl Display for Config` is named after the type; its methods are
                // `Config::fmt` whichever trait they implement.
                let label = match node.child_by_field_name("trait") {
                    Some(t) => format!("{} for {type_name}", self.text_of(t)),
                    None => type_name.clone(),
                };
                let qualified = self.add_named(DefKind::Impl, type_name, None, node, prefix);
                if let Some(def) = self.defs.last_mut() {
                    def.qualified = if prefix.is_empty() {
                        label
                    } else {
                        format!("{prefix}::{label}")
                    };
                }
                if let Some(body) = node.child_by_field_name("body") {
                    self.scope(body, &qualified, Container::Class);
                }
            }
            _ => {}
        }
    }

    fn go(&mut self, node: Node) {
        match node.kind() {
            "function_declaration" => {
                if let Some(n) = node.child_by_field_name("name") {
                    self.add(DefKind::Function, n, node, "");
                }
            }
            "method_declaration" => {
                let Some(n) = node.child_by_field_name("name") else {
                    return;
                };
                let receiver = node
                    .child_by_field_name("receiver")
                    .and_then(|r| r.named_child(0))
                    .and_then(|p| p.child_by_field_name("type"))
                    .and_then(base_type_name)
                    .map(|t| self.text_of(t).to_string())
                    .unwrap_or_default();
                self.add(DefKind::Method, n, node, &receiver);
            }
            "type_declaration" | "const_declaration" => {
                let mut cursor = node.walk();
                let specs: Vec<Node> = node
                    .named_children(&mut cursor)
                    .filter(|s| matches!(s.kind(), "type_spec" | "type_alias" | "const_spec"))
                    .collect();
                let single = specs.len() == 1;
                for spec in specs {
                    let span = if single { node } else { spec };
                    if spec.kind() == "const_spec" {
                        let mut c = spec.walk();
                        let names: Vec<Node> = spec
                            .children_by_field_name("name", &mut c)
                            .filter(|n| n.kind() == "identifier")
                            .collect();
                        let one = names.len() == 1;
                        for n in names {
                            self.add(DefKind::Constant, n, if one { span } else { n }, "");
                        }
                        continue;
                    }
                    let Some(n) = spec.child_by_field_name("name") else {
                        continue;
                    };
                    let kind = match spec.child_by_field_name("type").map(|t| t.kind()) {
                        _ if spec.kind() == "type_alias" => DefKind::TypeAlias,
                        Some("struct_type") => DefKind::Struct,
                        Some("interface_type") => DefKind::Interface,
                        _ => DefKind::TypeAlias,
                    };
                    self.add(kind, n, span, "");
                }
            }
            _ => {}
        }
    }
}

/// `Config` of `Config<T>`, `&mut Config`, `*Config`, `crate::net::Config`.
fn base_type_name(ty: Node) -> Option<Node> {
    match ty.kind() {
        "type_identifier" => Some(ty),
        "generic_type" | "scoped_type_identifier" | "qualified_type" => ty
            .child_by_field_name("type")
            .or_else(|| ty.child_by_field_name("name"))
            .and_then(base_type_name),
        "reference_type" | "pointer_type" => ty
            .child_by_field_name("type")
            .or_else(|| {
                let last = u32::try_from(ty.named_child_count().saturating_sub(1)).ok()?;
                ty.named_child(last)
            })
            .and_then(base_type_name),
        _ => None,
    }
}

fn is_function_value(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// `MAX_SIZE`, `DEFAULT_2`: Python's convention for a module constant.
fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests;
