//! The syntax gate's verdict on one file: the syntax errors the patch introduced.
//!
//! Invariants:
//! - Only new errors count. Grammars lag their languages (tree-sitter-typescript 0.23.2 rejects
//!   `interface I<in T>`), and a file may already be broken elsewhere, so an error that has a
//!   counterpart in the original never blocks.
//! - An error of the patched text has a counterpart when (1) it sits on a line the patch left
//!   unchanged and the original had an error of the same kind on that line, or, provided the
//!   patched text has no more errors of that family (tree-sitter or indentation) than the
//!   original: (2) it sits on a line the patch wrote and the original had an error on the lines
//!   that one replaced, or (3) it sits on a line the patch left unchanged and the original had
//!   an error in the lines its top-level construct (function, class, statement) maps to (the
//!   error moved within a construct that was already broken). A root that became an ERROR (all
//!   structure lost) is new whatever else matches.
//! - Errors are listed best first: a MISSING token, an indentation error or an ERROR inside a
//!   construct, then ERRORs at the top level, then a MISSING token at the end of the file, then
//!   a root ERROR, whose position is only an estimate (`near`). A root ERROR whose own tokens
//!   show an unclosed bracket comes first instead, the other errors then being debris.
//! - The patched text is parsed once; most patches leave no error, and then that is all. Only
//!   when it has errors is the original parsed too, incrementally from the patched text's tree
//!   (the changed ranges marked edited), so either way the cost is at most about one full
//!   parse. When the original's tree is cached ([`trees`]), the patched text is only reparsed
//!   where it changed. Either way the trees are those of a full parse (see [`trees::reparse`]).

use std::time::Duration;

use similar::{Algorithm, DiffTag, TextDiff};
use tree_sitter::{Node, Tree};

use super::indent::{self, IndentKind};
use super::languages::{self, Language};
use super::text::{Lines, snippet};
use super::{SyntaxError, data, trees};

/// More errors than this in one file are not listed (a binary or mis-encoded file can give
/// thousands).
const MAX_ISSUES: usize = 200;
/// At most this many errors are reported per file.
const MAX_REPORTED: usize = 20;
/// Error text quoted in a message is cut to this many characters.
const QUOTE_CHARS: usize = 40;

/// The syntax errors the patch introduced into `rel` (`before` is `None` for a created file),
/// best first. `None`: the file's language is not covered (or its parse ran out of time);
/// `Some(vec![])`: no new syntax error.
pub fn new_errors(rel: &str, before: Option<&str>, after: &str) -> Option<Vec<SyntaxError>> {
    let lang = Language::from_path(rel)?;
    if !lang.is_tree_sitter() {
        return Some(data::new_errors(lang, rel, before, after));
    }
    // Reparsed from the original's tree when that is at hand (a server's next patch to the
    // file it just wrote, or the reference check got here first), else parsed in full.
    let tree = trees::tree(lang, after, before)?;
    let indents = if lang == Language::Python {
        indent::check(after)
    } else {
        Vec::new()
    };
    if !tree.root_node().has_error() && indents.is_empty() {
        return Some(Vec::new());
    }
    let lines = Lines::new(after);
    let has_indents = !indents.is_empty();
    // The first line where the texts differ: a position for an error that has none of its own.
    let change = before.map(|b| languages::single_edit(b, after).start_position.row + 1);
    let mut found = issues(&tree, after, &lines, indents, change);
    if let Some(b) = before {
        // The original is reparsed from the patched text's tree (the edits reversed), so it
        // costs a fraction of a full parse, unless its tree is at hand already.
        let old = trees::tree_from(lang, b, after, &tree)?;
        let old_indents = if has_indents {
            indent::check(b)
        } else {
            Vec::new()
        };
        if old.root_node().has_error() || !old_indents.is_empty() {
            let old_issues = issues(&old, b, &Lines::new(b), old_indents, None);
            found = keep_new(found, &old_issues, &LineMapping::new(b, after));
        }
    }
    found.sort_by_key(|i| (i.rank, i.line, i.col));
    found.truncate(MAX_REPORTED);
    Some(
        found
            .into_iter()
            .map(|i| SyntaxError {
                line: i.line,
                column: lines.char_column(i.line, i.col),
                snippet: snippet(lines.text(i.line)),
                message: i.message,
                near: i.near,
            })
            .collect(),
    )
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Class {
    /// A token the parser inserted to recover (its kind, e.g. `}`).
    Missing(String),
    Error,
    /// The whole tree is one ERROR: nothing of the structure survived.
    Root,
    Indent(IndentKind),
}

impl Class {
    fn is_indent(&self) -> bool {
        matches!(self, Class::Indent(_))
    }
}

#[derive(Debug)]
struct Issue {
    /// 1-based line in its own text.
    line: usize,
    /// 0-based byte column.
    col: usize,
    class: Class,
    message: String,
    near: bool,
    /// Lower is reported first.
    rank: u8,
    /// 1-based first and last line of the top-level construct the error is in.
    region: (usize, usize),
}

/// The errors of one text: tree-sitter's ERROR and MISSING nodes (outermost ERRORs only) and the
/// indentation errors. `change` is the patched text's first changed line, a position for an
/// error that has none of its own.
fn issues(
    tree: &Tree,
    text: &str,
    lines: &Lines,
    indents: Vec<indent::IndentError>,
    change: Option<usize>,
) -> Vec<Issue> {
    let root = tree.root_node();
    let mut out = Vec::new();
    let at = |n: Node| -> (usize, usize) {
        let p = n.start_position();
        if p.row >= lines.count() {
            let last = lines.count();
            (last, lines.text(last).len())
        } else {
            (p.row + 1, p.column)
        }
    };
    let region = |n: Node| -> (usize, usize) {
        let top = root.child_with_descendant(n).unwrap_or(n);
        let (start, end) = (top.start_position(), top.end_position());
        let last = if end.column == 0 && end.row > start.row {
            end.row
        } else {
            end.row + 1
        };
        (start.row + 1, last.max(start.row + 1))
    };
    // Under a root ERROR the other errors are mostly debris of the lost structure: the unclosed
    // bracket the root's own tokens show says more.
    let mut debris = 0;
    if root.is_error() {
        let (line, col, message, rank) = match unbalanced(root, change) {
            Some((n, msg)) => {
                let (line, col) = at(n);
                (line, col, msg, 0)
            }
            None => {
                let line = change.unwrap_or(1).clamp(1, lines.count());
                (line, 0, format!("syntax error near line {line}"), 3)
            }
        };
        debris = 4 - rank;
        out.push(Issue {
            line,
            col,
            class: Class::Root,
            message,
            near: true,
            rank,
            region: (1, lines.count()),
        });
    }
    let end_of_code = text.trim_end().len();
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        if out.len() >= MAX_ISSUES {
            break;
        }
        if node.is_missing() {
            let (line, col) = at(node);
            let what = if node.is_named() {
                format!("missing {}", node.kind().replace('_', " "))
            } else {
                format!("missing `{}`", node.kind())
            };
            let eof = node.start_byte() >= end_of_code;
            let message = match (eof, change) {
                (true, Some(c)) => format!("{what} at end of file (the patch changed line {c})"),
                (true, None) => format!("{what} at end of file"),
                (false, _) => what,
            };
            out.push(Issue {
                line,
                col,
                class: Class::Missing(node.kind().to_string()),
                message,
                near: eof,
                rank: debris + if eof { 2 } else { 0 },
                region: region(node),
            });
            continue;
        }
        if node.is_error() && node != root {
            let (pos, message) = describe_error(node, text, change);
            let (line, col) = at(pos);
            let top_level = node.parent().is_none_or(|p| p == root);
            out.push(Issue {
                line,
                col,
                class: Class::Error,
                message,
                near: false,
                rank: debris + if top_level { 2 } else { 1 },
                region: region(node),
            });
            continue;
        }
        let children: Vec<Node> = node
            .children(&mut cursor)
            .filter(|c| c.has_error() || c.is_missing())
            .collect();
        stack.extend(children.into_iter().rev());
    }
    for e in indents {
        let line_start = tree_sitter::Point::new(e.line - 1, e.col);
        let region = if root.is_error() {
            (e.line, e.line)
        } else {
            root.descendant_for_point_range(line_start, line_start)
                .filter(|&n| n != root)
                .map_or((e.line, e.line), region)
        };
        out.push(Issue {
            line: e.line.min(lines.count()),
            col: e.col,
            class: Class::Indent(e.kind),
            message: e.message,
            near: false,
            rank: 1,
            region,
        });
    }
    out
}

/// Where an ERROR node went wrong and what to say: an unclosed bracket or a stray closing one
/// among its tokens, else the text the parser could not place.
fn describe_error<'t>(node: Node<'t>, text: &str, change: Option<usize>) -> (Node<'t>, String) {
    if let Some(found) = unbalanced(node, change) {
        return found;
    }
    let raw = node.utf8_text(text.as_bytes()).unwrap_or("");
    let first = raw
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if first.is_empty() {
        return (node, "syntax error".into());
    }
    let single = node.child_count() == 0
        || (node.child_count() == 1 && node.child(0).is_some_and(|c| c.child_count() == 0));
    let quoted: String = if first.chars().count() > QUOTE_CHARS {
        first.chars().take(QUOTE_CHARS - 1).chain(['…']).collect()
    } else {
        first.to_string()
    };
    if single {
        (node, format!("unexpected `{quoted}`"))
    } else {
        (node, format!("invalid syntax: `{quoted}`"))
    }
}

/// The bracket among `node`'s own tokens that is never closed (the last one opened before the
/// patch's first change, when known), else the first closing bracket with no opening one.
fn unbalanced<'t>(node: Node<'t>, change: Option<usize>) -> Option<(Node<'t>, String)> {
    let mut open: Vec<Node> = Vec::new();
    let mut stray: Option<Node> = None;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.is_named() || child.is_missing() || child.child_count() > 0 {
            continue;
        }
        let kind = child.kind();
        let opener = match kind {
            "(" | "[" | "{" => {
                open.push(child);
                continue;
            }
            ")" => "(",
            "]" => "[",
            "}" => "{",
            _ => continue,
        };
        if open.last().is_some_and(|o| o.kind() == opener) {
            open.pop();
        } else if stray.is_none() {
            stray = Some(child);
        }
    }
    let chosen = match change {
        Some(line) => open
            .iter()
            .rev()
            .find(|o| o.start_position().row < line)
            .or(open.last()),
        None => open.last(),
    };
    if let Some(&o) = chosen {
        let line = o.start_position().row + 1;
        return Some((o, format!("`{}` on line {line} is never closed", o.kind())));
    }
    stray.map(|s| (s, format!("unexpected `{}`", s.kind())))
}

/// The errors of `after` that have no counterpart among `before`'s (see the module doc).
fn keep_new(after: Vec<Issue>, before: &[Issue], map: &LineMapping) -> Vec<Issue> {
    let mut claimed = vec![false; before.len()];
    let mut exact = vec![false; after.len()];
    for (i, a) in after.iter().enumerate() {
        let Some(old) = map.old_line(a.line) else {
            continue;
        };
        let hit = (0..before.len())
            .find(|&j| !claimed[j] && before[j].line == old && before[j].class == a.class);
        if let Some(j) = hit {
            claimed[j] = true;
            exact[i] = true;
        }
    }
    let count = |list: &[Issue], indent: bool| {
        list.iter()
            .filter(|i| i.class.is_indent() == indent)
            .count()
    };
    let more_tree = count(&after, false) > count(before, false);
    let more_indent = count(&after, true) > count(before, true);
    after
        .into_iter()
        .zip(exact)
        .filter(|(a, exact)| {
            if *exact {
                return false;
            }
            if a.class == Class::Root {
                return !before.iter().any(|b| b.class == Class::Root);
            }
            let more = if a.class.is_indent() {
                more_indent
            } else {
                more_tree
            };
            if more {
                return true;
            }
            let had_error_in = |(lo, hi): (usize, usize)| {
                before.iter().any(|b| {
                    b.class != Class::Root
                        && b.class.is_indent() == a.class.is_indent()
                        && (lo..=hi).contains(&b.line)
                })
            };
            // On a line the patch wrote, only an error on the lines it replaced is the same
            // one; an error on a line it left alone may have moved within its construct.
            let own = had_error_in(map.old_range((a.line, a.line)));
            let moved = map.old_line(a.line).is_some() && had_error_in(map.old_range(a.region));
            !(own || moved)
        })
        .map(|(a, _)| a)
        .collect()
}

/// Patched lines to original lines, through a line diff.
struct LineMapping {
    /// Per patched line (index = line - 1): the original line it is unchanged from.
    old: Vec<Option<usize>>,
    /// Per patched line: the original lines it corresponds to (itself if unchanged, the replaced
    /// lines if changed, the neighbours of the insertion point if inserted).
    span: Vec<(usize, usize)>,
    old_count: usize,
}

impl LineMapping {
    fn new(before: &str, after: &str) -> LineMapping {
        let old_count = Lines::new(before).count();
        let new_count = Lines::new(after).count();
        let mut map = LineMapping {
            old: vec![None; new_count],
            span: vec![(1, old_count); new_count],
            old_count,
        };
        // A diff that runs out of time is coarser, not wrong.
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .timeout(Duration::from_millis(500))
            .diff_lines(before, after);
        for op in diff.ops() {
            let (tag, old, new) = op.as_tag_tuple();
            for (k, n) in new.clone().enumerate() {
                let Some(slot) = map.span.get_mut(n) else {
                    break;
                };
                *slot = match tag {
                    DiffTag::Equal => {
                        let o = old.start + k + 1;
                        map.old[n] = Some(o);
                        (o, o)
                    }
                    DiffTag::Delete => continue,
                    DiffTag::Insert | DiffTag::Replace if old.is_empty() => {
                        (old.start.max(1), (old.start + 1).min(old_count).max(1))
                    }
                    DiffTag::Insert | DiffTag::Replace => (old.start + 1, old.end),
                };
            }
        }
        map
    }

    fn old_line(&self, line: usize) -> Option<usize> {
        line.checked_sub(1)
            .and_then(|i| self.old.get(i).copied().flatten())
    }

    /// The original lines that patched lines `first..=last` correspond to.
    fn old_range(&self, (first, last): (usize, usize)) -> (usize, usize) {
        let get = |line: usize| {
            line.checked_sub(1)
                .and_then(|i| self.span.get(i).copied())
                .unwrap_or((1, self.old_count))
        };
        (get(first).0, get(last).1)
    }
}

#[cfg(test)]
mod tests;
