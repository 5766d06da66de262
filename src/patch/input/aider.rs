//! Aider's SEARCH/REPLACE blocks, converted into edits.
//!
//! ```text
//! patch  := (prose | group)*
//! group  := path NL fence-open? block+ fence-close?
//! fence-open := "```" lang? NL            (or "~~~"; the path may also be the first line inside it)
//! block  := "<<<<<<< SEARCH" NL text* "=======" NL text* ">>>>>>> REPLACE" NL
//! path   := the nearest non-blank line before the block (or before its fence), stripped of
//!           surrounding `*`, `` ` ``, a leading `#` and a trailing `:`; a block right after
//!           another block (or after a fence that closed one) reuses that block's path
//! ```
//!
//! Each block becomes one replacement: SEARCH's lines are the old text, REPLACE's the new text
//! (whole lines, each with its newline). An empty SEARCH creates the file with REPLACE's text; an
//! empty REPLACE deletes the SEARCH text. Several blocks for one file apply in order, each seeing
//! the previous ones. Prose between groups is ignored, but a divider or `>>>>>>> REPLACE` outside
//! a block, a block left open, or a patch without any block is an error.

use super::{Edits, Line, error_at, join, replace_op};
use crate::error::Error;
use crate::patch::{Edit, Op, PatchSource};

const SEARCH: &str = "<<<<<<< SEARCH";
const DIVIDER: &str = "=======";
const REPLACE: &str = ">>>>>>> REPLACE";

const HELP_BLOCK: &str = "write each change as the file's path on its own line, then `<<<<<<< SEARCH`, \
the exact lines to find, `=======`, the new lines, `>>>>>>> REPLACE`";

fn marker(l: &Line) -> &'static str {
    match l.head().trim_end() {
        SEARCH => SEARCH,
        DIVIDER => DIVIDER,
        REPLACE => REPLACE,
        _ => "",
    }
}

pub(super) fn convert(src: &PatchSource, lines: &[Line]) -> Result<Vec<Edit>, Error> {
    let mut out = Edits::default();
    let mut last_path: Option<String> = None;
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        match marker(line) {
            SEARCH => {}
            "" => {
                i += 1;
                continue;
            }
            m => {
                return Err(error_at(
                    src,
                    line,
                    1,
                    format!("`{m}` outside a SEARCH/REPLACE block"),
                    HELP_BLOCK,
                ));
            }
        }
        let path = match path_before(lines, i) {
            Some(p) => p,
            None => last_path.clone().ok_or_else(|| {
                error_at(
                    src,
                    line,
                    1,
                    "no file path before this SEARCH/REPLACE block",
                    "put the file's path (relative to the repository root) on the line before the \
                     block, or before its ``` fence",
                )
            })?,
        };
        let open = *line;
        let mut search = Vec::new();
        let mut replace = Vec::new();
        let mut in_replace = false;
        i += 1;
        loop {
            let Some(l) = lines.get(i) else {
                let want = if in_replace { REPLACE } else { DIVIDER };
                return Err(error_at(
                    src,
                    &open,
                    1,
                    format!("this SEARCH/REPLACE block is never closed (no `{want}` follows)"),
                    format!("end the block with `{want}` on its own line; nothing was written"),
                ));
            };
            i += 1;
            match (marker(l), in_replace) {
                (SEARCH, _) => {
                    return Err(error_at(
                        src,
                        l,
                        1,
                        format!(
                            "a new `{SEARCH}` inside the block opened at line {}",
                            open.no
                        ),
                        HELP_BLOCK,
                    ));
                }
                (DIVIDER, false) => in_replace = true,
                (REPLACE, true) => break,
                (REPLACE, false) => {
                    return Err(error_at(
                        src,
                        l,
                        1,
                        format!("`{REPLACE}` before `{DIVIDER}`"),
                        HELP_BLOCK,
                    ));
                }
                // In REPLACE a divider is text (an RST heading, a conflict sample).
                _ if in_replace => replace.push(l.raw),
                _ => search.push(l.raw),
            }
        }
        let origin = out.hunk(&format!("{SEARCH} at line {}", open.no));
        let op = if search.is_empty() {
            Ok(Op::Create {
                content: join(&replace, true),
            })
        } else {
            replace_op(join(&search, true), join(&replace, true), None)
        };
        out.push(&path, op, open.span(), Some(origin));
        last_path = Some(path);
    }
    if out.edits.is_empty() {
        let first = lines.iter().find(|l| !l.head().trim().is_empty());
        return Err(match first {
            Some(l) => error_at(
                src,
                l,
                1,
                "no SEARCH/REPLACE block in this patch",
                HELP_BLOCK,
            ),
            None => crate::patch::parse::patch_error(
                src,
                "the patch is empty".into(),
                HELP_BLOCK.into(),
                Some(0),
                "nothing here",
            ),
        });
    }
    Ok(out.edits)
}

/// The path named before the block opening at `lines[at]`, if the line there is one.
fn path_before(lines: &[Line], at: usize) -> Option<String> {
    let mut before = lines[..at]
        .iter()
        .rev()
        .filter(|l| !l.head().trim().is_empty());
    let mut cand = before.next()?;
    if is_fence(cand) {
        // A bare fence can close a previous block's fence: then this block reuses that path.
        cand = before.next()?;
        if is_fence(cand) {
            return None;
        }
    }
    if !marker(cand).is_empty() {
        return None;
    }
    clean_path(cand.head())
}

fn is_fence(l: &Line) -> bool {
    let t = l.head().trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// A path line without its decoration; `None` for a line of prose.
fn clean_path(line: &str) -> Option<String> {
    let mut p = line.trim();
    p = p.trim_start_matches('#').trim();
    p = p.strip_suffix(':').unwrap_or(p).trim();
    p = p.trim_matches(|c| c == '*' || c == '`').trim();
    if p.is_empty() || p.chars().any(char::is_whitespace) {
        return None;
    }
    Some(p.to_string())
}
