//! Benchmark of the built-in syntax gate: `cargo bench --bench syntax` (release profile).
//!
//! For each covered language it generates a file of about 2,000 lines (varied names, the
//! constructs real code has), makes a small edit in the middle, and prints the median time of
//! `syntax::new_errors(original, patched)` (original parsed, patched reparsed from its tree)
//! for three edits: a clean one, one that breaks the syntax, and a clean one in a file that
//! already had an error (the path that diffs the two texts); the first two also with the
//! original's tree cached (`syntax::trees`, as a long-running server has it), where the patched
//! text is only reparsed where it changed. A full parse of the patched text
//! alone is printed for comparison. `RUNS` (default 50) sets the number of timed runs. Each
//! figure is the median wall time and, in brackets, the median CPU time of the thread.
//! Under `cargo test --all-targets` (no `--bench` argument) it only checks the verdicts.
//! A second table times `syntax::symbols` (definitions, identifier uses) on the same files.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test that cannot set up its repository should stop there"
)]
#![allow(unreachable_pub, reason = "a test binary has no public API")]

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use patchgate::syntax::{self, Language};

const TARGET_LINES: usize = 2000;

struct Case {
    rel: &'static str,
    text: String,
    /// A clean edit: (from, to), `from` occurring in the middle of the file.
    clean: (String, String),
    /// An edit that leaves a syntax error.
    broken: (String, String),
    /// An error near the top of the file, unrelated to the edits.
    earlier_error: (String, String),
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this too, without it: then
    // only the verdicts are checked, a test of the gate on the generated files, not a benchmark.
    if !std::env::args().any(|a| a == "--bench") {
        for case in cases() {
            check_verdicts(&case);
        }
        println!("syntax bench: verdicts checked (run `cargo bench --bench syntax` for timings)");
        return;
    }
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(50)
        .max(1);
    println!("syntax gate, {runs} runs per figure; medians in ms: wall time (thread CPU time)");
    println!(
        "| file | lines | KB | clean edit | clean, original's tree cached | breaking edit | \
         breaking, original's tree cached | edit, file already broken | full parse |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for case in cases() {
        let lines = case.text.lines().count();
        let kb = case.text.len() as f64 / 1024.0;
        let Texts {
            clean,
            broken,
            already,
            already_edited,
        } = check_verdicts(&case);
        let verdict = |before: &str, after: &str| {
            syntax::new_errors(case.rel, Some(before), after).expect("a covered language")
        };
        let lang = Language::from_path(case.rel).expect("covered");
        // Cold: no tree cached (a one-shot `patchgate apply`). Warm: the original's tree is
        // cached (a server's next patch to a file it just wrote), untimed.
        let cold = || syntax::trees::forget();
        let warm = |original: &str| {
            syntax::trees::forget();
            if lang.is_tree_sitter() {
                syntax::trees::tree(lang, original, None);
            }
        };
        let t_clean = median_after(runs, cold, || verdict(&case.text, &clean).len());
        let t_clean_warm = median_after(
            runs,
            || warm(&case.text),
            || verdict(&case.text, &clean).len(),
        );
        let t_broken = median_after(runs, cold, || verdict(&case.text, &broken).len());
        let t_broken_warm = median_after(
            runs,
            || warm(&case.text),
            || verdict(&case.text, &broken).len(),
        );
        let t_already = median_after(runs, cold, || verdict(&already, &already_edited).len());
        let t_full = if lang.is_tree_sitter() {
            let t = median(runs, || {
                syntax::languages::parse(lang, &clean)
                    .map(|t| t.root_node().child_count())
                    .unwrap_or(0) as usize
            });
            let peer = "a full parse of the patched text";
            let what = format!("syntax gate, {}, clean edit", case.rel);
            figure(&format!("{what}, cold (target < 10 ms)"), t_clean, peer, t);
            figure(
                &format!("{what}, original's tree cached"),
                t_clean_warm,
                peer,
                t,
            );
            ms(t)
        } else {
            "(same parser)".into()
        };
        println!(
            "| {} | {lines} | {kb:.0} | {} | {} | {} | {} | {} | {t_full} |",
            case.rel,
            ms(t_clean),
            ms(t_clean_warm),
            ms(t_broken),
            ms(t_broken_warm),
            ms(t_already)
        );
    }
    println!();
    println!(
        "symbols (`syntax::symbols`, one parse each), medians in ms: wall time (thread CPU time)"
    );
    println!(
        "| file | definitions | found | identifier_uses | found | lexer: uses of 3 names | found |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for case in cases() {
        let Some(defs) = syntax::symbols::definitions(case.rel, &case.text) else {
            continue;
        };
        let uses = syntax::symbols::identifier_uses(case.rel, &case.text).unwrap_or_default();
        let t_defs = median(runs, || {
            syntax::symbols::definitions(case.rel, &case.text).map_or(0, |d| d.len())
        });
        let t_uses = median(runs, || {
            syntax::symbols::identifier_uses(case.rel, &case.text).map_or(0, |u| u.len())
        });
        // What the reference check's scan does with an unchanged file: the uses of a few
        // removed names, found by the lexer instead of a parse.
        let lang = Language::from_path(case.rel).expect("covered");
        let names: std::collections::HashSet<&str> = defs
            .iter()
            .step_by(defs.len() / 3 + 1)
            .map(|d| d.name.as_str())
            .collect();
        let lexed = syntax::lexer::occurrences(lang, &case.text, &names);
        let t_lex = median(runs, || {
            syntax::lexer::occurrences(lang, &case.text, &names).map_or(0, |o| o.len())
        });
        if lexed.is_some() {
            figure(
                &format!("references: uses of 3 names in {}, lexer", case.rel),
                t_lex,
                "a parse for identifier uses",
                t_uses,
            );
        }
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            case.rel,
            ms(t_defs),
            defs.len(),
            ms(t_uses),
            uses.len(),
            ms(t_lex),
            lexed.map_or("declined".to_string(), |o| o.len().to_string())
        );
    }
}

/// One figure (CPU time, ms) against its peer in the same run, appended to `$BENCH_FIGURES` when
/// set (the table `bench/run.sh` prints; the format of `figure` in bench/lib.sh).
fn figure(
    name: &str,
    (_, cpu): (Duration, Duration),
    peer: &str,
    (_, peer_cpu): (Duration, Duration),
) {
    let Some(path) = std::env::var_os("BENCH_FIGURES") else {
        return;
    };
    let (v, p) = (cpu.as_secs_f64() * 1e3, peer_cpu.as_secs_f64() * 1e3);
    let ratio = if p > 0.0 {
        format!("{:.2}", v / p)
    } else {
        "nan".into()
    };
    let line = format!("syntax\t{name} (CPU)\t{v:.2}\t{peer}\t{p:.2}\tms\t{ratio}\t\n");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("BENCH_FIGURES is writable");
    std::io::Write::write_all(&mut f, line.as_bytes()).expect("BENCH_FIGURES is writable");
}

/// The edited texts of a case.
struct Texts {
    clean: String,
    broken: String,
    /// The original with an unrelated error near its top, and that with the clean edit.
    already: String,
    already_edited: String,
}

/// Makes the edits of a case and checks the gate's verdict on each: no error, an error, no
/// error.
fn check_verdicts(case: &Case) -> Texts {
    let mid = |(from, to): &(String, String), text: &str| -> String {
        let at = text[text.len() / 2..]
            .find(from.as_str())
            .map(|i| i + text.len() / 2)
            .unwrap_or_else(|| panic!("{}: {from:?} not found after the middle", case.rel));
        format!("{}{}{}", &text[..at], to, &text[at + from.len()..])
    };
    let clean = mid(&case.clean, &case.text);
    let broken = mid(&case.broken, &case.text);
    let (e_from, e_to) = &case.earlier_error;
    let already = case.text.replacen(e_from.as_str(), e_to, 1);
    assert_ne!(already, case.text, "{}: no earlier error made", case.rel);
    let already_edited = mid(&case.clean, &already);
    let verdict = |before: Option<&str>, after: &str| {
        syntax::new_errors(case.rel, before, after).expect("a covered language")
    };
    let rel = case.rel;
    assert_eq!(
        verdict(Some(&case.text), &clean),
        vec![],
        "{rel}: clean edit"
    );
    assert!(
        !verdict(Some(&case.text), &broken).is_empty(),
        "{rel}: breaking edit"
    );
    assert!(
        !verdict(None, &already).is_empty(),
        "{rel}: the earlier error is one"
    );
    assert_eq!(
        verdict(Some(&already), &already_edited),
        vec![],
        "{rel}: unrelated edit in a broken file"
    );
    // The same verdicts, to the letter, when the original's tree is cached and the patched
    // text is reparsed from it.
    let lang = Language::from_path(rel).expect("covered");
    for (before, after) in [
        (&case.text, &clean),
        (&case.text, &broken),
        (&already, &already_edited),
    ] {
        syntax::trees::forget();
        let cold = verdict(Some(before), after);
        syntax::trees::forget();
        if lang.is_tree_sitter() {
            syntax::trees::tree(lang, before, None);
        }
        assert_eq!(verdict(Some(before), after), cold, "{rel}: cached original");
    }
    Texts {
        clean,
        broken,
        already,
        already_edited,
    }
}

/// "wall (cpu)" in milliseconds.
fn ms((wall, cpu): (Duration, Duration)) -> String {
    format!(
        "{:.1} ({:.1})",
        wall.as_secs_f64() * 1000.0,
        cpu.as_secs_f64() * 1000.0
    )
}

/// The median (wall time, this thread's CPU time) of `runs` calls after one warm-up call. On a
/// shared machine the CPU time is the steadier figure: it leaves out the time the thread waited
/// for a core.
fn median(runs: usize, f: impl FnMut() -> usize) -> (Duration, Duration) {
    median_after(runs, || {}, f)
}

/// [`median`], with `setup` run untimed before each call.
fn median_after(
    runs: usize,
    mut setup: impl FnMut(),
    mut f: impl FnMut() -> usize,
) -> (Duration, Duration) {
    setup();
    black_box(f());
    let (mut wall, mut cpu): (Vec<Duration>, Vec<Duration>) = (0..runs)
        .map(|_| {
            setup();
            let (start, start_cpu) = (Instant::now(), thread_cpu());
            black_box(f());
            (start.elapsed(), thread_cpu().saturating_sub(start_cpu))
        })
        .unzip();
    wall.sort();
    cpu.sort();
    (wall[wall.len() / 2], cpu[cpu.len() / 2])
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            rel: "gen/service.py",
            text: python(),
            clean: pair("limit = 10", "limit = 20"),
            broken: pair("total += item.weight", "total += (item.weight"),
            earlier_error: pair("import json\n", "import json\n  import sys\n"),
        },
        Case {
            rel: "gen/service.js",
            text: script(false),
            clean: pair("limit = 10", "limit = 20"),
            broken: pair("total += item.weight;", "total += (item.weight;"),
            earlier_error: pair("'use strict';", "'use strict'; const = 1;"),
        },
        Case {
            rel: "gen/service.ts",
            text: script(true),
            clean: pair("limit = 10", "limit = 20"),
            broken: pair("total += item.weight;", "total += (item.weight;"),
            earlier_error: pair("'use strict';", "'use strict'; const = 1;"),
        },
        Case {
            rel: "gen/view.tsx",
            text: tsx(),
            clean: pair("limit = 10", "limit = 20"),
            broken: pair("<li key={it.id}>", "<li key={it.id>"),
            earlier_error: pair("'use strict';", "'use strict'; const = 1;"),
        },
        Case {
            rel: "gen/service.rs",
            text: rust(),
            clean: pair("limit = 10", "limit = 20"),
            broken: pair("total += item.weight;", "total += (item.weight;"),
            earlier_error: pair("use std::fmt;", "use std::fmt"),
        },
        Case {
            rel: "gen/service.go",
            text: go(),
            clean: pair("limit := 10", "limit := 20"),
            broken: pair("total += item.Weight", "total += (item.Weight"),
            earlier_error: pair("\tWeight int\n", "\tWeight int =\n"),
        },
        Case {
            rel: "gen/data.json",
            text: json(),
            clean: pair("\"limit\": 10", "\"limit\": 20"),
            broken: pair("\"limit\": 10", "\"limit\": 10,,"),
            earlier_error: pair("{\n", "{\n,"),
        },
        Case {
            rel: "gen/config.toml",
            text: toml(),
            clean: pair("limit = 10", "limit = 20"),
            broken: pair("limit = 10", "limit = [10"),
            earlier_error: pair("[meta]", "[meta"),
        },
        Case {
            rel: "gen/config.yaml",
            text: yaml(),
            clean: pair("limit: 10", "limit: 20"),
            broken: pair("limit: 10", "limit: [10"),
            earlier_error: pair("meta:", "meta: ]"),
        },
    ]
}

const WORDS: [&str; 16] = [
    "order", "user", "batch", "ledger", "cache", "queue", "report", "session", "token", "route",
    "image", "policy", "record", "stream", "invoice", "metric",
];

/// A distinct name for unit `i` (`order_cache_3`-like).
fn name(i: usize) -> String {
    format!("{}_{}_{}", WORDS[i % 16], WORDS[(i / 16) % 16], i / 256)
}

fn camel(i: usize) -> String {
    name(i)
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Units appended until the file reaches the target length.
fn grow(mut out: String, unit: impl Fn(usize) -> String) -> String {
    let mut i = 0;
    while out.lines().count() < TARGET_LINES {
        out.push_str(&unit(i));
        i += 1;
    }
    out
}

fn python() -> String {
    let head = "\"\"\"Generated service module.\"\"\"\nfrom __future__ import annotations\n\nimport json\nimport os\nfrom dataclasses import dataclass, field\n\n\n".to_string();
    grow(head, |i| {
        let n = name(i);
        let c = camel(i);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"@dataclass
class {c}:
    """A {w} and its items."""

    key: str
    items: list[dict[str, int]] = field(default_factory=list)

    def total(self, limit = 10) -> int:
        total = 0
        for item in self.items[:limit]:
            if item.get("weight", 0) > {i}:
                total += item["weight"]
            elif not item:
                continue
        return total

    def describe(self) -> str:
        names = [f"{{k}}={{v!r}}" for k, v in sorted(self.items[0].items())] if self.items else []
        return f"{c}({{self.key}}, {{', '.join(names)}})"


def load_{n}(path: str) -> {c}:
    with open(os.path.join("data", path), encoding="utf-8") as fh:
        raw = json.load(fh)  # trusted input
    try:
        return {c}(key=raw["key"], items=raw.get("items", []))
    except KeyError as exc:
        raise ValueError(f"bad {{path}}: {{exc}}") from exc


def weigh_{n}(batch):
    total = 0
    for item in batch:
        total += item.weight
    return total


"#,
            w = WORDS[i % 16]
        );
        s
    })
}

fn script(typed: bool) -> String {
    let head =
        "'use strict';\nimport fs from 'node:fs';\nimport path from 'node:path';\n\n".to_string();
    grow(head, |i| {
        let n = camel(i);
        let (param, ret, field) = if typed {
            (
                ": Item[]",
                ": number",
                "  private readonly items: Item[] = [];\n",
            )
        } else {
            ("", "", "")
        };
        let iface = if typed {
            format!(
                "export interface {n}Options<T extends object = Record<string, unknown>> {{\n  key: string;\n  limit?: number;\n  extra?: T;\n}}\n\nexport type {n}Id = `{n}-${{number}}`;\n\n"
            )
        } else {
            String::new()
        };
        format!(
            r#"{iface}export class {n} {{
{field}  constructor(key{ts}) {{
    this.key = key;
  }}

  total(limit = 10){ret} {{
    let total = 0;
    for (const item of this.items.slice(0, limit)) {{
      if (item.weight > {i}) {{
        total += item.weight;
      }} else if (!item) {{
        continue;
      }}
    }}
    return total;
  }}

  describe() {{
    const names = this.items.map((it) => `${{it.name}}=${{JSON.stringify(it.value)}}`);
    return `{n}(${{this.key}}, ${{names.join(', ')}})`;
  }}
}}

export async function load{n}(file) {{
  const raw = JSON.parse(await fs.promises.readFile(path.join('data', file), 'utf8'));
  return {{ key: raw.key ?? 'none', items: [...(raw.items || [])], size: raw.items?.length }};
}}

export const weigh{n} = (batch{param}){ret} => {{
  let total = 0;
  for (const item of batch) {{
    total += item.weight;
  }}
  return total;
}};

"#,
            ts = if typed { ": string" } else { "" },
        )
    })
}

fn tsx() -> String {
    let head = "'use strict';\nimport React, { useState } from 'react';\n\ntype Item = { id: string; weight: number };\n\n".to_string();
    grow(head, |i| {
        let n = camel(i);
        format!(
            r#"export function {n}List({{ items, title }}: {{ items: Item[]; title: string }}) {{
  const [open, setOpen] = useState<boolean>(false);
  const limit = 10;
  const shown = items.slice(0, limit).filter((it) => it.weight > {i});
  return (
    <section className="list {n}">
      <h2 onClick={{() => setOpen(!open)}}>{{title}}</h2>
      {{open && (
        <ul>
          {{shown.map((it) => (
            <li key={{it.id}}>{{it.id}}: {{it.weight}}</li>
          ))}}
        </ul>
      )}}
    </section>
  );
}}

"#
        )
    })
}

fn rust() -> String {
    let head = "//! Generated service module.\n\nuse std::collections::HashMap;\nuse std::fmt;\n\npub struct Item {\n    pub weight: u64,\n    pub name: String,\n}\n\n".to_string();
    grow(head, |i| {
        let n = name(i);
        let c = camel(i);
        format!(
            r#"/// A {w} and its items.
#[derive(Debug, Default)]
pub struct {c} {{
    key: String,
    items: Vec<Item>,
    seen: HashMap<String, usize>,
}}

impl {c} {{
    pub fn total(&self) -> u64 {{
        let limit = 10;
        let mut total = 0;
        for item in self.items.iter().take(limit) {{
            if item.weight > {i} {{
                total += item.weight;
            }} else if item.name.is_empty() {{
                continue;
            }}
        }}
        total
    }}

    pub fn seen(&mut self, name: &str) -> usize {{
        let entry = self.seen.entry(name.to_string()).or_insert(0);
        *entry += 1;
        *entry
    }}
}}

impl fmt::Display for {c} {{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{
        write!(f, "{c}({{}}, {{}} items)", self.key, self.items.len())
    }}
}}

pub fn load_{n}(raw: &str) -> Result<{c}, String> {{
    let key = raw.lines().next().ok_or_else(|| "empty".to_string())?;
    Ok({c} {{ key: key.to_string(), ..Default::default() }})
}}

"#,
            w = WORDS[i % 16]
        )
    })
}

fn go() -> String {
    let head = "// Package gen is a generated service.\npackage gen\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n// Item is a weighed thing.\ntype Item struct {\n\tWeight int\n\tName   string\n}\n\n".to_string();
    grow(head, |i| {
        let c = camel(i);
        format!(
            r#"// {c} is a {w} and its items.
type {c} struct {{
	Key   string
	Items []Item
	seen  map[string]int
}}

// Total weighs the first items.
func (x *{c}) Total() int {{
	limit := 10
	total := 0
	for i, item := range x.Items {{
		if i >= limit {{
			break
		}}
		if item.Weight > {i} {{
			total += item.Weight
		}} else if item.Name == "" {{
			continue
		}}
	}}
	return total
}}

func (x *{c}) String() string {{
	names := make([]string, 0, len(x.Items))
	for _, it := range x.Items {{
		names = append(names, fmt.Sprintf("%s=%d", it.Name, it.Weight))
	}}
	return fmt.Sprintf("{c}(%s, %s)", x.Key, strings.Join(names, ", "))
}}

"#,
            w = WORDS[i % 16]
        )
    })
}

fn json() -> String {
    let mut out =
        String::from("{\n  \"meta\": {\"version\": 3, \"generated\": true},\n  \"entries\": [\n");
    let mut i = 0;
    while out.lines().count() < TARGET_LINES - 10 {
        let _ = write!(
            out,
            "    {{\n      \"name\": \"{}\",\n      \"limit\": 10,\n      \"weights\": [{i}, {}, {}],\n      \"tags\": {{\"a\": \"x\\u00e9\", \"b\": null}}\n    }},\n",
            name(i),
            i * 2,
            i * 3
        );
        i += 1;
    }
    out.push_str("    {}\n  ]\n}\n");
    out
}

fn toml() -> String {
    let head = "[meta]\nversion = 3\ngenerated = true\n\n".to_string();
    grow(head, |i| {
        format!(
            "[[entry]]\nname = \"{}\"\nlimit = 10\nweights = [{i}, {}, {}]\ntags = {{ a = \"x\", b = 'y' }}\n\n",
            name(i),
            i * 2,
            i * 3
        )
    })
}

fn yaml() -> String {
    let head = "meta:\n  version: 3\n  generated: true\nentries:\n".to_string();
    grow(head, |i| {
        format!(
            "  - name: {}\n    limit: 10\n    weights: [{i}, {}, {}]\n    tags:\n      a: \"x\"\n      b: null\n",
            name(i),
            i * 2,
            i * 3
        )
    })
}
