//! The seeded random recipe differential against srtctl c88ef731 (docs/recipe.md, "Random
//! differential"), launch commands (srtctl.mock) included, on fixed seeds only
//! (xtask-dev/src/conformance/seeds.rs): every seed that once found a disagreement, at its listed
//! cases, and a broad seed of 150 cases, so a commit's verdict depends on the commit alone.
//! Fresh seeds run in the scheduled workflow and with `cargo xtask conformance recipes --random
//! N`; `INFX_SEED` (and `INFX_CASES`) replays one seed here. Skips visibly without ../shared
//! (corpus or reference) or when the srtctl venv cannot be made.

use xtask_dev::conformance::recipes_random;
use xtask_dev::conformance::seeds::{self, Differential};

#[test]
fn fixed_seed_recipes_agree_with_srtctl() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        println!("SKIP: recipe random differential: ../shared/corpus not found");
        return;
    };
    let failures =
        seeds::check_fixed(Differential::Recipes, &corpus).expect("the differential runs");
    assert!(
        failures.is_empty(),
        "disagreements with srtctl:\n{failures}"
    );
}

/// The srt-slurm vLLM and mocker recipes of the corpus, unmutated, launch exactly what srtctl's
/// mock runtime launches (the full corpus runs with `conformance recipes --random N`).
#[test]
fn corpus_vllm_and_mocker_launches_agree_with_srtctl_mock() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        println!("SKIP: corpus launch differential: ../shared/corpus not found");
        return;
    };
    if let Err(why) = recipes_random::oracle_python() {
        println!("SKIP: corpus launch differential: {why}");
        return;
    }
    let outcome = recipes_random::run_corpus_launches_where(&corpus, |id| {
        id.starts_with("srt-slurm/recipes__vllm") || id.starts_with("srt-slurm/recipes__mocker")
    })
    .expect("the differential runs");
    println!("{}", outcome.summary());
    for d in &outcome.disagreements {
        println!("  disagree: {d}");
    }
    assert!(
        outcome.total >= 10,
        "vLLM and mocker recipes: {}",
        outcome.total
    );
    assert!(
        outcome.disagreements.is_empty(),
        "{} disagreements",
        outcome.disagreements.len()
    );
}

/// The mutator is deterministic: a seed names the same cases on every machine.
#[test]
fn seeded_cases_replay() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        println!("SKIP: recipe random differential: ../shared/corpus not found");
        return;
    };
    let seeds = recipes_random::seeds(&corpus);
    assert!(seeds.len() > 100, "seed recipes: {}", seeds.len());
    let a: Vec<String> = (0..50)
        .filter_map(|i| recipes_random::make_case(&seeds, 7, i))
        .map(|c| c.recipe)
        .collect();
    let b: Vec<String> = (0..50)
        .filter_map(|i| recipes_random::make_case(&seeds, 7, i))
        .map(|c| c.recipe)
        .collect();
    assert_eq!(a.len(), 50);
    assert_eq!(a, b);
    let other: Vec<String> = (0..50)
        .filter_map(|i| recipes_random::make_case(&seeds, 8, i))
        .map(|c| c.recipe)
        .collect();
    assert_ne!(a, other);
}

/// Issue #45: every frontend × backend pair srtctl's mock supports launches what the mock
/// launches; an SGLang router in front of vLLM workers lists their URLs.
#[test]
fn every_frontend_and_backend_pair_launches_as_srtctl_mock() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        println!("SKIP: frontend pairs differential: ../shared/corpus not found");
        return;
    };
    if let Err(why) = recipes_random::oracle_python() {
        println!("SKIP: frontend pairs differential: {why}");
        return;
    }
    let cases = recipes_random::frontend_pair_cases(&corpus);
    assert!(
        cases.iter().any(|c| c
            .what
            .starts_with("vllm disaggregated with frontend sglang")),
        "a vLLM disaggregated seed behind the SGLang router"
    );
    let outcome = recipes_random::run_frontend_pairs(&corpus).expect("the differential runs");
    println!("{}", outcome.summary());
    for d in &outcome.disagreements {
        println!("  disagree: {d}");
    }
    assert!(
        outcome.disagreements.is_empty(),
        "{} disagreements",
        outcome.disagreements.len()
    );
}
