//! Impact in upstream's layout. Launchers are part of the row (docs/changelog.md, "Launchers are
//! part of the row"): an edit
//! of the script a single-node row runs needs an entry for the configs that run it — upstream's
//! review bot asked for one on #2538 (`--long-prefill-token-threshold 512` added to
//! `minimaxm3_fp4_b200_mtp.sh`, no entry) — while a comment edit needs none and a shared script
//! is named as not assessed. Each test is an upstream-style git repository (configs/ and
//! benchmarks/ at the root) with `main` as the base and the edit in the work tree.

use std::path::Path;
use std::process::Command;
mod support;
use support::{edit, git};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

/// Two single-node entries of one model on B200: `plain` runs the framework-tagged launcher,
/// `mtp` the historical `_mtp` one (no `m_fp4_b200_vllm_mtp.sh` exists).
fn entry(key: &str, spec: &str) -> String {
    format!(
        "{key}:
  image: vllm/vllm-openai:v0.25.0@sha256:{digest}
  model: org/m
  model-prefix: m
  runner: b200
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {{ tp: 8, conc-start: 4, conc-end: 8{spec} }}
",
        digest = "0".repeat(64)
    )
}

/// A multinode entry whose one row binds `setting` (upstream's `CONFIG_FILE=` convention).
fn multinode(key: &str, setting: &str) -> String {
    format!(
        "{key}:
  image: lmsysorg/sglang:v0.5.9@sha256:{digest}
  model: org/n
  model-prefix: n
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

/// An agentic entry on the `cluster:b200-x` runner, with (`dram`) or without DRAM offload rows.
fn agentic(key: &str, offload: &str) -> String {
    format!(
        "{key}:
  image: vllm/vllm-openai:v0.25.0@sha256:{digest}
  model: org/k
  model-prefix: k
  runner: cluster:b200-x
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.80
      search-space:
      - {{ tp: 8, kv-offloading: {offload}, conc-list: [32, 40] }}
",
        digest = "0".repeat(64)
    )
}

/// The bundle both multinode entries bind, one variant each.
const BUNDLE: &str = "base:
  name: n-bundle
  model: {path: /models/n, container: dynamo-sglang, precision: fp4}
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
const BUNDLE_PATH: &str = "benchmarks/multi_node/srt-slurm-recipes/t/bundle.yaml";

const LAUNCHER: &str = "#!/usr/bin/env bash\n# Serves the model and benchmarks it.\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\nvllm serve \"$MODEL\" --tensor-parallel-size \"$TP\"\nrun_benchmark_serving --use-chat-template\n";

const PLAIN: &str = "benchmarks/single_node/fixed_seq_len/m_fp4_b200_vllm.sh";
const MTP: &str = "benchmarks/single_node/fixed_seq_len/m_fp4_b200_mtp.sh";
/// The historical name of the plain entry's launcher: present, but the tagged one wins.
const HISTORICAL: &str = "benchmarks/single_node/fixed_seq_len/m_fp4_b200.sh";
const LIB: &str = "benchmarks/benchmark_lib.sh";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// The repository on `main`, committed, in `<tmp>/repo`; edits go to the work tree. Beside it,
/// outside the repository, lies a CODEOWNERS that must never be read (an upstream-style root's
/// parent is not the repository; docs/security.md).
struct Repo(tempfile::TempDir);

impl Repo {
    fn path(&self) -> std::path::PathBuf {
        self.0.path().join("repo")
    }
}

fn repo() -> Repo {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), ".github/CODEOWNERS", "* @outside\n");
    let root = &tmp.path().join("repo");
    let masters = [
        entry("m-fp4-b200-vllm", ""),
        entry("m-fp4-b200-vllm-mtp", ", spec-decoding: mtp"),
        multinode(
            "n-fp4-gb300-a",
            "CONFIG_FILE=recipes/t/bundle.yaml:override_a",
        ),
        multinode(
            "n-fp4-gb300-b",
            "CONFIG_FILE=recipes/t/bundle.yaml:override_b",
        ),
        agentic(
            "k-fp4-b200-vllm-agentic-dram",
            "dram, kv-offload-backend: { name: vllm-native }",
        ),
        agentic("k-fp4-b200-vllm-agentic", "none"),
    ]
    .concat();
    write(root, BUNDLE_PATH, BUNDLE);
    write(root, "configs/nvidia-master.yaml", &masters);
    write(root, "configs/amd-master.yaml", "{}\n");
    write(
        root,
        "configs/runners.yaml",
        "labels:\n  b200:\n    - b200-dgxc_0\n  gb300:\n    - gb300-nv_0\n  cluster:b200-x:\n    - b200-x_0\nhardware:\n  cluster:b200-x:\n    gpus-per-node: 8\n    available-cpu-dram-mib: 2_000_000\n  b200:\n    gpus-per-node: 8\n    available-cpu-dram-mib: 1000000\n  gb300:\n    gpus-per-node: 4\n    available-cpu-dram-mib: 1000000\n",
    );
    write(
        root,
        "perf-changelog.yaml",
        "- config-keys:\n    - m-fp4-b200-vllm\n    - m-fp4-b200-vllm-mtp\n    - n-fp4-gb300-a\n    - n-fp4-gb300-b\n    - k-fp4-b200-vllm-agentic-dram\n    - k-fp4-b200-vllm-agentic\n  description:\n    - \"Add m on B200\"\n  pr-link: https://github.com/o/r/pull/1\n",
    );
    for rel in [PLAIN, MTP, HISTORICAL] {
        write(root, rel, LAUNCHER);
    }
    write(root, LIB, "run_benchmark_serving() { :; }\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(
        root,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "-m",
            "base",
        ],
    );
    Repo(tmp)
}

/// `validate --base main` in the repository: (exit code, the entry-required findings' config
/// keys and locations, the whole output).
fn validate(root: &Path) -> (i32, Vec<String>, String) {
    let out = Command::new(XTASK)
        .args(["validate", "--base", "main", "--format", "json"])
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env("INFX_HERMETIC", "1")
        .output()
        .expect("xtask runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let mut found = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["code"] == "changelog/entry-required" {
            found.push(format!(
                "{} {}:{}",
                v["message"]
                    .as_str()
                    .and_then(|m| m.split('\'').nth(1))
                    .unwrap_or(""),
                v["path"].as_str().unwrap_or(""),
                v["line"]
            ));
        }
    }
    (out.status.code().unwrap_or(-1), found, all)
}

#[test]
fn a_launcher_edit_needs_an_entry_for_the_configs_that_run_it() {
    let tmp = repo();
    edit(&tmp.path(), MTP, |t| {
        t.replace(
            "--tensor-parallel-size \"$TP\"",
            "--tensor-parallel-size \"$TP\" --long-prefill-token-threshold 512",
        )
    });
    let (code, found, all) = validate(&tmp.path());
    assert_eq!(found, vec![format!("m-fp4-b200-vllm-mtp {MTP}:4")], "{all}");
    assert_eq!(code, 1, "{all}");
    assert!(
        all.contains("launcher `m_fp4_b200_mtp.sh` changed"),
        "{all}"
    );
}

#[test]
fn the_tagged_launcher_wins_over_the_historical_name() {
    let tmp = repo();
    edit(&tmp.path(), PLAIN, |t| {
        t.replace("--use-chat-template", "--use-chat-template --seed 1")
    });
    let (_, found, all) = validate(&tmp.path());
    assert_eq!(found, vec![format!("m-fp4-b200-vllm {PLAIN}:5")], "{all}");
    // The historical file is run by no config: named as not assessed, never an entry.
    let tmp = repo();
    edit(&tmp.path(), HISTORICAL, |t| {
        t.replace("--use-chat-template", "--seed 1")
    });
    let (code, found, all) = validate(&tmp.path());
    assert_eq!(found, Vec::<String>::new(), "{all}");
    assert_eq!(code, 0, "{all}");
    assert!(
        all.contains(&format!("impact not assessed for {HISTORICAL}")),
        "{all}"
    );
}

#[test]
fn a_comment_edit_needs_no_entry_and_a_shared_script_is_named() {
    let tmp = repo();
    edit(&tmp.path(), PLAIN, |t| {
        t.replace("# Serves", "# Starts and serves")
    });
    edit(&tmp.path(), LIB, |t: String| {
        format!("{t}run_eval() {{ :; }}\n")
    });
    let (code, found, all) = validate(&tmp.path());
    assert_eq!(found, Vec::<String>::new(), "{all}");
    assert_eq!(code, 0, "{all}");
    assert!(
        all.contains(&format!("impact not assessed for {LIB}")),
        "{all}"
    );
}

/// Upstream's AGENTS.md invariant (docs/review.md, "Upstream's invariants"): an MTP launcher
/// the change touches benchmarks with the chat template.
#[test]
fn an_mtp_launcher_without_the_chat_template_is_a_review_error() {
    let tmp = repo();
    edit(&tmp.path(), MTP, |t: String| {
        t.replace(" --use-chat-template", "")
    });
    let (code, _, all) = validate(&tmp.path());
    assert_eq!(code, 1, "{all}");
    assert!(
        all.contains("\"code\":\"review/mtp-chat-template\"")
            && all.contains(
                "`m_fp4_b200_mtp.sh` runs `run_benchmark_serving` without `--use-chat-template`"
            ),
        "{all}"
    );
    // The plain launcher may drop it.
    let tmp = repo();
    edit(&tmp.path(), PLAIN, |t| {
        t.replace(" --use-chat-template", "")
    });
    let (_, _, all) = validate(&tmp.path());
    assert!(!all.contains("review/mtp-chat-template"), "{all}");
}

/// A recipe bound by `CONFIG_FILE=` runs as written: an edit of the variant one config selects
/// needs an entry for that config only (docs/changelog.md, "Impact is about rows").
#[test]
fn a_config_file_recipe_edit_needs_an_entry_for_the_configs_binding_it() {
    let tmp = repo();
    edit(&tmp.path(), BUNDLE_PATH, |t: String| {
        t.replace("mem-fraction-static: 0.8", "mem-fraction-static: 0.85")
    });
    let (code, found, all) = validate(&tmp.path());
    assert_eq!(
        found,
        vec![format!("n-fp4-gb300-a {BUNDLE_PATH}:10")],
        "{all}"
    );
    assert_eq!(code, 1, "{all}");
}

/// A `hardware:` fact that a row carries (`available-cpu-dram-mib` gives `total-cpu-dram-gb`)
/// impacts the DRAM-offload configs on that runner and no other (issue 38: upstream's
/// `runners.yaml` DRAM edit changed 12 of 32 rows of a DRAM-offload config and got no finding).
#[test]
fn a_dram_edit_needs_an_entry_for_the_dram_offload_configs_only() {
    let tmp = repo();
    edit(&tmp.path(), "configs/runners.yaml", |t: String| {
        t.replace(
            "available-cpu-dram-mib: 2_000_000",
            "available-cpu-dram-mib: 1_500_000",
        )
    });
    let (code, found, all) = validate(&tmp.path());
    assert_eq!(found.len(), 1, "{all}");
    assert!(
        found[0].starts_with("k-fp4-b200-vllm-agentic-dram configs/runners.yaml:"),
        "{all}"
    );
    assert!(all.contains("`total-cpu-dram-gb`"), "{all}");
    assert_eq!(code, 1, "{all}");
}

/// Adding a runner node to a label's pool (issue 38: upstream #2672, #2404, #2094) leaves every
/// config's generated rows byte-identical, so no config needs an entry.
#[test]
fn a_runner_node_added_to_a_pool_needs_no_entry() {
    let tmp = repo();
    edit(&tmp.path(), "configs/runners.yaml", |t: String| {
        t.replace(
            "    - b200-dgxc_0\n",
            "    - b200-dgxc_0\n    - b200-dgxc_1\n",
        )
    });
    let (code, found, all) = validate(&tmp.path());
    assert!(found.is_empty(), "{all}");
    assert!(
        all.contains("[1 path changed since"),
        "the change is seen: {all}"
    );
    assert!(
        all.contains("[0 impacted configs, 0 appended entries]"),
        "{all}"
    );
    assert_eq!(code, 0, "{all}");
}
