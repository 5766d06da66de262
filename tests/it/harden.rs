//! patchgate under attack: no write outside the repository under any race or forged state, no
//! leftovers after a killed recovery or a failed apply, and every published file durable.
//!
//! - a folder swapped for a symlink to an outside folder while an apply runs (30 runs): nothing
//!   outside is ever written, nothing is half-written;
//! - `undo` after a folder became a symlink: refused (exit 4), nothing written outside;
//! - each field of a journal and of a history entry forged: `recover`, `undo` and the history's
//!   pruning refuse it, and nothing outside the repository and no branch is touched;
//! - a `recover` killed while restoring, then another: no temp file, no ref left;
//! - an apply failing in a read-only folder: nothing under `refs/patchgate/` or in the tree;
//! - recovery of a journal that says "committed" whose ref did not move: rolled back;
//! - under `strace`: every published file is fsynced before its rename, its folder after.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::harness::{BIN, Run, TestRepo, git_try};

fn patchgate(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().expect("patchgate runs"))
}

fn write_patch(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("p.yaml");
    std::fs::write(&p, text).expect("patch");
    p
}

/// Whether a run died of SIGKILL (a fault point was reached).
fn killed(run: &Run) -> bool {
    run.code == -1
}

// ---- the symlink swap race ---------------------------------------------------------------------

const RACE_FILES: usize = 120;

fn race_repo(outside: &Path) -> TestRepo {
    let mut repo = TestRepo::new().file("top.txt", "top alpha\n");
    for i in 0..RACE_FILES {
        repo = repo.file(&format!("d/f{i:03}.txt"), format!("alpha {i}\n"));
    }
    // The outside folder holds the same names and contents: a write through the symlink would
    // find exactly what the plan expects, and succeed.
    for i in 0..RACE_FILES {
        std::fs::write(outside.join(format!("f{i:03}.txt")), format!("alpha {i}\n")).expect("w");
    }
    repo.commit()
}

fn race_patch() -> String {
    let mut p = String::from("edits:\n");
    p.push_str("  - {file_path: top.txt, old_string: alpha, new_string: ALPHA}\n");
    for i in 0..RACE_FILES {
        p.push_str(&format!(
            "  - {{file_path: d/f{i:03}.txt, old_string: alpha, new_string: ALPHA}}\n"
        ));
    }
    p
}

/// Swaps `repo/d` for a symlink to `outside` and back, as fast as it can, until told to stop;
/// always leaves the real folder in place when it returns.
///
/// Between moving the real folder away and making the symlink, `d` is briefly absent, and the
/// run under test may create a folder `d` right then (write-back makes the missing parent of a
/// file it writes; its temp file goes in, the switch then finds the file missing, rolls back and
/// removes that folder again). The symlink then cannot be made and the real folder cannot be
/// moved back over a folder holding a temp file: it must be put back once that folder is gone.
/// (Moved back only at the next swap, it once stayed aside: the repository's files were all in
/// `d.real` and the check after `recover` found `d/f000.txt` missing.)
fn swapper(
    repo: PathBuf,
    outside: PathBuf,
    stop: Arc<AtomicBool>,
    pace: Duration,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let (d, real) = (repo.join("d"), repo.join("d.real"));
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            if real.exists() {
                put_back(&d, &real);
            } else if std::fs::rename(&d, &real).is_ok() {
                let _ = std::os::unix::fs::symlink(&outside, &d);
                swaps += 1;
                std::thread::sleep(Duration::from_micros(300));
                put_back(&d, &real);
            }
            std::thread::sleep(pace);
        }
        // The run is over: whatever it made at `d` is gone, or an empty folder.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while real.exists() && std::time::Instant::now() < deadline {
            put_back(&d, &real);
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            !real.exists(),
            "the swapper could not put the real folder back"
        );
        swaps
    })
}

/// Moves the real folder back to `d`, removing the symlink (or an empty folder) in its way.
fn put_back(d: &Path, real: &Path) {
    match std::fs::symlink_metadata(d) {
        Ok(m) if m.file_type().is_symlink() => {
            let _ = std::fs::remove_file(d);
        }
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir(d);
        }
        _ => {}
    }
    let _ = std::fs::rename(real, d);
}

/// Runs the apply paused before write-back verifies anything, starts the swapper, and lets the
/// run go on a moment (0–4 ms, by run) later.
fn race_run(
    repo: &TestRepo,
    patch: &Path,
    run: usize,
    start: impl FnOnce() -> std::thread::JoinHandle<usize>,
) -> (Run, std::thread::JoinHandle<usize>) {
    paused_run(repo, patch, "before-verify", 1000 * (run as u64 % 5), start)
}

/// Runs the apply paused at `point`, calls `start`, and resumes the run `delay_us` later.
fn paused_run(
    repo: &TestRepo,
    patch: &Path,
    point: &str,
    delay_us: u64,
    start: impl FnOnce() -> std::thread::JoinHandle<usize>,
) -> (Run, std::thread::JoinHandle<usize>) {
    use std::io::{BufRead, Read};
    let resume = patch.with_file_name("resume");
    let mut child = Command::new(BIN)
        .args([
            "apply",
            patch.to_str().expect("utf8"),
            "--checks",
            "none",
            "--format",
            "json",
        ])
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_PAUSE_AT", point)
        .env("PATCHGATE_FAULT_RESUME", &resume)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while !line.contains("paused at") {
        line.clear();
        if err.read_line(&mut line).expect("read") == 0 {
            break;
        }
    }
    let swap = start();
    std::thread::sleep(Duration::from_micros(delay_us));
    std::fs::write(&resume, "").expect("resume");
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let out = child.wait_with_output().expect("wait");
    let mut r = Run::from(out);
    r.stderr = format!("{line}{}", rest.join().unwrap_or_default());
    (r, swap)
}

/// Every file of `d/` (and top.txt) is in the old state, or every one in the new.
fn race_state(repo: &TestRepo) -> Result<bool, String> {
    let mut olds = 0;
    let mut news = 0;
    for i in 0..RACE_FILES {
        match std::fs::read_to_string(repo.path().join(format!("d/f{i:03}.txt"))).as_deref() {
            Ok(t) if t == format!("alpha {i}\n") => olds += 1,
            Ok(t) if t == format!("ALPHA {i}\n") => news += 1,
            other => return Err(format!("d/f{i:03}.txt holds {other:?}")),
        }
    }
    match repo.read_str("top.txt").as_str() {
        "top alpha\n" => olds += 1,
        "top ALPHA\n" => news += 1,
        other => return Err(format!("top.txt holds {other:?}")),
    }
    match (olds, news) {
        (_, 0) => Ok(false),
        (0, _) => Ok(true),
        _ => Err(format!("{olds} files old and {news} new: half-written")),
    }
}

#[test]
fn a_folder_swapped_for_a_symlink_during_apply_never_leads_outside() {
    let runs = 30;
    let mut escapes = 0;
    let mut codes: BTreeMap<i32, usize> = BTreeMap::new();
    let mut swapped_total = 0;
    for run in 0..runs {
        let outside = tempfile::tempdir().expect("tempdir");
        let repo = race_repo(outside.path());
        let scratch = tempfile::tempdir().expect("tempdir");
        let patch = write_patch(scratch.path(), &race_patch());
        let before_outside = crate::harness::files_of(outside.path());
        let stop = Arc::new(AtomicBool::new(false));
        // Paused after planning, so that the swaps land in the write-back itself (a swap during
        // planning is caught there, as an escaping path: exit 3).
        let (r, swap) = race_run(&repo, &patch, run, || {
            swapper(
                repo.path().to_path_buf(),
                outside.path().to_path_buf(),
                Arc::clone(&stop),
                // Some runs swap back and forth fast, others leave the real folder longer.
                Duration::from_micros([300, 2_000, 8_000][run % 3]),
            )
        });
        stop.store(true, Ordering::Relaxed);
        swapped_total += swap.join().expect("swapper");
        *codes.entry(r.code).or_default() += 1;
        assert!(!r.stderr.contains("panicked"), "run {run}: {}", r.stderr);
        assert!(
            [0, 2, 3, 4].contains(&r.code),
            "run {run}: exit {}\n{}\n{}",
            r.code,
            r.stdout,
            r.stderr
        );
        if crate::harness::files_of(outside.path()) != before_outside {
            escapes += 1;
            continue;
        }
        // A switch stopped half-way keeps its journal when it could not undo everything.
        let rec = patchgate(repo.path(), &["recover", "--format", "json"], &[]);
        rec.assert_code(0);
        let new = race_state(&repo).unwrap_or_else(|e| panic!("run {run} (exit {}): {e}", r.code));
        assert_eq!(
            new,
            r.code == 0,
            "run {run}: exit {} but new state {new}",
            r.code
        );
        assert_eq!(
            repo.leftovers(),
            Vec::<String>::new(),
            "run {run}: leftovers"
        );
        assert!(!repo.exists("d.real"), "run {run}");
    }
    eprintln!(
        "symlink swap race: {runs} runs, {swapped_total} swaps, exit codes {codes:?}, {escapes} wrote outside"
    );
    assert_eq!(escapes, 0, "runs that wrote outside the repository");
    assert!(
        swapped_total > runs,
        "the swapper barely ran: {swapped_total} swaps"
    );
}

/// The same swap, once, at the two moments that matter: before write-back verifies the files,
/// and after the temp files are made in the real folder, just before the first rename.
#[test]
fn a_folder_swapped_for_a_symlink_after_planning_is_exit_4_and_nothing_is_written() {
    for point in ["before-verify", "before-switch"] {
        let outside = tempfile::tempdir().expect("tempdir");
        let repo = race_repo(outside.path());
        let scratch = tempfile::tempdir().expect("tempdir");
        let patch = write_patch(scratch.path(), &race_patch());
        let before_outside = crate::harness::files_of(outside.path());
        let before = repo.snapshot();
        // The swap is complete before the run resumes: a run resumed mid-swap (the folder
        // briefly absent) is refused too, but as a file that vanished, not as a symlink.
        let (r, swap) = paused_run(&repo, &patch, point, 0, || {
            let root = repo.path();
            std::fs::rename(root.join("d"), root.join("d.real")).expect("mv");
            std::os::unix::fs::symlink(outside.path(), root.join("d")).expect("ln");
            std::thread::spawn(|| 1)
        });
        swap.join().expect("swap");
        r.assert_code(4);
        let json = r.json();
        assert_eq!(
            json["error"]["kind"], "concurrent_modification",
            "{point}: {json:#}"
        );
        let msg = json["error"]["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains("changed while patchgate was applying"),
            "{point}: {msg}"
        );
        assert_eq!(
            crate::harness::files_of(outside.path()),
            before_outside,
            "{point}"
        );
        std::fs::remove_file(repo.path().join("d")).expect("rm");
        std::fs::rename(repo.path().join("d.real"), repo.path().join("d")).expect("mv");
        assert_eq!(repo.snapshot(), before, "{point}: the repository changed");
        assert_eq!(repo.leftovers(), Vec::<String>::new(), "{point}");
    }
}

// ---- undo through a swapped folder -------------------------------------------------------------

#[test]
fn undo_through_a_folder_swapped_for_a_symlink_is_refused() {
    let repo = TestRepo::new()
        .file("cfg/app.conf", "port = 1\n")
        .file("cfg/id.pub", "old key\n")
        .commit();
    let r = repo.apply(
        "edits:\n  - {file_path: cfg/app.conf, old_string: port = 1, new_string: port = 2}\n  - {file_path: cfg/id.pub, delete: true}\n  - {file_path: cfg/new.txt, create: true, new_string: \"born\\n\"}\n",
        &["--checks", "none"],
    );
    r.assert_code(0);
    // cfg becomes a symlink to a folder that holds what the patch left: an undo that followed it
    // would find every file as the patch wrote it, and restore id.pub there.
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("app.conf"), "port = 2\n").expect("w");
    std::fs::write(outside.path().join("new.txt"), "born\n").expect("w");
    std::fs::rename(repo.path().join("cfg"), repo.path().join("cfg.real")).expect("mv");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("cfg")).expect("ln");
    let before = crate::harness::files_of(outside.path());
    let u = repo.run(&["undo", "--format", "json"]);
    u.assert_code(4);
    assert_eq!(
        crate::harness::files_of(outside.path()),
        before,
        "written outside"
    );
    assert!(!outside.path().join("id.pub").exists());
    let json = u.json();
    assert_eq!(json["error"]["kind"], "changed_since", "{json:#}");
    // It says why: the path leads through a symlink now (not that the file changed), and what
    // to do.
    let msg = json["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("cfg/app.conf now leads through a symlink, cfg,")
            && !msg.contains("changed since the patch"),
        "{msg}"
    );
    let help = json["error"]["help"].as_str().unwrap_or_default();
    assert!(help.contains("put it back at cfg"), "{help}");
    assert!(
        json["changed_since"].as_array().is_none_or(Vec::is_empty),
        "no file changed: {json:#}"
    );
    let human = repo.run(&["undo"]);
    human.assert_code(4);
    assert!(!human.stdout.contains("changed since:"), "{}", human.stdout);
    // Put back, the undo goes through.
    std::fs::remove_file(repo.path().join("cfg")).expect("rm");
    std::fs::rename(repo.path().join("cfg.real"), repo.path().join("cfg")).expect("mv");
    repo.run(&["undo", "--format", "json"]).assert_code(0);
    assert_eq!(repo.read_str("cfg/id.pub"), "old key\n");
}

// ---- forged state ------------------------------------------------------------------------------

const FORGE_PATCH: &str = "\
edits:
  - {file_path: a.txt, old_string: alpha, new_string: ALPHA}
  - {file_path: e.txt, delete: true}
  - {file_path: n/new.txt, create: true, new_string: \"born\\n\"}
";

/// A repository with a branch `keep` that nothing may touch, next to a folder that stands for
/// "outside the repository".
fn forge_repo() -> (TestRepo, tempfile::TempDir) {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\n")
        .file("e.txt", "doomed\n")
        .commit();
    repo.git(&["branch", "keep"]);
    (repo, tempfile::tempdir().expect("tempdir"))
}

/// What must not change whatever a forged file says: the folder outside, and every branch.
fn untouched(repo: &TestRepo, outside: &Path) -> (BTreeMap<String, Vec<u8>>, String, bool) {
    (
        crate::harness::files_of(outside),
        repo.git(&[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads/",
        ]),
        outside
            .parent()
            .expect("parent")
            .join("forged-escape")
            .exists(),
    )
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json")
}

fn only_json(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// Checks a refusal: exit 4, kind `invalid_state`, the message naming the file and the field.
#[track_caller]
fn assert_refused(run: &Run, file: &Path, field: &str, case: &str) {
    assert_eq!(run.code, 4, "{case}: exit\n{}\n{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["error"]["kind"], "invalid_state", "{case}: {json:#}");
    let msg = json["error"]["message"].as_str().unwrap_or_default();
    let name = file.file_name().expect("name").to_string_lossy();
    assert!(msg.contains(&*name) && msg.contains(field), "{case}: {msg}");
    let help = json["error"]["help"].as_str().unwrap_or_default();
    assert!(help.contains("remove"), "{case}: {help}");
}

/// A journal left by an apply killed after its first file was switched (rolls back).
fn interrupted(repo: &TestRepo) -> PathBuf {
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch = write_patch(scratch.path(), FORGE_PATCH);
    let r = patchgate(
        repo.path(),
        &["apply", patch.to_str().expect("utf8"), "--checks", "none"],
        &[("PATCHGATE_FAULT_ABORT_AT", "after-switch")],
    );
    assert!(killed(&r), "{r:?}");
    only_json(&repo.path().join(".git/patchgate/txn"))
}

#[test]
fn a_forged_journal_is_refused_and_never_acted_on() {
    let escape = |outside: &Path| {
        // `../..` from the repository's files: the folder next to `outside`.
        let _ = outside;
        "../forged-escape".to_string()
    };
    type Forge = fn(&mut Value, &Path, &str);
    let cases: Vec<(&str, &str, Forge)> = vec![
        ("relative escape", "files[", |j, _, esc| {
            j["files"][0]["path"] = esc.into();
            j["phase"] = "staged".into();
        }),
        ("absolute path", "files[", |j, outside, _| {
            j["files"][0]["path"] = outside.join("abs").to_string_lossy().into_owned().into();
            j["phase"] = "staged".into();
        }),
        ("into .git", "files[", |j, _, _| {
            j["files"][0]["path"] = ".git/hooks/pre-commit".into();
            j["phase"] = "staged".into();
        }),
        ("empty component", "files[", |j, _, _| {
            j["files"][0]["path"] = "a//b".into();
        }),
        ("new dir escape", "new_dirs", |j, _, esc| {
            j["new_dirs"] = serde_json::json!([esc]);
            j["phase"] = "staged".into();
        }),
        ("pin ref on a branch", "pin_ref", |j, _, _| {
            j["pin_ref"] = "refs/heads/keep".into();
        }),
        ("branch ref on a worktree journal", "ref", |j, _, _| {
            j["refname"] = "refs/heads/keep".into();
        }),
        ("ref that leaves refs/", "ref", |j, _, _| {
            j["mode"] = "commit".into();
            j["refname"] = "refs/heads/../../../forged-escape".into();
            j["new_commit"] = "0123456789012345678901234567890123456789".into();
        }),
        ("id", "id", |j, _, _| {
            j["id"] = "../../forged".into();
        }),
        ("oid", "oid", |j, _, _| {
            j["files"][0]["new"]["oid"] = "../../x".into();
        }),
        ("workdir elsewhere", "workdir", |j, outside, _| {
            j["workdir"] = outside.to_string_lossy().into_owned().into();
        }),
    ];
    for (case, field, forge) in cases {
        let (repo, outside) = forge_repo();
        let journal = interrupted(&repo);
        let mut j = json_file(&journal);
        forge(&mut j, outside.path(), &escape(outside.path()));
        std::fs::write(&journal, serde_json::to_vec_pretty(&j).expect("json")).expect("w");
        let forged = std::fs::read(&journal).expect("read");
        let before = untouched(&repo, outside.path());
        let r = repo.run(&["recover", "--format", "json"]);
        assert_refused(&r, &journal, field, case);
        // Any run finishes interrupted transactions first: it refuses too.
        let a = repo.apply(
            "- {file_path: a.txt, old_string: keep, new_string: x}\n",
            &[],
        );
        assert_eq!(a.code, 4, "{case}: apply\n{}", a.stdout);
        assert_eq!(untouched(&repo, outside.path()), before, "{case}: touched");
        assert_eq!(
            std::fs::read(&journal).expect("kept"),
            forged,
            "{case}: journal acted on"
        );
        // Removed by hand, as the help says, the next recover cleans up the rest.
        std::fs::remove_file(&journal).expect("rm");
        repo.run(&["recover", "--format", "json"]).assert_code(0);
        assert_eq!(
            untouched(&repo, outside.path()),
            before,
            "{case}: touched after"
        );
        let _ = std::fs::remove_file(outside.path().parent().expect("p").join("forged-escape"));
    }
}

/// A forged `ref.lock` next to the repository: what a forged `refname` would make recovery
/// delete as "our lock".
#[test]
fn a_forged_ref_does_not_delete_a_lock_file_outside() {
    let (repo, _outside) = forge_repo();
    let journal = interrupted(&repo);
    let mut j = json_file(&journal);
    let commit = "0123456789012345678901234567890123456789";
    j["mode"] = "commit".into();
    j["refname"] = "../../forged-lock".into();
    j["new_commit"] = commit.into();
    std::fs::write(&journal, serde_json::to_vec(&j).expect("json")).expect("w");
    let victim = repo.path().parent().expect("p").join("forged-lock.lock");
    std::fs::write(&victim, commit).expect("w");
    let r = repo.run(&["recover", "--format", "json"]);
    assert_refused(&r, &journal, "ref", "lock outside");
    assert!(victim.exists(), "a file outside the repository was deleted");
    std::fs::remove_file(victim).expect("rm");
}

fn history_entry(repo: &TestRepo) -> PathBuf {
    only_json(&repo.path().join(".git/patchgate/history"))
}

#[test]
fn a_forged_history_entry_is_refused_by_undo_and_never_acted_on() {
    type Forge = fn(&mut Value, &Path);
    let cases: Vec<(&str, &str, Forge)> = vec![
        // e.txt was deleted: undo would restore its old content at the forged path.
        ("relative escape", "files[", |e, _| {
            let i = deleted_index(e);
            e["files"][i]["path"] = "../forged-escape".into();
        }),
        ("absolute path", "files[", |e, outside| {
            let i = deleted_index(e);
            e["files"][i]["path"] = outside.join("abs").to_string_lossy().into_owned().into();
        }),
        ("into .git", "files[", |e, _| {
            let i = deleted_index(e);
            e["files"][i]["path"] = ".git/hooks/post-checkout".into();
        }),
        ("move escape", "moves[", |e, _| {
            e["moves"] = serde_json::json!([{"from": "a.txt", "to": "../forged-escape"}]);
        }),
        ("pin on a branch", "pin", |e, _| {
            e["pin"] = "refs/heads/keep".into();
        }),
        ("branch on a worktree entry", "ref", |e, _| {
            e["ref"] = "refs/heads/keep".into();
        }),
        ("commit entry on a tag", "ref", |e, _| {
            e["mode"] = "branch".into();
            e["ref"] = "refs/tags/keep".into();
        }),
        ("patch id", "patch_id", |e, _| {
            e["patch_id"] = "../../x".into();
        }),
        ("undoes", "undoes", |e, _| {
            e["undoes"] = "nope".into();
        }),
        ("commit oid", "commit", |e, _| {
            e["commit"] = "HEAD".into();
        }),
    ];
    for (case, field, forge) in cases {
        let (repo, outside) = forge_repo();
        repo.apply(FORGE_PATCH, &["--checks", "none"])
            .assert_code(0);
        let entry = history_entry(&repo);
        let mut e = json_file(&entry);
        forge(&mut e, outside.path());
        std::fs::write(&entry, serde_json::to_vec_pretty(&e).expect("json")).expect("w");
        let before = untouched(&repo, outside.path());
        let tree_before = repo.snapshot();
        let u = repo.run(&["undo", "--format", "json"]);
        assert_refused(&u, &entry, field, case);
        let l = repo.run(&["undo", "--list", "--format", "json"]);
        assert_eq!(l.code, 4, "{case}: --list");
        assert_eq!(untouched(&repo, outside.path()), before, "{case}: touched");
        assert_eq!(
            repo.snapshot(),
            tree_before,
            "{case}: the repository changed"
        );
        assert!(entry.exists(), "{case}: the entry was acted on");
    }
}

fn deleted_index(e: &Value) -> usize {
    e["files"]
        .as_array()
        .expect("files")
        .iter()
        .position(|f| f["path"] == "e.txt")
        .expect("e.txt in the entry")
}

/// Pruning the history (beyond 50 entries) deletes the oldest entries' pins: a forged oldest
/// entry whose pin names a branch must not make it delete the branch.
#[test]
fn pruning_never_acts_on_a_forged_entry() {
    let (repo, _outside) = forge_repo();
    let dir = repo.path().join(".git/patchgate/history");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let key_prefix = {
        repo.apply(
            "- {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n",
            &["--checks", "none"],
        )
        .assert_code(0);
        let e = json_file(&history_entry(&repo));
        let pin = e["pin"].as_str().expect("pin").to_string();
        pin.rsplit_once('/').expect("prefix").0.to_string()
    };
    let forged = dir.join("1000000000-000000-1.json");
    let entry = |id: &str, pin: &str| {
        serde_json::json!({
            "version": 1, "patch_id": id, "kind": "apply", "undoes": null, "time": 0,
            "mode": "worktree", "ref": null, "commit": null, "parent": null, "message": "old",
            "files": [], "moves": [], "pin": pin
        })
    };
    std::fs::write(
        &forged,
        entry("1000000000-000000-1", "refs/heads/keep").to_string(),
    )
    .expect("w");
    for i in 0..55 {
        let id = format!("1000000001-{i:06}-1");
        let pin = format!("{key_prefix}/{id}");
        std::fs::write(dir.join(format!("{id}.json")), entry(&id, &pin).to_string()).expect("w");
    }
    let keep = repo.git(&["rev-parse", "refs/heads/keep"]);
    repo.apply(
        "- {file_path: a.txt, old_string: ALPHA, new_string: alpha}\n",
        &["--checks", "none"],
    )
    .assert_code(0);
    assert_eq!(
        repo.git(&["rev-parse", "refs/heads/keep"]),
        keep,
        "the branch was deleted"
    );
    assert!(forged.exists(), "the forged entry was acted on");
    let valid = std::fs::read_dir(&dir).expect("dir").count() - 1;
    assert_eq!(valid, 50, "the valid entries are pruned to 50");
}

// ---- no leftovers ------------------------------------------------------------------------------

fn crash_repo() -> TestRepo {
    let mut repo = TestRepo::new();
    for i in 0..12 {
        repo = repo.file(&format!("s/f{i:02}.txt"), format!("alpha {i}\n"));
    }
    repo.commit()
}

fn crash_patch() -> String {
    let mut p = String::from("edits:\n");
    for i in 0..12 {
        p.push_str(&format!(
            "  - {{file_path: s/f{i:02}.txt, old_string: alpha, new_string: ALPHA}}\n"
        ));
    }
    p.push_str("  - {file_path: n/e/w.txt, create: true, new_string: \"born\\n\"}\n");
    p
}

/// The state before `crash_patch`: an apply killed while it switched files has not landed, and
/// rolls back.
fn all_old(repo: &TestRepo) -> bool {
    (0..12).all(|i| repo.read_str(&format!("s/f{i:02}.txt")) == format!("alpha {i}\n"))
        && !repo.path().join("n/e/w.txt").exists()
        && !repo.path().join("n").exists()
}

#[test]
fn a_recover_killed_while_restoring_then_another_leaves_nothing() {
    let mut killed_recovers = 0;
    let points = [
        "recover-before-rename",
        "recover-restored",
        "recover-unpinned",
    ];
    for run in 0..15 {
        let repo = crash_repo();
        let scratch = tempfile::tempdir().expect("tempdir");
        let patch = write_patch(scratch.path(), &crash_patch());
        let r = patchgate(
            repo.path(),
            &["apply", patch.to_str().expect("utf8"), "--checks", "none"],
            &[("PATCHGATE_FAULT_ABORT_AT", "after-switch")],
        );
        assert!(killed(&r), "run {run}: the apply was not killed");
        // The first recover dies while it rewrites the files (at a point, or at a random moment).
        let first = if run < 9 {
            let point = points[run % points.len()];
            let r = patchgate(
                repo.path(),
                &["recover", "--format", "json"],
                &[("PATCHGATE_FAULT_ABORT_AT", point)],
            );
            assert!(
                killed(&r),
                "run {run}: recover never reached {point}: {r:?}"
            );
            r
        } else {
            let mut child = Command::new(BIN)
                .args(["recover", "--format", "json"])
                .current_dir(repo.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("recover");
            std::thread::sleep(Duration::from_millis(2 + 3 * (run as u64 - 9)));
            let _ = child.kill();
            let status = child.wait().expect("wait");
            Run {
                code: status.code().unwrap_or(-1),
                stdout: String::new(),
                stderr: String::new(),
            }
        };
        if killed(&first) {
            killed_recovers += 1;
        }
        patchgate(repo.path(), &["recover", "--format", "json"], &[]).assert_code(0);
        assert_eq!(
            repo.leftovers(),
            Vec::<String>::new(),
            "run {run}: leftovers"
        );
        assert!(all_old(&repo), "run {run}: rolled back");
        let (ok, out) = git_try(repo.path(), &["fsck", "--strict", "--no-progress"]);
        assert!(ok, "run {run}: {out}");
    }
    assert!(killed_recovers >= 9, "{killed_recovers} recovers killed");
}

#[test]
fn a_failed_apply_in_a_read_only_folder_leaves_nothing() {
    let repo = TestRepo::new()
        .file("b.txt", "beta\n")
        .file("ro/a.txt", "alpha\n")
        .commit();
    let before = repo.snapshot();
    let r = apply_with_read_only_folder(
        &repo,
        "ro",
        "edits:\n  - {file_path: b.txt, old_string: beta, new_string: BETA}\n  - {file_path: ro/a.txt, old_string: alpha, new_string: ALPHA}\n  - {file_path: ro/n/new.txt, create: true, new_string: x}\n",
    );
    r.assert_code(4);
    assert!(
        r.stdout.contains("permission") || r.stdout.contains("Permission"),
        "{}",
        r.stdout
    );
    assert_eq!(repo.snapshot(), before, "the repository changed");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
    let refs = repo.path().join(".git/refs/patchgate");
    assert!(
        !refs.exists(),
        "left under refs/patchgate/: {:?}",
        walk(&refs)
    );
}

/// A batch large enough for its temp files to be written on several threads (90 files in three
/// folders), one folder read-only: the run stops with the permission error, and every temp file
/// already written, in any folder and on any thread, is removed; nothing changed.
#[test]
fn a_temp_file_refused_in_one_folder_of_a_large_batch_leaves_nothing_in_any() {
    let mut repo = TestRepo::new();
    let mut patch = String::from("edits:\n");
    for d in 0..3 {
        for f in 0..30 {
            let path = format!("d{d}/f{f}.txt");
            repo = repo.file(&path, format!("v{f}\n"));
            patch.push_str(&format!(
                "  - {{file_path: {path}, old_string: \"v{f}\\n\", new_string: \"w{f}\\n\"}}\n"
            ));
        }
    }
    let repo = repo.commit();
    let before = repo.snapshot();
    let r = apply_with_read_only_folder(&repo, "d2", &patch);
    r.assert_code(4);
    assert!(r.stdout.contains("d2/"), "{}", r.stdout);
    assert_eq!(repo.snapshot(), before, "the repository changed");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

/// Applies `patch` in `repo` (`--checks none`, JSON) with its folder `ro` read-only, then makes
/// the folder writable again. root writes anywhere: as root, the run is made as `nobody`, owner
/// of the repository but for `ro`.
fn apply_with_read_only_folder(repo: &TestRepo, ro: &str, patch: &str) -> Run {
    use std::os::unix::fs::PermissionsExt;
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        chown_tree(repo.path(), 65534);
        std::fs::set_permissions(repo.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    std::fs::set_permissions(repo.path().join(ro), std::fs::Permissions::from_mode(0o555))
        .expect("chmod");
    let scratch = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let patch = write_patch(scratch.path(), patch);
    let mut cmd = Command::new(BIN);
    cmd.args([
        "apply",
        patch.to_str().expect("utf8"),
        "--checks",
        "none",
        "--format",
        "json",
    ])
    .current_dir(repo.path())
    .stdin(Stdio::null());
    if root {
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534).env("HOME", scratch.path());
    }
    let r = Run::from(cmd.output().expect("run"));
    std::fs::set_permissions(repo.path().join(ro), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    if root {
        chown_tree(repo.path(), 0);
    }
    r
}

fn chown_tree(p: &Path, id: u32) {
    std::os::unix::fs::lchown(p, Some(id), Some(id)).expect("chown");
    if p.is_dir() && !p.is_symlink() {
        for e in std::fs::read_dir(p).expect("dir").flatten() {
            chown_tree(&e.path(), id);
        }
    }
}

fn walk(p: &Path) -> Vec<PathBuf> {
    let mut out = vec![p.to_path_buf()];
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

// ---- power loss --------------------------------------------------------------------------------

/// A journal that says `committed` for a ref that is not where it says (a power loss lost the
/// ref's update): recovery reads the ref, finds the commit unpublished, and rolls back.
#[test]
fn a_committed_journal_whose_ref_did_not_move_is_rolled_back() {
    let (repo, _outside) = forge_repo();
    let base = repo.head();
    let index_before = repo.git(&["ls-files", "-s"]);
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch = write_patch(scratch.path(), FORGE_PATCH);
    let r = patchgate(
        repo.path(),
        &[
            "apply",
            patch.to_str().expect("utf8"),
            "--checks",
            "none",
            "--commit",
        ],
        &[("PATCHGATE_FAULT_ABORT_AT", "after-cas")],
    );
    assert!(killed(&r));
    let journal = only_json(&repo.path().join(".git/patchgate/txn"));
    let mut j = json_file(&journal);
    j["phase"] = "committed".into();
    std::fs::write(&journal, serde_json::to_vec_pretty(&j).expect("json")).expect("w");
    repo.git(&["update-ref", "refs/heads/main", &base]);
    let rec = repo.run(&["recover", "--format", "json"]);
    rec.assert_code(0);
    assert_eq!(
        rec.json()["transactions"][0]["outcome"],
        "rolled_back",
        "{}",
        rec.stdout
    );
    assert_eq!(repo.head(), base);
    assert_eq!(repo.read_str("a.txt"), "alpha\n");
    assert_eq!(repo.read_str("e.txt"), "doomed\n");
    assert!(!repo.exists("n"));
    assert_eq!(
        repo.git(&["ls-files", "-s"]),
        index_before,
        "the index follows HEAD"
    );
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

/// One system call of an strace log that matters here.
#[derive(Debug)]
enum Call {
    Sync(PathBuf),
    Rename(PathBuf, PathBuf),
    /// A folder created (`mkdir` with an absolute path).
    Mkdir(PathBuf),
    /// `syncfs` of the file system holding this path: every file of it synced.
    SyncFs(PathBuf),
    /// A file created (`openat` with `O_CREAT`), by the path of the descriptor it returned.
    Create(PathBuf),
}

/// The fsyncs and renames of an `strace -f -y` log, in the order they completed (a sync) or
/// started (a rename), successful ones only.
fn calls(log: &str, cwd: &Path) -> Vec<Call> {
    let fd_path = |s: &str| -> Option<PathBuf> {
        let start = s.find('<')?;
        let end = s[start..].find('>')? + start;
        Some(PathBuf::from(&s[start + 1..end]))
    };
    let quoted = |s: &str| -> Vec<String> {
        s.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let mut pending_sync: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut pending_syncfs: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut pending_create: BTreeMap<String, ()> = BTreeMap::new();
    // The path of the descriptor a successful call returned (`) = 5</dir/file>`; strace pads a
    // resumed call's `)` and `=` apart).
    let returned = |s: &str| -> Option<PathBuf> {
        let (_, ret) = s.rsplit_once(" = ")?;
        if ret.starts_with('-') {
            None
        } else {
            fd_path(ret)
        }
    };
    let mut out = Vec::new();
    for line in log.lines() {
        let (pid, rest) = line.split_once(' ').unwrap_or(("", line));
        let rest = rest.trim_start();
        let ok = |r: &str| r.trim_end().ends_with("= 0");
        if let Some(args) = rest
            .strip_prefix("fsync(")
            .or_else(|| rest.strip_prefix("fdatasync("))
        {
            if let Some(p) = fd_path(args) {
                if args.contains("<unfinished") {
                    pending_sync.insert(pid.to_string(), p);
                } else if ok(args) {
                    out.push(Call::Sync(p));
                }
            }
        } else if let Some(args) = rest.strip_prefix("syncfs(") {
            if let Some(p) = fd_path(args) {
                if args.contains("<unfinished") {
                    pending_syncfs.insert(pid.to_string(), p);
                } else if ok(args) {
                    out.push(Call::SyncFs(p));
                }
            }
        } else if rest.starts_with("<... syncfs resumed>") {
            if let Some(p) = pending_syncfs.remove(pid)
                && ok(rest)
            {
                out.push(Call::SyncFs(p));
            }
        } else if let Some(args) = rest.strip_prefix("openat(")
            && args.contains("O_CREAT")
        {
            if args.contains("<unfinished") {
                pending_create.insert(pid.to_string(), ());
            } else if let Some(p) = returned(args) {
                out.push(Call::Create(p));
            }
        } else if let Some(args) = rest.strip_prefix("<... openat resumed>") {
            if pending_create.remove(pid).is_some()
                && let Some(p) = returned(args)
            {
                out.push(Call::Create(p));
            }
        } else if rest.starts_with("<... fsync resumed>")
            || rest.starts_with("<... fdatasync resumed>")
        {
            if let Some(p) = pending_sync.remove(pid)
                && ok(rest)
            {
                out.push(Call::Sync(p));
            }
        } else if rest.starts_with("rename(")
            || rest.starts_with("renameat(")
            || rest.starts_with("renameat2(")
            || rest.starts_with("link(")
            || rest.starts_with("linkat(")
        {
            if rest.contains("= -1") {
                continue;
            }
            let names = quoted(rest);
            if names.len() < 2 {
                continue;
            }
            let args: Vec<&str> = rest.split(", ").collect();
            let resolve = |dir_arg: Option<&str>, name: &str| -> PathBuf {
                let p = Path::new(name);
                if p.is_absolute() {
                    return p.to_path_buf();
                }
                match dir_arg.and_then(fd_path) {
                    Some(d) => d.join(p),
                    None => cwd.join(p),
                }
            };
            let (from, to) = if rest.starts_with("rename(") || rest.starts_with("link(") {
                (resolve(None, &names[0]), resolve(None, &names[1]))
            } else {
                let dir0 = args.first().and_then(|a| a.split_once('(')).map(|(_, d)| d);
                (
                    resolve(dir0, &names[0]),
                    resolve(args.get(2).copied(), &names[1]),
                )
            };
            out.push(Call::Rename(from, to));
        } else if let Some(args) = rest.strip_prefix("mkdir(")
            && ok(args)
            && let Some(name) = quoted(args).first()
            && name.starts_with('/')
        {
            out.push(Call::Mkdir(PathBuf::from(name)));
        }
    }
    out
}

/// Whether `path` is on a file system that keeps files in memory only (tmpfs, ramfs).
fn in_memory(path: &Path) -> bool {
    let t = fs_magic(path);
    t == 0x0102_1994 || t == 0x8584_58F6
}

#[test]
fn every_published_file_is_synced_before_its_rename_and_its_folder_after() {
    // On a disk: the test's point is what reaches one.
    let parent = disk_folder();
    let Some((calls, kinds)) = durability_of_a_commit(&parent) else {
        return;
    };
    let mut missing = Vec::new();
    for (kind, rel, synced_before, folder_after) in &calls {
        if !(*synced_before && *folder_after) {
            missing.push(format!(
                "{kind} {rel}: content synced before: {synced_before}, folder after: {folder_after}"
            ));
        }
    }
    for kind in [
        "object",
        "pin ref",
        "branch ref",
        "index",
        "working-tree file",
        "patchgate state",
    ] {
        assert!(
            kinds.contains_key(kind),
            "no {kind} was published: {kinds:?}"
        );
    }
    assert!(missing.is_empty(), "not durable:\n{}", missing.join("\n"));
}

/// The same for a working-tree apply, whose pins (the transaction's, and the undo history's,
/// written beside it before the switch) and state files are its only git-side writes.
#[test]
fn every_file_a_working_tree_apply_publishes_is_synced_before_its_rename_and_its_folder_after() {
    let parent = disk_folder();
    let Some((calls, kinds)) = durability_of(&parent, &[]) else {
        return;
    };
    let missing: Vec<String> = calls
        .iter()
        .filter(|(_, _, before, after)| !(*before && *after))
        .map(|(kind, rel, before, after)| {
            format!("{kind} {rel}: content synced before: {before}, folder after: {after}")
        })
        .collect();
    for kind in ["object", "pin ref", "working-tree file", "patchgate state"] {
        assert!(
            kinds.contains_key(kind),
            "no {kind} was published: {kinds:?}"
        );
    }
    let pins: Vec<&String> = calls
        .iter()
        .filter(|(kind, ..)| *kind == "pin ref")
        .map(|(_, rel, ..)| rel)
        .collect();
    assert!(
        pins.iter().any(|p| p.contains("/txn/")) && pins.iter().any(|p| p.contains("/history/")),
        "both pins published: {pins:?}"
    );
    assert!(missing.is_empty(), "not durable:\n{}", missing.join("\n"));
}

/// On ext4 (Linux 5.8 or later, where `syncfs` reports write-out errors) a batch of many files
/// makes its temp files durable with one `syncfs` of the file system, after every temp file is
/// written and before the first is renamed, instead of an fsync of each; with many folders, a
/// second one after the last rename stands for the folders' fsyncs, and the transaction's own
/// objects, when there are 16 or more, get one for their contents and one for their names. A
/// small batch still syncs each file and folder. `syncfs` is chosen only while little else is waiting to be written on the
/// machine (`fs::together`), so each run starts after a `sync`, and a run that found the machine
/// busy anyway is tried again.
#[test]
fn a_large_batch_on_ext4_makes_its_temp_files_durable_with_one_syncfs() {
    let parent = disk_folder();
    let traced = "fsync,fdatasync,syncfs,rename,renameat,renameat2,openat";
    let batch = |files: usize, folders: usize| -> Option<(Vec<Call>, PathBuf)> {
        let mut repo = TestRepo::new_in(&parent);
        let mut patch = String::from("edits:\n");
        for k in 0..files {
            let rel = format!("d{}/f{k:02}.txt", k % folders);
            repo = repo.file(&rel, format!("line {k}\n"));
            patch.push_str(&format!(
                "  - {{file_path: {rel}, old_string: \"line {k}\", new_string: \"LINE {k}\"}}\n"
            ));
        }
        // A file the patch leaves in each folder: the pin's trees (of the changed paths only)
        // are then new objects, not HEAD's.
        for d in 0..folders {
            repo = repo.file(&format!("d{d}/keep.txt"), "kept\n");
        }
        let repo = repo.commit();
        let root = std::fs::canonicalize(repo.path()).expect("canon");
        let scratch = tempfile::tempdir().expect("tempdir");
        let patch = write_patch(scratch.path(), &patch);
        let args = ["apply", patch.to_str().expect("utf8"), "--checks", "none"];
        let _ = Command::new("sync").status();
        let (text, run) = crate::checks::traced(&root, traced, &args)?;
        run.assert_code(0);
        Some((calls(&text, &root), root))
    };
    // The working tree's renames (temp file -> file), and whether each temp file was fsynced.
    let tree = |calls: &[Call], root: &Path| -> Vec<(usize, PathBuf, bool)> {
        let git = root.join(".git");
        calls
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match c {
                Call::Rename(from, to) if to.starts_with(root) && !to.starts_with(&git) => {
                    let fsynced = calls[..i]
                        .iter()
                        .any(|c| matches!(c, Call::Sync(p) if p == from));
                    Some((i, from.clone(), fsynced))
                }
                _ => None,
            })
            .collect()
    };

    // The syncfs calls on the working tree's folders, by position.
    let syncfs_at = |calls: &[Call], root: &Path| -> Vec<usize> {
        let git = root.join(".git");
        (0..calls.len())
            .filter(|&k| matches!(&calls[k], Call::SyncFs(p) if !p.starts_with(&git)))
            .collect()
    };
    // The transaction's own objects (the pin's trees): how many syncfs and fsync calls they got,
    // and whether each was synced before its rename and its folder after.
    let objects = |calls: &[Call], root: &Path| -> (usize, usize, bool) {
        let odb = root.join(".git/objects");
        let syncfs = calls
            .iter()
            .filter(|c| matches!(c, Call::SyncFs(p) if p.starts_with(&odb)))
            .count();
        let fsync = calls
            .iter()
            .filter(|c| matches!(c, Call::Sync(p) if p.starts_with(&odb)))
            .count();
        let durable = calls.iter().enumerate().all(|(i, c)| match c {
            Call::Rename(from, to) if to.starts_with(&odb) => {
                let folder = to.parent().expect("fan-out folder");
                synced_before(&calls[..i], from)
                    && calls[i + 1..].iter().any(|c| match c {
                        Call::Sync(p) => p == folder,
                        Call::SyncFs(p) => p.starts_with(&odb),
                        _ => false,
                    })
            }
            _ => true,
        });
        (syncfs, fsync, durable)
    };
    // The working tree's folders (the `dN` beneath the root) fsynced after position `after`.
    let folders_synced = |calls: &[Call], root: &Path, after: usize| -> usize {
        calls[after..]
            .iter()
            .filter(|c| matches!(c, Call::Sync(p) if p.parent() == Some(root)))
            .count()
    };
    if fs_magic(&parent) != 0xEF53 {
        // Not ext4: every temp file keeps its own fsync before its rename, and no syncfs.
        let Some((calls, root)) = batch(40, 4) else {
            return;
        };
        let renames = tree(&calls, &root);
        assert_eq!(renames.len(), 40, "{renames:?}");
        assert!(
            renames.iter().all(|(_, _, fsynced)| *fsynced),
            "{renames:?}"
        );
        assert!(syncfs_at(&calls, &root).is_empty());
        return;
    }
    let mut seen = Vec::new();
    for _ in 0..3 {
        // 40 files in 4 folders: one syncfs for the temp files, the 4 folders fsynced after.
        let Some((calls, root)) = batch(40, 4) else {
            return;
        };
        let renames = tree(&calls, &root);
        assert_eq!(renames.len(), 40, "{renames:?}");
        let syncfs = syncfs_at(&calls, &root);
        seen.push(syncfs.len());
        if syncfs.len() != 1 {
            continue; // the machine was busy writing: each file was synced on its own
        }
        let at = syncfs[0];
        if let Call::SyncFs(on) = &calls[at] {
            assert!(
                on.starts_with(&root),
                "syncfs of a folder of the working tree: {on:?}"
            );
        }
        for (i, from, fsynced) in &renames {
            assert!(*i > at, "{} renamed before the syncfs", from.display());
            assert!(!fsynced, "{} fsynced as well", from.display());
            assert!(synced_before(&calls[..*i], from), "{}", from.display());
        }
        let last = renames.iter().map(|r| r.0).max().unwrap_or(0);
        assert_eq!(folders_synced(&calls, &root, last), 4);
        // Its 5 pin trees (the root's and the 4 folders'): an fsync each.
        let (syncfs, fsync, durable) = objects(&calls, &root);
        assert!(
            syncfs == 0 && fsync >= 5 && durable,
            "{syncfs} {fsync} {durable}"
        );

        // 40 files in 20 folders: the folders' renames are committed by a second syncfs after
        // the last rename, with no fsync of a folder.
        let Some((calls, root)) = batch(40, 20) else {
            return;
        };
        let renames = tree(&calls, &root);
        let syncfs = syncfs_at(&calls, &root);
        let (odb_syncfs, odb_fsync, odb_durable) = objects(&calls, &root);
        seen.push(syncfs.len() + odb_syncfs);
        if syncfs.len() != 2 || odb_syncfs != 2 {
            continue;
        }
        // Its 21 pin trees: one syncfs for their contents, one for their names, no fsync.
        assert!(odb_fsync == 0 && odb_durable, "{odb_fsync} {odb_durable}");
        let last = renames.iter().map(|r| r.0).max().unwrap_or(0);
        let first = renames.iter().map(|r| r.0).min().unwrap_or(0);
        assert!(
            syncfs[0] < first && syncfs[1] > last,
            "{syncfs:?} {first} {last}"
        );
        assert_eq!(folders_synced(&calls, &root, 0), 0);

        // The small batch: an fsync per temp file and per folder, no syncfs.
        let Some((calls, root)) = batch(4, 4) else {
            return;
        };
        let renames = tree(&calls, &root);
        assert_eq!(renames.len(), 4);
        assert!(
            renames.iter().all(|(_, _, fsynced)| *fsynced),
            "{renames:?}"
        );
        assert!(syncfs_at(&calls, &root).is_empty());
        assert_eq!(folders_synced(&calls, &root, renames[3].0), 4);
        return;
    }
    panic!("no try of three used syncfs as expected (syncfs calls per run: {seen:?})");
}

/// A `--commit` writes its blobs in one batch with the trees and commits that name them, and the
/// undo history's commit with them, its pin before the switch: 8 files in 8 folders are 8 blobs
/// and, with their trees, the commit, the pins and the history's commit, more than 16 objects,
/// every one's temp file written before the first is renamed. On ext4 (where 8 blobs alone would
/// get an fsync each) all of them are made durable by two `syncfs` and no fsync.
#[test]
fn a_commit_writes_its_blobs_trees_and_history_pin_in_one_batch() {
    let parent = disk_folder();
    let ext4 = fs_magic(&parent) == 0xEF53;
    let traced = "fsync,fdatasync,syncfs,rename,renameat,renameat2,openat";
    let mut seen = Vec::new();
    for _ in 0..3 {
        let mut repo = TestRepo::new_in(&parent);
        let mut patch = String::from("message: eight folders\nedits:\n");
        for k in 0..8 {
            let rel = format!("d{k}/f.txt");
            repo = repo
                .file(&rel, format!("line {k}\n"))
                .file(&format!("d{k}/keep.txt"), "kept\n");
            patch.push_str(&format!(
                "  - {{file_path: {rel}, old_string: \"line {k}\", new_string: \"LINE {k}\"}}\n"
            ));
        }
        let repo = repo.commit();
        let root = std::fs::canonicalize(repo.path()).expect("canon");
        let scratch = tempfile::tempdir().expect("tempdir");
        let patch = write_patch(scratch.path(), &patch);
        let args = [
            "apply",
            patch.to_str().expect("utf8"),
            "--commit",
            "--checks",
            "none",
        ];
        let _ = Command::new("sync").status();
        let Some((text, run)) = crate::checks::traced(&root, traced, &args) else {
            return;
        };
        run.assert_code(0);
        let calls = calls(&text, &root);
        let odb = root.join(".git/objects");
        let git = root.join(".git");
        let objects: Vec<usize> = (0..calls.len())
            .filter(|&i| matches!(&calls[i], Call::Rename(_, to) if to.starts_with(&odb)))
            .collect();
        // 8 blobs, 9 trees, the commit and the pin, the history's tree and commit.
        assert!(objects.len() >= 21, "{} objects", objects.len());
        // One batch: no object is renamed into place before the last one's temp file exists.
        let last_created = calls
            .iter()
            .rposition(|c| matches!(c, Call::Create(p) if p.starts_with(&odb)))
            .expect("objects created");
        assert!(
            objects[0] > last_created,
            "an object renamed ({}) before the last was written ({last_created})",
            objects[0]
        );
        for &i in &objects {
            if let Call::Rename(from, _) = &calls[i] {
                assert!(synced_before(&calls[..i], from), "{}", from.display());
            }
        }
        // The history's pin is written with the transaction's, before the first file is
        // replaced; its entry after, synced before its rename.
        let renamed_at = |want: &dyn Fn(&Path) -> bool| {
            calls
                .iter()
                .position(|c| matches!(c, Call::Rename(_, to) if want(to)))
        };
        let first_file = renamed_at(&|to| to.starts_with(&root) && !to.starts_with(&git))
            .expect("a file replaced");
        let history_pin = renamed_at(&|to| to.starts_with(git.join("refs/patchgate/history")))
            .expect("the history's pin written");
        assert!(history_pin < first_file, "{history_pin} {first_file}");
        let entry = renamed_at(&|to| {
            to.starts_with(git.join("patchgate/history"))
                && to.extension().is_some_and(|e| e == "json")
        })
        .expect("the history entry written");
        assert!(entry > first_file, "{entry} {first_file}");
        if let Call::Rename(from, _) = &calls[entry] {
            assert!(synced_before(&calls[..entry], from), "{}", from.display());
        }
        let (ok, out) = git_try(&root, &["fsck", "--no-progress", "--strict"]);
        assert!(ok, "{out}");
        repo.run(&["undo", "--format", "json"]).assert_code(0);
        let fsynced = calls
            .iter()
            .filter(|c| matches!(c, Call::Sync(p) if p.starts_with(&odb)))
            .count();
        if !ext4 {
            // Elsewhere each object keeps its fsync (checked above: synced before its rename).
            assert!(fsynced >= objects.len(), "{fsynced} {}", objects.len());
            return;
        }
        let syncfs = calls
            .iter()
            .filter(|c| matches!(c, Call::SyncFs(p) if p.starts_with(&odb)))
            .count();
        seen.push(syncfs);
        if syncfs != 2 {
            continue; // the machine was busy writing: each object was synced on its own
        }
        assert_eq!(fsynced, 0, "objects fsynced one by one");
        return;
    }
    panic!("no try of three used syncfs for the objects (syncfs calls per run: {seen:?})");
}

/// The statfs(2) magic number of the file system holding `path`.
fn fs_magic(path: &Path) -> i64 {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("no NUL");
    // SAFETY: statfs fills one struct we own from a NUL-terminated path.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    assert_eq!(rc, 0, "statfs {}", path.display());
    #[allow(clippy::unnecessary_cast)]
    let t = st.f_type as i64;
    t
}

/// A working-tree apply writes and syncs its undo history entry beside the staging, before the
/// switch: after the switch only its rename (and its folder's sync) is left, one disk wait fewer
/// between the switch and the report.
#[test]
fn a_working_tree_apply_syncs_its_history_entry_before_the_switch() {
    let Some((calls, root)) = traced_forge(
        &disk_folder(),
        &[],
        "fsync,fdatasync,rename,renameat,renameat2",
    ) else {
        return;
    };
    let history = root.join(".git/patchgate/history");
    let (entry_at, entry_temp) = calls
        .iter()
        .enumerate()
        .find_map(|(i, c)| match c {
            Call::Rename(from, to) if to.parent() == Some(history.as_path()) => {
                Some((i, from.clone()))
            }
            _ => None,
        })
        .expect("the history entry is published");
    let switch = calls
        .iter()
        .position(|c| {
            matches!(c, Call::Rename(_, to) if to.starts_with(&root) && !to.starts_with(root.join(".git")))
        })
        .expect("a working-tree file is replaced");
    assert!(entry_at > switch, "the entry is named after the switch");
    assert!(
        calls[..switch]
            .iter()
            .any(|c| matches!(c, Call::Sync(p) if *p == entry_temp)),
        "the entry's content synced before the switch ({})",
        entry_temp.display()
    );
}

/// On a file system in memory (tmpfs: its fsync does nothing) the working tree's files and
/// folders are not synced; git's objects, refs and index, and patchgate's own state, still are.
#[test]
fn a_working_tree_in_memory_is_written_without_syncs() {
    let parent = memory_mount();
    let Some((calls, kinds)) = durability_of_a_commit(&parent) else {
        return;
    };
    assert!(kinds.contains_key("working-tree file"), "{kinds:?}");
    for (kind, rel, synced_before, folder_after) in &calls {
        let synced = *synced_before || *folder_after;
        if *kind == "working-tree file" {
            assert!(
                !synced,
                "{rel} was synced on a file system in memory: content {synced_before}, folder {folder_after}"
            );
        } else {
            assert!(
                *synced_before && *folder_after,
                "{kind} {rel}: content synced before: {synced_before}, folder after: {folder_after}"
            );
        }
    }
}

/// The most temp files of a batch open at once, on a file system in memory and on a disk. In
/// memory none waits for a sync, so each is closed once written: kept open, a large batch filled
/// the descriptor table, whose growth waits for the run's other threads (src/fdtable.rs). On a
/// disk they stay open until synced (reopening each by name cost an open and a close).
#[test]
fn temp_files_stay_open_only_where_a_sync_needs_them() {
    let most_open = |parent: &Path| -> Option<usize> {
        let mut repo = TestRepo::new_in(parent);
        let mut patch = String::from("edits:\n");
        for f in 0..6 {
            repo = repo.file(&format!("f{f}.txt"), "one\ntwo\n");
            for w in ["one", "two"] {
                patch.push_str(&format!(
                    "  - {{file_path: f{f}.txt, old_string: \"{w}\\n\", new_string: \"{w}!\\n\"}}\n"
                ));
            }
        }
        let repo = repo.commit();
        let scratch = tempfile::tempdir().expect("tempdir");
        let patch = write_patch(scratch.path(), &patch);
        let args = ["apply", patch.to_str().expect("utf8"), "--checks", "none"];
        let (log, run) = crate::checks::traced(repo.path(), "openat,close", &args)?;
        run.assert_code(0);
        // strace -y names each descriptor's file: `= 7</…/.f0.txt.patchgate-…tmp>`, `close(7</…>)`.
        let (mut open, mut most) = (0usize, 0usize);
        // The working tree's temp files only (the history entry's is written beside them).
        for l in log
            .lines()
            .filter(|l| l.contains(".txt.patchgate-") && l.contains(".tmp>"))
        {
            // An `openat` split by another thread's call ends in a `<... openat resumed>` line,
            // the one with the descriptor's name.
            if l.contains("close(") {
                open = open.saturating_sub(1);
            } else if l.contains("openat") {
                open += 1;
            }
            most = most.max(open);
        }
        Some(most)
    };
    let (Some(memory), Some(disk)) = (most_open(&memory_mount()), most_open(&disk_folder())) else {
        return;
    };
    assert_eq!(
        memory, 1,
        "temp files open at once on a file system in memory"
    );
    assert_eq!(disk, 6, "temp files open at once on a disk, until synced");
}

/// A writable folder on a disk (not in memory): the build's scratch folder, the temp folder,
/// `/var/tmp` or the build folder. The test needs one: it fails rather than skip when there is
/// none.
fn disk_folder() -> PathBuf {
    let candidates = [
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        std::env::temp_dir(),
        PathBuf::from("/var/tmp"),
        PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    ];
    for p in candidates {
        if p.is_dir() && !in_memory(&p) && tempfile::tempdir_in(&p).is_ok() {
            return p;
        }
    }
    panic!("no writable folder on a disk: this test checks what reaches one");
}

/// A writable folder on a file system in memory: /dev/shm where it is one (Linux gives every
/// process one), else the first writable tmpfs or ramfs mount. The test needs one: it fails
/// rather than skip when there is none.
fn memory_mount() -> PathBuf {
    let mounts = std::fs::read_to_string("/proc/self/mounts").expect("/proc/self/mounts");
    let candidates =
        std::iter::once("/dev/shm".to_string()).chain(mounts.lines().filter_map(|l| {
            let mut f = l.split_whitespace();
            let (at, kind) = (f.nth(1)?, f.next()?);
            matches!(kind, "tmpfs" | "ramfs").then(|| at.to_string())
        }));
    for at in candidates {
        let p = PathBuf::from(at);
        if p.is_dir() && in_memory(&p) && tempfile::tempdir_in(&p).is_ok() {
            return p;
        }
    }
    panic!(
        "no writable tmpfs or ramfs mount (/proc/self/mounts): this test needs one, e.g. /dev/shm"
    );
}

/// Each file a `--commit` apply in a new repository under `parent` published by a rename:
/// `(kind, path, content synced before, folder synced after)`, and the count of each kind; `None`
/// where strace is not at hand outside CI.
#[allow(clippy::type_complexity)]
/// Each file a run published (its kind, its path, whether its content was synced before its
/// rename and its folder after), and how many of each kind.
type Published = (
    Vec<(&'static str, String, bool, bool)>,
    BTreeMap<&'static str, usize>,
);

fn durability_of_a_commit(parent: &Path) -> Option<Published> {
    durability_of(parent, &["--commit"])
}

/// `patchgate apply` of [`FORGE_PATCH`] (with `mode`'s flags) in a new repository under
/// `parent`, under strace tracing `traced`: the calls it made and the repository's canonical root
/// (`None` without strace, where the test may skip).
fn traced_forge(parent: &Path, mode: &[&str], traced: &str) -> Option<(Vec<Call>, PathBuf)> {
    let repo = TestRepo::new_in(parent)
        .file("a.txt", "alpha\n")
        .file("e.txt", "doomed\n")
        .commit();
    let root = std::fs::canonicalize(repo.path()).expect("canon");
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch = write_patch(scratch.path(), FORGE_PATCH);
    let mut args = vec![
        "apply",
        patch.to_str().expect("utf8"),
        "--checks",
        "none",
        "--format",
        "json",
    ];
    args.extend_from_slice(mode);
    let (text, run) = crate::checks::traced(&root, traced, &args)?;
    run.assert_code(0);
    Some((calls(&text, &root), root))
}

/// Whether `calls` (those before its rename) made the content of `file` durable: an fsync of
/// it, or a `syncfs` of its file system after it was created (all the files of these tests are
/// on one file system).
fn synced_before(calls: &[Call], file: &Path) -> bool {
    let created = calls
        .iter()
        .rposition(|c| matches!(c, Call::Create(p) if p == file));
    calls.iter().enumerate().any(|(k, c)| match c {
        Call::Sync(p) => p == file,
        Call::SyncFs(_) => created.is_some_and(|at| k > at),
        _ => false,
    })
}

/// [`durability_of_a_commit`] for the apply `mode` asks for (`--commit`, or nothing: the working
/// tree).
fn durability_of(parent: &Path, mode: &[&str]) -> Option<Published> {
    let traced_calls = "fsync,fdatasync,syncfs,rename,renameat,renameat2,link,linkat,openat,mkdir";
    let (calls, root) = traced_forge(parent, mode, traced_calls)?;
    let mut published = Vec::new();
    let mut kinds = BTreeMap::<&str, usize>::new();
    for (i, c) in calls.iter().enumerate() {
        let Call::Rename(from, to) = c else { continue };
        if !to.starts_with(&root) {
            continue;
        }
        let rel = to
            .strip_prefix(&root)
            .expect("inside")
            .to_string_lossy()
            .into_owned();
        let kind = if rel.starts_with(".git/objects/") {
            "object"
        } else if rel.starts_with(".git/refs/patchgate/") {
            "pin ref"
        } else if rel.starts_with(".git/refs/heads/") {
            "branch ref"
        } else if rel == ".git/index" {
            "index"
        } else if rel.starts_with(".git/patchgate/") {
            "patchgate state"
        } else if rel.starts_with(".git/") {
            "other git file"
        } else {
            "working-tree file"
        };
        *kinds.entry(kind).or_default() += 1;
        let synced_before = synced_before(&calls[..i], from);
        let parent = to.parent().expect("parent");
        let folder_after = calls[i + 1..]
            .iter()
            .any(|c| matches!(c, Call::Sync(p) if p == parent) || matches!(c, Call::SyncFs(_)));
        published.push((kind, rel, synced_before, folder_after));
    }
    // A folder made for the pins (a repository's first patch makes them) must be named durably
    // in its parent too, or the pin in it may be lost with it.
    for (i, c) in calls.iter().enumerate() {
        let Call::Mkdir(dir) = c else { continue };
        let Ok(rel) = dir.strip_prefix(&root) else {
            continue;
        };
        if !rel.starts_with(".git/refs/patchgate") {
            continue;
        }
        let parent = dir.parent().expect("parent");
        let named = calls[i + 1..]
            .iter()
            .any(|c| matches!(c, Call::Sync(p) if p == parent));
        *kinds.entry("pin folder").or_default() += 1;
        published.push((
            "pin folder",
            rel.to_string_lossy().into_owned(),
            true,
            named,
        ));
    }
    Some((published, kinds))
}

// ---- symlinks the patch goes through on purpose ------------------------------------------------

/// An edit through a symlink inside the repository (a linked file, a linked folder) acts on the
/// real path, as planned; the links stay links. Deleting a link deletes the link.
#[test]
fn symlinks_inside_the_repository_are_written_at_their_real_path() {
    let repo = TestRepo::new()
        .file("src/real.txt", "alpha\n")
        .file("src/other.txt", "beta\n")
        .file("src/gone.txt", "x\n");
    std::os::unix::fs::symlink("src/real.txt", repo.path().join("alias.txt")).expect("ln");
    std::os::unix::fs::symlink("src", repo.path().join("lib")).expect("ln");
    std::os::unix::fs::symlink("gone.txt", repo.path().join("src/gone-link")).expect("ln");
    let repo = repo.commit();
    let r = repo.apply(
        "edits:\n  - {file_path: alias.txt, old_string: alpha, new_string: ALPHA}\n  - {file_path: lib/other.txt, old_string: beta, new_string: BETA}\n  - {file_path: lib/new.txt, create: true, new_string: \"born\\n\"}\n  - {file_path: src/gone-link, delete: true}\n",
        &["--checks", "none"],
    );
    r.assert_code(0);
    assert_eq!(repo.read_str("src/real.txt"), "ALPHA\n");
    assert_eq!(repo.read_str("src/other.txt"), "BETA\n");
    assert_eq!(repo.read_str("src/new.txt"), "born\n");
    for link in ["alias.txt", "lib"] {
        let md = std::fs::symlink_metadata(repo.path().join(link)).expect("link");
        assert!(md.file_type().is_symlink(), "{link} is still a link");
    }
    assert!(!repo.exists("src/gone-link"), "the link is deleted");
    assert_eq!(repo.read_str("src/gone.txt"), "x\n", "its target is not");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
    repo.run(&["undo", "--format", "json"]).assert_code(0);
    assert_eq!(repo.read_str("src/real.txt"), "alpha\n");
    assert!(!repo.exists("src/new.txt"));
    assert!(repo.exists("src/gone-link"));
}
