//! The input formats agents write, end to end: a diff made by the real `git diff` applies to the
//! tree it was made from and gives back the changed tree, and each documented behaviour of the
//! codex envelope converts and applies.

use crate::harness::{TestRepo, files_of};

/// Makes changes with the file system, records them with `git diff`, restores the tree, and
/// applies the diff with patchgate: the result must be byte for byte the changed tree.
#[test]
fn a_real_git_diff_applies_back() {
    let mut long = String::new();
    for i in 1..=60 {
        long.push_str(&format!("line {i}\n"));
    }
    let repo = TestRepo::new()
        .file("src/long.txt", &long)
        .file("dos.txt", "one\r\ntwo\r\nthree\r\n")
        .file("no_eol.txt", "alpha\nbeta")
        .file("gets_eol.txt", "x\ny")
        .file("loses_eol.txt", "p\nq\n")
        .file("gone.txt", "remove me\n")
        .file(
            "old/module.txt",
            "header\nbody 1\nbody 2\nbody 3\nbody 4\nbody 5\nbody 6\nbody 7\nfooter\n",
        )
        .file("empty.txt", "")
        .commit();

    // The changes.
    let mut changed = long.replace("line 3\n", "line three\n");
    changed = changed.replace("line 30\nline 31\n", "line 30\n");
    changed = changed.replace("line 58\n", "line 58\nline 58.5\n");
    repo.write("src/long.txt", &changed);
    repo.write("dos.txt", "one\r\nTWO\r\nthree\r\n");
    repo.write("no_eol.txt", "alpha\nBETA");
    repo.write("gets_eol.txt", "x\ny\n");
    repo.write("loses_eol.txt", "p\nq");
    std::fs::remove_file(repo.path().join("gone.txt")).expect("rm");
    std::fs::remove_file(repo.path().join("old/module.txt")).expect("rm");
    repo.write(
        "new/module.txt",
        "header\nbody 1\nbody 2\nbody 3\nbody 4\nbody 5\nbody 6\nbody 7\nFOOTER\n",
    );
    repo.write("brand/new.txt", "fresh\nfile\n");
    repo.write("empty.txt", "now filled\n");
    let want = files_of(repo.path());

    repo.git(&["add", "-A"]);
    let diff = repo.git(&["diff", "--cached", "-M"]);
    assert!(diff.contains("rename from old/module.txt"), "{diff}");
    assert!(diff.contains("\\ No newline at end of file"), "{diff}");
    assert!(diff.contains("new file mode"), "{diff}");
    assert!(diff.contains("deleted file mode"), "{diff}");
    repo.git(&["reset", "-q", "--hard"]);
    assert_ne!(files_of(repo.path()), want);

    let run = repo.apply(&diff, &["--checks", "none"]);
    run.assert_code(0);
    let got = files_of(repo.path());
    for (k, v) in &want {
        assert_eq!(
            got.get(k).map(|b| String::from_utf8_lossy(b).into_owned()),
            Some(String::from_utf8_lossy(v).into_owned()),
            "{k}\n{}",
            run.stdout
        );
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    // git agrees: recording the applied tree gives back the very same diff.
    repo.git(&["add", "-A"]);
    assert_eq!(repo.git(&["diff", "--cached", "-M"]), diff);
}

/// codex's documented behaviours, one patch: add, delete, update with several `@@` anchors (one a
/// chain narrowing class then method), move, and an end-of-file chunk.
#[test]
fn codex_documented_behaviours_convert_and_apply() {
    let service = "\
class Reader:
    def load(self):
        data = fetch()
        return data

class Writer:
    def load(self):
        data = fetch()
        return data

    def save(self):
        pass
";
    let repo = TestRepo::new()
        .file("pkg/service.txt", service)
        .file("pkg/obsolete.txt", "old\n")
        .file("pkg/config.txt", "name = x\nlevel = 1\n")
        .file("notes.txt", "start\nmiddle\nend\n")
        .commit();
    let patch = "\
*** Begin Patch
*** Add File: pkg/added.txt
+first line
+second line
*** Delete File: pkg/obsolete.txt
*** Update File: pkg/service.txt
@@ class Writer:
@@     def load(self):
         data = fetch()
-        return data
+        return data.strip()
@@     def save(self):
-        pass
+        store()
*** Update File: pkg/config.txt
*** Move to: pkg/settings.txt
@@
 name = x
-level = 1
+level = 2
*** Update File: notes.txt
@@
 middle
-end
+the end
*** End of File
*** End Patch
";
    let run = repo.apply(patch, &["--checks", "none"]);
    run.assert_code(0);
    let report = run.json();
    let edits = report["edits"].as_array().expect("edits");
    assert_eq!(edits.len(), 7, "{report}");
    assert_eq!(
        edits[2]["hunk"]["header"], "@@ class Writer: @@     def load(self):",
        "{report}"
    );
    assert_eq!(edits[2]["lines"][0][0], 8, "the anchors picked Writer.load");

    assert_eq!(repo.read_str("pkg/added.txt"), "first line\nsecond line\n");
    assert!(!repo.exists("pkg/obsolete.txt"));
    assert_eq!(
        repo.read_str("pkg/service.txt"),
        service
            .replace(
                "class Writer:\n    def load(self):\n        data = fetch()\n        return data\n",
                "class Writer:\n    def load(self):\n        data = fetch()\n        return data.strip()\n",
            )
            .replace("        pass\n", "        store()\n")
    );
    assert!(!repo.exists("pkg/config.txt"));
    assert_eq!(repo.read_str("pkg/settings.txt"), "name = x\nlevel = 2\n");
    assert_eq!(repo.read_str("notes.txt"), "start\nmiddle\nthe end\n");
}

/// `--input` names the format: a diff given as aider blocks is an error with its line, and the
/// YAML parser is never asked about a codex patch.
#[test]
fn input_flag_overrides_detection() {
    let repo = TestRepo::new().file("a.txt", "a\n").commit();
    let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";
    let run = repo.apply(diff, &["--checks", "none", "--input", "aider"]);
    run.assert_code(3);
    let r = run.json();
    assert_eq!(r["error"]["kind"], "invalid_patch");
    assert_eq!(r["error"]["line"], 1);
    assert_eq!(repo.read_str("a.txt"), "a\n");
    repo.apply(diff, &["--checks", "none", "--input", "diff"])
        .assert_code(0);
    assert_eq!(repo.read_str("a.txt"), "b\n");
}

/// How a hunk applied, when it is not simply as written, is told in every report: a file that
/// codex's Add File replaced, a chunk applied without its trailing blank line.
#[test]
fn every_report_says_how_a_hunk_applied() {
    let repo = TestRepo::new()
        .file("dup.txt", "old\n")
        .file("m.txt", "a\nb\n")
        .commit();
    let patch = "*** Begin Patch\n*** Add File: dup.txt\n+new\n*** Update File: m.txt\n@@\n-a\n+A\n\n*** End Patch\n";
    let file = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(file.path(), patch).expect("write patch");
    let path = file.path().to_str().expect("utf-8");
    for format in ["human", "markdown"] {
        let run = repo.run(&[
            "apply",
            path,
            "--checks",
            "none",
            "--dry-run",
            "--format",
            format,
        ]);
        run.assert_code(0);
        assert!(
            run.stdout.contains("replaced the existing file dup.txt"),
            "{format}: {}",
            run.stdout
        );
        assert!(
            run.stdout
                .contains("applied without the chunk's trailing blank line"),
            "{format}: {}",
            run.stdout
        );
    }
    let r = repo.apply(patch, &["--checks", "none"]);
    r.assert_code(0);
    assert_eq!(repo.read_str("dup.txt"), "new\n");
    assert_eq!(repo.read_str("m.txt"), "A\nb\n");
}
