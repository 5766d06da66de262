//! codex's `apply_patch` envelope, converted into edits.
//!
//! ```text
//! patch    := junk* "*** Begin Patch" NL section* "*** End Patch" NL? junk*
//! section  := add | delete | update | blank-line
//! add      := "*** Add File: " path NL ("+" text NL)*
//! delete   := "*** Delete File: " path NL
//! update   := "*** Update File: " path NL ("*** Move to: " path NL)? chunk*
//! chunk    := ("@@" (" " anchor)? NL)* body+ ("*** End of File" NL)?
//!             (the first chunk may omit its "@@" line; a later one needs it)
//! body     := (" " | "-" | "+") text NL | NL            (an empty line is an empty context line)
//! ```
//!
//! Mapping: Add → `create`; Delete → `delete`; each chunk → one replacement of the file, old text =
//! its ` ` and `-` lines, new text = its ` ` and `+` lines, in order; `*** Move to:` → a `move_to`
//! after the chunks (so the chunks edit the file under its old name). The `@@` anchors (several in
//! a row narrow step by step: `@@ class A` then `@@ def f`) and `*** End of File` go into
//! [`Near`]: anchors only break ties between several exact occurrences, End of File requires the
//! text to end the file. A chunk of `+` lines only is appended to the file (codex does the same);
//! with an anchor it cannot be placed and is an invalid edit. Text before `*** Begin Patch` and
//! after `*** End Patch` (a heredoc line, prose) is ignored.

use super::{Edits, Line, error_at, join, replace_op};
use crate::error::Error;
use crate::patch::{Edit, Near, Op, PatchSource};

const HELP_ENVELOPE: &str = "a codex patch is `*** Begin Patch`, then `*** Add File: PATH`, \
`*** Delete File: PATH` or `*** Update File: PATH` sections, then `*** End Patch`";

pub(super) fn convert(src: &PatchSource, lines: &[Line]) -> Result<Vec<Edit>, Error> {
    let Some(begin) = lines.iter().position(|l| l.head() == "*** Begin Patch") else {
        let first = lines.iter().find(|l| !l.head().trim().is_empty());
        return Err(match first {
            Some(l) => error_at(
                src,
                l,
                1,
                "this is not a codex patch: there is no `*** Begin Patch` line",
                HELP_ENVELOPE,
            ),
            None => crate::patch::parse::patch_error(
                src,
                "the patch is empty".into(),
                HELP_ENVELOPE.into(),
                Some(0),
                "nothing here",
            ),
        });
    };
    let mut out = Edits::default();
    let mut i = begin + 1;
    loop {
        let Some(line) = lines.get(i) else {
            return Err(error_at(
                src,
                &lines[begin],
                1,
                "the patch has no `*** End Patch` line (it was cut off?)",
                "end the patch with a line `*** End Patch`; nothing was written",
            ));
        };
        let head = line.head();
        if head == "*** End Patch" {
            break;
        }
        if head.trim().is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = head.strip_prefix("*** Add File:") {
            let path = path_of(src, line, path)?;
            let mut body = Vec::new();
            i += 1;
            while let Some(l) = lines.get(i) {
                if l.head().starts_with("*** ") {
                    break;
                }
                match l.raw.strip_prefix('+') {
                    Some(text) => body.push(text),
                    None => {
                        return Err(error_at(
                            src,
                            l,
                            1,
                            "in an `*** Add File:` section every line starts with `+`",
                            "prefix each line of the new file with `+` (an empty line is `+`)",
                        ));
                    }
                }
                i += 1;
            }
            out.push(
                path,
                Ok(Op::Create {
                    content: join(&body, true),
                }),
                line.span(),
                None,
            );
            continue;
        }
        if let Some(path) = head.strip_prefix("*** Delete File:") {
            let path = path_of(src, line, path)?;
            out.push(path, Ok(Op::Delete), line.span(), None);
            i += 1;
            continue;
        }
        if let Some(path) = head.strip_prefix("*** Update File:") {
            let path = path_of(src, line, path)?;
            i = update(src, lines, i, path, &mut out)?;
            continue;
        }
        let what = if matches!(head.chars().next(), Some('+' | '-' | ' ')) || head.starts_with("@@")
        {
            "a hunk line outside an `*** Update File:` section"
        } else {
            "unexpected line"
        };
        return Err(error_at(
            src,
            line,
            1,
            format!("{what}: `{}`", clip(head)),
            HELP_ENVELOPE,
        ));
    }
    Ok(out.edits)
}

/// One `*** Update File:` section starting at `lines[at]`; returns the index after it.
fn update(
    src: &PatchSource,
    lines: &[Line],
    at: usize,
    path: &str,
    out: &mut Edits,
) -> Result<usize, Error> {
    let header = &lines[at];
    let mut i = at + 1;
    let mut move_to = None;
    if let Some(l) = lines.get(i)
        && let Some(to) = l.head().strip_prefix("*** Move to:")
    {
        move_to = Some((path_of(src, l, to)?, *l));
        i += 1;
    }
    let mut chunks = 0;
    while let Some(first) = lines.get(i) {
        let head = first.head();
        if head.starts_with("*** ") && head != "*** End of File" {
            break;
        }
        // The chunk's `@@` lines.
        let mut anchors: Vec<String> = Vec::new();
        let mut headers: Vec<Line> = Vec::new();
        while let Some(l) = lines.get(i)
            && l.head().starts_with("@@")
        {
            let h = l.head();
            headers.push(*l);
            let anchor = h.trim_start_matches('@').trim();
            if !anchor.is_empty() {
                anchors.push(anchor.to_string());
            }
            i += 1;
        }
        if headers.is_empty() && chunks > 0 {
            return Err(error_at(
                src,
                first,
                1,
                format!(
                    "expected `@@` to start the next chunk, found `{}`",
                    clip(head)
                ),
                "start every chunk after the first with an `@@` line (optionally `@@ <a line the \
                 chunk follows>`)",
            ));
        }
        let mut old = Vec::new();
        let mut new = Vec::new();
        let mut changed = false;
        let mut at_eof = false;
        let chunk_start = lines.get(i).copied().unwrap_or(*first);
        while let Some(l) = lines.get(i) {
            let h = l.head();
            if h == "*** End of File" {
                at_eof = true;
                i += 1;
                break;
            }
            if h.starts_with("*** ") || h.starts_with("@@") {
                break;
            }
            match l.raw.chars().next() {
                Some(' ') => {
                    old.push(&l.raw[1..]);
                    new.push(&l.raw[1..]);
                }
                Some('-') => {
                    old.push(&l.raw[1..]);
                    changed = true;
                }
                Some('+') => {
                    new.push(&l.raw[1..]);
                    changed = true;
                }
                // An empty line is an empty context line (editors strip the lone space).
                None => {
                    old.push("");
                    new.push("");
                }
                Some('\r') if l.raw.len() == 1 => {
                    old.push(l.raw);
                    new.push(l.raw);
                }
                Some(_) => {
                    return Err(error_at(
                        src,
                        l,
                        1,
                        format!("unexpected line in a chunk of {path}: `{}`", clip(h)),
                        "chunk lines start with ` ` (context), `-` (removed) or `+` (added); a \
                         new chunk starts with `@@`",
                    ));
                }
            }
            i += 1;
        }
        let span_line = headers.last().copied().unwrap_or(chunk_start);
        if old.is_empty() && new.is_empty() {
            return Err(error_at(
                src,
                &span_line,
                1,
                format!("an empty chunk in {path}"),
                "a chunk needs lines: ` ` context, `-` removed, `+` added",
            ));
        }
        chunks += 1;
        let header_text = if headers.is_empty() {
            header.head().to_string()
        } else {
            headers
                .iter()
                .map(|l| l.head())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let origin = out.hunk(&header_text);
        let op = if !changed {
            Err("this chunk has no `-` or `+` line: it changes nothing".to_string())
        } else if old.is_empty() && anchors.is_empty() && !at_eof {
            Ok(Op::Append {
                text: join(&new, true),
            })
        } else if old.is_empty() {
            Err(
                "this chunk only adds lines, so there is no text to find next to its anchor; add \
                 a context line (` ` + the line the new lines follow)"
                    .to_string(),
            )
        } else {
            let near = (!anchors.is_empty() || at_eof).then_some(Near {
                line: None,
                anchors,
                at_eof,
                at_start: false,
            });
            replace_op(join(&old, true), join(&new, true), near)
        };
        out.push(path, op, span_line.span(), Some(origin));
    }
    if chunks == 0 && move_to.is_none() {
        return Err(error_at(
            src,
            header,
            1,
            format!(
                "`*** Update File: {path}` changes nothing: it has no chunk and no `*** Move to:`"
            ),
            "add the chunks (`@@`, then ` `/`-`/`+` lines), or drop the section",
        ));
    }
    if let Some((to, l)) = move_to {
        out.push(
            path,
            Ok(Op::Move {
                to: to.to_string(),
                replace: None,
            }),
            l.span(),
            None,
        );
    }
    Ok(i)
}

fn path_of<'a>(src: &PatchSource, line: &Line, rest: &'a str) -> Result<&'a str, Error> {
    let p = rest.trim();
    if p.is_empty() {
        return Err(error_at(
            src,
            line,
            line.head().len() + 1,
            "the path is missing",
            "write the file's path after the colon, relative to the repository root",
        ));
    }
    Ok(p)
}

/// A line shortened for a message.
pub(super) fn clip(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}
