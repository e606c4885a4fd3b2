//! The fixed seeds of the random differentials (issue #41): what `cargo xtask test` and
//! `cargo xtask conformance --fixed` run, so that a commit's verdict depends on the commit
//! alone. Fresh seeds run in the scheduled workflow (`.github/workflows/nightly.yml`) and on
//! demand (`cargo xtask conformance AREA --random N [--seed S]`); a seed that finds a
//! disagreement is added to [`REGRESSIONS`] with the commit that fixed it.

use super::{Outcome, changelog_random, config_random, recipes_random, yaml_random};
use std::path::Path;

/// Which random differential a seed belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Differential {
    /// Random recipes against srtctl dry-run and its mock runtime (`conformance recipes`).
    Recipes,
    /// Mutated master configs against upstream's generator (`conformance matrix`).
    Matrix,
    /// Changelog edits and merges against upstream's functions (`conformance changelog`).
    Changelog,
    /// Random YAML texts against PyYAML's `safe_load` (`conformance yaml`).
    Yaml,
}

impl Differential {
    /// The `cargo xtask conformance` area that runs it.
    pub fn area(self) -> &'static str {
        match self {
            Differential::Recipes => "recipes",
            Differential::Matrix => "matrix",
            Differential::Changelog => "changelog",
            Differential::Yaml => "yaml",
        }
    }

    /// The command that replays the first `count` cases of `seed`.
    pub fn replay(self, count: usize, seed: u64) -> String {
        format!(
            "cargo xtask conformance {} --random {count} --seed {seed}",
            self.area()
        )
    }
}

/// A seed that once found a disagreement: the case numbers as the differential printed them
/// (`case N (seed S …)` for matrix and changelog, `case S/N` for recipes) and the commit that
/// fixed it. Mined from main's history (commit messages naming `seed S case N`).
#[derive(Clone, Copy, Debug)]
pub struct Regression {
    pub differential: Differential,
    pub seed: u64,
    pub cases: &'static [usize],
    /// The fixing commit on main (abbreviated id).
    pub fix: &'static str,
}

/// Every seed that ever found a disagreement, oldest fix first. Only the listed cases run
/// (a regression case costs what a broad one does; seed 3 reaches case 1832).
pub const REGRESSIONS: &[Regression] = &[
    reg(Differential::Recipes, 1796167166511964523, &[28], "32a08a0"),
    reg(Differential::Matrix, 2, &[122], "e05de61"),
    reg(Differential::Matrix, 3, &[17], "c8674ca"),
    reg(Differential::Matrix, 20261202, &[439], "bcefa03"),
    reg(Differential::Recipes, 20261202, &[163, 656], "84f9aae"),
    reg(Differential::Recipes, 20261202, &[320], "81a8db6"),
    reg(Differential::Recipes, 9861808613072854077, &[82], "cd7ff69"),
    reg(
        Differential::Recipes,
        5358291241035468437,
        &[100],
        "33e1cce",
    ),
    reg(Differential::Recipes, 3, &[69], "2c38358"),
    reg(Differential::Recipes, 3, &[38, 654, 704], "82f16d7"),
    reg(Differential::Recipes, 20261202, &[72, 117, 1110], "7722465"),
    reg(
        Differential::Recipes,
        3,
        &[1565, 1637, 1785, 1832],
        "35f9f7c",
    ),
    reg(Differential::Recipes, 1796185972799673218, &[27], "35f9bc0"),
    reg(Differential::Recipes, 1796183668796209755, &[70], "35f9bc0"),
    reg(
        Differential::Recipes,
        7349712202977679463,
        &[139],
        "734333a",
    ),
    reg(Differential::Recipes, 603457107220992814, &[86], "6583cf4"),
    reg(Differential::Recipes, 1796549227522416176, &[27], "1e13c77"),
    reg(
        Differential::Recipes,
        17137302722761765388,
        &[36],
        "ee87ba7",
    ),
];

const fn reg(
    differential: Differential,
    seed: u64,
    cases: &'static [usize],
    fix: &'static str,
) -> Regression {
    Regression {
        differential,
        seed,
        cases,
        fix,
    }
}

/// A broad seed: `count` cases from `seed`, every mutation kind many times over.
#[derive(Clone, Copy, Debug)]
pub struct Broad {
    pub differential: Differential,
    pub seed: u64,
    pub count: usize,
}

/// The broad seeds: seeds whose larger runs the docs record as full agreement (docs/recipe.md,
/// docs/config.md, docs/changelog.md), at the case counts the commit-seeded runs used.
pub const BROAD: &[Broad] = &[
    Broad {
        differential: Differential::Recipes,
        seed: 20261201,
        count: 150,
    },
    Broad {
        differential: Differential::Matrix,
        seed: 20261203,
        count: 150,
    },
    Broad {
        differential: Differential::Changelog,
        seed: 20261202,
        count: 400,
    },
    YAML_BROAD,
];

/// The YAML differential's broad seed: 10,000 texts (issue #45), a few seconds of PyYAML.
pub const YAML_BROAD: Broad = Broad {
    differential: Differential::Yaml,
    seed: 20261207,
    count: 10_000,
};

/// The cases of one differential run, as numbered in its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cases {
    /// Cases `0..n`.
    First(usize),
    /// Only these case numbers.
    Only(Vec<usize>),
}

/// Runs `cases` of `seed` through `differential`; `Ok(None)` when its oracle is missing (a SKIP
/// line was printed).
pub fn run(
    differential: Differential,
    corpus: &Path,
    seed: u64,
    cases: &Cases,
) -> anyhow::Result<Option<Outcome>> {
    match differential {
        Differential::Recipes => {
            if let Err(why) = recipes_random::oracle_python() {
                println!("SKIP: recipe random differential: {why}");
                return Ok(None);
            }
            recipes_random::run_selected(corpus, seed, cases).map(Some)
        }
        Differential::Matrix => config_random::run_selected(corpus, seed, cases),
        Differential::Changelog => changelog_random::run_selected(seed, cases),
        Differential::Yaml => yaml_random::run_selected(seed, cases),
    }
}

/// One fixed seed's run: what it is, the command that replays it, and its outcome.
#[derive(Debug)]
pub struct FixedRun {
    pub what: String,
    pub replay: String,
    pub outcome: Outcome,
}

/// Every fixed seed of `differential` (its regressions, then its broad seeds); empty when its
/// oracle is missing (a SKIP line was printed). `INFX_SEED` (with `INFX_CASES`, default 150)
/// runs that one seed instead: a scheduled run's failure replayed under `cargo test`.
pub fn run_fixed(differential: Differential, corpus: &Path) -> anyhow::Result<Vec<FixedRun>> {
    let mut runs: Vec<(u64, Cases, String)> = Vec::new();
    if let Some(seed) = std::env::var("INFX_SEED").ok().and_then(|v| v.parse().ok()) {
        let count = std::env::var("INFX_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(150);
        runs.push((
            seed,
            Cases::First(count),
            format!("seed {seed} (INFX_SEED)"),
        ));
    } else {
        for r in REGRESSIONS
            .iter()
            .filter(|r| r.differential == differential)
        {
            let what = format!("regression seed {} (fixed in {})", r.seed, r.fix);
            runs.push((r.seed, Cases::Only(r.cases.to_vec()), what));
        }
        for b in BROAD.iter().filter(|b| b.differential == differential) {
            runs.push((
                b.seed,
                Cases::First(b.count),
                format!("broad seed {}", b.seed),
            ));
        }
    }
    let mut out = Vec::new();
    // The recipe regressions share one srtctl process (15 starts were a third of the test).
    if differential == Differential::Recipes && std::env::var_os("INFX_SEED").is_none() {
        if let Err(why) = recipes_random::oracle_python() {
            println!("SKIP: recipe random differential: {why}");
            return Ok(Vec::new());
        }
        let pairs: Vec<(u64, usize)> = runs
            .iter()
            .filter_map(|(seed, cases, _)| match cases {
                Cases::Only(list) => Some(list.iter().map(move |&i| (*seed, i))),
                Cases::First(_) => None,
            })
            .flatten()
            .collect();
        let fixes: Vec<&str> = REGRESSIONS
            .iter()
            .filter(|r| r.differential == differential)
            .map(|r| r.fix)
            .collect();
        out.push(FixedRun {
            what: format!(
                "regression cases ({} cases; fixed in {})",
                pairs.len(),
                fixes.join(", ")
            ),
            replay: "cargo xtask conformance recipes --seed S --case K (case S/K)".to_string(),
            outcome: recipes_random::run_pairs(corpus, &pairs)?,
        });
        runs.retain(|(_, cases, _)| matches!(cases, Cases::First(_)));
    }
    for (seed, cases, what) in runs {
        match run(differential, corpus, seed, &cases)? {
            Some(outcome) => out.push(FixedRun {
                what,
                replay: super::replay(differential, seed, &cases),
                outcome,
            }),
            None => return Ok(Vec::new()),
        }
    }
    Ok(out)
}

/// What a test prints for the fixed runs of one differential, and every disagreement with the
/// command that replays it (empty when all agree).
pub fn check_fixed(differential: Differential, corpus: &Path) -> anyhow::Result<String> {
    let mut failures = String::new();
    for run in run_fixed(differential, corpus)? {
        println!(
            "{} {}: {} (replay: {})",
            differential.area(),
            run.what,
            run.outcome.summary(),
            run.replay
        );
        for d in &run.outcome.disagreements {
            println!("  disagree: {d}");
            failures.push_str(&format!("{} {}: {d}\n", differential.area(), run.what));
        }
        if run.outcome.disagreements.is_empty() && run.outcome.agree != run.outcome.total {
            failures.push_str(&format!(
                "{} {}: {}\n",
                differential.area(),
                run.what,
                run.outcome.summary()
            ));
        }
        if !run.outcome.disagreements.is_empty() || run.outcome.agree != run.outcome.total {
            failures.push_str(&format!("  reproduce with: {}\n", run.replay));
        }
    }
    Ok(failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regressions_name_a_fix_and_each_case_once() {
        let mut seen = std::collections::BTreeSet::new();
        for r in REGRESSIONS {
            assert!(
                r.fix.len() >= 7 && r.fix.bytes().all(|b| b.is_ascii_hexdigit()),
                "{r:?}"
            );
            assert!(!r.cases.is_empty(), "{r:?}");
            for c in r.cases {
                assert!(
                    seen.insert((r.differential.area(), r.seed, *c)),
                    "listed twice: {r:?} case {c}"
                );
            }
        }
    }

    #[test]
    fn replay_is_the_conformance_command() {
        assert_eq!(
            Differential::Matrix.replay(150, 7),
            "cargo xtask conformance matrix --random 150 --seed 7"
        );
    }
}
