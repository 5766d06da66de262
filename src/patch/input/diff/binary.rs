//! `GIT binary patch` hunks: git's base85 lines, zlib, and git's delta format.
//!
//! ```text
//! binary := "GIT binary patch" NL hunk hunk?          (forward, then the optional reverse)
//! hunk   := ("literal " | "delta ") SIZE NL line+ NL  (SIZE: the inflated length)
//! line   := LEN base85+ NL                            (LEN: `A`-`Z` = 1-26 bytes, `a`-`z` = 27-52)
//! ```
//!
//! A literal hunk inflates to the new content; a delta hunk to a delta (`patch-delta.c`): the
//! source and result sizes as varints, then commands that copy a range of the source or insert
//! literal bytes. Every length and offset is checked against what it claims to cover, so a
//! damaged hunk is an error, never a panic or a short result.

use std::io::Read;

/// git's base85 alphabet (`base85.c`).
const ALPHABET: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

fn digit85(c: u8) -> Option<u32> {
    ALPHABET.iter().position(|a| *a == c).map(|p| p as u32)
}

/// Decodes `len` bytes from base85 text (groups of 5 characters for 4 bytes).
pub(super) fn decode_85(text: &[u8], len: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(len);
    let mut chunks = text.chunks(5);
    while out.len() < len {
        let group = chunks
            .next()
            .filter(|g| g.len() == 5)
            .ok_or("the line is shorter than its length character says")?;
        let mut acc: u32 = 0;
        for (i, c) in group.iter().enumerate() {
            let d = digit85(*c).ok_or_else(|| format!("`{}` is not a base85 digit", *c as char))?;
            acc = if i < 4 {
                acc * 85 + d
            } else {
                acc.checked_mul(85)
                    .and_then(|a| a.checked_add(d))
                    .ok_or("a base85 group overflows 32 bits")?
            };
        }
        let take = (len - out.len()).min(4);
        out.extend_from_slice(&acc.to_be_bytes()[..take]);
    }
    if chunks.next().is_some() {
        return Err("the line is longer than its length character says".into());
    }
    Ok(out)
}

/// Encodes bytes as base85 (for tests: the inverse of [`decode_85`]).
#[cfg(test)]
pub(super) fn encode_85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in data.chunks(4) {
        let mut b = [0u8; 4];
        b[..chunk.len()].copy_from_slice(chunk);
        let mut acc = u32::from_be_bytes(b);
        let mut group = [0u8; 5];
        for g in group.iter_mut().rev() {
            *g = ALPHABET[(acc % 85) as usize];
            acc /= 85;
        }
        out.extend_from_slice(&group);
    }
    out
}

/// How a hunk's data is to be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Literal,
    Delta,
}

/// A hunk's header line: `literal 1234` / `delta 56`.
pub(super) fn hunk_header(line: &str) -> Option<(Method, usize)> {
    let (method, size) = if let Some(s) = line.strip_prefix("literal ") {
        (Method::Literal, s)
    } else if let Some(s) = line.strip_prefix("delta ") {
        (Method::Delta, s)
    } else {
        return None;
    };
    Some((method, size.trim().parse().ok()?))
}

/// One data line: its length character, then base85.
pub(super) fn data_line(line: &str) -> Result<Vec<u8>, String> {
    let b = line.as_bytes();
    if b.len() < 6 || !(b.len() - 1).is_multiple_of(5) {
        return Err("a data line is a length character and groups of 5 base85 digits".into());
    }
    let len = match b[0] {
        c @ b'A'..=b'Z' => usize::from(c - b'A') + 1,
        c @ b'a'..=b'z' => usize::from(c - b'a') + 27,
        c => return Err(format!("`{}` is not a length character", c as char)),
    };
    let max = (b.len() - 1) / 5 * 4;
    if len > max || len + 4 <= max {
        return Err(format!(
            "the length character says {len} bytes, but the line holds {} to {max}",
            max.saturating_sub(3)
        ));
    }
    decode_85(&b[1..], len)
}

/// The largest content a binary hunk may inflate to (or a delta produce): a patch of a few
/// megabytes must not make patchgate allocate without bound.
pub(super) const MAX_BINARY: usize = 1 << 30;

/// The inflated data of a hunk, which must be exactly `size` bytes.
pub(super) fn inflate(deflated: &[u8], size: usize) -> Result<Vec<u8>, String> {
    if size > MAX_BINARY {
        return Err(format!(
            "it claims {size} bytes, more than the {MAX_BINARY} patchgate takes in a binary patch"
        ));
    }
    let mut out = Vec::with_capacity(size.min(1 << 26));
    let mut z = flate2::read::ZlibDecoder::new(deflated).take(size as u64 + 1);
    z.read_to_end(&mut out)
        .map_err(|e| format!("the data does not inflate: {e}"))?;
    if out.len() != size {
        return Err(format!(
            "the data inflates to {} bytes, not the {size} its header says",
            out.len()
        ));
    }
    Ok(out)
}

/// A varint of the delta header: 7 bits per byte, least significant first.
fn varint(d: &[u8], at: &mut usize) -> Result<usize, String> {
    let mut v: usize = 0;
    let mut shift = 0;
    loop {
        let b = *d.get(*at).ok_or("the delta is cut off in its header")?;
        *at += 1;
        if shift > 56 {
            return Err("a size in the delta header is too large".into());
        }
        v |= usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
}

/// Applies a git delta to `src` (`patch-delta.c`).
pub fn apply_delta(src: &[u8], delta: &[u8]) -> Result<Vec<u8>, String> {
    let mut at = 0;
    let src_size = varint(delta, &mut at)?;
    if src_size != src.len() {
        return Err(format!(
            "the delta is for a {src_size}-byte file, and this one has {} bytes",
            src.len()
        ));
    }
    let dst_size = varint(delta, &mut at)?;
    if dst_size > MAX_BINARY {
        return Err(format!("the delta's result would have {dst_size} bytes"));
    }
    let mut out = Vec::with_capacity(dst_size.min(1 << 26));
    while at < delta.len() {
        let cmd = delta[at];
        at += 1;
        if cmd & 0x80 != 0 {
            let mut field = |bit: u8, shift: u32| -> Result<usize, String> {
                if cmd & bit == 0 {
                    return Ok(0);
                }
                let b = *delta.get(at).ok_or("the delta is cut off in a copy")?;
                at += 1;
                Ok(usize::from(b) << shift)
            };
            let offset = field(0x01, 0)? | field(0x02, 8)? | field(0x04, 16)? | field(0x08, 24)?;
            let mut size = field(0x10, 0)? | field(0x20, 8)? | field(0x40, 16)?;
            if size == 0 {
                size = 0x10000;
            }
            let piece = offset
                .checked_add(size)
                .and_then(|end| src.get(offset..end))
                .ok_or("a copy in the delta reaches past the end of the file")?;
            if out.len() + size > dst_size {
                return Err("the delta writes more than its result size".into());
            }
            out.extend_from_slice(piece);
        } else if cmd != 0 {
            let n = usize::from(cmd);
            let piece = delta
                .get(at..at + n)
                .ok_or("the delta is cut off in an insert")?;
            if out.len() + n > dst_size {
                return Err("the delta writes more than its result size".into());
            }
            out.extend_from_slice(piece);
            at += n;
        } else {
            return Err("the delta has a zero command (reserved)".into());
        }
    }
    if out.len() != dst_size {
        return Err(format!(
            "the delta makes {} bytes, not the {dst_size} its header says",
            out.len()
        ));
    }
    Ok(out)
}
