//! The tie-break of a converted hunk ([`Near`]): which of several exact occurrences of its old
//! text it means.
//!
//! Invariants: a hint never creates a match and never moves one. It is consulted only when the
//! old text occurs more than once (or, for codex's `*** End of File`, to drop occurrences that do
//! not end the file), and it must single one occurrence out; otherwise the edit stays `ambiguous`.
//! - anchors (codex `@@` lines): each anchor is a line equal to it once trimmed, searched after the
//!   previous anchor; every place the whole anchor chain is found picks the first occurrence after
//!   it. One distinct pick wins.
//! - line (a diff hunk's start line): the occurrence starting nearest to it; a tie of distances
//!   stays ambiguous. When the line decided between several places, the edit says so
//!   ([`narrow_noted`]): a stale line number could have picked the wrong one.
//! - `at_eof` of codex (`*** End of File`): only occurrences that end the file;
//! - `at_start` / `at_eof` of a diff hunk (from line 1, or without trailing context: where `git
//!   apply` anchors it): among several occurrences, the one that starts / ends the file, if any.

use std::ops::Range;

use super::doc::TextDoc;
use crate::patch::Near;

/// The occurrences `near` keeps: all of them when it cannot choose.
pub fn narrow(doc: &TextDoc, matches: Vec<Range<usize>>, near: &Near) -> Vec<Range<usize>> {
    let text = doc.text();
    let mut matches = matches;
    let ends = |m: &Range<usize>| text[m.end..].trim_end_matches(['\n', '\r']).is_empty();
    if near.line.is_none() {
        // codex's `*** End of File`: a requirement.
        if near.at_eof {
            matches.retain(ends);
        }
    } else if matches.len() > 1 {
        // A diff hunk from line 1, or without trailing context: where `git apply` anchors it,
        // preferred among several occurrences (its line numbers alone are never trusted).
        for (on, at) in [(near.at_start, true), (near.at_eof, false)] {
            let kept: Vec<Range<usize>> = matches
                .iter()
                .filter(|m| on && if at { m.start == 0 } else { ends(m) })
                .cloned()
                .collect();
            if !kept.is_empty() {
                matches = kept;
            }
        }
    }
    if matches.len() > 1 && !near.anchors.is_empty() {
        let picked = after_anchors(text, &matches, &near.anchors);
        if picked.len() == 1 {
            return picked;
        }
        if !picked.is_empty() {
            matches = picked;
        }
    }
    if matches.len() > 1
        && let Some(line) = near.line
    {
        let dist = |m: &Range<usize>| doc.line_range(m).0.abs_diff(line);
        let best = matches.iter().map(dist).min().unwrap_or(0);
        let nearest: Vec<Range<usize>> = matches
            .iter()
            .filter(|m| dist(m) == best)
            .cloned()
            .collect();
        if nearest.len() == 1 {
            return nearest;
        }
    }
    matches
}

/// [`narrow`], and a note for the edit when the line number was what decided between several
/// occurrences.
pub fn narrow_noted(
    doc: &TextDoc,
    matches: Vec<Range<usize>>,
    near: &Near,
) -> (Vec<Range<usize>>, Option<String>) {
    let Some(line) = near.line else {
        return (narrow(doc, matches, near), None);
    };
    let unlined = Near {
        line: None,
        ..near.clone()
    };
    let open = narrow(doc, matches.clone(), &unlined);
    let kept = narrow(doc, matches, near);
    let note = match kept.as_slice() {
        [one] if open.len() > 1 => {
            let at: Vec<String> = open
                .iter()
                .map(|m| doc.line_range(m).0.to_string())
                .collect();
            Some(format!(
                "line numbers decided between {} places (lines {}): applied at line {}, the one \
                 nearest to the hunk's line {line}; if the diff is older than the file, check \
                 that this is the place meant",
                open.len(),
                at.join(", "),
                doc.line_range(one).0
            ))
        }
        _ => None,
    };
    (kept, note)
}

/// For every place the anchor chain is found, the first match starting after its last anchor
/// line; distinct picks, in file order.
fn after_anchors(text: &str, matches: &[Range<usize>], anchors: &[String]) -> Vec<Range<usize>> {
    // Line starts, and the trimmed text of each line.
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        lines.push((at, l.trim()));
        at += l.len();
    }
    let want: Vec<&str> = anchors.iter().map(|a| a.trim()).collect();
    let mut picks: Vec<Range<usize>> = Vec::new();
    for (i, (_, l)) in lines.iter().enumerate() {
        if *l != want[0] {
            continue;
        }
        // The rest of the chain, each after the previous.
        let mut j = i;
        let mut ok = true;
        for a in &want[1..] {
            match lines[j + 1..].iter().position(|(_, l)| l == a) {
                Some(k) => j = j + 1 + k,
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        let after = lines.get(j + 1).map_or(text.len(), |(s, _)| *s);
        if let Some(m) = matches.iter().find(|m| m.start >= after)
            && !picks.contains(m)
        {
            picks.push(m.clone());
        }
    }
    picks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occurrences(doc: &TextDoc, needle: &str) -> Vec<Range<usize>> {
        doc.text()
            .match_indices(needle)
            .map(|(i, _)| i..i + needle.len())
            .collect()
    }

    fn lines_of(doc: &TextDoc, ms: &[Range<usize>]) -> Vec<usize> {
        ms.iter().map(|m| doc.line_range(m).0).collect()
    }

    const TEXT: &str = "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n";

    #[test]
    fn anchors_pick_the_occurrence_after_them() {
        let doc = TextDoc::decode(TEXT.as_bytes()).expect("text");
        let ms = occurrences(&doc, "        return 1\n");
        let near = Near {
            anchors: vec!["class B:".into()],
            ..Near::default()
        };
        assert_eq!(lines_of(&doc, &narrow(&doc, ms.clone(), &near)), vec![7]);
        let chain = Near {
            anchors: vec!["class A:".into(), "def f(self):".into()],
            ..Near::default()
        };
        assert_eq!(lines_of(&doc, &narrow(&doc, ms.clone(), &chain)), vec![3]);
        // An anchor found twice, picking two different occurrences, decides nothing.
        let twice = Near {
            anchors: vec!["def f(self):".into()],
            ..Near::default()
        };
        assert_eq!(narrow(&doc, ms.clone(), &twice).len(), 2);
        // An anchor that is not there decides nothing either.
        let absent = Near {
            anchors: vec!["class C:".into()],
            ..Near::default()
        };
        assert_eq!(narrow(&doc, ms, &absent).len(), 2);
    }

    #[test]
    fn line_picks_the_nearest_and_a_tie_stays_ambiguous() {
        let doc = TextDoc::decode(b"x\na\nx\nb\nx\n").expect("text");
        let ms = occurrences(&doc, "x\n");
        let at = |line| Near {
            line: Some(line),
            ..Near::default()
        };
        assert_eq!(narrow(&doc, ms.clone(), &at(4)).len(), 3);
        assert_eq!(narrow(&doc, ms.clone(), &at(2)).len(), 3);
        assert_eq!(lines_of(&doc, &narrow(&doc, ms.clone(), &at(5))), vec![5]);
        assert_eq!(lines_of(&doc, &narrow(&doc, ms, &at(100))), vec![5]);
    }

    #[test]
    fn end_of_file_keeps_only_the_last_occurrence() {
        let doc = TextDoc::decode(b"end\nmid\nend\n").expect("text");
        let ms = occurrences(&doc, "end\n");
        let near = Near {
            at_eof: true,
            ..Near::default()
        };
        assert_eq!(lines_of(&doc, &narrow(&doc, ms.clone(), &near)), vec![3]);
        let doc = TextDoc::decode(b"end\nmid\n").expect("text");
        let ms = occurrences(&doc, "end\n");
        assert!(narrow(&doc, ms, &near).is_empty());
    }
}
