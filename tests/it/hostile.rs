//! Hostile input: every malformed, malicious or impossible patch gets a clear error, the documented
//! exit code, no panic, and zero writes.
//!
//! Each case runs the real binary on a fresh repository and checks, besides the exit code and the
//! message that names the problem:
//! - the process did not panic (stderr has no "panicked");
//! - stdout is exactly one JSON report with the documented `status` (`error` with 3, `rejected` with 2);
//! - the repository is byte-for-byte unchanged: working tree (files, modes, symlinks, no temp files
//!   left), index, HEAD, refs, and every file under `.git` (no hook planted, config untouched, no
//!   record written);
//! - nothing appeared outside the repository where an escaping path would have put it.
//!
//! Most cases are one row of the table in [`hostile!`] on the shared [`base_repo`]; cases that need
//! their own setup (symlinks leaving the repository, raw bytes on stdin, huge patches, a patch path
//! that is missing or a directory) are separate tests below it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::harness::{Run, TestRepo};

/// What a case must produce.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Exit 3, `error.kind` "invalid_patch", `error.message` containing the text, at the location.
    Doc(&'static str, Loc),
    /// Exit 3, `error.kind` "invalid_edits"; edit `index` has status "error" and a message
    /// containing the text.
    BadEdit(usize, &'static str),
    /// Exit 2, status "rejected"; edit `index` has the status and a message containing the text.
    Failed(usize, &'static str, &'static str),
}

/// Where a document-level error must point (1-based line and column in the patch file).
#[derive(Debug, Clone, Copy)]
enum Loc {
    /// Exactly this line and column.
    At(usize, usize),
    /// This line, with a column somewhere in `from..=to` (e.g. anywhere on the offending key).
    Within(usize, usize, usize),
    /// This line; the column must be present (a syntax error's exact column is the parser's call).
    Line(usize),
    /// One of these positions.
    AnyOf(&'static [(usize, usize)]),
    /// Some line and column (a document with no better place to point at).
    Present,
}

use Expect::{BadEdit, Doc, Failed};
use Loc::{AnyOf, At, Line, Present, Within};

/// The repository every table case runs in: text files, a binary file, a latin-1 file, folders,
/// an untracked file.
fn base_repo() -> TestRepo {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\nbeta\ngamma\n")
        .file("b.txt", "bee\n")
        .file("bin.dat", b"\x7fELF\x02\x01\x00\x00binary\x00data\n")
        .file("latin1.txt", b"caf\xe9 cr\xe8me\n")
        .file("src/lib.rs", "pub fn f() {}\n")
        .file("sub/keep.txt", "keep\n")
        .commit();
    repo.write("untracked.txt", "not in git\n");
    repo
}

/// Everything that must not change: `TestRepo::snapshot` (working tree, index, HEAD, refs) plus the
/// bytes of every file under `.git` (config, hooks, patchgate's own record).
fn state(repo: &TestRepo) -> BTreeMap<String, String> {
    let mut out = repo.snapshot();
    walk_git(&repo.path().join(".git"), repo.path(), &mut out);
    out
}

fn walk_git(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read .git")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let rel = p
            .strip_prefix(root)
            .expect("inside")
            .to_string_lossy()
            .into_owned();
        let md = std::fs::symlink_metadata(&p).expect("stat");
        if md.is_dir() {
            out.insert(format!("{rel}/"), "dir".into());
            walk_git(&p, root, out);
        } else if md.file_type().is_symlink() {
            out.insert(
                rel,
                format!("link:{}", std::fs::read_link(&p).expect("link").display()),
            );
        } else {
            let bytes = std::fs::read(&p).expect("read");
            let hash: String = Sha256::digest(&bytes)
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect();
            out.insert(rel, hash);
        }
    }
}

/// A name, unique to this case and process, for the file an escaping path would create next to
/// the repository.
fn escape_name(case: &str) -> String {
    format!("patchgate-hostile-{case}-{}", std::process::id())
}

/// Checks one run against its expectation (everything but "nothing changed").
#[track_caller]
fn check_run(case: &str, run: &Run, expect: Expect) {
    assert!(
        !run.stderr.contains("panicked"),
        "{case}: patchgate panicked\nstderr:\n{}",
        run.stderr
    );
    let code = match expect {
        Doc(..) | BadEdit(..) => 3,
        Failed(..) => 2,
    };
    assert_eq!(
        run.code, code,
        "{case}: exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let report = run.json();
    assert_eq!(report["version"], 1, "{case}: {report:#}");
    let want_status = if code == 3 { "error" } else { "rejected" };
    assert_eq!(report["status"], want_status, "{case}: status\n{report:#}");

    match expect {
        Doc(text, loc) => {
            let err = &report["error"];
            assert_eq!(
                err["kind"], "invalid_patch",
                "{case}: error.kind\n{report:#}"
            );
            let message = err["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(text),
                "{case}: error.message should name the problem ({text:?}); got {message:?}"
            );
            assert!(
                report["edits"].as_array().is_some_and(|e| e.is_empty()),
                "{case}: a document-level error reports no edits\n{report:#}"
            );
            check_loc(case, err, loc);
        }
        BadEdit(index, text) => {
            let err = &report["error"];
            assert_eq!(
                err["kind"], "invalid_edits",
                "{case}: error.kind\n{report:#}"
            );
            let edit = &report["edits"][index];
            assert_eq!(
                edit["status"], "error",
                "{case}: edit {index} status\n{report:#}"
            );
            let message = edit["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(text),
                "{case}: edit {index} message should name the problem ({text:?}); got {message:?}"
            );
        }
        Failed(index, status, text) => {
            assert!(
                report.get("error").is_none(),
                "{case}: no `error` for a rejected patch\n{report:#}"
            );
            let edit = &report["edits"][index];
            assert_eq!(
                edit["status"], status,
                "{case}: edit {index} status\n{report:#}"
            );
            let message = edit["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(text),
                "{case}: edit {index} message should name the problem ({text:?}); got {message:?}"
            );
        }
    }
}

#[track_caller]
fn check_loc(case: &str, err: &Value, loc: Loc) {
    let line = err["line"].as_u64().map(|v| v as usize);
    let column = err["column"].as_u64().map(|v| v as usize);
    let got = (line, column);
    let ok = match (loc, line, column) {
        (At(l, c), Some(gl), Some(gc)) => (gl, gc) == (l, c),
        (Within(l, from, to), Some(gl), Some(gc)) => gl == l && (from..=to).contains(&gc),
        (Line(l), Some(gl), Some(_)) => gl == l,
        (AnyOf(all), Some(gl), Some(gc)) => all.contains(&(gl, gc)),
        (Present, Some(_), Some(_)) => true,
        _ => false,
    };
    assert!(
        ok,
        "{case}: error.line/error.column: expected {loc:?}, got {got:?}\nerror: {err:#}"
    );
}

/// Runs a table case: `{ESCAPE}` in the patch is replaced by a name unique to the case, and no file
/// of that name may appear next to the repository afterwards.
fn run_case(case: &str, patch: &str, expect: Expect) {
    let repo = base_repo();
    let escape = escape_name(case);
    let patch = patch.replace("{ESCAPE}", &escape);
    let outside = repo.path().parent().expect("parent").join(&escape);
    let before = state(&repo);
    let run = repo.apply(&patch, &[]);
    check_run(case, &run, expect);
    assert_eq!(
        state(&repo),
        before,
        "{case}: the repository changed\nreport:\n{}",
        run.stdout
    );
    assert!(
        std::fs::symlink_metadata(&outside).is_err(),
        "{case}: a file was written outside the repository: {}",
        outside.display()
    );
}

macro_rules! hostile {
    ($($name:ident: $patch:expr => $expect:expr;)*) => {
        $(
            #[test]
            fn $name() {
                run_case(stringify!($name), &$patch, $expect);
            }
        )*
    };
}

const NESTING: usize = 10_000;

hostile! {
    // ---- malformed YAML -------------------------------------------------------------------------
    yaml_bad_indentation:
        "- file_path: a.txt\n  old_string: alpha\n new_string: omega\n"
        => Doc("did not find expected", Line(3));
    yaml_unclosed_quote:
        "- file_path: \"a.txt\n  old_string: alpha\n  new_string: omega\n"
        => Doc("unclosed quote", At(1, 14));
    yaml_tab_indentation:
        "- file_path: a.txt\n\told_string: alpha\n\tnew_string: omega\n"
        => Doc("tab", Line(2));

    // ---- malformed JSON -------------------------------------------------------------------------
    json_trailing_comma:
        "[\n  {\n    \"file_path\": \"a.txt\",\n    \"old_string\": \"alpha\",\n    \"new_string\": \"omega\",\n  }\n]\n"
        => Doc("trailing comma", AnyOf(&[(5, 26), (6, 3)]));
    json_unclosed_brace:
        "[\n  {\n    \"file_path\": \"a.txt\",\n    \"old_string\": \"alpha\",\n    \"new_string\": \"omega\"\n"
        => Doc("EOF while parsing", AnyOf(&[(2, 3), (6, 1)]));
    json_single_quotes:
        "[{'file_path': 'a.txt', 'old_string': 'alpha', 'new_string': 'omega'}]\n"
        => Doc("key must be a string", At(1, 3));

    // ---- unknown and duplicate keys -------------------------------------------------------------
    unknown_key_top_level:
        "message: hi\nedit:\n  - file_path: a.txt\n    old_string: alpha\n    new_string: omega\n"
        => Doc("unknown field `edit`", At(2, 1));
    unknown_key_in_edit:
        "- file_path: a.txt\n  old_string: alpha\n  new_sting: omega\n"
        => Doc("unknown field `new_sting`", At(3, 3));
    unknown_key_in_grouped_sub_edit:
        "- file_path: a.txt\n  edits:\n    - old_string: alpha\n      new_string: omega\n      replace_al: true\n"
        => Doc("unknown field `replace_al`", At(5, 7));
    unknown_key_in_json_edit:
        "[{\"file_path\": \"a.txt\", \"old_string\": \"alpha\", \"new_string\": \"omega\", \"bogus\": 1}]"
        => Doc("unknown field `bogus`", Within(1, 71, 77));
    duplicate_key_in_edit:
        "- file_path: a.txt\n  old_string: alpha\n  old_string: beta\n  new_string: omega\n"
        => Doc("duplicate", At(3, 3));
    duplicate_key_top_level:
        "edits: []\nedits: []\n"
        => Doc("duplicate", At(2, 1));
    duplicate_key_in_json:
        "[{\"file_path\": \"a.txt\", \"old_string\": \"alpha\", \"old_string\": \"beta\", \"new_string\": \"omega\"}]"
        => Doc("duplicate", Within(1, 48, 59));

    // ---- wrong types ----------------------------------------------------------------------------
    replace_all_quoted_string:
        "- file_path: a.txt\n  old_string: alpha\n  new_string: omega\n  replace_all: \"yes\"\n"
        => Doc("boolean", At(4, 16));
    replace_all_yaml11_yes:
        "- file_path: a.txt\n  old_string: alpha\n  new_string: omega\n  replace_all: yes\n"
        => Doc("boolean", At(4, 16));
    create_yaml11_on:
        "- file_path: new.txt\n  create: on\n  new_string: hi\n"
        => Doc("boolean", At(2, 11));
    start_line_string:
        "- file_path: a.txt\n  old_string: alpha\n  new_string: omega\n  start_line: \"ten\"\n"
        => Doc("i64", At(4, 15));
    start_line_float:
        "- file_path: a.txt\n  old_string: alpha\n  new_string: omega\n  start_line: 1.5\n"
        => Doc("i64", At(4, 15));
    start_line_overflow:
        "- file_path: a.txt\n  old_string: alpha\n  new_string: omega\n  start_line: 99999999999999999999\n"
        => Doc("i64", At(4, 15));
    file_path_list:
        "- file_path: [a.txt]\n  old_string: alpha\n  new_string: omega\n"
        => Doc("string", At(1, 14));
    edits_is_a_mapping:
        "edits:\n  file_path: a.txt\n  old_string: alpha\n  new_string: omega\n"
        => Doc("sequence", At(2, 3));
    json_message_number:
        "{\"message\": 5, \"edits\": []}"
        => Doc("expected a string", At(1, 13));
    scalar_document:
        "hello\n"
        => Doc("expected a list of edits", At(1, 1));

    // ---- empty documents ------------------------------------------------------------------------
    empty_document:
        ""
        => Doc("empty", Present);
    whitespace_and_comment_document:
        "  \n# just a comment\n\n   \n"
        => Doc("empty", Present);

    // ---- bytes that have no place in a patch ----------------------------------------------------
    raw_nul_byte:
        "- file_path: a.txt\n  old_string: \"al\0pha\"\n  new_string: omega\n"
        => Doc("NUL byte", At(2, 18));
    json_escaped_nul_in_new_string:
        "[{\"file_path\": \"a.txt\", \"old_string\": \"alpha\", \"new_string\": \"x\\u0000y\"}]"
        => BadEdit(0, "`new_string` contains a NUL byte");
    json_escaped_nul_in_file_path:
        "[{\"file_path\": \"a.txt\\u0000.sh\", \"create\": true, \"new_string\": \"x\"}]"
        => BadEdit(0, "`file_path` contains a NUL byte");

    // ---- deep nesting must not overflow the stack -----------------------------------------------
    deeply_nested_open_brackets:
        "[".repeat(NESTING)
        => Doc("invalid type", Present);
    deeply_nested_closed_brackets:
        format!("{}{}", "[".repeat(NESTING), "]".repeat(NESTING))
        => Doc("invalid type", Present);
    deeply_nested_flow_mappings:
        format!("edits: {}", "{a: ".repeat(NESTING))
        => Doc("sequence", Present);
    deeply_nested_block_sequences:
        format!("{}x\n", "- ".repeat(NESTING))
        => Doc("mapping", Present);

    // ---- invalid edit fields (the edit keeps its place, exit 3) ---------------------------------
    empty_old_string:
        "- file_path: a.txt\n  old_string: \"\"\n  new_string: omega\n"
        => BadEdit(0, "`old_string` is empty");
    identical_old_and_new:
        "- file_path: a.txt\n  old_string: alpha\n  new_string: alpha\n"
        => BadEdit(0, "identical");
    missing_new_string:
        "- file_path: a.txt\n  old_string: alpha\n"
        => BadEdit(0, "`new_string` is required");
    missing_file_path:
        "- old_string: alpha\n  new_string: omega\n"
        => BadEdit(0, "`file_path` is required");
    empty_file_path:
        "- file_path: \"\"\n  old_string: alpha\n  new_string: omega\n"
        => BadEdit(0, "`file_path` is empty");
    create_and_delete_together:
        "- file_path: a.txt\n  create: true\n  delete: true\n  new_string: x\n"
        => BadEdit(0, "exclude each other");
    append_and_move_together:
        "- file_path: a.txt\n  append: true\n  move_to: c.txt\n  new_string: x\n"
        => BadEdit(0, "exclude each other");
    create_with_old_string:
        "- file_path: new.txt\n  create: true\n  old_string: alpha\n  new_string: x\n"
        => BadEdit(0, "`create` takes `new_string` only");
    group_with_outer_old_string:
        "- file_path: a.txt\n  old_string: alpha\n  edits:\n    - {old_string: beta, new_string: omega}\n"
        => BadEdit(0, "group");
    end_line_before_start_line:
        "- file_path: a.txt\n  old_string: beta\n  new_string: omega\n  start_line: 3\n  end_line: 2\n"
        => BadEdit(0, "`end_line` (2) is before `start_line` (3)");
    start_line_zero:
        "- file_path: a.txt\n  old_string: beta\n  new_string: omega\n  start_line: 0\n"
        => BadEdit(0, "`start_line` is 0");
    start_line_negative:
        "- file_path: a.txt\n  old_string: beta\n  new_string: omega\n  start_line: -3\n"
        => BadEdit(0, "`start_line` is -3");
    invalid_input_wins_over_a_failed_edit:
        "- file_path: a.txt\n  old_string: not there\n  new_string: x\n- file_path: a.txt\n  old_string: \"\"\n  new_string: x\n"
        => BadEdit(1, "`old_string` is empty");

    // ---- paths outside the repository or into .git ----------------------------------------------
    absolute_path_outside:
        // old_string that no passwd file has: even a broken path check could not write here.
        "- file_path: /etc/passwd\n  old_string: patchgate-hostile-never-present\n  new_string: x\n"
        => BadEdit(0, "outside the repository");
    parent_dir_escape:
        "- file_path: ../{ESCAPE}\n  create: true\n  new_string: escaped\n"
        => BadEdit(0, "leaves the repository");
    inner_parent_dir_escape:
        "- file_path: a/../../{ESCAPE}\n  create: true\n  new_string: escaped\n"
        => BadEdit(0, "leaves the repository");
    repository_root_as_file:
        "- file_path: .\n  create: true\n  new_string: x\n"
        => BadEdit(0, "repository root");
    git_config:
        "- file_path: .git/config\n  old_string: \"[core]\"\n  new_string: \"[core]\\n\\thooksPath = /tmp\"\n"
        => BadEdit(0, "inside `.git`");
    git_hook_via_create:
        "- file_path: .git/hooks/pre-commit\n  create: true\n  new_string: \"#!/bin/sh\\necho pwned\\n\"\n"
        => BadEdit(0, "inside `.git`");
    nested_git_dir:
        "- file_path: sub/.git/x\n  create: true\n  new_string: x\n"
        => BadEdit(0, "inside `.git`");
    git_dir_other_case:
        "- file_path: .GIT/config\n  create: true\n  new_string: x\n"
        => BadEdit(0, "inside `.git`");
    git_dir_through_dot_segments:
        "- file_path: sub/../.git/hooks/post-checkout\n  create: true\n  new_string: x\n"
        => BadEdit(0, "inside `.git`");
    move_to_escaping:
        "- file_path: a.txt\n  move_to: ../{ESCAPE}\n"
        => BadEdit(0, "leaves the repository");
    move_to_absolute_outside:
        "- file_path: a.txt\n  move_to: /tmp/{ESCAPE}\n"
        => BadEdit(0, "outside the repository");
    move_to_into_git:
        "- file_path: a.txt\n  move_to: .git/hooks/post-checkout\n"
        => BadEdit(0, "inside `.git`");

    // ---- targets that cannot be edited (exit 2) -------------------------------------------------
    binary_target:
        "- file_path: bin.dat\n  old_string: binary\n  new_string: text\n"
        => Failed(0, "error", "binary");
    non_utf8_target:
        "- file_path: latin1.txt\n  old_string: caf\n  new_string: cafe\n"
        => Failed(0, "error", "not valid UTF-8");
    directory_target:
        "- file_path: src\n  old_string: fn\n  new_string: func\n"
        => Failed(0, "error", "is a directory");
    append_to_directory:
        "- file_path: sub\n  append: true\n  new_string: x\n"
        => Failed(0, "error", "is a directory");
    create_over_existing_file:
        "- file_path: a.txt\n  create: true\n  new_string: replaced\n"
        => Failed(0, "error", "already exists");
    create_over_directory:
        "- file_path: src\n  create: true\n  new_string: x\n"
        => Failed(0, "error", "directory");
    create_below_a_file:
        "- file_path: a.txt/child.txt\n  create: true\n  new_string: x\n"
        => Failed(0, "error", "a.txt is a file");
    delete_missing_file:
        "- file_path: nope.txt\n  delete: true\n"
        => Failed(0, "not_found", "does not exist");
    append_to_missing_file:
        "- file_path: nope.txt\n  append: true\n  new_string: x\n"
        => Failed(0, "not_found", "does not exist");
    replace_in_missing_file:
        "- file_path: nope.txt\n  old_string: alpha\n  new_string: omega\n"
        => Failed(0, "not_found", "does not exist");
    move_to_onto_existing_file:
        "- file_path: a.txt\n  move_to: b.txt\n"
        => Failed(0, "error", "already exists");
    move_of_missing_file:
        "- file_path: nope.txt\n  move_to: c.txt\n"
        => Failed(0, "not_found", "does not exist");
    start_line_past_the_end:
        "- file_path: a.txt\n  old_string: alpha\n  new_string: omega\n  start_line: 100\n"
        => Failed(0, "not_found", "past the end");
    one_bad_edit_blocks_the_good_ones:
        "- file_path: b.txt\n  old_string: bee\n  new_string: wasp\n- file_path: new.txt\n  create: true\n  new_string: x\n- file_path: a.txt\n  old_string: not there\n  new_string: x\n"
        => Failed(2, "not_found", "not found");
}

// ---- cases with their own setup -----------------------------------------------------------------

/// Runs `patch` on `repo` (already holding its setup) and checks the expectation, zero writes in the
/// repository, and that `outside` (a directory outside the repository) is unchanged.
fn run_with_outside(case: &str, repo: &TestRepo, outside: &Path, patch: &str, expect: Expect) {
    let before = state(repo);
    let outside_before = crate::harness::files_of(outside);
    let run = repo.apply(patch, &[]);
    check_run(case, &run, expect);
    assert_eq!(
        state(repo),
        before,
        "{case}: the repository changed\nreport:\n{}",
        run.stdout
    );
    assert_eq!(
        crate::harness::files_of(outside),
        outside_before,
        "{case}: a file outside the repository changed\nreport:\n{}",
        run.stdout
    );
}

/// A directory outside the repository holding `secret.txt`, and a repository with `link` → it.
fn repo_with_link_to_outside(link: &str, to_file: bool) -> (TestRepo, tempfile::TempDir) {
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "secret alpha\n").expect("write");
    let repo = TestRepo::new().file("a.txt", "alpha\n");
    let target = if to_file {
        outside.path().join("secret.txt")
    } else {
        outside.path().to_path_buf()
    };
    std::os::unix::fs::symlink(&target, repo.path().join(link)).expect("symlink");
    (repo.commit(), outside)
}

#[test]
fn symlink_file_pointing_outside_as_file_path() {
    let (repo, outside) = repo_with_link_to_outside("leak.txt", true);
    run_with_outside(
        "symlink_file_pointing_outside_as_file_path",
        &repo,
        outside.path(),
        "- file_path: leak.txt\n  old_string: secret alpha\n  new_string: owned\n",
        BadEdit(0, "outside the repository"),
    );
}

#[test]
fn symlink_file_pointing_outside_appended_to() {
    let (repo, outside) = repo_with_link_to_outside("leak.txt", true);
    run_with_outside(
        "symlink_file_pointing_outside_appended_to",
        &repo,
        outside.path(),
        "- file_path: leak.txt\n  append: true\n  new_string: owned\n",
        BadEdit(0, "outside the repository"),
    );
}

#[test]
fn symlink_dir_pointing_outside_as_parent_for_create() {
    let (repo, outside) = repo_with_link_to_outside("ext", false);
    run_with_outside(
        "symlink_dir_pointing_outside_as_parent_for_create",
        &repo,
        outside.path(),
        "- file_path: ext/planted.txt\n  create: true\n  new_string: owned\n",
        BadEdit(0, "outside the repository"),
    );
}

#[test]
fn symlink_dir_pointing_outside_as_parent_for_replace() {
    let (repo, outside) = repo_with_link_to_outside("ext", false);
    run_with_outside(
        "symlink_dir_pointing_outside_as_parent_for_replace",
        &repo,
        outside.path(),
        "- file_path: ext/secret.txt\n  old_string: secret alpha\n  new_string: owned\n",
        BadEdit(0, "outside the repository"),
    );
}

#[test]
fn move_to_through_symlink_dir_pointing_outside() {
    let (repo, outside) = repo_with_link_to_outside("ext", false);
    run_with_outside(
        "move_to_through_symlink_dir_pointing_outside",
        &repo,
        outside.path(),
        "- file_path: a.txt\n  move_to: ext/moved.txt\n",
        BadEdit(0, "outside the repository"),
    );
}

#[test]
fn dangling_symlink_pointing_outside_used_for_create() {
    let outside = tempfile::tempdir().expect("tempdir");
    let repo = TestRepo::new().file("a.txt", "alpha\n");
    let target = outside.path().join("not-yet.txt");
    std::os::unix::fs::symlink(&target, repo.path().join("dangling")).expect("symlink");
    let repo = repo.commit();
    run_with_outside(
        "dangling_symlink_pointing_outside_used_for_create",
        &repo,
        outside.path(),
        "- file_path: dangling\n  create: true\n  new_string: owned\n",
        BadEdit(0, "outside the repository"),
    );
    assert!(
        !target.exists(),
        "a file was created through the dangling symlink"
    );
}

#[test]
fn symlink_into_dot_git() {
    let repo = TestRepo::new().file("a.txt", "alpha\n");
    std::os::unix::fs::symlink(".git", repo.path().join("g")).expect("symlink");
    let repo = repo.commit();
    let outside = tempfile::tempdir().expect("tempdir");
    run_with_outside(
        "symlink_into_dot_git",
        &repo,
        outside.path(),
        "- file_path: g/hooks/pre-commit\n  create: true\n  new_string: \"#!/bin/sh\\necho pwned\\n\"\n",
        BadEdit(0, ".git"),
    );
}

#[test]
fn non_utf8_patch_on_stdin() {
    let repo = base_repo();
    let before = state(&repo);
    let run = repo.run_stdin(
        &["apply", "-", "--format", "json"],
        b"- file_path: a.txt\n  old_string: caf\xe9\n  new_string: cafe\n",
    );
    check_run(
        "non_utf8_patch_on_stdin",
        &run,
        Doc("not valid UTF-8", At(2, 18)),
    );
    assert_eq!(state(&repo), before);
}

#[test]
fn nul_byte_patch_on_stdin() {
    let repo = base_repo();
    let before = state(&repo);
    let run = repo.run_stdin(
        &["apply", "-", "--format", "json"],
        b"[{\"file_path\": \"a.txt\", \"old_string\": \"al\x00pha\", \"new_string\": \"omega\"}]",
    );
    check_run("nul_byte_patch_on_stdin", &run, Doc("NUL byte", At(1, 42)));
    assert_eq!(state(&repo), before);
}

/// A 50 MB `old_string` must finish (no timing assertion): either a plain miss, or a clear
/// refusal of the patch as invalid input.
fn huge_old_string(case: &str, patch: &str) {
    let repo = base_repo();
    let before = state(&repo);
    let run = repo.apply(patch, &[]);
    assert!(
        !run.stderr.contains("panicked"),
        "{case}: panicked\n{}",
        run.stderr
    );
    match run.code {
        2 => check_run(case, &run, Failed(0, "not_found", "not found in a.txt")),
        3 => {
            let report = run.json();
            let msg = report["error"]["message"].as_str().unwrap_or_default();
            assert!(
                msg.contains("large") || msg.contains("size") || msg.contains("limit"),
                "{case}: exit 3 must say the patch is too large; got {msg:?}"
            );
        }
        other => panic!(
            "{case}: exit {other}, expected 2 or 3\nstderr:\n{}",
            run.stderr
        ),
    }
    assert_eq!(state(&repo), before, "{case}: the repository changed");
}

const HUGE: usize = 50 << 20;

#[test]
fn huge_old_string_yaml() {
    let patch = format!(
        "- file_path: a.txt\n  old_string: {}\n  new_string: omega\n",
        "x".repeat(HUGE)
    );
    huge_old_string("huge_old_string_yaml", &patch);
}

#[test]
fn huge_old_string_json() {
    let patch = format!(
        "[{{\"file_path\": \"a.txt\", \"old_string\": \"{}\", \"new_string\": \"omega\"}}]",
        "x".repeat(HUGE)
    );
    huge_old_string("huge_old_string_json", &patch);
}

#[test]
fn patch_path_that_does_not_exist() {
    let repo = base_repo();
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-such-patch.yaml");
    let before = state(&repo);
    let run = repo.run(&["apply", missing.to_str().expect("utf8"), "--format", "json"]);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run.assert_code(3);
    let report = run.json();
    assert_eq!(report["status"], "error");
    assert_eq!(report["error"]["kind"], "invalid_patch", "{report:#}");
    let msg = report["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("cannot read the patch"), "{msg}");
    assert!(
        msg.contains("no-such-patch.yaml"),
        "the message names the path: {msg}"
    );
    assert_eq!(state(&repo), before);
}

#[test]
fn patch_path_that_is_a_directory() {
    let repo = base_repo();
    let dir = tempfile::tempdir().expect("tempdir");
    let before = state(&repo);
    let run = repo.run(&[
        "apply",
        dir.path().to_str().expect("utf8"),
        "--format",
        "json",
    ]);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run.assert_code(3);
    let report = run.json();
    assert_eq!(report["status"], "error");
    assert_eq!(report["error"]["kind"], "invalid_patch", "{report:#}");
    let msg = report["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("directory"), "{msg}");
    assert_eq!(state(&repo), before);
}

#[test]
fn patch_path_inside_the_repository_that_is_a_directory() {
    // `apply src` in a repository with a src/ folder: the patch argument, not an edit target.
    let repo = base_repo();
    let before = state(&repo);
    let run = repo.run(&["apply", "src", "--format", "json"]);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run.assert_code(3);
    let msg = run.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(msg.contains("directory"), "{msg}");
    assert_eq!(state(&repo), before);
}

#[test]
fn human_format_errors_do_not_panic_either() {
    // The miette renderer gets the same hostile documents (NUL, deep nesting, bad UTF-8 target).
    let repo = base_repo();
    let before = state(&repo);
    // Each with the words that name its problem, in either format.
    for (patch, code, needle) in [
        (
            "- file_path: a.txt\n  old_string: \"al\0pha\"\n  new_string: omega\n".to_string(),
            3,
            "NUL",
        ),
        ("[".repeat(NESTING), 3, "invalid"),
        (
            "- file_path: latin1.txt\n  old_string: caf\n  new_string: cafe\n".to_string(),
            2,
            "not valid UTF-8",
        ),
        (
            "- file_path: ../x\n  create: true\n  new_string: x\n".to_string(),
            3,
            "leaves the repository",
        ),
        (String::new(), 3, "empty"),
    ] {
        for format in ["human", "markdown"] {
            let pfile = tempfile::NamedTempFile::new().expect("patch file");
            std::fs::write(pfile.path(), &patch).expect("write");
            let run = repo.run(&[
                "apply",
                pfile.path().to_str().expect("utf8"),
                "--format",
                format,
            ]);
            assert!(
                !run.stderr.contains("panicked"),
                "{format} {patch:.40?}: {}",
                run.stderr
            );
            assert_eq!(
                run.code, code,
                "{format} {patch:.40?}\n{}\n{}",
                run.stdout, run.stderr
            );
            let text = format!("{}{}", run.stdout, run.stderr);
            assert!(
                text.contains(needle),
                "{format} {patch:.40?}: the message does not name the problem ({needle}):\n{text}"
            );
        }
    }
    assert_eq!(state(&repo), before);
}
