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
//! - Uses are identifier-like leaves (variables, types, fields, properties), never text in
//!   comments or strings; the name node of each definition is not a use of it.

use std::collections::HashSet;

use tree_sitter::Node;

use super::languages::{self, Language};
use super::text::Lines;

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
    let mut out = Collector::new(lang, text);
    out.scope(tree.root_node(), "", Container::Module);
    Some(out.defs)
}

/// Every identifier-like use in `text`: (name, 1-based line, 1-based character column), in
/// source order, without the definitions' own name nodes. `None` as for [`definitions`].
pub fn identifier_uses(rel: &str, text: &str) -> Option<Vec<(String, usize, usize)>> {
    let lang = Language::from_path(rel)?;
    let tree = languages::parse(lang, text)?;
    let mut defs = Collector::new(lang, text);
    defs.scope(tree.root_node(), "", Container::Module);
    let lines = Lines::new(text);
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    // Pre-order over the whole tree, without recursion (deep trees are real).
    'walk: loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            if is_identifier(lang, node.kind()) && !defs.names.contains(&node.start_byte()) {
                let p = node.start_position();
                let line = p.row + 1;
                out.push((
                    text[node.byte_range()].to_string(),
                    line,
                    lines.char_column(line, p.column),
                ));
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
    Some(out)
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
    /// Start bytes of the definitions' name nodes.
    names: HashSet<usize>,
}

impl<'a> Collector<'a> {
    fn new(lang: Language, text: &'a str) -> Collector<'a> {
        Collector {
            lang,
            text,
            defs: Vec::new(),
            names: HashSet::new(),
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
        &self.text[node.byte_range()]
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
        qualified
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
                    self.add(kind, name, span, prefix);
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
                self.add(DefKind::Function, n, span, prefix);
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
                self.add(DefKind::Method, n, span, prefix);
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
                    let function = d.child_by_field_name("value").is_some_and(|v| {
                        matches!(
                            v.kind(),
                            "arrow_function"
                                | "function_expression"
                                | "function"
                                | "generator_function"
                        )
                    });
                    let kind = match (function, is_const) {
                        (true, _) => DefKind::Function,
                        (false, true) => DefKind::Constant,
                        (false, false) => continue,
                    };
                    // With several names in one statement each covers only its declarator.
                    self.add(kind, n, if single { span } else { d }, prefix);
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
                self.add(kind, n, node, prefix);
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

/// `MAX_SIZE`, `DEFAULT_2`: Python's convention for a module constant.
fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (qualified, kind, start_line, end_line) of each definition.
    fn defs(rel: &str, text: &str) -> Vec<(String, DefKind, usize, usize)> {
        definitions(rel, text)
            .expect("covered")
            .into_iter()
            .map(|d| (d.qualified, d.kind, d.start_line, d.end_line))
            .collect()
    }

    fn def(q: &str, kind: DefKind, start: usize, end: usize) -> (String, DefKind, usize, usize) {
        (q.to_string(), kind, start, end)
    }

    fn uses(rel: &str, text: &str) -> Vec<(String, usize, usize)> {
        identifier_uses(rel, text).expect("covered")
    }

    fn used_names(rel: &str, text: &str) -> Vec<String> {
        uses(rel, text).into_iter().map(|u| u.0).collect()
    }

    const PY: &str = "\"\"\"Mod.\"\"\"\nimport os\n\nMAX_SIZE = 10\nlimit = 3\ntype Pair = tuple[int, int]\n\n\n@dataclass\nclass Config:\n    path: str\n\n    def parse(self):\n        def local():\n            pass\n        return load(self.path)  # parse_cfg here is a comment\n\n    class Inner:\n        def deep(self): ...\n\n\nasync def load(p):\n    return f\"{os.sep}{p}\" + 'parse_cfg'\n\n\nif TYPE_CHECKING:\n    def typed(): ...\nelse:\n    def typed(): ...\n";

    #[test]
    fn python_definitions() {
        use DefKind::*;
        assert_eq!(
            defs("m.py", PY),
            vec![
                def("MAX_SIZE", Constant, 4, 4),
                def("Pair", TypeAlias, 6, 6),
                def("Config", Class, 9, 19),
                def("Config.parse", Method, 13, 16),
                def("Config.Inner", Class, 18, 19),
                def("Config.Inner.deep", Method, 19, 19),
                def("load", Function, 22, 23),
                def("typed", Function, 27, 27),
                def("typed", Function, 29, 29),
            ]
        );
        let d = definitions("m.py", PY).expect("covered");
        let config = &d[2];
        assert_eq!(config.name, "Config");
        assert!(PY[config.start_byte..config.end_byte].starts_with("@dataclass\nclass Config:"));
        assert!(PY[config.start_byte..config.end_byte].ends_with("def deep(self): ..."));
    }

    #[test]
    fn python_uses_skip_definition_names_comments_and_strings() {
        let names = used_names("m.py", PY);
        assert!(names.contains(&"load".to_string()), "{names:?}");
        assert!(names.contains(&"dataclass".to_string()));
        // The f-string's replacement fields are code.
        assert!(
            names.iter().filter(|n| *n == "os").count() >= 2,
            "{names:?}"
        );
        assert!(
            !names.contains(&"parse_cfg".to_string()),
            "comments and strings are not uses"
        );
        assert!(
            !names.contains(&"Config".to_string()),
            "a definition's name is not a use"
        );
        assert!(!names.contains(&"parse".to_string()));
        let load_call = uses("m.py", PY)
            .into_iter()
            .find(|u| u.0 == "load")
            .expect("the call");
        assert_eq!((load_call.1, load_call.2), (16, 16));
    }

    const TS: &str = "import { x } from './x';\n\nexport interface Shape<T> {\n  area(): number;\n}\nexport type Id = string;\nenum Color { Red }\nconst LIMIT = 3;\nlet counter = 0;\nexport const parseCfg = (s: string): Id => s;\n\n@sealed\nexport class Config implements Shape<number> {\n  #secret = 1;\n  area(): number {\n    return parseCfg('parse_cfg').length; // uses parse_cfg too\n  }\n  static load() {}\n}\n\nexport default function main() {\n  const local = () => 1;\n  return new Config().area() + x + LIMIT + Color.Red;\n}\n\nnamespace Geo {\n  export function dist() {}\n}\ndeclare function ext(a: number): void;\nabstract class Base { abstract run(): void; }\n";

    #[test]
    fn typescript_definitions() {
        use DefKind::*;
        assert_eq!(
            defs("a.ts", TS),
            vec![
                def("Shape", Interface, 3, 5),
                def("Id", TypeAlias, 6, 6),
                def("Color", Enum, 7, 7),
                def("LIMIT", Constant, 8, 8),
                def("parseCfg", Function, 10, 10),
                def("Config", Class, 12, 19),
                def("Config.area", Method, 15, 17),
                def("Config.load", Method, 18, 18),
                def("main", Function, 21, 24),
                def("Geo.dist", Function, 27, 27),
                def("ext", Function, 29, 29),
                def("Base", Class, 30, 30),
                def("Base.run", Method, 30, 30),
            ]
        );
        let d = definitions("a.ts", TS).expect("covered");
        assert!(
            TS[d[1].start_byte..].starts_with("export type Id"),
            "the export belongs to it"
        );
    }

    #[test]
    fn javascript_and_tsx_uses() {
        let names = used_names("a.ts", TS);
        for used in [
            "parseCfg", "Config", "x", "LIMIT", "Color", "Red", "area", "Shape", "Id",
        ] {
            assert!(names.contains(&used.to_string()), "{used} in {names:?}");
        }
        assert!(!names.contains(&"parse_cfg".to_string()));
        let tsx = "export function View() {\n  return <Panel title={label}>{items.map(render)}</Panel>;\n}\n";
        assert_eq!(
            defs("v.tsx", tsx),
            vec![def("View", DefKind::Function, 1, 3)]
        );
        let names = used_names("v.tsx", tsx);
        for used in ["Panel", "label", "items", "map", "render"] {
            assert!(names.contains(&used.to_string()), "{used} in {names:?}");
        }
        let js = "module.exports = { parse };\nfunction parse() {}\nclass A { m() { return parse(); } }\n";
        assert_eq!(
            defs("a.js", js),
            vec![
                def("parse", DefKind::Function, 2, 2),
                def("A", DefKind::Class, 3, 3),
                def("A.m", DefKind::Method, 3, 3)
            ]
        );
        let u = uses("a.js", js);
        assert!(u.contains(&("parse".to_string(), 1, 20)), "{u:?}");
        assert!(u.contains(&("parse".to_string(), 3, 24)), "{u:?}");
    }

    const RS: &str = "use std::fmt;\n\npub const MAX: usize = 3;\nstatic NAME: &str = \"parse_cfg\";\n\n/// Doc.\n#[derive(Debug)]\npub struct Config {\n    path: String,\n}\n\nenum Mode { A }\ntype Res<T> = Result<T, String>;\n\nimpl Config {\n    pub fn parse(&self) -> Res<Mode> {\n        fn helper() {}\n        load(&self.path) // parse_cfg\n    }\n}\n\nimpl fmt::Display for Config {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"{}\", self.path)\n    }\n}\n\npub trait Loader {\n    fn load(&self);\n}\n\nmod net {\n    pub fn load(p: &str) -> super::Res<super::Mode> { todo!() }\n}\n";

    #[test]
    fn rust_definitions() {
        use DefKind::*;
        assert_eq!(
            defs("a.rs", RS),
            vec![
                def("MAX", Constant, 3, 3),
                def("NAME", Constant, 4, 4),
                def("Config", Struct, 7, 10),
                def("Mode", Enum, 12, 12),
                def("Res", TypeAlias, 13, 13),
                def("Config", Impl, 15, 20),
                def("Config::parse", Method, 16, 19),
                def("fmt::Display for Config", Impl, 22, 26),
                def("Config::fmt", Method, 23, 25),
                def("Loader", Trait, 28, 30),
                def("Loader::load", Method, 29, 29),
                def("net::load", Function, 33, 33),
            ]
        );
    }

    #[test]
    fn rust_uses_include_macro_arguments() {
        let names = used_names("a.rs", RS);
        for used in [
            "fmt", "Config", "Res", "Mode", "load", "path", "Display", "write", "f",
        ] {
            assert!(names.contains(&used.to_string()), "{used} in {names:?}");
        }
        assert!(!names.contains(&"parse_cfg".to_string()));
        assert!(!names.contains(&"MAX".to_string()));
    }

    const GO: &str = "package cfg\n\nimport \"strings\"\n\nconst Max = 3\n\nconst (\n\tA, B = 1, 2\n\tC    = \"parse_cfg\"\n)\n\n// Config is read once.\ntype Config struct {\n\tPath string\n}\n\ntype Loader interface{ Load() }\n\ntype ID = string\n\ntype (\n\tMode int\n)\n\nfunc Parse(s string) *Config {\n\treturn &Config{Path: strings.TrimSpace(s)} // Parse\n}\n\nfunc (c *Config) Load() {}\n\nfunc (l List[T]) Len() int { return len(l) }\n";

    #[test]
    fn go_definitions_and_uses() {
        use DefKind::*;
        assert_eq!(
            defs("a.go", GO),
            vec![
                def("Max", Constant, 5, 5),
                def("A", Constant, 8, 8),
                def("B", Constant, 8, 8),
                def("C", Constant, 9, 9),
                def("Config", Struct, 13, 15),
                def("Loader", Interface, 17, 17),
                def("ID", TypeAlias, 19, 19),
                def("Mode", TypeAlias, 21, 23),
                def("Parse", Function, 25, 27),
                def("Config.Load", Method, 29, 29),
                def("List.Len", Method, 31, 31),
            ]
        );
        let names = used_names("a.go", GO);
        for used in ["strings", "TrimSpace", "Config", "Path", "List", "len", "l"] {
            assert!(names.contains(&used.to_string()), "{used} in {names:?}");
        }
        assert!(
            !names.contains(&"Parse".to_string()),
            "only its definition and a comment"
        );
    }

    #[test]
    fn uncovered_files_and_positions() {
        assert_eq!(definitions("a.json", "{}"), None);
        assert_eq!(identifier_uses("a.sh", "x"), None);
        assert_eq!(definitions("a.py", ""), Some(vec![]));
        // Columns count characters, not bytes; an assignment target is a use (only
        // definitions' names are left out).
        let u = uses("a.py", "s = 'é'; t = s\n");
        let at = |n: &str, c| (n.to_string(), 1, c);
        assert_eq!(u, vec![at("s", 1), at("t", 10), at("s", 14)]);
    }
}
