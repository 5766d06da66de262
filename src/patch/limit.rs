//! How large a patch may be, and reading one without ever holding more than that.
//!
//! No real batch of edits is tens of megabytes, and a patch is held in memory several times over
//! while it is parsed and applied, so a patch larger than the limit is refused before it is read
//! whole: a regular file by its size, a stream (stdin, `/dev/zero`, a FIFO) as soon as it passes
//! the limit while being read. The MCP server refuses a request line over the same limit.
//!
//! The limit is 64 MiB unless `PATCHGATE_MAX_PATCH_MB` (whole MiB, at least 1) says otherwise; a
//! value that is not such a number is a usage error, never silently the default.

use std::io::Read;

use crate::error::Error;

/// The variable that sets the limit, in MiB.
pub const ENV: &str = "PATCHGATE_MAX_PATCH_MB";

/// The default limit, in MiB.
pub const DEFAULT_MB: u64 = 64;

/// The limit in bytes.
pub fn max_bytes() -> Result<u64, Error> {
    match std::env::var(ENV) {
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_MB << 20),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(mb) if (1..=(1 << 20)).contains(&mb) => Ok(mb << 20),
            _ => Err(bad_value(&v)),
        },
        Err(std::env::VarError::NotUnicode(v)) => Err(bad_value(&v.to_string_lossy())),
    }
}

fn bad_value(v: &str) -> Error {
    Error::Usage {
        message: format!("{ENV}=`{v}` is not a size in MiB"),
        help: format!(
            "set {ENV} to a whole number of MiB (e.g. {ENV}=128), or unset it for the default of \
             {DEFAULT_MB}"
        ),
    }
}

/// The error for a patch over the limit.
pub fn too_big(name: &str, limit: u64) -> Error {
    Error::Usage {
        message: format!("the patch {name} is larger than {} MiB", limit >> 20),
        help: format!(
            "split the batch into several patches, or raise the limit with {ENV}=<MiB> if this \
             patch is really meant"
        ),
    }
}

/// Reads all of `r` if it holds at most `limit` bytes; else stops right after the limit and
/// refuses. `size_hint` (a regular file's length) only sizes the buffer.
pub fn read_bounded(
    r: impl Read,
    name: &str,
    limit: u64,
    size_hint: Option<u64>,
) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::with_capacity(size_hint.unwrap_or(0).min(limit) as usize + 1);
    r.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|source| Error::PatchRead {
            path: name.to_string(),
            source,
        })?;
    if buf.len() as u64 > limit {
        return Err(too_big(name, limit));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_past_the_limit_is_refused_after_reading_just_past_it() {
        let mut zeros = std::io::repeat(0).take(1 << 30);
        let e = read_bounded(&mut zeros, "<stdin>", 1 << 20, None).unwrap_err();
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
        // What was read: the limit and one byte, no more.
        assert_eq!(zeros.limit(), (1 << 30) - (1 << 20) - 1);
        let ok = read_bounded(&b"abc"[..], "p", 3, Some(3)).expect("at the limit");
        assert_eq!(ok, b"abc");
    }

    #[test]
    fn the_default_is_64_mib() {
        assert_eq!(DEFAULT_MB << 20, 64 * 1024 * 1024);
    }
}
