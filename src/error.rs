//! Errors that end a run before (or instead of) a per-edit report, and the exit codes they map to.
//!
//! Per-edit problems (`not_found`, `ambiguous`, an invalid field in one edit) are not errors here: they
//! are outcomes recorded in the report, so that every problem of a batch is shown at once. What lives
//! here is what stops the whole run: a patch that cannot be parsed, a directory that is not a git
//! repository, a concurrent modification detected during write-back, a failed write.
//!
//! Every variant renders through miette with a `help` that says what to do next, and has one name,
//! its [`Kind`]: the JSON report's `error.kind` and the miette code `patchgate::<kind>`. The kind
//! maps to one of the documented exit codes (docs/report.md): 3 for invalid input, 4 for the
//! environment ([`Kind::exit`]).

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

/// What kind of error ended a run: its public name (the JSON report's `error.kind`, the
/// miette code `patchgate::<kind>`) and, through [`Kind::exit`], its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    InvalidPatch,
    Usage,
    Config,
    InvalidEdits,
    NotARepository,
    BareRepository,
    Git,
    ConcurrentModification,
    InvalidState,
    NoIdentity,
    RefMoved,
    OperationInProgress,
    IndexLocked,
    InsideGitCommand,
    Busy,
    BranchCheckedOut,
    RecoverFailed,
    RollbackFailed,
    UnknownPatch,
    NothingToUndo,
    AlreadyUndone,
    ChangedSince,
    Internal,
    Io,
}

impl Kind {
    /// Every kind, in the order docs/report.md lists them.
    pub const ALL: &[Kind] = &[
        Kind::InvalidPatch,
        Kind::Usage,
        Kind::Config,
        Kind::InvalidEdits,
        Kind::NotARepository,
        Kind::BareRepository,
        Kind::Git,
        Kind::ConcurrentModification,
        Kind::InvalidState,
        Kind::NoIdentity,
        Kind::RefMoved,
        Kind::OperationInProgress,
        Kind::IndexLocked,
        Kind::InsideGitCommand,
        Kind::Busy,
        Kind::BranchCheckedOut,
        Kind::RecoverFailed,
        Kind::RollbackFailed,
        Kind::UnknownPatch,
        Kind::NothingToUndo,
        Kind::AlreadyUndone,
        Kind::ChangedSince,
        Kind::Internal,
        Kind::Io,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::InvalidPatch => "invalid_patch",
            Kind::Usage => "usage",
            Kind::Config => "config",
            Kind::InvalidEdits => "invalid_edits",
            Kind::NotARepository => "not_a_repository",
            Kind::BareRepository => "bare_repository",
            Kind::Git => "git",
            Kind::ConcurrentModification => "concurrent_modification",
            Kind::InvalidState => "invalid_state",
            Kind::NoIdentity => "no_identity",
            Kind::RefMoved => "ref_moved",
            Kind::OperationInProgress => "operation_in_progress",
            Kind::IndexLocked => "index_locked",
            Kind::InsideGitCommand => "inside_git_command",
            Kind::Busy => "busy",
            Kind::BranchCheckedOut => "branch_checked_out",
            Kind::RecoverFailed => "recover_failed",
            Kind::RollbackFailed => "rollback_failed",
            Kind::UnknownPatch => "unknown_patch",
            Kind::NothingToUndo => "nothing_to_undo",
            Kind::AlreadyUndone => "already_undone",
            Kind::ChangedSince => "changed_since",
            Kind::Internal => "internal",
            Kind::Io => "io",
        }
    }

    /// The exit code of every kind, in one place: 3 for what the caller can fix in the input
    /// (the patch, the arguments, the configuration, which patch to undo), 4 for the
    /// environment (the repository's state, git, the file system, other writers) and for
    /// patchgate's own bugs.
    pub fn exit(self) -> Exit {
        match self {
            Kind::InvalidPatch
            | Kind::Usage
            | Kind::Config
            | Kind::InvalidEdits
            | Kind::UnknownPatch
            | Kind::NothingToUndo => Exit::InvalidInput,
            Kind::NotARepository
            | Kind::BareRepository
            | Kind::Git
            | Kind::ConcurrentModification
            | Kind::InvalidState
            | Kind::NoIdentity
            | Kind::RefMoved
            | Kind::OperationInProgress
            | Kind::IndexLocked
            | Kind::InsideGitCommand
            | Kind::Busy
            | Kind::BranchCheckedOut
            | Kind::RecoverFailed
            | Kind::RollbackFailed
            | Kind::AlreadyUndone
            | Kind::ChangedSince
            | Kind::Internal
            | Kind::Io => Exit::Environment,
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
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
#[diagnostic(code(patchgate::invalid_patch), help("{help}"))]
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
        code(patchgate::invalid_patch),
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

    /// A `.patchgate.toml` that cannot be used; the message names the file and the key.
    #[error("invalid configuration: {message}")]
    #[diagnostic(code(patchgate::config), help("{help}"))]
    Config { message: String, help: String },

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
        code(patchgate::not_a_repository),
        help(
            "run patchgate inside a git working tree, or point at one with -C DIR (`git init` makes one)"
        )
    )]
    NotARepo { path: PathBuf },

    #[error("the repository at {} has no working tree", path.display())]
    #[diagnostic(
        code(patchgate::bare_repository),
        help("patchgate edits files in a working tree; run it in a checkout of this repository")
    )]
    BareRepo { path: PathBuf },

    /// `source`: the git2 (or subprocess) error underneath, when there is one, so that a
    /// rendering shows the cause chain and a caller can inspect it.
    #[error("git: {message}")]
    #[diagnostic(code(patchgate::git), help("{help}"))]
    Git {
        message: String,
        help: String,
        #[source]
        source: Option<Cause>,
    },

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
        code(patchgate::concurrent_modification),
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
        code(patchgate::no_identity),
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
        code(patchgate::operation_in_progress),
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
        code(patchgate::inside_git_command),
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
    #[diagnostic(code(patchgate::recover_failed), help("{help}"))]
    Recover {
        id: String,
        message: String,
        help: String,
    },

    #[error("{cause}; the patch was undone, except in {} (changed again after patchgate wrote them: left as they are)", left.join(", "))]
    #[diagnostic(
        code(patchgate::concurrent_modification),
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

    #[error(
        "cannot undo patch {id}: {path} now leads through a symlink, {link}, and may lead outside the repository"
    )]
    #[diagnostic(
        code(patchgate::changed_since),
        help(
            "undo never reads or writes through a symlink, so nothing was changed. If the real \
             folder was moved aside, put it back at {link} (`ls -l {link}` shows where the link \
             points) and run the undo again; if the symlink is meant to stay, revert the patch's \
             files by hand"
        )
    )]
    ThroughSymlink {
        id: String,
        path: String,
        link: String,
    },

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
    /// The exit code: the one of the error's kind ([`Kind::exit`]).
    pub fn exit(&self) -> Exit {
        self.kind().exit()
    }

    /// The error's one public name: `error.kind` in the JSON report, and `patchgate::<kind>` as
    /// the miette code (a test holds the two together).
    pub fn kind(&self) -> Kind {
        match self {
            Error::Patch(_) | Error::PatchRead { .. } => Kind::InvalidPatch,
            Error::Usage { .. } => Kind::Usage,
            Error::Config { .. } => Kind::Config,
            Error::InvalidEdits { .. } => Kind::InvalidEdits,
            Error::NotARepo { .. } => Kind::NotARepository,
            Error::BareRepo { .. } => Kind::BareRepository,
            Error::Git { .. } => Kind::Git,
            Error::ConcurrentModification { .. }
            | Error::PathChanged { .. }
            | Error::UndoneExcept { .. } => Kind::ConcurrentModification,
            Error::InvalidState { .. } => Kind::InvalidState,
            Error::Identity { .. } => Kind::NoIdentity,
            Error::RefMoved { .. } => Kind::RefMoved,
            Error::RepoState { .. } => Kind::OperationInProgress,
            Error::IndexLocked { .. } => Kind::IndexLocked,
            Error::InsideGit => Kind::InsideGitCommand,
            Error::Busy { .. } => Kind::Busy,
            Error::BranchCheckedOut { .. } => Kind::BranchCheckedOut,
            Error::Recover { .. } => Kind::RecoverFailed,
            Error::RollbackFailed { .. } => Kind::RollbackFailed,
            Error::UnknownPatch { .. } => Kind::UnknownPatch,
            Error::NothingToUndo { .. } => Kind::NothingToUndo,
            Error::AlreadyUndone { .. } => Kind::AlreadyUndone,
            Error::ChangedSince { .. } | Error::ThroughSymlink { .. } => Kind::ChangedSince,
            Error::Internal { .. } => Kind::Internal,
            Error::Io { .. } => Kind::Io,
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
            source: Some(Box::new(err)),
        }
    }

    /// A git failure described by `message`, caused by `source`.
    pub fn git_caused(message: String, help: impl Into<String>, source: impl Into<Cause>) -> Self {
        Error::Git {
            message,
            help: help.into(),
            source: Some(source.into()),
        }
    }

    /// A git failure with no underlying error value (a refused state, a failed git command's
    /// output).
    pub fn git_msg(message: String, help: impl Into<String>) -> Self {
        Error::Git {
            message,
            help: help.into(),
            source: None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error underneath an [`Error::Git`].
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn io_error() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied")
    }

    /// One value of every variant.
    fn samples() -> Vec<Error> {
        let s = String::new;
        vec![
            Error::Patch(Box::new(PatchError {
                message: s(),
                help: s(),
                source_code: None,
                span: None,
                label: s(),
                line: None,
                column: None,
            })),
            Error::PatchRead {
                path: s(),
                source: io_error(),
            },
            Error::Usage {
                message: s(),
                help: s(),
            },
            Error::Config {
                message: s(),
                help: s(),
            },
            Error::InvalidEdits { count: 1, total: 2 },
            Error::NotARepo { path: "x".into() },
            Error::BareRepo { path: "x".into() },
            Error::git(git2::Error::from_str("boom")),
            Error::ConcurrentModification { path: s() },
            Error::PathChanged {
                path: s(),
                detail: s(),
            },
            Error::InvalidState {
                file: "x".into(),
                field: s(),
                problem: s(),
                help: s(),
            },
            Error::Identity { role: s() },
            Error::RefMoved {
                refname: s(),
                detail: s(),
            },
            Error::RepoState { state: s() },
            Error::IndexLocked { path: "x".into() },
            Error::InsideGit,
            Error::Busy { pid: 1 },
            Error::BranchCheckedOut {
                name: s(),
                worktree: "x".into(),
            },
            Error::Recover {
                id: s(),
                message: s(),
                help: s(),
            },
            Error::UndoneExcept {
                cause: s(),
                left: vec![],
            },
            Error::RollbackFailed { paths: vec![] },
            Error::UnknownPatch { id: s(), help: s() },
            Error::NothingToUndo {
                reason: s(),
                help: s(),
            },
            Error::AlreadyUndone { id: s(), by: s() },
            Error::ChangedSince {
                id: s(),
                paths: vec![],
            },
            Error::ThroughSymlink {
                id: s(),
                path: s(),
                link: s(),
            },
            Error::Internal {
                message: s(),
                help: s(),
            },
            Error::io("read", "x", io_error()),
        ]
    }

    /// How many variants `Error` has: the match below has one arm each.
    const VARIANTS: usize = 28;

    /// The documented name and exit code of a variant, spelled out independently of
    /// [`Error::kind`] (docs/report.md is the contract), with the arm's index. No wildcard: a new
    /// variant does not compile until it is listed here, with the next index and a sample above.
    fn expected(e: &Error) -> (usize, &'static str, i32) {
        match e {
            Error::Patch(_) => (0, "invalid_patch", 3),
            Error::PatchRead { .. } => (1, "invalid_patch", 3),
            Error::Usage { .. } => (2, "usage", 3),
            Error::Config { .. } => (3, "config", 3),
            Error::InvalidEdits { .. } => (4, "invalid_edits", 3),
            Error::NotARepo { .. } => (5, "not_a_repository", 4),
            Error::BareRepo { .. } => (6, "bare_repository", 4),
            Error::Git { .. } => (7, "git", 4),
            Error::ConcurrentModification { .. } => (8, "concurrent_modification", 4),
            Error::PathChanged { .. } => (9, "concurrent_modification", 4),
            Error::InvalidState { .. } => (10, "invalid_state", 4),
            Error::Identity { .. } => (11, "no_identity", 4),
            Error::RefMoved { .. } => (12, "ref_moved", 4),
            Error::RepoState { .. } => (13, "operation_in_progress", 4),
            Error::IndexLocked { .. } => (14, "index_locked", 4),
            Error::InsideGit => (15, "inside_git_command", 4),
            Error::Busy { .. } => (16, "busy", 4),
            Error::BranchCheckedOut { .. } => (17, "branch_checked_out", 4),
            Error::Recover { .. } => (18, "recover_failed", 4),
            Error::UndoneExcept { .. } => (19, "concurrent_modification", 4),
            Error::RollbackFailed { .. } => (20, "rollback_failed", 4),
            Error::UnknownPatch { .. } => (21, "unknown_patch", 3),
            Error::NothingToUndo { .. } => (22, "nothing_to_undo", 3),
            Error::AlreadyUndone { .. } => (23, "already_undone", 4),
            Error::ChangedSince { .. } => (24, "changed_since", 4),
            Error::Internal { .. } => (25, "internal", 4),
            Error::Io { .. } => (26, "io", 4),
            Error::ThroughSymlink { .. } => (27, "changed_since", 4),
        }
    }

    #[test]
    fn every_error_has_one_name_and_its_kinds_exit_code() {
        let mut seen = BTreeSet::new();
        let mut kinds = BTreeSet::new();
        for e in samples() {
            let (index, kind, exit) = expected(&e);
            assert!(seen.insert(index), "two samples of variant {index}");
            assert_eq!(e.kind().name(), kind, "{e:?}");
            let code = e.code().map(|c| c.to_string());
            assert_eq!(
                code.as_deref(),
                Some(&*format!("patchgate::{kind}")),
                "{e:?}"
            );
            assert_eq!(e.exit().code(), exit, "{e:?}");
            assert_eq!(e.exit(), e.kind().exit(), "{e:?}");
            kinds.insert(kind);
        }
        assert_eq!(seen, (0..VARIANTS).collect(), "a sample of every variant");
        let all: BTreeSet<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(all.len(), Kind::ALL.len(), "kinds are named once");
        assert_eq!(
            kinds, all,
            "every kind is some variant's, and listed in Kind::ALL"
        );
    }

    #[test]
    fn exit_codes_are_grouped_by_kind() {
        for k in Kind::ALL {
            let want = match k.name() {
                "invalid_patch" | "usage" | "config" | "invalid_edits" | "unknown_patch"
                | "nothing_to_undo" => Exit::InvalidInput,
                _ => Exit::Environment,
            };
            assert_eq!(k.exit(), want, "{k}");
        }
        assert_eq!(
            [
                Exit::Success,
                Exit::ChecksFailed,
                Exit::EditFailed,
                Exit::InvalidInput,
                Exit::Environment
            ]
            .map(Exit::code),
            [0, 1, 2, 3, 4]
        );
    }

    #[test]
    fn the_git_error_underneath_is_the_cause() {
        use std::error::Error as _;
        let e = Error::git(git2::Error::from_str("object not found"));
        let cause = e.source().map(|c| c.to_string());
        assert!(
            cause
                .as_deref()
                .is_some_and(|c| c.contains("object not found")),
            "{cause:?}"
        );
        let io = Error::io("read", "x", io_error());
        assert!(io.source().is_some());
        // The chain is what miette prints under the message.
        let mut out = String::new();
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .render_report(&mut out, &e)
            .expect("render");
        assert!(out.contains("patchgate::git"), "{out}");
        assert!(out.matches("object not found").count() >= 2, "{out}");
    }
}
