//! Test support: every recorded tool output in `testdata/`, whole and cut at many points, for the
//! "a parser never panics, whatever it is fed" tests of the parsers added after `mod.rs`'s own
//! list (which covers the older ones).

/// Calls `f` on every recording and on prefixes of it (truncated output), cut at char boundaries.
pub(crate) fn each_prefix(mut f: impl FnMut(&str)) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/checks/parse/testdata");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("testdata") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("utf-8 recording");
        let cuts = (0..=text.len())
            .step_by(37)
            .chain([text.len()])
            .filter(|&i| text.is_char_boundary(i));
        for cut in cuts {
            f(&text[..cut]);
        }
        seen += 1;
    }
    assert!(seen >= 40, "only {seen} recordings");
}
