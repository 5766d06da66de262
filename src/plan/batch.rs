//! One pass over a file for all of its plain replacements: every edit's match found in the
//! original text at once, the new text built once.
//!
//! Planned one by one, each edit searches the whole file (to refuse an ambiguous `old_string`)
//! and shifts everything after its match: a patch of 20,000 edits to one file is quadratic. Here
//! every occurrence of every `old_string` in the original text is found first (a substring search
//! per pattern when there are few, one Aho-Corasick scan when there are many, see [`Searcher`]);
//! the edits are then taken in patch order, each one's occurrences being those of the original
//! that no earlier edit has touched.
//!
//! Invariants (what makes the result byte-identical to the one-by-one path, see the tests):
//! - Every outcome is the one-by-one outcome: an edit matches exactly once, and its reported lines
//!   are those of the file as it is just before it (earlier edits counted in).
//! - A later edit sees the text after the earlier ones. An occurrence that exists only because of
//!   an earlier edit (its `old_string` overlaps that edit's new text, or spans the seam an edit
//!   left) is looked for around every edit as it is applied; when an edit still to come could
//!   match such an occurrence, the batch gives up and the file is planned one edit at a time.
//! - Anything else the one-by-one path decides differently gives up too: a miss, an ambiguous
//!   edit, `replace_all`, a line window, `within`, a hunk's whole-line matching or position, a
//!   file with CRLF line endings. Giving up is always safe; it costs only the speed.

use super::*;

use std::collections::BTreeMap;

use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind as AcKind};
use memchr::memmem;

/// Past this many occurrences of the edits' `old_string`s in the original text the batch gives
/// up: its bookkeeping would cost more than it saves (short, common `old_string`s).
const MAX_OCCURRENCES: usize = 4_000_000;

/// Up to this many distinct patterns a file's occurrences are found with one substring search per
/// pattern; past it with one Aho-Corasick automaton. Building the automaton costs more than a few
/// vectorised searches of a source file, and its scan is many times slower per byte than one
/// search; only with many patterns does its single pass win.
const FEW_PATTERNS: usize = 16;

/// Which way occurrences are found ([`Engine::Auto`] everywhere but in the tests, which run the
/// two others on the same inputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(super) enum Engine {
    Auto,
    Substring,
    Automaton,
}

/// Finds the occurrences of a file's patterns, overlapping ones included.
///
/// A substring search restarted one byte after each occurrence can cost a whole pattern's length
/// per occurrence (a long periodic pattern in a text that repeats it); its work is counted, and
/// past [`Searcher::budget`] the search is done again with the automaton, which is linear in the
/// text whatever the patterns. Both report the same set of occurrences.
struct Searcher<'p> {
    patterns: &'p [&'p str],
    finders: Option<Vec<memmem::Finder<'p>>>,
    automaton: std::cell::OnceCell<Option<AhoCorasick>>,
}

/// An occurrence: the pattern's index and where it starts.
type Found = (usize, usize);

impl<'p> Searcher<'p> {
    fn new(patterns: &'p [&'p str], engine: Engine) -> Searcher<'p> {
        let few = match engine {
            Engine::Auto => patterns.len() <= FEW_PATTERNS,
            Engine::Substring => true,
            Engine::Automaton => false,
        };
        let finders = few.then(|| patterns.iter().map(memmem::Finder::new).collect());
        Searcher {
            patterns,
            finders,
            automaton: std::cell::OnceCell::new(),
        }
    }

    fn automaton(&self) -> Option<&AhoCorasick> {
        self.automaton
            .get_or_init(|| {
                AhoCorasick::builder()
                    .match_kind(AcKind::Standard)
                    .kind(Some(AhoCorasickKind::ContiguousNFA))
                    .build(self.patterns)
                    .ok()
            })
            .as_ref()
    }

    /// How many bytes of pattern the substring searches of `hay` may compare after occurrences
    /// before the automaton takes over.
    fn budget(hay: &[u8]) -> usize {
        8 * hay.len() + 64 * 1024
    }

    /// Calls `f` with every occurrence in `hay` of every pattern `wanted` keeps (in no particular
    /// order); stops as soon as `f` returns `false`, which it must do by the time it has seen
    /// more than `limit` of them. `None`: the automaton could not be built.
    fn each(
        &self,
        hay: &[u8],
        wanted: impl Fn(usize) -> bool,
        limit: usize,
        mut f: impl FnMut(Found) -> bool,
    ) -> Option<()> {
        if let Some(finders) = &self.finders {
            // The occurrences are gathered first so that a search that runs over its budget has
            // reported nothing when the automaton starts again.
            let mut found: Vec<Found> = Vec::new();
            let mut spent = 0usize;
            let budget = Self::budget(hay);
            let mut over = false;
            'patterns: for (p, finder) in finders.iter().enumerate() {
                if !wanted(p) {
                    continue;
                }
                let len = finder.needle().len();
                let mut at = 0;
                while let Some(i) = finder.find(&hay[at..]) {
                    found.push((p, at + i));
                    if found.len() > limit {
                        break 'patterns;
                    }
                    at += i + 1;
                    spent += len;
                    if spent > budget {
                        over = true;
                        break 'patterns;
                    }
                }
            }
            if !over {
                for m in found {
                    if !f(m) {
                        break;
                    }
                }
                return Some(());
            }
        }
        for m in self
            .automaton()?
            .try_find_overlapping_iter(Input::new(hay))
            .ok()?
        {
            let p = m.pattern().as_usize();
            if wanted(p) && !f((p, m.start())) {
                break;
            }
        }
        Some(())
    }
}

/// Whether an edit can be planned with the others of its file in one pass (the rest of what the
/// one-by-one path might decide differently is checked on the text, in [`plan_file`]).
pub(super) fn eligible(r: &Replace) -> bool {
    !r.replace_all
        && r.window.is_none()
        && r.within.is_none()
        && r.near.is_none()
        && !r.whole_lines
        && !r.old.is_empty()
}

/// An edit applied in the batch: where its `old_string` was in the original text.
struct Applied {
    start: usize,
    end: usize,
    k: usize,
}

/// A file's edits planned in one pass: each edit's step, the document after all of them, and
/// where its bytes changed (ranges of the original's and the new document's bytes, for the
/// report's diff).
pub(super) type OnePass = (Vec<Step>, TextDoc, Vec<crate::text::Changed>);

/// The steps of `edits` (in order) on `doc`, and the document after all of them: exactly what
/// [`replace_in`] gives one edit at a time, or `None` when the one-pass plan cannot promise that.
/// `recorded[k]`: edit `k` is on record as applied before; it applies here only while its
/// `new_string` is nowhere in the text (else the one-by-one path may call it already applied).
pub(super) fn plan_file(doc: &TextDoc, edits: &[&Replace], recorded: &[bool]) -> Option<OnePass> {
    plan_file_with(doc, edits, recorded, Engine::Auto)
}

/// [`plan_file`], finding the occurrences the way `engine` says.
pub(super) fn plan_file_with(
    doc: &TextDoc,
    edits: &[&Replace],
    recorded: &[bool],
    engine: Engine,
) -> Option<OnePass> {
    if doc.has_crlf() || !edits.iter().all(|r| eligible(r)) || recorded.len() != edits.len() {
        return None;
    }
    let text = doc.text();
    let olds: Vec<std::borrow::Cow<str>> = edits.iter().map(|r| fold_eol(&r.old)).collect();
    let news: Vec<std::borrow::Cow<str>> = edits.iter().map(|r| fold_eol(&r.new)).collect();
    // Distinct patterns, and for each the last edit that looks for it.
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut patterns: Vec<&str> = Vec::new();
    let mut last_use: Vec<usize> = Vec::new();
    let mut pat_of: Vec<usize> = Vec::with_capacity(edits.len());
    // A recorded edit also looks for its new_string: it must not be there.
    let mut new_pat: Vec<Option<usize>> = Vec::with_capacity(edits.len());
    for k in 0..edits.len() {
        let mut id_of = |text| {
            let id = *ids.entry(text).or_insert_with(|| {
                patterns.push(text);
                last_use.push(0);
                patterns.len() - 1
            });
            last_use[id] = last_use[id].max(k);
            id
        };
        pat_of.push(id_of(olds[k].as_ref()));
        new_pat.push((recorded[k] && !news[k].is_empty()).then(|| id_of(news[k].as_ref())));
    }
    let search = Searcher::new(&patterns, engine);
    let lmax = patterns.iter().map(|p| p.len()).max().unwrap_or(0);

    // Every occurrence of every pattern in the original text, overlapping ones included (they
    // make an edit ambiguous, as in the one-by-one path).
    let mut occ: Vec<Vec<usize>> = vec![Vec::new(); patterns.len()];
    let mut total = 0usize;
    search.each(
        text.as_bytes(),
        |_| true,
        MAX_OCCURRENCES,
        |(p, start)| {
            occ[p].push(start);
            total += 1;
            total <= MAX_OCCURRENCES
        },
    )?;
    if total > MAX_OCCURRENCES {
        return None;
    }

    let mut applied: BTreeMap<usize, Applied> = BTreeMap::new();
    for (k, &p) in pat_of.iter().enumerate() {
        if let Some(q) = new_pat[k] {
            let len = patterns[q].len();
            occ[q].retain(|&s| !touches_applied(&applied, s, s + len));
            if !occ[q].is_empty() {
                return None;
            }
        }
        let len = patterns[p].len();
        // Occurrences an earlier edit overlapped are gone for good: drop them as they are seen.
        occ[p].retain(|&s| !touches_applied(&applied, s, s + len));
        let [start] = occ[p][..] else {
            return None;
        };
        applied.insert(
            start,
            Applied {
                start,
                end: start + len,
                k,
            },
        );
        if born_for_later(&search, &applied, text, &news, start, k, lmax, &last_use) {
            return None;
        }
    }
    Some(finish(doc, edits, &olds, &news, &applied))
}

/// Whether `[s, e)` of the original text overlaps a range an edit already replaced.
fn touches_applied(applied: &BTreeMap<usize, Applied>, s: usize, e: usize) -> bool {
    applied
        .range(..e)
        .next_back()
        .is_some_and(|(_, a)| a.end > s)
}

/// Whether edit `k`, just applied at `start`, made an occurrence (one that overlaps its new text,
/// or spans the seam where its old text was) of a pattern that an edit after `k` looks for. The
/// text around the new text is rebuilt from the original and the edits applied so far, `lmax - 1`
/// bytes each side: no occurrence reaching the new text can come from farther away.
#[allow(clippy::too_many_arguments)]
fn born_for_later(
    search: &Searcher,
    applied: &BTreeMap<usize, Applied>,
    text: &str,
    news: &[std::borrow::Cow<str>],
    start: usize,
    k: usize,
    lmax: usize,
    last_use: &[usize],
) -> bool {
    let reach = lmax.saturating_sub(1);
    let Some(me) = applied.get(&start) else {
        return true;
    };
    // Left: original bytes and earlier edits' new texts, walking back from `start`.
    let mut left: Vec<&[u8]> = Vec::new();
    let (mut need, mut at, mut steps) = (reach, start, 0);
    while need > 0 {
        steps += 1;
        if steps > 4 * lmax + 16 {
            return true;
        }
        let prev = applied.range(..at).next_back().map(|(_, a)| a);
        let from = prev.map_or(0, |a| a.end);
        let take = (at - from).min(need);
        left.push(&text.as_bytes()[at - take..at]);
        need -= take;
        match prev {
            Some(a) if need > 0 => {
                let n = news[a.k].as_bytes();
                let t = n.len().min(need);
                left.push(&n[n.len() - t..]);
                need -= t;
                at = a.start;
            }
            _ => break,
        }
    }
    let mut window: Vec<u8> = Vec::with_capacity(2 * reach + news[k].len());
    for piece in left.iter().rev() {
        window.extend_from_slice(piece);
    }
    let seam = window.len();
    window.extend_from_slice(news[k].as_bytes());
    let seam_end = window.len();
    // Right: walking on from the end of the replaced text.
    let (mut need, mut at, mut steps) = (reach, me.end, 0);
    while need > 0 {
        steps += 1;
        if steps > 4 * lmax + 16 {
            return true;
        }
        let next = applied.range(at..).next().map(|(_, a)| a);
        let to = next.map_or(text.len(), |a| a.start);
        let take = (to - at).min(need);
        window.extend_from_slice(&text.as_bytes()[at..at + take]);
        need -= take;
        match next {
            Some(a) if need > 0 => {
                let n = news[a.k].as_bytes();
                let t = n.len().min(need);
                window.extend_from_slice(&n[..t]);
                need -= t;
                at = a.end;
            }
            _ => break,
        }
    }
    // Only the patterns an edit after `k` looks for matter.
    let mut born = false;
    let searched = search.each(
        &window,
        |p| last_use[p] > k,
        usize::MAX,
        |(p, s)| {
            let e = s + search.patterns[p].len();
            born = if seam_end > seam {
                s < seam_end && e > seam
            } else {
                s < seam && e > seam
            };
            !born
        },
    );
    born || searched.is_none()
}

/// The steps (each edit's lines in the file as it was just before it), the new document and
/// where it changed.
fn finish(
    doc: &TextDoc,
    edits: &[&Replace],
    olds: &[std::borrow::Cow<str>],
    news: &[std::borrow::Cow<str>],
    applied: &BTreeMap<usize, Applied>,
) -> OnePass {
    let nl = |s: &str| memchr::memchr_iter(b'\n', s.as_bytes()).count();
    let bytes = doc.text().as_bytes();
    // Line of each match start in the original text, in one sweep in order of position.
    let mut orig_line: Vec<usize> = vec![0; edits.len()];
    let mut rank: Vec<usize> = vec![0; edits.len()];
    let (mut at, mut line) = (0, 1);
    for (r, a) in applied.values().enumerate() {
        line += memchr::memchr_iter(b'\n', &bytes[at..a.start]).count();
        at = a.start;
        orig_line[a.k] = line;
        rank[a.k] = r;
    }
    // Then in patch order, each earlier edit before it shifts it by the line breaks it added.
    let mut shift = Fenwick::new(edits.len());
    let steps = (0..edits.len())
        .map(|k| {
            let start_line = orig_line[k] as i64 + shift.before(rank[k]);
            let old = olds[k].as_ref();
            let inner = nl(&old[..old.len() - 1]) as i64;
            shift.add(rank[k], nl(news[k].as_ref()) as i64 - nl(old) as i64);
            let lines = vec![(start_line as usize, (start_line + inner) as usize)];
            Step::applied(Some(MatchKind::Exact), 1, lines)
        })
        .collect();
    let pieces: Vec<(Range<usize>, &str)> = applied
        .values()
        .map(|a| (a.start..a.end, news[a.k].as_ref()))
        .collect();
    // In bytes: the text is the file's after a byte order mark (a document planned in one pass
    // has no CRLF endings to fold).
    let (mut at, bom) = (0isize, doc.bom_len() as isize);
    let changed = pieces
        .iter()
        .map(|(r, new)| {
            let start = (r.start as isize + at + bom) as usize;
            at += new.len() as isize - r.len() as isize;
            crate::text::Changed {
                old: r.start + bom as usize..r.end + bom as usize,
                new: start..start + new.len(),
            }
        })
        .collect();
    (steps, doc.splice_lf(&pieces), changed)
}

/// Prefix sums over positions, with updates: the line shift of the edits applied so far.
struct Fenwick(Vec<i64>);

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick(vec![0; n + 1])
    }
    fn add(&mut self, i: usize, v: i64) {
        let mut i = i + 1;
        while i < self.0.len() {
            self.0[i] += v;
            i += i & i.wrapping_neg();
        }
    }
    /// The sum over positions before `i`.
    fn before(&self, i: usize) -> i64 {
        let (mut i, mut s) = (i, 0);
        while i > 0 {
            s += self.0[i];
            i -= i & i.wrapping_neg();
        }
        s
    }
}

/// A file whose edits are planned together: the edits until its first edit is reached, then the
/// steps still to hand out, one per edit in order.
pub(super) enum Pending<'p> {
    /// Each edit (the patch's own, not a copy), and whether it is on record as applied before.
    Edits(Vec<(&'p Replace, bool)>),
    Steps(std::collections::VecDeque<Step>),
}

/// A batch's file read and planned ahead, on another core ([`Planner::plan_batches_ahead`]):
/// what its first edit would have read and planned, waiting for that edit.
pub(super) struct Ahead {
    content: Content,
    disk: Disk,
    stamp: Option<crate::fs::stamp::Stamp>,
    /// The file's one-pass plan, when it holds.
    plan: Option<OnePass>,
    /// Its hashes, with the plan.
    hashes: Option<Hashes>,
}

/// A file's hashes before and after its one-pass plan, made where it was read and planned.
pub(super) struct Hashes {
    pub(super) old_blob: git2::Oid,
    pub(super) new_blob: git2::Oid,
    pub(super) new_sha256: String,
}

impl Hashes {
    /// The hashes of `before` (a file's bytes) and of `after`, the document planned from it;
    /// `None` when `after` is not its bytes as they stand (CRLF endings to put back).
    fn of(before: &[u8], after: &TextDoc) -> Option<Hashes> {
        let parts = after.encoded_parts()?;
        Some(Hashes {
            old_blob: crate::repo::blob_id(before),
            new_blob: crate::repo::blob_id_of_parts(&parts),
            new_sha256: super::planner::content_hash_of_parts(&parts),
        })
    }
}

/// From this many batched files on, they are read and planned ahead on every core: below it,
/// starting the thread pool costs more than it saves (a file is read and planned in tens of
/// microseconds).
const AHEAD_FILES: usize = 16;

/// Files of one folder planned ahead by one task: the folder is opened once per task.
const AHEAD_CHUNK: usize = 8;

#[cfg(test)]
thread_local! {
    /// Tests plan the same patch with and without planning ahead, and count the files taken.
    pub(super) static AHEAD_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    pub(super) static AHEAD_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A batched file to plan ahead: its key, its name in its folder, and its edits.
type AheadFile<'a> = (&'a str, &'a str, &'a [(&'a Replace, bool)]);

/// Reads the files `names` of the folder `parent` and plans each one's batch; `None` for a file
/// whose folder cannot be opened (the edits in order then read it and say why).
fn read_and_plan(fs: &crate::fs::Root, parent: &str, names: &[AheadFile]) -> Vec<Option<Ahead>> {
    let Ok(dir) = fs.dir(parent) else {
        return names.iter().map(|_| None).collect();
    };
    names
        .iter()
        .map(|(_, name, edits)| {
            let (mut content, disk, stamp) = super::vfs::read_in(&dir, name);
            let (mut plan, mut hashes) = (None, None);
            if let Content::File { bytes, doc, .. } = &mut content
                && let Ok(original) = TextDoc::decode(bytes)
            {
                let refs: Vec<&Replace> = edits.iter().map(|(r, _)| *r).collect();
                let recorded: Vec<bool> = edits.iter().map(|(_, rec)| *rec).collect();
                plan = plan_file(&original, &refs, &recorded);
                // Hashed here, on every core, while both texts are in the cache: the
                // transaction and the re-run record need these hashes of every changed file,
                // and hashing them later, one pass over each file again, was a tenth of a large
                // batch's run.
                hashes = plan
                    .as_ref()
                    .and_then(|(_, after, _)| Hashes::of(bytes, after));
                // The original text is kept only for edits planned one by one (the one-pass
                // plan did not hold); otherwise it goes now, and the next file's reuses its
                // memory instead of new pages.
                if plan.is_none() {
                    *doc = Some(original);
                }
            }
            Some(Ahead {
                content,
                disk,
                stamp,
                plan,
                hashes,
            })
        })
        .collect()
}

impl<'a> Planner<'a> {
    /// The files to plan in one pass: those with at least two edits (or one, in a patch of many
    /// files), every one of them a plain replacement that nothing else in the patch could
    /// interfere with (no other kind of edit, move or copy names the path, no edit of it has
    /// `expect_sha256`).
    pub(super) fn gather_batches(&mut self, patch: &'a Patch, digests: &[Option<String>]) {
        if self.diff {
            return;
        }
        let mut tainted: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut per_key: HashMap<String, Vec<(&'a Replace, bool)>> = HashMap::new();
        for (edit, digest) in patch.edits.iter().zip(digests) {
            let (Ok(op), Ok(res)) = (&edit.op, self.resolve(&edit.file_path)) else {
                continue;
            };
            match op {
                Op::Replace(r)
                    if edit.expect_sha256.is_none()
                        && eligible(r)
                        && !(edit.origin.is_none() && fold_eol(&r.old) == fold_eol(&r.new)) =>
                {
                    let recorded = digest.as_ref().is_some_and(|d| self.record.contains(d));
                    per_key.entry(res.real).or_default().push((r, recorded));
                }
                _ => {
                    if let Op::Move { to, .. } | Op::Copy { to } = op
                        && let Ok(dest) = self.resolve(to)
                    {
                        tainted.insert(dest.real);
                        tainted.insert(dest.rel);
                    }
                    tainted.insert(res.real);
                    tainted.insert(res.rel);
                }
            }
        }
        // A file with one edit gains nothing from a pass of its own, unless it is read and
        // planned ahead on every core with the others (`plan_batches_ahead`: the working tree,
        // enough files): a bot's rename across 200 files, one edit each, was read, matched and
        // hashed on one thread.
        let ahead = matches!(self.source, Source::WorkTree) && per_key.len() >= AHEAD_FILES;
        self.batches = per_key
            .into_iter()
            .filter(|(k, v)| (v.len() >= 2 || ahead) && !tainted.contains(k))
            .map(|(k, v)| (k, Pending::Edits(v)))
            .collect();
    }

    /// Reads and plans the batches' files on every core, before the edits are taken in order:
    /// each file's first edit then finds its file read and its steps made ([`Ahead`]). Nothing
    /// else changes: the order in which paths enter the plan (and the report) is still that of
    /// their first edit, and a file is read from the disk as the plan would read it then (the
    /// planner writes nothing; a batched file is touched by no other edit, see
    /// [`Planner::gather_batches`]).
    pub(super) fn plan_batches_ahead(&mut self) {
        if !matches!(self.source, Source::WorkTree) {
            return;
        }
        #[cfg(test)]
        if AHEAD_OFF.with(std::cell::Cell::get) {
            return;
        }
        let mut by_folder: BTreeMap<&str, Vec<AheadFile>> = BTreeMap::new();
        for (key, pending) in &self.batches {
            let Pending::Edits(edits) = pending else {
                continue;
            };
            if crate::fs::resolve::components(key).is_err() {
                continue;
            }
            let (parent, name) = key.rsplit_once('/').unwrap_or(("", key.as_str()));
            by_folder
                .entry(parent)
                .or_default()
                .push((key.as_str(), name, edits.as_slice()));
        }
        if by_folder.values().map(Vec::len).sum::<usize>() < AHEAD_FILES {
            return;
        }
        let tasks: Vec<(&str, &[AheadFile])> = by_folder
            .iter()
            .flat_map(|(parent, files)| files.chunks(AHEAD_CHUNK).map(move |c| (*parent, c)))
            .collect();
        let fs = self.roots.fs();
        let done = crate::par::map(&tasks, |(parent, files)| read_and_plan(fs, parent, files));
        let mut ahead = HashMap::new();
        for ((_, files), results) in tasks.iter().zip(done) {
            for ((key, _, _), result) in files.iter().zip(results) {
                if let Some(a) = result {
                    ahead.insert(key.to_string(), a);
                }
            }
        }
        self.ahead = ahead;
    }

    /// The step of the next edit of `key` when its edits are planned together; on the first one
    /// the whole file is planned (or its plan made ahead is taken). `None`: plan this edit (and
    /// the file's next ones) one by one.
    pub(super) fn batched_step(&mut self, key: &str, shown: &str) -> Option<Step> {
        if let Pending::Steps(q) = self.batches.get_mut(key)? {
            return q.pop_front();
        }
        let Some(Pending::Edits(edits)) = self.batches.remove(key) else {
            return None;
        };
        let steps = match self.ahead.remove(key) {
            // The path enters the plan now, as it would have by being read here.
            Some(Ahead {
                content,
                disk,
                stamp,
                plan,
                hashes,
            }) if !self.slots.contains_key(key) => {
                #[cfg(test)]
                AHEAD_TAKEN.with(|n| n.set(n.get() + 1));
                self.load(key, (content, disk, stamp));
                let (steps, after, changed) = plan?;
                if let Some(Slot {
                    content: Content::File { doc, .. },
                    ..
                }) = self.slots.get_mut(key)
                {
                    *doc = Some(after);
                }
                self.changed_at.insert(key.to_string(), changed);
                if let Some(h) = hashes {
                    self.hashed.insert(key.to_string(), h);
                }
                steps
            }
            _ => {
                let doc = self.text_of(key, shown).ok()?;
                let refs: Vec<&Replace> = edits.iter().map(|(r, _)| *r).collect();
                let recorded: Vec<bool> = edits.iter().map(|(_, rec)| *rec).collect();
                let (steps, after, changed) = plan_file(doc, &refs, &recorded)?;
                // Hashed here as when planned ahead (see `read_and_plan`).
                if let Some(Disk::File { bytes, .. }) = self.originals.get(key)
                    && let Some(h) = Hashes::of(bytes, &after)
                {
                    self.hashed.insert(key.to_string(), h);
                }
                if let Some(Slot {
                    content: Content::File { doc, .. },
                    ..
                }) = self.slots.get_mut(key)
                {
                    *doc = Some(after);
                }
                self.changed_at.insert(key.to_string(), changed);
                steps
            }
        };
        self.mark_changed(key);
        let mut q: std::collections::VecDeque<Step> = steps.into();
        let first = q.pop_front();
        self.batches.insert(key.to_string(), Pending::Steps(q));
        first
    }
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
