//! The changelog conformance replay against the corpus (skipped without it), and the random
//! differential against upstream's changelog functions, also under a real `git merge` and `git
//! rebase` with xtask's merge driver.

use std::path::{Path, PathBuf};

/// The `xtask` binary beside this package's own, the merge driver the git runs call: both are
/// in the profile's folder of the target dir once the workspace is built (`cargo xtask test`
/// builds every binary of the workspace). `None`, with a SKIP line, when it is not there (a
/// failure in CI).
fn xtask(test: &str) -> Option<PathBuf> {
    let exe = Path::new(env!("CARGO_BIN_EXE_xtask-dev"))
        .with_file_name(format!("xtask{}", std::env::consts::EXE_SUFFIX));
    if exe.is_file() {
        return Some(exe);
    }
    let why = format!("{test}: no xtask binary beside xtask-dev (cargo build -p xtask)");
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("SKIP: {why}");
    None
}

#[path = "../../xtask/tests/support/changelog_repo.rs"]
mod changelog_repo;
use changelog_repo::{git, ok, repo};

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"),
    };
    dir.is_dir().then_some(dir)
}

#[test]
fn conformance_changelog_agrees_on_every_case() {
    let Some(corpus) = corpus() else {
        eprintln!("SKIP: conformance_changelog_agrees_on_every_case: ../shared/corpus not found");
        return;
    };
    let o = xtask_dev::conformance::changelog::run(&corpus).expect("replay runs");
    assert_eq!(o.total, 831 + 48, "831 commits + 48 plan cases");
    assert!(o.disagreements.is_empty(), "{:#?}", o.disagreements);
    assert_eq!(o.agree, o.total);
}

/// The seeded random differential against upstream's changelog functions (strict edits and
/// merge resolution) on its fixed seeds (xtask-dev/src/conformance/seeds.rs); fresh seeds run in
/// the scheduled workflow. `INFX_SEED` / `INFX_CASES` replay or enlarge a run.
#[test]
fn fixed_seed_changelog_edits_and_merges_agree_with_upstream() {
    let corpus = corpus().unwrap_or_default();
    let failures = xtask_dev::conformance::seeds::check_fixed(
        xtask_dev::conformance::seeds::Differential::Changelog,
        &corpus,
    )
    .expect("the differential runs");
    assert!(failures.is_empty(), "{failures}");
}

/// Random merge cases of the differential replayed under real git, as `git merge main` from
/// the PR branch and as `git rebase main`: the driver's result must be upstream's
/// `resolve_conflict_bytes` result (clean) or a conflict (upstream refuses).
#[test]
fn random_merges_and_rebases_under_real_git_match_upstream() {
    use xtask_dev::conformance::changelog_random::{self as random, Case};
    // A fixed seed (the broad changelog seed), so the verdict is the commit's alone;
    // `INFX_SEED` replays another.
    let seed = std::env::var("INFX_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261202);
    let count = std::env::var("INFX_GIT_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    eprintln!(
        "changelog git differential: {count} merge cases x (merge, rebase), seed {seed} (replay: INFX_SEED={seed})"
    );
    let Some(xtask) = xtask("random_merges_and_rebases_under_real_git_match_upstream") else {
        return;
    };
    let (python, utils) = match random::oracle() {
        Ok(o) => o,
        Err(why) => {
            eprintln!("SKIP: changelog git differential: {why}");
            return;
        }
    };
    let cases: Vec<Case> = random::cases(count * 4, seed)
        .into_iter()
        .filter(|c| matches!(c, Case::Merge { .. }))
        .take(count)
        .collect();
    let answers = random::run_oracle(&python, &utils, &cases).expect("oracle runs");
    let mut failures = Vec::new();
    for (i, (case, answer)) in cases.iter().zip(&answers).enumerate() {
        let Case::Merge {
            what,
            base,
            pr,
            main,
        } = case
        else {
            continue;
        };
        let upstream = answer["result"].as_str().map(|h| {
            (0..h.len())
                .step_by(2)
                .filter_map(|j| u8::from_str_radix(&h[j..j + 2], 16).ok())
                .collect::<Vec<u8>>()
        });
        for op in ["merge", "rebase"] {
            let d = repo(&xtask);
            let p = d.path();
            let file = p.join("perf-changelog.yaml");
            std::fs::write(&file, base).expect("write");
            ok(p, &["commit", "-q", "-am", "base"]);
            ok(p, &["checkout", "-q", "-b", "feature"]);
            std::fs::write(&file, pr).expect("write");
            ok(p, &["commit", "-q", "-am", "pr"]);
            ok(p, &["checkout", "-q", "main"]);
            std::fs::write(&file, main).expect("write");
            ok(p, &["commit", "-q", "-am", "main"]);
            ok(p, &["checkout", "-q", "feature"]);
            let out = match op {
                "merge" => git(p, &["merge", "-q", "--no-edit", "main"]),
                _ => git(p, &["rebase", "-q", "main"]),
            }
            .expect("git runs");
            let result = std::fs::read(&file).expect("read");
            let agree = match &upstream {
                Some(want) => {
                    out.status.success()
                        && (&result == want || &random::canonicalized_tail(main, &result) == want)
                }
                None => !out.status.success(),
            };
            if !agree {
                failures.push(format!(
                    "case {i} {what} under git {op}: git ok={}, upstream ok={}\n{}",
                    out.status.success(),
                    upstream.is_some(),
                    String::from_utf8_lossy(&result)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "seed {seed}:\n{}", failures.join("\n"));
}
