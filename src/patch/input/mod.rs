//! The input formats agents already write, converted into ordinary [`Edit`]s: detection and
//! dispatch, and what the converters share.
//!
//! Detection (`--input auto`) looks at lines that start in column 0 and takes the first marker it
//! meets: `*** Begin Patch` → codex (also indented, as the document's first non-blank line),
//! `<<<<<<< SEARCH` (5 to 9 `<`, as aider reads it) → aider, `diff --git `, `@@ -` or a `--- `
//! line followed by a `+++ ` line → diff; a document with none of them is YAML/JSON. Markers must
//! start a line because a YAML patch's block strings are indented, and a diff's or codex patch's
//! content lines carry a ` `/`-`/`+` prefix, so text quoted inside one format cannot pass for
//! another.
//!
//! Invariants of every converter:
//! - a document that is not the format (unterminated block, a content line outside a hunk, garbage)
//!   is an [`Error::Patch`] with the 1-based line and column in the patch text and a `help`;
//! - a well-formed hunk that asks for something patchgate cannot do (a mode change, a copy, an
//!   unplaceable hunk) keeps its place as an edit with `op = Err(reason)`, as the YAML parser does;
//! - each hunk becomes one edit in patch order, with [`Edit::origin`] naming it; line numbers and
//!   anchors only go into [`Replace::near`], which breaks ties and never moves a match;
//! - no input panics (a unit test feeds truncated and garbled patches to every converter).

mod aider;
mod codex;
mod diff;
pub(crate) mod validate;
pub(super) mod yaml_json;

pub(crate) use diff::{EMPTY_BLOB, apply_delta};

use std::sync::Arc;

use miette::SourceSpan;

use super::{Edit, Format, Hunk, InputFormat, InputOptions, Near, Op, Patch, PatchSource, Replace};
use crate::error::{Error, PatchError};
use validate::{check_nul, check_path_text, patch_error};

/// The format of a patch text, told from its content (never [`InputFormat::Auto`]; YAML and JSON
/// both come back as [`InputFormat::Yaml`], the YAML parser tells them apart itself).
pub fn detect(text: &str) -> InputFormat {
    let mut lines = text.lines().peekable();
    let mut first = true;
    while let Some(line) = lines.next() {
        // Past the first non-blank line, only a line starting with one of these bytes can be a
        // marker: the others are passed over without trimming (a YAML patch of 1,000 edits has
        // thousands of lines, all read here before its parser starts).
        if !first
            && !matches!(
                line.as_bytes().first(),
                Some(b'*' | b'<' | b'd' | b'@' | b'-')
            )
        {
            continue;
        }
        let line = line.trim_end_matches('\r');
        // codex trims its marker lines; an indented one counts only as the document's first line,
        // where no YAML block string can be.
        let begin = if first { line.trim() } else { line.trim_end() };
        first = first && line.trim().is_empty();
        if begin == "*** Begin Patch" {
            return InputFormat::Codex;
        }
        if !line.starts_with(char::is_whitespace) && aider::marker_of(line) == "<<<<<<< SEARCH" {
            return InputFormat::Aider;
        }
        if line.starts_with("diff --git ") || line.starts_with("@@ -") {
            return InputFormat::Diff;
        }
        if line.starts_with("--- ") && lines.peek().is_some_and(|n| n.starts_with("+++ ")) {
            return InputFormat::Diff;
        }
    }
    InputFormat::Yaml
}

/// Parses patch bytes in `input` format (see [`super::parse_input`]); `opts` are a diff's.
pub(crate) fn parse(
    bytes: &[u8],
    name: &str,
    input: InputFormat,
    opts: &InputOptions,
) -> Result<Patch, Error> {
    let format = match input {
        InputFormat::Yaml | InputFormat::Json => None,
        InputFormat::Codex => Some(Format::Codex),
        InputFormat::Aider => Some(Format::Aider),
        InputFormat::Diff => Some(Format::Diff),
        // Detection needs text; undecodable bytes get the YAML parser's precise message.
        InputFormat::Auto => match std::str::from_utf8(bytes).map(detect) {
            Ok(InputFormat::Codex) => Some(Format::Codex),
            Ok(InputFormat::Aider) => Some(Format::Aider),
            Ok(InputFormat::Diff) => Some(Format::Diff),
            _ => None,
        },
    };
    // The folder the command runs in is not an option the user gave: it only matters to a diff.
    let given = InputOptions {
        cwd_prefix: None,
        ..opts.clone()
    };
    if format != Some(Format::Diff) && given != InputOptions::default() {
        return Err(Error::Usage {
            message: format!(
                "--strip, --directory and --unidiff-zero are options of a unified diff, and {name} \
                 is {}",
                match format {
                    Some(Format::Codex) => "a codex patch",
                    Some(Format::Aider) => "an aider patch",
                    _ => "a YAML/JSON patch",
                }
            ),
            help: "leave them out, or give a unified diff (`--input diff`)".into(),
        });
    }
    let Some(format) = format else {
        return super::parse_bytes(bytes, name);
    };
    let text = decode(bytes, name)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let src = PatchSource {
        name: name.to_string(),
        text: Arc::new(text.to_string()),
        format,
    };
    if let Some(at) = text.find('\0') {
        return Err(patch_error(
            &src,
            "the patch contains a NUL byte".into(),
            "a patch is a text file; binary content cannot be patched".into(),
            Some(at),
            "NUL byte here",
        ));
    }
    let lines = split_lines(&src.text);
    let (message, edits) = match format {
        Format::Codex => (None, codex::convert(&src, &lines)?),
        Format::Aider => (None, aider::convert(&src, &lines)?),
        _ => diff::convert(&src, &lines, opts)?,
    };
    Ok(Patch {
        message,
        edits,
        source: src,
    })
}

fn decode(bytes: &[u8], name: &str) -> Result<String, Error> {
    match std::str::from_utf8(bytes) {
        Ok(t) => Ok(t.to_string()),
        Err(e) => {
            let good = String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned();
            let (line, column) = validate::line_col(&good, good.len());
            Err(Error::Patch(Box::new(PatchError {
                message: format!(
                    "{name} is not valid UTF-8 (invalid byte at line {line}, column {column})"
                ),
                help: "save the patch as UTF-8; patchgate edits UTF-8 text files only".into(),
                source_code: None,
                span: None,
                label: String::new(),
                line: Some(line),
                column: Some(column),
            })))
        }
    }
}

/// One line of the patch text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Line<'a> {
    /// 1-based.
    pub no: usize,
    /// Byte offset of the line's start in the patch text.
    pub start: usize,
    /// The line without its `\n`; a `\r` before it is kept (it is content in a CRLF hunk).
    pub raw: &'a str,
}

impl<'a> Line<'a> {
    /// The line without a trailing `\r`: what markers and headers are compared with.
    pub(super) fn head(&self) -> &'a str {
        self.raw.strip_suffix('\r').unwrap_or(self.raw)
    }

    pub(super) fn span(&self) -> SourceSpan {
        SourceSpan::from((self.start, self.head().len()))
    }
}

pub(super) fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, raw) in text.split('\n').enumerate() {
        // The empty piece after a final `\n` is not a line.
        if start == text.len() && raw.is_empty() && i > 0 {
            break;
        }
        out.push(Line {
            no: i + 1,
            start,
            raw,
        });
        start += raw.len() + 1;
    }
    out
}

/// A syntax error at `line`, column `col` (1-based, in characters).
pub(super) fn error_at(
    src: &PatchSource,
    line: &Line,
    col: usize,
    message: impl Into<String>,
    help: impl Into<String>,
) -> Error {
    let byte = line
        .raw
        .char_indices()
        .nth(col.saturating_sub(1))
        .map_or(line.raw.len(), |(b, _)| b);
    patch_error(
        src,
        format!("line {}: {}", line.no, message.into()),
        help.into(),
        Some(line.start + byte),
        "here",
    )
}

/// Collects converted edits and numbers the hunks.
#[derive(Default)]
pub(super) struct Edits {
    pub edits: Vec<Edit>,
    hunks: usize,
}

impl Edits {
    /// The next hunk's origin.
    pub(super) fn hunk(&mut self, header: &str) -> Hunk {
        self.hunks += 1;
        Hunk {
            index: self.hunks,
            header: header.to_string(),
        }
    }

    pub(super) fn push(
        &mut self,
        path: &str,
        op: Result<Op, String>,
        span: SourceSpan,
        origin: Option<Hunk>,
    ) {
        let op = match check_path_text("file_path", Some(path)) {
            Some(why) => Err(why),
            None => op,
        };
        self.edits.push(Edit {
            index: self.edits.len(),
            file_path: path.to_string(),
            op,
            span: Some(span),
            origin,
            expect_sha256: None,
            replace_existing: false,
        });
    }
}

/// A hunk's replacement, with the checks the YAML parser makes on `old_string`/`new_string`.
/// `old` may be empty only for a hunk that adds to an empty file (see [`Replace::old`]). Every
/// format converted here is line-based, so the replacement matches whole lines only
/// ([`Replace::whole_lines`]).
pub(super) fn replace_op(old: String, new: String, near: Option<Near>) -> Result<Op, String> {
    if old.replace("\r\n", "\n") == new.replace("\r\n", "\n") {
        return Err("this hunk changes nothing (its old and new text are identical)".into());
    }
    check_nul("the hunk's old text", &old)?;
    check_nul("the hunk's new text", &new)?;
    Ok(Op::Replace(Replace {
        old,
        new,
        replace_all: false,
        window: None,
        within: None,
        near,
        whole_lines: true,
        fallbacks: Vec::new(),
    }))
}

/// Content lines joined back into text: each ends with `\n`, except the last one when the patch
/// says the file has no final newline.
pub(super) fn join(lines: &[&str], final_newline: bool) -> String {
    let mut s = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    if !final_newline && !lines.is_empty() {
        s.pop();
    }
    s
}

#[cfg(test)]
mod tests;
