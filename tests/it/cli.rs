//! The command line contract: exit codes, output streams, formats.

use crate::harness::TestRepo;

#[test]
fn argument_errors_exit_3_and_help_exits_0() {
    let repo = TestRepo::new().commit();
    assert_eq!(repo.run(&["apply", "--bogus"]).code, 3);
    assert_eq!(repo.run(&["frobnicate"]).code, 3);
    assert_eq!(repo.run(&["apply", "--format", "xml", "p.yaml"]).code, 3);
    assert_eq!(repo.run(&["--help"]).code, 0);
    assert_eq!(repo.run(&["--version"]).code, 0);
    let r = repo.run(&["apply", "--bogus", "--format", "json"]);
    assert_eq!(r.code, 3);
    assert_eq!(r.json()["status"], "error");
}

#[test]
fn not_a_repository_exits_4() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("p.yaml"), "[]").expect("write");
    let r = crate::harness::run_in(dir.path(), &["apply", "p.yaml", "--format", "json"], None);
    assert_eq!(r.code, 4, "{}", r.stdout);
    assert_eq!(r.json()["error"]["kind"], "not_a_repository");
}

#[test]
fn schema_is_json() {
    let repo = TestRepo::new();
    let r = repo.run(&["schema"]);
    assert_eq!(r.code, 0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert!(
        v["$defs"]["edit"]["oneOf"]
            .as_array()
            .is_some_and(|a| a.len() == 6)
    );
}

#[test]
fn an_unknown_checker_name_is_refused_not_ignored() {
    let repo = TestRepo::new().file("a.txt", "alpha\n").commit();
    let snapshot = repo.snapshot();
    let r = repo.apply(
        "- {file_path: a.txt, old_string: alpha, new_string: A}\n",
        &["--checks", "rufff"],
    );
    r.assert_code(3);
    let help = r.json()["error"]["help"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        help.contains("ruff-format") && help.contains("eslint"),
        "{help}"
    );
    assert_eq!(
        repo.snapshot(),
        snapshot,
        "a typo must not turn the gate off and apply"
    );
    let r = repo.run(&["check", "--checks", "rufff", "--format", "json"]);
    assert_eq!(r.code, 3, "{}", r.stdout);
}
