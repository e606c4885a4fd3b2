//! The worker processes of the engines srtctl places with its standard topology (SGLang,
//! TRT-LLM, mocker, and vLLM roles mixed with other engines): one process per endpoint node,
//! each engine's command built the way srtctl builds it (docs/recipe.md, "Rendering").

use super::topology::{Endpoint, Slot};
use super::vllm_command::SERVE_OWNED;
use super::{
    Process, Role, SGLANG_OWNED, VLLM_OWNED, default_served, engine_args, flag, int,
    kv_events_json, mocker,
};
use crate::pystr::py_str;
use infx_yaml::{Mapping, Node, Value};

/// What every worker command of one variant shares.
pub(super) struct Job<'a> {
    pub tree: &'a Node,
    pub schema2: bool,
    pub model_arg: String,
    pub model_path: String,
    pub served: String,
    pub frontend: String,
    /// Workers launched by the engine's own server instead of dynamo's wrapper.
    pub direct: bool,
    /// The worker itself is the public endpoint (port 8000).
    pub direct_endpoint: bool,
    pub request_plane: String,
}

/// A worker's public URL, for the router: (mode, URL, prefill bootstrap port).
pub(super) type WorkerUrl = (String, String, Option<u32>);

/// One rank of a worker: its process slot and what it shares with the worker's leader.
struct RankPlace<'s> {
    rank: usize,
    slot: &'s Slot,
    leader: usize,
    nodes_per_worker: usize,
    http_port: u32,
    bootstrap: u32,
}

/// Every worker process of `roles` (sizes: workers and nodes per role), in role then worker
/// order, with the URLs the router lists; `node_cursor` advances past each role's nodes.
pub(super) fn processes(
    job: &Job,
    roles: &[Role],
    sizes: &[(usize, usize)],
    endpoints: &[Endpoint],
    slots: &[Vec<Slot>],
    node_cursor: &mut usize,
    notes: &mut Vec<String>,
) -> (Vec<Process>, Vec<WorkerUrl>) {
    let mut processes = Vec::new();
    let mut worker_urls = Vec::new();
    for (r, &(workers, role_nodes)) in roles.iter().zip(sizes) {
        for w in 0..workers {
            let Some(e) = endpoints
                .iter()
                .position(|ep| ep.mode == r.name && ep.index == w)
            else {
                continue;
            };
            let ep_slots = &slots[e];
            let leader = endpoints[e].nodes[0];
            let http_port = ep_slots[0].http_port;
            let bootstrap = ep_slots[0].bootstrap_port.unwrap_or(7200);
            // A worker larger than a node runs one rank per node.
            for (rank, slot) in ep_slots.iter().enumerate() {
                // TRT-LLM launches one srun per worker across all of its nodes.
                if rank > 0 && r.engine == "trtllm" {
                    continue;
                }
                let at = RankPlace {
                    rank,
                    slot,
                    leader,
                    nodes_per_worker: ep_slots.len(),
                    http_port,
                    bootstrap,
                };
                let mut env = r.env.clone();
                let visible = slot
                    .gpus
                    .iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                env.insert(0, ("CUDA_VISIBLE_DEVICES".into(), visible));
                processes.push(Process {
                    kind: "worker".into(),
                    role: r.name.into(),
                    index: w,
                    node: slot.node,
                    gpus: slot.gpus.clone(),
                    argv: command(job, r, &at, notes),
                    env,
                });
            }
            let url = format!("http://<ip{leader}>:{http_port}");
            worker_urls.push((
                r.name.to_string(),
                url,
                (r.name == "prefill").then_some(bootstrap),
            ));
        }
        *node_cursor += role_nodes;
    }
    (processes, worker_urls)
}

/// The command of one worker rank, per engine.
fn command(job: &Job, r: &Role, at: &RankPlace, notes: &mut Vec<String>) -> Vec<String> {
    match r.engine.as_str() {
        "sglang" => sglang(job, r, at),
        "vllm" => vllm(job, r, at, notes),
        "trtllm" => trtllm(job, r, at),
        "mocker" => {
            let backend = job.tree.get(if job.schema2 { "engine" } else { "backend" });
            mocker::command(
                backend,
                r.name,
                &job.model_arg,
                at.slot.bootstrap_port,
                r.args,
            )
        }
        other => {
            notes.push(format!(
                "{other}: engine args go into the engine's YAML config at run time; the command line is not rendered"
            ));
            vec![format!("<{other} worker>")]
        }
    }
}

fn sglang(job: &Job, r: &Role, at: &RankPlace) -> Vec<String> {
    let mut argv: Vec<String> = Vec::new();
    let node = at.slot.node;
    let nccl = 17500 + at.slot.sys_port - 7500;
    let module = if job.direct {
        "sglang.launch_server"
    } else {
        "dynamo.sglang"
    };
    argv.extend(["python3", "-m", module].map(String::from));
    argv.extend([
        "--model-path".into(),
        job.model_arg.clone(),
        "--served-model-name".into(),
        job.served.clone(),
        "--host".into(),
        "0.0.0.0".into(),
    ]);
    // Only the leader rank serves HTTP; the others get port 0.
    let port = match (at.rank, job.direct_endpoint) {
        (0, true) => 8000,
        (0, false) => at.http_port,
        _ => 0,
    };
    argv.extend([
        "--port".into(),
        port.to_string(),
        "--nccl-port".into(),
        nccl.to_string(),
    ]);
    let mentions_metrics = r
        .args
        .is_some_and(|a| a.contains_key("enable-metrics") || a.contains_key("enable_metrics"));
    if job.schema2 && !mentions_metrics {
        argv.push("--enable-metrics".into());
    }
    if r.name != "agg" {
        argv.extend(["--disaggregation-mode".into(), r.name.to_string()]);
        if job.direct && job.schema2 {
            argv.push("--skip-server-warmup".into());
        }
        if r.name == "prefill" {
            argv.extend([
                "--disaggregation-bootstrap-port".into(),
                at.bootstrap.to_string(),
            ]);
        }
    }
    if at.nodes_per_worker > 1 {
        argv.extend([
            "--dist-init-addr".into(),
            format!("<ip{}>:8300", at.leader),
            "--nnodes".into(),
            at.nodes_per_worker.to_string(),
            "--node-rank".into(),
            at.rank.to_string(),
        ]);
    }
    if !job.direct {
        argv.extend([
            "--dump-config-to".into(),
            format!("<LOG_DIR>/<node{node}>_config.json"),
        ]);
    }
    if let Some(kv) = r.kv_events {
        argv.extend([
            "--kv-events-config".into(),
            kv_events_json(kv, at.slot.kv_events_port),
        ]);
    }
    if !job.direct {
        argv.extend(["--request-plane".into(), job.request_plane.clone()]);
    }
    if let Some(a) = r.args {
        argv.extend(engine_args(a, SGLANG_OWNED));
    }
    argv
}

/// A vLLM role placed by the standard topology (mixed engines); all-vLLM jobs use srtctl's
/// vLLM placement instead (render/vllm_launch.rs).
fn vllm(job: &Job, r: &Role, at: &RankPlace, notes: &mut Vec<String>) -> Vec<String> {
    let t = job.tree;
    let mut argv: Vec<String> = Vec::new();
    let owned = |k: &str| {
        let dashed = k.replace('_', "-");
        SERVE_OWNED.contains(&dashed.as_str()) || VLLM_OWNED.contains(&dashed.as_str())
    };
    let devices = at
        .slot
        .gpus
        .iter()
        .map(|g| g.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut rest: Mapping = Mapping::new();
    if let Some(a) = r.args {
        for (k, val) in a.iter_nodes() {
            let key = py_str(k);
            let keep = !owned(&key) || key.replace('_', "-") == "served-model-name";
            if keep {
                rest.insert(k.clone(), val.clone());
            }
        }
    }
    if job.direct {
        // `vllm serve`: the served name joins the args; rendezvous flags are srtctl's;
        // non-leader ranks run headless without host/port.
        let bin = t
            .get_path(&["engine", "vllm_serve_binary"])
            .filter(|_| job.frontend == "vllm")
            .map(py_str)
            .unwrap_or_else(|| "vllm".into());
        argv.extend([bin, "serve".into(), job.model_arg.clone()]);
        if at.rank == 0 {
            let port = if job.direct_endpoint {
                8000
            } else {
                at.http_port
            };
            argv.extend([
                "--host".into(),
                "0.0.0.0".into(),
                "--port".into(),
                port.to_string(),
            ]);
        }
        if at.nodes_per_worker > 1 {
            argv.extend([
                "--master-addr".into(),
                format!("<ip{}>", at.leader),
                "--nnodes".into(),
                at.nodes_per_worker.to_string(),
                "--node-rank".into(),
                at.rank.to_string(),
            ]);
            if at.rank > 0 {
                argv.push("--headless".into());
            }
        }
        argv.extend(["--device-ids".into(), devices]);
    } else {
        argv.extend(["python3", "-m", "dynamo.vllm", "--model"].map(String::from));
        argv.extend([
            job.model_arg.clone(),
            "--served-model-name".into(),
            job.served.clone(),
        ]);
        if r.name != "agg" {
            argv.extend(["--disaggregation-mode".into(), r.name.to_string()]);
            vllm_kv_transfer(job, &mut argv, notes);
        }
        argv.extend(["--device-ids".into(), devices]);
        vllm_data_parallel(r, at, &mut argv);
        argv.extend([
            "--request-plane".into(),
            job.request_plane.clone(),
            "--dump-config-to".into(),
            format!("<LOG_DIR>/<node{}>_config.json", at.slot.node),
        ]);
    }
    // srtctl adds the served name to the args when they lack it (both modes).
    if !rest.contains_key("served-model-name") && !rest.contains_key("served_model_name") {
        let span = t.span;
        rest.insert(
            Node::new(Value::Str("served-model-name".into()), span),
            Node::new(Value::Str(job.served.clone()), span),
        );
    }
    argv.extend(engine_args(&rest, &[]));
    argv
}

/// The engine-wide connector shorthand becomes --kv-transfer-config.
fn vllm_kv_transfer(job: &Job, argv: &mut Vec<String>, notes: &mut Vec<String>) {
    let section = if job.schema2 { "engine" } else { "backend" };
    let connector = job
        .tree
        .get_path(&[section, "connector"])
        .map(|c| (!c.is_null()).then(|| py_str(c)))
        .unwrap_or(Some("nixl".into()));
    match connector.as_deref() {
        Some("nixl") => argv.extend([
            "--kv-transfer-config".into(),
            r#"{"kv_connector": "NixlConnector", "kv_role": "kv_both"}"#.into(),
        ]),
        Some(other) => notes.push(format!(
            "vLLM connector {other}: --kv-transfer-config is built at run time and not shown"
        )),
        None => {}
    }
}

/// Per-node DP launch: each node runs its share of the DP ranks.
fn vllm_data_parallel(r: &Role, at: &RankPlace, argv: &mut Vec<String>) {
    let arg = |k: &str| {
        r.args
            .and_then(|a| a.get(k).or_else(|| a.get(&k.replace('-', "_"))))
    };
    if let Some(dp) = arg("data-parallel-size").and_then(|x| int(Some(x))) {
        let tp = arg("tensor-parallel-size")
            .and_then(|x| int(Some(x)))
            .unwrap_or(1)
            .max(1);
        let local = (at.slot.gpus.len() as i64 / tp).max(1).min(dp);
        argv.extend([
            "--data-parallel-size-local".into(),
            local.to_string(),
            "--data-parallel-start-rank".into(),
            (at.rank as i64 * local).to_string(),
            "--data-parallel-address".into(),
            format!("<ip{}>", at.leader),
            "--data-parallel-rpc-port".into(),
            "8400".into(),
            "--data-parallel-hybrid-lb".into(),
        ]);
    }
}

/// One srun per worker across its nodes; the args become the engine YAML
/// (`/logs/trtllm_config_<mode>.yaml`), not flags.
fn trtllm(job: &Job, r: &Role, at: &RankPlace) -> Vec<String> {
    let t = job.tree;
    let mut argv: Vec<String> = Vec::new();
    let mode = if r.name == "agg" { "agg" } else { r.name };
    let engine_get = |k: &str| {
        if job.schema2 {
            t.get_path(&["engine", k])
        } else {
            t.get_path(&["backend", k])
        }
    };
    let gpu_type = t
        .get_path(&["resources", "gpu_type"])
        .map(py_str)
        .unwrap_or_default();
    // srtctl binds memory to both NUMA nodes on Grace hosts (gb200, gb300) unless
    // `numa_memory_bind` says otherwise, and only for disaggregated prefill/decode workers
    // (docs/recipe.md, "Rendering").
    let numa = matches!(mode, "prefill" | "decode")
        && match engine_get("numa_memory_bind") {
            Some(n) if !n.is_null() => flag(n),
            _ => matches!(gpu_type.as_str(), "gb200" | "gb300"),
        };
    if numa {
        argv.extend(["numactl", "-m", "0,1"].map(String::from));
    }
    argv.push("trtllm-llmapi-launch".into());
    if job.frontend == "trtllm_serve" {
        let port = if r.name == "agg" { 8000 } else { at.http_port };
        argv.extend([
            "trtllm-serve".into(),
            job.model_arg.clone(),
            "--host".into(),
            "0.0.0.0".into(),
            "--port".into(),
            port.to_string(),
        ]);
        // srtctl passes each one that is set and not None (a null is no flag, not `None`; seed
        // 17137302722761765388 case 36); false and 0 are passed as Python prints them.
        for k in [
            "tensor_parallel_size",
            "moe_expert_parallel_size",
            "pipeline_parallel_size",
        ] {
            if let Some(x) = r.args.and_then(|a| a.get(k)).filter(|x| !x.is_null()) {
                argv.extend([format!("--{k}"), py_str(x)]);
            }
        }
        argv.extend([
            "--config".into(),
            format!("/logs/trtllm_config_{mode}.yaml"),
        ]);
    } else {
        argv.extend(["python3", "-m", "dynamo.trtllm", "--model-path"].map(String::from));
        // TRT-LLM ignores a served name in the args (docs/recipe.md).
        argv.extend([
            job.model_arg.clone(),
            "--served-model-name".into(),
            default_served(&job.model_path),
        ]);
        if r.name != "agg" {
            argv.extend(["--disaggregation-mode".into(), r.name.to_string()]);
        }
        argv.extend([
            "--extra-engine-args".into(),
            format!("/logs/trtllm_config_{mode}.yaml"),
            "--request-plane".into(),
            job.request_plane.clone(),
        ]);
        if engine_get("publish_events_and_metrics").is_some_and(flag) {
            argv.push("--publish-events-and-metrics".into());
        }
    }
    argv
}
