//! Aider's SEARCH/REPLACE blocks, converted into edits, read as Aider's own parser reads them.
//!
//! ```text
//! patch  := (prose | block)*
//! block  := head NL text* divider NL text* (updated | divider) NL
//! head   := "<"{5,9} " SEARCH" ">"?        divider := "="{5,9}        updated := ">"{5,9} " REPLACE"
//!           (marker lines compared trimmed)
//! ```
//!
//! The path (Aider's rules): the three lines before the block are read back from the nearest, as
//! long as they are fences; a fence whose info string holds a `.` or a `/` names the file
//! (```` ```src/app.py ````), any other line is the path, stripped of spaces, a trailing `:`, a
//! leading `#`, and surrounding `` ` `` and `*` (`**src/app.py**:`), so a filename fenced on its
//! own line above the block's fence is found too. `...` is never a path. A block without a path
//! there reuses the previous block's path. patchgate is stricter in three places, each refused
//! with an error rather than guessed: a path line with spaces in it (prose), a block that would
//! reuse the previous path although a path-like line stands between them (Aider skips it and edits
//! the previous file), and a `=======` inside REPLACE followed later by `>>>>>>> REPLACE` (Aider
//! ends REPLACE at the `=======` and drops the lines after it).
//!
//! A shell code block (```` ```bash ```` and the like) whose first two lines open no block holds
//! commands, not edits: Aider skips it, and so does patchgate.
//!
//! Each block becomes one whole-line replacement: SEARCH's lines are the old text, REPLACE's the
//! new text, each with its line break. A blank SEARCH appends REPLACE to the file, or creates the
//! file when it is missing. Aider's fallbacks for a SEARCH not found as it is go into
//! [`Replace::fallbacks`]: without a leading blank line, and `...` elision (each piece found once,
//! in order). Several blocks for one file apply in order, each seeing the previous ones.

use super::{Edits, Line, error_at, join, replace_op};
use crate::error::Error;
use crate::patch::{Edit, Fallback, Op, PatchSource};

const SEARCH: &str = "<<<<<<< SEARCH";
const DIVIDER: &str = "=======";
const REPLACE: &str = ">>>>>>> REPLACE";

const HELP_BLOCK: &str = "write each change as the file's path on its own line, then `<<<<<<< SEARCH`, \
the exact lines to find, `=======`, the new lines, `>>>>>>> REPLACE`";
const HELP_PATH: &str = "put the file's path (relative to the repository root) alone on the line \
before the block, or before its ``` fence";

/// Which marker a line is (Aider's patterns, on the trimmed line), or `""`.
fn marker(l: &Line) -> &'static str {
    marker_of(l.head())
}

/// [`marker`] of a line's text.
pub(super) fn marker_of(line: &str) -> &'static str {
    let t = line.trim();
    let run = |c: char| {
        let n = t.len() - t.trim_start_matches(c).len();
        (5..=9).contains(&n).then(|| &t[n..])
    };
    match t.chars().next() {
        Some('<') if run('<').is_some_and(|r| r == " SEARCH" || r == " SEARCH>") => SEARCH,
        Some('=') if run('=') == Some("") => DIVIDER,
        Some('>') if run('>') == Some(" REPLACE") => REPLACE,
        _ => "",
    }
}

pub(super) fn convert(src: &PatchSource, lines: &[Line]) -> Result<Vec<Edit>, Error> {
    let mut out = Edits::default();
    // The previous block's path, and the index of the line after it.
    let mut last: Option<(String, usize)> = None;
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        if let Some(end) = shell_block(lines, i) {
            i = end;
            continue;
        }
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
        let path = block_path(src, lines, i, last.as_ref())?;
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
                // Aider ends REPLACE at a second divider too: only where nothing else was meant.
                (DIVIDER, true) => {
                    divider_in_replace(src, lines, i, l)?;
                    break;
                }
                (REPLACE, false) => {
                    return Err(error_at(
                        src,
                        l,
                        1,
                        format!("`{REPLACE}` before `{DIVIDER}`"),
                        HELP_BLOCK,
                    ));
                }
                _ if in_replace => replace.push(l.raw),
                _ => search.push(l.raw),
            }
        }
        let origin = out.hunk(&format!("{SEARCH} at line {}", open.no));
        out.push(
            &path,
            block_op(&search, &replace, &path),
            open.span(),
            Some(origin),
        );
        last = Some((path, i));
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
            None => super::validate::patch_error(
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

/// Aider reads a shell code block (```` ```bash ````, ```` ```sh ````, …) whose next two lines
/// open no SEARCH/REPLACE block as commands to run, not edits: the index after its closing fence.
fn shell_block(lines: &[Line], at: usize) -> Option<usize> {
    const SHELLS: [&str; 12] = [
        "bash",
        "sh",
        "shell",
        "cmd",
        "batch",
        "powershell",
        "ps1",
        "zsh",
        "fish",
        "ksh",
        "csh",
        "tcsh",
    ];
    let t = lines[at].head().trim();
    let info = t.strip_prefix("```")?;
    // Aider compares by prefix: ```bash and ```shell-session alike.
    if !SHELLS.iter().any(|s| info.starts_with(s)) {
        return None;
    }
    if lines[at + 1..].iter().take(2).any(|l| marker(l) == SEARCH) {
        return None;
    }
    let close = lines[at + 1..]
        .iter()
        .position(|l| l.head().trim().starts_with("```"));
    Some(close.map_or(lines.len(), |c| at + 1 + c + 1))
}

/// A `=======` ended REPLACE at `divider`; `next` is the line after it. Aider stops the block there
/// and skips whatever follows until the next block; a `>>>>>>> REPLACE` before that next block
/// means the author meant more, which Aider would drop.
fn divider_in_replace(
    src: &PatchSource,
    lines: &[Line],
    next: usize,
    divider: &Line,
) -> Result<(), Error> {
    let tail = lines[next.min(lines.len())..]
        .iter()
        .take_while(|l| marker(l) != SEARCH);
    if let Some(end) = tail.clone().find(|l| marker(l) == REPLACE) {
        return Err(error_at(
            src,
            divider,
            1,
            format!(
                "a `{DIVIDER}` line inside REPLACE, and `{REPLACE}` only at line {}: aider ends \
                 the block at this line and drops the lines after it, so what REPLACE holds is a \
                 guess",
                end.no
            ),
            "if the line is text (a heading underline), make it longer or shorter than 5-9 `=`; \
             else end REPLACE with `>>>>>>> REPLACE`; nothing was written",
        ));
    }
    Ok(())
}

/// One block's edit: a whole-line replacement with Aider's fallbacks, or, for a blank SEARCH,
/// an append that creates a missing file.
fn block_op(search: &[&str], replace: &[&str], path: &str) -> Result<Op, String> {
    if search.iter().all(|l| l.trim().is_empty()) {
        return Ok(Op::Append {
            text: join(replace, true),
            create: true,
        });
    }
    let mut op = replace_op(join(search, true), join(replace, true), None)?;
    if let Op::Replace(r) = &mut op {
        // Aider strips this wrapping before anything else; patchgate tries it first of its
        // fallbacks, after the text as written.
        let (bare_search, bare_replace) = (unwrapped(search, path), unwrapped(replace, path));
        if (bare_search.len(), bare_replace.len()) != (search.len(), replace.len())
            && !bare_search.iter().all(|l| l.trim().is_empty())
        {
            r.fallbacks.push(Fallback::Without {
                old: join(bare_search, true),
                new: join(bare_replace, true),
                what: "the file name line and ``` fence around SEARCH and REPLACE".into(),
            });
        }
        let blank = |l: &&str| l.trim().is_empty();
        if search.len() > 2 && search.first().is_some_and(blank) {
            let new = match replace.first() {
                Some(l) if blank(l) => &replace[1..],
                _ => replace,
            };
            r.fallbacks.push(Fallback::Without {
                old: join(&search[1..], true),
                new: join(new, true),
                what: "SEARCH's leading blank line".into(),
            });
        }
        if let Some(pieces) = elision(search, replace) {
            r.fallbacks.push(Fallback::Pieces(pieces));
        }
    }
    Ok(op)
}

/// A SEARCH or REPLACE text without the wrapping aider strips from it: a first line that ends
/// with the file's name, then a ``` fence around the rest.
fn unwrapped<'a, 'b>(lines: &'b [&'a str], path: &str) -> &'b [&'a str] {
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut l = lines;
    if let Some((first, rest)) = l.split_first()
        && !name.is_empty()
        && first.trim().ends_with(name)
    {
        l = rest;
    }
    let fence = |s: &&str| s.starts_with("```");
    if l.len() >= 2 && l.first().is_some_and(fence) && l.last().is_some_and(fence) {
        l = &l[1..l.len() - 1];
    }
    l
}

/// SEARCH and REPLACE cut at their `...` lines, paired; `None` without any `...` line.
fn elision(search: &[&str], replace: &[&str]) -> Option<Result<Vec<(String, String)>, String>> {
    let dots = |l: &&str| l.trim_end_matches('\r').trim_start() == "...";
    if !search.iter().any(dots) {
        return None;
    }
    let cut = |lines: &[&str]| -> (Vec<String>, Vec<String>) {
        let (mut pieces, mut seps, mut cur) = (Vec::new(), Vec::new(), Vec::new());
        for l in lines {
            if dots(l) {
                pieces.push(join(&cur, true));
                seps.push(l.trim_end_matches('\r').to_string());
                cur.clear();
            } else {
                cur.push(*l);
            }
        }
        pieces.push(join(&cur, true));
        (pieces, seps)
    };
    let (old, old_seps) = cut(search);
    let (new, new_seps) = cut(replace);
    let why = if old_seps.len() != new_seps.len() {
        "SEARCH and REPLACE do not have the same number of `...` lines, so they cannot be read as \
         elisions"
    } else if old_seps != new_seps {
        "the `...` lines of SEARCH and REPLACE are not the same, so they cannot be read as elisions"
    } else if old
        .iter()
        .zip(&new)
        .any(|(o, n)| o.is_empty() && !n.is_empty())
    {
        "read with its `...` lines as elisions, a piece of REPLACE has no SEARCH text to stand \
         next to (aider would append it at the end of the file)"
    } else {
        return Some(Ok(old.into_iter().zip(new).collect()));
    };
    Some(Err(why.to_string()))
}

/// The path of the block whose `<<<<<<< SEARCH` is `lines[at]` (see the module doc).
fn block_path(
    src: &PatchSource,
    lines: &[Line],
    at: usize,
    last: Option<&(String, usize)>,
) -> Result<String, Error> {
    let head = &lines[at];
    for l in lines[at.saturating_sub(3)..at].iter().rev() {
        let fence = is_fence(l);
        match filename(l) {
            Name::Path(p) => return Ok(p),
            Name::Prose(p) if !fence => {
                return Err(error_at(
                    src,
                    l,
                    1,
                    format!(
                        "`{p}`, before the SEARCH/REPLACE block at line {}, is where aider reads \
                         the block's file path, but it is prose, not a path",
                        head.no
                    ),
                    HELP_PATH,
                ));
            }
            _ => {}
        }
        if !fence {
            break;
        }
    }
    let Some((path, after)) = last else {
        return Err(error_at(
            src,
            head,
            1,
            "no file path before this SEARCH/REPLACE block",
            HELP_PATH,
        ));
    };
    // Reusing the previous path is what aider does; a path it skipped on the way means the
    // author meant another file.
    let skipped = lines[(*after).min(at)..at]
        .iter()
        .find(|l| matches!(filename(l), Name::Path(_)) && marker(l).is_empty());
    if let Some(l) = skipped {
        return Err(error_at(
            src,
            l,
            1,
            format!(
                "`{}` is not right before the block at line {} (or its fence), so aider would not \
                 read it as the block's path and would edit {path} instead",
                l.head().trim(),
                head.no
            ),
            HELP_PATH,
        ));
    }
    Ok(path.clone())
}

fn is_fence(l: &Line) -> bool {
    let t = l.head();
    t.starts_with("```") || t.starts_with("~~~")
}

enum Name {
    Path(String),
    /// Text on the path line that cannot be a path (it has spaces).
    Prose(String),
    None,
}

/// What aider makes of a line as a file name.
fn filename(l: &Line) -> Name {
    if !marker(l).is_empty() {
        return Name::None;
    }
    let t = l.head().trim();
    if t == "..." {
        return Name::None;
    }
    let name = if let Some(info) = t.strip_prefix("```").or_else(|| t.strip_prefix("~~~")) {
        // A fence's info string names the file when it looks like one (```src/app.py), not a
        // language (```python).
        let info = info.trim_start_matches(['`', '~']).trim();
        if !info.contains(['.', '/']) {
            return Name::None;
        }
        info
    } else {
        let p = t.trim_end_matches(':').trim_start_matches('#').trim();
        p.trim_matches('`').trim_matches('*').trim()
    };
    if name.is_empty() || name.chars().all(|c| c == '.') {
        Name::None
    } else if name.chars().any(char::is_whitespace) {
        Name::Prose(name.to_string())
    } else {
        Name::Path(name.to_string())
    }
}
