//! Does the project a file belongs to use tool X, and on what evidence?
//!
//! A checker declares its evidence as a [`Signals`] value (config file names, package.json keys,
//! pyproject tables, INI sections, the command words that run it, its pre-commit hook ids, its
//! package names); [`Evidence::uses`] evaluates such a declaration for one file, from the
//! project's own files only. The evaluation knows no tool by name: what each tool looks like is
//! declared in its checker's own file (`checks::checker::*::SIGNALS`; mypy's in [`known`]).
//!
//! Rules (docs/checks.md "Which checkers run: the project's own"):
//! - **Strong** evidence is a config file or the tool's own key/table (`.prettierrc`,
//!   `package.json "xo"`, `pyproject.toml [tool.black]`, `setup.cfg [flake8]`). It is looked up
//!   the way the tools find their configuration: from the file's directory upward to the
//!   repository root, never above it, nearest directory first. A workspace member without a
//!   config of its own is governed by its root's.
//! - **Medium** evidence is a command that runs the tool: a lint-staged entry whose glob selects
//!   the file (nearest lint-staged configuration only, as lint-staged does), a pre-commit hook
//!   that covers the file, or a `package.json` script in any package.json from the file's
//!   directory up to the root (a workspace root's scripts count for its members).
//! - **Weak**: a dependency alone is **not** evidence; it is named in the reason only.
//! - Strong anywhere on the way up beats medium; within a strength the nearest wins. Medium is
//!   tried in the order lint-staged, pre-commit, scripts (most file-specific first).
//! - A file that cannot be parsed (malformed package.json, pyproject.toml, YAML) counts as absent
//!   and is named in the reason; nothing here panics on file content.
//!
//! What [`Signals`] cannot express is left to the checker, with helpers here: a tool switched off
//! inside its config (biome's `formatter.enabled: false`: [`Evidence::json_flag`]), which kind of
//! config was found (eslint flat vs legacy: [`Evidence::find_config`]), one tool replacing others
//! (xo runs eslint and prettier itself): the checkers' `Uses::Evidence` refinements.

pub(crate) mod command;
pub mod known;
mod lintstaged;
mod precommit;
mod read;

pub(crate) use read::strip_jsonc;
mod reason;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use lintstaged::LintStaged;
use precommit::Hook;
use read::{DirInfo, Files, Loaded, PackageJson};
use reason::Notes;

/// What a checker declares as evidence that a project uses it. Every list may be empty; start
/// from [`Signals::NONE`] with struct update syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signals {
    /// The tool's name as shown in reasons (`"prettier"`).
    pub name: &'static str,
    /// Config files looked up upward from the file's directory (`".prettierrc"`, `"biome.json"`).
    /// A name may hold `/` (`".config/x.json"`).
    pub config_files: &'static [&'static str],
    /// Top-level keys of `package.json` (`"prettier"`, `"eslintConfig"`, `"xo"`).
    pub package_json_keys: &'static [&'static str],
    /// Dotted tables of `pyproject.toml` (`"tool.black"`, `"tool.ruff.format"`). A table counts
    /// when it exists, also implicitly: `[tool.ruff.lint]` alone creates `tool.ruff`; the reverse
    /// does not hold (`[tool.ruff]` does not create `tool.ruff.format`).
    pub pyproject_tables: &'static [&'static str],
    /// Dotted tables of other TOML files: `("ruff.toml", "format")`.
    pub toml_tables: &'static [(&'static str, &'static str)],
    /// INI sections: `("setup.cfg", "flake8")`.
    pub ini_sections: &'static [(&'static str, &'static str)],
    /// Command words that run the tool in package.json scripts, lint-staged commands and local
    /// pre-commit hook entries (`"prettier"`, `"biome format"`), matched as whole words.
    pub commands: &'static [&'static str],
    /// `.pre-commit-config.yaml` hook ids (`"ruff-format"`, `"black"`).
    pub precommit_ids: &'static [&'static str],
    /// Package names (npm or Python; a trailing `*` is a prefix): named in the "not used" reason
    /// only, because a dependency alone is not evidence.
    pub dependencies: &'static [&'static str],
}

impl Signals {
    pub const NONE: Signals = Signals {
        name: "",
        config_files: &[],
        package_json_keys: &[],
        pyproject_tables: &[],
        toml_tables: &[],
        ini_sections: &[],
        commands: &[],
        precommit_ids: &[],
        dependencies: &[],
    };
}

impl Default for Signals {
    fn default() -> Self {
        Signals::NONE
    }
}

/// How strong the evidence of use is (LINTERS.md §E).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strength {
    /// A script, lint-staged entry or pre-commit hook runs it.
    Medium,
    /// A config file or the tool's own key or table.
    Strong,
}

/// Whether a file's project uses a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "use", rename_all = "snake_case")]
pub enum Use {
    Used {
        /// For people: `biome.json at web/`, `package.json scripts.lint runs `xo``,
        /// `.pre-commit-config.yaml hook `black``.
        evidence: String,
        strength: Strength,
        /// The file holding the evidence (biome.json, package.json, .pre-commit-config.yaml).
        file: PathBuf,
        /// The directory the evidence lives in: run the tool from here (biome and flake8 find
        /// their configuration from the cwd). The repository root for a pre-commit hook.
        config_dir: PathBuf,
        /// A pre-commit hook's `args:` when that hook is the evidence (flake8
        /// `--max-line-length=88`), empty otherwise. Unfiltered: they may hold `--fix`.
        args: Vec<String>,
    },
    NotUsed {
        /// A sentence naming what was looked for and what was found instead.
        why: String,
    },
}

impl Use {
    pub fn is_used(&self) -> bool {
        matches!(self, Use::Used { .. })
    }
}

/// Cached reads of one repository's project files. Cheap to query for many files and many
/// checkers; `Sync`, so checks on a rayon pool can share one.
#[derive(Debug)]
pub struct Evidence {
    root: PathBuf,
    files: Files,
    /// A file's directory (repository-relative) → its directories up to the root, so a query
    /// costs one map lookup, not one per level.
    chains: Mutex<HashMap<String, Arc<[Dir]>>>,
}

/// One directory on the way from a file up to the repository root.
#[derive(Debug)]
struct Dir {
    /// Repository-relative, `""` for the root.
    rel: String,
    info: Arc<DirInfo>,
}

impl Dir {
    /// `at web/` or `at the repository root`.
    fn at(&self) -> String {
        if self.rel.is_empty() {
            "at the repository root".to_string()
        } else {
            format!("at {}/", self.rel)
        }
    }

    fn rel_file(&self, name: &str) -> String {
        if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.rel)
        }
    }
}

impl Evidence {
    /// How many files and directories were read so far (each is read once, whatever asks).
    #[cfg(test)]
    pub(crate) fn reads(&self) -> usize {
        self.files.reads()
    }

    pub fn new(repo_root: &Path) -> Evidence {
        Evidence {
            root: std::path::absolute(repo_root).unwrap_or_else(|_| repo_root.to_path_buf()),
            files: Files::default(),
            chains: Mutex::default(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Does the project of `rel` (a repository-relative path) use the tool `signals` describes?
    pub fn uses(&self, rel: &str, signals: &Signals) -> Use {
        let Some((rel, dirs)) = self.walk(rel) else {
            return Use::NotUsed {
                why: format!(
                    "{}`{rel}` is not a path inside the repository",
                    reason::prefix(signals)
                ),
            };
        };
        let mut notes = Notes::default();
        self.strong(&dirs, signals, &mut notes)
            .or_else(|| self.lint_staged(&rel, &dirs, signals, &mut notes))
            .or_else(|| self.pre_commit(&rel, &dirs, signals, &mut notes))
            .or_else(|| self.scripts(&dirs, signals, &mut notes))
            .unwrap_or_else(|| Use::NotUsed {
                why: reason::why_not(&self.files, &dirs, signals, notes),
            })
    }

    /// Where several tools could format the same file, the one the project's lint-staged or
    /// pre-commit configuration runs on it: the index into `candidates`, or `None` when those
    /// globs select none of them or several (the caller then keeps all).
    pub fn owner(&self, rel: &str, candidates: &[&Signals]) -> Option<usize> {
        let (rel, dirs) = self.walk(rel)?;
        let mut owners = BTreeSet::new();
        self.with_lint_staged(&dirs, |at, _, cfg| {
            let Ok(cfg) = cfg else { return };
            let scripts = nearest_scripts(at);
            let file = rel_to(&rel, &at[0].rel);
            for entry in cfg.entries.iter().filter(|e| e.matches(file)) {
                for (i, c) in candidates.iter().enumerate() {
                    if runs_any(&entry.commands, c.commands, scripts).is_some() {
                        owners.insert(i);
                    }
                }
            }
        });
        if let Loaded::Ok(pc) = &*self.files.precommit(&self.root) {
            let scripts = nearest_scripts(&dirs[dirs.len() - 1..]);
            for hook in pc.hooks.iter().filter(|h| pc.covers(h, &rel)) {
                for (i, c) in candidates.iter().enumerate() {
                    if hook_runs(hook, c, scripts).is_some() {
                        owners.insert(i);
                    }
                }
            }
        }
        match (owners.len(), owners.first()) {
            (1, Some(&i)) => Some(i),
            _ => None,
        }
    }

    /// The nearest of `names` from `rel`'s directory up to the repository root (the first name
    /// in `names` wins within one directory): which kind of config governs the file, e.g.
    /// eslint's flat `eslint.config.*` vs legacy `.eslintrc*`.
    pub fn find_config(&self, rel: &str, names: &[&str]) -> Option<PathBuf> {
        let (_, dirs) = self.walk(rel)?;
        dirs.iter().find_map(|d| {
            let name = names.iter().find(|n| self.files.has(&d.info, n))?;
            Some(d.info.abs.join(name))
        })
    }

    /// A boolean in a JSON or JSONC file at a JSON pointer (`"/formatter/enabled"` in
    /// biome.json). `None` when the file, the key or a boolean there is missing, or the file does
    /// not parse; the caller applies the tool's default.
    pub fn json_flag(&self, config: &Path, pointer: &str) -> Option<bool> {
        self.files.json(config).ok()?.pointer(pointer)?.as_bool()
    }

    /// `rel` cleaned (`./`, `.` and empty components dropped) and its directories from the
    /// file's own up to the root; `None` when it leaves the repository.
    fn walk(&self, rel: &str) -> Option<(String, Arc<[Dir]>)> {
        if rel.starts_with('/') {
            return None;
        }
        let mut parts = Vec::new();
        for p in rel.split('/') {
            match p {
                "" | "." => {}
                ".." => return None,
                p => parts.push(p),
            }
        }
        let clean = parts.join("/");
        parts.pop()?;
        let dir = parts.join("/");
        if let Some(chain) = read::lock(&self.chains).get(&dir) {
            return Some((clean, Arc::clone(chain)));
        }
        let chain: Arc<[Dir]> = (0..=parts.len())
            .rev()
            .map(|n| {
                let rel = parts[..n].join("/");
                // `root.join("")` would end in a `/`, which shows in reports.
                let abs = if rel.is_empty() {
                    self.root.clone()
                } else {
                    self.root.join(&rel)
                };
                Dir {
                    info: self.files.dir(&abs),
                    rel,
                }
            })
            .collect();
        read::lock(&self.chains).insert(dir, Arc::clone(&chain));
        Some((clean, chain))
    }

    fn strong(&self, dirs: &[Dir], sig: &Signals, notes: &mut Notes) -> Option<Use> {
        let used = |evidence: String, dir: &Dir, file: &str| {
            Some(Use::Used {
                evidence,
                strength: Strength::Strong,
                file: dir.info.abs.join(file),
                config_dir: dir.info.abs.clone(),
                args: Vec::new(),
            })
        };
        for d in dirs {
            if let Some(name) = sig.config_files.iter().find(|n| self.files.has(&d.info, n)) {
                return used(format!("{name} {}", d.at()), d, name);
            }
            if !sig.package_json_keys.is_empty() {
                let pj = &d.info.package_json;
                notes.bad(pj, d, "package.json");
                if let Some(key) = pj
                    .ok()
                    .and_then(|p| sig.package_json_keys.iter().find(|k| p.keys.contains(**k)))
                {
                    return used(
                        format!("package.json \"{key}\" {}", d.at()),
                        d,
                        "package.json",
                    );
                }
            }
            let pyproject = sig.pyproject_tables.iter().map(|t| ("pyproject.toml", *t));
            for (file, table) in pyproject.chain(sig.toml_tables.iter().copied()) {
                let t = self.files.toml(&d.info, file);
                notes.bad(&t, d, file);
                if t.ok().is_some_and(|t| read::has_table(t, table)) {
                    return used(format!("{file} [{table}] {}", d.at()), d, file);
                }
            }
            for (file, section) in sig.ini_sections {
                let ini = self.files.ini(&d.info, file);
                notes.bad(&ini, d, file);
                if ini.ok().is_some_and(|s| s.iter().any(|s| s == section)) {
                    return used(format!("{file} [{section}] {}", d.at()), d, file);
                }
            }
        }
        None
    }

    /// Calls `f` with the lint-staged configuration nearest to the file (the deepest directory
    /// that has one, package.json's key first), if any. `f` gets the directories from the
    /// configuration's up to the root.
    fn with_lint_staged(
        &self,
        dirs: &[Dir],
        f: impl FnOnce(&[Dir], &str, Result<&LintStaged, &str>),
    ) {
        for (i, d) in dirs.iter().enumerate() {
            let at = &dirs[i..];
            if let Loaded::Ok(pj) = &d.info.package_json
                && let Some(cfg) = &pj.lint_staged
            {
                return f(at, "package.json", cfg.as_ref().map_err(String::as_str));
            }
            match &d.info.lint_staged {
                None | Some((_, Loaded::Absent)) => {}
                Some((name, Loaded::Bad(why))) => return f(at, name, Err(why)),
                Some((name, Loaded::Ok(cfg))) => return f(at, name, Ok(cfg)),
            }
        }
    }

    fn lint_staged(
        &self,
        rel: &str,
        dirs: &[Dir],
        sig: &Signals,
        notes: &mut Notes,
    ) -> Option<Use> {
        if sig.commands.is_empty() {
            return None;
        }
        let mut found = None;
        self.with_lint_staged(dirs, |at, name, cfg| {
            let d = &at[0];
            let cfg = match cfg {
                Ok(cfg) => cfg,
                Err(why) => {
                    notes.unreadable(format!(
                        "the lint-staged configuration {} could not be read ({why})",
                        d.rel_file(name)
                    ));
                    return;
                }
            };
            let file = rel_to(rel, &d.rel);
            let scripts = nearest_scripts(at);
            let mut elsewhere = Vec::new();
            for entry in &cfg.entries {
                let Some(ran) = runs_any(&entry.commands, sig.commands, scripts) else {
                    continue;
                };
                if entry.matches(file) {
                    found = Some(Use::Used {
                        evidence: format!(
                            "lint-staged `{}` in {} runs {ran}",
                            entry.key,
                            d.rel_file(name)
                        ),
                        strength: Strength::Medium,
                        file: d.info.abs.join(name),
                        config_dir: d.info.abs.clone(),
                        args: Vec::new(),
                    });
                    return;
                }
                elsewhere.push(format!("`{}`", entry.key));
            }
            if !elsewhere.is_empty() {
                notes.miss(format!(
                    "lint-staged ({}) runs it only on {}",
                    d.rel_file(name),
                    elsewhere.join(", ")
                ));
            }
        });
        found
    }

    fn pre_commit(&self, rel: &str, dirs: &[Dir], sig: &Signals, notes: &mut Notes) -> Option<Use> {
        if sig.precommit_ids.is_empty() && sig.commands.is_empty() {
            return None;
        }
        let name = ".pre-commit-config.yaml";
        let pc = self.files.precommit(&self.root);
        let pc = match &*pc {
            Loaded::Absent => return None,
            Loaded::Bad(why) => {
                notes.unreadable(format!(
                    "{name} could not be parsed and counts as absent ({why})"
                ));
                return None;
            }
            Loaded::Ok(pc) => pc,
        };
        let scripts = nearest_scripts(&dirs[dirs.len() - 1..]);
        for hook in &pc.hooks {
            let Some(what) = hook_runs(hook, sig, scripts) else {
                continue;
            };
            if pc.covers(hook, rel) {
                return Some(Use::Used {
                    evidence: format!("{name} {what}"),
                    strength: Strength::Medium,
                    file: self.root.join(name),
                    config_dir: self.root.clone(),
                    args: hook.args.clone(),
                });
            }
            let scope = hook.scope();
            notes.miss(if scope.is_empty() {
                format!("the pre-commit {what} does not cover this file")
            } else {
                format!("the pre-commit {what} does not cover this file ({scope})")
            });
        }
        None
    }

    fn scripts(&self, dirs: &[Dir], sig: &Signals, notes: &mut Notes) -> Option<Use> {
        if sig.commands.is_empty() {
            return None;
        }
        for d in dirs {
            let pj = &d.info.package_json;
            notes.bad(pj, d, "package.json");
            let Some(pj) = pj.ok() else { continue };
            for (script, tokens) in &pj.scripts {
                if let Some(cmd) = command::first_run(tokens, sig.commands) {
                    let at = if d.rel.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", d.at())
                    };
                    return Some(Use::Used {
                        evidence: format!("package.json scripts.{script} runs `{cmd}`{at}"),
                        strength: Strength::Medium,
                        file: d.info.abs.join("package.json"),
                        config_dir: d.info.abs.clone(),
                        args: Vec::new(),
                    });
                }
            }
        }
        None
    }
}

/// The scripts npm would run from the first of `dirs`: its nearest readable package.json.
fn nearest_scripts(dirs: &[Dir]) -> Option<&PackageJson> {
    dirs.iter().find_map(|d| d.info.package_json.ok())
}

/// How a command line was found to run a tool: `` `prettier` `` or
/// `` `npm run format` → scripts.format → `prettier` ``.
struct Ran {
    command: &'static str,
    via: Vec<String>,
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for script in &self.via {
            write!(f, "scripts.{script} → ")?;
        }
        write!(f, "`{}`", self.command)
    }
}

/// How deep `npm run a` → scripts.a → `npm run b` … is followed; also ends a cycle.
const SCRIPT_DEPTH: usize = 3;

/// The first of `commands` that one of `lines` runs, directly or through the package.json
/// scripts it calls.
fn runs_any(
    lines: &[Vec<String>],
    commands: &[&'static str],
    scripts: Option<&PackageJson>,
) -> Option<Ran> {
    lines
        .iter()
        .find_map(|l| runs_line(l, commands, scripts, SCRIPT_DEPTH))
}

fn runs_line(
    line: &[String],
    commands: &[&'static str],
    scripts: Option<&PackageJson>,
    depth: usize,
) -> Option<Ran> {
    if let Some(command) = command::first_run(line, commands) {
        return Some(Ran {
            command,
            via: Vec::new(),
        });
    }
    let pj = scripts.filter(|_| depth > 0)?;
    command::script_refs(line).into_iter().find_map(|name| {
        let (_, body) = pj.scripts.iter().find(|(n, _)| n == name)?;
        let mut ran = runs_line(body, commands, scripts, depth - 1)?;
        ran.via.insert(0, name.to_string());
        Some(ran)
    })
}

/// Is `hook` one of the declared hook ids, or does its `entry` run the tool? Says which.
fn hook_runs(hook: &Hook, sig: &Signals, scripts: Option<&PackageJson>) -> Option<String> {
    if hook.is_one_of(sig.precommit_ids) {
        return Some(format!("hook `{}`", hook.id));
    }
    let ran = runs_line(&hook.entry, sig.commands, scripts, SCRIPT_DEPTH)?;
    Some(format!("hook `{}` (entry runs {ran})", hook.id))
}

/// `rel` relative to the directory `dir` (which contains it).
fn rel_to<'a>(rel: &'a str, dir: &str) -> &'a str {
    if dir.is_empty() {
        rel
    } else {
        rel.strip_prefix(dir)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or(rel)
    }
}
