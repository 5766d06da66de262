//! The pin refs under `refs/patchgate/`, listed and written by name in the ref store's own files
//! rather than through libgit2: libgit2's reference iterator opens and reads every loose ref it
//! lists; its ref writes run one after another on the thread that asks, and do not sync the
//! parent of a folder they make (a repository's first pin makes `refs/patchgate/` and its
//! namespaces: a power loss could take the pin with the folder).
//!
//! Invariants: a ref is written as git writes a loose ref (an exclusive `<name>.lock`, the id and
//! a newline, synced, renamed over `<name>`, its folder synced; a held lock is an error, never
//! waited for or broken); only names under `refs/patchgate/` that git accepts are listed or
//! written; packed refs are read, never rewritten (a loose ref takes precedence over a packed one
//! of the same name, as in git).

use std::io::Write;
use std::path::Path;

use git2::{Oid, Repository};

/// The pin refs under each namespace of `prefixes`, by name: the loose ones from their folder,
/// the packed ones from `packed-refs` (a listing that fails counts as none; a name git would
/// refuse is left out). Read here rather than through libgit2's reference iterator, which
/// opens and reads every loose ref it lists, names only or not: the history's fifty pins were
/// two hundred system calls on every apply, a tenth of a one-edit patch's run.
pub fn pins_in(repo: &Repository, prefixes: &[String]) -> Vec<String> {
    let common = repo.commondir();
    let packed = std::fs::read(common.join("packed-refs")).unwrap_or_default();
    let mut names = std::collections::BTreeSet::new();
    for prefix in prefixes {
        loose_refs(&common.join(prefix), prefix, &mut names);
        // `<id> <name>` lines (`#` starts the header, `^` a peeled tag's line): only the lines
        // naming a ref under the prefix are looked at, however many refs the file holds.
        let under = format!(" {prefix}/");
        for at in memchr::memmem::find_iter(&packed, under.as_bytes()) {
            let line_start = memchr::memrchr(b'\n', &packed[..at]).map_or(0, |i| i + 1);
            let end = memchr::memchr(b'\n', &packed[at..]).map_or(packed.len(), |i| at + i);
            let Ok(line) = std::str::from_utf8(&packed[line_start..end]) else {
                continue;
            };
            if let Some((id, name)) = line.trim_end_matches('\r').split_once(' ')
                && id.len() == 40
                && id.bytes().all(|b| b.is_ascii_hexdigit())
                && name.starts_with(&under[1..])
            {
                names.insert(name.to_string());
            }
        }
    }
    names
        .into_iter()
        .filter(|n| super::validate::check_ref_format(n).is_ok())
        .collect()
}

/// The loose refs in `folder` (the ref namespace `name`) and its subfolders, by name; lock files
/// are not refs.
fn loose_refs(folder: &Path, name: &str, out: &mut std::collections::BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for e in entries.flatten() {
        let (Ok(kind), Some(file)) = (e.file_type(), e.file_name().to_str().map(str::to_string))
        else {
            continue;
        };
        let full = format!("{name}/{file}");
        if kind.is_dir() {
            loose_refs(&e.path(), &full, out);
        } else if kind.is_file() && !file.ends_with(".lock") {
            out.insert(full);
        }
    }
}

/// Writes the ref `name` (under `refs/patchgate/`) at `target` in the ref store under
/// `common_dir`, replacing any loose value it had. No reflog is written: git keeps none for refs
/// outside `refs/heads/`, `refs/remotes/` and `refs/notes/` unless `core.logAllRefUpdates` is
/// `always`, and a pin's history is of no use to anyone.
pub fn write_pin(common_dir: &Path, name: &str, target: Oid) -> std::io::Result<()> {
    if !name.starts_with(crate::fs::layout::REFS)
        || super::validate::check_ref_format(name).is_err()
    {
        return Err(std::io::Error::other(format!(
            "`{name}` is not a patchgate pin"
        )));
    }
    let path = common_dir.join(name);
    let folder = path.parent().unwrap_or(common_dir);
    // The folders made here (the namespace's, on a repository's first pin), deepest first.
    let mut made = Vec::new();
    let mut missing = Some(folder);
    while let Some(f) = missing.filter(|f| !f.is_dir()) {
        made.push(f);
        missing = f.parent();
    }
    std::fs::create_dir_all(folder)?;
    let sync = crate::fs::fsync_enabled();
    let lock = path.with_file_name(format!(
        "{}.lock",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)?;
    let written = (|| {
        f.write_all(format!("{target}\n").as_bytes())?;
        if sync {
            f.sync_all()?;
        }
        drop(f);
        std::fs::rename(&lock, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&lock);
        return Err(e);
    }
    if sync {
        crate::fs::sync_dir_path(folder)?;
        // Each folder made here must be named durably in its own parent too.
        for parent in made.iter().filter_map(|f| f.parent()) {
            crate::fs::sync_dir_path(parent)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::test_git::git_ok;

    /// A repository with one commit, for git to witness the refs.
    fn repo_with_a_commit() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        git_ok(d, &["init", "-q"], &[]);
        std::fs::write(d.join("f"), "f\n").expect("write");
        git_ok(d, &["add", "f"], &[]);
        git_ok(d, &["commit", "-qm", "c"], &who());
        dir
    }

    /// An author and committer for git.
    fn who() -> Vec<(&'static str, &'static std::ffi::OsStr)> {
        [
            ("GIT_AUTHOR_NAME", "t"),
            ("GIT_AUTHOR_EMAIL", "t@localhost"),
            ("GIT_COMMITTER_NAME", "t"),
            ("GIT_COMMITTER_EMAIL", "t@localhost"),
        ]
        .into_iter()
        .map(|(k, v)| (k, std::ffi::OsStr::new(v)))
        .collect()
    }

    /// The pins listed by name are the refs git lists under the same namespaces: loose (nested
    /// too) and packed, a lock file and a ref outside the namespaces left out, whatever else
    /// `packed-refs` holds (an annotated tag's peeled line, a name sharing the prefix's start).
    #[test]
    fn pins_are_the_refs_git_lists_loose_and_packed() {
        let dir = repo_with_a_commit();
        let d = dir.path();
        git_ok(d, &["tag", "-a", "-m", "t", "v1"], &who());
        for r in [
            "refs/patchgate/history/k/1-1-1",
            "refs/patchgate/history/k/2-2-2",
        ] {
            git_ok(d, &["update-ref", r, "HEAD"], &[]);
        }
        git_ok(
            d,
            &["update-ref", "refs/patchgate/history/kk/9-9-9", "HEAD"],
            &[],
        );
        git_ok(d, &["pack-refs", "--all"], &[]);
        for r in [
            "refs/patchgate/history/k/3-3-3",
            "refs/patchgate/history/k/sub/4-4-4",
        ] {
            git_ok(d, &["update-ref", r, "HEAD"], &[]);
        }
        std::fs::write(d.join(".git/refs/patchgate/history/k/5-5-5.lock"), "x").expect("lock");
        let repo = Repository::open(d).expect("open");
        let spaces = [
            "refs/patchgate/history/k".to_string(),
            "refs/patchgate/txn/k".into(),
        ];
        let listed = pins_in(&repo, &spaces);
        let out = std::process::Command::new("git")
            .args([
                "for-each-ref",
                "--format=%(refname)",
                "refs/patchgate/history/k/",
                "refs/patchgate/txn/k/",
            ])
            .current_dir(d)
            .output()
            .expect("git");
        let git: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(listed, git);
        assert_eq!(listed.len(), 4, "{listed:?}");
    }

    /// A pin written here is the ref git reads, in a folder made for it or not; a held lock is an
    /// error and stays; a name outside `refs/patchgate/` is refused.
    #[test]
    fn a_pin_written_by_name_is_the_ref_git_reads() {
        let dir = repo_with_a_commit();
        let d = dir.path();
        let repo = Repository::open(d).expect("open");
        let head = repo.head().expect("head").target().expect("oid");
        let common = repo.commondir().to_path_buf();
        for name in [
            "refs/patchgate/history/k/1-1-1",
            "refs/patchgate/history/k/2-2-2",
        ] {
            write_pin(&common, name, head).expect("written");
            let out = std::process::Command::new("git")
                .args(["rev-parse", name])
                .current_dir(d)
                .output()
                .expect("git");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout).trim(),
                head.to_string()
            );
        }
        // Replaced in place: the same name at another commit.
        let tree = repo
            .find_commit(head)
            .expect("commit")
            .tree()
            .expect("tree");
        let sig = git2::Signature::now("t", "t@localhost").expect("sig");
        let other = repo
            .commit(None, &sig, &sig, "o", &tree, &[])
            .expect("commit");
        write_pin(&common, "refs/patchgate/history/k/1-1-1", other).expect("replaced");
        assert_eq!(
            repo.refname_to_id("refs/patchgate/history/k/1-1-1")
                .expect("ref"),
            other
        );
        let lock = common.join("refs/patchgate/history/k/3-3-3.lock");
        std::fs::write(&lock, "").expect("lock");
        assert!(write_pin(&common, "refs/patchgate/history/k/3-3-3", head).is_err());
        assert!(lock.exists(), "someone's lock was broken");
        assert!(
            repo.refname_to_id("refs/patchgate/history/k/3-3-3")
                .is_err()
        );
        assert!(write_pin(&common, "refs/heads/main", head).is_err());
        assert!(write_pin(&common, "refs/patchgate/bad..name", head).is_err());
    }
}
