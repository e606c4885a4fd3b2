//! Effective recipes (override bundles expanded) and the checks that read them:
//! Check 8 (architecture hacks, event publication), Check 13 (draft as shipped) and the DP
//! cuda-graph coverage lint.
//!
//! Findings point at the node that sets the value; a value set in `base` and inherited by several
//! variants is reported once, with the variants named in a note.

use crate::codes;
use infx_report::Diagnostic;
use infx_yaml::{Document, Node, Value};
use std::borrow::Cow;
use std::path::Path;

pub(crate) const CODE_DRAFT_ENV: infx_report::Code = codes::DRAFT_PRECISION_ENV;
pub(crate) const CODE_DRAFT_FLAG: infx_report::Code = codes::DRAFT_PRECISION_FLAG;
pub(crate) const CODE_EVENTS: infx_report::Code = codes::EVENT_PUBLICATION;
pub(crate) const CODE_HF_OVERRIDES: infx_report::Code = codes::ARCH_OVERRIDE;
pub(crate) const CODE_CUDA_GRAPH: infx_report::Code = codes::DP_CUDA_GRAPH;

/// Environment variables that make the draft cheaper than shipped (Check 13, FAIL when enabled).
pub(crate) const PROHIBITED_DRAFT_ENV: &[&str] = &["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"];
/// Environment variables that change draft precision and need a reviewer's look (Check 13, inspect).
pub(crate) const INSPECT_DRAFT_ENV: &[&str] = &["SGLANG_GLM_NEXTN_MOE_PTPC"];

/// One variant of a recipe: `base` alone for a plain recipe, else each `override_*` and
/// `zip_override_*[i]`.
#[derive(Clone, Debug)]
pub struct Variant<'a> {
    pub name: String,
    /// Borrowed for a plain recipe (no copy), owned for a merged variant.
    pub node: std::borrow::Cow<'a, Node>,
}

/// Expands a recipe into its variants with infx-recipe's expander, as srtctl launches them:
/// a plain recipe is one variant (`recipe`); a bundle gives each `override_*` and
/// `zip_override_*[i]`, or `base` alone when it has neither. A bundle the expander refuses (a
/// zip with mismatched lengths, a non-mapping override) is reviewed through its `base` only:
/// the recipe check reports why it does not expand.
pub(crate) fn variants(doc: &Document) -> Vec<Variant<'_>> {
    let Some(map) = doc.root.as_map() else {
        return vec![];
    };
    let Some(base) = map.get("base").filter(|b| b.as_map().is_some()) else {
        return vec![Variant {
            name: "recipe".into(),
            node: Cow::Borrowed(&doc.root),
        }];
    };
    let expanded =
        infx_recipe::RecipeFile::from_parsed(&doc.path, doc.text.clone(), doc.root.clone())
            .and_then(|file| file.expand_with(None, infx_recipe::ExpandOptions::srtctl()));
    match expanded {
        Ok(found) if !found.is_empty() => found
            .into_iter()
            .map(|v| Variant {
                name: v.selector_text(),
                node: Cow::Owned(std::sync::Arc::unwrap_or_clone(v.tree)),
            })
            .collect(),
        _ => vec![Variant {
            name: "base".into(),
            node: Cow::Borrowed(base),
        }],
    }
}

/// Visits every mapping entry `(key, key node, value)` of a tree, depth first, in order.
pub(crate) fn walk<'a>(n: &'a Node, f: &mut dyn FnMut(&'a str, &'a Node, &'a Node)) {
    match &n.value {
        Value::Map(m) => {
            for (k, kn, v) in m.iter() {
                f(k, kn, v);
                walk(v, f);
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| walk(i, f)),
        _ => {}
    }
}

/// Visits every string scalar (values and sequence items).
pub(crate) fn walk_strings<'a>(n: &'a Node, f: &mut dyn FnMut(&'a str, &'a Node)) {
    match &n.value {
        Value::Map(m) => m.iter().for_each(|(_, _, v)| walk_strings(v, f)),
        Value::Seq(items) => items.iter().for_each(|i| walk_strings(i, f)),
        Value::Str(s) => f(s, n),
        _ => {}
    }
}

/// A scalar's text as a user would read it (`'1'`, `1`, `true` all give their text).
pub(crate) fn scalar_text(n: &Node) -> Option<String> {
    match &n.value {
        Value::Str(s) => Some(s.clone()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.text.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An environment value that turns a feature on (`1`, `true`, `yes`, `on`, any non-zero number).
pub(crate) fn enables(n: &Node) -> bool {
    match scalar_text(n) {
        Some(t) => {
            let t = t.trim().to_ascii_lowercase();
            !(t.is_empty() || t == "0" || t == "false" || t == "no" || t == "off" || t == "none")
        }
        None => false,
    }
}

/// Does this variant use speculative decoding (from speculative arguments, never env names)?
pub(crate) fn speculates(n: &Node) -> bool {
    let mut yes = false;
    walk(n, &mut |k, _, v| {
        let k = k.trim_start_matches('-');
        // The key first: the value's text is a copy, made only for the keys that matter.
        let speculative = matches!(
            k,
            "speculative-algorithm"
                | "speculative_algorithm"
                | "speculative-config"
                | "speculative_config"
        );
        if speculative
            && !v.is_null()
            && scalar_text(v).is_none_or(|t| !t.eq_ignore_ascii_case("none") && !t.is_empty())
        {
            yes = true;
        }
        if k == "spec-decoding"
            && scalar_text(v).is_some_and(|t| matches!(t.as_str(), "mtp" | "draft_model"))
        {
            yes = true;
        }
    });
    if !yes {
        walk_strings(n, &mut |s, _| {
            if s.contains("--speculative-config") || s.contains("--speculative-algorithm") {
                yes = true;
            }
        });
    }
    yes
}

/// Collects findings across variants, keeping the first of each (code, location) and naming the
/// variants it applies to.
#[derive(Default)]
pub(crate) struct Findings {
    items: Vec<(Diagnostic, Vec<String>)>,
}

impl Findings {
    pub(crate) fn push(&mut self, d: Diagnostic, variant: &str) {
        let key = |x: &Diagnostic| (x.code, x.span.map(|s| (s.start.offset(), s.start.line())));
        match self.items.iter_mut().find(|(e, _)| key(e) == key(&d)) {
            Some((_, vs)) => {
                if !vs.iter().any(|v| v == variant) {
                    vs.push(variant.to_string())
                }
            }
            None => self.items.push((d, vec![variant.to_string()])),
        }
    }
    pub(crate) fn finish(self, multi: bool) -> Vec<Diagnostic> {
        self.items
            .into_iter()
            .map(|(d, vs)| {
                if multi {
                    d.with_note(format!("in variants: {}", vs.join(", ")))
                } else {
                    d
                }
            })
            .collect()
    }
}

fn spec_config_text(v: &Node) -> String {
    match &v.value {
        Value::Str(s) => s.to_ascii_lowercase(),
        Value::Map(m) => m.keys().collect::<Vec<_>>().join(" ").to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// Check 8 and Check 13 on one variant.
pub(crate) fn check_variant_flags(path: &Path, v: &Node, spec: bool, out: &mut Vec<Diagnostic>) {
    walk(v, &mut |k, kn, val| {
        let bare = k.trim_start_matches('-');
        // Check 13: prohibited draft env (only meaningful when a draft runs).
        if spec && PROHIBITED_DRAFT_ENV.contains(&k) && enables(val) {
            out.push(
                Diagnostic::error(
                    CODE_DRAFT_ENV,
                    format!(
                        "`{k}: {}` quantises the draft's MoE to FP8 (the draft must run as shipped)",
                        scalar_text(val).unwrap_or_default()
                    ),
                )
                .at(path, val.span)
                .with_help(format!("remove `{k}` (or set it to '0') so the draft keeps its stored precision")),
            );
        }
        if spec && INSPECT_DRAFT_ENV.contains(&k) && enables(val) {
            out.push(
                Diagnostic::warning(CODE_DRAFT_ENV, format!("`{k}` changes draft precision; a reviewer must confirm it is not below the stored precision"))
                    .at(path, val.span),
            );
        }
        if matches!(
            bare,
            "speculative-draft-model-quantization" | "speculative_draft_model_quantization"
        ) && !val.is_null()
        {
            out.push(
                Diagnostic::error(CODE_DRAFT_FLAG, format!("`{k}` quantises the draft model"))
                    .at(path, kn.span)
                    .with_help("serve the draft at its stored precision; remove the flag"),
            );
        }
        if matches!(bare, "speculative-config" | "speculative_config") {
            let t = spec_config_text(val);
            if t.contains("quantization") || t.contains("dtype") {
                out.push(
                    Diagnostic::error(
                        CODE_DRAFT_FLAG,
                        format!("`{k}` overrides the draft's quantization or dtype"),
                    )
                    .at(path, val.span)
                    .with_help("remove quantization/dtype from the speculative config"),
                );
            }
        }
        // Check 8: event publication and FLOP-removing overrides.
        if k == "publish_events_and_metrics"
            && (val.as_bool() == Some(false) || scalar_text(val).as_deref() == Some("false"))
        {
            out.push(
                Diagnostic::error(
                    CODE_EVENTS,
                    "`publish_events_and_metrics: false` disables event/metric publication",
                )
                .at(path, kn.span)
                .with_help("remove the key (or set it to true); event publication is required"),
            );
        }
        if matches!(
            bare,
            "hf-overrides" | "hf_overrides" | "json-model-override-args"
        ) && !val.is_null()
        {
            out.push(
                Diagnostic::error(CODE_HF_OVERRIDES, format!("`{k}` overrides the model config and may remove FLOPs"))
                    .at(path, kn.span)
                    .with_help("serve the architecture as shipped; a reviewer must confirm the model natively supports this mode"),
            );
        }
    });
    walk_strings(v, &mut |s, n| {
        // Flags and VAR=value settings both need one of these bytes; most strings have neither.
        if !s.contains("--") && !s.contains('=') {
            return;
        }
        for flag in ["--hf-overrides", "--json-model-override-args"] {
            if s.contains(flag) {
                out.push(
                    Diagnostic::error(
                        CODE_HF_OVERRIDES,
                        format!("`{flag}` overrides the model config and may remove FLOPs"),
                    )
                    .at(path, n.span),
                );
            }
        }
        if s.contains("--speculative-draft-model-quantization") {
            out.push(
                Diagnostic::error(
                    CODE_DRAFT_FLAG,
                    "`--speculative-draft-model-quantization` quantises the draft model",
                )
                .at(path, n.span),
            );
        }
        for var in PROHIBITED_DRAFT_ENV {
            if spec
                && let Some(rest) = s.split_once(var).and_then(|(_, r)| r.strip_prefix('='))
                && !matches!(
                    rest.split_whitespace().next().unwrap_or(""),
                    "" | "0" | "false"
                )
            {
                out.push(
                    Diagnostic::error(
                        CODE_DRAFT_ENV,
                        format!("`{var}` is enabled; the draft must run as shipped"),
                    )
                    .at(path, n.span),
                );
            }
        }
    });
}

fn as_u64(n: &Node) -> Option<u64> {
    match &n.value {
        Value::Int(i) => u64::try_from(*i).ok(),
        Value::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn truthy(n: Option<&Node>) -> bool {
    n.is_some_and(|n| {
        n.as_bool() == Some(true) || scalar_text(n).is_some_and(|t| t.eq_ignore_ascii_case("true"))
    })
}

/// DP cuda-graph coverage on one server-argument mapping (SGLang and vLLM spellings).
pub(crate) fn check_cuda_graph_args(path: &Path, args: &Node, out: &mut Vec<Diagnostic>) {
    let get = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| args.get(n))
            .filter(|n| !n.is_null())
    };
    // SGLang: max-running-requests is global; with DP attention each rank gets a share.
    if truthy(get(&["enable-dp-attention", "enable_dp_attention"])) {
        let dp = get(&["data-parallel-size", "dp-size", "dp"])
            .and_then(as_u64)
            .unwrap_or(1);
        let admitted = get(&["max-running-requests", "max_running_requests"]).and_then(as_u64);
        let captured = get(&[
            "cuda-graph-max-bs-decode",
            "cuda-graph-max-bs",
            "cuda_graph_max_bs",
        ]);
        if let (Some(m), Some(cap_node)) = (admitted, captured)
            && dp > 1
            && let Some(cap) = as_u64(cap_node)
        {
            let per_rank = m.div_ceil(dp);
            if per_rank > cap {
                out.push(
                    Diagnostic::warning(
                        CODE_CUDA_GRAPH,
                        format!(
                            "decode cuda graphs capture batch {cap} but each DP rank admits {per_rank} ({m} max-running-requests over {dp} ranks)"
                        ),
                    )
                    .at(path, cap_node.span)
                    .with_help(format!("raise the captured decode batch to at least {per_rank}, or admit fewer requests per rank"))
                    .with_note("batches above the captured size run without cuda graphs (eager decode)"),
                );
            }
        }
    }
}

/// vLLM: max-num-seqs is per DP rank; captured sizes count tokens, so speculative tokens add up.
pub(crate) fn check_cuda_graph_vllm(path: &Path, args: &Node, out: &mut Vec<Diagnostic>) {
    let get = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| args.get(n))
            .filter(|n| !n.is_null())
    };
    let dp = get(&["data-parallel-size", "data_parallel_size"])
        .and_then(as_u64)
        .unwrap_or(1);
    if dp <= 1 {
        return;
    }
    let Some(seqs) = get(&["max-num-seqs", "max_num_seqs"]).and_then(as_u64) else {
        return;
    };
    let captured =
        get(&["max-cudagraph-capture-size", "max_cudagraph_capture_size"]).or_else(|| {
            get(&["compilation-config", "compilation_config"])
                .and_then(|c| c.get("max_cudagraph_capture_size"))
        });
    let Some(cap_node) = captured else { return };
    let Some(cap) = as_u64(cap_node) else { return };
    let k = get(&["speculative-config", "speculative_config"])
        .and_then(|s| match &s.value {
            Value::Map(_) => s.get("num_speculative_tokens").and_then(as_u64),
            Value::Str(t) => serde_json::from_str::<serde_json::Value>(t)
                .ok()
                .and_then(|j| {
                    j.get("num_speculative_tokens")
                        .and_then(serde_json::Value::as_u64)
                }),
            _ => None,
        })
        .unwrap_or(0);
    let need = seqs * (1 + k);
    if need > cap {
        out.push(
            Diagnostic::warning(
                CODE_CUDA_GRAPH,
                format!(
                    "cuda graphs capture {cap} tokens but each of the {dp} DP ranks decodes up to {need} ({seqs} sequences x {} tokens)",
                    1 + k
                ),
            )
            .at(path, cap_node.span)
            .with_help(format!("raise the capture size to at least {need}")),
        );
    }
}

/// A prefill-only role (disaggregated prefill / TRT-LLM context servers).
pub(crate) fn is_prefill_role(r: &str) -> bool {
    let r = r.to_ascii_lowercase();
    r.starts_with("prefill") || r.starts_with("ctx") || r.starts_with("context")
}

/// Server-argument mappings with their role names (`prefill`, `decode`, `agg`, …).
pub(crate) fn role_arg_maps(v: &Node) -> Vec<(&str, &Node)> {
    let mut out = Vec::new();
    if let Some(roles) = v.get("roles").and_then(Node::as_map) {
        for (name, _, r) in roles.iter() {
            if let Some(a) = r.get("args").filter(|a| a.as_map().is_some()) {
                out.push((name, a));
            }
        }
    }
    if let Some(backend) = v.get("backend").and_then(Node::as_map) {
        for (k, _, cfg) in backend.iter() {
            if k.ends_with("_config")
                && let Some(m) = cfg.as_map()
            {
                out.extend(
                    m.iter()
                        .filter(|(_, _, a)| a.as_map().is_some())
                        .map(|(name, _, a)| (name, a)),
                );
            }
        }
    }
    out
}

/// All per-recipe checks on one file: Check 8, Check 13 and the DP cuda-graph lint.
pub(crate) fn check_recipe(doc: &Document) -> Vec<Diagnostic> {
    check_variants(&doc.path, &variants(doc))
}

/// [`check_recipe`] on variants already expanded.
pub(crate) fn check_variants(path: &Path, vars: &[Variant<'_>]) -> Vec<Diagnostic> {
    let mut f = Findings::default();
    for var in vars {
        let spec = speculates(&var.node);
        let mut d = Vec::new();
        check_variant_flags(path, &var.node, spec, &mut d);
        // Decode graphs only matter where requests decode: not on prefill-only workers, not
        // when cuda graphs are off.
        for (role, a) in role_arg_maps(&var.node) {
            if is_prefill_role(role)
                || truthy(a.get("disable-cuda-graph"))
                || truthy(a.get("enforce-eager"))
            {
                continue;
            }
            check_cuda_graph_args(path, a, &mut d);
            check_cuda_graph_vllm(path, a, &mut d);
        }
        for x in d {
            f.push(x, &var.name);
        }
    }
    f.finish(vars.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::doc;

    fn check_text(path: &str, t: &str) -> Vec<Diagnostic> {
        check_recipe(&doc(path, t))
    }
    fn codes(d: &[Diagnostic]) -> Vec<infx_report::Code> {
        d.iter().map(|d| d.code).collect()
    }

    const QWEN_FAIL: &str = "backend:\n  decode_environment:\n    SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'\n  sglang_config:\n    decode:\n      speculative-algorithm: NEXTN\n      speculative-num-steps: 3\n";

    #[test]
    fn prohibited_draft_env_fails_and_off_passes() {
        let d = check_text("r.yaml", QWEN_FAIL);
        assert_eq!(codes(&d), [CODE_DRAFT_ENV]);
        assert_eq!(d[0].span.map(|s| s.start.line()), Some(3));
        let off = QWEN_FAIL.replace("'1'", "'0'");
        assert!(check_text("r.yaml", &off).is_empty());
        // Without speculative decoding the variable is inert.
        let stp = "backend:\n  env:\n    SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'\n";
        assert!(check_text("r.yaml", stp).is_empty());
    }

    #[test]
    fn draft_quantization_flag_fails() {
        let t = "backend:\n  vllm_config:\n    decode:\n      speculative-config: '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'\n      speculative-draft-model-quantization: quark_mxfp4\n";
        let d = check_text("r.yaml", t);
        assert_eq!(codes(&d), [CODE_DRAFT_FLAG]);
        // Pass: an FP8 checkpoint serving its embedded head with no draft flags.
        let ok = "backend:\n  sglang_config:\n    decode:\n      speculative-algorithm: NEXTN\n      quantization: fp8\n";
        assert!(check_text("r.yaml", ok).is_empty());
    }

    #[test]
    fn event_publication_false_fails() {
        let t = "backend:\n  type: trtllm\n  publish_events_and_metrics: false\n";
        let d = check_text("r.yaml", t);
        assert_eq!(codes(&d), [CODE_EVENTS]);
        assert!(check_text("r.yaml", "backend:\n  publish_events_and_metrics: true\n").is_empty());
    }

    #[test]
    fn hf_overrides_flagged() {
        let t =
            "backend:\n  vllm_config:\n    agg:\n      hf-overrides: '{\"index_topk_freq\": 4}'\n";
        assert_eq!(codes(&check_text("r.yaml", t)), [CODE_HF_OVERRIDES]);
        let s = "benchmark:\n  command: vllm serve m --hf-overrides '{}'\n";
        assert_eq!(codes(&check_text("r.yaml", s)), [CODE_HF_OVERRIDES]);
        let ok = "backend:\n  vllm_config:\n    agg:\n      tensor-parallel-size: 8\n";
        assert!(check_text("r.yaml", ok).is_empty());
    }

    const DP4: &str = "base:\n  roles:\n    agg:\n      args:\n        speculative-algorithm: DSPARK\n        cuda-graph-max-bs-decode: 64\noverride_tp2_c48:\n  roles:\n    agg:\n      args:\n        tensor-parallel-size: 2\n        max-running-requests: 64\noverride_dp4_c192:\n  roles:\n    agg:\n      args:\n        tensor-parallel-size: 4\n        data-parallel-size: 4\n        enable-dp-attention: true\n        max-running-requests: 384\n";

    #[test]
    fn dp4_c192_cuda_graph_warning() {
        let d = check_text("agentic.yaml", DP4);
        assert_eq!(codes(&d), [CODE_CUDA_GRAPH]);
        assert!(
            d[0].message.contains("capture batch 64"),
            "{}",
            d[0].message
        );
        assert!(
            d[0].message
                .contains("admits 96 (384 max-running-requests over 4 ranks)")
        );
        assert_eq!(d[0].span.map(|s| s.start.line()), Some(6));
        assert!(d[0].notes.iter().any(|n| n.contains("override_dp4_c192")));
        let ok = DP4.replace("384", "256");
        assert!(check_text("agentic.yaml", &ok).is_empty());
    }

    #[test]
    fn prefill_roles_and_disabled_graphs_are_not_decode_capture() {
        let t = "backend:\n  sglang_config:\n    prefill:\n      enable-dp-attention: true\n      data-parallel-size: 8\n      max-running-requests: 4096\n      cuda-graph-max-bs: 64\n    decode:\n      enable-dp-attention: true\n      data-parallel-size: 8\n      max-running-requests: 4096\n      cuda-graph-max-bs: 64\n      disable-cuda-graph: true\n";
        assert!(check_text("r.yaml", t).is_empty());
    }

    #[test]
    fn vllm_dp_capture_counts_speculative_tokens() {
        let t = "backend:\n  vllm_config:\n    decode:\n      data-parallel-size: 8\n      max-num-seqs: 64\n      max-cudagraph-capture-size: 128\n      speculative-config: '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'\n";
        let d = check_text("r.yaml", t);
        assert_eq!(codes(&d), [CODE_CUDA_GRAPH]);
        assert!(d[0].message.contains("256"));
    }

    #[test]
    fn override_null_deletes_inherited_value() {
        let t = "base:\n  backend:\n    env:\n      SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'\n    sglang_config:\n      decode:\n        speculative-algorithm: NEXTN\noverride_a:\n  backend:\n    env:\n      SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: null\n";
        assert!(check_text("r.yaml", t).is_empty());
    }

    #[test]
    fn zip_variants_expand() {
        let t = "base:\n  a: 1\nzip_override_x:\n  a: [1, 2, 3]\n  b: [x]\n";
        let d = doc("r.yaml", t);
        let v = variants(&d);
        assert_eq!(v.len(), 3);
        assert_eq!(v[2].name, "zip_override_x[2]");
        assert_eq!(v[2].node.get("a").and_then(Node::as_i64), Some(3));
        assert_eq!(v[2].node.get("b").and_then(Node::as_str), Some("x"));
    }
}
