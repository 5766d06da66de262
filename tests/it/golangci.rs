//! golangci-lint, live. It cannot be installed on the machines this project is built on (its only
//! registry package is an unusable 2020 binary), so its parser is proven on recorded output
//! (`src/checks/parse/go.rs`), and this test runs only where a real golangci-lint is on PATH.

use crate::harness::{TestRepo, on_path};

#[test]
fn golangci_lint_findings_where_it_is_installed() {
    let Some(_) = on_path("golangci-lint") else {
        eprintln!(
            "SKIPPED: golangci-lint is not installed (it cannot be installed here; its parser is tested on recorded output)"
        );
        return;
    };
    if on_path("go").is_none() {
        eprintln!("SKIPPED: go is not installed");
        return;
    }
    let repo = TestRepo::new()
        .file("go.mod", "module example.com/demo\n\ngo 1.21\n")
        .file(
            "main.go",
            "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
        )
        .commit();
    let run = repo.apply(
        "- file_path: main.go\n  old_string: \"fmt.Println(\\\"hi\\\")\"\n  new_string: \"fmt.Printf(\\\"%d\\\", \\\"hi\\\")\"\n",
        &["--checks", "go-lint"],
    );
    run.assert_code(1);
    let json = run.json();
    let check = &json["checks"][0];
    assert_eq!(check["checker"], "go-lint");
    assert_eq!(check["findings"][0]["line"], 6);
}
