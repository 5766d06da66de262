//! Turning the user's choices (flags on the command line, arguments of an MCP tool call) into the
//! options of the pipeline. Both front ends share these functions, so `--checks`, `--timeout`,
//! `--verify` and the apply modes mean exactly the same thing wherever they come from.

use std::path::PathBuf;

use crate::apply::ApplyOptions;
use crate::checks::Gate;
use crate::error::Error;

/// The check settings of `apply` and `check`, as the user wrote them.
#[derive(Debug, Clone)]
pub struct CheckChoice {
    /// `auto`, `none`, or a comma-separated list of checker names.
    pub checks: String,
    pub gate: Gate,
    pub require_tools: bool,
    /// Seconds; must be positive.
    pub timeout: Option<f64>,
    /// 0 = one per core.
    pub jobs: usize,
    pub offline: bool,
    /// A progress bar on stderr when it is a terminal (never for a protocol server).
    pub progress: bool,
}

impl Default for CheckChoice {
    fn default() -> Self {
        CheckChoice {
            checks: "auto".into(),
            gate: Gate::New,
            require_tools: false,
            timeout: None,
            jobs: 0,
            offline: false,
            progress: true,
        }
    }
}

impl CheckChoice {
    /// The checks to run (`None`: `checks = none`).
    pub fn options(&self, fix: bool) -> Result<Option<crate::checks::Options>, Error> {
        let only = match self.checks.trim() {
            "none" => return Ok(None),
            "auto" | "" => None,
            list => Some(
                list.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
        };
        let timeout = match self.timeout {
            Some(t)
                if t > 0.0
                    && let Ok(d) = std::time::Duration::try_from_secs_f64(t) =>
            {
                Some(d)
            }
            Some(t) => {
                return Err(Error::Usage {
                    message: format!("--timeout {t} is not a positive number of seconds"),
                    help: "e.g. --timeout 20".into(),
                });
            }
            None => None,
        };
        Ok(Some(crate::checks::Options {
            gate: self.gate,
            fix,
            require_tools: self.require_tools,
            timeout,
            jobs: self.jobs,
            only,
            offline: self.offline,
            progress: self.progress,
            context: Vec::new(),
        }))
    }

    /// The options of `check`: `checks = none` still runs nothing, but as an empty selection.
    pub fn check_options(&self) -> Result<crate::checks::Options, Error> {
        Ok(self
            .options(false)?
            .unwrap_or_else(|| crate::checks::Options {
                only: Some(Vec::new()),
                progress: self.progress,
                ..Default::default()
            }))
    }
}

/// Everything `apply` takes besides the patch.
#[derive(Debug, Clone, Default)]
pub struct ApplyChoice {
    pub dir: PathBuf,
    pub dry_run: bool,
    pub lenient: bool,
    pub commit: bool,
    pub branch: Option<String>,
    pub message: Option<String>,
    pub fix: bool,
    /// `build,test,typecheck` or a subset.
    pub verify: Option<String>,
    pub check: CheckChoice,
}

impl ApplyChoice {
    pub fn options(&self) -> Result<ApplyOptions, Error> {
        if self.commit && self.branch.is_some() {
            return Err(Error::Usage {
                message: "commit and branch cannot be used together".into(),
                help: "commit on the current branch, or on another one with branch".into(),
            });
        }
        let checks = self.check.options(self.fix)?;
        let verify = match &self.verify {
            Some(list) => Some(crate::verify::run::Options {
                steps: crate::verify::run::Step::parse_list(list).map_err(|m| Error::Usage {
                    message: m,
                    help: "e.g. --verify build,test".into(),
                })?,
                require_tools: self.check.require_tools,
                timeout: None,
                offline: self.check.offline,
            }),
            None => None,
        };
        Ok(ApplyOptions {
            dir: self.dir.clone(),
            dry_run: self.dry_run,
            lenient: self.lenient,
            commit: self.commit,
            branch: self.branch.clone(),
            message: self.message.clone(),
            checks,
            verify,
        })
    }
}
