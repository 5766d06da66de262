//! Unified diffs, as `git diff` (or `diff -u`) writes them, converted into edits, read the way
//! `git apply` reads them.
//!
//! ```text
//! patch    := preamble* file+ trailer*          (preamble: `git format-patch` mail headers, prose)
//! file     := git-head ext-head* (minus plus)? (hunk+ | binary)? | minus plus hunk+
//! git-head := "diff --git " old-name " " new-name NL
//! ext-head := "old mode " M | "new mode " M | "new file mode " M | "deleted file mode " M
//!           | "rename from " P | "rename to " P | "copy from " P | "copy to " P
//!           | "similarity index " N "%" | "dissimilarity index " N "%" | "index " ID ".." ID (" " M)?
//! minus    := "--- " (path | "/dev/null") (TAB-or-spaces timestamp)? NL
//! plus     := "+++ " (path | "/dev/null") (TAB-or-spaces timestamp)? NL
//! hunk     := "@@ -" l ("," n)? " +" l ("," n)? " @@" section? NL line*
//! line     := (" " | "-" | "+") text NL | "\ No newline at end of file" NL | NL (empty context)
//! binary   := "GIT binary patch" NL (see [`binary`]) | "Binary files " ... " differ" NL
//! ```
//!
//! A hunk's line counts say where it ends (so a removed line `--- x` is content, not a header).
//! Names are read as git reads them ([`names`]): `-p N` (default: the `a/`/`b/` prefix of a git
//! diff, guessed for a traditional one), C-quoted names, timestamps. Mapping, per file:
//! - modified: each hunk → one replacement, old text = context and removed lines, new text =
//!   context and added lines; its new-side start line goes into [`Near::line`], and where `git
//!   apply` anchors it (a hunk from line 1 at the start of the file, one with leading but no
//!   trailing context at its end) into [`Near::at_start`] / [`Near::at_eof`]: all only choose
//!   between several exact occurrences, they never place a hunk on their own;
//! - a hunk without context that only adds lines: at line 0 it fills an empty file (or creates a
//!   missing one, for a traditional diff that does not say the file is new); elsewhere it needs
//!   `--unidiff-zero`, and is then placed by its line number ([`Insert`]);
//! - new file → `create` (or a symlink, or binary content), then the executable bit; deleted →
//!   each hunk's removal (so a file that changed since the diff was made is a miss, not silently
//!   lost), then `delete`; renamed → the hunks on the old name, then `move_to`; copied → `copy`,
//!   then the hunks on the new name;
//! - `old mode`/`new mode` → the executable bit; a symlink's hunks → its target ([`Op::Link`]);
//! - `GIT binary patch` → [`Op::Binary`], checked against the `index` line's full blob ids.
//!
//! Refused as invalid edits (nothing is written): submodules, a file turned into a symlink or
//! back within one diff, a symlink target with a newline. Refused as an invalid patch: `Binary
//! files … differ` without data, a damaged binary hunk, inconsistent names or header lines.

mod binary;
mod names;
#[cfg(test)]
mod tests;

pub(crate) use binary::apply_delta;

use super::codex::clip;
use super::{Edits, Line, error_at, join, replace_op};
use crate::error::Error;
use crate::patch::{Binary, BinaryData, Edit, InputOptions, Insert, Near, Op, PatchSource};
use binary::Method;
use names::{TERM_TAB, find_name, find_name_traditional, is_dev_null};

const HELP_DIFF: &str = "give a unified diff as `git diff` writes it: `diff --git a/P b/P`, `--- a/P`, \
`+++ b/P`, then hunks `@@ -OLD,N +NEW,M @@` with ` `, `-` and `+` lines";

/// git's file modes, canonical (`canon_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Regular,
    Executable,
    Link,
    Dir,
    Gitlink,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        let digits: &str = &s[..s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len())];
        if digits.is_empty() || !s[digits.len()..].trim().is_empty() {
            return None;
        }
        let m = u32::from_str_radix(digits, 8).ok()?;
        Some(match m & 0o170000 {
            0o100000 if m & 0o100 != 0 => Mode::Executable,
            0o100000 => Mode::Regular,
            0o120000 => Mode::Link,
            0o040000 => Mode::Dir,
            _ => Mode::Gitlink,
        })
    }
}

/// The strip level (`-p N`): given, or guessed once from a traditional diff, as git does.
struct Strip {
    p: usize,
    known: bool,
}

#[derive(Default)]
struct FileDiff<'a> {
    old: Option<String>,
    new: Option<String>,
    created: bool,
    deleted: bool,
    /// A traditional diff of one hunk that adds to line 0 and does not say the file is new:
    /// `git apply` creates the file when it is missing.
    maybe_new: bool,
    rename: bool,
    copy: bool,
    old_mode: Option<Mode>,
    new_mode: Option<Mode>,
    /// The `index OLD..NEW` blob ids, as written.
    index: Option<(String, String)>,
    hunks: Vec<HunkDiff<'a>>,
    binary: Option<(Line<'a>, Method, Vec<u8>)>,
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
    /// Context lines before the first change and after the last one.
    leading: usize,
    trailing: usize,
}

pub(super) fn convert(
    src: &PatchSource,
    lines: &[Line],
    opts: &InputOptions,
) -> Result<(Option<String>, Vec<Edit>), Error> {
    let mut out = Edits::default();
    let mut message = None;
    let mut files = 0;
    let mut strip = Strip {
        p: opts.strip.unwrap_or(1),
        known: opts.strip.is_some(),
    };
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        let h = line.head();
        let next_is_plus = lines
            .get(i + 1)
            .is_some_and(|n| n.head().starts_with("+++ "));
        if h.starts_with("diff --git ") || (h.starts_with("--- ") && next_is_plus) {
            let git = h.starts_with("diff --git ");
            let (mut fd, next) = if git {
                git_file(src, lines, i, &mut strip)?
            } else {
                traditional_file(src, lines, i, &mut strip)?
            };
            relocate(&mut fd, opts, git);
            lower(&fd, line, opts, &mut out);
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
            None => crate::patch::input::validate::patch_error(
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

/// Puts a file's names where `git apply` would: under `--directory`, and, for a traditional
/// diff run from a folder of the repository, under that folder (a `diff --git`'s names are
/// relative to the root, as git writes them from anywhere in the tree).
fn relocate(fd: &mut FileDiff, opts: &InputOptions, git: bool) {
    let cwd = if git {
        None
    } else {
        opts.cwd_prefix.as_deref()
    };
    let dirs: Vec<&str> = [cwd, opts.directory.as_deref()]
        .into_iter()
        .flatten()
        // Only trailing slashes go: an absolute ROOT stays absolute, so the planner judges it
        // (inside the repository, or refused) instead of it silently meaning a folder here.
        .map(|d| d.trim_end_matches('/'))
        .filter(|d| !d.is_empty() && *d != ".")
        .collect();
    if dirs.is_empty() {
        return;
    }
    let root = dirs.join("/");
    for name in [&mut fd.old, &mut fd.new].into_iter().flatten() {
        *name = format!("{root}/{name}");
    }
}

/// The extended header lines of a `diff --git` file, as written.
#[derive(Default)]
struct GitHeader<'a> {
    from: Option<&'a str>,
    to: Option<&'a str>,
    minus: Option<(Line<'a>, &'a str)>,
    plus: Option<(Line<'a>, &'a str)>,
}

/// One `diff --git` file starting at `lines[at]`; returns it and the index after it.
fn git_file<'a>(
    src: &PatchSource,
    lines: &[Line<'a>],
    at: usize,
    strip: &mut Strip,
) -> Result<(FileDiff<'a>, usize), Error> {
    let head = lines[at];
    let rest = &head.head()["diff --git ".len()..];
    let mut fd = FileDiff::default();
    let (hdr, mut i) = git_header(src, lines, at + 1, &mut fd)?;
    if !strip.known {
        strip.p = auto_strip(rest, &hdr);
    }
    git_names(src, &head, rest, &hdr, strip.p, &mut fd)?;
    i = body(src, lines, i, &mut fd)?;
    require_change(src, lines, i, &head, &hdr, &fd)?;
    Ok((fd, i))
}

/// Reads the extended header lines from `lines[at]` into `fd`; returns their names and the
/// index of the first line after them.
fn git_header<'a>(
    src: &PatchSource,
    lines: &[Line<'a>],
    at: usize,
    fd: &mut FileDiff<'a>,
) -> Result<(GitHeader<'a>, usize), Error> {
    let mut hdr = GitHeader::default();
    let mut i = at;
    let mut extensions = 0;
    while let Some(l) = lines.get(i) {
        let h = l.head();
        let mode = |m: &str| {
            Mode::parse(m).ok_or_else(|| {
                error_at(
                    src,
                    l,
                    1,
                    format!("`{}` is not a file mode", clip(m)),
                    "a mode is octal, as git writes it: 100644, 100755 or 120000",
                )
            })
        };
        if h.starts_with("@@ -") {
            break;
        } else if let Some(r) = h.strip_prefix("--- ") {
            hdr.minus = Some((*l, r));
        } else if let Some(r) = h.strip_prefix("+++ ") {
            hdr.plus = Some((*l, r));
        } else if let Some(m) = h.strip_prefix("old mode ") {
            fd.old_mode = Some(mode(m)?);
        } else if let Some(m) = h.strip_prefix("new mode ") {
            fd.new_mode = Some(mode(m)?);
        } else if let Some(m) = h.strip_prefix("deleted file mode ") {
            fd.deleted = true;
            fd.old_mode = Some(mode(m)?);
            extensions += 1;
        } else if let Some(m) = h.strip_prefix("new file mode ") {
            fd.created = true;
            fd.new_mode = Some(mode(m)?);
            extensions += 1;
        } else if let Some(p) = h.strip_prefix("copy from ") {
            extensions += usize::from(!fd.copy);
            fd.copy = true;
            hdr.from = Some(p);
        } else if let Some(p) = h.strip_prefix("copy to ") {
            extensions += usize::from(!fd.copy);
            fd.copy = true;
            hdr.to = Some(p);
        } else if let Some(p) = h
            .strip_prefix("rename from ")
            .or_else(|| h.strip_prefix("rename old "))
        {
            extensions += usize::from(!fd.rename);
            fd.rename = true;
            hdr.from = Some(p);
        } else if let Some(p) = h
            .strip_prefix("rename to ")
            .or_else(|| h.strip_prefix("rename new "))
        {
            extensions += usize::from(!fd.rename);
            fd.rename = true;
            hdr.to = Some(p);
        } else if h.starts_with("similarity index ") || h.starts_with("dissimilarity index ") {
        } else if let Some(r) = h.strip_prefix("index ") {
            if let Some((ids, m)) = index_line(r) {
                if let Some(m) = m {
                    fd.old_mode = Some(mode(m)?);
                }
                fd.index = Some(ids);
            }
        } else {
            break;
        }
        if extensions > 1 {
            return Err(error_at(
                src,
                l,
                1,
                "inconsistent header lines: a file diff is one of new, deleted, renamed or copied",
                HELP_DIFF,
            ));
        }
        i += 1;
    }
    if let Some((l, _)) = hdr.minus
        && hdr.plus.is_none()
    {
        return Err(error_at(
            src,
            &l,
            1,
            "a `--- ` line not followed by `+++ `",
            HELP_DIFF,
        ));
    }
    Ok((hdr, i))
}

/// Refuses a file diff that changes nothing: no hunk, no binary patch, no metadata change.
fn require_change(
    src: &PatchSource,
    lines: &[Line],
    i: usize,
    head: &Line,
    hdr: &GitHeader,
    fd: &FileDiff,
) -> Result<(), Error> {
    let changes_metadata = fd.created
        || fd.deleted
        || fd.rename
        || fd.copy
        || fd
            .new_mode
            .is_some_and(|n| fd.old_mode.is_some_and(|o| o != n));
    if fd.hunks.is_empty() && fd.binary.is_none() && !changes_metadata {
        let l = lines
            .get(i)
            .copied()
            .or(hdr.plus.map(|(l, _)| l))
            .unwrap_or(*head);
        return Err(error_at(
            src,
            &l,
            1,
            "expected a hunk (`@@ -OLD,N +NEW,M @@`): this file diff has no hunk, and no mode \
             change, rename or copy",
            "give the hunks (`@@ -OLD,N +NEW,M @@` and their lines) after the `---`/`+++` lines",
        ));
    }
    Ok(())
}

/// `OLD..NEW[ MODE]` of an `index` line.
fn index_line(r: &str) -> Option<((String, String), Option<&str>)> {
    let (old, rest) = r.split_once("..")?;
    let (new, mode) = match rest.split_once(' ') {
        Some((n, m)) => (n, Some(m)),
        None => (rest, None),
    };
    let hex = |s: &str| !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(old) && hex(new)).then(|| ((old.to_string(), new.to_string()), mode))
}

/// The strip level of a `diff --git` file when none was given: 0 for a diff made with
/// `--no-prefix` (the two names of the `diff --git` line are the same text, or a rename's old
/// name is written as is), else 1, the `a/`/`b/` prefix, as `git apply` strips.
fn auto_strip(rest: &str, hdr: &GitHeader) -> usize {
    if names::header_name(0, rest).is_some() {
        return 0;
    }
    if let Some(from) = hdr.from.and_then(|f| find_name(f, None, 0, 0)) {
        let minus = hdr.minus.map(|(_, m)| m).filter(|m| !is_dev_null(m));
        let unprefixed = match minus {
            Some(m) => find_name(m, None, 0, TERM_TAB).as_deref() == Some(from.as_str()),
            None => rest.starts_with(&format!("{from} ")),
        };
        if unprefixed {
            return 0;
        }
    }
    1
}

/// The old and new names of a `diff --git` file, checked for consistency as `git apply` does.
fn git_names(
    src: &PatchSource,
    head: &Line,
    rest: &str,
    hdr: &GitHeader,
    p: usize,
    fd: &mut FileDiff,
) -> Result<(), Error> {
    let def = names::header_name(p, rest);
    for (raw, slot) in [(hdr.from, &mut fd.old), (hdr.to, &mut fd.new)] {
        if let Some(r) = raw {
            *slot = Some(
                find_name(r, None, p.saturating_sub(1), 0)
                    .ok_or_else(|| unreadable_name(src, head, "rename or copy", p))?,
            );
        }
    }
    if fd.created {
        fd.new = def.clone().or(fd.new.take());
    }
    if fd.deleted {
        fd.old = def.clone().or(fd.old.take());
    }
    side_names(src, hdr, p, fd)?;
    settle_names(src, head, hdr, p, def, fd)
}

/// Checks the `---`/`+++` names against the ones already known, and takes them where none is.
fn side_names(
    src: &PatchSource,
    hdr: &GitHeader,
    p: usize,
    fd: &mut FileDiff,
) -> Result<(), Error> {
    let sides = [(hdr.minus, true), (hdr.plus, false)];
    for (side, is_old) in sides {
        let Some((l, text)) = side else { continue };
        let (name, null_side) = if is_old {
            (&mut fd.old, &mut fd.created)
        } else {
            (&mut fd.new, &mut fd.deleted)
        };
        if is_dev_null(text) {
            if let Some(n) = name {
                return Err(error_at(
                    src,
                    &l,
                    5,
                    format!("inconsistent names: `/dev/null` here, but `{n}` above"),
                    HELP_DIFF,
                ));
            }
            *null_side = true;
            continue;
        }
        let got = find_name(text, None, p, TERM_TAB)
            .ok_or_else(|| unreadable_name(src, &l, "`---`/`+++`", p))?;
        if *null_side {
            return Err(error_at(
                src,
                &l,
                5,
                format!("inconsistent names: `{got}`, where the header says `/dev/null`"),
                HELP_DIFF,
            ));
        }
        match name {
            Some(n) if *n != got => {
                return Err(error_at(
                    src,
                    &l,
                    5,
                    format!("inconsistent names: `{got}` here, but `{n}` above"),
                    "the `---`/`+++` names must be the ones of the `diff --git`, `rename` or \
                     `copy` lines; if the names are right, check --strip",
                ));
            }
            Some(_) => {}
            None => *name = Some(got),
        }
    }
    Ok(())
}

/// Falls back to the `diff --git` line's name, and refuses names that still disagree or lack.
fn settle_names(
    src: &PatchSource,
    head: &Line,
    hdr: &GitHeader,
    p: usize,
    def: Option<String>,
    fd: &mut FileDiff,
) -> Result<(), Error> {
    if fd.old.is_none() && fd.new.is_none() {
        let Some(d) = def else {
            return Err(error_at(
                src,
                head,
                1,
                format!(
                    "cannot tell which file this diff is about (with {p} leading folder(s) \
                     dropped from its names)"
                ),
                "give `---`/`+++` lines, or names that the `diff --git a/P b/P` line states \
                 twice; check --strip",
            ));
        };
        fd.old = Some(d.clone());
        fd.new = Some(d);
    }
    if !fd.rename
        && !fd.copy
        && let (Some(o), Some(n), Some((l, _))) = (&fd.old, &fd.new, hdr.plus)
        && o != n
    {
        return Err(error_at(
            src,
            &l,
            5,
            format!(
                "inconsistent names: `{o}` before, `{n}` after, and no `rename` or `copy` line"
            ),
            "a file diff changes one file: give `rename from`/`rename to` lines for a rename, \
             or fix the names",
        ));
    }
    if (fd.new.is_none() && !fd.deleted) || (fd.old.is_none() && !fd.created) {
        return Err(error_at(
            src,
            head,
            1,
            "the file diff lacks a file name",
            HELP_DIFF,
        ));
    }
    if fd.created {
        fd.old = None;
    }
    if fd.deleted {
        fd.new = None;
    }
    Ok(())
}

/// The error for a name line that yields no name once `p` leading folders are dropped.
fn unreadable_name(src: &PatchSource, l: &Line, what: &str, p: usize) -> Error {
    error_at(
        src,
        l,
        1,
        format!("cannot read the file name of this {what} line"),
        format!(
            "with --strip {p}, {p} leading folder(s) are dropped from every name; give \
             --strip with the number your diff needs (0 for names without an `a/` or `b/` \
             prefix)"
        ),
    )
}

/// One traditional (`diff -u`) file: a `---` and a `+++` line, then hunks.
fn traditional_file<'a>(
    src: &PatchSource,
    lines: &[Line<'a>],
    at: usize,
    strip: &mut Strip,
) -> Result<(FileDiff<'a>, usize), Error> {
    let (ml, pl) = (lines[at], lines[at + 1]);
    let minus = &ml.head()["--- ".len()..];
    let plus = &pl.head()["+++ ".len()..];
    if !strip.known {
        strip.p = names::guess_traditional_strip(minus, plus);
        strip.known = true;
    }
    let p = strip.p;
    let mut fd = FileDiff::default();
    let name = if is_dev_null(minus) {
        fd.created = true;
        fd.new = find_name_traditional(plus, None, p);
        fd.new.clone()
    } else if is_dev_null(plus) {
        fd.deleted = true;
        fd.old = find_name_traditional(minus, None, p);
        fd.old.clone()
    } else {
        let first = find_name_traditional(minus, None, p);
        let name = find_name_traditional(plus, first.as_deref(), p);
        if names::has_epoch_timestamp(minus) {
            fd.created = true;
            fd.new = name.clone();
        } else if names::has_epoch_timestamp(plus) {
            fd.deleted = true;
            fd.old = name.clone();
        } else {
            fd.old = name.clone();
            fd.new = name.clone();
            fd.maybe_new = true;
        }
        name
    };
    if name.is_none() {
        return Err(error_at(
            src,
            &ml,
            1,
            format!("cannot find the file name in these `---`/`+++` lines (with --strip {p})"),
            "name the file after `--- ` and `+++ ` (a timestamp may follow after a tab); \
             give --strip with the number of leading folders to drop",
        ));
    }
    let i = body(src, lines, at + 2, &mut fd)?;
    if fd.hunks.is_empty() {
        let l = lines.get(i).unwrap_or(&pl);
        return Err(error_at(
            src,
            l,
            1,
            "expected a hunk (`@@ -OLD,N +NEW,M @@`) after the `---`/`+++` lines",
            HELP_DIFF,
        ));
    }
    fd.maybe_new &= matches!(fd.hunks.as_slice(), [h] if h.old.is_empty() && h.old_start == 0);
    Ok((fd, i))
}

/// The hunks (or binary data) of a file, from `lines[at]`; returns the index after them.
fn body<'a>(
    src: &PatchSource,
    lines: &[Line<'a>],
    at: usize,
    fd: &mut FileDiff<'a>,
) -> Result<usize, Error> {
    let mut i = at;
    while let Some(l) = lines.get(i)
        && l.head().starts_with("@@")
    {
        let (h, next) = hunk(src, lines, i)?;
        fd.hunks.push(h);
        i = next;
    }
    if !fd.hunks.is_empty() {
        return Ok(i);
    }
    let Some(l) = lines.get(i) else {
        return Ok(i);
    };
    let h = l.head();
    if h == "GIT binary patch" {
        let (method, data, next) = binary_hunks(src, lines, i + 1)?;
        fd.binary = Some((*l, method, data));
        return Ok(next);
    }
    if (h.starts_with("Binary files ") || h.starts_with("Files ")) && h.ends_with(" differ") {
        return Err(error_at(
            src,
            l,
            1,
            "this binary file diff has no data (`Binary files … differ`)",
            "make the diff with `git diff --binary` (it writes the content as a `GIT binary \
             patch`), or leave the binary file out of the patch",
        ));
    }
    Ok(i)
}

/// The forward hunk of a `GIT binary patch` (and the optional reverse one, checked and
/// dropped), from `lines[at]`: its method, its inflated data, and the index after it.
fn binary_hunks(
    src: &PatchSource,
    lines: &[Line],
    at: usize,
) -> Result<(Method, Vec<u8>, usize), Error> {
    let mut i = at;
    let mut forward = None;
    for n in 0..2 {
        let Some(l) = lines.get(i) else { break };
        let Some((method, size)) = binary::hunk_header(l.head()) else {
            if n == 0 {
                return Err(error_at(
                    src,
                    l,
                    1,
                    "a `GIT binary patch` must go on with `literal SIZE` or `delta SIZE`",
                    "copy the binary patch whole, as `git diff --binary` wrote it",
                ));
            }
            break;
        };
        i += 1;
        let mut deflated = Vec::new();
        while let Some(d) = lines.get(i) {
            i += 1;
            if d.head().is_empty() {
                break;
            }
            let bytes = binary::data_line(d.head()).map_err(|why| {
                error_at(
                    src,
                    d,
                    1,
                    format!("corrupt binary patch: {why}"),
                    "copy the binary patch whole, as `git diff --binary` wrote it",
                )
            })?;
            deflated.extend_from_slice(&bytes);
        }
        let data = binary::inflate(&deflated, size).map_err(|why| {
            error_at(
                src,
                l,
                1,
                format!("corrupt binary patch: {why}"),
                "copy the binary patch whole, as `git diff --binary` wrote it",
            )
        })?;
        if n == 0 {
            forward = Some((method, data));
        }
    }
    let (method, data) = forward.ok_or_else(|| {
        error_at(
            src,
            &lines[at.saturating_sub(1)],
            1,
            "a `GIT binary patch` without data",
            "copy the binary patch whole, as `git diff --binary` wrote it",
        )
    })?;
    Ok((method, data, i))
}

/// One hunk starting at `lines[at]`; returns it and the index after it.
fn hunk<'a>(
    src: &PatchSource,
    lines: &[Line<'a>],
    at: usize,
) -> Result<(HunkDiff<'a>, usize), Error> {
    let line = lines[at];
    let (old_start, mut old_left, new_start, mut new_left) = hunk_header(src, &line)?;
    let mut hd = HunkDiff {
        line,
        old_start,
        new_start,
        new_count: new_left,
        old: Vec::new(),
        new: Vec::new(),
        old_eol: true,
        new_eol: true,
        changed: false,
        leading: 0,
        trailing: 0,
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
        // A marker belongs to the line before it, so it is read even once the counts are met.
        if l.raw.starts_with('\\') {
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
        let (is_old, is_new) = hunk_line_sides(src, &line, l, old_left, new_left)?;
        let text = l.raw.get(1..).unwrap_or("");
        if is_old {
            hd.old.push(text);
            old_left -= 1;
        }
        if is_new {
            hd.new.push(text);
            new_left -= 1;
        }
        count_context(&mut hd, is_old && is_new);
        last = (is_old, is_new);
        i += 1;
    }
    Ok((hd, i))
}

/// The hunk header's `(old_start, old_count, new_start, new_count)`, or where it is malformed.
fn hunk_header(src: &PatchSource, line: &Line) -> Result<(usize, usize, usize, usize), Error> {
    let bad = |col: usize, what: &str| {
        error_at(
            src,
            line,
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
    let (old_start, old_count) = range(old_r, 5)?;
    let (new_start, new_count) = range(new_r, 5 + old_r.len() + 2)?;
    Ok((old_start, old_count, new_start, new_count))
}

/// Which sides `(old, new)` hunk line `l` belongs to, given the lines its header still owes;
/// refuses a line the header does not leave room for.
fn hunk_line_sides(
    src: &PatchSource,
    header: &Line,
    l: &Line,
    old_left: usize,
    new_left: usize,
) -> Result<(bool, bool), Error> {
    let (is_old, is_new) = match l.raw.chars().next() {
        Some(' ') | None => (true, true),
        Some('\r') if l.raw.len() == 1 => {
            // `git apply` refuses it too: an empty line is an empty context line only when
            // it is really empty; a lone CR is a blank CRLF line that lost its leading space.
            return Err(error_at(
                src,
                l,
                1,
                format!(
                    "a line of only a carriage return in the hunk of line {}: a blank \
                     context line of a CRLF file needs its leading space",
                    header.no
                ),
                "write the blank context line as a space then CRLF (the patch was damaged \
                 on the way: its whitespace was stripped)",
            ));
        }
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
                    header.no,
                    clip(l.head())
                ),
                "hunk lines start with ` ` (context), `-` (removed) or `+` (added); if the \
                 hunk is shorter, fix the counts in its `@@` header",
            ));
        }
    };
    if (is_old && old_left == 0) || (is_new && new_left == 0) {
        return Err(error_at(
            src,
            l,
            1,
            format!(
                "the hunk of line {} has more {} lines than its header says",
                header.no,
                if is_old && old_left == 0 {
                    "old (context or `-`)"
                } else {
                    "new (context or `+`)"
                }
            ),
            "fix the counts in the `@@ -OLD_START,OLD_COUNT +NEW_START,NEW_COUNT @@` header",
        ));
    }
    Ok((is_old, is_new))
}

/// Counts a context line as leading or trailing; a change resets the trailing run.
fn count_context(hd: &mut HunkDiff, context: bool) {
    if context {
        if hd.changed {
            hd.trailing += 1;
        } else {
            hd.leading += 1;
        }
    } else {
        hd.changed = true;
        hd.trailing = 0;
    }
}

/// The edits of one file's diff.
fn lower(fd: &FileDiff, head: &Line, opts: &InputOptions, out: &mut Edits) {
    let path = fd.old.as_deref().or(fd.new.as_deref()).unwrap_or_default();
    let new_mode = fd.new_mode.or(if fd.created { None } else { fd.old_mode });
    let refuse = |out: &mut Edits, why: String| out.push(path, Err(why), head.span(), None);
    for m in [fd.old_mode, fd.new_mode].into_iter().flatten() {
        if matches!(m, Mode::Dir | Mode::Gitlink) {
            return refuse(
                out,
                "submodules and directory entries (modes 160000, 040000) are not supported: \
                 update the submodule with git, and give patchgate the file changes"
                    .into(),
            );
        }
    }
    let old_link = fd.old_mode == Some(Mode::Link);
    let new_link = new_mode == Some(Mode::Link);
    if !fd.created && !fd.deleted && fd.old_mode.is_some() && old_link != new_link {
        return refuse(
            out,
            "this diff turns a symlink into a file, or a file into a symlink: make it a \
             deletion and a creation (as `git diff` writes it)"
                .into(),
        );
    }
    let executable = |m: Option<Mode>| m == Some(Mode::Executable);
    match (&fd.old, &fd.new) {
        (None, Some(new)) => {
            if fd.binary.is_some() {
                binary_edit(fd, new, out);
            } else if new_link {
                link_edit(fd, new, head, out);
            } else {
                create_edit(fd, new, head, out);
            }
            if executable(new_mode) {
                out.push(new, Ok(Op::Mode { executable: true }), head.span(), None);
            }
        }
        (Some(old), None) => {
            if fd.binary.is_some() {
                binary_edit(fd, old, out);
            } else if old_link && !fd.hunks.is_empty() {
                link_edit(fd, old, head, out);
            } else {
                // As `git apply`: the removals must leave the file empty ("removal patch leaves
                // file contents"), so a file that grew since the diff is a miss, never lost.
                hunks(fd, old, opts, out);
                out.push(old, Ok(delete_if_empty()), head.span(), None);
            }
        }
        (Some(old), Some(new)) => {
            let work = if fd.copy {
                out.push(old, Ok(Op::Copy { to: new.clone() }), head.span(), None);
                new
            } else {
                old
            };
            if fd.binary.is_some() {
                binary_edit(fd, work, out);
            } else if old_link || new_link {
                if !fd.hunks.is_empty() {
                    link_edit(fd, work, head, out);
                }
            } else {
                hunks(fd, work, opts, out);
            }
            if !new_link
                && let (Some(o), Some(n)) = (fd.old_mode, fd.new_mode)
                && executable(Some(o)) != executable(Some(n))
            {
                out.push(
                    work,
                    Ok(Op::Mode {
                        executable: executable(Some(n)),
                    }),
                    head.span(),
                    None,
                );
            }
            if fd.rename && old != new {
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

/// A created text file: one hunk of `+` lines (or none, for an empty file).
fn create_edit(fd: &FileDiff, new: &str, head: &Line, out: &mut Edits) {
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

/// git's id of the empty blob.
pub(crate) const EMPTY_BLOB: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

/// The deletion of a text file whose hunks (if any) removed every line: it must now be empty.
fn delete_if_empty() -> Op {
    Op::Binary(Box::new(Binary {
        old_id: Some(EMPTY_BLOB.to_string()),
        new_id: None,
        data: BinaryData::Literal(Vec::new()),
    }))
}

/// A symlink's change: its one hunk holds the old target (`-`) and the new one (`+`).
fn link_edit(fd: &FileDiff, path: &str, head: &Line, out: &mut Edits) {
    let (origin, span) = match fd.hunks.first() {
        Some(h) => (Some(out.hunk(h.line.head())), h.line.span()),
        None => (None, head.span()),
    };
    let op = match fd.hunks.as_slice() {
        [h] => {
            let side = |lines: &[&str], eol: bool| -> Result<Option<String>, String> {
                if lines.is_empty() {
                    return Ok(None);
                }
                let t = join(lines, eol);
                if t.contains('\n') || t.is_empty() || t.contains('\0') {
                    return Err(format!(
                        "a symlink's target is one line without a newline (`\\ No newline at end \
                         of file` after it), but this hunk gives `{}`",
                        clip(&t.replace('\n', "\\n"))
                    ));
                }
                Ok(Some(t))
            };
            match (side(&h.old, h.old_eol), side(&h.new, h.new_eol)) {
                (Ok(old), Ok(new))
                    if old.is_none() == fd.created && new.is_none() == fd.deleted =>
                {
                    Ok(Op::Link { old, new })
                }
                (Ok(_), Ok(_)) => Err(
                    "this symlink's hunk does not match its header: a new link has only a `+` \
                     line, a changed one a `-` and a `+` line"
                        .to_string(),
                ),
                (Err(e), _) | (_, Err(e)) => Err(e),
            }
        }
        [] => Err("a new symlink needs its target: one `+` line".to_string()),
        _ => Err("a symlink's diff has one hunk: its old and new target".to_string()),
    };
    out.push(path, op, span, origin);
}

/// A `GIT binary patch`: checked against the `index` line's full blob ids.
fn binary_edit(fd: &FileDiff, path: &str, out: &mut Edits) {
    let Some((line, method, data)) = &fd.binary else {
        return;
    };
    let full = |s: &str| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let zero = |s: &str| s.bytes().all(|b| b == b'0');
    let op = match &fd.index {
        Some((old, new)) if full(old) && full(new) => {
            let old_id = (!fd.created && !zero(old)).then(|| old.to_ascii_lowercase());
            let new_id = (!fd.deleted && !zero(new)).then(|| new.to_ascii_lowercase());
            Ok(Op::Binary(Box::new(Binary {
                old_id,
                new_id,
                data: match method {
                    Method::Literal => BinaryData::Literal(data.clone()),
                    Method::Delta => BinaryData::Delta(data.clone()),
                },
            })))
        }
        _ => Err(
            "a binary patch needs the full `index OLD..NEW` line (40-digit blob ids) to be \
             checked: make the diff with `git diff --binary`, which writes it"
                .to_string(),
        ),
    };
    let origin = out.hunk(line.head());
    out.push(path, op, line.span(), Some(origin));
}

fn hunks(fd: &FileDiff, path: &str, opts: &InputOptions, out: &mut Edits) {
    for h in &fd.hunks {
        let origin = out.hunk(h.line.head());
        let old = join(&h.old, h.old_eol);
        let new = join(&h.new, h.new_eol);
        let op = if !h.changed && h.old_eol == h.new_eol {
            Err("this hunk has no `-` or `+` line: it changes nothing".to_string())
        } else if old.is_empty() {
            insert(h, new, fd.maybe_new, opts)
        } else {
            // Where the old text stands once the file's earlier hunks are applied.
            let line = if h.new_count > 0 {
                h.new_start
            } else {
                h.new_start + 1
            };
            // Where `git apply` anchors a hunk: one from line 1 at the start of the file; one with
            // leading but no trailing context at its end (only the end of a file cuts a hunk's
            // context short). Preferred among several occurrences, never required.
            let anchored = !opts.unidiff_zero;
            replace_op(
                old,
                new,
                Some(Near {
                    line: Some(line.max(1)),
                    at_start: anchored && h.old_start <= 1,
                    at_eof: anchored && h.leading > 0 && h.trailing == 0,
                    ..Near::default()
                }),
            )
        };
        out.push(path, op, h.line.span(), Some(origin));
    }
}

/// A hunk without old lines: added at its line number (see [`Insert`]).
fn insert(h: &HunkDiff, text: String, maybe_new: bool, opts: &InputOptions) -> Result<Op, String> {
    crate::patch::input::validate::check_nul("the hunk's new text", &text)?;
    if h.old_start == 0 {
        return Ok(Op::Insert(Insert {
            line: 1,
            text,
            only_empty: !opts.unidiff_zero,
            create: maybe_new,
        }));
    }
    if !opts.unidiff_zero {
        return Err(format!(
            "this hunk adds lines after line {} without any context line, so there is no text \
             to find it by: make the diff with context lines (`git diff`, not `git diff -U0`), \
             or re-run with --unidiff-zero to place it by its line number",
            h.old_start
        ));
    }
    Ok(Op::Insert(Insert {
        line: h.new_start.max(1),
        text,
        only_empty: false,
        create: false,
    }))
}
