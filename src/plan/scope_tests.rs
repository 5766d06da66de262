//! `within` through the planner's replacement rules, on documents in memory.

use super::super::{EditStatus, MatchKind, Step, replace_in};
use super::*;

fn doc(bytes: &[u8]) -> TextDoc {
    TextDoc::decode(bytes).expect("text")
}

fn edit(old: &str, new: &str, within: &str) -> Replace {
    Replace {
        old: old.into(),
        new: new.into(),
        replace_all: false,
        window: None,
        within: Some(within.into()),
        near: None,
        whole_lines: false,
        fallbacks: Vec::new(),
    }
}

fn run(d: &mut TextDoc, path: &str, r: &Replace, lenient: bool) -> Step {
    replace_in(d, path, r, false, lenient)
}

const PY: &str = "class A:\n    def run(self):\n        x = 1\n        return x\n\n\nclass B:\n    def run(self):\n        x = 1\n        return x\n";

#[test]
fn crlf_and_bom_survive_a_scoped_edit() {
    let bytes = format!("\u{feff}{}", PY.replace('\n', "\r\n"));
    let mut d = doc(bytes.as_bytes());
    let s = run(&mut d, "m.py", &edit("x = 1\n", "x = 2\n", "B.run"), false);
    assert_eq!(s.status, EditStatus::Applied, "{:?}", s.message);
    assert_eq!(s.lines, vec![(9, 9)]);
    let got = String::from_utf8(d.encode()).expect("utf8");
    assert!(got.starts_with('\u{feff}'), "BOM kept");
    assert!(
        got.contains("x = 1\r\n        return x\r\n\r\n\r\nclass B"),
        "{got:?}"
    );
    assert!(got.ends_with("x = 2\r\n        return x\r\n"), "{got:?}");
}

#[test]
fn replace_all_stays_inside_the_symbol() {
    let mut d = doc(PY.as_bytes());
    let mut r = edit("x", "y", "A.run");
    r.replace_all = true;
    let s = run(&mut d, "m.py", &r, false);
    assert_eq!(s.status, EditStatus::Applied);
    assert_eq!(s.replacements, 2);
    assert!(
        d.text()
            .starts_with("class A:\n    def run(self):\n        y = 1\n        return y\n")
    );
    assert!(d.text().ends_with("        x = 1\n        return x\n"));
}

#[test]
fn lenient_applies_a_whitespace_match_unique_inside_the_symbol() {
    // Re-indented, the text matches in both methods: unique only inside B.run.
    let r = edit("x = 1\nreturn x\n", "x = 3\nreturn x\n", "B.run");
    let mut d = doc(PY.as_bytes());
    let s = run(&mut d, "m.py", &r, true);
    assert_eq!(s.status, EditStatus::Applied, "{:?}", s.message);
    assert_eq!(s.match_kind, Some(MatchKind::Whitespace));
    assert_eq!(s.lines, vec![(9, 10)]);
    assert!(d.text().ends_with("        x = 3\n        return x\n"));
    let mut whole = r.clone();
    whole.within = None;
    let s = run(&mut doc(PY.as_bytes()), "m.py", &whole, true);
    assert_eq!(s.status, EditStatus::Ambiguous);
}

#[test]
fn lenient_across_a_rust_type_and_its_impls_counts_every_part() {
    let rs = "struct A;\n\nimpl A {\n    fn f() {\n        go();\n    }\n}\n\nimpl A {\n    fn g() {\n        go();\n    }\n}\n";
    let s = run(
        &mut doc(rs.as_bytes()),
        "m.rs",
        &edit("go();", "stop();", "A"),
        true,
    );
    assert_eq!(s.status, EditStatus::Ambiguous, "{:?}", s.message);
    assert_eq!(s.lines, vec![(5, 5), (11, 11)]);
    // Not a substring anywhere: only the relaxed search finds it, once in each impl block.
    let s = run(
        &mut doc(rs.as_bytes()),
        "m.rs",
        &edit("\tgo();", "stop();", "A"),
        true,
    );
    assert_eq!(s.status, EditStatus::Ambiguous, "{:?}", s.message);
    assert_eq!(s.lines, vec![(5, 5), (11, 11)]);
    assert!(
        s.message
            .as_deref()
            .is_some_and(|m| m.contains("matches 2 places once whitespace")),
        "{:?}",
        s.message
    );
    // Inside one method it is unique, and applied re-indented.
    let mut d = doc(rs.as_bytes());
    let s = run(&mut d, "m.rs", &edit("\tgo();", "\tstop();", "A::g"), true);
    assert_eq!(s.status, EditStatus::Applied, "{:?}", s.message);
    assert_eq!(s.lines, vec![(11, 11)]);
    assert!(d.text().contains("        stop();\n"));
}

#[test]
fn a_line_window_outside_the_symbol_leaves_nothing_to_search() {
    let mut r = edit("x = 1", "x = 2", "A.run");
    r.window = Some(LineWindow {
        start: 7,
        end: None,
    });
    let s = run(&mut doc(PY.as_bytes()), "m.py", &r, false);
    assert_eq!(s.status, EditStatus::NotFound);
    assert_eq!(
        s.message.as_deref(),
        Some(
            "`A.run` is at lines 2-4 of m.py, outside start_line/end_line: nothing is left to \
             search; fix the line window or drop it"
        )
    );
}

#[test]
fn the_symbol_is_found_in_the_text_as_earlier_edits_left_it() {
    let mut d = doc(PY.as_bytes());
    let mut first = edit("class A:\n", "import os\n\n\nclass A:\n", "A");
    first.within = None;
    assert_eq!(
        run(&mut d, "m.py", &first, false).status,
        EditStatus::Applied
    );
    let s = run(&mut d, "m.py", &edit("x = 1", "x = 2", "B.run"), false);
    assert_eq!(s.status, EditStatus::Applied);
    assert_eq!(s.lines, vec![(12, 12)]);
}

#[test]
fn an_ambiguous_symbol_reports_every_candidate() {
    let s = run(
        &mut doc(PY.as_bytes()),
        "m.py",
        &edit("x = 1", "x = 2", "run"),
        false,
    );
    assert_eq!(s.status, EditStatus::Ambiguous);
    assert_eq!(s.lines, vec![(2, 4), (8, 10)]);
    let snippet = s.snippet.expect("snippet");
    let labels: Vec<&str> = snippet.labels.iter().map(|l| l.1.as_str()).collect();
    assert_eq!(labels, vec!["candidate 1: A.run", "candidate 2: B.run"]);
}
