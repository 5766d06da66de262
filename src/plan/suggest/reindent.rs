//! Lenient matching: [`relaxed_match`] finds the single whitespace-or-Unicode window for
//! `--lenient` and re-indents `new_string` to fit it, by swapping a common indent prefix
//! (method A) or by shifting indentation levels (method B, e.g. tabs versus spaces).

use std::ops::Range;

use super::lines::{Needle, is_blank, line_ranges, relaxed_starts};
use super::{CandidateKind, Relaxed, RelaxedOutcome};

/// `lines`: optional 1-based inclusive line window; a match must lie entirely inside it.
pub fn relaxed_match(
    haystack: &str,
    needle: &str,
    new: &str,
    lines: Option<(usize, usize)>,
) -> RelaxedOutcome {
    let Some(needle) = Needle::parse(needle) else {
        return RelaxedOutcome::None;
    };
    let ranges = line_ranges(haystack);
    let k = needle.lines.len();
    let (ws, uni) = relaxed_starts(haystack, &ranges, &needle);
    let inside = |s: &usize| lines.is_none_or(|(lo, hi)| s + 1 >= lo && s + k <= hi);
    let mut hits: Vec<(usize, CandidateKind)> = ws
        .iter()
        .filter(|s| inside(s))
        .map(|&s| (s, CandidateKind::Whitespace))
        .chain(
            uni.iter()
                .filter(|s| inside(s))
                .map(|&s| (s, CandidateKind::Unicode)),
        )
        .collect();
    hits.sort_by_key(|&(s, _)| s);
    let (start, kind) = match hits.as_slice() {
        [] => return RelaxedOutcome::None,
        [only] => *only,
        many => {
            return RelaxedOutcome::Ambiguous(many.iter().map(|&(s, _)| (s + 1, s + k)).collect());
        }
    };
    let (start_line, end_line) = (start + 1, start + k);
    let matched = &ranges[start..start + k];
    let pairs: Vec<(&str, &str)> = needle
        .lines
        .iter()
        .zip(matched)
        .filter(|(n, _)| !is_blank(n))
        .map(|(n, r)| (indent(n), indent(&haystack[r.clone()])))
        .collect();
    let new_lines: Vec<&str> = new.split('\n').collect();
    let Some(mut replacement) = reindent_prefix(&pairs, &new_lines)
        .or_else(|| reindent_levels(&pairs, &new_lines, haystack.len().saturating_add(new.len())))
    else {
        return RelaxedOutcome::NotReindentable {
            start_line,
            end_line,
        };
    };
    let mut end = matched[k - 1].end;
    if needle.trailing_newline {
        if haystack.as_bytes().get(end) == Some(&b'\n') {
            end += 1;
        } else if replacement.ends_with('\n') {
            // The needle's final '\n' matched the end of a file that has none; dropping the
            // replacement's one keeps the file's "no newline at end" state instead of
            // silently adding one.
            replacement.pop();
        }
    }
    RelaxedOutcome::Unique(Relaxed {
        kind,
        start_line,
        end_line,
        byte_range: matched[0].start..end,
        replacement,
    })
}
/// Whether file lines `start..start + k` hold the needle's lines with one indentation prefix
/// swapped for another on every non-blank line (method A): a re-indented copy of the text. A
/// relaxed match that fails this needs a different shift per line, which is how a block that
/// lost one of several closing lines lines up with the file one line short.
pub(super) fn uniform_shift(
    hay: &str,
    lines: &[Range<usize>],
    needle: &Needle,
    start: usize,
) -> bool {
    let pairs: Vec<(&str, &str)> = needle
        .lines
        .iter()
        .zip(lines.get(start..).unwrap_or_default())
        .filter(|(n, _)| !is_blank(n))
        .map(|(n, r)| (indent(n), indent(&hay[r.clone()])))
        .collect();
    reindent_prefix(&pairs, &[]).is_some()
}

/// Leading indentation; '\r' is excluded because it is never intended indentation.
fn indent(s: &str) -> &str {
    &s[..s.len() - s.trim_start_matches([' ', '\t']).len()]
}
/// Re-indents each non-blank line of `new` with `f`; blank lines are kept verbatim because
/// they carry no indentation relation and the caller asked for trailing whitespace as given.
fn rebuild(new_lines: &[&str], mut f: impl FnMut(&str) -> Option<String>) -> Option<String> {
    let mut out = Vec::with_capacity(new_lines.len());
    for line in new_lines {
        out.push(if is_blank(line) {
            (*line).to_owned()
        } else {
            f(line)?
        });
    }
    Some(out.join("\n"))
}

/// Method A: needle_indent = S + r and file_indent = D + r for one S, D on every line.
/// The shortest working S is chosen: if a longer S also works, it yields identical output
/// on the lines it accepts, while the shorter one accepts more lines of `new`.
fn reindent_prefix(pairs: &[(&str, &str)], new_lines: &[&str]) -> Option<String> {
    let (first_needle, first_file) = pairs.first()?;
    let common = pairs.iter().fold(first_needle.len(), |acc, (n, _)| {
        acc.min(
            n.bytes()
                .zip(first_needle.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        )
    });
    let (from, to) = (0..=common).find_map(|s_len| {
        let rest = &first_needle[s_len..];
        let to = first_file.strip_suffix(rest)?;
        let fits = pairs
            .iter()
            .all(|(n, f)| f.strip_suffix(&n[s_len..]) == Some(to));
        fits.then(|| (&first_needle[..s_len], to))
    })?;
    rebuild(new_lines, |line| {
        line.strip_prefix(from).map(|rest| format!("{to}{rest}"))
    })
}

#[derive(Clone, Copy)]
enum Unit {
    Tabs,
    Spaces(usize),
}

/// One side's indentation unit: all tabs, or all spaces with the gcd width. Mixed sides
/// have no unit, because a level count would then depend on an unknown tab width.
fn unit_of<'a>(indents: impl Iterator<Item = &'a str>) -> Option<Unit> {
    let (mut tabs, mut width) = (false, 0usize);
    for ind in indents.filter(|i| !i.is_empty()) {
        if ind.bytes().all(|b| b == b'\t') {
            tabs = true;
        } else if ind.bytes().all(|b| b == b' ') {
            width = gcd(width, ind.len());
        } else {
            return None;
        }
    }
    match (tabs, width) {
        (true, 0) => Some(Unit::Tabs),
        (true, _) => None,
        (false, 0) => Some(Unit::Spaces(4)),
        (false, w) => Some(Unit::Spaces(w)),
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn level(ind: &str, unit: Unit) -> Option<usize> {
    match unit {
        _ if ind.is_empty() => Some(0),
        Unit::Tabs => ind.bytes().all(|b| b == b'\t').then_some(ind.len()),
        Unit::Spaces(w) => {
            (ind.bytes().all(|b| b == b' ') && ind.len().is_multiple_of(w)).then_some(ind.len() / w)
        }
    }
}

/// Method B: both sides measured in levels of their own unit, related by one constant
/// offset; covers tabs-vs-spaces, which no prefix swap can express.
fn reindent_levels(pairs: &[(&str, &str)], new_lines: &[&str], limit: usize) -> Option<String> {
    let needle_unit = unit_of(pairs.iter().map(|p| p.0))?;
    let file_unit = unit_of(pairs.iter().map(|p| p.1))?;
    let mut offset = None;
    for (n, f) in pairs {
        let delta = level(f, file_unit)? as i64 - level(n, needle_unit)? as i64;
        if *offset.get_or_insert(delta) != delta {
            return None;
        }
    }
    let offset = offset?;
    rebuild(new_lines, |line| {
        let ind = indent(line);
        let target = usize::try_from(level(ind, needle_unit)? as i64 + offset).ok()?;
        let prefix = match file_unit {
            Unit::Tabs => "\t".repeat(target),
            // An indent wider than both inputs together cannot be what anyone meant, and
            // must fail the method rather than overflow or exhaust memory.
            Unit::Spaces(w) => " ".repeat(target.checked_mul(w).filter(|&n| n <= limit)?),
        };
        Some(format!("{prefix}{}", &line[ind.len()..]))
    })
}
