//! Committed blobs made the way `git add` makes them: through the repository's `.gitattributes`
//! conversions (`text` / `eol` / `crlf` and `core.autocrlf`, `ident`, `working-tree-encoding`)
//! and clean filters (`filter=<driver>`: git-lfs, git-crypt, secret scrubbers).
//!
//! The working-tree bytes of a patched file are what the user sees; the blob a commit records
//! for it is what `git add` would store, or `git status` shows the file modified right after the
//! commit (and a scrubbed secret or an LFS object's content lands in the history). libgit2 has no
//! external filter drivers, so the conversion is git's own: `git hash-object -w --path=<path>
//! --stdin`, which applies exactly the filters `git add <path>` applies (and, for LFS, stores the
//! object under `.git/lfs/objects` as `git add` does).
//!
//! Invariants: the decision is made in-process (which attributes files exist, then libgit2's
//! attribute lookup and the config), so a repository without such attributes never starts a
//! process here and, without any attributes file, makes no lookup either; a path that needs filtering
//! costs one `git hash-object` (run in parallel for several), through the runner, with an
//! explicit working directory and the inherited `GIT_*` location variables scrubbed. Only the
//! committed tree uses these blobs: the journal and the undo history keep the working-tree
//! bytes' blobs, which are what recovery and undo write back.

use std::path::Path;
use std::time::Duration;

use git2::{AttrCheckFlags, AttrValue, Oid, Repository};

use crate::error::Error;
use crate::runner::Cmd;

/// libgit2's `GIT_ATTR_CHECK_INCLUDE_HEAD`: also read `.gitattributes` from HEAD's tree (where a
/// bare repository's attributes are, as git reads them since 2.42); git2 has no name for it.
const INCLUDE_HEAD: u32 = 1 << 3;

/// Whether `git add` could store something else than `bytes` for `path`, by the attributes of
/// `repo` read with `flags`. False negatives would commit unfiltered content, so anything that
/// may convert says yes; git then decides.
fn may_convert(
    repo: &Repository,
    flags: AttrCheckFlags,
    autocrlf: bool,
    path: &str,
    bytes: &[u8],
) -> bool {
    let attr = |name: &str| {
        AttrValue::from_bytes(
            repo.get_attr_bytes(Path::new(path), name, flags)
                .ok()
                .flatten(),
        )
    };
    let named = |v: AttrValue| matches!(v, AttrValue::String(_) | AttrValue::Bytes(_));
    if named(attr("filter")) || named(attr("working-tree-encoding")) {
        return true;
    }
    if matches!(attr("ident"), AttrValue::True) {
        return true;
    }
    // End-of-line conversion on the way in only ever turns CRLF into LF.
    if !bytes.contains(&b'\r') {
        return false;
    }
    let set = |v: AttrValue| !matches!(v, AttrValue::Unspecified | AttrValue::False);
    autocrlf || set(attr("text")) || set(attr("eol")) || set(attr("crlf"))
}

/// Which attributes files could speak about the paths being committed.
struct Sources {
    /// A `.gitattributes` in the working tree, the index or HEAD's tree in one of their
    /// folders, `info/attributes`, the user's (`core.attributesFile`, else
    /// `$XDG_CONFIG_HOME/git/attributes`) or the system's. Without one, only `core.autocrlf`
    /// converts anything, and libgit2's lookups (some 50 µs each) are skipped.
    any: bool,
    /// No such folder has a `.gitattributes` in the index or in HEAD's tree that is not in the
    /// working tree: `git add` then reads the working tree's files only (it falls back to the
    /// index's copy of a missing one), and so may the lookups, without libgit2 loading the
    /// index (at 9,000 files, 8 ms of a 5-file commit; at 50,000, some 40).
    worktree_only: bool,
}

impl Sources {
    fn find(repo: &Repository, git_dir: &Path, paths: &[&str]) -> Sources {
        let mut dirs: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
        for p in paths {
            dirs.insert("");
            for (i, c) in p.char_indices() {
                if c == '/' {
                    dirs.insert(&p[..i]);
                }
            }
        }
        let workdir = repo.workdir();
        let (on_disk, missing): (Vec<String>, Vec<String>) = dirs
            .iter()
            .map(|d| {
                if d.is_empty() {
                    ".gitattributes".to_string()
                } else {
                    format!("{d}/.gitattributes")
                }
            })
            .partition(|rel| workdir.is_some_and(|w| w.join(rel).symlink_metadata().is_ok()));
        let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
        let in_head = missing.iter().any(|rel| {
            head.as_ref()
                .is_some_and(|t| t.get_path(Path::new(rel)).is_ok())
        });
        // The index last, and read by its names only: libgit2 loads (and checksums) every
        // entry.
        let in_index = !in_head
            && !missing.is_empty()
            && match index_names_any(&repo.path().join("index"), &missing) {
                Some(found) => found,
                None => repo.index().ok().is_some_and(|i| {
                    missing
                        .iter()
                        .any(|r| i.get_path(Path::new(r), 0).is_some())
                }),
            };
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let user = repo
            .config()
            .and_then(|c| c.get_path("core.attributesFile"))
            .ok()
            .or_else(|| {
                std::env::var_os("XDG_CONFIG_HOME")
                    .filter(|x| !x.is_empty())
                    .map(std::path::PathBuf::from)
                    .or_else(|| home.map(|h| h.join(".config")))
                    .map(|c| c.join("git").join("attributes"))
            });
        let elsewhere = [
            Some(repo.commondir().join("info").join("attributes")),
            Some(git_dir.join("info").join("attributes")),
            user,
            Some(std::path::PathBuf::from("/etc/gitattributes")),
        ];
        Sources {
            any: !on_disk.is_empty()
                || in_head
                || in_index
                || elsewhere.iter().flatten().any(|p| p.exists()),
            worktree_only: !in_head && !in_index,
        }
    }
}

/// The repository again, with an empty index: attribute lookups through it read the working
/// tree's files (and `info/attributes`, the user's and the system's) and never load the index.
/// Opened by its git folder and given the same working tree (a working tree found by searching
/// from its folder could be another repository's, with `GIT_DIR` / `--work-tree` set apart).
/// `None` for a bare repository, or when it cannot be opened (the caller then uses `repo`).
fn without_index(repo: &Repository) -> Option<Repository> {
    let again = Repository::open(repo.path()).ok()?;
    again.set_workdir(repo.workdir()?, false).ok()?;
    let mut empty = git2::Index::new().ok()?;
    again.set_index(&mut empty).ok()?;
    Some(again)
}

/// Whether the index file at `path` has a stage-0 entry named one of `names`, read from the
/// entries' names alone (index versions 2 to 4, SHA-1 ids); `None` when the file is not one this
/// reads entirely (another format, a split or sparse index, anything unexpected): the caller
/// then asks libgit2. A missing file is an empty index.
fn index_names_any(path: &Path, names: &[String]) -> Option<bool> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(false),
        Err(_) => return None,
    };
    let mut found = false;
    let layout = crate::repo::index::walk(&bytes, |e| {
        found |= e.stage() == 0 && names.iter().any(|n| n.as_bytes() == e.name);
    })?;
    // A split index keeps entries in another file, a sparse one folds folders.
    let folded = layout
        .exts
        .iter()
        .any(|x| &x.sig == b"link" || &x.sig == b"sdir");
    (!folded).then_some(found)
}

/// For each `(path, working-tree bytes)`: the blob `git add` would store, where that may differ
/// from the bytes' own blob (`None`: the bytes are stored as they are).
pub fn committed_blobs(
    repo: &Repository,
    git_dir: &Path,
    files: &[(&str, &[u8])],
) -> Result<Vec<Option<Oid>>, Error> {
    let autocrlf = repo
        .config()
        .and_then(|c| c.get_string("core.autocrlf"))
        .is_ok_and(|v| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "true" | "input" | "yes" | "on" | "1"
            )
        });
    let workdir = repo.workdir().map(Path::to_path_buf);
    let paths: Vec<&str> = files.iter().map(|(p, _)| *p).collect();
    let sources = Sources::find(repo, git_dir, &paths);
    let wanted: Vec<bool> = if !sources.any {
        files
            .iter()
            .map(|(_, bytes)| autocrlf && bytes.contains(&b'\r'))
            .collect()
    } else {
        let again = sources.worktree_only.then(|| without_index(repo)).flatten();
        if again.is_some() {
            crate::timing::mark("filters: attributes read without the index");
        }
        let (lookup, flags) = match &again {
            Some(again) => (again, AttrCheckFlags::FILE_THEN_INDEX),
            None => (
                repo,
                AttrCheckFlags::from_bits_retain(
                    AttrCheckFlags::FILE_THEN_INDEX.bits() | INCLUDE_HEAD,
                ),
            ),
        };
        files
            .iter()
            .map(|(path, bytes)| may_convert(lookup, flags, autocrlf, path, bytes))
            .collect()
    };
    if !wanted.contains(&true) {
        return Ok(vec![None; files.len()]);
    }
    let jobs: Vec<(&(&str, &[u8]), bool)> = files.iter().zip(wanted).collect();
    crate::par::try_map(&jobs, |((path, bytes), wanted)| {
        if *wanted {
            hash_object(git_dir, workdir.as_deref(), path, bytes).map(Some)
        } else {
            Ok(None)
        }
    })
}

/// `git hash-object -w --path=<path> --stdin`: the filtered blob, written.
fn hash_object(
    git_dir: &Path,
    workdir: Option<&Path>,
    path: &str,
    bytes: &[u8],
) -> Result<Oid, Error> {
    let mut cmd =
        Cmd::new("git", workdir.unwrap_or(git_dir)).arg(format!("--git-dir={}", git_dir.display()));
    if let Some(w) = workdir {
        cmd = cmd.arg(format!("--work-tree={}", w.display()));
    }
    let out = cmd
        .args(["hash-object", "-w", "--stdin"])
        .arg(format!("--path={path}"))
        .stdin(bytes.to_vec())
        // A clean filter may be slow (LFS hashing a large file), never forever.
        .timeout(Duration::from_secs(300))
        .run()
        .map_err(|e| {
            Error::git_caused(
                format!("cannot run git hash-object for {path}: {e}"),
                "install git (the command-line tool) and make sure it is on PATH",
                e,
            )
        })?;
    let failed = |why: String| {
        Error::git_msg(
            format!("git could not convert {path} for the commit as `git add` would: {why}"),
            format!(
                "this runs the clean filter / end-of-line conversion that .gitattributes asks for \
                 {path}; make `git add {path}` work (is the filter's program installed?), or apply \
                 without --commit / --branch and commit yourself"
            ),
        )
    };
    if out.timed_out {
        return Err(failed("it did not finish within 300 s".into()));
    }
    if !out.success() {
        return Err(failed(out.stderr_str().trim().to_string()));
    }
    Oid::from_str(out.stdout_str().trim()).map_err(|_| {
        failed(format!(
            "it printed `{}` instead of an object id",
            out.stdout_str().trim()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        crate::repo::test_git::git_ok(dir, args, &[]);
    }

    /// The index read by names finds what git staged, in every index version git writes (v3:
    /// an intent-to-add entry's extended flags; v4: names prefix-compressed), and declines a
    /// split index, whose entries are in another file.
    #[test]
    fn index_names_are_read_in_versions_2_3_and_4() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        git(d, &["init", "-q"]);
        for (p, text) in [
            ("a/.gitattributes", "*.txt text\n"),
            ("a/.gitattr", "x\n"),
            ("a/b/c.txt", "c\n"),
            ("z.txt", "z\n"),
        ] {
            let path = d.join(p);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        git(d, &["add", "a", "z.txt"]);
        let index = d.join(".git/index");
        let want = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let check = |label: &str| {
            assert_eq!(
                index_names_any(&index, &want(&["a/.gitattributes"])),
                Some(true),
                "{label}"
            );
            assert_eq!(
                index_names_any(&index, &want(&[".gitattributes", "a/b/.gitattributes"])),
                Some(false),
                "{label}"
            );
            assert_eq!(
                index_names_any(&index, &want(&["z.txt"])),
                Some(true),
                "{label}: the last entry"
            );
        };
        check("v2");
        std::fs::write(d.join("new.txt"), "n\n").expect("write");
        git(d, &["add", "--intent-to-add", "new.txt"]);
        check("v3");
        git(d, &["update-index", "--index-version", "4"]);
        check("v4");
        assert_eq!(
            index_names_any(&index, &want(&["new.txt"])),
            Some(true),
            "v4, a name after a shared prefix"
        );
        git(d, &["update-index", "--split-index"]);
        assert_eq!(index_names_any(&index, &want(&["z.txt"])), None);
        assert_eq!(
            index_names_any(&d.join("no-index"), &want(&["z.txt"])),
            Some(false)
        );
        std::fs::write(d.join("junk"), "DIRC\0\0\0\x02\0\0\0\x05").expect("write");
        assert_eq!(index_names_any(&d.join("junk"), &want(&["z.txt"])), None);
    }
}
