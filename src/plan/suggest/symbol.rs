//! `symbol` candidates: `old_string` recalled from memory around a line that is really in the
//! file. A signature or header copied exactly, followed by the body the agent believes the
//! function has, shares too little text with any window for the fuzzy rung; but the copied line
//! itself says where the agent was looking. The candidate is the current text of the definition
//! or block around it.
//!
//! # Anchors
//!
//! A line of `old_string` that is not trivial ([`blocks::is_trivial`]: not `}`, `return`, a lone
//! keyword, a blank) and stands in the file as a whole line, exactly or but for whitespace, is an
//! anchor; so is a definition line of `old_string` whose name the file defines exactly once,
//! however its text differs (`def run(self, x)` for `def run(self)`). Anchors are graded: unique
//! before repeated (at most [`MAX_REPEATS`] times), definitions before other code before comments
//! (a comment copied exactly can stand above the wrong function). Anchors whose positions agree
//! with their places in `old_string` form one cluster, one candidate.
//!
//! # Extent
//!
//! A cluster holding `old_string`'s first line as a definition or block header is that
//! definition: from its decorators to its syntactic end (the built-in tree-sitter parsers where
//! they cover the language and the piece of the file around it parses, else [`Structure`]'s
//! brackets, tags and indentation), unless it is far larger than `old_string`. Any other cluster
//! is the window its anchors put `old_string` at, never ending inside a block it opens.
//!
//! # Invariants
//!
//! * Candidates cover whole lines of the file; nothing here panics on any input.
//! * Never applied, not even with `--lenient`.

use std::collections::HashMap;
use std::ops::Range;

use super::blocks::{self, Family, Structure};
use super::fuzzy::{collapsed_hash, round_similarity, similarity};
use super::lines::Needle;
use super::{Candidate, CandidateKind};

/// A needle line found more often than this anchors nothing.
const MAX_REPEATS: usize = 3;
/// Anchors weaker than this together (a line repeated in look-alike blocks, a lone comment) say
/// less about the place than the fuzzy rung's windows, and would take their place.
const MIN_CLUSTER_WEIGHT: f64 = 0.5;
/// Clusters turned into candidates, at most.
const MAX_CLUSTERS: usize = 3;
/// A top-level piece of the file longer than this is not parsed for an exact extent.
const MAX_PARSED_LINES: usize = 1_500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Class {
    Definition,
    Code,
    Comment,
}

#[derive(Debug, Clone)]
struct Anchor {
    /// 0-based needle line and file line.
    j: usize,
    line: usize,
    /// How many file lines carry this needle line.
    count: usize,
    class: Class,
    /// Found by the name it defines, not by its text.
    by_name: Option<String>,
    /// Found by the block header it opens (`:root {` for `:root{--bg:#fff}`), not by its text.
    by_header: Option<String>,
}

impl Anchor {
    fn weight(&self) -> f64 {
        let class = match self.class {
            Class::Definition => 1.0,
            Class::Code => 0.6,
            Class::Comment => 0.25,
        };
        class / self.count as f64
    }
}

/// A symbol candidate and how strongly its anchors place it (0..1: a unique definition line is
/// 1, a unique comment 0.25).
pub(super) struct Found {
    pub(super) candidate: Candidate,
    pub(super) strength: f64,
    /// The candidate is a whole definition or block (its extent is syntactic), not just the
    /// window its anchors put `old_string` at.
    pub(super) whole: bool,
}

/// Line classes as anchors grade them.
fn class_of(st: &Structure, l: usize, text: &str) -> Class {
    if st.is_comment(l) {
        Class::Comment
    } else if blocks::is_definition(text, st.family) {
        Class::Definition
    } else {
        Class::Code
    }
}

/// The identifier a definition line defines (`def run(` → `run`), if it reads as one.
fn defined_name(line: &str) -> Option<&str> {
    let t = line.trim();
    let head = t
        .split(['(', '<', '=', ':', '{'])
        .next()
        .unwrap_or(t)
        .trim();
    let name = head
        .rsplit(|c: char| c.is_whitespace() || c == '*')
        .next()?;
    let ok = name.len() >= 3
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        && !name.chars().next().is_some_and(|c| c.is_ascii_digit());
    ok.then_some(name)
}

/// File lines that define `name` (a definition line naming it as a whole word).
fn definitions_of(text: &str, lines: &[Range<usize>], st: &Structure, name: &str) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for at in memchr::memmem::find_iter(text.as_bytes(), name.as_bytes()) {
        let l = lines.partition_point(|r| r.end < at);
        if out.last() == Some(&l) || l >= lines.len() {
            continue;
        }
        let line = &text[lines[l].clone()];
        if blocks::is_definition(line, st.family) && defined_name(line) == Some(name) {
            out.push(l);
        }
        if out.len() > MAX_REPEATS {
            break;
        }
    }
    out
}

/// The anchors of `needle` in the file, best first.
fn anchors(
    text: &str,
    lines: &[Range<usize>],
    line_hashes: &[u64],
    st: &Structure,
    needle: &Needle,
) -> Vec<Anchor> {
    let mut by_hash: HashMap<u64, Vec<usize>> = HashMap::new();
    for (j, l) in needle.lines.iter().enumerate() {
        if !blocks::is_trivial(l) {
            by_hash.entry(collapsed_hash(l)).or_default().push(j);
        }
    }
    let mut hits: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, h) in line_hashes.iter().enumerate() {
        if let Some(v) = by_hash.get(h).map(|_| hits.entry(*h).or_default())
            && v.len() <= MAX_REPEATS
        {
            v.push(i);
        }
    }
    let mut out = Vec::new();
    for (h, js) in &by_hash {
        let Some(at) = hits.get(h) else {
            continue;
        };
        if at.len() > MAX_REPEATS {
            continue;
        }
        for &j in js {
            for &i in at {
                out.push(Anchor {
                    j,
                    line: i,
                    count: at.len(),
                    class: class_of(st, i, &text[lines[i].clone()]),
                    by_name: None,
                    by_header: None,
                });
            }
        }
    }
    // Definition lines of old_string whose text is not in the file: the file may still define
    // the same name once.
    for (j, l) in needle.lines.iter().enumerate() {
        if !blocks::is_definition(l, st.family) || hits.contains_key(&collapsed_hash(l)) {
            continue;
        }
        let Some(name) = defined_name(l) else {
            continue;
        };
        if let [i] = definitions_of(text, lines, st, name)[..] {
            out.push(Anchor {
                j,
                line: i,
                count: 1,
                class: Class::Definition,
                by_name: Some(name.to_string()),
                by_header: None,
            });
        }
    }
    header_anchors(text, lines, st, needle, &hits, &mut out);
    out.sort_by(|a, b| {
        b.weight()
            .total_cmp(&a.weight())
            .then(a.j.cmp(&b.j))
            .then(a.line.cmp(&b.line))
    });
    out
}

/// What a line opens a bracket block with: its text before the first `{`, without any
/// whitespace (`:root`, `.card>a`, `functionf(a,b)`); `None` when that says too little.
fn header_of(line: &str) -> Option<String> {
    let (head, _) = line.split_once('{')?;
    let squashed: String = head.split_whitespace().collect();
    (!blocks::is_trivial(&squashed) && squashed.chars().any(char::is_alphanumeric))
        .then_some(squashed)
}

/// Lines of `old_string` that open a bracket block (a CSS rule, a function) whose header the file
/// opens at most [`MAX_REPEATS`] times, however the rest differs: `:root{--bg:#fff}` written on
/// one line from memory, for a `:root {` block of the file.
fn header_anchors(
    text: &str,
    lines: &[Range<usize>],
    st: &Structure,
    needle: &Needle,
    hits: &HashMap<u64, Vec<usize>>,
    out: &mut Vec<Anchor>,
) {
    if !matches!(st.family, Family::Brace { .. }) {
        return;
    }
    let wanted: Vec<(usize, String)> = needle
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !hits.contains_key(&collapsed_hash(l)))
        .filter_map(|(j, l)| header_of(l).map(|h| (j, h)))
        .take(8)
        .collect();
    if wanted.is_empty() {
        return;
    }
    let mut found: Vec<Vec<usize>> = vec![Vec::new(); wanted.len()];
    for (i, r) in lines.iter().enumerate() {
        let line = &text[r.clone()];
        if !line.contains('{') || st.is_comment(i) {
            continue;
        }
        let Some(h) = header_of(line) else {
            continue;
        };
        for (w, at) in wanted.iter().zip(found.iter_mut()) {
            if w.1 == h && at.len() <= MAX_REPEATS {
                at.push(i);
            }
        }
    }
    for ((j, h), at) in wanted.into_iter().zip(found) {
        if at.is_empty() || at.len() > MAX_REPEATS {
            continue;
        }
        let count = at.len();
        for i in at {
            out.push(Anchor {
                j,
                line: i,
                count,
                class: Class::Definition,
                by_name: None,
                by_header: Some(format!(
                    "{} {{",
                    text[lines[i].clone()]
                        .trim()
                        .split('{')
                        .next()
                        .unwrap_or(&h)
                        .trim_end()
                )),
            });
        }
    }
}

/// Groups anchors whose file positions agree with their needle positions (within a few lines:
/// the recalled text may have lines the file lacks, or lack some), strongest cluster first.
fn clusters(anchors: Vec<Anchor>, k: usize) -> Vec<Vec<Anchor>> {
    let slack = (k / 4).max(3) as isize;
    let mut out: Vec<Vec<Anchor>> = Vec::new();
    for a in anchors {
        let d = a.line as isize - a.j as isize;
        let home = out.iter_mut().find(|c| {
            c.iter()
                .any(|b| (b.line as isize - b.j as isize - d).abs() <= slack)
                && !c.iter().any(|b| b.j == a.j)
        });
        match home {
            Some(c) => c.push(a),
            None => out.push(vec![a]),
        }
    }
    let score = |c: &Vec<Anchor>| c.iter().map(Anchor::weight).sum::<f64>();
    out.sort_by(|a, b| {
        score(b)
            .total_cmp(&score(a))
            .then(a[0].line.cmp(&b[0].line))
    });
    out
}

/// The extent of the definition whose header is file line `l`: tree-sitter's on the top-level
/// piece of the file around it when a parser covers the language, else the structure's.
fn definition_extent(
    path: &str,
    text: &str,
    lines: &[Range<usize>],
    st: &Structure,
    l: usize,
) -> (usize, usize) {
    let fallback = (st.block_start(l), st.block_end(l));
    // The top-level item around l: from the nearest line above at indentation 0 to its end.
    let mut top = l;
    while top > 0 && (st.indent(top) != Some(0) || st.is_comment(top)) {
        top -= 1;
    }
    let top = st.block_start(top);
    let end = st.block_end(top).max(fallback.1);
    if end - top >= MAX_PARSED_LINES || lines.is_empty() {
        return fallback;
    }
    let (Some(a), Some(b)) = (lines.get(top), lines.get(end)) else {
        return fallback;
    };
    let Some(piece) = text.get(a.start..b.end) else {
        return fallback;
    };
    let Some(defs) = crate::syntax::symbols::lookup::nested_definitions(path, piece) else {
        return fallback;
    };
    // The innermost definition whose first lines (decorators, signature) hold line l.
    let want = l - top + 1;
    defs.iter()
        .filter(|d| d.start_line <= want && want <= d.end_line)
        .filter(|d| want - d.start_line <= 3 || d.start_line == want)
        .min_by_key(|d| d.end_line - d.start_line)
        .map_or(fallback, |d| (top + d.start_line - 1, top + d.end_line - 1))
}

/// Lines `a..=b` trimmed of blank lines at both ends (never empty).
fn trim_blank(st: &Structure, mut a: usize, mut b: usize) -> (usize, usize) {
    while a < b && st.is_blank(a) {
        a += 1;
    }
    while b > a && st.is_blank(b) {
        b -= 1;
    }
    (a, b)
}

/// Extends window `a..=b` to the end of a block that its outermost lines open, when that keeps
/// it within `limit` lines: a candidate never stops inside a block it started.
pub(super) fn close_window(st: &Structure, a: usize, b: usize, limit: usize) -> usize {
    let outer = (a..=b).filter_map(|l| st.indent(l)).min();
    let mut end = b;
    for l in a..=b {
        if st.indent(l) != outer || st.is_comment(l) {
            continue;
        }
        let e = st.block_end(l);
        if e > end && e + 1 - a <= limit {
            end = e;
        }
    }
    end
}

/// Up to [`MAX_CLUSTERS`] symbol candidates for `needle`, strongest anchors first.
pub(super) fn candidates(
    text: &str,
    lines: &[Range<usize>],
    line_hashes: &[u64],
    st: &Structure,
    needle: &Needle,
    path: &str,
) -> Vec<Found> {
    let n = lines.len();
    let k = needle.lines.len();
    if n == 0 {
        return Vec::new();
    }
    let mut out: Vec<Found> = Vec::new();
    for cluster in clusters(anchors(text, lines, line_hashes, st, needle), k)
        .into_iter()
        .filter(|c| c.iter().map(Anchor::weight).sum::<f64>() >= MIN_CLUSTER_WEIGHT)
        .take(MAX_CLUSTERS)
    {
        let best = &cluster[0];
        let strength = best.weight();
        let head = cluster.iter().min_by_key(|a| a.j).unwrap_or(best);
        let (a, b, whole) = extent(text, lines, st, path, &cluster, head, k);
        if out
            .iter()
            .any(|f| f.candidate.start_line <= b + 1 && a < f.candidate.end_line)
        {
            continue;
        }
        let byte_range = lines[a].start..lines[b].end;
        let note = symbol_note(text, lines, &cluster, head, a, b, whole);
        let sim = similarity(&text[byte_range.clone()], needle.body);
        out.push(Found {
            candidate: Candidate {
                kind: CandidateKind::Symbol,
                note: Some(note),
                start_line: a + 1,
                end_line: b + 1,
                similarity: round_similarity(sim),
                byte_range,
                strong: head.count == 1 && head.class == Class::Definition,
                source: None,
            },
            strength,
            whole,
        });
    }
    out
}

/// The lines `(a, b)` a cluster points at, and whether they are the whole definition its head
/// opens (when that fits in three times old_string's length, or 30 lines more) rather than the
/// window its anchors place.
fn extent(
    text: &str,
    lines: &[Range<usize>],
    st: &Structure,
    path: &str,
    cluster: &[Anchor],
    head: &Anchor,
    k: usize,
) -> (usize, usize, bool) {
    let n = lines.len();
    let limit = (3 * k).max(k + 30);
    let opens = head.j == 0 && head.class != Class::Comment && st.block_end(head.line) > head.line;
    let (mut a, mut b) = if opens {
        definition_extent(path, text, lines, st, head.line)
    } else {
        (usize::MAX, 0)
    };
    let whole = opens && b + 1 - a <= limit;
    if !whole {
        // The window the anchors put old_string at.
        a = cluster
            .iter()
            .map(|x| x.line.saturating_sub(x.j))
            .min()
            .unwrap_or(0);
        b = cluster
            .iter()
            .map(|x| x.line + (k - 1 - x.j))
            .max()
            .unwrap_or(a)
            .min(n - 1);
        // Lines of old_string above its first anchor that the file lacks do not pull the
        // window up past the block the anchor sits in.
        if let Some((s, _)) = st.enclosing(head.line)
            && a < s
        {
            a = s;
        }
        let (ta, tb) = trim_blank(st, a, b);
        a = ta;
        b = close_window(st, a, tb, limit);
    }
    (a, b, whole)
}

/// The note saying why a cluster is a candidate: the header, name or line it shares.
fn symbol_note(
    text: &str,
    lines: &[Range<usize>],
    cluster: &[Anchor],
    head: &Anchor,
    a: usize,
    b: usize,
    whole: bool,
) -> String {
    let shown: String = text[lines[head.line].clone()]
        .trim()
        .chars()
        .take(60)
        .collect();
    match (&head.by_name, whole) {
        _ if head.by_header.is_some() => format!(
            "line {} of old_string opens `{}`, as line {} of the file does{}; the rest \
             differs: here is that {} (lines {}-{})",
            head.j + 1,
            head.by_header.as_deref().unwrap_or_default(),
            head.line + 1,
            if head.count == 1 {
                " (the only such line)"
            } else {
                ""
            },
            if whole { "whole block" } else { "place" },
            a + 1,
            b + 1
        ),
        (Some(name), true) => format!(
            "old_string defines `{name}`, which the file defines once, at line {}; its text \
             differs: here is the whole definition (lines {}-{})",
            head.line + 1,
            a + 1,
            b + 1
        ),
        (Some(name), false) => format!(
            "old_string defines `{name}`, which the file defines once, at line {}; its text \
             differs",
            head.line + 1
        ),
        (None, true) => format!(
            "the first line of old_string is line {} (`{shown}`); its body differs: here is \
             the whole {} (lines {}-{})",
            head.line + 1,
            if head.class == Class::Definition {
                "definition"
            } else {
                "block"
            },
            a + 1,
            b + 1
        ),
        (None, false) => {
            let also = cluster.len() - 1;
            format!(
                "line {} of old_string is line {} of the file (`{shown}`){}; the rest differs",
                head.j + 1,
                head.line + 1,
                match also {
                    0 => String::new(),
                    1 => ", and one more of its lines stands nearby".to_string(),
                    m => format!(", and {m} more of its lines stand nearby"),
                }
            )
        }
    }
}

/// Whether `needle` has the shape of a whole block: brackets that its first line opens and its
/// last line closes, or (indentation languages) a header line with every other line deeper.
pub(super) fn whole_shape(needle: &Needle, family: Family) -> bool {
    let lines = super::lines::line_ranges(needle.body);
    if lines.len() < 3 {
        return false;
    }
    let st = Structure::new(needle.body, &lines, family_path(family));
    let last = lines.len() - 1;
    if matches!(family, Family::Brace { .. }) {
        return st.block_end(0) == last && !st.is_blank(last);
    }
    let first = needle.lines[0];
    let header = blocks::is_definition(first, family)
        || first.trim_end().ends_with(':')
        || first.trim_end().ends_with(" do")
        || first.trim_end().ends_with('{');
    header && st.block_end(0) == last
}

/// A file name whose extension selects `family` again (the structure is keyed by paths).
fn family_path(family: Family) -> &'static str {
    match family {
        Family::Brace {
            backtick: true,
            quote_strings: true,
            ..
        } => "x.js",
        Family::Brace { backtick: true, .. } => "x.go",
        Family::Brace {
            slash_comments: false,
            ..
        } => "x.css",
        Family::Brace {
            quote_strings: true,
            ..
        } => "x.php",
        Family::Brace { .. } => "x.rs",
        Family::Python => "x.py",
        Family::Hash => "x.rb",
        Family::Dash => "x.hs",
        Family::Markup => "x.html",
        Family::Markdown => "x.md",
        Family::Plain => "x",
    }
}
