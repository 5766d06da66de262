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
    let tsx =
        "export function View() {\n  return <Panel title={label}>{items.map(render)}</Panel>;\n}\n";
    assert_eq!(
        defs("v.tsx", tsx),
        vec![def("View", DefKind::Function, 1, 3)]
    );
    let names = used_names("v.tsx", tsx);
    for used in ["Panel", "label", "items", "map", "render"] {
        assert!(names.contains(&used.to_string()), "{used} in {names:?}");
    }
    let js =
        "module.exports = { parse };\nfunction parse() {}\nclass A { m() { return parse(); } }\n";
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
        "fmt", "Config", "Res", "Mode", "load", "path", "Display", "write",
    ] {
        assert!(names.contains(&used.to_string()), "{used} in {names:?}");
    }
    // The parameter `f` and its use in `write!(f, …)` are a local's.
    assert!(!names.contains(&"f".to_string()), "{names:?}");
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
    for used in ["strings", "TrimSpace", "Config", "Path", "List", "len"] {
        assert!(names.contains(&used.to_string()), "{used} in {names:?}");
    }
    // The receiver `l` and `s` are parameters: locals, not uses of anything outside.
    assert!(!names.iter().any(|n| n == "l" || n == "s"), "{names:?}");
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

/// The (line, column) of each use of `name`.
fn uses_of(rel: &str, text: &str, name: &str) -> Vec<(usize, usize)> {
    uses(rel, text)
        .into_iter()
        .filter(|u| u.0 == name)
        .map(|u| (u.1, u.2))
        .collect()
}

#[test]
fn rust_locals_are_not_uses_of_an_item_of_the_same_name() {
    let text = "fn run() -> bool {\n    let ready = cli::ready();\n    ready && ready\n}\n\nfn before() -> bool {\n    let a = ready();\n    let ready = a;\n    ready\n}\n\nfn param(ready: bool, (x, ready2): (u8, u8)) -> bool {\n    ready\n}\n\nfn arms(v: Option<bool>) -> bool {\n    let f = |ready: bool| ready;\n    if let Some(ready) = v { return ready; }\n    for ready in [true] { f(ready); }\n    match v { Some(ready) => ready, None => ready() }\n}\n\nfn fields(s: S) -> bool {\n    let ready = 1;\n    s.ready + crate::ready() + ready::x()\n}\n";
    // Line 2's path, line 7's call before the `let`, line 20's call in the `None` arm, line
    // 25's path and field; never the bindings or their uses.
    assert_eq!(
        uses_of("a.rs", text, "ready"),
        vec![(2, 22), (7, 13), (20, 45), (25, 7), (25, 22), (25, 32)]
    );
}

#[test]
fn python_a_name_assigned_in_a_function_is_local_to_all_of_it() {
    let text = "def run(fetch):\n    n = load(1)\n    load = fetch()\n    return load\n\n\ndef glob():\n    global load\n    load = 2\n    return load\n\n\ndef params(load=None, *more, **kw):\n    return load, more, kw\n\n\ndef other(m):\n    x = 1\n    return load(x) + m.load + [load for _ in m]\n";
    // `run` assigns `load`: every `load` in it is the local, also the call before the
    // assignment (Python raises there; it never reads the global). `glob` declares it global;
    // `other` only reads it, and `m.load` is an attribute.
    assert_eq!(
        uses_of("a.py", text, "load"),
        vec![(8, 12), (9, 5), (10, 12), (19, 12), (19, 24), (19, 32)]
    );
}

#[test]
fn script_locals_are_not_uses_but_properties_are() {
    let text = "function run() {\n  const loadRows = make();\n  return loadRows() + this.loadRows;\n}\nfunction other({ loadRows: alias }, b) {\n  return loadRows(b) + alias;\n}\nconst f = (loadRows) => loadRows;\nconst g = loadRows => loadRows;\ntry { x(); } catch (loadRows) { loadRows.stack; }\n";
    assert_eq!(
        uses_of("a.js", text, "loadRows"),
        // `this.loadRows`, the object pattern's key and line 6's call.
        vec![(3, 28), (5, 18), (6, 10)]
    );
}

#[test]
fn go_locals_are_not_uses() {
    let text = "package p\n\nfunc run() int {\n\tparse := 1\n\treturn parse\n}\n\nfunc other(parse int, xs []int) int {\n\tfor _, v := range xs {\n\t\tparse += v\n\t}\n\treturn parse\n}\n\nfunc calls() int {\n\tv := parse()\n\tvar parse = v\n\treturn parse\n}\n";
    assert_eq!(uses_of("a.go", text, "parse"), vec![(16, 7)]);
}

#[test]
fn a_rust_item_nested_in_a_function_does_not_see_its_locals() {
    let text = "fn outer(ready: bool) -> bool {\n    let probe = 1;\n    fn inner() -> bool {\n        ready()\n    }\n    const N: bool = ready;\n    ready && inner() && probe > 0\n}\n";
    // The nested `fn` and `const` name the item `ready`; the last line's is the parameter.
    assert_eq!(uses_of("a.rs", text, "ready"), vec![(4, 9), (6, 21)]);
}

#[test]
fn a_nested_python_function_that_declares_the_name_global_uses_the_module_s() {
    let text = "def outer(load):\n    def inner():\n        global load\n        return load()\n\n    def other():\n        return load\n\n    return inner() + load\n";
    // `inner` reads the module's `load`; `other` and the last line read the parameter.
    assert_eq!(uses_of("a.py", text, "load"), vec![(3, 16), (4, 16)]);
}

#[test]
fn a_python_comprehension_variable_is_its_own() {
    let text = "names = [parse for parse in PARSERS]\nfirst = parse(names)\n";
    // The comprehension's two are its variable's; line 2 calls the module's `parse`.
    assert_eq!(uses_of("a.py", text, "parse"), vec![(2, 9)]);
}
