//! `cargo xtask conformance recipes`: every case of the srtctl corpus (`srtctl-golden`), run
//! through infx-recipe and compared with srtctl's recorded outcome.
//!
//! Agreement: same exit status; accepted cases: every variant's fully defaulted configuration
//! equals `derived/config_N.json` exactly (key order included), and `resolve-override` variants
//! equal `derived/resolved_N.yaml` semantically; rejected cases: the same failing fields (for
//! marshmallow dicts, the set of field paths) or the same message (rules, selectors, zips).
//! Accepted cases with a runtime-mock capture (109: SGLang, vLLM, TRT-LLM, mocker) must also launch the same worker,
//! router and frontend command lines as srtctl's mock runtime recorded.
//! The schema-2 cases (`inferencex-newest`) are run through the same c88ef731 emulation, which
//! rejects them exactly as srtctl does; infx's own schema-2 validation is separate.

use infx_recipe::schema1::{Failure, dotted};
use infx_recipe::srtctl::{RunError, dry_run};
use infx_recipe::{RecipeFile, RecipeRef, load_recipe_file};
use serde_json::Value as J;
use std::collections::BTreeSet;
use std::path::Path;

struct Case {
    id: String,
    command: String,
    selector: String,
    kind: String,
    exit: i32,
}

fn read_index(corpus: &Path) -> anyhow::Result<Vec<Case>> {
    let text = std::fs::read_to_string(corpus.join("srtctl-golden/index.tsv"))?;
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 6 {
            continue;
        }
        out.push(Case {
            id: f[0].to_string(),
            command: f[2].to_string(),
            selector: f[3].to_string(),
            kind: f[4].to_string(),
            exit: f[5].trim().parse().unwrap_or(-1),
        });
    }
    Ok(out)
}

pub fn run(corpus: &Path) -> anyhow::Result<super::Outcome> {
    let cases = read_index(corpus)?;
    let mut o = super::Outcome {
        area: "recipes",
        ..Default::default()
    };
    for c in &cases {
        o.total += 1;
        let dir = corpus.join("srtctl-golden/cases").join(&c.id);
        match check_case(&dir, c) {
            Ok(()) => o.agree += 1,
            Err(why) => o.disagreements.push(format!("{}: {why}", c.id)),
        }
    }
    Ok(o)
}

fn golden_error(dir: &Path) -> String {
    let out = std::fs::read_to_string(dir.join("normalized/stdout.txt")).unwrap_or_default();
    let err = std::fs::read_to_string(dir.join("normalized/stderr.txt")).unwrap_or_default();
    let text = match out.find("Error: ") {
        Some(i) => out[i + 7..].to_string(),
        None => match err.rfind("Error: ") {
            Some(i) => err[i + 7..].to_string(),
            None => out.trim().to_string(),
        },
    };
    norm_ws(&text)
}

fn norm_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn meta_recipe_file(dir: &Path) -> Option<String> {
    let meta: J =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).ok()?).ok()?;
    meta["recipe_file"].as_str().map(str::to_string)
}

fn check_case(dir: &Path, c: &Case) -> Result<(), String> {
    let golden_ok = c.exit == 0;
    if c.kind == "missing" {
        let r = load_recipe_file(&dir.join("does-not-exist.yaml"));
        return match r {
            Err(d) if d.code == infx_recipe::codes::MISSING_FILE && !golden_ok => Ok(()),
            _ => Err("missing file not reported".into()),
        };
    }
    let Some(fname) = meta_recipe_file(dir) else {
        return Err("meta.json has no recipe_file".into());
    };
    let arg = if c.selector.is_empty() {
        fname.clone()
    } else {
        format!("{fname}:{}", c.selector)
    };
    let reference = match RecipeRef::parse_srtctl(&arg) {
        Ok(r) => r,
        Err(d) => {
            return if !golden_ok && golden_error(dir).contains(&norm_ws(&d.message)) {
                Ok(())
            } else {
                Err(format!("selector rejected: {}", d.message))
            };
        }
    };
    let file = match load_recipe_file(&dir.join(&reference.path)) {
        Ok(f) => f,
        Err(d) => {
            return if golden_ok {
                Err(format!("load failed: {}", d.message))
            } else {
                Ok(())
            };
        }
    };
    let cluster = std::fs::read_to_string(dir.join("srtslurm.yaml"))
        .ok()
        .and_then(|t| infx_yaml::parse_str(Path::new("srtslurm.yaml"), &t).ok());
    if c.command == "resolve-override" {
        return check_resolve(dir, &file, golden_ok);
    }
    let run = dry_run(&file, reference.selector.as_ref(), cluster.as_ref());
    // Every variant that loaded must equal srtctl's dump.
    for (i, (v, cfg)) in run.configs.iter().enumerate() {
        let p = dir.join(format!("derived/config_{}.json", i + 1));
        let Ok(text) = std::fs::read_to_string(&p) else {
            if c.kind == "sweep" {
                continue; // sweeps record no schema dump; the exit code is compared
            }
            return Err(format!(
                "infx accepted variant {} ({}) that srtctl did not dump",
                i + 1,
                v.label
            ));
        };
        let want: J = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        if &want != cfg {
            return Err(format!(
                "variant {} config differs: {}",
                i + 1,
                first_diff(&want, cfg, "")
            ));
        }
    }
    match (&run.error, golden_ok) {
        (None, true) => match run.configs.first() {
            Some((v, _)) if cluster.is_none() => compare_launches(dir, v),
            _ => Ok(()),
        },
        (None, false) => Err(format!(
            "srtctl rejected ({}), infx accepted",
            golden_error(dir)
        )),
        (Some(e), true) => Err(format!("infx rejected: {}", describe(e))),
        (Some(e), false) => compare_failure(e, &golden_error(dir)),
    }
}

/// Cases with a runtime-mock capture: the worker, router and frontend command lines
/// infx renders for the first variant equal the ones srtctl launched (as multisets), after
/// masking mock artefacts (addresses, node names in `--dump-config-to` paths).
fn compare_launches(dir: &Path, v: &infx_recipe::Variant) -> Result<(), String> {
    let Ok(text) = std::fs::read_to_string(dir.join("runtime-mock/srun_calls.jsonl")) else {
        return Ok(());
    };
    let mut theirs: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        let Ok(call) = serde_json::from_str::<J>(line) else {
            continue;
        };
        match (&call["kwargs"]["command"], &call["args"]) {
            (J::Array(a), _) | (_, J::Array(a)) => theirs.push(argv_of(a)),
            _ => continue,
        }
    }
    // A mock run cut at 30 s (exit 124: a readiness wait the golden mock did not short-circuit)
    // recorded only the launches before the wait; those must all be among infx's.
    let cut = std::fs::read_to_string(dir.join("runtime-mock/exit_code.txt"))
        .is_ok_and(|c| c.trim() == "124");
    if cut {
        return launches_include(&theirs, v);
    }
    compare_argvs(&theirs, v).map(|_| ())
}

/// Every srtctl launch (as a multiset) is one infx renders for `v`.
fn launches_include(theirs: &[Vec<String>], v: &infx_recipe::Variant) -> Result<(), String> {
    let mut mine: Vec<String> = infx_recipe::render(v)
        .processes
        .iter()
        .filter(|p| matches!(p.kind.as_str(), "worker" | "router" | "frontend"))
        .map(|p| mask(&p.argv))
        .collect();
    for t in theirs
        .iter()
        .filter(|a| is_rendered_kind(a))
        .map(|a| mask(a))
    {
        match mine.iter().position(|m| *m == t) {
            Some(i) => {
                mine.swap_remove(i);
            }
            None => {
                return Err(format!(
                    "srtctl launched {t:?}, infx renders no such command"
                ));
            }
        }
    }
    Ok(())
}

/// A recorded command as strings (numbers as JSON writes them).
pub(super) fn argv_of(items: &[J]) -> Vec<String> {
    items
        .iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| x.to_string())
        })
        .collect()
}

/// Whether a recorded srun command is one infx renders: an engine worker, a router or a
/// frontend (not head infrastructure, model staging or benchmark clients).
fn is_rendered_kind(argv: &[String]) -> bool {
    const KINDS: &[&str] = &[
        "dynamo.sglang",
        "sglang.launch_server",
        "sglang_router.launch_router",
        "dynamo.frontend",
        "dynamo.vllm",
        "dynamo.trtllm",
        "trtllm-serve",
        "dynamo.mocker",
    ];
    let vllm_serve = argv.first().is_some_and(|a| a.ends_with("vllm"))
        && argv.get(1).is_some_and(|a| a == "serve");
    vllm_serve || argv.iter().any(|t| KINDS.contains(&t.as_str()))
}

/// srtctl's launches (`theirs`, every srun command it made) against what infx renders for
/// `v`: equal as multisets of masked command lines. `Ok` names the variant's (top-level)
/// engine, for the per-engine counts.
pub(super) fn compare_argvs(
    theirs: &[Vec<String>],
    v: &infx_recipe::Variant,
) -> Result<String, String> {
    let mut theirs: Vec<String> = theirs
        .iter()
        .filter(|a| is_rendered_kind(a))
        .map(|a| mask(a))
        .collect();
    let rendered = infx_recipe::render(v);
    let mut mine: Vec<String> = rendered
        .processes
        .iter()
        .filter(|p| matches!(p.kind.as_str(), "worker" | "router" | "frontend"))
        .map(|p| mask(&p.argv))
        .collect();
    theirs.sort();
    mine.sort();
    if theirs == mine {
        return Ok(rendered.engine);
    }
    let missing: Vec<&String> = theirs
        .iter()
        .filter(|t| !mine.contains(t))
        .take(1)
        .collect();
    let extra: Vec<&String> = mine
        .iter()
        .filter(|m| !theirs.contains(m))
        .take(1)
        .collect();
    Err(format!(
        "launch commands differ ({} srtctl vs {} infx); srtctl: {missing:?}; infx: {extra:?}",
        theirs.len(),
        mine.len()
    ))
}

fn mask(argv: &[String]) -> String {
    let toks: Vec<String> = argv
        .iter()
        .map(|t| {
            if t.starts_with("<LOG_DIR>/") && t.ends_with("_config.json") {
                return "<CFG>".to_string();
            }
            mask_addresses(t)
        })
        .collect();
    toks.join(" ")
}

/// Node addresses (srtctl's mock `127.0.0.1`, infx's `<ipN>` placeholders) as `<IP>`.
fn mask_addresses(text: &str) -> String {
    let mut out = text.replace("127.0.0.1", "<IP>");
    while let Some(i) = out.find("<ip") {
        let Some(j) = out[i..].find('>') else { break };
        out.replace_range(i..i + j + 1, "<IP>");
    }
    out
}

/// Every worker's rendered environment against srtctl's launches (`theirs`: each srun's
/// command and environment): some launch of the same masked command sets every variable infx
/// renders to the same value (addresses masked). `CUDA_VISIBLE_DEVICES` is left out, as srtctl
/// passes the GPUs to srun, not in the environment; srtctl's runtime variables infx does not
/// render (ports, etcd and NATS endpoints, …) are not asked for (docs/recipe.md, "Random
/// differential").
pub(super) fn compare_envs(
    theirs: &[(Vec<String>, &serde_json::Map<String, J>)],
    v: &infx_recipe::Variant,
) -> Result<(), String> {
    let theirs: Vec<(String, &serde_json::Map<String, J>)> = theirs
        .iter()
        .map(|(argv, env)| (mask(argv), *env))
        .collect();
    for p in infx_recipe::render(v).processes {
        if p.kind != "worker" {
            continue;
        }
        let command = mask(&p.argv);
        let wanted: Vec<(&String, String)> = p
            .env
            .iter()
            .filter(|(k, _)| k != "CUDA_VISIBLE_DEVICES")
            .map(|(k, val)| (k, mask_addresses(val)))
            .collect();
        let set_alike = |env: &serde_json::Map<String, J>| {
            wanted.iter().all(|(k, val)| {
                env.get(*k)
                    .and_then(J::as_str)
                    .is_some_and(|theirs| mask_addresses(theirs) == *val)
            })
        };
        if !theirs
            .iter()
            .any(|(c, env)| *c == command && set_alike(env))
        {
            let first_wrong = theirs
                .iter()
                .filter(|(c, _)| *c == command)
                .find_map(|(_, env)| {
                    wanted.iter().find(|(k, val)| {
                        env.get(*k).and_then(J::as_str).map(mask_addresses) != Some(val.clone())
                    })
                });
            return Err(format!(
                "{} {}[{}]: environment differs from srtctl's launch: {}",
                p.kind,
                p.role,
                p.index,
                match first_wrong {
                    Some((k, val)) => format!("infx sets {k}={val}"),
                    None => "srtctl launched no such command".to_string(),
                }
            ));
        }
    }
    Ok(())
}

pub(super) fn describe(e: &RunError) -> String {
    match e {
        RunError::Diag(d) => d.message.clone(),
        RunError::Load {
            failure: Failure::Rule { message, .. },
            ..
        } => message.clone(),
        RunError::Load {
            failure: Failure::Fields(errs),
            ..
        } => infx_recipe::schema1::message_dict(errs),
    }
}

pub(super) fn compare_failure(e: &RunError, golden: &str) -> Result<(), String> {
    match e {
        RunError::Load {
            failure: Failure::Fields(errs),
            ..
        } => {
            let mine: BTreeSet<String> = errs.iter().map(|e| dotted(&e.path)).collect();
            let dict_start = golden.find('{').unwrap_or(0);
            let theirs = py_dict_paths(&golden[dict_start..]);
            if theirs == mine {
                Ok(())
            } else {
                Err(format!(
                    "failing fields differ: srtctl {theirs:?}, infx {mine:?}"
                ))
            }
        }
        other => {
            // srtctl prints errors through rich markup, which swallows `[i]` (a style tag).
            let mine = norm_ws(&describe(other).replace("[i]", ""));
            if golden.ends_with(&mine) || golden.contains(&mine) {
                Ok(())
            } else {
                Err(format!("message differs: srtctl {golden:?}, infx {mine:?}"))
            }
        }
    }
}

fn check_resolve(dir: &Path, file: &RecipeFile, golden_ok: bool) -> Result<(), String> {
    match file.expand(None) {
        Err(d) => {
            if golden_ok {
                Err(format!("infx rejected: {}", d.message))
            } else if golden_error(dir).contains(&norm_ws(&d.message)) {
                Ok(())
            } else {
                Err(format!("message differs: {}", d.message))
            }
        }
        Ok(vs) => {
            if !golden_ok {
                return Err("srtctl rejected, infx expanded".into());
            }
            for (i, v) in vs.iter().enumerate() {
                let p = dir.join(format!("derived/resolved_{}.yaml", i + 1));
                let text =
                    std::fs::read_to_string(&p).map_err(|_| format!("no {}", p.display()))?;
                let want = infx_yaml::parse_str(&p, &text).map_err(|d| d.message)?;
                if want != *v.tree {
                    return Err(format!("resolved variant {} ({}) differs", i + 1, v.label));
                }
            }
            if dir
                .join(format!("derived/resolved_{}.yaml", vs.len() + 1))
                .exists()
            {
                return Err("srtctl resolved more variants".into());
            }
            Ok(())
        }
    }
}

pub(super) fn first_diff(want: &J, got: &J, path: &str) -> String {
    match (want, got) {
        (J::Object(a), J::Object(b)) => {
            let ka: Vec<&String> = a.keys().collect();
            let kb: Vec<&String> = b.keys().collect();
            if ka != kb {
                return format!("{path}: keys {ka:?} vs {kb:?}");
            }
            for (k, v) in a {
                if let Some(w) = b.get(k)
                    && v != w
                {
                    return first_diff(v, w, &format!("{path}.{k}"));
                }
            }
            format!("{path}: ?")
        }
        _ => format!("{path}: srtctl {want} vs infx {got}"),
    }
}

/// Leaf paths of a Python dict literal of error messages (`{'a': {'b': ['msg']}}` → `a.b`).
fn py_dict_paths(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let b = s.as_bytes();
    let mut stack: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    let mut i = 0;
    let mut depth_list = 0;
    while i < b.len() {
        match b[i] {
            b'{' if depth_list == 0 => {
                if let Some(k) = pending.take() {
                    stack.push(k);
                }
                i += 1;
            }
            b'}' if depth_list == 0 => {
                stack.pop();
                i += 1;
            }
            b'[' => {
                if depth_list == 0
                    && let Some(k) = pending.take()
                {
                    let mut p = stack.clone();
                    p.push(k);
                    out.insert(p.join("."));
                }
                depth_list += 1;
                i += 1;
            }
            b']' => {
                depth_list -= 1;
                i += 1;
            }
            q @ (b'\'' | b'"') => {
                let mut j = i + 1;
                let mut text = String::new();
                while j < b.len() && b[j] != q {
                    if b[j] == b'\\' && j + 1 < b.len() {
                        j += 1;
                    }
                    text.push(b[j] as char);
                    j += 1;
                }
                if depth_list == 0 {
                    // A key when followed by ':'.
                    let rest = s[j + 1..].trim_start();
                    if rest.starts_with(':') {
                        pending = Some(text);
                    }
                }
                i = j + 1;
            }
            b'0'..=b'9' if depth_list == 0 => {
                let mut j = i;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if s[j..].trim_start().starts_with(':') {
                    pending = Some(s[i..j].to_string());
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dict_paths() {
        let p = py_dict_paths(
            "{'model': {'container': ['Missing data for required field.']}, 'bogus': ['Unknown field.'], 'env': {'X': {'value': ['Not a valid string.']}}}",
        );
        let want: BTreeSet<String> = ["model.container", "bogus", "env.X.value"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(p, want);
    }
}
