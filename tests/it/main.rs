//! patchgate's integration tests: one binary, organised by behaviour. Every test runs the real
//! `patchgate` binary against a real temporary git repository.

mod cli;
mod concurrency;
mod crash;
mod fixtures;
mod harness;
mod hostile;
mod txn;
