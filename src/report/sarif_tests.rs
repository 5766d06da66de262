//! The SARIF renderer on hand-built reports: rules and indexes, levels, locations, baseline
//! states, fingerprints, misses, verify failures and run errors. Validation against the official
//! schema is in the integration tests (tests/it/sarif.rs), on the binary's real output.

use serde_json::Value;

use super::*;
use crate::checks::finding::Finding;
use crate::checks::{CheckReport, Kind, Status as CheckStatus};
use crate::plan::suggest::CandidateKind;
use crate::report::{SuggestionReport, error_report};

fn finding(line: usize, column: usize, rule: &str, sev: Severity, msg: &str, new: bool) -> Finding {
    Finding {
        line,
        column,
        rule: rule.into(),
        severity: sev,
        message: msg.into(),
        new,
    }
}

fn check(path: &str, checker: &str, status: CheckStatus, findings: Vec<Finding>) -> CheckReport {
    CheckReport {
        path: path.into(),
        checker: checker.into(),
        kind: Kind::Lint,
        status,
        findings,
        diff: None,
        duration_ms: 3,
        note: None,
        help: None,
        untouched: false,
    }
}

fn edit(index: usize, path: &str, status: EditStatus) -> EditReport {
    EditReport {
        index,
        file_path: path.into(),
        status,
        match_kind: None,
        replacements: 0,
        lines: Vec::new(),
        suggestions: Vec::new(),
        message: None,
        invalid: false,
        patch_span: None,
        snippet: None,
        hunk: None,
        kind: None,
    }
}

fn run_of(log: &Value) -> &Value {
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["runs"].as_array().map(Vec::len), Some(1));
    &log["runs"][0]
}

fn results(log: &Value) -> &Vec<Value> {
    run_of(log)["results"].as_array().expect("results")
}

fn fingerprint(r: &Value) -> &str {
    r["partialFingerprints"][FINGERPRINT_KEY]
        .as_str()
        .expect("fingerprint")
}

fn gated() -> Report {
    let mut r = Report::empty(Status::ChecksFailed);
    r.root = Some("/repo/my project".into());
    r.checks = vec![
        check(
            "src/a.py",
            "ruff",
            CheckStatus::Fail,
            vec![
                finding(
                    3,
                    8,
                    "F401",
                    Severity::Error,
                    "`os` imported but unused",
                    true,
                ),
                finding(
                    9,
                    1,
                    "E501",
                    Severity::Warning,
                    "Line too long (120 > 88)",
                    false,
                ),
                finding(0, 0, "F401", Severity::Info, "whole file", true),
            ],
        ),
        check(
            "src/b.py",
            "references",
            CheckStatus::Fail,
            vec![finding(
                4,
                0,
                "",
                Severity::Error,
                "`old_name` is not defined",
                true,
            )],
        ),
        check("src/b.py", "mypy", CheckStatus::Missing, Vec::new()),
        check("src/c.py", "ruff", CheckStatus::Pass, Vec::new()),
    ];
    r
}

#[test]
fn findings_become_results_with_rules_levels_regions_and_baseline_states() {
    let log = sarif_log(&gated());
    let run = run_of(&log);
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    // One rule per id, in order of first use; a finding without a rule is its checker's.
    assert_eq!(
        rules,
        [
            "ruff/F401",
            "ruff/E501",
            "references",
            "patchgate/checker-missing"
        ]
    );
    let res = results(&log);
    assert_eq!(res.len(), 5);
    for r in res {
        let i = r["ruleIndex"].as_u64().expect("index") as usize;
        assert_eq!(rules[i], r["ruleId"]);
        let loc = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(loc["uriBaseId"], "%SRCROOT%");
        assert!(loc["uri"].as_str().is_some_and(|u| u.starts_with("src/")));
    }
    assert_eq!(res[0]["level"], "error");
    assert_eq!(res[0]["baselineState"], "new");
    assert_eq!(res[0]["message"]["text"], "`os` imported but unused");
    assert_eq!(
        res[0]["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 3, "startColumn": 8})
    );
    assert_eq!(res[1]["level"], "warning");
    assert_eq!(res[1]["baselineState"], "unchanged");
    // Line 0: a whole-file finding has no region; Info is a note.
    assert_eq!(res[2]["level"], "note");
    assert!(
        res[2]["locations"][0]["physicalLocation"]
            .get("region")
            .is_none()
    );
    // Column 0 is unknown, so no startColumn.
    assert_eq!(
        res[3]["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 4})
    );
    // A checker that did not run is a note at its file, with no baseline state.
    assert_eq!(res[4]["ruleId"], "patchgate/checker-missing");
    assert_eq!(res[4]["level"], "note");
    assert!(res[4].get("baselineState").is_none());
    assert_eq!(
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        "file:///repo/my%20project/"
    );
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    assert_eq!(run["invocations"][0]["exitCode"], 1);
    assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn fingerprints_ignore_line_numbers_and_tell_repeats_apart() {
    let at = |line: usize| {
        let mut r = Report::empty(Status::ChecksFailed);
        r.checks = vec![check(
            "a.py",
            "ruff",
            CheckStatus::Fail,
            vec![
                finding(
                    line,
                    1,
                    "E501",
                    Severity::Error,
                    &format!("line {line} too long (99 > 88)"),
                    true,
                ),
                finding(
                    line + 7,
                    1,
                    "E501",
                    Severity::Error,
                    &format!("line {} too long (99 > 88)", line + 7),
                    true,
                ),
                finding(
                    line + 9,
                    1,
                    "F401",
                    Severity::Error,
                    "`os` imported but unused",
                    true,
                ),
            ],
        )];
        sarif_log(&r)
    };
    let (a, b) = (at(3), at(40));
    let fa: Vec<&str> = results(&a).iter().map(fingerprint).collect();
    let fb: Vec<&str> = results(&b).iter().map(fingerprint).collect();
    // The same findings after the lines moved keep their fingerprints...
    assert_eq!(fa, fb);
    // ...and the two E501 findings with the same masked message are still two.
    assert_ne!(fa[0], fa[1]);
    assert_ne!(fa[0], fa[2]);
    assert_eq!(fa[0].len(), 32);
    // The path and the rule are part of it.
    let mut other = Report::empty(Status::ChecksFailed);
    other.checks = vec![check(
        "b.py",
        "ruff",
        CheckStatus::Fail,
        vec![finding(
            3,
            1,
            "E501",
            Severity::Error,
            "line 3 too long (99 > 88)",
            true,
        )],
    )];
    assert_ne!(fingerprint(&results(&sarif_log(&other))[0]), fa[0]);
}

#[test]
fn a_miss_is_a_result_at_its_best_candidate_and_an_ambiguous_edit_at_its_first_match() {
    let mut r = Report::empty(Status::Rejected);
    let mut miss = edit(1, "src/app.py", EditStatus::NotFound);
    miss.message = Some("old_string not found".into());
    miss.suggestions = vec![
        SuggestionReport {
            start_line: 12,
            end_line: 13,
            similarity: 0.93,
            kind: CandidateKind::Whitespace,
            text: "    def run(self):\n        pass\n".into(),
            note: None,
            source: None,
        },
        SuggestionReport {
            start_line: 40,
            end_line: 41,
            similarity: 0.71,
            kind: CandidateKind::Fuzzy,
            text: "def ran():\n    pass\n".into(),
            note: None,
            source: None,
        },
    ];
    let mut amb = edit(2, "src/app.py", EditStatus::Ambiguous);
    amb.lines = vec![[5, 5], [9, 9], [20, 20]];
    let mut ok = edit(0, "src/app.py", EditStatus::Applied);
    ok.message = Some("verified, but not written".into());
    r.edits = vec![ok, miss, amb].into();
    let log = sarif_log(&r);
    let res = results(&log);
    assert_eq!(res.len(), 2, "an applied edit is no result");

    let m = &res[0];
    assert_eq!(m["ruleId"], "patchgate/not_found");
    assert_eq!(m["level"], "error");
    assert_eq!(m["baselineState"], "new");
    assert_eq!(
        m["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 12, "endLine": 13})
    );
    let text = m["message"]["text"].as_str().expect("text");
    assert!(
        text.starts_with("edit 1 on src/app.py: not_found: old_string not found"),
        "{text}"
    );
    assert!(
        text.contains("lines 12-13 (whitespace, 93% similar)"),
        "{text}"
    );
    let related = m["relatedLocations"].as_array().expect("related");
    assert_eq!(related.len(), 2);
    assert_eq!(
        related[1]["physicalLocation"]["region"]["snippet"]["text"],
        "def ran():\n    pass\n"
    );

    let a = &res[1];
    assert_eq!(a["ruleId"], "patchgate/ambiguous");
    assert_eq!(
        a["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 5, "endLine": 5})
    );
    assert_eq!(a["relatedLocations"].as_array().map(Vec::len), Some(3));
    assert!(
        a["message"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("matches at lines 5-5, 9-9, 20-20"))
    );
}

#[test]
fn a_run_error_is_a_failed_invocation_with_no_results() {
    let err = crate::error::Error::Usage {
        message: "no patch given".into(),
        help: "pass a patch file".into(),
    };
    let mut r = Report::empty(Status::Error);
    r.error = Some(error_report(&err));
    let log = sarif_log(&r);
    let run = run_of(&log);
    assert!(results(&log).is_empty());
    let inv = &run["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert_eq!(inv["exitCode"], 3);
    let note = &inv["toolExecutionNotifications"][0];
    assert_eq!(note["level"], "error");
    assert_eq!(
        note["message"]["text"],
        "invalid arguments: no patch given (fix: pass a patch file)"
    );
    assert!(run["originalUriBaseIds"]["%SRCROOT%"].get("uri").is_none());
    assert!(render_sarif(&r).ends_with("}\n"));
}

#[test]
fn verify_failures_are_located_in_the_project_or_reported_as_notifications() {
    use crate::verify::Failure;
    use crate::verify::run::{Status as V, Step, VerifyReport};
    let mut r = Report::empty(Status::ChecksFailed);
    r.root = Some("/work/repo".into());
    let failure = |name: &str, file: Option<&str>, line: Option<usize>, new: bool| Failure {
        name: name.into(),
        file: file.map(str::to_string),
        line,
        message: "assert 1 == 2".into(),
        new,
    };
    r.verify = vec![VerifyReport {
        step: Step::Test,
        project: "py".into(),
        command: "pytest".into(),
        status: V::Fail,
        failures: vec![
            failure("test_a", Some("tests/test_a.py"), Some(4), true),
            failure("test_b", Some("py/tests/test_b.py"), None, false),
            failure(
                "test_c",
                Some("/work/repo/py/tests/test_c.py"),
                Some(2),
                true,
            ),
            failure("test_d", None, None, true),
        ],
        hints: Vec::new(),
        duration_ms: 10,
        note: None,
        baseline: None,
    }];
    let log = sarif_log(&r);
    let res = results(&log);
    let uris: Vec<&str> = res
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .expect("uri")
        })
        .collect();
    assert_eq!(
        uris,
        [
            "py/tests/test_a.py",
            "py/tests/test_b.py",
            "py/tests/test_c.py"
        ]
    );
    assert_eq!(res[0]["ruleId"], "patchgate/verify/test");
    assert_eq!(res[1]["baselineState"], "unchanged");
    assert!(
        res[1]["locations"][0]["physicalLocation"]
            .get("region")
            .is_none()
    );
    // A failure without a file cannot be a result (code scanning rejects unlocated results).
    let notes = run_of(&log)["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .expect("notes");
    assert_eq!(notes.len(), 1);
    assert_eq!(
        notes[0]["message"]["text"],
        "verify test in py: test_d: assert 1 == 2"
    );
}

#[test]
fn paths_are_percent_encoded_and_digits_masked() {
    assert_eq!(encode_path("src/a b.py"), "src/a%20b.py");
    assert_eq!(encode_path("c:d/#x?.py"), "c%3Ad/%23x%3F.py");
    assert_eq!(encode_path("docs/é.md"), "docs/%C3%A9.md");
    assert_eq!(encode_path("a/b-c_d.~e"), "a/b-c_d.~e");
    assert_eq!(mask_digits("line 120 > 88, col 3"), "line 0 > 0, col 0");
    assert_eq!(mask_digits("E501"), "E0");
}
