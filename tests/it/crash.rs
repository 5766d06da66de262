//! Fault injection: `patchgate apply` killed with SIGKILL at every named point of the transaction
//! and at random moments, then `patchgate recover` (250 runs, every one at a point asserted to have
//! died of the kill, and at least half of the random ones). After each run, every file must
//! be exactly in the old or exactly in the new state (the whole batch, not file by file), the
//! user's uncommitted work intact, nothing left behind, and `git fsck` clean.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::{BIN, TestRepo, git_try};

/// Fault points every mode passes through.
const POINTS: &[&str] = &[
    "staged",
    "journaled",
    "before-verify",
    "before-switch",
    "after-switch",
    "history-pinned",
    "before-cleanup",
];
/// Fault points of `--commit` only (a working-tree run never reaches them).
const COMMIT_POINTS: &[&str] = &["before-cas", "after-cas", "after-index"];

const PATCH: &str = "\
message: crash test
edits:
  - {file_path: a.txt, old_string: alpha, new_string: ALPHA}
  - {file_path: b.txt, old_string: beta, new_string: BETA}
  - {file_path: new/dir/n.txt, create: true, new_string: \"born\\n\"}
  - {file_path: e.txt, delete: true}
  - {file_path: f.txt, move_to: g.txt, old_string: eff, new_string: gee}
";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Worktree,
    Commit,
}

fn setup() -> TestRepo {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\nkeep\n")
        .file("b.txt", "beta\n")
        .file("c.txt", "c\n")
        .file("d.txt", "d\n")
        .file("e.txt", "doomed\n")
        .file("f.txt", "eff\n")
        .commit();
    repo.write("a.txt", "alpha\nkeep, with the user's edit\n");
    repo.write("c.txt", "c unstaged\n");
    repo.write("d.txt", "d staged\n");
    repo.git(&["add", "d.txt"]);
    repo.write("d.txt", "d staged, and more\n");
    repo.write("untracked.txt", "mine\n");
    repo
}

type Files = BTreeMap<&'static str, Option<&'static str>>;

fn old_state() -> Files {
    BTreeMap::from([
        ("a.txt", Some("alpha\nkeep, with the user's edit\n")),
        ("b.txt", Some("beta\n")),
        ("new/dir/n.txt", None),
        ("e.txt", Some("doomed\n")),
        ("f.txt", Some("eff\n")),
        ("g.txt", None),
    ])
}

fn new_state() -> Files {
    BTreeMap::from([
        ("a.txt", Some("ALPHA\nkeep, with the user's edit\n")),
        ("b.txt", Some("BETA\n")),
        ("new/dir/n.txt", Some("born\n")),
        ("e.txt", None),
        ("f.txt", None),
        ("g.txt", Some("gee\n")),
    ])
}

fn current(repo: &TestRepo) -> BTreeMap<&'static str, Option<String>> {
    old_state()
        .keys()
        .map(|k| (*k, std::fs::read_to_string(repo.path().join(k)).ok()))
        .collect()
}

fn same(cur: &BTreeMap<&'static str, Option<String>>, want: &Files) -> bool {
    want.iter()
        .all(|(k, v)| cur.get(k).map(|c| c.as_deref()) == Some(*v))
}

/// Checks every invariant after a crash and a recover; returns whether the new state won.
fn check(repo: &TestRepo, mode: Mode, base: &str, label: &str) -> bool {
    let cur = current(repo);
    let is_old = same(&cur, &old_state());
    let is_new = same(&cur, &new_state());
    assert!(
        is_old || is_new,
        "{label}: files are neither all old nor all new: {cur:?}"
    );
    if !is_new {
        assert!(
            !repo.exists("new"),
            "{label}: a created directory was left behind"
        );
    }
    let head = repo.head();
    match (mode, is_new) {
        (Mode::Commit, true) => {
            assert_eq!(
                repo.git(&["rev-parse", "HEAD^"]).trim(),
                base,
                "{label}: new commit's parent"
            );
            assert_eq!(
                repo.git(&["show", "HEAD:a.txt"]),
                "ALPHA\nkeep, with the user's edit\n",
                "{label}"
            );
            assert_eq!(
                repo.git(&["show", ":a.txt"]),
                "ALPHA\nkeep, with the user's edit\n",
                "{label}: index"
            );
            assert_eq!(repo.git(&["show", ":g.txt"]), "gee\n", "{label}: index");
            let (in_index, _) = git_try(repo.path(), &["cat-file", "-e", ":e.txt"]);
            assert!(!in_index, "{label}: deleted file still in the index");
        }
        _ => {
            assert_eq!(head, base, "{label}: HEAD must not move");
            assert_eq!(
                repo.git(&["show", ":a.txt"]),
                "alpha\nkeep\n",
                "{label}: index untouched"
            );
        }
    }
    // The user's own work, untouched whatever happened.
    assert_eq!(repo.read_str("c.txt"), "c unstaged\n", "{label}");
    assert_eq!(repo.read_str("d.txt"), "d staged, and more\n", "{label}");
    assert_eq!(
        repo.git(&["show", ":d.txt"]),
        "d staged\n",
        "{label}: staged change"
    );
    assert_eq!(repo.read_str("untracked.txt"), "mine\n", "{label}");
    assert_eq!(repo.leftovers(), Vec::<String>::new(), "{label}: leftovers");
    let (ok, out) = git_try(repo.path(), &["fsck", "--strict", "--no-progress"]);
    assert!(ok, "{label}: git fsck: {out}");
    is_new
}

/// Runs [`PATCH`] in `repo` killed at fault point `point` and waits for it; the returned folder
/// holds the patch file (kept as long as the test needs it).
fn killed_at(repo: &TestRepo, mode: Mode, point: &str) -> tempfile::TempDir {
    let patch_dir = tempfile::tempdir().expect("tempdir");
    let patch = patch_dir.path().join("p.yaml");
    std::fs::write(&patch, PATCH).expect("patch");
    let mut child = spawn(repo, &patch, mode, Some(point));
    let _ = child.wait();
    patch_dir
}

fn spawn(
    repo: &TestRepo,
    patch: &std::path::Path,
    mode: Mode,
    abort_at: Option<&str>,
) -> std::process::Child {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "apply",
        patch.to_str().expect("utf8"),
        "--format",
        "json",
        "--checks",
        "none",
    ])
    .current_dir(repo.path())
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    if mode == Mode::Commit {
        cmd.arg("--commit");
    }
    if let Some(p) = abort_at {
        cmd.env("PATCHGATE_FAULT_ABORT_AT", p);
    }
    cmd.spawn().expect("spawn")
}

fn recover(repo: &TestRepo, label: &str) {
    let out = Command::new(BIN)
        .args(["recover", "--format", "json"])
        .current_dir(repo.path())
        .stdin(Stdio::null())
        .output()
        .expect("recover");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{label}: recover failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One run killed at a fault point or after a delay, then recovered and checked; returns whether
/// the new state won and whether the process really died of the kill (a run that finished first
/// proves nothing about crashes).
fn one_run(i: usize, mode: Mode, abort_at: Option<&str>, delay: Option<Duration>) -> (bool, bool) {
    use std::os::unix::process::ExitStatusExt;
    let repo = setup();
    let base = repo.head();
    let patch_dir = tempfile::tempdir().expect("tempdir");
    let patch = patch_dir.path().join("p.yaml");
    std::fs::write(&patch, PATCH).expect("patch");
    let label = format!("run {i} ({mode:?}, abort at {abort_at:?}, kill after {delay:?})");
    let mut child = spawn(&repo, &patch, mode, abort_at);
    if let Some(d) = delay {
        std::thread::sleep(d);
        let _ = child.kill();
    }
    let killed = child
        .wait()
        .is_ok_and(|s| s.signal() == Some(libc::SIGKILL));
    recover(&repo, &label);
    let new = check(&repo, mode, &base, &label);
    // Every fourth run: the patch, run again, finishes the job (or knows it is done).
    if i.is_multiple_of(4) {
        let mut again = spawn(&repo, &patch, mode, None);
        let status = again.wait().expect("wait");
        assert_eq!(status.code(), Some(0), "{label}: re-run");
        assert!(
            check(&repo, mode, &base, &format!("{label}, re-run")),
            "{label}: re-run reaches the new state"
        );
    }
    (new, killed)
}

/// How long one uninterrupted run takes here (the median of a few): random kill delays are drawn
/// below it, so that they land inside the run on a fast machine and a slow one alike.
fn run_time(mode: Mode) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let repo = setup();
            let patch_dir = tempfile::tempdir().expect("tempdir");
            let patch = patch_dir.path().join("p.yaml");
            std::fs::write(&patch, PATCH).expect("patch");
            let t = std::time::Instant::now();
            let status = spawn(&repo, &patch, mode, None).wait().expect("wait");
            assert_eq!(status.code(), Some(0), "an uninterrupted run succeeds");
            t.elapsed()
        })
        .collect();
    // The median: the slowest of a few runs on a loaded machine can be twice a typical one, and
    // delays drawn over twice a run's duration missed half the runs (46 of 100 in one CI run).
    times.sort();
    times[times.len() / 2]
}

/// A tiny deterministic generator: the kill delay is a fraction of `span` reproducible from the
/// run number.
fn delay_for(i: usize, span: Duration) -> Duration {
    let x = (i as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    span.mul_f64(((x >> 33) % 10_000) as f64 / 10_000.0)
}

#[test]
fn kill_at_every_point_then_recover() {
    let mut runs = Vec::new();
    for rep in 0..10 {
        for (p, point) in POINTS.iter().enumerate() {
            for mode in [Mode::Worktree, Mode::Commit] {
                runs.push((
                    rep * 100 + p * 2 + (mode == Mode::Commit) as usize,
                    mode,
                    *point,
                ));
            }
        }
        for (p, point) in COMMIT_POINTS.iter().enumerate() {
            runs.push((rep * 100 + 50 + p, Mode::Commit, *point));
        }
    }
    let results: Vec<((bool, bool), &str, Mode)> = std::thread::scope(|s| {
        let chunks: Vec<_> = runs.chunks(runs.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(i, mode, point)| {
                            (one_run(*i, *mode, Some(point), None), *point, *mode)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    assert_eq!(results.len(), 170);
    for ((_, killed), point, _) in &results {
        assert!(
            killed,
            "the run was not killed at {point}: the point was never reached"
        );
    }
    // Both outcomes must actually occur: a harness that always rolls back (or forward) proves little.
    assert!(
        results.iter().any(|((new, _), _, _)| *new) && results.iter().any(|((new, _), _, _)| !*new)
    );
    for ((new, _), point, mode) in &results {
        if ["staged", "journaled", "before-verify"].contains(point) {
            assert!(!new, "a kill before any switch must roll back ({point})");
        }
        // A working-tree run lands when its history entry is written: a kill while its files
        // are being switched, or before that entry, rolls back (only the old contents are
        // objects); after it, forward.
        if *mode == Mode::Worktree && ["after-switch", "history-pinned"].contains(point) {
            assert!(
                !new,
                "a working-tree run killed before it landed must roll back ({point})"
            );
        }
        if ["after-cas", "after-index", "before-cleanup"].contains(point) {
            assert!(
                new,
                "a kill after the point of no return must roll forward ({point})"
            );
        }
    }
}

/// A working-tree run writes its journal and its temp files while its objects are still being
/// staged (nothing needs them before the first file is replaced): paused where the staging
/// thread starts, the run still gets that far, and a kill there rolls back to the old state
/// with nothing left behind.
#[test]
fn a_working_tree_run_prepares_its_files_while_its_objects_are_staged() {
    use std::os::unix::process::ExitStatusExt;
    let repo = setup();
    let base = repo.head();
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch = scratch.path().join("p.yaml");
    std::fs::write(&patch, PATCH).expect("patch");
    let mut cmd = Command::new(BIN);
    cmd.args(["apply", patch.to_str().expect("utf8"), "--checks", "none"])
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_PAUSE_AT", "staging")
        .env("PATCHGATE_FAULT_RESUME", scratch.path().join("never"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    // The write-back's temp files appear (a.txt's, b.txt's, n.txt's, g.txt's) and the journal
    // says `staged`, while no pin exists yet: the objects are not written.
    let journal_dir = repo.path().join(".git/patchgate/txn");
    let ready = || {
        let temps = repo
            .leftovers()
            .iter()
            .filter(|l| l.starts_with("file ") && l.ends_with(".tmp"))
            .count();
        let staged = std::fs::read_dir(&journal_dir)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| std::fs::read_to_string(e.path()).ok())
            .is_some_and(|j| j.contains("\"phase\": \"staged\""));
        temps == 4 && staged
    };
    let t = std::time::Instant::now();
    while !ready() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the write-back did not prepare its files while the objects were being staged: {:?}",
            repo.leftovers()
        );
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the run finished without pausing where its objects are staged"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pins = repo.git(&["for-each-ref", "--format=%(refname)", "refs/patchgate/txn/"]);
    assert_eq!(pins.trim(), "", "pinned before the objects were written");
    let _ = child.kill();
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    recover(&repo, "killed while staging");
    assert!(
        !check(&repo, Mode::Worktree, &base, "killed while staging"),
        "a kill before the switch rolls back"
    );
}

#[test]
fn kill_at_random_moments_then_recover() {
    let runs: Vec<usize> = (0..100).collect();
    let spans = (run_time(Mode::Worktree), run_time(Mode::Commit));
    let outcomes: Vec<(bool, bool)> = std::thread::scope(|s| {
        let handles: Vec<_> = runs
            .chunks(50)
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|i| {
                            let (mode, span) = if i % 2 == 0 {
                                (Mode::Worktree, spans.0)
                            } else {
                                (Mode::Commit, spans.1)
                            };
                            one_run(1000 + i, mode, None, Some(delay_for(*i, span)))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    assert_eq!(outcomes.len(), 100);
    // The delays are drawn inside a run's duration; most must land before the run ends, or the
    // test would be checking finished runs.
    let killed = outcomes.iter().filter(|(_, k)| *k).count();
    assert!(
        killed >= 50,
        "only {killed} of 100 runs were killed before they finished"
    );
}

#[test]
fn the_next_run_recovers_an_interrupted_transaction_first() {
    let repo = setup();
    let _patch = killed_at(&repo, Mode::Worktree, "after-switch");
    assert!(
        !repo.leftovers().is_empty(),
        "the kill left a transaction behind"
    );
    let run = repo.apply(
        "- {file_path: c.txt, old_string: unstaged, new_string: UNSTAGED}\n",
        &[],
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains("interrupted transaction"),
        "{}",
        run.stderr
    );
    assert_eq!(
        repo.read_str("b.txt"),
        "beta\n",
        "rolled back first: it had not landed"
    );
    assert_eq!(repo.read_str("c.txt"), "c UNSTAGED\n");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn recover_with_nothing_to_do_says_so() {
    let repo = setup();
    let r = repo.run(&["recover", "--format", "json"]);
    r.assert_code(0);
    assert_eq!(r.json()["status"], "clean");
    let r = repo.run(&["recover"]);
    assert!(r.stdout.contains("nothing to recover"), "{}", r.stdout);
}

#[test]
fn recover_leaves_a_file_edited_after_the_crash_alone() {
    let repo = setup();
    // Killed after the first switch, before it landed: rolling back restores the rest …
    let _patch = killed_at(&repo, Mode::Worktree, "after-switch");
    // … except a file the user changed meanwhile, which holds neither state.
    repo.write("b.txt", "the user's newer text\n");
    let r = repo.run(&["recover", "--format", "json"]);
    r.assert_code(0);
    let t = &r.json()["transactions"][0];
    assert_eq!(t["outcome"], "rolled_back");
    assert_eq!(t["left_alone"], serde_json::json!(["b.txt"]));
    assert_eq!(repo.read_str("b.txt"), "the user's newer text\n");
    assert_eq!(repo.read_str("f.txt"), "eff\n");
    assert!(!repo.path().join("g.txt").exists());
}

#[test]
fn a_published_commit_is_rolled_forward_even_when_someone_committed_on_top() {
    let repo = setup();
    let base = repo.head();
    let _patch = killed_at(&repo, Mode::Commit, "after-cas");
    let ours = repo.head();
    assert_ne!(ours, base, "the commit was published before the kill");
    // Someone commits on top before anyone recovers.
    repo.git(&["commit", "-q", "--allow-empty", "-m", "on top"]);
    recover(&repo, "after a commit on top");
    assert_eq!(repo.git(&["rev-parse", "HEAD^"]).trim(), ours);
    assert_eq!(repo.read_str("b.txt"), "BETA\n", "rolled forward, not back");
    assert_eq!(
        repo.git(&["show", ":b.txt"]),
        "BETA\n",
        "index matches the commit"
    );
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}

#[test]
fn a_run_in_another_worktree_leaves_this_worktrees_transaction_alone() {
    let repo = setup();
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
    // A crashed transaction in the main worktree …
    let patch_dir = killed_at(&repo, Mode::Worktree, "after-switch");
    let patch = patch_dir.path().join("p.yaml");
    let pins = repo.git(&["for-each-ref", "--format=%(refname)", "refs/patchgate/txn/"]);
    assert!(!pins.trim().is_empty());
    // … and a run in the linked worktree, which must not judge (or delete) its pin.
    let other = crate::harness::run_in(
        &wt,
        &[
            "apply",
            patch.to_str().expect("utf8"),
            "--dry-run",
            "--checks",
            "none",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(other.code, 0, "{}", other.stdout);
    assert_eq!(
        repo.git(&["for-each-ref", "--format=%(refname)", "refs/patchgate/txn/"]),
        pins
    );
    // gc cannot take the objects recovery needs (a.txt's old content, with the user's
    // uncommitted edit, is in no commit), and recovery still finishes the job.
    repo.git(&["gc", "-q", "--prune=now"]);
    recover(&repo, "after gc");
    assert_eq!(repo.read_str("b.txt"), "beta\n");
    assert_eq!(
        repo.read_str("a.txt"),
        "alpha\nkeep, with the user's edit\n"
    );
}

/// A journal written by an older patchgate (version 1), which staged the new contents too and
/// rolled forward once its switch had begun, is still finished that way; this version's journal
/// of the same crash rolls back (it has no history entry yet).
#[test]
fn a_version_1_working_tree_journal_still_rolls_forward() {
    let repo = setup();
    let patch_dir = killed_at(&repo, Mode::Worktree, "after-switch");
    let txn = repo.path().join(".git/patchgate/txn");
    let file = crate::harness::first_json_in(&txn);
    let mut j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    assert_eq!(j["version"], 3);
    // What the older version had: the new contents as objects, and the phase `switching`.
    for new in [
        "ALPHA\nkeep, with the user's edit\n",
        "BETA\n",
        "born\n",
        "gee\n",
    ] {
        let f = patch_dir.path().join("blob");
        std::fs::write(&f, new).expect("write");
        repo.git(&["hash-object", "-w", f.to_str().expect("utf8")]);
    }
    j["version"] = 1.into();
    j["phase"] = "switching".into();
    std::fs::write(&file, serde_json::to_vec(&j).expect("json")).expect("write");
    let r = repo.run(&["recover", "--format", "json"]);
    r.assert_code(0);
    assert_eq!(r.json()["transactions"][0]["outcome"], "rolled_forward");
    assert_eq!(
        repo.read_str("a.txt"),
        "ALPHA\nkeep, with the user's edit\n"
    );
    assert_eq!(repo.read_str("b.txt"), "BETA\n");
    assert_eq!(repo.read_str("g.txt"), "gee\n");
    assert_eq!(repo.read_str("new/dir/n.txt"), "born\n");
    assert!(!repo.path().join("e.txt").exists());
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}
