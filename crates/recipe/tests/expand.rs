//! Variant expansion: merge rules, zip slicing, naming, selectors, srtctl vs InferenceX nulls.

use infx_recipe::{ExpandOptions, Lane, RecipeFile, Selector, Variant, compose_lane, validate};
use infx_yaml::Node;
use proptest::prelude::*;
use std::path::Path;

const S: &str = "\
base:
  name: s
  model: {path: /m, container: /c.sqsh, precision: fp8}
  resources: {gpu_type: h100, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}
  environment: {KEEP: \"1\", DROP: \"2\"}
  extra_mount: [\"/a:/a\", \"/b:/b\"]
  benchmark: {type: sa-bench, isl: 1024, osl: 128, concurrencies: [1, 2, 4]}
override_named:
  name: explicit
  benchmark: {concurrencies: [8]}
  environment: {ADDED: \"3\"}
  new_last: null
override_nulls:
  environment: {DROP: null}
  extra_mount: null
zip_override_grid:
  resources: {agg_nodes: [1, 2, 4], agg_workers: [1]}
  environment: {DROP: null, ZIPPED: [x, y, z]}
  benchmark: {concurrencies: [[1], [2, 4], [8, 16, 32]]}
zip_override_named:
  name: [s-a, s-b]
  benchmark: {isl: [256, 512]}
";

fn file() -> RecipeFile {
    RecipeFile::parse(Path::new("s.yaml"), S.into()).unwrap()
}

fn y(text: &str) -> Node {
    infx_yaml::parse_str(Path::new("t"), text).unwrap()
}

fn names(vs: &[Variant]) -> Vec<(String, String, String)> {
    vs.iter()
        .map(|v| {
            (
                v.label.clone(),
                v.selector_text(),
                v.name.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn no_selector_is_every_override_then_every_zip_variant_without_base() {
    let vs = file().expand(None).unwrap();
    let got = names(&vs);
    let want: Vec<(String, String, String)> = [
        ("override_named", "override_named", "explicit"),
        ("override_nulls", "override_nulls", "s_nulls"),
        ("override_grid_0", "zip_override_grid[0]", "s_grid_0"),
        ("override_grid_1", "zip_override_grid[1]", "s_grid_1"),
        ("override_grid_2", "zip_override_grid[2]", "s_grid_2"),
        ("override_named_0", "zip_override_named[0]", "s-a"),
        ("override_named_1", "zip_override_named[1]", "s-b"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(got, want);
    assert!(vs.iter().all(|v| validate(v).is_empty()));
}

#[test]
fn override_merge_rules() {
    let f = file();
    let v = &f
        .expand(Some(&Selector::Override("override_named".into())))
        .unwrap()[0];
    assert_eq!(
        v.tree.get("benchmark").unwrap(),
        &y("{type: sa-bench, isl: 1024, osl: 128, concurrencies: [8]}")
    );
    assert_eq!(
        v.tree.get("environment").unwrap(),
        &y("{KEEP: '1', DROP: '2', ADDED: '3'}")
    );
    assert!(
        v.tree.get("new_last").is_none(),
        "null for an absent key adds nothing"
    );
    let keys: Vec<&str> = v.tree.as_map().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "name",
            "model",
            "resources",
            "environment",
            "extra_mount",
            "benchmark"
        ]
    );
    let n = &f
        .expand(Some(&Selector::Override("override_nulls".into())))
        .unwrap()[0];
    assert_eq!(n.tree.get("environment").unwrap(), &y("{KEEP: '1'}"));
    assert!(
        n.tree.get("extra_mount").is_none(),
        "null deletes in override_*"
    );
}

#[test]
fn zip_slices_broadcast_and_literal_lists() {
    let f = file();
    let vs = f
        .expand(Some(&Selector::Zip {
            key: "zip_override_grid".into(),
            index: None,
        }))
        .unwrap();
    let nodes: Vec<i64> = vs
        .iter()
        .map(|v| {
            v.tree
                .get_path(&["resources", "agg_nodes"])
                .unwrap()
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(nodes, [1, 2, 4]);
    assert!(vs.iter().all(|v| {
        v.tree
            .get_path(&["resources", "agg_workers"])
            .unwrap()
            .as_i64()
            == Some(1)
    }));
    assert_eq!(
        vs[1]
            .tree
            .get_path(&["benchmark", "concurrencies"])
            .unwrap(),
        &y("[2, 4]")
    );
    // srtctl c88ef731: null in a zip block leaves the base value (documented: deletes).
    assert_eq!(
        vs[0]
            .tree
            .get_path(&["environment", "DROP"])
            .unwrap()
            .as_str(),
        Some("2")
    );
    let ix = f
        .expand_with(
            Some(&Selector::Zip {
                key: "zip_override_grid".into(),
                index: Some(2),
            }),
            ExpandOptions::inferencex(),
        )
        .unwrap();
    assert_eq!(ix.len(), 1);
    assert!(
        ix[0].tree.get_path(&["environment", "DROP"]).is_none(),
        "InferenceX's expander drops nulls"
    );
    assert_eq!(
        ix[0]
            .tree
            .get_path(&["environment", "ZIPPED"])
            .unwrap()
            .as_str(),
        Some("z")
    );
}

#[test]
fn selectors_and_globs() {
    let f = file();
    let g = f.expand(Some(&Selector::Glob("*named*".into()))).unwrap();
    assert_eq!(
        g.iter().map(|v| v.selector_text()).collect::<Vec<_>>(),
        [
            "override_named",
            "zip_override_named[0]",
            "zip_override_named[1]"
        ]
    );
    let b = f.expand(Some(&Selector::Base)).unwrap();
    assert_eq!(
        (b[0].label.as_str(), b[0].name.as_deref()),
        ("base", Some("s"))
    );
    let e = f
        .expand(Some(&Selector::Zip {
            key: "zip_override_grid".into(),
            index: Some(3),
        }))
        .unwrap_err();
    assert_eq!(
        e.message,
        "Index [3] out of range for 'zip_override_grid' (has 3 variants, valid: 0\u{2013}2)"
    );
    let plain = RecipeFile::parse(Path::new("p.yaml"), "name: p\n".into()).unwrap();
    assert_eq!(
        plain.expand(Some(&Selector::Base)).unwrap().len(),
        1,
        "srtctl ignores a selector on a plain recipe"
    );
    assert!(
        plain
            .expand_with(Some(&Selector::Base), ExpandOptions::inferencex())
            .is_err()
    );
}

#[test]
fn schema_beside_base_is_copied_first() {
    let f = RecipeFile::parse(
        Path::new("b.yaml"),
        "schema: 2\nbase: {name: q}\noverride_x: {a: 1}\n".into(),
    )
    .unwrap();
    let v = &f.expand(None).unwrap()[0];
    let keys: Vec<&str> = v.tree.as_map().unwrap().keys().collect();
    assert_eq!(keys, ["schema", "name", "a"]);
    assert_eq!(v.name.as_deref(), Some("q_x"));
}

#[test]
fn lane_block_goes_under_base_and_the_fragment_wins() {
    let frag = RecipeFile::parse(
        Path::new("frag.yaml"),
        "base: {name: f, benchmark: {env: {A: '1'}}}\noverride_x: {benchmark: {type: manual}}\n"
            .into(),
    )
    .unwrap();
    let lane = RecipeFile::parse(
        Path::new("lane.yaml"),
        "benchmark: {type: custom, command: bash x.sh}\nextra: {k: v}\n".into(),
    )
    .unwrap();
    let c = compose_lane(&frag, Lane::AgenticSingle, &lane);
    let base = c.expand(Some(&Selector::Base)).unwrap().remove(0);
    assert_eq!(
        base.tree.get("benchmark").unwrap(),
        &y("{type: custom, command: bash x.sh, env: {A: '1'}}")
    );
    assert_eq!(base.file_of("benchmark.command"), Path::new("lane.yaml"));
    assert_eq!(base.file_of("benchmark.env.A"), Path::new("frag.yaml"));
    assert_eq!(base.file_of("extra.k"), Path::new("lane.yaml"));
    let x = c.expand(None).unwrap().remove(0);
    assert_eq!(
        x.tree.get_path(&["benchmark", "type"]).unwrap().as_str(),
        Some("manual")
    );
    assert_eq!(
        x.origin_of("benchmark.type").unwrap().block.as_ref(),
        "override_x"
    );
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null".to_string()),
        (0i64..5).prop_map(|i| i.to_string()),
        "[a-c]{1,2}".prop_map(|s| format!("'{s}'")),
        Just("[1, 2]".to_string())
    ]
}

fn map(depth: u32) -> BoxedStrategy<String> {
    let val = if depth == 0 {
        leaf().boxed()
    } else {
        prop_oneof![3 => leaf(), 1 => map(depth - 1)].boxed()
    };
    prop::collection::btree_map("[a-d]", val, 0..4)
        .prop_map(|m| {
            format!(
                "{{{}}}",
                m.into_iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .boxed()
}

proptest! {
    /// Merging an empty override is the identity; every non-null, non-mapping override value
    /// ends up in the result; base keys keep their relative order.
    #[test]
    fn merge_invariants(base in map(2), over in map(2)) {
        let text = format!("base: {base}\noverride_x: {over}\noverride_empty: {{}}\n");
        let f = RecipeFile::parse(Path::new("p.yaml"), text).unwrap();
        let vs = f.expand(None).unwrap();
        let b = y(&base);
        let mut want_empty = b.clone();
        if let Some(m) = want_empty.as_map_mut() {
            m.shift_remove("name");
        }
        let mut got_empty = infx_yaml::Node::clone(&vs[0].tree);
        if let Some(m) = got_empty.as_map_mut() {
            m.shift_remove("name");
        }
        prop_assert_eq!(got_empty, want_empty);
        let o = y(&over);
        for (k, _, v) in o.as_map().unwrap().iter() {
            let got = vs[1].tree.get(k);
            match &v.value {
                infx_yaml::Value::Null => prop_assert!(got.is_none()),
                infx_yaml::Value::Map(_) => prop_assert!(got.is_some()),
                _ => prop_assert_eq!(got, Some(v)),
            }
        }
        let order: Vec<&str> = vs[1].tree.as_map().unwrap().keys().filter(|k| b.get(k).is_some()).collect();
        let base_order: Vec<&str> = b.as_map().unwrap().keys().filter(|k| vs[1].tree.get(k).is_some()).collect();
        prop_assert_eq!(order, base_order);
    }

    /// A zip group of n-long lists (plus broadcast 1-long ones) expands to exactly n variants,
    /// variant i taking element i.
    #[test]
    fn zip_count(n in 1usize..6, broadcast in any::<bool>()) {
        let xs: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let extra = if broadcast { ", b: [7]" } else { "" };
        let text = format!("base: {{name: z}}\nzip_override_g: {{a: [{}]{extra}}}\n", xs.join(", "));
        let f = RecipeFile::parse(Path::new("z.yaml"), text).unwrap();
        let vs = f.expand(None).unwrap();
        prop_assert_eq!(vs.len(), n);
        for (i, v) in vs.iter().enumerate() {
            prop_assert_eq!(v.tree.get("a").and_then(Node::as_i64), Some(i as i64));
            prop_assert_eq!(v.name.clone(), Some(format!("z_g_{i}")));
            if broadcast {
                prop_assert_eq!(v.tree.get("b").and_then(Node::as_i64), Some(7));
            }
        }
    }
}

/// srtctl re-reads a zip variant as YAML: 1.1-only booleans and sexagesimals written quoted
/// lose their quotes, and a `null` the base wrote is deleted (the default returns). A `null` in
/// the zip block still keeps the base value verbatim. InferenceX's expander does neither.
#[test]
fn zip_variant_round_trip_retypes_and_drops_base_nulls() {
    let text = "\
base:
  name: z
  slurm: {time_limit: \"8:00:00\", account: 'yes'}
  environment: {A: 'on', B: \"true\", C: \"1:30\"}
  backend: {connector: null, keep: 'off'}
  frontend: {args: {x: 'no'}}
zip_override_g:
  benchmark: {isl: [1, 2]}
  frontend: {args: null}
";
    let f = RecipeFile::parse(Path::new("z.yaml"), text.into()).unwrap();
    let v = f
        .expand(Some(&Selector::Zip {
            key: "zip_override_g".into(),
            index: Some(1),
        }))
        .unwrap()
        .remove(0);
    let want = y("\
name: z_g_1
slurm: {time_limit: 28800, account: true}
environment: {A: true, B: \"true\", C: 90}
backend: {keep: false}
frontend: {args: {x: 'no'}}
benchmark: {isl: 2}
");
    let got_keys: Vec<&str> = v.tree.as_map().unwrap().keys().collect();
    assert_eq!(
        got_keys,
        [
            "name",
            "slurm",
            "environment",
            "backend",
            "frontend",
            "benchmark"
        ]
    );
    assert_eq!(v.tree.get("slurm"), want.get("slurm"));
    assert_eq!(v.tree.get("environment"), want.get("environment"));
    assert_eq!(v.tree.get("backend"), want.get("backend"));
    assert_eq!(v.tree.get("frontend"), want.get("frontend"));
    assert_eq!(v.tree.get("benchmark"), want.get("benchmark"));
    // The InferenceX binder's expander keeps the strings.
    let ix = f
        .expand_with(None, ExpandOptions::inferencex())
        .unwrap()
        .remove(0);
    assert_eq!(
        ix.tree.get_path(&["slurm", "time_limit"]),
        Some(&y("'8:00:00'"))
    );
    // Override variants keep quotes and base nulls.
    let o = RecipeFile::parse(
        Path::new("o.yaml"),
        "base: {name: o, t: '8:00:00', n: null}\noverride_a: {x: 1}\n".into(),
    )
    .unwrap()
    .expand(None)
    .unwrap()
    .remove(0);
    assert_eq!(o.tree.get("t"), Some(&y("'8:00:00'")));
    assert_eq!(o.tree.get("n"), Some(&y("null")));
}
