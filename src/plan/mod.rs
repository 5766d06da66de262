//! Planning: every edit of a patch checked and applied in memory, nothing written.
//!
//! The planner holds a small virtual file system: each path the patch touches is read once from the
//! working tree into a slot, and edits apply to the slots in order, so later edits of a file see the
//! result of earlier ones, and after a `move_to` the file is found under its new name. Every edit is
//! tried, even after one failed, so the report shows every problem of the batch at once.
//!
//! Invariants:
//! - Nothing here writes to disk. The output is a [`Plan`]: per-edit outcomes, and the exact before
//!   and after state of every path that changes (the before state is what write-back re-verifies).
//! - An edit applies only on an exact match (line endings aside, see [`doc`]) unless `lenient` is
//!   set, and then only on a *unique* whitespace/unicode match; a fuzzy candidate is never applied.
//! - `lines` are always the line numbers of the file as it was just before that edit.

mod diffops;
pub mod doc;
mod near;
pub mod record;
mod scope;
pub mod suggest;
mod whole;

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use miette::SourceSpan;

use crate::patch::{Edit, Hunk, Op, Patch, Replace};
use crate::repo::{Resolved, Roots};
use doc::{TextDoc, fold_eol};
use record::Record;
pub use suggest::History;
use suggest::{CandidateKind, ChangeSource, RelaxedOutcome};

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
            }
        }
        for f in &mut self.files {
            if f.path == rel {
                f.after = Some(Arc::clone(&bytes));
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

/// In-memory state of one path during planning.
#[derive(Debug, Clone)]
enum Content {
    Missing,
    Dir,
    Other(String),
    Link(PathBuf),
    File {
        bytes: Arc<Vec<u8>>,
        mode: u32,
        doc: Option<TextDoc>,
        changed: bool,
    },
}

#[derive(Debug)]
struct Slot {
    content: Content,
    /// The path this content was moved from (followed through chains of moves).
    origin: Option<String>,
}

/// Where the files a patch edits are read from.
pub enum Source<'a> {
    /// The working tree, as it is now (uncommitted changes included).
    WorkTree,
    /// A commit's tree (`--branch`: the branch's tip, with no working tree involved).
    Tree {
        repo: &'a git2::Repository,
        tree: &'a git2::Tree<'a>,
    },
}

struct Planner<'a> {
    roots: &'a Roots,
    /// The patch is a unified diff: its paths and file types are checked as `git apply` does.
    diff: bool,
    source: &'a Source<'a>,
    record: &'a Record,
    opts: Options<'a>,
    order: Vec<String>,
    slots: HashMap<String, Slot>,
    originals: HashMap<String, Disk>,
    resolved: std::cell::RefCell<HashMap<String, Result<Resolved, String>>>,
}

/// Plans a patch against the working tree under `roots`.
pub fn plan(patch: &Patch, roots: &Roots, source: &Source, record: &Record, opts: Options) -> Plan {
    let mut p = Planner {
        roots,
        diff: patch.source.format == crate::patch::Format::Diff,
        source,
        record,
        opts,
        order: Vec::new(),
        slots: HashMap::new(),
        originals: HashMap::new(),
        resolved: std::cell::RefCell::new(HashMap::new()),
    };
    // Each edit's digest, once: the whole patch's digest is made of them, and the record of
    // applied edits needs them again.
    let edit_digests: Vec<Option<String>> = patch
        .edits
        .iter()
        .map(|e| {
            let op = e.op.as_ref().ok()?;
            let rel = p.resolve(&e.file_path).ok()?.rel;
            Some(record::digest(&rel, op))
        })
        .collect();
    let patch_digest = edit_digests
        .iter()
        .cloned()
        .collect::<Option<Vec<String>>>()
        .map(|parts| record::combine(&parts));
    if let Some(d) = &patch_digest
        && let Some(plan) = p.whole_patch_applied(patch, d)
    {
        return plan;
    }
    crate::timing::mark("plan: edits digested");
    let mut outcomes = Vec::with_capacity(patch.edits.len());
    let mut digests = Vec::new();
    for (edit, digest) in patch.edits.iter().zip(edit_digests) {
        let (outcome, digest) = p.run(edit, digest);
        if outcome.status == EditStatus::Applied {
            digests.extend(digest);
        }
        outcomes.push(outcome);
    }
    crate::timing::mark("plan: edits matched");
    let (changes, files, final_state) = p.finish();
    Plan {
        outcomes,
        changes,
        files,
        digests,
        patch_digest,
        final_state,
    }
}

fn content_hash(b: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(b))
}

/// A path's state as the re-run record knows it: the hash of a file's bytes or a link's target,
/// `None` when missing.
fn disk_hash(disk: &Disk) -> Option<String> {
    match disk {
        Disk::File { bytes, .. } => Some(content_hash(bytes)),
        Disk::Symlink { target } => Some(content_hash(
            format!("link:{}", target.display()).as_bytes(),
        )),
        Disk::Missing => None,
        Disk::Dir | Disk::Other => Some("other".into()),
    }
}

/// What one edit step returns before it is wrapped into an [`EditOutcome`].
struct Step {
    status: EditStatus,
    match_kind: Option<MatchKind>,
    replacements: usize,
    lines: Vec<(usize, usize)>,
    suggestions: Vec<Suggestion>,
    message: Option<String>,
    snippet: Option<Snippet>,
}

impl Step {
    fn new(status: EditStatus) -> Step {
        Step {
            status,
            match_kind: None,
            replacements: 0,
            lines: Vec::new(),
            suggestions: Vec::new(),
            message: None,
            snippet: None,
        }
    }
    fn msg(status: EditStatus, m: impl Into<String>) -> Step {
        let mut s = Step::new(status);
        s.message = Some(m.into());
        s
    }
    fn applied(kind: Option<MatchKind>, replacements: usize, lines: Vec<(usize, usize)>) -> Step {
        let mut s = Step::new(EditStatus::Applied);
        s.match_kind = kind;
        s.replacements = replacements;
        s.lines = lines;
        s
    }
}

impl Planner<'_> {
    /// A retry of a whole patch that patchgate applied before: every path it touched still holds
    /// what the patch left there. Chained edits (A→B, then B→C) can only be recognised this way:
    /// the first edit's `new_string` is gone, consumed by the second.
    fn whole_patch_applied(&mut self, patch: &Patch, digest: &str) -> Option<Plan> {
        let states = self.record.patch_states(digest)?;
        let matches = states.iter().any(|files| {
            files.iter().all(|(path, want)| {
                // Loads the path; its original state is what is on disk now.
                self.slot(path);
                self.originals.get(path.as_str()).and_then(disk_hash) == *want
            })
        });
        if !matches {
            return None;
        }
        let outcomes = patch
            .edits
            .iter()
            .map(|e| EditOutcome {
                index: e.index,
                file_path: self
                    .resolve(&e.file_path)
                    .map(|r| r.rel)
                    .unwrap_or_else(|_| e.file_path.clone()),
                status: EditStatus::AlreadyApplied,
                match_kind: None,
                replacements: 0,
                lines: Vec::new(),
                suggestions: Vec::new(),
                message: Some("this patch was already applied by patchgate; nothing to do".into()),
                error_kind: None,
                invalid: false,
                patch_span: e.span,
                snippet: None,
                origin: e.origin.clone(),
            })
            .collect();
        Some(Plan {
            outcomes,
            changes: Vec::new(),
            files: Vec::new(),
            digests: Vec::new(),
            patch_digest: Some(digest.to_string()),
            final_state: Vec::new(),
        })
    }

    /// Runs one edit; `digest` is its record digest (computed with the same resolved path).
    fn run(&mut self, edit: &Edit, digest: Option<String>) -> (EditOutcome, Option<String>) {
        let mut out = EditOutcome {
            index: edit.index,
            file_path: edit.file_path.clone(),
            status: EditStatus::Error,
            match_kind: None,
            replacements: 0,
            lines: Vec::new(),
            suggestions: Vec::new(),
            message: None,
            error_kind: None,
            invalid: false,
            patch_span: edit.span,
            snippet: None,
            origin: edit.origin.clone(),
        };
        let op = match &edit.op {
            Ok(op) => op,
            Err(why) => {
                out.invalid = true;
                out.message = Some(why.clone());
                return (out, None);
            }
        };
        let mut resolved = match self.resolve(&edit.file_path) {
            Ok(r) => r,
            Err(why) => {
                out.invalid = true;
                out.message = Some(why);
                return (out, None);
            }
        };
        if self.diff {
            // A diff names paths, never what a symlink points to (`git apply` uses lstat).
            resolved.real = resolved.rel.clone();
        }
        out.file_path = resolved.rel.clone();
        let digest = digest.unwrap_or_else(|| record::digest(&resolved.rel, op));
        if let Some(want) = &edit.expect_sha256 {
            let key = if resolved.is_link && matches!(op, Op::Delete | Op::Move { .. }) {
                &resolved.rel
            } else {
                &resolved.real
            };
            if let Some(why) = self.stale(key, &resolved.rel, want) {
                out.error_kind = Some(ErrorKind::Stale);
                out.message = Some(why);
                return (out, Some(digest));
            }
        }
        let recorded = self.record.contains(&digest);
        if let Some((why, invalid)) = self.refuse_for_diff(&resolved, op, recorded) {
            out.invalid = invalid;
            out.message = Some(why);
            return (out, Some(digest));
        }
        let step = match op {
            // A YAML/JSON edit that would change nothing is invalid input; a converted hunk
            // (no `old_string` of its own) is not checked here.
            Op::Replace(r) if edit.origin.is_none() && fold_eol(&r.old) == fold_eol(&r.new) => {
                out.invalid = true;
                self.unchanged(&resolved.real, &resolved.rel, r)
            }
            Op::Replace(r) => self.replace(&resolved.real, &resolved.rel, r, recorded),
            Op::Create { content } => {
                self.create(&resolved.real, content, recorded, edit.replace_existing)
            }
            Op::Delete => {
                let key = if resolved.is_link {
                    &resolved.rel
                } else {
                    &resolved.real
                };
                self.delete(key, recorded)
            }
            Op::Append { text, create } => {
                if *create && matches!(self.slot(&resolved.real).content, Content::Missing) {
                    self.create(&resolved.real, text, recorded, false)
                } else {
                    self.append(&resolved.real, text, recorded)
                }
            }
            Op::Move { to, replace } => match self.resolve(to) {
                Err(why) => {
                    out.invalid = true;
                    Step::msg(EditStatus::Error, why)
                }
                Ok(_) if resolved.is_link && replace.is_some() => {
                    // Moving the link but editing its target is two operations on two paths.
                    out.invalid = true;
                    Step::msg(
                        EditStatus::Error,
                        format!(
                            "`{}` is a symlink: move_to moves the link itself, so it cannot also edit the \
                             target's text; use two edits (one on the target's path, one move_to)",
                            edit.file_path
                        ),
                    )
                }
                Ok(dest) => {
                    let src = if resolved.is_link {
                        &resolved.rel
                    } else {
                        &resolved.real
                    };
                    if let Some(why) = self.link_escapes_at(src, &dest.real) {
                        out.invalid = true;
                        Step::msg(EditStatus::Error, why)
                    } else {
                        let over = edit.replace_existing;
                        self.move_to(
                            src,
                            &resolved.rel,
                            &dest.real,
                            replace.as_ref(),
                            recorded,
                            over,
                        )
                    }
                }
            },
            Op::Mode { executable } => self.set_mode(&resolved, *executable, recorded),
            Op::Link { old, new } => match new.as_deref().and_then(|t| {
                let key = if resolved.is_link {
                    &resolved.rel
                } else {
                    &resolved.real
                };
                self.link_escapes(key, t)
            }) {
                Some(why) => {
                    out.invalid = true;
                    Step::msg(EditStatus::Error, why)
                }
                None => self.link(&resolved, old.as_deref(), new.as_deref(), recorded),
            },
            Op::Copy { to } => match self.resolve(to) {
                Err(why) => {
                    out.invalid = true;
                    Step::msg(EditStatus::Error, why)
                }
                Ok(dest) => match self.link_escapes_at(&resolved.real, &dest.real) {
                    Some(why) => {
                        out.invalid = true;
                        Step::msg(EditStatus::Error, why)
                    }
                    None => self.copy(&resolved, &dest.real, recorded),
                },
            },
            Op::Binary(b) => self.binary(&resolved, b, recorded),
            Op::Insert(ins) => self.insert(&resolved, ins, recorded),
        };
        out.status = step.status;
        out.match_kind = step.match_kind;
        out.replacements = step.replacements;
        out.lines = step.lines;
        out.suggestions = step.suggestions;
        out.message = step.message;
        out.snippet = step.snippet;
        (out, Some(digest))
    }

    /// Why `key` does not hold the bytes `want` (a SHA-256 in hex) names, or `None` when it does.
    /// The bytes compared are those read for the plan, before any edit of this patch: the state
    /// the caller saw. After a `move_to` in this patch, that is the moved file's original.
    fn stale(&mut self, key: &str, shown: &str, want: &str) -> Option<String> {
        let origin = self.slot(key).origin.clone();
        let original = self.originals.get(origin.as_deref().unwrap_or(key));
        let current = match original {
            Some(Disk::File { bytes, .. }) => content_hash(bytes),
            Some(Disk::Missing) | None => {
                return Some(format!(
                    "{shown} does not exist, but expect_sha256 was given: re-read the file and \
                     rewrite the edit"
                ));
            }
            Some(_) => {
                return Some(format!(
                    "{shown} is not a regular file, but expect_sha256 was given"
                ));
            }
        };
        (current != want).then(|| {
            format!(
                "{shown} changed since it was read: its sha256 is {current}, not the expected \
                 {want}; re-read the file and rewrite the edit against its current text"
            )
        })
    }

    /// Resolves a patch path, once per distinct spelling: a batch names the same file many times,
    /// and resolving walks the file system (symlink checks) component by component.
    fn resolve(&self, given: &str) -> Result<Resolved, String> {
        if let Some(r) = self.resolved.borrow().get(given) {
            return r.clone();
        }
        let r = match self.source {
            Source::WorkTree => self.roots.resolve(given),
            // A tree has no symlinks to follow on the way: a link entry is refused where it is used.
            Source::Tree { .. } => self.roots.resolve_lexical(given),
        };
        self.resolved
            .borrow_mut()
            .insert(given.to_string(), r.clone());
        r
    }

    /// Loads a path's slot from disk on first use.
    fn slot(&mut self, key: &str) -> &mut Slot {
        if !self.slots.contains_key(key) {
            let (content, disk) = match self.source {
                Source::WorkTree => read_disk(self.roots.fs(), key),
                Source::Tree { repo, tree } => read_tree(repo, tree, key),
            };
            self.originals.insert(key.to_string(), disk);
            self.order.push(key.to_string());
            self.slots.insert(
                key.to_string(),
                Slot {
                    content,
                    origin: None,
                },
            );
        }
        // Inserted just above when missing; the fallback is never taken.
        self.slots.entry(key.to_string()).or_insert(Slot {
            content: Content::Missing,
            origin: None,
        })
    }

    /// The decoded text of a file, or the step that explains why there is none.
    fn text_of(&mut self, key: &str, shown: &str) -> Result<&mut TextDoc, Box<Step>> {
        let fail = |status, m: String| Err(Box::new(Step::msg(status, m)));
        let slot = self.slot(key);
        match &mut slot.content {
            Content::Missing => fail(
                EditStatus::NotFound,
                format!("{shown} does not exist (to make a new file use `create: true`)"),
            ),
            Content::Dir => fail(
                EditStatus::Error,
                format!("{shown} is a directory, not a file"),
            ),
            Content::Other(why) => fail(EditStatus::Error, format!("{shown} {why}")),
            Content::Link(_) => fail(EditStatus::Error, format!("{shown} is a symlink")),
            Content::File { bytes, doc, .. } => {
                let decoded = match doc.take() {
                    Some(d) => d,
                    None => match TextDoc::decode(bytes) {
                        Ok(d) => d,
                        Err(e) => return fail(EditStatus::Error, format!("{shown} {e}")),
                    },
                };
                Ok(doc.insert(decoded))
            }
        }
    }

    fn mark_changed(&mut self, key: &str) {
        if let Some(Slot {
            content: Content::File { changed, .. },
            ..
        }) = self.slots.get_mut(key)
        {
            *changed = true;
        }
    }

    fn replace(&mut self, key: &str, shown: &str, r: &Replace, recorded: bool) -> Step {
        let opts = self.opts;
        let original = self.originals.get(key).and_then(Disk::shared);
        let doc = match self.text_of(key, shown) {
            Ok(d) => d,
            Err(step) => {
                return *step;
            }
        };
        let ctx = MissCtx {
            lenient: opts.lenient,
            lookback: opts.history.map(|history| suggest::Lookback {
                history,
                key,
                original: original.as_deref().map(Vec::as_slice),
            }),
        };
        let step = replace_with(doc, shown, r, recorded, &ctx);
        if step.status == EditStatus::Applied {
            self.mark_changed(key);
        }
        step
    }

    /// An edit whose `new_string` equals its `old_string`: invalid input, refused whatever the
    /// file holds. When `old_string` is not in the file either, the message says so too, with
    /// the suggestions of a miss (an agent re-sending remembered text unchanged usually has an
    /// out-of-date picture of the file).
    fn unchanged(&mut self, key: &str, shown: &str, r: &Replace) -> Step {
        const WHY: &str =
            "`old_string` and `new_string` are identical: this edit would change nothing";
        let opts = self.opts;
        let original = self.originals.get(key).and_then(Disk::shared);
        let Ok(doc) = self.text_of(key, shown) else {
            return Step::msg(EditStatus::Error, WHY);
        };
        let old = fold_eol(&r.old);
        let scope = match scope::resolve(doc, shown, r) {
            Ok(s) => s,
            Err(_) => return Step::msg(EditStatus::Error, WHY),
        };
        if !whole::find(doc.text(), &scope, &old, r).is_empty() {
            return Step::msg(EditStatus::Error, WHY);
        }
        let ctx = MissCtx {
            lenient: false,
            lookback: opts.history.map(|history| suggest::Lookback {
                history,
                key,
                original: original.as_deref().map(Vec::as_slice),
            }),
        };
        let mut s = miss(doc, shown, r, &scope, &old, &old, &ctx);
        s.status = EditStatus::Error;
        s.message = Some(format!(
            "{WHY}; and besides, {}",
            s.message
                .as_deref()
                .unwrap_or("old_string is not in the file")
        ));
        s
    }

    /// `over`: an existing regular file is replaced (codex's `*** Add File:`), keeping its mode.
    fn create(&mut self, key: &str, content: &str, recorded: bool, over: bool) -> Step {
        if let Some(conflict) = self.parent_conflict(key) {
            return Step::msg(
                EditStatus::Error,
                format!("cannot create {key}: {conflict} is a file, not a directory"),
            );
        }
        let slot = self.slot(key);
        let mut mode = crate::fs::NEW_FILE_MODE;
        let mut replaced = false;
        match &slot.content {
            Content::Missing => {}
            Content::File { bytes, .. } if recorded && bytes.as_slice() == content.as_bytes() => {
                return Step::msg(
                    EditStatus::AlreadyApplied,
                    format!("{key} already has this content"),
                );
            }
            Content::File { mode: m, .. } if over => {
                mode = *m;
                replaced = true;
            }
            Content::Dir => {
                return Step::msg(
                    EditStatus::Error,
                    format!("cannot create {key}: it is a directory"),
                );
            }
            _ => {
                return Step::msg(
                    EditStatus::Error,
                    format!(
                        "cannot create {key}: it already exists (edit it with old_string/new_string, or delete it first)"
                    ),
                );
            }
        }
        slot.content = Content::File {
            bytes: Arc::new(content.as_bytes().to_vec()),
            mode,
            doc: None,
            changed: true,
        };
        slot.origin = None;
        let mut step = Step::applied(None, 0, Vec::new());
        if replaced {
            step.message = Some(format!(
                "replaced the existing file {key} with the new content (codex's `*** Add File:` \
                 overwrites a file that is already there)"
            ));
        }
        step
    }

    fn delete(&mut self, key: &str, recorded: bool) -> Step {
        let slot = self.slot(key);
        match &slot.content {
            Content::File { .. } | Content::Link(_) => {
                slot.content = Content::Missing;
                Step::applied(None, 0, Vec::new())
            }
            Content::Missing if recorded => Step::msg(
                EditStatus::AlreadyApplied,
                format!("{key} is already deleted"),
            ),
            Content::Missing => Step::msg(
                EditStatus::NotFound,
                format!("cannot delete {key}: it does not exist"),
            ),
            Content::Dir => Step::msg(
                EditStatus::Error,
                format!("cannot delete {key}: it is a directory (patchgate deletes files only)"),
            ),
            Content::Other(why) => {
                Step::msg(EditStatus::Error, format!("cannot delete {key}: it {why}"))
            }
        }
    }

    fn append(&mut self, key: &str, text: &str, recorded: bool) -> Step {
        let doc = match self.text_of(key, key) {
            Ok(d) => d,
            Err(mut step) => {
                if step.status == EditStatus::NotFound {
                    step.message = Some(format!(
                        "cannot append to {key}: it does not exist (use `create: true` to make it)"
                    ));
                }
                return *step;
            }
        };
        let add = fold_eol(text);
        if add.is_empty() {
            // Nothing to add (a blank aider block on an existing file): the file stays as it is.
            return Step::applied(None, 0, Vec::new());
        }
        if recorded && doc.text().ends_with(add.as_ref()) {
            return Step::msg(
                EditStatus::AlreadyApplied,
                format!("{key} already ends with this text"),
            );
        }
        let first_new_line =
            doc.line_count() + usize::from(doc.text().is_empty() || doc.text().ends_with('\n'));
        doc.append(&add);
        let last = doc.line_count();
        self.mark_changed(key);
        Step::applied(None, 0, vec![(first_new_line.min(last), last)])
    }

    fn move_to(
        &mut self,
        src: &str,
        shown: &str,
        dest: &str,
        replace: Option<&Replace>,
        recorded: bool,
        over: bool,
    ) -> Step {
        if src == dest {
            return Step::msg(
                EditStatus::Error,
                format!("move_to names the same path as file_path ({dest})"),
            );
        }
        if let Some(conflict) = self.parent_conflict(dest) {
            return Step::msg(
                EditStatus::Error,
                format!("cannot move to {dest}: {conflict} is a file, not a directory"),
            );
        }
        let src_missing = matches!(self.slot(src).content, Content::Missing);
        let dest_state = self.slot(dest).content.clone();
        if src_missing {
            if recorded && matches!(dest_state, Content::File { .. } | Content::Link(_)) {
                return Step::msg(
                    EditStatus::AlreadyApplied,
                    format!("{shown} was already moved to {dest}"),
                );
            }
            return Step::msg(
                EditStatus::NotFound,
                format!("cannot move {shown}: it does not exist"),
            );
        }
        let mut replaced = false;
        match dest_state {
            Content::Missing => {}
            // codex's `*** Move to:` onto a file writes over it.
            Content::File { .. } if over => replaced = true,
            Content::Dir => {
                return Step::msg(
                    EditStatus::Error,
                    format!(
                        "cannot move {shown} to {dest}: that is a directory; name the new file path"
                    ),
                );
            }
            _ => {
                return Step::msg(
                    EditStatus::Error,
                    format!("cannot move {shown} to {dest}: {dest} already exists"),
                );
            }
        }
        if matches!(self.slot(src).content, Content::Dir) {
            return Step::msg(
                EditStatus::Error,
                format!("cannot move {shown}: it is a directory"),
            );
        }
        let mut step = Step::applied(None, 0, Vec::new());
        if let Some(r) = replace {
            step = self.replace(src, shown, r, recorded);
            if step.status != EditStatus::Applied {
                return step;
            }
        }
        let src_slot = self.slot(src);
        let content = std::mem::replace(&mut src_slot.content, Content::Missing);
        let origin = src_slot.origin.take().unwrap_or_else(|| src.to_string());
        let dest_slot = self.slot(dest);
        dest_slot.content = content;
        dest_slot.origin = Some(origin);
        if replaced {
            step.message = Some(format!(
                "moved {shown} onto the existing file {dest}, replacing it (codex's `*** Move to:` \
                 overwrites a file that is already there)"
            ));
        }
        step
    }

    /// The first ancestor of `key` that is a file (in the plan or on disk), if any.
    fn parent_conflict(&mut self, key: &str) -> Option<String> {
        let mut prefix = String::new();
        let parts: Vec<&str> = key.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            let is_file = match self.slots.get(&prefix) {
                Some(s) => matches!(
                    s.content,
                    Content::File { .. } | Content::Link(_) | Content::Other(_)
                ),
                None => match self.source {
                    Source::WorkTree => {
                        std::fs::metadata(self.roots.abs(&prefix)).is_ok_and(|m| !m.is_dir())
                    }
                    Source::Tree { tree, .. } => tree
                        .get_path(std::path::Path::new(&prefix))
                        .is_ok_and(|e| e.kind() != Some(git2::ObjectType::Tree)),
                },
            };
            if is_file {
                return Some(prefix);
            }
        }
        None
    }

    /// The net change per path, and the per-file view for the report.
    /// The changed paths, the files as the report shows them, and every touched path with the
    /// hash of what the plan leaves there (for the re-run record).
    #[allow(clippy::type_complexity)]
    fn finish(
        self,
    ) -> (
        Vec<PathChange>,
        Vec<FileChange>,
        Vec<(String, Option<String>)>,
    ) {
        let mut changes = Vec::new();
        let mut finals: HashMap<&str, (Disk, Option<&str>)> = HashMap::new();
        let mut afters = Vec::with_capacity(self.order.len());
        for key in &self.order {
            let slot = &self.slots[key];
            let after = match &slot.content {
                Content::Missing => Disk::Missing,
                Content::Dir => Disk::Dir,
                Content::Other(_) => Disk::Other,
                Content::Link(t) => Disk::Symlink { target: t.clone() },
                Content::File {
                    bytes,
                    mode,
                    doc,
                    changed,
                } => Disk::File {
                    bytes: match (changed, doc) {
                        (true, Some(d)) => Arc::new(d.encode()),
                        _ => Arc::clone(bytes),
                    },
                    mode: *mode,
                },
            };
            let before = self.originals.get(key).cloned().unwrap_or(Disk::Missing);
            afters.push((key.clone(), after.clone()));
            finals.insert(key, (after.clone(), slot.origin.as_deref()));
            if before != after {
                changes.push(PathChange {
                    rel: key.clone(),
                    before,
                    after,
                });
            }
        }

        let mut files = Vec::new();
        let mut renamed_from: Vec<&str> = Vec::new();
        for c in &changes {
            let origin = finals.get(c.rel.as_str()).and_then(|(_, o)| *o);
            let from_gone = origin.is_some_and(|o| {
                finals.get(o).is_some_and(|(d, _)| *d == Disk::Missing)
                    && self.originals.get(o).is_some_and(|d| *d != Disk::Missing)
            });
            if let (Some(from), true, Disk::Missing) = (origin, from_gone, &c.before) {
                renamed_from.push(from);
                files.push(FileChange::new(
                    c.rel.clone(),
                    Some(from.to_string()),
                    ChangeKind::Renamed,
                    self.originals.get(from).unwrap_or(&Disk::Missing),
                    &c.after,
                ));
            }
        }
        // Both ends of every rename are shown once, by the entry above.
        let mut renamed: std::collections::HashSet<&str> = renamed_from.into_iter().collect();
        renamed.extend(files.iter().map(|f| f.path.as_str()));
        let renamed: std::collections::HashSet<String> =
            renamed.into_iter().map(str::to_string).collect();
        for c in &changes {
            if renamed.contains(c.rel.as_str()) {
                continue;
            }
            let change = match (&c.before, &c.after) {
                (Disk::Missing, _) => ChangeKind::Created,
                (_, Disk::Missing) => ChangeKind::Deleted,
                _ => ChangeKind::Modified,
            };
            files.push(FileChange::new(
                c.rel.clone(),
                None,
                change,
                &c.before,
                &c.after,
            ));
        }
        let final_state = {
            use rayon::prelude::*;
            afters
                .into_par_iter()
                .map(|(k, d)| {
                    let h = disk_hash(&d);
                    (k, h)
                })
                .collect()
        };
        (changes, files, final_state)
    }
}

fn read_tree(repo: &git2::Repository, tree: &git2::Tree, rel: &str) -> (Content, Disk) {
    let entry = match tree.get_path(std::path::Path::new(rel)) {
        Ok(e) => e,
        Err(_) => return (Content::Missing, Disk::Missing),
    };
    match entry.kind() {
        Some(git2::ObjectType::Tree) => (Content::Dir, Disk::Dir),
        Some(git2::ObjectType::Blob) => {
            let blob = match repo.find_blob(entry.id()) {
                Ok(b) => b,
                Err(e) => {
                    return (
                        Content::Other(format!("cannot be read from git: {}", e.message())),
                        Disk::Other,
                    );
                }
            };
            let bytes = Arc::new(blob.content().to_vec());
            if entry.filemode() == 0o120000 {
                let target = PathBuf::from(String::from_utf8_lossy(&bytes).into_owned());
                return (Content::Link(target.clone()), Disk::Symlink { target });
            }
            let mode = if entry.filemode() & 0o111 != 0 {
                0o755
            } else {
                0o644
            };
            (
                Content::File {
                    bytes: Arc::clone(&bytes),
                    mode,
                    doc: None,
                    changed: false,
                },
                Disk::File { bytes, mode },
            )
        }
        _ => (Content::Other("is a submodule".into()), Disk::Other),
    }
}

/// A working-tree path's state as write-back compares it, read through the open root without
/// following any symlink on the way (`rel` is a real path: see `repo::Resolved::real`).
pub fn disk_at(fs: &crate::fs::Root, rel: &str) -> Disk {
    read_disk(fs, rel).1
}

fn read_disk(fs: &crate::fs::Root, rel: &str) -> (Content, Disk) {
    use crate::fs::Kind;
    let unreadable = |e: std::io::Error| {
        let why = if crate::fs::is_symlink_error(&e) {
            "changed while patchgate was reading it: a symlink is now on its path".to_string()
        } else {
            format!("cannot be read: {e}")
        };
        (Content::Other(why), Disk::Other)
    };
    let (dir, name) = match fs.parent_of(rel) {
        Ok(x) => x,
        // A parent that is missing or is a file: nothing can be there.
        Err(e) if crate::fs::gone(&e) => return (Content::Missing, Disk::Missing),
        Err(e) => return unreadable(e),
    };
    let md = match dir.lstat(name) {
        Ok(None) => return (Content::Missing, Disk::Missing),
        Ok(Some(md)) => md,
        Err(e) => return unreadable(e),
    };
    match md.kind {
        Kind::Dir => (Content::Dir, Disk::Dir),
        Kind::Symlink => match dir.read_link(name) {
            Ok(t) => (Content::Link(t.clone()), Disk::Symlink { target: t }),
            Err(e) => unreadable(e),
        },
        Kind::File => match dir.read(name) {
            Ok(bytes) => {
                let bytes = Arc::new(bytes);
                (
                    Content::File {
                        bytes: Arc::clone(&bytes),
                        mode: md.mode,
                        doc: None,
                        changed: false,
                    },
                    Disk::File {
                        bytes,
                        mode: md.mode,
                    },
                )
            }
            Err(e) => unreadable(e),
        },
        Kind::Other => (
            Content::Other("is not a regular file (a device, FIFO or socket)".into()),
            Disk::Other,
        ),
    }
}

/// One replacement planned on a file's bytes alone, exactly as [`plan`] plans an edit of that file
/// (exact and whole-line matching, tie-breaks, the format's fallback readings, `--lenient`, and a
/// miss's suggestions), with no repository or file system: the outcome, and the file's bytes
/// afterwards (unchanged unless it applied). The fuzz targets of the matcher drive it; `shown` is
/// the path messages name (its extension decides `within`'s parser).
pub fn replace_text(
    bytes: &[u8],
    shown: &str,
    r: &Replace,
    lenient: bool,
) -> Result<(EditOutcome, Vec<u8>), doc::DecodeError> {
    let mut doc = TextDoc::decode(bytes)?;
    let step = replace_in(&mut doc, shown, r, false, lenient);
    let after = doc.encode();
    let outcome = EditOutcome {
        index: 0,
        file_path: shown.to_string(),
        status: step.status,
        match_kind: step.match_kind,
        replacements: step.replacements,
        lines: step.lines,
        suggestions: step.suggestions,
        message: step.message,
        error_kind: None,
        invalid: false,
        patch_span: None,
        snippet: step.snippet,
        origin: None,
    };
    Ok((outcome, after))
}

/// What a miss may use besides the edit: `--lenient`, and where to look back for earlier
/// versions of the file.
struct MissCtx<'a> {
    lenient: bool,
    lookback: Option<suggest::Lookback<'a>>,
}

/// The replacement rules of docs/patch-format.md on one document, without a look-back.
fn replace_in(doc: &mut TextDoc, shown: &str, r: &Replace, recorded: bool, lenient: bool) -> Step {
    let ctx = MissCtx {
        lenient,
        lookback: None,
    };
    replace_with(doc, shown, r, recorded, &ctx)
}

/// The replacement rules of docs/patch-format.md on one document.
fn replace_with(
    doc: &mut TextDoc,
    shown: &str,
    r: &Replace,
    recorded: bool,
    ctx: &MissCtx,
) -> Step {
    let old = fold_eol(&r.old);
    let new = fold_eol(&r.new);
    let scope = match scope::resolve(doc, shown, r) {
        Ok(s) => s,
        Err(step) => return *step,
    };
    if old.is_empty() {
        return fill_empty(doc, shown, &new, recorded);
    }
    let text = doc.text();
    // Ambiguity counts overlapping occurrences too (`}\n}\n` twice in `}\n}\n}\n`): replacing "the
    // first" of two overlapping matches is exactly the silent wrong-place edit to refuse. A
    // converted hunk matches whole lines only (see [`whole`]).
    let matches = whole::find(text, &scope, &old, r);

    // A retry: the edit is on record, and what is left of old_string is only inside new_string.
    if recorded && (new.is_empty() || text.contains(new.as_ref())) {
        let new_spans: Vec<Range<usize>> = if new.is_empty() {
            Vec::new()
        } else {
            text.match_indices(new.as_ref())
                .map(|(i, _)| i..i + new.len())
                .collect()
        };
        let inside_new = matches.iter().all(|m| {
            new_spans
                .iter()
                .any(|n| n.start <= m.start && m.end <= n.end)
        });
        if inside_new {
            let mut s = Step::new(EditStatus::AlreadyApplied);
            s.lines = new_spans.iter().map(|n| doc.line_range(n)).collect();
            s.message = Some("this edit was already applied by patchgate; nothing to do".into());
            return s;
        }
    }

    // A converted hunk's line number or anchors choose among several occurrences, never more.
    let mut note = None;
    let matches = match &r.near {
        Some(near) if !r.replace_all && (matches.len() > 1 || near.at_eof) => {
            let (kept, why) = near::narrow_noted(doc, matches.clone(), near);
            if kept.is_empty() && !matches.is_empty() {
                let mut s = Step::new(EditStatus::NotFound);
                s.lines = matches.iter().map(|m| doc.line_range(m)).collect();
                let at: Vec<String> = s.lines.iter().map(|(a, b)| format!("{a}-{b}")).collect();
                s.message = Some(format!(
                    "the hunk's text is in {shown} at lines {}, but not at the end of the file, \
                     where `*** End of File` puts it: drop that line, or re-read the file",
                    at.join(", ")
                ));
                return s;
            }
            note = why;
            kept
        }
        _ => matches,
    };
    match matches.len() {
        0 => {
            let mut note = None;
            if let Some(step) = whole::fallback(doc, shown, r, &scope, &mut note) {
                return step;
            }
            let mut s = miss(doc, shown, r, &scope, &old, &new, ctx);
            if let (Some(note), Some(m)) = (note, s.message.as_mut()) {
                m.push_str(". ");
                m.push_str(&note);
            }
            s
        }
        1 => {
            let lines = vec![doc.line_range(&matches[0])];
            doc.replace(matches[0].clone(), &new);
            let mut s = Step::applied(Some(MatchKind::Exact), 1, lines);
            s.message = note;
            s
        }
        n if r.replace_all => {
            let lines = matches.iter().map(|m| doc.line_range(m)).collect();
            for m in matches.into_iter().rev() {
                doc.replace(m, &new);
            }
            Step::applied(Some(MatchKind::Exact), n, lines)
        }
        n => {
            let mut s = Step::new(EditStatus::Ambiguous);
            s.lines = matches.iter().map(|m| doc.line_range(m)).collect();
            s.message = Some(format!(
                "old_string occurs {n} times in {shown}{}: add surrounding lines to make it unique, \
                 narrow the search with start_line/end_line, or set replace_all: true",
                scope.inside
            ));
            s.snippet = Some(Snippet {
                path: shown.to_string(),
                text: Arc::new(doc.text().to_string()),
                labels: matches
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (m.clone(), format!("match {}", i + 1)))
                    .collect(),
            });
            s
        }
    }
}

/// A converted hunk that adds to an empty file (its old text is empty): only an empty file takes it.
fn fill_empty(doc: &mut TextDoc, shown: &str, new: &str, recorded: bool) -> Step {
    if doc.text().is_empty() {
        doc.append(new);
        let last = doc.line_count();
        return Step::applied(Some(MatchKind::Exact), 1, vec![(1.min(last), last)]);
    }
    if recorded && doc.text() == new {
        return Step::msg(
            EditStatus::AlreadyApplied,
            "this edit was already applied by patchgate; nothing to do",
        );
    }
    Step::msg(
        EditStatus::NotFound,
        format!(
            "this hunk adds lines to an empty file, but {shown} is not empty (it has {} lines): \
             the diff was made against another version; re-read the file",
            doc.line_count()
        ),
    )
}

/// `--lenient`'s unique relaxed match: the step it leads to (applied, or ambiguous), or
/// `Err(true)` when the one match found cannot take `new_string` re-indented, `Err(false)` when
/// there is none.
fn relaxed_step(
    doc: &mut TextDoc,
    shown: &str,
    r: &Replace,
    scope: &scope::Scope,
    old: &str,
    new: &str,
) -> Result<Step, bool> {
    match scope::relaxed(doc, old, new, r, scope) {
        RelaxedOutcome::Unique(m) => {
            let kind = match m.kind {
                CandidateKind::Unicode => MatchKind::Unicode,
                _ => MatchKind::Whitespace,
            };
            let lines = vec![(m.start_line, m.end_line)];
            doc.replace(m.byte_range, &m.replacement);
            let mut s = Step::applied(Some(kind), 1, lines);
            s.message = Some(format!(
                "applied a {} match (old_string differs from the file in {}); new_string was re-indented to match",
                if kind == MatchKind::Unicode {
                    "unicode"
                } else {
                    "whitespace"
                },
                if kind == MatchKind::Unicode {
                    "typographic characters or whitespace"
                } else {
                    "whitespace only"
                },
            ));
            Ok(s)
        }
        RelaxedOutcome::Ambiguous(ranges) => {
            let mut s = Step::new(EditStatus::Ambiguous);
            s.lines = ranges;
            s.message = Some(format!(
                "old_string is not in {shown}{} exactly, and matches {} places once whitespace is ignored; \
                 add surrounding lines or use start_line/end_line",
                scope.inside,
                s.lines.len()
            ));
            Ok(s)
        }
        RelaxedOutcome::NotReindentable { .. } => Err(true),
        RelaxedOutcome::None => Err(false),
    }
}

/// No exact match: apply a unique relaxed match under `--lenient`, otherwise explain the miss.
fn miss(
    doc: &mut TextDoc,
    shown: &str,
    r: &Replace,
    scope: &scope::Scope,
    old: &str,
    new: &str,
    ctx: &MissCtx,
) -> Step {
    let lenient = ctx.lenient;
    let mut not_reindentable = false;
    if lenient {
        // The readings without optional lines (aider's leading blank line of SEARCH, …) come next.
        let trimmed = r.fallbacks.iter().filter_map(|f| match f {
            crate::patch::Fallback::Without { old, new, .. } => {
                Some((fold_eol(old), fold_eol(new)))
            }
            _ => None,
        });
        let readings = std::iter::once((
            std::borrow::Cow::Borrowed(old),
            std::borrow::Cow::Borrowed(new),
        ))
        .chain(trimmed);
        for (old, new) in readings {
            match relaxed_step(doc, shown, r, scope, &old, &new) {
                Ok(step) => return step,
                Err(true) => not_reindentable = true,
                Err(false) => {}
            }
        }
    }
    let pool = scope::diagnose(doc, old, scope, scope::POOL);
    let text = doc.text();
    let window = if r.window.is_some() || scope.symbol {
        scope.line_windows(doc)
    } else {
        Vec::new()
    };
    let query = suggest::Query {
        text,
        old,
        new,
        path: shown,
        window: &window,
        within: scope.symbol,
        lookback: ctx.lookback,
    };
    let explained = suggest::explain(&query, pool, scope::MAX_CANDIDATES);
    crate::timing::mark("suggest: ranked");
    let candidates = explained.candidates;
    let mut s = Step::new(EditStatus::NotFound);
    s.suggestions = candidates
        .iter()
        .map(|c| Suggestion {
            start_line: c.start_line,
            end_line: c.end_line,
            similarity: c.similarity,
            kind: c.kind,
            note: c.note.clone(),
            text: doc.encode_range(c.byte_range.clone()),
            source: c.source.clone(),
        })
        .collect();

    let mut msg = format!("old_string was not found in {shown}");
    if let Some(w) = r.window {
        match w.end {
            Some(e) => msg.push_str(&format!(" within lines {}-{e}", w.start)),
            None => msg.push_str(&format!(" from line {} on", w.start)),
        }
    }
    msg.push_str(&scope.inside);
    match candidates.first() {
        Some(c) if c.kind == CandidateKind::Stale => {
            if let Some(why) = &explained.stale {
                msg.push_str("; ");
                msg.push_str(why);
            }
            msg.push_str(" (a `stale` candidate is never applied, not even with --lenient)");
        }
        Some(c) if c.kind == CandidateKind::Symbol => msg.push_str(&format!(
            "; {}. Copy the current text of lines {}-{} from the suggestion (a `symbol` \
             candidate is never applied, not even with --lenient)",
            c.note.as_deref().unwrap_or("a line of it stands in the file"),
            c.start_line,
            c.end_line,
        )),
        Some(c) if c.kind == CandidateKind::Lines => msg.push_str(&format!(
            "; lines {}-{} hold its lines in order, but {}: copy the exact text from the suggestion \
             (a `lines` candidate is never applied, not even with --lenient)",
            c.start_line,
            c.end_line,
            c.note.as_deref().unwrap_or("one line differs"),
        )),
        Some(c) if c.kind != CandidateKind::Fuzzy => {
            let what = if c.kind == CandidateKind::Whitespace {
                "whitespace (indentation, trailing spaces, tabs)"
            } else {
                "typographic characters (quotes, dashes, spaces) and whitespace"
            };
            // --lenient only looks inside the line window, so only a candidate there is advice.
            let in_window = if scope.symbol {
                scope.holds_lines(doc, c.start_line, c.end_line)
            } else {
                r.window.is_none_or(|w| {
                    c.start_line >= w.start && w.end.is_none_or(|e| c.end_line <= e)
                })
            };
            msg.push_str(&format!(
                "; lines {}-{} differ from it only in {what}: copy the exact text from the suggestion",
                c.start_line, c.end_line,
            ));
            if !in_window {
                msg.push_str(if scope.symbol {
                    " (they lie outside the search scope: check `within` and the line window)"
                } else {
                    " (they lie outside start_line/end_line: check the line window)"
                });
            } else if !lenient {
                msg.push_str(", or re-run with --lenient to apply it re-indented");
            } else if not_reindentable {
                msg.push_str(
                    " (--lenient did not apply it: the indentation of old_string and of the file differ \
                     unevenly, so re-indenting new_string would be a guess)",
                );
            }
        }
        Some(c) => msg.push_str(&format!(
            "; the most similar text is at lines {}-{} ({:.0}% similar): see suggestions",
            c.start_line,
            c.end_line,
            c.similarity * 100.0
        )),
        None => msg.push_str("; nothing similar was found: check file_path and re-read the file"),
    }
    if let (Some(why), Some(c)) = (&explained.stale, candidates.first())
        && c.kind != CandidateKind::Stale
    {
        msg.push_str(". Also: ");
        msg.push_str(why);
    }
    if !explained.tie.is_empty() {
        let spans: Vec<String> = explained
            .tie
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        msg.push_str(&format!(
            ". Lines {} look alike and are about equally close to old_string: nothing in the edit \
             tells them apart, so check which one you mean (add a line that differs, or set \
             start_line/end_line)",
            spans.join(", ")
        ));
    }
    if let Some(note) = scope::outside_note(doc, old, scope) {
        msg.push_str(&note);
    }
    if !new.is_empty() {
        let spots: Vec<(usize, usize)> = if r.whole_lines {
            whole::line_matches(text, 0..text.len(), new)
        } else {
            text.match_indices(new)
                .take(3)
                .map(|(i, _)| i..i + new.len())
                .collect()
        }
        .iter()
        .take(3)
        .map(|m| doc.line_range(m))
        .collect();
        if let Some((a, b)) = spots.first() {
            msg.push_str(&format!(
                ". Note: new_string already stands at line{} {}: if another tool applied this edit, drop it from the patch",
                if a == b { "" } else { "s" },
                if a == b { a.to_string() } else { format!("{a}-{b}") }
            ));
        }
    }
    s.message = Some(msg);
    s.snippet = Some(Snippet {
        path: shown.to_string(),
        text: Arc::new(text.to_string()),
        labels: candidates
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let note = c
                    .note
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default();
                (
                    c.byte_range.clone(),
                    format!(
                        "candidate {} ({}, {:.0}% similar){note}",
                        i + 1,
                        c.kind.name(),
                        c.similarity * 100.0
                    ),
                )
            })
            .collect(),
    });
    s
}
