//! Schema 2 (`schema: 2`; engine + roles): structural checks driven by the recipe JSON Schema's
//! object shapes (srt-slurm 1c3080e), marshmallow coercion, and the loader's rules that decide
//! whether a variant can launch (docs/recipe.md, "Schema 2: launch rules").

use crate::codes;
use crate::coerce::*;
use crate::pystr::{py_repr, py_str};
use crate::recipe::Variant;
use crate::source::{join_index, join_key};
use infx_report::{Diagnostic, Span};
use infx_yaml::{Node, Value};

#[derive(Clone, Copy)]
enum K {
    Str,
    Int,
    Num,
    Bool,
    /// str → str map (env maps).
    StrMap,
    /// Any mapping with string keys (engine args, router args, …).
    AnyMap,
    ListStr,
    Any,
    Enum(&'static [&'static str]),
    Obj(&'static [(&'static str, K, bool)]),
    ObjList(&'static [(&'static str, K, bool)]),
    Engine,
    Roles,
    Nodes,
    BoolOrMap,
    IntListOrStr,
    StrOrInt,
    Restart,
    SchemaVersion,
}

// (key, kind, nullable)
type Shape = &'static [(&'static str, K, bool)];

const MODEL: Shape = &[
    ("path", K::Str, false),
    ("container", K::Str, false),
    ("precision", K::Str, false),
    ("stage_dir", K::Str, true),
];
const RESOURCES: Shape = &[
    ("gpu_type", K::Str, true),
    ("gpus_per_node", K::Int, false),
    ("spread_workers", K::Bool, false),
    ("het_jobs", K::Bool, true),
];
const SLURM: Shape = &[
    ("account", K::Str, true),
    ("partition", K::Str, true),
    ("time_limit", K::Str, true),
];
const PLACEMENT: Shape = &[("node", K::Str, false)];
const FRONTEND: Shape = &[
    ("type", K::Str, false),
    ("enable_multiple_frontends", K::Bool, false),
    ("num_additional_frontends", K::Int, false),
    ("nginx_container", K::Str, false),
    ("nginx_raise_ulimit", K::Bool, false),
    ("nginx_session_affinity", K::Bool, false),
    ("nginx_session_affinity_header", K::Str, false),
    ("nginx_keepalive_timeout", K::Str, false),
    ("worker_selection", K::AnyMap, true),
    ("epp_config", K::AnyMap, true),
    ("args", K::AnyMap, true),
    ("env", K::StrMap, true),
    ("container_image", K::Str, true),
    ("numa_bind", K::Bool, false),
    ("ctx_router", K::AnyMap, true),
    ("gen_router", K::AnyMap, true),
    ("server_config_extra", K::AnyMap, true),
    ("placement", K::Obj(PLACEMENT), false),
];
const SOURCE: Shape = &[
    ("git", K::Str, false),
    ("rev", K::Str, false),
    ("path", K::Str, true),
    ("sha", K::Str, true),
];
const DYNAMO: Shape = &[
    ("install", K::Bool, false),
    ("top_of_tree", K::Bool, false),
    ("source", K::Obj(SOURCE), true),
    ("request_plane", K::Enum(&["nats", "tcp", "http"]), false),
    ("event_plane", K::Enum(&["nats", "zmq"]), true),
    ("sidecar", K::Bool, false),
    ("sidecar_port", K::Int, false),
    ("sidecar_binary", K::Str, true),
    ("sidecar_startup_timeout", K::Int, false),
    ("sidecar_context_length", K::Int, true),
    ("sidecar_args", K::ListStr, false),
];
const SWEEP: Shape = &[
    ("mode", K::Enum(&["zip", "grid"]), false),
    ("parameters", K::AnyMap, false),
];
const BENCHMARK: Shape = &[
    ("type", K::Str, false),
    ("stream_output", K::Bool, false),
    ("isl", K::Int, true),
    ("osl", K::Int, true),
    ("concurrencies", K::IntListOrStr, true),
    ("req_rate", K::StrOrInt, true),
    ("placement", K::Obj(PLACEMENT), false),
    ("colocate_with_frontend", K::Bool, false),
    ("sweep", K::Obj(SWEEP), true),
    ("num_examples", K::Int, true),
    ("max_tokens", K::Int, true),
    ("repeat", K::Int, true),
    ("num_threads", K::Int, true),
    ("max_context_length", K::Int, true),
    ("categories", K::ListStr, true),
    ("num_shots", K::Int, true),
    ("temperature", K::Num, true),
    ("top_p", K::Num, true),
    ("top_k", K::Int, true),
    ("num_requests", K::Int, true),
    ("concurrency", K::Int, true),
    ("prefix_ratios", K::Any, true),
    ("mooncake_workload", K::Str, true),
    ("ttft_threshold_ms", K::Int, true),
    ("itl_threshold_ms", K::Int, true),
    ("random_range_ratio", K::Num, true),
    ("num_prompts_mult", K::Int, true),
    ("num_warmup_mult", K::Int, true),
    ("dataset_name", K::Str, true),
    ("dataset_path", K::Str, true),
    ("agentperf_client_dir", K::Str, true),
    ("agentperf_config", K::Str, true),
    ("trace_file", K::Str, true),
    ("custom_tokenizer", K::Str, true),
    ("use_chat_template", K::Bool, false),
    ("reuse_http_connections", K::Bool, false),
    ("command", K::Str, true),
    ("container_image", K::Str, true),
    ("env", K::StrMap, false),
    ("aiperf_package", K::Str, true),
    ("aiperf_args", K::AnyMap, false),
    ("slow_down_sleep_time", K::Num, true),
    ("slow_down_wait_time", K::Num, true),
];
const PHASE: Shape = &[
    ("start_step", K::Int, true),
    ("stop_step", K::Int, true),
    ("capture_scope", K::Enum(&["selected", "all"]), false),
    ("worker_index", K::Int, false),
    ("worker_rank", K::Int, false),
];
const PROFILING: Shape = &[
    ("type", K::Str, false),
    ("extra_nsys_args", K::ListStr, true),
    ("nsys_trace", K::Str, false),
    ("trace_fork_before_exec", K::Bool, true),
    ("capture_range_end", K::Str, false),
    ("nsys_library_paths", K::ListStr, true),
    ("prefill", K::Obj(PHASE), true),
    ("decode", K::Obj(PHASE), true),
    ("aggregated", K::Obj(PHASE), true),
    ("delay_secs", K::Int, true),
    ("duration_secs", K::Int, true),
    ("benchmark_duration_secs", K::Int, false),
];
const OUTPUT: Shape = &[
    ("log_dir", K::Str, false),
    ("record_launch_plan", K::Bool, false),
];
const HEALTH: Shape = &[
    ("max_attempts", K::Int, false),
    ("interval_seconds", K::Int, false),
    ("fatal_log_markers", K::Bool, false),
    ("extra_fatal_log_patterns", K::ListStr, false),
];
const EXPORTER: Shape = &[
    ("container_image", K::Str, false),
    ("port", K::Int, false),
    ("command", K::Str, true),
    ("binary", K::Str, true),
    ("kind", K::Enum(&["dcgm", "custom"]), false),
    ("gpu_labels", K::AnyMap, true),
    ("gpu_metrics", K::AnyMap, true),
];
const TACHOMETER: Shape = &[
    ("enabled", K::Bool, true),
    ("binary_path", K::Str, false),
    ("collect_interval_ms", K::Int, false),
    ("sync_interval_secs", K::Int, false),
    ("shutdown_grace_secs", K::Num, false),
    ("compaction_threads", K::Int, false),
    ("storage_subdir", K::Str, false),
    ("extra_metadata", K::StrMap, false),
    ("default_exporters", K::Bool, false),
    ("default_gpu_exporter", K::Obj(EXPORTER), true),
    ("dcgm_exporter", K::Obj(EXPORTER), true),
    ("node_exporter", K::Obj(EXPORTER), true),
    ("process_exporter", K::Obj(EXPORTER), true),
];
const NSYS: Shape = &[
    ("enabled", K::Bool, false),
    (
        "capture_window",
        K::Enum(&["measured_workload", "including_startup"]),
        false,
    ),
    ("report_timeout_secs", K::Int, false),
    ("nvtx_injection_path", K::Str, true),
    (
        "cpu_sampling",
        K::Enum(&["system-wide", "process-tree", "none"]),
        false,
    ),
];
const OBSERVABILITY: Shape = &[
    ("enabled", K::Bool, false),
    ("enable_otel", K::Bool, false),
    ("otel_endpoint", K::Str, true),
    ("tachometer", K::Obj(TACHOMETER), false),
    ("nsys", K::Obj(NSYS), false),
];
const TELEMETRY: Shape = &[
    ("enabled", K::Bool, false),
    ("dcgm_exporter", K::Obj(EXPORTER), true),
    ("collect_interval_ms", K::Int, false),
    ("storage_subdir", K::Str, false),
    ("required", K::Bool, false),
    ("clock_sync_check", K::Bool, false),
    ("startup_timeout_seconds", K::Num, false),
    ("request_timeout_seconds", K::Num, false),
    ("collector_join_timeout_seconds", K::Num, true),
    ("cpu_power_exporter", K::AnyMap, true),
    ("cpu_power", K::AnyMap, false),
];
const HOST_SETUP: Shape = &[
    ("commands", K::ListStr, false),
    ("teardown", K::ListStr, false),
    ("nodes", K::Enum(&["all", "workers"]), false),
    ("ignore_failure", K::Bool, false),
    ("timeout_seconds", K::Int, false),
];
const POST_EVAL: Shape = &[
    ("passthrough_env", K::ListStr, false),
    ("command", K::ListStr, true),
];
const ID_MODEL: Shape = &[("repo", K::Str, true), ("revision", K::Str, true)];
const ID_CONTAINER: Shape = &[("image", K::Str, true)];
const IDENTITY: Shape = &[
    ("model", K::Obj(ID_MODEL), false),
    ("container", K::Obj(ID_CONTAINER), false),
    ("frameworks", K::StrMap, false),
];
const SERVICE: Shape = &[
    ("name", K::Str, false),
    ("type", K::Str, false),
    ("command", K::ListStr, true),
    ("args", K::ListStr, false),
    ("container", K::Str, true),
    ("env", K::StrMap, false),
    ("source", K::Obj(SOURCE), true),
    ("build_command", K::ListStr, true),
    ("placement", K::AnyMap, true),
    ("nodes", K::Int, true),
    ("start", K::Str, true),
    ("readiness", K::AnyMap, true),
    ("inherit_discovery_env", K::Bool, false),
    ("critical", K::Bool, true),
    ("terminal", K::Bool, false),
    ("preamble", K::Str, true),
    ("cpus_per_task", K::Int, true),
    ("cpu_bind", K::Str, true),
    ("srun_options", K::StrMap, false),
    ("build_timeout_seconds", K::Int, false),
    ("enabled", K::Bool, false),
    ("external", K::Str, true),
    ("options", K::AnyMap, false),
    ("metrics", K::Any, false),
];
const ROLE: Shape = &[
    ("nodes", K::Nodes, true),
    ("workers", K::Int, true),
    ("gpus", K::Int, true),
    ("srun_options", K::StrMap, false),
    ("env", K::StrMap, false),
    ("args", K::AnyMap, false),
    ("extra_args", K::ListStr, false),
    ("engine", K::Engine, true),
    ("container", K::Str, true),
    ("kv_events", K::BoolOrMap, true),
    ("sidecar", K::Bool, true),
    ("critical", K::Bool, false),
    ("restart", K::Restart, false),
];
const RESTART: Shape = &[
    ("policy", K::Enum(&["never", "on-failure", "always"]), false),
    ("max_restarts", K::Int, false),
    ("backoff_seconds", K::Num, false),
    ("max_backoff_seconds", K::Num, false),
];
const RECIPE: Shape = &[
    ("name", K::Str, false),
    ("model", K::Obj(MODEL), false),
    ("resources", K::Obj(RESOURCES), false),
    ("schema", K::SchemaVersion, false),
    ("slurm", K::Obj(SLURM), false),
    ("engine", K::Engine, true),
    ("roles", K::Roles, false),
    ("frontend", K::Obj(FRONTEND), false),
    ("dynamo", K::Obj(DYNAMO), false),
    ("benchmark", K::Obj(BENCHMARK), false),
    ("profiling", K::Obj(PROFILING), false),
    ("output", K::Obj(OUTPUT), false),
    ("health_check", K::Obj(HEALTH), false),
    ("observability", K::Obj(OBSERVABILITY), false),
    ("telemetry", K::Obj(TELEMETRY), false),
    ("environment", K::StrMap, false),
    ("container_mounts", K::StrMap, false),
    ("extra_mount", K::ListStr, true),
    ("srun_options", K::StrMap, false),
    ("sbatch_directives", K::StrMap, false),
    ("enable_config_dump", K::Bool, false),
    ("setup_script", K::Str, true),
    ("host_setup", K::Obj(HOST_SETUP), false),
    ("services", K::ObjList(SERVICE), false),
    ("post_eval", K::Obj(POST_EVAL), false),
    ("identity", K::Obj(IDENTITY), false),
    ("reporting", K::AnyMap, true),
    ("sweep", K::AnyMap, false),
];

/// Engines and their engine-wide knobs.
pub(crate) const ENGINES: &[(&str, &[&str])] = &[
    ("atom", &["connector", "mooncake_protocol"]),
    ("sglang", &["gpu_type"]),
    ("tilert", &["served_model_name"]),
    ("tokenspeed", &[]),
    (
        "trtllm",
        &[
            "served_model_name",
            "publish_metrics",
            "publish_events_and_metrics",
            "sequential_node_start",
            "numa_memory_bind",
            "numa_cpu_bind",
        ],
    ),
    (
        "vllm",
        &[
            "set_visible_devices",
            "connector",
            "failover",
            "allow_prefill_decode_colocation",
            "allow_prefill_decode_colocation_across_nodes",
            "dp_launch_mode",
            "vllm_serve_binary",
        ],
    ),
    (
        "mocker",
        &[
            "engine_type",
            "speedup_ratio",
            "decode_speedup_ratio",
            "num_gpu_blocks_override",
            "max_num_seqs",
            "max_num_batched_tokens",
            "block_size",
            "data_parallel_size",
            "num_workers",
            "startup_time",
            "kv_transfer_bandwidth",
            "kv_cache_dtype",
            "enable_prefix_caching",
            "enable_chunked_prefill",
            "preemption_mode",
        ],
    ),
];

/// Registered frontends and the engine each requires (`None` = any).
pub(crate) const FRONTENDS: &[(&str, Option<&str>)] = &[
    ("dynamo", None),
    ("sglang-router", Some("sglang")),
    ("sglang", Some("sglang")),
    ("vllm-router", Some("vllm")),
    ("vllm", Some("vllm")),
    ("trtllm_serve", Some("trtllm")),
    ("smg", None),
    ("llm-d", Some("vllm")),
    ("atomesh", Some("atom")),
    ("tilert-router", Some("tilert")),
    ("none", None),
];

const SHARED_BENCH: &[&str] = &[
    "type",
    "placement",
    "concurrencies",
    "stream_output",
    "sweep",
    "aiperf_args",
    "aiperf_package",
    "colocate_with_frontend",
];

/// Benchmark runners (srt-slurm 1c3080e) and the extra keys each reads.
pub(crate) const BENCHMARKS: &[(&str, &[&str])] = &[
    ("manual", &[]),
    ("custom", &["command", "container_image", "env"]),
    (
        "agentperf",
        &[
            "agentperf_client_dir",
            "agentperf_config",
            "concurrency",
            "container_image",
            "env",
            "isl",
        ],
    ),
    (
        "sa-bench",
        &[
            "isl",
            "osl",
            "req_rate",
            "random_range_ratio",
            "num_prompts_mult",
            "num_warmup_mult",
            "dataset_name",
            "dataset_path",
            "custom_tokenizer",
            "use_chat_template",
            "reuse_http_connections",
            "slow_down_sleep_time",
            "slow_down_wait_time",
        ],
    ),
    ("sglang-bench", &["isl", "osl", "req_rate"]),
    (
        "router",
        &["isl", "osl", "num_requests", "concurrency", "prefix_ratios"],
    ),
    (
        "mooncake-router",
        &["mooncake_workload", "ttft_threshold_ms", "itl_threshold_ms"],
    ),
    (
        "trace-replay",
        &["trace_file", "ttft_threshold_ms", "itl_threshold_ms"],
    ),
    (
        "gsm8k",
        &[
            "max_tokens",
            "num_examples",
            "num_shots",
            "num_threads",
            "repeat",
            "temperature",
            "top_k",
            "top_p",
        ],
    ),
    (
        "gpqa",
        &["max_tokens", "num_examples", "num_threads", "repeat"],
    ),
    (
        "mmlu",
        &["max_tokens", "num_examples", "num_threads", "repeat"],
    ),
    (
        "longbenchv2",
        &[
            "categories",
            "max_context_length",
            "max_tokens",
            "num_examples",
            "num_threads",
        ],
    ),
    ("lm-eval", &[]),
];

/// Benchmark fields whose default is not null/empty (setting them to the default is fine).
fn bench_default_ok(key: &str, v: &Node) -> bool {
    match key {
        "use_chat_template" => v.as_bool() == Some(true),
        "reuse_http_connections" => v.as_bool() == Some(false),
        "req_rate" => v.as_str() == Some("inf"),
        "env" | "aiperf_args" => v.as_map().is_some_and(|m| m.is_empty()),
        _ => v.is_null(),
    }
}

const BIND_HELP: &str = "add it; an InferenceX fragment gets its model from the launcher (dry-run: --model/--image/--precision)";

const LEGACY_TOP: &[&str] = &["backend", "infra"];
const LEGACY_RESOURCES: &[&str] = &[
    "prefill_nodes",
    "decode_nodes",
    "agg_nodes",
    "prefill_workers",
    "decode_workers",
    "agg_workers",
    "gpus_per_prefill",
    "gpus_per_decode",
    "gpus_per_agg",
    "prefill_critical",
    "decode_critical",
    "agg_critical",
];
const ROLE_KEYS_IN_ENGINE: &[&str] = &[
    "prefill_environment",
    "decode_environment",
    "aggregated_environment",
    "sglang_config",
    "vllm_config",
    "trtllm_config",
    "mocker_config",
    "atom_config",
    "tilert_config",
    "kv_events_config",
];

struct Checker<'a> {
    v: &'a Variant,
    out: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn err(
        &mut self,
        code: infx_report::Code,
        path: &str,
        span: Span,
        msg: impl Into<String>,
        help: Option<&str>,
    ) {
        let mut d = Diagnostic::error(code, format!("{path}: {}", msg.into()));
        if path.is_empty() {
            d.message = d.message.trim_start_matches(": ").to_string();
        }
        if let Some(h) = help {
            d = d.with_help(h);
        }
        self.out.push(self.v.locate(path, span, d));
    }

    fn obj(&mut self, shape: Shape, n: &Node, path: &str) {
        let Some(m) = n.as_map() else {
            self.err(codes::TYPE, path, n.span, NOT_MAP, None);
            return;
        };
        for (k, kn, v) in m.iter() {
            let p = join_key(path, k);
            match shape.iter().find(|(name, _, _)| *name == k) {
                None => self.err(
                    codes::UNKNOWN_FIELD,
                    &p,
                    kn.span,
                    UNKNOWN,
                    Some("remove the key or fix its spelling (schema 2 objects are closed)"),
                ),
                Some((_, _, nullable)) if v.is_null() => {
                    if !nullable {
                        self.err(codes::TYPE, &p, v.span, NULL, None);
                    }
                }
                Some((_, kind, _)) => self.value(*kind, v, &p),
            }
        }
    }

    fn scalar(&mut self, r: Result<serde_json::Value, &'static str>, n: &Node, path: &str) {
        if let Err(e) = r {
            let help = (e == NOT_STR)
                .then_some("quote the value (\"1\", \"true\"): env values and labels are strings");
            self.err(codes::TYPE, path, n.span, e, help);
        }
    }

    fn value(&mut self, kind: K, n: &Node, path: &str) {
        match kind {
            K::Str => self.scalar(to_str(n), n, path),
            K::Int => self.scalar(to_int(n), n, path),
            K::Num => self.scalar(to_float(n), n, path),
            K::Bool => self.scalar(to_bool(n), n, path),
            K::Any => {}
            K::Enum(opts) => match n.as_str() {
                Some(s) if opts.contains(&s) => {}
                _ => self.err(
                    codes::TYPE,
                    path,
                    n.span,
                    format!("Must be one of: {}.", opts.join(", ")),
                    None,
                ),
            },
            K::StrMap => self.str_map(n, path),
            K::AnyMap => {
                if n.as_map().is_none() {
                    self.err(codes::TYPE, path, n.span, NOT_MAP, None);
                }
            }
            K::ListStr => self.list_str(n, path),
            K::Obj(shape) => self.obj(shape, n, path),
            K::ObjList(shape) => self.obj_list(shape, n, path),
            K::Engine => self.engine(n, path),
            K::Roles => self.roles(n, path),
            K::Nodes => self.nodes(n, path),
            K::BoolOrMap => {
                if to_bool(n).is_err() && n.as_map().is_none() {
                    self.err(
                        codes::TYPE,
                        path,
                        n.span,
                        "Not a valid boolean or mapping.",
                        None,
                    );
                }
            }
            K::IntListOrStr => {
                let ok = n
                    .as_seq()
                    .is_some_and(|s| s.iter().all(|i| to_int(i).is_ok()))
                    || n.as_str().is_some();
                if !ok {
                    self.err(
                        codes::TYPE,
                        path,
                        n.span,
                        "Not a valid list of integers or an 'AxB' string.",
                        None,
                    );
                }
            }
            K::StrOrInt => {
                if to_str(n).is_err() && to_int(n).is_err() {
                    self.err(
                        codes::TYPE,
                        path,
                        n.span,
                        "Not a valid string or integer.",
                        None,
                    );
                }
            }
            K::Restart => match &n.value {
                Value::Str(s) if ["never", "on-failure", "always"].contains(&s.as_str()) => {}
                Value::Map(_) => self.obj(RESTART, n, path),
                _ => self.err(
                    codes::TYPE,
                    path,
                    n.span,
                    "Must be never, on-failure, always or a restart policy mapping.",
                    None,
                ),
            },
            K::SchemaVersion => {}
        }
    }

    /// A str → str mapping (env maps): every key and value a string.
    fn str_map(&mut self, n: &Node, path: &str) {
        match n.as_map() {
            None => self.err(codes::TYPE, path, n.span, NOT_MAP, None),
            Some(m) => {
                for (kn, v) in m.iter_nodes() {
                    let p = join_key(path, &py_str(kn));
                    if kn.as_str().is_none() {
                        self.err(codes::TYPE, &p, kn.span, format!("key: {NOT_STR}"), None);
                    }
                    if to_str(v).is_err() {
                        self.err(
                            codes::TYPE,
                            &p,
                            v.span,
                            format!("value: {NOT_STR}"),
                            Some("quote the value: environment maps are string → string"),
                        );
                    }
                }
            }
        }
    }

    /// A list of strings.
    fn list_str(&mut self, n: &Node, path: &str) {
        match n.as_seq() {
            None => self.err(codes::TYPE, path, n.span, NOT_LIST, None),
            Some(items) => {
                for (i, it) in items.iter().enumerate() {
                    if to_str(it).is_err() {
                        self.err(codes::TYPE, &join_index(path, i), it.span, NOT_STR, None);
                    }
                }
            }
        }
    }

    /// A list of `shape` objects, each with a `name`.
    fn obj_list(&mut self, shape: Shape, n: &Node, path: &str) {
        match n.as_seq() {
            None => self.err(codes::TYPE, path, n.span, NOT_LIST, None),
            Some(items) => {
                for (i, it) in items.iter().enumerate() {
                    let p = join_index(path, i);
                    self.obj(shape, it, &p);
                    if it.as_map().is_some() && it.get("name").is_none() {
                        self.err(
                            codes::MISSING_FIELD,
                            &join_key(&p, "name"),
                            it.span,
                            MISSING,
                            None,
                        );
                    }
                }
            }
        }
    }

    /// `roles`: only prefill, decode, agg, each a role object.
    fn roles(&mut self, n: &Node, path: &str) {
        match n.as_map() {
            None => self.err(codes::TYPE, path, n.span, NOT_MAP, None),
            Some(m) => {
                for (k, kn, v) in m.iter() {
                    let p = join_key(path, k);
                    if !["prefill", "decode", "agg"].contains(&k) {
                        self.err(
                            codes::ROLE,
                            &p,
                            kn.span,
                            format!("unknown role '{k}'; valid roles are prefill, decode, agg"),
                            None,
                        );
                        continue;
                    }
                    self.obj(ROLE, v, &p);
                }
            }
        }
    }

    /// A role's `nodes`: an integer >= 1 or `colocate`.
    fn nodes(&mut self, n: &Node, path: &str) {
        match &n.value {
            Value::Bool(_) => self.err(
                codes::ROLE,
                path,
                n.span,
                "nodes must be an integer >= 1 or 'colocate', not a boolean",
                None,
            ),
            Value::Str(s) if s == "colocate" => {}
            _ => match to_int(n).ok().and_then(|j| j.as_i64()) {
                Some(i) if i >= 1 => {}
                Some(0) if path.ends_with("decode.nodes") => self.err(
                    codes::ROLE,
                    path,
                    n.span,
                    "decode.nodes: 0 is the pre-2.0 sentinel; write nodes: colocate",
                    None,
                ),
                _ => self.err(
                    codes::ROLE,
                    path,
                    n.span,
                    "nodes must be an integer >= 1 or 'colocate'",
                    None,
                ),
            },
        }
    }

    fn engine(&mut self, n: &Node, path: &str) {
        match &n.value {
            Value::Str(s) => {
                if !ENGINES.iter().any(|(e, _)| e == s) {
                    let all: Vec<&str> = ENGINES.iter().map(|(e, _)| *e).collect();
                    self.err(
                        codes::ENGINE,
                        path,
                        n.span,
                        format!("unknown engine '{s}'; one of {}", all.join(", ")),
                        None,
                    );
                }
            }
            Value::Map(m) => {
                let ty = m.get("type").map(py_str).unwrap_or_else(|| "sglang".into());
                let Some((_, knobs)) = ENGINES.iter().find(|(e, _)| *e == ty) else {
                    self.err(
                        codes::ENGINE,
                        &join_key(path, "type"),
                        n.span,
                        format!("unknown engine '{ty}'"),
                        None,
                    );
                    return;
                };
                for (k, kn, _) in m.iter() {
                    if k == "type" || knobs.contains(&k) {
                        continue;
                    }
                    let p = join_key(path, k);
                    if ROLE_KEYS_IN_ENGINE.contains(&k) || k == "roles" {
                        self.err(
                            codes::ENGINE,
                            &p,
                            kn.span,
                            format!(
                                "engine carries per-role settings: {k} belongs under roles.<role>"
                            ),
                            Some("move it to roles.<role>.args / env"),
                        );
                    } else {
                        self.err(codes::UNKNOWN_FIELD, &p, kn.span, UNKNOWN, None);
                    }
                }
            }
            _ => self.err(
                codes::ENGINE,
                path,
                n.span,
                "engine must be a string or a mapping with 'type'",
                None,
            ),
        }
    }
}

/// The engine type a node names (`sglang` or `{type: sglang}`).
pub(crate) fn engine_type(n: &Node) -> Option<String> {
    match &n.value {
        Value::Str(s) => Some(s.clone()),
        Value::Map(m) => Some(m.get("type").map(py_str).unwrap_or_else(|| "sglang".into())),
        _ => None,
    }
}

/// Validates a schema-2 variant. Pure; returns every finding (the schema gate stops early).
pub(crate) fn validate(v: &Variant) -> Vec<Diagnostic> {
    let t = &v.tree;
    let mut c = Checker { v, out: Vec::new() };
    let migrate =
        "run `srtctl migrate` or rewrite the recipe in the schema-2 layout (engine + roles)";
    // Schema gate: `schema: 2` and no pre-2.0 key.
    match t.get("schema") {
        None => {
            c.err(codes::SCHEMA_GATE, "", t.span, "recipe has no `schema:` key, which marks the pre-2.0 layout; schema 1 recipes no longer load.", Some(migrate));
            return c.out;
        }
        Some(s) if !matches!(s.value, Value::Int(2)) => {
            c.err(
                codes::SCHEMA_GATE,
                "schema",
                s.span,
                format!(
                    "schema {} is not supported; this srtctl loads schema 2 only.",
                    py_repr(s)
                ),
                Some("write the integer `schema: 2`"),
            );
            return c.out;
        }
        _ => {}
    }
    let mut legacy = Vec::new();
    for k in LEGACY_TOP {
        if let Some((kn, _)) = t.as_map().and_then(|m| m.get_entry(k)) {
            legacy.push((k.to_string(), kn.span));
        }
    }
    let nested: [(&str, &[&str]); 4] = [
        ("resources", LEGACY_RESOURCES),
        ("frontend", &["orchestrator_placement", "dedicated_node"]),
        ("benchmark", &["client_placement", "client_dedicated_node"]),
        ("dynamo", &["version", "hash", "wheel", "cargo_patches"]),
    ];
    for (sec, keys) in nested {
        if let Some(m) = t.get(sec).and_then(Node::as_map) {
            for k in keys {
                if let Some((kn, _)) = m.get_entry(k) {
                    legacy.push((format!("{sec}.{k}"), kn.span));
                }
            }
        }
    }
    if !legacy.is_empty() {
        let names: Vec<&str> = legacy.iter().map(|(k, _)| k.as_str()).collect();
        let msg = format!(
            "recipe uses the pre-2.0 (v1) layout: {}. These keys no longer load;",
            names.join(", ")
        );
        for (k, span) in &legacy {
            c.err(codes::SCHEMA_GATE, k, *span, msg.clone(), Some(migrate));
        }
        return c.out;
    }
    // Structure: closed objects, field types, required keys.
    c.obj(RECIPE, t, "");
    for (key, sub) in [("name", None), ("model", None), ("resources", None)] {
        let _: Option<()> = sub;
        if t.get(key).is_none() {
            c.err(
                codes::MISSING_FIELD,
                key,
                t.span,
                MISSING,
                (key == "model").then_some(BIND_HELP),
            );
        }
    }
    if let Some(m) = t.get("model") {
        for k in ["path", "container", "precision"] {
            if m.as_map().is_some() && m.get(k).is_none() {
                c.err(
                    codes::MISSING_FIELD,
                    &format!("model.{k}"),
                    m.span,
                    MISSING,
                    Some(BIND_HELP),
                );
            }
        }
    }
    if !c.out.is_empty() {
        return c.out;
    }
    rules(&mut c);
    c.out
}

fn int_of(n: Option<&Node>) -> Option<i64> {
    n.and_then(|x| to_int(x).ok()).and_then(|j| j.as_i64())
}

/// Recipe-level rules, in srtctl's order: the subset that decides single-node launches
/// (docs/recipe.md, "Recipe-level rules").
fn rules(c: &mut Checker) {
    let t = &c.v.tree;
    let roles: Vec<(&str, &Node)> = t
        .get("roles")
        .and_then(Node::as_map)
        .map(|m| m.iter().map(|(k, _, v)| (k, v)).collect())
        .unwrap_or_default();
    let top_engine = t.get("engine").filter(|e| !e.is_null());
    if engine_binding_rules(c, t, &roles, top_engine) {
        return;
    }
    role_rules(c, t, &roles, top_engine);
    frontend_rules(c, t, &roles, top_engine);
    benchmark_rules(c, t);
}

/// A role's engine type: its own, else the top-level one, else SGLang.
fn role_engine(role: &Node, top_engine: Option<&Node>) -> String {
    role.get("engine")
        .filter(|e| !e.is_null())
        .and_then(engine_type)
        .or_else(|| top_engine.and_then(engine_type))
        .unwrap_or_else(|| "sglang".into())
}

/// Roles → engine binding (one top-level engine or one per role); true when the binding is
/// wrong and the other rules would only repeat it.
fn engine_binding_rules(
    c: &mut Checker,
    t: &Node,
    roles: &[(&str, &Node)],
    top_engine: Option<&Node>,
) -> bool {
    let with_engine: Vec<&str> = roles
        .iter()
        .filter(|(_, r)| r.get("engine").is_some_and(|e| !e.is_null()))
        .map(|(k, _)| *k)
        .collect();
    if top_engine.is_some() && !with_engine.is_empty() {
        let span = t.get("engine").map(|e| e.span).unwrap_or(t.span);
        c.err(
            codes::ENGINE,
            "engine",
            span,
            format!(
                "a top-level engine and per-role engines ({}) cannot be combined",
                with_engine.join(", ")
            ),
            Some("use either engine: or roles.<role>.engine on every role"),
        );
        return true;
    }
    if top_engine.is_none() && !with_engine.is_empty() && with_engine.len() != roles.len() {
        for (k, r) in roles {
            if !with_engine.contains(k) {
                c.err(
                    codes::ENGINE,
                    &format!("roles.{k}"),
                    r.span,
                    format!("roles.{k}.engine must name a type when no top-level engine is set"),
                    None,
                );
            }
        }
        return true;
    }
    false
}

/// Each role's fields against its engine and the allocation.
fn role_rules(c: &mut Checker, t: &Node, roles: &[(&str, &Node)], top_engine: Option<&Node>) {
    let engine_of = |role: &Node| role_engine(role, top_engine);
    let has = |k: &str| roles.iter().any(|(n, _)| *n == k);
    if has("agg") && (has("prefill") || has("decode")) {
        c.err(
            codes::ROLE,
            "roles",
            t.get("roles").map(|r| r.span).unwrap_or(t.span),
            "a recipe is aggregated (agg) or disaggregated (prefill/decode), not both",
            None,
        );
    }
    for (k, r) in roles {
        let e = engine_of(r);
        if let Some(x) = r.get("extra_args")
            && e != "trtllm"
            && x.as_seq().is_some_and(|s| !s.is_empty())
        {
            c.err(
                codes::ROLE,
                &format!("roles.{k}.extra_args"),
                x.span,
                format!("extra_args is TRT-LLM only (roles.{k} runs {e})"),
                Some("put engine flags in roles.<role>.args"),
            );
        }
        if let Some(x) = r.get("kv_events")
            && !x.is_null()
            && !["sglang", "vllm"].contains(&e.as_str())
        {
            c.err(
                codes::ROLE,
                &format!("roles.{k}.kv_events"),
                x.span,
                format!("kv_events is supported only for sglang and vllm (roles.{k} runs {e})"),
                None,
            );
        }
        if let Some(n) = r.get("nodes")
            && n.as_str() == Some("colocate")
            && *k != "decode"
        {
            c.err(
                codes::ROLE,
                &format!("roles.{k}.nodes"),
                n.span,
                "nodes: colocate is allowed only on decode",
                None,
            );
        }
        if let Some(x) = r.get("container")
            && x.as_str().is_some_and(|s| s.trim().is_empty())
        {
            c.err(
                codes::ROLE,
                &format!("roles.{k}.container"),
                x.span,
                "container must be non-empty",
                None,
            );
        }
        // The role's workers must fit its nodes: workers × gpus ≤ nodes × gpus_per_node.
        let gpn = int_of(t.get_path(&["resources", "gpus_per_node"])).unwrap_or(4);
        if let (Some(g), Some(nodes)) = (int_of(r.get("gpus")), int_of(r.get("nodes")))
            && let Some(w) = int_of(r.get("workers"))
            && g.saturating_mul(w) > nodes.saturating_mul(gpn)
        {
            let span = r.get("gpus").map(|x| x.span).unwrap_or(r.span);
            c.err(
                codes::ROLE,
                &format!("roles.{k}.gpus"),
                span,
                format!("{w} worker(s) × {g} GPUs do not fit on {nodes} node(s) × {gpn} GPUs"),
                None,
            );
        }
    }
}

/// The frontend type against the roles' engines and layout (docs/recipe.md, "Recipe-level
/// rules").
fn frontend_rules(c: &mut Checker, t: &Node, roles: &[(&str, &Node)], top_engine: Option<&Node>) {
    let engine_of = |role: &Node| role_engine(role, top_engine);
    let has = |k: &str| roles.iter().any(|(n, _)| *n == k);
    let fe = t.get("frontend");
    let fe_type = crate::recipe::frontend_type(t);
    let fe_span = fe.and_then(|f| f.get("type")).map_or(t.span, |x| x.span);
    match FRONTENDS.iter().find(|(n, _)| *n == fe_type) {
        None => {
            let all: Vec<&str> = FRONTENDS.iter().map(|(n, _)| *n).collect();
            c.err(
                codes::FRONTEND,
                "frontend.type",
                fe_span,
                format!(
                    "Unknown frontend.type '{fe_type}'. Available: {}",
                    all.join(", ")
                ),
                None,
            );
        }
        Some((_, Some(need))) => {
            let bad: Vec<String> = roles
                .iter()
                .filter(|(_, r)| engine_of(r) != *need)
                .map(|(k, r)| format!("{k}={}", engine_of(r)))
                .collect();
            if !bad.is_empty() {
                c.err(
                    codes::FRONTEND,
                    "frontend.type",
                    fe_span,
                    format!(
                        "frontend.type: {fe_type} requires backend.type: {need}; got {}",
                        bad.join(", ")
                    ),
                    None,
                );
            }
        }
        Some(_) => {}
    }
    let multi = fe
        .and_then(|f| f.get("enable_multiple_frontends"))
        .map(|x| to_bool(x).ok() == Some(serde_json::Value::Bool(true)))
        .unwrap_or(true);
    if fe_type == "sglang" || fe_type == "vllm" {
        if multi {
            let span = fe
                .and_then(|f| f.get("enable_multiple_frontends"))
                .map(|x| x.span)
                .unwrap_or(fe_span);
            c.err(codes::FRONTEND, "frontend.enable_multiple_frontends", span, format!("frontend.type: {fe_type} requires frontend.enable_multiple_frontends: false"), Some("set frontend.enable_multiple_frontends: false (the worker itself serves port 8000)"));
        }
        if has("prefill") || has("decode") {
            c.err(codes::FRONTEND, "frontend.type", fe_span, format!("frontend.type: {fe_type} supports aggregate jobs only, not disaggregated layouts"), None);
        }
        let workers = roles
            .iter()
            .find(|(k, _)| *k == "agg")
            .and_then(|(_, r)| int_of(r.get("workers")))
            .unwrap_or(0);
        if workers != 1 {
            c.err(
                codes::FRONTEND,
                "roles.agg.workers",
                fe_span,
                format!(
                    "frontend.type: {fe_type} supports exactly one aggregate worker, got {workers}."
                ),
                Some("write roles.agg.workers: 1"),
            );
        }
    }
    if fe_type == "none"
        && roles
            .iter()
            .any(|(_, r)| int_of(r.get("workers")).unwrap_or(0) > 0)
    {
        c.err(
            codes::FRONTEND,
            "frontend.type",
            fe_span,
            "frontend.type: none is for services-only jobs; engine roles have workers",
            None,
        );
    }
}

/// The benchmark type and the fields it uses (docs/recipe.md, "Recipe-level rules").
fn benchmark_rules(c: &mut Checker, t: &Node) {
    if let Some(b) = t.get("benchmark").and_then(Node::as_map) {
        let bt = b.get("type").map(py_str).unwrap_or_else(|| "manual".into());
        let bspan = b.get_entry("type").map(|(_, v)| v.span).unwrap_or(t.span);
        match BENCHMARKS.iter().find(|(n, _)| *n == bt) {
            None => {
                let all: Vec<&str> = BENCHMARKS.iter().map(|(n, _)| *n).collect();
                c.err(
                    codes::BENCHMARK,
                    "benchmark.type",
                    bspan,
                    format!(
                        "Unknown benchmark.type '{bt}'. Available: {}",
                        all.join(", ")
                    ),
                    None,
                );
            }
            Some((_, own)) => {
                let mut unused = Vec::new();
                for (k, kn, v) in b.iter() {
                    if SHARED_BENCH.contains(&k) || own.contains(&k) || bench_default_ok(k, v) {
                        continue;
                    }
                    unused.push((k.to_string(), kn.span));
                }
                if !unused.is_empty() {
                    let names: Vec<&str> = unused.iter().map(|(k, _)| k.as_str()).collect();
                    let mut accepts: Vec<&str> =
                        SHARED_BENCH.iter().chain(own.iter()).copied().collect();
                    accepts.sort_unstable();
                    for (k, span) in &unused {
                        c.err(
                            codes::BENCHMARK,
                            &format!("benchmark.{k}"),
                            *span,
                            format!(
                                "benchmark.type '{bt}' does not use {}; fields it accepts: {}",
                                names.join(", "),
                                accepts.join(", ")
                            ),
                            None,
                        );
                    }
                }
            }
        }
    }
}
