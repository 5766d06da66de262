//! Dangling imports, built in (part of the `references` check): a relative module specifier of
//! a JavaScript or TypeScript file (`import … from "./util.js"`, `require("../lib")`), or a
//! Python import of a module of the repository ([`python`]), that named a file before the patch
//! and names none after it. The patch moved or deleted the module, moved
//! the importing file away from it, or rewrote the specifier (a rename that also hit the text of
//! a path). Linters do not see it (eslint resolves no imports by default) and a compiler only in
//! the files it is asked to build.
//!
//! How:
//! Scripts are JS/TS files and the `<script>` blocks of Vue and Svelte components ([`scripts`]).
//!
//! 1. Every changed or created script: its specifiers (the relative ones and the aliases,
//!    [`specifiers`]),
//!    resolved from its folder against the patched state (the working tree, with the patch's
//!    files written and its removed files gone). One that resolves to nothing is a finding,
//!    unless the original text had the same specifier and it resolved to nothing there too
//!    (from the folder the file stood in: a moved file's old one).
//! 2. When the patch removes files (deletes or moves them): every other JS/TS file of the
//!    repository whose text holds a removed file's name is parsed, and a specifier that resolved
//!    before and resolves to nothing after is a finding.
//!
//! Resolution is node's and TypeScript's for relative paths: the path as written, then with each
//! of the usual extensions, then a folder's `index` file or `package.json`; TypeScript's `./x.js`
//! also names `./x.ts` (and `.jsx`/`.mjs`/`.cjs` their TypeScript forms). A bare specifier is
//! followed where the project gives it a meaning (`tsconfig.json` / `jsconfig.json` `paths` and
//! `baseUrl`, `package.json` `imports`: [`aliases`], read as the patch leaves them), each path
//! it names tried as a relative one is; otherwise it is a package and not judged. A specifier that leaves the
//! repository is not judged.
//!
//! Invariant: a specifier that named nothing before the patch (a generated file not built yet,
//! a path only a bundler's configuration gives meaning) is never reported, so an unrelated
//! patch passes.

mod aliases;
mod python;
mod scripts;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;

use super::checker::Input;
use super::finding::{RawFinding, Severity};
use crate::syntax::Language;
use crate::syntax::imports::{self, Specifier};
use scripts::Scripts;
pub(crate) use scripts::is_component;

/// What is tried after the path as written, in this order (node's, TypeScript's, and the
/// bundlers' usual ones).
const EXTENSIONS: &[&str] = &[
    ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".d.ts", ".json", ".node",
    ".vue", ".svelte",
];

/// TypeScript resolves a JavaScript extension in a specifier to its TypeScript source.
const TS_FOR_JS: &[(&str, &[&str])] = &[
    (".js", &[".ts", ".tsx", ".d.ts"]),
    (".jsx", &[".tsx"]),
    (".mjs", &[".mts", ".d.mts"]),
    (".cjs", &[".cts", ".d.cts"]),
];

/// Which state of the repository a path is looked up in.
struct States<'a> {
    repo_root: &'a Path,
    /// Files the patch removes (deleted, moved from).
    removed: BTreeSet<&'a str>,
    /// The files the patch writes (changed, created, moved to), with their new texts.
    texts: BTreeMap<&'a str, &'a str>,
    /// Files whose state differs from the working tree (`check --staged`: the index's; `apply
    /// --branch`: the branch's), `None` where that state lacks them.
    context: &'a super::Context,
    /// Every file the patch writes or removes, JSON ones too (`None`: gone); empty when the
    /// state checked is on disk (`check`).
    patched: BTreeMap<&'a str, Option<&'a [u8]>>,
    /// The aliases of each folder, read from the configuration after the patch.
    aliases: aliases::Configs,
}

impl States<'_> {
    /// The aliases (`tsconfig.json` `paths` and `baseUrl`, `package.json` `imports`) governing
    /// files of `folder`.
    /// Both resolutions, before and after, go by the configuration after the patch: a move whose
    /// `paths` or `imports` follow it is judged by where they now lead.
    fn aliases(&self, folder: &str) -> Option<std::sync::Arc<aliases::Aliases>> {
        self.aliases
            .for_folder(folder, &|rel: &str| match self.patched.get(rel) {
                Some(content) => content.and_then(|b| String::from_utf8(b.to_vec()).ok()),
                None => self.after_text(rel),
            })
    }

    /// Whether a package `spec` could name is installed in `node_modules` of `dir` or a folder
    /// above it, up to the repository's top (on disk: packages are not patched).
    fn installed(&self, dir: &str, spec: &str) -> bool {
        let mut parts = spec.split('/');
        let first = parts.next().unwrap_or_default();
        let name = match (first.starts_with('@'), parts.next()) {
            (true, Some(second)) => format!("{first}/{second}"),
            _ => first.to_string(),
        };
        let mut at = Some(dir);
        while let Some(d) = at {
            let folder = self.repo_root.join(d).join("node_modules").join(&name);
            if folder.symlink_metadata().is_ok() {
                return true;
            }
            at = (!d.is_empty()).then(|| d.rsplit_once('/').map_or("", |(p, _)| p));
        }
        false
    }

    fn on_disk(&self, rel: &str) -> bool {
        std::fs::metadata(self.repo_root.join(rel)).is_ok_and(|m| m.is_file())
    }

    /// Before the change, for a path that names nothing after it (the only paths asked): what
    /// the change removes, or what is there. `apply` checks before writing, so the disk is the
    /// state before; `check` after, but a path with no file after it has none on disk unless
    /// the change removed it. A context speaks for its paths (`--staged`: a file the index lacks
    /// was not committed either; `--branch`: the branch's files).
    fn before(&self, rel: &str) -> bool {
        self.removed.contains(rel)
            || match self.context.get(rel) {
                Some(state) => state.is_some(),
                None => self.on_disk(rel),
            }
    }

    fn after(&self, rel: &str) -> bool {
        if self.texts.contains_key(rel) {
            return true;
        }
        if self.removed.contains(rel) {
            return false;
        }
        match self.context.get(rel) {
            Some(state) => state.is_some(),
            None => self.on_disk(rel),
        }
    }

    /// Whether the patch removes no file: then every file that existed still does.
    fn keeps_every_file(&self) -> bool {
        self.removed.is_empty()
    }

    /// Whether folder `rel` exists after the patch: on disk, or holding a file it writes.
    fn folder_after(&self, rel: &str) -> bool {
        self.repo_root.join(rel).is_dir()
            || self
                .texts
                .keys()
                .any(|w| *w != rel && crate::repo::within(w, rel))
    }

    /// A file's text after the patch, if it exists then.
    fn after_text(&self, rel: &str) -> Option<String> {
        if let Some(t) = self.texts.get(rel) {
            return Some(t.to_string());
        }
        if self.removed.contains(rel) {
            return None;
        }
        match self.context.get(rel) {
            Some(state) => state.and_then(|b| String::from_utf8(b.to_vec()).ok()),
            None => read(self.repo_root, rel),
        }
    }
}

/// Whether the patch could have written an import into `i`: it removes no file, the file stays
/// where it was, and the lines it changed hold none of `import`, `from`, `require` or a quoted
/// `./` or `../` (a module path is on such a line, or is one); then nothing in `i` needs looking
/// up, not even its tree: with every file still there, only a module path the patch wrote can
/// name nothing.
fn imports_untouched(states: &States, i: &Input, text: &str) -> bool {
    let Some(before) = i.before else {
        return false;
    };
    if !states.keeps_every_file() || i.from.is_some() {
        return false;
    }
    // The changed lines of the new text, whole, around the one edit that turns `before` into it.
    let edit = crate::syntax::languages::single_edit(before, text);
    let b = text.as_bytes();
    let start = b[..edit.start_byte]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |n| n + 1);
    let end = edit.new_end_byte;
    let end = b[end..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |n| end + n);
    let changed = &text[start.min(end)..end];
    ![
        "import", "from", "require", "'./", "\"./", "'../", "\"../", "mock(", "Mock(", "Actual(",
    ]
    .iter()
    .any(|w| changed.contains(w))
}

fn read(repo_root: &Path, rel: &str) -> Option<String> {
    String::from_utf8(std::fs::read(repo_root.join(rel)).ok()?).ok()
}

/// Where a specifier leads.
#[derive(Debug, PartialEq, Eq)]
enum Resolved {
    /// The file it names.
    File(String),
    Nothing,
    /// It leaves the repository (or cannot be read as a path): not judged.
    Outside,
}

/// Resolves `spec` from the folder `dir` (repository-relative, "" for the root), a file existing
/// where `exists` says.
fn resolve(dir: &str, spec: &str, exists: &dyn Fn(&str) -> bool) -> Resolved {
    let Some(base) = joined(dir, spec) else {
        return Resolved::Outside;
    };
    let mut tried: Vec<String> = vec![base.clone()];
    tried.extend(EXTENSIONS.iter().map(|e| format!("{base}{e}")));
    for (js, ts) in TS_FOR_JS {
        if let Some(stem) = base.strip_suffix(js) {
            tried.extend(ts.iter().map(|e| format!("{stem}{e}")));
        }
    }
    tried.extend(EXTENSIONS.iter().map(|e| format!("{base}/index{e}")));
    tried.push(format!("{base}/package.json"));
    tried
        .into_iter()
        .find(|p| exists(p))
        .map_or(Resolved::Nothing, Resolved::File)
}

/// Resolves `spec` written in a file of folder `dir`, in the state before the patch or after
/// it: a relative path from `dir`, an alias through `aliases` (each path it names tried in
/// turn, as a relative path is); anything else (a package) is not judged, nor an alias a package
/// installed beside the file could answer (TypeScript and node try `node_modules` when the alias
/// names no file).
fn resolve_spec(
    states: &States,
    dir: &str,
    spec: &str,
    aliases: Option<&aliases::Aliases>,
    before: bool,
) -> Resolved {
    let exists = |p: &str| {
        if before {
            states.before(p)
        } else {
            states.after(p)
        }
    };
    if imports::is_relative(spec) {
        return resolve(dir, spec, &exists);
    }
    let Some(candidates) = aliases.and_then(|a| a.candidates(spec)) else {
        return Resolved::Outside;
    };
    if aliases::could_be_package(spec) && states.installed(dir, spec) {
        return Resolved::Outside;
    }
    let mut outside = false;
    for c in candidates {
        match resolve("", &c, &exists) {
            found @ Resolved::File(_) => return found,
            Resolved::Outside => outside = true,
            Resolved::Nothing => {}
        }
    }
    if outside {
        Resolved::Outside
    } else {
        Resolved::Nothing
    }
}

/// The specifiers of `text` worth resolving in a file of `dir`: the relative ones, and with
/// `aliases` the ones an alias applies to.
fn specifiers(
    lang: Language,
    text: &str,
    tree: &tree_sitter::Tree,
    aliases: Option<&aliases::Aliases>,
) -> Vec<Specifier> {
    match aliases {
        None => imports::relative_specifiers(lang, text, tree),
        Some(a) => {
            let mut all = imports::module_specifiers(lang, text, tree);
            all.retain(|s| imports::is_relative(&s.text) || a.candidates(&s.text).is_some());
            all
        }
    }
}

/// `spec` joined to the folder `dir`, without its query: `None` when it leaves the repository.
fn joined(dir: &str, spec: &str) -> Option<String> {
    let spec = spec.split(['?', '#']).next().unwrap_or(spec);
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in spec.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn folder(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The dangling imports the patch leaves: findings with repository-relative paths.
pub fn check(
    repo_root: &Path,
    files: &[Input],
    removed: &[(String, std::sync::Arc<Vec<u8>>)],
    context: &super::Context,
    patched: &[super::ContextFile],
    tracked: &super::references::Tracked,
) -> Result<Vec<RawFinding>, String> {
    let states = States {
        repo_root,
        removed: removed.iter().map(|(r, _)| r.as_str()).collect(),
        texts: files
            .iter()
            .filter_map(|i| Some((i.rel, i.text?)))
            .collect(),
        context,
        patched: patched
            .iter()
            .map(|(rel, content)| (rel.as_str(), content.as_deref().map(Vec::as_slice)))
            .collect(),
        aliases: aliases::Configs::default(),
    };
    let mut out: Vec<RawFinding> = files
        .par_iter()
        .flat_map_iter(|i| match Language::from_path(i.rel) {
            Some(Language::Python) => python::in_written_file(&states, i),
            _ => match Scripts::of(i.rel) {
                Some(kind) => in_written_file(&states, i, kind),
                None => Vec::new(),
            },
        })
        .collect();
    out.extend(in_other_files(&states, files, removed, tracked)?);
    Ok(out)
}

/// Step 1: a changed, created or moved file's specifiers.
fn in_written_file(states: &States, i: &Input, kind: Scripts) -> Vec<RawFinding> {
    let Some(text) = i.text.filter(|t| !imports_untouched(states, i, t)) else {
        return Vec::new();
    };
    let dir = folder(i.rel);
    let aliases = states.aliases(dir);
    // Through the tree cache: the syntax gate and the references check parse it too.
    let mut after = kind.specifiers(text, Some(i.before), &|l, t, tree| {
        specifiers(l, t, tree, aliases.as_deref())
    });
    if after.is_empty() {
        return Vec::new();
    }
    // The original's specifiers (its tree is the syntax gate's, cached), from the folder it
    // stood in.
    let was_dir = folder(i.from.unwrap_or(i.rel));
    let was_aliases = if was_dir == dir {
        aliases.clone()
    } else {
        states.aliases(was_dir)
    };
    let original: Vec<Specifier> = i
        .before
        .map(|b| {
            kind.specifiers(b, Some(None), &|l, t, tree| {
                specifiers(l, t, tree, was_aliases.as_deref())
            })
        })
        .unwrap_or_default();
    if states.keeps_every_file() && i.from.is_none() {
        // Nothing removed and the file where it was: what resolved still does, so only what
        // the patch wrote needs looking up (an edit that leaves the imports alone costs none).
        after.retain(|s| !original.iter().any(|o| o.text == s.text));
    }
    let broken: Vec<&Specifier> = after
        .iter()
        .filter(|s| {
            resolve_spec(states, dir, &s.text, aliases.as_deref(), false) == Resolved::Nothing
        })
        .collect();
    if broken.is_empty() {
        return Vec::new();
    }
    let before: BTreeMap<String, Resolved> = original
        .into_iter()
        .filter(|s| broken.iter().any(|x| x.text == s.text))
        .map(|s| {
            let r = resolve_spec(states, was_dir, &s.text, was_aliases.as_deref(), true);
            (s.text, r)
        })
        .collect();
    broken
        .into_iter()
        .filter_map(|s| {
            let was = before.get(&s.text);
            let why = match was {
                // Named nothing before either: not the patch's doing.
                Some(Resolved::Nothing) | Some(Resolved::Outside) => return None,
                Some(Resolved::File(p)) => format!("it named `{p}` before the patch"),
                // Written by the patch into a folder that is not there (`../dist/x.js`: build
                // output not built here), or an alias a package could answer (TypeScript tries
                // `node_modules` when the aliases name no file): not judged.
                None if !written_here(states, dir, &s.text, aliases.as_deref()) => return None,
                None => "the patch wrote it".to_string(),
            };
            Some(finding(i.rel, s, &why))
        })
        .collect()
}

/// Whether a specifier the patch wrote, which names nothing, names a place in the repository
/// that exists: a relative path into an existing folder, or an alias the project defines (not
/// `baseUrl` alone: `astro:content`, a package, a bundler's virtual module are tried there too)
/// that no package could answer and whose first path's folder exists.
fn written_here(
    states: &States,
    dir: &str,
    spec: &str,
    aliases: Option<&aliases::Aliases>,
) -> bool {
    let path = if imports::is_relative(spec) {
        joined(dir, spec)
    } else if aliases::could_be_package(spec) || !aliases.is_some_and(|a| a.defines(spec)) {
        None
    } else {
        aliases
            .and_then(|a| a.candidates(spec))
            .and_then(|c| joined("", c.first()?))
    };
    path.is_some_and(|p| states.folder_after(folder(&p)))
}

/// Step 2: files the patch does not write that import a file it removes.
fn in_other_files(
    states: &States,
    files: &[Input],
    removed: &[(String, std::sync::Arc<Vec<u8>>)],
    tracked: &super::references::Tracked,
) -> Result<Vec<RawFinding>, String> {
    // What a specifier of a removed file holds: `/` and its file name without extension, or
    // its folder's name for an index file (which `.`, `..`, `./` and `../` name too). Only files
    // that hold one are parsed.
    let mut names: BTreeSet<String> = BTreeSet::new();
    // A Python module is named by its file name without extension, a package by its folder's.
    let mut py_names: BTreeSet<String> = BTreeSet::new();
    for (rel, _) in removed {
        let file = rel.rsplit('/').next().unwrap_or(rel);
        let stem = file.split('.').next().unwrap_or(file);
        if matches!(Language::from_path(rel), Some(Language::Python)) {
            let name = match stem {
                "__init__" => folder(rel).rsplit('/').next().unwrap_or_default(),
                s => s,
            };
            if !name.is_empty() {
                py_names.insert(name.to_string());
            }
            continue;
        }
        if stem == "index" {
            if let Some(d) = folder(rel).rsplit('/').next().filter(|d| !d.is_empty()) {
                names.insert(format!("/{d}"));
            }
            for q in ['\'', '"'] {
                for dots in [".", "..", "./", "../"] {
                    names.insert(format!("{q}{dots}{q}"));
                }
            }
        } else if !stem.is_empty() {
            names.insert(format!("/{stem}"));
        }
        // A bare specifier through `baseUrl` (`"lib/util"`, `"util"`) starts at the quote.
        let bare = if stem == "index" {
            folder(rel).rsplit('/').next().unwrap_or_default()
        } else {
            stem
        };
        if !bare.is_empty() {
            for q in ['\'', '"'] {
                names.insert(format!("{q}{bare}"));
            }
        }
    }
    if names.is_empty() && py_names.is_empty() {
        return Ok(Vec::new());
    }
    let ac = AhoCorasick::new(&names).map_err(|e| e.to_string())?;
    let py_ac = AhoCorasick::new(&py_names).map_err(|e| e.to_string())?;
    let written: BTreeSet<&str> = files.iter().map(|i| i.rel).collect();
    let paths = tracked.get()?;
    let unwritten =
        |rel: &&String| !written.contains(rel.as_str()) && !states.removed.contains(rel.as_str());
    let mut out: Vec<RawFinding> = Vec::new();
    if !py_names.is_empty() {
        out.par_extend(
            paths
                .par_iter()
                .filter(unwritten)
                .filter(|rel| matches!(Language::from_path(rel), Some(Language::Python)))
                .flat_map_iter(|rel| {
                    states
                        .after_text(rel)
                        .filter(|t| py_ac.is_match(t))
                        .map(|t| python::in_other_file(states, rel, &t))
                        .unwrap_or_default()
                }),
        );
    }
    if names.is_empty() {
        return Ok(out);
    }
    out.par_extend(
        paths
            .par_iter()
            .filter(unwritten)
            .filter_map(|rel| Some((rel, Scripts::of(rel)?)))
            .flat_map_iter(|(rel, kind)| {
                let text = states.after_text(rel).filter(|t| ac.is_match(t));
                let dir = folder(rel);
                let aliases = text.as_ref().and_then(|_| states.aliases(dir));
                let aliases = aliases.as_deref();
                let specs = text
                    .as_deref()
                    .map(|t| {
                        kind.specifiers(t, None, &|l, t, tree| specifiers(l, t, tree, aliases))
                    })
                    .unwrap_or_default();
                specs
                    .into_iter()
                    .filter_map(|s| {
                        let Resolved::File(was) = resolve_spec(states, dir, &s.text, aliases, true)
                        else {
                            return None;
                        };
                        if resolve_spec(states, dir, &s.text, aliases, false) != Resolved::Nothing {
                            return None;
                        }
                        let why = format!("it named `{was}`, which the patch removes or moves");
                        Some(finding(rel, &s, &why))
                    })
                    .collect::<Vec<_>>()
            }),
    );
    Ok(out)
}

fn finding(rel: &str, s: &Specifier, why: &str) -> RawFinding {
    dangling(rel, (s.line, s.column), &s.text, "file", why)
}

/// The finding for an import at `at` (1-based line, column) in `rel` whose `module` names no
/// `what` (a file, a module) after the change, and `why` that is the change's doing.
fn dangling(rel: &str, at: (usize, usize), module: &str, what: &str, why: &str) -> RawFinding {
    RawFinding {
        path: rel.to_string(),
        line: at.0,
        column: at.1,
        rule: "dangling-import".into(),
        severity: Severity::Error,
        message: format!(
            "`{module}` names no {what} after the patch ({why}): move the import along with the \
             module, or fix its path"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(files: &'a [&'a str]) -> impl Fn(&str) -> Resolved + 'a {
        move |spec: &str| {
            let (dir, spec) = spec.split_once(' ').expect("DIR SPEC");
            resolve(dir, spec, &|p| files.contains(&p))
        }
    }

    #[test]
    fn only_an_edit_of_an_import_line_has_its_imports_looked_up() {
        static NO_CONTEXT: std::sync::LazyLock<crate::checks::Context> =
            std::sync::LazyLock::new(crate::checks::Context::none);
        let states = |removed: &'static [&'static str]| States {
            repo_root: Path::new("/nonexistent"),
            removed: removed.iter().copied().collect(),
            texts: BTreeMap::new(),
            context: &NO_CONTEXT,
            patched: BTreeMap::new(),
            aliases: aliases::Configs::default(),
        };
        let before = "import {\n  a,\n  b,\n} from './x.js';\n\nconst n = 1;\n";
        let untouched = |after: &str, from: Option<&'static str>, removed| {
            let i = Input {
                rel: "src/m.js",
                real: Path::new("/nonexistent/src/m.js"),
                text: Some(after),
                before: Some(before),
                from,
            };
            imports_untouched(&states(removed), &i, after)
        };
        assert!(untouched(&before.replace("n = 1", "n = 2"), None, &[]));
        assert!(
            !untouched(&before.replace("./x.js", "./y.js"), None, &[]),
            "the `from` line"
        );
        assert!(
            !untouched(&before.replace("  b,\n", ""), None, &[]),
            "next to `from`"
        );
        let split = "import { a } from\n  './x.js';\n";
        let i = Input {
            rel: "src/m.js",
            real: Path::new("/nonexistent/src/m.js"),
            text: None,
            before: Some(split),
            from: None,
        };
        let moved = split.replace("./x.js", "./y.js");
        assert!(
            !imports_untouched(&states(&[]), &i, &moved),
            "a path on a line of its own"
        );
        assert!(
            !untouched(&before.replace("n = 1", "n = 2"), None, &["src/x.js"]),
            "a removal"
        );
        assert!(
            !untouched(&before.replace("n = 1", "n = 2"), Some("old/m.js"), &[]),
            "a move"
        );
        assert!(!untouched(
            &format!("{before}const r = require('./z');\n"),
            None,
            &[]
        ));
    }

    #[test]
    fn resolution_as_node_and_typescript_read_a_relative_path() {
        let files = [
            "src/a.js",
            "src/b.ts",
            "src/c/index.tsx",
            "src/d.json",
            "src/e/package.json",
            "src/f.d.ts",
            "src/g.mts",
            "lib/h.css",
        ];
        let r = with(&files);
        let file = |p: &str| Resolved::File(p.to_string());
        assert_eq!(r("src ./a.js"), file("src/a.js"));
        assert_eq!(r("src ./a"), file("src/a.js"));
        assert_eq!(
            r("src ./b.js"),
            file("src/b.ts"),
            "TypeScript's .js for .ts"
        );
        assert_eq!(r("src ./b"), file("src/b.ts"));
        assert_eq!(r("src ./c"), file("src/c/index.tsx"));
        assert_eq!(r("src ./c/"), file("src/c/index.tsx"));
        assert_eq!(r("src ./d.json"), file("src/d.json"));
        assert_eq!(r("src ./e"), file("src/e/package.json"));
        assert_eq!(r("src ./f.js"), file("src/f.d.ts"));
        assert_eq!(r("src ./g.mjs"), file("src/g.mts"));
        assert_eq!(r("src ../lib/h.css"), file("lib/h.css"));
        assert_eq!(r("src/c ../a?raw"), file("src/a.js"));
        assert_eq!(r("src/c ../../src/./a.js"), file("src/a.js"));
        assert_eq!(r("src ./missing"), Resolved::Nothing);
        assert_eq!(
            r("src ./a.ts"),
            Resolved::Nothing,
            "no .ts for .js the other way"
        );
        assert_eq!(r("src ../../outside"), Resolved::Outside);
        assert_eq!(r(" ."), Resolved::Outside);
    }
}
