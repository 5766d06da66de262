//! `expect_sha256` on an edit or a file entry, and `files[].sha256` in the report: a stale read
//! is refused with the current digest and nothing is written; the digest a report gives is what
//! the next patch can expect.

use serde_json::{Value, json};

use crate::harness::{TestRepo, sha256_hex};

const CRLF: &[u8] = b"alpha = 1\r\nbeta = 2\r\ngamma = 3\r\n";
const BOM: &[u8] = b"\xef\xbb\xbfone\ntwo\nthree\n";

fn repo() -> TestRepo {
    TestRepo::new()
        .file("crlf.txt", CRLF)
        .file("bom.txt", BOM)
        .file("plain.txt", "x = 1\ny = 2\n")
        .commit()
}

fn edit(path: &str, old: &str, new: &str, hash: Option<&str>) -> Value {
    let mut e = json!({"file_path": path, "old_string": old, "new_string": new});
    if let Some(h) = hash {
        e["expect_sha256"] = json!(h);
    }
    e
}

fn file_hash(report: &Value, path: &str) -> Option<String> {
    report["files"]
        .as_array()?
        .iter()
        .find(|f| f["path"] == path)
        .and_then(|f| f["sha256"].as_str().map(str::to_string))
}

#[test]
fn matching_digests_of_crlf_and_bom_files_apply_and_the_report_gives_the_new_ones() {
    let repo = repo();
    // The digest is of the raw bytes: CRLF and BOM included, upper-case hex accepted.
    let patch = json!([
        edit(
            "crlf.txt",
            "beta = 2",
            "beta = 20",
            Some(&sha256_hex(CRLF).to_uppercase())
        ),
        edit("bom.txt", "two", "TWO", Some(&sha256_hex(BOM))),
    ]);
    let run = repo.apply(&patch.to_string(), &[]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["edits"][0]["status"], "applied", "{report:#}");
    assert!(report["edits"][0].get("kind").is_none(), "{report:#}");
    assert_eq!(
        repo.read("crlf.txt"),
        b"alpha = 1\r\nbeta = 20\r\ngamma = 3\r\n"
    );
    assert_eq!(repo.read("bom.txt"), b"\xef\xbb\xbfone\nTWO\nthree\n");
    for path in ["crlf.txt", "bom.txt"] {
        assert_eq!(
            file_hash(&report, path),
            Some(sha256_hex(&repo.read(path))),
            "{report:#}"
        );
    }
}

#[test]
fn a_stale_digest_is_an_error_naming_the_current_one_and_nothing_is_written() {
    // The plausible wrong digests: the text with LF endings, and without its BOM.
    for (path, bytes, wrong) in [
        (
            "crlf.txt",
            CRLF,
            b"alpha = 1\nbeta = 2\ngamma = 3\n".to_vec(),
        ),
        ("bom.txt", BOM, b"one\ntwo\nthree\n".to_vec()),
    ] {
        let repo = repo();
        let before = repo.snapshot();
        let old = if path == "crlf.txt" {
            "beta = 2"
        } else {
            "two"
        };
        let patch = json!([
            edit("plain.txt", "x = 1", "x = 10", None),
            edit(path, old, "changed", Some(&sha256_hex(&wrong))),
        ]);
        let run = repo.apply(&patch.to_string(), &[]);
        run.assert_code(2);
        let report = run.json();
        assert_eq!(report["status"], "rejected", "{report:#}");
        assert_eq!(report["edits"][0]["status"], "applied", "{report:#}");
        let stale = &report["edits"][1];
        assert_eq!(stale["status"], "error", "{report:#}");
        assert_eq!(stale["kind"], "stale", "{report:#}");
        let msg = stale["message"].as_str().unwrap_or_default();
        assert!(msg.contains(&sha256_hex(bytes)), "{msg}");
        assert!(report["files"].as_array().is_some_and(|f| f.is_empty()));
        assert_eq!(repo.snapshot(), before, "{path}: something was written");
    }
}

#[test]
fn grouped_edits_take_the_digest_from_the_group_or_the_edit() {
    let good = sha256_hex(b"x = 1\ny = 2\n");
    let bad = sha256_hex(b"x = 1\ny = 2");
    let group = |group_hash: Option<&str>, sub_hash: Option<&str>| {
        let mut g = json!({"file_path": "plain.txt", "edits": [
            {"old_string": "x = 1", "new_string": "x = 10"},
            edit("", "y = 2", "y = 20", sub_hash),
        ]});
        g["edits"][1].as_object_mut().map(|o| o.remove("file_path"));
        if let Some(h) = group_hash {
            g["expect_sha256"] = json!(h);
        }
        json!([g]).to_string()
    };
    // A stale group digest fails every edit of the group.
    let repo = repo();
    let run = repo.apply(&group(Some(&bad), None), &[]);
    run.assert_code(2);
    let report = run.json();
    for e in report["edits"].as_array().expect("edits") {
        assert_eq!(
            (&e["status"], &e["kind"]),
            (&json!("error"), &json!("stale"))
        );
    }
    assert_eq!(repo.read_str("plain.txt"), "x = 1\ny = 2\n");
    // The second edit's digest is of the file as read, not as the first edit left it.
    let run = repo.apply(&group(None, Some(&good)), &[]);
    run.assert_code(0);
    assert_eq!(repo.read_str("plain.txt"), "x = 10\ny = 20\n");
    // Two different digests for one file cannot both hold: invalid input.
    let repo = self::repo();
    let run = repo.apply(&group(Some(&good), Some(&bad)), &[]);
    run.assert_code(3);
    assert!(
        run.json()["edits"][1]["message"]
            .as_str()
            .is_some_and(|m| m.contains("differs from its group")),
        "{}",
        run.stdout
    );
}

#[test]
fn a_second_patch_chains_on_the_digest_of_the_first_report() {
    let repo = repo();
    let first = repo.apply(
        &json!([edit(
            "crlf.txt",
            "alpha = 1",
            "alpha = 11",
            Some(&sha256_hex(CRLF))
        )])
        .to_string(),
        &["--commit", "-m", "first"],
    );
    first.assert_code(0);
    let digest = file_hash(&first.json(), "crlf.txt").expect("sha256 of crlf.txt");
    // Re-running the first patch is a no-op, although its digest no longer matches.
    let again = repo.apply(
        &json!([edit(
            "crlf.txt",
            "alpha = 1",
            "alpha = 11",
            Some(&sha256_hex(CRLF))
        )])
        .to_string(),
        &[],
    );
    again.assert_code(0);
    assert_eq!(again.json()["edits"][0]["status"], "already_applied");
    let second = json!([edit("crlf.txt", "gamma = 3", "gamma = 33", Some(&digest))]).to_string();
    repo.apply(&second, &[]).assert_code(0);
    assert_eq!(
        repo.read("crlf.txt"),
        b"alpha = 11\r\nbeta = 2\r\ngamma = 33\r\n"
    );
    // The digest the first patch started from is stale now.
    let third = json!([edit(
        "crlf.txt",
        "beta = 2",
        "beta = 22",
        Some(&sha256_hex(CRLF))
    )]);
    let run = repo.apply(&third.to_string(), &[]);
    run.assert_code(2);
    assert_eq!(run.json()["edits"][0]["kind"], "stale");
}

#[test]
fn with_branch_the_digest_is_of_the_branch_blob_not_the_working_tree() {
    let repo = repo();
    repo.write("plain.txt", "x = 1\ny = 2\n# local, uncommitted\n");
    let committed = sha256_hex(b"x = 1\ny = 2\n");
    let local = sha256_hex(&repo.read("plain.txt"));
    let patch = |h: &str| json!([edit("plain.txt", "y = 2", "y = 3", Some(h))]).to_string();
    let run = repo.apply(&patch(&local), &["--branch", "bot/guard"]);
    run.assert_code(2);
    assert_eq!(run.json()["edits"][0]["kind"], "stale");
    let run = repo.apply(&patch(&committed), &["--branch", "bot/guard"]);
    run.assert_code(0);
    let report = run.json();
    let blob = repo.git(&["show", "bot/guard:plain.txt"]);
    assert_eq!(blob, "x = 1\ny = 3\n");
    assert_eq!(
        file_hash(&report, "plain.txt"),
        Some(sha256_hex(blob.as_bytes()))
    );
}

#[test]
fn create_delete_and_move_carry_digests_and_a_deleted_file_has_none() {
    let repo = repo();
    let patch = json!([
        {"file_path": "bom.txt", "delete": true, "expect_sha256": sha256_hex(BOM)},
        {"file_path": "plain.txt", "move_to": "moved.txt", "expect_sha256": sha256_hex(b"x = 1\ny = 2\n")},
        // After the move the file is named by its new path; the digest is still of what was read.
        edit("moved.txt", "y = 2", "y = 5", Some(&sha256_hex(b"x = 1\ny = 2\n"))),
        {"file_path": "new.txt", "create": true, "new_string": "fresh\n"},
    ]);
    let run = repo.apply(&patch.to_string(), &[]);
    run.assert_code(0);
    let report = run.json();
    let files = report["files"].as_array().expect("files");
    let by_path = |p: &str| files.iter().find(|f| f["path"] == p).cloned();
    assert_eq!(by_path("bom.txt").expect("bom.txt")["sha256"], Value::Null);
    assert_eq!(
        file_hash(&report, "moved.txt"),
        Some(sha256_hex(b"x = 1\ny = 5\n"))
    );
    assert_eq!(file_hash(&report, "new.txt"), Some(sha256_hex(b"fresh\n")));
    // A digest for a file that does not exist is stale too.
    let run = repo.apply(
        &json!([{"file_path": "nothing.txt", "create": true, "new_string": "a\n",
                 "expect_sha256": sha256_hex(b"")}])
        .to_string(),
        &[],
    );
    run.assert_code(2);
    let report = run.json();
    assert_eq!(report["edits"][0]["kind"], "stale", "{report:#}");
    assert!(!repo.exists("nothing.txt"));
}

#[test]
fn a_malformed_digest_is_invalid_input_with_its_place_in_the_patch() {
    let repo = repo();
    let before = repo.snapshot();
    let patch = "- file_path: plain.txt\n  old_string: \"x = 1\"\n  new_string: \"x = 2\"\n  expect_sha256: abc123\n";
    let run = repo.apply(patch, &[]);
    run.assert_code(3);
    let report = run.json();
    assert_eq!(report["error"]["kind"], "invalid_patch", "{report:#}");
    assert_eq!(
        (&report["error"]["line"], &report["error"]["column"]),
        (&json!(4), &json!(18)),
        "{report:#}"
    );
    assert!(
        report["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("expect_sha256")),
        "{report:#}"
    );
    assert_eq!(repo.snapshot(), before);
}

#[test]
fn markdown_lists_each_written_file_with_its_digest() {
    let repo = repo();
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    let patch = json!([edit("plain.txt", "x = 1", "x = 2", None)]).to_string();
    std::fs::write(pfile.path(), patch).expect("write patch");
    let path = pfile.path().to_str().expect("utf8");
    let run = repo.run(&["apply", path, "--format", "markdown"]);
    run.assert_code(0);
    let want = format!("sha256 `{}`", sha256_hex(b"x = 2\ny = 2\n"));
    assert!(run.stdout.contains(&want), "{}", run.stdout);
}
