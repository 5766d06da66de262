//! git's index file (`.git/index`) as bytes: its entries walked without copying, the stat data
//! and id of an entry rewritten in place, and the cache-tree extension (`TREE`) parsed,
//! invalidated along a path and written back the way git writes it.
//!
//! This is not a general index codec: it reads versions 2 to 4 with SHA-1 ids and refuses
//! (`None`) anything it does not read entirely, so a caller can hand such an index to git. An
//! entry's size on disk depends only on its name and flags, so rewriting the fixed fields of
//! entries leaves every offset (and the offset tables git may keep) where it was.

/// Bytes of an object id (SHA-1).
pub const OID_LEN: usize = 20;

/// Offsets inside an entry: stat data, then mode, then the id and the flags.
pub const MODE_AT: usize = 24;
pub const OID_AT: usize = 40;
pub const FLAGS_AT: usize = 60;

/// `assume-valid` in the first flags word; `extended` says a second word follows (v3+).
pub const FLAG_VALID: u16 = 0x8000;
pub const FLAG_EXTENDED: u16 = 0x4000;
/// The name's length in the first flags word; all ones for a name of 0xFFF bytes or more.
const NAME_MASK: u16 = 0x0FFF;

/// One entry as walked: where it starts in the file, its full name, its flags.
pub struct EntryRef<'a> {
    pub offset: usize,
    pub name: &'a [u8],
    pub flags: u16,
    /// The second flags word (skip-worktree, intent-to-add), 0 when there is none.
    pub extended: u16,
    pub has_extended: bool,
}

impl EntryRef<'_> {
    pub fn stage(&self) -> u16 {
        (self.flags >> 12) & 0x3
    }
}

/// An extension: its signature, where its header starts and how many data bytes follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ext {
    pub sig: [u8; 4],
    pub start: usize,
    pub len: usize,
}

impl Ext {
    pub fn data<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[self.start + 8..self.start + 8 + self.len]
    }
    pub fn end(&self) -> usize {
        self.start + 8 + self.len
    }
}

/// What the walk found besides the entries.
#[derive(Debug)]
pub struct Layout {
    pub version: u32,
    pub count: usize,
    /// Where the first extension (or the trailing hash) starts.
    pub entries_end: usize,
    pub exts: Vec<Ext>,
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

/// Walks every entry of the index `bytes`, in order, then lists the extensions. `None` when the
/// file is not an index this reads entirely (another version, a truncated entry, extensions that
/// do not end exactly at the trailing hash).
pub fn walk(bytes: &[u8], mut visit: impl FnMut(&EntryRef)) -> Option<Layout> {
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(bytes, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(bytes, 8)? as usize;
    let mut at = 12;
    let mut name: Vec<u8> = Vec::new();
    for _ in 0..count {
        let flags = be16(bytes, at + FLAGS_AT)?;
        let has_extended = flags & FLAG_EXTENDED != 0;
        if has_extended && version < 3 {
            return None;
        }
        let extended = if has_extended {
            be16(bytes, at + FLAGS_AT + 2)?
        } else {
            0
        };
        let start = at + FLAGS_AT + 2 + if has_extended { 2 } else { 0 };
        let next;
        let whole: &[u8];
        if version == 4 {
            // The name is the previous one less `strip` bytes, then a NUL-terminated suffix.
            let (mut strip, mut i) = (0usize, start);
            loop {
                let c = *bytes.get(i)?;
                i += 1;
                strip = strip.checked_shl(7)? | usize::from(c & 0x7f);
                if c & 0x80 == 0 {
                    break;
                }
                strip = strip.checked_add(1)?;
            }
            let end = i + bytes.get(i..)?.iter().position(|&b| b == 0)?;
            name.truncate(name.len().checked_sub(strip)?);
            name.extend_from_slice(&bytes[i..end]);
            next = end + 1;
            whole = &name;
        } else {
            // The flags hold the name's length below 0xFFF, as git reads it: no scan for the
            // NUL (50,000 entries walked twice by a commit), which must still be there.
            let len = usize::from(flags & NAME_MASK);
            let end = if len < usize::from(NAME_MASK) {
                let end = start.checked_add(len)?;
                (*bytes.get(end)? == 0).then_some(end)?
            } else {
                start + bytes.get(start..)?.iter().position(|&b| b == 0)?
            };
            whole = &bytes[start..end];
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            next = at + ((end - at + 8) & !7);
        }
        visit(&EntryRef {
            offset: at,
            name: whole,
            flags,
            extended,
            has_extended,
        });
        at = next;
    }
    let entries_end = at;
    let mut exts = Vec::new();
    while bytes.len().checked_sub(at)? > OID_LEN {
        let sig = bytes.get(at..at + 4)?;
        let len = be32(bytes, at + 4)? as usize;
        let ext = Ext {
            sig: [sig[0], sig[1], sig[2], sig[3]],
            start: at,
            len,
        };
        at = at.checked_add(8)?.checked_add(len)?;
        exts.push(ext);
    }
    (bytes.len().checked_sub(at)? == OID_LEN).then_some(Layout {
        version,
        count,
        entries_end,
        exts,
    })
}

/// The stat data git keeps per entry, each field truncated to 32 bits as git stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub dev: u32,
    pub ino: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u32,
}

impl Stat {
    pub fn of(m: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        // Truncation is git's own: it stores `unsigned int`s.
        Stat {
            ctime: (m.ctime() as u32, m.ctime_nsec() as u32),
            mtime: (m.mtime() as u32, m.mtime_nsec() as u32),
            dev: m.dev() as u32,
            ino: m.ino() as u32,
            uid: m.uid(),
            gid: m.gid(),
            size: m.size() as u32,
        }
    }

    /// The stat data of the entry at `entry` (its first byte).
    pub fn read(bytes: &[u8], entry: usize) -> Option<Stat> {
        let f = |i: usize| be32(bytes, entry + 4 * i);
        Some(Stat {
            ctime: (f(0)?, f(1)?),
            mtime: (f(2)?, f(3)?),
            dev: f(4)?,
            ino: f(5)?,
            uid: f(7)?,
            gid: f(8)?,
            size: f(9)?,
        })
    }

    /// Writes the stat data, `mode` and `oid` into the entry starting at `entry[0]`.
    pub fn write(&self, entry: &mut [u8], mode: u32, oid: &[u8; OID_LEN]) {
        let fields = [
            self.ctime.0,
            self.ctime.1,
            self.mtime.0,
            self.mtime.1,
            self.dev,
            self.ino,
            mode,
            self.uid,
            self.gid,
            self.size,
        ];
        for (i, v) in fields.iter().enumerate() {
            entry[4 * i..4 * i + 4].copy_from_slice(&v.to_be_bytes());
        }
        entry[OID_AT..OID_AT + OID_LEN].copy_from_slice(oid);
    }
}

/// The mode of the entry at `entry`.
pub fn mode_at(bytes: &[u8], entry: usize) -> Option<u32> {
    be32(bytes, entry + MODE_AT)
}

/// One folder of the cache tree: how many index entries it covers (-1: invalid, no id then), its
/// tree id, its subfolders in the order git keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    pub name: Vec<u8>,
    pub count: i64,
    pub oid: Option<[u8; OID_LEN]>,
    pub children: Vec<TreeNode>,
}

/// Folders deeper than this are not parsed (the caller falls back to git).
const MAX_TREE_DEPTH: usize = 512;

/// The `TREE` extension's data as a tree; `None` when it is not exactly what git writes.
pub fn parse_tree(data: &[u8]) -> Option<TreeNode> {
    let mut at = 0;
    let root = parse_node(data, &mut at, 0)?;
    (at == data.len()).then_some(root)
}

fn parse_node(data: &[u8], at: &mut usize, depth: usize) -> Option<TreeNode> {
    if depth > MAX_TREE_DEPTH {
        return None;
    }
    let nul = *at + data.get(*at..)?.iter().position(|&b| b == 0)?;
    let name = data[*at..nul].to_vec();
    let lf = nul + 1 + data.get(nul + 1..)?.iter().position(|&b| b == b'\n')?;
    let line = std::str::from_utf8(&data[nul + 1..lf]).ok()?;
    let (count, subtrees) = line.split_once(' ')?;
    // Exactly git's `%d %d`: anything else would not come back byte for byte.
    let canonical = |s: &str| s == "0" || !(s.starts_with('0') || s.starts_with("-0") || s == "-");
    if !canonical(count) || !canonical(subtrees) {
        return None;
    }
    let count: i64 = count.parse().ok()?;
    let subtrees: usize = subtrees.parse().ok()?;
    *at = lf + 1;
    let oid = if count >= 0 {
        let b = data.get(*at..*at + OID_LEN)?;
        *at += OID_LEN;
        let mut o = [0u8; OID_LEN];
        o.copy_from_slice(b);
        Some(o)
    } else if count == -1 {
        None
    } else {
        return None;
    };
    let mut children = Vec::with_capacity(subtrees.min(data.len()));
    for _ in 0..subtrees {
        children.push(parse_node(data, at, depth + 1)?);
    }
    Some(TreeNode {
        name,
        count,
        oid,
        children,
    })
}

/// Invalidates the folders on the way to `path` (the root included), as git does when an entry
/// changes. `false` when `path`'s last component also names a subfolder, which git would drop
/// (a file replacing a folder): the caller does not handle that.
pub fn invalidate(root: &mut TreeNode, path: &[u8]) -> bool {
    let mut node = root;
    let mut rest = path;
    loop {
        node.count = -1;
        node.oid = None;
        match rest.iter().position(|&b| b == b'/') {
            None => return !node.children.iter().any(|c| c.name == rest),
            Some(slash) => {
                let (dir, tail) = (&rest[..slash], &rest[slash + 1..]);
                match node.children.iter_mut().find(|c| c.name == dir) {
                    Some(child) => {
                        node = child;
                        rest = tail;
                    }
                    None => return true,
                }
            }
        }
    }
}

/// The `TREE` extension's data, as git writes it.
pub fn write_tree(node: &TreeNode, out: &mut Vec<u8>) {
    out.extend_from_slice(&node.name);
    out.push(0);
    out.extend_from_slice(format!("{} {}\n", node.count, node.children.len()).as_bytes());
    if let Some(oid) = &node.oid {
        out.extend_from_slice(oid);
    }
    for c in &node.children {
        write_tree(c, out);
    }
}

#[cfg(test)]
mod tests;
