//! The pre-commit hook of `.pre-commit-hooks.yaml`, run by the real `pre-commit` (pinned in
//! scripts/install-checkers) with `try-repo` against a temporary repository whose project uses
//! ruff: a staged violation blocks, unstaged work is never touched, a clean commit passes.
//!
//! `try-repo` clones this repository and `cargo install`s it (its `rust` language), a release
//! build. To keep that affordable the test points `try-repo` at a snapshot of the source tree as
//! it is on disk (uncommitted changes included, so the code under test is what gets built), with a
//! stable `CARGO_TARGET_DIR` under target/ so the dependencies are built once, optimisation off
//! (the hook's behaviour is under test, not its speed), and `CARGO_NET_OFFLINE=true`: the crates
//! are in cargo's cache, since this test binary was built from them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::checks::require_all;
use crate::harness::{Run, TestRepo, files_of};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A git repository holding the files of this source tree as they are on disk (tracked and
/// untracked-not-ignored), committed as one snapshot.
fn snapshot_source() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(ROOT)
        .output()
        .expect("git ls-files");
    assert!(listed.status.success(), "git ls-files failed");
    for rel in listed.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rel = Path::new(std::str::from_utf8(rel).expect("utf-8 path"));
        let src = Path::new(ROOT).join(rel);
        let Ok(md) = std::fs::symlink_metadata(&src) else {
            continue; // deleted on disk, not yet in git: the snapshot is what is on disk
        };
        let dst = dir.path().join(rel);
        std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
        if md.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).expect("link"), &dst)
                .expect("symlink");
        } else if md.is_file() {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .status()
            .expect("git")
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "--no-verify", "-m", "snapshot"]);
    dir
}

/// `pre-commit try-repo <source> patchgate-check` in `repo`, timed on stderr.
fn try_repo(repo: &Path, source: &Path, what: &str) -> Run {
    let target: PathBuf = Path::new(ROOT).join("target/pre-commit-install");
    let started = Instant::now();
    let out = Command::new("pre-commit")
        .args([
            "try-repo",
            source.to_str().expect("utf-8"),
            "patchgate-check",
        ])
        .arg("--verbose")
        .current_dir(repo)
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env(
            "PRE_COMMIT_HOME",
            Path::new(ROOT).join("target/pre-commit-home"),
        )
        .env("NO_COLOR", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null())
        .output()
        .expect("pre-commit runs");
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "pre-commit try-repo ({what}): {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Run::from(out)
}

#[test]
fn precommit_hook_blocks_a_staged_violation_keeps_unstaged_work_and_passes_a_clean_commit() {
    if !require_all(&["pre-commit", "ruff", "cargo"]) {
        return;
    }
    let source = snapshot_source();
    let repo = TestRepo::new()
        .file("pyproject.toml", "[tool.ruff]\nline-length = 100\n")
        .file("app.py", "import os\n\nprint(os.name)\n")
        .file("other.py", "VALUE = 1\n")
        .commit();

    // Staged: an unused import (F401). Unstaged on top: an edit of the same file that uses the
    // import (so a verdict on the working tree would pass: only the staged content can fail), an
    // edit of another tracked file, and an untracked file.
    repo.write("app.py", "import os\nimport sys\n\nprint(os.name)\n");
    repo.git(&["add", "app.py"]);
    repo.write(
        "app.py",
        "import os\nimport sys\n\nprint(os.name)\nprint(sys.argv)  # unstaged\n",
    );
    repo.write("other.py", "VALUE = 2  # unstaged\n");
    repo.write("notes.txt", "untracked\n");
    let tree_before = files_of(repo.path());
    let index_before = repo.git(&["diff", "--cached"]);

    let r = try_repo(repo.path(), source.path(), "staged violation");
    assert_ne!(r.code, 0, "a staged violation must block:\n{}", r.stdout);
    assert!(
        r.stdout.contains("F401") && r.stdout.contains("sys"),
        "the finding is in the output:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(r.stdout.contains("patchgate check"), "{}", r.stdout);
    assert_eq!(
        files_of(repo.path()),
        tree_before,
        "the working tree, unstaged edits included, is byte-identical"
    );
    assert_eq!(repo.git(&["diff", "--cached"]), index_before, "the index");

    // A clean staged version, with an unstaged edit on top that would fail on its own.
    repo.write("app.py", "import os\n\nprint(os.name, 1)\n");
    repo.git(&["add", "app.py"]);
    repo.write("app.py", "import os\nimport json\n\nprint(os.name, 1)\n");
    let tree_before = files_of(repo.path());
    let r = try_repo(repo.path(), source.path(), "clean commit");
    assert_eq!(
        r.code, 0,
        "a clean staged state passes although an unstaged edit would not:\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(r.stdout.contains("Passed"), "{}", r.stdout);
    assert_eq!(files_of(repo.path()), tree_before);
}
