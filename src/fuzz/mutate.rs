//! A cheap mutation fuzzer run by every `cargo test`: each target's seed corpus (the fixtures'
//! seeds and the kept crash inputs of `fuzz/regressions/`) is mutated into a fixed number of
//! inputs (byte flips, inserts, deletes, repeated chunks, splices of two seeds, the bytes and
//! tokens the formats care about) that go through the same [`Target::run`] as cargo-fuzz's. It
//! is not coverage-guided (that is `scripts/fuzz`), but it runs on every CI run without an
//! instrumented build.
//!
//! Invariants: the run is bounded by a count, not by time, so a given RNG seed always makes the
//! same inputs. The seed is fixed unless `PATCHGATE_FUZZ_SEED` sets one (CI passes a fresh one
//! per run); a failure prints the seed, the case number and the input, and saves the input under
//! `fuzz/artifacts/<target>/` so it can be kept in `fuzz/regressions/<target>/`.

use std::path::{Path, PathBuf};

use super::*;

/// The seed used when `PATCHGATE_FUZZ_SEED` is not set.
const DEFAULT_SEED: u64 = 0x005e_ed0f_9a7c_4a7e;
/// Inputs per target; `PATCHGATE_FUZZ_CASES` overrides it for a longer local run. About a
/// second per target in a debug build; line endings are cheaper, so get 25 times more.
const DEFAULT_CASES: usize = 4000;
/// Mutated inputs are cut to this length: larger ones only slow the run down.
const MAX_LEN: usize = 8 << 10;

/// Bytes and tokens that mean something to some format: line breaks, NUL, invalid UTF-8, a BOM,
/// diff hunk headers and lines, conflict markers, codex envelopes, YAML/JSON syntax, paths.
const TOKENS: &[&[u8]] = &[
    b"\r",
    b"\n",
    b"\r\n",
    b"\0",
    b"\xff",
    b"\xef\xbb\xbf",
    b"@@",
    b"@@ -1,2 +1,2 @@\n",
    b"@@ -0,0 +1 @@\n",
    b"<<<<<<<",
    b"<<<<<<< SEARCH\n",
    b"=======\n",
    b">>>>>>> REPLACE\n",
    b"***",
    b"*** Begin Patch\n",
    b"*** End Patch\n",
    b"*** Update File: ",
    b"*** Add File: ",
    b"*** Delete File: ",
    b"*** Move to: ",
    b"*** End of File\n",
    b"--- a/",
    b"+++ b/",
    b"diff --git a/x b/x\n",
    b"\\ No newline at end of file\n",
    b"rename from ",
    b"+",
    b"-",
    b" ",
    b"\t",
    b"- file_path: ",
    b"  old_string: ",
    b"  new_string: ",
    b"|\n",
    b"&a ",
    b"*a",
    b"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b"../",
    b".git/",
    b"/",
    b"\xe2\x80\x94",
];

/// xorshift64*: small, fast, and the same sequence on every platform.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Zero is xorshift's fixed point; splitmix's constant keeps nearby seeds apart.
        Rng((seed ^ 0x9e37_79b9_7f4a_7c15).max(1))
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// A position in `data`: half the time the start of a line, where line-based formats look.
fn position(rng: &mut Rng, data: &[u8]) -> usize {
    let at = rng.below(data.len() + 1);
    if rng.below(2) == 0 {
        return at;
    }
    data[..at]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1)
}

/// One mutation of `data` in place, drawing on `corpus` for splices.
fn mutate_once(rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    let token = TOKENS[rng.below(TOKENS.len())];
    match rng.below(9) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] = [0, 0xff, b'\r', b'\n', b' ', 0x80, rng.next() as u8][rng.below(7)];
        }
        2 => {
            let at = position(rng, data);
            data.splice(at..at, token.iter().copied());
        }
        3 if !data.is_empty() => {
            let at = position(rng, data);
            let len = 1 + rng.below((data.len() - at).min(64));
            data.drain(at..(at + len).min(data.len()));
        }
        4 if !data.is_empty() => {
            // A repeated chunk: a line or a few bytes, two to eight times.
            let at = rng.below(data.len());
            let len = 1 + rng.below((data.len() - at).min(128));
            let chunk = data[at..at + len].to_vec();
            let times = 2 + rng.below(7);
            let copies: Vec<u8> = chunk.iter().copied().cycle().take(len * times).collect();
            data.splice(at..at, copies);
        }
        5 => {
            // This input's head, another seed's tail.
            let other = &corpus[rng.below(corpus.len())];
            let at = position(rng, data);
            let from = rng.below(other.len() + 1);
            data.truncate(at);
            data.extend_from_slice(&other[from..]);
        }
        6 if !data.is_empty() => {
            let at = position(rng, data);
            let end = (at + token.len()).min(data.len());
            data.splice(at..end, token.iter().copied());
        }
        7 if !data.is_empty() => {
            // Three targets read options from their first bytes (see [`Target`]): the extremes
            // of those choose the ends of ranges and the first or last option.
            let i = rng.below(data.len().min(3));
            data[i] = [0, 0xff, 1, rng.next() as u8][rng.below(4)];
        }
        _ => {
            let at = position(rng, data);
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            data.splice(at..at, bytes);
        }
    }
}

/// Case `n` of a run: a seed with one to eight mutations.
fn mutant(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut data = corpus[rng.below(corpus.len())].clone();
    for _ in 0..1 + rng.below(8) {
        mutate_once(rng, &mut data, corpus);
    }
    data.truncate(MAX_LEN);
    data
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// The corpus a target's run mutates: its seeds and its kept crash inputs.
fn corpus(t: Target, root: &Path) -> Vec<Vec<u8>> {
    let mut out = seeds(t, root);
    let dir = root.join("fuzz/regressions").join(t.name());
    let mut kept: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    kept.sort();
    out.extend(kept.iter().filter_map(|p| std::fs::read(p).ok()));
    out
}

/// The first of `cases` mutated inputs that `check` panics on, as (case number, input).
fn first_failure(
    t: Target,
    seed: u64,
    cases: usize,
    corpus: &[Vec<u8>],
    check: &dyn Fn(&[u8]),
) -> Option<(usize, Vec<u8>)> {
    // Each target draws its own stream, so adding a target does not change the others' inputs.
    let mut rng = Rng::new(seed ^ (t as u64 + 1).wrapping_mul(0xd6e8_feb8_6659_fd93));
    (0..cases).find_map(|n| {
        let data = mutant(&mut rng, corpus);
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&data))).is_ok();
        (!ok).then_some((n, data))
    })
}

/// Runs `t` on its mutated corpus; on a failure saves the input and panics with what reproduces it.
fn run(t: Target) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seed = env_number("PATCHGATE_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let cases = env_number("PATCHGATE_FUZZ_CASES").map_or(
        match t {
            Target::LineEndings => 25 * DEFAULT_CASES,
            _ => DEFAULT_CASES,
        },
        |n| n as usize,
    );
    let corpus = corpus(t, root);
    assert!(!corpus.is_empty(), "{}: no seeds to mutate", t.name());
    let started = std::time::Instant::now();
    let Some((n, data)) = first_failure(t, seed, cases, &corpus, &|d| t.run(d)) else {
        eprintln!(
            "{}: {cases} mutated inputs passed (PATCHGATE_FUZZ_SEED={seed}, {:.1?})",
            t.name(),
            started.elapsed()
        );
        return;
    };
    let dir = root.join("fuzz/artifacts").join(t.name());
    let path = dir.join(format!("mutation-seed{seed}-case{n}"));
    let saved = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, &data))
        .map_or_else(
            |e| format!("could not be saved to {}: {e}", path.display()),
            |()| format!("saved to {}", path.display()),
        );
    panic!(
        "{target} failed on mutated input {n} of PATCHGATE_FUZZ_SEED={seed} (the panic above says \
         which check); the input ({len} bytes) is {saved}:\n\"{shown}\"\nReproduce: \
         PATCHGATE_FUZZ_SEED={seed} cargo test --lib fuzz::mutate::{target}; keep it as a \
         regression: copy it into fuzz/regressions/{target}/ under a name saying what it caught.",
        target = t.name(),
        len = data.len(),
        shown = data[..data.len().min(4000)].escape_ascii(),
    );
}

#[test]
fn patch_yaml_json() {
    run(Target::PatchYamlJson);
}

#[test]
fn input_codex() {
    run(Target::InputCodex);
}

#[test]
fn input_aider() {
    run(Target::InputAider);
}

#[test]
fn input_diff() {
    run(Target::InputDiff);
}

#[test]
fn matcher() {
    run(Target::Matcher);
}

#[test]
fn line_endings() {
    run(Target::LineEndings);
}

/// The run is a function of its seed, and it does find a broken property: a check that refuses
/// any input holding a CR right before a NUL is tripped within the same count, though no seed
/// holds one.
#[test]
fn the_run_is_reproducible_and_finds_a_planted_bug() {
    let corpus = corpus(Target::LineEndings, Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(!corpus.iter().any(|s| s.windows(2).any(|w| w == b"\r\0")));
    let planted = |d: &[u8]| assert!(!d.windows(2).any(|w| w == b"\r\0"), "planted");
    let first = first_failure(Target::LineEndings, 7, DEFAULT_CASES, &corpus, &planted);
    let again = first_failure(Target::LineEndings, 7, DEFAULT_CASES, &corpus, &planted);
    assert!(
        first.is_some(),
        "the mutations never made a CR before a NUL"
    );
    assert_eq!(first, again, "the same seed gives the same inputs");
    let other = first_failure(Target::LineEndings, 8, DEFAULT_CASES, &corpus, &planted);
    assert_ne!(first, other, "another seed gives other inputs");
}
