//! Whole-line matching: examples, and a property test of every line-based format against a
//! reference line matcher (a hunk applies only at whole lines, and exactly where the reference
//! says).
use super::*;
use crate::patch::{InputFormat, Op, parse_input};
use crate::plan::{EditStatus, replace_in};
use proptest::prelude::*;

fn lines_of(text: &str, old: &str) -> Vec<Range<usize>> {
    line_matches(text, 0..text.len(), old)
}

#[test]
fn only_whole_lines_match() {
    // Inside a line: never.
    assert!(lines_of("subtotal = 1\nprint(subtotal)\n", "total = 1\n").is_empty());
    // Joining lines (a leading empty line that is the end of the line before): never.
    assert!(lines_of("a\nb\nc\n", "\nb\nc\n").is_empty());
    assert_eq!(lines_of("a\n\nb\nc\n", "\nb\nc\n"), vec![2..7]);
    // Overlapping whole-line matches all count.
    assert_eq!(lines_of("}\n}\n}\n", "}\n}\n"), vec![0..4, 2..6]);
    // An old text without a final line break only ends the file.
    assert!(lines_of("last\nmore\n", "last").is_empty());
    assert_eq!(lines_of("more\nlast", "last"), vec![5..9]);
    // A final line break stands for the end of a file that has none.
    assert_eq!(lines_of("first\nlast", "last\n"), vec![6..10]);
    assert!(lines_of("first\nxlast", "last\n").is_empty());
    assert!(lines_of("", "\n").is_empty());
    assert!(lines_of("a", "\n").is_empty());
}

#[test]
fn a_window_bounds_the_matches() {
    let text = "x\ny\nx\ny\n";
    assert_eq!(line_matches(text, 4..8, "x\ny\n"), vec![4..8]);
    assert!(line_matches(text, 0..3, "x\ny\n").is_empty());
    // The end-of-file reading needs the window to reach the end.
    assert!(line_matches("a\nb", 0..2, "b\n").is_empty());
    assert_eq!(line_matches("a\nb", 2..3, "b\n"), vec![2..3]);
}

/// The formats a hunk is written in.
#[derive(Debug, Clone, Copy)]
enum Fmt {
    Codex,
    Aider,
    Diff,
}

/// The hunk as a patch text of `fmt` editing `f.txt`.
fn patch_text(fmt: Fmt, old: &[String], new: &[String], line: usize) -> String {
    let mut t = String::new();
    match fmt {
        Fmt::Codex => {
            t.push_str("*** Begin Patch\n*** Update File: f.txt\n@@\n");
            old.iter().for_each(|l| t.push_str(&format!("-{l}\n")));
            new.iter().for_each(|l| t.push_str(&format!("+{l}\n")));
            t.push_str("*** End Patch\n");
        }
        Fmt::Aider => {
            t.push_str("f.txt\n<<<<<<< SEARCH\n");
            old.iter().for_each(|l| t.push_str(&format!("{l}\n")));
            t.push_str("=======\n");
            new.iter().for_each(|l| t.push_str(&format!("{l}\n")));
            t.push_str(">>>>>>> REPLACE\n");
        }
        Fmt::Diff => {
            t.push_str(&format!(
                "--- a/f.txt\n+++ b/f.txt\n@@ -{line},{} +{line},{} @@\n",
                old.len(),
                new.len()
            ));
            old.iter().for_each(|l| t.push_str(&format!("-{l}\n")));
            new.iter().for_each(|l| t.push_str(&format!("+{l}\n")));
        }
    }
    t
}

/// The reference: the file's lines (without their breaks), and every index where `old` stands as
/// consecutive whole lines.
fn reference(lines: &[String], old: &[String]) -> Vec<usize> {
    if old.is_empty() || old.len() > lines.len() {
        return Vec::new();
    }
    (0..=lines.len() - old.len())
        .filter(|&i| lines[i..i + old.len()] == *old)
        .collect()
}

/// The file with `lines[at..at + k]` replaced by `new`, every line ending with `eol` except, when
/// the file had no final line break and the replacement did not reach the end, its last line.
fn replaced(
    lines: &[String],
    final_nl: bool,
    eol: &str,
    (at, k): (usize, usize),
    new: &[String],
) -> String {
    let mut out: Vec<String> = lines[..at].to_vec();
    out.extend(new.iter().cloned());
    out.extend(lines[at + k..].iter().cloned());
    let mut s: String = out.iter().map(|l| format!("{l}{eol}")).collect();
    if !final_nl && at + k < lines.len() {
        s.truncate(s.len() - eol.len());
    }
    s
}

/// The file's text from generated lines (CRLF or LF), and the lines and final line break it really
/// has (an empty last line without a line break is no line at all).
fn file_of(lines: &[String], final_nl: bool, crlf: bool) -> (String, Vec<String>, bool) {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut text: String = lines.iter().map(|l| format!("{l}{eol}")).collect();
    if !final_nl && !text.is_empty() {
        text.truncate(text.len() - eol.len());
    }
    let mut real: Vec<String> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect();
    let ends = text.ends_with('\n') || text.is_empty();
    if ends {
        real.pop();
    }
    (text, real, ends)
}

fn line_text() -> impl Strategy<Value = String> {
    // Few, overlapping lines, so that substring-but-not-whole-line occurrences are common.
    prop::sample::select(vec!["a", "ab", "b", "ba", "", " a", "a ", "aa", "b a"])
        .prop_map(String::from)
}

type Case = (
    (Vec<String>, bool, bool),
    Vec<String>,
    Vec<String>,
    usize,
    Fmt,
);

fn case() -> impl Strategy<Value = Case> {
    (
        (
            prop::collection::vec(line_text(), 0..12),
            any::<bool>(),
            prop::bool::weighted(0.25),
        ),
        prop::collection::vec(line_text(), 1..4),
        prop::collection::vec(line_text(), 0..3),
        1usize..14,
        prop::sample::select(vec![Fmt::Codex, Fmt::Aider, Fmt::Diff]),
    )
}

proptest! {
    // No seed files: a failure prints its minimal input, which belongs in the example tests above.
    #![proptest_config(ProptestConfig {
        cases: 1500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// A hunk never applies anywhere but at whole lines: where the reference line matcher finds
    /// its old lines once, it applies there (codex, aider) or at one of the reference's places
    /// (diff, whose line number breaks ties); where the reference finds none, nothing changes.
    #[test]
    fn hunks_apply_only_at_whole_lines(((lines, final_nl, crlf), old, new, line, fmt) in case()) {
        let (text, lines, final_nl) = file_of(&lines, final_nl, crlf);
        // New line breaks take the ending of the text they replace: the file's, when it has any.
        let eol = if crlf && text.contains('\n') { "\r\n" } else { "\n" };
        let patch = patch_text(fmt, &old, &new, line);
        let parsed = parse_input(patch.as_bytes(), "p", match fmt {
            Fmt::Codex => InputFormat::Codex,
            Fmt::Aider => InputFormat::Aider,
            Fmt::Diff => InputFormat::Diff,
        });
        let Ok(parsed) = parsed else { return Ok(()) };
        let Some(Ok(Op::Replace(r))) = parsed.edits.first().map(|e| e.op.clone()) else {
            // Old equal to new, a blank aider SEARCH: not a replacement.
            return Ok(());
        };
        prop_assert!(r.whole_lines);
        let mut doc = TextDoc::decode(text.as_bytes()).expect("text");
        let step = replace_in(&mut doc, "f.txt", &r, false, false);
        let mut places = reference(&lines, &old);
        let (mut old_l, mut new_l) = (old.clone(), new.clone());
        // aider's own fallback: SEARCH without a leading blank line (REPLACE's too).
        if places.is_empty() && matches!(fmt, Fmt::Aider) && old.len() > 2 && old[0].trim().is_empty() {
            old_l = old[1..].to_vec();
            if new.first().is_some_and(|l| l.trim().is_empty()) {
                new_l = new[1..].to_vec();
            }
            places = reference(&lines, &old_l);
        }
        let after = String::from_utf8(doc.encode()).expect("utf-8");
        let expected: Vec<String> = places
            .iter()
            .map(|&at| replaced(&lines, final_nl, eol, (at, old_l.len()), &new_l))
            .collect();
        match step.status {
            EditStatus::Applied => {
                prop_assert!(
                    expected.contains(&after),
                    "applied outside the reference's places {places:?}: {text:?} -> {after:?}"
                );
                if !matches!(fmt, Fmt::Diff) {
                    prop_assert_eq!(places.len(), 1);
                }
            }
            status => {
                prop_assert_eq!(&after, &text);
                match places.len() {
                    0 => prop_assert_eq!(status, EditStatus::NotFound),
                    1 => prop_assert!(false, "the reference found one place, patchgate {status:?}"),
                    _ => prop_assert_eq!(status, EditStatus::Ambiguous),
                }
            }
        }
    }

    /// Under `--lenient` a hunk may match lines that differ in whitespace, but still only whole
    /// lines: every line before and after the reported range is unchanged.
    #[test]
    fn lenient_matches_are_whole_lines_too(((lines, final_nl, crlf), old, new, line, fmt) in case()) {
        let (text, _, _) = file_of(&lines, final_nl, crlf);
        let patch = patch_text(fmt, &old, &new, line);
        let fmt_in = match fmt {
            Fmt::Codex => InputFormat::Codex,
            Fmt::Aider => InputFormat::Aider,
            Fmt::Diff => InputFormat::Diff,
        };
        let Ok(parsed) = parse_input(patch.as_bytes(), "p", fmt_in) else { return Ok(()) };
        let Some(Ok(Op::Replace(r))) = parsed.edits.first().map(|e| e.op.clone()) else {
            return Ok(());
        };
        let mut doc = TextDoc::decode(text.as_bytes()).expect("text");
        let step = replace_in(&mut doc, "f.txt", &r, false, true);
        let after = String::from_utf8(doc.encode()).expect("utf-8");
        if step.status != EditStatus::Applied {
            prop_assert_eq!(&after, &text);
            return Ok(());
        }
        for &(a, b) in &step.lines {
            let before: Vec<&str> = text.split('\n').collect();
            let now: Vec<&str> = after.split('\n').collect();
            // Lines 1..a-1 unchanged, and the lines after b unchanged at the end.
            prop_assert_eq!(&before[..a - 1], &now[..a - 1]);
            let tail = before.len().saturating_sub(b);
            prop_assert!(now.len() >= a - 1 + tail);
            prop_assert_eq!(&before[before.len() - tail..], &now[now.len() - tail..]);
        }
    }
}
