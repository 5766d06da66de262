//! `--format sarif` on real runs: valid against the official SARIF 2.1.0 schema (a gated check,
//! a clean check, a miss), fingerprints that survive moved lines, and the commands that refuse it.

use serde_json::{Value, json};

use crate::harness::TestRepo;
use crate::sarif_schema::{assert_valid, validator};

fn sarif(run: &crate::harness::Run) -> Value {
    run.json()
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().expect("results")
}

/// A repository whose `stats.py` gets an unclosed parenthesis in the working tree, `pad` lines
/// below the top.
fn broken_at(pad: usize) -> TestRepo {
    let head = "# note\n".repeat(pad);
    let repo = TestRepo::new()
        .file(
            "stats.py",
            format!("{head}def total(xs):\n    return sum(xs)\n"),
        )
        .commit();
    repo.write(
        "stats.py",
        format!("{head}def total(xs):\n    return sum(xs\n"),
    );
    repo
}

#[test]
fn a_gated_check_a_clean_check_and_a_miss_are_valid_sarif() {
    let repo = broken_at(0);
    let run = repo.run(&["check", "--checks", "syntax", "--format", "sarif"]);
    run.assert_code(1);
    let gated = sarif(&run);
    assert_valid(&gated, "gated check");
    let res = results(&gated);
    assert_eq!(res.len(), 1, "{gated}");
    assert_eq!(res[0]["ruleId"], "syntax/syntax");
    assert_eq!(res[0]["baselineState"], "new");
    assert_eq!(
        res[0]["locations"][0]["physicalLocation"]["artifactLocation"],
        json!({"uri": "stats.py", "uriBaseId": "%SRCROOT%"})
    );
    assert_eq!(
        res[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );

    repo.write("stats.py", "def total(xs):\n    return sum(xs)  # fixed\n");
    let run = repo.run(&["check", "--checks", "syntax", "--format", "sarif"]);
    run.assert_code(0);
    let clean = sarif(&run);
    assert_valid(&clean, "clean check");
    assert!(results(&clean).is_empty(), "{clean}");
    assert_eq!(
        clean["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );

    let patch = json!({"edits": [{"file_path": "stats.py", "old_string": "return  sum(xs)",
                                  "new_string": "return sum(xs) or 0"}]});
    let run = repo.run_stdin(
        &["apply", "-", "--checks", "none", "--format", "sarif"],
        patch.to_string().as_bytes(),
    );
    run.assert_code(2);
    let miss = sarif(&run);
    assert_valid(&miss, "miss");
    let res = results(&miss);
    assert_eq!(res.len(), 1, "{miss}");
    assert_eq!(res[0]["ruleId"], "patchgate/not_found");
    assert_eq!(res[0]["level"], "error");
    assert_eq!(
        res[0]["locations"][0]["physicalLocation"]["region"]["startLine"], 2,
        "at the suggestion: {miss}"
    );
}

#[test]
fn the_validator_rejects_what_is_not_sarif() {
    let Some(v) = validator() else {
        return;
    };
    let bad = json!({
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "fatal"}]}],
    });
    assert!(!v.is_valid(&bad), "an unknown level must fail the schema");
    let line_zero = json!({
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py"},
                                                "region": {"startLine": 0}}}]}]}],
    });
    assert!(!v.is_valid(&line_zero), "lines are 1-based in SARIF");
    let mut fixed = line_zero.clone();
    fixed["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        json!(1);
    assert!(v.is_valid(&fixed));
}

#[test]
fn fingerprints_survive_moved_lines() {
    let fp = |pad: usize| {
        let run = broken_at(pad).run(&["check", "--checks", "syntax", "--format", "sarif"]);
        let log = sarif(run.assert_code(1));
        let r = &results(&log)[0];
        (
            r["locations"][0]["physicalLocation"]["region"]["startLine"].clone(),
            r["partialFingerprints"]["patchgate/v1"].clone(),
        )
    };
    let (line_a, fp_a) = fp(0);
    let (line_b, fp_b) = fp(5);
    assert_eq!((line_a, line_b), (json!(2), json!(7)));
    assert!(fp_a.is_string());
    assert_eq!(fp_a, fp_b);
}

#[test]
fn commands_without_findings_refuse_sarif_and_usage_errors_come_as_sarif() {
    let repo = TestRepo::new().file("a.py", "x = 1\n").commit();
    for cmd in [&["detect"][..], &["verify"], &["recover"]] {
        let mut args = cmd.to_vec();
        args.extend(["--format", "sarif"]);
        let run = repo.run(&args);
        run.assert_code(3);
        assert!(run.stdout.is_empty(), "{cmd:?}: {}", run.stdout);
        assert!(
            run.stderr.contains("has no SARIF output"),
            "{cmd:?}: {}",
            run.stderr
        );
    }
    let run = repo.run(&["apply", "--no-such-flag", "--format", "sarif"]);
    run.assert_code(3);
    let log = sarif(&run);
    assert_valid(&log, "usage error");
    let inv = &log["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert_eq!(inv["exitCode"], 3);
}
