//! examples/ci-bot/apply-fixups.sh end to end, offline, on temporary repositories: a generator's
//! unified diff becomes one commit on the bot's branch, the working tree, index and HEAD stay as
//! they were, and the markdown report lands in its file; nothing to fix, a stale hunk and a failing
//! generator each end with their documented status and no branch.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::harness::{BIN, Run, TestRepo, files_of, git_try};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/ci-bot/apply-fixups.sh"
);

/// Runs the script on `repo` with `generator` (a program and its arguments), the report going to
/// `report`.
fn fixups(repo: &TestRepo, report: &Path, args: &[&str], generator: &[&str]) -> Run {
    let out = Command::new("bash")
        .arg(SCRIPT)
        .arg("-C")
        .arg(repo.path())
        .arg("-o")
        .arg(report)
        .args(args)
        .arg("--")
        .args(generator)
        .env("PATCHGATE", BIN)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_OUTPUT")
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    Run::from(out)
}

/// A generator: a script that prints `diff` and exits with `code`.
fn generator(dir: &Path, diff: &str, code: i32) -> String {
    let path = dir.join("generate.sh");
    std::fs::write(
        &path,
        format!("#!/bin/sh\ncat <<'PATCH'\n{diff}PATCH\nexit {code}\n"),
    )
    .expect("write generator");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_string_lossy().into_owned()
}

fn repo() -> TestRepo {
    TestRepo::new()
        .file("src/app.txt", "one\ntwo\nthree\n")
        .file("README.txt", "hello\n")
        .commit()
}

/// What must not change: every working-tree file, the index, HEAD and the branch HEAD is on.
fn untouched(repo: &TestRepo) -> (std::collections::BTreeMap<String, Vec<u8>>, String, String) {
    (
        files_of(repo.path()),
        repo.git(&["ls-files", "--stage"]),
        repo.git(&["rev-parse", "HEAD", "main"]),
    )
}

const DIFF: &str = "\
diff --git a/src/app.txt b/src/app.txt
--- a/src/app.txt
+++ b/src/app.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
";

#[test]
fn nothing_to_fix_and_a_failing_generator_make_no_branch() {
    let repo = repo();
    let scratch = tempfile::tempdir().expect("tempdir");
    let report = scratch.path().join("report.md");
    let before = untouched(&repo);

    let empty = generator(scratch.path(), "", 0);
    let r = fixups(&repo, &report, &[], &[&empty]);
    r.assert_code(0);
    assert!(r.stdout.contains("nothing to fix"), "{}", r.stdout);
    assert!(!report.exists(), "no report when nothing changed");

    let broken = generator(scratch.path(), "", 3);
    let r = fixups(&repo, &report, &[], &[&broken]);
    r.assert_code(5);
    assert!(r.stderr.contains("exit 3"), "{}", r.stderr);

    // ruff's convention: exit 1 with a diff means "there is something to fix", not a failure;
    // -x narrows what counts as success.
    let one = generator(scratch.path(), "", 1);
    fixups(&repo, &report, &[], &[&one]).assert_code(0);
    fixups(&repo, &report, &["-x", "0"], &[&one]).assert_code(5);

    assert_eq!(fixups(&repo, &report, &[], &[]).code, 64, "no generator");
    assert!(!git_try(repo.path(), &["rev-parse", "--verify", "bot/fixups"]).0);
    assert_eq!(untouched(&repo), before);
}

#[test]
fn a_generated_diff_becomes_one_commit_on_the_branch() {
    let repo = repo();
    let scratch = tempfile::tempdir().expect("tempdir");
    let report = scratch.path().join("report.md");
    let head = repo.head();
    let before = untouched(&repo);
    let g = generator(scratch.path(), DIFF, 1);

    let r = fixups(&repo, &report, &["-m", "bot: fixups"], &[&g]);
    r.assert_code(0);
    assert_eq!(untouched(&repo), before, "working tree, index and HEAD");
    assert_eq!(
        repo.git(&["show", "bot/fixups:src/app.txt"]),
        "one\nTWO\nthree\n"
    );
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", "bot/fixups"]).trim(),
        "bot: fixups"
    );
    assert_eq!(repo.git(&["rev-parse", "bot/fixups^"]).trim(), head);
    assert_eq!(
        repo.git(&["diff", "--name-only", "main", "bot/fixups"])
            .trim(),
        "src/app.txt"
    );
    let md = std::fs::read_to_string(&report).expect("the markdown report");
    assert!(
        md.contains("src/app.txt") && md.contains("committed"),
        "{md}"
    );

    // A stale diff (the file moved on): exit 2, the branch stays where it was, the report
    // names the miss.
    let tip = repo.git(&["rev-parse", "bot/fixups"]);
    let stale = generator(scratch.path(), &DIFF.replace(" one\n", " uno\n"), 1);
    let r = fixups(&repo, &report, &["-b", "bot/other"], &[&stale]);
    r.assert_code(2);
    assert!(!git_try(repo.path(), &["rev-parse", "--verify", "bot/other"]).0);
    assert_eq!(repo.git(&["rev-parse", "bot/fixups"]), tip);
    let md = std::fs::read_to_string(&report).expect("the markdown report");
    assert!(md.contains("not found") || md.contains("not_found"), "{md}");
    assert_eq!(untouched(&repo), before);
}

#[test]
fn ruff_format_diff_becomes_a_commit() {
    if !crate::checks::require("ruff") {
        return;
    }
    let repo = TestRepo::new()
        .file("pkg/mod.py", "x=1\nprint( x )\n")
        .file("ok.py", "y = 2\n")
        .commit();
    let scratch = tempfile::tempdir().expect("tempdir");
    let report = scratch.path().join("report.md");
    let before = untouched(&repo);

    let r = fixups(
        &repo,
        &report,
        &["-m", "style: ruff format"],
        &["ruff", "format", "--no-cache", "--diff", "."],
    );
    r.assert_code(0);
    assert_eq!(untouched(&repo), before);
    assert_eq!(
        repo.git(&["show", "bot/fixups:pkg/mod.py"]),
        "x = 1\nprint(x)\n"
    );
    assert_eq!(
        repo.git(&["diff", "--name-only", "main", "bot/fixups"])
            .trim(),
        "pkg/mod.py"
    );
    let md = std::fs::read_to_string(&report).expect("the markdown report");
    assert!(md.contains("pkg/mod.py"), "{md}");
}
