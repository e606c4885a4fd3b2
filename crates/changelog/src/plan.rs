//! The sweep plan of a change (upstream `process_changelog.py`): which configs and scenarios
//! the added entries select, the generator calls that produce their rows (claim maps per
//! scenario, throughput and eval passes), the append-only delta, `--trim-conc`, the
//! `recipe-fingerprint`, and the bucketed output object.
//!
//! Row generation is behind the [`Generator`] trait so the selection logic is testable alone;
//! `infx-matrix` provides the real generator (wired in by the caller).

use crate::codes;
use crate::entry::{Dialect, Entry};
use crate::gate::{GateError, GateStage, Modifiers, check_preconditions};
use infx_matrix::{ScenarioType, SweepRow};
use infx_report::Code;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, HashSet};

pub(crate) type Row = Map<String, Value>;

/// Which revision's inputs (master configs, runners, generator) a generation call reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revision {
    Head,
    Base,
}

/// Eval flags of one generator call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenEvals {
    /// `--no-evals` (throughput rows).
    NoEvals,
    /// `--evals-only` (the default eval picks).
    EvalsOnly,
    /// `--evals-only --all-evals`.
    AllEvals,
}

/// One `generate_sweep_configs.py test-config` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenRequest {
    pub revision: Revision,
    pub config_keys: Vec<String>,
    pub evals: GenEvals,
    /// `--scenario-type …`; `None` = flag absent (both types).
    pub scenario_types: Option<Vec<ScenarioType>>,
}

/// Produces matrix rows for a request (the generator's JSON output, in its order).
pub trait Generator {
    fn generate(&mut self, req: &GenRequest) -> Result<Vec<Row>, String>;
    /// The append-only scope check (`validate_append_only_scope` plus the base-existence
    /// check): needs both revisions' master configs, so it lives with the inputs.
    fn check_append_only_scope(
        &mut self,
        selected: &[(String, BTreeSet<ScenarioType>)],
    ) -> Result<(), String>;
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions {
    pub modifiers: Modifiers,
    pub trim_conc: bool,
}

/// Where a plan stopped: its own stages, and the gate's when the plan's gate of the additions
/// stops it first (its deletion and append-only stages are the plan's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStage {
    Read,
    Deletion,
    MasterConfigs,
    ConfigKey,
    AppendOnly,
    Generator,
    /// Another stage of the gate of the additions.
    Gate(GateStage),
}

impl PlanStage {
    /// The stage's name, as in the verdict goldens (`append-only`, `config-key`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStage::Read => "read",
            PlanStage::Deletion => GateStage::Deletion.as_str(),
            PlanStage::MasterConfigs => "master-configs",
            PlanStage::ConfigKey => "config-key",
            PlanStage::AppendOnly => GateStage::AppendOnly.as_str(),
            PlanStage::Generator => "generator",
            PlanStage::Gate(g) => g.as_str(),
        }
    }
    /// The diagnostic code of a plan that stopped here. The master configs are inputs the plan
    /// reads (`changelog/plan-read`); the gate's other stages have their own findings from the
    /// gate, so the plan's is the general `changelog/plan`.
    pub fn code(self) -> Code {
        match self {
            PlanStage::Read | PlanStage::MasterConfigs => codes::PLAN_READ,
            PlanStage::Deletion => codes::PLAN_DELETION,
            PlanStage::ConfigKey => codes::PLAN_CONFIG_KEY,
            PlanStage::AppendOnly => codes::PLAN_APPEND_ONLY,
            PlanStage::Generator => codes::PLAN_GENERATOR,
            PlanStage::Gate(_) => codes::PLAN,
        }
    }
}

impl From<GateStage> for PlanStage {
    fn from(s: GateStage) -> Self {
        match s {
            GateStage::Deletion => PlanStage::Deletion,
            GateStage::AppendOnly => PlanStage::AppendOnly,
            other => PlanStage::Gate(other),
        }
    }
}

impl std::fmt::Display for PlanStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A plan failure: the stage and upstream's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub stage: PlanStage,
    pub message: String,
}

impl From<GateError> for PlanError {
    fn from(e: GateError) -> Self {
        PlanError {
            stage: e.stage.into(),
            message: e.message,
        }
    }
}

/// The generator calls the entries need, in order, with the index of the entry that made each
/// (after the stable all-evals-first sort). Pure selection: no generation.
pub(crate) fn generator_calls(
    entries: &[Entry],
    resolved: &[Vec<String>],
    m: Modifiers,
) -> Vec<(usize, GenRequest)> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| !entries[i].all_evals);
    let mut bench_seen: HashMap<&str, HashSet<ScenarioType>> = HashMap::new();
    let mut eval_seen: HashMap<&str, HashSet<ScenarioType>> = HashMap::new();
    let mut calls = Vec::new();
    for i in order {
        let e = &entries[i];
        let scen = e.scenarios();
        let expand_all = m.all_evals || e.all_evals;
        let suppress = m.evals_only || e.evals_only || e.all_evals;
        if !suppress {
            for (tuple, configs) in claim(&resolved[i], &scen, &mut bench_seen) {
                let st = if tuple == ScenarioType::ALL {
                    None
                } else {
                    Some(tuple)
                };
                calls.push((
                    i,
                    GenRequest {
                        revision: Revision::Head,
                        config_keys: configs,
                        evals: GenEvals::NoEvals,
                        scenario_types: st,
                    },
                ));
            }
        }
        if e.append_only || e.no_evals {
            continue;
        }
        for (tuple, configs) in claim(&resolved[i], &scen, &mut eval_seen) {
            calls.push((
                i,
                GenRequest {
                    revision: Revision::Head,
                    config_keys: configs,
                    evals: if expand_all {
                        GenEvals::AllEvals
                    } else {
                        GenEvals::EvalsOnly
                    },
                    scenario_types: Some(tuple),
                },
            ));
        }
    }
    calls
}

/// Claims unseen scenarios per config and groups configs by the claimed tuple (first-seen
/// group order, canonical scenario order inside a tuple).
fn claim<'a>(
    configs: &'a [String],
    scen: &[ScenarioType],
    seen: &mut HashMap<&'a str, HashSet<ScenarioType>>,
) -> Vec<(Vec<ScenarioType>, Vec<String>)> {
    let mut groups: Vec<(Vec<ScenarioType>, Vec<String>)> = Vec::new();
    for c in configs {
        let s = seen.entry(c.as_str()).or_default();
        let unseen: Vec<ScenarioType> = ScenarioType::ALL
            .into_iter()
            .filter(|t| scen.contains(t) && !s.contains(t))
            .collect();
        if unseen.is_empty() {
            continue;
        }
        s.extend(unseen.iter().copied());
        match groups.iter_mut().find(|(t, _)| *t == unseen) {
            Some((_, g)) => g.push(c.clone()),
            None => groups.push((unseen, vec![c.clone()])),
        }
    }
    groups
}

/// Builds the plan object. `entries` are the added entries in file order, `resolved` their
/// config keys resolved against the head masters.
pub(crate) fn build_plan(
    entries: &[Entry],
    resolved: &[Vec<String>],
    base_ref: &str,
    head_ref: &str,
    dialect: Dialect,
    opts: PlanOptions,
    generator: &mut dyn Generator,
) -> Result<Value, PlanError> {
    if entries.is_empty() {
        return Err(PlanError {
            stage: PlanStage::Gate(GateStage::NoEntries),
            message: "No valid YAML entries found in the changelog additions.".into(),
        });
    }
    check_preconditions(entries, opts.modifiers)?;
    let has_ao = entries.iter().any(|e| e.append_only);
    if has_ao {
        let mut selected: Vec<(String, BTreeSet<ScenarioType>)> = Vec::new();
        for (e, keys) in entries.iter().zip(resolved) {
            for k in keys {
                let idx = match selected.iter().position(|(s, _)| s == k) {
                    Some(i) => i,
                    None => {
                        selected.push((k.clone(), BTreeSet::new()));
                        selected.len() - 1
                    }
                };
                selected[idx].1.extend(e.scenarios());
            }
        }
        generator
            .check_append_only_scope(&selected)
            .map_err(|m| PlanError {
                stage: PlanStage::AppendOnly,
                message: m,
            })?;
    }
    let mut bench: Vec<Row> = Vec::new();
    let mut evals: Vec<Row> = Vec::new();
    for (i, req) in generator_calls(entries, resolved, opts.modifiers) {
        let e = &entries[i];
        let rows = generator.generate(&req).map_err(|m| PlanError {
            stage: PlanStage::Generator,
            message: m,
        })?;
        match req.evals {
            GenEvals::NoEvals => {
                if e.append_only {
                    let base_req = GenRequest {
                        revision: Revision::Base,
                        ..req.clone()
                    };
                    let base = generator.generate(&base_req).map_err(|m| PlanError {
                        stage: PlanStage::Generator,
                        message: m,
                    })?;
                    let delta = append_only_delta(&base, &rows).map_err(|m| PlanError {
                        stage: PlanStage::AppendOnly,
                        message: m,
                    })?;
                    bench.extend(delta);
                } else {
                    bench.extend(rows);
                }
            }
            GenEvals::EvalsOnly | GenEvals::AllEvals => {
                evals.extend(filter_prefill_ep(rows, e.eval_min_prefill_ep))
            }
        }
    }
    if opts.trim_conc {
        bench = trim_conc(bench);
    }
    let mut single: Map<String, Value> = Map::new();
    let mut multi: Map<String, Value> = Map::new();
    for mut r in bench {
        let fp = recipe_fingerprint(&r);
        r.insert("recipe-fingerprint".into(), Value::String(fp));
        let agentic = r.is_agentic();
        let multinode = r.is_multinode();
        let bucket = if agentic {
            "agentic".to_string()
        } else {
            seq_len_to_str(r.get("isl"), r.get("osl"))
        };
        let target = if multinode { &mut multi } else { &mut single };
        if let Value::Array(v) = target
            .entry(bucket)
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            v.push(Value::Object(dump_row(&r)));
        }
    }
    let mut out = Map::new();
    out.insert("single_node".into(), Value::Object(single));
    out.insert("multi_node".into(), Value::Object(multi));
    let pick = |m: bool, a: bool| -> Value {
        Value::Array(
            evals
                .iter()
                .filter(|r| r.is_multinode() == m && r.is_agentic() == a)
                .map(|r| Value::Object(dump_row(r)))
                .collect(),
        )
    };
    out.insert("evals".into(), pick(false, false));
    out.insert("agentic_evals".into(), pick(false, true));
    out.insert("multinode_evals".into(), pick(true, false));
    out.insert("multinode_agentic_evals".into(), pick(true, true));
    let mut meta = Map::new();
    meta.insert("base_ref".into(), base_ref.into());
    meta.insert("head_ref".into(), head_ref.into());
    meta.insert(
        "entries".into(),
        Value::Array(entries.iter().map(|e| e.to_json(dialect)).collect()),
    );
    out.insert("changelog_metadata".into(), Value::Object(meta));
    Ok(Value::Object(out))
}

/// The output models rows are validated against (upstream `validation.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    SingleNode,
    SingleNodeAgentic,
    MultiNode,
    MultiNodeAgentic,
}

/// A model field: `(alias, default)`; a default is what pydantic fills in when the row lacks
/// the field (`None` = no default or a null default).
type Field = (&'static str, Option<Fill>);

// The groups of fields the models share, each written once; a model is its groups in order,
// and the order is upstream's declaration order (the JSON key order of a plan).
/// What is served: every model starts with it.
const SERVED: &[Field] = &[
    ("image", None),
    ("model", None),
    ("model-prefix", None),
    ("precision", None),
    ("framework", None),
];
const SPEC_RUNNER: &[Field] = &[("spec-decoding", None), ("runner", None)];
const SEQ_LENS: &[Field] = &[("isl", None), ("osl", None)];
/// A single-node engine's parallelism.
const PARALLELISM: &[Field] = &[
    ("tp", None),
    ("pp", None),
    ("dcp-size", None),
    ("pcp-size", None),
    ("ep", None),
    ("dp-attn", None),
];
/// A multi-node run's worker pools (each a [`WORKER`]).
const WORKERS: &[Field] = &[("prefill", None), ("decode", None)];
/// A fixed-sequence (non-agentic) run.
const FIXED_RUN: &[Field] = &[
    ("conc", None),
    ("max-model-len", None),
    ("exp-name", None),
    ("disagg", None),
];
/// An agentic run's load and KV offloading.
const AGENTIC_LOAD: &[Field] = &[
    ("conc", None),
    ("kv-offloading", None),
    ("kv-offload-backend", None),
    ("router", None),
];
const AGENTIC_RUN: &[Field] = &[
    ("total-cpu-dram-gb", None),
    ("duration", None),
    ("exp-name", None),
];
/// Non-agentic models default `eval-only` to false; agentic ones have a null default.
const FIXED_RUN_EVAL: &[Field] = &[("run-eval", None), ("eval-only", Some(Fill::False))];
const AGENTIC_RUN_EVAL: &[Field] = &[("run-eval", None), ("eval-only", None)];
const EVAL_TOOL: &[Field] = &[("eval-framework", None), ("eval-suite", None)];
const FINGERPRINT: &[Field] = &[("recipe-fingerprint", None)];

/// The groups of a model's fields, in declaration order.
fn fields(m: Model) -> &'static [&'static [Field]] {
    match m {
        Model::SingleNode => &[
            SERVED,
            SPEC_RUNNER,
            SEQ_LENS,
            PARALLELISM,
            FIXED_RUN,
            FIXED_RUN_EVAL,
            EVAL_TOOL,
            &[("router", None)],
            FINGERPRINT,
        ],
        Model::MultiNode => &[
            SERVED,
            SPEC_RUNNER,
            &[("node-count", None)],
            SEQ_LENS,
            WORKERS,
            FIXED_RUN,
            FIXED_RUN_EVAL,
            &[("eval-conc", None), ("eval-all-concs", Some(Fill::False))],
            EVAL_TOOL,
            &[("router", None), ("kv-p2p-transfer", None)],
            FINGERPRINT,
        ],
        Model::SingleNodeAgentic => &[
            SERVED,
            &[("runner", None)],
            PARALLELISM,
            &[("spec-decoding", Some(Fill::NoneStr))],
            AGENTIC_LOAD,
            AGENTIC_RUN,
            &[("scenario-type", None)],
            AGENTIC_RUN_EVAL,
            EVAL_TOOL,
            FINGERPRINT,
        ],
        Model::MultiNodeAgentic => &[
            SERVED,
            SPEC_RUNNER,
            &[("node-count", None)],
            WORKERS,
            AGENTIC_LOAD,
            &[("kv-p2p-transfer", None)],
            AGENTIC_RUN,
            &[("disagg", None), ("scenario-type", None)],
            AGENTIC_RUN_EVAL,
            &[("eval-conc", None)],
            EVAL_TOOL,
            FINGERPRINT,
        ],
    }
}

#[derive(Debug, Clone, Copy)]
enum Fill {
    False,
    NoneStr,
    One,
    EmptyList,
}

impl Fill {
    fn value(self) -> Value {
        match self {
            Fill::False => Value::Bool(false),
            Fill::NoneStr => Value::from("none"),
            Fill::One => Value::from(1),
            Fill::EmptyList => Value::Array(Vec::new()),
        }
    }
}

const WORKER: &[Field] = &[
    ("num-worker", None),
    ("tp", None),
    ("pp", Some(Fill::One)),
    ("dcp-size", Some(Fill::One)),
    ("pcp-size", Some(Fill::One)),
    ("ep", None),
    ("dp-attn", None),
    ("hardware", None),
    ("additional-settings", Some(Fill::EmptyList)),
];
const COMPONENT: &[Field] = &[("name", None), ("version", None)];

/// `model_dump(by_alias=True, exclude_none=True)` of a row validated as its model: fields in
/// model order, defaults filled in, nulls dropped; keys the model does not know are kept at
/// the end (upstream would reject them, so they show up in comparisons).
fn dump_model(r: &Row, groups: &[&[Field]], nested: bool) -> Row {
    let fields = || groups.iter().flat_map(|g| g.iter());
    let mut out = Row::new();
    for (k, d) in fields() {
        let v = match r.get(*k) {
            Some(v) => v.clone(),
            None => match d {
                Some(d) => d.value(),
                None => continue,
            },
        };
        if v.is_null() {
            continue;
        }
        let v = match (nested, *k, v) {
            (true, "prefill" | "decode", Value::Object(o)) => {
                Value::Object(dump_model(&o, &[WORKER], false))
            }
            (true, "router" | "kv-offload-backend", Value::Object(o)) => {
                Value::Object(dump_model(&o, &[COMPONENT], false))
            }
            (_, _, v) => v,
        };
        out.insert((*k).to_string(), v);
    }
    for (k, v) in r {
        if !out.contains_key(k) && !fields().any(|(f, _)| f == k) && !v.is_null() {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

fn dump_row(r: &Row) -> Row {
    let agentic = r.is_agentic();
    let multi = r.is_multinode();
    let m = match (multi, agentic) {
        (false, false) => Model::SingleNode,
        (false, true) => Model::SingleNodeAgentic,
        (true, false) => Model::MultiNode,
        (true, true) => Model::MultiNodeAgentic,
    };
    dump_model(r, fields(m), true)
}

fn seq_len_to_str(isl: Option<&Value>, osl: Option<&Value>) -> String {
    match (isl.and_then(Value::as_i64), osl.and_then(Value::as_i64)) {
        (Some(1024), Some(1024)) => "1k1k".into(),
        (Some(8192), Some(1024)) => "8k1k".into(),
        _ => format!("{}_{}", py_scalar(isl), py_scalar(osl)),
    }
}

fn py_scalar(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "None".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => {
            if *b {
                "True".into()
            } else {
                "False".into()
            }
        }
        Some(other) => other.to_string(),
    }
}

/// Drop multinode eval rows whose `prefill.ep` is below the threshold.
fn filter_prefill_ep(rows: Vec<Row>, min: Option<i64>) -> Vec<Row> {
    let Some(min) = min else { return rows };
    rows.into_iter()
        .filter(|r| match r.get("prefill") {
            Some(Value::Object(p)) => match p.get("ep") {
                None => 1 >= min,
                Some(Value::Number(n)) => n
                    .as_i64()
                    .or_else(|| n.as_f64().map(|f| f.trunc() as i64))
                    .is_some_and(|v| v >= min),
                Some(Value::Bool(b)) => i64::from(*b) >= min,
                Some(Value::String(s)) => s.trim().parse::<i64>().is_ok_and(|v| v >= min),
                _ => false,
            },
            _ => true,
        })
        .collect()
}

/// A canonical, order-independent key for a row minus the point-level fields.
fn curve_key(r: &Row) -> String {
    let mut m = r.clone();
    for k in ["conc", "exp-name", "recipe-fingerprint"] {
        m.remove(k);
    }
    py_json_sorted(&Value::Object(m))
}

/// `--trim-conc`: the lowest concurrency per single-node curve (curve = all fields except
/// `conc` and `exp-name`); multinode `conc` lists cut to `[min]`.
pub(crate) fn trim_conc(rows: Vec<Row>) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::with_capacity(rows.len());
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for mut r in rows {
        if r.is_multinode() {
            if let Some(Value::Array(c)) = r.get("conc")
                && c.len() > 1
                && let Some(min) = c.iter().filter_map(Value::as_i64).min()
            {
                r.insert("conc".into(), Value::Array(vec![min.into()]));
            }
            out.push(r);
            continue;
        }
        let mut m = r.clone();
        m.remove("conc");
        m.remove("exp-name");
        let key = py_json_sorted(&Value::Object(m));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(out.len()),
            None => groups.push((key, vec![out.len()])),
        }
        out.push(r);
    }
    let mut drop: HashSet<usize> = HashSet::new();
    for (_, idxs) in groups {
        if idxs.len() > 1 {
            // `min(idxs, key=conc)`: the first index with the lowest conc.
            let conc = |i: usize| out[i].conc().unwrap_or(i64::MAX);
            let keep = idxs
                .iter()
                .copied()
                .min_by_key(|&i| (conc(i), i))
                .unwrap_or(idxs[0]);
            drop.extend(idxs.into_iter().filter(|&i| i != keep));
        }
    }
    out.into_iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, r)| r)
        .collect()
}

fn concurrencies(r: &Row) -> Result<Vec<i64>, String> {
    match r.get("conc") {
        Some(Value::Number(n)) if n.is_i64() => Ok(vec![n.as_i64().unwrap_or_default()]),
        Some(Value::Array(v)) if !v.is_empty() && v.iter().all(|x| x.is_i64()) => {
            Ok(v.iter().filter_map(Value::as_i64).collect())
        }
        other => Err(format!(
            "append-only matrix entry has invalid concurrency value: {}",
            other.map(Value::to_string).unwrap_or_else(|| "None".into())
        )),
    }
}

/// The visual series a row belongs to (dashboard curve identity).
fn visual_series(r: &Row) -> String {
    let agentic = r.is_agentic();
    let g = |k: &str| r.get(k).cloned().unwrap_or(Value::Null);
    let kv = match r.get("kv-offloading") {
        None | Some(Value::Null) => "off",
        Some(Value::String(s)) if s.is_empty() || s == "none" => "off",
        _ => "on",
    };
    let sub = |k: &str, f: &str| match r.get(k) {
        Some(Value::Object(m)) => m.get(f).cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let disagg = match r.get("disagg") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    };
    let key = vec![
        g("model"),
        g("model-prefix"),
        g("precision"),
        g("framework"),
        g("runner"),
        Value::Bool(disagg),
        Value::from(if agentic {
            "agentic_traces"
        } else {
            "single_turn"
        }),
        if agentic { Value::Null } else { g("isl") },
        if agentic { Value::Null } else { g("osl") },
        Value::from(kv),
        if agentic {
            Value::from("")
        } else {
            r.get("spec-decoding")
                .cloned()
                .unwrap_or(Value::from("none"))
        },
        sub("prefill", "hardware"),
        sub("decode", "hardware"),
    ];
    Value::Array(key).to_string()
}

/// Upstream `append_only_delta`: only new points; every base curve and point must remain;
/// each new point must land on an existing visual series with one unchanged image.
pub(crate) fn append_only_delta(base: &[Row], head: &[Row]) -> Result<Vec<Row>, String> {
    let mut base_groups: Vec<(String, BTreeSet<i64>)> = Vec::new();
    let mut head_groups: HashMap<String, BTreeSet<i64>> = HashMap::new();
    for r in base {
        let k = curve_key(r);
        let c = concurrencies(r)?;
        match base_groups.iter_mut().find(|(x, _)| *x == k) {
            Some((_, s)) => s.extend(c),
            None => base_groups.push((k, c.into_iter().collect())),
        }
    }
    for r in head {
        head_groups
            .entry(curve_key(r))
            .or_default()
            .extend(concurrencies(r)?);
    }
    if base_groups.is_empty() {
        return Err("append-only requires an existing curve in the base revision".into());
    }
    if base_groups
        .iter()
        .any(|(k, _)| !head_groups.contains_key(k))
    {
        return Err("append-only may not remove or modify existing generated recipes".into());
    }
    for (k, bc) in &base_groups {
        let hc = &head_groups[k];
        let removed: Vec<i64> = bc.difference(hc).copied().collect();
        if !removed.is_empty() {
            return Err(format!(
                "append-only may not remove existing concurrency points: [{}]",
                removed
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let base_map: HashMap<&str, &BTreeSet<i64>> =
        base_groups.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let empty = BTreeSet::new();
    let mut emitted: HashMap<String, HashSet<i64>> = HashMap::new();
    let mut delta = Vec::new();
    for r in head {
        let k = curve_key(r);
        let b = base_map.get(k.as_str()).copied().unwrap_or(&empty);
        let added: BTreeSet<i64> = head_groups[&k].difference(b).copied().collect();
        let em = emitted.entry(k).or_default();
        match r.get("conc") {
            Some(Value::Number(n)) => {
                let c = n.as_i64().unwrap_or_default();
                if added.contains(&c) && em.insert(c) {
                    delta.push(r.clone());
                }
            }
            _ => {
                let mut new_vals = Vec::new();
                for c in concurrencies(r)? {
                    if added.contains(&c) && em.insert(c) {
                        new_vals.push(Value::from(c));
                    }
                }
                if !new_vals.is_empty() {
                    let mut d = r.clone();
                    d.insert("conc".into(), Value::Array(new_vals));
                    delta.push(d);
                }
            }
        }
    }
    if delta.is_empty() {
        return Err("append-only did not add any generated points".into());
    }
    let mut images: HashMap<String, BTreeSet<String>> = HashMap::new();
    for r in base {
        images.entry(visual_series(r)).or_default().insert(
            r.get("image")
                .map(Value::to_string)
                .unwrap_or_else(|| "null".into()),
        );
    }
    for r in &delta {
        let img = r
            .get("image")
            .filter(|v| !v.is_null())
            .map(Value::to_string);
        let ok = match (&img, images.get(&visual_series(r))) {
            (Some(i), Some(set)) => set.len() == 1 && set.contains(i),
            _ => false,
        };
        if !ok {
            return Err("append-only additions must belong to an existing visual curve with one unchanged non-null image".into());
        }
    }
    Ok(delta)
}

/// SHA-256 of the row without `conc`, `exp-name`, `recipe-fingerprint`, serialised as Python
/// `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=True)`.
pub(crate) fn recipe_fingerprint(r: &Row) -> String {
    let mut m = r.clone();
    for k in ["conc", "exp-name", "recipe-fingerprint"] {
        m.remove(k);
    }
    let s = py_json_sorted(&Value::Object(m));
    let digest = Sha256::digest(s.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Python `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`.
pub(crate) fn py_json_sorted(v: &Value) -> String {
    let mut out = String::new();
    write_py(v, &mut out);
    out
}

fn write_py(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(u)) => out.push_str(&u.to_string()),
            _ => out.push_str(&infx_matrix::json_float(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => infx_matrix::write_json_str(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_py(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                infx_matrix::write_json_str(k, out);
                out.push(':');
                write_py(&m[k.as_str()], out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(keys: &[&str], st: Option<Vec<ScenarioType>>) -> Entry {
        Entry {
            config_keys: keys.iter().map(|s| s.to_string()).collect(),
            description: vec!["d".into()],
            pr_link: "XXX".into(),
            evals_only: false,
            all_evals: false,
            append_only: false,
            no_evals: false,
            eval_min_prefill_ep: None,
            scenario_type: st,
            span: infx_report::Span::line(1),
        }
    }

    /// The models are compositions of shared groups: a field in two groups of one model would
    /// be dumped at its first place only, hiding a group put in the wrong place.
    #[test]
    fn composed_models_name_each_field_once() {
        let models = [
            Model::SingleNode,
            Model::SingleNodeAgentic,
            Model::MultiNode,
            Model::MultiNodeAgentic,
        ];
        for m in models {
            let mut seen = std::collections::BTreeSet::new();
            for (name, _) in fields(m).iter().flat_map(|g| g.iter()) {
                assert!(seen.insert(*name), "{m:?} names `{name}` twice");
            }
        }
    }

    #[test]
    fn disjoint_scenarios_both_run() {
        let a = entry(&["c"], Some(vec![ScenarioType::FixedSeqLen]));
        let b = entry(&["c"], Some(vec![ScenarioType::AgenticCoding]));
        let r = vec![vec!["c".to_string()], vec!["c".to_string()]];
        let calls = generator_calls(&[a, b], &r, Modifiers::default());
        assert_eq!(calls.len(), 4);
        let both = entry(&["c"], None);
        let calls = generator_calls(&[both.clone(), both], &r, Modifiers::default());
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].1.scenario_types, None);
        assert_eq!(calls[1].1.scenario_types, Some(ScenarioType::ALL.to_vec()));
    }

    #[test]
    fn all_evals_first_and_modifiers() {
        let mut a = entry(&["c"], Some(vec![ScenarioType::AgenticCoding]));
        a.all_evals = true;
        let b = entry(&["c"], Some(vec![ScenarioType::FixedSeqLen]));
        let r = vec![vec!["c".to_string()], vec!["c".to_string()]];
        let calls = generator_calls(&[b.clone(), a], &r, Modifiers::default());
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].1.evals, GenEvals::AllEvals);
        let calls = generator_calls(
            &[b],
            &r[..1],
            Modifiers {
                evals_only: true,
                all_evals: true,
            },
        );
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].1.evals, GenEvals::AllEvals);
    }

    fn row(v: serde_json::Value) -> Row {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn delta_keeps_only_new_points() {
        let base = vec![row(
            json!({"image": "i", "model": "m", "tp": 4, "conc": 1, "exp-name": "a"}),
        )];
        let head = vec![
            row(json!({"image": "i", "model": "m", "tp": 4, "conc": 1, "exp-name": "a"})),
            row(json!({"image": "i", "model": "m", "tp": 4, "conc": 2, "exp-name": "b"})),
            row(json!({"image": "i", "model": "m", "tp": 8, "conc": 4, "exp-name": "c"})),
        ];
        let d = append_only_delta(&base, &head).unwrap();
        assert_eq!(d.len(), 2);
        let changed_image = vec![row(json!({"image": "j", "model": "m", "tp": 4, "conc": 1}))];
        assert!(
            append_only_delta(&base, &changed_image)
                .unwrap_err()
                .contains("remove or modify")
        );
        assert!(
            append_only_delta(&base, &base)
                .unwrap_err()
                .contains("did not add")
        );
        let head_only_image = vec![
            base[0].clone(),
            row(json!({"image": "k", "model": "m", "tp": 8, "conc": 4})),
        ];
        assert!(
            append_only_delta(&base, &head_only_image)
                .unwrap_err()
                .contains("visual curve")
        );
    }

    #[test]
    fn trim_and_fingerprint() {
        let rows = vec![
            row(json!({"a": 1, "conc": 8, "exp-name": "x8"})),
            row(json!({"a": 1, "conc": 2, "exp-name": "x2"})),
            row(json!({"a": 2, "conc": 4})),
            row(json!({"prefill": {"ep": 1}, "conc": [4, 2, 8]})),
        ];
        let t = trim_conc(rows.clone());
        assert_eq!(t.len(), 3);
        assert_eq!(t[0]["conc"], json!(2));
        assert_eq!(t[2]["conc"], json!([2]));
        assert_eq!(recipe_fingerprint(&rows[0]), recipe_fingerprint(&rows[1]));
        assert_ne!(recipe_fingerprint(&rows[0]), recipe_fingerprint(&rows[2]));
        assert_eq!(
            py_json_sorted(&json!({"b": 1.5, "a": "é"})),
            "{\"a\":\"\\u00e9\",\"b\":1.5}"
        );
    }

    #[test]
    fn python_float_repr_in_fingerprints() {
        for (f, s) in [
            (1.0, "1.0"),
            (0.8, "0.8"),
            (1e-5, "1e-05"),
            (1e16, "1e+16"),
            (123.25, "123.25"),
            (0.0001, "0.0001"),
            (-2.5e20, "-2.5e+20"),
        ] {
            assert_eq!(py_json_sorted(&json!(f)), s);
        }
    }
}
