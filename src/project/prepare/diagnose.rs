//! Recognising what a toolchain's failure says about the machine rather than the code: a
//! toolchain too old for the project (`rust-version`, a newer edition or lockfile format, go.mod's
//! `go` line), dependencies not in the local cache while offline, the reason a download failed;
//! and the version arithmetic those need. Each recogniser is tested on real output recorded in
//! `testdata/` (how each file was made: `testdata/README.md`).
//!
//! A recogniser answers only for messages it knows; anything else is `None`, and the checker's
//! raw first lines stay the note.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::Toolchain;
use crate::project::tools::which;

/// What a toolchain's complaint means, when it is about the environment rather than the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Diagnosis {
    /// Dependencies are not in the local cache, and the tool was not allowed to download them.
    NotDownloaded,
    /// The toolchain cannot build the project (too old for it): a sentence and a help.
    Toolchain { message: String, help: String },
}

// ---------------------------------------------------------------------------------------------
// Recognising the toolchains' own messages

#[allow(
    clippy::expect_used,
    reason = "a constant pattern: its tests compile it"
)]
fn constant(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant regex")
}

static RUST_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    constant(
        r"rustc (\S+) is not supported by the following packages?:((?:\n[ \t]+\S+ requires rustc \S+[ \t]*)+)",
    )
});
static RUST_VERSION_ITEM: LazyLock<Regex> =
    LazyLock::new(|| constant(r"(\S+) requires rustc (\S+)"));
static CARGO_EDITION: LazyLock<Regex> =
    LazyLock::new(|| constant(r"this version of Cargo is older than the `([^`]+)` edition"));
static CARGO_EDITION_UNKNOWN: LazyLock<Regex> =
    LazyLock::new(|| constant(r"supported edition values are (.+), but `([^`]+)` is unknown"));
static CARGO_LOCKFILE: LazyLock<Regex> = LazyLock::new(|| {
    constant(
        r"lock file version `([^`]+)` was found, but this version of Cargo does not understand",
    )
});
static GO_TOO_OLD: LazyLock<Regex> = LazyLock::new(|| {
    constant(r"go: (\S+) requires go >= (\S+) \(running go (\S+); GOTOOLCHAIN=[^)]*\)")
});
static GO_NO_TOOLCHAIN: LazyLock<Regex> =
    LazyLock::new(|| constant(r"go: download go(\S+) for \S+: toolchain not available"));
static GO_TOOLCHAIN_DOWNLOAD: LazyLock<Regex> =
    LazyLock::new(|| constant(r"go: download go([^\s:]+): (.+)"));

pub(super) fn rustup_help(needs: &str) -> String {
    if which("rustup").is_some() {
        "run `rustup update`".to_string()
    } else {
        format!("install Rust {needs} or newer")
    }
}

/// Cargo's (and clippy's) complaint about the environment, from its stderr.
pub fn diagnose_cargo(text: &str) -> Option<Diagnosis> {
    if let Some(c) = RUST_VERSION.captures(text) {
        let has = c[1].to_string();
        let needs = RUST_VERSION_ITEM
            .captures_iter(&c[2])
            .map(|i| i[2].to_string())
            .max_by(|a, b| cmp_versions(a, b))?;
        return Some(Diagnosis::Toolchain {
            message: format!("the project needs rustc {needs}; this machine has {has}"),
            help: rustup_help(&needs),
        });
    }
    // A future edition (one this cargo has heard of, or one later than all it knows); an
    // unknown edition older than the newest known is a typo, the manifest's problem.
    let edition = CARGO_EDITION
        .captures(text)
        .map(|c| c[1].to_string())
        .or_else(|| {
            let c = CARGO_EDITION_UNKNOWN.captures(text)?;
            let newest = c[1]
                .split('`')
                .filter_map(|v| v.parse::<u32>().ok())
                .max()?;
            c[2].parse::<u32>()
                .is_ok_and(|e| e > newest)
                .then(|| c[2].to_string())
        });
    if let Some(edition) = edition {
        return Some(Diagnosis::Toolchain {
            message: format!(
                "the project uses Rust edition {edition}, which this toolchain does not know"
            ),
            help: rustup_help("with that edition"),
        });
    }
    if let Some(c) = CARGO_LOCKFILE.captures(text) {
        return Some(Diagnosis::Toolchain {
            message: format!(
                "Cargo.lock has format version {}, newer than this Cargo understands",
                &c[1]
            ),
            help: rustup_help("with a newer Cargo"),
        });
    }
    // `--offline` resolution failures end with a reminder; a download cargo refused names it.
    if text.contains("but --offline was specified")
        || text.contains("you're using offline mode (--offline)")
    {
        return Some(Diagnosis::NotDownloaded);
    }
    None
}

/// The go command's (go vet's, golangci-lint's) complaint about the environment.
pub fn diagnose_go(text: &str) -> Option<Diagnosis> {
    if let Some(c) = GO_TOO_OLD.captures(text) {
        let file = Path::new(&c[1])
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| c[1].to_string());
        let needs = &c[2];
        return Some(Diagnosis::Toolchain {
            message: format!("{file} requires go {needs}; this machine has go {}", &c[3]),
            help: format!(
                "install Go ≥ {needs}, or let the go command download it (GOTOOLCHAIN=auto)"
            ),
        });
    }
    if let Some(c) = GO_NO_TOOLCHAIN.captures(text) {
        return Some(Diagnosis::Toolchain {
            message: format!(
                "the project needs go {}, which the go command could not find to download",
                &c[1]
            ),
            help: format!("install Go ≥ {}", &c[1]),
        });
    }
    if let Some(c) = GO_TOOLCHAIN_DOWNLOAD.captures(text) {
        return Some(Diagnosis::Toolchain {
            message: format!("the project needs go {}, and downloading it failed", &c[1]),
            help: format!(
                "install Go ≥ {}, or check the network and GOPROXY ({})",
                &c[1],
                c[2].trim()
            ),
        });
    }
    if text.contains("module lookup disabled by GOPROXY=off") {
        return Some(Diagnosis::NotDownloaded);
    }
    None
}

/// The reason a download failed, in one line: cargo's innermost cause, or the go command's first
/// complaint.
pub fn download_failure(toolchain: Toolchain, text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let found = match toolchain {
        Toolchain::Cargo => lines
            .iter()
            .rposition(|l| *l == "Caused by:")
            .and_then(|i| lines.get(i + 1).copied())
            .or_else(|| lines.iter().find_map(|l| l.strip_prefix("error: "))),
        Toolchain::Go => lines
            .iter()
            .filter(|l| !l.starts_with("go: downloading"))
            .map(|l| l.strip_prefix("go: ").unwrap_or(l))
            .next(),
    };
    found
        .or(lines.last().copied())
        .unwrap_or("no reason given")
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// Versions

/// The numeric components of a version (`1.95.0`, `1.21rc1` → `[1, 21]`, `1.97.0-nightly`).
fn version_parts(v: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for part in v.trim().split('.') {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        let Ok(n) = digits.parse() else { break };
        out.push(n);
        if digits.len() != part.len() {
            break;
        }
    }
    out
}

fn cmp_versions(a: &str, b: &str) -> Ordering {
    let (a, b) = (version_parts(a), version_parts(b));
    let n = a.len().max(b.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    (0..n)
        .map(|i| at(&a, i).cmp(&at(&b, i)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// Whether a toolchain at version `has` is older than `needs` (unparsable: not older).
pub fn older(has: &str, needs: &str) -> bool {
    !version_parts(has).is_empty()
        && !version_parts(needs).is_empty()
        && cmp_versions(has, needs).is_lt()
}

/// The `rust-version` a package's manifest asks for, following `rust-version.workspace = true`
/// to the workspace manifest.
pub fn rust_version(package_manifest: &str, workspace_manifest: Option<&str>) -> Option<String> {
    let pkg: toml::Table = package_manifest.parse().ok()?;
    match pkg.get("package")?.get("rust-version")? {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Table(t) if t.get("workspace").and_then(|v| v.as_bool()) == Some(true) => {
            let ws: toml::Table = workspace_manifest?.parse().ok()?;
            ws.get("workspace")?
                .get("package")?
                .get("rust-version")?
                .as_str()
                .map(str::to_string)
        }
        _ => None,
    }
}

/// The `go` directive of a go.mod.
pub fn go_directive(go_mod: &str) -> Option<String> {
    go_mod.lines().find_map(|l| {
        let l = l.split("//").next().unwrap_or_default().trim();
        l.strip_prefix("go ")
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/project/prepare/testdata")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn toolchain_message(d: Option<Diagnosis>) -> (String, String) {
        match d {
            Some(Diagnosis::Toolchain { message, help }) => (message, help),
            other => panic!("not a toolchain diagnosis: {other:?}"),
        }
    }

    #[test]
    fn cargo_rust_version_errors_name_the_highest_requirement() {
        let (m, h) = toolchain_message(diagnose_cargo(&data("cargo-rust-version-one.err")));
        assert_eq!(m, "the project needs rustc 1.999; this machine has 1.95.0");
        assert!(
            h.contains("rustup update") || h.contains("install Rust"),
            "{h}"
        );
        let (m, _) = toolchain_message(diagnose_cargo(&data("cargo-rust-version-many.err")));
        assert_eq!(
            m,
            "the project needs rustc 1.998.2; this machine has 1.95.0"
        );
    }

    #[test]
    fn cargo_edition_and_lockfile_too_new_are_toolchain_errors() {
        let (m, _) = toolchain_message(diagnose_cargo(&data("cargo-edition-too-new.err")));
        assert_eq!(
            m,
            "the project uses Rust edition 2027, which this toolchain does not know"
        );
        let (m, _) = toolchain_message(diagnose_cargo(&data("cargo-edition-unknown.err")));
        assert_eq!(
            m,
            "the project uses Rust edition 2999, which this toolchain does not know"
        );
        assert_eq!(diagnose_cargo(&data("cargo-edition-typo.err")), None);
        let (m, _) = toolchain_message(diagnose_cargo(&data("cargo-lockfile-too-new.err")));
        assert_eq!(
            m,
            "Cargo.lock has format version 99, newer than this Cargo understands"
        );
    }

    #[test]
    fn cargo_offline_failures_mean_not_downloaded() {
        for f in [
            "cargo-offline-not-in-index.err",
            "cargo-offline-crate-not-downloaded.err",
            "cargo-fetch-net-offline.err",
        ] {
            assert_eq!(
                diagnose_cargo(&data(f)),
                Some(Diagnosis::NotDownloaded),
                "{f}"
            );
        }
        // Online failures are not "not downloaded": they are what the download said.
        for f in [
            "cargo-fetch-no-network.err",
            "cargo-fetch-unknown-crate.err",
        ] {
            assert_eq!(diagnose_cargo(&data(f)), None, "{f}");
        }
    }

    #[test]
    fn a_failed_download_is_told_by_its_innermost_cause() {
        assert_eq!(
            download_failure(Toolchain::Cargo, &data("cargo-fetch-no-network.err")),
            "[7] Could not connect to server (Failed to connect to 127.0.0.1 port 9 after 0 ms: \
             Could not connect to server)"
        );
        assert_eq!(
            download_failure(Toolchain::Cargo, &data("cargo-fetch-unknown-crate.err")),
            "no matching package named `zzq-surely-not-a-crate-xyz` found"
        );
        let go = download_failure(Toolchain::Go, &data("go-mod-download-no-network.err"));
        assert!(
            go.starts_with("golang.org/x/text@v0.14.0: Get \"https://proxy.golang.org/")
                && go.ends_with("no such host"),
            "{go}"
        );
    }

    #[test]
    fn go_version_errors_say_which_file_needs_which_go() {
        let (m, h) = toolchain_message(diagnose_go(&data("go-vet-too-old-local.err")));
        assert_eq!(m, "go.mod requires go 1.99; this machine has go 1.27.3");
        assert_eq!(
            h,
            "install Go ≥ 1.99, or let the go command download it (GOTOOLCHAIN=auto)"
        );
        let (m, _) = toolchain_message(diagnose_go(&data("go-vet-work-too-old.err")));
        assert_eq!(m, "go.work requires go 1.98; this machine has go 1.27.3");
        let (m, h) = toolchain_message(diagnose_go(&data("go-vet-toolchain-not-available.err")));
        assert_eq!(
            m,
            "the project needs go 1.99.0, which the go command could not find to download"
        );
        assert_eq!(h, "install Go ≥ 1.99.0");
        let (m, h) = toolchain_message(diagnose_go(&data("go-vet-toolchain-download-failed.err")));
        assert_eq!(m, "the project needs go 1.99.0, and downloading it failed");
        assert!(h.contains("no such host"), "{h}");
    }

    #[test]
    fn go_module_lookups_refused_offline_mean_not_downloaded() {
        for f in [
            "go-vet-module-lookup-disabled.err",
            "go-list-module-lookup-disabled.err",
        ] {
            assert_eq!(diagnose_go(&data(f)), Some(Diagnosis::NotDownloaded), "{f}");
        }
        // A go.sum the user must fix is the code's problem, not the cache's.
        assert_eq!(diagnose_go(&data("go-vet-missing-go-sum.err")), None);
        assert_eq!(diagnose_go(&data("go-mod-download-no-network.err")), None);
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(older("1.95.0", "1.999"));
        assert!(older("1.95.0", "1.96"));
        assert!(!older("1.95.0", "1.95"));
        assert!(!older("1.95.0", "1.89"));
        assert!(!older("1.97.0-nightly", "1.97"));
        assert!(older("1.27.3", "1.28"));
        assert!(!older("1.27.3", "1.21rc1"));
        assert!(!older("1.27.3", "garbage"));
    }

    #[test]
    fn rust_version_follows_the_workspace() {
        assert_eq!(
            rust_version("[package]\nname='a'\nrust-version='1.80'\n", None).as_deref(),
            Some("1.80")
        );
        assert_eq!(
            rust_version(
                "[package]\nname='a'\nrust-version.workspace=true\n",
                Some("[workspace]\n[workspace.package]\nrust-version='1.998.2'\n")
            )
            .as_deref(),
            Some("1.998.2")
        );
        assert_eq!(rust_version("[package]\nname='a'\n", None), None);
    }

    #[test]
    fn go_directive_ignores_toolchain_and_comments() {
        assert_eq!(
            go_directive("module m\n\ngo 1.99 // new\n\ntoolchain go1.99.1\n").as_deref(),
            Some("1.99")
        );
        assert_eq!(go_directive("module m\n"), None);
    }
}
