//! Issue 8, live: patchgate runs the checkers a project uses — judged from the project's own
//! files — and blocks only on what a patch made worse. Each test builds a small real project in a
//! temporary git repository and drives the real tools (prettier, eslint, biome, oxlint, black,
//! flake8, xo) through the real binary.
//!
//! Every test that needs a tool asks `require` first: in CI (`CI=true`) a missing tool fails the
//! test, locally it skips with a loud `SKIPPED:` line. The built-in syntax gate needs none
//! (`syntax` submodule). Workspace members: `workspace`. The lint gate's precision on changed
//! lines: `lint_diff`.

mod lint_diff;
mod syntax;
mod workspace;

use serde_json::{Value, json};

use crate::checks::{check, findings, patch, require_all};
use crate::harness::{TestRepo, assert_subset, tools_node_modules};

// ---------------------------------------------------------------------------------------------
// detect

/// The one `detect` entry for `rel`.
#[track_caller]
fn detect(repo: &TestRepo, rel: &str) -> Value {
    let run = repo.run(&["detect", rel, "--format", "json"]);
    run.assert_code(0);
    let all = run.json();
    let entries = all.as_array().expect("detect prints a list");
    assert_eq!(entries.len(), 1, "one entry for {rel}: {all:#}");
    assert_eq!(entries[0]["path"], rel, "{all:#}");
    entries[0].clone()
}

/// The `considered[]` entry of checker `name`.
#[track_caller]
fn considered<'a>(entry: &'a Value, name: &str) -> &'a Value {
    entry["considered"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("{name} not considered in {entry:#}"))
}

/// `detect` on `rel` uses the syntax gate and exactly `used` (checker, a file name its evidence
/// must name), each with its program found; returns the entry.
#[track_caller]
fn assert_detect(repo: &TestRepo, rel: &str, used: &[(&str, &str)]) -> Value {
    let entry = detect(repo, rel);
    let mut want = vec!["syntax", "references"];
    want.extend(used.iter().map(|(name, _)| *name));
    assert_eq!(entry["checkers"], json!(want), "{entry:#}");
    for (name, file) in used {
        let c = considered(&entry, name);
        assert_eq!(c["verdict"], "used", "{c:#}");
        assert_eq!(c["available"], true, "{c:#}");
        let evidence = c["evidence"].as_str().unwrap_or("");
        assert!(
            evidence.contains(file),
            "{name}: evidence names {file}: {c:#}"
        );
    }
    entry
}

/// Checker `name` is considered and not used, for a reason that contains each of `why_has`.
#[track_caller]
fn assert_not_used(entry: &Value, name: &str, why_has: &[&str]) {
    let c = considered(entry, name);
    assert_eq!(c["verdict"], "not_used", "{c:#}");
    let why = c["why"].as_str().unwrap_or("");
    for part in why_has {
        assert!(
            why.contains(part),
            "{name}: the reason lacks {part:?}: {c:#}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// apply

/// The checkers that reported on `rel`, sorted.
fn checkers_on(report: &Value, rel: &str) -> Vec<String> {
    let mut out: Vec<String> = report["checks"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| c["path"] == rel)
                .filter_map(|c| c["checker"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Applies `p`, which must be refused by `checker` on `rel`: exit 1, `checks_failed`, nothing
/// written or staged. Returns the report.
#[track_caller]
fn refused(repo: &TestRepo, p: &str, rel: &str, checker: &str) -> Value {
    let before = repo.snapshot();
    let run = repo.apply(p, &[]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["status"], "checks_failed", "{report:#}");
    assert_eq!(report["files"], json!([]), "{report:#}");
    assert_eq!(check(&report, rel, checker)["status"], "fail", "{report:#}");
    assert_eq!(
        repo.snapshot(),
        before,
        "the refused patch changed the tree"
    );
    report
}

/// Applies `p` (one edit of `rel`), which must pass: exit 0, `applied`, no check failing or
/// erring, and the edit on disk. Returns the report.
#[track_caller]
fn applied(repo: &TestRepo, rel: &str, old: &str, new: &str) -> Value {
    let expected = repo.read_str(rel).replacen(old, new, 1);
    let run = repo.apply(&patch(rel, old, new), &[]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "applied", "{report:#}");
    for c in report["checks"].as_array().expect("checks") {
        assert_eq!(c["status"], "pass", "{c:#}");
    }
    assert_eq!(repo.read_str(rel), expected, "the applied edit is on disk");
    report
}

/// A formatter's refusal: its findings are exactly `want` (`(line, new)`), and its diff shows
/// the new hunk `fixed` and not the old hunk `old_hunk`.
#[track_caller]
fn assert_format_refusal(c: &Value, want: &[(u64, bool)], fixed: &str, old_hunk: &str) {
    let want: Vec<Value> = want
        .iter()
        .map(|(line, new)| json!({"line": line, "rule": "format", "new": new}))
        .collect();
    assert_subset(&c["findings"], &json!(want), "format findings");
    let diff = c["diff"]
        .as_str()
        .unwrap_or_else(|| panic!("no diff: {c:#}"));
    assert!(diff.contains(&format!("\n+{fixed}\n")), "{diff}");
    assert!(
        !diff.contains(old_hunk),
        "the old hunk is not the patch's: {diff}"
    );
}

/// A linter's refusal: exactly one finding, new, at `line`, whose rule contains `rule`.
#[track_caller]
fn assert_one_new(c: &Value, line: u64, rule: &str) {
    let found = findings(c);
    assert_eq!(found.len(), 1, "{c:#}");
    assert_subset(&found[0], &json!({"line": line, "new": true}), "finding");
    let got = found[0]["rule"].as_str().unwrap_or("");
    assert!(got.contains(rule), "rule {got:?} is not {rule:?}: {c:#}");
}

/// Links the pinned node tools in as the project's own `node_modules` (ignored by git).
fn link_node_modules(repo: &TestRepo, dir: &str) {
    let at = repo.path().join(dir).join("node_modules");
    std::os::unix::fs::symlink(tools_node_modules(), at).expect("symlink node_modules");
    repo.write(".gitignore", "node_modules\n");
}

// ---------------------------------------------------------------------------------------------
// (a) TypeScript with neither a formatter nor a linter configured

const LONG_TS: &str = "export function compute(alpha: number, beta: number, gamma: number, delta: number): number { return alpha + beta + gamma + delta; }\n";

#[test]
fn typescript_without_configuration_runs_neither_prettier_nor_eslint() {
    if !require_all(&["prettier", "eslint"]) {
        return;
    }
    // Installed (a dependency, on PATH and in node_modules), but configured nowhere.
    let repo = TestRepo::new()
        .file(
            "package.json",
            r#"{"name": "demo", "private": true, "type": "module", "devDependencies": {"eslint": "10.15.0", "prettier": "3.10.1", "typescript": "7.0.2"}}"#,
        )
        .file("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}\n")
        .file("src/app.ts", LONG_TS);
    link_node_modules(&repo, "");
    let repo = repo.commit();

    let entry = assert_detect(&repo, "src/app.ts", &[]);
    for name in ["prettier", "eslint"] {
        assert_not_used(&entry, name, &["no configuration", "a dependency alone"]);
    }

    // A newly written line prettier would rewrite passes: prettier does not run. With prettier
    // switched on (.patchgate.toml, not committed), the same patch blocks: it was findable.
    let bad = "\nexport const items = [1,2,3];\n";
    let new_line = patch("src/app.ts", LONG_TS, &format!("{LONG_TS}{bad}"));
    repo.write(".patchgate.toml", "[checkers.prettier]\nenabled = true\n");
    let report = refused(&repo, &new_line, "src/app.ts", "prettier");
    assert_subset(
        &check(&report, "src/app.ts", "prettier")["findings"],
        &json!([{"line": 1, "new": false}, {"line": 3, "new": true}]),
        "prettier switched on",
    );
    std::fs::remove_file(repo.path().join(".patchgate.toml")).expect("rm .patchgate.toml");
    let run = repo.apply(&new_line, &["--dry-run"]);
    run.assert_code(0);
    let report = run.json();
    assert_eq!(report["status"], "dry_run", "{report:#}");
    assert_eq!(
        checkers_on(&report, "src/app.ts"),
        ["references", "syntax"],
        "{report:#}"
    );

    // The rename of a parameter on the long line applies; no prettier or eslint report.
    let renamed = LONG_TS.replace("alpha", "first");
    let report = applied(&repo, "src/app.ts", LONG_TS, &renamed);
    assert_eq!(
        checkers_on(&report, "src/app.ts"),
        ["references", "syntax"],
        "{report:#}"
    );
}

// ---------------------------------------------------------------------------------------------
// (b) biome; (c) prettier + eslint: the same file, the same format cases

/// Line 5 is already unformatted (`call(aaa,bbb)` / `add(1,2)`); the rest is formatted.
fn js_app(legacy: &str) -> String {
    format!(
        "export function add(a, b) {{\n  return a + b;\n}}\n\nexport const legacy = {legacy};\n\nexport function other() {{\n  return 2;\n}}\n"
    )
}

const APP: &str = "src/app.js";
/// Writes a new, badly formatted line 8 (and keeps line 9 clean).
const BAD_NEW_LINE: (&str, &str) = ("  return 2;\n", "  const x = [1,2,3];\n  return x;\n");

fn biome_repo() -> TestRepo {
    TestRepo::new()
        .file("package.json", "{\"name\": \"demo\", \"private\": true}\n")
        // Spaces: biome's default is tabs, so a pass proves this configuration was read.
        .file(
            "biome.json",
            "{\"formatter\": {\"indentStyle\": \"space\", \"indentWidth\": 2}}\n",
        )
        .file(APP, js_app("add(aaa,bbb)"))
        .commit()
}

#[test]
fn biome_project_gates_new_formatting_and_new_lint_findings_only() {
    if !require_all(&["biome"]) {
        return;
    }
    let repo = biome_repo();
    let entry = assert_detect(
        &repo,
        APP,
        &[("biome-format", "biome.json"), ("biome-lint", "biome.json")],
    );
    for name in ["prettier", "eslint", "oxlint", "xo"] {
        assert_not_used(&entry, name, &["no configuration"]);
    }

    // A newly written unformatted line blocks; the old hunk on line 5 is reported as old.
    let report = refused(
        &repo,
        &patch(APP, BAD_NEW_LINE.0, BAD_NEW_LINE.1),
        APP,
        "biome-format",
    );
    assert_format_refusal(
        check(&report, APP, "biome-format"),
        &[(5, false), (8, true)],
        "  const x = [1, 2, 3];",
        "aaa, bbb",
    );
    assert_eq!(check(&report, APP, "biome-lint")["status"], "pass");

    // A `debugger;` (noDebugger: an error in biome's recommended rules) blocks.
    let report = refused(
        &repo,
        &patch(APP, "  return 2;\n", "  debugger;\n  return 2;\n"),
        APP,
        "biome-lint",
    );
    assert_one_new(check(&report, APP, "biome-lint"), 8, "noDebugger");
    assert_eq!(check(&report, APP, "biome-format")["status"], "pass");

    // Renaming an argument on the already unformatted line passes.
    let report = applied(&repo, APP, "add(aaa,bbb)", "add(ccc,bbb)");
    assert_eq!(
        checkers_on(&report, APP),
        ["biome-format", "biome-lint", "references", "syntax"]
    );
    assert_subset(
        &check(&report, APP, "biome-format")["findings"],
        &json!([{"line": 5, "new": false}]),
        "the old hunk",
    );
}

fn prettier_eslint_repo() -> TestRepo {
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"demo\", \"private\": true, \"type\": \"module\"}\n",
        )
        .file(
            "eslint.config.js",
            "import js from \"@eslint/js\";\n\nexport default [js.configs.recommended];\n",
        )
        .file(".prettierrc.json", "{}\n")
        .file(APP, js_app("add(1,2)"));
    link_node_modules(&repo, "");
    repo.commit()
}

#[test]
fn prettier_and_eslint_project_gates_new_formatting_and_new_lint_findings_only() {
    if !require_all(&["prettier", "eslint", "@eslint/js"]) {
        return;
    }
    let repo = prettier_eslint_repo();
    let entry = assert_detect(
        &repo,
        APP,
        &[
            ("prettier", ".prettierrc.json"),
            ("eslint", "eslint.config.js"),
        ],
    );
    for name in ["prettier", "eslint"] {
        // The project's own install, not PATH's.
        let detail = considered(&entry, name)["detail"].as_str().unwrap_or("");
        assert!(
            detail.ends_with(&format!("/node_modules/{name}")),
            "{entry:#}"
        );
    }
    for name in ["biome-format", "biome-lint", "oxlint", "xo"] {
        assert_not_used(&entry, name, &["no configuration"]);
    }

    let report = refused(
        &repo,
        &patch(APP, BAD_NEW_LINE.0, BAD_NEW_LINE.1),
        APP,
        "prettier",
    );
    assert_format_refusal(
        check(&report, APP, "prettier"),
        &[(5, false), (8, true)],
        "  const x = [1, 2, 3];",
        "add(1, 2)",
    );
    assert_eq!(check(&report, APP, "eslint")["status"], "pass");

    let report = refused(
        &repo,
        &patch(APP, "  return 2;\n", "  const unused = 1;\n  return 2;\n"),
        APP,
        "eslint",
    );
    assert_one_new(check(&report, APP, "eslint"), 8, "no-unused-vars");
    assert_eq!(check(&report, APP, "prettier")["status"], "pass");

    let report = applied(&repo, APP, "add(1,2)", "add(3,2)");
    assert_eq!(
        checkers_on(&report, APP),
        ["eslint", "prettier", "references", "syntax"]
    );
    assert_subset(
        &check(&report, APP, "prettier")["findings"],
        &json!([{"line": 5, "new": false}]),
        "the old hunk",
    );
}

// ---------------------------------------------------------------------------------------------
// (d) oxlint

#[test]
fn oxlint_project_blocks_a_new_finding_and_not_an_old_one() {
    if !require_all(&["oxlint"]) {
        return;
    }
    let repo = TestRepo::new()
        .file("package.json", "{\"name\": \"demo\", \"private\": true}\n")
        // Without it no-debugger is a warning; the configuration makes it an error.
        .file(".oxlintrc.json", "{\"rules\": {\"no-debugger\": \"error\"}}\n")
        .file(APP, "export function add(a, b) {\n  return a + b;\n}\n")
        .file(
            "src/legacy.js",
            "export function old() {\n  debugger;\n  return 1;\n}\n\nexport function other() {\n  return 2;\n}\n",
        )
        .commit();
    let entry = assert_detect(&repo, APP, &[("oxlint", ".oxlintrc.json")]);
    assert_not_used(&entry, "eslint", &["no configuration"]);

    let report = refused(
        &repo,
        &patch(APP, "  return a + b;\n", "  debugger;\n  return a + b;\n"),
        APP,
        "oxlint",
    );
    let c = check(&report, APP, "oxlint");
    assert_one_new(c, 2, "no-debugger");
    assert_eq!(findings(c)[0]["severity"], "error", "{c:#}");

    let report = applied(&repo, "src/legacy.js", "  return 2;", "  return 3;");
    assert_subset(
        &check(&report, "src/legacy.js", "oxlint")["findings"],
        &json!([{"line": 2, "rule": "eslint(no-debugger)", "new": false}]),
        "the old finding",
    );
}

// ---------------------------------------------------------------------------------------------
// (e) black; flake8

/// Line 5 is already unformatted for black and too long for flake8's 60.
const PY_APP: &str =
    "def add(a, b):\n    return a + b\n\n\nlegacy = add(1,2)\n\n\ndef other():\n    return 2\n";

#[test]
fn black_project_runs_black_not_ruff_format_and_gates_new_lines_only() {
    if !require_all(&["black", "ruff"]) {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[tool.black]\nline-length = 88\n",
        )
        .file("app.py", PY_APP)
        .commit();
    let entry = assert_detect(&repo, "app.py", &[("black", "[tool.black]")]);
    assert!(
        considered(&entry, "black")["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("pyproject.toml")),
        "{entry:#}"
    );
    assert_not_used(&entry, "ruff-format", &["[tool.ruff.format]", "ruff.toml"]);
    assert_not_used(&entry, "ruff", &["no configuration"]);
    assert_not_used(&entry, "flake8", &["no configuration"]);

    let report = refused(
        &repo,
        &patch(
            "app.py",
            "    return 2\n",
            "    x = [1,2,3]\n    return x\n",
        ),
        "app.py",
        "black",
    );
    assert_format_refusal(
        check(&report, "app.py", "black"),
        &[(5, false), (9, true)],
        "    x = [1, 2, 3]",
        "add(1, 2)",
    );
    assert_eq!(
        checkers_on(&report, "app.py"),
        ["black", "references", "syntax"]
    );

    let report = applied(&repo, "app.py", "add(1,2)", "add(3,2)");
    assert_eq!(
        checkers_on(&report, "app.py"),
        ["black", "references", "syntax"]
    );
}

/// Line 5 is 74 characters, over the project's 60.
const PY_LONG: &str = "def add(a, b):\n    return a + b\n\n\nlegacy = \"this existing line is long, well over the sixty character limit\"\n\n\ndef other():\n    return 2\n";

#[test]
fn flake8_project_blocks_a_new_long_line_and_not_a_rename_on_an_old_one() {
    if !require_all(&["flake8"]) {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        )
        .file(".flake8", "[flake8]\nmax-line-length = 60\n")
        .file("app.py", PY_LONG)
        .commit();
    let entry = assert_detect(&repo, "app.py", &[("flake8", ".flake8")]);
    assert_not_used(&entry, "black", &["[tool.black]"]);

    let report = refused(
        &repo,
        &patch(
            "app.py",
            "    return 2\n",
            "    return \"a newly written line that is much longer than sixty chars\"\n",
        ),
        "app.py",
        "flake8",
    );
    assert_subset(
        &check(&report, "app.py", "flake8")["findings"],
        &json!([
            {"line": 5, "rule": "E501", "message": "line too long (74 > 60 characters)", "new": false},
            {"line": 9, "rule": "E501", "message": "line too long (70 > 60 characters)", "new": true},
        ]),
        "flake8 findings",
    );

    // A rename on the long line that keeps its length: the same E501, on the line that replaced
    // the original one, was already there.
    let report = applied(&repo, "app.py", "legacy = ", "former = ");
    assert_subset(
        &check(&report, "app.py", "flake8")["findings"],
        &json!([{"line": 5, "rule": "E501", "message": "line too long (74 > 60 characters)", "new": false}]),
        "the old finding",
    );
}

// ---------------------------------------------------------------------------------------------
// xo

#[test]
fn xo_project_runs_xo_instead_of_eslint_and_prettier() {
    if !require_all(&["xo"]) {
        return;
    }
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"demo\", \"private\": true, \"type\": \"module\", \"xo\": {\"space\": true}}\n",
        )
        .file(APP, "export function add(a, b) {\n  return a + b;\n}\n")
        .commit();
    let entry = assert_detect(&repo, APP, &[("xo", "package.json \"xo\"")]);
    for name in ["eslint", "prettier"] {
        assert_not_used(
            &entry,
            name,
            &["the project uses xo", "package.json \"xo\""],
        );
    }

    // One patch only: xo takes seconds per file (the patched text and the original).
    let report = refused(
        &repo,
        &patch(APP, "  return a + b;\n", "  debugger;\n  return a + b;\n"),
        APP,
        "xo",
    );
    assert_one_new(check(&report, APP, "xo"), 2, "no-debugger");
    assert_eq!(
        checkers_on(&report, APP),
        ["references", "syntax", "xo"],
        "{report:#}"
    );
}
