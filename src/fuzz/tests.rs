//! The fuzz targets without cargo-fuzz: every target's seed corpus and every kept crash input
//! (`fuzz/regressions/<target>/`) replayed through [`Target::run`], and proof that the targets'
//! checks do fail on a broken invariant.
use std::path::{Path, PathBuf};

use super::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_target_replays_its_seed_corpus() {
    for t in Target::ALL {
        let seeds = seeds(t, root());
        // Each target gets a real corpus from the fixtures, not an empty directory.
        assert!(
            seeds.len() >= 15,
            "{}: only {} seeds",
            t.name(),
            seeds.len()
        );
        for (i, s) in seeds.iter().enumerate() {
            let r = std::panic::catch_unwind(|| t.run(s));
            assert!(
                r.is_ok(),
                "{} seed {i} failed: {:?}",
                t.name(),
                String::from_utf8_lossy(s)
            );
        }
    }
}

#[test]
fn every_kept_crash_input_replays() {
    let dir = root().join("fuzz/regressions");
    let mut n = 0;
    for t in Target::ALL {
        let Ok(rd) = std::fs::read_dir(dir.join(t.name())) else {
            continue;
        };
        let mut files: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).expect("read crash input");
            let r = std::panic::catch_unwind(|| t.run(&data));
            assert!(r.is_ok(), "{} regressed on {}", t.name(), f.display());
            n += 1;
        }
    }
    // Every folder name is a target: a misspelt one would silently replay nothing.
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            name == "README.md" || Target::from_name(&name).is_some(),
            "fuzz/regressions/{name} names no target"
        );
    }
    eprintln!("{n} kept crash inputs replayed");
}

#[test]
fn matcher_cases_round_trip_through_bytes() {
    let r = Replace {
        old: "a\nb\n".into(),
        new: "c\n".into(),
        replace_all: true,
        window: Some(LineWindow {
            start: 3,
            end: Some(5),
        }),
        within: None,
        near: Some(Near {
            // The hint shares its byte with the window's length: line 3 is that byte, 2.
            line: Some(3),
            anchors: Vec::new(),
            at_eof: true,
            at_start: false,
        }),
        whole_lines: true,
        fallbacks: Vec::new(),
    };
    let bytes = matcher_bytes(b"x\r\na\r\nb\r\n", &r, true);
    let case = matcher_case(&bytes).expect("a case");
    assert_eq!(case.file, b"x\r\na\r\nb\r\n");
    assert_eq!(case.replace, r);
    assert!(case.lenient);
    // What no patch can ask is skipped, not fed to the matcher.
    assert!(
        matcher_case(&matcher_bytes(
            b"x",
            &Replace {
                new: r.old.clone(),
                ..r.clone()
            },
            false
        ))
        .is_none()
    );
}

#[test]
fn diff_options_round_trip_through_a_byte() {
    for strip in [None, Some(0), Some(1), Some(2), Some(3)] {
        for unidiff_zero in [false, true] {
            let o = InputOptions {
                strip,
                unidiff_zero,
                ..InputOptions::default()
            };
            assert_eq!(diff_options(diff_options_byte(&o)), o);
        }
    }
}

/// The checks are real: each fails on the broken invariant it is about.
#[test]
fn the_checks_catch_what_they_are_about() {
    let fails = |f: &dyn Fn()| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err();
    // An invalid-patch error without a position.
    let no_position = Error::Patch(Box::new(crate::error::PatchError {
        message: "bad".into(),
        help: "fix it".into(),
        source_code: None,
        span: None,
        label: String::new(),
        line: None,
        column: None,
    }));
    assert!(fails(&|| check_error(b"x", &no_position)));
    // A position past the end of the text.
    let past_end = Error::Patch(Box::new(crate::error::PatchError {
        message: "bad".into(),
        help: "fix it".into(),
        source_code: None,
        span: None,
        label: String::new(),
        line: Some(3),
        column: Some(1),
    }));
    assert!(fails(&|| check_error(b"one line\n", &past_end)));
    assert!(!fails(&|| check_error(b"a\nb\nc", &past_end)));
    // Another kind of error for unreadable text.
    let usage = Error::Usage {
        message: "m".into(),
        help: "h".into(),
    };
    assert!(fails(&|| check_error(b"x", &usage)));
    // Edits out of order, and a converted hunk that would match inside lines.
    let mut patch = crate::patch::parse("- file_path: a\n  old_string: x\n  new_string: y\n", "p")
        .expect("a patch");
    check_patch(&patch, false);
    assert!(fails(&|| check_patch(&patch, true)));
    patch.edits[0].index = 1;
    assert!(fails(&|| check_patch(&patch, false)));
    // A suggestion whose range does not follow lines is caught by the range check.
    let doc = TextDoc::decode(b"ab\ncd\n").expect("text");
    assert_eq!(lines_range(&doc, 2, 2), 3..5);
    assert_eq!(lines_range(&doc, 1, 2), 0..5);
}

/// A few inputs of each target that reach deep paths: a miss with suggestions in a CRLF file, a
/// lenient re-indented match, mixed line endings, a BOM.
#[test]
fn targets_run_on_hand_written_inputs() {
    let r = |old: &str, new: &str, whole: bool| Replace {
        old: old.into(),
        new: new.into(),
        replace_all: false,
        window: None,
        within: None,
        near: None,
        whole_lines: whole,
        fallbacks: Vec::new(),
    };
    let file = b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2\r\n";
    for (case, lenient) in [
        (
            r("def f():\n  return 1\n", "def f():\n  return 3\n", true),
            true,
        ),
        (
            r("def f():\n  return 1\n", "def f():\n  return 3\n", true),
            false,
        ),
        (r("def h():\n    return 1\n", "x\n", true), false),
        (r("return 2", "return 4", false), false),
    ] {
        Target::Matcher.run(&matcher_bytes(file, &case, lenient));
    }
    let (out, after) =
        replace_text(file, "f.txt", &r("return 2", "return 4", false), false).expect("text");
    assert_eq!(out.status, EditStatus::Applied);
    assert_eq!(
        after,
        b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 4\r\n"
    );
    for data in [
        &b"\xef\xbb\xbfa\r\nb\nc"[..],
        b"\x10\xf0\x03one\r\ntwo\r\n",
        b"\x00\xff\x02\r\r\n\r",
        "\u{2014}x\r\n\u{201c}y\n".as_bytes(),
    ] {
        Target::LineEndings.run(data);
    }
}
