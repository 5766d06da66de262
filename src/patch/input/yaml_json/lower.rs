//! A read patch document lowered into edits: each raw edit (or file with `edits:`) checked field by
//! field and turned into an [`Op`], or kept as an edit with the reason it is invalid, so the report
//! shows every problem of the patch at once.

use super::*;

/// A valid `expect_sha256` in lower case; a malformed one is invalid input pointing at the value.
fn expect_sha256(
    value: Option<&Sp<String>>,
    source: &PatchSource,
) -> Result<Option<String>, Error> {
    let Some(v) = value else {
        return Ok(None);
    };
    let hex = v.value.trim();
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Some(hex.to_ascii_lowercase()));
    }
    Err(patch_error(
        source,
        format!(
            "`expect_sha256` is not a SHA-256 digest: {:?} (expected 64 hexadecimal digits)",
            v.value
        ),
        "give the lower-case hex SHA-256 of the file's bytes as you read them, e.g. from \
         `sha256sum FILE` or `files[].sha256` of the previous patchgate report"
            .into(),
        v.span.map(|s| s.offset()),
        "here",
    ))
}

/// Flattens groups and validates each entry's combination of keys.
pub(super) fn lower(raw: RawTop, source: PatchSource) -> Result<Patch, Error> {
    let mut edits = Vec::new();
    for entry in raw.edits {
        let entry_span = entry.span;
        let e = entry.value;
        let file_expect = expect_sha256(e.expect_sha256.as_ref(), &source)?;
        let file_path = e
            .file_path
            .as_ref()
            .map(|p| p.value.clone())
            .unwrap_or_default();
        let span = e.file_path.as_ref().and_then(|p| p.span).or(entry_span);
        let path_problem =
            check_path_text("file_path", e.file_path.as_ref().map(|p| p.value.as_str()));

        if let Some(subs) = e.edits {
            // `within` on the group is every grouped edit's default scope.
            let group_within = e.within;
            let others = [
                e.old_string.is_some(),
                e.new_string.is_some(),
                e.replace_all.is_some(),
                e.start_line.is_some(),
                e.end_line.is_some(),
                e.create.is_some(),
                e.delete.is_some(),
                e.append.is_some(),
                e.move_to.is_some(),
            ];
            let group_problem = if others.iter().any(|x| *x) {
                Some(
                    "an entry with `edits` is a group: it takes only `file_path`, `edits` and \
                     `within`; put old_string/new_string inside `edits`"
                        .to_string(),
                )
            } else {
                path_problem.clone()
            };
            for sub in subs {
                let sub_span = sub.span.or(span);
                let s = sub.value;
                let own_expect = expect_sha256(s.expect_sha256.as_ref(), &source)?;
                let conflict = match (&file_expect, &own_expect) {
                    (Some(a), Some(b)) if a != b => Some(
                        "`expect_sha256` of this edit differs from its group's: both describe the \
                         file as read before the patch, so give one digest"
                            .to_string(),
                    ),
                    _ => None,
                };
                let op = match group_problem.as_ref().or(conflict.as_ref()) {
                    Some(p) => Err(p.clone()),
                    None => lower_replace(
                        s.old_string,
                        s.new_string,
                        s.replace_all,
                        s.start_line,
                        s.end_line,
                        s.within.or_else(|| group_within.clone()),
                    )
                    .and_then(|r| {
                        r.ok_or_else(|| {
                            "a grouped edit needs `old_string` and `new_string`".to_string()
                        })
                    })
                    .map(Op::Replace),
                };
                edits.push(Edit {
                    index: edits.len(),
                    file_path: file_path.clone(),
                    op,
                    span: sub_span,
                    origin: None,
                    expect_sha256: own_expect.or_else(|| file_expect.clone()),
                    replace_existing: false,
                });
            }
            continue;
        }

        let op = match path_problem {
            Some(p) => Err(p),
            None => lower_single(e),
        };
        edits.push(Edit {
            index: edits.len(),
            file_path,
            op,
            span,
            origin: None,
            expect_sha256: file_expect,
            replace_existing: false,
        });
    }
    Ok(Patch {
        message: raw.message,
        edits,
        source,
    })
}

fn lower_single(e: RawEdit) -> Result<Op, String> {
    let create = e.create.unwrap_or(false);
    let delete = e.delete.unwrap_or(false);
    let append = e.append.unwrap_or(false);
    let moving = e.move_to.is_some();
    let kinds = [create, delete, append, moving]
        .iter()
        .filter(|x| **x)
        .count();
    if kinds > 1 {
        return Err(
            "`create`, `delete`, `append` and `move_to` exclude each other: use one per edit"
                .into(),
        );
    }
    let has_replace_keys = e.old_string.is_some()
        || e.replace_all.is_some()
        || e.start_line.is_some()
        || e.end_line.is_some()
        || e.within.is_some();

    if create || append {
        let what = if create { "create" } else { "append" };
        if has_replace_keys {
            return Err(format!(
                "`{what}` takes `new_string` only; old_string/replace_all/start_line/end_line/within belong to a replacement"
            ));
        }
        let text = e
            .new_string
            .map(|s| s.value)
            .ok_or_else(|| format!("`{what}: true` needs `new_string`: the text to {what}"))?;
        check_nul("new_string", &text)?;
        return if create {
            Ok(Op::Create { content: text })
        } else if text.is_empty() {
            Err("`append` with an empty `new_string` changes nothing; drop the edit".into())
        } else {
            Ok(Op::Append {
                text,
                create: false,
            })
        };
    }
    if delete {
        if has_replace_keys || e.new_string.is_some() {
            return Err("`delete: true` takes no other keys than `file_path`".into());
        }
        return Ok(Op::Delete);
    }
    if let Some(to) = e.move_to {
        check_path_text("move_to", Some(&to.value)).map_or(Ok(()), Err)?;
        let replace = lower_replace(
            e.old_string,
            e.new_string,
            e.replace_all,
            e.start_line,
            e.end_line,
            e.within,
        )?;
        return Ok(Op::Move {
            to: to.value,
            replace,
        });
    }
    if e.create == Some(false) || e.delete == Some(false) || e.append == Some(false) {
        // An explicit `false` is the default: fall through to a replacement.
    }
    match lower_replace(
        e.old_string,
        e.new_string,
        e.replace_all,
        e.start_line,
        e.end_line,
        e.within,
    )? {
        Some(r) => Ok(Op::Replace(r)),
        None => Err("an edit needs `old_string` and `new_string` (or one of `create`, `delete`, `append`, `move_to`)".into()),
    }
}

/// `Ok(None)` when no replacement keys are present at all.
fn lower_replace(
    old: Option<Sp<String>>,
    new: Option<Sp<String>>,
    replace_all: Option<bool>,
    start: Option<Sp<i64>>,
    end: Option<Sp<i64>>,
    within: Option<Sp<String>>,
) -> Result<Option<Replace>, String> {
    if old.is_none()
        && new.is_none()
        && replace_all.is_none()
        && start.is_none()
        && end.is_none()
        && within.is_none()
    {
        return Ok(None);
    }
    let old = old
        .map(|s| s.value)
        .ok_or("`old_string` is required: the exact text to replace")?;
    let new = new.map(|s| s.value).ok_or(
        "`new_string` is required: the replacement text (use \"\" to delete the matched text)",
    )?;
    if old.is_empty() {
        return Err(
            "`old_string` is empty: an empty string matches everywhere; give the exact text to replace \
             (to add text to a file use `append: true`, to make a file use `create: true`)"
                .into(),
        );
    }
    // An `old_string` equal to `new_string` is invalid too, but the planner says so: it also
    // tells whether the text is in the file at all (see `plan`).
    check_nul("old_string", &old)?;
    check_nul("new_string", &new)?;
    let window = match (start.map(|s| s.value), end.map(|s| s.value)) {
        (None, None) => None,
        (s, e) => {
            let start = s.unwrap_or(1);
            if start < 1 {
                return Err(format!(
                    "`start_line` is {start}: lines are numbered from 1"
                ));
            }
            if let Some(e) = e
                && e < start
            {
                return Err(format!("`end_line` ({e}) is before `start_line` ({start})"));
            }
            Some(LineWindow {
                start: start as usize,
                end: e.map(|e| e as usize),
            })
        }
    };
    let within = match within.map(|w| w.value) {
        None => None,
        Some(w) => Some(check_within(w)?),
    };
    Ok(Some(Replace {
        old,
        new,
        replace_all: replace_all.unwrap_or(false),
        window,
        within,
        near: None,
        whole_lines: false,
        fallbacks: Vec::new(),
    }))
}

/// A `within` symbol, trimmed: it must name something.
fn check_within(w: String) -> Result<String, String> {
    check_nul("within", &w)?;
    let w = w.trim();
    if w.split("::")
        .flat_map(|p| p.split('.'))
        .all(|seg| seg.trim().is_empty())
    {
        return Err(
            "`within` names no symbol: give a function, method, class or type, nested with `.` \
             or `::` (e.g. `Config.parse`)"
                .into(),
        );
    }
    Ok(w.to_string())
}
