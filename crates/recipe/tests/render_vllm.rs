//! vLLM launch commands (schema 1): the facts srt-slurm's own vLLM command tests check,
//! re-stated on recipes written for this file — DP layouts (per GPU, per node, across nodes),
//! kv-events, connectors, the direct `vllm serve` path and layouts srtctl refuses.

use infx_recipe::{RecipeFile, render};
use std::path::Path;

/// The worker argvs of a schema-1 recipe with a vLLM `backend` block and `resources`.
fn workers(resources: &str, backend: &str, frontend: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let text = format!(
        "name: t\nmodel: {{path: hf:org/tiny, container: c.sqsh, precision: fp8}}\n\
         resources: {{{resources}}}\nfrontend: {{{frontend}}}\nbackend:\n  type: vllm\n{backend}"
    );
    let f = RecipeFile::parse(Path::new("t.yaml"), text).expect("recipe parses");
    let v = f.expand(None).expect("expands").remove(0);
    let r = render(&v);
    let argvs = r
        .processes
        .iter()
        .filter(|p| p.kind == "worker")
        .map(|p| p.argv.clone())
        .collect();
    (argvs, r.notes)
}

fn after<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    let i = argv.iter().position(|a| a == flag)?;
    argv.get(i + 1).map(String::as_str)
}

const AGG8: &str = "gpu_type: h100, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1";

#[test]
fn per_gpu_layout_runs_one_process_per_rank() {
    let backend =
        "  dp_launch_mode: per_gpu\n  vllm_config:\n    aggregated: {data-parallel-size: 8}\n";
    let (argvs, _) = workers(AGG8, backend, "");
    assert_eq!(argvs.len(), 8);
    for (rank, argv) in argvs.iter().enumerate() {
        assert_eq!(
            after(argv, "--data-parallel-rank"),
            Some(rank.to_string().as_str())
        );
        assert_eq!(after(argv, "--device-ids"), Some(rank.to_string().as_str()));
        assert_eq!(after(argv, "--data-parallel-rpc-port"), Some("8400"));
    }
}

#[test]
fn per_node_layout_gives_each_node_its_rank_range() {
    // DP4 × TP4 over two 8-GPU nodes: two local ranks per node, starting at 0 and 2.
    let res = "gpu_type: h100, gpus_per_node: 8, agg_nodes: 2, agg_workers: 1";
    let backend = "  vllm_config:\n    aggregated: {data-parallel-size: 4, tensor-parallel-size: 4, data-parallel-hybrid-lb: false}\n";
    let (argvs, _) = workers(res, backend, "");
    assert_eq!(argvs.len(), 2);
    for (node, argv) in argvs.iter().enumerate() {
        assert_eq!(after(argv, "--data-parallel-size-local"), Some("2"));
        let start = (node * 2).to_string();
        assert_eq!(
            after(argv, "--data-parallel-start-rank"),
            Some(start.as_str())
        );
        // Hybrid load balancing is forced on, whatever the recipe says.
        assert!(argv.iter().any(|a| a == "--data-parallel-hybrid-lb"));
        assert!(!argv.iter().any(|a| a == "--headless"));
    }
}

#[test]
fn a_replica_wider_than_a_node_uses_rendezvous_and_headless_followers() {
    // DP2 × TP8 on 4-GPU nodes: each replica spans two nodes.
    let res = "gpu_type: gb200, gpus_per_node: 4, agg_nodes: 4, agg_workers: 1";
    let backend =
        "  vllm_config:\n    aggregated: {data-parallel-size: 2, tensor-parallel-size: 8}\n";
    let (argvs, _) = workers(res, backend, "");
    assert_eq!(argvs.len(), 4);
    for (rank, argv) in argvs.iter().enumerate() {
        assert_eq!(after(argv, "--nnodes"), Some("4"));
        assert_eq!(after(argv, "--node-rank"), Some(rank.to_string().as_str()));
        assert_eq!(after(argv, "--master-addr"), Some("<ip0>"));
        assert_eq!(argv.iter().any(|a| a == "--headless"), rank > 0);
        assert!(!argv.iter().any(|a| a == "--data-parallel-size-local"));
    }
}

#[test]
fn a_layout_whose_sizes_do_not_fit_is_refused() {
    let backend =
        "  vllm_config:\n    aggregated: {data-parallel-size: 3, tensor-parallel-size: 2}\n";
    let (argvs, notes) = workers(AGG8, backend, "");
    assert!(argvs.is_empty());
    assert!(
        notes
            .iter()
            .any(|n| n.contains("srtctl refuses this layout")),
        "{notes:?}"
    );
}

#[test]
fn kv_events_true_covers_prefill_and_decode_with_their_ports() {
    let res = "gpu_type: h100, gpus_per_node: 8, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 1, decode_workers: 1";
    let (argvs, _) = workers(res, "  kv_events_config: true\n", "");
    let want = |port: u32| {
        format!(
            r#"{{"publisher": "zmq", "topic": "kv-events", "enable_kv_cache_events": true, "endpoint": "tcp://*:{port}"}}"#
        )
    };
    assert_eq!(
        after(&argvs[0], "--kv-events-config"),
        Some(want(5200).as_str())
    );
    assert_eq!(
        after(&argvs[1], "--kv-events-config"),
        Some(want(5201).as_str())
    );
    // Aggregated workers need a mapping entry.
    let (agg, _) = workers(AGG8, "  kv_events_config: true\n", "");
    assert!(!agg[0].iter().any(|a| a == "--kv-events-config"));
}

#[test]
fn every_mode_gets_the_connector_and_the_served_name_is_the_model_name() {
    let (argvs, _) = workers(AGG8, "", "");
    let argv = &argvs[0];
    assert_eq!(after(argv, "--model"), Some("org/tiny"));
    assert_eq!(after(argv, "--served-model-name"), Some("tiny"));
    assert_eq!(
        after(argv, "--kv-transfer-config"),
        Some(r#"{"kv_connector": "NixlConnector", "kv_role": "kv_both"}"#)
    );
    // A role's own connector wins; `null` at the engine turns it off.
    let backend = "  vllm_config:\n    aggregated: {connector: lmcache}\n";
    let (argvs, _) = workers(AGG8, backend, "");
    assert!(
        after(&argvs[0], "--kv-transfer-config").is_some_and(|c| c.contains("LMCacheConnectorV1"))
    );
    assert!(!argvs[0].iter().any(|a| a == "--connector"));
    let (argvs, _) = workers(AGG8, "  connector: null\n", "");
    assert!(!argvs[0].iter().any(|a| a == "--kv-transfer-config"));
}

#[test]
fn direct_vllm_serve_keeps_one_process_and_drops_owned_flags() {
    let backend =
        "  vllm_config:\n    aggregated: {data-parallel-size: 8, port: 9999, headless: true}\n";
    let (argvs, _) = workers(
        AGG8,
        backend,
        "type: vllm, enable_multiple_frontends: false",
    );
    assert_eq!(argvs.len(), 1);
    let argv = &argvs[0];
    assert_eq!(&argv[..3], ["vllm", "serve", "org/tiny"]);
    assert_eq!(after(argv, "--port"), Some("8000"));
    assert_eq!(argv.iter().filter(|a| *a == "--port").count(), 1);
    assert!(!argv.iter().any(|a| a == "--headless"));
    assert_eq!(after(argv, "--served-model-name"), Some("tiny"));
    assert_eq!(after(argv, "--data-parallel-size"), Some("8"));
}

#[test]
fn a_data_parallel_endpoint_with_a_non_numeric_size_is_refused_as_srtctl_does() {
    // srtctl multiplies data-parallel × tensor × pipeline sizes as written, so a list (or a
    // string) never equals the endpoint's GPU count: the launch fails; infx says so.
    for tp in ["[a, b]", "'4'"] {
        let backend = format!(
            "  vllm_config:\n    aggregated: {{data-parallel-size: 8, tensor-parallel-size: {tp}}}\n"
        );
        let (argvs, notes) = workers(AGG8, &backend, "");
        assert!(argvs.is_empty(), "{tp}: {argvs:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("srtctl refuses this layout at run time")
                    && n.contains("not a number")),
            "{tp}: {notes:?}"
        );
    }
    // A number still renders.
    let backend =
        "  vllm_config:\n    aggregated: {data-parallel-size: 8, tensor-parallel-size: 1}\n";
    let (argvs, _) = workers(AGG8, backend, "");
    assert!(!argvs.is_empty());
}

#[test]
fn a_list_or_string_data_parallel_size_is_refused_as_srtctl_does() {
    // The data-parallel size joins the same product (found by the random differential, seed
    // 20261202 case 117: `data-parallel-size: [3, x]`).
    for dp in ["[3, x]", "'8'"] {
        let backend = format!("  vllm_config:\n    aggregated: {{data-parallel-size: {dp}}}\n");
        let (argvs, notes) = workers(AGG8, &backend, "");
        assert!(argvs.is_empty(), "{dp}: {argvs:?}");
        assert!(
            notes.iter().any(|n| n.contains("data-parallel-size is")),
            "{dp}: {notes:?}"
        );
    }
}

#[test]
fn a_worker_computed_to_zero_gpus_gets_no_device_ids() {
    // `gpus_per_decode: 0.5` truncates to 0: srtctl places the decode worker with no GPUs and
    // leaves `--device-ids` out (found by the random differential, seed 20261202 case 72).
    let resources = "gpu_type: gb300, gpus_per_node: 4, prefill_nodes: 1, decode_nodes: 1, \
                     prefill_workers: 1, decode_workers: 1, gpus_per_decode: 0.5";
    let (argvs, _) = workers(resources, "", "");
    let decode: Vec<&Vec<String>> = argvs
        .iter()
        .filter(|a| after(a, "--disaggregation-mode") == Some("decode"))
        .collect();
    assert_eq!(decode.len(), 1, "{argvs:?}");
    assert_eq!(after(decode[0], "--device-ids"), None, "{decode:?}");
    let prefill = argvs
        .iter()
        .find(|a| after(a, "--disaggregation-mode") == Some("prefill"))
        .expect("a prefill worker");
    assert_eq!(after(prefill, "--device-ids"), Some("0,1,2,3"));
}

#[test]
fn a_true_or_fractional_parallel_size_is_refused_as_srtctl_does() {
    // Python multiplies `true` as 1 and keeps 0.5 fractional, so neither product equals the
    // endpoint's 8 GPUs (found by the random differential, seed 3 cases 1565 and 1637).
    for args in [
        "data-parallel-size: true",
        "data-parallel-size: 4, tensor-parallel-size: 0.5",
    ] {
        let backend = format!("  vllm_config:\n    aggregated: {{{args}}}\n");
        let (argvs, notes) = workers(AGG8, &backend, "");
        assert!(argvs.is_empty(), "{args}: {argvs:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("srtctl refuses this layout")),
            "{args}: {notes:?}"
        );
    }
}

#[test]
fn a_data_parallel_endpoint_with_a_negative_size_is_refused_as_srtctl_does() {
    // srtctl's GPU check multiplies the sizes as written: a negative tensor or pipeline size
    // makes the product negative, never the endpoint's GPU count (found by the random
    // differential, seed 7349712202977679463 case 139).
    for sizes in [
        "tensor-parallel-size: -1",
        "pipeline-parallel-size: -2",
        "tensor_parallel_size: -1",
    ] {
        let backend =
            format!("  vllm_config:\n    aggregated: {{data-parallel-size: 8, {sizes}}}\n");
        let (argvs, notes) = workers(AGG8, &backend, "");
        assert!(argvs.is_empty(), "{sizes}: {argvs:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("srtctl refuses this layout at run time")
                    && n.contains("the endpoint has 8")),
            "{sizes}: {notes:?}"
        );
    }
    // Unset data-parallel size with a negative replica: srtctl's floor division gives a
    // negative rank count, and the check fails as well.
    let backend =
        "  vllm_config:\n    aggregated: {data-parallel-size: 0, tensor-parallel-size: -3}\n";
    let (argvs, _) = workers(AGG8, backend, "");
    assert!(argvs.is_empty(), "{argvs:?}");
}

/// Issue #45: an SGLang router in front of vLLM workers lists their leaders' URLs, prefill with
/// its bootstrap port, as srtctl's mock launches it.
#[test]
fn an_sglang_router_lists_the_vllm_workers() {
    let text = "name: t\nmodel: {path: hf:org/tiny, container: c.sqsh, precision: fp8}\n\
        resources: {gpu_type: h100, gpus_per_node: 8, prefill_nodes: 1, decode_nodes: 1, prefill_workers: 1, decode_workers: 1}\n\
        frontend: {type: sglang}\nbackend:\n  type: vllm\n";
    let f = RecipeFile::parse(Path::new("t.yaml"), text.into()).expect("recipe parses");
    let v = f.expand(None).expect("expands").remove(0);
    let r = render(&v);
    let router = r
        .processes
        .iter()
        .find(|p| p.kind == "router")
        .expect("a router");
    let argv = router.argv.join(" ");
    assert!(
        argv.contains(
            "--pd-disaggregation --prefill http://<ip0>:6100 7200 --decode http://<ip1>:6100 --host"
        ),
        "{argv}"
    );
}

/// Issue #45: layouts both dry-runs accept and srtctl's runtime refuses are warnings with
/// their own codes: a data-parallel size that does not match the worker's GPUs, and one
/// written as a string.
#[test]
fn runtime_only_faults_are_warnings() {
    let recipe = |agg: &str| {
        format!(
            "name: t\nmodel: {{path: hf:org/tiny, container: c.sqsh, precision: fp8}}\n\
             resources: {{{AGG8}}}\nbackend:\n  type: vllm\n  vllm_config:\n    aggregated: {{{agg}}}\n"
        )
    };
    let warnings = |agg: &str| {
        let f = RecipeFile::parse(Path::new("t.yaml"), recipe(agg)).expect("recipe parses");
        infx_recipe::checked_variants(&f, None)
            .expect("expands")
            .remove(0)
            .1
    };
    let d = warnings("data-parallel-size: 2, tensor-parallel-size: 2");
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].code, infx_recipe::codes::RUNTIME_GPUS);
    assert!(!d[0].is_error());
    assert!(d[0].message.contains("need 4 GPUs"), "{}", d[0].message);
    let span = d[0].span.expect("located");
    assert_eq!(
        (span.start.line(), span.start.col()),
        (7, 38),
        "at the size"
    );
    let d = warnings("data-parallel-size: \"2\", tensor-parallel-size: 4");
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].code, infx_recipe::codes::RUNTIME_SIZE_TYPE);
    // Matching sizes, the direct vLLM endpoint and per-GPU launches are fine.
    assert!(warnings("data-parallel-size: 2, tensor-parallel-size: 4").is_empty());
    assert!(warnings("tensor-parallel-size: 2").is_empty());
}
