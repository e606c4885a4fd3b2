//! `cargo xtask conformance [validation|recipes|matrix|changelog|yaml|real-prs]`: agreement with the
//! reference outputs in ../shared/corpus, and upstream's real pull requests against a
//! hand-reviewed expectation file (`real-prs`). Each area lives in its own module.

pub mod changelog;
pub mod changelog_random;
pub mod config_random;
pub mod matrix;
pub mod oracle;
pub mod real_prs;
pub mod recipes;
pub mod recipes_random;
pub mod seeds;
pub mod validation;
pub mod yaml_random;

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
// `--seed` says which cases only with `--random N` or `--case K` (a usage error otherwise).
#[command(group(clap::ArgGroup::new("draw").args(["random", "cases"])))]
pub struct Args {
    /// Which area; all when omitted.
    pub area: Option<Area>,
    /// Print every disagreement and every explained (deliberately stricter) case.
    #[arg(long)]
    pub verbose: bool,
    /// Also run N seeded random cases against the reference tools (recipes: srtctl dry-run and
    /// its mock runtime's launch commands, then every corpus recipe's launches; matrix: mutated
    /// master configs through upstream's generator; changelog: strict edits and merge
    /// resolutions through upstream's functions; yaml: generated texts through PyYAML).
    #[arg(long, value_name = "N", conflicts_with = "fixed")]
    pub random: Option<usize>,
    /// Seed of the random cases (default: from the clock; printed so a run can be replayed).
    #[arg(long, value_name = "S", conflicts_with = "fixed", requires = "draw")]
    pub seed: Option<u64>,
    /// Only these case numbers of the seed, as a report numbers them (repeatable; with
    /// `--seed`, instead of `--random`).
    #[arg(
        long = "case",
        value_name = "N",
        requires = "seed",
        conflicts_with = "random"
    )]
    pub cases: Vec<usize>,
    /// Also run the fixed seeds `cargo xtask test` runs: every regression seed's cases and the
    /// broad seeds (xtask-dev/src/conformance/seeds.rs).
    #[arg(long)]
    pub fixed: bool,
    /// real-prs: replay only these commits (an id of at least 7 hex digits, or a PR number).
    #[arg(long, value_name = "COMMIT|PR")]
    pub only: Vec<String>,
    /// real-prs: the expectation file (default: xtask-dev/tests/real-prs/expected.tsv).
    #[arg(long, value_name = "FILE")]
    pub expected: Option<std::path::PathBuf>,
    /// real-prs: write a draft expectation file from the findings (a labelling aid: every
    /// unlabelled finding is a `?` row to review by hand; docs/review.md, "Real pull requests
    /// as a test corpus").
    #[arg(long, value_name = "FILE")]
    pub draft: Option<std::path::PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Area {
    Validation,
    Recipes,
    Matrix,
    Changelog,
    RealPrs,
    /// Random YAML texts against PyYAML (reader, tab and anchor rules; values).
    Yaml,
}

/// The result of one area: `N/M agree` plus every disagreement, and the cases where we are
/// deliberately stricter than upstream (counted as agreement, with the written reason).
#[derive(Debug, Default)]
pub struct Outcome {
    pub area: &'static str,
    pub total: usize,
    pub agree: usize,
    pub disagreements: Vec<String>,
    pub explained: Vec<String>,
}

impl Outcome {
    pub fn summary(&self) -> String {
        format!("{}: {}/{} agree", self.area, self.agree, self.total)
    }
}

/// A fresh seed per run, from the clock.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        eprintln!("SKIP: conformance: ../shared/corpus not found (set INFX_CORPUS to its path)");
        return Ok(ExitCode::SUCCESS);
    };
    let areas: &[Area] = match args.area {
        Some(ref a) => std::slice::from_ref(a),
        None => &[
            Area::Validation,
            Area::Recipes,
            Area::Matrix,
            Area::Changelog,
            Area::Yaml,
            Area::RealPrs,
        ],
    };
    let mut failed = false;
    let seed = args.seed.unwrap_or_else(clock_seed);
    // `--seed S --case N…` replays listed cases; `--random N [--seed S]` the first N.
    let random = match (args.random, args.cases.is_empty(), args.seed) {
        (Some(n), _, _) => Some(seeds::Cases::First(n)),
        (None, false, Some(_)) => Some(seeds::Cases::Only(args.cases.clone())),
        _ => None,
    };
    for area in areas {
        if *area == Area::RealPrs {
            failed |= real_prs(&corpus, &args);
            continue;
        }
        let outcome = match area {
            Area::Validation => validation::run(&corpus),
            Area::Recipes => recipes::run(&corpus),
            Area::Matrix => matrix::run(&corpus),
            Area::Changelog => changelog::run(&corpus),
            // No corpus part: the broad seed is its figure (docs/yaml.md, "Random differential").
            Area::Yaml => match yaml_random::run_selected(
                seeds::YAML_BROAD.seed,
                &seeds::Cases::First(seeds::YAML_BROAD.count),
            ) {
                Ok(Some(o)) => Ok(o),
                Ok(None) => continue,
                Err(e) => Err(e),
            },
            Area::RealPrs => continue,
        };
        failed |= report(*area, outcome, args.verbose);
        let Some(differential) = differential(*area) else {
            continue;
        };
        if let Some(cases) = &random {
            println!(
                "{}: random cases, seed {seed} (replay: {})",
                differential.area(),
                replay(differential, seed, cases)
            );
            let outcome = seeds::run(differential, &corpus, seed, cases).transpose();
            if let Some(outcome) = outcome
                && report(*area, outcome, args.verbose)
            {
                failed = true;
                println!(
                    "FAILED: {} random differential, seed {seed}; reproduce with: {}",
                    differential.area(),
                    replay(differential, seed, cases)
                );
            }
            if *area == Area::Recipes && matches!(cases, seeds::Cases::First(_)) {
                failed |= report(
                    *area,
                    recipes_random::run_corpus_launches(&corpus),
                    args.verbose,
                );
                failed |= report(
                    *area,
                    recipes_random::run_frontend_pairs(&corpus),
                    args.verbose,
                );
            }
        }
        if args.fixed {
            for run in seeds::run_fixed(differential, &corpus)? {
                println!(
                    "{} {} (replay: {}):",
                    differential.area(),
                    run.what,
                    run.replay
                );
                failed |= report(*area, Ok(run.outcome), args.verbose);
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The random differential of an area (validation has none).
fn differential(area: Area) -> Option<seeds::Differential> {
    match area {
        Area::Validation | Area::RealPrs => None,
        Area::Recipes => Some(seeds::Differential::Recipes),
        Area::Matrix => Some(seeds::Differential::Matrix),
        Area::Changelog => Some(seeds::Differential::Changelog),
        Area::Yaml => Some(seeds::Differential::Yaml),
    }
}

/// The exact command that replays `cases` of `seed`.
pub fn replay(differential: seeds::Differential, seed: u64, cases: &seeds::Cases) -> String {
    match cases {
        seeds::Cases::First(n) => differential.replay(*n, seed),
        seeds::Cases::Only(numbers) => {
            let list: Vec<String> = numbers.iter().map(|n| format!("--case {n}")).collect();
            format!(
                "cargo xtask conformance {} --seed {seed} {}",
                differential.area(),
                list.join(" ")
            )
        }
    }
}

/// The real-prs area: its own summary line (docs/review.md, "Real pull requests as a test
/// corpus"); true when it did not fully match.
fn real_prs(corpus: &std::path::Path, args: &Args) -> bool {
    let opts = real_prs::RunOptions {
        selection: if args.only.is_empty() {
            real_prs::Selection::All
        } else {
            real_prs::Selection::Only(args.only.clone())
        },
        draft: args.draft.clone(),
        expected: args.expected.clone(),
        verbose: args.verbose,
    };
    match real_prs::run(corpus, &xtask::paths::checkout_root(), &opts) {
        Ok(failed) => failed,
        Err(e) => {
            println!("real-prs: error: {e:#}");
            true
        }
    }
}

/// Prints one area's outcome; true when it did not fully agree.
fn report(area: Area, outcome: anyhow::Result<Outcome>, verbose: bool) -> bool {
    let mut failed = false;
    match outcome {
        Ok(o) => {
            println!("{}", o.summary());
            for d in &o.disagreements {
                println!("  disagree: {d}");
            }
            if verbose {
                for e in &o.explained {
                    println!("  explained: {e}");
                }
            } else if !o.explained.is_empty() {
                println!(
                    "  ({} deliberate differences counted as agreement; --verbose lists them)",
                    o.explained.len()
                );
            }
            failed |= o.agree != o.total;
        }
        Err(e) => {
            println!("{area:?}: error: {e:#}");
            failed = true;
        }
    }
    failed
}
