//! Contained failures (docs/report.md, "A bug in patchgate"): a panic inside one checker makes
//! that checker `error` and the run goes on; a panic anywhere else ends the run with exit 4 and
//! "internal error, please report", with the repository wholly in the old or the new state (no
//! journal, pin, temp file or half-written file left for a `patchgate recover` to find).
//!
//! The panics are injected with `PATCHGATE_FAULT_PANIC_AT=<point>` (debug builds only), at the
//! transaction's fault points and at `check:<checker>`.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::{BIN, Run, TestRepo, git_try};

fn apply_panicking(repo: &TestRepo, point: &str, patch: &str, args: &[&str]) -> Run {
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), patch).expect("write");
    let out = Command::new(BIN)
        .args([
            "apply",
            pfile.path().to_str().expect("utf8"),
            "--format",
            "json",
        ])
        .args(args)
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_PANIC_AT", point)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    Run::from(out)
}

const PATCH: &str = "\
- {file_path: a.py, old_string: alpha, new_string: ALPHA}
- {file_path: b.py, old_string: beta, new_string: BETA}
";

fn repo() -> TestRepo {
    let repo = TestRepo::new()
        .file("a.py", "alpha = 1\n")
        .file("b.py", "beta = 2\n")
        .file("c.py", "c = 3\n")
        .commit();
    // The user's own work, which must survive whatever happens.
    repo.write("c.py", "c = 4  # unstaged\n");
    repo
}

#[test]
fn a_panicking_checker_is_that_checkers_error_and_the_run_goes_on() {
    let repo = repo();
    let run = apply_panicking(
        &repo,
        "check:syntax",
        PATCH,
        &["--checks", "syntax,references"],
    );
    run.assert_code(0);
    let json = run.json();
    let checks = json["checks"].as_array().expect("checks");
    let syntax: Vec<&Value> = checks.iter().filter(|c| c["checker"] == "syntax").collect();
    assert_eq!(syntax.len(), 2, "{json:#}");
    for c in syntax {
        assert_eq!(c["status"], "error", "{c:#}");
        let note = c["note"].as_str().unwrap_or_default();
        assert!(
            note.contains("crashed inside patchgate")
                && note.contains("injected panic at check:syntax"),
            "{c:#}"
        );
        assert!(
            c["help"].as_str().is_some_and(|h| h.contains("report")),
            "{c:#}"
        );
    }
    // The other checker ran and judged.
    assert!(
        checks
            .iter()
            .any(|c| c["checker"] == "references" && c["status"] == "pass"),
        "{json:#}"
    );
    assert_eq!(repo.read_str("a.py"), "ALPHA = 1\n");
    assert_eq!(repo.read_str("b.py"), "BETA = 2\n");

    // With --require-tools a checker that could not judge blocks, as a crashed tool does.
    let repo = self::repo();
    let before = repo.snapshot();
    let run = apply_panicking(
        &repo,
        "check:syntax",
        PATCH,
        &["--checks", "syntax,references", "--require-tools"],
    );
    run.assert_code(1);
    assert_eq!(repo.snapshot(), before);
}

/// Whether the patched files are all old or all new, and consistent with HEAD and the index in
/// the commit mode; returns whether they are new.
#[track_caller]
fn whole(repo: &TestRepo, commit: bool, base: &str, label: &str) -> bool {
    let a = repo.read_str("a.py");
    let b = repo.read_str("b.py");
    let new = match (a.as_str(), b.as_str()) {
        ("ALPHA = 1\n", "BETA = 2\n") => true,
        ("alpha = 1\n", "beta = 2\n") => false,
        _ => panic!("{label}: half-written: a.py {a:?}, b.py {b:?}"),
    };
    assert_eq!(repo.read_str("c.py"), "c = 4  # unstaged\n", "{label}");
    if commit {
        let head = repo.head();
        assert_eq!(
            head != base,
            new,
            "{label}: HEAD moved iff the files are new"
        );
        assert_eq!(
            repo.git(&["diff", "--cached", "--name-only"]),
            "",
            "{label}: index = HEAD"
        );
    } else {
        assert_eq!(repo.head(), base, "{label}");
    }
    // Unstaged: the user's c.py, and the patched files of a working-tree patch that landed.
    let unstaged = if new && !commit {
        "a.py\nb.py\nc.py\n"
    } else {
        "c.py\n"
    };
    assert_eq!(repo.git(&["diff", "--name-only"]), unstaged, "{label}");
    assert_eq!(repo.leftovers(), Vec::<String>::new(), "{label}");
    assert!(git_try(repo.path(), &["fsck", "--strict"]).0, "{label}");
    let recover = repo.run(&["recover", "--format", "json"]);
    recover.assert_code(0);
    assert_eq!(
        recover.json()["status"],
        "clean",
        "{label}: nothing left to recover"
    );
    new
}

#[test]
fn a_panic_in_the_transaction_exits_4_and_leaves_the_old_or_the_new_state() {
    let points: &[(&str, bool)] = &[
        ("staged", false),
        ("journaled", false),
        ("before-verify", false),
        ("before-switch", false),
        ("after-switch", false),
        ("before-cleanup", false),
        ("staged", true),
        ("after-switch", true),
        ("before-cas", true),
        ("after-cas", true),
        ("after-index", true),
    ];
    for &(point, commit) in points {
        let label = format!(
            "panic at {point}{}",
            if commit { " (--commit)" } else { "" }
        );
        let repo = repo();
        let base = repo.head();
        let mut args = vec!["--checks", "none"];
        if commit {
            args.push("--commit");
        }
        let run = apply_panicking(&repo, point, PATCH, &args);
        assert_eq!(run.code, 4, "{label}: {}\n{}", run.stdout, run.stderr);
        let json = run.json();
        assert_eq!(json["error"]["kind"], "internal", "{label}: {json:#}");
        let message = json["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("internal error, please report")
                && message.contains(&format!("injected panic at {point}")),
            "{label}: {json:#}"
        );
        let new = whole(&repo, commit, &base, &label);
        // Past the point of no return the patch has landed; before it, nothing has. A
        // working-tree run lands when its history entry is written, after the last file is
        // switched: a panic while it switches rolls back.
        let landed = matches!(point, "before-cleanup" | "after-cas" | "after-index");
        assert_eq!(new, landed, "{label}");
    }
}

#[test]
fn a_panic_is_reported_in_words_on_a_terminal_format_too() {
    let repo = repo();
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), PATCH).expect("write");
    let out = Command::new(BIN)
        .args([
            "apply",
            pfile.path().to_str().expect("utf8"),
            "--checks",
            "none",
        ])
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_PANIC_AT", "before-switch")
        .env("NO_COLOR", "1")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let run = Run::from(out);
    run.assert_code(4);
    assert!(
        run.stderr
            .contains("internal error, please report: injected panic at before-switch"),
        "{}",
        run.stderr
    );
    // The location, for the report.
    assert!(run.stderr.contains("src/fault.rs"), "{}", run.stderr);
    // The default panic message is not printed on top.
    assert!(!run.stderr.contains("panicked at"), "{}", run.stderr);
}

#[test]
fn a_panic_in_an_mcp_call_is_an_internal_error_result_and_the_server_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let repo = repo();
    let mut child = Command::new(BIN)
        .arg("mcp")
        .current_dir(repo.path())
        .env("PATCHGATE_FAULT_PANIC_AT", "before-switch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut ask = |msg: Value| -> Option<Value> {
        writeln!(stdin, "{msg}").expect("write");
        let id = msg.get("id")?.clone();
        let mut line = String::new();
        loop {
            line.clear();
            assert!(out.read_line(&mut line).expect("read") > 0, "stdout closed");
            let answer: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if answer.get("id") == Some(&id) {
                return Some(answer);
            }
        }
    };
    ask(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    );
    ask(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: u64| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "apply_patch", "arguments": {"patch_text": PATCH, "checks": "none"}}})
    };
    for id in [2, 3] {
        let answer = ask(call(id)).expect("answer");
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{answer}");
        let error = &result["structuredContent"]["error"];
        assert_eq!(error["kind"], "internal", "{answer}");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("internal error, please report")),
            "{answer}"
        );
    }
    drop(stdin);
    assert!(child.wait().expect("exit").success());
    assert_eq!(repo.read_str("a.py"), "alpha = 1\n");
    assert_eq!(repo.leftovers(), Vec::<String>::new());
}
