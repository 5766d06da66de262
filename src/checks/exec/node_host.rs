//! Warm node hosts: the bridge of [`super::node`] kept running between batches, for a process that
//! serves many patches (`patchgate mcp`). Off unless [`set_warm`] turns it on; the command line
//! keeps its one node process per batch and leaves nothing running.
//!
//! One host per (tool, tool package, project root), so eslint and prettier of a project still run
//! in parallel, each host serving its batches one at a time. A host keeps the tool's module and
//! eslint's engine (its parsed configuration, plugins, parsers) loaded, which is most of what a
//! batch costs.
//!
//! Invariant: a host never answers with a configuration older than the files on disk. Every
//! batch stamps (size, mtime, inode, or absence) the files that can change what the tool does for
//! its files: the tool's configuration names, `package.json`, `.editorconfig` and the ignore
//! files in each directory from the file up to the repository root, the tool's own
//! `package.json` (its version), and the project's lockfiles. A stamp that differs from the one
//! the host saw before restarts the host; a path seen for the first time is simply recorded (the
//! host has not read it yet either).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::node::{NodeError, NodeTool};
use crate::runner::{Cmd, RunError, Session, SessionError};

static WARM: AtomicBool = AtomicBool::new(false);
type Hosts = HashMap<Key, Arc<Mutex<Host>>>;
static HOSTS: Mutex<Option<Hosts>> = Mutex::new(None);

/// Files next to every checked file (and in each directory above it) that change a tool's
/// verdict, besides the tool's own configuration names.
const SHARED: &[&str] = &[
    "package.json",
    ".editorconfig",
    ".prettierignore",
    ".eslintignore",
];
/// A project's lockfiles: a plugin or parser upgraded under the same config.
const LOCKS: &[&str] = &[
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "node_modules/.package-lock.json",
    "node_modules/.modules.yaml",
];

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Key {
    tool: &'static str,
    module_dir: PathBuf,
    project_root: PathBuf,
}

/// A file's identity as far as a restart is concerned; `None`: absent.
type Stamp = Option<(u64, i64, i64, u64)>;

struct Host {
    session: Option<Session>,
    /// The bridge script the host runs (removed with the host).
    dir: Option<tempfile::TempDir>,
    seen: HashMap<PathBuf, Stamp>,
    next_id: u64,
}

/// Turns warm hosts on or off; off stops every running host.
pub fn set_warm(on: bool) {
    WARM.store(on, Ordering::SeqCst);
    if !on {
        shutdown();
    }
}

pub fn warm() -> bool {
    WARM.load(Ordering::SeqCst)
}

/// Stops every host (their process groups are killed).
pub fn shutdown() {
    let hosts = HOSTS.lock().ok().and_then(|mut h| h.take());
    drop(hosts);
}

/// Stops the host of this tool and project, if one runs: the next batch starts a fresh one.
pub(super) fn forget(tool: NodeTool, module_dir: &Path, project_root: &Path) {
    let key = Key {
        tool: tool.package(),
        module_dir: module_dir.to_path_buf(),
        project_root: project_root.to_path_buf(),
    };
    let host = HOSTS.lock().ok().and_then(|mut h| h.as_mut()?.remove(&key));
    drop(host);
}

/// One batch through the warm host for this tool and project: the bridge's answer line.
pub(super) fn request(
    tool: NodeTool,
    module_dir: &Path,
    project_root: &Path,
    doc: &serde_json::Value,
    files: &[PathBuf],
    bridge: &str,
    timeout: Duration,
) -> Result<String, NodeError> {
    let key = Key {
        tool: tool.package(),
        module_dir: module_dir.to_path_buf(),
        project_root: project_root.to_path_buf(),
    };
    let host = {
        let mut guard = HOSTS
            .lock()
            .map_err(|_| NodeError::Failed("internal: the node hosts' lock is poisoned".into()))?;
        let hosts = guard.get_or_insert_with(HashMap::new);
        Arc::clone(hosts.entry(key).or_insert_with(|| {
            Arc::new(Mutex::new(Host {
                session: None,
                dir: None,
                seen: HashMap::new(),
                next_id: 0,
            }))
        }))
    };
    let mut host = host
        .lock()
        .map_err(|_| NodeError::Failed("internal: a node host's lock is poisoned".into()))?;
    let stamps = watched(tool, module_dir, project_root, files);
    let stale = stamps
        .iter()
        .any(|(p, s)| host.seen.get(p).is_some_and(|old| old != s));
    if stale || !host.session.as_mut().is_some_and(Session::alive) {
        host.session = None;
        host.seen.clear();
        start(&mut host, project_root, bridge)?;
    }
    host.seen.extend(stamps);
    host.next_id += 1;
    let id = host.next_id;
    let mut line = doc.clone();
    line["id"] = id.into();
    let want = format!("\"id\":{id},");
    let Some(session) = host.session.as_mut() else {
        return Err(NodeError::Failed("internal: no node host".into()));
    };
    let got = session.request(&line.to_string(), timeout, |l| {
        l.starts_with("{\"pid\":") && l.contains(&want)
    });
    match got {
        Ok(answer) => Ok(answer),
        Err(e) => {
            // The next batch starts a fresh host.
            host.session = None;
            host.seen.clear();
            Err(match e {
                SessionError::Timeout => NodeError::Timeout,
                SessionError::Closed(tail) => {
                    NodeError::Failed(format!("{} (the node host exited): {tail}", tool.package()))
                }
            })
        }
    }
}

fn start(host: &mut Host, project_root: &Path, bridge: &str) -> Result<(), NodeError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| NodeError::Failed(format!("{what}: {e}"));
    if host.dir.is_none() {
        let dir = tempfile::Builder::new()
            .prefix("patchgate-node-host-")
            .tempdir()
            .map_err(|e| failed("cannot create a scratch directory", &e))?;
        std::fs::write(dir.path().join("bridge.mjs"), bridge)
            .map_err(|e| failed("cannot write the bridge", &e))?;
        host.dir = Some(dir);
    }
    let script = host
        .dir
        .as_ref()
        .map(|d| d.path().join("bridge.mjs"))
        .unwrap_or_default();
    let session = Cmd::new("node", project_root)
        .arg(script)
        .arg("--serve")
        .spawn_session()
        .map_err(|e| match e {
            RunError::NotFound(_) => NodeError::Missing("node not found on PATH".into()),
            e => failed("node", &e),
        })?;
    host.session = Some(session);
    Ok(())
}

/// The files whose change restarts the host of this batch, with their stamps now.
fn watched(
    tool: NodeTool,
    module_dir: &Path,
    project_root: &Path,
    files: &[PathBuf],
) -> Vec<(PathBuf, Stamp)> {
    let names: &[&str] = tool.configs;
    let mut dirs: HashSet<&Path> = HashSet::new();
    for f in files {
        for d in f.ancestors().skip(1) {
            if !dirs.insert(d) {
                break;
            }
            // The repository root is the last directory a tool's lookup matters in here.
            if d.join(".git").exists() {
                break;
            }
        }
    }
    let mut paths: Vec<PathBuf> = vec![module_dir.join("package.json")];
    paths.extend(LOCKS.iter().map(|l| project_root.join(l)));
    for d in dirs {
        paths.extend(names.iter().chain(SHARED).map(|n| d.join(n)));
    }
    paths
        .into_iter()
        .map(|p| {
            let s = stamp(&p);
            (p, s)
        })
        .collect()
}

fn stamp(p: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).ok()?;
    Some((m.len(), m.mtime(), m.mtime_nsec(), m.ino()))
}
