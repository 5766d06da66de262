//! One `syncfs(2)` for a batch's temp files, where it makes them exactly as durable as an fsync
//! of each and costs one journal commit instead of one wait per file; after the switch, one more
//! for the renames of a batch spread over many folders, instead of an fsync of each folder.
//!
//! On a journaled ext4 every fsync ends with a flush of the disk's cache even when its journal
//! commit is done already, so a batch of 200 temp files made 200 flushes (eight in flight at a
//! time, [`super::sync_spread`]): 6.4–11.5 ms on this project's journaled ext4 against 2.5–4.7 ms
//! for one `syncfs` of the same files (BENCHMARKS.md (ai)). `syncfs` writes out every dirty page
//! of the file system and commits its journal: a superset of the per-file syncs.
//!
//! It is used only where that is certain and cheap ([`one_sync_for`]):
//! - Linux 5.8 or later: before it `syncfs` returned 0 even when the write-out failed, and a lost
//!   write would go unnoticed. Since 5.8 it reports an error of any write-out of the file system
//!   since the descriptor it is called on was opened: the folder's, opened before the temp files
//!   were written, so a failure of theirs is seen (one of another file on that file system fails
//!   the batch too, which changes nothing and is the safe side).
//! - ext4 (its magic number also covers ext2 and ext3, where `syncfs` is as complete). Not on a
//!   network or FUSE file system, where `syncfs` may not reach the server (FUSE before 5.15 made it
//!   a no-op), and not on btrfs, where it commits a whole transaction while an fsync writes a
//!   small log.
//! - All the files on one file system (one device id), and enough of them for the difference to
//!   matter ([`MIN_FILES`]).
//! - Little else to write: `syncfs` waits for every dirty page of the file system, not only the
//!   batch's, so a build writing hundreds of megabytes beside would make the batch wait for it.
//!   The machine's dirty and under-write-out memory (`/proc/meminfo`, all file systems: the safe
//!   side), read before the batch writes anything, may be [`OTHERS_DIRTY`] at most.

use std::sync::Arc;

use super::Dir;

/// Below this many files the per-file syncs, all in flight at once, cost about one commit too.
pub const MIN_FILES: usize = 16;

/// How much dirty memory of others a `syncfs` may have to write out (bytes): about what the disk
/// of a small VM writes in a few milliseconds.
const OTHERS_DIRTY: u64 = 8 << 20;

/// ext2/3/4's statfs(2) magic number.
const EXT4_MAGIC: i64 = 0xEF53;

/// The folder whose file system one `syncfs` makes `count` files in `dirs` durable with; `None`
/// where each file is to be synced on its own (see the module doc for when). Asked before the
/// files are written, so the dirty memory it finds is others'.
pub fn one_sync_for<'d>(
    dirs: impl IntoIterator<Item = &'d Arc<Dir>>,
    count: usize,
) -> Option<Arc<Dir>> {
    let mut dirs = dirs.into_iter();
    let first = dirs.next()?;
    if !worth_it(count, first.fs_type()) {
        return None;
    }
    let device = first.identity().ok()?.0;
    for d in dirs {
        if d.identity().ok()?.0 != device {
            return None;
        }
    }
    quiet().then(|| Arc::clone(first))
}

/// [`one_sync_for`] for `count` files written beneath the folder `path` (git's object folder
/// and its fan-out folders): the folder opened, to call `syncfs` on, where it is worth it.
pub fn one_sync_at(path: &std::path::Path, count: usize) -> Option<std::fs::File> {
    if count < MIN_FILES {
        return None;
    }
    let folder = std::fs::File::open(path).ok()?;
    (worth_it(count, super::fs_type(&folder)) && quiet()).then_some(folder)
}

/// `syncfs(2)` of the file system holding `fd` (an error where there is none).
pub fn syncfs(fd: &impl std::os::fd::AsFd) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    return rustix::fs::syncfs(fd).map_err(Into::into);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = fd;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// Enough files, on ext4, on a kernel whose `syncfs` reports errors.
fn worth_it(count: usize, fs_type: Option<i64>) -> bool {
    count >= MIN_FILES && fs_type == Some(EXT4_MAGIC) && kernel_reports_errors()
}

/// Little is waiting to be written on the machine ([`OTHERS_DIRTY`]).
fn quiet() -> bool {
    dirty_bytes().is_some_and(|d| d <= OTHERS_DIRTY)
}

/// Whether this kernel's `syncfs` reports write-out errors (Linux 5.8 and later).
fn kernel_reports_errors() -> bool {
    static KNOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KNOWN.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: uname fills one struct we own; its `release` is NUL-terminated.
            let mut u: libc::utsname = unsafe { std::mem::zeroed() };
            if unsafe { libc::uname(&mut u) } != 0 {
                return false;
            }
            let release = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) };
            release_at_least(&release.to_string_lossy(), (5, 8))
        }
        #[cfg(not(target_os = "linux"))]
        false
    })
}

/// Whether a kernel release string (`6.18.44`, `5.10.0-30-amd64`) is `at_least` (major, minor).
fn release_at_least(release: &str, at_least: (u32, u32)) -> bool {
    let mut parts = release.split(['.', '-']);
    let mut num = || parts.next().and_then(|p| p.parse::<u32>().ok());
    match (num(), num()) {
        (Some(major), Some(minor)) => (major, minor) >= at_least,
        _ => false,
    }
}

/// The machine's memory waiting to be written or being written to a disk (`Dirty` and
/// `Writeback` of `/proc/meminfo`), in bytes; `None` where it cannot be read.
fn dirty_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_dirty(&info)
}

fn meminfo_dirty(info: &str) -> Option<u64> {
    let field = |name: &str| -> Option<u64> {
        let line = info.lines().find(|l| l.starts_with(name))?;
        let kib = line[name.len()..].trim().strip_suffix("kB")?.trim();
        kib.parse::<u64>().ok().map(|k| k * 1024)
    };
    Some(field("Dirty:")? + field("Writeback:")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_releases_from_5_8_report_syncfs_errors() {
        assert!(release_at_least("6.18.44", (5, 8)));
        assert!(release_at_least("5.8.0", (5, 8)));
        assert!(release_at_least("5.10.0-30-amd64", (5, 8)));
        assert!(!release_at_least("5.7.19", (5, 8)));
        assert!(!release_at_least("4.19.0-27-amd64", (5, 8)));
        assert!(!release_at_least("weird", (5, 8)));
    }

    /// Recorded from this machine's `/proc/meminfo` (abridged).
    #[test]
    fn dirty_memory_is_dirty_plus_writeback() {
        let info = "MemTotal:       24589312 kB\nMemFree:         9921600 kB\nDirty:              2360 kB\nWriteback:            12 kB\nWritebackTmp:          0 kB\n";
        assert_eq!(meminfo_dirty(info), Some((2360 + 12) * 1024));
        assert_eq!(meminfo_dirty("MemTotal: 1 kB\n"), None);
    }
}
