//! lint-staged configurations: which commands run on which files.
//!
//! What lint-staged does (read in its `lib/matchFiles.js`, `lib/generateTasks.js` and
//! `lib/groupFilesByConfig.js`), and what is implemented here:
//! - a glob key is matched against the staged file's path **relative to the configuration's
//!   directory**; files outside that directory are not matched;
//! - a key without `/` is matched against the file's **basename** (micromatch `matchBase`), so
//!   `*.js` matches `a.js` and `src/deep/a.js`; a key with `/` is matched against the whole
//!   relative path (`src/**/*.ts`, `./*.js` = files directly in the configuration's directory);
//! - dotfiles match (`dot: true`), `*` does not cross `/`, `{a,b}` and `[...]` work; a leading `!`
//!   negates. Extglobs (`!(*.test).js`) are not supported by `globset`: such a key matches
//!   nothing here;
//! - each staged file belongs to the **deepest** configuration whose directory contains it
//!   (the caller walks upward and takes the first directory that has one);
//! - a command is a string or an array of strings. In JS configurations (`*.js`, `*.mjs`,
//!   `*.cjs`) keys and commands are found by a textual scan of string literals; the file is never
//!   executed, so commands built at run time are missed.

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use super::command;

/// One lint-staged configuration.
#[derive(Debug, Default)]
pub(super) struct LintStaged {
    pub(super) entries: Vec<Entry>,
}

/// One glob key and the commands it runs.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) key: String,
    matcher: Option<Matcher>,
    /// Each command tokenized (see [`command::tokenize`]).
    pub(super) commands: Vec<Vec<String>>,
}

#[derive(Debug)]
struct Matcher {
    glob: GlobMatcher,
    base_name: bool,
    negate: bool,
}

impl Entry {
    fn new(key: &str, commands: Vec<String>) -> Entry {
        Entry {
            key: key.to_string(),
            matcher: compile(key),
            commands: commands.iter().map(|c| command::tokenize(c)).collect(),
        }
    }

    /// Does this key select `rel` (a path relative to the configuration's directory)?
    pub(super) fn matches(&self, rel: &str) -> bool {
        let Some(m) = &self.matcher else { return false };
        let subject = if m.base_name {
            rel.rsplit('/').next().unwrap_or(rel)
        } else {
            rel
        };
        m.glob.is_match(subject) != m.negate
    }
}

fn compile(key: &str) -> Option<Matcher> {
    let (negate, pattern) = match key.strip_prefix('!') {
        Some(rest) if !rest.starts_with('(') => (true, rest),
        _ => (false, key),
    };
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()?
        .compile_matcher();
    Some(Matcher {
        glob,
        base_name: !key.contains('/'),
        negate,
    })
}

/// A configuration held as a JSON-like value: `{glob: command | [command…]}`. lint-staged before
/// v10 also accepted `{linters: {…}, ignore: […]}`; its `linters` object is read the same way.
pub(super) fn from_value(v: &Value) -> Result<LintStaged, String> {
    let Some(map) = v.as_object() else {
        return Err("the lint-staged configuration is not an object".into());
    };
    if let Some(linters) = map.get("linters").filter(|l| l.is_object()) {
        return from_value(linters);
    }
    let entries = map
        .iter()
        .map(|(key, cmds)| {
            let commands = match cmds {
                Value::String(s) => vec![s.clone()],
                Value::Array(a) => a
                    .iter()
                    .filter_map(|c| c.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            };
            Entry::new(key, commands)
        })
        .collect();
    Ok(LintStaged { entries })
}

/// `.lintstagedrc` (JSON or YAML), `.lintstagedrc.json`, `.lintstagedrc.y(a)ml`.
pub(super) fn parse_rc(text: &str) -> Result<LintStaged, String> {
    let value = match serde_json::from_str::<Value>(text) {
        Ok(v) => v,
        Err(json_err) => serde_saphyr::from_str::<Value>(text)
            .map_err(|yaml_err| format!("neither JSON ({json_err}) nor YAML ({yaml_err})"))?,
    };
    from_value(&value)
}

/// A JS configuration, best effort: every string literal followed by `:` is a glob key, and the
/// string literals after it up to the next key are its commands. `${…}` in template literals
/// reads as a space.
pub(super) fn scan_js(text: &str) -> LintStaged {
    let lits = string_literals(text);
    let mut entries: Vec<(String, Vec<String>)> = Vec::new();
    for (lit, end) in lits {
        let is_key = text[end..].trim_start().starts_with(':');
        match entries.last_mut() {
            _ if is_key => entries.push((lit, Vec::new())),
            Some((_, cmds)) => cmds.push(lit),
            None => {}
        }
    }
    LintStaged {
        entries: entries
            .into_iter()
            .map(|(k, cmds)| Entry::new(&k, cmds))
            .collect(),
    }
}

/// The string literals of a JS text with the byte offset just after each, skipping comments.
fn string_literals(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            '/' if matches!(chars.peek(), Some((_, '/'))) => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if matches!(chars.peek(), Some((_, '*'))) => {
                chars.next();
                let mut prev = ' ';
                for (_, c) in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            '"' | '\'' | '`' => {
                let quote = c;
                let mut lit = String::new();
                let mut end = text.len();
                let mut depth = 0usize;
                while let Some((j, c)) = chars.next() {
                    if depth > 0 {
                        // Inside `${…}`: track braces only; its text is not part of the command.
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        continue;
                    }
                    match c {
                        '\\' => {
                            if let Some((_, e)) = chars.next() {
                                lit.push(e);
                            }
                        }
                        '$' if quote == '`' && matches!(chars.peek(), Some((_, '{'))) => {
                            chars.next();
                            depth = 1;
                            lit.push(' ');
                        }
                        c if c == quote => {
                            end = j + c.len_utf8();
                            break;
                        }
                        c => lit.push(c),
                    }
                }
                out.push((lit, end));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs<'a>(e: &Entry, commands: &[&'a str]) -> Option<&'a str> {
        e.commands
            .iter()
            .find_map(|t| command::first_run(t, commands))
    }

    fn entry(key: &str) -> Entry {
        Entry::new(key, vec!["prettier --write".into()])
    }

    #[test]
    fn a_key_without_slash_matches_the_basename() {
        let e = entry("*.{js,ts}");
        assert!(e.matches("a.ts"));
        assert!(e.matches("src/deep/a.js"));
        assert!(!e.matches("src/a.md"));
        assert!(entry("*.md").matches(".github/x.md"));
        assert!(entry("*").matches(".eslintrc"));
    }

    #[test]
    fn a_key_with_slash_matches_the_path() {
        assert!(entry("./*.js").matches("a.js"));
        assert!(!entry("./*.js").matches("src/a.js"));
        assert!(entry("src/**/*.ts").matches("src/a/b.ts"));
        assert!(entry("src/**/*.ts").matches("src/b.ts"));
        assert!(!entry("src/*.ts").matches("src/a/b.ts"));
        assert!(entry("**/*.[jt]s").matches("x/y.ts"));
    }

    #[test]
    fn negation_and_unsupported_keys() {
        assert!(entry("!*.md").matches("a.ts"));
        assert!(!entry("!*.md").matches("a.md"));
        assert!(!entry("!(*.test).js").matches("a.js"));
    }

    #[test]
    fn js_scan_finds_keys_and_commands() {
        let cfg = scan_js(
            r#"// don't run tsc here
/** @type {import('lint-staged').Configuration} */
export default {
  "*.{ts,tsx}": ["biome format --write", 'biome lint'],
  '*.md': (files) => `prettier --write ${files.join(' ')}`,
}
"#,
        );
        let keys: Vec<&str> = cfg.entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["*.{ts,tsx}", "*.md"]);
        assert_eq!(runs(&cfg.entries[0], &["biome lint"]), Some("biome lint"));
        assert_eq!(runs(&cfg.entries[1], &["prettier"]), Some("prettier"));
        assert_eq!(runs(&cfg.entries[1], &["biome format"]), None);
    }

    #[test]
    fn old_linters_form_and_bad_values() {
        let v: Value = serde_json::from_str(r#"{"linters": {"*.js": "eslint"}, "ignore": ["x"]}"#)
            .expect("json");
        let cfg = from_value(&v).expect("object");
        assert_eq!(cfg.entries.len(), 1);
        assert!(from_value(&Value::Bool(true)).is_err());
        assert!(parse_rc("'*.js': [eslint --fix]\n").is_ok());
        assert!(parse_rc("{{{").is_err());
    }
}
