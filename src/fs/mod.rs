//! Every file operation on the working tree, relative to the repository root and race-free.
//!
//! The root is opened once ([`Root::open`]); every path after that is a `/`-separated relative
//! path resolved from the root's descriptor without following any symlink (see [`resolve`]):
//! the parent directory is opened that way, and the operation acts on one name in it through
//! the `*at` system calls. So a folder that is swapped for a symlink to elsewhere at any moment
//! makes the operation fail (`ELOOP`, [`is_symlink_error`]) instead of writing through it, and a
//! path with `..`, an empty component or a leading `/` is refused before any system call.
//!
//! What a symlink the patch legitimately goes through means is decided once, at planning
//! (`repo::Resolved::real`: the path with every in-repository symlink followed). The
//! operations here then act on that real path, and the walk checks again, at the moment of the
//! write, that no symlink has appeared on it since.
//!
//! Writes are atomic and durable: a temp file in the target's own directory (created through the
//! directory's descriptor, `O_EXCL | O_NOFOLLOW`), fsync, `renameat`, fsync of the directory
//! (`PATCHGATE_FSYNC=0` skips the syncs, to measure what durability costs).
//!
//! Invariants: no function here takes an absolute path into the working tree; no function follows
//! a symlink in any position; a failed write leaves no temp file behind when the process lives
//! (a killed one leaves `.<name>.patchgate-<pid>-<n>.tmp`, with at most the first 200 bytes of
//! the name so that it fits in 255, which `patchgate recover` removes).

mod dir;
pub mod layout;
pub mod resolve;
pub mod stamp;
#[cfg(test)]
mod tests;
pub mod together;

use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::AtFlags;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub use dir::{Dir, Kind, Meta};
pub use resolve::is_symlink_error;

/// Whether writes are fsynced (the default; `PATCHGATE_FSYNC=0` turns it off).
pub fn fsync_enabled() -> bool {
    std::env::var_os("PATCHGATE_FSYNC").is_none_or(|v| v != "0")
}

/// Starts writing a file's dirty pages to the disk without waiting (Linux `sync_file_range`; a
/// no-op elsewhere or with `PATCHGATE_FSYNC=0`). Called on each file of a batch as soon as it is
/// written, it lets the disk work on all of them while the others are prepared, so the fsync of
/// each that follows mostly finds its data already written: the fsyncs are what make the batch
/// durable, this only makes them wait less.
pub fn start_writeback(f: &impl std::os::fd::AsRawFd) {
    #[cfg(target_os = "linux")]
    if fsync_enabled() {
        // SAFETY: sync_file_range on a descriptor we own; offset 0 and length 0 mean the whole
        // file, SYNC_FILE_RANGE_WRITE only queues the write-out. A failure (a file system that
        // does not support it) changes nothing: the fsync that follows does the work.
        unsafe {
            libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = f;
}

/// A sync that returns sooner than this did not wait for a disk.
const QUICK_SYNC: std::time::Duration = std::time::Duration::from_micros(100);

/// Runs `sync` on every item, on up to [`SYNC_LANES`] threads ([`sync_spread`]) unless the first
/// one, synced alone ([`sync_first`]), shows that syncs do not wait here.
pub fn sync_each<T: Sync>(
    items: &[T],
    sync: impl Fn(&T) -> std::io::Result<()> + Sync,
) -> std::io::Result<()> {
    sync_first(items, &sync, |rest| sync_spread(rest, &sync))
}

/// How many syncs [`sync_spread`] keeps in flight.
const SYNC_LANES: usize = 8;

/// Runs `sync` on every item, on up to [`SYNC_LANES`] threads at once: a sync is a wait for the
/// disk, not work for the CPU, so more of them in flight than there are cores lets the disk (and
/// the file system's flushes) take them together. On ext4 with a journal each fsync ends with a
/// flush of the disk's cache even when its journal commit is done already, and flushes asked for
/// together are sent as one: 200 temp files synced two at a time (one per core) took 10 ms on a
/// journaled ext4, eight at a time 4.5 (BENCHMARKS.md (z)). Every item is synced even when one
/// fails; the first error is returned.
pub fn sync_spread<T: Sync, E: Send>(
    items: &[T],
    sync: impl Fn(&T) -> Result<(), E> + Sync,
) -> Result<(), E> {
    // Every item of a chunk is synced even when one fails; the chunk's first error is kept.
    let all = |chunk: &[T]| -> Result<(), E> {
        let results: Vec<Result<(), E>> = chunk.iter().map(&sync).collect();
        results.into_iter().find(Result::is_err).unwrap_or(Ok(()))
    };
    if items.len() <= 1 {
        return all(items);
    }
    let per = items.len().div_ceil(SYNC_LANES);
    std::thread::scope(|s| {
        // A chunk whose thread cannot be started (a limit on threads) is synced here.
        let lanes: Vec<Result<_, &[T]>> = items
            .chunks(per)
            .map(|chunk| {
                let all = &all;
                std::thread::Builder::new()
                    .spawn_scoped(s, move || all(chunk))
                    .map_err(|_| chunk)
            })
            .collect();
        let results: Vec<Result<(), E>> = lanes
            .into_iter()
            .map(|lane| match lane {
                Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                Err(chunk) => all(chunk),
            })
            .collect();
        results.into_iter().find(Result::is_err).unwrap_or(Ok(()))
    })
}

/// Syncs the first item on the calling thread: when it did not wait ([`QUICK_SYNC`]: a file
/// system in memory, or nothing left to write), the others are synced there too, since handing
/// them to other threads would cost more than the syncs; otherwise `spread` syncs the rest.
/// Every item is synced even when one fails on the calling thread; the first error is returned.
pub fn sync_first<T, E>(
    items: &[T],
    sync: impl Fn(&T) -> Result<(), E>,
    spread: impl FnOnce(&[T]) -> Result<(), E>,
) -> Result<(), E> {
    let Some((first, rest)) = items.split_first() else {
        return Ok(());
    };
    let started = std::time::Instant::now();
    let first = sync(first);
    if rest.is_empty() || started.elapsed() < QUICK_SYNC {
        let results: Vec<Result<(), E>> = rest.iter().map(&sync).collect();
        return std::iter::once(first)
            .chain(results)
            .find(Result::is_err)
            .unwrap_or(Ok(()));
    }
    let others = spread(rest);
    first.and(others)
}

static TEMP_SEQ: AtomicUsize = AtomicUsize::new(0);

/// A temp name next to `name`: hidden, unique in this process, and recognisable by `recover`.
pub fn temp_name(name: &str) -> String {
    // The process id, asked once (a system call each time otherwise); this process never forks
    // without an exec, so it cannot change under it.
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let pid = *PID.get_or_init(std::process::id);
    let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
    format!(".{}.patchgate-{pid}-{seq}.tmp", temp_stem(name))
}

/// The part of `name` a temp name carries: all of it up to [`TEMP_STEM_MAX`] bytes, else its
/// start (cut at a character boundary). A file name may have 255 bytes; its temp name adds up to
/// 47 (the dot, `.patchgate-`, a process id, a sequence number, `.tmp`), and must still fit.
fn temp_stem(name: &str) -> &str {
    if name.len() <= TEMP_STEM_MAX {
        return name;
    }
    let mut end = TEMP_STEM_MAX;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// The longest stem a temp name carries (255 bytes, less the 47 a temp name adds at most).
const TEMP_STEM_MAX: usize = 200;

/// statfs(2) magic numbers of the file systems that keep files in memory.
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58F6;

/// The statfs(2) magic number of the file system of `fd`; `None` where it cannot be asked.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn fs_type(fd: &impl AsFd) -> Option<i64> {
    // `f_type`'s integer type differs between targets (i64 here, u32 or i32 elsewhere).
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::fstatfs(fd).ok().map(|s| s.f_type as i64)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn fs_type(_fd: &impl AsFd) -> Option<i64> {
    None
}

/// Whether `entry` is a temp file that patchgate made for `name` (any process's).
pub fn is_temp_for(entry: &str, name: &str) -> bool {
    let Some(rest) = entry
        .strip_prefix('.')
        .and_then(|e| e.strip_prefix(temp_stem(name)))
        .and_then(|e| e.strip_prefix(".patchgate-"))
        .and_then(|e| e.strip_suffix(".tmp"))
    else {
        return false;
    };
    let mut parts = rest.split('-');
    let digits =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
}

/// The repository root, open.
pub struct Root {
    fd: OwnedFd,
    path: PathBuf,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root").field("path", &self.path).finish()
    }
}

/// Splits `rel` into its parent directory and last name (components checked).
fn split(rel: &str) -> std::io::Result<(Vec<&str>, &str)> {
    let mut parts = resolve::components(rel)?;
    let name = parts.pop().unwrap_or_default();
    Ok((parts, name))
}

impl Root {
    /// Opens the root (the path itself may go through symlinks: it is the repository, found by
    /// git's discovery and made canonical).
    pub fn open(path: &Path) -> std::io::Result<Root> {
        let fd = rustix::fs::open(
            path,
            rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        Ok(Root {
            fd,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open root's descriptor, for a lookup relative to it.
    pub fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The directory `rel_dir` (`""`: the root), opened without following symlinks.
    pub fn dir(&self, rel_dir: &str) -> std::io::Result<Dir> {
        let parts = if rel_dir.is_empty() {
            Vec::new()
        } else {
            resolve::components(rel_dir)?
        };
        let fd = resolve::open_dir(self.fd.as_fd(), &parts)?;
        Ok(Dir::new(fd, parts.join("/")))
    }

    /// The parent directory of `rel`, open, and the last name of `rel`.
    pub fn parent_of<'a>(&self, rel: &'a str) -> std::io::Result<(Dir, &'a str)> {
        let (parts, name) = split(rel)?;
        let fd = resolve::open_dir(self.fd.as_fd(), &parts)?;
        Ok((Dir::new(fd, parts.join("/")), name))
    }

    /// Whether `dir`'s path still leads (without symlinks) to the very directory `dir` is: a
    /// folder renamed away and replaced since it was opened does not.
    pub fn still_at(&self, dir: &Dir) -> std::io::Result<bool> {
        // A folder at the top is one `lstat` from the root: the same answers as opening it
        // without following a symlink (a symlink, a file or nothing there is the error the open
        // gives), in one system call instead of three per file of a switch.
        if !dir.rel.is_empty() && !dir.rel.contains('/') {
            let st = rustix::fs::statat(&self.fd, dir.rel.as_str(), AtFlags::SYMLINK_NOFOLLOW)?;
            let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
            if kind == rustix::fs::FileType::Symlink {
                return Err(rustix::io::Errno::LOOP.into());
            }
            if kind != rustix::fs::FileType::Directory {
                return Err(rustix::io::Errno::NOTDIR.into());
            }
            return Ok((st.st_dev, st.st_ino) == dir.identity()?);
        }
        let now = self.dir(&dir.rel)?;
        Ok(now.identity()? == dir.identity()?)
    }

    /// What is at `rel`, not following it; `None` when nothing is (or a parent is missing or is
    /// a file). A symlink on the way is an error ([`is_symlink_error`]).
    pub fn lstat(&self, rel: &str) -> std::io::Result<Option<Meta>> {
        match self.parent_of(rel) {
            Ok((d, name)) => d.lstat(name),
            Err(e) if gone(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn read(&self, rel: &str) -> std::io::Result<Vec<u8>> {
        let (d, name) = self.parent_of(rel)?;
        d.read(name)
    }

    pub fn read_link(&self, rel: &str) -> std::io::Result<PathBuf> {
        let (d, name) = self.parent_of(rel)?;
        d.read_link(name)
    }

    /// Replaces (or creates) the file `rel` atomically: temp file, fsync, rename, fsync of the
    /// directory. The parent directory must exist.
    pub fn atomic_write(&self, rel: &str, bytes: &[u8], mode: u32) -> std::io::Result<()> {
        let (d, name) = self.parent_of(rel)?;
        write_in(&d, name, bytes, mode, None, || {})
    }

    /// Like [`Root::atomic_write`], calling `between` after the temp file is complete and before
    /// it is renamed into place (a fault point for the tests).
    pub fn atomic_write_with(
        &self,
        rel: &str,
        bytes: &[u8],
        mode: u32,
        between: impl FnOnce(),
    ) -> std::io::Result<()> {
        let (d, name) = self.parent_of(rel)?;
        write_in(&d, name, bytes, mode, None, between)
    }

    /// Removes the file or symlink `rel` (the link itself).
    pub fn remove_file(&self, rel: &str) -> std::io::Result<()> {
        let (d, name) = self.parent_of(rel)?;
        d.unlink(name)
    }

    /// Removes the directory `rel` if it is empty.
    pub fn remove_dir(&self, rel: &str) -> std::io::Result<()> {
        let (d, name) = self.parent_of(rel)?;
        d.rmdir(name)
    }

    /// Creates `rel_dir` and its missing parents; returns the ones created, outermost first.
    /// A file or a symlink on the way is an error.
    pub fn create_dirs(&self, rel_dir: &str) -> std::io::Result<Vec<String>> {
        let parts = resolve::components(rel_dir)?;
        let mut created = Vec::new();
        let mut cur = self.dir("")?;
        for part in parts {
            match cur.mkdir(part) {
                Ok(()) => created.push(cur.rel_of(part)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            let fd = resolve::open_dir(cur.fd.as_fd(), &[part])?;
            cur = Dir::new(fd, cur.rel_of(part));
        }
        Ok(created)
    }

    /// Renames `from` to `to` (both relative to the root), replacing `to`.
    pub fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (fd, fname) = self.parent_of(from)?;
        let (td, tname) = self.parent_of(to)?;
        fd.rename_to(fname, &td, tname)
    }

    /// Sets the permission bits of the file `rel` (a symlink there is refused).
    pub fn chmod(&self, rel: &str, mode: u32) -> std::io::Result<()> {
        let (d, name) = self.parent_of(rel)?;
        d.chmod(name, mode)
    }

    /// Creates the symlink `rel` pointing at `target` (nothing may be at `rel`).
    pub fn symlink(&self, target: &Path, rel: &str) -> std::io::Result<()> {
        let (d, name) = self.parent_of(rel)?;
        d.symlink(target, name)
    }
}

/// Whether a resolution error means "nothing there": a missing parent, or a parent that is a file.
pub fn gone(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

/// The atomic write in an open directory: temp, (fsync), rename, (fsync of the directory).
pub fn write_in(
    d: &Dir,
    name: &str,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
    between: impl FnOnce(),
) -> std::io::Result<()> {
    let tmp = temp_name(name);
    let file = d.write_new(&tmp, bytes, mode, owner)?;
    let sync = fsync_enabled();
    let result = (|| {
        if sync {
            file.sync_all()?;
        }
        drop(file);
        between();
        d.rename(&tmp, name)?;
        if sync {
            d.sync()?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = d.unlink(&tmp);
    }
    result
}

/// Opens a directory by its path, following symlinks as any path does: for patchgate's own
/// folders under the git dir, which are not part of the working tree.
pub fn open_dir_path(path: &Path) -> std::io::Result<Dir> {
    let fd = rustix::fs::open(
        path,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    Ok(Dir::new(fd, String::new()))
}

/// Writes `path` (patchgate's own state, under the git dir) atomically and durably.
pub fn atomic_write_path(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let (parent, name) = folder_and_name(path)?;
    let d = open_dir_path(parent)?;
    write_in(&d, name, bytes, mode, None, || {})
}

/// A path of patchgate's own state as its folder (`.` for a bare name) and its file name.
fn folder_and_name(path: &Path) -> std::io::Result<(&Path, &str)> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
    Ok((parent, name))
}

/// Flushes a directory's entries, by path.
pub fn sync_dir_path(path: &Path) -> std::io::Result<()> {
    open_dir_path(path)?.sync()
}

/// The mode the planner gives a file it creates: not a real mode (it is outside the permission
/// bits), so write-back knows to use the umask's default rather than copy it.
pub const NEW_FILE_MODE: u32 = u32::MAX;

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

/// Keeps the `max * 3 / 4` most recently written files of the cache folder `d` once it holds
/// more than `max` (a cache: what goes is only computed again; temp files of killed runs go
/// with the oldest).
pub fn prune_cache(d: &Path, max: usize) {
    let Ok(entries) = std::fs::read_dir(d) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let md = e.metadata().ok()?;
            md.is_file().then_some((md.modified().ok()?, e.path()))
        })
        .collect();
    if files.len() <= max {
        return;
    }
    files.sort();
    let drop = files.len() - max * 3 / 4;
    for (_, p) in files.into_iter().take(drop) {
        let _ = std::fs::remove_file(p);
    }
}

/// Writes a whole file of patchgate's own state (under the git dir) atomically: temp file,
/// (fsync), rename, (fsync of the directory).
pub fn atomic_write(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let mode = mode.unwrap_or_else(default_file_mode);
    atomic_write_path(path, bytes, mode)
}

/// [`atomic_write`] in two steps, for a file that must appear only after something else is done
/// but whose writing need not wait for it: the content goes to a temp file beside `path` and is
/// synced now ([`prepare_write`]); the rename and the folder's sync come later
/// ([`Prepared::publish`]). Until then the file is a temp file of patchgate's (removed by
/// [`Prepared::discard`], by dropping it unpublished, or after a crash by `recover`'s sweep).
pub struct Prepared {
    dir: Dir,
    tmp: String,
    name: String,
    published: bool,
}

/// The first step of [`Prepared`]: `bytes` in a synced temp file beside `path` (whose folder must
/// exist), with `mode` (the umask's default when `None`).
pub fn prepare_write(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<Prepared> {
    let (parent, name) = folder_and_name(path)?;
    let dir = open_dir_path(parent)?;
    let tmp = temp_name(name);
    let file = dir.write_new(&tmp, bytes, mode.unwrap_or_else(default_file_mode), None)?;
    let prepared = Prepared {
        dir,
        tmp,
        name: name.to_string(),
        published: false,
    };
    if fsync_enabled() {
        // On an error the temp file goes with `prepared`.
        file.sync_all()?;
    }
    Ok(prepared)
}

impl Prepared {
    /// The second step: the temp file renamed into place, then its folder synced.
    pub fn publish(mut self) -> std::io::Result<()> {
        self.dir.rename(&self.tmp, &self.name)?;
        self.published = true;
        if fsync_enabled() {
            self.dir.sync()?;
        }
        Ok(())
    }

    /// Removes the temp file: the file is not to appear.
    pub fn discard(self) {}
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if !self.published {
            let _ = self.dir.unlink(&self.tmp);
        }
    }
}
