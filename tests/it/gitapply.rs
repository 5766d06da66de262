//! Unified diffs against `git apply` itself: real changes made with the file system and recorded
//! by the real `git diff` (modes, symlinks, copies, binary files, odd names, renames with edits,
//! deletions), applied by `git apply` in one clone and by patchgate in another. The trees must be
//! identical: every path's type, permission bits, content or link target, and git's tree id;
//! for `--commit` and `--branch`, the commit's `git ls-tree -r`. Then undo, recovery after a
//! kill, a traditional `diff -Nur`, and names with backslashes from YAML.

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use crate::harness::{BIN, TestRepo, git, git_try, run_in, sha256_hex};

/// Every path of a working tree (not `.git`): its type, permission bits and content or target.
fn tree_state(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read dir")
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p
                .strip_prefix(root)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            if rel == ".git" {
                continue;
            }
            let md = std::fs::symlink_metadata(&p).expect("lstat");
            if md.file_type().is_symlink() {
                let t = std::fs::read_link(&p).expect("readlink");
                out.insert(rel, format!("link -> {}", t.display()));
            } else if md.is_dir() {
                out.insert(format!("{rel}/"), "dir".into());
                walk(root, &p, out);
            } else {
                let bytes = std::fs::read(&p).expect("read");
                out.insert(
                    rel,
                    format!(
                        "file {:o} {}",
                        md.permissions().mode() & 0o777,
                        sha256_hex(&bytes)
                    ),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A clone of `base` with an identity, in its own temporary directory.
fn clone(base: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c");
    git(
        dir.path(),
        &["clone", "-q", base.to_str().expect("utf8"), "c"],
    );
    git(&path, &["config", "user.name", "Test"]);
    git(&path, &["config", "user.email", "test@example.com"]);
    (dir, path)
}

fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let p = root.join(rel);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(&p, content).expect("write");
}

fn chmod(root: &Path, rel: &str, mode: u32) {
    std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Deterministic bytes, a NUL and invalid UTF-8 among them: git treats them as binary.
fn binary(n: usize, seed: u32) -> Vec<u8> {
    let mut b: Vec<u8> = (0..n as u32)
        .map(|i| ((i.wrapping_mul(7).wrapping_add(seed)) % 251) as u8)
        .collect();
    b[0] = 0;
    b[1] = 0xff;
    b
}

const TAB: &str = "tab\there.txt";
const QUOTE: &str = "say \"hi\".txt";
const BACKSLASH: &str = "post\\image.txt";
const RENAMED_BACKSLASH: &str = "odd dir\\x/renamed é.txt";

/// The base repository, and the diff of the changes made on top of it (reset afterwards).
fn base_and_diff() -> (TestRepo, String) {
    let long: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let source: String = (1..=30)
        .map(|i| format!("def f{i}():\n    return {i}\n"))
        .collect();
    let repo = TestRepo::new()
        .file("README.md", "read me\n")
        .file("tool.sh", "#!/bin/sh\necho tool\n")
        .file("was_exec.sh", "#!/bin/sh\necho was\n")
        .file("scripts/old.sh", "#!/bin/sh\necho old\n")
        .file("data/v1.txt", "one\n")
        .file("data/v2.txt", "two\n")
        .file("src/orig.py", &source)
        .file("lib/engine.rs", &long)
        .file("sp ace.txt", "spaced\n")
        .file(BACKSLASH, "slash\nslash 2\nslash 3\nslash 4\n")
        .file("img/logo.bin", binary(3000, 3))
        .file("img/old.bin", binary(64, 9))
        .file("becomes-link.txt", "a file, then a link\n");
    let root = repo.path().to_path_buf();
    chmod(&root, "was_exec.sh", 0o755);
    chmod(&root, "scripts/old.sh", 0o755);
    symlink("data/v1.txt", root.join("cur")).expect("symlink");
    symlink("README.md", root.join("old-link")).expect("symlink");
    symlink("README.md", root.join("becomes-file")).expect("symlink");
    let repo = repo.commit();

    // The changes.
    chmod(&root, "tool.sh", 0o755);
    write(&root, "was_exec.sh", "#!/bin/sh\necho was, now plain\n");
    chmod(&root, "was_exec.sh", 0o644);
    write(&root, "bin/run me.sh", "#!/bin/sh\nexec ./tool.sh\n");
    chmod(&root, "bin/run me.sh", 0o755);
    std::fs::create_dir_all(root.join("links")).expect("mkdir");
    symlink("../README.md", root.join("links/to-readme")).expect("symlink");
    std::fs::remove_file(root.join("cur")).expect("rm");
    symlink("data/v2.txt", root.join("cur")).expect("symlink");
    std::fs::remove_file(root.join("old-link")).expect("rm");
    write(
        &root,
        "src/copy.py",
        source.replace("return 7\n", "return 7 * 7\n") + "def extra():\n    return 0\n",
    );
    let mut logo = binary(3000, 3);
    logo[1000..1004].copy_from_slice(b"PGPG");
    logo.extend_from_slice(b"tail");
    write(&root, "img/logo.bin", logo);
    write(&root, "img/new.bin", binary(700, 5));
    std::fs::remove_file(root.join("img/old.bin")).expect("rm");
    write(&root, TAB, "tabbed\n");
    write(&root, QUOTE, "quoted\n");
    write(&root, "ünïcode.txt", "unicode\n");
    write(&root, "sp ace.txt", "spaced, changed\n");
    std::fs::remove_file(root.join(BACKSLASH)).expect("rm");
    write(
        &root,
        RENAMED_BACKSLASH,
        "slash\nslash 2\nSLASH 3\nslash 4\n",
    );
    std::fs::remove_file(root.join("lib/engine.rs")).expect("rm");
    write(
        &root,
        "core/engine.rs",
        long.replace("line 20\n", "line twenty\n"),
    );
    std::fs::remove_file(root.join("scripts/old.sh")).expect("rm");
    // Type changes: `git diff` writes each as a deletion and a creation of the same path.
    std::fs::remove_file(root.join("becomes-file")).expect("rm");
    write(&root, "becomes-file", "a link, then a file\n");
    std::fs::remove_file(root.join("becomes-link.txt")).expect("rm");
    symlink("data/v1.txt", root.join("becomes-link.txt")).expect("symlink");

    repo.git(&["add", "-A"]);
    let diff = repo.git(&[
        "diff",
        "--cached",
        "--binary",
        "-M",
        "-C",
        "--find-copies-harder",
    ]);
    for wanted in [
        "old mode 100644\nnew mode 100755",
        "new file mode 100755",
        "new file mode 120000",
        "deleted file mode 120000",
        "deleted file mode 100755",
        "copy from src/orig.py",
        "rename from lib/engine.rs",
        "GIT binary patch\ndelta",
        "GIT binary patch\nliteral",
        "\"b/tab\\there.txt\"",
        "\"b/say \\\"hi\\\".txt\"",
        "\"a/post\\\\image.txt\"",
        "diff --git a/becomes-file b/becomes-file\ndeleted file mode 120000",
        "diff --git a/becomes-link.txt b/becomes-link.txt\nnew file mode 120000",
        "index ",
    ] {
        assert!(diff.contains(wanted), "the diff lacks `{wanted}`:\n{diff}");
    }
    repo.git(&["reset", "-q", "--hard"]);
    repo.git(&["clean", "-qfdx"]);
    (repo, diff)
}

fn patch_file(diff: &str) -> (tempfile::NamedTempFile, String) {
    let f = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(f.path(), diff).expect("write");
    let p = f.path().to_str().expect("utf8").to_string();
    (f, p)
}

#[test]
fn a_git_diff_gives_the_tree_git_apply_gives() {
    let (base, diff) = base_and_diff();
    let (patch, path) = patch_file(&diff);
    let (_g, by_git) = clone(base.path());
    let (ok, out) = git_try(&by_git, &["apply", &path]);
    assert!(ok, "git apply: {out}");
    let (_p, by_us) = clone(base.path());
    let before = tree_state(&by_us);
    let run = run_in(
        &by_us,
        &["apply", &path, "--checks", "none", "--format", "json"],
        None,
    );
    run.assert_code(0);
    let want = tree_state(&by_git);
    let got = tree_state(&by_us);
    assert_eq!(got, want, "{}", run.stdout);
    assert_ne!(got, before);
    // In git's own terms too: the same tree object.
    for d in [&by_git, &by_us] {
        git(d, &["add", "-A"]);
    }
    assert_eq!(git(&by_us, &["write-tree"]), git(&by_git, &["write-tree"]));

    // The report shows the modes.
    let report = run.json();
    let files = report["files"].as_array().expect("files");
    let mode_of = |path: &str| {
        files
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| f["mode"].clone())
            .unwrap_or_else(|| panic!("{path} not in {files:?}"))
    };
    assert_eq!(
        mode_of("tool.sh"),
        serde_json::json!({"old": "100644", "new": "100755"})
    );
    assert_eq!(
        mode_of("links/to-readme"),
        serde_json::json!({"old": null, "new": "120000"})
    );
    assert_eq!(
        mode_of("scripts/old.sh"),
        serde_json::json!({"old": "100755", "new": null})
    );
    assert!(
        files
            .iter()
            .any(|f| f["path"] == BACKSLASH || f["from"] == BACKSLASH)
    );

    // Undo puts back the base tree: modes, links, contents, and no leftover folder.
    let undo = run_in(&by_us, &["undo", "--format", "json"], None);
    undo.assert_code(0);
    git(&by_us, &["reset", "-q"]);
    assert_eq!(tree_state(&by_us), before, "{}", undo.stdout);
    drop(patch);
}

#[test]
fn commit_and_branch_give_the_commit_git_gives() {
    let (base, diff) = base_and_diff();
    let (patch, path) = patch_file(&diff);
    let (_g, by_git) = clone(base.path());
    let (ok, out) = git_try(&by_git, &["apply", "--index", &path]);
    assert!(ok, "git apply: {out}");
    git(&by_git, &["commit", "-qm", "by git"]);
    let want = git(&by_git, &["ls-tree", "-r", "HEAD"]);

    let (_c, committed) = clone(base.path());
    run_in(
        &committed,
        &[
            "apply", &path, "--checks", "none", "--commit", "-m", "by us",
        ],
        None,
    )
    .assert_code(0);
    assert_eq!(git(&committed, &["ls-tree", "-r", "HEAD"]), want);
    assert_eq!(git(&committed, &["status", "--porcelain"]), "");
    assert_eq!(tree_state(&committed), tree_state(&by_git));

    let (_b, branched) = clone(base.path());
    let before = tree_state(&branched);
    run_in(
        &branched,
        &[
            "apply", &path, "--checks", "none", "--branch", "bot/x", "-m", "x",
        ],
        None,
    )
    .assert_code(0);
    assert_eq!(git(&branched, &["ls-tree", "-r", "bot/x"]), want);
    assert_eq!(
        tree_state(&branched),
        before,
        "--branch leaves the tree alone"
    );

    // Undo of the commit: a revert commit whose tree is the base's.
    run_in(&committed, &["undo"], None).assert_code(0);
    assert_eq!(
        git(&committed, &["ls-tree", "-r", "HEAD"]),
        git(base.path(), &["ls-tree", "-r", "HEAD"])
    );
    assert_eq!(git(&committed, &["status", "--porcelain"]), "");
    drop(patch);
}

/// A run killed after its first path switched (a pure mode change), then recovered: the whole
/// batch is in the old or the new state, the executable bits and links included.
#[test]
fn a_kill_mid_switch_recovers_modes_and_links() {
    use std::os::unix::process::ExitStatusExt;
    let diff = "\
diff --git a/a.sh b/a.sh
old mode 100644
new mode 100755
diff --git a/b.sh b/b.sh
new file mode 100755
--- /dev/null
+++ b/b.sh
@@ -0,0 +1 @@
+echo b
diff --git a/c b/c
new file mode 120000
--- /dev/null
+++ b/c
@@ -0,0 +1 @@
+a.sh
\\ No newline at end of file
";
    // Neither had landed (a working-tree run lands with its history entry, a commit with its
    // ref): both roll back, the mode of a.sh, the created file and the link included.
    for commit in [false, true] {
        let repo = TestRepo::new().file("a.sh", "echo a\n").commit();
        let old = tree_state(repo.path());
        let (_f, path) = patch_file(diff);
        let mut args = vec!["apply", path.as_str(), "--checks", "none"];
        if commit {
            args.push("--commit");
        }
        let status = std::process::Command::new(BIN)
            .args(&args)
            .current_dir(repo.path())
            .env("PATCHGATE_FAULT_ABORT_AT", "after-switch")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("run");
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "killed at after-switch"
        );
        let mid = tree_state(repo.path());
        assert_ne!(mid, old, "the first path was switched before the kill");
        run_in(repo.path(), &["recover"], None).assert_code(0);
        assert_eq!(tree_state(repo.path()), old, "commit: {commit}");
    }
}

/// `diff -Nur old new`, made by GNU diff between two folders: epoch dates for created and deleted
/// files, timestamps after tabs, quoted names with spaces.
#[test]
fn a_traditional_diff_gives_the_tree_git_apply_gives() {
    let files = [
        ("keep.txt", "a\nb\nc\n"),
        ("my notes.txt", "one\ntwo\n"),
        ("gone.txt", "bye\n"),
        ("lib/util.c", "int f(void) {\n    return 1;\n}\n"),
    ];
    let mut repo = TestRepo::new();
    for (p, c) in files {
        repo = repo.file(p, c);
    }
    let repo = repo.commit();
    let work = tempfile::tempdir().expect("tempdir");
    let old = work.path().join("old");
    let new = work.path().join("new");
    for d in [&old, &new] {
        for (p, c) in files {
            write(d, p, c);
        }
    }
    write(&new, "keep.txt", "a\nB\nc\n");
    write(&new, "my notes.txt", "one\nTWO\n");
    std::fs::remove_file(new.join("gone.txt")).expect("rm");
    write(&new, "lib/util.c", "int f(void) {\n    return 2;\n}\n");
    write(&new, "fresh file.txt", "brand\nnew\n");
    let out = std::process::Command::new("diff")
        .args(["-Nur", "old", "new"])
        .current_dir(work.path())
        .output()
        .expect("GNU diff");
    let diff = String::from_utf8(out.stdout).expect("utf8");
    assert!(diff.contains("1970-01-01 00:00:00"), "{diff}");
    let (_f, path) = patch_file(&diff);
    let (_g, by_git) = clone(repo.path());
    let (ok, msg) = git_try(&by_git, &["apply", &path]);
    assert!(ok, "git apply: {msg}");
    let (_p, by_us) = clone(repo.path());
    let run = run_in(&by_us, &["apply", &path, "--checks", "none"], None);
    run.assert_code(0);
    assert_eq!(tree_state(&by_us), tree_state(&by_git), "{}", run.stdout);
}

/// A traditional diff made inside a folder of the repository names its files from that folder;
/// run from there, patchgate puts them where `git apply` does, and a `diff --git` (named from
/// the root) still lands at the root. `--directory` does the same from the root.
#[test]
fn a_diff_made_in_a_folder_lands_where_git_apply_puts_it() {
    let repo = TestRepo::new()
        .file("src/pkg/x.py", "a = 1\nb = 2\n")
        .file("pkg/x.py", "a = 1\nb = 2\n")
        .commit();
    let work = tempfile::tempdir().expect("tempdir");
    write(&work.path().join("old"), "pkg/x.py", "a = 1\nb = 2\n");
    write(&work.path().join("new"), "pkg/x.py", "a = 1\nb = 3\n");
    let out = std::process::Command::new("diff")
        .args(["-Nur", "old", "new"])
        .current_dir(work.path())
        .output()
        .expect("GNU diff");
    let (_f, path) = patch_file(&String::from_utf8(out.stdout).expect("utf8"));
    let (_g, by_git) = clone(repo.path());
    let (ok, msg) = git_try(&by_git.join("src"), &["apply", &path]);
    assert!(ok, "git apply: {msg}");
    assert_eq!(
        std::fs::read_to_string(by_git.join("src/pkg/x.py")).expect("read"),
        "a = 1\nb = 3\n"
    );
    let (_p, by_us) = clone(repo.path());
    run_in(
        &by_us.join("src"),
        &["apply", &path, "--checks", "none"],
        None,
    )
    .assert_code(0);
    assert_eq!(tree_state(&by_us), tree_state(&by_git));
    let (_d, by_dir) = clone(repo.path());
    run_in(
        &by_dir,
        &["apply", &path, "--directory", "src", "--checks", "none"],
        None,
    )
    .assert_code(0);
    assert_eq!(tree_state(&by_dir), tree_state(&by_git));
    // A `diff --git` is named from the root wherever it is applied from.
    let git_diff = "diff --git a/pkg/x.py b/pkg/x.py\n--- a/pkg/x.py\n+++ b/pkg/x.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 4\n";
    let (_h, git_path) = patch_file(git_diff);
    let (_q, root_diff) = clone(repo.path());
    run_in(
        &root_diff.join("src"),
        &["apply", &git_path, "--checks", "none"],
        None,
    )
    .assert_code(0);
    assert_eq!(
        std::fs::read_to_string(root_diff.join("pkg/x.py")).expect("read"),
        "a = 1\nb = 4\n"
    );
}

/// A backslash in a path is part of the file's name, from a diff and from a YAML patch alike.
#[test]
fn backslashes_name_one_file() {
    let repo = TestRepo::new().file("README.md", "r\n").commit();
    let yaml = "edits:\n  - {file_path: 'docs\\notes.txt', create: true, new_string: \"n\\n\"}\n";
    repo.apply(yaml, &["--checks", "none"]).assert_code(0);
    assert!(repo.path().join("docs\\notes.txt").is_file());
    assert!(!repo.path().join("docs").exists(), "no folder `docs`");
    let diff = "diff --git \"a/post\\\\image.txt\" \"b/post\\\\image.txt\"\nnew file mode 100644\n\
--- /dev/null\n+++ \"b/post\\\\image.txt\"\n@@ -0,0 +1 @@\n+img\n";
    repo.apply(diff, &["--checks", "none"]).assert_code(0);
    assert_eq!(repo.read_str("post\\image.txt"), "img\n");
    assert!(!repo.path().join("post").exists(), "no folder `post`");
    // And editing it later finds that file.
    let edit = "edits:\n  - {file_path: 'post\\image.txt', old_string: img, new_string: IMG}\n";
    repo.apply(edit, &["--checks", "none"]).assert_code(0);
    assert_eq!(repo.read_str("post\\image.txt"), "IMG\n");
}

/// The report's diffs, applied by `git apply` to the tree before the patch, give the tree the
/// patch gave. A batch's files are diffed only where the planner changed them (and a large batch's
/// files are read and planned on every core): changes at a file's first and last line, a last
/// line without a line break, changes a line apart and far apart, and a blank line removed from a
/// run of blank lines (a change a diff can show in more than one place).
#[test]
fn the_reports_diffs_applied_by_git_apply_give_the_patched_tree() {
    let mut base = TestRepo::new();
    let mut patch = String::from("edits:\n");
    let mut edit = |path: &str, old: &str, new: &str| {
        patch.push_str(&format!(
            "  - file_path: {path}\n    old_string: {old:?}\n    new_string: {new:?}\n"
        ));
    };
    for d in 0..3 {
        for f in 0..8 {
            let path = format!("pkg{d}/m{f}.py");
            let body: String = (0..60)
                .map(|i| format!("def f{d}_{f}_{i}(x):\n    return g{i}(x)\n\n"))
                .collect();
            let body = match f {
                // No line break at the end, and a run of blank lines in the middle.
                0 => {
                    let at = format!("\n\ndef f{d}_0_30");
                    let run = format!("\n\n\n\ndef f{d}_0_30");
                    format!("{}\n\n\nlast = {f}", body.replace(&at, &run))
                }
                _ => body,
            };
            base = base.file(&path, &body);
            edit(
                &path,
                &format!("def f{d}_{f}_0(x):"),
                &format!("def first_{d}_{f}(x):"),
            );
            edit(
                &path,
                &format!("return g10(x)\n\ndef f{d}_{f}_11"),
                &format!("return h10(x)\n\ndef f{d}_{f}_11"),
            );
            edit(
                &path,
                "    return g12(x)\n",
                "    y = 1\n    return g12(x, y)\n",
            );
            if f == 0 {
                let run = format!("\n\n\n\ndef f{d}_0_30");
                edit(&path, &run, &run[1..]);
                edit(&path, "last = 0", "last = 0\nmore = 1");
            } else {
                edit(&path, "    return g59(x)\n\n", "    return g59(x)\n");
            }
        }
    }
    let base = base.commit();
    let (_p, by_us) = clone(base.path());
    let before = tree_state(&by_us);
    let (_patch, path) = patch_file(&patch);
    let run = run_in(
        &by_us,
        &["apply", &path, "--checks", "none", "--format", "json"],
        None,
    );
    run.assert_code(0);
    let report = run.json();
    let files = report["files"].as_array().expect("files");
    assert_eq!(files.len(), 24, "{report:#}");
    let diffs: String = files
        .iter()
        .map(|f| f["diff"].as_str().expect("diff"))
        .collect();
    let (_d, diff_path) = patch_file(&diffs);
    let (_g, by_git) = clone(base.path());
    let (ok, out) = git_try(&by_git, &["apply", &diff_path]);
    assert!(ok, "git apply of the report's diffs: {out}\n{diffs}");
    let got = tree_state(&by_us);
    assert_ne!(got, before);
    assert_eq!(tree_state(&by_git), got, "{diffs}");
    // `git apply` finds a hunk a few lines from where its header says: the headers are checked
    // here, each side's lines exactly where its start line puts them.
    for f in files {
        let path = f["path"].as_str().expect("path");
        let old = std::fs::read_to_string(base.path().join(path)).expect("read");
        let new = std::fs::read_to_string(by_us.join(path)).expect("read");
        assert_hunks_in_place(f["diff"].as_str().expect("diff"), &old, &new);
    }
}

/// Fails unless every hunk of `diff` has its old lines in `old` and its new lines in `new` at
/// the start lines its header gives.
fn assert_hunks_in_place(diff: &str, old: &str, new: &str) {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut lines = diff.lines().skip_while(|l| !l.starts_with("@@")).peekable();
    while let Some(header) = lines.next() {
        let ranges: Vec<(usize, usize)> = header
            .trim_start_matches("@@ ")
            .split(" @@")
            .next()
            .expect("ranges")
            .split(' ')
            .map(|r| {
                let (start, len) = r[1..].split_once(',').unwrap_or((&r[1..], "1"));
                (start.parse().expect("start"), len.parse().expect("len"))
            })
            .collect();
        let (mut old_side, mut new_side) = (Vec::new(), Vec::new());
        while let Some(l) = lines.next_if(|l| !l.starts_with("@@")) {
            match l.split_at(1) {
                (" ", t) => {
                    old_side.push(t);
                    new_side.push(t);
                }
                ("-", t) => old_side.push(t),
                ("+", t) => new_side.push(t),
                _ => {}
            }
        }
        for ((start, len), (side, text)) in
            ranges.into_iter().zip([(old_side, &old), (new_side, &new)])
        {
            assert_eq!(side.len(), len, "{header}\n{diff}");
            let from = if len == 0 { start } else { start - 1 };
            assert_eq!(text[from..from + len], side[..], "{header}\n{diff}");
        }
    }
}
