//! Named points in the write path where tests can stop the process, to prove what a crash or a
//! concurrent writer at that exact moment does.
//!
//! Inert unless these variables are set (reading an unset variable is the whole cost):
//! - `PATCHGATE_FAULT_PAUSE_AT=<point>` with `PATCHGATE_FAULT_RESUME=<file>`: at that point, print
//!   `patchgate: paused at <point>` on stderr and wait until `<file>` exists;
//! - `PATCHGATE_FAULT_ABORT_AT=<point>`: SIGKILL the process there (no destructors, no cleanup:
//!   exactly what `kill -9` leaves);
//! - `PATCHGATE_FAULT_PANIC_AT=<point>`: panic there, as a bug would (debug builds only: a
//!   release build never panics on purpose). Besides the transaction's points, each checker's job
//!   has one, `check:<checker>`.
//!
//! These are for tests only; no user-facing behaviour depends on them.

use std::time::Duration;

pub fn point(name: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("PATCHGATE_FAULT_PANIC_AT").is_some_and(|v| v == name) {
        panic!("injected panic at {name}");
    }
    if std::env::var_os("PATCHGATE_FAULT_ABORT_AT").is_some_and(|v| v == name) {
        // SAFETY: kill(2) on our own pid; the process ends here.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
    if std::env::var_os("PATCHGATE_FAULT_PAUSE_AT").is_some_and(|v| v == name) {
        let Some(resume) = std::env::var_os("PATCHGATE_FAULT_RESUME") else {
            return;
        };
        eprintln!("patchgate: paused at {name}");
        // Bounded: a test that forgets to resume must not hang CI forever.
        for _ in 0..6000 {
            if std::path::Path::new(&resume).exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
