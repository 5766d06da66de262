//! End-to-end tests of the near-miss search, driven through [`diagnose`] and
//! [`relaxed_match`] and checking the invariants the module doc promises.

use super::lines::line_ranges;
use super::*;

fn unique(outcome: RelaxedOutcome) -> Relaxed {
    match outcome {
        RelaxedOutcome::Unique(r) => r,
        other => panic!("expected Unique, got {other:?}"),
    }
}

fn apply(hay: &str, r: &Relaxed) -> String {
    format!(
        "{}{}{}",
        &hay[..r.byte_range.start],
        r.replacement,
        &hay[r.byte_range.end..]
    )
}

/// Checks every invariant callers rely on, whatever the input.
fn assert_well_formed(hay: &str, found: &[Candidate], max: usize) {
    assert!(found.len() <= max);
    for (i, c) in found.iter().enumerate() {
        assert!(
            hay.get(c.byte_range.clone()).is_some(),
            "{c:?} not on char boundaries"
        );
        assert!((0.0..=1.0).contains(&c.similarity));
        assert!(c.start_line >= 1 && c.start_line <= c.end_line);
        for d in &found[i + 1..] {
            assert!(
                c.end_line < d.start_line || d.end_line < c.start_line,
                "{c:?} overlaps {d:?}"
            );
            assert!(c.rank() <= d.rank(), "ranks out of order");
        }
        assert_eq!(c.note.is_some(), c.kind == CandidateKind::Lines, "{c:?}");
    }
}

#[test]
fn shifted_indentation_is_a_whitespace_candidate() {
    let hay = "fn main() {\n    let a = 1;\n    if a > 0 {\n        println!(\"big\");\n    }\n}\n";
    let needle = "if a > 0 {\n    println!(\"big\");\n}";
    let found = diagnose(hay, needle, 3);
    assert_eq!(found[0].kind, CandidateKind::Whitespace);
    assert_eq!((found[0].start_line, found[0].end_line), (3, 5));
    assert_eq!(
        &hay[found[0].byte_range.clone()],
        "    if a > 0 {\n        println!(\"big\");\n    }"
    );
    assert!(found[0].similarity > 0.5 && found[0].similarity < 1.0);
    assert_well_formed(hay, &found, 3);
}

#[test]
fn trailing_spaces_are_whitespace_and_relaxed() {
    let hay = "a = 1;   \nb = 2;\t\nc = 3;\n";
    let found = diagnose(hay, "a = 1;\nb = 2;", 3);
    assert_eq!(
        (found[0].kind, found[0].start_line, found[0].end_line),
        (CandidateKind::Whitespace, 1, 2)
    );
    let r = unique(relaxed_match(
        hay,
        "a = 1;\nb = 2;",
        "a = 10;\nb = 20;",
        None,
    ));
    assert_eq!(apply(hay, &r), "a = 10;\nb = 20;\nc = 3;\n");
}

#[test]
fn tabs_versus_spaces_reindent_by_levels() {
    let hay = "impl X {\n\tfn f() {\n\t\told();\n\t}\n}\n";
    let needle = "    fn f() {\n        old();\n    }\n";
    let new = "    fn f() {\n        old();\n\n        extra();\n    }\n";
    let r = unique(relaxed_match(hay, needle, new, None));
    assert_eq!(
        (r.kind, r.start_line, r.end_line),
        (CandidateKind::Whitespace, 2, 4)
    );
    assert_eq!(
        r.replacement,
        "\tfn f() {\n\t\told();\n\n\t\textra();\n\t}\n"
    );
    // The needle ended with '\n', so the range swallows line 4's '\n' too.
    assert_eq!(
        apply(hay, &r),
        "impl X {\n\tfn f() {\n\t\told();\n\n\t\textra();\n\t}\n}\n"
    );
}

#[test]
fn uniform_shift_swaps_the_indent_prefix() {
    let hay = "mod m {\n        if x {\n            y();\n        }\n}";
    let needle = "if x {\n    y();\n}";
    let new = "if x {\n    y();\n  \n    z();   \n}";
    let r = unique(relaxed_match(hay, needle, new, None));
    // Blank lines and trailing whitespace of `new` are kept as given.
    assert_eq!(
        r.replacement,
        "        if x {\n            y();\n  \n            z();   \n        }"
    );
    assert_eq!(
        &hay[r.byte_range.clone()],
        "        if x {\n            y();\n        }"
    );
}

#[test]
fn typographic_punctuation_is_a_unicode_candidate() {
    let hay = "intro\n  let s = \u{201C}hello\u{201D} \u{2013} it\u{2019}s\u{2026}\nend\n";
    let needle = "let s = \"hello\" - it's...";
    let found = diagnose(hay, needle, 3);
    assert_eq!(
        (found[0].kind, found[0].start_line),
        (CandidateKind::Unicode, 2)
    );
    let r = unique(relaxed_match(hay, needle, "let s = \"bye\";", None));
    assert_eq!(
        (r.kind, r.replacement.as_str()),
        (CandidateKind::Unicode, "  let s = \"bye\";")
    );
}

fn generated(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("    let value_{i} = compute({i}, \"{i}\");\n"))
        .collect()
}

#[test]
fn fuzzy_finds_drifted_window_in_ten_thousand_lines() {
    let hay = generated(10_000);
    let needle: String = (5000..5020)
        .map(|i| match i {
            5010 => format!("        let value_{i} = compute({i}, \"changed\");\n"),
            _ => format!("        let value_{i} = compute({i}, \"{i}\");\n"),
        })
        .collect();
    let found = diagnose(&hay, &needle, 3);
    assert_well_formed(&hay, &found, 3);
    let top = &found[0];
    assert_eq!(
        (top.kind, top.start_line, top.end_line),
        (CandidateKind::Fuzzy, 5001, 5020)
    );
    let ranges = line_ranges(&hay);
    assert_eq!(top.byte_range, ranges[5000].start..ranges[5019].end);
    assert!(top.similarity >= 0.9);
}

#[test]
fn one_line_typo_is_found_through_tokens() {
    let hay = generated(2000);
    let found = diagnose(&hay, "let value_1234 = compute(1234, \"123\");", 1);
    assert_eq!(
        (found[0].kind, found[0].start_line),
        (CandidateKind::Fuzzy, 1235)
    );
}

#[test]
fn several_relaxed_matches_are_ambiguous_until_a_window_picks_one() {
    let hay = "  x = 1;\n  y = 2;\nother\n\tx = 1;\n\ty = 2;\n";
    let needle = "x = 1;\ny = 2;";
    assert_eq!(
        relaxed_match(hay, needle, "z", None),
        RelaxedOutcome::Ambiguous(vec![(1, 2), (4, 5)])
    );
    let first = unique(relaxed_match(hay, needle, "x = 3;\ny = 4;", Some((1, 3))));
    assert_eq!(
        (first.start_line, first.replacement.as_str()),
        (1, "  x = 3;\n  y = 4;")
    );
    // A match straddling the window's edge does not count.
    let second = unique(relaxed_match(hay, needle, "x = 3;\ny = 4;", Some((2, 5))));
    assert_eq!(
        (second.start_line, second.replacement.as_str()),
        (4, "\tx = 3;\n\ty = 4;")
    );
    assert_eq!(
        relaxed_match(hay, needle, "z", Some((2, 4))),
        RelaxedOutcome::None
    );
}

#[test]
fn nonuniform_indentation_is_not_reindented() {
    // Needle 0 -> 2 spaces, file 4 -> 1: neither a prefix swap nor a level offset.
    let hay = "    a\n b\n";
    let outcome = relaxed_match(hay, "a\n  b", "a\n  c", None);
    assert_eq!(
        outcome,
        RelaxedOutcome::NotReindentable {
            start_line: 1,
            end_line: 2
        }
    );
    // Levels fit, but a `new` line at a fractional level cannot be rendered in tabs.
    let outcome = relaxed_match("\tp\n\t\tq\n", "  p\n    q", "  p\n     r", None);
    assert_eq!(
        outcome,
        RelaxedOutcome::NotReindentable {
            start_line: 1,
            end_line: 2
        }
    );
}

#[test]
fn trailing_newline_of_needle_extends_range_or_mirrors_missing_eol() {
    let r = unique(relaxed_match("foo\nbar", "  foo\n", "  baz\n", None));
    assert_eq!(
        (r.byte_range.clone(), r.replacement.as_str()),
        (0..4, "baz\n")
    );
    // The file's last line has no '\n': keep it that way.
    let hay = "x\nfoo";
    let r = unique(relaxed_match(hay, "  foo\n", "  baz\n", None));
    assert_eq!(apply(hay, &r), "x\nbaz");
}

#[test]
fn candidates_never_overlap() {
    let hay = " x\n x\n x\n x\n x\n";
    let found = diagnose(hay, "x\nx", 5);
    // The last line alone is not offered as "the needle with a line too many": one line of two
    // says nothing.
    assert_eq!(
        found
            .iter()
            .map(|c| (c.kind, c.start_line))
            .collect::<Vec<_>>(),
        vec![
            (CandidateKind::Whitespace, 1),
            (CandidateKind::Whitespace, 3),
        ]
    );
    assert!(
        matches!(relaxed_match(hay, "x\nx", "y", None), RelaxedOutcome::Ambiguous(v) if v.len() == 4)
    );
    let repetitive: String = (0..60).map(|i| format!("  step_{}();\n", i % 3)).collect();
    let found = diagnose(&repetitive, "step_0();\nstep_1();\nstep_9();", 10);
    assert!(found.iter().any(|c| c.kind == CandidateKind::Fuzzy));
    assert_well_formed(&repetitive, &found, 10);
}

#[test]
fn multibyte_text_keeps_char_boundaries() {
    let hay =
        "// 日本語のコメント\n    naïve → café 😀 \u{201C}q\u{201D}\n    ünïcödé\u{00A0}line ✓\n";
    let found = diagnose(hay, "naïve → café 😀 \"q\"\nünïcödé line ✓", 3);
    assert_eq!(
        (found[0].kind, found[0].start_line, found[0].end_line),
        (CandidateKind::Unicode, 2, 3)
    );
    let fuzzy = diagnose(hay, "naïve → cafe 😀 q\nünïcödé lines ✓", 3);
    assert_eq!(fuzzy[0].kind, CandidateKind::Fuzzy);
    assert_well_formed(hay, &fuzzy, 3);
}

#[test]
fn degenerate_inputs_yield_nothing() {
    assert!(diagnose("", "x", 3).is_empty());
    assert!(diagnose("abc\n", "", 3).is_empty());
    assert!(diagnose("a\n\n\nb\n", "\n\n", 3).is_empty());
    assert!(diagnose("  a\n", "a", 0).is_empty());
    assert!(diagnose("\n", "  \t\n", 3).is_empty());
    assert_eq!(relaxed_match("", "x", "y", None), RelaxedOutcome::None);
    assert_eq!(
        relaxed_match("a\n\n", "\n", "y", None),
        RelaxedOutcome::None
    );
    assert_eq!(
        relaxed_match("  a\n", "a", "b", Some((5, 1))),
        RelaxedOutcome::None
    );
}

#[test]
fn needle_longer_than_file() {
    let hay = "alpha();\nbeta();\n";
    let found = diagnose(hay, "alpha();\nbeta();\ngamma();\ndelta();\nepsilon();", 3);
    assert_well_formed(hay, &found, 3);
    assert!(found.iter().all(|c| c.end_line <= 2));
    assert_eq!(
        relaxed_match(hay, "alpha();\nbeta();\ngamma();", "x", None),
        RelaxedOutcome::None
    );
}

#[test]
fn arbitrary_inputs_never_panic() {
    const ALPHABET: [&str; 14] = [
        "a", "b", "x();", " ", "\t", "\n", "\n", "\r", "é", "\u{201C}", "\u{2014}", "\u{00A0}",
        "😀", "…",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound as u64) as usize
    };
    for _ in 0..1500 {
        let mut text = |max_len: usize| -> String {
            let len = next(max_len);
            (0..len).map(|_| ALPHABET[next(ALPHABET.len())]).collect()
        };
        let (hay, needle, new) = (text(60), text(12), text(12));
        let max = next(5);
        assert_well_formed(&hay, &diagnose(&hay, &needle, max), max);
        let window = (next(2) == 0).then(|| (next(8), next(12)));
        if let RelaxedOutcome::Unique(r) = relaxed_match(&hay, &needle, &new, window) {
            assert!(hay.get(r.byte_range.clone()).is_some());
        }
    }
}

fn top(found: &[Candidate]) -> (CandidateKind, usize, usize, &str) {
    let c = &found[0];
    (
        c.kind,
        c.start_line,
        c.end_line,
        c.note.as_deref().unwrap_or(""),
    )
}

#[test]
fn dropped_long_middle_line_is_a_lines_candidate() {
    // The case character similarity cannot see: two short lines left of a long block.
    let hay = "def f(a):\n    x = 1\n    result = some_function_with_a_long_name(alpha, beta, gamma, delta, epsilon)\n    return result\n";
    let found = diagnose(hay, "    x = 1\n    return result\n", 3);
    assert_well_formed(hay, &found, 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            2,
            4,
            "the file has an extra line 3 between lines 1 and 2 of old_string"
        )
    );
    assert_eq!(
        &hay[found[0].byte_range.clone()],
        "    x = 1\n    result = some_function_with_a_long_name(alpha, beta, gamma, delta, epsilon)\n    return result"
    );
}

#[test]
fn added_and_duplicated_lines_are_named() {
    let hay = "a = 1\nb = 2\nc = 3\nd = 4\n";
    let found = diagnose(hay, "a = 1\nb = 2\nb = 2\nc = 3\n", 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            1,
            3,
            "line 3 of old_string is not in the file (it repeats line 2)"
        )
    );
    // A repeated first line: the gap reading (the first `(` two lines up) explains it worse.
    let found = diagnose("(\nx = 0\n(\n  \"m\",\n)\n", "(\n(\n  \"m\",\n)\n", 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            3,
            5,
            "line 2 of old_string is not in the file (it repeats line 1)"
        )
    );
    let found = diagnose(hay, "b = 2\nlog(\"here\")\nc = 3\nd = 4", 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            2,
            4,
            "line 2 of old_string is not in the file"
        )
    );
    assert_well_formed(hay, &found, 3);
}

#[test]
fn gaps_up_to_the_limit_and_ranked_by_size() {
    let body: String = (0..8).map(|i| format!("line_{i}()\n")).collect();
    // Three lines dropped is still found; four is not a lines candidate.
    let found = diagnose(&body, "line_1()\nline_5()\n", 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            2,
            6,
            "the file has extra lines 3-5 between lines 1 and 2 of old_string"
        )
    );
    let found = diagnose(&body, "line_1()\nline_6()\n", 3);
    assert!(found.iter().all(|c| c.kind != CandidateKind::Lines));
    // Two places: the one with one line between ranks above the one with two.
    let hay = "p()\nq()\nz()\n\np()\nx()\ny()\nz()\n";
    let found = diagnose(hay, "p()\nz()", 3);
    let got: Vec<_> = found.iter().map(|c| (c.kind, c.start_line)).collect();
    assert_eq!(
        got,
        vec![(CandidateKind::Lines, 1), (CandidateKind::Lines, 5)]
    );
}

#[test]
fn exact_indentation_outranks_a_whitespace_equal_place() {
    let hay = "if a:\n  go()\n  mid()\n  stop()\nif b:\n    go()\n    mid()\n    stop()\n";
    let found = diagnose(hay, "    go()\n    stop()\n", 3);
    assert_eq!(
        (found[0].kind, found[0].start_line),
        (CandidateKind::Lines, 6)
    );
    assert_eq!(
        (found[1].kind, found[1].start_line),
        (CandidateKind::Lines, 2)
    );
}

#[test]
fn changed_end_line_is_fuzzy_not_an_added_line() {
    let hay = "alpha = compute(1)\nbeta = compute(2)\ngamma = compute(3)\n";
    let found = diagnose(
        hay,
        "alpha = compute(1)\nbeta = compute(2)\ngamma = compute(4)",
        3,
    );
    assert_eq!(
        (found[0].kind, found[0].start_line, found[0].end_line),
        (CandidateKind::Fuzzy, 1, 3)
    );
    let found = diagnose(
        hay,
        "alpha = compute(0)\nbeta = compute(2)\ngamma = compute(3)",
        3,
    );
    assert_eq!(found[0].kind, CandidateKind::Fuzzy);
}

#[test]
fn whitespace_match_wins_over_lines_and_blank_only_alignments_are_dropped() {
    let hay = "  x\n  y\n\nx\nq\ny\n";
    let found = diagnose(hay, "x\ny", 3);
    assert_eq!(
        found
            .iter()
            .map(|c| (c.kind, c.start_line))
            .collect::<Vec<_>>(),
        vec![(CandidateKind::Whitespace, 1), (CandidateKind::Lines, 4)]
    );
    // Only a blank line would be matched: nothing to say.
    let found = diagnose("a\n\nb\n", "\nzzz_not_here", 3);
    assert!(found.iter().all(|c| c.kind != CandidateKind::Lines));
}

#[test]
fn crlf_file_aligns_like_lf() {
    let hay = "one();\r\ntwo_is_long_enough();\r\nthree();\r\n";
    let found = diagnose(hay, "one();\nthree();\n", 3);
    assert_eq!(top(&found).0, CandidateKind::Lines);
    assert_eq!((found[0].start_line, found[0].end_line), (1, 3));
}

#[test]
fn dropped_line_in_ten_thousand_lines() {
    let hay = generated(10_000);
    let needle: String = (6000..6020)
        .filter(|&i| i != 6007)
        .map(|i| format!("    let value_{i} = compute({i}, \"{i}\");\n"))
        .collect();
    let found = diagnose(&hay, &needle, 3);
    assert_well_formed(&hay, &found, 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            6001,
            6020,
            "the file has an extra line 6008 between lines 7 and 8 of old_string"
        )
    );
}

#[test]
fn dropped_brace_between_braces_is_lines_not_an_uneven_whitespace_window() {
    let hay = "impl S {\n    fn f(&self) {\n        for x in xs {\n            if x {\n                go(x);\n            }\n        }\n    }\n}\n";
    // Line 6 (`            }`) dropped: the rest equals lines 4-6 up to uneven indentation.
    let needle = "            if x {\n                go(x);\n        }\n";
    let found = diagnose(hay, needle, 3);
    assert_well_formed(hay, &found, 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            4,
            7,
            "the file has an extra line 6 between lines 2 and 3 of old_string"
        )
    );
    // The whitespace window lines 4-6 overlaps it and is not listed.
    assert!(found.iter().all(|c| c.kind != CandidateKind::Whitespace));
    // --lenient still applies nothing: that window cannot be re-indented evenly.
    assert_eq!(
        relaxed_match(hay, needle, "x", None),
        RelaxedOutcome::NotReindentable {
            start_line: 4,
            end_line: 6
        }
    );
}

#[test]
fn duplicated_closing_brace_is_lines_not_an_uneven_whitespace_window() {
    let hay = "func f() {\n\tfor _, c := range cs {\n\t\tc.Close()\n\t}\n}\n\nfunc g() {}\n";
    // `\t}` written twice: lines 2-5 are the same lines, the last one indented differently.
    let needle = "\tfor _, c := range cs {\n\t\tc.Close()\n\t}\n\t}\n";
    let found = diagnose(hay, needle, 3);
    assert_well_formed(hay, &found, 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            2,
            4,
            "line 3 of old_string is not in the file (it repeats line 4)"
        )
    );
}

#[test]
fn evenly_shifted_whitespace_window_still_outranks_verbatim_lines() {
    // Lines 1-2 are the needle with trailing spaces (one shift, here none, on every line);
    // lines 1-3 hold it verbatim around an extra line. The whitespace window stays first.
    let found = diagnose("a\nb  \nb\n", "a\nb", 3);
    assert_eq!(
        (found[0].kind, found[0].start_line, found[0].end_line),
        (CandidateKind::Whitespace, 1, 2)
    );
    // Re-indented as a whole (the usual mistake), and a verbatim alignment elsewhere: the
    // whitespace window first, the alignment listed after it.
    let hay =
        "def f():\n    if a:\n        go()\n    stop()\n\nif a:\n    go()\n    mid()\nstop()\n";
    let found = diagnose(hay, "if a:\n    go()\nstop()\n", 3);
    assert_well_formed(hay, &found, 3);
    assert_eq!(
        found
            .iter()
            .map(|c| (c.kind, c.start_line, c.end_line))
            .collect::<Vec<_>>(),
        vec![
            (CandidateKind::Whitespace, 2, 4),
            (CandidateKind::Lines, 6, 9)
        ]
    );
}

#[test]
fn uneven_whitespace_window_ranks_below_verbatim_lines_elsewhere() {
    // Lines 1-2 equal the needle once indentation is ignored, but shifted unevenly (0 -> 4,
    // 4 -> 0); lines 4-6 hold it verbatim around an extra line.
    let hay = "    a()\nb()\n\na()\n    c()\n    b()\n";
    let found = diagnose(hay, "a()\n    b()\n", 3);
    assert_well_formed(hay, &found, 3);
    assert_eq!(
        found
            .iter()
            .map(|c| (c.kind, c.start_line))
            .collect::<Vec<_>>(),
        vec![(CandidateKind::Lines, 4), (CandidateKind::Whitespace, 1)]
    );
}

#[test]
fn the_gap_goes_where_the_lines_match_byte_for_byte() {
    // Collapsed hashes cannot tell `    }` from `}`: the gap fits after either brace of the
    // needle; only after the first are all its lines verbatim.
    let hay = "        }\n    }\n}\nnext()\n";
    let found = diagnose(hay, "        }\n}\nnext()\n", 3);
    assert_well_formed(hay, &found, 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            1,
            4,
            "the file has an extra line 2 between lines 1 and 2 of old_string"
        )
    );
}

#[test]
fn verbatim_alignment_outranks_a_closer_reindented_one() {
    // Lines 1-3 hold the needle's lines, re-indented, around one extra line; lines 5-8 hold
    // them verbatim around two: the text was copied from there. The one-line readings at 5
    // and 8 (the other needle line added) say too little to count as verbatim.
    let hay = "  start()\n  middle()\n  finish()\n\nstart()\none()\ntwo()\nfinish()\n";
    let found = diagnose(hay, "start()\nfinish()\n", 3);
    assert_well_formed(hay, &found, 3);
    assert_eq!(
        found
            .iter()
            .map(|c| (c.kind, c.start_line, c.end_line))
            .collect::<Vec<_>>(),
        vec![(CandidateKind::Lines, 5, 8), (CandidateKind::Lines, 1, 3)]
    );
}

#[test]
fn verbatim_alignment_further_down_outranks_an_uneven_whitespace_window() {
    // Lines 3-4 equal the needle but for uneven indentation (4, 0 against 4, 2). Lines 3-5 hold
    // it verbatim around an extra line, behind one-line readings of the repeated `})` in the
    // alignments' own order; the verbatim one still comes first.
    let hay = "        })\n      })\n    })\n  })\n})\n";
    let found = diagnose(hay, "    })\n})\n", 3);
    assert_well_formed(hay, &found, 3);
    assert_eq!(
        top(&found),
        (
            CandidateKind::Lines,
            3,
            5,
            "the file has an extra line 4 between lines 1 and 2 of old_string"
        )
    );
}

#[test]
fn a_typo_in_a_two_line_old_string_is_not_read_as_an_added_line() {
    // Either line alone occurs elsewhere; the real place is lines 2-3, one character off.
    let hay = "function a() {\n  this.statusCode = code;\n  return this;\n}\nfunction b() {\n  x();\n  return this;\n}\n";
    let found = diagnose(hay, "  this.statusCode = cod;\n  return this;\n", 3);
    assert_well_formed(hay, &found, 3);
    let top = found.first().expect("a suggestion");
    assert_eq!((top.start_line, top.end_line), (2, 3), "{found:#?}");
    assert!(
        found.iter().all(|c| c.kind != CandidateKind::Lines),
        "{found:#?}"
    );
}
