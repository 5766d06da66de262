//! patchgate's own state, checked like user input before anything acts on it.
//!
//! Journals (`txn/<id>.json`), history entries (`history/<id>.json`) and the re-run record live in
//! `.git/patchgate/`, where anyone who can write the repository can write too, and a crash or a
//! bad disk can leave anything. `recover`, `undo` and the history's pruning create, delete and
//! rename files and move refs from what these say, so each field is checked first:
//! - paths are relative, `/`-separated, without `.`/`..`/empty components, and never into `.git`;
//! - ids are `<seconds>-<6 digits>-<pid>` and the file is named after its id;
//! - object ids are 40 (SHA-1) or 64 (SHA-256) lower-case hex digits;
//! - the pin ref is exactly the one patchgate makes for that id under `refs/patchgate/`;
//! - the moved ref is `HEAD` (a commit on a detached HEAD) or a branch `refs/heads/<name>` that
//!   `git check-ref-format` accepts, and nothing else;
//! - the working tree a journal names is this repository's.
//!
//! A field that fails is an [`Error::InvalidState`] naming the file, the field and what to do; the
//! entry is never acted on.

use std::path::Path;

use super::history::Entry;
use super::journal::{FileEntry, Journal, Mode, State};
use crate::error::Error;
use crate::plan::record::record_line;
use crate::repo::rel_path;

/// A field that failed, and why.
pub struct Bad {
    pub field: String,
    pub problem: String,
}

fn bad(field: impl Into<String>, problem: impl Into<String>) -> Bad {
    Bad {
        field: field.into(),
        problem: problem.into(),
    }
}

/// The error for a file whose field failed.
pub fn error(file: &Path, b: Bad) -> Error {
    Error::InvalidState {
        file: file.to_path_buf(),
        field: b.field,
        problem: b.problem,
        help: format!(
            "this file is patchgate's own record, damaged or edited by hand, and patchgate will not \
             act on it. It holds none of your work: remove it (`rm {}`) and re-run; the repository \
             is as that transaction left it (check with `git status`)",
            file.display()
        ),
    }
}

/// A transaction or patch id: `<seconds>-<micros, 6 digits>-<pid>`.
pub fn id(s: &str) -> Result<(), String> {
    let parts: Vec<&str> = s.split('-').collect();
    let digits = |p: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit())
    };
    match parts.as_slice() {
        [secs, micros, pid]
            if digits(secs, 1..=20) && digits(micros, 6..=6) && digits(pid, 1..=10) =>
        {
            Ok(())
        }
        _ => Err(format!(
            "`{s}` is not an id of the form <seconds>-<micros>-<pid>"
        )),
    }
}

/// A full object id.
pub fn oid(s: &str) -> Result<(), String> {
    if (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        Ok(())
    } else {
        Err(format!(
            "`{s}` is not a full object id (40 or 64 hex digits)"
        ))
    }
}

/// A ref name by `git check-ref-format`'s rules.
pub fn check_ref_format(r: &str) -> Result<(), String> {
    let refuse = |why: &str| Err(format!("`{r}` is not a valid ref name ({why})"));
    if r.is_empty() || r == "@" {
        return refuse("empty or `@`");
    }
    if r.starts_with('/') || r.ends_with('/') || r.contains("//") {
        return refuse("a leading, trailing or double `/`");
    }
    if r.ends_with('.') {
        return refuse("ends with `.`");
    }
    if r.contains("..") || r.contains("@{") {
        return refuse("`..` or `@{`");
    }
    if r.bytes().any(|b| {
        b < 0x20 || b == 0x7f || matches!(b, b' ' | b'~' | b'^' | b':' | b'?' | b'*' | b'[' | b'\\')
    }) {
        return refuse("a control character, space, or one of ~^:?*[\\");
    }
    for c in r.split('/') {
        if c.starts_with('.') || c.ends_with(".lock") {
            return refuse("a component starting with `.` or ending with `.lock`");
        }
    }
    Ok(())
}

/// The ref a transaction of `mode` may move: `HEAD` (commit on a detached HEAD) or a branch.
fn moved_ref(mode: Mode, r: Option<&str>) -> Result<(), Bad> {
    match (mode, r) {
        (Mode::Worktree, None) => Ok(()),
        (Mode::Worktree, Some(r)) => Err(bad(
            "ref",
            format!("`{r}` is set for a working-tree transaction"),
        )),
        (_, None) => Err(bad("ref", "is missing for a commit")),
        (Mode::Commit, Some("HEAD")) => Ok(()),
        (_, Some(r)) => {
            let Some(name) = r.strip_prefix("refs/heads/") else {
                return Err(bad("ref", format!("`{r}` is not a branch (refs/heads/…)")));
            };
            if name.is_empty() || name == "HEAD" || name.starts_with('-') {
                return Err(bad("ref", format!("`{r}` is not a valid branch name")));
            }
            check_ref_format(r).map_err(|p| bad("ref", p))
        }
    }
}

fn opt_oid(field: &str, v: Option<&str>) -> Result<(), Bad> {
    match v {
        Some(o) => oid(o).map_err(|p| bad(field, p)),
        None => Ok(()),
    }
}

fn state(field: String, s: &State) -> Result<(), Bad> {
    match s {
        State::Missing | State::Other => Ok(()),
        State::Symlink { oid: o } => oid(o).map_err(|p| bad(format!("{field}.oid"), p)),
        State::File { oid: o, mode } => {
            oid(o).map_err(|p| bad(format!("{field}.oid"), p))?;
            if *mode == crate::fs::NEW_FILE_MODE || *mode <= 0o7777 {
                Ok(())
            } else {
                Err(bad(
                    format!("{field}.mode"),
                    format!("{mode:o} is not a file mode"),
                ))
            }
        }
    }
}

fn files(fs: &[FileEntry]) -> Result<(), Bad> {
    for (i, f) in fs.iter().enumerate() {
        rel_path(&f.path).map_err(|p| bad(format!("files[{i}].path"), p))?;
        state(format!("files[{i}].old"), &f.old)?;
        state(format!("files[{i}].new"), &f.new)?;
        opt_oid(&format!("files[{i}].committed"), f.committed.as_deref())?;
        if f.uncommitted && f.committed.is_none() {
            return Err(bad(
                format!("files[{i}].uncommitted"),
                "is set without the `committed` blob it keeps".to_string(),
            ));
        }
        if !f.uncommitted && f.committed.as_deref() == Some(super::journal::ABSENT) {
            return Err(bad(
                format!("files[{i}].committed"),
                "is the zero id, which only an `uncommitted` entry may hold".to_string(),
            ));
        }
    }
    Ok(())
}

fn named_after(file: &Path, id: &str) -> Result<(), Bad> {
    let want = format!("{id}.json");
    if file.file_name().is_some_and(|n| n == want.as_str()) {
        Ok(())
    } else {
        Err(bad("id", format!("`{id}` does not match the file's name")))
    }
}

fn moves(ms: &[super::history::Move]) -> Result<(), Bad> {
    for (i, m) in ms.iter().enumerate() {
        rel_path(&m.from).map_err(|p| bad(format!("moves[{i}].from"), p))?;
        rel_path(&m.to).map_err(|p| bad(format!("moves[{i}].to"), p))?;
    }
    Ok(())
}

/// A journal, read from `file`, for the working tree `workdir` (None: a bare repository).
pub fn journal(
    j: &Journal,
    file: &Path,
    git_dir: &Path,
    workdir: Option<&Path>,
) -> Result<(), Error> {
    let check = || -> Result<(), Bad> {
        if !(1..=super::journal::VERSION).contains(&j.version) {
            return Err(bad(
                "version",
                format!("{} is not a known version", j.version),
            ));
        }
        id(&j.id).map_err(|p| bad("id", p))?;
        named_after(file, &j.id)?;
        let pins = crate::fs::layout::txn_pin_spaces(git_dir).map(|p| format!("{p}/{}", j.id));
        if !pins.contains(&j.pin_ref) {
            return Err(bad(
                "pin_ref",
                format!(
                    "`{}` is not this transaction's pin ({})",
                    j.pin_ref, pins[0]
                ),
            ));
        }
        moved_ref(j.mode, j.refname.as_deref())?;
        opt_oid("old_oid", j.old_oid.as_deref())?;
        opt_oid("new_commit", j.new_commit.as_deref())?;
        if j.mode != Mode::Worktree && j.new_commit.is_none() {
            return Err(bad("new_commit", "is missing for a commit"));
        }
        match (j.mode, &j.workdir, workdir) {
            (Mode::Branch, None, _) => {}
            (Mode::Branch, Some(_), _) => {
                return Err(bad("workdir", "is set for a --branch transaction"));
            }
            (_, Some(w), Some(ours)) if w == ours => {}
            (_, w, _) => {
                return Err(bad(
                    "workdir",
                    format!("{w:?} is not this repository's working tree ({workdir:?})"),
                ));
            }
        }
        files(&j.files)?;
        for (i, d) in j.new_dirs.iter().enumerate() {
            rel_path(d).map_err(|p| bad(format!("new_dirs[{i}]"), p))?;
        }
        for (i, line) in j.record.iter().enumerate() {
            record_line(line).map_err(|p| bad(format!("record[{i}]"), p))?;
        }
        if let Some(m) = &j.history {
            if let Some(u) = &m.undoes {
                id(u).map_err(|p| bad("history.undoes", p))?;
            }
            moves(&m.moves)?;
        }
        Ok(())
    };
    check().map_err(|b| error(file, b))
}

/// A history entry, read from `file`.
pub fn entry(e: &Entry, file: &Path, git_dir: &Path) -> Result<(), Error> {
    let check = || -> Result<(), Bad> {
        if e.version != 1 {
            return Err(bad(
                "version",
                format!("{} is not a known version", e.version),
            ));
        }
        id(&e.patch_id).map_err(|p| bad("patch_id", p))?;
        named_after(file, &e.patch_id)?;
        let pins =
            crate::fs::layout::history_pin_spaces(git_dir).map(|p| format!("{p}/{}", e.patch_id));
        if !pins.contains(&e.pin) {
            return Err(bad(
                "pin",
                format!("`{}` is not this patch's pin ({})", e.pin, pins[0]),
            ));
        }
        if let Some(u) = &e.undoes {
            id(u).map_err(|p| bad("undoes", p))?;
        }
        moved_ref(e.mode, e.refname.as_deref())?;
        opt_oid("commit", e.commit.as_deref())?;
        opt_oid("parent", e.parent.as_deref())?;
        files(&e.files)?;
        moves(&e.moves)
    };
    check().map_err(|b| error(file, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_ids_oids_and_refs() {
        for ok in ["a", "src/a.rs", "a/.gitignore", "x.git"] {
            assert!(rel_path(ok).is_ok(), "{ok}");
        }
        for no in [
            "",
            "/etc/x",
            "../x",
            "a/../../b",
            "a//b",
            "./a",
            ".git/config",
            "a/.GIT/x",
        ] {
            assert!(rel_path(no).is_err(), "{no}");
        }
        assert!(id("1718000000-123456-4242").is_ok());
        for no in [
            "",
            "../x",
            "1-2-3",
            "1718000000-123456",
            "a-123456-1",
            "1-123456-1-1",
        ] {
            assert!(id(no).is_err(), "{no}");
        }
        assert!(oid(&"a".repeat(40)).is_ok() && oid(&"0".repeat(64)).is_ok());
        for no in ["abc", &"A".repeat(40), &"g".repeat(40), &"a".repeat(41)] {
            assert!(oid(no).is_err(), "{no}");
        }
        for ok in [
            Some("HEAD"),
            Some("refs/heads/main"),
            Some("refs/heads/bot/fix-1"),
        ] {
            assert!(moved_ref(Mode::Commit, ok).is_ok(), "{ok:?}");
        }
        for no in [
            "refs/heads/../../x",
            "refs/patchgate/txn/x",
            "refs/tags/v1",
            "refs/heads/a..b",
            "refs/heads/x.lock",
            "refs/heads/.x",
            "refs/heads/a b",
            "refs/heads/HEAD",
            "refs/heads/",
            "/etc/passwd",
        ] {
            assert!(moved_ref(Mode::Commit, Some(no)).is_err(), "{no}");
        }
        assert!(moved_ref(Mode::Branch, Some("HEAD")).is_err());
        assert!(moved_ref(Mode::Worktree, Some("refs/heads/main")).is_err());
    }
}
