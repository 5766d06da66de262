//! Publishing: who the commit is by, the compare-and-swap of the ref, and the index entries of
//! the patched files afterwards.
//!
//! The ref update is the transaction's point of no return. It is a compare-and-swap
//! (`git_reference_create_matching`, under the ref's lock): if the branch is no longer where it was
//! when the patch was planned, nothing is published and the run exits 4.
//!
//! The index: in the common case (plain stage-0 file entries whose files hold what the
//! transaction wrote, an index of a form kept as it is) its entries are written directly
//! ([`super::index`]); everything else goes to the git CLI (`git update-index`), not libgit2:
//! the CLI is the one implementation that understands every index extension a user's repository
//! may carry (split index, untracked cache, fsmonitor); libgit2 rewriting the index could drop
//! them.

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
    let var = format!("GIT_{upper}_DATE");
    let sig = match env(&var) {
        // A date the user set and we cannot read must not silently become "now".
        Some(d) => match parse_git_date(&d) {
            Some(t) => Signature::new(&name, &email, &t),
            None => {
                return Err(Error::git_msg(
                    format!("{var}=`{d}` is not a date patchgate can read"),
                    "use git's internal format `<unix seconds> <+hhmm>` (e.g. `1700000000 +0100`) \
                     or ISO 8601 with a time zone (e.g. `2005-04-07T22:13:13+02:00`)",
                ));
            }
        },
        None => Signature::now(&name, &email),
    };
    sig.map_err(Error::git)
}

/// git's internal date format, `<seconds> <+hhmm>` (optionally `@<seconds>`), the one tools set,
/// or ISO 8601 with an explicit zone (`YYYY-MM-DD[T ]HH:MM:SS` then `Z`, `±HH:MM` or `±HHMM`).
fn parse_git_date(s: &str) -> Option<git2::Time> {
    let s = s.trim();
    if s.contains('-') && s.as_bytes().get(4) == Some(&b'-') {
        return parse_iso_date(s);
    }
    let mut parts = s.split_whitespace();
    let secs: i64 = parts.next()?.trim_start_matches('@').parse().ok()?;
    let offset = match parts.next() {
        Some(tz) => parse_zone(tz)?,
        None => 0,
    };
    parts
        .next()
        .is_none()
        .then(|| git2::Time::new(secs, offset))
}

/// `+hhmm`, `-hh:mm` or `Z`, in minutes east of UTC.
fn parse_zone(tz: &str) -> Option<i32> {
    if tz == "Z" {
        return Some(0);
    }
    let sign = match tz.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = tz[1..].chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let h: i32 = digits[..2].parse().ok()?;
    let m: i32 = digits[2..].parse().ok()?;
    (h < 24 && m < 60).then_some(sign * (h * 60 + m))
}

fn parse_iso_date(s: &str) -> Option<git2::Time> {
    let num = |t: &str| -> Option<i64> {
        t.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    // Date, separator, time (19 bytes), then the zone, optionally after a space.
    let (date, rest) = (s.get(..10)?, s.get(11..)?);
    if !matches!(s.as_bytes().get(10), Some(b'T' | b' ')) {
        return None;
    }
    let (time, zone) = (rest.get(..8)?, rest.get(8..)?.trim_start());
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    let ([y, mo, da], [h, mi, se]) = (d.as_slice(), t.as_slice()) else {
        return None;
    };
    let (y, mo, da, h, mi, se) = (num(y)?, num(mo)?, num(da)?, num(h)?, num(mi)?, num(se)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let offset = parse_zone(zone)?;
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((mo + 9) % 12) + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let local = days * 86_400 + h * 3600 + mi * 60 + se;
    Some(git2::Time::new(local - i64::from(offset) * 60, offset))
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
            m.push_str(&format!("- {} {}\n", f.change.name(), f.path));
        }
    }
    m
}

/// The files whose executable bit a transaction sets or clears (a created executable
/// included), with the bit: what the index must record even where `core.fileMode` is false and
/// `git update-index` would keep the entry's old bit.
pub fn exec_changes(files: &[super::journal::FileEntry]) -> Vec<(String, bool)> {
    use super::journal::State;
    let exec = |s: &State| match s {
        State::File { mode, .. } => Some(*mode != crate::fs::NEW_FILE_MODE && mode & 0o111 != 0),
        _ => None,
    };
    files
        .iter()
        .filter_map(|f| match (exec(&f.old), exec(&f.new)) {
            (Some(a), Some(b)) if a != b => Some((f.path.clone(), b)),
            (None, Some(true)) => Some((f.path.clone(), true)),
            _ => None,
        })
        .collect()
}

/// Points the index entries of `paths` at their committed content, leaving every other entry as
/// it was: after write-back that is the working-tree content, except for the `uncommitted` entries
/// of `files`, whose entry is set to the commit's blob (or removed) so that the working tree's
/// difference stays unstaged.
pub fn update_index(
    repo: &Repository,
    git_dir: &Path,
    workdir: &Path,
    paths: &[String],
    files: &[super::journal::FileEntry],
) -> Result<(), Error> {
    use super::journal::{ABSENT, State};
    if paths.is_empty() {
        super::index::reclaim(git_dir);
        return Ok(());
    }
    match super::index::update(repo, git_dir, workdir, paths, files) {
        Ok(()) => {
            crate::timing::mark("index: written directly");
            return Ok(());
        }
        Err(why) => {
            if crate::timing::enabled() {
                crate::timing::mark(&format!("index: left to git update-index: {why}"));
            }
        }
    }
    let exec = exec_changes(files);
    let kept: Vec<&super::journal::FileEntry> = files
        .iter()
        .filter(|f| f.uncommitted && paths.contains(&f.path))
        .collect();
    let from_disk: Vec<String> = paths
        .iter()
        .filter(|p| !kept.iter().any(|f| f.path == **p))
        .cloned()
        .collect();
    if !from_disk.is_empty() {
        run_update_index(git_dir, workdir, &["--add", "--remove"], &from_disk)?;
    }
    for f in kept {
        match (f.committed.as_deref(), &f.new) {
            (Some(ABSENT), _) => run_update_index(
                git_dir,
                workdir,
                &["--force-remove"],
                std::slice::from_ref(&f.path),
            )?,
            (Some(oid), State::File { .. } | State::Symlink { .. }) => {
                let mode = match &f.new {
                    State::Symlink { .. } => "120000",
                    _ if exec.iter().any(|(p, b)| *p == f.path && *b) => "100755",
                    State::File { mode, .. }
                        if *mode != crate::fs::NEW_FILE_MODE && mode & 0o111 != 0 =>
                    {
                        "100755"
                    }
                    _ => "100644",
                };
                let info = format!("{mode},{oid},{}", f.path);
                run_update_index_raw(git_dir, workdir, &["--add", "--cacheinfo", &info])?
            }
            _ => run_update_index(
                git_dir,
                workdir,
                &["--add", "--remove"],
                std::slice::from_ref(&f.path),
            )?,
        }
    }
    for (flag, bit) in [("--chmod=+x", true), ("--chmod=-x", false)] {
        let these: Vec<String> = exec
            .iter()
            .filter(|(p, b)| *b == bit && paths.contains(p))
            .map(|(p, _)| p.clone())
            .collect();
        if !these.is_empty() {
            run_update_index(git_dir, workdir, &[flag], &these)?;
        }
    }
    Ok(())
}

/// `git update-index` with arguments that name their path themselves (`--cacheinfo`).
fn run_update_index_raw(git_dir: &Path, workdir: &Path, args: &[&str]) -> Result<(), Error> {
    run_update_index_with(git_dir, workdir, args, &[], false)
}

fn run_update_index(
    git_dir: &Path,
    workdir: &Path,
    flags: &[&str],
    paths: &[String],
) -> Result<(), Error> {
    run_update_index_with(git_dir, workdir, flags, paths, true)
}

fn run_update_index_with(
    git_dir: &Path,
    workdir: &Path,
    flags: &[&str],
    paths: &[String],
    dashdash: bool,
) -> Result<(), Error> {
    let mut last = String::new();
    // Another git process may hold index.lock for a moment; wait a little before giving up.
    for attempt in 0..20 {
        let out = Cmd::new("git", workdir)
            .args(crate::repo::git_fsync_args())
            .arg(format!("--git-dir={}", git_dir.display()))
            .arg(format!("--work-tree={}", workdir.display()))
            .arg("update-index")
            .args(flags.iter())
            .args(dashdash.then_some("--"))
            .args(paths.iter())
            .env("GIT_INDEX_FILE", git_dir.join("index"))
            .timeout(Duration::from_secs(60))
            .run()
            .map_err(|e| {
                Error::git_caused(
                    format!("cannot run git update-index: {e}"),
                    "install git (the command-line tool) and make sure it is on PATH",
                    e,
                )
            })?;
        if out.success() {
            // git syncs the new index before renaming it into place, not the folder after.
            if crate::fs::fsync_enabled() {
                let _ = crate::fs::sync_dir_path(git_dir);
            }
            return Ok(());
        }
        last = out.stderr_str();
        if !last.contains("index.lock") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100 * (attempt + 1).min(5)));
    }
    Err(Error::git_msg(
        format!("git update-index failed: {}", last.trim()),
        "the commit is in place; run `patchgate recover` to bring the index in line with it",
    ))
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
        // ISO 8601 with a zone, as git reads it (`git log --format=%at %ai` of such a commit).
        let t = parse_git_date("2005-04-07T22:13:13+02:00").expect("iso");
        assert_eq!((t.seconds(), t.offset_minutes()), (1_112_904_793, 120));
        let t = parse_git_date("2005-04-07 22:13:13 -0700").expect("iso, git's %ai");
        assert_eq!((t.seconds(), t.offset_minutes()), (1_112_937_193, -420));
        let t = parse_git_date("2024-02-29T00:00:00Z").expect("leap day");
        assert_eq!(t.seconds(), 1_709_164_800);
        // Malformed input is refused, never a panic on a byte slice.
        for bad in [
            "1700000000 +1é2",
            "1700000000 +01é",
            "1700000000 0100",
            "1700000000 +0100 extra",
            "2005-04-07T22:13:13",
            "2005-13-07T22:13:13Z",
            "2005-04-07T2é:13:13Z",
            "2005-04-0",
        ] {
            assert!(parse_git_date(bad).is_none(), "{bad}");
        }
    }
}
