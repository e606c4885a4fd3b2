//! `cargo xtask conformance changelog`: replay the changelog-history bundle and compare our
//! per-commit verdicts (strict, gate_changelog, gate_keys) with upstream's verdicts.tsv, then
//! the plan goldens (40 commits + modifier/error extras).

use anyhow::{Context, bail};
use infx_changelog::CommitVerdict;
use infx_changelog::{Dialect, Modifiers};
use infx_changelog::{PlanError, PlanOptions};
use infx_git::{Oid, Repo};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const BUNDLE: &str = "inferencex-aug2026-changelog-history.bundle";
const COMMIT_MAP: &str = "inferencex-aug2026-changelog-history.commit-map.txt";

/// Clones the history bundle into `dir/changelog-history` (with the `git` CLI: libgit2 cannot
/// read bundles) and returns the clone's path.
pub fn clone_bundle(corpus: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    let dst = dir.join("changelog-history");
    let bundle = corpus.join(BUNDLE);
    if !bundle.is_file() {
        bail!("{} not found", bundle.display());
    }
    duct::cmd!("git", "clone", "-q", "--no-checkout", &bundle, &dst)
        .stderr_capture()
        .run()
        .with_context(|| format!("git clone {}", bundle.display()))?;
    Ok(dst)
}

fn verdicts(corpus: &Path) -> anyhow::Result<Vec<HashMap<String, String>>> {
    let p = corpus.join("goldens/changelog-verdicts/verdicts.tsv");
    let text = std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    Ok(lines
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t'))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect())
}

/// Original upstream SHA -> bundle SHA: the filter-repo commit map, plus the equivalents each
/// plan case's commit.txt names (a base that touched none of the kept paths was dropped from
/// the bundle; its equivalent is the bundle commit with the same kept trees).
fn commit_map(corpus: &Path) -> anyhow::Result<HashMap<String, String>> {
    let text = std::fs::read_to_string(corpus.join(COMMIT_MAP))?;
    let mut map: HashMap<String, String> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.split_once(char::is_whitespace)
                .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
        })
        .collect();
    for e in std::fs::read_dir(corpus.join("goldens/changelog-plan"))?.flatten() {
        let Ok(t) = std::fs::read_to_string(e.path().join("commit.txt")) else {
            continue;
        };
        let field = |prefix: &str| {
            t.lines()
                .find_map(|l| l.strip_prefix(prefix))
                .map(|v| v.trim().to_string())
        };
        let (Some(base), Some(eq)) = (
            field("base (parent):"),
            field("changelog-history bundle equivalent:"),
        ) else {
            continue;
        };
        // "head <sha>, base <sha> (= bundle head^)"
        if let Some(b) = eq
            .split("base ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
        {
            map.entry(base).or_insert_with(|| b.to_string());
        }
    }
    Ok(map)
}

pub fn run(corpus: &Path) -> anyhow::Result<super::Outcome> {
    let tmp = tempfile::tempdir()?;
    let clone = clone_bundle(corpus, tmp.path())?;
    let repo = Repo::open(&clone).map_err(|e| anyhow::anyhow!("{e}"))?;
    let head = repo
        .resolve_commit("HEAD")
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut out = super::Outcome {
        area: "changelog",
        ..Default::default()
    };

    // 1. Per-commit verdicts.
    let ours = infx_validate::history::replay_tree(
        &repo,
        head,
        "",
        Dialect::Aug,
        xtask::cmd_changelog::threads(),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let golden = verdicts(corpus)?;
    let by_commit: HashMap<String, &CommitVerdict> =
        ours.iter().map(|v| (v.commit.to_string(), v)).collect();
    if ours.len() != golden.len() {
        out.disagreements.push(format!(
            "replay found {} changelog commits, verdicts.tsv has {}",
            ours.len(),
            golden.len()
        ));
    }
    for row in &golden {
        out.total += 1;
        let g = |k: &str| row.get(k).map(String::as_str).unwrap_or("");
        let Some(v) = by_commit.get(g("commit")) else {
            out.disagreements.push(format!(
                "seq {}: commit {} not found in the replay",
                g("seq"),
                g("commit")
            ));
            continue;
        };
        let (s, gc, gk) = xtask::cmd_changelog::columns(v);
        let mut diffs = Vec::new();
        if s != g("strict") {
            diffs.push(format!(
                "strict ours={s} upstream={} ({})",
                g("strict"),
                g("strict_error")
            ));
        } else if let Err((stage, _)) = &v.strict
            && stage.as_str() != g("strict_stage")
        {
            diffs.push(format!(
                "strict_stage ours={} upstream={}",
                stage.as_str(),
                g("strict_stage")
            ));
        }
        if gc != g("gate_changelog") {
            diffs.push(format!(
                "gate_changelog ours={gc} upstream={} ({})",
                g("gate_changelog"),
                g("gate_error")
            ));
        } else if let Err(e) = &v.gate
            && e.stage.as_str() != g("gate_stage")
        {
            diffs.push(format!(
                "gate_stage ours={} upstream={}",
                e.stage.as_str(),
                g("gate_stage")
            ));
        }
        if gk != g("gate_keys") {
            diffs.push(format!(
                "gate_keys ours={gk} upstream={} ({})",
                g("gate_keys"),
                g("gate_keys_error")
            ));
        }
        if diffs.is_empty() {
            out.agree += 1;
        } else {
            out.disagreements.push(format!(
                "seq {} ({}, #{}): {}",
                g("seq"),
                g("commit"),
                g("pr"),
                diffs.join("; ")
            ));
        }
    }

    // 2. Plan goldens.
    let map = commit_map(corpus)?;
    let plan_dir = corpus.join("goldens/changelog-plan");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&plan_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    for case in cases {
        out.total += 1;
        let name = case
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match plan_case(&repo, &map, &case) {
            Ok(None) => out.agree += 1,
            Ok(Some(why)) => out.disagreements.push(format!("plan {name}: {why}")),
            Err(e) => out.disagreements.push(format!("plan {name}: error: {e:#}")),
        }
    }
    Ok(out)
}

/// Runs one plan case; `Ok(None)` = agrees, `Ok(Some(why))` = disagrees.
pub fn plan_case(
    repo: &Repo,
    map: &HashMap<String, String>,
    case: &Path,
) -> anyhow::Result<Option<String>> {
    let args = std::fs::read_to_string(case.join("args.txt"))?;
    let words: Vec<&str> = args.split_whitespace().collect();
    let arg = |flag: &str| {
        words
            .iter()
            .position(|w| *w == flag)
            .and_then(|i| words.get(i + 1))
            .copied()
    };
    let (Some(base), Some(head)) = (arg("--base-ref"), arg("--head-ref")) else {
        bail!("args.txt lacks --base-ref/--head-ref");
    };
    let resolve = |orig: &str| -> anyhow::Result<Oid> {
        let rewritten = map
            .get(orig)
            .with_context(|| format!("{orig} not in the commit map"))?;
        repo.resolve_commit(rewritten)
            .map_err(|e| anyhow::anyhow!("{e}"))
    };
    let opts = PlanOptions {
        modifiers: Modifiers {
            all_evals: words.contains(&"--all-evals"),
            evals_only: words.contains(&"--evals-only"),
        },
        trim_conc: words.contains(&"--trim-conc"),
    };
    let result = infx_validate::history::plan_between(
        repo,
        resolve(base)?,
        resolve(head)?,
        base,
        head,
        opts,
        Dialect::Aug,
        None,
    );
    let exit: i32 = std::fs::read_to_string(case.join("exit_code.txt"))?
        .trim()
        .parse()
        .unwrap_or(-1);
    Ok(match (exit, result) {
        (0, Ok(v)) => {
            let want = std::fs::read_to_string(case.join("output.json"))?;
            let got = serde_json::to_string(&v)?;
            if got == want.trim_end_matches('\n') {
                None
            } else {
                Some(describe_json_diff(&want, &got))
            }
        }
        (0, Err(PlanError { stage, message })) => Some(format!(
            "upstream exit 0, ours failed at {stage}: {message}"
        )),
        (_, Ok(_)) => Some(format!("upstream exit {exit}, ours produced a plan")),
        (_, Err(e)) => {
            let want = std::fs::read_to_string(case.join("message.txt")).unwrap_or_default();
            let got = format!("ValueError: {}", e.message);
            if want.trim_end() == got {
                None
            } else {
                Some(format!(
                    "message differs: upstream {:?}, ours {:?}",
                    want.trim_end(),
                    got
                ))
            }
        }
    })
}

/// A short description of where two plan JSONs differ.
fn describe_json_diff(want: &str, got: &str) -> String {
    let (Ok(w), Ok(g)) = (
        serde_json::from_str::<serde_json::Value>(want),
        serde_json::from_str::<serde_json::Value>(got),
    ) else {
        return "output differs (unparsable)".into();
    };
    if w == g {
        return "same values, different bytes (key order or number formatting)".into();
    }
    let mut parts = Vec::new();
    if let (Some(wo), Some(go)) = (w.as_object(), g.as_object()) {
        for (k, wv) in wo {
            let gv = go.get(k);
            if gv != Some(wv) {
                let count = |v: Option<&serde_json::Value>| -> String {
                    match v {
                        Some(serde_json::Value::Array(a)) => format!("{} rows", a.len()),
                        Some(serde_json::Value::Object(o)) => o
                            .iter()
                            .map(|(b, x)| format!("{b}:{}", x.as_array().map_or(0, Vec::len)))
                            .collect::<Vec<_>>()
                            .join(","),
                        Some(_) => "value".into(),
                        None => "absent".into(),
                    }
                };
                parts.push(format!(
                    "{k} (upstream {}, ours {})",
                    count(Some(wv)),
                    count(gv)
                ));
            }
        }
    }
    format!("differs in {}", parts.join("; "))
}
