//! The evidence evaluator (`project::evidence`) on real directory trees, with the checkers' own
//! declarations from the table.

use std::path::PathBuf;
use std::time::Instant;

use super::eslint::{CONFIGS as ESLINT_CONFIGS, is_eslint_legacy};
use super::{
    biome_format::SIGNALS as BIOME_FORMAT, biome_lint::SIGNALS as BIOME_LINT,
    black::SIGNALS as BLACK, eslint::SIGNALS as ESLINT, flake8::SIGNALS as FLAKE8,
    oxlint::SIGNALS as OXLINT, prettier::SIGNALS as PRETTIER, ruff::SIGNALS as RUFF,
    ruff_format::SIGNALS as RUFF_FORMAT, xo::SIGNALS as XO,
};

const BIOME_FORMATTER_ENABLED: &str = "/formatter/enabled";
const BIOME_LINTER_ENABLED: &str = "/linter/enabled";

/// Every checker's declaration (from the table) and mypy's.
const ALL: &[&Signals] = &[
    &PRETTIER,
    &ESLINT,
    &BIOME_FORMAT,
    &BIOME_LINT,
    &OXLINT,
    &XO,
    &RUFF,
    &RUFF_FORMAT,
    &BLACK,
    &FLAKE8,
    &MYPY,
];
use crate::project::evidence::known::*;
use crate::project::evidence::{Evidence, Signals, Strength, Use};

struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("repo");
        std::fs::create_dir(&root).expect("mkdir");
        Tree { _tmp: tmp, root }
    }

    fn write(&self, rel: &str, text: &str) -> &Tree {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
        self
    }

    /// A fresh evaluator: the cache would hide files written after the first query.
    fn ev(&self) -> Evidence {
        Evidence::new(&self.root)
    }
}

/// (evidence, strength, config_dir, args) of a `Used`, or the reason it was not.
fn used(u: Use) -> (String, Strength, PathBuf, Vec<String>) {
    match u {
        Use::Used {
            evidence,
            strength,
            config_dir,
            args,
            ..
        } => (evidence, strength, config_dir, args),
        Use::NotUsed { why } => panic!("expected used, got: {why}"),
    }
}

fn why(u: Use) -> String {
    match u {
        Use::NotUsed { why } => why,
        Use::Used { evidence, .. } => panic!("expected not used, got: {evidence}"),
    }
}

#[test]
fn config_file_upward_nearest_wins_never_above_the_root() {
    let t = Tree::new();
    // Above the repository root: must not count.
    std::fs::write(t.root.parent().expect("parent").join(".prettierrc"), "{}").expect("write");
    t.write("a/b/x.js", "");
    why(t.ev().uses("a/b/x.js", &PRETTIER));

    t.write(".prettierrc", "{}");
    let (ev, strength, dir, _) = used(t.ev().uses("a/b/x.js", &PRETTIER));
    assert_eq!(ev, ".prettierrc at the repository root");
    assert_eq!(strength, Strength::Strong);
    assert_eq!(dir, t.root);

    t.write("a/prettier.config.mjs", "export default {}");
    let (ev, _, dir, _) = used(t.ev().uses("a/b/x.js", &PRETTIER));
    assert_eq!(ev, "prettier.config.mjs at a/");
    assert_eq!(dir, t.root.join("a"));
    // A sibling is still governed by the root's.
    let (ev, _, _, _) = used(t.ev().uses("c/y.js", &PRETTIER));
    assert_eq!(ev, ".prettierrc at the repository root");
}

#[test]
fn a_workspace_member_is_governed_by_its_root() {
    let t = Tree::new();
    t.write("biome.json", "{}")
        .write("package.json", r#"{"workspaces": ["packages/*"]}"#)
        .write("packages/a/package.json", r#"{"name": "a"}"#);
    let (ev, _, dir, _) = used(t.ev().uses("packages/a/src/x.ts", &BIOME_FORMAT));
    assert_eq!(ev, "biome.json at the repository root");
    assert_eq!(dir, t.root);
    assert!(!dir.to_string_lossy().ends_with('/'), "{}", dir.display());
}

#[test]
fn package_json_keys() {
    let t = Tree::new();
    t.write("package.json", r#"{"prettier": {"semi": false}}"#)
        .write(
            "ky/package.json",
            r#"{"xo": {"rules": {}}, "eslintConfigX": 1}"#,
        );
    let (ev, strength, _, _) = used(t.ev().uses("src/a.ts", &PRETTIER));
    assert_eq!(ev, "package.json \"prettier\" at the repository root");
    assert_eq!(strength, Strength::Strong);
    let (ev, _, dir, _) = used(t.ev().uses("ky/source/a.ts", &XO));
    assert_eq!(ev, "package.json \"xo\" at ky/");
    assert_eq!(dir, t.root.join("ky"));
    why(t.ev().uses("ky/source/a.ts", &ESLINT));
}

#[test]
fn script_words_are_commands_not_substrings() {
    let t = Tree::new();
    t.write(
        "package.json",
        r#"{"scripts": {"test": "xo && ava", "fmt": "npx prettier --write .",
            "lint": "eslint-config-foo --version"},
            "devDependencies": {"eslint-config-foo": "1"}}"#,
    )
    .write(
        "packages/a/package.json",
        r#"{"scripts": {"build": "tsc"}}"#,
    );
    let ev = t.ev();
    let (e, strength, _, _) = used(ev.uses("index.js", &XO));
    assert_eq!(e, "package.json scripts.test runs `xo`");
    assert_eq!(strength, Strength::Medium);
    let (e, _, dir, _) = used(ev.uses("packages/a/src/x.js", &PRETTIER));
    assert_eq!(e, "package.json scripts.fmt runs `prettier`");
    assert_eq!(
        dir, t.root,
        "a workspace root's scripts count for its members"
    );
    let w = why(ev.uses("index.js", &ESLINT));
    assert!(
        w.contains("a dependency alone (package.json devDependencies)"),
        "{w}"
    );
}

#[test]
fn lint_staged_in_package_json_with_brace_globs() {
    let t = Tree::new();
    t.write(
        "package.json",
        r#"{"lint-staged": {"*.{js,ts}": "eslint --fix", "*.md": ["prettier --write"]}}"#,
    );
    let ev = t.ev();
    let (e, strength, _, _) = used(ev.uses("src/deep/x.ts", &ESLINT));
    assert_eq!(e, "lint-staged `*.{js,ts}` in package.json runs `eslint`");
    assert_eq!(strength, Strength::Medium);
    let w = why(ev.uses("src/x.ts", &PRETTIER));
    assert!(
        w.contains("lint-staged (package.json) runs it only on `*.md`"),
        "{w}"
    );
    used(ev.uses("docs/readme.md", &PRETTIER));
}

#[test]
fn lintstagedrc_json_nearest_configuration_only() {
    let t = Tree::new();
    t.write(
        "package.json",
        r#"{"lint-staged": {"*.ts": "prettier --write"}}"#,
    )
    .write(
        "web/.lintstagedrc.json",
        r#"{"src/**/*.{ts,tsx}": ["biome format --write"], "*.css": "stylelint"}"#,
    );
    let ev = t.ev();
    let (e, _, dir, _) = used(ev.uses("web/src/a/b.tsx", &BIOME_FORMAT));
    assert_eq!(
        e,
        "lint-staged `src/**/*.{ts,tsx}` in web/.lintstagedrc.json runs `biome format`"
    );
    assert_eq!(dir, t.root.join("web"));
    why(ev.uses("web/test/b.ts", &BIOME_FORMAT));
    // The root's configuration does not govern web/ files: lint-staged takes the deepest one.
    why(ev.uses("web/src/a.ts", &PRETTIER));
    used(ev.uses("api/a.ts", &PRETTIER));
}

#[test]
fn lint_staged_commands_that_call_package_scripts() {
    let t = Tree::new();
    t.write(
        "web/package.json",
        r#"{"scripts": {"lint:fix": "eslint --fix", "fmt": "pnpm run --silent fmt:md",
                        "fmt:md": "prettier --write", "a": "npm run b", "b": "npm run a"},
            "lint-staged": {"*.ts": "npm run lint:fix", "*.md": "yarn fmt", "*.css": "npm run a"}}"#,
    );
    let ev = t.ev();
    let (e, _, dir, _) = used(ev.uses("web/src/x.ts", &ESLINT));
    assert_eq!(
        e,
        "lint-staged `*.ts` in web/package.json runs scripts.lint:fix → `eslint`"
    );
    assert_eq!(dir, t.root.join("web"));
    let cands = [&PRETTIER, &ESLINT, &BIOME_FORMAT];
    assert_eq!(ev.owner("web/docs/a.md", &cands), Some(0));
    assert_eq!(ev.owner("web/src/x.ts", &cands), Some(1));
    // A cycle of scripts ends.
    assert_eq!(ev.owner("web/a.css", &cands), None);
}

#[test]
fn lint_staged_js_configuration_is_scanned() {
    let t = Tree::new();
    t.write(
        "lint-staged.config.mjs",
        "export default {\n  '*.py': (f) => `ruff format ${f.join(' ')}`,\n};\n",
    );
    let (e, _, _, _) = used(t.ev().uses("pkg/a.py", &RUFF_FORMAT));
    assert_eq!(
        e,
        "lint-staged `*.py` in lint-staged.config.mjs runs `ruff format`"
    );
}

const PRE_COMMIT: &str = r#"
repos:
  - repo: https://github.com/PyCQA/flake8
    rev: 7.0.0
    hooks:
      - id: flake8
        args: [--max-line-length=88, "--extend-ignore=E203"]
        files: ^src/
  - repo: https://github.com/psf/black-pre-commit-mirror
    rev: 24.1.0
    hooks:
      - id: black
        types: [python]
  - repo: local
    hooks:
      - id: typecheck
        name: typecheck
        entry: uv run mypy --strict
        language: system
        types_or: [python, pyi]
"#;

#[test]
fn pre_commit_hooks_args_files_and_types() {
    let t = Tree::new();
    t.write(".pre-commit-config.yaml", PRE_COMMIT);
    let ev = t.ev();
    let (e, strength, dir, args) = used(ev.uses("src/pkg/a.py", &FLAKE8));
    assert_eq!(e, ".pre-commit-config.yaml hook `flake8`");
    assert_eq!(strength, Strength::Medium);
    assert_eq!(dir, t.root);
    assert_eq!(args, ["--max-line-length=88", "--extend-ignore=E203"]);
    let w = why(ev.uses("tests/a.py", &FLAKE8));
    assert!(
        w.contains("the pre-commit hook `flake8` does not cover this file (files: ^src/)"),
        "{w}"
    );
    used(ev.uses("tests/a.py", &BLACK));
    why(ev.uses("stubs/a.pyi", &BLACK));
    let (e, _, _, args) = used(ev.uses("stubs/a.pyi", &MYPY));
    assert_eq!(
        e,
        ".pre-commit-config.yaml hook `typecheck` (entry runs `mypy`)"
    );
    assert!(args.is_empty());
}

#[test]
fn pyproject_tables_nested_and_implied() {
    let t = Tree::new();
    t.write("pyproject.toml", "[tool.ruff]\nline-length = 100\n");
    used(t.ev().uses("a.py", &RUFF));
    let w = why(t.ev().uses("a.py", &RUFF_FORMAT));
    assert!(w.contains("pyproject.toml [tool.ruff.format]"), "{w}");

    t.write(
        "py/pyproject.toml",
        "[tool.ruff.format]\nquote-style = \"single\"\n",
    );
    let (e, _, dir, _) = used(t.ev().uses("py/pkg/a.py", &RUFF_FORMAT));
    assert_eq!(e, "pyproject.toml [tool.ruff.format] at py/");
    assert_eq!(dir, t.root.join("py"));

    t.write("lib/ruff.toml", "[format]\nindent-style = \"tab\"\n");
    let (e, _, _, _) = used(t.ev().uses("lib/a.py", &RUFF_FORMAT));
    assert_eq!(e, "ruff.toml [format] at lib/");
    // ruff.toml beats the pyproject in the same walk because it is nearer.
    let (e, _, _, _) = used(t.ev().uses("lib/a.py", &RUFF));
    assert_eq!(e, "ruff.toml at lib/");
}

#[test]
fn ini_sections() {
    let t = Tree::new();
    t.write(
        "setup.cfg",
        "[metadata]\nname = x\n\n[flake8]\nmax-line-length = 88\n",
    )
    .write("svc/tox.ini", "[tox]\nenvlist = py3\n[mypy]\n");
    let (e, _, _, _) = used(t.ev().uses("svc/a.py", &FLAKE8));
    assert_eq!(e, "setup.cfg [flake8] at the repository root");
    why(t.ev().uses("a.py", &MYPY));
    t.write("setup.cfg", "[mypy]\nstrict = true\n");
    let (e, _, _, _) = used(t.ev().uses("a.py", &MYPY));
    assert_eq!(e, "setup.cfg [mypy] at the repository root");
}

#[test]
fn a_dependency_alone_is_not_evidence() {
    let t = Tree::new();
    t.write("package.json", r#"{"devDependencies": {"prettier": "^3"}}"#)
        .write(
            "py/pyproject.toml",
            "[dependency-groups]\ndev = [\"ruff>=0.5\"]\n",
        )
        .write("py/requirements-dev.txt", "black==24.1\n");
    let w = why(t.ev().uses("src/a.ts", &PRETTIER));
    assert_eq!(
        w,
        "prettier: no configuration (.prettierrc{,.json,.yaml,.yml,.json5,.toml,.js,.mjs,.cjs,.ts,\
         .mts,.cts}, prettier.config.{js,mjs,cjs,ts,mts,cts}, package.json \"prettier\"), no \
         script, lint-staged entry or pre-commit hook runs it; a dependency alone (package.json \
         devDependencies) is not evidence"
    );
    let w = why(t.ev().uses("py/a.py", &RUFF_FORMAT));
    assert!(
        w.contains("a dependency alone (pyproject.toml [dependency-groups] at py/)"),
        "{w}"
    );
    let w = why(t.ev().uses("py/a.py", &BLACK));
    assert!(
        w.contains("a dependency alone (requirements-dev.txt at py/)"),
        "{w}"
    );
    let w = why(t.ev().uses("py/a.py", &FLAKE8));
    assert!(w.ends_with("; not a dependency either"), "{w}");
}

#[test]
fn owner_follows_the_lint_staged_globs() {
    // zod: biome formats TypeScript, prettier only markdown.
    let t = Tree::new();
    t.write("biome.jsonc", "{}").write(
        "package.json",
        r#"{"devDependencies": {"prettier": "^3", "@biomejs/biome": "^2"},
            "scripts": {"fmt:md": "prettier --write '**/*.md'"},
            "lint-staged": {"packages/*/src/**/*.ts": ["biome format --write", "biome lint"],
                            "packages/*/**/*.md": "prettier --ignore-unknown --write",
                            "*.md": "prettier --write"}}"#,
    );
    let ev = t.ev();
    let cands = [&PRETTIER, &BIOME_FORMAT];
    assert_eq!(ev.owner("packages/zod/src/v4/x.ts", &cands), Some(1));
    assert_eq!(ev.owner("packages/zod/README.md", &cands), Some(0));
    assert_eq!(ev.owner("README.md", &cands), Some(0));
    assert_eq!(ev.owner("packages/zod/tests/x.ts", &cands), None);
    assert_eq!(ev.owner("data.json", &cands), None);
    // Both have evidence for a .ts file (prettier through a script); the owner settles it.
    used(ev.uses("src/x.ts", &PRETTIER));
    used(ev.uses("src/x.ts", &BIOME_FORMAT));

    t.write(
        "package.json",
        r#"{"lint-staged": {"*": "prettier --ignore-unknown --write", "*.ts": "biome format"}}"#,
    );
    assert_eq!(
        t.ev().owner("src/x.ts", &cands),
        None,
        "both run on .ts files"
    );

    let bare = Tree::new();
    bare.write("biome.json", "{}").write(".prettierrc", "{}");
    assert_eq!(bare.ev().owner("x.ts", &cands), None, "no globs decide");
}

#[test]
fn owner_by_pre_commit_hooks() {
    let t = Tree::new();
    t.write(
        ".pre-commit-config.yaml",
        "repos:\n- repo: https://github.com/astral-sh/ruff-pre-commit\n  rev: v0.5.0\n  hooks:\n  - id: ruff-format\n",
    );
    assert_eq!(t.ev().owner("a.py", &[&BLACK, &RUFF_FORMAT]), Some(1));
}

#[test]
fn malformed_files_count_as_absent_and_are_named() {
    let t = Tree::new();
    t.write("package.json", "{\"scripts\": ")
        .write("pyproject.toml", "[tool.ruff\n")
        .write(".pre-commit-config.yaml", "repos: [\n  - id: x\n")
        .write(".lintstagedrc", "{{{");
    let ev = t.ev();
    for sig in ALL {
        let _ = ev.uses("src/a.ts", sig);
        let _ = ev.uses("src/a.py", sig);
        let _ = ev.owner("src/a.ts", &[sig, &PRETTIER]);
    }
    let w = why(ev.uses("a.ts", &PRETTIER));
    assert!(
        w.contains("package.json could not be read and counts as absent (EOF"),
        "{w}"
    );
    assert!(
        w.contains(".pre-commit-config.yaml could not be parsed and counts as absent"),
        "{w}"
    );
    let w = why(ev.uses("a.py", &RUFF));
    assert!(w.contains("pyproject.toml could not be read"), "{w}");
    // Other evidence still counts.
    t.write("biome.json", "{}");
    used(t.ev().uses("a.ts", &BIOME_LINT));
}

#[test]
fn biome_switches_and_eslint_config_kind() {
    let t = Tree::new();
    t.write(
        "biome.jsonc",
        "{\n  // formatting is prettier's job here\n  \"formatter\": { \"enabled\": false, },\n}\n",
    )
    .write("eslint.config.mjs", "export default []")
    .write("legacy/.eslintrc.yml", "root: true\n");
    let ev = t.ev();
    let file = match ev.uses("src/a.ts", &BIOME_FORMAT) {
        Use::Used { file, .. } => file,
        Use::NotUsed { why } => panic!("{why}"),
    };
    assert_eq!(ev.json_flag(&file, BIOME_FORMATTER_ENABLED), Some(false));
    assert_eq!(ev.json_flag(&file, BIOME_LINTER_ENABLED), None);
    assert_eq!(ev.json_flag(&t.root.join("nope.json"), "/a"), None);

    let flat = ev.find_config("src/a.js", ESLINT_CONFIGS).expect("flat");
    assert!(!is_eslint_legacy(&flat));
    let legacy = ev
        .find_config("legacy/lib/a.js", ESLINT_CONFIGS)
        .expect("legacy");
    assert_eq!(legacy, t.root.join("legacy/.eslintrc.yml"));
    assert!(is_eslint_legacy(&legacy));
}

#[test]
fn paths_outside_the_repository_are_refused() {
    let t = Tree::new();
    t.write(".prettierrc", "{}");
    let ev = t.ev();
    assert!(why(ev.uses("../x.js", &PRETTIER)).contains("not a path inside the repository"));
    why(ev.uses("/etc/x.js", &PRETTIER));
    why(ev.uses("", &PRETTIER));
    used(ev.uses("./src/./x.js", &PRETTIER));
    assert_eq!(ev.owner("../x.js", &[&PRETTIER]), None);
}

#[test]
fn unnamed_and_empty_declarations() {
    let t = Tree::new();
    t.write("package.json", r#"{"scripts": {"a": "b"}}"#);
    assert_eq!(why(t.ev().uses("a.js", &Signals::NONE)), "no configuration");
}

#[test]
fn every_known_declaration_is_well_formed() {
    for sig in ALL {
        assert!(!sig.name.is_empty());
        let strong = !sig.config_files.is_empty()
            || !sig.package_json_keys.is_empty()
            || !sig.pyproject_tables.is_empty()
            || !sig.toml_tables.is_empty();
        assert!(strong, "{}: no strong evidence declared", sig.name);
        assert!(!sig.commands.is_empty(), "{}", sig.name);
        for c in sig.commands {
            assert_eq!(
                crate::project::evidence::command::tokenize(c).join(" "),
                *c,
                "{}: {c}",
                sig.name
            );
        }
    }
}

#[test]
fn evidence_is_shared_across_threads_and_fast() {
    fn sync<T: Sync + Send>() {}
    sync::<Evidence>();

    let t = Tree::new();
    t.write(
        "package.json",
        r#"{"workspaces": ["packages/*"], "scripts": {"lint": "eslint ."},
              "lint-staged": {"*.{ts,md}": "prettier --write"}}"#,
    )
    .write(".pre-commit-config.yaml", PRE_COMMIT)
    .write("pyproject.toml", "[tool.ruff]\n");
    let mut files = Vec::new();
    for p in 0..10 {
        t.write(&format!("packages/p{p}/package.json"), "{}");
        for f in 0..20 {
            files.push(format!("packages/p{p}/src/deep/f{f}.ts"));
        }
    }
    let ev = t.ev();
    let all_uses = |files: &[String]| -> Vec<bool> {
        let per_file = files
            .iter()
            .map(|f| ALL.iter().map(|sig| ev.uses(f, sig).is_used()));
        per_file.flatten().collect()
    };

    // Cold, on one thread: every read happens here, exactly once.
    let start = Instant::now();
    let first = all_uses(&files);
    let took = start.elapsed();
    // prettier (lint-staged), eslint (script), ruff (pyproject) per file.
    assert_eq!(first.iter().filter(|u| **u).count(), 3 * files.len());
    // Each directory listed once (root, packages, 10 × 3 below it) and each file present read
    // once (11 package.json, the pre-commit config, pyproject.toml): 32 + 13.
    assert_eq!(ev.reads(), 45);
    // A few ms in an optimized build; the bound leaves room for a loaded machine.
    if !cfg!(debug_assertions) {
        assert!(
            took.as_millis() < 50,
            "{} checkers × {} files took {took:?}",
            ALL.len(),
            files.len()
        );
    }

    // Warm, from several threads at once: the same answers, nothing read again.
    let again: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(50)
            .map(|chunk| s.spawn(move || all_uses(chunk)))
            .collect();
        let joined = handles.into_iter().map(|h| h.join().expect("thread"));
        joined.flatten().collect()
    });
    assert_eq!(again, first);
    assert_eq!(ev.reads(), 45);
}
