//! Writes the fuzz targets' seed corpora, made from the test fixtures, into
//! `DIR/<target>/<sha256 prefix>` (default `fuzz/seeds`): `cargo run --example fuzz_seeds [DIR]`.
//! `scripts/fuzz` runs it before fuzzing; what each target's seeds are is
//! `patchgate::fuzz::seeds`.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn main() -> std::process::ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::args_os()
        .nth(1)
        .map_or_else(|| root.join("fuzz/seeds"), PathBuf::from);
    for t in patchgate::fuzz::Target::ALL {
        let dir = out.join(t.name());
        let seeds = patchgate::fuzz::seeds(t, root);
        let written = std::fs::create_dir_all(&dir).and_then(|()| {
            for s in &seeds {
                let name = format!("{:x}", Sha256::digest(s));
                std::fs::write(dir.join(&name[..16]), s)?;
            }
            Ok(())
        });
        if let Err(e) = written {
            eprintln!("fuzz_seeds: cannot write {}: {e}", dir.display());
            return std::process::ExitCode::FAILURE;
        }
        println!("{}: {} seeds", t.name(), seeds.len());
    }
    std::process::ExitCode::SUCCESS
}
