//! Scenario folders, one test each: `tests/fixtures/*` (a patch, the report subset and the tree
//! it must leave) and `tests/golden/*` (the exact output in every format). A custom harness
//! (libtest-mimic) lists the folders, so `cargo test --test fixtures -- 017` runs one fixture
//! and `cargo test --test fixtures -- golden/` the golden files.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test that cannot set up its repository should stop there"
)]
#![allow(unreachable_pub, reason = "a test binary has no public API")]

// Shared with the `it` target, which uses all of it; this one uses a part.
#[allow(dead_code)]
#[path = "../it/harness.rs"]
mod harness;

mod fixtures;
mod golden;
mod sarif_schema;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = fixtures::trials();
    trials.extend(golden::trials());
    libtest_mimic::run(&args, trials).exit();
}
