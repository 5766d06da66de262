//! A file's stamp: what `lstat` says about its identity and its last change, enough to tell
//! that a file read earlier in the run (by the plan) has not been written since, without reading
//! it again.
//!
//! The rule is git's for a "racily clean" index entry, on the change time: a write to a file
//! sets its ctime to the current time, and nothing in user space can set a ctime back (`utimes`
//! sets mtime, and moves ctime to now). So if a file's ctime is strictly older than a moment
//! `t0` taken on the coarse real-time clock (the one file times come from), any write after
//! `t0` gives it a ctime of at least `t0`, a different stamp. A file changed too recently (its
//! ctime not older than `t0`) proves nothing and is read again.
//!
//! The rule needs time stamps finer than the moments compared and taken from this machine's
//! clock, so it is only trusted on local file systems that keep nanoseconds
//! ([`fine_local_times`]); and a stamp whose nanoseconds are 0 is taken for a file system that
//! rounds to the second. What it does not see: a write through a shared memory map into a page
//! already dirty (the kernel updates the times when a page first becomes dirty, not at every
//! store) and a clock set backwards; neither is what an editor, a formatter, `git` or an agent
//! does to a file between the plan's read and the write-back (milliseconds, or the length of
//! the checks in a gated run).

/// `lstat`'s identity and times of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    pub(super) fn of(st: &rustix::fs::Stat) -> Stamp {
        Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            mtime: (st.st_mtime, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime, st.st_ctime_nsec as i64),
        }
    }

    /// Whether this stamp, taken at or after `t0` ([`now`]), proves the entry unwritten since
    /// whenever it is seen again unchanged: its last change is strictly before `t0`, and its
    /// time carries nanoseconds.
    pub fn settled_before(&self, t0: Moment) -> bool {
        self.ctime.1 != 0 && self.ctime < t0.0
    }
}

/// A moment on the clock file times are taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment((i64, i64));

/// Now, on the coarse real-time clock: the one the kernel stamps file changes with (a change
/// made after this call has a ctime of at least this).
pub fn now() -> Moment {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own. It cannot fail for this clock on Linux;
    // if it did, the zero moment left here makes every stamp unsettled (files are read again).
    // Elsewhere the clock the kernel stamps files with is not known: the zero moment too.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    unsafe {
        libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut t);
    }
    Moment((t.tv_sec, t.tv_nsec))
}

/// Whether the file system whose statfs(2) magic number is `f_type` is a local one whose times
/// are in nanoseconds from this machine's clock (network and FUSE file systems take theirs from
/// elsewhere, or cache them).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn fine_local_times(f_type: Option<i64>) -> bool {
    // statfs(2) magic numbers.
    const LOCAL: [i64; 7] = [
        0xEF53,      // ext2/3/4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        super::TMPFS_MAGIC,
        0xF2F5_2010, // f2fs
        0x2FC1_2FC1, // zfs
        0x794C_7630, // overlayfs (its upper layer is one of the above)
    ];
    f_type.is_some_and(|t| LOCAL.contains(&t))
}

/// Elsewhere no file system's magic number is known here: stamps prove nothing, files are read.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn fine_local_times(_f_type: Option<i64>) -> bool {
    false
}
