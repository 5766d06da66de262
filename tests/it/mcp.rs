//! `patchgate mcp` with real clients: the rmcp client spawning the built binary over stdio, a raw
//! JSON-RPC session that reads every byte of stdout, and the Python `mcp` package's stdio client
//! (tests/mcp/client.py), each against a real temporary git repository.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::checks::require;
use crate::harness::{BIN, TestRepo, git};

const APP: &str = "def greet(name):\n    return 'Hello, ' + name\n\n\ndef farewell(name):\n    return 'Bye, ' + name\n";

fn python_repo() -> TestRepo {
    TestRepo::new().file("app.py", APP).commit()
}

fn args(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn connect(dir: &Path) -> Client {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("mcp").arg("-C").arg(dir).current_dir(dir);
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn patchgate mcp");
    ().serve(transport).await.expect("initialize")
}

async fn call(client: &Client, name: &'static str, a: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(name);
    params.arguments = Some(args(a));
    client
        .call_tool(params)
        .await
        .expect("a tool result, not a protocol error")
}

fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn structured(r: &CallToolResult) -> &Value {
    r.structured_content.as_ref().expect("structured content")
}

#[test]
fn rmcp_client_initialize_list_miss_retry_check_and_refusal() {
    let repo = python_repo();
    let dir = repo.path().canonicalize().expect("canonical");
    runtime().block_on(async {
        let client = connect(&dir).await;
        let info = client.peer_info().expect("server info");
        let server = info.server_info.as_ref().expect("server info");
        assert_eq!(server.name, "patchgate");

        let tools = client.list_tools(None).await.expect("tools/list").tools;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["apply_patch", "check", "detect", "undo"]);
        for t in &tools {
            assert_eq!(
                t.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                t.name
            );
            assert!(t.output_schema.is_some(), "{} has no output schema", t.name);
            let d = t.description.as_deref().unwrap_or_default();
            assert!(d.len() > 80, "{}: {d}", t.name);
        }
        let apply_props = &tools[0].input_schema["properties"];
        for p in [
            "patch",
            "patch_text",
            "dry_run",
            "checks",
            "gate",
            "fix",
            "branch",
        ] {
            assert!(apply_props.get(p).is_some(), "apply_patch lacks `{p}`");
        }

        // A stale old_string: isError, nothing written, a suggestion with the real text.
        let stale = json!({"patch": {"edits": [{
            "file_path": "app.py",
            "old_string": "def greet(name):\n    return \"Hello, \" + name",
            "new_string": "def greet(name):\n    return f'Hello, {name}!'",
        }]}, "checks": "none"});
        let r = call(&client, "apply_patch", stale).await;
        assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
        let s = structured(&r);
        assert_eq!(s["status"], "rejected");
        assert_eq!(s["edits"][0]["status"], "not_found");
        let suggestion = &s["edits"][0]["suggestions"][0];
        assert_eq!(suggestion["start_line"], 1);
        let real = suggestion["text"].as_str().expect("text").to_string();
        assert_eq!(real, "def greet(name):\n    return 'Hello, ' + name");
        assert!(text_of(&r).contains("not_found") || text_of(&r).contains("not found"));
        assert_eq!(repo.read_str("app.py"), APP, "a rejected patch wrote");

        // Retry with the suggestion's text: applied (built-in checks only: no tool needed).
        let retry = json!({"patch": {"edits": [{
            "file_path": "app.py",
            "old_string": real,
            "new_string": "def greet(name):\n    return f'Hello, {name}!'",
        }]}});
        let r = call(&client, "apply_patch", retry).await;
        assert_eq!(r.is_error, Some(false), "{}", text_of(&r));
        assert_eq!(structured(&r)["status"], "applied");
        assert!(repo.read_str("app.py").contains("f'Hello, {name}!'"));
        let applied_id = structured(&r)["patch_id"]
            .as_str()
            .expect("patch_id")
            .to_string();

        // `undo` of that patch restores the file; undoing the undo (by its patch_id) redoes it.
        let r = call(&client, "undo", json!({"patch_id": applied_id})).await;
        assert_eq!(r.is_error, Some(false), "{}", text_of(&r));
        assert_eq!(structured(&r)["undid"], applied_id.as_str());
        assert_eq!(
            repo.read_str("app.py"),
            APP,
            "undo did not restore the file"
        );
        let undo_id = structured(&r)["patch_id"].as_str().expect("id").to_string();
        // A file changed since: refused, named, nothing written.
        repo.write("app.py", "changed = True\n");
        let r = call(&client, "undo", json!({"patch_id": undo_id})).await;
        assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
        assert!(text_of(&r).contains("app.py"), "{}", text_of(&r));
        assert_eq!(repo.read_str("app.py"), "changed = True\n");
        repo.write("app.py", APP);
        let r = call(&client, "undo", json!({"patch_id": undo_id})).await;
        assert_eq!(r.is_error, Some(false), "{}", text_of(&r));
        assert!(
            repo.read_str("app.py").contains("f'Hello, {name}!'"),
            "redo"
        );

        // `check` on a staged file with a syntax error: isError, the built-in syntax gate names it.
        repo.write("broken.py", "def broken(:\n    pass\n");
        git(repo.path(), &["add", "broken.py"]);
        let r = call(
            &client,
            "check",
            json!({"staged": true, "checks": "syntax"}),
        )
        .await;
        assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
        let s = structured(&r);
        assert_eq!(s["status"], "checks_failed");
        assert_eq!(s["checks"][0]["path"], "broken.py", "{s}");
        assert_eq!(s["checks"][0]["checker"], "syntax");

        // Paths outside the repository are refused, as tool errors naming the reason.
        let outside = dir.parent().expect("parent").display().to_string();
        for (tool, a) in [
            ("check", json!({"paths": ["../"]})),
            ("detect", json!({"path": "/etc"})),
            (
                "apply_patch",
                json!({"repository": outside, "patch": {"edits": []}}),
            ),
        ] {
            let r = call(&client, tool, a).await;
            assert_eq!(r.is_error, Some(true), "{tool}: {}", text_of(&r));
            let err = &structured(&r)["error"];
            assert_eq!(err["kind"], "usage", "{tool}: {err}");
            assert!(
                err["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("outside")),
                "{tool}: {err}"
            );
        }
        // A patch whose file_path leaves the repository is refused by the plan, nothing written.
        let escape = json!({"patch": {"edits": [{
            "file_path": "../escape.py", "create": true, "new_string": "x = 1\n"}]}});
        let r = call(&client, "apply_patch", escape).await;
        assert_eq!(r.is_error, Some(true));
        assert!(!dir.parent().expect("parent").join("escape.py").exists());

        // Invalid input is a tool result too.
        let r = call(&client, "apply_patch", json!({"patch_text": "edits: [1"})).await;
        assert_eq!(r.is_error, Some(true));
        assert_eq!(structured(&r)["status"], "error");

        let r = call(&client, "detect", json!({"path": "app.py"})).await;
        assert_eq!(r.is_error, Some(false), "{}", text_of(&r));
        assert_eq!(structured(&r)["files"][0]["path"], "app.py");

        client.cancel().await.expect("close");
    });
}

/// A raw session: every line the server writes on stdout is a JSON-RPC 2.0 message, including
/// while checks (and, when installed, the node tools) run.
#[test]
fn stdout_carries_only_json_rpc_messages() {
    let node = require("eslint") && require("prettier");
    let repo = python_repo();
    if node {
        crate::checks::node_setup(&repo);
    }
    let repo = repo.commit();
    let mut child = Command::new(BIN)
        .args(["mcp"])
        .current_dir(repo.path())
        .env("PATCHGATE_TIMINGS", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").expect("write");
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let file = if node { "src/app.js" } else { "app.py" };
    let (old, new) = if node {
        ("return a + b;", "return b + a;")
    } else {
        ("'Hello, '", "'Hi, '")
    };
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "apply_patch", "arguments": {"patch": {"edits": [
            {"file_path": file, "old_string": old, "new_string": new}]}}}}),
    );
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "no_such_tool", "arguments": {}}}),
    );
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut ids = Vec::new();
    let mut line = String::new();
    while ids.len() < 3 {
        line.clear();
        let n = out.read_line(&mut line).expect("read");
        assert!(n > 0, "stdout closed early; ids so far {ids:?}");
        let msg: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a JSON-RPC message on stdout ({e}): {line:?}"));
        assert_eq!(msg["jsonrpc"], "2.0", "{line}");
        if let Some(id) = msg.get("id").and_then(Value::as_i64) {
            ids.push(id);
            if id == 2 {
                assert_eq!(msg["result"]["isError"], false, "{msg}");
            }
            if id == 3 {
                assert!(
                    msg.get("error").is_some(),
                    "an unknown tool is a protocol error"
                );
            }
        }
    }
    drop(stdin);
    let rest = child.wait_with_output().expect("exit");
    for l in String::from_utf8_lossy(&rest.stdout).lines() {
        let msg: Value = serde_json::from_str(l).expect("JSON-RPC after the last answer");
        assert_eq!(msg["jsonrpc"], "2.0");
    }
    assert!(rest.status.success(), "{:?}", rest.status);
    // Timings were on: they went to stderr.
    assert!(String::from_utf8_lossy(&rest.stderr).contains("planned"));
}

/// The node processes whose parent is `pid`.
fn node_children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse::<u32>().ok());
        if ppid == Some(pid) && head.ends_with("(node") {
            out.push(p);
        }
    }
    out.sort_unstable();
    out
}

/// The node hosts stay up between calls, restart when the eslint config changes, and go away
/// with the server.
#[test]
fn node_hosts_stay_warm_restart_on_config_change_and_die_with_the_server() {
    if !(require("eslint") && require("prettier") && require("@eslint/js")) {
        return;
    }
    let repo = TestRepo::new();
    crate::checks::node_setup(&repo);
    let repo = repo.commit();
    let dir = repo.path().canonicalize().expect("canonical");
    runtime().block_on(async {
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.arg("mcp").current_dir(&dir);
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        let server = transport.id().expect("server pid");
        let client = ().serve(transport).await.expect("initialize");
        let edit = |old: &str, new: &str| {
            json!({"patch": {"edits": [{"file_path": "src/app.js",
                "old_string": old, "new_string": new}]}})
        };
        let r = call(&client, "apply_patch", edit("a + b", "b + a")).await;
        assert_eq!(r.is_error, Some(false), "{}", text_of(&r));
        let checkers: Vec<&str> = structured(&r)["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .filter_map(|c| c["checker"].as_str())
            .collect();
        assert!(
            checkers.contains(&"eslint") && checkers.contains(&"prettier"),
            "{checkers:?}"
        );
        let first = node_children(server);
        assert_eq!(
            first.len(),
            2,
            "one host each for eslint and prettier: {first:?}"
        );

        let r = call(&client, "apply_patch", edit("b + a", "a + b")).await;
        assert_eq!(r.is_error, Some(false), "{}", text_of(&r));
        assert_eq!(node_children(server), first, "the hosts were restarted");

        // A new rule in the eslint config: the eslint host restarts and applies it.
        repo.write(
            "eslint.config.js",
            "import js from \"@eslint/js\";\n\nexport default [js.configs.recommended, \
             {rules: {\"no-var\": \"error\"}}];\n",
        );
        let r = call(
            &client,
            "apply_patch",
            edit("return a + b;", "var s = a + b;\n  return s;"),
        )
        .await;
        assert_eq!(
            r.is_error,
            Some(true),
            "the new rule was not seen: {}",
            text_of(&r)
        );
        let found = structured(&r)["checks"].to_string();
        assert!(found.contains("no-var"), "{found}");
        let third = node_children(server);
        assert_eq!(third.len(), 2, "{third:?}");
        assert_ne!(third, first, "the eslint host kept its old config");
        assert!(
            third.iter().any(|p| first.contains(p)),
            "prettier's host was restarted too"
        );

        client.cancel().await.expect("close");
        for pid in third {
            let gone = (0..100).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                })
            });
            assert!(gone, "node host {pid} outlived the server");
        }
    });
}

/// The Python `mcp` package's stdio client runs the same sequence (tests/mcp/client.py).
#[test]
fn python_mcp_client_runs_the_sequence() {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/venv/bin/python");
    let has_mcp = python.is_file()
        && Command::new(&python)
            .args(["-c", "import mcp"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !has_mcp {
        let why = format!(
            "the Python mcp package is not installed in {}",
            python.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("SKIPPED: {why} (run scripts/install-checkers)");
        return;
    }
    let repo = python_repo();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(BIN)
        .arg(repo.path())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok: all steps"), "{stdout}");
    assert!(repo.read_str("app.py").contains("f'Hello, {name}!'"));
}

/// `apply_patch` takes a diff's `strip` and `unidiff_zero`, as `patchgate apply --strip N
/// --unidiff-zero` does; they are refused with an edit list.
#[test]
fn apply_patch_reads_a_diff_with_strip_and_unidiff_zero() {
    let repo = python_repo();
    let dir = repo.path().canonicalize().expect("canonical");
    runtime().block_on(async {
        let client = connect(&dir).await;
        let tools = client.list_tools(None).await.expect("tools/list").tools;
        let props = &tools[0].input_schema["properties"];
        assert!(props.get("strip").is_some() && props.get("unidiff_zero").is_some());
        // Made with `diff -U0` between two trees, two folders deep.
        let diff = "--- old/pkg/app.py\n+++ new/pkg/app.py\n@@ -2,0 +3,2 @@\n+\n+\n";
        let r = call(
            &client,
            "apply_patch",
            json!({"patch_text": diff, "input": "diff", "checks": "none"}),
        )
        .await;
        assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
        assert_eq!(repo.read_str("app.py"), APP, "a refused patch wrote");
        let r = call(
            &client,
            "apply_patch",
            json!({"patch_text": diff, "input": "diff", "checks": "none",
                   "strip": 2, "unidiff_zero": true}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{}", text_of(&r));
        let s = structured(&r);
        assert_eq!(s["edits"][0]["file_path"], "app.py");
        assert!(
            s["edits"][0]["message"]
                .as_str()
                .is_some_and(|m| m.contains("line numbers")),
            "{s}"
        );
        assert_eq!(
            repo.read_str("app.py"),
            APP.replacen("'Hello, ' + name\n", "'Hello, ' + name\n\n\n", 1)
        );
        let r = call(
            &client,
            "apply_patch",
            json!({"patch": {"edits": []}, "strip": 1}),
        )
        .await;
        assert_eq!(r.is_error, Some(true));
        assert!(text_of(&r).contains("strip"), "{}", text_of(&r));
    });
}
