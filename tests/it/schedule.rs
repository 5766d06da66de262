//! How the checks are scheduled (docs/checks.md, "Speed"), seen from outside: the real eslint and
//! prettier through the real binary, on real repositories. The external tools' processes start
//! before the built-in checks are done and never wait for them; a file with pre-existing findings
//! gets its baseline from the same node process as its patched text.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::checks::{check, findings, node_setup, require_all};
use crate::harness::{BIN, Run, TestRepo, on_path};

const NODE_TOOLS: &[&str] = &["prettier", "eslint", "@eslint/js"];

/// `patchgate apply <patch> --format json ARGS` in `repo` with `PATCHGATE_TIMINGS=1` and `PATH`.
fn apply_timed(repo: &TestRepo, patch: &Value, args: &[&str], path: &OsString) -> Run {
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), patch.to_string()).expect("write patch");
    let out = Command::new(BIN)
        .arg("apply")
        .arg(pfile.path())
        .args(["--format", "json"])
        .args(args)
        .current_dir(repo.path())
        .env("NO_COLOR", "1")
        .env("PATCHGATE_TIMINGS", "1")
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .expect("patchgate runs");
    Run::from(out)
}

/// One finished check job of the timing lines: (checker, start, end), in ms since patchgate
/// started (`patchgate timing: <T> ms  check job done: <name>, <n> file(s), <D> ms`).
fn jobs(stderr: &str) -> Vec<(String, f64, f64)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("patchgate timing:")?.trim_start();
            let (t, rest) = rest.split_once(" ms  check job done: ")?;
            let (name, rest) = rest.split_once(", ")?;
            let d = rest.split_once("file(s), ")?.1.strip_suffix(" ms")?;
            let (t, d): (f64, f64) = (t.trim().parse().ok()?, d.parse().ok()?);
            Some((name.to_string(), t - d, t))
        })
        .collect()
}

/// A JS project (eslint recommended, prettier) with `n` clean modules of `size` functions each,
/// committed, and a patch editing each of them.
fn node_project(n: usize, size: usize) -> (TestRepo, Value) {
    let repo = TestRepo::new();
    node_setup(&repo);
    let mut edits = Vec::new();
    for i in 0..n {
        let rel = format!("src/m{i:02}.js");
        let mut text = format!("export function f{i}(a, b) {{\n  return a + b + {i};\n}}\n");
        for k in 1..size {
            text.push_str(&format!(
                "\nexport function g{i}_{k}(x, y) {{\n  return x * {k} + y;\n}}\n"
            ));
        }
        repo.write(&rel, text);
        edits.push(json!({"file_path": rel, "old_string": "a + b", "new_string": "a - b"}));
    }
    (repo.commit(), json!({"edits": edits}))
}

fn path_with(first: &Path) -> OsString {
    let mut p = OsString::from(first);
    p.push(":");
    p.push(std::env::var_os("PATH").unwrap_or_default());
    p
}

#[test]
fn the_external_tools_start_first_and_the_built_ins_run_beside_them() {
    if !require_all(NODE_TOOLS) {
        return;
    }
    // Modules of a few hundred lines: the 31 built-in jobs take tens of milliseconds on their
    // lane, so "started before they ended" does not hang on a thread's start-up under load (with
    // modules of three lines they were all done within a millisecond or two).
    let (repo, patch) = node_project(30, 120);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let run = apply_timed(&repo, &patch, &["--dry-run", "-j", "2"], &path);
    run.assert_code(0);
    let jobs = jobs(&run.stderr);
    let of = |name: &str| -> Vec<&(String, f64, f64)> {
        jobs.iter().filter(|(n, _, _)| n == name).collect()
    };
    let (eslint, prettier) = (of("eslint"), of("prettier"));
    assert!(
        eslint.len() == 1 && prettier.len() == 1,
        "one job per node tool: {jobs:?}\n{}",
        run.stderr
    );
    let builtins: Vec<_> = [of("syntax"), of("references")].concat();
    assert_eq!(builtins.len(), 31, "30 syntax jobs, 1 references: {jobs:?}");
    let last_builtin_end = builtins.iter().map(|j| j.2).fold(0.0, f64::max);
    let first_node_end = eslint[0].2.min(prettier[0].2);
    // Both node processes were started before the built-ins were done (they do not queue
    // behind 30 syntax parses)...
    for (name, start, _) in [eslint[0], prettier[0]] {
        assert!(
            *start < last_builtin_end,
            "{name} started at {start} ms, after the built-ins ended ({last_builtin_end} ms): {jobs:?}"
        );
    }
    // ... and no built-in waited for a node process to finish.
    assert!(
        last_builtin_end < first_node_end,
        "a built-in check ended at {last_builtin_end} ms, after a node tool ({first_node_end} ms): {jobs:?}"
    );

    // Without -j, one lane per core: on two cores or more, the two node processes overlap.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if cores >= 2 {
        let run = apply_timed(&repo, &patch, &["--dry-run"], &path);
        run.assert_code(0);
        let jobs = self::jobs(&run.stderr);
        let node: Vec<_> = jobs
            .iter()
            .filter(|(n, _, _)| n == "eslint" || n == "prettier")
            .collect();
        assert_eq!(node.len(), 2, "{jobs:?}");
        let last_start = node[0].1.max(node[1].1);
        let first_end = node[0].2.min(node[1].2);
        assert!(
            last_start < first_end,
            "default -j on {cores} cores: eslint and prettier one after the other: {jobs:?}"
        );
    }
}

/// A `node` on PATH that logs each start to `log` and runs the real one.
fn counting_node(dir: &Path, log: &Path) {
    let real = on_path("node").expect("node on PATH");
    let script = format!(
        "#!/bin/sh\necho start >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        real.display()
    );
    let wrapper = dir.join("node");
    std::fs::write(&wrapper, script).expect("write the node wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn starts(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_baseline_comes_from_the_same_node_process_as_the_patched_text() {
    if !require_all(NODE_TOOLS) {
        return;
    }
    let repo = TestRepo::new();
    node_setup(&repo);
    // Two pre-existing findings the patch does not touch: an unused constant (eslint) and a
    // line prettier would rewrite.
    repo.write(
        "src/old.js",
        "const unused = 1;\nexport const  spaced=2;\n\nexport function g(a, b) {\n  return a + b;\n}\n",
    );
    let repo = repo.commit();
    let patch = json!({"edits": [
        {"file_path": "src/old.js", "old_string": "a + b", "new_string": "a - b"}
    ]});
    let bin = tempfile::tempdir().expect("tempdir");
    let log = bin.path().join("starts.log");
    counting_node(bin.path(), &log);
    let path = path_with(bin.path());

    let run = apply_timed(&repo, &patch, &["--dry-run"], &path);
    run.assert_code(0);
    let report = run.json();
    let eslint = check(&report, "src/old.js", "eslint");
    assert_eq!(eslint["status"], "pass", "{eslint:#}");
    let f = findings(eslint);
    assert!(
        f.len() == 1 && f[0]["rule"] == "no-unused-vars" && f[0]["new"] == false,
        "{eslint:#}"
    );
    let prettier = check(&report, "src/old.js", "prettier");
    assert_eq!(prettier["status"], "pass", "{prettier:#}");
    assert!(
        findings(prettier).iter().all(|f| f["new"] == false) && !findings(prettier).is_empty(),
        "{prettier:#}"
    );
    // One node process per tool, for the patched text and the original together (a separate
    // baseline run would start each a second time).
    assert_eq!(starts(&log), 2, "node starts (cold cache)");
    let cache = repo.path().join(".git/patchgate/cache/baseline");
    let entries = std::fs::read_dir(&cache).map(|d| d.count()).unwrap_or(0);
    assert_eq!(
        entries,
        2,
        "a cached baseline per tool in {}",
        cache.display()
    );

    // Warm: the originals come from the cache and are not sent again; same verdicts.
    let again = apply_timed(&repo, &patch, &["--dry-run"], &path);
    again.assert_code(0);
    assert_eq!(starts(&log), 4, "node starts (warm cache)");
    let report = again.json();
    let f = findings(check(&report, "src/old.js", "eslint"));
    assert!(f.len() == 1 && f[0]["new"] == false, "{report:#}");
}

#[test]
fn in_each_rank_the_linters_start_before_the_formatters() {
    if !require_all(NODE_TOOLS) {
        return;
    }
    // One lane: the jobs run one after another, in the order they start. eslint (a linter, the
    // longer run) goes before prettier (a formatter) of the same rank, so on more lanes it is
    // not the one left running alone at the end.
    let (repo, patch) = node_project(3, 1);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let run = apply_timed(&repo, &patch, &["--dry-run", "-j", "1"], &path);
    run.assert_code(0);
    let jobs = jobs(&run.stderr);
    let start = |name: &str| {
        jobs.iter()
            .find(|(n, _, _)| n == name)
            .map(|j| j.1)
            .unwrap_or_else(|| panic!("no {name} job: {jobs:?}\n{}", run.stderr))
    };
    assert!(
        start("eslint") < start("prettier"),
        "eslint should start before prettier: {jobs:?}"
    );
}
