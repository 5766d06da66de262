//! `go test -json ./...`: stdout, possibly followed by stderr (recorded with go 1.27.3, and
//! go 1.19.8 for the older shapes).
//!
//! Quirks handled:
//! - one JSON event per line, `{"Action", "Package", "Test", "Output", …}`; a failing test is
//!   `"Action": "fail"` with `Test` set, its detail in the `output` events of the same test:
//!   `    calc_test.go:10: Add(1, 1) = 3, want 2` (path relative to the package directory,
//!   continuation lines indented deeper), between the `=== RUN` / `--- FAIL:` frame lines;
//!   the name is `package.TestName` (`example.com/demo/calc.TestAddTable/1+2`);
//! - go 1.27 (not 1.19) tags output with `OutputType`: `frame` for `=== RUN`/`--- FAIL`,
//!   `error` and `error-continue` for `t.Error`/`t.Fatal`, none for `t.Log`: when tags are
//!   present the message is the error lines only, otherwise every non-frame line;
//! - a parent test fails when a subtest does (`TestTable` after `TestTable/1+2`): a parent with
//!   no message of its own is not reported;
//! - a panicking test has `panic: runtime error: …` then a goroutine dump: the message stops at
//!   the panic line and the location is the first stack frame in the test's package (an
//!   absolute path, as the stack prints it);
//! - a timeout (`-timeout 1s`) prints `panic: test timed out after 1s`, attributed to the
//!   running test, and **that test gets no `fail` event**, only its package does; go 1.27
//!   (not 1.19) lists `running tests:` / `\t\tTestHang (1s)` after the panic line. Each
//!   such test is a failure located at its own stack frame;
//! - build errors: go ≥ 1.24 reports them as `"Action": "build-output"` events keyed by
//!   `ImportPath` (`example.com/demo/build [example.com/demo/build.test]`, or the missing
//!   import for a setup failure such as `no required module provides package`) with a
//!   `build-fail` event, and the package's `fail` event names it in `FailedBuild`; older go
//!   writes them as plain text on stderr (`# pkg` then `build/build.go:6:2: …`) and
//!   `FAIL\tpkg [build failed]` as a plain line on stdout. Both are parsed by
//!   [`go_build_text`];
//! - a package that failed with none of the above (e.g. `os.Exit(1)` in `TestMain`) is one
//!   failure named after the package.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::go_build::go_build_text;
use super::{Failure, message};

#[allow(
    clippy::expect_used,
    reason = "a constant pattern: its tests compile it"
)]
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant regex")
}

/// A test's own output line: `    calc_test.go:10: message`.
static TEST_POSITION: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*(?P<file>[^\s:]+\.go):(?P<line>\d+): "));
/// Frame lines of untagged output (go < 1.25).
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?:\s*(?:=== (?:RUN|PAUSE|CONT|NAME)\s|--- (?:FAIL|PASS|SKIP): )|(?:FAIL|PASS|ok)(?:\s|$))",
    )
});
static TIMEOUT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^panic: test timed out after (?P<after>\S+)"));
/// An entry of the `running tests:` list under a timeout panic.
static RUNNING_TEST: LazyLock<Regex> = LazyLock::new(|| regex(r"^\t\t(?P<test>\S+) \([^)]*\)$"));
/// A stack frame's function line (`example.com/demo/boom.div(...)`) and its location line.
static FRAME_FUNC: LazyLock<Regex> = LazyLock::new(|| regex(r"^(?P<func>\S+?)\(.*\)$"));
static FRAME_AT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\t(?P<file>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$"));

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    action: String,
    #[serde(default)]
    package: String,
    test: Option<String>,
    output: Option<String>,
    output_type: Option<String>,
    import_path: Option<String>,
    failed_build: Option<String>,
}

#[derive(Default)]
struct Test {
    /// Output lines with their `OutputType`.
    lines: Vec<(String, Option<String>)>,
}

/// What a `go test -json` run said, gathered by test and package.
#[derive(Default)]
struct Events {
    /// `build-output` by import path, in order.
    builds: Vec<(String, String)>,
    /// Lines that are not events (stderr, `go vet` and compiler output).
    text: String,
    tests: HashMap<(String, String), Test>,
    test_order: Vec<(String, String)>,
    failed_order: Vec<(String, String)>,
    package_output: HashMap<String, Vec<String>>,
    failed_packages: Vec<(String, Option<String>)>,
}

/// The failures found so far, each once.
#[derive(Default)]
struct Found {
    failures: Vec<Failure>,
    seen: HashSet<String>,
}

impl Found {
    fn push(&mut self, failure: Failure) {
        if self.seen.insert(format!("{failure:?}")) {
            self.failures.push(failure);
        }
    }
}

/// Parses `go test -json` output (stdout, possibly followed by stderr) into failures: build
/// errors first, then failing tests in the order they failed, then timeouts.
pub fn go_test_json(output: &str) -> Vec<Failure> {
    let events = Events::read(output);
    let mut found = Found::default();
    for (_, lines) in &events.builds {
        go_build_text(lines).into_iter().for_each(|f| found.push(f));
    }
    go_build_text(&events.text)
        .into_iter()
        .for_each(|f| found.push(f));
    let build_failed = !found.failures.is_empty();
    let mut reported = events.failed_tests(&mut found);
    let timed_out = events.timed_out_tests(&mut found, &mut reported);
    events.failed_packages(&mut found, &timed_out, build_failed);
    found.failures
}

impl Events {
    fn read(output: &str) -> Events {
        let mut ev = Events::default();
        for line in output.lines() {
            let Some(event) = line
                .trim()
                .starts_with('{')
                .then(|| serde_json::from_str::<Event>(line.trim()).ok())
                .flatten()
            else {
                ev.text.push_str(line);
                ev.text.push('\n');
                continue;
            };
            ev.add(event);
        }
        ev
    }

    fn add(&mut self, event: Event) {
        let out = event.output.unwrap_or_default();
        match (event.action.as_str(), event.test) {
            ("build-output", _) => {
                let path = event.import_path.unwrap_or_default();
                match self.builds.iter_mut().find(|(p, _)| *p == path) {
                    Some((_, lines)) => lines.push_str(&out),
                    None => self.builds.push((path, out)),
                }
            }
            ("output", Some(test)) => {
                let key = (event.package, test);
                if !self.tests.contains_key(&key) {
                    self.test_order.push(key.clone());
                }
                let entry = self.tests.entry(key).or_default();
                for piece in out.lines() {
                    entry
                        .lines
                        .push((piece.to_string(), event.output_type.clone()));
                }
            }
            ("output", None) => {
                let lines = self.package_output.entry(event.package).or_default();
                lines.extend(out.lines().map(str::to_string));
            }
            ("fail", Some(test)) => {
                let key = (event.package, test);
                if !self.tests.contains_key(&key) {
                    self.test_order.push(key.clone());
                }
                self.tests.entry(key.clone()).or_default();
                self.failed_order.push(key);
            }
            ("fail", None) => self
                .failed_packages
                .push((event.package, event.failed_build)),
            _ => {}
        }
    }

    /// The tests with a `fail` event, in that order (a parent of failed subtests with nothing of
    /// its own to say left out); the tests reported.
    fn failed_tests(&self, found: &mut Found) -> HashSet<(String, String)> {
        let mut reported: HashSet<(String, String)> = HashSet::new();
        for key in &self.failed_order {
            let (package, test) = key;
            let Some(state) = self.tests.get(key) else {
                continue;
            };
            let Some(failure) = test_failure(package, test, &state.lines) else {
                let prefix = format!("{test}/");
                if self
                    .failed_order
                    .iter()
                    .any(|(p, t)| p == package && t.starts_with(&prefix))
                {
                    continue;
                }
                found.push(Failure {
                    new: true,
                    name: format!("{package}.{test}"),
                    file: None,
                    line: None,
                    message: "failed".to_string(),
                });
                reported.insert(key.clone());
                continue;
            };
            found.push(failure);
            reported.insert(key.clone());
        }
        reported
    }

    /// Timeouts: the test that was running has output but no `fail` event. The packages that
    /// timed out.
    fn timed_out_tests(
        &self,
        found: &mut Found,
        reported: &mut HashSet<(String, String)>,
    ) -> HashSet<String> {
        let mut timed_out_packages = HashSet::new();
        for key in &self.test_order {
            let Some(state) = self.tests.get(key) else {
                continue;
            };
            let lines: Vec<&str> = state.lines.iter().map(|(l, _)| l.as_str()).collect();
            for (test, failure) in timeouts(&key.0, Some(&key.1), &lines) {
                timed_out_packages.insert(key.0.clone());
                if reported.insert((key.0.clone(), test.unwrap_or_default())) {
                    found.push(failure);
                }
            }
        }
        timed_out_packages
    }

    /// Failed packages not explained by a failed test, a timeout or a build failure.
    fn failed_packages(&self, found: &mut Found, timed_out: &HashSet<String>, build_failed: bool) {
        for (package, failed_build) in &self.failed_packages {
            if timed_out.contains(package) || self.failed_order.iter().any(|(p, _)| p == package) {
                continue;
            }
            let lines: Vec<&str> = self
                .package_output
                .get(package)
                .map(|v| v.iter().map(String::as_str).collect())
                .unwrap_or_default();
            let timeouts = timeouts(package, None, &lines);
            if !timeouts.is_empty() {
                timeouts.into_iter().for_each(|(_, f)| found.push(f));
                continue;
            }
            let build_line = lines
                .iter()
                .any(|l| l.contains("[build failed]") || l.contains("[setup failed]"));
            if failed_build.is_some() || (build_failed && build_line) {
                continue;
            }
            let own: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| !FRAME.is_match(l))
                .map(str::trim)
                .collect();
            let text = message(own);
            found.push(Failure {
                new: true,
                name: package.clone(),
                file: None,
                line: None,
                message: if text.is_empty() {
                    "package failed".to_string()
                } else {
                    text
                },
            });
        }
    }
}

/// The failure of one test from its output lines, or `None` when it printed nothing of its own.
fn test_failure(package: &str, test: &str, lines: &[(String, Option<String>)]) -> Option<Failure> {
    let tagged = lines.iter().any(|(_, t)| t.is_some());
    let own: Vec<(&str, Option<&str>)> = lines
        .iter()
        .map(|(l, t)| (l.as_str(), t.as_deref()))
        .filter(|(l, t)| match t {
            Some(t) => *t != "frame",
            None => !FRAME.is_match(l),
        })
        .collect();
    let panic = own.iter().position(|(l, _)| l.starts_with("panic: "));
    let before = &own[..panic.unwrap_or(own.len())];
    let errors: Vec<&str> = before
        .iter()
        .filter(|(_, t)| !tagged || matches!(t, Some("error" | "error-continue")))
        .map(|(l, _)| *l)
        .collect();
    let mut text: Vec<&str> = if errors.is_empty() && panic.is_none() {
        before.iter().map(|(l, _)| *l).collect()
    } else {
        errors
    };
    let mut at = text
        .iter()
        .find_map(|l| TEST_POSITION.captures(l))
        .map(|c| (c["file"].to_string(), c["line"].parse::<usize>().ok()));
    if let Some(index) = panic {
        text.push(own[index].0);
        let rest: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
        if let Some(frame) = stack_frame(package, None, &rest) {
            at = Some(frame);
        }
    }
    let text = message(text.into_iter().map(str::trim));
    if text.is_empty() {
        return None;
    }
    Some(Failure {
        new: true,
        name: format!("{package}.{test}"),
        file: at.as_ref().map(|(f, _)| f.clone()),
        line: at.and_then(|(_, l)| l),
        message: text,
    })
}

/// Failures for a `panic: test timed out after …` in `lines`: one per test of the `running
/// tests:` list, else one for `test` (the test the output was attributed to), else one for the
/// package. Each comes with the name of its test.
fn timeouts(package: &str, test: Option<&str>, lines: &[&str]) -> Vec<(Option<String>, Failure)> {
    let Some(start) = lines.iter().position(|l| TIMEOUT.is_match(l)) else {
        return Vec::new();
    };
    let after = TIMEOUT
        .captures(lines[start])
        .map(|c| c["after"].to_string())
        .unwrap_or_default();
    let mut running: Vec<&str> = Vec::new();
    if lines
        .get(start + 1)
        .is_some_and(|l| l.trim() == "running tests:")
    {
        running = lines[start + 2..]
            .iter()
            .map_while(|l| RUNNING_TEST.captures(l))
            .filter_map(|c| c.name("test").map(|m| m.as_str()))
            .collect();
    }
    if running.is_empty() {
        running.extend(test);
    }
    let message = format!("test timed out after {after}");
    if running.is_empty() {
        let failure = Failure {
            new: true,
            name: package.to_string(),
            file: None,
            line: None,
            message,
        };
        return vec![(None, failure)];
    }
    running
        .into_iter()
        .map(|test| {
            let at = stack_frame(package, Some(test), &lines[start..]);
            let failure = Failure {
                new: true,
                name: format!("{package}.{test}"),
                file: at.as_ref().map(|(f, _)| f.clone()),
                line: at.and_then(|(_, l)| l),
                message: message.clone(),
            };
            (Some(test.to_string()), failure)
        })
        .collect()
}

/// The location of the first stack frame of a function of `package` (of `function`, if
/// given, e.g. the test that hung), after the first `panic:` line.
fn stack_frame(
    package: &str,
    function: Option<&str>,
    lines: &[&str],
) -> Option<(String, Option<usize>)> {
    let start = lines.iter().position(|l| l.starts_with("panic: "))?;
    let lines = &lines[start..];
    for (i, line) in lines.iter().enumerate() {
        let Some(caps) = FRAME_FUNC.captures(line) else {
            continue;
        };
        let Some(rest) = caps["func"].strip_prefix(package) else {
            continue;
        };
        let Some(name) = rest
            .strip_prefix('.')
            .or_else(|| rest.strip_prefix("_test."))
        else {
            continue;
        };
        if function.is_some_and(|f| f != name) {
            continue;
        }
        if let Some(at) = lines.get(i + 1).and_then(|l| FRAME_AT.captures(l)) {
            return Some((at["file"].to_string(), at["line"].parse().ok()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::test_support::summary;

    #[test]
    fn failing_tests_subtests_and_a_build_failure() {
        let found = go_test_json(include_str!("../testdata/go-test.json"));
        assert_eq!(
            summary(&found),
            [
                ("", Some("build/build.go"), Some(6)),
                ("", Some("build/build.go"), Some(7)),
                ("", Some("build/build.go"), Some(7)),
                ("", Some("build/build.go"), Some(10)),
                (
                    "example.com/demo/calc.TestAdd",
                    Some("calc_test.go"),
                    Some(10)
                ),
                (
                    "example.com/demo/calc.TestAddTable/1+2",
                    Some("calc_test.go"),
                    Some(18)
                ),
                (
                    "example.com/demo/calc.TestAddTable/0+0",
                    Some("calc_test.go"),
                    Some(18)
                ),
            ]
        );
        assert_eq!(found[0].message, "declared and not used: unused");
        assert_eq!(
            found[1].message,
            "not enough arguments in call to Scale\nhave (int)\nwant (int, int)"
        );
        assert_eq!(found[2].message, "undefined: Missing");
        assert_eq!(found[4].message, "calc_test.go:10: Add(1, 1) = 3, want 2");
        assert_eq!(found[5].message, "calc_test.go:18: got 4\nwant 3");
    }

    #[test]
    fn go119_writes_build_errors_as_text_and_has_no_output_types() {
        let found = go_test_json(include_str!("../testdata/go-test-go119.txt"));
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "",
                "",
                "",
                "",
                "example.com/demo/calc.TestAdd",
                "example.com/demo/calc.TestAddTable/1+2",
                "example.com/demo/calc.TestAddTable/0+0",
            ]
        );
        assert_eq!(found[0].message, "unused declared but not used");
        assert_eq!(found[0].file.as_deref(), Some("build/build.go"));
        assert_eq!(found[4].message, "calc_test.go:10: Add(1, 1) = 3, want 2");
        assert_eq!(found[6].message, "calc_test.go:18: got 1\nwant 0");
    }

    #[test]
    fn timeout_names_the_hung_test_and_where_it_hung() {
        for (recording, file) in [
            (
                include_str!("../testdata/go-test-timeout.json"),
                "/tmp/pgv/go-test/slow/slow_test.go",
            ),
            (
                include_str!("../testdata/go-test-timeout-go119.json"),
                "/tmp/pgv/go119/slow/slow_test.go",
            ),
        ] {
            let found = go_test_json(recording);
            assert_eq!(
                summary(&found),
                [("example.com/demo/slow.TestHang", Some(file), Some(11))]
            );
            assert_eq!(found[0].message, "test timed out after 1s");
        }
    }

    #[test]
    fn panic_stops_the_message_and_points_at_the_package_frame() {
        let found = go_test_json(include_str!("../testdata/go-test-panic.json"));
        assert_eq!(
            summary(&found),
            [(
                "example.com/demo/boom.TestDivZero",
                Some("/tmp/pgv/go-test/boom/boom_test.go"),
                Some(5)
            )]
        );
        // The t.Log line before the panic has no OutputType, so it is not an error line.
        assert_eq!(
            found[0].message,
            "panic: runtime error: integer divide by zero [recovered, repanicked]"
        );
    }

    #[test]
    fn setup_failures_are_keyed_by_the_missing_import() {
        let found = go_test_json(include_str!("../testdata/go-test-setup.json"));
        assert_eq!(
            summary(&found),
            [
                ("", Some("other/other.go"), Some(3)),
                ("", Some("std/std.go"), Some(3))
            ]
        );
        assert_eq!(
            found[0].message,
            "no required module provides package github.com/pkg/errors; to add it:\n\
             go get github.com/pkg/errors"
        );
        assert!(
            found[1]
                .message
                .starts_with("package strngs is not in std (")
        );

        let found = go_test_json(include_str!("../testdata/go-test-gosum.json"));
        assert_eq!(found.len(), 3);
        assert_eq!(
            found[0].message,
            "missing go.sum entry for module providing package github.com/google/uuid \
             (imported by example.com/mod/app); to add:\ngo get example.com/mod/app"
        );
    }

    #[test]
    fn package_failure_without_a_failing_test() {
        let out = concat!(
            r#"{"Action":"start","Package":"example.com/x"}"#,
            "\n",
            r#"{"Action":"output","Package":"example.com/x","Output":"setup: no database\n"}"#,
            "\n",
            r#"{"Action":"output","Package":"example.com/x","Output":"FAIL\texample.com/x\t0.01s\n"}"#,
            "\n",
            r#"{"Action":"fail","Package":"example.com/x","Elapsed":0.01}"#,
            "\n",
        );
        let found = go_test_json(out);
        assert_eq!(summary(&found), [("example.com/x", None, None)]);
        assert_eq!(found[0].message, "setup: no database");
    }

    #[test]
    fn garbage_gives_nothing() {
        assert_eq!(go_test_json(""), []);
        assert_eq!(go_test_json("{not json\nhello\n"), []);
        assert_eq!(go_test_json(include_str!("../testdata/tsc.txt")), []);
    }
}
