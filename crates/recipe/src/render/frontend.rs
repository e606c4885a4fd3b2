//! The router or frontend processes of a variant and where srtctl puts them (docs/recipe.md,
//! "Rendering"): the head is the first worker node; with `enable_multiple_frontends` the
//! frontends go on the nodes after the head (1 + `num_additional_frontends` at most) behind
//! nginx on the head; if there are none, one frontend serves on the head.

use super::workers::WorkerUrl;
use super::{Process, int, router_args, str_map};
use crate::pystr::py_str;
use infx_yaml::{Mapping, Node, Value};

/// The frontend as the variant declares it, and the job around it.
pub(super) struct Frontend<'a> {
    pub section: Option<&'a Node>,
    pub kind: &'a str,
    pub schema2: bool,
    pub multiple: bool,
    pub disaggregated: bool,
    /// The SGLang router runs in prefill/decode mode.
    pub router_disaggregated: bool,
    /// The worker itself is the public endpoint (no frontend process).
    pub direct_endpoint: bool,
    pub head: usize,
    /// One past the last node of the allocation.
    pub total_nodes: usize,
}

/// Every frontend or router process, one per frontend node.
pub(super) fn processes(
    f: &Frontend,
    worker_urls: &[WorkerUrl],
    notes: &mut Vec<String>,
) -> Vec<Process> {
    let fe_args = f.section.and_then(|s| s.get("args")).and_then(Node::as_map);
    let additional = f
        .section
        .and_then(|s| int(s.get("num_additional_frontends")))
        .unwrap_or(9)
        .max(0) as usize;
    let spread_nodes: Vec<usize> = if f.multiple {
        (f.head + 1..f.total_nodes).take(1 + additional).collect()
    } else {
        vec![]
    };
    let (mut fe_nodes, router_port) = if spread_nodes.is_empty() {
        (vec![f.head], 8000)
    } else {
        notes.push("enable_multiple_frontends: nginx on the head node fans out to the frontends (not shown)".into());
        (spread_nodes, 8180)
    };
    let static_router = if f.schema2 {
        f.kind == "sglang-router"
    } else {
        f.kind == "sglang"
    };
    let fe_argv: Option<(&str, Vec<String>)> = if static_router {
        let argv = sglang_router(f, worker_urls, router_port, fe_args);
        Some(("router", argv))
    } else if f.kind == "dynamo" {
        let mut argv: Vec<String> = ["python3", "-m", "dynamo.frontend"]
            .map(String::from)
            .to_vec();
        argv.push(format!("--http-port={router_port}"));
        if let Some(a) = fe_args {
            argv.extend(router_args(a));
        }
        Some(("frontend", argv))
    } else if f.kind == "trtllm_serve" && f.disaggregated {
        // The orchestrator needs a prefill and a decode worker (docs/recipe.md, "Rendering").
        let has = |mode: &str| worker_urls.iter().any(|(m, _, _)| m == mode);
        if !has("prefill") || !has("decode") {
            notes.push(
                "srtctl refuses this layout at run time: trtllm_serve's disaggregated orchestrator needs prefill and decode workers"
                    .into(),
            );
        }
        Some(("frontend", trtllm_disaggregated(fe_args)))
    } else {
        if !f.direct_endpoint && f.kind != "none" {
            notes.push(format!("frontend {}: command not rendered", f.kind));
        }
        None
    };
    // trtllm-serve runs one orchestrator whatever the frontend spreading says.
    if f.kind == "trtllm_serve" {
        fe_nodes.truncate(1);
    }
    let Some((kind, argv)) = fe_argv else {
        return Vec::new();
    };
    let env = str_map(f.section.and_then(|s| s.get("env")));
    fe_nodes
        .iter()
        .enumerate()
        .map(|(i, node)| Process {
            kind: kind.to_string(),
            role: f.kind.to_string(),
            index: i,
            node: *node,
            gpus: vec![],
            argv: argv.clone(),
            env: env.clone(),
        })
        .collect()
}

/// `sglang_router.launch_router` over the workers' URLs.
fn sglang_router(
    f: &Frontend,
    worker_urls: &[WorkerUrl],
    router_port: u32,
    fe_args: Option<&Mapping>,
) -> Vec<String> {
    let mut argv: Vec<String> = ["python", "-m", "sglang_router.launch_router"]
        .map(String::from)
        .to_vec();
    if f.router_disaggregated {
        argv.push("--pd-disaggregation".into());
        for (role, url, boot) in worker_urls {
            if role == "prefill" {
                argv.extend([
                    "--prefill".into(),
                    url.clone(),
                    boot.unwrap_or(7200).to_string(),
                ]);
            }
        }
        for (role, url, _) in worker_urls {
            if role == "decode" {
                argv.extend(["--decode".into(), url.clone()]);
            }
        }
    } else {
        argv.push("--worker-urls".into());
        argv.extend(worker_urls.iter().map(|(_, u, _)| u.clone()));
    }
    argv.extend([
        "--host".into(),
        "0.0.0.0".into(),
        "--port".into(),
        router_port.to_string(),
    ]);
    let has = |k: &str| {
        fe_args.is_some_and(|a| a.contains_key(k) || a.contains_key(&k.replace('-', "_")))
    };
    if f.schema2 {
        if !has("prometheus-port") {
            argv.extend(["--prometheus-port".into(), "29000".into()]);
        }
        if !has("prometheus-host") {
            argv.extend(["--prometheus-host".into(), "0.0.0.0".into()]);
        }
    }
    if let Some(a) = fe_args {
        argv.extend(router_args(a));
    }
    argv
}

/// The disaggregated orchestrator: its worker list goes into `/logs/ser.yaml`; the frontend
/// args follow as written (keys kept, `true` bare).
fn trtllm_disaggregated(fe_args: Option<&Mapping>) -> Vec<String> {
    let mut argv: Vec<String> = [
        "trtllm-serve",
        "disaggregated",
        "--config",
        "/logs/ser.yaml",
    ]
    .map(String::from)
    .to_vec();
    for (k, v) in fe_args.iter().flat_map(|a| a.iter_nodes()) {
        match &v.value {
            Value::Bool(true) => argv.push(format!("--{}", py_str(k))),
            Value::Bool(false) | Value::Null => {}
            _ => argv.extend([format!("--{}", py_str(k)), py_str(v)]),
        }
    }
    argv
}
