//! Check 14: Pareto coverage (advisory). The upper-right frontier of throughput per GPU (y) over
//! end-to-end latency in seconds (x), per curve, with the dashboard's plateau rule.

use crate::codes;
use infx_report::Diagnostic;
use serde_json::Value as Json;
use std::path::Path;

pub const CODE: infx_report::Code = codes::PARETO;
pub const CODE_INPUT: infx_report::Code = codes::PARETO_INPUT;
pub const RECOMMENDED_POINTS: usize = 5;
pub const CANONICAL_FLAG: &str = "isOnNormalizedInteractivityFrontier";

/// One measured point. `canonical` is the `isOnNormalizedInteractivityFrontier` field when present
/// (`Some(None)` = present but not literally `true`/`false`).
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub x: Option<f64>,
    pub y: Option<f64>,
    pub canonical: Option<Option<bool>>,
    /// Where the point came from (file, concurrency), for messages.
    pub label: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub key: String,
    pub points: Vec<Point>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    pub key: String,
    pub measured: usize,
    pub invalid: usize,
    pub frontier: Vec<Point>,
    pub canonical_restriction: bool,
}

impl Assessment {
    pub fn pass(&self) -> bool {
        self.invalid == 0 && self.frontier.len() >= RECOMMENDED_POINTS
    }
    /// Points that are valid but not on the frontier.
    pub fn dominated(&self) -> usize {
        self.measured - self.invalid - self.frontier.len()
    }
    /// The valid points of `curve` (the curve assessed) that are not on the frontier.
    pub fn dominated_points<'a>(&self, curve: &'a Curve) -> Vec<&'a Point> {
        curve
            .points
            .iter()
            .filter(|p| eligible(p.x).is_some() && eligible(p.y).is_some())
            .filter(|p| {
                !self
                    .frontier
                    .iter()
                    .any(|f| f.x == p.x && f.y == p.y && f.label == p.label)
            })
            .collect()
    }
}

fn eligible(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite() && *x > 0.0)
}

/// The frontier of one curve (docs/review.md, "The Pareto frontier").
pub fn assess(curve: &Curve) -> Assessment {
    let canonical = curve.points.iter().any(|p| p.canonical.is_some());
    let mut pts: Vec<(f64, f64, &Point)> = curve
        .points
        .iter()
        .filter_map(|p| Some((eligible(p.x)?, eligible(p.y)?, p)))
        .collect();
    let invalid = curve.points.len() - pts.len();
    // x ascending, ties y descending; stable, so input order breaks exact ties.
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut frontier: Vec<(f64, f64, &Point)> = Vec::new();
    let mut max_y = f64::NEG_INFINITY;
    for p in pts {
        let plateau = frontier.last().is_some_and(|l| p.1 == max_y && p.0 > l.0);
        if p.1 > max_y || plateau {
            match frontier.last_mut() {
                Some(last) if last.0 == p.0 => *last = p,
                _ => frontier.push(p),
            }
            max_y = p.1;
        }
    }
    let mut frontier: Vec<Point> = frontier.into_iter().map(|p| p.2.clone()).collect();
    if canonical {
        frontier.retain(|p| p.canonical == Some(Some(true)));
    }
    Assessment {
        key: curve.key.clone(),
        measured: curve.points.len(),
        invalid,
        frontier,
        canonical_restriction: canonical,
    }
}

/// Warnings for every curve below the recommendation or with invalid points; nothing for a PASS.
pub fn check(curves: &[Curve], source: &Path) -> Vec<Diagnostic> {
    curves
        .iter()
        .map(assess)
        .filter(|a| !a.pass())
        .map(|a| {
            let mut msg = format!(
                "curve `{}` has {}/{} frontier points ({} measured, {} dominated",
                a.key,
                a.frontier.len(),
                RECOMMENDED_POINTS,
                a.measured,
                a.dominated()
            );
            if a.invalid > 0 {
                msg.push_str(&format!(", {} invalid", a.invalid));
            }
            msg.push(')');
            let mut d = Diagnostic::warning(CODE, msg).with_path(source).with_help(
                "add operating points that extend the frontier, or record an admin bypass",
            );
            if a.canonical_restriction {
                d = d.with_note(
                    "only points flagged isOnNormalizedInteractivityFrontier: true count",
                );
            }
            for p in &a.frontier {
                d = d.with_note(format!(
                    "frontier: x={} s, y={} tok/s/gpu ({})",
                    p.x.unwrap_or(f64::NAN),
                    p.y.unwrap_or(f64::NAN),
                    p.label
                ));
            }
            d
        })
        .collect()
}

fn num(v: Option<&Json>) -> Option<f64> {
    // Booleans are not numbers here (the dashboard's Number.isFinite rejects them).
    v.and_then(Json::as_f64)
}

fn input_error(source: &Path, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(CODE_INPUT, msg).with_path(source)
}

/// Reads the reference tool's input: a non-empty list of `{key, points: [{x, y, …}]}`.
pub fn curves_from_reference_json(json: &Json, source: &Path) -> Result<Vec<Curve>, Diagnostic> {
    let Some(list) = json.as_array().filter(|l| !l.is_empty()) else {
        return Err(input_error(
            source,
            "provide every affected curve; an empty list cannot prove coverage",
        ));
    };
    let mut out: Vec<Curve> = Vec::new();
    for c in list {
        let key = c
            .get("key")
            .and_then(Json::as_str)
            .filter(|k| !k.trim().is_empty());
        let points = c.get("points").and_then(Json::as_array);
        let (Some(key), Some(points)) = (key, points) else {
            return Err(input_error(
                source,
                "each curve needs a non-empty key and a points array",
            ));
        };
        if out.iter().any(|o| o.key == key) {
            return Err(input_error(
                source,
                format!("curve key `{key}` is repeated; do not split one curve across inputs"),
            ));
        }
        let points = points
            .iter()
            .enumerate()
            .map(|(i, p)| Point {
                x: num(p.get("x")),
                y: num(p.get("y")),
                canonical: p.get(CANONICAL_FLAG).map(Json::as_bool),
                label: format!("point {i}"),
            })
            .collect();
        out.push(Curve {
            key: key.to_string(),
            points,
        });
    }
    Ok(out)
}

fn field<'a>(row: &'a Json, names: &[&str]) -> Option<&'a Json> {
    names
        .iter()
        .find_map(|n| row.get(*n).filter(|v| !v.is_null()))
}

fn text(row: &Json, names: &[&str]) -> String {
    match field(row, names) {
        Some(Json::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "?".into(),
    }
}

/// Curve identity of a result row: model, scenario, hardware key, precision, run/date.
fn series(row: &Json, agentic: bool) -> String {
    let model = text(row, &["infmax_model_prefix", "model_prefix", "model"]);
    let scenario = if agentic {
        infx_matrix::ScenarioType::AgenticCoding
            .as_str()
            .to_string()
    } else {
        format!("{}/{}", text(row, &["isl"]), text(row, &["osl"]))
    };
    let mut hw = format!(
        "{}_{}",
        text(row, &["hw", "hardware"]),
        text(row, &["framework"])
    );
    // Fixed-seq series carry the speculative method; agentic series do not.
    if !agentic
        && let Some(Json::String(s)) = field(row, &["spec_decoding"])
        && s != "none"
        && !s.is_empty()
    {
        hw.push('_');
        hw.push_str(s);
    }
    let precision = text(row, &["precision"]);
    let run = text(row, &["date", "run_id", "run"]);
    format!("{model}|{scenario}|{hw}|{precision}|{run}")
}

/// Collects points from benchmark artifacts into curves: `agg_bmk.json` (a list of fixed-seq rows:
/// x = `median_e2el` s, y = `tput_per_gpu`) and `bmk_agentic_*` JSON (an object or list with
/// `request_metrics.latency.e2el.p90`/`p75` and `request_metrics.throughput.per_gpu.total_tput_tps`;
/// one curve per percentile). The reference tool's curve list is accepted as is.
pub fn curves_from_artifact(
    json: &Json,
    source: &Path,
    into: &mut Vec<Curve>,
) -> Result<(), Diagnostic> {
    let rows: Vec<&Json> = match json {
        Json::Array(a) => a.iter().collect(),
        Json::Object(_) => vec![json],
        _ => {
            return Err(input_error(
                source,
                "expected a JSON list or object of benchmark results",
            ));
        }
    };
    if rows
        .first()
        .is_some_and(|r| r.get("key").is_some() && r.get("points").is_some())
    {
        let curves = curves_from_reference_json(json, source)?;
        for c in curves {
            if into.iter().any(|o| o.key == c.key) {
                return Err(input_error(
                    source,
                    format!("curve key `{}` is repeated across inputs", c.key),
                ));
            }
            into.push(c);
        }
        return Ok(());
    }
    let name = source
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut push = |key: String, p: Point| match into.iter_mut().find(|c| c.key == key) {
        Some(c) => c.points.push(p),
        None => into.push(Curve {
            key,
            points: vec![p],
        }),
    };
    let mut used = 0;
    for (i, row) in rows.iter().enumerate() {
        let conc = text(row, &["conc", "concurrency"]);
        // With the parallelism when the row has it (`TP4 C1`, `DP4 C192`): what a reviewer
        // names the point by.
        let label = match field(row, &["tp"]) {
            Some(_) => {
                let dp = field(row, &["dp_attention", "dp-attn", "dp_attn"])
                    .is_some_and(|v| v.as_bool() == Some(true) || v.as_str() == Some("true"));
                let tp = text(row, &["tp"]);
                format!("{name}[{i}] {}{tp} C{conc}", if dp { "DP" } else { "TP" })
            }
            None => format!("{name}[{i}] conc {conc}"),
        };
        if let Some(rm) = row.get("request_metrics") {
            let y = num(rm.pointer("/throughput/per_gpu/total_tput_tps"));
            for pct in ["p90", "p75"] {
                let Some(xv) = rm.pointer(&format!("/latency/e2el/{pct}")) else {
                    continue;
                };
                let key = format!("{}|{pct}", series(row, true));
                push(
                    key,
                    Point {
                        x: num(Some(xv)),
                        y,
                        canonical: None,
                        label: label.clone(),
                    },
                );
                used += 1;
            }
        } else if row.get("tput_per_gpu").is_some() || row.get("median_e2el").is_some() {
            let key = format!("{}|median", series(row, false));
            push(
                key,
                Point {
                    x: num(row.get("median_e2el")),
                    y: num(row.get("tput_per_gpu")),
                    canonical: None,
                    label,
                },
            );
            used += 1;
        }
    }
    if used == 0 {
        return Err(input_error(
            source,
            "no benchmark results found (expected agg_bmk rows with tput_per_gpu/median_e2el, or bmk_agentic request_metrics)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(pts: &[(f64, f64)]) -> Curve {
        Curve {
            key: "c".into(),
            points: pts
                .iter()
                .map(|&(x, y)| Point {
                    x: Some(x),
                    y: Some(y),
                    canonical: None,
                    label: String::new(),
                })
                .collect(),
        }
    }
    fn xy(a: &Assessment) -> Vec<(f64, f64)> {
        a.frontier
            .iter()
            .map(|p| (p.x.unwrap_or(0.0), p.y.unwrap_or(0.0)))
            .collect()
    }

    #[test]
    fn spec_examples() {
        let a = assess(&curve(&[
            (3., 300.),
            (1., 100.),
            (2., 90.),
            (3., 200.),
            (3., 300.),
            (4., 400.),
        ]));
        assert_eq!(xy(&a), vec![(1., 100.), (3., 300.), (4., 400.)]);
        assert!(!a.pass());
        let a = assess(&curve(&[
            (1., 100.),
            (2., 100.),
            (3., 100.),
            (4., 100.),
            (5., 100.),
            (5., 100.),
        ]));
        assert_eq!(a.frontier.len(), 5);
        assert!(a.pass());
        let a = assess(&curve(&[
            (1., 1.),
            (2., 2.),
            (3., 3.),
            (4., 4.),
            (5., 5.),
            (0., 9.),
        ]));
        assert_eq!((a.frontier.len(), a.invalid), (5, 1));
        assert!(!a.pass());
    }

    #[test]
    fn canonical_flags_restrict_after_the_frontier() {
        let mut c = curve(&[(1., 1.), (2., 2.), (3., 1.5)]);
        c.points[0].canonical = Some(Some(true));
        c.points[2].canonical = Some(Some(true)); // dominated: never promoted
        let a = assess(&c);
        assert!(a.canonical_restriction);
        assert_eq!(xy(&a), vec![(1., 1.)]);
    }

    #[test]
    fn warnings_only_for_failing_curves() {
        let good = Curve {
            key: "g".into(),
            ..curve(&[(1., 1.), (2., 2.), (3., 3.), (4., 4.), (5., 5.)])
        };
        let bad = Curve {
            key: "b".into(),
            ..curve(&[(1., 1.), (2., 2.)])
        };
        let d = check(&[good, bad], Path::new("a.json"));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, CODE);
        assert!(
            d[0].message.contains("`b` has 2/5 frontier points"),
            "{}",
            d[0].message
        );
    }

    #[test]
    fn reference_input_validation() {
        let p = Path::new("x");
        assert!(curves_from_reference_json(&serde_json::json!([]), p).is_err());
        assert!(
            curves_from_reference_json(&serde_json::json!([{"key": " ", "points": []}]), p)
                .is_err()
        );
        let dup = serde_json::json!([{"key": "a", "points": []}, {"key": "a", "points": []}]);
        assert!(curves_from_reference_json(&dup, p).is_err());
        let ok =
            serde_json::json!([{"key": "a", "points": [{"x": true, "y": 1}, {"x": 1, "y": 2}]}]);
        let c = curves_from_reference_json(&ok, p).unwrap_or_default();
        assert_eq!(assess(&c[0]).invalid, 1);
    }

    #[test]
    fn agentic_artifacts_make_p90_and_p75_curves() {
        let mut curves = Vec::new();
        let row = |c: i64, x: f64, y: f64| {
            serde_json::json!({"hw": "gb300", "framework": "dynamo-sglang", "precision": "fp4",
                "infmax_model_prefix": "dsv4", "date": "2026-08-01", "conc": c,
                "request_metrics": {"latency": {"e2el": {"p90": x, "p75": x * 0.8}},
                                    "throughput": {"per_gpu": {"total_tput_tps": y}}}})
        };
        let j = serde_json::json!([row(1, 1.0, 10.0), row(2, 2.0, 20.0)]);
        assert!(curves_from_artifact(&j, Path::new("bmk_agentic_x.json"), &mut curves).is_ok());
        assert_eq!(curves.len(), 2);
        assert!(curves[0].key.ends_with("|p90"));
        assert_eq!(assess(&curves[0]).frontier.len(), 2);
    }

    proptest::proptest! {
        /// Frontier invariants: x strictly increasing, y non-decreasing, no eligible point
        /// strictly dominates a frontier point, and the count never exceeds the eligible points.
        #[test]
        fn frontier_invariants(pts in proptest::collection::vec((0u8..12, 0u8..12), 0..40)) {
            let c = curve(&pts.iter().map(|&(x, y)| (f64::from(x), f64::from(y))).collect::<Vec<_>>());
            let a = assess(&c);
            let f = xy(&a);
            for w in f.windows(2) {
                proptest::prop_assert!(w[0].0 < w[1].0 && w[0].1 <= w[1].1, "{:?}", f);
            }
            let eligible: Vec<(f64, f64)> = c.points.iter()
                .filter_map(|p| Some((eligible(p.x)?, eligible(p.y)?)))
                .collect();
            proptest::prop_assert_eq!(a.invalid, c.points.len() - eligible.len());
            proptest::prop_assert!(f.len() <= eligible.len());
            for &(fx, fy) in &f {
                proptest::prop_assert!(!eligible.iter().any(|&(x, y)| x <= fx && y > fy), "{:?} dominated", (fx, fy));
            }
        }
    }
}
