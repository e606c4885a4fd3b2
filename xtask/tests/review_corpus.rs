//! The review checks over the real August tree and the October files in ../shared/corpus, and
//! the bundled tree, loaded as `review check` loads them (validate's load). Expected findings
//! are the ones docs/review.md lists under "Findings on the real data" (and their siblings that
//! set the same values); anything else is spurious and fails the test.

use infx_report::Diagnostic;
use infx_review::{GoldenMode, ReviewInputs, codes, review_tree_of};
use std::path::{Path, PathBuf};
use xtask::validate::{Options, ReviewChange, ReviewLoad};

fn corpus() -> Option<PathBuf> {
    xtask::paths::corpus_dir()
}

/// The tree as `review check` loads it, without the change-based checks (the tree's checks
/// only); findings are named relative to the tree.
/// Every rule runs, the [Oct] checklist's too: the spec's examples of them are August files
/// (docs/review.md, "Rules carry their checklist").
fn review(root: &Path) -> (ReviewLoad, Vec<Diagnostic>) {
    let mut load = ReviewLoad::load(&Options::new(root), ReviewChange::AsValidate);
    load.review = ReviewInputs {
        change: None,
        base_master_keys: None,
        append_only_entry: false,
        append_only_verdict: None,
        aug_checklist: false,
        ..std::mem::take(&mut load.review)
    };
    let mut d = review_tree_of(&load.review, &load.configs.masters);
    for d in &mut d {
        if let Some(p) = &d.path
            && let Ok(rel) = p.strip_prefix(&load.root)
        {
            d.path = Some(rel.to_path_buf());
        }
    }
    (load, d)
}

/// What the load found about the files review reads.
fn load_findings(load: &ReviewLoad) -> Vec<Diagnostic> {
    let mut d: Vec<Diagnostic> = load.reviewed_yaml_findings().cloned().collect();
    d.extend(load.review_load_findings.iter().cloned());
    d
}

fn summary(d: &[Diagnostic]) -> Vec<String> {
    d.iter()
        .map(|d| format!("{} {} {}", d.code, d.location(), d.message))
        .collect()
}

fn by_code(d: &[Diagnostic], code: infx_report::Code) -> Vec<&Diagnostic> {
    d.iter().filter(|d| d.code == code).collect()
}

fn files(d: &[&Diagnostic]) -> Vec<String> {
    let mut v: Vec<String> = d
        .iter()
        .filter_map(|d| d.path.as_ref().map(|p| p.display().to_string()))
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn august_tree_findings() {
    let Some(c) = corpus() else {
        eprintln!("SKIP: august_tree_findings: ../shared/corpus not found");
        return;
    };
    let root = c.join("inferencex-aug2026");
    let (load, d) = review(&root);
    // Eight recipes repeat a key: each is a yaml/duplicate-key error, and review still reads
    // it the way PyYAML does (the last value wins), so all 469 recipes are reviewed.
    let load_diags = load_findings(&load);
    assert_eq!(load_diags.len(), 8, "{:#?}", summary(&load_diags));
    assert!(
        load_diags
            .iter()
            .all(|d| d.code == infx_yaml::codes::DUPLICATE_KEY),
        "{:#?}",
        summary(&load_diags)
    );
    let inputs = &load.review;
    // As validate reviews it, the August tree goes by the August checklist: none of the
    // October rules' findings.
    let aug = ReviewInputs {
        aug_checklist: true,
        ..inputs.clone()
    };
    let by_aug = review_tree_of(&aug, &load.configs.masters);
    assert!(
        by_aug.iter().all(|f| !codes::OCT_ONLY.contains(&f.code))
            && d.iter().any(|f| codes::OCT_ONLY.contains(&f.code)),
        "{:#?}",
        summary(&by_aug)
    );
    assert_eq!(load.configs.masters.len(), 2);
    assert_eq!(inputs.recipes.len(), 469);
    // One of them is reviewed as PyYAML reads it: Check 10 still sees its DP decode budget.
    assert!(
        by_code(&d, codes::DP_CUDA_GRAPH).iter().any(|f| f
            .path
            .as_ref()
            .is_some_and(|p| p.ends_with("mtp/1p1d-tp4-dep4-eagle3-8k1k.yaml"))),
        "{:#?}",
        summary(&d)
    );
    assert_eq!(inputs.golden.len(), 9);
    // Auto: no lane blocks in the August layout, so pinned mode.
    assert_eq!(inputs.golden_mode, GoldenMode::Auto);
    for line in summary(&d) {
        eprintln!("{line}");
    }

    // Check 13: every spec-decoding recipe that enables the FP8 NextN MoE draft.
    let draft = by_code(&d, codes::DRAFT_PRECISION_ENV);
    let draft_files = files(&draft);
    assert!(
        draft_files
            .iter()
            .any(|f| f.ends_with("c96-mtp-hicache-session-jid2527409.yaml"))
    );
    assert!(
        draft_files
            .iter()
            .any(|f| f.ends_with("c128-mtp-hicache-session-jid2527417.yaml"))
    );
    assert!(
        draft_files
            .iter()
            .all(|f| f.contains("/qwen3.5/gb300-fp4/agentic/") || f.contains("/glm5")),
        "{draft_files:#?}"
    );
    assert!(
        !draft_files.iter().any(|f| f.contains("/stp/")),
        "non-speculative recipes are not findings"
    );

    // Check 8 [Oct]: the DSV4 and GLM-5.2 GB300 TRT agentic recipes disable event publication.
    let events = files(&by_code(&d, codes::EVENT_PUBLICATION));
    assert_eq!(events.len(), 13, "{events:#?}");
    assert!(
        events
            .iter()
            .all(|f| f.contains("trtllm/deepseek-v4/agentx-gb300-20260811/")
                || f.contains("trtllm/glm5.2/gb300-fp4/agentic/"))
    );

    // Check 6a: the two MI355X sglang-disagg entries on rocm/sgl-dev.
    let up = by_code(&d, codes::UPSTREAM_IMAGE);
    let keys: Vec<&str> = up
        .iter()
        .filter_map(|d| d.message.split('`').nth(1))
        .collect();
    assert_eq!(
        keys,
        [
            "dsr1-fp8-mi355x-sglang-disagg",
            "dsr1-fp8-mi355x-sglang-disagg-mtp"
        ],
        "{:#?}",
        summary(&d)
    );
    assert!(by_code(&d, codes::IMAGE_PUBLIC).is_empty());

    // Check 11 (pinned mode): the DSV4 and GLM-5.2 GB300 TRT agentic recipes pin the golden AL,
    // so they give no finding (docs/review.md, "Findings on the real data").
    let golden = by_code(&d, codes::GOLDEN_AL);
    for ok in [
        "trtllm/deepseek-v4/agentx-gb300-20260811/",
        "trtllm/glm5.2/gb300-fp4/agentic/",
    ] {
        assert!(
            !golden.iter().any(|g| g
                .path
                .as_ref()
                .is_some_and(|p| p.display().to_string().contains(ok))),
            "{ok}"
        );
    }
}

#[test]
fn october_files() {
    let Some(c) = corpus() else {
        eprintln!("SKIP: october_files: ../shared/corpus not found");
        return;
    };
    let root = c.join("inferencex-oct2026/inferencex-e2e");
    let (load, d) = review(&root);
    let load_diags = load_findings(&load);
    assert!(load_diags.is_empty(), "{:#?}", summary(&load_diags));
    let inputs = &load.review;
    assert_eq!(inputs.golden.len(), 8);
    assert!(inputs.codeowners.is_some());
    // Auto: the October layout has lane blocks, so injected mode.
    assert!(!inputs.lanes.is_empty());
    for line in summary(&d) {
        eprintln!("{line}");
    }
    // The DP4 C192 point: 384 admitted over 4 ranks = 96 per rank, captured 64.
    let cg = by_code(&d, codes::DP_CUDA_GRAPH);
    assert_eq!(cg.len(), 1, "{:#?}", summary(&d));
    assert!(cg[0].message.contains(
        "capture batch 64 but each DP rank admits 96 (384 max-running-requests over 4 ranks)"
    ));
    assert!(
        cg[0]
            .path
            .as_ref()
            .is_some_and(|p| p.ends_with("dsv41flash/sglang/b300-fp4-mtp/agentic.yaml"))
    );
}

/// The bundled tree (always present): the DSV4.1 DP4 C192 point gives the cuda-graph warning and
/// nothing else is reported.
#[test]
fn bundled_tree() {
    let root = xtask::paths::workspace_root().join("inferencex-e2e");
    if !root.join("configs").is_dir() {
        eprintln!("SKIP: bundled_tree: inferencex-e2e/configs not found");
        return;
    }
    let (load, d) = review(&root);
    let load_diags = load_findings(&load);
    assert!(load_diags.is_empty(), "{:#?}", summary(&load_diags));
    assert_eq!(
        summary(&d),
        [
            "review/dp-cuda-graph benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml:44:35 decode cuda graphs capture batch 64 but each DP rank admits 96 (384 max-running-requests over 4 ranks)"
        ]
    );
    assert!(
        d[0].notes
            .iter()
            .any(|n| n == "in variants: override_dp4_c192")
    );
}

/// `--checklist oct` asks for the October-only rules on the August tree, from the command line
/// as from the library; by default the tree's own checklist leaves them out (docs/review.md,
/// "Rules carry their checklist").
#[test]
fn the_october_checklist_is_asked_for_on_the_command_line() {
    let Some(corpus) = corpus() else {
        eprintln!("SKIP: no ../shared/corpus (INFX_CORPUS)");
        return;
    };
    let tree = corpus.join("inferencex-aug2026");
    let count = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(["review", "check", "--format", "json", "--root"])
            .arg(&tree)
            .args(extra)
            .output()
            .expect("review check runs");
        let text = String::from_utf8_lossy(&out.stdout);
        text.matches("\"review/draft-precision-env\"").count()
    };
    assert_eq!(
        count(&[]),
        0,
        "the August checklist has no draft-precision-env"
    );
    assert_eq!(count(&["--checklist", "aug"]), 0);
    assert_eq!(
        count(&["--checklist", "oct"]),
        19,
        "the October checklist finds docs/review.md's 19 draft-precision-env"
    );
}
