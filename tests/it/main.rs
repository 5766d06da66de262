//! patchgate's integration tests: one binary, organised by behaviour. Every test runs the real
//! `patchgate` binary against a real temporary git repository.

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
mod limits;
mod mcp;
mod panics;
mod precommit;
mod prepare;
mod sarif;
#[path = "../scenarios/sarif_schema.rs"]
mod sarif_schema;
mod schema;
mod txn;
mod undo;
mod verify;
