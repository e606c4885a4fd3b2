//! The seeded random config differential against upstream's generator, InferenceX 843c6254
//! (docs/config.md, "Random differential") on fixed seeds only (xtask-dev/src/conformance/seeds.rs):
//! every seed that once found a disagreement, at its listed cases, and a broad seed of 150
//! cases, so a commit's verdict depends on the commit alone. Fresh seeds run in the scheduled
//! workflow and with `cargo xtask conformance matrix --random N`; `INFX_SEED` (and `INFX_CASES`)
//! replays one seed here. Skips visibly without ../shared (corpus or reference) or when the
//! oracle's venv cannot be made.

use xtask_dev::conformance::seeds::{self, Differential};

#[test]
fn fixed_seed_configs_agree_with_upstreams_generator() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        println!("SKIP: config random differential: ../shared/corpus not found");
        return;
    };
    let failures =
        seeds::check_fixed(Differential::Matrix, &corpus).expect("the differential runs");
    assert!(
        failures.is_empty(),
        "disagreements with upstream's generator:\n{failures}"
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
    let seeds =
        xtask_dev::conformance::config_random::seeds(&corpus).expect("the August tree loads");
    let texts = |seed| -> Vec<String> {
        xtask_dev::conformance::config_random::cases(&seeds, 40, seed)
            .into_iter()
            .map(|c| format!("{:?} {:?}", c.files, c.argv))
            .collect()
    };
    let a = texts(7);
    assert_eq!(a.len(), 40);
    assert_eq!(a, texts(7));
    assert_ne!(a, texts(8));
}
