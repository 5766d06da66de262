//! Unified diffs of a file's before and after content: every report format shows them, and the
//! checks hand a formatter's rewrite to an agent as one.

use similar::{ChangeTag, TextDiff};

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
    // Only the lines between the common head and tail (and their context) are diffed: hashing
    // every line of a 50 MB file to find one changed line was most of a large file's run.
    let (head, tail, mut skipped) = common_ends(old, new);
    let mut diff = line_diff(&old[head..old.len() - tail], &new[head..new.len() - tail]);
    if (head, tail) != (0, 0) && !clear_of_ends(&diff, head > 0, tail > 0) {
        // The diff slid a change into the context kept at an end (a run of repeated lines):
        // what lies beyond might have changed it, so the whole files are diffed.
        diff = line_diff(old, new);
        skipped = 0;
    }
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let text = diff
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&old_header, &new_header)
        .to_string();
    if skipped == 0 {
        return (text, added, removed);
    }
    let text = text
        .split_inclusive('\n')
        .map(|l| match l.strip_prefix("@@ -") {
            Some(rest) => shift_header(rest, skipped).unwrap_or_else(|| l.to_string()),
            None => l.to_string(),
        })
        .collect();
    (text, added, removed)
}

/// Myers is quadratic in the worst case (a file rewritten wholesale: tens of seconds for 80k
/// changed lines); past the deadline it settles for a correct but less minimal diff.
fn line_diff<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, 'a, str> {
    TextDiff::configure()
        .timeout(std::time::Duration::from_millis(500))
        .diff_lines(old, new)
}

/// Whether every change of `diff` is at least [`CONTEXT`] lines from each end that was cut off.
fn clear_of_ends(diff: &TextDiff<str>, head: bool, tail: bool) -> bool {
    let changes = || {
        diff.ops()
            .iter()
            .filter(|op| op.tag() != similar::DiffTag::Equal)
    };
    let (old_n, new_n) = (diff.old_slices().len(), diff.new_slices().len());
    let head_ok = !head
        || changes()
            .next()
            .is_none_or(|op| op.old_range().start >= CONTEXT && op.new_range().start >= CONTEXT);
    let tail_ok = !tail
        || changes().next_back().is_none_or(|op| {
            old_n - op.old_range().end >= CONTEXT && new_n - op.new_range().end >= CONTEXT
        });
    head_ok && tail_ok
}

/// Lines of context around a change.
const CONTEXT: usize = 3;

/// The bytes of the common head and tail of `old` and `new` that a line diff can leave out (whole
/// lines, less [`CONTEXT`] lines each side), and the number of lines in that head.
fn common_ends(old: &str, new: &str) -> (usize, usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let same = a.iter().zip(b).position(|(x, y)| x != y);
    let same = same.unwrap_or(a.len().min(b.len()));
    // The head: whole lines, less the context kept before the first change.
    let mut head = memchr::memrchr(b'\n', &a[..same]).map_or(0, |i| i + 1);
    let lines_to_change = head;
    for _ in 0..CONTEXT {
        if head == 0 {
            break;
        }
        head = memchr::memrchr(b'\n', &a[..head - 1]).map_or(0, |i| i + 1);
    }
    // The tail: never into the common head's lines, whole lines whose line break before them
    // is common too, less the context kept after the last change.
    let limit = a.len().min(b.len()) - lines_to_change;
    let tail = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(limit)
        .take_while(|(x, y)| x == y)
        .count();
    let mut from = match memchr::memchr(b'\n', &a[a.len() - tail..]) {
        Some(i) => a.len() - tail + i + 1,
        None => a.len(),
    };
    for _ in 0..CONTEXT {
        from = match memchr::memchr(b'\n', &a[from..]) {
            Some(i) => from + i + 1,
            None => a.len(),
        };
    }
    let skipped = memchr::memchr_iter(b'\n', &a[..head]).count();
    (head, a.len() - from, skipped)
}

/// A hunk header (`-a,b +c,d @@…`, after its `@@ -`) with both start lines moved down by `by`.
fn shift_header(rest: &str, by: usize) -> Option<String> {
    let (ranges, after) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let shift = |r: &str| -> Option<String> {
        let (start, len) = match r.split_once(',') {
            Some((s, l)) => (s, Some(l)),
            None => (r, None),
        };
        let start = start.parse::<usize>().ok()? + by;
        Some(match len {
            Some(l) => format!("{start},{l}"),
            None => start.to_string(),
        })
    };
    Some(format!("@@ -{} +{} @@{after}", shift(old)?, shift(new)?))
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

    /// The whole files diffed, as before the common ends were left out.
    fn whole(old: &str, new: &str) -> (String, usize, usize) {
        let diff = TextDiff::configure()
            .timeout(std::time::Duration::from_millis(500))
            .diff_lines(old, new);
        let count = |t| diff.iter_all_changes().filter(|c| c.tag() == t).count();
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header("a/f", "b/f")
            .to_string();
        (text, count(ChangeTag::Insert), count(ChangeTag::Delete))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 3000,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Leaving the common ends out changes nothing: the same diff, line numbers and counts.
        #[test]
        fn common_ends_left_out_give_the_same_diff(
            lines in proptest::collection::vec(0u8..4, 0..40),
            edits in proptest::collection::vec((0usize..40, 0u8..5, 0u8..3), 0..4),
            final_nl in proptest::bool::ANY,
        ) {
            let words = ["a\n", "b\n", "a\n", "\n", "cc"];
            let mut old_lines: Vec<&str> = lines.iter().map(|&w| words[w as usize]).collect();
            let old: String = old_lines.concat();
            for (at, w, how) in edits {
                let at = at % (old_lines.len() + 1);
                match how {
                    0 => old_lines.insert(at, words[w as usize]),
                    1 if at < old_lines.len() => { old_lines.remove(at); }
                    _ if at < old_lines.len() => old_lines[at] = words[w as usize],
                    _ => {}
                }
            }
            let mut new = old_lines.concat();
            if !final_nl {
                new.push('x');
            }
            let got = unified_diff("f", "f", Some(old.as_bytes()), Some(new.as_bytes()));
            proptest::prop_assert_eq!(got, whole(&old, &new));
        }
    }

    #[test]
    fn a_large_file_with_one_changed_line() {
        let lines: Vec<String> = (0..200_000).map(|i| format!("line {i}\n")).collect();
        let old = lines.concat();
        let mut changed = lines.clone();
        changed[150_000] = "changed\n".into();
        let new = changed.concat();
        let got = unified_diff("f", "f", Some(old.as_bytes()), Some(new.as_bytes()));
        assert!(got.0.contains("@@ -149998,7 +149998,7 @@"), "{}", got.0);
        assert_eq!(got, whole(&old, &new));
    }
}
