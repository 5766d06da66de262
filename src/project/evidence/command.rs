//! Does a shell command line run a given tool? A word match on the command line's tokens.
//!
//! The line is split at whitespace and at shell operators (`&&`, `||`, `;`, `|`, `&`, parentheses,
//! redirections, backquotes); quote characters are dropped, so the command inside
//! `sh -c "prettier --check ."` is seen too. A tool command such as `ruff format` matches where its
//! words appear as consecutive tokens of one command. Each token is reduced to what would be
//! looked up on PATH: `node_modules/.bin/prettier` → `prettier`, `prettier@3.2.1` → `prettier`,
//! `@biomejs/biome` → `biome`. A token is never matched as a substring, so `eslint-config-foo`
//! does not run `eslint`, nor `--prettier` `prettier`.
//!
//! Invariant: a tokenized line is a list of words where the empty string separates commands;
//! no word is empty.

/// The normalized words of a command line, `""` separating commands.
pub(crate) fn tokenize(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            let w = normalize(word);
            if !w.is_empty() {
                out.push(w);
            }
            word.clear();
        }
    };
    for c in line.chars() {
        match c {
            '\'' | '"' => {}
            c if c.is_whitespace() => flush(&mut word, &mut out),
            ';' | '|' | '&' | '(' | ')' | '<' | '>' | '`' | '$' => {
                flush(&mut word, &mut out);
                if out.last().is_some_and(|w| !w.is_empty()) {
                    out.push(String::new());
                }
            }
            c => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

/// What a shell would look the token up as: the last path component, without an npm
/// `@version` suffix.
fn normalize(token: &str) -> String {
    let base = token.rsplit('/').next().unwrap_or(token);
    // `@scope/name` already lost its scope above; a remaining `@` at index > 0 is a version.
    let base = match base.char_indices().skip(1).find(|&(_, c)| c == '@') {
        Some((i, _)) => &base[..i],
        None => base,
    };
    base.to_string()
}

/// Does the tokenized line run `command` (one or more words, e.g. `"biome format"`)?
pub(super) fn runs(tokens: &[String], command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    if words.is_empty() || tokens.len() < words.len() {
        return false;
    }
    tokens
        .windows(words.len())
        .any(|w| w.iter().zip(&words).all(|(t, c)| t == c))
}

/// The first of `commands` that the tokenized line runs.
pub(super) fn first_run<'a>(tokens: &[String], commands: &[&'a str]) -> Option<&'a str> {
    commands.iter().copied().find(|c| runs(tokens, c))
}

/// Names of package.json scripts the line may call: `npm run X`, `npm run-script X`,
/// `pnpm [run] X`, `yarn [run] X`, `bun run X` (options between are skipped). Names that are no
/// script (`pnpm install`) are filtered out by the caller, which knows the scripts.
pub(super) fn script_refs(tokens: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if !matches!(t.as_str(), "npm" | "pnpm" | "yarn" | "bun") {
            continue;
        }
        let mut rest = tokens[i + 1..]
            .iter()
            .take_while(|w| !w.is_empty())
            .filter(|w| !w.starts_with('-'));
        match rest.next().map(String::as_str) {
            Some("run" | "run-script") => out.extend(rest.next().map(String::as_str)),
            Some(name) => out.push(name),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str, cmd: &str) -> bool {
        runs(&tokenize(line), cmd)
    }

    #[test]
    fn words_match_as_commands() {
        assert!(run("xo && ava", "xo"));
        assert!(run("npx prettier --write .", "prettier"));
        assert!(run("./node_modules/.bin/prettier --check src", "prettier"));
        assert!(run("npx prettier@3.2.1 -c .", "prettier"));
        assert!(run("npx @biomejs/biome format --write .", "biome format"));
        assert!(run("tsc&&eslint .", "eslint"));
        assert!(run("sh -c \"ruff format --check .\"", "ruff format"));
        assert!(run("python -m black --check .", "black"));
    }

    #[test]
    fn substrings_and_options_do_not_match() {
        assert!(!run("eslint-config-foo", "eslint"));
        assert!(!run("xo --prettier", "prettier"));
        assert!(!run("prettier-package-json --write", "prettier"));
        assert!(!run("biome check .", "biome format"));
        assert!(!run("ruff check . && format", "ruff format"));
        assert!(!run("", "ruff"));
    }

    #[test]
    fn script_references() {
        let refs = |l: &str| -> Vec<String> {
            script_refs(&tokenize(l))
                .into_iter()
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            refs("npm run --silent format:md && yarn lint"),
            ["format:md", "lint"]
        );
        assert_eq!(refs("pnpm -r fmt"), ["fmt"]);
        assert_eq!(refs("bun run check; npm"), ["check"]);
        assert!(refs("prettier --write").is_empty());
    }

    #[test]
    fn separators_split_commands() {
        assert_eq!(tokenize("a && b;c"), ["a", "", "b", "", "c"]);
        assert_eq!(tokenize("  "), Vec::<String>::new());
    }
}
