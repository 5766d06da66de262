//! `patchgate undo`: working-tree, `--commit` and `--branch` patches reverted (modify, create,
//! delete, move), refusal when a file changed since, undo of an undo, unknown ids, the bounded
//! history kept through `git gc`, and SIGKILL at every fault point of an undo followed by
//! `recover`.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use crate::harness::{BIN, Run, TestRepo, git_try, run_in};

const PATCH: &str = "\
message: rename and tidy
edits:
  - {file_path: a.txt, old_string: alpha, new_string: ALPHA}
  - {file_path: new/dir/n.txt, create: true, new_string: \"born\\n\"}
  - {file_path: e.txt, delete: true}
  - {file_path: f.sh, move_to: g.sh, old_string: eff, new_string: gee}
";

/// A repository with uncommitted work in a patched file (a.txt) and elsewhere, and an
/// executable that the patch moves.
fn setup() -> TestRepo {
    let repo = TestRepo::new()
        .file("a.txt", "alpha\nkeep\n")
        .file("b.txt", "beta\n")
        .file("e.txt", "doomed\n")
        .file("f.sh", "#!/bin/sh\necho eff\n");
    std::fs::set_permissions(
        repo.path().join("f.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    let repo = repo.commit();
    repo.write("a.txt", "alpha\nkeep, with the user's edit\n");
    repo.write("untracked.txt", "mine\n");
    repo
}

fn assert_original(repo: &TestRepo, label: &str) {
    assert_eq!(
        repo.read_str("a.txt"),
        "alpha\nkeep, with the user's edit\n",
        "{label}"
    );
    assert_eq!(repo.read_str("e.txt"), "doomed\n", "{label}");
    assert_eq!(repo.read_str("f.sh"), "#!/bin/sh\necho eff\n", "{label}");
    let mode = std::fs::metadata(repo.path().join("f.sh"))
        .expect("f.sh")
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o111,
        0o111,
        "{label}: the moved-back file is executable"
    );
    assert!(!repo.exists("g.sh"), "{label}");
    assert!(!repo.exists("new/dir/n.txt"), "{label}");
    assert_eq!(repo.read_str("untracked.txt"), "mine\n", "{label}");
}

fn assert_patched(repo: &TestRepo, label: &str) {
    assert_eq!(
        repo.read_str("a.txt"),
        "ALPHA\nkeep, with the user's edit\n",
        "{label}"
    );
    assert!(!repo.exists("e.txt"), "{label}");
    assert!(!repo.exists("f.sh"), "{label}");
    assert_eq!(repo.read_str("g.sh"), "#!/bin/sh\necho gee\n", "{label}");
    assert_eq!(repo.read_str("new/dir/n.txt"), "born\n", "{label}");
    assert_eq!(repo.read_str("untracked.txt"), "mine\n", "{label}");
}

fn fsck_clean(repo: &TestRepo, label: &str) {
    let (ok, out) = git_try(repo.path(), &["fsck", "--strict", "--no-progress"]);
    assert!(ok, "{label}: git fsck: {out}");
    assert_eq!(repo.leftovers(), Vec::<String>::new(), "{label}: leftovers");
}

fn patch_id(run: &Run) -> String {
    let json = run.json();
    json["patch_id"]
        .as_str()
        .unwrap_or_else(|| panic!("a patch_id in {json}"))
        .to_string()
}

fn undo(repo: &TestRepo, args: &[&str]) -> Run {
    let mut all = vec!["undo", "--format", "json"];
    all.extend_from_slice(args);
    repo.run(&all)
}

#[test]
fn a_working_tree_patch_is_undone_file_by_file() {
    let repo = setup();
    let status_before = repo.git(&["status", "--porcelain"]);
    let run = repo.apply(PATCH, &["--checks", "none"]);
    run.assert_code(0);
    let id = patch_id(&run);
    assert_patched(&repo, "applied");

    let r = undo(&repo, &[]);
    r.assert_code(0);
    let json = r.json();
    assert_eq!(json["status"], "applied");
    assert_eq!(json["undid"], id.as_str());
    let undo_id = patch_id(&r);
    assert_ne!(undo_id, id, "an undo gets its own patch_id");
    let files = json["files"].as_array().expect("files");
    let renamed = files
        .iter()
        .find(|f| f["change"] == "renamed")
        .expect("the move is shown as one rename");
    assert_eq!(renamed["from"], "g.sh");
    assert_eq!(renamed["path"], "f.sh");
    assert_original(&repo, "undone");
    assert!(
        !repo.exists("new"),
        "the directories the patch created go too"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), status_before);
    fsck_clean(&repo, "undone");
}

#[test]
fn every_report_format_carries_the_patch_id() {
    let repo = setup();
    let dry = repo.apply(PATCH, &["--checks", "none", "--dry-run"]);
    dry.assert_code(0);
    assert!(dry.json()["patch_id"].is_null(), "nothing written: null");
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), PATCH).expect("write patch");
    let md = repo.run(&[
        "apply",
        pfile.path().to_str().expect("utf8"),
        "--checks",
        "none",
        "--format",
        "markdown",
    ]);
    md.assert_code(0);
    let list = undo(&repo, &["--list"]);
    let id = list.json()["patches"][0]["patch_id"]
        .as_str()
        .expect("listed")
        .to_string();
    assert!(
        md.stdout.contains(&format!("patch_id: `{id}`")),
        "{}",
        md.stdout
    );
    let human = repo.run(&["undo", "--format", "human"]);
    human.assert_code(0);
    assert!(
        human.stdout.contains(&format!("undid patch {id}")),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("redoes it"),
        "the undo's own id and how to redo: {}",
        human.stdout
    );
    // A rejected patch wrote nothing: no id.
    let rejected = repo.apply(
        "- {file_path: a.txt, old_string: nowhere, new_string: x}\n",
        &["--checks", "none"],
    );
    rejected.assert_code(2);
    assert!(rejected.json()["patch_id"].is_null());
}

#[test]
fn a_committed_patch_is_reverted_after_a_later_unrelated_commit() {
    let repo = setup();
    let run = repo.apply(PATCH, &["--checks", "none", "--commit"]);
    run.assert_code(0);
    let patch_commit = run.json()["commit"].as_str().expect("commit").to_string();
    // Someone commits something else on top.
    repo.write("b.txt", "beta, later\n");
    repo.git(&["commit", "-q", "-am", "unrelated"]);
    let later = repo.head();

    let r = undo(&repo, &[]);
    r.assert_code(0);
    let json = r.json();
    assert_eq!(json["status"], "committed");
    assert_eq!(json["branch"], "main");
    assert_eq!(json["commit"], repo.head().as_str());
    assert_eq!(repo.git(&["rev-parse", "HEAD^"]).trim(), later);
    let msg = repo.git(&["log", "-1", "--format=%B"]);
    assert!(
        msg.starts_with("Revert \"rename and tidy\"") && msg.contains(&patch_commit),
        "{msg}"
    );
    // The revert commit is exactly the inverse of the patch's commit: a.txt as committed before
    // it. The user's edit, which `--commit` took along, is back in the working tree and
    // uncommitted, as before the patch (not committed by the revert).
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "alpha\nkeep\n");
    assert_eq!(
        repo.git(&["diff", "HEAD^", "HEAD", "--stat", "--", "b.txt"]),
        "",
        "the revert touches the patch's files only"
    );
    assert_eq!(repo.git(&["show", "HEAD:e.txt"]), "doomed\n");
    assert!(repo.git(&["ls-tree", "HEAD", "f.sh"]).starts_with("100755"));
    assert!(repo.git(&["ls-tree", "HEAD", "g.sh"]).is_empty());
    assert_eq!(repo.git(&["show", "HEAD:b.txt"]), "beta, later\n");
    assert_original(&repo, "reverted");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        " M a.txt\n?? untracked.txt\n",
        "the user's edit is unstaged again, nothing else changed"
    );
    assert_eq!(
        repo.git(&["diff"])
            .lines()
            .filter(|l| l.starts_with(['+', '-']))
            .collect::<Vec<_>>(),
        [
            "--- a/a.txt",
            "+++ b/a.txt",
            "-keep",
            "+keep, with the user's edit"
        ]
    );
    fsck_clean(&repo, "reverted");

    // Redoing it (undo of the undo) commits what the patch committed, the edit included, and
    // undoing that again leaves the edit uncommitted once more.
    let u = patch_id(&r);
    undo(&repo, &[&u]).assert_code(0);
    assert_eq!(
        repo.git(&["show", "HEAD:a.txt"]),
        "ALPHA\nkeep, with the user's edit\n"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "?? untracked.txt\n");
    undo(&repo, &[]).assert_code(0);
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "alpha\nkeep\n");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        " M a.txt\n?? untracked.txt\n"
    );
    assert_original(&repo, "reverted again");
    fsck_clean(&repo, "reverted again");
}

#[test]
fn a_branch_patch_is_reverted_on_its_branch_only() {
    let repo = setup();
    let run = repo.apply(PATCH, &["--checks", "none", "--branch", "bot/fixups"]);
    run.assert_code(0);
    let tip = repo.git(&["rev-parse", "bot/fixups"]).trim().to_string();
    let mut before = repo.snapshot();
    before.remove("refs");
    let r = undo(&repo, &[]);
    r.assert_code(0);
    assert_eq!(r.json()["branch"], "bot/fixups");
    assert_eq!(repo.git(&["rev-parse", "bot/fixups^"]).trim(), tip);
    assert_eq!(repo.git(&["show", "bot/fixups:a.txt"]), "alpha\nkeep\n");
    assert_eq!(repo.git(&["show", "bot/fixups:e.txt"]), "doomed\n");
    assert!(
        repo.git(&["ls-tree", "bot/fixups", "f.sh"])
            .starts_with("100755")
    );
    assert!(repo.git(&["ls-tree", "-r", "bot/fixups", "new"]).is_empty());
    let mut after = repo.snapshot();
    after.remove("refs");
    assert_eq!(after, before, "working tree, index and HEAD untouched");
    fsck_clean(&repo, "branch reverted");
}

#[test]
fn a_file_changed_since_is_named_and_nothing_is_written() {
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none"]).assert_code(0);
    repo.write("g.sh", "#!/bin/sh\necho the user's later work\n");
    let before = repo.snapshot();
    let r = undo(&repo, &[]);
    r.assert_code(4);
    let json = r.json();
    assert_eq!(json["error"]["kind"], "changed_since");
    assert_eq!(json["changed_since"], serde_json::json!(["g.sh"]));
    assert!(json["patch_id"].is_null());
    assert_eq!(repo.snapshot(), before, "nothing changed");
    let human = repo.run(&["undo"]);
    human.assert_code(4);
    assert!(
        human.stdout.contains("changed since: g.sh"),
        "{}",
        human.stdout
    );

    // The same for a committed patch whose file a later commit changed.
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none", "--commit"])
        .assert_code(0);
    repo.write("new/dir/n.txt", "reborn\n");
    repo.git(&["commit", "-q", "-am", "touches the patch's file"]);
    let head = repo.head();
    let r = undo(&repo, &[]);
    r.assert_code(4);
    assert_eq!(
        r.json()["changed_since"],
        serde_json::json!(["new/dir/n.txt"])
    );
    assert_eq!(repo.head(), head);
    assert_patched_but(&repo, "new/dir/n.txt");
}

fn assert_patched_but(repo: &TestRepo, changed: &str) {
    assert_eq!(
        repo.read_str("a.txt"),
        "ALPHA\nkeep, with the user's edit\n"
    );
    assert!(!repo.exists("e.txt") && !repo.exists("f.sh"));
    assert!(repo.exists(changed));
}

#[test]
fn undoing_an_undo_redoes_and_the_history_says_which_is_in_effect() {
    let repo = setup();
    let id = patch_id(&repo.apply(PATCH, &["--checks", "none"]));
    let u1 = patch_id(&undo(&repo, &[]));
    assert_original(&repo, "undone");
    // Everything is undone: a bare `undo` says how to redo rather than guess.
    let r = undo(&repo, &[]);
    r.assert_code(3);
    assert_eq!(r.json()["error"]["kind"], "nothing_to_undo");
    // The original is already undone: it says by which.
    let r = undo(&repo, &[&id]);
    r.assert_code(4);
    assert_eq!(r.json()["error"]["kind"], "already_undone");
    assert!(r.stdout.contains(&u1));

    let redo = undo(&repo, &[&u1]);
    redo.assert_code(0);
    let redo_id = patch_id(&redo);
    assert_patched(&repo, "redone");
    let list = undo(&repo, &["--list"]).json();
    let patches = list["patches"].as_array().expect("patches");
    assert_eq!(patches.len(), 3);
    assert_eq!(patches[0]["patch_id"], redo_id.as_str());
    assert_eq!(patches[0]["kind"], "undo");
    assert_eq!(patches[1]["undone_by"], redo_id.as_str());
    assert!(
        patches[2]["undone_by"].is_null(),
        "the original is in effect again"
    );

    // A bare `undo` now takes the original (in effect again) back out.
    let again = undo(&repo, &[]);
    again.assert_code(0);
    assert_eq!(again.json()["undid"], id.as_str());
    assert_original(&repo, "undone again");
    fsck_clean(&repo, "undo of undo");
}

#[test]
fn a_committed_undo_of_an_undo_reapplies() {
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none", "--commit"])
        .assert_code(0);
    let u = patch_id(&undo(&repo, &[]));
    undo(&repo, &[&u]).assert_code(0);
    let msg = repo.git(&["log", "-1", "--format=%s"]);
    assert_eq!(msg.trim(), "Reapply \"rename and tidy\"");
    assert_eq!(repo.git(&["show", "HEAD:g.sh"]), "#!/bin/sh\necho gee\n");
    assert_patched(&repo, "reapplied");
    fsck_clean(&repo, "reapplied");
}

#[test]
fn an_unknown_id_lists_the_recent_ones() {
    let repo = setup();
    let r = undo(&repo, &[]);
    r.assert_code(3);
    assert_eq!(r.json()["error"]["kind"], "nothing_to_undo");
    let id = patch_id(&repo.apply(PATCH, &["--checks", "none"]));
    let r = undo(&repo, &["no-such-patch"]);
    r.assert_code(3);
    let json = r.json();
    assert_eq!(json["error"]["kind"], "unknown_patch");
    let help = json["error"]["help"].as_str().expect("help");
    assert!(
        help.contains(&id) && help.contains("rename and tidy"),
        "{help}"
    );
    // A unique prefix is enough.
    let prefix = &id[..id.len() - 2];
    let ok = undo(&repo, &[prefix]);
    ok.assert_code(0);
    assert_eq!(ok.json()["undid"], id.as_str());
}

#[test]
fn the_history_survives_gc_and_is_bounded() {
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none"]).assert_code(0);
    // The user's uncommitted a.txt exists in no commit: only the history keeps its blob.
    repo.git(&["gc", "-q", "--prune=now"]);
    undo(&repo, &[]).assert_code(0);
    assert_original(&repo, "undone after gc");

    for i in 0..52 {
        let (from, to) = if i % 2 == 0 {
            ("beta", "BETA")
        } else {
            ("BETA", "beta")
        };
        repo.apply(
            &format!("- {{file_path: b.txt, old_string: {from}, new_string: {to}}}\n"),
            &["--checks", "none"],
        )
        .assert_code(0);
    }
    let listed = undo(&repo, &["--list"]).json()["patches"]
        .as_array()
        .expect("patches")
        .len();
    assert_eq!(listed, 50);
    let pins = repo.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/patchgate/history/",
    ]);
    assert_eq!(pins.lines().count(), 50, "pruned entries are unpinned");
    fsck_clean(&repo, "pruned");
}

/// The undo history's pins, by name.
fn history_pins(repo: &TestRepo) -> Vec<String> {
    let out = repo.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/patchgate/history/",
    ]);
    out.lines().map(str::to_string).collect()
}

/// A history pin whose entry is gone (a crash between the two, or an entry file removed by hand)
/// is removed by the next apply, loose or packed; the pins of the entries are kept.
#[test]
fn history_pins_without_an_entry_are_removed_loose_or_packed() {
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none"]).assert_code(0);
    let kept = history_pins(&repo);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let space = kept[0]
        .rsplit_once('/')
        .expect("a pin's folder")
        .0
        .to_string();
    let oid = repo.git(&["rev-parse", &kept[0]]).trim().to_string();
    let packed = format!("{space}/1000000000-000000-1");
    repo.git(&["update-ref", &packed, &oid]);
    repo.git(&["pack-refs", "--all"]);
    let loose = format!("{space}/1000000000-000000-2");
    repo.git(&["update-ref", &loose, &oid]);
    // A damaged entry is never acted on: its pin stays with it.
    let damaged = format!("{space}/1000000000-000000-3");
    repo.git(&["update-ref", &damaged, &oid]);
    let damaged_entry = repo
        .path()
        .join(".git/patchgate/history/1000000000-000000-3.json");
    std::fs::write(&damaged_entry, "{ not an entry").expect("damaged entry");
    assert_eq!(history_pins(&repo).len(), 4);
    repo.apply(
        "- {file_path: b.txt, old_string: beta, new_string: BETA}\n",
        &["--checks", "none"],
    )
    .assert_code(0);
    let now = history_pins(&repo);
    assert_eq!(now.len(), 3, "{now:?}");
    assert!(now.contains(&kept[0]) && now.contains(&damaged), "{now:?}");
    assert!(!now.contains(&packed) && !now.contains(&loose), "{now:?}");
    std::fs::remove_file(&damaged_entry).expect("remove the damaged entry");
    undo(&repo, &[]).assert_code(0);
}

/// A history pin left alone (a run killed after its staging pinned the entry, before anything
/// else was written) is an interrupted transaction's leftover: the next run finds it and removes
/// it, even one that writes nothing; the entries' pins stay.
#[test]
fn a_history_pin_left_alone_is_removed_by_the_next_run() {
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none"]).assert_code(0);
    let kept = history_pins(&repo);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let (space, _) = kept[0].rsplit_once('/').expect("a pin's folder");
    let orphan = format!("{space}/1000000000-000000-9");
    let oid = repo.git(&["rev-parse", &kept[0]]).trim().to_string();
    repo.git(&["update-ref", &orphan, &oid]);
    repo.apply(
        "- {file_path: b.txt, old_string: beta, new_string: BETA}\n",
        &["--checks", "none", "--dry-run"],
    )
    .assert_code(0);
    assert_eq!(history_pins(&repo), kept);
    assert!(repo.leftovers().is_empty(), "{:?}", repo.leftovers());
}

/// A history entry written ahead by a run killed before it landed (a temp file in the history's
/// folder, its pin possibly not written yet) is found by the next run and removed, even by one
/// that writes nothing; the entries stay.
#[test]
fn an_entry_written_ahead_and_left_by_a_kill_is_removed_by_the_next_run() {
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none"]).assert_code(0);
    let history = repo.path().join(".git/patchgate/history");
    let listing = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&history)
            .expect("history folder")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let kept = listing();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let left = history.join(".1000000000-000000-9.json.patchgate-9-0.tmp");
    std::fs::write(&left, "{}\n").expect("write");
    repo.apply(
        "- {file_path: b.txt, old_string: beta, new_string: BETA}\n",
        &["--checks", "none", "--dry-run"],
    )
    .assert_code(0);
    assert_eq!(listing(), kept);
    assert!(repo.leftovers().is_empty(), "{:?}", repo.leftovers());
}

/// Undo fault points every mode passes through, and those of a revert commit.
const POINTS: &[&str] = &[
    "staged",
    "journaled",
    "before-verify",
    "before-switch",
    "after-switch",
    "history-pinned",
    "before-cleanup",
];
const COMMIT_POINTS: &[&str] = &["before-cas", "after-cas", "after-index"];

fn killed_undo(repo: &TestRepo, point: &str) -> bool {
    use std::os::unix::process::ExitStatusExt;
    let status = Command::new(BIN)
        .args(["undo", "--format", "json"])
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_ABORT_AT", point)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("undo runs");
    status.signal() == Some(libc::SIGKILL)
}

#[test]
fn kill_at_every_undo_point_then_recover() {
    let mut runs: Vec<(bool, &str)> = POINTS.iter().map(|p| (false, *p)).collect();
    runs.extend(POINTS.iter().chain(COMMIT_POINTS).map(|p| (true, *p)));
    let mut outcomes = Vec::new();
    for (commit, point) in runs {
        let label = format!("undo killed at {point} (commit: {commit})");
        let repo = setup();
        let mut args = vec!["--checks", "none"];
        if commit {
            args.push("--commit");
        }
        let id = patch_id(&repo.apply(PATCH, &args));
        let patched_head = repo.head();
        assert!(
            killed_undo(&repo, point),
            "{label}: the point was never reached"
        );
        repo.run(&["recover", "--format", "json"]).assert_code(0);
        let undone = !repo.exists("g.sh");
        if undone {
            assert_original(&repo, &label);
        } else {
            assert_patched(&repo, &label);
        }
        if commit {
            let moved = repo.head() != patched_head;
            assert_eq!(moved, undone, "{label}: the ref agrees with the files");
            let indexed = repo.git(&["ls-files", "g.sh"]);
            assert_eq!(indexed.is_empty(), undone, "{label}: the index agrees too");
            if undone {
                // The user's edit of a.txt, committed along by the patch, is not committed by
                // the revert, nor staged: the index entry follows the revert commit.
                assert_eq!(
                    repo.git(&["show", "HEAD:a.txt"]),
                    "alpha\nkeep\n",
                    "{label}"
                );
                assert_eq!(
                    repo.git(&["diff", "--cached", "--name-only"]),
                    "",
                    "{label}"
                );
            }
        }
        fsck_clean(&repo, &label);
        // The history agrees with the files: a rolled-forward undo is recorded, a rolled-back
        // one can simply be run again.
        let list = undo(&repo, &["--list"]).json();
        let original = list["patches"]
            .as_array()
            .expect("patches")
            .iter()
            .find(|p| p["patch_id"] == id.as_str())
            .cloned()
            .expect("the patch is listed");
        assert_eq!(original["undone_by"].is_string(), undone, "{label}: {list}");
        if !undone {
            undo(&repo, &[]).assert_code(0);
            assert_original(&repo, &format!("{label}, run again"));
            fsck_clean(&repo, &format!("{label}, run again"));
        }
        outcomes.push((point, undone, commit));
    }
    for (point, undone, commit) in &outcomes {
        if ["staged", "journaled", "before-verify"].contains(point) {
            assert!(!undone, "a kill before any switch rolls back ({point})");
        }
        // A working-tree undo lands when its history entry is written (the pin first).
        if !commit && ["after-switch", "history-pinned"].contains(point) {
            assert!(
                !undone,
                "a working-tree undo killed before it landed rolls back ({point})"
            );
        }
        let landed = ["after-cas", "after-index", "before-cleanup"].contains(point)
            || (*commit && *point == "history-pinned");
        if landed {
            assert!(
                undone,
                "a kill after the point of no return rolls forward ({point})"
            );
        }
    }
}

/// A repository moved (or copied) to another folder keeps its undo history: the pins are named
/// by a key that does not depend on where the repository is. (It was a hash of the git dir's
/// path: after a move every entry failed its check, `undo --list` refused to run, and the
/// history was never pruned again.) A linked worktree moved with `git worktree move` too.
#[test]
fn a_moved_repository_keeps_its_undo_history() {
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none"]).assert_code(0);
    let second = "edits:\n  - {file_path: b.txt, old_string: beta, new_string: BETA}\n";
    repo.apply(second, &["--checks", "none"]).assert_code(0);
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let moved = elsewhere.path().join("moved-here");
    std::fs::rename(repo.path(), &moved).expect("move the repository");
    let list = run_in(&moved, &["undo", "--list", "--format", "json"], None);
    // Put it back for the test repository's own clean-up whatever happens below.
    let back = || std::fs::rename(&moved, repo.path()).expect("move back");
    if list.code != 0 {
        back();
        panic!("undo --list after a move: {}", list.stdout);
    }
    let patches = list.json()["patches"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(patches.len(), 2, "{}", list.stdout);
    let undone = run_in(&moved, &["undo", "--format", "json"], None);
    let b = std::fs::read_to_string(moved.join("b.txt")).expect("b.txt");
    let undone_again = run_in(&moved, &["undo", "--format", "json"], None);
    let a = std::fs::read_to_string(moved.join("a.txt")).expect("a.txt");
    back();
    undone.assert_code(0);
    assert_eq!(b, "beta\n", "the newest patch undone in the new place");
    undone_again.assert_code(0);
    assert_eq!(a, "alpha\nkeep, with the user's edit\n");
    assert_original(&repo, "both patches undone after the move");

    // A linked worktree, moved by git.
    let main = TestRepo::new().file("w.txt", "one\n").commit();
    let wt_parent = tempfile::tempdir().expect("tempdir");
    let (wt, wt2) = (
        wt_parent.path().join("wt"),
        wt_parent.path().join("wt-moved"),
    );
    main.git(&[
        "worktree",
        "add",
        "-q",
        wt.to_str().expect("utf8"),
        "-b",
        "side",
    ]);
    let patch = "edits:\n  - {file_path: w.txt, old_string: one, new_string: ONE}\n";
    let pfile = wt_parent.path().join("p.yaml");
    std::fs::write(&pfile, patch).expect("patch");
    run_in(
        &wt,
        &["apply", pfile.to_str().expect("utf8"), "--checks", "none"],
        None,
    )
    .assert_code(0);
    main.git(&[
        "worktree",
        "move",
        wt.to_str().expect("utf8"),
        wt2.to_str().expect("utf8"),
    ]);
    run_in(&wt2, &["undo", "--format", "json"], None).assert_code(0);
    assert_eq!(
        std::fs::read_to_string(wt2.join("w.txt")).expect("w.txt"),
        "one\n"
    );
}

/// An entry an older version wrote, pinned under the namespace it named by the git dir's path,
/// is still recognised (and undone) where the repository is.
#[test]
fn a_history_entry_pinned_by_an_older_version_still_undoes() {
    let repo = setup();
    repo.apply(PATCH, &["--checks", "none"]).assert_code(0);
    let git_dir = std::fs::canonicalize(repo.path().join(".git")).expect("git dir");
    let legacy =
        crate::harness::sha256_hex(git_dir.as_os_str().as_encoded_bytes())[..16].to_string();
    let history = git_dir.join("patchgate/history");
    let entry_file = crate::harness::first_json_in(&history);
    let mut entry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&entry_file).expect("read")).expect("json");
    let old_pin = entry["pin"].as_str().expect("pin").to_string();
    let id = entry["patch_id"].as_str().expect("id").to_string();
    assert!(
        !old_pin.contains(&legacy),
        "the new namespace is not the path's"
    );
    let oid = repo.git(&["rev-parse", &old_pin]).trim().to_string();
    let legacy_pin = format!("refs/patchgate/history/{legacy}/{id}");
    repo.git(&["update-ref", &legacy_pin, &oid]);
    repo.git(&["update-ref", "-d", &old_pin]);
    entry["pin"] = serde_json::Value::String(legacy_pin);
    std::fs::write(
        &entry_file,
        serde_json::to_vec_pretty(&entry).expect("serialise"),
    )
    .expect("write");
    let list = repo.run(&["undo", "--list", "--format", "json"]);
    list.assert_code(0);
    repo.run(&["undo", "--format", "json"]).assert_code(0);
    assert_original(&repo, "undone from the older namespace");
}
