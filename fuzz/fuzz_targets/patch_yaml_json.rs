//! Fuzz target `patch_yaml_json`: the body and its invariants are `patchgate::fuzz::Target::PatchYamlJson`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| patchgate::fuzz::Target::PatchYamlJson.run(data));
