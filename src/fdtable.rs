//! The size of the process's table of file descriptors, set once at start-up before any thread
//! exists.
//!
//! Linux starts a process with the table its parent handed down (64 slots when the parent had only
//! low descriptors open) and doubles it when a descriptor past its end is opened. While more than
//! one thread shares the table, every such growth waits for an RCU grace period so that no thread
//! still reads the old one (`expand_fdtable` calls `synchronize_rcu`): 10 to 15 ms each on the
//! development machine. A batch keeps its temp files open from their write to their sync
//! (`txn::writeback`, within these slots) while the discovery, staging and pool threads exist:
//! started by `sh -c` from Python (a table of 64), the 1,000-edit batch over 200 files grew the
//! table twice and took 51 ms instead of 21.5 (BENCHMARKS.md, aa). Grown here, while the
//! process has one thread, the table costs one allocation of a few kilobytes and nothing waits;
//! it is never shrunk, and children get a table sized by the descriptors open when they start,
//! not by this.

/// Slots reserved at start-up: the usual soft limit. The write-back keeps at most 960 of them
/// open for its folders and temp files (`txn::writeback::KEEP_OPEN`), leaving room for the
/// repository's own files.
#[cfg(target_os = "linux")]
const SLOTS: libc::rlim_t = 1024;

/// Grows the descriptor table to [`SLOTS`] (or the soft limit, if lower); call first thing in
/// `main`, before any thread starts. Does nothing it cannot do: a failure only leaves the table
/// to grow on demand, as before.
pub fn reserve() {
    #[cfg(target_os = "linux")]
    // SAFETY: getrlimit/fcntl/open/close on our own process's descriptors; the only descriptor
    // closed is the one made here.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return;
        }
        let Ok(top) = libc::c_int::try_from(SLOTS.min(lim.rlim_cur).saturating_sub(1)) else {
            return;
        };
        if top < 64 {
            return;
        }
        // A copy of any open descriptor at `top` or above grows the table to hold it; standard
        // input, output or error may all be closed by the parent, the root folder is not.
        for fd in 0..=2 {
            let copy = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, top);
            if copy >= 0 {
                libc::close(copy);
                return;
            }
        }
        let root = libc::open(c"/".as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if root >= 0 {
            let copy = libc::fcntl(root, libc::F_DUPFD_CLOEXEC, top);
            if copy >= 0 {
                libc::close(copy);
            }
            libc::close(root);
        }
    }
}
