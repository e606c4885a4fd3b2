//! Changelog commands end to end: the merge driver under a real `git merge` and `changelog
//! check` on a temp repository (the conformance replay and the random differentials are
//! xtask-dev's: xtask-dev/tests/changelog.rs).

use std::path::Path;

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

#[path = "support/changelog_repo.rs"]
mod changelog_repo;
use changelog_repo::{entry, git, ok};

/// [`changelog_repo::repo`] with this package's xtask as the merge driver.
fn repo() -> tempfile::TempDir {
    changelog_repo::repo(Path::new(XTASK))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p.join("perf-changelog.yaml")).expect("read")
}

fn append(p: &Path, key: &str, msg: &str) {
    let mut t = read(p);
    t.push('\n');
    t.push_str(&entry(key, "XXX"));
    std::fs::write(p.join("perf-changelog.yaml"), t).expect("write");
    ok(p, &["commit", "-q", "-am", msg]);
}

#[test]
fn two_appends_merge_cleanly_with_main_bytes_first() {
    let d = repo();
    let p = d.path();
    ok(p, &["checkout", "-q", "-b", "feature"]);
    append(p, "c-b200-vllm", "feature entry");
    ok(p, &["checkout", "-q", "main"]);
    append(p, "a-mi355x-sglang", "main entry");
    let main_bytes = read(p);

    // A feature branch merging main in: main's bytes stay a prefix, the feature entry follows.
    ok(p, &["checkout", "-q", "feature"]);
    let out = git(p, &["merge", "--no-edit", "main"]).expect("git merge");
    assert!(
        out.status.success(),
        "merge failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let merged = read(p);
    assert!(merged.starts_with(&main_bytes), "{merged}");
    assert_eq!(
        merged,
        format!("{main_bytes}\n{}", entry("c-b200-vllm", "XXX"))
    );

    // Merging the feature into main gives the same bytes.
    ok(p, &["checkout", "-q", "main"]);
    ok(p, &["merge", "--no-edit", "feature"]);
    assert_eq!(read(p), merged);
}

fn install_driver(p: &Path) {
    let st = std::process::Command::new(XTASK)
        .args([
            "install-merge-driver",
            "--repo",
            &p.display().to_string(),
            "--command",
            XTASK,
        ])
        .status()
        .expect("xtask runs");
    assert!(st.success());
}

/// `changelog check --mode strict` of the work tree against `base`: the exit code and output.
fn strict_against(p: &Path, base: &str) -> (i32, String) {
    let o = std::process::Command::new(XTASK)
        .args([
            "changelog",
            "check",
            "--repo",
            &p.display().to_string(),
            "--base",
            base,
            "--mode",
            "strict",
            "--format",
            "json",
        ])
        .output()
        .expect("xtask runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn pull_rebase_puts_mains_entries_first_and_passes_strict_append_only() {
    let origin = repo();
    let clone_dir = tempfile::tempdir().expect("tempdir");
    let c = clone_dir.path().join("clone");
    ok(
        clone_dir.path(),
        &["clone", "-q", &origin.path().display().to_string(), "clone"],
    );
    install_driver(&c);
    // The contributor appends on their local main; meanwhile main upstream gains an entry.
    append(&c, "c-b200-vllm", "pr entry");
    append(origin.path(), "a-mi355x-sglang", "main entry");
    let main_bytes = read(origin.path());
    let out = git(&c, &["pull", "-q", "--rebase"]).expect("git pull");
    assert!(
        out.status.success(),
        "pull --rebase failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rebased = read(&c);
    assert_eq!(
        rebased,
        format!("{main_bytes}\n{}", entry("c-b200-vllm", "XXX")),
        "main's entries first, then the PR's"
    );
    let (code, report) = strict_against(&c, "origin/main");
    assert_eq!(code, 0, "the rebased change is a strict append: {report}");
}

#[test]
fn rebase_and_cherry_pick_keep_the_receiving_branch_first() {
    let d = repo();
    let p = d.path();
    ok(p, &["checkout", "-q", "-b", "feature"]);
    append(p, "c-b200-vllm", "feature entry");
    ok(p, &["checkout", "-q", "main"]);
    append(p, "a-mi355x-sglang", "main entry");
    let main_bytes = read(p);
    let expected = format!("{main_bytes}\n{}", entry("c-b200-vllm", "XXX"));

    ok(p, &["checkout", "-q", "feature"]);
    let out = git(p, &["rebase", "-q", "main"]).expect("git rebase");
    assert!(
        out.status.success(),
        "rebase failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(p), expected, "git rebase main");
    let (code, report) = strict_against(p, "main");
    assert_eq!(code, 0, "{report}");
    ok(p, &["reset", "-q", "--hard", "ORIG_HEAD"]);

    // The apply backend (rebase-apply/) as well.
    let out = git(p, &["rebase", "-q", "--apply", "main"]).expect("git rebase --apply");
    assert!(
        out.status.success(),
        "rebase --apply failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(p), expected, "git rebase --apply main");
    ok(p, &["reset", "-q", "--hard", "ORIG_HEAD"]);

    ok(p, &["checkout", "-q", "main"]);
    ok(p, &["cherry-pick", "feature"]);
    assert_eq!(read(p), expected, "git cherry-pick onto main");
}

#[test]
fn a_broken_append_is_left_as_a_conflict() {
    let d = repo();
    let p = d.path();
    ok(p, &["checkout", "-q", "-b", "feature"]);
    // Text after the history that is not a whole entry (an orphan description block).
    let mut t = read(p);
    t.push_str("\n  description:\n    - not an entry\n");
    std::fs::write(p.join("perf-changelog.yaml"), t).expect("write");
    ok(p, &["commit", "-q", "-am", "broken append"]);
    ok(p, &["checkout", "-q", "main"]);
    append(p, "a-mi355x-sglang", "main entry");
    ok(p, &["checkout", "-q", "feature"]);
    let out = git(p, &["merge", "--no-edit", "main"]).expect("git merge");
    assert!(!out.status.success(), "a broken append must conflict");
    assert!(read(p).contains("<<<<<<< ours"));
}

#[test]
fn gate_mode_plans_the_sweep_without_plan_out() {
    // The masters of this repository cannot generate rows (no runners.yaml, no search space):
    // upstream's gate fails in process_changelog; so must gate mode, --plan-out or not.
    let d = repo();
    let p = d.path();
    append(p, "c-b200-vllm", "entry");
    let o = std::process::Command::new(XTASK)
        .args([
            "changelog",
            "check",
            "--repo",
            &p.display().to_string(),
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--mode",
            "gate",
            "--format",
            "json",
        ])
        .output()
        .expect("xtask runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("changelog/plan-"), "{out}");
    // Strict mode does not plan: the same change passes.
    let (code, report) = strict_against(p, "HEAD~1");
    assert_eq!(code, 0, "{report}");
}

#[test]
fn editing_a_historical_entry_still_conflicts() {
    let d = repo();
    let p = d.path();
    ok(p, &["checkout", "-q", "-b", "feature"]);
    let edited = read(p).replace("Change a-mi355x-sglang", "Rewritten history");
    std::fs::write(p.join("perf-changelog.yaml"), edited).expect("write");
    ok(p, &["commit", "-q", "-am", "edit history"]);
    ok(p, &["checkout", "-q", "main"]);
    append(p, "c-b200-vllm", "main entry");
    let out = git(p, &["merge", "--no-edit", "feature"]).expect("git merge");
    assert!(!out.status.success(), "an edit of history must conflict");
    let text = read(p);
    assert!(text.contains("<<<<<<< ours"), "{text}");
}

fn check(p: &Path, extra: &[&str]) -> (i32, String) {
    let base = if extra.contains(&"--base") {
        None
    } else {
        Some("HEAD")
    };
    let mut args = vec![
        "changelog",
        "check",
        "--repo",
        p.to_str().unwrap_or("."),
        "--format",
        "json",
    ];
    if let Some(b) = base {
        args.extend_from_slice(&["--base", b]);
    }
    args.extend_from_slice(extra);
    let out = std::process::Command::new(XTASK)
        .args(&args)
        .output()
        .expect("xtask runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn check_reports_rule_and_line() {
    let d = repo();
    let p = d.path();
    let base = read(p);
    // Appending a valid entry passes.
    std::fs::write(
        p.join("perf-changelog.yaml"),
        format!("{base}\n{}", entry("c-b200-vllm", "XXX")),
    )
    .expect("write");
    let (code, out) = check(p, &[]);
    assert_eq!(code, 0, "{out}");
    // Editing an old entry.
    std::fs::write(
        p.join("perf-changelog.yaml"),
        base.replace("Change b-b200-vllm", "Changed"),
    )
    .expect("write");
    let (code, out) = check(p, &[]);
    assert_eq!(code, 1);
    assert!(
        out.contains("changelog/entry-changed") && out.contains("\"line\":10"),
        "{out}"
    );
    // Trailing whitespace on an old line.
    std::fs::write(
        p.join("perf-changelog.yaml"),
        format!(
            "{}\n{}",
            base.replacen("    - a-mi355x-sglang\n", "    - a-mi355x-sglang \n", 1),
            entry("c-b200-vllm", "XXX")
        ),
    )
    .expect("write");
    let (code, out) = check(p, &[]);
    assert_eq!(code, 1);
    assert!(
        out.contains("changelog/history-bytes") && out.contains("\"line\":2"),
        "{out}"
    );
    // Dropping the final newline.
    std::fs::write(p.join("perf-changelog.yaml"), base.trim_end()).expect("write");
    let (code, out) = check(p, &[]);
    assert_eq!(code, 1);
    assert!(out.contains("changelog/final-newline"), "{out}");
    // Inserting in the middle, seen by the gate too.
    let mid = base.replacen(
        "\n- config-keys:\n    - b",
        &format!("\n{}\n- config-keys:\n    - b", entry("c-b200-vllm", "XXX")),
        1,
    );
    std::fs::write(p.join("perf-changelog.yaml"), &mid).expect("write");
    let (code, out) = check(p, &[]);
    assert_eq!(code, 1);
    // One finding at the insertion, none for the entry it shifts (docs/changelog.md, "Entries
    // inserted before the end").
    assert!(
        out.contains("changelog/entry-inserted") && out.matches("\"code\":").count() == 1,
        "{out}"
    );
    let (code, _) = check(p, &["--mode", "gate"]);
    assert_eq!(code, 0, "the CI gate accepts a mid-file insertion");
    // A key that does not exist at this revision.
    std::fs::write(
        p.join("perf-changelog.yaml"),
        format!("{base}\n{}", entry("nope-*", "XXX")),
    )
    .expect("write");
    let (code, out) = check(p, &[]);
    assert_eq!(code, 1);
    assert!(out.contains("changelog/config-key"), "{out}");
}

#[test]
fn moving_the_file_into_the_nested_layout_is_not_an_edit() {
    let d = repo();
    let p = d.path();
    std::fs::create_dir_all(p.join("inferencex-e2e/configs")).expect("mkdir");
    ok(
        p,
        &[
            "mv",
            "perf-changelog.yaml",
            "inferencex-e2e/perf-changelog.yaml",
        ],
    );
    ok(
        p,
        &[
            "mv",
            "configs/amd-master.yaml",
            "inferencex-e2e/configs/amd-master.yaml",
        ],
    );
    ok(
        p,
        &[
            "mv",
            "configs/nvidia-master.yaml",
            "inferencex-e2e/configs/nvidia-master.yaml",
        ],
    );
    // A pure move, committed: strict mode sees identical bytes.
    ok(p, &["commit", "-q", "-m", "move"]);
    let (code, out) = check(p, &["--base", "HEAD~1"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = {
        let args = [
            "changelog",
            "check",
            "--repo",
            p.to_str().unwrap_or("."),
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--format",
            "json",
            "--mode",
            "both",
        ];
        let o = std::process::Command::new(XTASK)
            .args(args)
            .output()
            .expect("xtask runs");
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    // base..HEAD is the move alone: no entry added, no byte changed, no deletion.
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("changelog/no-additions") && !out.contains("deleted-line"),
        "{out}"
    );
    // Move + append: only the new entry counts.
    let nested = p.join("inferencex-e2e/perf-changelog.yaml");
    let mut t = std::fs::read_to_string(&nested).expect("read");
    t.push('\n');
    t.push_str(&entry("c-b200-vllm", "XXX"));
    std::fs::write(&nested, t).expect("write");
    let args = [
        "changelog",
        "check",
        "--repo",
        p.to_str().unwrap_or("."),
        "--base",
        "HEAD~1",
        "--format",
        "json",
        "--mode",
        "both",
    ];
    let o = std::process::Command::new(XTASK)
        .args(args)
        .output()
        .expect("xtask runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

/// Appends an entry for `key` with its own description (so two entries of one key differ).
fn append_desc(p: &Path, key: &str, desc: &str, msg: &str) {
    let mut t = read(p);
    t.push_str(&format!(
        "\n- config-keys:\n    - {key}\n  description:\n    - {desc}\n  pr-link: XXX\n"
    ));
    std::fs::write(p.join("perf-changelog.yaml"), t).expect("write");
    ok(p, &["commit", "-q", "-am", msg]);
}

/// The descriptions of the entries, in file order.
fn descriptions(p: &Path) -> Vec<String> {
    read(p)
        .lines()
        .filter_map(|l| l.strip_prefix("    - "))
        .filter(|l| l.starts_with("Change ") || l.starts_with("entry "))
        .map(String::from)
        .collect()
}

fn run_ok(p: &Path, args: &[&str]) {
    let out = git(p, args).expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        read(p)
    );
}

/// Issue #45: the merge step of `git rebase --rebase-merges` leaves `MERGE_HEAD` beside
/// `rebase-merge/`; it is a merge whose "ours" is the PR side, so main's entries go first
/// (the rebase alone put the PR's p1 before main's m1 and m2, and the PR failed its own gate
/// with entry-reordered).
#[test]
fn rebase_merges_keeps_mains_entries_first() {
    let d = repo();
    let p = d.path();
    ok(p, &["checkout", "-q", "-b", "pr"]);
    append_desc(p, "c-b200-vllm", "entry p1", "p1");
    ok(p, &["checkout", "-q", "main"]);
    append_desc(p, "a-mi355x-sglang", "entry m1", "m1");
    ok(p, &["checkout", "-q", "pr"]);
    run_ok(p, &["merge", "--no-edit", "main"]);
    append_desc(p, "c-b200-vllm", "entry p2", "p2");
    ok(p, &["checkout", "-q", "main"]);
    append_desc(p, "b-b200-vllm", "entry m2", "m2");
    ok(p, &["checkout", "-q", "pr"]);
    run_ok(p, &["rebase", "-q", "--rebase-merges", "main"]);
    let order = descriptions(p);
    assert_eq!(
        &order[2..],
        ["entry m1", "entry m2", "entry p1", "entry p2"],
        "{}",
        read(p)
    );
    let (code, report) = strict_against(p, "main");
    assert_eq!(code, 0, "the PR passes its own strict check: {report}");
}

/// `git rebase --onto main topic pr` replays the PR's entry commit on main: main's first.
#[test]
fn rebase_onto_replays_the_entry_after_mains() {
    let d = repo();
    let p = d.path();
    ok(p, &["checkout", "-q", "-b", "topic"]);
    append_desc(p, "b-b200-vllm", "entry t1", "t1");
    ok(p, &["checkout", "-q", "-b", "pr"]);
    append_desc(p, "c-b200-vllm", "entry p1", "p1");
    ok(p, &["checkout", "-q", "main"]);
    append_desc(p, "a-mi355x-sglang", "entry m1", "m1");
    run_ok(p, &["rebase", "-q", "--onto", "main", "topic", "pr"]);
    assert_eq!(
        &descriptions(p)[2..],
        ["entry m1", "entry p1"],
        "{}",
        read(p)
    );
    let (code, report) = strict_against(p, "main");
    assert_eq!(code, 0, "{report}");
}

/// A cherry-pick of an entry commit onto a main that moved on keeps main's bytes first; a
/// revert of an entry commit under later entries edits history, which the driver leaves as
/// a conflict with its reason rather than merge.
#[test]
fn cherry_pick_and_revert_of_an_entry_commit() {
    let d = repo();
    let p = d.path();
    ok(p, &["checkout", "-q", "-b", "pr"]);
    append_desc(p, "c-b200-vllm", "entry p1", "p1");
    ok(p, &["checkout", "-q", "main"]);
    append_desc(p, "a-mi355x-sglang", "entry m1", "m1");
    append_desc(p, "b-b200-vllm", "entry m2", "m2");
    run_ok(p, &["cherry-pick", "pr"]);
    assert_eq!(
        &descriptions(p)[2..],
        ["entry m1", "entry m2", "entry p1"],
        "{}",
        read(p)
    );
    ok(p, &["reset", "-q", "--hard", "HEAD~1"]);
    let out = git(p, &["revert", "--no-edit", "HEAD~1"]).expect("git revert");
    assert!(
        !out.status.success(),
        "reverting m1 under m2 edits history: {}",
        read(p)
    );
    assert!(read(p).contains("<<<<<<< ours"), "{}", read(p));
}

/// Issue #45: a description holding DEL (PyYAML's reader refuses it: upstream's validator
/// exits 1) fails the check with the YAML reader's rule.
#[test]
fn a_control_character_in_an_entry_fails_the_check() {
    let d = repo();
    let p = d.path();
    append_desc(p, "c-b200-vllm", "a\u{7f}b", "entry with DEL");
    let (code, report) = strict_against(p, "HEAD~1");
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("changelog/yaml"), "{report}");
    assert!(report.contains("unacceptable character #x007f"), "{report}");
}
