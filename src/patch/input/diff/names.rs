//! File names in a unified diff, read the way `git apply` reads them.
//!
//! - git's C-style quoting (`"a/caf\303\251.txt"`, `"a/post\\image.txt"`): one name, its escapes
//!   undone; `\\` is a backslash inside the name, never a folder separator;
//! - `-p N`: N leading components dropped (a name with fewer is not a name: the caller says so);
//! - the `diff --git A B` line: a name is taken from it only when both halves name the same
//!   file (a rename's names come from its `rename from`/`rename to` lines);
//! - a traditional `diff -u` header: the timestamp after the name (after a tab, or spaces) is
//!   not part of it, an epoch timestamp marks a created or deleted file, and of `--- x.orig` /
//!   `+++ x` the `+++` name is the file unless the `---` one is a prefix of it;
//! - the strip level of a traditional diff is guessed as git guesses it: 0 when a name has no
//!   `/`, else 1.
//!
//! Everything here is pure text: no file system is consulted. A name that cannot be read is
//! `None`; the caller turns that into an error with the line.

/// Terminators of an unquoted name: git's `TERM_SPACE` / `TERM_TAB`.
pub(super) const TERM_TAB: u8 = 2;
const TERM_SPACE: u8 = 1;

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// `/dev/null`, alone or followed by whitespace (a timestamp).
pub(super) fn is_dev_null(s: &str) -> bool {
    s.strip_prefix("/dev/null")
        .is_some_and(|rest| rest.is_empty() || rest.bytes().next().is_some_and(is_space))
}

/// A C-quoted string at the start of `s`: the unquoted text and what follows the closing
/// quote, or why it cannot be read.
pub(super) fn unquote_c(s: &str) -> Result<(String, &str), &'static str> {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') {
        return Err("a quoted name starts with `\"`");
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let name =
                    String::from_utf8(out).map_err(|_| "the quoted name is not valid UTF-8")?;
                return Ok((name, &s[i + 1..]));
            }
            b'\\' => {
                let c = *b
                    .get(i + 1)
                    .ok_or("the quoted name ends inside an escape")?;
                i += 2;
                match c {
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'v' => out.push(11),
                    b'\\' | b'"' => out.push(c),
                    b'0'..=b'3' => {
                        // Exactly three octal digits, as git writes them.
                        let digits = b.get(i..i + 2).ok_or("a cut-off octal escape")?;
                        if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                            return Err("an octal escape needs three digits");
                        }
                        out.push(
                            ((c - b'0') << 6) | ((digits[0] - b'0') << 3) | (digits[1] - b'0'),
                        );
                        i += 2;
                    }
                    _ => return Err("an unknown escape in a quoted name"),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err("the quoted name has no closing `\"`")
}

/// `//` folded into `/`, as git does with every name.
fn squash_slash(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c == '/' && out.ends_with('/') {
            continue;
        }
        out.push(c);
    }
    out
}

/// `name` without its first `p` components (each up to and including a `/`).
pub(super) fn strip_components(name: &str, p: usize) -> Option<&str> {
    let mut rest = name;
    for _ in 0..p {
        let at = rest.find('/')?;
        rest = &rest[at + 1..];
    }
    Some(rest)
}

/// git's `skip_tree_prefix`: `p` components dropped; an absolute name (or an empty first
/// component) is refused.
fn skip_tree_prefix(p: usize, s: &str) -> Option<&str> {
    if p == 0 {
        return (!s.starts_with('/')).then_some(s);
    }
    let mut left = p;
    for (i, c) in s.bytes().enumerate() {
        if c == b'/' {
            left -= 1;
            if left == 0 {
                return (i != 0).then(|| &s[i + 1..]);
            }
        }
    }
    None
}

/// The name of a quoted `"..."` with `p` components dropped (git's `find_name_gnu`).
fn find_name_gnu(line: &str, p: usize) -> Option<String> {
    let (name, _) = unquote_c(line).ok()?;
    strip_components(&name, p).map(squash_slash)
}

/// git's `find_name_common`: the name runs to the first terminator (or to `end`), `p`
/// components dropped; `def` wins when it is a prefix of the name (`x` over `x.orig`).
fn find_name_common(
    line: &str,
    def: Option<&str>,
    p: usize,
    end: Option<usize>,
    terminate: u8,
) -> Option<String> {
    let b = line.as_bytes();
    let stop = end.unwrap_or(b.len());
    let mut start = (p == 0).then_some(0);
    let mut left = p;
    let mut i = 0;
    while i < stop {
        let c = b[i];
        if end.is_none() && is_space(c) {
            let terminates = match c {
                b' ' => terminate & TERM_SPACE != 0,
                b'\t' => terminate & TERM_TAB != 0,
                _ => true,
            };
            if terminates {
                break;
            }
        }
        i += 1;
        if c == b'/' && left > 0 {
            left -= 1;
            if left == 0 {
                start = Some(i);
            }
        }
    }
    let Some(start) = start.filter(|s| *s < i) else {
        return def.map(squash_slash);
    };
    let name = line.get(start..i)?;
    if let Some(d) = def
        && d.len() < name.len()
        && name.starts_with(d)
    {
        return Some(squash_slash(d));
    }
    Some(squash_slash(name))
}

/// git's `find_name`: a quoted name, else an unquoted one up to a terminator.
pub(super) fn find_name(line: &str, def: Option<&str>, p: usize, terminate: u8) -> Option<String> {
    if line.starts_with('"')
        && let Some(n) = find_name_gnu(line, p)
    {
        return Some(n);
    }
    find_name_common(line, def, p, None, terminate)
}

/// git's `find_name_traditional`: a quoted name, else the text before a timestamp (which may
/// hold spaces and tabs), else the text up to the first tab.
pub(super) fn find_name_traditional(line: &str, def: Option<&str>, p: usize) -> Option<String> {
    if line.starts_with('"')
        && let Some(n) = find_name_gnu(line, p)
    {
        return Some(n);
    }
    let date = timestamp_len(line.as_bytes());
    if date == 0 {
        return find_name_common(line, def, p, None, TERM_TAB);
    }
    find_name_common(line, def, p, Some(line.len() - date), 0)
}

/// The strip level git guesses from a traditional `---`/`+++` name: 0 when the name has no
/// `/`; `None` (no guess) otherwise, or for `/dev/null`.
pub(super) fn guess_strip(line: &str) -> Option<usize> {
    if is_dev_null(line) {
        return None;
    }
    let name = find_name_traditional(line, None, 0)?;
    (!name.contains('/')).then_some(0)
}

/// The strip level of a traditional diff, from its first `---`/`+++` pair: git's guess (0 when
/// the names have no `/`), and where git has none, the shape of the names: the same first
/// folder on both sides is a diff made inside the tree (`--- pkg/mod.py` / `+++ pkg/mod.py`, as
/// `ruff format --diff` or `diff -u` at the root write it): 0; different first folders are two
/// trees (`a/` and `b/`, `old/` and `new/`): 1. Against `/dev/null`: 1 only for an `a/` or `b/`
/// prefix. (`git apply` strips one folder in every case it cannot guess, which would put
/// `pkg/mod.py` at `mod.py`.)
pub(super) fn guess_traditional_strip(minus: &str, plus: &str) -> usize {
    let q = guess_strip(plus);
    if let Some(p) = guess_strip(minus).or(q)
        && Some(p) == q
    {
        return p;
    }
    let name = |l: &str| {
        (!is_dev_null(l))
            .then(|| find_name_traditional(l, None, 0))
            .flatten()
    };
    let first = |n: &str| n.split('/').next().unwrap_or_default().to_string();
    match (name(minus), name(plus)) {
        (Some(a), Some(b)) => usize::from(first(&a) != first(&b)),
        (Some(n), None) | (None, Some(n)) => {
            usize::from(n.starts_with("a/") || n.starts_with("b/"))
        }
        (None, None) => 1,
    }
}

/// The one name of a `diff --git` line (the text after `diff --git `) when both halves name
/// the same file after dropping `p` components, as git's `git_header_name` reads it.
pub(super) fn header_name(p: usize, line: &str) -> Option<String> {
    if line.starts_with('"') {
        let (first, rest) = unquote_c(line).ok()?;
        let first = skip_tree_prefix(p, &first)?.to_string();
        let second = rest.trim_start_matches([' ', '\t']);
        if second.is_empty() {
            return None;
        }
        let other = if second.starts_with('"') {
            let (s, _) = unquote_c(second).ok()?;
            skip_tree_prefix(p, &s)?.to_string()
        } else {
            skip_tree_prefix(p, second)?.to_string()
        };
        return (other == first).then_some(first);
    }
    let name = skip_tree_prefix(p, line)?;
    // An unquoted first name: a `"` can only start the second one.
    if let Some(q) = name.find('"') {
        let (s, _) = unquote_c(&name[q..]).ok()?;
        let np = skip_tree_prefix(p, &s)?;
        let len = np.len();
        return (len < q
            && name.as_bytes().get(len).is_some_and(|c| is_space(*c))
            && name.starts_with(np))
        .then(|| np.to_string());
    }
    // Unquoted on both sides: the name must show up twice, the same, around one space or tab.
    for (len, c) in name.bytes().enumerate() {
        if c != b' ' && c != b'\t' {
            continue;
        }
        let Some(second) = skip_tree_prefix(p, &name[len + 1..]) else {
            continue;
        };
        if second.len() == len && name[..len] == *second {
            return Some(name[..len].to_string());
        }
    }
    None
}

/// The length of a timestamp at the end of a traditional `---`/`+++` line, with the tab or
/// spaces before it (git's `diff_timestamp_len`); 0 when there is none.
pub(super) fn timestamp_len(line: &[u8]) -> usize {
    let len = line.len();
    if len == 0 || !line[len - 1].is_ascii_digit() {
        return 0;
    }
    let mut end = len;
    let n = match tz_len(&line[..end]) {
        0 => tz_colon_len(&line[..end]),
        n => n,
    };
    end -= n;
    let n = match time_len(&line[..end]) {
        0 => fractional_time_len(&line[..end]),
        n => n,
    };
    end -= n;
    let n = date_len(&line[..end]);
    if n == 0 {
        return 0;
    }
    end -= n;
    if end == 0 {
        return 0;
    }
    if line[end - 1] == b'\t' {
        return len - (end - 1);
    }
    if line[end - 1] != b' ' {
        return 0;
    }
    // Spaces instead of a tab (whitespace damage).
    let spaces = line[..end].iter().rev().take_while(|c| **c == b' ').count();
    len - (end - spaces)
}

/// ` +0500`.
fn tz_len(l: &[u8]) -> usize {
    let n = l.len();
    if n < 6 || l[n - 6] != b' ' || !matches!(l[n - 5], b'+' | b'-') {
        return 0;
    }
    if l[n - 4..].iter().all(u8::is_ascii_digit) {
        6
    } else {
        0
    }
}

/// ` +08:00`.
fn tz_colon_len(l: &[u8]) -> usize {
    let n = l.len();
    if n < 7 {
        return 0;
    }
    let t = &l[n - 7..];
    let d = |i: usize| t[i].is_ascii_digit();
    if t[0] == b' ' && matches!(t[1], b'+' | b'-') && d(2) && d(3) && t[4] == b':' && d(5) && d(6) {
        7
    } else {
        0
    }
}

/// `72-02-05` or `1972-02-05`.
fn date_len(l: &[u8]) -> usize {
    let n = l.len();
    if n < 8 {
        return 0;
    }
    let t = &l[n - 8..];
    let d = |i: usize| t[i].is_ascii_digit();
    if !(d(0) && d(1) && t[2] == b'-' && d(3) && d(4) && t[5] == b'-' && d(6) && d(7)) {
        return 0;
    }
    if n >= 10 && l[n - 9].is_ascii_digit() && l[n - 10].is_ascii_digit() {
        10
    } else {
        8
    }
}

/// ` 07:01:32`.
fn time_len(l: &[u8]) -> usize {
    let n = l.len();
    if n < 9 {
        return 0;
    }
    let t = &l[n - 9..];
    let d = |i: usize| t[i].is_ascii_digit();
    if t[0] == b' ' && d(1) && d(2) && t[3] == b':' && d(4) && d(5) && t[6] == b':' && d(7) && d(8)
    {
        9
    } else {
        0
    }
}

/// ` 19:41:17.620000023`.
fn fractional_time_len(l: &[u8]) -> usize {
    let n = l.len();
    if n == 0 || !l[n - 1].is_ascii_digit() {
        return 0;
    }
    let digits = l.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let dot = n - digits;
    if dot == 0 || l[dot - 1] != b'.' {
        return 0;
    }
    match time_len(&l[..dot - 1]) {
        0 => 0,
        t => digits + 1 + t,
    }
}

/// Whether a traditional `---`/`+++` line ends in GNU diff's epoch timestamp (after a tab),
/// which marks the side of a created or deleted file: 1970-01-01 00:00:00 in UTC, written in
/// any time zone (`1969-12-31 19:00:00.000000000 -0500`).
pub(super) fn has_epoch_timestamp(line: &str) -> bool {
    let Some(tab) = line.rfind('\t') else {
        return false;
    };
    let ts = &line[tab + 1..];
    let (rest, epoch_hour) = if let Some(r) = ts.strip_prefix("1969-12-31 ") {
        (r, 24)
    } else if let Some(r) = ts.strip_prefix("1970-01-01 ") {
        (r, 0)
    } else {
        return false;
    };
    // hh:mm:00(.0+)? [+-]hh:?mm, and nothing after.
    let b = rest.as_bytes();
    let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    if !(b.first().is_some_and(|c| (b'0'..=b'2').contains(c))
        && d(1)
        && b.get(2) == Some(&b':')
        && b.get(3).is_some_and(|c| (b'0'..=b'5').contains(c))
        && d(4)
        && rest.get(5..8) == Some(":00"))
    {
        return false;
    }
    let mut i = 8;
    if b.get(i) == Some(&b'.') {
        let zeros = b[i + 1..].iter().take_while(|c| **c == b'0').count();
        if zeros == 0 {
            return false;
        }
        i += 1 + zeros;
    }
    let Some(zone) = rest.get(i..).and_then(|z| z.strip_prefix(' ')) else {
        return false;
    };
    let zb = zone.as_bytes();
    let sign = match zb.first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return false,
    };
    let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
    let colon_ok = zone.len() == 5 || (zone.len() == 6 && zb[3] == b':');
    if !colon_ok
        || digits.len() != 4
        || !digits.bytes().all(|c| c.is_ascii_digit())
        || !(b'0'..=b'2').contains(&digits.as_bytes()[0])
        || !(b'0'..=b'5').contains(&digits.as_bytes()[2])
    {
        return false;
    }
    let num = |s: &str| s.parse::<i32>().unwrap_or(-1);
    let hour = num(&rest[0..2]);
    let minute = num(&rest[3..5]);
    let offset = sign * (num(&digits[..2]) * 60 + num(&digits[2..]));
    hour * 60 + minute - offset == epoch_hour * 60
}
