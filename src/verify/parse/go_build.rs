//! `go build ./...` errors, on stderr (recorded with go 1.27.3 and 1.19.8); also the build
//! errors inside `go test -json` output.
//!
//! Quirks handled:
//! - `# example.com/demo/build` headers before a package's errors (absent for setup errors
//!   such as a missing go.sum entry or a missing module), skipped;
//! - `build/build.go:7:15: message`, with the path relative to the cwd (go 1.19 prints some as
//!   `./x.go`: the `./` is dropped) and the column optional;
//! - tab-indented continuation lines (`\thave (int)`, `\twant (int, int)`, `\tgo get …`)
//!   are appended to the message, trimmed;
//! - `go: …` errors (`go: go.mod requires go >= 1.30 …`) have no position; `go: downloading`
//!   progress lines are skipped, and so are `too many errors`, `FAIL`/`ok` lines of `go test`
//!   and anything else;
//! - a compiler error has no code: its name is `""`.

use std::sync::LazyLock;

use regex::Regex;

use super::{Failure, plain_path};

/// `path.go:line:col: message` (the column is optional).
#[allow(
    clippy::expect_used,
    reason = "a constant pattern: its tests compile it"
)]
static POSITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:vet: )?(?P<file>\S[^:]*\.go):(?P<line>\d+)(?::\d+)?: (?P<message>.*)$")
        .expect("constant regex")
});

/// Parses `go build ./...` errors (stderr): one failure per compiler or `go:` error.
pub fn go_build_text(output: &str) -> Vec<Failure> {
    let mut failures: Vec<Failure> = Vec::new();
    let mut continues = false;
    for line in output.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with('\t') || (line.starts_with("    ") && !line.trim().is_empty()) {
            if continues && let Some(last) = failures.last_mut() {
                last.message.push('\n');
                last.message.push_str(line.trim());
            }
            continue;
        }
        continues = false;
        if let Some(caps) = POSITION.captures(line) {
            failures.push(Failure {
                new: true,
                name: String::new(),
                file: Some(plain_path(&caps["file"])),
                line: caps["line"].parse().ok(),
                message: caps["message"].to_string(),
            });
            continues = true;
        } else if let Some(rest) = line.strip_prefix("go: ") {
            if ["downloading ", "finding ", "extracting "]
                .iter()
                .any(|p| rest.starts_with(p))
            {
                continue;
            }
            failures.push(Failure {
                new: true,
                name: String::new(),
                file: None,
                line: None,
                message: line.to_string(),
            });
            continues = true;
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::test_support::summary;

    #[test]
    fn go_build_text_with_headers_continuations_and_go_errors() {
        let found = go_build_text(include_str!("../testdata/go-build.txt"));
        assert_eq!(
            summary(&found),
            [
                ("", Some("build/build.go"), Some(6)),
                ("", Some("build/build.go"), Some(7)),
                ("", Some("build/build.go"), Some(7)),
                ("", Some("build/build.go"), Some(10)),
            ]
        );
        assert_eq!(
            found[3].message,
            "too many arguments in call to Scale\nhave (number, number, number)\nwant (int, int)"
        );
        let found = go_build_text(include_str!("../testdata/go-build-imports.txt"));
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].file.as_deref(), Some("std/std.go"));
        let found = go_build_text(include_str!("../testdata/go-build-gosum.txt"));
        assert_eq!(
            summary(&found),
            [
                ("", Some("app/app.go"), Some(4)),
                ("", Some("other/other.go"), Some(3)),
                ("", Some("std/std.go"), Some(3)),
            ]
        );
        assert_eq!(
            found[1].message,
            "github.com/google/uuid@v1.6.0: missing go.sum entry for go.mod file; to add it:\n\
             go mod download github.com/google/uuid"
        );
        let found = go_build_text(
            "go: downloading x v1\ngo: go.mod requires go >= 1.30 (running go 1.27.3; GOTOOLCHAIN=local)\n\
             # p\n./a.go:3:2: undefined: Foo\ntoo many errors\n",
        );
        assert_eq!(
            summary(&found),
            [("", None, None), ("", Some("a.go"), Some(3))]
        );
        assert!(
            found[0]
                .message
                .starts_with("go: go.mod requires go >= 1.30")
        );
    }

    #[test]
    fn garbage_gives_nothing() {
        assert_eq!(go_build_text(""), []);
        assert_eq!(go_build_text("\tdangling\nok  example.com/x\n"), []);
        assert_eq!(go_build_text(include_str!("../testdata/tsc.txt")), []);
    }
}
