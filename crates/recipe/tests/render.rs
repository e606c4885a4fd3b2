//! Schema-1 launch commands: the runtime facts checked against srtctl's mock runtime (ports,
//! multi-node ranks, kv-events, frontend placement), on a recipe written for this test.

use infx_recipe::{RecipeFile, render};
use std::path::Path;

const DISAGG: &str = "\
name: t
model: {path: /models/r1, container: c.sqsh, precision: fp8}
resources: {gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: 2, decode_nodes: 2, decode_workers: 1}
infra: {etcd_nats_dedicated_node: true}
frontend: {num_additional_frontends: 1, args: {router-mode: kv}}
backend:
  kv_events_config: {prefill: true}
  sglang_config:
    prefill: {tensor-parallel-size: 2, served-model-name: r1}
    decode: {tensor-parallel-size: 8, enable-dp-attention: true}
";

#[test]
fn disaggregated_schema1_launches() {
    let f = RecipeFile::parse(Path::new("t.yaml"), DISAGG.into()).unwrap();
    let v = f.expand(None).unwrap().remove(0);
    let r = render(&v);
    let lines: Vec<String> = r
        .processes
        .iter()
        .map(|p| format!("{}@{} {}", p.kind, p.node, p.argv.join(" ")))
        .collect();
    let kv = |port: u32| {
        format!(
            "--kv-events-config {{\"publisher\": \"zmq\", \"topic\": \"kv-events\", \"endpoint\": \"tcp://*:{port}\"}}"
        )
    };
    let want = vec![
        format!("worker@1 python3 -m dynamo.sglang --model-path /model --served-model-name r1 --host 0.0.0.0 --port 6100 --nccl-port 17500 --disaggregation-mode prefill --disaggregation-bootstrap-port 7200 --dump-config-to <LOG_DIR>/<node1>_config.json {} --request-plane tcp --tensor-parallel-size 2", kv(5200)),
        format!("worker@1 python3 -m dynamo.sglang --model-path /model --served-model-name r1 --host 0.0.0.0 --port 6132 --nccl-port 17501 --disaggregation-mode prefill --disaggregation-bootstrap-port 7201 --dump-config-to <LOG_DIR>/<node1>_config.json {} --request-plane tcp --tensor-parallel-size 2", kv(5201)),
        "worker@2 python3 -m dynamo.sglang --model-path /model --served-model-name r1 --host 0.0.0.0 --port 6100 --nccl-port 17502 --disaggregation-mode decode --dist-init-addr <ip2>:8300 --nnodes 2 --node-rank 0 --dump-config-to <LOG_DIR>/<node2>_config.json --request-plane tcp --enable-dp-attention --tensor-parallel-size 8".to_string(),
        "worker@3 python3 -m dynamo.sglang --model-path /model --served-model-name r1 --host 0.0.0.0 --port 0 --nccl-port 17503 --disaggregation-mode decode --dist-init-addr <ip2>:8300 --nnodes 2 --node-rank 1 --dump-config-to <LOG_DIR>/<node3>_config.json --request-plane tcp --enable-dp-attention --tensor-parallel-size 8".to_string(),
        "frontend@2 python3 -m dynamo.frontend --http-port=8180 --router-mode kv".to_string(),
        "frontend@3 python3 -m dynamo.frontend --http-port=8180 --router-mode kv".to_string(),
    ];
    assert_eq!(lines, want);
}

/// srtctl names the job after the first *truthy* served-model-name of the prefill, aggregated
/// and decode args: a falsy prefill one (`false`, `''`, `0`) passes to decode's, and with none
/// the model's name is used, for every worker (seed 603457107220992814 case 86: a zip setting
/// prefill's name to `false`).
#[test]
fn a_falsy_served_name_passes_to_the_next_role() {
    let served = |text: &str| -> Vec<String> {
        let v = RecipeFile::parse(Path::new("t.yaml"), text.into())
            .unwrap()
            .expand(None)
            .unwrap()
            .remove(0);
        render(&v)
            .processes
            .iter()
            .filter(|p| p.kind == "worker")
            .map(|p| {
                let at = p
                    .argv
                    .iter()
                    .position(|a| a == "--served-model-name")
                    .unwrap();
                p.argv[at + 1].clone()
            })
            .collect()
    };
    for falsy in ["false", "''", "0"] {
        let text = DISAGG
            .replace(
                "served-model-name: r1",
                &format!("served-model-name: {falsy}"),
            )
            .replace(
                "enable-dp-attention: true}",
                "enable-dp-attention: true, served-model-name: dec}",
            );
        assert_eq!(served(&text), ["dec"; 4], "prefill name {falsy}");
        let text = DISAGG.replace(
            "served-model-name: r1",
            &format!("served-model-name: {falsy}"),
        );
        assert_eq!(
            served(&text),
            ["r1"; 4],
            "prefill name {falsy}, no decode name"
        );
    }
}

#[test]
fn single_node_router_serves_on_the_head() {
    let text = "name: a\nmodel: {path: /m, container: c, precision: bf16}\nresources: {gpu_type: h100, gpus_per_node: 8, agg_nodes: 1, agg_workers: 2}\nfrontend: {type: sglang, args: {policy: cache_aware}}\nbackend: {sglang_config: {aggregated: {tp-size: 4}}}\n";
    let v = RecipeFile::parse(Path::new("a.yaml"), text.into())
        .unwrap()
        .expand(None)
        .unwrap()
        .remove(0);
    let r = render(&v);
    let router = r.processes.iter().find(|p| p.kind == "router").unwrap();
    assert_eq!(
        router.argv.join(" "),
        "python -m sglang_router.launch_router --worker-urls http://<ip0>:6100 http://<ip0>:6132 --host 0.0.0.0 --port 8000 --policy cache_aware"
    );
    let gpus: Vec<Vec<usize>> = r
        .processes
        .iter()
        .filter(|p| p.kind == "worker")
        .map(|p| p.gpus.clone())
        .collect();
    assert_eq!(gpus, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
    let text = r.to_text();
    assert!(
        text.contains("  env CUDA_VISIBLE_DEVICES=4,5,6,7\n"),
        "{text}"
    );
    let json = r.to_json();
    assert_eq!(json["processes"][0]["argv"][2], "sglang.launch_server");
}

#[test]
fn engine_args_rules() {
    let m = infx_yaml::parse_str(
        Path::new("a"),
        "b_flag: true\na: [1, 2]\nz: false\nn: null\nf: 0.80\nmap: {k: 1}\nTP: 2\n",
    )
    .unwrap();
    let argv = infx_recipe::engine_args(m.as_map().unwrap(), &[]);
    assert_eq!(
        argv.join(" "),
        "--TP 2 --a 1 2 --b-flag --f 0.8 --map {'k': 1}"
    );
    let argv = infx_recipe::router_args(m.as_map().unwrap());
    assert_eq!(
        argv.join(" "),
        "--b-flag --a 1 --a 2 --f 0.8 --map {'k': 1} --TP 2"
    );
}

/// srtctl prefixes disaggregated TRT-LLM workers with `numactl -m 0,1` on gb200 and gb300
/// (never aggregated ones), unless `numa_memory_bind` decides.
#[test]
fn trtllm_numactl_on_grace_hosts() {
    let recipe = |gpu: &str, layout: &str, bind: &str| {
        format!(
            "name: t\nmodel: {{path: /m, container: /c.sqsh, precision: fp4}}\n\
             resources: {{gpu_type: {gpu}, gpus_per_node: 4, {layout}}}\n\
             backend: {{type: trtllm{bind}}}\n"
        )
    };
    let numactl_lines = |text: String| -> (usize, usize) {
        let f = RecipeFile::parse(Path::new("t.yaml"), text).unwrap();
        let v = f.expand(None).unwrap().remove(0);
        let workers: Vec<String> = render(&v)
            .processes
            .iter()
            .filter(|p| p.kind == "worker")
            .map(|p| p.argv.join(" "))
            .collect();
        let bound = workers
            .iter()
            .filter(|w| w.starts_with("numactl -m 0,1 "))
            .count();
        (bound, workers.len())
    };
    let disagg = "prefill_nodes: 1, decode_nodes: 1, prefill_workers: 1, decode_workers: 1";
    let agg = "agg_nodes: 1, agg_workers: 1";
    assert_eq!(numactl_lines(recipe("gb300", disagg, "")), (2, 2));
    assert_eq!(numactl_lines(recipe("gb200", disagg, "")), (2, 2));
    assert_eq!(numactl_lines(recipe("b200", disagg, "")), (0, 2));
    assert_eq!(numactl_lines(recipe("gb300", agg, "")), (0, 1));
    assert_eq!(
        numactl_lines(recipe("gb300", disagg, ", numa_memory_bind: false")),
        (0, 2)
    );
    assert_eq!(
        numactl_lines(recipe("b200", disagg, ", numa_memory_bind: true")),
        (2, 2)
    );
}

#[test]
fn frontends_stay_on_the_allocated_nodes_when_an_aggregated_worker_is_stray() {
    // `decode_nodes` makes srtctl count the job as disaggregated: it allocates
    // prefill_nodes + decode_nodes = 4 nodes, the stray aggregated worker takes the head, and
    // the frontends go on the 3 other allocated nodes (not on a fifth node).
    let text = "\
name: t
model: {path: /models/q, container: c.sqsh, precision: fp8}
resources: {gpu_type: gb200, gpus_per_node: 4, agg_nodes: 1, agg_workers: 1, decode_nodes: 4}
backend:
  sglang_config:
    aggregated: {tensor-parallel-size: 4, data-parallel-size: 8}
";
    let f = RecipeFile::parse(Path::new("t.yaml"), text.into()).unwrap();
    let v = f.expand(None).unwrap().remove(0);
    let r = render(&v);
    let frontends: Vec<usize> = r
        .processes
        .iter()
        .filter(|p| p.kind == "frontend")
        .map(|p| p.node)
        .collect();
    assert_eq!(frontends, vec![1, 2, 3], "{:?}", r.processes);
}

/// More prefill workers than the prefill nodes have GPUs: srtctl computes zero GPUs each and
/// packs them all on the first node, counting that node's ports up across the overflow (found
/// by the random differential, seed 3 case 69).
#[test]
fn zero_gpu_workers_share_the_first_node_and_its_ports() {
    let text = "name: z\nmodel: {path: /m, container: c, precision: bf16}\nresources: {gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 1, decode_nodes: 1, prefill_workers: 6, decode_workers: 2}\nfrontend: {type: sglang, enable_multiple_frontends: false}\nbackend: {sglang_config: {prefill: {tp: 2}, decode: {tp: 2}}}\n";
    let v = RecipeFile::parse(Path::new("z.yaml"), text.into())
        .unwrap()
        .expand(None)
        .unwrap()
        .remove(0);
    let r = render(&v);
    let router = r.processes.iter().find(|p| p.kind == "router").unwrap();
    let prefill: String = (0..6)
        .map(|i| format!(" --prefill http://<ip0>:{} {}", 6100 + 32 * i, 7200 + i))
        .collect();
    assert_eq!(
        router.argv.join(" "),
        format!(
            "python -m sglang_router.launch_router --pd-disaggregation{prefill} --decode http://<ip0>:6292 --decode http://<ip0>:6324 --host 0.0.0.0 --port 8000"
        )
    );
    let places: Vec<(usize, Vec<usize>)> = r
        .processes
        .iter()
        .filter(|p| p.kind == "worker")
        .map(|p| (p.node, p.gpus.clone()))
        .collect();
    let mut want = vec![(0, vec![]); 6];
    want.extend([(0, vec![0, 1]), (0, vec![2, 3])]);
    assert_eq!(places, want);
    assert!(
        !r.notes.iter().any(|n| n.contains("refuses")),
        "{:?}",
        r.notes
    );
}

/// `gpus_per_node: 0.5` loads (srtctl truncates it to 0) but srtctl's placement divides by it,
/// so the launch fails at run time; the render says so (found by the random differential,
/// seed 3 case 38).
#[test]
fn fractional_gpus_per_node_below_one_is_refused_at_run_time() {
    let text = |gpn: &str| {
        format!(
            "name: f\nmodel: {{path: /m, container: c, precision: bf16}}\nresources: {{gpu_type: h100, gpus_per_node: {gpn}, agg_nodes: 1, agg_workers: 1}}\n"
        )
    };
    let refused = |gpn: &str| {
        let v = RecipeFile::parse(Path::new("f.yaml"), text(gpn))
            .unwrap()
            .expand(None)
            .unwrap()
            .remove(0);
        render(&v)
            .notes
            .iter()
            .any(|n| n.contains("srtctl refuses this layout at run time: gpus_per_node is 0"))
    };
    assert!(refused("0.5"));
    assert!(!refused("4.5"));
    assert!(!refused("8"));
}

/// trtllm-serve gets the parallel sizes as flags too, each one that is set and not null, as
/// srtctl passes them (`config.get(key) is not None`); a null one was rendered as `None`
/// (found by the random differential, seed 17137302722761765388 case 36).
#[test]
fn trtllm_serve_passes_the_parallel_sizes_that_are_not_null() {
    let argv = |sizes: &str| -> String {
        let v = first_variant(&format!(
            "name: t\nmodel: {{path: /m, container: c, precision: fp4}}\n\
             resources: {{gpu_type: b200, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}}\n\
             frontend: {{type: trtllm_serve}}\n\
             backend: {{type: trtllm, trtllm_config: {{aggregated: {{{sizes}}}}}}}\n"
        ));
        render(&v)
            .processes
            .iter()
            .find(|p| p.kind == "worker")
            .map(|p| p.argv.join(" "))
            .unwrap_or_default()
    };
    let line =
        argv("tensor_parallel_size: null, moe_expert_parallel_size: 2, pipeline_parallel_size: 0");
    assert!(line.contains("trtllm-serve /model"), "{line}");
    assert!(!line.contains("--tensor_parallel_size"), "{line}");
    assert!(
        line.contains("--moe_expert_parallel_size 2 --pipeline_parallel_size 0 --config"),
        "{line}"
    );
    let line = argv("tensor_parallel_size: 4");
    assert!(line.contains("--tensor_parallel_size 4 --config"), "{line}");
}

fn first_variant(text: &str) -> infx_recipe::Variant {
    RecipeFile::parse(Path::new("k.yaml"), text.into())
        .unwrap()
        .expand(None)
        .unwrap()
        .remove(0)
}

/// SGLang reads `kv_events_config: true` for prefill and decode only; an aggregated worker
/// publishes KV events only from a mapping's `aggregated` entry (found by the random
/// differential, seed 3 case 704).
#[test]
fn schema1_kv_events_true_skips_aggregated_sglang_workers() {
    let text = |kv: &str| {
        format!(
            "name: k\nmodel: {{path: /m, container: c, precision: fp8}}\nresources: {{gpu_type: h100, agg_nodes: 1, agg_workers: 1}}\nbackend: {{kv_events_config: {kv}}}\n"
        )
    };
    let publishes = |kv: &str| {
        let r = render(&first_variant(&text(kv)));
        r.processes
            .iter()
            .filter(|p| p.kind == "worker")
            .any(|p| p.argv.iter().any(|a| a == "--kv-events-config"))
    };
    assert!(!publishes("true"));
    assert!(publishes("{aggregated: true}"));
    assert!(publishes("{aggregated: {topic: t}}"));
    assert!(!publishes("{aggregated: false}"));
}

/// `decode_nodes: 0` on an aggregated job without prefill or decode workers: srtctl's SGLang
/// router stays aggregated and lists the aggregated worker (found by the random differential,
/// seed 3 case 654).
#[test]
fn router_of_an_aggregated_job_with_decode_nodes_zero_lists_its_workers() {
    let text = "name: a\nmodel: {path: /m, container: c, precision: bf16}\nresources: {gpu_type: gb300, gpus_per_node: 4, agg_nodes: 1, agg_workers: 1, decode_nodes: 0}\nfrontend: {type: sglang, enable_multiple_frontends: false}\nbackend: {sglang_config: {aggregated: {tp: 2}}}\n";
    let r = render(&first_variant(text));
    let router = r.processes.iter().find(|p| p.kind == "router").unwrap();
    assert_eq!(
        router.argv.join(" "),
        "python -m sglang_router.launch_router --worker-urls http://<ip0>:6100 --host 0.0.0.0 --port 8000"
    );
}

/// Boolean fields read as srtctl loads them: `enable_multiple_frontends: "off"` is false, so
/// one frontend serves on the head at port 8000 (found by the random differential, seed
/// 20261202 case 1110).
#[test]
fn boolean_fields_written_as_words_read_as_srtctl_loads_them() {
    let text = |multi: &str| {
        format!(
            "name: b\nmodel: {{path: /m, container: c, precision: bf16}}\nresources: {{gpu_type: h100, gpus_per_node: 8, agg_nodes: 2, agg_workers: 2}}\nfrontend: {{enable_multiple_frontends: {multi}}}\n"
        )
    };
    let frontends = |multi: &str| {
        render(&first_variant(&text(multi)))
            .processes
            .iter()
            .filter(|p| p.kind == "frontend")
            .map(|p| format!("{}@{}", p.argv.join(" "), p.node))
            .collect::<Vec<_>>()
    };
    let single = vec!["python3 -m dynamo.frontend --http-port=8000@0".to_string()];
    assert_eq!(frontends("'off'"), single);
    assert_eq!(frontends("'no'"), single);
    assert_eq!(frontends("false"), single);
    assert_eq!(
        frontends("'on'"),
        vec!["python3 -m dynamo.frontend --http-port=8180@1".to_string()]
    );
}

/// Layouts srtctl accepts but fails to launch: a list as SGLang's served name (seed 3 case
/// 1832) and trtllm_serve's disaggregated orchestrator without prefill or decode workers (seed
/// 3 case 1785). The render says so.
#[test]
fn unlaunchable_served_names_and_trtllm_serve_layouts_are_refused_at_run_time() {
    let refused = |text: &str| {
        render(&first_variant(text))
            .notes
            .iter()
            .any(|n| n.contains("srtctl refuses this layout at run time"))
    };
    let sglang = |name: &str| {
        format!(
            "name: s\nmodel: {{path: /m, container: c, precision: bf16}}\nresources: {{gpu_type: h100, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}}\nbackend: {{sglang_config: {{aggregated: {{served-model-name: {name}}}}}}}\n"
        )
    };
    // Any value but a string fails srtctl's command building (seed 1796183668796209755 case
    // 70: an integer); falsy ones fall back to the model's name.
    for bad in ["[a, b]", "{a: 1}", "5", "1.5", "true", "2026-08-01", "[5]"] {
        assert!(refused(&sglang(bad)), "{bad}");
    }
    for fine in ["m", "'5'", "0", "false", "[]", "''", "null"] {
        assert!(!refused(&sglang(fine)), "{fine}");
    }
    let vllm = |frontend: &str, name: &str| {
        format!(
            "name: v\nmodel: {{path: /m, container: c, precision: bf16}}\nresources: {{gpu_type: h100, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}}\nfrontend: {{type: {frontend}, enable_multiple_frontends: false}}\nbackend: {{type: vllm, vllm_config: {{aggregated: {{served-model-name: {name}}}}}}}\n"
        )
    };
    assert!(refused(&vllm("dynamo", "5")));
    assert!(!refused(&vllm("dynamo", "m")));
    // The direct `vllm serve` path writes the value out as text.
    assert!(!refused(&vllm("vllm", "5")));
    // Schema 1 loads any frontend type; srtctl starts only four (seed 1796185972799673218
    // case 27: an empty one).
    let frontend = |kind: &str| {
        format!(
            "name: f\nmodel: {{path: /m, container: c, precision: bf16}}\nresources: {{gpu_type: h100, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}}\nfrontend: {{type: {kind}}}\n"
        )
    };
    assert!(refused(&frontend("''")));
    assert!(refused(&frontend("nginx")));
    for kind in ["dynamo", "sglang", "vllm"] {
        assert!(!refused(&frontend(kind)), "{kind}");
    }
    let trtllm = |res: &str| {
        format!(
            "name: t\nmodel: {{path: /m, container: c, precision: bf16}}\nresources: {{gpu_type: h100, gpus_per_node: 8, {res}}}\nfrontend: {{type: trtllm_serve, enable_multiple_frontends: false}}\nbackend: {{type: trtllm}}\n"
        )
    };
    assert!(refused(&trtllm(
        "agg_nodes: 1, agg_workers: 1, prefill_nodes: 2"
    )));
    assert!(!refused(&trtllm(
        "prefill_nodes: 1, decode_nodes: 1, prefill_workers: 1, decode_workers: 1"
    )));
}
