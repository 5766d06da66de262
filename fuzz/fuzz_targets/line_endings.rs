//! Fuzz target `line_endings`: the body and its invariants are `patchgate::fuzz::Target::LineEndings`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| patchgate::fuzz::Target::LineEndings.run(data));
