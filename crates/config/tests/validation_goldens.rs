//! Upstream's validation goldens: every counted case must agree (M/M). Skips without the corpus.

use infx_config::{Verdict, run_validation_goldens};
use std::path::PathBuf;

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.join("goldens/validation").is_dir().then_some(dir)
}

#[test]
fn validation_goldens_all_agree() {
    let Some(corpus) = corpus() else {
        eprintln!("SKIP: validation_goldens_all_agree: ../shared/corpus not found");
        return;
    };
    let report = run_validation_goldens(
        &corpus.join("goldens/validation"),
        &corpus.join("inferencex-aug2026"),
    )
    .expect("goldens load");
    let bad: Vec<String> = report
        .cases
        .iter()
        .filter_map(|c| match &c.verdict {
            Verdict::Disagree(why) => Some(format!("{}: {why}", c.name)),
            _ => None,
        })
        .collect();
    assert!(bad.is_empty(), "disagreements:\n{}", bad.join("\n"));
    assert_eq!(report.agree(), report.total());
    // 93 cases: 4 generate-phase cases are the matrix step's; the rest are counted.
    assert!(
        report.total() >= 89,
        "only {} cases counted",
        report.total()
    );
    let deferred = report
        .cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Deferred(_)))
        .count();
    assert_eq!(deferred + report.total(), report.cases.len());
}
