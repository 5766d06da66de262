//! `.patchgate.toml` at the repository root: overriding a checker's command or timeout, disabling
//! one, and adding custom checkers.
//!
//! ```toml
//! [checks]
//! lint_timeout = 30          # seconds, default 30
//! format_timeout = 10        # seconds, default 10
//!
//! [checkers.ruff]            # a built-in checker: replace its program, change its timeout, or disable it
//! command = ["uv", "run", "ruff"]
//! timeout = 20
//!
//! [checkers.eslint]
//! disabled = true
//!
//! [checkers.mylint]          # a custom checker
//! command = ["mylint", "--json", "{files}"]   # {files}: the patched files; {file}: one run per file
//! globs = ["src/**/*.py"]
//! kind = "lint"              # or "format"
//! output = "json"            # "json" | "sarif" | "regex"
//! pattern = '^(?P<file>[^:]+):(?P<line>\d+): (?P<message>.*)$'   # for output = "regex"
//! timeout = 5
//!
//! [verify]
//! timeout = 600              # seconds per step (build, test, typecheck), default 600
//! [verify.rust]
//! test = ["cargo", "nextest", "run"]
//! ```
//!
//! Unknown keys are errors with their position, like in a patch: a typo in a gate's configuration
//! must not silently turn a check off.
//!
//! This module owns the file's shape, the timeouts and a custom checker's validation;
//! `Config::load` and `Config::check_names`, which must tell a built-in checker from a custom one,
//! are in `checks::config`, beside the checker table (the project layer never reads the table).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::error::Error;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub checks: ChecksSection,
    #[serde(default)]
    pub checkers: BTreeMap<String, CheckerConfig>,
    #[serde(default)]
    pub verify: VerifySection,
}

/// `[verify]`: the step timeout, and per-language command overrides
/// (`[verify.rust] test = ["cargo", "nextest", "run"]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifySection {
    pub timeout: Option<u64>,
    pub python: Option<StepCommands>,
    pub node: Option<StepCommands>,
    pub rust: Option<StepCommands>,
    pub go: Option<StepCommands>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepCommands {
    pub build: Option<Vec<String>>,
    pub test: Option<Vec<String>>,
    pub typecheck: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecksSection {
    pub lint_timeout: Option<u64>,
    pub format_timeout: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Format,
    Lint,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputFormat {
    Json,
    Sarif,
    Regex,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckerConfig {
    pub command: Option<Vec<String>>,
    pub timeout: Option<u64>,
    #[serde(default)]
    pub disabled: bool,
    /// Run a built-in checker even where the project shows no evidence of using it.
    #[serde(default)]
    pub enabled: bool,
    pub globs: Option<Vec<String>>,
    pub kind: Option<Kind>,
    pub output: Option<OutputFormat>,
    pub pattern: Option<String>,
}

/// A custom checker, validated.
#[derive(Debug, Clone)]
pub struct Custom {
    pub name: String,
    pub command: Vec<String>,
    pub globs: globset::GlobSet,
    pub kind: Kind,
    pub output: OutputFormat,
    pub pattern: Option<String>,
    pub timeout: Option<Duration>,
}

impl Config {
    pub fn disabled(&self, checker: &str) -> bool {
        self.checkers.get(checker).is_some_and(|c| c.disabled)
    }

    pub fn enabled(&self, checker: &str) -> bool {
        self.checkers.get(checker).is_some_and(|c| c.enabled)
    }

    /// The replacement program (and leading arguments) for a built-in checker.
    pub fn command_override(&self, checker: &str) -> Option<&[String]> {
        self.checkers
            .get(checker)
            .and_then(|c| c.command.as_deref())
    }

    /// A checker's timeout: `--timeout` over `[checkers.X] timeout` over `[checks]`'s per-kind
    /// default, for built-in and custom checkers alike.
    pub fn timeout(&self, checker: &str, kind: Kind, cli: Option<Duration>) -> Duration {
        self.timeout_or(checker, kind, cli, None)
    }

    /// [`Config::timeout`] with the checker's own default in place of the per-kind one (a whole-
    /// package checker's first, cold build takes minutes: 30 s would make it a timeout).
    pub fn timeout_or(
        &self,
        checker: &str,
        kind: Kind,
        cli: Option<Duration>,
        default: Option<Duration>,
    ) -> Duration {
        if let Some(t) = cli {
            return t;
        }
        if let Some(t) = self.checkers.get(checker).and_then(|c| c.timeout) {
            return Duration::from_secs(t);
        }
        let section = match kind {
            Kind::Lint => self.checks.lint_timeout,
            Kind::Format => self.checks.format_timeout,
        };
        if let Some(t) = section {
            return Duration::from_secs(t);
        }
        default.unwrap_or(match kind {
            Kind::Lint => Duration::from_secs(30),
            Kind::Format => Duration::from_secs(10),
        })
    }
}

impl Custom {
    pub(crate) fn from_config(name: &str, c: &CheckerConfig) -> Result<Custom, Error> {
        let command = c.command.clone().filter(|v| !v.is_empty()).ok_or_else(|| {
            config_error(&format!(
                "[checkers.{name}] needs `command` (a list: program and arguments)"
            ))
        })?;
        let patterns = c.globs.clone().ok_or_else(|| {
            config_error(&format!(
                "[checkers.{name}] needs `globs`: which files it checks"
            ))
        })?;
        let globs =
            globs(&patterns).map_err(|e| config_error(&format!("[checkers.{name}] globs: {e}")))?;
        let output = c.output.unwrap_or(OutputFormat::Json);
        if output == OutputFormat::Regex {
            let pattern = c.pattern.as_deref().ok_or_else(|| {
                config_error(&format!(
                    "[checkers.{name}] has output = \"regex\" but no `pattern`"
                ))
            })?;
            let re = regex::Regex::new(pattern)
                .map_err(|e| config_error(&format!("[checkers.{name}] pattern: {e}")))?;
            if !re.capture_names().flatten().any(|n| n == "file") {
                return Err(config_error(&format!(
                    "[checkers.{name}] pattern needs a named group `file` (and usually `line`, `message`)"
                )));
            }
        }
        Ok(Custom {
            name: name.to_string(),
            command,
            globs,
            kind: c.kind.unwrap_or(Kind::Lint),
            output,
            pattern: c.pattern.clone(),
            timeout: c.timeout.map(Duration::from_secs),
        })
    }

    pub fn matches(&self, rel: &str) -> bool {
        self.globs.is_match(rel)
    }
}

pub(crate) fn config_error(msg: &str) -> Error {
    Error::Config {
        message: format!(".patchgate.toml: {msg}"),
        help: "fix .patchgate.toml at the repository root (its keys: docs/configuration.md)".into(),
    }
}

/// Globs as in `.gitignore`: `*`, `**`, `?`, `[...]`, `{a,b}`; a pattern without `/` matches the
/// file name anywhere. An invalid pattern is an error, never a pattern that matches nothing.
pub fn globs(patterns: &[String]) -> Result<globset::GlobSet, String> {
    let mut set = globset::GlobSetBuilder::new();
    for p in patterns {
        let p = p.trim_start_matches("./");
        let full = if p.contains('/') {
            p.trim_start_matches('/').to_string()
        } else {
            format!("**/{p}")
        };
        let g = globset::GlobBuilder::new(&full)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("`{p}`: {e}"))?;
        set.add(g);
    }
    set.build().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_follow_gitignore_rules() {
        let g = |p: &str| globs(&[p.to_string()]).expect("valid");
        let m = g("*.py");
        assert!(m.is_match("a.py") && m.is_match("src/deep/a.py") && !m.is_match("a.pyc"));
        let m = g("src/**/*.py");
        assert!(m.is_match("src/a.py") && m.is_match("src/x/y/a.py") && !m.is_match("lib/a.py"));
        let m = g("src/?.rs");
        assert!(m.is_match("src/a.rs") && !m.is_match("src/ab.rs"));
        let m = g("src/*.{ts,tsx}");
        assert!(m.is_match("src/a.ts") && m.is_match("src/b.tsx") && !m.is_match("src/x/a.ts"));
        let m = g("[ab].js");
        assert!(m.is_match("a.js") && m.is_match("x/b.js") && !m.is_match("c.js"));
        assert!(
            globs(&["src/[a.py".to_string()]).is_err(),
            "an invalid glob is an error"
        );
    }
}
