//! Unified diffs of a file's before and after content: every report format shows them, and the
//! checks hand a formatter's rewrite to an agent as one.

use std::fmt::Write as _;
use std::ops::Range;

use similar::udiff::UnifiedHunkHeader;
use similar::{Algorithm, DiffOp, DiffTag};

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
    // or comparing every line of a 50 MB file to find one changed line was most of a large
    // file's run.
    let (head, tail, skipped) = common_ends(old, new);
    let diff = LineDiff::new(&old[head..old.len() - tail], &new[head..new.len() - tail]);
    if (head, tail) != (0, 0) && !diff.clear_of_ends(head > 0, tail > 0) {
        // The diff slid a change into the context kept at an end (a run of repeated lines):
        // what lies beyond might have changed it, so the whole files are diffed.
        return LineDiff::new(old, new).render(&old_header, &new_header, 0);
    }
    diff.render(&old_header, &new_header, skipped)
}

/// Where two versions of a text differ: outside these ranges (sorted, disjoint) they hold the
/// same bytes in the same order. The planner knows them for a file whose edits it applied in one
/// pass; they let a diff look at the changed lines alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

/// [`unified_diff`] of a text file changed only within `changed`, both sides UTF-8 (as a decoded
/// document's are): only the changed lines and their context are split into lines and diffed,
/// each run of ranges close enough to share a hunk on its own. A batch of 1,000 edits over 200
/// files spent a sixth of its CPU diffing every line of every file, to find changes the planner
/// had made at known places. The ranges are checked first (the bytes between them equal on both
/// sides); where they do not hold, or a diff slides a change into the context kept at a cut end,
/// the whole files are diffed as [`unified_diff`] does.
pub fn unified_diff_within(
    name: &str,
    before: &[u8],
    after: &[u8],
    changed: &[Changed],
) -> (String, usize, usize) {
    match diff_within(name, before, after, changed) {
        Some(d) => d,
        None => unified_diff(name, name, Some(before), Some(after)),
    }
}

/// Lines between two ranges from which they are diffed apart: their hunks could not meet.
const APART_LINES: usize = 2 * CONTEXT + 3;

fn diff_within(
    name: &str,
    before: &[u8],
    after: &[u8],
    changed: &[Changed],
) -> Option<(String, usize, usize)> {
    // A lone CR ends a line for the diff but not for the line counts below (see common_ends).
    // Between the ranges `after` is `before`'s bytes (checked next): only its ranges are looked
    // at, with a byte either side for a CR split by a range's end.
    let cr_in_after = changed.iter().any(|c| {
        let (s, e) = (
            c.new.start.saturating_sub(1),
            c.new.end.saturating_add(1).min(after.len()),
        );
        s <= e && has_lone_cr(&after[s..e])
    });
    if changed.is_empty() || cr_in_after || has_lone_cr(before) {
        return None;
    }
    let (mut a, mut b) = (0, 0);
    for c in changed {
        let old_ok = a <= c.old.start && c.old.start <= c.old.end && c.old.end <= before.len();
        let new_ok = b <= c.new.start && c.new.start <= c.new.end && c.new.end <= after.len();
        if !(old_ok && new_ok) || before[a..c.old.start] != after[b..c.new.start] {
            return None;
        }
        (a, b) = (c.old.end, c.new.end);
    }
    if before[a..] != after[b..] {
        return None;
    }
    // Runs of ranges that could share a hunk.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, c) in changed.iter().enumerate() {
        match runs.last_mut() {
            Some((_, last))
                if memchr::memchr_iter(b'\n', &before[changed[*last].old.end..c.old.start])
                    .take(APART_LINES)
                    .count()
                    < APART_LINES =>
            {
                *last = i;
            }
            _ => runs.push((i, i)),
        }
    }
    let (old_header, new_header) = (format!("a/{name}"), format!("b/{name}"));
    let mut text = String::new();
    let (mut added, mut removed) = (0, 0);
    // Line counts before each run's start, carried from one run to the next.
    let (mut counted_old, mut lines_old) = (0, 0);
    let (mut counted_new, mut lines_new) = (0, 0);
    for (first, last) in runs {
        let (first, last) = (&changed[first], &changed[last]);
        // The run's lines and CONTEXT more each side, found in the common text around it (the
        // same bytes on both sides, so one offset moves both).
        let mut start = memchr::memrchr(b'\n', &before[..first.old.start]).map_or(0, |i| i + 1);
        for _ in 0..CONTEXT {
            if start == 0 {
                break;
            }
            start = memchr::memrchr(b'\n', &before[..start - 1]).map_or(0, |i| i + 1);
        }
        let mut end = last.old.end;
        for _ in 0..=CONTEXT {
            end = match memchr::memchr(b'\n', &before[end..]) {
                Some(i) => end + i + 1,
                None => before.len(),
            };
        }
        let new_start = first.new.start - (first.old.start - start);
        let new_end = last.new.end + (end - last.old.end);
        let old_text = std::str::from_utf8(&before[start..end]).ok()?;
        let new_text = std::str::from_utf8(&after[new_start..new_end]).ok()?;
        let diff = LineDiff::new(old_text, new_text);
        if !diff.clear_of_ends(start > 0, end < before.len()) {
            return None;
        }
        lines_old += memchr::memchr_iter(b'\n', &before[counted_old..start]).count();
        lines_new += memchr::memchr_iter(b'\n', &after[counted_new..new_start]).count();
        (counted_old, counted_new) = (start, new_start);
        let headers = text
            .is_empty()
            .then_some((old_header.as_str(), new_header.as_str()));
        let (add, rem) = diff.render_into(&mut text, headers, lines_old, lines_new);
        added += add;
        removed += rem;
    }
    Some((text, added, removed))
}

/// The line diff of two texts.
struct LineDiff<'a> {
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    ops: Vec<DiffOp>,
}

impl<'a> LineDiff<'a> {
    /// Myers is quadratic in the worst case (a file rewritten wholesale: tens of seconds for 80k
    /// changed lines); past the deadline it settles for a correct but less minimal diff. The
    /// lines are compared as they are: `similar`'s own text diff would first give every line an
    /// id through a SipHash map, which costs more than the diff itself when, as in a patch, the
    /// files differ in a few places (its Myers strips the common head and tail first either way,
    /// and the ops depend only on which lines are equal, so the result is the same).
    fn new(old: &'a str, new: &'a str) -> LineDiff<'a> {
        let (old, new) = (lines(old), lines(new));
        let ops = line_ops(&old, &new);
        LineDiff { old, new, ops }
    }

    /// Whether every change is at least [`CONTEXT`] lines from each end that was cut off.
    fn clear_of_ends(&self, head: bool, tail: bool) -> bool {
        let changes = || self.ops.iter().filter(|op| op.tag() != DiffTag::Equal);
        let (old_n, new_n) = (self.old.len(), self.new.len());
        let head_ok = !head
            || changes().next().is_none_or(|op| {
                op.old_range().start >= CONTEXT && op.new_range().start >= CONTEXT
            });
        let tail_ok = !tail
            || changes().next_back().is_none_or(|op| {
                old_n - op.old_range().end >= CONTEXT && new_n - op.new_range().end >= CONTEXT
            });
        head_ok && tail_ok
    }

    /// The unified diff text with its hunk headers' start lines moved down by `skipped` (the
    /// lines of the common head left out), and the added and removed line counts.
    fn render(self, old_header: &str, new_header: &str, skipped: usize) -> (String, usize, usize) {
        let mut text = String::new();
        let (added, removed) =
            self.render_into(&mut text, Some((old_header, new_header)), skipped, skipped);
        (text, added, removed)
    }

    /// Appends the hunks to `text`, their start lines moved down by `skip_old` and `skip_new`,
    /// preceded by the `---`/`+++` lines of `headers` when there is a hunk; returns the added and
    /// removed line counts.
    fn render_into(
        self,
        text: &mut String,
        headers: Option<(&str, &str)>,
        skip_old: usize,
        skip_new: usize,
    ) -> (usize, usize) {
        let (mut added, mut removed) = (0, 0);
        for op in &self.ops {
            added += op.new_range().len() * usize::from(op.tag() != DiffTag::Equal);
            removed += op.old_range().len() * usize::from(op.tag() != DiffTag::Equal);
        }
        for (i, hunk) in similar::group_diff_ops(self.ops, CONTEXT)
            .into_iter()
            .filter(|h| !h.is_empty())
            .enumerate()
        {
            if let (0, Some((old_header, new_header))) = (i, headers) {
                let _ = writeln!(text, "--- {old_header}\n+++ {new_header}");
            }
            let header = UnifiedHunkHeader::new(&hunk).to_string();
            let header = match header.strip_prefix("@@ -") {
                Some(rest) if skip_old > 0 || skip_new > 0 => {
                    shift_header(rest, skip_old, skip_new).unwrap_or(header)
                }
                _ => header,
            };
            let _ = writeln!(text, "{header}");
            for op in &hunk {
                let (o, n) = (op.old_range(), op.new_range());
                match op.tag() {
                    DiffTag::Equal => push_lines(text, ' ', &self.old[o]),
                    DiffTag::Delete => push_lines(text, '-', &self.old[o]),
                    DiffTag::Insert => push_lines(text, '+', &self.new[n]),
                    DiffTag::Replace => {
                        push_lines(text, '-', &self.old[o]);
                        push_lines(text, '+', &self.new[n]);
                    }
                }
            }
        }
        (added, removed)
    }
}

/// Myers over `old` and `new`, settling for a correct but less minimal diff past its deadline.
fn myers_ops(old: &[&str], new: &[&str]) -> Vec<DiffOp> {
    // Small inputs finish long before any deadline: no clock read for each of a batch's many
    // small regions.
    let deadline = (old.len().max(new.len()) > NO_DEADLINE_LINES)
        .then(|| std::time::Instant::now() + std::time::Duration::from_millis(500));
    similar::capture_diff_deadline(
        Algorithm::Myers,
        old,
        0..old.len(),
        new,
        0..new.len(),
        deadline,
    )
}

/// Up to this many lines a side, Myers runs without a deadline (its worst case is then well
/// under a millisecond).
const NO_DEADLINE_LINES: usize = 200;

/// From this many lines on each side, the lines found on one side only are set aside before
/// Myers runs ([`line_ops`]): below it, Myers is quick whatever the lines are, and hashing them
/// would cost more than it saves.
const SET_ASIDE_LINES: usize = 1_000;

/// The diff of `old` and `new`. A line found on one side only can be in no common subsequence:
/// setting such lines aside changes neither the longest common subsequence nor the counts of
/// lines added and removed, and leaves Myers the lines the two sides share, which in a file
/// rewritten wholesale are few (blank lines, closing braces), and in a file with a line changed
/// in each of many places are the unchanged lines, in the same order (Myers then has nothing to
/// search). Myers over every line of such a file ran to its deadline (0.5 s for 8,000 functions
/// with one line changed in each) and returned a longer diff than needed, which depended on the
/// machine's speed.
fn line_ops(old: &[&str], new: &[&str]) -> Vec<DiffOp> {
    // The common head and tail first, as Myers itself does: only the lines between are hashed
    // (a large file with one change a long way from either end has almost nothing between).
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_mid, new_mid) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    if old_mid.len() < SET_ASIDE_LINES || new_mid.len() < SET_ASIDE_LINES {
        return myers_ops(old, new);
    }
    let in_old: std::collections::HashSet<&str> = old_mid.iter().copied().collect();
    let in_new: std::collections::HashSet<&str> = new_mid.iter().copied().collect();
    let keep_old: Vec<usize> = (0..old_mid.len())
        .filter(|&i| in_new.contains(old_mid[i]))
        .collect();
    let keep_new: Vec<usize> = (0..new_mid.len())
        .filter(|&j| in_old.contains(new_mid[j]))
        .collect();
    let old_kept: Vec<&str> = keep_old.iter().map(|&i| old_mid[i]).collect();
    let new_kept: Vec<&str> = keep_new.iter().map(|&j| new_mid[j]).collect();
    let between = myers_ops(&old_kept, &new_kept)
        .into_iter()
        .filter_map(|op| match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => Some((old_index, new_index, len)),
            _ => None,
        })
        .flat_map(|(o, n, len)| (0..len).map(move |k| (o + k, n + k)))
        .map(|(o, n)| (head + keep_old[o], head + keep_new[n]));
    let matched: Vec<(usize, usize)> = (0..head)
        .map(|i| (i, i))
        .chain(between)
        .chain((0..tail).map(|k| (old.len() - tail + k, new.len() - tail + k)))
        .collect();
    ops_around(&matched, old.len(), new.len())
}

/// The ops that keep the `matched` pairs of lines (increasing on both sides) and, between them,
/// delete the old lines and insert the new ones: what Myers returns for such a stretch.
fn ops_around(matched: &[(usize, usize)], old_len: usize, new_len: usize) -> Vec<DiffOp> {
    let mut ops = Vec::new();
    let (mut i, mut j, mut k) = (0, 0, 0);
    loop {
        let (next_i, next_j) = matched.get(k).copied().unwrap_or((old_len, new_len));
        if next_i > i {
            ops.push(DiffOp::Delete {
                old_index: i,
                old_len: next_i - i,
                new_index: j,
            });
        }
        if next_j > j {
            ops.push(DiffOp::Insert {
                old_index: next_i,
                new_index: j,
                new_len: next_j - j,
            });
        }
        if k == matched.len() {
            return ops;
        }
        let mut len = 1;
        while matched.get(k + len) == Some(&(next_i + len, next_j + len)) {
            len += 1;
        }
        ops.push(DiffOp::Equal {
            old_index: next_i,
            new_index: next_j,
            len,
        });
        (i, j, k) = (next_i + len, next_j + len, k + len);
    }
}

/// Lines of context around a change.
const CONTEXT: usize = 3;

/// The bytes of the common head and tail of `old` and `new` that a line diff can leave out (whole
/// lines, less [`CONTEXT`] lines each side), and the number of lines in that head.
fn common_ends(old: &str, new: &str) -> (usize, usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    // A lone CR ends a line for the diff too; the ends are found by `\n` alone, so such a file
    // is diffed whole (rare, and its line numbers must not drift).
    if has_lone_cr(a) || has_lone_cr(b) {
        return (0, 0, 0);
    }
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

fn has_lone_cr(t: &[u8]) -> bool {
    memchr::memchr_iter(b'\r', t).any(|i| t.get(i + 1) != Some(&b'\n'))
}

/// A hunk header (`-a,b +c,d @@…`, after its `@@ -`) with its start lines moved down by `old_by`
/// and `new_by`.
fn shift_header(rest: &str, old_by: usize, new_by: usize) -> Option<String> {
    let (ranges, after) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let shift = |r: &str, by: usize| -> Option<String> {
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
    Some(format!(
        "@@ -{} +{} @@{after}",
        shift(old, old_by)?,
        shift(new, new_by)?
    ))
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

    /// The diff Myers finds, without a deadline: what a shortcut must give.
    fn myers(old: &str, new: &str) -> (String, usize, usize) {
        let (o, n) = (lines(old), lines(new));
        let ops = similar::capture_diff_slices(Algorithm::Myers, &o, &n);
        LineDiff {
            old: o,
            new: n,
            ops,
        }
        .render("a/f", "b/f", 0)
    }

    /// A file rewritten wholesale (no line in common) gives Myers's diff; so does one with a line
    /// in common, which stays as context.
    #[test]
    fn a_wholesale_rewrite_is_diffed_as_myers_would() {
        let old: String = (0..1_200)
            .map(|i| format!("let a{i} = old(a{i});\n"))
            .collect();
        let new: String = (0..1_100)
            .map(|i| format!("let a{i} = new(a{i});\n"))
            .collect();
        let want = myers(&old, &new);
        assert_eq!(LineDiff::new(&old, &new).render("a/f", "b/f", 0), want);
        assert_eq!(
            unified_diff("f", "f", Some(old.as_bytes()), Some(new.as_bytes())),
            want
        );
        assert_eq!(want.1, 1_100);
        assert_eq!(want.2, 1_200);
        let shared = |t: &str, at: usize| {
            let mut l: Vec<&str> = lines(t);
            l[at] = "// kept\n";
            l.concat()
        };
        let (old1, new1) = (shared(&old, 600), shared(&new, 500));
        let got = unified_diff("f", "f", Some(old1.as_bytes()), Some(new1.as_bytes()));
        assert_eq!(got, myers(&old1, &new1));
        assert!(got.0.contains("\n // kept\n"), "kept as context");
    }

    /// 8,000 functions with one line changed in each: the diff is the minimal one, each changed
    /// line removed and added, everything else kept. Myers over all 32,000 lines ran to its
    /// deadline here and returned 14,000 to 17,000 added lines, depending on the machine.
    #[test]
    fn a_line_changed_in_each_of_many_places_gives_the_minimal_diff() {
        let file = |call: &str| -> String {
            (0..8_000)
                .map(|i| format!("fn f{i}(x: u32) -> u32 {{\n    {call}_{i}(x)\n}}\n\n"))
                .collect()
        };
        let (old, new) = (file("old_call"), file("new_call"));
        let (diff, added, removed) =
            unified_diff("f", "f", Some(old.as_bytes()), Some(new.as_bytes()));
        assert_eq!((added, removed), (8_000, 8_000));
        assert!(diff.contains(
            " fn f4321(x: u32) -> u32 {\n-    old_call_4321(x)\n+    new_call_4321(x)\n }\n"
        ));
    }

    /// Setting aside the lines found on one side only keeps the diff correct (it turns the old
    /// lines into the new ones) and minimal (as many lines added and removed as Myers without a
    /// deadline finds), whatever the lines: many shared ones, few, or none.
    #[test]
    fn lines_set_aside_keep_the_diff_correct_and_minimal() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for case in 0..12 {
            let n_old = SET_ASIDE_LINES + next(300) as usize;
            let n_new = SET_ASIDE_LINES + next(300) as usize;
            // Lines from a small shared vocabulary, or unique to their side.
            let shared_every = 1 + case % 4;
            let mut side = |tag: &str, n: usize| -> String {
                (0..n)
                    .map(|i| match next(shared_every as u64 + 1) {
                        0 => format!("{tag} only {i}\n"),
                        k => format!("shared {}\n", (k + next(5)) % 7),
                    })
                    .collect()
            };
            let (old, new) = (side("old", n_old), side("new", n_new));
            let (o, n) = (lines(&old), lines(&new));
            let ops = line_ops(&o, &n);
            let mut rebuilt: Vec<&str> = Vec::new();
            for op in &ops {
                match op.tag() {
                    DiffTag::Equal => {
                        assert_eq!(o[op.old_range()], n[op.new_range()], "case {case}");
                        rebuilt.extend(&o[op.old_range()]);
                    }
                    DiffTag::Insert | DiffTag::Replace => rebuilt.extend(&n[op.new_range()]),
                    DiffTag::Delete => {}
                }
            }
            assert_eq!(rebuilt, n, "case {case}: the ops give the new lines");
            let changed = |ops: &[DiffOp]| -> usize {
                ops.iter()
                    .filter(|op| op.tag() != DiffTag::Equal)
                    .map(|op| op.old_range().len() + op.new_range().len())
                    .sum()
            };
            let full = similar::capture_diff_slices(Algorithm::Myers, &o, &n);
            assert_eq!(changed(&ops), changed(&full), "case {case}: minimal");
        }
    }

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
            let words = ["a\n", "b\n", "a\r", "\n", "cc"];
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
            proptest::prop_assert_eq!(got, reference(&old, &new));
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
        assert_eq!(got, reference(&old, &new));
    }

    /// Applies the unified diff `diff` to `old`, as `patch` would: each hunk at its stated line,
    /// its context and removed lines checked. `None` when the diff does not apply.
    fn apply_diff(old: &str, diff: &str) -> Option<String> {
        let old_lines = lines(old);
        let (mut out, mut at) = (String::new(), 0usize);
        let mut rest = diff.lines().skip_while(|l| !l.starts_with("@@")).peekable();
        while let Some(header) = rest.next() {
            let range = header.strip_prefix("@@ -")?.split(' ').next()?;
            let (start, len) = range.split_once(',').unwrap_or((range, "1"));
            let (start, len): (usize, usize) = (start.parse().ok()?, len.parse().ok()?);
            let first = if len == 0 { start } else { start - 1 };
            out.extend(old_lines.get(at..first)?.iter().copied());
            at = first;
            while let Some(line) = rest.next_if(|l| !l.starts_with("@@")) {
                let no_eol = rest.next_if(|l| l.starts_with("\\ No newline")).is_some();
                let text = format!("{}{}", &line[1..], if no_eol { "" } else { "\n" });
                match &line[..1] {
                    " " | "-" if old_lines.get(at) != Some(&text.as_str()) => return None,
                    " " => {
                        out.push_str(&text);
                        at += 1;
                    }
                    "-" => at += 1,
                    "+" => out.push_str(&text),
                    _ => return None,
                }
            }
        }
        out.extend(old_lines.get(at..)?.iter().copied());
        Some(out)
    }

    /// `old` with each `(start, end, text)` (sorted, disjoint byte ranges) replaced, and where the
    /// two differ.
    fn replaced(old: &str, edits: &[(usize, usize, &str)]) -> (String, Vec<Changed>) {
        let (mut new, mut changed, mut at) = (String::new(), Vec::new(), 0);
        for &(start, end, text) in edits {
            new.push_str(&old[at..start]);
            changed.push(Changed {
                old: start..end,
                new: new.len()..new.len() + text.len(),
            });
            new.push_str(text);
            at = end;
        }
        new.push_str(&old[at..]);
        (new, changed)
    }

    /// A file changed at known places (a line changed here and there, lines added and removed,
    /// changes close enough to share a hunk, one at each end) is diffed within those places
    /// exactly as the whole files are: same hunks, same line numbers, same counts.
    #[test]
    fn a_diff_within_known_changes_is_the_whole_files_diff() {
        let old: String = (0..400)
            .map(|i| format!("def f{i}(x):\n    return g{i}(x)\n\n"))
            .collect();
        let at = |needle: &str| old.find(needle).expect("in the file");
        let edits: Vec<(usize, usize, String)> = [
            ("def f0(", "def first("),
            ("g17(x)", "h17(x, y)"),
            ("g19(x)", "g19(x)\n    pass"),
            ("    return g200(x)\n", ""),
            ("def f300(x):\n", "@cached\ndef f300(x):\n"),
            ("g399(x)\n\n", "g399(x)"),
        ]
        .iter()
        .map(|(from, to)| (at(from), at(from) + from.len(), to.to_string()))
        .collect();
        let edits: Vec<(usize, usize, &str)> =
            edits.iter().map(|(s, e, t)| (*s, *e, t.as_str())).collect();
        let (new, changed) = replaced(&old, &edits);
        let whole = unified_diff("f", "f", Some(old.as_bytes()), Some(new.as_bytes()));
        let within = diff_within("f", old.as_bytes(), new.as_bytes(), &changed);
        assert_eq!(within.as_ref(), Some(&whole), "diffed within the changes");
        assert!(whole.0.contains("@@ -50,13 +50,14 @@"), "{}", whole.0);
        assert!(
            whole.0.ends_with("\\ No newline at end of file\n"),
            "{}",
            whole.0
        );
        // Ranges that do not hold (the texts differ outside them) give the whole files' diff.
        let mut wrong = changed.clone();
        wrong.remove(2);
        assert_eq!(
            diff_within("f", old.as_bytes(), new.as_bytes(), &wrong),
            None
        );
        assert_eq!(
            unified_diff_within("f", old.as_bytes(), new.as_bytes(), &wrong),
            whole
        );
        // A lone CR ends a line for the diff, not for the line counts: anywhere in the old text,
        // or brought by a range, the whole files are diffed.
        let lone = old.replacen("def f50(x):", "def f50(x\r):", 1);
        let (lone_new, lone_changed) = replaced(&lone, &[(0, 3, "fn")]);
        assert_eq!(
            diff_within("f", lone.as_bytes(), lone_new.as_bytes(), &lone_changed),
            None
        );
        let (cr_new, cr_changed) = replaced(&old, &[(0, 3, "fn\r")]);
        assert_eq!(
            diff_within("f", old.as_bytes(), cr_new.as_bytes(), &cr_changed),
            None
        );
        assert!(diff_within("f", old.as_bytes(), cr_new.as_bytes(), &[]).is_none());
        // Ranges out of bounds, reversed or out of order are refused, never followed.
        let bad = |old: Range<usize>, new: Range<usize>| Changed { old, new };
        #[allow(clippy::reversed_empty_ranges)]
        for ranges in [
            vec![bad(5..usize::MAX, usize::MAX..usize::MAX)],
            vec![bad(3..1, 3..1)],
            vec![bad(4..6, 4..6), bad(0..2, 0..2)],
            vec![bad(0..old.len() + 1, 0..old.len() + 1)],
        ] {
            assert_eq!(
                diff_within("f", old.as_bytes(), old.as_bytes(), &ranges),
                None
            );
        }
    }

    proptest::proptest! {
        /// Whatever the text (repeated lines, blank lines, a last line without an ending) and
        /// wherever the changes, the diff within them turns the old text into the new one, and
        /// changes no fewer lines than the whole files' (Myers, minimal here).
        #[test]
        fn a_diff_within_known_changes_applies(
            lines in proptest::collection::vec(0u8..5, 1..60),
            edits in proptest::collection::vec((0usize..400, 0usize..12, 0u8..5), 1..5),
            final_nl in proptest::bool::ANY,
        ) {
            let words = ["a\n", "b\n", "\n", "call(x)\n", "  a\n"];
            let mut old: String = lines.iter().map(|&w| words[w as usize]).collect();
            if !final_nl {
                old.push_str("end");
            }
            let mut cuts: Vec<(usize, usize, &str)> = Vec::new();
            let mut from = 0;
            for (start, len, w) in edits {
                let start = from + start % (old.len() + 1 - from);
                let end = (start + len).min(old.len());
                cuts.push((start, end, words[w as usize]));
                from = end;
                if from >= old.len() {
                    break;
                }
            }
            let (new, changed) = replaced(&old, &cuts);
            let whole = unified_diff("f", "f", Some(old.as_bytes()), Some(new.as_bytes()));
            let within = unified_diff_within("f", old.as_bytes(), new.as_bytes(), &changed);
            proptest::prop_assert_eq!(apply_diff(&old, &within.0), Some(new.clone()), "{}", within.0);
            proptest::prop_assert!(within.1 + within.2 >= whole.1 + whole.2);
            proptest::prop_assert_eq!(within.0.is_empty(), old == new);
        }
    }
}
