//! The codec on indexes git wrote: every entry walked in versions 2 to 4, the cache tree read
//! and written back byte for byte, and invalidated exactly as `git update-index` invalidates it.

use super::*;

/// git in `dir`, with no global configuration either (HOME is the repository): what it writes
/// must not depend on the machine's settings.
fn git(dir: &std::path::Path, args: &[&str]) {
    crate::repo::test_git::git_ok(dir, args, &[("HOME", dir.as_os_str())]);
}

/// A committed repository with nested folders (its index has a full cache tree).
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    git(d, &["init", "-q"]);
    git(d, &["config", "user.name", "T"]);
    git(d, &["config", "user.email", "t@example.invalid"]);
    for p in [
        "a/b/c.txt",
        "a/b/d.txt",
        "a/e.txt",
        "a.txt",
        "z/y/x/w.txt",
        "z/v.txt",
    ] {
        let path = d.join(p);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, p).expect("write");
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "c"]);
    dir
}

fn names(bytes: &[u8]) -> (Vec<String>, Layout) {
    let mut names = Vec::new();
    let layout = walk(bytes, |e| {
        names.push(String::from_utf8_lossy(e.name).into_owned())
    })
    .expect("walk");
    (names, layout)
}

const ALL: [&str; 6] = [
    "a.txt",
    "a/b/c.txt",
    "a/b/d.txt",
    "a/e.txt",
    "z/v.txt",
    "z/y/x/w.txt",
];

#[test]
fn every_entry_is_walked_in_versions_2_3_and_4() {
    let dir = repo();
    let d = dir.path();
    let index = d.join(".git/index");
    let (n, layout) = names(&std::fs::read(&index).expect("index"));
    assert_eq!(n, ALL);
    assert_eq!(layout.version, 2);
    assert_eq!(
        layout.exts.iter().map(|x| &x.sig).collect::<Vec<_>>(),
        [b"TREE"]
    );
    std::fs::write(d.join("new.txt"), "n").expect("write");
    git(d, &["add", "--intent-to-add", "new.txt"]);
    let bytes = std::fs::read(&index).expect("index");
    let mut extended = Vec::new();
    let layout = walk(&bytes, |e| extended.push(e.has_extended)).expect("walk");
    assert_eq!(layout.version, 3);
    assert_eq!(
        extended.iter().filter(|x| **x).count(),
        1,
        "only the intent-to-add entry"
    );
    git(d, &["update-index", "--index-version", "4"]);
    let (n, layout) = names(&std::fs::read(&index).expect("index"));
    assert_eq!(layout.version, 4);
    let mut want = ALL.to_vec();
    want.insert(4, "new.txt");
    assert_eq!(n, want, "names after shared prefixes rebuilt");
}

#[test]
fn anything_else_is_refused() {
    let dir = repo();
    let bytes = std::fs::read(dir.path().join(".git/index")).expect("index");
    // Truncated anywhere: refused, never a panic.
    for cut in [
        0,
        4,
        12,
        50,
        100,
        bytes.len() / 2,
        bytes.len() - 21,
        bytes.len() - 1,
    ] {
        assert!(walk(&bytes[..cut], |_| {}).is_none(), "cut at {cut}");
    }
    let mut v5 = bytes.clone();
    v5[7] = 5;
    assert!(walk(&v5, |_| {}).is_none());
    let mut more = bytes.clone();
    more[11] += 1;
    assert!(
        walk(&more, |_| {}).is_none(),
        "one entry more than the file holds"
    );
    assert!(walk(b"DIRC\0\0\0\x02\0\0\0\x05", |_| {}).is_none());
}

fn tree_data(bytes: &[u8]) -> Vec<u8> {
    let layout = walk(bytes, |_| {}).expect("walk");
    let tree = layout
        .exts
        .iter()
        .find(|x| &x.sig == b"TREE")
        .expect("TREE");
    tree.data(bytes).to_vec()
}

#[test]
fn the_cache_tree_round_trips_byte_for_byte() {
    let dir = repo();
    let data = tree_data(&std::fs::read(dir.path().join(".git/index")).expect("index"));
    let root = parse_tree(&data).expect("parse");
    assert_eq!(root.count, 6);
    assert_eq!(root.children.len(), 2);
    let mut out = Vec::new();
    write_tree(&root, &mut out);
    assert_eq!(out, data);
    // Not exactly what git writes: refused.
    for bad in [
        &b"\x001 0\n"[..],
        b"\x00-2 0\n",
        b"\x0001 0\n",
        b"\x001 0",
        b"\x00x 0\n",
    ] {
        assert!(parse_tree(bad).is_none(), "{bad:?}");
    }
    assert!(parse_tree(&data[..data.len() - 1]).is_none());
}

/// Invalidating the folders above a changed file gives git's own cache tree after
/// `git update-index` of that file.
#[test]
fn invalidation_matches_git() {
    let dir = repo();
    let d = dir.path();
    let index = d.join(".git/index");
    let old = tree_data(&std::fs::read(&index).expect("index"));
    for p in ["a/b/c.txt", "z/v.txt"] {
        std::fs::write(d.join(p), "changed").expect("write");
    }
    git(d, &["update-index", "--", "a/b/c.txt", "z/v.txt"]);
    let gits = tree_data(&std::fs::read(&index).expect("index"));
    let mut root = parse_tree(&old).expect("parse");
    assert!(invalidate(&mut root, b"a/b/c.txt"));
    assert!(invalidate(&mut root, b"z/v.txt"));
    let mut ours = Vec::new();
    write_tree(&root, &mut ours);
    assert_eq!(ours, gits);
    assert_ne!(ours, old);
    // A file named like a folder git keeps a subtree for: the caller must leave it to git.
    let mut root = parse_tree(&old).expect("parse");
    assert!(!invalidate(&mut root, b"a/b"));
}

#[test]
fn stat_data_is_written_where_git_reads_it() {
    let dir = repo();
    let bytes = std::fs::read(dir.path().join(".git/index")).expect("index");
    let meta = std::fs::metadata(dir.path().join("a.txt")).expect("stat");
    // The first entry is a.txt, untouched since `git add` recorded it.
    let recorded = Stat::read(&bytes, 12).expect("stat");
    assert_eq!(recorded, Stat::of(&meta));
    let mut entry = bytes[12..12 + FLAGS_AT].to_vec();
    let oid: [u8; OID_LEN] = entry[OID_AT..OID_AT + OID_LEN].try_into().expect("oid");
    let mode = mode_at(&bytes, 12).expect("mode");
    assert_eq!(mode, 0o100644);
    recorded.write(&mut entry, mode, &oid);
    assert_eq!(entry, bytes[12..12 + FLAGS_AT]);
}

#[test]
fn a_name_of_0xfff_bytes_or_more_is_read_to_its_nul() {
    // The flags hold a name's length only below 0xFFF; a longer one is read up to its NUL, as
    // git reads it. Such a path cannot be a file here (PATH_MAX), so it is only an entry.
    let dir = repo();
    let d = dir.path();
    let long: String = (0..40)
        .map(|i| format!("{i:03}{}", "d".repeat(100)))
        .collect::<Vec<_>>()
        .join("/");
    assert!(long.len() > 0xFFF);
    let blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
    std::fs::write(d.join("empty"), "").expect("write");
    git(d, &["hash-object", "-w", "empty"]);
    git(
        d,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},{long}"),
        ],
    );
    let bytes = std::fs::read(d.join(".git/index")).expect("index");
    let (n, _) = names(&bytes);
    assert!(n.contains(&long), "the long name walked whole");
    assert_eq!(n.len(), ALL.len() + 1);
}

#[test]
fn a_name_whose_length_disagrees_with_its_flags_is_refused() {
    let dir = repo();
    let mut bytes = std::fs::read(dir.path().join(".git/index")).expect("index");
    // The first entry ("a.txt", 5 bytes) said to be 4 bytes long: no NUL there.
    let flags = 12 + FLAGS_AT;
    assert_eq!(bytes[flags + 1], 5);
    bytes[flags + 1] = 4;
    assert!(walk(&bytes, |_| {}).is_none());
}
