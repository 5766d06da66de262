//! Operations on one entry of an open directory, by name: the only way the working tree is
//! read or changed. A name is one component; nothing here follows a symlink in last place
//! (`O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW`, and `unlinkat`/`renameat`, which act on the link).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

/// An open directory beneath the root, and where it is (relative to the root, for messages).
#[derive(Debug)]
pub struct Dir {
    pub(super) fd: OwnedFd,
    pub(super) rel: String,
    /// `(device, inode)`, asked once: an open descriptor's identity never changes, and the
    /// switch compares it for every file it replaces.
    id: std::sync::OnceLock<(u64, u64)>,
    /// Its file system's statfs(2) magic number (`None` where unknown), asked once: it tells
    /// whether stamps prove a file unchanged ([`super::stamp`]) and whether syncs do anything.
    fs_type: std::sync::OnceLock<Option<i64>>,
}

/// The whole content of `f`, whose size was `size` a moment ago: one `read` of that size, then
/// one that finds the end (or the rest of a file that grew since). `File::read_to_end` would ask
/// the size and the position again (`statx`, `lseek`), and reading through `Take` (no size hint)
/// reads the first 8 KiB on their own: three or four calls for what two do.
fn read_sized(mut f: &std::fs::File, size: usize) -> std::io::Result<Vec<u8>> {
    let mut out = vec![0u8; size];
    let mut filled = 0;
    while filled < size {
        match f.read(&mut out[filled..]) {
            // It shrank since: what is there is all of it.
            Ok(0) => {
                out.truncate(filled);
                return Ok(out);
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    // Through `Take` (which gives no size hint), the end costs one 32-byte probe.
    f.take(u64::MAX).read_to_end(&mut out)?;
    Ok(out)
}

/// What is at a name, not following a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    Other,
}

#[derive(Debug, Clone, Copy)]
pub struct Meta {
    pub kind: Kind,
    /// Permission bits (and setuid/setgid/sticky).
    pub mode: u32,
    pub len: u64,
    pub uid: u32,
    pub gid: u32,
    pub stamp: super::stamp::Stamp,
}

fn kind_of(st: &rustix::fs::Stat) -> Kind {
    match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::RegularFile => Kind::File,
        rustix::fs::FileType::Directory => Kind::Dir,
        rustix::fs::FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    }
}

fn meta_of(st: &rustix::fs::Stat) -> Meta {
    Meta {
        kind: kind_of(st),
        mode: st.st_mode & 0o7777,
        len: st.st_size as u64,
        uid: st.st_uid,
        gid: st.st_gid,
        stamp: super::stamp::Stamp::of(st),
    }
}

const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

impl Dir {
    /// The directory's path relative to the root (`""` for the root itself).
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// The path of `name` in it, relative to the root.
    pub fn rel_of(&self, name: &str) -> String {
        if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.rel)
        }
    }

    pub(super) fn new(fd: OwnedFd, rel: String) -> Dir {
        Dir {
            fd,
            rel,
            id: std::sync::OnceLock::new(),
            fs_type: std::sync::OnceLock::new(),
        }
    }

    /// Whether the stamps of the files here can prove them unchanged ([`super::stamp`]).
    pub fn stamps_are_proof(&self) -> bool {
        super::stamp::fine_local_times(self.fs_type())
    }

    /// Whether its file system keeps files in memory only (tmpfs, ramfs): there an fsync or a
    /// write-out has nothing to do (the kernel's own fsync of tmpfs is a no-op), and a run with
    /// hundreds of files skips the calls.
    pub fn in_memory(&self) -> bool {
        self.fs_type()
            .is_some_and(|t| t == super::TMPFS_MAGIC || t == super::RAMFS_MAGIC)
    }

    pub(super) fn fs_type(&self) -> Option<i64> {
        *self.fs_type.get_or_init(|| super::fs_type(&self.fd))
    }

    /// `(device, inode)` of the directory itself, to tell whether a path still leads to it.
    pub fn identity(&self) -> std::io::Result<(u64, u64)> {
        if let Some(id) = self.id.get() {
            return Ok(*id);
        }
        let st = rustix::fs::fstat(&self.fd)?;
        Ok(*self.id.get_or_init(|| (st.st_dev, st.st_ino)))
    }

    /// What `name` is, without following it; `None` when nothing is there.
    pub fn lstat(&self, name: &str) -> std::io::Result<Option<Meta>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(meta_of(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The bytes of the regular file `name` (a symlink there is `ELOOP`, anything else not a
    /// file is an error too, never a blocking read of a FIFO).
    pub fn read(&self, name: &str) -> std::io::Result<Vec<u8>> {
        self.read_with_meta(name).map(|(_, bytes)| bytes)
    }

    /// The regular file `name`, what `lstat` would say of it (taken from the open file, before
    /// its bytes are read) and its bytes: one lookup of the name instead of an `lstat` and an
    /// open. An error for anything but a regular file (see [`Dir::read`]).
    pub fn read_with_meta(&self, name: &str) -> std::io::Result<(Meta, Vec<u8>)> {
        let fd = rustix::fs::openat(&self.fd, name, READ_FLAGS, Mode::empty())?;
        let st = rustix::fs::fstat(&fd)?;
        if kind_of(&st) != Kind::File {
            return Err(std::io::Error::other(format!(
                "{} is not a regular file",
                self.rel_of(name)
            )));
        }
        let f = std::fs::File::from(fd);
        Ok((meta_of(&st), read_sized(&f, st.st_size.max(0) as usize)?))
    }

    /// The target of the symlink `name`.
    pub fn read_link(&self, name: &str) -> std::io::Result<PathBuf> {
        let t = rustix::fs::readlinkat(&self.fd, name, Vec::new())?;
        Ok(PathBuf::from(OsString::from_vec(t.into_bytes())))
    }

    /// Creates the new file `tmp` (it must not exist) with `bytes`, then gives it `owner` (where
    /// allowed) and `mode`, and starts its write-out ([`super::start_writeback`]; the caller
    /// syncs it, through the descriptor returned or by name). The file is removed again if any
    /// step fails.
    pub fn write_new(
        &self,
        tmp: &str,
        bytes: &[u8],
        mode: u32,
        owner: Option<(u32, u32)>,
    ) -> std::io::Result<std::fs::File> {
        let fd = rustix::fs::openat(
            &self.fd,
            tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            // The permission bits asked for (less the umask); never setuid, setgid or sticky
            // before the content and the owner are final.
            Mode::from_raw_mode(mode & 0o777),
        )?;
        let mut f = std::fs::File::from(fd);
        let result = (|| -> std::io::Result<()> {
            f.write_all(bytes)?;
            // Owner and mode are changed only where the new file did not get them already (the
            // usual case: a file of ours, a umask that keeps its bits): each change is one more
            // journaled inode update on a file system like ext4.
            let made = rustix::fs::fstat(&f)?;
            let mut chowned = false;
            if let Some((uid, gid)) = owner
                && (made.st_uid, made.st_gid) != (uid, gid)
            {
                // Only root can give a file away; for anyone else this is a no-op on their own
                // files, and a failure is not worth a failed write.
                chowned = rustix::fs::fchown(
                    &f,
                    Some(rustix::fs::Uid::from_raw(uid)),
                    Some(rustix::fs::Gid::from_raw(gid)),
                )
                .is_ok();
            }
            // A change of owner may clear setuid and setgid bits: set the mode again after one.
            if made.st_mode & 0o7777 != mode & 0o7777 || chowned {
                rustix::fs::fchmod(&f, Mode::from_raw_mode(mode))?;
            }
            if !self.in_memory() {
                super::start_writeback(&f);
            }
            Ok(())
        })();
        match result {
            Ok(()) => Ok(f),
            Err(e) => {
                drop(f);
                let _ = self.unlink(tmp);
                Err(e)
            }
        }
    }

    /// Flushes the regular file `name` to the disk.
    pub fn sync_file(&self, name: &str) -> std::io::Result<()> {
        let fd = rustix::fs::openat(&self.fd, name, READ_FLAGS, Mode::empty())?;
        rustix::fs::fsync(&fd).map_err(Into::into)
    }

    /// Flushes every file of the directory's file system to the disk, and reports a write-out
    /// error of any since this descriptor was opened (Linux 5.8 and later; see
    /// [`super::together`] for when this stands for the syncs of many files).
    pub fn sync_file_system(&self) -> std::io::Result<()> {
        super::together::syncfs(&self.fd)
    }

    /// Flushes the directory's entries (the renames and unlinks made in it) to the disk.
    pub fn sync(&self) -> std::io::Result<()> {
        rustix::fs::fsync(&self.fd).map_err(Into::into)
    }

    /// Renames `from` to `to` within this directory, replacing `to`.
    pub fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(Into::into)
    }

    /// Renames `from` here to `to` in `other`, replacing it.
    pub fn rename_to(&self, from: &str, other: &Dir, to: &str) -> std::io::Result<()> {
        rustix::fs::renameat(&self.fd, from, &other.fd, to).map_err(Into::into)
    }

    /// Removes the file or symlink `name` (the link itself, never its target).
    pub fn unlink(&self, name: &str) -> std::io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(Into::into)
    }

    /// Removes the empty directory `name`.
    pub fn rmdir(&self, name: &str) -> std::io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR).map_err(Into::into)
    }

    /// Creates the directory `name` (mode 0777 less the umask, as `mkdir` does).
    pub fn mkdir(&self, name: &str) -> std::io::Result<()> {
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777)).map_err(Into::into)
    }

    /// Creates the symlink `name` pointing at `target` (the target is not looked at).
    pub fn symlink(&self, target: &std::path::Path, name: &str) -> std::io::Result<()> {
        rustix::fs::symlinkat(target, &self.fd, name).map_err(Into::into)
    }

    /// Sets the permission bits of the file `name`; a symlink there is refused (`ELOOP`), never
    /// followed to change its target.
    pub fn chmod(&self, name: &str, mode: u32) -> std::io::Result<()> {
        match rustix::fs::openat(&self.fd, name, READ_FLAGS, Mode::empty()) {
            Ok(fd) => rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(Into::into),
            // A file we may not read (mode 000): an O_PATH handle, changed through /proc.
            Err(Errno::ACCESS) => {
                let fd = rustix::fs::openat(
                    &self.fd,
                    name,
                    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                let st = rustix::fs::fstat(&fd)?;
                if kind_of(&st) == Kind::Symlink {
                    return Err(Errno::LOOP.into());
                }
                let proc = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
                rustix::fs::chmod(proc.as_str(), Mode::from_raw_mode(mode)).map_err(Into::into)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The names in the directory (not `.` and `..`).
    pub fn names(&self) -> std::io::Result<Vec<String>> {
        let mut out = Vec::new();
        let dir = rustix::fs::Dir::read_from(self.fd.as_fd())?;
        for entry in dir {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != "." && name != ".." {
                out.push(name);
            }
        }
        Ok(out)
    }
}
