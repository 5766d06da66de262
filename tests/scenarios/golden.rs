//! Golden files: the exact human, markdown, JSON and SARIF output of representative runs.
//!
//! `tests/golden/<scenario>/` holds:
//! - `before/`: the files of the repository, committed before the run;
//! - `worktree/` (optional): files copied over after that commit (uncommitted changes, for `check`);
//! - `patch.yaml` (optional): the patch, written outside the repository as `[PATCHDIR]/patch.yaml`;
//! - `args`: the command line, one argument a line, `{patch}` standing for the patch's path;
//!   `--format <f>` is appended for each of the four renderings;
//! - `setup` (optional): `no-git` (the folder is not a git repository), `needs <program>` (a
//!   checker on PATH: skipped without it, a failure in CI), `run <args>` (a patchgate command run
//!   first, in the order given, which must succeed: `run apply {patch}` before an `undo`),
//!   `no-sarif` (a command without SARIF output: the three other renderings only);
//! - `exit`, `expect.human`, `expect.md`, `expect.json`, `expect.sarif`: what must come out,
//!   after [`normalise`]. The human and markdown files hold stdout, then `--- stderr ---` and
//!   stderr when there is any; the JSON and SARIF files hold stdout, which must be one document
//!   (the SARIF one valid against the official schema).
//!
//! `PATCHGATE_BLESS=1 cargo test --test fixtures -- golden/` writes the expected files from the
//! current output; a mismatch fails with a unified diff of each file that differs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::harness::{BIN, TestRepo, copy_tree, on_path};

const FORMATS: [(&str, &str); 4] = [
    ("human", "expect.human"),
    ("markdown", "expect.md"),
    ("json", "expect.json"),
    ("sarif", "expect.sarif"),
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// One test per folder of tests/golden.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("golden dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|d| {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            libtest_mimic::Trial::test(format!("golden/{name}"), move || run_golden(&d))
        })
        .collect()
}

/// The paths that differ from run to run, for [`normalise`].
pub struct Volatile {
    /// The repository (or plain folder) the command ran in.
    pub repo: PathBuf,
    /// The folder holding `patch.yaml`.
    pub patch_dir: PathBuf,
}

/// Rewrites what changes between runs and machines into fixed placeholders, so the expected
/// files hold only what patchgate decides:
/// - the temporary repository and patch folders (as given, canonical, and percent-encoded as in
///   SARIF URIs) → `[REPO]`, `[PATCHDIR]`; any other temporary folder patchgate made (a scratch
///   copy for verify, `.tmpXXXXXX` under the system's temp dir) → `[TMP]`;
/// - process ids in scratch file names (`pytest-1234.xml`) → `[PID]`;
/// - durations (`"duration_ms": N`, `1.2s`, `35 ms`) → `"duration_ms": 0`, `[DURATION]`;
/// - full commit ids (40 hex digits) → `[SHA]`; a `patch_id` value, and a patch id anywhere
///   (`<unix seconds>-<micros>-<pid>`, as `undo` and `undo --list` show them) → `[PATCH_ID]`;
/// - ISO-8601 timestamps → `[TIME]`, and `"time": <unix seconds>` (`undo --list`) → `"time": 0`;
/// - patchgate's own version in SARIF's `tool.driver.version` → `[VERSION]`, and a Python
///   interpreter's version (pytest headers) → `Python [VERSION]`;
/// - trailing blanks at line ends are dropped (editors strip them from the expected files).
///
/// Pinned checkers' versions are not masked: their output is part of what is tested.
pub fn normalise(text: &str, v: &Volatile) -> String {
    let mut out = text.to_string();
    for (path, tag) in [(&v.repo, "[REPO]"), (&v.patch_dir, "[PATCHDIR]")] {
        let mut forms = vec![path.to_string_lossy().into_owned()];
        if let Ok(c) = path.canonicalize() {
            forms.push(c.to_string_lossy().into_owned());
        }
        let encoded: Vec<String> = forms.iter().map(|f| percent_encode(f)).collect();
        forms.extend(encoded);
        // Longest first: a canonical path may extend the given one.
        forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
        for f in forms.iter().filter(|f| f.len() > 1) {
            out = out.replace(f.as_str(), tag);
        }
    }
    let tmp = regex::escape(&std::env::temp_dir().join(".tmp").to_string_lossy());
    let rules: [(&str, &str); 12] = [
        (&format!(r"{tmp}[A-Za-z0-9]{{6}}"), "[TMP]"),
        (r"-\d+\.xml\b", "-[PID].xml"),
        (r#""duration_ms": \d+"#, r#""duration_ms": 0"#),
        (r"\b\d+(\.\d+)? ?(ms|s)\b", "[DURATION]"),
        (r"\b[0-9a-f]{40}\b", "[SHA]"),
        (r#""patch_id": "[^"]*""#, r#""patch_id": "[PATCH_ID]""#),
        (r"\b\d{10}-\d{6}-\d+\b", "[PATCH_ID]"),
        (r#""time": \d+"#, r#""time": 0"#),
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?",
            "[TIME]",
        ),
        (
            &format!(
                r#""version": "{}""#,
                regex::escape(env!("CARGO_PKG_VERSION"))
            ),
            r#""version": "[VERSION]""#,
        ),
        (r"Python \d+\.\d+\.\d+", "Python [VERSION]"),
        (r"[ \t]+\n", "\n"),
    ];
    for (pattern, with) in rules {
        let re = regex::Regex::new(pattern).expect("normalisation pattern");
        out = re.replace_all(&out, with).into_owned();
    }
    out
}

/// The percent-encoding SARIF URIs use for a path (the characters a temp path can hold).
fn percent_encode(path: &str) -> String {
    path.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

struct Setup {
    git: bool,
    needs: Vec<String>,
    /// Commands run before the one under test, each split on whitespace.
    before: Vec<String>,
    sarif: bool,
}

fn setup_of(dir: &Path) -> Setup {
    let text = std::fs::read_to_string(dir.join("setup")).unwrap_or_default();
    let mut s = Setup {
        git: true,
        needs: Vec::new(),
        before: Vec::new(),
        sarif: true,
    };
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match line.split_once(' ') {
            _ if line == "no-git" => s.git = false,
            _ if line == "no-sarif" => s.sarif = false,
            Some(("needs", program)) => s.needs.push(program.trim().to_string()),
            Some(("run", command)) => s.before.push(command.trim().to_string()),
            _ => panic!("{}: unknown setup line `{line}`", dir.display()),
        }
    }
    s
}

/// A fresh copy of the scenario's repository; the guard keeps it alive.
enum Place {
    Repo(TestRepo),
    Plain(tempfile::TempDir),
}

impl Place {
    fn path(&self) -> &Path {
        match self {
            Place::Repo(r) => r.path(),
            Place::Plain(d) => d.path(),
        }
    }
}

fn prepare(dir: &Path, setup: &Setup) -> Place {
    let before = dir.join("before");
    let place = if setup.git {
        let repo = TestRepo::new();
        let repo = if before.is_dir() {
            repo.tree(&before)
        } else {
            repo
        };
        Place::Repo(repo.commit())
    } else {
        let d = tempfile::tempdir().expect("tempdir");
        if before.is_dir() {
            copy_tree(&before, d.path());
        }
        Place::Plain(d)
    };
    let worktree = dir.join("worktree");
    if worktree.is_dir() {
        copy_tree(&worktree, place.path());
    }
    place
}

fn run_golden(dir: &Path) -> Result<(), libtest_mimic::Failed> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let setup = setup_of(dir);
    for program in &setup.needs {
        if on_path(program).is_none() {
            let why = format!("{name}: {program} is not on PATH");
            if std::env::var("CI").as_deref() == Ok("true") {
                return Err(format!(
                    "{why} (CI=true: every checker the tests drive must be installed; see \
                     scripts/install-checkers)"
                )
                .into());
            }
            eprintln!("SKIPPED: golden/{why}");
            return Ok(());
        }
    }
    let args_text =
        std::fs::read_to_string(dir.join("args")).map_err(|e| format!("{name}/args: {e}"))?;
    let bless = std::env::var_os("PATCHGATE_BLESS").is_some_and(|v| v == "1");
    let mut problems = Vec::new();
    let mut exits = Vec::new();
    for (format, file) in FORMATS {
        if format == "sarif" && !setup.sarif {
            continue;
        }
        let place = prepare(dir, &setup);
        let patch_dir = tempfile::tempdir().expect("tempdir");
        let patch_path = patch_dir.path().join("patch.yaml");
        if dir.join("patch.yaml").is_file() {
            std::fs::copy(dir.join("patch.yaml"), &patch_path).expect("copy patch");
        }
        let patch_arg = patch_path.to_string_lossy().into_owned();
        for command in &setup.before {
            let args: Vec<String> = command
                .split_whitespace()
                .map(|a| a.replace("{patch}", &patch_arg))
                .collect();
            let out = Command::new(BIN)
                .args(&args)
                .current_dir(place.path())
                .stdin(Stdio::null())
                .output()
                .expect("patchgate runs");
            if !out.status.success() {
                return Err(format!(
                    "{name}: setup `run {command}` failed:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                )
                .into());
            }
        }
        let mut args: Vec<String> = args_text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| l.replace("{patch}", &patch_arg))
            .collect();
        args.extend(["--format".to_string(), format.to_string()]);
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(place.path())
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100")
            .env_remove("PATCHGATE_TIMING")
            .stdin(Stdio::null())
            .output()
            .expect("patchgate runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.status.code().unwrap_or(-1);
        exits.push((format, code));
        let volatile = Volatile {
            repo: place.path().to_path_buf(),
            patch_dir: patch_dir.path().to_path_buf(),
        };
        let mut got = normalise(&stdout, &volatile);
        match format {
            "json" | "sarif" => {
                let doc: serde_json::Value = serde_json::from_str(&stdout).map_err(|e| {
                    format!("{name}: --format {format} printed no single JSON document ({e}):\n{stdout}\nstderr:\n{stderr}")
                })?;
                if format == "sarif" {
                    crate::sarif_schema::assert_valid(&doc, &format!("{name}/{file}"));
                }
            }
            _ => {
                if !stderr.is_empty() {
                    got.push_str("--- stderr ---\n");
                    got.push_str(&normalise(&stderr, &volatile));
                }
            }
        }
        let path = dir.join(file);
        if bless {
            std::fs::write(&path, &got).map_err(|e| format!("{}: {e}", path.display()))?;
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if want != got {
            problems.push(format!(
                "{name}/{file} differs (PATCHGATE_BLESS=1 rewrites it):\n{}",
                similar::TextDiff::from_lines(&want, &got)
                    .unified_diff()
                    .header("expected", "actual")
            ));
        }
    }
    let first = exits[0].1;
    if exits.iter().any(|(_, c)| *c != first) {
        problems.push(format!("{name}: the formats exit differently: {exits:?}"));
    }
    let exit_file = dir.join("exit");
    if bless {
        std::fs::write(&exit_file, format!("{first}\n")).map_err(|e| e.to_string())?;
    } else {
        let want = std::fs::read_to_string(&exit_file).unwrap_or_default();
        if want.trim() != first.to_string() {
            problems.push(format!(
                "{name}/exit: expected {}, got {first}",
                want.trim()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}
