//! Unified diffs of a file's before and after content: every report format shows them, and the
//! checks hand a formatter's rewrite to an agent as one.

use std::fmt::Write as _;

use similar::udiff::UnifiedHunkHeader;
use similar::{Algorithm, DiffTag};

/// A `git diff`-style unified diff (`a/`/`b/` headers, 3 lines of context), and the counts of
/// added and removed lines. A missing side is `/dev/null`; non-text content is summarised.
pub fn unified_diff(
    old_name: &str,
    new_name: &str,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
) -> (String, usize, usize) {
    let old_header = if before.is_some() {
        format!("a/{old_name}")
    } else {
        "/dev/null".to_string()
    };
    let new_header = if after.is_some() {
        format!("b/{new_name}")
    } else {
        "/dev/null".to_string()
    };
    let old = before.map(std::str::from_utf8).unwrap_or(Ok(""));
    let new = after.map(std::str::from_utf8).unwrap_or(Ok(""));
    let (Ok(old), Ok(new)) = (old, new) else {
        return (
            format!("Binary files {old_header} and {new_header} differ\n"),
            0,
            0,
        );
    };
    if old_name != new_name && old == new {
        return (
            format!("rename from {old_name}\nrename to {new_name}\n"),
            0,
            0,
        );
    }
    let (old_lines, new_lines) = (lines(old), lines(new));
    // Myers is quadratic in the worst case (a file rewritten wholesale: tens of seconds for 80k
    // changed lines); past the deadline it settles for a correct but less minimal diff. The lines
    // are compared as they are: `similar`'s own text diff would first give every line an id
    // through a SipHash map, which costs more than the diff itself when, as in a patch, the
    // files differ in a few places (its Myers strips the common head and tail first either way,
    // and the ops depend only on which lines are equal, so the result is the same).
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    let ops = similar::capture_diff_deadline(
        Algorithm::Myers,
        &old_lines[..],
        0..old_lines.len(),
        &new_lines[..],
        0..new_lines.len(),
        Some(deadline),
    );
    let (mut added, mut removed) = (0, 0);
    for op in &ops {
        added += op.new_range().len() * usize::from(op.tag() != DiffTag::Equal);
        removed += op.old_range().len() * usize::from(op.tag() != DiffTag::Equal);
    }
    let mut text = String::new();
    for (i, hunk) in similar::group_diff_ops(ops, 3)
        .into_iter()
        .filter(|h| !h.is_empty())
        .enumerate()
    {
        if i == 0 {
            let _ = writeln!(text, "--- {old_header}\n+++ {new_header}");
        }
        let _ = writeln!(text, "{}", UnifiedHunkHeader::new(&hunk));
        for op in &hunk {
            let (o, n) = (op.old_range(), op.new_range());
            match op.tag() {
                DiffTag::Equal => push_lines(&mut text, ' ', &old_lines[o]),
                DiffTag::Delete => push_lines(&mut text, '-', &old_lines[o]),
                DiffTag::Insert => push_lines(&mut text, '+', &new_lines[n]),
                DiffTag::Replace => {
                    push_lines(&mut text, '-', &old_lines[o]);
                    push_lines(&mut text, '+', &new_lines[n]);
                }
            }
        }
    }
    (text, added, removed)
}

/// The lines of `text` with their endings, as `similar` splits them: after `\n`, `\r\n`, or a
/// lone `\r`; the last line may have no ending.
fn lines(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(memchr::memchr_iter(b'\n', b).count() + 1);
    let mut start = 0;
    for i in memchr::memchr2_iter(b'\n', b'\r', b) {
        if i < start {
            continue; // the `\n` of a `\r\n` already taken
        }
        let end = if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
            i + 2
        } else {
            i + 1
        };
        out.push(&text[start..end]);
        start = end;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Diff lines with their tag, as `similar`'s unified diff writes them (a line without an ending
/// gets git's "no newline" marker).
fn push_lines(out: &mut String, tag: char, lines: &[&str]) {
    for l in lines {
        out.push(tag);
        out.push_str(l);
        if !l.ends_with(['\r', '\n']) {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_created_deleted_binary() {
        let (d, a, r) = unified_diff("x", "x", Some(b"1\n2\n"), Some(b"1\n3\n"));
        assert!(d.starts_with("--- a/x\n+++ b/x\n@@"), "{d}");
        assert_eq!((a, r), (1, 1));
        let (d, a, _) = unified_diff("n", "n", None, Some(b"hi\n"));
        assert!(d.starts_with("--- /dev/null\n+++ b/n"), "{d}");
        assert_eq!(a, 1);
        let (d, _, r) = unified_diff("g", "g", Some(b"bye\n"), None);
        assert!(d.contains("+++ /dev/null") && r == 1, "{d}");
        let (d, _, _) = unified_diff("b", "b", Some(b"\xff\x00"), None);
        assert!(d.starts_with("Binary files"), "{d}");
        let (d, _, _) = unified_diff("old", "new", Some(b"same\n"), Some(b"same\n"));
        assert!(d.contains("rename from old"), "{d}");
    }

    /// The diff as `similar`'s own text diff writes it (what this module did before it compared
    /// lines directly): the output must be the same, byte for byte.
    fn reference(before: &str, after: &str) -> (String, usize, usize) {
        use similar::{ChangeTag, TextDiff};
        let diff = TextDiff::configure().diff_lines(before, after);
        let count = |t| diff.iter_all_changes().filter(|c| c.tag() == t).count();
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header("a/f", "b/f")
            .to_string();
        (text, count(ChangeTag::Insert), count(ChangeTag::Delete))
    }

    #[test]
    fn same_output_as_similars_text_diff() {
        // A tiny deterministic generator: texts from a small alphabet of lines (so that lines
        // repeat and Myers has choices to make), with CRLF, lone CR and a missing last newline,
        // short and above the 100 lines where `similar` starts interning.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let pieces = ["a\n", "b\n", "c\r\n", "d\r", "\n", "  x = 1\n", "e"];
        for case in 0..400 {
            let len = if case % 4 == 0 { 150 } else { 12 };
            let old: String = (0..next(len))
                .map(|_| pieces[next(pieces.len() as u64) as usize])
                .collect();
            let mut new = String::new();
            for line in lines(&old) {
                match next(10) {
                    0 => {}
                    1 => new.push_str(pieces[next(pieces.len() as u64) as usize]),
                    2 => {
                        new.push_str(line);
                        new.push_str(pieces[next(pieces.len() as u64) as usize]);
                    }
                    _ => new.push_str(line),
                }
            }
            if next(3) == 0 {
                new.push_str(pieces[next(pieces.len() as u64) as usize]);
            }
            let got = unified_diff("f", "f", Some(old.as_bytes()), Some(new.as_bytes()));
            assert_eq!(
                got,
                reference(&old, &new),
                "case {case}: {old:?} -> {new:?}"
            );
        }
    }

    #[test]
    fn lines_split_as_similar_splits_them() {
        use similar::DiffableStr;
        for t in ["", "a", "a\n", "a\r\nb\rc\n\nd", "\r\r\n\n\r", "x\r"] {
            assert_eq!(lines(t), t.tokenize_lines(), "{t:?}");
        }
    }
}
