//! `cargo xtask dry-run --resolved`: each variant printed as srtctl would submit it.

use std::process::Command;

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

const BUNDLE: &str = "\
base:
  name: r
  model: {path: /m, container: /c.sqsh, precision: fp8}
  resources: {gpu_type: h100, agg_nodes: 1, agg_workers: 1}
  frontend: {nginx_raise_ulimit: 'on'}
  environment: {KEEP: \"1\"}
  benchmark: {type: manual, isl: null}
override_big:
  resources: {agg_nodes: 2}
zip_override_g:
  benchmark: {osl: [128, 256]}
";

fn dry_run(args: &[&str]) -> (bool, String) {
    let out = Command::new(XTASK)
        .arg("dry-run")
        .args(args)
        .output()
        .expect("xtask runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn resolved_variants_are_printed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.yaml");
    std::fs::write(&path, BUNDLE).unwrap();
    let target = format!("{}:zip_override_g[1]", path.display());
    let (ok, text) = dry_run(&["--quiet", "--resolved", &target]);
    assert!(ok, "{text}");
    let start = text.find("--- resolved\n").expect("a resolved block") + 13;
    let end = start + text[start..].find("\n---\n").expect("its end");
    let block = &text[start..=end];
    // The zip round trip: 'on' became true, the base null went away, the slice is merged.
    assert!(block.contains("name: r_g_1\n"), "{block}");
    assert!(block.contains("  nginx_raise_ulimit: true\n"), "{block}");
    assert!(block.contains("  KEEP: \"1\"\n"), "{block}");
    assert!(
        block.contains("benchmark:\n  type: manual\n  osl: 256\n"),
        "{block}"
    );
    assert!(!block.contains("isl"), "{block}");
    // An override variant keeps its quotes.
    let (ok, text) = dry_run(&[
        "--quiet",
        "--resolved",
        &format!("{}:override_big", path.display()),
    ]);
    assert!(ok, "{text}");
    assert!(text.contains("  nginx_raise_ulimit: \"on\"\n"), "{text}");
    assert!(text.contains("  agg_nodes: 2\n"), "{text}");
    assert!(text.contains("  isl: null\n"), "{text}");
    // JSON: a `resolved` object per variant, only when asked.
    let (_, json) = dry_run(&["--format", "json", "--resolved", &target]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v[0]["variants"][0]["resolved"]["frontend"]["nginx_raise_ulimit"],
        true
    );
    let (_, json) = dry_run(&["--format", "json", &target]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v[0]["variants"][0]["resolved"].is_null());
}
