//! The ways to install patchgate without Rust, each built from this tree and installed as a user
//! would: the PyPI wheel (maturin, `bindings = "bin"`) into a fresh venv and through `uvx`, and
//! the npm packages (scripts/package-npm: the launcher and the platform package) into a fresh
//! prefix. Every installed command then runs with a PATH that has no cargo or rustc on it:
//! `--version`, `demo`, and the MCP handshake (initialize, tools/list, one apply_patch) of the
//! Python `mcp` client (tests/mcp/handshake.py). Claude Code's own health check (`claude mcp add`,
//! `claude mcp list`) connects to the npm-installed server, also from the JSON snippet that
//! `patchgate mcp --print-config` prints; every other snippet is parsed here. The README's local
//! `language: system` pre-commit hook runs the pip-installed binary.
//!
//! Cost: the wheel is built with the `dev` profile into a target directory of its own
//! (target/install-wheel: a first run compiles the dependencies once more, later runs reuse
//! them), never into the suite's target/debug, whose binary the other tests run meanwhile; the
//! npm packages wrap the binary the tests already run (BIN). No second optimised build. Installs
//! are offline (`--no-index`, `--offline`): only what this tree built can be installed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::Value;

use crate::checks::require_all;
use crate::harness::{BIN, Run, TestRepo, on_path};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");
const APP: &str = "def greet(name):\n    return 'Hello, ' + name\n";

/// Straight to the process's stderr (libtest captures `eprintln!`): the timings BENCHMARKS.md
/// quotes.
fn note(what: &str, started: Instant) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "install: {what}: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

fn run(cmd: &mut Command) -> Run {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    Run::from(out)
}

#[track_caller]
fn ok(r: Run, what: &str) -> Run {
    assert_eq!(r.code, 0, "{what}:\n{}\n{}", r.stdout, r.stderr);
    r
}

/// A PATH of `dirs` and `scratch/bin`, which links only the programs named: no Rust toolchain can
/// be found through it (asserted).
fn clean_path(scratch: &Path, dirs: &[PathBuf], programs: &[&str]) -> OsString {
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    for p in programs {
        let found = on_path(p).unwrap_or_else(|| panic!("{p} on PATH"));
        std::os::unix::fs::symlink(&found, bin.join(p)).expect("link");
    }
    let mut all = dirs.to_vec();
    all.push(bin);
    let path = std::env::join_paths(all).expect("PATH");
    for rust in ["cargo", "rustc", "rustup"] {
        let found = std::env::split_paths(&path).any(|d| d.join(rust).exists());
        assert!(!found, "{rust} must not be on the clean PATH {path:?}");
    }
    path
}

/// A command with only PATH, HOME and TMPDIR set (the demo's scratch copy goes under `scratch`).
fn clean(program: impl AsRef<std::ffi::OsStr>, path: &OsString, scratch: &Path) -> Command {
    let home = scratch.join("home");
    std::fs::create_dir_all(&home).expect("mkdir home");
    let mut c = Command::new(program);
    c.env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("TMPDIR", scratch)
        .env("NO_COLOR", "1")
        .env("npm_config_update_notifier", "false");
    c
}

/// `--version`, `demo`, and the MCP handshake through `command` (found on `path`).
fn version_demo_handshake(command: &[&str], path: &OsString, scratch: &Path, what: &str) {
    let r = ok(
        run(clean(command[0], path, scratch)
            .args(&command[1..])
            .arg("--version")),
        &format!("{what} --version"),
    );
    assert_eq!(r.stdout.trim(), format!("patchgate {VERSION}"), "{what}");

    let r = ok(
        run(clean(command[0], path, scratch)
            .args(&command[1..])
            .arg("demo")
            .current_dir(scratch)),
        &format!("{what} demo"),
    );
    assert!(
        r.stdout.contains("Inspect the result"),
        "{what} demo:\n{}",
        r.stdout
    );

    let repo = TestRepo::new().file("app.py", APP).commit();
    let python = Path::new(ROOT).join(".tools/venv/bin/python");
    let script = Path::new(ROOT).join("tests/mcp/handshake.py");
    let started = Instant::now();
    let r = run(clean(&python, path, scratch)
        .arg(&script)
        .arg(repo.path())
        .args(command)
        .arg("mcp"));
    assert!(
        r.code == 0 && r.stdout.contains("ok: handshake"),
        "{what}: MCP handshake failed:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    let first = r.stdout.lines().find(|l| l.starts_with("first call"));
    note(&format!("{what}: MCP handshake ({first:?})"), started);
    assert!(repo.read_str("app.py").contains("f'Hello, {name}!'"));
}

/// The interpreter a venv is made from (not a pyenv shim, which needs pyenv on PATH).
fn base_python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn wheel_from_the_tree_runs_from_a_fresh_venv_and_uvx_without_rust() {
    if !require_all(&["maturin", "uvx", "cargo"]) {
        return;
    }
    let work = tempfile::tempdir().expect("tempdir");
    let wheels = work.path().join("wheels");
    let started = Instant::now();
    // Its own target directory: maturin builds the binary with its own rustc arguments, so in
    // the suite's target/ cargo would relink target/debug/patchgate, the binary every other test
    // is running at that moment (they failed with "No such file or directory" while it did).
    let target = Path::new(BIN)
        .parent()
        .and_then(Path::parent)
        .expect("BIN lies in target/debug")
        .join("install-wheel");
    let r = run(Command::new("maturin")
        .args(["build", "--locked", "--profile", "dev", "--out"])
        .arg(&wheels)
        .arg("--manifest-path")
        .arg(Path::new(ROOT).join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_NET_OFFLINE", "true"));
    ok(r, "maturin build");
    note("maturin build --profile dev", started);
    let wheel: Vec<PathBuf> = std::fs::read_dir(&wheels)
        .expect("wheels")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(wheel.len(), 1, "one wheel: {wheel:?}");
    let name = wheel[0].file_name().expect("name").to_string_lossy();
    assert!(
        name.starts_with(&format!("patchgate-{VERSION}-py3-none-")) && name.ends_with(".whl"),
        "the wheel carries the crate's version: {name}"
    );

    let venv = work.path().join("venv");
    ok(
        run(Command::new(base_python()).args(["-m", "venv"]).arg(&venv)),
        "venv",
    );
    let started = Instant::now();
    ok(
        run(Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "install", "--no-index", "--no-deps", "--quiet"])
            .arg("--disable-pip-version-check")
            .arg(&wheel[0])),
        "pip install",
    );
    note("pip install of the wheel", started);

    let path = clean_path(work.path(), &[venv.join("bin")], &["git"]);
    version_demo_handshake(&["patchgate"], &path, work.path(), "pip-installed");

    // `uvx` from the same wheel: a fresh cache, no index, the venv's interpreter.
    let uv_path = clean_path(&work.path().join("uv"), &[], &["git", "uv", "uvx"]);
    std::fs::create_dir_all(work.path().join("uv")).expect("mkdir");
    let uvx = format!(
        "uvx --no-config --no-index --find-links {} --cache-dir {} --python {} patchgate",
        wheels.display(),
        work.path().join("uv-cache").display(),
        base_python().display()
    );
    let words: Vec<&str> = uvx.split(' ').collect();
    version_demo_handshake(&words, &uv_path, work.path(), "uvx");

    precommit_system_hook_runs_the_installed_binary(&venv.join("bin"), work.path());
}

/// The README's `language: system` pre-commit hook runs the pip-installed binary (on `venv_bin`):
/// no build on first use, and a staged syntax error blocks.
fn precommit_system_hook_runs_the_installed_binary(venv_bin: &Path, scratch: &Path) {
    if !require_all(&["pre-commit"]) {
        return;
    }
    let config = "repos:\n- repo: local\n  hooks:\n  - id: patchgate-check\n    \
                  name: patchgate check\n    entry: patchgate check --staged --checks syntax\n    \
                  language: system\n    pass_filenames: false\n";
    let repo = TestRepo::new()
        .file(".pre-commit-config.yaml", config)
        .file("ok.py", "x = 1\n")
        .commit();
    repo.write("broken.py", "def broken(:\n    pass\n");
    repo.git(&["add", "broken.py"]);
    let path = clean_path(
        &scratch.join("pc"),
        &[venv_bin.to_path_buf()],
        &["git", "pre-commit"],
    );
    let started = Instant::now();
    let r = run(clean("pre-commit", &path, scratch)
        .args(["run", "patchgate-check"])
        .env("PRE_COMMIT_HOME", scratch.join("pc-home"))
        .current_dir(repo.path()));
    note("pre-commit system hook, first run", started);
    assert_ne!(
        r.code, 0,
        "a staged syntax error blocks:\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(
        r.stdout.contains("broken.py") && r.stdout.contains("Failed"),
        "the hook ran patchgate and it named the file:\n{}\n{}",
        r.stdout,
        r.stderr
    );
}

/// npm's name for this machine's platform (`process.platform`-`process.arch`).
fn npm_platform() -> String {
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{}-{cpu}", std::env::consts::OS)
}

#[test]
fn npm_package_from_the_tree_runs_without_rust_and_passes_claude_codes_health_check() {
    if !require_all(&["npm", "node", "claude"]) {
        return;
    }
    let work = tempfile::tempdir().expect("tempdir");
    let packs = work.path().join("packs");
    let started = Instant::now();
    ok(
        run(Command::new(Path::new(ROOT).join("scripts/package-npm"))
            .arg(&packs)
            .arg(format!("{BIN}:{}", npm_platform()))),
        "scripts/package-npm",
    );
    note("scripts/package-npm", started);
    let main = packs.join(format!("patchgate-{VERSION}.tgz"));
    let plat = packs.join(format!("patchgate-{}-{VERSION}.tgz", npm_platform()));
    assert!(main.is_file() && plat.is_file(), "both tarballs exist");

    let app = work.path().join("app");
    std::fs::create_dir_all(&app).expect("mkdir");
    std::fs::write(app.join("package.json"), "{\"private\": true}\n").expect("package.json");
    let started = Instant::now();
    ok(
        run(Command::new("npm")
            .args(["install", "--offline", "--no-audit", "--no-fund"])
            .arg("--loglevel=error")
            .arg("--cache")
            .arg(work.path().join("npm-cache"))
            .arg(&main)
            .arg(&plat)
            .current_dir(&app)),
        "npm install",
    );
    note("npm install of the tarballs", started);

    let bin = app.join("node_modules/.bin");
    let path = clean_path(work.path(), &[bin], &["git", "node", "npm", "npx", "sh"]);
    version_demo_handshake(&["patchgate"], &path, work.path(), "npm-installed");
    let r = ok(
        run(clean("npx", &path, work.path())
            .args(["--offline", "patchgate", "--version"])
            .current_dir(&app)),
        "npx patchgate --version",
    );
    assert_eq!(r.stdout.trim(), format!("patchgate {VERSION}"));

    claude_code_health_check(&path, work.path());
}

/// Claude Code registers the npm-installed server (its command line, and the JSON snippet of
/// `--print-config`) and its `claude mcp list` connects to each; a server that cannot start is
/// reported failed, so "Connected" is the client's real verdict.
fn claude_code_health_check(path: &OsString, scratch: &Path) {
    let claude = on_path("claude").expect("claude");
    let repo = TestRepo::new().file("app.py", APP).commit();
    let claude_cmd = |args: &[&str]| {
        run(clean(&claude, path, scratch)
            .args(args)
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .current_dir(repo.path()))
    };
    ok(
        claude_cmd(&["mcp", "add", "patchgate", "--", "patchgate", "mcp"]),
        "claude mcp add",
    );
    let snippet = ok(
        run(clean("patchgate", path, scratch)
            .args([
                "mcp",
                "--print-config",
                "claude-desktop",
                "--via",
                "path",
                "-C",
            ])
            .arg(repo.path())),
        "--print-config claude-desktop",
    );
    let config: Value = serde_json::from_str(&snippet.stdout).expect("JSON snippet");
    let server = config["mcpServers"]["patchgate"].to_string();
    ok(
        claude_cmd(&["mcp", "add-json", "from-snippet", &server]),
        "claude mcp add-json",
    );
    ok(
        claude_cmd(&[
            "mcp",
            "add",
            "broken",
            "--",
            "patchgate",
            "mcp",
            "-C",
            "/nonexistent",
        ]),
        "claude mcp add broken",
    );
    let started = Instant::now();
    let r = ok(claude_cmd(&["mcp", "list"]), "claude mcp list");
    note("claude mcp list", started);
    let line = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("{name} in claude mcp list:\n{}", r.stdout))
            .to_string()
    };
    assert!(line("patchgate").contains("Connected"), "{}", r.stdout);
    assert!(line("from-snippet").contains("Connected"), "{}", r.stdout);
    assert!(!line("broken").contains("Connected"), "{}", r.stdout);
}

fn print_config(client: &str, via: &str, dir: Option<&str>) -> String {
    let mut c = Command::new(BIN);
    c.args(["mcp", "--print-config", client, "--via", via]);
    if let Some(d) = dir {
        c.args(["-C", d]);
    }
    ok(run(&mut c), &format!("--print-config {client}")).stdout
}

#[test]
fn print_config_snippets_parse_and_start_the_server() {
    assert_eq!(
        print_config("claude-code", "uvx", None),
        "claude mcp add patchgate -- uvx patchgate mcp\n"
    );
    assert_eq!(
        print_config("claude-code", "npx", Some("/src/my app")),
        "claude mcp add patchgate -- npx -y patchgate mcp -C '/src/my app'\n"
    );
    let json = |client: &str, via: &str, dir: Option<&str>| -> Value {
        serde_json::from_str(&print_config(client, via, dir)).expect("JSON")
    };
    for client in ["claude-desktop", "cursor", "gemini"] {
        let v = json(client, "npx", Some("/r"));
        assert_eq!(
            v["mcpServers"]["patchgate"],
            serde_json::json!({"command": "npx", "args": ["-y", "patchgate", "mcp", "-C", "/r"]}),
            "{client}"
        );
    }
    // Claude Desktop starts servers outside any project: the snippet always names one.
    let cwd = std::env::current_dir().expect("cwd");
    let desktop = json("claude-desktop", "uvx", None);
    assert_eq!(
        desktop["mcpServers"]["patchgate"]["args"],
        serde_json::json!(["patchgate", "mcp", "-C", cwd.to_str().expect("utf-8")])
    );
    let cursor = json("cursor", "uvx", None);
    assert_eq!(
        cursor["mcpServers"]["patchgate"]["args"][3],
        "${workspaceFolder}"
    );
    let vscode = json("vscode", "uvx", None);
    assert_eq!(
        vscode["servers"]["patchgate"],
        serde_json::json!({"type": "stdio", "command": "uvx",
            "args": ["patchgate", "mcp", "-C", "${workspaceFolder}"]})
    );
    let codex: toml::Table =
        toml::from_str(&print_config("codex", "path", None)).expect("TOML snippet");
    let server = &codex["mcp_servers"]["patchgate"];
    let exe = std::fs::canonicalize(BIN).expect("binary");
    assert_eq!(
        std::fs::canonicalize(server["command"].as_str().expect("command")).expect("path"),
        exe,
        "--via path names this binary"
    );
    assert_eq!(server["args"].as_array().expect("args").len(), 1);
    // --via without --print-config is refused (exit 3), and serves nothing.
    let r = run(Command::new(BIN).args(["mcp", "--via", "npx"]));
    assert_eq!(r.code, 3, "{}", r.stderr);
}
