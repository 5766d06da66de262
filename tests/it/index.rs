//! The index after `--commit`: written directly in the common case, and then byte for byte what
//! `git update-index` writes for the same files from the same index; left to git otherwise. git
//! (the CLI) is the witness: it rewrites the index from the saved old one, and `git status`,
//! `git diff --cached` and `git fsck` read the result.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::harness::{BIN, Run, TestRepo, git_try};

const PATCH: &str = "message: two folders\nedits:\n  - {file_path: src/a/one.txt, old_string: one, new_string: ONE}\n  - {file_path: src/b/deep/three.txt, old_string: three, new_string: THREE}\n";
const PATHS: &[&str] = &["src/a/one.txt", "src/b/deep/three.txt"];

/// Folders several levels deep (a cache tree with subtrees), names sharing prefixes (what
/// version 4 compresses), an unstaged change, a staged change and an untracked file elsewhere.
fn repo() -> TestRepo {
    let repo = TestRepo::new()
        .file("src/a/one.txt", "one\n")
        .file("src/a/one.txt.orig", "one, old\n")
        .file("src/a/two.txt", "two\n")
        .file("src/b/deep/three.txt", "three\n")
        .file("src/b/deep/four.txt", "four\n")
        .file("src/c.txt", "c\n")
        .file("docs/readme.md", "readme\n")
        .file("top.txt", "top\n")
        .commit();
    repo.write("src/a/two.txt", "two, unstaged\n");
    repo.write("src/c.txt", "c, staged\n");
    repo.git(&["add", "src/c.txt"]);
    repo.write("notes.txt", "untracked\n");
    repo
}

/// `patchgate apply --commit` with its phase marks on stderr.
fn commit(repo: &TestRepo, patch: &str, env: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("p.yaml");
    std::fs::write(&file, patch).expect("patch");
    let mut cmd = Command::new(BIN);
    cmd.args(["apply", file.to_str().expect("utf8"), "--commit"])
        .args(["--checks", "none", "--format", "json"])
        .current_dir(repo.path())
        .env("PATCHGATE_TIMINGS", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().expect("patchgate runs"))
}

fn index_of(repo: &TestRepo) -> Vec<u8> {
    std::fs::read(repo.path().join(".git/index")).expect("index")
}

/// What git says about the index: every entry with its stat data, and the status.
fn described(repo: &TestRepo) -> String {
    format!(
        "{}\n{}",
        repo.git(&["ls-files", "--stage", "--debug"]),
        repo.git(&["status", "--porcelain"])
    )
}

/// Applies `patch` with `--commit` and checks that the index was written directly, or left to
/// git for the reason `declined` names, then that git, starting again from the old index, writes the same bytes
/// (`byte_for_byte`; else the same entries) for the same paths, and that git reads the result
/// as clean for them.
fn same_as_git(
    repo: &TestRepo,
    patch: &str,
    paths: &[&str],
    declined: Option<&str>,
    byte_for_byte: bool,
) {
    let direct = declined.is_none();
    let before = index_of(repo);
    // Its time too: git decides which entries are racily clean by it.
    let index_path = repo.path().join(".git/index");
    let before_time = std::fs::metadata(&index_path)
        .and_then(|m| m.modified())
        .expect("index time");
    let run = commit(repo, patch, &[]);
    run.assert_code(0);
    assert_eq!(
        run.stderr.contains("index: written directly"),
        direct,
        "direct write expected: {direct}; stderr:\n{}",
        run.stderr
    );
    if let Some(why) = declined {
        let mark = format!("left to git update-index: {why}");
        assert!(run.stderr.contains(&mark), "{}", run.stderr);
    }
    let ours = index_of(repo);
    let ours_described = described(repo);
    // The patched files are clean in every sense, and the repository is whole.
    let status = repo.git(&["status", "--porcelain", "--"]);
    for p in paths {
        assert!(!status.contains(p), "{p} not clean:\n{status}");
    }
    let (ok, out) = git_try(
        repo.path(),
        &["diff", "--cached", "--quiet", "--", "src/a", "src/b"],
    );
    assert!(ok, "staged difference left: {out}");
    let (ok, out) = git_try(repo.path(), &["fsck", "--no-progress"]);
    assert!(ok, "fsck: {out}");

    // git from the same old index, on the same files.
    std::fs::write(&index_path, &before).expect("restore the old index");
    std::fs::File::options()
        .write(true)
        .open(&index_path)
        .and_then(|f| f.set_modified(before_time))
        .expect("restore the old index's time");
    let mut args = vec!["update-index", "--add", "--remove", "--"];
    args.extend_from_slice(paths);
    repo.git(&args);
    let gits = index_of(repo);
    let gits_described = described(repo);
    assert_eq!(
        ours_described, gits_described,
        "git reads the two indexes differently"
    );
    if byte_for_byte {
        assert!(ours == gits, "the indexes differ in their bytes");
    }
}

#[test]
fn version_2_with_a_cache_tree_is_written_directly_as_git_writes_it() {
    let repo = repo();
    assert_eq!(&index_of(&repo)[4..8], &[0, 0, 0, 2]);
    assert!(index_of(&repo).windows(4).any(|w| w == b"TREE"));
    same_as_git(&repo, PATCH, PATHS, None, true);
}

#[test]
fn version_3_with_intent_to_add_and_skip_worktree_entries_elsewhere() {
    let repo = repo();
    repo.write("later.txt", "later\n");
    repo.git(&["add", "--intent-to-add", "later.txt"]);
    repo.git(&["update-index", "--skip-worktree", "docs/readme.md"]);
    assert_eq!(&index_of(&repo)[4..8], &[0, 0, 0, 3]);
    same_as_git(&repo, PATCH, PATHS, None, true);
}

#[test]
fn version_4_names_are_walked_and_kept() {
    let repo = repo();
    repo.git(&["update-index", "--index-version", "4"]);
    assert_eq!(&index_of(&repo)[4..8], &[0, 0, 0, 4]);
    same_as_git(&repo, PATCH, PATHS, None, true);
}

#[test]
fn skip_hash_and_the_untracked_cache_are_kept() {
    let repo = repo();
    repo.git(&["config", "index.skipHash", "true"]);
    repo.git(&["config", "core.untrackedCache", "true"]);
    repo.git(&["status", "--porcelain"]);
    repo.git(&["update-index", "--force-write-index"]);
    let index = index_of(&repo);
    assert_eq!(
        &index[index.len() - 20..],
        &[0u8; 20],
        "git skipped the hash"
    );
    assert!(index.windows(4).any(|w| w == b"UNTR"));
    same_as_git(&repo, PATCH, PATHS, None, true);
    let index = index_of(&repo);
    assert_eq!(&index[index.len() - 20..], &[0u8; 20]);
}

/// git checks an index's trailing hash only in `git fsck`: `git update-index` rewrites an index
/// whose hash is wrong, with the right one, and so does the direct write (which once hashed the
/// whole old index to refuse it).
#[test]
fn an_old_index_whose_hash_is_wrong_is_rewritten_with_the_right_one() {
    let repo = repo();
    let path = repo.path().join(".git/index");
    let mut index = index_of(&repo);
    let at = index.len() - 20;
    index[at] ^= 0xff;
    std::fs::write(&path, &index).expect("write");
    let (ok, _) = git_try(repo.path(), &["fsck", "--no-progress", "--no-dangling"]);
    assert!(!ok, "git fsck finds the old index's hash wrong");
    same_as_git(&repo, PATCH, PATHS, None, true);
    let (ok, out) = git_try(repo.path(), &["fsck", "--no-progress", "--no-dangling"]);
    assert!(ok, "git fsck reads the new index's hash as right: {out}");
}

#[test]
fn feature_many_files_is_followed() {
    let repo = repo();
    repo.git(&["config", "feature.manyFiles", "true"]);
    // git writes version 4 for a new index only: start one.
    std::fs::remove_file(repo.path().join(".git/index")).expect("rm index");
    repo.git(&["reset", "-q"]);
    repo.git(&["add", "src/c.txt"]);
    repo.git(&["status", "--porcelain"]);
    assert_eq!(&index_of(&repo)[4..8], &[0, 0, 0, 4]);
    same_as_git(&repo, PATCH, PATHS, None, true);
}

/// A racily clean entry elsewhere (its file's time not older than the index's) whose content
/// changed with the same size and time: git would smudge it while writing, so git writes.
#[test]
fn a_racily_clean_entry_whose_content_changed_is_left_to_git() {
    let repo = repo();
    let top = repo.path().join("top.txt");
    let recorded = std::fs::metadata(&top).expect("stat");
    repo.write("top.txt", "TOP\n");
    let set_times = |path: &Path, secs: &str| {
        let out = Command::new("touch")
            .args(["-m", "-d", secs])
            .arg(path)
            .output()
            .expect("touch");
        assert!(out.status.success());
    };
    use std::os::unix::fs::MetadataExt;
    let mtime = format!("@{}", recorded.mtime());
    set_times(&top, &mtime);
    set_times(&repo.path().join(".git/index"), &mtime);
    same_as_git(
        &repo,
        PATCH,
        PATHS,
        Some("a racily clean entry whose content changed"),
        true,
    );
    let status = repo.git(&["status", "--porcelain", "top.txt"]);
    assert_eq!(status, " M top.txt\n", "the changed file is seen");
}

/// The same with the content unchanged: nothing to smudge, the write is direct.
#[test]
fn a_racily_clean_entry_that_did_not_change_is_kept() {
    let repo = repo();
    use std::os::unix::fs::MetadataExt;
    let recorded = std::fs::metadata(repo.path().join("top.txt")).expect("stat");
    let out = Command::new("touch")
        .args(["-m", "-d", &format!("@{}", recorded.mtime())])
        .arg(repo.path().join(".git/index"))
        .output()
        .expect("touch");
    assert!(out.status.success());
    same_as_git(&repo, PATCH, PATHS, None, true);
}

#[test]
fn a_split_index_is_left_to_git() {
    let repo = repo();
    repo.git(&["config", "core.splitIndex", "true"]);
    repo.git(&["update-index", "--split-index"]);
    same_as_git(
        &repo,
        PATCH,
        PATHS,
        Some("the configuration changes the index's form"),
        false,
    );
}

#[test]
fn a_sparse_index_is_left_to_git() {
    let repo = repo();
    repo.git(&["sparse-checkout", "set", "--cone", "--sparse-index", "src"]);
    same_as_git(
        &repo,
        PATCH,
        PATHS,
        Some("the configuration changes the index's form"),
        true,
    );
}

#[test]
fn an_added_file_is_left_to_git() {
    let repo = repo();
    let patch =
        format!("{PATCH}  - {{file_path: src/new.txt, create: true, new_string: \"new\\n\"}}\n");
    let mut paths = PATHS.to_vec();
    paths.push("src/new.txt");
    same_as_git(
        &repo,
        &patch,
        &paths,
        Some("a file added, deleted or not a regular file"),
        true,
    );
}

/// Killed after the new index is written and synced but before it is renamed into place: git's
/// lock is left, as the same inode as a temp file of patchgate's, and `recover` finishes the
/// index and removes both.
#[test]
fn a_kill_while_the_index_is_locked_is_recovered() {
    let repo = repo();
    let run = commit(
        &repo,
        PATCH,
        &[("PATCHGATE_FAULT_ABORT_AT", "index-written")],
    );
    assert_ne!(run.code, 0, "killed: {}", run.stderr);
    assert!(repo.path().join(".git/index.lock").exists());
    repo.run(&["recover"]).assert_code(0);
    assert_eq!(repo.leftovers(), Vec::<String>::new());
    let status = repo.git(&["status", "--porcelain"]);
    for p in PATHS {
        assert!(!status.contains(p), "{p} not clean:\n{status}");
    }
    assert_eq!(repo.read_str("src/a/one.txt"), "ONE\n");
}

/// A lock someone else holds is never taken over: the run waits for it like git, then reports.
#[test]
fn an_index_lock_of_gits_own_is_not_touched() {
    let repo = repo();
    let before = index_of(&repo);
    // After the commit's switch: the lock appears between the check at the start and the index
    // step, as a concurrent git command's would.
    let scratch = tempfile::tempdir().expect("tempdir");
    let resume = scratch.path().join("go");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("p.yaml");
    std::fs::write(&file, PATCH).expect("patch");
    let child = Command::new(BIN)
        .args([
            "apply",
            file.to_str().expect("utf8"),
            "--commit",
            "--checks",
            "none",
        ])
        .args(["--format", "json"])
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_PAUSE_AT", "after-cas")
        .env("PATCHGATE_FAULT_RESUME", &resume)
        .env("PATCHGATE_TIMINGS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let lock = repo.path().join(".git/index.lock");
    for _ in 0..500 {
        if repo
            .path()
            .join(".git/patchgate/txn")
            .read_dir()
            .is_ok_and(|mut d| d.next().is_some() && repo.read_str("src/a/one.txt") == "ONE\n")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    std::fs::write(&lock, b"git's").expect("lock");
    std::fs::write(&resume, "").expect("resume");
    let run = Run::from(child.wait_with_output().expect("wait"));
    assert!(
        run.stderr
            .contains("left to git update-index: index.lock is held"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("could not be updated"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert_eq!(std::fs::read(&lock).expect("lock kept"), b"git's");
    assert_eq!(index_of(&repo), before, "the index is untouched");
    std::fs::remove_file(&lock).expect("unlock");
    repo.run(&["recover"]).assert_code(0);
    let status = repo.git(&["status", "--porcelain"]);
    assert!(!status.contains("one.txt"), "{status}");
}
