//! Whether a file's project uses a tool, judged from the project's own files (placeholder: config
//! files only; the full rules arrive with the evidence module).

use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
pub struct Signals {
    pub config_files: &'static [&'static str],
    pub package_json_keys: &'static [&'static str],
    pub pyproject_tables: &'static [&'static str],
    pub ini_sections: &'static [(&'static str, &'static str)],
    pub commands: &'static [&'static str],
    pub precommit_ids: &'static [&'static str],
    pub dependencies: &'static [&'static str],
}

#[derive(Debug, Clone)]
pub enum Use {
    Used {
        evidence: String,
        config_dir: PathBuf,
        args: Vec<String>,
    },
    NotUsed {
        why: String,
    },
}

pub struct Evidence {
    root: PathBuf,
}

impl Evidence {
    pub fn new(repo_root: &Path) -> Evidence {
        Evidence {
            root: repo_root.to_path_buf(),
        }
    }

    pub fn uses(&self, rel: &str, signals: &Signals) -> Use {
        let mut dir = Path::new(rel).parent();
        loop {
            let d = dir.unwrap_or(Path::new(""));
            let abs = self.root.join(d);
            for c in signals.config_files {
                if abs.join(c).is_file() {
                    return Use::Used {
                        evidence: format!("{c} at {}/", d.display()),
                        config_dir: abs,
                        args: Vec::new(),
                    };
                }
            }
            match dir {
                Some(x) if !x.as_os_str().is_empty() => dir = x.parent(),
                _ => break,
            }
        }
        Use::NotUsed {
            why: "no configuration".into(),
        }
    }

    pub fn owner(&self, _rel: &str, _candidates: &[&Signals]) -> Option<usize> {
        None
    }
}
