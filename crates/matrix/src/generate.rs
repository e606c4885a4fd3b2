//! Expanding master-config entries into matrix rows, row for row and key for key as upstream's
//! generator builds them (docs/matrix.md, "How rows are generated").

use crate::codes;
use crate::decimal::dram_budget_gb;
use crate::inputs::{ConfigEntry, MasterConfigs, Runners};
use crate::json::{Json, Object};
use crate::sweep_row::{ScenarioType, key};
use infx_config::truthy;
use infx_report::Diagnostic;
use infx_yaml::{Node, Value};

/// `1k1k` / `8k1k`, the only names the CLI accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqLen {
    OneKOneK,
    EightKOneK,
}

impl SeqLen {
    pub fn parse(s: &str) -> Option<SeqLen> {
        match s {
            "1k1k" => Some(SeqLen::OneKOneK),
            "8k1k" => Some(SeqLen::EightKOneK),
            _ => None,
        }
    }
    pub fn lengths(self) -> (i64, i64) {
        match self {
            SeqLen::OneKOneK => (1024, 1024),
            SeqLen::EightKOneK => (8192, 1024),
        }
    }
}

/// How evals are selected after expansion (docs/matrix.md, "Eval selection").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EvalMode {
    /// Default marking (`run-eval` on the picks).
    #[default]
    Default,
    /// `--no-evals`: no marking at all.
    None,
    /// `--evals-only`: only the picks, as eval-only rows.
    Subset,
    /// `--all-evals` (with or without `--evals-only`): every eligible row, as eval-only rows.
    All,
}

/// `full-sweep` selection and overrides.
#[derive(Debug, Clone)]
pub struct FullSweep {
    pub model_prefix: Option<Vec<String>>,
    pub precision: Option<Vec<String>>,
    pub framework: Option<Vec<String>>,
    pub runner_type: Option<Vec<String>>,
    pub seq_lens: Option<Vec<SeqLen>>,
    pub step_size: i64,
    pub min_conc: Option<i64>,
    pub max_conc: Option<i64>,
    pub max_tp: Option<i64>,
    pub max_ep: Option<i64>,
    /// Both true when neither `--single-node` nor `--multi-node` was given.
    pub single_node: bool,
    pub multi_node: bool,
}

impl Default for FullSweep {
    fn default() -> Self {
        FullSweep {
            model_prefix: None,
            precision: None,
            framework: None,
            runner_type: None,
            seq_lens: None,
            step_size: 2,
            min_conc: None,
            max_conc: None,
            max_tp: None,
            max_ep: None,
            single_node: true,
            multi_node: true,
        }
    }
}

/// `test-config` selection.
#[derive(Debug, Clone, Default)]
pub struct TestConfig {
    /// Exact keys or shell globs (`*`, `?`, `[seq]`).
    pub config_keys: Vec<String>,
    pub conc: Option<Vec<i64>>,
    pub seq_lens: Option<Vec<SeqLen>>,
}

#[derive(Debug, Clone)]
pub enum Selection {
    FullSweep(FullSweep),
    TestConfig(TestConfig),
}

/// Everything that decides the rows.
#[derive(Debug, Clone)]
pub struct Options {
    pub selection: Selection,
    pub evals: EvalMode,
    pub runner_node_filter: Option<String>,
    pub scenario_types: Option<Vec<ScenarioType>>,
}

impl Options {
    /// The rows the binding check of `validate` binds: the given config keys (every key when
    /// `None`), without eval marking.
    pub fn for_binding(keys: Option<&[String]>) -> Options {
        let selection = match keys {
            Some(k) => Selection::TestConfig(TestConfig {
                config_keys: k.to_vec(),
                ..Default::default()
            }),
            None => Selection::FullSweep(FullSweep::default()),
        };
        Options {
            selection,
            evals: EvalMode::None,
            runner_node_filter: None,
            scenario_types: None,
        }
    }
}

const AGENTIC_DURATION_SECONDS: i64 = 3600;

/// Where a generated row comes from: the config entry and its search-space row.
#[derive(Debug, Clone)]
pub struct RowOrigin {
    pub key: String,
    pub path: std::path::PathBuf,
    /// The search-space row that produced the row.
    pub span: infx_report::Span,
}

/// Generates the rows upstream's generator prints, in its order, with its keys. Errors carry
/// upstream's message (the `ValueError` text) so callers can compare.
/// The most sweep points one master config may expand into (docs/security.md, "Budgets and
/// read paths, with their tests"): 10,000, 238 times the most a real config has (42,
/// `dsv4-fp4-b300-sglang-agentic-hicache-mtp` in August 2026).
pub(crate) const MAX_POINTS_PER_CONFIG: usize = 10_000;

/// The most sweep points one expansion (one run of the generator) may hold: 100,000, 55 times
/// the real full sweep (1,820 rows in August 2026). An 8.8 MB master expanding to 1.9 M points
/// took 256 s and 11 GB; 100,000 points stay well under a GiB, below a 7 GB CI runner.
pub(crate) const MAX_POINTS_PER_RUN: usize = 100_000;

pub fn generate(
    configs: &MasterConfigs<'_>,
    runners: &Runners<'_>,
    opts: &Options,
) -> Result<Vec<Object>, Diagnostic> {
    let rows = expand(configs, runners, opts)?;
    Ok(crate::evals::select(rows, opts.evals))
}

/// Expansion only (no eval marking), in upstream order.
pub fn expand(
    configs: &MasterConfigs<'_>,
    runners: &Runners<'_>,
    opts: &Options,
) -> Result<Vec<Object>, Diagnostic> {
    let mut origins = Vec::new();
    expand_inner(configs, runners, opts, &mut origins)
}

/// Expansion (no eval marking) with the origin of every row, for binding.
pub fn expand_with_origins(
    configs: &MasterConfigs<'_>,
    runners: &Runners<'_>,
    opts: &Options,
) -> Result<Vec<(Object, RowOrigin)>, Diagnostic> {
    let mut origins = Vec::new();
    let rows = expand_inner(configs, runners, opts, &mut origins)?;
    Ok(rows.into_iter().zip(origins).collect())
}

fn expand_inner(
    configs: &MasterConfigs<'_>,
    runners: &Runners<'_>,
    opts: &Options,
    origins: &mut Vec<RowOrigin>,
) -> Result<Vec<Object>, Diagnostic> {
    let mut rows = Vec::new();
    match &opts.selection {
        Selection::FullSweep(fs) => {
            if fs.step_size <= 1 {
                return Err(Diagnostic::error(
                    codes::USAGE,
                    "step_size must be greater than 1",
                ));
            }
            if let (Some(lo), Some(hi)) = (fs.min_conc, fs.max_conc)
                && lo > hi
            {
                return Err(Diagnostic::error(
                    codes::USAGE,
                    "min_conc must be less than or equal to max_conc",
                ));
            }
            if let Some(types) = &fs.runner_type {
                let mut invalid: Vec<&str> = Vec::new();
                for t in types {
                    if !runners.is_label(t) && !invalid.contains(&t.as_str()) {
                        invalid.push(t);
                    }
                }
                if !invalid.is_empty() {
                    let mut valid: Vec<&str> = runners.labels.iter().map(|(l, _)| *l).collect();
                    valid.sort_unstable();
                    valid.dedup();
                    let set = invalid
                        .iter()
                        .map(|s| py_repr_str(s))
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(Diagnostic::error(
                        codes::UNKNOWN_RUNNER_TYPE,
                        format!(
                            "Invalid runner type(s): {{{set}}}. Valid runner types are: {}",
                            valid.join(", ")
                        ),
                    )
                    .with_help("--runner-type takes label keys of runners.yaml"));
                }
            }
            for entry in &configs.entries {
                if !full_sweep_selects(entry, fs) {
                    continue;
                }
                let first = rows.len();
                expand_config(
                    entry,
                    runners,
                    opts,
                    Some(fs),
                    None,
                    fs.seq_lens.as_deref(),
                    &mut rows,
                    origins,
                )?;
                check_new_rows(
                    &rows[first..],
                    &origins[first.min(origins.len())..],
                    configs.kv_metadata,
                )?;
            }
        }
        Selection::TestConfig(tc) => {
            let keys = expand_config_keys(&tc.config_keys, configs)?;
            for key in keys {
                if let Some(entry) = configs.get(key) {
                    let first = rows.len();
                    expand_config(
                        entry,
                        runners,
                        opts,
                        None,
                        tc.conc.as_deref(),
                        tc.seq_lens.as_deref(),
                        &mut rows,
                        origins,
                    )?;
                    check_new_rows(
                        &rows[first..],
                        &origins[first.min(origins.len())..],
                        configs.kv_metadata,
                    )?;
                }
            }
        }
    }
    Ok(rows)
}

/// Upstream validates every row as it is generated (`validate_matrix_entry`,
/// `validate_agentic_matrix_entry`); the first invalid row stops the run.
fn check_new_rows(
    rows: &[Object],
    origins: &[RowOrigin],
    kv_metadata: bool,
) -> Result<(), Diagnostic> {
    for (i, row) in rows.iter().enumerate() {
        if let Err(message) = crate::rows::check_row_of_day(row, kv_metadata) {
            let mut d = Diagnostic::error(codes::ROW, message).with_help(
                "the generated row breaks upstream's output model; fix the search-space row or runners.yaml value it comes from",
            );
            if let Some(o) = origins.get(i) {
                d = d.at(&o.path, o.span);
            }
            return Err(d);
        }
    }
    Ok(())
}

fn full_sweep_selects(entry: &ConfigEntry<'_>, fs: &FullSweep) -> bool {
    let field = |k: &str| entry.node.get(k).map(|n| &n.value);
    let in_list = |list: &Option<Vec<String>>, k: &str| match list {
        None => true,
        Some(l) if l.is_empty() => true,
        Some(l) => matches!(field(k), Some(Value::Str(s)) if l.iter().any(|x| x == s)),
    };
    if let Some(prefixes) = &fs.model_prefix
        && !prefixes.is_empty()
        && !prefixes.iter().any(|p| entry.key.starts_with(p.as_str()))
    {
        return false;
    }
    in_list(&fs.precision, "precision")
        && in_list(&fs.framework, "framework")
        && in_list(&fs.runner_type, "runner")
}

/// Python-style `repr()` of a string (one implementation for the workspace, in infx-recipe).
pub(crate) fn py_repr_str(s: &str) -> String {
    infx_recipe::py_str_repr(s)
}

/// The CLI matcher (`expand_config_keys`): `*`/`?` make a glob matched in file order;
/// otherwise the key must exist. De-duplicated in first-seen order (docs/matrix.md,
/// "Config-key selection").
pub fn expand_config_keys<'a>(
    patterns: &[String],
    configs: &MasterConfigs<'a>,
) -> Result<Vec<&'a str>, Diagnostic> {
    let available: Vec<&'a str> = configs.keys().collect();
    let listing = || {
        let mut sorted = available.clone();
        sorted.sort_unstable();
        sorted.join(", ")
    };
    let mut out: Vec<&'a str> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for pat in patterns {
        if pat.contains('*') || pat.contains('?') {
            let matches: Vec<&'a str> = available
                .iter()
                .copied()
                .filter(|k| infx_fs::fnmatch(k, pat))
                .collect();
            if matches.is_empty() {
                return Err(Diagnostic::error(
                    codes::PATTERN_MATCHES_NOTHING,
                    format!(
                        "Pattern '{pat}' matched no config keys.\nAvailable keys: {}",
                        listing()
                    ),
                )
                .with_help("check the --config-keys pattern"));
            }
            for m in matches {
                if seen.insert(m) {
                    out.push(m);
                }
            }
        } else {
            let Some(k) = available.iter().copied().find(|k| *k == pat.as_str()) else {
                return Err(Diagnostic::error(
                    codes::UNKNOWN_CONFIG_KEY,
                    format!(
                        "Config key(s) not found: {pat}.\nAvailable keys: {}",
                        listing()
                    ),
                )
                .with_help(format!(
                    // No flag named: `matrix --config-keys` and `dry-run --config-key` share it.
                    "{}check the key's spelling (the available keys are listed above)",
                    infx_report::did_you_mean(pat, available.iter().copied())
                )));
            };
            if seen.insert(k) {
                out.push(k);
            }
        }
    }
    Ok(out)
}

/// One entry's context for messages and lookups.
struct Cx<'e, 'a> {
    entry: &'e ConfigEntry<'a>,
}

impl<'e, 'a> Cx<'e, 'a> {
    fn err(&self, node: &Node, code: infx_report::Code, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(code, msg).at(self.entry.path(), node.span)
    }
    fn malformed(&self, node: &Node, what: &str) -> Diagnostic {
        self.err(
            node,
            codes::MALFORMED_ENTRY,
            format!("Master config entry '{}': {what}", self.entry.key),
        )
        .with_help("run `cargo xtask validate` for the schema findings of this entry")
    }
    fn req<'n>(&self, node: &'n Node, field: &str) -> Result<&'n Node, Diagnostic> {
        node.get(field)
            .ok_or_else(|| self.malformed(node, &format!("missing '{field}'")))
    }
    fn json(&self, node: &Node) -> Result<Json, Diagnostic> {
        Json::from_node(node).map_err(|e| self.err(node, codes::NOT_JSON, e))
    }
    fn int(&self, node: &Node, field: &str) -> Result<i64, Diagnostic> {
        node.as_i64()
            .ok_or_else(|| self.malformed(node, &format!("'{field}' must be an integer")))
    }
    fn int_list(&self, node: &Node, field: &str) -> Result<Vec<i64>, Diagnostic> {
        let seq = node.as_seq().ok_or_else(|| {
            self.malformed(node, &format!("'{field}' must be a list of integers"))
        })?;
        seq.iter().map(|n| self.int(n, field)).collect()
    }
    fn str_field(&self, node: &Node, field: &str) -> Result<Json, Diagnostic> {
        self.json(self.req(node, field)?)
    }
    /// The entry's multinode flag and its `disagg` as written (`false` when absent).
    fn multinode_and_disagg(&self) -> Result<(bool, Json), Diagnostic> {
        let config = self.entry.node;
        let disagg = match config.get("disagg") {
            Some(n) => self.json(n)?,
            None => Json::Bool(false),
        };
        Ok((self.entry.is_multinode(), disagg))
    }
}

/// `d.get(k)` that treats an explicit `null` like absence (both are `None` in Python).
fn get_some<'n>(node: &'n Node, k: &str) -> Option<&'n Node> {
    node.get(k).filter(|n| !n.is_null())
}

/// Concurrency range expansion: multiply by `step`, clamp to the end, stop at the end
/// (docs/matrix.md, "Concurrency ranges and filters").
pub(crate) fn concurrency_range(start: i64, end: i64, step: i64) -> Vec<i64> {
    let mut values = Vec::new();
    let mut c = start;
    while c <= end {
        values.push(c);
        if c == end {
            break;
        }
        let next = c.saturating_mul(step).min(end);
        // Validation rejects non-positive starts; without it they would never progress
        // (upstream would loop forever), so stop instead.
        if next <= c {
            break;
        }
        c = next;
    }
    values
}

/// `seq_len_to_str`.
pub(crate) fn seq_len_name(isl: &Json, osl: &Json) -> String {
    match (isl.as_i64(), osl.as_i64()) {
        (Some(1024), Some(1024)) => "1k1k".into(),
        (Some(8192), Some(1024)) => "8k1k".into(),
        _ => format!("{}_{}", py_str(isl), py_str(osl)),
    }
}

/// Python `str()` of a scalar, as an f-string would print it.
pub(crate) fn py_str(v: &Json) -> String {
    match v {
        Json::Null => "None".into(),
        Json::Bool(true) => "True".into(),
        Json::Bool(false) => "False".into(),
        Json::Int(i) => i.to_string(),
        Json::Float(f) => crate::json::py_float_repr(*f),
        Json::Str(s) => s.clone(),
        other => other.to_python(),
    }
}

/// Runner values for one config (docs/matrix.md, "Runner values and row order").
fn runner_values(
    runner: &str,
    runners: &Runners<'_>,
    filter: Option<&str>,
    include_label: bool,
) -> Vec<String> {
    let Some(f) = filter.filter(|f| !f.is_empty()) else {
        return vec![runner.to_string()];
    };
    let candidates = runners.nodes_for_label(runner);
    if !include_label {
        return candidates
            .iter()
            .filter(|n| n.contains(f))
            .map(|n| n.to_string())
            .collect();
    }
    let mut out: Vec<String> = Vec::new();
    let label = runner.contains(f).then_some(runner);
    for n in label.into_iter().chain(candidates.iter().copied()) {
        if n.contains(f) && !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn expand_config(
    entry: &ConfigEntry<'_>,
    runners: &Runners<'_>,
    opts: &Options,
    full_sweep: Option<&FullSweep>,
    concurrencies: Option<&[i64]>,
    seq_lens: Option<&[SeqLen]>,
    rows: &mut Vec<Object>,
    origins: &mut Vec<RowOrigin>,
) -> Result<(), Diagnostic> {
    let cx = Cx { entry };
    let config = entry.node;
    if config.as_map().is_none() {
        return Err(cx.malformed(config, "an entry must be a mapping"));
    }
    let multinode = entry.is_multinode();
    let runner_node = cx.req(config, "runner")?;
    let runner = runner_node.as_str().unwrap_or_default();
    let runner_list = runner_values(
        runner,
        runners,
        opts.runner_node_filter.as_deref(),
        full_sweep.is_none(),
    );
    if runner_list.is_empty() {
        return Ok(());
    }
    let wants = |t: ScenarioType| {
        opts.scenario_types
            .as_ref()
            .is_none_or(|ts| ts.is_empty() || ts.contains(&t))
    };
    let scenarios = cx.req(config, "scenarios")?;
    let x = Expansion {
        cx,
        runners,
        full_sweep,
        concurrencies,
        multinode,
        runner_list,
        node_allowed: full_sweep.is_none_or(|fs| {
            if multinode {
                fs.multi_node
            } else {
                fs.single_node
            }
        }),
        first: rows.len(),
    };
    if wants(ScenarioType::FixedSeqLen)
        && let Some(fixed) = get_some(scenarios, ScenarioType::FixedSeqLen.as_str())
    {
        let seq_filter: Option<Vec<(i64, i64)>> = seq_lens
            .filter(|s| !s.is_empty())
            .map(|s| s.iter().map(|x| x.lengths()).collect());
        x.fixed_seq_len(fixed, seq_filter.as_deref(), rows, origins)?;
    }
    if !x.node_allowed || !wants(ScenarioType::AgenticCoding) {
        return Ok(());
    }
    if let Some(agentic) = get_some(scenarios, ScenarioType::AgenticCoding.as_str()) {
        let list = agentic
            .as_seq()
            .ok_or_else(|| x.cx.malformed(agentic, "'agentic-coding' must be a list"))?;
        for scenario in list {
            for benchmark in x.search_space(scenario)? {
                agentic_rows(
                    &x.cx,
                    runners,
                    scenario,
                    benchmark,
                    full_sweep,
                    concurrencies,
                    &x.runner_list,
                    rows,
                )?;
                x.note(rows, benchmark, origins);
                x.within_budget(rows, benchmark)?;
            }
        }
    }
    Ok(())
}

/// What every scenario of one entry's expansion shares.
struct Expansion<'e, 'a> {
    cx: Cx<'e, 'a>,
    runners: &'e Runners<'a>,
    full_sweep: Option<&'e FullSweep>,
    concurrencies: Option<&'e [i64]>,
    multinode: bool,
    runner_list: Vec<String>,
    /// `full-sweep`'s `--single-node` / `--multi-node` admit the entry's node type.
    node_allowed: bool,
    /// Rows of the run before this entry's (the per-config budget counts from here).
    first: usize,
}

impl Expansion<'_, '_> {
    /// `matrix/too-many-points` once the entry or the run passes its budget, checked after
    /// every search-space row, so an expansion stops early instead of filling memory.
    fn within_budget(&self, rows: &[Object], benchmark: &Node) -> Result<(), Diagnostic> {
        let entry = self.cx.entry;
        let of_config = rows.len().saturating_sub(self.first);
        let (what, n, limit) = if of_config > MAX_POINTS_PER_CONFIG {
            (
                format!("master config '{}'", entry.key),
                of_config,
                MAX_POINTS_PER_CONFIG,
            )
        } else if rows.len() > MAX_POINTS_PER_RUN {
            ("this run".to_string(), rows.len(), MAX_POINTS_PER_RUN)
        } else {
            return Ok(());
        };
        Err(Diagnostic::error(
            codes::TOO_MANY_POINTS,
            format!(
                "{what} expands into more than {limit} sweep points ({n} by this search-space row); expansion stopped"
            ),
        )
        .at(entry.path(), benchmark.span)
        .with_help("narrow conc-list / conc-start..conc-end or split the config"))
    }

    /// Records the search-space row each new row came from.
    fn note(&self, rows: &[Object], benchmark: &Node, origins: &mut Vec<RowOrigin>) {
        let entry = self.cx.entry;
        while origins.len() < rows.len() {
            origins.push(RowOrigin {
                key: entry.key.to_string(),
                path: entry.path().to_path_buf(),
                span: benchmark.span,
            });
        }
    }

    /// A scenario block's `search-space` list.
    fn search_space<'n>(&self, block: &'n Node) -> Result<&'n [Node], Diagnostic> {
        let space = self.cx.req(block, "search-space")?;
        space
            .as_seq()
            .ok_or_else(|| self.cx.malformed(space, "'search-space' must be a list"))
    }

    /// The rows of the entry's `fixed-seq-len` scenarios (those of `seq_filter`'s lengths, when
    /// given).
    fn fixed_seq_len(
        &self,
        fixed: &Node,
        seq_filter: Option<&[(i64, i64)]>,
        rows: &mut Vec<Object>,
        origins: &mut Vec<RowOrigin>,
    ) -> Result<(), Diagnostic> {
        let cx = &self.cx;
        let seqs = fixed
            .as_seq()
            .ok_or_else(|| cx.malformed(fixed, "'fixed-seq-len' must be a list"))?;
        for sequence in seqs {
            let isl_node = cx.req(sequence, "isl")?;
            let osl_node = cx.req(sequence, "osl")?;
            if let Some(filter) = seq_filter {
                let pair = (isl_node.as_i64(), osl_node.as_i64());
                if !filter.iter().any(|(i, o)| pair == (Some(*i), Some(*o))) {
                    continue;
                }
            }
            for benchmark in self.search_space(sequence)? {
                if !self.node_allowed {
                    continue;
                }
                let capped_ep = match (self.full_sweep, self.multinode) {
                    (Some(fs), false) => match sweep_caps(cx, benchmark, fs)? {
                        SweepCap::Skip => continue,
                        SweepCap::Keep { capped_ep } => capped_ep,
                    },
                    _ => None,
                };
                let Some(values) = fixed_concurrencies(
                    cx,
                    benchmark,
                    self.multinode,
                    self.full_sweep,
                    self.concurrencies,
                )?
                else {
                    continue;
                };
                fixed_rows(
                    cx,
                    self.runners,
                    sequence,
                    benchmark,
                    capped_ep,
                    &values,
                    &self.runner_list,
                    rows,
                )?;
                self.note(rows, benchmark, origins);
                self.within_budget(rows, benchmark)?;
            }
        }
        Ok(())
    }
}

/// What `--max-tp` and `--max-ep` do to a single-node fixed-seq-len row.
enum SweepCap {
    Skip,
    /// `capped_ep`: the row's written `ep` lowered to `--max-ep` (`None`: `ep` as written, or
    /// the default 1 when none is).
    Keep {
        capped_ep: Option<i64>,
    },
}

fn sweep_caps(cx: &Cx<'_, '_>, benchmark: &Node, fs: &FullSweep) -> Result<SweepCap, Diagnostic> {
    let tp_node = cx.req(benchmark, "tp")?;
    if let Some(max_tp) = fs.max_tp
        && (max_tp <= 0 || cx.int(tp_node, "tp")? > max_tp)
    {
        return Ok(SweepCap::Skip);
    }
    let capped_ep = match fs.max_ep {
        None => None,
        Some(max_ep) if max_ep <= 0 => return Ok(SweepCap::Skip),
        Some(max_ep) => match get_some(benchmark, "ep") {
            Some(n) => Some(cx.int(n, "ep")?.min(max_ep)),
            None => None,
        },
    };
    Ok(SweepCap::Keep { capped_ep })
}

/// The concurrencies of a fixed-seq-len search-space row after the sweep's bounds and the
/// `--conc` filter; `None` skips the row (docs/matrix.md, "Concurrency ranges and filters").
fn fixed_concurrencies(
    cx: &Cx<'_, '_>,
    benchmark: &Node,
    multinode: bool,
    full_sweep: Option<&FullSweep>,
    concurrencies: Option<&[i64]>,
) -> Result<Option<Vec<i64>>, Diagnostic> {
    let range = |step: i64| -> Result<(i64, i64, i64), Diagnostic> {
        let s = cx.int(cx.req(benchmark, "conc-start")?, "conc-start")?;
        let e = cx.int(cx.req(benchmark, "conc-end")?, "conc-end")?;
        Ok((s, e, step))
    };
    let Some(fs) = full_sweep else {
        let values = match benchmark.get("conc-list") {
            Some(list) => cx.int_list(list, "conc-list")?,
            None => {
                let (s, e, st) = range(2)?;
                concurrency_range(s, e, st)
            }
        };
        return Ok(match concurrencies.filter(|c| !c.is_empty()) {
            Some(keep) => {
                let v: Vec<i64> = values.into_iter().filter(|c| keep.contains(c)).collect();
                (!v.is_empty()).then_some(v)
            }
            None => Some(values),
        });
    };
    let (minimum, maximum) = (fs.min_conc, fs.max_conc);
    let mut values = match benchmark.get("conc-list") {
        Some(list) if truthy(Some(list)) => cx.int_list(list, "conc-list")?,
        _ => {
            let (mut start, mut end, step) = range(fs.step_size)?;
            if !multinode {
                if let Some(lo) = minimum {
                    if lo <= 0 || end < lo {
                        return Ok(None);
                    }
                    start = start.max(lo);
                }
                if let Some(hi) = maximum {
                    if hi <= 0 {
                        return Ok(None);
                    }
                    start = start.min(hi);
                    end = end.min(hi);
                }
                return Ok(Some(concurrency_range(start, end, step)));
            }
            concurrency_range(start, end, step)
        }
    };
    if let Some(lo) = minimum {
        if lo <= 0 {
            return Ok(None);
        }
        values.retain(|c| *c >= lo);
        if values.is_empty() {
            return Ok(None);
        }
    }
    if let Some(hi) = maximum {
        if hi <= 0 {
            return Ok(None);
        }
        values.retain(|c| *c <= hi);
        if values.is_empty() {
            values.push(hi);
        }
    }
    Ok(Some(values))
}

/// A worker block with explicit `pp`/`dcp-size`/`pcp-size` (kept in place when written,
/// appended otherwise, as `{**worker, pp: …}` does).
fn worker_with_defaults(cx: &Cx<'_, '_>, worker: &Node) -> Result<Object, Diagnostic> {
    let Json::Object(mut o) = cx.json(worker)? else {
        return Err(cx.malformed(worker, "a worker block must be a mapping"));
    };
    for k in ["pp", "dcp-size", "pcp-size"] {
        let v = o.get(k).cloned().unwrap_or(Json::Int(1));
        o.set(k, v);
    }
    Ok(o)
}

/// `(prefill, decode)` for a multinode row: the disaggregated pair, or [Oct] the aggregate
/// `worker` as prefill plus a zero-worker decode copy (docs/matrix.md, "Multinode workers").
fn worker_pair(cx: &Cx<'_, '_>, benchmark: &Node) -> Result<(Object, Object), Diagnostic> {
    if let Some(worker) = get_some(benchmark, "worker")
        && benchmark.get("prefill").is_none()
    {
        let w = worker_with_defaults(cx, worker)?;
        let mut prefill = Object::new();
        prefill.put("num-worker", Json::Int(1));
        for (k, v) in w.iter() {
            prefill.set(k, v.clone());
        }
        let mut decode = Object::new();
        decode.put("num-worker", Json::Int(0));
        for (k, v) in w.iter() {
            if k != "num-worker" && k != "additional-settings" {
                decode.set(k, v.clone());
            }
        }
        return Ok((prefill, decode));
    }
    Ok((
        worker_with_defaults(cx, cx.req(benchmark, "prefill")?)?,
        worker_with_defaults(cx, cx.req(benchmark, "decode")?)?,
    ))
}

/// `router` / `kv-p2p-transfer`, row first, then the entry's top level.
fn component_metadata(
    cx: &Cx<'_, '_>,
    benchmark: &Node,
    row: &mut Object,
) -> Result<(), Diagnostic> {
    for field in ["router", "kv-p2p-transfer"] {
        let v = match benchmark.get(field) {
            Some(n) => n,
            None => match cx.entry.node.get(field) {
                Some(n) => n,
                None => continue,
            },
        };
        if !v.is_null() {
            row.set(field, cx.json(v)?);
        }
    }
    Ok(())
}

/// `srt-recipe` / `eval-srt-recipe` as written, or [Oct-newest] (with `srt-recipe-dir`) the
/// project-relative path `<recipes root>/<dir>/<file>` with the selector kept (SR3).
fn srt_fields(cx: &Cx<'_, '_>, benchmark: &Node, row: &mut Object) -> Result<(), Diagnostic> {
    let dir = cx.entry.recipe_dir();
    for field in ["srt-recipe", "eval-srt-recipe"] {
        if let Some(v) = get_some(benchmark, field) {
            match (dir, v.as_str()) {
                (Some(dir), Some(reference)) => {
                    row.set(field, Json::Str(dir.file_path(reference)));
                }
                _ => row.set(field, cx.json(v)?),
            }
        }
    }
    Ok(())
}

fn head(cx: &Cx<'_, '_>, runner: &str) -> Result<Object, Diagnostic> {
    let config = cx.entry.node;
    // Room for a whole row's keys (about 25): grown key by key, a row was reallocated four
    // times (docs/performance.md).
    let mut row = Object::with_capacity(32);
    for k in ["image", "model", "model-prefix", "precision", "framework"] {
        row.set(k, cx.str_field(config, k)?);
    }
    row.put("runner", Json::str(runner));
    Ok(row)
}

#[allow(clippy::too_many_arguments)]
fn fixed_rows(
    cx: &Cx<'_, '_>,
    runners: &Runners<'_>,
    sequence: &Node,
    benchmark: &Node,
    capped_ep: Option<i64>,
    values: &[i64],
    runner_list: &[String],
    rows: &mut Vec<Object>,
) -> Result<(), Diagnostic> {
    let config = cx.entry.node;
    let (multinode, disagg) = cx.multinode_and_disagg()?;
    let isl_node = cx.req(sequence, "isl")?;
    let osl_node = cx.req(sequence, "osl")?;
    let (isl, osl) = (cx.json(isl_node)?, cx.json(osl_node)?);
    let max_model_len = Json::Int(
        cx.int(isl_node, "isl")?
            .saturating_add(cx.int(osl_node, "osl")?)
            .saturating_add(256),
    );
    let require_power = truthy(sequence.get("require-power"));
    if require_power && (isl.as_i64(), osl.as_i64()) != (Some(8192), Some(1024)) {
        return Err(cx.err(
            sequence,
            codes::REQUIRE_POWER,
            "require-power rollout supports only fixed-sequence 8192/1024",
        ));
    }
    let model_prefix = cx.str_field(config, "model-prefix")?;
    let exp_name = Json::Str(format!(
        "{}_{}",
        py_str(&model_prefix),
        seq_len_name(&isl, &osl)
    ));
    let spec = match benchmark.get("spec-decoding") {
        Some(n) => cx.json(n)?,
        None => Json::str("none"),
    };
    let workers = if multinode {
        Some(worker_pair(cx, benchmark)?)
    } else {
        None
    };
    let opt = |k: &str, default: Json| -> Result<Json, Diagnostic> {
        match benchmark.get(k) {
            Some(n) => cx.json(n),
            None => Ok(default),
        }
    };
    let single = if multinode {
        None
    } else {
        let ep = match (capped_ep, get_some(benchmark, "ep")) {
            (Some(e), _) => Json::Int(e),
            (None, Some(n)) => cx.json(n)?,
            (None, None) => Json::Int(1),
        };
        let dp_attn = match get_some(benchmark, "dp-attn") {
            Some(n) => cx.json(n)?,
            None => Json::Bool(false),
        };
        Some((
            cx.json(cx.req(benchmark, "tp")?)?,
            opt("pp", Json::Int(1))?,
            opt("dcp-size", Json::Int(1))?,
            opt("pcp-size", Json::Int(1))?,
            ep,
            dp_attn,
        ))
    };
    let conc_points: Vec<Json> = if multinode {
        vec![Json::List(values.iter().map(|c| Json::Int(*c)).collect())]
    } else {
        values.iter().map(|c| Json::Int(*c)).collect()
    };
    for conc in conc_points {
        for runner in runner_list {
            let mut row = head(cx, runner)?;
            row.put("isl", isl.clone());
            row.put("osl", osl.clone());
            if require_power {
                row.put("require-power", Json::Bool(true));
            }
            if let Some((prefill, decode)) = &workers {
                row.put("spec-decoding", spec.clone());
                row.put("prefill", Json::Object(prefill.clone()));
                row.put("decode", Json::Object(decode.clone()));
                row.put("conc", conc.clone());
                row.put("max-model-len", max_model_len.clone());
            } else if let Some((tp, pp, dcp, pcp, ep, dp_attn)) = &single {
                row.put("tp", tp.clone());
                row.put("pp", pp.clone());
                row.put("dcp-size", dcp.clone());
                row.put("pcp-size", pcp.clone());
                row.put("conc", conc.clone());
                row.put("max-model-len", max_model_len.clone());
                row.put("ep", ep.clone());
                row.put("dp-attn", dp_attn.clone());
                row.put("spec-decoding", spec.clone());
            }
            srt_fields(cx, benchmark, &mut row)?;
            row.put("exp-name", exp_name.clone());
            row.put("disagg", disagg.clone());
            row.put("run-eval", Json::Bool(false));
            component_metadata(cx, benchmark, &mut row)?;
            if workers.is_some() {
                add_node_count(cx, benchmark, runners, &mut row)?;
            }
            rows.push(row);
        }
    }
    Ok(())
}

/// The offload part of an agentic exp-name.
fn offload_suffix(
    cx: &Cx<'_, '_>,
    node: &Node,
    kv: &Json,
    backend: Option<&Json>,
) -> Result<String, Diagnostic> {
    if kv.as_str() == Some("none") {
        return Ok("kvnone".into());
    }
    // Before #2096 the backend was named by a string (docs/config.md, "Rules carry their day").
    let name = backend
        .and_then(|b| match b {
            Json::Object(o) => o.get("name"),
            Json::Str(_) => Some(b),
            _ => None,
        })
        .ok_or_else(|| {
            cx.err(
                node,
                codes::KV_OFFLOAD_BACKEND,
                format!(
                    "kv-offloading '{}' needs a kv-offload-backend with a name",
                    py_str(kv)
                ),
            )
        })?;
    Ok(format!("kv{}-{}", py_str(kv), py_str(name)))
}

fn worker_tag(w: &Object, prefix: &str) -> String {
    let mut tag = format!(
        "{prefix}{}x{}",
        py_str(w.get("num-worker").unwrap_or(&Json::Null)),
        py_str(w.get("tp").unwrap_or(&Json::Null))
    );
    let ep = w.get("ep").cloned().unwrap_or(Json::Int(1));
    if ep != Json::Int(1) && ep != Json::Float(1.0) {
        tag.push_str(&format!("ep{}", py_str(&ep)));
    }
    if w.get("dp-attn").is_some_and(Json::truthy) {
        tag.push_str("dpa");
    }
    tag
}

#[allow(clippy::too_many_arguments)]
fn agentic_rows(
    cx: &Cx<'_, '_>,
    runners: &Runners<'_>,
    scenario: &Node,
    benchmark: &Node,
    full_sweep: Option<&FullSweep>,
    conc_filter: Option<&[i64]>,
    runner_list: &[String],
    rows: &mut Vec<Object>,
) -> Result<(), Diagnostic> {
    let config = cx.entry.node;
    let (multinode, disagg) = cx.multinode_and_disagg()?;
    let model_prefix = cx.str_field(config, "model-prefix")?;
    let runner = config
        .get("runner")
        .and_then(Node::as_str)
        .unwrap_or_default();
    let workers = if multinode {
        Some(worker_pair(cx, benchmark)?)
    } else {
        None
    };
    let kv = if multinode {
        match benchmark.get("kv-offloading") {
            Some(n) => cx.json(n)?,
            None => Json::str("none"),
        }
    } else {
        cx.json(cx.req(benchmark, "kv-offloading")?)?
    };
    let spec = match benchmark.get("spec-decoding") {
        Some(n) => cx.json(n)?,
        None => Json::str("none"),
    };
    let backend = match get_some(benchmark, "kv-offload-backend") {
        Some(n) => Some(cx.json(n)?),
        None => None,
    };
    let total_gb = agentic_dram(cx, runners, scenario, benchmark, runner, &kv)?;
    let values = agentic_concurrencies(cx, benchmark, full_sweep, conc_filter)?;
    if values.is_empty() {
        return Ok(());
    }

    // Single-node points are point-major, runner-minor; multinode runner-major (docs/matrix.md,
    // "Runner values and row order").
    let points: Vec<(&String, i64)> = if multinode {
        runner_list
            .iter()
            .flat_map(|r| values.iter().map(move |c| (r, *c)))
            .collect()
    } else {
        values
            .iter()
            .flat_map(|c| runner_list.iter().map(move |r| (r, *c)))
            .collect()
    };
    let single = if multinode {
        None
    } else {
        Some(single_parallelism(cx, benchmark)?)
    };
    let suffix = offload_suffix(cx, benchmark, &kv, backend.as_ref())?;
    let block = AgenticCommon {
        benchmark,
        multinode,
        disagg,
        model_prefix,
        workers,
        single,
        kv,
        spec,
        backend,
        total_gb,
        suffix,
    };
    for (runner_value, conc) in points {
        if let Some(row) = agentic_row(cx, runners, &block, runner_value, conc)? {
            rows.push(row);
        }
    }
    Ok(())
}

/// The concurrencies of an agentic search-space entry: its list (when non-empty) or its range
/// by the sweep's step, then the sweep's bounds and the concurrency filter.
fn agentic_concurrencies(
    cx: &Cx<'_, '_>,
    benchmark: &Node,
    full_sweep: Option<&FullSweep>,
    conc_filter: Option<&[i64]>,
) -> Result<Vec<i64>, Diagnostic> {
    let mut values = match benchmark.get("conc-list") {
        Some(list) if truthy(Some(list)) => cx.int_list(list, "conc-list")?,
        _ => {
            let s = cx.int(cx.req(benchmark, "conc-start")?, "conc-start")?;
            let e = cx.int(cx.req(benchmark, "conc-end")?, "conc-end")?;
            concurrency_range(s, e, full_sweep.map_or(2, |f| f.step_size))
        }
    };
    if let Some(fs) = full_sweep {
        if let Some(lo) = fs.min_conc {
            values.retain(|c| *c >= lo);
        }
        if let Some(hi) = fs.max_conc {
            values.retain(|c| *c <= hi);
        }
    }
    if let Some(keep) = conc_filter.filter(|k| !k.is_empty()) {
        values.retain(|c| keep.contains(c));
    }
    Ok(values)
}

/// A single-node agentic entry's parallelism, with upstream's defaults.
struct SingleParallelism {
    tp: Json,
    pp: Json,
    dcp: Json,
    pcp: Json,
    ep: Json,
    dp_attn: Json,
}

fn single_parallelism(cx: &Cx<'_, '_>, benchmark: &Node) -> Result<SingleParallelism, Diagnostic> {
    let opt = |k: &str| -> Result<Json, Diagnostic> {
        match benchmark.get(k) {
            Some(n) => cx.json(n),
            None => Ok(Json::Int(1)),
        }
    };
    Ok(SingleParallelism {
        tp: cx.json(cx.req(benchmark, "tp")?)?,
        pp: opt("pp")?,
        dcp: opt("dcp-size")?,
        pcp: opt("pcp-size")?,
        ep: match get_some(benchmark, "ep") {
            Some(n) => cx.json(n)?,
            None => Json::Int(1),
        },
        dp_attn: match get_some(benchmark, "dp-attn") {
            Some(n) => cx.json(n)?,
            None => Json::Bool(false),
        },
    })
}

/// What every row of one agentic search-space entry shares.
struct AgenticCommon<'n> {
    benchmark: &'n Node,
    multinode: bool,
    disagg: Json,
    model_prefix: Json,
    workers: Option<(Object, Object)>,
    single: Option<SingleParallelism>,
    kv: Json,
    spec: Json,
    backend: Option<Json>,
    total_gb: i64,
    suffix: String,
}

/// One agentic row for a runner and a concurrency; `None` when the entry has neither a worker
/// pair nor single-node parallelism.
fn agentic_row(
    cx: &Cx<'_, '_>,
    runners: &Runners<'_>,
    b: &AgenticCommon<'_>,
    runner_value: &str,
    conc: i64,
) -> Result<Option<Object>, Diagnostic> {
    let benchmark = b.benchmark;
    let mut row = head(cx, runner_value)?;
    let exp_name;
    if let Some((prefill, decode)) = &b.workers {
        row.put("spec-decoding", b.spec.clone());
        row.put("prefill", Json::Object(prefill.clone()));
        row.put("decode", Json::Object(decode.clone()));
        row.put("conc", Json::List(vec![Json::Int(conc)]));
        let tail = if b.kv.as_str() == Some("none") {
            String::new()
        } else {
            format!("_{}", b.suffix)
        };
        exp_name = format!(
            "{}_{}_{}_conc{conc}{tail}",
            py_str(&b.model_prefix),
            worker_tag(prefill, "p"),
            worker_tag(decode, "d")
        );
    } else if let Some(s) = &b.single {
        row.put("tp", s.tp.clone());
        row.put("pp", s.pp.clone());
        row.put("dcp-size", s.dcp.clone());
        row.put("pcp-size", s.pcp.clone());
        row.put("ep", s.ep.clone());
        row.put("dp-attn", s.dp_attn.clone());
        row.put("spec-decoding", b.spec.clone());
        row.put("conc", Json::Int(conc));
        let spec_tail = if b.spec.as_str() == Some("none") {
            String::new()
        } else {
            format!("_spec-{}", py_str(&b.spec))
        };
        exp_name = format!(
            "{}_tp{}_conc{conc}_{}{spec_tail}",
            py_str(&b.model_prefix),
            py_str(&s.tp),
            b.suffix
        );
    } else {
        return Ok(None);
    }
    srt_fields(cx, benchmark, &mut row)?;
    row.put("kv-offloading", b.kv.clone());
    row.put("total-cpu-dram-gb", Json::Int(b.total_gb));
    row.put("duration", Json::Int(AGENTIC_DURATION_SECONDS));
    row.put("exp-name", Json::Str(exp_name));
    if b.multinode {
        row.put("disagg", b.disagg.clone());
    }
    row.put(
        key::SCENARIO_TYPE,
        Json::str(ScenarioType::AgenticCoding.as_str()),
    );
    if let Some(backend) = &b.backend {
        row.put("kv-offload-backend", backend.clone());
    }
    component_metadata(cx, benchmark, &mut row)?;
    if b.multinode {
        add_node_count(cx, benchmark, runners, &mut row)?;
    }
    Ok(Some(row))
}

/// [Oct] `node-count`, only for the October inventory shape (the August generator has no such
/// key; docs/matrix.md, "Node count").
fn add_node_count(
    cx: &Cx<'_, '_>,
    benchmark: &Node,
    runners: &Runners<'_>,
    row: &mut Object,
) -> Result<(), Diagnostic> {
    if !runners.oct {
        return Ok(());
    }
    let num_nodes = match get_some(benchmark, "num-nodes") {
        Some(n) => Some(cx.int(n, "num-nodes")?),
        None => None,
    };
    let n = crate::nodes::node_count(row, num_nodes, runners)
        .map_err(|m| cx.err(benchmark, codes::NODE_COUNT, m))?;
    row.put("node-count", Json::Int(n));
    Ok(())
}

/// The DRAM budget in GB, 0 unless `kv-offloading: dram` (docs/matrix.md, "Agentic DRAM
/// budget").
fn agentic_dram(
    cx: &Cx<'_, '_>,
    runners: &Runners<'_>,
    scenario: &Node,
    benchmark: &Node,
    runner: &str,
    kv: &Json,
) -> Result<i64, Diagnostic> {
    if kv.as_str() != Some("dram") {
        return Ok(0);
    }
    let gen_err = |msg: String| cx.err(benchmark, codes::AGENTIC_DRAM, msg);
    let available = runners
        .hardware_int(runner, "available-cpu-dram-mib")
        .map_err(gen_err)?;
    let util_node = cx.req(scenario, "dram-utilization")?;
    let gpus_per_node = runners
        .hardware_int(runner, "gpus-per-node")
        .map_err(gen_err)?;
    let node_gpus = |w: &Node| -> Result<i64, Diagnostic> {
        let tp = cx.int(cx.req(w, "tp")?, "tp")?;
        let pp = match w.get("pp") {
            Some(n) => cx.int(n, "pp")?,
            None => 1,
        };
        let pcp = match w.get("pcp-size") {
            Some(n) => cx.int(n, "pcp-size")?,
            None => 1,
        };
        Ok(tp.saturating_mul(pp).saturating_mul(pcp))
    };
    let worker = get_some(benchmark, "worker").or_else(|| get_some(benchmark, "prefill"));
    let gpus = if let Some(w) = worker {
        let r = node_gpus(w)?;
        if r > gpus_per_node {
            if gpus_per_node == 0 || r % gpus_per_node != 0 {
                return Err(gen_err(format!(
                    "worker tp*pp*pcp-size={r} spans multiple nodes but is not a multiple of gpus-per-node={gpus_per_node}"
                )));
            }
            gpus_per_node
        } else {
            if r == 0 || gpus_per_node % r != 0 {
                return Err(gen_err(format!(
                    "worker tp*pp*pcp-size={r} does not divide gpus-per-node={gpus_per_node} evenly"
                )));
            }
            r
        }
    } else {
        let g = node_gpus(benchmark)?;
        if g > gpus_per_node {
            let tp = cx.json(cx.req(benchmark, "tp")?)?;
            let pp = benchmark
                .get("pp")
                .map_or(Ok(Json::Int(1)), |n| cx.json(n))?;
            let pcp = benchmark
                .get("pcp-size")
                .map_or(Ok(Json::Int(1)), |n| cx.json(n))?;
            return Err(gen_err(format!(
                "tp={} with pp={} and pcp-size={} requires {g} GPUs and exceeds gpus-per-node={gpus_per_node} for runner '{runner}'",
                py_str(&tp),
                py_str(&pp),
                py_str(&pcp)
            )));
        }
        g
    };
    dram_budget_gb(available, util_node, gpus, gpus_per_node)
        .map_err(|m| cx.err(util_node, codes::AGENTIC_DRAM, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_match_the_spec_table() {
        assert_eq!(concurrency_range(4, 128, 2), [4, 8, 16, 32, 64, 128]);
        assert_eq!(concurrency_range(1, 24, 2), [1, 2, 4, 8, 16, 24]);
        assert_eq!(concurrency_range(3, 10, 2), [3, 6, 10]);
        assert_eq!(concurrency_range(4, 128, 4), [4, 16, 64, 128]);
        assert_eq!(concurrency_range(1, 8, 2), [1, 2, 4, 8]);
        assert_eq!(concurrency_range(8, 4, 2), Vec::<i64>::new());
        assert_eq!(concurrency_range(0, 8, 2), [0]);
        assert_eq!(concurrency_range(-2, 8, 2), [-2]);
    }

    proptest::proptest! {
        /// Range expansion: starts at start, ends at end, strictly increasing, never above end,
        /// and each value is the previous times the step unless clamped to the end.
        #[test]
        fn range_expansion_invariants(start in 1i64..5000, len in 0i64..100_000, step in 2i64..9) {
            let end = start + len;
            let v = concurrency_range(start, end, step);
            proptest::prop_assert_eq!(v.first().copied(), Some(start));
            proptest::prop_assert_eq!(v.last().copied(), Some(end));
            for w in v.windows(2) {
                proptest::prop_assert!(w[0] < w[1]);
                proptest::prop_assert!(w[1] == w[0] * step || w[1] == end);
            }
        }
    }

    #[test]
    fn seq_len_names() {
        assert_eq!(seq_len_name(&Json::Int(1024), &Json::Int(1024)), "1k1k");
        assert_eq!(seq_len_name(&Json::Int(8192), &Json::Int(1024)), "8k1k");
        assert_eq!(
            seq_len_name(&Json::Int(1024), &Json::Int(8192)),
            "1024_8192"
        );
    }

    #[test]
    fn python_repr_of_strings() {
        assert_eq!(py_repr_str("not-a-runner"), "'not-a-runner'");
        assert_eq!(py_repr_str("it's"), "\"it's\"");
    }
}
