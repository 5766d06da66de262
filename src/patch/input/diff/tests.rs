//! Unit tests of the diff converter's parts, on input recorded from `git diff`, GNU `diff -u`
//! and git's own encoders.

use super::binary::{self, Method, apply_delta, decode_85, encode_85};
use super::names::{
    TERM_TAB, find_name, find_name_traditional, guess_strip, guess_traditional_strip,
    has_epoch_timestamp, header_name, is_dev_null, timestamp_len, unquote_c,
};

#[test]
fn quoted_names_are_one_name() {
    // `git diff` of a file named `post\image.txt`: the backslash is part of the name.
    let (n, rest) = unquote_c(r#""b/post\\image.txt""#).expect("quoted");
    assert_eq!((n.as_str(), rest), (r"b/post\image.txt", ""));
    let (n, _) = unquote_c(r#""a/a\tb.txt""#).expect("tab");
    assert_eq!(n, "a/a\tb.txt");
    let (n, _) = unquote_c(r#""a/q\"uote.txt""#).expect("quote");
    assert_eq!(n, "a/q\"uote.txt");
    let (n, _) = unquote_c(r#""a/caf\303\251.txt""#).expect("octal UTF-8");
    assert_eq!(n, "a/café.txt");
    for bad in [r#""a/x"#, r#""a/\q""#, r#""a/\30""#, r#""a/\377""#, "a/x"] {
        assert!(unquote_c(bad).is_err(), "{bad}");
    }
    assert_eq!(
        find_name(r#""b/post\\image.txt""#, None, 1, TERM_TAB).as_deref(),
        Some(r"post\image.txt")
    );
}

#[test]
fn diff_git_line_names() {
    assert_eq!(header_name(1, "a/x.txt b/x.txt").as_deref(), Some("x.txt"));
    assert_eq!(
        header_name(1, "a/re named.txt b/re named.txt").as_deref(),
        Some("re named.txt")
    );
    // A rename: the two halves differ, the name comes from the rename lines.
    assert_eq!(header_name(1, "a/ren.txt b/re named.txt"), None);
    assert_eq!(
        header_name(1, r#""a/a\tb.txt" "b/a\tb.txt""#).as_deref(),
        Some("a\tb.txt")
    );
    assert_eq!(
        header_name(1, r#"a/plain "b/plain""#).as_deref(),
        Some("plain")
    );
    // `--no-prefix`: the same text twice, read with -p0.
    assert_eq!(header_name(0, "src/x src/x").as_deref(), Some("src/x"));
    assert_eq!(header_name(0, "a/x b/x"), None);
    // An absolute name is never a name.
    assert_eq!(header_name(0, "/etc/x /etc/x"), None);
}

#[test]
fn traditional_names_timestamps_and_strip_guess() {
    // GNU diff -u: a tab, a date with nanoseconds and a zone.
    let minus = "x.txt.orig\t2026-11-26 00:34:41.258833270 +0000";
    let plus = "x.txt\t2026-11-26 00:34:41.258851285 +0000";
    assert_eq!(timestamp_len(plus.as_bytes()), plus.len() - "x.txt".len());
    let first = find_name_traditional(minus, None, 0);
    assert_eq!(first.as_deref(), Some("x.txt.orig"));
    // The `+++` name is the file: `x.txt.orig` is not a prefix of it.
    assert_eq!(
        find_name_traditional(plus, first.as_deref(), 0).as_deref(),
        Some("x.txt")
    );
    // ... but a `---` name that is a prefix of the `+++` one wins (`x` over `x~`).
    assert_eq!(
        find_name_traditional("x.txt~\t2020-01-01 00:00:00", Some("x.txt"), 0).as_deref(),
        Some("x.txt")
    );
    // Spaces inside the name, and a timestamp after spaces instead of a tab.
    assert_eq!(
        find_name_traditional("my file.txt  2010-07-05 19:41:17", None, 0).as_deref(),
        Some("my file.txt")
    );
    assert_eq!(
        find_name_traditional("a\tb.txt\t2010-07-05 19:41:17 -0500", None, 0).as_deref(),
        Some("a\tb.txt")
    );
    // svn: `(revision 12)` is no timestamp: the name runs to the tab.
    assert_eq!(
        find_name_traditional("lib/x.c\t(revision 12)", None, 1).as_deref(),
        Some("x.c")
    );
    assert_eq!(guess_strip("x.txt\t2026-11-26 00:34:41 +0000"), Some(0));
    assert_eq!(guess_strip("a/x.txt"), None);
    assert_eq!(guess_strip("/dev/null\t1970-01-01 00:00:00 +0000"), None);
    assert!(is_dev_null("/dev/null") && is_dev_null("/dev/null\t2020-01-01"));
    assert!(!is_dev_null("/dev/nullx"));
}

#[test]
fn traditional_strip_levels() {
    // git's own guess: names without a folder.
    assert_eq!(
        guess_traditional_strip("x.txt.orig\t2024-01-01", "x.txt\t2024-01-01"),
        0
    );
    // Two trees (`diff -Nur old new`, `a/` and `b/`): one folder goes.
    assert_eq!(
        guess_traditional_strip("old/src/x.c\t2024-01-01", "new/src/x.c"),
        1
    );
    assert_eq!(guess_traditional_strip("a/src/x.c", "b/src/x.c"), 1);
    // The same folder on both sides (`ruff format --diff`, `diff -u` at the root): nothing.
    assert_eq!(guess_traditional_strip("pkg/mod.py", "pkg/mod.py"), 0);
    assert_eq!(guess_traditional_strip("lib/util.c~", "lib/util.c"), 0);
    // Against /dev/null: only a conventional prefix is one.
    assert_eq!(guess_traditional_strip("/dev/null", "b/new.txt"), 1);
    assert_eq!(guess_traditional_strip("/dev/null", "pkg/new.py"), 0);
    assert_eq!(guess_traditional_strip("/dev/null", "new.py"), 0);
}

#[test]
fn epoch_timestamps_in_any_zone() {
    for yes in [
        "new.txt\t1970-01-01 00:00:00.000000000 +0000",
        "new.txt\t1970-01-01 00:00:00 +0000",
        "new.txt\t1970-01-01 01:00:00.000000000 +0100",
        "new.txt\t1969-12-31 19:00:00.000000000 -0500",
        "new.txt\t1970-01-01 05:30:00 +05:30",
    ] {
        assert!(has_epoch_timestamp(yes), "{yes}");
    }
    for no in [
        "new.txt\t1970-01-01 00:00:01 +0000",
        "new.txt\t1970-01-01 00:00:00.5 +0000",
        "new.txt\t1970-01-01 01:00:00 +0000",
        "new.txt 1970-01-01 00:00:00 +0000",
        "new.txt\t2020-01-01 00:00:00 +0000",
        "new.txt",
    ] {
        assert!(!has_epoch_timestamp(no), "{no}");
    }
}

#[test]
fn base85_round_trip_and_refusals() {
    let data: Vec<u8> = (0..=255u8).chain(0..7).collect();
    let text = encode_85(&data);
    assert_eq!(decode_85(&text, data.len()).expect("decodes"), data);
    // git's encoding of four zero bytes and of 0xffffffff.
    assert_eq!(decode_85(b"00000", 4).expect("zeros"), vec![0; 4]);
    assert_eq!(decode_85(b"|NsC0", 4).expect("max"), vec![0xff; 4]);
    assert!(decode_85(b"|NsC1", 4).is_err(), "a group above 2^32-1");
    assert!(decode_85(b"0000 ", 4).is_err(), "not a base85 digit");
    assert!(decode_85(b"0000", 4).is_err(), "cut short");
}

#[test]
fn recorded_literal_hunk_inflates_to_the_file() {
    // `git diff --binary` of bin.dat: its new content, 11 bytes.
    let bytes = binary::data_line("ScmZQzWODNKa}0|7&j0`mpaRGM").expect("data line");
    let data = binary::inflate(&bytes, 11).expect("inflates");
    assert_eq!(data, b"\x00\x01\x02BINARY\xff\x00");
    assert_eq!(
        crate::repo::blob_id(&data).to_string(),
        "47651a430d995725cace39821bf216b716849a24"
    );
    assert_eq!(
        binary::hunk_header("literal 11"),
        Some((Method::Literal, 11))
    );
    assert!(
        binary::inflate(&bytes, 12).is_err(),
        "a wrong size is refused"
    );
    assert!(
        binary::data_line("Z00000").is_err(),
        "length over the line's bytes"
    );
    assert!(binary::data_line("A0000").is_err(), "not a multiple of 5");
}

#[test]
fn recorded_delta_hunk_applies_as_git_does() {
    // `git diff --binary` of a 3000-byte file with 4 bytes changed and 4 appended.
    let src: Vec<u8> = (0..3000u32).map(|i| ((i * 7 + 3) % 251) as u8).collect();
    assert_eq!(
        crate::repo::blob_id(&src).to_string(),
        "6dee1f624b2f0ba87f088018c2b37680c9f1c097"
    );
    let bytes = binary::data_line("ecmdlXzDIn+3ucx8_W<|JADPauvy>!e<^TX@v<Q~~").expect("line");
    let delta = binary::inflate(&bytes, 22).expect("inflates");
    let out = apply_delta(&src, &delta).expect("applies");
    assert_eq!(
        crate::repo::blob_id(&out).to_string(),
        "94c9e5fb3828b91b75abe01ab259b5b2f1a29a8e"
    );
    assert_eq!(&out[1000..1004], b"PGPG");
    assert!(out.ends_with(b"tail"));
    // The delta names its source's size: another file is refused, never half-applied.
    assert!(apply_delta(&src[..2999], &delta).is_err());
    // Damaged deltas: cut off, a copy past the end, the reserved command 0.
    assert!(apply_delta(&src, &delta[..delta.len() - 1]).is_err());
    assert!(apply_delta(b"ab", &[2, 4, 0x91, 1, 4]).is_err());
    assert!(apply_delta(b"ab", &[2, 1, 0]).is_err());
    assert_eq!(
        apply_delta(b"ab", &[2, 3, 0x90, 2, 1, b'c']).expect("ok"),
        b"abc"
    );
}

/// No input panics: every cut of diffs with modes, links, copies, quoted names, traditional
/// headers and binary hunks, and random damage to them, parses or fails with an error.
#[test]
fn no_panic_on_damaged_git_and_traditional_diffs() {
    use crate::patch::{InputFormat, InputOptions};
    let samples = [
        "diff --git \"a/t\\tb\" \"b/t\\tb\"\nold mode 100644\nnew mode 100755\nsimilarity index 90%\ncopy from \"t\\tb\"\ncopy to \"c\\303\\251\"\nindex 1234567..89abcde 120000\n--- \"a/t\\tb\"\t\n+++ \"b/c\\303\\251\"\t\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n",
        "diff --git a/bin.dat b/bin.dat\nindex b43761b27df02a0c6c305120d37445368d1ac5e1..47651a430d995725cace39821bf216b716849a24 100644\nGIT binary patch\nliteral 11\nScmZQzWODNKa}0|7&j0`mpaRGM\n\ndelta 10\nRcmZQzWJ=1+ODwAV4*(1}1Bd_s\n\n",
        "--- x.txt.orig\t2026-11-26 00:34:41.258833270 +0000\n+++ x.txt 2026-11-26 00:34:41 +0000\n@@ -0,0 +1,2 @@\n+a\n+b\n--- new\t1969-12-31 19:00:00.000000000 -0500\n+++ new\t2024-01-01\n@@ -3,0 +4 @@\n+c\n",
    ];
    let opts = [
        InputOptions::default(),
        InputOptions {
            strip: Some(3),
            unidiff_zero: true,
            directory: Some("d".into()),
            cwd_prefix: Some("c".into()),
        },
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rand = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for sample in samples {
        let bytes = sample.as_bytes();
        for cut in 0..=bytes.len() {
            for o in &opts {
                let _ = crate::patch::input::parse(&bytes[..cut], "p", InputFormat::Diff, o);
            }
        }
        for _ in 0..300 {
            let mut b = bytes.to_vec();
            for _ in 0..1 + rand() % 4 {
                let at = (rand() as usize) % (b.len() + 1);
                match rand() % 3 {
                    0 if at < b.len() => {
                        b.remove(at);
                    }
                    1 => b.insert(at, b"\"\\/ \t0@-+\n"[(rand() % 10) as usize]),
                    _ => b.truncate(at),
                }
            }
            for o in &opts {
                let _ = crate::patch::input::parse(&b, "p", InputFormat::Diff, o);
            }
        }
    }
}
