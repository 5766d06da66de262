//! `patchgate schema patch|report` against what the code really emits and accepts: the JSON
//! reports of real runs (every status, a miss with suggestions, a gated references finding,
//! `check`, `--verify`, errors) validate against the report schema, and the example patches of
//! docs/patch-format.md and fixture patches validate against the patch schema. The schemas are
//! strict (`additionalProperties: false`), so a field added to the report without a schema entry
//! fails here.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{TestRepo, run_in};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn schema(which: &str) -> jsonschema::Validator {
    let repo = TestRepo::new();
    let r = repo.run(&["schema", which]);
    r.assert_code(0);
    let schema: Value = serde_json::from_str(&r.stdout).expect("schema is JSON");
    assert!(
        jsonschema::meta::is_valid(&schema),
        "`schema {which}` is not a valid JSON Schema"
    );
    jsonschema::validator_for(&schema).expect("compiles")
}

#[track_caller]
fn assert_valid(v: &jsonschema::Validator, instance: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the schema:\n{}\n{instance:#}",
        errors.join("\n")
    );
}

/// A Python project whose `load` module defines `parse_cfg`, used in `main.py`.
fn python_repo() -> TestRepo {
    TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0\"\n",
        )
        .file(
            "load.py",
            "def parse_cfg(text):\n    return text.split()\n\n\ndef other():\n    return 1\n",
        )
        .file(
            "main.py",
            "from load import parse_cfg\n\nprint(parse_cfg('a b'))\n",
        )
        .file("notes.txt", "alpha\nbeta\n  gamma  \nalpha\n")
        .commit()
}

#[test]
fn reports_of_real_runs_match_the_report_schema() {
    let v = schema("report");
    let mut seen = std::collections::BTreeSet::new();
    let mut check = |r: &crate::harness::Run, what: &str| {
        let report = r.json();
        assert_valid(&v, &report, what);
        seen.insert(report["status"].as_str().unwrap_or("?").to_string());
        report
    };

    let repo = python_repo();
    // dry run, then applied, with a create, a rename and a delete.
    let patch = "edits:\n\
        - {file_path: notes.txt, old_string: beta, new_string: BETA}\n\
        - {file_path: new.txt, create: true, new_string: \"new\\n\"}\n\
        - {file_path: load.py, move_to: loader.py}\n";
    let dry = check(&repo.apply(patch, &["--dry-run"]), "dry run");
    assert_eq!(dry["status"], "dry_run");
    let applied = check(&repo.apply(patch, &["--checks", "none"]), "applied");
    assert_eq!(applied["status"], "applied");
    assert!(
        applied["files"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["from"] == "load.py")),
        "a rename carries `from`: {applied}"
    );
    // A re-run: already_applied edits.
    let again = check(&repo.apply(patch, &["--checks", "none"]), "re-run");
    assert_eq!(again["edits"][0]["status"], "already_applied", "{again}");
    // undo, an undo refused because a file changed since (changed_since), and a unified diff
    // whose edits carry their hunk: on a repository of their own.
    let own = {
        let other = python_repo();
        let r = other.apply(patch, &["--checks", "none"]);
        r.assert_code(0);
        other
    };
    let undone = check(&own.run(&["undo", "--format", "json"]), "undo");
    assert!(undone["undid"].is_string(), "{undone}");
    let redo = undone["patch_id"].as_str().expect("patch_id").to_string();
    let redone = check(
        &own.run(&["undo", &redo, "--format", "json"]),
        "undo of an undo",
    );
    own.write("notes.txt", "changed since\n");
    let refused = own.run(&[
        "undo",
        redone["patch_id"].as_str().expect("id"),
        "--format",
        "json",
    ]);
    refused.assert_code(4);
    let refused = check(&refused, "undo refused");
    assert!(
        refused["changed_since"].is_array() || refused["error"].is_object(),
        "{refused}"
    );
    let diff = "--- a/loader.py\n+++ b/loader.py\n@@ -1 +1 @@\n-nothing like this\n+x\n";
    let r = own.apply(diff, &["--input", "diff"]);
    r.assert_code(2);
    let hunk = check(&r, "a diff hunk that misses");
    assert_eq!(hunk["edits"][0]["hunk"]["index"], 1, "{hunk}");
    // A diff's modes: a chmod, a new symlink, in `files[].mode`.
    let modes = "diff --git a/loader.py b/loader.py\nold mode 100644\nnew mode 100755\n\
diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+loader.py\n\
\\ No newline at end of file\n";
    let r = own.apply(modes, &["--input", "diff", "--checks", "none"]);
    r.assert_code(0);
    let moded = check(&r, "a diff with modes");
    assert_eq!(moded["files"][1]["mode"]["new"], "120000", "{moded}");

    // Rejected: a whitespace-only miss (suggestions) and an ambiguous edit.
    let r = repo.apply(
        "- {file_path: notes.txt, old_string: \"gamma\\n\", new_string: x}\n\
         - {file_path: notes.txt, old_string: \"  gamma\", new_string: x}\n\
         - {file_path: notes.txt, old_string: alpha, new_string: x}\n",
        &[],
    );
    r.assert_code(2);
    let rejected = check(&r, "rejected");
    assert_eq!(rejected["edits"][2]["status"], "ambiguous", "{rejected}");
    let r = repo.apply(
        "- {file_path: notes.txt, old_string: \"alphaa\\nBETA\", new_string: x}\n",
        &[],
    );
    r.assert_code(2);
    let missed = check(&r, "not_found with suggestions");
    assert!(
        missed["edits"][0]["suggestions"]
            .as_array()
            .is_some_and(|s| !s.is_empty()),
        "{missed}"
    );
    // A stale miss (the text an applied patch of this repository replaced: `source`) and a
    // recalled body under an exact signature (`symbol`).
    let r = repo.apply(
        "- {file_path: notes.txt, old_string: \"alpha\\nbeta\\n\", new_string: x}\n\
         - {file_path: loader.py, old_string: \"def parse_cfg(text):\\n    return text.strip()\\n\", new_string: x}\n",
        &[],
    );
    r.assert_code(2);
    let kinds = check(&r, "stale and symbol suggestions");
    assert_eq!(
        kinds["edits"][0]["suggestions"][0]["kind"], "stale",
        "{kinds}"
    );
    assert!(
        kinds["edits"][0]["suggestions"][0]["source"]["patch_id"].is_string(),
        "{kinds}"
    );
    assert_eq!(
        kinds["edits"][1]["suggestions"][0]["kind"], "symbol",
        "{kinds}"
    );

    // checks_failed: the built-in references check (no tool needed) on a rename that forgets
    // its caller.
    let repo = python_repo();
    let r = repo.apply(
        "- {file_path: load.py, old_string: \"def parse_cfg(\", new_string: \"def parse_config(\"}\n",
        &[],
    );
    r.assert_code(1);
    let failed = check(&r, "checks_failed");
    assert!(
        failed["checks"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["checker"] == "references"
                && c["findings"].as_array().is_some_and(|f| !f.is_empty()))),
        "{failed}"
    );

    // committed, and on a branch.
    let r = repo.apply(
        "- {file_path: notes.txt, old_string: beta, new_string: BETA}\n",
        &["--commit", "-m", "beta", "--checks", "none"],
    );
    assert_eq!(check(&r, "committed")["status"], "committed");
    let r = repo.apply(
        "- {file_path: notes.txt, old_string: BETA, new_string: Beta}\n",
        &["--branch", "bot/x", "--checks", "none"],
    );
    assert_eq!(check(&r, "branch")["branch"], "bot/x");

    // --verify: the Python build step (compileall) on the patched state.
    let r = repo.apply(
        "- {file_path: main.py, old_string: \"'a b'\", new_string: \"'a b c'\"}\n",
        &["--verify", "build", "--checks", "none", "--dry-run"],
    );
    let verified = check(&r, "--verify");
    assert!(
        verified["verify"].as_array().is_some_and(|v| !v.is_empty()),
        "{verified}"
    );

    // Errors: invalid patch (with line and column), invalid edits, not a repository, usage.
    let r = repo.apply("- {file_path: a, old_string: x, new_strin: y}\n", &[]);
    r.assert_code(3);
    let invalid = check(&r, "invalid patch");
    assert!(invalid["error"]["line"].is_u64(), "{invalid}");
    let r = repo.apply(
        "- {file_path: ../outside, old_string: x, new_string: y}\n",
        &[],
    );
    r.assert_code(3);
    check(&r, "invalid edits");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("p.yaml"), "[]").expect("write");
    let r = run_in(
        outside.path(),
        &["apply", "p.yaml", "--format", "json"],
        None,
    );
    r.assert_code(4);
    check(&r, "not a repository");
    let r = repo.run(&["apply", "--bogus", "--format", "json"]);
    r.assert_code(3);
    check(&r, "usage");

    // `check` (clean and failed) and `verify`.
    repo.write(
        "main.py",
        "from load import parse_cfg\n\nprint(parse_cfg('a b'\n",
    );
    repo.git(&["add", "main.py"]);
    let r = repo.run(&["check", "--staged", "--format", "json"]);
    r.assert_code(1);
    check(&r, "check failed");
    repo.git(&["checkout", "HEAD", "--", "main.py"]);
    let r = repo.run(&["check", "--format", "json"]);
    r.assert_code(0);
    check(&r, "check clean");
    let r = repo.run(&["verify", "--steps", "build", "--format", "json"]);
    check(&r, "verify");

    for status in [
        "applied",
        "committed",
        "dry_run",
        "clean",
        "rejected",
        "checks_failed",
        "error",
    ] {
        assert!(seen.contains(status), "no run covered status {status}");
    }
}

#[test]
fn the_report_schema_catches_drift() {
    let v = schema("report");
    let repo = python_repo();
    let r = repo.apply(
        "- {file_path: notes.txt, old_string: beta, new_string: BETA}\n",
        &["--checks", "none"],
    );
    let good = r.json();
    assert_valid(&v, &good, "applied");
    let mut extra = good.clone();
    extra["surprise"] = json!(1);
    assert!(!v.is_valid(&extra), "an unknown top-level field must fail");
    let mut extra = good.clone();
    extra["edits"][0]["surprise"] = json!(1);
    assert!(!v.is_valid(&extra), "an unknown edit field must fail");
    let mut bad = good.clone();
    bad["status"] = json!("half_applied");
    assert!(!v.is_valid(&bad), "an unknown status must fail");
    let mut missing = good;
    missing.as_object_mut().expect("object").remove("checks");
    assert!(!v.is_valid(&missing), "a missing field must fail");
}

#[test]
fn the_report_examples_in_the_docs_match_the_report_schema() {
    let v = schema("report");
    let doc =
        std::fs::read_to_string(Path::new(ROOT).join("docs/report.md")).expect("docs/report.md");
    let reports: Vec<Value> = code_blocks(&doc, "json")
        .iter()
        .map(|b| serde_json::from_str(b).unwrap_or_else(|e| panic!("not JSON ({e}):\n{b}")))
        .filter(|v: &Value| v.get("version").is_some())
        .collect();
    assert!(reports.len() >= 2, "docs/report.md shows whole reports");
    for (i, r) in reports.iter().enumerate() {
        assert_valid(&v, r, &format!("docs/report.md report {}", i + 1));
    }
}

/// The ```yaml blocks of a markdown file.
fn yaml_blocks(md: &str) -> Vec<String> {
    code_blocks(md, "yaml")
}

/// The fenced blocks of one language in a markdown file.
fn code_blocks(md: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}");
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in md.lines() {
        match &mut current {
            None if line.trim_start() == fence => current = Some(String::new()),
            Some(block) if line.trim_start() == "```" => {
                out.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

fn yaml_value(text: &str, what: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{what}: not YAML: {e}\n{text}"))
}

#[test]
fn example_and_fixture_patches_match_the_patch_schema() {
    let v = schema("patch");
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/patch-format.md"))
        .expect("docs/patch-format.md");
    let blocks = yaml_blocks(&doc);
    assert!(blocks.len() >= 2, "docs/patch-format.md has its examples");
    for (i, b) in blocks.iter().enumerate() {
        let what = format!("docs/patch-format.md yaml block {}", i + 1);
        assert_valid(&v, &yaml_value(b, &what), &what);
    }
    // Its JSON patches (a list, or an object with `edits`; the other JSON blocks are reports).
    let json_patches: Vec<Value> = code_blocks(&doc, "json")
        .iter()
        .map(|b| serde_json::from_str(b).unwrap_or_else(|e| panic!("not JSON ({e}):\n{b}")))
        .filter(|p: &Value| p.is_array() || p.get("edits").is_some())
        .collect();
    assert!(
        !json_patches.is_empty(),
        "docs/patch-format.md has a JSON patch"
    );
    for p in &json_patches {
        assert_valid(&v, p, "docs/patch-format.md JSON patch");
    }
    for name in [
        "001_exact_single_replacement",
        "002_replace_all_several_occurrences",
        "003_line_window_picks_occurrence",
        "008_group_flattened_in_order",
        "009_create_in_new_nested_folder",
        "010_delete_file",
        "011_append_adds_missing_newline_first",
        "014_move_to_with_replacement_then_edit_new_path",
    ] {
        let path = Path::new(ROOT)
            .join("tests/fixtures")
            .join(name)
            .join("patch.yaml");
        let text = std::fs::read_to_string(&path).expect("fixture patch");
        assert_valid(&v, &yaml_value(&text, name), name);
    }
    // The schema is not vacuous: an unknown key and a create without content fail.
    assert!(!v.is_valid(&json!([{"file_path": "a", "old_string": "x", "new_strin": "y"}])));
    assert!(!v.is_valid(&json!([{"file_path": "a", "create": true}])));
}
