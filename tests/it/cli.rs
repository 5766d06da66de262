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

/// Numbers the parser accepts but a duration cannot hold are usage errors, not a crash.
#[test]
fn an_unrepresentable_timeout_is_a_usage_error() {
    let repo = TestRepo::new().file("a.txt", "alpha\n").commit();
    for t in ["1e300", "inf", "NaN", "0", "-1"] {
        let arg = format!("--timeout={t}");
        let r = repo.apply(
            "- {file_path: a.txt, old_string: alpha, new_string: A}\n",
            &[&arg],
        );
        r.assert_code(3);
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("--timeout"),
            "{t}: {}",
            r.stdout
        );
        assert_eq!(repo.read_str("a.txt"), "alpha\n");
    }
}

/// A built-in checker's `command = []` in .patchgate.toml is a configuration error with the file
/// named, not a crash.
#[test]
fn an_empty_checker_command_is_a_configuration_error() {
    let repo = TestRepo::new()
        .file("a.py", "x = 1\n")
        .file("pyproject.toml", "[project]\nname = \"p\"\n")
        .file(".patchgate.toml", "[checkers.ruff]\ncommand = []\n")
        .commit();
    let r = repo.apply(
        "- {file_path: a.py, old_string: x = 1, new_string: x = 2}\n",
        &[],
    );
    r.assert_code(3);
    assert!(r.stdout.contains("empty `command`"), "{}", r.stdout);
    assert_eq!(repo.read_str("a.py"), "x = 1\n");
    for args in [&["check", "a.py", "--format", "json"][..], &["detect"][..]] {
        let r = repo.run(args);
        assert_ne!(r.code, 101, "{args:?} panicked: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    }
}
