//! Binding on real data: the DeepSeek-V4.1-Flash B300 SGLang agentic entry (nvidia-master
//! @0c2f4541) against its recipe (@524fa704) and the agentic-single lane block. The nine points
//! bind one-to-one to the nine overrides; changing one override's CONC breaks exactly that point
//! (docs/matrix.md, "Example: the DeepSeek-V4.1-Flash B300 agentic entry"). Files are copied
//! from ../shared/corpus into a temp tree at run time (skips without the corpus). A second test
//! runs the bundled inferencex-e2e entry.

use infx_matrix::{EvalMode, MasterConfigs, Options, Runners, Selection, TestConfig};
use infx_matrix::{bind, load_recipes};
use std::path::{Path, PathBuf};

const KEY: &str = "dsv41flash-fp4-b300-sglang-agentic-dspark";
const RECIPE: &str =
    "benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";
const OVERRIDES: [&str; 9] = [
    "override_tp4_c1",
    "override_tp4_c4",
    "override_tp2_c1",
    "override_tp2_c4",
    "override_tp2_c16",
    "override_tp2_c24",
    "override_tp2_c32",
    "override_tp2_c48",
    "override_dp4_c192",
];

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.is_dir().then_some(dir)
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
}

struct Outcome {
    rows: Vec<String>,
    bindings: Vec<(String, String)>,
    errors: Vec<String>,
    warnings: Vec<String>,
}

fn run(root: &Path, master: &str) -> Outcome {
    let docs = infx_matrix::load_config_documents(&[PathBuf::from(master)], root).expect("configs");
    let configs = MasterConfigs::from_documents(&docs).expect("merge");
    let runner_doc = infx_matrix::load_runner_document(Path::new("configs/runners.yaml"), root)
        .expect("runners");
    let runners = Runners::from_node(&runner_doc.root);
    let opts = Options {
        selection: Selection::TestConfig(TestConfig {
            config_keys: vec![KEY.into()],
            ..Default::default()
        }),
        evals: EvalMode::None,
        runner_node_filter: None,
        scenario_types: None,
    };
    let points = infx_matrix::expand_with_origins(&configs, &runners, &opts).expect("rows");
    let recipes = load_recipes(points.iter().map(|(r, _)| r), root);
    let report = bind(&points, &recipes);
    let render =
        |d: &infx_report::Diagnostic| format!("{} {}\n{}", d.code, d.message, d.notes.join("\n"));
    Outcome {
        rows: points
            .iter()
            .map(|(r, _)| r.get_str("exp-name").unwrap_or_default().to_string())
            .collect(),
        bindings: report
            .bindings
            .iter()
            .map(|(i, l)| {
                (
                    points[*i]
                        .0
                        .get_str("exp-name")
                        .unwrap_or_default()
                        .to_string(),
                    l.clone(),
                )
            })
            .collect(),
        errors: report
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(render)
            .collect(),
        warnings: report
            .diagnostics
            .iter()
            .filter(|d| !d.is_error())
            .map(render)
            .collect(),
    }
}

fn assert_bijection(o: &Outcome) {
    assert!(o.errors.is_empty(), "{:#?}", o.errors);
    assert!(o.warnings.is_empty(), "{:#?}", o.warnings);
    assert_eq!(o.rows.len(), 9, "{:?}", o.rows);
    let mut labels: Vec<&str> = o.bindings.iter().map(|(_, l)| l.as_str()).collect();
    labels.sort_unstable();
    let mut want = OVERRIDES.to_vec();
    want.sort_unstable();
    assert_eq!(labels, want, "{:#?}", o.bindings);
    assert!(o.bindings.contains(&(
        "dsv41flash_tp2_conc24_kvnone_spec-mtp".into(),
        "override_tp2_c24".into()
    )));
    assert!(o.bindings.contains(&(
        "dsv41flash_tp4_conc192_kvnone_spec-mtp".into(),
        "override_dp4_c192".into()
    )));
}

#[test]
fn dsv41_flash_points_bind_one_to_one_and_a_changed_conc_breaks_its_point() {
    let Some(corpus) = corpus() else {
        eprintln!(
            "SKIP: dsv41_flash_points_bind_one_to_one_and_a_changed_conc_breaks_its_point: ../shared/corpus not found"
        );
        return;
    };
    let oct = corpus.join("inferencex-oct2026");
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    copy(
        &oct.join(
            "_excerpts/nvidia-master@0c2f4541.dsv41flash-fp4-b300-sglang-agentic-dspark.yaml",
        ),
        &root.join("configs/nvidia-master.yaml"),
    );
    copy(
        &oct.join("inferencex-e2e/configs/runners.yaml"),
        &root.join("configs/runners.yaml"),
    );
    copy(
        &oct.join("inferencex-e2e/configs/srt-recipes/agentic-single.yaml"),
        &root.join("configs/srt-recipes/agentic-single.yaml"),
    );
    copy(&oct.join("inferencex-e2e").join(RECIPE), &root.join(RECIPE));

    assert_bijection(&run(root, "configs/nvidia-master.yaml"));

    // CONC 24 → 28 in override_tp2_c24 only.
    let text = std::fs::read_to_string(root.join(RECIPE)).expect("recipe");
    let start = text.find("override_tp2_c24:").expect("override_tp2_c24");
    let at = start + text[start..].find("CONC: '24'").expect("CONC 24");
    let changed = format!(
        "{}CONC: '28'{}",
        &text[..at],
        &text[at + "CONC: '24'".len()..]
    );
    std::fs::write(root.join(RECIPE), changed).expect("write");

    let o = run(root, "configs/nvidia-master.yaml");
    assert_eq!(o.errors.len(), 1, "{:#?}", o.errors);
    let e = &o.errors[0];
    assert!(e.starts_with("matrix/binding-none"), "{e}");
    assert!(
        e.contains("dsv41flash_tp2_conc24_kvnone_spec-mtp") && e.contains("conc: 24"),
        "{e}"
    );
    assert!(
        e.contains("override_tp2_c24: CONC: recipe 28 != point 24"),
        "{e}"
    );
    assert!(
        e.contains("override_tp4_c1: "),
        "every candidate gets a note: {e}"
    );
    // The changed override now serves no point.
    assert_eq!(o.warnings.len(), 1, "{:#?}", o.warnings);
    assert!(
        o.warnings[0].contains("override_tp2_c24 is not selected"),
        "{}",
        o.warnings[0]
    );
    assert_eq!(o.bindings.len(), 8);
}

#[test]
fn bundled_tree_dsv41_flash_entry_binds_one_to_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../inferencex-e2e");
    if !root.join(RECIPE).is_file()
        || !root
            .join("configs/srt-recipes/agentic-single.yaml")
            .is_file()
    {
        eprintln!(
            "SKIP: bundled_tree_dsv41_flash_entry_binds_one_to_one: {RECIPE} not in inferencex-e2e yet"
        );
        return;
    }
    assert_bijection(&run(&root, "configs/nvidia-master.yaml"));
}
