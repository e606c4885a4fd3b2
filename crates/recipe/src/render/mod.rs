//! Launch commands of a variant, built offline the way srtctl builds them at run time
//! (docs/recipe.md, "Rendering (launch commands)"). Node addresses are placeholders
//! (`<ip0>`, `<ip1>`, …); ports are the first allocations srtctl's port plan hands out.

mod frontend;
mod mocker;
mod roles;
mod runtime;
mod topology;
mod vllm;
mod vllm_command;
mod vllm_launch;
mod workers;

pub(crate) use runtime::runtime_warnings;

use crate::pystr::{py_repr, py_str};
use crate::recipe::{Variant, is_truthy};
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

/// Engine `args` → argv tokens (docs/recipe.md, "Engine and router arguments"): keys sorted,
/// `_` → `-`, `true` → bare flag, `false`/`null` → nothing, list → flag then every item,
/// mapping → Python repr.
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

/// Router/frontend `args` (docs/recipe.md, "Engine and router arguments"): insertion order,
/// `_` → `-`, lists repeat the flag.
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
/// Flags srtctl derives for a vLLM worker the standard topology places, besides the
/// `vllm serve` flags every vLLM worker has derived ([`vllm_command::SERVE_OWNED`]).
const VLLM_OWNED: &[&str] = &[
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
    let fe = t.get("frontend");
    let fe_type = crate::recipe::frontend_type(t);
    let multi = fe
        .and_then(|f| f.get("enable_multiple_frontends"))
        .map(flag)
        .unwrap_or(true);
    let mut notes = Vec::new();
    let top_env = str_map(t.get("environment"));
    let (engine, roles) = if schema2 {
        roles::schema2(t, gpn, &top_env)
    } else {
        let read = roles::schema1(t, gpn, &top_env);
        notes.push(
            "schema 1: ports are srtctl's first allocations; node addresses are placeholders"
                .into(),
        );
        read
    };
    let job = job(t, schema2, &fe_type, &roles);
    refuse_if_no_gpus_per_node(t, &roles, &mut notes);
    // vLLM's direct `vllm serve` path writes the value out as text; the others pass it on.
    if !schema2 && (engine == "sglang" || (engine == "vllm" && !job.direct_endpoint)) {
        refuse_if_served_name_is_not_text(&engine, &roles, &mut notes);
    }
    if !schema2 {
        refuse_if_frontend_is_unknown(&fe_type, &mut notes);
    }
    let mut processes = Vec::new();
    // A dedicated etcd/NATS node comes first; workers start after it.
    let infra = usize::from(
        !schema2
            && t.get_path(&["infra", "etcd_nats_dedicated_node"])
                .is_some_and(flag),
    );
    // A dedicated frontend node (schema 1) follows it and hosts nginx or the single frontend.
    let fe_node =
        usize::from(!schema2 && fe.and_then(|f| f.get("dedicated_node")).is_some_and(flag));
    let mut node_cursor = infra + fe_node;
    // vLLM: srtctl's own placement, process layout and command (render/vllm*.rs).
    let all_vllm = !roles.is_empty() && roles.iter().all(|r| r.engine == "vllm");
    let mut vllm_urls = Vec::new();
    if all_vllm {
        let inputs = vllm_launch::Inputs {
            tree: t,
            schema2,
            gpn: gpn as usize,
            first_node: node_cursor,
            model_arg: job.model_arg.clone(),
            model_path: job.model_path.clone(),
            frontend: &fe_type,
            request_plane: job.request_plane.clone(),
        };
        let launched = vllm_launch::launch(&inputs, &roles, &mut notes);
        processes.extend(launched.processes);
        node_cursor += launched.nodes;
        vllm_urls = launched.worker_urls;
    }
    // The other engines: srtctl's standard placement (render/topology.rs), one process per
    // endpoint node, ports from its plan.
    let standard: &[Role] = if all_vllm { &[] } else { &roles };
    let placed = place(t, standard, &roles, schema2, gpn, node_cursor, &mut notes);
    let (workers, mut worker_urls) = workers::processes(
        &job,
        standard,
        &placed.sizes,
        &placed.endpoints,
        &placed.slots,
        &mut node_cursor,
        &mut notes,
    );
    processes.extend(workers);
    worker_urls.extend(vllm_urls);
    let frontend = frontend::Frontend {
        section: fe,
        kind: &fe_type,
        schema2,
        multiple: multi,
        disaggregated: roles.iter().any(|r| r.name != "agg"),
        // srtctl's SGLang router splits prefill and decode when either has workers (schema 1:
        // `decode_nodes: 0` alone leaves an aggregated job aggregated).
        router_disaggregated: roles
            .iter()
            .any(|r| r.name != "agg" && (schema2 || r.workers > 0)),
        direct_endpoint: job.direct_endpoint,
        head: infra,
        total_nodes: node_cursor.min(placed.allocated_end).max(infra + 1),
    };
    processes.extend(frontend::processes(&frontend, &worker_urls, &mut notes));
    processes.extend(benchmark(t));
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

/// What every worker command of the variant shares.
fn job<'a>(t: &'a Node, schema2: bool, fe_type: &str, roles: &[Role]) -> workers::Job<'a> {
    let model_path = t
        .get_path(&["model", "path"])
        .map(py_str)
        .unwrap_or_default();
    let model_arg = match model_path.strip_prefix("hf:") {
        Some(id) => id.to_string(),
        None => "/model".to_string(),
    };
    workers::Job {
        tree: t,
        schema2,
        model_arg,
        served: served_name(roles, &model_path),
        model_path,
        frontend: fe_type.to_string(),
        // Direct workers: launched by sglang.launch_server instead of dynamo.sglang.
        direct: if schema2 {
            fe_type != "dynamo"
        } else {
            fe_type == "sglang" || fe_type == "vllm"
        },
        direct_endpoint: if schema2 {
            fe_type == "sglang" || fe_type == "vllm"
        } else {
            fe_type == "vllm"
        },
        request_plane: t
            .get_path(&["dynamo", "request_plane"])
            .map(py_str)
            .unwrap_or_else(|| "tcp".into()),
    }
}

/// A custom benchmark client's command.
fn benchmark(t: &Node) -> Option<Process> {
    let b = t.get("benchmark")?;
    if b.get("type").map(py_str).as_deref() != Some("custom") {
        return None;
    }
    let cmd = b.get("command").map(py_str)?;
    Some(Process {
        kind: "benchmark".into(),
        role: "custom".into(),
        index: 0,
        node: 0,
        gpus: vec![],
        argv: vec!["bash".into(), "-lc".into(), cmd],
        env: str_map(b.get("env")),
    })
}

/// Where srtctl's standard topology puts the workers, and their ports.
struct Placement {
    /// Per placed role: workers rendered and nodes the role advances by.
    sizes: Vec<(usize, usize)>,
    endpoints: Vec<topology::Endpoint>,
    slots: Vec<Vec<topology::Slot>>,
    /// One past the job's last allocated node.
    allocated_end: usize,
}

/// Places `standard` (the roles the standard topology launches) from `first_node`; `roles`
/// (all of them) give the nodes schema 1 declares.
fn place(
    t: &Node,
    standard: &[Role],
    roles: &[Role],
    schema2: bool,
    gpn: i64,
    first_node: usize,
    notes: &mut Vec<String>,
) -> Placement {
    let spread = t
        .get_path(&["resources", "spread_workers"])
        .is_some_and(flag);
    let mut sizes: Vec<(usize, usize)> = Vec::new();
    for r in standard {
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
    let shapes: Vec<topology::Shape> = standard
        .iter()
        .zip(&sizes)
        .map(|(r, &(workers, _))| topology::Shape {
            mode: r.name,
            workers,
            gpus: r.gpus.max(0) as usize,
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
    let allocated_end = first_node + worker_nodes;
    let endpoints = topology::allocate(
        &shapes,
        gpn as usize,
        first_node,
        worker_nodes,
        spread,
        false,
    );
    if !schema2 {
        refuse_if_short(&endpoints, first_node, declared, notes);
    }
    let mut ports = topology::Ports::default();
    let mut sys_port = 7500;
    let slots: Vec<Vec<topology::Slot>> = endpoints
        .iter()
        .enumerate()
        .map(|(i, ep)| topology::one_per_node(i, ep, &mut ports, &mut sys_port))
        .collect();
    Placement {
        sizes,
        endpoints,
        slots,
        allocated_end,
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

/// A boolean field as srtctl loads it (marshmallow's `Boolean`: `"off"`, `"no"`, `0` are
/// false), Python truthiness for anything it would not load (docs/recipe.md, "Rendering").
pub(crate) fn flag(n: &Node) -> bool {
    crate::coerce::to_bool(n)
        .ok()
        .and_then(|j| j.as_bool())
        .unwrap_or_else(|| is_truthy(n))
}

/// The served-name setting srtctl's SGLang and vLLM (Dynamo) backends use: the first truthy
/// `served-model-name` (else `served_model_name`) of the prefill, aggregated and decode args,
/// as it is; a falsy one (`false`, `""`, `0`) is passed over (docs/recipe.md, "Rendering").
fn served_name_setting<'t>(roles: &[Role<'t>]) -> Option<&'t Node> {
    ["prefill", "agg", "decode"].iter().find_map(|want| {
        let a = roles.iter().find(|r| r.name == *want)?.args?;
        ["served-model-name", "served_model_name"]
            .iter()
            .filter_map(|k| a.get(k))
            .find(|v| is_truthy(v))
    })
}

/// Anything but a string as the served-name setting (a number, boolean, date, list or
/// mapping) fails when srtctl builds the command at run time (docs/recipe.md, "Rendering").
fn refuse_if_served_name_is_not_text(engine: &str, roles: &[Role], notes: &mut Vec<String>) {
    if let Some(name) = served_name_setting(roles)
        && !matches!(name.value, Value::Str(_))
    {
        notes.push(format!(
            "srtctl refuses this layout at run time: the {engine} served-model-name is a {}, not a name",
            name.value.type_name()
        ));
    }
}

/// Schema 1 loads any `frontend.type`, but srtctl knows only these four when it starts the
/// frontend and fails at run time on any other (docs/recipe.md, "Rendering").
fn refuse_if_frontend_is_unknown(fe_type: &str, notes: &mut Vec<String>) {
    if !["dynamo", "sglang", "trtllm_serve", "vllm"].contains(&fe_type) {
        notes.push(format!(
            "srtctl refuses this layout at run time: frontend.type '{fe_type}' is none of dynamo, sglang, trtllm_serve, vllm"
        ));
    }
}

/// A `gpus_per_node` below 1 (a fraction truncates to 0) loads, but srtctl divides by it when
/// it places any worker and fails at run time; the note says so (docs/recipe.md, "Rendering").
fn refuse_if_no_gpus_per_node(t: &Node, roles: &[Role], notes: &mut Vec<String>) {
    let declared = count(t.get_path(&["resources", "gpus_per_node"]));
    if declared == Some(0) && roles.iter().any(|r| r.workers > 0) {
        notes.push(
            "srtctl refuses this layout at run time: gpus_per_node is 0 (a fraction truncates to 0) and placing a worker divides by it"
                .into(),
        );
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

/// The served name of the job: [`served_name_setting`], else the model's.
fn served_name(roles: &[Role], model_path: &str) -> String {
    match served_name_setting(roles) {
        Some(v) => match &v.value {
            Value::Seq(items) => items.first().map(py_str).unwrap_or_default(),
            _ => py_str(v),
        },
        None => default_served(model_path),
    }
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
