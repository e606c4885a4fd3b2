//! The bundled DSV4.1 B300 agentic bundle (docs/recipe.md, "Lanes and the bundled recipe"):
//! every variant renders the worker command with its point's settings (`TABLE`), and the DP4
//! variant the sglang-router command.

use infx_recipe::{
    Lane, Variant, bind_model, check_fragment, compose_lane, load_recipe, render, validate,
};
use std::path::PathBuf;

const RECIPE: &str =
    "benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";

fn tree() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../inferencex-e2e")
}

fn variants() -> Vec<Variant> {
    let root = tree();
    let frag = load_recipe(&root, RECIPE).expect("bundle loads");
    assert!(
        check_fragment(&frag, Lane::AgenticSingle).is_empty(),
        "fragment rules"
    );
    let lane = load_recipe(&root, Lane::AgenticSingle.block_path()).expect("lane block loads");
    let composed = compose_lane(&frag, Lane::AgenticSingle, &lane);
    let mut vs = composed.expand(None).expect("expands");
    for v in &mut vs {
        bind_model(
            v,
            "deepseek-ai/DeepSeek-V4.1-Flash",
            "lmsysorg/sglang:nightly-dev-cu13",
            "fp4",
        );
    }
    vs
}

fn flag<'a>(argv: &'a [String], f: &str) -> Option<&'a str> {
    argv.iter()
        .position(|a| a == f)
        .and_then(|i| argv.get(i + 1))
        .map(String::as_str)
}

/// (override, gpus, tp, ep, mem-frac, swa-prefix-tails, max-running, prefill-decode-interval,
/// CONC, warmup grace): the settings each override of the bundled recipe is meant to have.
type Row = (
    &'static str,
    usize,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

const TABLE: &[Row] = &[
    (
        "override_tp4_c1",
        4,
        "4",
        "1",
        "0.7",
        "128",
        "2",
        "16",
        "1",
        "1800",
    ),
    (
        "override_tp4_c4",
        4,
        "4",
        "1",
        "0.7",
        "256",
        "8",
        "192",
        "4",
        "1800",
    ),
    (
        "override_tp2_c1",
        2,
        "2",
        "1",
        "0.7",
        "128",
        "2",
        "16",
        "1",
        "1800",
    ),
    (
        "override_tp2_c4",
        2,
        "2",
        "1",
        "0.7",
        "256",
        "8",
        "96",
        "4",
        "1800",
    ),
    (
        "override_tp2_c16",
        2,
        "2",
        "1",
        "0.8",
        "1024",
        "32",
        "192",
        "16",
        "1800",
    ),
    (
        "override_tp2_c24",
        2,
        "2",
        "1",
        "0.8",
        "1536",
        "48",
        "96",
        "24",
        "3600",
    ),
    (
        "override_tp2_c32",
        2,
        "2",
        "1",
        "0.85",
        "2048",
        "64",
        "64",
        "32",
        "3600",
    ),
    (
        "override_tp2_c48",
        2,
        "2",
        "1",
        "0.8",
        "3072",
        "64",
        "64",
        "48",
        "3600",
    ),
    (
        "override_dp4_c192",
        4,
        "4",
        "4",
        "0.76",
        "3072",
        "384",
        "16",
        "192",
        "3600",
    ),
];

#[test]
fn nine_variants_match_the_worked_example() {
    let vs = variants();
    assert_eq!(vs.len(), 9);
    for (key, gpus, tp, ep, mem, swa, mrr, pdi, conc, grace) in TABLE {
        let v = vs
            .iter()
            .find(|v| v.selector_text() == *key)
            .unwrap_or_else(|| panic!("{key} missing"));
        assert!(validate(v).is_empty(), "{key}: {:?}", validate(v));
        let r = render(v);
        let workers: Vec<_> = r.processes.iter().filter(|p| p.kind == "worker").collect();
        assert_eq!(workers.len(), 1, "{key}: one worker");
        let w = workers[0];
        assert_eq!(w.gpus.len(), *gpus, "{key} gpus");
        let a = &w.argv;
        assert_eq!(&a[..3], ["python3", "-m", "sglang.launch_server"]);
        assert_eq!(
            flag(a, "--model-path"),
            Some("deepseek-ai/DeepSeek-V4.1-Flash")
        );
        assert_eq!(flag(a, "--tensor-parallel-size"), Some(*tp), "{key} tp");
        assert_eq!(flag(a, "--expert-parallel-size"), Some(*ep), "{key} ep");
        assert_eq!(flag(a, "--mem-fraction-static"), Some(*mem), "{key} mem");
        assert_eq!(flag(a, "--swa-prefix-tails"), Some(*swa), "{key} swa");
        assert_eq!(
            flag(a, "--max-running-requests"),
            Some(*mrr),
            "{key} max-running"
        );
        assert_eq!(
            flag(a, "--prefill-decode-interval"),
            Some(*pdi),
            "{key} pdi"
        );
        assert_eq!(flag(a, "--speculative-algorithm"), Some("DSPARK"));
        assert_eq!(flag(a, "--speculative-dspark-block-size"), Some("5"));
        let dp4 = *key == "override_dp4_c192";
        // The cookbook's DEP4 command prefills in 32768-token chunks, the TP commands in 16384.
        assert_eq!(
            flag(a, "--chunked-prefill-size"),
            Some(if dp4 { "32768" } else { "16384" })
        );
        let bench = r
            .processes
            .iter()
            .find(|p| p.kind == "benchmark")
            .expect("benchmark client");
        let env = |k: &str| {
            bench
                .env
                .iter()
                .find(|(ek, _)| ek == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(env("CONC"), Some(*conc), "{key} CONC");
        assert_eq!(
            env("AGENTIC_WARMUP_GRACE_PERIOD"),
            Some(*grace),
            "{key} grace"
        );
        assert!(
            bench.argv[2].ends_with("srt_agentic.sh"),
            "lane block supplies the client"
        );
        assert_eq!(flag(a, "--data-parallel-size"), dp4.then_some("4"));
        assert_eq!(a.iter().any(|x| x == "--enable-dp-attention"), dp4);
        let router = r.processes.iter().find(|p| p.kind == "router");
        assert_eq!(router.is_some(), dp4, "{key}: router only for DP4");
        // Direct mode: the worker is the endpoint on 8000; behind the router it gets 6100.
        assert_eq!(flag(a, "--port"), Some(if dp4 { "6100" } else { "8000" }));
        if dp4 {
            assert_eq!(
                env("AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID"),
                Some("true")
            );
        }
    }
}

#[test]
fn snapshot_worker_commands() {
    let vs = variants();
    let mut text = String::new();
    for v in &vs {
        let r = render(v);
        for p in r.processes.iter().filter(|p| p.kind == "worker") {
            text.push_str(&format!("{}:\n  {}\n", v.selector_text(), p.argv.join(" ")));
        }
    }
    insta::assert_snapshot!("dsv41_worker_commands", text);
}

#[test]
fn snapshot_dp4_router_command() {
    let vs = variants();
    let v = vs
        .iter()
        .find(|v| v.selector_text() == "override_dp4_c192")
        .expect("dp4");
    let r = render(v);
    let router = r
        .processes
        .iter()
        .find(|p| p.kind == "router")
        .expect("router");
    insta::assert_snapshot!("dsv41_dp4_router_command", router.argv.join(" "));
    insta::assert_snapshot!("dsv41_dp4_full_text", r.to_text());
}
