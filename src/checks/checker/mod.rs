//! One definition per checker, listed in one table ([`TABLE`]).
//!
//! A checker is a [`Checker`] value in a file of its own: its name, the files it applies to, its
//! kind (format or lint), how a project shows that it uses it ([`Uses`]), how its program is
//! found, how files are batched for it ([`Batch`]), and the function that runs it and reads its
//! output. Adding a checker is one file and one line in [`TABLE`]. Nothing outside a checker's own
//! file knows the tool by name: the scheduler (`checks::run`), `patchgate detect` and
//! `check`'s availability listing all read the table.
//!
//! Invariant: a checker's `run` never writes into the user's working tree, and reports every
//! input file in order ([`Out::Files`]) or findings with repository-relative paths
//! ([`Out::Package`]).

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::ContextFile;
use super::exec::Ran;
use super::exec::node::{self, FileResult, NodeError, NodeFile, NodeTool};
use super::finding::RawFinding;
use crate::project::config::{Config, Kind};
use crate::project::detect::{Lang, Project};
use crate::project::evidence::{Evidence, Signals, Use};
use crate::project::mirror::Overlay;

pub mod biome_format;
pub mod biome_lint;
pub mod black;
pub mod clippy;
pub mod eslint;
#[cfg(test)]
mod evidence_tests;
pub mod flake8;
pub mod go_lint;
pub mod gofmt;
pub mod oxlint;
pub mod prettier;
pub mod references;
pub mod ruff;
pub mod ruff_format;
pub mod rustfmt;
pub mod syntax;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tool_tests;
pub mod xo;

/// Every built-in checker. Order is the order of `detect`'s listing within a language.
pub static TABLE: &[&Checker] = &[
    &syntax::CHECKER,
    &references::CHECKER,
    &ruff_format::CHECKER,
    &black::CHECKER,
    &ruff::CHECKER,
    &flake8::CHECKER,
    &prettier::CHECKER,
    &biome_format::CHECKER,
    &eslint::CHECKER,
    &xo::CHECKER,
    &biome_lint::CHECKER,
    &oxlint::CHECKER,
    &rustfmt::CHECKER,
    &clippy::CHECKER,
    &gofmt::CHECKER,
    &go_lint::CHECKER,
];

/// The checker of that name.
pub fn by_name(name: &str) -> Option<&'static Checker> {
    TABLE.iter().copied().find(|c| c.name == name)
}

/// Finds a checker's program: the argv prefix, or why it is missing.
pub type LocateFn = fn(&Locate) -> Result<Vec<OsString>, String>;

pub struct Checker {
    pub name: &'static str,
    pub files: Files,
    pub kind: Kind,
    pub uses: Uses,
    pub batch: Batch,
    /// Finds the program (argv prefix); `None` for a checker built into patchgate.
    pub locate: Option<LocateFn>,
    pub run: fn(&Call) -> Ran<Out>,
}

/// Which files a checker looks at.
pub enum Files {
    /// The files of a language's projects (a file outside every project of its language is not
    /// checked).
    Lang(Lang),
    /// Any file the checker's own test accepts, in a project or not.
    Any(fn(&str) -> bool),
}

/// How a project shows that it uses a checker.
pub enum Uses {
    /// The language's own tool (rustfmt, clippy, gofmt, go vet): every project uses it.
    Always,
    /// Built into patchgate: on unless disabled.
    BuiltIn,
    /// Used where the project's files show it ([`Signals`]); the function, if any, refines that
    /// verdict with what signals cannot express (another tool replaces it, its configuration
    /// turns it off, a section of a shared config file names it).
    Evidence(&'static Signals, Option<fn(&Evidence, &str, Use) -> Use>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    /// One run per file.
    PerFile,
    /// One run for all the files of a project (that share a configuration directory).
    Project,
    /// One run over the whole package, in the mirror; findings anywhere in it.
    Package,
    /// One run over every file of the patch it applies to; findings anywhere.
    Patch,
}

/// What locating a program needs.
pub struct Locate<'a> {
    pub config: &'a Config,
    pub checker: &'a str,
    pub project_root: &'a Path,
    pub repo_root: &'a Path,
}

impl Locate<'_> {
    /// The usual rule (`.patchgate.toml`, project-local installs, PATH) for `binary`.
    pub fn program(&self, binary: &str) -> Result<Vec<OsString>, String> {
        crate::project::tools::program(
            self.config,
            self.checker,
            binary,
            self.project_root,
            self.repo_root,
        )
    }
}

/// One file given to a checker.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// Repository-relative.
    pub rel: &'a str,
    /// Absolute, in the working tree (it may not exist).
    pub real: &'a Path,
    /// The text to check (`None`: the file is absent in the state checked — only package
    /// checkers see such inputs).
    pub text: Option<&'a str>,
    /// The original text, for a checker that compares itself (the syntax gate).
    pub before: Option<&'a str>,
    /// Where the original text stood, when the patch moved the file.
    pub from: Option<&'a str>,
}

impl Input<'_> {
    pub fn text(&self) -> &str {
        self.text.unwrap_or("")
    }
}

/// One run of a checker.
pub struct Call<'a> {
    pub argv: &'a [OsString],
    /// Where to run: the directory holding the evidence (the tool's configuration), else the
    /// project's root.
    pub cwd: &'a Path,
    pub project: Option<&'a Project>,
    pub repo_root: &'a Path,
    pub git_dir: &'a Path,
    pub files: &'a [Input<'a>],
    /// Extra arguments the project gives the tool (a pre-commit hook's `args:`).
    pub args: &'a [String],
    pub timeout: Duration,
    /// Other files whose state differs from the working tree (package checkers lay them over).
    pub context: &'a crate::checks::Context,
    /// Every file the patch changes, with its new content (`None`: gone): a package checker of
    /// the patched state lays those outside its own files over the mirror too.
    pub patched: &'a [ContextFile],
    /// Files the patch deletes, with their original content.
    pub removed: &'a [(String, std::sync::Arc<Vec<u8>>)],
    /// This run checks the original content (the baseline).
    pub baseline: bool,
    /// Work offline: never fetch dependencies.
    pub offline: bool,
}

impl Call<'_> {
    /// The project; package and per-language checkers always have one.
    pub fn project(&self) -> Result<&Project, Ran<Out>> {
        self.project
            .ok_or_else(|| Ran::Error("internal: no project for this checker".into()))
    }
}

impl Call<'_> {
    /// What a package run lays over the mirror: the state's other differing files (`check
    /// --staged`), then the call's files (absent ones deleted), then, for the patched state, the
    /// files the patch deletes inside the project (the baseline keeps them: it is the original).
    /// Fails when the state's context could not be made.
    pub fn overlays(&self) -> Result<Vec<Overlay<'_>>, String> {
        let call = self;
        let inside = |rel: &str| {
            call.project
                .is_none_or(|p| crate::repo::within(rel, &p.rel_root))
        };
        let deleted = call
            .removed
            .iter()
            .filter(|_| !call.baseline)
            .filter(move |(rel, _)| inside(rel))
            .map(|(rel, _)| Overlay { rel, content: None });
        let context = call
            .context
            .files()?
            .iter()
            .filter(|(rel, _)| !call.files.iter().any(|i| i.rel == rel))
            .map(|(rel, content)| Overlay {
                rel,
                content: content.as_deref().map(|b| b.as_slice()),
            });
        // The patched state is the patch's everywhere: a package of a workspace is checked
        // against the other packages as the patch leaves them (a function renamed in one crate
        // and its callers in another checked together), never against their originals.
        let patched = call
            .patched
            .iter()
            .filter(|_| !call.baseline)
            .filter(|(rel, _)| !call.files.iter().any(|i| i.rel == rel))
            .map(|(rel, content)| Overlay {
                rel,
                content: content.as_deref().map(|b| b.as_slice()),
            });
        Ok(context
            .chain(patched)
            .chain(call.files.iter().map(|i| Overlay {
                rel: i.rel,
                content: i.text.map(str::as_bytes),
            }))
            .chain(deleted)
            .collect())
    }
}

/// What a checker said about one file.
#[derive(Debug, Clone)]
pub enum FileOut {
    /// A formatter's output for the file.
    Formatted(String),
    /// A linter's findings on the file.
    Findings(Vec<RawFinding>),
    /// The tool's configuration excludes the file.
    Skipped(String),
    /// The tool failed on this file alone.
    Error(String),
}

#[derive(Debug, Clone)]
pub enum Out {
    /// One verdict per input, in order.
    Files(Vec<FileOut>),
    /// Findings anywhere in the package (repository-relative paths).
    Package(Vec<RawFinding>),
}

/// Runs `one` per input and collects the verdicts: for tools that take one file at a time.
/// A failure of the tool itself (missing, timeout) ends the batch with that failure.
pub fn each_file(call: &Call, one: impl Fn(&Input) -> Ran<FileOut>) -> Ran<Out> {
    let mut outs = Vec::with_capacity(call.files.len());
    for input in call.files {
        match one(input) {
            Ran::Done(o) => outs.push(o),
            Ran::Skipped(s) => outs.push(FileOut::Skipped(s)),
            Ran::Error(e) => outs.push(FileOut::Error(e)),
            Ran::Missing(m) => return Ran::Missing(m),
            Ran::Unready { message, help } => return Ran::Unready { message, help },
            Ran::Timeout => return Ran::Timeout,
        }
    }
    Ran::Done(Out::Files(outs))
}

/// A batch's findings (on repository paths) as one verdict per input.
pub fn per_input(call: &Call, all: Vec<RawFinding>) -> Out {
    Out::Files(
        call.files
            .iter()
            .map(|i| FileOut::Findings(all.iter().filter(|f| f.path == i.rel).cloned().collect()))
            .collect(),
    )
}

/// A formatter's [`Ran`] as a file verdict.
pub fn formatted(r: Ran<String>) -> Ran<FileOut> {
    match r {
        Ran::Done(s) => Ran::Done(FileOut::Formatted(s)),
        other => other.relay(),
    }
}

/// A linter's [`Ran`] as a file verdict.
pub fn findings(r: Ran<Vec<RawFinding>>) -> Ran<FileOut> {
    match r {
        Ran::Done(f) => Ran::Done(FileOut::Findings(f)),
        other => other.relay(),
    }
}

/// Finds a node tool's package for a checker (the argv is the package directory).
pub fn node_locate(l: &Locate) -> Result<Vec<OsString>, String> {
    node::find_module(l.checker, l.project_root, l.repo_root)
        .map(|m| vec![m.into_os_string()])
        .ok_or_else(|| format!("{} not found in node_modules or on PATH", l.checker))
}

/// One bridge run for a checker's call: a verdict per file.
pub fn node_run(tool: NodeTool, call: &Call) -> Ran<Out> {
    let Some(module) = call.argv.first().map(std::path::PathBuf::from) else {
        return Ran::Error("internal: no module for the node bridge".into());
    };
    let root = call.project.map_or(call.cwd, |p| p.root.as_path());
    // The checker's name is its package's (the baseline cache's key).
    let name = tool.package();
    // An original whose baseline is not cached goes along: if the patched text needs it, the
    // same node process checks it and the cache gets it, so the scheduler's baseline step finds
    // it there instead of starting node a second time.
    // A baseline of some rules goes along with them: the bridge checks the original again only
    // if the patched text breaks another rule.
    let wants_base = |i: &Input| -> (Option<String>, Option<Vec<String>>) {
        let Some(b) = i.before.filter(|_| !call.baseline) else {
            return (None, None);
        };
        match super::baseline::known(call.git_dir, name, i.rel, b.as_bytes()) {
            Some(super::baseline::Known::All) => (None, None),
            Some(super::baseline::Known::Rules(r)) => {
                (Some(b.to_string()), Some(r.into_iter().collect()))
            }
            None => (Some(b.to_string()), None),
        }
    };
    let files: Vec<NodeFile> = call
        .files
        .iter()
        .map(|i| {
            let (before, before_rules) = wants_base(i);
            NodeFile {
                path: i.real.to_path_buf(),
                text: i.text().to_string(),
                before,
                before_rules,
            }
        })
        .collect();
    let scratch = crate::fs::layout::node(call.git_dir);
    let results =
        match node::run_with_baselines(tool, &module, root, &files, &scratch, call.timeout) {
            Ok(r) => r,
            Err(NodeError::Missing(m)) => return Ran::Missing(m),
            Err(NodeError::Timeout) => return Ran::Timeout,
            Err(NodeError::Failed(m)) => return Ran::Error(m),
        };
    let out = |r: FileResult| match r {
        FileResult::Format {
            formatted: Some(f),
            error: None,
            ..
        } => FileOut::Formatted(f),
        FileResult::Format { error: Some(e), .. } => FileOut::Error(e),
        FileResult::Format {
            formatted: None, ..
        } => FileOut::Skipped(format!("ignored by the {name} configuration")),
        FileResult::Lint { ignored: true, .. } => {
            FileOut::Skipped(format!("ignored by the {name} configuration"))
        }
        FileResult::Lint { findings, .. } => FileOut::Findings(findings),
    };
    let mut outs = Vec::with_capacity(results.len());
    for ((r, base), input) in results.into_iter().zip(call.files) {
        if let (Some(base), Some(before)) = (base, input.before)
            && let Some(found) = super::baseline::of(input.rel, before, out(base.result))
        {
            // A baseline of some rules only is kept as such: a later patch that breaks
            // another rule needs more of it.
            match base.rules {
                Some(rules) => super::baseline::put_rules(
                    call.git_dir,
                    name,
                    input.rel,
                    before.as_bytes(),
                    rules.into_iter().collect(),
                    found,
                ),
                None => {
                    super::baseline::put(call.git_dir, name, input.rel, before.as_bytes(), &found)
                }
            }
        }
        outs.push(out(r));
    }
    Ran::Done(Out::Files(outs))
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}
