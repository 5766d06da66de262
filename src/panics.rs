//! Panics, contained: a bug in one part of patchgate must not take the rest of the run with it,
//! nor leave the repository half-written.
//!
//! Two places catch them: each checker's job (`checks::run`: the checker becomes `error` with the
//! panic's message and the other checkers go on), and the command line around a whole command
//! (`cli`: an `internal` error, exit 4, after `patchgate recover`'s work on the repository, so a
//! transaction the panic interrupted ends in the old or the new state like after a crash: that
//! recovery is `txn::recover::internal_error`, above this ground-floor module).
//!
//! [`install_hook`] replaces the default hook (which prints to stderr as the panic happens) with
//! one that records where the panic happened, so the catcher can say it in its own message; with
//! `RUST_BACKTRACE` set the default hook's output (and backtrace) is printed as well.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    /// Where the last panic on this thread happened (`file:line:column`).
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the recording hook (once per process; the command line does it first thing).
pub fn install_hook() {
    let default = std::panic::take_hook();
    let verbose = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| !v.is_empty() && v != "0");
    std::panic::set_hook(Box::new(move |info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
        LOCATION.with(|c| *c.borrow_mut() = at);
        if verbose {
            default(info);
        }
    }));
}

/// The panic's message, and where it happened when this thread's hook saw it.
pub fn describe(payload: &(dyn Any + Send)) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    match LOCATION.with(|c| c.borrow_mut().take()) {
        Some(at) => format!("{message} (at {at})"),
        None => message,
    }
}

/// Runs `f`; a panic becomes `Err` with [`describe`]'s text.
///
/// Callers must only use this where whatever `f` touched is either discarded on a panic (a
/// checker's job: its results) or recovered from disk afterwards (a transaction: its journal).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| describe(p.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_with_its_message() {
        let r: Result<(), String> = catch(|| panic!("boom {}", 7));
        assert!(r.unwrap_err().starts_with("boom 7"));
        assert_eq!(catch(|| 5), Ok(5));
    }
}
