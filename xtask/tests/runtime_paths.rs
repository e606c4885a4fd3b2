//! A copied `xtask` binary validates the checkout the user stands in, not the one it was built
//! in (defaults come from the current directory at run time; see xtask/src/paths.rs).

use std::path::Path;
mod support;
use support::{copy_dir, git};

/// Runs the copied binary in `cwd`; returns (exit code, stdout, stderr).
fn run_in(bin: &Path, cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = duct::cmd(bin, args)
        .dir(cwd)
        .env_remove("GITHUB_ACTIONS")
        .env("NO_COLOR", "1")
        .stdin_null()
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .expect("the copied binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_copied_binary_validates_the_clone_it_runs_in() {
    let ws = xtask::paths::workspace_root();
    let tmp = tempfile::tempdir().expect("tempdir");
    // The binary, copied away from its build directory.
    let bin_dir = tmp.path().join("bin");
    std::fs::create_dir_all(&bin_dir).expect("mkdir");
    let bin = bin_dir.join("xtask");
    std::fs::copy(env!("CARGO_BIN_EXE_xtask"), &bin).expect("copy the binary");

    // Another clone: the bundled tree, committed on main.
    let clone = tmp.path().join("other-clone");
    copy_dir(&ws.join("inferencex-e2e"), &clone.join("inferencex-e2e"));
    copy_dir(&ws.join(".github"), &clone.join(".github"));
    git(&clone, &["init", "-q", "-b", "main"]);
    git(&clone, &["config", "user.email", "dev@example.com"]);
    git(&clone, &["config", "user.name", "Dev"]);
    git(&clone, &["add", "-A"]);
    git(&clone, &["commit", "-q", "-m", "bundled tree"]);

    // A fault only this clone has: a duplicate key in the master config (uncommitted).
    let master = clone.join("inferencex-e2e/configs/nvidia-master.yaml");
    let text = std::fs::read_to_string(&master).expect("read master");
    let first_key_line = text
        .lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty() && !l.starts_with(' '))
        .expect("a top-level key")
        .to_string();
    let block_start = text.find(&first_key_line).expect("key");
    let next = text[block_start + first_key_line.len()..]
        .find("\n\n")
        .map(|i| block_start + first_key_line.len() + i)
        .unwrap_or(text.len());
    let block = &text[block_start..next];
    std::fs::write(&master, format!("{text}\n{block}\n")).expect("write master");

    // From a subdirectory of the clone, with no --root.
    let cwd = clone.join("inferencex-e2e").join("configs");
    let (code, stdout, stderr) = run_in(&bin, &cwd, &["validate", "--format", "json"]);
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("yaml/duplicate-key")
            && stdout.contains("inferencex-e2e/configs/nvidia-master.yaml"),
        "the clone's fault is reported:\n{stdout}\n{stderr}"
    );

    // Without the fault the same binary passes there.
    std::fs::write(&master, &text).expect("restore master");
    let (code, stdout, stderr) = run_in(&bin, &cwd, &["validate"]);
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
}

#[test]
fn help_states_the_default_rule_not_a_build_path() {
    let build_dir = xtask::paths::workspace_root();
    for cmd in [
        &["validate", "--help"][..],
        &["pin", "--help"],
        &["dry-run", "--help"],
        &["review", "check", "--help"],
    ] {
        let (code, stdout, _) = run_in(Path::new(env!("CARGO_BIN_EXE_xtask")), &build_dir, cmd);
        assert_eq!(code, Some(0), "{cmd:?}");
        assert!(
            !stdout.contains(&build_dir.display().to_string()),
            "{cmd:?} --help shows a build path:\n{stdout}"
        );
        assert!(
            stdout.contains("enclosing"),
            "{cmd:?} --help states the rule:\n{stdout}"
        );
    }
}
