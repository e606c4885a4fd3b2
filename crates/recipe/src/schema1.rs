//! Schema 1 (srt-slurm c88ef731, `srtctl` 0.3.0): typed load with every default filled in,
//! exactly as marshmallow dumps it, then the post-init rules (docs/recipe.md, "Schema 1: how a
//! recipe is read").

use crate::coerce::*;
use crate::pystr::{py_str, py_type_short_name};
use crate::source::join_key;
use infx_report::Span;
use infx_yaml::{Mapping, Node, Value};
use serde_json::{Map, Value as J, json};

/// A field-level error (marshmallow's nested message dict, flattened).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Path of the field (`["environment", "FOO", "value"]`).
    pub path: Vec<String>,
    pub message: String,
    pub span: Span,
}

/// Why a schema-1 load failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Field errors (all of them, as marshmallow collects them).
    Fields(Vec<FieldError>),
    /// A post-init rule (first failure only); `path` is the field it is about.
    Rule {
        message: String,
        path: String,
        span: Span,
    },
}

#[derive(Clone, Copy)]
enum T {
    Str,
    Int,
    Float,
    Bool,
    StrMap,
    AnyMap,
    ListStr,
    Raw,
    Obj(&'static [F]),
    Backend,
    Concurrencies,
    /// `list[float] | str` (benchmark.prefix_ratios).
    FloatsOrStr,
    ReqRate,
    BoolOrMap,
}

#[derive(Clone, Copy)]
enum D {
    Req,
    Null,
    S(&'static str),
    I(i64),
    Fl(f64),
    B(bool),
    EmptyMap,
    EmptyList,
    /// A list of strings.
    StrList(&'static [&'static str]),
    /// A nested object filled with its defaults.
    Obj,
    /// The default SGLang backend.
    Backend,
}

#[derive(Clone, Copy)]
struct F {
    n: &'static str,
    t: T,
    d: D,
    /// Explicit `null` accepted.
    null: bool,
}

const fn f(n: &'static str, t: T, d: D) -> F {
    F {
        n,
        t,
        d,
        null: matches!(d, D::Null),
    }
}
const fn fo(n: &'static str, t: T, d: D) -> F {
    F {
        n,
        t,
        d,
        null: true,
    }
}

const MODEL: &[F] = &[
    f("path", T::Str, D::Req),
    f("container", T::Str, D::Req),
    f("precision", T::Str, D::Req),
    f("stage_dir", T::Str, D::Null),
];
const RESOURCES: &[F] = &[
    f("gpu_type", T::Str, D::Req),
    f("gpus_per_node", T::Int, D::I(4)),
    f("prefill_nodes", T::Int, D::Null),
    f("decode_nodes", T::Int, D::Null),
    f("prefill_workers", T::Int, D::Null),
    f("decode_workers", T::Int, D::Null),
    f("agg_nodes", T::Int, D::Null),
    f("agg_workers", T::Int, D::Null),
    f("spread_workers", T::Bool, D::B(false)),
    f("het_jobs", T::Bool, D::Null),
    f("gpus_per_prefill", T::Int, D::Null),
    f("gpus_per_decode", T::Int, D::Null),
    f("gpus_per_agg", T::Int, D::Null),
];
const SLURM: &[F] = &[
    f("account", T::Str, D::Null),
    f("partition", T::Str, D::Null),
    f("time_limit", T::Str, D::Null),
];
const MODES: &[F] = &[
    f("prefill", T::AnyMap, D::Null),
    f("decode", T::AnyMap, D::Null),
    f("aggregated", T::AnyMap, D::Null),
];
const MOONCAKE: &[F] = &[
    f("container", T::Str, D::Null),
    f("env", T::StrMap, D::EmptyMap),
    f("master_extra_args", T::ListStr, D::EmptyList),
];
const MOONCAKE_VLLM: &[F] = &[
    f("container", T::Str, D::Null),
    f("env", T::StrMap, D::EmptyMap),
    f("master_extra_args", T::ListStr, D::EmptyList),
    f("store_config", T::AnyMap, D::Null),
];
const ENVS: [F; 3] = [
    f("prefill_environment", T::StrMap, D::EmptyMap),
    f("decode_environment", T::StrMap, D::EmptyMap),
    f("aggregated_environment", T::StrMap, D::EmptyMap),
];
const SGLANG: &[F] = &[
    f("type", T::Str, D::S("sglang")),
    f("gpu_type", T::Str, D::Null),
    ENVS[0],
    ENVS[1],
    ENVS[2],
    f("sglang_config", T::Obj(MODES), D::Null),
    f("kv_events_config", T::BoolOrMap, D::Null),
    f("mooncake_kv_store", T::Obj(MOONCAKE), D::Null),
];
const TRTLLM: &[F] = &[
    f("type", T::Str, D::S("trtllm")),
    ENVS[0],
    ENVS[1],
    ENVS[2],
    f("trtllm_config", T::Obj(MODES), D::Null),
    f("publish_events_and_metrics", T::Bool, D::B(false)),
    f("sequential_node_start", T::Int, D::I(0)),
    f("numa_memory_bind", T::Bool, D::Null),
];
const VLLM: &[F] = &[
    f("type", T::Str, D::S("vllm")),
    ENVS[0],
    ENVS[1],
    ENVS[2],
    f("vllm_config", T::Obj(MODES), D::Null),
    f("set_cuda_visible_devices", T::Bool, D::B(false)),
    fo("connector", T::Str, D::S("nixl")),
    f("mooncake_kv_store", T::Obj(MOONCAKE_VLLM), D::Null),
    f("kv_events_config", T::BoolOrMap, D::Null),
    f("allow_prefill_decode_colocation", T::Bool, D::B(false)),
    f(
        "allow_prefill_decode_colocation_across_nodes",
        T::Bool,
        D::B(false),
    ),
    f("dp_launch_mode", T::Str, D::S("per_node")),
];
const MOCKER: &[F] = &[
    f("type", T::Str, D::S("mocker")),
    f("engine_type", T::Str, D::S("vllm")),
    f("speedup_ratio", T::Float, D::Fl(100.0)),
    f("decode_speedup_ratio", T::Float, D::Fl(1.0)),
    f("num_gpu_blocks_override", T::Int, D::I(16384)),
    f("max_num_seqs", T::Int, D::I(256)),
    f("max_num_batched_tokens", T::Int, D::I(8192)),
    f("block_size", T::Int, D::Null),
    f("data_parallel_size", T::Int, D::I(1)),
    f("num_workers", T::Int, D::I(1)),
    f("startup_time", T::Float, D::Null),
    f("kv_transfer_bandwidth", T::Float, D::Null),
    f("kv_cache_dtype", T::Str, D::Null),
    f("enable_prefix_caching", T::Bool, D::B(true)),
    f("enable_chunked_prefill", T::Bool, D::B(true)),
    f("preemption_mode", T::Str, D::Null),
    ENVS[0],
    ENVS[1],
    ENVS[2],
    f("mocker_config", T::Obj(MODES), D::Null),
];
const FRONTEND: &[F] = &[
    f("type", T::Str, D::S("dynamo")),
    f("enable_multiple_frontends", T::Bool, D::B(true)),
    f("num_additional_frontends", T::Int, D::I(9)),
    f("nginx_container", T::Str, D::S("nginx:1.27.4")),
    f("nginx_raise_ulimit", T::Bool, D::B(false)),
    f("nginx_session_affinity", T::Bool, D::B(false)),
    f(
        "nginx_session_affinity_header",
        T::Str,
        D::S("X-Dynamo-Session-ID"),
    ),
    f("nginx_keepalive_timeout", T::Str, D::S("600s")),
    f("args", T::AnyMap, D::Null),
    f("env", T::StrMap, D::Null),
    f("ctx_router", T::AnyMap, D::Null),
    f("gen_router", T::AnyMap, D::Null),
    f("server_config_extra", T::AnyMap, D::Null),
    f("orchestrator_placement", T::Str, D::S("head")),
    f("dedicated_node", T::Bool, D::B(false)),
];
const DYNAMO: &[F] = &[
    f("install", T::Bool, D::B(true)),
    fo("version", T::Str, D::S("0.8.0")),
    f("hash", T::Str, D::Null),
    f("top_of_tree", T::Bool, D::B(false)),
    f("wheel", T::Str, D::Null),
    f("request_plane", T::Str, D::S("tcp")),
    f("event_plane", T::Str, D::Null),
    f("cargo_patches", T::ListStr, D::Null),
];
const BENCHMARK: &[F] = &[
    f("type", T::Str, D::S("manual")),
    f("isl", T::Int, D::Null),
    f("osl", T::Int, D::Null),
    f("concurrencies", T::Concurrencies, D::Null),
    f("req_rate", T::ReqRate, D::S("inf")),
    f("client_placement", T::Str, D::S("head")),
    f("client_dedicated_node", T::Bool, D::B(false)),
    f("colocate_with_frontend", T::Bool, D::B(true)),
    f("sweep", T::Raw, D::Null),
    f("num_examples", T::Int, D::Null),
    f("max_tokens", T::Int, D::Null),
    f("repeat", T::Int, D::Null),
    f("num_threads", T::Int, D::Null),
    f("max_context_length", T::Int, D::Null),
    f("categories", T::ListStr, D::Null),
    f("num_shots", T::Int, D::Null),
    f("temperature", T::Float, D::Null),
    f("top_p", T::Float, D::Null),
    f("top_k", T::Int, D::Null),
    f("num_requests", T::Int, D::Null),
    f("concurrency", T::Int, D::Null),
    f("prefix_ratios", T::FloatsOrStr, D::Null),
    f("mooncake_workload", T::Str, D::Null),
    f("ttft_threshold_ms", T::Int, D::Null),
    f("itl_threshold_ms", T::Int, D::Null),
    f("random_range_ratio", T::Float, D::Null),
    f("num_prompts_mult", T::Int, D::Null),
    f("num_warmup_mult", T::Int, D::Null),
    f("dataset_name", T::Str, D::Null),
    f("dataset_path", T::Str, D::Null),
    f("trace_file", T::Str, D::Null),
    f("custom_tokenizer", T::Str, D::Null),
    f("use_chat_template", T::Bool, D::B(true)),
    f("reuse_http_connections", T::Bool, D::B(false)),
    f("command", T::Str, D::Null),
    f("container_image", T::Str, D::Null),
    f("env", T::StrMap, D::EmptyMap),
    f("aiperf_package", T::Str, D::Null),
    f("aiperf_args", T::AnyMap, D::EmptyMap),
    f("export_node_metrics", T::Bool, D::B(false)),
    f("slow_down_sleep_time", T::Float, D::Null),
    f("slow_down_wait_time", T::Float, D::Null),
];
const STEPS: &[F] = &[
    f("start_step", T::Int, D::Null),
    f("stop_step", T::Int, D::Null),
];
const PROFILING: &[F] = &[
    f("type", T::Str, D::S("none")),
    f("extra_nsys_args", T::ListStr, D::Null),
    f("prefill", T::Obj(STEPS), D::Null),
    f("decode", T::Obj(STEPS), D::Null),
    f("aggregated", T::Obj(STEPS), D::Null),
    f("delay_secs", T::Int, D::Null),
    f("duration_secs", T::Int, D::Null),
    f("benchmark_duration_secs", T::Int, D::I(300)),
];
const OUTPUT: &[F] = &[f("log_dir", T::Str, D::S("./outputs/{job_id}/logs"))];
const HEALTH: &[F] = &[
    f("max_attempts", T::Int, D::I(180)),
    f("interval_seconds", T::Int, D::I(10)),
];
const INFRA: &[F] = &[
    f("etcd_nats_dedicated_node", T::Bool, D::B(false)),
    f("nats_max_payload_mb", T::Int, D::Null),
];
const EXPORTER: &[F] = &[
    f("container_image", T::Str, D::Req),
    f("port", T::Int, D::Req),
    f("command", T::Str, D::Null),
];
const TACHOMETER: &[F] = &[
    f("enabled", T::Bool, D::B(false)),
    f("binary_path", T::Str, D::S("tachometer-scraper")),
    f("default_frequency", T::Float, D::Fl(5.0)),
    f("sync_interval_secs", T::Int, D::I(120)),
    f("compaction_threads", T::Int, D::I(4)),
    f("storage_subdir", T::Str, D::S("tachometer")),
    f("extra_metadata", T::AnyMap, D::EmptyMap),
    f("dcgm_exporter", T::Obj(EXPORTER), D::Null),
    f("node_exporter", T::Obj(EXPORTER), D::Null),
];
const OBSERVABILITY: &[F] = &[
    f("enabled", T::Bool, D::B(false)),
    f("enable_otel", T::Bool, D::B(false)),
    f("otel_endpoint", T::Str, D::Null),
    f("scrape_metrics", T::Bool, D::Null),
    f("scrape_interval_seconds", T::Float, D::Fl(1.0)),
    f("scrape_output", T::Str, D::S("raw_prometheus.jsonl")),
    f("build_dashboard", T::Bool, D::Null),
    f("tachometer", T::Obj(TACHOMETER), D::Obj),
];
const TELEMETRY: &[F] = &[
    f("enabled", T::Bool, D::B(false)),
    f("dcgm_exporter", T::Obj(EXPORTER), D::Null),
    f("default_frequency", T::Float, D::Fl(1.0)),
    f("storage_subdir", T::Str, D::S("power")),
    f("required", T::Bool, D::B(false)),
    f("startup_timeout_seconds", T::Float, D::Fl(30.0)),
    f("request_timeout_seconds", T::Float, D::Fl(2.0)),
    f("collector_join_timeout_seconds", T::Float, D::Null),
];
const ID_MODEL: &[F] = &[f("repo", T::Str, D::Null), f("revision", T::Str, D::Null)];
const ID_CONTAINER: &[F] = &[f("image", T::Str, D::Null)];
const IDENTITY: &[F] = &[
    f("model", T::Obj(ID_MODEL), D::Obj),
    f("container", T::Obj(ID_CONTAINER), D::Obj),
    f("frameworks", T::StrMap, D::EmptyMap),
];
const TOP: &[F] = &[
    f("name", T::Str, D::Req),
    f("model", T::Obj(MODEL), D::Req),
    f("resources", T::Obj(RESOURCES), D::Req),
    f("slurm", T::Obj(SLURM), D::Obj),
    f("backend", T::Backend, D::Backend),
    f("frontend", T::Obj(FRONTEND), D::Obj),
    f("dynamo", T::Obj(DYNAMO), D::Obj),
    f("benchmark", T::Obj(BENCHMARK), D::Obj),
    f("profiling", T::Obj(PROFILING), D::Obj),
    f("output", T::Obj(OUTPUT), D::Obj),
    f("health_check", T::Obj(HEALTH), D::Obj),
    f("infra", T::Obj(INFRA), D::Obj),
    f("observability", T::Obj(OBSERVABILITY), D::Obj),
    f("telemetry", T::Obj(TELEMETRY), D::Obj),
    f("environment", T::StrMap, D::EmptyMap),
    f("container_mounts", T::StrMap, D::EmptyMap),
    f("extra_mount", T::ListStr, D::Null),
    f("srun_options", T::StrMap, D::EmptyMap),
    f("sbatch_directives", T::StrMap, D::EmptyMap),
    f("enable_config_dump", T::Bool, D::B(true)),
    f("setup_script", T::Str, D::Null),
    f("identity", T::Obj(IDENTITY), D::Obj),
    f("reporting", T::Obj(REPORTING), D::Null),
];
const REPORTING_STATUS: &[F] = &[
    f("endpoint", T::Str, D::Null),
    f("endpoints", T::ListStr, D::Null),
];
const AI_ANALYSIS: &[F] = &[
    f("enabled", T::Bool, D::B(false)),
    f("openrouter_api_key", T::Str, D::Null),
    f("gh_token", T::Str, D::Null),
    f(
        "repos_to_search",
        T::ListStr,
        D::StrList(&["sgl-project/sglang", "ai-dynamo/dynamo"]),
    ),
    f("pr_search_days", T::Int, D::I(14)),
    f("prompt", T::Str, D::Null),
];
const S3: &[F] = &[
    f("bucket", T::Str, D::Req),
    f("prefix", T::Str, D::Null),
    f("region", T::Str, D::Null),
    f("endpoint_url", T::Str, D::Null),
    f("access_key_id", T::Str, D::Null),
    f("secret_access_key", T::Str, D::Null),
];
const REPORTING: &[F] = &[
    f("status", T::Obj(REPORTING_STATUS), D::Null),
    f("ai_analysis", T::Obj(AI_ANALYSIS), D::Null),
    f("s3", T::Obj(S3), D::Null),
];

struct Ctx {
    errs: Vec<FieldError>,
}

impl Ctx {
    fn err(&mut self, path: P<'_>, message: impl Into<String>, span: Span) {
        self.errs.push(FieldError {
            path: names(path),
            message: message.into(),
            span,
        });
    }
}

/// Where a field sits below the document's root: a chain through the callers' frames, so that
/// walking the schema allocates nothing for a path until an error names it (a copied path per
/// field was a fifth of the schema's time; docs/performance.md).
#[derive(Clone, Copy)]
struct At<'a> {
    up: P<'a>,
    key: &'a str,
}

/// A path: `None` is the document's root.
type P<'a> = Option<&'a At<'a>>;

/// The path one key below `up`.
fn at<'a>(up: P<'a>, key: &'a str) -> At<'a> {
    At { up, key }
}

/// The path's keys from the root down.
fn names(path: P<'_>) -> Vec<String> {
    let mut keys = Vec::new();
    let mut next = path;
    while let Some(a) = next {
        keys.push(a.key.to_string());
        next = a.up;
    }
    keys.reverse();
    keys
}

fn default_value(d: D, t: T, ctx: &mut Ctx, path: P<'_>, span: Span) -> Option<J> {
    Some(match d {
        D::Req => {
            ctx.err(path, MISSING, span);
            return None;
        }
        D::Null => J::Null,
        D::S(s) => J::String(s.into()),
        D::I(i) => json!(i),
        D::Fl(x) => json!(x),
        D::B(b) => J::Bool(b),
        D::EmptyMap => J::Object(Map::new()),
        D::EmptyList => J::Array(vec![]),
        D::StrList(items) => J::Array(items.iter().map(|s| J::String(s.to_string())).collect()),
        D::Obj => match t {
            T::Obj(fields) => {
                let empty = Node::new(Value::Map(Mapping::new()), span);
                obj(fields, &empty, ctx, path)
            }
            _ => J::Null,
        },
        D::Backend => {
            let empty = Node::new(Value::Map(Mapping::new()), span);
            obj(SGLANG, &empty, ctx, path)
        }
    })
}

fn obj(fields: &[F], node: &Node, ctx: &mut Ctx, path: P<'_>) -> J {
    let Some(m) = node.as_map() else {
        if path.is_none() {
            ctx.err(path, NOT_MAP, node.span);
        } else {
            // marshmallow's Nested field reports a non-mapping under `_schema`.
            ctx.err(Some(&at(path, "_schema")), "Invalid input type.", node.span);
        }
        return J::Null;
    };
    let mut out = Map::with_capacity(fields.len());
    for fd in fields {
        let here = at(path, fd.n);
        let p = Some(&here);
        let v = match m.get(fd.n) {
            None => default_value(fd.d, fd.t, ctx, p, node.span),
            Some(v) if v.is_null() => {
                if fd.null {
                    Some(J::Null)
                } else {
                    ctx.err(p, NULL, v.span);
                    None
                }
            }
            Some(v) => value(fd.t, v, ctx, p),
        };
        if let Some(v) = v {
            out.insert(fd.n.to_string(), v);
        }
    }
    for (k, kn, _) in m.iter() {
        if !fields.iter().any(|fd| fd.n == k) {
            ctx.err(Some(&at(path, k)), UNKNOWN, kn.span);
        }
    }
    for (kn, _) in m.iter_nodes() {
        if kn.as_str().is_none() {
            let k = py_str(kn);
            ctx.err(Some(&at(path, &k)), UNKNOWN, kn.span);
        }
    }
    J::Object(out)
}

fn scalar(r: Result<J, &'static str>, n: &Node, ctx: &mut Ctx, path: P<'_>) -> Option<J> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            ctx.err(path, e, n.span);
            None
        }
    }
}

fn value(t: T, n: &Node, ctx: &mut Ctx, path: P<'_>) -> Option<J> {
    match t {
        T::Str => scalar(to_str(n), n, ctx, path),
        T::Int => scalar(to_int(n), n, ctx, path),
        T::Float => scalar(to_float(n), n, ctx, path),
        T::Bool => scalar(to_bool(n), n, ctx, path),
        T::Raw => Some(raw(n)),
        T::StrMap => {
            let Some(m) = n.as_map() else {
                ctx.err(path, NOT_MAP, n.span);
                return None;
            };
            let mut out = Map::new();
            let mut ok = true;
            for (kn, v) in m.iter_nodes() {
                let key = py_str(kn);
                if kn.as_str().is_none() {
                    let k = at(path, &key);
                    ctx.err(Some(&at(Some(&k), "key")), NOT_STR, kn.span);
                    ok = false;
                }
                match to_str(v) {
                    Ok(s) => {
                        out.insert(key, s);
                    }
                    Err(e) => {
                        let k = at(path, &key);
                        ctx.err(Some(&at(Some(&k), "value")), e, v.span);
                        ok = false;
                    }
                }
            }
            ok.then_some(J::Object(out))
        }
        T::AnyMap => {
            let Some(m) = n.as_map() else {
                ctx.err(path, NOT_MAP, n.span);
                return None;
            };
            let mut ok = true;
            for (kn, _) in m.iter_nodes() {
                if kn.as_str().is_none() {
                    let key = py_str(kn);
                    let k = at(path, &key);
                    ctx.err(Some(&at(Some(&k), "key")), NOT_STR, kn.span);
                    ok = false;
                }
            }
            ok.then(|| raw(n))
        }
        T::ListStr => {
            let Some(items) = n.as_seq() else {
                ctx.err(path, NOT_LIST, n.span);
                return None;
            };
            let mut out = Vec::new();
            let mut ok = true;
            for (i, it) in items.iter().enumerate() {
                match to_str(it) {
                    Ok(s) => out.push(s),
                    Err(e) => {
                        let i = i.to_string();
                        ctx.err(Some(&at(path, &i)), e, it.span);
                        ok = false;
                    }
                }
            }
            ok.then_some(J::Array(out))
        }
        T::Obj(fields) => {
            let before = ctx.errs.len();
            let v = obj(fields, n, ctx, path);
            (ctx.errs.len() == before).then_some(v)
        }
        T::Backend => backend(n, ctx, path),
        T::Concurrencies => list_or_str(n, ctx, path, to_int, "Not a valid integer."),
        T::FloatsOrStr => list_or_str(n, ctx, path, to_float, NOT_NUM),
        T::ReqRate => match (to_str(n), to_int(n)) {
            (Ok(s), _) => Some(s),
            (_, Ok(i)) if !matches!(n.value, Value::Str(_)) => Some(i),
            _ => {
                ctx.err(
                    path,
                    format!("[ValidationError('{NOT_STR}'), ValidationError('{NOT_INT}')]"),
                    n.span,
                );
                None
            }
        },
        T::BoolOrMap => match to_bool(n) {
            Ok(b) => Some(b),
            Err(_) => value(T::AnyMap, n, ctx, path),
        },
    }
}

/// A field typed `list[item] | str` (marshmallow's union): a list whose every item converts, else
/// a string, else both alternatives' messages (`bad_item` when the list had a bad item).
fn list_or_str(
    n: &Node,
    ctx: &mut Ctx,
    path: P<'_>,
    item: fn(&Node) -> Result<J, &'static str>,
    bad_item: &str,
) -> Option<J> {
    if let Some(items) = n.as_seq() {
        let converted: Option<Vec<J>> = items.iter().map(|i| item(i).ok()).collect();
        if let Some(v) = converted {
            return Some(J::Array(v));
        }
    }
    match to_str(n) {
        Ok(s) => Some(s),
        Err(_) => {
            let first = if n.as_seq().is_some() {
                bad_item
            } else {
                NOT_LIST
            };
            ctx.err(
                path,
                format!("[ValidationError('{first}'), ValidationError('{NOT_STR}')]"),
                n.span,
            );
            None
        }
    }
}

fn backend(n: &Node, ctx: &mut Ctx, path: P<'_>) -> Option<J> {
    let Some(_) = n.as_map() else {
        ctx.err(
            path,
            format!(
                "Expected dict for backend config, got {}",
                py_type_short_name(n)
            ),
            n.span,
        );
        return None;
    };
    let ty = match n.get("type") {
        None => "sglang",
        Some(t) => t.as_str().unwrap_or(""),
    };
    let fields = match ty {
        "sglang" => SGLANG,
        "trtllm" => TRTLLM,
        "vllm" => VLLM,
        "mocker" => MOCKER,
        _ => {
            // Raised by the backend field's own deserializer, so marshmallow files it under
            // `backend`, with the value's Python repr (`'x'`, `None`, `False`).
            let shown = n.get("type").map(crate::pystr::py_repr).unwrap_or_default();
            ctx.err(
                path,
                format!(
                    "Unknown backend type: {shown}. Supported types: sglang, trtllm, vllm, mocker"
                ),
                n.get("type").map(|t| t.span).unwrap_or(n.span),
            );
            return None;
        }
    };
    let before = ctx.errs.len();
    let v = obj(fields, n, ctx, path);
    if ctx.errs.len() != before {
        return None;
    }
    // vLLM: per-node DP launch owns the headless flag (checked while deserialising).
    if ty == "vllm" && v["dp_launch_mode"] == "per_node" {
        for mode in ["prefill", "decode", "aggregated"] {
            let cfg = &v["vllm_config"][mode];
            if cfg
                .get("data-parallel-size")
                .or(cfg.get("data_parallel_size"))
                .is_some()
                && cfg.get("headless").is_some()
            {
                ctx.err(
                    Some(&at(path, "vllm_config")),
                    format!(
                        "vllm_config.{mode}.headless cannot be set when dp_launch_mode=per_node."
                    ),
                    n.span,
                );
                return None;
            }
        }
    }
    Some(v)
}

/// Whether [`expand_observability`] changes `tree`: `observability.enabled` is truthy.
pub fn observability_enabled(tree: &Node) -> bool {
    tree.get_path(&["observability", "enabled"])
        .is_some_and(crate::recipe::is_truthy)
}

/// `expand_observability` (plain recipes only): set-if-absent span variables.
pub fn expand_observability(tree: &mut Node) {
    if !observability_enabled(tree) {
        return;
    }
    let span = tree.span;
    let s = |x: &str| Node::new(Value::Str(x.into()), span);
    let vars = [
        ("DYN_LOGGING_SPAN_EVENTS", "true"),
        ("DYN_LOGGING_JSONL", "true"),
        ("DYN_LOG", "debug"),
    ];
    let Some(root) = tree.as_map_mut() else {
        return;
    };
    let backend_type = root
        .get("backend")
        .and_then(|b| b.get("type"))
        .map(py_str)
        .unwrap_or_else(|| "sglang".into());
    if root.get("backend").is_none() {
        root.insert(s("backend"), Node::new(Value::Map(Mapping::new()), span));
    }
    if let Some(b) = root.get_mut("backend").and_then(Node::as_map_mut) {
        for env in [
            "prefill_environment",
            "decode_environment",
            "aggregated_environment",
        ] {
            if b.get(env).is_none_or(|e| e.as_map().is_none()) {
                b.insert(s(env), Node::new(Value::Map(Mapping::new()), span));
            }
            if let Some(m) = b.get_mut(env).and_then(Node::as_map_mut) {
                for (k, v) in vars {
                    if !m.contains_key(k) {
                        m.insert(s(k), s(v));
                    }
                }
            }
        }
        if backend_type == "trtllm" {
            if !b.contains_key("publish_events_and_metrics")
                || b.get("publish_events_and_metrics")
                    .is_some_and(|v| !crate::recipe::is_truthy(v))
            {
                b.insert(
                    s("publish_events_and_metrics"),
                    Node::new(Value::Bool(true), span),
                );
            }
            if let Some(cfg) = b.get_mut("trtllm_config").and_then(Node::as_map_mut) {
                for mode in ["prefill", "decode", "aggregated"] {
                    if let Some(mm) = cfg.get_mut(mode).and_then(Node::as_map_mut) {
                        mm.insert(
                            s("enable_iter_perf_stats"),
                            Node::new(Value::Bool(true), span),
                        );
                        mm.insert(s("return_perf_metrics"), Node::new(Value::Bool(true), span));
                    }
                }
            }
        }
    }
    if root.get("frontend").is_none() {
        root.insert(s("frontend"), Node::new(Value::Map(Mapping::new()), span));
    }
    if let Some(fe) = root.get_mut("frontend").and_then(Node::as_map_mut) {
        if fe.get("env").is_none_or(|e| e.as_map().is_none()) {
            fe.insert(s("env"), Node::new(Value::Map(Mapping::new()), span));
        }
        if let Some(m) = fe.get_mut("env").and_then(Node::as_map_mut) {
            let extra = [
                ("DYN_REQUEST_TRACE", "1"),
                ("DYN_REQUEST_TRACE_FILE_PATH", "/logs/dynamo-request-trace"),
            ];
            for (k, v) in vars.iter().chain(extra.iter()) {
                if !m.contains_key(k) {
                    m.insert(s(k), s(v));
                }
            }
        }
    }
}

/// Loads a schema-1 recipe tree: field checks, defaults, then the post-init rules. Returns the
/// fully defaulted configuration in srtctl's dump order.
pub fn load(tree: &Node) -> Result<J, Failure> {
    let mut ctx = Ctx { errs: Vec::new() };
    let dump = obj(TOP, tree, &mut ctx, None);
    if !ctx.errs.is_empty() {
        let dynamo_loaded = dump["dynamo"].is_object()
            && !ctx
                .errs
                .iter()
                .any(|e| e.path.first().is_some_and(|p| p == "dynamo"));
        if dynamo_loaded {
            let mut probe = dump.clone();
            dynamo_post_init(&mut probe, tree)?;
        }
        return Err(Failure::Fields(ctx.errs));
    }
    let mut dump = dump;
    post_init(&mut dump, tree)?;
    Ok(dump)
}

fn span_of(tree: &Node, path: &str) -> Span {
    let parts: Vec<&str> = path.split('.').filter(|p| !p.is_empty()).collect();
    let mut best = tree.span;
    let mut cur = tree;
    for p in parts {
        match cur.get(p) {
            Some(n) => {
                best = n.span;
                cur = n;
            }
            None => break,
        }
    }
    best
}

fn rule(tree: &Node, path: &str, message: impl Into<String>) -> Failure {
    Failure::Rule {
        message: message.into(),
        path: path.to_string(),
        span: span_of(tree, path),
    }
}

/// Python truthiness of a JSON value (`if value:` in upstream's scripts).
pub fn truthy(v: &J) -> bool {
    match v {
        J::Null => false,
        J::Bool(b) => *b,
        J::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        J::String(s) => !s.is_empty(),
        J::Array(a) => !a.is_empty(),
        J::Object(o) => !o.is_empty(),
    }
}

fn int(v: &J) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The `storage_subdir` of the section at `at` (tachometer, telemetry) stays below the run's
/// log directory.
fn storage_subdir_rule(section: &J, at: &str, tree: &Node) -> Result<(), Failure> {
    if safe_subdir(section["storage_subdir"].as_str().unwrap_or("")) {
        return Ok(());
    }
    Err(rule(
        tree,
        &format!("{at}.storage_subdir"),
        format!("{at}.storage_subdir must be a safe relative path below the run log directory"),
    ))
}

fn safe_subdir(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('/')
        && !s.starts_with('~')
        && s.split('/').all(|p| !p.is_empty() && p != "..")
}

fn post_init(c: &mut J, tree: &Node) -> Result<(), Failure> {
    dynamo_post_init(c, tree)?;
    top_post_init(c, tree)
}

/// DynamoConfig's own post-init. It runs while marshmallow loads the `dynamo` field, and its
/// ValueError escapes the load, so it wins over field errors anywhere else (docs/recipe.md).
fn dynamo_post_init(c: &mut J, tree: &Node) -> Result<(), Failure> {
    {
        let d = &c["dynamo"];
        let mut srcs = Vec::new();
        // srtctl counts `hash` and `wheel` as sources when they are not None (an empty string
        // counts), `top_of_tree` by truthiness.
        if !d["hash"].is_null() {
            srcs.push("hash");
        }
        if d["top_of_tree"] == true {
            srcs.push("top_of_tree");
        }
        if !d["wheel"].is_null() {
            srcs.push("wheel");
        }
        if srcs.len() > 1 {
            return Err(rule(
                tree,
                "dynamo",
                format!(
                    "Cannot specify both Dynamo install sources: {}",
                    srcs.join(", ")
                ),
            ));
        }
        if let Some(w) = d["wheel"].as_str() {
            if w.trim().is_empty() {
                return Err(rule(
                    tree,
                    "dynamo.wheel",
                    "dynamo.wheel must be a non-empty package version",
                ));
            }
            if w.ends_with(".whl") || w.contains('/') {
                return Err(rule(
                    tree,
                    "dynamo.wheel",
                    "dynamo.wheel must be a package version like '1.2.0.dev20260426', not a filename",
                ));
            }
        }
        if truthy(&d["cargo_patches"]) && d["hash"].is_null() {
            return Err(rule(
                tree,
                "dynamo.cargo_patches",
                "dynamo.cargo_patches requires a source build — set dynamo.hash to a commit",
            ));
        }
        let plane = d["request_plane"].as_str().unwrap_or("");
        if !["nats", "tcp", "http"].contains(&plane) {
            return Err(rule(
                tree,
                "dynamo.request_plane",
                format!("Invalid request_plane '{plane}', must be one of: nats, tcp, http"),
            ));
        }
        if let Some(ep) = d["event_plane"].as_str()
            && !["nats", "zmq"].contains(&ep)
        {
            return Err(rule(
                tree,
                "dynamo.event_plane",
                format!("Invalid event_plane '{ep}', must be one of: nats, zmq"),
            ));
        }
        if !srcs.is_empty() {
            c["dynamo"]["version"] = J::Null;
        }
    }
    Ok(())
}

fn top_post_init(c: &J, tree: &Node) -> Result<(), Failure> {
    let r = &c["resources"];
    let disagg = !r["prefill_nodes"].is_null() || !r["decode_nodes"].is_null();
    let backend = c["backend"]["type"]
        .as_str()
        .unwrap_or("sglang")
        .to_string();
    profiling_rules(c, tree, &backend, disagg)?;
    tachometer_rules(c, tree)?;
    telemetry_rules(c, tree)?;
    mooncake_rules(c, tree, &backend, disagg)?;
    het_job_rules(c, tree, &backend, disagg)?;
    dedicated_node_rules(c, tree)?;
    frontend_type_rules(c, tree, &backend, disagg)
}

/// The `profiling` block against the layout and backend.
fn profiling_rules(c: &J, tree: &Node, backend: &str, disagg: bool) -> Result<(), Failure> {
    let r = &c["resources"];
    let p = &c["profiling"];
    let ptype = p["type"].as_str().unwrap_or("none");
    if ptype != "none" {
        if ptype == "torch" && backend == "trtllm" {
            return Err(rule(
                tree,
                "profiling.type",
                "torch profiling is not supported for the trtllm backend; use nsys instead",
            ));
        }
        let timed = ptype == "nsys-time";
        if timed && (p["delay_secs"].is_null() || p["duration_secs"].is_null()) {
            return Err(rule(
                tree,
                "profiling",
                "profiling.delay_secs and profiling.duration_secs are required for nsys-time mode",
            ));
        }
        if !timed {
            if disagg {
                if !p["aggregated"].is_null() {
                    return Err(rule(
                        tree,
                        "profiling.aggregated",
                        "Disaggregated mode only supports profiling.prefill/decode; profiling.aggregated is not allowed.",
                    ));
                }
                if p["prefill"].is_null() || p["decode"].is_null() {
                    return Err(rule(
                        tree,
                        "profiling",
                        "Disaggregated mode requires both profiling.prefill and profiling.decode to be set when profiling is enabled.",
                    ));
                }
                if int(&r["prefill_workers"]) <= 0 || int(&r["decode_workers"]) <= 0 {
                    return Err(rule(
                        tree,
                        "resources",
                        "Disaggregated mode requires prefill_workers and decode_workers to be > 0.",
                    ));
                }
            } else {
                if !p["prefill"].is_null() || !p["decode"].is_null() {
                    return Err(rule(
                        tree,
                        "profiling",
                        "Aggregated mode only supports profiling.aggregated; profiling.prefill/decode are not allowed.",
                    ));
                }
                if p["aggregated"].is_null() {
                    return Err(rule(
                        tree,
                        "profiling",
                        "Aggregated mode requires profiling.aggregated to be set when profiling is enabled.",
                    ));
                }
                if int(&r["agg_workers"]) <= 0 {
                    return Err(rule(
                        tree,
                        "resources.agg_workers",
                        "Aggregated mode requires agg_workers to be > 0.",
                    ));
                }
            }
            if ptype == "nsys" && backend == "vllm" {
                for mode in ["prefill", "decode", "aggregated"] {
                    let bad: Vec<String> = c["backend"]["vllm_config"][mode]
                        .as_object()
                        .map(|m| {
                            m.keys()
                                .filter(|k| k.replace('_', "-").starts_with("profiler-config"))
                                .map(|k| format!("'{k}'"))
                                .collect()
                        })
                        .unwrap_or_default();
                    if !bad.is_empty() {
                        return Err(rule(
                            tree,
                            "backend.vllm_config",
                            format!(
                                "vllm_config.{mode} sets [{}], but profiler-config.* is derived automatically from the profiling: block when nsys profiling is enabled. Remove these keys.",
                                bad.join(", ")
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// `observability.tachometer` (and its interplay with `telemetry`).
fn tachometer_rules(c: &J, tree: &Node) -> Result<(), Failure> {
    let o = &c["observability"];
    let t = &o["tachometer"];
    let tel = &c["telemetry"];
    if t["enabled"] == true {
        if o["enabled"] != true {
            return Err(rule(
                tree,
                "observability.tachometer",
                "observability.tachometer requires observability.enabled: true",
            ));
        }
        if tel["enabled"] == true {
            if !t["dcgm_exporter"].is_null() {
                return Err(rule(
                    tree,
                    "observability.tachometer.dcgm_exporter",
                    "configure the shared DCGM exporter under telemetry, not observability.tachometer, when DCGM power telemetry is enabled",
                ));
            }
            if t["storage_subdir"] == tel["storage_subdir"] {
                return Err(rule(
                    tree,
                    "observability.tachometer.storage_subdir",
                    "observability.tachometer.storage_subdir and telemetry.storage_subdir must be different",
                ));
            }
        }
        for ex in ["dcgm_exporter", "node_exporter"] {
            let e = &t[ex];
            if !e.is_null() {
                if e["container_image"]
                    .as_str()
                    .is_none_or(|s| s.trim().is_empty())
                {
                    return Err(rule(
                        tree,
                        &format!("observability.tachometer.{ex}"),
                        format!("observability.tachometer.{ex}.container_image must be non-empty"),
                    ));
                }
                let port = int(&e["port"]);
                if !(1..=65535).contains(&port) {
                    return Err(rule(
                        tree,
                        &format!("observability.tachometer.{ex}.port"),
                        format!("observability.tachometer.{ex}.port must be in 1..65535"),
                    ));
                }
            }
        }
        if t["binary_path"]
            .as_str()
            .is_none_or(|s| s.trim().is_empty())
        {
            return Err(rule(
                tree,
                "observability.tachometer.binary_path",
                "observability.tachometer.binary_path must be non-empty",
            ));
        }
        if t["default_frequency"].as_f64().unwrap_or(0.0) <= 0.0 {
            return Err(rule(
                tree,
                "observability.tachometer.default_frequency",
                "observability.tachometer.default_frequency must be positive",
            ));
        }
        for knob in ["sync_interval_secs", "compaction_threads"] {
            if int(&t[knob]) < 0 {
                return Err(rule(
                    tree,
                    &format!("observability.tachometer.{knob}"),
                    format!("observability.tachometer.{knob} must be >= 0"),
                ));
            }
        }
        storage_subdir_rule(t, "observability.tachometer", tree)?;
    }
    Ok(())
}

/// `telemetry`: the exporter and the collector timing, then what it requires of the job.
fn telemetry_rules(c: &J, tree: &Node) -> Result<(), Failure> {
    let tel = &c["telemetry"];
    if tel["enabled"] != true {
        return Ok(());
    }
    telemetry_collector_rules(tel, tree)?;
    telemetry_job_rules(c, tree)
}

/// The DCGM exporter and the collector timing of enabled telemetry.
fn telemetry_collector_rules(tel: &J, tree: &Node) -> Result<(), Failure> {
    let e = &tel["dcgm_exporter"];
    if e.is_null() {
        return Err(rule(
            tree,
            "telemetry",
            "telemetry.dcgm_exporter is required when telemetry is enabled",
        ));
    }
    if e["container_image"].as_str().is_none_or(str::is_empty) {
        return Err(rule(
            tree,
            "telemetry.dcgm_exporter.container_image",
            "telemetry.dcgm_exporter.container_image must be non-empty",
        ));
    }
    if !(1..=65535).contains(&int(&e["port"])) {
        return Err(rule(
            tree,
            "telemetry.dcgm_exporter.port",
            "telemetry.dcgm_exporter.port must be in 1..65535",
        ));
    }
    for knob in [
        "default_frequency",
        "startup_timeout_seconds",
        "request_timeout_seconds",
    ] {
        let v = tel[knob].as_f64().unwrap_or(0.0);
        if !(v.is_finite() && v > 0.0) {
            return Err(rule(
                tree,
                &format!("telemetry.{knob}"),
                format!("telemetry.{knob} must be finite and positive"),
            ));
        }
    }
    let freq = tel["default_frequency"].as_f64().unwrap_or(0.0);
    let rt = tel["request_timeout_seconds"].as_f64().unwrap_or(0.0);
    if freq > 3.0 {
        return Err(rule(
            tree,
            "telemetry.default_frequency",
            format!(
                "telemetry.default_frequency={} exceeds the 3.0s max sample gap the power validator accepts; every window would fail sample_gap_exceeded. Set it to the intended collector period (e.g. 1.0).",
                crate::pystr::py_float(freq)
            ),
        ));
    }
    let floor = 2.0 * (2.0 * rt + 1.0);
    let join = tel["collector_join_timeout_seconds"]
        .as_f64()
        .unwrap_or(floor + 2.0);
    if !(join.is_finite() && join > 0.0) || join <= floor {
        return Err(rule(
            tree,
            "telemetry.collector_join_timeout_seconds",
            "telemetry.collector_join_timeout_seconds must be finite, positive, and greater than two full collector cycles (2 * (2 * telemetry.request_timeout_seconds + 1 second))",
        ));
    }
    storage_subdir_rule(tel, "telemetry", tree)
}

/// What enabled telemetry requires of the benchmark and the infra layout.
fn telemetry_job_rules(c: &J, tree: &Node) -> Result<(), Failure> {
    let b = &c["benchmark"];
    if b["type"] != "sa-bench" {
        return Err(rule(
            tree,
            "benchmark.type",
            "telemetry requires benchmark.type: sa-bench",
        ));
    }
    if b["client_placement"] != "head" {
        return Err(rule(
            tree,
            "benchmark.client_placement",
            "telemetry requires benchmark.client_placement: head",
        ));
    }
    if c["infra"]["etcd_nats_dedicated_node"] == true {
        return Err(rule(
            tree,
            "infra.etcd_nats_dedicated_node",
            "telemetry requires infra.etcd_nats_dedicated_node: false, because a dedicated infra node moves nodes.head off the batch host and power samples would no longer share the benchmark's clock",
        ));
    }
    let concs: Vec<i64> = match &b["concurrencies"] {
        J::Array(a) => a.iter().map(int).collect(),
        J::String(s) => s
            .split('x')
            .map(|x| x.trim().parse().unwrap_or(0))
            .collect(),
        _ => vec![],
    };
    let mut uniq = concs.clone();
    uniq.sort_unstable();
    uniq.dedup();
    if concs.is_empty() || uniq.len() != concs.len() || concs.iter().any(|&x| x <= 0) {
        return Err(rule(
            tree,
            "benchmark.concurrencies",
            "telemetry requires a non-empty list of unique positive benchmark.concurrencies",
        ));
    }
    Ok(())
}

/// `backend.mooncake_kv_store` needs a mooncake transfer in the prefill or decode config.
fn mooncake_rules(c: &J, tree: &Node, backend: &str, disagg: bool) -> Result<(), Failure> {
    let be = &c["backend"];
    if !be["mooncake_kv_store"].is_null() && disagg {
        if backend == "sglang" {
            let hit = ["prefill", "decode"].iter().any(|m| {
                let cfg = &be["sglang_config"][*m];
                [
                    cfg.get("disaggregation-transfer-backend"),
                    cfg.get("disaggregation_transfer_backend"),
                ]
                .into_iter()
                .flatten()
                .any(|v| v == "mooncake")
            });
            if !hit {
                return Err(rule(
                    tree,
                    "backend.mooncake_kv_store",
                    "mooncake_kv_store is set but neither sglang_config.prefill nor sglang_config.decode has 'disaggregation-transfer-backend: mooncake'. Add it to both modes (and 'disaggregation-ib-device') so workers actually use the mooncake master srtslurm launches for you.",
                ));
            }
        } else if backend == "vllm" {
            let hit = ["prefill", "decode"].iter().any(|m| {
                let cfg = &be["vllm_config"][*m];
                [cfg.get("kv-transfer-config"), cfg.get("kv_transfer_config")]
                    .into_iter()
                    .flatten()
                    .any(|v| {
                        v.as_str()
                            .is_some_and(|s| s.to_ascii_lowercase().contains("mooncake"))
                    })
            });
            if !hit {
                return Err(rule(
                    tree,
                    "backend.mooncake_kv_store",
                    "mooncake_kv_store is set but neither vllm_config.prefill nor vllm_config.decode has a kv-transfer-config that references a Mooncake connector. Set kv-transfer-config to a JSON value whose kv_connector is MooncakeStoreConnector (or MultiConnector wrapping one) so workers actually use the mooncake master srtslurm launches for you.",
                ));
            }
        }
    }
    Ok(())
}

/// `resources.het_jobs` needs a disaggregated SGLang layout without dedicated nodes.
fn het_job_rules(c: &J, tree: &Node, backend: &str, disagg: bool) -> Result<(), Failure> {
    let r = &c["resources"];
    if r["het_jobs"] == true {
        if !disagg {
            return Err(rule(
                tree,
                "resources.het_jobs",
                "het_jobs=true requires a disaggregated layout (set resources.prefill_nodes and resources.decode_nodes)",
            ));
        }
        if int(&r["prefill_nodes"]) < 1 || int(&r["decode_nodes"]) < 1 {
            return Err(rule(
                tree,
                "resources.het_jobs",
                "het_jobs=true requires prefill_nodes >= 1 and decode_nodes >= 1",
            ));
        }
        if backend != "sglang" {
            return Err(rule(
                tree,
                "resources.het_jobs",
                format!(
                    "het_jobs=true is only supported on the sglang backend; got backend.type='{backend}'"
                ),
            ));
        }
        if c["frontend"]["dedicated_node"] == true
            || c["benchmark"]["client_dedicated_node"] == true
        {
            return Err(rule(
                tree,
                "resources.het_jobs",
                "frontend.dedicated_node/benchmark.client_dedicated_node are not supported together with het_jobs=true (a dedicated frontend/client node is not carved out of a het allocation)",
            ));
        }
    }
    Ok(())
}

/// A dedicated frontend or client node is only used from the head placement.
fn dedicated_node_rules(c: &J, tree: &Node) -> Result<(), Failure> {
    let fe = &c["frontend"];
    if fe["dedicated_node"] == true && fe["orchestrator_placement"] != "head" {
        return Err(rule(
            tree,
            "frontend.dedicated_node",
            format!(
                "frontend.dedicated_node requires frontend.orchestrator_placement: head (got '{}'); otherwise the reserved node is never used",
                fe["orchestrator_placement"].as_str().unwrap_or("")
            ),
        ));
    }
    let b = &c["benchmark"];
    if b["client_dedicated_node"] == true && b["client_placement"] != "head" {
        return Err(rule(
            tree,
            "benchmark.client_dedicated_node",
            format!(
                "benchmark.client_dedicated_node requires benchmark.client_placement: head (got '{}'); otherwise the reserved node is never used",
                b["client_placement"].as_str().unwrap_or("")
            ),
        ));
    }
    Ok(())
}

/// `frontend.type: trtllm_serve` and `vllm` against the backend and the layout.
fn frontend_type_rules(c: &J, tree: &Node, backend: &str, disagg: bool) -> Result<(), Failure> {
    let r = &c["resources"];
    let fe = &c["frontend"];
    let agg_workers = int(&r["agg_workers"]);
    // trtllm_serve frontend
    if fe["type"] == "trtllm_serve" {
        if backend != "trtllm" {
            return Err(rule(
                tree,
                "frontend.type",
                format!(
                    "frontend.type: trtllm_serve requires backend.type: trtllm; got '{backend}'"
                ),
            ));
        }
        if fe["enable_multiple_frontends"] == true {
            return Err(rule(
                tree,
                "frontend.enable_multiple_frontends",
                "frontend.type: trtllm_serve uses one public endpoint; set frontend.enable_multiple_frontends: false",
            ));
        }
        if !disagg && agg_workers != 1 {
            return Err(rule(
                tree,
                "resources.agg_workers",
                "frontend.type: trtllm_serve aggregate mode requires exactly one aggregate worker (set resources.agg_workers: 1)",
            ));
        }
    }
    // vllm frontend
    if fe["type"] == "vllm" {
        if backend != "vllm" {
            return Err(rule(
                tree,
                "frontend.type",
                format!("frontend.type: vllm requires backend.type: vllm; got '{backend}'"),
            ));
        }
        if fe["enable_multiple_frontends"] == true {
            return Err(rule(
                tree,
                "frontend.enable_multiple_frontends",
                "frontend.type: vllm binds vllm serve directly; set frontend.enable_multiple_frontends: false",
            ));
        }
        if disagg {
            return Err(rule(
                tree,
                "frontend.type",
                "frontend.type: vllm supports aggregate jobs only, not disaggregated layouts",
            ));
        }
        if agg_workers != 1 {
            return Err(rule(
                tree,
                "resources.agg_workers",
                format!(
                    "frontend.type: vllm supports exactly one aggregate worker, got {agg_workers}. vllm serve owns the public port directly and there is no router to load-balance replicas, so extra workers would either idle or collide on the port. Use frontend.type: dynamo to run multiple aggregate workers, or scale a single worker across nodes with resources.agg_nodes."
                ),
            ));
        }
    }
    Ok(())
}

/// marshmallow's message dict for field errors, as srtctl prints it (known fields in
/// declaration order is not reproduced; errors appear in the order found).
pub fn message_dict(errs: &[FieldError]) -> String {
    #[derive(Default)]
    struct Tree {
        msgs: Vec<String>,
        kids: Vec<(String, Tree)>,
    }
    let mut root = Tree::default();
    for e in errs {
        let mut cur = &mut root;
        for seg in &e.path {
            let idx = match cur.kids.iter().position(|(k, _)| k == seg) {
                Some(i) => i,
                None => {
                    cur.kids.push((seg.clone(), Tree::default()));
                    cur.kids.len() - 1
                }
            };
            cur = &mut cur.kids[idx].1;
        }
        cur.msgs.push(e.message.clone());
    }
    fn show(t: &Tree) -> String {
        if t.kids.is_empty() {
            let m: Vec<String> = t
                .msgs
                .iter()
                .map(|m| {
                    if m.starts_with('[') {
                        m.clone()
                    } else {
                        crate::pystr::py_str_repr(m)
                    }
                })
                .collect();
            if m.len() == 1 && m[0].starts_with('[') {
                return m[0].clone();
            }
            return format!("[{}]", m.join(", "));
        }
        let parts: Vec<String> = t
            .kids
            .iter()
            .map(|(k, v)| format!("{}: {}", crate::pystr::py_str_repr(k), show(v)))
            .collect();
        format!("{{{}}}", parts.join(", "))
    }
    show(&root)
}

/// The dotted path of a field error (for comparisons and provenance lookups).
pub fn dotted(path: &[String]) -> String {
    path.iter().fold(String::new(), |acc, s| join_key(&acc, s))
}
