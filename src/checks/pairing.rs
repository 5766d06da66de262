//! Which original line a changed line stands for, and what the patch substituted on it: what
//! decides whether a finding on a changed line is the one the original already had.
//!
//! Inside a block of changed lines (original lines `a..=b` replaced by some patched lines), each
//! patched line is paired with at most one original line: the monotone alignment that maximizes
//! the summed similarity of the pairs (Dice coefficient over the lines' token multisets; a pair
//! below one half does not count). A patched line left without a partner was written by the
//! patch. Between partners, the *substitutions* are the tokens the patch replaced one for one
//! (`parse_cfg` → `parse_config` in `x = parse_cfg(a)` → `x = parse_config(a)`); a finding whose
//! message differs from the original's only by those substitutions, or by numbers, is the same
//! finding ("undefined name `parse_cfg`" after a rename of that name), while one naming anything
//! else is new (`x = 1` → `x = qty * rate` introduces "undefined name `rate`", even if the
//! original line had an undefined name of its own).
//!
//! Invariants: pairs never cross and a line is in at most one pair; a block of more than
//! [`MAX_CELLS`] line pairs is not paired at all (the caller then falls back to exact messages
//! anywhere in the block), so the cost stays bounded for a rewritten file.

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// The largest block (original lines × patched lines) that is paired.
pub const MAX_CELLS: usize = 40_000;

/// Pairs below this similarity are no pairs: the lines have too little in common for one to
/// stand for the other.
const MIN_SIMILARITY: f64 = 0.5;

/// The tokens of a line or a message: identifiers (letters, digits, `_`, `$`, starting with a
/// letter, `_` or `$`), numbers (a run starting with a digit), and every other non-blank
/// character on its own. Blanks separate tokens and are not tokens.
pub fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some((start, c)) = it.next() {
        if c.is_whitespace() {
            continue;
        }
        let word = |ch: char| ch.is_alphanumeric() || ch == '_' || ch == '$';
        let mut end = start + c.len_utf8();
        if word(c) {
            while let Some(&(i, ch)) = it.peek() {
                if !word(ch) {
                    break;
                }
                end = i + ch.len_utf8();
                it.next();
            }
        }
        out.push(&s[start..end]);
    }
    out
}

fn is_number(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_digit())
}

/// The Dice coefficient of two token multisets: 1 for the same tokens, 0 for none in common.
fn similarity(a: &[&str], b: &[&str]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let mut rest: Vec<&str> = b.to_vec();
    rest.sort_unstable();
    let mut common = 0usize;
    for t in a {
        if let Ok(i) = rest.binary_search(t) {
            rest.remove(i);
            common += 1;
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

/// How strongly a patched line stands for an original one: their similarity, when it reaches
/// [`MIN_SIMILARITY`] or the lines differ in exactly one token at the same place (a rename on a
/// line of one or two tokens, `parse_cfg,` → `parse_config,`, is no less that line for being
/// short); else nothing.
fn affinity(a: &[&str], b: &[&str]) -> Option<f64> {
    let s = similarity(a, b);
    if s >= MIN_SIMILARITY {
        return Some(s);
    }
    let one_swap = a.len() == b.len() && a.iter().zip(b).filter(|(x, y)| x != y).count() == 1;
    one_swap.then_some(MIN_SIMILARITY)
}

/// For each patched line of a block, the index of the original line it is paired with, if any;
/// `None` when the block is too large to pair.
pub fn pair_block(old: &[&str], new: &[&str]) -> Option<Vec<Option<usize>>> {
    let (m, n) = (old.len(), new.len());
    if m.saturating_mul(n) > MAX_CELLS {
        return None;
    }
    let old_t: Vec<Vec<&str>> = old.iter().map(|l| tokens(l)).collect();
    let new_t: Vec<Vec<&str>> = new.iter().map(|l| tokens(l)).collect();
    // score[i][j]: the best alignment of old[..i] with new[..j].
    let w = n + 1;
    let mut score = vec![0.0f64; (m + 1) * w];
    let mut sim: Vec<Option<f64>> = vec![None; m * n];
    for i in 1..=m {
        for j in 1..=n {
            let s = affinity(&old_t[i - 1], &new_t[j - 1]);
            sim[(i - 1) * n + (j - 1)] = s;
            let diag = match s {
                Some(s) => score[(i - 1) * w + (j - 1)] + s,
                None => f64::MIN,
            };
            score[i * w + j] = score[(i - 1) * w + j].max(score[i * w + (j - 1)]).max(diag);
        }
    }
    let mut out = vec![None; n];
    let (mut i, mut j) = (m, n);
    while i > 0 && j > 0 {
        let here = score[i * w + j];
        if let Some(s) = sim[(i - 1) * n + (j - 1)]
            && here == score[(i - 1) * w + (j - 1)] + s
        {
            out[j - 1] = Some(i - 1);
            i -= 1;
            j -= 1;
        } else if here == score[(i - 1) * w + j] {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    Some(out)
}

/// The tokens the patch replaced one for one between an original line and its partner.
pub fn substitutions(old: &str, new: &str) -> Vec<(String, String)> {
    let (a, b) = (tokens(old), tokens(new));
    let mut out: Vec<(String, String)> = Vec::new();
    let mut push = |x: &[&str], y: &[&str]| {
        if x.len() == y.len() {
            for (p, q) in x.iter().zip(y) {
                let pair = (p.to_string(), q.to_string());
                if !out.contains(&pair) {
                    out.push(pair);
                }
            }
        }
    };
    // A replacement may come as a deletion next to an insertion: join those.
    let mut pending: Option<(std::ops::Range<usize>, std::ops::Range<usize>)> = None;
    for op in capture_diff_slices(Algorithm::Myers, &a, &b) {
        let (o, n) = (op.old_range(), op.new_range());
        if matches!(op, DiffOp::Equal { .. }) {
            if let Some((po, pn)) = pending.take() {
                push(&a[po], &b[pn]);
            }
            continue;
        }
        pending = Some(match pending.take() {
            Some((po, pn)) => (po.start..o.end.max(po.end), pn.start..n.end.max(pn.end)),
            None => (o, n),
        });
    }
    if let Some((po, pn)) = pending {
        push(&a[po], &b[pn]);
    }
    out
}

/// Whether `new` says what `old` said, up to the given substitutions and numbers: the same
/// tokens in the same order, where each differing pair is two numbers or one of `subs`.
pub fn same_but_substituted(old: &str, new: &str, subs: &[(String, String)]) -> bool {
    let (a, b) = (tokens(old), tokens(new));
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| {
            x == y || (is_number(x) && is_number(y)) || subs.iter().any(|(s, t)| s == x && t == y)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_words_numbers_and_single_marks() {
        assert_eq!(
            tokens("x = foo_1(a, 'b')  # 95"),
            [
                "x", "=", "foo_1", "(", "a", ",", "'", "b", "'", ")", "#", "95"
            ]
        );
        assert_eq!(
            tokens("Undefined name `qty`"),
            ["Undefined", "name", "`", "qty", "`"]
        );
        assert_eq!(tokens("$el.größe"), ["$el", ".", "größe"]);
    }

    #[test]
    fn a_rename_is_a_substitution_and_an_added_name_is_not() {
        assert_eq!(
            substitutions("x = parse_cfg(path)", "x = parse_config(path)"),
            [("parse_cfg".to_string(), "parse_config".to_string())]
        );
        // One token for three: no one-for-one substitution.
        assert!(substitutions("total = price * qty", "total = price * quantity * rate").is_empty());
        assert!(substitutions("a = 1", "a = 1").is_empty());
    }

    #[test]
    fn messages_match_up_to_the_substitutions_and_numbers() {
        let subs = substitutions("print(foo)", "print(bar)");
        assert!(same_but_substituted(
            "Undefined name `foo`",
            "Undefined name `bar`",
            &subs
        ));
        assert!(!same_but_substituted(
            "Undefined name `foo`",
            "Undefined name `baz`",
            &subs
        ));
        // The substitution goes one way only.
        assert!(!same_but_substituted(
            "Undefined name `bar`",
            "Undefined name `foo`",
            &subs
        ));
        assert!(same_but_substituted(
            "Line too long (95 > 88)",
            "Line too long (96 > 88)",
            &[]
        ));
        assert!(!same_but_substituted(
            "unused `a`",
            "unused `a` here",
            &subs
        ));
    }

    #[test]
    fn lines_pair_by_similarity_and_an_inserted_line_has_no_partner() {
        // OpenHands' "introduced and fixed errors": x's undefined name fixed, y's line rewritten,
        // z's line written by the patch.
        let old = ["x = UNDEFINED_VARIABLE", "y = 10"];
        let new = [
            "x = 5",
            "y = ANOTHER_UNDEFINED_VARIABLE",
            "z = UNDEFINED_VARIABLE",
        ];
        assert_eq!(pair_block(&old, &new), Some(vec![Some(0), Some(1), None]));
        // A line moved down a block keeps its partner.
        let old = ["fn a() {", "    let long_name = 1;"];
        let new = ["// header", "fn a() {", "    let long_value = 1;"];
        assert_eq!(pair_block(&old, &new), Some(vec![None, Some(0), Some(1)]));
        // Nothing in common: no pairs.
        assert_eq!(pair_block(&["a b c"], &["x y z"]), Some(vec![None]));
        assert_eq!(pair_block(&["x = foo"], &["y = bar"]), Some(vec![None]));
        // A short line with one token renamed is still that line.
        assert_eq!(
            pair_block(&["parse_cfg"], &["parse_config"]),
            Some(vec![Some(0)])
        );
        assert_eq!(
            pair_block(&["a", "parse_cfg,"], &["a", "parse_config,"]),
            Some(vec![Some(0), Some(1)])
        );
        let big: Vec<&str> = vec!["x"; 300];
        assert_eq!(pair_block(&big, &big), None);
    }
}
