//! `.patchgate.toml` read against the checker table: which `[checkers.X]` sections are built-in
//! checkers (they take `command`, `timeout`, `disabled`, `enabled` only) and which are custom
//! checkers (validated in full), and `--checks LIST` names only checkers that exist.
//!
//! The file's shape lives in [`crate::project::config`]; only this layer knows the table, so
//! `project/` never imports it. The methods are inherent to [`Config`], so callers write
//! `Config::load` as before.

use std::path::Path;

use super::checker;
use crate::error::Error;
use crate::project::config::{Config, Custom, config_error};

/// A built-in checker's name (the checker table's).
fn builtin(name: &str) -> bool {
    checker::by_name(name).is_some()
}

/// Every built-in checker's name, for messages.
fn builtin_names() -> Vec<&'static str> {
    checker::TABLE.iter().map(|c| c.name).collect()
}

impl Config {
    /// Reads `.patchgate.toml` from the repository root; absent is the default configuration.
    pub fn load(repo_root: &Path) -> Result<Config, Error> {
        let path = repo_root.join(".patchgate.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => return Err(Error::io("read", &path, e)),
        };
        let config: Config = toml::from_str(&text).map_err(|e| config_error(&e.to_string()))?;
        for (name, c) in &config.checkers {
            if !builtin(name) {
                Custom::from_config(name, c)?;
            } else if c.globs.is_some()
                || c.kind.is_some()
                || c.output.is_some()
                || c.pattern.is_some()
            {
                return Err(config_error(&format!(
                    "[checkers.{name}] is a built-in checker: it takes `command`, `timeout`, `disabled` and `enabled` only"
                )));
            } else if c.command.as_ref().is_some_and(|v| v.is_empty()) {
                return Err(config_error(&format!(
                    "[checkers.{name}] has an empty `command`: give the program and its arguments \
                     (e.g. [\"uv\", \"run\", \"{name}\"]), or remove the key"
                )));
            }
        }
        Ok(config)
    }

    /// `--checks LIST` names only checkers that exist: a typo must not turn the gate off.
    pub fn check_names(&self, only: Option<&[String]>) -> Result<(), Error> {
        let Some(only) = only else { return Ok(()) };
        for name in only {
            if !builtin(name) && !self.checkers.contains_key(name) {
                let mut known: Vec<&str> = builtin_names();
                known.extend(
                    self.checkers
                        .keys()
                        .map(String::as_str)
                        .filter(|k| !builtin(k)),
                );
                return Err(Error::Usage {
                    message: format!("--checks names an unknown checker `{name}`"),
                    help: format!("known checkers: {} (or `auto`, `none`)", known.join(", ")),
                });
            }
        }
        Ok(())
    }

    /// The custom checkers (`[checkers.X]` not in the table), disabled ones left out.
    pub fn customs(&self) -> Vec<Custom> {
        self.checkers
            .iter()
            .filter(|(n, c)| !builtin(n) && !c.disabled)
            .filter_map(|(n, c)| Custom::from_config(n, c).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::project::config::Kind;

    #[test]
    fn loads_and_validates() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(
            Config::load(dir.path())
                .expect("absent is default")
                .checkers
                .is_empty()
        );
        std::fs::write(
            dir.path().join(".patchgate.toml"),
            "[checks]\nlint_timeout = 5\n[checkers.eslint]\ndisabled = true\n[checkers.slow]\ncommand = [\"sleep\", \"60\"]\nglobs = [\"*.txt\"]\n",
        )
        .expect("write");
        let c = Config::load(dir.path()).expect("valid");
        assert!(c.disabled("eslint"));
        assert_eq!(c.timeout("ruff", Kind::Lint, None), Duration::from_secs(5));
        assert_eq!(
            c.timeout("ruff", Kind::Format, None),
            Duration::from_secs(10)
        );
        // A checker's own default gives way to `[checks]` and to the flag.
        let five_min = Some(Duration::from_secs(300));
        assert_eq!(
            c.timeout_or("clippy", Kind::Lint, None, five_min),
            Duration::from_secs(5),
            "[checks] lint_timeout is set here"
        );
        assert_eq!(
            Config::default().timeout_or("clippy", Kind::Lint, None, five_min),
            Duration::from_secs(300)
        );
        assert_eq!(
            Config::default().timeout_or(
                "clippy",
                Kind::Lint,
                Some(Duration::from_secs(2)),
                five_min
            ),
            Duration::from_secs(2)
        );
        let customs = c.customs();
        assert_eq!(customs.len(), 1);
        assert!(customs[0].matches("notes/a.txt"));
        for bad in [
            "[checks]\nlint_timout = 5\n",
            "[checkers.x]\nglobs = [\"*\"]\n",
            "[checkers.x]\ncommand = [\"a\"]\nglobs = [\"*\"]\noutput = \"regex\"\npattern = \"(?P<line>\\\\d+)\"\n",
            "[checkers.ruff]\nglobs = [\"*\"]\n",
            // An empty command would leave no program to run.
            "[checkers.ruff]\ncommand = []\n",
            // An invalid glob must not silently match nothing.
            "[checkers.x]\ncommand = [\"a\"]\nglobs = [\"src/{a\"]\n",
        ] {
            std::fs::write(dir.path().join(".patchgate.toml"), bad).expect("write");
            let err = Config::load(dir.path()).err();
            assert_eq!(
                err.as_ref().map(Error::kind),
                Some(crate::error::Kind::Config),
                "{bad}: {err:?}"
            );
        }
    }
}
