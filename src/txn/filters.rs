//! Committed blobs made the way `git add` makes them: through the repository's `.gitattributes`
//! conversions (`text` / `eol` / `crlf` and `core.autocrlf`, `ident`, `working-tree-encoding`)
//! and clean filters (`filter=<driver>`: git-lfs, git-crypt, secret scrubbers).
//!
//! The working-tree bytes of a patched file are what the user sees; the blob a commit records
//! for it is what `git add` would store, or `git status` shows the file modified right after the
//! commit (and a scrubbed secret or an LFS object's content lands in the history). libgit2 has no
//! external filter drivers, so the conversion is git's own: `git hash-object -w --path=<path>
//! --stdin`, which applies exactly the filters `git add <path>` applies (and, for LFS, stores the
//! object under `.git/lfs/objects` as `git add` does). Two cases where `hash-object` alone reads
//! other attributes than `git add`, so git is handed them or decides every path: a
//! `.gitattributes` deleted from the working tree but still staged (`git add` reads the index's
//! copy; patchgate passes `--attr-source` with a tree of what `git add` reads), and `attr.tree`.
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

/// The `.gitattributes` of every folder holding one of `paths`, the root's first, relative to
/// the working tree.
fn attributes_files(paths: &[&str]) -> Vec<String> {
    let mut dirs: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for p in paths {
        dirs.insert("");
        for (i, c) in p.char_indices() {
            if c == '/' {
                dirs.insert(&p[..i]);
            }
        }
    }
    dirs.iter()
        .map(|d| {
            if d.is_empty() {
                ".gitattributes".to_string()
            } else {
                format!("{d}/.gitattributes")
            }
        })
        .collect()
}

/// Whether the attributes file `rel` (a `.gitattributes` path) speaks about `path`.
fn covers(rel: &str, path: &str) -> bool {
    match rel.rsplit_once('/') {
        None => true,
        Some((dir, _)) => {
            path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/'
        }
    }
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
    /// The `.gitattributes` of those folders that are missing from the working tree (or are a
    /// symbolic link there, which git does not follow) but staged in the index: `git add` reads
    /// the index's copy of each, which neither libgit2's lookups nor `git hash-object --path`
    /// (it loads no index) do by themselves.
    index_only: Vec<String>,
}

impl Sources {
    fn find(repo: &Repository, git_dir: &Path, paths: &[&str]) -> Sources {
        let workdir = repo.workdir();
        let (on_disk, missing): (Vec<String>, Vec<String>) =
            attributes_files(paths).into_iter().partition(|rel| {
                workdir.is_some_and(|w| w.join(rel).symlink_metadata().is_ok_and(|m| m.is_file()))
            });
        let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
        let in_head = missing.iter().any(|rel| {
            head.as_ref()
                .is_some_and(|t| t.get_path(Path::new(rel)).is_ok())
        });
        // The index last, and read by its names only: libgit2 loads (and checksums) every
        // entry.
        let index_only = if missing.is_empty() || repo.is_bare() {
            Vec::new()
        } else {
            match index_names_found(&repo.path().join("index"), &missing) {
                Some(found) => found,
                None => repo.index().map_or_else(
                    |_| Vec::new(),
                    |i| {
                        missing
                            .iter()
                            .filter(|r| i.get_path(Path::new(r), 0).is_some())
                            .cloned()
                            .collect()
                    },
                ),
            }
        };
        let in_index = !index_only.is_empty();
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
            index_only,
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

/// Which of `names` the index file at `path` has a stage-0 entry for, read from the entries'
/// names alone (index versions 2 to 4, SHA-1 ids); `None` when the file is not one this reads
/// entirely (another format, a split or sparse index, anything unexpected): the caller then asks
/// libgit2. A missing file is an empty index.
fn index_names_found(path: &Path, names: &[String]) -> Option<Vec<String>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    let mut found = Vec::new();
    let layout = crate::repo::index::walk(&bytes, |e| {
        if e.stage() == 0
            && let Some(n) = names.iter().find(|n| n.as_bytes() == e.name)
        {
            found.push(n.clone());
        }
    })?;
    // A split index keeps entries in another file, a sparse one folds folders.
    let folded = layout
        .exts
        .iter()
        .any(|x| &x.sig == b"link" || &x.sig == b"sdir");
    (!folded).then_some(found)
}

/// A tree holding the `.gitattributes` that `git add` reads for `paths`' folders: the working
/// tree's file where it is one, else the index's copy. Handed to git as `--attr-source`, it
/// makes `git hash-object` read what `git add` reads when one of them is only in the index.
/// Its objects are written to the repository (a few small loose objects; unreferenced, git's
/// garbage collection removes them).
fn attr_tree(repo: &Repository, paths: &[&str], index_only: &[String]) -> Result<Oid, git2::Error> {
    let index = repo.index()?;
    let workdir = repo.workdir();
    let mut files: Vec<(String, Oid)> = Vec::new();
    for rel in attributes_files(paths) {
        let oid = if index_only.contains(&rel) {
            index.get_path(Path::new(&rel), 0).map(|e| e.id)
        } else {
            match workdir.map(|w| w.join(&rel)) {
                Some(p) if p.symlink_metadata().is_ok_and(|m| m.is_file()) => {
                    Some(repo.blob(&std::fs::read(&p).map_err(|e| {
                        git2::Error::from_str(&format!("cannot read {}: {e}", p.display()))
                    })?)?)
                }
                _ => None,
            }
        };
        if let Some(oid) = oid {
            files.push((rel, oid));
        }
    }
    // The same builder a commit's tree is made with, from an empty tree.
    let empty = repo.find_tree(repo.treebuilder(None)?.write()?)?;
    let mut builder = git2::build::TreeUpdateBuilder::new();
    for (rel, oid) in &files {
        builder.upsert(rel.as_str(), *oid, git2::FileMode::Blob);
    }
    builder.create_updated(repo, &empty)
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
    // `attr.tree` names a tree git reads attributes from instead of the working tree and the
    // index; libgit2 does not know it, so git decides every path (`git add` and `git hash-object
    // --path` both follow it).
    let attr_tree_set = repo
        .config()
        .and_then(|c| c.get_string("attr.tree"))
        .is_ok();
    // With a `.gitattributes` only in the index, git decides every path under it, reading what
    // `git add` reads.
    let attr_source = if sources.index_only.is_empty() || attr_tree_set {
        None
    } else {
        Some(attr_tree(repo, &paths, &sources.index_only).map_err(|e| {
            Error::git_caused(
                "cannot gather the .gitattributes `git add` would read for the commit".to_string(),
                format!(
                    "{} is deleted in the working tree but staged; restore it (`git checkout -- \
                         {0}`) or stage its deletion (`git rm --cached {0}`)",
                    sources.index_only[0]
                ),
                e,
            )
        })?)
    };
    let decided_by_git = |path: &str| {
        attr_source.is_some() && sources.index_only.iter().any(|rel| covers(rel, path))
    };
    let wanted: Vec<bool> = if attr_tree_set {
        vec![true; files.len()]
    } else if !sources.any {
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
            .map(|(path, bytes)| {
                decided_by_git(path) || may_convert(lookup, flags, autocrlf, path, bytes)
            })
            .collect()
    };
    if !wanted.contains(&true) {
        return Ok(vec![None; files.len()]);
    }
    let jobs: Vec<(&(&str, &[u8]), bool)> = files.iter().zip(wanted).collect();
    crate::par::try_map(&jobs, |((path, bytes), wanted)| {
        if *wanted {
            hash_object(git_dir, workdir.as_deref(), attr_source, path, bytes).map(Some)
        } else {
            Ok(None)
        }
    })
}

/// `git hash-object -w --path=<path> --stdin`: the filtered blob, written; with `attr_source`,
/// the attributes read from that tree (`git --attr-source`, git 2.40 and later).
fn hash_object(
    git_dir: &Path,
    workdir: Option<&Path>,
    attr_source: Option<Oid>,
    path: &str,
    bytes: &[u8],
) -> Result<Oid, Error> {
    let mut cmd =
        Cmd::new("git", workdir.unwrap_or(git_dir)).arg(format!("--git-dir={}", git_dir.display()));
    if let Some(w) = workdir {
        cmd = cmd.arg(format!("--work-tree={}", w.display()));
    }
    if let Some(tree) = attr_source {
        cmd = cmd.arg(format!("--attr-source={tree}"));
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
    let staged_only = if attr_source.is_some() {
        "; a .gitattributes of its folders is deleted in the working tree but still staged, which \
         is read with `git --attr-source` (git 2.40 or later): with an older git, restore that \
         file or stage its deletion"
    } else {
        ""
    };
    let failed = |why: String| {
        Error::git_msg(
            format!("git could not convert {path} for the commit as `git add` would: {why}"),
            format!(
                "this runs the clean filter / end-of-line conversion that .gitattributes asks for \
                 {path}; make `git add {path}` work (is the filter's program installed?), or apply \
                 without --commit / --branch and commit yourself{staged_only}"
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

    #[test]
    fn an_attributes_file_covers_the_paths_under_its_folder() {
        assert!(covers(".gitattributes", "a.txt"));
        assert!(covers(".gitattributes", "sub/a.txt"));
        assert!(covers("sub/.gitattributes", "sub/a.txt"));
        assert!(covers("sub/.gitattributes", "sub/deep/a.txt"));
        assert!(!covers("sub/.gitattributes", "subway/a.txt"));
        assert!(!covers("sub/.gitattributes", "sub"));
        assert!(!covers("sub/deep/.gitattributes", "sub/a.txt"));
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
                index_names_found(&index, &want(&["b/.gitattributes", "a/.gitattributes"])),
                Some(want(&["a/.gitattributes"])),
                "{label}"
            );
            assert_eq!(
                index_names_found(&index, &want(&[".gitattributes", "a/b/.gitattributes"])),
                Some(vec![]),
                "{label}"
            );
            assert_eq!(
                index_names_found(&index, &want(&["z.txt"])),
                Some(want(&["z.txt"])),
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
            index_names_found(&index, &want(&["new.txt"])),
            Some(want(&["new.txt"])),
            "v4, a name after a shared prefix"
        );
        git(d, &["update-index", "--split-index"]);
        assert_eq!(index_names_found(&index, &want(&["z.txt"])), None);
        assert_eq!(
            index_names_found(&d.join("no-index"), &want(&["z.txt"])),
            Some(vec![])
        );
        std::fs::write(d.join("junk"), "DIRC\0\0\0\x02\0\0\0\x05").expect("write");
        assert_eq!(index_names_found(&d.join("junk"), &want(&["z.txt"])), None);
    }
}
