//! Fuzz target `input_diff`: the body and its invariants are `patchgate::fuzz::Target::InputDiff`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| patchgate::fuzz::Target::InputDiff.run(data));
