//! Where patchgate keeps its own state: every path under `<git dir>/patchgate/`, the ref
//! namespaces under `refs/patchgate/`, and the user-level cache, named here and nowhere else.
//!
//! ```text
//! <git dir>/patchgate/
//!   mutex                 one patchgate per working tree (txn::lock)
//!   txn/<id>.json         the journal of a transaction in flight (txn::journal)
//!   history/<id>.json     what each completed transaction wrote, for undo (txn::history)
//!   applied               the re-run record: digests of applied edits and patches (plan::record)
//!   cache/baseline/       checker results on original contents (checks::baseline)
//!   cache/verify/         verify's baseline results (verify::baseline::cache)
//!   scratch/, node/       checkers' scratch trees and the node host's files
//!   custom/<name>/<tag>/  a custom checker's input files
//!   prepared/<tool>-<n>   a mirrored project's prepared dependency state (project::prepare)
//!   cargo-target/         the cargo target directory of checks and verify
//!   pytest-<pid>.xml      a pytest run's JUnit report (verify)
//! refs/patchgate/txn/<worktree key>/<id>       the objects of a transaction in flight
//! refs/patchgate/history/<worktree key>/<id>   the objects a history entry needs for undo
//! $XDG_CACHE_HOME/patchgate/<name>-<id>/       a project's mirror (project::mirror)
//! $XDG_CACHE_HOME/patchgate/node-code/         node tools' compiled code (checks::exec::node)
//! ```
//!
//! Refs are shared by all working trees of a repository while `<git dir>` is each one's own, so
//! each ref namespace carries a key derived from the git dir ([`worktree_key`]): a working tree
//! only ever judges and cleans up its own pins. `patchgate recover` removes temp files from
//! [`root`], [`journals`] and [`history`] by these names.

use std::path::{Path, PathBuf};

/// Every ref patchgate makes starts with this; no other ref is ever deleted by it.
pub const REFS: &str = "refs/patchgate/";

/// `<git dir>/patchgate`: all of patchgate's state in one working tree.
pub fn root(git_dir: &Path) -> PathBuf {
    git_dir.join("patchgate")
}

/// The file the per-working-tree mutex is an `flock` on.
pub fn mutex(git_dir: &Path) -> PathBuf {
    root(git_dir).join("mutex")
}

/// The journals of transactions in flight.
pub fn journals(git_dir: &Path) -> PathBuf {
    root(git_dir).join("txn")
}

/// The history entries of completed transactions.
pub fn history(git_dir: &Path) -> PathBuf {
    root(git_dir).join("history")
}

/// The re-run record of applied edits and patches.
pub fn applied(git_dir: &Path) -> PathBuf {
    root(git_dir).join("applied")
}

/// The cache of checker results on original contents.
pub fn baseline_cache(git_dir: &Path) -> PathBuf {
    root(git_dir).join("cache").join("baseline")
}

/// The cache of verify's baseline results.
pub fn verify_cache(git_dir: &Path) -> PathBuf {
    root(git_dir).join("cache").join("verify")
}

/// Scratch trees checkers run in when they must see files inside the repository's git dir.
pub fn scratch(git_dir: &Path) -> PathBuf {
    root(git_dir).join("scratch")
}

/// The node host's files.
pub fn node(git_dir: &Path) -> PathBuf {
    root(git_dir).join("node")
}

/// A custom checker's input files for one run (`tag`: which side, before or after).
pub fn custom(git_dir: &Path, name: &str, tag: &str) -> PathBuf {
    root(git_dir).join("custom").join(name).join(tag)
}

/// A mirrored project's prepared dependency state (`name`: `<tool>-<project>`).
pub fn prepared(git_dir: &Path, name: &str) -> PathBuf {
    root(git_dir).join("prepared").join(name)
}

/// The cargo target directory shared by the checks and verify.
pub fn cargo_target(git_dir: &Path) -> PathBuf {
    root(git_dir).join("cargo-target")
}

/// The JUnit report of one pytest run, by process.
pub fn pytest_junit(git_dir: &Path, pid: u32) -> PathBuf {
    root(git_dir).join(format!("pytest-{pid}.xml"))
}

/// Where patchgate ≤ 0.1 kept project mirrors inside the repository (removed when seen).
pub fn legacy_mirrors(git_dir: &Path) -> [PathBuf; 2] {
    ["node_modules", "mirrors"].map(|d| root(git_dir).join(d))
}

/// The user-level cache home: `$XDG_CACHE_HOME`, else `$HOME/.cache` (each only when absolute,
/// as the XDG specification says of a relative one).
pub fn cache_home() -> Option<PathBuf> {
    let absolute = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    absolute(std::env::var_os("XDG_CACHE_HOME"))
        .or_else(|| absolute(std::env::var_os("HOME")).map(|h| h.join(".cache")))
}

/// The user-level cache folder of project mirrors, under the cache home (`$XDG_CACHE_HOME`).
pub fn mirrors(cache_home: &Path) -> PathBuf {
    cache_home.join("patchgate")
}

/// The name, among the mirrors, of the folder of node tools' compiled code ([`node_code`]).
pub const NODE_CODE: &str = "node-code";

/// The compiled code of node tools' modules, kept by the node bridge on a node without a compile
/// cache of its own (`checks/exec/bridge.mjs`), one folder per node version inside.
pub fn node_code(cache_home: &Path) -> PathBuf {
    mirrors(cache_home).join(NODE_CODE)
}

fn key_of(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(bytes))[..16].to_string()
}

/// A short key naming one working tree of a repository, for the ref namespaces it owns (linked
/// worktrees share the repository's refs). It stays the same when the repository is moved or
/// copied elsewhere: the main working tree's is fixed, a linked worktree's comes from its name in
/// git's `worktrees/` folder (its git dir, which has a `commondir` file), which `git worktree
/// move` keeps.
pub fn worktree_key(git_dir: &Path) -> String {
    if git_dir.join("commondir").is_file() {
        let name = git_dir.file_name().unwrap_or_default();
        key_of(&[b"worktree:", name.as_encoded_bytes()].concat())
    } else {
        key_of(b"main")
    }
}

/// The key older versions used: a hash of the git dir's absolute path, which changed when the
/// repository moved (and with it every history entry's pin, so the history became unusable).
/// Pins made under it where the repository still is are recognised.
fn legacy_worktree_key(git_dir: &Path) -> String {
    key_of(git_dir.as_os_str().as_encoded_bytes())
}

/// The pin namespace of one working tree's transactions: `refs/patchgate/txn/<key>`.
pub fn txn_pins(git_dir: &Path) -> String {
    format!("{REFS}txn/{}", worktree_key(git_dir))
}

/// The pin namespace of one working tree's history: `refs/patchgate/history/<key>`.
pub fn history_pins(git_dir: &Path) -> String {
    format!("{REFS}history/{}", worktree_key(git_dir))
}

/// [`txn_pins`], then the namespace an older version used for this working tree.
pub fn txn_pin_spaces(git_dir: &Path) -> [String; 2] {
    [
        txn_pins(git_dir),
        format!("{REFS}txn/{}", legacy_worktree_key(git_dir)),
    ]
}

/// [`history_pins`], then the namespace an older version used for this working tree.
pub fn history_pin_spaces(git_dir: &Path) -> [String; 2] {
    [
        history_pins(git_dir),
        format!("{REFS}history/{}", legacy_worktree_key(git_dir)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_is_under_the_root_and_every_ref_under_refs_patchgate() {
        let g = Path::new("/r/.git");
        for p in [
            mutex(g),
            journals(g),
            history(g),
            applied(g),
            baseline_cache(g),
            verify_cache(g),
            scratch(g),
            node(g),
            custom(g, "c", "after"),
            prepared(g, "cargo-x"),
            cargo_target(g),
            pytest_junit(g, 7),
        ] {
            assert!(p.starts_with("/r/.git/patchgate/"), "{}", p.display());
        }
        assert_eq!(
            txn_pins(g),
            format!("refs/patchgate/txn/{}", worktree_key(g))
        );
        assert!(history_pins(g).starts_with(REFS));
        assert_eq!(worktree_key(g).len(), 16);
    }

    /// One key per working tree of a repository, the same wherever the repository is: a linked
    /// worktree's git dir (it has a `commondir` file) by its name, the main one fixed.
    #[test]
    fn worktree_keys_tell_worktrees_apart_and_survive_a_move() {
        let d = tempfile::tempdir().expect("tempdir");
        let linked = |root: &Path, name: &str| {
            let g = root.join(".git/worktrees").join(name);
            std::fs::create_dir_all(&g).expect("mkdir");
            std::fs::write(g.join("commondir"), "../..\n").expect("commondir");
            g
        };
        let (here, there) = (d.path().join("here"), d.path().join("there"));
        let (w_here, v_here, w_there) =
            (linked(&here, "w"), linked(&here, "v"), linked(&there, "w"));
        assert_eq!(
            worktree_key(&here.join(".git")),
            worktree_key(&there.join(".git"))
        );
        assert_eq!(worktree_key(&w_here), worktree_key(&w_there));
        assert_ne!(worktree_key(&w_here), worktree_key(&v_here));
        assert_ne!(worktree_key(&w_here), worktree_key(&here.join(".git")));
        // The older key, by path, is still offered second.
        assert_ne!(
            history_pin_spaces(&w_here)[1],
            history_pin_spaces(&w_there)[1]
        );
        assert_eq!(history_pin_spaces(&w_here)[0], history_pins(&w_here));
    }
}
