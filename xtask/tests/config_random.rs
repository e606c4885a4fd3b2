//! The seeded random config differential against upstream's generator, InferenceX 843c6254
//! (docs/config.md, "Random differential"): a bounded number of mutated master-config cases per
//! run with a fresh seed (in CI, the commit under test), printed so a failure replays with
//! `cargo xtask conformance matrix --random N --seed S`. Skips visibly without ../shared
//! (corpus or reference) or when the oracle's venv cannot be made.

use xtask::conformance::config_random;

/// Cases per test run: every mutation kind many times, about 40 s on the shared 2-core VM once
/// the venv exists. `INFX_CONFIG_CASES` and `INFX_SEED` override.
const CASES: usize = 150;

#[test]
fn random_configs_agree_with_upstreams_generator() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        println!("SKIP: config random differential: ../shared/corpus not found");
        return;
    };
    let count = std::env::var("INFX_CONFIG_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let seed = xtask::conformance::test_seed("INFX_SEED");
    println!(
        "config random differential: {count} cases, seed {seed} \
         (replay: cargo xtask conformance matrix --random {count} --seed {seed})"
    );
    let Some(outcome) = config_random::run(&corpus, count, seed).expect("the differential runs")
    else {
        return; // SKIP printed by run
    };
    println!("{}", outcome.summary());
    for d in &outcome.disagreements {
        println!("  disagree: {d}");
    }
    for e in &outcome.explained {
        println!("  explained: {e}");
    }
    assert_eq!(outcome.total, count, "every case was compared");
    assert!(
        outcome.disagreements.is_empty(),
        "{} disagreements with upstream's generator (seed {seed})",
        outcome.disagreements.len()
    );
}

/// The mutator is deterministic: a seed names the same cases on every machine, and different
/// seeds name different ones.
#[test]
fn seeded_config_cases_replay() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        println!("SKIP: config random differential: ../shared/corpus not found");
        return;
    };
    let seeds = config_random::seeds(&corpus).expect("the August tree loads");
    let texts = |seed| -> Vec<String> {
        config_random::cases(&seeds, 40, seed)
            .into_iter()
            .map(|c| format!("{:?} {:?}", c.files, c.argv))
            .collect()
    };
    let a = texts(7);
    assert_eq!(a.len(), 40);
    assert_eq!(a, texts(7));
    assert_ne!(a, texts(8));
}
