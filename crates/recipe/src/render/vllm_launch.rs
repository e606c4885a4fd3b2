//! Every vLLM worker of a variant: placement, processes, commands and environment
//! (docs/recipe.md, "Rendering").

use super::topology::{Ports, Shape, allocate};
use super::vllm::{VllmJob, VllmRole, processes};
use super::{Process, Role};
use crate::pystr::py_str;
use crate::recipe::is_truthy;
use infx_yaml::{Node, Value};

/// The launch-wide inputs the caller has already read.
pub(super) struct Inputs<'a> {
    pub tree: &'a Node,
    pub schema2: bool,
    pub gpn: usize,
    pub first_node: usize,
    pub model_arg: String,
    pub model_path: String,
    pub frontend: &'a str,
    pub request_plane: String,
}

/// The role's kv-events entry as srtctl reads `kv_events_config` for vLLM: `true` covers
/// prefill and decode only; a mapping names `prefill`, `decode`, `aggregated`.
pub(super) fn schema1_kv_events<'a>(backend: Option<&'a Node>, mode: &str) -> Option<&'a Node> {
    let kv = backend?.get("kv_events_config")?;
    match &kv.value {
        Value::Map(m) => m.get(if mode == "agg" { "aggregated" } else { mode }),
        Value::Bool(true) if mode != "agg" => Some(kv),
        _ => None,
    }
}

/// What [`launch`] rendered: the worker processes, the worker nodes used, and each endpoint
/// leader's URL for a router in front (docs/recipe.md, "Rendering").
pub(super) struct Launched {
    pub processes: Vec<Process>,
    pub nodes: usize,
    pub worker_urls: Vec<super::workers::WorkerUrl>,
}

/// Renders the workers.
pub(super) fn launch(inp: &Inputs, roles: &[Role], notes: &mut Vec<String>) -> Launched {
    let t = inp.tree;
    let engine = |k: &str| t.get_path(&[if inp.schema2 { "engine" } else { "backend" }, k]);
    let flag = |k: &str| engine(k).is_some_and(super::flag);
    let vroles: Vec<VllmRole> = roles
        .iter()
        .map(|r| VllmRole {
            mode: r.name,
            args: r.args,
            kv_events: r.vllm_kv_events,
        })
        .collect();
    let served = ["prefill", "agg", "decode"]
        .iter()
        .filter_map(|m| roles.iter().find(|r| r.name == *m).and_then(|r| r.args))
        .find_map(|a| {
            ["served-model-name", "served_model_name"]
                .iter()
                .filter_map(|k| a.get(k))
                .find(|v| is_truthy(v))
                .map(py_str)
        })
        .unwrap_or_else(|| {
            let path = inp
                .model_path
                .strip_prefix("hf:")
                .unwrap_or(&inp.model_path);
            path.trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(path)
                .to_string()
        });
    let direct = inp.frontend == "vllm";
    let job = VllmJob {
        roles: &vroles,
        direct,
        serve_binary: engine("vllm_serve_binary")
            .filter(|_| inp.schema2 && direct)
            .map(py_str)
            .unwrap_or_else(|| "vllm".into()),
        model_arg: inp.model_arg.clone(),
        served,
        connector: match engine("connector") {
            None => Some("nixl".into()),
            Some(c) if c.is_null() => None,
            Some(c) => Some(py_str(c)),
        },
        per_gpu: engine("dp_launch_mode").map(py_str).as_deref() == Some("per_gpu"),
        set_cuda_visible_devices: flag("set_cuda_visible_devices"),
        request_plane: inp.request_plane.clone(),
    };
    let shapes: Vec<Shape> = roles
        .iter()
        .map(|r| Shape {
            mode: r.name,
            workers: r.workers.clamp(0, 1024) as usize,
            // A worker computed to zero GPUs takes none (render/topology.rs).
            gpus: r.gpus.max(0) as usize,
        })
        .collect();
    let worker_gpus: usize = shapes.iter().map(|s| s.workers * s.gpus).sum();
    let count = |m: &str| shapes.iter().find(|s| s.mode == m).map_or(0, |s| s.workers);
    let colocate = flag("allow_prefill_decode_colocation")
        && count("prefill") > 0
        && count("decode") > 0
        && (worker_gpus <= inp.gpn || flag("allow_prefill_decode_colocation_across_nodes"));
    let declared: usize = roles
        .iter()
        .map(|r| r.nodes.unwrap_or(1).max(0) as usize)
        .sum();
    let nodes = if colocate {
        worker_gpus.div_ceil(inp.gpn)
    } else {
        declared.max(1)
    };
    let spread = t
        .get_path(&["resources", "spread_workers"])
        .is_some_and(super::flag);
    let endpoints = allocate(&shapes, inp.gpn, inp.first_node, nodes, spread, colocate);
    if !inp.schema2 {
        super::refuse_if_short(&endpoints, inp.first_node, nodes, notes);
    }
    let slots = match processes(&job, &endpoints, &mut Ports::default()) {
        Ok(s) => s,
        Err(why) => {
            notes.push(format!(
                "vLLM: srtctl refuses this layout at run time: {why}"
            ));
            return Launched {
                processes: Vec::new(),
                nodes,
                worker_urls: Vec::new(),
            };
        }
    };
    let mut out = Vec::new();
    // A router lists each endpoint's leader process (node rank 0) in process order, prefill
    // with its bootstrap port, as srtctl's SGLang frontend collects them.
    let worker_urls = slots
        .iter()
        .filter(|s| s.rank == 0)
        .map(|s| {
            let mode = endpoints[s.endpoint].mode;
            (
                mode.to_string(),
                format!("http://<ip{}>:{}", s.node, s.http_port),
                s.bootstrap_port,
            )
        })
        .collect();
    for slot in &slots {
        let ep = &endpoints[slot.endpoint];
        let mut ep_nodes: Vec<usize> = Vec::new();
        for s in slots.iter().filter(|s| s.endpoint == slot.endpoint) {
            if !ep_nodes.contains(&s.node) {
                ep_nodes.push(s.node);
            }
        }
        let role = roles.iter().find(|r| r.name == ep.mode);
        let mut env = role.map(|r| r.env.clone()).unwrap_or_default();
        let mut set = |k: &str, v: String| {
            env.retain(|(ek, _)| ek != k);
            env.push((k.to_string(), v));
        };
        if job.set_cuda_visible_devices && slot.gpus.len() < inp.gpn {
            let list: Vec<String> = slot.gpus.iter().map(|g| g.to_string()).collect();
            set("CUDA_VISIBLE_DEVICES", list.join(","));
        }
        set("DYN_VLLM_KV_EVENT_PORT", slot.kv_events_port.to_string());
        set("VLLM_NIXL_SIDE_CHANNEL_PORT", slot.nixl_port.to_string());
        set("VLLM_NIXL_SIDE_CHANNEL_HOST", format!("<ip{}>", slot.node));
        set(
            "VLLM_PORT",
            (20000 + (slot.sys_port - 7500) * 50).to_string(),
        );
        out.push(Process {
            kind: "worker".into(),
            role: ep.mode.into(),
            index: ep.index,
            node: slot.node,
            gpus: slot.gpus.clone(),
            argv: super::vllm_command::command(&job, ep.mode, slot, &ep_nodes),
            env,
        });
    }
    Launched {
        processes: out,
        nodes,
        worker_urls,
    }
}
