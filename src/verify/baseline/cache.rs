//! Step results cached by the state they ran on, so a second patch on the same base pays
//! nothing for its baseline.
//!
//! The key is the state's identity ([`Mirror::state_id`](crate::project::mirror::Mirror::state_id):
//! the project's content, digest by digest), the project, the step, its command and environment
//! (the per-run report file left out), and stamps of what the command depends on outside the
//! project: the program itself (a tool upgraded in place), the project's installed dependencies
//! (`node_modules` and its package manager's install record, the virtualenv's `site-packages`),
//! from the project up to the repository root. Every finished run (pass or fail) is stored under
//! the state it ran on, whether it was a patched state or a baseline: once a patch is written,
//! its verified state is the next patch's original, and its baseline is already here. A run that
//! did not finish (missing, error, timeout) is not stored.
//!
//! Entries live in `<git dir>/patchgate/cache/verify/`, at most [`MAX_ENTRIES`] (the least
//! recently used go first); a corrupt entry is recomputed. Not part of the key, and so not
//! noticed: a toolchain switched behind a proxy (`rustup update`), a changed global
//! configuration, a flaky test. `rm -r .git/patchgate/cache/verify` forgets every result.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::super::execute::{Found, StepRun};
use super::super::plan::Plan;
use crate::project::detect::Project;
use crate::project::tools::which;
use crate::verify::{Status, Step};

/// Beyond this many entries, the least recently used are removed (down to 3/4 of it).
pub const MAX_ENTRIES: usize = 512;

/// A finished run, as cached.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cached {
    pub status: Status,
    pub failures: Vec<Found>,
}

fn dir(git_dir: &Path) -> PathBuf {
    crate::fs::layout::verify_cache(git_dir)
}

/// The cache key of `step` (planned as `plan`) of `project` on the state `state_id`.
pub fn key(state_id: &str, project: &Project, repo_root: &Path, step: Step, plan: &Plan) -> String {
    let mut h = Sha256::new();
    for part in [
        state_id.as_bytes(),
        project.rel_root.as_bytes(),
        step.name().as_bytes(),
        &plan.identity(),
        deps_stamp(plan, project, repo_root).as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    format!("{:x}", h.finalize())
}

fn entry(git_dir: &Path, key: &str) -> PathBuf {
    dir(git_dir).join(format!("{key}.json"))
}

/// The cached run under `key`, if any (and marks it used).
pub fn get(git_dir: &Path, key: &str) -> Option<Cached> {
    let path = entry(git_dir, key);
    let cached: Cached = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    if let Ok(f) = std::fs::File::options().append(true).open(&path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    Some(cached)
}

/// Stores a finished run under `key`; anything else is not stored.
pub fn put(git_dir: &Path, key: &str, run: &StepRun) {
    if !matches!(run.status, Status::Pass | Status::Fail) {
        return;
    }
    let cached = Cached {
        status: run.status,
        failures: run.failures.clone(),
    };
    let path = entry(git_dir, key);
    if let Some(d) = path.parent()
        && std::fs::create_dir_all(d).is_ok()
        && let Ok(text) = serde_json::to_vec(&cached)
    {
        // A cache: a lost write only costs a re-run next time.
        let _ = crate::fs::atomic_write(&path, &text, Some(0o644));
        crate::fs::prune_cache(d, MAX_ENTRIES);
    }
}

/// Stamps (size, mtime) of what `plan` depends on outside the project (see the module doc).
fn deps_stamp(plan: &Plan, project: &Project, repo_root: &Path) -> String {
    let mut out = String::new();
    let mut add = |p: &Path| {
        if let Ok(md) = std::fs::metadata(p) {
            let mtime = md
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let _ = write!(out, "{}:{}:{mtime};", p.display(), md.len());
        }
    };
    let program = Path::new(&plan.argv[0]);
    let resolved = if program.components().count() > 1 {
        Some(program.to_path_buf())
    } else {
        which(&program.to_string_lossy())
    };
    if let Some(p) = resolved.and_then(|p| std::fs::canonicalize(p).ok()) {
        add(&p);
        // A virtualenv's interpreter: its packages (`<venv>/lib/pythonX.Y/site-packages`).
        if let Some(venv) = Path::new(&plan.argv[0]).parent().and_then(Path::parent)
            && venv.join("pyvenv.cfg").is_file()
            && let Ok(libs) = std::fs::read_dir(venv.join("lib"))
        {
            for lib in libs.flatten() {
                add(&lib.path().join("site-packages"));
            }
        }
    }
    let mut d = Some(project.root.as_path());
    while let Some(x) = d {
        for marker in [
            "node_modules",
            "node_modules/.package-lock.json",
            "node_modules/.modules.yaml",
            "node_modules/.yarn-state.yml",
            "node_modules/.yarn-integrity",
        ] {
            add(&x.join(marker));
        }
        if x == repo_root {
            break;
        }
        d = x.parent().filter(|p| p.starts_with(repo_root));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Failure;
    use crate::verify::execute::Origin;

    fn run(status: Status) -> StepRun {
        StepRun {
            status,
            failures: vec![Found {
                failure: Failure {
                    name: "t".into(),
                    file: Some("a.py".into()),
                    line: Some(3),
                    message: "boom".into(),
                    new: true,
                },
                origin: Origin::Test,
            }],
            text: String::new(),
            note: None,
            help: None,
            duration_ms: 1,
        }
    }

    #[test]
    fn finished_runs_round_trip_and_others_are_not_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git_dir = dir.path();
        put(git_dir, "k1", &run(Status::Fail));
        let got = get(git_dir, "k1").expect("cached");
        assert_eq!(got.status, Status::Fail);
        assert_eq!(got.failures, run(Status::Fail).failures);
        put(git_dir, "k2", &run(Status::Timeout));
        assert!(get(git_dir, "k2").is_none());
        std::fs::write(entry(git_dir, "k3"), "{not json").expect("write");
        assert!(get(git_dir, "k3").is_none());
    }

    #[test]
    fn the_least_recently_used_entries_go_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for i in 0..10 {
            let p = d.join(format!("{i}.json"));
            std::fs::write(&p, "{}").expect("write");
            let f = std::fs::File::options()
                .append(true)
                .open(&p)
                .expect("open");
            f.set_modified(old + std::time::Duration::from_secs(i))
                .expect("mtime");
        }
        crate::fs::prune_cache(d, 8);
        let mut left: Vec<String> = std::fs::read_dir(d)
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["4.json", "5.json", "6.json", "7.json", "8.json", "9.json"]
        );
    }
}
