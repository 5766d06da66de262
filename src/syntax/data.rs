//! JSON, TOML and YAML: whole-document parsers that stop at the first error.
//!
//! Invariants:
//! - With one error at most per text, "new" can only mean: the patched text fails and the
//!   original parsed (or there is no original).
//! - The documents are parsed for validity only, into `IgnoredAny` (YAML: every document of a
//!   multi-document stream), so no value is built and custom tags, anchors, duplicate keys and
//!   any key type pass.
//! - JSON files that editors and tools read as JSON with comments (`tsconfig*.json`,
//!   `jsconfig*.json`, `.vscode/…`, `.devcontainer/…`, `*.jsonc`) have their comments and
//!   trailing commas blanked first, keeping every byte offset.
//! - An empty (or whitespace-only) file is accepted in every format.

use serde::de::IgnoredAny;

use super::SyntaxError;
use super::languages::Language;
use super::text::{Lines, snippet};

/// The error of the patched text, if it has one and the original had none.
pub(super) fn new_errors(
    lang: Language,
    rel: &str,
    before: Option<&str>,
    after: &str,
) -> Vec<SyntaxError> {
    let Some(error) = check(lang, rel, after) else {
        return Vec::new();
    };
    if before.is_some_and(|b| check(lang, rel, b).is_some()) {
        return Vec::new();
    }
    vec![error]
}

/// The first syntax error of `text`, or `None` when it parses.
pub(super) fn check(lang: Language, rel: &str, text: &str) -> Option<SyntaxError> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    if body.trim().is_empty() {
        return None;
    }
    let bom = text.len() - body.len();
    let lines = Lines::new(text);
    match lang {
        Language::Json => {
            let blanked;
            let input = if is_jsonc(rel) {
                blanked = blank_comments(body);
                blanked.as_str()
            } else {
                body
            };
            let e = serde_json::from_str::<IgnoredAny>(input).err()?;
            let (line, byte_col) = if e.line() == 0 {
                (1, 0)
            } else {
                // serde_json counts the column in bytes, 1-based, 0 at a line's very start.
                let shift = if e.line() == 1 { bom } else { 0 };
                (e.line(), (e.column() + shift).saturating_sub(1))
            };
            let mut message = e.to_string();
            if let Some(cut) = message.rfind(" at line ") {
                message.truncate(cut);
            }
            let eof = e.is_eof();
            if eof {
                message = format!("unexpected end of file: {message}");
            }
            Some(error_at(&lines, line, byte_col, message, eof))
        }
        Language::Toml => {
            let e = toml::from_str::<toml::Table>(body).err()?;
            let at = e.span().map_or(0, |s| s.start) + bom;
            let (line, byte_col) = lines.position(at);
            let message = e.message().trim_end().to_string();
            Some(error_at(&lines, line, byte_col, message, at >= text.len()))
        }
        Language::Yaml => {
            // Duplicate keys are valid to many YAML readers, and some formats rely on them
            // (Cirrus CI repeats `task:`): not a syntax error.
            let options = serde_saphyr::options! {
                duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
            };
            let e = serde_saphyr::from_multiple_with_options::<IgnoredAny>(body, options).err()?;
            let (line, char_col) = e
                .location()
                .map_or((1, 1), |l| (l.line() as usize, l.column() as usize));
            let message = yaml_message(&e);
            let line = line.clamp(1, lines.count());
            let line_text = lines.text(line);
            let byte_col = line_text
                .char_indices()
                .nth(char_col.saturating_sub(1))
                .map_or(line_text.len(), |(i, _)| i);
            Some(error_at(&lines, line, byte_col, message, false))
        }
        _ => None,
    }
}

fn error_at(
    lines: &Lines,
    line: usize,
    byte_col: usize,
    message: String,
    near: bool,
) -> SyntaxError {
    let line = line.clamp(1, lines.count());
    SyntaxError {
        line,
        column: lines.char_column(line, byte_col),
        message,
        snippet: snippet(lines.text(line)),
        near,
    }
}

/// The error's own words: serde-saphyr's `Display` adds a rendering of the source around it.
fn yaml_message(e: &serde_saphyr::Error) -> String {
    let full = e.to_string();
    let first = full.lines().next().unwrap_or("").trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // "… at line 3, column 5" repeats the position the error carries separately.
    let cut = first
        .rfind(" at line ")
        .filter(|&i| first[i..].contains("column"))
        .unwrap_or(first.len());
    let mut message = first[..cut].trim_end_matches([':', ' ']);
    // "line 4 column 7: …" likewise.
    if message.starts_with("line ")
        && let Some((_, rest)) = message.split_once(": ")
    {
        message = rest;
    }
    // Advice to the programmer using the parser, not to the author of the file.
    if let Some(cut) = message.find(", set DuplicateKeyPolicy") {
        message = &message[..cut];
    }
    if message.is_empty() {
        "invalid YAML".into()
    } else {
        message.to_string()
    }
}

/// JSON files that their readers take with comments and trailing commas.
fn is_jsonc(rel: &str) -> bool {
    let rel = rel.replace('\\', "/");
    let name = rel.rsplit('/').next().unwrap_or(&rel).to_ascii_lowercase();
    name.ends_with(".jsonc")
        || (name.starts_with("tsconfig") || name.starts_with("jsconfig")) && name.ends_with(".json")
        || matches!(
            name.as_str(),
            "devcontainer.json" | ".devcontainer.json" | ".eslintrc.json" | "tslint.json"
        )
        || rel.starts_with(".vscode/")
        || rel.contains("/.vscode/")
}

/// `text` with `//` and `/* */` comments and trailing commas (before `]` or `}`) replaced by
/// spaces, newlines kept, so every error position stays where it was.
fn blank_comments(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let s = text.as_bytes();
    let mut i = 0;
    // The last `,` outside strings and comments whose following tokens are only whitespace so far.
    let mut comma: Option<usize> = None;
    while i < s.len() {
        match s[i] {
            b'"' => {
                comma = None;
                i += 1;
                while i < s.len() && s[i] != b'"' && s[i] != b'\n' {
                    i += if s[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if s.get(i + 1) == Some(&b'/') => {
                while i < s.len() && s[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                let end = s[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(s.len(), |n| i + 2 + n + 2);
                for b in &mut out[i..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
            }
            b',' => {
                comma = Some(i);
                i += 1;
            }
            b']' | b'}' => {
                if let Some(c) = comma.take() {
                    out[c] = b' ';
                }
                i += 1;
            }
            c => {
                if !c.is_ascii_whitespace() {
                    comma = None;
                }
                i += 1;
            }
        }
    }
    // Only ASCII bytes outside strings were replaced by ASCII spaces, so this stays UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Option<SyntaxError> {
        check(Language::Json, "data.json", text)
    }

    #[test]
    fn json_errors_have_their_line_and_column() {
        let e = json("{\n  \"a\": 1,\n  \"b\": 2,\n}\n").expect("a trailing comma is an error");
        assert_eq!((e.line, e.column), (4, 1));
        assert_eq!(e.snippet, "}");
        assert_eq!(e.message, "key must be a string");
        let e = json("{\n  \"a\": 1\n  \"b\": 2\n}\n").expect("a missing comma is an error");
        assert_eq!(e.line, 3);
        let e = json("{\"é\": [1, 2\n").expect("unclosed");
        assert!(e.near);
        assert!(
            e.message.starts_with("unexpected end of file"),
            "{}",
            e.message
        );
        assert!(json("{} {}").is_some(), "two top-level values");
        assert!(json("{\"a\": [1, {\"b\": null}], \"c\": \"\\u00e9\"}").is_none());
        assert!(json("").is_none());
        assert!(json("\u{feff}{\"a\": 1}").is_none());
    }

    #[test]
    fn jsonc_files_may_have_comments_and_trailing_commas() {
        let text = "{\n  // comment\n  \"compilerOptions\": { \"strict\": true, /* x */ },\n  \"a\": \"http://x\",\n}\n";
        assert!(check(Language::Json, "tsconfig.json", text).is_none());
        assert!(check(Language::Json, "a/.vscode/settings.json", text).is_none());
        assert!(check(Language::Json, "x.jsonc", text).is_none());
        assert!(check(Language::Json, "package.json", text).is_some());
        let broken = "{\n  // comment\n  \"a\": 1\n  \"b\": 2\n}\n";
        let e = check(Language::Json, "tsconfig.base.json", broken).expect("still checked");
        assert_eq!(e.line, 4);
    }

    #[test]
    fn toml_errors_have_their_line_and_column() {
        let e = check(
            Language::Toml,
            "Cargo.toml",
            "[package]\nname = \"x\"\nversion = \n",
        )
        .expect("a missing value is an error");
        assert_eq!(e.line, 3);
        assert_eq!(e.snippet, "version =");
        let e =
            check(Language::Toml, "a.toml", "[a]\nx = 1\n[a]\ny = 2\n").expect("duplicate table");
        assert_eq!(e.line, 3);
        assert!(check(Language::Toml, "a.toml", "a = 1\n[b]\nc = [1, 2]\n").is_none());
    }

    #[test]
    fn yaml_errors_have_their_line_and_multiple_documents_pass() {
        let multi = "a: 1\n---\nkind: Service\nspec: !Custom {x: [1, 2]}\n---\n- &x 1\n- *x\n...\n";
        assert!(
            check(Language::Yaml, "k8s.yaml", multi).is_none(),
            "{:?}",
            check(Language::Yaml, "k8s.yaml", multi)
        );
        let e = check(
            Language::Yaml,
            "ci.yml",
            "jobs:\n  build:\n    steps: [a, b\n  test: 1\n",
        )
        .expect("an unclosed flow sequence is an error");
        assert!((3..=4).contains(&e.line), "{e:?}");
        assert!(!e.message.contains('\n'));
        let e = check(Language::Yaml, "a.yaml", "a: 1\n b: 2\n").expect("bad indentation");
        assert_eq!((e.line, e.column), (2, 3));
        assert_eq!(e.message, "mapping values are not allowed in this context");
        assert!(
            check(
                Language::Yaml,
                ".cirrus.yml",
                "task:\n  a: 1\ntask:\n  b: 2\n"
            )
            .is_none()
        );
        let e = check(Language::Yaml, "a.yaml", "a: 'x\n").expect("an unclosed quote");
        assert_eq!(e.line, 1, "{e:?}");
    }

    #[test]
    fn only_a_newly_broken_document_blocks() {
        let good = "{\"a\": 1}\n";
        let bad = "{\"a\": 1,}\n";
        assert_eq!(
            new_errors(Language::Json, "a.json", Some(good), bad).len(),
            1
        );
        assert_eq!(new_errors(Language::Json, "a.json", None, bad).len(), 1);
        let worse = "{\"a\": 1,,}\n";
        assert!(new_errors(Language::Json, "a.json", Some(bad), worse).is_empty());
        assert!(new_errors(Language::Json, "a.json", Some(bad), good).is_empty());
    }
}
