//! The seeded random recipe differential against srtctl c88ef731 (docs/recipe.md, "Random
//! differential"), launch commands (srtctl.mock) included: a bounded number of cases per run with a fresh seed (in CI, the commit under test), printed so a failure
//! replays with `cargo xtask conformance recipes --random N --seed S`. Skips visibly without
//! ../shared (corpus or reference) or when the srtctl venv cannot be made.

use xtask::conformance::recipes_random;

/// Cases per test run: enough to touch every mutation kind many times, small enough for CI
/// (about 1 s a case with srtctl's mock runtime on the shared 2-core VM once the venv exists:
/// two to three minutes).
/// `INFX_RANDOM_CASES` and `INFX_RANDOM_SEED` override.
const CASES: usize = 150;

#[test]
fn random_recipes_agree_with_srtctl() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        println!("SKIP: recipe random differential: ../shared/corpus not found");
        return;
    };
    if let Err(why) = recipes_random::oracle_python() {
        println!("SKIP: recipe random differential: {why}");
        return;
    }
    let count = std::env::var("INFX_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let seed = xtask::conformance::test_seed("INFX_RANDOM_SEED");
    println!(
        "recipe random differential: {count} cases, seed {seed} \
         (replay: cargo xtask conformance recipes --random {count} --seed {seed})"
    );
    let outcome = recipes_random::run(&corpus, count, seed).expect("the differential runs");
    println!("{}", outcome.summary());
    for d in &outcome.disagreements {
        println!("  disagree: {d}");
    }
    assert_eq!(outcome.total, count, "every case was compared");
    assert!(
        outcome.disagreements.is_empty(),
        "{} disagreements with srtctl (seed {seed})",
        outcome.disagreements.len()
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
