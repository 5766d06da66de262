//! Unified diffs, as `git diff` (or `diff -u`) writes them, converted into edits.
//!
//! ```text
//! patch    := preamble* file+ trailer*          (preamble: `git format-patch` mail headers, prose)
//! file     := git-head ext-head* (minus plus hunk*)? | minus plus hunk+
//! git-head := "diff --git " old-name " " new-name NL
//! ext-head := "old mode " M | "new mode " M | "new file mode " M | "deleted file mode " M
//!           | "rename from " P | "rename to " P | "similarity index " N "%" | "index " ...
//!           | "copy from " P | "copy to " P | "dissimilarity index " N "%"
//! minus    := "--- " (path | "/dev/null") ("\t" timestamp)? NL
//! plus     := "+++ " (path | "/dev/null") ("\t" timestamp)? NL
//! hunk     := "@@ -" l ("," n)? " +" l ("," n)? " @@" section? NL line*
//! line     := (" " | "-" | "+") text NL | "\ No newline at end of file" NL | NL (empty context)
//! ```
//!
//! A hunk's line counts say where it ends (so a removed line `--- x` is content, not a header).
//! Paths: `a/` and `b/` prefixes are dropped, `"quoted"` names are unescaped, `/dev/null` means
//! "no file". Mapping, per file:
//! - modified: each hunk → one replacement, old text = context and removed lines, new text =
//!   context and added lines; its new-side start line (where the text stands once the earlier
//!   hunks of the file are applied) goes into [`Near::line`], used only to choose between several
//!   exact occurrences;
//! - new file (`--- /dev/null`) → `create`; deleted (`+++ /dev/null`) → each hunk's removal (so a
//!   file that changed since the diff was made is a miss, not silently lost), then `delete`;
//! - renamed → the hunks on the old name, then `move_to` the new one;
//! - a hunk without context that only adds lines: at line 0 it fills an empty file, elsewhere it
//!   cannot be placed (an invalid edit: make the diff with context);
//! - mode changes (`old mode`/`new mode`, a new file that is executable or a symlink) and copies
//!   are not supported: an invalid edit that says so, nothing is written. Binary patches are an
//!   error.

use super::codex::clip;
use super::{Edits, Line, error_at, join, replace_op};
use crate::error::Error;
use crate::patch::{Edit, Near, Op, PatchSource};

const HELP_DIFF: &str = "give a unified diff as `git diff` writes it: `diff --git a/P b/P`, `--- a/P`, \
`+++ b/P`, then hunks `@@ -OLD,N +NEW,M @@` with ` `, `-` and `+` lines";

#[derive(Default)]
struct FileDiff<'a> {
    old: Option<String>,
    new: Option<String>,
    /// `--- /dev/null` / `+++ /dev/null` (or `new file mode` / `deleted file mode`).
    created: bool,
    deleted: bool,
    modes: Option<(String, String)>,
    new_mode: Option<String>,
    copy: bool,
    hunks: Vec<HunkDiff<'a>>,
}

struct HunkDiff<'a> {
    line: Line<'a>,
    old_start: usize,
    new_start: usize,
    new_count: usize,
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    old_eol: bool,
    new_eol: bool,
    changed: bool,
}

pub(super) fn convert(
    src: &PatchSource,
    lines: &[Line],
) -> Result<(Option<String>, Vec<Edit>), Error> {
    let mut out = Edits::default();
    let mut message = None;
    let mut files = 0;
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        let h = line.head();
        let next_is_plus = lines
            .get(i + 1)
            .is_some_and(|n| n.head().starts_with("+++ "));
        if h.starts_with("diff --git ") || (h.starts_with("--- ") && next_is_plus) {
            let (fd, next) = file(src, lines, i)?;
            lower(&fd, line, &mut out);
            files += 1;
            i = next;
            continue;
        }
        if h.starts_with("@@") {
            return Err(error_at(
                src,
                line,
                1,
                "a hunk without a file header",
                "put `--- a/PATH` and `+++ b/PATH` lines before the first hunk of each file",
            ));
        }
        // Before the first file header it is prose (a `git format-patch` mail's message may hold
        // bullet lines and `---------` separators); after one, a `+`/`-` line past a hunk's
        // counts means the counts are wrong.
        if files > 0
            && (h.starts_with('+') || h.starts_with('-'))
            && !matches!(h, "--" | "-- " | "---")
        {
            return Err(error_at(
                src,
                line,
                1,
                format!("`{}` is a hunk line outside a hunk", clip(h)),
                "a `+`/`-` line belongs after an `@@ -OLD,N +NEW,M @@` header, and the header's \
                 counts must include it",
            ));
        }
        if files == 0
            && message.is_none()
            && let Some(s) = h.strip_prefix("Subject: ")
        {
            let s = s.trim();
            let s = match s.strip_prefix("[PATCH") {
                Some(rest) => rest.split_once(']').map_or(rest, |(_, m)| m).trim(),
                None => s,
            };
            message = (!s.is_empty()).then(|| s.to_string());
        }
        i += 1;
    }
    if files == 0 {
        let first = lines.iter().find(|l| !l.head().trim().is_empty());
        return Err(match first {
            Some(l) => error_at(src, l, 1, "no file diff in this patch", HELP_DIFF),
            None => crate::patch::parse::patch_error(
                src,
                "the patch is empty".into(),
                HELP_DIFF.into(),
                Some(0),
                "nothing here",
            ),
        });
    }
    Ok((message, out.edits))
}

/// One file's diff starting at `lines[at]`; returns it and the index after it.
fn file<'a>(
    src: &PatchSource,
    lines: &[Line<'a>],
    at: usize,
) -> Result<(FileDiff<'a>, usize), Error> {
    let mut fd = FileDiff::default();
    let head = lines[at];
    let mut i = at;
    let mut old_mode = None;
    let mut rename = (None, None);
    if let Some(rest) = head.head().strip_prefix("diff --git ") {
        i += 1;
        while let Some(l) = lines.get(i) {
            let h = l.head();
            if let Some(m) = h.strip_prefix("old mode ") {
                old_mode = Some(m.trim().to_string());
            } else if let Some(m) = h.strip_prefix("new mode ") {
                fd.modes = Some((old_mode.clone().unwrap_or_default(), m.trim().to_string()));
            } else if let Some(m) = h.strip_prefix("new file mode ") {
                fd.created = true;
                fd.new_mode = Some(m.trim().to_string());
            } else if h.starts_with("deleted file mode ") {
                fd.deleted = true;
            } else if let Some(p) = h.strip_prefix("rename from ") {
                rename.0 = Some(unquote(p));
            } else if let Some(p) = h.strip_prefix("rename to ") {
                rename.1 = Some(unquote(p));
            } else if let Some(p) = h.strip_prefix("copy from ") {
                fd.copy = true;
                rename.0 = Some(unquote(p));
            } else if let Some(p) = h.strip_prefix("copy to ") {
                fd.copy = true;
                rename.1 = Some(unquote(p));
            } else if h.starts_with("similarity index ")
                || h.starts_with("dissimilarity index ")
                || h.starts_with("index ")
            {
            } else if h.starts_with("Binary files ") || h == "GIT binary patch" {
                return Err(error_at(
                    src,
                    l,
                    1,
                    "binary patches are not supported",
                    "patchgate edits text files only: apply the binary change with git, and \
                     give patchgate the text changes (`git diff` without `--binary`)",
                ));
            } else {
                break;
            }
            i += 1;
        }
        let (a, b) = header_names(rest);
        fd.old = rename.0.or(a);
        fd.new = rename.1.or(b);
    }
    if let Some(l) = lines.get(i)
        && let Some(p) = l.head().strip_prefix("--- ")
    {
        let Some(plus) = lines.get(i + 1).filter(|n| n.head().starts_with("+++ ")) else {
            return Err(error_at(
                src,
                l,
                1,
                "a `--- ` line not followed by `+++ `",
                HELP_DIFF,
            ));
        };
        match diff_path(p, "a/") {
            Some(p) => fd.old = Some(p),
            None => fd.created = true,
        }
        match diff_path(&plus.head()["+++ ".len()..], "b/") {
            Some(p) => fd.new = Some(p),
            None => fd.deleted = true,
        }
        i += 2;
        while let Some(l) = lines.get(i)
            && l.head().starts_with("@@")
        {
            let (h, next) = hunk(src, lines, i)?;
            fd.hunks.push(h);
            i = next;
        }
        if fd.hunks.is_empty() {
            let l = lines.get(i).unwrap_or(plus);
            return Err(error_at(
                src,
                l,
                1,
                "expected a hunk (`@@ -OLD,N +NEW,M @@`) after the `---`/`+++` lines",
                HELP_DIFF,
            ));
        }
    }
    if fd.created {
        fd.old = None;
    }
    if fd.deleted {
        fd.new = None;
    }
    if fd.old.is_none() && fd.new.is_none() {
        return Err(error_at(
            src,
            &head,
            1,
            "cannot tell which file this diff is about",
            HELP_DIFF,
        ));
    }
    Ok((fd, i))
}

/// One hunk starting at `lines[at]`; returns it and the index after it.
fn hunk<'a>(
    src: &PatchSource,
    lines: &[Line<'a>],
    at: usize,
) -> Result<(HunkDiff<'a>, usize), Error> {
    let line = lines[at];
    let bad = |col: usize, what: &str| {
        error_at(
            src,
            &line,
            col,
            format!("malformed hunk header: {what}"),
            "a hunk header is `@@ -OLD_START,OLD_COUNT +NEW_START,NEW_COUNT @@` (a count of 1 may \
             be left out)",
        )
    };
    let h = line.head();
    let rest = h
        .strip_prefix("@@ -")
        .ok_or_else(|| bad(1, "it must start with `@@ -`"))?;
    let end = rest
        .find(" @@")
        .ok_or_else(|| bad(h.len() + 1, "no closing ` @@`"))?;
    let (old_r, new_r) = rest[..end]
        .split_once(" +")
        .ok_or_else(|| bad(5, "no ` +NEW_START` range"))?;
    let range = |s: &str, col: usize| -> Result<(usize, usize), Error> {
        let (a, b) = s.split_once(',').unwrap_or((s, "1"));
        match (a.parse::<usize>(), b.parse::<usize>()) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            _ => Err(bad(col, &format!("`{s}` is not START,COUNT"))),
        }
    };
    let (old_start, mut old_left) = range(old_r, 5)?;
    let (new_start, mut new_left) = range(new_r, 5 + old_r.len() + 2)?;
    let new_count = new_left;
    let mut hd = HunkDiff {
        line,
        old_start,
        new_start,
        new_count,
        old: Vec::new(),
        new: Vec::new(),
        old_eol: true,
        new_eol: true,
        changed: false,
    };
    let mut i = at + 1;
    // Which sides the previous line belonged to, for a `\ No newline` marker.
    let mut last = (false, false);
    loop {
        let Some(l) = lines.get(i) else {
            if old_left == 0 && new_left == 0 {
                break;
            }
            return Err(error_at(
                src,
                &line,
                1,
                format!(
                    "the hunk is cut off: its header announces {old_left} more old and {new_left} \
                     more new lines"
                ),
                "complete the hunk, or fix the counts in its `@@` header; nothing was written",
            ));
        };
        let first = l.raw.chars().next();
        if first == Some('\\') {
            if last.0 {
                hd.old_eol = false;
            }
            if last.1 {
                hd.new_eol = false;
            }
            i += 1;
            continue;
        }
        if old_left == 0 && new_left == 0 {
            break;
        }
        let (is_old, is_new) = match first {
            Some(' ') | None => (true, true),
            Some('\r') if l.raw.len() == 1 => (true, true),
            Some('-') => (true, false),
            Some('+') => (false, true),
            Some(_) => {
                return Err(error_at(
                    src,
                    l,
                    1,
                    format!(
                        "unexpected line in the hunk of line {} (it still needs {old_left} old and \
                         {new_left} new lines): `{}`",
                        line.no,
                        clip(l.head())
                    ),
                    "hunk lines start with ` ` (context), `-` (removed) or `+` (added); if the \
                     hunk is shorter, fix the counts in its `@@` header",
                ));
            }
        };
        let text = l.raw.get(1..).unwrap_or("");
        if (is_old && old_left == 0) || (is_new && new_left == 0) {
            return Err(error_at(
                src,
                l,
                1,
                format!(
                    "the hunk of line {} has more {} lines than its header says",
                    line.no,
                    if is_old && old_left == 0 {
                        "old (context or `-`)"
                    } else {
                        "new (context or `+`)"
                    }
                ),
                "fix the counts in the `@@ -OLD_START,OLD_COUNT +NEW_START,NEW_COUNT @@` header",
            ));
        }
        if is_old {
            hd.old.push(text);
            old_left -= 1;
        }
        if is_new {
            hd.new.push(text);
            new_left -= 1;
        }
        hd.changed |= is_old != is_new;
        last = (is_old, is_new);
        i += 1;
    }
    Ok((hd, i))
}

/// The edits of one file's diff.
fn lower(fd: &FileDiff, head: &Line, out: &mut Edits) {
    let path = fd.old.as_deref().or(fd.new.as_deref()).unwrap_or_default();
    if fd.copy {
        out.push(
            fd.new.as_deref().unwrap_or(path),
            Err(
                "copies (`copy from`/`copy to`) are not supported: make the diff without copy \
                 detection (no `-C`), so the copy is a new file"
                    .into(),
            ),
            head.span(),
            None,
        );
        return;
    }
    if let Some((from, to)) = &fd.modes
        && from != to
    {
        out.push(
            path,
            Err(format!(
                "mode changes are not supported (old mode {from}, new mode {to}): patchgate keeps \
                 each file's mode; change it with `chmod` or `git update-index --chmod`, and make \
                 the diff without it (`git -c core.fileMode=false diff`)"
            )),
            head.span(),
            None,
        );
    }
    if let Some(m) = fd.new_mode.as_deref().filter(|m| *m != "100644") {
        out.push(
            fd.new.as_deref().unwrap_or(path),
            Err(format!(
                "a new file with mode {m} is not supported: patchgate creates regular, \
                 non-executable files (mode 100644); create it, then `chmod` it"
            )),
            head.span(),
            None,
        );
        return;
    }
    match (&fd.old, &fd.new) {
        (None, Some(new)) => {
            let (content, origin, span) = match fd.hunks.as_slice() {
                [] => (Ok(String::new()), None, head.span()),
                [h] if h.old.is_empty() => (
                    Ok(join(&h.new, h.new_eol)),
                    Some(out.hunk(h.line.head())),
                    h.line.span(),
                ),
                [h, ..] => (
                    Err("a new file's diff has one hunk of `+` lines only".to_string()),
                    Some(out.hunk(h.line.head())),
                    h.line.span(),
                ),
            };
            out.push(
                new,
                content.map(|content| Op::Create { content }),
                span,
                origin,
            );
        }
        (Some(old), None) => {
            hunks(fd, old, out);
            out.push(old, Ok(Op::Delete), head.span(), None);
        }
        (Some(old), Some(new)) => {
            hunks(fd, old, out);
            if old != new {
                out.push(
                    old,
                    Ok(Op::Move {
                        to: new.clone(),
                        replace: None,
                    }),
                    head.span(),
                    None,
                );
            }
        }
        (None, None) => {}
    }
}

fn hunks(fd: &FileDiff, path: &str, out: &mut Edits) {
    for h in &fd.hunks {
        let origin = out.hunk(h.line.head());
        let old = join(&h.old, h.old_eol);
        let new = join(&h.new, h.new_eol);
        let op = if !h.changed && h.old_eol == h.new_eol {
            Err("this hunk has no `-` or `+` line: it changes nothing".to_string())
        } else if old.is_empty() && h.old_start == 0 {
            // Only adds at the start of an empty file: the planner checks that it is empty.
            replace_op(old, new, None)
        } else if old.is_empty() {
            Err(format!(
                "this hunk adds lines after line {} without any context line, so there is no text \
                 to find: make the diff with context lines (`git diff`, not `git diff -U0`)",
                h.old_start
            ))
        } else {
            // Where the old text stands once the file's earlier hunks are applied.
            let line = if h.new_count > 0 {
                h.new_start
            } else {
                h.new_start + 1
            };
            replace_op(
                old,
                new,
                Some(Near {
                    line: Some(line.max(1)),
                    ..Near::default()
                }),
            )
        };
        out.push(path, op, h.line.span(), Some(origin));
    }
}

/// A `---`/`+++` path: `None` for `/dev/null`; the timestamp after a tab and `prefix` dropped.
fn diff_path(raw: &str, prefix: &str) -> Option<String> {
    let raw = if raw.starts_with('"') {
        raw.trim_end()
    } else {
        raw.split('\t').next().unwrap_or(raw).trim_end()
    };
    if raw == "/dev/null" {
        return None;
    }
    let p = unquote(raw);
    Some(p.strip_prefix(prefix).map(str::to_string).unwrap_or(p))
}

/// The two names of `diff --git a/X b/Y`: exact when quoted or equal (no rename), else `None`
/// (a rename's names come from `rename from`/`rename to`).
fn header_names(rest: &str) -> (Option<String>, Option<String>) {
    let strip = |s: String, p: &str| s.strip_prefix(p).map(str::to_string).unwrap_or(s);
    if rest.starts_with('"') {
        let (a, b) = split_quoted(rest);
        return (a.map(|a| strip(a, "a/")), b.map(|b| strip(b, "b/")));
    }
    for (i, _) in rest.match_indices(" b/") {
        let (a, b) = (&rest[..i], &rest[i + 1..]);
        if a.strip_prefix("a/") == b.strip_prefix("b/") {
            return (Some(a[2..].to_string()), Some(b[2..].to_string()));
        }
    }
    // `--no-prefix`: `diff --git X X`.
    let half = rest.len() / 2;
    if rest.len() % 2 == 1
        && rest.is_char_boundary(half)
        && rest.as_bytes().get(half) == Some(&b' ')
        && rest[..half] == rest[half + 1..]
    {
        return (
            Some(rest[..half].to_string()),
            Some(rest[..half].to_string()),
        );
    }
    (None, None)
}

fn split_quoted(rest: &str) -> (Option<String>, Option<String>) {
    // The end of the first quoted name: a `"` not escaped.
    let mut escaped = false;
    for (i, c) in rest.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => {
                let a = unquote(&rest[..=i]);
                let b = rest[i + 1..].trim_start();
                return (Some(a), (!b.is_empty()).then(|| unquote(b)));
            }
            _ => escaped = false,
        }
    }
    (None, None)
}

/// git's C-style quoting of unusual names (`"a/caf\303\251.txt"`); other text is returned as is.
fn unquote(s: &str) -> String {
    let s = s.trim_end();
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'a') => bytes.push(7),
            Some(b'b') => bytes.push(8),
            Some(b'f') => bytes.push(12),
            Some(b'v') => bytes.push(11),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match it.peek() {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            it.next();
                        }
                        _ => break,
                    }
                }
                bytes.push((v & 0xff) as u8);
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
