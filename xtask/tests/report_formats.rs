//! The human and SARIF output of `validate` on a tree with one fault per check: the human text
//! is snapshotted (one finding of every check), and the SARIF log validates against the SARIF
//! 2.1.0 schema written from the specification (crates/report/tests/fixtures).

use std::path::Path;
mod support;

const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";
const MASTER: &str = "inferencex-e2e/configs/nvidia-master.yaml";
const CHANGELOG: &str = "inferencex-e2e/perf-changelog.yaml";
const IMAGE: &str = "lmsysorg/sglang:nightly-dev-cu13-20261004-295a53c9@sha256:7cfd4dd8e0e902d2a3c0560565963c4e172091e1586aaed15ff5a0a131394d34";

fn edit(repo: &Path, rel: &str, from: &str, to: &str) {
    let p = repo.join(rel);
    let before = std::fs::read_to_string(&p).unwrap();
    assert!(before.contains(from), "{rel} lacks {from:?}");
    std::fs::write(&p, before.replacen(from, to, 1)).unwrap();
}

/// `main` holds the bundled tree; the working tree adds one fault for each check. A config
/// error stops the matrix check (it needs valid configs), so the config fault is optional and
/// each test runs both trees.
fn faulty_repo(config_fault: bool) -> tempfile::TempDir {
    let tmp = support::bundled_repo();
    let repo = tmp.path();
    // yaml: a duplicate key (with its first definition as a secondary label).
    std::fs::write(
        repo.join("inferencex-e2e/notes.yaml"),
        "owner: perf\nreviewed: true\nowner: infra\n",
    )
    .unwrap();
    // config: conc-start above conc-end.
    if config_fault {
        edit(
            repo,
            MASTER,
            "conc-start: 4, conc-end: 64",
            "conc-start: 128, conc-end: 64",
        );
    }
    // image: a tag without its digest.
    edit(
        repo,
        MASTER,
        IMAGE,
        IMAGE.split('@').next().unwrap_or(IMAGE),
    );
    // matrix: a point no recipe variant serves.
    edit(
        repo,
        MASTER,
        "conc-list: [1, 4, 16, 24, 32, 48]",
        "conc-list: [1, 4, 16, 24, 28, 32, 48]",
    );
    // recipe: an override key the schema does not know.
    edit(
        repo,
        RECIPE,
        "override_tp2_c16:\n  roles:\n    agg:\n",
        "override_tp2_c16:\n  roles:\n    agg:\n      bogus-key: 1\n",
    );
    // review: an env variable that quantises the draft.
    edit(
        repo,
        RECIPE,
        "        PYTHONUNBUFFERED: \"1\"\n",
        "        PYTHONUNBUFFERED: \"1\"\n        SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: \"1\"\n",
    );
    // changelog: a historical line edited; diff: trailing whitespace on it.
    let text = std::fs::read_to_string(repo.join(CHANGELOG)).unwrap();
    let at = text.find("description:").unwrap();
    let line = text[at..].lines().nth(1).unwrap().to_string();
    edit(repo, CHANGELOG, &line, &format!("{line} (edited) "));
    tmp
}

fn validate(repo: &Path, format: &str) -> (String, i32) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["validate", "--format", format, "--root"])
        .arg(repo.join("inferencex-e2e"))
        .env("NO_COLOR", "1")
        .env("INFX_HERMETIC", "1")
        .output()
        .expect("xtask runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// The check part of each finding's code, in output order, deduplicated.
fn checks_of(codes: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in codes {
        let check = c.split('/').next().unwrap_or("").to_string();
        if !out.contains(&check) {
            out.push(check);
        }
    }
    out.sort();
    out
}

const EVERY_CHECK: [&str; 8] = [
    "changelog",
    "config",
    "diff",
    "image",
    "matrix",
    "recipe",
    "review",
    "yaml",
];

#[test]
fn human_output_has_one_finding_of_every_check() {
    let mut codes = Vec::new();
    let mut reports = Vec::new();
    let mut summaries = Vec::new();
    for config_fault in [true, false] {
        let tmp = faulty_repo(config_fault);
        let (out, code) = validate(tmp.path(), "human");
        assert_eq!(code, 1, "{out}");
        for h in out
            .lines()
            .filter(|l| l.starts_with("error[") || l.starts_with("warning["))
        {
            if let (Some(a), Some(b)) = (h.find('['), h.find(']')) {
                codes.push(h[a + 1..b].to_string());
            }
        }
        summaries.push(
            out.lines()
                .filter(|l| l.contains(" ms "))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        // The report without the timing summary (it varies run to run).
        reports.push(out.split("\nchange ").next().unwrap_or(&out).to_string());
    }
    assert_eq!(
        checks_of(codes.into_iter()),
        EVERY_CHECK,
        "{}",
        summaries.join("\n---\n")
    );
    insta::assert_snapshot!("validate_human_with_config_fault", reports[0]);
    insta::assert_snapshot!("validate_human_with_matrix_fault", reports[1]);
}

#[test]
fn sarif_of_a_failing_tree_validates_against_the_schema() {
    let schema_path = xtask::paths::workspace_root()
        .join("crates/report/tests/fixtures/sarif-2.1.0-subset.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    compiler.add_resource("sarif.json", schema).unwrap();
    let idx = compiler.compile("sarif.json", &mut schemas).unwrap();
    let mut rule_ids = Vec::new();
    for config_fault in [true, false] {
        let tmp = faulty_repo(config_fault);
        let (out, code) = validate(tmp.path(), "sarif");
        assert_eq!(code, 1);
        let doc: serde_json::Value = serde_json::from_str(&out).expect("stdout is one SARIF log");
        if let Err(e) = schemas.validate(&doc, idx) {
            panic!("{e:#}");
        }
        let run = &doc["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        let results = run["results"].as_array().unwrap();
        rule_ids.extend(
            rules
                .iter()
                .map(|r| r["id"].as_str().unwrap_or("").to_string()),
        );
        for r in results {
            let i = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(r["ruleId"], rules[i]["id"]);
        }
        // The duplicate key carries its first definition as a related location.
        let dup = results
            .iter()
            .find(|r| r["ruleId"] == "yaml/duplicate-key")
            .expect("duplicate key reported");
        assert_eq!(
            dup["relatedLocations"][0]["physicalLocation"]["region"]["startLine"],
            1
        );
    }
    assert_eq!(checks_of(rule_ids.into_iter()), EVERY_CHECK);
}
