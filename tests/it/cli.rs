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
    assert_eq!(r.json()["error"]["kind"], "config", "{}", r.stdout);
    assert_eq!(repo.read_str("a.py"), "x = 1\n");
    let human = repo.run(&["check", "a.py"]);
    human.assert_code(3);
    assert!(
        human.stderr.contains("patchgate::config"),
        "{}",
        human.stderr
    );
    for args in [&["check", "a.py", "--format", "json"][..], &["detect"][..]] {
        let r = repo.run(args);
        assert_ne!(r.code, 101, "{args:?} panicked: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn completions_name_the_subcommands_and_flags() {
    let repo = TestRepo::new();
    // fish spells a long option `-l format`.
    for (shell, flag) in [
        ("bash", "--format"),
        ("zsh", "--format"),
        ("fish", "-l format"),
    ] {
        let r = repo.run(&["completions", shell]);
        r.assert_code(0);
        assert!(
            r.stdout.contains("apply") && r.stdout.contains(flag),
            "{shell}:\n{}",
            r.stdout
        );
    }
    assert_eq!(repo.run(&["completions", "tcsh"]).code, 3);
}

#[test]
fn bash_accepts_the_bash_completion() {
    let repo = TestRepo::new();
    let r = repo.run(&["completions", "bash"]);
    r.assert_code(0);
    let script = repo.path().join("patchgate.bash");
    std::fs::write(&script, &r.stdout).expect("write");
    let out = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Sourced, it registers a completion function for patchgate.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p patchgate",
            script.display()
        ))
        .output()
        .expect("bash runs");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("patchgate"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn man_is_roff_with_the_subcommands() {
    let repo = TestRepo::new();
    let r = repo.run(&["man"]);
    r.assert_code(0);
    assert!(
        r.stdout.starts_with(".ie") || r.stdout.contains(".TH"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(".TH patchgate"), "{}", r.stdout);
    assert!(r.stdout.contains(".SH SUBCOMMANDS"), "{}", r.stdout);
    for sub in [
        "apply",
        "check",
        "detect",
        "recover",
        "schema",
        "completions",
    ] {
        assert!(
            r.stdout.contains(&format!("patchgate\\-{sub}")),
            "{sub} missing:\n{}",
            r.stdout
        );
    }
    let r = repo.run(&["man", "apply"]);
    r.assert_code(0);
    assert!(r.stdout.contains(".TH patchgate-apply"), "{}", r.stdout);
    assert!(r.stdout.contains("\\-\\-dry\\-run"), "{}", r.stdout);
    assert_eq!(repo.run(&["man", "frobnicate"]).code, 3);
}

#[test]
fn schema_takes_patch_or_report() {
    let repo = TestRepo::new();
    let default = repo.run(&["schema"]);
    let patch = repo.run(&["schema", "patch"]);
    assert_eq!(default.stdout, patch.stdout);
    let report = repo.run(&["schema", "report"]);
    report.assert_code(0);
    let v: serde_json::Value = serde_json::from_str(&report.stdout).expect("json");
    assert_eq!(v["title"], "patchgate report");
    assert_eq!(repo.run(&["schema", "bogus"]).code, 3);
}

#[test]
fn dash_c_is_accepted_before_the_subcommand_as_after_it() {
    let repo = TestRepo::new().file("a.txt", "one\n").commit();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let dir = repo.path().to_string_lossy().into_owned();
    let patch = elsewhere.path().join("p.yaml");
    std::fs::write(
        &patch,
        "- file_path: a.txt\n  old_string: one\n  new_string: two\n",
    )
    .expect("write");
    let patch = patch.to_string_lossy().into_owned();
    // As `git -C DIR apply`: the option of the program, before the subcommand.
    let r = crate::harness::run_in(
        elsewhere.path(),
        &["-C", &dir, "apply", &patch, "--checks", "none"],
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(repo.read_str("a.txt"), "two\n");
    // After the subcommand, as before.
    let back = "- file_path: a.txt\n  old_string: two\n  new_string: one\n";
    std::fs::write(elsewhere.path().join("p.yaml"), back).expect("write");
    let r = crate::harness::run_in(
        elsewhere.path(),
        &["apply", "-C", &dir, &patch, "--checks", "none"],
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(repo.read_str("a.txt"), "one\n");
    // Every subcommand takes it there.
    for args in [
        &["-C", &dir, "detect", "--format", "json"][..],
        &["-C", &dir, "undo", "--list"],
        &["-C", &dir, "recover"],
        &["-C", &dir, "check", "--checks", "none"],
    ] {
        let r = crate::harness::run_in(elsewhere.path(), args, None);
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
    }
}
