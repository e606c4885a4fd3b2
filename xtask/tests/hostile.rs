//! A pull request's tree is hostile input (docs/security.md): each test plants one attack in a
//! copy of the bundled tree and runs the real `xtask` binary on it, with a deadline, checking
//! that nothing outside the tree is read or echoed, nothing hangs, and nothing passes falsely.

use std::io::Read as _;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
mod support;
use support::copy_dir;

const SECRET: &str = "infx-test-secret-7f3a9c";

struct Run {
    code: Option<i32>,
    out: String,
    err: String,
    took: Duration,
}

impl Run {
    fn all(&self) -> String {
        format!("{}\n{}", self.out, self.err)
    }
}

fn xtask() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.env("INFX_TEST_TOKEN", SECRET).env("INFX_HERMETIC", "1");
    c
}

/// Runs `cmd`, killing it after `limit` (a hang is a failure, not a stuck test).
fn run_with_deadline(mut cmd: Command, limit: Duration) -> Run {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("xtask starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("xtask {cmd:?} still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        out: out_t.join().unwrap_or_default(),
        err: err_t.join().unwrap_or_default(),
        took: started.elapsed(),
    }
}

fn run(args: &[&str]) -> Run {
    let mut c = xtask();
    c.args(args);
    run_with_deadline(c, Duration::from_secs(60))
}

/// A copy of the bundled tree (no git repository: the tree is its own root).
fn tree() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("tree");
    copy_dir(&xtask::paths::workspace_root().join("inferencex-e2e"), &t);
    (tmp, t)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn validate(t: &Path) -> Run {
    run(&["validate", "--root", s(t), "--all", "--hermetic"])
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

fn lane_dir(t: &Path) -> PathBuf {
    t.join("configs/srt-recipes")
}

fn recipe_dir(t: &Path) -> PathBuf {
    t.join("benchmarks/single_node/srt-slurm-recipes")
}

#[test]
fn symlink_to_proc_self_environ_is_named_never_read() {
    let (_tmp, t) = tree();
    symlink("/proc/self/environ", t.join("configs/env.yaml")).unwrap();
    symlink("/proc/self/environ", lane_dir(&t).join("env.yaml")).unwrap();
    symlink("/proc/self/environ", recipe_dir(&t).join("env.yaml")).unwrap();
    for r in [
        validate(&t),
        run(&["review", "check", "--root", s(&t)]),
        run(&["pin", "--root", s(&t), "--hermetic", "--dry-run"]),
    ] {
        let all = r.all();
        assert!(!all.contains(SECRET), "the environment leaked:\n{all}");
        assert_eq!(r.code, Some(1), "{all}");
        assert!(all.contains("fs/outside-root"), "{all}");
        assert!(all.contains("env.yaml"), "{all}");
    }
}

#[test]
fn symlink_to_a_file_outside_is_refused_and_left_alone() {
    let (tmp, t) = tree();
    let outside = tmp.path().join("outside.yaml");
    let text = format!("secret: {SECRET}\nimage: lmsysorg/sglang:v0.5.19-cu130\n");
    std::fs::write(&outside, &text).unwrap();
    let link = lane_dir(&t).join("leak.yaml");
    symlink(&outside, &link).unwrap();
    let folder_link = recipe_dir(&t).join("outside");
    symlink(tmp.path(), &folder_link).unwrap();
    for r in [
        validate(&t),
        run(&["review", "check", "--root", s(&t)]),
        run(&["pin", "--root", s(&t), "--hermetic"]),
        run(&["pin", s(&link), "--root", s(&t), "--hermetic"]),
    ] {
        let all = r.all();
        assert!(!all.contains(SECRET), "outside content leaked:\n{all}");
        assert_eq!(r.code, Some(1), "{all}");
        assert!(all.contains("fs/outside-root"), "{all}");
    }
    // pin never replaced the link with the outside file's content.
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), text);
}

/// A change that adds enough recipe files for those no config references to be checked as
/// they are parsed (docs/architecture.md, "The validate pipeline"), one of them a link out of
/// the tree: named, never read.
#[test]
fn a_large_change_adding_a_recipe_link_out_of_the_tree_refuses_it() {
    let (tmp, t) = tree();
    let git = |args: &[&str]| {
        let mut all = vec!["-c", "user.name=t", "-c", "user.email=t@t"];
        all.extend(args);
        support::git(&t, &all)
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    let base = git(&["rev-parse", "HEAD"]);
    let text = std::fs::read_to_string(recipe_dir(&t).join("dsr1/sglang/b300-fp4/fixed.yaml"))
        .expect("a bundled recipe");
    for i in 0..70 {
        let dir = recipe_dir(&t).join(format!("copy{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("fixed.yaml"), &text).unwrap();
    }
    let outside = tmp.path().join("outside.yaml");
    std::fs::write(&outside, format!("base:\n  name: {SECRET}\n")).unwrap();
    symlink(&outside, recipe_dir(&t).join("copy0/leak.yaml")).unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "topic"]);
    let r = run(&["validate", "--root", s(&t), "--base", &base, "--hermetic"]);
    let all = r.all();
    assert!(!all.contains(SECRET), "outside content leaked:\n{all}");
    assert_eq!(r.code, Some(1), "{all}");
    assert!(all.contains("fs/outside-root"), "{all}");
    assert!(all.contains("copy0/leak.yaml"), "{all}");
    assert!(
        all.contains(" 70 recipes]"),
        "the copies were reviewed:\n{all}"
    );
}

#[test]
fn fifo_named_yaml_is_refused_without_hanging() {
    let (_tmp, t) = tree();
    mkfifo(&lane_dir(&t).join("hang.yaml"));
    mkfifo(&recipe_dir(&t).join("hang.yaml"));
    for r in [
        validate(&t),
        run(&["review", "check", "--root", s(&t)]),
        run(&["pin", "--root", s(&t), "--hermetic", "--dry-run"]),
    ] {
        let all = r.all();
        assert_eq!(r.code, Some(1), "{all}");
        assert!(all.contains("fs/not-regular"), "{all}");
        assert!(r.took < Duration::from_secs(30));
    }
}

#[test]
fn directory_loops_end_quickly_with_an_error() {
    let (_tmp, t) = tree();
    // One loop link, then two sibling loop links (exponential for a walker without cycle
    // detection).
    symlink("..", t.join("configs/l1")).unwrap();
    symlink("..", lane_dir(&t).join("a")).unwrap();
    symlink(".", lane_dir(&t).join("b")).unwrap();
    let r = validate(&t);
    let all = r.all();
    assert_eq!(r.code, Some(1), "{all}");
    assert_eq!(all.matches("fs/symlink-loop").count(), 3, "{all}");
    assert!(r.took < Duration::from_secs(20), "{:?}", r.took);
    // Every file was checked once: the loops added none.
    let bundled = run(&[
        "validate",
        "--root",
        s(&xtask::paths::default_tree()),
        "--all",
        "--hermetic",
    ]);
    let files = |r: &Run| {
        r.all()
            .lines()
            .find(|l| l.starts_with("yaml"))
            .map(str::to_string)
    };
    assert_eq!(
        files(&r).map(|l| l.split('[').nth(1).map(str::to_string)),
        { files(&bundled).map(|l| l.split('[').nth(1).map(str::to_string)) }
    );
}

#[test]
fn closed_stdout_ends_quietly_with_the_verdict() {
    let (_tmp, t) = tree();
    // A clean tree: validate's verdict is 0 even though nobody reads its report.
    for (args, verdict) in [
        (
            vec!["validate", "--root", s(&t), "--all", "--hermetic"],
            Some(0),
        ),
        (vec!["review", "check", "--root", s(&t)], None),
    ] {
        let mut c = xtask();
        c.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        // The reader goes away before the first line is written (`| head -0`).
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert_ne!(status.code(), Some(101), "{args:?}: {err}");
        match verdict {
            Some(v) => assert_eq!(status.code(), Some(v), "{args:?}: {err}"),
            None => assert!(matches!(status.code(), Some(0 | 1)), "{args:?}: {status}"),
        }
    }
}

/// `setpriv` to nobody, or `None` (and a visible SKIP) when this test cannot drop privileges.
fn as_nobody(args: &[&str]) -> Option<Run> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        eprintln!("SKIP: unreadable-folder test needs root to switch to nobody");
        return None;
    }
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("HOME", "/nonexistent")
        .env("INFX_HERMETIC", "1");
    Some(run_with_deadline(c, Duration::from_secs(60)))
}

#[test]
fn unreadable_folder_fails_naming_it_as_an_unprivileged_user() {
    let (tmp, t) = tree();
    // nobody must reach the tree and read everything but the one folder.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let chmod = |p: &Path, mode| {
        Command::new("chmod")
            .args(["-R", mode])
            .arg(p)
            .status()
            .unwrap()
    };
    chmod(&t, "a+rX");
    let bench = t.join("benchmarks");
    std::fs::set_permissions(&bench, std::fs::Permissions::from_mode(0o000)).unwrap();
    let runs = [
        (as_nobody(&["review", "check", "--root", s(&t)]), "review"),
        (
            as_nobody(&["validate", "--root", s(&t), "--all", "--hermetic"]),
            "validate",
        ),
        (as_nobody(&["pin", "--root", s(&t), "--hermetic"]), "pin"),
    ];
    std::fs::set_permissions(&bench, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (r, what) in runs {
        let Some(r) = r else { return };
        let all = r.all();
        assert_eq!(r.code, Some(1), "{what}: {all}");
        assert!(
            all.contains("fs/unreadable") && all.contains("tree/benchmarks:"),
            "{what} names the folder: {all}"
        );
    }
}

#[test]
fn forged_workflow_commands_in_dry_run_output_stay_on_their_line() {
    // (The diagnostics renderer of crates/report escapes its own output; this is the text
    // xtask prints itself: variant headers and rendered launch commands.)
    let (tmp, _t) = tree();
    let recipe = tmp.path().join("forged.yaml");
    std::fs::write(
        &recipe,
        "name: \"x\\n::error file=a.yaml::forged\"\nmodel:\n  path: /models/x\n  container: img\n  precision: fp8\nresources:\n  gpu_type: h100\n  gpus_per_node: 8\n  agg_nodes: 1\nbackend:\n  type: sglang\n  sglang_config:\n    aggregated:\n      tp-size: 8\nbenchmark:\n  type: manual\n",
    )
    .unwrap();
    let r = run(&["dry-run", s(&recipe)]);
    let all = r.all();
    assert!(all.contains("forged"), "the name is shown: {all}");
    assert!(
        !all.lines().any(|l| l.starts_with("::")),
        "a forged workflow command line:\n{all}"
    );
}

#[test]
fn symlink_to_the_checkout_token_in_git_config_is_refused() {
    // actions/checkout leaves the job's token in .git/config; the link stays inside the
    // repository, so confinement alone would not stop it.
    let (tmp, t) = tree();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(tmp.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", tmp.path())
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "config",
        "http.extraheader",
        &format!("AUTHORIZATION: basic {SECRET}"),
    ]);
    symlink("../../../.git/config", lane_dir(&t).join("token.yaml")).unwrap();
    for r in [validate(&t), run(&["review", "check", "--root", s(&t)])] {
        let all = r.all();
        assert!(!all.contains(SECRET), "the token leaked:\n{all}");
        assert_eq!(r.code, Some(1), "{all}");
        assert!(all.contains("fs/outside-root"), "{all}");
    }
}

#[test]
fn oversized_file_is_refused_before_reading_and_never_echoed() {
    let (_tmp, t) = tree();
    // 17 MiB on one line: over the 16 MiB limit.
    let big = lane_dir(&t).join("big.yaml");
    let line = format!("k: {}\n", "x".repeat(17 * 1024 * 1024));
    std::fs::write(&big, &line).unwrap();
    for r in [validate(&t), run(&["review", "check", "--root", s(&t)])] {
        let all = r.all();
        assert_eq!(r.code, Some(1), "{}", &all[..all.len().min(2000)]);
        assert!(
            all.contains("fs/too-large"),
            "{}",
            &all[..all.len().min(2000)]
        );
        assert!(all.len() < 64 * 1024, "{} bytes of output", all.len());
    }
}
