//! `cargo xtask conformance matrix --random N --seed S`: a seeded random master-config mutator
//! run against upstream's generator itself (`generate_sweep_configs.main` with its pydantic
//! input validation, InferenceX 843c6254 from ../shared/reference), compared case by case with
//! `cargo xtask matrix` on the same files and command line: the verdict (exit code) and, when
//! both accept, stdout byte for byte (docs/config.md, "Random differential").
//!
//! Each case is a small tree: one to three entries of the August master files (the mutated one
//! and others, kept in their own file) and the August runner file, written as JSON (a YAML
//! subset both loaders read alike) with a few YAML 1.1 plain scalars spliced in, after one or
//! two mutations: a field set to another value or type, a key deleted, an unknown or October-only
//! key added, a list reshaped, the runner relabelled, the runner file edited, a key renamed.
//! Upstream answers every case of a run from one Python process (xtask-dev/oracle/matrix_oracle.py).

use super::oracle::Rng;
use anyhow::{Context, anyhow};
use serde_json::{Map, Value as J, json};
use std::path::{Path, PathBuf};

/// `(python, matrix_logic dir)`: the changelog differential's venv (pydantic and pyyaml, the
/// unpacked InferenceX tools), whose `utils/matrix_logic` holds the generator.
pub fn oracle() -> Result<(PathBuf, PathBuf), String> {
    let (python, utils) = super::changelog_random::oracle()?;
    Ok((python, utils.join("matrix_logic")))
}

const MASTER_FILES: [&str; 2] = infx_config::layout::MASTER_CONFIGS;
const RUNNER_FILE: &str = infx_config::layout::RUNNERS;

/// The unmutated inputs: every entry of the August master files and the runner file.
pub struct Seeds {
    /// (index into MASTER_FILES, key, entry)
    entries: Vec<(usize, String, J)>,
    /// The original block-style text of each entry: (file index, key) -> section.
    sections: std::collections::HashMap<(usize, String), String>,
    runners: Map<String, J>,
    runners_text: String,
}

/// One generated case: the files of its tree and the generator's arguments.
#[derive(Debug, Clone)]
pub struct Case {
    pub what: String,
    pub files: Vec<(String, String)>,
    pub argv: Vec<String>,
}

/// Reads the August tree of the corpus.
pub fn seeds(corpus: &Path) -> anyhow::Result<Seeds> {
    let tree = corpus.join("inferencex-aug2026");
    let mut entries = Vec::new();
    let mut sections = std::collections::HashMap::new();
    for (fi, file) in MASTER_FILES.iter().enumerate() {
        let doc = infx_yaml::load_file(&tree.join(file)).map_err(|d| anyhow!("{d}"))?;
        for (key, range) in infx_yaml::top_level_sections(&doc.text) {
            if let Some(text) = doc.text.get(range) {
                let text = if text.ends_with('\n') {
                    text.to_string()
                } else {
                    format!("{text}\n")
                };
                sections.insert((fi, key.to_string()), text);
            }
        }
        let J::Object(m) = super::recipes_random::to_json(&doc.root) else {
            anyhow::bail!("{file}: not a mapping");
        };
        entries.extend(m.into_iter().map(|(k, v)| (fi, k, v)));
    }
    let path = tree.join(RUNNER_FILE);
    let runners_text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let doc = infx_yaml::load_file(&path).map_err(|d| anyhow!("{d}"))?;
    let J::Object(runners) = super::recipes_random::to_json(&doc.root) else {
        anyhow::bail!("{RUNNER_FILE}: not a mapping");
    };
    Ok(Seeds {
        entries,
        sections,
        runners,
        runners_text,
    })
}

/// A string value that the writer splices in as a bare YAML 1.1 plain scalar.
const RAW: &str = "\u{1}raw:";

/// Plain scalars whose YAML 1.1 type differs from their look (ints in other bases, booleans,
/// nulls, floats).
const PLAIN: &[&str] = &[
    "yes", "no", "on", "off", "~", "null", "0x10", "017", "1_000", "1e3", "4.0", ".inf", "+8",
    "0b11", "eight", "True",
];

const STRINGS: &[&str] = &[
    "eight", "4", "", "b200", "fp8", "sglang", "x", "1k1k", "true",
];

/// Keys to add: unknown ones, October-only ones (docs/config.md, "Dialect") and real keys of
/// other places in the schema.
const EXTRA_KEYS: &[&str] = &[
    "foo",
    "srt-recipe",
    "num-nodes",
    "worker",
    "require-power",
    "dp-attn",
    "ep",
    "spec-decoding",
    "conc-list",
    "conc-start",
    "conc-end",
    "evals-only",
    "duration",
    "kv-offloading",
    "total-cpu-dram-gb",
    "additional-settings",
];

fn random_value(rng: &mut Rng, original: Option<&J>) -> J {
    if let Some(n) = original.and_then(J::as_i64)
        && rng.chance(50)
    {
        // Plausible numbers generate rows, so the row comparison gets exercised.
        return match rng.below(6) {
            0 => json!(n * 2),
            1 => json!(n / 2),
            2 => json!(n + 1),
            3 => json!(n - 1),
            4 => json!(-n),
            _ => json!([1, 2, 4, 8, 16, 32, 64, 128, 256][rng.below(9)]),
        };
    }
    match rng.below(12) {
        0 => J::Null,
        1 => json!(rng.below(10) as i64 - 1),
        2 => json!(rng.chance(50)),
        3 => json!(0.5),
        4 => json!([]),
        5 => json!([original.cloned().unwrap_or(J::Null)]),
        6 => json!({"x": 1}),
        7 => original
            .map(|o| J::String(o.to_string().trim_matches('"').to_string()))
            .unwrap_or(J::Null),
        8 | 9 => J::String(format!(
            "{RAW}{}",
            rng.pick(PLAIN).copied().unwrap_or("yes")
        )),
        _ => J::String(rng.pick(STRINGS).copied().unwrap_or("x").to_string()),
    }
}

/// A path below an entry, whether its value is a mapping, whether it is a list.
type Located = (Vec<J>, bool, bool);

/// Every path below `v` (mappings and lists recursed).
fn paths(v: &J, prefix: &mut Vec<J>, out: &mut Vec<Located>) {
    match v {
        J::Object(m) => {
            for (k, child) in m {
                prefix.push(J::String(k.clone()));
                out.push((prefix.clone(), child.is_object(), child.is_array()));
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        J::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                prefix.push(json!(i));
                out.push((prefix.clone(), child.is_object(), child.is_array()));
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(root: &'a mut J, path: &[J]) -> Option<&'a mut J> {
    let mut cur = root;
    for step in path {
        cur = match (cur, step) {
            (J::Object(m), J::String(k)) => m.get_mut(k)?,
            (J::Array(items), J::Number(i)) => items.get_mut(i.as_u64()? as usize)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn show(path: &[J]) -> String {
    path.iter()
        .map(|s| match s {
            J::String(k) => k.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// One mutation of `entry`; returns what it did.
fn mutate_entry(rng: &mut Rng, entry: &mut J, labels: &[String]) -> String {
    let mut all = Vec::new();
    paths(entry, &mut Vec::new(), &mut all);
    let pick = |rng: &mut Rng, filter: &dyn Fn(&Located) -> bool| {
        let matching: Vec<&Located> = all.iter().filter(|p| filter(p)).collect();
        rng.pick(&matching).map(|p| p.0.clone())
    };
    match rng.below(10) {
        // A scalar set to another value or type (most cases).
        0..=3 => {
            let Some(path) = pick(rng, &|p| !p.1 && !p.2) else {
                return "no scalar to set".into();
            };
            let slot = at(entry, &path);
            let original = slot.as_ref().map(|s| (**s).clone());
            let v = random_value(rng, original.as_ref());
            let desc = format!("set {}={v}", show(&path));
            if let Some(s) = at(entry, &path) {
                *s = v;
            }
            desc
        }
        // A key deleted (mapping members only).
        4 => {
            let Some(path) = pick(rng, &|p| matches!(p.0.last(), Some(J::String(_)))) else {
                return "no key to delete".into();
            };
            let (last, parent) = path.split_last().unwrap_or((&J::Null, &[]));
            if let (Some(J::Object(m)), J::String(k)) = (at(entry, parent), last) {
                m.shift_remove(k);
            }
            format!("delete {}", show(&path))
        }
        // A key added to a mapping (the entry itself included).
        5 => {
            let mut maps: Vec<Vec<J>> = vec![Vec::new()];
            maps.extend(all.iter().filter(|p| p.1).map(|p| p.0.clone()));
            let path = rng.pick(&maps).cloned().unwrap_or_default();
            let key = rng.pick(EXTRA_KEYS).copied().unwrap_or("foo");
            let v = random_value(rng, None);
            let desc = format!("add {}.{key}={v}", show(&path));
            if let Some(J::Object(m)) = at(entry, &path) {
                m.insert(key.to_string(), v);
            }
            desc
        }
        // A list reshaped: emptied, shortened, an element duplicated, unwrapped to its first.
        6 | 7 => {
            let Some(path) = pick(rng, &|p| p.2) else {
                return "no list".into();
            };
            let how = rng.below(4);
            let Some(slot) = at(entry, &path) else {
                return "no list".into();
            };
            let J::Array(items) = slot else {
                return "no list".into();
            };
            let desc = match how {
                0 => {
                    items.clear();
                    "emptied"
                }
                1 => {
                    if !items.is_empty() {
                        let i = rng.below(items.len());
                        items.remove(i);
                    }
                    "shortened"
                }
                2 => {
                    if let Some(first) = items.first().cloned() {
                        items.push(first);
                    }
                    "first element duplicated"
                }
                _ => {
                    let first = items.first().cloned().unwrap_or(J::Null);
                    *slot = first;
                    "unwrapped to its first element"
                }
            };
            format!("list {} {desc}", show(&path))
        }
        // A scalar wrapped in a list.
        8 => {
            let Some(path) = pick(rng, &|p| !p.1 && !p.2) else {
                return "no scalar".into();
            };
            if let Some(s) = at(entry, &path) {
                *s = J::Array(vec![s.clone()]);
            }
            format!("wrap {} in a list", show(&path))
        }
        // The runner relabelled (a real label, or an unknown one).
        _ => {
            let label = if rng.chance(80) {
                rng.pick(labels).cloned().unwrap_or_default()
            } else {
                "nope-runner".to_string()
            };
            let desc = format!("runner={label}");
            if let J::Object(m) = entry {
                m.insert("runner".into(), J::String(label));
            }
            desc
        }
    }
}

/// One edit of the runner file: a label, a node or a hardware fact.
fn mutate_runners(rng: &mut Rng, runners: &mut Map<String, J>) -> String {
    let section = if rng.chance(50) { "labels" } else { "hardware" };
    let Some(J::Object(m)) = runners.get_mut(section) else {
        return format!("no {section}");
    };
    let keys: Vec<String> = m.keys().cloned().collect();
    let Some(key) = rng.pick(&keys).cloned() else {
        return format!("empty {section}");
    };
    if rng.chance(30) {
        m.shift_remove(&key);
        return format!("runners: delete {section}.{key}");
    }
    match m.get_mut(&key) {
        Some(J::Array(nodes)) => {
            if rng.chance(50) {
                nodes.clear();
                format!("runners: {section}.{key} emptied")
            } else {
                nodes.push(J::String(format!("{key}-extra_0")));
                format!("runners: {section}.{key} gains a node")
            }
        }
        Some(J::Object(hw)) => {
            let fields: Vec<String> = hw.keys().cloned().collect();
            let field = rng
                .pick(&fields)
                .cloned()
                .unwrap_or_else(|| "gpus-per-node".into());
            let original = hw.get(&field).cloned();
            let v = random_value(rng, original.as_ref());
            let desc = format!("runners: {section}.{key}.{field}={v}");
            if rng.chance(20) {
                hw.shift_remove(&field);
                return format!("runners: delete {section}.{key}.{field}");
            }
            hw.insert(field, v);
            desc
        }
        _ => format!("runners: {section}.{key} left alone"),
    }
}

/// The YAML text of a case file: JSON (`pretty`: one value a line, else on one line) with the
/// RAW-marked strings as bare plain scalars.
fn write_yaml(v: &J, pretty: bool) -> String {
    let text = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    }
    .unwrap_or_default();
    let marker = serde_json::to_string(RAW).unwrap_or_default();
    let open = marker.trim_end_matches('"'); // `"\u0001raw:`
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find(open) {
        out.push_str(&rest[..i]);
        let after = &rest[i + open.len()..];
        let end = after.find('"').unwrap_or(after.len());
        out.push_str(&after[..end]);
        rest = after.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out + "\n"
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Builds case `i` of a run seeded with `seed`.
pub fn make_case(seeds: &Seeds, seed: u64, i: usize) -> Option<Case> {
    let mut rng = Rng::new(seed ^ (i as u64).wrapping_mul(0x9FB2_1C65_1E98_DF25));
    let labels: Vec<String> = seeds
        .runners
        .get("labels")
        .and_then(J::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let chosen = rng.below(seeds.entries.len());
    let mut picked = vec![chosen];
    for _ in 0..rng.below(3) {
        let other = rng.below(seeds.entries.len());
        if !picked.contains(&other) {
            picked.push(other);
        }
    }
    let mut files: Vec<Map<String, J>> = vec![Map::new(), Map::new()];
    for &p in &picked {
        let (fi, key, entry) = &seeds.entries[p];
        files[*fi].insert(key.clone(), entry.clone());
    }
    let (target_file, target_key, _) = &seeds.entries[chosen];
    let mut target_key = target_key.clone();
    let mut runners = seeds.runners.clone();
    let mut runners_edited = false;
    let mut what = Vec::new();
    for _ in 0..1 + rng.below(2) {
        match rng.below(20) {
            0 | 1 => what.push("unmutated".to_string()),
            2 | 3 => {
                what.push(mutate_runners(&mut rng, &mut runners));
                runners_edited = true;
            }
            4 => {
                // A key renamed: a wildcard (reserved by upstream) or a duplicate in the other file.
                let entry = files[*target_file].shift_remove(&target_key)?;
                if rng.chance(50) {
                    target_key = format!("{target_key}*");
                    files[*target_file].insert(target_key.clone(), entry);
                    what.push(format!("key renamed {target_key}"));
                } else {
                    files[1 - *target_file].insert(target_key.clone(), entry.clone());
                    files[*target_file].insert(target_key.clone(), entry);
                    what.push(format!("key {target_key} in both master files"));
                }
            }
            _ => {
                let entry = files[*target_file].get_mut(&target_key)?;
                what.push(mutate_entry(&mut rng, entry, &labels));
            }
        }
    }
    // Most files keep their entries' original block text, the mutated entry written as one
    // line of flow YAML; the others are JSON throughout.
    let block = rng.chance(70);
    let mut case_files = Vec::new();
    let mut config_files = Vec::new();
    for (fi, m) in files.iter().enumerate() {
        if m.is_empty() && fi != *target_file {
            continue;
        }
        let text = if block && !m.is_empty() {
            m.iter()
                .map(|(k, v)| {
                    let original = seeds
                        .entries
                        .iter()
                        .find(|(f, key, _)| *f == fi && key == k)
                        .map(|(_, _, e)| e);
                    match seeds.sections.get(&(fi, k.clone())) {
                        Some(section) if original == Some(v) => section.clone(),
                        _ => format!(
                            "{}: {}",
                            serde_json::to_string(k).unwrap_or_default(),
                            write_yaml(v, false)
                        ),
                    }
                })
                .collect()
        } else {
            write_yaml(&J::Object(m.clone()), true)
        };
        case_files.push((MASTER_FILES[fi].to_string(), text));
        config_files.push(MASTER_FILES[fi]);
    }
    let runners_text = if runners_edited {
        write_yaml(&J::Object(runners), true)
    } else {
        seeds.runners_text.clone()
    };
    case_files.push((RUNNER_FILE.to_string(), runners_text));
    let argv = command(&mut rng, &config_files, &target_key, &files);
    Some(Case {
        what: what.join("; "),
        files: case_files,
        argv,
    })
}

/// A command line as the workflows and contributors write them.
fn command(
    rng: &mut Rng,
    config_files: &[&str],
    key: &str,
    files: &[Map<String, J>],
) -> Vec<String> {
    let mut argv = Vec::new();
    let full = rng.chance(30);
    argv.push(if full { "full-sweep" } else { "test-config" }.to_string());
    argv.push("--config-files".into());
    argv.extend(words(config_files));
    argv.extend(words(&["--runner-config", RUNNER_FILE]));
    if full {
        for (flag, values) in [
            ("--single-node", None),
            ("--multi-node", None),
            ("--max-conc", Some(&["4", "16", "64", "256"][..])),
            ("--min-conc", Some(&["1", "8", "32"][..])),
            ("--step-size", Some(&["2", "4", "1"][..])),
            ("--max-tp", Some(&["2", "4", "8"][..])),
            ("--seq-lens", Some(&["1k1k", "8k1k"][..])),
        ] {
            if rng.chance(15) {
                argv.push(flag.to_string());
                if let Some(v) = values {
                    argv.push(rng.pick(v).copied().unwrap_or("2").to_string());
                }
            }
        }
        if rng.chance(15) {
            let entry = files.iter().find_map(|m| m.get(key));
            if let Some(p) = entry.and_then(|e| e.get("precision")).and_then(J::as_str) {
                argv.extend(words(&["--precision", p]));
            }
        }
    } else {
        argv.push("--config-keys".into());
        match rng.below(6) {
            0 => argv.extend(files.iter().flat_map(|m| m.keys().cloned())),
            1 => argv.push(format!(
                "{}*",
                key.split('-').next().unwrap_or(key).trim_end_matches('*')
            )),
            _ => argv.push(key.to_string()),
        }
        if rng.chance(15) {
            argv.push("--conc".into());
            for _ in 0..1 + rng.below(2) {
                argv.push(["1", "4", "8", "16", "32", "64", "128", "256"][rng.below(8)].into());
            }
        }
        if rng.chance(15) {
            argv.push("--seq-lens".into());
            argv.push(["1k1k", "8k1k"][rng.below(2)].into());
        }
    }
    match rng.below(10) {
        0 => argv.push("--no-evals".into()),
        1 => argv.push("--evals-only".into()),
        2 => argv.push("--all-evals".into()),
        3 => argv.extend(words(&["--evals-only", "--all-evals"])),
        _ => {}
    }
    if rng.chance(10) {
        argv.push("--scenario-type".into());
        argv.push(
            infx_matrix::ScenarioType::NAMES[rng.below(infx_matrix::ScenarioType::NAMES.len())]
                .into(),
        );
    }
    argv
}

/// Every case of a run.
pub fn cases(seeds: &Seeds, count: usize, seed: u64) -> Vec<Case> {
    (0..count)
        .filter_map(|i| make_case(seeds, seed, i))
        .collect()
}

/// Upstream's answers, one per case, from one Python process.
pub fn run_oracle(python: &Path, matrix_logic: &Path, cases: &[Case]) -> anyhow::Result<Vec<J>> {
    let script = xtask::paths::checkout_root().join("xtask-dev/oracle/matrix_oracle.py");
    let mut input = String::new();
    for c in cases {
        let files: Map<String, J> = c
            .files
            .iter()
            .map(|(p, t)| (p.clone(), J::String(t.clone())))
            .collect();
        input.push_str(&json!({"files": files, "argv": c.argv}).to_string());
        input.push('\n');
    }
    super::oracle::json_lines_exchange(python, &script, matrix_logic, &input, cases.len())
}

/// infx's answer to a case: `cargo xtask matrix` on the same files and arguments.
pub struct Ours {
    pub exit: u8,
    pub stdout: String,
    pub message: String,
    pub code: Option<infx_report::Code>,
}

pub fn ours(case: &Case) -> anyhow::Result<Ours> {
    let dir = tempfile::tempdir()?;
    // `matrix` reads below the tree it is given; in a process already confined to other trees
    // (docs/security.md, "What each command may read") the case's tree is registered as one more.
    // An unconfined process (conformance) stays unconfined.
    if infx_fs::is_confining() {
        infx_fs::confine_to(dir.path()).map_err(|e| anyhow!("{e}"))?;
    }
    for (rel, text) in &case.files {
        let path = dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
    }
    let cmd = match super::matrix::parse_words(case.argv.clone()) {
        Ok(cmd) => cmd,
        Err(exit) => {
            return Ok(Ours {
                exit,
                stdout: String::new(),
                message: "rejected by the command line parser".into(),
                code: None,
            });
        }
    };
    Ok(match xtask::cmd_matrix::execute(&cmd, dir.path()) {
        Ok(stdout) => Ours {
            exit: 0,
            stdout,
            message: String::new(),
            code: None,
        },
        Err(f) => Ours {
            exit: f.code,
            stdout: String::new(),
            code: f.diagnostic.as_ref().map(|d| d.code),
            message: f.message,
        },
    })
}

/// Our answer against upstream's: `Ok(None)` agreement, `Ok(Some(why))` agreement worth
/// listing (upstream crashed where we report a finding), `Err` a disagreement.
pub fn compare(ours: &Ours, theirs: &J) -> Result<Option<String>, String> {
    let their_exit = theirs["exit"].as_i64().unwrap_or(-1);
    let their_error = theirs["error"].as_str().unwrap_or_default();
    let their_reason = their_error.lines().last().unwrap_or_default();
    let head = |s: &str| s.lines().next().unwrap_or_default().to_string();
    if their_exit == 0
        && ours.exit == 1
        && let Some(why) = lax_coercion(ours)
    {
        return Ok(Some(why));
    }
    if i64::from(ours.exit) != their_exit {
        return Err(format!(
            "exit {} (want {their_exit}); ours: {} {}; upstream: {}",
            ours.exit,
            ours.code.map_or("", |c| c.as_str()),
            head(&ours.message),
            their_error.lines().take(4).collect::<Vec<_>>().join(" | ")
        ));
    }
    if their_exit == 0 {
        let want = theirs["stdout"].as_str().unwrap_or_default();
        if ours.stdout != want {
            let at = ours
                .stdout
                .bytes()
                .zip(want.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(ours.stdout.len().min(want.len()));
            let around = |s: &str| {
                let lo = at.saturating_sub(80);
                s.get(lo..(at + 120).min(s.len()))
                    .unwrap_or(s)
                    .chars()
                    .take(200)
                    .collect::<String>()
            };
            return Err(format!(
                "rows differ at byte {at} ({} vs {} bytes):\n      ours: {}\n      want: {}",
                ours.stdout.len(),
                want.len(),
                around(&ours.stdout),
                around(want)
            ));
        }
        return Ok(None);
    }
    // Both reject: when upstream names the entry that failed its validation, ours must be
    // about the same entry.
    if let Some(rest) = their_error.split("Master config entry '").nth(1)
        && let Some((key, _)) = rest.split_once("' failed validation")
        && !ours.message.contains(&format!("'{key}'"))
    {
        return Err(format!(
            "both reject, upstream for entry '{key}'; ours: {} {}",
            ours.code.map_or("", |c| c.as_str()),
            head(&ours.message)
        ));
    }
    let crash = ["TypeError", "KeyError", "AttributeError", "IndexError"]
        .iter()
        .any(|t| their_reason.starts_with(&format!("{t}: ")));
    Ok(crash.then(|| {
        format!(
            "upstream crashes ({}); infx reports {} {}",
            head(their_reason),
            ours.code.map_or("", |c| c.as_str()),
            head(&ours.message)
        )
    }))
}

/// Upstream's pydantic fields are lax: `true` and `"4"` pass as integers, `"yes"` and `1` as
/// booleans, `4.0` as an integer, and the raw value is then copied into the rows. We require
/// native YAML types (docs/config.md, "Deliberate differences from upstream"), so such a case
/// is a documented difference, not a disagreement: `Some(reason)` when our only objection is
/// that `config/type` finding about a value pydantic coerces.
fn lax_coercion(ours: &Ours) -> Option<String> {
    if ours.code != Some(infx_config::codes::TYPE) {
        return None;
    }
    let (_, found) = ours.message.rsplit_once(": expected ")?;
    let (want, got) = found.split_once(", found ")?;
    let quoted = got
        .strip_prefix("string '")
        .and_then(|g| g.strip_suffix('\''));
    let coerced = if want.contains("integer") {
        got.starts_with("boolean ")
            || quoted.is_some_and(|q| q.trim().parse::<i64>().is_ok())
            || got
                .strip_prefix("float ")
                .and_then(|f| f.parse::<f64>().ok())
                .is_some_and(|f| f.fract() == 0.0 && f.is_finite())
    } else if want.starts_with("a boolean") {
        matches!(got, "integer 0" | "integer 1")
            || quoted.is_some_and(|q| {
                [
                    "0", "1", "true", "false", "yes", "no", "on", "off", "t", "f", "y", "n",
                ]
                .contains(&q.to_ascii_lowercase().as_str())
            })
    } else if want.starts_with("a number") {
        got.starts_with("boolean ") || quoted.is_some_and(|q| q.trim().parse::<f64>().is_ok())
    } else {
        false
    };
    coerced.then(|| {
        format!(
            "native types (docs/config.md): upstream's lax pydantic field accepts {got} as {want}; infx reports config/type"
        )
    })
}

/// Runs `count` random cases from `seed` against upstream. `Ok(None)` = the oracle is not
/// available (the reason is printed as a SKIP).
pub fn run(corpus: &Path, count: usize, seed: u64) -> anyhow::Result<Option<super::Outcome>> {
    run_selected(corpus, seed, &super::seeds::Cases::First(count))
}

/// As [`run`], for the cases `which` selects, each reported by its number in the full run.
pub fn run_selected(
    corpus: &Path,
    seed: u64,
    which: &super::seeds::Cases,
) -> anyhow::Result<Option<super::Outcome>> {
    let (python, matrix_logic) = match oracle() {
        Ok(p) => p,
        Err(why) => {
            println!("SKIP: config random differential: {why}");
            return Ok(None);
        }
    };
    let seeds = seeds(corpus)?;
    let (numbers, cases): (Vec<usize>, Vec<Case>) = match which {
        super::seeds::Cases::First(count) => {
            cases(&seeds, *count, seed).into_iter().enumerate().unzip()
        }
        // A case's number is its place among the cases made (`cases` skips a failed make).
        super::seeds::Cases::Only(numbers) => {
            let all = cases(&seeds, numbers.iter().max().map_or(0, |m| m + 1), seed);
            numbers
                .iter()
                .filter_map(|&i| all.get(i).cloned().map(|c| (i, c)))
                .unzip()
        }
    };
    let answers = run_oracle(&python, &matrix_logic, &cases)?;
    let mut outcome = super::Outcome {
        area: "matrix (random configs)",
        total: cases.len(),
        ..Default::default()
    };
    let (mut accepted, mut rejected, mut rows) = (0, 0, 0);
    for (&i, (c, theirs)) in numbers.iter().zip(cases.iter().zip(&answers)) {
        match theirs["exit"].as_i64() {
            Some(0) => {
                accepted += 1;
                rows += theirs["stdout"]
                    .as_str()
                    .map_or(0, |s| s.matches("\"exp-name\"").count());
            }
            _ => rejected += 1,
        }
        let verdict = ours(c)
            .map_err(|e| e.to_string())
            .and_then(|o| compare(&o, theirs));
        match verdict {
            Ok(None) => outcome.agree += 1,
            Ok(Some(why)) => {
                outcome.agree += 1;
                outcome.explained.push(format!("case {i}: {why}"));
            }
            Err(d) => outcome.disagreements.push(format!(
                "case {i} (seed {seed}; {}; {}): {d}",
                c.what,
                c.argv.join(" ")
            )),
        }
    }
    println!(
        "  upstream accepted {accepted} cases ({rows} rows, compared byte for byte) and rejected {rejected}"
    );
    Ok(Some(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(exit: u8, stdout: &str, code: Option<infx_report::Code>, message: &str) -> Ours {
        Ours {
            exit,
            stdout: stdout.into(),
            message: message.into(),
            code,
        }
    }

    #[test]
    fn verdicts_and_rows_must_match_byte_for_byte() {
        let theirs = json!({"exit": 0, "stdout": "[{\"tp\": 4}]\n", "error": ""});
        assert_eq!(
            compare(&ours(0, "[{\"tp\": 4}]\n", None, ""), &theirs),
            Ok(None)
        );
        assert!(compare(&ours(0, "[{\"tp\": 8}]\n", None, ""), &theirs).is_err());
        assert!(compare(&ours(1, "", Some(infx_config::codes::VALUE), "x"), &theirs).is_err());
        let rejected = json!({"exit": 1, "stdout": "", "error": "ValueError: bad"});
        assert!(compare(&ours(0, "[]\n", None, ""), &rejected).is_err());
        assert_eq!(
            compare(
                &ours(1, "", Some(infx_config::codes::VALUE), "x"),
                &rejected
            ),
            Ok(None)
        );
        let crashed = json!({"exit": 1, "stdout": "", "error": "Traceback\nTypeError: no"});
        assert!(
            compare(&ours(1, "", Some(infx_config::codes::TYPE), "x"), &crashed)
                .is_ok_and(|w| w.is_some_and(|w| w.contains("upstream crashes")))
        );
    }

    #[test]
    fn only_values_pydantic_coerces_are_deliberate_differences() {
        let theirs = json!({"exit": 0, "stdout": "[]\n", "error": ""});
        let msg = |m: &str| format!("Master config entry 'k' failed validation: a.tp: {m}");
        for coerced in [
            "expected an integer, found boolean true",
            "expected a positive integer, found string '4'",
            "expected an integer, found float 4.0",
            "expected a boolean (true or false), found string 'yes'",
        ] {
            let r = compare(
                &ours(1, "", Some(infx_config::codes::TYPE), &msg(coerced)),
                &theirs,
            );
            assert!(r.as_ref().is_ok_and(Option::is_some), "{coerced}: {r:?}");
        }
        for real in [
            "expected an integer, found string 'eight'",
            "expected an integer, found float 4.5",
            "expected a string, found integer 4",
        ] {
            let r = compare(
                &ours(1, "", Some(infx_config::codes::TYPE), &msg(real)),
                &theirs,
            );
            assert!(r.is_err(), "{real}: {r:?}");
        }
    }

    #[test]
    fn marked_strings_are_written_as_plain_scalars() {
        let v = json!({"a": format!("{RAW}yes"), "b": "yes", "c": [format!("{RAW}0x10")]});
        let text = write_yaml(&v, true);
        assert!(text.contains("\"a\": yes,"), "{text}");
        assert!(text.contains("\"b\": \"yes\""), "{text}");
        assert!(text.contains("    0x10\n"), "{text}");
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;

    /// Upstream validates the master files before the runner file: with both broken, the
    /// finding `matrix` stops on is the entry's (found by the differential, seed 3 case 17).
    #[test]
    fn a_broken_entry_is_reported_before_a_broken_runner_file() {
        let entry = "k-fp8-b200-sglang:\n  image: i\n  model: m\n  model-prefix: k\n  runner: b200\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {tp: eight, conc-start: 1, conc-end: 4}\n";
        let runners = "labels:\n  b200: []\n";
        let case = Case {
            what: String::new(),
            files: vec![
                (MASTER_FILES[0].to_string(), entry.to_string()),
                (RUNNER_FILE.to_string(), runners.to_string()),
            ],
            argv: words(&[
                "test-config",
                "--config-files",
                MASTER_FILES[0],
                "--runner-config",
                RUNNER_FILE,
                "--config-keys",
                "k-fp8-b200-sglang",
            ]),
        };
        let o = ours(&case).expect("runs");
        assert_eq!(o.exit, 1);
        assert_eq!(o.code, Some(infx_config::codes::TYPE), "{}", o.message);
        assert!(o.message.contains("'k-fp8-b200-sglang'"), "{}", o.message);
    }
}
