//! `cargo xtask conformance recipes --random N --seed S`: a seeded random recipe mutator run
//! against srtctl c88ef731 itself (unpacked from ../shared/reference and installed into a venv
//! under target/), compared case by case with infx's emulation: verdict, every variant's
//! defaulted configuration, on rejection the failing fields or message, and for every accepted
//! variant the worker, router and frontend argvs srtctl's mock runtime launches (docs/recipe.md,
//! "Random differential"). `run_corpus_launches` makes the same launch comparison over every
//! corpus recipe, unmutated.
//!
//! Seeds are the srtctl-golden recipes srtctl accepts. Each case rewrites one of them as JSON
//! (a YAML subset both sides read alike, with every string quoted) after one mutation: a zip
//! variant that re-sets a value (quoted 1.1-only booleans and sexagesimals, nulls, originals), a
//! `null` in the base, a wrong-typed value at a field, an unknown key, or launch knobs set to
//! plausible values.

use super::oracle::Rng;
use super::recipes::compare_failure;
use infx_recipe::RecipeFile;
use infx_recipe::Selector;
use infx_recipe::srtctl::dry_run;
use infx_yaml::{Node, Value};
use serde_json::{Map, Value as J, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The oracle's Python: `target/srtctl-oracle/V/bin/python` with srtctl installed editable
/// from the unpacked tarball (made once, then reused). `Err` carries the reason to print as a
/// SKIP.
pub fn oracle_python() -> Result<PathBuf, String> {
    super::oracle::venv("srtctl-oracle", "srt-slurm.tar.gz", &["-e", "./srt-slurm"])
        .map(|(python, _)| python)
}

/// One generated case.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub what: String,
    pub recipe: String,
    pub selector: Option<String>,
    /// Also compare every accepted variant's launch commands with srtctl's mock runtime.
    pub mock: bool,
}

/// A recipe tree as JSON (the mutator's working form). Timestamps become strings, which is
/// what a quoted date is; none of the seed recipes has one.
pub(crate) fn to_json(n: &Node) -> J {
    match &n.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => json!(i),
        Value::Float(f) => serde_json::Number::from_f64(f.value)
            .map(J::Number)
            .unwrap_or(J::Null),
        Value::Str(s) | Value::Timestamp(s) => J::String(s.clone()),
        Value::Seq(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => J::Object(
            m.iter_nodes()
                .map(|(k, v)| (infx_recipe::py_str(k), to_json(v)))
                .collect(),
        ),
    }
}

/// The seed recipes: the plain root or the bundle's `base` of every accepted srtctl-golden
/// dry-run case without an srtslurm.yaml, then of every August InferenceX srt-slurm recipe
/// infx loads, deduplicated.
pub fn seeds(corpus: &Path) -> Vec<(String, Map<String, J>)> {
    let mut out: Vec<(String, Map<String, J>)> = Vec::new();
    for golden in golden_dry_run_recipes(corpus) {
        if let Ok(root) = infx_yaml::parse_str(Path::new(&golden.file), &golden.text) {
            push_seed(&mut out, golden.id, &root);
        }
    }
    // The August InferenceX recipes widen the vLLM and TRT-LLM share of the seeds.
    for (id, file) in inferencex_recipe_files(corpus) {
        if let Some(root) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| infx_yaml::parse_str(&file, &text).ok())
        {
            push_seed(&mut out, id, &root);
        }
    }
    out
}

/// One recipe's seed: its `base` (a plain recipe: the root) as JSON, unless the recipe sweeps
/// or an equal seed is already there.
fn push_seed(out: &mut Vec<(String, Map<String, J>)>, id: String, root: &Node) {
    let tree = root.get("base").unwrap_or(root);
    if root.get("sweep").is_some() || tree.get("sweep").is_some() {
        return;
    }
    if let J::Object(m) = to_json(tree)
        && !out.iter().any(|(_, seen)| *seen == m)
    {
        out.push((id, m));
    }
}

/// Every frontend × backend pair srtctl's mock launches, on the seed recipes (issue #45: an
/// SGLang router in front of vLLM workers lost its worker URLs): for each engine, schema and
/// disaggregated or aggregated layout the first seed that has it, once per frontend type its
/// schema registers (schema 1: `sglang`, `dynamo`, `vllm`, `trtllm_serve`; schema 2 adds the
/// routers), compared launch by launch as the random cases are (docs/recipe.md, "Rendering").
/// A pair srtctl refuses is compared by verdict.
pub fn frontend_pair_cases(corpus: &Path) -> Vec<Case> {
    let mut taken: Vec<(bool, String, bool)> = Vec::new();
    let mut out = Vec::new();
    for (id, base) in seeds(corpus) {
        let schema2 = base.contains_key("schema");
        let engine_key = if schema2 { "engine" } else { "backend" };
        let engine = base
            .get(engine_key)
            .and_then(|b| b.get("type"))
            .and_then(J::as_str)
            .unwrap_or("sglang")
            .to_string();
        let disagg = if schema2 {
            base.get("roles").and_then(|r| r.get("prefill")).is_some()
        } else {
            base.get("resources")
                .and_then(|r| r.get("prefill_nodes"))
                .is_some_and(|n| !n.is_null())
        };
        let key = (schema2, engine.clone(), disagg);
        if taken.contains(&key) {
            continue;
        }
        taken.push(key);
        let frontends: &[&str] = if schema2 {
            &[
                "sglang-router",
                "sglang",
                "dynamo",
                "vllm-router",
                "vllm",
                "trtllm_serve",
            ]
        } else {
            &["sglang", "dynamo", "vllm", "trtllm_serve"]
        };
        for fe in frontends {
            let mut tree = base.clone();
            set_path(&mut tree, &["frontend".into(), "type".into()], json!(fe));
            let Ok(recipe) = serde_json::to_string_pretty(&J::Object(tree)) else {
                continue;
            };
            out.push(Case {
                id: format!("{id} frontend={fe}"),
                what: format!(
                    "{engine} {} with frontend {fe}",
                    if disagg {
                        "disaggregated"
                    } else {
                        "aggregated"
                    }
                ),
                recipe: recipe + "\n",
                selector: None,
                mock: true,
            });
        }
    }
    out
}

/// [`frontend_pair_cases`] against srtctl's mock.
pub fn run_frontend_pairs(corpus: &Path) -> anyhow::Result<super::Outcome> {
    let cases = frontend_pair_cases(corpus);
    anyhow::ensure!(!cases.is_empty(), "no seed recipes");
    run_cases("recipes (frontend x backend vs srtctl.mock)", &cases)
}

/// The August InferenceX tree, under the corpus.
const AUGUST_TREE: &str = "inferencex-aug2026";

/// The corpus-wide launch comparison's cases: every recipe srtctl accepted in the srtctl-golden
/// corpus (run without an srtslurm.yaml, sweeps aside), verbatim, once per distinct text: with
/// no selector when the corpus ran it so (every variant), else with the first selector it ran;
/// then every srt-slurm recipe of the August InferenceX tree (all variants).
pub fn corpus_launch_cases(corpus: &Path) -> Vec<Case> {
    let mut out = golden_launch_cases(corpus);
    for (id, file) in inferencex_recipe_files(corpus) {
        let Ok(recipe) = std::fs::read_to_string(&file) else {
            continue;
        };
        if out.iter().any(|c| c.recipe == recipe) {
            continue;
        }
        out.push(Case {
            id,
            what: "corpus recipe, unmutated".into(),
            recipe,
            selector: None,
            mock: true,
        });
    }
    out
}

/// The srt-slurm recipe files of the August InferenceX tree in path order, each with its case
/// id (its path under the corpus).
fn inferencex_recipe_files(corpus: &Path) -> Vec<(String, PathBuf)> {
    let mut files = infx_yaml::yaml_files(
        &corpus
            .join(AUGUST_TREE)
            .join(infx_config::layout::recipes_root(true)),
    )
    .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let id = file
                .strip_prefix(corpus)
                .unwrap_or(&file)
                .display()
                .to_string();
            (id, file)
        })
        .collect()
}

/// An accepted srtctl-golden dry-run case without an srtslurm.yaml, with its recipe's text.
struct GoldenRecipe {
    id: String,
    selector: String,
    /// The index's kind column (`sweep` for sweep cases).
    kind: String,
    file: String,
    text: String,
}

/// Every [`GoldenRecipe`] of the corpus's srtctl-golden index, in index order.
fn golden_dry_run_recipes(corpus: &Path) -> Vec<GoldenRecipe> {
    let cases = corpus.join("srtctl-golden/cases");
    let Ok(index) = std::fs::read_to_string(corpus.join("srtctl-golden/index.tsv")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in index.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 6 || f[2] != "dry-run" || f[5].trim() != "0" {
            continue;
        }
        let dir = cases.join(f[0]);
        if dir.join("srtslurm.yaml").exists() {
            continue;
        }
        let Some(file) = std::fs::read_to_string(dir.join("meta.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<J>(&t).ok())
            .and_then(|m| m["recipe_file"].as_str().map(str::to_string))
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(dir.join(&file)) else {
            continue;
        };
        out.push(GoldenRecipe {
            id: f[0].to_string(),
            selector: f[3].to_string(),
            kind: f[4].to_string(),
            file,
            text,
        });
    }
    out
}

fn golden_launch_cases(corpus: &Path) -> Vec<Case> {
    let mut out: Vec<Case> = Vec::new();
    for golden in golden_dry_run_recipes(corpus) {
        if golden.kind == "sweep" {
            continue;
        }
        let recipe = golden.text;
        let selector = (!golden.selector.is_empty()).then_some(golden.selector);
        match out.iter_mut().find(|c| c.recipe == recipe) {
            Some(seen) if seen.selector.is_some() && selector.is_none() => {
                seen.id = golden.id;
                seen.selector = None;
            }
            Some(_) => {}
            None => out.push(Case {
                id: golden.id,
                what: "corpus recipe, unmutated".into(),
                recipe,
                selector,
                mock: true,
            }),
        }
    }
    out
}

/// Every path to a scalar or list leaf (`["backend", "type"]`), mappings recursed.
fn leaf_paths(v: &J, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let J::Object(m) = v {
        for (k, child) in m {
            prefix.push(k.clone());
            if child.is_object() && !child.as_object().is_some_and(Map::is_empty) {
                out.push(prefix.clone());
                leaf_paths(child, prefix, out);
            } else {
                out.push(prefix.clone());
            }
            prefix.pop();
        }
    }
}

fn set_path(root: &mut Map<String, J>, path: &[String], value: J) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = root;
    for p in parents {
        let slot = cur
            .entry(p.clone())
            .or_insert_with(|| J::Object(Map::new()));
        if !slot.is_object() {
            *slot = J::Object(Map::new());
        }
        let J::Object(next) = slot else { return };
        cur = next;
    }
    cur.insert(last.clone(), value);
}

fn get_path<'a>(root: &'a Map<String, J>, path: &[String]) -> Option<&'a J> {
    let (first, rest) = path.split_first()?;
    let mut cur = root.get(first)?;
    for p in rest {
        cur = cur.as_object()?.get(p)?;
    }
    Some(cur)
}

/// Values the YAML round trip of a zip variant treats differently from a direct load.
const TRICKY: &[&str] = &[
    "yes", "no", "on", "off", "Yes", "OFF", "8:00:00", "1:30", "0:30", "true", "017", "1_000", "~",
    "y", "4:00:00", "",
];

/// Fields where infx's schema had holes, and other often-typed ones, for the type faults.
const FIELDS: &[&[&str]] = &[
    &["reporting"],
    &["reporting", "status"],
    &["reporting", "status", "endpoint"],
    &["reporting", "ai_analysis"],
    &["reporting", "ai_analysis", "enabled"],
    &["reporting", "s3"],
    &["reporting", "s3", "bucket"],
    &["profiling", "extra_nsys_args"],
    &["profiling", "type"],
    &["dynamo", "cargo_patches"],
    &["dynamo", "version"],
    &["benchmark", "prefix_ratios"],
    &["benchmark", "isl"],
    &["slurm", "time_limit"],
    &["health_check", "max_attempts"],
    &["frontend", "args"],
    &["environment"],
];

fn random_value(rng: &mut Rng, original: Option<&J>) -> J {
    match rng.below(11) {
        0 => J::Null,
        1 => json!(rng.below(9) as i64 - 1),
        2 => json!(rng.below(2) == 1),
        3 => json!([rng.below(4), "x"]),
        4 => json!({"k": rng.below(3)}),
        5 => json!(["a", "b"]),
        6 => json!(0.5),
        7 => original.cloned().unwrap_or(J::Null),
        _ => J::String(rng.pick(TRICKY).copied().unwrap_or("yes").to_string()),
    }
}

/// A launch-relevant field of `base` and a plausible new value for it.
fn launch_knob(rng: &mut Rng, base: &Map<String, J>) -> (Vec<String>, J) {
    let path = |parts: &[&str]| parts.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let engine = get_path(base, &path(&["backend", "type"]))
        .and_then(J::as_str)
        .unwrap_or("sglang")
        .to_string();
    let small = |rng: &mut Rng, hi: usize| json!(rng.below(hi + 1));
    match rng.below(12) {
        0 => {
            let role = rng
                .pick(&["prefill", "decode", "agg"])
                .copied()
                .unwrap_or("agg");
            (
                path(&["resources", &format!("{role}_workers")]),
                json!(1 + rng.below(4)),
            )
        }
        1 => {
            let role = rng
                .pick(&["prefill", "decode", "agg"])
                .copied()
                .unwrap_or("agg");
            (
                path(&["resources", &format!("{role}_nodes")]),
                small(rng, 4),
            )
        }
        2 => (
            path(&["resources", "gpus_per_node"]),
            json!([4, 8][rng.below(2)]),
        ),
        3 => (
            path(&["resources", "spread_workers"]),
            json!(rng.chance(50)),
        ),
        4 => (
            path(&["frontend", "enable_multiple_frontends"]),
            json!(rng.chance(50)),
        ),
        5 => (
            path(&["frontend", "num_additional_frontends"]),
            small(rng, 3),
        ),
        6 => {
            let kv = [
                json!(true),
                json!(false),
                json!({"prefill": true}),
                json!({"decode": {"topic": "t"}}),
                json!({"aggregated": true}),
            ];
            (
                path(&["backend", "kv_events_config"]),
                kv[rng.below(kv.len())].clone(),
            )
        }
        7 if engine == "vllm" => {
            let c = [json!("nixl"), json!("lmcache"), J::Null];
            (
                path(&["backend", "connector"]),
                c[rng.below(c.len())].clone(),
            )
        }
        7 | 8 if engine == "vllm" => {
            let m = ["per_gpu", "per_node"][rng.below(2)];
            (path(&["backend", "dp_launch_mode"]), json!(m))
        }
        9 if engine == "vllm" => (
            path(&["backend", "allow_prefill_decode_colocation"]),
            json!(rng.chance(50)),
        ),
        7..=9 => (
            path(&["infra", "etcd_nats_dedicated_node"]),
            json!(rng.chance(50)),
        ),
        _ => {
            // A parallelism size in one of the engine's existing mode configs.
            let cfg = format!("{engine}_config");
            let modes: Vec<String> = get_path(base, &path(&["backend", &cfg]))
                .and_then(J::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let mode = rng
                .pick(&modes)
                .cloned()
                .unwrap_or_else(|| "aggregated".into());
            let key = [
                "tensor-parallel-size",
                "data-parallel-size",
                "pipeline-parallel-size",
            ][rng.below(3)];
            let p = vec!["backend".to_string(), cfg, mode, key.to_string()];
            (p, json!([1, 2, 4, 8][rng.below(4)]))
        }
    }
}

/// Builds case `i` of a run seeded with `seed`.
pub fn make_case(seeds: &[(String, Map<String, J>)], seed: u64, i: usize) -> Option<Case> {
    let mut rng = Rng::new(seed ^ (i as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    let (seed_id, base) = rng.pick(seeds)?;
    let mut base = base.clone();
    let mut paths = Vec::new();
    leaf_paths(&J::Object(base.clone()), &mut Vec::new(), &mut paths);
    let field = |rng: &mut Rng| -> Vec<String> {
        if rng.below(2) == 0
            && let Some(p) = rng.pick(&paths)
        {
            return p.clone();
        }
        rng.pick(FIELDS)
            .map(|f| f.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    };
    let kind = rng.below(7);
    let (what, doc, selector) = match kind {
        // A zip variant re-setting one or two values (broadcast or two variants), optionally
        // with a base null elsewhere.
        0..=2 => {
            let mut zip = Map::new();
            let mut desc = Vec::new();
            let n = 1 + rng.below(2);
            for _ in 0..1 + rng.below(2) {
                let p = field(&mut rng);
                let orig = get_path(&base, &p).cloned();
                let vals: Vec<J> = (0..n)
                    .map(|_| random_value(&mut rng, orig.as_ref()))
                    .collect();
                desc.push(format!("zip {}={}", p.join("."), J::Array(vals.clone())));
                set_path(&mut zip, &p, J::Array(vals));
            }
            if kind == 2 {
                let p = field(&mut rng);
                let v = if rng.below(2) == 0 {
                    J::Null
                } else {
                    J::String(rng.pick(TRICKY).copied().unwrap_or("yes").to_string())
                };
                desc.push(format!("base {}={v}", p.join(".")));
                set_path(&mut base, &p, v);
            }
            let index = rng.below(n);
            let selector = match rng.below(3) {
                0 => None,
                _ => Some(format!("zip_override_r[{index}]")),
            };
            let doc = json!({"base": J::Object(base), "zip_override_r": J::Object(zip)});
            (desc.join("; "), doc, selector)
        }
        // One to three launch knobs (placement, parallelism, connector, kv events, frontend)
        // set to plausible values, so the launch commands are compared on many layouts.
        5 | 6 => {
            let mut desc = Vec::new();
            for _ in 0..1 + rng.below(3) {
                let (p, v) = launch_knob(&mut rng, &base);
                desc.push(format!("knob {}={v}", p.join(".")));
                set_path(&mut base, &p, v);
            }
            (desc.join("; "), J::Object(base), None)
        }
        // One value replaced (a type fault most of the time) in a plain recipe.
        3 => {
            let p = field(&mut rng);
            let orig = get_path(&base, &p).cloned();
            let v = random_value(&mut rng, orig.as_ref());
            let desc = format!("set {}={v}", p.join("."));
            set_path(&mut base, &p, v);
            (desc, J::Object(base), None)
        }
        // An override variant with a null (deletes) or a value.
        _ => {
            let p = field(&mut rng);
            let orig = get_path(&base, &p).cloned();
            let v = random_value(&mut rng, orig.as_ref());
            let mut over = Map::new();
            set_path(&mut over, &p, v.clone());
            let desc = format!("override {}={v}", p.join("."));
            let doc = json!({"base": J::Object(base), "override_r": J::Object(over)});
            (desc, doc, Some("override_r".to_string()))
        }
    };
    let recipe = serde_json::to_string_pretty(&doc).ok()? + "\n";
    Some(Case {
        id: format!("{seed}/{i}"),
        what: format!("{seed_id}: {what}"),
        recipe,
        selector,
        mock: true,
    })
}

/// srtctl's answer for one case.
#[derive(Debug)]
pub struct OracleResult {
    pub exit: i32,
    pub stdout: String,
    pub configs: Vec<J>,
    /// Per accepted variant (mock cases): `{"calls": [{"command", "nodelist", "env"}]}` or
    /// `{"error": text}` when srtctl's runtime failed before launching.
    pub launches: Vec<J>,
}

const FILE: &str = "r.yaml";

/// Runs the driver over `cases` in one Python process (env as the golden corpus was made).
/// With `INFX_ORACLE_CACHE=1`, srtctl's answers are kept in `target/srtctl-oracle/` keyed by
/// the exact case input and the driver's text, and only unseen cases reach srtctl: srtctl's
/// answer depends on nothing else, so a replay after an infx change re-compares in seconds
/// (docs/recipe.md, "Random differential"). Off by default, so CI always asks srtctl.
pub fn run_oracle(python: &Path, cases: &[Case]) -> anyhow::Result<Vec<OracleResult>> {
    let inputs: Vec<J> = cases
        .iter()
        .map(|c| json!({"file": FILE, "recipe": c.recipe, "selector": c.selector, "mock": c.mock}))
        .collect();
    let cache = std::env::var("INFX_ORACLE_CACHE")
        .is_ok_and(|v| v == "1")
        .then(AnswerCache::open);
    let keys: Vec<String> = inputs.iter().map(J::to_string).collect();
    let mut answers: Vec<Option<String>> = keys
        .iter()
        .map(|k| cache.as_ref().and_then(|c| c.answers.get(k).cloned()))
        .collect();
    let missing: Vec<usize> = (0..cases.len()).filter(|&i| answers[i].is_none()).collect();
    if !missing.is_empty() {
        let batch: Vec<J> = missing.iter().map(|&i| inputs[i].clone()).collect();
        // Each answer is kept as it arrives, so an interrupted long run resumes where it was.
        let lines = run_driver(python, &batch, |n, line| {
            if let Some(cache) = &cache {
                cache.store(std::iter::once((&keys[missing[n]], &line.to_string())));
            }
        })?;
        for (&i, line) in missing.iter().zip(lines) {
            answers[i] = Some(line);
        }
    }
    answers
        .into_iter()
        .map(|line| {
            let v: J = serde_json::from_str(line.as_deref().unwrap_or("null"))?;
            Ok(OracleResult {
                exit: v["exit"].as_i64().unwrap_or(-1) as i32,
                stdout: v["stdout"].as_str().unwrap_or_default().to_string(),
                configs: v["configs"].as_array().cloned().unwrap_or_default(),
                launches: v["launches"].as_array().cloned().unwrap_or_default(),
            })
        })
        .collect()
}

/// srtctl's answers by case input, in `target/srtctl-oracle/answers-<driver digest>.jsonl`
/// (a new driver starts a new file, so a stale answer is never read).
struct AnswerCache {
    file: PathBuf,
    answers: std::collections::HashMap<String, String>,
}

impl AnswerCache {
    fn open() -> Self {
        let driver = include_str!("oracle/srtctl_driver.py");
        // FNV-1a: a stable digest of the driver without a hashing dependency.
        let digest = driver.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Self::at(
            xtask::paths::tools_target()
                .join("srtctl-oracle")
                .join(format!("answers-{digest:016x}.jsonl")),
        )
    }

    fn at(file: PathBuf) -> Self {
        let answers = std::fs::read_to_string(&file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<J>(l).ok())
            .filter_map(|v| Some((v["key"].as_str()?.to_string(), v["answer"].to_string())))
            .collect();
        AnswerCache { file, answers }
    }

    fn store<'a>(&self, new: impl Iterator<Item = (&'a String, &'a String)>) {
        let mut text = String::new();
        for (key, answer) in new {
            if let Ok(answer) = serde_json::from_str::<J>(answer) {
                text.push_str(&json!({"key": key, "answer": answer}).to_string());
                text.push('\n');
            }
        }
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.file)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = appended {
            eprintln!("note: srtctl answer cache {}: {e}", self.file.display());
        }
    }
}

/// One driver process over `input`: one JSON answer line per case, in order; `on_answer`
/// sees each (its index, the line) as soon as the driver prints it.
fn run_driver(
    python: &Path,
    input: &[J],
    mut on_answer: impl FnMut(usize, &str),
) -> anyhow::Result<Vec<String>> {
    let input: Vec<J> = input
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut c = c.clone();
            c["id"] = json!(i.to_string());
            c
        })
        .collect();
    let dir = tempfile::tempdir()?;
    let cases_file = dir.path().join("cases.json");
    std::fs::write(&cases_file, serde_json::to_vec(&input)?)?;
    let driver = dir.path().join("srtctl_driver.py");
    std::fs::write(&driver, include_str!("oracle/srtctl_driver.py"))?;
    let bin = python.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut child = Command::new(python)
        .arg(&driver)
        .arg(&cases_file)
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        )
        .env("HOME", dir.path())
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env("TZ", "UTC")
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "300")
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // stderr drains on its own thread so a chatty driver cannot block on a full pipe.
    let stderr = child.stderr.take();
    let drain = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut e) = stderr {
            let _ = std::io::Read::read_to_string(&mut e, &mut text);
        }
        text
    });
    let mut results: Vec<String> = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in std::io::BufRead::lines(std::io::BufReader::new(out)) {
            let line = line?;
            on_answer(results.len(), &line);
            results.push(line);
        }
    }
    child.wait()?;
    let err = drain.join().unwrap_or_default();
    if results.len() != input.len() {
        anyhow::bail!(
            "srtctl driver answered {} of {} cases: {}",
            results.len(),
            input.len(),
            err.lines().last().unwrap_or("")
        );
    }
    Ok(results)
}

fn srtctl_error(stdout: &str) -> String {
    let text = match stdout.rfind("Error: ") {
        Some(i) => &stdout[i + 7..],
        None => stdout,
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// infx's answer for one case compared with srtctl's; `Err` describes the disagreement.
pub fn compare(case: &Case, theirs: &OracleResult) -> Result<(), String> {
    compare_counting(case, theirs, &mut BTreeMap::new()).map(|_| ())
}

/// As [`compare`], counting per engine the variants whose launch commands agreed. `Ok(Some)`
/// is a deliberate difference, with its reason (listed by `conformance --verbose`).
fn compare_counting(
    case: &Case,
    theirs: &OracleResult,
    launches: &mut BTreeMap<String, usize>,
) -> Result<Option<String>, String> {
    let path = Path::new(FILE);
    let file = match RecipeFile::parse(path, case.recipe.clone()) {
        Ok(f) => f,
        Err(_) if theirs.exit != 0 => return Ok(None),
        // PyYAML keeps the last of two equal keys without a word; infx refuses the file, since
        // one of the two values is lost either way (docs/recipe.md, "Where infx follows srtctl's code").
        Err(d) if d.code == infx_yaml::codes::DUPLICATE_KEY => {
            return Ok(Some(format!(
                "infx rejects a duplicate key srtctl silently overrides: {}",
                d.message
            )));
        }
        Err(d) => return Err(format!("infx could not load: {}", d.message)),
    };
    let selector = match &case.selector {
        None => None,
        Some(s) => match Selector::parse_srtctl(s) {
            Ok(sel) => Some(sel),
            Err(d) => return Err(format!("selector: {}", d.message)),
        },
    };
    let run = dry_run(&file, selector.as_ref(), None);
    for (i, (v, cfg)) in run.configs.iter().enumerate() {
        match theirs.configs.get(i) {
            Some(want) if want == cfg => {}
            Some(want) => {
                return Err(format!(
                    "variant {} ({}) config differs: {}",
                    i + 1,
                    v.label,
                    super::recipes::first_diff(want, cfg, "")
                ));
            }
            None if theirs.exit == 0 => {
                return Err(format!("infx accepted variant {} srtctl did not", i + 1));
            }
            None => {}
        }
    }
    match (&run.error, theirs.exit == 0) {
        (None, true) if run.configs.len() == theirs.configs.len() => {
            compare_launches(case, &run, theirs, launches)
        }
        (None, true) => Err(format!(
            "{} variants from infx, {} from srtctl",
            run.configs.len(),
            theirs.configs.len()
        )),
        (None, false) => Err(format!(
            "srtctl rejected ({}), infx accepted",
            srtctl_error(&theirs.stdout)
        )),
        (Some(e), true) => Err(format!(
            "infx rejected ({}), srtctl accepted",
            super::recipes::describe(e)
        )),
        (Some(e), false) => compare_failure(e, &srtctl_error(&theirs.stdout)).map(|()| None),
    }
}

/// Every accepted variant's launch commands against srtctl's mock runtime (mock cases).
fn compare_launches(
    case: &Case,
    run: &infx_recipe::srtctl::Run,
    theirs: &OracleResult,
    launches: &mut BTreeMap<String, usize>,
) -> Result<Option<String>, String> {
    if !case.mock {
        return Ok(None);
    }
    let mut skipped = None;
    if theirs.launches.len() != run.configs.len() {
        return Err(format!(
            "srtctl's mock ran {} of {} variants",
            theirs.launches.len(),
            run.configs.len()
        ));
    }
    for (i, ((v, _), launch)) in run.configs.iter().zip(&theirs.launches).enumerate() {
        if let Some(err) = launch["error"].as_str() {
            // Both refusing the layout at run time is agreement.
            let refused = infx_recipe::render(v)
                .notes
                .iter()
                .any(|n| n.contains("srtctl refuses this layout at run time"));
            if refused {
                continue;
            }
            return Err(format!(
                "variant {} ({}): srtctl's mock failed: {err}",
                i + 1,
                v.label
            ));
        }
        let rendered = infx_recipe::render(v);
        if rendered
            .notes
            .iter()
            .any(|n| n == infx_recipe::PROFILING_NOT_RENDERED)
        {
            skipped = Some(format!(
                "launch commands NOT compared (variant {}): {}",
                i + 1,
                infx_recipe::PROFILING_NOT_RENDERED
            ));
            continue;
        }
        let calls: Vec<Vec<String>> = launch["calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .filter_map(|c| c["command"].as_array())
                    .map(|a| super::recipes::argv_of(a))
                    .collect()
            })
            .unwrap_or_default();
        let engine = super::recipes::compare_argvs(&calls, v)
            .map_err(|e| format!("variant {} ({}): {e}", i + 1, v.label))?;
        let envs: Vec<(Vec<String>, &Map<String, J>)> = launch["calls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let argv = super::recipes::argv_of(c["command"].as_array()?);
                Some((argv, c["env"].as_object()?))
            })
            .collect();
        super::recipes::compare_envs(&envs, v)
            .map_err(|e| format!("variant {} ({}): {e}", i + 1, v.label))?;
        *launches.entry(engine).or_default() += 1;
    }
    Ok(skipped)
}

/// Runs `count` cases from `seed`; the outcome counts agreement per case.
pub fn run(corpus: &Path, count: usize, seed: u64) -> anyhow::Result<super::Outcome> {
    let seeds = seeds(corpus);
    anyhow::ensure!(
        !seeds.is_empty(),
        "no seed recipes in the srtctl-golden corpus"
    );
    let cases: Vec<Case> = (0..count)
        .filter_map(|i| make_case(&seeds, seed, i))
        .collect();
    run_cases("recipes (random vs srtctl)", &cases)
}

/// As [`run`], for the cases `which` selects (a regression seed runs only its listed cases).
pub fn run_selected(
    corpus: &Path,
    seed: u64,
    which: &super::seeds::Cases,
) -> anyhow::Result<super::Outcome> {
    match which {
        super::seeds::Cases::First(n) => run(corpus, *n, seed),
        super::seeds::Cases::Only(numbers) => {
            let seeds = seeds(corpus);
            anyhow::ensure!(
                !seeds.is_empty(),
                "no seed recipes in the srtctl-golden corpus"
            );
            let cases: Vec<Case> = numbers
                .iter()
                .filter_map(|&i| make_case(&seeds, seed, i))
                .collect();
            run_cases("recipes (random vs srtctl)", &cases)
        }
    }
}

/// Case `i` of seed `s` for every `(s, i)` of `pairs`, through one srtctl process (its start is
/// a good part of a one-case run); each case keeps its id `s/i`.
pub fn run_pairs(corpus: &Path, pairs: &[(u64, usize)]) -> anyhow::Result<super::Outcome> {
    let seeds = seeds(corpus);
    anyhow::ensure!(
        !seeds.is_empty(),
        "no seed recipes in the srtctl-golden corpus"
    );
    let cases: Vec<Case> = pairs
        .iter()
        .filter_map(|&(seed, i)| make_case(&seeds, seed, i))
        .collect();
    run_cases("recipes (random vs srtctl)", &cases)
}

/// Every accepted corpus recipe's launch commands against srtctl's mock runtime.
/// `INFX_LAUNCH_FILTER=<text>` keeps the cases whose id contains it (a closer look at a few).
pub fn run_corpus_launches(corpus: &Path) -> anyhow::Result<super::Outcome> {
    let filter = std::env::var("INFX_LAUNCH_FILTER").unwrap_or_default();
    run_corpus_launches_where(corpus, |id| id.contains(&filter))
}

/// As [`run_corpus_launches`], for the cases whose id `keep` accepts.
pub fn run_corpus_launches_where(
    corpus: &Path,
    keep: impl Fn(&str) -> bool,
) -> anyhow::Result<super::Outcome> {
    let mut cases = corpus_launch_cases(corpus);
    cases.retain(|c| keep(&c.id));
    anyhow::ensure!(!cases.is_empty(), "no corpus recipes selected");
    run_cases("recipes (corpus launches vs srtctl.mock)", &cases)
}

fn run_cases(area: &'static str, cases: &[Case]) -> anyhow::Result<super::Outcome> {
    let mut o = super::Outcome {
        area,
        ..Default::default()
    };
    let python = match oracle_python() {
        Ok(p) => p,
        Err(why) => {
            println!("SKIP: {area}: {why}");
            return Ok(o);
        }
    };
    // `INFX_RANDOM_DUMP=<dir>` keeps every case's recipe (`<i>.yaml`) for a closer look with
    // `cargo xtask dry-run <dir>/<i>.yaml[:selector]` or srtctl itself.
    if let Some(dir) = std::env::var_os("INFX_RANDOM_DUMP") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir)?;
        for (i, c) in cases.iter().enumerate() {
            let sel = c.selector.as_deref().unwrap_or("");
            let text = format!("# case {} selector '{sel}': {}\n{}", c.id, c.what, c.recipe);
            std::fs::write(dir.join(format!("{i}.yaml")), text)?;
        }
    }
    let results = run_oracle(&python, cases)?;
    let mut launches: BTreeMap<String, usize> = BTreeMap::new();
    for (case, theirs) in cases.iter().zip(&results) {
        o.total += 1;
        match compare_counting(case, theirs, &mut launches) {
            Ok(None) => o.agree += 1,
            Ok(Some(why)) => {
                o.agree += 1;
                o.explained
                    .push(format!("case {} [{}]: {why}", case.id, case.what));
            }
            Err(why) => o
                .disagreements
                .push(format!("case {} [{}]: {why}", case.id, case.what)),
        }
    }
    let per_engine: Vec<String> = launches.iter().map(|(e, n)| format!("{e} {n}")).collect();
    println!(
        "{area}: variants whose launch commands agree with srtctl.mock, per engine: {}",
        if per_engine.is_empty() {
            "none".to_string()
        } else {
            per_engine.join(", ")
        }
    );
    let _ = std::io::stdout().flush();
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_answers_are_read_back_by_their_exact_input() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("answers.jsonl");
        let (key, other) = (
            "{\"recipe\":\"a\"}".to_string(),
            "{\"recipe\":\"b\"}".to_string(),
        );
        let answer = r#"{"exit":0,"stdout":"ok","configs":[],"launches":[]}"#.to_string();
        AnswerCache::at(file.clone()).store([(&key, &answer)].into_iter());
        let cache = AnswerCache::at(file);
        let got: J = serde_json::from_str(&cache.answers[&key]).expect("json");
        assert_eq!(got["stdout"], "ok");
        assert!(!cache.answers.contains_key(&other));
    }
}
