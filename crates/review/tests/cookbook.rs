//! Check 3 on the bundled tree: the DSV4.1 B300 agentic recipe against the cookbook file written
//! from the published commands; a changed per-point value is reported at its recipe line.

use infx_review::cookbook::{self, Point};
use std::path::{Path, PathBuf};

const KEY: &str = "dsv41flash-fp4-b300-sglang-agentic-dspark";
const RECIPE: &str =
    "benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";

fn bundled() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../inferencex-e2e")
}

fn points(tree: &Path) -> Vec<Point> {
    // The master configs and runners.yaml as the config crate loads them (what `review
    // cookbook` reads); the binder reads the recipes.
    let configs = infx_config::load_tree(tree);
    assert!(configs.load_errors.is_empty(), "{:?}", configs.load_errors);
    let Some(runners) = configs.runners.as_ref() else {
        panic!("no runners.yaml in {}", tree.display());
    };
    let (points, diags) = cookbook::load_points(
        tree,
        &configs.masters,
        &runners.root,
        &Default::default(),
        KEY,
    );
    assert!(diags.is_empty(), "binding: {diags:?}");
    points
}

fn the_cookbook(tree: &Path) -> cookbook::Cookbook {
    match cookbook::load_cookbook(tree, KEY) {
        Some(Ok(c)) => c,
        Some(Err(d)) => panic!("{d:?}"),
        None => panic!("no cookbook file for {KEY}"),
    }
}

#[test]
fn all_nine_points_match_the_cookbook() {
    let tree = bundled();
    let pts = points(&tree);
    assert_eq!(pts.len(), 9);
    let report = cookbook::compare(&the_cookbook(&tree), &pts);
    assert_eq!(report.points.len(), 9);
    let diags = report.diagnostics();
    assert!(diags.is_empty(), "{diags:#?}");
    // Every point shows the InferenceX-only settings it left out, with a reason.
    for p in &report.points {
        let shown: Vec<&str> = p.excluded.iter().map(|(s, _)| s.as_str()).collect();
        assert!(
            shown.iter().any(|s| s.starts_with("worker --host")),
            "{shown:?}"
        );
        assert!(
            shown
                .iter()
                .any(|s| s.starts_with("worker --enable-metrics"))
        );
        assert!(
            shown
                .iter()
                .any(|s| s.starts_with("worker env PYTHONUNBUFFERED"))
        );
        assert!(p.excluded.iter().all(|(_, why)| !why.is_empty()));
    }
    let dp4 = report
        .points
        .iter()
        .find(|p| p.label == "override_dp4_c192")
        .unwrap_or_else(|| panic!("dp4 point"));
    assert!(
        dp4.excluded
            .iter()
            .any(|(s, _)| s.starts_with("router --prometheus-port"))
    );
}

#[test]
fn snapshot_rendered_commands_per_point() {
    let tree = bundled();
    for p in &points(&tree) {
        let text = infx_recipe::render(&p.variant).to_text();
        insta::assert_snapshot!(format!("dsv41_point_{}", p.label), text);
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")) {
        let entry = entry.unwrap_or_else(|e| panic!("{e}"));
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap_or_else(|e| panic!("{e}"));
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn a_changed_point_value_is_reported_at_its_recipe_line() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    copy_tree(&bundled(), dir.path());
    let recipe = dir.path().join(RECIPE);
    let text = std::fs::read_to_string(&recipe).unwrap_or_else(|e| panic!("{e}"));
    let start = text
        .find("override_tp2_c32:")
        .unwrap_or_else(|| panic!("C32 override"));
    let at = start
        + text[start..]
            .find("mem-fraction-static: 0.85")
            .unwrap_or_else(|| panic!("C32 mem-fraction-static"));
    let line = text[..at].lines().count();
    let changed = format!(
        "{}mem-fraction-static: 0.9{}",
        &text[..at],
        &text[at + "mem-fraction-static: 0.85".len()..]
    );
    std::fs::write(&recipe, changed).unwrap_or_else(|e| panic!("{e}"));

    let diags = cookbook::check(&the_cookbook(dir.path()), &points(dir.path()));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = &diags[0];
    assert_eq!(d.code, cookbook::CODE_DIFF);
    assert!(
        d.message
            .contains("`--mem-fraction-static 0.9` in the recipe, `--mem-fraction-static 0.85` in the cookbook"),
        "{}",
        d.message
    );
    assert_eq!(d.path.as_deref(), Some(Path::new(RECIPE)));
    let span = d.span.unwrap_or_else(|| panic!("a span"));
    assert_eq!(span.start.line(), line);
    assert_eq!(
        &text
            .lines()
            .nth(line - 1)
            .map(str::trim_start)
            .unwrap_or("")[..4],
        "args"
    );
}

#[test]
fn a_point_missing_from_either_side_is_a_finding() {
    let tree = bundled();
    let mut pts = points(&tree);
    let cb = the_cookbook(&tree);
    // A matrix point the cookbook does not publish.
    let mut extra = pts[0].clone();
    extra.conc = 8;
    pts.push(extra);
    // A cookbook point with no matrix row.
    pts.retain(|p| p.label != "override_tp2_c48");
    let codes: Vec<infx_report::Code> = cookbook::check(&cb, &pts)
        .into_iter()
        .map(|d| d.code)
        .collect();
    assert_eq!(
        codes,
        [cookbook::CODE_POINT_UNMATCHED, cookbook::CODE_POINT_MISSING]
    );
}

#[test]
fn cookbook_files_outside_the_tree_are_never_read() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join(cookbook::COOKBOOK_DIR)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("outside.yaml"), "config-key: k\n")
        .unwrap_or_else(|e| panic!("{e}"));
    // A key that walks out of the cookbook directory is not looked up at all.
    assert!(cookbook::load_cookbook(&tree, "../../outside").is_none());
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            dir.path().join("outside.yaml"),
            tree.join(cookbook::COOKBOOK_DIR).join("k.yaml"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        match cookbook::load_cookbook(&tree, "k") {
            Some(Err(d)) => assert_eq!(d[0].code, cookbook::CODE_FILE),
            other => panic!("a symlink out of the tree was read: {other:?}"),
        }
    }
}
