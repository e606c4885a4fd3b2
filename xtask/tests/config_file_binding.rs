//! Upstream's layout binds multinode points with `additional-settings: - "CONFIG_FILE=recipes/…"`
//! (issue 38, items 1 and 5): such a row is bound, dry-run and recorded like an `srt-recipe`
//! row, and a `dry-run --config-key` that renders nothing is an error that says why. Each test
//! runs the binary on a small upstream-style tree written here (not a git repository).

use std::path::Path;
use std::process::Command;

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

/// A plain srt-slurm recipe (schema 1, disaggregated): one variant, no selector.
const RECIPE: &str = "\
name: t-disagg
model: {path: /models/m, container: c.sqsh, precision: fp4}
resources: {gpu_type: gb300, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
backend:
  sglang_config:
    prefill: {tensor-parallel-size: 4, served-model-name: m}
    decode: {tensor-parallel-size: 4, served-model-name: m}
";

/// A bundle: two variants, so a reference without a selector selects two.
const BUNDLE: &str = "\
base:
  name: t-bundle
  model: {path: /models/m, container: c.sqsh, precision: fp4}
  resources: {gpu_type: gb300, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
  backend:
    sglang_config:
      prefill: {tensor-parallel-size: 4}
      decode: {tensor-parallel-size: 4}
override_a:
  backend: {sglang_config: {decode: {mem-fraction-static: 0.8}}}
override_b:
  backend: {sglang_config: {decode: {mem-fraction-static: 0.7}}}
";

/// One multinode entry whose only row selects `setting` (an `additional-settings` item).
fn entry(key: &str, setting: &str) -> String {
    format!(
        "{key}:
  image: lmsysorg/sglang:v0.5.9@sha256:{digest}
  model: org/m
  model-prefix: m
  runner: gb300
  precision: fp4
  framework: dynamo-sglang
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4, 8]
        prefill:
          num-worker: 1
          tp: 4
          ep: 1
          dp-attn: false
          additional-settings:
          - \"PREFILL_NODES=1\"
          - \"{setting}\"
        decode:
          num-worker: 1
          tp: 4
          ep: 1
          dp-attn: false
",
        digest = "0".repeat(64)
    )
}

/// The tree: master config, runners.yaml ([Aug] shape) and the recipes under the checkout's
/// multinode folder.
fn tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    let masters = [
        entry(
            "m-fp4-gb300-dynamo-sglang",
            "CONFIG_FILE=recipes/t/disagg.yaml",
        ),
        entry(
            "m-fp4-gb300-dynamo-sglang-bundle",
            "CONFIG_FILE=recipes/t/bundle.yaml:override_b",
        ),
        entry(
            "m-fp4-gb300-dynamo-sglang-many",
            "CONFIG_FILE=recipes/t/bundle.yaml",
        ),
        entry(
            "m-fp4-gb300-dynamo-sglang-elsewhere",
            "CONFIG_FILE=recipes/vendor/not-here.yaml",
        ),
        entry("m-fp4-gb300-dynamo-sglang-none", "DECODE_NODES=1"),
    ]
    .concat();
    write("configs/nvidia-master.yaml", &masters);
    write("configs/amd-master.yaml", "{}\n");
    write(
        "configs/runners.yaml",
        "labels:\n  gb300:\n    - gb300-nv_0\nhardware:\n  gb300:\n    gpus-per-node: 4\n    available-cpu-dram-mib: 1000000\n",
    );
    write(
        "benchmarks/multi_node/srt-slurm-recipes/t/disagg.yaml",
        RECIPE,
    );
    write(
        "benchmarks/multi_node/srt-slurm-recipes/t/bundle.yaml",
        BUNDLE,
    );
    tmp
}

/// `cargo xtask <args>` standing in `dir`: (exit code, stdout + stderr).
fn xtask(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(XTASK)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("INFX_HERMETIC", "1")
        .output()
        .expect("xtask runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn dry_run(root: &Path, key: &str) -> (i32, String) {
    let tree = root.to_string_lossy().into_owned();
    xtask(root, &["dry-run", "--tree", &tree, "--config-key", key])
}

#[test]
fn a_config_file_point_is_bound_and_rendered() {
    let t = tree();
    let (code, text) = dry_run(t.path(), "m-fp4-gb300-dynamo-sglang");
    assert_eq!(code, 0, "{text}");
    assert!(
        text.ends_with("dry-run: m-fp4-gb300-dynamo-sglang: 1 point(s) rendered, 0 invalid\n"),
        "{text}"
    );
    // Run as written: the launcher binds nothing into a CONFIG_FILE recipe.
    assert!(
        text.contains("[1/1] recipe: t-disagg\npoint conc 4 8, isl 1024, osl 1024; run as written (CONFIG_FILE"),
        "{text}"
    );
    assert!(text.contains("--tensor-parallel-size 4"), "{text}");

    // A selector picks the bundle's variant.
    let (code, text) = dry_run(t.path(), "m-fp4-gb300-dynamo-sglang-bundle");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("[1/1] override_b: t-bundle"), "{text}");
    assert!(text.contains("--mem-fraction-static 0.7"), "{text}");

    // No selector on a bundle: two variants for one multinode point, the binder's error.
    let (code, text) = dry_run(t.path(), "m-fp4-gb300-dynamo-sglang-many");
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("error[matrix/binding-multinode]"), "{text}");
    assert!(
        text.contains("recipes/t/bundle.yaml selects 2 variants, not one"),
        "{text}"
    );
    assert!(text.contains("to CONFIG_FILE"), "{text}");
}

#[test]
fn validate_binds_config_file_rows_and_records_them() {
    let t = tree();
    let root = t.path().to_string_lossy().into_owned();
    let (code, text) = xtask(t.path(), &["validate", "--root", &root]);
    // The bundle without a selector is the one error of the binder.
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("error[matrix/binding-multinode]"), "{text}");
    assert!(
        text.contains("recipe      ok") && text.contains("1 CONFIG_FILE recipe not in the tree"),
        "{text}"
    );
    assert!(
        text.contains("planned rows of m-fp4-gb300-dynamo-sglang → recipe variant:"),
        "{text}"
    );
    assert!(
        text.contains(
            "benchmarks/multi_node/srt-slurm-recipes/vendor/not-here.yaml  (not in tree)"
        ),
        "{text}"
    );
    let (_, json) = xtask(t.path(), &["validate", "--root", &root, "--format", "json"]);
    let records: Vec<serde_json::Value> = json
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .flat_map(|v| match v {
            serde_json::Value::Array(a) => a,
            other => vec![other],
        })
        .filter(|v| v["record"] == "binding")
        .collect();
    let rows: Vec<(String, String, String)> = records
        .iter()
        .map(|r| {
            (
                r["config-key"].as_str().unwrap_or_default().to_string(),
                r["recipe"].as_str().unwrap_or_default().to_string(),
                r["variant"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let want = |k: &str, recipe: &str, variant: &str| {
        (
            k.to_string(),
            format!("benchmarks/multi_node/srt-slurm-recipes/{recipe}"),
            variant.to_string(),
        )
    };
    assert_eq!(
        rows,
        [
            want("m-fp4-gb300-dynamo-sglang", "t/disagg.yaml", "-"),
            want(
                "m-fp4-gb300-dynamo-sglang-bundle",
                "t/bundle.yaml",
                "override_b"
            ),
            want("m-fp4-gb300-dynamo-sglang-many", "t/bundle.yaml", "-"),
            want(
                "m-fp4-gb300-dynamo-sglang-elsewhere",
                "vendor/not-here.yaml",
                "(not in tree)"
            ),
        ],
        "{json}"
    );
}

#[test]
fn a_dry_run_that_renders_nothing_fails_and_says_why() {
    let t = tree();
    for (key, why) in [
        (
            "m-fp4-gb300-dynamo-sglang-elsewhere",
            "0 of 1 point(s) rendered: 1 run a CONFIG_FILE recipe that is not in this tree",
        ),
        (
            "m-fp4-gb300-dynamo-sglang-none",
            "0 of 1 point(s) rendered: 1 name no srt-slurm recipe",
        ),
    ] {
        let (code, text) = dry_run(t.path(), key);
        assert_eq!(code, 1, "{key}: {text}");
        assert!(text.contains("error[dry-run/nothing-rendered]"), "{text}");
        assert!(text.contains(why), "{text}");
        assert!(
            text.ends_with(&format!("dry-run: {key}: 0 point(s) rendered, 0 invalid\n")),
            "{text}"
        );
    }
    // No such key: the generator's own error, still a failure.
    let (code, text) = dry_run(t.path(), "no-such-key");
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("error["), "{text}");
}

/// `--all` judges the whole tree in a git repository too: every config's planned rows are
/// shown, as outside git (issue #38: "validate --all shows their binding records").
#[test]
fn validate_all_in_a_repository_records_every_config() {
    let t = tree();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(t.path())
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "tree"]);
    let root = t.path().to_string_lossy().into_owned();
    let (_, text) = xtask(t.path(), &["validate", "--root", &root, "--all"]);
    assert!(
        text.contains("planned rows of m-fp4-gb300-dynamo-sglang → recipe variant:"),
        "{text}"
    );
    let (_, json) = xtask(
        t.path(),
        &["validate", "--root", &root, "--all", "--format", "json"],
    );
    let records = json
        .lines()
        .filter(|l| l.contains("\"record\":\"binding\""))
        .count();
    assert_eq!(records, 4, "{json}");
}
