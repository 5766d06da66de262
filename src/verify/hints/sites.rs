//! Call sites of a function, by a plain text scan of the project's source files, and the
//! callee of a call at a given position (for tsc's TS2554, which does not name it).

use std::path::Path;

use regex::Regex;

/// Source files that are scanned for call sites.
const EXTENSIONS: &[&str] = &[
    "rs", "go", "py", "pyi", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs",
];
/// Directories that are never entered (besides hidden ones such as `.git` and `.venv`).
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", "vendor", "__pycache__"];
/// At most this many call sites are listed.
pub(super) const MAX_SITES: usize = 10;
/// A scan stops after this many files, and skips files larger than this.
const MAX_FILES: usize = 20_000;
const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Keywords that look like calls (`if (`, `for (`) and are never a callee.
const KEYWORDS: &[&str] = &[
    "if", "for", "while", "switch", "match", "return", "catch", "function", "fn", "func", "def",
    "await", "typeof", "new", "sizeof", "print", "in", "of", "and", "or", "not",
];

/// `path:line` (relative to `root`, `/`-separated) of the calls of `name` in the source files
/// under `root` (a directory's files before its subdirectories, each by name), at most
/// `MAX_SITES`. `.git`, `target`, `node_modules`,
/// `vendor` and other hidden or generated directories are skipped. A qualified name
/// (`pkg.Func`, `Type::method`, `obj.method`) is searched by its last segment. Definitions
/// (`fn name(`, `func name(`, `func (r T) name(`, `def name(`, `function name(`) and comment
/// lines are not calls.
pub fn call_sites(name: &str, root: &Path) -> Vec<String> {
    let short = name.rsplit(['.', ':']).next().unwrap_or(name);
    if short.is_empty() || !short.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Vec::new();
    }
    let escaped = regex::escape(short);
    let (Ok(call), Ok(definition)) = (
        Regex::new(&format!(r"\b{escaped}\s*(?:::<[^>]*>\s*)?\(")),
        Regex::new(&format!(
            r"\b(?:fn|func|def|function)\s+(?:\([^)]*\)\s*)?{escaped}\b"
        )),
    ) else {
        return Vec::new();
    };
    let mut sites = Vec::new();
    let mut files = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        let mut subdirs = Vec::new();
        for entry in entries {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let file_name = entry.file_name();
            let file_name = file_name.to_string_lossy();
            if kind.is_dir() {
                if !file_name.starts_with('.') && !SKIPPED_DIRS.contains(&file_name.as_ref()) {
                    subdirs.push(entry.path());
                }
                continue;
            }
            let source = Path::new(file_name.as_ref())
                .extension()
                .is_some_and(|e| EXTENSIONS.iter().any(|x| e == *x));
            if !kind.is_file() || !source {
                continue;
            }
            files += 1;
            if files > MAX_FILES {
                return sites;
            }
            if entry.metadata().map_or(true, |m| m.len() > MAX_FILE_BYTES) {
                continue;
            }
            let path = entry.path();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let rel = relative(&path, root);
            for (n, line) in text.lines().enumerate() {
                let trimmed = line.trim_start();
                if ["//", "#", "*", "/*"]
                    .iter()
                    .any(|c| trimmed.starts_with(c))
                {
                    continue;
                }
                if call.is_match(line) && !definition.is_match(line) {
                    sites.push(format!("{rel}:{}", n + 1));
                    if sites.len() >= MAX_SITES {
                        return sites;
                    }
                }
            }
        }
        // Depth first, in name order: push in reverse so the first name is visited first.
        stack.extend(subdirs.into_iter().rev());
    }
    sites
}

/// `path` relative to `root`, with `/` separators.
fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The function called at `file:line[:col]` (1-based; `file` relative to `root` or absolute):
/// the identifier before the `(` of the call that starts at, or encloses, the column; without a
/// column, the first call on the line.
pub(super) fn callee_at(
    root: &Path,
    file: &str,
    line: usize,
    col: Option<usize>,
) -> Option<String> {
    let text = std::fs::read_to_string(root.join(file)).ok()?;
    let source = text.lines().nth(line.checked_sub(1)?)?;
    callee_in_line(source, col)
}

fn callee_in_line(source: &str, col: Option<usize>) -> Option<String> {
    let chars: Vec<char> = source.chars().collect();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let Some(col) = col
        .and_then(|c| c.checked_sub(1))
        .filter(|&c| c < chars.len())
    else {
        return first_call(&chars);
    };
    // A call starting at the column: `scale(…)`, `util.scale(…)`, `scale<T>(…)`.
    let mut end = col;
    while end < chars.len() && (is_ident(chars[end]) || chars[end] == '.') {
        end += 1;
    }
    let mut after = end;
    while after < chars.len() && chars[after].is_whitespace() {
        after += 1;
    }
    if end > col && chars.get(after).is_some_and(|&c| c == '(' || c == '<') {
        return identifier_before(&chars, end);
    }
    // Otherwise the innermost call whose parentheses enclose the column.
    let mut depth = 0usize;
    for i in (0..col).rev() {
        match chars[i] {
            ')' => depth += 1,
            '(' if depth == 0 => return identifier_before(&chars, i),
            '(' => depth -= 1,
            _ => {}
        }
    }
    first_call(&chars)
}

/// The identifier that ends right before `end` (whitespace skipped), unless it is a keyword.
fn identifier_before(chars: &[char], end: usize) -> Option<String> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut stop = end;
    while stop > 0 && chars[stop - 1].is_whitespace() {
        stop -= 1;
    }
    let mut start = stop;
    while start > 0 && is_ident(chars[start - 1]) {
        start -= 1;
    }
    let name: String = chars[start..stop].iter().collect();
    let valid = name.chars().next().is_some_and(|c| !c.is_ascii_digit());
    (valid && !KEYWORDS.contains(&name.as_str())).then_some(name)
}

/// The first `identifier(` on the line that is not a keyword.
fn first_call(chars: &[char]) -> Option<String> {
    (0..chars.len())
        .filter(|&i| chars[i] == '(')
        .find_map(|i| identifier_before(chars, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callee_from_a_column_or_the_first_call() {
        // tsc's TS2554 columns (src/main.ts(6,10) and (10,22) in tsc.txt).
        assert_eq!(
            callee_in_line("  return scale(w);", Some(10)).as_deref(),
            Some("scale")
        );
        assert_eq!(
            callee_in_line("  return scale(1, 2, 3);", Some(22)).as_deref(),
            Some("scale")
        );
        assert_eq!(
            callee_in_line("  x = util.scale(f(1), 2)", Some(23)).as_deref(),
            Some("scale")
        );
        assert_eq!(
            callee_in_line("  if (ok) { run(1) }", None).as_deref(),
            Some("run")
        );
        assert_eq!(callee_in_line("let x = 1;", None), None);
        assert_eq!(callee_in_line("", Some(40)), None);
    }

    #[test]
    fn call_sites_skip_definitions_comments_and_vendored_code() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "src/util.ts",
            "export function scale(x: number, f: number) {\n  return x * f;\n}\n",
        );
        write(
            "src/main.ts",
            "// scale(1) in a comment\nconst a = scale(1, 2);\nconst b = util.scale (3);\n",
        );
        write(
            "lib/a.go",
            "func (s *S) Scale(x int) {}\nfunc F() { s.Scale(1) }\n",
        );
        write("node_modules/x/index.js", "scale(1)\n");
        write("target/gen.rs", "scale(1);\n");
        write(".git/hooks/x.py", "scale(1)\n");
        write("README.md", "scale(1)\n");
        assert_eq!(
            call_sites("scale", root),
            ["src/main.ts:2", "src/main.ts:3"]
        );
        assert_eq!(call_sites("s.Scale", root), ["lib/a.go:2"]);
        assert_eq!(call_sites("not a name", root), Vec::<String>::new());

        for i in 0..15 {
            write(&format!("many/f{i:02}.py"), "scale(1)\n");
        }
        let sites = call_sites("scale", root);
        assert_eq!(sites.len(), MAX_SITES);
        assert_eq!(sites[0], "many/f00.py:1");
    }
}
