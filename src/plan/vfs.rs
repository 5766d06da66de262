//! The planner's files in memory: each path the patch touches is read once (from the working tree
//! through the open root, or from a commit's tree) into a slot, and edits apply to the slots, so a
//! later edit of a file sees the result of an earlier one and a moved file is found under its new
//! name. Nothing here writes to disk.

use super::*;

/// In-memory state of one path during planning.
#[derive(Debug, Clone)]
pub(super) enum Content {
    Missing,
    Dir,
    Other(String),
    Link(PathBuf),
    File {
        bytes: Arc<Vec<u8>>,
        mode: u32,
        doc: Option<TextDoc>,
        changed: bool,
    },
}

#[derive(Debug)]
pub(super) struct Slot {
    pub(super) content: Content,
    /// The path this content was moved from (followed through chains of moves).
    pub(super) origin: Option<String>,
}

/// Where the files a patch edits are read from.
pub enum Source<'a> {
    /// The working tree, as it is now (uncommitted changes included).
    WorkTree,
    /// A commit's tree (`--branch`: the branch's tip, with no working tree involved).
    Tree {
        repo: &'a git2::Repository,
        tree: &'a git2::Tree<'a>,
    },
}

/// From this many distinct paths in the working tree, they are resolved ahead on every core.
const AHEAD_PATHS: usize = 64;

/// Paths resolved ahead by one task, with one cache of plain folders.
const AHEAD_PATHS_CHUNK: usize = 32;

impl Planner<'_> {
    /// Resolves the distinct paths of `given` ahead, on every core when there are many (each
    /// chunk with its own cache of plain folders), into the cache [`Planner::resolve`] reads: a
    /// large batch's 200 paths took half a millisecond one after another. The results are those
    /// [`Planner::resolve`] gives: a path's resolution depends on the file system alone.
    pub(super) fn resolve_ahead<'g>(&self, given: impl Iterator<Item = &'g str>) {
        if !matches!(self.source, Source::WorkTree) {
            return;
        }
        #[cfg(test)]
        if super::batch::AHEAD_OFF.with(std::cell::Cell::get) {
            return;
        }
        let mut seen = std::collections::HashSet::new();
        let fresh: Vec<&str> = {
            let known = self.resolved.borrow();
            given
                .filter(|g| !known.contains_key(*g) && seen.insert(*g))
                .collect()
        };
        if fresh.len() < AHEAD_PATHS {
            return;
        }
        let roots = self.roots;
        let chunks: Vec<&[&str]> = fresh.chunks(AHEAD_PATHS_CHUNK).collect();
        let done = crate::par::map(&chunks, |chunk| {
            let mut plain = crate::repo::PlainDirs::default();
            chunk
                .iter()
                .map(|g| (g.to_string(), roots.resolve_cached(g, &mut plain)))
                .collect::<Vec<_>>()
        });
        self.resolved
            .borrow_mut()
            .extend(done.into_iter().flatten());
    }

    /// Resolves a patch path, once per distinct spelling: a batch names the same file many times,
    /// and resolving walks the file system (symlink checks) component by component.
    pub(super) fn resolve(&self, given: &str) -> Result<Resolved, String> {
        if let Some(r) = self.resolved.borrow().get(given) {
            return r.clone();
        }
        let r = match self.source {
            Source::WorkTree => self
                .roots
                .resolve_cached(given, &mut self.plain_dirs.borrow_mut()),
            // A tree has no symlinks to follow on the way: a link entry is refused where it is used.
            Source::Tree { .. } => self.roots.resolve_lexical(given),
        };
        self.resolved
            .borrow_mut()
            .insert(given.to_string(), r.clone());
        r
    }

    /// Loads a path's slot from disk on first use.
    pub(super) fn slot(&mut self, key: &str) -> &mut Slot {
        if !self.slots.contains_key(key) {
            let (content, disk, stamp) = match self.source {
                Source::WorkTree => read_through(&mut self.dirs, self.roots.fs(), key),
                Source::Tree { repo, tree } => {
                    let (content, disk) = read_tree(repo, tree, key);
                    (content, disk, None)
                }
            };
            self.load(key, (content, disk, stamp));
        }
        // Inserted just above when missing; the fallback is never taken.
        self.slots.entry(key.to_string()).or_insert(Slot {
            content: Content::Missing,
            origin: None,
        })
    }

    /// Enters a path into the plan with what was read of it: its state before the patch, and the
    /// content edits start from.
    pub(super) fn load(&mut self, key: &str, (content, disk, stamp): Read) {
        if let Some(stamp) = stamp {
            self.stamps.insert(key.to_string(), stamp);
        }
        self.originals.insert(key.to_string(), disk);
        self.order.push(key.to_string());
        self.slots.insert(
            key.to_string(),
            Slot {
                content,
                origin: None,
            },
        );
    }

    /// The decoded text of a file, or the step that explains why there is none.
    pub(super) fn text_of(&mut self, key: &str, shown: &str) -> Result<&mut TextDoc, Box<Step>> {
        let fail = |status, m: String| Err(Box::new(Step::msg(status, m)));
        let slot = self.slot(key);
        match &mut slot.content {
            Content::Missing => fail(
                EditStatus::NotFound,
                format!("{shown} does not exist (to make a new file use `create: true`)"),
            ),
            Content::Dir => fail(
                EditStatus::Error,
                format!("{shown} is a directory, not a file"),
            ),
            Content::Other(why) => fail(EditStatus::Error, format!("{shown} {why}")),
            Content::Link(_) => fail(EditStatus::Error, format!("{shown} is a symlink")),
            Content::File { bytes, doc, .. } => {
                let decoded = match doc.take() {
                    Some(d) => d,
                    None => match TextDoc::decode(bytes) {
                        Ok(d) => d,
                        Err(e) => return fail(EditStatus::Error, format!("{shown} {e}")),
                    },
                };
                Ok(doc.insert(decoded))
            }
        }
    }

    pub(super) fn mark_changed(&mut self, key: &str) {
        if let Some(Slot {
            content: Content::File { changed, .. },
            ..
        }) = self.slots.get_mut(key)
        {
            *changed = true;
        }
    }
}

pub(super) fn read_tree(repo: &git2::Repository, tree: &git2::Tree, rel: &str) -> (Content, Disk) {
    let entry = match tree.get_path(std::path::Path::new(rel)) {
        Ok(e) => e,
        Err(_) => return (Content::Missing, Disk::Missing),
    };
    match entry.kind() {
        Some(git2::ObjectType::Tree) => (Content::Dir, Disk::Dir),
        Some(git2::ObjectType::Blob) => {
            let blob = match repo.find_blob(entry.id()) {
                Ok(b) => b,
                Err(e) => {
                    return (
                        Content::Other(format!("cannot be read from git: {}", e.message())),
                        Disk::Other,
                    );
                }
            };
            let bytes = Arc::new(blob.content().to_vec());
            if entry.filemode() == 0o120000 {
                let target = PathBuf::from(String::from_utf8_lossy(&bytes).into_owned());
                return (Content::Link(target.clone()), Disk::Symlink { target });
            }
            let mode = if entry.filemode() & 0o111 != 0 {
                0o755
            } else {
                0o644
            };
            (
                Content::File {
                    bytes: Arc::clone(&bytes),
                    mode,
                    doc: None,
                    changed: false,
                },
                Disk::File { bytes, mode },
            )
        }
        _ => (Content::Other("is a submodule".into()), Disk::Other),
    }
}

/// A working-tree path's state as write-back compares it, read through the open root without
/// following any symlink on the way (`rel` is a real path: see `repo::Resolved::real`).
pub fn disk_at(fs: &crate::fs::Root, rel: &str) -> Disk {
    read_disk(fs, rel).1
}

/// How many folders the planner keeps open at once (see [`read_through`]).
const OPEN_DIRS: usize = 64;

/// [`read_disk`], with each folder opened once for all the files the plan reads from it (a batch
/// names many files in few folders; opening the folder was a third of the system calls of a
/// read). A kept folder was opened the same race-free way, with no symlink on its path at that
/// moment, and a read through it follows no symlink either; what was read is only the plan's
/// before state, which write-back checks again by walking every path afresh. The folders are
/// closed when planning ends (and all at once when [`OPEN_DIRS`] are open).
pub(super) fn read_through(
    dirs: &mut HashMap<String, crate::fs::Dir>,
    fs: &crate::fs::Root,
    rel: &str,
) -> Read {
    if crate::fs::resolve::components(rel).is_err() {
        return read_disk(fs, rel);
    }
    let (parent, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    if !dirs.contains_key(parent) {
        // A folder that cannot be opened: the uncached read tells why.
        let Ok(dir) = fs.dir(parent) else {
            return read_disk(fs, rel);
        };
        if dirs.len() >= OPEN_DIRS {
            dirs.clear();
        }
        dirs.insert(parent.to_string(), dir);
    }
    match dirs.get(parent) {
        Some(dir) => read_in(dir, name),
        None => read_disk(fs, rel),
    }
}

fn unread(e: std::io::Error) -> Read {
    let (content, disk) = unreadable(e);
    (content, disk, None)
}

fn unreadable(e: std::io::Error) -> (Content, Disk) {
    let why = if crate::fs::is_symlink_error(&e) {
        "changed while patchgate was reading it: a symlink is now on its path".to_string()
    } else {
        format!("cannot be read: {e}")
    };
    (Content::Other(why), Disk::Other)
}

pub(super) fn read_disk(fs: &crate::fs::Root, rel: &str) -> Read {
    match fs.parent_of(rel) {
        Ok((dir, name)) => read_in(&dir, name),
        // A parent that is missing or is a file: nothing can be there.
        Err(e) if crate::fs::gone(&e) => (Content::Missing, Disk::Missing, None),
        Err(e) => unread(e),
    }
}

/// A path read from the working tree: what the plan holds, the state write-back compares, and
/// for a file the stamp it had just before it was read ([`crate::fs::stamp`]), with which
/// write-back can tell it unwritten since without reading it again.
pub(super) type Read = (Content, Disk, Option<crate::fs::stamp::Stamp>);

/// What the entry `name` of the open folder `dir` is, read without following it.
pub(super) fn read_in(dir: &crate::fs::Dir, name: &str) -> Read {
    use crate::fs::Kind;
    // Nearly every path an edit names is a regular file: opened and stamped from the open file,
    // one lookup of its name instead of two. Anything else (a symlink refuses the open, a folder
    // or a FIFO is not read, a missing file) is looked at below, as it always was.
    if let Ok((md, bytes)) = dir.read_with_meta(name) {
        let bytes = Arc::new(bytes);
        let content = Content::File {
            bytes: Arc::clone(&bytes),
            mode: md.mode,
            doc: None,
            changed: false,
        };
        let disk = Disk::File {
            bytes,
            mode: md.mode,
        };
        return (content, disk, Some(md.stamp));
    }
    let md = match dir.lstat(name) {
        Ok(None) => return (Content::Missing, Disk::Missing, None),
        Ok(Some(md)) => md,
        Err(e) => return unread(e),
    };
    let (content, disk) = match md.kind {
        Kind::Dir => (Content::Dir, Disk::Dir),
        Kind::Symlink => match dir.read_link(name) {
            Ok(t) => (Content::Link(t.clone()), Disk::Symlink { target: t }),
            Err(e) => unreadable(e),
        },
        Kind::File => match dir.read(name) {
            Ok(bytes) => {
                let bytes = Arc::new(bytes);
                (
                    Content::File {
                        bytes: Arc::clone(&bytes),
                        mode: md.mode,
                        doc: None,
                        changed: false,
                    },
                    Disk::File {
                        bytes,
                        mode: md.mode,
                    },
                )
            }
            Err(e) => unreadable(e),
        },
        Kind::Other => (
            Content::Other("is not a regular file (a device, FIFO or socket)".into()),
            Disk::Other,
        ),
    };
    let stamp = matches!(disk, Disk::File { .. }).then_some(md.stamp);
    (content, disk, stamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading through the kept folders sees exactly what a fresh walk sees, for every kind of
    /// entry and every way a path can fail, the second time (warm) as the first; and no more than
    /// [`OPEN_DIRS`] folders stay open.
    #[test]
    fn kept_folders_read_what_a_fresh_walk_reads() {
        let repo = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let p = repo.path();
        std::fs::create_dir_all(p.join("src/deep")).expect("mkdir");
        std::fs::write(p.join("top.txt"), "top\n").expect("write");
        std::fs::write(p.join("src/a.txt"), "a\n").expect("write");
        std::fs::write(p.join("src/deep/b.txt"), "b\n").expect("write");
        std::fs::write(outside.path().join("a.txt"), "outside\n").expect("write");
        std::os::unix::fs::symlink(outside.path(), p.join("out")).expect("link");
        std::os::unix::fs::symlink("a.txt", p.join("src/alias")).expect("link");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            p.join("src/fifo").as_path(),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .expect("fifo");
        let root = crate::fs::Root::open(p).expect("open");
        let paths = [
            "top.txt",
            "src/a.txt",
            "src/deep/b.txt",
            "src/missing.txt",
            "nope/x.txt",
            "top.txt/x",
            "src/alias",
            "out/a.txt",
            "src/deep",
            "src/fifo",
            "src//a.txt",
        ];
        let mut dirs = HashMap::new();
        for round in 0..2 {
            for rel in paths {
                let (want_content, want_disk, want_stamp) = read_disk(&root, rel);
                let (content, disk, stamp) = read_through(&mut dirs, &root, rel);
                assert_eq!(disk, want_disk, "{rel}, round {round}");
                assert_eq!(stamp, want_stamp, "{rel}, round {round}");
                assert_eq!(stamp.is_some(), matches!(disk, Disk::File { .. }), "{rel}");
                assert_eq!(
                    format!("{content:?}"),
                    format!("{want_content:?}"),
                    "{rel}, round {round}"
                );
            }
        }
        assert!(matches!(
            read_through(&mut dirs, &root, "out/a.txt").1,
            Disk::Other
        ));
        assert!(dirs.contains_key("src/deep") && !dirs.contains_key("out"));
        for i in 0..OPEN_DIRS + 8 {
            std::fs::create_dir(p.join(format!("d{i}"))).expect("mkdir");
            read_through(&mut dirs, &root, &format!("d{i}/f"));
            assert!(dirs.len() <= OPEN_DIRS);
        }
    }
}
