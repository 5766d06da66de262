//! patchgate's integration tests: one binary, organised by behaviour. Every test runs the real
//! `patchgate` binary against a real temporary git repository.

mod catches;
mod checks;
mod cli;
mod concurrency;
mod crash;
mod fixtures;
mod gate_real;
mod golangci;
mod guards;
mod harness;
mod hostile;
mod prepare;
mod txn;
mod verify;
