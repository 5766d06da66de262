//! What a project is and what it uses, shared by the checks and verify.
//!
//! - [`detect`]: languages by extension, and a file's project (the nearest marker above it);
//! - [`evidence`]: whether a project uses a tool, judged from its own files, with the evidence;
//! - [`config`]: `.patchgate.toml`, parsed once per run;
//! - [`tools`]: finding a program, project-local first, by one rule for every caller;
//! - [`mirror`]: the copy of a package that whole-package tools (clippy, go vet, verify) run in;
//! - [`prepare`]: a package's dependencies and toolchain made ready for those tools (fresh checkouts).
//!
//! Nothing here runs a checker or knows one by name: the checkers declare what they need
//! (`checks::checker`), and this module answers.

pub mod config;
pub mod detect;
pub mod evidence;
pub mod mirror;
pub mod prepare;
pub mod tools;
