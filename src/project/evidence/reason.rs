//! The sentence that says why a tool counts as not used: what was looked for (config files,
//! keys, tables, sections; scripts and hooks), what was seen instead (a lint-staged entry or
//! pre-commit hook that runs it on other files, an unreadable file), and whether it is at least a
//! dependency (weak evidence, never enough).

use super::read::{Files, Loaded};
use super::{Dir, Signals};

/// What was seen on the way to "not used": commands that run the tool on other files
/// (`misses`) and files that could not be read (`bad`). Kept in order, without repeats.
#[derive(Default)]
pub(super) struct Notes {
    misses: Vec<String>,
    bad: Vec<String>,
}

fn push_new(list: &mut Vec<String>, note: String) {
    if !list.contains(&note) {
        list.push(note);
    }
}

impl Notes {
    pub(super) fn miss(&mut self, note: String) {
        push_new(&mut self.misses, note);
    }

    pub(super) fn unreadable(&mut self, note: String) {
        push_new(&mut self.bad, note);
    }

    pub(super) fn bad<T>(&mut self, loaded: &Loaded<T>, dir: &Dir, name: &str) {
        if let Some(why) = loaded.bad() {
            self.unreadable(format!(
                "{} could not be read and counts as absent ({why})",
                dir.rel_file(name)
            ));
        }
    }
}

/// Why `sig` counts as not used for a file whose directories are `dirs`, as one sentence.
pub(super) fn why_not(files: &Files, dirs: &[Dir], sig: &Signals, notes: Notes) -> String {
    let mut looked = Vec::new();
    looked.extend(compress(sig.config_files));
    looked.extend(
        sig.package_json_keys
            .iter()
            .map(|k| format!("package.json \"{k}\"")),
    );
    looked.extend(
        sig.pyproject_tables
            .iter()
            .map(|t| format!("pyproject.toml [{t}]")),
    );
    looked.extend(sig.toml_tables.iter().map(|(f, t)| format!("{f} [{t}]")));
    looked.extend(sig.ini_sections.iter().map(|(f, s)| format!("{f} [{s}]")));
    let mut why = prefix(sig);
    why.push_str("no configuration");
    if !looked.is_empty() {
        why.push_str(&format!(" ({})", looked.join(", ")));
    }
    if !sig.commands.is_empty() || !sig.precommit_ids.is_empty() {
        why.push_str(", no script, lint-staged entry or pre-commit hook runs it");
    }
    for n in notes.misses {
        why.push_str("; ");
        why.push_str(&n);
    }
    if !sig.dependencies.is_empty() {
        let deps = dependencies(files, dirs, sig.dependencies);
        if deps.is_empty() {
            why.push_str("; not a dependency either");
        } else {
            why.push_str(&format!(
                "; a dependency alone ({}) is not evidence",
                deps.join(", ")
            ));
        }
    }
    for n in notes.bad {
        why.push_str("; ");
        why.push_str(&n);
    }
    why
}

/// Where the project declares one of `wanted` as a dependency, upward from the file.
fn dependencies(files: &Files, dirs: &[Dir], wanted: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for d in dirs {
        for (place, name) in files.deps(&d.info) {
            if !wanted.iter().any(|w| dep_matches(w, name)) {
                continue;
            }
            let place = if d.rel.is_empty() {
                place.clone()
            } else {
                format!("{place} {}", d.at())
            };
            if !found.contains(&place) {
                found.push(place);
            }
        }
    }
    found
}

/// `"prettier: "`, or nothing for an unnamed declaration.
pub(super) fn prefix(sig: &Signals) -> String {
    if sig.name.is_empty() {
        String::new()
    } else {
        format!("{}: ", sig.name)
    }
}

/// npm names compare exactly, Python names by their normalized form (case, `-`/`_`/`.`); a
/// declared name ending in `*` is a prefix (`flake8-*`).
fn dep_matches(wanted: &str, name: &str) -> bool {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['_', '.'], "-");
    match wanted.strip_suffix('*') {
        Some(prefix) => norm(name).starts_with(&norm(prefix)),
        None => norm(name) == norm(wanted),
    }
}

/// Config names for a reason, grouped by stem: `.prettierrc{,.json,.yaml}`,
/// `prettier.config.{js,mjs}`.
fn compress(names: &[&str]) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<Option<&str>>)> = Vec::new();
    for name in names {
        let (stem, ext) = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => (stem, Some(ext)),
            _ => (*name, None),
        };
        match groups.iter_mut().find(|(s, _)| *s == stem) {
            Some((_, exts)) => exts.push(ext),
            None => groups.push((stem, vec![ext])),
        }
    }
    groups
        .into_iter()
        .map(|(stem, exts)| match exts.as_slice() {
            [None] => stem.to_string(),
            [Some(e)] => format!("{stem}.{e}"),
            _ if exts.contains(&None) => {
                // The bare name first: `.eslintrc{,.json}`, not `.eslintrc{.json,}`.
                let alts: Vec<String> = std::iter::once(String::new())
                    .chain(exts.iter().flatten().map(|e| format!(".{e}")))
                    .collect();
                format!("{stem}{{{}}}", alts.join(","))
            }
            _ => {
                let alts: Vec<&str> = exts.iter().flatten().copied().collect();
                format!("{stem}.{{{}}}", alts.join(","))
            }
        })
        .collect()
}
