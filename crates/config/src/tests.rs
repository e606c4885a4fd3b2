//! One failing input per rule: each asserts the code, the file and the line:col of the node.

use super::*;
use crate::codes;
use infx_yaml::parse_str;
use std::sync::Arc;

const RUNNERS_AUG: &str = "\
labels:
  b200: [b200-00, b200-01]
  cluster:b200-dgxc: [b200-dgxc-00]
  gb300: [gb300-00]
hardware:
  cluster:b200-dgxc:
    available-cpu-dram-mib: 1_998_848
    gpus-per-node: 8
";

const RUNNERS_OCT: &str = "\
labels:
  b300: [b300-dsxe_00]
  cluster:b300-dsxe: [b300-dsxe_00]
  gb300: [gb300-nv_00]
  cluster:gb300-nv: [gb300-nv_00]
clusters:
  b300-dsxe:
    gpus-per-node: 8
    available-cpu-dram-mib: 3977095
    arch: x86_64
    scheduler: slurm
    slurm: {partition: batch_1, exclusive: true}
  gb300-nv:
    gpus-per-node: 4
    arch: aarch64
    scheduler: slurm
    slurm: {partition: gb300}
";

const SINGLE: &str = "\
e1:
  image: lmsysorg/sglang:v1
  model: org/m
  model-prefix: m
  precision: fp4
  framework: sglang
  runner: b200
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {tp: 4, ep: 1, conc-start: 1, conc-end: 8}
";

const MULTI: &str = "\
m1:
  image: nvcr.io/nvidia/dynamo:1
  model: org/m
  model-prefix: m
  precision: fp8
  framework: dynamo-trt
  runner: gb300
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - spec-decoding: mtp
        conc-list: [4, 8]
        prefill:
          num-worker: 1
          tp: 4
          ep: 4
          dp-attn: true
        decode:
          num-worker: 1
          tp: 8
          ep: 8
          dp-attn: true
";

const AGENTIC: &str = "\
a1:
  image: lmsysorg/sglang:v1
  model: org/m
  model-prefix: m
  precision: fp4
  framework: sglang
  runner: cluster:b200-dgxc
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.80
      search-space:
      - tp: 8
        kv-offloading: none
        conc-list: [1, 2]
      - tp: 8
        kv-offloading: dram
        kv-offload-backend: {name: hicache}
        conc-list: [8, 16]
      - tp: 8
        ep: 8
        dp-attn: true
        kv-offloading: none
        router: {name: sglang-router, version: \"0.3.2\"}
        conc-list: [64]
";

fn doc(path: &str, text: &str) -> Document {
    let root = match parse_str(Path::new(path), text) {
        Ok(r) => r,
        Err(d) => panic!("fixture does not parse: {d}"),
    };
    Document {
        path: PathBuf::from(path),
        text: Arc::from(text),
        root: root.into(),
    }
}

fn run_with(master: &str, runners: &str, dialect: Option<Dialect>) -> Vec<Diagnostic> {
    let mut l = from_documents(
        vec![doc("configs/nvidia-master.yaml", master)],
        Some(doc("configs/runners.yaml", runners)),
        PathBuf::from("."),
    );
    if let Some(d) = dialect {
        l.dialect = d;
    }
    check(&l)
}

fn run(master: &str) -> Vec<Diagnostic> {
    run_with(master, RUNNERS_AUG, Some(Dialect::Aug))
}

/// Line and column (1-based) of the first occurrence of `needle` in `text`.
fn pos_of(text: &str, needle: &str) -> (usize, usize) {
    let off = text
        .find(needle)
        .unwrap_or_else(|| panic!("needle {needle:?} not in fixture"));
    let line = text[..off].matches('\n').count() + 1;
    let col = off - text[..off].rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, col)
}

/// Asserts a diagnostic with `code` located at `needle` in `text` (file configs/nvidia-master.yaml
/// unless the code belongs to runners.yaml).
fn expect_at(diags: &[Diagnostic], code: infx_report::Code, text: &str, needle: &str) {
    let (line, col) = pos_of(text, needle);
    let found = diags.iter().any(|d| {
        d.code == code
            && d.span
                .is_some_and(|s| s.start.line() == line && s.start.col() == col)
            && d.path.is_some()
    });
    assert!(
        found,
        "expected {code} at {line}:{col} ({needle:?}); got:\n{}",
        list(diags)
    );
}

fn list(diags: &[Diagnostic]) -> String {
    diags.iter().map(|d| format!("  {d}\n")).collect()
}

fn codes(diags: &[Diagnostic]) -> Vec<infx_report::Code> {
    diags.iter().map(|d| d.code).collect()
}

#[test]
fn fixtures_are_clean() {
    for (name, m) in [("single", SINGLE), ("multi", MULTI), ("agentic", AGENTIC)] {
        let d = run(m);
        assert!(d.is_empty(), "{name}:\n{}", list(&d));
    }
    let all = format!("{SINGLE}{MULTI}{AGENTIC}");
    let l = from_documents(
        vec![doc("configs/nvidia-master.yaml", &all)],
        Some(doc("configs/runners.yaml", RUNNERS_AUG)),
        PathBuf::from("."),
    );
    let v = validate(&l);
    assert!(v.diagnostics.is_empty(), "{}", list(&v.diagnostics));
    assert_eq!(v.entries.len(), 3);
    let a = &v.entries[2];
    assert_eq!(
        a.agentic_coding[0]
            .dram_utilization
            .as_ref()
            .map(|d| d.0.as_str()),
        Some("0.80")
    );
    assert_eq!(a.agentic_coding[0].search_space.len(), 3);
    assert!(matches!(
        v.entries[1].fixed_seq_len[0].search_space[0].topology,
        Topology::Disagg { .. }
    ));
}

#[test]
fn l1_root_not_mapping() {
    let t = "- a\n- b\n";
    let d = run(t);
    expect_at(&d, codes::L1, t, "- a");
}

#[test]
fn l1_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let r = load_files(
        &[dir.path().join("configs/nope.yaml")],
        &dir.path().join("configs/runners.yaml"),
        dir.path(),
    );
    let errs = r.err().unwrap();
    assert!(
        errs.iter()
            .any(|d| d.code == codes::L1 && d.message.contains("does not exist")),
        "{errs:?}"
    );
}

#[test]
fn l2_non_string_key() {
    let t = format!("{SINGLE}1234: {{}}\n");
    let d = run(&t);
    expect_at(&d, codes::L2, &t, "1234");
}

#[test]
fn l3_wildcard_key() {
    let t = SINGLE.replace("e1:", "e1-*:");
    let d = run(&t);
    expect_at(&d, codes::L3, &t, "e1-*");
}

#[test]
fn l4_duplicate_key_across_files() {
    let l = from_documents(
        vec![
            doc("configs/nvidia-master.yaml", SINGLE),
            doc("configs/amd-master.yaml", SINGLE),
        ],
        Some(doc("configs/runners.yaml", RUNNERS_AUG)),
        PathBuf::from("."),
    );
    let d = check(&l);
    let dup: Vec<_> = d.iter().filter(|d| d.code == codes::L4).collect();
    assert_eq!(dup.len(), 1, "{}", list(&d));
    assert_eq!(
        dup[0].path.as_deref(),
        Some(Path::new("configs/amd-master.yaml"))
    );
    assert_eq!(
        dup[0].span.map(|s| (s.start.line(), s.start.col())),
        Some((1, 1))
    );
}

#[test]
fn l5_entries_in_file_then_key_order() {
    let l = from_documents(
        vec![
            doc("configs/nvidia-master.yaml", &format!("{MULTI}{SINGLE}")),
            doc("configs/amd-master.yaml", AGENTIC),
        ],
        None,
        PathBuf::from("."),
    );
    let keys: Vec<_> = l.entries.iter().map(|e| (e.key.as_str(), e.file)).collect();
    assert_eq!(keys, [("m1", 0), ("e1", 0), ("a1", 1)]);
}

#[test]
fn l6_messages_name_the_entry() {
    let t = SINGLE.replace("  precision: fp4\n", "");
    let d = run(&t);
    assert!(
        d.iter().any(|d| d
            .message
            .starts_with("Master config entry 'e1' failed validation: ")),
        "{}",
        list(&d)
    );
    expect_at(&d, codes::MISSING_FIELD, &t, "e1:");
}

#[test]
fn l7_one_project_root() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for d in [&a, &b] {
        std::fs::create_dir_all(d.path().join("configs")).unwrap();
        std::fs::write(d.path().join("configs/nvidia-master.yaml"), SINGLE).unwrap();
    }
    std::fs::write(a.path().join("configs/runners.yaml"), RUNNERS_AUG).unwrap();
    let r = load_files(
        &[
            a.path().join("configs/nvidia-master.yaml"),
            b.path().join("configs/nvidia-master.yaml"),
        ],
        &a.path().join("configs/runners.yaml"),
        a.path(),
    );
    let errs = r.err().unwrap();
    assert!(errs.iter().any(|d| d.code == codes::L7), "{errs:?}");
}

#[test]
fn l8_load_tree_then_check_finds_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("configs")).unwrap();
    std::fs::write(
        dir.path().join("configs/nvidia-master.yaml"),
        SINGLE.replace("tp: 4", "tp: four"),
    )
    .unwrap();
    std::fs::write(dir.path().join("configs/amd-master.yaml"), "{}\n").unwrap();
    std::fs::write(dir.path().join("configs/runners.yaml"), RUNNERS_AUG).unwrap();
    let l = load_tree(dir.path());
    assert!(l.load_errors.is_empty());
    let d = check(&l);
    assert_eq!(codes(&d), [codes::TYPE], "{}", list(&d));
    assert_eq!(
        d[0].span.map(|s| (s.start.line(), s.start.col())),
        Some((14, 14))
    );
}

#[test]
fn unknown_key_names_allowed_keys() {
    let t = SINGLE.replace("  multinode: false\n", "  multinode: false\n  foo: bar\n");
    let d = run(&t);
    expect_at(&d, codes::UNKNOWN_KEY, &t, "foo");
    let u = d.iter().find(|d| d.code == codes::UNKNOWN_KEY).unwrap();
    assert!(
        u.help.as_deref().unwrap_or("").contains("model-prefix"),
        "{u:?}"
    );
}

#[test]
fn master_only_fields_rejected() {
    for f in [
        "total-cpu-dram-gb: 100",
        "gpus-per-node: 8",
        "available-cpu-dram-mib: 1",
        "duration: 10",
    ] {
        let t = AGENTIC.replace(
            "      - tp: 8\n        kv-offloading: none\n        conc-list: [1, 2]",
            &format!(
                "      - tp: 8\n        {f}\n        kv-offloading: none\n        conc-list: [1, 2]"
            ),
        );
        let d = run(&t);
        let name = f.split(':').next().unwrap();
        expect_at(&d, codes::UNKNOWN_KEY, &t, name);
    }
}

#[test]
fn type_and_value_errors() {
    let t = SINGLE.replace("image: lmsysorg/sglang:v1", "image: 12345");
    expect_at(&run(&t), codes::TYPE, &t, "12345");
    let t = SINGLE.replace("ep: 1,", "ep: 1, pp: 0,");
    expect_at(&run(&t), codes::VALUE, &t, "0,");
    let t = SINGLE.replace("ep: 1,", "ep: 1, pp: '2',");
    expect_at(&run(&t), codes::TYPE, &t, "'2'");
    let t = SINGLE.replace("ep: 1,", "ep: 1, spec-decoding: eagle,");
    expect_at(&run(&t), codes::VALUE, &t, "eagle");
    // Deliberately stricter than upstream: a quoted tp is a type error.
    let t = SINGLE.replace("tp: 4", "tp: '4'");
    expect_at(&run(&t), codes::TYPE, &t, "'4'");
}

/// Upstream dispatches on the truthiness of `multinode` (docs/config.md, "Recipe files"): a
/// truthy non-boolean is a type error on a multinode entry, not a single-node entry's errors.
#[test]
fn truthy_multinode_dispatches_as_multinode() {
    let t = MULTI.replace("multinode: true", "multinode: 1");
    let d = run(&t);
    assert_eq!(codes(&d), [codes::TYPE], "{}", list(&d));
    expect_at(&d, codes::TYPE, &t, "1\n  disagg");
    let t = SINGLE.replace("multinode: false", "multinode: 0");
    assert_eq!(codes(&run(&t)), [codes::TYPE]);
}

#[test]
fn null_optionals_read_as_absent() {
    let t = SINGLE.replace("ep: 1,", "ep: null, dp-attn: null,");
    assert!(run(&t).is_empty());
}

#[test]
fn scenarios_rules() {
    let t = SINGLE.replace("    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {tp: 4, ep: 1, conc-start: 1, conc-end: 8}\n", "    fixed-seq-len: []\n");
    expect_at(&run(&t), codes::SCENARIOS, &t, "fixed-seq-len: []");
    let t = SINGLE.replace(
        "    fixed-seq-len:",
        "    long-context: []\n    fixed-seq-len:",
    );
    expect_at(&run(&t), codes::UNKNOWN_KEY, &t, "long-context");
}

#[test]
fn c2_both_list_and_range() {
    let t = SINGLE.replace("conc-end: 8}", "conc-end: 8, conc-list: [1]}");
    expect_at(&run(&t), codes::C2, &t, "conc-list");
}

#[test]
fn c3_neither_or_only_start_or_empty_list() {
    let t = SINGLE.replace(", conc-end: 8}", "}");
    expect_at(&run(&t), codes::C3, &t, "conc-start");
    let t = SINGLE.replace("conc-start: 1, conc-end: 8}", "conc-list: []}");
    expect_at(&run(&t), codes::C3, &t, "conc-list");
}

#[test]
fn c4_range_positive_and_ordered() {
    let t = SINGLE.replace("conc-start: 1", "conc-start: 0");
    expect_at(&run(&t), codes::C4, &t, "0, conc-end");
    let t = SINGLE.replace("conc-start: 1", "conc-start: 64");
    expect_at(&run(&t), codes::C4, &t, "64");
}

#[test]
fn c5_list_positive_duplicates_kept() {
    let t = SINGLE.replace("conc-start: 1, conc-end: 8}", "conc-list: [4, -4, 16]}");
    expect_at(&run(&t), codes::C5, &t, "-4");
    let t = SINGLE.replace("conc-start: 1, conc-end: 8}", "conc-list: [16, 4, 4]}");
    let l = from_documents(vec![doc("n.yaml", &t)], None, PathBuf::from("."));
    let v = validate(&l);
    assert!(v.diagnostics.is_empty());
    assert_eq!(
        v.entries[0].fixed_seq_len[0].search_space[0].conc,
        Conc::List(vec![16, 4, 4])
    );
}

#[test]
fn t1_dcp_divides_tp() {
    let t = SINGLE.replace("ep: 1,", "ep: 1, dcp-size: 3,");
    let d = run(&t);
    expect_at(&d, codes::T1, &t, "{tp: 4");
    let t = MULTI.replace(
        "          tp: 4\n",
        "          tp: 4\n          dcp-size: 3\n",
    );
    expect_at(&run(&t), codes::T1, &t, "num-worker: 1\n          tp: 4");
}

#[test]
fn h1_hardware_both_or_neither() {
    let t = MULTI.replace(
        "          dp-attn: true\n        decode:",
        "          dp-attn: true\n          hardware: gb300\n        decode:",
    );
    expect_at(&run(&t), codes::H1, &t, "spec-decoding: mtp");
    let t = MULTI.replace(
        "          ep: 4\n",
        "          ep: 4\n          hardware: ''\n",
    );
    expect_at(&run(&t), codes::VALUE, &t, "''");
}

#[test]
fn worker_fields() {
    let t = MULTI.replace(
        "          ep: 4\n",
        "          ep: 4\n          batch-size: 32\n",
    );
    expect_at(&run(&t), codes::UNKNOWN_KEY, &t, "batch-size");
    let t = MULTI.replace(
        "        prefill:\n          num-worker: 1\n",
        "        prefill:\n",
    );
    expect_at(&run(&t), codes::MISSING_FIELD, &t, "tp: 4\n          ep: 4");
    let t = MULTI.replace(
        "          ep: 4\n",
        "          ep: 4\n          additional-settings: X=1\n",
    );
    expect_at(&run(&t), codes::TYPE, &t, "X=1");
    let t = MULTI.replace(
        "      - spec-decoding: mtp\n",
        "      - spec-decoding: mtp\n        tp: 8\n",
    );
    expect_at(&run(&t), codes::UNKNOWN_KEY, &t, "tp: 8\n");
}

#[test]
fn aug_multinode_row_needs_prefill_and_decode() {
    let t = MULTI.replace("        decode:\n          num-worker: 1\n          tp: 8\n          ep: 8\n          dp-attn: true\n", "");
    expect_at(&run(&t), codes::MISSING_FIELD, &t, "spec-decoding: mtp");
}

#[test]
fn w1_worker_or_prefill_decode() {
    let t = MULTI.replace("        decode:\n          num-worker: 1\n          tp: 8\n          ep: 8\n          dp-attn: true\n", "");
    let d = run_with(&t, RUNNERS_AUG, Some(Dialect::Oct));
    expect_at(&d, codes::W1, &t, "spec-decoding: mtp");
}

#[test]
fn r0_recipe_selection_not_in_settings() {
    let t = MULTI.replace(
        "          ep: 4\n",
        "          ep: 4\n          additional-settings: [\"CONFIG_FILE=recipes/x.yaml\"]\n",
    );
    assert!(run(&t).is_empty(), "Aug allows CONFIG_FILE");
    let d = run_with(&t, RUNNERS_AUG, Some(Dialect::Oct));
    expect_at(&d, codes::R0, &t, "\"CONFIG_FILE");
}

#[test]
fn a1_exactly_one_topology() {
    let t = AGENTIC.replace("      - tp: 8\n        kv-offloading: none\n        conc-list: [1, 2]", "      - tp: 8\n        prefill: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}\n        kv-offloading: none\n        conc-list: [1, 2]");
    expect_at(&run(&t), codes::A1, &t, "tp: 8\n        prefill");
}

#[test]
fn a2_single_node_agentic_needs_kv_offloading() {
    let t = AGENTIC.replacen(
        "        kv-offloading: none\n        conc-list: [1, 2]",
        "        conc-list: [1, 2]",
        1,
    );
    expect_at(&run(&t), codes::A2, &t, "tp: 8\n        conc-list");
}

#[test]
fn a3_t1_and_power_on_single_node_agentic() {
    let t = AGENTIC.replacen(
        "      - tp: 8\n        kv-offloading: none",
        "      - tp: 8\n        dcp-size: 3\n        kv-offloading: none",
        1,
    );
    expect_at(&run(&t), codes::T1, &t, "tp: 8\n        dcp-size");
    let t = GEN3.replace(
        "        conc-list: [1]\n",
        "        conc-list: [1]\n        power: true\n",
    );
    let (_dir, d) = gen3_tree(&t);
    expect_at(&d, codes::A3, &t, "power: true");
}

const AGENTIC_MULTI: &str = "\
am:
  image: vllm/vllm-openai:v1
  model: org/m
  model-prefix: m
  precision: fp4
  framework: dynamo-vllm
  runner: cluster:b200-dgxc
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    agentic-coding:
    - search-space:
      - spec-decoding: mtp
        kv-offloading: none
        conc-list: [4]
        prefill: {num-worker: 1, tp: 4, ep: 1, dp-attn: false}
        decode: {num-worker: 1, tp: 4, ep: 1, dp-attn: false}
";

#[test]
fn a4_a5_multinode_agentic() {
    assert!(
        run(AGENTIC_MULTI).is_empty(),
        "{}",
        list(&run(AGENTIC_MULTI))
    );
    let t = AGENTIC_MULTI.replace(
        "        conc-list: [4]\n",
        "        conc-list: [4]\n        pp: 1\n",
    );
    expect_at(&run(&t), codes::A4, &t, "pp: 1");
    let t = AGENTIC_MULTI.replace(
        "prefill: {num-worker: 1,",
        "prefill: {hardware: gb300, num-worker: 1,",
    );
    expect_at(&run(&t), codes::A5, &t, "spec-decoding: mtp");
    let t = AGENTIC_MULTI.replace(
        "        decode: {num-worker: 1, tp: 4, ep: 1, dp-attn: false}\n",
        "",
    );
    expect_at(&run(&t), codes::A1, &t, "spec-decoding: mtp");
    // The row's own ep / dp-attn are typed on a prefill/decode row too (found by the config
    // differential, seed 20261202 case 439).
    for (field, bad) in [("dp-attn", "0.5"), ("ep", "four")] {
        let t = AGENTIC_MULTI.replace(
            "        conc-list: [4]\n",
            &format!("        conc-list: [4]\n        {field}: {bad}\n"),
        );
        expect_at(&run(&t), codes::TYPE, &t, &format!("{bad}\n"));
    }
}

#[test]
fn k1_backend_consistency() {
    // backend without kv-offloading
    let t = AGENTIC.replace("        kv-offloading: dram\n", "");
    expect_at(&run(&t), codes::K1, &t, "kv-offload-backend");
    // none with a backend
    let t = AGENTIC.replace("kv-offloading: dram", "kv-offloading: none");
    expect_at(&run(&t), codes::K1, &t, "kv-offload-backend");
    // dram without backend
    let t = AGENTIC.replace("        kv-offload-backend: {name: hicache}\n", "");
    expect_at(&run(&t), codes::K1, &t, "kv-offloading: dram");
    let t = AGENTIC.replace(
        "{name: hicache}",
        "{name: lmcache, version: 'image:lmcache/x:1'}",
    );
    expect_at(&run(&t), codes::COMPONENT_VERSION, &t, "'image:");
    let t = AGENTIC.replace("kv-offloading: dram", "kv-offloading: nvme");
    expect_at(&run(&t), codes::VALUE, &t, "nvme");
}

#[test]
fn k2_dram_needs_dram_utilization() {
    let t = AGENTIC.replace(
        "    - dram-utilization: 0.80\n      search-space:",
        "    - search-space:",
    );
    expect_at(&run(&t), codes::K2, &t, "kv-offloading: dram");
    let t = AGENTIC.replace("0.80", "1.5");
    expect_at(&run(&t), codes::VALUE, &t, "1.5");
    let t = AGENTIC.replace("0.80", "0");
    expect_at(&run(&t), codes::VALUE, &t, "0\n");
}

#[test]
fn m1_top_level_and_row() {
    let t = AGENTIC.replace(
        "  multinode: false\n",
        "  multinode: false\n  router: {name: sglang-router, version: \"0.3.2\"}\n",
    );
    expect_at(&run(&t), codes::M1, &t, "router: {name");
    let t = MULTI.replace(
        "        conc-list: [4, 8]\n",
        "        conc-list: [4, 8]\n        kv-p2p-transfer: nixl\n",
    );
    expect_at(&run(&t), codes::M1, &t, "kv-p2p-transfer: nixl");
}

#[test]
fn m2_row_kv_p2p_only_multinode() {
    let t = AGENTIC.replacen(
        "        conc-list: [1, 2]\n",
        "        conc-list: [1, 2]\n        kv-p2p-transfer: nixl\n",
        1,
    );
    expect_at(&run(&t), codes::M2, &t, "kv-p2p-transfer");
    let t = SINGLE.replace(
        "  multinode: false\n",
        "  multinode: false\n  kv-p2p-transfer: nixl\n",
    );
    expect_at(&run(&t), codes::UNKNOWN_KEY, &t, "kv-p2p-transfer");
}

#[test]
fn m3_disagg_needs_kv_p2p() {
    // A tree that states kv-p2p-transfer elsewhere (#2096's metadata) requires it here.
    let t = format!(
        "{}{}",
        MULTI.replace("  kv-p2p-transfer: nixl\n", ""),
        MULTI.replacen("m1:", "m2:", 1)
    );
    expect_at(&run(&t), codes::M3, &t, "disagg: true");
    let t = MULTI.replace("  kv-p2p-transfer: nixl\n", "  kv-p2p-transfer: ''\n");
    expect_at(&run(&t), codes::VALUE, &t, "''");
}

#[test]
fn kv_metadata_rules_carry_their_day() {
    // A July 2026 tree (before upstream #2096): no kv-p2p-transfer anywhere, the backend a
    // string. Upstream's generator of that day accepts both; so does infx.
    let july = MULTI.replace("  kv-p2p-transfer: nixl\n", "");
    assert!(
        !codes(&run(&july)).contains(&codes::M3),
        "{}",
        list(&run(&july))
    );
    let string_backend = AGENTIC.replace("{name: hicache}", "hicache");
    assert!(
        codes(&run(&string_backend)).is_empty(),
        "{}",
        list(&run(&string_backend))
    );
    // Once the tree states the metadata anywhere, the string form is the old one: an error.
    let mixed = format!("{string_backend}{}", AGENTIC.replacen("a1:", "a2:", 1));
    expect_at(&run(&mixed), codes::TYPE, &mixed, "hicache\n");
}

#[test]
fn router_component_rules() {
    let t = AGENTIC.replace("version: \"0.3.2\"", "version: \"image:lmsysorg/sglang:x\"");
    expect_at(&run(&t), codes::COMPONENT_VERSION, &t, "\"image:");
    let t = AGENTIC.replace(", version: \"0.3.2\"}", "}");
    expect_at(&run(&t), codes::MISSING_FIELD, &t, "{name: sglang-router");
    let t = AGENTIC.replace("{name: sglang-router,", "{name: '',");
    expect_at(&run(&t), codes::VALUE, &t, "''");
}

#[test]
fn x1_single_node_disagg() {
    let t = SINGLE.replace(
        "  multinode: false\n",
        "  multinode: false\n  disagg: true\n",
    );
    expect_at(&run(&t), codes::X1, &t, "disagg");
}

#[test]
fn x2_agentic_needs_cluster_runner() {
    let t = AGENTIC.replace("runner: cluster:b200-dgxc", "runner: b200");
    expect_at(&run(&t), codes::X2, &t, "b200\n");
}

#[test]
fn x3_topology_scope() {
    let agg = MULTI
        .replace("  disagg: true\n", "  disagg: false\n")
        .replace("  kv-p2p-transfer: nixl\n", "");
    let d = run_with(&agg, RUNNERS_AUG, Some(Dialect::Oct));
    expect_at(&d, codes::X3, &agg, "spec-decoding: mtp");
    let t = AGENTIC.replacen(
        "      - tp: 8\n        kv-offloading: none\n        conc-list: [1, 2]",
        "      - prefill: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}\n        decode: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}\n        kv-offloading: none\n        conc-list: [1, 2]",
        1,
    );
    let d = run_with(&t, RUNNERS_AUG, Some(Dialect::Oct));
    expect_at(&d, codes::X3, &t, "prefill: {num-worker");
}

#[test]
fn x5_runner_label_must_exist() {
    let t = SINGLE.replace("runner: b200", "runner: b200-typo");
    let d = run(&t);
    expect_at(&d, codes::X5, &t, "b200-typo");
    assert!(
        d.iter()
            .any(|d| d.help.as_deref().unwrap_or("").contains("b200"))
    );
}

#[test]
fn require_power_only_8k1k() {
    let t = MULTI.replace(
        "    - isl: 8192\n",
        "    - isl: 1024\n      require-power: true\n",
    );
    let d = run_with(&t, RUNNERS_AUG, Some(Dialect::Oct));
    expect_at(&d, codes::REQUIRE_POWER, &t, "require-power");
}

#[test]
fn runners_rules() {
    let t = "labels:\n  b200: []\n";
    let d = run_with(SINGLE, t, Some(Dialect::Aug));
    let r: Vec<_> = d.iter().filter(|d| d.code == codes::RUNNERS).collect();
    assert_eq!(r.len(), 1, "{}", list(&d));
    assert_eq!(
        r[0].path.as_deref(),
        Some(Path::new("configs/runners.yaml"))
    );
    assert_eq!(
        r[0].span.map(|s| (s.start.line(), s.start.col())),
        Some((2, 9))
    );
    // Flat file.
    let d = run_with(SINGLE, "b200: [b200-00]\n", Some(Dialect::Aug));
    assert!(codes(&d).contains(&codes::RUNNERS), "{}", list(&d));
    // Hardware value must be positive.
    let t = RUNNERS_AUG.replace("gpus-per-node: 8", "gpus-per-node: 0");
    let d = run_with(SINGLE, &t, Some(Dialect::Aug));
    let v = d
        .iter()
        .find(|d| d.code == codes::VALUE)
        .expect("value error");
    assert_eq!(
        v.span.map(|s| (s.start.line(), s.start.col())),
        Some(pos_of(&t, "0\n"))
    );
    // An [Aug] hardware record needs its DRAM figure: absent or null is an error at the record.
    for t in [
        RUNNERS_AUG.replace("    available-cpu-dram-mib: 1_998_848\n", ""),
        RUNNERS_AUG.replace("1_998_848", "null"),
    ] {
        let d = run_with(SINGLE, &t, Some(Dialect::Aug));
        assert!(
            d.iter().any(|d| d.is_error()
                && d.message.contains("available-cpu-dram-mib")
                && d.path.as_deref() == Some(Path::new("configs/runners.yaml"))),
            "{}",
            list(&d)
        );
    }
    // Non-string runner.
    let t = "labels:\n  b200: [b200-00, 7]\n";
    let d = run_with(SINGLE, t, Some(Dialect::Aug));
    assert!(
        d.iter().any(|d| d.code == codes::RUNNERS
            && d.span
                .is_some_and(|s| (s.start.line(), s.start.col()) == (2, 19))),
        "{}",
        list(&d)
    );
}

#[test]
fn runners_oct_inventory() {
    let d = run_with(
        SINGLE.replace("runner: b200", "runner: b300").as_str(),
        RUNNERS_OCT,
        Some(Dialect::Oct),
    );
    assert!(d.is_empty(), "{}", list(&d));
    let t = RUNNERS_OCT.replace(
        "  cluster:gb300-nv: [gb300-nv_00]\n",
        "  cluster:gb300-nv: [gb300-nv_00]\n  cluster:h100-x: [h100_0]\n",
    );
    let d = run_with(
        SINGLE.replace("runner: b200", "runner: b300").as_str(),
        &t,
        Some(Dialect::Oct),
    );
    assert!(
        d.iter().any(|d| d.code == codes::RUNNERS_INVENTORY
            && d.span
                .is_some_and(|s| s.start.line() == pos_of(&t, "cluster:h100-x").0)),
        "{}",
        list(&d)
    );
    let t = RUNNERS_OCT.replace(
        "    arch: aarch64\n",
        "    arch: aarch64\n    colour: blue\n",
    );
    let d = run_with(
        SINGLE.replace("runner: b200", "runner: b300").as_str(),
        &t,
        Some(Dialect::Oct),
    );
    expect_at(&d, codes::UNKNOWN_KEY, &t, "colour");
    let inv = validate(&from_documents(
        vec![],
        Some(doc("r.yaml", RUNNERS_OCT)),
        PathBuf::from("."),
    ))
    .runners
    .unwrap();
    assert_eq!(inv.gpus_per_node("cluster:gb300-nv"), Ok(4));
    assert_eq!(inv.gpus_per_node("gb300"), Ok(4));
    assert!(inv.gpus_per_node("h100").is_err());
}

// --- generation 3: srt-recipe-dir and references on disk ---------------------------------

const GEN3: &str = "\
g1:
  image: lmsysorg/sglang:v1
  model: org/m
  model-prefix: m
  precision: fp4
  framework: sglang
  runner: cluster:b300-dsxe
  multinode: false
  srt-recipe-dir: m/sglang/b300
  scenarios:
    agentic-coding:
    - search-space:
      - tp: 4
        kv-offloading: none
        conc-list: [1]
        srt-recipe: agentic.yaml
";

const BUNDLE: &str = "\
base:
  schema: 2
  name: x
override_tp4_c1:
  benchmark: {env: {CONC: '1'}}
zip_override_conc:
  benchmark:
    env:
      CONC: ['1', '2', '4']
";

/// A generation-3 tree: `master` as nvidia-master.yaml, October runners, two recipe files.
fn gen3_dir(master: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("configs")).unwrap();
    let rdir = root.join("benchmarks/single_node/srt-slurm-recipes/m/sglang/b300");
    std::fs::create_dir_all(&rdir).unwrap();
    std::fs::write(rdir.join("agentic.yaml"), BUNDLE).unwrap();
    std::fs::write(rdir.join("plain.yaml"), "schema: 2\nname: p\n").unwrap();
    std::fs::write(root.join("configs/nvidia-master.yaml"), master).unwrap();
    std::fs::write(root.join("configs/amd-master.yaml"), "{}\n").unwrap();
    std::fs::write(root.join("configs/runners.yaml"), RUNNERS_OCT).unwrap();
    dir
}

fn gen3_tree(master: &str) -> (tempfile::TempDir, Vec<Diagnostic>) {
    let dir = gen3_dir(master);
    let root = dir.path();
    let l = load_tree(root);
    assert_eq!(l.dialect, Dialect::OctNewest);
    let d = check(&l);
    (dir, d)
}

#[test]
fn gen3_clean_and_typed() {
    let (_dir, d) = gen3_tree(GEN3);
    assert!(d.is_empty(), "{}", list(&d));
    for sel in ["base", "override_tp4_c1", "zip_override_conc[2]"] {
        let (_dir, d) = gen3_tree(&GEN3.replace(
            "srt-recipe: agentic.yaml",
            &format!("srt-recipe: agentic.yaml:{sel}"),
        ));
        assert!(d.is_empty(), "{sel}: {}", list(&d));
    }
}

#[test]
fn sr1_recipe_dir_normalized() {
    for bad in ["../m", "m/./x", "m//x", "m/", "/abs", "a:b"] {
        let t = GEN3.replace(
            "srt-recipe-dir: m/sglang/b300",
            &format!("srt-recipe-dir: '{bad}'"),
        );
        let (_dir, d) = gen3_tree(&t);
        expect_at(&d, codes::SR1, &t, &format!("'{bad}'"));
    }
}

#[test]
fn sr2_reference_grammar() {
    for bad in [
        "agentic.yaml:override_",
        "agentic.yaml:zip_override_conc",
        "../x.yaml",
        "agentic.yaml:tp4",
    ] {
        let t = GEN3.replace("srt-recipe: agentic.yaml", &format!("srt-recipe: '{bad}'"));
        let (_dir, d) = gen3_tree(&t);
        expect_at(&d, codes::SR2, &t, &format!("'{bad}'"));
    }
}

#[test]
fn sr3_resolution_and_escape_via_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("evil.yaml"), "schema: 2\n").unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("configs")).unwrap();
    let rdir = root.join("benchmarks/single_node/srt-slurm-recipes/m/sglang/b300");
    std::fs::create_dir_all(&rdir).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path().join("evil.yaml"), rdir.join("agentic.yaml"))
        .unwrap();
    std::fs::write(root.join("configs/nvidia-master.yaml"), GEN3).unwrap();
    std::fs::write(root.join("configs/amd-master.yaml"), "{}\n").unwrap();
    std::fs::write(root.join("configs/runners.yaml"), RUNNERS_OCT).unwrap();
    let d = check(&load_tree(root));
    expect_at(&d, codes::SR3, GEN3, "agentic.yaml\n");
    // Resolution: the typed row carries the project-relative path.
    let (_d2, d) = gen3_tree(GEN3);
    assert!(d.is_empty());
}

#[test]
fn sr4_disk_checks() {
    let cases = [
        ("srt-recipe: missing.yaml", "missing.yaml"),
        ("srt-recipe: plain.yaml:base", "plain.yaml:base"),
        (
            "srt-recipe: agentic.yaml:override_nope",
            "agentic.yaml:override_nope",
        ),
        (
            "srt-recipe: agentic.yaml:zip_override_conc[3]",
            "agentic.yaml:zip_override_conc[3]",
        ),
        (
            "srt-recipe: agentic.yaml:zip_override_other[0]",
            "agentic.yaml:zip_override_other[0]",
        ),
    ];
    for (line, needle) in cases {
        let t = GEN3.replace("srt-recipe: agentic.yaml", line);
        let (_dir, d) = gen3_tree(&t);
        expect_at(&d, codes::SR4, &t, needle);
    }
}

#[test]
fn sr5_errors_are_wrapped() {
    let t = GEN3.replace("srt-recipe: agentic.yaml", "srt-recipe: missing.yaml");
    let (_dir, d) = gen3_tree(&t);
    let sr = d.iter().find(|d| d.code == codes::SR4).unwrap();
    assert!(
        sr.message
            .starts_with("Master config entry 'g1' failed validation: "),
        "{}",
        sr.message
    );
}

#[test]
fn x4_recipe_dir_and_rows() {
    let t = GEN3.replace("  srt-recipe-dir: m/sglang/b300\n", "");
    let l = from_documents(
        vec![doc("configs/nvidia-master.yaml", &t)],
        Some(doc("configs/runners.yaml", RUNNERS_OCT)),
        PathBuf::from("."),
    );
    assert_eq!(
        l.dialect,
        Dialect::OctNewest,
        "Oct runners without legacy markers select generation 3"
    );
    let d = check(&l);
    expect_at(&d, codes::X4, &t, "g1:");
    let t = GEN3.replace("        srt-recipe: agentic.yaml\n", "");
    let (_dir, d) = gen3_tree(&t);
    expect_at(&d, codes::X4, &t, "tp: 4");
    let t = GEN3.replace(
        "        srt-recipe: agentic.yaml\n",
        "        srt-recipe: agentic.yaml\n        eval-srt-recipe: plain.yaml\n",
    );
    let (_dir, d) = gen3_tree(&t);
    expect_at(&d, codes::X4, &t, "plain.yaml");
}

#[test]
fn dialect_detection() {
    let l = from_documents(
        vec![doc("n.yaml", SINGLE)],
        Some(doc("r.yaml", RUNNERS_AUG)),
        PathBuf::from("."),
    );
    assert_eq!(l.dialect, Dialect::Aug);
    let legacy = MULTI.replace(
        "          ep: 4\n",
        "          ep: 4\n          additional-settings: [\"CONFIG_FILE=recipes/x.yaml\"]\n",
    );
    let l = from_documents(
        vec![doc("n.yaml", &legacy)],
        Some(doc("r.yaml", RUNNERS_OCT)),
        PathBuf::from("."),
    );
    assert_eq!(l.dialect, Dialect::Oct);
}

#[test]
fn garbage_never_panics() {
    for t in [
        "",
        "~\n",
        "x: 1\n",
        "x: [1, 2]\n",
        "x: {scenarios: 3, multinode: 7}\n",
        "x: {multinode: true, scenarios: {fixed-seq-len: [3, {search-space: [1, {prefill: 2}]}]}}\n",
        "x: {multinode: false, scenarios: {agentic-coding: [{search-space: [{tp: x, conc-list: 5}]}]}}\n",
    ] {
        let _ = run(t);
        let _ = run_with(t, "[]", Some(Dialect::OctNewest));
    }
}

// --- invariants -----------------------------------------------------------------------------

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Scalars that exercise every type branch of the checker.
    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("1".to_string()),
            Just("0".to_string()),
            Just("-3".to_string()),
            Just("'4'".to_string()),
            Just("true".to_string()),
            Just("null".to_string()),
            Just("0.5".to_string()),
            Just("[]".to_string()),
            Just("{}".to_string()),
            Just("[1, 2]".to_string()),
            Just("x".to_string()),
            Just("'image:x'".to_string()),
        ]
    }

    const FIELDS: &[&str] = &[
        "tp",
        "ep",
        "pp",
        "dcp-size",
        "dp-attn",
        "conc-list",
        "conc-start",
        "conc-end",
        "kv-offloading",
        "kv-offload-backend",
        "router",
        "prefill",
        "decode",
        "worker",
        "num-nodes",
        "spec-decoding",
        "power",
        "srt-recipe",
        "multinode",
        "disagg",
        "runner",
        "scenarios",
        "dram-utilization",
    ];

    proptest! {
        /// Any single-field change to a valid agentic entry: no panic, deterministic output, and
        /// every diagnostic is a config error located in the master file.
        #[test]
        fn mutations_never_panic_and_are_deterministic(
            field in proptest::sample::select(FIELDS),
            value in scalar(),
            at_row in any::<bool>(),
        ) {
            let text = if at_row {
                AGENTIC.replacen("      - tp: 8\n", &format!("      - tp: 8\n        {field}: {value}\n"), 1)
            } else {
                AGENTIC.replacen("  multinode: false\n", &format!("  multinode: false\n  {field}: {value}\n"), 1)
            };
            let Ok(root) = parse_str(Path::new("configs/nvidia-master.yaml"), &text) else { return Ok(()); };
            let d = Document { path: PathBuf::from("configs/nvidia-master.yaml"), text: Arc::from(text.as_str()), root: root.into() };
            for dialect in [Dialect::Aug, Dialect::Oct, Dialect::OctNewest] {
                let mut l = from_documents(vec![d.clone()], Some(doc("configs/runners.yaml", RUNNERS_AUG)), PathBuf::from("."));
                l.dialect = dialect;
                let a = check(&l);
                let b = check(&l);
                prop_assert_eq!(&a, &b);
                for x in &a {
                    prop_assert!(x.code.check() == "config", "{}", x);
                    prop_assert!(x.span.is_some());
                }
            }
        }
    }
}

#[test]
fn one_october_key_does_not_switch_an_august_tree() {
    // August runners.yaml: the tree is [Aug]; the stray key is reported where it is written,
    // and nothing else is.
    let t = SINGLE.replace(
        "  multinode: false\n",
        "  multinode: false\n  srt-recipe: x.yaml\n",
    );
    let d = run_with(&t, RUNNERS_AUG, None);
    expect_at(&d, codes::UNKNOWN_KEY, &t, "srt-recipe");
    assert_eq!(codes(&d), [codes::UNKNOWN_KEY], "{}", list(&d));
    for key in [
        "num-nodes: 1",
        "require-power: true",
        "srt-recipe-dir: recipes",
    ] {
        let t = SINGLE.replace(
            "  multinode: false\n",
            &format!("  multinode: false\n  {key}\n"),
        );
        let l = from_documents(
            vec![doc("configs/nvidia-master.yaml", &t)],
            Some(doc("configs/runners.yaml", RUNNERS_AUG)),
            PathBuf::from("."),
        );
        assert_eq!(l.dialect, Dialect::Aug, "{key}");
    }
}

/// The check in two parts (the rules before the recipe files, then SR3/SR4) keeps every
/// entry's reference findings right after its own, as one pass always ordered them, and
/// keeps from the typed entries only those whose every rule passed.
#[test]
fn recipe_findings_follow_their_entry_after_the_split() {
    let second = GEN3
        .replace("g1:", "g2:")
        .replace("srt-recipe: agentic.yaml", "srt-recipe: gone.yaml")
        .replace("  model: org/m\n", "  model: org/m\n  bogus-key: 1\n");
    let first = GEN3
        .replace("srt-recipe: agentic.yaml", "srt-recipe: missing.yaml")
        .replace("  model: org/m\n", "  model: org/m\n  bogus-key: 1\n");
    let third = GEN3.replace("g1:", "g3:");
    let master = format!("{first}{second}{third}");
    let dir = gen3_dir(&master);
    let l = load_tree(dir.path());
    let early = rules_before_recipes(&l);
    let checked = early.finish_in(&l, &infx_yaml::DocIndex::default());
    let keys_and_codes: Vec<(String, &str)> = checked
        .diagnostics
        .iter()
        .map(|d| {
            let key = ["g1", "g2", "g3"]
                .into_iter()
                .find(|k| d.message.contains(&format!("'{k}'")))
                .unwrap_or("?");
            (key.to_string(), d.code.as_str())
        })
        .collect();
    let sr4_of = |key: &str| {
        keys_and_codes
            .iter()
            .position(|(k, c)| k == key && *c == codes::SR4.as_str())
            .unwrap_or_else(|| panic!("no SR4 for {key}: {keys_and_codes:?}"))
    };
    let last_other_of = |key: &str| {
        keys_and_codes
            .iter()
            .rposition(|(k, c)| k == key && *c != codes::SR4.as_str())
            .unwrap_or_else(|| panic!("no other finding for {key}: {keys_and_codes:?}"))
    };
    // g1's reference finding follows g1's own and comes before anything of g2's.
    assert_eq!(sr4_of("g1"), last_other_of("g1") + 1, "{keys_and_codes:?}");
    assert_eq!(sr4_of("g2"), last_other_of("g2") + 1, "{keys_and_codes:?}");
    assert!(sr4_of("g1") < last_other_of("g2"));
    assert_eq!(checked.diagnostics, check(&l));
    // Only the clean entry is typed.
    let typed: Vec<&str> = checked.entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(typed, ["g3"]);
}

/// A master config long enough for its entries to be checked on two threads gives its
/// findings in entry order, each entry's reference finding right after its own.
#[test]
fn a_long_master_is_checked_in_entry_order() {
    let count = ENTRIES_ON_TWO_THREADS + 7;
    let master: String = (0..count)
        .map(|i| {
            GEN3.replace("g1:", &format!("g{i}:"))
                .replace("  model: org/m\n", "  model: org/m\n  bogus-key: 1\n")
                .replace("srt-recipe: agentic.yaml", "srt-recipe: missing.yaml")
        })
        .collect();
    let dir = gen3_dir(&master);
    let l = load_tree(dir.path());
    let d = check(&l);
    let order: Vec<(usize, &str)> = d
        .iter()
        .map(|d| {
            let key = (0..count)
                .find(|i| d.message.contains(&format!("'g{i}'")))
                .unwrap_or_else(|| panic!("no key in {}", d.message));
            (key, d.code.as_str())
        })
        .collect();
    let expected: Vec<(usize, &str)> = (0..count)
        .flat_map(|i| [(i, codes::UNKNOWN_KEY.as_str()), (i, codes::SR4.as_str())])
        .collect();
    assert_eq!(order, expected);
}
