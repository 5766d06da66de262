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
    // Myers is quadratic in the worst case (a file rewritten wholesale: tens of seconds for 80k
    // changed lines); past the deadline it settles for a correct but less minimal diff.
    let diff = TextDiff::configure()
        .timeout(std::time::Duration::from_millis(500))
        .diff_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    if old_name != new_name && old == new {
        return (
            format!("rename from {old_name}\nrename to {new_name}\n"),
            0,
            0,
        );
    }
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&old_header, &new_header)
        .to_string();
    (text, added, removed)
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
}
