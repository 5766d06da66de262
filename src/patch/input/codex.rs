//! codex's `apply_patch` envelope, converted into edits, read as codex's own parser reads it.
//!
//! ```text
//! patch    := junk* invocation? "*** Begin Patch" NL section* "*** End Patch" NL? junk*
//! section  := add | delete | update | blank-line
//! add      := "*** Add File: " path NL ("+" text NL)*
//! delete   := "*** Delete File: " path NL
//! update   := "*** Update File: " path NL ("*** Move to: " path NL)? (blank-line | chunk)*
//! chunk    := ("@@" (" " anchor)? NL)* body+ ("*** End of File" NL)?
//!             (the first chunk may omit its "@@" line; a later one needs it)
//! body     := (" " | "-" | "+") text NL | NL            (an empty line is an empty context line)
//! invocation := ("cd " dir " && ")? ("apply_patch" | "applypatch") " <<" delimiter NL
//! ```
//!
//! As in codex, marker lines may carry stray whitespace: `*** Begin Patch`, `*** End Patch` and
//! the section lines are compared trimmed (an `*** End Patch` at the start of a line ends the
//! patch first; an indented one ends it only when no other does), `*** End of File` and `@@`
//! lines without their trailing whitespace. Blank lines before a chunk are skipped; a chunk's
//! trailing blank lines are context that codex drops when the file does not have them, and so
//! does patchgate (a [`Fallback::Without`]).
//!
//! Mapping: Add → `create` (replacing a file that is already there, as codex does); Delete →
//! `delete`; each chunk → one whole-line replacement of the file, old text = its ` ` and `-`
//! lines, new text = its ` ` and `+` lines, in order; `*** Move to:` → a `move_to` after the
//! chunks (so the chunks edit the file under its old name; an existing destination is replaced,
//! as codex does). The `@@` anchors (several in a row narrow step by step: `@@ class A` then
//! `@@ def f`) and `*** End of File` go into [`Near`]: anchors only break ties between several
//! exact occurrences, End of File requires the text to end the file. A chunk of `+` lines only is
//! appended to the file when it has no anchor or ends with `*** End of File` (codex appends it in
//! every case; under an anchor alone it is an invalid edit, since the anchor says the lines go
//! elsewhere). Text before `*** Begin Patch` and after `*** End Patch` (prose, the heredoc's
//! delimiter) is ignored, except the heredoc line itself: `cd DIR && apply_patch <<'EOF'` makes
//! every path relative to DIR, and a `cd` that codex would not read that way is refused.

use super::{Edits, Line, error_at, join, replace_op};
use crate::error::Error;
use crate::patch::{Edit, Fallback, Near, Op, PatchSource};

const HELP_ENVELOPE: &str = "a codex patch is `*** Begin Patch`, then `*** Add File: PATH`, \
`*** Delete File: PATH` or `*** Update File: PATH` sections, then `*** End Patch`";

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const END_OF_FILE: &str = "*** End of File";

/// Where the envelope starts: the first line that is `*** Begin Patch` once trimmed.
pub(super) fn begin_line(lines: &[Line]) -> Option<usize> {
    lines.iter().position(|l| l.head().trim() == BEGIN)
}

/// A section line (`*** Add File:`, `*** Delete File:`, `*** Update File:`) once trimmed: its
/// kind and the rest of the line.
fn section<'a>(l: &Line<'a>) -> Option<(&'static str, &'a str)> {
    let t = l.head().trim();
    ["*** Add File:", "*** Delete File:", "*** Update File:"]
        .into_iter()
        .find_map(|m| t.strip_prefix(m).map(|rest| (m, rest)))
}

/// The edits of a codex `*** Begin Patch` envelope, section by section.
pub(super) fn convert(src: &PatchSource, lines: &[Line]) -> Result<Vec<Edit>, Error> {
    let Some(begin) = begin_line(lines) else {
        return Err(no_begin(src, lines));
    };
    let heredoc = invocation::heredoc(src, &lines[..begin])?;
    let end = end_line(src, lines, begin)?;
    if let Some(h) = &heredoc {
        invocation::check_end(src, &lines[end + 1..], h)?;
    }
    let body = &lines[..end];
    let mut out = Sections {
        edits: Edits::default(),
        dir: heredoc.and_then(|h| h.dir),
    };
    let mut i = begin + 1;
    while let Some(line) = body.get(i) {
        let head = line.head();
        if head.trim().is_empty() {
            i += 1;
            continue;
        }
        match section(line) {
            Some(("*** Add File:", rest)) => {
                i = add_file(src, body, i, rest, &mut out)?;
            }
            Some(("*** Delete File:", rest)) => {
                let path = path_of(src, line, rest)?;
                out.push(path, Ok(Op::Delete), line, None, false);
                i += 1;
            }
            Some((_, rest)) => {
                let path = path_of(src, line, rest)?;
                i = update(src, body, i, path, &mut out)?;
            }
            None => {
                let what = if matches!(head.chars().next(), Some('+' | '-' | ' '))
                    || head.starts_with("@@")
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
        }
    }
    if out.edits.edits.is_empty() {
        // codex parses it, and then fails: "No files were modified."
        return Err(error_at(
            src,
            &lines[begin],
            1,
            "this codex patch has no `*** Add File:`, `*** Delete File:` or `*** Update File:` \
             section, so it changes nothing",
            HELP_ENVELOPE,
        ));
    }
    Ok(out.edits.edits)
}

/// The error for a patch without a `*** Begin Patch` line: where its first text is, if any.
fn no_begin(src: &PatchSource, lines: &[Line]) -> Error {
    let first = lines.iter().find(|l| !l.head().trim().is_empty());
    match first {
        Some(l) => error_at(
            src,
            l,
            1,
            "this is not a codex patch: there is no `*** Begin Patch` line",
            HELP_ENVELOPE,
        ),
        None => super::validate::patch_error(
            src,
            "the patch is empty".into(),
            HELP_ENVELOPE.into(),
            Some(0),
            "nothing here",
        ),
    }
}

/// The index of the `*** End Patch` line after `begin`.
fn end_line(src: &PatchSource, lines: &[Line], begin: usize) -> Result<usize, Error> {
    // codex compares the end marker trimmed; one at the start of a line wins over an indented
    // one, which could be a context line of a chunk.
    lines[begin + 1..]
        .iter()
        .position(|l| l.head().trim_end() == END)
        .or_else(|| {
            lines[begin + 1..]
                .iter()
                .rposition(|l| l.head().trim() == END)
        })
        .map(|i| begin + 1 + i)
        .ok_or_else(|| {
            error_at(
                src,
                &lines[begin],
                1,
                "the patch has no `*** End Patch` line (it was cut off?)",
                "end the patch with a line `*** End Patch`; nothing was written",
            )
        })
}

/// Reads the `*** Add File:` section at `body[at]` into `out`; returns the index after it.
fn add_file(
    src: &PatchSource,
    body: &[Line],
    at: usize,
    rest: &str,
    out: &mut Sections,
) -> Result<usize, Error> {
    let line = &body[at];
    let path = path_of(src, line, rest)?;
    let mut text = Vec::new();
    let mut i = at + 1;
    while let Some(l) = body.get(i) {
        if let Some(t) = l.raw.strip_prefix('+') {
            text.push(t);
            i += 1;
            continue;
        }
        // codex ends the section at the first line without `+`; it must start the next
        // section (or be blank before one).
        if section(l).is_some() || l.head().trim().is_empty() {
            break;
        }
        return Err(error_at(
            src,
            l,
            1,
            "in an `*** Add File:` section every line starts with `+`",
            "prefix each line of the new file with `+` (an empty line is `+`)",
        ));
    }
    let content = join(&text, true);
    out.push(path, Ok(Op::Create { content }), line, None, true);
    Ok(i)
}

/// The converted sections, with the heredoc's `cd` directory put before every path.
struct Sections {
    edits: Edits,
    dir: Option<String>,
}

impl Sections {
    fn path(&self, p: &str) -> String {
        match &self.dir {
            Some(dir) if !p.starts_with('/') => {
                format!("{}/{p}", dir.trim_end_matches('/'))
            }
            _ => p.to_string(),
        }
    }

    fn push(
        &mut self,
        path: &str,
        op: Result<Op, String>,
        line: &Line,
        origin: Option<crate::patch::Hunk>,
        replace_existing: bool,
    ) {
        let op = op.map(|op| match op {
            Op::Move { to, replace } => Op::Move {
                to: self.path(&to),
                replace,
            },
            other => other,
        });
        let path = self.path(path);
        self.edits.push(&path, op, line.span(), origin);
        if let Some(e) = self.edits.edits.last_mut() {
            e.replace_existing = replace_existing;
        }
    }
}

/// One `*** Update File:` section starting at `lines[at]`; returns the index after it.
fn update(
    src: &PatchSource,
    lines: &[Line],
    at: usize,
    path: &str,
    out: &mut Sections,
) -> Result<usize, Error> {
    let header = &lines[at];
    let mut i = at + 1;
    let mut move_to = None;
    if let Some(l) = lines.get(i)
        && let Some(to) = l.head().trim_start().strip_prefix("*** Move to:")
    {
        move_to = Some((path_of(src, l, to)?, *l));
        i += 1;
    }
    let mut chunks = 0;
    loop {
        // Blank lines between chunks (and after `*** End of File`) separate them.
        while lines.get(i).is_some_and(|l| l.head().trim().is_empty()) {
            i += 1;
        }
        let Some(first) = lines.get(i) else { break };
        let head = first.head();
        if head.starts_with('*') && head.trim_end() != END_OF_FILE || section(first).is_some() {
            break;
        }
        // The chunk's `@@` lines.
        let mut anchors: Vec<String> = Vec::new();
        let mut headers: Vec<Line> = Vec::new();
        while let Some(l) = lines.get(i)
            && l.head().starts_with("@@")
        {
            headers.push(*l);
            let anchor = l.head().trim_start_matches('@').trim();
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
        let chunk_start = lines.get(i).copied().unwrap_or(*first);
        let body = chunk_body(src, lines, &mut i, path)?;
        let span_line = headers.last().copied().unwrap_or(chunk_start);
        if body.old.is_empty() && body.new.is_empty() {
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
            header.head().trim().to_string()
        } else {
            headers
                .iter()
                .map(|l| l.head())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let origin = out.edits.hunk(&header_text);
        let op = chunk_op(body, anchors);
        out.push(path, op, &span_line, Some(origin), false);
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
            &l,
            None,
            true,
        );
    }
    Ok(i)
}

/// A chunk's lines after its `@@` lines.
struct Body<'a> {
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    changed: bool,
    at_eof: bool,
    /// How many of the last lines are empty lines of the patch (not ` `), context on both sides.
    trailing_blank: usize,
}

fn chunk_body<'a>(
    src: &PatchSource,
    lines: &[Line<'a>],
    i: &mut usize,
    path: &str,
) -> Result<Body<'a>, Error> {
    let mut b = Body {
        old: Vec::new(),
        new: Vec::new(),
        changed: false,
        at_eof: false,
        trailing_blank: 0,
    };
    while let Some(l) = lines.get(*i) {
        let h = l.head();
        if h.trim_end() == END_OF_FILE {
            b.at_eof = true;
            *i += 1;
            break;
        }
        if h.starts_with('*') || h.starts_with("@@") {
            break;
        }
        let mut blank = false;
        match l.raw.chars().next() {
            Some(' ') => {
                b.old.push(&l.raw[1..]);
                b.new.push(&l.raw[1..]);
            }
            Some('-') => {
                b.old.push(&l.raw[1..]);
                b.changed = true;
            }
            Some('+') => {
                b.new.push(&l.raw[1..]);
                b.changed = true;
            }
            // An empty line is an empty context line (editors strip the lone space).
            None => {
                b.old.push("");
                b.new.push("");
                blank = true;
            }
            Some('\r') if l.raw.len() == 1 => {
                b.old.push(l.raw);
                b.new.push(l.raw);
                blank = true;
            }
            Some(_) => {
                return Err(error_at(
                    src,
                    l,
                    1,
                    format!("unexpected line in a chunk of {path}: `{}`", clip(h)),
                    "chunk lines start with ` ` (context), `-` (removed) or `+` (added); a new \
                     chunk starts with `@@`",
                ));
            }
        }
        b.trailing_blank = if blank { b.trailing_blank + 1 } else { 0 };
        *i += 1;
    }
    Ok(b)
}

fn chunk_op(b: Body, anchors: Vec<String>) -> Result<Op, String> {
    if !b.changed {
        return Err("this chunk has no `-` or `+` line: it changes nothing".to_string());
    }
    if b.old.is_empty() {
        if anchors.is_empty() || b.at_eof {
            return Ok(Op::Append {
                text: join(&b.new, true),
                create: false,
            });
        }
        return Err(
            "this chunk only adds lines, so there is no text to find next to its anchor (codex \
             would append them at the end of the file); add a context line (` ` + the line the \
             new lines follow), or end the chunk with `*** End of File` to append them"
                .to_string(),
        );
    }
    let near = (!anchors.is_empty() || b.at_eof).then_some(Near {
        line: None,
        anchors,
        at_eof: b.at_eof,
        at_start: false,
    });
    // codex retries without the chunk's trailing empty context lines (a blank line before the
    // next `@@`, or the file's final line break) when they are not in the file.
    let keep = b.old.len().min(b.new.len());
    let drop = b.trailing_blank.min(keep);
    let without = (drop > 0 && drop < b.old.len()).then(|| Fallback::Without {
        old: join(&b.old[..b.old.len() - drop], true),
        new: join(&b.new[..b.new.len() - drop], true),
        what: if drop == 1 {
            "the chunk's trailing blank line".to_string()
        } else {
            format!("the chunk's {drop} trailing blank lines")
        },
    });
    let mut op = replace_op(join(&b.old, true), join(&b.new, true), near)?;
    if let (Op::Replace(r), Some(f)) = (&mut op, without) {
        r.fallbacks.push(f);
    }
    Ok(op)
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

#[path = "codex_invocation.rs"]
mod invocation;
