//! Commits as git makes them (docs/transaction.md, "Commits go through git's filters"): a file
//! under `.gitattributes` end-of-line conversion, a clean filter, or git-lfs is committed as
//! `git add` would store it, and `git status` is clean right after. Branch names are checked as
//! `git check-ref-format --branch` checks them. git (the CLI) is the witness.

use crate::checks::require;
use crate::harness::{TestRepo, git_try};

/// `git status` and `git diff HEAD` have nothing to say: the commit, the index and the working
/// tree agree, as after `git commit` of the same files.
#[track_caller]
fn assert_clean(repo: &TestRepo) {
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "git status");
    assert_eq!(repo.git(&["diff", "HEAD"]), "", "git diff HEAD");
    assert!(git_try(repo.path(), &["fsck", "--strict"]).0);
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn a_file_under_eol_crlf_is_committed_with_lf_and_the_status_is_clean() {
    let repo = TestRepo::new()
        .file(".gitattributes", "*.txt text eol=crlf\n")
        .file("a.txt", "alpha\r\nsecond\r\n")
        .commit();
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "alpha\nsecond\n");
    let run = repo.apply(
        "- {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n",
        &["--commit", "-m", "upper"],
    );
    run.assert_code(0);
    assert_eq!(run.json()["status"], "committed");
    // The working tree keeps its CRLF; the commit holds what `git add` stores: LF.
    assert_eq!(repo.read("a.txt"), b"ALPHA\r\nsecond\r\n");
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "ALPHA\nsecond\n");
    assert_clean(&repo);
    // The commit's blob is git's own for the file.
    assert_eq!(
        repo.git(&["rev-parse", "HEAD:a.txt"]),
        repo.git(&["hash-object", "--path=a.txt", "a.txt"])
    );
}

/// Attributes in the working tree are read without libgit2 loading the index (its phase mark
/// says so); with a `.gitattributes` removed from the working tree but not from the index, the
/// index is read, and its copy followed as `git add` follows it.
#[test]
fn attributes_in_the_working_tree_are_read_without_the_index() {
    let repo = TestRepo::new()
        .file(".gitattributes", "*.txt text eol=crlf\n")
        .file("sub/a.txt", "alpha\r\nsecond\r\n")
        .commit();
    let apply = |edit: &str| {
        let run = repo.apply_env(edit, &["--commit"], &[("PATCHGATE_TIMINGS", "1")]);
        run.assert_code(0);
        run.stderr.contains("attributes read without the index")
    };
    let mark = apply("- {file_path: sub/a.txt, old_string: alpha, new_string: ALPHA}\n");
    assert!(
        mark,
        "the working tree's attributes read through libgit2's index"
    );
    assert_eq!(repo.git(&["show", "HEAD:sub/a.txt"]), "ALPHA\nsecond\n");
    assert_clean(&repo);

    std::fs::remove_file(repo.path().join(".gitattributes")).expect("rm");
    let mark = apply("- {file_path: sub/a.txt, old_string: second, new_string: SECOND}\n");
    assert!(!mark, "the index's copy may be needed");
    assert_eq!(repo.git(&["show", "HEAD:sub/a.txt"]), "ALPHA\nSECOND\n");
    assert_eq!(repo.git(&["status", "--porcelain"]), " D .gitattributes\n");
}

/// `.gitattributes` deleted from the working tree but still staged, beside others that are in
/// the working tree: each patched file is committed as `git add` stores it (git re-adding the
/// same files afterwards stages nothing new), whichever of them speaks for it.
#[test]
fn a_staged_gitattributes_missing_from_the_working_tree_is_followed_as_git_add_follows_it() {
    let repo = TestRepo::new()
        .file(".gitattributes", "*.md text eol=crlf\n")
        .file("sub/.gitattributes", "*.txt text eol=crlf\n")
        .file("sub/deep/.gitattributes", "*.cfg text eol=crlf\n")
        .file("top.md", "one\r\n")
        .file("sub/a.txt", "two\r\n")
        .file("sub/deep/c.cfg", "three\r\n")
        .file("other/b.txt", "four\r\n")
        .commit();
    for gone in ["sub/.gitattributes", "sub/deep/.gitattributes"] {
        std::fs::remove_file(repo.path().join(gone)).expect("rm");
    }
    let files = ["top.md", "sub/a.txt", "sub/deep/c.cfg", "other/b.txt"];
    let patch: String = files
        .iter()
        .map(|f| {
            format!("- {{file_path: {f}, old_string: \"\\r\\n\", new_string: \" edited\\r\\n\"}}\n")
        })
        .collect();
    let run = repo.apply(&patch, &["--commit", "-m", "edited"]);
    run.assert_code(0);
    assert_eq!(repo.git(&["show", "HEAD:sub/a.txt"]), "two edited\n");
    assert_eq!(repo.git(&["show", "HEAD:sub/deep/c.cfg"]), "three edited\n");
    assert_eq!(repo.git(&["show", "HEAD:top.md"]), "one edited\n");
    // No attribute for it: stored as it is, CRLF.
    assert_eq!(repo.git(&["show", "HEAD:other/b.txt"]), "four edited\r\n");
    let mut add = vec!["add", "--"];
    add.extend(files);
    repo.git(&add);
    assert_eq!(repo.git(&["diff", "--cached", "--name-only"]), "");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        " D sub/.gitattributes\n D sub/deep/.gitattributes\n"
    );
    assert!(git_try(repo.path(), &["fsck", "--strict"]).0);
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

/// `attr.tree` (git 2.42) points git's attributes at a tree instead of the working tree and the
/// index; `git add` follows it, and so does the commit.
#[test]
fn the_attributes_of_attr_tree_are_followed() {
    let repo = TestRepo::new()
        .file(".gitattributes", "*.txt text eol=crlf\n")
        .file("a.txt", "alpha\r\n")
        .commit();
    let with = repo.git(&["rev-parse", "HEAD"]);
    repo.git(&["rm", "-q", ".gitattributes"]);
    repo.git(&["commit", "-qm", "no attributes"]);
    repo.git(&["config", "attr.tree", with.trim()]);
    let run = repo.apply(
        "- {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n",
        &["--commit", "-m", "upper"],
    );
    run.assert_code(0);
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "ALPHA\n");
    assert_clean(&repo);
}

/// With the git folder apart from the working tree (`GIT_DIR` and `GIT_WORK_TREE`, as inside
/// some hooks and tools), the lookup without the index still reads this working tree's
/// attributes: the second handle is opened by the git folder and given the working tree.
#[test]
fn attributes_are_read_without_the_index_when_the_git_folder_is_elsewhere() {
    let repo = TestRepo::new()
        .file(".gitattributes", "*.txt text eol=crlf\n")
        .file("a.txt", "alpha\r\nsecond\r\n")
        .commit();
    let store = tempfile::tempdir().expect("tempdir");
    let git_dir = store.path().join("store.git");
    std::fs::rename(repo.path().join(".git"), &git_dir).expect("move .git");
    let (gd, wt) = (
        git_dir.to_str().expect("utf8"),
        repo.path().to_str().expect("utf8"),
    );
    let run = repo.apply_env(
        "- {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n",
        &["--commit"],
        &[
            ("PATCHGATE_TIMINGS", "1"),
            ("GIT_DIR", gd),
            ("GIT_WORK_TREE", wt),
        ],
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains("attributes read without the index"),
        "{}",
        run.stderr
    );
    let git = |args: &[&str]| {
        let mut all = vec!["--git-dir", gd, "--work-tree", wt];
        all.extend_from_slice(args);
        repo.git(&all)
    };
    assert_eq!(git(&["show", "HEAD:a.txt"]), "ALPHA\nsecond\n");
    assert_eq!(git(&["status", "--porcelain"]), "");
}

#[test]
fn core_autocrlf_without_attributes_is_honoured_too() {
    let repo = TestRepo::new();
    repo.git(&["config", "core.autocrlf", "true"]);
    let repo = repo.file("a.txt", "alpha\r\nsecond\r\n").commit();
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "alpha\nsecond\n");
    repo.apply(
        "- {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n",
        &["--commit"],
    )
    .assert_code(0);
    assert_eq!(repo.read("a.txt"), b"ALPHA\r\nsecond\r\n");
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "ALPHA\nsecond\n");
    assert_clean(&repo);
}

/// A repository whose `*.cfg` files go through a clean filter that scrubs `token=` values (what
/// secret scrubbers do), with the secret in the working tree only.
fn scrubbed_repo() -> TestRepo {
    let repo = TestRepo::new().file(".gitattributes", "*.cfg filter=scrub\n");
    repo.git(&[
        "config",
        "filter.scrub.clean",
        "sed -e 's/^token=.*/token=REDACTED/'",
    ]);
    repo.git(&["config", "filter.scrub.smudge", "cat"]);
    repo.git(&["config", "filter.scrub.required", "true"]);
    let repo = repo.file("app.cfg", "name=app\ntoken=SECRET\n").commit();
    assert_eq!(
        repo.git(&["show", "HEAD:app.cfg"]),
        "name=app\ntoken=REDACTED\n"
    );
    repo
}

#[test]
fn a_clean_filter_runs_before_the_commit_and_the_secret_stays_out_of_it() {
    let repo = scrubbed_repo();
    let run = repo.apply(
        "- {file_path: app.cfg, old_string: name=app, new_string: name=web}\n",
        &["--commit", "-m", "rename"],
    );
    run.assert_code(0);
    assert_eq!(repo.read_str("app.cfg"), "name=web\ntoken=SECRET\n");
    assert_eq!(
        repo.git(&["show", "HEAD:app.cfg"]),
        "name=web\ntoken=REDACTED\n"
    );
    let history = repo.git(&["log", "-p", "--format=", "HEAD"]);
    assert!(!history.contains("SECRET"), "{history}");
    assert_clean(&repo);

    // Undo recognises what it committed (the filtered blob) and reverts it the same way.
    let run = repo.run(&["undo", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(repo.read_str("app.cfg"), "name=app\ntoken=SECRET\n");
    assert_eq!(
        repo.git(&["show", "HEAD:app.cfg"]),
        "name=app\ntoken=REDACTED\n"
    );
    assert_clean(&repo);
}

#[test]
fn branch_mode_runs_the_clean_filter_too() {
    let repo = scrubbed_repo();
    let mut before = repo.snapshot();
    before.remove("refs");
    let run = repo.apply(
        "- {file_path: app.cfg, old_string: name=app, new_string: \"name=app\\ntoken=LEAKED\"}\n",
        &["--branch", "bot/cfg"],
    );
    run.assert_code(0);
    assert_eq!(
        repo.git(&["show", "bot/cfg:app.cfg"]),
        "name=app\ntoken=REDACTED\ntoken=REDACTED\n"
    );
    let mut after = repo.snapshot();
    after.remove("refs");
    assert_eq!(after, before, "working tree, index and HEAD untouched");
}

#[test]
fn a_failing_clean_filter_stops_the_commit_and_changes_nothing() {
    let repo = scrubbed_repo();
    repo.git(&["config", "filter.scrub.clean", "false"]);
    let before = repo.snapshot();
    let run = repo.apply(
        "- {file_path: app.cfg, old_string: name=app, new_string: name=web}\n",
        &["--commit"],
    );
    run.assert_code(4);
    let json = run.json();
    let message = json["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("app.cfg"), "{json:#}");
    assert_eq!(repo.snapshot(), before);
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn an_lfs_tracked_file_is_committed_as_its_pointer() {
    if !require("git-lfs") {
        return;
    }
    let repo = TestRepo::new();
    repo.git(&["lfs", "install", "--local", "--skip-smudge"]);
    let content = "version 1\npayload \u{1}\u{2}\u{3} binary-ish\n";
    let repo = repo
        .file(
            ".gitattributes",
            "*.bin filter=lfs diff=lfs merge=lfs -text\n",
        )
        .file("data.bin", content)
        .commit();
    assert!(
        repo.git(&["show", "HEAD:data.bin"])
            .starts_with("version https://git-lfs")
    );
    let run = repo.apply(
        "- {file_path: data.bin, old_string: version 1, new_string: version 2}\n",
        &["--commit", "-m", "bump"],
    );
    run.assert_code(0);
    let patched = content.replace("version 1", "version 2");
    assert_eq!(repo.read_str("data.bin"), patched);
    // HEAD holds the pointer to the new content, not the content, and the object is stored.
    let pointer = repo.git(&["show", "HEAD:data.bin"]);
    let oid = crate::harness::sha256_hex(patched.as_bytes());
    assert_eq!(
        pointer,
        format!(
            "version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {}\n",
            patched.len()
        )
    );
    let stored = repo
        .path()
        .join(".git/lfs/objects")
        .join(&oid[..2])
        .join(&oid[2..4])
        .join(&oid);
    assert_eq!(
        std::fs::read_to_string(stored).expect("lfs object"),
        patched
    );
    assert_clean(&repo);
}

#[test]
fn branch_names_are_checked_as_git_check_ref_format_branch_checks_them() {
    let repo = TestRepo::new().file("a.txt", "alpha\n").commit();
    let patch = "- {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n";
    let before = repo.snapshot();
    for name in [
        "HEAD",
        "-x",
        "--force",
        "a..b",
        "@{u}",
        "@{-1}",
        "x@{1}",
        "foo.lock",
        "foo/",
        "/foo",
        "foo//bar",
        "foo bar",
        "foo~1",
        "foo^",
        "foo:bar",
        "foo?",
        "foo*",
        "foo[x",
        "foo\\bar",
        ".foo",
        "foo/.bar",
        "x.",
        "tab\there",
    ] {
        let (git_ok, _) = git_try(repo.path(), &["check-ref-format", "--branch", name]);
        assert!(!git_ok, "git takes `{name}`");
        let run = repo.apply(patch, &[&format!("--branch={name}")]);
        run.assert_code(3);
        let json = run.json();
        assert_eq!(json["error"]["kind"], "usage", "{name}: {json:#}");
        assert!(
            json["error"]["help"]
                .as_str()
                .is_some_and(|h| h.contains("check-ref-format")),
            "{name}: {json:#}"
        );
        assert_eq!(repo.snapshot(), before, "{name}: nothing changed");
    }
    // `refs/heads/HEAD` does not sneak the reserved name in either.
    repo.apply(patch, &["--branch=refs/heads/HEAD"])
        .assert_code(3);
    for name in [
        "bot/fixups",
        "feature/x-1",
        "a.b",
        "ü",
        "foo@bar",
        "v1.2",
        "@",
    ] {
        let (git_ok, _) = git_try(repo.path(), &["check-ref-format", "--branch", name]);
        assert!(git_ok, "git refuses `{name}`");
        repo.apply(patch, &["--branch", name]).assert_code(0);
        assert_eq!(
            repo.git(&["show", &format!("refs/heads/{name}:a.txt")]),
            "ALPHA\n"
        );
    }
    assert!(!repo.has_ref("refs/heads/HEAD"), "no branch named HEAD");
}
