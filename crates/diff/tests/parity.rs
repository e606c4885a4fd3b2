//! Parity with the real `git diff --check`: crafted repositories, each compared finding by
//! finding (file, line, kind). Every case also pins git's own answer, so a case that stops
//! exercising anything fails instead of passing vacuously.

mod common;

use common::{Repo, keys};
use infx_diff::WsKind::*;

#[test]
fn basic_errors_across_commits_index_and_worktree() {
    let r = Repo::new();
    r.write("a.txt", b"one\ntwo\nthree\n");
    r.write("keep.txt", b"old trailing \n");
    let base = r.commit_all("base");
    // Committed after the base.
    r.write("a.txt", b"one\ntwo \nthree\n");
    r.commit_all("second");
    // Staged.
    r.write("staged.txt", b"  \tspace before tab\nok\n");
    r.git(&["add", "staged.txt"]);
    // Unstaged, on top of the commit.
    r.write("a.txt", b"one\ntwo \nthree\nfour\t\n\n\n");
    // Untracked: git does not look at it.
    r.write("untracked.txt", b"x \n");
    let git = r.assert_parity(Some(&base));
    assert_eq!(
        git,
        keys(&[
            ("a.txt", 2, TrailingWhitespace),
            ("a.txt", 4, TrailingWhitespace),
            ("a.txt", 5, BlankAtEof),
            ("staged.txt", 1, SpaceBeforeTab),
        ])
    );
}

#[test]
fn conflict_markers_all_kinds_and_sizes() {
    let r = Repo::new();
    r.write("m.txt", b"start\n");
    r.commit_all("base");
    r.write(
        "m.txt",
        b"start\n<<<<<<< HEAD\nours\n||||||| base\n=======\ntheirs\n>>>>>>> topic\n<<<<<<<<\n<<<<<<<x\n=======\t\n>>>>>>>",
    );
    let git = r.assert_parity(None);
    assert_eq!(
        git.iter().filter(|k| k.2 == ConflictMarker).count(),
        6,
        "{git:?}"
    );
}

#[test]
fn crlf_and_cr_at_eol() {
    let r = Repo::new();
    r.write("w.txt", b"a\r\n");
    r.commit_all("base");
    r.write("w.txt", b"a\r\nb\r\nc \r\n");
    assert_eq!(
        r.assert_parity(None),
        keys(&[
            ("w.txt", 2, TrailingWhitespace),
            ("w.txt", 3, TrailingWhitespace)
        ])
    );
    r.git(&["config", "core.whitespace", "cr-at-eol"]);
    assert_eq!(
        r.assert_parity(None),
        keys(&[("w.txt", 3, TrailingWhitespace)])
    );
}

#[test]
fn autocrlf_converts_the_working_tree_before_checking() {
    let r = Repo::new();
    r.git(&["config", "core.autocrlf", "true"]);
    r.write("w.txt", b"a\n");
    r.commit_all("base");
    r.write("w.txt", b"a\r\nb\r\nc \r\n");
    assert_eq!(
        r.assert_parity(None),
        keys(&[("w.txt", 3, TrailingWhitespace)])
    );
}

#[test]
fn core_whitespace_classes_and_tabwidth() {
    let r = Repo::new();
    r.write("x.c", b"int x;\n");
    r.commit_all("base");
    r.write(
        "x.c",
        b"int x;\n    four\n        eight\n\ttab\n \tmixed\nend \n\n",
    );
    r.git(&[
        "config",
        "core.whitespace",
        "indent-with-non-tab,tabwidth=4,-blank-at-eof",
    ]);
    assert_eq!(
        r.assert_parity(None),
        keys(&[
            ("x.c", 2, IndentWithNonTab),
            ("x.c", 3, IndentWithNonTab),
            ("x.c", 5, SpaceBeforeTab),
            ("x.c", 6, TrailingWhitespace),
        ])
    );
    r.git(&["config", "core.whitespace", "tab-in-indent,-trailing-space"]);
    assert_eq!(
        r.assert_parity(None),
        keys(&[("x.c", 4, TabInIndent), ("x.c", 5, SpaceBeforeTab)])
    );
    r.git(&[
        "config",
        "core.whitespace",
        "-space-before-tab,tab-in-indent",
    ]);
    assert_eq!(
        r.assert_parity(None),
        keys(&[
            ("x.c", 4, TabInIndent),
            ("x.c", 5, TabInIndent),
            ("x.c", 6, TrailingWhitespace),
            ("x.c", 7, BlankAtEof),
        ])
    );
}

#[test]
fn gitattributes_whitespace_and_marker_size() {
    let r = Repo::new();
    r.write(
        ".gitattributes",
        b"*.py whitespace=tab-in-indent,-blank-at-eof\n*.off -whitespace\n*.all whitespace\n*.cfg !whitespace\n*.mk conflict-marker-size=4\n",
    );
    for f in ["a.py", "b.off", "c.all", "d.cfg", "e.mk"] {
        r.write(f, b"x\n");
    }
    r.git(&["config", "core.whitespace", "-space-before-tab"]);
    r.commit_all("base");
    let body = b"x\n\tindent\n \ttab\n         nine\nend \n<<<<\n<<<<<<< x\n\n";
    for f in ["a.py", "b.off", "c.all", "d.cfg", "e.mk"] {
        r.write(f, body);
    }
    let git = r.assert_parity(None);
    // `-whitespace` turns off every whitespace class, but conflict markers are still reported.
    assert_eq!(
        git.iter()
            .filter(|k| k.0 == "b.off")
            .map(|k| k.2)
            .collect::<Vec<_>>(),
        [ConflictMarker]
    );
    assert!(git.contains(&("a.py".into(), 2, TabInIndent)), "{git:?}");
    assert!(
        git.contains(&("c.all".into(), 4, IndentWithNonTab)),
        "{git:?}"
    );
    assert!(git.contains(&("e.mk".into(), 6, ConflictMarker)), "{git:?}");
    assert!(
        !git.contains(&("d.cfg".into(), 3, SpaceBeforeTab)),
        "{git:?}"
    );
}

#[test]
fn binary_files_are_skipped_by_content_and_attribute() {
    let r = Repo::new();
    r.write(
        ".gitattributes",
        b"*.bin -diff\n*.forced diff\n*.drv diff=bin\n",
    );
    r.git(&["config", "diff.bin.binary", "true"]);
    r.commit_all("base");
    r.write("nul.dat", b"a\0 \ntrail \n");
    r.write("x.bin", b"trail \n");
    r.write("y.forced", b"a\0 \n");
    r.write("z.drv", b"trail \n");
    r.write("t.txt", b"trail \n");
    r.git(&["add", "-A"]);
    assert_eq!(
        r.assert_parity(None),
        keys(&[
            ("t.txt", 1, TrailingWhitespace),
            ("y.forced", 1, TrailingWhitespace)
        ])
    );
}

#[test]
fn renames_only_flag_the_new_lines() {
    let r = Repo::new();
    let body: Vec<u8> = (0..40)
        .flat_map(|i| format!("line {i} \n").into_bytes())
        .collect();
    r.write("old/name.yaml", &body);
    r.commit_all("base");
    std::fs::create_dir_all(r.path().join("new")).expect("mkdir");
    r.git(&["mv", "old/name.yaml", "new/name.yaml"]);
    let mut changed = body.clone();
    changed.extend_from_slice(b"added \n");
    r.write("new/name.yaml", &changed);
    assert_eq!(
        r.assert_parity(None),
        keys(&[("new/name.yaml", 41, TrailingWhitespace)])
    );
}

#[test]
fn blank_at_eof_edge_cases() {
    let r = Repo::new();
    r.write("had.txt", b"a\n\n");
    r.write("nonl.txt", b"a");
    r.commit_all("base");
    r.write("had.txt", b"a\n\n\n \n");
    r.write("nonl.txt", b"a\n \t");
    r.write("allblank.txt", b"\n\n\n");
    r.write("short.txt", b" \n\n");
    r.write("two.txt", b"  \n\n");
    r.git(&["add", "-A"]);
    let git = r.assert_parity(None);
    assert!(
        git.contains(&("allblank.txt".into(), 3, BlankAtEof)),
        "{git:?}"
    );
    assert!(git.contains(&("had.txt".into(), 2, BlankAtEof)), "{git:?}");
}

#[test]
fn no_newline_at_eof_lines() {
    let r = Repo::new();
    r.write("n.txt", b"a\nb");
    r.commit_all("base");
    r.write("n.txt", b"a\nb \n=======");
    assert_eq!(
        r.assert_parity(None),
        keys(&[
            ("n.txt", 2, TrailingWhitespace),
            ("n.txt", 3, ConflictMarker)
        ])
    );
}

#[test]
fn intent_to_add_files_are_checked_untracked_are_not() {
    let r = Repo::new();
    r.commit_all("base");
    r.write("n.txt", b"x \n");
    r.write("u.txt", b"y \n");
    r.git(&["add", "-N", "n.txt"]);
    assert_eq!(
        r.assert_parity(None),
        keys(&[("n.txt", 1, TrailingWhitespace)])
    );
}

#[test]
fn sliding_ambiguous_insertions_report_the_same_lines() {
    let r = Repo::new();
    r.write("s.txt", b"a\n \n \nb\n\t\n\t\nc\nx\nx\nx\n");
    r.commit_all("base");
    r.write("s.txt", b"a\n \n \n \nb\n\t\n\t\n\t\nc\nx\nx \nx\nx\n");
    let git = r.assert_parity(None);
    assert!(!git.is_empty());
}

#[test]
fn deleted_files_and_clean_trees_report_nothing() {
    let r = Repo::new();
    r.write("gone.txt", b"bad \n");
    r.write("same.txt", b"bad \n");
    r.commit_all("base");
    r.git(&["rm", "-q", "gone.txt"]);
    assert_eq!(r.assert_parity(None), vec![]);
}

#[test]
fn commit_to_commit() {
    let r = Repo::new();
    r.write("c.txt", b"a\n");
    let a = r.commit_all("a");
    r.write("c.txt", b"a\nb \n\n");
    r.write("d.txt", b" \tx\n");
    let b = r.commit_all("b");
    r.write("c.txt", b"dirty \n");
    assert_eq!(
        r.assert_parity_revs(&a, &b),
        keys(&[
            ("c.txt", 2, TrailingWhitespace),
            ("c.txt", 3, BlankAtEof),
            ("d.txt", 1, SpaceBeforeTab)
        ])
    );
}

#[test]
fn symlink_and_executable_bit() {
    let r = Repo::new();
    r.write("s.sh", b"echo\n");
    r.commit_all("base");
    std::os::unix::fs::symlink("target with space ", r.path().join("link")).expect("symlink");
    r.git(&["add", "link"]);
    r.git(&["update-index", "--chmod=+x", "s.sh"]);
    r.write("s.sh", b"echo\necho \n");
    let git = r.assert_parity(None);
    assert!(
        git.contains(&("s.sh".into(), 2, TrailingWhitespace)),
        "{git:?}"
    );
}

#[test]
fn unmerged_paths_are_checked_in_the_working_tree() {
    let r = Repo::new();
    r.write("f.txt", b"a\n");
    r.commit_all("base");
    r.git(&["checkout", "-q", "-b", "side"]);
    r.write("f.txt", b"b\n");
    r.commit_all("side");
    r.git(&["checkout", "-q", "main"]);
    r.write("f.txt", b"c \n");
    r.commit_all("main");
    // The merge stops with conflicts (non-zero exit), leaving markers in f.txt. git wants an
    // identity to start a merge: given with -c like Repo::git, and HOME pointed where the Nix
    // build sandbox points it, so no identity from the machine's ~/.gitconfig can help.
    let _ = duct::cmd(
        "git",
        [
            "-c",
            "user.name=infx",
            "-c",
            "user.email=infx@example.invalid",
            "merge",
            "-q",
            "side",
        ],
    )
    .env("HOME", "/homeless-shelter")
    .env("GIT_CONFIG_NOSYSTEM", "1")
    .env_remove("XDG_CONFIG_HOME")
    .dir(r.path())
    .stdout_null()
    .stderr_null()
    .unchecked()
    .run();
    let git = r.assert_parity(None);
    assert_eq!(
        git.iter().filter(|k| k.2 == ConflictMarker).count(),
        3,
        "{git:?}"
    );
}

#[test]
fn text_and_eol_attributes_normalise_before_checking() {
    let r = Repo::new();
    r.write(
        ".gitattributes",
        b"*.t text\n*.e eol=crlf\n*.a text=auto\n*.n -text\n*.i ident\n",
    );
    for f in ["x.t", "x.e", "x.a", "x.n", "x.i"] {
        r.write(f, b"a\n");
    }
    r.commit_all("base");
    for f in ["x.t", "x.e", "x.a", "x.n"] {
        r.write(f, b"a\r\nb\r\nc \r\n");
    }
    r.write("x.i", b"a\n$Id: 0123 $ \n");
    let git = r.assert_parity(None);
    // Normalised files only report the real trailing space; `-text` keeps the CRs.
    assert_eq!(git.iter().filter(|k| k.0 == "x.t").count(), 1, "{git:?}");
    assert_eq!(git.iter().filter(|k| k.0 == "x.n").count(), 3, "{git:?}");
}

/// The attribute scan (one read of every attribute source per change instead of per-file
/// lookups) must see every source git reads: an untracked `.gitattributes` along the path,
/// `$GIT_DIR/info/attributes`, macros, and the built-in `binary` macro.
#[test]
fn attribute_sources_the_scan_must_not_miss() {
    let r = Repo::new();
    r.write(
        ".gitattributes",
        b"[attr]quiet -whitespace\n*.q quiet\n*.dat binary\n",
    );
    for f in ["sub/a.txt", "b.info", "c.q", "d.dat", "e.txt"] {
        r.write(f, b"x\n");
    }
    r.commit_all("base");
    // Untracked, in the changed file's directory only.
    r.write("sub/.gitattributes", b"*.txt -whitespace\n");
    r.write(".git/info/attributes", b"*.info -whitespace\n");
    for f in ["sub/a.txt", "b.info", "c.q", "d.dat", "e.txt"] {
        r.write(f, b"x\ntrailing \n");
    }
    let git = r.assert_parity(None);
    // Only the file no attribute covers is reported.
    assert_eq!(git, keys(&[("e.txt", 2, TrailingWhitespace)]));
}

#[test]
fn no_attribute_source_at_all() {
    let r = Repo::new();
    r.write("a.txt", b"x\n");
    r.commit_all("base");
    r.write("a.txt", b"x\n\tspace \n<<<<<<< y\n");
    let git = r.assert_parity(None);
    assert_eq!(
        git,
        keys(&[
            ("a.txt", 2, TrailingWhitespace),
            ("a.txt", 3, ConflictMarker)
        ])
    );
}
