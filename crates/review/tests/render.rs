//! What a contributor sees: the rendered findings of the spec's failing fixtures.

use infx_report::{SourceMap, render_human};
use infx_review::{ReviewInputs, review_tree};
use infx_yaml::Document;
use std::path::PathBuf;
use std::sync::Arc;

fn doc(path: &str, text: &str) -> Document {
    match infx_yaml::parse_str(&PathBuf::from(path), text) {
        Ok(root) => Document {
            path: path.into(),
            text: Arc::from(text),
            root: root.into(),
        },
        Err(d) => panic!("{d}"),
    }
}

const RECIPE: &str = "\
base:
  roles:
    agg:
      args:
        speculative-algorithm: DSPARK
        speculative-dspark-block-size: 5
        cuda-graph-max-bs-decode: 64
      env:
        SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'
override_dp4_c192:
  roles:
    agg:
      args:
        data-parallel-size: 4
        enable-dp-attention: true
        max-running-requests: 384
";

const TRT: &str = "\
backend:
  type: trtllm
  publish_events_and_metrics: false
";

const MASTER: &str = "\
dsr1-fp8-mi355x-sglang-disagg:
  image: rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-2
  model-prefix: dsr1
  runner: mi355x-disagg
  framework: sglang-disagg
";

#[test]
fn rendered_findings() {
    let recipe = doc(
        "benchmarks/single_node/srt-slurm-recipes/x/agentic.yaml",
        RECIPE,
    );
    let trt = doc("benchmarks/multi_node/srt-slurm-recipes/trtllm/y.yaml", TRT);
    let master = doc("configs/amd-master.yaml", MASTER);
    let mut sources = SourceMap::new();
    for d in [&recipe, &trt, &master] {
        sources.insert(&d.path, d.text.to_string());
    }
    let inputs = ReviewInputs {
        masters: vec![master],
        recipes: vec![recipe, trt],
        ..Default::default()
    };
    let mut diags = review_tree(&inputs);
    infx_report::sort_for_report(&mut diags);
    insta::assert_snapshot!(render_human(&diags, &sources, false));
}
