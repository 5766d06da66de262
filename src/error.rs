//! Errors that end a run before (or instead of) a per-edit report, and the exit codes they map to.
//!
//! Per-edit problems (`not_found`, `ambiguous`, an invalid field in one edit) are not errors here: they
//! are outcomes recorded in the report, so that every problem of a batch is shown at once. What lives
//! here is what stops the whole run: a patch that cannot be parsed, a directory that is not a git
//! repository, a concurrent modification detected during write-back, a failed write.
//!
//! Every variant renders through miette with a `help` that says what to do next, and maps to one of
//! the documented exit codes (docs/report.md): 3 for invalid input, 4 for the environment.

use std::path::PathBuf;
use std::sync::Arc;

use miette::{Diagnostic, NamedSource, SourceSpan};
use thiserror::Error;

/// The documented process exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    ChecksFailed = 1,
    EditFailed = 2,
    InvalidInput = 3,
    Environment = 4,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// Where in the patch file a problem is: the file's text (for the snippet) and a byte span.
#[derive(Debug, Clone)]
pub struct PatchLocation {
    pub source: NamedSource<Arc<String>>,
    pub span: Option<SourceSpan>,
    /// 1-based line and column, when known.
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// A patch document that is not a patch: where, what, and how to fix it.
#[derive(Debug, Error, Diagnostic)]
#[error("invalid patch: {message}")]
#[diagnostic(code(patchgate::patch), help("{help}"))]
pub struct PatchError {
    pub message: String,
    pub help: String,
    #[source_code]
    pub source_code: Option<NamedSource<Arc<String>>>,
    #[label("{label}")]
    pub span: Option<SourceSpan>,
    pub label: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

#[derive(Debug, Error, Diagnostic)]
pub enum Error {
    /// Boxed: the snippet and spans make it the largest variant by far.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Patch(Box<PatchError>),

    #[error("cannot read the patch from {path}: {source}")]
    #[diagnostic(
        code(patchgate::patch_read),
        help("pass the path of a YAML or JSON patch file, or `-` to read it from standard input")
    )]
    PatchRead {
        path: String,
        #[source]
        source: std::io::Error,
    },

    #[error("invalid arguments: {message}")]
    #[diagnostic(code(patchgate::usage), help("{help}"))]
    Usage { message: String, help: String },

    #[error("{count} of {total} edits are invalid")]
    #[diagnostic(
        code(patchgate::invalid_edits),
        help(
            "fix the edits marked invalid (each says what is wrong) and re-run; nothing was written"
        )
    )]
    InvalidEdits { count: usize, total: usize },

    #[error("{} is not inside a git repository", path.display())]
    #[diagnostic(
        code(patchgate::not_a_repo),
        help(
            "run patchgate inside a git working tree, or point at one with -C DIR (`git init` makes one)"
        )
    )]
    NotARepo { path: PathBuf },

    #[error("the repository at {} has no working tree", path.display())]
    #[diagnostic(
        code(patchgate::bare_repo),
        help("patchgate edits files in a working tree; run it in a checkout of this repository")
    )]
    BareRepo { path: PathBuf },

    #[error("git: {message}")]
    #[diagnostic(code(patchgate::git), help("{help}"))]
    Git { message: String, help: String },

    #[error("{path} changed on disk while the patch was being applied")]
    #[diagnostic(
        code(patchgate::concurrent_modification),
        help(
            "another process modified the file after patchgate read it; nothing was changed. \
             Re-run the patch once the other writer is done"
        )
    )]
    ConcurrentModification { path: String },

    #[error("{path} changed while patchgate was applying: {detail}")]
    #[diagnostic(
        code(patchgate::path_changed),
        help(
            "a folder on the way (or the file itself) was replaced by a symlink after patchgate \
             checked the path, and patchgate never writes through one; nothing was written outside \
             the repository. See what replaced it (`ls -l`), put it back or accept it, then re-run"
        )
    )]
    PathChanged { path: String, detail: String },

    #[error("patchgate's own state in {} is not valid: {field} {problem}", file.display())]
    #[diagnostic(code(patchgate::invalid_state), help("{help}"))]
    InvalidState {
        file: PathBuf,
        field: String,
        problem: String,
        help: String,
    },

    #[error("no {role} identity: git does not know who is committing")]
    #[diagnostic(
        code(patchgate::identity),
        help(
            "set it once with `git config --global user.name \"Your Name\"` and \
             `git config --global user.email you@example.com` (or GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL \
             and GIT_COMMITTER_NAME/GIT_COMMITTER_EMAIL in the environment)"
        )
    )]
    Identity { role: String },

    #[error("{refname} moved while the patch was being applied ({detail})")]
    #[diagnostic(
        code(patchgate::ref_moved),
        help(
            "someone committed meanwhile; nothing was changed. Re-run the patch on the new state"
        )
    )]
    RefMoved { refname: String, detail: String },

    #[error("a {state} is in progress in this repository")]
    #[diagnostic(
        code(patchgate::repo_state),
        help("finish or abort it first (`git status` says how), then re-run the patch")
    )]
    RepoState { state: String },

    #[error("the index is locked by another process ({})", path.display())]
    #[diagnostic(
        code(patchgate::index_locked),
        help(
            "another git command is running (or crashed and left the lock). If none is running, \
             remove the lock file. Inside a git hook, apply without --commit"
        )
    )]
    IndexLocked { path: PathBuf },

    #[error("GIT_INDEX_FILE is set: patchgate is running inside a git command (a hook?)")]
    #[diagnostic(
        code(patchgate::inside_git),
        help(
            "--commit would race the git command that is running (it moves HEAD under it); apply \
             without --commit and `git add` the files, or commit on another branch with --branch"
        )
    )]
    InsideGit,

    #[error("another patchgate (pid {pid}) is applying a patch in this repository")]
    #[diagnostic(code(patchgate::busy), help("wait for it to finish, then re-run"))]
    Busy { pid: u32 },

    #[error("branch {name} is checked out in {}", worktree.display())]
    #[diagnostic(
        code(patchgate::branch_checked_out),
        help(
            "--branch commits without touching any working tree, so it refuses a branch that one \
             has checked out; use --commit there, or name another branch"
        )
    )]
    BranchCheckedOut { name: String, worktree: PathBuf },

    #[error("interrupted transaction {id} could not be recovered: {message}")]
    #[diagnostic(code(patchgate::recover), help("{help}"))]
    Recover {
        id: String,
        message: String,
        help: String,
    },

    #[error("{cause}; the patch was undone, except in {} (changed again after patchgate wrote them: left as they are)", left.join(", "))]
    #[diagnostic(
        code(patchgate::undone_except),
        help(
            "another writer is editing these files: compare them with `git diff`, then re-run the patch"
        )
    )]
    UndoneExcept { cause: String, left: Vec<String> },

    #[error("write-back failed part-way and {} could not be restored", paths.join(", "))]
    #[diagnostic(
        code(patchgate::rollback_failed),
        help(
            "run `patchgate recover`: the transaction's journal was kept, with the old content of every file"
        )
    )]
    RollbackFailed { paths: Vec<String> },

    #[error("no patch `{id}` in this repository's undo history")]
    #[diagnostic(code(patchgate::unknown_patch), help("{help}"))]
    UnknownPatch { id: String, help: String },

    #[error("nothing to undo: {reason}")]
    #[diagnostic(code(patchgate::nothing_to_undo), help("{help}"))]
    NothingToUndo { reason: String, help: String },

    #[error("patch {id} was already undone by {by}")]
    #[diagnostic(
        code(patchgate::already_undone),
        help("`patchgate undo {by}` puts it back; nothing was changed")
    )]
    AlreadyUndone { id: String, by: String },

    #[error("cannot undo patch {id}: {} changed since the patch wrote {}", paths.join(", "), if paths.len() == 1 { "it" } else { "them" })]
    #[diagnostic(
        code(patchgate::changed_since),
        help(
            "undo only restores files that still hold exactly what the patch wrote, so later work is \
             never lost; nothing was changed. Compare with `git diff`, then edit by hand or re-run \
             once the files are back"
        )
    )]
    ChangedSince { id: String, paths: Vec<String> },

    /// A bug in patchgate (a panic), caught so that the run ends with a report and exit 4.
    #[error("internal error, please report: {message}")]
    #[diagnostic(code(patchgate::internal), help("{help}"))]
    Internal { message: String, help: String },

    #[error("cannot {action} {}: {source}", path.display())]
    #[diagnostic(code(patchgate::io), help("{help}"))]
    Io {
        action: &'static str,
        path: PathBuf,
        help: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::Patch(_)
            | Error::PatchRead { .. }
            | Error::Usage { .. }
            | Error::InvalidEdits { .. }
            | Error::UnknownPatch { .. }
            | Error::NothingToUndo { .. } => Exit::InvalidInput,
            Error::NotARepo { .. }
            | Error::BareRepo { .. }
            | Error::Git { .. }
            | Error::ConcurrentModification { .. }
            | Error::PathChanged { .. }
            | Error::InvalidState { .. }
            | Error::Identity { .. }
            | Error::RefMoved { .. }
            | Error::RepoState { .. }
            | Error::IndexLocked { .. }
            | Error::InsideGit
            | Error::Busy { .. }
            | Error::BranchCheckedOut { .. }
            | Error::Recover { .. }
            | Error::UndoneExcept { .. }
            | Error::RollbackFailed { .. }
            | Error::AlreadyUndone { .. }
            | Error::ChangedSince { .. }
            | Error::Internal { .. }
            | Error::Io { .. } => Exit::Environment,
        }
    }

    /// A short machine-readable kind for the JSON report.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Patch(_) | Error::PatchRead { .. } => "invalid_patch",
            Error::Usage { .. } => "usage",
            Error::InvalidEdits { .. } => "invalid_edits",
            Error::NotARepo { .. } => "not_a_repository",
            Error::BareRepo { .. } => "bare_repository",
            Error::Git { .. } => "git",
            Error::ConcurrentModification { .. } => "concurrent_modification",
            Error::PathChanged { .. } => "concurrent_modification",
            Error::InvalidState { .. } => "invalid_state",
            Error::Identity { .. } => "no_identity",
            Error::RefMoved { .. } => "ref_moved",
            Error::RepoState { .. } => "operation_in_progress",
            Error::IndexLocked { .. } => "index_locked",
            Error::InsideGit => "inside_git_command",
            Error::Busy { .. } => "busy",
            Error::BranchCheckedOut { .. } => "branch_checked_out",
            Error::Recover { .. } => "recover_failed",
            Error::UndoneExcept { .. } => "concurrent_modification",
            Error::RollbackFailed { .. } => "rollback_failed",
            Error::UnknownPatch { .. } => "unknown_patch",
            Error::NothingToUndo { .. } => "nothing_to_undo",
            Error::AlreadyUndone { .. } => "already_undone",
            Error::ChangedSince { .. } => "changed_since",
            Error::Internal { .. } => "internal",
            Error::Io { .. } => "io",
        }
    }

    /// The `help` text, for reports that are not rendered by miette.
    pub fn help_text(&self) -> Option<String> {
        self.help().map(|h| h.to_string())
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        let help = match source.kind() {
            std::io::ErrorKind::PermissionDenied => {
                "check the file's permissions and the directory's write permission".to_string()
            }
            std::io::ErrorKind::StorageFull => "free some disk space and re-run".to_string(),
            _ => "nothing was changed by this step; fix the cause and re-run".to_string(),
        };
        Error::Io {
            action,
            path: path.into(),
            help,
            source,
        }
    }

    /// A failed file operation on `rel` (relative to the working tree's `root`): a symlink met on
    /// the way is the path having changed since it was checked, anything else an I/O error.
    pub fn fs(action: &'static str, root: &std::path::Path, rel: &str, e: std::io::Error) -> Self {
        if crate::fs::is_symlink_error(&e) {
            Error::PathChanged {
                path: rel.to_string(),
                detail: "a symlink is now on its path".into(),
            }
        } else {
            Error::io(action, root.join(rel), e)
        }
    }

    pub fn git(err: git2::Error) -> Self {
        Error::Git {
            message: err.message().to_string(),
            help: "check that the repository is healthy (`git status`, `git fsck`)".to_string(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
