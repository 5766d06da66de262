//! The checks and the error every input format shares: a path given as text, text without NUL
//! bytes, and a patch error located at a byte offset of the patch (1-based line and column, a
//! message cut to a readable length). Each converter (YAML/JSON, codex, Aider, unified diff) turns
//! its own syntax into edits and runs them through these, so an edit means the same whatever
//! format carried it.

use miette::SourceSpan;

use crate::error::{Error, PatchError};
use crate::patch::PatchSource;

pub(crate) fn patch_error(
    source: &PatchSource,
    message: String,
    help: String,
    offset: Option<usize>,
    label: &str,
) -> Error {
    let message = shorten(message);
    let (line, column) = match offset {
        Some(o) => {
            let (l, c) = line_col(&source.text, o);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    Error::Patch(Box::new(PatchError {
        message,
        help,
        source_code: Some(source.named_source()),
        span: offset.map(|o| SourceSpan::from((o.min(source.text.len()), 0))),
        label: label.to_string(),
        line,
        column,
    }))
}

/// A message cut to a readable length: the YAML and JSON readers quote the offending value in
/// full, and a value can be megabytes long (the report would carry it whole).
pub(super) fn shorten(message: String) -> String {
    const HEAD: usize = 240;
    const TAIL: usize = 120;
    let n = message.chars().count();
    if n <= HEAD + TAIL + 40 {
        return message;
    }
    let head: String = message.chars().take(HEAD).collect();
    let tail: String = message.chars().skip(n - TAIL).collect();
    format!(
        "{head} … ({} characters left out) … {tail}",
        n - HEAD - TAIL
    )
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

pub(crate) fn check_path_text(key: &str, path: Option<&str>) -> Option<String> {
    match path {
        None => Some(format!(
            "`{key}` is required: the path of the file to edit, relative to the repository root"
        )),
        Some("") => Some(format!("`{key}` is empty")),
        Some(p) if p.contains('\0') => Some(format!("`{key}` contains a NUL byte")),
        Some(p) if p.ends_with('/') => Some(format!(
            "`{key}` ends with `/`: name a file, not a directory"
        )),
        Some(_) => None,
    }
}

pub(crate) fn check_nul(key: &str, s: &str) -> Result<(), String> {
    if s.contains('\0') {
        Err(format!(
            "`{key}` contains a NUL byte; patchgate edits text files only"
        ))
    } else {
        Ok(())
    }
}
