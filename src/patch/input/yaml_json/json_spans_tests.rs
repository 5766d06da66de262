//! The direct walk against the YAML reader's re-read: whenever it finds locations, they are the
//! re-read's, on hand-written and generated JSON patches.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::super::tests_support::{EDIT_KEYS, SUB_EDIT_KEYS, without_spans};
use super::super::{RawTop, full_yaml};
use super::locate;

/// The locations the walk and the re-read give (entries, `file_path`, `expect_sha256`).
fn spans(raw: &RawTop) -> Vec<Option<miette::SourceSpan>> {
    let mut out = Vec::new();
    for e in &raw.edits {
        out.push(e.span);
        out.push(e.value.file_path.as_ref().and_then(|p| p.span));
        out.push(e.value.expect_sha256.as_ref().and_then(|p| p.span));
        for s in e.value.edits.iter().flatten() {
            out.push(s.span);
            out.push(s.value.expect_sha256.as_ref().and_then(|p| p.span));
        }
    }
    out
}

/// Whether the walk located `text`; panics when it found other locations than the re-read.
fn agrees(text: &str) -> bool {
    let Ok(mut raw) = serde_json::from_str::<RawTop>(text) else {
        return false;
    };
    if !locate(text, &mut raw, 64 << 20) {
        return false;
    }
    match full_yaml(text) {
        Ok(full) => {
            assert_eq!(spans(&raw), spans(&full), "locations differ on {text:?}");
            // The re-read's values were the ones kept before: serde_json's must be the same.
            assert_eq!(
                without_spans(raw, true),
                without_spans(full, true),
                "values differ on {text:?}"
            );
        }
        Err(e) => panic!("the walk located {text:?}, the YAML reader refuses it: {e}"),
    }
    true
}

#[test]
fn the_usual_json_patches_are_located_directly() {
    let taken = [
        r#"[{"file_path": "a.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}]"#,
        "{\n  \"message\": \"m\",\n  \"edits\": [\n    {\n      \"file_path\": \"é/😀.py\",\n      \"expect_sha256\": \"0123\",\n      \"edits\": [\n        {\"old_string\": \"a\\u00e9\\/\\\\\", \"new_string\": \"b\", \"replace_all\": true, \"start_line\": -3, \"expect_sha256\": \"x\"}\n      ]\n    },\n    {\"file_path\":\"b\",\"delete\":true}\n  ]\n}\n",
        "[]",
        "[{}, {\"create\": false}]",
    ];
    for text in taken {
        assert!(agrees(text), "not located directly: {text:?}");
    }
}

#[test]
fn anything_unusual_is_left_to_the_re_read() {
    let declined = [
        "[{\"file_path\":\t\"a\"}]",
        "[{\"file_path\": \"a\"}]\r\n",
        "[{\"file_path\": \"\\ud83d\\ude00\"}]",
        "[{\"file_path\": null}]",
        "[{\"file_path\": \"a\", \"start_line\": 1.0}]",
        "[{\"file_\\u0070ath\": \"a\"}]",
        "[{\"file_path\": \"\u{feff}\"}]",
    ];
    for text in declined {
        let mut raw = match serde_json::from_str::<RawTop>(text) {
            Ok(raw) => raw,
            Err(_) => continue,
        };
        assert!(
            !locate(text, &mut raw, 64 << 20),
            "located directly: {text:?}"
        );
    }
}

fn string() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => "[a-z0-9 ]{1,6}",
            1 => prop::sample::select(vec![
                "é", "€", "😀", "\u{85}", "\u{a0}", "\u{2028}", "\u{7f}", "\u{1}", "\t", "\n",
                "\r", "\"", "\\", "/", "#", ": ", "- ", "{", "[", "&a", "*a", "!", "%", "'",
                "\u{feff}", "\u{fffe}",
            ])
            .prop_map(str::to_string),
        ],
        0..6,
    )
    .prop_map(|v| v.concat())
}

fn edit(groups: bool) -> BoxedStrategy<Value> {
    let keys: Vec<&'static str> = if groups {
        EDIT_KEYS
            .iter()
            .copied()
            .filter(|k| *k != "edits")
            .collect()
    } else {
        SUB_EDIT_KEYS.to_vec()
    };
    let members = prop::sample::subsequence(keys, 0..5)
        .prop_shuffle()
        .prop_flat_map(|keys| {
            keys.into_iter()
                .map(|k| {
                    let v = match k {
                        "replace_all" | "create" | "delete" | "append" => {
                            any::<bool>().prop_map(Value::from).boxed()
                        }
                        "start_line" | "end_line" => (-5i64..100_000).prop_map(Value::from).boxed(),
                        _ => string().prop_map(Value::from).boxed(),
                    };
                    (Just(k), v)
                })
                .collect::<Vec<_>>()
        });
    let subs = if groups {
        prop::option::weighted(0.3, prop::collection::vec(edit(false), 0..3)).boxed()
    } else {
        Just(None).boxed()
    };
    (members, subs)
        .prop_map(|(members, subs)| {
            let mut m: Map<String, Value> = members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            if let Some(subs) = subs {
                m.insert("edits".into(), Value::Array(subs));
            }
            Value::Object(m)
        })
        .boxed()
}

fn document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(edit(true), 0..5),
        prop::option::of(string()),
        0usize..4,
    )
        .prop_map(|(edits, message, style)| {
            let doc = match message {
                Some(m) if style > 1 => json!({"message": m, "edits": edits}),
                _ => Value::Array(edits),
            };
            match style {
                0 | 2 => serde_json::to_string(&doc).expect("json"),
                _ => serde_json::to_string_pretty(&doc).expect("json"),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn generated_json_is_located_alike(doc in document()) {
        agrees(&doc);
    }

    #[test]
    fn respaced_json_is_located_alike(
        doc in document(),
        at in any::<prop::sample::Index>(),
        what in prop::sample::select(vec![" ", "\n", "\t", "\r\n", "  \n  "]),
    ) {
        // Whitespace put after a structural character, where JSON allows it.
        let marks: Vec<usize> = doc
            .char_indices()
            .filter(|(_, c)| matches!(c, '[' | '{' | ',' | ':'))
            .map(|(i, _)| i + 1)
            .collect();
        if !marks.is_empty() {
            let i = marks[at.index(marks.len())];
            let text = format!("{}{what}{}", &doc[..i], &doc[i..]);
            agrees(&text);
        }
    }
}

#[test]
fn most_generated_json_is_located_directly() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = document();
    let taken = (0..300)
        .filter(|_| {
            agrees(
                &strategy
                    .new_tree(&mut runner)
                    .expect("a document")
                    .current(),
            )
        })
        .count();
    assert!(taken >= 100, "only {taken} of 300 located directly");
}
