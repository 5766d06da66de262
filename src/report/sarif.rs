//! The SARIF 2.1.0 rendering of a [`Report`], for code-scanning uploads and review bots.
//!
//! One run, `tool.driver` naming patchgate and listing one rule per rule id that occurs (in order
//! of first use, so `ruleIndex` points into `rules`). Every result has exactly one located
//! `physicalLocation` with a repository-relative `uri` under `%SRCROOT%`: GitHub code scanning
//! rejects a whole upload when any result lacks one, so whatever has no file (an environment
//! error, a verify step that failed without naming a file) goes to the invocation's
//! `toolExecutionNotifications` instead of `results`.
//!
//! What becomes a result:
//! - a checker finding (a formatter's hunk is one): rule `<checker>/<rule>`, or the checker's
//!   name when the finding has none; `baselineState` from the finding's `new` flag;
//! - an edit that did not apply: `patchgate/not_found`, `patchgate/ambiguous`, `patchgate/error`,
//!   at the top suggestion's lines (not found) or the first match (ambiguous), the other
//!   candidates and matches as `relatedLocations`;
//! - a checker that did not run on a file: `patchgate/checker-error` (crash, timeout, unreadable
//!   output) or `patchgate/checker-missing`;
//! - a verify failure that names a file: `patchgate/verify/<step>`.
//!
//! `partialFingerprints["patchgate/v1"]` identifies a result across runs while lines move: a
//! hash of the rule id, the path, the message with every run of digits masked (messages quote
//! line numbers and counts) and the occurrence number among results with that same key. It
//! leaves out the line number on purpose, and the text of the line too: a report does not carry
//! file contents, and for a refused patch the checked text is on no disk to read back.

use std::fmt::Write;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{EditReport, Report, Status};
use crate::checks::finding::Severity;
use crate::plan::EditStatus;

pub(super) const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The key of the fingerprint in `partialFingerprints`; bump the version when its recipe changes.
pub(super) const FINGERPRINT_KEY: &str = "patchgate/v1";

const SRCROOT: &str = "%SRCROOT%";

/// The report as a pretty-printed SARIF log, with a final newline.
pub fn render_sarif(r: &Report) -> String {
    let mut text = serde_json::to_string_pretty(&sarif_log(r)).unwrap_or_default();
    text.push('\n');
    text
}

/// The report as a SARIF log object.
pub fn sarif_log(r: &Report) -> Value {
    let mut b = Builder::default();
    for e in &r.edits {
        b.edit(e);
    }
    for c in &r.checks {
        b.check(c);
    }
    for v in &r.verify {
        b.verify(v, r.root.as_deref());
    }
    if let Some(e) = &r.error {
        let mut text = e.message.clone();
        if let Some(h) = &e.help {
            let _ = write!(text, " (fix: {h})");
        }
        b.notes.push(json!({
            "level": "error",
            "message": {"text": text},
            "descriptor": {"id": format!("patchgate/{}", e.kind)},
        }));
    }
    let mut driver = Map::new();
    driver.insert("name".into(), json!("patchgate"));
    driver.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
    if let Some(uri) = information_uri() {
        driver.insert("informationUri".into(), json!(uri));
    }
    driver.insert("rules".into(), Value::Array(b.rules));
    let base = match &r.root {
        Some(root) => json!({"uri": dir_uri(root), "description": {"text": "the repository root"}}),
        None => json!({"description": {"text": "the repository root"}}),
    };
    let mut invocation = json!({
        "executionSuccessful": r.status != Status::Error,
        "exitCode": r.exit().code(),
    });
    if !b.notes.is_empty() {
        invocation["toolExecutionNotifications"] = Value::Array(b.notes);
    }
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "originalUriBaseIds": {SRCROOT: base},
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation],
            "results": b.results,
        }],
    })
}

/// The project's page, when Cargo.toml names one (`repository`, else `homepage`).
fn information_uri() -> Option<&'static str> {
    [env!("CARGO_PKG_REPOSITORY"), env!("CARGO_PKG_HOMEPAGE")]
        .into_iter()
        .find(|u| !u.is_empty())
}

#[derive(Default)]
struct Builder {
    rules: Vec<Value>,
    rule_ids: Vec<String>,
    results: Vec<Value>,
    notes: Vec<Value>,
    /// Fingerprint keys seen so far, for the occurrence number.
    seen: std::collections::HashMap<String, usize>,
}

/// One result before it is laid out.
struct Hit<'a> {
    rule: String,
    rule_text: String,
    level: &'static str,
    message: String,
    path: &'a str,
    region: Option<Value>,
    related: Vec<Value>,
    baseline: Option<bool>,
    properties: Value,
}

impl Builder {
    fn rule_index(&mut self, id: &str, text: &str) -> usize {
        if let Some(i) = self.rule_ids.iter().position(|r| r == id) {
            return i;
        }
        self.rule_ids.push(id.to_string());
        self.rules.push(json!({
            "id": id,
            "shortDescription": {"text": text},
        }));
        self.rule_ids.len() - 1
    }

    fn push(&mut self, h: Hit) {
        let index = self.rule_index(&h.rule, &h.rule_text);
        let key = format!("{}\0{}\0{}", h.rule, h.path, mask_digits(&h.message));
        let n = self.seen.entry(key.clone()).or_insert(0);
        *n += 1;
        let fingerprint = hash_hex(&format!("{key}\0{n}"));
        let mut physical = json!({"artifactLocation": artifact(h.path)});
        if let Some(region) = h.region {
            physical["region"] = region;
        }
        let mut result = json!({
            "ruleId": h.rule,
            "ruleIndex": index,
            "level": h.level,
            "message": {"text": h.message},
            "locations": [{"physicalLocation": physical}],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
            "properties": h.properties,
        });
        if let Some(new) = h.baseline {
            result["baselineState"] = json!(if new { "new" } else { "unchanged" });
        }
        if !h.related.is_empty() {
            result["relatedLocations"] = Value::Array(h.related);
        }
        self.results.push(result);
    }

    fn edit(&mut self, e: &EditReport) {
        let (rule, rule_text) = match e.status {
            EditStatus::Applied | EditStatus::AlreadyApplied => return,
            EditStatus::NotFound => (
                "patchgate/not_found",
                "An edit's old_string does not occur in the file; the patch was not written",
            ),
            EditStatus::Ambiguous => (
                "patchgate/ambiguous",
                "An edit's old_string occurs more than once; the patch was not written",
            ),
            EditStatus::Error => (
                "patchgate/error",
                "An edit could not be applied (invalid, or its file cannot take it); the patch was not written",
            ),
        };
        let mut message = format!(
            "edit {} on {}: {}",
            e.index,
            e.file_path,
            if e.invalid {
                "invalid"
            } else {
                super::status_name(e.status)
            }
        );
        if let Some(m) = &e.message {
            let _ = write!(message, ": {m}");
        }
        let mut related = Vec::new();
        let mut region = None;
        if e.status == EditStatus::Ambiguous && !e.lines.is_empty() {
            let ranges: Vec<String> = e.lines.iter().map(|[a, b]| format!("{a}-{b}")).collect();
            let _ = write!(message, " (matches at lines {})", ranges.join(", "));
            region = Some(lines_region(e.lines[0][0], e.lines[0][1]));
            for (i, [a, b]) in e.lines.iter().enumerate() {
                related.push(json!({
                    "id": i,
                    "message": {"text": format!("match {} of {}", i + 1, e.lines.len())},
                    "physicalLocation": {
                        "artifactLocation": artifact(&e.file_path),
                        "region": lines_region(*a, *b),
                    },
                }));
            }
        }
        if let Some(top) = e.suggestions.first() {
            let _ = write!(
                message,
                "; closest text at lines {}-{} ({}, {:.0}% similar)",
                top.start_line,
                top.end_line,
                super::candidate_kind_name(top.kind),
                top.similarity * 100.0
            );
            if region.is_none() {
                region = Some(lines_region(top.start_line, top.end_line));
            }
        }
        for (i, s) in e.suggestions.iter().enumerate() {
            let mut r = lines_region(s.start_line, s.end_line);
            r["snippet"] = json!({"text": s.text});
            related.push(json!({
                "id": related.len(),
                "message": {"text": format!(
                    "candidate {}: {}, {:.0}% similar",
                    i + 1,
                    super::candidate_kind_name(s.kind),
                    s.similarity * 100.0
                )},
                "physicalLocation": {"artifactLocation": artifact(&e.file_path), "region": r},
            }));
        }
        self.push(Hit {
            rule: rule.to_string(),
            rule_text: rule_text.to_string(),
            level: "error",
            message,
            path: &e.file_path,
            region,
            related,
            baseline: Some(true),
            properties: json!({"edit": e.index}),
        });
    }

    fn check(&mut self, c: &crate::checks::CheckReport) {
        use crate::checks::Status as C;
        let kind = match c.kind {
            crate::checks::Kind::Format => "format",
            crate::checks::Kind::Lint => "lint",
        };
        match c.status {
            C::Pass | C::Fail | C::Skipped => {}
            C::Error | C::Timeout | C::Missing => {
                let (rule, rule_text, level) = if c.status == C::Missing {
                    (
                        "patchgate/checker-missing",
                        "A checker the project uses is not installed, so the file was not checked by it",
                        "note",
                    )
                } else {
                    (
                        "patchgate/checker-error",
                        "A checker crashed, timed out or printed output that could not be read",
                        "warning",
                    )
                };
                let what = match c.status {
                    C::Missing => "is missing",
                    C::Timeout => "timed out",
                    _ => "failed to run",
                };
                let mut message = format!("{} {what} on {}", c.checker, c.path);
                for extra in [&c.note, &c.help].into_iter().flatten() {
                    let _ = write!(message, ": {extra}");
                }
                self.push(Hit {
                    rule: rule.into(),
                    rule_text: rule_text.into(),
                    level,
                    message,
                    path: &c.path,
                    region: None,
                    related: Vec::new(),
                    baseline: None,
                    properties: json!({"checker": c.checker, "kind": kind}),
                });
            }
        }
        for f in &c.findings {
            let (rule, rule_text) = if f.rule.is_empty() {
                (c.checker.clone(), format!("Reported by {}", c.checker))
            } else {
                (
                    format!("{}/{}", c.checker, f.rule),
                    format!("{} rule {}", c.checker, f.rule),
                )
            };
            let region = (f.line > 0).then(|| {
                let mut r = json!({"startLine": f.line});
                if f.column > 0 {
                    r["startColumn"] = json!(f.column);
                }
                r
            });
            self.push(Hit {
                rule,
                rule_text,
                level: match f.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Info => "note",
                },
                message: f.message.clone(),
                path: &c.path,
                region,
                related: Vec::new(),
                baseline: Some(f.new),
                properties: json!({"checker": c.checker, "kind": kind}),
            });
        }
    }

    fn verify(&mut self, v: &crate::verify::run::VerifyReport, root: Option<&std::path::Path>) {
        use crate::verify::run::Status as V;
        let step = v.step.name();
        let mut located = 0;
        for f in &v.failures {
            let label = if f.name.is_empty() {
                f.message.clone()
            } else {
                format!("{}: {}", f.name, f.message)
            };
            let Some(path) = f.file.as_deref().map(|p| verify_path(p, &v.project, root)) else {
                self.notes.push(json!({
                    "level": if f.new { "error" } else { "warning" },
                    "message": {"text": format!("verify {step} in {}: {label}", v.project)},
                    "descriptor": {"id": format!("patchgate/verify/{step}")},
                }));
                continue;
            };
            located += 1;
            self.push(Hit {
                rule: format!("patchgate/verify/{step}"),
                rule_text: format!("The project's {step} step failed on the patched state"),
                level: "error",
                message: format!("verify {step}: {label}"),
                path: &path,
                region: f.line.filter(|l| *l > 0).map(|l| json!({"startLine": l})),
                related: Vec::new(),
                baseline: Some(f.new),
                properties: json!({"project": v.project, "command": v.command}),
            });
        }
        let what = match v.status {
            V::Pass => return,
            V::Fail if located > 0 => return,
            V::Fail => "failed",
            V::Missing => "could not run: its tool is missing",
            V::Error => "could not run",
            V::Timeout => "timed out",
        };
        let mut text = format!("verify {step} in {} ({}) {what}", v.project, v.command);
        if let Some(n) = &v.note {
            let _ = write!(text, ": {n}");
        }
        self.notes.push(json!({
            "level": if v.status == V::Fail { "error" } else { "warning" },
            "message": {"text": text},
            "descriptor": {"id": format!("patchgate/verify/{step}")},
        }));
    }
}

/// A verify failure's file as a repository-relative path: tools print paths relative to the
/// project they ran in, or absolute ones.
fn verify_path(file: &str, project: &str, root: Option<&std::path::Path>) -> String {
    let p = std::path::Path::new(file);
    if p.is_absolute() {
        return match root.and_then(|r| p.strip_prefix(r).ok()) {
            Some(rel) => rel.to_string_lossy().into_owned(),
            None => file.to_string(),
        };
    }
    let file = file.strip_prefix("./").unwrap_or(file);
    if project.is_empty() || project == "." || file.starts_with(&format!("{project}/")) {
        file.to_string()
    } else {
        format!("{project}/{file}")
    }
}

fn lines_region(start: usize, end: usize) -> Value {
    let start = start.max(1);
    json!({"startLine": start, "endLine": end.max(start)})
}

/// An artifact location: relative paths under `%SRCROOT%`, absolute ones (a verify failure
/// outside the repository) as `file://` URIs.
fn artifact(path: &str) -> Value {
    if path.starts_with('/') {
        json!({"uri": format!("file://{}", encode_path(path))})
    } else {
        json!({"uri": encode_path(path), "uriBaseId": SRCROOT})
    }
}

fn dir_uri(root: &std::path::Path) -> String {
    let mut s = format!("file://{}", encode_path(&root.to_string_lossy()));
    if !s.ends_with('/') {
        s.push('/');
    }
    s
}

/// Percent-encodes what may not stand in a URI path (RFC 3986), byte by byte: spaces, `%`, `#`,
/// `?`, non-ASCII. `:` is encoded too, so a first segment is never read as a scheme.
pub(super) fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'/'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'@'
            );
        if keep {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The message with every run of ASCII digits replaced by `0`, so a finding keeps its
/// fingerprint when the lines it quotes move.
pub(super) fn mask_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for ch in s.chars() {
        if ch.is_ascii_digit() {
            if !in_run {
                out.push('0');
            }
            in_run = true;
        } else {
            out.push(ch);
            in_run = false;
        }
    }
    out
}

fn hash_hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .take(16)
        .fold(String::new(), |mut acc, b| {
            let _ = write!(acc, "{b:02x}");
            acc
        })
}

#[cfg(test)]
#[path = "sarif_tests.rs"]
mod tests;
