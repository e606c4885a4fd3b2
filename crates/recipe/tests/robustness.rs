//! No input makes the library panic: random recipe-shaped documents go through parsing,
//! expansion (both null modes), lane composition, the fragment check, validation of both
//! schemas, rendering and the srtctl pipeline.

use infx_recipe::{
    ExpandOptions, Lane, RecipeFile, Selector, check_fragment, compose_lane, render, validate,
};
use proptest::prelude::*;
use std::path::Path;

const KEYS: &[&str] = &[
    "base",
    "override_a",
    "override_b",
    "zip_override_g",
    "schema",
    "name",
    "model",
    "path",
    "container",
    "precision",
    "resources",
    "gpus_per_node",
    "agg_nodes",
    "agg_workers",
    "prefill_nodes",
    "decode_nodes",
    "prefill_workers",
    "decode_workers",
    "gpus_per_prefill",
    "roles",
    "agg",
    "prefill",
    "decode",
    "nodes",
    "workers",
    "gpus",
    "args",
    "env",
    "engine",
    "type",
    "frontend",
    "enable_multiple_frontends",
    "num_additional_frontends",
    "benchmark",
    "backend",
    "sglang_config",
    "vllm_config",
    "aggregated",
    "kv_events_config",
    "kv_events",
    "data-parallel-size",
    "tensor-parallel-size",
    "served-model-name",
    "infra",
    "etcd_nats_dedicated_node",
    "dedicated_node",
    "sweep",
    "identity",
    "telemetry",
    "enabled",
    "cpu_bytes_to_use",
    "connector",
    "dynamo",
    "hash",
    "wheel",
    "profiling",
    "observability",
    "tachometer",
];

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("colocate".to_string()),
        Just("sglang".to_string()),
        Just("vllm".to_string()),
        Just("sglang-router".to_string()),
        Just("'2'".to_string()),
        Just("2".to_string()),
        (-3i64..40).prop_map(|i| i.to_string()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("9223372036854775807".to_string()),
        Just("0.85".to_string()),
        Just("[]".to_string()),
        Just("[1, 2]".to_string()),
        Just("[[1], [2, 3]]".to_string()),
        "[a-z]{1,6}".prop_map(|s| s),
    ]
}

fn node(depth: u32) -> BoxedStrategy<String> {
    if depth == 0 {
        return scalar().boxed();
    }
    prop_oneof![
        2 => scalar(),
        3 => prop::collection::vec((prop::sample::select(KEYS), node(depth - 1)), 0..5).prop_map(|kv| {
            let mut seen = std::collections::BTreeSet::new();
            let items: Vec<String> = kv
                .into_iter()
                .filter(|(k, _)| seen.insert(*k))
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            format!("{{{}}}", items.join(", "))
        }),
        1 => prop::collection::vec(node(depth - 1), 0..3).prop_map(|v| format!("[{}]", v.join(", "))),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]
    #[test]
    fn never_panics(doc in node(4), lane_doc in node(2)) {
        let Ok(f) = RecipeFile::parse(Path::new("r.yaml"), doc) else { return Ok(()) };
        let lane = RecipeFile::parse(Path::new("lane.yaml"), lane_doc).ok();
        let mut files = vec![f.clone()];
        if let Some(l) = &lane {
            files.push(compose_lane(&f, Lane::AgenticSingle, l));
        }
        for file in &files {
            let _ = check_fragment(file, Lane::AgenticSingle);
            let _ = check_fragment(file, Lane::FixedSeqMulti);
            for sel in [None, Some(Selector::Base), Some(Selector::Glob("*".into())), Some(Selector::Zip { key: "zip_override_g".into(), index: Some(1) })] {
                for opts in [ExpandOptions::srtctl(), ExpandOptions::inferencex()] {
                    if let Ok(vs) = file.expand_with(sel.as_ref(), opts) {
                        for mut v in vs {
                            let _ = validate(&v);
                            let _ = render(&v).to_text();
                            infx_recipe::bind_model(&mut v, "m/x", "img#x", "fp8");
                            let _ = validate(&v);
                            let _ = render(&v).to_json();
                        }
                    }
                }
            }
            let _ = infx_recipe::srtctl::dry_run(file, None, None);
            let _ = infx_recipe::dry_run(file, None);
        }
    }
}
