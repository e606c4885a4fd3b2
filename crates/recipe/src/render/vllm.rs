//! vLLM workers as srtctl launches them (docs/recipe.md, "Rendering"): `python3 -m
//! dynamo.vllm` behind a Dynamo frontend, or `vllm serve` as the public endpoint, with the
//! data-parallel layout (`dp_launch_mode`) deciding how many processes an endpoint runs.

use super::topology::{Endpoint, Ports, Slot, one_per_node};
use crate::pystr::{json_str, py_json, py_str};
use infx_yaml::{Mapping, Node, Value};

/// What one vLLM role (prefill, decode or agg) asks for.
pub(super) struct VllmRole<'a> {
    pub mode: &'static str,
    pub args: Option<&'a Mapping>,
    /// The role's `kv_events_config` entry: `true` or a mapping of overrides.
    pub kv_events: Option<&'a Node>,
}

/// Job-wide settings of the vLLM launch.
pub(super) struct VllmJob<'a> {
    pub roles: &'a [VllmRole<'a>],
    /// `vllm serve` as the public endpoint (`frontend.type: vllm`).
    pub direct: bool,
    pub serve_binary: String,
    pub model_arg: String,
    pub served: String,
    /// The engine-wide connector shorthand; `None` when disabled.
    pub connector: Option<String>,
    pub per_gpu: bool,
    pub set_cuda_visible_devices: bool,
    pub request_plane: String,
}

impl VllmJob<'_> {
    fn args(&self, mode: &str) -> Option<&Mapping> {
        self.roles
            .iter()
            .find(|r| r.mode == mode)
            .and_then(|r| r.args)
    }
    /// A size knob (`tensor-parallel-size`, …), kebab or snake spelled, 1 when unset or falsy.
    pub(super) fn size(&self, mode: &str, key: &str) -> usize {
        self.raw_size(mode, key).max(1)
    }
    /// As [`Self::size`], 0 when unset, falsy or not positive.
    fn raw_size(&self, mode: &str, key: &str) -> usize {
        self.signed_size(mode, key)
            .filter(|&x| x > 0)
            .map_or(0, |x| x.min(4096) as usize)
    }
    /// The size as srtctl reads it (`args[kebab] or args[snake]`): an integer as written, sign
    /// included; `None` when unset or falsy.
    fn signed_size(&self, mode: &str, key: &str) -> Option<i64> {
        let a = self.args(mode);
        let v = a
            .and_then(|a| a.get(key))
            .filter(|n| crate::recipe::is_truthy(n))
            .or_else(|| a.and_then(|a| a.get(&key.replace('-', "_"))));
        // Python multiplies `true` as 1.
        v.and_then(|n| match n.value {
            Value::Bool(true) => Some(1),
            _ => crate::coerce::to_int(n).ok().and_then(|j| j.as_i64()),
        })
        .filter(|&x| x != 0)
    }
    /// srtctl's GPU check of a data-parallel endpoint, on the sizes as written: data × tensor ×
    /// pipeline parallel must equal the endpoint's GPUs (`total`). A negative size makes the
    /// product negative, and the launch fails there (docs/recipe.md, "Rendering").
    pub(super) fn written_sizes_fit(&self, mode: &str, total: usize) -> Result<(), String> {
        let tp = self.signed_size(mode, "tensor-parallel-size").unwrap_or(1);
        let pp = self
            .signed_size(mode, "pipeline-parallel-size")
            .unwrap_or(1);
        let replica = tp.saturating_mul(pp);
        let total = total as i64;
        let dp = self
            .signed_size(mode, "data-parallel-size")
            .unwrap_or_else(|| floor_div(total, replica));
        let expected = dp.saturating_mul(replica);
        if expected == total {
            Ok(())
        } else {
            Err(format!(
                "{mode} data-parallel-size={dp}, tensor-parallel-size={tp} and pipeline-parallel-size={pp} need {expected} GPUs, the endpoint has {total}"
            ))
        }
    }
    /// A truthy data-parallel, tensor or pipeline size that is a string, list, mapping or
    /// fraction.
    /// srtctl multiplies the sizes as written when it checks a data-parallel endpoint's GPU
    /// count, so such a product (a repeated string or list) never equals the count and the
    /// launch fails (docs/recipe.md, "Rendering").
    pub(super) fn unmultipliable_size(&self, mode: &str) -> Option<String> {
        let a = self.args(mode)?;
        [
            "data-parallel-size",
            "data_parallel_size",
            "tensor-parallel-size",
            "tensor_parallel_size",
            "pipeline-parallel-size",
            "pipeline_parallel_size",
        ]
        .iter()
        .find_map(|k| {
            let n = a.get(k).filter(|n| crate::recipe::is_truthy(n))?;
            // A fractional size makes a fractional product, which no GPU count equals.
            let fractional = matches!(&n.value, Value::Float(f) if f.value.fract() != 0.0);
            (fractional || matches!(n.value, Value::Str(_) | Value::Seq(_) | Value::Map(_)))
                .then(|| format!("{mode} {k} is {}, not a number", py_json(n)))
        })
    }
    /// Data-parallel mode: the role's args set `data-parallel-size` (either spelling) non-null;
    /// the size, 0 when falsy.
    pub(super) fn dp_size(&self, mode: &str) -> Option<usize> {
        let a = self.args(mode)?;
        let set = ["data-parallel-size", "data_parallel_size"]
            .iter()
            .any(|k| a.get(k).is_some_and(|n| !n.is_null()));
        set.then(|| self.raw_size(mode, "data-parallel-size"))
    }
}

/// The processes of every endpoint, in launch order; `Err` says why srtctl refuses the layout
/// at run time (a DP × TP × PP product that does not match the GPUs).
pub(super) fn processes(
    job: &VllmJob,
    endpoints: &[Endpoint],
    ports: &mut Ports,
) -> Result<Vec<Slot>, String> {
    let mut sys = 7500;
    let mut out = Vec::new();
    for (i, ep) in endpoints.iter().enumerate() {
        let dp = if job.direct {
            None
        } else {
            job.dp_size(ep.mode)
        };
        let Some(dp) = dp else {
            out.extend(one_per_node(i, ep, ports, &mut sys));
            continue;
        };
        if !job.per_gpu
            && let Some(why) = job.unmultipliable_size(ep.mode)
        {
            return Err(why);
        }
        let replica =
            job.size(ep.mode, "tensor-parallel-size") * job.size(ep.mode, "pipeline-parallel-size");
        let local_gpus = ep.gpus.len();
        if job.per_gpu {
            let dp = if dp == 0 { local_gpus } else { dp };
            out.extend(per_gpu(i, ep, dp, ports, &mut sys));
            continue;
        }
        let total = local_gpus * ep.nodes.len();
        job.written_sizes_fit(ep.mode, total)?;
        let dp = if dp == 0 { total / replica } else { dp };
        if dp * replica != total {
            return Err(format!(
                "{} data-parallel-size={dp} × tensor × pipeline parallel {replica} needs {} GPUs, the endpoint has {total}",
                ep.mode,
                dp * replica
            ));
        }
        if replica > local_gpus {
            // A replica wider than a node: one process per node, vLLM's own rendezvous.
            if ep.nodes.len() < 2 || !replica.is_multiple_of(local_gpus) {
                return Err(format!(
                    "{}: a replica of {replica} GPUs does not split evenly over nodes of {local_gpus}",
                    ep.mode
                ));
            }
            out.extend(one_per_node(i, ep, ports, &mut sys));
        } else {
            if !local_gpus.is_multiple_of(replica) {
                return Err(format!(
                    "{}: a replica of {replica} GPUs does not divide the node's {local_gpus}",
                    ep.mode
                ));
            }
            let local = local_gpus / replica;
            let dp_rpc = ports.dp_rpc(ep.nodes[0]);
            let nixl = ports.nixl(dp as u32);
            for (n, &node) in ep.nodes.iter().enumerate() {
                out.push(Slot {
                    endpoint: i,
                    node,
                    rank: n * local,
                    gpus: ep.gpus.clone(),
                    sys_port: sys,
                    http_port: ports.http(node),
                    bootstrap_port: (ep.mode == "prefill").then(|| ports.bootstrap(node)),
                    kv_events_port: ports.kv_events(local as u32),
                    nixl_port: nixl,
                    dp_rpc_port: Some(dp_rpc),
                });
                sys += 1;
            }
        }
    }
    Ok(out)
}

/// Python's `a // b` (rounds toward negative infinity); `b` is never 0 here.
fn floor_div(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// `dp_launch_mode: per_gpu`: one process per GPU, each owning one DP rank.
fn per_gpu(i: usize, ep: &Endpoint, dp: usize, ports: &mut Ports, sys: &mut u32) -> Vec<Slot> {
    let dp_rpc = ports.dp_rpc(ep.nodes[0]);
    let nixl = ports.nixl(dp as u32);
    let mut out = Vec::new();
    for &node in &ep.nodes {
        for &gpu in &ep.gpus {
            let rank = out.len();
            out.push(Slot {
                endpoint: i,
                node,
                rank,
                gpus: vec![gpu],
                sys_port: *sys,
                http_port: if rank == 0 { ports.http(node) } else { 0 },
                bootstrap_port: (ep.mode == "prefill" && rank == 0).then(|| ports.bootstrap(node)),
                kv_events_port: ports.kv_events(1),
                nixl_port: nixl,
                dp_rpc_port: Some(dp_rpc),
            });
            *sys += 1;
        }
    }
    out
}

/// The `--kv-transfer-config` JSON of a connector shorthand (others pass through as written).
pub(super) fn kv_transfer(connector: &str) -> String {
    match connector.to_lowercase().as_str() {
        "nixl" => r#"{"kv_connector": "NixlConnector", "kv_role": "kv_both"}"#.into(),
        "lmcache" => r#"{"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}"#.into(),
        "kvbm" => r#"{"kv_connector": "DynamoConnector", "kv_connector_module_path": "kvbm.vllm_integration.connector", "kv_role": "kv_both"}"#.into(),
        _ => connector.to_string(),
    }
}

/// `--kv-events-config`: zmq defaults, the role's overrides, then the process's endpoint.
pub(super) fn kv_events(kv: &Node, port: u32) -> Option<String> {
    let mut fields: Vec<(String, String)> = vec![
        ("publisher".into(), json_str("zmq")),
        ("topic".into(), json_str("kv-events")),
        ("enable_kv_cache_events".into(), "true".into()),
    ];
    match &kv.value {
        Value::Bool(true) => {}
        Value::Map(m) => {
            for (k, v) in m.iter_nodes() {
                let (key, val) = (py_str(k), py_json(v));
                match fields.iter_mut().find(|(fk, _)| *fk == key) {
                    Some(slot) => slot.1 = val,
                    None => fields.push((key, val)),
                }
            }
        }
        _ => return None,
    }
    let endpoint = json_str(&format!("tcp://*:{port}"));
    match fields.iter_mut().find(|(k, _)| k == "endpoint") {
        Some(slot) => slot.1 = endpoint,
        None => fields.push(("endpoint".into(), endpoint)),
    }
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}: {v}", json_str(k)))
        .collect();
    Some(format!("{{{}}}", body.join(", ")))
}
