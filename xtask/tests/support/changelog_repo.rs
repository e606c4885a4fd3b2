//! A changelog repository for the merge-driver tests of xtask (xtask/tests/changelog.rs) and
//! xtask-dev (xtask-dev/tests/changelog.rs): git run without the user's identity, entries, and a
//! `main` with a two-entry changelog, master configs and the driver installed.
#![allow(dead_code)]

use std::path::Path;

pub(crate) fn git(dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    let mut full: Vec<String> = [
        "-C",
        &dir.display().to_string(),
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    full.extend(args.iter().map(|s| s.to_string()));
    duct::cmd("git", full)
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
}

pub(crate) fn ok(dir: &Path, args: &[&str]) {
    let out = git(dir, args).expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn entry(key: &str, link: &str) -> String {
    format!("- config-keys:\n    - {key}\n  description:\n    - Change {key}\n  pr-link: {link}\n")
}

pub(crate) const MAIN_LINK: &str = "https://github.com/SemiAnalysisAI/InferenceX/pull/1";

/// A repo on `main` with a two-entry changelog, master configs and the driver installed.
pub(crate) fn repo(xtask: &Path) -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path();
    ok(p, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(p.join("configs")).expect("mkdir");
    std::fs::write(
        p.join("configs/amd-master.yaml"),
        "a-mi355x-sglang:\n  image: x\n",
    )
    .expect("write");
    std::fs::write(
        p.join("configs/nvidia-master.yaml"),
        "b-b200-vllm:\n  image: y\nc-b200-vllm:\n  image: z\n",
    )
    .expect("write");
    let base = format!(
        "{}\n{}",
        entry("a-mi355x-sglang", MAIN_LINK),
        entry("b-b200-vllm", MAIN_LINK)
    );
    std::fs::write(p.join("perf-changelog.yaml"), base).expect("write");
    std::fs::write(p.join(".gitattributes"), "perf-changelog.yaml merge=infx-changelog\ninferencex-e2e/perf-changelog.yaml merge=infx-changelog\n")
        .expect("write");
    ok(p, &["add", "."]);
    ok(p, &["commit", "-q", "-m", "base"]);
    let st = std::process::Command::new(xtask)
        .args([
            "install-merge-driver",
            "--repo",
            &p.display().to_string(),
            "--command",
            &xtask.display().to_string(),
        ])
        .status()
        .expect("xtask runs");
    assert!(st.success());
    d
}
