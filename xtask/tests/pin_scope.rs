//! `cargo xtask pin` the way a contributor uses it (issue 15 item 3, issue 17's pin set
//! atomicity): by default only references that are unpinned or changed are pinned; `--only`
//! names one; `--refresh` re-pins moved tags (listed first); a reference that cannot be pinned
//! does not hold back the others; a run killed between its renames is completed by the next.
//! Against a loopback registry (tests/support/registry.rs).

use std::path::Path;
use std::process::{Command, Stdio};
mod support;
use support::git;
#[path = "support/registry.rs"]
mod registry;

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");
const MASTER: &str = "configs/nvidia-master.yaml";
const RECIPE: &str = "benchmarks/single_node/srt-slurm-recipes/m/sglang/r.yaml";

/// A committed tree: entries `a` (pinned), `b` (pinned), `c` (pinned); a recipe naming an
/// unpinned container. Returns (repository, registry).
fn repo_with_pins() -> (tempfile::TempDir, registry::Registry) {
    let reg = registry::Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    std::fs::create_dir_all(root.join("configs")).expect("mkdir");
    std::fs::create_dir_all(root.join(Path::new(RECIPE).parent().expect("dir"))).expect("mkdir");
    let master = format!(
        "a:\n  image: lmsysorg/sglang:v1@{}\n  model: m\nb:\n  image: lmsysorg/sglang:v2@{}\n  model: m\nc:\n  image: vllm/vllm-openai:v3@{}\n  model: m\n",
        reg.digest_of("lmsysorg/sglang:v1"),
        reg.digest_of("lmsysorg/sglang:v2"),
        reg.digest_of("vllm/vllm-openai:v3"),
    );
    std::fs::write(root.join(MASTER), master).expect("write");
    std::fs::write(
        root.join(RECIPE),
        "name: r\nmodel:\n  container: lmsysorg/sglang:v1\n",
    )
    .expect("write");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.email", "dev@example.com"]);
    git(root, &["config", "user.name", "Dev"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "tree"]);
    (tmp, reg)
}

/// `cargo xtask pin --registry-override … <args>` in `root`: (exit code, stdout + stderr with
/// the registry address and digests made stable).
fn pin(
    root: &Path,
    reg: &registry::Registry,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, String) {
    let override_arg = format!("docker.io={}", reg.url);
    let mut argv = vec!["pin", "--registry-override", override_arg.as_str()];
    argv.extend_from_slice(args);
    // One stream, in the order written: what is listed before writing must come first.
    let mut cmd = duct::cmd(XTASK, &argv)
        .dir(root)
        .env("HOME", root)
        .env_remove("INFX_HERMETIC")
        .env_remove("NIX_BUILD_TOP")
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked();
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let out = cmd.run().expect("xtask runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), stable(&text, reg))
}

/// The loopback address as `<registry>`, digests as `<first 8 hex>`: stable across runs and
/// enough to tell them apart in a snapshot.
fn stable(text: &str, reg: &registry::Registry) -> String {
    let mut out = text.replace(&reg.url, "<registry>");
    while let Some(i) = out.find("sha256:") {
        let end = (i + 7 + 64).min(out.len());
        let short = format!("<{}>", &out[i + 7..(i + 7 + 8).min(end)]);
        out.replace_range(i..end, &short);
    }
    out
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).expect("read")
}

#[test]
fn pin_by_default_touches_only_unpinned_and_changed_references() {
    let (tmp, reg) = repo_with_pins();
    let root = tmp.path();
    // Every tag moves; the change edits entry b's tag only.
    for t in [
        "lmsysorg/sglang:v1",
        "lmsysorg/sglang:v2",
        "vllm/vllm-openai:v3",
    ] {
        reg.move_tag(t);
    }
    support::edit(root, MASTER, |t| {
        t.replacen("sglang:v2@", "sglang:v2.1@", 1)
    });
    let before = read(root, MASTER);
    let (code, out) = pin(root, &reg, &[], &[]);
    assert_eq!(code, 0, "{out}");
    let after = read(root, MASTER);
    // a and c (untouched, pinned) keep their digests although their tags moved.
    let line = |text: &str, key: &str| {
        let start = text.find(&format!("{key}:\n")).expect("entry");
        text[start..]
            .lines()
            .nth(1)
            .expect("image line")
            .to_string()
    };
    assert_eq!(line(&after, "a"), line(&before, "a"));
    assert_eq!(line(&after, "c"), line(&before, "c"));
    assert!(after.contains(&format!(
        "sglang:v2.1@{}",
        reg.digest_of("lmsysorg/sglang:v2.1")
    )));
    assert!(read(root, RECIPE).contains(&format!(
        "sglang:v1@{}",
        reg.digest_of("lmsysorg/sglang:v1")
    )));
    insta::assert_snapshot!("pin_default_scope", out);

    // --refresh: the moved tags of a and c, listed before they are written.
    let (code, out) = pin(root, &reg, &["--refresh"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(read(root, MASTER).contains(&reg.digest_of("vllm/vllm-openai:v3")));
    let listed = out
        .find("pin --refresh: 2 pinned reference(s)")
        .expect("listed");
    assert!(
        listed < out.find("configs/nvidia-master.yaml:2:").expect("written"),
        "{out}"
    );
    insta::assert_snapshot!("pin_refresh", out);
}

#[test]
fn pin_only_one_reference_and_failures_do_not_block_the_others() {
    let (tmp, reg) = repo_with_pins();
    let root = tmp.path();
    reg.move_tag("lmsysorg/sglang:v1");
    reg.move_tag("vllm/vllm-openai:v3");
    // --only by config key: c alone (a's tag moved too, and the recipe is unpinned).
    let (code, out) = pin(root, &reg, &["--only", "c"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(read(root, MASTER).contains(&reg.digest_of("vllm/vllm-openai:v3")));
    assert!(!read(root, MASTER).contains(&reg.digest_of("lmsysorg/sglang:v1")));
    assert!(!read(root, RECIPE).contains('@'));
    insta::assert_snapshot!("pin_only_key", out);
    // --only by reference: every site of that reference (the recipe's unpinned one and a).
    let (code, out) = pin(root, &reg, &["--only", "lmsysorg/sglang:v1"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(read(root, RECIPE).contains(&reg.digest_of("lmsysorg/sglang:v1")));
    // --only that names nothing fails and says so.
    let (code, out) = pin(root, &reg, &["--only", "nope"], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("--only `nope` names no reference"), "{out}");

    // One unresolvable tag in the change: reported, the other change still pinned.
    support::edit(root, MASTER, |t| {
        t.replacen("sglang:v2@", "sglang:missing@", 1).replacen(
            "vllm-openai:v3@",
            "vllm-openai:v4@",
            1,
        )
    });
    let (code, out) = pin(root, &reg, &[], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[image/tag-not-found]"), "{out}");
    assert!(
        read(root, MASTER).contains(&reg.digest_of("vllm/vllm-openai:v4")),
        "{out}"
    );
    insta::assert_snapshot!("pin_one_failure", out);
}

#[test]
fn a_pin_killed_between_its_renames_is_completed_by_the_next_run() {
    let (tmp, reg) = repo_with_pins();
    let root = tmp.path();
    // Two files to write: the unpinned recipe and a changed master entry.
    support::edit(root, MASTER, |t| t.replacen("sglang:v2@", "sglang:v5@", 1));
    let journal = root.join(".git/infx-pin.journal");
    let marker = root.join(".git/infx-pin.journal.stopped");
    let mut child = Command::new(XTASK)
        .arg("pin")
        .args(["--registry-override", &format!("docker.io={}", reg.url)])
        .current_dir(root)
        .env("HOME", root)
        .env("INFX_PIN_TEST_STOP_AFTER_RENAMES", "1")
        .env_remove("INFX_HERMETIC")
        .env_remove("NIX_BUILD_TOP")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let started = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the pin never reached its first rename"
        );
        if let Ok(Some(status)) = child.try_wait() {
            panic!("pin exited before its first rename: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL"); // SIGKILL on Unix: no cleanup runs.
    let _ = child.wait();
    std::fs::remove_file(&marker).expect("marker");
    // Half written: one file has its pin, the other not; the journal records the set.
    let pinned = |rel: &str, tag: &str| read(root, rel).contains(&reg.digest_of(tag));
    let halves = [
        pinned(MASTER, "lmsysorg/sglang:v5"),
        pinned(RECIPE, "lmsysorg/sglang:v1"),
    ];
    assert_eq!(halves.iter().filter(|p| **p).count(), 1, "{halves:?}");
    assert!(journal.is_file());
    // --check does not write, and says how to finish.
    let (_, out) = pin(root, &reg, &["--check"], &[]);
    assert!(out.contains("an interrupted pin left its journal"), "{out}");
    // The next run completes the set before anything else.
    let (code, out) = pin(root, &reg, &[], &[]);
    assert!(
        pinned(MASTER, "lmsysorg/sglang:v5") && pinned(RECIPE, "lmsysorg/sglang:v1"),
        "{out}"
    );
    assert!(!journal.exists());
    assert!(
        out.contains("pin: completed an interrupted pin: 2 file(s) now hold their pins"),
        "{out}"
    );
    assert_eq!(code, 0, "{out}");
    let litter: Vec<_> = std::fs::read_dir(root.join("configs"))
        .expect("ls")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("infx-pin"))
        .collect();
    assert!(litter.is_empty(), "{litter:?}");
}

#[test]
fn pin_check_without_a_reachable_registry_ends_with_what_to_do() {
    let (tmp, reg) = repo_with_pins();
    // A port nothing listens on: the registry is unreachable, as offline.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead = format!("docker.io=http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let out = duct::cmd(
        XTASK,
        ["pin", "--check", "--registry-override", dead.as_str()],
    )
    .dir(tmp.path())
    .env("HOME", tmp.path())
    .env_remove("INFX_HERMETIC")
    .env_remove("NIX_BUILD_TOP")
    .stderr_capture()
    .stdout_null()
    .unchecked()
    .run()
    .expect("xtask runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("help: --check asks the registries;")
            && last.contains("--registry-override"),
        "{err}"
    );
    insta::assert_snapshot!("pin_check_unreachable_tail", stable(&err, &reg));
}

/// Issue #42, item 7: a second pin on the same checkout waits for the first (the lock beside
/// the journal) instead of taking its live journal for an interrupted one.
#[test]
fn two_pins_on_one_checkout_take_turns() {
    use std::io::Read as _;
    let (tmp, reg) = repo_with_pins();
    let root = tmp.path();
    support::edit(root, MASTER, |t| t.replacen("sglang:v2@", "sglang:v5@", 1));
    let marker = root.join(".git/infx-pin.journal.stopped");
    let spawn = |stop: bool| {
        let mut c = Command::new(XTASK);
        c.arg("pin")
            .args(["--registry-override", &format!("docker.io={}", reg.url)])
            .current_dir(root)
            .env("HOME", root)
            .env_remove("INFX_HERMETIC")
            .env_remove("NIX_BUILD_TOP")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if stop {
            c.env("INFX_PIN_TEST_STOP_AFTER_RENAMES", "1");
        }
        c.spawn().expect("spawn")
    };
    // The first run stops between its renames, its journal live and its lock held.
    let mut first = spawn(true);
    let started = std::time::Instant::now();
    while !marker.exists() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        if let Ok(Some(status)) = first.try_wait() {
            panic!("the first pin exited before its first rename: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut second = spawn(false);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let waited = second.try_wait().expect("wait").is_none();
    // Whatever the outcome, end the first run (SIGKILL: no cleanup, the kernel drops its lock).
    first.kill().expect("SIGKILL");
    let _ = first.wait();
    let status = second.wait().expect("wait");
    let mut err = String::new();
    let _ = second
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err);
    assert!(waited, "the second pin did not wait for the first:\n{err}");
    assert!(
        err.contains("pin: another pin is running on this checkout; waiting for it"),
        "{err}"
    );
    // Once the first was gone, its journal was an interrupted one: completed, then pinned.
    assert!(err.contains("completed an interrupted pin"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
    let pinned = |rel: &str, tag: &str| read(root, rel).contains(&reg.digest_of(tag));
    assert!(pinned(MASTER, "lmsysorg/sglang:v5") && pinned(RECIPE, "lmsysorg/sglang:v1"));
}

/// Issue #42, item 7: a temporary left by a run killed before its journal is removed by the
/// next run even when that run has nothing to write (and even when the dead run's pid has
/// been reused: here it is this test's own, alive).
#[test]
fn a_run_with_nothing_to_write_still_removes_stale_temporaries() {
    let (tmp, reg) = repo_with_pins();
    let root = tmp.path();
    let (code, out) = pin(root, &reg, &[], &[]);
    assert_eq!(code, 0, "{out}");
    let stale = root.join(format!(
        "configs/.nvidia-master.yaml.infx-pin.{}.tmp",
        std::process::id()
    ));
    std::fs::write(&stale, "half a pin\n").expect("write");
    let (code, out) = pin(root, &reg, &[], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!stale.exists(), "the stale temporary survived:\n{out}");
}
