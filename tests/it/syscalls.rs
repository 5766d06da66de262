//! What a batch asks of the file system, counted under `strace` (not timed): each file's content
//! is read in two calls (its size, then the end), the write-back opens each folder once to verify
//! the batch, not once per file, asks an open folder's identity once, looks once at each folder
//! the journal checks is there, and checks a folder at the top before each rename with one
//! `lstat` rather than opening it again.
//!
//! The write-back does not read a file again when its stamp shows it unchanged since the plan
//! read it.
//!
//! A 1,000-edit batch over 200 files made about 10,000 system calls (BENCHMARKS.md (u)); these
//! are the ones that were pure repetition.

use crate::harness::TestRepo;
use std::collections::HashMap;

/// A file of about 20 KB: more than the 8 KiB a read without a size hint starts with.
fn content(f: usize) -> String {
    (0..600)
        .map(|i| format!("value_{f}_{i} = compute({i})\n"))
        .collect()
}

#[test]
fn a_batch_reads_each_file_in_two_calls_and_opens_each_folder_once_to_verify() {
    let (folders, per_folder) = (3, 8);
    let mut repo = TestRepo::new();
    let mut edits = String::from("edits:\n");
    for d in 0..folders {
        for f in 0..per_folder {
            let n = d * per_folder + f;
            repo = repo.file(&format!("pkg{d}/m{f}.py"), content(n));
            edits.push_str(&format!(
                "  - file_path: pkg{d}/m{f}.py\n    old_string: \"value_{n}_300 = compute(300)\\n\"\n    new_string: \"value_{n}_300 = compute(301)\\n\"\n"
            ));
        }
    }
    let repo = repo.commit();
    // The files' last change must be a tick of the coarse clock (4 ms here) older than the run
    // for their stamps to prove them unchanged to the write-back (src/fs/stamp.rs).
    std::thread::sleep(std::time::Duration::from_millis(30));
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch = scratch.path().join("p.yaml");
    std::fs::write(&patch, edits).expect("write patch");
    let args = [
        "apply",
        patch.to_str().expect("utf8"),
        "--checks",
        "none",
        "--format",
        "json",
    ];
    let calls = "openat,openat2,read,fstat,newfstatat";
    let Some((log, run)) = crate::checks::traced(repo.path(), calls, &args) else {
        return;
    };
    assert_eq!(run.code, 0, "{log}");
    let root = std::fs::canonicalize(repo.path()).expect("canonical root");
    let root = root.to_str().expect("utf8");

    // Reads of each patched file (its own path, not a temp file's), against its opens.
    let mut opens: HashMap<String, usize> = HashMap::new();
    let mut reads: HashMap<String, usize> = HashMap::new();
    for line in log.lines() {
        for d in 0..folders {
            for f in 0..per_folder {
                let name = format!("m{f}.py");
                let path = format!("{root}/pkg{d}/{name}>");
                let key = format!("pkg{d}/{name}");
                if line.contains("openat(") && line.contains(&format!("/pkg{d}>, \"{name}\"")) {
                    *opens.entry(key.clone()).or_default() += 1;
                }
                if line.contains("read(") && line.contains(&path) {
                    *reads.entry(key).or_default() += 1;
                }
            }
        }
    }
    assert_eq!(
        opens.len(),
        folders * per_folder,
        "every file opened: {opens:?}"
    );
    // Each file's content is read once, by the plan: the write-back's verification and the switch
    // find it unchanged by its stamp, where the file system's times can tell (read three times
    // before, and still where they cannot).
    let most = if stamps_are_proof(repo.path()) { 1 } else { 3 };
    for (file, n) in &opens {
        assert!(
            *n <= most,
            "{file} opened {n} times by name (at most {most})"
        );
        let r = reads.get(file).copied().unwrap_or(0);
        assert!(r >= *n, "{file}: {r} reads for {n} opens");
        assert!(
            r <= 2 * n,
            "{file}: {r} reads for {n} opens (more than the content and the end)"
        );
    }

    // Opens of each folder by name from the root: the plan's reads, the verification and the
    // temp files share one. Per file as well before: one more open per file, and the switch's
    // walk of the path, which for a folder at the top is now one `lstat` from the root (that
    // check stays per file).
    for d in 0..folders {
        let needle = format!(", \"pkg{d}\"");
        let n = log
            .lines()
            .filter(|l| (l.contains("openat2(") || l.contains("openat(")) && l.contains(&needle))
            .count();
        assert!(n <= 4, "pkg{d} opened {n} times for {per_folder} files");
        // The journal lists the folders the batch would create: each existing one is looked at
        // once, not once per file in it; the switch looks once per file.
        let looked = log
            .lines()
            .filter(|l| l.contains("newfstatat(") && l.contains(&format!(", \"pkg{d}\",")))
            .count();
        assert!(
            looked <= per_folder + 2,
            "pkg{d} looked at {looked} times by name for {per_folder} files"
        );
        // The switch compares the folder found by the path with the one held open: the held
        // one's identity is asked once, not once per file.
        let dir_fd = format!("{root}/pkg{d}>,");
        let stats = log
            .lines()
            .filter(|l| l.contains("fstat(") && !l.contains("newfstatat(") && l.contains(&dir_fd))
            .count();
        assert!(
            (1..=per_folder + 3).contains(&stats),
            "pkg{d}'s descriptors fstat-ed {stats} times for {per_folder} files"
        );
    }
    assert!(
        repo.read_str("pkg0/m0.py")
            .contains("value_0_300 = compute(301)\n"),
        "the batch applied"
    );
}

/// Whether `dir` is on a file system whose stamps patchgate trusts (src/fs/stamp.rs): local, with
/// times in nanoseconds.
fn stamps_are_proof(dir: &std::path::Path) -> bool {
    let Ok(out) = std::process::Command::new("stat")
        .args(["-f", "-c", "%t"])
        .arg(dir)
        .output()
    else {
        return false;
    };
    let magic = String::from_utf8_lossy(&out.stdout).trim().to_lowercase();
    [
        "ef53", "58465342", "9123683e", "1021994", "f2f52010", "2fc12fc1", "794c7630",
    ]
    .contains(&magic.as_str())
}

/// With a full undo history (fifty entries, each with its pin ref), an apply looks for orphan
/// pins by listing their folder: it opens no other pin than its own and the one it prunes
/// (libgit2's reference iterator opened and read all fifty, names only or not).
#[test]
fn an_apply_with_a_full_history_lists_the_pins_without_opening_them() {
    let repo = TestRepo::new().file("f.txt", "zero\n").commit();
    let words = ["zero", "one"];
    for i in 0..52 {
        let (from, to) = (words[i % 2], words[(i + 1) % 2]);
        repo.apply(
            &format!(
                "- {{file_path: f.txt, old_string: \"{from}\\n\", new_string: \"{to}\\n\"}}\n"
            ),
            &["--checks", "none"],
        )
        .assert_code(0);
    }
    let history = repo.path().join(".git/patchgate/history");
    assert_eq!(std::fs::read_dir(&history).expect("history").count(), 50);
    let Some(log) = traced_change_of_f(repo.path(), "two", "openat") else {
        return;
    };
    // A pin file opened: `refs/patchgate/history/<key>/<id>` (or its lock), not the folder.
    let opened: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("refs/patchgate/history/") && !l.contains("O_DIRECTORY"))
        .filter(|l| {
            l.split('"')
                .nth(1)
                .and_then(|p| p.split("refs/patchgate/history/").nth(1))
                .is_some_and(|rest| rest.contains('/'))
        })
        .collect();
    // This run's pin (its lock file and its folder's sync) and the pruned entry's pin (read,
    // then deleted under its lock): a handful, never one per entry.
    assert!(
        opened.len() <= 6,
        "{} pin files opened:\n{}",
        opened.len(),
        opened.join("\n")
    );
    let pins = repo.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/patchgate/history/",
    ]);
    assert_eq!(pins.lines().count(), 50, "{pins}");
}

/// The descriptor table is grown to 1,024 slots (or the soft limit) while the process has one
/// thread: grown later, with the discovery, staging and pool threads sharing it, each doubling
/// waits for an RCU grace period (src/fdtable.rs), which made a 200-file batch started by
/// `sh -c` from Python take twice as long.
#[test]
fn the_descriptor_table_is_grown_before_the_first_thread_starts() {
    let repo = TestRepo::new().file("f.txt", "zero\n").commit();
    let Some(log) = traced_change_of_f(repo.path(), "one", "fcntl,clone,clone3") else {
        return;
    };
    // SAFETY: getrlimit fills the struct it is given; the child inherits this soft limit.
    let soft = unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur
    };
    let top = soft.min(1024) - 1;
    let lines: Vec<&str> = log.lines().collect();
    let grown = lines
        .iter()
        .position(|l| l.contains(&format!("F_DUPFD_CLOEXEC, {top}) = {top}")))
        .unwrap_or_else(|| panic!("no descriptor made at {top}:\n{log}"));
    let first_thread = lines
        .iter()
        .position(|l| l.contains("clone(") || l.contains("clone3("))
        .unwrap_or_else(|| panic!("no thread started:\n{log}"));
    assert!(
        grown < first_thread,
        "the table grew after a thread started:\n{log}"
    );
}

/// The calls `traced` of an apply in `dir` that changes `f.txt`'s line `zero` to `to` (the run
/// must succeed); `None` when strace is missing outside CI.
fn traced_change_of_f(dir: &std::path::Path, to: &str, traced: &str) -> Option<String> {
    let scratch = tempfile::tempdir().expect("tempdir");
    let patch = scratch.path().join("p.yaml");
    std::fs::write(
        &patch,
        format!("- {{file_path: f.txt, old_string: \"zero\\n\", new_string: \"{to}\\n\"}}\n"),
    )
    .expect("write patch");
    let args = ["apply", patch.to_str().expect("utf8"), "--checks", "none"];
    let (log, run) = crate::checks::traced(dir, traced, &args)?;
    assert_eq!(run.code, 0, "{log}");
    Some(log)
}
