//! Rules on one master-config entry (docs/config.md, "Diagnostic codes"): fields, concurrency (C1–C5), topology (T1, H1, W1,
//! A1–A5), KV offload (K1, K2), scope (M1–M3), cross rules (X1–X4), R0 and the reference grammar
//! (SR1, SR2). X5 and the on-disk recipe checks (SR3, SR4) need other inputs and are applied by
//! the caller with what this module returns.

use crate::model::*;
use crate::schema::{Ctx, describe, idx, join, key_span, present};
use crate::{Dialect, RecipeDir, ScenarioType, codes};
use infx_report::Span;
use infx_yaml::{Mapping, Node, Value};

const SPEC_DECODING: &[&str] = &["mtp", "draft_model", "none"];
const KV_OFFLOADING: &[&str] = &["none", "dram"];

/// What the entry checker found beyond diagnostics.
pub(crate) struct EntryResult {
    pub typed: Option<MasterEntry>,
    /// The runner value node, for X5.
    pub runner: Option<(String, Span)>,
    /// [Oct-newest] resolved references to check on disk (SR3/SR4).
    pub refs: Vec<RecipeRef>,
}

pub(crate) fn check_entry(ctx: &mut Ctx, file: usize, key_node: &Node, node: &Node) -> EntryResult {
    let mut res = EntryResult {
        typed: None,
        runner: None,
        refs: Vec::new(),
    };
    let start = ctx.diags.len();
    let Some(m) = ctx.map(node, "") else {
        return res;
    };
    let anchor = key_node.span;
    let multinode = multinode_field(ctx, m, anchor);
    ctx.unknown_keys(m, &entry_allowed(ctx.dialect, multinode), "");

    let image = ctx.req_str(m, "image", anchor, "", false);
    let model = ctx.req_str(m, "model", anchor, "", false);
    let model_prefix = ctx.req_str(m, "model-prefix", anchor, "", false);
    let precision = ctx.req_str(m, "precision", anchor, "", false);
    let framework = ctx.req_str(m, "framework", anchor, "", false);
    let runner = ctx.req_str(m, "runner", anchor, "", false);
    if let (Some(r), Some(n)) = (runner, m.get("runner")) {
        res.runner = Some((r.to_string(), n.span));
    }
    let disagg = ctx.bool_default(m, "disagg", "", false).unwrap_or(false);
    if !multinode && disagg {
        ctx.error_help(
            codes::X1,
            key_span(m, "disagg", anchor),
            "disagg",
            "disagg requires multinode: a single-node entry must have disagg false",
            "remove 'disagg: true' or make the entry multinode",
        );
    }
    let router = m
        .get("router")
        .filter(|n| !n.is_null())
        .and_then(|n| component(ctx, n, "router", true));
    let kv_p2p = if multinode {
        ctx.opt_str(m, "kv-p2p-transfer", "", true).ok().flatten()
    } else {
        None
    };
    let kind = EntryKind {
        multinode,
        disagg,
        llmd: multinode && framework == Some("llmd-vllm"),
    };
    let recipe_dir = if ctx.dialect == Dialect::OctNewest {
        recipe_dir_field(ctx, m, anchor, &kind)
    } else {
        None
    };

    let mut raw_rows: Vec<RawRow> = Vec::new();
    let (fixed, agentic) = scenario_blocks(ctx, m, anchor, multinode, &mut raw_rows);
    let mut typed_rows: Vec<Option<Row>> = Vec::with_capacity(raw_rows.len());
    for rr in &raw_rows {
        let row = check_row(ctx, rr, &kind, recipe_dir.as_deref());
        if let Some(r) = &row {
            for rf in [&r.srt_recipe, &r.eval_srt_recipe].into_iter().flatten() {
                if rf.resolved.is_some() {
                    res.refs.push(rf.clone());
                }
            }
        }
        typed_rows.push(row);
    }

    scope_rules(
        ctx,
        m,
        anchor,
        &kind,
        runner,
        &raw_rows,
        !agentic.is_empty(),
    );

    if ctx.diags.len() != start {
        return res;
    }
    let (fixed_seq_len, agentic_coding) = assemble_scenarios(fixed, agentic, typed_rows);
    let s = |v: Option<&str>| v.unwrap_or_default().to_string();
    res.typed = Some(MasterEntry {
        key: ctx.key.to_string(),
        file,
        key_span: anchor,
        image: s(image),
        model: s(model),
        model_prefix: s(model_prefix),
        precision: s(precision),
        framework: s(framework),
        runner: s(runner),
        multinode,
        disagg,
        router,
        kv_p2p_transfer: kv_p2p.map(str::to_string),
        srt_recipe_dir: recipe_dir,
        fixed_seq_len,
        agentic_coding,
    });
    res
}

/// The entry's `multinode`, which selects the multinode model; reports it missing or not a
/// boolean.
fn multinode_field(ctx: &mut Ctx, m: &Mapping, anchor: Span) -> bool {
    let multinode_node = m.get("multinode");
    let multinode = crate::truthy(multinode_node);
    match multinode_node {
        None => ctx.missing(anchor, "", "multinode"),
        Some(n) if n.as_bool().is_none() => {
            ctx.type_error(n, "multinode", "a boolean (true or false)")
        }
        Some(_) => {}
    }
    multinode
}

/// The keys an entry may have, by dialect and `multinode`.
fn entry_allowed(dialect: Dialect, multinode: bool) -> Vec<&'static str> {
    let mut allowed = vec![
        "image",
        "model",
        "model-prefix",
        "precision",
        "framework",
        "runner",
        "multinode",
        "disagg",
        "router",
        "scenarios",
    ];
    if multinode {
        allowed.push("kv-p2p-transfer");
    }
    if dialect == Dialect::OctNewest {
        allowed.push("srt-recipe-dir");
    }
    allowed
}

/// [Oct-newest] the entry's `srt-recipe-dir` (SR1) and whether it must be there (X4).
fn recipe_dir_field(ctx: &mut Ctx, m: &Mapping, anchor: Span, kind: &EntryKind) -> Option<String> {
    match m.get("srt-recipe-dir") {
        Some(n) if kind.llmd => ctx.error_help(
            codes::X4,
            n.span,
            "srt-recipe-dir",
            "multinode llmd-vllm entries keep CONFIG_FILE and must not use srt-recipe-dir",
            "remove srt-recipe-dir",
        ),
        Some(n) => {
            let s = ctx.str_value(n, "srt-recipe-dir", true)?;
            match normalized_rel_path(s) {
                Ok(()) => return Some(s.to_string()),
                Err(why) => ctx.error_help(
                    codes::SR1,
                    n.span,
                    "srt-recipe-dir",
                    format!("'{s}' is not a normalized relative path: {why}"),
                    "write a relative POSIX path without '..', ':', './', '//' or a trailing '/'",
                ),
            }
        }
        None if !kind.llmd => ctx.error_help(
            codes::X4,
            anchor,
            "",
            "srt-recipe-dir is required (every srt-slurm entry names its recipe directory)",
            if kind.multinode {
                "add 'srt-recipe-dir: <dir under benchmarks/multi_node/srt-slurm-recipes>'"
            } else {
                "add 'srt-recipe-dir: <dir under benchmarks/single_node/srt-slurm-recipes>'"
            },
        ),
        None => {}
    }
    None
}

type ScenarioBlocks = (Vec<Option<BlockInfo>>, Vec<Option<BlockInfo>>);

/// The `scenarios` mapping: its fixed-seq-len and agentic-coding blocks, with their rows
/// queued in `raw_rows` in scenario order.
fn scenario_blocks<'n>(
    ctx: &mut Ctx,
    m: &'n Mapping,
    anchor: Span,
    multinode: bool,
    raw_rows: &mut Vec<RawRow<'n>>,
) -> ScenarioBlocks {
    let mut fixed = Vec::new();
    let mut agentic = Vec::new();
    let Some(sn) = m.get("scenarios") else {
        ctx.missing(anchor, "", "scenarios");
        return (fixed, agentic);
    };
    let Some(sm) = ctx.map(sn, "scenarios") else {
        return (fixed, agentic);
    };
    ctx.unknown_keys(sm, &ScenarioType::NAMES, "scenarios");
    let f = list_field(ctx, sm, ScenarioType::FixedSeqLen.as_str(), "scenarios");
    let a = list_field(ctx, sm, ScenarioType::AgenticCoding.as_str(), "scenarios");
    if f.is_none_or(|l| l.is_empty()) && a.is_none_or(|l| l.is_empty()) {
        ctx.error_help(
            codes::SCENARIOS,
            sn.span,
            "scenarios",
            "At least one scenario type must be specified (a non-empty fixed-seq-len or agentic-coding list)",
            "add a fixed-seq-len or agentic-coding element with a search-space",
        );
    }
    for (i, el) in f.unwrap_or(&[]).iter().enumerate() {
        let at = idx("scenarios.fixed-seq-len", i);
        fixed.push(fixed_block(ctx, el, &at, multinode, raw_rows));
    }
    for (i, el) in a.unwrap_or(&[]).iter().enumerate() {
        let at = idx("scenarios.agentic-coding", i);
        agentic.push(agentic_block(ctx, el, &at, raw_rows));
    }
    (fixed, agentic)
}

/// The typed scenario blocks of an entry whose every row passed: rows go back to their blocks
/// in scenario order.
fn assemble_scenarios(
    fixed: Vec<Option<BlockInfo>>,
    agentic: Vec<Option<BlockInfo>>,
    typed_rows: Vec<Option<Row>>,
) -> (Vec<FixedSeqLen>, Vec<AgenticBlock>) {
    let mut rows = typed_rows.into_iter();
    let mut fixed_out = Vec::new();
    for b in fixed.into_iter().flatten() {
        let n = b.rows;
        fixed_out.push(FixedSeqLen {
            span: b.span,
            isl: b.isl,
            osl: b.osl,
            require_power: b.require_power,
            search_space: rows.by_ref().take(n).flatten().collect(),
        });
    }
    let mut agentic_out = Vec::new();
    for b in agentic.into_iter().flatten() {
        let n = b.rows;
        agentic_out.push(AgenticBlock {
            span: b.span,
            dram_utilization: b.dram,
            search_space: rows.by_ref().take(n).flatten().collect(),
        });
    }
    (fixed_out, agentic_out)
}

struct EntryKind {
    multinode: bool,
    disagg: bool,
    llmd: bool,
}

/// A row still as YAML, with what it needs from its block.
pub(crate) struct RawRow<'n> {
    node: &'n Node,
    at: String,
    agentic: bool,
    block_has_dram_util: bool,
}

struct BlockInfo {
    span: Span,
    rows: usize,
    isl: i64,
    osl: i64,
    require_power: bool,
    dram: Option<(String, f64)>,
}

/// An optional list field; `null` is absent.
fn list_field<'n>(ctx: &mut Ctx, m: &'n Mapping, field: &str, at: &str) -> Option<&'n [Node]> {
    let n = m.get(field)?;
    if n.is_null() {
        return None;
    }
    ctx.seq(n, &join(at, field))
}

/// Queues the rows of a scenario block's `search-space` for the row checks; returns how many.
fn search_space_rows<'n>(
    ctx: &mut Ctx,
    el: &Node,
    m: &'n Mapping,
    at: &str,
    agentic: bool,
    block_has_dram_util: bool,
    rows: &mut Vec<RawRow<'n>>,
) -> usize {
    let ss_at = join(at, "search-space");
    let ss = match m.get("search-space") {
        None => {
            ctx.missing(el.span, at, "search-space");
            None
        }
        Some(n) => ctx.seq(n, &ss_at),
    };
    let list = ss.unwrap_or(&[]);
    for (i, r) in list.iter().enumerate() {
        rows.push(RawRow {
            node: r,
            at: idx(&ss_at, i),
            agentic,
            block_has_dram_util,
        });
    }
    list.len()
}

fn fixed_block<'n>(
    ctx: &mut Ctx,
    el: &'n Node,
    at: &str,
    multinode: bool,
    rows: &mut Vec<RawRow<'n>>,
) -> Option<BlockInfo> {
    let m = ctx.map(el, at)?;
    let before = ctx.diags.len();
    let mut allowed = vec!["isl", "osl", "search-space"];
    let power_ok = match ctx.dialect {
        Dialect::Aug => false,
        Dialect::Oct => true,
        Dialect::OctNewest => multinode,
    };
    if power_ok {
        allowed.push("require-power");
    }
    ctx.unknown_keys(m, &allowed, at);
    let isl = ctx.req_int(m, "isl", el.span, at, false);
    let osl = ctx.req_int(m, "osl", el.span, at, false);
    let require_power = if power_ok {
        ctx.bool_default(m, "require-power", at, false)
            .unwrap_or(false)
    } else {
        false
    };
    if let (true, Some(i), Some(o)) = (require_power, isl, osl)
        && (i, o) != (8192, 1024)
    {
        ctx.error_help(
            codes::REQUIRE_POWER,
            key_span(m, "require-power", el.span),
            at,
            format!("require-power rollout supports only fixed-sequence 8192/1024, not {i}/{o}"),
            "remove require-power or use isl 8192 / osl 1024",
        );
    }
    let count = search_space_rows(ctx, el, m, at, false, false, rows);
    (ctx.diags.len() == before).then(|| BlockInfo {
        span: el.span,
        rows: count,
        isl: isl.unwrap_or_default(),
        osl: osl.unwrap_or_default(),
        require_power,
        dram: None,
    })
}

fn agentic_block<'n>(
    ctx: &mut Ctx,
    el: &'n Node,
    at: &str,
    rows: &mut Vec<RawRow<'n>>,
) -> Option<BlockInfo> {
    let m = ctx.map(el, at)?;
    let before = ctx.diags.len();
    ctx.unknown_keys(m, &["search-space", "dram-utilization"], at);
    let mut dram = None;
    if let Some(n) = m.get("dram-utilization").filter(|n| !n.is_null()) {
        let at_d = join(at, "dram-utilization");
        match &n.value {
            Value::Float(f) if f.value > 0.0 && f.value <= 1.0 => {
                dram = Some((f.text.to_string(), f.value))
            }
            Value::Int(1) => dram = Some(("1".to_string(), 1.0)),
            Value::Float(_) | Value::Int(_) => ctx.error_help(
                codes::VALUE,
                n.span,
                &at_d,
                format!(
                    "must satisfy 0 < dram-utilization <= 1, found {}",
                    describe(n)
                ),
                "use a fraction such as 0.80",
            ),
            _ => ctx.type_error(n, &at_d, "a number between 0 and 1"),
        }
    }
    let has_dram_util = present(m, "dram-utilization");
    let count = search_space_rows(ctx, el, m, at, true, has_dram_util, rows);
    (ctx.diags.len() == before).then_some(BlockInfo {
        span: el.span,
        rows: count,
        isl: 0,
        osl: 0,
        require_power: false,
        dram,
    })
}

const CONC_KEYS: &[&str] = &["conc-start", "conc-end", "conc-list"];

/// The keys a row may have, by dialect and kind; the order is the one the unknown-key help
/// lists.
fn row_allowed(dialect: Dialect, agentic: bool, multinode: bool) -> Vec<&'static str> {
    let oct = dialect != Dialect::Aug;
    let workers = agentic || multinode;
    let mut v: Vec<&'static str> = Vec::new();
    if agentic || !multinode {
        v.extend(["tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn"]);
    }
    v.push("spec-decoding");
    if workers {
        v.extend(["prefill", "decode"]);
    }
    if agentic {
        v.extend(["kv-offloading", "kv-offload-backend"]);
    }
    v.push("router");
    if workers {
        v.push("kv-p2p-transfer");
        if oct {
            v.extend(["worker", "num-nodes", "srt-recipe", "eval-srt-recipe"]);
        }
        if dialect == Dialect::OctNewest {
            v.push("power");
        }
    } else if oct {
        v.extend(["srt-recipe", "eval-srt-recipe"]);
    }
    v.extend(CONC_KEYS);
    v
}

fn check_row(
    ctx: &mut Ctx,
    rr: &RawRow,
    kind: &EntryKind,
    recipe_dir: Option<&str>,
) -> Option<Row> {
    let at = rr.at.as_str();
    let m = ctx.map(rr.node, at)?;
    let span = rr.node.span;
    let before = ctx.diags.len();
    let dialect = ctx.dialect;
    ctx.unknown_keys(m, &row_allowed(dialect, rr.agentic, kind.multinode), at);

    let spec = match m.get("spec-decoding") {
        None => Some("none"),
        Some(n) => match n.as_str() {
            Some(v) if SPEC_DECODING.contains(&v) => Some(v),
            _ => ctx.choice(n, &join(at, "spec-decoding"), SPEC_DECODING),
        },
    };
    let router = m
        .get("router")
        .filter(|n| !n.is_null())
        .and_then(|n| component(ctx, n, &join(at, "router"), true));
    let kv_p2p = ctx.opt_str(m, "kv-p2p-transfer", at, true).ok().flatten();
    let conc = conc_fields(ctx, m, at);

    let (topology, topo_ok) = row_topology(ctx, m, rr, kind);
    let (kv_off, backend) = if rr.agentic {
        offload_fields(ctx, m, at)
    } else {
        (None, None)
    };
    let power = if dialect == Dialect::OctNewest && m.contains_key("power") {
        ctx.bool_default(m, "power", at, false).unwrap_or(false)
    } else {
        false
    };
    let refs = row_recipe_refs(ctx, m, rr, kind, recipe_dir);

    if ctx.diags.len() != before || !topo_ok {
        return None;
    }

    // Model-level rules (pydantic runs them only on rows whose fields parsed).
    let offload = Offload {
        kv_off,
        backend: backend.as_ref(),
        power,
    };
    topology_model_rules(ctx, m, rr, topology.as_ref(), &offload);
    if rr.agentic {
        offload_model_rules(ctx, m, rr, &offload);
    }
    if ctx.diags.len() != before {
        return None;
    }
    let [srt_recipe, eval_srt_recipe] = refs;
    Some(Row {
        span,
        topology: topology?,
        spec_decoding: spec?.to_string(),
        conc: conc?,
        router,
        kv_p2p_transfer: kv_p2p.map(str::to_string),
        kv_offloading: kv_off.map(str::to_string),
        kv_offload_backend: backend,
        srt_recipe,
        eval_srt_recipe,
        power,
    })
}

/// A single-node row's (or a `tp` agentic row's) parallelism fields.
fn single_topology(ctx: &mut Ctx, m: &Mapping, span: Span, at: &str) -> Option<Topology> {
    let tp = ctx.req_int(m, "tp", span, at, false);
    let pp = ctx.strict_pos_int(m, "pp", at, 1).ok();
    let dcp = ctx.strict_pos_int(m, "dcp-size", at, 1).ok();
    let pcp = ctx.strict_pos_int(m, "pcp-size", at, 1).ok();
    let ep = ctx.opt_int(m, "ep", at, false);
    let dp = ctx.opt_bool(m, "dp-attn", at);
    Some(Topology::Single {
        tp: tp?,
        pp: pp?,
        dcp_size: dcp?,
        pcp_size: pcp?,
        ep: ep.ok()?,
        dp_attn: dp.ok()?,
    })
}

/// A multinode or agentic row as the topology rules read it: which topology keys it has.
struct RowShape<'a> {
    m: &'a Mapping,
    at: &'a str,
    span: Span,
    llmd: bool,
    has_tp: bool,
    has_worker: bool,
    has_p: bool,
    has_d: bool,
}

impl RowShape<'_> {
    /// The worker block `name` of the row, when present.
    fn worker(&self, ctx: &mut Ctx, name: &str, aggregate: bool) -> Option<Worker> {
        let n = self.m.get(name)?;
        check_worker(ctx, n, &join(self.at, name), aggregate, self.llmd)
    }

    /// `num-nodes` of an aggregated row.
    fn num_nodes(&self, ctx: &mut Ctx) -> Option<Option<i64>> {
        ctx.opt_int(self.m, "num-nodes", self.at, true).ok()
    }

    /// A multinode fixed-seq-len row: prefill/decode ([Aug]) or worker xor both (W1, [Oct]).
    fn multinode_fixed(&self, ctx: &mut Ctx) -> (Option<Topology>, bool) {
        let (at, span) = (self.at, self.span);
        let p = self.worker(ctx, "prefill", false);
        let d = self.worker(ctx, "decode", false);
        let w = if ctx.dialect != Dialect::Aug {
            self.worker(ctx, "worker", true)
        } else {
            None
        };
        if ctx.dialect == Dialect::Aug {
            if !self.has_p {
                ctx.missing(span, at, "prefill");
            }
            if !self.has_d {
                ctx.missing(span, at, "decode");
            }
            (disagg_topology(p, d), true)
        } else if self.has_worker == (self.has_p || self.has_d) || (self.has_p != self.has_d) {
            ctx.error_help(
                codes::W1,
                span,
                at,
                "must specify either worker or both prefill and decode",
                "keep 'worker' (aggregated) or both 'prefill' and 'decode' (disaggregated)",
            );
            (None, false)
        } else if self.has_worker {
            (aggregated_topology(w, self.num_nodes(ctx)), true)
        } else {
            (disagg_topology(p, d), true)
        }
    }

    /// An agentic row: exactly one topology (A1); parallelism in the worker blocks (A4).
    fn agentic(&self, ctx: &mut Ctx) -> (Option<Topology>, bool) {
        let (m, at, span) = (self.m, self.at, self.span);
        let n_topos = self.has_tp as u8 + self.has_worker as u8 + (self.has_p || self.has_d) as u8;
        if n_topos != 1 || (self.has_p != self.has_d) {
            let msg = if ctx.dialect == Dialect::Aug {
                "Agentic search-space entries must specify either tp or both prefill and decode"
            } else {
                "Agentic search-space entries must specify exactly one of tp, worker, or both prefill and decode"
            };
            ctx.error_help(
                codes::A1,
                span,
                at,
                msg,
                "keep exactly one topology on the row",
            );
            return (None, false);
        }
        if self.has_tp {
            return (single_topology(ctx, m, span, at), true);
        }
        // Upstream types the row's `ep` and `dp-attn` on every agentic row, whatever its
        // topology (docs/config.md, "Random differential").
        let _ = ctx.opt_int(m, "ep", at, false);
        let _ = ctx.opt_bool(m, "dp-attn", at);
        for k in ["pp", "dcp-size", "pcp-size"] {
            if m.contains_key(k) {
                ctx.error_help(
                    codes::A4,
                    key_span(m, k, span),
                    at,
                    format!("Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', 'pcp-size' (found '{k}')"),
                    format!("move '{k}' into the prefill/decode or worker blocks"),
                );
            }
        }
        let topology = if self.has_worker {
            let w = self.worker(ctx, "worker", true);
            aggregated_topology(w, self.num_nodes(ctx))
        } else {
            let p = self.worker(ctx, "prefill", false);
            let d = self.worker(ctx, "decode", false);
            disagg_topology(p, d)
        };
        (topology, true)
    }
}

fn aggregated_topology(worker: Option<Worker>, num_nodes: Option<Option<i64>>) -> Option<Topology> {
    worker
        .zip(num_nodes)
        .map(|(worker, num_nodes)| Topology::Aggregated { worker, num_nodes })
}

fn disagg_topology(prefill: Option<Worker>, decode: Option<Worker>) -> Option<Topology> {
    prefill
        .zip(decode)
        .map(|(prefill, decode)| Topology::Disagg { prefill, decode })
}

/// The row's topology, by entry kind and scenario; `false` when the topology fields conflict
/// (W1, A1), which suppresses the model-level rules.
fn row_topology(
    ctx: &mut Ctx,
    m: &Mapping,
    rr: &RawRow,
    kind: &EntryKind,
) -> (Option<Topology>, bool) {
    let (at, span) = (rr.at.as_str(), rr.node.span);
    if !rr.agentic && !kind.multinode {
        return (single_topology(ctx, m, span, at), true);
    }
    let shape = RowShape {
        m,
        at,
        span,
        llmd: kind.llmd,
        has_tp: present(m, "tp"),
        has_worker: present(m, "worker"),
        has_p: present(m, "prefill"),
        has_d: present(m, "decode"),
    };
    if rr.agentic {
        shape.agentic(ctx)
    } else {
        shape.multinode_fixed(ctx)
    }
}

/// An agentic row's `kv-offloading` and `kv-offload-backend` (`null` is absent).
fn offload_fields<'m>(
    ctx: &mut Ctx,
    m: &'m Mapping,
    at: &str,
) -> (Option<&'m str>, Option<Component>) {
    let mut kv_off = None;
    let mut backend = None;
    if let Some(n) = m.get("kv-offloading").filter(|n| !n.is_null()) {
        kv_off = ctx.choice(n, &join(at, "kv-offloading"), KV_OFFLOADING);
    }
    if let Some(n) = m.get("kv-offload-backend").filter(|n| !n.is_null()) {
        backend = match n.as_str() {
            // Before #2096 the backend was named by a string (LoadedConfigs::kv_metadata).
            Some(name) if !ctx.kv_metadata => Some(Component {
                name: name.to_string(),
                version: None,
            }),
            _ => component(ctx, n, &join(at, "kv-offload-backend"), false),
        };
    }
    (kv_off, backend)
}

/// The row's `srt-recipe` and `eval-srt-recipe` references (SR2, X4), resolved under the
/// entry's `srt-recipe-dir` in [Oct-newest].
fn row_recipe_refs(
    ctx: &mut Ctx,
    m: &Mapping,
    rr: &RawRow,
    kind: &EntryKind,
    recipe_dir: Option<&str>,
) -> [Option<RecipeRef>; 2] {
    let at = rr.at.as_str();
    let mut refs = [None, None];
    for (slot, field) in ["srt-recipe", "eval-srt-recipe"].into_iter().enumerate() {
        let Some(n) = m.get(field) else { continue };
        let at_f = join(at, field);
        let Some(s) = ctx.str_value(n, &at_f, true) else {
            continue;
        };
        refs[slot] = if ctx.dialect == Dialect::OctNewest {
            newest_recipe_ref(ctx, n, s, field, &at_f, kind, recipe_dir)
        } else {
            let (file, sel) = match s.split_once(':') {
                Some((f, sel)) => (f.to_string(), Some(sel.to_string())),
                None => (s.to_string(), None),
            };
            Some(RecipeRef {
                span: n.span,
                raw: s.to_string(),
                file,
                selector: sel,
                resolved: None,
            })
        };
    }
    if ctx.dialect == Dialect::OctNewest && !kind.llmd && !m.contains_key("srt-recipe") {
        ctx.error_help(
            codes::X4,
            rr.node.span,
            at,
            "every search-space entry needs srt-recipe: <file>[:<selector>] under the entry's srt-recipe-dir",
            "add 'srt-recipe: <file>[:<selector>]'",
        );
    }
    refs
}

/// One [Oct-newest] recipe reference `s` in `field`: where it may appear (X4), its grammar
/// (SR2) and its path under the entry's `srt-recipe-dir`.
fn newest_recipe_ref(
    ctx: &mut Ctx,
    n: &Node,
    s: &str,
    field: &str,
    at_f: &str,
    kind: &EntryKind,
    recipe_dir: Option<&str>,
) -> Option<RecipeRef> {
    if kind.llmd {
        ctx.error_help(
            codes::X4,
            n.span,
            at_f,
            format!("multinode llmd-vllm entries keep CONFIG_FILE and must not use {field}"),
            format!("remove {field}"),
        );
        return None;
    }
    if field == "eval-srt-recipe" && !kind.multinode {
        ctx.error_help(
            codes::X4,
            n.span,
            at_f,
            "eval-srt-recipe is allowed only on multinode configs",
            "remove eval-srt-recipe (single-node rows evaluate with their srt-recipe)",
        );
        return None;
    }
    match parse_ref(s) {
        Ok((file, sel)) => Some(RecipeRef {
            span: n.span,
            raw: s.to_string(),
            resolved: recipe_dir.map(|dir| {
                RecipeDir {
                    multinode: kind.multinode,
                    dir,
                }
                .file_path(&file)
            }),
            file,
            selector: sel,
        }),
        Err(why) => {
            ctx.error_help(
                codes::SR2,
                n.span,
                at_f,
                format!("'{s}' is not a valid recipe reference: {why}"),
                "write <file>[:<selector>] with selector base, override_<name> or zip_override_<name>[<i>]",
            );
            None
        }
    }
}

/// What the model-level offload rules read from a row that parsed.
struct Offload<'a> {
    kv_off: Option<&'a str>,
    backend: Option<&'a Component>,
    power: bool,
}

/// T1 on a single-node topology, A2/A3 on a single-node agentic row, H1/A5 on a disaggregated
/// one.
fn topology_model_rules(
    ctx: &mut Ctx,
    m: &Mapping,
    rr: &RawRow,
    topology: Option<&Topology>,
    offload: &Offload,
) {
    let (at, span) = (rr.at.as_str(), rr.node.span);
    if let Some(Topology::Single { tp, dcp_size, .. }) = topology {
        t1(ctx, *tp, *dcp_size, span, at);
        if rr.agentic {
            if offload.kv_off.is_none() {
                ctx.error_help(
                    codes::A2,
                    span,
                    at,
                    "Single-node agentic search-space entries must specify kv-offloading",
                    "add 'kv-offloading: none' (or 'dram' with a kv-offload-backend)",
                );
            }
            if offload.power {
                ctx.error_help(
                    codes::A3,
                    key_span(m, "power", span),
                    at,
                    "Only multinode entries measure DCGM power",
                    "remove 'power: true' from the single-node row",
                );
            }
        }
    }
    if let Some(Topology::Disagg { prefill, decode }) = topology
        && prefill.hardware.is_some() != decode.hardware.is_some()
    {
        let code = if rr.agentic { codes::A5 } else { codes::H1 };
        ctx.error_help(
            code,
            span,
            at,
            "'hardware' must be specified for both 'prefill' and 'decode', or neither",
            "add 'hardware' to the other worker block or remove it",
        );
    }
}

/// K1 (backend without offloading, or dram without a backend) and K2 (dram needs the block's
/// dram-utilization) on an agentic row.
fn offload_model_rules(ctx: &mut Ctx, m: &Mapping, rr: &RawRow, offload: &Offload) {
    let (at, span) = (rr.at.as_str(), rr.node.span);
    let kv_span = key_span(m, "kv-offloading", span);
    match (offload.kv_off, offload.backend) {
        (None, Some(_)) => ctx.error_help(
            codes::K1,
            key_span(m, "kv-offload-backend", span),
            at,
            "kv-offload-backend requires kv-offloading",
            "add 'kv-offloading: dram' or remove the backend",
        ),
        (Some("none"), Some(_)) => ctx.error_help(
            codes::K1,
            key_span(m, "kv-offload-backend", span),
            at,
            "kv-offload-backend can only be set when kv-offloading is not 'none'",
            "remove kv-offload-backend or set 'kv-offloading: dram'",
        ),
        (Some("dram"), None) => ctx.error_help(
            codes::K1,
            kv_span,
            at,
            "kv-offload-backend is required when kv-offloading is 'dram'",
            "add 'kv-offload-backend: {name: <backend>}'",
        ),
        _ => {}
    }
    if offload.kv_off == Some("dram") && !rr.block_has_dram_util {
        ctx.error_help(
            codes::K2,
            kv_span,
            at,
            "kv-offloading='dram' requires dram-utilization with runner hardware metadata",
            "add 'dram-utilization: 0.80' (0 < u <= 1) to this agentic-coding element",
        );
    }
}

fn t1(ctx: &mut Ctx, tp: i64, dcp: i64, span: Span, at: &str) {
    if dcp > 0 && tp % dcp != 0 {
        ctx.error_help(
            codes::T1,
            span,
            at,
            format!("'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})"),
            "choose a dcp-size that divides tp",
        );
    }
}

/// The C3 just reported, folded into the `unknown-key` finding of a key that is a misspelt
/// concurrency key (`conc-lsit`): the typo is the cause, the missing list its consequence
/// (docs/architecture.md, "One finding per cause").
fn fold_into_misspelt_conc_key(ctx: &mut Ctx, m: &Mapping) {
    let typo = m.iter_nodes().find_map(|(k, _)| {
        let name = k.as_str()?;
        (!CONC_KEYS.contains(&name))
            .then(|| infx_report::nearest(name, CONC_KEYS.iter().copied()))
            .flatten()
            .map(|_| k.span)
    });
    let Some(typo) = typo else {
        return;
    };
    let Some(c3) = ctx.diags.pop() else {
        return;
    };
    match ctx
        .diags
        .iter_mut()
        .rev()
        .find(|d| d.code == codes::UNKNOWN_KEY && d.span == Some(typo))
    {
        Some(cause) => cause.fold_in(c3),
        None => ctx.diags.push(c3),
    }
}

/// C1–C5.
fn conc_fields(ctx: &mut Ctx, m: &Mapping, at: &str) -> Option<Conc> {
    let before = ctx.diags.len();
    let start = ctx.opt_int(m, "conc-start", at, false).ok()?;
    let end = ctx.opt_int(m, "conc-end", at, false).ok()?;
    let mut list: Option<Vec<(i64, Span)>> = None;
    if let Some(n) = m.get("conc-list").filter(|n| !n.is_null()) {
        let at_l = join(at, "conc-list");
        let items = ctx.seq(n, &at_l)?;
        let mut v = Vec::with_capacity(items.len());
        for (i, it) in items.iter().enumerate() {
            if let Some(x) = ctx.int_value(it, &idx(&at_l, i), false) {
                v.push((x, it.span));
            }
        }
        list = Some(v);
    }
    if ctx.diags.len() != before {
        return None;
    }
    let anchor = CONC_KEYS
        .iter()
        .find_map(|k| m.get_entry(k).map(|(k, _)| k.span));
    let row_span = anchor.unwrap_or_default();
    let has_range = start.is_some() && end.is_some();
    let has_list = list.as_ref().is_some_and(|l| !l.is_empty());
    if has_range && has_list {
        ctx.error_help(
            codes::C2,
            key_span(m, "conc-list", row_span),
            at,
            "cannot specify both conc-list and conc-start/conc-end; use either a list or a range",
            "remove conc-list or conc-start/conc-end",
        );
        return None;
    }
    if !has_range && !has_list {
        let span = anchor.unwrap_or_else(|| {
            m.iter_nodes()
                .next()
                .map(|(k, _)| k.span)
                .unwrap_or_default()
        });
        ctx.error_help(
            codes::C3,
            span,
            at,
            "must specify either conc-list or both conc-start and conc-end",
            "add a non-empty conc-list, or both conc-start and conc-end",
        );
        fold_into_misspelt_conc_key(ctx, m);
        return None;
    }
    if let (Some(s), Some(e)) = (start, end) {
        if s <= 0 || e <= 0 {
            let k = if s <= 0 { "conc-start" } else { "conc-end" };
            ctx.error_help(
                codes::C4,
                m.get(k).map(|n| n.span).unwrap_or(row_span),
                at,
                format!("'conc-start' and 'conc-end' must be greater than 0 (found {s}..{e})"),
                "use positive concurrencies",
            );
            return None;
        }
        if s > e {
            ctx.error_help(
                codes::C4,
                m.get("conc-start").map(|n| n.span).unwrap_or(row_span),
                at,
                format!("'conc-start' ({s}) must be <= 'conc-end' ({e})"),
                "swap conc-start and conc-end",
            );
            return None;
        }
        return Some(Conc::Range { start: s, end: e });
    }
    let list = list.unwrap_or_default();
    if let Some((bad, sp)) = list.iter().find(|(x, _)| *x <= 0) {
        ctx.error_help(
            codes::C5,
            *sp,
            at,
            format!("'conc-list' entries must be greater than 0 (found {bad})"),
            "remove the non-positive concurrency",
        );
        return None;
    }
    Some(Conc::List(list.into_iter().map(|(x, _)| x).collect()))
}

fn check_worker(ctx: &mut Ctx, n: &Node, at: &str, aggregate: bool, llmd: bool) -> Option<Worker> {
    let m = ctx.map(n, at)?;
    let before = ctx.diags.len();
    ctx.unknown_keys(
        m,
        &[
            "num-worker",
            "tp",
            "pp",
            "dcp-size",
            "pcp-size",
            "ep",
            "dp-attn",
            "hardware",
            "additional-settings",
        ],
        at,
    );
    let num_worker = if aggregate {
        ctx.strict_pos_int(m, "num-worker", at, 1).ok()
    } else {
        ctx.req_int(m, "num-worker", n.span, at, false)
    };
    let tp = ctx.req_int(m, "tp", n.span, at, false);
    let pp = ctx.strict_pos_int(m, "pp", at, 1).ok();
    let dcp = ctx.strict_pos_int(m, "dcp-size", at, 1).ok();
    let pcp = ctx.strict_pos_int(m, "pcp-size", at, 1).ok();
    let ep = ctx.req_int(m, "ep", n.span, at, false);
    let dp_attn = match m.get("dp-attn") {
        None => {
            ctx.missing(n.span, at, "dp-attn");
            None
        }
        Some(v) => ctx.bool_value(v, &join(at, "dp-attn")),
    };
    let hardware = ctx
        .opt_str(m, "hardware", at, true)
        .ok()
        .flatten()
        .map(str::to_string);
    let mut settings = Vec::new();
    if let Some(sn) = m.get("additional-settings").filter(|x| !x.is_null()) {
        let at_s = join(at, "additional-settings");
        if let Some(items) = ctx.seq(sn, &at_s) {
            for (i, it) in items.iter().enumerate() {
                let at_i = idx(&at_s, i);
                let Some(s) = ctx.str_value(it, &at_i, false) else {
                    continue;
                };
                r0(ctx, s, it.span, &at_i, llmd);
                settings.push(s.to_string());
            }
        }
    }
    if ctx.diags.len() != before {
        return None;
    }
    let w = Worker {
        num_worker: num_worker?,
        tp: tp?,
        pp: pp?,
        dcp_size: dcp?,
        pcp_size: pcp?,
        ep: ep?,
        dp_attn: dp_attn?,
        hardware,
        additional_settings: settings,
    };
    t1(ctx, w.tp, w.dcp_size, n.span, at);
    (ctx.diags.len() == before).then_some(w)
}

/// R0: recipe selection belongs in `srt-recipe`, not in worker settings ([Oct]).
fn r0(ctx: &mut Ctx, s: &str, span: Span, at: &str, llmd: bool) {
    let name = s.split('=').next().unwrap_or(s).trim();
    let forbidden: &[&str] = match ctx.dialect {
        Dialect::Aug => &[],
        Dialect::Oct => &[
            "CONFIG_FILE",
            "EVAL_CONFIG_FILE",
            "SRT_RECIPE",
            "EVAL_SRT_RECIPE",
        ],
        Dialect::OctNewest if llmd => &[],
        Dialect::OctNewest => &["CONFIG_FILE", "EVAL_CONFIG_FILE"],
    };
    if forbidden.contains(&name) {
        let field = if name.starts_with("EVAL") {
            "eval-srt-recipe"
        } else {
            "srt-recipe"
        };
        ctx.error_help(
            codes::R0,
            span,
            at,
            format!("'{name}' is not allowed in additional-settings: recipe selection belongs in {field}"),
            format!("remove this setting and write the recipe as '{field}: <file>[:<selector>]' on the row"),
        );
    }
}

/// `router` (version required) / `kv-offload-backend` (version optional).
fn component(ctx: &mut Ctx, n: &Node, at: &str, version_required: bool) -> Option<Component> {
    let m = ctx.map(n, at)?;
    let before = ctx.diags.len();
    ctx.unknown_keys(m, &["name", "version"], at);
    let name = ctx.req_str(m, "name", n.span, at, true);
    let version = if version_required {
        ctx.req_str(m, "version", n.span, at, true)
    } else {
        ctx.opt_str(m, "version", at, true).ok().flatten()
    };
    if let Some(v) = version
        && v.starts_with("image:")
    {
        ctx.error_help(
            codes::COMPONENT_VERSION,
            m.get("version").map(|x| x.span).unwrap_or(n.span),
            &join(at, "version"),
            "component version must be a release, package version, or source commit, not an image reference",
            "write the component's own version (e.g. \"0.3.2\"); the image is the entry's 'image'",
        );
    }
    (ctx.diags.len() == before).then(|| Component {
        name: name.unwrap_or_default().to_string(),
        version: version.map(str::to_string),
    })
}

/// M1–M3, X2, X3 over every row of the entry.
fn scope_rules(
    ctx: &mut Ctx,
    m: &Mapping,
    anchor: Span,
    kind: &EntryKind,
    runner: Option<&str>,
    rows: &[RawRow],
    has_agentic: bool,
) {
    let row_maps: Vec<(&Mapping, &RawRow)> = rows
        .iter()
        .filter_map(|r| r.node.as_map().map(|m| (m, r)))
        .collect();
    for field in ["router", "kv-p2p-transfer"] {
        if present(m, field)
            && let Some((_, r)) = row_maps.iter().find(|(rm, _)| present(rm, field))
        {
            ctx.error_help(
                codes::M1,
                key_span(m, field, anchor),
                "",
                format!(
                    "{field} must be declared either at the top level or in search-space entries, not both (also set at {})",
                    r.at
                ),
                format!("remove the top-level {field} or the per-row ones"),
            );
        }
    }
    if !kind.multinode {
        for (rm, r) in &row_maps {
            if r.agentic && present(rm, "kv-p2p-transfer") {
                ctx.error_help(
                    codes::M2,
                    key_span(rm, "kv-p2p-transfer", r.node.span),
                    &r.at,
                    "kv-p2p-transfer is only valid when multinode=true",
                    "remove kv-p2p-transfer from the single-node row",
                );
            }
        }
    }
    if kind.multinode
        && kind.disagg
        && ctx.kv_metadata
        && !present(m, "kv-p2p-transfer")
        && (rows.is_empty()
            || row_maps.len() != rows.len()
            || row_maps
                .iter()
                .any(|(rm, _)| !present(rm, "kv-p2p-transfer")))
    {
        ctx.error_help(
            codes::M3,
            key_span(m, "disagg", anchor),
            "disagg",
            "disagg=true requires kv-p2p-transfer at the top level or in every search-space entry",
            "add 'kv-p2p-transfer: <name>' (e.g. nixl) at the top level",
        );
    }
    if has_agentic
        && let Some(r) = runner
        && !r.starts_with("cluster:")
    {
        ctx.error_help(
            codes::X2,
            m.get("runner").map(|n| n.span).unwrap_or(anchor),
            "runner",
            format!(
                "Agentic master configs must use a 'cluster:<name>' runner so every point runs on one exact hardware fleet (found '{r}')"
            ),
            "use a cluster:<name> label from runners.yaml",
        );
    }
    if ctx.dialect == Dialect::Aug {
        return;
    }
    // X3: topology scope per row.
    for (rm, r) in &row_maps {
        let (p, d, w, nn, tp) = (
            present(rm, "prefill"),
            present(rm, "decode"),
            present(rm, "worker"),
            present(rm, "num-nodes"),
            present(rm, "tp"),
        );
        let msg = if !kind.multinode {
            (r.agentic && (p || d || w || nn)).then_some(
                "single-node entries may not declare worker, prefill, decode or num-nodes on a row",
            )
        } else if kind.disagg {
            (!(p && d) || w || nn || tp)
                .then_some("disagg=true rows need prefill and decode, and no worker or num-nodes")
        } else if !w || p || d || tp {
            Some("disagg=false rows need exactly one worker block (no prefill/decode)")
        } else if !nn {
            Some("disagg=false requires num-nodes in every search-space entry")
        } else {
            None
        };
        if let Some(msg) = msg {
            ctx.error_help(
                codes::X3,
                r.node.span,
                &r.at,
                msg,
                "make the row's topology match the entry's multinode/disagg",
            );
        }
    }
}

/// SR1: a normalized relative POSIX path.
pub(crate) fn normalized_rel_path(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        return Err("it is empty");
    }
    if s.starts_with('/') {
        return Err("it is absolute");
    }
    if s.contains(':') {
        return Err("it contains ':'");
    }
    if s.contains('\\') {
        return Err("it contains '\\'");
    }
    if s.ends_with('/') {
        return Err("it ends with '/'");
    }
    for comp in s.split('/') {
        match comp {
            "" => return Err("it contains '//'"),
            "." => return Err("it contains a '.' component"),
            ".." => return Err("it contains a '..' component"),
            _ => {}
        }
    }
    Ok(())
}

/// SR2: `<file>[:<selector>]`, split at the first `:`.
pub(crate) fn parse_ref(s: &str) -> Result<(String, Option<String>), String> {
    let (file, sel) = match s.split_once(':') {
        Some((f, sel)) => (f, Some(sel)),
        None => (s, None),
    };
    normalized_rel_path(file).map_err(|why| format!("file part '{file}': {why}"))?;
    if let Some(sel) = sel
        && !valid_selector(sel)
    {
        return Err(format!(
            "selector '{sel}' is not base, override_<name> or zip_override_<name>[<i>]"
        ));
    }
    Ok((file.to_string(), sel.map(str::to_string)))
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

pub(crate) fn valid_selector(sel: &str) -> bool {
    if sel == "base" {
        return true;
    }
    if let Some(rest) = sel.strip_prefix("zip_override_") {
        return split_zip(rest).is_some();
    }
    sel.strip_prefix("override_").is_some_and(is_name)
}

/// `name[i]` → (name, i).
pub(crate) fn split_zip(rest: &str) -> Option<(&str, usize)> {
    let inner = rest.strip_suffix(']')?;
    let (name, i) = inner.split_once('[')?;
    if !is_name(name) || i.is_empty() || !i.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((name, i.parse().ok()?))
}
