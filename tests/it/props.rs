//! Property tests of the transaction, on real temporary git repositories with the real binary:
//! - apply then undo gives back the working tree byte for byte (and, for `--commit`, HEAD's tree
//!   and the index), over random contents: LF, CRLF and mixed line endings, a BOM, no final
//!   newline, multi-line replacements, created, deleted, moved and appended files;
//! - a batch with one edit that misses, anywhere in it, changes no byte of the repository: not
//!   the working tree, not the index, not a ref, not an object (every file under `.git`, but for
//!   patchgate's caches in `.git/patchgate/cache/`, which hold nothing of the repository: a miss
//!   may keep its look-back there).
//!
//! 24 cases each by default (each makes a repository and runs git and patchgate a few times);
//! `PROPTEST_CASES=500 cargo test --test it props::` for a longer run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use crate::harness::TestRepo;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    ProptestConfig {
        cases,
        // A failure prints its minimal input; it belongs in a named test, not a seed file.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[derive(Debug, Clone, Copy)]
enum Eol {
    Lf,
    Crlf,
    /// Each line's own ending, from the line's bit.
    Mixed(u32),
}

/// A file: its lines (each starts with a token unique in the repository), endings, BOM, final
/// newline.
#[derive(Debug, Clone)]
struct File {
    lines: Vec<String>,
    eol: Eol,
    bom: bool,
    final_nl: bool,
}

impl File {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice(b"\xef\xbb\xbf");
        }
        for (i, l) in self.lines.iter().enumerate() {
            out.extend_from_slice(l.as_bytes());
            if i + 1 < self.lines.len() || self.final_nl {
                let crlf = match self.eol {
                    Eol::Lf => false,
                    Eol::Crlf => true,
                    Eol::Mixed(bits) => bits >> (i % 32) & 1 == 1,
                };
                out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            }
        }
        out
    }
}

/// Text inside a line: ASCII, tabs, and a few multi-byte characters; never a line break.
fn text() -> impl Strategy<Value = String> {
    "[a-z \t{}();=é—中]{0,12}"
}

fn eol() -> impl Strategy<Value = Eol> {
    prop_oneof![
        Just(Eol::Lf),
        Just(Eol::Crlf),
        any::<u32>().prop_map(Eol::Mixed)
    ]
}

fn file(tag: usize) -> impl Strategy<Value = File> {
    (
        prop::collection::vec(text(), 1..7),
        eol(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(move |(texts, eol, bom, final_nl)| File {
            lines: texts
                .into_iter()
                .enumerate()
                .map(|(i, t)| format!("k{tag}x{i}:{t}"))
                .collect(),
            eol,
            bom,
            final_nl,
        })
}

/// What a patch does besides its replacements.
#[derive(Debug, Clone)]
enum Extra {
    None,
    Create(File),
    Delete,
    Move,
    Append(String),
}

#[derive(Debug, Clone)]
struct Case {
    files: Vec<File>,
    /// Per file: which line's token is replaced (modulo its length), and the new text (may hold
    /// line breaks); `None` leaves the file alone.
    edits: Vec<Option<(usize, String)>>,
    extra: Extra,
    commit: bool,
    /// Where the missing edit goes in the batch (modulo its length), for the miss property.
    miss_at: usize,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..5)
        .prop_flat_map(|n| {
            (
                (0..n).map(file).collect::<Vec<_>>(),
                prop::collection::vec(
                    prop::option::weighted(0.7, (any::<usize>(), "[a-z\n\r\t é]{0,10}")),
                    n,
                ),
                prop_oneof![
                    Just(Extra::None),
                    file(99).prop_map(Extra::Create),
                    Just(Extra::Delete),
                    Just(Extra::Move),
                    "[a-z]{1,6}\n?".prop_map(Extra::Append),
                ],
                any::<bool>(),
                any::<usize>(),
            )
        })
        .prop_map(|(files, edits, extra, commit, miss_at)| Case {
            files,
            edits,
            extra,
            commit,
            miss_at,
        })
}

fn path_of(i: usize) -> String {
    match i % 3 {
        0 => format!("f{i}.txt"),
        1 => format!("src/f{i}.txt"),
        _ => format!("src/deep/er/f{i}.txt"),
    }
}

fn repo_of(case: &Case) -> TestRepo {
    let mut repo = TestRepo::new();
    for (i, f) in case.files.iter().enumerate() {
        repo = repo.file(&path_of(i), f.bytes());
    }
    repo.commit()
}

/// The batch as JSON edits; `None` when it would change nothing.
fn edits_of(case: &Case) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, (f, e)) in case.files.iter().zip(&case.edits).enumerate() {
        if let Some((line, new)) = e {
            let line = line % f.lines.len();
            // The token `k<i>x<line>:` is unique in the repository; its colon ends it, so
            // `k1x1:` is not found inside `k1x10:`.
            let old = format!("k{i}x{line}:");
            out.push(json!({"file_path": path_of(i), "old_string": old, "new_string": new}));
        }
    }
    let last = case.files.len() - 1;
    match &case.extra {
        Extra::None => {}
        Extra::Create(f) => out.push(json!({
            "file_path": "new/dir/created.txt",
            "create": true,
            "new_string": String::from_utf8(f.bytes()).expect("utf8"),
        })),
        // Deleting or moving the last file, unless an edit above already touches it.
        Extra::Delete if case.edits[last].is_none() => {
            out.push(json!({"file_path": path_of(last), "delete": true}))
        }
        Extra::Move if case.edits[last].is_none() => {
            out.push(json!({"file_path": path_of(last), "move_to": "moved/away/m.txt"}))
        }
        Extra::Append(t) => {
            out.push(json!({"file_path": path_of(0), "append": true, "new_string": t}))
        }
        Extra::Delete | Extra::Move => {}
    }
    out
}

/// Every file and folder under `root`, `.git` included when asked, with its bytes.
fn everything(root: &Path, with_git: bool) -> BTreeMap<String, Option<Vec<u8>>> {
    fn go(root: &Path, dir: &Path, with_git: bool, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for e in std::fs::read_dir(dir).expect("read dir").flatten() {
            let p = e.path();
            let rel = p
                .strip_prefix(root)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            if rel == ".git" && !with_git {
                continue;
            }
            let md = std::fs::symlink_metadata(&p).expect("stat");
            if md.is_dir() {
                out.insert(format!("{rel}/"), None);
                go(root, &p, with_git, out);
            } else {
                out.insert(rel, Some(std::fs::read(&p).expect("read")));
            }
        }
    }
    let mut out = BTreeMap::new();
    go(root, root, with_git, &mut out);
    out
}

fn differences(
    a: &BTreeMap<String, Option<Vec<u8>>>,
    b: &BTreeMap<String, Option<Vec<u8>>>,
) -> Vec<String> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let show = |m: &BTreeMap<String, Option<Vec<u8>>>| match m.get(k) {
                None => "absent".to_string(),
                Some(None) => "folder".to_string(),
                Some(Some(b)) => format!("{:?}", String::from_utf8_lossy(b)),
            };
            format!("{k}: {} -> {}", show(a), show(b))
        })
        .collect()
}

fn patch_file(edits: &[Value]) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(f.path(), json!({"edits": edits}).to_string()).expect("write patch");
    f
}

fn apply_then_undo(case: &Case) -> Result<(), TestCaseError> {
    let edits = edits_of(case);
    if edits.is_empty() {
        return Ok(());
    }
    let repo = repo_of(case);
    let before = everything(repo.path(), false);
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let head = repo.git(&["rev-parse", "HEAD"]);
    let patch = patch_file(&edits);
    let mut args = vec![
        "apply",
        patch.path().to_str().expect("utf8"),
        "--format",
        "json",
        "--checks",
        "none",
    ];
    if case.commit {
        args.push("--commit");
    }
    let applied = repo.run(&args);
    prop_assert_eq!(
        applied.code,
        0,
        "apply: {} {}",
        applied.stdout,
        applied.stderr
    );
    prop_assert!(
        everything(repo.path(), false) != before,
        "the patch changed nothing: {}",
        applied.stdout
    );
    let undone = repo.run(&["undo", "--format", "json"]);
    prop_assert_eq!(undone.code, 0, "undo: {} {}", undone.stdout, undone.stderr);
    let back = everything(repo.path(), false);
    prop_assert!(
        before == back,
        "apply then undo is not the original tree: {:?}",
        differences(&before, &back)
    );
    if case.commit {
        // A revert commit on top of the patch's commit, whose tree is the original one; the
        // index holds it too.
        prop_assert_eq!(repo.git(&["rev-parse", "HEAD~2"]), head);
        prop_assert_eq!(repo.git(&["rev-parse", "HEAD^{tree}"]), tree.clone());
        prop_assert_eq!(repo.git(&["write-tree"]), tree);
    } else {
        prop_assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    }
    prop_assert_eq!(repo.git(&["status", "--porcelain"]), "");
    prop_assert_eq!(repo.leftovers(), Vec::<String>::new());
    Ok(())
}

fn one_miss_changes_nothing(case: &Case) -> Result<(), TestCaseError> {
    let i = case.miss_at % case.files.len();
    let mut case = case.clone();
    if i == case.files.len() - 1 && matches!(case.extra, Extra::Delete | Extra::Move) {
        // The miss is in a file the batch keeps: a miss in a deleted file is another error.
        case.extra = Extra::None;
    }
    let case = &case;
    let mut edits = edits_of(case);
    // Near the file's own text, so the miss is diagnosed with suggestions, but not in it.
    let miss = json!({
        "file_path": path_of(i),
        "old_string": format!("k{i}x0;{}", case.files[i].lines[0].split_once(':').map_or("", |(_, t)| t)),
        "new_string": "never written",
    });
    let at = case.miss_at % (edits.len() + 1);
    edits.insert(at, miss);
    let repo = repo_of(case);
    let before = everything(repo.path(), true);
    let patch = patch_file(&edits);
    let mut args = vec![
        "apply",
        patch.path().to_str().expect("utf8"),
        "--format",
        "json",
        "--checks",
        "none",
    ];
    match case.miss_at % 3 {
        0 => {}
        1 => args.push("--commit"),
        _ => args.extend(["--branch", "bot/fix"]),
    }
    let run = repo.run(&args);
    prop_assert!(run.code != 0, "a batch with a miss applied: {}", run.stdout);
    let report = run.json();
    prop_assert_eq!(&report["patch_id"], &Value::Null);
    let statuses: Vec<&str> = report["edits"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["status"].as_str()).collect())
        .unwrap_or_default();
    prop_assert!(
        statuses.contains(&"not_found"),
        "the miss is reported: {}",
        run.stdout
    );
    // A miss may keep its look-back at the file's history in patchgate's cache (a walk the
    // time budget cut short on a loaded machine, say): not the repository's state.
    let cached = |m: BTreeMap<String, Option<Vec<u8>>>| -> BTreeMap<String, Option<Vec<u8>>> {
        m.into_iter()
            .filter(|(k, _)| !k.starts_with(".git/patchgate/cache"))
            .collect()
    };
    let (before, after) = (cached(before), cached(everything(repo.path(), true)));
    prop_assert!(
        before == after,
        "a rejected batch changed the repository: {:?}",
        differences(&before, &after)
    );
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn apply_then_undo_gives_back_every_byte(case in case()) {
        apply_then_undo(&case)?;
    }

    #[test]
    fn a_batch_with_one_miss_changes_no_byte(case in case()) {
        one_miss_changes_nothing(&case)?;
    }
}
