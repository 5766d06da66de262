//! The gate: which findings the patch introduced.
//!
//! Lines are mapped from the patched file back to the original through the equal blocks of a line
//! diff (as OpenHands maps lines with a sequence matcher; it survives inserted lines shifting everything
//! below them). A finding is *old* when the baseline has a finding of the same rule, matched one
//! to one, at its corresponding place with the same message:
//! - on an unchanged line, the original line it is unchanged from, with the very same message;
//! - on a changed line, the original line it was paired with inside its block of changed lines
//!   ([`super::pairing`]), with a message that differs at most by numbers ("line too long
//!   (95 > 88)" becoming "(96 > 88)") or by the patch's own one-for-one substitutions on that
//!   line (a renamed identifier: clippy's "`LOG_LEVEL_NAMES` is used to index" after that name
//!   was renamed). A changed line without a partner was written by the patch: its findings are
//!   new, and so is a finding naming something the line's edit did not substitute (an edit that
//!   fixes one undefined name and introduces another);
//! - a finding without a line, anywhere with the same message.
//!
//! Anything else is *new*: a finding on an inserted line, and a finding on an untouched line
//! that the patch caused (a definition removed elsewhere). In a block too large to pair, a
//! changed line's finding is old when one of the block's original lines had the same message.
//!
//! A formatter's hunk is new only where the patch made the formatting worse: a hunk is "already
//! there" when every patched line in it is unchanged, or was changed from original lines of which
//! the formatter already wanted to rewrite one (the baseline: the same formatter on the original).
//! So renaming an identifier on a line that was already unformatted passes, and a newly written
//! line the formatter would rewrite blocks. Without a baseline (the formatter failed on the
//! original), a hunk is new when it touches a line the patch changed.

use std::collections::{BTreeSet, HashMap};

use similar::{DiffOp, TextDiff};

use super::finding::{Finding, RawFinding};
use super::pairing;

/// How the lines of the patched text relate to the original.
#[derive(Debug, Clone)]
pub struct LineMap {
    /// For each patched line (index = line - 1): the original line it is unchanged from.
    to_old: Vec<Option<usize>>,
    /// For each changed patched line that replaced original lines: those lines (1-based,
    /// inclusive). An inserted line has none.
    replaced: Vec<Option<(usize, usize)>>,
    /// For each changed patched line of a block small enough to pair: its partner.
    partner: Vec<Partner>,
}

/// A changed line's counterpart in the original.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Partner {
    /// Unchanged, inserted outside any block, or in a block too large to pair.
    #[default]
    Unknown,
    /// In a paired block, without a partner: a line the patch wrote.
    None,
    /// The original line (1-based) it stands for, and the patch's substitutions between them.
    Line {
        old: usize,
        subs: Vec<(String, String)>,
    },
}

/// One token the patch replaced by another on a line (`old`, `new`).
type Sub = (String, String);

/// Where a finding on a patched line may have been in the original.
enum Counterpart<'a> {
    /// The same line, unchanged (or 0: a finding without a line).
    Same(usize),
    /// A changed line's partner, with the substitutions the patch made there.
    Partner(usize, &'a [(String, String)]),
    /// Any of the original lines of a block too large to pair.
    Block(usize, usize),
    /// Nowhere: a line the patch wrote.
    Nowhere,
}

impl LineMap {
    pub fn new(before: &str, after: &str) -> LineMap {
        let diff = TextDiff::from_lines(before, after);
        let total = after
            .lines()
            .count()
            .max(after.split_inclusive('\n').count());
        let mut to_old = vec![None; total];
        let mut replaced = vec![None; total];
        let mut partner = vec![Partner::Unknown; total];
        let old_lines: Vec<&str> = before.lines().collect();
        let new_lines: Vec<&str> = after.lines().collect();
        for op in diff.ops() {
            match *op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => {
                    for i in 0..len {
                        if let Some(slot) = to_old.get_mut(new_index + i) {
                            *slot = Some(old_index + i + 1);
                        }
                    }
                }
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => {
                    for i in 0..new_len {
                        if let Some(slot) = replaced.get_mut(new_index + i) {
                            *slot = Some((old_index + 1, old_index + old_len));
                        }
                    }
                    let (Some(old), Some(new)) = (
                        old_lines.get(old_index..old_index + old_len),
                        new_lines.get(new_index..new_index + new_len),
                    ) else {
                        continue;
                    };
                    let Some(pairs) = pairing::pair_block(old, new) else {
                        continue;
                    };
                    for (i, p) in pairs.into_iter().enumerate() {
                        if let Some(slot) = partner.get_mut(new_index + i) {
                            *slot = match p {
                                Some(o) => Partner::Line {
                                    old: old_index + o + 1,
                                    subs: pairing::substitutions(old[o], new[i]),
                                },
                                None => Partner::None,
                            };
                        }
                    }
                }
                DiffOp::Delete { .. } | DiffOp::Insert { .. } => {}
            }
        }
        LineMap {
            to_old,
            replaced,
            partner,
        }
    }

    /// A file the patch creates: every line is new.
    pub fn all_new(after: &str) -> LineMap {
        let n = after.split_inclusive('\n').count();
        LineMap {
            to_old: vec![None; n],
            replaced: vec![None; n],
            partner: vec![Partner::Unknown; n],
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

    /// The original lines a changed patched line replaced (`None`: unchanged, or inserted).
    pub fn replaced(&self, line: usize) -> Option<(usize, usize)> {
        line.checked_sub(1)
            .and_then(|i| self.replaced.get(i).copied().flatten())
    }

    fn counterpart(&self, line: usize) -> Counterpart<'_> {
        if line == 0 {
            return Counterpart::Same(0);
        }
        if let Some(l) = self.old_line(line) {
            return Counterpart::Same(l);
        }
        match self.partner.get(line - 1) {
            Some(Partner::Line { old, subs }) => Counterpart::Partner(*old, subs),
            Some(Partner::None) => Counterpart::Nowhere,
            _ => match self.replaced(line) {
                Some((a, b)) => Counterpart::Block(a, b),
                None => Counterpart::Nowhere,
            },
        }
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
    let base = baseline.unwrap_or(&[]);
    // (original line, rule) → the baseline findings there; each can be claimed once.
    let mut at: HashMap<(usize, &str), Vec<usize>> = HashMap::new();
    for (i, b) in base.iter().enumerate() {
        at.entry((b.line, b.rule.as_str())).or_default().push(i);
    }
    let mut claimed = vec![false; base.len()];
    let mut old = vec![false; findings.len()];
    // Exact messages first, so a finding that only matches up to a substitution never takes the
    // baseline finding another one matches exactly.
    for exact in [true, false] {
        for (k, f) in findings.iter().enumerate() {
            if old[k] {
                continue;
            }
            let rule = f.rule.as_str();
            let (lines, subs): (std::ops::RangeInclusive<usize>, Option<&[Sub]>) =
                match map.counterpart(f.line) {
                    Counterpart::Same(l) => (l..=l, None),
                    Counterpart::Partner(l, subs) => (l..=l, Some(subs)),
                    Counterpart::Block(a, b) => (a..=b, None),
                    Counterpart::Nowhere => continue,
                };
            if !exact && subs.is_none() {
                continue;
            }
            let hit = lines
                .flat_map(|l| at.get(&(l, rule)))
                .flatten()
                .find(|&&i| {
                    !claimed[i]
                        && if exact {
                            base[i].message == f.message
                        } else {
                            pairing::same_but_substituted(
                                &base[i].message,
                                &f.message,
                                subs.unwrap_or(&[]),
                            )
                        }
                });
            if let Some(&i) = hit {
                claimed[i] = true;
                old[k] = true;
            }
        }
    }
    findings
        .iter()
        .zip(old)
        .map(|(f, old)| Finding {
            line: f.line,
            column: f.column,
            rule: f.rule.clone(),
            severity: f.severity,
            message: f.message.clone(),
            new: !old,
        })
        .collect()
}

/// A message without what a patch elsewhere may change in it while the finding in a file it did
/// not touch stays the same: runs of digits become `#`, and quoted code becomes `_` (a type
/// checker's "`parseCfg` is not assignable" after the patch renamed that type in another file).
fn mask_elsewhere(message: &str) -> String {
    static QUOTED: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"`[^`\n]*`|'[A-Za-z_$][\w$.:]*'|\d+").ok());
    match QUOTED.as_ref() {
        Some(re) => re
            .replace_all(message, |c: &regex::Captures| {
                if c[0].starts_with(|ch: char| ch.is_ascii_digit()) {
                    "#"
                } else {
                    "_"
                }
            })
            .into_owned(),
        None => message.to_string(),
    }
}

/// Findings in a file the patch did not change, against the baseline of the same file: new unless
/// the baseline has the same rule and message at the same place (matched one to one).
pub fn mark_unchanged(findings: &[RawFinding], baseline: &[RawFinding]) -> Vec<Finding> {
    // Keyed by the masked message: the file is unchanged, but a message may name an identifier
    // the patch renamed elsewhere, and that does not make the finding new.
    let mut pool: HashMap<(usize, usize, &str, String), usize> = HashMap::new();
    for b in baseline {
        *pool
            .entry((
                b.line,
                b.column,
                b.rule.as_str(),
                mask_elsewhere(&b.message),
            ))
            .or_default() += 1;
    }
    findings
        .iter()
        .map(|f| {
            let key = (
                f.line,
                f.column,
                f.rule.as_str(),
                mask_elsewhere(&f.message),
            );
            let old = match pool.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            };
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

/// The lines of `text` that the formatter would rewrite (1-based): every line of a hunk, and for
/// a pure insertion the lines on both sides of where it goes. This is a formatter's baseline.
pub fn unformatted_lines(text: &str, formatted: &str) -> BTreeSet<usize> {
    hunks(text, formatted)
        .into_iter()
        .flat_map(|h| h.lo..=h.end)
        .collect()
}

/// One hunk of a formatter's diff, in the lines of the text it formats.
struct Hunk {
    start: usize,
    end: usize,
    /// `start`, or one line above it for a pure insertion (which touches both sides).
    lo: usize,
    removed: usize,
    added: usize,
    /// The hunk's ops, to rebuild a partial result.
    new_range: std::ops::Range<usize>,
    old_range: std::ops::Range<usize>,
}

fn hunks(text: &str, formatted: &str) -> Vec<Hunk> {
    let diff = TextDiff::from_lines(text, formatted);
    let mut out = Vec::new();
    for group in diff.grouped_ops(0) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let start = first.old_range().start + 1;
        let end = last.old_range().end.max(start);
        let lo = start
            .saturating_sub(usize::from(first.old_range().is_empty()))
            .max(1);
        let (mut removed, mut added) = (0, 0);
        for op in &group {
            removed += op.old_range().len();
            added += op.new_range().len();
        }
        out.push(Hunk {
            start,
            end,
            lo,
            removed,
            added,
            old_range: first.old_range().start..last.old_range().end,
            new_range: first.new_range().start..last.new_range().end,
        });
    }
    out
}

/// The formatter's diff as findings: one per hunk, at its first patched line. `before_dirty` is
/// the baseline ([`unformatted_lines`] of the original); `None` when there is none.
pub fn format_findings(
    patched: &str,
    formatted: &str,
    map: &LineMap,
    before_dirty: Option<&BTreeSet<usize>>,
) -> Vec<Finding> {
    hunks(patched, formatted)
        .into_iter()
        .map(|h| {
            let new = (h.lo..=h.end).any(|l| line_is_new(l, map, before_dirty));
            Finding {
                line: h.start,
                column: 0,
                rule: "format".into(),
                severity: super::finding::Severity::Error,
                message: format!(
                    "the formatter would rewrite lines {}-{} (-{} +{})",
                    h.start, h.end, h.removed, h.added
                ),
                new,
            }
        })
        .collect()
}

/// Whether a patched line in a formatter's hunk makes the hunk the patch's doing.
fn line_is_new(line: usize, map: &LineMap, before_dirty: Option<&BTreeSet<usize>>) -> bool {
    if !map.changed(line) {
        return false;
    }
    match (before_dirty, map.replaced(line)) {
        (None, _) | (Some(_), None) => true,
        (Some(dirty), Some((a, b))) => !dirty.range(a..=b).any(|_| true),
    }
}

/// The patched text with only the new hunks of the formatter applied, for a report that shows
/// what the patch must fix and nothing that was already there.
pub fn only_new_hunks(patched: &str, formatted: &str, findings: &[Finding]) -> String {
    let old: Vec<&str> = patched.split_inclusive('\n').collect();
    let new: Vec<&str> = formatted.split_inclusive('\n').collect();
    let mut out = String::with_capacity(patched.len());
    let mut at = 0;
    for h in hunks(patched, formatted) {
        let keep = findings.iter().any(|f| f.new && f.line == h.start);
        for l in &old[at.min(old.len())..h.old_range.start.min(old.len())] {
            out.push_str(l);
        }
        let lines = if keep {
            &new[h.new_range.start.min(new.len())..h.new_range.end.min(new.len())]
        } else {
            &old[h.old_range.start.min(old.len())..h.old_range.end.min(old.len())]
        };
        for l in lines {
            out.push_str(l);
        }
        at = h.old_range.end;
    }
    for l in &old[at.min(old.len())..] {
        out.push_str(l);
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
    fn a_finding_on_a_changed_line_is_old_only_if_the_lines_it_replaced_had_it() {
        let before = "x = 1\nlong_name_here = 2\ny = 3\n";
        // Line 2 renamed (same length), a line inserted at the end.
        let after = "x = 1\nlong_value_here = 2\ny = 3\nlong_extra = 4\n";
        let map = LineMap::new(before, after);
        assert_eq!(map.replaced(2), Some((2, 2)));
        assert_eq!(map.replaced(4), None);
        let base = [raw(2, "E501", "line too long (20 > 10 characters)")];
        let now = [
            raw(2, "E501", "line too long (20 > 10 characters)"),
            raw(4, "E501", "line too long (20 > 10 characters)"),
        ];
        let new: Vec<bool> = mark(&now, Some(&base), &map)
            .iter()
            .map(|f| f.new)
            .collect();
        assert_eq!(new, vec![false, true], "the inserted line's finding is new");
        // The line got longer: the same finding with other numbers is still the old one.
        let now = [raw(2, "E501", "line too long (21 > 10 characters)")];
        assert!(!mark(&now, Some(&base), &map)[0].new);
        // Another message is new.
        let now = [raw(2, "E501", "something else")];
        assert!(mark(&now, Some(&base), &map)[0].new);
        // A message naming an identifier the patch renamed on that line is the same finding.
        let quoted = [raw(
            2,
            "needless_range_loop",
            "`i` is used to index `long_name_here`",
        )];
        let now = [raw(
            2,
            "needless_range_loop",
            "`i` is used to index `long_value_here`",
        )];
        assert!(!mark(&now, Some(&quoted), &map)[0].new);
        // A name the line's edit did not substitute is another finding.
        let quoted = [raw(
            2,
            "no-unused-vars",
            "'oldName' is assigned a value but never used.",
        )];
        let now = [raw(
            2,
            "no-unused-vars",
            "'newName' is assigned a value but never used.",
        )];
        assert!(mark(&now, Some(&quoted), &map)[0].new);
        let renamed = LineMap::new("x\nlet oldName = 1;\n", "x\nlet newName = 1;\n");
        assert!(!mark(&now, Some(&quoted), &renamed)[0].new);
        // Matched one to one: the replaced line had one such finding, not two.
        let twice = [
            raw(2, "E501", "line too long (20 > 10 characters)"),
            raw(2, "E501", "line too long (20 > 10 characters)"),
        ];
        let new: Vec<bool> = mark(&twice, Some(&base), &map)
            .iter()
            .map(|f| f.new)
            .collect();
        assert_eq!(new, vec![false, true]);
    }

    fn f821(line: usize, name: &str) -> RawFinding {
        raw(line, "F821", &format!("Undefined name `{name}`"))
    }

    #[test]
    fn an_edit_that_fixes_one_undefined_name_and_introduces_another_is_new() {
        // OpenHands' lint-diff case: x's name fixed, y's line now uses another undefined name,
        // and z's line (written by the patch) uses the name x no longer does.
        let before = "\nx = UNDEFINED_VARIABLE\ny = 10\n";
        let after = "\nx = 5\ny = ANOTHER_UNDEFINED_VARIABLE\nz = UNDEFINED_VARIABLE\n";
        let map = LineMap::new(before, after);
        let base = [f821(2, "UNDEFINED_VARIABLE")];
        let now = [
            f821(3, "ANOTHER_UNDEFINED_VARIABLE"),
            f821(4, "UNDEFINED_VARIABLE"),
        ];
        let new: Vec<bool> = mark(&now, Some(&base), &map)
            .iter()
            .map(|f| f.new)
            .collect();
        assert_eq!(new, vec![true, true]);
        // On one line: `qty` replaced by an expression naming `rate`, not a rename of `qty`.
        let map = LineMap::new("total = price * qty\n", "total = price * quantity * rate\n");
        let marked = mark(&[f821(1, "rate")], Some(&[f821(1, "qty")]), &map);
        assert!(marked[0].new);
        // The same line with `qty` renamed to `rate` (the edit is that substitution): the same
        // finding, carried over.
        let map = LineMap::new("total = price * qty\n", "total = price * rate\n");
        let marked = mark(&[f821(1, "rate")], Some(&[f821(1, "qty")]), &map);
        assert!(!marked[0].new);
        // Unchanged lines keep exact messages.
        let map = LineMap::new("a = qty\nb = 1\n", "a = qty\nb = 2\n");
        assert!(mark(&[f821(1, "rate")], Some(&[f821(1, "qty")]), &map)[0].new);
        assert!(!mark(&[f821(1, "qty")], Some(&[f821(1, "qty")]), &map)[0].new);
    }

    #[test]
    fn an_exact_match_is_never_taken_by_a_substituted_one() {
        // Two findings on a renamed line: the exact one claims its own baseline finding, the
        // renamed one the other.
        let map = LineMap::new("f(old_a, keep)\n", "f(new_a, keep)\n");
        let base = [f821(1, "keep"), f821(1, "old_a")];
        let now = [f821(1, "new_a"), f821(1, "keep")];
        let new: Vec<bool> = mark(&now, Some(&base), &map)
            .iter()
            .map(|f| f.new)
            .collect();
        assert_eq!(new, vec![false, false]);
    }

    #[test]
    fn a_block_too_large_to_pair_matches_exact_messages_anywhere_in_it() {
        let before: String = (0..300).map(|i| format!("a{i} = x\n")).collect();
        let after: String = (0..300).map(|i| format!("b{i} = y\n")).collect();
        let map = LineMap::new(&before, &after);
        let base = [raw(7, "R", "same")];
        assert!(!mark(&[raw(200, "R", "same")], Some(&base), &map)[0].new);
        assert!(mark(&[raw(200, "R", "other")], Some(&base), &map)[0].new);
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
        let dirty = unformatted_lines(before, "x = 1\ny = 2\nz = 3\n");
        assert_eq!(dirty, BTreeSet::from([1]));
        // The patch changes line 3 (formatted); line 1 was already unformatted.
        let after = "x=1\ny = 2\nz = 4\n";
        let formatted = "x = 1\ny = 2\nz = 4\n";
        let map = LineMap::new(before, after);
        let f = format_findings(after, formatted, &map, Some(&dirty));
        assert_eq!(f.len(), 1);
        assert!(!f[0].new, "pre-existing");
        let after2 = "x=1\ny = 2\nz=4\n";
        let f = format_findings(
            after2,
            "x = 1\ny = 2\nz = 4\n",
            &LineMap::new(before, after2),
            Some(&dirty),
        );
        assert_eq!(f.iter().filter(|x| x.new).count(), 1);
        assert_eq!(f.iter().find(|x| x.new).map(|x| x.line), Some(3));
    }

    #[test]
    fn a_rename_on_an_already_unformatted_line_passes_and_a_new_bad_line_blocks() {
        let before = "call(aaa,bbb)\nmid = 0\nok = 1\n";
        let dirty = unformatted_lines(before, "call(aaa, bbb)\nmid = 0\nok = 1\n");
        // The rename touches the unformatted line 1: its hunk was already there.
        let after = "call(aaa,ccc)\nmid = 0\nok = 1\n";
        let formatted = "call(aaa, ccc)\nmid = 0\nok = 1\n";
        let map = LineMap::new(before, after);
        let f = format_findings(after, formatted, &map, Some(&dirty));
        assert_eq!(f.len(), 1);
        assert!(!f[0].new, "{f:?}");
        // Without a baseline the same hunk counts as new (the cautious rule).
        assert!(format_findings(after, formatted, &map, None)[0].new);
        // Rewriting the formatted line 3 into a badly formatted one blocks.
        let after = "call(aaa,bbb)\nmid = 0\nok=2\n";
        let formatted = "call(aaa, bbb)\nmid = 0\nok = 2\n";
        let f = format_findings(after, formatted, &LineMap::new(before, after), Some(&dirty));
        assert_eq!(
            f.iter().map(|x| x.new).collect::<Vec<_>>(),
            vec![false, true]
        );
        // An inserted, badly formatted line blocks.
        let after = "call(aaa,bbb)\nmid = 0\nok = 1\nx=[1,2]\n";
        let formatted = "call(aaa, bbb)\nmid = 0\nok = 1\nx = [1, 2]\n";
        let f = format_findings(after, formatted, &LineMap::new(before, after), Some(&dirty));
        let new: Vec<usize> = f.iter().filter(|x| x.new).map(|x| x.line).collect();
        assert_eq!(new, vec![4]);
        // The report's diff shows only the new hunk.
        let partial = only_new_hunks(after, formatted, &f);
        assert_eq!(partial, "call(aaa,bbb)\nmid = 0\nok = 1\nx = [1, 2]\n");
    }
}
