//! Which checkers run on a file, and why (what `patchgate detect` shows and the scheduler obeys).
//!
//! For every checker of the table that applies to the file's type: the file's project (the
//! nearest marker of its language), then whether that project uses the checker — universally
//! (rustfmt, clippy, gofmt, go vet), built in (the syntax gate), or from evidence in its own files
//! — then `.patchgate.toml` (`disabled`, `enabled`) and `--checks`. Where two used formatters
//! could format the same file, the project's lint-staged / pre-commit globs decide.
//!
//! Invariant: a checker is run only on files where it is [`Verdict::Used`]; everything else is
//! listed with its reason and never blocks.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::checker::{Checker, Files, TABLE, Uses};
use crate::project::config::{Config, Kind};
use crate::project::detect::{self, Project};
use crate::project::evidence::{Evidence, Use};

/// One checker considered for one file.
#[derive(Debug, Clone)]
pub struct Considered {
    pub checker: &'static Checker,
    pub project: Option<Project>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    Used {
        evidence: String,
        /// Where to run it (the directory of its configuration, else the project's root).
        #[serde(skip)]
        cwd: PathBuf,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
    },
    NotUsed {
        why: String,
    },
}

impl Considered {
    pub fn used(&self) -> bool {
        matches!(self.verdict, Verdict::Used { .. })
    }
}

/// Everything considered for `rel`: the checkers that apply to its type, in table order.
pub fn consider(
    repo_root: &Path,
    ev: &Evidence,
    config: &Config,
    only: Option<&[String]>,
    rel: &str,
) -> Vec<Considered> {
    let mut out: Vec<Considered> = TABLE
        .iter()
        .filter_map(|&c| consider_one(repo_root, ev, config, only, rel, c))
        .collect();
    settle_formatters(ev, rel, &mut out);
    out
}

fn consider_one(
    repo_root: &Path,
    ev: &Evidence,
    config: &Config,
    only: Option<&[String]>,
    rel: &str,
    c: &'static Checker,
) -> Option<Considered> {
    let project = match c.files {
        Files::Lang(lang) => {
            if detect::lang_of(rel) != Some(lang) {
                return None;
            }
            detect::project_of(repo_root, rel, lang)
        }
        Files::Any(accepts) => {
            if !accepts(rel) {
                return None;
            }
            detect::lang_of(rel).and_then(|l| detect::project_of(repo_root, rel, l))
        }
    };
    let not = |why: String| Verdict::NotUsed { why };
    let verdict = if matches!(c.files, Files::Lang(_)) && project.is_none() {
        let lang = detect::lang_of(rel)?;
        not(format!(
            "no {} above the file up to the repository root",
            lang.markers().join(" / ")
        ))
    } else if config.disabled(c.name) {
        not("disabled in .patchgate.toml".into())
    } else if only.is_some_and(|o| !o.iter().any(|n| n == c.name)) {
        not("not among --checks".into())
    } else {
        let root = project
            .as_ref()
            .map_or_else(|| repo_root.to_path_buf(), |p| p.root.clone());
        let used = |evidence: String| Verdict::Used {
            evidence,
            cwd: root.clone(),
            args: Vec::new(),
        };
        match &c.uses {
            Uses::Always => used(format!(
                "the {} toolchain's own tool",
                project.as_ref().map_or("", |p| p.lang.name())
            )),
            Uses::BuiltIn => used("built into patchgate".into()),
            Uses::Evidence(signals, refine) => {
                let mut u = ev.uses(rel, signals);
                if let Some(refine) = refine {
                    u = refine(ev, rel, u);
                }
                match u {
                    Use::Used {
                        evidence,
                        config_dir,
                        args,
                        ..
                    } => Verdict::Used {
                        evidence,
                        // A configuration above the project (a monorepo's root) is found from
                        // the project too; the project's own root is where its tools run.
                        cwd: if config_dir.starts_with(&root) {
                            config_dir
                        } else {
                            root.clone()
                        },
                        args,
                    },
                    Use::NotUsed { why } if config.enabled(c.name) => {
                        used(format!("enabled in .patchgate.toml ({why})"))
                    }
                    Use::NotUsed { why } => not(why),
                }
            }
        }
    };
    Some(Considered {
        checker: c,
        project,
        verdict,
    })
}

/// Two used formatters for one file: the lint-staged / pre-commit globs pick one, if they can.
fn settle_formatters(ev: &Evidence, rel: &str, out: &mut [Considered]) {
    let formatters: Vec<usize> = out
        .iter()
        .enumerate()
        .filter(|(_, c)| c.used() && c.checker.kind == Kind::Format)
        .filter(|(_, c)| matches!(c.checker.uses, Uses::Evidence(..)))
        .map(|(i, _)| i)
        .collect();
    if formatters.len() < 2 {
        return;
    }
    let signals: Vec<&_> = formatters
        .iter()
        .filter_map(|&i| match out[i].checker.uses {
            Uses::Evidence(s, _) => Some(s),
            _ => None,
        })
        .collect();
    let Some(owner) = ev.owner(rel, &signals) else {
        return;
    };
    let owner_name = out[formatters[owner]].checker.name;
    for (k, &i) in formatters.iter().enumerate() {
        if k != owner {
            out[i].verdict = Verdict::NotUsed {
                why: format!(
                    "the project's lint-staged / pre-commit globs give this file to {owner_name}"
                ),
            };
        }
    }
}
