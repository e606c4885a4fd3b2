//! Check 11: agentic speculative-decoding points use the golden acceptance length (AL).
//!
//! Two modes: `Pinned` ([Aug] / the verifier): the recipe hard-codes the simulated AL and it must
//! equal the golden cell; `Injected` ([Oct] AGENTS.md): the connector injects the value, so a
//! hard-coded AL is an error and only the curve and cell must exist.

use crate::codes;
use crate::recipe::{Findings, Variant, scalar_text, walk};
use infx_report::{Diagnostic, Span};
use infx_yaml::{Node, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) const CODE: infx_report::Code = codes::GOLDEN_AL;
pub(crate) const CODE_HARDCODED: infx_report::Code = codes::GOLDEN_AL_HARDCODED;
pub(crate) const CODE_CURVE: infx_report::Code = codes::GOLDEN_AL_CURVE;
pub(crate) const CODE_FILE: infx_report::Code = codes::GOLDEN_AL_FILE;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// `Injected` for the [Oct] layout (the tree has lane blocks `configs/srt-recipes/`),
    /// `Pinned` otherwise; resolved by [`crate::ReviewInputs::effective_golden_mode`].
    #[default]
    Auto,
    /// The recipe pins the simulated AL; it must equal the golden cell.
    Pinned,
    /// The launcher injects the golden AL; recipes must not hard-code one.
    Injected,
}

/// One golden curve file: stem, model key, `mode -> k -> AL in hundredths`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Curve {
    pub stem: String,
    pub path: PathBuf,
    pub model: String,
    pub modes: BTreeMap<String, BTreeMap<u64, i64>>,
}

/// Golden curves by stem.
pub type Golden = BTreeMap<String, Curve>;

/// Hundredths of a decimal text (`2.49` → 249), rounding half away from zero.
pub(crate) fn hundredths(t: &str) -> Option<i64> {
    let v: f64 = t.trim().parse().ok()?;
    v.is_finite().then(|| (v * 100.0).round() as i64)
}

pub(crate) fn fmt_al(h: i64) -> String {
    format!("{}.{:02}", h / 100, (h % 100).abs())
}

/// Loads one curve file (validity rules of the [Oct] loader). `path` names the file in messages.
pub(crate) fn parse_curve(stem: &str, path: &Path, root: &Node) -> Result<Curve, Diagnostic> {
    let err = |m: String| Diagnostic::error(CODE_FILE, m).at(path, root.span);
    if stem.is_empty()
        || !stem
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b))
    {
        return Err(err(format!(
            "golden curve name `{stem}` must match [a-z0-9_.-]+"
        )));
    }
    let Some(map) = root.as_map().filter(|m| m.len() == 1) else {
        return Err(err(
            "a golden curve file has exactly one top-level key (the model)".into(),
        ));
    };
    let Some((model, _, modes_node)) = map.iter().next() else {
        return Err(err("empty golden curve".into()));
    };
    let Some(modes_map) = modes_node.as_map().filter(|m| !m.is_empty()) else {
        return Err(err(format!(
            "`{model}` needs thinking_on and/or thinking_off"
        )));
    };
    let mut modes = BTreeMap::new();
    for (mode, mnode, cells) in modes_map.iter() {
        if mode != "thinking_on" && mode != "thinking_off" {
            return Err(Diagnostic::error(
                CODE_FILE,
                format!("unknown mode `{mode}` (thinking_on, thinking_off)"),
            )
            .at(path, mnode.span));
        }
        let Some(cells) = cells.as_map().filter(|c| !c.is_empty()) else {
            return Err(
                Diagnostic::error(CODE_FILE, format!("mode `{mode}` has no cells"))
                    .at(path, mnode.span),
            );
        };
        let mut row = BTreeMap::new();
        for (kn, v) in cells.iter_nodes() {
            let k = match kn.value {
                Value::Int(k) if k > 0 => k as u64,
                _ => {
                    return Err(Diagnostic::error(
                        CODE_FILE,
                        "draft length must be a positive integer",
                    )
                    .at(path, kn.span));
                }
            };
            let al = match &v.value {
                Value::Int(_) | Value::Float(_) => scalar_text(v).and_then(|t| hundredths(&t)),
                _ => None,
            };
            match al {
                Some(h) if h >= 100 && h <= (k as i64 + 1) * 100 => {
                    row.insert(k, h);
                }
                _ => {
                    return Err(Diagnostic::error(
                        CODE_FILE,
                        format!("AL for k={k} must be a number with 1 <= AL <= {}", k + 1),
                    )
                    .at(path, v.span));
                }
            }
        }
        modes.insert(mode.to_string(), row);
    }
    Ok(Curve {
        stem: stem.to_string(),
        path: path.to_path_buf(),
        model: model.to_string(),
        modes,
    })
}

/// The curve stem for (model prefix, method, draft model, draft sampling method)
/// (docs/review.md, "Golden curve names").
pub(crate) fn curve_stem(
    prefix: &str,
    method: &str,
    draft_model: Option<&str>,
    sample: Option<&str>,
) -> Result<String, String> {
    let mut m = method.to_ascii_lowercase();
    if m == "eagle" || m == "nextn" {
        m = if prefix == "minimaxm3" {
            "eagle3".into()
        } else {
            "mtp".into()
        };
    }
    if matches!(prefix, "dsv4" | "dsv4dspark" | "dsv4dsparkprob") && m == "dspark" {
        return Ok("dsv4-pro-0813-dspark".into());
    }
    if prefix == "minimaxm3"
        && m == "eagle3"
        && draft_model.is_some_and(|d| d.to_ascii_lowercase().contains("gqa"))
    {
        return Ok("minimaxm3_eagle3_gqa".into());
    }
    if prefix == "kimik3" && m == "dspark" {
        return match sample {
            Some("probabilistic") => Ok(
                "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method".into(),
            ),
            Some("greedy") | None => Ok("kimik3_dspark".into()),
            Some(other) => Err(format!(
                "draft_sample_method `{other}` has no kimik3 DSpark curve"
            )),
        };
    }
    Ok(format!("{prefix}_{m}"))
}

/// What a variant says about speculative decoding and simulated acceptance.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpecInfo<'a> {
    pub engine: &'static str,
    pub method: Option<String>,
    pub k: Option<u64>,
    pub draft_model: Option<String>,
    pub sample: Option<String>,
    /// Where the speculative config is written.
    pub at: Option<&'a Node>,
    /// Hard-coded simulated AL (already converted from the engine's encoding) and its node.
    pub simulated: Vec<(i64, &'a Node, &'static str)>,
    pub thinking: Option<String>,
    pub model_prefix: Option<String>,
}

fn u64_of(n: &Node) -> Option<u64> {
    scalar_text(n).and_then(|t| t.trim().parse().ok())
}

/// Reads the speculative setup of one variant (SGLang, vLLM, TRT-LLM spellings). The method and
/// draft length come from the generation role (decode / aggregated) when roles differ.
pub(crate) fn spec_info(v: &Node) -> SpecInfo<'_> {
    let mut s = spec_info_in(v);
    let roles = crate::recipe::role_arg_maps(v);
    let generation = roles
        .iter()
        .filter(|(r, _)| !crate::recipe::is_prefill_role(r))
        .map(|(_, n)| spec_info_in(n))
        .find(|g| g.method.is_some());
    if let Some(g) = generation {
        s.engine = if g.engine.is_empty() {
            s.engine
        } else {
            g.engine
        };
        s.method = g.method;
        s.k = g.k;
        s.at = g.at;
        s.draft_model = g.draft_model.or(s.draft_model);
        s.sample = g.sample.or(s.sample);
    }
    s
}

fn spec_info_in(v: &Node) -> SpecInfo<'_> {
    let mut s = SpecInfo::default();
    walk(v, &mut |k, _, val| match k {
        "speculative-algorithm" | "speculative_algorithm" if !val.is_null() => {
            s.engine = "sglang";
            s.method = scalar_text(val);
            s.at = Some(val);
        }
        "speculative-num-steps" => s.k = s.k.or_else(|| u64_of(val)),
        "speculative-dspark-block-size" => s.k = u64_of(val).or(s.k),
        "speculative-config" | "speculative_config" => {
            let json = match &val.value {
                Value::Str(t) => serde_json::from_str::<serde_json::Value>(t).ok(),
                _ => None,
            };
            let get = |key: &str| -> Option<String> {
                match &json {
                    Some(j) => j.get(key).map(|x| {
                        x.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| x.to_string())
                    }),
                    None => val.get(key).and_then(scalar_text),
                }
            };
            if let Some(dt) = get("decoding_type") {
                s.engine = "trtllm";
                s.method = Some(dt);
                s.k = get("max_draft_len")
                    .or_else(|| get("num_nextn_predict_layers"))
                    .and_then(|t| t.parse().ok());
            } else if let Some(m) = get("method") {
                s.engine = "vllm";
                s.method = Some(m);
                s.k = get("num_speculative_tokens").and_then(|t| t.parse().ok());
                s.draft_model = get("model");
                s.sample = get("draft_sample_method");
                if let Some(al) = get("synthetic_acceptance_length").and_then(|t| hundredths(&t)) {
                    s.simulated.push((al, val, "synthetic_acceptance_length"));
                }
            }
            s.at = Some(val);
        }
        "SGLANG_SIMULATE_ACC_LEN" => {
            if let Some(h) = scalar_text(val).and_then(|t| hundredths(&t)) {
                s.simulated.push((h, val, "SGLANG_SIMULATE_ACC_LEN"));
            }
        }
        "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS" => {
            // TRT-LLM takes AL - 1.
            if let Some(h) = scalar_text(val).and_then(|t| hundredths(&t)) {
                s.simulated
                    .push((h + 100, val, "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"));
            }
        }
        "THINKING_MODE" => s.thinking = scalar_text(val),
        "MODEL_PREFIX" => s.model_prefix = scalar_text(val),
        _ => {}
    });
    s
}

/// Context of a recipe that the recipe itself does not say (from the master-config binding).
#[derive(Clone, Debug, Default)]
pub(crate) struct Context {
    pub model_prefix: Option<String>,
    pub agentic: bool,
    /// Master-config rows that launch the recipe as a benchmark point (with their legacy
    /// synthetic-acceptance settings). Empty: an unbound or eval-only recipe.
    pub usages: Vec<crate::masters::Usage>,
}

impl Context {
    fn injected_by_launcher(&self) -> bool {
        self.usages.iter().any(|u| u.synthetic)
    }
}

/// Check 11 over the variants of one recipe, and over the master rows that launch it.
pub(crate) fn check_recipe(
    path: &Path,
    vars: &[Variant<'_>],
    ctx: &Context,
    golden: &Golden,
    mode: Mode,
) -> Vec<Diagnostic> {
    let mut f = Findings::default();
    for var in vars {
        for d in check_variant(path, &var.node, ctx, golden, mode) {
            f.push(d, &var.name);
        }
    }
    let mut out = f.finish(vars.len() > 1);
    let mut reported = std::collections::BTreeSet::new();
    for u in ctx.usages.iter().filter(|u| u.synthetic) {
        let Some((text, span)) = &u.length else {
            continue;
        };
        if !reported.insert((u.master.clone(), span.start.offset())) {
            continue;
        }
        let at = |d: Diagnostic| d.at(&u.master, *span);
        if mode == Mode::Injected {
            out.push(at(Diagnostic::error(CODE_HARDCODED, format!("`{}`: SYNTHETIC_ACCEPTANCE_LENGTH={text} hard-codes the simulated acceptance length", u.key)))
                .with_help("remove it; the connector injects the golden value"));
            continue;
        }
        if !u.agentic {
            out.push(at(Diagnostic::error(CODE, format!("`{}`: synthetic acceptance on a non-agentic (fixed-sequence) benchmark", u.key)))
                .with_help("fixed-sequence spec-decode benchmarks measure real acceptance; remove SYNTHETIC_ACCEPTANCE*"));
            continue;
        }
        let Some(h) = hundredths(text) else {
            out.push(at(Diagnostic::error(
                CODE,
                format!(
                    "`{}`: SYNTHETIC_ACCEPTANCE_LENGTH={text} is not a number",
                    u.key
                ),
            )));
            continue;
        };
        let chosen = vars
            .iter()
            .filter(|v| u.selector.as_deref().is_none_or(|sel| v.name == sel));
        for v in chosen {
            let s = spec_info(&v.node);
            let Ok((gold, stem, thinking, k)) = lookup(&s, ctx, golden) else {
                continue;
            };
            if h != gold {
                out.push(
                    at(Diagnostic::error(
                        CODE,
                        format!("`{}`: SYNTHETIC_ACCEPTANCE_LENGTH={text} does not match the golden AL {} ({stem} {thinking}[{k}])", u.key, fmt_al(gold)),
                    ))
                    .with_help(format!("set it to {}", fmt_al(gold))),
                );
                break;
            }
        }
    }
    out
}

/// The golden cell for a variant: (AL hundredths, stem, thinking mode, k), or why there is none.
pub(crate) fn lookup(
    s: &SpecInfo<'_>,
    ctx: &Context,
    golden: &Golden,
) -> Result<(i64, String, String, u64), String> {
    let method = s.method.clone().ok_or("not speculative")?;
    let prefix = ctx
        .model_prefix
        .clone()
        .or(s.model_prefix.clone())
        .ok_or("unknown model prefix")?;
    let stem = curve_stem(
        &prefix,
        &method,
        s.draft_model.as_deref(),
        s.sample.as_deref(),
    )?;
    let thinking = s.thinking.clone().unwrap_or_else(|| "thinking_on".into());
    let k = s.k.ok_or("unknown draft length")?;
    let gold = golden
        .get(&stem)
        .and_then(|c| c.modes.get(&thinking))
        .and_then(|m| m.get(&k))
        .copied()
        .ok_or("no golden cell")?;
    Ok((gold, stem, thinking, k))
}

fn check_variant(
    path: &Path,
    v: &Node,
    ctx: &Context,
    golden: &Golden,
    mode: Mode,
) -> Vec<Diagnostic> {
    let s = spec_info(v);
    let mut out = Vec::new();
    let Some(method) = s.method.clone() else {
        // Not speculative: simulated acceptance makes no sense here.
        for (_, n, name) in &s.simulated {
            out.push(
                Diagnostic::error(
                    CODE,
                    format!("`{name}` is set but the recipe does not use speculative decoding"),
                )
                .at(path, n.span),
            );
        }
        return out;
    };
    let at = s.at.map(|n| n.span).unwrap_or(Span::line(1));
    if !ctx.agentic {
        for (_, n, name) in &s.simulated {
            out.push(
                Diagnostic::error(
                    CODE,
                    format!("`{name}` simulates acceptance on a non-agentic benchmark"),
                )
                .at(path, n.span)
                .with_help(
                    "fixed-sequence spec-decode benchmarks measure real acceptance; remove it",
                ),
            );
        }
        return out;
    }
    if mode == Mode::Injected {
        for (_, n, name) in &s.simulated {
            out.push(
                Diagnostic::error(CODE_HARDCODED, format!("`{name}` hard-codes the simulated acceptance length"))
                    .at(path, n.span)
                    .with_help("remove it; the srt_slurm connector injects the golden value from MODEL_PREFIX and THINKING_MODE"),
            );
        }
    } else if s.simulated.is_empty() && ctx.usages.is_empty() {
        // No master row launches it as a benchmark point (unbound or eval-only): nothing to pin.
        return out;
    } else if s.simulated.is_empty() && !ctx.injected_by_launcher() {
        out.push(
            Diagnostic::error(CODE, "agentic speculative decoding without a simulated acceptance length (real acceptance)")
                .at(path, at)
                .with_help("set the engine's simulated acceptance length to the golden value"),
        );
    }
    let prefix = ctx.model_prefix.clone().or(s.model_prefix.clone());
    let Some(prefix) = prefix else {
        out.push(
            Diagnostic::note(CODE, "not run: the model prefix of this recipe is unknown (no master-config entry binds it, no MODEL_PREFIX)")
                .at(path, at),
        );
        return out;
    };
    let stem = match curve_stem(
        &prefix,
        &method,
        s.draft_model.as_deref(),
        s.sample.as_deref(),
    ) {
        Ok(stem) => stem,
        Err(e) => {
            out.push(Diagnostic::error(CODE_CURVE, e).at(path, at));
            return out;
        }
    };
    let thinking = s.thinking.clone().unwrap_or_else(|| "thinking_on".into());
    let Some(k) = s.k else {
        out.push(
            Diagnostic::error(
                CODE_CURVE,
                "cannot read the draft length of this speculative config",
            )
            .at(path, at),
        );
        return out;
    };
    let Some(curve) = golden.get(&stem) else {
        out.push(
            Diagnostic::error(CODE_CURVE, format!("no golden acceptance curve `{stem}.yaml` for {prefix} {method}"))
                .at(path, at)
                .with_help("add the curve under golden_al_distribution/ or state the AL source in the sign-off"),
        );
        return out;
    };
    let Some(&gold) = curve.modes.get(&thinking).and_then(|m| m.get(&k)) else {
        out.push(
            Diagnostic::error(
                CODE_CURVE,
                format!("golden curve `{stem}` has no {thinking} cell for draft length {k}"),
            )
            .at(path, at),
        );
        return out;
    };
    if mode == Mode::Pinned {
        for (al, n, name) in &s.simulated {
            if *al != gold {
                let trt = *name == "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS";
                let written = if trt { fmt_al(al - 100) } else { fmt_al(*al) };
                let expect = if trt {
                    fmt_al(gold - 100)
                } else {
                    fmt_al(gold)
                };
                out.push(
                    Diagnostic::error(
                        CODE,
                        format!(
                            "`{name}: {written}` does not match the golden AL {} ({stem} {thinking}[{k}])",
                            fmt_al(gold)
                        ),
                    )
                    .at(path, n.span)
                    .with_help(format!("set it to {expect}{}", if trt { " (TRT-LLM takes AL - 1)" } else { "" })),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::masters::Usage;
    use crate::recipe::variants;
    use crate::test_support::{doc, parse};

    fn golden() -> Golden {
        let mut g = Golden::new();
        let q = "qwen3.5-397b-a17b-nvfp4:\n  thinking_on:\n    3: 3.39\n    6: 4.80\n    7: 5.04\n  thinking_off:\n    6: 4.48\n";
        let d = "deepseek-v4-pro:\n  thinking_on:\n    3: 2.49\n";
        for (stem, t) in [("qwen3.5_mtp", q), ("dsv4_mtp", d)] {
            match parse_curve(stem, Path::new("g.yaml"), &parse(t)) {
                Ok(c) => {
                    g.insert(stem.into(), c);
                }
                Err(e) => panic!("{e}"),
            }
        }
        g
    }
    fn usage(agentic: bool, length: Option<&str>) -> Usage {
        Usage {
            key: "k".into(),
            master: "configs/nvidia-master.yaml".into(),
            selector: None,
            agentic,
            synthetic: length.is_some(),
            length: length.map(|l| (l.to_string(), Span::line(9))),
        }
    }
    fn run_with(t: &str, prefix: &str, mode: Mode, usages: Vec<Usage>) -> Vec<Diagnostic> {
        let agentic = usages.iter().any(|u| u.agentic);
        let ctx = Context {
            model_prefix: Some(prefix.into()),
            agentic,
            usages,
        };
        check_recipe(
            Path::new("r.yaml"),
            &variants(&doc("r.yaml", t)),
            &ctx,
            &golden(),
            mode,
        )
    }
    fn run(t: &str, prefix: &str, mode: Mode) -> Vec<Diagnostic> {
        run_with(t, prefix, mode, vec![usage(true, None)])
    }
    const VLLM_MTP2: &str = "backend:\n  vllm_config:\n    aggregated:\n      speculative-config: '{\"method\":\"mtp\",\"num_speculative_tokens\":3}'\n";

    #[test]
    fn legacy_injector_values_in_master_rows() {
        assert!(
            run_with(
                VLLM_MTP2,
                "dsv4",
                Mode::Pinned,
                vec![usage(true, Some("2.49"))]
            )
            .is_empty()
        );
        let d = run_with(
            VLLM_MTP2,
            "dsv4",
            Mode::Pinned,
            vec![usage(true, Some("2.27"))],
        );
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].path.as_deref(),
            Some(Path::new("configs/nvidia-master.yaml"))
        );
        assert!(d[0].message.contains("golden AL 2.49"), "{}", d[0].message);
        let d = run_with(
            VLLM_MTP2,
            "dsv4",
            Mode::Pinned,
            vec![usage(false, Some("2.49"))],
        );
        assert!(d[0].message.contains("non-agentic"));
        let d = run_with(
            VLLM_MTP2,
            "dsv4",
            Mode::Injected,
            vec![usage(true, Some("2.49"))],
        );
        assert_eq!(d[0].code, CODE_HARDCODED);
        // An unbound (or eval-only) recipe is not a benchmark point: nothing to pin.
        let ctx = Context {
            model_prefix: Some("dsv4".into()),
            agentic: true,
            usages: vec![],
        };
        assert!(
            check_recipe(
                Path::new("r.yaml"),
                &variants(&doc("r.yaml", VLLM_MTP2)),
                &ctx,
                &golden(),
                Mode::Pinned
            )
            .is_empty()
        );
    }

    #[test]
    fn disagg_uses_the_generation_role() {
        let t = "backend:\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: '3.39'\n  sglang_config:\n    prefill:\n      speculative-algorithm: NEXTN\n      speculative-num-steps: 1\n    decode:\n      speculative-algorithm: NEXTN\n      speculative-num-steps: 3\n";
        assert!(run(t, "qwen3.5", Mode::Pinned).is_empty());
    }
    fn trt(forced: &str, k: u32) -> String {
        format!(
            "backend:\n  aggregated_environment:\n    TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: \"{forced}\"\n  trtllm_config:\n    aggregated:\n      speculative_config:\n        decoding_type: MTP\n        max_draft_len: {k}\n"
        )
    }

    #[test]
    fn pinned_mode_examples() {
        assert!(run(&trt("1.49", 3), "dsv4", Mode::Pinned).is_empty());
        assert!(run(&trt("3.80", 6), "qwen3.5", Mode::Pinned).is_empty());
        assert!(run(&trt("4.04", 7), "qwen3.5", Mode::Pinned).is_empty());
        let d = run(&trt("4.80", 6), "qwen3.5", Mode::Pinned);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, CODE);
        assert!(d[0].help.as_deref().is_some_and(|h| h.contains("3.80")));
        assert_eq!(run(&trt("3.48", 6), "qwen3.5", Mode::Pinned).len(), 1);
        // SGLang agentic with steps and no simulation: real acceptance.
        let sg = "backend:\n  sglang_config:\n    decode:\n      speculative-algorithm: NEXTN\n      speculative-num-steps: 3\n";
        let d = run(sg, "qwen3.5", Mode::Pinned);
        assert_eq!(d.len(), 1);
        assert!(d[0].message.contains("real acceptance"));
        // ...which is the expected state in injected mode.
        assert!(run(sg, "qwen3.5", Mode::Injected).is_empty());
    }

    #[test]
    fn injected_mode_flags_hard_coded_values() {
        let d = run(&trt("1.49", 3), "dsv4", Mode::Injected);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, CODE_HARDCODED);
    }

    #[test]
    fn sglang_simulated_value() {
        let t = "backend:\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: '3.39'\n  sglang_config:\n    decode:\n      speculative-algorithm: NEXTN\n      speculative-num-steps: 3\n      speculative-num-draft-tokens: 4\n";
        assert!(run(t, "qwen3.5", Mode::Pinned).is_empty());
        let bad = t.replace("3.39", "3.33");
        assert_eq!(run(&bad, "qwen3.5", Mode::Pinned).len(), 1);
        let thinking_off = t
            .replace("3.39", "4.48")
            .replace("num-steps: 3", "num-steps: 6")
            + "benchmark:\n  env:\n    THINKING_MODE: thinking_off\n";
        assert!(run(&thinking_off, "qwen3.5", Mode::Pinned).is_empty());
    }

    #[test]
    fn missing_curve_or_cell() {
        let t = "backend:\n  sglang_config:\n    decode:\n      speculative-algorithm: EAGLE\n      speculative-num-steps: 5\n";
        let d = run(t, "qwen3.5", Mode::Injected);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, CODE_CURVE);
        let d = run(t, "glm5.3", Mode::Injected);
        assert!(d[0].message.contains("glm5.3_mtp.yaml"));
    }

    #[test]
    fn stems() {
        assert_eq!(
            curve_stem("minimaxm3", "eagle", None, None).as_deref(),
            Ok("minimaxm3_eagle3")
        );
        assert_eq!(
            curve_stem("minimaxm3", "EAGLE3", Some("x/MiniMax-GQA-draft"), None).as_deref(),
            Ok("minimaxm3_eagle3_gqa")
        );
        assert_eq!(
            curve_stem("dsv4dspark", "dspark", None, None).as_deref(),
            Ok("dsv4-pro-0813-dspark")
        );
        assert_eq!(
            curve_stem("qwen3.5", "NEXTN", None, None).as_deref(),
            Ok("qwen3.5_mtp")
        );
        assert_eq!(
            curve_stem("glm5.2", "eagle", None, None).as_deref(),
            Ok("glm5.2_mtp")
        );
        assert!(curve_stem("kimik3", "dspark", None, Some("typical")).is_err());
        assert_eq!(
            curve_stem("kimik3", "dspark", None, Some("probabilistic")).as_deref(),
            Ok("kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method")
        );
    }

    #[test]
    fn curve_validity() {
        let bad = parse("a:\n  thinking_on:\n    3: 4.5\n");
        assert!(parse_curve("x", Path::new("g"), &bad).is_err());
        let two = parse("a:\n  thinking_on:\n    3: 2.0\n_metadata: {}\n");
        assert!(parse_curve("x", Path::new("g"), &two).is_err());
        let boolk = parse("a:\n  thinking_on:\n    true: 2.0\n");
        assert!(parse_curve("x", Path::new("g"), &boolk).is_err());
    }
}
