//! Gate mode validates the master config entries it plans (docs/changelog.md, "Diagnostic codes": gate mode): a
//! planned entry with `tp: eight` fails `changelog check --mode gate` with the config rule's
//! code at the entry's line, as `matrix` fails on it; an unplanned broken entry does not.

use std::path::Path;

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn entry(key: &str, tp: &str) -> String {
    format!(
        "{key}:\n  image: lmsysorg/sglang:v1\n  model: org/model\n  model-prefix: m\n  runner: b200\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - tp: {tp}\n        conc-start: 4\n        conc-end: 8\n"
    )
}

fn changelog_entry(key: &str) -> String {
    format!("- config-keys:\n    - {key}\n  description:\n    - Update {key}\n  pr-link: XXX\n")
}

/// A repository whose head commit sets `tp` of `m-fp8-b200-sglang` to `planned_tp` and of
/// `o-fp8-b200-sglang` to `other_tp`, and appends a changelog entry for the first only.
fn repo(planned_tp: &str, other_tp: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path();
    git(p, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(p.join("configs")).expect("mkdir");
    let write = |rel: &str, text: &str| std::fs::write(p.join(rel), text).expect("write");
    write("configs/amd-master.yaml", "{}\n");
    write(
        "configs/runners.yaml",
        "labels:\n  b200: [b200-nv_0, b200-nv_1]\n",
    );
    let masters = |a: &str, b: &str| {
        format!(
            "{}{}",
            entry("m-fp8-b200-sglang", a),
            entry("o-fp8-b200-sglang", b)
        )
    };
    write("configs/nvidia-master.yaml", &masters("4", "4"));
    let base = changelog_entry("m-fp8-b200-sglang")
        .replace("XXX", "https://github.com/SemiAnalysisAI/InferenceX/pull/1");
    write("perf-changelog.yaml", &base);
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "base"]);
    write("configs/nvidia-master.yaml", &masters(planned_tp, other_tp));
    write(
        "perf-changelog.yaml",
        &format!("{base}\n{}", changelog_entry("m-fp8-b200-sglang")),
    );
    git(p, &["commit", "-q", "-am", "change"]);
    d
}

fn gate(p: &Path) -> (i32, String) {
    let o = std::process::Command::new(XTASK)
        .args(["changelog", "check", "--repo"])
        .arg(p)
        .args(["--base", "HEAD~1", "--head", "HEAD", "--mode", "gate"])
        .output()
        .expect("xtask runs");
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

#[test]
fn a_planned_entry_breaking_a_config_rule_fails_the_gate_at_its_line() {
    let d = repo("4", "4");
    let (code, out) = gate(d.path());
    assert_eq!(code, 0, "a valid planned entry passes the gate: {out}");

    let d = repo("eight", "4");
    let (code, out) = gate(d.path());
    assert_eq!(code, 1, "{out}");
    // `tp: eight` is line 14 of the head's nvidia-master.yaml, the value at column 13.
    assert!(out.contains("config/type"), "{out}");
    assert!(
        out.contains("configs/nvidia-master.yaml:14:13"),
        "the finding points at the value: {out}"
    );
}

#[test]
fn an_unplanned_broken_entry_is_left_to_validate_and_matrix() {
    let d = repo("4", "eight");
    let (code, out) = gate(d.path());
    assert_eq!(code, 0, "{out}");
}
