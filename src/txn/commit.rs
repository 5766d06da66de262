//! Publishing: who the commit is by, the compare-and-swap of the ref, and the index entries of
//! the patched files afterwards.
//!
//! The ref update is the transaction's point of no return. It is a compare-and-swap
//! (`git_reference_create_matching`, under the ref's lock): if the branch is no longer where it was
//! when the patch was planned, nothing is published and the run exits 4.
//!
//! The index is updated with the git CLI (`git update-index`), not libgit2: the CLI is the one
//! implementation that understands every index extension a user's repository may carry (split
//! index, untracked cache, fsmonitor); libgit2 rewriting the index could drop them.

use std::path::Path;
use std::time::Duration;

use git2::{Oid, Repository, Signature};

use crate::error::Error;
use crate::runner::Cmd;

/// Author or committer from the usual git sources: `GIT_{AUTHOR,COMMITTER}_{NAME,EMAIL,DATE}`, then
/// `author.*`/`committer.*` and `user.*` in the configuration, then `EMAIL`.
pub fn identity(repo: &Repository, role: &str) -> Result<Signature<'static>, Error> {
    let upper = role.to_ascii_uppercase();
    let config = repo.config().ok().and_then(|mut c| c.snapshot().ok());
    let from_config = |keys: &[String]| {
        keys.iter()
            .find_map(|k| config.as_ref().and_then(|c| c.get_string(k).ok()))
            .filter(|v| !v.trim().is_empty())
    };
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let name = env(&format!("GIT_{upper}_NAME"))
        .or_else(|| from_config(&[format!("{role}.name"), "user.name".into()]));
    let email = env(&format!("GIT_{upper}_EMAIL"))
        .or_else(|| from_config(&[format!("{role}.email"), "user.email".into()]))
        .or_else(|| env("EMAIL"));
    let (Some(name), Some(email)) = (name, email) else {
        return Err(Error::Identity {
            role: role.to_string(),
        });
    };
    let sig = match env(&format!("GIT_{upper}_DATE")).and_then(|d| parse_git_date(&d)) {
        Some(t) => Signature::new(&name, &email, &t),
        None => Signature::now(&name, &email),
    };
    sig.map_err(Error::git)
}

/// git's internal date format, `<seconds> <+hhmm>` (optionally `@<seconds>`), the one tools set.
fn parse_git_date(s: &str) -> Option<git2::Time> {
    let mut parts = s.split_whitespace();
    let secs: i64 = parts.next()?.trim_start_matches('@').parse().ok()?;
    let offset = match parts.next() {
        Some(tz) => {
            let sign = if tz.starts_with('-') { -1 } else { 1 };
            let digits = tz.trim_start_matches(['+', '-']);
            if digits.len() != 4 {
                return None;
            }
            let h: i32 = digits[..2].parse().ok()?;
            let m: i32 = digits[2..].parse().ok()?;
            sign * (h * 60 + m)
        }
        None => 0,
    };
    Some(git2::Time::new(secs, offset))
}

/// The ref a commit on the current HEAD moves, and where it points now (`None`: unborn).
pub fn head_target(repo: &Repository) -> Result<(String, Option<Oid>), Error> {
    let head = repo.find_reference("HEAD").map_err(Error::git)?;
    match head.symbolic_target() {
        Some(name) => {
            let name = name.to_string();
            let oid = repo.refname_to_id(&name).ok();
            Ok((name, oid))
        }
        // Detached: HEAD itself moves.
        None => Ok(("HEAD".to_string(), head.target())),
    }
}

/// Moves `refname` from `old` to `new`, atomically; `old = None` means "must not exist yet".
pub fn compare_and_swap(
    repo: &Repository,
    refname: &str,
    new: Oid,
    old: Option<Oid>,
    msg: &str,
) -> Result<(), Error> {
    let result = match old {
        Some(o) => repo
            .reference_matching(refname, new, true, o, msg)
            .map(|_| ()),
        None => repo.reference(refname, new, false, msg).map(|_| ()),
    };
    result.map_err(|e| match e.code() {
        git2::ErrorCode::Modified
        | git2::ErrorCode::Exists
        | git2::ErrorCode::Locked
        | git2::ErrorCode::NotFound => Error::RefMoved {
            refname: refname.to_string(),
            detail: e.message().to_string(),
        },
        _ => Error::git(e),
    })
}

/// A default commit message when neither `-m` nor the patch gives one.
pub fn summary_message(files: &[crate::plan::FileChange]) -> String {
    let mut m = match files {
        [one] => format!("patchgate: update {}\n", one.path),
        _ => format!("patchgate: update {} files\n", files.len()),
    };
    if files.len() > 1 {
        m.push('\n');
        for f in files {
            m.push_str(&format!(
                "- {} {}\n",
                crate::report::change_name(f.change),
                f.path
            ));
        }
    }
    m
}

/// Points the index entries of `paths` at their working-tree content (after write-back, that is the
/// committed content), leaving every other entry as it was.
pub fn update_index(git_dir: &Path, workdir: &Path, paths: &[String]) -> Result<(), Error> {
    if paths.is_empty() {
        return Ok(());
    }
    let mut last = String::new();
    // Another git process may hold index.lock for a moment; wait a little before giving up.
    for attempt in 0..20 {
        let out = Cmd::new("git", workdir)
            .arg(format!("--git-dir={}", git_dir.display()))
            .arg(format!("--work-tree={}", workdir.display()))
            .args(["update-index", "--add", "--remove", "--"])
            .args(paths.iter())
            .env("GIT_INDEX_FILE", git_dir.join("index"))
            .timeout(Duration::from_secs(60))
            .run()
            .map_err(|e| Error::Git {
                message: format!("cannot run git update-index: {e}"),
                help: "install git (the command-line tool) and make sure it is on PATH".into(),
            })?;
        if out.success() {
            return Ok(());
        }
        last = out.stderr_str();
        if !last.contains("index.lock") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100 * (attempt + 1).min(5)));
    }
    Err(Error::Git {
        message: format!("git update-index failed: {}", last.trim()),
        help: "the commit is in place; run `patchgate recover` to bring the index in line with it"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_dates() {
        let t = parse_git_date("1700000000 +0130").expect("date");
        assert_eq!((t.seconds(), t.offset_minutes()), (1_700_000_000, 90));
        let t = parse_git_date("@1700000000 -0500").expect("date");
        assert_eq!(t.offset_minutes(), -300);
        assert!(parse_git_date("yesterday").is_none());
    }
}
