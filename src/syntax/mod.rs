//! The built-in syntax gate: every edited Python, JavaScript, TypeScript/TSX, Rust and Go file
//! is parsed with a tree-sitter grammar compiled in, every JSON, TOML and YAML file with a
//! document parser, and Python indentation is checked on top (tree-sitter accepts indentation
//! errors). Needs no tool installed and runs in-process.
//!
//! Owns: the extension → language choice ([`Language`]), the per-thread parsers, and the rule
//! that only errors the patch introduced count ([`new_errors`]); and, from the same parsers,
//! the definitions and identifier uses of a file ([`symbols`]) for the dangling-reference check
//! and symbol-scoped edits, and the relative modules a JS/TS file imports ([`imports`]). Stands alone: nothing here depends on the checker pipeline, which
//! decides what to do with the errors.

mod data;
mod errors;
pub mod imports;
mod indent;
pub mod languages;
pub mod lexer;
pub mod symbols;
mod text;
pub mod trees;

pub use errors::new_errors;
pub use languages::Language;

/// A syntax error the patch introduced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line in the patched text.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    pub message: String,
    /// The offending source line, trimmed, cut to about 120 characters.
    pub snippet: String,
    /// The position is where the parser gave up (a missing `}` at the end of the file, a file
    /// whose whole structure is lost), not necessarily where the mistake is.
    pub near: bool,
}
