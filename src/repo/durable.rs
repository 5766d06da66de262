//! What git's own machinery writes for a transaction reaches the disk before the point of no
//! return, as git itself does with `core.fsync`.
//!
//! The objects of a transaction, its pins under `refs/patchgate/` and working-tree files are
//! synced by patchgate's own writers (`txn::objects`, `txn::refs`, [`crate::fs`]). The moved
//! branch, and the few objects libgit2 writes itself (the undo history's), are written by
//! libgit2, which syncs each file before its rename and its folder after only when
//! asked to, process-wide ([`durable_git`], before any repository is opened: its ref database reads
//! the switch when it is created). The index is written by patchgate itself in the common case
//! (`txn::index`: the file synced, renamed, its folder synced), else by `git update-index`, which
//! is told `core.fsync=added` ([`git_fsync_args`]); git does not sync the folder after renaming
//! `index.lock`, so the caller does ([`crate::fs::sync_dir_path`]).
//!
//! `PATCHGATE_FSYNC=0` turns all of it off, to measure what durability costs.

use std::sync::Once;

/// Asks libgit2 to fsync every object and ref file it writes, and their folders (once per
/// process; a no-op with `PATCHGATE_FSYNC=0`).
pub fn durable_git() {
    static ONCE: Once = Once::new();
    if !crate::fs::fsync_enabled() {
        return;
    }
    ONCE.call_once(|| {
        libgit2_sys::init();
        // SAFETY: a documented libgit2 option taking one int; libgit2 is initialised above.
        unsafe {
            libgit2_sys::git_libgit2_opts(
                libgit2_sys::GIT_OPT_ENABLE_FSYNC_GITDIR as libc::c_int,
                1 as libc::c_int,
            );
        }
    });
}

/// The `-c` options that make a git command sync what it writes (objects, refs and the index).
pub fn git_fsync_args() -> Vec<&'static str> {
    if crate::fs::fsync_enabled() {
        vec!["-c", "core.fsync=added", "-c", "core.fsyncMethod=fsync"]
    } else {
        Vec::new()
    }
}
