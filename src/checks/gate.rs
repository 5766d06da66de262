//! The gate: which findings the patch introduced.
//!
//! Lines are mapped from the patched file back to the original through the equal blocks of a line
//! diff (the OpenHands approach in PRIOR-ART, which survives inserted lines shifting everything
//! below them). A finding is *old* when it stands on an unchanged line whose original line had a
//! baseline finding of the same rule and message, matched one to one; anything else is *new*,
//! including a finding on an untouched line that the patch caused (a definition removed
//! elsewhere). A finding without a line is old when the baseline has the same rule and message.
//!
//! Formatter output needs no baseline: each hunk of the formatter's diff is new exactly when it
//! touches a line the patch changed, so a file that was already unformatted elsewhere does not
//! block a patch that is formatted.

use std::collections::HashMap;

use similar::{DiffOp, TextDiff};

use super::finding::{Finding, RawFinding};

/// How the lines of the patched text relate to the original.
#[derive(Debug, Clone)]
pub struct LineMap {
    /// For each patched line (index = line - 1): the original line it is unchanged from.
    to_old: Vec<Option<usize>>,
}

impl LineMap {
    pub fn new(before: &str, after: &str) -> LineMap {
        let diff = TextDiff::from_lines(before, after);
        let total = after
            .lines()
            .count()
            .max(after.split_inclusive('\n').count());
        let mut to_old = vec![None; total];
        for op in diff.ops() {
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = *op
            {
                for i in 0..len {
                    if let Some(slot) = to_old.get_mut(new_index + i) {
                        *slot = Some(old_index + i + 1);
                    }
                }
            }
        }
        LineMap { to_old }
    }

    /// A file the patch creates: every line is new.
    pub fn all_new(after: &str) -> LineMap {
        LineMap {
            to_old: vec![None; after.split_inclusive('\n').count()],
        }
    }

    /// The original line of patched line `line` (1-based), if the patch left it unchanged.
    pub fn old_line(&self, line: usize) -> Option<usize> {
        line.checked_sub(1)
            .and_then(|i| self.to_old.get(i).copied().flatten())
    }

    pub fn changed(&self, line: usize) -> bool {
        self.old_line(line).is_none()
    }
}

/// Turns the raw findings on the patched text into findings with `new` set, comparing with the
/// baseline (the same checker on the original text). `baseline = None` means there is no
/// original (a created file): everything is new.
pub fn mark(
    findings: &[RawFinding],
    baseline: Option<&[RawFinding]>,
    map: &LineMap,
) -> Vec<Finding> {
    // (line, rule, message) → how many baseline findings are still unclaimed.
    let mut pool: HashMap<(usize, &str, &str), usize> = HashMap::new();
    if let Some(base) = baseline {
        for b in base {
            *pool
                .entry((b.line, b.rule.as_str(), b.message.as_str()))
                .or_default() += 1;
        }
    }
    findings
        .iter()
        .map(|f| {
            let old_line = if f.line == 0 {
                Some(0)
            } else {
                map.old_line(f.line)
            };
            let old = baseline.is_some()
                && old_line.is_some_and(|l| {
                    match pool.get_mut(&(l, f.rule.as_str(), f.message.as_str())) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            true
                        }
                        _ => false,
                    }
                });
            Finding {
                line: f.line,
                column: f.column,
                rule: f.rule.clone(),
                severity: f.severity,
                message: f.message.clone(),
                new: !old,
            }
        })
        .collect()
}

/// The formatter's diff as findings: one per hunk, at its first patched line, new when it touches
/// a line the patch changed.
pub fn format_findings(patched: &str, formatted: &str, map: &LineMap) -> Vec<Finding> {
    let diff = TextDiff::from_lines(patched, formatted);
    let mut out = Vec::new();
    for group in diff.grouped_ops(0) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let start = first.old_range().start + 1;
        let end = last.old_range().end.max(start);
        // A pure insertion touches the lines on both sides of where it goes.
        let lo = start
            .saturating_sub(usize::from(first.old_range().is_empty()))
            .max(1);
        let new = (lo..=end).any(|l| map.changed(l));
        let mut removed = 0;
        let mut added = 0;
        for op in &group {
            removed += op.old_range().len();
            added += op.new_range().len();
        }
        out.push(Finding {
            line: start,
            column: 0,
            rule: "format".into(),
            severity: super::finding::Severity::Error,
            message: format!(
                "the formatter would rewrite lines {start}-{end} (-{removed} +{added})"
            ),
            new,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::finding::Severity;

    fn raw(line: usize, rule: &str, msg: &str) -> RawFinding {
        RawFinding {
            path: "a".into(),
            line,
            column: 1,
            rule: rule.into(),
            severity: Severity::Error,
            message: msg.into(),
        }
    }

    #[test]
    fn findings_shifted_by_inserted_lines_stay_old() {
        let before = "import os\nx = 1\nunused = 2\n";
        let after = "import os\nimport sys\nimport re\nx = 1\nunused = 2\n";
        let map = LineMap::new(before, after);
        assert_eq!(map.old_line(4), Some(2));
        assert!(map.changed(2));
        let base = [raw(1, "F401", "os unused"), raw(3, "F841", "unused")];
        let now = [
            raw(1, "F401", "os unused"),
            raw(2, "F401", "sys unused"),
            raw(5, "F841", "unused"),
        ];
        let marked = mark(&now, Some(&base), &map);
        let new: Vec<bool> = marked.iter().map(|f| f.new).collect();
        assert_eq!(new, vec![false, true, false]);
    }

    #[test]
    fn a_finding_the_patch_caused_on_an_untouched_line_is_new() {
        let before = "def f(): pass\nf()\n";
        let after = "def g(): pass\nf()\n";
        let map = LineMap::new(before, after);
        let marked = mark(&[raw(2, "F821", "undefined name f")], Some(&[]), &map);
        assert!(marked[0].new);
    }

    #[test]
    fn duplicates_are_matched_one_to_one_and_created_files_are_all_new() {
        let text = "a\nb\n";
        let map = LineMap::new(text, text);
        let marked = mark(
            &[raw(1, "R", "m"), raw(1, "R", "m")],
            Some(&[raw(1, "R", "m")]),
            &map,
        );
        assert_eq!(marked.iter().filter(|f| f.new).count(), 1);
        let marked = mark(&[raw(1, "R", "m")], None, &LineMap::all_new(text));
        assert!(marked[0].new);
    }

    #[test]
    fn format_hunks_are_new_only_where_the_patch_changed_lines() {
        let before = "x=1\ny = 2\nz = 3\n";
        // The patch changes line 3 (formatted); line 1 was already unformatted.
        let after = "x=1\ny = 2\nz = 4\n";
        let formatted = "x = 1\ny = 2\nz = 4\n";
        let map = LineMap::new(before, after);
        let f = format_findings(after, formatted, &map);
        assert_eq!(f.len(), 1);
        assert!(!f[0].new, "pre-existing");
        let after2 = "x=1\ny = 2\nz=4\n";
        let f = format_findings(
            after2,
            "x = 1\ny = 2\nz = 4\n",
            &LineMap::new(before, after2),
        );
        assert_eq!(f.iter().filter(|x| x.new).count(), 1);
        assert_eq!(f.iter().find(|x| x.new).map(|x| x.line), Some(3));
    }
}
