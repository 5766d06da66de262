use super::*;
use crate::patch::input::validate::shorten;

fn ok(text: &str) -> Patch {
    match parse(text, "p.yaml") {
        Ok(p) => p,
        Err(e) => panic!("expected a patch, got {e:?}"),
    }
}

fn err(text: &str) -> (String, Option<usize>, Option<usize>) {
    match parse(text, "p.yaml") {
        Ok(p) => panic!("expected an error, got {p:?}"),
        Err(Error::Patch(p)) => (p.message, p.line, p.column),
        Err(e) => panic!("unexpected error kind {e:?}"),
    }
}

#[test]
fn a_message_quoting_a_huge_value_is_cut_to_a_readable_length() {
    let huge = format!(
        "invalid type: string \"{}\", expected a list",
        "z".repeat(1 << 20)
    );
    let short = shorten(huge);
    assert!(short.len() < 500, "{}", short.len());
    assert!(short.starts_with("invalid type: string \"zzz"));
    assert!(short.ends_with("\", expected a list"));
    assert!(short.contains("characters left out"));
    assert_eq!(shorten("short".into()), "short");
}

#[test]
fn list_and_object_forms() {
    let p = ok("- file_path: a\n  old_string: x\n  new_string: y\n");
    assert_eq!(p.edits.len(), 1);
    assert!(p.message.is_none());
    let p = ok("message: hi\nedits:\n  - file_path: a\n    delete: true\n");
    assert_eq!(p.message.as_deref(), Some("hi"));
    assert_eq!(p.edits[0].op, Ok(Op::Delete));
}

#[test]
fn groups_flatten_in_order() {
    let p = ok(
        "- file_path: a\n  edits:\n    - {old_string: x, new_string: y}\n    - {old_string: z, new_string: w, replace_all: true}\n- file_path: b\n  create: true\n  new_string: hi\n",
    );
    let idx: Vec<_> = p
        .edits
        .iter()
        .map(|e| (e.index, e.file_path.as_str()))
        .collect();
    assert_eq!(idx, vec![(0, "a"), (1, "a"), (2, "b")]);
    match &p.edits[1].op {
        Ok(Op::Replace(r)) => assert!(r.replace_all),
        other => panic!("{other:?}"),
    }
}

#[test]
fn within_on_edits_groups_and_moves() {
    let p = ok(concat!(
        "- {file_path: a.py, old_string: x, new_string: y, within: ' Config.parse '}\n",
        "- file_path: b.rs\n  within: Config\n  edits:\n",
        "    - {old_string: x, new_string: y}\n",
        "    - {old_string: z, new_string: w, within: 'Config::new'}\n",
        "- {file_path: c.go, move_to: d.go, old_string: x, new_string: y, within: Server.Start}\n",
    ));
    let within: Vec<Option<&str>> = p
        .edits
        .iter()
        .map(|e| match &e.op {
            Ok(Op::Replace(r)) => r.within.as_deref(),
            Ok(Op::Move {
                replace: Some(r), ..
            }) => r.within.as_deref(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        within,
        vec![
            Some("Config.parse"),
            Some("Config"),
            Some("Config::new"),
            Some("Server.Start")
        ]
    );
}

#[test]
fn within_without_a_replacement_or_a_name_is_invalid() {
    let p = ok(concat!(
        "- {file_path: a.py, old_string: x, new_string: y, within: ' :: . '}\n",
        "- {file_path: a.py, create: true, new_string: y, within: f}\n",
        "- {file_path: a.py, within: f}\n",
        "- {file_path: a.py, within: f, edits: [{old_string: x, new_string: y, within: ''}]}\n",
    ));
    let errors: Vec<String> = p
        .edits
        .iter()
        .map(|e| e.op.clone().expect_err("invalid"))
        .collect();
    assert!(
        errors[0].starts_with("`within` names no symbol"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].contains("within belong to a replacement"),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].starts_with("`old_string` is required"),
        "{}",
        errors[2]
    );
    // A grouped edit's own blank `within` is not replaced by the group's.
    assert!(
        errors[3].starts_with("`within` names no symbol"),
        "{}",
        errors[3]
    );
}

#[test]
fn unknown_key_has_line_and_column() {
    let (msg, line, col) = err("- file_path: a\n  old_string: x\n  new_sting: y\n");
    assert!(msg.contains("unknown field `new_sting`"), "{msg}");
    assert_eq!((line, col), (Some(3), Some(3)));
}

#[test]
fn duplicate_key_is_an_error() {
    let (msg, line, _) = err("- file_path: a\n  file_path: b\n  delete: true\n");
    assert!(msg.contains("duplicate"), "{msg}");
    assert!(!msg.contains("DuplicateKeyPolicy"), "{msg}");
    assert_eq!(line, Some(2));
}

#[test]
fn yaml_11_booleans_are_refused() {
    let (msg, line, _) =
        err("- file_path: a\n  old_string: x\n  new_string: y\n  replace_all: yes\n");
    assert!(msg.contains("boolean"), "{msg}");
    assert_eq!(line, Some(4));
}

#[test]
fn json_errors_have_positions() {
    let (msg, line, col) = err("[{\"file_path\": \"a\", \"bogus\": 1}]");
    assert!(msg.contains("unknown field `bogus`"), "{msg}");
    assert_eq!(line, Some(1));
    assert!(col.is_some());
    let (_, line, _) =
        err("[\n {\"file_path\": \"a\",\n  \"old_string\": \"x\" \"new_string\": \"y\"}]");
    assert_eq!(line, Some(3));
}

#[test]
fn json_with_tabs_parses_and_keeps_spans() {
    let p = ok(
        "{\n\t\"edits\": [\n\t\t{\"file_path\": \"a\", \"old_string\": \"x\", \"new_string\": \"\\u00e9\"}\n\t]\n}",
    );
    assert_eq!(p.source.format, Format::Json);
    match &p.edits[0].op {
        Ok(Op::Replace(r)) => assert_eq!(r.new, "é"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn empty_documents_are_errors_but_empty_lists_are_not() {
    assert!(err("").0.contains("empty"));
    assert!(err("# only a comment\n\n").0.contains("empty"));
    assert!(ok("[]").edits.is_empty());
    assert!(ok("edits: []").edits.is_empty());
}

#[test]
fn per_edit_problems_keep_their_place() {
    let p = ok(
        "- {file_path: a, old_string: '', new_string: y}\n- {file_path: a, old_string: x, new_string: x}\n- {file_path: a, create: true, delete: true}\n- {file_path: a, old_string: x, new_string: y, start_line: 5, end_line: 2}\n- {file_path: a, old_string: x}\n- {old_string: x, new_string: y}\n",
    );
    // The identical pair (edit 1) is refused by the planner, which also looks for the text.
    assert!(matches!(&p.edits[1].op, Ok(Op::Replace(r)) if r.old == r.new));
    let reasons: Vec<String> = p
        .edits
        .iter()
        .map(|e| e.op.clone().err().unwrap_or_default())
        .collect();
    assert!(reasons[0].contains("empty"));
    assert!(reasons[2].contains("exclude"));
    assert!(reasons[3].contains("before"));
    assert!(reasons[4].contains("new_string"));
    assert!(reasons[5].contains("file_path"));
}

#[test]
fn nul_and_bad_utf8_are_refused_with_position() {
    let (msg, line, _) = err("- file_path: a\n  old_string: \"x\0\"\n");
    assert!(msg.contains("NUL"));
    assert_eq!(line, Some(2));
    match parse_bytes(b"- file_path: a\n  old_string: \xff\n", "p") {
        Err(Error::Patch(p)) => {
            assert!(p.message.contains("UTF-8"));
            assert_eq!(p.line, Some(2));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn escaped_nul_in_a_string_is_an_invalid_edit() {
    let p = ok("[{\"file_path\": \"a\", \"old_string\": \"x\", \"new_string\": \"\\u0000\"}]");
    assert!(p.edits[0].op.clone().unwrap_err().contains("NUL"));
}

#[test]
fn move_may_carry_a_replacement() {
    let p = ok(
        "- {file_path: a.rs, move_to: b.rs, old_string: x, new_string: y}\n- {file_path: c.rs, move_to: d.rs}\n",
    );
    match &p.edits[0].op {
        Ok(Op::Move {
            to,
            replace: Some(r),
        }) => {
            assert_eq!(to, "b.rs");
            assert_eq!(r.old, "x");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        p.edits[1].op,
        Ok(Op::Move {
            to: "d.rs".into(),
            replace: None
        })
    );
}

#[test]
fn expect_sha256_is_lower_cased_inherited_by_a_group_and_checked() {
    let h = "AB".repeat(32);
    let p = ok(&format!(
        "- {{file_path: a, delete: true, expect_sha256: {h}}}\n- file_path: b\n  expect_sha256: {h}\n  edits:\n    - {{old_string: x, new_string: y}}\n"
    ));
    let want = Some("ab".repeat(32));
    assert_eq!(p.edits[0].expect_sha256, want);
    assert_eq!(p.edits[1].expect_sha256, want);
    assert_eq!(p.edits[1].op.as_ref().map(|_| ()), Ok(()));
    for bad in ["abc", &"g".repeat(64), &"a".repeat(65)] {
        let (msg, line, col) = err(&format!(
            "- file_path: a\n  edits:\n    - old_string: x\n      new_string: y\n      expect_sha256: \"{bad}\"\n"
        ));
        assert!(msg.contains("expect_sha256"), "{msg}");
        assert_eq!((line, col), (Some(5), Some(22)), "{bad}");
    }
}

#[test]
fn spans_point_at_the_entry() {
    let text =
        "- file_path: a\n  old_string: x\n  new_string: y\n- file_path: bb\n  delete: true\n";
    let p = ok(text);
    let span = p.edits[1].span.expect("span");
    assert_eq!(&text[span.offset()..span.offset() + 2], "bb");
}
