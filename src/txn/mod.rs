//! The transaction: from a verified plan to a changed repository, all or nothing, crash-safe.
//!
//! The steps (docs/transaction.md), and the module that owns each:
//! 1. [`lock`]: one patchgate per repository (an flock the kernel releases on any death), no merge
//!    or rebase in progress, and for commits an index nobody holds;
//! 2. [`stage`]: what recovery may write back as git objects, pinned by
//!    `refs/patchgate/txn/<worktree key>/<id>`: for a commit the post-patch state (blobs, trees,
//!    the commit to publish; its blobs through git's clean filters and end-of-line conversion,
//!    [`filters`]) and the old contents; for the working tree the old contents git lacks only;
//! 3. [`journal`]: what is about to happen, durably, before anything user-visible changes (in
//!    working-tree mode written while step 2 runs: only the blob ids are needed, and the objects
//!    only once the first file is replaced);
//! 4. `writeback`: the working tree switched file by file (verified, temp + fsync + rename,
//!    rolled back on any failure);
//! 5. [`commit`]: the ref moved by compare-and-swap (the point of no return), then the index
//!    ([`index`] in the common case);
//! 6. [`recover`]: what a crash left, finished or undone, by the facts (the ref; for the working
//!    tree, the history entry);
//! 7. [`history`]: what each completed transaction wrote, kept (bounded) for `patchgate undo`;
//!    for a working-tree transaction, writing it is the point of no return;
//! 8. [`validate`]: the journal and history, checked like user input before they are acted on.
//!
//! [`run`] drives steps 2–5 and 7 for a set of path changes, whoever computed them (`apply` from a
//! patch, `undo` from a history entry).
//!
//! The git CLI is used in exactly two places, `git update-index` where [`index`] does not write
//! the index entries itself (see [`commit`] for why) and
//! `git hash-object --path` for the committed blobs of filtered paths ([`filters`]: libgit2 has
//! no external filter drivers); the tests use the CLI as an independent witness of everything
//! else.

pub mod commit;
pub mod filters;
pub mod history;
pub mod index;
pub mod journal;
pub mod lock;
pub mod objects;
pub mod recover;
pub mod refs;
pub mod run;
pub mod stage;
pub mod validate;
mod writeback;

pub use writeback::{Hooks, missing_parents, remove_emptied_dirs, temp_path_for, write_back};
