//! Change detection against repositories built with real git: statuses, renames, base
//! resolution, the clean-clone "no change" case, the fallback commit and the error diagnostics.

mod common;

use common::Repo;
use infx_diff::codes;
use infx_diff::{
    BaseSource, ChangeOptions, ChangedFile, Status, changed_files, last_commit_touching,
};
use std::path::{Path, PathBuf};

fn files(r: &Repo, opts: &ChangeOptions) -> Vec<(Status, String, Option<String>)> {
    let set = changed_files(r.path(), opts).unwrap_or_else(|d| panic!("{d}"));
    set.files
        .into_iter()
        .map(
            |ChangedFile {
                 status,
                 path,
                 old_path,
                 ..
             }| {
                (
                    status,
                    path.display().to_string(),
                    old_path.map(|p| p.display().to_string()),
                )
            },
        )
        .collect()
}

fn s(x: &str) -> String {
    x.to_string()
}

#[test]
fn committed_staged_unstaged_untracked_and_renames() {
    let r = Repo::new();
    r.write(".gitignore", b"*.log\n");
    r.write("keep.txt", b"k\n");
    r.write("mod.txt", b"m\n");
    r.write("del.txt", b"d\n");
    let body: Vec<u8> = (0..30)
        .flat_map(|i| format!("row {i}\n").into_bytes())
        .collect();
    r.write("ren/a.yaml", &body);
    r.write("mv/b.yaml", &body.iter().rev().copied().collect::<Vec<_>>());
    let base = r.commit_all("base");
    r.write("committed.txt", b"c\n");
    r.commit_all("committed");
    r.write("mod.txt", b"m2\n");
    r.git(&["add", "mod.txt"]);
    std::fs::remove_file(r.path().join("del.txt")).expect("rm");
    std::fs::create_dir_all(r.path().join("ren2")).expect("mkdir");
    r.git(&["mv", "ren/a.yaml", "ren2/a.yaml"]);
    // Renamed without telling git: the new path is untracked.
    std::fs::create_dir_all(r.path().join("mv2")).expect("mkdir");
    std::fs::rename(r.path().join("mv/b.yaml"), r.path().join("mv2/b.yaml")).expect("mv");
    r.write("new.txt", b"n\n");
    r.write("noise.log", b"ignored\n");

    let opts = ChangeOptions {
        base: Some(base.clone()),
        ..ChangeOptions::default()
    };
    let mut got = files(&r, &opts);
    got.sort();
    let mut want = vec![
        (Status::Added, s("committed.txt"), None),
        (Status::Modified, s("mod.txt"), None),
        (Status::Deleted, s("del.txt"), None),
        (Status::Renamed, s("ren2/a.yaml"), Some(s("ren/a.yaml"))),
        (Status::Renamed, s("mv2/b.yaml"), Some(s("mv/b.yaml"))),
        (Status::Untracked, s("new.txt"), None),
    ];
    want.sort();
    assert_eq!(got, want);

    // Without untracked files, the unannounced rename is a plain deletion.
    let tracked = ChangeOptions {
        untracked: false,
        ..opts
    };
    let got = files(&r, &tracked);
    assert!(
        got.contains(&(Status::Deleted, s("mv/b.yaml"), None)),
        "{got:?}"
    );
    assert!(!got.iter().any(|f| f.1 == "new.txt"), "{got:?}");
}

#[test]
fn default_base_is_the_merge_base_with_the_first_upstream_found() {
    let r = Repo::new();
    r.write("a.txt", b"1\n");
    let fork = r.commit_all("fork point");
    r.git(&["update-ref", "refs/remotes/origin/main", &fork]);
    r.git(&["checkout", "-q", "-b", "topic"]);
    r.write("b.txt", b"2\n");
    r.commit_all("topic work");
    // origin/main moves on; the merge-base stays the fork point.
    r.git(&["checkout", "-q", "main"]);
    r.write("c.txt", b"3\n");
    let upstream_tip = r.commit_all("upstream work");
    r.git(&["update-ref", "refs/remotes/origin/main", &upstream_tip]);
    r.git(&["checkout", "-q", "topic"]);

    let set = changed_files(r.path(), &ChangeOptions::default()).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(set.base.commit.as_deref(), Some(fork.as_str()));
    assert_eq!(
        set.base.source,
        BaseSource::MergeBase {
            upstream: s("origin/main")
        }
    );
    assert_eq!(
        set.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
        [PathBuf::from("b.txt")]
    );

    // Configurable candidates: `main` (local) when asked first.
    let opts = ChangeOptions {
        upstreams: vec![s("upstream/main"), s("main")],
        ..ChangeOptions::default()
    };
    let set = changed_files(r.path(), &opts).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(
        set.base.source,
        BaseSource::MergeBase {
            upstream: s("main")
        }
    );

    // `REV...` is the merge-base with REV.
    let opts = ChangeOptions {
        base: Some(s("main...")),
        ..ChangeOptions::default()
    };
    let set = changed_files(r.path(), &opts).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(set.base.commit.as_deref(), Some(fork.as_str()));
}

#[test]
fn fresh_clone_reports_no_change() {
    let src = Repo::new();
    src.write("a.txt", b"1\n");
    src.commit_all("one");
    let dst = tempfile::tempdir().expect("tempdir");
    let clone = dst.path().join("clone");
    duct::cmd!("git", "clone", "-q", src.path(), &clone)
        .run()
        .expect("clone");
    let set = changed_files(&clone, &ChangeOptions::default()).unwrap_or_else(|d| panic!("{d}"));
    assert!(set.is_empty(), "{set:?}");
    assert_eq!(set.base.commit, set.head);
    assert_eq!(
        set.base.source,
        BaseSource::MergeBase {
            upstream: s("origin/main")
        }
    );
}

#[test]
fn errors_have_stable_codes_and_help() {
    let plain = tempfile::tempdir().expect("tempdir");
    let e = changed_files(plain.path(), &ChangeOptions::default()).expect_err("not a repo");
    assert_eq!(e.code, codes::NOT_A_REPO);
    assert!(e.help.is_some());

    let r = Repo::new();
    r.write("a.txt", b"1\n");
    r.commit_all("one");
    let opts = ChangeOptions {
        base: Some(s("no-such-branch")),
        ..ChangeOptions::default()
    };
    let e = changed_files(r.path(), &opts).expect_err("missing base");
    assert_eq!(e.code, codes::BASE_NOT_FOUND);
    assert!(e.message.contains("no-such-branch"));

    let opts = ChangeOptions {
        upstreams: vec![s("origin/main"), s("upstream/main")],
        ..ChangeOptions::default()
    };
    let e = changed_files(r.path(), &opts).expect_err("no upstream");
    assert_eq!(e.code, codes::BASE_NOT_FOUND);

    // Unrelated histories have no merge-base.
    r.git(&["checkout", "-q", "--orphan", "other"]);
    r.commit_all("unrelated");
    let opts = ChangeOptions {
        upstreams: vec![s("main")],
        ..ChangeOptions::default()
    };
    let e = changed_files(r.path(), &opts).expect_err("no merge base");
    assert_eq!(e.code, codes::NO_MERGE_BASE);
}

fn clone_shallow(src: &Path, dst: &Path, branch: &str) {
    let url = format!("file://{}", src.display());
    duct::cmd(
        "git",
        [
            "clone",
            "-q",
            "--depth",
            "1",
            "--branch",
            branch,
            &url,
            &dst.display().to_string(),
        ],
    )
    .run()
    .expect("shallow clone");
}

#[test]
fn shallow_clone_missing_the_base_says_how_to_fetch_it() {
    let src = Repo::new();
    src.write("log.yaml", b"a\n");
    src.commit_all("one");
    src.git(&["checkout", "-q", "-b", "topic"]);
    src.write("t.txt", b"t\n");
    src.commit_all("topic");
    src.git(&["checkout", "-q", "main"]);
    for i in 0..3 {
        src.write("m.txt", format!("{i}\n").as_bytes());
        src.commit_all("main moves");
    }
    let dst = tempfile::tempdir().expect("tempdir");
    let clone = dst.path().join("c");
    clone_shallow(src.path(), &clone, "topic");
    duct::cmd(
        "git",
        [
            "fetch",
            "-q",
            "--depth",
            "1",
            "origin",
            "main:refs/remotes/origin/main",
        ],
    )
    .dir(&clone)
    .run()
    .expect("fetch");
    let e = changed_files(&clone, &ChangeOptions::default()).expect_err("shallow");
    assert_eq!(e.code, codes::SHALLOW);
    assert!(
        e.help
            .as_deref()
            .unwrap_or("")
            .contains("git fetch --unshallow"),
        "{e:?}"
    );
    assert!(
        e.help.as_deref().unwrap_or("").contains("--deepen"),
        "{e:?}"
    );

    // The fallback cannot see past the boundary either: log.yaml last changed before it.
    let e = last_commit_touching(&clone, Path::new("log.yaml")).expect_err("shallow fallback");
    assert_eq!(e.code, codes::SHALLOW);
}

fn git_log_last(r: &Repo, path: &str) -> Option<String> {
    let out = r.git(&["log", "-1", "--format=%H", "--", path]);
    (!out.is_empty()).then_some(out)
}

#[test]
fn last_commit_touching_matches_git_log() {
    let r = Repo::new();
    r.write("log.yaml", b"1\n");
    let root = r.commit_all("root");
    assert_eq!(
        last_commit_touching(r.path(), Path::new("log.yaml")).unwrap_or_else(|d| panic!("{d}")),
        Some((s(infx_diff::EMPTY_TREE), root.clone()))
    );
    r.write("other.txt", b"x\n");
    let c2 = r.commit_all("other");
    r.write("log.yaml", b"1\n2\n");
    let c3 = r.commit_all("log");
    r.write("other.txt", b"y\n");
    r.commit_all("other again");
    let got =
        last_commit_touching(r.path(), Path::new("log.yaml")).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(got, Some((c2, c3.clone())));
    assert_eq!(git_log_last(&r, "log.yaml"), Some(c3));

    // A merged side branch that changed the file: git log shows the branch commit.
    r.git(&["checkout", "-q", "-b", "side"]);
    r.write("log.yaml", b"1\n2\n3\n");
    let side = r.commit_all("side log");
    r.git(&["checkout", "-q", "main"]);
    r.write("other.txt", b"z\n");
    r.commit_all("main other");
    r.git(&[
        "-c",
        "user.name=m",
        "merge",
        "-q",
        "--no-ff",
        "--no-edit",
        "side",
    ]);
    let got =
        last_commit_touching(r.path(), Path::new("log.yaml")).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(
        got.as_ref().map(|p| p.1.clone()),
        git_log_last(&r, "log.yaml")
    );
    assert_eq!(got.map(|p| p.1), Some(side));

    assert_eq!(
        last_commit_touching(r.path(), Path::new("never.yaml")).unwrap_or_else(|d| panic!("{d}")),
        None
    );
}

#[test]
fn fallback_commit_is_checked_like_git_show_check() {
    let r = Repo::new();
    r.write("log.yaml", b"a: 1 \n");
    let root = r.commit_all("root");
    let (parent, commit) = last_commit_touching(r.path(), Path::new("log.yaml"))
        .unwrap_or_else(|d| panic!("{d}"))
        .expect("touched");
    assert_eq!(commit, root);
    let opts = ChangeOptions {
        base: Some(parent.clone()),
        target: infx_diff::Target::Rev(commit.clone()),
        ..ChangeOptions::default()
    };
    let change = infx_diff::load_change(r.path(), &opts).unwrap_or_else(|d| panic!("{d}"));
    let diags = infx_diff::whitespace_errors(&change);
    assert_eq!(
        diags.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
        ["log.yaml:1:5: error[diff/trailing-whitespace]: trailing whitespace"]
    );
    // git agrees when asked about the same pair.
    assert_eq!(
        r.git_check(&[&parent, &commit]),
        common::keys(&[("log.yaml", 1, infx_diff::WsKind::TrailingWhitespace)])
    );
}
