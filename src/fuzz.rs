//! Fuzzing entry points: each [`Target`] takes arbitrary bytes, runs one part of patchgate on them,
//! and checks that part's invariants, panicking when one breaks (a panic of patchgate's own code on
//! such input is a bug as well: user input must never panic). The cargo-fuzz targets in `fuzz/`
//! are one line each around [`Target::run`], and a plain `cargo test` replays every target's seed
//! corpus ([`seeds`], made from the test fixtures) and the crash inputs kept in `fuzz/regressions/`
//! through the same function, so a regression is caught without cargo-fuzz.
//!
//! What each target asserts besides "no panic":
//! - the parsers ([`Target::PatchYamlJson`], [`Target::InputCodex`], [`Target::InputAider`],
//!   [`Target::InputDiff`]): the text either yields edits (numbered in order, spans inside the
//!   patch text, a reason for every invalid one, converted hunks matching whole lines, hunks in
//!   patch order, every path and move target either refused by the planner's path check with a
//!   reason or resolved to a relative path inside the repository and outside `.git`) or is an
//!   invalid-patch error with a 1-based line and column inside the text, which renders (miette's
//!   report and the JSON report) without panicking;
//! - [`Target::Matcher`]: one replacement planned on a file's bytes in memory
//!   ([`crate::plan::replace_text`]): a miss changes no byte; every suggestion is a range of whole
//!   lines inside the file, its text the file's own bytes for those lines, suggestions do not
//!   overlap, similarity stays within 0..=0.99; reported lines are inside the file;
//! - [`Target::LineEndings`]: decoding a file and encoding it again gives the same bytes;
//!   a replacement leaves every byte outside the replaced range as it was, gives its new line
//!   breaks one ending, CRLF in a file that is all CRLF.

// A broken invariant or a failed set-up is reported the way a fuzzer understands: a panic.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::sync::OnceLock;

use crate::error::Error;
use crate::patch::{
    Fallback, InputFormat, InputOptions, LineWindow, Near, Op, Patch, Replace, parse_bytes,
    parse_input_with,
};
use crate::plan::doc::{TextDoc, fold_eol};
use crate::plan::{EditStatus, replace_text};
use crate::repo::Roots;

/// The fuzz targets, named as in `fuzz/fuzz_targets/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A YAML/JSON patch document.
    PatchYamlJson,
    /// A codex `*** Begin Patch` envelope.
    InputCodex,
    /// Aider SEARCH/REPLACE blocks.
    InputAider,
    /// One options byte (see [`diff_options`]), then a unified diff.
    InputDiff,
    /// A flags byte and two parameter bytes (see [`matcher_case`]), then the file's bytes, `\0`,
    /// the old text, `\0`, the new text.
    Matcher,
    /// A file's bytes (the first three also choose a replacement, see [`line_endings`]).
    LineEndings,
}

impl Target {
    pub const ALL: [Target; 6] = [
        Target::PatchYamlJson,
        Target::InputCodex,
        Target::InputAider,
        Target::InputDiff,
        Target::Matcher,
        Target::LineEndings,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::PatchYamlJson => "patch_yaml_json",
            Target::InputCodex => "input_codex",
            Target::InputAider => "input_aider",
            Target::InputDiff => "input_diff",
            Target::Matcher => "matcher",
            Target::LineEndings => "line_endings",
        }
    }

    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Runs the target on one input; panics when an invariant breaks.
    pub fn run(self, data: &[u8]) {
        match self {
            Target::PatchYamlJson => check_parsed(data, parse_bytes(data, "patch"), false),
            Target::InputCodex => check_format(data, InputFormat::Codex, InputOptions::default()),
            Target::InputAider => check_format(data, InputFormat::Aider, InputOptions::default()),
            Target::InputDiff => {
                let Some((&opts, patch)) = data.split_first() else {
                    return;
                };
                check_format(patch, InputFormat::Diff, diff_options(opts));
            }
            Target::Matcher => matcher(data),
            Target::LineEndings => line_endings(data),
        }
    }
}

/// A diff's options from one byte: bit 0 `--unidiff-zero`; bit 2 an explicit `-p N`, N from
/// bits 4-5 (0 to 3).
pub fn diff_options(b: u8) -> InputOptions {
    InputOptions {
        strip: (b & 4 != 0).then_some(usize::from((b >> 4) & 3)),
        unidiff_zero: b & 1 != 0,
        ..InputOptions::default()
    }
}

/// The byte [`diff_options`] reads back as `opts`.
fn diff_options_byte(opts: &InputOptions) -> u8 {
    let strip = opts.strip.map_or(0, |n| 4 | (n.min(3) as u8) << 4);
    strip | u8::from(opts.unidiff_zero)
}

fn check_format(data: &[u8], input: InputFormat, opts: InputOptions) {
    if let Ok(text) = std::str::from_utf8(data) {
        // Detection reads every line of any text; it must never fail.
        let _ = crate::patch::input::detect(text);
    }
    check_parsed(data, parse_input_with(data, "patch", input, &opts), true);
}

fn check_parsed(data: &[u8], parsed: Result<Patch, Error>, converted: bool) {
    match parsed {
        Ok(patch) => check_patch(&patch, converted),
        Err(err) => check_error(data, &err),
    }
}

fn check_patch(patch: &Patch, converted: bool) {
    let len = patch.source.text.len();
    let mut last_hunk = 0;
    for (i, e) in patch.edits.iter().enumerate() {
        assert_eq!(e.index, i, "edits are numbered in order");
        check_path(&e.file_path);
        match &e.op {
            Ok(Op::Move { to, .. }) | Ok(Op::Copy { to, .. }) => check_path(to),
            _ => {}
        }
        if let Some(span) = e.span {
            assert!(
                span.offset() + span.len() <= len,
                "edit {i}'s span {span:?} is outside the {len}-byte patch text"
            );
        }
        match &e.op {
            Err(why) => assert!(
                !why.trim().is_empty(),
                "edit {i} is invalid without a reason"
            ),
            Ok(Op::Replace(r))
            | Ok(Op::Move {
                replace: Some(r), ..
            }) if converted => {
                assert!(
                    r.whole_lines,
                    "edit {i}: a converted hunk matches whole lines"
                );
            }
            Ok(_) => {}
        }
        if let Some(h) = &e.origin {
            assert!(
                h.index >= last_hunk.max(1),
                "edit {i}: hunk {} after hunk {last_hunk}",
                h.index
            );
            last_hunk = h.index;
        }
    }
}

/// A repository root the path checks resolve against: an empty folder with a `.git` in it.
fn fake_root() -> &'static Roots {
    static ROOT: OnceLock<(tempfile::TempDir, Roots)> = OnceLock::new();
    let (_, roots) = ROOT.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temp dir for the fuzz targets");
        let root = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        std::fs::create_dir_all(root.join(".git")).expect("a .git folder");
        let roots = Roots::new(root.clone(), vec![root.join(".git")]).expect("open the root");
        (dir, roots)
    });
    roots
}

/// Whatever path a patch names, the path the planner accepts for it is relative, normalised and
/// inside the repository, outside `.git`; one it refuses is refused with a reason.
fn check_path(given: &str) {
    let roots = fake_root();
    match roots.resolve_lexical(given) {
        Ok(r) => {
            let rel = Path::new(&r.rel);
            assert!(
                !r.rel.is_empty() && rel.is_relative(),
                "{given:?} resolved to {:?}",
                r.rel
            );
            for c in rel.components() {
                let std::path::Component::Normal(part) = c else {
                    panic!(
                        "{given:?} resolved to {:?}, which has a {c:?} component",
                        r.rel
                    );
                };
                assert!(
                    !part.eq_ignore_ascii_case(".git"),
                    "{given:?} resolved into .git: {:?}",
                    r.rel
                );
            }
            assert!(
                roots.abs(&r.rel).starts_with(&roots.root),
                "{given:?} left the root"
            );
        }
        Err(why) => assert!(!why.trim().is_empty(), "{given:?} refused without a reason"),
    }
}

fn check_error(data: &[u8], err: &Error) {
    let Error::Patch(pe) = err else {
        panic!("a patch text that cannot be read must be an invalid-patch error, got {err:?}");
    };
    let (Some(line), Some(column)) = (pe.line, pe.column) else {
        panic!("an invalid-patch error without a line and column: {err:?}");
    };
    let lines = data.iter().filter(|b| **b == b'\n').count() + 1;
    assert!(
        (1..=lines).contains(&line) && column >= 1,
        "line {line}, column {column} is outside the {lines}-line patch: {err:?}"
    );
    if let (Some(src), Some(span)) = (&pe.source_code, pe.span) {
        assert!(
            span.offset() + span.len() <= src.inner().len(),
            "error span {span:?} outside the patch text"
        );
    }
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::none());
    let mut out = String::new();
    let _ = handler.render_report(&mut out, err);
    let _ = crate::report::Report::from_error(err).to_json();
}

/// A matcher case: the replacement and the file it runs on, as [`Target::Matcher`] reads bytes.
pub struct MatcherCase<'a> {
    pub file: &'a [u8],
    pub replace: Replace,
    pub lenient: bool,
}

/// Reads a matcher input: flags (bit 0 `--lenient`, 1 whole lines, 2 `replace_all`, 3 a line
/// window, 4 a line number hint, 5 `at_eof`, 6 `at_start`, 7 a fallback without the old text's
/// first line), two parameter bytes (the window's first line and length, the hint's line), then
/// the file, `\0`, old, `\0`, new (anything after a third `\0` is ignored). `None` for what no
/// patch can ask: an old text equal to the new one, an empty old text outside a converted hunk,
/// or text that is not UTF-8.
pub fn matcher_case(data: &[u8]) -> Option<MatcherCase<'_>> {
    let (head, rest) = data.split_at_checked(3)?;
    let (flags, p1, p2) = (head[0], usize::from(head[1]), usize::from(head[2]));
    // Split at every NUL, not only the first two: a NUL left in the new text would make the
    // result binary, which is not what this target is about (a JSON patch can ask for it, and
    // then the file is written as bytes).
    let mut parts = rest.split(|b| *b == 0);
    let file = parts.next()?;
    let old = std::str::from_utf8(parts.next().unwrap_or_default()).ok()?;
    let new = std::str::from_utf8(parts.next().unwrap_or_default()).ok()?;
    let whole_lines = flags & 2 != 0;
    if fold_eol(old) == fold_eol(new) || (old.is_empty() && !whole_lines) {
        return None;
    }
    let bit = |n: u8| flags & (1 << n) != 0;
    let window = bit(3).then_some(LineWindow {
        start: 1 + p1 % 32,
        end: (p2 % 8 != 0).then_some(1 + p1 % 32 + p2 % 8),
    });
    let near = (bit(4) || bit(5) || bit(6)).then(|| Near {
        line: bit(4).then_some(1 + p2),
        anchors: Vec::new(),
        at_eof: bit(5),
        at_start: bit(6),
    });
    let mut fallbacks = Vec::new();
    if bit(7) && whole_lines {
        let cut = |s: &str| {
            s.split_once('\n')
                .map_or(String::new(), |(_, r)| r.to_string())
        };
        fallbacks.push(Fallback::Without {
            old: cut(old),
            new: cut(new),
            what: "the first line".into(),
        });
    }
    Some(MatcherCase {
        file,
        replace: Replace {
            old: old.to_string(),
            new: new.to_string(),
            replace_all: bit(2),
            window,
            within: None,
            near,
            whole_lines,
            fallbacks,
        },
        lenient: bit(0),
    })
}

/// The bytes [`matcher_case`] reads back as this case (window and hint approximated).
pub fn matcher_bytes(file: &[u8], r: &Replace, lenient: bool) -> Vec<u8> {
    let mut flags = u8::from(lenient) | u8::from(r.whole_lines) << 1 | u8::from(r.replace_all) << 2;
    let (mut p1, mut p2) = (0u8, 0u8);
    if let Some(w) = r.window {
        flags |= 1 << 3;
        p1 = (w.start.saturating_sub(1) % 32) as u8;
        p2 = w.end.map_or(0, |e| (e.saturating_sub(w.start) % 8) as u8);
    }
    if let Some(n) = &r.near {
        if let Some(line) = n.line {
            flags |= 1 << 4;
            p2 = (line.saturating_sub(1)).min(255) as u8;
        }
        flags |= u8::from(n.at_eof) << 5 | u8::from(n.at_start) << 6;
    }
    if !r.fallbacks.is_empty() {
        flags |= 1 << 7;
    }
    let mut out = vec![flags, p1, p2];
    out.extend_from_slice(file);
    out.push(0);
    out.extend_from_slice(r.old.as_bytes());
    out.push(0);
    out.extend_from_slice(r.new.as_bytes());
    out
}

fn matcher(data: &[u8]) {
    let Some(case) = matcher_case(data) else {
        return;
    };
    let Ok(doc) = TextDoc::decode(case.file) else {
        assert!(
            replace_text(case.file, "f.txt", &case.replace, case.lenient).is_err(),
            "a file that does not decode is refused"
        );
        return;
    };
    let text = doc.text();
    let count = doc.line_count();
    let (out, after) = replace_text(case.file, "f.txt", &case.replace, case.lenient)
        .unwrap_or_else(|e| panic!("a file that decodes is planned, got {e}"));
    if out.status != EditStatus::Applied {
        assert_eq!(after, case.file, "a {:?} changed the file", out.status);
    } else {
        let redone = TextDoc::decode(&after).expect("the result is text");
        assert_eq!(redone.encode(), after, "the result round-trips");
    }
    if !text.is_empty() {
        for &(a, b) in &out.lines {
            assert!(
                1 <= a && a <= b && b <= count.max(1),
                "lines {a}-{b} of a {count}-line file ({:?})",
                out.status
            );
        }
    }
    for (i, s) in out.suggestions.iter().enumerate() {
        assert_eq!(out.status, EditStatus::NotFound, "only a miss suggests");
        assert!(
            1 <= s.start_line && s.start_line <= s.end_line && s.end_line <= count,
            "suggestion lines {}-{} of a {count}-line file",
            s.start_line,
            s.end_line
        );
        assert!(
            (0.0..=0.99).contains(&s.similarity),
            "similarity {}",
            s.similarity
        );
        let range = lines_range(&doc, s.start_line, s.end_line);
        assert_eq!(
            s.text,
            doc.encode_range(range.clone()),
            "suggestion {i}'s text is the file's lines {}-{}",
            s.start_line,
            s.end_line
        );
        for t in &out.suggestions[..i] {
            assert!(
                t.end_line < s.start_line || s.end_line < t.start_line,
                "suggestions overlap: {}-{} and {}-{}",
                t.start_line,
                t.end_line,
                s.start_line,
                s.end_line
            );
        }
    }
    // A miss's snippet underlines the candidates' byte ranges: whole lines of the file's text.
    if out.status == EditStatus::NotFound
        && let Some(snippet) = &out.snippet
    {
        assert_eq!(snippet.text.as_str(), text, "the snippet shows the file");
        assert_eq!(snippet.labels.len(), out.suggestions.len());
        for ((r, _), s) in snippet.labels.iter().zip(&out.suggestions) {
            assert!(
                r.start <= r.end && r.end <= text.len(),
                "label {r:?} out of bounds"
            );
            assert!(
                r.start == 0 || text.as_bytes()[r.start - 1] == b'\n',
                "label {r:?} does not start a line"
            );
            assert!(
                r.end == text.len() || text.as_bytes()[r.end] == b'\n',
                "label {r:?} does not end a line"
            );
            assert_eq!(*r, lines_range(&doc, s.start_line, s.end_line));
        }
    }
}

/// The folded-text range of lines `a..=b`, without the last line's line break.
fn lines_range(doc: &TextDoc, a: usize, b: usize) -> std::ops::Range<usize> {
    let r = doc
        .window_range(LineWindow {
            start: a,
            end: Some(b),
        })
        .unwrap_or(0..0);
    let end = if doc.text()[r.clone()].ends_with('\n') {
        r.end - 1
    } else {
        r.end
    };
    r.start..end
}

/// The new texts the line-endings target splices in.
const NEW_TEXTS: [&str; 6] = ["", "x", "x\n", "\n", "x\ny", "x\ny\n"];

/// Decodes `data` as a file, checks the exact round trip, then replaces a range chosen by the
/// first two bytes (scaled to the text's length) with one of [`NEW_TEXTS`] chosen by the third,
/// and appends a line.
fn line_endings(data: &[u8]) {
    let Ok(doc) = TextDoc::decode(data) else {
        return;
    };
    assert_eq!(
        doc.encode(),
        data,
        "decode then encode gives the same bytes"
    );
    let text = doc.text().to_string();
    let body = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let bom = &data[..data.len() - body.len()];
    let newlines = body.iter().filter(|b| **b == b'\n').count();
    let all_crlf = newlines > 0 && body.windows(2).filter(|w| w == b"\r\n").count() == newlines;
    let pick = |i: usize| {
        let mut at = usize::from(data.get(i).copied().unwrap_or(0)) * text.len() / 255;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let (a, b) = {
        let (x, y) = (pick(0), pick(1));
        (x.min(y), x.max(y))
    };
    let new = NEW_TEXTS[usize::from(data.get(2).copied().unwrap_or(0)) % NEW_TEXTS.len()];

    let mut edited = doc.clone();
    let prefix = [bom, doc.encode_range(0..a).as_bytes()].concat();
    let suffix = doc.encode_range(b..text.len()).into_bytes();
    edited.replace(a..b, new);
    let out = edited.encode();
    assert!(
        out.len() >= prefix.len() + suffix.len()
            && out.starts_with(&prefix)
            && out.ends_with(&suffix),
        "bytes outside the replaced range {a}..{b} changed"
    );
    let middle = &out[prefix.len()..out.len() - suffix.len()];
    let crlf = middle.windows(2).filter(|w| w == b"\r\n").count();
    let breaks = new.matches('\n').count();
    assert!(
        crlf == 0 || crlf == breaks,
        "new line breaks got mixed endings: {middle:?}"
    );
    if all_crlf {
        assert_eq!(
            crlf, breaks,
            "LF text put into a CRLF file must become CRLF"
        );
    }
    assert_eq!(
        String::from_utf8_lossy(middle).replace("\r\n", "\n"),
        new,
        "the replaced range holds the new text"
    );
    let again = TextDoc::decode(&out).expect("still text");
    assert_eq!(again.encode(), out, "the edited file round-trips");
    // Read back, the edited text is the splice. One seam may differ: a lone CR of the file that
    // the edit put right before an LF line break reads back as that line's CRLF (the bytes are
    // the splice, as checked above). Only there: a lone CR before a CRLF elsewhere in the file
    // (`\r\r\n`) is content and reads back as it was, so the texts are not compared with
    // every `\r\n` folded.
    // A U+FEFF of the text that the edit brings to the very start of a file without a BOM is
    // read back as a BOM (the bytes are right, as checked above): count it as text here.
    let got = if bom.is_empty() && out.starts_with(b"\xef\xbb\xbf") {
        format!("\u{feff}{}", again.text())
    } else {
        again.text().to_string()
    };
    let got = got.as_str();
    let tail = &text[b..];
    assert!(
        got.ends_with(tail),
        "the text after the range reads back as it was: {got:?}"
    );
    let head = if got.starts_with(&text[..a]) {
        a
    } else {
        assert!(
            text[..a].ends_with('\r')
                && got.starts_with(&text[..a - 1])
                && got[a - 1..].starts_with('\n'),
            "the text before the range reads back as it was: {got:?}"
        );
        a - 1
    };
    assert_eq!(
        got.get(head..got.len() - tail.len()),
        Some(new),
        "the edited text is the splice: {got:?}"
    );

    let mut appended = doc;
    appended.append("z\n");
    let out = appended.encode();
    assert!(out.starts_with(data), "append keeps the file's bytes");
    if all_crlf {
        assert!(
            out.ends_with(b"z\r\n"),
            "a line appended to a CRLF file is CRLF"
        );
    }
}

/// Every target's seed corpus, made from the repository's fixtures under `root` (the checkout):
/// `tests/fixtures/*` and `tests/golden/*` patches for the parsers (a diff with the options its
/// `args` give), their `before/` files for the line endings, and every replacement of a fixture
/// patch paired with the `before/` file it edits for the matcher.
pub fn seeds(target: Target, root: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for dir in fixture_dirs(root) {
        let args = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
        let args: Vec<&str> = args.lines().map(str::trim).collect();
        let opts = InputOptions {
            strip: args
                .iter()
                .find_map(|a| a.strip_prefix("-p").and_then(|n| n.parse().ok())),
            unidiff_zero: args.contains(&"--unidiff-zero"),
            ..InputOptions::default()
        };
        let read = |name: &str| std::fs::read(dir.join(name)).ok();
        match target {
            Target::PatchYamlJson => {
                out.extend(["patch.yaml", "patch.json"].map(read).into_iter().flatten())
            }
            Target::InputCodex => out.extend(read("patch.codex")),
            Target::InputAider => out.extend(read("patch.aider")),
            Target::InputDiff => out.extend(read("patch.diff").map(|p| {
                let mut v = vec![diff_options_byte(&opts)];
                v.extend(p);
                v
            })),
            Target::LineEndings => files_under(&dir.join("before"), &mut out),
            Target::Matcher => {
                let lenient = args.contains(&"--lenient");
                let sub = args
                    .iter()
                    .position(|a| *a == "-C")
                    .and_then(|i| args.get(i + 1))
                    .copied()
                    .unwrap_or("");
                let before = dir.join("before").join(sub);
                for (name, input) in [
                    ("patch.yaml", InputFormat::Yaml),
                    ("patch.json", InputFormat::Json),
                    ("patch.codex", InputFormat::Codex),
                    ("patch.aider", InputFormat::Aider),
                    ("patch.diff", InputFormat::Diff),
                ] {
                    let opts = if input == InputFormat::Diff {
                        opts.clone()
                    } else {
                        InputOptions::default()
                    };
                    let Some(Ok(patch)) =
                        read(name).map(|b| parse_input_with(&b, name, input, &opts))
                    else {
                        continue;
                    };
                    for e in &patch.edits {
                        let r = match &e.op {
                            Ok(Op::Replace(r))
                            | Ok(Op::Move {
                                replace: Some(r), ..
                            }) => r,
                            _ => continue,
                        };
                        let rel = e.file_path.trim_start_matches("./");
                        if let Ok(file) = std::fs::read(before.join(rel)) {
                            out.push(matcher_bytes(&file, r, lenient));
                        }
                    }
                }
            }
        }
    }
    out
}

fn fixture_dirs(root: &Path) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<_> = ["tests/fixtures", "tests/golden"]
        .iter()
        .filter_map(|d| std::fs::read_dir(root.join(d)).ok())
        .flat_map(|rd| rd.flatten().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn files_under(dir: &Path, out: &mut Vec<Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        match std::fs::symlink_metadata(&p) {
            Ok(md) if md.is_dir() => files_under(&p, out),
            Ok(md) if md.is_file() => out.extend(std::fs::read(&p).ok()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod mutate;
#[cfg(test)]
mod tests;
