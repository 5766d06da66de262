//! The operations only a unified diff asks for: the executable bit, symlinks, copies, binary
//! content, and hunks placed by their line number (`--unidiff-zero`).
//!
//! Invariants (besides the planner's):
//! - a symlink's target stays inside the repository wherever the link ends up (created, moved,
//!   copied): absolute targets and `..` that climb out are invalid input, and so is a target
//!   that resolves outside through links already in the working tree;
//! - binary content is never decoded: it is replaced whole, and only when the file hashes to the
//!   diff's old blob id and the result to its new one;
//! - a diff changes a path as the type it says (`git apply`'s "wrong type"): a regular-file hunk
//!   on a symlink, or a path beyond a symlinked folder, is refused, never followed.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::{Content, EditStatus, MatchKind, Planner, Step, fill_empty};
use crate::fs::NEW_FILE_MODE;
use crate::patch::input::EMPTY_BLOB;
use crate::patch::{Binary, BinaryData, Insert, Op};
use crate::repo::Resolved;

/// Whether a planned mode is executable (a new file's placeholder mode is not).
pub(super) fn is_executable(mode: u32) -> bool {
    mode != NEW_FILE_MODE && mode & 0o111 != 0
}

/// The mode a file gets when its executable bit is set or cleared: `x` where `r` is, as
/// `chmod +x` under the usual umask; a new file gets the umask's default plus `x`.
fn with_executable(mode: u32, executable: bool) -> u32 {
    let base = if mode == NEW_FILE_MODE {
        crate::fs::default_file_mode()
    } else {
        mode
    };
    if executable {
        base | ((base & 0o444) >> 2)
    } else if mode == NEW_FILE_MODE {
        NEW_FILE_MODE
    } else {
        base & !0o111
    }
}

/// git's mode of a planned path's content, for the report.
pub(super) fn git_mode(content: &super::Disk) -> Option<u32> {
    match content {
        super::Disk::File { mode, .. } if is_executable(*mode) => Some(0o100755),
        super::Disk::File { .. } => Some(0o100644),
        super::Disk::Symlink { .. } => Some(0o120000),
        _ => None,
    }
}

impl Planner<'_> {
    /// Why a diff may not change `resolved` with `op`, and whether that is invalid input.
    pub(super) fn refuse_for_diff(
        &mut self,
        resolved: &Resolved,
        op: &Op,
        recorded: bool,
    ) -> Option<(String, bool)> {
        if !self.diff {
            return None;
        }
        if resolved.through_link {
            return Some((
                format!(
                    "`{}` is beyond a symbolic link (a folder on its way is a symlink): a diff \
                     changes the path it names, and `git apply` refuses this one too; make the \
                     diff against the folder the link points to",
                    resolved.rel
                ),
                false,
            ));
        }
        // The path as the plan has it so far: a link an earlier file diff removed is gone.
        let as_file = match op {
            Op::Replace(_) | Op::Mode { .. } => true,
            Op::Insert(i) => !i.create,
            Op::Binary(b) => b.old_id.is_some() && !(recorded && b.new_id.is_none()),
            _ => false,
        };
        let is_link = matches!(self.slot(&resolved.rel).content, Content::Link(_));
        (is_link && as_file).then(|| {
            (
                format!(
                    "`{}` is a symlink, and the diff changes it as a regular file (`git apply` \
                     refuses it: wrong type); make the diff against the file the link points to",
                    resolved.rel
                ),
                false,
            )
        })
    }

    /// Why a symlink at `key` (relative to the root) pointing to `target` would leave the
    /// repository or reach into `.git`; `None` when it stays inside.
    pub(super) fn link_escapes(&self, key: &str, target: &str) -> Option<String> {
        let refuse = |why: &str| {
            Some(format!(
                "the symlink `{key}` -> `{target}` {why}: a symlink must point inside the \
                 repository (patchgate never creates a way out of it)"
            ))
        };
        if target.is_empty() || target.contains('\0') {
            return refuse("has no usable target");
        }
        if Path::new(target).is_absolute() {
            return refuse("has an absolute target");
        }
        let mut parts: Vec<String> = key.split('/').map(str::to_string).collect();
        parts.pop();
        for c in Path::new(target).components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return refuse("climbs out of the repository with `..`");
                    }
                }
                Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                Component::RootDir | Component::Prefix(_) => {
                    return refuse("has an absolute target");
                }
            }
        }
        if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
            return refuse("points into `.git`");
        }
        if parts.is_empty() || !matches!(self.source, super::Source::WorkTree) {
            return None;
        }
        // Through the links already there, the target must still land inside.
        match self.roots.resolve(&parts.join("/")) {
            Err(why) if why.contains("outside") || why.contains(".git") => {
                refuse(&format!("leads out of it ({why})"))
            }
            _ => None,
        }
    }

    /// [`Self::link_escapes`] for the content of `src` (when it is a symlink) placed at `dest`.
    pub(super) fn link_escapes_at(&mut self, src: &str, dest: &str) -> Option<String> {
        let Content::Link(target) = &self.slot(src).content else {
            return None;
        };
        let target = target.to_string_lossy().into_owned();
        self.link_escapes(dest, &target)
    }

    /// A diff's `old mode`/`new mode`: the executable bit.
    pub(super) fn set_mode(
        &mut self,
        resolved: &Resolved,
        executable: bool,
        recorded: bool,
    ) -> Step {
        let shown = resolved.rel.as_str();
        let slot = self.slot(&resolved.real);
        let name = |x: bool| if x { "100755" } else { "100644" };
        match &mut slot.content {
            Content::File { mode, .. } => {
                if is_executable(*mode) == executable {
                    let status = if recorded {
                        EditStatus::AlreadyApplied
                    } else {
                        EditStatus::Applied
                    };
                    return Step::msg(
                        status,
                        format!(
                            "{shown} already has mode {}; nothing to change",
                            name(executable)
                        ),
                    );
                }
                *mode = with_executable(*mode, executable);
                let mut s = Step::applied(None, 0, Vec::new());
                s.message = Some(format!(
                    "mode {} -> {}",
                    name(!executable),
                    name(executable)
                ));
                s
            }
            Content::Missing => Step::msg(
                EditStatus::NotFound,
                format!("cannot change the mode of {shown}: it does not exist"),
            ),
            Content::Link(_) => Step::msg(
                EditStatus::Error,
                format!("{shown} is a symlink: it has no executable bit"),
            ),
            Content::Dir => Step::msg(
                EditStatus::Error,
                format!("{shown} is a directory, not a file"),
            ),
            Content::Other(why) => Step::msg(EditStatus::Error, format!("{shown} {why}")),
        }
    }

    /// A symlink created, retargeted or removed.
    pub(super) fn link(
        &mut self,
        resolved: &Resolved,
        old: Option<&str>,
        new: Option<&str>,
        recorded: bool,
    ) -> Step {
        let key = if resolved.is_link {
            resolved.rel.clone()
        } else {
            resolved.real.clone()
        };
        let shown = resolved.rel.as_str();
        if new.is_some()
            && old.is_none()
            && let Some(conflict) = self.parent_conflict(&key)
        {
            return Step::msg(
                EditStatus::Error,
                format!("cannot create {shown}: {conflict} is a file, not a directory"),
            );
        }
        let slot = self.slot(&key);
        let is = |t: &PathBuf, s: Option<&str>| s.is_some_and(|s| t.as_os_str() == s);
        let done = |s: &str| Step::msg(EditStatus::AlreadyApplied, s.to_string());
        let step = match (&slot.content, old) {
            (Content::Missing, None) => Step::applied(None, 0, Vec::new()),
            (Content::Link(t), None) if recorded && is(t, new) => {
                return done(&format!("{shown} is already this symlink"));
            }
            (Content::Dir, None) => {
                return Step::msg(
                    EditStatus::Error,
                    format!("cannot create the symlink {shown}: it is a directory"),
                );
            }
            (_, None) => {
                return Step::msg(
                    EditStatus::Error,
                    format!("cannot create the symlink {shown}: it already exists"),
                );
            }
            (Content::Link(t), Some(o)) if t.as_os_str() == o => Step::applied(None, 0, Vec::new()),
            (Content::Link(t), Some(_)) if recorded && is(t, new) => {
                return done(&format!("{shown} already points to its new target"));
            }
            (Content::Link(t), Some(o)) => {
                return Step::msg(
                    EditStatus::NotFound,
                    format!(
                        "the symlink {shown} points to `{}`, not to `{o}` as the diff says: it \
                         changed since the diff was made",
                        t.display()
                    ),
                );
            }
            (Content::Missing, Some(_)) if recorded && new.is_none() => {
                return done(&format!("{shown} is already deleted"));
            }
            (Content::Missing, Some(_)) => {
                return Step::msg(
                    EditStatus::NotFound,
                    format!("the symlink {shown} does not exist"),
                );
            }
            (_, Some(_)) => {
                return Step::msg(
                    EditStatus::Error,
                    format!(
                        "{shown} is not a symlink, and the diff changes it as one (`git apply` \
                         refuses it: wrong type)"
                    ),
                );
            }
        };
        slot.content = match new {
            Some(t) => Content::Link(PathBuf::from(t)),
            None => Content::Missing,
        };
        if old.is_none() {
            slot.origin = None;
        }
        step
    }

    /// A diff's copy: the source as it was before the patch, at `dest`.
    pub(super) fn copy(&mut self, resolved: &Resolved, dest: &str, recorded: bool) -> Step {
        let src = if resolved.is_link {
            resolved.rel.clone()
        } else {
            resolved.real.clone()
        };
        let shown = resolved.rel.as_str();
        if src == dest {
            return Step::msg(
                EditStatus::Error,
                format!("copy to names the same path as copy from ({dest})"),
            );
        }
        if let Some(conflict) = self.parent_conflict(dest) {
            return Step::msg(
                EditStatus::Error,
                format!("cannot copy to {dest}: {conflict} is a file, not a directory"),
            );
        }
        self.slot(&src);
        // `git apply` reads a copy's source as it was before the patch, whatever an earlier
        // file diff of the same patch did to it.
        let content = match self.originals.get(&src).cloned() {
            Some(super::Disk::File { bytes, mode }) => Content::File {
                bytes,
                mode,
                doc: None,
                changed: false,
            },
            Some(super::Disk::Symlink { target }) => Content::Link(target),
            Some(super::Disk::Missing) | None => {
                return Step::msg(
                    EditStatus::NotFound,
                    format!("cannot copy {shown}: it does not exist"),
                );
            }
            Some(_) => {
                return Step::msg(
                    EditStatus::Error,
                    format!("cannot copy {shown}: it is not a file"),
                );
            }
        };
        let dest_slot = self.slot(dest);
        match &dest_slot.content {
            Content::Missing => {}
            Content::File { .. } | Content::Link(_) if recorded => {
                return Step::msg(
                    EditStatus::AlreadyApplied,
                    format!("{shown} was already copied to {dest}"),
                );
            }
            _ => {
                return Step::msg(
                    EditStatus::Error,
                    format!("cannot copy {shown} to {dest}: {dest} already exists"),
                );
            }
        }
        dest_slot.content = content;
        dest_slot.origin = None;
        Step::applied(None, 0, Vec::new())
    }

    /// A `GIT binary patch`: the whole content, checked against both blob ids.
    pub(super) fn binary(&mut self, resolved: &Resolved, b: &Binary, recorded: bool) -> Step {
        use crate::repo::blob_id;
        let shown = resolved.rel.as_str();
        let slot = self.slot(&resolved.real);
        let current: Option<Vec<u8>> = match &slot.content {
            Content::Missing => None,
            Content::File {
                bytes,
                doc,
                changed,
                ..
            } => Some(match (changed, doc) {
                (true, Some(d)) => d.encode(),
                _ => bytes.to_vec(),
            }),
            Content::Link(_) => {
                return Step::msg(EditStatus::Error, format!("{shown} is a symlink"));
            }
            Content::Dir => {
                return Step::msg(
                    EditStatus::Error,
                    format!("{shown} is a directory, not a file"),
                );
            }
            Content::Other(why) => return Step::msg(EditStatus::Error, format!("{shown} {why}")),
        };
        let id = current.as_deref().map(|c| blob_id(c).to_string());
        let already = recorded && id == b.new_id;
        if already {
            return Step::msg(
                EditStatus::AlreadyApplied,
                format!("{shown} already has this binary patch's result"),
            );
        }
        match (&b.old_id, &id) {
            (None, Some(_)) => {
                return Step::msg(
                    EditStatus::Error,
                    format!("cannot create {shown}: it already exists"),
                );
            }
            (Some(_), None) => {
                return Step::msg(EditStatus::NotFound, format!("{shown} does not exist"));
            }
            (Some(want), Some(have)) if want != have && want == EMPTY_BLOB => {
                return Step::msg(
                    EditStatus::NotFound,
                    format!(
                        "the diff deletes {shown}, but its removals leave {} bytes in it (`git \
                         apply` refuses this too): the file changed since the diff was made; \
                         re-read it",
                        current.as_ref().map_or(0, Vec::len)
                    ),
                );
            }
            (Some(want), Some(have)) if want != have => {
                let result = if Some(have) == b.new_id.as_ref() {
                    " (it already holds the patch's result)"
                } else {
                    ""
                };
                return Step::msg(
                    EditStatus::NotFound,
                    format!(
                        "{shown} is not the file this binary patch applies to: its blob id is \
                         {have}, the patch's is {want}{result}; it changed since the diff was made"
                    ),
                );
            }
            _ => {}
        }
        let Some(new_id) = &b.new_id else {
            slot.content = Content::Missing;
            return Step::applied(None, 0, Vec::new());
        };
        let result = match &b.data {
            BinaryData::Literal(d) => d.clone(),
            BinaryData::Delta(d) => {
                match crate::patch::input::apply_delta(current.as_deref().unwrap_or_default(), d) {
                    Ok(r) => r,
                    Err(why) => {
                        return Step::msg(
                            EditStatus::Error,
                            format!("the binary delta for {shown} does not apply: {why}"),
                        );
                    }
                }
            }
        };
        let got = blob_id(&result).to_string();
        if got != *new_id {
            return Step::msg(
                EditStatus::Error,
                format!(
                    "the binary patch for {shown} makes blob {got}, not the {new_id} its index \
                     line names: the patch is damaged"
                ),
            );
        }
        let mode = match &slot.content {
            Content::File { mode, .. } => *mode,
            _ => NEW_FILE_MODE,
        };
        slot.content = Content::File {
            bytes: Arc::new(result),
            mode,
            doc: None,
            changed: false,
        };
        if b.old_id.is_none() {
            slot.origin = None;
        }
        Step::applied(None, 0, Vec::new())
    }

    /// Lines added by line number (a context-free hunk).
    pub(super) fn insert(&mut self, resolved: &Resolved, ins: &Insert, recorded: bool) -> Step {
        let (key, shown) = (resolved.real.as_str(), resolved.rel.as_str());
        if ins.create && matches!(self.slot(key).content, Content::Missing) {
            if let Some(conflict) = self.parent_conflict(key) {
                return Step::msg(
                    EditStatus::Error,
                    format!("cannot create {shown}: {conflict} is a file, not a directory"),
                );
            }
            let slot = self.slot(key);
            slot.content = Content::File {
                bytes: Arc::new(ins.text.as_bytes().to_vec()),
                mode: NEW_FILE_MODE,
                doc: None,
                changed: false,
            };
            slot.origin = None;
            let mut s = Step::applied(Some(MatchKind::Exact), 1, Vec::new());
            s.message = Some(format!(
                "{shown} did not exist: created (the diff adds to line 0 and does not say the \
                 file is new, which `git apply` reads the same way)"
            ));
            return s;
        }
        if matches!(self.slot(key).content, Content::Missing) {
            return Step::msg(
                EditStatus::NotFound,
                format!("{shown} does not exist: the diff was made against another tree"),
            );
        }
        let doc = match self.text_of(key, shown) {
            Ok(d) => d,
            Err(step) => return *step,
        };
        let new = super::doc::fold_eol(&ins.text).into_owned();
        if ins.only_empty {
            let step = fill_empty(doc, shown, &new, recorded);
            if step.status == EditStatus::Applied {
                self.mark_changed(key);
            }
            return step;
        }
        let count = doc.line_count();
        let text_len = doc.text().len();
        // Past the end: at the end, as `git apply --unidiff-zero` puts it (the message says so).
        let line = ins.line.min(count + 1);
        let at = if line > count {
            text_len
        } else {
            doc.window_range(crate::patch::LineWindow {
                start: line,
                end: None,
            })
            .map_or(text_len, |r| r.start)
        };
        if at == text_len && !doc.text().is_empty() && !doc.text().ends_with('\n') {
            return Step::msg(
                EditStatus::NotFound,
                format!(
                    "the hunk adds lines after the last line of {shown}, which has no final \
                     newline: the diff was made against another version; re-read the file"
                ),
            );
        }
        if at < text_len && !new.ends_with('\n') {
            return Step::msg(
                EditStatus::Error,
                format!(
                    "the hunk's last added line has no newline, but it goes before line {} of \
                     {shown}, not at the end: the hunk is damaged",
                    ins.line
                ),
            );
        }
        if recorded && doc.text()[at..].starts_with(new.as_str()) {
            return Step::msg(
                EditStatus::AlreadyApplied,
                "this edit was already applied by patchgate; nothing to do",
            );
        }
        let added = new.matches('\n').count() + usize::from(!new.ends_with('\n'));
        doc.replace(at..at, &new);
        self.mark_changed(key);
        let mut s = Step::applied(
            Some(MatchKind::Exact),
            1,
            vec![(line, line + added.max(1) - 1)],
        );
        s.message = Some(if line < ins.line {
            format!(
                "placed by its line numbers (--unidiff-zero: the hunk has no context): the hunk \
                 adds before line {}, but {shown} has {count} lines, so it went at the end, as \
                 `git apply` puts it; the diff was made against a longer file: check the result",
                ins.line
            )
        } else {
            format!(
                "placed by its line numbers (--unidiff-zero: the hunk has no context): inserted \
                 before line {line} of {count}; check the place if the diff is older than the file"
            )
        });
        s
    }
}
