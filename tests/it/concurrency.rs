//! Another process writing the same files while patchgate applies: detected, and nothing changed.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{BIN, TestRepo, files_of};

const PATCH: &str = "- {file_path: a.txt, old_string: a1, new_string: A1}\n- {file_path: b.txt, old_string: b1, new_string: B1}\n";

/// Starts `patchgate apply`, paused at `point`; returns the child and the resume file.
fn start_paused(
    repo: &TestRepo,
    point: &str,
) -> (std::process::Child, std::path::PathBuf, tempfile::TempDir) {
    start_paused_with(repo, point, &[])
}

fn start_paused_with(
    repo: &TestRepo,
    point: &str,
    extra: &[&str],
) -> (std::process::Child, std::path::PathBuf, tempfile::TempDir) {
    let mut args = vec!["--checks", "none"];
    args.extend_from_slice(extra);
    spawn_apply(repo, PATCH, &args, Some(point))
}

/// Starts `patchgate apply PATCH --format json ARGS`, paused at `point` if given.
fn spawn_apply(
    repo: &TestRepo,
    patch_text: &str,
    args: &[&str],
    point: Option<&str>,
) -> (std::process::Child, std::path::PathBuf, tempfile::TempDir) {
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch = scratch.path().join("p.yaml");
    std::fs::write(&patch, patch_text).expect("patch");
    let resume = scratch.path().join("resume");
    let mut cmd = Command::new(BIN);
    cmd.args(["apply", patch.to_str().expect("utf8"), "--format", "json"])
        .args(args)
        .current_dir(repo.path());
    if let Some(point) = point {
        cmd.env("PATCHGATE_FAULT_PAUSE_AT", point)
            .env("PATCHGATE_FAULT_RESUME", &resume);
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    (child, resume, scratch)
}

/// Waits for the child's `paused at` line on stderr (bounded, so a broken build fails instead of
/// hanging).
fn wait_paused(child: &mut std::process::Child) -> std::process::ChildStderr {
    use std::io::BufRead;
    let stderr = child.stderr.take().expect("stderr");
    let mut reader = std::io::BufReader::new(stderr);
    let start = Instant::now();
    let mut line = String::new();
    while start.elapsed() < Duration::from_secs(30) {
        line.clear();
        if reader.read_line(&mut line).expect("read") == 0 {
            panic!("patchgate exited before pausing");
        }
        if line.contains("paused at") {
            return reader.into_inner();
        }
    }
    panic!("patchgate did not pause");
}

fn finish(child: std::process::Child, resume: &std::path::Path) -> (i32, serde_json::Value) {
    std::fs::write(resume, "").expect("resume");
    let out = child.wait_with_output().expect("wait");
    let json = serde_json::from_slice(&out.stdout).expect("json report");
    (out.status.code().unwrap_or(-1), json)
}

fn repo() -> TestRepo {
    TestRepo::new()
        .file("a.txt", "a1\n")
        .file("b.txt", "b1\n")
        .commit()
}

#[test]
fn a_file_changed_between_plan_and_write_back_aborts_with_exit_4() {
    let repo = repo();
    let (mut child, resume, _scratch) = start_paused(&repo, "before-verify");
    let _stderr = wait_paused(&mut child);
    repo.write("b.txt", "someone else\n");
    let (code, json) = finish(child, &resume);
    assert_eq!(code, 4, "{json}");
    assert_eq!(json["error"]["kind"], "concurrent_modification");
    assert_eq!(
        repo.read_str("a.txt"),
        "a1\n",
        "nothing of the patch was written"
    );
    assert_eq!(
        repo.read_str("b.txt"),
        "someone else\n",
        "the other writer's content is kept"
    );
}

#[test]
fn a_file_changed_during_the_switch_rolls_back_what_was_already_replaced() {
    let repo = repo();
    let (mut child, resume, _scratch) = start_paused(&repo, "before-switch");
    let _stderr = wait_paused(&mut child);
    // a.txt is switched first; b.txt changes after it was verified but before its own switch.
    repo.write("b.txt", "someone else\n");
    let (code, json) = finish(child, &resume);
    assert_eq!(code, 4, "{json}");
    assert_eq!(repo.read_str("a.txt"), "a1\n", "a.txt was put back");
    assert_eq!(repo.read_str("b.txt"), "someone else\n");
    let leftovers: Vec<String> = files_of(repo.path())
        .into_keys()
        .filter(|k| k.contains(".patchgate-"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

/// Writes `content` (of the file's size) to `path` and puts its modification time back: a writer
/// that hides from a check of size and mtime, not from one of the change time.
fn write_hiding_mtime(path: &std::path::Path, content: &str) {
    let mtime = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::fs::write(path, content).expect("same-size write");
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(mtime))
        .expect("mtime put back");
}

/// A writer that keeps the size and puts the modification time back is caught wherever it
/// writes: the files' stamps were settled (changed more than a clock tick before the run), so the
/// write-back trusts a stamp over a read, and the write moved the change time, which no one can
/// set back. Between the plan and the write-back nothing is written at all (a.txt keeps its
/// inode); during the switch, a.txt (already replaced) is put back.
#[test]
fn a_same_size_write_that_restores_its_mtime_is_caught() {
    use std::os::unix::fs::MetadataExt;
    for (point, a_replaced) in [("before-verify", false), ("before-switch", true)] {
        let repo = repo();
        let inode = |f: &str| std::fs::metadata(repo.path().join(f)).expect("stat").ino();
        let a_inode = inode("a.txt");
        // Held open, the original inode is not freed when a.txt is replaced, so its number cannot
        // be given again to the file a rollback writes (which a file system may do at once).
        let _held = std::fs::File::open(repo.path().join("a.txt")).expect("open a.txt");
        std::thread::sleep(std::time::Duration::from_millis(30));
        let (mut child, resume, _scratch) = start_paused(&repo, point);
        let _stderr = wait_paused(&mut child);
        write_hiding_mtime(&repo.path().join("b.txt"), "bX\n");
        let (code, json) = finish(child, &resume);
        assert_eq!(code, 4, "{point}: {json}");
        assert_eq!(json["error"]["kind"], "concurrent_modification", "{point}");
        assert_eq!(repo.read_str("a.txt"), "a1\n", "{point}: a.txt as it was");
        assert_eq!(
            inode("a.txt") != a_inode,
            a_replaced,
            "{point}: a.txt replaced?"
        );
        assert_eq!(
            repo.read_str("b.txt"),
            "bX\n",
            "{point}: the other writer's content"
        );
    }
}

/// A file written again with the very bytes it had (a save without changes) moves its stamp:
/// the switch then compares its content, finds what was planned, and goes on.
#[test]
fn a_file_saved_unchanged_before_the_switch_does_not_stop_the_patch() {
    let repo = repo();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let (mut child, resume, _scratch) = start_paused(&repo, "before-switch");
    let _stderr = wait_paused(&mut child);
    repo.write("b.txt", "b1\n");
    let (code, json) = finish(child, &resume);
    assert_eq!(code, 0, "{json}");
    assert_eq!(repo.read_str("a.txt"), "A1\n");
    assert_eq!(repo.read_str("b.txt"), "B1\n");
}

#[test]
fn without_interference_the_same_patch_applies() {
    let repo = repo();
    let (mut child, resume, _scratch) = start_paused(&repo, "before-switch");
    let _stderr = wait_paused(&mut child);
    let (code, json) = finish(child, &resume);
    assert_eq!(code, 0, "{json}");
    assert_eq!(repo.read_str("a.txt"), "A1\n");
    assert_eq!(repo.read_str("b.txt"), "B1\n");
}

/// A checker that holds the run until the test lets it go: `started` appears in the repository's
/// `.git` when the checks are running, and they finish once `go` exists there.
const BLOCKING_CHECKER: &str = "[checkers.hold]\ncommand = [\"sh\", \"-c\", \"touch \\\"$0/started\\\"; while [ ! -f \\\"$0/go\\\" ]; do sleep 0.02; done\", \"GITDIR\", \"{files}\"]\nglobs = [\"*.txt\"]\ntimeout = 60\n";

/// Starts a `--commit` whose checks wait for `go`; returns once they are running.
fn start_during_checks(
    repo: &TestRepo,
    patch: &str,
) -> (std::process::Child, tempfile::TempDir, std::path::PathBuf) {
    let git_dir = repo.path().join(".git");
    let (child, _resume, scratch) = spawn_apply(repo, patch, &["--commit"], None);
    let started = git_dir.join("started");
    let t = Instant::now();
    while !started.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the checks never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    (child, scratch, git_dir.join("go"))
}

fn finish_checks(child: std::process::Child, go: &std::path::Path) -> (i32, serde_json::Value) {
    std::fs::write(go, "").expect("go");
    let out = child.wait_with_output().expect("wait");
    let json = serde_json::from_slice(&out.stdout).expect("json report");
    (out.status.code().unwrap_or(-1), json)
}

fn repo_with_blocking_checker() -> TestRepo {
    let repo = TestRepo::new()
        .file("a.txt", "a1\n")
        .file("b.txt", "b1\n")
        .commit();
    let config =
        BLOCKING_CHECKER.replace("GITDIR", &repo.path().join(".git").display().to_string());
    repo.write(".patchgate.toml", config);
    repo.git(&["add", ".patchgate.toml"]);
    repo.git(&["commit", "-qm", "checker"]);
    repo
}

#[test]
fn head_moving_during_the_checks_aborts_a_commit_with_exit_4() {
    let repo = repo_with_blocking_checker();
    let (child, _scratch, go) = start_during_checks(&repo, PATCH);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "someone else"]);
    let moved_head = repo.head();
    let (code, json) = finish_checks(child, &go);
    assert_eq!(code, 4, "{json}");
    assert_eq!(json["error"]["kind"], "ref_moved", "{json}");
    assert_eq!(
        repo.head(),
        moved_head,
        "their commit stands, ours was not made"
    );
    assert_eq!(repo.read_str("a.txt"), "a1\n");
    assert_eq!(repo.read_str("b.txt"), "b1\n");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn a_file_saved_during_the_checks_aborts_with_exit_4() {
    let repo = repo_with_blocking_checker();
    let (child, _scratch, go) = start_during_checks(&repo, PATCH);
    repo.write("b.txt", "someone else\n");
    let (code, json) = finish_checks(child, &go);
    assert_eq!(code, 4, "{json}");
    assert_eq!(json["error"]["kind"], "concurrent_modification", "{json}");
    assert_eq!(
        repo.read_str("a.txt"),
        "a1\n",
        "nothing of the patch was written"
    );
    assert_eq!(repo.read_str("b.txt"), "someone else\n");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn head_moving_after_staging_aborts_a_commit_with_exit_4() {
    let repo = repo();
    let (mut child, resume, _scratch) = start_paused_with(&repo, "staged", &["--commit"]);
    let _stderr = wait_paused(&mut child);
    // Someone commits while patchgate is between staging and switching.
    repo.write("other.txt", "x\n");
    repo.git(&["add", "other.txt"]);
    repo.git(&["commit", "-qm", "someone else"]);
    let moved_head = repo.head();
    let (code, json) = finish(child, &resume);
    assert_eq!(code, 4, "{json}");
    assert_eq!(json["error"]["kind"], "ref_moved");
    assert_eq!(
        repo.head(),
        moved_head,
        "their commit stands, ours was not made"
    );
    assert_eq!(repo.read_str("a.txt"), "a1\n");
    assert_eq!(repo.read_str("b.txt"), "b1\n");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn head_moving_after_write_back_is_caught_by_the_compare_and_swap() {
    let repo = repo();
    // The patch also creates a file in new folders: the undo must take those away too.
    let patch =
        format!("{PATCH}- {{file_path: new/dir/n.txt, create: true, new_string: \"n\\n\"}}\n");
    let (mut child, resume, _scratch) = spawn_apply(
        &repo,
        &patch,
        &["--checks", "none", "--commit"],
        Some("before-cas"),
    );
    let _stderr = wait_paused(&mut child);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "someone else"]);
    let moved_head = repo.head();
    let (code, json) = finish(child, &resume);
    assert_eq!(code, 4, "{json}");
    assert_eq!(json["error"]["kind"], "ref_moved");
    assert_eq!(repo.head(), moved_head);
    assert_eq!(
        repo.read_str("a.txt"),
        "a1\n",
        "the written files were put back"
    );
    assert_eq!(repo.read_str("b.txt"), "b1\n");
    assert!(
        !repo.exists("new"),
        "the folders the switch created were removed"
    );
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn undoing_a_failed_switch_never_overwrites_a_newer_save() {
    let repo = repo();
    let (mut child, resume, _scratch) = start_paused(&repo, "after-switch");
    let _stderr = wait_paused(&mut child);
    // a.txt was switched; an editor saves over it, and over b.txt (not switched yet).
    repo.write("a.txt", "user save a\n");
    repo.write("b.txt", "user save b\n");
    let (code, json) = finish(child, &resume);
    assert_eq!(code, 4, "{json}");
    assert_eq!(json["error"]["kind"], "concurrent_modification");
    assert!(
        json["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("a.txt")),
        "{json}"
    );
    assert_eq!(
        repo.read_str("a.txt"),
        "user save a\n",
        "the newer save survives the undo"
    );
    assert_eq!(repo.read_str("b.txt"), "user save b\n");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn a_cleanup_failure_after_the_switch_is_a_warning_not_an_error() {
    let repo = repo();
    let (mut child, resume, _scratch) = start_paused(&repo, "before-cleanup");
    let stderr = wait_paused(&mut child);
    // The patch has landed; now the pin ref cannot be deleted (its lock is taken).
    let pin = repo.git(&["for-each-ref", "--format=%(refname)", "refs/patchgate/txn/"]);
    let lock = repo
        .path()
        .join(".git")
        .join(format!("{}.lock", pin.trim()));
    std::fs::write(&lock, "").expect("lock");
    std::fs::write(&resume, "").expect("resume");
    let out = child.wait_with_output().expect("wait");
    let mut rest = String::new();
    use std::io::Read;
    let mut stderr = stderr;
    let _ = stderr.read_to_string(&mut rest);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert_eq!(json["status"], "applied");
    assert!(rest.contains("warning"), "{rest}");
    assert_eq!(repo.read_str("a.txt"), "A1\n");
    // The next recovery finishes the cleanup.
    std::fs::remove_file(&lock).expect("unlock");
    repo.run(&["recover"]).assert_code(0);
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

/// 90 files in 3 folders, one edit each: a switch large enough to run on several threads.
fn many_folders() -> (TestRepo, String) {
    many_folders_named(|f| format!("f{f}.txt"))
}

/// [`many_folders`] with the file names `name(f)`.
fn many_folders_named(name: impl Fn(usize) -> String) -> (TestRepo, String) {
    let (folders, per_folder) = (3, 30);
    let mut repo = TestRepo::new();
    let mut patch = String::from("edits:\n");
    for d in 0..folders {
        for f in 0..per_folder {
            let path = format!("d{d}/{}", name(f));
            repo = repo.file(&path, format!("v{f}\n"));
            patch.push_str(&format!(
                "  - file_path: {path}\n    old_string: \"v{f}\\n\"\n    new_string: \"w{f}\\n\"\n"
            ));
        }
    }
    (repo.commit(), patch)
}

/// The working tree's files (not `.git`), with their contents.
fn work_tree(repo: &TestRepo) -> std::collections::BTreeMap<String, Vec<u8>> {
    files_of(repo.path())
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".git/"))
        .collect()
}

/// A large batch over several folders is switched on several threads, a folder's files on one.
/// A file changed just before the switch stops it there, and every file already replaced, in any
/// folder and on any thread, is put back: the tree is as it was, but for the other writer's file.
#[test]
fn a_change_found_during_a_switch_on_several_threads_puts_every_file_back() {
    let (repo, patch) = many_folders();
    let mut want = work_tree(&repo);
    let (mut child, resume, _scratch) =
        spawn_apply(&repo, &patch, &["--checks", "none"], Some("before-switch"));
    let _stderr = wait_paused(&mut child);
    repo.write("d1/f15.txt", "someone else\n");
    let (code, json) = finish(child, &resume);
    assert_eq!(code, 4, "{json}");
    assert_eq!(json["error"]["kind"], "concurrent_modification", "{json}");
    want.insert("d1/f15.txt".into(), b"someone else\n".to_vec());
    assert_eq!(
        work_tree(&repo),
        want,
        "every other file as it was, no temp file left"
    );
}

/// Killed while its threads switch (at the first file replaced, the others part-way), the batch
/// is rolled back whole by `patchgate recover`: every file as it was, no temp file, journal or
/// pin left.
#[test]
fn a_kill_during_a_switch_on_several_threads_is_rolled_back_whole() {
    let (repo, patch) = many_folders();
    let before = work_tree(&repo);
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch_path = scratch.path().join("p.yaml");
    std::fs::write(&patch_path, patch).expect("patch");
    let out = Command::new(BIN)
        .args(["apply", patch_path.to_str().expect("utf8")])
        .args(["--checks", "none", "--format", "json"])
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_ABORT_AT", "after-switch")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), None, "killed, not exited");
    assert_ne!(work_tree(&repo), before, "killed after a file was replaced");
    let rec = crate::harness::run_in(repo.path(), &["recover", "--format", "json"], None);
    rec.assert_code(0);
    assert_eq!(work_tree(&repo), before);
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

/// File names of 255 bytes, the longest Linux allows, in a batch large enough to be switched on
/// several threads: their temp names fit (before, each was 25 bytes over, and
/// the batch stopped: "File name too long"), the batch lands, and a kill with every temp file
/// written leaves nothing `patchgate recover` does not remove.
#[test]
fn files_with_the_longest_names_are_patched_and_their_temp_files_recovered() {
    let long = |f: usize| format!("{f:03}{}", "n".repeat(252));
    let (repo, patch) = many_folders_named(long);
    let before = work_tree(&repo);
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch_path = scratch.path().join("p.yaml");
    std::fs::write(&patch_path, &patch).expect("patch");
    let killed = Command::new(BIN)
        .args(["apply", patch_path.to_str().expect("utf8")])
        .args(["--checks", "none", "--format", "json"])
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_ABORT_AT", "before-switch")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(killed.status.code(), None, "killed, not exited");
    assert!(
        !repo.leftovers().is_empty(),
        "temp files and a journal were left"
    );
    let rec = crate::harness::run_in(repo.path(), &["recover", "--format", "json"], None);
    rec.assert_code(0);
    assert_eq!(work_tree(&repo), before);
    assert_eq!(repo.leftovers(), Vec::<String>::new());

    repo.apply(&patch, &["--checks", "none"]).assert_code(0);
    assert_eq!(repo.read_str(&format!("d2/{}", long(29))), "w29\n");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}
