//! Fuzz target `input_aider`: the body and its invariants are `patchgate::fuzz::Target::InputAider`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| patchgate::fuzz::Target::InputAider.run(data));
