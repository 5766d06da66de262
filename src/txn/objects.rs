//! Blobs written into the object database, many at once: the bulk of staging's cost.
//!
//! libgit2 writes one blob at a time, hashes it twice (once to name the temp stream, once with
//! its collision-detecting SHA-1), and deflates at zlib's default level 6. Git itself writes
//! loose objects at level 1 (`core.looseCompression` defaults to `Z_BEST_SPEED`), because a
//! loose object is short-lived: the next `git gc` repacks it. So the new contents of a batch are
//! written here, in parallel: SHA-1 of `blob <len>\0<bytes>` (hardware SHA where the CPU has it),
//! skip what the database already holds, deflate at level 1, temp file in the fan-out folder,
//! fsync (unless `PATCHGATE_FSYNC=0`), rename to `objects/xx/yyyy…`, read-only as git leaves it.
//!
//! Invariants: an object file appears under its final name only complete (and synced); an
//! existing object is never rewritten (a concurrent writer of the same object wrote the same
//! bytes); a fan-out folder created here is synced after its entries, so the names survive a
//! power loss too. The file format is git's loose format, which `git fsck` checks in the tests.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::{Odb, Oid};
use rayon::prelude::*;
use sha1::{Digest, Sha1};

use crate::error::Error;

/// The blob id git gives `bytes`.
pub fn blob_id(bytes: &[u8]) -> Oid {
    let mut h = Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    let digest = h.finalize();
    // A SHA-1 digest is 20 bytes: exactly an Oid.
    Oid::from_bytes(&digest).unwrap_or_else(|_| Oid::zero())
}

/// Makes sure every content is a blob in `objects_dir`; returns their ids in order, and the ids
/// of the objects this call wrote (the others were already there).
pub fn write_blobs(
    odb: &Odb,
    objects_dir: &Path,
    contents: &[&[u8]],
    sync: bool,
) -> Result<(Vec<Oid>, Vec<Oid>), Error> {
    let ids: Vec<Oid> = contents.par_iter().map(|b| blob_id(b)).collect();
    let mut seen = BTreeSet::new();
    let missing: Vec<(Oid, &[u8])> = ids
        .iter()
        .zip(contents)
        .filter(|(id, _)| seen.insert(**id) && !odb.exists(**id))
        .map(|(id, b)| (*id, *b))
        .collect();
    let new_dirs: Vec<Option<PathBuf>> = missing
        .par_iter()
        .map(|(id, bytes)| write_loose(objects_dir, *id, bytes, sync))
        .collect::<Result<_, _>>()?;
    if sync {
        let dirs: BTreeSet<PathBuf> = new_dirs.into_iter().flatten().collect();
        let mut parents = dirs.into_iter().collect::<Vec<_>>();
        if !parents.is_empty() {
            // The new fan-out folders' own entries live in `objects/`.
            parents.push(objects_dir.to_path_buf());
        }
        parents.par_iter().for_each(|d| {
            if let Ok(f) = std::fs::File::open(d) {
                let _ = f.sync_all();
            }
        });
    }
    Ok((ids, missing.into_iter().map(|(id, _)| id).collect()))
}

/// One loose object; returns its fan-out folder when it had to be created (or its entry synced).
fn write_loose(
    objects_dir: &Path,
    id: Oid,
    bytes: &[u8],
    sync: bool,
) -> Result<Option<PathBuf>, Error> {
    let hex = id.to_string();
    let dir = objects_dir.join(&hex[..2]);
    let path = dir.join(&hex[2..]);
    if path.exists() {
        return Ok(None);
    }
    let created = match std::fs::create_dir(&dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(Error::io("create", &dir, e)),
    };
    let path = &path;
    let io = |what: &'static str| move |e| Error::io(what, path, e);
    let mut tmp = tempfile::Builder::new()
        .prefix("tmp_obj_")
        .tempfile_in(&dir)
        .map_err(|e| Error::io("create a temp file in", &dir, e))?;
    {
        let mut z = flate2::write::ZlibEncoder::new(
            std::io::BufWriter::new(tmp.as_file_mut()),
            flate2::Compression::fast(),
        );
        z.write_all(format!("blob {}\0", bytes.len()).as_bytes())
            .and_then(|()| z.write_all(bytes))
            .and_then(|()| z.finish()?.flush())
            .map_err(io("write"))?;
    }
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o444))
        .map_err(io("set the mode of"))?;
    if sync {
        tmp.as_file().sync_all().map_err(io("sync"))?;
    }
    match tmp.persist_noclobber(path) {
        Ok(_) => {}
        // Someone else wrote the same object meanwhile: same name, same bytes.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(Error::io("write", path, e.error)),
    }
    // The rename must reach the disk too: sync the folder (once, by the caller).
    Ok((created || sync).then_some(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
