use super::*;

fn setup() -> (tempfile::TempDir, tempfile::TempDir, Root) {
    let repo = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(repo.path().join("src/deep")).expect("mkdir");
    std::fs::write(repo.path().join("src/a.txt"), "a\n").expect("write");
    std::fs::write(outside.path().join("a.txt"), "outside\n").expect("write");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("out")).expect("link");
    std::os::unix::fs::symlink("a.txt", repo.path().join("src/alias")).expect("link");
    let root = Root::open(repo.path()).expect("open");
    (repo, outside, root)
}

/// Runs `f` once with openat2 (where the kernel has it) and once with the component walk.
fn both_ways(f: impl Fn()) {
    f();
    // SAFETY: tests of this module are the only readers of this variable, and it is set and
    // removed around a call on this thread; other threads see either value, both valid.
    unsafe { std::env::set_var("PATCHGATE_NO_OPENAT2", "1") };
    f();
    unsafe { std::env::remove_var("PATCHGATE_NO_OPENAT2") };
}

#[test]
fn paths_that_are_not_beneath_the_root_are_refused_before_any_call() {
    let (_r, _o, root) = setup();
    for bad in [
        "",
        "/etc/passwd",
        "../x",
        "src/../../x",
        "a//b",
        "./a",
        "src/.",
        "a\0b",
    ] {
        let e = root.read(bad).expect_err(bad);
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{bad}");
    }
}

#[test]
fn a_symlink_anywhere_on_the_way_is_refused() {
    both_ways(|| {
        let (repo, outside, root) = setup();
        let e = root
            .read("out/a.txt")
            .expect_err("through a symlinked folder");
        assert!(is_symlink_error(&e), "{e}");
        let e = root
            .atomic_write("out/planted.txt", b"x", 0o644)
            .expect_err("write through a symlinked folder");
        assert!(is_symlink_error(&e), "{e}");
        assert!(!outside.path().join("planted.txt").exists());
        // In last place: reading follows nothing, lstat sees the link.
        assert!(is_symlink_error(&root.read("src/alias").expect_err("link")));
        assert_eq!(
            root.lstat("src/alias").expect("lstat").map(|m| m.kind),
            Some(Kind::Symlink)
        );
        assert_eq!(
            root.read_link("src/alias").expect("readlink"),
            Path::new("a.txt")
        );
        assert!(is_symlink_error(
            &root.chmod("src/alias", 0o600).expect_err("chmod a link")
        ));
        assert!(is_symlink_error(
            &root.create_dirs("out/x").expect_err("mkdir through")
        ));
        assert!(!outside.path().join("x").exists());
        // Removing a link removes the link, not its target.
        root.remove_file("out").expect("unlink the link");
        assert!(outside.path().join("a.txt").exists());
        drop(repo);
    });
}

#[test]
fn writes_are_atomic_and_leave_no_temp_file() {
    both_ways(|| {
        let (repo, _o, root) = setup();
        root.atomic_write("src/a.txt", b"new\n", 0o640)
            .expect("write");
        assert_eq!(
            std::fs::read(repo.path().join("src/a.txt")).expect("read"),
            b"new\n"
        );
        let md = root.lstat("src/a.txt").expect("lstat").expect("there");
        assert_eq!((md.kind, md.mode, md.len), (Kind::File, 0o640, 4));
        let created = root.create_dirs("n/e/w").expect("mkdir");
        assert_eq!(created, ["n", "n/e", "n/e/w"]);
        assert!(root.create_dirs("n/e/w").expect("again").is_empty());
        root.atomic_write("n/e/w/f", b"f", 0o600).expect("write");
        root.rename("n/e/w/f", "src/g").expect("rename");
        root.symlink(Path::new("g"), "src/h").expect("symlink");
        root.chmod("src/g", 0o755).expect("chmod");
        assert_eq!(
            root.lstat("src/g").expect("lstat").map(|m| m.mode),
            Some(0o755)
        );
        root.remove_dir("n/e/w").expect("rmdir");
        assert!(root.lstat("n/e/w").expect("lstat").is_none());
        assert!(root.lstat("missing/parent/x").expect("lstat").is_none());
        assert!(root.lstat("src/a.txt/below").expect("lstat").is_none());
        let names = root.dir("src").expect("dir").names().expect("names");
        assert!(
            names.iter().all(|n| !n.contains(".patchgate-")),
            "{names:?}"
        );
        drop(repo);
    });
}

#[test]
fn a_folder_replaced_since_it_was_opened_is_noticed() {
    let (repo, _o, root) = setup();
    let d = root.dir("src").expect("dir");
    assert!(root.still_at(&d).expect("same"));
    std::fs::rename(repo.path().join("src"), repo.path().join("src.old")).expect("mv");
    std::fs::create_dir(repo.path().join("src")).expect("mkdir");
    assert!(!root.still_at(&d).expect("replaced"));
}

#[test]
fn temp_names_are_recognised_by_pattern() {
    let t = temp_name("a.txt");
    assert!(is_temp_for(&t, "a.txt"), "{t}");
    assert!(is_temp_for(".a.txt.patchgate-12-0.tmp", "a.txt"));
    assert!(!is_temp_for(".a.txt.patchgate-12-0.tmp", "a"));
    assert!(!is_temp_for(".a.txt.patchgate-x-0.tmp", "a.txt"));
    assert!(!is_temp_for("a.txt", "a.txt"));
}

/// A file name may have 255 bytes: its temp name must fit too (it carries the name's start), be
/// creatable next to it, and still be recognised as that file's.
#[test]
fn a_temp_name_for_the_longest_file_name_fits() {
    let d = tempfile::tempdir().expect("tempdir");
    // ASCII, and two-byte characters ending just past the cut (a character boundary is kept).
    for name in ["a".repeat(255), format!("x{}.txt", "é".repeat(125))] {
        assert!(name.len() <= 255);
        std::fs::write(d.path().join(&name), "x").expect("the file itself");
        let t = temp_name(&name);
        assert!(t.len() <= 255, "{} bytes", t.len());
        std::fs::write(d.path().join(&t), "y").expect("its temp file");
        assert!(is_temp_for(&t, &name), "{t}");
        assert!(!is_temp_for(&t, "a"), "{t}");
    }
    let short = temp_name("a.txt");
    assert!(short.starts_with(".a.txt.patchgate-"), "{short}");
}

/// Every item is synced even after one fails, and the first error comes back: on several threads
/// when the first sync waited (for a disk), on the calling thread when it did not.
#[test]
fn sync_each_syncs_every_item_and_reports_a_failure() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let items: Vec<usize> = (0..37).collect();
    // Which threads ran the syncs, once every item was synced and the first error came back.
    let run = |first_waits: bool| {
        let done = AtomicUsize::new(0);
        let threads = std::sync::Mutex::new(std::collections::HashSet::new());
        let r = super::sync_each(&items, |i| {
            done.fetch_add(1, Ordering::Relaxed);
            threads
                .lock()
                .expect("lock")
                .insert(std::thread::current().id());
            if *i == 0 && first_waits {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            if *i == 3 || *i == 30 {
                Err(std::io::Error::other(format!("item {i}")))
            } else {
                Ok(())
            }
        });
        assert_eq!(done.load(Ordering::Relaxed), items.len(), "all synced");
        assert!(r.is_err_and(|e| e.to_string() == "item 3"));
        threads.into_inner().expect("lock")
    };
    assert!(run(true).len() > 1, "in parallel");
    // A quick first sync keeps the rest here; a few tries, as a loaded machine may pause this
    // thread long enough within the first one.
    let here: std::collections::HashSet<_> = [std::thread::current().id()].into();
    assert!((0..3).any(|_| run(false) == here), "on the calling thread");
    assert!(super::sync_each(&items[..1], |_| Ok(())).is_ok());
    assert!(super::sync_each(&Vec::<usize>::new(), |_| Ok(())).is_ok());
}

/// The syncs of a batch wait together, more of them at once than this machine has cores (a
/// disk's flushes asked for together are sent as one), and every item is synced even after one
/// fails, the first error (in the items' order) coming back.
#[test]
fn sync_spread_keeps_more_syncs_in_flight_than_cores() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let items: Vec<usize> = (0..40).collect();
    let (done, now, most) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let r = super::sync_spread(&items, |i| {
        let in_flight = now.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(in_flight, Ordering::SeqCst);
        // A sync waits for the disk without using the CPU.
        std::thread::sleep(std::time::Duration::from_millis(5));
        now.fetch_sub(1, Ordering::SeqCst);
        done.fetch_add(1, Ordering::SeqCst);
        if *i == 7 || *i == 33 {
            Err(format!("item {i}"))
        } else {
            Ok(())
        }
    });
    assert_eq!(done.load(Ordering::SeqCst), items.len(), "all synced");
    assert_eq!(r, Err("item 7".to_string()));
    // Eight lanes sleeping 5 ms each overlap on any machine; two (one per core here) would not
    // reach this.
    assert!(
        most.load(Ordering::SeqCst) >= 4,
        "{most:?} in flight at most"
    );
    assert_eq!(super::sync_spread(&items[..1], |_| Ok::<_, ()>(())), Ok(()));
    assert_eq!(
        super::sync_spread(&[] as &[usize], |_| Ok::<_, ()>(())),
        Ok(())
    );
}

/// A file written ahead appears under its name only when published, with its content and mode,
/// and no temp file beside it; one dropped unpublished leaves nothing.
#[test]
fn a_prepared_write_appears_only_when_published() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let names = || {
        let mut n: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    let path = dir.path().join("entry.json");
    let ahead = super::prepare_write(&path, b"{}\n", Some(0o640)).expect("prepare");
    assert!(!path.exists(), "not under its name before it is published");
    let temps = names();
    assert!(
        temps.len() == 1 && temps[0].starts_with(".entry.json.patchgate-"),
        "{temps:?}"
    );
    ahead.publish().expect("publish");
    assert_eq!(std::fs::read(&path).expect("read"), b"{}\n");
    let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    assert_eq!(names(), ["entry.json"]);
    let dropped =
        super::prepare_write(&dir.path().join("other.json"), b"x", None).expect("prepare");
    drop(dropped);
    assert_eq!(
        names(),
        ["entry.json"],
        "an unpublished file leaves nothing"
    );
}
