//! `cargo xtask conformance [validation|recipes|matrix|changelog|real-prs]`: agreement with the
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
pub mod validation;

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which area; all when omitted.
    pub area: Option<Area>,
    /// Print every disagreement and every explained (deliberately stricter) case.
    #[arg(long)]
    pub verbose: bool,
    /// Also run N seeded random cases against the reference tools (recipes: srtctl dry-run and
    /// its mock runtime's launch commands, then every corpus recipe's launches; matrix: mutated
    /// master configs through upstream's generator; changelog: strict edits and merge
    /// resolutions through upstream's functions).
    #[arg(long, value_name = "N")]
    pub random: Option<usize>,
    /// Seed of the random cases (default: from the clock; printed so a run can be replayed).
    #[arg(long, value_name = "S", requires = "random")]
    pub seed: Option<u64>,
    /// real-prs: replay only these commits (an id of at least 7 hex digits, or a PR number).
    #[arg(long, value_name = "COMMIT|PR")]
    pub only: Vec<String>,
    /// real-prs: the expectation file (default: xtask/tests/real-prs/expected.tsv).
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

/// The seed of a random differential test run: `env_var` when set (a replay); in CI the commit
/// under test (its id's first 16 hex digits), so every new commit explores new cases while a
/// landing run replays exactly what its author could run before submitting; else the clock.
pub fn test_seed(env_var: &str) -> u64 {
    if let Some(seed) = std::env::var(env_var).ok().and_then(|v| v.parse().ok()) {
        return seed;
    }
    let in_ci = std::env::var("CI")
        .is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"));
    if in_ci
        && let Ok(id) = duct::cmd!("git", "rev-parse", "HEAD")
            .dir(crate::paths::checkout_root())
            .stderr_null()
            .read()
        && let Some(seed) = id.get(..16).and_then(|h| u64::from_str_radix(h, 16).ok())
    {
        return seed;
    }
    clock_seed()
}

/// A fresh seed per run, from the clock.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(corpus) = crate::paths::corpus_dir() else {
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
            Area::RealPrs,
        ],
    };
    let mut failed = false;
    let seed = args.seed.unwrap_or_else(clock_seed);
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
            Area::RealPrs => continue,
        };
        failed |= report(*area, outcome, args.verbose);
        if *area == Area::Recipes
            && let Some(n) = args.random
        {
            println!(
                "recipes: {n} random cases against srtctl, seed {seed} (replay: --random {n} --seed {seed})"
            );
            failed |= report(*area, recipes_random::run(&corpus, n, seed), args.verbose);
            failed |= report(
                *area,
                recipes_random::run_corpus_launches(&corpus),
                args.verbose,
            );
        }
        if let Some(n) = args.random
            && let Some(random) = random_area(*area, &corpus, n, seed)
        {
            failed |= report(*area, random, args.verbose);
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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
    match real_prs::run(corpus, &crate::paths::checkout_root(), &opts) {
        Ok(failed) => failed,
        Err(e) => {
            println!("real-prs: error: {e:#}");
            true
        }
    }
}

/// The seeded random differential of the config and changelog areas (docs/config.md and
/// docs/changelog.md, "Random differential"); `None` for the others or when the oracle is
/// missing (a SKIP line is printed then).
fn random_area(
    area: Area,
    corpus: &std::path::Path,
    n: usize,
    seed: u64,
) -> Option<anyhow::Result<Outcome>> {
    let name = match area {
        Area::Matrix => "matrix",
        Area::Changelog => "changelog",
        Area::Validation | Area::Recipes | Area::RealPrs => return None,
    };
    println!(
        "{name}: {n} random cases against upstream, seed {seed} (replay: conformance {name} --random {n} --seed {seed})"
    );
    let outcome = match area {
        Area::Matrix => config_random::run(corpus, n, seed),
        _ => changelog_random::run(n, seed),
    };
    outcome.transpose()
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
