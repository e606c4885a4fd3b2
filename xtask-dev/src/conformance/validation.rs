//! `cargo xtask conformance validation`: our config checks against upstream's verdicts on the
//! single-fault mutations in `corpus/goldens/validation` (rebuilt in memory by
//! `infx_config::run_validation_goldens`; the corpus is never written).

use infx_config::{Verdict, run_validation_goldens};
use std::path::Path;

pub fn run(corpus: &Path) -> anyhow::Result<super::Outcome> {
    let report = run_validation_goldens(
        &corpus.join("goldens/validation"),
        &corpus.join("inferencex-aug2026"),
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    let mut out = super::Outcome {
        area: "validation",
        total: report.total(),
        agree: report.agree(),
        ..Default::default()
    };
    for c in &report.cases {
        match &c.verdict {
            Verdict::Agree => {}
            Verdict::Explained(why) => out.explained.push(format!("{}: {why}", c.name)),
            Verdict::Deferred(why) => {
                println!("  deferred (not counted; matrix step): {}: {why}", c.name)
            }
            Verdict::Disagree(why) => out.disagreements.push(format!("{}: {why}", c.name)),
        }
    }
    if !report.baseline.is_empty() {
        println!(
            "  note: {} findings of the unmodified August tree (real, see docs/config.md) are excluded from every case",
            report.baseline.len()
        );
    }
    Ok(out)
}
