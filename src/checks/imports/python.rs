//! Dangling Python imports: `from .config import load`, `from . import tools`, `import pkg.mod`,
//! `from pkg import mod` whose module (or submodule) the patch moves or deletes, or which a moved
//! file no longer reaches from its new folder.
//!
//! Resolution, without running Python: a relative import from the importing file's package
//! (one folder up per extra dot); an absolute one from the nearest folder, among the importing
//! file's folder, its parents and `src/`, that holds the top-level name as a package (a folder
//! with `__init__.py`). A module is `name.py`, `name.pyi` or `name/__init__.py(i)` there.
//!
//! Judged only where the answer is sure: an absolute import whose top-level name is no package of
//! the repository (the standard library, an installed distribution, a single-file module that
//! may shadow one) is not; a name taken `from` a package counts as a submodule only if it was
//! one before the patch, and is not dangling while the package's `__init__` still mentions it
//! (a re-export); an import inside a `try` that catches `ImportError` (or any exception) expects
//! to fail and is not judged. A relative import the patch writes is judged too, unless an
//! extension module or its Cython source stands where the module would.

use std::collections::BTreeMap;

use super::States;
use crate::checks::checker::Input;
use crate::checks::finding::RawFinding;
use crate::syntax::imports::{self, PythonImport};
use crate::syntax::{Language, languages, trees};

/// Where an import's module is in one state.
#[derive(Debug, PartialEq, Eq)]
enum Located {
    /// The folder it was looked up from (the package root or the relative base) and its file.
    Found {
        root: String,
        file: String,
    },
    Missing {
        root: String,
    },
    NotJudged,
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// `parts` as a module under `root`: its file, if one exists.
fn find(root: &str, parts: &[String], exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let path = join(root, &parts.join("/"));
    [
        format!("{path}.py"),
        format!("{path}.pyi"),
        format!("{path}/__init__.py"),
        format!("{path}/__init__.pyi"),
    ]
    .into_iter()
    .find(|p| exists(p))
}

/// The folders an absolute import is looked up from: the file's folder and its parents, nearest
/// first, then `src`.
fn roots(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut d = dir.to_string();
    loop {
        out.push(d.clone());
        match d.rsplit_once('/') {
            Some((up, _)) => d = up.to_string(),
            None if !d.is_empty() => d = String::new(),
            None => break,
        }
    }
    if !out.iter().any(|r| r == "src") {
        out.push("src".to_string());
    }
    out
}

/// The relative base of `dots` from `dir`; `None` above the repository.
fn base(dir: &str, dots: usize) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for _ in 1..dots {
        parts.pop()?;
    }
    Some(parts.join("/"))
}

/// Where `imp` (in a file of folder `dir`) leads in the state `exists` describes. `root`: the
/// folder an absolute import was found from in the other state, to look in the same place.
fn locate(
    dir: &str,
    imp: &PythonImport,
    root: Option<&str>,
    exists: &dyn Fn(&str) -> bool,
) -> Located {
    let found = |root: String| match find(&root, &imp.module, exists) {
        Some(file) => Located::Found { root, file },
        None => Located::Missing { root },
    };
    if imp.dots > 0 {
        let Some(root) = base(dir, imp.dots) else {
            return Located::NotJudged;
        };
        if imp.module.is_empty() {
            // `from . import x`: the package itself, whether or not it has an `__init__`.
            let file = join(&root, "__init__.py");
            return Located::Found { root, file };
        }
        return found(root);
    }
    let Some(top) = imp.module.first() else {
        return Located::NotJudged;
    };
    if let Some(r) = root {
        return found(r.to_string());
    }
    let package = |r: &str| {
        ["__init__.py", "__init__.pyi"]
            .iter()
            .any(|i| exists(&join(r, &format!("{top}/{i}"))))
    };
    match roots(dir).into_iter().find(|r| package(r)) {
        Some(r) => found(r),
        None => Located::NotJudged,
    }
}

/// A submodule `name` of the package whose file is `init` (`…/__init__.py`).
fn submodule(init: &str, name: &str, exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let dir = super::folder(init);
    find(dir, &[name.to_string()], exists)
}

/// Whether `imp`'s module under `root` is an extension module or its Cython source on disk
/// (`_speedups.cpython-312-x86_64-linux-gnu.so`, `_speedups.pyd`, `_speedups.pyx`), which
/// Python imports though no `.py` is there.
fn compiled(states: &States, root: &str, imp: &PythonImport) -> bool {
    let Some((last, parents)) = imp.module.split_last() else {
        return false;
    };
    let dir = states.repo_root.join(join(root, &parents.join("/")));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.strip_prefix(last.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|rest| {
                [".so", ".pyd"].iter().any(|x| rest.ends_with(x)) || rest == "pyx" || rest == "so"
            })
    })
}

/// Whether the folder `imp`'s module would be in exists after the patch (`from .gen.schema`
/// with no `gen/`: generated code not generated here, not judged).
fn in_a_folder(states: &States, root: &str, imp: &PythonImport) -> bool {
    let parents = &imp.module[..imp.module.len().saturating_sub(1)];
    states.folder_after(&join(root, &parents.join("/")))
}

fn is_package(file: &str) -> bool {
    file.ends_with("/__init__.py") || file.ends_with("/__init__.pyi") || file == "__init__.py"
}

/// The dangling imports of one Python file: `dir_before` is the folder its original stood in
/// and `original` that text's imports (empty for a file the patch did not change: then its
/// imports are both), `dir_after` its folder after the patch.
fn judge(
    states: &States,
    rel: &str,
    dir_before: &str,
    dir_after: &str,
    after: &[PythonImport],
    original: Option<&[PythonImport]>,
) -> Vec<RawFinding> {
    let before_exists = |p: &str| states.before(p);
    let after_exists = |p: &str| states.after(p);
    let was: BTreeMap<String, &PythonImport> = original
        .unwrap_or(after)
        .iter()
        .map(|i| (i.written(), i))
        .collect();
    let mut out = Vec::new();
    for imp in after.iter().filter(|i| !i.guarded) {
        let written = imp.written();
        let before = was
            .get(&written)
            .map(|_| locate(dir_before, imp, None, &before_exists));
        // An absolute import is looked for where it was found before.
        let root = match &before {
            Some(Located::Found { root, .. }) if imp.dots == 0 => Some(root.as_str()),
            _ => None,
        };
        let now = locate(dir_after, imp, root, &after_exists);
        match (&before, &now) {
            (Some(Located::Found { file, .. }), Located::Missing { .. }) => {
                out.push(finding(
                    rel,
                    imp,
                    &written,
                    &format!("it named `{file}` before the patch"),
                ));
                continue;
            }
            // A relative import the patch wrote, to a module that is not there (not even built
            // from C or Cython beside it).
            (None, Located::Missing { root })
                if imp.dots > 0
                    && !compiled(states, root, imp)
                    && in_a_folder(states, root, imp) =>
            {
                out.push(finding(rel, imp, &written, "the patch wrote it"));
                continue;
            }
            _ => {}
        }
        // Submodules taken from a package that is still there.
        let (Some(Located::Found { file: was_init, .. }), Located::Found { file: init, .. }) =
            (&before, &now)
        else {
            continue;
        };
        if !is_package(was_init) || !is_package(init) {
            continue;
        }
        let init_text = states.after_text(init).unwrap_or_default();
        for name in &imp.names {
            let Some(was_file) = submodule(was_init, name, &before_exists) else {
                continue;
            };
            if submodule(init, name, &after_exists).is_some() || mentions(&init_text, name) {
                continue;
            }
            let sep = if written.ends_with('.') { "" } else { "." };
            out.push(finding(
                rel,
                imp,
                &format!("{written}{sep}{name}"),
                &format!("it named `{was_file}` before the patch"),
            ));
        }
    }
    out
}

/// Whether `text` holds `name` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(word)
            && !text[i + name.len()..].chars().next().is_some_and(word)
    })
}

fn finding(rel: &str, imp: &PythonImport, module: &str, why: &str) -> RawFinding {
    super::dangling(rel, (imp.line, imp.column), module, "module", why)
}

/// Step 1 for a changed, created or moved Python file.
pub(super) fn in_written_file(states: &States, i: &Input) -> Vec<RawFinding> {
    let Some(text) = i.text.filter(|t| !super::imports_untouched(states, i, t)) else {
        return Vec::new();
    };
    let Some(tree) = trees::tree(Language::Python, text, i.before) else {
        return Vec::new();
    };
    let mut after = imports::python(text, &tree);
    if after.is_empty() {
        return Vec::new();
    }
    // The original's imports (its tree is the syntax gate's, cached). A created file has none:
    // only its relative imports are judged.
    let original: Vec<PythonImport> = i
        .before
        .and_then(|b| Some(imports::python(b, &trees::tree(Language::Python, b, None)?)))
        .unwrap_or_default();
    if states.keeps_every_file() && i.from.is_none() {
        // Nothing removed and the file where it was: only the imports the patch wrote can fail.
        after.retain(|a| {
            !original
                .iter()
                .any(|o| o.written() == a.written() && o.names == a.names)
        });
        if after.is_empty() {
            return Vec::new();
        }
    }
    let dir_before = super::folder(i.from.unwrap_or(i.rel));
    judge(
        states,
        i.rel,
        dir_before,
        super::folder(i.rel),
        &after,
        Some(&original),
    )
}

/// Step 2 for a Python file the patch does not write.
pub(super) fn in_other_file(states: &States, rel: &str, text: &str) -> Vec<RawFinding> {
    let Some(tree) = languages::parse(Language::Python, text) else {
        return Vec::new();
    };
    let found = imports::python(text, &tree);
    let dir = super::folder(rel);
    judge(states, rel, dir, dir, &found, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imp(dots: usize, module: &str) -> PythonImport {
        PythonImport {
            dots,
            module: module
                .split('.')
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect(),
            names: Vec::new(),
            line: 1,
            column: 1,
            guarded: false,
        }
    }

    #[test]
    fn modules_found_as_python_finds_them_and_nothing_judged_on_a_guess() {
        let files = [
            "src/app/__init__.py",
            "src/app/config.py",
            "src/app/db/__init__.py",
            "src/app/db/models.pyi",
            "tests/helpers.py",
            "json.py",
        ];
        let exists = |p: &str| files.contains(&p);
        let at = |dir: &str, i: &PythonImport| locate(dir, i, None, &exists);
        let found = |root: &str, file: &str| Located::Found {
            root: root.into(),
            file: file.into(),
        };
        assert_eq!(
            at("src/app", &imp(1, "config")),
            found("src/app", "src/app/config.py")
        );
        assert_eq!(
            at("src/app/db", &imp(2, "config")),
            found("src/app", "src/app/config.py")
        );
        assert_eq!(
            at("src/app/db", &imp(1, "models")),
            found("src/app/db", "src/app/db/models.pyi")
        );
        assert_eq!(
            at("src/app", &imp(1, "gone")),
            Located::Missing {
                root: "src/app".into()
            }
        );
        assert_eq!(
            at("src/app", &imp(1, "")),
            found("src/app", "src/app/__init__.py")
        );
        assert_eq!(
            at("src", &imp(3, "x")),
            Located::NotJudged,
            "above the repository"
        );
        assert_eq!(
            at("tests", &imp(0, "app.db")),
            found("src", "src/app/db/__init__.py")
        );
        assert_eq!(
            at("src/app", &imp(0, "app.config")),
            found("src", "src/app/config.py")
        );
        assert_eq!(
            at("tests", &imp(0, "app.nothing")),
            Located::Missing { root: "src".into() }
        );
        assert_eq!(
            at("tests", &imp(0, "helpers")),
            Located::NotJudged,
            "a module, not a package"
        );
        assert_eq!(
            at("", &imp(0, "json")),
            Located::NotJudged,
            "may be the standard library's"
        );
        assert_eq!(at("tests", &imp(0, "requests")), Located::NotJudged);
        assert_eq!(
            submodule("src/app/__init__.py", "config", &exists),
            Some("src/app/config.py".into())
        );
        assert_eq!(
            submodule("src/app/__init__.py", "db", &exists),
            Some("src/app/db/__init__.py".into())
        );
        assert!(
            mentions("from .x import config\n", "config") && !mentions("configs = 1", "config")
        );
    }
}
