//! One edit of each kind on the in-memory files: replace, create, delete, append, move (the
//! unified diff's operations are in [`super::diffops`]).

use super::*;

impl Planner<'_> {
    pub(super) fn replace(&mut self, key: &str, shown: &str, r: &Replace, recorded: bool) -> Step {
        if let Some(step) = self.batched_step(key, shown) {
            return step;
        }
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
    pub(super) fn unchanged(&mut self, key: &str, shown: &str, r: &Replace) -> Step {
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
    pub(super) fn create(&mut self, key: &str, content: &str, recorded: bool, over: bool) -> Step {
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

    pub(super) fn delete(&mut self, key: &str, recorded: bool) -> Step {
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

    pub(super) fn append(&mut self, key: &str, text: &str, recorded: bool) -> Step {
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

    pub(super) fn move_to(
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
    pub(super) fn parent_conflict(&mut self, key: &str) -> Option<String> {
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
}
