//! Check 14's picture: every curve's points (x = E2EL, y = total token throughput per GPU), its
//! upper-right frontier (docs/review.md, Check 14) and the dominated points labelled, as an SVG a
//! reviewer can paste. Drawn with plotters' SVG backend only.

use crate::pareto::{self, Curve, Point};
use plotters::prelude::*;

const SIZE: (u32, u32) = (1000, 640);
const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// Labels and keys come from result files (hostile input in CI): only a plain character set
/// reaches the SVG, and at most 80 characters of it.
fn safe_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || " ._-|/:()[]=+,%".contains(c) {
                c
            } else {
                '?'
            }
        })
        .take(80)
        .collect()
}

/// The short name of a point for its label: what follows the artifact index (`TP4 C1`).
pub fn short_label(label: &str) -> &str {
    label.rsplit_once("] ").map_or(label, |(_, rest)| rest)
}

fn eligible(p: &Point) -> Option<(f64, f64)> {
    match (p.x, p.y) {
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0 => Some((x, y)),
        _ => None,
    }
}

/// What the chart says when no point can be drawn.
pub const NO_POINTS: &str = "no point with a positive, finite E2EL and throughput to plot";

/// Draws every curve into one SVG document. With no eligible point the chart is still drawn,
/// empty, its caption saying so: Check 14 is advisory, and a reviewer pasting the chart should
/// see why it is empty (docs/review.md, "Check 14: the Pareto plot"). Errors when the backend fails.
pub fn plot_svg(curves: &[Curve]) -> Result<String, String> {
    let all: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| c.points.iter().filter_map(eligible))
        .collect();
    let (max_x, max_y, caption) = if all.is_empty() {
        (1.0, 1.0, format!("Pareto frontier: {NO_POINTS}"))
    } else {
        (
            all.iter().map(|p| p.0).fold(0.0, f64::max) * 1.1,
            all.iter().map(|p| p.1).fold(0.0, f64::max) * 1.15,
            "Pareto frontier (upper-right rule): throughput per GPU vs E2EL".to_string(),
        )
    };
    let mut svg = String::new();
    draw(&mut svg, curves, (max_x, max_y), &caption)
        .map_err(|e| format!("plotting failed: {e}"))?;
    Ok(svg)
}

fn draw(
    svg: &mut String,
    curves: &[Curve],
    (max_x, max_y): (f64, f64),
    caption: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 20))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..max_x, 0.0..max_y)?;
    chart
        .configure_mesh()
        .x_desc("E2EL (s)")
        .y_desc("total token throughput per GPU (tok/s)")
        .draw()?;
    for (i, curve) in curves.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let a = pareto::assess(curve);
        let measured: Vec<&Point> = curve
            .points
            .iter()
            .filter(|p| eligible(p).is_some())
            .collect();
        let frontier: Vec<(f64, f64)> = a.frontier.iter().filter_map(eligible).collect();
        let legend = safe_text(&format!(
            "{}: {}/{} on the frontier",
            curve.key,
            a.frontier.len(),
            measured.len()
        ));
        chart
            .draw_series(LineSeries::new(frontier.clone(), color.stroke_width(2)))?
            .label(legend)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            frontier
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 5, color.filled())),
        )?;
        let dominated = a.dominated_points(curve);
        chart.draw_series(dominated.iter().filter_map(|p| {
            let (x, y) = eligible(p)?;
            let text = safe_text(&format!("{} (dominated)", short_label(&p.label)));
            Some(
                EmptyElement::at((x, y))
                    + Cross::new((0, 0), 5, color.stroke_width(2))
                    + Text::new(text, (8, -4), ("sans-serif", 13).into_font().color(&color)),
            )
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(x: f64, y: f64, label: &str) -> Point {
        Point {
            x: Some(x),
            y: Some(y),
            canonical: None,
            label: label.into(),
        }
    }

    #[test]
    fn dominated_points_are_labelled_and_frontier_ones_are_not() {
        let c = Curve {
            key: "k|p90".into(),
            points: vec![
                pt(1.0, 100.0, "a[0] A"),
                pt(2.0, 50.0, "a[1] B"),
                pt(3.0, 300.0, "a[2] C"),
            ],
        };
        let svg = plot_svg(&[c]).unwrap_or_else(|e| panic!("{e}"));
        assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
        assert!(svg.contains("B (dominated)"));
        assert!(!svg.contains("A (dominated)") && !svg.contains("C (dominated)"));
        assert!(svg.contains("k|p90: 2/3 on the frontier"));
    }

    #[test]
    fn hostile_labels_do_not_reach_the_svg() {
        let c = Curve {
            key: "<script>".into(),
            points: vec![pt(1.0, 100.0, "x"), pt(2.0, 50.0, "a] <b onload=x>")],
        };
        let svg = plot_svg(&[c]).unwrap_or_else(|e| panic!("{e}"));
        assert!(!svg.contains("<script") && !svg.contains("<b "));
    }

    /// Check 14 is advisory: nothing to plot is an empty chart that says so, not a failure.
    #[test]
    fn nothing_to_plot_is_an_empty_chart_that_says_so() {
        let c = Curve {
            key: "k".into(),
            points: vec![pt(0.0, 1.0, "zero latency")],
        };
        let svg = plot_svg(&[c]).unwrap_or_else(|e| panic!("{e}"));
        assert!(svg.contains(NO_POINTS), "{svg}");
        let svg = plot_svg(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(svg.contains(NO_POINTS), "{svg}");
    }
}
