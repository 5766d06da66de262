use super::*;

/// The new errors of an edit that replaces `from` with `to` in `before`.
fn edit(rel: &str, before: &str, from: &str, to: &str) -> Vec<SyntaxError> {
    assert!(before.contains(from), "{from:?} not in the text");
    let after = before.replacen(from, to, 1);
    new_errors(rel, Some(before), &after).expect("covered")
}

fn first(errors: &[SyntaxError]) -> (usize, &str) {
    let e = errors.first().expect("an error");
    (e.line, e.message.as_str())
}

const RUST: &str = "use std::fmt;\n\nfn a(x: i32) -> i32 {\n    let y = x + 1;\n    y * 2\n}\n\nfn b() {\n    println!(\"{}\", a(1));\n}\n";
const PY: &str = "import os\n\n\ndef a(x):\n    if x:\n        return 1\n    return 2\n\n\ndef b():\n    return a(os.sep)\n";
const JS: &str = "import x from 'x';\n\nfunction a(v) {\n  if (v) {\n    return f(v, 1);\n  }\n  return 2;\n}\n\nexport const b = () => a(3);\n";
const GO: &str = "package a\n\nimport \"fmt\"\n\nfunc A(x int) int {\n\tif x > 0 {\n\t\treturn f(x, 1)\n\t}\n\treturn 2\n}\n\nfunc B() {\n\tfmt.Println(A(1))\n}\n";

#[test]
fn a_clean_edit_has_no_errors() {
    assert_eq!(edit("a.rs", RUST, "x + 1", "x + 2"), vec![]);
    assert_eq!(edit("a.py", PY, "return 2", "return 3"), vec![]);
    assert_eq!(edit("a.js", JS, "a(3)", "a(4)"), vec![]);
    assert_eq!(edit("a.ts", JS, "a(3)", "a(4)"), vec![]);
    assert_eq!(edit("a.go", GO, "A(1)", "A(2)"), vec![]);
    assert_eq!(new_errors("a.rs", None, RUST), Some(vec![]));
}

#[test]
fn rust_lost_brace_and_parenthesis() {
    // The root becomes an ERROR: the position comes from the unclosed brace.
    let errors = edit("a.rs", RUST, "    y * 2\n}\n", "    y * 2\n");
    let e = &errors[0];
    assert_eq!((e.line, e.column), (3, 21));
    assert_eq!(e.message, "`{` on line 3 is never closed");
    assert_eq!(e.snippet, "fn a(x: i32) -> i32 {");
    assert!(e.near);
    let errors = edit("a.rs", RUST, "a(1))", "a(1)");
    assert_eq!(first(&errors), (9, "missing `)`"));
    assert!(!errors[0].near);
    // Without the `;` the next line continues the expression.
    let errors = edit("a.rs", RUST, "let y = x + 1;", "let y = x + 1");
    assert_eq!(first(&errors), (5, "missing `;`"));
    assert_eq!(
        (errors[1].line, errors[1].message.as_str()),
        (4, "unexpected `1`")
    );
}

#[test]
fn javascript_typescript_and_go_breakage_is_found() {
    let errors = edit("a.js", JS, "f(v, 1)", "f(v, 1");
    assert_eq!(first(&errors), (5, "missing `)`"));
    let errors = edit("a.ts", JS, "  }\n  return 2;", "  return 2;");
    let e = &errors[0];
    assert!(e.message.starts_with("missing `}` at end of file"), "{e:?}");
    assert!(e.message.contains("the patch changed line 6"), "{e:?}");
    assert!(e.near);
    let errors = edit("a.go", GO, "f(x, 1)", "f(x, 1");
    assert_eq!(first(&errors), (7, "missing `)`"));
    // The parser takes `func B` for a function literal in A's body; then A is never closed.
    let errors = edit("a.go", GO, "\t}\n\treturn 2", "\treturn 2");
    assert_eq!(first(&errors), (11, "unexpected `B`"));
    assert!(
        errors[1].message.starts_with("missing `}` at end of file"),
        "{errors:?}"
    );
}

#[test]
fn python_syntax_and_indentation() {
    let errors = edit("a.py", PY, "return a(os.sep)", "return a(os.sep");
    assert_eq!(first(&errors), (11, "`(` on line 11 is never closed"));
    let errors = edit("a.py", PY, "        return 1", "    return 1");
    assert_eq!(
        first(&errors),
        (
            6,
            "expected an indented block after 'if' statement on line 5"
        )
    );
    let errors = edit("a.py", PY, "    return 2", "      return 2");
    assert_eq!(
        first(&errors),
        (7, "unindent does not match any outer indentation level")
    );
    let errors = edit("a.py", PY, "import os\n", "import os\n  import sys\n");
    assert_eq!(first(&errors), (2, "unexpected indent"));
    assert_eq!(errors[0].column, 3);
}

#[test]
fn an_error_already_elsewhere_accepts_an_unrelated_edit() {
    let broken_rs = RUST.replace("println!(\"{}\", a(1));", "println!(\"{}\", a(1);");
    assert_eq!(edit("a.rs", &broken_rs, "x + 1", "x + 10"), vec![]);
    // Lines shift above the old error: it is still the same error.
    assert_eq!(
        edit(
            "a.rs",
            &broken_rs,
            "use std::fmt;\n",
            "use std::fmt;\nuse std::io;\n\n"
        ),
        vec![]
    );
    // But a second error elsewhere is new, and so is a root that lost its structure.
    let errors = edit("a.rs", &broken_rs, "let y = x + 1;", "let y = (x + 1;");
    assert_eq!(errors[0].line, 4, "{errors:?}");
    assert!(!edit("a.rs", &broken_rs, "    y * 2\n}\n", "    y * 2\n").is_empty());

    let broken_py = PY.replace("        return 1", "    return 1");
    assert_eq!(
        edit(
            "a.py",
            &broken_py,
            "return a(os.sep)",
            "return a(os.pathsep)"
        ),
        vec![]
    );
    let errors = edit(
        "a.py",
        &broken_py,
        "return a(os.sep)",
        "return a(os.sep)\n      x = 1",
    );
    assert_eq!(first(&errors), (12, "unexpected indent"));

    let broken_js = JS.replace("return 2;", "return 2 +;");
    assert_eq!(edit("a.js", &broken_js, "a(3)", "a(5)"), vec![]);
    let broken_go = GO.replace("return 2", "return 2 +");
    assert_eq!(edit("a.go", &broken_go, "A(1)", "A(7)"), vec![]);
}

#[test]
fn editing_inside_an_already_broken_construct_is_not_new() {
    let broken = RUST.replace("let y = x + 1;", "let y = x + ;");
    assert_eq!(
        edit("a.rs", &broken, "let y = x + ;", "let z = x + ;"),
        vec![]
    );
    assert_eq!(edit("a.rs", &broken, "    y * 2\n", "    y * 3\n"), vec![]);
    // A second error in the same function makes more errors than before: new.
    assert!(!edit("a.rs", &broken, "    y * 2\n", "    y * (2\n").is_empty());
}

#[test]
fn typescript_variance_annotations_that_were_there_do_not_block() {
    let ts = "export interface Box<in T, out U> {\n  put(t: T): void;\n  get(): U;\n}\n\nexport const n: number = 1;\n";
    let errors = new_errors("a.ts", None, ts).expect("covered");
    assert!(
        !errors.is_empty(),
        "the grammar still rejects them, else this test is moot"
    );
    assert_eq!(edit("a.ts", ts, "n: number = 1", "n: number = 2"), vec![]);
    assert_eq!(
        edit(
            "a.ts",
            ts,
            "  get(): U;\n",
            "  get(): U;\n  size(): number;\n"
        ),
        vec![]
    );
}

#[test]
fn tsx_and_ts_follow_the_extension() {
    let tsx = "export const A = (p: { n: number }) => <div className=\"a\">{p.n}</div>;\n";
    assert_eq!(new_errors("a.tsx", None, tsx), Some(vec![]));
    assert!(!new_errors("a.ts", None, tsx).expect("covered").is_empty());
    let cast = "const b = <number>a;\n";
    assert_eq!(new_errors("a.ts", None, cast), Some(vec![]));
    assert_eq!(
        new_errors("a.jsx", None, "const a = <b>{c}</b>;\n"),
        Some(vec![])
    );
}

#[test]
fn documents_through_the_same_entry_point() {
    let errors =
        new_errors("a.json", Some("{\"a\": 1}\n"), "{\"a\": 1,\n\"b\"}\n").expect("covered");
    assert_eq!(errors[0].line, 2);
    assert_eq!(
        new_errors("a.json", Some("{\"a\": 1,}"), "{\"a\": 2,}"),
        Some(vec![])
    );
    let errors = new_errors("a.toml", Some("a = 1\n"), "a = 1\nb = [\n").expect("covered");
    assert!(errors[0].line >= 2, "{errors:?}");
    let errors = new_errors("a.yml", Some("a: 1\n"), "a: 1\nb: [\n").expect("covered");
    assert!(errors[0].line >= 2, "{errors:?}");
}

#[test]
fn empty_crlf_and_uncovered_files() {
    for rel in [
        "a.py", "a.js", "a.ts", "a.tsx", "a.rs", "a.go", "a.json", "a.toml", "a.yaml",
    ] {
        assert_eq!(new_errors(rel, None, ""), Some(vec![]), "{rel}");
        assert_eq!(new_errors(rel, Some("\n"), "\n\n"), Some(vec![]), "{rel}");
    }
    let crlf = |s: &str| s.replace('\n', "\r\n");
    assert_eq!(edit("a.py", &crlf(PY), "return 2", "return 3"), vec![]);
    assert_eq!(edit("a.rs", &crlf(RUST), "x + 1", "x + 2"), vec![]);
    assert_eq!(
        new_errors("a.yaml", None, "a: 1\r\nb:\r\n  - 2\r\n"),
        Some(vec![])
    );
    let errors = edit("a.py", &crlf(PY), "        return 1", "    return 1");
    assert_eq!(errors[0].line, 6);
    assert_eq!(errors[0].snippet, "return 1");
    assert_eq!(new_errors("run.sh", None, "if; then"), None);
    assert_eq!(new_errors("README.md", Some("a"), "b"), None);
}

#[test]
fn a_created_file_reports_every_error() {
    let errors = new_errors("new.py", None, "def f(:\n    pass\n").expect("covered");
    assert_eq!(errors[0].line, 1);
    assert!(errors[0].message.contains(')'), "{errors:?}");
}

#[test]
fn the_line_mapping_follows_the_diff() {
    let map = LineMapping::new("a\nb\nc\nd\n", "a\nx\nc\nnew\nd\n");
    assert_eq!(map.old_line(1), Some(1));
    assert_eq!(map.old_line(2), None);
    assert_eq!(map.old_line(3), Some(3));
    assert_eq!(map.old_line(5), Some(4));
    assert_eq!(
        map.old_range((2, 2)),
        (2, 2),
        "a replaced line maps to what it replaced"
    );
    assert_eq!(
        map.old_range((4, 4)),
        (3, 4),
        "an inserted line maps to its neighbours"
    );
    assert_eq!(map.old_range((1, 5)), (1, 4));
}
