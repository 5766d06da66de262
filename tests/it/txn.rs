//! The git transaction: `--commit`, `--branch`, refusals, hooks, worktrees. git (the CLI) is the
//! witness of what the repository holds afterwards.

use crate::harness::{TestRepo, git_try};

const PATCH: &str = "message: fix both\nedits:\n  - {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n  - {file_path: b.txt, old_string: beta, new_string: BETA}\n";

/// A repository with work in progress: an uncommitted change inside a patched file, an unstaged
/// change and a staged change in files the patch does not touch, and an untracked file.
fn busy_repo() -> TestRepo {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\nsecond\n")
        .file("b.txt", "beta\n")
        .file("c.txt", "c\n")
        .file("d.txt", "d\n")
        .commit();
    repo.write("a.txt", "alpha\nsecond, edited by the user\n");
    repo.write("c.txt", "c unstaged\n");
    repo.write("d.txt", "d staged\n");
    repo.git(&["add", "d.txt"]);
    repo.write("d.txt", "d staged, then more unstaged\n");
    repo.write("untracked.txt", "mine\n");
    repo
}

#[test]
fn commit_records_the_patched_files_and_leaves_other_work_alone() {
    let repo = busy_repo();
    let before_head = repo.head();
    let run = repo.apply(PATCH, &["--commit"]);
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["status"], "committed");
    assert_eq!(json["branch"], "main");
    let head = repo.head();
    assert_eq!(json["commit"], head.as_str());
    assert_eq!(repo.git(&["rev-parse", "HEAD^"]).trim(), before_head);
    assert_eq!(repo.git(&["log", "-1", "--format=%s"]).trim(), "fix both");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae>"]).trim(),
        "Test <test@example.invalid>"
    );
    // The commit holds the full new content of the patched files (the user's edit included) …
    assert_eq!(
        repo.git(&["show", "HEAD:a.txt"]),
        "ALPHA\nsecond, edited by the user\n"
    );
    assert_eq!(repo.git(&["show", "HEAD:b.txt"]), "BETA\n");
    assert_eq!(
        repo.git(&["diff", "--name-only", "HEAD^", "HEAD"]),
        "a.txt\nb.txt\n"
    );
    // … and nothing else: d.txt's staged change stays staged, c.txt's stays unstaged.
    assert_eq!(repo.git(&["diff", "--cached", "--name-only"]), "d.txt\n");
    assert_eq!(repo.git(&["show", ":d.txt"]), "d staged\n");
    assert_eq!(repo.git(&["diff", "--name-only"]), "c.txt\nd.txt\n");
    assert_eq!(repo.read_str("untracked.txt"), "mine\n");
    // The working tree and index entries of the patched files match the commit.
    assert_eq!(
        repo.read_str("a.txt"),
        "ALPHA\nsecond, edited by the user\n"
    );
    assert_eq!(
        repo.git(&["show", ":a.txt"]),
        "ALPHA\nsecond, edited by the user\n"
    );
    assert!(git_try(repo.path(), &["fsck", "--strict"]).0);
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn commit_message_comes_from_m_then_the_patch_then_a_summary() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    repo.apply(PATCH, &["--commit", "-m", "from the flag"])
        .assert_code(0);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"]).trim(),
        "from the flag"
    );
    repo.apply(
        "- {file_path: a.txt, old_string: ALPHA, new_string: a2}\n",
        &["--commit"],
    )
    .assert_code(0);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"]).trim(),
        "patchgate: update a.txt"
    );
}

#[test]
fn a_retried_commit_is_a_no_op() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    repo.apply(PATCH, &["--commit"]).assert_code(0);
    let head = repo.head();
    let again = repo.apply(PATCH, &["--commit"]);
    again.assert_code(0);
    assert_eq!(again.json()["edits"][0]["status"], "already_applied");
    assert_eq!(repo.head(), head, "no second commit");
}

#[test]
fn commit_on_a_detached_head_moves_head() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    let base = repo.head();
    repo.git(&["checkout", "-q", "--detach"]);
    repo.apply(PATCH, &["--commit"]).assert_code(0);
    assert_eq!(repo.git(&["rev-parse", "HEAD^"]).trim(), base);
    assert_eq!(
        repo.git(&["rev-parse", "main"]).trim(),
        base,
        "the branch did not move"
    );
}

#[test]
fn commit_in_a_repository_without_commits() {
    let repo = TestRepo::new();
    repo.apply(
        "- {file_path: new.txt, create: true, new_string: \"hello\\n\"}\n",
        &["--commit"],
    )
    .assert_code(0);
    assert_eq!(repo.git(&["show", "HEAD:new.txt"]), "hello\n");
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
}

#[test]
fn branch_mode_commits_without_touching_the_working_tree_index_or_head() {
    let repo = busy_repo();
    let head = repo.head();
    let mut snapshot = repo.snapshot();
    snapshot.remove("refs");
    let run = repo.apply(PATCH, &["--branch", "bot/fixups"]);
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["status"], "committed");
    assert_eq!(json["branch"], "bot/fixups");
    let mut after = repo.snapshot();
    after.remove("refs");
    assert_eq!(after, snapshot, "working tree, index, HEAD untouched");
    assert_eq!(repo.head(), head);
    let tip = repo.git(&["rev-parse", "bot/fixups"]);
    assert_eq!(json["commit"], tip.trim());
    assert_eq!(repo.git(&["rev-parse", "bot/fixups^"]).trim(), head);
    // The branch's content comes from the committed tree, not the dirty working tree.
    assert_eq!(repo.git(&["show", "bot/fixups:a.txt"]), "ALPHA\nsecond\n");
    assert_eq!(repo.git(&["show", "bot/fixups:d.txt"]), "d\n");
    assert!(git_try(repo.path(), &["fsck", "--strict"]).0);
    assert_eq!(repo.leftovers(), Vec::<String>::new());

    // Re-run: already applied on the branch, no new commit.
    let again = repo.apply(PATCH, &["--branch", "bot/fixups"]);
    again.assert_code(0);
    assert_eq!(again.json()["edits"][1]["status"], "already_applied");
    assert_eq!(repo.git(&["rev-parse", "bot/fixups"]), tip);

    // A further patch builds on the branch's tip (compare-and-swap of an existing branch).
    repo.apply(
        "- {file_path: a.txt, old_string: ALPHA, new_string: A3}\n",
        &["--branch", "bot/fixups"],
    )
    .assert_code(0);
    assert_eq!(repo.git(&["rev-parse", "bot/fixups^"]), tip);
    assert_eq!(repo.git(&["show", "bot/fixups:a.txt"]), "A3\nsecond\n");
}

#[test]
fn branch_mode_refuses_the_checked_out_branch() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    let run = repo.apply(PATCH, &["--branch", "main"]);
    run.assert_code(4);
    assert_eq!(run.json()["error"]["kind"], "branch_checked_out");
    let run = repo.apply(PATCH, &["--branch", "not a..valid"]);
    run.assert_code(3);
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not a valid branch name")),
        "{}",
        run.stdout
    );
    assert_eq!(repo.git(&["branch", "--list"]).trim(), "* main");
    assert_eq!(repo.read_str("a.txt"), "alpha\n");
}

#[test]
fn branch_mode_works_in_a_bare_repository() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    let bare = tempfile::tempdir().expect("tempdir");
    let bare_path = bare.path().join("r.git");
    repo.git(&[
        "clone",
        "-q",
        "--bare",
        ".",
        bare_path.to_str().expect("utf8"),
    ]);
    let patch = bare.path().join("p.yaml");
    std::fs::write(&patch, PATCH).expect("patch");
    let run = crate::harness::run_in(
        &bare_path,
        &[
            "apply",
            patch.to_str().expect("utf8"),
            "--branch",
            "fixups",
            "--format",
            "json",
        ],
        None,
    );
    run.assert_code(0);
    let (ok, a) = git_try(&bare_path, &["show", "fixups:a.txt"]);
    assert!(ok, "{a}");
    assert_eq!(a, "ALPHA\n");
    // Without --branch a bare repository has no working tree to write.
    let run = crate::harness::run_in(
        &bare_path,
        &["apply", patch.to_str().expect("utf8"), "--format", "json"],
        None,
    );
    run.assert_code(4);
    assert_eq!(run.json()["error"]["kind"], "bare_repository");
}

#[test]
fn refuses_during_merge_rebase_cherry_pick_and_bisect() {
    fn conflicted() -> TestRepo {
        let repo = TestRepo::new()
            .file("a.txt", "alpha\n")
            .file("b.txt", "beta\n")
            .commit();
        repo.git(&["checkout", "-q", "-b", "other"]);
        repo.write("b.txt", "other\n");
        repo.git(&["commit", "-qam", "other"]);
        repo.git(&["checkout", "-q", "main"]);
        repo.write("b.txt", "mainline\n");
        repo.git(&["commit", "-qam", "main"]);
        repo
    }
    let cases: [(&str, &[&str]); 3] = [
        ("merge", &["merge", "-q", "other"]),
        ("cherry-pick", &["cherry-pick", "other"]),
        ("rebase", &["rebase", "other"]),
    ];
    for (name, cmd) in cases {
        let repo = conflicted();
        let (ok, _) = git_try(repo.path(), cmd);
        assert!(!ok, "{name} should stop on the conflict");
        let snapshot = repo.snapshot();
        let run = repo.apply(
            "- {file_path: a.txt, old_string: alpha, new_string: A}\n",
            &[],
        );
        run.assert_code(4);
        assert_eq!(
            run.json()["error"]["kind"],
            "operation_in_progress",
            "{name}"
        );
        assert!(
            run.json()["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(name)),
            "{name}"
        );
        assert_eq!(repo.snapshot(), snapshot, "{name}: nothing changed");
    }
    let repo = conflicted();
    repo.git(&["bisect", "start"]);
    let snapshot = repo.snapshot();
    let run = repo.apply(
        "- {file_path: a.txt, old_string: alpha, new_string: A}\n",
        &[],
    );
    run.assert_code(4);
    assert_eq!(run.json()["error"]["kind"], "operation_in_progress");
    assert_eq!(repo.snapshot(), snapshot, "bisect: nothing changed");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("bisect"))
    );
}

#[test]
fn a_locked_index_blocks_commit_but_not_a_working_tree_apply() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    std::fs::write(repo.path().join(".git/index.lock"), "").expect("lock");
    let snapshot = repo.snapshot();
    let run = repo.apply(PATCH, &["--commit"]);
    run.assert_code(4);
    assert_eq!(run.json()["error"]["kind"], "index_locked");
    assert_eq!(repo.snapshot(), snapshot);
    // Writing the working tree does not need the index (a pre-commit hook runs while git holds it).
    repo.apply(PATCH, &[]).assert_code(0);
    assert_eq!(repo.read_str("a.txt"), "ALPHA\n");
}

#[test]
fn commit_without_an_identity_is_a_clear_environment_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("home");
    crate::harness::git(dir.path(), &["init", "-q"]);
    std::fs::write(dir.path().join("a.txt"), "alpha\n").expect("write");
    let patch = home.path().join("p.yaml");
    std::fs::write(
        &patch,
        "- {file_path: a.txt, old_string: alpha, new_string: A}\n",
    )
    .expect("patch");
    let out = std::process::Command::new(crate::harness::BIN)
        .args([
            "apply",
            patch.to_str().expect("utf8"),
            "--commit",
            "--format",
            "json",
        ])
        .current_dir(dir.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env_remove("EMAIL")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["error"]["kind"], "no_identity");
    assert!(
        json["error"]["help"]
            .as_str()
            .is_some_and(|h| h.contains("git config --global user.name"))
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("read"),
        "alpha\n"
    );
}

#[test]
fn works_from_a_subdirectory_and_in_a_linked_worktree() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .file("sub/x.txt", "x\n")
        .commit();
    let patch = tempfile::NamedTempFile::new().expect("patch");
    std::fs::write(patch.path(), PATCH).expect("write");
    let run = crate::harness::run_in(
        &repo.path().join("sub"),
        &[
            "apply",
            patch.path().to_str().expect("utf8"),
            "--format",
            "json",
        ],
        None,
    );
    run.assert_code(0);
    assert_eq!(
        repo.read_str("a.txt"),
        "ALPHA\n",
        "paths are relative to the root, not the cwd"
    );

    let wt_parent = tempfile::tempdir().expect("tempdir");
    let wt = wt_parent.path().join("wt");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        wt.to_str().expect("utf8"),
    ]);
    let run = crate::harness::run_in(
        &wt,
        &[
            "apply",
            patch.path().to_str().expect("utf8"),
            "--commit",
            "--format",
            "json",
        ],
        None,
    );
    run.assert_code(0);
    assert_eq!(run.json()["branch"], "feature");
    assert_eq!(crate::harness::git(&wt, &["show", "HEAD:a.txt"]), "ALPHA\n");
    assert_eq!(crate::harness::git(&wt, &["status", "--porcelain"]), "");
    assert_eq!(
        repo.git(&["rev-list", "--count", "main"]).trim(),
        "1",
        "main did not move"
    );
}

/// A repository whose pre-commit hook runs `patchgate apply <fix.yaml> <args>` (report in
/// `.git/hook-report.json`) followed by `after`, then a `git commit` of a staged change to a.txt.
/// Returns the repository, whether the commit succeeded (with git's output), and the report.
fn commit_with_hook(args: &str, after: &str) -> (TestRepo, (bool, String), serde_json::Value) {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    let patch = repo.path().join(".git/fix.yaml");
    std::fs::write(
        &patch,
        "- {file_path: b.txt, old_string: beta, new_string: BETA}\n",
    )
    .expect("patch");
    let hook = repo.path().join(".git/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().expect("dir")).expect("hooks dir");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\n\"{}\" apply \"{}\" {args} --format json > .git/hook-report.json\n{after}\n",
            crate::harness::BIN,
            patch.display()
        ),
    )
    .expect("hook");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    repo.write("a.txt", "alpha changed\n");
    repo.git(&["add", "a.txt"]);
    let commit = git_try(repo.path(), &["commit", "-q", "-m", "with hook"]);
    let report = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join(".git/hook-report.json")).expect("report"),
    )
    .expect("json");
    (repo, commit, report)
}

#[test]
fn inside_a_real_pre_commit_hook() {
    let (repo, (ok, out), report) = commit_with_hook("", "git add b.txt");
    assert!(ok, "git commit failed: {out}");
    assert_eq!(report["status"], "applied", "{report}");
    assert_eq!(repo.git(&["show", "HEAD:b.txt"]), "BETA\n");
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "alpha changed\n");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "index and tree agree with the commit"
    );
    assert!(git_try(repo.path(), &["fsck", "--strict"]).0);
    let (ok, out) = git_try(repo.path(), &["ls-files", "--stage", "--debug"]);
    assert!(ok, "the index is readable: {out}");
}

#[test]
fn commit_inside_a_hook_is_refused_because_git_is_committing() {
    let (repo, (ok, out), report) = commit_with_hook("--commit", "exit 0");
    assert!(ok, "{out}");
    assert_eq!(report["error"]["kind"], "inside_git_command", "{report}");
    assert_eq!(repo.read_str("b.txt"), "beta\n");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn staging_checks_nothing_out_and_leaves_no_worktree_registration() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    repo.apply(PATCH, &["--commit", "--checks", "none"])
        .assert_code(0);
    // O(edited files): nothing was materialised for a run without package checkers.
    assert!(!repo.path().join(".git/patchgate/node_modules").exists());
    assert!(!repo.path().join(".git/patchgate/mirrors").exists());
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
    // No file was written anywhere else in the repository than the patched one (and .git).
    let mut written: Vec<String> = crate::harness::files_of(repo.path())
        .into_keys()
        .filter(|k| !k.starts_with(".git/"))
        .collect();
    written.sort();
    assert_eq!(written, ["a.txt", "b.txt"]);
}

#[test]
fn branch_mode_from_a_linked_worktree_refuses_the_main_worktrees_branch() {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("b.txt", "beta\n")
        .commit();
    let wt_parent = tempfile::tempdir().expect("tempdir");
    let wt = wt_parent.path().join("wt");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "side",
        wt.to_str().expect("utf8"),
    ]);
    let patch = tempfile::NamedTempFile::new().expect("patch");
    std::fs::write(patch.path(), PATCH).expect("write");
    let run = crate::harness::run_in(
        &wt,
        &[
            "apply",
            patch.path().to_str().expect("utf8"),
            "--branch",
            "main",
            "--format",
            "json",
        ],
        None,
    );
    run.assert_code(4);
    assert_eq!(run.json()["error"]["kind"], "branch_checked_out");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn a_file_replaced_by_a_directory_in_the_working_tree_can_get_a_new_file_inside() {
    let repo = TestRepo::new().file("foo", "x\n").commit();
    std::fs::remove_file(repo.path().join("foo")).expect("rm");
    std::fs::create_dir(repo.path().join("foo")).expect("mkdir");
    repo.apply(
        "- {file_path: foo/bar.txt, create: true, new_string: \"hello\\n\"}\n",
        &["--checks", "none"],
    )
    .assert_code(0);
    assert_eq!(repo.read_str("foo/bar.txt"), "hello\n");
}

#[test]
fn move_to_with_a_replacement_on_a_symlink_is_refused() {
    let repo = TestRepo::new().file("real.txt", "hello world\n").commit();
    std::os::unix::fs::symlink("real.txt", repo.path().join("alias.txt")).expect("link");
    repo.git(&["add", "alias.txt"]);
    repo.git(&["commit", "-qm", "link"]);
    let snapshot = repo.snapshot();
    let run = repo.apply(
        "- {file_path: alias.txt, move_to: moved.txt, old_string: hello, new_string: bye}\n",
        &["--checks", "none"],
    );
    run.assert_code(3);
    assert!(
        run.json()["edits"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("symlink"))
    );
    assert_eq!(repo.snapshot(), snapshot);
}

#[test]
fn an_edit_that_differs_only_in_line_endings_is_invalid() {
    let repo = TestRepo::new().file("f.txt", "v1\r\n").commit();
    let run = repo.run_stdin(
        &["apply", "-", "--format", "json", "--checks", "none"],
        br#"[{"file_path":"f.txt","old_string":"v1\r\n","new_string":"v1\n"}]"#,
    );
    run.assert_code(3);
}

#[test]
fn a_sha256_repository_is_refused_with_a_clear_message_and_nothing_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (ok, out) = crate::harness::git_try(dir.path(), &["init", "-q", "--object-format=sha256"]);
    assert!(ok, "git init --object-format=sha256: {out}");
    std::fs::write(dir.path().join("a.txt"), "alpha\n").expect("write");
    let run = crate::harness::run_in(
        dir.path(),
        &["apply", "-", "--format", "json"],
        Some(b"- {file_path: a.txt, old_string: alpha, new_string: A}\n"),
    );
    run.assert_code(4);
    let help = run.json()["error"]["help"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(help.contains("SHA-1"), "help: {help}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("read"),
        "alpha\n"
    );
    assert!(
        !dir.path().join(".git/patchgate").exists(),
        "nothing written into .git"
    );
}

/// `GIT_AUTHOR_DATE` in ISO 8601 is honoured, and one patchgate cannot read is refused (exit 4,
/// nothing changed) rather than silently replaced by the current time, or a crash.
#[test]
fn commit_dates_from_the_environment_are_honoured_or_refused() {
    let run = |repo: &TestRepo, date: &str| {
        let patch = tempfile::NamedTempFile::new().expect("patch");
        std::fs::write(
            patch.path(),
            "- {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n",
        )
        .expect("write");
        let out = std::process::Command::new(crate::harness::BIN)
            .args(["apply", "--commit", "--format", "json"])
            .arg(patch.path())
            .current_dir(repo.path())
            .env("GIT_AUTHOR_DATE", date)
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let repo = TestRepo::new().file("a.txt", "alpha\n").commit();
    let base = repo.head();
    for bad in ["1700000000 +1é2", "next tuesday"] {
        let (code, out) = run(&repo, bad);
        assert_eq!(code, Some(4), "{bad}: {out}");
        assert!(out.contains("GIT_AUTHOR_DATE"), "{bad}: {out}");
        assert_eq!(repo.head(), base);
        assert_eq!(repo.read_str("a.txt"), "alpha\n");
    }
    let (code, out) = run(&repo, "2005-04-07T22:13:13+02:00");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%at %ai"]).trim(),
        "1112904793 2005-04-07 22:13:13 +0200"
    );
}

/// A working-tree apply rolls back until it has landed, so it writes only the old contents git
/// lacks (a.txt's, with the user's uncommitted edit), never the new ones: those are named by id
/// in the journal and the history. The repository stays whole for git (fsck, gc), undo puts the
/// old contents back, and redo (the undo of the undo) brings the new ones back from the files
/// the undo saved.
#[test]
fn a_working_tree_apply_writes_only_the_old_contents_git_lacks() {
    let repo = busy_repo();
    let blob = |content: &str| -> (String, bool) {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("c");
        std::fs::write(&f, content).expect("write");
        let id = repo
            .git(&["hash-object", f.to_str().expect("utf8")])
            .trim()
            .to_string();
        let (exists, _) = git_try(repo.path(), &["cat-file", "-e", &id]);
        (id, exists)
    };
    assert!(!blob("alpha\nsecond, edited by the user\n").1);
    let run = repo.apply(PATCH, &["--checks", "none"]);
    run.assert_code(0);
    assert_eq!(
        repo.read_str("a.txt"),
        "ALPHA\nsecond, edited by the user\n"
    );
    assert_eq!(repo.read_str("b.txt"), "BETA\n");
    assert!(
        blob("alpha\nsecond, edited by the user\n").1,
        "the old content is kept"
    );
    assert!(
        !blob("ALPHA\nsecond, edited by the user\n").1,
        "no new content is written"
    );
    assert!(!blob("BETA\n").1, "no new content is written");
    let (ok, out) = git_try(repo.path(), &["fsck", "--strict", "--no-progress"]);
    assert!(ok, "{out}");
    let (ok, out) = git_try(repo.path(), &["gc", "-q", "--prune=now"]);
    assert!(ok, "{out}");
    // Undo needs only the old contents (and the ids of the new ones, to see they are still there).
    repo.run(&["undo", "--format", "json"]).assert_code(0);
    assert_eq!(
        repo.read_str("a.txt"),
        "alpha\nsecond, edited by the user\n"
    );
    assert_eq!(repo.read_str("b.txt"), "beta\n");
    // The undo kept what it replaced: the redo finds it.
    let list = repo.run(&["undo", "--list", "--format", "json"]).json();
    // Newest first: the undo.
    let undo_id = list["patches"][0]["patch_id"]
        .as_str()
        .expect("id")
        .to_string();
    repo.run(&["undo", &undo_id, "--format", "json"])
        .assert_code(0);
    assert_eq!(
        repo.read_str("a.txt"),
        "ALPHA\nsecond, edited by the user\n"
    );
    assert_eq!(repo.read_str("b.txt"), "BETA\n");
    let (ok, out) = git_try(repo.path(), &["fsck", "--strict", "--no-progress"]);
    assert!(ok, "{out}");
}

/// The replaced files keep their mode and owner whatever the umask: an executable stays
/// executable, a private file private, a setuid bit set; and, when the run is root's, a file of
/// another user stays that user's. The new file gets them when it is created, where it can
/// (`umask 077` takes bits away, the setuid bit and the owner are given afterwards).
#[test]
fn replaced_files_keep_mode_and_owner_under_any_umask() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let repo = TestRepo::new()
        .file("run.sh", "echo alpha\n")
        .file("secret.txt", "alpha\n")
        .file("setuid.bin", "alpha\n")
        .file("theirs.txt", "alpha\n")
        .commit();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for (f, mode) in [
        ("run.sh", 0o755),
        ("secret.txt", 0o600),
        ("setuid.bin", 0o4755),
        ("theirs.txt", 0o664),
    ] {
        let p = repo.path().join(f);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    if root {
        std::os::unix::fs::lchown(repo.path().join("theirs.txt"), Some(65534), Some(65534))
            .expect("chown");
    }
    let patch = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(
        patch.path(),
        "edits:\n  - {file_path: run.sh, old_string: alpha, new_string: ALPHA}\n  - {file_path: secret.txt, old_string: alpha, new_string: ALPHA}\n  - {file_path: setuid.bin, old_string: alpha, new_string: ALPHA}\n  - {file_path: theirs.txt, old_string: alpha, new_string: ALPHA}\n",
    )
    .expect("write patch");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 077; exec \"$0\" apply \"$1\" --checks none --format json")
        .arg(crate::harness::BIN)
        .arg(patch.path())
        .current_dir(repo.path())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for (f, mode) in [
        ("run.sh", 0o755),
        ("secret.txt", 0o600),
        ("setuid.bin", 0o4755),
        ("theirs.txt", 0o664),
    ] {
        let md = std::fs::symlink_metadata(repo.path().join(f)).expect("stat");
        assert_eq!(
            md.mode() & 0o7777,
            mode,
            "{f}: mode {:o}",
            md.mode() & 0o7777
        );
        let want = if f == "run.sh" {
            "echo ALPHA\n"
        } else {
            "ALPHA\n"
        };
        assert_eq!(repo.read_str(f), want, "{f}");
    }
    if root {
        let md = std::fs::symlink_metadata(repo.path().join("theirs.txt")).expect("stat");
        assert_eq!((md.uid(), md.gid()), (65534, 65534), "theirs.txt's owner");
    }
}
