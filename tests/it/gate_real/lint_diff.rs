//! The lint gate's precision on changed lines, with the real ruff (docs/checks.md, "Gating"): a
//! finding on a changed line is old only when the line it replaced had it, with a message that
//! differs at most by the line's own renames or by numbers. An edit that fixes one undefined
//! name and introduces another is refused; a rename that carries an old finding along passes.

use serde_json::json;

use super::{applied, refused};
use crate::checks::{check, findings, patch, require_all};
use crate::harness::{TestRepo, assert_subset};

fn ruff_repo(app: &str) -> TestRepo {
    TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"F\"]\n",
        )
        .file("app.py", app)
        .commit()
}

#[test]
fn an_edit_that_fixes_one_undefined_name_and_introduces_another_is_refused() {
    if !require_all(&["ruff"]) {
        return;
    }
    // OpenHands' "introduced and fixed errors": x's undefined name is fixed, y's line now uses
    // another undefined name, and a new line uses the name x no longer does.
    let repo = ruff_repo("x = UNDEFINED_VARIABLE\ny = 10\n");
    let report = refused(
        &repo,
        &patch(
            "app.py",
            "x = UNDEFINED_VARIABLE\ny = 10\n",
            "x = 5\ny = ANOTHER_UNDEFINED_VARIABLE\nz = UNDEFINED_VARIABLE\n",
        ),
        "app.py",
        "ruff",
    );
    assert_subset(
        &check(&report, "app.py", "ruff")["findings"],
        &json!([
            {"line": 2, "rule": "F821", "message": "Undefined name `ANOTHER_UNDEFINED_VARIABLE`", "new": true},
            {"line": 3, "rule": "F821", "message": "Undefined name `UNDEFINED_VARIABLE`", "new": true},
        ]),
        "both undefined names are the patch's",
    );

    // On one line: `qty` (undefined) replaced by an expression with another undefined name.
    let repo = ruff_repo("price = 2\ntotal = price * qty\n");
    let report = refused(
        &repo,
        &patch(
            "app.py",
            "total = price * qty\n",
            "quantity = 3\ntotal = price * quantity * rate\n",
        ),
        "app.py",
        "ruff",
    );
    let found = findings(check(&report, "app.py", "ruff"));
    assert_eq!(found.len(), 1, "{report:#}");
    assert_subset(
        &found[0],
        &json!({"line": 3, "rule": "F821", "message": "Undefined name `rate`", "new": true}),
        "rate is new",
    );
}

#[test]
fn a_rename_carries_an_old_undefined_name_along_and_passes() {
    if !require_all(&["ruff"]) {
        return;
    }
    // `qty` was already undefined (say, injected by a framework); the patch renames it on its
    // line, and the finding follows the rename.
    let repo = ruff_repo("price = 2\ntotal = price * qty\n");
    let report = applied(&repo, "app.py", "price * qty", "price * quantity");
    assert_subset(
        &check(&report, "app.py", "ruff")["findings"],
        &json!([{"line": 2, "rule": "F821", "message": "Undefined name `quantity`", "new": false}]),
        "the renamed finding is the old one",
    );
}
