//! Which of a step's failures were already there: the same step on the original state is the
//! baseline, and only what the patch changed fails the gate.
//!
//! Rules, per failure of the verified state:
//! - a compile or type error ([`Origin::Diagnostic`]) is old when the baseline has one with the
//!   same file, code and message at the corresponding line, matched one to one: for a file the
//!   patch changed, its line mapped through the patch ([`LineMap`]; an error on a line the patch
//!   wrote is new), for any other file the same line;
//! - a failing test ([`Origin::Test`]) is old when the same test (by name) failed in the
//!   baseline; a test that passed (or did not exist) and now fails is new. When the baseline
//!   ran no tests at all (its failures are all build errors: the original does not build), a
//!   failing test is judged as without a baseline, below;
//! - an unreadable failure ([`Origin::Unparsed`], the output's tail) is new unless the baseline
//!   has the very same one.
//!
//! A baseline that cannot be had ([`usable`]: the step did not finish on the original, or
//! failed there with nothing readable) is said in the step's note, and then a failure is new
//! only if it is in a file the patch changed.

pub mod cache;
pub mod head;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::execute::{Found, Origin};
use super::{Change, Status};
use crate::checks::gate::LineMap;

/// How the lines of each changed file correspond to the original's.
pub struct Maps {
    maps: HashMap<String, LineMap>,
}

impl Maps {
    pub fn new(changes: &[&Change]) -> Maps {
        let maps = changes
            .iter()
            .map(|c| {
                let after = String::from_utf8_lossy(c.after.unwrap_or_default());
                let map = match c.before {
                    Some(before) => LineMap::new(&String::from_utf8_lossy(before), &after),
                    None => LineMap::all_new(&after),
                };
                (c.rel.to_string(), map)
            })
            .collect();
        Maps { maps }
    }

    fn changed(&self, file: &str) -> bool {
        self.maps.contains_key(file)
    }

    /// The original line of a failure's place: `Some(line)` (`Some(None)` for no line), or
    /// `None` when the patch wrote that line.
    fn original(&self, file: Option<&str>, line: Option<usize>) -> Option<Option<usize>> {
        match (file.and_then(|f| self.maps.get(f)), line) {
            (Some(map), Some(l)) => map.old_line(l).map(Some),
            _ => Some(line),
        }
    }
}

/// The baseline run's failures, or why they cannot serve as one.
pub fn usable<'a>(
    status: Status,
    failures: &'a [Found],
    note: Option<&str>,
) -> Result<&'a [Found], String> {
    let why = |what: &str| match note {
        Some(n) => format!("the step {what} on the original state ({n})"),
        None => format!("the step {what} on the original state"),
    };
    match status {
        Status::Pass => Ok(failures),
        Status::Fail if failures.iter().all(|f| f.origin == Origin::Unparsed) => {
            Err(why("fails too, with output that could not be read,"))
        }
        Status::Fail => Ok(failures),
        Status::Missing => Err(why("could not run")),
        Status::Error => Err(why("ended in an error")),
        Status::Timeout => Err(why("timed out")),
    }
}

type Key = (Option<String>, Option<usize>, String, String);

fn key(file: Option<&str>, line: Option<usize>, name: &str, message: &str) -> Key {
    (
        file.map(str::to_string),
        line,
        name.to_string(),
        message.to_string(),
    )
}

fn claim<K, Q>(pool: &mut HashMap<K, usize>, key: &Q) -> bool
where
    K: std::borrow::Borrow<Q> + std::hash::Hash + Eq,
    Q: std::hash::Hash + Eq + ?Sized,
{
    match pool.get_mut(key) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

/// Sets `new` on each failure of the verified state against the baseline's (`None`: there is
/// none; see the module doc for both).
pub fn mark(failures: &mut [Found], baseline: Option<&[Found]>, maps: &Maps) {
    let in_patch = |f: &Found| f.failure.file.as_deref().is_some_and(|x| maps.changed(x));
    let Some(base) = baseline else {
        for f in failures.iter_mut() {
            f.failure.new = in_patch(f);
        }
        return;
    };
    let mut places: HashMap<Key, usize> = HashMap::new();
    let mut tests: HashMap<String, usize> = HashMap::new();
    for b in base {
        let x = &b.failure;
        *places
            .entry(key(x.file.as_deref(), x.line, &x.name, &x.message))
            .or_default() += 1;
        if b.origin == Origin::Test {
            *tests.entry(x.name.clone()).or_default() += 1;
        }
    }
    // A baseline of build errors only: the original did not build, no test ran.
    let tests_ran = base.iter().all(|b| b.origin != Origin::Diagnostic)
        || base.iter().any(|b| b.origin == Origin::Test);
    for f in failures.iter_mut() {
        let old = match f.origin {
            Origin::Test if tests_ran => claim(&mut tests, f.failure.name.as_str()),
            Origin::Test => !in_patch(f),
            Origin::Diagnostic | Origin::Unparsed => {
                let x = &f.failure;
                maps.original(x.file.as_deref(), x.line)
                    .is_some_and(|line| {
                        claim(
                            &mut places,
                            &key(x.file.as_deref(), line, &x.name, &x.message),
                        )
                    })
            }
        };
        f.failure.new = !old;
    }
}

/// The step's output without the lines that carry only old failures' messages, for the hints
/// (which should be about what the patch did, not about what was already broken).
pub fn without_old<'a>(text: &'a str, failures: &[Found]) -> Cow<'a, str> {
    let first = |f: &Found| {
        f.failure
            .message
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let old: HashSet<String> = failures
        .iter()
        .filter(|f| !f.failure.new)
        .map(first)
        .filter(|m| m.len() >= 12)
        .collect();
    if old.is_empty() {
        return Cow::Borrowed(text);
    }
    let new: Vec<String> = failures
        .iter()
        .filter(|f| f.failure.new)
        .map(first)
        .collect();
    Cow::Owned(
        text.lines()
            .filter(|l| {
                !old.iter().any(|m| l.contains(m.as_str()))
                    || new.iter().any(|m| !m.is_empty() && l.contains(m.as_str()))
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Failure;

    fn found(origin: Origin, name: &str, file: &str, line: usize, message: &str) -> Found {
        Found {
            failure: Failure {
                name: name.into(),
                file: (!file.is_empty()).then(|| file.into()),
                line: (line > 0).then_some(line),
                message: message.into(),
                new: true,
            },
            origin,
        }
    }

    fn diag(file: &str, line: usize, message: &str) -> Found {
        found(Origin::Diagnostic, "attr-defined", file, line, message)
    }

    fn test(name: &str, file: &str) -> Found {
        found(Origin::Test, name, file, 3, "assert 1 == 2")
    }

    fn news(failures: &[Found]) -> Vec<bool> {
        failures.iter().map(|f| f.failure.new).collect()
    }

    #[test]
    fn errors_that_were_there_are_old_through_the_line_map() {
        // a.py gets two lines inserted at the top; b.py is untouched.
        let before = b"import os\nx = os.nope\n".as_slice();
        let after = b"\"\"\"Doc.\"\"\"\n\nimport os\nx = os.nope\ny = os.gone\n".as_slice();
        let change = Change {
            rel: "a.py",
            before: Some(before),
            after: Some(after),
        };
        let maps = Maps::new(&[&change]);
        let base = [diag("a.py", 2, "no nope"), diag("b.py", 7, "no x")];
        let mut now = [
            diag("a.py", 4, "no nope"), // the same error, moved down by the docstring
            diag("a.py", 5, "no gone"), // a line the patch wrote
            diag("b.py", 7, "no x"),    // untouched file, same place
            diag("b.py", 8, "no x"),    // untouched file, another place
        ];
        mark(&mut now, Some(&base), &maps);
        assert_eq!(news(&now), [false, true, false, true]);
        // Matched one to one: the same error twice where there was one.
        let mut twice = [diag("b.py", 7, "no x"), diag("b.py", 7, "no x")];
        mark(&mut twice, Some(&base), &maps);
        assert_eq!(news(&twice), [false, true]);
    }

    #[test]
    fn a_test_that_failed_before_is_old_whatever_its_message() {
        let maps = Maps::new(&[]);
        let base = [test("t::a", "t.py"), diag("x.go", 3, "undefined: y")];
        let mut now = [
            found(Origin::Test, "t::a", "t.py", 9, "another message"),
            test("t::b", "t.py"),
            diag("x.go", 3, "undefined: y"),
        ];
        mark(&mut now, Some(&base), &maps);
        assert_eq!(news(&now), [false, true, false]);
        // The baseline passed: every failing test is new.
        let mut now = [test("t::a", "t.py")];
        mark(&mut now, Some(&[]), &maps);
        assert_eq!(news(&now), [true]);
    }

    #[test]
    fn without_a_usable_baseline_only_the_patched_files_block() {
        let change = Change {
            rel: "a.py",
            before: Some(b"x = 1\n"),
            after: Some(b"x = 2\n"),
        };
        let maps = Maps::new(&[&change]);
        let mut now = [
            diag("a.py", 1, "m"),
            diag("b.py", 1, "m"),
            test("t", "a.py"),
        ];
        mark(&mut now, None, &maps);
        assert_eq!(news(&now), [true, false, true]);
        // The original did not build (no test ran): tests are judged the same way.
        let base = [diag("c.rs", 1, "E0425")];
        let mut now = [test("t", "a.py"), test("u", "b.py")];
        mark(&mut now, Some(&base), &maps);
        assert_eq!(news(&now), [true, false]);
    }

    #[test]
    fn unreadable_baselines_are_not_used() {
        let tail = [found(Origin::Unparsed, "build", "", 0, "npm ERR!")];
        assert!(usable(Status::Fail, &tail, None).is_err());
        assert!(usable(Status::Timeout, &[], Some("killed after 5 s")).is_err());
        assert_eq!(usable(Status::Pass, &[], None), Ok(&[][..]));
        let base = [diag("a.py", 1, "m")];
        assert!(usable(Status::Fail, &base, None).is_ok());
    }

    #[test]
    fn hints_read_the_output_without_old_failures() {
        let mut failures = [
            diag("a.py", 1, "Module has no attribute \"nope\""),
            diag("b.py", 2, "Name \"add_numbers\" is not defined"),
        ];
        failures[0].failure.new = false;
        let text = "a.py:1: error: Module has no attribute \"nope\"\n\
                    b.py:2: error: Name \"add_numbers\" is not defined\nFound 2 errors\n";
        assert_eq!(
            without_old(text, &failures),
            "b.py:2: error: Name \"add_numbers\" is not defined\nFound 2 errors"
        );
    }
}
