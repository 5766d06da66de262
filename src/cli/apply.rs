//! `patchgate apply [PATCH]`: the patch read from a file or standard input (bounded by the size
//! limit), parsed in the requested input format, and handed to [`ops::apply`].

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use super::output::{OutputFormat, print_error, print_report};
use crate::error::Error;
use crate::ops::{self, Context};
use crate::patch::{InputFormat, Patch, limit};
use crate::repo::Repo;

#[derive(Debug, clap::Args)]
pub(super) struct ApplyArgs {
    /// The patch file; `-` or nothing reads standard input.
    patch: Option<PathBuf>,
    #[command(flatten)]
    request: ops::apply::Request,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    format: OutputFormat,
}

pub(super) fn run(a: &ApplyArgs, ctx: &Context) -> i32 {
    // The process ends with this command: its large structures are left to the exit.
    crate::exit::exiting();
    let ctx = &Context {
        json: a.format == OutputFormat::Json,
        ..ctx.clone()
    };
    let result = std::thread::scope(|s| {
        // The repository is found on another core while the patch is read and parsed: libgit2's
        // discovery (its configuration files, HEAD, the canonical paths) is a tenth to a fifth of
        // a small patch's run, and neither waits for the other. Without a thread, in turn.
        let mut found = Found {
            running: std::thread::Builder::new()
                .name("discover".into())
                .spawn_scoped(s, || Repo::discover(&ctx.dir))
                .ok(),
            found: None,
        };
        let (name, bytes) = read_patch(a.patch.as_deref(), &ctx.dir)?;
        // A unified diff's names depend on where the command runs (as for `git apply`); the other
        // formats' do not.
        let diff = match a.request.input {
            InputFormat::Diff => true,
            InputFormat::Auto => std::str::from_utf8(&bytes)
                .is_ok_and(|t| crate::patch::input::detect(t) == InputFormat::Diff),
            _ => false,
        };
        let prefix = match diff {
            true => found
                .get(&ctx.dir)
                .as_ref()
                .ok()
                .and_then(|r| cwd_prefix(r, &ctx.dir)),
            false => None,
        };
        let opts = a.request.input_options(prefix);
        let patch: Patch = crate::patch::parse_input_with(&bytes, &name, a.request.input, &opts)?;
        crate::timing::mark("patch parsed");
        let report = ops::apply::run_in(&a.request, &patch, ctx, found.take(&ctx.dir));
        crate::exit::dispose((patch, bytes));
        report
    });
    match result {
        Ok(report) => {
            let code = print_report(&report, a.format);
            crate::exit::dispose(report);
            code
        }
        Err(err) => print_error(&err, a.format),
    }
}

/// The repository, being found on another thread (`None`: no thread could be started, or it was
/// waited for) and, once waited for, found.
struct Found<'s> {
    running: Option<std::thread::ScopedJoinHandle<'s, Result<Repo, Error>>>,
    found: Option<Result<Repo, Error>>,
}

impl Found<'_> {
    /// Waits for the repository (or finds it here).
    fn get(&mut self, dir: &Path) -> &Result<Repo, Error> {
        let running = &mut self.running;
        self.found.get_or_insert_with(|| match running.take() {
            Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => Repo::discover(dir),
        })
    }

    fn take(mut self, dir: &Path) -> Result<Repo, Error> {
        self.get(dir);
        self.found.take().unwrap_or_else(|| Repo::discover(dir))
    }
}

/// Where DIR stands in `repo`'s work tree (`src/app`, or `""` at the root): a traditional diff's
/// names are relative to it, as for `git apply`. `None` outside a work tree (the apply itself
/// then says so).
fn cwd_prefix(repo: &Repo, dir: &Path) -> Option<String> {
    let root = repo.workdir.as_ref()?;
    let here = std::fs::canonicalize(dir).ok()?;
    let rel = here.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// The patch's name (for diagnostics) and bytes: a file (relative to DIR), or standard input.
fn read_patch(path: Option<&Path>, dir: &Path) -> Result<(String, Vec<u8>), Error> {
    let max = limit::max_bytes()?;
    match path {
        None if std::io::stdin().is_terminal() => Err(Error::Usage {
            message: "no patch given".into(),
            help: "pass a patch file (`patchgate apply edits.yaml`) or pipe one in (`... | patchgate apply -`)".into(),
        }),
        Some(p) if p.as_os_str() != "-" => {
            let full = if p.is_absolute() {
                p.to_path_buf()
            } else {
                dir.join(p)
            };
            Ok((p.display().to_string(), read_file(&full, max)?))
        }
        _ => {
            // A file redirected to stdin (`< big.yaml`) has a size to judge by, like a named one.
            let redirected = std::fs::metadata("/proc/self/fd/0")
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len());
            if redirected.is_some_and(|len| len > max) {
                return Err(limit::too_big("<stdin>", max));
            }
            let bytes =
                limit::read_bounded(std::io::stdin().lock(), "<stdin>", max, redirected)?;
            Ok(("<stdin>".to_string(), bytes))
        }
    }
}

fn read_file(full: &Path, max: u64) -> Result<Vec<u8>, Error> {
    let shown = full.display().to_string();
    let read_err = |source| Error::PatchRead {
        path: shown.clone(),
        source,
    };
    let file = std::fs::File::open(full).map_err(read_err)?;
    let md = file.metadata().map_err(read_err)?;
    if md.is_dir() {
        return Err(read_err(std::io::Error::other("it is a directory")));
    }
    // A regular file is judged by its size before a byte is read; anything else (a device, a
    // FIFO) has no size to trust and is cut off just past the limit.
    if md.is_file() && md.len() > max {
        return Err(limit::too_big(&shown, max));
    }
    let hint = md.is_file().then_some(md.len());
    limit::read_bounded(file, &shown, max, hint)
}
