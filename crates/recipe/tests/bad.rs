//! Bad recipes give a diagnostic with a code, the file, and line:col — never a panic.

use infx_recipe::codes;
use infx_recipe::{Lane, RecipeFile, Selector, check_fragment, load_recipe, validate};
use infx_report::Diagnostic;
use std::path::Path;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn loc(d: &Diagnostic) -> (String, usize, usize) {
    let span = d.span.expect("has a span");
    (
        d.path.as_ref().expect("has a file").display().to_string(),
        span.start.line(),
        span.start.col(),
    )
}

const BUNDLE: &str = "\
base:
  name: r
  model: {path: /m, container: /c.sqsh, precision: fp8}
  resources: {gpu_type: h100, agg_nodes: 1, agg_workers: 1}
override_a:
  environment: {X: \"1\"}
zip_override_bad:
  resources:
    agg_nodes: [1, 2]
    agg_workers: [1, 2, 3]
";

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = load_recipe(dir.path(), "recipes/nope.yaml").unwrap_err();
    assert_eq!(d.code, codes::MISSING_FILE);
    assert_eq!(loc(&d), ("recipes/nope.yaml".into(), 1, 1));
}

#[test]
fn selector_naming_no_variant() {
    let f = RecipeFile::parse(Path::new("b.yaml"), BUNDLE.into()).unwrap();
    let d = f
        .expand(Some(&Selector::Override("override_zzz".into())))
        .unwrap_err();
    assert_eq!(d.code, codes::NO_VARIANT);
    assert!(
        d.message
            .contains("Available: override_a, zip_override_bad[i]"),
        "{}",
        d.message
    );
    assert_eq!(loc(&d), ("b.yaml".into(), 1, 1));
    let d = f
        .expand(Some(&Selector::Zip {
            key: "zip_override_bad".into(),
            index: Some(9),
        }))
        .unwrap_err();
    assert_eq!(
        d.code,
        codes::ZIP_LENGTH,
        "length error comes before the index check"
    );
    let d = f
        .expand(Some(&Selector::Glob("*nomatch*".into())))
        .unwrap_err();
    assert_eq!(d.code, codes::NO_VARIANT);
}

#[test]
fn zip_lengths_disagree() {
    let f = RecipeFile::parse(Path::new("b.yaml"), BUNDLE.into()).unwrap();
    let d = f.expand(None).unwrap_err();
    assert_eq!(d.code, codes::ZIP_LENGTH);
    assert_eq!(
        d.message,
        "Incompatible zip lengths [2, 3]. All lists must have the same length or length 1 (broadcast)."
    );
    // Points at the list whose length disagrees with the first one.
    assert_eq!(loc(&d), ("b.yaml".into(), 10, 18));
}

#[test]
fn zip_empty_and_no_list() {
    let text = "base: {name: r}\nzip_override_e: {a: []}\nzip_override_n: {a: 1}\n";
    let f = RecipeFile::parse(Path::new("z.yaml"), text.into()).unwrap();
    let e = f
        .expand(Some(&Selector::Zip {
            key: "zip_override_e".into(),
            index: None,
        }))
        .unwrap_err();
    assert_eq!(
        (e.code, loc(&e)),
        (codes::ZIP_EMPTY, ("z.yaml".into(), 2, 21))
    );
    let n = f
        .expand(Some(&Selector::Zip {
            key: "zip_override_n".into(),
            index: None,
        }))
        .unwrap_err();
    assert_eq!(
        (n.code, loc(&n)),
        (codes::ZIP_NO_LIST, ("z.yaml".into(), 3, 1))
    );
}

#[test]
fn fragment_setting_binder_owned_keys() {
    let text = "\
base:
  schema: 2
  name: f
  model: {path: hf:x/y}
  benchmark:
    env: {CONC: \"4\", PYTHONUNBUFFERED: \"1\"}
override_c8:
  benchmark:
    env: {CONC: \"8\", KV_OFFLOADING: none, MODEL: x}
";
    let f = RecipeFile::parse(Path::new("frag.yaml"), text.into()).unwrap();
    let ds = check_fragment(&f, Lane::AgenticSingle);
    let got: Vec<(infx_report::Code, (String, usize, usize))> =
        ds.iter().map(|d| (d.code, loc(d))).collect();
    assert_eq!(
        got,
        vec![
            (codes::BINDER_OWNED, ("frag.yaml".to_string(), 4, 17)),
            (codes::BINDER_OWNED, ("frag.yaml".to_string(), 6, 11)),
            (codes::BINDER_OWNED, ("frag.yaml".to_string(), 9, 43)),
        ]
    );
    assert!(
        ds[0].message.contains("remove base.model.path (= hf:x/y)"),
        "{}",
        ds[0].message
    );
    // Multinode lanes have no single-node exception: the override's CONC is binder-owned too.
    let multi = check_fragment(&f, Lane::AgenticMulti);
    assert!(
        multi
            .iter()
            .any(|d| d.message.contains("override_c8.benchmark.env.CONC"))
    );
    assert!(
        !multi.iter().any(|d| d.message.contains(".MODEL")),
        "MODEL is not binder-owned in agentic-multi"
    );
}

#[test]
fn dram_references() {
    let text = "\
roles:
  agg:
    args:
      cpu_bytes_to_use: 1000
      kv: '{\"lmcache\": {\"max_local_cpu_size\": 5}}'
    extra: ['--l1-size-gb', '12', '--l1-size-gb', '@dram.per-gpu-gb']
    env: {LMCACHE_MAX_LOCAL_CPU_SIZE: '@dram.total-gb'}
";
    let f = RecipeFile::parse(Path::new("d.yaml"), text.into()).unwrap();
    let ds = check_fragment(&f, Lane::FixedSeqSingle);
    let got: Vec<(infx_report::Code, usize)> = ds.iter().map(|d| (d.code, loc(d).1)).collect();
    assert_eq!(
        got,
        vec![
            (codes::DRAM_REF, 4),
            (codes::DRAM_REF, 5),
            (codes::DRAM_REF, 6)
        ]
    );
}

#[test]
fn paths_escaping_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write(&root, "ok.yaml", "name: x\n");
    write(dir.path(), "outside.yaml", "name: y\n");
    let d = load_recipe(&root, "../outside.yaml").unwrap_err();
    assert_eq!(
        (d.code, loc(&d)),
        (codes::ROOT_ESCAPE, ("../outside.yaml".into(), 1, 1))
    );
    let d = load_recipe(&root, "a/../../outside.yaml").unwrap_err();
    assert_eq!(d.code, codes::ROOT_ESCAPE);
    let d = load_recipe(&root, "/etc/passwd").unwrap_err();
    assert_eq!(d.code, codes::ROOT_ESCAPE);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("outside.yaml"), root.join("link.yaml"))
            .unwrap();
        let d = load_recipe(&root, "link.yaml").unwrap_err();
        assert_eq!(
            (d.code, loc(&d)),
            (codes::ROOT_ESCAPE, ("link.yaml".into(), 1, 1))
        );
        std::os::unix::fs::symlink(root.join("ok.yaml"), root.join("inside.yaml")).unwrap();
        assert!(
            load_recipe(&root, "inside.yaml").is_ok(),
            "a symlink inside the root is fine"
        );
    }
    assert!(load_recipe(&root, "./ok.yaml").is_ok());
}

#[test]
fn yaml_errors_and_shapes() {
    for (text, code) in [
        ("", codes::EMPTY),
        ("- a\n- b\n", codes::NOT_MAPPING),
        ("a: {b: 1\nc: 2\n", infx_yaml::codes::SYNTAX),
        ("a: 1\na: 2\n", infx_yaml::codes::DUPLICATE_KEY),
        // Issue #45: srtctl's PyYAML refuses these; the dry-run passed them.
        ("name: a\u{7f}b\n", infx_yaml::codes::CHARACTER),
        ("name: a\u{2028}b\n", infx_yaml::codes::SYNTAX),
        ("name: a\tb\n", infx_yaml::codes::TAB),
    ] {
        let e = RecipeFile::parse(Path::new("y.yaml"), text.into()).unwrap_err();
        assert!(e.code == code, "{text:?}: {}", e.code);
        assert!(e.span.is_some() && e.path.is_some(), "{text:?}");
    }
}

#[test]
fn errors_point_at_the_block_that_set_the_value() {
    let text = "\
base:
  name: r
  model: {path: /m, container: /c.sqsh, precision: fp8}
  resources: {gpu_type: h100, agg_nodes: 1, agg_workers: 1}
  environment: {A: \"1\"}
override_bad:
  environment: {B: 2}
  resources: {bogus: 1}
";
    let f = RecipeFile::parse(Path::new("p.yaml"), text.into()).unwrap();
    let vs = f.expand(None).unwrap();
    let ds = validate(&vs[0]);
    let got: Vec<(infx_report::Code, String, (String, usize, usize))> = ds
        .iter()
        .map(|d| (d.code, d.message.clone(), loc(d)))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                codes::UNKNOWN_FIELD,
                "resources.bogus: Unknown field.".into(),
                ("p.yaml".into(), 8, 15)
            ),
            (
                codes::TYPE,
                "environment.B.value: Not a valid string.".into(),
                ("p.yaml".into(), 7, 20)
            ),
        ]
    );
    assert_eq!(
        vs[0].origin_of("environment.B").unwrap().block.as_ref(),
        "override_bad"
    );
    assert_eq!(
        vs[0].origin_of("environment.A").unwrap().block.as_ref(),
        "base"
    );
}

/// Fields srtctl types that infx used to pass through unchecked: `reporting`,
/// `profiling.extra_nsys_args`, `dynamo.cargo_patches`, `benchmark.prefix_ratios`, exporter
/// `command`; a non-mapping for a nested object is marshmallow's `_schema` error.
#[test]
fn schema1_typed_holes() {
    use infx_recipe::schema1::{Failure, dotted, load};
    let head = "name: r\nmodel: {path: /m, container: /c.sqsh, precision: fp8}\n\
                resources: {gpu_type: h100, agg_nodes: 1, agg_workers: 1}\n";
    let fields = |extra: &str| -> Vec<String> {
        let tree = infx_yaml::parse_str(Path::new("r.yaml"), &format!("{head}{extra}")).unwrap();
        match load(&tree) {
            Ok(_) => vec![],
            Err(Failure::Fields(errs)) => errs.iter().map(|e| dotted(&e.path)).collect(),
            Err(Failure::Rule { path, .. }) => vec![format!("rule:{path}")],
        }
    };
    assert_eq!(fields("reporting: 3\n"), ["reporting._schema"]);
    assert_eq!(
        fields("reporting: {status: {endpoint: [a]}}\n"),
        ["reporting.status.endpoint"]
    );
    assert_eq!(
        fields("reporting: {ai_analysis: {enabled: null}}\n"),
        ["reporting.ai_analysis.enabled"]
    );
    assert_eq!(
        fields("reporting: {s3: {region: x}}\n"),
        ["reporting.s3.bucket"]
    );
    assert_eq!(fields("reporting: {bogus: 1}\n"), ["reporting.bogus"]);
    assert_eq!(
        fields("profiling: {extra_nsys_args: [1]}\n"),
        ["profiling.extra_nsys_args.0"]
    );
    assert_eq!(
        fields("dynamo: {cargo_patches: 0.5}\n"),
        ["dynamo.cargo_patches"]
    );
    assert_eq!(
        fields("benchmark: {prefix_ratios: {k: 1}}\n"),
        ["benchmark.prefix_ratios"]
    );
    assert_eq!(fields("benchmark: 7\n"), ["benchmark._schema"]);
    assert!(
        fields("benchmark: {prefix_ratios: [0.1, 1]}\nreporting: {s3: {bucket: b}}\n").is_empty()
    );
    let tree = infx_yaml::parse_str(
        Path::new("r.yaml"),
        &format!("{head}reporting: {{ai_analysis: {{}}}}\n"),
    )
    .unwrap();
    let dumped = load(&tree).unwrap();
    assert_eq!(
        dumped["reporting"],
        serde_json::json!({"status": null, "ai_analysis": {"enabled": false,
            "openrouter_api_key": null, "gh_token": null,
            "repos_to_search": ["sgl-project/sglang", "ai-dynamo/dynamo"],
            "pr_search_days": 14, "prompt": null}, "s3": null})
    );
}

/// DynamoConfig's post-init runs while its field loads, so its error wins over field errors
/// elsewhere; post-init messages are srtctl's own wording.
#[test]
fn schema1_rule_order_and_wording() {
    use infx_recipe::schema1::{Failure, load};
    let head = "name: r\nmodel: {path: /m, container: /c.sqsh, precision: fp8}\n";
    let outcome = |extra: &str| -> Failure {
        let tree = infx_yaml::parse_str(Path::new("r.yaml"), &format!("{head}{extra}")).unwrap();
        load(&tree).unwrap_err()
    };
    let agg = "resources: {gpu_type: h100, agg_nodes: 1, agg_workers: 1}\n";
    match outcome(&format!(
        "{agg}dynamo: {{cargo_patches: [a]}}\nprofiling: {{extra_nsys_args: 5}}\n"
    )) {
        Failure::Rule { message, .. } => assert_eq!(
            message,
            "dynamo.cargo_patches requires a source build — set dynamo.hash to a commit"
        ),
        other => panic!("{other:?}"),
    }
    let disagg = "resources: {gpu_type: h100, prefill_nodes: 1, decode_nodes: 1, \
                  prefill_workers: 1, decode_workers: 1}\n";
    match outcome(&format!("{disagg}profiling: {{type: nsys}}\n")) {
        Failure::Rule { message, .. } => assert_eq!(
            message,
            "Disaggregated mode requires both profiling.prefill and profiling.decode to be set when profiling is enabled."
        ),
        other => panic!("{other:?}"),
    }
    match outcome(&format!("{agg}profiling: {{type: nsys}}\n")) {
        Failure::Rule { message, .. } => assert_eq!(
            message,
            "Aggregated mode requires profiling.aggregated to be set when profiling is enabled."
        ),
        other => panic!("{other:?}"),
    }
}

/// srtctl counts `dynamo.hash` and `dynamo.wheel` as install sources when they are not None, so
/// an empty hash clears the default version and an empty wheel is a second source (found by the
/// random differential, seed 1796167166511964523 case 28).
#[test]
fn dynamo_sources_count_when_not_none() {
    use infx_recipe::schema1::{Failure, load};
    let head = "name: r\nmodel: {path: /m, container: /c.sqsh, precision: fp8}\n\
                resources: {gpu_type: h100, agg_nodes: 1, agg_workers: 1}\n";
    let parse =
        |extra: &str| infx_yaml::parse_str(Path::new("r.yaml"), &format!("{head}{extra}")).unwrap();
    let dumped = load(&parse("dynamo: {hash: ''}\n")).unwrap();
    assert_eq!(dumped["dynamo"]["version"], serde_json::Value::Null);
    assert_eq!(dumped["dynamo"]["hash"], "");
    let kept = load(&parse("dynamo: {}\n")).unwrap();
    assert_eq!(kept["dynamo"]["version"], "0.8.0");
    match load(&parse("dynamo: {hash: '', wheel: ''}\n")).unwrap_err() {
        Failure::Rule { message, .. } => assert_eq!(
            message,
            "Cannot specify both Dynamo install sources: hash, wheel"
        ),
        other => panic!("{other:?}"),
    }
}

/// srtctl pops a plain recipe's `lock:` and reads a truthy value as a mapping: anything else
/// stops its load with Python's AttributeError. Both the dry-run (a located finding) and the
/// srtctl model (the run's error, srtctl's text) say so; a falsy value or a mapping passes.
#[test]
fn a_lock_section_that_is_not_a_mapping() {
    let head = "name: s\nmodel: {path: /m, container: /c.sqsh, precision: fp8}\nresources: {gpu_type: h100, agg_nodes: 1, agg_workers: 1}\n";
    let failing = [
        ("[3, x]", "list"),
        ("text", "str"),
        ("7", "int"),
        ("0.5", "float"),
        ("true", "bool"),
        ("2001-12-14", "datetime.date"),
        ("2001-12-14 21:59:43.10", "datetime.datetime"),
    ];
    for (value, python_type) in failing {
        let text = format!("{head}lock: {value}\n");
        let f = RecipeFile::parse(Path::new("l.yaml"), text).unwrap();
        let why = format!("'{python_type}' object has no attribute 'get'");
        let reports = infx_recipe::dry_run(&f, None).unwrap();
        let d = &reports[0].diagnostics[0];
        assert_eq!(d.code, codes::TYPE, "{value}");
        assert!(d.message.contains(&why), "{value}: {}", d.message);
        assert_eq!(loc(d), ("l.yaml".into(), 4, 7), "{value}");
        match infx_recipe::srtctl::dry_run(&f, None, None).error {
            Some(infx_recipe::srtctl::RunError::Diag(d)) => assert_eq!(d.message, why),
            other => panic!("{value}: {other:?}"),
        }
    }
    for value in [
        "[]",
        "''",
        "0",
        "false",
        "null",
        "{}",
        "{version: 1, integrity: x}",
    ] {
        let text = format!("{head}lock: {value}\n");
        let f = RecipeFile::parse(Path::new("l.yaml"), text).unwrap();
        let reports = infx_recipe::dry_run(&f, None).unwrap();
        assert!(
            reports[0].diagnostics.is_empty(),
            "{value}: {:?}",
            reports[0].diagnostics
        );
        assert!(
            infx_recipe::srtctl::dry_run(&f, None, None).error.is_none(),
            "{value}"
        );
    }
}
