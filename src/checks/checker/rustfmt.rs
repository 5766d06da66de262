//! rustfmt: every Cargo project's formatter, on stdin from the file's own directory (so it finds
//! `rustfmt.toml`), with the package's edition.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{Batch, Call, Checker, Files, Out, Uses, each_file, formatted};
use crate::checks::exec::{Ran, existing_dir, first_lines, run_stdin};
use crate::project::config::Kind;
use crate::project::detect::Lang;

pub static CHECKER: Checker = Checker {
    name: "rustfmt",
    files: Files::Lang(Lang::Rust),
    kind: Kind::Format,
    uses: Uses::Always,
    batch: Batch::PerFile,
    locate: Some(|l| l.program("rustfmt")),
    run,
};

fn run(call: &Call) -> Ran<Out> {
    let project = match call.project() {
        Ok(p) => p,
        Err(e) => return e,
    };
    each_file(call, |i| {
        formatted(rustfmt(
            call.argv,
            &project.root,
            i.real,
            i.text(),
            call.timeout,
        ))
    })
}

fn rustfmt(
    argv: &[OsString],
    root: &Path,
    real: &Path,
    text: &str,
    timeout: Duration,
) -> Ran<String> {
    let mut argv = argv.to_vec();
    argv.extend([
        "--edition".into(),
        rust_edition(root).into(),
        "--emit".into(),
        "stdout".into(),
    ]);
    argv.extend(["--color", "never"].map(OsString::from));
    // On stdin rustfmt reads its configuration from the working directory upward.
    let cwd = existing_dir(real);
    let out = match run_stdin(&argv, &cwd, text, timeout) {
        Ok(o) => o,
        Err(r) => return r.relay(),
    };
    match out.code {
        Some(0) => Ran::Done(out.stdout_str()),
        _ => Ran::Error(first_lines(&out.stderr_str())),
    }
}

/// The edition rustfmt must be told (it does not read Cargo.toml): the package's, following
/// `edition.workspace = true` to the workspace manifest (the package's own when it is the
/// workspace's root too, as ripgrep's is); 2015 (cargo's default) when unset.
fn rust_edition(project_root: &Path) -> String {
    let read = |p: &Path| -> Option<toml::Table> { std::fs::read_to_string(p).ok()?.parse().ok() };
    let Some(manifest) = read(&project_root.join("Cargo.toml")) else {
        return "2015".into();
    };
    let edition = manifest.get("package").and_then(|p| p.get("edition"));
    match edition {
        Some(toml::Value::String(s)) => s.clone(),
        Some(toml::Value::Table(t))
            if t.get("workspace").and_then(|v| v.as_bool()) == Some(true) =>
        {
            let mut dir = Some(project_root);
            while let Some(d) = dir {
                if let Some(ws) = read(&d.join("Cargo.toml"))
                    && let Some(e) = ws
                        .get("workspace")
                        .and_then(|w| w.get("package"))
                        .and_then(|p| p.get("edition"))
                        .and_then(|e| e.as_str())
                {
                    return e.to_string();
                }
                dir = d.parent();
            }
            "2015".into()
        }
        _ => "2015".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::rust_edition;

    /// The edition comes from the package, or through `edition.workspace = true` from the
    /// workspace's manifest: a member's parent, or the package's own manifest when the package is
    /// the workspace's root (ripgrep's layout, where 2015 was told and `let` chains failed).
    #[test]
    fn the_edition_is_the_packages_or_its_workspaces() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        };
        write(
            "Cargo.toml",
            "[package]\nname = \"top\"\nedition.workspace = true\n\n[workspace]\nmembers = [\"m\", \"own\"]\n\n[workspace.package]\nedition = \"2024\"\n",
        );
        write(
            "m/Cargo.toml",
            "[package]\nname = \"m\"\nedition.workspace = true\n",
        );
        write(
            "own/Cargo.toml",
            "[package]\nname = \"own\"\nedition = \"2021\"\n",
        );
        write("none/Cargo.toml", "[package]\nname = \"none\"\n");
        assert_eq!(rust_edition(root), "2024", "the workspace's root package");
        assert_eq!(rust_edition(&root.join("m")), "2024", "a member");
        assert_eq!(rust_edition(&root.join("own")), "2021");
        assert_eq!(rust_edition(&root.join("none")), "2015");
        assert_eq!(rust_edition(&root.join("missing")), "2015");
    }
}
