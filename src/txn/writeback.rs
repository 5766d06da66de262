//! Writing a verified plan back to the working tree, all or nothing.
//!
//! The order of operations is what makes a batch atomic for every practical purpose:
//! 1. every path is re-read and compared with the state the plan was made from: anything changed
//!    meanwhile is a concurrent modification (exit 4) and nothing is touched;
//! 2. each new content goes to a temp file in the target's own directory (same file system, so the
//!    final rename is atomic), with the original's mode and owner;
//! 3. all temp files are fsynced, in parallel (one sync per file is the cost of durability; doing
//!    them concurrently lets the file system commit them together);
//! 4. each path is re-verified once more immediately before its rename (the window for a racing
//!    writer shrinks to one syscall), then renamed into place or removed;
//! 5. the directories that changed are fsynced, so the renames themselves are durable.
//!
//! A failure in step 4 undoes the paths already replaced, from the original bytes held in memory,
//! and removes every temp file, so the tree is as before and the error says so.
//!
//! `PATCHGATE_FSYNC=0` skips steps 3 and 5 (for measuring what durability costs; never the default).

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::fault;

use crate::error::Error;
use crate::plan::paths::Roots;
use crate::plan::{Disk, PathChange};

/// Whether writes are fsynced (the default; `PATCHGATE_FSYNC=0` turns it off).
pub fn fsync_enabled() -> bool {
    std::env::var_os("PATCHGATE_FSYNC").is_none_or(|v| v != "0")
}

/// The mode a new file gets: 0666 less the process umask, as any editor would create it.
pub fn default_file_mode() -> u32 {
    // The umask cannot be read without changing it; Linux shows it in /proc.
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022);
    0o666 & !umask
}

static TEMP_SEQ: AtomicUsize = AtomicUsize::new(0);

/// A temp path next to `path`, hidden, with a name `patchgate recover` can recognise.
pub fn temp_path_for(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(
        ".{name}.patchgate-{}-{seq}.tmp",
        std::process::id()
    ))
}

fn write_temp(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> std::io::Result<PathBuf> {
    let tmp = temp_path_for(path);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let result = (|| {
        f.write_all(bytes)?;
        if let Some((uid, gid)) = owner {
            // Only root can give a file away; for anyone else this is a no-op on their own files.
            let _ = std::os::unix::fs::fchown(&f, Some(uid), Some(gid));
        }
        f.set_permissions(std::fs::Permissions::from_mode(mode))
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(tmp)
}

/// Writes a whole file atomically: temp file, (fsync), rename, (fsync of the directory).
pub fn atomic_write(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let mode = mode.unwrap_or_else(default_file_mode);
    let tmp = write_temp(path, bytes, mode, None)?;
    let sync = fsync_enabled();
    let result = (|| {
        if sync {
            std::fs::File::open(&tmp)?.sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        if sync && let Some(dir) = path.parent() {
            sync_dir(dir)?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Makes `path` a symlink to `target` atomically: a temp link in the same directory, renamed
/// over whatever is there (then the directory synced). The link's own text is never followed.
pub fn atomic_symlink(path: &Path, target: &std::ffi::OsStr) -> std::io::Result<()> {
    let tmp = temp_path_for(path);
    std::os::unix::fs::symlink(target, &tmp)?;
    let result = std::fs::rename(&tmp, path).and_then(|()| match path.parent() {
        Some(dir) if fsync_enabled() => sync_dir(dir),
        _ => Ok(()),
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// The current state of a path, compared with what the plan expects.
fn matches_disk(path: &Path, expected: &Disk) -> bool {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => *expected == Disk::Missing,
        Err(_) => false,
        Ok(md) => match expected {
            Disk::Missing | Disk::Dir | Disk::Other => false,
            Disk::Symlink { target } => {
                md.file_type().is_symlink() && std::fs::read_link(path).is_ok_and(|t| t == *target)
            }
            Disk::File { bytes, .. } => {
                md.is_file()
                    && md.len() == bytes.len() as u64
                    && std::fs::read(path).is_ok_and(|b| b == **bytes)
            }
        },
    }
}

/// One prepared replacement.
struct Staged {
    change_index: usize,
    temp: Option<PathBuf>,
}

/// Callbacks at the two moments a journal must record: just before the first path is replaced
/// (from then on a crash means "roll forward"), and just before an undo starts.
pub struct Hooks<'a> {
    pub before_switch: &'a mut dyn FnMut() -> Result<(), Error>,
    pub before_rollback: &'a mut dyn FnMut(),
}

/// The parent directories (relative, `/`-separated) that writing `changes` would create.
pub fn missing_parents(roots: &Roots, changes: &[PathChange]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for c in changes {
        if matches!(c.after, Disk::Missing) {
            continue;
        }
        let mut p = Path::new(&c.rel).parent();
        while let Some(dir) = p.filter(|d| !d.as_os_str().is_empty()) {
            if roots.abs(&dir.to_string_lossy()).exists() {
                break;
            }
            out.insert(dir.to_string_lossy().into_owned());
            p = dir.parent();
        }
    }
    out.into_iter().collect()
}

/// Applies `changes` to the working tree under `roots`, all or nothing.
pub fn write_back(roots: &Roots, changes: &[PathChange], hooks: Hooks) -> Result<(), Error> {
    fault::point("before-verify");
    // 1. Nothing changed since planning.
    for c in changes {
        if !matches_disk(&roots.abs(&c.rel), &c.before) {
            return Err(Error::ConcurrentModification {
                path: c.rel.clone(),
            });
        }
    }

    // 2. Temp files, with any missing parent directories.
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let mut staged: Vec<Staged> = Vec::with_capacity(changes.len());
    let prepared = (|| -> Result<(), Error> {
        for (i, c) in changes.iter().enumerate() {
            let path = roots.abs(&c.rel);
            let temp = match &c.after {
                Disk::File { bytes, mode } => {
                    create_parents(&path, &roots.root, &mut created_dirs)?;
                    let owner = match &c.before {
                        Disk::File { .. } => {
                            std::fs::metadata(&path).ok().map(|m| (m.uid(), m.gid()))
                        }
                        _ => None,
                    };
                    let mode = if *mode == NEW_FILE_MODE {
                        default_file_mode()
                    } else {
                        *mode
                    };
                    Some(
                        write_temp(&path, bytes, mode, owner)
                            .map_err(|e| Error::io("write a temp file for", &path, e))?,
                    )
                }
                Disk::Symlink { target } => {
                    create_parents(&path, &roots.root, &mut created_dirs)?;
                    let tmp = temp_path_for(&path);
                    std::os::unix::fs::symlink(target, &tmp)
                        .map_err(|e| Error::io("create a symlink at", &path, e))?;
                    Some(tmp)
                }
                Disk::Missing => None,
                Disk::Dir | Disk::Other => None,
            };
            staged.push(Staged {
                change_index: i,
                temp,
            });
        }
        Ok(())
    })();
    if let Err(e) = prepared {
        cleanup(&staged, &created_dirs);
        return Err(e);
    }

    // 3. Durable content before any rename.
    let sync = fsync_enabled();
    if sync {
        let synced: Result<(), Error> = staged
            .par_iter()
            .filter_map(|s| s.temp.as_ref())
            .filter(|t| !std::fs::symlink_metadata(t).is_ok_and(|m| m.file_type().is_symlink()))
            .try_for_each(|t| {
                std::fs::File::open(t)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| Error::io("fsync", t, e))
            });
        if let Err(e) = synced {
            cleanup(&staged, &created_dirs);
            return Err(e);
        }
    }

    fault::point("before-switch");
    if let Err(e) = (hooks.before_switch)() {
        cleanup(&staged, &created_dirs);
        return Err(e);
    }
    // 4. The switch, each path verified just before it is replaced.
    let mut done: Vec<usize> = Vec::new();
    for s in &staged {
        let c = &changes[s.change_index];
        let path = roots.abs(&c.rel);
        let result = if !matches_disk(&path, &c.before) {
            Err(Error::ConcurrentModification {
                path: c.rel.clone(),
            })
        } else {
            match &s.temp {
                Some(tmp) => {
                    std::fs::rename(tmp, &path).map_err(|e| Error::io("replace", &path, e))
                }
                None => std::fs::remove_file(&path).map_err(|e| Error::io("delete", &path, e)),
            }
        };
        if let Err(e) = result {
            (hooks.before_rollback)();
            let undo = rollback(roots, changes, &done);
            cleanup(&staged, &created_dirs);
            return Err(match undo {
                Ok(left) if left.is_empty() => e,
                Ok(left) => Error::UndoneExcept {
                    cause: e.to_string(),
                    left,
                },
                Err(u) => u,
            });
        }
        done.push(s.change_index);
        fault::point("after-switch");
    }

    // 5. Durable renames.
    if sync {
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
        for c in changes {
            if let Some(d) = roots.abs(&c.rel).parent() {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in &created_dirs {
            if let Some(p) = d.parent() {
                dirs.insert(p.to_path_buf());
            }
        }
        for d in dirs {
            // The content is in place; a failed directory sync only weakens durability.
            let _ = sync_dir(&d);
        }
    }
    Ok(())
}

/// The mode the planner gives a file it creates: not a real mode (it is outside the permission
/// bits), so write-back knows to use the umask's default rather than copy it.
pub const NEW_FILE_MODE: u32 = u32::MAX;

fn create_parents(path: &Path, root: &Path, created: &mut Vec<PathBuf>) -> Result<(), Error> {
    let Some(parent) = path.parent() else {
        return Ok(());
    };
    let mut missing = Vec::new();
    let mut p = parent;
    while p.starts_with(root) && p != root && !p.exists() {
        missing.push(p.to_path_buf());
        match p.parent() {
            Some(q) => p = q,
            None => break,
        }
    }
    for d in missing.into_iter().rev() {
        std::fs::create_dir(&d).map_err(|e| Error::io("create directory", &d, e))?;
        created.push(d);
    }
    Ok(())
}

fn cleanup(staged: &[Staged], created_dirs: &[PathBuf]) {
    for s in staged {
        if let Some(t) = &s.temp {
            let _ = std::fs::remove_file(t);
        }
    }
    for d in created_dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

/// Puts back the paths already switched, from the original state held in memory.
fn rollback(roots: &Roots, changes: &[PathChange], done: &[usize]) -> Result<Vec<String>, Error> {
    let mut failed = Vec::new();
    let mut left = Vec::new();
    for &i in done.iter().rev() {
        let c = &changes[i];
        let path = roots.abs(&c.rel);
        // Only what still holds our content is ours to undo: an editor may have saved over a
        // file we already switched, and that save is the user's newest work.
        if !matches_disk(&path, &c.after) {
            left.push(c.rel.clone());
            continue;
        }
        let r = match &c.before {
            Disk::File { bytes, mode } => atomic_write(&path, bytes, Some(*mode)),
            Disk::Missing => std::fs::remove_file(&path),
            Disk::Symlink { target } => atomic_symlink(&path, target.as_os_str()),
            Disk::Dir | Disk::Other => Ok(()),
        };
        if r.is_err() {
            failed.push(c.rel.clone());
        }
    }
    if failed.is_empty() {
        Ok(left)
    } else {
        Err(Error::RollbackFailed { paths: failed })
    }
}

/// The directories that removing files left empty (a patch's created folders, usually), deepest
/// first, up to the working tree's root. Best effort: git does not track directories, so one that
/// stays behind changes nothing `git status` shows.
pub fn remove_emptied_dirs(roots: &Roots, changes: &[PathChange]) {
    let mut dirs: Vec<&Path> = changes
        .iter()
        .filter(|c| c.after == Disk::Missing)
        .flat_map(|c| Path::new(&c.rel).ancestors().skip(1))
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    dirs.dedup();
    for d in dirs {
        // Fails (and is meant to) on a directory that still holds anything.
        let _ = std::fs::remove_dir(roots.abs(&d.to_string_lossy()));
    }
}
