//! A workspace member without configuration of its own, inside a configured root (a monorepo):
//! the root's configuration governs it, and its tools run from the member without erring (biome
//! and flake8 find their configuration from the working directory).

use serde_json::json;

use super::{
    applied, assert_detect, assert_one_new, checkers_on, considered, link_node_modules, refused,
};
use crate::checks::{check, patch, require_all};
use crate::harness::{TestRepo, assert_subset};

#[test]
fn a_biome_workspace_member_is_governed_by_the_root_configuration() {
    if !require_all(&["biome"]) {
        return;
    }
    let member = "packages/a/src/x.js";
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"mono\", \"private\": true, \"workspaces\": [\"packages/*\"]}\n",
        )
        .file(
            "biome.json",
            "{\"formatter\": {\"indentStyle\": \"space\", \"indentWidth\": 2}}\n",
        )
        .file(
            "packages/a/package.json",
            "{\"name\": \"a\", \"version\": \"1.0.0\"}\n",
        )
        .file(member, "export function add(a, b) {\n  return a + b;\n}\n")
        .commit();
    let entry = assert_detect(
        &repo,
        member,
        &[("biome-format", "biome.json"), ("biome-lint", "biome.json")],
    );
    assert_eq!(entry["project"]["rel_root"], "packages/a", "{entry:#}");
    for name in ["biome-format", "biome-lint"] {
        assert_eq!(
            considered(&entry, name)["evidence"],
            "biome.json at the repository root"
        );
    }

    // Bad formatting and a lint finding in the member block: biome ran there.
    let report = refused(
        &repo,
        &patch(member, "  return a + b;\n", "  return [a,b];\n"),
        member,
        "biome-format",
    );
    assert_subset(
        &check(&report, member, "biome-format")["findings"],
        &json!([{"line": 2, "new": true}]),
        "format findings",
    );
    let report = refused(
        &repo,
        &patch(
            member,
            "  return a + b;\n",
            "  debugger;\n  return a + b;\n",
        ),
        member,
        "biome-lint",
    );
    assert_one_new(check(&report, member, "biome-lint"), 2, "noDebugger");
    // A new function indented with spaces passes: the root's configuration (not biome's
    // default, tabs) applied, and neither run erred.
    let report = applied(
        &repo,
        member,
        "  return a + b;\n}\n",
        "  return a + b;\n}\n\nexport function sub(a, b) {\n  return a - b;\n}\n",
    );
    assert_eq!(
        checkers_on(&report, member),
        ["biome-format", "biome-lint", "references", "syntax"]
    );
}

#[test]
fn prettier_flake8_and_black_workspace_members_are_governed_by_the_root_configuration() {
    if !require_all(&["prettier", "black", "flake8"]) {
        return;
    }
    let (js, py) = ("packages/a/src/x.js", "packages/py/pkg/mod.py");
    let repo = TestRepo::new()
        .file(
            "package.json",
            "{\"name\": \"mono\", \"private\": true, \"workspaces\": [\"packages/*\"]}\n",
        )
        // None of the three is the tool's default.
        .file(
            ".prettierrc.json",
            "{\"semi\": false, \"singleQuote\": true}\n",
        )
        .file(
            "pyproject.toml",
            "[tool.black]\nskip-string-normalization = true\n",
        )
        .file(".flake8", "[flake8]\nmax-line-length = 60\n")
        .file(
            "packages/a/package.json",
            "{\"name\": \"a\", \"version\": \"1.0.0\"}\n",
        )
        .file(js, "export function add(a, b) {\n  return a + b\n}\n")
        .file(
            "packages/py/pyproject.toml",
            "[project]\nname = \"py\"\nversion = \"0.1.0\"\n",
        )
        .file(py, "def add(a, b):\n    return a + b\n");
    link_node_modules(&repo, "");
    let repo = repo.commit();

    let entry = assert_detect(&repo, js, &[("prettier", ".prettierrc.json")]);
    assert_eq!(entry["project"]["rel_root"], "packages/a", "{entry:#}");
    let entry = assert_detect(
        &repo,
        py,
        &[("black", "[tool.black]"), ("flake8", ".flake8")],
    );
    assert_eq!(entry["project"]["rel_root"], "packages/py", "{entry:#}");
    assert_eq!(
        considered(&entry, "flake8")["evidence"],
        ".flake8 at the repository root"
    );

    // prettier with the root's `semi: false`: a semicolon is new bad formatting, a line in the
    // root's style is fine.
    let report = refused(
        &repo,
        &patch(js, "  return a + b\n", "  return a + b;\n"),
        js,
        "prettier",
    );
    assert_subset(
        &check(&report, js, "prettier")["findings"],
        &json!([{"line": 2, "new": true}]),
        "prettier findings",
    );
    applied(
        &repo,
        js,
        "  return a + b\n}\n",
        "  return a + b\n}\n\nexport const name = 'demo'\n",
    );

    // flake8 with the root's 60 columns (its default is 79): a new 73-character line blocks.
    let long = "NAME = 'a new line that is much longer than the sixty characters allowed'\n";
    let report = refused(
        &repo,
        &patch(
            py,
            "    return a + b\n",
            &format!("    return a + b\n\n\n{long}"),
        ),
        py,
        "flake8",
    );
    assert_one_new(check(&report, py, "flake8"), 5, "E501");
    assert_eq!(check(&report, py, "black")["status"], "pass", "{report:#}");
    // black with the root's skip-string-normalization: single quotes stay.
    let report = applied(
        &repo,
        py,
        "    return a + b\n",
        "    return a + b\n\n\nNAME = 'demo'\n",
    );
    assert_eq!(
        checkers_on(&report, py),
        ["black", "flake8", "references", "syntax"]
    );
}
