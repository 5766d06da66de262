//! The shell line a codex patch often arrives in: `apply_patch <<'EOF'`, or `cd DIR && apply_patch
//! <<'EOF'`, which applies the patch from DIR (codex's own reading of such a command: one `cd`
//! with one plain argument, joined by `&&`).
//!
//! Invariants: only the heredoc line right before `*** Begin Patch` is read as a command; a `cd`
//! anywhere else in the shell text before it, or a `cd` this module cannot resolve without a shell
//! (variables, `~`, globs, escapes, several `cd`s), is an error: applying the patch from the
//! repository root instead would write the wrong files.

use super::super::{Line, error_at};
use crate::error::Error;
use crate::patch::PatchSource;

const HELP: &str = "codex reads `cd DIR && apply_patch <<'EOF'` (one `cd`, one plain directory, \
then `&&`); write the command that way, or give the paths relative to the repository root and \
drop the `cd`";

/// The directory `cd DIR && apply_patch <<'EOF'` names, from the lines before `*** Begin Patch`.
pub(super) fn workdir(src: &PatchSource, before: &[Line]) -> Result<Option<String>, Error> {
    let Some(at) = before.iter().rposition(|l| !l.head().trim().is_empty()) else {
        return Ok(None);
    };
    let line = &before[at];
    let Some(prefix) = heredoc_prefix(line.head()) else {
        return Ok(None);
    };
    // The rest of the shell text: a `cd` there moves the patch too, and codex does not read it.
    if let Some(l) = before[..at].iter().find(|l| changes_dir(l.head())) {
        return Err(error_at(
            src,
            l,
            1,
            format!(
                "`{}` changes the directory before `apply_patch`, so the patch's paths would be \
                 relative to it",
                l.head().trim()
            ),
            HELP,
        ));
    }
    let prefix = prefix.trim();
    if prefix.is_empty() {
        return Ok(None);
    }
    let dir = prefix
        .strip_suffix("&&")
        .and_then(|p| p.trim_end().strip_prefix("cd"))
        .filter(|p| p.starts_with([' ', '\t']))
        .map(str::trim)
        .and_then(plain_word);
    match dir {
        Some(d) if !d.is_empty() => Ok(Some(d)),
        _ if changes_dir(prefix) => Err(error_at(
            src,
            line,
            1,
            format!("cannot tell which directory `{prefix}` leaves the patch in"),
            HELP,
        )),
        // Another command before it (`echo … &&`): it does not move the patch.
        _ => Ok(None),
    }
}

/// The text before `apply_patch`/`applypatch` on a heredoc line (`… apply_patch <<'EOF'`).
fn heredoc_prefix(line: &str) -> Option<&str> {
    let t = line.trim_end();
    for cmd in ["apply_patch", "applypatch"] {
        let mut from = 0;
        while let Some(i) = t[from..].find(cmd) {
            let at = from + i;
            let rest = t[at + cmd.len()..].trim_start();
            let word_before = at == 0 || t[..at].ends_with([' ', '\t', '&', ';', '(']);
            if word_before && rest.starts_with("<<") {
                return Some(&t[..at]);
            }
            from = at + cmd.len();
        }
    }
    None
}

/// Whether a line of shell text runs `cd`/`pushd` (as its first word or after `&&`, `;`, `|`).
fn changes_dir(line: &str) -> bool {
    line.split(['&', ';', '|', '('])
        .map(str::trim_start)
        .any(|part| {
            ["cd", "pushd"].iter().any(|c| {
                part.strip_prefix(c)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
            })
        })
}

/// One shell word that means itself: unquoted without anything a shell expands, or quoted in
/// `'…'`, or in `"…"` without `$`, `` ` `` or `\`.
fn plain_word(w: &str) -> Option<String> {
    if let Some(inner) = w.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        return (!inner.contains('\'')).then(|| inner.to_string());
    }
    if let Some(inner) = w.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return (!inner.contains(['"', '$', '`', '\\'])).then(|| inner.to_string());
    }
    let special = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '\'' | '"'
                    | '$'
                    | '`'
                    | '\\'
                    | '~'
                    | '*'
                    | '?'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '('
                    | ')'
                    | '<'
                    | '>'
                    | '|'
                    | '&'
                    | ';'
                    | '#'
                    | '!'
            )
    };
    (!w.is_empty() && !w.chars().any(special) && w != "-").then(|| w.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heredoc_lines() {
        assert_eq!(heredoc_prefix("apply_patch <<'EOF'"), Some(""));
        assert_eq!(heredoc_prefix("applypatch <<EOF"), Some(""));
        assert_eq!(
            heredoc_prefix("cd src && apply_patch <<\"PATCH\""),
            Some("cd src && ")
        );
        assert_eq!(heredoc_prefix("run my_apply_patch <<EOF"), None);
        assert_eq!(heredoc_prefix("apply_patch is a tool"), None);
    }

    #[test]
    fn directory_words() {
        assert_eq!(plain_word("src/app").as_deref(), Some("src/app"));
        assert_eq!(plain_word("'a b'").as_deref(), Some("a b"));
        assert_eq!(plain_word("\"a b\"").as_deref(), Some("a b"));
        for w in ["~/x", "$HOME", "\"$D\"", "a*", "a\\ b", "-", "`pwd`", "a b"] {
            assert_eq!(plain_word(w), None, "{w}");
        }
        assert!(changes_dir("cd x"));
        assert!(changes_dir("echo hi; cd x && y"));
        assert!(changes_dir("pushd x"));
        assert!(!changes_dir("echo cdrom"));
        assert!(!changes_dir("abcd x"));
    }
}
