//! What planning produces: the outcome of every edit (status, match, suggestions, the snippet a
//! miss shows), the before and after state of every path that changes, and the [`Plan`] that
//! carries them to the checks, the transaction and the report.

use super::*;

#[derive(Clone, Copy, Default)]
pub struct Options<'a> {
    pub lenient: bool,
    /// Where a miss looks for earlier versions of a file (`stale` suggestions, and the place of
    /// the previous patch); `None`: no look-back.
    pub history: Option<History<'a>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditStatus {
    Applied,
    AlreadyApplied,
    NotFound,
    Ambiguous,
    Error,
}

/// Why an edit is `error`, where a caller can act on the reason itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `expect_sha256` does not match the file as read: it changed since the caller read it.
    Stale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Whitespace,
    Unicode,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    pub start_line: usize,
    pub end_line: usize,
    pub similarity: f64,
    pub kind: CandidateKind,
    /// For `Lines`: which line was dropped from or added to `old_string`; for `Symbol`: which
    /// line anchored it; for `Stale`: which change replaced the text.
    pub note: Option<String>,
    /// The file's actual text for those lines, with its own line endings.
    pub text: String,
    /// For `Stale`: the patch or commit that replaced the text.
    pub source: Option<ChangeSource>,
}

/// The file text and the ranges a human report underlines for a miss.
#[derive(Debug, Clone)]
pub struct Snippet {
    pub path: String,
    pub text: Arc<String>,
    pub labels: Vec<(Range<usize>, String)>,
}

#[derive(Debug, Clone)]
pub struct EditOutcome {
    pub index: usize,
    pub file_path: String,
    pub status: EditStatus,
    pub match_kind: Option<MatchKind>,
    pub replacements: usize,
    pub lines: Vec<(usize, usize)>,
    pub suggestions: Vec<Suggestion>,
    pub message: Option<String>,
    /// Set for some `Error` outcomes (see [`ErrorKind`]).
    pub error_kind: Option<ErrorKind>,
    /// The edit is invalid input (exit 3), not merely a miss.
    pub invalid: bool,
    /// Where the edit stands in the patch file.
    pub patch_span: Option<SourceSpan>,
    pub snippet: Option<Snippet>,
    /// The hunk of a converted input format the edit came from.
    pub origin: Option<Hunk>,
}

/// A path's content on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disk {
    Missing,
    File { bytes: Arc<Vec<u8>>, mode: u32 },
    Symlink { target: PathBuf },
    Dir,
    Other,
}

impl Disk {
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Disk::File { bytes, .. } => Some(bytes),
            _ => None,
        }
    }

    /// The content, shared (not copied).
    pub fn shared(&self) -> Option<Arc<Vec<u8>>> {
        match self {
            Disk::File { bytes, .. } => Some(Arc::clone(bytes)),
            _ => None,
        }
    }
}

/// One path whose state changes: write-back turns `before` into `after`.
#[derive(Debug, Clone)]
pub struct PathChange {
    pub rel: String,
    pub before: Disk,
    pub after: Disk,
    /// For a file read from the working tree: its stamp just before the plan read it, and the
    /// moment the plan began reading. Where the file still has that stamp and the stamp proves
    /// it unwritten since ([`crate::fs::stamp`]), write-back need not read it again.
    pub read: Option<(crate::fs::stamp::Stamp, crate::fs::stamp::Moment)>,
    /// The blob ids of `before` and `after`, where the planner hashed them already (a file
    /// planned in one pass, on the core that read it); the transaction hashes the others.
    pub ids: Option<(git2::Oid, git2::Oid)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Modified,
    Created,
    Deleted,
    Renamed,
}

impl ChangeKind {
    /// The name every report and the default commit message use.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Modified => "modified",
            ChangeKind::Created => "created",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Renamed => "renamed",
        }
    }
}

/// A changed file as the report shows it (a rename is one entry, not a delete and a create).
#[derive(Debug, Clone)]
pub struct FileChange {
    pub path: String,
    pub from: Option<String>,
    pub change: ChangeKind,
    /// A regular file's content (a symlink's target is in `links`).
    pub before: Option<Arc<Vec<u8>>>,
    pub after: Option<Arc<Vec<u8>>>,
    /// git's mode of each side (`0o100644`, `0o100755`, `0o120000`); `None`: no file there.
    pub modes: (Option<u32>, Option<u32>),
    /// A symlink's target on each side.
    pub links: (Option<PathBuf>, Option<PathBuf>),
    /// Where a modified text file's bytes changed, when the planner knows it (its edits planned
    /// in one pass); the report's diff then looks there alone.
    pub changed: Option<Vec<crate::text::Changed>>,
}

impl FileChange {
    /// The report's view of a path that changed from `before` to `after`.
    pub fn new(
        path: String,
        from: Option<String>,
        change: ChangeKind,
        before: &Disk,
        after: &Disk,
    ) -> FileChange {
        let link = |d: &Disk| match d {
            Disk::Symlink { target } => Some(target.clone()),
            _ => None,
        };
        FileChange {
            path,
            from,
            change,
            before: before.shared(),
            after: after.shared(),
            modes: (diffops::git_mode(before), diffops::git_mode(after)),
            links: (link(before), link(after)),
            changed: None,
        }
    }
}

#[derive(Debug)]
pub struct Plan {
    pub outcomes: Vec<EditOutcome>,
    pub changes: Vec<PathChange>,
    pub files: Vec<FileChange>,
    /// Digests of the edits this plan applies, for the re-run record.
    pub digests: Vec<String>,
    /// The whole patch's digest (`None` when an edit is invalid), and the state it leaves.
    pub patch_digest: Option<String>,
    pub final_state: Vec<(String, Option<String>)>,
}

impl Plan {
    /// Replaces the new content of a path (what `--fix` formatted), keeping every view in step.
    pub fn set_after(&mut self, rel: &str, bytes: Vec<u8>) {
        let bytes = Arc::new(bytes);
        for c in &mut self.changes {
            if c.rel == rel
                && let Disk::File { bytes: b, .. } = &mut c.after
            {
                *b = Arc::clone(&bytes);
                c.ids = None;
            }
        }
        for f in &mut self.files {
            if f.path == rel {
                f.after = Some(Arc::clone(&bytes));
                f.changed = None;
            }
        }
        let hash = content_hash(&bytes);
        for (path, h) in &mut self.final_state {
            if path == rel {
                *h = Some(hash.clone());
            }
        }
    }

    pub fn has_invalid(&self) -> bool {
        self.outcomes.iter().any(|o| o.invalid)
    }

    pub fn has_failed(&self) -> bool {
        self.outcomes.iter().any(|o| {
            matches!(
                o.status,
                EditStatus::NotFound | EditStatus::Ambiguous | EditStatus::Error
            )
        })
    }
}
