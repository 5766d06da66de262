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
