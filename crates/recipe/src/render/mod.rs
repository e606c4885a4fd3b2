//! Launch commands of a variant, built offline the way srtctl builds them at run time
//! (recipes-schema2.md §7, §9; recipes-schema1.md §10). Node addresses are placeholders
//! (`<ip0>`, `<ip1>`, …); ports are the first allocations srtctl's port plan hands out.

mod mocker;
mod topology;
mod vllm;
mod vllm_command;
mod vllm_launch;

use crate::pystr::{py_repr, py_str};
use crate::recipe::{Variant, is_truthy};
use crate::schema2::engine_type;
use infx_yaml::{Mapping, Node, Value};
use serde_json::{Value as J, json};

/// The note on variants whose workers srtctl wraps in an nsys profiler: the prefix and the
/// profiling flags are not rendered (docs/recipe.md, "Rendering").
pub const PROFILING_NOT_RENDERED: &str =
    "profiling: the nsys prefix and profiling flags srtctl adds to each worker are not rendered";

/// One process srtctl would launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Process {
    /// `worker`, `router`, `frontend`, `benchmark`.
    pub kind: String,
    /// `agg`, `prefill`, `decode` for workers; the frontend type otherwise.
    pub role: String,
    pub index: usize,
    /// Node index of the leader (placeholder address `<ipN>`).
    pub node: usize,
    /// GPUs visible to the process (workers only).
    pub gpus: Vec<usize>,
    pub argv: Vec<String>,
    /// Environment set for the process, in the order applied.
    pub env: Vec<(String, String)>,
}

/// Every launch of one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub name: String,
    pub selector: String,
    pub schema: u8,
    pub engine: String,
    pub frontend: String,
    pub processes: Vec<Process>,
    /// What is approximate or not rendered, said plainly.
    pub notes: Vec<String>,
}

/// Python `shlex.quote`.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\"'\"'"))
}

impl Rendered {
    /// Stable text: one block per process, the command on one shell-quoted line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let sel = if self.selector.is_empty() {
            String::new()
        } else {
            format!(" [{}]", self.selector)
        };
        out.push_str(&format!(
            "# {}{sel}: schema {}, engine {}, frontend {}\n",
            self.name, self.schema, self.engine, self.frontend
        ));
        for p in &self.processes {
            let gpus = if p.gpus.is_empty() {
                String::new()
            } else {
                format!(
                    ", GPUs {}",
                    p.gpus
                        .iter()
                        .map(|g| g.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            };
            out.push_str(&format!(
                "{} {}[{}] on <ip{}>{gpus}\n",
                p.kind, p.role, p.index, p.node
            ));
            for (k, v) in &p.env {
                out.push_str(&format!("  env {k}={}\n", shell_quote(v)));
            }
            let cmd: Vec<String> = p.argv.iter().map(|a| shell_quote(a)).collect();
            out.push_str(&format!("  $ {}\n", cmd.join(" ")));
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    }

    pub fn to_json(&self) -> J {
        json!({
            "name": self.name,
            "selector": self.selector,
            "schema": self.schema,
            "engine": self.engine,
            "frontend": self.frontend,
            "processes": self.processes.iter().map(|p| json!({
                "kind": p.kind, "role": p.role, "index": p.index, "node": p.node, "gpus": p.gpus,
                "argv": p.argv,
                "env": p.env.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "notes": self.notes,
        })
    }
}

/// Engine `args` → argv tokens (§7.1): keys sorted, `_` → `-`, `true` → bare flag,
/// `false`/`null` → nothing, list → flag then every item, mapping → Python repr.
pub fn engine_args(args: &Mapping, skip: &[&str]) -> Vec<String> {
    let mut keys: Vec<(String, &Node)> = args.iter_nodes().map(|(k, v)| (py_str(k), v)).collect();
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for (k, v) in keys {
        if skip.contains(&k.as_str()) {
            continue;
        }
        let flag = format!("--{}", k.replace('_', "-"));
        match &v.value {
            Value::Bool(true) => out.push(flag),
            Value::Bool(false) | Value::Null => {}
            Value::Seq(items) => {
                out.push(flag);
                out.extend(items.iter().map(py_str));
            }
            Value::Map(_) => {
                out.push(flag);
                out.push(py_repr(v));
            }
            _ => {
                out.push(flag);
                out.push(py_str(v));
            }
        }
    }
    out
}

/// Router/frontend `args` (§9.3): insertion order, `_` → `-`, lists repeat the flag.
pub fn router_args(args: &Mapping) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in args.iter_nodes() {
        let flag = format!("--{}", py_str(k).replace('_', "-"));
        match &v.value {
            Value::Bool(true) => out.push(flag),
            Value::Bool(false) | Value::Null => {}
            Value::Seq(items) => {
                for it in items {
                    out.push(flag.clone());
                    out.push(py_str(it));
                }
            }
            _ => {
                out.push(flag);
                out.push(py_str(v));
            }
        }
    }
    out
}

struct Role<'a> {
    name: &'static str,
    workers: i64,
    gpus: i64,
    nodes: Option<i64>,
    args: Option<&'a Mapping>,
    env: Vec<(String, String)>,
    engine: String,
    /// `kv_events` (schema 2) / `kv_events_config` (schema 1) for this role.
    kv_events: Option<&'a Node>,
    /// The same as vLLM reads it (schema 1: `true` covers prefill and decode only).
    vllm_kv_events: Option<&'a Node>,
}

fn int(n: Option<&Node>) -> Option<i64> {
    n.and_then(|x| crate::coerce::to_int(x).ok())
        .and_then(|j| j.as_i64())
}

/// A count (nodes, workers, GPUs) for rendering: absurd values are clamped so a typo cannot
/// make the renderer allocate without bound (validation reports them on its own).
fn count(n: Option<&Node>) -> Option<i64> {
    int(n).map(|x| x.clamp(0, 4096))
}

fn str_map(n: Option<&Node>) -> Vec<(String, String)> {
    n.and_then(Node::as_map)
        .map(|m| {
            m.iter_nodes()
                .map(|(k, v)| (py_str(k), py_str(v)))
                .collect()
        })
        .unwrap_or_default()
}

const SGLANG_OWNED: &[&str] = &[
    "model-path",
    "model_path",
    "served-model-name",
    "served_model_name",
    "nccl-port",
    "nccl_port",
];
const VLLM_OWNED: &[&str] = &[
    "headless",
    "host",
    "port",
    "master-addr",
    "nnodes",
    "node-rank",
    "data-parallel-size-local",
    "data-parallel-start-rank",
    "data-parallel-address",
    "data-parallel-rpc-port",
    "data-parallel-hybrid-lb",
    "served-model-name",
    "served_model_name",
];

/// Renders the launch commands of a variant (schema 1 or 2).
pub fn render(v: &Variant) -> Rendered {
    let t = &v.tree;
    let schema2 = t.get("schema").is_some();
    let gpn = count(t.get_path(&["resources", "gpus_per_node"]))
        .unwrap_or(4)
        .max(1);
    let model_path = t
        .get_path(&["model", "path"])
        .map(py_str)
        .unwrap_or_default();
    let model_arg = match model_path.strip_prefix("hf:") {
        Some(id) => id.to_string(),
        None => "/model".to_string(),
    };
    let fe = t.get("frontend");
    let fe_type = fe
        .and_then(|f| f.get("type"))
        .map(py_str)
        .unwrap_or_else(|| "dynamo".into());
    let multi = fe
        .and_then(|f| f.get("enable_multiple_frontends"))
        .map(is_truthy)
        .unwrap_or(true);
    let mut notes = Vec::new();
    let top_env = str_map(t.get("environment"));
    let mut roles: Vec<Role> = Vec::new();
    let engine;
    if schema2 {
        let top_engine = t
            .get("engine")
            .filter(|e| !e.is_null())
            .and_then(engine_type);
        engine = top_engine.clone().unwrap_or_else(|| "sglang".into());
        for name in ["prefill", "decode", "agg"] {
            let Some(r) = t.get_path(&["roles", name]) else {
                continue;
            };
            let nodes = count(r.get("nodes"));
            let workers = count(r.get("workers")).unwrap_or(0);
            let gpus = count(r.get("gpus")).unwrap_or_else(|| match nodes {
                Some(n) if workers > 0 => n * gpn / workers,
                _ => gpn,
            });
            let role_engine = r
                .get("engine")
                .filter(|e| !e.is_null())
                .and_then(engine_type)
                .unwrap_or_else(|| engine.clone());
            let mut env = str_map(r.get("env"));
            for (k, val) in &top_env {
                env.retain(|(ek, _)| ek != k);
                env.push((k.clone(), val.clone()));
            }
            roles.push(Role {
                name,
                workers,
                gpus,
                nodes,
                args: r.get("args").and_then(Node::as_map),
                env,
                engine: role_engine,
                kv_events: r.get("kv_events").filter(|x| !x.is_null()),
                vllm_kv_events: r.get("kv_events").filter(|x| !x.is_null()),
            });
        }
    } else {
        let b = t.get("backend");
        engine = b
            .and_then(|b| b.get("type"))
            .map(py_str)
            .unwrap_or_else(|| "sglang".into());
        let cfg_key = format!("{engine}_config");
        let res = t.get("resources");
        let disagg = res.is_some_and(|r| {
            r.get("prefill_nodes").is_some_and(|x| !x.is_null())
                || r.get("decode_nodes").is_some_and(|x| !x.is_null())
        });
        // A disaggregated job still places `agg_workers` after decode (srtctl allocates every
        // mode), on nodes `resources` does not count.
        let has_workers = |short: &str| {
            count(res.and_then(|r| r.get(&format!("{short}_workers")))).is_some_and(|w| w > 0)
        };
        let stray_agg = disagg && has_workers("agg");
        // The same for prefill/decode workers of an aggregated job: placed first.
        let stray_pd = !disagg && (has_workers("prefill") || has_workers("decode"));
        let modes: &[(&'static str, &str, &str)] = if stray_pd || stray_agg {
            &[
                ("prefill", "prefill", "prefill"),
                ("decode", "decode", "decode"),
                ("agg", "agg", "aggregated"),
            ]
        } else if disagg {
            &[
                ("prefill", "prefill", "prefill"),
                ("decode", "decode", "decode"),
            ]
        } else {
            &[("agg", "agg", "aggregated")]
        };
        for (name, short, mode) in modes {
            let nodes = count(res.and_then(|r| r.get(&format!("{short}_nodes"))));
            let workers = count(res.and_then(|r| r.get(&format!("{short}_workers")))).unwrap_or(0);
            let explicit = count(res.and_then(|r| r.get(&format!("gpus_per_{short}"))));
            // `decode_nodes: 0` shares the prefill nodes, each decode worker as wide as a
            // prefill one (docs/recipe.md, "Rendering").
            let prefill_gpus = roles
                .first()
                .filter(|r| r.name == "prefill")
                .map(|r| r.gpus);
            let gpus = explicit.unwrap_or(match nodes {
                Some(n) if n > 0 && workers > 0 => n * gpn / workers,
                Some(0) if *name == "decode" && workers > 0 => prefill_gpus.unwrap_or(gpn),
                _ => gpn,
            });
            let mut env = str_map(b.and_then(|b| b.get(&format!("{mode}_environment"))));
            for (k, val) in &top_env {
                env.retain(|(ek, _)| ek != k);
                env.push((k.clone(), val.clone()));
            }
            roles.push(Role {
                name,
                workers,
                gpus,
                // srtctl counts `agg_nodes or 1`, but `prefill_nodes or 0` + `decode_nodes or 0`.
                nodes: if (disagg && *name == "agg") || (stray_pd && *name != "agg") {
                    Some(0)
                } else {
                    nodes.or(Some(i64::from(*name == "agg")))
                },
                args: b
                    .and_then(|b| b.get_path(&[&cfg_key, mode]))
                    .and_then(Node::as_map),
                env,
                engine: engine.clone(),
                // `kv_events_config: true` applies to every mode; a mapping names modes.
                kv_events: b
                    .and_then(|b| b.get("kv_events_config"))
                    .and_then(|k| match &k.value {
                        Value::Map(_) => k.get(mode).filter(|x| is_truthy(x)),
                        _ => Some(k).filter(|x| is_truthy(x)),
                    }),
                vllm_kv_events: vllm_launch::schema1_kv_events(b, name),
            });
        }
        notes.push(
            "schema 1: ports are srtctl's first allocations; node addresses are placeholders"
                .into(),
        );
    }
    // Direct workers: launched by sglang.launch_server instead of dynamo.sglang.
    let direct = if schema2 {
        fe_type != "dynamo"
    } else {
        fe_type == "sglang" || fe_type == "vllm"
    };
    // The worker itself is the public endpoint (port 8000).
    let direct_endpoint = if schema2 {
        fe_type == "sglang" || fe_type == "vllm"
    } else {
        fe_type == "vllm"
    };
    let served = served_name(&roles, &model_path);
    let disagg = roles.iter().any(|r| r.name != "agg");
    let mut processes = Vec::new();
    // A dedicated etcd/NATS node comes first; workers start after it.
    let infra = usize::from(
        !schema2
            && t.get_path(&["infra", "etcd_nats_dedicated_node"])
                .is_some_and(is_truthy),
    );
    // A dedicated frontend node (schema 1) follows it and hosts nginx or the single frontend.
    let fe_node = usize::from(
        !schema2
            && fe
                .and_then(|f| f.get("dedicated_node"))
                .is_some_and(is_truthy),
    );
    let mut node_cursor = infra + fe_node;
    let mut worker_urls: Vec<(String, String, Option<u32>)> = Vec::new();
    let request_plane = t
        .get_path(&["dynamo", "request_plane"])
        .map(py_str)
        .unwrap_or_else(|| "tcp".into());
    // vLLM: srtctl's own placement, process layout and command (render/vllm*.rs).
    let all_vllm = !roles.is_empty() && roles.iter().all(|r| r.engine == "vllm");
    if all_vllm {
        let inputs = vllm_launch::Inputs {
            tree: t,
            schema2,
            gpn: gpn as usize,
            first_node: node_cursor,
            model_arg: model_arg.clone(),
            model_path: model_path.clone(),
            frontend: &fe_type,
            request_plane: request_plane.clone(),
        };
        let (workers, nodes) = vllm_launch::launch(&inputs, &roles, &mut notes);
        processes.extend(workers);
        node_cursor += nodes;
    }
    // The other engines: srtctl's standard placement (render/topology.rs), one process per
    // endpoint node, ports from its plan.
    let spread = t
        .get_path(&["resources", "spread_workers"])
        .is_some_and(is_truthy);
    let mut sizes: Vec<(usize, usize)> = Vec::new();
    for r in roles.iter().filter(|_| !all_vllm) {
        let nodes_per_worker = if r.gpus > gpn {
            ((r.gpus + gpn - 1) / gpn) as usize
        } else {
            1
        };
        // Bound what one variant can make us render (a typo like `workers: 4000`).
        let cap = 1024 / nodes_per_worker.max(1);
        let workers = r.workers.max(0) as usize;
        if workers > cap {
            notes.push(format!(
                "{}: only the first {cap} of {workers} workers are rendered",
                r.name
            ));
        }
        let workers = workers.min(cap);
        let per_node = if r.gpus >= gpn || r.gpus <= 0 || spread {
            1
        } else {
            (gpn / r.gpus).max(1) as usize
        };
        let needed = workers.div_ceil(per_node) * nodes_per_worker;
        sizes.push((workers, (r.nodes.unwrap_or(1).max(0) as usize).max(needed)));
    }
    let shapes: Vec<topology::Shape> = roles
        .iter()
        .zip(&sizes)
        .map(|(r, &(workers, _))| topology::Shape {
            mode: r.name,
            workers,
            gpus: r.gpus.max(1) as usize,
        })
        .collect();
    // Schema 1: the nodes srtctl allocates are the declared ones (`decode_nodes: 0` shares).
    let declared: usize = roles
        .iter()
        .map(|r| r.nodes.unwrap_or(0).max(0) as usize)
        .sum();
    let worker_nodes: usize = if schema2 {
        sizes.iter().map(|&(_, n)| n).sum()
    } else {
        declared.max(1)
    };
    // The job's allocation ends here; workers placed past it (stray modes on nodes `resources`
    // does not count) never make srtctl allocate more, so frontends stop at this end too.
    let allocated_end = node_cursor + worker_nodes;
    let endpoints = topology::allocate(
        &shapes,
        gpn as usize,
        node_cursor,
        worker_nodes,
        spread,
        false,
    );
    if !schema2 {
        refuse_if_short(&endpoints, node_cursor, declared, &mut notes);
    }
    let mut ports = topology::Ports::default();
    let mut sys_port = 7500;
    let slots: Vec<Vec<topology::Slot>> = endpoints
        .iter()
        .enumerate()
        .map(|(i, ep)| topology::one_per_node(i, ep, &mut ports, &mut sys_port))
        .collect();
    for (r, &(workers, role_nodes)) in roles.iter().zip(&sizes) {
        for w in 0..workers {
            let Some(e) = endpoints
                .iter()
                .position(|ep| ep.mode == r.name && ep.index == w)
            else {
                continue;
            };
            let ep_slots = &slots[e];
            let nodes_per_worker = ep_slots.len();
            let leader = endpoints[e].nodes[0];
            let http_port = ep_slots[0].http_port;
            let bootstrap = ep_slots[0].bootstrap_port.unwrap_or(7200);
            // A worker larger than a node runs one rank per node.
            for (rank, place) in ep_slots.iter().enumerate() {
                // TRT-LLM launches one srun per worker across all of its nodes.
                if rank > 0 && r.engine == "trtllm" {
                    continue;
                }
                let node = place.node;
                let gpus = place.gpus.clone();
                let nccl = 17500 + place.sys_port - 7500;
                let kv_port = place.kv_events_port;
                let mut env = r.env.clone();
                let visible = gpus
                    .iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                env.insert(0, ("CUDA_VISIBLE_DEVICES".into(), visible));
                let mut argv: Vec<String> = Vec::new();
                match r.engine.as_str() {
                    "sglang" => {
                        let module = if direct {
                            "sglang.launch_server"
                        } else {
                            "dynamo.sglang"
                        };
                        argv.extend(["python3", "-m", module].map(String::from));
                        argv.extend([
                            "--model-path".into(),
                            model_arg.clone(),
                            "--served-model-name".into(),
                            served.clone(),
                            "--host".into(),
                            "0.0.0.0".into(),
                        ]);
                        // Only the leader rank serves HTTP; the others get port 0.
                        let port = match (rank, direct_endpoint) {
                            (0, true) => 8000,
                            (0, false) => http_port,
                            _ => 0,
                        };
                        argv.extend([
                            "--port".into(),
                            port.to_string(),
                            "--nccl-port".into(),
                            nccl.to_string(),
                        ]);
                        let mentions_metrics = r.args.is_some_and(|a| {
                            a.contains_key("enable-metrics") || a.contains_key("enable_metrics")
                        });
                        if schema2 && !mentions_metrics {
                            argv.push("--enable-metrics".into());
                        }
                        if r.name != "agg" {
                            argv.extend(["--disaggregation-mode".into(), r.name.to_string()]);
                            if direct && schema2 {
                                argv.push("--skip-server-warmup".into());
                            }
                            if r.name == "prefill" {
                                argv.extend([
                                    "--disaggregation-bootstrap-port".into(),
                                    bootstrap.to_string(),
                                ]);
                            }
                        }
                        if nodes_per_worker > 1 {
                            argv.extend([
                                "--dist-init-addr".into(),
                                format!("<ip{leader}>:8300"),
                                "--nnodes".into(),
                                nodes_per_worker.to_string(),
                                "--node-rank".into(),
                                rank.to_string(),
                            ]);
                        }
                        if !direct {
                            argv.extend([
                                "--dump-config-to".into(),
                                format!("<LOG_DIR>/<node{node}>_config.json"),
                            ]);
                        }
                        if let Some(kv) = r.kv_events {
                            argv.extend(["--kv-events-config".into(), kv_events_json(kv, kv_port)]);
                        }
                        if !direct {
                            argv.extend(["--request-plane".into(), request_plane.clone()]);
                        }
                        if let Some(a) = r.args {
                            argv.extend(engine_args(a, SGLANG_OWNED));
                        }
                    }
                    "vllm" => {
                        let owned = |k: &str| VLLM_OWNED.contains(&k.replace('_', "-").as_str());
                        let arg = |k: &str| {
                            r.args
                                .and_then(|a| a.get(k).or_else(|| a.get(&k.replace('-', "_"))))
                        };
                        let devices = gpus
                            .iter()
                            .map(|g| g.to_string())
                            .collect::<Vec<_>>()
                            .join(",");
                        let mut rest: Mapping = Mapping::new();
                        if let Some(a) = r.args {
                            for (k, val) in a.iter_nodes() {
                                let key = py_str(k);
                                let keep =
                                    !owned(&key) || key.replace('_', "-") == "served-model-name";
                                if keep {
                                    rest.insert(k.clone(), val.clone());
                                }
                            }
                        }
                        if direct {
                            // `vllm serve`: the served name joins the args; rendezvous flags are
                            // srtctl's; non-leader ranks run headless without host/port.
                            let bin = t
                                .get_path(&["engine", "vllm_serve_binary"])
                                .filter(|_| fe_type == "vllm")
                                .map(py_str)
                                .unwrap_or_else(|| "vllm".into());
                            argv.extend([bin, "serve".into(), model_arg.clone()]);
                            if rank == 0 {
                                let port = if direct_endpoint { 8000 } else { http_port };
                                argv.extend([
                                    "--host".into(),
                                    "0.0.0.0".into(),
                                    "--port".into(),
                                    port.to_string(),
                                ]);
                            }
                            if nodes_per_worker > 1 {
                                argv.extend([
                                    "--master-addr".into(),
                                    format!("<ip{leader}>"),
                                    "--nnodes".into(),
                                    nodes_per_worker.to_string(),
                                    "--node-rank".into(),
                                    rank.to_string(),
                                ]);
                                if rank > 0 {
                                    argv.push("--headless".into());
                                }
                            }
                            argv.extend(["--device-ids".into(), devices]);
                        } else {
                            argv.extend(
                                ["python3", "-m", "dynamo.vllm", "--model"].map(String::from),
                            );
                            argv.extend([
                                model_arg.clone(),
                                "--served-model-name".into(),
                                served.clone(),
                            ]);
                            if r.name != "agg" {
                                argv.extend(["--disaggregation-mode".into(), r.name.to_string()]);
                                // The engine-wide connector shorthand becomes --kv-transfer-config.
                                let connector = if schema2 {
                                    t.get_path(&["engine", "connector"])
                                        .map(|c| (!c.is_null()).then(|| py_str(c)))
                                } else {
                                    t.get_path(&["backend", "connector"])
                                        .map(|c| (!c.is_null()).then(|| py_str(c)))
                                }
                                .unwrap_or(Some("nixl".into()));
                                match connector.as_deref() {
                                    Some("nixl") => argv.extend([
                                        "--kv-transfer-config".into(),
                                        r#"{"kv_connector": "NixlConnector", "kv_role": "kv_both"}"#.into(),
                                    ]),
                                    Some(other) => notes.push(format!("vLLM connector {other}: --kv-transfer-config is built at run time and not shown")),
                                    None => {}
                                }
                            }
                            argv.extend(["--device-ids".into(), devices]);
                            // Per-node DP launch: each node runs its share of the DP ranks.
                            if let Some(dp) = arg("data-parallel-size").and_then(|x| int(Some(x))) {
                                let tp = arg("tensor-parallel-size")
                                    .and_then(|x| int(Some(x)))
                                    .unwrap_or(1)
                                    .max(1);
                                let local = (gpus.len() as i64 / tp).max(1).min(dp);
                                argv.extend([
                                    "--data-parallel-size-local".into(),
                                    local.to_string(),
                                    "--data-parallel-start-rank".into(),
                                    (rank as i64 * local).to_string(),
                                    "--data-parallel-address".into(),
                                    format!("<ip{leader}>"),
                                    "--data-parallel-rpc-port".into(),
                                    "8400".into(),
                                    "--data-parallel-hybrid-lb".into(),
                                ]);
                            }
                            argv.extend([
                                "--request-plane".into(),
                                request_plane.clone(),
                                "--dump-config-to".into(),
                                format!("<LOG_DIR>/<node{node}>_config.json"),
                            ]);
                        }
                        // srtctl adds the served name to the args when they lack it (both modes).
                        if !rest.contains_key("served-model-name")
                            && !rest.contains_key("served_model_name")
                        {
                            let span = v.tree.span;
                            rest.insert(
                                Node::new(Value::Str("served-model-name".into()), span),
                                Node::new(Value::Str(served.clone()), span),
                            );
                        }
                        argv.extend(engine_args(&rest, &[]));
                    }
                    "trtllm" => {
                        // One srun per worker across its nodes; the args become the engine
                        // YAML (`/logs/trtllm_config_<mode>.yaml`), not flags.
                        let mode = if r.name == "agg" { "agg" } else { r.name };
                        let engine_get = |k: &str| {
                            if schema2 {
                                t.get_path(&["engine", k])
                            } else {
                                t.get_path(&["backend", k])
                            }
                        };
                        let gpu_type = t
                            .get_path(&["resources", "gpu_type"])
                            .map(py_str)
                            .unwrap_or_default();
                        // srtctl binds memory to both NUMA nodes on Grace hosts (gb200, gb300)
                        // unless `numa_memory_bind` says otherwise, and only for disaggregated
                        // prefill/decode workers (docs/recipe.md, "Rendering").
                        let numa = matches!(mode, "prefill" | "decode")
                            && match engine_get("numa_memory_bind") {
                                Some(n) if !n.is_null() => is_truthy(n),
                                _ => matches!(gpu_type.as_str(), "gb200" | "gb300"),
                            };
                        if numa {
                            argv.extend(["numactl", "-m", "0,1"].map(String::from));
                        }
                        argv.push("trtllm-llmapi-launch".into());
                        if fe_type == "trtllm_serve" {
                            let port = if r.name == "agg" { 8000 } else { http_port };
                            argv.extend([
                                "trtllm-serve".into(),
                                model_arg.clone(),
                                "--host".into(),
                                "0.0.0.0".into(),
                                "--port".into(),
                                port.to_string(),
                            ]);
                            for k in [
                                "tensor_parallel_size",
                                "moe_expert_parallel_size",
                                "pipeline_parallel_size",
                            ] {
                                if let Some(x) = r.args.and_then(|a| a.get(k)) {
                                    argv.extend([format!("--{k}"), py_str(x)]);
                                }
                            }
                            argv.extend([
                                "--config".into(),
                                format!("/logs/trtllm_config_{mode}.yaml"),
                            ]);
                        } else {
                            argv.extend(
                                ["python3", "-m", "dynamo.trtllm", "--model-path"]
                                    .map(String::from),
                            );
                            // TRT-LLM ignores a served name in the args (docs/recipe.md).
                            argv.extend([
                                model_arg.clone(),
                                "--served-model-name".into(),
                                default_served(&model_path),
                            ]);
                            if r.name != "agg" {
                                argv.extend(["--disaggregation-mode".into(), r.name.to_string()]);
                            }
                            argv.extend([
                                "--extra-engine-args".into(),
                                format!("/logs/trtllm_config_{mode}.yaml"),
                                "--request-plane".into(),
                                request_plane.clone(),
                            ]);
                            if engine_get("publish_events_and_metrics").is_some_and(is_truthy) {
                                argv.push("--publish-events-and-metrics".into());
                            }
                        }
                    }
                    "mocker" => {
                        let backend = t.get(if schema2 { "engine" } else { "backend" });
                        argv = mocker::command(
                            backend,
                            r.name,
                            &model_arg,
                            place.bootstrap_port,
                            r.args,
                        );
                    }
                    other => {
                        argv.push(format!("<{other} worker>"));
                        notes.push(format!(
                            "{other}: engine args go into the engine's YAML config at run time; the command line is not rendered"
                        ));
                    }
                }
                processes.push(Process {
                    kind: "worker".into(),
                    role: r.name.into(),
                    index: w,
                    node,
                    gpus,
                    argv,
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
        node_cursor += role_nodes;
    }
    // Router / frontend placement: the head is the first worker node. With
    // enable_multiple_frontends the frontends go on the nodes after the head (1 +
    // num_additional_frontends at most) behind nginx on the head; if there are none, one
    // frontend serves on the head.
    let head = infra;
    let total_nodes = node_cursor.min(allocated_end).max(head + 1);
    let fe_args = fe.and_then(|f| f.get("args")).and_then(Node::as_map);
    let fe_env = str_map(fe.and_then(|f| f.get("env")));
    let additional = fe
        .and_then(|f| int(f.get("num_additional_frontends")))
        .unwrap_or(9)
        .max(0) as usize;
    let spread_nodes: Vec<usize> = if multi {
        (head + 1..total_nodes).take(1 + additional).collect()
    } else {
        vec![]
    };
    let (mut fe_nodes, router_port) = if spread_nodes.is_empty() {
        (vec![head], 8000)
    } else {
        notes.push("enable_multiple_frontends: nginx on the head node fans out to the frontends (not shown)".into());
        (spread_nodes, 8180)
    };
    let static_router = if schema2 {
        fe_type == "sglang-router"
    } else {
        fe_type == "sglang"
    };
    let mut fe_argv: Option<(String, Vec<String>)> = None;
    if static_router {
        let mut argv: Vec<String> = ["python", "-m", "sglang_router.launch_router"]
            .map(String::from)
            .to_vec();
        if disagg {
            argv.push("--pd-disaggregation".into());
            for (role, url, boot) in &worker_urls {
                if role == "prefill" {
                    argv.extend([
                        "--prefill".into(),
                        url.clone(),
                        boot.unwrap_or(7200).to_string(),
                    ]);
                }
            }
            for (role, url, _) in &worker_urls {
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
        if schema2 {
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
        fe_argv = Some(("router".into(), argv));
    } else if fe_type == "dynamo" {
        let mut argv: Vec<String> = ["python3", "-m", "dynamo.frontend"]
            .map(String::from)
            .to_vec();
        argv.push(format!("--http-port={router_port}"));
        if let Some(a) = fe_args {
            argv.extend(router_args(a));
        }
        fe_argv = Some(("frontend".into(), argv));
    } else if fe_type == "trtllm_serve" && disagg {
        // The disaggregated orchestrator: its worker list goes into `/logs/ser.yaml`; the
        // frontend args follow as written (keys kept, `true` bare).
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
        fe_argv = Some(("frontend".into(), argv));
    } else if !direct_endpoint && fe_type != "none" {
        notes.push(format!("frontend {fe_type}: command not rendered"));
    }
    // trtllm-serve runs one orchestrator whatever the frontend spreading says.
    if fe_type == "trtllm_serve" {
        fe_nodes.truncate(1);
    }
    if let Some((kind, argv)) = fe_argv {
        for (i, node) in fe_nodes.iter().enumerate() {
            processes.push(Process {
                kind: kind.clone(),
                role: fe_type.clone(),
                index: i,
                node: *node,
                gpus: vec![],
                argv: argv.clone(),
                env: fe_env.clone(),
            });
        }
    }
    // Benchmark client.
    if let Some(b) = t.get("benchmark")
        && b.get("type").map(py_str).as_deref() == Some("custom")
        && let Some(cmd) = b.get("command").map(py_str)
    {
        processes.push(Process {
            kind: "benchmark".into(),
            role: "custom".into(),
            index: 0,
            node: 0,
            gpus: vec![],
            argv: vec!["bash".into(), "-lc".into(), cmd],
            env: str_map(b.get("env")),
        });
    }
    let nsys = t
        .get_path(&["profiling", "type"])
        .map(py_str)
        .is_some_and(|p| p == "nsys" || p == "nsys-time");
    if nsys {
        notes.push(PROFILING_NOT_RENDERED.into());
    }
    notes.dedup();
    Rendered {
        name: t.get("name").map(py_str).unwrap_or_default(),
        selector: v.selector_text(),
        schema: if schema2 { 2 } else { 1 },
        engine,
        frontend: fe_type,
        processes,
        notes,
    }
}

/// srtctl allocates only the nodes `resources` declares and fails at run time when the
/// workers need more (schema 1); the note says so (the conformance runs count it as agreeing
/// with srtctl's failure).
fn refuse_if_short(
    endpoints: &[topology::Endpoint],
    first: usize,
    declared: usize,
    notes: &mut Vec<String>,
) {
    let needed = endpoints
        .iter()
        .flat_map(|e| e.nodes.iter())
        .map(|&n| n + 1 - first)
        .max()
        .unwrap_or(0);
    if needed > declared.max(1) {
        notes.push(format!(
            "srtctl refuses this layout at run time: the workers need {needed} nodes, resources allocate {declared}"
        ));
    }
}

/// `--kv-events-config` JSON (Python `json.dumps` spacing): publisher and topic (a mapping may
/// override them), then the endpoint.
fn kv_events_json(kv: &Node, port: u32) -> String {
    let mut fields: Vec<(String, String)> = vec![
        ("publisher".into(), "\"zmq\"".into()),
        ("topic".into(), "\"kv-events\"".into()),
    ];
    if let Some(m) = kv.as_map() {
        for (k, v) in m.iter_nodes() {
            let key = py_str(k);
            let val = serde_json::to_string(&crate::coerce::raw(v)).unwrap_or_default();
            match fields.iter_mut().find(|(fk, _)| *fk == key) {
                Some(slot) => slot.1 = val,
                None => fields.push((key, val)),
            }
        }
    }
    fields.push(("endpoint".into(), format!("\"tcp://*:{port}\"")));
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect();
    format!("{{{}}}", body.join(", "))
}

fn served_name(roles: &[Role], model_path: &str) -> String {
    for want in ["prefill", "agg", "decode"] {
        if let Some(r) = roles.iter().find(|r| r.name == want)
            && let Some(a) = r.args
            && let Some(v) = a.get("served-model-name").or(a.get("served_model_name"))
        {
            return match &v.value {
                Value::Seq(items) => items.first().map(py_str).unwrap_or_default(),
                _ => py_str(v),
            };
        }
    }
    default_served(model_path)
}

/// srtctl's fallback served name: the last path component of the model (a Hugging Face id
/// `hf:org/name` gives `name`).
fn default_served(model_path: &str) -> String {
    let path = model_path.strip_prefix("hf:").unwrap_or(model_path);
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .to_string()
}
