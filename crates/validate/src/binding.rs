//! The row → recipe-variant binding, shown: for each config in view, every generated point with
//! the recipe file and variant it selects and the settings that tell points apart (tp, ep,
//! dp-attn, conc, and the variant's per-point args). Shared by `validate` and `matrix --bind`.

use infx_matrix::{Json, Object, RowOrigin, SweepRow};
use infx_matrix::{RecipeSet, bind, load_recipes_in, row_recipe};
use infx_recipe::{ExpandOptions, Lane, RecipeFile, Variant};
use infx_report::Diagnostic;
use infx_yaml::{DocIndex, Node, Value};
use std::collections::HashMap;
use std::fmt::Write as _;
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
        if !shown.contains(&origin.key) || row.is_eval_only() {
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
        let lane = (!parsed.standalone).then(|| row.lane());
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
    // The root causes are named by the binder's side, from its typed faults.
    let diagnostics = infx_matrix::explain(report, &|rel: &str| from.file(rel));
    (diagnostics, records)
}

/// The variant column of a `CONFIG_FILE` point whose recipe is not in the tree.
pub const NOT_IN_TREE: &str = "(not in tree)";

/// A row's recipe reference as written, for a record whose reference does not parse.
fn reference_text(row: &Object) -> String {
    row.srt_recipe()
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
        scenario: row.scenario_type().map_or_else(
            || format!("{}/{}", text("isl"), text("osl")),
            |t| t.as_str().to_string(),
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
            let start = s.len();
            let _ = write!(
                s,
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
            let kept = s[start..].trim_end().len();
            s.truncate(start + kept);
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
/// Printable ASCII (nearly every cell) is shown as it is, without a copy.
fn plain(s: &str) -> std::borrow::Cow<'_, str> {
    if infx_report::is_printable_ascii(s) {
        return std::borrow::Cow::Borrowed(s);
    }
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
