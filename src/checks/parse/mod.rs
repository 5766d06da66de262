//! Parsers from the output formats several callers read to [`RawFinding`]s, one file per format,
//! each tested on output recorded from the real tool (`testdata/<tool>-<case>.txt`): cargo's JSON
//! messages, go vet's text, tsc, mypy (the package checkers and verify's steps), ESLint's JSON
//! (eslint's and xo's), and the generic JSON, SARIF and regex formats of custom checkers. A
//! parser only one checker uses lives in that checker's file (`checks::checker::<tool>`), with
//! its tests on the same recordings.
//!
//! Every parser takes the text the tool printed and returns `Result<Vec<RawFinding>, ParseError>`:
//! garbage or truncated output is a [`ParseError`] with a short reason, never a panic. Paths are
//! kept in the tool's own spelling; mapping them back to repository paths is the caller's job.

pub mod cargo;
pub mod eslint;
pub mod go;
pub mod json;
pub mod mypy;
#[cfg(test)]
pub(crate) mod recordings;
pub mod regex;
pub mod sarif;
pub mod tsc;

pub use self::cargo::cargo_json;
pub use self::eslint::eslint_json;
pub use self::go::{go_vet_json, go_vet_text, golangci_json};
pub use self::json::generic_json;
pub use self::mypy::mypy_json;
pub use self::regex::regex_lines;
pub use self::sarif::sarif;
pub use self::tsc::tsc_text;

pub(crate) use super::finding::{ParseError, RawFinding, Severity};

/// A [`ParseError`] for `tool`: "`tool`: `reason`".
pub(crate) fn error(tool: &str, reason: impl std::fmt::Display) -> ParseError {
    ParseError(format!("{tool}: {reason}"))
}

/// `line` shortened to at most 80 characters, for quoting in a [`ParseError`].
pub(crate) fn excerpt(line: &str) -> String {
    const MAX: usize = 80;
    let line = line.trim();
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// A severity word as tools spell it (case-insensitive): error, warning/warn, info/note.
pub(crate) fn severity_word(word: &str) -> Option<Severity> {
    match word.to_ascii_lowercase().as_str() {
        "error" => Some(Severity::Error),
        "warning" | "warn" => Some(Severity::Warning),
        "info" | "note" => Some(Severity::Info),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_cuts_long_lines_on_a_char_boundary() {
        let long = "é".repeat(100);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), 81);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt("  short \n"), "short");
    }

    /// Every parser on every recording and on prefixes of it (truncated output), and on every
    /// other tool's output: an `Ok` or an `Err`, never a panic.
    #[test]
    fn no_parser_panics_on_any_recording_or_truncation() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/checks/parse/testdata");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let cuts = (0..=text.len())
                .step_by(53)
                .chain([text.len()])
                .filter(|&i| text.is_char_boundary(i));
            for cut in cuts {
                let input = &text[..cut];
                let _ = eslint_json(input);
                let _ = cargo_json(input);
                let _ = go_vet_text(input);
                let _ = go_vet_json(input);
                let _ = golangci_json(input);
                let _ = tsc_text(input);
                let _ = mypy_json(input);
                let _ = sarif(input);
                let _ = generic_json(input);
                let _ = regex_lines(input, r"^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d*)");
            }
            seen += 1;
        }
        assert!(seen >= 40, "only {seen} recordings");
    }

    #[test]
    fn severity_words_are_case_insensitive() {
        assert_eq!(severity_word("ERROR"), Some(Severity::Error));
        assert_eq!(severity_word("Warn"), Some(Severity::Warning));
        assert_eq!(severity_word("note"), Some(Severity::Info));
        assert_eq!(severity_word("fatal"), None);
    }
}
