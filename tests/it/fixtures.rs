//! Fixture scenarios: `tests/fixtures/NNN_name/` holds `before/` (the repository), `patch.yaml`
//! (or `patch.json`, or `patch.codex` / `patch.aider` / `patch.diff`, applied with that `--input`),
//! and what must come out:
//! - `expect.json`: `{"exit": N, "report": {...}}`, the report a subset of the JSON output;
//! - `after/`: the exact working tree afterwards (without it, the tree must equal `before/`);
//! - `args`: extra command-line arguments, one per line;
//! - `expect2.json`: when present, the same patch is applied a second time and checked against it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{TestRepo, assert_subset, files_of};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
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
    let (patch_file, input) = patch_file(dir).unwrap_or_else(|| panic!("{name}: no patch.* file"));
    let patch = std::fs::read_to_string(&patch_file).expect("patch");
    let args_text = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
    let mut args: Vec<&str> = args_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if let Some(input) = &input {
        args.extend(["--input", input.as_str()]);
    }
    let snapshot = repo.snapshot();

    let check = |expect_file: &str, run_no: usize| {
        let run = repo.apply(&patch, &args);
        // Every scenario states its exit code: a missing or mistyped expectation must not pass.
        let expect: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(expect_file))
                .unwrap_or_else(|e| panic!("{name}/{expect_file}: {e}")),
        )
        .unwrap_or_else(|e| panic!("{name}/{expect_file}: {e}"));
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

/// The scenario's `patch.*` file, and the `--input` its extension names (none for YAML and JSON,
/// which are told from the content).
fn patch_file(dir: &Path) -> Option<(PathBuf, Option<String>)> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_stem().is_some_and(|s| s == "patch"))
        .collect();
    found.sort();
    let path = found.into_iter().next()?;
    let ext = path.extension()?.to_string_lossy().into_owned();
    let input = (!matches!(ext.as_str(), "yaml" | "yml" | "json")).then_some(ext);
    Some((path, input))
}

#[test]
fn fixture_scenarios() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no fixtures found");
    let mut failures = Vec::new();
    for d in &dirs {
        let result = std::panic::catch_unwind(|| run_scenario(d));
        if let Err(e) = result {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: {msg}", d.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n\n")
    );
    eprintln!("{} fixture scenarios passed", dirs.len());
}
