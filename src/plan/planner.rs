//! The planner: every edit of a patch tried in order against the in-memory files ([`super::vfs`]),
//! even after one failed, so the report shows every problem of the batch at once; then the net
//! change per path, for the checks, the transaction and the re-run record.

use super::*;

pub(super) struct Planner<'a> {
    pub(super) roots: &'a Roots,
    /// The patch is a unified diff: its paths and file types are checked as `git apply` does.
    pub(super) diff: bool,
    pub(super) source: &'a Source<'a>,
    pub(super) record: &'a Record,
    pub(super) opts: Options<'a>,
    pub(super) order: Vec<String>,
    pub(super) slots: HashMap<String, Slot>,
    pub(super) originals: HashMap<String, Disk>,
    pub(super) resolved: std::cell::RefCell<HashMap<String, Result<Resolved, String>>>,
    /// Folders the resolution of earlier paths found to be plain directories.
    pub(super) plain_dirs: std::cell::RefCell<crate::repo::PlainDirs>,
    /// Files whose edits are planned in one pass (see [`super::batch`]).
    pub(super) batches: HashMap<String, super::batch::Pending<'a>>,
    /// The working tree's folders the plan read files from, open (see [`super::vfs`]).
    pub(super) dirs: HashMap<String, crate::fs::Dir>,
    /// Batched files read and planned ahead, until their first edit takes them.
    pub(super) ahead: HashMap<String, super::batch::Ahead>,
    /// Where each file planned in one pass changed (its bytes, before and after): the report's
    /// diff looks there alone.
    pub(super) changed_at: HashMap<String, Vec<crate::text::Changed>>,
    /// Files hashed where they were read and planned ahead, while their bytes were in the cache:
    /// their blob ids before and after, and the SHA-256 of the new content.
    pub(super) hashed: HashMap<String, super::batch::Hashes>,
    /// The stamp of each file read from the working tree, just before it was read.
    pub(super) stamps: HashMap<String, crate::fs::stamp::Stamp>,
    /// When the plan began reading: a stamp changed last before it proves its file unwritten
    /// since, as long as it stays the same.
    pub(super) since: crate::fs::stamp::Moment,
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
        plain_dirs: std::cell::RefCell::default(),
        batches: HashMap::new(),
        dirs: HashMap::new(),
        ahead: HashMap::new(),
        changed_at: HashMap::new(),
        hashed: HashMap::new(),
        stamps: HashMap::new(),
        since: crate::fs::stamp::now(),
    };
    // Each edit's digest, once: the whole patch's digest is made of them, and the record of
    // applied edits needs them again.
    // The paths resolved (ahead, on every core, for a large patch) and the digests on every
    // core: a thousand of them were a tenth of a large patch's planning.
    p.resolve_ahead(
        patch
            .edits
            .iter()
            .filter(|e| e.op.is_ok())
            .map(|e| e.file_path.as_str()),
    );
    let to_digest: Vec<Option<(String, &Op)>> = patch
        .edits
        .iter()
        .map(|e| {
            let op = e.op.as_ref().ok()?;
            Some((p.resolve(&e.file_path).ok()?.rel, op))
        })
        .collect();
    let edit_digests: Vec<Option<String>> = crate::par::map_sized(
        &to_digest,
        |e| e.as_ref().map_or(0, |(_, op)| record::digest_cost(op)),
        |e| e.as_ref().map(|(rel, op)| record::digest(rel, op)),
    );
    crate::timing::mark("plan: paths resolved, edits hashed");
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
    p.gather_batches(patch, &edit_digests);
    crate::timing::mark("plan: batches gathered");
    p.plan_batches_ahead();
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
    // The paths' final hashes are for the re-run record, which only a patch that is written
    // gets: a refused one (a miss, an ambiguous or invalid edit) does not pay for hashing them.
    let written = outcomes
        .iter()
        .all(|o| matches!(o.status, EditStatus::Applied | EditStatus::AlreadyApplied));
    let (changes, files, final_state) = p.finish(written);
    // What the planner read and kept is the plan's now, or garbage; its open folders are closed.
    drop(std::mem::take(&mut p.dirs));
    crate::exit::dispose(p);
    Plan {
        outcomes,
        changes,
        files,
        digests,
        patch_digest,
        final_state,
    }
}

pub(super) fn content_hash(b: &[u8]) -> String {
    content_hash_of_parts(&[b])
}

/// [`content_hash`] of the concatenation of `parts`.
pub(super) fn content_hash_of_parts(parts: &[&[u8]]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    format!("{:x}", h.finalize())
}

/// A path's state as the re-run record knows it: the hash of a file's bytes or a link's target,
/// `None` when missing.
pub(super) fn disk_hash(disk: &Disk) -> Option<String> {
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
pub(super) struct Step {
    pub(super) status: EditStatus,
    pub(super) match_kind: Option<MatchKind>,
    pub(super) replacements: usize,
    pub(super) lines: Vec<(usize, usize)>,
    pub(super) suggestions: Vec<Suggestion>,
    pub(super) message: Option<String>,
    pub(super) snippet: Option<Snippet>,
}

impl Step {
    pub(super) fn new(status: EditStatus) -> Step {
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
    pub(super) fn msg(status: EditStatus, m: impl Into<String>) -> Step {
        let mut s = Step::new(status);
        s.message = Some(m.into());
        s
    }
    pub(super) fn applied(
        kind: Option<MatchKind>,
        replacements: usize,
        lines: Vec<(usize, usize)>,
    ) -> Step {
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
    pub(super) fn whole_patch_applied(&mut self, patch: &Patch, digest: &str) -> Option<Plan> {
        let states = self.record.patch_states(digest)?;
        // Each path hashed once: a patch applied many times has as many states on record, all
        // about the same files.
        let mut now: HashMap<String, Option<String>> = HashMap::new();
        let matches = states.iter().any(|files| {
            files.iter().all(|(path, want)| {
                let hash = now.entry(path.clone()).or_insert_with(|| {
                    // Loads the path; its original state is what is on disk now.
                    self.slot(path);
                    self.originals.get(path.as_str()).and_then(disk_hash)
                });
                *hash == *want
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
    pub(super) fn run(
        &mut self,
        edit: &Edit,
        digest: Option<String>,
    ) -> (EditOutcome, Option<String>) {
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
        let step = self.step(edit, op, &resolved, recorded, &mut out.invalid);
        out.status = step.status;
        out.match_kind = step.match_kind;
        out.replacements = step.replacements;
        out.lines = step.lines;
        out.suggestions = step.suggestions;
        out.message = step.message;
        out.snippet = step.snippet;
        (out, Some(digest))
    }

    /// The step of one resolved and checked edit; `invalid` is set when the edit itself is at
    /// fault (as opposed to the file not matching it).
    fn step(
        &mut self,
        edit: &Edit,
        op: &Op,
        resolved: &Resolved,
        recorded: bool,
        invalid: &mut bool,
    ) -> Step {
        match op {
            // A YAML/JSON edit that would change nothing is invalid input; a converted hunk
            // (no `old_string` of its own) is not checked here.
            Op::Replace(r) if edit.origin.is_none() && fold_eol(&r.old) == fold_eol(&r.new) => {
                *invalid = true;
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
            Op::Move { to, replace } => {
                self.move_step(edit, resolved, to, replace.as_ref(), recorded, invalid)
            }
            Op::Mode { executable } => self.set_mode(resolved, *executable, recorded),
            Op::Link { old, new } => match new.as_deref().and_then(|t| {
                let key = if resolved.is_link {
                    &resolved.rel
                } else {
                    &resolved.real
                };
                self.link_escapes(key, t)
            }) {
                Some(why) => {
                    *invalid = true;
                    Step::msg(EditStatus::Error, why)
                }
                None => self.link(resolved, old.as_deref(), new.as_deref(), recorded),
            },
            Op::Copy { to } => match self.resolve(to) {
                Err(why) => {
                    *invalid = true;
                    Step::msg(EditStatus::Error, why)
                }
                Ok(dest) => match self.link_escapes_at(&resolved.real, &dest.real) {
                    Some(why) => {
                        *invalid = true;
                        Step::msg(EditStatus::Error, why)
                    }
                    None => self.copy(resolved, &dest.real, recorded),
                },
            },
            Op::Binary(b) => self.binary(resolved, b, recorded),
            Op::Insert(ins) => self.insert(resolved, ins, recorded),
        }
    }

    /// A move (with its optional replacement on the way): the destination resolved and checked.
    fn move_step(
        &mut self,
        edit: &Edit,
        resolved: &Resolved,
        to: &str,
        replace: Option<&Replace>,
        recorded: bool,
        invalid: &mut bool,
    ) -> Step {
        match self.resolve(to) {
            Err(why) => {
                *invalid = true;
                Step::msg(EditStatus::Error, why)
            }
            Ok(_) if resolved.is_link && replace.is_some() => {
                // Moving the link but editing its target is two operations on two paths.
                *invalid = true;
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
                    *invalid = true;
                    Step::msg(EditStatus::Error, why)
                } else {
                    let over = edit.replace_existing;
                    self.move_to(src, &resolved.rel, &dest.real, replace, recorded, over)
                }
            }
        }
    }

    /// Why `key` does not hold the bytes `want` (a SHA-256 in hex) names, or `None` when it does.
    /// The bytes compared are those read for the plan, before any edit of this patch: the state
    /// the caller saw. After a `move_to` in this patch, that is the moved file's original.
    pub(super) fn stale(&mut self, key: &str, shown: &str, want: &str) -> Option<String> {
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

    /// The net change per path, and the per-file view for the report.
    /// The changed paths, the files as the report shows them, and every touched path with the
    /// hash of what the plan leaves there (for the re-run record).
    #[allow(clippy::type_complexity)]
    pub(super) fn finish(
        &mut self,
        hash_final: bool,
    ) -> (
        Vec<PathChange>,
        Vec<FileChange>,
        Vec<(String, Option<String>)>,
    ) {
        let mut changes = Vec::new();
        let mut finals: HashMap<&str, (Disk, Option<String>)> = HashMap::new();
        let mut afters = Vec::with_capacity(self.order.len());
        // Each slot is taken, not borrowed: a changed document's text becomes the new bytes
        // without a copy (a large batch copied every file once more here).
        let mut slots = std::mem::take(&mut self.slots);
        for key in &self.order {
            let Some(slot) = slots.remove(key) else {
                continue;
            };
            let after = match slot.content {
                Content::Missing => Disk::Missing,
                Content::Dir => Disk::Dir,
                Content::Other(_) => Disk::Other,
                Content::Link(t) => Disk::Symlink { target: t },
                Content::File {
                    bytes,
                    mode,
                    doc,
                    changed,
                } => Disk::File {
                    bytes: match (changed, doc) {
                        (true, Some(d)) => Arc::new(d.into_bytes()),
                        _ => bytes,
                    },
                    mode,
                },
            };
            let before = self.originals.get(key).cloned().unwrap_or(Disk::Missing);
            afters.push((key.clone(), after.clone()));
            finals.insert(key, (after.clone(), slot.origin));
            if before != after {
                changes.push(PathChange {
                    rel: key.clone(),
                    before,
                    after,
                    read: self.stamps.get(key).map(|s| (*s, self.since)),
                    ids: self.hashed.get(key).map(|h| (h.old_blob, h.new_blob)),
                });
            }
        }

        let mut files = Vec::new();
        let mut renamed_from: Vec<&str> = Vec::new();
        for c in &changes {
            let origin = finals.get(c.rel.as_str()).and_then(|(_, o)| o.as_deref());
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
            let mut file = FileChange::new(c.rel.clone(), None, change, &c.before, &c.after);
            if change == ChangeKind::Modified {
                file.changed = self.changed_at.remove(&c.rel);
            }
            files.push(file);
        }
        let final_state = if hash_final {
            let known = |k: &str| self.hashed.get(k).map(|h| h.new_sha256.clone());
            let size = |(k, d): &(String, Disk)| match d {
                Disk::File { bytes, .. } if !self.hashed.contains_key(k) => bytes.len(),
                _ => 0,
            };
            crate::par::map_sized(&afters, size, |(k, d)| {
                (k.clone(), known(k).or_else(|| disk_hash(d)))
            })
        } else {
            Vec::new()
        };
        crate::exit::dispose((finals, afters, slots));
        (changes, files, final_state)
    }
}
