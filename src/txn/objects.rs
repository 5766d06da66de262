//! Objects written into the object database, many at once: the bulk of staging's cost.
//!
//! libgit2 writes one object at a time, hashes it twice (once to name the temp stream, once with
//! its collision-detecting SHA-1), deflates at zlib's default level 6, and (asked to be durable)
//! syncs each file and then its folder before it writes the next: two disk waits per object,
//! one after another. Git itself writes loose objects at level 1 (`core.looseCompression`
//! defaults to `Z_BEST_SPEED`), because a loose object is short-lived: the next `git gc` repacks
//! it. So the objects of a batch (the blobs, then the trees and commits `stage` made in memory)
//! are written here as one batch: SHA-1 of `blob <len>\0<bytes>` (hardware SHA where the CPU has
//! it; trees and commits come with their ids), skip what the database already holds (looked up
//! without libgit2's rescan of the pack folder on every miss), deflate at level 1, all temp files
//! written in the fan-out folders in parallel (each one's write-out started at once), then all
//! fsynced (unless `PATCHGATE_FSYNC=0`), then each renamed to `objects/xx/yyyy…`, read-only as
//! git leaves it, then each folder that changed synced once. On ext4, 16 objects or more are
//! synced by one `syncfs` for the contents and one for the names instead (`fs::together`).
//!
//! A large batch goes into one pack instead (`objects/pack/pack-<hash>.{pack,idx}`), as `git
//! fetch` does above `transfer.unpackLimit`: 200 loose objects are 200 files and up to 200
//! fan-out folders, and creating files is what costs most on a disk (a pack is two). Small
//! batches stay loose, so that frequent small patches do not pile up tiny packs between two
//! `git gc` runs.
//!
//! Invariants: an object file appears under its final name only complete (and synced); an
//! existing object is never rewritten (a concurrent writer of the same object wrote the same
//! bytes); a fan-out folder created here is synced after its entries, so the names survive a
//! power loss too; a pack's `.idx` (what makes git see the pack) is renamed into place only after
//! its `.pack`. The formats are git's loose object and pack v2 / index v2, which `git fsck`
//! checks in the tests.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Odb, OdbLookupFlags, Oid};
use sha1::{Digest, Sha1};

use crate::error::Error;
use crate::repo::blob_id;

/// Makes sure every content is a blob in `objects_dir`; returns their ids in order, and the ids
/// of the objects this call wrote (the others were already there).
pub fn write_blobs(
    odb: &Odb,
    objects_dir: &Path,
    contents: &[&[u8]],
    sync: bool,
) -> Result<(Vec<Oid>, Vec<Oid>), Error> {
    let ids = blob_ids(contents);
    let written = write_hashed(odb, objects_dir, contents, &ids, sync)?;
    Ok((ids, written))
}

/// The blob ids of `contents`, hashed in parallel; nothing is written.
pub fn blob_ids(contents: &[&[u8]]) -> Vec<Oid> {
    crate::par::map_sized(contents, |b| b.len(), |b| blob_id(b))
}

/// [`write_blobs`] for contents already hashed by [`blob_ids`] (`ids[i]` is `contents[i]`'s):
/// returns the ids of the objects this call wrote.
pub fn write_hashed(
    odb: &Odb,
    objects_dir: &Path,
    contents: &[&[u8]],
    ids: &[Oid],
    sync: bool,
) -> Result<Vec<Oid>, Error> {
    let objects: Vec<Object> = ids
        .iter()
        .zip(contents)
        .map(|(id, bytes)| Object {
            id: *id,
            kind: ObjectType::Blob,
            bytes,
        })
        .collect();
    write_objects(odb, objects_dir, &objects, sync)
}

/// One object to write: its id (already computed, never checked here), its type, its content.
pub struct Object<'a> {
    pub id: Oid,
    pub kind: ObjectType,
    pub bytes: &'a [u8],
}

/// Makes sure every object is in `objects_dir`, writing the missing ones as one batch (a pack,
/// or loose objects); returns the ids of the objects this call wrote.
pub fn write_objects(
    odb: &Odb,
    objects_dir: &Path,
    objects: &[Object],
    sync: bool,
) -> Result<Vec<Oid>, Error> {
    // libgit2 rescans the pack folder on every miss of a plain lookup, and a new content is a
    // miss: look up without it, then once more after one rescan for the ones still missing (a
    // pack another process wrote since the folder was read). An object missed even so is only
    // written twice, which is harmless.
    let mut seen = BTreeSet::new();
    let absent = |id: Oid| !odb.exists_ext(id, OdbLookupFlags::NO_REFRESH);
    let mut missing: Vec<&Object> = objects
        .iter()
        .filter(|o| seen.insert(o.id) && absent(o.id))
        .collect();
    if !missing.is_empty() {
        odb.refresh().map_err(Error::git)?;
        missing.retain(|o| absent(o.id));
    }
    if missing.len() >= PACK_AT
        && missing.iter().map(|o| o.bytes.len() as u64).sum::<u64>() < MAX_PACK
    {
        write_pack(objects_dir, &missing, sync)?;
        // libgit2 lists packs once; it must see the new one before trees name its blobs.
        odb.refresh().map_err(Error::git)?;
    } else {
        write_loose_batch(objects_dir, &missing, sync)?;
    }
    Ok(missing.into_iter().map(|o| o.id).collect())
}

/// Loose objects, as one batch: every temp file written (its write-out started at once), then
/// all of them synced, then each renamed to its name, then each folder that changed synced once.
/// So the disk waits are concurrent rather than one after another, and still no object appears
/// under its name before its content is on the disk.
fn write_loose_batch(objects_dir: &Path, objects: &[&Object], sync: bool) -> Result<(), Error> {
    // Many objects on ext4: one syncfs for their contents and one for their names, as for the
    // working tree's files (`fs::together`); the folder is opened before anything is written,
    // so the syncfs reports a failed write-out of any of them.
    let together = if sync {
        crate::fs::together::one_sync_at(objects_dir, objects.len())
    } else {
        None
    };
    let prepared: Vec<Option<Loose>> = crate::par::try_map_sized(
        objects,
        |o| o.bytes.len(),
        |o| prepare_loose(objects_dir, o),
    )?;
    let prepared: Vec<Loose> = prepared.into_iter().flatten().collect();
    if let Some(folder) = &together {
        crate::fs::together::syncfs(folder).map_err(|e| Error::io("sync", objects_dir, e))?;
    } else if sync {
        crate::fs::sync_each(&prepared, |l| l.tmp.as_file().sync_all())
            .map_err(|e| Error::io("sync", objects_dir, e))?;
    }
    let mut dirs = BTreeSet::new();
    let mut created = false;
    for l in prepared {
        match l.tmp.persist_noclobber(&l.path) {
            Ok(_) => {}
            // Someone else wrote the same object meanwhile: same name, same bytes.
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io("write", &l.path, e.error)),
        }
        created |= l.created_dir;
        dirs.insert(l.dir);
    }
    if let Some(folder) = &together {
        let _ = crate::fs::together::syncfs(folder);
    } else if sync {
        // The renames must reach the disk too, and a created fan-out folder's own entry, which
        // lives in `objects/`.
        if created {
            dirs.insert(objects_dir.to_path_buf());
        }
        let dirs: Vec<PathBuf> = dirs.into_iter().collect();
        let _ = crate::fs::sync_each(&dirs, |d| std::fs::File::open(d)?.sync_all());
    }
    Ok(())
}

/// Temp-file prefixes, followed by the writer's pid and `_`. A loose object's starts with git's
/// own `tmp_obj_`: `git fsck` passes over such a file (any other name in a fan-out folder is a
/// "bad sha1 file") and `git prune` collects it; a pack's with `tmp_`, which `git prune` collects
/// in `pack/`. The `patchgate` part keeps [`sweep_temp`] off the files git itself is writing.
const TEMP_OBJECT: &str = "tmp_obj_patchgate_";
const TEMP_PACK: &str = "tmp_patchgate_pack_";

/// A temp-file prefix with this process's pid, which [`sweep_temp`] reads back.
fn temp_prefix(kind: &str) -> String {
    format!("{kind}{}_", std::process::id())
}

/// Removes temp files a killed patchgate left in the object database: those of a process that
/// is gone at once, any other only when old (another worktree of the repository, under another
/// mutex, may be writing into the same objects right now).
pub fn sweep_temp(objects_dir: &Path, older_than: std::time::Duration) {
    let Ok(fanout) = std::fs::read_dir(objects_dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for dir in fanout.flatten() {
        let Ok(entries) = std::fs::read_dir(dir.path()) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Some(rest) = name
                .strip_prefix(TEMP_OBJECT)
                .or_else(|| name.strip_prefix(TEMP_PACK))
            else {
                continue;
            };
            let writer_gone = rest
                .split_once('_')
                .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
                .is_some_and(|pid| pid > 0 && !process_alive(pid));
            let old = writer_gone
                || e.metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|age| age >= older_than);
            if old {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Whether a process with this pid exists (one of ours or not: signal 0 only checks).
fn process_alive(pid: libc::pid_t) -> bool {
    // SAFETY: kill(2) with signal 0 sends nothing; it only reports whether the pid exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// From this many new objects on, a batch is written as a pack (git's `transfer.unpackLimit` is
/// 100; staging writes fewer, larger batches, and a pack saves most where there are many files).
const PACK_AT: usize = 64;
/// Index v2 without its large-offset table addresses 2 GiB; well below that, stay loose beyond.
const MAX_PACK: u64 = 1 << 30;

/// Writes `objects` (all blobs) as one pack and its index, named by the pack's checksum.
fn write_pack(objects_dir: &Path, objects: &[&Object], sync: bool) -> Result<(), Error> {
    // Each entry: the type-and-size header, then the zlib stream of the content.
    let entries: Vec<Vec<u8>> = crate::par::try_map_sized(
        objects,
        |o| o.bytes.len(),
        |o| {
            let mut out = entry_header(pack_type(o.kind), o.bytes.len() as u64);
            let mut z = flate2::write::ZlibEncoder::new(&mut out, flate2::Compression::fast());
            z.write_all(o.bytes)?;
            z.finish()?;
            Ok::<_, std::io::Error>(out)
        },
    )
    .map_err(|e| Error::io("compress objects for", objects_dir, e))?;
    let mut pack = Vec::with_capacity(12 + entries.iter().map(Vec::len).sum::<usize>() + 20);
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    let mut index: Vec<(Oid, u32, u32)> = Vec::with_capacity(objects.len());
    for (o, entry) in objects.iter().zip(&entries) {
        index.push((o.id, crc32fast::hash(entry), pack.len() as u32));
        pack.extend_from_slice(entry);
    }
    let pack_sum = Sha1::digest(&pack);
    pack.extend_from_slice(&pack_sum);
    index.sort_by_key(|e| e.0);
    let mut idx = Vec::with_capacity(8 + 1024 + index.len() * 28 + 40);
    idx.extend_from_slice(b"\xfftOc");
    idx.extend_from_slice(&2u32.to_be_bytes());
    for byte in 0..=255u8 {
        let n = index
            .iter()
            .filter(|(id, _, _)| id.as_bytes()[0] <= byte)
            .count() as u32;
        idx.extend_from_slice(&n.to_be_bytes());
    }
    for (id, _, _) in &index {
        idx.extend_from_slice(id.as_bytes());
    }
    for (_, crc, _) in &index {
        idx.extend_from_slice(&crc.to_be_bytes());
    }
    for (_, _, offset) in &index {
        idx.extend_from_slice(&offset.to_be_bytes());
    }
    idx.extend_from_slice(&pack_sum);
    let idx_sum = Sha1::digest(&idx);
    idx.extend_from_slice(&idx_sum);

    let dir = objects_dir.join("pack");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let name = format!("{pack_sum:x}");
    // Both files written (their write-out started), then both synced, then renamed: the pack
    // first, as an index without its pack would name objects git cannot read.
    let mut files = Vec::with_capacity(2);
    for (ext, bytes) in [("pack", &pack), ("idx", &idx)] {
        let path = dir.join(format!("pack-{name}.{ext}"));
        let mut tmp = tempfile::Builder::new()
            .prefix(&temp_prefix(TEMP_PACK))
            .tempfile_in(&dir)
            .map_err(|e| Error::io("create a temp file in", &dir, e))?;
        tmp.write_all(bytes)
            .and_then(|()| {
                tmp.as_file()
                    .set_permissions(std::fs::Permissions::from_mode(0o444))
            })
            .map_err(|e| Error::io("write", &path, e))?;
        crate::fs::start_writeback(tmp.as_file());
        files.push((tmp, path));
    }
    if sync {
        for (tmp, path) in &files {
            tmp.as_file()
                .sync_all()
                .map_err(|e| Error::io("write", path, e))?;
        }
    }
    for (tmp, path) in files {
        match tmp.persist_noclobber(&path) {
            Ok(_) => {}
            // The same objects in the same order: the same pack, already there.
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io("write", &path, e.error)),
        }
    }
    if sync {
        for d in [&dir, objects_dir] {
            if let Ok(f) = std::fs::File::open(d) {
                let _ = f.sync_all();
            }
        }
    }
    Ok(())
}

/// A pack entry's type number (pack format: 1 commit, 2 tree, 3 blob, 4 tag).
fn pack_type(kind: ObjectType) -> u8 {
    match kind {
        ObjectType::Commit => 1,
        ObjectType::Tree => 2,
        ObjectType::Tag => 4,
        _ => 3,
    }
}

/// A pack entry's header: the type in bits 4–6 of the first byte, the size in 4 bits there and
/// then 7 bits per byte, least significant first, the high bit meaning "more follows".
fn entry_header(kind: u8, mut size: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(10);
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
    out
}

/// A loose object written to a temp file in its fan-out folder, not yet under its name.
struct Loose {
    tmp: tempfile::NamedTempFile,
    dir: PathBuf,
    path: PathBuf,
    /// Whether the fan-out folder was created for it.
    created_dir: bool,
}

/// The temp file of one loose object (`None` when the object file exists already), written,
/// read-only as git leaves it, its write-out started.
fn prepare_loose(objects_dir: &Path, o: &Object) -> Result<Option<Loose>, Error> {
    let hex = o.id.to_string();
    let dir = objects_dir.join(&hex[..2]);
    let path = dir.join(&hex[2..]);
    if path.exists() {
        return Ok(None);
    }
    let created_dir = match std::fs::create_dir(&dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(Error::io("create", &dir, e)),
    };
    let at = &path;
    let io = |what: &'static str| move |e| Error::io(what, at, e);
    let mut tmp = tempfile::Builder::new()
        .prefix(&temp_prefix(TEMP_OBJECT))
        .tempfile_in(&dir)
        .map_err(|e| Error::io("create a temp file in", &dir, e))?;
    {
        let mut z = flate2::write::ZlibEncoder::new(
            std::io::BufWriter::new(tmp.as_file_mut()),
            flate2::Compression::fast(),
        );
        z.write_all(format!("{} {}\0", o.kind.str(), o.bytes.len()).as_bytes())
            .and_then(|()| z.write_all(o.bytes))
            .and_then(|()| z.finish()?.flush())
            .map_err(io("write"))?;
    }
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o444))
        .map_err(io("set the mode of"))?;
    crate::fs::start_writeback(tmp.as_file());
    Ok(Some(Loose {
        tmp,
        dir,
        path,
        created_dir,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs git in `dir` (system configuration ignored) and fails the test unless it succeeds;
    /// returns its stderr, where `git fsck` writes its warnings.
    fn git_ok(dir: &Path, args: &[&str]) -> String {
        crate::repo::test_git::git_ok(dir, args, &[])
    }

    #[test]
    fn ids_and_objects_are_gits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init(dir.path()).expect("init");
        let odb = repo.odb().expect("odb");
        let contents: Vec<&[u8]> = vec![b"hello\n", b"", b"hello\n", b"\xff\x00binary"];
        let (ids, written) =
            write_blobs(&odb, &dir.path().join(".git/objects"), &contents, true).expect("write");
        for (id, c) in ids.iter().zip(&contents) {
            assert_eq!(
                *id,
                Oid::hash_object(git2::ObjectType::Blob, c).expect("hash")
            );
            assert_eq!(repo.find_blob(*id).expect("readable").content(), *c);
        }
        assert_eq!(written.len(), 3, "duplicates are written once");
        let (_, again) =
            write_blobs(&odb, &dir.path().join(".git/objects"), &contents, false).expect("again");
        assert!(again.is_empty(), "present objects are not rewritten");
        let hex = ids[0].to_string();
        let md = std::fs::metadata(
            dir.path()
                .join(".git/objects")
                .join(&hex[..2])
                .join(&hex[2..]),
        )
        .expect("object file");
        assert_eq!(md.permissions().mode() & 0o777, 0o444);
    }

    /// Trees and commits made in memory (a mempack, as staging makes them) and written here,
    /// loose and in a pack, are what git reads and `git fsck` accepts; without the batch they
    /// exist nowhere on the disk.
    #[test]
    fn trees_and_commits_from_memory_are_written_loose_and_packed() {
        for count in [1, PACK_AT + 1] {
            let dir = tempfile::tempdir().expect("tempdir");
            let repo = git2::Repository::init(dir.path()).expect("init");
            let objects = dir.path().join(".git/objects");
            let odb = repo.odb().expect("odb");
            let owned: Vec<Vec<u8>> = (0..count)
                .map(|i| format!("file {i}\n").into_bytes())
                .collect();
            let blobs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
            let (ids, _) = write_blobs(&odb, &objects, &blobs, true).expect("blobs");
            let mem = git2::Repository::open(dir.path()).expect("open");
            let mem_odb = mem.odb().expect("odb");
            let _pack = mem_odb.add_new_mempack_backend(1000).expect("mempack");
            let mut b = mem.treebuilder(None).expect("builder");
            for (i, id) in ids.iter().enumerate() {
                b.insert(format!("f{i}"), *id, 0o100644).expect("insert");
            }
            let tree = b.write().expect("tree");
            let sig = git2::Signature::now("t", "t@example.invalid").expect("sig");
            let t = mem.find_tree(tree).expect("find");
            let commit = mem.commit(None, &sig, &sig, "m", &t, &[]).expect("commit");
            assert!(!odb.exists(tree), "made in memory only");
            let owned: Vec<(Oid, ObjectType, Vec<u8>)> = [tree, commit]
                .iter()
                .map(|id| {
                    let o = mem_odb.read(*id).expect("read");
                    (*id, o.kind(), o.data().to_vec())
                })
                .collect();
            // A pack needs PACK_AT objects: the blobs come again (already there, so skipped)
            // and the batch is the two objects, loose; a fresh repository packs them all.
            let batch: Vec<Object> = owned
                .iter()
                .map(|(id, kind, bytes)| Object {
                    id: *id,
                    kind: *kind,
                    bytes,
                })
                .collect();
            let written = write_objects(&odb, &objects, &batch, true).expect("write");
            assert_eq!(written, vec![tree, commit]);
            let again = write_objects(&odb, &objects, &batch, true).expect("again");
            assert!(again.is_empty(), "present objects are not rewritten");
            let reader = git2::Repository::open(dir.path()).expect("reopen");
            assert_eq!(
                reader
                    .find_commit(commit)
                    .expect("commit on disk")
                    .tree_id(),
                tree
            );
            git_ok(dir.path(), &["fsck", "--strict", "--no-dangling"]);
            // Every kind in one pack, as a large batch of a fresh repository writes it.
            let fresh = tempfile::tempdir().expect("tempdir");
            let frepo = git2::Repository::init(fresh.path()).expect("init");
            let fobjects = fresh.path().join(".git/objects");
            let mut all: Vec<Object> = ids
                .iter()
                .zip(&blobs)
                .map(|(id, bytes)| Object {
                    id: *id,
                    kind: ObjectType::Blob,
                    bytes,
                })
                .collect();
            all.extend(owned.iter().map(|(id, kind, bytes)| Object {
                id: *id,
                kind: *kind,
                bytes,
            }));
            let fodb = frepo.odb().expect("odb");
            write_objects(&fodb, &fobjects, &all, false).expect("write all");
            let packed = std::fs::read_dir(fobjects.join("pack"))
                .map(|d| d.count())
                .unwrap_or(0);
            assert_eq!(packed > 0, all.len() >= PACK_AT, "{count} blobs");
            let reader = git2::Repository::open(fresh.path()).expect("reopen");
            assert_eq!(reader.find_commit(commit).expect("commit").tree_id(), tree);
            git_ok(fresh.path(), &["fsck", "--strict", "--no-dangling"]);
        }
    }

    #[test]
    fn a_large_batch_is_one_pack_git_can_read_and_verify() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init(dir.path()).expect("init");
        let odb = repo.odb().expect("odb");
        let owned: Vec<Vec<u8>> = (0..PACK_AT + 36)
            .map(|i| format!("object {i}\n{}", "x".repeat(i * 37)).into_bytes())
            .collect();
        let contents: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let objects = dir.path().join(".git/objects");
        let (ids, written) = write_blobs(&odb, &objects, &contents, true).expect("write");
        assert_eq!(written.len(), contents.len());
        let packs: Vec<_> = std::fs::read_dir(objects.join("pack"))
            .expect("pack dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(packs.len(), 2, "one .pack and one .idx: {packs:?}");
        for (id, c) in ids.iter().zip(&contents) {
            assert_eq!(repo.find_blob(*id).expect("in the pack").content(), *c);
        }
        // git itself, as the witness: the index and the pack agree, every object is sound.
        let idx = objects
            .join("pack")
            .join(packs.iter().find(|p| p.ends_with(".idx")).expect("an idx"));
        let out = std::process::Command::new("git")
            .args(["verify-pack", "-v"])
            .arg(&idx)
            .output()
            .expect("git verify-pack");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = String::from_utf8_lossy(&out.stdout);
        assert!(listed.contains(&ids[5].to_string()), "{listed}");
        git_ok(dir.path(), &["fsck", "--strict"]);
    }

    #[test]
    fn sweep_removes_old_temp_files_and_those_of_dead_writers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fan = dir.path().join("ab");
        std::fs::create_dir_all(dir.path().join("pack")).expect("pack");
        std::fs::create_dir_all(&fan).expect("fan-out");
        // A pid that no process has any more: a child that has been waited for.
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let ours = fan.join(format!("{}x1", temp_prefix(TEMP_OBJECT)));
        let pack = dir
            .path()
            .join("pack")
            .join(format!("{}x2", temp_prefix(TEMP_PACK)));
        let orphan = fan.join(format!("{TEMP_OBJECT}{dead}_x4"));
        let orphan_pack = dir
            .path()
            .join("pack")
            .join(format!("{TEMP_PACK}{dead}_x5"));
        let gits = fan.join("tmp_obj_x3");
        for p in [&ours, &pack, &gits, &orphan, &orphan_pack] {
            std::fs::write(p, "partial").expect("write");
        }
        sweep_temp(dir.path(), std::time::Duration::from_secs(3600));
        assert!(
            ours.exists() && pack.exists(),
            "a fresh temp file of a live writer may be in use"
        );
        assert!(
            !orphan.exists() && !orphan_pack.exists(),
            "a dead writer's go at once"
        );
        sweep_temp(dir.path(), std::time::Duration::ZERO);
        assert!(!ours.exists() && !pack.exists(), "old ones go");
        assert!(gits.exists(), "git's own temp files are git's business");
    }

    /// A temp object a killed run left behind is not "a bad sha1 file" to `git fsck` (git
    /// passes over `tmp_obj_*`, as it leaves them itself), and `git prune` collects it.
    #[test]
    fn a_left_temp_object_is_what_git_expects() {
        let dir = tempfile::tempdir().expect("tempdir");
        git2::Repository::init(dir.path()).expect("init");
        let fan = dir.path().join(".git/objects/ab");
        std::fs::create_dir_all(&fan).expect("fan-out");
        let left = fan.join(format!("{}xyz", temp_prefix(TEMP_OBJECT)));
        std::fs::write(&left, "partial").expect("write");
        let git = |args: &[&str]| git_ok(dir.path(), args);
        let fsck = git(&["fsck", "--strict"]);
        assert!(!fsck.contains("bad sha1 file"), "{fsck}");
        git(&["prune", "--expire=now"]);
        assert!(!left.exists(), "git prune leaves it");
    }

    #[test]
    fn entry_headers_encode_type_and_size() {
        assert_eq!(entry_header(3, 5), vec![0x35]);
        assert_eq!(entry_header(3, 16), vec![0xb0, 0x01]);
        assert_eq!(entry_header(3, 100_000), vec![0xb0, 0xea, 0x30]);
    }
}
