//! The command line of one vLLM worker process (docs/recipe.md, "Rendering").

use super::engine_args;
use super::topology::Slot;
use super::vllm::{VllmJob, kv_events, kv_transfer};
use crate::pystr::py_str;
use infx_yaml::{Mapping, Node, Value};

/// Flags srtctl derives for `vllm serve` from the allocation; recipe values are dropped.
pub(super) const SERVE_OWNED: &[&str] = &[
    "headless",
    "host",
    "port",
    "master-addr",
    "nnodes",
    "node-rank",
];
/// Data-parallel flags srtctl derives in the per-node layout.
const DP_OWNED: &[&str] = &[
    "data-parallel-size-local",
    "data_parallel_size_local",
    "data-parallel-start-rank",
    "data_parallel_start_rank",
    "data-parallel-hybrid-lb",
    "data_parallel_hybrid_lb",
    "headless",
];

fn drop_keys(config: &mut Mapping, keep: impl Fn(&str) -> bool) {
    let gone: Vec<String> = config
        .keys()
        .filter(|k| !keep(k))
        .map(str::to_string)
        .collect();
    for k in gone {
        config.shift_remove(&k);
    }
}

/// `process`'s argv. `nodes` are the endpoint's distinct nodes, leader first.
pub(super) fn command(job: &VllmJob, mode: &str, slot: &Slot, nodes: &[usize]) -> Vec<String> {
    let mut config = job
        .roles
        .iter()
        .find(|r| r.mode == mode)
        .and_then(|r| r.args)
        .cloned()
        .unwrap_or_default();
    let leader = format!("<ip{}>", nodes.first().copied().unwrap_or(slot.node));
    let node_rank = nodes.iter().position(|&n| n == slot.node).unwrap_or(0);
    let multi = nodes.len() > 1;
    let rendezvous = |argv: &mut Vec<String>| {
        argv.extend([
            "--master-addr".into(),
            leader.clone(),
            "--nnodes".into(),
            nodes.len().to_string(),
            "--node-rank".into(),
            node_rank.to_string(),
        ])
    };
    let devices: Vec<String> = slot.gpus.iter().map(|g| g.to_string()).collect();
    let mut argv: Vec<String> = Vec::new();
    if job.direct {
        drop_keys(&mut config, |k| {
            k != "connector" && !SERVE_OWNED.contains(&k.replace('_', "-").as_str())
        });
        if !config.contains_key("served-model-name") {
            let span = Default::default();
            config.insert(
                Node::new(Value::Str("served-model-name".into()), span),
                Node::new(Value::Str(job.served.clone()), span),
            );
        }
        argv.extend([
            job.serve_binary.clone(),
            "serve".into(),
            job.model_arg.clone(),
        ]);
        if node_rank == 0 {
            argv.extend(["--host", "0.0.0.0", "--port", "8000"].map(String::from));
        }
        if multi {
            rendezvous(&mut argv);
            if node_rank > 0 {
                argv.push("--headless".into());
                drop_keys(&mut config, |k| k.replace('_', "-") != "api-server-count");
            }
        }
        if !job.set_cuda_visible_devices && !devices.is_empty() {
            argv.extend(["--device-ids".into(), devices.join(",")]);
        }
        argv.extend(engine_args(&config, &[]));
        return argv;
    }
    argv.extend(["python3", "-m", "dynamo.vllm", "--model"].map(String::from));
    argv.extend([
        job.model_arg.clone(),
        "--served-model-name".into(),
        job.served.clone(),
    ]);
    if mode != "agg" {
        argv.extend(["--disaggregation-mode".into(), mode.to_string()]);
    }
    // A role's own `connector` wins over the engine-wide one (null falls back to it).
    let connector = match config.shift_remove("connector") {
        Some((_, v)) if !v.is_null() => Some(py_str(&v)),
        _ => job.connector.clone(),
    };
    if let Some(c) = connector.filter(|c| !c.is_empty() && c != "null" && c != "none") {
        argv.extend(["--kv-transfer-config".into(), kv_transfer(&c)]);
    }
    if !job.set_cuda_visible_devices && !devices.is_empty() {
        argv.extend(["--device-ids".into(), devices.join(",")]);
    }
    if job.dp_size(mode).is_some() {
        // Both spellings leave the args; the first truthy one is the recipe's port.
        let removed: Vec<Node> = ["data-parallel-rpc-port", "data_parallel_rpc_port"]
            .iter()
            .filter_map(|k| config.shift_remove(k).map(|(_, v)| v))
            .collect();
        let recipe_rpc = removed.into_iter().find(crate::recipe::is_truthy);
        let rpc = match (slot.dp_rpc_port, recipe_rpc) {
            (Some(p), _) => p.to_string(),
            (None, Some(v)) => py_str(&v),
            (None, None) => "8400".into(),
        };
        let dp_flags = |argv: &mut Vec<String>| {
            argv.extend(["--data-parallel-address".into(), leader.clone()]);
            argv.extend(["--data-parallel-rpc-port".into(), rpc.clone()]);
        };
        if job.per_gpu {
            argv.extend(["--data-parallel-rank".into(), slot.rank.to_string()]);
            dp_flags(&mut argv);
        } else {
            drop_keys(&mut config, |k| !DP_OWNED.contains(&k));
            let replica =
                job.size(mode, "tensor-parallel-size") * job.size(mode, "pipeline-parallel-size");
            if replica > slot.gpus.len() {
                rendezvous(&mut argv);
                dp_flags(&mut argv);
                if node_rank > 0 {
                    argv.push("--headless".into());
                }
            } else {
                let local = slot.gpus.len() / replica;
                argv.extend(["--data-parallel-size-local".into(), local.to_string()]);
                argv.extend(["--data-parallel-start-rank".into(), slot.rank.to_string()]);
                dp_flags(&mut argv);
                argv.push("--data-parallel-hybrid-lb".into());
            }
        }
    } else if multi {
        rendezvous(&mut argv);
        if node_rank > 0 {
            argv.push("--headless".into());
        }
    }
    argv.extend(["--request-plane".into(), job.request_plane.clone()]);
    argv.extend([
        "--dump-config-to".into(),
        format!("<LOG_DIR>/<node{}>_config.json", slot.node),
    ]);
    let kv = job
        .roles
        .iter()
        .find(|r| r.mode == mode)
        .and_then(|r| r.kv_events);
    if let Some(cfg) = kv.and_then(|kv| kv_events(kv, slot.kv_events_port)) {
        argv.extend(["--kv-events-config".into(), cfg]);
    }
    argv.extend(engine_args(&config, &[]));
    argv
}
