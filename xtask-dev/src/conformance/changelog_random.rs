//! A seeded random differential of the changelog rules against upstream's own functions:
//! random edits of a generated changelog judged by strict mode (upstream `parse_changelog`,
//! `compare_entries`, `validate_raw_change`) and random three-way merges resolved by the merge
//! driver (upstream `resolve_conflict_bytes`). Upstream runs from the reference tarball
//! (`../shared/reference/inferencex-tools.tar.gz`, unpacked under `target/`) through
//! `xtask-dev/oracle/changelog_oracle.py`, in a venv with pydantic and pyyaml; the whole run is one
//! Python process. See docs/changelog.md, "Random differential".

use super::oracle::Rng;
use infx_changelog::{Dialect, Keep, LinkMode, MergeOutcome};
use serde_json::{Value as J, json};
use std::path::{Path, PathBuf};

/// The PR number every case is judged for (upstream's PR mode).
const PR: u64 = 7;
const PR_LINK: &str = "https://github.com/SemiAnalysisAI/InferenceX/pull/7";

/// `(python, utils dir)`: `target/inferencex-oracle/V/bin/python` with pydantic and pyyaml,
/// and the unpacked upstream `utils/` (made once, then reused). `Err` carries the reason to
/// print as a SKIP.
pub fn oracle() -> Result<(PathBuf, PathBuf), String> {
    let (python, home) = super::oracle::venv(
        "inferencex-oracle",
        "inferencex-tools.tar.gz",
        &["pydantic", "pyyaml"],
    )?;
    Ok((python, home.join("inferencex/utils")))
}

/// One generated case.
#[derive(Debug, Clone)]
pub enum Case {
    Strict {
        what: &'static str,
        base: Vec<u8>,
        head: Vec<u8>,
    },
    Merge {
        what: &'static str,
        base: Vec<u8>,
        pr: Vec<u8>,
        main: Vec<u8>,
    },
}

fn entry(rng: &mut Rng, key: &str, link: &str) -> String {
    let mut e = format!("- config-keys:\n    - {key}\n");
    if rng.chance(20) {
        e.push_str("  scenario-type:\n    - agentic-coding\n");
    }
    e.push_str(&format!(
        "  description:\n    - Update {key} ({})\n  pr-link: {link}\n",
        rng.below(1000)
    ));
    if rng.chance(10) {
        e.push_str("  evals-only: true\n");
    }
    e
}

fn main_link(rng: &mut Rng) -> String {
    format!(
        "https://github.com/SemiAnalysisAI/InferenceX/pull/{}",
        100 + rng.below(900)
    )
}

fn base_file(rng: &mut Rng) -> String {
    let n = 1 + rng.below(4);
    let entries: Vec<String> = (0..n)
        .map(|i| {
            let link = main_link(rng);
            entry(rng, &format!("k{i}-b200-sglang"), &link)
        })
        .collect();
    entries.join("\n")
}

/// The mutations of strict cases: names for messages, each a change of the base text.
const STRICT_EDITS: &[&str] = &[
    "append",
    "append-placeholder",
    "append-other-pr",
    "append-two-blank",
    "append-no-blank",
    "append-trailing-blank",
    "no-final-newline",
    "append-cr",
    "append-tab-after-value",
    "edit-description",
    "link-correction",
    "link-correction-invalid",
    "delete-last",
    "swap",
    "insert-middle",
    "trailing-space-old-line",
    "append-unknown-key",
    "append-yaml11-trap",
    "append-merge-key",
    "append-duplicate-key",
    "append-two",
    "append-exclusive",
    "append-flow",
    "append-bom",
    "append-bare-description",
    "unchanged",
    "append-non-utf8",
    "correction-and-append",
    "append-not-first-key",
];

/// The `pr-link` of the first entry of a changelog text the generator wrote ("" when none).
fn first_pr_link(changelog: &str) -> String {
    changelog
        .lines()
        .find_map(|l| l.strip_prefix("  pr-link: "))
        .unwrap_or("")
        .to_string()
}

fn strict_case(rng: &mut Rng) -> Case {
    let base = base_file(rng);
    let what = STRICT_EDITS[rng.below(STRICT_EDITS.len())];
    let new = entry(rng, "new-b200-sglang", PR_LINK);
    let first_link = first_pr_link(&base);
    let head: Vec<u8> = match what {
        "append" => format!("{base}\n{new}").into_bytes(),
        "append-placeholder" => format!("{base}\n{}", new.replace(PR_LINK, "XXX")).into_bytes(),
        "append-other-pr" => format!("{base}\n{}", new.replace("/pull/7", "/pull/9")).into_bytes(),
        "append-two-blank" => format!("{base}\n\n{new}").into_bytes(),
        "append-no-blank" => format!("{base}{new}").into_bytes(),
        "append-trailing-blank" => format!("{base}\n{new}\n").into_bytes(),
        "no-final-newline" => format!("{base}\n{}", new.trim_end()).into_bytes(),
        "append-cr" => format!("{base}\n{}", new.replace('\n', "\r\n")).into_bytes(),
        "append-tab-after-value" => {
            format!("{base}\n{}", new.replacen("new-b200-sglang\n", "new-b200-sglang\t\n", 1))
                .into_bytes()
        }
        "edit-description" => base.replacen("Update", "Rewrite", 1).into_bytes(),
        "link-correction" => base
            .replacen(&first_link, "https://github.com/SemiAnalysisAI/InferenceX/pull/55", 1)
            .into_bytes(),
        "link-correction-invalid" => base.replacen(&first_link, "TBD", 1).into_bytes(),
        "delete-last" => {
            let cut = base.rfind("\n- config-keys:").map_or(0, |i| i + 1);
            if cut == 0 {
                Vec::new()
            } else {
                base.as_bytes()[..cut - 1].to_vec()
            }
        }
        "swap" => {
            let parts: Vec<&str> = base.split("\n- config-keys:").collect();
            if parts.len() >= 2 {
                let mut p: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
                let first = p[0].trim_start_matches("- config-keys:").to_string();
                p[0] = p[1].clone();
                p[1] = first;
                let body: Vec<String> = p.iter().map(|s| format!("- config-keys:{s}")).collect();
                body.join("\n").into_bytes()
            } else {
                format!("{base}\n{new}").into_bytes()
            }
        }
        "insert-middle" => match base.find("\n- config-keys:") {
            Some(i) => format!("{}\n{new}{}", &base[..=i], &base[i..]).into_bytes(),
            None => format!("{new}\n{base}").into_bytes(),
        },
        "trailing-space-old-line" => {
            format!("{}\n{new}", base.replacen("sglang\n", "sglang \n", 1)).into_bytes()
        }
        "append-unknown-key" => format!("{base}\n{new}  owner: me\n").into_bytes(),
        "append-yaml11-trap" => {
            format!("{base}\n{}", new.replacen("    - Update", "    - no\n    - Update", 1))
                .into_bytes()
        }
        "append-merge-key" => format!(
            "{base}\n- config-keys:\n    - new-b200-sglang\n  <<: {{description: [x]}}\n  pr-link: {PR_LINK}\n"
        )
        .into_bytes(),
        "append-duplicate-key" => format!("{base}\n{new}  pr-link: {PR_LINK}\n").into_bytes(),
        "append-two" => {
            let second = entry(rng, "two-b200-sglang", PR_LINK);
            format!("{base}\n{new}\n{second}").into_bytes()
        }
        "append-exclusive" => {
            format!("{base}\n{new}  append-only: true\n  all-evals: true\n").into_bytes()
        }
        "append-flow" => format!(
            "{base}\n- {{config-keys: [new-b200-sglang], description: [x], pr-link: '{PR_LINK}'}}\n"
        )
        .into_bytes(),
        "append-bom" => format!("{base}\n\u{feff}{new}").into_bytes(),
        "append-bare-description" => format!(
            "{base}\n- config-keys:\n    - new-b200-sglang\n  description: just text\n  pr-link: {PR_LINK}\n"
        )
        .into_bytes(),
        "unchanged" => base.clone().into_bytes(),
        "append-non-utf8" => {
            let mut h = format!("{base}\n{new}").into_bytes();
            let at = h.len() - 2;
            h.insert(at, 0xff);
            h
        }
        "correction-and-append" => format!(
            "{}\n{new}",
            base.replacen(&first_link, "https://github.com/SemiAnalysisAI/InferenceX/pull/55", 1)
        )
        .into_bytes(),
        _ => format!(
            "{base}\n- description:\n    - x\n  config-keys:\n    - new-b200-sglang\n  pr-link: {PR_LINK}\n"
        )
        .into_bytes(),
    };
    Case::Strict {
        what,
        base: base.into_bytes(),
        head,
    }
}

const PR_SIDES: &[&str] = &[
    "append",
    "append-two",
    "duplicate-of-main",
    "partial-duplicate",
    "link-correction",
    "link-correction-main-changed",
    "broken-append",
    "append-cr",
    "history-edit",
    "append-two-blank",
    "append-placeholder",
];

fn merge_case(rng: &mut Rng) -> Option<Case> {
    let base = base_file(rng);
    let main_adds: Vec<String> = (0..1 + rng.below(2))
        .map(|i| {
            let link = main_link(rng);
            entry(rng, &format!("m{i}-mi355x-vllm"), &link)
        })
        .collect();
    let mut main = base.clone();
    let main_edits_history = rng.chance(15);
    if main_edits_history {
        let link = main_link(rng);
        main = main.replacen("/pull/", &format!("/pull/{}", &link[link.len() - 3..]), 1);
    }
    for a in &main_adds {
        main = format!("{main}\n{a}");
    }
    let what = PR_SIDES[rng.below(PR_SIDES.len())];
    let new = entry(rng, "pr-b200-sglang", PR_LINK);
    let first_link = first_pr_link(&base);
    let corrected = "https://github.com/SemiAnalysisAI/InferenceX/pull/77";
    let pr = match what {
        "append" => format!("{base}\n{new}"),
        "append-two" => format!("{base}\n{new}\n{}", entry(rng, "pr2-b200-sglang", PR_LINK)),
        "duplicate-of-main" => {
            let dup = main_adds[0]
                .lines()
                .map(|l| {
                    if l.starts_with("  pr-link:") {
                        format!("  pr-link: {PR_LINK}")
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            format!("{base}\n{dup}\n")
        }
        "partial-duplicate" => {
            let dup = main_adds[0].replace("  pr-link: https", "  pr-link: XXX\n  #https");
            let dup = dup
                .lines()
                .filter(|l| !l.starts_with("  #"))
                .collect::<Vec<_>>()
                .join("\n")
                .replace("XXX", PR_LINK);
            format!("{base}\n{dup}\n\n{new}")
        }
        "link-correction" => base.replacen(&first_link, corrected, 1),
        "link-correction-main-changed" => {
            main = main.replacen("Update", "Reworded", 1);
            base.replacen(&first_link, corrected, 1)
        }
        "broken-append" => format!("{base}\n  description:\n    - orphan\n"),
        "append-cr" => format!("{base}\n{}", new.replace('\n', "\r\n")),
        "history-edit" => format!("{}\n{new}", base.replacen("Update", "Changed", 1)),
        "append-two-blank" => format!("{base}\n\n{new}"),
        _ => format!("{base}\n{}", new.replace(PR_LINK, "XXX")),
    };
    // git resolves these itself without calling a merge driver.
    if pr == base || main == base || pr == main {
        return None;
    }
    Some(Case::Merge {
        what,
        base: base.into_bytes(),
        pr: pr.into_bytes(),
        main: main.into_bytes(),
    })
}

/// `count` cases from `seed`: strict edits and merges alternating.
pub fn cases(count: usize, seed: u64) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        if out.len() % 2 == 0 {
            out.push(strict_case(&mut rng));
        } else if let Some(c) = merge_case(&mut rng) {
            out.push(c);
        }
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}

/// Upstream's answers, one per case, from one Python process.
pub fn run_oracle(python: &Path, utils: &Path, cases: &[Case]) -> anyhow::Result<Vec<J>> {
    let script = xtask::paths::checkout_root().join("xtask-dev/oracle/changelog_oracle.py");
    let mut input = String::new();
    for c in cases {
        let line = match c {
            Case::Strict { base, head, .. } => {
                json!({"op": "strict", "base": hex(base), "head": hex(head), "pr": PR})
            }
            Case::Merge { base, pr, main, .. } => {
                json!({"op": "resolve", "base": hex(base), "pr_side": hex(pr), "main": hex(main), "pr": PR})
            }
        };
        input.push_str(&line.to_string());
        input.push('\n');
    }
    super::oracle::json_lines_exchange(python, &script, utils, &input, cases.len())
}

/// `merged` with the placeholder `pr-link` lines after `main`'s bytes set to the PR's URL, as
/// upstream's `resolve-conflict` writes them.
pub fn canonicalized_tail(main: &[u8], merged: &[u8]) -> Vec<u8> {
    let Some(tail) = merged.strip_prefix(main) else {
        return merged.to_vec();
    };
    let tail = String::from_utf8_lossy(tail)
        .split_inclusive('\n')
        .map(|l| match l.strip_prefix("  pr-link: ") {
            Some(v) if infx_changelog::is_placeholder(v.trim_end_matches('\n')) => {
                format!("  pr-link: {PR_LINK}\n")
            }
            _ => l.to_string(),
        })
        .collect::<String>();
    [main, tail.as_bytes()].concat()
}

/// Our verdict for one case against upstream's answer: `Ok(None)` agreement, `Ok(Some(why))`
/// a documented deliberate difference, `Err` a disagreement.
pub fn compare(case: &Case, theirs: &J) -> Result<Option<String>, String> {
    let ok = theirs["ok"].as_bool().unwrap_or(false);
    let their_err = theirs["error"].as_str().unwrap_or("");
    match case {
        Case::Strict { what, base, head } => {
            let ours =
                infx_changelog::strict_check(Some(base), head, LinkMode::Pr(PR), Dialect::Aug);
            match (&ours, ok) {
                (Ok(c), true) => {
                    let want = (
                        theirs["additions"].as_u64().unwrap_or(u64::MAX),
                        theirs["corrections"].as_u64().unwrap_or(u64::MAX),
                    );
                    if (c.additions as u64, c.corrections as u64) == want {
                        Ok(None)
                    } else {
                        Err(format!("strict {what}: ours {c:?}, upstream {want:?}"))
                    }
                }
                (Err(_), false) => Ok(None),
                (Ok(_), false) => Err(format!("strict {what}: ours ok, upstream: {their_err}")),
                (Err((_, e)), true) => Err(format!(
                    "strict {what}: ours {} ({}), upstream ok",
                    e.code.rule(),
                    e.message
                )),
            }
        }
        Case::Merge {
            what,
            base,
            pr,
            main,
        } => {
            let ours = infx_changelog::merge(base, pr, main, Keep::Theirs, Dialect::Aug);
            match (ours, ok) {
                (MergeOutcome::Clean(m), true) => {
                    let want = unhex(theirs["result"].as_str().unwrap_or("")).unwrap_or_default();
                    if m == want {
                        Ok(None)
                    } else if canonicalized_tail(main, &m) == want {
                        Ok(Some(format!(
                            "merge {what}: upstream rewrites the appended placeholder pr-link to the PR URL; the driver keeps it (it has no PR number; docs/changelog.md)"
                        )))
                    } else {
                        Err(format!(
                            "merge {what}: results differ\nours:\n{}\nupstream:\n{}",
                            String::from_utf8_lossy(&m),
                            String::from_utf8_lossy(&want)
                        ))
                    }
                }
                (MergeOutcome::Conflict { .. }, false) => Ok(None),
                (MergeOutcome::Clean(_), false) => {
                    Err(format!("merge {what}: ours clean, upstream: {their_err}"))
                }
                (MergeOutcome::Conflict { reason, .. }, true) => Err(format!(
                    "merge {what}: ours conflict ({reason}), upstream resolves"
                )),
            }
        }
    }
}

/// Runs `count` random cases from `seed` against upstream. `Ok(None)` = the oracle is not
/// available (the reason is printed as a SKIP).
pub fn run(count: usize, seed: u64) -> anyhow::Result<Option<super::Outcome>> {
    run_selected(seed, &super::seeds::Cases::First(count))
}

/// As [`run`], for the cases `which` selects, each reported by its number in the full run
/// (cases are drawn one after the other from one generator, so case N needs the N before it).
pub fn run_selected(
    seed: u64,
    which: &super::seeds::Cases,
) -> anyhow::Result<Option<super::Outcome>> {
    let (python, utils) = match oracle() {
        Ok(p) => p,
        Err(why) => {
            println!("SKIP: changelog random differential: {why}");
            return Ok(None);
        }
    };
    let (numbers, cases): (Vec<usize>, Vec<Case>) = match which {
        super::seeds::Cases::First(count) => cases(*count, seed).into_iter().enumerate().unzip(),
        super::seeds::Cases::Only(numbers) => {
            let all = cases(numbers.iter().max().map_or(0, |m| m + 1), seed);
            numbers
                .iter()
                .filter_map(|&i| all.get(i).cloned().map(|c| (i, c)))
                .unzip()
        }
    };
    let answers = run_oracle(&python, &utils, &cases)?;
    let mut outcome = super::Outcome {
        area: "changelog (random)",
        total: cases.len(),
        ..Default::default()
    };
    for (&i, (c, a)) in numbers.iter().zip(cases.iter().zip(&answers)) {
        match compare(c, a) {
            Ok(None) => outcome.agree += 1,
            Ok(Some(why)) => {
                outcome.agree += 1;
                outcome.explained.push(format!("case {i}: {why}"));
            }
            Err(d) => outcome
                .disagreements
                .push(format!("case {i} (seed {seed}): {d}")),
        }
    }
    Ok(Some(outcome))
}
