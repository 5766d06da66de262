//! `cargo test` (libtest's text output, stdout and stderr together; recorded with cargo 1.95).
//!
//! Quirks handled:
//! - each test binary (unit tests, each `tests/*.rs`, doctests) is a run of its own, starting
//!   at `running N tests`; the same test name may appear in two runs, so sections are matched
//!   within their run;
//! - a result line reads `test tests::x ... FAILED`, or `test tests::x - should panic ... FAILED`
//!   (the suffix is not part of the name), and a doctest is named
//!   `src/lib.rs - add (line 7)`; with `-q` there are no result lines, only the `failures:`
//!   list of names (indented by 4 spaces) at the end of the run;
//! - the detail is in `---- NAME stdout ----`, up to the next such header or the `failures:`
//!   list: the test's own captured output, then `thread 'NAME' (12345) panicked at
//!   src/lib.rs:10:5:` (the thread id is new in Rust 1.89; before 1.73 the message was quoted on
//!   the same line: `panicked at 'msg', src/lib.rs:10:5`) followed by the message lines, up to
//!   `note: run with `RUST_BACKTRACE=1`` or `stack backtrace:`;
//! - a doctest panics in thread `'main'` after `Test executable failed (exit status: 101).`; a
//!   doctest that does not compile shows rustc's `error[E0308]: …` with ` --> src/lib.rs:9:13`;
//! - `#[should_panic]` that did not panic: `note: test did not panic as expected at
//!   src/lib.rs:14:8` (no location before Rust 1.80 or so);
//! - `test NAME has been running for over 60 seconds` is printed once per slow test; it is a
//!   failure only when no result for that test follows (the run was killed), and a test that
//!   then passes is not one;
//! - with `--nocapture` there is no section: the panic line is looked up by thread name.
//!
//! Compile errors of the crate itself (`error[E0425]` before any `running`) are not parsed
//! here: run `cargo build --message-format=json` and [`super::compiler`].

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;

use super::{Failure, message, plain_path};

#[allow(
    clippy::expect_used,
    reason = "a constant pattern: its tests compile it"
)]
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant regex")
}

static RUNNING: LazyLock<Regex> = LazyLock::new(|| regex(r"^running \d+ tests?$"));
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^test (?P<name>.+?)(?: - should panic)? \.\.\. (?P<result>ok|FAILED|ignored|bench)")
});
static SLOW: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^test (?P<name>.+?)(?: - should panic)? has been running for over 60 seconds$")
});
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^---- (?P<name>.+) (?:stdout|stderr) ----$"));
/// Rust ≥ 1.73: the message follows on the next lines.
static PANIC: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at (?P<file>.+?):(?P<line>\d+):\d+:$")
});
/// Rust < 1.73: `panicked at 'message', file:line:col`, the message possibly on several lines.
static OLD_PANIC: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at '(?P<rest>.*)$"));
static OLD_PANIC_END: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?P<message>.*)', (?P<file>[^\s']+?):(?P<line>\d+):\d+$"));
static NO_PANIC: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^note: test did not panic as expected(?: at (?P<file>.+?):(?P<line>\d+):\d+)?$")
});
static RUSTC_ERROR: LazyLock<Regex> = LazyLock::new(|| regex(r"^error(?:\[E\d+\])?: .+$"));
static ARROW: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*--> (?P<file>.+?):(?P<line>\d+):\d+$"));
static DOCTEST: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?P<file>\S.*?) - .*\(line (?P<line>\d+)\)$"));

/// One test binary's output.
#[derive(Default)]
struct Run<'a> {
    failed: Vec<String>,
    finished: HashSet<String>,
    slow: Vec<String>,
    sections: HashMap<String, Vec<&'a str>>,
}

impl Run<'_> {
    fn fail(&mut self, name: &str) {
        if !self.failed.iter().any(|n| n == name) {
            self.failed.push(name.to_string());
        }
        self.finished.insert(name.to_string());
    }
}

/// Parses `cargo test` output (stdout and stderr concatenated) into one failure per failed
/// test, plus one per test that was still running after 60 seconds when the output ended.
pub fn libtest(output: &str) -> Vec<Failure> {
    let lines: Vec<&str> = output.lines().map(|l| l.trim_end_matches('\r')).collect();
    let mut runs: Vec<Run> = Vec::new();
    let mut section: Option<String> = None;
    let mut in_list = false;
    for (i, &line) in lines.iter().enumerate() {
        if RUNNING.is_match(line) {
            runs.push(Run::default());
            section = None;
            in_list = false;
            continue;
        }
        let Some(run) = runs.last_mut() else {
            continue;
        };
        if let Some(caps) = SECTION.captures(line) {
            section = Some(caps["name"].to_string());
            in_list = false;
            continue;
        }
        if line == "failures:" {
            section = None;
            // The second `failures:` of a run lists the names; the first one opens sections.
            let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
            in_list = next.is_some_and(|l| l.starts_with("    "));
            continue;
        }
        if line.starts_with("test result: ") {
            section = None;
            in_list = false;
            continue;
        }
        if let Some(name) = &section {
            run.sections.entry(name.clone()).or_default().push(line);
            continue;
        }
        if in_list {
            match line.strip_prefix("    ") {
                Some(name) if !name.trim().is_empty() => run.fail(name.trim()),
                _ => in_list = false,
            }
            continue;
        }
        if let Some(caps) = SLOW.captures(line) {
            run.slow.push(caps["name"].to_string());
        } else if let Some(caps) = RESULT.captures(line) {
            if &caps["result"] == "FAILED" {
                run.fail(&caps["name"]);
            } else {
                run.finished.insert(caps["name"].to_string());
            }
        }
    }

    let mut failures = Vec::new();
    for run in &runs {
        for name in &run.failed {
            let failure = match run.sections.get(name) {
                Some(section) => from_section(name, section),
                None => from_inline_panic(name, &lines),
            };
            failures.push(failure);
        }
        for name in run.slow.iter().filter(|n| !run.finished.contains(*n)) {
            failures.push(Failure {
                new: true,
                name: name.clone(),
                file: None,
                line: None,
                message: "test has been running for over 60 seconds and did not finish \
                          (timed out or killed)"
                    .to_string(),
            });
        }
    }
    failures
}

/// The failure of test `name` from its `---- name stdout ----` section.
fn from_section(name: &str, section: &[&str]) -> Failure {
    if let Some(failure) = panic_in(name, section, None) {
        return failure;
    }
    for line in section {
        if let Some(caps) = NO_PANIC.captures(line) {
            return Failure {
                new: true,
                name: name.to_string(),
                file: caps.name("file").map(|m| plain_path(m.as_str())),
                line: caps.name("line").and_then(|m| m.as_str().parse().ok()),
                message: "test did not panic as expected".to_string(),
            };
        }
    }
    // A doctest that does not compile: rustc's first error and its location.
    if let Some(first) = section.iter().position(|l| RUSTC_ERROR.is_match(l)) {
        let at = section[first..].iter().find_map(|l| ARROW.captures(l));
        return Failure {
            new: true,
            name: name.to_string(),
            file: at.as_ref().map(|c| plain_path(&c["file"])),
            line: at.as_ref().and_then(|c| c["line"].parse().ok()),
            message: section[first].to_string(),
        };
    }
    // Anything else (a test returning `Err`: `Error: "boom"`): the section's text.
    let mut failure = from_name(name);
    failure.message = message(section.iter().copied());
    failure
}

/// With `--nocapture` there is no section: find the panic of the thread named after the test.
fn from_inline_panic(name: &str, lines: &[&str]) -> Failure {
    panic_in(name, lines, Some(name)).unwrap_or_else(|| from_name(name))
}

/// The first panic in `lines` (of thread `thread` if given), with the message lines after it.
fn panic_in(name: &str, lines: &[&str], thread: Option<&str>) -> Option<Failure> {
    for (i, &line) in lines.iter().enumerate() {
        if let Some(caps) = PANIC.captures(line) {
            if thread.is_some_and(|t| t != &caps["thread"]) {
                continue;
            }
            let text = lines[i + 1..].iter().take_while(|l| !ends_panic_message(l));
            return Some(Failure {
                new: true,
                name: name.to_string(),
                file: Some(plain_path(&caps["file"])),
                line: caps["line"].parse().ok(),
                message: message(text.copied()),
            });
        }
        if let Some(caps) = OLD_PANIC.captures(line) {
            if thread.is_some_and(|t| t != &caps["thread"]) {
                continue;
            }
            let rest = caps.name("rest").map_or("", |m| m.as_str());
            let mut text: Vec<&str> = Vec::new();
            for candidate in std::iter::once(rest).chain(lines[i + 1..].iter().copied()) {
                if let Some(end) = OLD_PANIC_END.captures(candidate) {
                    text.push(end.name("message").map_or("", |m| m.as_str()));
                    return Some(Failure {
                        new: true,
                        name: name.to_string(),
                        file: Some(plain_path(&end["file"])),
                        line: end["line"].parse().ok(),
                        message: message(text),
                    });
                }
                text.push(candidate);
            }
        }
    }
    None
}

/// Lines that end a panic message: the backtrace hint or the backtrace itself, or (without a
/// section, `--nocapture`) the next result line.
fn ends_panic_message(line: &&str) -> bool {
    line.starts_with("note: run with `RUST_BACKTRACE")
        || line.starts_with("stack backtrace:")
        || line.starts_with("note: Some details are omitted")
        || PANIC.is_match(line)
        || RESULT.is_match(line)
        || *line == "failures:"
}

/// A failure with no detail: the location of a doctest comes from its name.
fn from_name(name: &str) -> Failure {
    let caps = DOCTEST.captures(name);
    Failure {
        new: true,
        name: name.to_string(),
        file: caps.as_ref().map(|c| plain_path(&c["file"])),
        line: caps.as_ref().and_then(|c| c["line"].parse().ok()),
        message: "failed".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::test_support::summary;

    #[test]
    fn unit_integration_and_doc_test_failures() {
        let found = libtest(include_str!("../testdata/cargo-test-failures.txt"));
        assert_eq!(
            summary(&found),
            [
                ("tests::adds_small_numbers", Some("src/lib.rs"), Some(24)),
                ("tests::custom_message", Some("src/lib.rs"), Some(40)),
                ("tests::rejects_garbage", Some("src/lib.rs"), Some(15)),
                ("integration_fails", Some("tests/integration.rs"), Some(3)),
                ("src/lib.rs - add (line 7)", Some("src/lib.rs"), Some(9)),
                ("src/lib.rs - add (line 3)", Some("src/lib.rs"), Some(5)),
            ]
        );
        assert_eq!(
            found[0].message,
            "assertion `left == right` failed\n  left: 3\n right: 4"
        );
        assert_eq!(found[1].message, "math is broken:\nexpected 5 got 4");
        assert_eq!(
            found[2].message,
            "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }"
        );
        assert_eq!(
            found[3].message,
            "assertion `left != right` failed\n  left: 2\n right: 2"
        );
        // A doctest that does not compile, and one that panics in thread 'main'.
        assert_eq!(found[4].message, "error[E0308]: mismatched types");
        assert_eq!(
            found[5].message,
            "assertion `left == right` failed\n  left: 4\n right: 5"
        );
    }

    #[test]
    fn backtrace_is_not_part_of_the_message() {
        let found = libtest(include_str!("../testdata/cargo-test-backtrace.txt"));
        // The order is the order in which the tests finished (they run in parallel).
        assert_eq!(
            summary(&found),
            [
                ("tests::custom_message", Some("src/lib.rs"), Some(40)),
                ("tests::adds_small_numbers", Some("src/lib.rs"), Some(24)),
                ("tests::rejects_garbage", Some("src/lib.rs"), Some(15)),
            ]
        );
        assert_eq!(found[0].message, "math is broken:\nexpected 5 got 4");
        assert_eq!(
            found[1].message,
            "assertion `left == right` failed\n  left: 3\n right: 4"
        );
    }

    #[test]
    fn should_panic_captured_output_and_a_slow_test_that_passed() {
        let out = include_str!("../testdata/cargo-test-slow.txt");
        assert!(out.contains("test tests::hangs has been running for over 60 seconds"));
        let found = libtest(out);
        assert_eq!(
            summary(&found),
            [
                ("tests::prints_then_fails", Some("src/lib.rs"), Some(21)),
                ("tests::should_boom", Some("src/lib.rs"), Some(14)),
            ]
        );
        // The test's own stdout ("connecting to db") precedes the panic and is left out.
        assert_eq!(
            found[0].message,
            "called `Result::unwrap()` on an `Err` value: \"refused\""
        );
        assert_eq!(found[1].message, "test did not panic as expected");
    }

    #[test]
    fn a_test_still_running_when_the_run_was_killed() {
        let found = libtest(include_str!("../testdata/cargo-test-killed.txt"));
        assert_eq!(
            summary(&found),
            [
                ("tests::prints_then_fails", None, None),
                ("tests::hangs", None, None),
            ]
        );
        assert_eq!(found[0].message, "failed");
        assert!(found[1].message.contains("running for over 60 seconds"));
    }

    #[test]
    fn quiet_mode_old_panics_and_nocapture() {
        let quiet = "running 2 tests\n.F\nfailures:\n\n---- a::b stdout ----\n\
                     thread 'a::b' panicked at 'assertion failed: `(left == right)`\n  \
                     left: `1`,\n right: `2`', src/a.rs:7:5\n\nfailures:\n    a::b\n\n\
                     test result: FAILED. 1 passed; 1 failed\n";
        let found = libtest(quiet);
        assert_eq!(summary(&found), [("a::b", Some("src/a.rs"), Some(7))]);
        assert_eq!(
            found[0].message,
            "assertion failed: `(left == right)`\n  left: `1`,\n right: `2`"
        );

        let nocapture = "running 1 test\nhello\nthread 'x::y' (7) panicked at src/x.rs:3:9:\n\
                         boom\ntest x::y ... FAILED\n\nfailures:\n\nfailures:\n    x::y\n";
        let found = libtest(nocapture);
        assert_eq!(summary(&found), [("x::y", Some("src/x.rs"), Some(3))]);
        assert_eq!(found[0].message, "boom");
    }

    #[test]
    fn compile_errors_and_garbage_give_nothing() {
        assert_eq!(libtest(include_str!("../testdata/cargo-build.txt")), []);
        assert_eq!(libtest(""), []);
        assert_eq!(libtest("test x ... FAILED\n"), []); // no `running` line: not libtest
        let err = "running 1 test\ntest e ... FAILED\n\nfailures:\n\n---- e stdout ----\n\
                   Error: \"boom\"\n\n\nfailures:\n    e\n";
        let found = libtest(err);
        assert_eq!(summary(&found), [("e", None, None)]);
        assert_eq!(found[0].message, "Error: \"boom\"");
    }
}
