//! `stale` candidates: an `old_string` that was in the file before a recent change. The agent's
//! picture of the file is out of date; the answer is which change replaced the text (a patch in
//! patchgate's own history, a commit, or the working tree's uncommitted changes) and the current
//! text of the region that replaced it.
//!
//! # What is looked at
//!
//! Earlier versions of the file, newest first ([`versions`]): the version before each patch of
//! patchgate's history that changed the file (the entry's old blob), HEAD's version when the
//! working tree differs from it, then the version before each of the last [`MAX_CHANGES`] commits
//! that changed the file, found by walking at most [`MAX_WALK`] commits (and for at most
//! [`WALK_BUDGET`] per run) along first parents from the commit the plan reads. Everything is
//! read in-process with libgit2; no subprocess. The walk's outcome is kept on disk under the git
//! dir, keyed by that commit and the path ([`super::lookback`]), so a later run that misses in the
//! same file at the same commit skips it, and one whose walk the budget cut short goes on.
//!
//! # Matching and mapping
//!
//! The newest version holding `old_string` exactly (line endings folded), or equal once
//! whitespace is ignored, wins. Failing that, a version where most of its lines (at least
//! [`MIN_PARTIAL`] of the non-blank ones, in order, including one that the current file lacks)
//! stand together counts, reported as such. The old lines are then mapped through a line diff
//! between that version and the current text: unchanged lines map one to one, a changed hunk
//! maps to its new side. That region, in the current text, is the candidate.
//!
//! # Invariants
//!
//! * Runs only on a miss; an exact match never reaches this module.
//! * Bounded: at most [`MAX_WALK`] commits walked, for at most [`WALK_BUDGET`]; at most
//!   [`MAX_CHANGES`] commit versions and every history entry (at most 50 are kept) looked at, the
//!   newest [`MIN_READ`] always and older ones within [`READ_BUDGET`]; each version read once per
//!   process (cached by blob id, like the version list by commit and path), blobs over
//!   [`MAX_BLOB`] skipped. The budgets make a deep history on a loaded machine cost a few
//!   milliseconds, at the price of older versions not being looked at.
//! * A repository or object that cannot be read gives no candidate, never an error: this is
//!   advice on a miss that is reported anyway.
//! * Never applied, not even with `--lenient`.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use git2::{ObjectType, Oid, Repository};
use similar::{Algorithm, DiffTag, TextDiff};

use super::fuzzy::{collapsed_hash, round_similarity, similarity};
use super::lines::{FastMap, FileLines, Needle, is_blank, line_ranges, relaxed_starts};
use super::{Candidate, CandidateKind};

/// Commits walked along first parents, at most.
const MAX_WALK: usize = 200;
/// The walk stops after this long (a deep history on a slow disk): a miss is answered in
/// milliseconds, and the versions found by then are the recent ones that matter.
const WALK_BUDGET: Duration = Duration::from_millis(4);
/// Versions always read; more only within [`READ_BUDGET`] (a long file with a deep history: each
/// version is a blob to inflate).
const MIN_READ: usize = 4;
const READ_BUDGET: Duration = Duration::from_millis(4);
/// Commit versions of the file looked at, at most.
const MAX_CHANGES: usize = 20;
/// Larger versions are not read.
const MAX_BLOB: usize = 8 << 20;
/// Share of old_string's non-blank lines a version must hold together for a partial match.
const MIN_PARTIAL: f64 = 0.7;
/// A line diff that takes longer settles for a coarser one.
const DIFF_TIMEOUT: Duration = Duration::from_millis(20);
/// Versions kept in the per-process cache.
const CACHED_TEXTS: usize = 64;

/// Where a miss looks back: the repository and the commit the plan reads.
#[derive(Clone, Copy)]
pub struct History<'a> {
    pub repo: &'a Repository,
    pub git_dir: &'a Path,
    /// The commit whose history is looked back on (HEAD, or the branch tip with `--branch`).
    pub base: Option<Oid>,
    /// The plan reads the working tree: HEAD's version is an earlier one when the file differs.
    pub worktree: bool,
    /// patchgate's own history, oldest first, read only when a miss looks back. The transaction
    /// layer owns its files; it hands them in so that planning stays below it.
    pub patches: &'a dyn Fn() -> Vec<PastPatch>,
}

/// A patch in patchgate's history as the look-back sees it.
#[derive(Debug, Clone)]
pub struct PastPatch {
    pub id: String,
    /// The first line of its message.
    pub subject: String,
    /// Each file it wrote: (path, blob before, blob after); `None` where it was not a regular file.
    pub files: Vec<(String, Option<Oid>, Option<Oid>)>,
}

/// No history (tests, and callers without a repository's history).
pub fn no_patches() -> Vec<PastPatch> {
    Vec::new()
}

/// What replaced a text that `old_string` still has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeSource {
    /// A patch in patchgate's history (its id, and its message's first line).
    Patch { id: String, subject: String },
    /// A commit (its full id, and its message's first line).
    Commit { id: String, subject: String },
    /// The working tree's uncommitted changes (the text is the file as committed in HEAD).
    Uncommitted,
}

impl ChangeSource {
    /// How a message names the change: `patch 1764-…-12 ("subject")`, `commit 1a2b3c4d (…)`.
    pub fn describe(&self) -> String {
        let quoted = |s: &str| {
            let s: String = s.chars().take(60).collect();
            if s.is_empty() {
                String::new()
            } else {
                format!(" (\"{s}\")")
            }
        };
        match self {
            ChangeSource::Patch { id, subject } => format!("patch {id}{}", quoted(subject)),
            ChangeSource::Commit { id, subject } => {
                format!("commit {}{}", &id[..id.len().min(10)], quoted(subject))
            }
            ChangeSource::Uncommitted => "uncommitted changes in the working tree".into(),
        }
    }
}

#[derive(Clone)]
pub(super) struct Version {
    pub(super) oid: Oid,
    pub(super) source: ChangeSource,
}

/// The stale reading of a miss: the candidate and the sentence the miss message gets.
pub(super) struct Stale {
    pub(super) candidate: Candidate,
    /// `old_string` stood in that version whole (exactly or but for whitespace).
    pub(super) exact: bool,
    pub(super) message: String,
}

#[derive(Default)]
struct Cache {
    /// (git dir, base commit, path) → the commit versions of the file, newest first.
    commits: HashMap<(PathBuf, Option<Oid>, String), Arc<Vec<Version>>>,
    /// Blob → its text, line endings folded (`None`: not UTF-8, or too large).
    texts: HashMap<Oid, Option<Arc<String>>>,
    text_order: Vec<Oid>,
}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

fn with_cache<T>(f: impl FnOnce(&mut Cache) -> T) -> T {
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Cache::default))
}

/// The text of a blob, line endings folded, once per process.
fn text_of(repo: &Repository, oid: Oid) -> Option<Arc<String>> {
    if let Some(t) = with_cache(|c| c.texts.get(&oid).cloned()) {
        return t;
    }
    let text = repo.find_blob(oid).ok().and_then(|b| {
        let bytes = b.content();
        if bytes.len() > MAX_BLOB || memchr::memchr(0, bytes).is_some() {
            return None;
        }
        let s = std::str::from_utf8(bytes).ok()?;
        let s = s.strip_prefix('\u{feff}').unwrap_or(s);
        Some(Arc::new(s.replace("\r\n", "\n")))
    });
    with_cache(|c| {
        if c.text_order.len() >= CACHED_TEXTS {
            let old = c.text_order.remove(0);
            c.texts.remove(&old);
        }
        c.text_order.push(oid);
        c.texts.insert(oid, text.clone());
    });
    text
}

/// The blob of `path` in a commit's tree.
fn blob_at(commit: &git2::Commit, path: &str) -> Option<Oid> {
    let entry = commit.tree().ok()?.get_path(Path::new(path)).ok()?;
    (entry.kind() == Some(ObjectType::Blob) && entry.filemode() != 0o120000).then(|| entry.id())
}

/// The versions before the last commits that changed `path`, newest first (cached in the
/// process, and on disk between runs: [`super::lookback`]).
fn commit_versions(h: &History, path: &str) -> Arc<Vec<Version>> {
    let key = (h.git_dir.to_path_buf(), h.base, path.to_string());
    if let Some(v) = with_cache(|c| c.commits.get(&key).cloned()) {
        return v;
    }
    let mut out = Vec::new();
    if let Some(base) = h.base.filter(|b| h.repo.find_commit(*b).is_ok()) {
        let kept = super::lookback::load(h.repo, h.git_dir, base, path, MAX_WALK, MAX_CHANGES);
        let mut walk = kept.unwrap_or_else(|| super::lookback::Walk {
            resume: h
                .repo
                .find_commit(base)
                .ok()
                .map(|c| (base, blob_at(&c, path))),
            ..Default::default()
        });
        let walked = walk.walked;
        go_on(h, path, &mut walk);
        if walk.walked != walked && super::lookback::worth_keeping(&walk) {
            super::lookback::store(h.git_dir, base, path, &walk);
        }
        out = walk.versions;
    }
    let out = Arc::new(out);
    with_cache(|c| {
        if c.commits.len() > 256 {
            c.commits.clear();
        }
        c.commits.insert(key, Arc::clone(&out));
    });
    out
}

/// Walks on along first parents from where `w` stopped, within [`WALK_BUDGET`], until
/// [`MAX_WALK`] commits, [`MAX_CHANGES`] versions, the first commit, or the commit that created
/// the file; `w.resume` is left set only when the budget cut the walk short.
fn go_on(h: &History, path: &str, w: &mut super::lookback::Walk) {
    let Some((at, mut blob)) = w.resume.take() else {
        return;
    };
    let Ok(mut commit) = h.repo.find_commit(at) else {
        return;
    };
    let start = std::time::Instant::now();
    while w.walked < MAX_WALK && w.versions.len() < MAX_CHANGES {
        if start.elapsed() > WALK_BUDGET {
            w.resume = Some((commit.id(), blob));
            return;
        }
        let Ok(parent) = commit.parent(0) else {
            return;
        };
        w.walked += 1;
        let before = blob_at(&parent, path);
        if before != blob {
            match before {
                Some(oid) => w.versions.push(Version {
                    oid,
                    source: ChangeSource::Commit {
                        id: commit.id().to_string(),
                        subject: commit.summary().unwrap_or_default().to_string(),
                    },
                }),
                // The file did not exist before this commit: nothing earlier to look at.
                None => return,
            }
        }
        commit = parent;
        blob = before;
    }
}

/// patchgate's history entries that changed `path`, newest first: (old blob, new blob, source).
fn patch_versions(h: &History, path: &str) -> Vec<(Version, Option<Oid>)> {
    let mut out = Vec::new();
    for e in (h.patches)().iter().rev() {
        let Some((_, Some(old), new)) = e.files.iter().find(|(p, _, _)| p == path) else {
            continue;
        };
        out.push((
            Version {
                oid: *old,
                source: ChangeSource::Patch {
                    id: e.id.clone(),
                    subject: e.subject.clone(),
                },
            },
            *new,
        ));
    }
    out
}

/// Every earlier version of `path` worth comparing with, newest first, each blob once.
fn versions(h: &History, path: &str, original: Option<&[u8]>) -> Vec<Version> {
    let mut out: Vec<Version> = patch_versions(h, path)
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    if h.worktree
        && let Some(head) = h.base.and_then(|b| h.repo.find_commit(b).ok())
        && let Some(committed) = blob_at(&head, path)
        && original.is_some_and(|b| Oid::hash_object(ObjectType::Blob, b).ok() != Some(committed))
    {
        out.push(Version {
            oid: committed,
            source: ChangeSource::Uncommitted,
        });
    }
    out.extend(commit_versions(h, path).iter().cloned());
    let mut seen = std::collections::HashSet::new();
    out.retain(|v| seen.insert(v.oid));
    out
}

/// 0-based line span `[a, b)` of `old_string` in an earlier version, and whether it is whole.
struct Found {
    lines: Range<usize>,
    exact: bool,
    /// Non-blank needle lines found there, of all.
    held: (usize, usize),
}

/// Where the needle stands in `text`: exactly, or but for whitespace.
fn find_whole(
    text: &str,
    lines: &[Range<usize>],
    needle: &Needle,
    raw: &str,
) -> Option<Range<usize>> {
    if let Some(at) = memchr::memmem::find(text.as_bytes(), raw.as_bytes()) {
        let first = line_index(lines, at);
        let last = line_index(lines, (at + raw.len()).saturating_sub(1).max(at));
        return Some(first..last + 1);
    }
    let (ws, _) = relaxed_starts(text, lines, needle);
    ws.first().map(|&s| s..s + needle.lines.len())
}

fn line_index(lines: &[Range<usize>], at: usize) -> usize {
    lines
        .partition_point(|r| r.end < at)
        .min(lines.len().saturating_sub(1))
}

/// Most of the needle's lines, in order and together, in `text`; at least one of them a line
/// the current file lacks (`missing`).
fn find_partial(
    text: &str,
    lines: &[Range<usize>],
    needle: &[u64],
    missing: &std::collections::HashSet<u64>,
) -> Option<Found> {
    let k = needle.len();
    let wanted: usize = needle.iter().filter(|&&h| h != BLANK).count();
    if wanted < 2 || k > 2_000 {
        return None;
    }
    let hashes: Vec<u64> = lines
        .iter()
        .map(|r| collapsed_hash(&text[r.clone()]))
        .collect();
    let mut at: FastMap<u64, Vec<usize>> = FastMap::default();
    for (j, &h) in needle.iter().enumerate() {
        if h != BLANK {
            at.entry(h).or_default().push(j);
        }
    }
    // Votes per diagonal (file line − needle line): the region where most lines line up.
    let mut votes: FastMap<isize, usize> = FastMap::default();
    for (i, h) in hashes.iter().enumerate() {
        if let Some(js) = at.get(h) {
            for &j in js.iter().take(4) {
                *votes.entry(i as isize - j as isize).or_default() += 1;
            }
        }
    }
    let mut diagonals: Vec<(usize, isize)> = votes.into_iter().map(|(d, v)| (v, d)).collect();
    diagonals.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut best: Option<Found> = None;
    for &(_, d) in diagonals.iter().take(3) {
        let lo = (d - 3).max(0) as usize;
        let hi = ((d + k as isize + 3).max(0) as usize).min(hashes.len());
        if lo >= hi {
            continue;
        }
        let (held, first, last, new_line) = lcs(needle, &hashes[lo..hi], missing);
        if !new_line || (held as f64) < MIN_PARTIAL * wanted as f64 {
            continue;
        }
        if best.as_ref().is_none_or(|b| held > b.held.0) {
            best = Some(Found {
                lines: lo + first..lo + last + 1,
                exact: false,
                held: (held, wanted),
            });
        }
    }
    best
}

const BLANK: u64 = 0;

/// Longest common subsequence of needle and window hashes (blank needle lines aside): its
/// length, the window's first and last matched lines, and whether a `missing` line is in it.
fn lcs(
    needle: &[u64],
    window: &[u64],
    missing: &std::collections::HashSet<u64>,
) -> (usize, usize, usize, bool) {
    let (k, w) = (needle.len(), window.len());
    let mut table = vec![0u32; (k + 1) * (w + 1)];
    let at = |i: usize, j: usize| i * (w + 1) + j;
    for i in (0..k).rev() {
        for j in (0..w).rev() {
            table[at(i, j)] = if needle[i] != BLANK && needle[i] == window[j] {
                table[at(i + 1, j + 1)] + 1
            } else {
                table[at(i + 1, j)].max(table[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let (mut first, mut last, mut new_line) = (None, 0, false);
    while i < k && j < w {
        if needle[i] != BLANK && needle[i] == window[j] {
            first.get_or_insert(j);
            last = j;
            new_line |= missing.contains(&needle[i]);
            i += 1;
            j += 1;
        } else if table[at(i + 1, j)] >= table[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    (table[at(0, 0)] as usize, first.unwrap_or(0), last, new_line)
}

/// Where old lines `[a, b)` of `old` are in `new`: the new lines of every unchanged line and
/// every changed hunk they touch, as a 0-based span `[c, d)` (empty when they were deleted).
fn map_lines(old: &str, new: &str, a: usize, b: usize) -> Range<usize> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mapped = map_ops(diff.ops(), a, b);
    // A block moved (and re-indented) is a deletion here and an insertion elsewhere: when an
    // inserted or replacing hunk holds more of the old lines (but for whitespace) than the
    // mapped region, the text went there.
    let old_lines = line_ranges(old);
    let new_lines = line_ranges(new);
    let wanted: std::collections::HashSet<u64> = (a..b.min(old_lines.len()))
        .map(|i| &old[old_lines[i].clone()])
        .filter(|l| !super::blocks::is_trivial(l))
        .map(collapsed_hash)
        .collect();
    if wanted.is_empty() {
        return mapped;
    }
    let held = |r: &Range<usize>| {
        (r.start..r.end.min(new_lines.len()))
            .filter(|&i| wanted.contains(&collapsed_hash(&new[new_lines[i].clone()])))
            .count()
    };
    let here = held(&mapped);
    let moved = diff
        .ops()
        .iter()
        .map(|op| op.as_tag_tuple())
        .filter(|(tag, _, n)| *tag != DiffTag::Equal && !n.is_empty())
        .map(|(_, _, n)| n)
        .map(|n| (held(&n), n))
        .filter(|(h, _)| *h > here)
        .max_by(|x, y| x.0.cmp(&y.0).then(y.1.start.cmp(&x.1.start)));
    match moved {
        Some((_, n)) => {
            // Blank lines at the hunk's ends are not the text.
            let blank = |i: usize| is_blank(&new[new_lines[i].clone()]);
            let (mut s, mut e) = (n.start, n.end.min(new_lines.len()));
            while s < e && blank(s) {
                s += 1;
            }
            while e > s && blank(e - 1) {
                e -= 1;
            }
            if s < e { s..e } else { mapped }
        }
        None => mapped,
    }
}

/// [`map_lines`] on the operations of a line diff, without looking for moved text.
fn map_ops(ops: &[similar::DiffOp], a: usize, b: usize) -> Range<usize> {
    let (mut lo, mut hi) = (usize::MAX, 0usize);
    let mut point = None;
    for op in ops {
        let (tag, o, n) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {
                let s = o.start.max(a);
                let e = o.end.min(b);
                if s < e {
                    lo = lo.min(n.start + (s - o.start));
                    hi = hi.max(n.start + (e - o.start));
                }
            }
            DiffTag::Delete | DiffTag::Replace => {
                if o.start < b && a < o.end {
                    if n.is_empty() {
                        point.get_or_insert(n.start);
                    } else {
                        lo = lo.min(n.start);
                        hi = hi.max(n.end);
                    }
                }
            }
            DiffTag::Insert => {
                if a < o.start && o.start < b {
                    lo = lo.min(n.start);
                    hi = hi.max(n.end);
                }
            }
        }
    }
    if lo < hi {
        lo..hi
    } else {
        let p = point.unwrap_or(0);
        p..p
    }
}

/// The stale reading of a miss of `raw` (line endings folded) in `current`, a file at `path`
/// whose bytes on disk are `original`; `None` when no earlier version explains it.
pub(super) fn find(
    h: &History,
    path: &str,
    cur: &FileLines,
    original: Option<&[u8]>,
    needle: &Needle,
    raw: &str,
) -> Option<Stale> {
    let current = cur.text;
    let versions = versions(h, path, original);
    crate::timing::mark("suggest: stale versions");
    if versions.is_empty() {
        return None;
    }
    let needle_hashes: Vec<u64> = needle
        .lines
        .iter()
        .map(|l| {
            if is_blank(l) {
                BLANK
            } else {
                collapsed_hash(l)
            }
        })
        .collect();
    let cur_lines = &cur.lines[..];
    // The needle's hashes no line of the file has (one pass over the shared line hashes).
    let mut missing: std::collections::HashSet<u64> = needle_hashes
        .iter()
        .copied()
        .filter(|h| *h != BLANK)
        .collect();
    for h in cur.hashes() {
        if missing.is_empty() {
            break;
        }
        missing.remove(h);
    }
    // The text of old lines the current file lacks: a version that has none of them cannot hold
    // old_string but for whitespace, nor most of its lines including one of them, so only an
    // exact search (one memmem) is worth doing there.
    let lost: Vec<&str> = needle
        .lines
        .iter()
        .filter(|l| missing.contains(&collapsed_hash(l)))
        .map(|l| l.trim())
        .filter(|t| t.len() >= 4)
        .collect();
    let mut partial: Option<(Found, &Version, Arc<String>)> = None;
    let start = std::time::Instant::now();
    for (n, v) in versions.iter().enumerate() {
        // The newest versions are read whatever it costs; older ones while time allows.
        if n >= MIN_READ && start.elapsed() > READ_BUDGET {
            break;
        }
        let Some(text) = text_of(h.repo, v.oid) else {
            continue;
        };
        if text.as_str() == current {
            continue;
        }
        if let Some(at) = memchr::memmem::find(text.as_bytes(), raw.as_bytes()) {
            let lines = line_ranges(&text);
            let first = line_index(&lines, at);
            let last = line_index(&lines, (at + raw.len()).saturating_sub(1).max(at));
            let found = Found {
                lines: first..last + 1,
                exact: true,
                held: (0, 0),
            };
            return Some(candidate(&found, v, &text, current, cur_lines, needle));
        }
        if !lost
            .iter()
            .any(|t| memchr::memmem::find(text.as_bytes(), t.as_bytes()).is_some())
        {
            continue;
        }
        let lines = line_ranges(&text);
        if let Some(span) = find_whole(&text, &lines, needle, raw) {
            let found = Found {
                lines: span,
                exact: true,
                held: (0, 0),
            };
            return Some(candidate(&found, v, &text, current, cur_lines, needle));
        }
        if partial.is_none()
            && !missing.is_empty()
            && let Some(f) = find_partial(&text, &lines, &needle_hashes, &missing)
        {
            partial = Some((f, v, Arc::clone(&text)));
        }
    }
    let (found, v, text) = partial?;
    Some(candidate(&found, v, &text, current, cur_lines, needle))
}

fn candidate(
    found: &Found,
    v: &Version,
    old_text: &str,
    current: &str,
    cur_lines: &[Range<usize>],
    needle: &Needle,
) -> Stale {
    let n = cur_lines.len();
    let mapped = map_lines(old_text, current, found.lines.start, found.lines.end);
    let (a, b, deleted) = if mapped.is_empty() {
        // Deleted: the lines around the place where the text stood.
        let p = mapped.start.min(n);
        (p.saturating_sub(1), (p + 1).min(n).max(1), true)
    } else {
        (mapped.start, mapped.end.min(n), false)
    };
    let b = b.max(a + 1).min(n.max(1));
    let byte_range = match (cur_lines.get(a), cur_lines.get(b.saturating_sub(1))) {
        (Some(s), Some(e)) => s.start..e.end,
        _ => 0..0,
    };
    let what = if found.exact {
        "old_string is".to_string()
    } else {
        format!(
            "{} of the {} non-blank lines of old_string are",
            found.held.0, found.held.1
        )
    };
    let was = span(found.lines.start + 1, found.lines.end);
    let now = span(a + 1, b);
    let by = v.source.describe();
    let note = if deleted {
        format!(
            "{what} the text of {was} before {by} changed the file; that text was deleted, \
             here is where it stood"
        )
    } else {
        format!("{what} the text of {was} before {by} changed the file; it is now {now}")
    };
    let message = if deleted {
        format!(
            "{what} the file's text at {was} before {by} changed it: that text was deleted \
             (it stood around line {}): re-read the file",
            a + 1
        )
    } else {
        format!(
            "{what} the file's text at {was} before {by} changed it: that text is now {now}; \
             copy the current text from the suggestion"
        )
    };
    let sim = similarity(
        current.get(byte_range.clone()).unwrap_or_default(),
        needle.body,
    );
    Stale {
        candidate: Candidate {
            kind: CandidateKind::Stale,
            note: Some(note),
            start_line: a + 1,
            end_line: b.max(a + 1),
            similarity: round_similarity(sim),
            byte_range,
            strong: found.exact,
            source: Some(v.source.clone()),
        },
        exact: found.exact,
        message,
    }
}

/// `line 5` or `lines 5-6`.
fn span(a: usize, b: usize) -> String {
    if a >= b {
        format!("line {a}")
    } else {
        format!("lines {a}-{b}")
    }
}

/// The lines (1-based, inclusive, in `current`) that the newest patch of patchgate's history
/// changed in `path`: where the agent edited that file last. `None` without such a patch, or when
/// its lines cannot be placed in the current text.
pub(super) fn last_edit(h: &History, path: &str, current: &str) -> Option<(usize, usize)> {
    let (v, new) = patch_versions(h, path).into_iter().next()?;
    let before = text_of(h.repo, v.oid)?;
    // A working-tree patch's new content is named by id only, never written to git: the file
    // usually still holds it, and when it does not, the lines that differ from the version
    // before that patch still point at where the agent edited last.
    let after = text_of(h.repo, new?).unwrap_or_else(|| Arc::new(current.to_string()));
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before.as_str(), after.as_str());
    let (mut lo, mut hi) = (usize::MAX, 0usize);
    for op in diff.ops() {
        let (tag, _, n) = op.as_tag_tuple();
        if tag != DiffTag::Equal {
            lo = lo.min(n.start);
            hi = hi.max(n.end.max(n.start + 1));
        }
    }
    if lo >= hi {
        return None;
    }
    let (lo, hi) = if after.as_str() == current {
        (lo, hi)
    } else {
        let m = map_lines(&after, current, lo, hi);
        (m.start, m.end.max(m.start + 1))
    };
    Some((lo + 1, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_follows_unchanged_and_changed_lines() {
        let old = "a\nb\nc\nd\ne\n";
        let new = "a\nb\nX\nY\nd\ne\n";
        // Lines 2-4 (b, c, d): b and d map one to one, c to its replacement X, Y.
        assert_eq!(map_lines(old, new, 1, 4), 1..5);
        // Line 3 alone (c): its replacement.
        assert_eq!(map_lines(old, new, 2, 3), 2..4);
        // Deleted lines map to the point where they stood.
        assert_eq!(map_lines("a\nb\nc\n", "a\nc\n", 1, 2), 1..1);
    }

    #[test]
    fn partial_matches_need_a_line_the_file_lost() {
        let old = "x\ndef f():\n    a = 1\n    b = 2\n    return a\ny\n";
        let lines = line_ranges(old);
        let needle: Vec<u64> = ["def f():", "    a = 1", "    b = 3", "    return a"]
            .iter()
            .map(|l| collapsed_hash(l))
            .collect();
        let gone: std::collections::HashSet<u64> = [collapsed_hash("    a = 1")].into();
        let f = find_partial(old, &lines, &needle, &gone).expect("found");
        assert_eq!((f.lines.clone(), f.held), (1..5, (3, 4)));
        assert!(find_partial(old, &lines, &needle, &Default::default()).is_none());
    }
    /// A repository whose `a.txt` each of 12 commits changes, and its HEAD.
    fn deep_history() -> (tempfile::TempDir, Repository, Oid) {
        let d = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(d.path()).expect("init");
        let sig = git2::Signature::now("t", "t@example.com").expect("sig");
        let mut parent: Option<Oid> = None;
        for i in 0..12 {
            let blob = repo.blob(format!("v{i}\n").as_bytes()).expect("blob");
            let mut tb = repo.treebuilder(None).expect("tb");
            tb.insert("a.txt", blob, 0o100644).expect("insert");
            let tree = repo.find_tree(tb.write().expect("tree")).expect("tree");
            let parents: Vec<git2::Commit> = parent
                .iter()
                .map(|p| repo.find_commit(*p).expect("parent"))
                .collect();
            let refs: Vec<&git2::Commit> = parents.iter().collect();
            let c = repo
                .commit(Some("HEAD"), &sig, &sig, &format!("c{i}"), &tree, &refs)
                .expect("commit");
            drop(tree);
            drop(tb);
            parent = Some(c);
        }
        let head = parent.expect("head");
        (d, repo, head)
    }

    #[test]
    fn the_walk_is_kept_on_disk_for_the_next_run() {
        let (_d, repo, head) = deep_history();
        let git_dir = repo.path().to_path_buf();
        let h = History {
            repo: &repo,
            git_dir: &git_dir,
            base: Some(head),
            worktree: false,
            patches: &no_patches,
        };
        // Each run walks for a few milliseconds at most; on a loaded machine the walk may take
        // more than one run, each going on from where the last stopped.
        let full = |h: &History, n: usize| {
            let mut got = Vec::new();
            for _ in 0..50 {
                with_cache(|c| c.commits.clear());
                got = commit_versions(h, "a.txt").to_vec();
                if got.len() == n {
                    break;
                }
            }
            got
        };
        let first = full(&h, 11);
        assert_eq!(first.len(), 11, "one version before each later commit");
        let kept = std::fs::read_dir(git_dir.join("patchgate/cache/lookback"))
            .expect("the walk was kept")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "json"))
            .expect("an entry");
        // A new process (the in-process cache gone) reads it instead of walking: the entry
        // edited to say something else (still naming real objects) is what comes back.
        let text = std::fs::read_to_string(&kept).expect("read");
        std::fs::write(&kept, text.replace("\"c11\"", "\"from the disk\"")).expect("write");
        with_cache(|c| c.commits.clear());
        let second = commit_versions(&h, "a.txt");
        assert_eq!(second.len(), 11);
        assert!(
            matches!(&second[0].source, ChangeSource::Commit { subject, .. } if subject == "from the disk"),
            "the kept walk was not used"
        );
        // Another commit to start from is another walk.
        let older = repo
            .find_commit(head)
            .expect("head")
            .parent_id(0)
            .expect("parent");
        let h2 = History {
            base: Some(older),
            ..h
        };
        let third = full(&h2, 10);
        assert_eq!(third.len(), 10);
        assert!(
            matches!(&third[0].source, ChangeSource::Commit { subject, .. } if subject == "c10")
        );
    }
}
