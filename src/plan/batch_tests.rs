//! The one-pass plan against the one-by-one path: on random edit sequences (overlapping and
//! adjacent edits, `old_string`s an earlier edit removed, `old_string`s taken from an earlier edit's new text, copies of the file's own
//! text as new text, deletions that join two pieces), whenever [`plan_file`] returns a plan, every
//! step and every byte is the one-by-one path's; and it does return one for many sequences whose
//! edits do not interact.

use proptest::prelude::*;

use super::*;

fn replace(old: &str, new: &str) -> Replace {
    Replace {
        old: old.into(),
        new: new.into(),
        replace_all: false,
        window: None,
        within: None,
        near: None,
        whole_lines: false,
        fallbacks: Vec::new(),
    }
}

/// How one edit is made, from the text as the earlier edits left it.
#[derive(Debug, Clone)]
struct Spec {
    /// Where its `old_string` starts (modulo the text's length), or, when `in_last`, how far
    /// before the end of the previous edit's new text.
    at: usize,
    in_last: bool,
    /// Taken from the original file rather than the current text: it may be gone (a miss).
    stale: bool,
    /// The edit is on record as applied before (a re-run).
    recorded: bool,
    len: usize,
    /// 0: delete; 1: a piece of the original file; 2: `old_string` changed by a letter; 3:
    /// `old_string`, a line break and a piece of the original file.
    kind: u8,
    src: usize,
    src_len: usize,
}

/// The original document (`lines` numbered lines, each unique) and the edits the specs make.
fn build(lines: usize, crlf: bool, specs: &[Spec]) -> (TextDoc, Vec<Replace>, Vec<bool>) {
    let eol = if crlf { "\r\n" } else { "\n" };
    let base: String = (0..lines)
        .map(|i| format!("l{i}:{}{eol}", ["ab", "ba", "abab", "x", ""][i % 5]))
        .collect();
    let doc = TextDoc::decode(base.as_bytes()).expect("text");
    let mut cur = doc.clone();
    let mut last: Option<(usize, usize)> = None;
    let mut edits = Vec::new();
    let mut recorded = Vec::new();
    for s in specs {
        let text = if s.stale {
            doc.text().to_string()
        } else {
            cur.text().to_string()
        };
        if text.is_empty() {
            break;
        }
        let start = match (s.in_last, last) {
            (true, Some((a, n))) => (a + n).saturating_sub(s.at % (n + 4)).min(text.len() - 1),
            _ => s.at % text.len(),
        };
        let end = (start + 1 + s.len % 10).min(text.len());
        let old = &text[start..end];
        let src = s.src % base.len();
        let piece = &base[src..(src + s.src_len % 12).min(base.len())];
        let new = match s.kind % 4 {
            0 => String::new(),
            1 => piece.to_string(),
            2 => format!("{}Z{}", &old[..old.len() / 2], &old[old.len() / 2..]),
            _ => format!("{old}\n{piece}"),
        };
        let r = replace(old, &new);
        let step = replace_in(&mut cur, "f.txt", &r, s.recorded, false);
        last = (step.status == EditStatus::Applied).then(|| (start, fold_eol(&new).len()));
        edits.push(r);
        recorded.push(s.recorded);
    }
    (doc, edits, recorded)
}

/// The one-by-one path's steps and document.
fn one_by_one(doc: &TextDoc, edits: &[Replace], recorded: &[bool]) -> (Vec<Step>, TextDoc) {
    let mut d = doc.clone();
    let steps = edits
        .iter()
        .zip(recorded)
        .map(|(r, &rec)| replace_in(&mut d, "f.txt", r, rec, false))
        .collect();
    (steps, d)
}

/// Fails unless the one-pass plan, when there is one, is the one-by-one path's, step for step
/// and byte for byte, and unless both ways of finding occurrences (a substring search per
/// pattern, one automaton for all) make the same plan; says whether there was one.
fn agrees(doc: &TextDoc, edits: &[Replace], recorded: &[bool]) -> Result<bool, TestCaseError> {
    let refs: Vec<&Replace> = edits.iter().collect();
    let planned = plan_file(doc, &refs, recorded);
    let by_substring = plan_file_with(doc, &refs, recorded, Engine::Substring);
    let by_automaton = plan_file_with(doc, &refs, recorded, Engine::Automaton);
    prop_assert_eq!(by_substring.is_some(), by_automaton.is_some());
    prop_assert_eq!(planned.is_some(), by_automaton.is_some());
    let some = planned.is_some();
    for plan in [planned, by_substring, by_automaton].into_iter().flatten() {
        same_as_one_by_one(doc, edits, recorded, plan)?;
    }
    Ok(some)
}

fn same_as_one_by_one(
    doc: &TextDoc,
    edits: &[Replace],
    recorded: &[bool],
    (steps, after, changed): OnePass,
) -> Result<(), TestCaseError> {
    let (want, want_doc) = one_by_one(doc, edits, recorded);
    prop_assert_eq!(steps.len(), want.len());
    for (k, (got, want)) in steps.iter().zip(&want).enumerate() {
        prop_assert_eq!(got.status, want.status, "edit {}: {:?}", k, want.message);
        prop_assert_eq!(got.match_kind, want.match_kind, "edit {}", k);
        prop_assert_eq!(got.replacements, want.replacements, "edit {}", k);
        prop_assert_eq!(&got.lines, &want.lines, "edit {}", k);
        prop_assert_eq!(&got.message, &want.message, "edit {}", k);
        prop_assert!(got.suggestions.is_empty() && want.suggestions.is_empty());
    }
    prop_assert_eq!(after.encode(), want_doc.encode());
    prop_assert_eq!(&after, &want_doc);
    // Where the file changed, as the plan says: sorted, and the bytes outside the same on both
    // sides (the report's diff looks inside alone).
    let (before, after) = (doc.encode(), after.encode());
    let (mut a, mut b) = (0, 0);
    for c in &changed {
        prop_assert!(a <= c.old.start && c.old.start <= c.old.end && c.old.end <= before.len());
        prop_assert!(b <= c.new.start && c.new.start <= c.new.end && c.new.end <= after.len());
        prop_assert_eq!(&before[a..c.old.start], &after[b..c.new.start]);
        (a, b) = (c.old.end, c.new.end);
    }
    prop_assert_eq!(&before[a..], &after[b..]);
    prop_assert_eq!(changed.len(), edits.len());
    Ok(())
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<usize>(),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.2),
        0usize..10,
        0u8..4,
        any::<usize>(),
        0usize..12,
    )
        .prop_map(
            |(at, in_last, stale, recorded, len, kind, src, src_len)| Spec {
                at,
                in_last,
                stale,
                recorded,
                len,
                kind,
                src,
                src_len,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn one_pass_is_one_by_one(
        lines in 1usize..40,
        crlf in prop::bool::weighted(0.1),
        specs in prop::collection::vec(spec(), 1..24),
    ) {
        let (doc, edits, recorded) = build(lines, crlf, &specs);
        let planned = agrees(&doc, &edits, &recorded)?;
        prop_assert!(!(crlf && planned), "a CRLF file is planned one by one");
    }
}

/// A small deterministic generator, for the counts below.
fn lcg(seed: &mut u64) -> usize {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 33) as usize
}

/// The property above can only fail where there is a one-pass plan: many sequences of edits far
/// enough apart must get one, and sequences whose edits interact must be among those compared.
#[test]
fn many_sequences_are_planned_in_one_pass() {
    let mut seed = 7;
    let (mut planned, mut interacting_planned, mut all_applied) = (0, 0, 0);
    for _ in 0..400 {
        let lines = 20 + lcg(&mut seed) % 200;
        let specs: Vec<Spec> = (0..1 + lcg(&mut seed) % 12)
            .map(|_| Spec {
                at: lcg(&mut seed),
                in_last: lcg(&mut seed).is_multiple_of(4),
                stale: lcg(&mut seed).is_multiple_of(8),
                recorded: lcg(&mut seed).is_multiple_of(5),
                len: 4 + lcg(&mut seed) % 6,
                kind: (lcg(&mut seed) % 4) as u8,
                src: lcg(&mut seed),
                src_len: lcg(&mut seed) % 12,
            })
            .collect();
        let (doc, edits, recorded) = build(lines, false, &specs);
        let (steps, _) = one_by_one(&doc, &edits, &recorded);
        let applied = steps.iter().all(|s| s.status == EditStatus::Applied);
        let ok =
            agrees(&doc, &edits, &recorded).expect("the one-pass plan is the one-by-one path's");
        all_applied += usize::from(applied);
        planned += usize::from(ok);
        interacting_planned += usize::from(ok && specs.iter().any(|s| s.in_last));
        assert!(!ok || applied, "a plan only when every edit applies");
    }
    // Copies of the file's own text as new text often hold a later edit's old_string: those
    // sequences are planned one by one, rightly.
    eprintln!("{planned} of {all_applied} planned, {interacting_planned} with adjacent edits");
    assert!(
        planned * 10 >= all_applied * 3,
        "{planned} of {all_applied}"
    );
    assert!(interacting_planned >= 8, "{interacting_planned}");
}

/// An edit of a line that an earlier edit wrote: the later edit must see the earlier one's text.
#[test]
fn chained_edits_see_earlier_ones() {
    let doc = TextDoc::decode(b"a = 1\nb = 2\nc = 3\n").expect("text");
    // Edit 2's old_string exists only after edit 1; edit 3's also in the original (ambiguous).
    let edits = [replace("a = 1", "a = 10"), replace("a = 10", "a = 11")];
    let refs: Vec<&Replace> = edits.iter().collect();
    assert!(plan_file(&doc, &refs, &[false, false]).is_none());
    let edits = [
        replace("b = 2\n", "c = 3\nb = 2\n"),
        replace("c = 3", "c = 4"),
    ];
    let refs: Vec<&Replace> = edits.iter().collect();
    assert!(plan_file(&doc, &refs, &[false, false]).is_none());
    // A deletion that joins two pieces into a later edit's old_string.
    let edits = [replace("1\nb", ""), replace("a = = 2", "x")];
    let refs: Vec<&Replace> = edits.iter().collect();
    assert!(plan_file(&doc, &refs, &[false, false]).is_none());
    // Independent edits, adjacent ones included: planned, with the one-by-one lines.
    let edits = [
        replace("c = 3\n", "c = 3\nd = 4\n"),
        replace("a = 1\n", "a = 1\n\n"),
        replace("b = 2\n", "B\n"),
    ];
    let refs: Vec<&Replace> = edits.iter().collect();
    let (steps, after, _) = plan_file(&doc, &refs, &[false; 3]).expect("planned in one pass");
    let lines: Vec<_> = steps.iter().map(|s| s.lines.clone()).collect();
    assert_eq!(lines, [vec![(3, 3)], vec![(1, 1)], vec![(3, 3)]]);
    assert_eq!(after.text(), "a = 1\n\nB\nc = 3\nd = 4\n");
    // A re-run: an edit on record whose new_string is already there is the one-by-one path's.
    let edits = [replace("a = 1", "b = 2"), replace("c = 3", "c = 4")];
    let refs: Vec<&Replace> = edits.iter().collect();
    assert!(plan_file(&doc, &refs, &[true, false]).is_none());
    assert!(plan_file(&doc, &refs, &[false, true]).is_some());
}

/// The occurrences each way of searching reports, sorted.
fn occurrences(patterns: &[&str], hay: &str, engine: Engine) -> (Vec<(usize, usize)>, bool) {
    let search = Searcher::new(patterns, engine);
    let mut found = Vec::new();
    search
        .each(
            hay.as_bytes(),
            |_| true,
            usize::MAX,
            |m| {
                found.push(m);
                true
            },
        )
        .expect("searched");
    found.sort_unstable();
    (found, search.automaton.get().is_some())
}

/// A few patterns are found by substring search, overlapping occurrences included, exactly as
/// the automaton finds them, and without building it.
#[test]
fn substring_search_finds_what_the_automaton_finds() {
    let hay = "abababa\nab\nba\n\nxyz abab";
    let patterns = ["aba", "ab", "b\n", "\n\n", "abab", "zz"];
    let (by_substring, built) = occurrences(&patterns, hay, Engine::Substring);
    let (by_automaton, _) = occurrences(&patterns, hay, Engine::Automaton);
    assert_eq!(by_substring, by_automaton);
    assert_eq!(by_substring.iter().filter(|(p, _)| *p == 0).count(), 4);
    assert!(!built, "a plain substring search needs no automaton");
    // Auto: a few patterns by substring, many by the automaton.
    let many: Vec<String> = (0..=FEW_PATTERNS).map(|i| format!("l{i}:")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert!(Searcher::new(&patterns, Engine::Auto).finders.is_some());
    assert!(Searcher::new(&many, Engine::Auto).finders.is_none());
}

/// A long periodic pattern in a text that repeats it: restarting the substring search after each
/// occurrence would compare the whole pattern each time (quadratic), so past the budget the
/// automaton finds the occurrences, the same ones; and the plan is the one-by-one path's.
#[test]
fn periodic_patterns_fall_back_to_the_automaton() {
    let (n, l) = (20_000, 1_000);
    let hay = format!("b{}c", "a".repeat(n));
    let run = "a".repeat(l);
    let (by_substring, built) = occurrences(&[run.as_str(), "c"], &hay, Engine::Substring);
    assert!(built, "over budget, the automaton searched");
    assert_eq!(by_substring.len(), n - l + 2);
    let (by_automaton, _) = occurrences(&[run.as_str(), "c"], &hay, Engine::Automaton);
    assert_eq!(by_substring, by_automaton);
    // The first edit covers every occurrence of the run but the first one, which the second
    // edit then replaces: planned in one pass, whichever way is used.
    let doc = TextDoc::decode(hay.as_bytes()).expect("text");
    let edits = [
        replace(&format!("{}c", "a".repeat(n - l)), "X"),
        replace(&run, "Y"),
    ];
    let plan = plan_file_with(
        &doc,
        &edits.iter().collect::<Vec<_>>(),
        &[false, false],
        Engine::Substring,
    )
    .expect("planned in one pass");
    assert_eq!(plan.1.text(), "bYX");
    let (want, want_doc) = one_by_one(&doc, &edits, &[false, false]);
    assert_eq!(plan.1, want_doc);
    let lines: Vec<_> = plan.0.iter().map(|s| s.lines.clone()).collect();
    let want: Vec<_> = want.iter().map(|s| s.lines.clone()).collect();
    assert_eq!(lines, want);
}

/// The same patch planned with its batched files read and planned ahead (on every core) and
/// without: the same outcomes, changes, report entries and hashes, in the same order. The patch
/// mixes what the ahead path must hand back unchanged: files it plans, a CRLF file and a file
/// with a missing `old_string` (the one-pass plan gives up), a file that is not UTF-8, a file
/// with one edit (not batched), a created file and a deleted one between them.
#[test]
fn files_planned_ahead_give_the_plan_made_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let mut yaml = String::from("edits:\n");
    let edit = push_edit;
    for d in 0..3 {
        std::fs::create_dir_all(root.join(format!("pkg{d}"))).expect("mkdir");
        for f in 0..8 {
            let path = format!("pkg{d}/m{f}.py");
            let text: String = (0..40)
                .map(|i| format!("line_{d}_{f}_{i} = {i}\n"))
                .collect();
            std::fs::write(root.join(&path), text).expect("write");
            edit(
                &mut yaml,
                &path,
                &format!("line_{d}_{f}_3 = 3\n"),
                "changed = 3\n",
            );
            if f == 2 {
                yaml.push_str(
                    "  - file_path: new.txt\n    create: true\n    new_string: \"made\\n\"\n",
                );
            }
            edit(
                &mut yaml,
                &path,
                &format!("line_{d}_{f}_9 = 9\n"),
                "changed = 9\n",
            );
        }
    }
    std::fs::write(root.join("pkg0/crlf.py"), "a = 1\r\nb = 2\r\nc = 3\r\n").expect("write");
    edit(&mut yaml, "pkg0/crlf.py", "a = 1\n", "a = 10\n");
    edit(&mut yaml, "pkg0/crlf.py", "c = 3\n", "c = 30\n");
    std::fs::write(root.join("pkg1/miss.py"), "x = 1\ny = 2\n").expect("write");
    edit(&mut yaml, "pkg1/miss.py", "x = 1\n", "x = 10\n");
    edit(&mut yaml, "pkg1/miss.py", "z = 3\n", "z = 30\n");
    std::fs::write(root.join("pkg2/latin1.py"), b"s = '\xe9'\nt = 2\n").expect("write");
    edit(&mut yaml, "pkg2/latin1.py", "t = 2\n", "t = 20\n");
    edit(&mut yaml, "pkg2/latin1.py", "s = ", "s2 = ");
    std::fs::write(root.join("single.py"), "only = 1\n").expect("write");
    edit(&mut yaml, "single.py", "only = 1\n", "only = 2\n");
    std::fs::write(root.join("gone.py"), "bye\n").expect("write");
    yaml.push_str("  - file_path: gone.py\n    delete: true\n");

    let patch = parse_yaml(&yaml);
    let roots = crate::repo::Roots::new(root.clone(), Vec::new()).expect("roots");
    let record = crate::plan::record::Record::default();
    let start = crate::fs::stamp::now();
    let run = |ahead: bool| {
        AHEAD_TAKEN.with(|c| c.set(0));
        let mut planned = plan_with_ahead(&patch, &roots, &record, ahead);
        // Each plan began reading at its own moment; the stamps read must be the same.
        for c in &mut planned.changes {
            if let Some((_, since)) = &mut c.read {
                *since = start;
            }
        }
        assert!(
            planned
                .changes
                .iter()
                .all(|c| c.read.is_some() == matches!(c.before, Disk::File { .. })),
            "a stamp for every file read"
        );
        // Each file planned in one pass says where it changed, and its diff looks there alone
        // (the same diff as the whole files'); the others are diffed whole.
        for f in &planned.files {
            let special = ["crlf", "miss", "latin1"]
                .iter()
                .any(|s| f.path.contains(s));
            // A file with one edit is planned in one pass too, the patch having many files.
            let batched = (f.path.starts_with("pkg") && !special) || f.path == "single.py";
            assert_eq!(f.changed.is_some(), batched, "{}", f.path);
            if let (Some(changed), Some(b), Some(a)) = (&f.changed, &f.before, &f.after) {
                assert_eq!(
                    crate::text::unified_diff_within(&f.path, b, a, changed),
                    crate::text::unified_diff(&f.path, &f.path, Some(b), Some(a)),
                    "{}",
                    f.path
                );
            }
        }
        (
            format!("{planned:#?}"),
            AHEAD_TAKEN.with(std::cell::Cell::get),
        )
    };
    let (ahead, taken) = run(true);
    let (in_order, none) = run(false);
    assert_eq!(none, 0);
    // The 24 generated files, the three special ones and the one with a single edit are
    // batched; all are taken ahead.
    assert_eq!(taken, 28, "files taken from the plan made ahead");
    assert_eq!(ahead, in_order);
    assert!(ahead.contains("NotFound"), "the miss is in the plan");
}

/// A large patch's paths resolved ahead, on every core, give the plan made resolving them one by
/// one: plain files in many folders, and every way a path can resolve otherwise (a folder or a
/// file that is a symlink inside the repository, a symlink out of it, a dangling one, a path
/// into `.git`, out through `..`, into a missing folder).
#[test]
fn paths_resolved_ahead_give_the_plan_resolved_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let mut yaml = String::from("edits:\n");
    let mut edit = |path: &str| push_edit(&mut yaml, path, "a = 1\n", "a = 2\n");
    for d in 0..5 {
        std::fs::create_dir_all(root.join(format!("pkg{d}"))).expect("mkdir");
        for f in 0..16 {
            let path = format!("pkg{d}/m{f}.py");
            std::fs::write(root.join(&path), "a = 1\n").expect("write");
            edit(&path);
        }
    }
    std::fs::write(outside.path().join("x.py"), "a = 1\n").expect("write");
    std::os::unix::fs::symlink("pkg0", root.join("lnk")).expect("link");
    std::os::unix::fs::symlink(outside.path(), root.join("out")).expect("link");
    std::os::unix::fs::symlink("pkg1/m1.py", root.join("alias.py")).expect("link");
    std::os::unix::fs::symlink("nowhere.py", root.join("dangling.py")).expect("link");
    std::fs::create_dir_all(root.join(".git")).expect("mkdir");
    for path in [
        "lnk/m3.py",
        "out/x.py",
        "alias.py",
        "dangling.py",
        ".git/config",
        "../escape.py",
        "nope/missing.py",
        "./pkg2//m4.py",
        "pkg3/../pkg4/m5.py",
    ] {
        edit(path);
    }
    let patch = parse_yaml(&yaml);
    let roots = crate::repo::Roots::new(root.clone(), vec![root.join(".git")]).expect("roots");
    let record = crate::plan::record::Record::default();
    let run = |ahead: bool| {
        let planned = plan_with_ahead(&patch, &roots, &record, ahead);
        // The stamps' moments and the files read ahead aside, the plans must be the same.
        let outcomes = format!("{:#?}", planned.outcomes);
        let files: Vec<_> = planned.files.iter().map(|f| f.path.clone()).collect();
        (outcomes, files, planned.patch_digest)
    };
    let ahead = run(true);
    let in_order = run(false);
    assert!(ahead.0.contains("outside the repository"), "{}", ahead.0);
    assert_eq!(ahead, in_order);
}

/// `patch` planned against the working tree under `roots`, with the work done ahead on every
/// core (files read and planned, paths resolved) or without it.
fn plan_with_ahead(
    patch: &crate::patch::Patch,
    roots: &crate::repo::Roots,
    record: &crate::plan::record::Record,
    ahead: bool,
) -> crate::plan::Plan {
    use crate::plan::{Options, Source, plan};
    AHEAD_OFF.with(|c| c.set(!ahead));
    let planned = plan(
        patch,
        roots,
        &Source::WorkTree,
        record,
        Options {
            lenient: false,
            history: None,
        },
    );
    AHEAD_OFF.with(|c| c.set(false));
    planned
}

/// Appends a replacement of `old` by `new` in `path` to a YAML patch's `edits:`.
fn push_edit(yaml: &mut String, path: &str, old: &str, new: &str) {
    yaml.push_str(&format!(
        "  - file_path: {path:?}\n    old_string: {old:?}\n    new_string: {new:?}\n"
    ));
}

/// A YAML patch, parsed.
fn parse_yaml(yaml: &str) -> crate::patch::Patch {
    crate::patch::parse_input_with(
        yaml.as_bytes(),
        "p.yaml",
        crate::patch::InputFormat::Yaml,
        &crate::patch::InputOptions::default(),
    )
    .expect("patch parses")
}
