//! Matching one replacement in one document: exact and whole-line matches, tie-breaks, the
//! format's fallback readings, `--lenient`'s unique relaxed match, and the explanation of a miss
//! (its suggestions come from [`super::suggest`]).

use super::*;

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
pub(super) struct MissCtx<'a> {
    pub(super) lenient: bool,
    pub(super) lookback: Option<suggest::Lookback<'a>>,
}

/// The replacement rules of docs/patch-format.md on one document, without a look-back.
pub(super) fn replace_in(
    doc: &mut TextDoc,
    shown: &str,
    r: &Replace,
    recorded: bool,
    lenient: bool,
) -> Step {
    let ctx = MissCtx {
        lenient,
        lookback: None,
    };
    replace_with(doc, shown, r, recorded, &ctx)
}

/// The replacement rules of docs/patch-format.md on one document.
pub(super) fn replace_with(
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
        // A match lies inside some occurrence of new_string when the farthest end among the
        // occurrences starting at or before it reaches its end (they come in order of their
        // starts; one scan per match was quadratic).
        let reach: Vec<usize> = new_spans
            .iter()
            .scan(0, |far, n| {
                *far = n.end.max(*far);
                Some(*far)
            })
            .collect();
        let inside_new = matches.iter().all(|m| {
            let upto = new_spans.partition_point(|n| n.start <= m.start);
            upto > 0 && reach[upto - 1] >= m.end
        });
        if inside_new {
            let mut s = Step::new(EditStatus::AlreadyApplied);
            s.lines = doc.line_ranges(&new_spans);
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
                s.lines = doc.line_ranges(&matches);
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
            let lines = doc.line_ranges(&matches);
            doc.replace_all(&matches, &new);
            Step::applied(Some(MatchKind::Exact), n, lines)
        }
        n => {
            let mut s = Step::new(EditStatus::Ambiguous);
            s.lines = doc.line_ranges(&matches);
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
pub(super) fn fill_empty(doc: &mut TextDoc, shown: &str, new: &str, recorded: bool) -> Step {
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
pub(super) fn relaxed_step(
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
pub(super) fn miss(
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
        match lenient_step(doc, shown, r, scope, old, new) {
            Ok(step) => return step,
            Err(n) => not_reindentable = n,
        }
    }
    let text = doc.text();
    // The file's lines and line hashes, shared by the ladder and the ranking.
    let file = suggest::FileLines::new(text);
    let pool = scope::diagnose(doc, &file, old, scope, scope::POOL);
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
    let explained = suggest::explain_in(&query, &file, pool, scope::MAX_CANDIDATES);
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

    let facts = MissFacts {
        doc,
        shown,
        r,
        scope,
        old,
        new,
        candidates: &candidates,
        stale: explained.stale.as_deref(),
        tie: &explained.tie,
        lenient,
        not_reindentable,
    };
    s.message = Some(miss_message(&facts));
    s.snippet = Some(miss_snippet(shown, text, &candidates));
    s
}

/// What the message of a miss is made from.
struct MissFacts<'a> {
    doc: &'a TextDoc,
    shown: &'a str,
    r: &'a Replace,
    scope: &'a scope::Scope,
    old: &'a str,
    new: &'a str,
    candidates: &'a [suggest::Candidate],
    stale: Option<&'a str>,
    tie: &'a [(usize, usize)],
    lenient: bool,
    not_reindentable: bool,
}

/// `--lenient`'s readings in order (the edit's own, then those without optional lines): the step
/// of the first that applies, or `Err(true)` when one matched but could not be re-indented.
fn lenient_step(
    doc: &mut TextDoc,
    shown: &str,
    r: &Replace,
    scope: &scope::Scope,
    old: &str,
    new: &str,
) -> Result<Step, bool> {
    // The readings without optional lines (aider's leading blank line of SEARCH, …) come next.
    let trimmed = r.fallbacks.iter().filter_map(|f| match f {
        crate::patch::Fallback::Without { old, new, .. } => Some((fold_eol(old), fold_eol(new))),
        _ => None,
    });
    let readings = std::iter::once((
        std::borrow::Cow::Borrowed(old),
        std::borrow::Cow::Borrowed(new),
    ))
    .chain(trimmed);
    let mut not_reindentable = false;
    for (old, new) in readings {
        match relaxed_step(doc, shown, r, scope, &old, &new) {
            Ok(step) => return Ok(step),
            Err(true) => not_reindentable = true,
            Err(false) => {}
        }
    }
    Err(not_reindentable)
}

/// The message of a miss: where it was looked for, what the best candidate is and what to do
/// about it, then the notes (a stale text, look-alikes, the scope, new_string already there).
fn miss_message(f: &MissFacts) -> String {
    let mut msg = format!("old_string was not found in {}", f.shown);
    if let Some(w) = f.r.window {
        match w.end {
            Some(e) => msg.push_str(&format!(" within lines {}-{e}", w.start)),
            None => msg.push_str(&format!(" from line {} on", w.start)),
        }
    }
    msg.push_str(&f.scope.inside);
    candidate_advice(f, &mut msg);
    if let (Some(why), Some(c)) = (&f.stale, f.candidates.first())
        && c.kind != CandidateKind::Stale
    {
        msg.push_str(". Also: ");
        msg.push_str(why);
    }
    if !f.tie.is_empty() {
        let spans: Vec<String> = f
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
    if let Some(note) = scope::outside_note(f.doc, f.old, f.scope) {
        msg.push_str(&note);
    }
    if let Some(note) = already_there(f) {
        msg.push_str(&note);
    }
    msg
}

/// What the best candidate is, and what to do about it.
fn candidate_advice(f: &MissFacts, msg: &mut String) {
    match f.candidates.first() {
        Some(c) if c.kind == CandidateKind::Stale => {
            if let Some(why) = &f.stale {
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
            let in_window = if f.scope.symbol {
                f.scope.holds_lines(f.doc, c.start_line, c.end_line)
            } else {
                f.r.window.is_none_or(|w| {
                    c.start_line >= w.start && w.end.is_none_or(|e| c.end_line <= e)
                })
            };
            msg.push_str(&format!(
                "; lines {}-{} differ from it only in {what}: copy the exact text from the suggestion",
                c.start_line, c.end_line,
            ));
            if !in_window {
                msg.push_str(if f.scope.symbol {
                    " (they lie outside the search scope: check `within` and the line window)"
                } else {
                    " (they lie outside start_line/end_line: check the line window)"
                });
            } else if !f.lenient {
                msg.push_str(", or re-run with --lenient to apply it re-indented");
            } else if f.not_reindentable {
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
}

/// `new_string` already stands in the file: another tool may have applied the edit.
fn already_there(f: &MissFacts) -> Option<String> {
    if f.new.is_empty() {
        return None;
    }
    let text = f.doc.text();
    let spots: Vec<(usize, usize)> = if f.r.whole_lines {
        whole::line_matches(text, 0..text.len(), f.new)
    } else {
        // memmem (SIMD) rather than `match_indices`: a miss in a large file scanned all of it
        // with the byte-serial searcher. Both find the same non-overlapping occurrences.
        memchr::memmem::find_iter(text.as_bytes(), f.new.as_bytes())
            .take(3)
            .map(|i| i..i + f.new.len())
            .collect()
    }
    .iter()
    .take(3)
    .map(|m| f.doc.line_range(m))
    .collect();
    let (a, b) = spots.first()?;
    Some(format!(
        ". Note: new_string already stands at line{} {}: if another tool applied this edit, drop it from the patch",
        if a == b { "" } else { "s" },
        if a == b {
            a.to_string()
        } else {
            format!("{a}-{b}")
        }
    ))
}

/// The file with the candidates underlined, for the human report.
fn miss_snippet(shown: &str, text: &str, candidates: &[suggest::Candidate]) -> Snippet {
    Snippet {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `replace_all` over 80,000 matches (the size that was quadratic): the bytes are exactly
    /// `str::replace`'s, CRLF kept, and each match's line is reported.
    #[test]
    fn replace_all_with_many_matches_is_str_replace() {
        let line = "let value = old_name(old_name);\r\n";
        let text = line.repeat(40_000);
        let r = Replace {
            old: "old_name".into(),
            new: "new\nname".into(),
            replace_all: true,
            window: None,
            within: None,
            near: None,
            whole_lines: false,
            fallbacks: Vec::new(),
        };
        let (outcome, after) = replace_text(text.as_bytes(), "big.rs", &r, false).expect("text");
        assert_eq!(outcome.status, EditStatus::Applied);
        assert_eq!(outcome.replacements, 80_000);
        // A replacement inside a CRLF line takes that line's ending.
        assert_eq!(after, text.replace("old_name", "new\r\nname").into_bytes());
        let lines: Vec<(usize, usize)> = (1..=40_000).flat_map(|l| [(l, l), (l, l)]).collect();
        assert_eq!(outcome.lines, lines);
    }
}
