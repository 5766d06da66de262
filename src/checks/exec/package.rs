//! What whole-package tools share (the package checkers, `checks::checker::clippy` and
//! `checks::checker::go_lint`, and verify's steps).
//!
//! Such a tool cannot be pointed at one file, so it runs in a mirror of the project (see
//! `project::mirror`) with the patched (or, for a baseline, the original) content laid over it
//! ([`overlays`], `mirror_with`), and its findings are mapped to repository paths. Cargo gets a persistent target directory of patchgate's own
//! (`<git dir>/patchgate/cargo-target`), so repeated checks are incremental and never fight the
//! user's editor over `target/`'s lock; clippy runs are serialized, since they share it. The
//! package spec cargo is asked for is remembered by the process, keyed by the content of the
//! manifests it depends on (`cargo_package`), so a server's later calls skip `cargo metadata`.
//!
//! Before either runs, `prepare` makes sure the project's dependencies are in the local cache and
//! the toolchain is new enough; what it cannot fix is an `error` with a help, not cargo's raw line.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use super::{Ran, first_lines};
use crate::checks::finding::RawFinding;
use crate::project::detect::Project;
use crate::project::mirror::Mirror;
use crate::project::prepare::{self, Diagnosis};
use crate::runner::Cmd;

/// Cargo runs share patchgate's target directory: one at a time.
pub static CARGO: Mutex<()> = Mutex::new(());
/// Go runs share the build cache and the mirror of a module: one at a time.
pub static GO: Mutex<()> = Mutex::new(());

pub use crate::project::mirror::Overlay;

fn rel_of(repo_root: &Path, abs: &Path) -> Option<String> {
    abs.strip_prefix(repo_root)
        .ok()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
}

pub(crate) fn join_rel(base: &str, rel: &str) -> String {
    let rel = rel.trim_start_matches("./");
    if base.is_empty() {
        rel.to_string()
    } else {
        format!("{base}/{rel}")
    }
}

pub(crate) fn run_cmd(cmd: Cmd) -> Result<crate::runner::Output, Ran<Vec<RawFinding>>> {
    super::ran(cmd.run())
}

/// The mirror of `rel` (repository-relative) with the `overlays` it covers laid over it (those
/// [`Mirror::state_id`] counts): a package run is handed the whole patch, and a file outside the
/// project would only be written into the mirror for nothing.
pub(crate) fn mirror_with(
    repo_root: &Path,
    git_dir: &Path,
    rel: &str,
    overlays: &[Overlay],
) -> Result<Mirror, String> {
    let coming: std::collections::HashSet<&str> = overlays
        .iter()
        .filter(|o| crate::project::mirror::covers(rel, o.rel))
        .map(|o| o.rel)
        .collect();
    let mirror = Mirror::sync_around(repo_root, git_dir, rel, &coming)?;
    for o in overlays.iter().filter(|o| mirror.covers(o.rel)) {
        mirror.overlay(git_dir, o.rel, o.content)?;
    }
    Ok(mirror)
}

/// A package run's findings, kept by what it ran on: the tool (`argv`), the package or
/// packages (`target`) and the mirror's content with the run's overlays ([`Mirror::state_id`]).
/// Every run keeps its findings; a baseline run (the original state) whose content an earlier
/// run already checked takes them instead of running the tool again: the patched state of one
/// `apply` is the original of the next once it is written (a server's next call, an agent's
/// next patch), and a refused patch tried again has the same original. Only baselines are read
/// from disk: a patched state is checked by the tool itself, in this run or in the run of this
/// call that checked the package along with another ([`Remembered::shared`], in memory). Like
/// the files' baselines
/// (`checks::baseline`), a change of the tool's version or of configuration outside the project
/// is not part of the key.
pub(crate) struct Remembered<'a> {
    git_dir: &'a Path,
    checker: &'a str,
    target: String,
    key: Vec<u8>,
    /// This run checks the original state.
    baseline: bool,
}

impl<'a> Remembered<'a> {
    pub(crate) fn new(
        git_dir: &'a Path,
        checker: &'a str,
        target: &str,
        argv: &[OsString],
        mirror: &Mirror,
        overlays: &[Overlay],
        baseline: bool,
    ) -> Remembered<'a> {
        let mut key = Vec::new();
        for a in argv {
            key.extend_from_slice(a.as_encoded_bytes());
            key.push(0);
        }
        key.extend_from_slice(mirror.state_id(overlays).as_bytes());
        Remembered {
            git_dir,
            checker,
            target: format!("package {target}"),
            key,
            baseline,
        }
    }

    /// The findings of an earlier run on this content, for a baseline run only.
    pub(crate) fn taken(&self) -> Option<Vec<RawFinding>> {
        if !self.baseline {
            return None;
        }
        let found =
            crate::checks::baseline::get(self.git_dir, self.checker, &self.target, &self.key);
        if found.is_some() {
            crate::timing::mark("package baseline: remembered");
        }
        found
    }

    /// The findings of a run this process made moments ago on this content for this package
    /// along with others (see [`Remembered::keep`]), either state; taken once.
    pub(crate) fn shared(&self) -> Option<Vec<RawFinding>> {
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        let found = shared
            .as_mut()?
            .remove(&(self.target.clone(), self.key.clone()));
        if found.is_some() {
            crate::timing::mark("package run: shared");
        }
        found
    }

    /// Keeps the findings of the run the tool just made, which checked the packages `along`
    /// (specs) with this one: for later baselines of each, and for those packages' own jobs of
    /// this call, which take them instead of running the tool ([`Remembered::shared`]).
    pub(crate) fn keep(&self, findings: &[RawFinding], along: &[String]) {
        if crate::timing::enabled() {
            let state = if self.baseline { "original" } else { "patched" };
            crate::timing::mark(&format!(
                "package run: {} {} {state}",
                self.checker, self.target
            ));
            for a in along {
                crate::timing::mark(&format!("package run: along {a}"));
            }
        }
        let others: Vec<String> = along.iter().map(|a| format!("package {a}")).collect();
        for target in std::iter::once(&self.target).chain(&others) {
            crate::checks::baseline::put(self.git_dir, self.checker, target, &self.key, findings);
        }
        crate::checks::baseline::prune(self.git_dir);
        if others.is_empty() {
            return;
        }
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        let map = shared.get_or_insert_with(HashMap::new);
        if map.len() + others.len() > SHARED_KEPT {
            map.clear();
        }
        for target in others {
            map.insert((target, self.key.clone()), findings.to_vec());
        }
    }
}

/// A Cargo package as `cargo metadata` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoPackage {
    /// The workspace root, repository-relative.
    pub ws_rel: String,
    /// The package spec, `name@version`.
    pub spec: String,
    /// Every package of the workspace: its folder (repository-relative) and spec.
    pub members: Vec<(String, String)>,
}

impl CargoPackage {
    /// The specs of the workspace's other packages that hold one of `paths` (repository-relative),
    /// each once, in the workspace's order: a file belongs to the package whose folder is the
    /// deepest one holding it.
    pub fn others_holding<'p>(&self, paths: impl Iterator<Item = &'p str>) -> Vec<String> {
        let mut held: Vec<&str> = Vec::new();
        for path in paths {
            let owner = self
                .members
                .iter()
                .filter(|(dir, _)| crate::repo::within(path, dir))
                .max_by_key(|(dir, _)| dir.len());
            if let Some((_, spec)) = owner
                && *spec != self.spec
                && !held.contains(&spec.as_str())
            {
                held.push(spec);
            }
        }
        self.members
            .iter()
            .filter(|(_, spec)| held.contains(&spec.as_str()))
            .map(|(_, spec)| spec.clone())
            .collect()
    }
}

/// Findings a package run left to the other packages it checked along ([`Remembered::keep`]),
/// by package and content. Held in the process only: a patched state's findings are never read
/// from disk, and these come from a run of the same call, on the same bytes.
type Shared = HashMap<(String, Vec<u8>), Vec<RawFinding>>;
static SHARED: Mutex<Option<Shared>> = Mutex::new(None);
/// Plenty for one call's packages.
const SHARED_KEPT: usize = 64;

/// Forgets what earlier checks left (see [`SHARED`]): a finding is shared within one run of the
/// checks only, never taken by a later call for the same content, which the tool (a newer
/// clippy, say) might judge otherwise.
pub(crate) fn forget_shared() {
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    *shared = None;
}

/// The Cargo workspace root (repository-relative), the package spec (`name@version`) of
/// `project` and the workspace's packages, read from the real tree with `cargo metadata` (which
/// needs no build and no network), or from [`PACKAGES`] when no manifest it depends on changed
/// since (a server's second call).
pub fn cargo_package<T>(
    argv: &[OsString],
    repo_root: &Path,
    project: &Project,
    timeout: Duration,
) -> Result<CargoPackage, Ran<T>> {
    let key = manifests_key(argv, repo_root, &project.root);
    if let Some(found) = key.as_ref().and_then(|k| cached_package(k, repo_root)) {
        crate::timing::mark("cargo package: cached");
        return Ok(found);
    }
    let package = read_cargo_package(argv, repo_root, project, timeout)?;
    if key.is_some() {
        // The answer describes every package of the workspace: the other crates' jobs of a
        // cross-crate patch need not ask cargo again.
        let ws_manifest = workspace_digest(repo_root, &package);
        let mut cache = PACKAGES.lock().unwrap_or_else(|p| p.into_inner());
        let known = cache.get_or_insert_with(HashMap::new);
        if known.len() + package.members.len() >= PACKAGES_KEPT {
            known.clear();
        }
        for (dir, spec) in &package.members {
            // The folder as `project::detect` names a project's root, which the key hashes.
            let Some(key) = manifests_key(argv, repo_root, &repo_root.join(dir)) else {
                continue;
            };
            let member = CargoPackage {
                spec: spec.clone(),
                ..package.clone()
            };
            known.insert(key, (member, ws_manifest.clone()));
        }
        if let Some(key) = key {
            known.insert(key, (package.clone(), ws_manifest));
        }
    }
    Ok(package)
}

/// What `cargo metadata` said per package, by [`manifests_key`]; with the digest of the
/// workspace's manifests ([`workspace_digest`]), checked again on a hit.
type Known = HashMap<String, (CargoPackage, Option<String>)>;
static PACKAGES: Mutex<Option<Known>> = Mutex::new(None);
/// Plenty for one server's projects; a long session over many repositories starts over.
const PACKAGES_KEPT: usize = 256;

fn cached_package(key: &str, repo_root: &Path) -> Option<CargoPackage> {
    let cache = PACKAGES.lock().unwrap_or_else(|p| p.into_inner());
    let (package, ws_manifest) = cache.as_ref()?.get(key)?.clone();
    drop(cache);
    let now = workspace_digest(repo_root, &package);
    (now.is_some() && now == ws_manifest).then_some(package)
}

/// The workspace root's manifest and every member's, as `package` lists them: a
/// `package.workspace` may point anywhere, the root lists the members, and a member's manifest
/// gives the spec a patch across the workspace names it by (a version bump in another crate
/// would leave a stale `-p engine@0.1.0`). `None` when one cannot be read.
fn workspace_digest(repo_root: &Path, package: &CargoPackage) -> Option<String> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let dirs = std::iter::once(package.ws_rel.as_str())
        .chain(package.members.iter().map(|(d, _)| d.as_str()));
    for dir in dirs {
        h.update(manifest_digest(&prepare::real_dir(repo_root, dir))?.as_bytes());
        h.update([0]);
    }
    Some(format!("{:x}", h.finalize()))
}

/// The identity of what `cargo metadata --no-deps` answers for the package in `dir`: the cargo
/// invoked, the directory, and the content of every `Cargo.toml` from `dir` up to the repository
/// root (the package's own, and the workspace roots cargo may find above it, which also give
/// inherited versions). `None` outside the repository: never cached.
fn manifests_key(argv: &[OsString], repo_root: &Path, dir: &Path) -> Option<String> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for a in argv {
        h.update(a.as_encoded_bytes());
        h.update([0]);
    }
    for var in ["RUSTUP_TOOLCHAIN", "CARGO_HOME", "CARGO"] {
        h.update(std::env::var_os(var).unwrap_or_default().as_encoded_bytes());
        h.update([0]);
    }
    h.update(dir.as_os_str().as_encoded_bytes());
    h.update([0]);
    dir.strip_prefix(repo_root).ok()?;
    for d in dir.ancestors() {
        h.update(manifest_digest(d).unwrap_or_default().as_bytes());
        h.update([0]);
        if d == repo_root {
            break;
        }
    }
    Some(format!("{:x}", h.finalize()))
}

/// The SHA-256 of `dir/Cargo.toml`, `None` when there is none (or it cannot be read).
fn manifest_digest(dir: &Path) -> Option<String> {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(dir.join("Cargo.toml")).ok()?;
    Some(format!("{:x}", Sha256::digest(&bytes)))
}

/// [`cargo_package`] without the cache.
fn read_cargo_package<T>(
    argv: &[OsString],
    repo_root: &Path,
    project: &Project,
    timeout: Duration,
) -> Result<CargoPackage, Ran<T>> {
    crate::timing::mark("cargo package: cargo metadata");
    let meta = Cmd::new(argv[0].clone(), &project.root)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .timeout(timeout);
    let out = super::ran(meta.run())?;
    if !out.success() {
        // A manifest this cargo cannot read (a newer edition) says so in plain words.
        if let Some(Diagnosis::Toolchain { message, help }) =
            prepare::diagnose_cargo(&out.stderr_str())
        {
            return Err(Ran::Unready { message, help });
        }
        return Err(Ran::Error(format!(
            "cargo metadata: {}",
            first_lines(&out.stderr_str())
        )));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Ran::Error(format!("cargo metadata output: {e}")))?;
    let manifest = project.root.join("Cargo.toml");
    // `name@version`, not the bare name: a crate whose dev-dependencies pull in a published
    // copy of itself (itoa does) makes `-p itoa` ambiguous, and cargo refuses it.
    let spec_of = |p: &serde_json::Value| {
        let name = p["name"].as_str()?;
        Some(match p["version"].as_str() {
            Some(v) => format!("{name}@{v}"),
            None => name.to_string(),
        })
    };
    let packages = meta["packages"].as_array().map_or(&[][..], Vec::as_slice);
    let name = packages
        .iter()
        .find(|p| p["manifest_path"].as_str().map(Path::new) == Some(manifest.as_path()))
        .and_then(spec_of);
    let members: Vec<(String, String)> = packages
        .iter()
        .filter_map(|p| {
            let dir = Path::new(p["manifest_path"].as_str()?).parent()?;
            Some((rel_of(repo_root, dir)?, spec_of(p)?))
        })
        .collect();
    let Some(name) = name else {
        return Err(Ran::Skipped(format!(
            "{} is not a package (a virtual workspace manifest?)",
            manifest.display()
        )));
    };
    let ws_root = meta["workspace_root"]
        .as_str()
        .map(Path::new)
        .unwrap_or(&project.root);
    let Some(ws_rel) = rel_of(repo_root, ws_root) else {
        return Err(Ran::Error(
            "the Cargo workspace root is outside the repository".into(),
        ));
    };
    Ok(CargoPackage {
        ws_rel,
        spec: name,
        members,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A git repository in a temporary folder with `files`, for a mirror of it.
    fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).expect("repo");
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init");
        for (rel, text) in files {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
            std::fs::write(path, text).expect("file");
        }
        (dir, root)
    }

    /// The packages a patch's files belong to, besides the one being checked: each file's
    /// deepest package folder (a root package holds what no member below it holds), each package
    /// once, none for a file outside the workspace's packages.
    #[test]
    fn the_other_packages_are_those_holding_a_patched_file() {
        let ws = CargoPackage {
            ws_rel: "rs".into(),
            spec: "app@0.1.0".into(),
            members: vec![
                ("rs".into(), "root@1.0.0".into()),
                ("rs/app".into(), "app@0.1.0".into()),
                ("rs/engine".into(), "engine@0.2.0".into()),
                ("rs/engine-extra".into(), "extra@0.1.0".into()),
            ],
        };
        let others = |paths: &[&str]| ws.others_holding(paths.iter().copied());
        assert_eq!(others(&["rs/app/src/lib.rs"]), Vec::<String>::new());
        assert_eq!(
            others(&["rs/engine/src/a.rs", "rs/app/src/lib.rs", "rs/engine/b.rs"]),
            vec!["engine@0.2.0"]
        );
        assert_eq!(
            others(&["rs/engine-extra/src/lib.rs", "rs/build.rs", "web/x.js"]),
            vec!["root@1.0.0", "extra@0.1.0"]
        );
    }

    /// What a run shares with the other packages of its call is forgotten when the next run of
    /// the checks starts (`checks::run` calls `forget_shared` first): a later call on the same
    /// content runs the tool. (Only the forgetting is asserted here: the lib's other tests may run
    /// the checks, and so forget, at any moment; the sharing itself is
    /// `mcp_warm::a_patch_across_a_workspace_is_one_cargo_run_per_state`.)
    #[test]
    fn what_a_run_shares_is_forgotten_by_the_next_checks() {
        let (_dir, root) = repo(&[("b/src/lib.rs", "pub fn b() {}\n")]);
        let git_dir = root.join(".git");
        let mirror = mirror_with(&root, &git_dir, "", &[]).expect("mirror");
        let argv = [OsString::from("cargo-for-forget-test")];
        let runs = |pkg: &str| Remembered::new(&git_dir, "clippy", pkg, &argv, &mirror, &[], false);
        let finding = RawFinding {
            path: "b/src/lib.rs".into(),
            line: 1,
            column: 1,
            rule: "r".into(),
            severity: crate::checks::finding::Severity::Warning,
            message: "m".into(),
        };
        runs("a@1.0.0").keep(&[finding], &["b@1.0.0".to_string()]);
        forget_shared();
        assert_eq!(runs("b@1.0.0").shared(), None);
    }

    /// A package run is handed the whole patch: what its mirror covers is laid over it, and a
    /// file of another project is not written into the mirror.
    #[test]
    fn only_the_overlays_a_mirror_covers_are_laid_over_it() {
        let (_dir, root) = repo(&[("svc/a.go", "package svc\n"), ("web/b.py", "x = 1\n")]);
        let overlays = [
            Overlay {
                rel: "svc/a.go",
                content: Some(b"package svc // new\n"),
            },
            Overlay {
                rel: "web/b.py",
                content: Some(b"x = 2\n"),
            },
        ];
        let m = mirror_with(&root, &root.join(".git"), "svc", &overlays).expect("mirror");
        assert_eq!(
            std::fs::read(m.path("svc/a.go")).expect("laid over"),
            b"package svc // new\n"
        );
        assert!(!m.path("web/b.py").exists(), "another project's file");
    }

    /// One run per crate, each laying the whole patch: the second run leaves the files the
    /// first laid over as they are (same bytes, same mtime: cargo does not check their crate
    /// again); a run without them restores the working tree's.
    #[test]
    fn a_patch_laid_over_again_keeps_its_files_mtimes() {
        let (_dir, root) = repo(&[
            ("engine/lib.rs", "pub fn a() {}\n"),
            ("app/lib.rs", "fn b() {}\n"),
        ]);
        let overlays = [
            Overlay {
                rel: "engine/lib.rs",
                content: Some(b"pub fn a2() {}\n"),
            },
            Overlay {
                rel: "app/lib.rs",
                content: Some(b"fn b() { a2() }\n"),
            },
            Overlay {
                rel: "engine/new.rs",
                content: Some(b"// new\n"),
            },
        ];
        let git_dir = root.join(".git");
        let mtimes = |m: &Mirror| -> Vec<std::time::SystemTime> {
            overlays
                .iter()
                .map(|o| {
                    std::fs::metadata(m.path(o.rel))
                        .and_then(|md| md.modified())
                        .expect("laid over")
                })
                .collect()
        };
        let first = mirror_with(&root, &git_dir, "", &overlays).expect("first run");
        let laid = mtimes(&first);
        std::thread::sleep(std::time::Duration::from_millis(50));
        let second = mirror_with(&root, &git_dir, "", &overlays).expect("second run");
        assert_eq!(mtimes(&second), laid, "the same patch was written again");
        assert_eq!(
            std::fs::read(second.path("app/lib.rs")).expect("app"),
            b"fn b() { a2() }\n"
        );
        // A patch that differs is written; the files it does not name are restored.
        let other = [Overlay {
            rel: "app/lib.rs",
            content: Some(b"fn b() {}\n// 2\n"),
        }];
        let third = mirror_with(&root, &git_dir, "", &other).expect("third run");
        assert_eq!(
            std::fs::read(third.path("app/lib.rs")).expect("app"),
            b"fn b() {}\n// 2\n"
        );
        assert_eq!(
            std::fs::read(third.path("engine/lib.rs")).expect("engine"),
            b"pub fn a() {}\n"
        );
        assert!(!third.path("engine/new.rs").exists(), "a created file kept");
        let plain = Mirror::sync(&root, &git_dir, "").expect("plain sync");
        assert_eq!(
            std::fs::read(plain.path("app/lib.rs")).expect("app"),
            b"fn b() {}\n"
        );
    }
}
