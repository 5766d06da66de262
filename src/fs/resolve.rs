//! Resolving a relative path under a directory descriptor without ever following a symlink.
//!
//! The kernel does it in one call where it can: `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` refuses any symlink on the way (`ELOOP`) and any
//! step above the starting directory (`EXDEV`), atomically with respect to concurrent renames. A
//! kernel older than 5.6, or a seccomp filter that answers `ENOSYS`/`EPERM`, gets the portable
//! walk instead: one `openat(O_NOFOLLOW | O_DIRECTORY)` per component, each relative to the
//! descriptor of the one before, so a component swapped for a symlink at any moment is refused
//! by the kernel at the step that meets it. The check for `openat2` is made once per process.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU8, Ordering};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// 0: not tried yet; 1: the kernel has it; 2: it does not (or it is filtered).
static OPENAT2: AtomicU8 = AtomicU8::new(0);

/// The components of a relative path, or why it is not one: empty, absolute, `.`, `..`, an empty
/// component, or a NUL byte. Every path the module is given goes through this first, so a path
/// that names anything but a place beneath the root never reaches a system call.
pub fn components(rel: &str) -> std::io::Result<Vec<&str>> {
    let bad = |why: &str| {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("`{rel}` is not a relative path inside the repository ({why})"),
        ))
    };
    if rel.is_empty() {
        return bad("empty");
    }
    if rel.starts_with('/') {
        return bad("absolute");
    }
    if rel.contains('\0') {
        return bad("NUL byte");
    }
    let parts: Vec<&str> = rel.split('/').collect();
    for p in &parts {
        match *p {
            "" => return bad("empty component"),
            "." | ".." => return bad("`.` or `..` component"),
            _ => {}
        }
    }
    Ok(parts)
}

fn use_openat2() -> bool {
    if std::env::var_os("PATCHGATE_NO_OPENAT2").is_some_and(|v| v == "1") {
        return false;
    }
    OPENAT2.load(Ordering::Relaxed) != 2
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Opens the directory `rel` (components already checked) beneath `base`, following no symlink.
pub fn open_dir(base: BorrowedFd<'_>, parts: &[&str]) -> std::io::Result<OwnedFd> {
    if parts.is_empty() {
        return rustix::fs::openat(base, ".", DIR_FLAGS, Mode::empty()).map_err(Into::into);
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if use_openat2() {
        let joined = parts.join("/");
        for _ in 0..4 {
            use rustix::fs::ResolveFlags;
            match rustix::fs::openat2(
                base,
                joined.as_str(),
                DIR_FLAGS,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
            ) {
                Ok(fd) => {
                    OPENAT2.store(1, Ordering::Relaxed);
                    return Ok(fd);
                }
                // A concurrent rename made the kernel give up; ask again, then walk.
                Err(Errno::AGAIN) => continue,
                // No openat2 (old kernel), or a sandbox that filters it.
                Err(Errno::NOSYS) | Err(Errno::PERM) => {
                    OPENAT2.store(2, Ordering::Relaxed);
                    break;
                }
                // Which component is not a directory, a symlink or a file: the walk tells.
                Err(Errno::NOTDIR) => break,
                Err(e) => return Err(e.into()),
            }
        }
    }
    walk(base, parts)
}

/// The portable resolution: one `O_NOFOLLOW` open per component.
fn walk(base: BorrowedFd<'_>, parts: &[&str]) -> std::io::Result<OwnedFd> {
    let mut cur: Option<OwnedFd> = None;
    for part in parts {
        let at = match &cur {
            Some(fd) => fd.as_fd(),
            None => base,
        };
        let next = match rustix::fs::openat(at, *part, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => fd,
            // `O_NOFOLLOW | O_DIRECTORY` on a symlink is "not a directory" on some kernels:
            // tell a symlink (the path changed) from a file (nothing can be below it).
            Err(Errno::NOTDIR) => {
                let st = rustix::fs::statat(at, *part, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
                return Err(if rustix::fs::FileType::from_raw_mode(st.st_mode)
                    == rustix::fs::FileType::Symlink
                {
                    Errno::LOOP
                } else {
                    Errno::NOTDIR
                }
                .into());
            }
            Err(e) => return Err(e.into()),
        };
        cur = Some(next);
    }
    match cur {
        Some(fd) => Ok(fd),
        None => rustix::fs::openat(base, ".", DIR_FLAGS, Mode::empty()).map_err(Into::into),
    }
}

/// Whether an error of a resolution means a symlink was met on the way (or in last place where
/// a file was expected): the path changed since it was checked.
pub fn is_symlink_error(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(code) if code == libc::ELOOP || code == libc::EXDEV)
}
