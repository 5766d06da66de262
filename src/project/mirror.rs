//! A copy of one project (a Cargo workspace, a Go module, a Node or Python project) for the tools
//! that only work on a whole package (clippy, go vet, the verify steps): they see the user's
//! working tree (uncommitted and untracked-but-not-ignored files included) with the patch laid
//! over it.
//!
//! **Where it lives:** outside the repository, in a per-repository cache directory:
//! `$XDG_CACHE_HOME/patchgate/<repo name>-<hash of the git dir>/mirror/<project path>` (else
//! `~/.cache/…`). Why not under `.git/patchgate/` like patchgate's other caches:
//! - the mirror holds copies of the project's tests, and a test runner started in the user's own
//!   tree must never discover them. `node --test` (Node 20–24) walks every directory but
//!   `node_modules`, `.git` included (checked: a `.git/x/test/a.test.js` runs); jest and vitest
//!   skip `.git`, but not all runners do;
//! - the only directory name such runners skip is `node_modules`, and a mirror under one
//!   (patchgate ≤ 0.1 put it at `.git/patchgate/node_modules/mirror/`) is not the same project
//!   to TypeScript: for a file whose path contains `/node_modules/`, tsc takes the module format
//!   from the nearest `package.json` even under `moduleResolution: bundler`, so a `"type":
//!   "commonjs"` project with `verbatimModuleSyntax` that passes in place reports every
//!   `import` as an error there (and a `"type": "module"` one with `module: commonjs` hides
//!   errors);
//!
//! so no path inside the repository satisfies both. Outside it, neither applies. The cost: the
//! repository root is no longer an ancestor of the mirror, so tools that look upward for
//! configuration (a `tsconfig` `extends: "../tsconfig.base.json"`, a root `pyproject.toml`,
//! hoisted `node_modules`) would not find the repository's. Hence the files directly in each
//! directory between the repository root and the project are mirrored too (not the sibling
//! projects), and verify links the real `node_modules` of each of those directories into the
//! mirror. What is above the repository root differs (the cache directory's ancestors), as does
//! `git` run inside the mirror (no repository there).
//!
//! Each entry records the git directory it belongs to (`gitdir`): the first run for a new
//! repository removes the entries of repositories that no longer exist, so deleted clones do not
//! pile up. Mirrors of the old layout (`.git/patchgate/node_modules/`, `.git/patchgate/mirrors/`)
//! are removed by the next sync.
//!
//! **Kept between runs:** a manifest of (size, mtime) per file lets each run copy only what
//! changed in the working tree since the last one, so a second check of the same project costs
//! O(changed files), and the build caches that live next to it stay warm. Files the patch touches
//! are written from memory over the copies. The manifest also keeps a digest of each file's
//! content, so [`Mirror::state_id`] names the project's content (with overlays) without reading
//! it again: equal ids mean equal content, whatever the files' mtimes.
//!
//! Invariant: a mirror file is trusted only if both the working tree's file and the mirror's copy
//! still have the stamps recorded when it was copied, and it is not listed as laid over (`strays`,
//! written before the overlay itself). All projects share one mirror tree (a nested project's
//! files are also its parent's), but each keeps its own manifest, so a patch laid over a file by
//! one project's run must be noticed by every other project's next sync, and so must a file the
//! patch created (which no manifest knows): the strays list does both, and a crash between an
//! overlay and a manifest write cannot leave a patched file passing for the working tree's.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::runner::Cmd;

/// A manifest of another layout is not read (everything is copied once more).
const MANIFEST_VERSION: u32 = 2;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    #[serde(default)]
    version: u32,
    /// Repository path → what was copied.
    files: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// The working-tree file's stamp when it was copied.
    src: Stamp,
    /// The copy's stamp right after it was written.
    copy: CopyStamp,
    /// The content's digest ([`digest`]).
    digest: String,
}

/// Size and mtime (ns) of a working-tree file.
type Stamp = (u64, i128);
/// Inode, size and mtime (ns) of a mirror copy: an overlay rewrites the file (a new inode).
type CopyStamp = (u64, u64, i128);

/// Serializes the read-modify-write of a strays list within the process (package checkers of
/// different languages sync and overlay in parallel).
static STRAYS: Mutex<()> = Mutex::new(());

/// A repository path and the content to lay over the mirror there (`None`: deleted).
pub struct Overlay<'a> {
    pub rel: &'a str,
    pub content: Option<&'a [u8]>,
}

pub struct Mirror {
    /// The mirrored project's root (absolute, in the cache directory).
    pub root: PathBuf,
    /// The mirror tree's root: the repository root's counterpart.
    base: PathBuf,
    /// The cache entry of the repository (holds `mirror/`, `manifests/`, `strays`).
    entry: PathBuf,
    project_rel: String,
    manifest_path: PathBuf,
    manifest: Manifest,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// 128 bits of SHA-256, hex: enough to tell contents apart, half the manifest's size.
fn digest(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes)[..16])
}

fn stamp(md: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    (
        md.len(),
        md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128,
    )
}

fn copy_stamp(md: &std::fs::Metadata) -> CopyStamp {
    use std::os::unix::fs::MetadataExt;
    let (len, mtime) = stamp(md);
    (md.ino(), len, mtime)
}

/// The cache entry of the repository whose git directory is `git_dir` (not created).
pub fn cache_entry(git_dir: &Path) -> Result<PathBuf, String> {
    let cache = crate::fs::layout::cache_home()
        .ok_or("no cache directory for the project mirror: set XDG_CACHE_HOME or HOME")?;
    let canonical = std::fs::canonicalize(git_dir).unwrap_or_else(|_| git_dir.to_path_buf());
    let named = if canonical.file_name().is_some_and(|n| n == ".git") {
        canonical.parent().unwrap_or(&canonical)
    } else {
        &canonical
    };
    // Readable, and never hidden (a temporary directory's name starts with a dot).
    let name: String = named
        .file_name()
        .map(|n| n.to_string_lossy().trim_start_matches('.').to_string())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let id = &hex(&Sha256::digest(canonical.as_os_str().as_bytes()))[..16];
    Ok(crate::fs::layout::mirrors(&cache).join(format!("{name}-{id}")))
}

/// The entry, created (with its `gitdir` record) if missing; the old in-repository layout goes.
fn open_entry(git_dir: &Path) -> Result<PathBuf, String> {
    let entry = cache_entry(git_dir)?;
    let record = entry.join("gitdir");
    if !record.is_file() {
        if let Some(parent) = entry.parent() {
            prune(parent, &entry);
        }
        std::fs::create_dir_all(&entry).map_err(|e| format!("{}: {e}", entry.display()))?;
        let canonical = std::fs::canonicalize(git_dir).unwrap_or_else(|_| git_dir.to_path_buf());
        std::fs::write(&record, canonical.as_os_str().as_bytes())
            .map_err(|e| format!("{}: {e}", record.display()))?;
    }
    for dir in crate::fs::layout::legacy_mirrors(git_dir) {
        if dir.is_dir() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    Ok(entry)
}

/// Removes the entries of repositories whose git directory is gone. An entry without a record
/// is being created by another process, unless it is a day old. The node tools' compiled code
/// beside them is no repository's.
fn prune(cache: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return;
    };
    for e in entries.flatten() {
        let dir = e.path();
        let ours = dir == keep || e.file_name() == crate::fs::layout::NODE_CODE;
        if ours || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let gone = match std::fs::read(dir.join("gitdir")) {
            Ok(p) => !Path::new(std::ffi::OsStr::from_bytes(&p)).exists(),
            Err(_) => e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > Duration::from_secs(86_400)),
        };
        if gone {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Whether repository path `rel` belongs to the mirror of `project_rel`: inside it, or directly
/// in one of the directories above it.
pub(crate) fn covers(project_rel: &str, rel: &str) -> bool {
    if crate::repo::within(rel, project_rel) && rel != project_rel {
        return true;
    }
    let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    crate::repo::within(project_rel, dir)
}

/// `git ls-files` pathspecs: the project, and the files directly in each directory above it.
fn pathspecs(project_rel: &str) -> Vec<String> {
    if project_rel.is_empty() {
        return Vec::new();
    }
    let escape = |s: &str| {
        s.chars()
            .flat_map(|c| {
                let special = matches!(c, '*' | '?' | '[' | ']' | '\\');
                special.then_some('\\').into_iter().chain([c])
            })
            .collect::<String>()
    };
    let mut specs = vec![format!(":(literal){project_rel}")];
    let mut dir = Some(project_rel);
    while let Some(d) = dir {
        let parent = d.rsplit_once('/').map(|(p, _)| p);
        specs.push(match parent {
            Some(p) => format!(":(glob){}/*", escape(p)),
            None => ":(glob)*".to_string(),
        });
        dir = parent;
    }
    specs
}

/// Copies `src` (a file) to `dst` with its permission bits, returning the content's digest.
fn copy_file(src: &Path, dst: &Path, perms: std::fs::Permissions) -> std::io::Result<String> {
    let mut input = std::fs::File::open(src)?;
    let _ = std::fs::remove_file(dst);
    let mut out = std::fs::File::create(dst)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        out.write_all(&buf[..n])?;
    }
    out.set_permissions(perms)?;
    Ok(hex(&h.finalize()[..16]))
}

/// The digest of `src` (a regular file, metadata `md`) when the mirror's `dst` is a regular file
/// with the same bytes (its permission bits made equal to `src`'s): the copy can stay as it is.
fn same_content(src: &Path, dst: &Path, md: &std::fs::Metadata) -> Option<String> {
    if !md.is_file() {
        return None;
    }
    let d = std::fs::symlink_metadata(dst).ok()?;
    if !d.is_file() || d.len() != md.len() {
        return None;
    }
    // Compared in chunks, as `copy_file` copies: a large file is never held twice in memory.
    let (mut a, mut b) = (
        std::fs::File::open(src).ok()?,
        std::fs::File::open(dst).ok()?,
    );
    let (mut x, mut y) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    let mut h = Sha256::new();
    loop {
        let n = a.read(&mut x).ok()?;
        if n == 0 {
            // The copy must end here too (the source may have shrunk since its stamp).
            if b.read(&mut y[..1]).ok()? != 0 {
                return None;
            }
            break;
        }
        b.read_exact(&mut y[..n]).ok()?;
        if x[..n] != y[..n] {
            return None;
        }
        h.update(&x[..n]);
    }
    if d.permissions() != md.permissions() {
        std::fs::set_permissions(dst, md.permissions()).ok()?;
    }
    Some(hex(&h.finalize()[..16]))
}

/// A symbolic link's digest: its target, marked so that it never equals a file's.
fn link_digest(target: &Path) -> String {
    let mut bytes = b"symlink\0".to_vec();
    bytes.extend_from_slice(target.as_os_str().as_bytes());
    digest(&bytes)
}

fn strays_path(entry: &Path) -> PathBuf {
    entry.join("strays")
}

fn read_strays(entry: &Path) -> Vec<String> {
    std::fs::read(strays_path(entry))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// Tracked and untracked-but-not-ignored files under `project_rel`: what a build in the working
/// tree would see.
fn listed(repo_root: &Path, project_rel: &str) -> Result<Vec<String>, String> {
    let specs = pathspecs(project_rel);
    let out = Cmd::new("git", repo_root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
        ])
        .args(specs.iter())
        .timeout(Duration::from_secs(120))
        .run()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !out.success() {
        return Err(format!("git ls-files failed: {}", out.stderr_str().trim()));
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// Files laid over since they were copied: forgotten by the manifest (so copied again), or
/// removed when the working tree has none; the other projects' strays are kept listed, and so
/// are this project's that are `coming` (laid over again next: left as they are). Returns those.
fn drop_strays(
    entry: &Path,
    base: &Path,
    project_rel: &str,
    seen: &HashSet<&str>,
    coming: &HashSet<&str>,
    manifest: &mut Manifest,
) -> Result<HashSet<String>, String> {
    let _guard = STRAYS.lock().unwrap_or_else(|p| p.into_inner());
    let strays = read_strays(entry);
    let (mine, mut others): (Vec<String>, Vec<String>) =
        strays.into_iter().partition(|r| covers(project_rel, r));
    let mut kept = HashSet::new();
    if mine.is_empty() {
        return Ok(kept);
    }
    for rel in mine {
        manifest.files.remove(&rel);
        if coming.contains(rel.as_str()) {
            if kept.insert(rel.clone()) {
                others.push(rel);
            }
        } else if !seen.contains(rel.as_str()) {
            let _ = std::fs::remove_file(base.join(&rel));
        }
    }
    let mut text = Vec::new();
    for rel in &others {
        text.extend_from_slice(rel.as_bytes());
        text.push(0);
    }
    std::fs::write(strays_path(entry), text).map_err(|e| format!("{}: {e}", entry.display()))?;
    Ok(kept)
}

/// Copies `rel` (a file or a symlink) into the mirror unless the copy there is as fresh as the
/// manifest says; records it.
fn copy_if_stale(
    repo_root: &Path,
    base: &Path,
    rel: &str,
    manifest: &mut Manifest,
) -> Result<(), String> {
    let src = repo_root.join(rel);
    let Ok(md) = std::fs::symlink_metadata(&src) else {
        return Ok(());
    };
    if !md.is_file() && !md.file_type().is_symlink() {
        return Ok(());
    }
    let s = stamp(&md);
    let dst = base.join(rel);
    let fresh = manifest.files.get(rel).is_some_and(|e| {
        e.src == s && std::fs::symlink_metadata(&dst).is_ok_and(|d| copy_stamp(&d) == e.copy)
    });
    if fresh {
        return Ok(());
    }
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let digest = if let Some(d) = same_content(&src, &dst, &md) {
        // Rewriting identical bytes would only move the copy's mtime, and mtime-based builds
        // (cargo) would redo a package nothing changed in: a file laid over by the last patch
        // and since written to the working tree is the common case in a server's session.
        d
    } else if md.file_type().is_symlink() {
        let target = std::fs::read_link(&src).map_err(|e| format!("{rel}: {e}"))?;
        let _ = std::fs::remove_file(&dst);
        std::os::unix::fs::symlink(&target, &dst).map_err(|e| format!("link {rel}: {e}"))?;
        link_digest(&target)
    } else {
        copy_file(&src, &dst, md.permissions()).map_err(|e| format!("copy {rel}: {e}"))?
    };
    let copied = std::fs::symlink_metadata(&dst).map_err(|e| format!("copy {rel}: {e}"))?;
    manifest.files.insert(
        rel.to_string(),
        Entry {
            src: s,
            copy: copy_stamp(&copied),
            digest,
        },
    );
    Ok(())
}

impl Mirror {
    /// Brings the mirror of `project_rel` (relative to the repository root, `""` for the root) up
    /// to date with the working tree.
    pub fn sync(repo_root: &Path, git_dir: &Path, project_rel: &str) -> Result<Mirror, String> {
        Mirror::sync_around(repo_root, git_dir, project_rel, &HashSet::new())
    }

    /// [`Mirror::sync`] before the paths `coming` are laid over again: a file an earlier run
    /// laid over and that is about to be laid over once more is left as it is (still listed as
    /// laid over) instead of restored from the working tree and written again. A patch across
    /// the crates of a workspace is checked one crate at a time, each run laying the whole
    /// patch: restored and rewritten, every other crate's patched files got a new mtime, and
    /// cargo checked those crates again in each run.
    pub fn sync_around(
        repo_root: &Path,
        git_dir: &Path,
        project_rel: &str,
        coming: &HashSet<&str>,
    ) -> Result<Mirror, String> {
        let entry = open_entry(git_dir)?;
        let base = entry.join("mirror");
        let root = if project_rel.is_empty() {
            base.clone()
        } else {
            base.join(project_rel)
        };
        let key = if project_rel.is_empty() {
            "_root".to_string()
        } else {
            project_rel.replace('/', "__")
        };
        let manifest_path = entry.join("manifests").join(format!("{key}.json"));
        let mut manifest: Manifest = std::fs::read(&manifest_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
            .filter(|m| m.version == MANIFEST_VERSION)
            .unwrap_or_default();
        manifest.version = MANIFEST_VERSION;
        let listed = listed(repo_root, project_rel)?;
        let seen: HashSet<&str> = listed.iter().map(String::as_str).collect();
        let kept = drop_strays(&entry, &base, project_rel, &seen, coming, &mut manifest)?;
        for rel in listed.iter().filter(|r| !kept.contains(r.as_str())) {
            copy_if_stale(repo_root, &base, rel, &mut manifest)?;
        }
        let gone: Vec<String> = manifest
            .files
            .keys()
            .filter(|k| !seen.contains(k.as_str()))
            .cloned()
            .collect();
        for rel in gone {
            let _ = std::fs::remove_file(base.join(&rel));
            manifest.files.remove(&rel);
        }
        let m = Mirror {
            root,
            base,
            entry,
            project_rel: project_rel.to_string(),
            manifest_path,
            manifest,
        };
        m.save()?;
        Ok(m)
    }

    fn save(&self) -> Result<(), String> {
        if let Some(p) = self.manifest_path.parent() {
            std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
        }
        let text = serde_json::to_vec(&self.manifest).map_err(|e| e.to_string())?;
        crate::fs::atomic_write(&self.manifest_path, &text, Some(0o644))
            .map_err(|e| format!("{}: {e}", self.manifest_path.display()))
    }

    /// The repository paths copied from the working tree (not the files an overlay created).
    pub fn listed(&self) -> impl Iterator<Item = &str> {
        self.manifest.files.keys().map(String::as_str)
    }

    /// Where a repository path lives in the mirror.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    /// Whether repository path `rel` is part of this mirror (the project's files and those
    /// directly in the directories above it): what an overlay for this project may touch.
    pub fn covers(&self, rel: &str) -> bool {
        covers(&self.project_rel, rel)
    }

    /// The identity of the project's content as mirrored, with `overlays` laid over it (those
    /// this mirror covers): equal ids, equal content. Costs O(files), no file is read.
    pub fn state_id(&self, overlays: &[Overlay]) -> String {
        let mut files: BTreeMap<&str, Cow<str>> = self
            .manifest
            .files
            .iter()
            .map(|(k, e)| (k.as_str(), Cow::Borrowed(e.digest.as_str())))
            .collect();
        for o in overlays.iter().filter(|o| self.covers(o.rel)) {
            match o.content {
                Some(bytes) => {
                    files.insert(o.rel, Cow::Owned(digest(bytes)));
                }
                None => {
                    files.remove(o.rel);
                }
            }
        }
        let mut h = Sha256::new();
        h.update(self.project_rel.as_bytes());
        h.update([0]);
        for (rel, d) in &files {
            h.update(rel.as_bytes());
            h.update([0]);
            h.update(d.as_bytes());
            h.update([b'\n']);
        }
        hex(&h.finalize())
    }

    /// Writes `content` (or removes the file, for `None`) at a repository path inside the mirror.
    /// The path is listed as laid over first, so the next sync of any project that holds it
    /// restores the working tree's version (or removes a file the working tree does not have).
    /// (`_git_dir`: the mirror knows its place; kept for the callers' sake.)
    pub fn overlay(
        &self,
        _git_dir: &Path,
        rel: &str,
        content: Option<&[u8]>,
    ) -> Result<(), String> {
        {
            let _guard = STRAYS.lock().unwrap_or_else(|p| p.into_inner());
            let mut record = rel.as_bytes().to_vec();
            record.push(0);
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(strays_path(&self.entry))
                .and_then(|mut f| f.write_all(&record))
                .map_err(|e| format!("{}: {e}", self.entry.display()))?;
        }
        let dst = self.base.join(rel);
        match content {
            Some(bytes) => {
                // The same bytes already there (laid over by the previous run of this patch):
                // rewritten, only the mtime would change, and cargo would check again.
                let same = std::fs::symlink_metadata(&dst)
                    .is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
                    && std::fs::read(&dst).is_ok_and(|b| b == bytes);
                if same {
                    return Ok(());
                }
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                let _ = std::fs::remove_file(&dst);
                std::fs::write(&dst, bytes).map_err(|e| format!("{}: {e}", dst.display()))?;
            }
            None => {
                let _ = std::fs::remove_file(&dst);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    }

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("sub")).expect("sub");
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("a.py"), "x = 1\n").expect("a");
        std::fs::write(root.join("sub/m.py"), "y = 1\n").expect("m");
        (dir, root)
    }

    /// A nested project's file patched in its own mirror run must not pass for the working
    /// tree's in the enclosing project's next run (each keeps its own manifest); nor may a file
    /// a patch created outlive the run.
    #[test]
    fn a_file_overlaid_by_one_project_is_restored_for_another() {
        let (_dir, root) = repo();
        let git_dir = root.join(".git");
        let m = Mirror::sync(&root, &git_dir, "").expect("sync root");
        let mirrored = m.base.join("sub/m.py");
        let created = m.base.join("sub/new.py");

        // Run 2: the nested project lays a patch over sub/m.py (a rejected patch, say), and
        // creates sub/new.py.
        let sub = Mirror::sync(&root, &git_dir, "sub").expect("sync sub");
        sub.overlay(&git_dir, "sub/m.py", Some(b"y = (\n"))
            .expect("overlay");
        sub.overlay(&git_dir, "sub/new.py", Some(b"z = 1\n"))
            .expect("overlay");
        assert_eq!(std::fs::read(&mirrored).expect("read"), b"y = (\n");
        // Run 3: the enclosing project again. The working tree still says `y = 1`.
        Mirror::sync(&root, &git_dir, "").expect("sync root again");
        assert_eq!(std::fs::read(&mirrored).expect("read"), b"y = 1\n");
        assert!(!created.exists(), "a created file outlived its run");
        // And the nested project's own next run too.
        sub.overlay(&git_dir, "sub/m.py", None)
            .expect("overlay a deletion");
        Mirror::sync(&root, &git_dir, "sub").expect("sync sub again");
        assert_eq!(std::fs::read(&mirrored).expect("read"), b"y = 1\n");
    }

    #[test]
    fn lives_outside_the_repository_and_away_from_node_modules() {
        let (_dir, root) = repo();
        let git_dir = root.join(".git");
        std::fs::create_dir_all(git_dir.join("patchgate/node_modules/mirror")).expect("old");
        let m = Mirror::sync(&root, &git_dir, "sub").expect("sync");
        let canonical = std::fs::canonicalize(&root).expect("canonical");
        assert!(!m.root.starts_with(&canonical) && !m.root.starts_with(&root));
        assert!(
            !m.root.components().any(|c| c.as_os_str() == "node_modules"),
            "{}",
            m.root.display()
        );
        assert!(m.root.join("m.py").is_file());
        // The old layout is gone.
        assert!(!git_dir.join("patchgate/node_modules").exists());
        // The files directly above the project come along (upward configuration lookups).
        assert!(m.base.join("a.py").is_file());
        assert!(m.covers("a.py") && m.covers("sub/m.py") && !m.covers("other/x.py"));
    }

    #[test]
    fn state_ids_follow_content_not_mtimes() {
        let (_dir, root) = repo();
        let git_dir = root.join(".git");
        let one = Mirror::sync(&root, &git_dir, "").expect("sync");
        let id = one.state_id(&[]);
        // Touched, same content: same id.
        std::fs::write(root.join("a.py"), "x = 1\n").expect("rewrite");
        let two = Mirror::sync(&root, &git_dir, "").expect("sync");
        assert_eq!(two.state_id(&[]), id);
        // An overlay with the working tree's content names the same state; another does not.
        let same = [Overlay {
            rel: "a.py",
            content: Some(b"x = 1\n"),
        }];
        assert_eq!(two.state_id(&same), id);
        let patched = [Overlay {
            rel: "a.py",
            content: Some(b"x = 2\n"),
        }];
        let patched_id = two.state_id(&patched);
        assert_ne!(patched_id, id);
        // The working tree edited to the patched content: the patched state's id.
        std::fs::write(root.join("a.py"), "x = 2\n").expect("edit");
        let three = Mirror::sync(&root, &git_dir, "").expect("sync");
        assert_eq!(three.state_id(&[]), patched_id);
    }

    /// A server's session: a patch is laid over the mirror for its checks, then written to the
    /// working tree. The next sync finds the same bytes in the copy and leaves it alone (its
    /// mtime too, which cargo's freshness goes by); a file whose bytes differ is copied again.
    #[test]
    fn a_copy_that_already_holds_the_working_trees_bytes_is_kept() {
        use std::os::unix::fs::MetadataExt;
        let (_dir, root) = repo();
        let git_dir = root.join(".git");
        let m = Mirror::sync(&root, &git_dir, "").expect("sync");
        m.overlay(&git_dir, "a.py", Some(b"x = 2\n"))
            .expect("overlay");
        m.overlay(&git_dir, "sub/m.py", Some(b"y = 2\n"))
            .expect("overlay");
        let laid = std::fs::metadata(m.path("a.py")).expect("copy");
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(root.join("a.py"), "x = 2\n").expect("patch written");
        std::fs::write(root.join("sub/m.py"), "y = 3\n").expect("another edit");
        let again = Mirror::sync(&root, &git_dir, "").expect("sync again");
        let kept = std::fs::metadata(again.path("a.py")).expect("copy");
        assert_eq!(
            (kept.ino(), kept.mtime_nsec()),
            (laid.ino(), laid.mtime_nsec())
        );
        assert_eq!(
            std::fs::read(again.path("sub/m.py")).expect("read"),
            b"y = 3\n"
        );
        // Trusted from now on like any copy: the state names the working tree's content.
        let fresh = Mirror::sync(&root, &git_dir, "").expect("sync once more");
        assert_eq!(fresh.state_id(&[]), again.state_id(&[]));
        std::fs::write(root.join("a.py"), "x = 4\n").expect("edit");
        let edited = Mirror::sync(&root, &git_dir, "").expect("sync after an edit");
        assert_eq!(
            std::fs::read(edited.path("a.py")).expect("read"),
            b"x = 4\n"
        );
    }

    #[test]
    fn covers_the_project_and_the_files_above_it() {
        assert!(covers("", "x/y.py"));
        assert!(covers("a/b", "a/b/c.py"));
        assert!(covers("a/b", "a/x.json"));
        assert!(covers("a/b", "top.toml"));
        assert!(!covers("a/b", "a/c/x.py"));
        assert!(!covers("a/b", "a/bc/x.py"));
        assert_eq!(
            pathspecs("a/b*"),
            [":(literal)a/b*", ":(glob)a/*", ":(glob)*"]
        );
    }

    #[test]
    fn entries_of_deleted_repositories_are_pruned() {
        let cache = tempfile::tempdir().expect("cache");
        let dead = cache.path().join("dead-0123");
        let live = cache.path().join("live-4567");
        let fresh = cache.path().join("fresh-89ab");
        for d in [&dead, &live, &fresh] {
            std::fs::create_dir_all(d.join("mirror")).expect("mkdir");
        }
        std::fs::write(dead.join("gitdir"), "/nonexistent/patchgate/.git").expect("write");
        std::fs::write(live.join("gitdir"), cache.path().as_os_str().as_bytes()).expect("write");
        // Two days old without a record: a creation that never finished, and the node code.
        let stale = cache.path().join("stale-cdef");
        let node_code = cache.path().join(crate::fs::layout::NODE_CODE);
        let old = std::time::SystemTime::now() - Duration::from_secs(2 * 86_400);
        for d in [&stale, &node_code] {
            std::fs::create_dir_all(d).expect("mkdir");
            let dir = std::fs::File::open(d).expect("open");
            dir.set_modified(old).expect("an old mtime");
        }
        prune(cache.path(), &fresh);
        assert!(!dead.exists());
        assert!(live.exists());
        // No record yet: another process is creating it.
        assert!(fresh.exists());
        assert!(!stale.exists());
        assert!(
            node_code.exists(),
            "the node tools' compiled code is no mirror"
        );
    }
}
