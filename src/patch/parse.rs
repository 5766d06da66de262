//! Parsing a patch document (YAML or JSON) into [`Patch`].
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

use super::{Edit, Format, LineWindow, Op, Patch, PatchSource, Replace};
use crate::error::{Error, PatchError};

/// Above this size the JSON re-read for locations is skipped: it would double the parse cost of a
/// document that is mostly one huge string, and locations are a nicety.
const SPAN_REPARSE_LIMIT: usize = 8 << 20;

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEdit {
    file_path: Option<Spanned<String>>,
    old_string: Option<Spanned<String>>,
    new_string: Option<Spanned<String>>,
    replace_all: Option<bool>,
    start_line: Option<Spanned<i64>>,
    end_line: Option<Spanned<i64>>,
    within: Option<Spanned<String>>,
    create: Option<bool>,
    delete: Option<bool>,
    append: Option<bool>,
    move_to: Option<Spanned<String>>,
    expect_sha256: Option<Spanned<String>>,
    edits: Option<Vec<Spanned<RawSubEdit>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSubEdit {
    old_string: Option<Spanned<String>>,
    new_string: Option<Spanned<String>>,
    replace_all: Option<bool>,
    start_line: Option<Spanned<i64>>,
    end_line: Option<Spanned<i64>>,
    within: Option<Spanned<String>>,
    expect_sha256: Option<Spanned<String>>,
}

/// The document root: a bare list of edits, or a mapping with `message` and `edits`.
struct RawTop {
    message: Option<String>,
    edits: Vec<Spanned<RawEdit>>,
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
                    edits = Some(map.next_value::<Vec<Spanned<RawEdit>>>()?);
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
    let limit = super::limit::max_bytes().unwrap_or(super::limit::DEFAULT_MB << 20);
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
    serde_saphyr::from_str_with_options(text, yaml_options())
}

fn parse_json(text: &str, source: &PatchSource) -> Result<RawTop, Error> {
    match serde_json::from_str::<RawTop>(text) {
        Ok(raw) => {
            // Locations come only from the YAML reader; JSON is YAML, so re-read it for them.
            if text.len() <= SPAN_REPARSE_LIMIT
                && let Ok(spanned) = parse_yaml(text)
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

pub(super) fn patch_error(
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

/// serde's messages end with " at line L column C" (serde_json) or ", at line L, column C"
/// (serde-saphyr); the location is shown separately.
/// A breach of the YAML reader's budget ([`yaml_options`]) in words, with the limit it passed
/// (the reader's own message is a debug dump of its counters).
fn budget_message(message: &str) -> Option<String> {
    let what = message.strip_prefix("budget breached: ")?;
    let limit = super::limit::max_bytes().unwrap_or(super::limit::DEFAULT_MB << 20);
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

/// A message cut to a readable length: the YAML and JSON readers quote the offending value in
/// full, and a value can be megabytes long (the report would carry it whole).
fn shorten(message: String) -> String {
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

/// A valid `expect_sha256` in lower case; a malformed one is invalid input pointing at the value.
fn expect_sha256(
    value: Option<&Spanned<String>>,
    source: &PatchSource,
) -> Result<Option<String>, Error> {
    let Some(v) = value else {
        return Ok(None);
    };
    let hex = v.value.trim();
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Some(hex.to_ascii_lowercase()));
    }
    Err(patch_error(
        source,
        format!(
            "`expect_sha256` is not a SHA-256 digest: {:?} (expected 64 hexadecimal digits)",
            v.value
        ),
        "give the lower-case hex SHA-256 of the file's bytes as you read them, e.g. from \
         `sha256sum FILE` or `files[].sha256` of the previous patchgate report"
            .into(),
        span_of(v).map(|s| s.offset()),
        "here",
    ))
}

/// Flattens groups and validates each entry's combination of keys.
fn lower(raw: RawTop, source: PatchSource) -> Result<Patch, Error> {
    let mut edits = Vec::new();
    for entry in raw.edits {
        let entry_span = span_of(&entry);
        let e = entry.value;
        let file_expect = expect_sha256(e.expect_sha256.as_ref(), &source)?;
        let file_path = e
            .file_path
            .as_ref()
            .map(|p| p.value.clone())
            .unwrap_or_default();
        let span = e.file_path.as_ref().and_then(span_of).or(entry_span);
        let path_problem =
            check_path_text("file_path", e.file_path.as_ref().map(|p| p.value.as_str()));

        if let Some(subs) = e.edits {
            // `within` on the group is every grouped edit's default scope.
            let group_within = e.within;
            let others = [
                e.old_string.is_some(),
                e.new_string.is_some(),
                e.replace_all.is_some(),
                e.start_line.is_some(),
                e.end_line.is_some(),
                e.create.is_some(),
                e.delete.is_some(),
                e.append.is_some(),
                e.move_to.is_some(),
            ];
            let group_problem = if others.iter().any(|x| *x) {
                Some(
                    "an entry with `edits` is a group: it takes only `file_path`, `edits` and \
                     `within`; put old_string/new_string inside `edits`"
                        .to_string(),
                )
            } else {
                path_problem.clone()
            };
            for sub in subs {
                let sub_span = span_of(&sub).or(span);
                let s = sub.value;
                let own_expect = expect_sha256(s.expect_sha256.as_ref(), &source)?;
                let conflict = match (&file_expect, &own_expect) {
                    (Some(a), Some(b)) if a != b => Some(
                        "`expect_sha256` of this edit differs from its group's: both describe the \
                         file as read before the patch, so give one digest"
                            .to_string(),
                    ),
                    _ => None,
                };
                let op = match group_problem.as_ref().or(conflict.as_ref()) {
                    Some(p) => Err(p.clone()),
                    None => lower_replace(
                        s.old_string,
                        s.new_string,
                        s.replace_all,
                        s.start_line,
                        s.end_line,
                        s.within.or_else(|| group_within.clone()),
                    )
                    .and_then(|r| {
                        r.ok_or_else(|| {
                            "a grouped edit needs `old_string` and `new_string`".to_string()
                        })
                    })
                    .map(Op::Replace),
                };
                edits.push(Edit {
                    index: edits.len(),
                    file_path: file_path.clone(),
                    op,
                    span: sub_span,
                    origin: None,
                    expect_sha256: own_expect.or_else(|| file_expect.clone()),
                    replace_existing: false,
                });
            }
            continue;
        }

        let op = match path_problem {
            Some(p) => Err(p),
            None => lower_single(e),
        };
        edits.push(Edit {
            index: edits.len(),
            file_path,
            op,
            span,
            origin: None,
            expect_sha256: file_expect,
            replace_existing: false,
        });
    }
    Ok(Patch {
        message: raw.message,
        edits,
        source,
    })
}

pub(super) fn check_path_text(key: &str, path: Option<&str>) -> Option<String> {
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

fn lower_single(e: RawEdit) -> Result<Op, String> {
    let create = e.create.unwrap_or(false);
    let delete = e.delete.unwrap_or(false);
    let append = e.append.unwrap_or(false);
    let moving = e.move_to.is_some();
    let kinds = [create, delete, append, moving]
        .iter()
        .filter(|x| **x)
        .count();
    if kinds > 1 {
        return Err(
            "`create`, `delete`, `append` and `move_to` exclude each other: use one per edit"
                .into(),
        );
    }
    let has_replace_keys = e.old_string.is_some()
        || e.replace_all.is_some()
        || e.start_line.is_some()
        || e.end_line.is_some()
        || e.within.is_some();

    if create || append {
        let what = if create { "create" } else { "append" };
        if has_replace_keys {
            return Err(format!(
                "`{what}` takes `new_string` only; old_string/replace_all/start_line/end_line/within belong to a replacement"
            ));
        }
        let text = e
            .new_string
            .map(|s| s.value)
            .ok_or_else(|| format!("`{what}: true` needs `new_string`: the text to {what}"))?;
        check_nul("new_string", &text)?;
        return if create {
            Ok(Op::Create { content: text })
        } else if text.is_empty() {
            Err("`append` with an empty `new_string` changes nothing; drop the edit".into())
        } else {
            Ok(Op::Append {
                text,
                create: false,
            })
        };
    }
    if delete {
        if has_replace_keys || e.new_string.is_some() {
            return Err("`delete: true` takes no other keys than `file_path`".into());
        }
        return Ok(Op::Delete);
    }
    if let Some(to) = e.move_to {
        check_path_text("move_to", Some(&to.value)).map_or(Ok(()), Err)?;
        let replace = lower_replace(
            e.old_string,
            e.new_string,
            e.replace_all,
            e.start_line,
            e.end_line,
            e.within,
        )?;
        return Ok(Op::Move {
            to: to.value,
            replace,
        });
    }
    if e.create == Some(false) || e.delete == Some(false) || e.append == Some(false) {
        // An explicit `false` is the default: fall through to a replacement.
    }
    match lower_replace(
        e.old_string,
        e.new_string,
        e.replace_all,
        e.start_line,
        e.end_line,
        e.within,
    )? {
        Some(r) => Ok(Op::Replace(r)),
        None => Err("an edit needs `old_string` and `new_string` (or one of `create`, `delete`, `append`, `move_to`)".into()),
    }
}

/// `Ok(None)` when no replacement keys are present at all.
fn lower_replace(
    old: Option<Spanned<String>>,
    new: Option<Spanned<String>>,
    replace_all: Option<bool>,
    start: Option<Spanned<i64>>,
    end: Option<Spanned<i64>>,
    within: Option<Spanned<String>>,
) -> Result<Option<Replace>, String> {
    if old.is_none()
        && new.is_none()
        && replace_all.is_none()
        && start.is_none()
        && end.is_none()
        && within.is_none()
    {
        return Ok(None);
    }
    let old = old
        .map(|s| s.value)
        .ok_or("`old_string` is required: the exact text to replace")?;
    let new = new.map(|s| s.value).ok_or(
        "`new_string` is required: the replacement text (use \"\" to delete the matched text)",
    )?;
    if old.is_empty() {
        return Err(
            "`old_string` is empty: an empty string matches everywhere; give the exact text to replace \
             (to add text to a file use `append: true`, to make a file use `create: true`)"
                .into(),
        );
    }
    // An `old_string` equal to `new_string` is invalid too, but the planner says so: it also
    // tells whether the text is in the file at all (see `plan`).
    check_nul("old_string", &old)?;
    check_nul("new_string", &new)?;
    let window = match (start.map(|s| s.value), end.map(|s| s.value)) {
        (None, None) => None,
        (s, e) => {
            let start = s.unwrap_or(1);
            if start < 1 {
                return Err(format!(
                    "`start_line` is {start}: lines are numbered from 1"
                ));
            }
            if let Some(e) = e
                && e < start
            {
                return Err(format!("`end_line` ({e}) is before `start_line` ({start})"));
            }
            Some(LineWindow {
                start: start as usize,
                end: e.map(|e| e as usize),
            })
        }
    };
    let within = match within.map(|w| w.value) {
        None => None,
        Some(w) => Some(check_within(w)?),
    };
    Ok(Some(Replace {
        old,
        new,
        replace_all: replace_all.unwrap_or(false),
        window,
        within,
        near: None,
        whole_lines: false,
        fallbacks: Vec::new(),
    }))
}

/// A `within` symbol, trimmed: it must name something.
fn check_within(w: String) -> Result<String, String> {
    check_nul("within", &w)?;
    let w = w.trim();
    if w.split("::")
        .flat_map(|p| p.split('.'))
        .all(|seg| seg.trim().is_empty())
    {
        return Err(
            "`within` names no symbol: give a function, method, class or type, nested with `.` \
             or `::` (e.g. `Config.parse`)"
                .into(),
        );
    }
    Ok(w.to_string())
}

pub(super) fn check_nul(key: &str, s: &str) -> Result<(), String> {
    if s.contains('\0') {
        Err(format!(
            "`{key}` contains a NUL byte; patchgate edits text files only"
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Patch {
        match parse(text, "p.yaml") {
            Ok(p) => p,
            Err(e) => panic!("expected a patch, got {e:?}"),
        }
    }

    fn err(text: &str) -> (String, Option<usize>, Option<usize>) {
        match parse(text, "p.yaml") {
            Ok(p) => panic!("expected an error, got {p:?}"),
            Err(Error::Patch(p)) => (p.message, p.line, p.column),
            Err(e) => panic!("unexpected error kind {e:?}"),
        }
    }

    #[test]
    fn a_message_quoting_a_huge_value_is_cut_to_a_readable_length() {
        let huge = format!(
            "invalid type: string \"{}\", expected a list",
            "z".repeat(1 << 20)
        );
        let short = shorten(huge);
        assert!(short.len() < 500, "{}", short.len());
        assert!(short.starts_with("invalid type: string \"zzz"));
        assert!(short.ends_with("\", expected a list"));
        assert!(short.contains("characters left out"));
        assert_eq!(shorten("short".into()), "short");
    }

    #[test]
    fn list_and_object_forms() {
        let p = ok("- file_path: a\n  old_string: x\n  new_string: y\n");
        assert_eq!(p.edits.len(), 1);
        assert!(p.message.is_none());
        let p = ok("message: hi\nedits:\n  - file_path: a\n    delete: true\n");
        assert_eq!(p.message.as_deref(), Some("hi"));
        assert_eq!(p.edits[0].op, Ok(Op::Delete));
    }

    #[test]
    fn groups_flatten_in_order() {
        let p = ok(
            "- file_path: a\n  edits:\n    - {old_string: x, new_string: y}\n    - {old_string: z, new_string: w, replace_all: true}\n- file_path: b\n  create: true\n  new_string: hi\n",
        );
        let idx: Vec<_> = p
            .edits
            .iter()
            .map(|e| (e.index, e.file_path.as_str()))
            .collect();
        assert_eq!(idx, vec![(0, "a"), (1, "a"), (2, "b")]);
        match &p.edits[1].op {
            Ok(Op::Replace(r)) => assert!(r.replace_all),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn within_on_edits_groups_and_moves() {
        let p = ok(concat!(
            "- {file_path: a.py, old_string: x, new_string: y, within: ' Config.parse '}\n",
            "- file_path: b.rs\n  within: Config\n  edits:\n",
            "    - {old_string: x, new_string: y}\n",
            "    - {old_string: z, new_string: w, within: 'Config::new'}\n",
            "- {file_path: c.go, move_to: d.go, old_string: x, new_string: y, within: Server.Start}\n",
        ));
        let within: Vec<Option<&str>> = p
            .edits
            .iter()
            .map(|e| match &e.op {
                Ok(Op::Replace(r)) => r.within.as_deref(),
                Ok(Op::Move {
                    replace: Some(r), ..
                }) => r.within.as_deref(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            within,
            vec![
                Some("Config.parse"),
                Some("Config"),
                Some("Config::new"),
                Some("Server.Start")
            ]
        );
    }

    #[test]
    fn within_without_a_replacement_or_a_name_is_invalid() {
        let p = ok(concat!(
            "- {file_path: a.py, old_string: x, new_string: y, within: ' :: . '}\n",
            "- {file_path: a.py, create: true, new_string: y, within: f}\n",
            "- {file_path: a.py, within: f}\n",
            "- {file_path: a.py, within: f, edits: [{old_string: x, new_string: y, within: ''}]}\n",
        ));
        let errors: Vec<String> = p
            .edits
            .iter()
            .map(|e| e.op.clone().expect_err("invalid"))
            .collect();
        assert!(
            errors[0].starts_with("`within` names no symbol"),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].contains("within belong to a replacement"),
            "{}",
            errors[1]
        );
        assert!(
            errors[2].starts_with("`old_string` is required"),
            "{}",
            errors[2]
        );
        // A grouped edit's own blank `within` is not replaced by the group's.
        assert!(
            errors[3].starts_with("`within` names no symbol"),
            "{}",
            errors[3]
        );
    }

    #[test]
    fn unknown_key_has_line_and_column() {
        let (msg, line, col) = err("- file_path: a\n  old_string: x\n  new_sting: y\n");
        assert!(msg.contains("unknown field `new_sting`"), "{msg}");
        assert_eq!((line, col), (Some(3), Some(3)));
    }

    #[test]
    fn duplicate_key_is_an_error() {
        let (msg, line, _) = err("- file_path: a\n  file_path: b\n  delete: true\n");
        assert!(msg.contains("duplicate"), "{msg}");
        assert!(!msg.contains("DuplicateKeyPolicy"), "{msg}");
        assert_eq!(line, Some(2));
    }

    #[test]
    fn yaml_11_booleans_are_refused() {
        let (msg, line, _) =
            err("- file_path: a\n  old_string: x\n  new_string: y\n  replace_all: yes\n");
        assert!(msg.contains("boolean"), "{msg}");
        assert_eq!(line, Some(4));
    }

    #[test]
    fn json_errors_have_positions() {
        let (msg, line, col) = err("[{\"file_path\": \"a\", \"bogus\": 1}]");
        assert!(msg.contains("unknown field `bogus`"), "{msg}");
        assert_eq!(line, Some(1));
        assert!(col.is_some());
        let (_, line, _) =
            err("[\n {\"file_path\": \"a\",\n  \"old_string\": \"x\" \"new_string\": \"y\"}]");
        assert_eq!(line, Some(3));
    }

    #[test]
    fn json_with_tabs_parses_and_keeps_spans() {
        let p = ok(
            "{\n\t\"edits\": [\n\t\t{\"file_path\": \"a\", \"old_string\": \"x\", \"new_string\": \"\\u00e9\"}\n\t]\n}",
        );
        assert_eq!(p.source.format, Format::Json);
        match &p.edits[0].op {
            Ok(Op::Replace(r)) => assert_eq!(r.new, "é"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn empty_documents_are_errors_but_empty_lists_are_not() {
        assert!(err("").0.contains("empty"));
        assert!(err("# only a comment\n\n").0.contains("empty"));
        assert!(ok("[]").edits.is_empty());
        assert!(ok("edits: []").edits.is_empty());
    }

    #[test]
    fn per_edit_problems_keep_their_place() {
        let p = ok(
            "- {file_path: a, old_string: '', new_string: y}\n- {file_path: a, old_string: x, new_string: x}\n- {file_path: a, create: true, delete: true}\n- {file_path: a, old_string: x, new_string: y, start_line: 5, end_line: 2}\n- {file_path: a, old_string: x}\n- {old_string: x, new_string: y}\n",
        );
        // The identical pair (edit 1) is refused by the planner, which also looks for the text.
        assert!(matches!(&p.edits[1].op, Ok(Op::Replace(r)) if r.old == r.new));
        let reasons: Vec<String> = p
            .edits
            .iter()
            .map(|e| e.op.clone().err().unwrap_or_default())
            .collect();
        assert!(reasons[0].contains("empty"));
        assert!(reasons[2].contains("exclude"));
        assert!(reasons[3].contains("before"));
        assert!(reasons[4].contains("new_string"));
        assert!(reasons[5].contains("file_path"));
    }

    #[test]
    fn nul_and_bad_utf8_are_refused_with_position() {
        let (msg, line, _) = err("- file_path: a\n  old_string: \"x\0\"\n");
        assert!(msg.contains("NUL"));
        assert_eq!(line, Some(2));
        match parse_bytes(b"- file_path: a\n  old_string: \xff\n", "p") {
            Err(Error::Patch(p)) => {
                assert!(p.message.contains("UTF-8"));
                assert_eq!(p.line, Some(2));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn escaped_nul_in_a_string_is_an_invalid_edit() {
        let p = ok("[{\"file_path\": \"a\", \"old_string\": \"x\", \"new_string\": \"\\u0000\"}]");
        assert!(p.edits[0].op.clone().unwrap_err().contains("NUL"));
    }

    #[test]
    fn move_may_carry_a_replacement() {
        let p = ok(
            "- {file_path: a.rs, move_to: b.rs, old_string: x, new_string: y}\n- {file_path: c.rs, move_to: d.rs}\n",
        );
        match &p.edits[0].op {
            Ok(Op::Move {
                to,
                replace: Some(r),
            }) => {
                assert_eq!(to, "b.rs");
                assert_eq!(r.old, "x");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            p.edits[1].op,
            Ok(Op::Move {
                to: "d.rs".into(),
                replace: None
            })
        );
    }

    #[test]
    fn expect_sha256_is_lower_cased_inherited_by_a_group_and_checked() {
        let h = "AB".repeat(32);
        let p = ok(&format!(
            "- {{file_path: a, delete: true, expect_sha256: {h}}}\n- file_path: b\n  expect_sha256: {h}\n  edits:\n    - {{old_string: x, new_string: y}}\n"
        ));
        let want = Some("ab".repeat(32));
        assert_eq!(p.edits[0].expect_sha256, want);
        assert_eq!(p.edits[1].expect_sha256, want);
        assert_eq!(p.edits[1].op.as_ref().map(|_| ()), Ok(()));
        for bad in ["abc", &"g".repeat(64), &"a".repeat(65)] {
            let (msg, line, col) = err(&format!(
                "- file_path: a\n  edits:\n    - old_string: x\n      new_string: y\n      expect_sha256: \"{bad}\"\n"
            ));
            assert!(msg.contains("expect_sha256"), "{msg}");
            assert_eq!((line, col), (Some(5), Some(22)), "{bad}");
        }
    }

    #[test]
    fn spans_point_at_the_entry() {
        let text =
            "- file_path: a\n  old_string: x\n  new_string: y\n- file_path: bb\n  delete: true\n";
        let p = ok(text);
        let span = p.edits[1].span.expect("span");
        assert_eq!(&text[span.offset()..span.offset() + 2], "bb");
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) const EDIT_KEYS: &[&str] = super::EDIT_KEYS;
}
