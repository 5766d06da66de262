//! Python: the report of `pytest --junitxml=PATH` (recorded with pytest 9.2) and the errors of
//! `python -m compileall -q .` (CPython 3.11).
//!
//! Quirks handled, pytest's JUnit XML:
//! - a `<testcase classname="tests.test_calc.TestGroup" name="test_in_class">` fails when it
//!   holds a `<failure>` (an assertion or exception in the test) or an `<error>` (in a fixture:
//!   `message="failed on setup with &quot;RuntimeError: …&quot;"`, or a collection error);
//! - the name is rebuilt as pytest's node id, `tests/test_calc.py::TestGroup::test_in_class`,
//!   which `pytest` accepts to rerun it: `classname` is the node id with `/` turned into `.`
//!   and `.py` dropped, so the module part is the `file` attribute when present, else the
//!   components before the first capitalised one (`TestGroup`, a `unittest.TestCase`
//!   subclass; modules are lowercase by convention);
//! - a collection error is `classname=""` and `name="tests.test_imports"` with
//!   `message="collection failure"`: the name becomes `tests/test_imports.py` and the message
//!   the traceback's last `E   ` line (`ModuleNotFoundError: No module named 'requestz'`);
//! - the message is the first line of the `message` attribute (`&#10;` is a newline in it);
//! - `file` and `line` attributes exist only with `-o junit_family=xunit1`, and **`line` is
//!   0-based** and points at the `def`: the location is the last traceback line in that file
//!   (`tests/test_calc.py:7: AssertionError`), else the `def` line + 1. Without them (the
//!   default `xunit2`) it is the traceback's last `path.py:N: ` line, which may be in the code
//!   under test (`pkg/calc.py:10: TypeError`), or the last `File "…", line N` with
//!   `--tb=native`;
//! - quick-xml 0.38 reports `&gt;` and `&#10;` in text as separate reference events, which are
//!   resolved here.
//!
//! `python -m compileall -q .` prints on stdout, per file that does not compile: `*** Error
//! compiling './sub/bad.py'...`, `  File "./sub/bad.py", line 1`, the code and a caret, then
//! `SyntaxError: invalid syntax`; the exception class is the name, the rest the message, and
//! the leading `./` is dropped.

use std::sync::LazyLock;

use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use regex::Regex;

use super::{Failure, plain_path};

#[allow(
    clippy::expect_used,
    reason = "a constant pattern: its tests compile it"
)]
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant regex")
}

/// A traceback location: `path.py:12: …` (pytest) or `File "path.py", line 12` (native).
static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?m)^(?:(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+):(?: |$)|\s*File "(?P<nfile>[^"]+\.py)", line (?P<nline>\d+))"#,
    )
});
static COMPILING: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\*\*\* Error compiling '(?P<file>.+)'\.\.\.$"));
static FILE_LINE: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)"#));
static EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?P<kind>[A-Za-z_]\w*(?:Error|Exception|Warning)): ?(?P<message>.*)$")
});

/// The testcase being read.
#[derive(Default)]
struct Case {
    classname: String,
    name: String,
    file: Option<String>,
    line: Option<usize>,
}

/// The `<failure>` or `<error>` being read.
struct Open {
    message: String,
    text: String,
}

/// Parses a pytest JUnit XML report into one failure per `<failure>` or `<error>`. Input that
/// is not XML, or whose root is not `<testsuites>`/`<testsuite>`, is an `Err`.
pub fn pytest_junit(xml: &str) -> Result<Vec<Failure>, String> {
    let mut reader = Reader::from_str(xml);
    let mut failures = Vec::new();
    let mut root = false;
    let mut case: Option<Case> = None;
    let mut open: Option<Open> = None;
    let mut depth = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| {
            format!(
                "pytest junit: bad XML at byte {}: {e}",
                reader.error_position()
            )
        })?;
        match &event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        match event {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) if !root => {
                let tag = e.local_name();
                if !matches!(tag.as_ref(), b"testsuites" | b"testsuite") {
                    return Err(format!(
                        "pytest junit: not a JUnit report: the root element is <{}>",
                        String::from_utf8_lossy(tag.as_ref())
                    ));
                }
                root = true;
            }
            Event::Start(e) => match e.local_name().as_ref() {
                b"testcase" => case = Some(read_case(&e)),
                b"failure" | b"error" if case.is_some() => {
                    open = Some(Open {
                        message: attribute(&e, "message").unwrap_or_default(),
                        text: String::new(),
                    });
                }
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                b"failure" | b"error" => {
                    if let Some(case) = &case {
                        let open = Open {
                            message: attribute(&e, "message").unwrap_or_default(),
                            text: String::new(),
                        };
                        failures.push(failure(case, open));
                    }
                }
                _ => {}
            },
            Event::Text(t) => {
                if let Some(open) = &mut open {
                    open.text.push_str(&t.decode().unwrap_or_default());
                }
            }
            Event::CData(t) => {
                if let Some(open) = &mut open {
                    open.text.push_str(&t.decode().unwrap_or_default());
                }
            }
            Event::GeneralRef(r) => {
                if let Some(open) = &mut open {
                    match r.resolve_char_ref() {
                        Ok(Some(c)) => open.text.push(c),
                        _ => {
                            let name = r.decode().unwrap_or_default();
                            match quick_xml::escape::resolve_predefined_entity(&name) {
                                Some(text) => open.text.push_str(text),
                                None => open.text.push_str(&format!("&{name};")),
                            }
                        }
                    }
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                b"failure" | b"error" => {
                    if let (Some(case), Some(open)) = (&case, open.take()) {
                        failures.push(failure(case, open));
                    }
                }
                b"testcase" => case = None,
                _ => {}
            },
            _ => {}
        }
    }
    if !root {
        return Err("pytest junit: no XML element in the report".to_string());
    }
    if depth > 0 {
        return Err("pytest junit: truncated report (unclosed elements)".to_string());
    }
    Ok(failures)
}

/// An attribute's unescaped value, `None` when absent or malformed.
fn attribute(e: &BytesStart, name: &str) -> Option<String> {
    let attr = e.try_get_attribute(name).ok()??;
    attr.unescape_value().ok().map(|v| v.into_owned())
}

fn read_case(e: &BytesStart) -> Case {
    Case {
        classname: attribute(e, "classname").unwrap_or_default(),
        name: attribute(e, "name").unwrap_or_default(),
        file: attribute(e, "file").filter(|f| !f.is_empty()),
        line: attribute(e, "line").and_then(|l| l.parse().ok()),
    }
}

fn failure(case: &Case, open: Open) -> Failure {
    let locations: Vec<(String, Option<usize>)> = LOCATION
        .captures_iter(&open.text)
        .filter_map(|c| {
            let file = c.name("file").or_else(|| c.name("nfile"))?;
            let line = c.name("line").or_else(|| c.name("nline"))?;
            Some((file.as_str().to_string(), line.as_str().parse().ok()))
        })
        .collect();
    let (file, line) = match &case.file {
        Some(file) => {
            let in_file = locations
                .iter()
                .rev()
                .find(|(f, _)| f == file || f.ends_with(&format!("/{file}")));
            match in_file {
                Some((_, line)) => (Some(file.clone()), *line),
                None => (Some(file.clone()), case.line.map(|l| l + 1)),
            }
        }
        None => match locations.last() {
            Some((file, line)) => (Some(file.clone()), *line),
            None => (None, None),
        },
    };
    let first = open.message.lines().next().unwrap_or("").trim();
    let message = if first.is_empty() || first == "collection failure" {
        open.text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("E "))
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| first.to_string())
    } else {
        first.to_string()
    };
    Failure {
        new: true,
        name: node_id(case),
        file,
        line,
        message,
    }
}

/// pytest's node id, rebuilt from the mangled `classname` (see the module docs).
fn node_id(case: &Case) -> String {
    if case.classname.is_empty() {
        if case.name.contains("::") || case.name.contains('/') || case.name.ends_with(".py") {
            return case.name.clone();
        }
        return format!("{}.py", case.name.replace('.', "/"));
    }
    let parts: Vec<&str> = case.classname.split('.').collect();
    let module_len = case
        .file
        .as_deref()
        .and_then(|file| file.strip_suffix(".py"))
        .map(|module| module.replace(['/', '\\'], "."))
        .filter(|module| {
            case.classname == *module || case.classname.starts_with(&format!("{module}."))
        })
        .map(|module| module.split('.').count())
        .unwrap_or_else(|| {
            parts
                .iter()
                .position(|p| p.starts_with(|c: char| c.is_uppercase()))
                .unwrap_or(parts.len())
        });
    let module = match &case.file {
        Some(file) if module_len > 0 => file.clone(),
        _ => format!("{}.py", parts[..module_len].join("/")),
    };
    let mut id = module;
    for class in &parts[module_len..] {
        id.push_str("::");
        id.push_str(class);
    }
    id.push_str("::");
    id.push_str(&case.name);
    id
}

/// Parses `python -m compileall -q .` output: one failure per file that did not compile.
pub fn python_compile(output: &str) -> Vec<Failure> {
    let mut failures: Vec<Failure> = Vec::new();
    let mut open = false;
    for line in output.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(caps) = COMPILING.captures(line) {
            failures.push(Failure {
                new: true,
                name: String::new(),
                file: Some(plain_path(&caps["file"])),
                line: None,
                message: String::new(),
            });
            open = true;
            continue;
        }
        let Some(last) = failures.last_mut().filter(|_| open) else {
            continue;
        };
        if line.trim().is_empty() {
            open = last.message.is_empty();
            continue;
        }
        if let Some(caps) = FILE_LINE.captures(line) {
            last.file = Some(plain_path(&caps["file"]));
            last.line = caps["line"].parse().ok();
        } else if !line.starts_with(' ') {
            match EXCEPTION.captures(line) {
                Some(caps) => {
                    last.name = caps["kind"].to_string();
                    last.message = caps["message"].to_string();
                }
                None => last.message = line.to_string(),
            }
        }
    }
    for failure in &mut failures {
        if failure.message.is_empty() {
            failure.message = "could not be compiled".to_string();
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::test_support::summary;

    #[test]
    fn junit_xunit2_failures_and_a_fixture_error() {
        let found = pytest_junit(include_str!("../testdata/pytest-junit.xml")).unwrap();
        assert_eq!(
            summary(&found),
            [
                (
                    "tests/test_calc.py::test_add",
                    Some("tests/test_calc.py"),
                    Some(7)
                ),
                (
                    "tests/test_calc.py::test_area",
                    Some("pkg/calc.py"),
                    Some(10)
                ),
                (
                    "tests/test_calc.py::test_greet",
                    Some("pkg/calc.py"),
                    Some(14)
                ),
                (
                    "tests/test_calc.py::test_with_db",
                    Some("tests/test_calc.py"),
                    Some(24)
                ),
                (
                    "tests/test_calc.py::TestGroup::test_in_class",
                    Some("tests/test_calc.py"),
                    Some(33)
                ),
                (
                    "tests/test_calc.py::test_hang",
                    Some("tests/test_calc.py"),
                    Some(38)
                ),
            ]
        );
        let messages: Vec<&str> = found.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "assert 3 == 2",
                "TypeError: scale() missing 1 required positional argument: 'factor'",
                "NameError: name 'nme' is not defined",
                r#"failed on setup with "RuntimeError: cannot connect to db""#,
                "AssertionError: lists differ",
                "Failed: Timeout (>1.0s) from pytest-timeout.",
            ]
        );
    }

    #[test]
    fn junit_xunit1_locations_stay_in_the_test_file() {
        let xml = include_str!("../testdata/pytest-xunit1.xml");
        assert!(xml.contains(r#"name="test_add" file="tests/test_calc.py" line="5""#));
        let found = pytest_junit(xml).unwrap();
        assert_eq!(
            summary(&found),
            [
                (
                    "tests/test_calc.py::test_add",
                    Some("tests/test_calc.py"),
                    Some(7)
                ),
                (
                    "tests/test_calc.py::test_area",
                    Some("tests/test_calc.py"),
                    Some(15)
                ),
                (
                    "tests/test_calc.py::test_greet",
                    Some("tests/test_calc.py"),
                    Some(19)
                ),
                (
                    "tests/test_calc.py::test_with_db",
                    Some("tests/test_calc.py"),
                    Some(24)
                ),
                (
                    "tests/test_calc.py::TestGroup::test_in_class",
                    Some("tests/test_calc.py"),
                    Some(33)
                ),
                (
                    "tests/test_calc.py::test_hang",
                    Some("tests/test_calc.py"),
                    Some(38)
                ),
            ]
        );
        // Without a traceback line in the file, the 0-based `def` line + 1.
        let bare = r#"<testsuites><testsuite><testcase classname="t.test_x" name="test_y" file="t/test_x.py" line="5"><failure message="boom" /></testcase></testsuite></testsuites>"#;
        assert_eq!(
            summary(&pytest_junit(bare).unwrap()),
            [("t/test_x.py::test_y", Some("t/test_x.py"), Some(6))]
        );
    }

    #[test]
    fn junit_collection_error_names_the_module() {
        let found = pytest_junit(include_str!("../testdata/pytest-collect.xml")).unwrap();
        assert_eq!(
            summary(&found),
            [(
                "tests/test_imports.py",
                Some("tests/test_imports.py"),
                Some(1)
            )]
        );
        assert_eq!(
            found[0].message,
            "ModuleNotFoundError: No module named 'requestz'"
        );
    }

    #[test]
    fn junit_garbage_is_an_error() {
        assert!(pytest_junit("").unwrap_err().contains("no XML element"));
        let err = pytest_junit("<html><body/></html>").unwrap_err();
        assert!(err.contains("root element is <html>"), "{err}");
        let full = include_str!("../testdata/pytest-junit.xml");
        let err = pytest_junit(&full[..full.len() / 2]).unwrap_err();
        assert!(err.contains("truncated"), "{err}");
        let err = pytest_junit("<testsuite><testcase></testsuite>").unwrap_err();
        assert!(err.contains("bad XML"), "{err}");
        assert!(pytest_junit(include_str!("../testdata/tsc.txt")).is_err());
        let clean = r#"<?xml version="1.0"?><testsuites><testsuite tests="1"><testcase classname="a" name="t"/></testsuite></testsuites>"#;
        assert_eq!(pytest_junit(clean), Ok(vec![]));
    }

    #[test]
    fn compileall_syntax_errors() {
        let found = python_compile(include_str!("../testdata/compileall.txt"));
        assert_eq!(
            found,
            [
                Failure {
                    new: true,
                    name: "SyntaxError".into(),
                    file: Some("sub/bad.py".into()),
                    line: Some(1),
                    message: "invalid syntax".into(),
                },
                Failure {
                    new: true,
                    name: "SyntaxError".into(),
                    file: Some("top.py".into()),
                    line: Some(2),
                    message: "expected ':'".into(),
                },
            ]
        );
        assert_eq!(
            python_compile("Listing '.'...\nCompiling './a.py'...\n"),
            []
        );
        let odd = python_compile(
            "*** Error compiling './x.py'...\n[Errno 13] Permission denied: './x.py'\n",
        );
        assert_eq!(odd[0].message, "[Errno 13] Permission denied: './x.py'");
        assert_eq!(odd[0].line, None);
    }
}
