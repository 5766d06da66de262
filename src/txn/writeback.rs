//! Writing a verified plan back to the working tree, all or nothing.
//!
//! The order of operations is what makes a batch atomic for every practical purpose:
//! 1. every path is compared with the state the plan was made from: anything changed meanwhile
//!    is a concurrent modification (exit 4) and nothing is touched. A file is read again and
//!    compared byte for byte, unless its stamp is the one it had when the plan read it and that
//!    stamp proves it unwritten since ([`crate::fs::stamp`]);
//! 2. each new content goes to a temp file in the target's own directory (same file system, so the
//!    final rename is atomic), with the original's mode and owner (given at its creation where
//!    they can be, so that most files need no further inode update);
//! 3. all temp files are fsynced, several at a time ([`crate::fs::sync_spread`]: more than there
//!    are cores, since a sync waits rather than computes), through the descriptors kept open
//!    since their write (one sync per file is the cost of durability; each file's write-out was
//!    started as soon as it was written ([`crate::fs::start_writeback`]), so the disk works on
//!    all of them while the others are prepared and the fsyncs mostly find their data written);
//! 4. each path is re-verified once more immediately before its rename (the window for a racing
//!    writer shrinks to one syscall), then renamed into place or removed. The re-verification
//!    is by the path's stamp where the stamp proves it unwritten since step 1 looked at it
//!    ([`crate::fs::stamp`]: same inode, size and times, last changed before step 1 began, on a
//!    file system whose times can tell), by its content otherwise;
//! 5. the directories that changed are fsynced (several at a time), so the renames themselves are
//!    durable.
//!
//! Every path goes through [`crate::fs`]: its parent directory is opened from the repository root
//! without following symlinks, the temp file is made in that open directory, and just before the
//! rename the path is walked again and must still lead to the same directory. A folder swapped
//! for a symlink (or for another folder) at any moment is a [`Error::PathChanged`] (exit 4) and the
//! batch is undone; nothing is ever written through the symlink.
//!
//! A failure in step 4 undoes the paths already replaced, from the original bytes held in memory,
//! and removes every temp file, so the tree is as before and the error says so.
//!
//! `PATCHGATE_FSYNC=0` skips steps 3 and 5 (for measuring what durability costs; never the default),
//! and so does a folder on a file system in memory for its own files ([`Dir::in_memory`]: tmpfs's
//! fsync is a no-op, and the calls were a few percent of a large batch there).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fault;

use crate::error::Error;
use crate::fs::stamp::{Moment, Stamp};
use crate::fs::{Dir, Kind, Meta, Root};
use crate::plan::{Disk, PathChange};
use crate::repo::Roots;

use crate::fs::{NEW_FILE_MODE, default_file_mode, fsync_enabled};

/// A temp path next to `path`, hidden, with a name `patchgate recover` can recognise.
pub fn temp_path_for(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(crate::fs::temp_name(&name))
}

/// The current state of `name` in `dir`, compared with what the plan expects. A symlink that
/// appeared on the way is an error, not a mismatch: the caller must stop, not compare.
fn matches_in(dir: &Dir, name: &str, expected: &Disk) -> std::io::Result<bool> {
    Ok(seen_in(dir, name, expected, None)?.0)
}

/// A file's stamp when it was last read, and a moment before that read began: proof that the
/// file still holds what was read, as long as the stamp is the same ([`crate::fs::stamp`]).
type Proof = (Stamp, Moment);

/// [`matches_in`], with the metadata looked at (`None`: nothing there). With `proof`, a file
/// whose stamp is unchanged and proves it unwritten since is not read again.
fn seen_in(
    dir: &Dir,
    name: &str,
    expected: &Disk,
    proof: Option<Proof>,
) -> std::io::Result<(bool, Option<Meta>)> {
    let Some(md) = dir.lstat(name)? else {
        return Ok((*expected == Disk::Missing, None));
    };
    let same = match expected {
        Disk::Missing | Disk::Dir | Disk::Other => false,
        Disk::Symlink { target } => {
            md.kind == Kind::Symlink && dir.read_link(name).is_ok_and(|t| t == *target)
        }
        Disk::File { bytes, .. } => {
            md.kind == Kind::File
                && md.len == bytes.len() as u64
                && (proof.is_some_and(|(stamp, since)| {
                    md.stamp == stamp && stamp.settled_before(since) && dir.stamps_are_proof()
                }) || dir.read(name).is_ok_and(|b| b == **bytes))
        }
    };
    Ok((same, Some(md)))
}

/// [`seen_in`] for a change's path from the root (a missing parent is a missing path), each
/// folder opened once for the batch, with the plan's read as proof.
fn seen_disk(dirs: &mut Dirs, fs: &Root, c: &PathChange) -> std::io::Result<(bool, Option<Meta>)> {
    match dirs.parent_of(fs, &c.rel) {
        Ok((d, name)) => seen_in(&d, name, &c.before, c.read),
        Err(e) if crate::fs::gone(&e) => Ok((c.before == Disk::Missing, None)),
        Err(e) => Err(e),
    }
}

/// One prepared replacement: the open parent directory, the name in it, and the temp file (with
/// its descriptor while it waits for its fsync, see [`KEEP_OPEN`]).
struct Staged {
    change_index: usize,
    dir: Arc<Dir>,
    name: String,
    temp: Option<String>,
    file: std::sync::Mutex<Option<std::fs::File>>,
}

/// Up to this many descriptors (the folders held open, then the temp files) stay open from a temp
/// file's write to its fsync, and fewer when the descriptor limit is low: reopening each file by
/// name to sync it cost an open and a close per file. Within the table grown at start-up
/// (`crate::fdtable`, 1,024 slots) with room for the repository's own files: past it the table
/// would grow again, and with the run's threads sharing it each growth waits for an RCU grace
/// period (10-15 ms).
const KEEP_OPEN: usize = 960;

/// Callbacks at the two moments a journal must record: just before the first path is replaced
/// (from then on recovery may need the staged objects), and just before an undo starts.
pub struct Hooks<'a> {
    pub before_switch: &'a mut dyn FnMut() -> Result<(), Error>,
    pub before_rollback: &'a mut dyn FnMut(),
}

/// The parent directories (relative, `/`-separated) that writing `changes` would create.
pub fn missing_parents(roots: &Roots, changes: &[PathChange]) -> Vec<String> {
    let mut out = BTreeSet::new();
    // Folders already looked at and found there (a batch has many files per folder).
    let mut present: std::collections::HashSet<String> = std::collections::HashSet::new();
    for c in changes {
        if matches!(c.after, Disk::Missing) {
            continue;
        }
        let mut p = Path::new(&c.rel).parent();
        while let Some(dir) = p.filter(|d| !d.as_os_str().is_empty()) {
            let rel = dir.to_string_lossy();
            if out.contains(rel.as_ref()) {
                // Found missing for an earlier file, with its parents.
                break;
            }
            if present.contains(rel.as_ref()) || !matches!(roots.fs().lstat(&rel), Ok(None)) {
                present.insert(rel.into_owned());
                break;
            }
            out.insert(rel.into_owned());
            p = dir.parent();
        }
    }
    out.into_iter().collect()
}

/// The parent directories of the batch, each opened once (many files share a folder).
#[derive(Default)]
struct Dirs(HashMap<String, Arc<Dir>>);

impl Dirs {
    fn parent_of<'a>(&mut self, fs: &Root, rel: &'a str) -> std::io::Result<(Arc<Dir>, &'a str)> {
        let (parent, name) = match rel.rsplit_once('/') {
            Some((p, n)) => (p, n),
            None => ("", rel),
        };
        if let Some(d) = self.0.get(parent) {
            return Ok((Arc::clone(d), name));
        }
        let d = Arc::new(fs.dir(parent)?);
        self.0.insert(parent.to_string(), Arc::clone(&d));
        Ok((d, name))
    }
}

/// The temp file (or symlink) holding a change's new content, made next to its target, with the
/// original's mode and owner; `None` for a path the change removes.
/// `seen` is the path's metadata as step 1 verified it (its owner is the temp file's); `keep`
/// returns the temp file's descriptor for its fsync.
fn temp_for(
    dir: &Dir,
    name: &str,
    c: &PathChange,
    seen: Option<&Meta>,
    keep: bool,
    fail: &dyn Fn(&'static str, &str, std::io::Error) -> Error,
) -> Result<Option<(String, Option<std::fs::File>)>, Error> {
    Ok(match &c.after {
        Disk::File { bytes, mode } => {
            let owner = match &c.before {
                Disk::File { .. } => seen.map(|m| (m.uid, m.gid)),
                _ => None,
            };
            let mode = if *mode == NEW_FILE_MODE {
                default_file_mode()
            } else {
                *mode
            };
            let tmp = crate::fs::temp_name(name);
            let file = dir
                .write_new(&tmp, bytes, mode, owner)
                .map_err(|e| fail("write a temp file for", &c.rel, e))?;
            Some((tmp, keep.then_some(file)))
        }
        Disk::Symlink { target } => {
            let tmp = crate::fs::temp_name(name);
            dir.symlink(target, &tmp)
                .map_err(|e| fail("create a symlink at", &c.rel, e))?;
            Some((tmp, None))
        }
        Disk::Missing | Disk::Dir | Disk::Other => None,
    })
}

/// Applies `changes` to the working tree under `roots`, all or nothing.
pub fn write_back(roots: &Roots, changes: &[PathChange], hooks: Hooks) -> Result<(), Error> {
    let fs = roots.fs();
    let fail =
        |action: &'static str, rel: &str, e: std::io::Error| Error::fs(action, &roots.root, rel, e);
    fault::point("before-verify");
    // 1. Nothing changed since planning. The folders opened here serve the temp files too: the
    // switch checks again, file by file, that each still is where its path leads.
    let fd_limit = raise_fd_limit();
    // Before anything is looked at: a file last changed before this moment and found with the
    // same stamp at its switch has not been written since (crate::fs::stamp).
    let t0 = crate::fs::stamp::now();
    let mut dirs = Dirs::default();
    let mut seen: Vec<Option<Meta>> = Vec::with_capacity(changes.len());
    for c in changes {
        let (same, md) = seen_disk(&mut dirs, fs, c).map_err(|e| fail("read", &c.rel, e))?;
        if !same {
            return Err(Error::ConcurrentModification {
                path: c.rel.clone(),
            });
        }
        seen.push(md);
    }
    crate::timing::mark("write-back: verified");

    // 2. Temp files, with any missing parent directories: the folders in order (each opened or
    // created once), then the files.
    let mut created_dirs: Vec<String> = Vec::new();
    let mut places: Vec<(Arc<Dir>, &str)> = Vec::with_capacity(changes.len());
    let opened = (|| -> Result<(), Error> {
        for c in changes {
            // Most folders exist (and are open already, from step 1): only a folder that does not
            // open is created, with its missing parents.
            let place = match dirs.parent_of(fs, &c.rel) {
                Ok(opened) => opened,
                Err(e) => {
                    match c.rel.rsplit_once('/') {
                        Some((parent, _))
                            if matches!(c.after, Disk::File { .. } | Disk::Symlink { .. }) =>
                        {
                            let made = fs
                                .create_dirs(parent)
                                .map_err(|e| fail("create directory", parent, e))?;
                            created_dirs.extend(made);
                        }
                        _ => return Err(fail("open the folder of", &c.rel, e)),
                    }
                    dirs.parent_of(fs, &c.rel)
                        .map_err(|e| fail("open the folder of", &c.rel, e))?
                }
            };
            places.push(place);
        }
        Ok(())
    })();
    if let Err(e) = opened {
        cleanup(fs, &[], &created_dirs);
        return Err(e);
    }
    // A descriptor per folder is held already; the first temp files stay open for their sync, as
    // many as fit beside the folders well within the limit, and only where a sync will follow (a
    // file system in memory is not synced: its descriptors would only fill the table).
    let sync = fsync_enabled();
    // Where one syncfs makes the temp files durable (`fs::together`), none is kept open.
    let together = if sync {
        let on_disk: Vec<usize> = (0..changes.len())
            .filter(|&i| matches!(changes[i].after, Disk::File { .. }))
            .filter(|&i| !places[i].0.in_memory())
            .collect();
        crate::fs::together::one_sync_for(on_disk.iter().map(|&i| &places[i].0), on_disk.len())
    } else {
        None
    };
    let mut keep_open = KEEP_OPEN.min(fd_limit / 4).saturating_sub(dirs.0.len());
    let keep: Vec<bool> = places
        .iter()
        .map(|(dir, _)| {
            let keep = sync && together.is_none() && keep_open > 0 && !dir.in_memory();
            keep_open -= usize::from(keep);
            keep
        })
        .collect();
    // A group of folders per core (as the switch, below), in each one file after another: on a
    // journaled ext4 the 1,000-edit batch's 200 temp files took 10-12 ms on one thread and 7-10
    // on two (on tmpfs the same either way, BENCHMARKS.md (ad)). After a failure no group starts
    // another file; every temp file made, on any thread, is removed.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let write_group = |group: &Vec<usize>| -> (Vec<Staged>, Option<(usize, Error)>) {
        use std::sync::atomic::Ordering;
        let mut made = Vec::with_capacity(group.len());
        for &i in group {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let (dir, name) = &places[i];
            match temp_for(dir, name, &changes[i], seen[i].as_ref(), keep[i], &fail) {
                Ok(temp) => {
                    let (temp, file) = temp.map_or((None, None), |(t, f)| (Some(t), f));
                    made.push(Staged {
                        change_index: i,
                        dir: Arc::clone(dir),
                        name: name.to_string(),
                        temp,
                        file: std::sync::Mutex::new(file),
                    });
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return (made, Some((i, e)));
                }
            }
        }
        (made, None)
    };
    let groups = folder_groups(places.iter().map(|(d, _)| d));
    let mut staged: Vec<Staged> = Vec::with_capacity(changes.len());
    let mut failed: Option<(usize, Error)> = None;
    for (made, err) in on_threads(&groups, write_group) {
        staged.extend(made);
        if let Some((i, e)) = err
            && failed.as_ref().is_none_or(|(f, _)| i < *f)
        {
            failed = Some((i, e));
        }
    }
    if let Some((_, e)) = failed {
        cleanup(fs, &staged, &created_dirs);
        return Err(e);
    }
    staged.sort_unstable_by_key(|s| s.change_index);

    crate::timing::mark("write-back: temp files written");
    // 3. Durable content before any rename; each kept descriptor is closed once its file is synced.
    if sync {
        // Nothing to flush on a file system in memory (tmpfs's fsync is a no-op): those
        // descriptors are just closed.
        for s in staged.iter().filter(|s| s.dir.in_memory()) {
            s.file.lock().ok().and_then(|mut f| f.take());
        }
        let temps: Vec<_> = staged
            .iter()
            .filter(|s| matches!(changes[s.change_index].after, Disk::File { .. }))
            .filter(|s| !s.dir.in_memory())
            .filter_map(|s| s.temp.as_ref().map(|t| (s, t)))
            .collect();
        let sync_one = |(s, t): &(&Staged, &String)| {
            let kept = s.file.lock().ok().and_then(|mut f| f.take());
            match kept {
                Some(f) => f.sync_all(),
                None => s.dir.sync_file(t),
            }
            .map_err(|e| fail("fsync", &s.dir.rel_of(t), e))
        };
        // One syncfs for all where it is as durable and cheaper (`fs::together`). Otherwise all
        // at once, none first on its own: on a disk each sync waits for a journal commit (or at
        // least a flush of the disk's cache), and syncs in flight together share one.
        let synced = match &together {
            Some(dir) if !temps.is_empty() => dir.sync_file_system().map_err(|e| {
                fail(
                    "sync the file system of",
                    &temps[0].0.dir.rel_of(temps[0].1),
                    e,
                )
            }),
            _ => crate::fs::sync_spread(&temps, sync_one),
        };
        if let Err(e) = synced {
            cleanup(fs, &staged, &created_dirs);
            return Err(e);
        }
    } else {
        for s in &staged {
            s.file.lock().ok().and_then(|mut f| f.take());
        }
    }

    crate::timing::mark("write-back: temp files synced");
    fault::point("before-switch");
    if let Err(e) = (hooks.before_switch)() {
        cleanup(fs, &staged, &created_dirs);
        return Err(e);
    }
    // 4. The switch, each path verified just before it is replaced: its folder is still the one
    // the temp file is in, reached without a symlink, and the file still holds what was planned.
    let switch = Switch {
        fs,
        staged: &staged,
        changes,
        seen: &seen,
        t0,
        fail: &fail,
    };
    let switched = switch.all();
    if let Some((_, e)) = switched.failed {
        (hooks.before_rollback)();
        let undo = rollback(&staged, changes, &switched.done);
        let done: BTreeSet<usize> = switched.done.iter().copied().collect();
        let left = staged.iter().enumerate().filter(|(k, _)| !done.contains(k));
        cleanup(fs, left.map(|(_, s)| s), &created_dirs);
        return Err(match undo {
            Ok(left) if left.is_empty() => e,
            Ok(left) => Error::UndoneExcept {
                cause: e.to_string(),
                left,
            },
            Err(u) => u,
        });
    }

    // 5. Durable renames: each folder that changed, and the parents of the folders created.
    if sync {
        // The content is in place; a failed directory sync only weakens durability.
        let folders: Vec<&Arc<Dir>> = dirs.0.values().filter(|d| !d.in_memory()).collect();
        // Many folders on one ext4: one syncfs commits every rename and every folder made (a
        // created folder's parent is on its file system), as for the temp files above.
        let together = crate::fs::together::one_sync_for(folders.iter().copied(), folders.len());
        if let Some(d) = together {
            let _ = d.sync_file_system();
        } else {
            let _ = crate::fs::sync_each(&folders, |d| d.sync());
            let parents: BTreeSet<&str> = created_dirs
                .iter()
                .map(|d| d.rsplit_once('/').map_or("", |(p, _)| p))
                .collect();
            let parents: Vec<&str> = parents.into_iter().collect();
            let _ = crate::fs::sync_each(&parents, |p| {
                let d = fs.dir(p)?;
                if d.in_memory() { Ok(()) } else { d.sync() }
            });
        }
    }
    Ok(())
}

/// How one path of the switch went.
enum Step {
    Done,
    /// Its folder is no longer reached by its path (moved, or replaced by another or a symlink).
    Moved,
    /// It no longer holds what was planned.
    Changed,
}

/// From this many paths in more than one folder, the switch runs on several threads, a folder's
/// paths on one (two threads renaming in one folder would wait on its lock): each path costs a few
/// system calls (the folder's check, the file's, the rename), ten microseconds or so, and a large
/// batch's switch was a tenth of its run.
const PARALLEL_SWITCH: usize = 64;

/// How the switch ended: the paths switched (indices into `staged`, ascending), and the first
/// failure (by index) with its error.
struct Switched {
    done: Vec<usize>,
    failed: Option<(usize, Error)>,
}

/// What the switch of each path needs: the staged paths, their changes, what step 1 saw of each,
/// when it began, and how an I/O error is told.
struct Switch<'a> {
    fs: &'a Root,
    staged: &'a [Staged],
    changes: &'a [PathChange],
    seen: &'a [Option<Meta>],
    t0: Moment,
    fail: &'a (dyn Fn(&'static str, &str, std::io::Error) -> Error + Sync),
}

impl Switch<'_> {
    /// Switches every staged path, each verified just before its rename; after a failure, no
    /// other path is started (those under way on other threads finish).
    fn all(&self) -> Switched {
        let stop = std::sync::atomic::AtomicBool::new(false);
        let run = |group: &Vec<usize>| self.group(group, &stop);
        let groups = switch_groups(self.staged);
        let mut parts = on_threads(&groups, run);
        let mut done: Vec<usize> = parts.iter_mut().flat_map(|p| p.done.drain(..)).collect();
        done.sort_unstable();
        let failed = parts
            .into_iter()
            .filter_map(|p| p.failed)
            .min_by_key(|(k, _)| *k);
        Switched { done, failed }
    }

    /// Switches one path: its folder still the one its path leads to, the file still what step 1
    /// found there (`seen`, its metadata then) — by its stamp alone when the stamp proves that
    /// nothing wrote to it since ([`crate::fs::stamp`]: the same file, changed last before `t0`,
    /// on a file system whose times can tell), else by reading it again — then the rename.
    fn one(&self, s: &Staged, c: &PathChange, seen: Option<&Meta>) -> std::io::Result<Step> {
        if !self.fs.still_at(&s.dir)? {
            return Ok(Step::Moved);
        }
        let proof = seen
            .filter(|was| was.kind == Kind::File)
            .map(|was| (was.stamp, self.t0));
        if !seen_in(&s.dir, &s.name, &c.before, proof)?.0 {
            return Ok(Step::Changed);
        }
        match &s.temp {
            Some(tmp) => s.dir.rename(tmp, &s.name)?,
            None => s.dir.unlink(&s.name)?,
        }
        Ok(Step::Done)
    }

    /// Switches the paths of `group` in order, until one fails or `stop` is set.
    fn group(&self, group: &[usize], stop: &std::sync::atomic::AtomicBool) -> Switched {
        use std::sync::atomic::Ordering;
        let mut done = Vec::with_capacity(group.len());
        for &k in group {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let s = &self.staged[k];
            let c = &self.changes[s.change_index];
            let seen = self.seen[s.change_index].as_ref();
            let result = match self.one(s, c, seen) {
                Ok(Step::Done) => Ok(()),
                Ok(Step::Moved) => Err(Error::PathChanged {
                    path: c.rel.clone(),
                    detail: "its folder was moved or replaced".into(),
                }),
                Ok(Step::Changed) => Err(Error::ConcurrentModification {
                    path: c.rel.clone(),
                }),
                Err(e) => Err((self.fail)("replace", &c.rel, e)),
            };
            if let Err(e) = result {
                stop.store(true, Ordering::Relaxed);
                return Switched {
                    done,
                    failed: Some((k, e)),
                };
            }
            done.push(k);
            fault::point("after-switch");
        }
        Switched { done, failed: None }
    }
}

/// `run` of each group, the first on this thread and each other one on a thread of its own: the
/// shared pool left this thread asleep until the pool woke it again, and the pool's threads were
/// sometimes busy (the report's diffs), a switch of 1 ms taking 2 (BENCHMARKS.md (ad)).
fn on_threads<G: Sync, R: Send>(groups: &[G], run: impl Fn(&G) -> R + Sync) -> Vec<R> {
    let run = &run;
    std::thread::scope(|s| {
        let others: Vec<_> = groups
            .iter()
            .skip(1)
            .map(|g| {
                std::thread::Builder::new()
                    .spawn_scoped(s, move || run(g))
                    .map_err(|_| g)
            })
            .collect();
        let mut parts: Vec<R> = groups.first().map(run).into_iter().collect();
        for other in others {
            parts.push(match other {
                Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                // No thread (a limit on threads): this one does the group too.
                Err(g) => run(g),
            });
        }
        parts
    })
}

/// The staged paths in groups to switch side by side (see [`folder_groups`]).
fn switch_groups(staged: &[Staged]) -> Vec<Vec<usize>> {
    folder_groups(staged.iter().map(|s| &s.dir))
}

/// Paths, by their folders, in groups to work on side by side: whole folders (two threads in one
/// folder would wait on its lock), the largest first to the group with the fewest paths; one
/// group when there are few paths or one folder.
fn folder_groups<'d>(dirs: impl ExactSizeIterator<Item = &'d Arc<Dir>>) -> Vec<Vec<usize>> {
    let count = dirs.len();
    let mut folders: Vec<Vec<usize>> = Vec::new();
    let mut of_dir: HashMap<*const Dir, usize> = HashMap::new();
    for (k, d) in dirs.enumerate() {
        let f = *of_dir.entry(Arc::as_ptr(d)).or_insert_with(|| {
            folders.push(Vec::new());
            folders.len() - 1
        });
        folders[f].push(k);
    }
    if count < PARALLEL_SWITCH || folders.len() < 2 {
        return vec![(0..count).collect()];
    }
    let ways = crate::par::cores().min(folders.len());
    if ways < 2 {
        return vec![(0..count).collect()];
    }
    folders.sort_by_key(|f| std::cmp::Reverse(f.len()));
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); ways];
    for f in folders {
        if let Some(g) = groups.iter_mut().min_by_key(|g| g.len()) {
            g.extend(f);
        }
    }
    for g in &mut groups {
        g.sort_unstable();
    }
    groups
}

/// A many-folder batch holds one descriptor per folder: allow what the hard limit allows.
/// Returns the limit now in force (1024 when it cannot be read).
fn raise_fd_limit() -> usize {
    // SAFETY: getrlimit/setrlimit on our own process with a properly initialised struct.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
        usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
    }
}

/// Removes the temp files not renamed into place (through the folders they were made in, wherever
/// those are now) and the folders created for them.
fn cleanup<'s>(fs: &Root, staged: impl IntoIterator<Item = &'s Staged>, created_dirs: &[String]) {
    for s in staged {
        if let Some(t) = &s.temp {
            let _ = s.dir.unlink(t);
        }
    }
    for d in created_dirs.iter().rev() {
        let _ = fs.remove_dir(d);
    }
}

/// Puts back the paths already switched (indices into `staged`), from the original state held in
/// memory, in the folders they were written in.
fn rollback(
    staged: &[Staged],
    changes: &[PathChange],
    done: &[usize],
) -> Result<Vec<String>, Error> {
    let mut failed = Vec::new();
    let mut left = Vec::new();
    for &k in done.iter().rev() {
        let s = &staged[k];
        let c = &changes[s.change_index];
        // Only what still holds our content is ours to undo: an editor may have saved over a
        // file we already switched, and that save is the user's newest work.
        match matches_in(&s.dir, &s.name, &c.after) {
            Ok(true) => {}
            Ok(false) => {
                left.push(c.rel.clone());
                continue;
            }
            Err(_) => {
                failed.push(c.rel.clone());
                continue;
            }
        }
        let r = match &c.before {
            Disk::File { bytes, mode } => {
                crate::fs::write_in(&s.dir, &s.name, bytes, *mode, None, || {})
            }
            Disk::Missing => s.dir.unlink(&s.name),
            Disk::Symlink { target } => {
                let tmp = crate::fs::temp_name(&s.name);
                s.dir
                    .symlink(target, &tmp)
                    .and_then(|()| s.dir.rename(&tmp, &s.name))
            }
            Disk::Dir | Disk::Other => Ok(()),
        };
        if r.is_err() {
            failed.push(c.rel.clone());
        }
    }
    if failed.is_empty() {
        Ok(left)
    } else {
        Err(Error::RollbackFailed { paths: failed })
    }
}

/// The directories that removing files left empty (a patch's created folders, usually), deepest
/// first, up to the working tree's root. Best effort: git does not track directories, so one that
/// stays behind changes nothing `git status` shows.
pub fn remove_emptied_dirs(roots: &Roots, changes: &[PathChange]) {
    let mut dirs: Vec<&Path> = changes
        .iter()
        .filter(|c| c.after == Disk::Missing)
        .flat_map(|c| Path::new(&c.rel).ancestors().skip(1))
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    dirs.dedup();
    for d in dirs {
        // Fails (and is meant to) on a directory that still holds anything, or on a path that a
        // symlink now interrupts.
        let _ = roots.fs().remove_dir(&d.to_string_lossy());
    }
}
