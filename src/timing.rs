//! Phase timings on stderr, for `PATCHGATE_TIMINGS=1`: where a run spends its time, without a
//! profiler. Off by default; when off, a mark costs one relaxed atomic load.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<Instant>> = OnceLock::new();

fn start() -> Option<Instant> {
    *START.get_or_init(|| {
        std::env::var_os("PATCHGATE_TIMINGS")
            .filter(|v| !v.is_empty() && v != "0")
            .map(|_| Instant::now())
    })
}

/// Starts the clock (call first thing in `main`); a no-op unless timings are on.
pub fn init() {
    let _ = start();
}

/// Whether timings are on: lets a caller skip building a label nobody will print.
pub fn enabled() -> bool {
    start().is_some()
}

/// Prints `label` with the time since `init` when timings are on.
pub fn mark(label: &str) {
    if let Some(t) = start() {
        eprintln!(
            "patchgate timing: {:>8.2} ms  {label}",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
