//! `node --test` run by a Node project's `test` script (stdout and stderr together, `npm run`'s
//! header included; recorded with node 20.20): its TAP reporter, the default when stdout is not
//! a terminal up to node 22, and its spec reporter, the default from node 23.
//!
//! Quirks handled, TAP:
//! - `not ok N - name` at the test's nesting depth (4 spaces per level), then a YAML block
//!   (`---` … `...`) indented 2 more: `location: '/abs/test/x.test.js:8:1'` (where the test is
//!   declared), and the message as `error: |-` with the text on the deeper lines below, or as
//!   `error: 'one line'` (YAML single quotes: `''` is a quote);
//! - a suite whose subtests failed is `not ok` too, with `failureType: 'subtestsFailed'`: it
//!   is not reported (its subtests are);
//! - `# TODO` / `# SKIP` after the name: not a failure; `\#` in a name is an escaped `#`;
//! - a test file that does not load (a syntax error, a missing export) is one `not ok` named
//!   by the file's absolute path, `error: 'test failed'`, with `exitCode:`; what went wrong is
//!   in the `# ` comment lines before it (node's stderr): those, without the stack, are the
//!   message.
//!
//! Spec: only the `✖ failing tests:` summary at the end is read (the results above it repeat
//! it, nested and without locations): per failure `test at x.test.js:8:1` (relative to the
//! directory node ran in), `✖ name (1.2ms)`, then the error indented by 2 (`AssertionError
//! [ERR_ASSERTION]: Expected values …`), up to its stack (`at …`).
//!
//! Other runners (jest, vitest, mocha) print neither: no failures, and the step's output tail
//! stands for them.

use std::sync::LazyLock;

use regex::Regex;

use super::{Failure, message};

#[allow(
    clippy::expect_used,
    reason = "a constant pattern: its tests compile it"
)]
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant regex")
}

static NOT_OK: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?P<indent> *)not ok \d+(?: - (?P<name>.*?))?(?P<directive> # (?i:todo|skip)\b.*)?$")
});
static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?P<file>.+?):(?P<line>\d+)(?::\d+)?$"));
static SPEC_AT: LazyLock<Regex> = LazyLock::new(|| regex(r"^test at (?P<location>.+)$"));
static SPEC_FAILED: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^✖ (?P<name>.*?)(?: \([\d.]+m?s\))?(?P<directive> # (?i:todo|skip)\b.*)?$")
});

/// Parses `node --test` output (TAP or spec) into its failing tests.
pub fn node_test(output: &str) -> Vec<Failure> {
    let lines: Vec<&str> = output.lines().map(|l| l.trim_end_matches('\r')).collect();
    let tap = tap(&lines);
    if !tap.is_empty() {
        return tap;
    }
    spec(&lines)
}

fn tap(lines: &[&str]) -> Vec<Failure> {
    let mut failures = Vec::new();
    // `# ` comments since the last result (stderr of a test file's process).
    let mut comments: Vec<&str> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(caps) = NOT_OK.captures(line) else {
            let t = line.trim_start();
            if t.starts_with("ok ") {
                comments.clear();
            } else if let Some(c) = t.strip_prefix("# ").or((t == "#").then_some(""))
                && !c.starts_with("Subtest: ")
                && !c.trim_start().starts_with("at ")
                && !c.starts_with("Node.js v")
            {
                comments.push(c);
            }
            continue;
        };
        let diagnostics = std::mem::take(&mut comments);
        if caps.name("directive").is_some() {
            continue;
        }
        let name = caps
            .name("name")
            .map(|m| m.as_str().replace("\\#", "#").replace("\\\\", "\\"))
            .unwrap_or_default();
        let indent = format!("{}  ", &caps["indent"]);
        let mut failure = Failure {
            new: true,
            name,
            file: None,
            line: None,
            message: String::new(),
        };
        let mut suite = false;
        if lines.get(i + 1) == Some(&format!("{indent}---").as_str()) {
            let block: Vec<&str> = lines[i + 2..]
                .iter()
                .copied()
                .take_while(|l| *l != format!("{indent}...") && l.starts_with(&indent))
                .collect();
            let mut k = 0;
            while k < block.len() {
                let entry = &block[k][indent.len()..];
                k += 1;
                let Some((key, value)) = entry.split_once(": ").or_else(|| {
                    entry
                        .strip_suffix(':')
                        .map(|key| (key, ""))
                        .filter(|(key, _)| !key.starts_with(' '))
                }) else {
                    continue;
                };
                if key.starts_with(' ') {
                    continue;
                }
                match key {
                    "location" => {
                        if let Some(c) = LOCATION.captures(&unquote(value)) {
                            failure.file = Some(c["file"].to_string());
                            failure.line = c["line"].parse().ok();
                        }
                    }
                    "failureType" => suite = unquote(value) == "subtestsFailed",
                    "error" if value.starts_with('|') || value.starts_with('>') => {
                        let deeper = format!("{indent}  ");
                        let mut text = Vec::new();
                        while k < block.len()
                            && (block[k].starts_with(&deeper) || block[k].trim().is_empty())
                        {
                            text.push(block[k].get(deeper.len()..).unwrap_or("").trim_end());
                            k += 1;
                        }
                        failure.message = message(text);
                    }
                    "error" => failure.message = unquote(value),
                    _ => {}
                }
            }
        }
        if suite {
            continue;
        }
        if failure.message == "test failed" && !diagnostics.is_empty() {
            failure.message = message(diagnostics);
        }
        if failure.message.is_empty() {
            failure.message = "failed".into();
        }
        failures.push(failure);
    }
    failures
}

/// A YAML scalar as node's TAP reporter writes it: `'single'` (`''` a quote), `"double"`, plain.
fn unquote(value: &str) -> String {
    let v = value.trim();
    if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        v[1..v.len() - 1].replace("''", "'")
    } else if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        serde_json::from_str::<String>(v).unwrap_or_else(|_| v[1..v.len() - 1].to_string())
    } else {
        v.to_string()
    }
}

fn spec(lines: &[&str]) -> Vec<Failure> {
    let Some(start) = lines.iter().rposition(|l| l.trim() == "✖ failing tests:") else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    let mut at: Option<(String, Option<usize>)> = None;
    let mut i = start + 1;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some(c) = SPEC_AT.captures(line) {
            at = LOCATION
                .captures(&c["location"])
                .map(|l| (l["file"].to_string(), l["line"].parse().ok()));
            continue;
        }
        let Some(c) = SPEC_FAILED.captures(line) else {
            continue;
        };
        let location = at.take();
        let mut text = Vec::new();
        while i < lines.len() && (lines[i].starts_with("  ") || lines[i].trim().is_empty()) {
            let t = lines[i].trim_start();
            if t.starts_with("at ") {
                break;
            }
            text.push(lines[i].get(2..).unwrap_or("").trim_end());
            i += 1;
        }
        // The rest of the entry (stack, properties) up to the next one.
        while i < lines.len() && !SPEC_AT.is_match(lines[i]) && !lines[i].starts_with('✖') {
            i += 1;
        }
        if c.name("directive").is_some() {
            continue;
        }
        let mut text = message(text);
        if !text.contains('\n') {
            text = unquote(&text);
        }
        failures.push(Failure {
            new: true,
            name: c["name"].to_string(),
            file: location.as_ref().map(|(f, _)| f.clone()),
            line: location.and_then(|(_, l)| l),
            message: if text.is_empty() {
                "failed".into()
            } else {
                text
            },
        });
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(f: &[Failure]) -> Vec<(&str, Option<&str>, Option<usize>)> {
        f.iter()
            .map(|f| (f.name.as_str(), f.file.as_deref(), f.line))
            .collect()
    }

    #[test]
    fn tap_failures_skip_suites_and_todo() {
        let f = node_test(include_str!("../testdata/node-test-tap.txt"));
        assert_eq!(
            summary(&f),
            [
                (
                    "add adds",
                    Some("/home/dev/demo/test/calc.test.js"),
                    Some(8)
                ),
                (
                    "inner fails",
                    Some("/home/dev/demo/test/calc.test.js"),
                    Some(17)
                ),
                ("throws", Some("/home/dev/demo/test/calc.test.js"), Some(23)),
            ]
        );
        assert_eq!(
            f[0].message,
            "Expected values to be strictly equal:\n\n-1 !== 5"
        );
        assert_eq!(
            f[1].message,
            "Expected values to be strictly deep-equal:\n+ actual - expected\n\n  {\n+   a: 1\n-   a: 2\n  }"
        );
        assert_eq!(f[2].message, "boom: x is undefined");
    }

    #[test]
    fn spec_summary_failures() {
        let f = node_test(include_str!("../testdata/node-test-spec.txt"));
        assert_eq!(
            summary(&f),
            [
                ("add adds", Some("test/calc.test.js"), Some(8)),
                ("inner fails", Some("test/calc.test.js"), Some(17)),
                ("throws", Some("test/calc.test.js"), Some(23)),
            ]
        );
        assert_eq!(
            f[0].message,
            "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n-1 !== 5"
        );
        assert!(f[1].message.ends_with("-   a: 2\n  }"), "{}", f[1].message);
        assert_eq!(f[2].message, "TypeError [Error]: boom: x is undefined");
    }

    #[test]
    fn tap_file_that_does_not_load() {
        let f = node_test(include_str!("../testdata/node-test-load-tap.txt"));
        assert_eq!(
            summary(&f),
            [(
                "/home/dev/demo/test/math.test.js",
                Some("/home/dev/demo/test/math.test.js"),
                Some(1)
            )]
        );
        assert_eq!(
            f[0].message,
            "file:///home/dev/demo/src/total.js:1\nimport { addNumbers } from \"./math.js\";\n         \
             ^^^^^^^^^^\nSyntaxError: The requested module './math.js' does not provide an export \
             named 'addNumbers'"
        );
    }

    #[test]
    fn small_cases() {
        assert!(node_test("ok 1 - fine\n1..1\n").is_empty());
        assert!(node_test("not ok 1 - later # SKIP no db\n").is_empty());
        let f = node_test("not ok 1 - a \\# b\n");
        assert_eq!(summary(&f), [("a # b", None, None)]);
        assert_eq!(f[0].message, "failed");
        let f = node_test("not ok 2 - q\n  ---\n  error: 'it''s broken'\n  ...\n");
        assert_eq!(f[0].message, "it's broken");
        let f =
            node_test("✖ failing tests:\n\ntest at t.js:1:1\n✖ /a/t.js (9ms)\n  'test failed'\n");
        assert_eq!(summary(&f), [("/a/t.js", Some("t.js"), Some(1))]);
        assert_eq!(f[0].message, "test failed");
        // jest's output: nothing recognised.
        assert!(node_test("FAIL src/a.test.js\n  ● adds\n    expect(received)\n").is_empty());
    }
}
