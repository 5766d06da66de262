//! `.pre-commit-config.yaml`: which hooks run on which files.
//!
//! pre-commit reads the file at the repository root only and runs every hook from the root. A
//! hook runs on a file when all of these hold (pre-commit's own rules): the top-level `files`
//! regex is found in the repo-relative path and the top-level `exclude` is not; the hook's
//! `files` is found and its `exclude` is not (Python `re.search`, here the `regex` crate); the
//! file has every tag of `types` (default `[file]`), at least one of `types_or` if given, and none
//! of `exclude_types`. Tags are pre-commit's `identify` tags, mapped here for the common
//! extensions only.
//!
//! Leniency, so an unusual file never makes a used tool look unused: a `files` regex the `regex`
//! crate cannot compile (look-around, back-references) selects every file, an `exclude` it cannot
//! compile excludes none, and a tag this module does not know (`executable`, `symlink`, …) is
//! assumed present. A hook without `types` in the config gets them from its own repository's
//! manifest, which is not read: it is taken to cover the file (the caller asks only about files
//! the tool handles).

use regex::Regex;
use serde_json::Value;

use super::command;

#[derive(Debug, Default)]
pub(super) struct PreCommit {
    files: Filter,
    exclude: Filter,
    pub(super) hooks: Vec<Hook>,
}

#[derive(Debug)]
pub(super) struct Hook {
    pub(super) id: String,
    /// `entry` tokenized (local hooks say what they run there).
    pub(super) entry: Vec<String>,
    pub(super) args: Vec<String>,
    files: Filter,
    exclude: Filter,
    types: Vec<String>,
    types_or: Vec<String>,
    exclude_types: Vec<String>,
}

/// A compiled regex, or nothing (absent or uncompilable: see the module doc for which way each
/// errs).
#[derive(Debug, Default)]
struct Filter(Option<Regex>);

impl Filter {
    fn new(v: Option<&Value>) -> Filter {
        let src = v.and_then(Value::as_str).unwrap_or("");
        if src.is_empty() {
            return Filter(None);
        }
        // Python's end-of-string `\Z` is `\z` in the regex crate.
        Filter(Regex::new(&src.replace(r"\Z", r"\z")).ok())
    }

    fn selects(&self, rel: &str) -> bool {
        self.0.as_ref().is_none_or(|r| r.is_match(rel))
    }

    fn excludes(&self, rel: &str) -> bool {
        self.0.as_ref().is_some_and(|r| r.is_match(rel))
    }
}

impl PreCommit {
    /// Does `hook` run on `rel` (repo-relative, `/`-separated)?
    pub(super) fn covers(&self, hook: &Hook, rel: &str) -> bool {
        if !self.files.selects(rel) || self.exclude.excludes(rel) {
            return false;
        }
        if !hook.files.selects(rel) || hook.exclude.excludes(rel) {
            return false;
        }
        let tags = tags(rel);
        let has = |t: &String| has_tag(tags, t);
        hook.types.iter().all(has)
            && (hook.types_or.is_empty() || hook.types_or.iter().any(has))
            && !hook
                .exclude_types
                .iter()
                .any(|t| tags.contains(&t.as_str()))
    }
}

impl Hook {
    pub(super) fn is_one_of(&self, ids: &[&str]) -> bool {
        ids.contains(&self.id.as_str())
    }

    /// The hook's own filters, for a reason text.
    pub(super) fn scope(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = &self.files.0 {
            parts.push(format!("files: {}", r.as_str()));
        }
        if let Some(r) = &self.exclude.0 {
            parts.push(format!("exclude: {}", r.as_str()));
        }
        if !self.types.is_empty() {
            parts.push(format!("types: {}", self.types.join(", ")));
        }
        if !self.types_or.is_empty() {
            parts.push(format!("types_or: {}", self.types_or.join(", ")));
        }
        parts.join("; ")
    }
}

pub(super) fn parse(text: &str) -> Result<PreCommit, String> {
    let v: Value = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    let Some(top) = v.as_object() else {
        return Err("the top level is not a mapping".into());
    };
    let mut hooks = Vec::new();
    for repo in top
        .get("repos")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for h in repo
            .get("hooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(id) = h.get("id").and_then(Value::as_str) else {
                continue;
            };
            hooks.push(Hook {
                id: id.to_string(),
                entry: h
                    .get("entry")
                    .and_then(Value::as_str)
                    .map(command::tokenize)
                    .unwrap_or_default(),
                args: strings(h.get("args")),
                files: Filter::new(h.get("files")),
                exclude: Filter::new(h.get("exclude")),
                types: strings(h.get("types")),
                types_or: strings(h.get("types_or")),
                exclude_types: strings(h.get("exclude_types")),
            });
        }
    }
    Ok(PreCommit {
        files: Filter::new(top.get("files")),
        exclude: Filter::new(top.get("exclude")),
        hooks,
    })
}

/// A YAML list of scalars as strings (`args: [--line-length, 100]` has a number in it).
fn strings(v: Option<&Value>) -> Vec<String> {
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    match v {
        Some(Value::Array(a)) => a.iter().filter_map(scalar).collect(),
        Some(v) => scalar(v).into_iter().collect(),
        None => Vec::new(),
    }
}

/// Whether a file carries tag `t`: tags true of every file this matters for are present, unknown
/// ones are assumed (see the module doc).
fn has_tag(tags: &[&str], t: &str) -> bool {
    match t {
        "file" | "text" | "executable" | "non-executable" | "symlink" => true,
        "binary" | "directory" => false,
        t if KNOWN_TAGS.contains(&t) => tags.contains(&t),
        _ => true,
    }
}

const KNOWN_TAGS: &[&str] = &[
    "python",
    "pyi",
    "jupyter",
    "javascript",
    "jsx",
    "ts",
    "tsx",
    "json",
    "yaml",
    "toml",
    "rust",
    "go",
    "markdown",
    "css",
    "scss",
    "html",
    "vue",
    "svelte",
    "shell",
];

/// pre-commit `identify` tags by extension (the common ones).
fn tags(rel: &str) -> &'static [&'static str] {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "py" => &["python"],
        // identify tags `.pyi` as `pyi` only, not `python` (hence ruff's `types_or: [python, pyi]`).
        "pyi" => &["pyi"],
        "ipynb" => &["jupyter", "json"],
        "js" | "mjs" | "cjs" => &["javascript"],
        "jsx" => &["jsx"],
        "ts" | "mts" | "cts" => &["ts"],
        "tsx" => &["tsx"],
        "json" => &["json"],
        "yaml" | "yml" => &["yaml"],
        "toml" => &["toml"],
        "rs" => &["rust"],
        "go" => &["go"],
        "md" | "markdown" => &["markdown"],
        "css" => &["css"],
        "scss" => &["scss"],
        "html" | "htm" => &["html"],
        "vue" => &["vue"],
        "svelte" => &["svelte"],
        "sh" | "bash" => &["shell"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"
exclude: ^vendor/
repos:
  - repo: https://github.com/PyCQA/flake8
    rev: 7.0.0
    hooks:
      - id: flake8
        args: [--max-line-length=88, --extend-ignore, E203]
        files: ^src/
  - repo: https://github.com/pre-commit/mirrors-prettier
    rev: v3.1.0
    hooks:
      - id: prettier
        types_or: [javascript, ts, markdown]
      - id: black
        types: [pyi]
  - repo: local
    hooks:
      - id: fmt
        name: fmt
        entry: npx biome format --write
        language: system
        files: |
          (?x)^(
            web/.*\.ts|
            web/.*\.tsx
          )$
"#;

    #[test]
    fn filters_and_types() {
        let pc = parse(CONFIG).expect("parses");
        let hook = |id: &str| pc.hooks.iter().find(|h| h.id == id).expect("hook");
        assert!(pc.covers(hook("flake8"), "src/a.py"));
        assert!(!pc.covers(hook("flake8"), "tests/a.py"));
        assert_eq!(
            hook("flake8").args,
            ["--max-line-length=88", "--extend-ignore", "E203"]
        );
        assert!(pc.covers(hook("prettier"), "docs/a.md"));
        assert!(!pc.covers(hook("prettier"), "docs/a.css"));
        assert!(!pc.covers(hook("prettier"), "vendor/a.js"));
        assert!(pc.covers(hook("black"), "a.pyi"));
        assert!(!pc.covers(hook("black"), "a.py"));
        assert!(pc.covers(hook("fmt"), "web/x.tsx"));
        assert!(!pc.covers(hook("fmt"), "api/x.ts"));
        assert!(command::runs(&hook("fmt").entry, "biome format"));
        assert!(hook("black").is_one_of(&["black", "black-jupyter"]));
    }

    #[test]
    fn odd_values_are_not_errors() {
        let pc = parse("repos:\n- repo: x\n  hooks:\n  - id: black\n    args: [--line-length, 100]\n    files: '(?<=x)y'\n  - name: no id\n").expect("parses");
        assert_eq!(pc.hooks.len(), 1);
        assert_eq!(pc.hooks[0].args, ["--line-length", "100"]);
        assert!(pc.covers(&pc.hooks[0], "any.py"));
        assert!(parse("repos: [\n").is_err());
        assert!(parse("- a\n- b\n").is_err());
    }
}
