//! patchgate's integration tests: one binary, organised by behaviour. Every test runs the real
//! `patchgate` binary against a real temporary git repository.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test that cannot set up its repository should stop there"
)]
#![allow(unreachable_pub, reason = "a test binary has no public API")]

mod catches;
mod checks;
mod cibot;
mod cli;
mod concurrency;
mod crash;
mod filters;
mod formats;
mod gate_real;
mod gitapply;
mod golangci;
mod guards;
mod harden;
mod harness;
mod hostile;
mod index;
mod install;
mod limits;
mod mcp;
mod mcp_warm;
mod panics;
mod precommit;
mod prepare;
mod props;
mod requests;
mod sarif;
#[path = "../scenarios/sarif_schema.rs"]
mod sarif_schema;
mod schedule;
mod schema;
mod syscalls;
mod threads;
mod txn;
mod undo;
mod verify;
