//! Bounded input (docs/report.md, "Limits"): a patch over the size limit is refused before it is
//! read whole, in bounded memory and time; YAML aliases and nesting are bounded; the MCP server
//! answers an oversized or malformed request with a JSON-RPC error and goes on serving.
//!
//! Memory is the child's own peak RSS as `/usr/bin/time -f %M` reports it: `wait4(2)` straight
//! on a child spawned from this (large, multi-threaded) test process would count the test
//! process's own memory too (Linux keeps the pre-`exec` high-water mark of a `vfork`ed child).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{BIN, Run, TestRepo};

/// A finished child: its outcome, peak RSS in MiB and wall time.
struct Measured {
    run: Run,
    peak_mib: u64,
    took: Duration,
}

/// `/usr/bin/time`, which measures a child it forks itself (in CI it must be there).
fn time_program() -> Option<&'static str> {
    let path = "/usr/bin/time";
    if std::path::Path::new(path).is_file() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "/usr/bin/time is missing (Debian: apt-get install time)"
    );
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED (memory bounds only): /usr/bin/time is missing"
    );
    None
}

/// What the child reads on stdin.
enum Input {
    Nothing,
    /// Through a pipe, written by a thread that gives up when the child stops reading.
    Piped(Vec<u8>),
    /// A file redirected to stdin (`< file`).
    File(std::path::PathBuf),
}

/// Runs patchgate in `repo` with `args` and `stdin`, and measures it. Without `/usr/bin/time`
/// (locally) the peak is 0.
fn measured(repo: &TestRepo, args: &[&str], env: &[(&str, &str)], stdin: Input) -> Measured {
    let start = Instant::now();
    let report = tempfile::NamedTempFile::new().expect("time's report");
    let time = time_program();
    let mut cmd = match time {
        Some(t) => {
            let mut c = Command::new(t);
            c.args(["-f", "%M", "-o"]).arg(report.path()).arg(BIN);
            c
        }
        None => Command::new(BIN),
    };
    cmd.args(args)
        .current_dir(repo.path())
        .env("NO_COLOR", "1")
        .stdin(match &stdin {
            Input::Nothing => Stdio::null(),
            Input::Piped(_) => Stdio::piped(),
            Input::File(p) => Stdio::from(std::fs::File::open(p).expect("open stdin file")),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn patchgate");
    if let (Some(mut pipe), Input::Piped(bytes)) = (child.stdin.take(), stdin) {
        std::thread::spawn(move || {
            for chunk in bytes.chunks(1 << 20) {
                if pipe.write_all(chunk).is_err() {
                    return;
                }
            }
        });
    }
    let out = child.wait_with_output().expect("wait");
    let run = Run::from(out);
    let kib: u64 = std::fs::read_to_string(report.path())
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
        .unwrap_or(0);
    assert!(time.is_none() || kib > 0, "no peak RSS from /usr/bin/time");
    Measured {
        run,
        peak_mib: kib / 1024,
        took: start.elapsed(),
    }
}

#[track_caller]
fn assert_refused_for_size(m: &Measured, limit_mib: u64) {
    m.run.assert_code(3);
    let json = m.run.json();
    assert_eq!(json["error"]["kind"], "usage", "{json:#}");
    let message = json["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("larger than {limit_mib} MiB")),
        "{json:#}"
    );
    assert!(
        json["error"]["help"]
            .as_str()
            .is_some_and(|h| h.contains("PATCHGATE_MAX_PATCH_MB")),
        "{json:#}"
    );
}

fn repo() -> TestRepo {
    TestRepo::new().file("a.txt", "alpha\n").commit()
}

#[test]
fn dev_zero_is_refused_quickly_in_bounded_memory() {
    let repo = repo();
    let before = repo.snapshot();
    let m = measured(
        &repo,
        &["apply", "/dev/zero", "--format", "json"],
        &[],
        Input::Nothing,
    );
    assert_refused_for_size(&m, 64);
    // It read the limit and a byte, then stopped: a little over 64 MiB, far from "all of it".
    assert!(m.peak_mib < 200, "peak RSS {} MiB", m.peak_mib);
    assert!(m.took < Duration::from_secs(20), "took {:?}", m.took);
    assert_eq!(repo.snapshot(), before);
    eprintln!("/dev/zero: {} MiB peak, {:?}", m.peak_mib, m.took);
}

#[test]
fn a_200_mb_patch_is_refused_before_it_is_read() {
    let repo = repo();
    let before = repo.snapshot();
    let dir = tempfile::tempdir().expect("tempdir");
    let big = dir.path().join("big.yaml");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big).expect("create"));
        writeln!(
            f,
            "- file_path: a.txt\n  old_string: alpha\n  new_string: |"
        )
        .expect("write");
        let line = format!("    {}\n", "x".repeat(99));
        for _ in 0..(200 << 20) / line.len() {
            f.write_all(line.as_bytes()).expect("write");
        }
    }
    let path = big.to_str().expect("utf8");
    // A file: judged by its size, nothing read.
    let m = measured(
        &repo,
        &["apply", path, "--format", "json"],
        &[],
        Input::Nothing,
    );
    assert_refused_for_size(&m, 64);
    assert!(m.peak_mib < 40, "peak RSS {} MiB", m.peak_mib);
    // The same text on stdin: read up to the limit, then refused.
    let text = std::fs::read(&big).expect("read");
    let m = measured(
        &repo,
        &["apply", "-", "--format", "json"],
        &[],
        Input::Piped(text),
    );
    assert_refused_for_size(&m, 64);
    assert!(m.peak_mib < 200, "peak RSS {} MiB", m.peak_mib);
    assert!(m.took < Duration::from_secs(20), "took {:?}", m.took);
    // Redirected from the file (`< big.yaml`): judged by the file's size, nothing read.
    let m = measured(
        &repo,
        &["apply", "-", "--format", "json"],
        &[],
        Input::File(big.clone()),
    );
    assert_refused_for_size(&m, 64);
    assert!(m.peak_mib < 40, "peak RSS {} MiB", m.peak_mib);
    assert_eq!(repo.snapshot(), before);
}

#[test]
fn the_limit_is_set_by_patchgate_max_patch_mb() {
    let repo = repo();
    let mut text = String::from("- file_path: a.txt\n  old_string: alpha\n  new_string: |\n");
    while text.len() < (3 << 20) / 2 {
        text.push_str("    more text for a larger patch\n");
    }
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), &text).expect("write");
    let path = pfile.path().to_str().expect("utf8");
    let m = measured(
        &repo,
        &["apply", path, "--format", "json", "--dry-run"],
        &[("PATCHGATE_MAX_PATCH_MB", "1")],
        Input::Nothing,
    );
    assert_refused_for_size(&m, 1);
    let m = measured(
        &repo,
        &["apply", path, "--format", "json", "--dry-run"],
        &[("PATCHGATE_MAX_PATCH_MB", "2")],
        Input::Nothing,
    );
    m.run.assert_code(0);
    let m = measured(
        &repo,
        &["apply", path, "--format", "json", "--dry-run"],
        &[("PATCHGATE_MAX_PATCH_MB", "lots")],
        Input::Nothing,
    );
    m.run.assert_code(3);
    let json = m.run.json();
    assert!(
        json["error"]["message"]
            .as_str()
            .is_some_and(|s| s.contains("PATCHGATE_MAX_PATCH_MB=`lots`")),
        "{json:#}"
    );
}

#[test]
fn yaml_alias_bombs_and_deep_nesting_are_refused_in_bounded_time_and_memory() {
    let repo = repo();
    let before = repo.snapshot();
    // Aliases by the thousand: far past what a patch that reuses a string needs.
    let mut many = String::from("- &e {file_path: a.txt, old_string: alpha, new_string: beta}\n");
    for _ in 0..1500 {
        many.push_str("- *e\n");
    }
    // One string aliased many times: a small file that would hold gigabytes as edits.
    let mut wide = format!(
        "- &big {{file_path: a.txt, old_string: alpha, new_string: \"{}\"}}\n",
        "y".repeat(1 << 20)
    );
    for _ in 0..5000 {
        wide.push_str("- *big\n");
    }
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_json = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    for (name, text) in [
        ("many", many),
        ("wide", wide),
        ("deep", deep),
        ("deep json", deep_json),
    ] {
        let m = measured(
            &repo,
            &["apply", "-", "--format", "json"],
            &[],
            Input::Piped(text.into_bytes()),
        );
        m.run.assert_code(3);
        let json = m.run.json();
        assert_eq!(json["error"]["kind"], "invalid_patch", "{name}: {json:#}");
        if name == "many" || name == "wide" {
            assert!(
                json["error"]["help"]
                    .as_str()
                    .is_some_and(|h| h.contains("aliases")),
                "{name}: {json:#}"
            );
        }
        assert!(
            !m.run.stderr.contains("panicked"),
            "{name}: {}",
            m.run.stderr
        );
        assert!(m.peak_mib < 200, "{name}: peak RSS {} MiB", m.peak_mib);
        assert!(
            m.took < Duration::from_secs(20),
            "{name}: took {:?}",
            m.took
        );
        eprintln!(
            "{name}: {} MiB peak, {:?}: {}",
            m.peak_mib, m.took, json["error"]["message"]
        );
    }
    assert_eq!(repo.snapshot(), before);
}

/// Reads JSON-RPC messages from the server until one with `id` arrives.
fn answer_to(out: &mut impl BufRead, id: &Value) -> Value {
    let mut line = String::new();
    loop {
        line.clear();
        let n = out.read_line(&mut line).expect("read");
        assert!(n > 0, "the server closed stdout before answering {id}");
        let msg: Value = serde_json::from_str(&line).expect("a JSON-RPC message");
        if msg.get("id") == Some(id) {
            return msg;
        }
    }
}

#[test]
fn mcp_answers_an_oversized_or_malformed_request_and_keeps_serving() {
    let repo = repo();
    let mut child = Command::new(BIN)
        .arg("mcp")
        .current_dir(repo.path())
        .env("PATCHGATE_MAX_PATCH_MB", "32")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |bytes: &[u8]| {
        stdin.write_all(bytes).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string()
        .as_bytes(),
    );
    let init = answer_to(&mut out, &json!(1));
    assert!(init.get("result").is_some(), "{init}");
    send(br#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);

    // 50 MB of patch text: over the limit of 32 MiB.
    let started = Instant::now();
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"apply_patch","arguments":{{"patch_text":"{}"}}}}}}"#,
        "z".repeat(50 << 20)
    );
    send(huge.as_bytes());
    drop(huge);
    let answer = answer_to(&mut out, &json!(2));
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("32 MiB") && message.contains("PATCHGATE_MAX_PATCH_MB"),
        "{answer}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));

    // Not JSON: a parse error, with the id it had before it broke.
    send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"#);
    let answer = answer_to(&mut out, &json!(3));
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // Not even the id: answered with a null id.
    send(b"this is not json");
    let answer = answer_to(&mut out, &Value::Null);
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // JSON, but not a request.
    send(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":7}"#);
    let answer = answer_to(&mut out, &json!(4));
    assert_eq!(answer["error"]["code"], -32600, "{answer}");

    // And the server still works.
    send(br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    let answer = answer_to(&mut out, &json!(5));
    let tools = answer["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "apply_patch"), "{answer}");
    send(
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
            "name": "apply_patch", "arguments": {"dry_run": true, "checks": "none",
            "patch_text": "- {file_path: a.txt, old_string: alpha, new_string: ALPHA}\n"}}})
        .to_string()
        .as_bytes(),
    );
    let answer = answer_to(&mut out, &json!(6));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    drop(stdin);
    assert!(child.wait().expect("exit").success());
}

/// Many edits to one file (planned in one pass) give the bytes and line numbers of applying them
/// one after the other; a file whose later edit rewrites an earlier edit's new text, and one
/// whose later edit would be ambiguous only because of an earlier edit, in the same patch, too.
#[test]
fn many_edits_to_one_file_apply_in_order() {
    let lines: Vec<String> = (0..20_000).map(|i| format!("v{i} = f({i})\n")).collect();
    let mut edits = Vec::new();
    let mut after = lines.clone();
    // Every tenth line: each edit adds a line, so each edit's reported line counts the lines the
    // earlier edits added above it.
    for i in (0..20_000).step_by(10) {
        let new = format!("v{i} = f({i})\n# edited {i}\n");
        edits.push(json!({"file_path": "big.txt", "old_string": lines[i], "new_string": new}));
        after[i] = new;
    }
    // Edit 2 rewrites edit 1's new text.
    let chain = "a = 1\nb = 2\nc = 3\n";
    edits.push(json!({"file_path": "chain.txt", "old_string": "a = 1", "new_string": "a = 10"}));
    edits.push(json!({"file_path": "chain.txt", "old_string": "a = 10", "new_string": "a = 11"}));
    let repo = TestRepo::new()
        .file("big.txt", lines.concat())
        .file("chain.txt", chain)
        .file("dup.txt", "x\nc = 3\n")
        .commit();
    let run = repo.apply(
        &json!({ "edits": edits }).to_string(),
        &["--checks", "none"],
    );
    let report = run.json();
    let outcomes = report["edits"].as_array().expect("edits");
    assert_eq!(repo.read_str("big.txt"), after.concat());
    assert_eq!(outcomes[0]["lines"], json!([[1, 1]]));
    assert_eq!(outcomes[1]["lines"], json!([[12, 12]]));
    assert_eq!(outcomes[1_999]["lines"], json!([[21_990, 21_990]]));
    assert_eq!(repo.read_str("chain.txt"), "a = 11\nb = 2\nc = 3\n");
    assert_eq!(outcomes[2_001]["status"], "applied");
    // The second edit sees the first one's copy of `c = 3`: ambiguous, and nothing is written.
    let dup = json!({"edits": [
        {"file_path": "dup.txt", "old_string": "x\n", "new_string": "x\nc = 3\n"},
        {"file_path": "dup.txt", "old_string": "c = 3", "new_string": "c = 4"},
    ]});
    let run = repo.apply(&dup.to_string(), &["--checks", "none"]);
    let report = run.json();
    assert_eq!(report["edits"][1]["status"], "ambiguous", "{report}");
    assert_eq!(report["edits"][1]["lines"], json!([[2, 2], [3, 3]]));
    assert_eq!(repo.read_str("dup.txt"), "x\nc = 3\n");
}
