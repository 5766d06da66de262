//! A fluent builder for real temporary git repositories, and a runner for the real binary.
//!
//! Tests describe a repository (`TestRepo::new().file(..).commit()`), run `patchgate` on it and
//! look at the exit code, the JSON report and the bytes on disk. git itself (the CLI) is the
//! independent witness for what the repository holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use sha2::{Digest, Sha256};

pub const BIN: &str = env!("CARGO_BIN_EXE_patchgate");

pub struct TestRepo {
    dir: tempfile::TempDir,
}

/// A command's outcome.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Run {
    fn from(out: std::process::Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// A `PATH` without any directory that holds `program`, plus `scratch/bin` holding only a link
/// to `git` (so dropping `/usr/bin` for its copy of `program` does not take git away).
pub fn path_without(program: &str, scratch: &Path) -> std::ffi::OsString {
    let git = on_path("git").expect("git on PATH");
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(&git, bin.join("git")).expect("link git");
    let mut dirs = vec![bin];
    dirs.extend(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|d| !d.join(program).exists()),
    );
    std::env::join_paths(dirs).expect("PATH")
}

impl Run {
    /// The JSON report (panics with the output when stdout is not one JSON object).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code; stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdin(Stdio::null())
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl TestRepo {
    pub fn new() -> TestRepo {
        TestRepo::init(tempfile::tempdir().expect("tempdir"))
    }

    /// A repository in a new folder under `parent` (a file system of the test's choosing).
    // Used by the `it` target only; the `fixtures` target includes this file too.
    #[allow(dead_code)]
    pub fn new_in(parent: &Path) -> TestRepo {
        TestRepo::init(tempfile::tempdir_in(parent).expect("tempdir"))
    }

    fn init(dir: tempfile::TempDir) -> TestRepo {
        git(dir.path(), &["init", "-q", "-b", "main"]);
        git(dir.path(), &["config", "user.name", "Test"]);
        git(
            dir.path(),
            &["config", "user.email", "test@example.invalid"],
        );
        git(dir.path(), &["config", "core.autocrlf", "false"]);
        TestRepo { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(self, rel: &str, content: impl AsRef<[u8]>) -> TestRepo {
        self.write(rel, content);
        self
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, content).expect("write");
    }

    /// Copies a directory tree into the repository.
    // Used by the `fixtures` target (tests/scenarios), which includes this file.
    #[allow(dead_code)]
    pub fn tree(self, from: &Path) -> TestRepo {
        copy_tree(from, self.path());
        self
    }

    pub fn commit(self) -> TestRepo {
        git(self.path(), &["add", "-A"]);
        git(
            self.path(),
            &["commit", "-q", "--allow-empty", "-m", "initial"],
        );
        self
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    pub fn read_str(&self, rel: &str) -> String {
        String::from_utf8(self.read(rel)).expect("utf8")
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path().join(rel).symlink_metadata().is_ok()
    }

    /// Every file of the working tree (not `.git`) with its bytes' hash, plus git's index, HEAD
    /// and refs: what "nothing changed" means.
    pub fn snapshot(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        walk(self.path(), self.path(), &mut out);
        for extra in [".git/index", ".git/HEAD"] {
            if let Ok(b) = std::fs::read(self.path().join(extra)) {
                out.insert(extra.to_string(), sha256_hex(&b));
            }
        }
        out.insert("refs".into(), git(self.path(), &["for-each-ref"]));
        out
    }

    /// Runs `patchgate apply` with a patch given as text (written outside the repository).
    pub fn apply(&self, patch: &str, args: &[&str]) -> Run {
        let pfile = tempfile::NamedTempFile::new().expect("patch file");
        std::fs::write(pfile.path(), patch).expect("write patch");
        let mut all = vec![
            "apply",
            pfile.path().to_str().expect("utf8"),
            "--format",
            "json",
        ];
        all.extend_from_slice(args);
        self.run(&all)
    }

    pub fn run(&self, args: &[&str]) -> Run {
        run_in(self.path(), args, None)
    }

    /// [`TestRepo::apply`] with `env` set for the run (say `PATCHGATE_TIMINGS=1`).
    pub fn apply_env(&self, patch: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        let pfile = tempfile::NamedTempFile::new().expect("patch file");
        std::fs::write(pfile.path(), patch).expect("write patch");
        let mut all = vec!["apply", pfile.path().to_str().expect("utf8")];
        all.extend_from_slice(args);
        run_with(self.path(), &all, None, env)
    }

    pub fn run_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        run_in(self.path(), args, Some(stdin))
    }
}

pub fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    run_with(dir, args, stdin, &[])
}

/// [`run_in`] with `env` set for the run.
pub fn run_with(dir: &Path, args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Run {
    use std::io::Write;
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("patchgate runs");
    if let Some(input) = stdin {
        let mut s = child.stdin.take().expect("stdin");
        let input = input.to_vec();
        // A writer thread: the child may exit before reading everything.
        std::thread::spawn(move || {
            let _ = s.write_all(&input);
        });
    }
    Run::from(child.wait_with_output().expect("wait"))
}

/// SHA-256 of bytes in lower-case hex (what `expect_sha256` and `files[].sha256` hold).
pub fn sha256_hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let rel = p
            .strip_prefix(root)
            .expect("inside")
            .to_string_lossy()
            .into_owned();
        if rel == ".git" {
            continue;
        }
        let md = std::fs::symlink_metadata(&p).expect("stat");
        if md.file_type().is_symlink() {
            out.insert(
                rel,
                format!("link:{}", std::fs::read_link(&p).expect("link").display()),
            );
        } else if md.is_dir() {
            out.insert(format!("{rel}/"), "dir".into());
            walk(root, &p, out);
        } else {
            use std::os::unix::fs::PermissionsExt;
            let mode = md.permissions().mode() & 0o777;
            out.insert(
                rel,
                format!(
                    "{:o}:{}",
                    mode,
                    sha256_hex(&std::fs::read(&p).expect("read"))
                ),
            );
        }
    }
}

pub fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from)
        .unwrap_or_else(|e| panic!("read {}: {e}", from.display()))
        .flatten()
    {
        let src = e.path();
        let dst: PathBuf = to.join(e.file_name());
        let md = std::fs::symlink_metadata(&src).expect("stat");
        if md.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).expect("link"), &dst)
                .expect("symlink");
        } else if md.is_dir() {
            std::fs::create_dir_all(&dst).expect("mkdir");
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// The files of a tree (not `.git`) and their bytes.
pub fn files_of(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn go(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p
                .strip_prefix(root)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            if rel == ".git" || rel.ends_with(".gitkeep") {
                continue;
            }
            if p.is_dir() {
                go(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    go(root, root, &mut out);
    out
}

/// `expected` is a subset of `actual`: every key of an expected object must be there with a
/// matching value; arrays must have the same length and match element-wise.
pub fn assert_subset(actual: &Value, expected: &Value, at: &str) {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            for (k, ev) in e {
                let av = a
                    .get(k)
                    .unwrap_or_else(|| panic!("{at}.{k}: missing in {actual}"));
                assert_subset(av, ev, &format!("{at}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(a.len(), e.len(), "{at}: array length; actual {actual}");
            for (i, (av, ev)) in a.iter().zip(e).enumerate() {
                assert_subset(av, ev, &format!("{at}[{i}]"));
            }
        }
        (a, e) => assert_eq!(a, e, "{at}"),
    }
}

/// Runs git and returns (success, stdout + stderr), for commands that may fail.
pub fn git_try(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .output()
        .expect("git runs");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

impl TestRepo {
    pub fn git(&self, args: &[&str]) -> String {
        git(self.path(), args)
    }

    /// Whether the ref `name` (`refs/heads/fix`) exists.
    pub fn has_ref(&self, name: &str) -> bool {
        git_try(self.path(), &["rev-parse", "--verify", "-q", name]).0
    }

    /// Everything patchgate may leave behind that it must not: pin refs, journals, temp files,
    /// git lock files, extra worktree registrations.
    pub fn leftovers(&self) -> Vec<String> {
        let mut out = Vec::new();
        // Transaction pins, and history pins without their entry (a working-tree transaction
        // pins its entry before its switch); the undo history's own pins are meant to stay.
        let refs = self.git(&["for-each-ref", "--format=%(refname)", "refs/patchgate/txn/"]);
        out.extend(refs.lines().map(|l| format!("ref {l}")));
        let history = self.git(&[
            "for-each-ref",
            "--format=%(refname)",
            "refs/patchgate/history/",
        ]);
        for pin in history.lines() {
            let id = pin.rsplit('/').next().unwrap_or_default();
            let entry = self
                .path()
                .join(format!(".git/patchgate/history/{id}.json"));
            if !entry.exists() {
                out.push(format!("ref {pin} (no history entry)"));
            }
        }
        let txn = self.path().join(".git/patchgate/txn");
        if let Ok(entries) = std::fs::read_dir(&txn) {
            out.extend(
                entries
                    .flatten()
                    .map(|e| format!("journal {}", e.path().display())),
            );
        }
        fn scan(dir: &Path, out: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let p = e.path();
                if name.contains(".patchgate-") && name.ends_with(".tmp") || name.ends_with(".lock")
                {
                    out.push(format!("file {}", p.display()));
                }
                if p.is_dir() && !p.is_symlink() && name != "objects" {
                    scan(&p, out);
                }
            }
        }
        scan(self.path(), &mut out);
        let wts = self.git(&["worktree", "list", "--porcelain"]);
        let n = wts.lines().filter(|l| l.starts_with("worktree ")).count();
        if n != 1 {
            out.push(format!("worktrees: {wts}"));
        }
        out
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }
}

/// An executable on PATH.
pub fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The node packages `scripts/install-checkers` pins (eslint, prettier, typescript).
pub fn tools_node_modules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/node/node_modules")
}

/// A `PATH` of one directory, `scratch/bin`, holding only a link to `git`: no checker of any
/// kind can be found through it.
pub fn path_with_only_git(scratch: &Path) -> std::ffi::OsString {
    let git = on_path("git").expect("git on PATH");
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(&git, bin.join("git")).expect("link git");
    bin.into_os_string()
}

/// The first `.json` file in `dir` (a journal, a history entry), for tests that edit one.
pub fn first_json_in(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap_or_else(|| panic!("no .json file in {}", dir.display()))
}
