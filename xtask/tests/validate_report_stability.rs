//! The `validate` report, human and JSON, must not change while its internals are reworked
//! (docs/architecture.md): every scenario of the refresh suite is snapshotted whole, and the
//! reports over the August and October corpus trees are pinned by a digest plus per-code counts
//! (their text quotes upstream lines, so it is not committed). Timings are masked.

use std::collections::BTreeMap;
use std::path::Path;
#[path = "support/refresh.rs"]
mod refresh;
mod support;

/// `cargo xtask validate --root TREE --format FORMAT` (the built binary) from `cwd`, offline
/// and without colour: stdout, then stderr after a marker line.
fn report(cwd: &Path, tree: &Path, format: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("validate")
        .arg("--root")
        .arg(tree)
        .args(["--format", format])
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("INFX_HERMETIC", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", cwd)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_EVENT_PATH")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("xtask runs");
    format!(
        "{}--- stderr ---\n{}--- exit {} ---\n",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        out.status.code().unwrap_or(-1)
    )
}

/// `text` with every duration (`  12.5 ms`, ` 3.01 s`, with its padding) replaced by ` T`.
fn mask_timings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' '
            && let Some(end) = duration_end(b, i)
        {
            out.push_str(" T");
            i = end;
            continue;
        }
        let ch = text[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Where a duration starting at the spaces at `start` ends: spaces, digits, an optional
/// fraction, an optional space, `ms` or `s`, then no further letter or digit.
fn duration_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    let digits = |mut i: usize| {
        let from = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    i = digits(i)?;
    if b.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if b.get(i) == Some(&b' ') {
        i += 1;
    }
    for unit in [&b"ms"[..], &b"s"[..]] {
        let end = i + unit.len();
        if b.get(i..end) == Some(unit) && !b.get(end).is_some_and(u8::is_ascii_alphanumeric) {
            return Some(end);
        }
    }
    None
}

#[test]
fn the_mask_hides_durations_only() {
    assert_eq!(
        mask_timings("yaml        ok       17.0 ms  [14 files]\nin 1.51 s\n"),
        "yaml        ok T  [14 files]\nin T\n"
    );
    assert_eq!(
        mask_timings("5 recipes, 3 sites 2 ms"),
        "5 recipes, 3 sites T"
    );
}

#[test]
fn scenario_reports_are_unchanged() {
    let mut cases: Vec<Option<&refresh::Fault>> = vec![None];
    cases.extend(refresh::FAULTS.iter().map(Some));
    for case in cases {
        let (_tmp, repo) = refresh::scenario();
        if let Some(fault) = case {
            refresh::inject(&repo, fault);
        }
        let name = case.map_or("clean-refresh", |f| f.name);
        for format in ["human", "json"] {
            let text = mask_timings(&report(&repo, &repo.join("inferencex-e2e"), format));
            insta::assert_snapshot!(format!("{name}.{format}"), text);
        }
    }
}

/// Per-code counts of a JSON report: `code N` for diagnostics, `record:code N` for records.
fn code_counts(json_report: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for line in json_report.lines().filter(|l| l.starts_with('{')) {
        let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let code = value["code"].as_str().unwrap_or("-");
        let key = match value["record"].as_str() {
            Some(record) => format!("{record}:{code}"),
            None => code.to_string(),
        };
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

fn counts_text(counts: &BTreeMap<String, usize>) -> String {
    counts.iter().map(|(k, n)| format!("{k} {n}\n")).collect()
}

/// The per-code lines that differ between `want` and `got`.
fn count_difference(want: &str, got: &str) -> String {
    let parse = |s: &str| -> BTreeMap<String, String> {
        s.lines()
            .filter_map(|l| l.rsplit_once(' '))
            .map(|(k, n)| (k.to_string(), n.to_string()))
            .collect()
    };
    let (want, got) = (parse(want), parse(got));
    let mut keys: Vec<&String> = want.keys().chain(got.keys()).collect();
    keys.sort();
    keys.dedup();
    let none = "0".to_string();
    keys.into_iter()
        .filter(|k| want.get(*k) != got.get(*k))
        .map(|k| {
            let (w, g) = (want.get(k).unwrap_or(&none), got.get(k).unwrap_or(&none));
            format!("  {k}: {w} → {g}\n")
        })
        .collect()
}

/// A corpus tree's expected report: the sha256 of the timing-masked human and JSON reports
/// and its per-code counts.
struct Pinned {
    tree: &'static str,
    human_sha256: &'static str,
    json_sha256: &'static str,
    counts: &'static str,
}

const CORPUS_TREES: &[Pinned] = &[
    Pinned {
        tree: "inferencex-aug2026",
        // The August checklist (docs/review.md, "Rules carry their checklist"): no
        // review/draft-precision-env (19) or review/event-publication (13) since 2026-12-07.
        human_sha256: "4bdf55bad2c853fd5a521d121f8d3eae6b4db3aaf2733210813efc521c2c262d",
        json_sha256: "24bba1fcfdabb4798cb4d7cfb37cbbeb9ec9110b7277c476d30a026b0fd3728d",
        counts: "binding:- 595\nchangelog/no-history 1\nconfig/X5 8\nimage/tag-only 1059\nrecipe/unknown-field 18\nreview/dp-cuda-graph 38\nreview/golden-al 13\nreview/upstream-image 2\nyaml/duplicate-key 8\n",
    },
    Pinned {
        tree: "inferencex-oct2026/inferencex-e2e",
        human_sha256: "02b062ee6a3ea15b13b60679f72a00c564edfdb90eafbf5f8d3942964b0337ef",
        json_sha256: "2ab18dfc011d3b92f909f0164fedf9e2e4950f5dfdf4f2dd851c9213d10ec73e",
        counts: "config/R0 34\nconfig/X5 5\nimage/missing-tag 1\nimage/tag-only 184\nreview/dp-cuda-graph 1\nreview/golden-al-curve 2\n",
    },
];

#[test]
fn corpus_reports_are_unchanged() {
    let Some(corpus) = xtask::paths::corpus_dir() else {
        eprintln!("SKIP: no ../shared/corpus (INFX_CORPUS); the corpus reports are not compared");
        return;
    };
    let ws = xtask::paths::workspace_root();
    let sha = |s: &str| infx_image::Digest::sha256_of(s.as_bytes()).encoded;
    let mut failures = String::new();
    // The trees are reported from a copy outside any git work tree: the pinned reports are
    // those of a tree without history, wherever ../shared is kept (issue #41).
    let tops: Vec<&str> = CORPUS_TREES
        .iter()
        .filter_map(|p| p.tree.split('/').next())
        .collect();
    let (_tmp, copy) = support::detached_corpus(&corpus, &tops);
    for pinned in CORPUS_TREES {
        let tree = copy.join(pinned.tree);
        let masked = |format| mask_timings(&report(&ws, &tree, format));
        let (human, json) = (masked("human"), masked("json"));
        // The report names files relative to the tree, never by where this machine keeps it:
        // the digests must hold in any checkout, and a CI log must not show the runner's layout.
        let canonical = corpus.canonicalize().unwrap_or_else(|_| corpus.clone());
        let copy_canonical = copy.canonicalize().unwrap_or_else(|_| copy.clone());
        for location in [&corpus, &canonical, &copy, &copy_canonical] {
            let location = location.display().to_string();
            for (format, text) in [("human", &human), ("json", &json)] {
                if let Some(line) = text.lines().find(|l| l.contains(&location)) {
                    failures.push_str(&format!(
                        "{}: the {format} report shows the absolute path {location}: {line}\n",
                        pinned.tree
                    ));
                }
            }
        }
        let counts = counts_text(&code_counts(&json));
        let got = (sha(&human), sha(&json));
        if got != (pinned.human_sha256.into(), pinned.json_sha256.into()) || counts != pinned.counts
        {
            failures.push_str(&format!(
                "{}: human sha256 {} json sha256 {} (want {} / {})\nper-code counts (want → got):\n{}full counts now:\n{counts}\n",
                pinned.tree,
                got.0,
                got.1,
                pinned.human_sha256,
                pinned.json_sha256,
                count_difference(pinned.counts, &counts),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "the corpus reports changed:\n{failures}"
    );
}
