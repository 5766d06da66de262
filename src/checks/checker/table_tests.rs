//! The table's promise, checked on the sources: a checker is one file (`checker/<name>.rs`,
//! `-` spelled `_`) holding its [`Checker`](super::Checker), plus one line in [`TABLE`]; and
//! nothing else in the checks, project or verify layers names a checker as a string, so adding
//! or removing one touches no other file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::TABLE;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a source file without its comments and its `#[cfg(test)] mod tests` block.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("source");
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let p = entry.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_table_entry_is_one_file_that_defines_it_and_every_checker_file_is_in_the_table() {
    let dir = src().join("checks/checker");
    let mut names = HashSet::new();
    for c in TABLE {
        assert!(names.insert(c.name), "`{}` is twice in the table", c.name);
        let module = c.name.replace('-', "_");
        let text = code(&dir.join(format!("{module}.rs")));
        assert!(
            text.contains("pub static CHECKER: Checker = Checker {")
                && text.contains(&format!("name: \"{}\",", c.name)),
            "checker/{module}.rs must define `pub static CHECKER` named `{}`",
            c.name
        );
    }
    // The public modules of `checker/` are the checkers, each in the table.
    let modules: Vec<String> = code(&dir.join("mod.rs"))
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').replace('_', "-"))
        .collect();
    for m in &modules {
        assert!(names.contains(m.as_str()), "checker/{m}.rs is not in TABLE");
    }
    assert_eq!(modules.len(), TABLE.len());
}

#[test]
fn no_checker_is_named_as_a_string_outside_its_own_file() {
    let mut files = Vec::new();
    for layer in ["checks", "project", "verify"] {
        rust_files(&src().join(layer), &mut files);
    }
    let checker_dir = src().join("checks/checker");
    // Output formats several checkers (or verify) read are named after the tool that defined
    // them (cargo's JSON, ESLint's JSON); they run nothing.
    let formats = src().join("checks/parse");
    let mut found = Vec::new();
    for file in files {
        if file.starts_with(&checker_dir) || file.starts_with(&formats) {
            continue;
        }
        let text = code(&file);
        // TypeScript's configuration has a `references` key of its own (project references).
        let tsconfig = file.ends_with("checks/imports/aliases.rs");
        for c in TABLE {
            if tsconfig && c.name == "references" {
                continue;
            }
            if text.contains(&format!("\"{}\"", c.name)) {
                found.push(format!("{}: \"{}\"", file.display(), c.name));
            }
        }
    }
    assert!(
        found.is_empty(),
        "checkers named outside their files: {found:#?}"
    );
}
