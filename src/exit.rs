//! Large structures left to the kernel when the process is about to exit.
//!
//! A command run from the command line ends with the process: its memory goes back to the
//! system at once when the process exits. Freeing a large batch's plan, patch, repository handle
//! and report one allocation at a time before that (tens of thousands of them: every file's old
//! and new bytes, every edit's strings, the maps the planner kept) was 0.7-0.9 ms of a 1,000-edit
//! batch's 18 ms, all of it on the path to the exit. [`dispose`] drops a value, or, once
//! [`exiting`] was called, leaves it allocated.
//!
//! Only the command line calls [`exiting`], and only for a command that ends the process (not
//! the MCP server, which lives on and must free what it is done with). Only what the exit itself
//! releases is left to it: memory, and at the end of a command a repository handle's descriptors
//! and mappings, once nothing later needs them. Nothing whose drop does more (a lock's release, a
//! temp file's or folder's removal, a child's wait, a file's flush) is passed to [`dispose`], nor
//! descriptors the rest of the run needs room for (the planner's open folders are closed first).

thread_local! {
    /// Set on the thread that runs a command ending the process. Per thread: the values disposed
    /// of are the command's own, on its thread; a test, or a server thread, is never affected.
    static EXITING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Says that the process exits once the command running on this thread is done: from here on,
/// [`dispose`] on this thread leaves what it is given to the exit.
pub fn exiting() {
    EXITING.with(|e| e.set(true));
}

/// Drops `value`, or leaves it allocated when this thread's command ends the process
/// ([`exiting`]).
pub fn dispose<T>(value: T) {
    if EXITING.with(std::cell::Cell::get) {
        std::mem::forget(value);
    } else {
        drop(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Before [`exiting`], a disposed value is dropped (its last reference goes); after it, on
    /// that thread only, it is left allocated.
    #[test]
    fn a_disposed_value_is_dropped_unless_the_command_ends_the_process() {
        let shared = Arc::new(vec![1u8; 16]);
        dispose(Arc::clone(&shared));
        assert_eq!(Arc::strong_count(&shared), 1);
        std::thread::scope(|s| {
            s.spawn(|| {
                exiting();
                dispose(Arc::clone(&shared));
            });
        });
        assert_eq!(Arc::strong_count(&shared), 2, "left to the exit");
        dispose(Arc::clone(&shared));
        assert_eq!(Arc::strong_count(&shared), 2, "another thread still drops");
    }
}
