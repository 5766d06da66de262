//! SARIF 2.1.0 logs, as printed by e.g. `ruff check --output-format sarif FILE...`,
//! `golangci-lint run --output.sarif.path stdout` or `biome check --reporter=sarif`.
//!
//! Quirks handled:
//! - every `runs[].results[]` is a finding; the position is the first location's
//!   `physicalLocation` (`artifactLocation.uri`, `region.startLine`/`startColumn`, 1-based,
//!   0 when absent);
//! - URIs are URIs: a `file://` prefix is stripped and `%XX` escapes are decoded (ruff writes
//!   `file:///tmp/pkg/sub%20dir/%C3%BC%20ber.py`); relative URIs (with a `uriBaseId`) are kept
//!   relative;
//! - the rule is `ruleId`, else `rule.id`, else the id of the driver rule at `ruleIndex` /
//!   `rule.index`, else `""`;
//! - `level` error → error, warning → warning, note/none → info; when absent, the rule's
//!   `defaultConfiguration.level`, else SARIF's default, warning;
//! - the message is `message.text`, else `message.markdown`, else `""`.
//! - the output is always a JSON object, so empty output is a [`ParseError`].

use serde::Deserialize;

use super::{ParseError, RawFinding, Severity, error};

#[derive(Deserialize)]
struct Log {
    runs: Vec<Run>,
}

#[derive(Deserialize)]
struct Run {
    #[serde(default)]
    results: Option<Vec<SarifResult>>,
    tool: Option<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    driver: Driver,
}

#[derive(Deserialize)]
struct Driver {
    #[serde(default)]
    rules: Vec<Rule>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    #[serde(default)]
    id: String,
    default_configuration: Option<RuleConfiguration>,
}

#[derive(Deserialize)]
struct RuleConfiguration {
    level: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: Option<String>,
    rule_index: Option<usize>,
    rule: Option<RuleReference>,
    level: Option<String>,
    #[serde(default)]
    message: Message,
    #[serde(default)]
    locations: Vec<Location>,
}

#[derive(Deserialize)]
struct RuleReference {
    id: Option<String>,
    index: Option<usize>,
}

#[derive(Deserialize, Default)]
struct Message {
    text: Option<String>,
    markdown: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: Option<PhysicalLocation>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: Option<ArtifactLocation>,
    region: Option<Region>,
}

#[derive(Deserialize)]
struct ArtifactLocation {
    uri: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: Option<usize>,
    start_column: Option<usize>,
}

/// Parses a SARIF 2.1.0 log.
pub fn sarif(stdout: &str) -> Result<Vec<RawFinding>, ParseError> {
    if stdout.trim().is_empty() {
        return Err(error(
            "sarif",
            "empty output (a SARIF log is a JSON object)",
        ));
    }
    let log: Log =
        serde_json::from_str(stdout).map_err(|e| error("sarif", format!("bad JSON: {e}")))?;
    let mut found = Vec::new();
    for run in log.runs {
        let rules = run.tool.map(|t| t.driver.rules).unwrap_or_default();
        for result in run.results.unwrap_or_default() {
            found.push(finding(result, &rules)?);
        }
    }
    Ok(found)
}

fn finding(result: SarifResult, rules: &[Rule]) -> Result<RawFinding, ParseError> {
    let (reference_id, reference_index) = result.rule.map_or((None, None), |r| (r.id, r.index));
    let rule = result
        .rule_index
        .or(reference_index)
        .and_then(|index| rules.get(index));
    let rule_id = result
        .rule_id
        .or(reference_id)
        .or_else(|| rule.map(|r| r.id.clone()))
        .unwrap_or_default();
    let rule = rule.or_else(|| rules.iter().find(|r| r.id == rule_id));
    let level = result.level.or_else(|| {
        rule.and_then(|r| r.default_configuration.as_ref())
            .and_then(|c| c.level.clone())
    });
    let severity = match level.as_deref() {
        Some("error") => Severity::Error,
        Some("warning") | None => Severity::Warning,
        Some("note" | "none") => Severity::Info,
        Some(other) => return Err(error("sarif", format!("unknown level `{other}`"))),
    };
    let physical = result
        .locations
        .into_iter()
        .next()
        .and_then(|l| l.physical_location);
    let (uri, region) = physical.map_or((None, None), |p| {
        (p.artifact_location.and_then(|a| a.uri), p.region)
    });
    let path = match uri {
        Some(uri) => decode_uri(&uri)?,
        None => String::new(),
    };
    Ok(RawFinding {
        path,
        line: region.as_ref().and_then(|r| r.start_line).unwrap_or(0),
        column: region.as_ref().and_then(|r| r.start_column).unwrap_or(0),
        rule: rule_id,
        severity,
        message: result
            .message
            .text
            .or(result.message.markdown)
            .unwrap_or_default(),
    })
}

/// A URI as a path: without `file://`, `%XX` escapes decoded.
fn decode_uri(uri: &str) -> Result<String, ParseError> {
    let uri = uri.strip_prefix("file://").unwrap_or(uri);
    let bytes = uri.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes
            .get(i + 1..i + 3)
            .filter(|hex| bytes[i] == b'%' && hex.iter().all(u8::is_ascii_hexdigit))
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).map_err(|_| error("sarif", format!("URI `{uri}` is not UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruff_sarif_results() {
        let found = sarif(include_str!("testdata/sarif-ruff-violation.txt")).unwrap();
        let summary: Vec<(&str, usize, usize, &str)> = found
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.column, f.rule.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("/tmp/pg/py/pkg/bad.py", 1, 1, "E401"),
                ("/tmp/pg/py/pkg/bad.py", 1, 8, "F401"),
                ("/tmp/pg/py/pkg/bad.py", 1, 12, "F401"),
                ("/tmp/pg/py/pkg/bad.py", 5, 5, "F841"),
                ("/tmp/pg/py/pkg/syn.py", 1, 7, "invalid-syntax"),
                ("/tmp/pg/py/pkg/syn.py", 1, 8, "invalid-syntax"),
            ]
        );
        assert!(found.iter().all(|f| f.severity == Severity::Error));
        assert_eq!(found[1].message, "`os` imported but unused");
    }

    #[test]
    fn percent_escapes_are_decoded() {
        let out = include_str!("testdata/sarif-ruff-encoded.txt");
        assert!(out.contains("file:///tmp/pg/py/pkg/sub%20dir/%C3%BC%20ber.py"));
        let found = sarif(out).unwrap();
        assert_eq!(found[0].path, "/tmp/pg/py/pkg/sub dir/ü ber.py");
        assert_eq!(found[0].rule, "F401");
    }

    #[test]
    fn clean_log_has_no_results() {
        assert_eq!(
            sarif(include_str!("testdata/sarif-ruff-clean.txt")),
            Ok(vec![])
        );
    }

    #[test]
    fn levels_rule_indexes_and_missing_locations() {
        // Written by hand to the SARIF 2.1.0 schema: fields ruff does not use.
        let log = r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","rules":[
            {"id":"R1","defaultConfiguration":{"level":"note"}},{"id":"R2"}]}},
          "results":[
            {"ruleIndex":0,"message":{"text":"by index, level from the rule"}},
            {"rule":{"id":"R2"},"message":{"markdown":"*md*"},"locations":[{"physicalLocation":
              {"artifactLocation":{"uri":"src/a%2Bb.go","uriBaseId":"%SRCROOT%"},"region":{"startLine":3}}}]},
            {"ruleId":"R3","level":"none","message":{"text":"none"}},
            {"ruleId":"R4","level":"warning","message":{"text":"w"}},
            {"message":{"text":"no rule, default level"}}]},
          {"tool":{"driver":{"name":"y"}},"results":null}]}"#;
        let found = sarif(log).unwrap();
        let summary: Vec<(&str, usize, usize, &str, Severity, &str)> = found
            .iter()
            .map(|f| {
                let RawFinding {
                    path,
                    line,
                    column,
                    rule,
                    severity,
                    message,
                } = f;
                (
                    path.as_str(),
                    *line,
                    *column,
                    rule.as_str(),
                    *severity,
                    message.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "",
                    0,
                    0,
                    "R1",
                    Severity::Info,
                    "by index, level from the rule"
                ),
                ("src/a+b.go", 3, 0, "R2", Severity::Warning, "*md*"),
                ("", 0, 0, "R3", Severity::Info, "none"),
                ("", 0, 0, "R4", Severity::Warning, "w"),
                ("", 0, 0, "", Severity::Warning, "no rule, default level"),
            ]
        );
    }

    #[test]
    fn garbage_truncated_and_bad_values_are_errors() {
        assert!(sarif("").is_err());
        assert!(sarif("[]").is_err());
        let full = include_str!("testdata/sarif-ruff-violation.txt");
        assert!(
            sarif(&full[..full.len() / 2])
                .unwrap_err()
                .0
                .starts_with("sarif: bad JSON")
        );
        let odd = r#"{"runs":[{"results":[{"level":"fatal","message":{"text":"m"}}]}]}"#;
        assert!(sarif(odd).unwrap_err().0.contains("`fatal`"));
        assert_eq!(decode_uri("a%zzb%+1%4").unwrap(), "a%zzb%+1%4");
        assert!(decode_uri("a%FFb").is_err());
    }
}
