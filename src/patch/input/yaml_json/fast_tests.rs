//! The direct reader against the full YAML reader: whatever it accepts, the full reader reads
//! to the same values and locations; on hand-written cases, every patch in the test suite, and
//! generated and mutated documents.

use proptest::prelude::*;

use super::super::full_yaml;
use super::super::tests_support::{EDIT_KEYS, SUB_EDIT_KEYS, without_spans};
use super::parse;

/// Whether the direct reader took `text`; panics when it read it otherwise than the full reader.
fn agrees(text: &str) -> bool {
    let Some(fast) = parse(text, 64 << 20) else {
        return false;
    };
    match full_yaml(text) {
        Ok(full) => assert_eq!(
            without_spans(fast, false),
            without_spans(full, false),
            "the two readers differ on {text:?}"
        ),
        Err(e) => panic!("the direct reader took {text:?}, the full reader refuses it: {e}"),
    }
    true
}

#[test]
fn the_usual_shapes_are_read_directly_and_alike() {
    let taken = [
        "- file_path: \"a.py\"\n  old_string: \"x = 1\\n\"\n  new_string: \"x = 2\\n\"\n",
        "message: \"fix\"\nedits:\n  - file_path: a.py\n    old_string: 'it''s'\n    new_string: \"it\\u00e9s \\\"q\\\" \\\\ \\t\\x41\\U0001F600\"\n",
        "edits:\n- file_path: src/a b.py   # the file\n  old_string: |\n    def f():\n\n        return 1\n  new_string: |-\n    def f():\n      return 2\n\n\n  replace_all: true\n",
        "# a patch\n\nedits:\n  -   file_path: a\n      start_line: 3\n      end_line: 10\n      old_string: |+\n        x\n\n      new_string: y z\nmessage: |\n  two\n  lines\n",
        "- file_path: a\n  expect_sha256: \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"\n  edits:\n  - old_string: \"a\n\n      b  \n      c\"\n    new_string: \"a \\\n      b\\\n\n      c\"\n  - old_string: 'x\n       y'\n    new_string: \"\"\n    within: Config.parse\n- file_path: b\n  create: true\n  new_string: \"\"\n- file_path: c\n  delete: false\n  move_to: d/e.py\n",
        "- file_path: \"é€😀\"\n  old_string: \"\\N\\_\\L\\P\\e\\0\\a\\b\\v\\f\\r\\ \\/\"\n  new_string: \"\t tab \"\n",
    ];
    for text in taken {
        assert!(agrees(text), "not read directly: {text:?}");
    }
}

#[test]
fn anything_unusual_is_left_to_the_full_reader() {
    let declined = [
        "- file_path: 012\n  old_string: a\n  new_string: b\n",
        "- file_path: null\n",
        "- file_path: yes\n",
        "- file_path: a\n  replace_all: True\n",
        "- file_path: a\n  replace_all: \"true\"\n",
        "- file_path: a\n  file_path: b\n",
        "- file_path: a\n  colour: b\n",
        "- {file_path: a}\n",
        "- file_path: &x a\n- file_path: *x\n",
        "- file_path: !!str a\n",
        "- file_path: a\n  old_string: >\n    folded\n",
        "- file_path: a\n  old_string: |2\n    x\n",
        "- file_path: |\n    a\n",
        "- file_path: a\r\n",
        "-\tfile_path: a\n",
        "- file_path: a\n  old_string: \"x\n  y\"\n",
        "- file_path: a\n  old_string: \"\\q\"\n",
        "- file_path: a\n  old_string: \"\\ud800\"\n",
        "- file_path: a b\n    c\n",
        "--- \n- file_path: a\n",
        "message: hi\n",
        "edits: []\n",
        "- file_path: a\n  old_string: |\n     \n    x\n",
        "- file_path: a\n  old_string: |\n    x\n  ",
        "- file_path: \"a\" b\n",
        "[]",
        "- file_path: a\n  start_line: 1.5\n",
    ];
    for text in declined {
        assert!(parse(text, 64 << 20).is_none(), "read directly: {text:?}");
    }
}

#[test]
fn a_document_past_the_size_limit_is_left_to_the_full_reader() {
    let text = "- file_path: a\n  delete: true\n";
    assert!(parse(text, text.len()).is_some());
    assert!(parse(text, text.len() - 1).is_none());
}

#[test]
fn a_document_near_the_node_budget_is_left_to_the_full_reader() {
    let entry = "- file_path: a\n  old_string: b\n  new_string: c\n";
    // 7 nodes an edit: its mapping, three keys, three values.
    let text = entry.repeat(super::MAX_NODES / 7 - 1);
    assert!(parse(&text, 64 << 20).is_some());
    let text = entry.repeat(super::MAX_NODES / 7 + 1);
    assert!(parse(&text, 64 << 20).is_none());
    assert!(
        full_yaml(&entry.repeat(250_000 / 7 + 1)).is_err(),
        "the full reader's budget moved: review MAX_NODES"
    );
}

#[test]
fn every_yaml_patch_of_the_test_suite_reads_alike() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut stack = vec![root];
    let (mut seen, mut taken) = (0, 0);
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a test folder") {
            let entry = entry.expect("an entry");
            let path = entry.path();
            // Not through symbolic links: fixtures hold some that loop.
            if entry.file_type().expect("a file type").is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                seen += 1;
                taken += usize::from(agrees(text.strip_prefix('\u{feff}').unwrap_or(&text)));
            }
        }
    }
    assert!(seen > 100 && taken > 30, "{taken} of {seen} read directly");
}

/// A random piece of a quoted or block string's source in a mapping at column `m`: only valid
/// ones unless `wild`.
fn piece(m: usize, wild: bool) -> impl Strategy<Value = String> {
    let mut odd = vec![
        "é", "€", "😀", "\u{85}", "\u{a0}", "\u{2028}", "#", ": ", "- ", "{", "}", "[", "]", ",",
        "&a", "*a", "!", "%", "@", "`", "|", ">", "''", "\"",
    ];
    let mut escapes = vec![
        "\\n",
        "\\t",
        "\\\\",
        "\\\"",
        "\\0",
        "\\a",
        "\\b",
        "\\v",
        "\\f",
        "\\r",
        "\\e",
        "\\ ",
        "\\/",
        "\\N",
        "\\_",
        "\\L",
        "\\P",
        "\\x41",
        "\\xe9",
        "\\xff",
        "\\u00e9",
        "\\U0001F600",
        "\\\t",
    ];
    if wild {
        odd.extend(["'", "\\", "\t"]);
        escapes.extend(["\\uD800", "\\U00110000", "\\q", "\\x4"]);
    }
    let indents = if wild { 0..m + 4 } else { m + 1..m + 4 };
    prop_oneof![
        6 => "[a-z0-9 ]{1,8}",
        1 => Just("\t".to_string()),
        1 => prop::sample::select(odd).prop_map(str::to_string),
        1 => prop::sample::select(escapes).prop_map(str::to_string),
        1 => (0usize..3, indents, any::<bool>(), any::<bool>()).prop_map(move |(empty, ind, esc, tab)| {
            let mut s = String::new();
            if esc {
                s.push('\\');
            }
            s.push('\n');
            for _ in 0..empty {
                s.push_str(&" ".repeat(ind / 2));
                s.push('\n');
            }
            if tab && wild {
                s.push('\t');
            }
            s.push_str(&" ".repeat(ind));
            s
        }),
    ]
}

/// A string's source after `key:`, for a mapping whose keys stand at column `m`.
fn string(m: usize, wild: bool) -> BoxedStrategy<String> {
    let pieces = move || prop::collection::vec(piece(m, wild), 0..6).prop_map(|v| v.concat());
    let block_line = (0usize..4, "[a-z #\t:]{0,6}", any::<bool>());
    let mut words = vec![
        "a.py",
        "src/x y.rs",
        "hello world  ",
        "x,y",
        "a-b_c.d/e",
        "a # c",
        "Config.parse",
    ];
    let mut heads = vec!["|", "|-", "|+", "| # c"];
    if wild {
        words.extend([
            "true",
            "false",
            "12",
            "-3",
            "0",
            "012",
            "null",
            "~",
            "yes",
            "a: b",
            "0x1",
            "1.5",
            "Yes",
            "@a",
            "`a",
            "True",
            "a\t",
            "\"a\" b",
            "'a'b",
            "\"a\" # c",
            "",
            "[a]",
            "{a: b}",
            "&x a",
            "*x",
            "!!str a",
            "99999999999999999999",
            "-",
            "a#b",
        ]);
        heads.extend(["|2", ">", "|\t"]);
    }
    prop_oneof![
        4 => pieces().prop_map(|s| format!(" \"{s}\"")),
        2 => pieces().prop_map(|s| format!(" '{}'", s.replace('\'', "''"))),
        2 => prop::sample::select(words).prop_map(|w| format!(" {w}")),
        2 => (
            prop::sample::select(heads),
            prop::collection::vec(block_line, 0..6),
            if wild { 0usize..3 } else { 1usize..3 },
        )
            .prop_map(move |(head, lines, base)| {
                let mut s = format!(" {head}\n");
                for (extra, text, blank) in lines {
                    if blank {
                        s.push_str(&" ".repeat(extra + m));
                        s.push('\n');
                    } else {
                        s.push_str(&" ".repeat(m + base + extra));
                        s.push_str(if wild { &text } else { text.trim_start_matches('\t') });
                        s.push('\n');
                    }
                }
                s.pop();
                s
            }),
    ]
    .boxed()
}

/// A value for `key`: of its type unless `wild`.
fn value(key: &'static str, m: usize, wild: bool) -> BoxedStrategy<String> {
    match key {
        _ if wild => prop_oneof![string(m, true), Just(" true".into()), Just(" 7".into())].boxed(),
        "replace_all" | "create" | "delete" | "append" => {
            prop::sample::select(vec![" true".to_string(), " false".into()]).boxed()
        }
        "start_line" | "end_line" => (-3i64..5000).prop_map(|n| format!(" {n}")).boxed(),
        "file_path" | "expect_sha256" => string(m, false)
            .prop_filter("located", |s| !s.starts_with(" |"))
            .boxed(),
        _ => string(m, false),
    }
}

/// One mapping's lines at column `m` (the first without its indentation).
fn mapping(m: usize, sub: bool, wild: bool) -> impl Strategy<Value = String> {
    let mut keys: Vec<&'static str> = if sub {
        SUB_EDIT_KEYS.to_vec()
    } else {
        EDIT_KEYS
            .iter()
            .copied()
            .filter(|k| *k != "edits")
            .collect()
    };
    if wild && !sub {
        keys.push("colour");
    }
    let chosen = if wild {
        prop::collection::vec(prop::sample::select(keys), 1..5).boxed()
    } else {
        prop::sample::subsequence(keys, 1..5).prop_shuffle().boxed()
    };
    chosen
        .prop_flat_map(move |keys| {
            keys.into_iter()
                .map(|k| (Just(k), value(k, m, wild), 0usize..6))
                .collect::<Vec<_>>()
        })
        .prop_map(move |entries| {
            let mut s = String::new();
            for (i, (k, v, extra)) in entries.into_iter().enumerate() {
                if i > 0 {
                    s.push_str(&" ".repeat(m));
                }
                s.push_str(k);
                s.push(':');
                s.push_str(&v);
                match extra {
                    0 => s.push_str(" # note"),
                    1 => s.push_str("\n\n"),
                    2 => s.push_str(&format!("\n{}# c", " ".repeat(m))),
                    _ => {}
                }
                s.push('\n');
            }
            s
        })
}

/// A sequence of edits with dashes at column `n`, some with a group.
fn sequence(n: usize, wild: bool) -> impl Strategy<Value = String> {
    let entry = (1usize..3, any::<bool>(), 0usize..3, 1usize..3).prop_flat_map(
        move |(sp, group, gi, gsp)| {
            let m = n + 1 + sp;
            let sub_n = m + gi;
            let subs = prop::collection::vec(mapping(sub_n + 1 + gsp, true, wild), 1..3);
            (mapping(m, false, wild), subs).prop_map(move |(head, subs)| {
                let mut s = format!("{}-{}{head}", " ".repeat(n), " ".repeat(sp));
                if group {
                    s.push_str(&format!("{}edits:\n", " ".repeat(m)));
                    for sub in subs {
                        s.push_str(&format!("{}-{}{sub}", " ".repeat(sub_n), " ".repeat(gsp)));
                    }
                }
                s
            })
        },
    );
    prop::collection::vec(entry, 1..4).prop_map(|v| v.concat())
}

fn document(wild: bool) -> impl Strategy<Value = String> {
    (0usize..3, any::<bool>(), any::<bool>(), string(0, wild)).prop_flat_map(
        move |(n, top, last, message)| {
            sequence(n * 2, wild).prop_map(move |seq| {
                let mut s = if top {
                    format!("message:{message}\nedits:\n{seq}")
                } else {
                    seq.clone()
                };
                if last {
                    s.pop();
                }
                s
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn generated_documents_read_alike(doc in document(false)) {
        agrees(&doc);
    }

    #[test]
    fn wild_documents_read_alike(doc in document(true)) {
        agrees(&doc);
    }

    #[test]
    fn mutated_documents_read_alike(
        doc in document(false),
        at in any::<prop::sample::Index>(),
        what in prop::sample::select(vec![
            "", " ", "\t", "\n", "\r", "-", ":", "#", "\"", "'", "\\", "|", "&", "*", "{", "[", "?",
            "!", "\u{feff}", "\u{1}", "a", "...", "---",
        ]),
        cut in 0usize..3,
    ) {
        let mut at = at.index(doc.len() + 1);
        while !doc.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = (at + cut).min(doc.len());
        while !doc.is_char_boundary(end) {
            end += 1;
        }
        let mutated = format!("{}{what}{}", &doc[..at], &doc[end..]);
        agrees(&mutated);
    }
}

#[test]
fn most_generated_documents_are_read_directly() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = document(false);
    let taken = (0..500)
        .filter(|_| {
            let doc = strategy
                .new_tree(&mut runner)
                .expect("a document")
                .current();
            agrees(&doc)
        })
        .count();
    // Valid documents still hold some shapes the direct reader leaves alone (a group holding a
    // key the group may not have, a block string left empty): most must be taken for the
    // comparisons above to mean something.
    assert!(taken >= 300, "only {taken} of 500 read directly");
}

/// The check for characters YAML takes as they are, done 64 bytes at a time, says what a check
/// of each character says: for every length around the chunk size and a refused character at
/// every place, including in the tail after the last whole chunk.
#[test]
fn printable_text_is_told_apart_wherever_the_refused_character_stands() {
    use super::all_printable;
    let one_by_one = |t: &str| {
        t.chars().all(|c| {
            matches!(c, '\t' | '\n' | '\u{20}'..='\u{7e}' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fefe}' | '\u{ff00}'..='\u{fffd}' | '\u{10000}'..)
        })
    };
    for len in [0, 1, 63, 64, 65, 127, 128, 129, 200] {
        let clean: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        assert!(all_printable(&clean), "{len} plain letters");
        for at in 0..len {
            for bad in ['\r', '\u{0}', '\u{7f}', '\u{feff}', 'é', '\u{1b}'] {
                let mut t: Vec<char> = clean.chars().collect();
                t[at] = bad;
                let t: String = t.into_iter().collect();
                assert_eq!(
                    all_printable(&t),
                    one_by_one(&t),
                    "{bad:?} at {at} of {len}"
                );
            }
        }
    }
}
