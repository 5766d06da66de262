//! What a project is made of, judged from its own files: which tools it uses and where their
//! configuration lives ([`evidence`]).
//!
//! Nothing here runs a tool; everything is read from files under the repository root, and a file
//! that cannot be read or parsed is reported as such instead of failing the caller.

pub mod evidence;
