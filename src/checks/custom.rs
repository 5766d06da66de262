//! Custom checkers from `.patchgate.toml`: any command, findings read as JSON, SARIF or a line
//! regex with named groups.
//!
//! The command runs in a scratch directory of patchgate's (`<git dir>/patchgate/custom/<name>/`)
//! holding the files to check at their repository paths, with the content under test (patched, or
//! original for a baseline); `{files}` expands to those paths, relative to it, and `{file}` runs the
//! command once per file. Paths in the output, relative or absolute inside the scratch directory,
//! are mapped back to repository paths.

use std::path::Path;
use std::time::Duration;

use super::exec::{Ran, first_lines};
use super::finding::RawFinding;
use super::parse;
use crate::project::config::{Custom, OutputFormat};
use crate::runner::Cmd;

pub fn run(
    git_dir: &Path,
    custom: &Custom,
    files: &[(&str, &[u8])],
    tag: &str,
    timeout: Duration,
) -> Ran<Vec<RawFinding>> {
    let dir = crate::fs::layout::custom(git_dir, &custom.name, tag);
    let _ = std::fs::remove_dir_all(&dir);
    for (rel, content) in files {
        let p = dir.join(rel);
        if let Some(parent) = p.parent()
            && let Err(e) = std::fs::create_dir_all(parent)
        {
            return Ran::Error(format!("{}: {e}", parent.display()));
        }
        if let Err(e) = std::fs::write(&p, content) {
            return Ran::Error(format!("{}: {e}", p.display()));
        }
    }
    let per_file = custom.command.iter().any(|a| a == "{file}");
    let batches: Vec<Vec<&str>> = if per_file {
        files.iter().map(|(r, _)| vec![*r]).collect()
    } else {
        vec![files.iter().map(|(r, _)| *r).collect()]
    };
    let mut all = Vec::new();
    let prefix = format!("{}/", dir.display());
    for batch in batches {
        let mut argv: Vec<String> = Vec::new();
        for a in &custom.command {
            match a.as_str() {
                "{files}" | "{file}" => argv.extend(batch.iter().map(|s| s.to_string())),
                _ => argv.push(a.clone()),
            }
        }
        let cmd = Cmd::new(&argv[0], &dir)
            .args(argv[1..].iter())
            .timeout(timeout);
        let out = match super::exec::ran(cmd.run()) {
            Ok(o) => o,
            Err(why) => return why,
        };
        let stdout = out.stdout_str();
        let parsed = match custom.output {
            OutputFormat::Json if stdout.trim().is_empty() => Ok(Vec::new()),
            OutputFormat::Json => parse::json::generic_json(&stdout),
            OutputFormat::Sarif if stdout.trim().is_empty() => Ok(Vec::new()),
            OutputFormat::Sarif => parse::sarif::sarif(&stdout),
            OutputFormat::Regex => {
                let text = format!("{stdout}\n{}", out.stderr_str());
                parse::regex::regex_lines(&text, custom.pattern.as_deref().unwrap_or_default())
            }
        };
        let findings = match parsed {
            Ok(f) => f,
            Err(e) => return Ran::Error(format!("unreadable output: {e}")),
        };
        if !out.success() && findings.is_empty() {
            return Ran::Error(format!(
                "exited with {} and reported nothing: {}",
                out.code.map_or("a signal".to_string(), |c| c.to_string()),
                first_lines(&out.stderr_str())
            ));
        }
        all.extend(findings.into_iter().map(|mut f| {
            let p = f.path.strip_prefix(&prefix).unwrap_or(&f.path);
            f.path = p.trim_start_matches("./").to_string();
            f
        }));
    }
    Ran::Done(all)
}
