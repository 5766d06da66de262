//! The patch document itself, YAML or JSON, read into a [`Patch`] (the other input formats are
//! converted beside it; the checks every converter shares are in [`super::validate`]).
//!
//! YAML goes through serde-saphyr, which gives every value a location, rejects duplicate keys and
//! (with `strict_booleans`) refuses `yes`/`on` as booleans: a patch is code, not prose. JSON goes
//! through serde_json first because its syntax errors are the ones a JSON writer understands; the
//! same document is then re-read by serde-saphyr (JSON is YAML) only to recover locations for
//! per-edit diagnostics, and only when it is small enough for that to cost nothing noticeable.

use std::fmt;
use std::sync::Arc;

use miette::SourceSpan;
use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use super::validate::{check_nul, check_path_text, line_col, patch_error};
use crate::error::{Error, PatchError};
use crate::patch::{Edit, Format, LineWindow, Op, Patch, PatchSource, Replace};

mod fast;
mod json_spans;
mod lower;

use lower::lower;

/// Above this size the JSON re-read for locations is skipped: it would double the parse cost of a
/// document that is mostly one huge string, and locations are a nicety.
const SPAN_REPARSE_LIMIT: usize = 8 << 20;

/// The keys of an entry, in the order an unknown-key error lists them.
const EDIT_KEYS: &[&str] = &[
    "file_path",
    "old_string",
    "new_string",
    "replace_all",
    "start_line",
    "end_line",
    "within",
    "create",
    "delete",
    "append",
    "move_to",
    "expect_sha256",
    "edits",
];
const TOP_KEYS: &[&str] = &["message", "edits"];

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(deny_unknown_fields)]
struct RawEdit {
    file_path: Option<Sp<String>>,
    old_string: Option<Sp<String>>,
    new_string: Option<Sp<String>>,
    replace_all: Option<bool>,
    start_line: Option<Sp<i64>>,
    end_line: Option<Sp<i64>>,
    within: Option<Sp<String>>,
    create: Option<bool>,
    delete: Option<bool>,
    append: Option<bool>,
    move_to: Option<Sp<String>>,
    expect_sha256: Option<Sp<String>>,
    edits: Option<Vec<Sp<RawSubEdit>>>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(deny_unknown_fields)]
struct RawSubEdit {
    old_string: Option<Sp<String>>,
    new_string: Option<Sp<String>>,
    replace_all: Option<bool>,
    start_line: Option<Sp<i64>>,
    end_line: Option<Sp<i64>>,
    within: Option<Sp<String>>,
    expect_sha256: Option<Sp<String>>,
}

/// A value and where it stands in the patch text, as [`span_of`] reads the YAML reader's
/// location (`None` from a JSON reader, or where nobody reads it).
#[derive(Debug, Clone, Default)]
#[cfg_attr(test, derive(PartialEq))]
struct Sp<T> {
    value: T,
    span: Option<SourceSpan>,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Sp<T> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Spanned::<T>::deserialize(d)?;
        let span = span_of(&s);
        Ok(Sp {
            value: s.value,
            span,
        })
    }
}

/// The document root: a bare list of edits, or a mapping with `message` and `edits`.
#[derive(Debug)]
#[cfg_attr(test, derive(PartialEq))]
struct RawTop {
    message: Option<String>,
    edits: Vec<Sp<RawEdit>>,
}

impl<'de> Deserialize<'de> for RawTop {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = RawTop;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of edits, or a mapping with `edits` (and optionally `message`)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawTop, A::Error> {
        let mut edits = Vec::new();
        while let Some(e) = seq.next_element()? {
            edits.push(e);
        }
        Ok(RawTop {
            message: None,
            edits,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawTop, A::Error> {
        let mut message = None;
        let mut edits = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "message" => {
                    if message.is_some() {
                        return Err(de::Error::duplicate_field("message"));
                    }
                    message = Some(map.next_value::<Option<String>>()?);
                }
                "edits" => {
                    if edits.is_some() {
                        return Err(de::Error::duplicate_field("edits"));
                    }
                    edits = Some(map.next_value::<Vec<Sp<RawEdit>>>()?);
                }
                other => return Err(de::Error::unknown_field(other, TOP_KEYS)),
            }
        }
        let edits = edits.ok_or_else(|| de::Error::missing_field("edits"))?;
        Ok(RawTop {
            message: message.flatten(),
            edits,
        })
    }
}

/// Parses patch bytes: refuses non-UTF-8 and NUL bytes with their position, then [`parse`].
pub fn parse_bytes(bytes: &[u8], name: &str) -> Result<Patch, Error> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let at = e.valid_up_to();
            let (line, column) = line_col(&String::from_utf8_lossy(&bytes[..at]), at);
            return Err(Error::Patch(Box::new(PatchError {
                message: format!(
                    "the patch is not valid UTF-8 (invalid byte at line {line}, column {column})"
                ),
                help: "save the patch file as UTF-8".into(),
                source_code: None,
                span: None,
                label: String::new(),
                line: Some(line),
                column: Some(column),
            })));
        }
    };
    parse(text, name)
}

/// Parses a patch document.
pub fn parse(text: &str, name: &str) -> Result<Patch, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let source = PatchSource {
        name: name.to_string(),
        text: Arc::new(text.to_string()),
        format: if looks_like_json(text) {
            Format::Json
        } else {
            Format::Yaml
        },
    };
    if let Some(at) = text.find('\0') {
        return Err(patch_error(
            &source,
            "the patch contains a NUL byte".into(),
            "a patch is a text file; write NUL as \\u0000 only if you really mean it, and never in \
             a text file's content"
                .into(),
            Some(at),
            "NUL byte here",
        ));
    }
    if is_blank_document(text) {
        return Err(patch_error(
            &source,
            "the patch is empty".into(),
            "write a list of edits, e.g.\n- file_path: src/a.py\n  old_string: \"x = 1\"\n  new_string: \"x = 2\"\n\
             (an empty list `[]` is a valid no-op)"
                .into(),
            Some(0),
            "nothing here",
        ));
    }
    let raw = match source.format {
        Format::Json => parse_json(text, &source)?,
        _ => parse_yaml(text).map_err(|e| yaml_error(&e, &source))?,
    };
    lower(raw, source)
}

/// Reads a patch that arrives as a JSON value (an MCP call's `patch` argument), without writing
/// it out as text to parse it again. The same shape and validation as a JSON patch file; with no
/// text behind it, diagnostics carry no location.
pub fn parse_value(value: serde_json::Value, name: &str) -> Result<Patch, Error> {
    let source = PatchSource {
        name: name.to_string(),
        text: Arc::new(String::new()),
        format: Format::Json,
    };
    let raw = RawTop::deserialize(value).map_err(|e| {
        let message = e.to_string();
        let help = help_for(&message);
        patch_error(&source, message, help, None, "here")
    })?;
    lower(raw, source)
}

fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().chars().next(), Some('{') | Some('['))
}

fn is_blank_document(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---" || t == "..."
    })
}

/// How many aliases (`*name`) a patch may use, and how many parser events their expansion may
/// replay: far more than any patch that reuses a string needs, far less than an alias bomb.
const MAX_ALIASES: usize = 1_000;
const MAX_REPLAYED_EVENTS: usize = 100_000;

/// The YAML reader's options for a patch. Besides the syntax rules, its budget bounds what a
/// small document can make the reader build: nesting (64 levels), nodes, aliases and the events
/// they replay, and the total text of all scalars, aliased copies included, which may not pass
/// the patch size limit (`limit`): aliases cannot make a patch larger than a patch may be.
fn yaml_options() -> serde_saphyr::Options {
    let limit = crate::patch::limit::max_bytes().unwrap_or(crate::patch::limit::DEFAULT_MB << 20);
    serde_saphyr::options! {
        strict_booleans: true,
        budget: serde_saphyr::budget! {
            max_aliases: MAX_ALIASES,
            max_total_scalar_bytes: usize::try_from(limit).unwrap_or(usize::MAX),
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: MAX_REPLAYED_EVENTS,
        },
    }
}

fn parse_yaml(text: &str) -> Result<RawTop, serde_saphyr::Error> {
    let limit = crate::patch::limit::max_bytes().unwrap_or(crate::patch::limit::DEFAULT_MB << 20);
    if let Some(raw) = fast::parse(text, usize::try_from(limit).unwrap_or(usize::MAX)) {
        return Ok(raw);
    }
    full_yaml(text)
}

/// The full YAML reader, which also gives every error.
fn full_yaml(text: &str) -> Result<RawTop, serde_saphyr::Error> {
    serde_saphyr::from_str_with_options(text, yaml_options())
}

fn parse_json(text: &str, source: &PatchSource) -> Result<RawTop, Error> {
    match serde_json::from_str::<RawTop>(text) {
        Ok(mut raw) => {
            // Locations come from the YAML reader; JSON is YAML, so re-read it for them, unless
            // a direct walk finds the same ones.
            let limit =
                crate::patch::limit::max_bytes().unwrap_or(crate::patch::limit::DEFAULT_MB << 20);
            let limit = usize::try_from(limit)
                .unwrap_or(usize::MAX)
                .min(SPAN_REPARSE_LIMIT);
            if json_spans::locate(text, &mut raw, limit) {
                return Ok(raw);
            }
            if text.len() <= SPAN_REPARSE_LIMIT
                && let Ok(spanned) = full_yaml(text)
            {
                return Ok(spanned);
            }
            Ok(raw)
        }
        // No fallback to the (laxer) YAML reader: a document that starts like JSON and is not valid
        // JSON (a trailing comma, single quotes) is a mistake to report, not a dialect to guess.
        Err(e) => {
            let offset = offset_of(text, e.line(), e.column());
            let message = strip_location_suffix(&e.to_string());
            let help = help_for(&message);
            Err(patch_error(source, message, help, offset, "here"))
        }
    }
}

fn yaml_error(e: &serde_saphyr::Error, source: &PatchSource) -> Error {
    let message = strip_location_suffix(&e.without_snippet().to_string())
        .replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    let message = budget_message(&message).unwrap_or(message);
    let mut offset = e.location().and_then(|loc| {
        loc.span()
            .byte_offset()
            .map(|o| o as usize)
            .or_else(|| offset_of(&source.text, loc.line() as usize, loc.column() as usize))
    });
    let mut help = help_for(&message);
    // The YAML reader blames the scalar after a tab; the tab itself is what to fix.
    if message.contains("tab")
        && let Some(tab) = first_indenting_tab(&source.text)
    {
        offset = Some(tab);
        help = "YAML does not allow tabs for indentation: indent with spaces".into();
    }
    // A wrong document type (a bare scalar) comes without a location: it is the document itself.
    let offset = offset.or_else(|| first_content_offset(&source.text));
    patch_error(source, message, help, offset, "here")
}

/// The offset of the first tab in a line's leading whitespace.
fn first_indenting_tab(text: &str) -> Option<usize> {
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        if let Some(i) = line[..indent].find('\t') {
            return Some(start + i);
        }
        start += line.len();
    }
    None
}

/// The offset of the first character that is neither whitespace nor part of a comment.
fn first_content_offset(text: &str) -> Option<usize> {
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_start();
        if !body.trim().is_empty() && !body.starts_with('#') {
            return Some(start + line.len() - body.len());
        }
        start += line.len();
    }
    None
}

fn help_for(message: &str) -> String {
    if message.contains("budget breached")
        || message.contains("alias")
        || message.contains("nests YAML")
        || message.contains("more deeply nested")
    {
        "the patch goes past what a patch may hold: its text (YAML aliases `*name` included, each \
         counted in full), its nesting or its number of aliases; write the text out instead of \
         anchors (`&name`) and aliases, or split the patch"
            .into()
    } else if message.contains("unknown field") {
        format!(
            "an edit takes these keys: {}; the document root takes `message` and `edits`. \
             `patchgate schema` prints the full JSON Schema",
            EDIT_KEYS.join(", ")
        )
    } else if message.contains("duplicate") {
        "each key may appear once per edit; to make two changes, write two edits".into()
    } else if message.contains("invalid") || message.contains("expected") {
        "check the value's type: strings for file_path/old_string/new_string/move_to, true/false for \
         replace_all/create/delete/append, whole numbers for start_line/end_line (`patchgate schema`)"
            .into()
    } else if message.contains("missing field") {
        "a patch object needs `edits`: a list of edits".into()
    } else {
        "check the YAML/JSON syntax at this position; quote strings that contain `: ` or start with \
         a special character, or use a block scalar (`|`) for multi-line text"
            .into()
    }
}

/// serde's messages end with " at line L column C" (serde_json) or ", at line L, column C"
/// (serde-saphyr); the location is shown separately.
/// A breach of the YAML reader's budget ([`yaml_options`]) in words, with the limit it passed
/// (the reader's own message is a debug dump of its counters).
fn budget_message(message: &str) -> Option<String> {
    let what = message.strip_prefix("budget breached: ")?;
    let limit = crate::patch::limit::max_bytes().unwrap_or(crate::patch::limit::DEFAULT_MB << 20);
    Some(if what.starts_with("ScalarBytes") {
        format!(
            "the patch's text, with its YAML aliases expanded, is larger than {} MiB",
            limit >> 20
        )
    } else if what.starts_with("Aliases") {
        format!("the patch uses more than {MAX_ALIASES} YAML aliases")
    } else if what.starts_with("Depth") {
        "the patch nests YAML collections deeper than 64 levels".to_string()
    } else {
        format!("the patch is larger or more deeply nested than a patch may be ({what})")
    })
}

fn strip_location_suffix(msg: &str) -> String {
    // An alias's error names where it was defined and used, after where it happened.
    let cut = match msg.find(" (defined at line ") {
        Some(i) => msg[..i].rfind(" at line ").or(Some(i)),
        None => msg.rfind(" at line "),
    };
    match cut {
        Some(i) => msg[..i].trim_end_matches(',').to_string(),
        None => msg.to_string(),
    }
}

/// Byte offset of a 1-based line and (character) column; None for line 0.
fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let line_text = &text[start..];
    let line_text = &line_text[..line_text.find('\n').unwrap_or(line_text.len())];
    let col = line_text
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(line_text.len(), |(i, _)| i);
    Some(start + col)
}

fn span_of<T>(s: &Spanned<T>) -> Option<SourceSpan> {
    let loc = s.referenced;
    if loc.line() == 0 {
        return None;
    }
    let span = loc.span();
    let start = span.byte_offset()? as usize;
    let len = span.byte_len().unwrap_or(0) as usize;
    Some(SourceSpan::from((start, len)))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) const EDIT_KEYS: &[&str] = super::EDIT_KEYS;
    /// The keys of one edit of a group (`edits:` under a `file_path`), each also a key of an entry.
    pub(crate) const SUB_EDIT_KEYS: &[&str] = &[
        "old_string",
        "new_string",
        "replace_all",
        "start_line",
        "end_line",
        "within",
        "expect_sha256",
    ];

    /// `raw` with its locations taken away, to compare two readers' values: every location when
    /// `all`, else those nothing reads (all but the entries', `file_path`'s and `expect_sha256`'s).
    pub(super) fn without_spans(mut raw: super::RawTop, all: bool) -> super::RawTop {
        for e in &mut raw.edits {
            if all {
                e.span = None;
            }
            let v = &mut e.value;
            let read = [&mut v.file_path, &mut v.expect_sha256];
            let unread = [
                &mut v.old_string,
                &mut v.new_string,
                &mut v.within,
                &mut v.move_to,
            ];
            let strings = unread.into_iter().chain(read.into_iter().filter(|_| all));
            for s in strings.flatten() {
                s.span = None;
            }
            for s in [&mut v.start_line, &mut v.end_line].into_iter().flatten() {
                s.span = None;
            }
            for sub in v.edits.iter_mut().flatten() {
                if all {
                    sub.span = None;
                }
                let v = &mut sub.value;
                let read = [&mut v.expect_sha256];
                let unread = [&mut v.old_string, &mut v.new_string, &mut v.within];
                let strings = unread.into_iter().chain(read.into_iter().filter(|_| all));
                for s in strings.flatten() {
                    s.span = None;
                }
                for s in [&mut v.start_line, &mut v.end_line].into_iter().flatten() {
                    s.span = None;
                }
            }
        }
        raw
    }
}
