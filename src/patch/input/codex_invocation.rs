//! The shell line a codex patch often arrives in: `apply_patch <<'EOF'`, or `cd DIR && apply_patch
//! <<'EOF'`, which applies the patch from DIR (codex's own reading of such a command: one `cd`
//! with one plain argument, joined by `&&`).
//!
//! Invariants: only the heredoc line right before `*** Begin Patch` is read as a command. When
//! it runs `apply_patch` in any other way than codex's two forms (another command before or
//! after it, an argument, a `cd` this module cannot resolve without a shell: variables, `~`,
//! globs, escapes, several `cd`s), or a `cd` stands anywhere else in the shell text before it, the
//! patch is refused: codex would hand such a script to a shell, and applying it from the
//! repository root instead could write the wrong files.

use super::super::{Line, error_at};
use crate::error::Error;
use crate::patch::PatchSource;

const HELP: &str = "codex reads `apply_patch <<'EOF'` and `cd DIR && apply_patch <<'EOF'` (one \
`cd`, one plain directory, then `&&`) and hands any other command to a shell; write the command \
one of those ways, or give the paths relative to the repository root without the command";

/// The heredoc line's meaning: the directory to apply from, and the delimiter that closes it.
pub(super) struct Heredoc {
    pub dir: Option<String>,
    pub delimiter: String,
}

/// The heredoc line right before `*** Begin Patch`, if there is one (`None` for prose).
pub(super) fn heredoc(src: &PatchSource, before: &[Line]) -> Result<Option<Heredoc>, Error> {
    let Some(at) = before.iter().rposition(|l| !l.head().trim().is_empty()) else {
        return Ok(None);
    };
    let line = &before[at];
    if !mentions_command(line.head()) {
        return Ok(None);
    }
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
    parse(line.head()).map(Some).ok_or_else(|| {
        error_at(
            src,
            line,
            1,
            format!(
                "`{}` is not a command codex reads as `apply_patch` (it would run it in a shell)",
                line.head().trim()
            ),
            HELP,
        )
    })
}

/// After `*** End Patch`: the heredoc's closing line must be the delimiter alone (codex does not
/// read `EOF && more`).
pub(super) fn check_end(src: &PatchSource, after: &[Line], h: &Heredoc) -> Result<(), Error> {
    let Some(l) = after.iter().find(|l| !l.head().trim().is_empty()) else {
        return Ok(());
    };
    let t = l.head().trim();
    if t != h.delimiter && t.starts_with(h.delimiter.as_str()) {
        return Err(error_at(
            src,
            l,
            1,
            format!("`{t}` runs more than `apply_patch` after the heredoc"),
            HELP,
        ));
    }
    Ok(())
}

/// `[cd DIR &&] (apply_patch|applypatch) <<[-]DELIM`, with DELIM bare or quoted.
fn parse(line: &str) -> Option<Heredoc> {
    let mut t = line.trim();
    let mut dir = None;
    if let Some(rest) = t.strip_prefix("cd")
        && rest.starts_with([' ', '\t'])
    {
        let (arg, after) = rest.split_once("&&")?;
        dir = Some(plain_word(arg.trim())?);
        t = after.trim_start();
    }
    let rest = ["apply_patch", "applypatch"]
        .iter()
        .find_map(|c| t.strip_prefix(c))?
        .trim_start()
        .strip_prefix("<<")?;
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim();
    let delimiter = match rest.chars().next()? {
        q @ ('\'' | '"') => rest.strip_prefix(q)?.strip_suffix(q)?,
        _ => rest,
    };
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    (!delimiter.is_empty() && delimiter.chars().all(word)).then(|| Heredoc {
        dir,
        delimiter: delimiter.to_string(),
    })
}

/// Whether a line runs `apply_patch`/`applypatch` with a heredoc (`<<` after the command word).
fn mentions_command(line: &str) -> bool {
    ["apply_patch", "applypatch"].iter().any(|cmd| {
        line.match_indices(cmd).any(|(at, _)| {
            let before_ok = at == 0 || line[..at].ends_with([' ', '\t', '&', ';', '|', '(']);
            let after = &line[at + cmd.len()..];
            before_ok
                && after
                    .chars()
                    .next()
                    .is_none_or(|c| c == ' ' || c == '\t' || c == '<')
                && after.contains("<<")
        })
    })
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
        let p = |l: &str| parse(l).map(|h| (h.dir, h.delimiter));
        assert_eq!(p("apply_patch <<'EOF'"), Some((None, "EOF".into())));
        assert_eq!(p("applypatch <<EOF"), Some((None, "EOF".into())));
        assert_eq!(
            p("cd src && apply_patch <<\"PATCH\""),
            Some((Some("src".into()), "PATCH".into()))
        );
        for l in [
            "echo foo && apply_patch <<'EOF'",
            "apply_patch foo <<'EOF'",
            "cd a; apply_patch <<'EOF'",
            "cd a || apply_patch <<'EOF'",
            "cd a && cd b && apply_patch <<'EOF'",
            "cd a b && apply_patch <<'EOF'",
            "apply_patch <<'EOF' && echo done",
        ] {
            assert!(p(l).is_none(), "{l}");
            assert!(mentions_command(l), "{l}");
        }
        assert!(!mentions_command("run my_apply_patch <<EOF"));
        assert!(!mentions_command("apply_patch is a tool"));
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
