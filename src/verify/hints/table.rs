//! The hint table: one row per error pattern, `(language, regex, hint template)`, in order of
//! usefulness (the engine keeps the first rows' hints when it has to cut).
//!
//! Every regex captures the relevant `name`, except the TS2554 rows: tsc does not name the
//! callee, so those capture the position (`file`, `line`, `col`) and the engine reads the
//! callee from the source. Templates use `{name}`, `{callee}` (`` `name` `` or "the function
//! called at file:line") and `{sites}` (the other call sites, filled by
//! [`super::hints_with_sites`]; without a root, `: {sites}` is left out).
//!
//! A regex is matched against each failure (`name: message`) and against each block of the
//! step's output (a block starts at a line beginning with `error` or `warning`, so a Rust
//! pattern may span the lines of one diagnostic with `(?s)` without reaching the next one).

use crate::project::detect::Lang;

const GO_SUM: &str = "run `go mod tidy` (go.sum lacks an entry for `{name}`)";
const IMPORT: &str = "cannot resolve `{name}`: check the import path or add the dependency";
const SIGNATURE: &str = "the signature of {callee} changed: update its other call sites: {sites}";
const UNDEFINED: &str =
    "`{name}` is not defined: did you forget to import it, or rename it everywhere?";
const NOT_EXPORTED: &str =
    "`{name}` is not exported there: check the spelling, or rename it everywhere";
const UNUSED: &str = "`{name}` is declared and not used: use it or remove it";
const UNUSED_IMPORT: &str = "`{name}` is imported and not used: remove the import";
const TIMEOUT_AFTER: &str =
    "a test timed out after {name}: look for a hang, a deadlock or an unclosed resource";
const TIMEOUT_TEST: &str = "a test timed out (`{name}` ran for over 60 seconds): look for a \
                            hang, a deadlock or an unclosed resource";

/// `(language, regex, hint template)`, most useful first.
pub(super) static TABLE: &[(Lang, &str, &str)] = &[
    // A missing go.sum entry: the fix is one command.
    (
        Lang::Go,
        r"missing go\.sum entry for module providing package (?P<name>[^\s;()]+)",
        GO_SUM,
    ),
    (
        Lang::Go,
        r"(?P<name>[^\s:@]+)@[^\s:]+: missing go\.sum entry",
        GO_SUM,
    ),
    // Unresolved imports and missing modules.
    (Lang::Rust, r"unresolved import `(?P<name>[^`]+)`", IMPORT),
    (
        Lang::Rust,
        r"use of unresolved module or unlinked crate `(?P<name>[^`]+)`",
        IMPORT,
    ),
    (
        Lang::Go,
        r"no required module provides package (?P<name>[^\s;]+)",
        IMPORT,
    ),
    (
        Lang::Go,
        r"package (?P<name>\S+) is not in (?:std|GOROOT)",
        IMPORT,
    ),
    (Lang::Go, r#"cannot find package "(?P<name>[^"]+)""#, IMPORT),
    (
        Lang::Python,
        r"ModuleNotFoundError: No module named '(?P<name>[^']+)'",
        IMPORT,
    ),
    (
        Lang::Python,
        r#"Cannot find implementation or library stub for module named "(?P<name>[^"]+)""#,
        IMPORT,
    ),
    (
        Lang::Python,
        r#"Library stubs not installed for "(?P<name>[^"]+)""#,
        IMPORT,
    ),
    (Lang::Node, r"Cannot find module '(?P<name>[^']+)'", IMPORT),
    // A call that no longer matches the signature.
    (
        Lang::Rust,
        r"(?s)this (?:function|method) takes \d+ arguments? but \d+ arguments? (?:was|were) supplied\n.*?\n(?:note|help): (?:associated )?(?:function|method) defined here\n.*?\bfn (?P<name>\w+)",
        SIGNATURE,
    ),
    (
        Lang::Rust,
        r"(?s)mismatched types\n.*?arguments to this (?:function|method) are incorrect\n.*?\n(?:note|help): (?:associated )?(?:function|method) defined here\n.*?\bfn (?P<name>\w+)",
        SIGNATURE,
    ),
    (
        Lang::Go,
        r"(?:not enough|too many) arguments in call to (?P<name>[\w.]+)",
        SIGNATURE,
    ),
    (
        Lang::Node,
        r"(?:(?P<file>[^\s(]+)\((?P<line>\d+),(?P<col>\d+)\): error )?TS255[45]: Expected (?:at least )?\d+(?:-\d+)? arguments?, but got \d+",
        SIGNATURE,
    ),
    (
        Lang::Python,
        r"TypeError: (?P<name>[\w.]+)\(\) (?:missing \d+ required (?:positional|keyword-only) arguments?|takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:was|were) given|got an unexpected keyword argument)",
        SIGNATURE,
    ),
    (
        Lang::Python,
        r#"Missing positional arguments? (?:"[^"]+"(?:, "[^"]+")* )?in call to "(?P<name>[^"]+)""#,
        SIGNATURE,
    ),
    (
        Lang::Python,
        r#"Too (?:many|few) arguments for "(?P<name>[^"]+)""#,
        SIGNATURE,
    ),
    (
        Lang::Python,
        r#"Unexpected keyword argument "[^"]+" for "(?P<name>[^"]+)""#,
        SIGNATURE,
    ),
    // Undefined names.
    (
        Lang::Rust,
        r"cannot find [\w ,]+? `(?P<name>[^`]+)` in (?:this scope|module|crate)",
        UNDEFINED,
    ),
    (
        Lang::Rust,
        r"use of undeclared (?:crate or module|type) `(?P<name>[^`]+)`",
        UNDEFINED,
    ),
    (Lang::Go, r"undefined: (?P<name>[\w.]+)", UNDEFINED),
    (
        Lang::Python,
        r"NameError: name '(?P<name>\w+)' is not defined",
        UNDEFINED,
    ),
    (
        Lang::Python,
        r#"Name "(?P<name>[\w.]+)" is not defined"#,
        UNDEFINED,
    ),
    (Lang::Node, r"Cannot find name '(?P<name>[^']+)'", UNDEFINED),
    (
        Lang::Node,
        r"has no exported member (?:named )?'(?P<name>[^']+)'",
        NOT_EXPORTED,
    ),
    // The same at run time: an ES module import of a name the module no longer exports.
    (
        Lang::Node,
        r"does not provide an export named '(?P<name>[^']+)'",
        NOT_EXPORTED,
    ),
    (
        Lang::Python,
        r"ImportError: cannot import name '(?P<name>\w+)'",
        NOT_EXPORTED,
    ),
    (
        Lang::Python,
        r#"Module (?:"[^"]+" )?has no attribute "(?P<name>[^"]+)""#,
        NOT_EXPORTED,
    ),
    // Declared and not used (errors in Go, and in TypeScript with noUnused*).
    (Lang::Go, r"declared and not used: (?P<name>\w+)", UNUSED),
    (Lang::Go, r"\b(?P<name>\w+) declared but not used", UNUSED),
    (
        Lang::Go,
        r#""(?P<name>[^"]+)" imported and not used"#,
        UNUSED_IMPORT,
    ),
    (
        Lang::Node,
        r"'(?P<name>[^']+)' is declared but its value is never read",
        UNUSED,
    ),
    (
        Lang::Node,
        r"'(?P<name>[^']+)' is declared but never used",
        UNUSED,
    ),
    // Timeouts.
    (
        Lang::Go,
        r"(?:panic: )?test timed out after (?P<name>\S+)",
        TIMEOUT_AFTER,
    ),
    (
        Lang::Rust,
        r"test (?P<name>\S+) has been running for over 60 seconds",
        TIMEOUT_TEST,
    ),
    (
        Lang::Python,
        r"Timeout \(>(?P<name>[\d.]+s)\)",
        TIMEOUT_AFTER,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Real recorded outputs for each row, in the table's order, with the names the row
    /// captures from them (distinct, in order; `file:line:col` for a row without a name).
    const CASES: &[&[(&str, &[&str])]] = &[
        &[(
            include_str!("../testdata/go-build-gosum.txt"),
            &["github.com/google/uuid"],
        )],
        &[(
            include_str!("../testdata/go-test-gosum.json"),
            &["github.com/google/uuid"],
        )],
        &[(
            include_str!("../testdata/cargo-build.txt"),
            &["std::collections::HashMapp", "serde_json"],
        )],
        &[(
            include_str!("../testdata/cargo-build.json"),
            &["serde_json", "helpers"],
        )],
        &[(
            include_str!("../testdata/go-build-imports.txt"),
            &["github.com/pkg/errors"],
        )],
        &[(include_str!("../testdata/go-test-setup.json"), &["strngs"])],
        &[(
            include_str!("../testdata/go-build-gopath.txt"),
            &["github.com/nope/missing"],
        )],
        &[(
            include_str!("../testdata/pytest-collect.xml"),
            &["requestz"],
        )],
        &[(include_str!("../testdata/mypy.json"), &["yamlx"])],
        &[(include_str!("../testdata/mypy-more.json"), &["yaml"])],
        &[(include_str!("../testdata/tsc.txt"), &["left-padx"])],
        &[(include_str!("../testdata/cargo-build.txt"), &["scale"])],
        &[(include_str!("../testdata/cargo-build.json"), &["scale"])],
        &[
            (include_str!("../testdata/go-build.txt"), &["Scale"]),
            (include_str!("../testdata/go-test.json"), &["Scale"]),
        ],
        &[
            (
                include_str!("../testdata/tsc.txt"),
                &["src/main.ts:6:10", "src/main.ts:10:22"],
            ),
            (
                include_str!("../testdata/tsc-more.txt"),
                &["src/main.ts:6:18"],
            ),
        ],
        &[
            (include_str!("../testdata/pytest-junit.xml"), &["scale"]),
            (include_str!("../testdata/pytest-more.xml"), &["scale"]),
        ],
        &[(include_str!("../testdata/mypy.json"), &["scale"])],
        &[(include_str!("../testdata/mypy-more.json"), &["scale"])],
        &[(include_str!("../testdata/mypy-more.json"), &["scale"])],
        &[
            (
                include_str!("../testdata/cargo-build.txt"),
                &["missing_value", "format_label", "helpers"],
            ),
            (
                include_str!("../testdata/cargo-build-types.txt"),
                &["Vecc", "Point"],
            ),
        ],
        &[(
            include_str!("../testdata/cargo-build-types.txt"),
            &["Vecc", "Point"],
        )],
        &[(include_str!("../testdata/go-build.txt"), &["Missing"])],
        &[(include_str!("../testdata/pytest-junit.xml"), &["nme"])],
        &[(include_str!("../testdata/mypy.json"), &["undefined_thing"])],
        &[(
            include_str!("../testdata/tsc.txt"),
            &["formatName", "zqxwv"],
        )],
        &[
            (include_str!("../testdata/tsc.txt"), &["scal"]),
            (include_str!("../testdata/tsc-more.txt"), &["total"]),
        ],
        &[(
            include_str!("../testdata/node-test-load-tap.txt"),
            &["addNumbers"],
        )],
        &[(include_str!("../testdata/pytest-more.xml"), &["scal"])],
        &[(
            include_str!("../testdata/mypy-more.json"),
            &["scal", "nothing"],
        )],
        &[(include_str!("../testdata/go-build.txt"), &["unused"])],
        &[(include_str!("../testdata/go-test-go119.txt"), &["unused"])],
        &[(
            include_str!("../testdata/go-build-unused-import.txt"),
            &["os"],
        )],
        &[(
            include_str!("../testdata/tsc.txt"),
            &["unused", "unusedParam"],
        )],
        &[(include_str!("../testdata/tsc-more.txt"), &["Unused"])],
        &[
            (include_str!("../testdata/go-test-timeout.json"), &["1s"]),
            (
                include_str!("../testdata/go-test-timeout-go119.json"),
                &["1s"],
            ),
        ],
        &[(
            include_str!("../testdata/cargo-test-killed.txt"),
            &["tests::hangs"],
        )],
        // In the XML report it reads `Timeout (&gt;1.0s)`: the console has it plain.
        &[(include_str!("../testdata/pytest-console.txt"), &["1.0s"])],
    ];

    #[test]
    fn every_row_captures_its_name_from_real_output() {
        assert_eq!(CASES.len(), TABLE.len(), "one entry of CASES per row");
        for ((lang, pattern, _), cases) in TABLE.iter().zip(CASES) {
            let regex = regex::Regex::new(pattern).unwrap();
            for (recording, expected) in *cases {
                let mut names: Vec<String> = Vec::new();
                for text in super::super::texts(&[], recording) {
                    for caps in regex.captures_iter(&text.body) {
                        let name = match caps.name("name") {
                            Some(name) => name.as_str().to_string(),
                            None => format!("{}:{}:{}", &caps["file"], &caps["line"], &caps["col"]),
                        };
                        if !names.contains(&name) {
                            names.push(name);
                        }
                    }
                }
                assert_eq!(names, *expected, "{lang:?} {pattern}");
            }
        }
    }

    #[test]
    fn every_row_compiles_and_captures_what_its_template_needs() {
        for (lang, pattern, hint) in TABLE {
            let regex =
                regex::Regex::new(pattern).unwrap_or_else(|e| panic!("{lang:?} {pattern}: {e}"));
            let groups: Vec<&str> = regex.capture_names().flatten().collect();
            let named = groups.contains(&"name");
            let positioned = ["file", "line", "col"].iter().all(|g| groups.contains(g));
            assert!(named || positioned, "{pattern} captures no name");
            if !named {
                assert!(!hint.contains("{name}"), "{pattern}: {hint}");
            }
            if hint.contains("{sites}") {
                assert!(hint.ends_with(": {sites}"), "{hint}");
            }
        }
    }
}
