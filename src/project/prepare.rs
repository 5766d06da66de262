//! Getting a package ready for its checker: clippy and go vet (and the verify steps) need the
//! project's dependencies in the local caches and a toolchain new enough for the project.
//!
//! Before such a tool runs in the mirror (`mirror`), [`Package::ensure`]:
//! 1. compares the version the manifest asks for (`rust-version`, go.mod's `go` line) with the
//!    toolchain's (`rustc -vV`, `go env GOVERSION`);
//! 2. asks the toolchain, offline, whether every dependency is in the cache (`cargo fetch
//!    --offline --target <host>`, `go list -deps -test ./...` with `GOPROXY=off`);
//! 3. if not, and the user does not work offline (`--offline`, `CARGO_NET_OFFLINE`, `GOPROXY=off`),
//!    downloads them the way the toolchain does (`cargo fetch`, `go mod download`), in the mirror:
//!    never in the user's tree, since a fetch may write Cargo.lock or go.sum. A vendored Go module
//!    (`vendor/modules.txt`, `-mod=vendor`) has its dependencies in the repository: nothing to get.
//!
//! A success is remembered in a stamp keyed by the manifests and lockfiles the mirror holds and by
//! where the caches are, so the next run with the same ones costs a few file reads. The tool then
//! runs offline as before; if it still says dependencies are missing (a cache cleaned since the
//! stamp, a target platform the offline check did not cover), [`Package::run`] forgets the stamp,
//! downloads once more and runs it again, once.
//!
//! What cannot be made ready is an [`Unready`]: one plain sentence and a help that says what to
//! run, also recognised from the toolchains' own messages (`diagnose`).
//!
//! Invariant: nothing here writes outside the mirror and patchgate's directory, except the
//! toolchains' own caches (CARGO_HOME, GOMODCACHE), which is what a fetch is for.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::tools::Ran;
use crate::project::mirror::{Mirror, Overlay};
use crate::runner::{Cmd, Output};

mod diagnose;

use diagnose::rustup_help;
pub use diagnose::{
    Diagnosis, diagnose_cargo, diagnose_go, download_failure, go_directive, older, rust_version,
};

/// A download gets at least this long, whatever the checker's own timeout: a first fetch of a real
/// project takes tens of seconds, and the next runs find everything in the cache.
const FETCH_TIMEOUT: Duration = Duration::from_secs(300);

/// How many dependency states one project's stamp remembers (a patch that edits Cargo.toml makes
/// two: the baseline run's and the patched one's).
const STAMP_KEYS: usize = 8;

/// Why a package's checker cannot run here, and what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unready {
    /// One plain sentence.
    pub message: String,
    /// What to run.
    pub help: String,
}

impl<T> From<Unready> for Ran<T> {
    fn from(u: Unready) -> Ran<T> {
        Ran::Unready {
            message: u.message,
            help: u.help,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toolchain {
    Cargo,
    Go,
}

/// Why dependencies may not be downloaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Offline {
    Flag,
    CargoEnv,
    GoProxy,
}

fn env_true(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "true" | "1" | "yes" | "on"
        )
    })
}

/// The go command's toolchain selection as patchgate runs it (`local` unless the user says).
fn go_toolchain_setting() -> OsString {
    std::env::var_os("GOTOOLCHAIN")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "local".into())
}

/// The environment every go command of patchgate's gets; `proxy_off` for the offline runs.
pub fn go_env(cmd: Cmd, proxy_off: bool) -> Cmd {
    let cmd = cmd.env("GOTOOLCHAIN", go_toolchain_setting()).env(
        "GOFLAGS",
        std::env::var_os("GOFLAGS").unwrap_or_else(|| "-buildvcs=false".into()),
    );
    if proxy_off {
        cmd.env("GOPROXY", "off")
    } else {
        cmd
    }
}

// ---------------------------------------------------------------------------------------------
// Getting a package ready

/// A project's directory in the user's tree, as the help names it (no trailing `/` for the root).
pub fn real_dir(repo_root: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        repo_root.to_path_buf()
    } else {
        repo_root.join(rel)
    }
}

/// One package about to be checked in its mirror.
pub struct Package<'a> {
    pub toolchain: Toolchain,
    /// The cargo or go command (with any configured prefix arguments).
    pub argv: &'a [OsString],
    pub git_dir: &'a Path,
    pub mirror: &'a Mirror,
    /// The mirrored project (the Cargo workspace, the Go module), repository-relative.
    pub mirror_rel: &'a str,
    /// The package itself (whose `rust-version` counts), repository-relative.
    pub package_rel: &'a str,
    /// The project's directory in the user's tree, for the help.
    pub real_dir: &'a Path,
    /// What the patch lays over the mirror (a patched Cargo.toml changes the key).
    pub overlays: &'a [Overlay<'a>],
    /// `--offline`.
    pub offline: bool,
    /// The checker's timeout, for the offline queries.
    pub timeout: Duration,
}

/// What asking the toolchain offline gave.
enum Check {
    Ready,
    Diagnosed(Diagnosis),
    /// It failed for a reason of the code's or could not run: the checker will say.
    Unknown,
}

impl Package<'_> {
    fn cmd(&self, dir: &Path) -> Cmd {
        Cmd::new(self.argv[0].clone(), dir).args(self.argv[1..].iter().cloned())
    }

    fn root(&self) -> PathBuf {
        self.mirror.path(self.mirror_rel)
    }

    fn offline_reason(&self) -> Option<Offline> {
        if self.offline {
            return Some(Offline::Flag);
        }
        match self.toolchain {
            Toolchain::Cargo if env_true("CARGO_NET_OFFLINE") => Some(Offline::CargoEnv),
            Toolchain::Go if std::env::var("GOPROXY").is_ok_and(|v| v.trim() == "off") => {
                Some(Offline::GoProxy)
            }
            _ => None,
        }
    }

    /// A Go module whose dependencies are in the repository: the go command uses `vendor/` when
    /// `vendor/modules.txt` exists (unless told `-mod=mod`/`-mod=readonly`), or with `-mod=vendor`.
    fn vendored(&self) -> bool {
        if self.toolchain != Toolchain::Go {
            return false;
        }
        let flags = std::env::var("GOFLAGS").unwrap_or_default();
        if flags.contains("-mod=vendor") {
            return true;
        }
        !flags.contains("-mod=mod")
            && !flags.contains("-mod=readonly")
            && self.root().join("vendor").join("modules.txt").is_file()
    }

    fn fetch_command(&self) -> &'static str {
        match self.toolchain {
            Toolchain::Cargo => "cargo fetch",
            Toolchain::Go => "go mod download",
        }
    }

    /// The error for a diagnosis, with a help that fits how the user works.
    pub fn unready(&self, d: Diagnosis) -> Unready {
        match d {
            Diagnosis::Toolchain { message, help } => Unready { message, help },
            Diagnosis::NotDownloaded => self.not_downloaded(self.offline_reason()),
        }
    }

    fn not_downloaded(&self, why: Option<Offline>) -> Unready {
        let dir = self.real_dir.display();
        let fetch = self.fetch_command();
        let help = match why {
            Some(Offline::Flag) => {
                format!("run `{fetch}` in {dir}, or run patchgate without --offline")
            }
            Some(Offline::CargoEnv) => format!(
                "run `CARGO_NET_OFFLINE=false cargo fetch` in {dir}, or unset CARGO_NET_OFFLINE \
                 (patchgate then fetches them)"
            ),
            Some(Offline::GoProxy) => format!(
                "run `GOPROXY= go mod download` in {dir}, or unset GOPROXY=off (patchgate then \
                 downloads them)"
            ),
            // Offline by the toolchain's own configuration (Cargo's `net.offline`).
            None => format!("run `{fetch}` in {dir} with network access"),
        };
        Unready {
            message: if why.is_some() {
                "dependencies not downloaded (offline)".into()
            } else {
                "dependencies not downloaded".into()
            },
            help,
        }
    }

    /// The plain error for a checker's failure, when its output says why.
    pub fn explain(&self, text: &str) -> Option<Unready> {
        self.diagnose(text).map(|d| self.unready(d))
    }

    fn diagnose(&self, text: &str) -> Option<Diagnosis> {
        match self.toolchain {
            Toolchain::Cargo => diagnose_cargo(text),
            Toolchain::Go => diagnose_go(text),
        }
    }

    /// Makes sure the dependencies are in the local cache and the toolchain is new enough.
    /// Cheap when a stamp says so; an `Err` is what the checker's report says instead.
    pub fn ensure(&self) -> Result<(), Unready> {
        let key = self.key();
        if self.stamped(&key) {
            return Ok(());
        }
        self.check_versions()?;
        if !self.vendored() {
            match self.check_offline() {
                Check::Ready => {}
                Check::Unknown => return Ok(()),
                Check::Diagnosed(Diagnosis::NotDownloaded) => self.fetch()?,
                Check::Diagnosed(d) => return Err(self.unready(d)),
            }
        }
        self.remember(&key);
        Ok(())
    }

    /// Runs the checker; if it fails saying dependencies are missing although `ensure` let it run
    /// (a cache cleaned since the stamp, a target platform the offline check did not cover),
    /// forgets the stamp, downloads and runs it once more.
    pub fn run<E>(
        &self,
        mut tool: impl FnMut() -> Result<Output, E>,
    ) -> Result<Result<Output, E>, Unready> {
        let first = tool();
        match &first {
            Ok(o)
                if !o.success()
                    && self.diagnose(&o.stderr_str()) == Some(Diagnosis::NotDownloaded) =>
            {
                self.forget();
                self.fetch()?;
                Ok(tool())
            }
            _ => Ok(first),
        }
    }

    /// The manifest's minimum toolchain against this machine's.
    fn check_versions(&self) -> Result<(), Unready> {
        match self.toolchain {
            Toolchain::Cargo => {
                let read = |rel: &str| {
                    std::fs::read_to_string(self.mirror.path(rel).join("Cargo.toml")).ok()
                };
                let Some(pkg) = read(self.package_rel) else {
                    return Ok(());
                };
                let Some(needs) = rust_version(&pkg, read(self.mirror_rel).as_deref()) else {
                    return Ok(());
                };
                let Some((has, _)) = self.rustc() else {
                    return Ok(());
                };
                if older(&has, &needs) {
                    return Err(Unready {
                        message: format!("the project needs rustc {needs}; this machine has {has}"),
                        help: rustup_help(&needs),
                    });
                }
                Ok(())
            }
            Toolchain::Go => {
                // With any other setting the go command fetches the toolchain go.mod asks for
                // (and says so if it cannot). The `toolchain` line is only a preference: under
                // `local` an older go still builds the module (verified with go1.27.3).
                if go_toolchain_setting() != "local" {
                    return Ok(());
                }
                let Some(needs) = std::fs::read_to_string(self.root().join("go.mod"))
                    .ok()
                    .and_then(|t| go_directive(&t))
                else {
                    return Ok(());
                };
                let cmd = go_env(self.cmd(&self.root()), true)
                    .args(["env", "GOVERSION"])
                    .timeout(self.timeout);
                let Some(has) = cmd
                    .run()
                    .ok()
                    .filter(Output::success)
                    .and_then(|o| o.stdout_str().trim().strip_prefix("go").map(str::to_string))
                else {
                    return Ok(());
                };
                if older(&has, &needs) {
                    return Err(Unready {
                        message: format!("go.mod requires go {needs}; this machine has go {has}"),
                        help: format!(
                            "install Go ≥ {needs}, or let the go command download it \
                             (GOTOOLCHAIN=auto)"
                        ),
                    });
                }
                Ok(())
            }
        }
    }

    /// rustc's release and host triple, as cargo in the mirror would run it (`RUSTC`, the rustc
    /// next to a cargo given by path, a `+toolchain` argument, rust-toolchain.toml via the cwd).
    fn rustc(&self) -> Option<(String, String)> {
        let prog: OsString = std::env::var_os("RUSTC")
            .filter(|v| !v.is_empty())
            .or_else(|| {
                let cargo = Path::new(&self.argv[0]);
                cargo
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map(|p| p.join("rustc"))
                    .filter(|p| p.is_file())
                    .map(PathBuf::into_os_string)
            })
            .unwrap_or_else(|| "rustc".into());
        let mut cmd = Cmd::new(prog, self.root()).timeout(self.timeout);
        if let Some(t) = self
            .argv
            .get(1)
            .filter(|a| a.to_string_lossy().starts_with('+'))
        {
            cmd = cmd.arg(t.clone());
        }
        let out = cmd.arg("-vV").run().ok().filter(Output::success)?;
        let text = out.stdout_str();
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
        };
        Some((field("release:")?, field("host:").unwrap_or_default()))
    }

    /// Whether everything the checker needs is in the local cache, asked without the network.
    fn check_offline(&self) -> Check {
        let root = self.root();
        let cmd = match self.toolchain {
            Toolchain::Cargo => {
                // Only the host's dependencies: `cargo fetch` alone wants every platform's
                // (Windows-only crates a Linux build never downloads).
                let mut c = self
                    .cmd(&root)
                    .args(["fetch", "--offline"])
                    .env("CARGO_TERM_COLOR", "never");
                if let Some((_, host)) = self.rustc().filter(|(_, h)| !h.is_empty()) {
                    c = c.args(["--target", host.as_str()]);
                }
                c
            }
            Toolchain::Go => go_env(self.cmd(&root), true).args([
                "list",
                "-deps",
                "-test",
                "-f",
                "{{.ImportPath}}",
                "./...",
            ]),
        };
        match cmd.timeout(self.timeout).run() {
            Ok(o) if o.success() => Check::Ready,
            Ok(o) if !o.timed_out => match self.diagnose(&o.stderr_str()) {
                Some(d) => Check::Diagnosed(d),
                None => Check::Unknown,
            },
            _ => Check::Unknown,
        }
    }

    /// Downloads the dependencies into the toolchain's cache, from the mirror.
    fn fetch(&self) -> Result<(), Unready> {
        if let Some(why) = self.offline_reason() {
            return Err(self.not_downloaded(Some(why)));
        }
        let root = self.root();
        let cmd = match self.toolchain {
            Toolchain::Cargo => self
                .cmd(&root)
                .arg("fetch")
                .env("CARGO_TERM_COLOR", "never"),
            // The user's GOPROXY (the go command's default when unset), not patchgate's `off`.
            Toolchain::Go => go_env(self.cmd(&root), false).args(["mod", "download"]),
        };
        let limit = self.timeout.max(FETCH_TIMEOUT);
        let fetch = self.fetch_command();
        let dir = self.real_dir.display();
        match cmd.timeout(limit).run() {
            Ok(o) if o.success() => Ok(()),
            Ok(o) if o.timed_out => Err(Unready {
                message: format!(
                    "downloading the dependencies took longer than {} s",
                    limit.as_secs()
                ),
                help: format!(
                    "run `{fetch}` in {dir} once; patchgate then finds them in the local cache"
                ),
            }),
            Ok(o) => {
                let text = o.stderr_str();
                match self.diagnose(&text) {
                    Some(Diagnosis::Toolchain { message, help }) => Err(Unready { message, help }),
                    // Offline by the toolchain's own configuration.
                    Some(Diagnosis::NotDownloaded) => Err(self.not_downloaded(None)),
                    None => Err(Unready {
                        message: format!(
                            "downloading the dependencies failed: {}",
                            download_failure(self.toolchain, &text)
                        ),
                        help: format!(
                            "run `{fetch}` in {dir} to see the whole error (network, proxy or \
                             registry settings); patchgate then finds them in the local cache"
                        ),
                    }),
                }
            }
            // The toolchain could not start: the checker's own run reports that.
            Err(_) => Ok(()),
        }
    }

    // -- the stamp ------------------------------------------------------------------------------

    fn stamp_path(&self) -> PathBuf {
        let name = if self.mirror_rel.is_empty() {
            "_root".to_string()
        } else {
            self.mirror_rel.replace('/', "__")
        };
        let tool = match self.toolchain {
            Toolchain::Cargo => "cargo",
            Toolchain::Go => "go",
        };
        crate::fs::layout::prepared(self.git_dir, &format!("{tool}-{name}"))
    }

    /// The dependency state: the toolchain, where its caches are, and every manifest and lockfile
    /// of the mirrored project as the checker will see them (the patch laid over).
    fn key(&self) -> String {
        let mut h = Sha256::new();
        let mut part = |b: &[u8]| {
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        };
        let (tool, vars, names): (&[u8], &[&str], &[&str]) = match self.toolchain {
            Toolchain::Cargo => (
                b"cargo",
                &[
                    "CARGO_HOME",
                    "HOME",
                    "RUSTUP_HOME",
                    "RUSTUP_TOOLCHAIN",
                    "RUSTC",
                    "CARGO_BUILD_TARGET",
                ],
                &[
                    "Cargo.toml",
                    "Cargo.lock",
                    "rust-toolchain",
                    "rust-toolchain.toml",
                ],
            ),
            Toolchain::Go => (
                b"go",
                &["GOMODCACHE", "GOPATH", "HOME", "GOFLAGS", "GOTOOLCHAIN"],
                &["go.mod", "go.sum", "go.work", "go.work.sum", "modules.txt"],
            ),
        };
        part(tool);
        for a in self.argv {
            part(a.as_encoded_bytes());
        }
        for v in vars {
            part(v.as_bytes());
            match std::env::var_os(v) {
                Some(x) => part(x.as_encoded_bytes()),
                None => part(b"\0unset"),
            }
        }
        let prefix = if self.mirror_rel.is_empty() {
            String::new()
        } else {
            format!("{}/", self.mirror_rel)
        };
        let wanted = |rel: &str| {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            rel.starts_with(&prefix) && (names.contains(&name) || rel.contains(".cargo/config"))
        };
        let rels: BTreeSet<&str> = self
            .mirror
            .listed()
            .chain(self.overlays.iter().map(|o| o.rel))
            .filter(|r| wanted(r))
            .collect();
        for rel in rels {
            part(rel.as_bytes());
            match std::fs::read(self.mirror.path(rel)) {
                Ok(b) => part(&b),
                Err(_) => part(b"\0absent"),
            }
        }
        format!("{:x}", h.finalize())
    }

    fn stamped(&self, key: &str) -> bool {
        std::fs::read_to_string(self.stamp_path()).is_ok_and(|t| t.lines().any(|l| l == key))
    }

    fn remember(&self, key: &str) {
        let path = self.stamp_path();
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let mut keys: Vec<&str> = old.lines().filter(|l| *l != key && !l.is_empty()).collect();
        keys.push(key);
        let keep = &keys[keys.len().saturating_sub(STAMP_KEYS)..];
        if let Some(dir) = path.parent()
            && std::fs::create_dir_all(dir).is_ok()
        {
            // A cache: a lost write only costs one offline query next time.
            let _ = crate::fs::atomic_write(
                &path,
                format!("{}\n", keep.join("\n")).as_bytes(),
                Some(0o644),
            );
        }
    }

    fn forget(&self) {
        let _ = std::fs::remove_file(self.stamp_path());
    }
}
