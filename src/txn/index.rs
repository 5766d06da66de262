//! The index entries of a commit's patched files, written directly in the common case.
//!
//! `git update-index` reads the whole index into memory, rewrites and re-hashes it: at 50,000
//! files that is most of a `--commit`'s own cost, and a process start. When every patched path
//! is an existing, plain stage-0 file entry whose content on disk is what the transaction wrote,
//! the new index differs from the old one only in those entries' stat data and ids, the cache
//! tree's folders above them (invalidated) and the trailing hash: this module writes exactly
//! that, under git's own lock, and syncs it as `core.fsync=added` has git do.
//!
//! Invariants:
//! - Anything this does not handle entirely is left to `git update-index` (the caller's
//!   fallback), before anything is written: another index version or hash, a split or sparse
//!   index, an extension other than `TREE`, `REUC` and `UNTR`, a configuration under which git
//!   would also change the index's form (split index, fsmonitor, untracked cache on or off,
//!   sparse index, shared permissions, `core.ignoreStat`, index threads), a conflicted,
//!   missing, assume-valid, skip-worktree or intent-to-add entry, a mode change, a symlink, a
//!   file whose bytes are no longer the transaction's, a racily clean entry elsewhere whose
//!   content changed (git would smudge it), or `index.lock` held by someone.
//! - The result is what `git update-index` writes for the same files: the entry bytes are
//!   git's (stat data from the file, 32-bit truncated), the other entries and extensions byte
//!   for byte, the cache tree invalidated as git invalidates it, the hash or, with
//!   `index.skipHash`, zeros.
//! - git's lock is taken by hard-linking a temp file of ours (`.index.patchgate-<pid>-<n>.tmp`)
//!   to `index.lock`, which fails when the lock exists, exactly as git's `O_EXCL` create. A
//!   SIGKILL anywhere leaves either nothing, the temp file, or the temp file and a lock that is
//!   the same inode: [`reclaim`] (run first by every index update, recovery's included)
//!   recognises both and removes them, where a lock of git's own is never touched.
//! - The new index is synced before its rename; the folder's sync after it runs beside the rest
//!   of the transaction and is waited for ([`settle`]) before the journal is removed: until
//!   then a crash leaves the journal, and recovery writes the index again.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use git2::Repository;
use sha1::{Digest, Sha1};

use super::journal::{ABSENT, FileEntry, State};
use crate::repo::index::{self as codec, EntryRef, FLAG_VALID, OID_LEN, Stat};

/// Regular-file modes an entry may have here.
const REGULAR: u32 = 0o100644;
const EXECUTABLE: u32 = 0o100755;
const GITLINK: u32 = 0o160000;

/// Why the direct write stepped aside (for the timing marks and the tests' witnesses).
pub type Declined = &'static str;

/// Writes the index entries of `paths` directly; `Err(why)` when git must do it (nothing was
/// changed then).
pub fn update(
    repo: &Repository,
    git_dir: &Path,
    workdir: &Path,
    paths: &[String],
    files: &[FileEntry],
) -> Result<(), Declined> {
    let settings = Settings::read(repo)?;
    let targets = targets(paths, files)?;
    let Some(mut lock) = Lock::take(git_dir) else {
        return Err("index.lock is held");
    };
    let written = write_locked(git_dir, workdir, &targets, &settings, &lock)?;
    // Renamed into place: neither the lock's name nor the temp file's is ours any more.
    lock.published = written;
    Ok(())
}

/// The configuration that decides the index's form.
struct Settings {
    skip_hash: bool,
    file_mode: bool,
    /// `Some(true)`: git would add an untracked cache; `Some(false)`: remove it.
    untracked: Option<bool>,
}

impl Settings {
    fn read(repo: &Repository) -> Result<Settings, Declined> {
        let c = repo
            .config()
            .and_then(|mut c| c.snapshot())
            .map_err(|_| "the configuration cannot be read")?;
        let set = |k: &str| c.get_entry(k).is_ok();
        let on = |k: &str| c.get_bool(k).ok();
        // Set at all (even to a value git2 cannot read as a boolean, like a hook path).
        let not_off = |k: &str| set(k) && on(k) != Some(false);
        if on("core.ignorestat") == Some(true)
            || on("core.splitindex") == Some(true)
            || not_off("core.fsmonitor")
            || on("index.sparse") == Some(true)
            || set("core.sharedrepository")
            || set("index.threads")
            || set("index.recordendofindexentries")
            || set("index.recordoffsettable")
            // Settings git takes from its command line or environment, which libgit2 does not
            // read.
            || ["GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_TEST_SPLIT_INDEX"]
                .iter()
                .any(|v| std::env::var_os(v).is_some())
        {
            return Err("the configuration changes the index's form");
        }
        let many = on("feature.manyfiles") == Some(true);
        let untracked = match c.get_string("core.untrackedcache").ok().as_deref() {
            Some("keep") => None,
            Some(_) => on("core.untrackedcache"),
            None => many.then_some(true),
        };
        Ok(Settings {
            skip_hash: on("index.skiphash").unwrap_or(many),
            file_mode: on("core.filemode").unwrap_or(true),
            untracked,
        })
    }
}

/// A patched path and the ids its entry gets.
struct Target<'a> {
    path: &'a str,
    /// The blob of the working-tree bytes the transaction wrote.
    written: [u8; OID_LEN],
    /// The blob the index records (the committed one when filters converted the content).
    recorded: [u8; OID_LEN],
}

fn oid_bytes(hex: &str) -> Option<[u8; OID_LEN]> {
    let oid = git2::Oid::from_str(hex).ok()?;
    let mut b = [0u8; OID_LEN];
    b.copy_from_slice(oid.as_bytes());
    Some(b)
}

fn targets<'a>(paths: &'a [String], files: &[FileEntry]) -> Result<Vec<Target<'a>>, Declined> {
    let exec = super::commit::exec_changes(files);
    paths
        .iter()
        .map(|path| {
            let f = files
                .iter()
                .find(|f| f.path == *path)
                .ok_or("a path without its journal entry")?;
            let new = match (&f.old, &f.new) {
                (State::File { .. }, State::File { oid, .. }) => oid,
                _ => return Err("a file added, deleted or not a regular file"),
            };
            if f.uncommitted || exec.iter().any(|(p, _)| p == path) {
                return Err("an entry that does not follow the working tree");
            }
            let written = oid_bytes(new).ok_or("a journal id that is not SHA-1")?;
            let recorded = match f.committed.as_deref() {
                Some(ABSENT) => return Err("an entry that does not follow the working tree"),
                Some(c) => oid_bytes(c).ok_or("a journal id that is not SHA-1")?,
                None => written,
            };
            Ok(Target {
                path,
                written,
                recorded,
            })
        })
        .collect()
}

/// git's `index.lock`, held through a hard link to a temp file of ours.
struct Lock {
    tmp: std::path::PathBuf,
    lock: std::path::PathBuf,
    file: std::fs::File,
    /// The new index was renamed into place (and the temp file's name removed).
    published: bool,
}

impl Lock {
    fn take(git_dir: &Path) -> Option<Lock> {
        reclaim(git_dir);
        let tmp = git_dir.join(crate::fs::temp_name("index"));
        let lock = git_dir.join("index.lock");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_CLOEXEC)
            .open(&tmp)
            .ok()?;
        if std::fs::hard_link(&tmp, &lock).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return None;
        }
        Some(Lock {
            tmp,
            lock,
            file,
            published: false,
        })
    }
}

/// Whatever ends the direct write early (git must do it, an error, a panic unwinding) gives the
/// lock back: the lock's name only while it is still the temp file's inode.
impl Drop for Lock {
    fn drop(&mut self) {
        if self.published {
            return;
        }
        if let (Ok(t), Ok(l)) = (self.file.metadata(), self.lock.symlink_metadata())
            && (t.dev(), t.ino()) == (l.dev(), l.ino())
        {
            let _ = std::fs::remove_file(&self.lock);
        }
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Removes what a killed direct write left in `git_dir`: its temp files, and `index.lock` when
/// it is one of them (the same inode). Only temp files of processes that are gone are touched.
pub fn reclaim(git_dir: &Path) {
    let Ok(dir) = std::fs::read_dir(git_dir) else {
        return;
    };
    let lock = git_dir.join("index.lock");
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !crate::fs::is_temp_for(name, "index") || owner_alive(name) {
            continue;
        }
        let tmp = entry.path();
        if let (Ok(t), Ok(l)) = (tmp.symlink_metadata(), lock.symlink_metadata())
            && (t.dev(), t.ino()) == (l.dev(), l.ino())
        {
            let _ = std::fs::remove_file(&lock);
        }
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Whether the process named in a temp file's name (`.index.patchgate-<pid>-<n>.tmp`) is
/// another one that still runs.
fn owner_alive(name: &str) -> bool {
    let pid = name
        .rsplit_once(".patchgate-")
        .and_then(|(_, rest)| rest.split('-').next())
        .and_then(|p| p.parse::<i32>().ok());
    match pid {
        Some(p) if p as u32 == std::process::id() => false,
        // SAFETY: signal 0 only checks that the process exists.
        Some(p) if p > 0 => unsafe { libc::kill(p, 0) == 0 },
        _ => true,
    }
}

fn write_locked(
    git_dir: &Path,
    workdir: &Path,
    targets: &[Target],
    settings: &Settings,
    lock: &Lock,
) -> Result<bool, Declined> {
    let index_path = git_dir.join("index");
    let mut file = std::fs::File::open(&index_path).map_err(|_| "no index to update")?;
    let meta = file.metadata().map_err(|_| "the index cannot be read")?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)
        .map_err(|_| "the index cannot be read")?;
    crate::timing::mark("index: read");
    let stamp = meta.mtime();
    // The old index's trailing hash is not checked: git checks it only in `git fsck` (since
    // 2.13, `read-cache: force_verify_index_checksum`), and `git update-index`, which this
    // stands in for, rewrites an index whose hash is wrong as this does. Checking it was a
    // SHA-1 of the whole file (4 MB at 50,000 files) that no reader of the result needs.
    let (layout, patches) = plan(&bytes, stamp, workdir, targets, settings)?;
    crate::timing::mark("index: checked");
    if patches.is_empty() {
        // git writes nothing either when every entry is already up to date.
        return Ok(false);
    }
    let mut changed: Vec<&str> = Vec::with_capacity(patches.len());
    for (offset, entry, path) in &patches {
        bytes[*offset..*offset + codec::FLAGS_AT].copy_from_slice(entry);
        changed.push(path);
    }
    let body = serialise(bytes, &layout, &changed)?;
    publish(git_dir, &index_path, body, settings.skip_hash, lock).map(|()| true)
}

/// A patched entry: where it starts, its new stat data, mode and id, its path.
type Patch<'a> = (usize, [u8; codec::FLAGS_AT], &'a str);

/// Reads the index `bytes` and the patched files: what to change, or why git must.
fn plan<'a>(
    bytes: &[u8],
    stamp: i64,
    workdir: &Path,
    targets: &'a [Target],
    settings: &Settings,
) -> Result<(codec::Layout, Vec<Patch<'a>>), Declined> {
    // Sorted names, searched by each of the index's entries: cheaper than hashing every name
    // of a large index for the few a patch touches.
    let mut wanted: Vec<(&[u8], usize)> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.path.as_bytes(), i))
        .collect();
    wanted.sort_unstable();
    let lookup = |name: &[u8]| {
        wanted
            .binary_search_by(|(w, _)| (*w).cmp(name))
            .ok()
            .map(|at| wanted[at].1)
    };
    let mut found: Vec<Option<(usize, u16, u16)>> = vec![None; targets.len()];
    let mut conflicted = false;
    let mut racy: Vec<(usize, Vec<u8>)> = Vec::new();
    let layout = codec::walk(bytes, |e: &EntryRef| {
        if let Some(i) = lookup(e.name) {
            conflicted |= found[i].is_some() || e.stage() != 0;
            found[i] = Some((e.offset, e.flags, e.extended));
            return;
        }
        // git smudges, while writing, the entries that were racily clean for the old index
        // (their time not older than its own; compared by the second, which is git's rule
        // without nanoseconds and includes its rule with them).
        if let (Some(m), Some(mode)) = (
            codec::Stat::read(bytes, e.offset),
            codec::mode_at(bytes, e.offset),
        ) && mode != GITLINK
            && i64::from(m.mtime.0) >= stamp
        {
            racy.push((e.offset, e.name.to_vec()));
        }
    })
    .ok_or("an index this does not read")?;
    check_layout(bytes, &layout, settings)?;
    if conflicted {
        return Err("a conflicted entry");
    }
    for (offset, name) in &racy {
        still_clean(bytes, *offset, &workdir.join(bytes_path(name)?))?;
    }
    let mut patches = Vec::with_capacity(targets.len());
    for (t, at) in targets.iter().zip(&found) {
        let (offset, flags, extended) = at.ok_or("a patched path without an index entry")?;
        if flags & FLAG_VALID != 0 || extended != 0 {
            return Err("an assume-valid, skip-worktree or intent-to-add entry");
        }
        let mode = codec::mode_at(bytes, offset).ok_or("an index this does not read")?;
        if mode != REGULAR && mode != EXECUTABLE {
            return Err("an entry that is not a regular file");
        }
        let (stat, perm) = written_stat(&workdir.join(t.path), &t.written)?;
        if settings.file_mode && (perm & 0o100 != 0) != (mode == EXECUTABLE) {
            return Err("a mode change");
        }
        let mut entry = [0u8; codec::FLAGS_AT];
        stat.write(&mut entry, mode, &t.recorded);
        if bytes[offset..offset + codec::FLAGS_AT] != entry {
            patches.push((offset, entry, t.path));
        }
    }
    Ok((layout, patches))
}

/// The extensions and the form the configuration asks for must be ones kept as they are.
fn check_layout(bytes: &[u8], layout: &codec::Layout, s: &Settings) -> Result<(), Declined> {
    for x in &layout.exts {
        if !matches!(&x.sig, b"TREE" | b"REUC" | b"UNTR") {
            return Err("an index extension this does not keep");
        }
    }
    let has_untracked = layout.exts.iter().any(|x| &x.sig == b"UNTR");
    if s.untracked.is_some_and(|want| want != has_untracked) {
        return Err("git would add or drop the untracked cache");
    }
    if layout.version == 3 {
        // git writes version 2 when no entry needs the extended flags.
        let mut any = false;
        codec::walk(bytes, |e| any |= e.has_extended);
        if !any {
            return Err("a version 3 index git would write as version 2");
        }
    }
    Ok(())
}

fn bytes_path(name: &[u8]) -> Result<&Path, Declined> {
    use std::os::unix::ffi::OsStrExt;
    if name.is_empty() || name.starts_with(b"/") || name.split(|&b| b == b'/').any(|c| c == b"..") {
        return Err("an index entry with an unsafe name");
    }
    Ok(Path::new(std::ffi::OsStr::from_bytes(name)))
}

/// A racily clean entry elsewhere: git leaves it alone unless its stat data still matches and
/// its content changed (then it zeroes the recorded size); that case is git's to write.
fn still_clean(bytes: &[u8], offset: usize, path: &Path) -> Result<(), Declined> {
    let Ok(m) = path.symlink_metadata() else {
        return Ok(());
    };
    let Some(recorded) = Stat::read(bytes, offset) else {
        return Err("an index this does not read");
    };
    // git compares these always: any difference and the entry is not racily clean.
    if m.mtime() as u32 != recorded.mtime.0 || m.size() as u32 != recorded.size {
        return Ok(());
    }
    if !m.file_type().is_file() {
        return Err("a racily clean entry that is not a regular file");
    }
    let content = std::fs::read(path).map_err(|_| "a racily clean entry cannot be read")?;
    if crate::repo::blob_id(&content).as_bytes() == &bytes[offset + codec::OID_AT..][..OID_LEN] {
        Ok(())
    } else {
        Err("a racily clean entry whose content changed")
    }
}

/// The stat data and permission bits of the regular file at `path`, when its bytes are still
/// the blob `written`.
fn written_stat(path: &Path, written: &[u8; OID_LEN]) -> Result<(Stat, u32), Declined> {
    let link = path
        .symlink_metadata()
        .map_err(|_| "a patched file is gone")?;
    if !link.file_type().is_file() {
        return Err("a patched path that is not a regular file");
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|_| "a patched file cannot be read")?;
    let before = f.metadata().map_err(|_| "a patched file cannot be read")?;
    let mut content = Vec::with_capacity(before.len() as usize);
    f.read_to_end(&mut content)
        .map_err(|_| "a patched file cannot be read")?;
    let after = f.metadata().map_err(|_| "a patched file cannot be read")?;
    let stat = Stat::of(&after);
    if Stat::of(&before) != stat
        || (link.dev(), link.ino()) != (after.dev(), after.ino())
        || crate::repo::blob_id(&content).as_bytes() != written
    {
        return Err("a patched file changed since it was written");
    }
    Ok((stat, after.mode()))
}

/// The new index without its trailing hash, as the pieces to write in order: the old bytes,
/// with the cache tree (when there is one) replaced by its invalidated form. Not copied into one
/// buffer: at 50,000 files that was 4 MB copied, and as many fresh pages faulted in.
struct Body {
    bytes: Vec<u8>,
    /// Where the old `TREE` extension was, and the new one (header included).
    tree: Option<(std::ops::Range<usize>, Vec<u8>)>,
    /// Where the trailing hash starts.
    end: usize,
}

impl Body {
    fn pieces(&self) -> Vec<&[u8]> {
        match &self.tree {
            Some((old, new)) => vec![
                &self.bytes[..old.start],
                new,
                &self.bytes[old.end..self.end],
            ],
            None => vec![&self.bytes[..self.end]],
        }
    }
}

/// The new index: the entries as patched (in `bytes`), the cache tree invalidated above the
/// changed paths, every other extension as it was.
fn serialise(bytes: Vec<u8>, layout: &codec::Layout, changed: &[&str]) -> Result<Body, Declined> {
    let end = bytes.len() - OID_LEN;
    let tree = match layout.exts.iter().find(|x| &x.sig == b"TREE") {
        Some(tree) => {
            let mut root = codec::parse_tree(tree.data(&bytes)).ok_or("a cache tree not read")?;
            for p in changed {
                if !codec::invalidate(&mut root, p.as_bytes()) {
                    return Err("a cache tree with a folder named as a patched file");
                }
            }
            let mut data = Vec::new();
            codec::write_tree(&root, &mut data);
            let len = u32::try_from(data.len()).map_err(|_| "a cache tree too large")?;
            let mut ext = Vec::with_capacity(8 + data.len());
            ext.extend_from_slice(b"TREE");
            ext.extend_from_slice(&len.to_be_bytes());
            ext.extend_from_slice(&data);
            Some((tree.start..tree.end(), ext))
        }
        None => None,
    };
    Ok(Body { bytes, tree, end })
}

/// Writes the new index `body` and its trailing hash (zeros with `index.skipHash`), syncs and
/// renames it into place (then syncs the folder), as git does with `core.fsync=added`, and
/// removes the temp file's name.
fn publish(
    git_dir: &Path,
    index: &Path,
    body: Body,
    skip_hash: bool,
    lock: &Lock,
) -> Result<(), Declined> {
    let sync = crate::fs::fsync_enabled();
    let mut f = &lock.file;
    let pieces = body.pieces();
    for piece in &pieces {
        f.write_all(piece)
            .map_err(|_| "the new index cannot be written")?;
    }
    // The body's write-out starts before its hash is computed: the disk writes the 4 MB of a
    // 50,000-file index while the CPU hashes them, and the sync below finds most of it done.
    crate::fs::start_writeback(&lock.file);
    let hash: [u8; OID_LEN] = if skip_hash {
        [0u8; OID_LEN]
    } else {
        let mut hasher = Sha1::new();
        for piece in &pieces {
            hasher.update(piece);
        }
        hasher.finalize().into()
    };
    f.write_all(&hash)
        .map_err(|_| "the new index cannot be written")?;
    if sync {
        f.sync_all().map_err(|_| "the new index cannot be synced")?;
    }
    crate::timing::mark("index: written and synced");
    crate::fault::point("index-written");
    std::fs::rename(&lock.lock, index).map_err(|_| "the new index cannot be renamed")?;
    let _ = std::fs::remove_file(&lock.tmp);
    if sync {
        // The rename is made durable while the run records its history; `settle` waits for it
        // before the journal, which would redo this step after a crash, is removed.
        settle();
        let dir = git_dir.to_path_buf();
        let handle = std::thread::spawn(move || {
            let _ = crate::fs::sync_dir_path(&dir);
        });
        match FOLDER_SYNC.lock() {
            Ok(mut pending) => *pending = Some(handle),
            Err(_) => {
                let _ = handle.join();
            }
        }
    }
    Ok(())
}

/// The folder sync a direct write left running (at most one).
static FOLDER_SYNC: std::sync::Mutex<Option<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(None);

/// Waits until the index written directly is durable under its name: called before a
/// transaction's journal is removed.
pub fn settle() {
    let pending = FOLDER_SYNC.lock().ok().and_then(|mut p| p.take());
    if let Some(handle) = pending {
        let _ = handle.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pid no process has: a child that has exited and been waited for.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("wait");
        pid
    }

    #[test]
    fn reclaim_removes_only_what_a_dead_run_left() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let lock = d.join("index.lock");
        // A lock that is not ours stays, and so does a live process's temp file.
        std::fs::write(&lock, "git's").expect("lock");
        let live = d.join(".index.patchgate-1-0.tmp");
        std::fs::write(&live, "").expect("temp");
        let dead = d.join(format!(".index.patchgate-{}-3.tmp", dead_pid()));
        std::fs::write(&dead, "").expect("temp");
        reclaim(d);
        assert!(
            lock.exists() && live.exists(),
            "git's lock and a live run's temp kept"
        );
        assert!(!dead.exists(), "a dead run's temp removed");
        // A dead run's temp and the lock that is the same file: both removed.
        std::fs::remove_file(&lock).expect("rm");
        std::fs::write(&dead, "half an index").expect("temp");
        std::fs::hard_link(&dead, &lock).expect("link");
        reclaim(d);
        assert!(!lock.exists() && !dead.exists());
        assert!(live.exists());
    }
}
