//! Package checkers on a fresh checkout (docs/checks.md): clippy and go vet get their dependencies
//! fetched once, or say in plain words (with what to run) why they cannot run: offline with
//! dependencies missing, a download that failed, a toolchain too old for the project.
//!
//! Every Rust test gets a fresh, empty `CARGO_HOME` (a temp dir; rustup's toolchains are still
//! found through `RUSTUP_HOME` and PATH), so nothing depends on what this machine has cached. The
//! Go module proxy is not reachable where this project is built, so the Go tests cover what needs
//! no network: too old, offline, a download that fails against a closed port, a vendored module.
//! Only `cargo_fetches_missing_dependencies_once` downloads (one tiny crate from crates.io).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::checks::require;
use crate::harness::{BIN, Run, TestRepo, assert_subset, on_path};

/// Environment changes for one run: `Some` sets, `None` removes.
type Env = Vec<(&'static str, Option<OsString>)>;

/// `patchgate ARGS` in the repository, with `env` applied over this process's environment.
fn run_env(repo: &TestRepo, args: &[&str], env: &Env) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(repo.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    Run::from(cmd.output().expect("patchgate runs"))
}

/// `patchgate apply` of a one-edit patch, JSON report.
fn apply_env(repo: &TestRepo, file: &str, old: &str, new: &str, args: &[&str], env: &Env) -> Run {
    let patch = json!({"edits": [{"file_path": file, "old_string": old, "new_string": new}]});
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), patch.to_string()).expect("write patch");
    let mut all = vec![
        "apply",
        pfile.path().to_str().expect("utf8"),
        "--format",
        "json",
    ];
    all.extend_from_slice(args);
    run_env(repo, &all, env)
}

#[track_caller]
fn check<'a>(report: &'a Value, checker: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["checker"] == checker))
        .unwrap_or_else(|| panic!("no {checker} report in:\n{report:#}"))
}

#[track_caller]
fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field} in {v:#}"))
}

// ---------------------------------------------------------------------------------------------
// Rust

/// An empty CARGO_HOME of its own; the toolchain is still found (rustup's proxies on PATH, its
/// toolchains in RUSTUP_HOME, which defaults to one under HOME, unchanged).
fn fresh_cargo(home: &Path) -> Env {
    let mut env: Env = vec![
        ("CARGO_HOME", Some(home.into())),
        ("CARGO_NET_OFFLINE", None),
    ];
    if std::env::var_os("RUSTUP_HOME").is_none()
        && let Some(h) = std::env::var_os("HOME")
    {
        let rustup = PathBuf::from(h).join(".rustup");
        if rustup.is_dir() {
            env.push(("RUSTUP_HOME", Some(rustup.into())));
        }
    }
    env
}

/// A library crate depending on `itoa` (not in any fresh CARGO_HOME), no Cargo.lock.
fn itoa_crate() -> TestRepo {
    TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"uses-itoa\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nitoa = \"=1.0.11\"\n",
        )
        .file(
            "src/lib.rs",
            "pub fn show(x: u32) -> String {\n    let mut b = itoa::Buffer::new();\n    \
             b.format(x).to_string()\n}\n",
        )
        .file(".gitignore", "target\n")
        .commit()
}

const LIB: &str = "src/lib.rs";
const OLD: &str = "    b.format(x).to_string()\n";
const NEEDLESS_RETURN: &str = "    return b.format(x).to_string();\n";
const CLEAN: &str = "    b.format(x + 1).to_string()\n";

fn rustc_release() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("release: "))
        .expect("rustc -vV names its release")
        .trim()
        .to_string()
}

/// Whether crates.io answered; locally a machine without network skips, in CI it fails.
fn downloaded(clippy: &Value) -> bool {
    let note = clippy["note"].as_str().unwrap_or_default();
    if !note.starts_with("downloading the dependencies failed") {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "crates.io is not reachable: {note}"
    );
    eprintln!("SKIPPED: crates.io is not reachable ({note})");
    false
}

/// A fresh checkout with a registry dependency: clippy fetches it (into the mirror's project, the
/// user's tree gets no Cargo.lock) and really runs; the dependency state is stamped; and when the
/// cache is emptied behind the stamp's back, clippy's own complaint makes it fetch again.
#[test]
fn cargo_fetches_missing_dependencies_once() {
    if !require("cargo") || !require("clippy") {
        return;
    }
    let home = tempfile::tempdir().expect("cargo home");
    let repo = itoa_crate();
    let env = fresh_cargo(home.path());
    let run = apply_env(&repo, LIB, OLD, NEEDLESS_RETURN, &[], &env);
    let report = run.json();
    let clippy = check(&report, "clippy");
    if !downloaded(clippy) {
        return;
    }
    run.assert_code(1);
    assert_subset(
        clippy,
        &json!({"status": "fail", "findings": [{"rule": "clippy::needless_return", "new": true}]}),
        "clippy",
    );
    assert!(clippy.get("help").is_none(), "{clippy:#}");
    assert!(
        home.path().join("registry").is_dir(),
        "itoa was fetched into the fresh CARGO_HOME"
    );
    assert!(!repo.exists("Cargo.lock"), "the user's tree is not touched");
    let stamp = repo.path().join(".git/patchgate/prepared/cargo-_root");
    assert!(stamp.is_file(), "the ready state is remembered");

    // The cache is emptied, and the network is gone: the stamp is trusted, clippy says the
    // dependency is missing, and the new fetch fails, in plain words.
    std::fs::remove_dir_all(home.path().join("registry")).expect("empty the cache");
    let mut no_net = env.clone();
    no_net.push(("CARGO_HTTP_PROXY", Some("http://127.0.0.1:9".into())));
    no_net.push(("CARGO_NET_RETRY", Some("0".into())));
    let run = apply_env(&repo, LIB, OLD, CLEAN, &[], &no_net);
    run.assert_code(0);
    let report = run.json();
    let clippy = check(&report, "clippy");
    assert_eq!(clippy["status"], "error", "{clippy:#}");
    assert!(
        text(clippy, "note").starts_with("downloading the dependencies failed: ")
            && text(clippy, "note").contains("127.0.0.1"),
        "{clippy:#}"
    );
    assert!(text(clippy, "help").contains("cargo fetch"), "{clippy:#}");

    // With the network back, it fetches again and clippy runs (a clean edit: pass).
    let run = apply_env(&repo, LIB, CLEAN, OLD, &["--dry-run"], &env);
    let report = run.json();
    let clippy = check(&report, "clippy");
    if !downloaded(clippy) {
        return;
    }
    assert_eq!(clippy["status"], "pass", "{clippy:#}");
}

/// A download that fails (a proxy on a closed port: no network needed) is an error that says
/// why and what to run, and does not block the patch.
#[test]
fn cargo_fetch_failure_is_a_plain_error() {
    if !require("cargo") || !require("clippy") {
        return;
    }
    let home = tempfile::tempdir().expect("cargo home");
    let repo = itoa_crate();
    let mut env = fresh_cargo(home.path());
    env.push(("CARGO_HTTP_PROXY", Some("http://127.0.0.1:9".into())));
    env.push(("CARGO_NET_RETRY", Some("0".into())));
    let run = apply_env(&repo, LIB, OLD, CLEAN, &[], &env);
    run.assert_code(0);
    let report = run.json();
    let clippy = check(&report, "clippy");
    assert_eq!(clippy["status"], "error", "{clippy:#}");
    let note = text(clippy, "note");
    assert!(
        note.starts_with("downloading the dependencies failed: ") && !note.contains('\n'),
        "{note}"
    );
    assert_eq!(
        text(clippy, "help"),
        format!(
            "run `cargo fetch` in {} to see the whole error (network, proxy or registry \
             settings); patchgate then finds them in the local cache",
            repo.path().display()
        )
    );
    assert_eq!(repo.read_str(LIB).matches("x + 1").count(), 1, "applied");
}

/// Offline (CARGO_NET_OFFLINE, or `--offline`) with the dependency not in the cache: clippy is
/// `error` with the help in the JSON report, the patch still applies, and only
/// `--require-tools` makes that block.
#[test]
fn cargo_offline_with_missing_dependencies_says_what_to_run() {
    if !require("cargo") || !require("clippy") {
        return;
    }
    let home = tempfile::tempdir().expect("cargo home");
    let repo = itoa_crate();
    let dir = repo.path().display().to_string();
    let mut env = fresh_cargo(home.path());
    env.push(("CARGO_NET_OFFLINE", Some("true".into())));

    let blocked = apply_env(&repo, LIB, OLD, CLEAN, &["--require-tools"], &env);
    blocked.assert_code(1);
    assert_eq!(
        repo.read_str(LIB).matches("x + 1").count(),
        0,
        "not written"
    );

    let run = apply_env(&repo, LIB, OLD, CLEAN, &[], &env);
    run.assert_code(0);
    assert_eq!(repo.read_str(LIB).matches("x + 1").count(), 1, "written");
    let report = run.json();
    assert_subset(
        check(&report, "clippy"),
        &json!({
            "status": "error",
            "note": "dependencies not downloaded (offline)",
            "help": format!(
                "run `CARGO_NET_OFFLINE=false cargo fetch` in {dir}, or unset CARGO_NET_OFFLINE \
                 (patchgate then fetches them)"
            ),
        }),
        "CARGO_NET_OFFLINE",
    );
    assert!(
        !home.path().join("registry/cache").exists(),
        "nothing was downloaded"
    );

    // `--offline` on the command line, the human report: the help under the note.
    let env = fresh_cargo(home.path());
    let run = run_env(&repo, &["check", "--offline", LIB], &env);
    run.assert_code(0);
    assert!(
        run.stdout.contains(&format!(
            "  ! clippy: error on src/lib.rs (dependencies not downloaded (offline))\n      \
             help: run `cargo fetch` in {dir}, or run patchgate without --offline\n"
        )),
        "{}",
        run.stdout
    );
}

fn rustup_help(version: &str) -> String {
    if on_path("rustup").is_some() {
        "run `rustup update`".into()
    } else {
        format!("install Rust {version} or newer")
    }
}

/// `rust-version` newer than the toolchain: clippy and verify say so from the manifest, before
/// cargo runs, with the help to update.
#[test]
fn rust_version_newer_than_the_toolchain_is_said_plainly() {
    if !require("cargo") || !require("clippy") {
        return;
    }
    let home = tempfile::tempdir().expect("cargo home");
    let repo = TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"future\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             rust-version = \"1.999\"\n",
        )
        .file("src/lib.rs", "pub fn f(x: u32) -> u32 {\n    x\n}\n")
        .commit();
    let env = fresh_cargo(home.path());
    let run = apply_env(&repo, LIB, "    x\n", "    x + 1\n", &[], &env);
    run.assert_code(0);
    let expected = json!({
        "status": "error",
        "note": format!("the project needs rustc 1.999; this machine has {}", rustc_release()),
        "help": rustup_help("1.999"),
    });
    assert_subset(check(&run.json(), "clippy"), &expected, "clippy");

    let run = run_env(
        &repo,
        &["verify", "--steps", "build", "--format", "json"],
        &env,
    );
    run.assert_code(0);
    assert_subset(
        &run.json()["verify"],
        &json!([{"step": "build", "status": "error", "note": expected["note"],
                 "hints": [expected["help"]]}]),
        "verify",
    );
}

/// An edition this cargo does not know fails `cargo metadata` already: said plainly too.
#[test]
fn an_edition_newer_than_the_toolchain_is_said_plainly() {
    if !require("cargo") || !require("clippy") {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"future\"\nversion = \"0.1.0\"\nedition = \"2999\"\n",
        )
        .file("src/lib.rs", "pub fn f(x: u32) -> u32 {\n    x\n}\n")
        .commit();
    let run = apply_env(
        &repo,
        LIB,
        "    x\n",
        "    x + 1\n",
        &["--checks", "clippy"],
        &Vec::new(),
    );
    run.assert_code(0);
    assert_subset(
        check(&run.json(), "clippy"),
        &json!({
            "status": "error",
            "note": "the project uses Rust edition 2999, which this toolchain does not know",
            "help": rustup_help("with that edition"),
        }),
        "clippy",
    );
}

/// The ready state is stamped: a second run with the same manifests asks cargo nothing but
/// clippy itself; a changed Cargo.toml asks again. (A logging `cargo` first on PATH.)
#[test]
fn a_second_run_pays_nothing_for_preparation() {
    if !require("cargo") || !require("clippy") {
        return;
    }
    let real = on_path("cargo").expect("cargo");
    let tools = tempfile::tempdir().expect("bin");
    let log = tools.path().join("cargo.log");
    let bin = tools.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let wrapper = bin.join("cargo");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .expect("write wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut path = vec![bin.clone()];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let env: Env = vec![("PATH", Some(std::env::join_paths(path).expect("PATH")))];

    let repo = TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"plain\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .file("src/lib.rs", "pub fn f(x: u32) -> u32 {\n    x\n}\n")
        .commit();
    let fetches = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("fetch"))
            .count()
    };
    let clippies = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("clippy"))
            .count()
    };
    let args = ["--checks", "clippy", "--dry-run"];
    let first = apply_env(&repo, LIB, "    x\n", "    x + 1\n", &args, &env);
    first.assert_code(0);
    assert_eq!(check(&first.json(), "clippy")["status"], "pass");
    assert_eq!(
        fetches(),
        1,
        "one offline query:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let second = apply_env(&repo, LIB, "    x\n", "    x + 2\n", &args, &env);
    assert_eq!(check(&second.json(), "clippy")["status"], "pass");
    assert_eq!(fetches(), 1, "no query the second time");
    assert_eq!(clippies(), 2);

    repo.write(
        "Cargo.toml",
        "[package]\nname = \"plain\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    let third = apply_env(&repo, LIB, "    x\n", "    x + 3\n", &args, &env);
    assert_eq!(check(&third.json(), "clippy")["status"], "pass");
    assert_eq!(fetches(), 2, "a changed manifest is asked about again");
}

// ---------------------------------------------------------------------------------------------
// Go

fn go_version() -> String {
    let out = Command::new("go")
        .args(["env", "GOVERSION"])
        .env("GOTOOLCHAIN", "local")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("go runs");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .trim_start_matches("go")
        .to_string()
}

/// Go with an empty module cache of its own, no toolchain switching.
fn fresh_go(modcache: &Path, proxy: &str) -> Env {
    vec![
        ("GOMODCACHE", Some(modcache.into())),
        ("GOTOOLCHAIN", Some("local".into())),
        ("GOPROXY", Some(proxy.into())),
        ("GOFLAGS", Some("-buildvcs=false -modcacherw".into())),
    ]
}

const MAIN: &str = "main.go";

#[test]
fn go_mod_newer_than_the_toolchain_is_said_plainly() {
    if !require("go") {
        return;
    }
    let cache = tempfile::tempdir().expect("modcache");
    let repo = TestRepo::new()
        .file("go.mod", "module example.com/future\n\ngo 1.99\n")
        .file(
            "main.go",
            "package main\n\nfunc main() {\n\tprintln(1)\n}\n",
        )
        .commit();
    let env = fresh_go(cache.path(), "off");
    let run = apply_env(&repo, MAIN, "println(1)", "println(2)", &[], &env);
    run.assert_code(0);
    assert_subset(
        check(&run.json(), "go-lint"),
        &json!({
            "status": "error",
            "note": format!("go.mod requires go 1.99; this machine has go {}", go_version()),
            "help": "install Go ≥ 1.99, or let the go command download it (GOTOOLCHAIN=auto)",
        }),
        "go-lint",
    );
}

fn go_with_dependency() -> TestRepo {
    TestRepo::new()
        .file(
            "go.mod",
            "module example.com/deps\n\ngo 1.21\n\nrequire golang.org/x/text v0.14.0\n",
        )
        .file(
            "go.sum",
            "golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bG+0Bn+0EU=\n\
             golang.org/x/text v0.14.0/go.mod h1:18ZOQIKpY8NJVqYksKHtTdi31H5itFRjB5/qKTNYzSU=\n",
        )
        .file(
            "main.go",
            "package main\n\nimport \"golang.org/x/text/language\"\n\nfunc main() {\n\t\
             println(language.English.String())\n}\n",
        )
        .commit()
}

/// A module dependency not in the cache: offline (GOPROXY=off) it is `error` with what to run
/// (not a bogus finding on the import line); with a proxy that cannot be reached, the download's
/// failure is said.
#[test]
fn go_missing_modules_offline_or_unreachable_are_plain_errors() {
    if !require("go") {
        return;
    }
    let cache = tempfile::tempdir().expect("modcache");
    let repo = go_with_dependency();
    let dir = repo.path().display().to_string();
    let edit = ("println(language", "println(\"x\", language");

    let run = apply_env(
        &repo,
        MAIN,
        edit.0,
        edit.1,
        &["--dry-run"],
        &fresh_go(cache.path(), "off"),
    );
    run.assert_code(0);
    assert_subset(
        check(&run.json(), "go-lint"),
        &json!({
            "status": "error",
            "findings": [],
            "note": "dependencies not downloaded (offline)",
            "help": format!(
                "run `GOPROXY= go mod download` in {dir}, or unset GOPROXY=off (patchgate then \
                 downloads them)"
            ),
        }),
        "GOPROXY=off",
    );

    let env = fresh_go(cache.path(), "http://127.0.0.1:9");
    let run = apply_env(
        &repo,
        MAIN,
        edit.0,
        edit.1,
        &["--dry-run", "--offline"],
        &env,
    );
    assert_eq!(
        text(check(&run.json(), "go-lint"), "help"),
        format!("run `go mod download` in {dir}, or run patchgate without --offline")
    );

    let run = apply_env(&repo, MAIN, edit.0, edit.1, &["--dry-run"], &env);
    run.assert_code(0);
    let lint = check(&run.json(), "go-lint").clone();
    assert_eq!(lint["status"], "error", "{lint:#}");
    let note = text(&lint, "note");
    assert!(
        note.starts_with("downloading the dependencies failed: golang.org/x/text@v0.14.0: ")
            && note.contains("127.0.0.1:9"),
        "{note}"
    );
    assert!(text(&lint, "help").starts_with(&format!("run `go mod download` in {dir} ")));
}

/// A vendored module has its dependencies in the repository: nothing is downloaded (the proxy
/// here would fail), go vet runs and finds the new bug.
#[test]
fn a_vendored_go_module_needs_no_download() {
    if !require("go") {
        return;
    }
    let cache = tempfile::tempdir().expect("modcache");
    let repo = TestRepo::new()
        .file(
            "go.mod",
            "module example.com/vendored\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n",
        )
        .file(
            "vendor/modules.txt",
            "# example.com/dep v1.0.0\n## explicit\nexample.com/dep\n",
        )
        .file(
            "vendor/example.com/dep/dep.go",
            "package dep\n\nfunc X() int { return 1 }\n",
        )
        .file(
            "main.go",
            "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/dep\"\n)\n\nfunc main() {\n\t\
             fmt.Println(dep.X())\n}\n",
        )
        .commit();
    let env = fresh_go(cache.path(), "http://127.0.0.1:9");
    let run = apply_env(
        &repo,
        MAIN,
        "\tfmt.Println(dep.X())\n",
        "\tfmt.Printf(\"%s\\n\", dep.X())\n",
        &["--dry-run"],
        &env,
    );
    run.assert_code(1);
    assert_subset(
        check(&run.json(), "go-lint"),
        &json!({"status": "fail", "findings": [{"line": 10, "new": true}]}),
        "go vet",
    );
    assert!(
        std::fs::read_dir(cache.path())
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "nothing was downloaded"
    );
}
