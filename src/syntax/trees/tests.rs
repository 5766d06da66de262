use super::*;

const PYTHON: &str = "import os\n\n\nclass Store:\n    \"\"\"Keeps rows.\"\"\"\n\n    def __init__(self, path):\n        self.path = path\n        self.rows = []\n\n    def load(self, name='x'):\n        with open(os.path.join(self.path, name)) as f:\n            for line in f:\n                self.rows.append(line.split(','))\n        return len(self.rows)\n\n\ndef main(argv):\n    s = Store(argv[0])\n    if s.load() > 2:\n        print(f\"{s.path}: {len(s.rows)} rows\")\n    return 0\n";
const SCRIPT: &str = "import { a } from './a';\n\nexport class Store {\n  constructor(path) {\n    this.path = path;\n    this.rows = [];\n  }\n\n  load(name = 'x') {\n    for (const line of read(this.path + name)) {\n      this.rows.push(line.split(','));\n    }\n    return this.rows.length;\n  }\n}\n\nexport function main(argv) {\n  const s = new Store(argv[0]);\n  if (s.load() > 2) {\n    console.log(`${s.path}: ${s.rows.length} rows`);\n  }\n  return /a+b/.test(argv[1]) ? 0 : 1;\n}\n";
const TYPED: &str = "interface Row { id: number; name?: string }\n\ntype Pair<T> = [T, T];\n\nexport class Store<T extends Row> {\n  private rows: T[] = [];\n  constructor(private readonly path: string) {}\n\n  load(name: string = 'x'): number {\n    for (const line of read(this.path + name)) {\n      this.rows.push(parse<T>(line));\n    }\n    return this.rows.length;\n  }\n}\n\nexport function main(argv: string[]): number {\n  const s = new Store<Row>(argv[0]);\n  return s.load() > 2 ? 0 : 1;\n}\n";
const RUST: &str = "use std::fmt;\n\n/// Rows.\npub struct Store<'a> {\n    path: &'a str,\n    rows: Vec<String>,\n}\n\nimpl<'a> Store<'a> {\n    pub fn load(&mut self, name: &str) -> usize {\n        for line in read(self.path, name).lines() {\n            self.rows.push(line.to_string());\n        }\n        self.rows.len()\n    }\n}\n\nimpl fmt::Display for Store<'_> {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"{}: {} rows\", self.path, self.rows.len())\n    }\n}\n\nfn main() {\n    let mut s = Store { path: \"a\", rows: vec![] };\n    if s.load(r#\"x\"#) > 2 {\n        println!(\"{s}\");\n    }\n}\n";
const GO: &str = "package store\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n// Store keeps rows.\ntype Store struct {\n\tPath string\n\tRows []string\n}\n\nfunc (s *Store) Load(name string) int {\n\tfor _, line := range strings.Split(read(s.Path+name), \"\\n\") {\n\t\ts.Rows = append(s.Rows, line)\n\t}\n\treturn len(s.Rows)\n}\n\nfunc Main(argv []string) int {\n\ts := &Store{Path: argv[0]}\n\tif s.Load(`x`) > 2 {\n\t\tfmt.Println(s.Path, len(s.Rows))\n\t}\n\treturn 0\n}\n";

/// Small deterministic generator (xorshift), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A nearby character boundary of `text` at or before `at`.
fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `text` with 1 to 6 random edits: deletions, insertions of code fragments (balanced or not),
/// duplicated or dropped lines, renamed words, at random places.
fn mutate(text: &str, rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "\"",
        "'",
        "`",
        "\n",
        "    ",
        "\t",
        "x",
        "foo(1, 2)",
        "if a:\n    b\n",
        "return 1;",
        "é",
        "/*",
        "*/",
        "#",
        "//",
        ",",
        ";",
        ":",
        "=",
        "<T>",
        "def g():\n    pass\n",
        "fn g() {}\n",
        "function g() {}\n",
        "func g() {}\n",
    ];
    let mut out = text.to_string();
    for _ in 0..1 + rng.below(6) {
        let at = boundary(&out, rng.below(out.len() + 1));
        match rng.below(5) {
            0 => {
                let end = boundary(&out, at + rng.below(40));
                out.replace_range(at..end, "");
            }
            1 | 2 => out.insert_str(at, PIECES[rng.below(PIECES.len())]),
            3 => {
                let lines: Vec<&str> = out.split_inclusive('\n').collect();
                let i = rng.below(lines.len());
                let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                if rng.below(2) == 0 {
                    v.insert(i, v[i].clone());
                } else {
                    v.remove(i);
                }
                out = v.concat();
            }
            _ => out = out.replacen("rows", "items", 1 + rng.below(3)),
        }
    }
    out
}

fn sexp(t: &Tree) -> String {
    t.root_node().to_sexp()
}

/// The same source repeated, so that edits can land far apart (past [`ONE_EDIT_BYTES`]).
fn large(src: &str) -> String {
    (0..12).map(|_| src).collect()
}

#[test]
fn a_reparse_from_the_edits_equals_a_full_parse() {
    let cases = [
        (Language::Python, PYTHON),
        (Language::JavaScript, SCRIPT),
        (Language::TypeScript, TYPED),
        (Language::Tsx, SCRIPT),
        (Language::Rust, RUST),
        (Language::Go, GO),
    ];
    let mut compared = 0;
    for (lang, src) in cases {
        for base in [src.to_string(), large(src)] {
            let base_tree = languages::parse(lang, &base).expect("parse");
            let seeds: u64 = if base.len() > src.len() { 10 } else { 40 };
            for seed in 1..=seeds {
                let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ base.len() as u64);
                let text = mutate(&base, &mut rng);
                let full = languages::parse(lang, &text).expect("parse");
                let inc = reparse(lang, &base_tree, &base, &text).expect("reparse");
                assert_eq!(
                    sexp(&inc),
                    sexp(&full),
                    "{lang:?}, seed {seed}, {} bytes:\n{text}",
                    base.len()
                );
                // And back: the original from the patched text's tree (the gate's other way).
                let back = reparse(lang, &full, &text, &base).expect("reparse");
                assert_eq!(sexp(&back), sexp(&base_tree), "{lang:?}, seed {seed}, back");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 6 * (40 + 10));
}

#[test]
fn far_apart_changes_become_one_edit_per_hunk_with_exact_positions() {
    let before = large(PYTHON);
    let after = before
        .replacen("self.rows = []", "self.rows = [1]", 1)
        .replace("return 0\n", "return 10\n");
    let list = edits(&before, &after);
    assert_eq!(list.len(), 13, "the first line change and 12 returns");
    // Applying the edits in order to the original's text gives the patched text, and each
    // position is the one tree-sitter would compute from the bytes.
    let mut text = before.clone().into_bytes();
    for e in &list {
        let point = |t: &[u8], at: usize| {
            let head = &t[..at];
            let row = head.iter().filter(|&&b| b == b'\n').count();
            let col = at - head.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            Point::new(row, col)
        };
        assert_eq!(e.start_position, point(&text, e.start_byte));
        assert_eq!(e.old_end_position, point(&text, e.old_end_byte));
        let inserted = &after.as_bytes()[e.start_byte..e.new_end_byte];
        text.splice(e.start_byte..e.old_end_byte, inserted.iter().copied());
        assert_eq!(e.new_end_position, point(&text, e.new_end_byte));
    }
    assert_eq!(String::from_utf8(text).expect("utf-8"), after);
    assert!(edits("same", "same").is_empty());
}

#[test]
fn the_cache_answers_only_for_the_exact_text_and_language() {
    // Texts of this test only, so that tests running in parallel do not interfere.
    let a = "def only_in_the_cache_test():\n    return 1\n";
    let b = "def only_in_the_cache_test():\n    return 2\n";
    let t = tree(Language::Python, a, None).expect("parse");
    assert!(cached(Language::Python, a).is_some());
    assert!(cached(Language::Python, b).is_none());
    // A text of the same length, one byte different, is not the same entry.
    assert!(cached(Language::Python, &a.replace('1', "3")).is_none());
    assert!(cached(Language::Rust, a).is_none());
    let u = tree(Language::Python, b, Some(a)).expect("reparse");
    assert_eq!(
        sexp(&u),
        sexp(&languages::parse(Language::Python, b).expect("parse"))
    );
    assert_eq!(sexp(&t), sexp(&cached(Language::Python, a).expect("kept")));
}
