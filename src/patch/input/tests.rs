//! Unit tests of the converters: every valid form, every error with its line, and no panic on
//! truncated or garbled input.

use super::*;
use crate::patch::{Fallback, LineWindow};

/// The converters with default options (a diff's `--strip` and `--unidiff-zero` unset).
fn parse(bytes: &[u8], name: &str, input: InputFormat) -> Result<Patch, Error> {
    super::parse(bytes, name, input, &InputOptions::default())
}

fn ok(text: &str, input: InputFormat) -> Patch {
    match parse(text.as_bytes(), "p", input) {
        Ok(p) => p,
        Err(e) => panic!("expected a patch, got {e:?}"),
    }
}

fn err(text: &str, input: InputFormat) -> (String, String, Option<usize>, Option<usize>) {
    match parse(text.as_bytes(), "p", input) {
        Ok(p) => panic!("expected an error, got {:?}", p.edits),
        Err(Error::Patch(p)) => (p.message, p.help, p.line, p.column),
        Err(e) => panic!("unexpected error kind {e:?}"),
    }
}

fn replace(e: &Edit) -> &Replace {
    match &e.op {
        Ok(Op::Replace(r)) => r,
        other => panic!("expected a replacement, got {other:?}"),
    }
}

fn invalid(e: &Edit) -> &str {
    match &e.op {
        Err(why) => why,
        other => panic!("expected an invalid edit, got {other:?}"),
    }
}

#[test]
fn detection_by_content() {
    assert_eq!(
        detect("*** Begin Patch\n*** End Patch\n"),
        InputFormat::Codex
    );
    assert_eq!(
        detect("a.py\n```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n"),
        InputFormat::Aider
    );
    assert_eq!(detect("diff --git a/x b/x\n"), InputFormat::Diff);
    assert_eq!(detect("--- a/x\n+++ b/x\n@@ -1 +1 @@\n"), InputFormat::Diff);
    assert_eq!(detect("@@ -1 +1 @@\n-a\n+b\n"), InputFormat::Diff);
    assert_eq!(
        detect("- file_path: a\n  old_string: x\n  new_string: y\n"),
        InputFormat::Yaml
    );
    // Markers inside a YAML block string are indented: still YAML.
    assert_eq!(
        detect("- file_path: a.diff\n  old_string: |\n    --- a/x\n    +++ b/x\n  new_string: y\n"),
        InputFormat::Yaml
    );
    // The first marker decides: an aider block whose text holds a diff header is aider.
    assert_eq!(
        detect("x.md\n<<<<<<< SEARCH\ndiff --git a/x b/x\n=======\n\n>>>>>>> REPLACE\n"),
        InputFormat::Aider
    );
    let p = ok(
        "- file_path: a\n  old_string: x\n  new_string: y\n",
        InputFormat::Auto,
    );
    assert_eq!(p.source.format, Format::Yaml);
}

// ---- codex ----

const CODEX: &str = "\
*** Begin Patch
*** Add File: docs/new.md
+# Title
+
+text
*** Delete File: old.txt
*** Update File: src/app.py
*** Move to: src/main.py
@@ class A:
@@     def f(self):
-        return 1
+        return 2
@@
 tail
-x = 1
+x = 2
*** End of File
*** Update File: b.py
 a
-b
+c
*** End Patch
";

#[test]
fn codex_every_section() {
    let p = ok(CODEX, InputFormat::Auto);
    assert_eq!(p.source.format, Format::Codex);
    let ops: Vec<(&str, &str)> = p
        .edits
        .iter()
        .map(|e| {
            (
                e.file_path.as_str(),
                e.op.as_ref().map_or("invalid", Op::name),
            )
        })
        .collect();
    assert_eq!(
        ops,
        vec![
            ("docs/new.md", "create"),
            ("old.txt", "delete"),
            ("src/app.py", "replace"),
            ("src/app.py", "replace"),
            ("src/app.py", "move"),
            ("b.py", "replace"),
        ]
    );
    assert_eq!(
        p.edits[0].op,
        Ok(Op::Create {
            content: "# Title\n\ntext\n".into()
        })
    );
    let r = replace(&p.edits[2]);
    assert_eq!(
        (r.old.as_str(), r.new.as_str()),
        ("        return 1\n", "        return 2\n")
    );
    let near = r.near.as_ref().expect("anchors");
    assert_eq!(near.anchors, vec!["class A:", "def f(self):"]);
    assert!(!near.at_eof);
    let origin = p.edits[2].origin.as_ref().expect("origin");
    assert_eq!(
        (origin.index, origin.header.as_str()),
        (1, "@@ class A: @@     def f(self):")
    );
    let r = replace(&p.edits[3]);
    assert_eq!(
        (r.old.as_str(), r.new.as_str()),
        ("tail\nx = 1\n", "tail\nx = 2\n")
    );
    assert!(
        r.near
            .as_ref()
            .is_some_and(|n| n.at_eof && n.anchors.is_empty())
    );
    assert_eq!(
        p.edits[4].op,
        Ok(Op::Move {
            to: "src/main.py".into(),
            replace: None
        })
    );
    // A first chunk without `@@` is named by its section header, and has no hint.
    assert_eq!(
        p.edits[5]
            .origin
            .as_ref()
            .map(|o| (o.index, o.header.as_str())),
        Some((3, "*** Update File: b.py"))
    );
    assert!(replace(&p.edits[5]).near.is_none());
    assert_eq!(
        p.edits.iter().map(|e| e.index).collect::<Vec<_>>(),
        (0..6).collect::<Vec<_>>()
    );
}

#[test]
fn codex_details() {
    // Heredoc lines around the envelope, CRLF lines, an empty context line, a pure addition.
    let p = ok(
        "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n one\r\n\r\n-two\r\n+2\r\n@@\r\n+appended\r\n*** End Patch\r\nEOF\r\n",
        InputFormat::Codex,
    );
    let r = replace(&p.edits[0]);
    assert_eq!(r.old, "one\r\n\r\ntwo\r\n");
    assert_eq!(r.new, "one\r\n\r\n2\r\n");
    assert_eq!(
        p.edits[1].op,
        Ok(Op::Append {
            text: "appended\r\n".into(),
            create: false,
        })
    );
    // A move alone is a move; a chunk with only `+` lines under an anchor cannot be placed.
    let p = ok(
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Update File: c\n@@ def f():\n+x\n*** End Patch\n",
        InputFormat::Codex,
    );
    assert_eq!(p.edits[0].op.as_ref().map(Op::name), Ok("move"));
    assert!(invalid(&p.edits[1]).contains("only adds lines"));
    // Context only: an invalid edit, in its place.
    let p = ok(
        "*** Begin Patch\n*** Update File: a\n@@\n same\n*** End Patch\n",
        InputFormat::Codex,
    );
    assert!(invalid(&p.edits[0]).contains("changes nothing"));
    // An empty Add File makes an empty file.
    let p = ok(
        "*** Begin Patch\n*** Add File: e\n*** End Patch\n",
        InputFormat::Codex,
    );
    assert_eq!(
        p.edits[0].op,
        Ok(Op::Create {
            content: String::new()
        })
    );
}

#[test]
fn codex_errors_have_their_line() {
    let cases: &[(&str, &str, usize)] = &[
        ("hello\n", "no `*** Begin Patch`", 1),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n",
            "no `*** End Patch`",
            1,
        ),
        (
            "*** Begin Patch\n+x\n*** End Patch\n",
            "hunk line outside",
            2,
        ),
        (
            "*** Begin Patch\nwhat\n*** End Patch\n",
            "unexpected line",
            2,
        ),
        (
            "*** Begin Patch\n*** Update File: a\n*** End Patch\n",
            "changes nothing",
            2,
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n?z\n*** End Patch\n",
            "unexpected line in a chunk",
            6,
        ),
        (
            "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End of File\n-z\n*** End Patch\n",
            "expected `@@`",
            6,
        ),
        (
            "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch\n",
            "every line starts with `+`",
            4,
        ),
        (
            "*** Begin Patch\n*** Delete File:  \n*** End Patch\n",
            "path is missing",
            2,
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@ f\n*** End Patch\n",
            "empty chunk",
            3,
        ),
        ("\n\n", "empty", 1),
        (
            "Here:\n*** Begin Patch\n\n*** End Patch\n",
            "changes nothing",
            2,
        ),
    ];
    for (text, want, line) in cases {
        let (msg, help, l, col) = err(text, InputFormat::Codex);
        assert!(msg.contains(want), "{text:?}: {msg}");
        assert_eq!(l, Some(*line), "{text:?}: {msg}");
        assert!(col.is_some() && !help.is_empty(), "{text:?}");
    }
}

#[test]
fn codex_marker_lines_are_trimmed() {
    // An indented section line, an indented `*** Begin Patch`, trailing spaces after the markers.
    for text in [
        "*** Begin Patch\n  *** Update File: foo.txt\n@@\n-old\n+new\n*** End Patch\n",
        " *** Begin Patch\n*** Update File: foo.txt\n@@\n-old\n+new\n*** End Patch \n",
        "*** Begin Patch \n*** Update File: foo.txt\n@@\n-old\n+new\n *** End Patch\n",
        "*** Begin Patch\n*** Update File: foo.txt\n@@ \n-old\n+new\n*** End of File \n*** End Patch\n",
    ] {
        let p = ok(text, InputFormat::Auto);
        assert_eq!(p.source.format, Format::Codex, "{text:?}");
        assert_eq!(p.edits.len(), 1, "{text:?}");
        assert_eq!(p.edits[0].file_path, "foo.txt");
        let r = replace(&p.edits[0]);
        assert_eq!((r.old.as_str(), r.new.as_str()), ("old\n", "new\n"));
        assert!(r.whole_lines);
    }
    // An `*** End Patch` at the start of a line ends the patch before an indented one, which is
    // then a context line.
    let p = ok(
        "*** Begin Patch\n*** Update File: f\n@@\n *** End Patch\n-x\n+y\n*** End Patch\n",
        InputFormat::Codex,
    );
    assert_eq!(replace(&p.edits[0]).old, "*** End Patch\nx\n");
}

#[test]
fn codex_blank_lines_between_chunks_and_pure_additions() {
    let p = ok(
        "*** Begin Patch\n*** Update File: f\n\n@@\n-a\n+b\n\n@@\n-c\n+d\n*** End of File\n\n*** Update File: g\n@@\n+tail\n*** End of File\n*** Update File: h\n@@ def f():\n+x\n*** End of File\n*** End Patch\n",
        InputFormat::Codex,
    );
    assert_eq!(p.edits.len(), 4);
    // The blank line before the next `@@` is the first chunk's trailing context, which codex
    // drops when the file does not have it.
    let r = replace(&p.edits[0]);
    assert_eq!((r.old.as_str(), r.new.as_str()), ("a\n\n", "b\n\n"));
    assert_eq!(
        r.fallbacks,
        vec![Fallback::Without {
            old: "a\n".into(),
            new: "b\n".into(),
            what: "the chunk's trailing blank line".into(),
        }]
    );
    let r = replace(&p.edits[1]);
    assert!(r.fallbacks.is_empty());
    assert!(r.near.as_ref().is_some_and(|n| n.at_eof));
    // `+` lines with `*** End of File` append, with or without an anchor.
    for e in &p.edits[2..] {
        assert_eq!(
            e.op,
            Ok(Op::Append {
                text: if e.file_path == "g" { "tail\n" } else { "x\n" }.into(),
                create: false,
            })
        );
    }
}

#[test]
fn codex_add_and_move_replace_existing_files() {
    let p = ok(
        "*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: b\n*** Update File: c\n*** Move to: d\n@@\n-1\n+2\n*** End Patch\n",
        InputFormat::Codex,
    );
    let flags: Vec<(&str, &str, bool)> = p
        .edits
        .iter()
        .map(|e| {
            (
                e.file_path.as_str(),
                e.op.as_ref().map_or("invalid", Op::name),
                e.replace_existing,
            )
        })
        .collect();
    assert_eq!(
        flags,
        vec![
            ("a", "create", true),
            ("b", "delete", false),
            ("c", "replace", false),
            ("c", "move", true),
        ]
    );
}

#[test]
fn codex_cd_in_the_heredoc_line_moves_every_path() {
    let body = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-1\n+2\n*** Delete File: /abs/c.txt\n*** End Patch\nEOF\n";
    let paths = |text: &str| -> Vec<(String, Option<String>)> {
        ok(text, InputFormat::Codex)
            .edits
            .iter()
            .map(|e| {
                let to = match &e.op {
                    Ok(Op::Move { to, .. }) => Some(to.clone()),
                    _ => None,
                };
                (e.file_path.clone(), to)
            })
            .collect()
    };
    let sub = |d: &str| {
        vec![
            (format!("{d}/new.txt"), None),
            (format!("{d}/a.txt"), None),
            (format!("{d}/a.txt"), Some(format!("{d}/b.txt"))),
            ("/abs/c.txt".to_string(), None),
        ]
    };
    assert_eq!(
        paths(&format!("cd pkg/sub && apply_patch <<'EOF'\n{body}")),
        sub("pkg/sub")
    );
    assert_eq!(
        paths(&format!(
            "Some prose.\n\ncd 'my dir/' && applypatch <<\"EOF\"\n{body}"
        )),
        sub("my dir")
    );
    // No `cd`, or another command before it: the paths stay as written.
    for pre in [
        "apply_patch <<'EOF'\n",
        "Then run\n\napplypatch <<-PATCH\n",
        "cd into the folder, then:\n",
    ] {
        let got = paths(&format!("{pre}{body}"));
        assert_eq!(got[0].0, "new.txt", "{pre:?}");
    }
    // A `cd` codex does not read that way is refused, not ignored.
    for (pre, line) in [
        ("cd $HOME/x && apply_patch <<'EOF'\n", 1),
        ("cd a; apply_patch <<'EOF'\n", 1),
        ("cd a && cd b && apply_patch <<'EOF'\n", 1),
        ("cd ~/x && apply_patch <<'EOF'\n", 1),
        ("cd sub\napply_patch <<'EOF'\n", 1),
        ("set -e\npushd sub\napply_patch <<'EOF'\n", 2),
        // Commands codex hands to a shell instead of reading them as `apply_patch`.
        ("echo start && apply_patch <<'EOF'\n", 1),
        ("apply_patch foo <<'EOF'\n", 1),
        ("cd a b && apply_patch <<'EOF'\n", 1),
    ] {
        let (msg, help, l, _) = err(&format!("{pre}{body}"), InputFormat::Codex);
        let shown = pre.lines().nth(line - 1).unwrap_or_default().trim();
        assert!(msg.contains(shown), "{pre:?}: {msg}");
        assert!(help.contains("cd DIR && apply_patch"), "{pre:?}: {help}");
        assert_eq!(l, Some(line), "{pre:?}: {msg}");
    }
    // The heredoc closed by more than its delimiter.
    let (msg, _, l, _) = err(
        &format!(
            "cd pkg && apply_patch <<'EOF'\n{}",
            body.replace("EOF\n", "EOF && echo done\n")
        ),
        InputFormat::Codex,
    );
    assert!(msg.contains("EOF && echo done"), "{msg}");
    assert_eq!(l, Some(12));
}

// ---- aider ----

#[test]
fn aider_blocks() {
    let text = "Here is the change:\n\nsrc/a.py\n```python\n<<<<<<< SEARCH\ndef f():\n    return 1\n=======\ndef f():\n    return 2\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nX = 1\n=======\nX = 2\n>>>>>>> REPLACE\n```\n\n**new.txt**:\n```\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n```\n\n`src/a.py`\n<<<<<<< SEARCH\nY = 1\n=======\n>>>>>>> REPLACE\n";
    let p = ok(text, InputFormat::Auto);
    assert_eq!(p.source.format, Format::Aider);
    let paths: Vec<&str> = p.edits.iter().map(|e| e.file_path.as_str()).collect();
    assert_eq!(paths, vec!["src/a.py", "src/a.py", "new.txt", "src/a.py"]);
    let r = replace(&p.edits[0]);
    assert_eq!(r.old, "def f():\n    return 1\n");
    assert_eq!(r.new, "def f():\n    return 2\n");
    assert!(r.near.is_none());
    assert_eq!(
        p.edits[2].op,
        Ok(Op::Append {
            text: "hello\n".into(),
            create: true,
        })
    );
    assert_eq!(replace(&p.edits[3]).new, "");
    assert!(p.edits.iter().all(|e| !e.replace_existing));
    let o = p.edits[1].origin.as_ref().expect("origin");
    assert_eq!(
        (o.index, o.header.as_str()),
        (2, "<<<<<<< SEARCH at line 12")
    );
    // A shell block is commands, not edits (as aider reads it), unless a block opens it.
    let p = ok(
        "Run:\n```bash\necho\necho\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n\na.sh\n```sh\n<<<<<<< SEARCH\nu\n=======\nv\n>>>>>>> REPLACE\n```\n",
        InputFormat::Aider,
    );
    assert_eq!(p.edits.len(), 1);
    assert_eq!(replace(&p.edits[0]).old, "u\n");
    // Every converted block matches whole lines.
    assert!(p.edits.iter().all(|e| match &e.op {
        Ok(Op::Replace(r)) => r.whole_lines,
        _ => true,
    }));
}

#[test]
fn aider_errors_have_their_line() {
    let cases: &[(&str, &str, usize)] = &[
        ("a\n<<<<<<< SEARCH\nx\n", "never closed (no `=======`", 2),
        (
            "a\n<<<<<<< SEARCH\nx\n=======\ny\n",
            "never closed (no `>>>>>>> REPLACE`",
            2,
        ),
        ("a\n=======\n", "outside a SEARCH/REPLACE block", 2),
        ("a\n>>>>>>> REPLACE\n", "outside", 2),
        (
            "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
            "no file path",
            1,
        ),
        ("just prose\n", "no SEARCH/REPLACE block", 1),
        (
            "a\n<<<<<<< SEARCH\nx\n<<<<<<< SEARCH\n",
            "inside the block opened at line 2",
            4,
        ),
        (
            "a\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n",
            "before `=======`",
            4,
        ),
    ];
    for (text, want, line) in cases {
        let (msg, help, l, _) = err(text, InputFormat::Aider);
        assert!(msg.contains(want), "{text:?}: {msg}");
        assert_eq!(l, Some(*line), "{text:?}: {msg}");
        assert!(!help.is_empty());
    }
}

#[test]
fn aider_markers_of_five_to_nine_characters() {
    let p = ok(
        "a.txt\n<<<<< SEARCH\nx\n=====\ny\n>>>>> REPLACE\n\nb.txt\n  <<<<<<<<< SEARCH>\nu\n=========\nv\n>>>>>>>>> REPLACE\n",
        InputFormat::Auto,
    );
    assert_eq!(p.source.format, Format::Aider);
    let got: Vec<(&str, &str, &str)> = p
        .edits
        .iter()
        .map(|e| {
            let r = replace(e);
            (e.file_path.as_str(), r.old.as_str(), r.new.as_str())
        })
        .collect();
    assert_eq!(got, vec![("a.txt", "x\n", "y\n"), ("b.txt", "u\n", "v\n")]);
    // Four or ten characters are not markers.
    let (msg, ..) = err(
        "a.txt\n<<<< SEARCH\nx\n====\ny\n>>>> REPLACE\n",
        InputFormat::Aider,
    );
    assert!(msg.contains("no SEARCH/REPLACE block"), "{msg}");
    let (msg, ..) = err(
        "a.txt\n<<<<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
        InputFormat::Aider,
    );
    assert!(msg.contains("outside"), "{msg}");
}

#[test]
fn aider_path_lines_as_aider_reads_them() {
    let paths = |text: &str| -> Vec<String> {
        ok(text, InputFormat::Aider)
            .edits
            .iter()
            .map(|e| e.file_path.clone())
            .collect()
    };
    let block = "<<<<<<< SEARCH\none\n=======\ntwo\n>>>>>>> REPLACE\n";
    // A filename fenced on its own line above the block's fence.
    assert_eq!(
        paths(&format!(
            "Here's the change:\n\n ```python\nfoo.txt\n```\n```python\n{block}```\n"
        )),
        vec!["foo.txt"]
    );
    // The fence's info string, when it names a file; a path inside the fence.
    assert_eq!(
        paths(&format!("```src/x.py\n{block}```\n")),
        vec!["src/x.py"]
    );
    assert_eq!(
        paths(&format!("```text\nfoo.txt\n{block}```\n")),
        vec!["foo.txt"]
    );
    // Decorations stripped.
    for line in ["# src/a.py:", "**src/a.py**", "`src/a.py`", "src/a.py:"] {
        assert_eq!(
            paths(&format!("{line}\n{block}")),
            vec!["src/a.py"],
            "{line}"
        );
    }
    // `...` between two blocks is not a path: the second block reuses the first one's.
    assert_eq!(
        paths(&format!("```text\nfoo.txt\n{block}\n...\n\n{block}```\n")),
        vec!["foo.txt", "foo.txt"]
    );
    // A block right after another, in one fence, reuses its path.
    assert_eq!(
        paths(&format!("a.py\n```\n{block}{block}```\n")),
        vec!["a.py", "a.py"]
    );
}

#[test]
fn aider_path_lines_patchgate_refuses() {
    let block = "<<<<<<< SEARCH\none\n=======\ntwo\n>>>>>>> REPLACE\n";
    // Prose on the path line.
    let (msg, _, line, _) = err(
        &format!("a.py\n{block}Then update it:\n{block}"),
        InputFormat::Aider,
    );
    assert!(msg.contains("prose"), "{msg}");
    assert_eq!(line, Some(7));
    // A path that is not right before the block: aider would edit the previous file.
    let (msg, _, line, _) = err(
        &format!("a.py\n{block}\nb.py\n\n```python\n{block}```\n"),
        InputFormat::Aider,
    );
    assert!(msg.contains("would edit a.py"), "{msg}");
    assert_eq!(line, Some(8));
    // No path at all before the first block.
    let (msg, ..) = err(&format!("Here:\n\n{block}"), InputFormat::Aider);
    assert!(msg.contains("no file path"), "{msg}");
}

#[test]
fn aider_blank_search_divider_in_replace_and_fallbacks() {
    // A blank SEARCH appends, creating a missing file.
    let p = ok(
        "log.txt\n<<<<<<< SEARCH\n\n=======\nmore\n>>>>>>> REPLACE\n",
        InputFormat::Aider,
    );
    assert_eq!(
        p.edits[0].op,
        Ok(Op::Append {
            text: "more\n".into(),
            create: true
        })
    );
    // A second divider ends REPLACE, as aider reads it, when nothing else follows.
    let p = ok(
        "a.txt\n<<<<<<< SEARCH\nx\n=======\ny\n=======\n\nDone.\n",
        InputFormat::Aider,
    );
    assert_eq!(replace(&p.edits[0]).new, "y\n");
    // Followed by `>>>>>>> REPLACE`: what REPLACE holds is a guess.
    let (msg, _, line, _) = err(
        "a.rst\n<<<<<<< SEARCH\nTitle\n=======\nTitle\n=======\nText\n>>>>>>> REPLACE\n",
        InputFormat::Aider,
    );
    assert!(msg.contains("inside REPLACE"), "{msg}");
    assert_eq!(line, Some(6));
    // Aider's readings of a SEARCH not found as it is: without a leading blank line, `...`.
    let p = ok(
        "a.py\n<<<<<<< SEARCH\n\ndef f():\n    ...\n    return 1\n=======\n\ndef f():\n    ...\n    return 2\n>>>>>>> REPLACE\n",
        InputFormat::Aider,
    );
    let r = replace(&p.edits[0]);
    assert_eq!(r.old, "\ndef f():\n    ...\n    return 1\n");
    assert_eq!(
        r.fallbacks,
        vec![
            Fallback::Without {
                old: "def f():\n    ...\n    return 1\n".into(),
                new: "def f():\n    ...\n    return 2\n".into(),
                what: "SEARCH's leading blank line".into(),
            },
            Fallback::Pieces(Ok(vec![
                ("\ndef f():\n".into(), "\ndef f():\n".into()),
                ("    return 1\n".into(), "    return 2\n".into()),
            ])),
        ]
    );
    // SEARCH and REPLACE wrapped in the file's name and a fence, as aider strips them.
    let p = ok(
        "notes.md\n<<<<<<< SEARCH\nnotes.md\n```\nold\n```\n=======\n```\nnew\n```\n>>>>>>> REPLACE\n",
        InputFormat::Aider,
    );
    assert_eq!(
        replace(&p.edits[0]).fallbacks,
        vec![Fallback::Without {
            old: "old\n".into(),
            new: "new\n".into(),
            what: "the file name line and ``` fence around SEARCH and REPLACE".into(),
        }]
    );
    // `...` that cannot be elisions: told on a miss.
    for (search, replace_text) in [("a\n...\nb\n", "a\nb\n"), ("...\nb\n", "x\n...\nb\n")] {
        let p = ok(
            &format!("a.py\n<<<<<<< SEARCH\n{search}=======\n{replace_text}>>>>>>> REPLACE\n"),
            InputFormat::Aider,
        );
        let r = replace(&p.edits[0]);
        assert!(
            matches!(r.fallbacks.as_slice(), [Fallback::Pieces(Err(_))]),
            "{search:?}: {:?}",
            r.fallbacks
        );
    }
}

// ---- diff ----

const DIFF: &str = "\
From 1234 Mon Sep 17 00:00:00 2001
Subject: [PATCH 1/2] Rename and fix
---
diff --git a/src/a.rs b/src/a.rs
index 1111111..2222222 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,3 +1,3 @@ fn main() {
 one
-two
+2
 three
@@ -10,2 +10,3 @@ fn g
 ten
+ten and a half
 eleven
\\ No newline at end of file
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+--- not a header
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old name.py b/new name.py
similarity index 90%
rename from old name.py
rename to new name.py
--- a/old name.py
+++ b/new name.py
@@ -2 +2 @@
-x = 1
+x = 2
diff --git a/moved.txt b/elsewhere/moved.txt
similarity index 100%
rename from moved.txt
rename to elsewhere/moved.txt
diff --git a/empty b/empty
new file mode 100644
index 0000000..e69de29
-- 
2.43.0
";

#[test]
fn diff_every_kind_of_file() {
    let p = ok(DIFF, InputFormat::Auto);
    assert_eq!(p.source.format, Format::Diff);
    assert_eq!(p.message.as_deref(), Some("Rename and fix"));
    let ops: Vec<(&str, &str)> = p
        .edits
        .iter()
        .map(|e| {
            (
                e.file_path.as_str(),
                e.op.as_ref().map_or("invalid", Op::name),
            )
        })
        .collect();
    assert_eq!(
        ops,
        vec![
            ("src/a.rs", "replace"),
            ("src/a.rs", "replace"),
            ("new.txt", "create"),
            ("gone.txt", "replace"),
            ("gone.txt", "delete"),
            ("old name.py", "replace"),
            ("old name.py", "move"),
            ("moved.txt", "move"),
            ("empty", "create"),
        ]
    );
    let r = replace(&p.edits[0]);
    assert_eq!(
        (r.old.as_str(), r.new.as_str()),
        ("one\ntwo\nthree\n", "one\n2\nthree\n")
    );
    assert_eq!(r.near.as_ref().and_then(|n| n.line), Some(1));
    let r = replace(&p.edits[1]);
    assert_eq!(r.old, "ten\neleven");
    assert_eq!(r.new, "ten\nten and a half\neleven");
    assert_eq!(r.near.as_ref().and_then(|n| n.line), Some(10));
    assert_eq!(
        p.edits[1]
            .origin
            .as_ref()
            .map(|o| (o.index, o.header.as_str())),
        Some((2, "@@ -10,2 +10,3 @@ fn g"))
    );
    assert_eq!(
        p.edits[2].op,
        Ok(Op::Create {
            content: "hello\n--- not a header\n".into()
        })
    );
    assert_eq!(replace(&p.edits[3]).new, "");
    assert_eq!(
        p.edits[6].op,
        Ok(Op::Move {
            to: "new name.py".into(),
            replace: None
        })
    );
    assert_eq!(
        p.edits[8].op,
        Ok(Op::Create {
            content: String::new()
        })
    );
}

#[test]
fn diff_plain_quoted_crlf_and_context_free_hunks() {
    // `diff -u` output: timestamps after a tab, no `diff --git` line.
    let p = ok(
        "--- a/x.txt\t2024-01-01 00:00:00\n+++ b/x.txt\t2024-01-02 00:00:00\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
        InputFormat::Diff,
    );
    assert_eq!(p.edits[0].file_path, "x.txt");
    // A quoted name with octal escapes.
    let p = ok(
        "diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\n--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n@@ -1 +1 @@\n-a\n+b\n",
        InputFormat::Diff,
    );
    assert_eq!(p.edits[0].file_path, "café.txt");
    // A CRLF file's diff keeps the `\r` in the text (the matcher folds it).
    let p = ok(
        "--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+c\r\n",
        InputFormat::Diff,
    );
    assert_eq!(replace(&p.edits[0]).old, "a\r\nb\r\n");
    // Adding to line 0 fills an empty file (or creates a missing one: a traditional diff does not
    // say the file is new); elsewhere it cannot be placed without --unidiff-zero.
    let p = ok(
        "--- a/e\n+++ b/e\n@@ -0,0 +1 @@\n+first\n--- a/f\n+++ b/f\n@@ -3,0 +4 @@\n+fourth\n",
        InputFormat::Diff,
    );
    match &p.edits[0].op {
        Ok(Op::Insert(i)) => assert_eq!(
            (i.line, i.text.as_str(), i.only_empty, i.create),
            (1, "first\n", true, true)
        ),
        other => panic!("{other:?}"),
    }
    assert!(invalid(&p.edits[1]).contains("without any context"));
    assert!(invalid(&p.edits[1]).contains("--unidiff-zero"));
    // A pure deletion with -U0: placed at the line after the new-side start.
    let p = ok(
        "--- a/g\n+++ b/g\n@@ -5,2 +4,0 @@\n-x\n-y\n",
        InputFormat::Diff,
    );
    let r = replace(&p.edits[0]);
    assert_eq!(
        (r.new.as_str(), r.near.as_ref().and_then(|n| n.line)),
        ("", Some(5))
    );
    assert_eq!(r.window, None::<LineWindow>);
}

#[test]
fn diff_modes_symlinks_and_copies_become_their_operations() {
    let p = ok(
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
        InputFormat::Diff,
    );
    assert_eq!(p.edits[0].op, Ok(Op::Mode { executable: true }));
    // A new executable: created, then made executable.
    let p = ok(
        "diff --git a/t.sh b/t.sh\nnew file mode 100755\n--- /dev/null\n+++ b/t.sh\n@@ -0,0 +1 @@\n+echo\n",
        InputFormat::Diff,
    );
    assert_eq!(
        p.edits.iter().map(|e| e.op.clone()).collect::<Vec<_>>(),
        vec![
            Ok(Op::Create {
                content: "echo\n".into()
            }),
            Ok(Op::Mode { executable: true })
        ]
    );
    let p = ok(
        "diff --git a/a b/c\nsimilarity index 100%\ncopy from a\ncopy to c\n",
        InputFormat::Diff,
    );
    assert_eq!(p.edits[0].file_path, "a");
    assert_eq!(p.edits[0].op, Ok(Op::Copy { to: "c".into() }));
    // A mode change with content: the hunk, then the mode.
    let p = ok(
        "diff --git a/r b/r\nold mode 100644\nnew mode 100755\n--- a/r\n+++ b/r\n@@ -1 +1 @@\n-a\n+b\n",
        InputFormat::Diff,
    );
    assert_eq!(p.edits.len(), 2);
    assert_eq!(replace(&p.edits[0]).new, "b\n");
    assert_eq!(p.edits[1].op, Ok(Op::Mode { executable: true }));
    // A symlink: its target is the hunk's one line without a newline.
    let p = ok(
        "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+x.txt\n\\ No newline at end of file\n",
        InputFormat::Diff,
    );
    assert_eq!(
        p.edits[0].op,
        Ok(Op::Link {
            old: None,
            new: Some("x.txt".into())
        })
    );
    let p = ok(
        "diff --git a/l b/l\nindex 1..2 120000\n--- a/l\n+++ b/l\n@@ -1 +1 @@\n-x.txt\n\\ No newline at end of file\n+y.txt\n\\ No newline at end of file\n",
        InputFormat::Diff,
    );
    assert_eq!(
        p.edits[0].op,
        Ok(Op::Link {
            old: Some("x.txt".into()),
            new: Some("y.txt".into())
        })
    );
    // A symlink target with a newline, a submodule, a file turned into a link: refused in place.
    let p = ok(
        "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+x.txt\n",
        InputFormat::Diff,
    );
    assert!(invalid(&p.edits[0]).contains("newline"));
    let p = ok(
        "diff --git a/m b/m\nindex 1..2 160000\n--- a/m\n+++ b/m\n@@ -1 +1 @@\n-Subproject commit 1\n+Subproject commit 2\n",
        InputFormat::Diff,
    );
    assert!(invalid(&p.edits[0]).contains("submodule"));
    let p = ok(
        "diff --git a/k b/k\nold mode 100644\nnew mode 120000\n",
        InputFormat::Diff,
    );
    assert!(invalid(&p.edits[0]).contains("symlink"));
}

#[test]
fn diff_strip_levels_and_unidiff_zero() {
    let with = |text: &str, strip: Option<usize>, unidiff_zero: bool| {
        super::parse(
            text.as_bytes(),
            "p",
            InputFormat::Diff,
            &InputOptions {
                strip,
                unidiff_zero,
                ..InputOptions::default()
            },
        )
        .expect("parses")
    };
    let text = "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(with(text, None, false).edits[0].file_path, "src/x.rs");
    assert_eq!(with(text, Some(2), false).edits[0].file_path, "x.rs");
    // -p0: of `a/src/x.rs` and `b/src/x.rs`, git takes the `+++` name.
    assert_eq!(with(text, Some(0), false).edits[0].file_path, "b/src/x.rs");
    // `--no-prefix`: the `diff --git` line names the same text twice, nothing is stripped.
    let text = "diff --git src/x.rs src/x.rs\n--- src/x.rs\n+++ src/x.rs\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(with(text, None, false).edits[0].file_path, "src/x.rs");
    // Mnemonic prefixes (`diff.mnemonicPrefix`): one component, as git strips.
    let text = "diff --git i/x.rs w/x.rs\n--- i/x.rs\n+++ w/x.rs\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(with(text, None, false).edits[0].file_path, "x.rs");
    // Too few components for the strip level: an error that names --strip.
    let e = super::parse(
        b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
        "p",
        InputFormat::Diff,
        &InputOptions {
            strip: Some(3),
            ..InputOptions::default()
        },
    )
    .expect_err("no name left");
    assert!(format!("{e}").contains("--strip 3"), "{e}");
    // --unidiff-zero: a context-free addition is placed by its new-side line.
    let text = "--- a/f\n+++ b/f\n@@ -3,0 +4,2 @@\n+four\n+five\n";
    match &with(text, None, true).edits[0].op {
        Ok(Op::Insert(i)) => assert_eq!(
            (i.line, i.text.as_str(), i.only_empty),
            (4, "four\nfive\n", false)
        ),
        other => panic!("{other:?}"),
    }
    // ... and hunks with context lose git's start/end anchoring with it.
    let text = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
    let r = replace(&with(text, None, false).edits[0]).clone();
    let near = r.near.expect("near");
    assert!(near.at_start && near.at_eof);
    let r = replace(&with(text, None, true).edits[0]).clone();
    let near = r.near.expect("near");
    assert!(!near.at_start && !near.at_eof);
    // The options belong to diffs.
    let e = super::parse(
        b"edits: []\n",
        "p",
        InputFormat::Auto,
        &InputOptions {
            strip: Some(1),
            ..InputOptions::default()
        },
    )
    .expect_err("not a diff");
    assert!(format!("{e}").contains("--strip"), "{e}");
}

#[test]
fn diff_binary_patches_carry_their_blob_ids() {
    let text = "diff --git a/bin.dat b/bin.dat\n\
index b43761b27df02a0c6c305120d37445368d1ac5e1..47651a430d995725cace39821bf216b716849a24 100644\n\
GIT binary patch\n\
literal 11\n\
ScmZQzWODNKa}0|7&j0`mpaRGM\n\
\n\
literal 10\n\
RcmZQzWJ=1+ODwAV4*(1}1Bd_s\n\
\n";
    let p = ok(text, InputFormat::Diff);
    assert_eq!(p.edits.len(), 1);
    match &p.edits[0].op {
        Ok(Op::Binary(b)) => {
            assert_eq!(
                b.old_id.as_deref(),
                Some("b43761b27df02a0c6c305120d37445368d1ac5e1")
            );
            assert_eq!(
                b.data,
                crate::patch::BinaryData::Literal(b"\x00\x01\x02BINARY\xff\x00".to_vec())
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.edits[0].origin.as_ref().map(|h| h.index), Some(1));
    // Abbreviated ids cannot be checked: refused in place.
    let short = text.replace(
        "b43761b27df02a0c6c305120d37445368d1ac5e1..47651a430d995725cace39821bf216b716849a24",
        "b43761b..47651a4",
    );
    assert!(invalid(&ok(&short, InputFormat::Diff).edits[0]).contains("full `index"));
}

#[test]
fn diff_format_patch_message_with_bullets_and_separators_is_prose() {
    // A squash-merge message: bullet lines and GitHub's `---------` separator before the diff.
    let text = "From 1234 Mon Sep 17 00:00:00 2001\n\
Subject: [PATCH] change f\n\
\n\
- replace a with b\n\
+ mention it\n\
---------\n\
Co-authored-by: someone\n\
---\n\
 f.txt | 2 +-\n\
\n\
diff --git a/f.txt b/f.txt\n\
--- a/f.txt\n\
+++ b/f.txt\n\
@@ -1 +1 @@\n\
-a\n\
+b\n\
-- \n\
2.47.3\n";
    let p = ok(text, InputFormat::Auto);
    assert_eq!(p.source.format, Format::Diff);
    assert_eq!(p.message.as_deref(), Some("change f"));
    assert_eq!(p.edits.len(), 1);
    assert_eq!(replace(&p.edits[0]).old, "a\n");
    assert_eq!(replace(&p.edits[0]).new, "b\n");
}

#[test]
fn diff_errors_have_their_line() {
    let cases: &[(&str, &str, usize)] = &[
        ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n", "cut off", 3),
        (
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n",
            "outside a hunk",
            6,
        ),
        ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n-b\n+c\n", "more old", 5),
        (
            "--- a/x\n+++ b/x\n@@ -x +1 @@\n-a\n+b\n",
            "malformed hunk header",
            3,
        ),
        ("--- a/x\n+++ b/x\n@@ -1 +1\n-a\n+b\n", "no closing", 3),
        (
            "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n?b\n",
            "unexpected line in the hunk",
            5,
        ),
        ("@@ -1 +1 @@\n-a\n+b\n", "without a file header", 1),
        ("+a\n", "no file diff", 1),
        (
            "diff --git a/x b/x\nindex 1..2\n--- a/x\n",
            "not followed by `+++ `",
            3,
        ),
        (
            "diff --git a/x b/x\n--- a/x\n+++ b/x\nnope\n",
            "expected a hunk",
            4,
        ),
        (
            "diff --git a/x b/x\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
            "inconsistent names",
            3,
        ),
        (
            "diff --git a/x b/x\nnew file mode 100644\ndeleted file mode 100644\n",
            "inconsistent header lines",
            3,
        ),
        (
            "diff --git a/x b/x\nold mode 10x644\n",
            "not a file mode",
            2,
        ),
        (
            "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n\r\n-b\r\n+c\r\n",
            "carriage return",
            4,
        ),
        (
            "diff --git a/b b/b\nindex 1..2\nGIT binary patch\nliteral 3\nzzzzzz\n\n",
            "corrupt binary patch",
            5,
        ),
        (
            "diff --git a/i.png b/i.png\nindex 1..2 100644\nBinary files a/i.png and b/i.png differ\n",
            "binary",
            3,
        ),
        (
            "diff --git a/i.png b/i.png\nGIT binary patch\nliteral 3\n",
            "binary",
            3,
        ),
        ("hello there\n", "no file diff", 1),
    ];
    for (text, want, line) in cases {
        let (msg, help, l, col) = err(text, InputFormat::Diff);
        assert!(msg.contains(want), "{text:?}: {msg}");
        assert_eq!(l, Some(*line), "{text:?}: {msg}");
        assert!(col.is_some() && !help.is_empty(), "{text:?}");
    }
    // The column points into the header.
    let (_, _, _, col) = err("--- a/x\n+++ b/x\n@@ -1 +y @@\n", InputFormat::Diff);
    assert_eq!(col, Some(8));
}

#[test]
fn bad_bytes_and_nul_are_refused() {
    for input in [InputFormat::Codex, InputFormat::Aider, InputFormat::Diff] {
        match parse(b"*** Begin Patch\n\xff\n", "p", input) {
            Err(Error::Patch(p)) => assert_eq!(p.line, Some(2)),
            other => panic!("{other:?}"),
        }
        let (msg, ..) = err("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\0\n+b\n", input);
        assert!(msg.contains("NUL"), "{msg}");
    }
}

/// Truncated and garbled patches of every format: an error or a patch, never a panic.
#[test]
fn no_panic_on_truncated_or_garbled_input() {
    let aider = "a.py\n```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n";
    let samples = [CODEX, DIFF, aider];
    let inputs = [
        InputFormat::Auto,
        InputFormat::Codex,
        InputFormat::Aider,
        InputFormat::Diff,
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let pieces: &[&[u8]] = &[
        b"\n",
        b"\r",
        b"@@",
        b"@@ -",
        b"+",
        b"-",
        b" ",
        b"\\",
        b"*** ",
        b"=======",
        b"\"",
        b",",
        b"\xff",
        b"\xc3",
        b"0",
        b"9999999999999999999999",
        b"--- ",
        b"+++ ",
        b"<<<<<<< SEARCH\n",
    ];
    for sample in samples {
        let bytes = sample.as_bytes();
        for cut in 0..=bytes.len() {
            for input in inputs {
                let _ = parse(&bytes[..cut], "p", input);
            }
        }
        for _ in 0..400 {
            let mut b = bytes.to_vec();
            for _ in 0..1 + rand() % 4 {
                let at = (rand() as usize) % (b.len() + 1);
                match rand() % 3 {
                    0 if at < b.len() => {
                        b.remove(at);
                    }
                    1 => {
                        let p = pieces[(rand() as usize) % pieces.len()];
                        b.splice(at..at, p.iter().copied());
                    }
                    _ => b.truncate(at),
                }
            }
            for input in inputs {
                let _ = parse(&b, "p", input);
            }
        }
    }
}

/// `git apply` reads a traditional diff's names from the folder it runs in and a `diff --git`'s
/// from the root; `--directory` puts both under a folder.
#[test]
fn diff_names_under_the_current_folder_and_directory() {
    let names = |text: &str, directory: Option<&str>, cwd: Option<&str>| {
        let p = super::parse(
            text.as_bytes(),
            "p",
            InputFormat::Diff,
            &InputOptions {
                directory: directory.map(str::to_string),
                cwd_prefix: cwd.map(str::to_string),
                ..InputOptions::default()
            },
        )
        .expect("parses");
        p.edits
            .iter()
            .map(|e| e.file_path.clone())
            .collect::<Vec<_>>()
    };
    let traditional =
        "--- /tmp/orig/pkg/x.py\t2026-01-01\n+++ src/pkg/x.py\t2026-01-01\n@@ -1 +1 @@\n-a\n+b\n";
    let git =
        "diff --git a/pkg/x.py b/pkg/x.py\n--- a/pkg/x.py\n+++ b/pkg/x.py\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(names(traditional, None, None), ["pkg/x.py"]);
    assert_eq!(names(traditional, None, Some("src")), ["src/pkg/x.py"]);
    assert_eq!(names(traditional, None, Some("")), ["pkg/x.py"]);
    assert_eq!(names(git, None, Some("src")), ["pkg/x.py"]);
    assert_eq!(names(git, Some("lib/"), Some("src")), ["lib/pkg/x.py"]);
    assert_eq!(
        names(traditional, Some("lib"), Some("src")),
        ["src/lib/pkg/x.py"]
    );
    // An absolute ROOT is not quietly made relative: the planner decides where it lands.
    assert_eq!(names(git, Some("/etc/"), None), ["/etc/pkg/x.py"]);
    // Not a diff option for other formats.
    let codex = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n";
    let err = super::parse(
        codex.as_bytes(),
        "p",
        InputFormat::Auto,
        &InputOptions {
            directory: Some("lib".into()),
            ..InputOptions::default()
        },
    )
    .expect_err("refused");
    assert!(err.to_string().contains("--directory"), "{err}");
    // The folder the command runs in alone is not an option the user gave.
    super::parse(
        codex.as_bytes(),
        "p",
        InputFormat::Auto,
        &InputOptions {
            cwd_prefix: Some("src".into()),
            ..InputOptions::default()
        },
    )
    .expect("parses");
}
