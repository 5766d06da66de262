//! Cached reads of a repository's project files, parsed once per path.
//!
//! Every file is read at most once per [`super::Evidence`] (the map is keyed by absolute path),
//! so asking about many files and many checkers costs hash lookups. A directory's entries are
//! listed once and a file is opened only when the listing has it, so looking for twenty config
//! names in ten directories costs ten `read_dir`s. Thread-safe: the maps sit behind mutexes and
//! are never held while reading or parsing (two threads may parse the same file once each; the
//! first result stored wins, and both are equal).
//!
//! A file that exists but cannot be read or parsed is [`Loaded::Bad`] with a one-line reason: the
//! caller reports it and treats the file as absent. Nothing here panics on file content.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde_json::Value;

use super::lintstaged::{self, LintStaged};
use super::precommit::{self, PreCommit};

/// Project files larger than this are not configuration anyone wrote by hand.
const MAX_BYTES: u64 = 4 << 20;

#[derive(Debug)]
pub(super) enum Loaded<T> {
    Absent,
    Bad(String),
    Ok(T),
}

impl<T> Loaded<T> {
    pub(super) fn ok(&self) -> Option<&T> {
        match self {
            Loaded::Ok(t) => Some(t),
            _ => None,
        }
    }

    pub(super) fn bad(&self) -> Option<&str> {
        match self {
            Loaded::Bad(why) => Some(why),
            _ => None,
        }
    }

    fn map<U>(self, f: impl FnOnce(T) -> Result<U, String>) -> Loaded<U> {
        match self {
            Loaded::Absent => Loaded::Absent,
            Loaded::Bad(e) => Loaded::Bad(e),
            Loaded::Ok(t) => match f(t) {
                Ok(u) => Loaded::Ok(u),
                Err(e) => Loaded::Bad(e),
            },
        }
    }
}

type Map<T> = Mutex<HashMap<PathBuf, Arc<T>>>;

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves a map that is still consistent (inserts
    // are single calls), so a poisoned lock is used as is.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn memo<T>(map: &Map<T>, path: &Path, load: impl FnOnce() -> T) -> Arc<T> {
    if let Some(v) = lock(map).get(path) {
        return Arc::clone(v);
    }
    let v = Arc::new(load());
    Arc::clone(lock(map).entry(path.to_path_buf()).or_insert(v))
}

/// The fields of a `package.json` that evidence is read from.
#[derive(Debug, Default)]
pub(super) struct PackageJson {
    pub(super) keys: HashSet<String>,
    /// `scripts` entries: name and tokenized command line.
    pub(super) scripts: Vec<(String, Vec<String>)>,
    /// (dependency field, package name).
    pub(super) deps: Vec<(&'static str, String)>,
    /// The `"lint-staged"` key, if present.
    pub(super) lint_staged: Option<Result<LintStaged, String>>,
}

const DEP_FIELDS: [&str; 4] = [
    "dependencies",
    "devDependencies",
    "peerDependencies",
    "optionalDependencies",
];

fn parse_package_json(text: String) -> Result<PackageJson, String> {
    let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let Value::Object(top) = v else {
        return Err("the top level is not an object".into());
    };
    let scripts = top
        .get("scripts")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), super::command::tokenize(v.as_str()?))))
        .collect();
    let deps = DEP_FIELDS
        .iter()
        .flat_map(|field| {
            let names = top
                .get(*field)
                .and_then(Value::as_object)
                .into_iter()
                .flatten();
            names.map(move |(name, _)| (*field, name.clone()))
        })
        .collect();
    Ok(PackageJson {
        lint_staged: top.get("lint-staged").map(lintstaged::from_value),
        keys: top.keys().cloned().collect(),
        scripts,
        deps,
    })
}

/// Section names of an INI file (`setup.cfg`, `tox.ini`), in order.
fn ini_sections(text: String) -> Result<Vec<String>, String> {
    Ok(text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let name = l.strip_prefix('[')?.strip_suffix(']')?;
            Some(name.trim().to_string())
        })
        .collect())
}

/// Package names in a requirements file (`name`, `name[extra]>=1`; options and URLs skipped).
fn requirement_names(text: String) -> Result<Vec<String>, String> {
    Ok(text
        .lines()
        .filter_map(|l| {
            let l = l.split('#').next().unwrap_or("").trim();
            if l.starts_with('-') {
                return None;
            }
            let end = l
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
                .unwrap_or(l.len());
            (end > 0).then(|| l[..end].to_string())
        })
        .collect())
}

/// JSON with `//` and `/* */` comments and trailing commas (biome.jsonc, tsconfig-style files)
/// made plain JSON. Strings are copied verbatim.
pub(crate) fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(c) = chars.next() {
                    out.push(c);
                    match c {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            '}' | ']' => {
                let kept = out.trim_end().len();
                if out[..kept].ends_with(',') {
                    out.truncate(kept - 1);
                }
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// lint-staged's configuration files other than package.json, in the order it searches them.
const LINT_STAGED_FILES: &[&str] = &[
    ".lintstagedrc",
    ".lintstagedrc.json",
    ".lintstagedrc.yaml",
    ".lintstagedrc.yml",
    ".lintstagedrc.mjs",
    ".lintstagedrc.js",
    ".lintstagedrc.cjs",
    "lint-staged.config.mjs",
    "lint-staged.config.js",
    "lint-staged.config.cjs",
];

/// One directory's entries and the files every query reads, loaded together so that a walk from
/// a file to the root costs one map lookup per directory.
#[derive(Debug)]
pub(super) struct DirInfo {
    pub(super) abs: PathBuf,
    pub(super) names: HashSet<String>,
    pub(super) package_json: Loaded<PackageJson>,
    /// The first lint-staged configuration file present besides package.json, if any.
    pub(super) lint_staged: Option<(&'static str, Loaded<LintStaged>)>,
    /// (where, package name) of every declared dependency; read on first need.
    deps: OnceLock<Vec<(String, String)>>,
    /// pyproject.toml, parsed on first need (asked for by every Python tool).
    pyproject: OnceLock<Arc<Loaded<toml::Table>>>,
}

/// The repository's project files, each read and parsed once.
#[derive(Debug, Default)]
pub(super) struct Files {
    dirs: Map<DirInfo>,
    toml: Map<Loaded<toml::Table>>,
    ini: Map<Loaded<Vec<String>>>,
    json: Map<Loaded<Value>>,
    /// The repository root's `.pre-commit-config.yaml` (pre-commit reads no other).
    precommit: OnceLock<Arc<Loaded<PreCommit>>>,
    /// Directories listed plus files read, for tests that the cache holds.
    reads: AtomicUsize,
}

impl Files {
    pub(super) fn dir(&self, abs: &Path) -> Arc<DirInfo> {
        memo(&self.dirs, abs, || {
            self.reads.fetch_add(1, Ordering::Relaxed);
            let names: HashSet<String> = std::fs::read_dir(abs)
                .map(|rd| {
                    rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .collect()
                })
                .unwrap_or_default();
            let package_json = self
                .text(abs, &names, "package.json")
                .map(parse_package_json);
            let lint_staged = LINT_STAGED_FILES
                .iter()
                .find(|n| names.contains(**n))
                .map(|name| (*name, self.lint_staged(abs, &names, name)));
            DirInfo {
                abs: abs.to_path_buf(),
                names,
                package_json,
                lint_staged,
                deps: OnceLock::new(),
                pyproject: OnceLock::new(),
            }
        })
    }

    /// Does `dir/name` exist (`name` may hold `/`)?
    pub(super) fn has(&self, dir: &DirInfo, name: &str) -> bool {
        match name.rsplit_once('/') {
            Some((sub, base)) => self.dir(&dir.abs.join(sub)).names.contains(base),
            None => dir.names.contains(name),
        }
    }

    pub(super) fn toml(&self, dir: &DirInfo, name: &str) -> Arc<Loaded<toml::Table>> {
        if !dir.names.contains(name) {
            return Arc::new(Loaded::Absent);
        }
        let load = || {
            self.text(&dir.abs, &dir.names, name).map(|t| {
                t.parse::<toml::Table>()
                    .map_err(|e| one_line(&e.to_string()))
            })
        };
        if name == "pyproject.toml" {
            return Arc::clone(dir.pyproject.get_or_init(|| Arc::new(load())));
        }
        memo(&self.toml, &dir.abs.join(name), load)
    }

    pub(super) fn ini(&self, dir: &DirInfo, name: &str) -> Arc<Loaded<Vec<String>>> {
        if !dir.names.contains(name) {
            return Arc::new(Loaded::Absent);
        }
        memo(&self.ini, &dir.abs.join(name), || {
            self.text(&dir.abs, &dir.names, name).map(ini_sections)
        })
    }

    /// (where, package name) of the dependencies `dir` declares in package.json, pyproject.toml
    /// and `requirements*.txt`.
    pub(super) fn deps<'a>(&self, dir: &'a DirInfo) -> &'a [(String, String)] {
        dir.deps.get_or_init(|| {
            let mut out = Vec::new();
            if let Loaded::Ok(pj) = &dir.package_json {
                for (field, name) in &pj.deps {
                    out.push((format!("package.json {field}"), name.clone()));
                }
            }
            if let Loaded::Ok(t) = &*self.toml(dir, "pyproject.toml") {
                for (place, name) in pyproject_deps(t) {
                    out.push((format!("pyproject.toml {place}"), name));
                }
            }
            let mut reqs: Vec<&String> = dir
                .names
                .iter()
                .filter(|n| n.starts_with("requirements") && n.ends_with(".txt"))
                .collect();
            reqs.sort();
            for r in reqs {
                if let Loaded::Ok(names) = self.text(&dir.abs, &dir.names, r).map(requirement_names)
                {
                    out.extend(names.into_iter().map(|n| (r.clone(), n)));
                }
            }
            out
        })
    }

    /// A JSON or JSONC file by absolute path.
    pub(super) fn json(&self, path: &Path) -> Arc<Loaded<Value>> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str()))
        else {
            return Arc::new(Loaded::Absent);
        };
        let dir = self.dir(parent);
        memo(&self.json, path, || {
            self.text(parent, &dir.names, name)
                .map(|t| serde_json::from_str(&strip_jsonc(&t)).map_err(|e| e.to_string()))
        })
    }

    /// `root` must be the same on every call (the one repository these files belong to).
    pub(super) fn precommit(&self, root: &Path) -> Arc<Loaded<PreCommit>> {
        let load = || {
            let name = ".pre-commit-config.yaml";
            let dir = self.dir(root);
            let pc = self.text(root, &dir.names, name);
            Arc::new(pc.map(|t| precommit::parse(&t).map_err(|e| one_line(&e))))
        };
        Arc::clone(self.precommit.get_or_init(load))
    }

    /// The text of `dir/name`, which the listing `names` of `dir` must hold to be read at all.
    fn text(&self, dir: &Path, names: &HashSet<String>, name: &str) -> Loaded<String> {
        if !names.contains(name) {
            return Loaded::Absent;
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(name);
        let read = || -> std::io::Result<Result<String, String>> {
            if std::fs::metadata(&path)?.len() > MAX_BYTES {
                return Ok(Err(format!("larger than {} MiB", MAX_BYTES >> 20)));
            }
            Ok(String::from_utf8(std::fs::read(&path)?).map_err(|_| "not UTF-8".to_string()))
        };
        match read() {
            Ok(Ok(text)) => Loaded::Ok(text),
            Ok(Err(why)) => Loaded::Bad(why),
            // A directory of that name, or a file that vanished: not a configuration file.
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Loaded::Absent,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Loaded::Absent,
            Err(e) => Loaded::Bad(one_line(&e.to_string())),
        }
    }

    fn lint_staged(&self, dir: &Path, names: &HashSet<String>, name: &str) -> Loaded<LintStaged> {
        let is_js = [".js", ".mjs", ".cjs"].iter().any(|e| name.ends_with(e));
        self.text(dir, names, name).map(|t| {
            if is_js {
                Ok(lintstaged::scan_js(&t))
            } else {
                lintstaged::parse_rc(&t).map_err(|e| one_line(&e))
            }
        })
    }

    #[cfg(test)]
    pub(super) fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed)
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Is there a table at the dotted `path` (`tool.ruff.format`) of `t`?
pub(super) fn has_table(t: &toml::Table, path: &str) -> bool {
    let mut cur = t;
    for key in path.split('.') {
        match cur.get(key) {
            Some(toml::Value::Table(next)) => cur = next,
            _ => return false,
        }
    }
    true
}

/// Python dependency names declared in a pyproject, with where: `[project] dependencies`,
/// `[project.optional-dependencies]`, `[dependency-groups]`, poetry's and uv's dev lists.
pub(super) fn pyproject_deps(t: &toml::Table) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut specs = |place: &str, v: Option<&toml::Value>| {
        for s in v.and_then(toml::Value::as_array).into_iter().flatten() {
            if let Some(name) = s
                .as_str()
                .and_then(|s| requirement_names(s.to_string()).ok())
            {
                out.extend(name.into_iter().map(|n| (place.to_string(), n)));
            }
        }
    };
    let get = |path: &str| -> Option<&toml::Value> {
        let mut parts = path.split('.');
        let mut cur = t.get(parts.next()?)?;
        for p in parts {
            cur = cur.get(p)?;
        }
        Some(cur)
    };
    specs("[project] dependencies", get("project.dependencies"));
    for (label, path) in [
        (
            "[project.optional-dependencies]",
            "project.optional-dependencies",
        ),
        ("[dependency-groups]", "dependency-groups"),
    ] {
        for (_, group) in get(path)
            .and_then(toml::Value::as_table)
            .into_iter()
            .flatten()
        {
            specs(label, Some(group));
        }
    }
    specs(
        "[tool.uv] dev-dependencies",
        get("tool.uv.dev-dependencies"),
    );
    let mut tables = vec![
        (
            "[tool.poetry.dependencies]",
            get("tool.poetry.dependencies"),
        ),
        (
            "[tool.poetry.dev-dependencies]",
            get("tool.poetry.dev-dependencies"),
        ),
    ];
    for (_, g) in get("tool.poetry.group")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
    {
        tables.push(("[tool.poetry.group.*.dependencies]", g.get("dependencies")));
    }
    for (label, tab) in tables {
        for (name, _) in tab.and_then(toml::Value::as_table).into_iter().flatten() {
            out.push((label.to_string(), name.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_is_made_json() {
        let t = strip_jsonc("{\n // c\n \"a\": \"x//y\", /* b */ \"b\": [1, 2,],\n}\n");
        let v: Value = serde_json::from_str(&t).expect("json");
        assert_eq!(v["a"], "x//y");
        assert_eq!(v["b"][1], 2);
    }

    #[test]
    fn nested_tables_and_deps() {
        let t: toml::Table = "[tool.ruff]\nline-length = 88\n[tool.ruff.lint]\nselect = [\"E\"]\n\
             [project]\nname = \"x\"\ndependencies = [\"requests>=2\"]\n\
             [dependency-groups]\ndev = [\"ruff==0.5\", {include-group = \"x\"}]\n"
            .parse()
            .expect("toml");
        assert!(has_table(&t, "tool.ruff"));
        assert!(has_table(&t, "tool.ruff.lint"));
        assert!(!has_table(&t, "tool.ruff.format"));
        assert!(!has_table(&t, "tool.ruff.line-length"));
        let deps = pyproject_deps(&t);
        assert!(deps.contains(&("[dependency-groups]".into(), "ruff".into())));
        assert!(deps.contains(&("[project] dependencies".into(), "requests".into())));
    }

    #[test]
    fn ini_and_requirements() {
        let s = ini_sections("[metadata]\nname=x\n [flake8] \nmax-line-length=88\n".into());
        assert_eq!(s.expect("ini"), ["metadata", "flake8"]);
        let r =
            requirement_names("# dev\nblack[jupyter]==24.1\n-r base.txt\nflake8-bugbear\n".into());
        assert_eq!(r.expect("req"), ["black", "flake8-bugbear"]);
    }
}
