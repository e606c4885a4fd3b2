//! The row → recipe-variant binding, shown: for each config in view, every generated point with
//! the recipe file and variant it selects and the settings that tell points apart (tp, ep,
//! dp-attn, conc, and the variant's per-point args). Shared by `validate` and `matrix --bind`.

use infx_matrix::bind::{RecipeSet, bind, load_recipes_in, row_recipe};
use infx_matrix::{Json, Object, RowOrigin};
use infx_recipe::{ExpandOptions, Lane, RecipeFile, Variant};
use infx_report::Diagnostic;
use infx_yaml::{DocIndex, Node, Value};
use std::collections::HashMap;
use std::path::Path;

/// One generated point and the variant it selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingRecord {
    pub config_key: String,
    pub scenario: String,
    pub tp: String,
    pub ep: String,
    pub dp_attn: String,
    pub conc: String,
    /// Tree-relative recipe file.
    pub recipe: String,
    /// The selected variant (`override_tp2_c4`), or the reference's selector for multinode.
    pub variant: String,
    /// Args that differ between the file's variants, `name=value`, in recipe order.
    pub args: Vec<String>,
}

impl BindingRecord {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "record": "binding",
            "config-key": self.config_key,
            "scenario": self.scenario,
            "tp": self.tp,
            "ep": self.ep,
            "dp-attn": self.dp_attn,
            "conc": self.conc,
            "recipe": self.recipe,
            "variant": self.variant,
            "args": self.args,
        })
    }
}

/// Binds every throughput point of `points` (the validate matrix step's findings) and returns
/// the records of the points whose config is in `shown`.
pub fn bind_and_record(
    points: &[(Object, RowOrigin)],
    root: &Path,
    parsed: &DocIndex<'_>,
    shown: &[String],
) -> (Vec<Diagnostic>, Vec<BindingRecord>) {
    let recipes = load_recipes_in(points.iter().map(|(r, _)| r), root, parsed);
    let from = RecipeSource {
        set: &recipes,
        root,
        parsed,
    };
    let report = bind(points, &recipes);
    let bound: HashMap<usize, &str> = report
        .bindings
        .iter()
        .map(|(i, l)| (*i, l.as_str()))
        .collect();
    let mut args_of: HashMap<(String, Option<Lane>), HashMap<String, Vec<String>>> = HashMap::new();
    let mut records = Vec::new();
    for (i, (row, origin)) in points.iter().enumerate() {
        if !shown.contains(&origin.key) || row.get("eval-only").is_some_and(Json::truthy) {
            continue;
        }
        let Some(parsed) = row_recipe(row) else {
            continue;
        };
        let parsed = match parsed {
            Ok(r) => r,
            // The binder reports the reference; the record shows it as written.
            Err(_) => {
                records.push(record_of(row, origin, reference_text(row), "-", Vec::new()));
                continue;
            }
        };
        let recipe = parsed.path.clone();
        // A standalone (CONFIG_FILE) recipe is not composed with a lane block.
        let lane = (!parsed.standalone).then(|| {
            Lane::of(
                row.get_str("scenario-type") == Some("agentic-coding"),
                row.contains("prefill"),
            )
        });
        let variant = match bound.get(&i) {
            Some(l) => l.to_string(),
            // The srt-slurm checkout's file: nothing in this tree to bind (docs/matrix.md).
            None if recipes.is_outside(&recipe) => NOT_IN_TREE.to_string(),
            None => parsed
                .selector
                .as_ref()
                .map_or_else(|| "-".to_string(), |s| s.to_string()),
        };
        let args = args_of
            .entry((recipe.clone(), lane))
            .or_insert_with(|| per_point_args(&from, &recipe, lane))
            .get(&variant)
            .cloned()
            .unwrap_or_default();
        records.push(record_of(row, origin, recipe, &variant, args));
    }
    let diagnostics = fold_lane_faults(report.diagnostics, &report.lane_faults);
    (explain_root_causes(diagnostics, &from), records)
}

/// One finding per lane-block cause (docs/matrix.md, binding): a value of the lane block that
/// fails every candidate variant of a point is one `matrix/lane-block-value` error at that
/// value; the `binding-none` errors of those points and the `unused-variant` warnings of their
/// candidate variants (unused only because of it) are folded into it as notes.
fn fold_lane_faults(
    diags: Vec<Diagnostic>,
    faults: &[infx_matrix::bind::LaneFault],
) -> Vec<Diagnostic> {
    if faults.is_empty() {
        return diags;
    }
    // (block, field, span) → the faults it causes, in point order.
    let mut causes: Vec<(&infx_matrix::bind::LaneFault, Vec<usize>)> = Vec::new();
    for f in faults {
        match causes.iter_mut().find(|(c, _)| {
            (c.block.as_path(), c.field.as_str(), c.span)
                == (f.block.as_path(), f.field.as_str(), f.span)
        }) {
            Some((_, points)) => points.push(f.diagnostic),
            None => causes.push((f, vec![f.diagnostic])),
        }
    }
    let mut slots: Vec<Option<Diagnostic>> = diags.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for (first, points) in causes {
        let reason = first
            .reason
            .split_once(": ")
            .map_or(first.reason.as_str(), |(_, r)| r);
        let n = points.len();
        let mut cause = Diagnostic::error(
            infx_matrix::codes::LANE_BLOCK_VALUE,
            format!(
                "`{}` of this lane block makes {n} point{} match no recipe variant: {reason}",
                first.field,
                if n == 1 { "" } else { "s" }
            ),
        )
        .at(&first.block, first.span)
        .with_help(format!(
            "fix `{}` here: no fragment of the lane sets it, so every variant inherits this value",
            first.field
        ));
        let unused: Vec<(&str, &str)> = faults
            .iter()
            .filter(|f| points.contains(&f.diagnostic))
            .flat_map(|f| f.candidates.iter().map(|l| (f.recipe.as_str(), l.as_str())))
            .collect();
        for i in &points {
            if let Some(d) = slots.get_mut(*i).and_then(Option::take) {
                cause = cause.fold(d);
            }
        }
        for slot in slots.iter_mut() {
            let is_consequence = slot.as_ref().is_some_and(|d| {
                unused
                    .iter()
                    .any(|(recipe, label)| is_unused_warning(d, recipe, label))
            });
            if is_consequence && let Some(d) = slot.take() {
                cause = cause.fold(d);
            }
        }
        out.push(cause);
    }
    let mut rest: Vec<Diagnostic> = slots.into_iter().flatten().collect();
    rest.extend(out);
    rest
}

/// The variant column of a `CONFIG_FILE` point whose recipe is not in the tree.
pub const NOT_IN_TREE: &str = "(not in tree)";

/// A row's recipe reference as written, for a record whose reference does not parse.
fn reference_text(row: &Object) -> String {
    row.get_str("srt-recipe")
        .map_or_else(|| "(unreadable CONFIG_FILE)".to_string(), str::to_string)
}

fn record_of(
    row: &Object,
    origin: &RowOrigin,
    recipe: String,
    variant: &str,
    args: Vec<String>,
) -> BindingRecord {
    let text = |k: &str| row.get(k).map_or_else(|| "-".to_string(), json_text);
    BindingRecord {
        config_key: origin.key.clone(),
        scenario: row.get_str("scenario-type").map_or_else(
            || format!("{}/{}", text("isl"), text("osl")),
            str::to_string,
        ),
        tp: text("tp"),
        ep: text("ep"),
        dp_attn: text("dp-attn"),
        conc: text("conc"),
        recipe,
        variant: variant.to_string(),
        args,
    }
}

/// The recipe files of one binding run: those the binder loaded, else (a path only a
/// finding names) read like the binder reads them.
struct RecipeSource<'a> {
    set: &'a RecipeSet,
    root: &'a Path,
    parsed: &'a DocIndex<'a>,
}

impl RecipeSource<'_> {
    fn file(&self, rel: &str) -> Option<std::borrow::Cow<'_, RecipeFile>> {
        match self.set.file(rel) {
            Some(loaded) => loaded.as_ref().ok().map(std::borrow::Cow::Borrowed),
            None => infx_recipe::load_recipe_in(self.root, rel, self.parsed)
                .ok()
                .map(std::borrow::Cow::Owned),
        }
    }
    fn lane(&self, lane: Lane) -> Option<std::borrow::Cow<'_, RecipeFile>> {
        match self.set.lane(lane) {
            Some(loaded) => loaded.as_ref().ok().map(std::borrow::Cow::Borrowed),
            None => infx_recipe::load_recipe_in(self.root, lane.block_path(), self.parsed)
                .ok()
                .map(std::borrow::Cow::Owned),
        }
    }
}

/// One ambiguity or no-match finding, read back: the recipe, the variants the point matched
/// (notes `<label>: matches`) and the point's conc.
struct BindingFault {
    recipe: String,
    matched: Vec<String>,
    conc: Option<String>,
}

fn read_fault(d: &Diagnostic) -> Option<BindingFault> {
    let (after, end) = match d.code {
        infx_matrix::codes::BINDING_AMBIGUOUS => (" variants of ", " ("),
        infx_matrix::codes::BINDING_NONE => (" matches no variant of ", ": "),
        _ => return None,
    };
    let start = d.message.find(after)? + after.len();
    let rest = &d.message[start..];
    let recipe = rest[..rest.find(end)?].to_string();
    let matched = d
        .notes
        .iter()
        .filter_map(|n| n.strip_suffix(": matches").map(str::to_string))
        .collect();
    let conc = d.message.find(", conc: ").map(|i| {
        d.message[i + ", conc: ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect()
    });
    Some(BindingFault {
        recipe,
        matched,
        conc,
    })
}

/// The CONC a variant was written for, from its name (`override_tp2_c24` → 24).
fn conc_in_name(label: &str) -> Option<String> {
    let digits: String = label
        .rsplit_once("_c")?
        .1
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!digits.is_empty() && label.ends_with(&digits)).then_some(digits)
}

/// Names the root cause of binding findings in a recipe instead of their symptoms
/// (docs/matrix.md, binding): a variant that pins no `benchmark.env.CONC` matches every point
/// its parallelism fits, and two variants with the same CONC both match that point; each is
/// one error at the variant's recipe line, replacing the ambiguity errors it explains (and the
/// no-match error of the point the copied variant's name says it serves). A variant some
/// point matches, even ambiguously, is not "unused".
fn explain_root_causes(diags: Vec<Diagnostic>, from: &RecipeSource<'_>) -> Vec<Diagnostic> {
    let faults: Vec<Option<BindingFault>> = diags.iter().map(read_fault).collect();
    let mut matched_somewhere: std::collections::HashSet<(String, String)> = Default::default();
    for f in faults.iter().flatten() {
        for l in &f.matched {
            matched_somewhere.insert((f.recipe.clone(), l.clone()));
        }
    }
    let mut drop = vec![false; diags.len()];
    let mut causes = Vec::new();
    let mut recipes: Vec<&str> = faults
        .iter()
        .flatten()
        .filter(|f| f.matched.len() > 1)
        .map(|f| f.recipe.as_str())
        .collect();
    recipes.sort_unstable();
    recipes.dedup();
    for rel in recipes {
        let Some(file) = from.file(rel) else {
            continue;
        };
        let Some(map) = file.root.as_map() else {
            continue;
        };
        let conc_node = |label: &str| {
            map.get(label)
                .and_then(|v| v.get("benchmark"))
                .and_then(|b| b.get("env"))
                .and_then(|e| e.get("CONC"))
        };
        let in_file = |label: &str| map.get_entry(label).is_some();
        // Ambiguities of this recipe, by index.
        let amb: Vec<(usize, &BindingFault)> = faults
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (i, f)))
            .filter(|(_, f)| f.recipe == rel && f.matched.len() > 1)
            .collect();
        // A variant without CONC whose siblings pin theirs.
        let mut unpinned: Vec<&str> = amb
            .iter()
            .flat_map(|(_, f)| f.matched.iter().map(String::as_str))
            .filter(|l| in_file(l) && conc_node(l).is_none())
            .collect();
        unpinned.sort_unstable();
        unpinned.dedup();
        for label in unpinned {
            let explained: Vec<usize> = amb
                .iter()
                .filter(|(_, f)| f.matched.iter().any(|m| m == label))
                .map(|(i, _)| *i)
                .collect();
            let concs: Vec<String> = explained
                .iter()
                .filter_map(|i| faults[*i].as_ref().and_then(|f| f.conc.clone()))
                .collect();
            let span = map.get_entry(label).map(|(k, _)| k.span);
            let d = variant_without_conc(rel, label, &concs, span);
            causes.push(d);
            for i in explained {
                drop[i] = true;
            }
        }
        // Two variants with the same CONC.
        for (i, f) in &amb {
            if drop[*i] || f.matched.len() != 2 {
                continue;
            }
            let (a, b) = (&f.matched[0], &f.matched[1]);
            let text = |l: &str| {
                conc_node(l).and_then(|n| {
                    n.as_str()
                        .map(str::to_string)
                        .or_else(|| n.as_i64().map(|v| v.to_string()))
                })
            };
            let (Some(ca), Some(cb)) = (text(a), text(b)) else {
                continue;
            };
            if ca != cb {
                continue;
            }
            // The copy is the one whose name disagrees with its CONC; else the later one.
            let name_differs = |l: &str, c: &str| conc_in_name(l).is_some_and(|n| n != c);
            let offset = |l: &str| map.get_entry(l).map(|(k, _)| k.span.start.offset());
            let (copy, other) = match (name_differs(a, &ca), name_differs(b, &cb)) {
                (true, false) => (a, b),
                (false, true) => (b, a),
                _ if offset(b) >= offset(a) => (b, a),
                _ => (a, b),
            };
            let named = conc_in_name(copy).filter(|n| *n != ca);
            let span = conc_node(copy).map(|n| n.span);
            let d = duplicate_conc(rel, (copy, other), &ca, named.as_deref(), span);
            causes.push(d);
            drop[*i] = true;
            // The point the copy was written for finds no variant: the same fault.
            if let Some(n) = &named {
                for (j, g) in faults.iter().enumerate() {
                    if let Some(g) = g
                        && g.recipe == rel
                        && g.matched.is_empty()
                        && g.conc.as_deref() == Some(n.as_str())
                        && diags[j].code == infx_matrix::codes::BINDING_NONE
                    {
                        drop[j] = true;
                    }
                }
            }
        }
    }
    let mut out: Vec<Diagnostic> = diags
        .into_iter()
        .zip(drop)
        .filter(|(d, dropped)| {
            let matched_unused = d.code == infx_matrix::codes::UNUSED_VARIANT
                && unused_but_matched(d, &matched_somewhere);
            !(*dropped || matched_unused)
        })
        .map(|(d, _)| d)
        .collect();
    out.extend(causes);
    out
}

/// `matrix/variant-without-conc`: `label` pins no CONC, so the points at `concs` match it and
/// another variant.
fn variant_without_conc(
    rel: &str,
    label: &str,
    concs: &[String],
    span: Option<infx_report::Span>,
) -> Diagnostic {
    let one = concs.len() == 1;
    let d = Diagnostic::error(
        infx_matrix::codes::VARIANT_WITHOUT_CONC,
        format!(
            "variant {label} pins no CONC, so it matches every point its other settings fit: {} point{} (conc {}) match{} it and another variant",
            concs.len(),
            if one { "" } else { "s" },
            concs.join(", "),
            if one { "es" } else { "" },
        ),
    )
    .with_path(rel)
    .with_help(match conc_in_name(label) {
        Some(n) => format!("add `CONC: \"{n}\"` to {label}'s benchmark.env (its name says c{n})"),
        None => format!("add the CONC of the point {label} was written for to its benchmark.env"),
    });
    match span {
        Some(span) => d.with_span(span),
        None => d,
    }
}

/// `matrix/duplicate-conc`: `copy` pins the same CONC `conc` as `other`; `named` is the conc
/// the copy's name says it serves, when that differs.
fn duplicate_conc(
    rel: &str,
    (copy, other): (&str, &str),
    conc: &str,
    named: Option<&str>,
    span: Option<infx_report::Span>,
) -> Diagnostic {
    let d = Diagnostic::error(
        infx_matrix::codes::DUPLICATE_CONC,
        format!(
            "{copy} pins CONC {conc}, the same as {other}: the conc {conc} point matches both{}",
            named
                .map(|n| format!(", and no variant serves conc {n}"))
                .unwrap_or_default()
        ),
    )
    .with_path(rel)
    .with_help(match named {
        Some(n) => format!("set `CONC: \"{n}\"` in {copy} (its name says c{n})"),
        None => "give each variant the CONC of the point it serves".to_string(),
    });
    match span {
        Some(span) => d.with_span(span),
        None => d,
    }
}

/// An `unused-variant` warning about a variant some point matched (ambiguously).
fn unused_but_matched(
    d: &Diagnostic,
    matched: &std::collections::HashSet<(String, String)>,
) -> bool {
    matched
        .iter()
        .any(|(recipe, label)| is_unused_warning(d, recipe, label))
}

/// Whether `d` is the binder's `unused-variant` warning about `label` of `recipe`.
fn is_unused_warning(d: &Diagnostic, recipe: &str, label: &str) -> bool {
    d.code == infx_matrix::codes::UNUSED_VARIANT
        && d.path.as_deref() == Some(Path::new(recipe))
        && d.message
            .contains(&format!(": variant {label} is not selected"))
}

fn json_text(j: &Json) -> String {
    match j {
        Json::Str(s) => s.clone(),
        Json::List(l) => l.iter().map(json_text).collect::<Vec<_>>().join(" "),
        Json::Int(i) => i.to_string(),
        Json::Float(f) => f.to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Null => "-".into(),
        Json::Object(_) => "{…}".into(),
    }
}

/// Per variant label of `rel` composed in `lane` (none: a standalone recipe): the worker args whose values differ between
/// the file's variants (tensor/expert parallel sizes are the tp/ep columns already).
fn per_point_args(
    from: &RecipeSource<'_>,
    rel: &str,
    lane: Option<Lane>,
) -> HashMap<String, Vec<String>> {
    // A plain recipe the binder did not load: one variant, no args that differ.
    if from.set.is_plain_standalone(rel) {
        return HashMap::new();
    }
    let variants: Vec<Variant> = (|| {
        let file = from.file(rel)?;
        // One variant has no args that differ from another's: nothing to expand.
        if file.kind() == infx_recipe::RecipeKind::Plain {
            return None;
        }
        let Some(lane) = lane else {
            // A standalone recipe's variants as srtctl expands it.
            return file.expand_with(None, ExpandOptions::srtctl()).ok();
        };
        let block = from.lane(lane)?;
        infx_recipe::compose_lane(&file, lane, &block)
            .expand_with(None, ExpandOptions::inferencex())
            .ok()
    })()
    .unwrap_or_default();
    let flat: Vec<(String, Vec<(String, String)>)> = variants
        .iter()
        .map(|v| {
            let mut out = Vec::new();
            collect_args(&v.tree, false, &mut out);
            (label(v), out)
        })
        .collect();
    let mut names: Vec<String> = Vec::new();
    for (_, args) in &flat {
        for (n, _) in args {
            if !names.contains(n)
                && !matches!(n.as_str(), "tensor-parallel-size" | "expert-parallel-size")
            {
                names.push(n.clone());
            }
        }
    }
    let value = |args: &[(String, String)], n: &str| {
        args.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
    };
    names.retain(|n| {
        let first = flat.first().map(|(_, a)| value(a, n));
        flat.iter().any(|(_, a)| Some(value(a, n)) != first)
    });
    flat.iter()
        .map(|(l, a)| {
            let shown = names
                .iter()
                .filter_map(|n| value(a, n).map(|v| format!("{n}={v}")))
                .collect();
            (l.clone(), shown)
        })
        .collect()
}

fn label(v: &Variant) -> String {
    if v.label.is_empty() {
        v.name.clone().unwrap_or_else(|| "base".into())
    } else {
        v.label.clone()
    }
}

/// Scalar leaves below any `args` mapping, keyed by their own name.
fn collect_args(n: &Node, in_args: bool, out: &mut Vec<(String, String)>) {
    match &n.value {
        Value::Map(m) => {
            for (k, _, v) in m.iter() {
                if in_args && !matches!(v.value, Value::Map(_) | Value::Seq(_)) {
                    out.push((k.to_string(), scalar_text(v)));
                } else {
                    collect_args(v, in_args || k == "args", out);
                }
            }
        }
        Value::Seq(items) => {
            for i in items {
                collect_args(i, in_args, out);
            }
        }
        _ => {}
    }
}

fn scalar_text(n: &Node) -> String {
    match &n.value {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.text.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Timestamp(t) => t.clone(),
        _ => String::new(),
    }
}

/// The config keys of `records`, each once, in the order they first appear.
fn config_keys_in_order(records: &[BindingRecord]) -> Vec<&str> {
    let mut keys: Vec<&str> = Vec::new();
    for r in records {
        if !keys.contains(&r.config_key.as_str()) {
            keys.push(&r.config_key);
        }
    }
    keys
}

/// The human table: one block per config.
pub fn human_table(records: &[BindingRecord]) -> String {
    let mut s = String::new();
    for key in config_keys_in_order(records) {
        let rows: Vec<&BindingRecord> = records.iter().filter(|r| r.config_key == key).collect();
        s.push_str(&format!(
            "\nplanned rows of {} → recipe variant:\n",
            plain(key)
        ));
        // Each column as wide as its widest cell or its header.
        let width = |cell: fn(&BindingRecord) -> &str, header: &str| {
            rows.iter()
                .map(|r| cell(r).len())
                .max()
                .unwrap_or(0)
                .max(header.len())
        };
        let w_recipe = width(|r| &r.recipe, "recipe");
        let w_variant = width(|r| &r.variant, "variant");
        let w_scen = width(|r| &r.scenario, "scenario");
        s.push_str(&format!(
            "  {:<w_scen$} {:>3} {:>3} {:<7} {:>5}  {:<w_recipe$}  {:<w_variant$}  per-point args\n",
            "scenario", "tp", "ep", "dp-attn", "conc", "recipe", "variant"
        ));
        for r in rows {
            let line = format!(
                "  {:<w_scen$} {:>3} {:>3} {:<7} {:>5}  {:<w_recipe$}  {:<w_variant$}  {}",
                plain(&r.scenario),
                plain(&r.tp),
                plain(&r.ep),
                plain(&r.dp_attn),
                plain(&r.conc),
                plain(&r.recipe),
                plain(&r.variant),
                plain(&r.args.join(" "))
            );
            // A row without per-point args ends at its variant, not in padding.
            s.push_str(line.trim_end());
            s.push('\n');
        }
    }
    s
}

/// The markdown rows of the job summary (one table per config).
pub fn markdown_tables(records: &[BindingRecord]) -> String {
    let mut s = String::new();
    for key in config_keys_in_order(records) {
        s.push_str(&format!("\n#### `{}`\n\n", md_escape(key)));
        s.push_str("| scenario | tp | ep | dp-attn | conc | recipe | variant | per-point args |\n");
        s.push_str("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for r in records.iter().filter(|r| r.config_key == key) {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | `{}` | `{}` | {} |\n",
                md_escape(&r.scenario),
                md_escape(&r.tp),
                md_escape(&r.ep),
                md_escape(&r.dp_attn),
                md_escape(&r.conc),
                md_escape(&r.recipe),
                md_escape(&r.variant),
                md_escape(&r.args.join(" "))
            ));
        }
    }
    s
}

/// Terminal-safe text: tree content must not move the cursor or recolour the terminal.
fn plain(s: &str) -> String {
    s.chars()
        .map(|c| {
            if infx_report::is_unsafe_char(c) {
                '?'
            } else {
                c
            }
        })
        .collect()
}

/// Table-safe text: pipes, backticks, angle brackets and control characters would break the
/// markdown (or inject markup) from hostile tree content.
pub fn md_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '|' | '`' | '<' | '>' => ' ',
            c if infx_report::is_unsafe_char(c) => ' ',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &str) -> BindingRecord {
        BindingRecord {
            config_key: key.into(),
            scenario: "agentic-coding".into(),
            tp: "2".into(),
            ep: "1".into(),
            dp_attn: "false".into(),
            conc: "16".into(),
            recipe: "r.yaml".into(),
            variant: "override_tp2_c16".into(),
            args: vec!["mem-fraction-static=0.8".into()],
        }
    }

    #[test]
    fn tables_escape_hostile_text() {
        let t = human_table(&[record("k\u{1b}[31m")]);
        assert!(!t.contains('\u{1b}'), "{t}");
        assert!(
            t.contains("override_tp2_c16  mem-fraction-static=0.8"),
            "{t}"
        );
        let mut bare = record("k");
        bare.args.clear();
        let t = human_table(&[bare]);
        assert!(
            t.lines().all(|l| l == l.trim_end()),
            "no row ends in padding:\n{t}"
        );
        let md = markdown_tables(&[record("k|`<b>")]);
        assert!(md.contains("#### `k   b `"), "{md}");
        assert!(md.contains("| agentic-coding | 2 | 1 | false | 16 | `r.yaml` | `override_tp2_c16` | mem-fraction-static=0.8 |"), "{md}");
    }
}
