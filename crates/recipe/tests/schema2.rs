//! Schema 2: a worked example, a Qwen3-32B bundle (its expansion and launch commands), and the
//! rejections of docs/recipe.md, "Schema 2: launch rules".

use infx_recipe::codes;
use infx_recipe::{RecipeFile, Selector, render, validate};
use std::path::Path;

const QWEN: &str = "\
schema: 2
base:
  name: qwen3-32b-h200-agg
  model:
    path: hf:Qwen/Qwen3-32B
    container: lmsysorg/sglang:v0.5.4
    precision: bf16
  identity:
    frameworks:
      sglang: 0.5.4
  resources:
    gpu_type: h200
    gpus_per_node: 8
  frontend:
    type: sglang
    enable_multiple_frontends: false
  observability:
    tachometer:
      enabled: false
  engine: sglang
  roles:
    agg:
      nodes: 1
      workers: 1
      gpus: 2
      env:
        PYTHONUNBUFFERED: \"1\"
      args:
        served-model-name: Qwen/Qwen3-32B
        tensor-parallel-size: 2
        mem-fraction-static: 0.85
        trust-remote-code: true
        cuda-graph-bs: [1, 2, 4, 8]
        disable-radix-cache: false
  benchmark:
    type: custom
    command: bash /bench/run.sh
    env:
      CONC: \"4\"
override_tp4:
  roles:
    agg:
      gpus: 4
      args:
        tensor-parallel-size: 4
        mem-fraction-static: null
  benchmark:
    env:
      CONC: \"16\"
override_dp2_router:
  frontend:
    type: sglang-router
    args:
      policy: cache_aware
      request-id-headers: x-correlation-id
      dp-aware: true
      connect-timeout-secs: 900
      request-timeout-secs: 7200
      disable-retries: true
      disable-circuit-breaker: false
  roles:
    agg:
      gpus: 4
      args:
        tensor-parallel-size: 4
        data-parallel-size: 2
        enable-dp-attention: true
        load-balance-method: round_robin
";

fn qwen() -> RecipeFile {
    RecipeFile::parse(Path::new("qwen.yaml"), QWEN.into()).unwrap()
}

fn cmd(f: &RecipeFile, sel: Option<Selector>, kind: &str) -> String {
    let v = f.expand(sel.as_ref()).unwrap().remove(0);
    assert!(validate(&v).is_empty(), "{:?}", validate(&v));
    render(&v)
        .processes
        .iter()
        .find(|p| p.kind == kind)
        .map(|p| p.argv.join(" "))
        .unwrap_or_default()
}

#[test]
fn worked_example_expansion() {
    let vs = qwen().expand(None).unwrap();
    let got: Vec<(&str, Option<&str>)> = vs
        .iter()
        .map(|v| (v.label.as_str(), v.name.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("override_dp2_router", Some("qwen3-32b-h200-agg_dp2_router")),
            ("override_tp4", Some("qwen3-32b-h200-agg_tp4"))
        ]
    );
}

#[test]
fn worked_example_commands() {
    let f = qwen();
    assert_eq!(
        cmd(&f, Some(Selector::Base), "worker"),
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --served-model-name Qwen/Qwen3-32B --host 0.0.0.0 --port 8000 --nccl-port 17500 --enable-metrics --cuda-graph-bs 1 2 4 8 --mem-fraction-static 0.85 --tensor-parallel-size 2 --trust-remote-code"
    );
    assert_eq!(
        cmd(
            &f,
            Some(Selector::Override("override_tp4".into())),
            "worker"
        ),
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --served-model-name Qwen/Qwen3-32B --host 0.0.0.0 --port 8000 --nccl-port 17500 --enable-metrics --cuda-graph-bs 1 2 4 8 --tensor-parallel-size 4 --trust-remote-code"
    );
    let dp2 = Some(Selector::Override("override_dp2_router".into()));
    assert_eq!(
        cmd(&f, dp2.clone(), "worker"),
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --served-model-name Qwen/Qwen3-32B --host 0.0.0.0 --port 6100 --nccl-port 17500 --enable-metrics --cuda-graph-bs 1 2 4 8 --data-parallel-size 2 --enable-dp-attention --load-balance-method round_robin --mem-fraction-static 0.85 --tensor-parallel-size 4 --trust-remote-code"
    );
    assert_eq!(
        cmd(&f, dp2, "router"),
        "python -m sglang_router.launch_router --worker-urls http://<ip0>:6100 --host 0.0.0.0 --port 8000 --prometheus-port 29000 --prometheus-host 0.0.0.0 --policy cache_aware --request-id-headers x-correlation-id --dp-aware --connect-timeout-secs 900 --request-timeout-secs 7200 --disable-retries"
    );
    assert_eq!(
        cmd(&f, Some(Selector::Base), "router"),
        "",
        "direct mode has no router"
    );
}

fn errors(text: &str) -> Vec<(infx_report::Code, String, usize)> {
    let f = RecipeFile::parse(Path::new("r.yaml"), text.into()).unwrap();
    let v = f.expand(None).unwrap().remove(0);
    validate(&v)
        .into_iter()
        .map(|d| {
            (
                d.code,
                d.message,
                d.span.map(|s| s.start.line()).unwrap_or(0),
            )
        })
        .collect()
}

const OK: &str = "schema: 2\nname: r\nmodel: {path: /m, container: c, precision: fp8}\nresources: {gpu_type: h200, gpus_per_node: 8}\nroles:\n  agg: {nodes: 1, workers: 1, gpus: 8}\n";

#[test]
fn minimal_recipe_loads() {
    assert_eq!(errors(OK), vec![]);
}

#[test]
fn rejections() {
    let cases: &[(&str, Option<infx_report::Code>, usize)] = &[
        ("schema: 2\n", None, 0),
        ("schema: '2'\n", Some(codes::SCHEMA_GATE), 1),
        ("backend: {type: sglang}\n", Some(codes::SCHEMA_GATE), 7),
        ("bogus: 1\n", Some(codes::UNKNOWN_FIELD), 7),
        ("environment: {A: 1}\n", Some(codes::TYPE), 7),
        ("frontend: {type: sglang}\n", Some(codes::FRONTEND), 7),
        ("frontend: {type: nope}\n", Some(codes::FRONTEND), 7),
        ("frontend: {type: vllm-router}\n", Some(codes::FRONTEND), 7),
        (
            "benchmark: {type: custom, isl: 10}\n",
            Some(codes::BENCHMARK),
            7,
        ),
        ("benchmark: {type: nope}\n", Some(codes::BENCHMARK), 7),
        (
            "engine: {type: sglang, sglang_config: {}}\n",
            Some(codes::ENGINE),
            7,
        ),
    ];
    for (extra, code, line) in cases {
        let text = if extra.starts_with("schema") {
            format!(
                "{extra}name: r\nmodel: {{path: /m, container: c, precision: fp8}}\nresources: {{gpu_type: h200}}\n"
            )
        } else {
            format!("{OK}{extra}")
        };
        let got = errors(&text);
        let Some(code) = code else {
            assert!(got.is_empty(), "{extra}: {got:?}");
            continue;
        };
        assert!(!got.is_empty(), "{extra}: accepted");
        assert_eq!((got[0].0, got[0].2), (*code, *line), "{extra}: {got:?}");
    }
    let no_schema = errors(
        "name: r\nmodel: {path: /m, container: c, precision: fp8}\nresources: {gpu_type: h200}\nroles: {agg: {}}\n",
    );
    assert_eq!(
        no_schema[0].0,
        codes::UNKNOWN_FIELD,
        "without schema: the schema-1 rules apply (roles unknown)"
    );
    let legacy = errors(&OK.replace("gpus_per_node: 8}", "gpus_per_node: 8, agg_nodes: 1}"));
    assert_eq!((legacy[0].0, legacy[0].2), (codes::SCHEMA_GATE, 4));
    assert!(
        legacy[0]
            .1
            .contains("pre-2.0 (v1) layout: resources.agg_nodes"),
        "{legacy:?}"
    );
    let roles = errors(&OK.replace("agg: {nodes: 1, workers: 1, gpus: 8}", "mixed: {}"));
    assert_eq!(roles[0].0, codes::ROLE);
    let colocate = errors(&OK.replace(
        "nodes: 1, workers: 1, gpus: 8",
        "nodes: colocate, workers: 1",
    ));
    assert_eq!(colocate[0].0, codes::ROLE);
    let fit = errors(&OK.replace("gpus: 8", "gpus: 16"));
    assert_eq!(fit[0].0, codes::ROLE);
}

#[test]
fn errors_point_into_the_file_and_block_that_wrote_the_value() {
    use infx_recipe::{Lane, compose_lane};
    let frag = RecipeFile::parse(
        Path::new("frag.yaml"),
        format!("base:\n{}override_bad:\n  roles:\n    agg:\n      env: {{X: 1}}\n  benchmark:\n    isl: 8\n", OK.lines().map(|l| format!("  {l}\n")).collect::<String>()),
    )
    .unwrap();
    let lane = RecipeFile::parse(
        Path::new("lane.yaml"),
        "benchmark:\n  type: custom\n  command: run.sh\n  bogus: 1\n".into(),
    )
    .unwrap();
    let v = compose_lane(&frag, Lane::AgenticSingle, &lane)
        .expand(None)
        .unwrap()
        .remove(0);
    let got: Vec<(infx_report::Code, String, usize)> = validate(&v)
        .into_iter()
        .map(|d| {
            (
                d.code,
                d.path.unwrap().display().to_string(),
                d.span.unwrap().start.line(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (codes::UNKNOWN_FIELD, "lane.yaml".to_string(), 4),
            (codes::TYPE, "frag.yaml".to_string(), 11),
        ]
    );
    assert_eq!(
        v.origin_of("benchmark.isl").unwrap().block.as_ref(),
        "override_bad"
    );
}
