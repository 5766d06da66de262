//! Fuzz target `input_codex`: the body and its invariants are `patchgate::fuzz::Target::InputCodex`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| patchgate::fuzz::Target::InputCodex.run(data));
