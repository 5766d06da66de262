//! The module aliases a project defines: TypeScript's `compilerOptions.paths` and `baseUrl` of
//! the `tsconfig.json` (or `jsconfig.json`) that governs a file, and node's subpath imports
//! (`package.json` `imports`, `#x`), so that `import { x } from "@/lib/util"` is followed as
//! `src/lib/util.ts` is, and a patch that moves that module under its importers is caught.
//!
//! Read as TypeScript reads them: the nearest `tsconfig.json`, else `jsconfig.json`, from the
//! importing file's folder up to the repository's top; comments and trailing commas allowed;
//! `extends` followed when it is a path in the repository (a string or, as TypeScript 5 allows,
//! a list, later entries winning), the extending file's options over its base's; a solution-style
//! file with no aliases of its own (Vite's `"files": []` with `references`) takes those of the
//! first referenced configuration that has some. `paths`' targets are relative to `baseUrl` when
//! one is set, else to the file that declares `paths`; a pattern holds at most one `*`, and of
//! the patterns a specifier matches the one with the longest text before its `*` is tried
//! (exact patterns first), its targets in order. With `baseUrl`, a bare specifier no pattern
//! matches is also tried from that folder.
//!
//! Subpath imports as node reads them: the `imports` of the nearest `package.json` from the
//! importing file's folder up; keys start with `#`, hold at most one `*`, and name a target
//! relative to that `package.json` (`./…`), or several under conditions (`{"node": …,
//! "default": …}`, nested, and lists), each tried; a target that is a package is not followed.
//!
//! Not followed: a base configuration from a package (`"extends": "@tsconfig/node20"`), a
//! bundler's own aliases (Vite's `resolve.alias`, webpack's).
//! What an alias names is judged as a relative path is: only a specifier that named a file before
//! the patch can be reported, so an alias this does not know is never a finding.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The aliases of one configuration.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Aliases {
    patterns: Vec<Pattern>,
    /// `baseUrl`, repository-relative ("" for the top): bare specifiers resolve from it.
    base_url: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Pattern {
    prefix: String,
    /// What follows the `*`; `None`: an exact pattern.
    suffix: Option<String>,
    /// Repository-relative, with the `*` still in them.
    targets: Vec<String>,
}

impl Aliases {
    /// The repository-relative paths `spec` names through these aliases, in the order
    /// TypeScript tries them (each then resolved as a relative path is: extensions, an index
    /// file); `None` when no alias applies to it.
    pub(super) fn candidates(&self, spec: &str) -> Option<Vec<String>> {
        let exact = self
            .patterns
            .iter()
            .find(|p| p.suffix.is_none() && p.prefix == spec);
        let starred = || {
            self.patterns
                .iter()
                .filter_map(|p| {
                    let suffix = p.suffix.as_deref()?;
                    let rest = spec.strip_prefix(p.prefix.as_str())?;
                    let star = rest.strip_suffix(suffix)?;
                    Some((p, star))
                })
                .max_by_key(|(p, _)| p.prefix.len())
        };
        if let Some(p) = exact {
            return Some(p.targets.clone());
        }
        if let Some((p, star)) = starred() {
            return Some(p.targets.iter().map(|t| t.replacen('*', star, 1)).collect());
        }
        let base = self.base_url.as_deref()?;
        Some(vec![join(base, spec)])
    }

    /// Whether a pattern with some text before its `*` (or an exact one) names `spec`: an alias
    /// the project defines for it, where `baseUrl` and a bare `*` take any specifier (a package,
    /// `astro:content`, `virtual:x`) to try.
    pub(super) fn defines(&self, spec: &str) -> bool {
        self.patterns.iter().any(|p| match &p.suffix {
            None => p.prefix == spec,
            Some(suffix) => {
                !p.prefix.is_empty()
                    && spec.len() >= p.prefix.len() + suffix.len()
                    && spec.starts_with(p.prefix.as_str())
                    && spec.ends_with(suffix.as_str())
            }
        })
    }
}

/// Whether `spec` could name an installed package, which TypeScript tries when its aliases name
/// no file: its first segment (two for a scope) is a valid npm name. `@/x`, `~/x`, `$lib/x` are
/// not; `lib/x` and `react` are.
pub(super) fn could_be_package(spec: &str) -> bool {
    let mut segments = spec.split('/');
    let first = segments.next().unwrap_or_default();
    let ok = |s: &str| {
        !s.is_empty()
            && !s.starts_with(['.', '_'])
            && s.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_')
            })
    };
    match first.strip_prefix('@') {
        Some(scope) => ok(scope) && segments.next().is_some_and(ok),
        None => ok(first),
    }
}

/// A repository-relative file's text in the state under check.
pub(super) type Read<'r> = &'r dyn Fn(&str) -> Option<String>;

/// The configurations of a repository, shared by the checks' threads: which configuration file
/// governs each folder (found once per folder, a folder's answer from its parent's), and each
/// file's aliases (read once).
#[derive(Default)]
pub(super) struct Configs {
    by_folder: Mutex<HashMap<String, Option<Arc<Aliases>>>>,
    /// (which names, folder) → the nearest such file at or above the folder.
    nearest: Mutex<HashMap<(usize, String), Option<String>>>,
    /// A configuration file → its aliases.
    of_file: Mutex<HashMap<String, Arc<Aliases>>>,
}

/// The files looked for, by kind: TypeScript's configuration, then the package's.
const KINDS: [&[&str]; 2] = [&["tsconfig.json", "jsconfig.json"], &["package.json"]];

impl Configs {
    /// The aliases governing files of `folder` (repository-relative), if any: its nearest
    /// TypeScript configuration's and its nearest `package.json`'s subpath imports, together.
    pub(super) fn for_folder(&self, folder: &str, read: Read) -> Option<Arc<Aliases>> {
        if let Some(found) = self.by_folder.lock().ok()?.get(folder) {
            return found.clone();
        }
        let lookup = Lookup { read };
        let mut found = Aliases::default();
        for kind in 0..KINDS.len() {
            let Some(rel) = self.nearest(&lookup, kind, folder) else {
                continue;
            };
            let of = self.of_file(&lookup, kind, &rel);
            found.patterns.extend(of.patterns.iter().cloned());
            found.base_url = found.base_url.or_else(|| of.base_url.clone());
        }
        let found =
            (!found.patterns.is_empty() || found.base_url.is_some()).then(|| Arc::new(found));
        if let Ok(mut cache) = self.by_folder.lock() {
            cache.insert(folder.to_string(), found.clone());
        }
        found
    }

    /// The nearest file of `kind` at or above `folder`.
    fn nearest(&self, lookup: &Lookup, kind: usize, folder: &str) -> Option<String> {
        let key = (kind, folder.to_string());
        if let Some(hit) = self.nearest.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return hit;
        }
        let here = KINDS[kind]
            .iter()
            .map(|name| join(folder, name))
            .find(|rel| (lookup.read)(rel).is_some());
        let found = match here {
            Some(rel) => Some(rel),
            None if folder.is_empty() => None,
            None => self.nearest(lookup, kind, parent(folder)),
        };
        if let Ok(mut m) = self.nearest.lock() {
            m.insert(key, found.clone());
        }
        found
    }

    /// The aliases the file `rel` of `kind` defines.
    fn of_file(&self, lookup: &Lookup, kind: usize, rel: &str) -> Arc<Aliases> {
        if let Some(hit) = self.of_file.lock().ok().and_then(|m| m.get(rel).cloned()) {
            return hit;
        }
        let text = (lookup.read)(rel).unwrap_or_default();
        let aliases = Arc::new(match kind {
            0 => lookup.of_file(rel, &text).unwrap_or_default(),
            _ => Aliases {
                patterns: subpath_imports(rel, &text),
                base_url: None,
            },
        });
        if let Ok(mut m) = self.of_file.lock() {
            m.insert(rel.to_string(), aliases.clone());
        }
        aliases
    }
}

/// One lookup's reader of configuration files.
struct Lookup<'r> {
    read: Read<'r>,
}

impl Lookup<'_> {
    /// The aliases of the configuration `rel` (its text `text`), or of its first reference that
    /// has some.
    fn of_file(&self, rel: &str, text: &str) -> Option<Aliases> {
        let own = self.chain(rel, text, 0)?;
        if !own.patterns.is_empty() || own.base_url.is_some() {
            return Some(own);
        }
        let json = parse(text)?;
        let dir = parent(rel);
        json.get("references")?
            .as_array()?
            .iter()
            .filter_map(|r| r.get("path")?.as_str())
            .filter_map(|p| {
                let target = join(dir, p);
                let file = if target.ends_with(".json") {
                    target
                } else {
                    join(&target, "tsconfig.json")
                };
                let text = (self.read)(&file)?;
                self.chain(&file, &text, 0)
            })
            .find(|a| !a.patterns.is_empty() || a.base_url.is_some())
    }

    /// The effective aliases of `rel` with its `extends` chain.
    fn chain(&self, rel: &str, text: &str, depth: usize) -> Option<Aliases> {
        let (paths, base_url) = self.raw(rel, text, depth)?;
        let (paths_dir, paths) = paths.unwrap_or_default();
        let relative_to = base_url.clone().unwrap_or(paths_dir);
        let patterns = paths
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(pattern, targets)| {
                        pattern_of(pattern, targets.as_array()?, &relative_to)
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Aliases { patterns, base_url })
    }

    /// A configuration's `paths` (with the folder they are relative to) and `baseUrl`, its
    /// bases' (`extends`, at most 8 deep) under its own.
    #[allow(clippy::type_complexity)]
    fn raw(
        &self,
        rel: &str,
        text: &str,
        depth: usize,
    ) -> Option<(Option<(String, serde_json::Value)>, Option<String>)> {
        let json = parse(text)?;
        let dir = parent(rel);
        let mut paths = None;
        let mut base_url = None;
        if depth < 8 {
            let extends: Vec<&str> = match json.get("extends") {
                Some(serde_json::Value::String(s)) => vec![s.as_str()],
                Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).collect(),
                _ => Vec::new(),
            };
            for e in extends.into_iter().filter(|e| e.starts_with('.')) {
                let mut file = join(dir, e);
                if !file.ends_with(".json") {
                    file.push_str(".json");
                }
                if let Some(t) = (self.read)(&file)
                    && let Some((p, b)) = self.raw(&file, &t, depth + 1)
                {
                    paths = p.or(paths);
                    base_url = b.or(base_url);
                }
            }
        }
        let options = json.get("compilerOptions");
        if let Some(p) = options.and_then(|o| o.get("paths")) {
            paths = Some((dir.to_string(), p.clone()));
        }
        if let Some(b) = options
            .and_then(|o| o.get("baseUrl"))
            .and_then(|b| b.as_str())
        {
            base_url = Some(join(dir, b));
        }
        Some((paths, base_url))
    }
}

/// The patterns of the `imports` of the `package.json` at `rel` (text `text`).
fn subpath_imports(rel: &str, text: &str) -> Vec<Pattern> {
    let Some(serde_json::Value::Object(imports)) =
        parse(text).and_then(|j| j.get("imports").cloned())
    else {
        return Vec::new();
    };
    let dir = parent(rel);
    imports
        .iter()
        .filter(|(key, _)| key.starts_with('#'))
        .filter_map(|(key, target)| {
            let mut targets = Vec::new();
            leaves(target, &mut targets, 0);
            let local: Vec<serde_json::Value> = targets
                .into_iter()
                .filter(|t| t.starts_with("./"))
                .map(serde_json::Value::String)
                .collect();
            pattern_of(key, &local, dir)
        })
        .filter(|p| !p.targets.is_empty())
        .collect()
}

/// The string targets of a subpath import, under its conditions and lists, in order (at most 8
/// levels deep).
fn leaves(v: &serde_json::Value, out: &mut Vec<String>, depth: usize) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) if depth < 8 => {
            a.iter().for_each(|x| leaves(x, out, depth + 1))
        }
        serde_json::Value::Object(o) if depth < 8 => {
            o.values().for_each(|x| leaves(x, out, depth + 1));
        }
        _ => {}
    }
}

fn pattern_of(pattern: &str, targets: &[serde_json::Value], base: &str) -> Option<Pattern> {
    if pattern.matches('*').count() > 1 {
        return None;
    }
    let (prefix, suffix) = match pattern.split_once('*') {
        Some((p, s)) => (p.to_string(), Some(s.to_string())),
        None => (pattern.to_string(), None),
    };
    let targets = targets
        .iter()
        .filter_map(|t| t.as_str())
        .filter(|t| t.matches('*').count() <= 1 && !t.starts_with('/'))
        .map(|t| join(base, t))
        .collect();
    Some(Pattern {
        prefix,
        suffix,
        targets,
    })
}

/// `rel` joined to the folder `dir`, `.` and `..` folded; a path that leaves the repository
/// keeps its leading `..` (the resolver then leaves it unjudged).
fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let mut above = 0;
    for part in dir.split('/').chain(rel.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    above += 1;
                }
            }
            p => parts.push(p),
        }
    }
    let mut out = vec![".."; above];
    out.extend(parts);
    out.join("/")
}

fn parent(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

/// A configuration file as TypeScript reads it: JSON with comments and trailing commas.
fn parse(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str(&crate::project::evidence::strip_jsonc(text)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configs(files: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |rel: &str| {
            files
                .iter()
                .find(|(p, _)| *p == rel)
                .map(|(_, t)| t.to_string())
        }
    }

    #[test]
    fn paths_are_relative_to_the_file_that_declares_them_or_to_base_url() {
        let read = configs(&[
            (
                "web/tsconfig.json",
                "{\n  // the app\n  \"compilerOptions\": {\n    \"paths\": {\"@/*\": [\"./src/*\"], \"~lib\": [\"./src/lib/index.ts\"],},\n  },\n}\n",
            ),
            (
                "api/tsconfig.json",
                "{\"compilerOptions\": {\"baseUrl\": \"src\", \"paths\": {\"#db/*\": [\"db/*\", \"legacy/db/*\"]}}}",
            ),
        ]);
        let c = Configs::default();
        let web = c.for_folder("web/src/pages", &read).expect("web's config");
        assert_eq!(
            web.candidates("@/lib/util"),
            Some(vec!["web/src/lib/util".to_string()])
        );
        assert_eq!(
            web.candidates("~lib"),
            Some(vec!["web/src/lib/index.ts".to_string()])
        );
        assert_eq!(web.candidates("react"), None);
        assert!(web.defines("@/lib/util") && web.defines("~lib") && !web.defines("react"));
        let api = c.for_folder("api", &read).expect("api's config");
        assert_eq!(
            api.candidates("#db/users"),
            Some(vec![
                "api/src/db/users".to_string(),
                "api/src/legacy/db/users".to_string()
            ])
        );
        // baseUrl: a bare specifier is tried from it, but no alias defines it.
        assert_eq!(
            api.candidates("models/user"),
            Some(vec!["api/src/models/user".to_string()])
        );
        assert!(!api.defines("models/user") && !api.defines("astro:content"));
        assert!(c.for_folder("docs", &read).is_none());
    }

    #[test]
    fn the_longest_prefix_wins_and_extends_and_references_are_followed() {
        let read = configs(&[
            (
                "tsconfig.base.json",
                "{\"compilerOptions\": {\"paths\": {\"@app/*\": [\"packages/app/src/*\"], \"@app/ui/*\": [\"packages/ui/src/*\"]}}}",
            ),
            (
                "packages/app/tsconfig.json",
                "{\"extends\": \"../../tsconfig.base\", \"compilerOptions\": {\"strict\": true}}",
            ),
            (
                "site/tsconfig.json",
                "{\"files\": [], \"references\": [{\"path\": \"./tsconfig.node.json\"}, {\"path\": \"./tsconfig.app.json\"}]}",
            ),
            ("site/tsconfig.node.json", "{\"compilerOptions\": {}}"),
            (
                "site/tsconfig.app.json",
                "{\"compilerOptions\": {\"paths\": {\"@/*\": [\"./src/*\"]}}}",
            ),
        ]);
        let c = Configs::default();
        let app = c
            .for_folder("packages/app/src", &read)
            .expect("app's config");
        assert_eq!(
            app.candidates("@app/ui/button"),
            Some(vec!["packages/ui/src/button".to_string()])
        );
        assert_eq!(
            app.candidates("@app/main"),
            Some(vec!["packages/app/src/main".to_string()])
        );
        let site = c.for_folder("site/src", &read).expect("site's config");
        assert_eq!(site.candidates("@/x"), Some(vec!["site/src/x".to_string()]));
    }

    #[test]
    fn subpath_imports_of_the_nearest_package_json_join_the_aliases() {
        let read = configs(&[
            (
                "package.json",
                "{\"name\": \"x\", \"imports\": {\"#utils/*\": \"./src/utils/*.js\", \"#db\": {\"node\": \"./src/db/node.js\", \"default\": [\"./src/db/browser.js\"]}, \"#dep\": \"some-package\", \"nohash\": \"./x.js\"}}",
            ),
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"paths\": {\"@/*\": [\"./src/*\"]}}}",
            ),
            ("packages/other/package.json", "{\"name\": \"other\"}"),
        ]);
        let c = Configs::default();
        let root = c.for_folder("src/app", &read).expect("aliases");
        assert_eq!(
            root.candidates("#utils/format"),
            Some(vec!["src/utils/format.js".to_string()])
        );
        let mut db = root.candidates("#db").expect("#db");
        db.sort();
        assert_eq!(db, ["src/db/browser.js", "src/db/node.js"]);
        assert_eq!(root.candidates("#dep"), None);
        assert_eq!(root.candidates("nohash"), None);
        assert_eq!(root.candidates("@/x"), Some(vec!["src/x".to_string()]));
        assert!(root.defines("#utils/format") && !could_be_package("#utils/format"));
        // The nearest package.json is the package's scope: its imports, none here.
        let other = c
            .for_folder("packages/other/src", &read)
            .expect("tsconfig's");
        assert_eq!(other.candidates("#utils/format"), None);
    }

    /// Configuration files are the user's: any text is read without a panic, in one pass.
    #[test]
    fn any_text_is_read_without_a_panic() {
        const PIECES: [&str; 14] = [
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            "/",
            "*",
            "//",
            "/*",
            "*/",
            ",",
            "\n",
            "\"paths\":",
        ];
        for text in crate::testgen::pieced(&PIECES, 20_000, 24) {
            let _ = parse(&text);
            let read = |rel: &str| (rel == "tsconfig.json").then(|| text.clone());
            if let Some(a) = Configs::default().for_folder("src", &read) {
                let _ = a.candidates("@/x");
                let _ = a.defines("x");
            }
        }
    }

    #[test]
    fn comments_and_trailing_commas_are_read_as_typescript_reads_them() {
        let v =
            parse("{\"a\": \"// not a comment\", /* c */ \"b\": [1, 2, /* x */], }").expect("json");
        assert_eq!(v["a"], "// not a comment");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
        assert!(parse("{\"a\": \"x\\\"y\", // end\n}").is_some());
        // One pass: a configuration of many commas is read at once (each comma once looked
        // at the whole rest of the file, and that again, without end).
        let long = format!("{{\"a\": [{}0]}}", "1, ".repeat(100_000));
        assert_eq!(
            parse(&long).expect("json")["a"].as_array().map(Vec::len),
            Some(100_001)
        );
    }

    #[test]
    fn what_could_name_a_package() {
        for spec in [
            "react",
            "lib/x",
            "@scope/pkg",
            "@scope/pkg/deep",
            "lodash.merge",
        ] {
            assert!(could_be_package(spec), "{spec}");
        }
        for spec in [
            "@/lib/x",
            "~/x",
            "$lib/x",
            "#db/x",
            "@app",
            "Components/x",
            "_x",
        ] {
            assert!(!could_be_package(spec), "{spec}");
        }
    }
}
