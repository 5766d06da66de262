//! Fuzz target `matcher`: the body and its invariants are `patchgate::fuzz::Target::Matcher`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| patchgate::fuzz::Target::Matcher.run(data));
