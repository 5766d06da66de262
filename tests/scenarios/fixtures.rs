//! Fixture scenarios: `tests/fixtures/NNN_name/` holds `before/` (the repository), the patch
//! (see [`patch_file`]), and what must come out:
//! - `expect.json`: `{"exit": N, "report": {...}}`, the report a subset of the JSON output;
//! - `after/`: the exact working tree afterwards (without it, the tree must equal `before/`);
//! - `args`: extra command-line arguments, one per line;
//! - `modes`: git's mode of paths afterwards, one per line: `100644 PATH`, `100755 PATH`,
//!   `120000 PATH -> TARGET` (a symlink and its target), `0 PATH` (absent);
//! - `expect2.json`: when present, the same patch is applied a second time and checked against it.
//! - `commits/<NN_subject>/`: history after `before/`: each folder's files are written over the
//!   tree and committed in order, with the folder name past its number as the subject;
//! - `pre1.yaml`, `pre2.yaml`, …: patches applied (to the working tree, exit 0) before the patch,
//!   so that patchgate's own history holds them.
//!
//! In the expectations, `{{commitN}}` stands for the id of the N-th commit of `commits/`
//! (`{{commitN.short}}` for its first 10 digits) and `{{preN}}` for the `patch_id` of
//! `preN.yaml`'s run.
//!
//! Each folder is its own test, named `fixtures/<folder>`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{TestRepo, assert_subset, files_of};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The patch of a scenario folder and the `--input` it needs: `patch.yaml` or `patch.json` (read
/// as they are), or `patch.codex` / `patch.aider` / `patch.diff` (passed with `--input codex`,
/// `aider`, `diff`).
pub fn patch_file(dir: &Path) -> Option<(PathBuf, Option<&'static str>)> {
    [
        ("patch.yaml", None),
        ("patch.json", None),
        ("patch.codex", Some("codex")),
        ("patch.aider", Some("aider")),
        ("patch.diff", Some("diff")),
    ]
    .into_iter()
    .map(|(f, input)| (dir.join(f), input))
    .find(|(p, _)| p.is_file())
}

/// One test per folder of tests/fixtures.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no fixtures found");
    dirs.into_iter()
        .map(|d| {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            libtest_mimic::Trial::test(format!("fixtures/{name}"), move || {
                run_scenario(&d);
                Ok(())
            })
        })
        .collect()
}

fn run_scenario(dir: &Path) {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let before = dir.join("before");
    let repo = TestRepo::new();
    let repo = if before.is_dir() {
        repo.tree(&before)
    } else {
        repo
    };
    let repo = repo.commit();
    let ids = history(dir, &repo, &name);
    let (patch_file, input) =
        patch_file(dir).unwrap_or_else(|| panic!("{name}: no patch file (patch.yaml, ...)"));
    let patch = std::fs::read_to_string(&patch_file).expect("patch");
    let args_text = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
    let mut args: Vec<&str> = args_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if let Some(input) = input {
        args.extend(["--input", input]);
    }
    let snapshot = repo.snapshot();

    let check = |expect_file: &str, run_no: usize| {
        let run = repo.apply(&patch, &args);
        // Every scenario states its exit code: a missing or mistyped expectation must not pass.
        let mut text = std::fs::read_to_string(dir.join(expect_file))
            .unwrap_or_else(|e| panic!("{name}/{expect_file}: {e}"));
        for (key, id) in &ids {
            text = text.replace(&format!("{{{{{key}}}}}"), id);
        }
        let expect: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}/{expect_file}: {e}"));
        let code = expect
            .get("exit")
            .unwrap_or_else(|| panic!("{name}/{expect_file}: no \"exit\""));
        {
            assert_eq!(
                Some(run.code as i64),
                code.as_i64(),
                "{name} run {run_no}: exit code\nstdout:\n{}\nstderr:\n{}",
                run.stdout,
                run.stderr
            );
        }
        if let Some(report) = expect.get("report") {
            assert_subset(&run.json(), report, &format!("{name} run {run_no}"));
        }
        run
    };
    let first = check("expect.json", 1);

    let after = dir.join("after");
    if after.is_dir() {
        let want = files_of(&after);
        let got = files_of(repo.path());
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{name}: file list after apply"
        );
        for (k, v) in &want {
            assert!(
                got[k] == *v,
                "{name}: {k} differs\n--- want\n{}\n--- got\n{}",
                String::from_utf8_lossy(v),
                String::from_utf8_lossy(&got[k])
            );
        }
    } else {
        assert_eq!(
            repo.snapshot(),
            snapshot,
            "{name}: the tree must be unchanged\n{}",
            first.stdout
        );
    }
    if let Ok(modes) = std::fs::read_to_string(dir.join("modes")) {
        check_modes(&name, repo.path(), &modes);
    }
    if dir.join("expect2.json").exists() {
        let files_after_first = files_of(repo.path());
        check("expect2.json", 2);
        assert_eq!(
            files_of(repo.path()),
            files_after_first,
            "{name}: the re-run changed files"
        );
    }
}

/// The history a scenario asks for before its patch (`commits/`, `preN.yaml`): the ids its
/// expectations may name, as (placeholder, id).
fn history(dir: &Path, repo: &TestRepo, name: &str) -> Vec<(String, String)> {
    let mut ids = Vec::new();
    let sorted = |d: PathBuf, want_dir: bool| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        v.retain(|p| p.is_dir() == want_dir);
        v.sort();
        v
    };
    for (i, c) in sorted(dir.join("commits"), true).into_iter().enumerate() {
        let folder = c
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let subject = folder
            .split_once('_')
            .map_or(folder.as_str(), |(_, s)| s)
            .replace('_', " ");
        crate::harness::copy_tree(&c, repo.path());
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", &subject]);
        let head = repo.head();
        ids.push((format!("commit{}.short", i + 1), head[..10].to_string()));
        ids.push((format!("commit{}", i + 1), head));
    }
    for p in sorted(dir.to_path_buf(), false) {
        let file = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(n) = file
            .strip_prefix("pre")
            .and_then(|r| r.strip_suffix(".yaml"))
            .filter(|n| n.parse::<u32>().is_ok())
        else {
            continue;
        };
        let run = repo.apply(&std::fs::read_to_string(&p).expect("pre patch"), &[]);
        assert_eq!(run.code, 0, "{name}/{file}: {}", run.stdout);
        let id = run.json()["patch_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}/{file}: no patch_id"))
            .to_string();
        ids.push((format!("pre{n}"), id));
    }
    ids
}

/// The `modes` file of a scenario: each path's type, executable bit and link target.
fn check_modes(name: &str, root: &Path, modes: &str) {
    use std::os::unix::fs::PermissionsExt;
    for line in modes.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (mode, rest) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("{name}/modes: `{line}`"));
        let (path, target) = match rest.split_once(" -> ") {
            Some((p, t)) => (p, Some(t)),
            None => (rest, None),
        };
        let p = root.join(path);
        let got = match std::fs::symlink_metadata(&p) {
            Err(_) => "0".to_string(),
            Ok(md) if md.file_type().is_symlink() => format!(
                "120000 -> {}",
                std::fs::read_link(&p).expect("link").display()
            ),
            Ok(md) if md.permissions().mode() & 0o111 != 0 => "100755".into(),
            Ok(_) => "100644".into(),
        };
        let want = match target {
            Some(t) => format!("{mode} -> {t}"),
            None => mode.to_string(),
        };
        assert_eq!(got, want, "{name}: the mode of {path}");
    }
}
