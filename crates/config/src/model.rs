//! Typed master-config entries and runner inventory, built only from input that passed the
//! checks (parse, don't validate). Every record keeps the span of the node it came from.

use infx_report::Span;

/// One master-config entry (`configs/*-master.yaml`, top-level key).
#[derive(Debug, Clone, PartialEq)]
pub struct MasterEntry {
    pub key: String,
    /// Index into [`crate::LoadedConfigs::masters`].
    pub file: usize,
    pub key_span: Span,
    pub image: String,
    pub model: String,
    pub model_prefix: String,
    pub precision: String,
    pub framework: String,
    pub runner: String,
    pub multinode: bool,
    pub disagg: bool,
    pub router: Option<Component>,
    pub kv_p2p_transfer: Option<String>,
    /// [Oct-newest] directory of the entry's recipes under the lane's recipes root.
    pub srt_recipe_dir: Option<String>,
    pub fixed_seq_len: Vec<FixedSeqLen>,
    pub agentic_coding: Vec<AgenticBlock>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FixedSeqLen {
    pub span: Span,
    pub isl: i64,
    pub osl: i64,
    pub require_power: bool,
    pub search_space: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AgenticBlock {
    pub span: Span,
    /// Exact source text (`0.80`) for decimal arithmetic, and its value.
    pub dram_utilization: Option<(String, f64)>,
    pub search_space: Vec<Row>,
}

/// One search-space row of either scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub span: Span,
    pub topology: Topology,
    /// `mtp`, `draft_model` or `none` (default).
    pub spec_decoding: String,
    pub conc: Conc,
    pub router: Option<Component>,
    pub kv_p2p_transfer: Option<String>,
    /// Agentic rows: `none` or `dram` when written.
    pub kv_offloading: Option<String>,
    pub kv_offload_backend: Option<Component>,
    pub srt_recipe: Option<RecipeRef>,
    pub eval_srt_recipe: Option<RecipeRef>,
    pub power: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Topology {
    /// Single-node engine (`tp` on the row).
    Single {
        tp: i64,
        pp: i64,
        dcp_size: i64,
        pcp_size: i64,
        ep: Option<i64>,
        dp_attn: Option<bool>,
    },
    /// Disaggregated prefill/decode workers.
    Disagg { prefill: Worker, decode: Worker },
    /// [Oct] aggregated multinode worker.
    Aggregated {
        worker: Worker,
        num_nodes: Option<i64>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Worker {
    pub num_worker: i64,
    pub tp: i64,
    pub pp: i64,
    pub dcp_size: i64,
    pub pcp_size: i64,
    pub ep: i64,
    pub dp_attn: bool,
    pub hardware: Option<String>,
    pub additional_settings: Vec<String>,
}

/// Concurrency as written: duplicates and order of a list are kept (C5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conc {
    Range { start: i64, end: i64 },
    List(Vec<i64>),
}

/// `router` / `kv-offload-backend`: a name and (for routers, required) a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    pub name: String,
    pub version: Option<String>,
}

/// A recipe reference `<file>[:<selector>]` ([Oct]: free string; [Oct-newest]: relative to
/// `srt-recipe-dir`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeRef {
    pub span: Span,
    pub raw: String,
    pub file: String,
    pub selector: Option<String>,
    /// [Oct-newest] project-relative path (`benchmarks/single_node/srt-slurm-recipes/<dir>/<file>`).
    pub resolved: Option<String>,
}

/// `runners.yaml`, either shape.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunnerInventory {
    /// Label → concrete runner names, in file order.
    pub labels: Vec<(String, Vec<String>)>,
    /// Hardware facts addressed by label ([Aug] `hardware.<label>`; [Oct] `clusters.<id>` as
    /// `cluster:<id>`).
    pub hardware: Vec<(String, HardwareFacts)>,
    /// True for the [Oct] `labels` + `clusters` shape.
    pub oct_shape: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HardwareFacts {
    pub gpus_per_node: Option<i64>,
    pub available_cpu_dram_mib: Option<i64>,
}

impl RunnerInventory {
    pub fn has_label(&self, label: &str) -> bool {
        self.labels.iter().any(|(l, _)| l == label)
    }
    pub fn runners(&self, label: &str) -> Option<&[String]> {
        self.labels
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, r)| r.as_slice())
    }
    /// Exact hardware record of a label.
    pub fn hardware(&self, label: &str) -> Option<&HardwareFacts> {
        self.hardware
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, h)| h)
    }
    /// `gpus-per-node` of a runner label: the exact record, else (docs/config.md, "API") the GPU family
    /// (text before the first `-` after stripping `cluster:`) when all its records agree.
    pub fn gpus_per_node(&self, label: &str) -> Result<i64, String> {
        if let Some(g) = self.hardware(label).and_then(|h| h.gpus_per_node) {
            return Ok(g);
        }
        let family = family(label);
        let mut found: Vec<i64> = self
            .hardware
            .iter()
            .filter(|(l, _)| family_of_record(l) == family)
            .filter_map(|(_, h)| h.gpus_per_node)
            .collect();
        found.sort_unstable();
        found.dedup();
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(format!("Cannot resolve gpus-per-node for runner '{label}'")),
            many => Err(format!(
                "Ambiguous gpus-per-node for runner '{label}': {many:?}"
            )),
        }
    }
}

fn family(label: &str) -> &str {
    let s = label.strip_prefix("cluster:").unwrap_or(label);
    s.split('-').next().unwrap_or(s)
}

fn family_of_record(label: &str) -> &str {
    family(label)
}
