//! Check 14 on results of the seed's shape (9 points; TP4 C1 and TP2 C1 dominated by the C4
//! points): 7 of 9 on the frontier at P90 and P75, and an SVG that renders to a non-blank image.

use infx_review::{pareto, pareto_plot};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pareto_seed_shape.json")
}

fn curves() -> Vec<pareto::Curve> {
    let path = fixture();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let mut curves = Vec::new();
    pareto::curves_from_artifact(&json, &path, &mut curves).unwrap_or_else(|d| panic!("{d}"));
    curves
}

#[test]
fn seven_of_nine_on_the_frontier_at_p90_and_p75() {
    let curves = curves();
    let keys: Vec<&str> = curves.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "dsv41flash|agentic-coding|b300_sglang|fp4|2026-10-05|p90",
            "dsv41flash|agentic-coding|b300_sglang|fp4|2026-10-05|p75"
        ]
    );
    for c in &curves {
        let a = pareto::assess(c);
        assert_eq!(
            (a.measured, a.frontier.len(), a.invalid),
            (9, 7, 0),
            "{}",
            c.key
        );
        let mut dominated: Vec<&str> = c
            .points
            .iter()
            .filter(|p| !a.frontier.iter().any(|f| f.label == p.label))
            .map(|p| pareto_plot::short_label(&p.label))
            .collect();
        dominated.sort();
        assert_eq!(dominated, ["TP2 C1", "TP4 C1"], "{}", c.key);
    }
}

/// PNG bytes of an SVG file rendered by rsvg-convert (Debian: librsvg2-bin).
fn render_png(svg: &Path, png: &Path) -> bool {
    Command::new("rsvg-convert")
        .arg("-o")
        .arg(png)
        .arg(svg)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_svg_renders_to_a_non_blank_image() {
    let svg = pareto_plot::plot_svg(&curves()).unwrap_or_else(|e| panic!("{e}"));
    for label in [
        "TP4 C1 (dominated)",
        "TP2 C1 (dominated)",
        "7/9 on the frontier",
    ] {
        assert!(svg.contains(label), "{label} missing from the SVG");
    }
    assert!(!svg.contains("TP2 C4 (dominated)"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let chart = dir.path().join("pareto.svg");
    std::fs::write(&chart, &svg).unwrap_or_else(|e| panic!("{e}"));
    // A blank page of the same size: its PNG is what "nothing drawn" compresses to.
    let blank = dir.path().join("blank.svg");
    std::fs::write(
        &blank,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="640"><rect width="1000" height="640" fill="white"/></svg>"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (chart_png, blank_png) = (dir.path().join("pareto.png"), dir.path().join("blank.png"));
    if !render_png(&blank, &blank_png) {
        if std::env::var_os("CI").is_some() {
            panic!("rsvg-convert is missing in CI (install Debian's librsvg2-bin)");
        }
        eprintln!(
            "SKIP: the_svg_renders_to_a_non_blank_image: rsvg-convert not found (apt-get install librsvg2-bin)"
        );
        return;
    }
    assert!(
        render_png(&chart, &chart_png),
        "rsvg-convert rejected the SVG"
    );
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let (c, b) = (size(&chart_png), size(&blank_png));
    assert!(
        c > 10 * b,
        "chart PNG {c} bytes vs blank {b} bytes: nothing drawn?"
    );
}
