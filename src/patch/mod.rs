//! The patch file: its grammar, and the typed edits it becomes.
//!
//! A patch is YAML or JSON (told apart by content: a document whose first character is `{` or `[` is
//! tried as JSON first). Grammar, in the shapes agents already emit:
//!
//! ```text
//! patch      := edit-list | { message?: string, edits: edit-list }
//! edit-list  := [ entry* ]
//! entry      := replace | group | create | delete | append | move
//! replace    := { file_path, old_string, new_string, replace_all?: bool,
//!                 start_line?: int >= 1, end_line?: int >= start_line, within?: symbol, guard? }
//! group      := { file_path, within?: symbol, guard?,
//!                 edits: [ { old_string, new_string, replace_all?, start_line?, end_line?, within?,
//!                 guard? }* ] }
//! create     := { file_path, create: true, new_string, guard? }
//! delete     := { file_path, delete: true, guard? }
//! append     := { file_path, append: true, new_string, guard? }
//! move       := { file_path, move_to, (old_string, new_string, replace_all?, start_line?, end_line?,
//!                 within?)?, guard? }
//! symbol     := a definition's name with its enclosing names, `.` or `::` between them
//! guard      := expect_sha256: 64 hex digits (the file's bytes before the patch; see docs/patch-format-guards.md)
//! ```
//!
//! A group's `within` is the default of each grouped edit that has none.
//!
//! Two layers of errors, on purpose:
//! - A document that is not a patch at all (syntax, unknown or duplicate keys, wrong types, empty
//!   document) is an [`crate::error::Error::Patch`] with the line and column in the patch file: nothing
//!   else can be said about it.
//! - A well-formed entry that asks for something invalid (empty `old_string`, `old_string` equal to
//!   `new_string`, `create` together with `delete`, a NUL byte) keeps its place in the edit list with
//!   [`Edit::op`] = `Err(reason)`, so the report can show it next to the other edits' outcomes.
//!
//! Grouped edits are flattened in order; [`Edit::index`] is the position in that flat list, which is
//! the index the report uses.
//!
//! The other input formats (codex, aider, unified diff) live in [`input`]: each is converted into
//! the same [`Edit`]s, with [`Edit::origin`] naming the hunk an edit came from and
//! [`Replace::near`] carrying the hunk's line number or anchors (used only to break ties).

pub mod input;
pub mod limit;
mod schema;

pub use input::yaml_json::{parse, parse_bytes, parse_value};
pub use schema::json_schema;

use crate::error::Error;

/// The `--input` formats (docs/input-formats.md): the patch file itself (YAML or JSON),
/// or a format agents already emit, converted into the same edits.
/// The same names serve `--input` (clap) and the MCP server's `input` argument (serde, schemars).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    /// Told from the content.
    #[default]
    Auto,
    Yaml,
    Json,
    /// codex's `*** Begin Patch` envelope.
    Codex,
    /// Aider's SEARCH/REPLACE blocks.
    Aider,
    /// A unified diff as `git diff` writes it.
    Diff,
}

/// Parses patch bytes in the given input format into edits (`Auto`: told from the content, see
/// [`input::detect`]).
pub fn parse_input(bytes: &[u8], name: &str, input: InputFormat) -> Result<Patch, Error> {
    parse_input_with(bytes, name, input, &InputOptions::default())
}

/// [`parse_input`] with the options of a unified diff (`--strip`, `--unidiff-zero`).
pub fn parse_input_with(
    bytes: &[u8],
    name: &str,
    input: InputFormat,
    opts: &InputOptions,
) -> Result<Patch, Error> {
    let limit = limit::max_bytes()?;
    if bytes.len() as u64 > limit {
        return Err(limit::too_big(name, limit));
    }
    input::parse(bytes, name, input, opts)
}

/// How a unified diff is read, as `git apply`'s options say it (docs/input-formats.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputOptions {
    /// `-p N`: the leading path components dropped from every name. `None`: as `git apply`
    /// does (one, the `a/`/`b/` prefix, for a `git diff`; guessed for a traditional `diff -u`).
    pub strip: Option<usize>,
    /// `--unidiff-zero`: a hunk without context that only adds lines is placed by its line
    /// number (else it is refused: there is no text to find it by).
    pub unidiff_zero: bool,
    /// `--directory ROOT`: prepended to every file name after stripping, as `git apply
    /// --directory` does (a diff made inside a folder of the repository).
    pub directory: Option<String>,
    /// The folder the command runs in, relative to the repository root (`""` at the root). As
    /// in `git apply`, the names of a traditional diff are relative to it; a `diff --git`'s are
    /// relative to the root.
    pub cwd_prefix: Option<String>,
}

use std::sync::Arc;

use miette::{NamedSource, SourceSpan};

/// A parsed patch.
#[derive(Debug, Clone)]
pub struct Patch {
    pub message: Option<String>,
    pub edits: Vec<Edit>,
    pub source: PatchSource,
}

/// The patch file's text, kept for diagnostics that point into it.
#[derive(Debug, Clone)]
pub struct PatchSource {
    pub name: String,
    pub text: Arc<String>,
    pub format: Format,
}

impl PatchSource {
    pub fn named_source(&self) -> NamedSource<Arc<String>> {
        NamedSource::new(self.name.clone(), Arc::clone(&self.text))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
    Codex,
    Aider,
    Diff,
}

/// One edit, after grouped edits were flattened.
#[derive(Debug, Clone)]
pub struct Edit {
    pub index: usize,
    /// As written in the patch (relative to the repository root, or absolute inside it).
    pub file_path: String,
    /// The operation, or why this entry is invalid input.
    pub op: Result<Op, String>,
    /// Where the entry (or its `file_path`) stands in the patch file, when known.
    pub span: Option<SourceSpan>,
    /// `expect_sha256` (lower-case hex): the file's bytes as read for the plan must hash to it,
    /// else the edit is `error` (kind `stale`). From the edit, or else from its group.
    pub expect_sha256: Option<String>,
    /// The hunk (or block, or chunk) of a converted input format this edit came from.
    pub origin: Option<Hunk>,
    /// codex's `*** Add File:` and `*** Move to:` replace a regular file that is already there (as
    /// codex does) instead of failing; the outcome says the file was replaced. Never set by the
    /// YAML/JSON parser.
    pub replace_existing: bool,
}

/// A hunk of a codex, aider or diff patch: its position among the patch's hunks (counted from 1,
/// in patch order) and its header line as written (`@@ -10,7 +10,8 @@ fn main`, `@@ class A`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Hunk {
    pub index: usize,
    pub header: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Replace(Replace),
    Create {
        content: String,
    },
    Delete,
    Append {
        text: String,
        /// A missing file is created with `text` (an aider block with a blank SEARCH) instead of
        /// being `not_found`.
        create: bool,
    },
    Move {
        to: String,
        replace: Option<Replace>,
    },
    /// A diff's mode change: the file's executable bit set (git's `100755`) or cleared
    /// (`100644`).
    Mode {
        executable: bool,
    },
    /// A symlink (git's mode `120000`): `old` is the target it must have now (`None`: the path
    /// must not exist), `new` the target it gets (`None`: it is removed). Targets stay inside
    /// the repository.
    Link {
        old: Option<String>,
        new: Option<String>,
    },
    /// A diff's `copy from`/`copy to`: the file as it was before the patch (as `git apply`
    /// reads a copy's source) is copied to `to`, which must not exist, with its mode.
    Copy {
        to: String,
    },
    /// A `GIT binary patch`: the whole content replaced, checked against git blob ids.
    Binary(Box<Binary>),
    /// A diff hunk without context that only adds lines, placed by its line number.
    Insert(Insert),
}

/// A `GIT binary patch` of one file (its forward hunk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    /// The git blob id (40 hex digits) the file must have now; `None`: it must not exist.
    pub old_id: Option<String>,
    /// The blob id of the result; `None`: the file is deleted.
    pub new_id: Option<String>,
    /// The forward hunk, inflated.
    pub data: BinaryData,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinaryData {
    /// The new content itself.
    Literal(Vec<u8>),
    /// A git delta (`patch-delta.c`'s format) from the old content to the new.
    Delta(Vec<u8>),
}

/// Lines added at a line number: a `@@ -N,0 +M,K @@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insert {
    /// The 1-based line the text goes before, in the file as the earlier edits left it (one past
    /// the last line: at the end).
    pub line: usize,
    pub text: String,
    /// Only an empty file takes it: a `@@ -0,0 +1,N @@` hunk without `--unidiff-zero`.
    pub only_empty: bool,
    /// A missing file is created with the text (a traditional diff that does not say whether
    /// the file is new, as `git apply` reads it).
    pub create: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replace {
    /// The exact text to replace. Empty only in a converted hunk that adds lines to an empty file:
    /// then the file must be empty (the YAML/JSON parser refuses an empty `old_string`).
    pub old: String,
    pub new: String,
    pub replace_all: bool,
    pub window: Option<LineWindow>,
    /// Search only inside this symbol's definition (`Config.parse`), trimmed, never blank.
    pub within: Option<String>,
    /// Where a converted hunk expects `old` to be. Never moves a match: it only picks one of
    /// several exact occurrences, or refuses an occurrence that is not at the end of the file.
    pub near: Option<Near>,
    /// `old` matches whole lines only: it starts at a line start and ends at a line end (or, when
    /// it ends with a line break, at the end of a file whose last line has none). Set by the
    /// converters of the line-based formats (codex, aider, diff); a YAML/JSON `old_string` is a
    /// substring.
    pub whole_lines: bool,
    /// What a converted hunk tries, in order, when `old` is not found exactly (see
    /// [`Fallback`]). Empty for a YAML/JSON edit.
    pub fallbacks: Vec<Fallback>,
}

/// The format's own tool's readings of a hunk whose old text is not in the file as it is, kept
/// where they cannot pick a wrong place: each still needs exact, whole-line, unique matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// The same replacement without lines the format's own tool treats as optional when the
    /// file lacks them: an aider SEARCH's leading blank line (REPLACE's too, if it has one), a
    /// codex chunk's trailing blank context lines. `what` names them for the report.
    Without {
        old: String,
        new: String,
        what: String,
    },
    /// `...` elision: SEARCH and REPLACE cut at their `...` lines; each non-empty SEARCH piece
    /// must be found once, after the previous piece, and is replaced by its REPLACE piece.
    /// `Err` says why the block's `...` lines cannot be read that way (told on a miss).
    Pieces(Result<Vec<(String, String)>, String>),
}

/// A converted hunk's placement hints (see [`crate::plan`]'s tie-break).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Near {
    /// The 1-based line the hunk's old text starts at, in the file as earlier hunks left it.
    pub line: Option<usize>,
    /// codex `@@` anchors, outermost first: lines the text follows, each after the previous one.
    pub anchors: Vec<String>,
    /// codex `*** End of File`: the text must end the file. A diff hunk with leading but no
    /// trailing context: among several occurrences, the one that ends the file is preferred (as
    /// `git apply` anchors it).
    pub at_eof: bool,
    /// A diff hunk from line 1: among several occurrences, the one that starts the file is
    /// preferred (as `git apply` anchors it).
    pub at_start: bool,
}

/// `start_line..=end_line`, 1-based; `end` open means "to the end of the file".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineWindow {
    pub start: usize,
    pub end: Option<usize>,
}

impl Op {
    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Replace(_) => "replace",
            Op::Create { .. } => "create",
            Op::Delete => "delete",
            Op::Append { .. } => "append",
            Op::Move { .. } => "move",
            Op::Mode { .. } => "mode",
            Op::Link { .. } => "symlink",
            Op::Copy { .. } => "copy",
            // A diff's deletion is checked by blob id too (the removals must empty the file).
            Op::Binary(b) if b.new_id.is_none() => "delete",
            Op::Binary(_) => "binary",
            Op::Insert(_) => "insert",
        }
    }
}
