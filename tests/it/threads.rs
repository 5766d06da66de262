//! What a small patch starts: no thread pool.
//!
//! rayon's global pool starts on a process's first parallel iterator (a thread per core, each
//! spinning before it sleeps), which for an agent's one-file patch cost more than the work it
//! shared (BENCHMARKS.md (t)). A miss and a `--dry-run` of one file start no thread but the one
//! that finds the repository while the patch is parsed (`discover`, which ends before the plan;
//! BENCHMARKS.md (y)); a batch large enough to share still starts the pool. Counted under
//! `strace`, not timed.

use crate::harness::TestRepo;
use std::path::Path;

/// The threads `patchgate <args>` started in `dir` (its `clone`/`clone3` calls) besides the
/// repository's discovery (the thread that names itself `discover`, seen once at most), with its
/// exit code; `None` when strace is missing outside CI (in CI a missing strace fails the test).
fn threads_started(dir: &Path, args: &[&str]) -> Option<(usize, i32)> {
    let (text, run) = crate::checks::traced(dir, "clone,clone3,prctl", args)?;
    let clones = text
        .lines()
        .filter(|l| l.contains("clone(") || l.contains("clone3("))
        .count();
    let discovery = text
        .lines()
        .filter(|l| l.contains("PR_SET_NAME, \"discover\""))
        .count();
    assert!(
        discovery <= 1,
        "the repository was looked for {discovery} times"
    );
    Some((clones.saturating_sub(discovery), run.code))
}

/// A file of `lines` numbered lines.
fn numbered(lines: usize) -> String {
    (1..=lines)
        .map(|i| format!("value_{i} = compute({i})\n"))
        .collect()
}

fn one_file_repo() -> TestRepo {
    TestRepo::new().file("big.py", numbered(3_000)).commit()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write patch");
    p.to_str().expect("utf8").to_string()
}

#[test]
fn a_one_file_miss_and_dry_run_start_no_thread() {
    let repo = one_file_repo();
    let scratch = tempfile::tempdir().expect("tempdir");
    // The miss: one line of the block recalled wrong, so the whole ladder runs.
    let miss = write(
        scratch.path(),
        "miss.yaml",
        "edits:\n  - file_path: big.py\n    old_string: \"value_1500 = compute(1500)\\nvalue_1501 = compute(9999)\\nvalue_1502 = compute(1502)\\n\"\n    new_string: \"x = 1\\n\"\n",
    );
    let hit = write(
        scratch.path(),
        "hit.yaml",
        "edits:\n  - file_path: big.py\n    old_string: \"value_1500 = compute(1500)\\n\"\n    new_string: \"value_1500 = compute(1500) + 1\\n\"\n",
    );
    for (patch, code) in [(&miss, 2), (&hit, 0)] {
        for format in ["json", "human"] {
            let args = [
                "apply",
                patch.as_str(),
                "--checks",
                "none",
                "--dry-run",
                "--format",
                format,
            ];
            let Some((threads, got)) = threads_started(repo.path(), &args) else {
                return;
            };
            assert_eq!(got, code, "{args:?}");
            assert_eq!(threads, 0, "{args:?} started {threads} threads");
        }
    }
    assert_eq!(repo.read_str("big.py"), numbered(3_000), "a dry run wrote");
}

#[test]
fn a_batch_over_many_files_still_shares_its_work() {
    // 40 files of 60 KB: 2.4 MB of old and 2.4 MB of new contents to hash and diff, above the
    // size under which the work stays on one thread.
    let mut repo = TestRepo::new();
    let mut edits = String::from("edits:\n");
    for f in 0..40 {
        repo = repo.file(&format!("m{f}.py"), numbered(2_500));
        edits.push_str(&format!(
            "  - file_path: m{f}.py\n    old_string: \"value_7 = compute(7)\\n\"\n    new_string: \"value_7 = compute(8)\\n\"\n"
        ));
    }
    let repo = repo.commit();
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch = write(scratch.path(), "batch.yaml", &edits);
    let args = ["apply", patch.as_str(), "--checks", "none", "--dry-run"];
    let Some((threads, code)) = threads_started(repo.path(), &args) else {
        return;
    };
    assert_eq!(code, 0);
    assert!(threads > 0, "a 40-file batch ran on one thread");
}
