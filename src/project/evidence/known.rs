//! The evidence each supported checker declares (shared/LINTERS.md §E), as [`Signals`] values.
//!
//! These are meant to move into the checkers' own files; until then they live here so the
//! declarations are written once and tested against the evaluator.
//!
//! | tool | strong | medium |
//! |---|---|---|
//! | prettier | `.prettierrc*`, `prettier.config.*`, package.json `"prettier"` | `prettier` in a script / lint-staged; hook `prettier` |
//! | eslint | `eslint.config.*` (flat), `.eslintrc*`, package.json `"eslintConfig"` (legacy) | `eslint`; hook `eslint` |
//! | biome (format) | `biome.json`, `biome.jsonc` | `biome format` / `check` / `ci`; hooks `biome-format` / `-check` / `-ci` |
//! | biome (lint) | `biome.json`, `biome.jsonc` | `biome lint` / `check` / `ci`; hooks `biome-lint` / `-check` / `-ci` |
//! | oxlint | `.oxlintrc.json(c)`, `oxlint.config.(m)ts` | `oxlint`; hook `oxlint` |
//! | xo | package.json `"xo"`, `xo.config.*`, `.xo-config*` | `xo` |
//! | ruff (lint) | `ruff.toml`, `.ruff.toml`, `[tool.ruff]`, `[tool.ruff.lint]` | `ruff check`; hooks `ruff`, `ruff-check` |
//! | ruff format | `[tool.ruff.format]`, `ruff.toml [format]` | `ruff format`; hook `ruff-format` |
//! | black | `[tool.black]` | `black`; hooks `black`, `black-jupyter` |
//! | flake8 | `.flake8`, `setup.cfg [flake8]`, `tox.ini [flake8]`, `[tool.flake8]` (Flake8-pyproject) | `flake8`; hook `flake8` (with `args:`) |
//! | mypy | `mypy.ini`, `.mypy.ini`, `[tool.mypy]`, `setup.cfg [mypy]` | `mypy`; hook `mypy` |
//!
//! Deliberate choices:
//! - **ruff format** keeps LINTERS.md's rule: `[tool.ruff]` alone does not show that the project
//!   formats with ruff (click has `[tool.ruff]` and runs `ruff-format` only through pre-commit;
//!   plenty of projects lint with ruff and format with black). ruff's own docs make `ruff format`
//!   *read* `[tool.ruff]` settings, which is about configuration, not about use.
//! - **biome**: one config file serves both the formatter and the linter; each is on by default
//!   and switched off by `formatter.enabled` / `linter.enabled` (see below).
//! - `[tool.ruff.lint]` alone implies the table `tool.ruff` (TOML dotted headers), so ruff lint is
//!   used there, as it should be.
//!
//! Rules [`Signals`] cannot express, for the checkers to apply:
//! - **xo replaces eslint and prettier**: where [`XO`] is used, do not also run the project's
//!   eslint or prettier on the file ([`SUPERSEDED_BY_XO`]); run `xo`.
//! - **biome switched off in its config**: after [`Evidence::uses`] says used with a biome.json
//!   `file`, check `ev.json_flag(&file, BIOME_FORMATTER_ENABLED)` (resp. `BIOME_LINTER_ENABLED`);
//!   `Some(false)` means not used. `None` means the default (on). Language-specific switches
//!   (`/javascript/formatter/enabled`) work the same way.
//! - **eslint flat vs legacy**: `ev.find_config(rel, ESLINT_CONFIGS)` returns the nearest
//!   config; a legacy one (`.eslintrc*`, [`is_eslint_legacy`]) needs the project's own eslint
//!   (eslint ≥ 9 refuses it), and `"eslintConfig"` in package.json is legacy too.
//! - **Two formatters with evidence on one file** (prettier and biome): [`Evidence::owner`] with
//!   both declarations lets lint-staged / pre-commit globs decide.
//!
//! [`Evidence::uses`]: super::Evidence::uses
//! [`Evidence::owner`]: super::Evidence::owner

use super::Signals;

pub const PRETTIER: Signals = Signals {
    name: "prettier",
    config_files: &[
        ".prettierrc",
        ".prettierrc.json",
        ".prettierrc.yaml",
        ".prettierrc.yml",
        ".prettierrc.json5",
        ".prettierrc.toml",
        ".prettierrc.js",
        ".prettierrc.mjs",
        ".prettierrc.cjs",
        ".prettierrc.ts",
        ".prettierrc.mts",
        ".prettierrc.cts",
        "prettier.config.js",
        "prettier.config.mjs",
        "prettier.config.cjs",
        "prettier.config.ts",
        "prettier.config.mts",
        "prettier.config.cts",
    ],
    package_json_keys: &["prettier"],
    commands: &["prettier"],
    precommit_ids: &["prettier"],
    dependencies: &["prettier"],
    ..Signals::NONE
};

/// Flat configs first: where both kinds sit in one directory, eslint ≥ 9 uses the flat one.
pub const ESLINT_CONFIGS: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    ".eslintrc.json",
    ".eslintrc",
];

/// Is this config file (a path or a name) an eslint legacy (eslintrc) config?
pub fn is_eslint_legacy(config: &std::path::Path) -> bool {
    config
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".eslintrc"))
}

pub const ESLINT: Signals = Signals {
    name: "eslint",
    config_files: ESLINT_CONFIGS,
    package_json_keys: &["eslintConfig"],
    commands: &["eslint"],
    precommit_ids: &["eslint"],
    dependencies: &[
        "eslint",
        "@eslint/js",
        "typescript-eslint",
        "eslint-config-*",
        "eslint-plugin-*",
    ],
    ..Signals::NONE
};

/// biome.json wins over biome.jsonc in one directory (biome's docs).
pub const BIOME_CONFIGS: &[&str] = &["biome.json", "biome.jsonc"];
pub const BIOME_FORMATTER_ENABLED: &str = "/formatter/enabled";
pub const BIOME_LINTER_ENABLED: &str = "/linter/enabled";

pub const BIOME_FORMAT: Signals = Signals {
    name: "biome (format)",
    config_files: BIOME_CONFIGS,
    commands: &["biome format", "biome check", "biome ci"],
    precommit_ids: &["biome-format", "biome-check", "biome-ci"],
    dependencies: &["@biomejs/biome"],
    ..Signals::NONE
};

pub const BIOME_LINT: Signals = Signals {
    name: "biome (lint)",
    config_files: BIOME_CONFIGS,
    commands: &["biome lint", "biome check", "biome ci"],
    precommit_ids: &["biome-lint", "biome-check", "biome-ci"],
    dependencies: &["@biomejs/biome"],
    ..Signals::NONE
};

pub const OXLINT: Signals = Signals {
    name: "oxlint",
    config_files: &[
        ".oxlintrc.json",
        ".oxlintrc.jsonc",
        "oxlint.config.ts",
        "oxlint.config.mts",
    ],
    commands: &["oxlint"],
    precommit_ids: &["oxlint"],
    dependencies: &["oxlint", "oxlint-tsgolint"],
    ..Signals::NONE
};

pub const XO: Signals = Signals {
    name: "xo",
    config_files: &[
        "xo.config.js",
        "xo.config.cjs",
        "xo.config.mjs",
        "xo.config.ts",
        "xo.config.cts",
        "xo.config.mts",
        ".xo-config",
        ".xo-config.json",
        ".xo-config.js",
        ".xo-config.cjs",
    ],
    package_json_keys: &["xo"],
    commands: &["xo"],
    dependencies: &["xo"],
    ..Signals::NONE
};

/// Checker names not to run separately where xo is used: xo runs eslint (and, with
/// `--prettier`, prettier) itself.
pub const SUPERSEDED_BY_XO: &[&str] = &["eslint", "prettier"];

pub const RUFF: Signals = Signals {
    name: "ruff",
    config_files: &["ruff.toml", ".ruff.toml"],
    pyproject_tables: &["tool.ruff", "tool.ruff.lint"],
    commands: &["ruff check"],
    precommit_ids: &["ruff", "ruff-check"],
    dependencies: &["ruff"],
    ..Signals::NONE
};

pub const RUFF_FORMAT: Signals = Signals {
    name: "ruff format",
    pyproject_tables: &["tool.ruff.format"],
    toml_tables: &[("ruff.toml", "format"), (".ruff.toml", "format")],
    commands: &["ruff format"],
    precommit_ids: &["ruff-format"],
    dependencies: &["ruff"],
    ..Signals::NONE
};

pub const BLACK: Signals = Signals {
    name: "black",
    pyproject_tables: &["tool.black"],
    commands: &["black"],
    precommit_ids: &["black", "black-jupyter"],
    dependencies: &["black"],
    ..Signals::NONE
};

pub const FLAKE8: Signals = Signals {
    name: "flake8",
    config_files: &[".flake8"],
    pyproject_tables: &["tool.flake8"],
    ini_sections: &[("setup.cfg", "flake8"), ("tox.ini", "flake8")],
    commands: &["flake8"],
    precommit_ids: &["flake8"],
    dependencies: &["flake8", "flake8-*"],
    ..Signals::NONE
};

pub const MYPY: Signals = Signals {
    name: "mypy",
    config_files: &["mypy.ini", ".mypy.ini"],
    pyproject_tables: &["tool.mypy"],
    ini_sections: &[("setup.cfg", "mypy")],
    commands: &["mypy"],
    precommit_ids: &["mypy"],
    dependencies: &["mypy"],
    ..Signals::NONE
};

/// Every declaration above, for `patchgate detect` and tests.
pub const ALL: &[&Signals] = &[
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
