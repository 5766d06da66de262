//! What a patch breaks elsewhere is caught: a rename that misses a call site in another file, a
//! deleted file whose function is still imported, a missed use in a test. Small real projects of
//! each language, the real binary, the real compilers where the gate runs one (clippy with
//! `--all-targets`, go vet over the whole module) and the built-in `references` check.
//!
//! A refused patch leaves the repository exactly as it was and reports the missed use under the
//! file that holds it (a file the patch did not change); the complete rename passes and is
//! written. The limits of name matching (a method with a short common name) are tests too, named
//! for what they document.

use serde_json::{Value, json};

use crate::checks::require;
use crate::harness::{Run, TestRepo, assert_subset, git_try};

const UNTOUCHED: &str = "in a file the patch did not change: caused by the patch";

// ---------------------------------------------------------------------------------------------
// Helpers

fn require_all(tools: &[&str]) -> bool {
    tools.iter().all(|t| require(t))
}

/// A patch of replacements `(file, old, new)`, each `replace_all`, as JSON.
fn rename(edits: &[(&str, &str, &str)]) -> String {
    let edits: Vec<Value> = edits
        .iter()
        .map(|(f, old, new)| {
            json!({"file_path": f, "old_string": old, "new_string": new, "replace_all": true})
        })
        .collect();
    json!({ "edits": edits }).to_string()
}

/// The complete rename `all` without its edit of `file`: a call site forgotten.
fn all_but(all: &[(&str, &str, &str)], file: &str) -> String {
    let edits: Vec<_> = all.iter().copied().filter(|e| e.0 != file).collect();
    rename(&edits)
}

/// `patchgate apply` with the report in `format` (the harness's `apply` is JSON only).
fn apply_as(repo: &TestRepo, patch: &str, format: &str) -> Run {
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), patch).expect("write patch");
    repo.run(&[
        "apply",
        pfile.path().to_str().expect("utf8"),
        "--format",
        format,
    ])
}

/// Applies a patch that must be refused: exit 1, `checks_failed`, no file listed, and the
/// repository (working tree, index, refs) exactly as before. Returns the JSON report.
#[track_caller]
fn refused(repo: &TestRepo, patch: &str) -> Value {
    let before = repo.snapshot();
    let run = repo.apply(patch, &[]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_eq!(report["files"], json!([]), "{report:#}");
    assert_eq!(
        repo.snapshot(),
        before,
        "a refused patch changed the repository"
    );
    report
}

/// Applies a patch that must pass: exit 0, `applied`, and `changed` on disk holds `holds`.
#[track_caller]
fn passes(repo: &TestRepo, patch: &str, changed: &str, holds: &str) -> Value {
    let run = repo.apply(patch, &[]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "applied", "{report:#}");
    assert!(
        repo.read_str(changed).contains(holds),
        "{changed} was not written:\n{}",
        repo.read_str(changed)
    );
    report
}

/// The `checks[]` entry of `checker` on `path`, if any.
fn entry<'a>(report: &'a Value, path: &str, checker: &str) -> Option<&'a Value> {
    report["checks"]
        .as_array()?
        .iter()
        .find(|c| c["path"] == path && c["checker"] == checker)
}

/// `checker` failed on `path` with a new finding at `line` whose rule or message contains `says`;
/// `untouched`: the entry is the one for a file the patch did not change (with its note).
#[track_caller]
fn caught(report: &Value, path: &str, line: u64, checker: &str, says: &str, untouched: bool) {
    let c = entry(report, path, checker)
        .unwrap_or_else(|| panic!("no {checker} entry for {path} in:\n{report:#}"));
    assert_eq!(c["status"], "fail", "{c:#}");
    if untouched {
        assert_eq!(c["note"], UNTOUCHED, "{c:#}");
    }
    let findings = c["findings"].as_array().expect("findings");
    let hit = findings
        .iter()
        .find(|f| f["line"] == line)
        .unwrap_or_else(|| {
            panic!("{checker} has no finding at {path}:{line}:\n{c:#}");
        });
    assert_subset(hit, &json!({"new": true}), &format!("{path}:{line}"));
    let text = format!(
        "{} {}",
        hit["rule"].as_str().unwrap_or_default(),
        hit["message"].as_str().unwrap_or_default()
    );
    assert!(text.contains(says), "{checker} at {path}:{line}: {text}");
}

/// The references check's finding for a missed use of `name`, defined before at `defined_at`.
#[track_caller]
fn dangling(report: &Value, path: &str, line: u64, name: &str, defined_at: &str, untouched: bool) {
    let says = format!(
        "`{name}` is no longer defined but is still used here (it was defined at {defined_at})"
    );
    caught(report, path, line, "references", &says, untouched);
    let c = entry(report, path, "references").expect("references entry");
    assert!(
        c["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .all(|f| f["rule"] == "dangling-reference" || f["rule"] == "dangling-import"),
        "{c:#}"
    );
}

/// No check failed; the references check, where it ran, found nothing.
#[track_caller]
fn nothing_flagged(report: &Value) {
    for c in report["checks"].as_array().expect("checks") {
        assert_ne!(c["status"], "fail", "{c:#}");
        if c["checker"] == "references" {
            assert_eq!(c["findings"], json!([]), "{c:#}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Python: only the references check sees other files (ruff lints the edited ones)

fn python_repo() -> TestRepo {
    TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"E\", \"F\"]\n",
        )
        .file(
            "util.py",
            "def parse_config(text):\n    return text.split(\"=\")\n\n\ndef other():\n    return 1\n",
        )
        .file(
            "app.py",
            "from util import parse_config\n\n\ndef main():\n    return parse_config(\"a=b\")\n\n\ndef again():\n    return parse_config(\"c=d\")\n",
        )
        .file(
            "cli.py",
            "import util\n\n\ndef run():\n    print(\"start\")\n    return util.parse_config(\"x=y\")\n",
        )
        .commit()
}

const PY_RENAME: [(&str, &str, &str); 2] = [
    ("util.py", "parse_config", "load_config"),
    ("app.py", "parse_config", "load_config"),
];

#[test]
fn python_a_rename_that_misses_a_call_site_in_another_file_is_refused() {
    if !require("ruff") {
        return;
    }
    let repo = python_repo();
    let report = refused(&repo, &rename(&PY_RENAME));
    dangling(&report, "cli.py", 6, "parse_config", "util.py:1", true);
    // The edited files are clean: the one missed use blocked the patch.
    for f in ["util.py", "app.py"] {
        assert_eq!(entry(&report, f, "references").expect(f)["status"], "pass");
    }
}

#[test]
fn python_the_complete_rename_passes() {
    if !require("ruff") {
        return;
    }
    let repo = python_repo();
    let mut edits = PY_RENAME.to_vec();
    edits.push(("cli.py", "parse_config", "load_config"));
    let report = passes(&repo, &rename(&edits), "cli.py", "util.load_config(");
    nothing_flagged(&report);
    assert!(repo.read_str("util.py").starts_with("def load_config("));
}

fn python_store_repo() -> TestRepo {
    TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"E\", \"F\"]\n",
        )
        .file(
            "store.py",
            "class Store:\n    def fetch_items(self):\n        return [1, 2]\n\n    def get(self, key):\n        return key\n",
        )
        .file(
            "report.py",
            "from store import Store\n\n\ndef count():\n    store = Store()\n    return len(store.fetch_items())\n\n\ndef first():\n    return Store().get(\"a\")\n",
        )
        .commit()
}

#[test]
fn python_a_renamed_method_with_a_compound_name_missed_at_one_call_is_refused() {
    if !require("ruff") {
        return;
    }
    let repo = python_store_repo();
    let report = refused(
        &repo,
        &rename(&[("store.py", "def fetch_items(", "def load_items(")]),
    );
    dangling(&report, "report.py", 6, "fetch_items", "store.py:2", true);
}

/// The limit of matching names without types: `Store().get(..)` looks like any `dict.get(..)`,
/// so a method with a short common name is not tracked, and renaming it with a call left behind
/// is not refused (no false refusal for every `get` in the project either).
/// A function renamed while an untouched module keeps locals of its old name (an assigned
/// variable, a parameter): Python makes such a name local to its whole function. With
/// `missed`, one of those functions also still calls the old name through its module.
fn python_shadowing_patch(missed: bool) -> (TestRepo, String) {
    let warm_tail = if missed {
        " + len(util.load_rows(\"b\"))"
    } else {
        ""
    };
    let repo = TestRepo::new()
        .file("util.py", "def load_rows(path):\n    return [path]\n")
        .file(
            "app.py",
            "from util import load_rows\n\n\ndef main():\n    return load_rows(\"a\")\n",
        )
        .file(
            "cache.py",
            format!(
                "import util\n\n\ndef warm(fetch):\n    n = len(load_rows)\n    load_rows = fetch()\n    return n + len(load_rows){warm_tail}\n\n\ndef keys(load_rows=None, *rest):\n    return load_rows or rest\n"
            ),
        )
        .commit();
    let patch = rename(&[
        ("util.py", "load_rows", "read_rows"),
        ("app.py", "load_rows", "read_rows"),
    ]);
    (repo, patch)
}

#[test]
fn python_a_rename_whose_old_name_is_a_local_elsewhere_passes() {
    let (repo, patch) = python_shadowing_patch(false);
    let run = repo.apply(&patch, &["--checks", "references"]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "applied", "{report:#}");
    nothing_flagged(&report);
}

#[test]
fn python_a_missed_call_through_the_module_beside_a_local_is_refused() {
    let (repo, patch) = python_shadowing_patch(true);
    let run = repo.apply(&patch, &["--checks", "references"]);
    run.assert_code(1);
    let report = run.json();
    dangling(&report, "cache.py", 7, "load_rows", "util.py:1", true);
    let c = entry(&report, "cache.py", "references").expect("cache.py");
    assert_eq!(c["findings"].as_array().map(Vec::len), Some(1), "{c:#}");
}

#[test]
fn python_limit_a_renamed_method_with_a_short_common_name_is_not_flagged() {
    if !require("ruff") {
        return;
    }
    let repo = python_store_repo();
    let report = passes(
        &repo,
        &rename(&[("store.py", "def get(", "def lookup(")]),
        "store.py",
        "def lookup(",
    );
    nothing_flagged(&report);
    assert!(repo.read_str("report.py").contains("Store().get(\"a\")"));
}

#[test]
fn python_renaming_one_of_two_same_named_functions_with_all_its_uses_passes() {
    if !require("ruff") {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"E\", \"F\"]\n",
        )
        .file("a.py", "def helper():\n    return \"a\"\n")
        .file("b.py", "def helper():\n    return \"b\"\n")
        .file(
            "use_a.py",
            "from a import helper\n\n\ndef go():\n    return helper()\n",
        )
        .file(
            "use_b.py",
            "from b import helper\n\n\ndef go():\n    return helper()\n",
        )
        .commit();
    let report = passes(
        &repo,
        &rename(&[
            ("a.py", "helper", "assist"),
            ("use_a.py", "helper", "assist"),
        ]),
        "use_a.py",
        "from a import assist",
    );
    nothing_flagged(&report);
    // b.py's `helper` and its use are untouched and still fine.
    assert!(repo.read_str("use_b.py").contains("return helper()"));
}

#[test]
fn python_deleting_a_module_whose_function_is_still_imported_is_refused() {
    if !require("ruff") {
        return;
    }
    let repo = python_repo();
    let patch = json!({"edits": [{"file_path": "util.py", "delete": true}]}).to_string();
    let report = refused(&repo, &patch);
    assert!(repo.exists("util.py"));
    // The import and both calls in app.py, the call in cli.py.
    for line in [1, 5, 9] {
        dangling(&report, "app.py", line, "parse_config", "util.py:1", true);
    }
    dangling(&report, "cli.py", 6, "parse_config", "util.py:1", true);
}

/// A src-layout package: relative imports, absolute ones from `tests/`, a submodule taken
/// `from` its package.
fn python_package_repo() -> TestRepo {
    TestRepo::new()
        .file("src/app/__init__.py", "")
        .file("src/app/config.py", "def load():\n    return {}\n")
        .file("src/app/db/__init__.py", "")
        .file(
            "src/app/db/models.py",
            "from ..config import load\n\nSETTINGS = load()\n",
        )
        .file(
            "src/app/main.py",
            "from .config import load\nfrom . import db\nfrom app.db import models\n\nprint(load(), db, models)\n",
        )
        .file(
            "src/app/optional.py",
            "try:\n    from .config import load\nexcept ImportError:\n    load = None\n",
        )
        .file(
            "tests/test_app.py",
            "import json\nfrom app.config import load\nimport app.db.models\n\n\ndef test_load():\n    assert load() == {}\n",
        )
        .commit()
}

#[test]
fn python_moving_a_module_without_its_importers_is_refused() {
    let repo = python_package_repo();
    let report = refused(
        &repo,
        &move_and_edit(&[("src/app/config.py", "src/app/settings.py")], &[]),
    );
    let says = "names no module after the patch (it named `src/app/config.py` before the patch)";
    dangling_import(
        &report,
        "src/app/main.py",
        1,
        &format!("`.config` {says}"),
        true,
    );
    dangling_import(
        &report,
        "src/app/db/models.py",
        1,
        &format!("`..config` {says}"),
        true,
    );
    dangling_import(
        &report,
        "tests/test_app.py",
        2,
        &format!("`app.config` {says}"),
        true,
    );
    // An import in a `try` that catches `ImportError` expects the module may be gone.
    assert!(
        entry(&report, "src/app/optional.py", "references").is_none(),
        "{report:#}"
    );
}

#[test]
fn python_moving_a_module_with_its_importers_updated_passes() {
    let repo = python_package_repo();
    let report = passes(
        &repo,
        &move_and_edit(
            &[("src/app/config.py", "src/app/settings.py")],
            &[
                ("src/app/main.py", "from .config", "from .settings"),
                ("src/app/db/models.py", "from ..config", "from ..settings"),
                ("tests/test_app.py", "from app.config", "from app.settings"),
            ],
        ),
        "src/app/main.py",
        "from .settings",
    );
    nothing_flagged(&report);
}

/// A submodule moved up a level: taken `from` its package, imported by its dotted name, and its
/// own relative import, which no longer reaches from the new folder.
#[test]
fn python_moving_a_submodule_breaks_its_importers_and_its_own_relative_import() {
    let repo = python_package_repo();
    let report = refused(
        &repo,
        &move_and_edit(&[("src/app/db/models.py", "src/app/models.py")], &[]),
    );
    let says = "(it named `src/app/db/models.py` before the patch)";
    dangling_import(
        &report,
        "src/app/main.py",
        3,
        &format!("`app.db.models` names no module after the patch {says}"),
        true,
    );
    dangling_import(
        &report,
        "tests/test_app.py",
        3,
        &format!("`app.db.models` names no module after the patch {says}"),
        true,
    );
    dangling_import(
        &report,
        "src/app/models.py",
        1,
        "`..config` names no module after the patch (it named `src/app/config.py` before the patch)",
        false,
    );
    // `import json` (the standard library) and `from . import db` are not judged / still fine.
    for path in ["tests/test_app.py", "src/app/main.py"] {
        let c = entry(&report, path, "references").expect("entry");
        assert!(
            c["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .all(|f| f["line"] != 1 || path != "tests/test_app.py"),
            "{c:#}"
        );
        assert!(
            c["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .all(|f| f["line"] != 2 || path != "src/app/main.py"),
            "{c:#}"
        );
    }
}

/// A relative import the patch writes must name a module: a typo is refused; an extension
/// module or its Cython source beside it (no `.py`) is one; one in a folder that does not
/// exist (generated code not generated here) is not judged.
#[test]
fn python_a_new_relative_import_of_no_module_is_refused_unless_it_is_built() {
    let repo = python_package_repo()
        .file(
            "src/app/_speedups.cpython-312-x86_64-linux-gnu.so",
            b"\x7fELF",
        )
        .file("src/app/_cy.pyx", "def slow():\n    return 1\n")
        .commit();
    let patch = move_and_edit(
        &[],
        &[(
            "src/app/main.py",
            "from . import db\n",
            "from . import db\nfrom ._speedups import fast\nfrom ._cy import slow\nfrom .confg import load as again\nfrom .gen.schema import fields\n",
        )],
    );
    let report = refused(&repo, &patch);
    dangling_import(
        &report,
        "src/app/main.py",
        5,
        "`.confg` names no module after the patch (the patch wrote it)",
        false,
    );
    let c = entry(&report, "src/app/main.py", "references").expect("entry");
    assert_eq!(
        c["findings"].as_array().expect("findings").len(),
        1,
        "{c:#}"
    );
}

/// The refusal as an agent and a person read it: the summary says what blocked and how much of
/// it lies outside the patch; the markdown report lists the uses to fix, file and line, first.
#[test]
fn the_reports_say_what_blocked_and_markdown_lists_the_uses_to_fix_first() {
    if !require("ruff") {
        return;
    }
    let repo = python_repo();
    // app.py's first call is renamed, its second is left (a line the patch did not write), and
    // cli.py is missed altogether.
    let patch = rename(&[
        ("util.py", "parse_config", "load_config"),
        ("app.py", "import parse_config", "import load_config"),
        ("app.py", "parse_config(\"a=b\")", "load_config(\"a=b\")"),
    ]);
    let before = repo.snapshot();
    let summary = "2 new problems caused by this patch (1 in a file it did not change)";

    let md = apply_as(&repo, &patch, "markdown");
    md.assert_code(1);
    let first = md.stdout.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!("## patchgate: checks failed: {summary}; nothing written"),
        "{}",
        md.stdout
    );
    let fix = md.stdout.find("### To fix").unwrap_or_else(|| {
        panic!("no list of uses to fix:\n{}", md.stdout);
    });
    let app = md
        .stdout
        .find("- `app.py:9` — references `dangling-reference`: `parse_config` is no longer defined")
        .unwrap_or_else(|| panic!("app.py:9 not listed:\n{}", md.stdout));
    let cli = md
        .stdout
        .find("- `cli.py:6` — references `dangling-reference`: `parse_config` is no longer defined")
        .unwrap_or_else(|| panic!("cli.py:6 not listed:\n{}", md.stdout));
    let details = md.stdout.find("### Checks").expect("checks section");
    assert!(
        fix < app && app < cli && cli < details,
        "the uses to fix come first, in file order:\n{}",
        md.stdout
    );
    assert!(
        md.stdout[cli..details]
            .lines()
            .next()
            .is_some_and(|l| l.ends_with("(in a file the patch did not change)")),
        "{}",
        md.stdout
    );

    let human = apply_as(&repo, &patch, "human");
    human.assert_code(1);
    assert!(
        human
            .stdout
            .contains(&format!("checks failed: {summary}; nothing was written\n")),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(
            "✗ cli.py — references (lint): 1 finding(s), 1 new, in a file the patch did not change\n"
        ),
        "{}",
        human.stdout
    );
    assert_eq!(
        repo.snapshot(),
        before,
        "a refused patch changed the repository"
    );
}

// ---------------------------------------------------------------------------------------------
// TypeScript / JavaScript: no compiler runs in the gate; the references check is the net

fn ts_repo() -> TestRepo {
    TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"demo\", \"private\": true, \"type\": \"module\"}\n",
        )
        .file(
            "src/util.ts",
            "export function parseConfig(text: string): string[] {\n  return text.split(\"=\");\n}\n",
        )
        .file(
            "src/app.ts",
            "import { parseConfig } from \"./util\";\n\nexport function main(): string[] {\n  return parseConfig(\"a=b\");\n}\n",
        )
        .file(
            "src/cli.ts",
            "import * as util from \"./util\";\n\nexport function run(): string[] {\n  console.log(\"start\");\n  return util.parseConfig(\"x=y\");\n}\n",
        )
        .file(
            "src/legacy.js",
            "import { parseConfig } from \"./util.js\";\n\nexport const parsed = parseConfig(\"k=v\");\n",
        )
        .commit()
}

#[test]
fn ts_a_rename_that_misses_a_call_site_in_another_file_is_refused() {
    let repo = ts_repo();
    let report = refused(
        &repo,
        &rename(&[
            ("src/util.ts", "parseConfig", "loadConfig"),
            ("src/app.ts", "parseConfig", "loadConfig"),
            ("src/legacy.js", "parseConfig", "loadConfig"),
        ]),
    );
    dangling(
        &report,
        "src/cli.ts",
        5,
        "parseConfig",
        "src/util.ts:1",
        true,
    );
    assert_eq!(
        entry(&report, "src/app.ts", "references").expect("app.ts")["status"],
        "pass"
    );
}

#[test]
fn js_a_call_site_missed_in_a_javascript_file_of_a_typescript_rename_is_refused() {
    let repo = ts_repo();
    let report = refused(
        &repo,
        &rename(&[
            ("src/util.ts", "parseConfig", "loadConfig"),
            ("src/app.ts", "parseConfig", "loadConfig"),
            ("src/cli.ts", "parseConfig", "loadConfig"),
        ]),
    );
    for line in [1, 3] {
        dangling(
            &report,
            "src/legacy.js",
            line,
            "parseConfig",
            "src/util.ts:1",
            true,
        );
    }
}

#[test]
fn ts_the_complete_rename_passes() {
    let repo = ts_repo();
    let report = passes(
        &repo,
        &rename(&[
            ("src/util.ts", "parseConfig", "loadConfig"),
            ("src/app.ts", "parseConfig", "loadConfig"),
            ("src/cli.ts", "parseConfig", "loadConfig"),
            ("src/legacy.js", "parseConfig", "loadConfig"),
        ]),
        "src/cli.ts",
        "util.loadConfig(",
    );
    nothing_flagged(&report);
}

#[test]
fn ts_renaming_one_of_two_same_named_functions_with_all_its_uses_passes() {
    let repo = TestRepo::new()
        .file("package.json", "{\"name\": \"demo\", \"private\": true}\n")
        .file(
            "src/a.ts",
            "export function helper(): string {\n  return \"a\";\n}\n",
        )
        .file(
            "src/b.ts",
            "export function helper(): string {\n  return \"b\";\n}\n",
        )
        .file(
            "src/use_a.ts",
            "import { helper } from \"./a\";\n\nexport const x = helper();\n",
        )
        .file(
            "src/use_b.ts",
            "import { helper } from \"./b\";\n\nexport const y = helper();\n",
        )
        .commit();
    let report = passes(
        &repo,
        &rename(&[
            ("src/a.ts", "helper", "assist"),
            ("src/use_a.ts", "helper", "assist"),
        ]),
        "src/use_a.ts",
        "import { assist }",
    );
    nothing_flagged(&report);
}

// ---------------------------------------------------------------------------------------------
// JS/TS module paths: a relative import whose module the patch moves, deletes or renames

/// The `references` entry of `path` failed with a `dangling-import` at `line` whose message says
/// `says`.
#[track_caller]
fn dangling_import(report: &Value, path: &str, line: u64, says: &str, untouched: bool) {
    let c = entry(report, path, "references")
        .unwrap_or_else(|| panic!("no references entry for {path} in:\n{report:#}"));
    assert_eq!(c["status"], "fail", "{c:#}");
    if untouched {
        assert_eq!(c["note"], UNTOUCHED, "{c:#}");
    }
    let hit = c["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["line"] == line && f["rule"] == "dangling-import")
        .unwrap_or_else(|| panic!("no dangling-import at {path}:{line}:\n{c:#}"));
    assert_subset(hit, &json!({"new": true}), &format!("{path}:{line}"));
    let message = hit["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{path}:{line}: {message}");
}

fn move_and_edit(moves: &[(&str, &str)], edits: &[(&str, &str, &str)]) -> String {
    let mut all: Vec<Value> = moves
        .iter()
        .map(|(from, to)| json!({"file_path": from, "move_to": to}))
        .collect();
    all.extend(
        edits
            .iter()
            .map(|(f, old, new)| json!({"file_path": f, "old_string": old, "new_string": new})),
    );
    json!({ "edits": all }).to_string()
}

#[test]
fn ts_moving_a_module_without_its_importers_is_refused() {
    let repo = ts_repo();
    let report = refused(
        &repo,
        &move_and_edit(&[("src/util.ts", "src/lib/util.ts")], &[]),
    );
    for path in ["src/app.ts", "src/cli.ts"] {
        dangling_import(
            &report,
            path,
            1,
            "`./util` names no file after the patch (it named `src/util.ts`, which the patch \
             removes or moves)",
            true,
        );
    }
    // TypeScript's `./util.js` for `util.ts`, from a JavaScript file.
    dangling_import(
        &report,
        "src/legacy.js",
        1,
        "`./util.js` names no file",
        true,
    );
}

#[test]
fn ts_moving_a_module_with_its_importers_updated_passes() {
    let repo = ts_repo();
    let report = passes(
        &repo,
        &move_and_edit(
            &[("src/util.ts", "src/lib/util.ts")],
            &[
                ("src/app.ts", "\"./util\"", "\"./lib/util\""),
                ("src/cli.ts", "\"./util\"", "\"./lib/util\""),
                ("src/legacy.js", "\"./util.js\"", "\"./lib/util.js\""),
            ],
        ),
        "src/app.ts",
        "./lib/util",
    );
    nothing_flagged(&report);
    assert!(repo.read_str("src/lib/util.ts").contains("parseConfig"));
}

#[test]
fn ts_a_moved_file_whose_own_relative_import_no_longer_resolves_is_refused() {
    let repo = ts_repo();
    let report = refused(
        &repo,
        &move_and_edit(&[("src/app.ts", "src/bin/app.ts")], &[]),
    );
    dangling_import(
        &report,
        "src/bin/app.ts",
        1,
        "`./util` names no file after the patch (it named `src/util.ts` before the patch)",
        false,
    );
}

/// A TypeScript project whose modules import each other through `tsconfig.json` aliases (`@/*`
/// for `src/*`, with a comment and trailing commas, as TypeScript allows), as Next.js and Vite
/// projects do; a test mocks one module by its alias, as vitest resolves it.
fn ts_alias_repo() -> TestRepo {
    TestRepo::new()
        .file("package.json", "{\"name\": \"demo\", \"private\": true}\n")
        .file(
            "tsconfig.json",
            "{\n  // aliases\n  \"compilerOptions\": {\n    \"strict\": true,\n    \"baseUrl\": \".\",\n    \"paths\": { \"@/*\": [\"./src/*\"], },\n  },\n}\n",
        )
        .file(
            "src/lib/merge.ts",
            "export function merge(a: object, b: object) {\n  return { ...a, ...b };\n}\n",
        )
        .file(
            "src/app.ts",
            "import { merge } from \"@/lib/merge\";\n\nexport const config = merge({}, {});\n",
        )
        .file(
            "src/pages/home.tsx",
            "import { merge } from '@/lib/merge';\n\nexport const home = merge({ a: 1 }, {});\n",
        )
        .file(
            "src/app.test.ts",
            "import { vi } from \"vitest\";\n\nvi.mock(\"@/lib/merge\", () => ({ merge: vi.fn() }));\n",
        )
        .commit()
}

#[test]
fn ts_moving_a_module_its_importers_reach_through_an_alias_is_refused() {
    let repo = ts_alias_repo();
    let report = refused(
        &repo,
        &move_and_edit(&[("src/lib/merge.ts", "src/lib/deep-merge.ts")], &[]),
    );
    for (path, line) in [
        ("src/app.ts", 1),
        ("src/pages/home.tsx", 1),
        ("src/app.test.ts", 3),
    ] {
        dangling_import(
            &report,
            path,
            line,
            "`@/lib/merge` names no file after the patch (it named `src/lib/merge.ts`, which the \
             patch removes or moves)",
            true,
        );
    }
}

#[test]
fn ts_moving_a_module_with_its_aliased_importers_updated_passes() {
    let repo = ts_alias_repo();
    let report = passes(
        &repo,
        &move_and_edit(
            &[("src/lib/merge.ts", "src/lib/deep-merge.ts")],
            &[
                ("src/app.ts", "\"@/lib/merge\"", "\"@/lib/deep-merge\""),
                ("src/pages/home.tsx", "'@/lib/merge'", "'@/lib/deep-merge'"),
                ("src/app.test.ts", "\"@/lib/merge\"", "\"@/lib/deep-merge\""),
            ],
        ),
        "src/app.ts",
        "@/lib/deep-merge",
    );
    nothing_flagged(&report);
}

/// An alias the patch writes that names no file is judged as a relative path is; a package the
/// patch imports is not (TypeScript tries `node_modules` when no alias names a file), nor a
/// framework's virtual module that `baseUrl` would try as a path (`astro:content`).
#[test]
fn ts_an_alias_the_patch_writes_is_judged_and_a_package_is_not() {
    let repo = ts_alias_repo();
    let edit = |old: &str, new: &str| {
        json!({"edits": [{"file_path": "src/app.ts", "old_string": old, "new_string": new}]})
            .to_string()
    };
    let report = refused(&repo, &edit("\"@/lib/merge\"", "\"@/lib/merg\""));
    dangling_import(
        &report,
        "src/app.ts",
        1,
        "`@/lib/merg` names no file after the patch (the patch wrote it)",
        false,
    );
    let report = passes(
        &repo,
        &edit(
            "import { merge }",
            "import { z } from \"zod\";\nimport { pick } from \"lodash/pick\";\n\
             import { getCollection } from \"astro:content\";\nimport { merge }",
        ),
        "src/app.ts",
        "lodash/pick",
    );
    nothing_flagged(&report);
}

/// `baseUrl` alone (Create React App's `jsconfig.json`): `components/Button` is the project's
/// `src/components/Button.js`, and moving it is refused; where a package of that name is
/// installed, node would load it instead, so nothing is judged.
#[test]
fn js_a_base_url_import_is_judged_unless_a_package_could_answer_it() {
    let repo = TestRepo::new()
        .file("package.json", "{\"name\": \"demo\", \"private\": true}\n")
        .file("jsconfig.json", "{\"compilerOptions\": {\"baseUrl\": \"src\"}}\n")
        .file("src/components/Button.js", "export default function Button() {}\n")
        .file(
            "src/App.js",
            "import Button from \"components/Button\";\nimport React from \"react\";\n\nexport default Button;\n",
        )
        .commit();
    let moved = move_and_edit(&[("src/components/Button.js", "src/ui/Button.js")], &[]);
    let report = refused(&repo, &moved);
    dangling_import(
        &report,
        "src/App.js",
        1,
        "`components/Button` names no file after the patch (it named `src/components/Button.js`",
        true,
    );
    repo.write(
        "node_modules/components/package.json",
        "{\"name\": \"components\"}\n",
    );
    let run = repo.apply(&moved, &["--dry-run"]);
    run.assert_code(0);
    nothing_flagged(&run.json());
}

/// node's subpath imports (`package.json` `imports`): a module moved under importers that name
/// it `#lib/merge` is refused; the same move with the map updated passes.
#[test]
fn js_moving_a_module_named_by_a_subpath_import_is_refused() {
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"demo\", \"type\": \"module\", \"imports\": {\"#lib/*\": \"./src/lib/*.js\"}}\n",
        )
        .file("src/lib/merge.js", "export const merge = (a, b) => ({ ...a, ...b });\n")
        .file(
            "src/index.js",
            "import { merge } from \"#lib/merge\";\n\nexport default merge({}, {});\n",
        )
        .commit();
    let report = refused(
        &repo,
        &move_and_edit(&[("src/lib/merge.js", "src/util/merge.js")], &[]),
    );
    dangling_import(
        &report,
        "src/index.js",
        1,
        "`#lib/merge` names no file after the patch (it named `src/lib/merge.js`",
        true,
    );
    let report = passes(
        &repo,
        &move_and_edit(
            &[("src/lib/merge.js", "src/util/merge.js")],
            &[("package.json", "./src/lib/*.js", "./src/util/*.js")],
        ),
        "package.json",
        "./src/util/*.js",
    );
    nothing_flagged(&report);
}

/// A module moved under Vue and Svelte components that import it in their `<script>` blocks (by a
/// `jsconfig.json` alias and by a relative path): each import is found at its line in the
/// component.
#[test]
fn components_importing_a_moved_module_in_their_script_blocks_are_refused() {
    let repo = TestRepo::new()
        .file("package.json", "{\"name\": \"demo\", \"private\": true}\n")
        .file(
            "jsconfig.json",
            "{\"compilerOptions\": {\"paths\": {\"@/*\": [\"./src/*\"]}}}\n",
        )
        .file(
            "src/utils/format.js",
            "export const price = (n) => `$${n}`;\n",
        )
        .file(
            "src/components/Price.vue",
            "<template>\n  <span>{{ price(1) }}</span>\n</template>\n\n<script setup>\nimport { price } from '@/utils/format'\n</script>\n",
        )
        .file(
            "src/components/Total.svelte",
            "<script lang=\"ts\">\n  import { price } from '../utils/format.js';\n</script>\n\n<p>{price(2)}</p>\n",
        )
        .commit();
    let report = refused(
        &repo,
        &move_and_edit(&[("src/utils/format.js", "src/lib/format.js")], &[]),
    );
    dangling_import(
        &report,
        "src/components/Price.vue",
        6,
        "`@/utils/format` names no file after the patch (it named `src/utils/format.js`",
        true,
    );
    dangling_import(
        &report,
        "src/components/Total.svelte",
        2,
        "`../utils/format.js` names no file after the patch",
        true,
    );
    let report = passes(
        &repo,
        &move_and_edit(
            &[("src/utils/format.js", "src/lib/format.js")],
            &[
                ("src/components/Price.vue", "@/utils/format", "@/lib/format"),
                (
                    "src/components/Total.svelte",
                    "../utils/format.js",
                    "../lib/format.js",
                ),
            ],
        ),
        "src/components/Price.vue",
        "@/lib/format",
    );
    nothing_flagged(&report);
    // An import the patch writes into a component is judged as a script's is.
    let typo = json!({"edits": [{
        "file_path": "src/components/Price.vue",
        "old_string": "'@/lib/format'",
        "new_string": "'@/lib/formt'",
    }]})
    .to_string();
    let report = refused(&repo, &typo);
    dangling_import(
        &report,
        "src/components/Price.vue",
        6,
        "`@/lib/formt` names no file after the patch (the patch wrote it)",
        false,
    );
}

/// A rename whose `replace_all` also hits the text of an import path (as commander's
/// `suggestSimilar`, imported from `./suggestSimilar.js`): every name is consistent, only the
/// path names a file that does not exist.
#[test]
fn js_a_rename_that_also_rewrites_an_import_path_is_refused() {
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"demo\", \"private\": true, \"type\": \"module\"}\n",
        )
        .file(
            "lib/suggestSimilar.js",
            "export function suggestSimilar(word, candidates) {\n  return candidates.filter((c) => c.startsWith(word[0]));\n}\n",
        )
        .file(
            "lib/command.js",
            "import { suggestSimilar } from './suggestSimilar.js';\n\nexport function unknown(word) {\n  return suggestSimilar(word, ['help', 'run']);\n}\n",
        )
        .commit();
    let all = [
        (
            "lib/suggestSimilar.js",
            "suggestSimilar",
            "suggestSimilarRenamed",
        ),
        ("lib/command.js", "suggestSimilar", "suggestSimilarRenamed"),
    ];
    let report = refused(&repo, &rename(&all));
    dangling_import(
        &report,
        "lib/command.js",
        1,
        "`./suggestSimilarRenamed.js` names no file after the patch (the patch wrote it)",
        false,
    );
    // The same rename with the module's file renamed too passes.
    let mut patch: Value = serde_json::from_str(&rename(&all)).expect("json");
    patch["edits"].as_array_mut().expect("edits").push(
        json!({"file_path": "lib/suggestSimilar.js", "move_to": "lib/suggestSimilarRenamed.js"}),
    );
    let report = passes(
        &repo,
        &patch.to_string(),
        "lib/command.js",
        "./suggestSimilarRenamed.js",
    );
    nothing_flagged(&report);
}

/// A folder's index file, imported by the folder's name and, from inside it, as `..`.
#[test]
fn ts_deleting_a_folders_index_file_breaks_imports_of_the_folder() {
    let repo = ts_repo()
        .file("src/c/index.ts", "export const level = 1;\n")
        .file(
            "src/c/inner/leaf.ts",
            "import { level } from \"..\";\n\nexport const next = level + 1;\n",
        )
        .file(
            "src/main.ts",
            "import { level } from \"./c\";\n\nexport const shown = String(level);\n",
        )
        .commit();
    let patch = json!({"edits": [{"file_path": "src/c/index.ts", "delete": true}]}).to_string();
    let report = refused(&repo, &patch);
    dangling_import(
        &report,
        "src/c/inner/leaf.ts",
        1,
        "`..` names no file",
        true,
    );
    dangling_import(&report, "src/main.ts", 1, "`./c` names no file", true);
}

/// `patchgate check` (a pre-commit hook) sees a move too: the staged `git mv` or the working
/// tree's, and the importers it leaves; with `--staged`, as the index holds them.
#[test]
fn check_finds_the_imports_a_staged_or_unstaged_move_leaves_behind() {
    let repo = ts_repo()
        .file(
            "src/report.ts",
            "import { extra } from \"./extra\";\nimport { parseConfig } from \"./util\";\n\nexport const r = [extra, parseConfig];\n",
        )
        .commit();
    // A file the working tree has and no commit: `./extra` named nothing in HEAD, so it is not
    // the change's (with `--staged`, the index lacks it too).
    repo.write("src/extra.ts", "export const extra = 1;\n");
    repo.git(&["mv", "src/util.ts", "src/lib-util.ts"]);
    for args in [
        &["check", "--staged", "--format", "json"][..],
        &["check", "--format", "json"],
    ] {
        let run = repo.run(args);
        run.assert_code(1);
        let report = run.json();
        assert_eq!(report["status"], "checks_failed", "{report:#}");
        dangling_import(&report, "src/app.ts", 1, "`./util` names no file", true);
        dangling_import(
            &report,
            "src/legacy.js",
            1,
            "`./util.js` names no file",
            true,
        );
        dangling_import(&report, "src/report.ts", 2, "`./util` names no file", true);
        let c = entry(&report, "src/report.ts", "references").expect("entry");
        let lines: Vec<&Value> = c["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| &f["line"])
            .collect();
        assert_eq!(lines, [&json!(2)], "{args:?}: {c:#}");
    }
    // Importers updated in the working tree only: the staged commit still breaks them.
    for f in ["src/app.ts", "src/cli.ts", "src/report.ts"] {
        repo.write(f, repo.read_str(f).replace("\"./util\"", "\"./lib-util\""));
    }
    repo.write(
        "src/legacy.js",
        repo.read_str("src/legacy.js")
            .replace("./util.js", "./lib-util.js"),
    );
    repo.run(&["check", "--format", "json"]).assert_code(0);
    repo.run(&["check", "--staged", "--format", "json"])
        .assert_code(1);
    repo.git(&["add", "-A"]);
    repo.run(&["check", "--staged", "--format", "json"])
        .assert_code(0);
}

/// `git rm --cached` untracks a module the working tree keeps: `check --staged` judges the
/// commit (its importers break), `check` the working tree (nothing removed).
#[test]
fn check_sees_a_module_untracked_but_kept_as_removed_only_from_the_index() {
    let repo = ts_repo();
    repo.git(&["rm", "-q", "--cached", "src/util.ts"]);
    let run = repo.run(&["check", "--staged", "--format", "json"]);
    run.assert_code(1);
    dangling_import(&run.json(), "src/app.ts", 1, "`./util` names no file", true);
    let run = repo.run(&["check", "--format", "json"]);
    run.assert_code(0);
    nothing_flagged(&run.json());
}

/// A new import is judged where its folder exists: a typo of a sibling module is refused, an
/// import of build output that is not built here (`../dist/…`, no `dist/`) is not.
#[test]
fn js_a_new_import_of_no_file_is_refused_unless_its_folder_is_not_there() {
    let repo = ts_repo();
    let patch = move_and_edit(
        &[],
        &[(
            "src/app.ts",
            "import { parseConfig } from \"./util\";\n",
            "import { parseConfig } from \"./util\";\nimport { bench } from \"../dist/demo.esm.js\";\nimport { helper } from \"./utill\";\n",
        )],
    );
    let report = refused(&repo, &patch);
    dangling_import(
        &report,
        "src/app.ts",
        3,
        "`./utill` names no file after the patch (the patch wrote it)",
        false,
    );
    let c = entry(&report, "src/app.ts", "references").expect("entry");
    assert_eq!(
        c["findings"].as_array().expect("findings").len(),
        1,
        "{c:#}"
    );
}

/// An import that named nothing before the patch (a file a build generates) is not the patch's.
#[test]
fn js_an_import_that_was_already_unresolved_is_not_blamed_on_the_patch() {
    let repo = ts_repo();
    let repo = repo
        .file(
            "src/schema.ts",
            "import { fields } from \"./generated/fields.js\";\n\nexport const count = fields.length;\n",
        )
        .commit();
    let report = passes(
        &repo,
        &move_and_edit(
            &[],
            &[("src/schema.ts", "fields.length", "fields.length + 1")],
        ),
        "src/schema.ts",
        "fields.length + 1",
    );
    nothing_flagged(&report);
}

#[test]
fn ts_deleting_a_module_whose_function_is_still_imported_is_refused() {
    let repo = ts_repo();
    let patch = json!({"edits": [{"file_path": "src/util.ts", "delete": true}]}).to_string();
    let report = refused(&repo, &patch);
    dangling(
        &report,
        "src/app.ts",
        4,
        "parseConfig",
        "src/util.ts:1",
        true,
    );
    dangling(
        &report,
        "src/cli.ts",
        5,
        "parseConfig",
        "src/util.ts:1",
        true,
    );
    // And the module path of each import.
    for path in ["src/app.ts", "src/cli.ts"] {
        dangling_import(&report, path, 1, "`./util` names no file", true);
    }
}

// ---------------------------------------------------------------------------------------------
// Rust: clippy --all-targets compiles every target of the crate, the references check reads names

const RUST_TOOLS: &[&str] = &["cargo", "rustfmt", "clippy"];

/// A library whose `util::parse_config` is used by two modules, its own `#[cfg(test)] mod tests`,
/// and an integration test under `tests/`.
fn rust_repo() -> TestRepo {
    TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        )
        .file(".gitignore", "/target\n")
        .file("src/lib.rs", "pub mod app;\npub mod cli;\npub mod util;\n")
        .file(
            "src/util.rs",
            "pub fn parse_config(s: &str) -> usize {\n    s.len()\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn counts() {\n        assert_eq!(parse_config(\"ab\"), 2);\n    }\n}\n",
        )
        .file(
            "src/app.rs",
            "use crate::util;\n\npub fn run() -> usize {\n    util::parse_config(\"a\")\n}\n",
        )
        .file(
            "src/cli.rs",
            "use crate::util;\n\npub fn start() -> usize {\n    let n = 1;\n    util::parse_config(\"xy\") + n\n}\n",
        )
        .file(
            "tests/config.rs",
            "#[test]\nfn parses() {\n    assert_eq!(demo::util::parse_config(\"abc\"), 3);\n}\n",
        )
        .commit()
}

const RS_ALL: [(&str, &str, &str); 4] = [
    ("src/util.rs", "parse_config", "load_config"),
    ("src/app.rs", "parse_config", "load_config"),
    ("src/cli.rs", "parse_config", "load_config"),
    ("tests/config.rs", "parse_config", "load_config"),
];

#[test]
fn rust_a_rename_that_misses_a_call_site_in_another_file_is_refused() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_repo();
    let report = refused(&repo, &all_but(&RS_ALL, "src/cli.rs"));
    caught(
        &report,
        "src/cli.rs",
        5,
        "clippy",
        "E0425 cannot find function `parse_config`",
        true,
    );
    dangling(
        &report,
        "src/cli.rs",
        5,
        "parse_config",
        "src/util.rs:1",
        true,
    );
    // One place, two checkers: one problem.
    let human = apply_as(&repo, &all_but(&RS_ALL, "src/cli.rs"), "human");
    human.assert_code(1);
    assert!(
        human.stdout.contains(
            "checks failed: 1 new problem caused by this patch (1 in a file it did not change); \
             nothing was written"
        ),
        "{}",
        human.stdout
    );
}

#[test]
fn rust_the_complete_rename_passes() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_repo();
    let report = passes(&repo, &rename(&RS_ALL), "src/cli.rs", "util::load_config(");
    nothing_flagged(&report);
    assert_eq!(
        entry(&report, "src/cli.rs", "clippy").expect("clippy on cli.rs")["status"],
        "pass"
    );
}

/// A Cargo workspace: `app` calls `engine::scale` (a path dependency); each crate is a package
/// clippy checks on its own, in one mirror of the workspace.
fn rust_workspace() -> TestRepo {
    let manifest = |name: &str, deps: &str| {
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{deps}"
        )
    };
    TestRepo::new()
        .file(
            "Cargo.toml",
            "[workspace]\nmembers = [\"app\", \"engine\"]\nresolver = \"2\"\n",
        )
        .file(".gitignore", "/target\n")
        .file("engine/Cargo.toml", manifest("engine", ""))
        .file(
            "engine/src/lib.rs",
            "pub fn scale(a: i64, b: i64) -> i64 {\n    a + b * 3\n}\n",
        )
        .file(
            "app/Cargo.toml",
            manifest("app", "engine = { path = \"../engine\" }\n"),
        )
        .file(
            "app/src/lib.rs",
            "pub fn run(a: i64) -> i64 {\n    engine::scale(a, 2) + 1\n}\n",
        )
        .commit()
}

const WS_ALL: [(&str, &str, &str); 2] = [
    ("engine/src/lib.rs", "scale", "scale_by"),
    ("app/src/lib.rs", "scale", "scale_by"),
];

/// The rename across the two crates passes: `app` is checked against `engine` as the patch
/// leaves it, not as it was (checked against the original it would be "cannot find function
/// `scale_by` in crate `engine`", a correct patch refused).
#[test]
fn rust_a_rename_across_the_crates_of_a_workspace_passes() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_workspace();
    let report = passes(
        &repo,
        &rename(&WS_ALL),
        "app/src/lib.rs",
        "engine::scale_by(",
    );
    nothing_flagged(&report);
    assert_eq!(
        entry(&report, "app/src/lib.rs", "clippy").expect("clippy on app")["status"],
        "pass"
    );
}

/// The same rename without its caller in the other crate is refused, the miss reported under the
/// caller.
#[test]
fn rust_a_rename_that_misses_the_caller_in_another_crate_is_refused() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_workspace();
    let report = refused(&repo, &all_but(&WS_ALL, "app/src/lib.rs"));
    dangling(
        &report,
        "app/src/lib.rs",
        2,
        "scale",
        "engine/src/lib.rs:1",
        true,
    );
}

/// ripgrep's shape: a function renamed, and its caller keeps a local variable of the old name
/// (`let is_readable_stdin = cli::is_stdin_readable();`, used after); another file, untouched,
/// takes a parameter of that name. Those are locals, not uses of the removed function.
fn rust_shadowing_repo(late_caller: bool) -> TestRepo {
    let mut repo = TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        )
        .file(".gitignore", "/target\n")
        .file(
            "src/lib.rs",
            if late_caller {
                "pub mod cli;\npub mod flags;\npub mod late;\npub mod probe;\n"
            } else {
                "pub mod cli;\npub mod flags;\npub mod probe;\n"
            },
        )
        .file(
            "src/cli.rs",
            "pub fn is_readable_stdin() -> bool {\n    std::env::args().count() > 9\n}\n",
        )
        .file(
            "src/flags.rs",
            "use crate::cli;\n\npub fn stdin_mode() -> &'static str {\n    let is_readable_stdin = cli::is_readable_stdin();\n    if is_readable_stdin {\n        \"read\"\n    } else {\n        \"skip\"\n    }\n}\n\npub fn again() -> bool {\n    let probe = |is_readable_stdin: bool| !is_readable_stdin;\n    probe(true)\n}\n",
        )
        .file(
            "src/probe.rs",
            "pub fn describe(is_readable_stdin: bool) -> &'static str {\n    match is_readable_stdin {\n        true => \"yes\",\n        false => \"no\",\n    }\n}\n",
        );
    if late_caller {
        repo = repo.file(
            "src/late.rs",
            "use crate::cli;\n\npub fn late() -> bool {\n    let is_readable_stdin = true;\n    is_readable_stdin && cli::is_readable_stdin()\n}\n",
        );
    }
    repo.commit()
}

const RS_SHADOW: [(&str, &str, &str); 2] = [
    (
        "src/cli.rs",
        "fn is_readable_stdin(",
        "fn is_stdin_readable(",
    ),
    (
        "src/flags.rs",
        "cli::is_readable_stdin()",
        "cli::is_stdin_readable()",
    ),
];

/// The correct rename passes, clippy and the references check agreeing (before, the references
/// check took the variable's two uses, and the untouched file's parameter, for uses of the
/// removed function: a correct patch refused).
#[test]
fn rust_a_rename_whose_callers_keep_a_local_of_the_old_name_passes() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_shadowing_repo(false);
    let report = passes(
        &repo,
        &rename(&RS_SHADOW),
        "src/flags.rs",
        "let is_readable_stdin = cli::is_stdin_readable();",
    );
    nothing_flagged(&report);
    assert_eq!(
        entry(&report, "src/flags.rs", "references").expect("references on flags.rs")["status"],
        "pass"
    );
}

/// A real miss beside a local of the same name is still caught, on its line only: the path
/// `cli::is_readable_stdin()` names the function, the variable before it does not.
#[test]
fn rust_a_missed_call_beside_a_local_of_the_old_name_is_refused() {
    let repo = rust_shadowing_repo(true);
    let before = repo.snapshot();
    let run = repo.apply(&rename(&RS_SHADOW), &["--checks", "references"]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_eq!(repo.snapshot(), before);
    dangling(
        &report,
        "src/late.rs",
        5,
        "is_readable_stdin",
        "src/cli.rs:1",
        true,
    );
    let late = entry(&report, "src/late.rs", "references").expect("late.rs");
    assert_eq!(
        late["findings"].as_array().map(Vec::len),
        Some(1),
        "{late:#}"
    );
    for f in ["src/flags.rs", "src/probe.rs"] {
        assert!(
            entry(&report, f, "references").is_none_or(|c| c["status"] == "pass"),
            "{report:#}"
        );
    }
}

/// A cross-crate patch that adds a warning in `engine`: it is reported once, under `engine`'s
/// own clippy entry, not again from `app`'s run (which sees `engine` as the patch leaves it) as
/// a problem "in a file the patch did not change".
#[test]
fn rust_a_warning_added_in_one_crate_of_a_cross_crate_patch_is_reported_once() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_workspace();
    let patch = json!({"edits": [
        {"file_path": "engine/src/lib.rs", "old_string": "pub fn scale(",
         "new_string": "pub fn total(xs: &Vec<i64>) -> i64 {\n    xs.iter().sum()\n}\n\npub fn scale("},
        {"file_path": "app/src/lib.rs", "old_string": "+ 1", "new_string": "+ 2"}]})
    .to_string();
    let report = refused(&repo, &patch);
    let entries: Vec<&Value> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["path"] == "engine/src/lib.rs" && c["checker"] == "clippy")
        .collect();
    assert_eq!(entries.len(), 1, "{report:#}");
    assert_eq!(entries[0]["status"], "fail", "{report:#}");
    assert!(entries[0]["note"].is_null(), "{report:#}");
    assert_eq!(
        entry(&report, "app/src/lib.rs", "clippy").expect("app")["status"],
        "pass"
    );
}

/// A cross-crate patch that deprecates `engine::scale`, called from a file of `app` the patch
/// does not change: that file is reported once, though both crates' jobs see it (one cargo run
/// checks both crates of the patch).
#[test]
fn rust_an_untouched_file_a_cross_crate_patch_breaks_is_reported_once() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_workspace();
    repo.write(
        "app/src/lib.rs",
        "pub mod other;\n\npub fn run(a: i64) -> i64 {\n    engine::scale(a, 2) + 1\n}\n",
    );
    repo.write(
        "app/src/other.rs",
        "pub fn twice(a: i64) -> i64 {\n    engine::scale(a, 2) * 2\n}\n",
    );
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "other"]);
    let patch = json!({"edits": [
        {"file_path": "engine/src/lib.rs", "old_string": "pub fn scale(",
         "new_string": "#[deprecated]\npub fn scale("},
        {"file_path": "app/src/lib.rs", "old_string": "engine::scale(a, 2) + 1",
         "new_string": "a + 1"}]})
    .to_string();
    let report = refused(&repo, &patch);
    let entries: Vec<&Value> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["path"] == "app/src/other.rs" && c["checker"] == "clippy")
        .collect();
    assert_eq!(entries.len(), 1, "{report:#}");
    assert_eq!(entries[0]["note"], UNTOUCHED, "{report:#}");
    assert_subset(
        &entries[0]["findings"],
        &json!([{"line": 2, "rule": "deprecated", "new": true}]),
        "the deprecated call",
    );
    assert_eq!(entries[0]["findings"].as_array().map(Vec::len), Some(1));
}

#[test]
fn rust_a_use_missed_in_an_integration_test_is_refused() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_repo();
    let report = refused(&repo, &all_but(&RS_ALL, "tests/config.rs"));
    caught(
        &report,
        "tests/config.rs",
        3,
        "clippy",
        "cannot find function `parse_config`",
        true,
    );
    dangling(
        &report,
        "tests/config.rs",
        3,
        "parse_config",
        "src/util.rs:1",
        true,
    );
}

#[test]
fn rust_a_use_missed_in_a_cfg_test_module_is_refused() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_repo();
    // The definition renamed, its callers too, but not the test module below it in the same file
    // (a line the patch did not write).
    let mut edits = vec![("src/util.rs", "pub fn parse_config(", "pub fn load_config(")];
    edits.extend(RS_ALL.iter().copied().skip(1));
    let report = refused(&repo, &rename(&edits));
    caught(
        &report,
        "src/util.rs",
        11,
        "clippy",
        "cannot find function `parse_config`",
        false,
    );
    dangling(
        &report,
        "src/util.rs",
        11,
        "parse_config",
        "src/util.rs:1",
        false,
    );
}

// ---------------------------------------------------------------------------------------------
// Go: go vet type-checks every package of the module, tests included

const GO_TOOLS: &[&str] = &["go", "gofmt"];

/// `lib.ParseConfig`, used by two commands (other packages of the module) and by the package's
/// own test.
fn go_repo() -> TestRepo {
    TestRepo::new()
        .file("go.mod", "module example.com/m\n\ngo 1.21\n")
        .file(
            "lib/lib.go",
            "package lib\n\nimport \"strings\"\n\n// ParseConfig splits a setting.\nfunc ParseConfig(s string) []string {\n\treturn strings.Split(s, \"=\")\n}\n",
        )
        .file(
            "lib/lib_test.go",
            "package lib\n\nimport \"testing\"\n\nfunc TestParseConfig(t *testing.T) {\n\tif len(ParseConfig(\"a=b\")) != 2 {\n\t\tt.Fatal(\"split\")\n\t}\n}\n",
        )
        .file(
            "cmd/app/main.go",
            "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/lib\"\n)\n\nfunc main() {\n\tfmt.Println(\"start\")\n\tfmt.Println(lib.ParseConfig(\"x=y\"))\n}\n",
        )
        .file(
            "cmd/tool/main.go",
            "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/lib\"\n)\n\nfunc main() {\n\tfmt.Println(lib.ParseConfig(\"k=v\"))\n}\n",
        )
        .commit()
}

const GO_ALL: [(&str, &str, &str); 4] = [
    ("lib/lib.go", "ParseConfig", "LoadConfig"),
    (
        "lib/lib_test.go",
        "ParseConfig(\"a=b\")",
        "LoadConfig(\"a=b\")",
    ),
    ("cmd/app/main.go", "ParseConfig", "LoadConfig"),
    ("cmd/tool/main.go", "ParseConfig", "LoadConfig"),
];

#[test]
fn go_a_rename_that_misses_a_call_site_in_another_package_is_refused() {
    if !require_all(GO_TOOLS) {
        return;
    }
    let repo = go_repo();
    let report = refused(&repo, &all_but(&GO_ALL, "cmd/app/main.go"));
    caught(
        &report,
        "cmd/app/main.go",
        11,
        "go-lint",
        "undefined: lib.ParseConfig",
        true,
    );
    dangling(
        &report,
        "cmd/app/main.go",
        11,
        "ParseConfig",
        "lib/lib.go:6",
        true,
    );
}

#[test]
fn go_a_rename_that_misses_a_call_site_in_a_test_file_is_refused() {
    if !require_all(GO_TOOLS) {
        return;
    }
    let repo = go_repo();
    let report = refused(&repo, &all_but(&GO_ALL, "lib/lib_test.go"));
    caught(
        &report,
        "lib/lib_test.go",
        6,
        "go-lint",
        "undefined: ParseConfig",
        true,
    );
    dangling(
        &report,
        "lib/lib_test.go",
        6,
        "ParseConfig",
        "lib/lib.go:6",
        true,
    );
}

#[test]
fn go_the_complete_rename_passes() {
    if !require_all(GO_TOOLS) {
        return;
    }
    let repo = go_repo();
    let report = passes(
        &repo,
        &rename(&GO_ALL),
        "cmd/app/main.go",
        "lib.LoadConfig(",
    );
    nothing_flagged(&report);
    assert_eq!(
        entry(&report, "lib/lib.go", "go-lint").expect("go-lint on lib.go")["status"],
        "pass"
    );
}

/// A file of `lib` moved (alone, and with an edit of its text): go vet must see it only at its
/// new path; left at the old one too, every definition would be "redeclared in this block".
#[test]
fn go_moving_a_file_within_its_package_passes() {
    if !require_all(GO_TOOLS) {
        return;
    }
    // Alone; with an edit of its comment; and within a rename of its function across the
    // module (`git mv` + a rename, as `git diff -M` gives it).
    for variant in 0..3 {
        let repo = go_repo();
        let mut entry = json!({"file_path": "lib/lib.go", "move_to": "lib/config.go"});
        let mut edits = Vec::new();
        let mut holds = "func ParseConfig(";
        if variant == 1 {
            entry["old_string"] = json!("splits a setting");
            entry["new_string"] = json!("splits one setting");
        }
        if variant == 2 {
            entry["old_string"] = json!("func ParseConfig(");
            entry["new_string"] = json!("func LoadConfig(");
            holds = "func LoadConfig(";
            for (path, old, new) in GO_ALL.iter().skip(1) {
                edits.push(json!({"file_path": path, "old_string": old, "new_string": new}));
            }
        }
        edits.insert(0, entry);
        // A dry run first: what one run leaves in the mirror must not mislead the next.
        let patch = json!({ "edits": edits }).to_string();
        repo.apply(&patch, &["--dry-run"]).assert_code(0);
        let report = passes(&repo, &patch, "lib/config.go", holds);
        nothing_flagged(&report);
        assert!(!repo.exists("lib/lib.go"));
        let vet = entry_of(&report, "go-lint");
        // Not merely "nothing new": a stale copy at the old path gives "redeclared" findings
        // that the (original-content) baseline may share.
        assert!(
            vet.iter()
                .all(|c| c["status"] == "pass" && c["findings"] == json!([])),
            "go vet on the moved file: {report:#}"
        );
        assert!(!vet.is_empty(), "go vet did not run: {report:#}");
    }
}

/// Every `checks[]` entry of `checker`.
fn entry_of<'a>(report: &'a Value, checker: &str) -> Vec<&'a Value> {
    report["checks"]
        .as_array()
        .map(|a| a.iter().filter(|c| c["checker"] == checker).collect())
        .unwrap_or_default()
}

/// A file of `lib` deleted, alone and with an edit of the package's other file: the command that
/// still calls its function no longer compiles (go vet runs for a deleted file too, on a mirror
/// without it).
#[test]
fn go_deleting_a_file_whose_function_another_package_calls_is_refused() {
    if !require_all(GO_TOOLS) {
        return;
    }
    let repo = go_repo();
    repo.write(
        "lib/extra.go",
        "package lib\n\n// Helper is used by cmd/extra.\nfunc Helper() int {\n\treturn 1\n}\n",
    );
    repo.write(
        "cmd/extra/main.go",
        "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/lib\"\n)\n\nfunc main() {\n\tfmt.Println(lib.Helper())\n}\n",
    );
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "extra"]);
    let delete = json!({"file_path": "lib/extra.go", "delete": true});
    let edit = json!({"file_path": "lib/lib.go", "old_string": "splits a setting",
        "new_string": "splits one setting"});
    for edits in [json!([delete]), json!([delete, edit])] {
        let report = refused(&repo, &json!({ "edits": edits }).to_string());
        dangling(
            &report,
            "cmd/extra/main.go",
            10,
            "Helper",
            "lib/extra.go:4",
            true,
        );
        caught(
            &report,
            "cmd/extra/main.go",
            10,
            "go-lint",
            "undefined: lib.Helper",
            true,
        );
    }
}

/// A module file deleted while `lib.rs` still declares it: clippy cannot find the module.
#[test]
fn rust_deleting_a_module_file_that_is_still_declared_is_refused() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_repo();
    let patch = json!({"edits": [{"file_path": "src/cli.rs", "delete": true}]}).to_string();
    let report = refused(&repo, &patch);
    caught(&report, "src/lib.rs", 2, "clippy", "E0583", true);
}

/// A crate whose dev-dependencies hold another package of the same name (itoa's tests use a
/// published itoa): clippy is asked for `name@version`, so it runs instead of failing with
/// "the specification `dup` is ambiguous".
#[test]
fn rust_a_package_sharing_its_name_with_a_dependency_is_still_checked() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"dup\"\nversion = \"0.2.0\"\nedition = \"2021\"\n\n\
             [dev-dependencies]\ndup_old = { package = \"dup\", path = \"old\" }\n\n\
             [workspace]\nexclude = [\"old\"]\n",
        )
        .file(".gitignore", "/target\n")
        .file("src/lib.rs", "pub fn value() -> usize {\n    1\n}\n")
        .file(
            "old/Cargo.toml",
            "[package]\nname = \"dup\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .file("old/src/lib.rs", "pub fn value() -> usize {\n    0\n}\n")
        .commit();
    let report = passes(
        &repo,
        &rename(&[("src/lib.rs", "    1\n", "    2\n")]),
        "src/lib.rs",
        "    2\n",
    );
    let clippy = entry(&report, "src/lib.rs", "clippy").expect("clippy on lib.rs");
    assert_eq!(clippy["status"], "pass", "{clippy:#}");
}

/// cargo before 1.74 has no `--keep-going`, which the one run of a cross-crate patch asks for,
/// and rejects it: each crate is then checked alone, as before, with the same verdict (here a
/// cargo that rejects the flag as cargo 1.73 did, in front of the real one).
#[test]
fn rust_a_cargo_without_keep_going_checks_the_crates_one_at_a_time() {
    if !require_all(RUST_TOOLS) {
        return;
    }
    let repo = rust_workspace();
    let real = crate::harness::on_path("cargo").expect("cargo");
    let bin = tempfile::tempdir().expect("bin");
    let log = bin.path().join("rejected");
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = --keep-going ]; then\n    echo x >> '{}'\n    echo \"error: unexpected argument '--keep-going' found\" >&2\n    exit 1\n  fi\ndone\nexec '{}' \"$@\"\n",
        log.display(),
        real.display()
    );
    let cargo = bin.path().join("cargo");
    std::fs::write(&cargo, script).expect("the script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = std::env::join_paths(std::iter::once(bin.path().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let patch = json!({"edits": [
        {"file_path": "engine/src/lib.rs", "old_string": "pub fn scale(",
         "new_string": "pub fn total(xs: &Vec<i64>) -> i64 {\n    xs.iter().sum()\n}\n\npub fn scale("},
        {"file_path": "app/src/lib.rs", "old_string": "engine::scale(a, 2) + 1",
         "new_string": "engine::scale(a, 3) + 1"}]})
    .to_string();
    let pfile = tempfile::NamedTempFile::new().expect("patch file");
    std::fs::write(pfile.path(), patch).expect("write patch");
    let out = std::process::Command::new(crate::harness::BIN)
        .args([
            "apply",
            "--dry-run",
            "--checks",
            "clippy",
            "--format",
            "json",
        ])
        .arg(pfile.path())
        .current_dir(repo.path())
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("patchgate runs");
    let run = Run::from(out);
    run.assert_code(1);
    let report = run.json();
    assert!(
        log.exists(),
        "the cross-crate run asked for --keep-going: {report:#}"
    );
    caught(&report, "engine/src/lib.rs", 1, "clippy", "Vec", false);
    let app = entry(&report, "app/src/lib.rs", "clippy").expect("app's check");
    assert_eq!(app["status"], "pass", "{report:#}");
}

// ---------------------------------------------------------------------------------------------
// `--branch`: the branch is judged, not the working tree (uncommitted changes, untracked files)

/// `apply --branch fix --checks references`: the run, whether the branch `fix` exists after it,
/// and the working tree unchanged either way.
fn on_branch(repo: &TestRepo, patch: &str) -> (Run, bool) {
    let outside_refs = || {
        let mut s = repo.snapshot();
        s.remove("refs");
        s
    };
    let before = outside_refs();
    let run = repo.apply(patch, &["--branch", "fix", "--checks", "references"]);
    let made = repo.has_ref("refs/heads/fix");
    assert_eq!(
        outside_refs(),
        before,
        "--branch touched the working tree or the index"
    );
    (run, made)
}

/// A rename that misses the call sites the branch still has, where the working tree's
/// uncommitted edits have removed them: refused (the working tree would have passed it).
#[test]
fn branch_a_rename_missing_call_sites_only_the_branch_has_is_refused() {
    let repo = python_repo();
    repo.write("app.py", "def main():\n    return 1\n");
    repo.write("cli.py", "def run():\n    return 2\n");
    let (run, made) = on_branch(
        &repo,
        &rename(&[("util.py", "parse_config", "load_config")]),
    );
    run.assert_code(1);
    let report = run.json();
    assert!(!made, "a refused patch made the branch");
    dangling(&report, "app.py", 5, "parse_config", "util.py:1", true);
    dangling(&report, "cli.py", 6, "parse_config", "util.py:1", true);
}

/// The complete rename of the branch's files, while an untracked file of the working tree still
/// uses the old name: it is not on the branch, so the rename passes and the branch is made.
#[test]
fn branch_a_complete_rename_passes_whatever_untracked_files_use() {
    let repo = python_repo();
    repo.write(
        "scratch.py",
        "from util import parse_config\n\nparse_config(\"k=v\")\n",
    );
    let mut all = PY_RENAME.to_vec();
    all.push(("cli.py", "parse_config", "load_config"));
    let (run, made) = on_branch(&repo, &rename(&all));
    run.assert_code(0);
    assert!(made, "{}", run.stdout);
    nothing_flagged(&run.json());
    assert!(
        repo.git(&["show", "fix:cli.py"])
            .contains("util.load_config(")
    );
}

/// The branch's differing files are listed only when a check reads across files: a body edit
/// (no name removed, no import line) checks no other file, so `--branch` pays nothing for them;
/// a rename lists them once, for the references check.
#[test]
fn branch_context_is_listed_only_when_a_check_reads_it() {
    let repo = python_repo();
    repo.write("scratch.py", "from util import parse_config\n");
    let timed = |patch: &str| {
        let _ = git_try(repo.path(), &["branch", "-D", "fix"]);
        repo.apply_env(
            patch,
            &["--branch", "fix", "--checks", "references,syntax"],
            &[("PATCHGATE_TIMINGS", "1")],
        )
    };
    let body = json!({"edits": [{
        "file_path": "util.py",
        "old_string": "    return 1\n",
        "new_string": "    return 2\n",
    }]})
    .to_string();
    let run = timed(&body);
    run.assert_code(0);
    assert!(
        !run.stderr.contains("branch: context made"),
        "{}",
        run.stderr
    );
    assert!(repo.git(&["show", "fix:util.py"]).contains("return 2"));

    let mut all = PY_RENAME.to_vec();
    all.push(("cli.py", "parse_config", "load_config"));
    let run = timed(&rename(&all));
    run.assert_code(0);
    assert_eq!(
        run.stderr.matches("branch: context made").count(),
        1,
        "{}",
        run.stderr
    );
}

/// When git cannot list what the working tree changes against the branch, a check that needed it
/// judged nothing of the branch: the run stops with a git error and the branch is not made (a
/// checker's `error` alone does not block). `git` on PATH is a wrapper that fails `git diff
/// --name-only` and runs the real git otherwise.
#[cfg(unix)]
#[test]
fn branch_a_comparison_git_cannot_make_stops_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let repo = python_repo();
    let real = crate::harness::on_path("git").expect("git on PATH");
    let bin = tempfile::tempdir().expect("tempdir");
    let wrapper = bin.path().join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --name-only ] && {{ echo 'fatal: broken' >&2; exit 128; }}; done\nexec {} \"$@\"\n",
            real.display()
        ),
    )
    .expect("write wrapper");
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = repo.apply_env(
        &rename(&[("util.py", "parse_config", "load_config")]),
        &[
            "--branch",
            "fix",
            "--checks",
            "references",
            "--format",
            "json",
        ],
        &[("PATH", path.as_str())],
    );
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(report["error"]["kind"], "git", "{report}");
    assert!(
        report["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot compare the branch") && m.contains("fatal: broken")),
        "{report}"
    );
    assert!(!repo.has_ref("refs/heads/fix"), "the branch was made");
}

/// A new import of a file only the working tree has (untracked): on the branch it names
/// nothing, so it is refused; a file the branch has but the working tree deleted (uncommitted)
/// may be imported.
#[test]
fn branch_imports_resolve_against_the_branch_files() {
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"demo\", \"type\": \"module\"}\n",
        )
        .file(
            "src/main.js",
            "import { a } from \"./a.js\";\n\nexport const x = a;\n",
        )
        .file("src/a.js", "export const a = 1;\n")
        .file("src/b.js", "export const b = 2;\n")
        .commit();
    repo.write("src/helpers.js", "export const h = 3;\n");
    std::fs::remove_file(repo.path().join("src/b.js")).expect("rm");
    let import = |name: &str| {
        json!({"edits": [{
            "file_path": "src/main.js",
            "old_string": "import { a } from \"./a.js\";\n",
            "new_string": format!("import {{ a }} from \"./a.js\";\nimport {{ {name} }} from \"./{name}.js\";\n"),
        }]})
        .to_string()
    };
    let (run, made) = on_branch(&repo, &import("helpers"));
    run.assert_code(1);
    assert!(!made);
    dangling_import(&run.json(), "src/main.js", 2, "`./helpers.js`", false);

    let (run, made) = on_branch(&repo, &import("b"));
    run.assert_code(0);
    assert!(made, "{}", run.stdout);
    assert!(repo.git(&["show", "fix:src/main.js"]).contains("./b.js"));
}
