//! Findings say what is wrong, once, where the fault is (issue 15 items 4-7). Each case is the
//! bundled tree committed as `main` in a throwaway repository, a working-tree edit a
//! contributor might make, and the exact command they run there — `cargo xtask validate`
//! (the built `xtask` binary, in the repository, no flags unless quoted) — with the human
//! output snapshotted (timings and commit ids masked).

use std::path::Path;
mod support;
use support::{copy_dir, edit, git};

const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";

/// The bundled tree committed on `main` (the changelog in a commit of its own, as it reached
/// the tree, so the clean clone's stand-in change has a base); the working tree is where the
/// test edits.
fn repo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    let ws = xtask::paths::workspace_root();
    copy_dir(&ws.join("inferencex-e2e"), &repo.join("inferencex-e2e"));
    copy_dir(&ws.join(".github"), &repo.join(".github"));
    git(repo, &["init", "-q", "-b", "main"]);
    git(repo, &["config", "user.email", "dev@example.com"]);
    git(repo, &["config", "user.name", "Dev"]);
    git(repo, &["config", "core.autocrlf", "false"]);
    git(repo, &["add", "-A", ":!inferencex-e2e/perf-changelog.yaml"]);
    git(repo, &["commit", "-q", "-m", "bundled tree"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "perf changelog"]);
    tmp
}

/// Runs `cargo xtask validate ARGS…` (the built binary) inside `repo`, offline, without
/// colour; returns (stdout, exit code).
fn validate(repo: &Path, args: &[&str]) -> (String, i32) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("validate")
        .args(args)
        .current_dir(repo)
        .env("NO_COLOR", "1")
        .env("INFX_HERMETIC", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo)
        .output()
        .expect("xtask runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// The report up to and including the `validate:` verdict, its last line (the binding table
/// before it included), with timings and commit ids masked: they vary run to run.
fn masked(out: &str) -> String {
    let mut lines = Vec::new();
    for line in out.lines() {
        let words: Vec<String> = line
            .split(' ')
            .enumerate()
            .map(|(i, w)| {
                let next = line.split(' ').nth(i + 1);
                if matches!(next, Some("ms" | "s")) && w.parse::<f64>().is_ok() {
                    "<t>".to_string()
                } else if w.len() == 12 && w.chars().all(|c| c.is_ascii_hexdigit()) {
                    "<commit>".to_string()
                } else {
                    w.to_string()
                }
            })
            .collect();
        let mut line = words.join(" ");
        if line.contains("<t>") {
            // The time column is right-aligned to its width: collapse the padding with it.
            line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        }
        let done = line.starts_with("validate: ");
        lines.push(line);
        if done {
            break;
        }
    }
    lines.join("\n")
}

/// The headers (`warning[code]: …` / `error[code]: …`) of a human report.
fn headers(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("error[") || l.starts_with("warning[") || l.starts_with("note["))
        .collect()
}

const ALLOWED_LINE: &str =
    "        cuda-graph-max-bs-decode: 64  # infx: allow(review/dp-cuda-graph) per-rank decode";

/// `cargo xtask validate` on the bundled tree as shipped: the DP4 C192 cuda-graph warning is
/// acknowledged by its allow comment, so the run has no warning and counts one acknowledged.
#[test]
fn the_bundled_tree_has_no_warning_and_one_acknowledged() {
    let tmp = repo();
    let recipe = std::fs::read_to_string(tmp.path().join(RECIPE)).unwrap();
    assert!(
        recipe.contains(ALLOWED_LINE),
        "the bundled recipe acknowledges the DP4 warning"
    );
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(headers(&out), Vec::<&str>::new(), "{out}");
    assert!(
        out.contains("validate: passed (0 errors, 0 warnings, 1 acknowledged)"),
        "{out}"
    );
    insta::assert_snapshot!("allow_bundled_tree", masked(&out));

    // --format json lists the acknowledged warning as a record with its reason.
    let (json, code) = validate(tmp.path(), &["--format", "json"]);
    assert_eq!(code, 0);
    let acked: Vec<serde_json::Value> = json
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["record"] == "acknowledged")
        .collect();
    assert_eq!(acked.len(), 1, "{json}");
    assert_eq!(acked[0]["code"], "review/dp-cuda-graph");
    assert_eq!(acked[0]["line"], 44);
    assert!(
        acked[0]["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("per-rank decode batch never exceeded 44"))
    );

    // --format sarif carries it as a suppressed result.
    let (sarif, _) = validate(tmp.path(), &["--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{sarif}");
    assert_eq!(results[0]["suppressions"][0]["kind"], "inSource");
}

/// Without the allow comment the warning is back (the acknowledgement is what hides it).
#[test]
fn removing_the_allow_shows_the_warning_again() {
    let tmp = repo();
    edit(tmp.path(), RECIPE, |t| {
        let at = t.find("  # infx: allow(").unwrap();
        let end = at + t[at..].find('\n').unwrap();
        format!("{}{}", &t[..at], &t[end..])
    });
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        headers(&out),
        [
            "warning[review/dp-cuda-graph]: decode cuda graphs capture batch 64 but each DP rank admits 96 (384 max-running-requests over 4 ranks)"
        ]
    );
    assert!(
        out.contains("validate: passed (0 errors, 1 warning) in"),
        "{out}"
    );
}

/// An allow with no reason is an error; an allow on an error is an error (only warnings can be
/// acknowledged) and the error stays; an allow that matches nothing is a warning.
/// A recipe with a key written twice is an error, and it is still checked as PyYAML reads it
/// (the last value wins): its DP4 warning is found, so its allow comment still acknowledges
/// it instead of being reported as unused. The change's impact reads it the same way, so a
/// duplicate that repeats the value changes no variant and needs no changelog entry (README,
/// "Impact").
#[test]
fn a_duplicate_key_recipe_is_still_reviewed() {
    let tmp = repo();
    edit(tmp.path(), RECIPE, |t| {
        t.replacen(
            "    gpus_per_node: 8\n",
            "    gpus_per_node: 8\n    gpus_per_node: 8\n",
            1,
        )
    });
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        headers(&out),
        [
            "error[yaml/duplicate-key]: duplicate key gpus_per_node in this mapping (first at line 22:5); PyYAML would silently keep only the last value",
        ],
        "{out}"
    );
    assert!(
        out.contains("validate: FAILED (1 error, 0 warnings, 1 acknowledged)"),
        "{out}"
    );
}

/// When the last of the duplicate values differs from what the base ran, the variants change
/// and the config needs an entry, as for any recipe edit.
#[test]
fn a_duplicate_keys_last_value_is_its_impact() {
    let tmp = repo();
    edit(tmp.path(), RECIPE, |t| {
        t.replacen(
            "    gpus_per_node: 8\n",
            "    gpus_per_node: 8\n    gpus_per_node: 4\n",
            1,
        )
    });
    let (out, _) = validate(tmp.path(), &[]);
    let headers = headers(&out);
    assert!(
        headers.contains(&"error[changelog/entry-required]: 'dsv41flash-fp4-b300-sglang-agentic-dspark' can benchmark differently (recipe benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml resolves to different variants), and no appended perf-changelog entry names it"),
        "{out}"
    );
}

#[test]
fn allows_need_a_reason_a_warning_and_a_finding() {
    let tmp = repo();
    edit(tmp.path(), RECIPE, |t| {
        t.replace(
            "(seed PR sign-off)",
            "(seed PR sign-off)\n        # infx: allow(review/upstream-image) nothing here warns",
        )
        .replace(
            "        reasoning-parser: auto\n",
            "        reasoning-parser: auto  # infx: allow(review/dp-cuda-graph)\n",
        )
    });
    std::fs::write(
        tmp.path().join("inferencex-e2e/notes.yaml"),
        "owner: perf\nowner: infra  # infx: allow(yaml/duplicate-key) the second one wins\n",
    )
    .unwrap();
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        headers(&out),
        [
            "warning[allow/unused]: this allow comment acknowledges nothing: no review/upstream-image finding on line 46",
            "error[allow/no-reason]: the allow comment gives no reason",
            "error[yaml/duplicate-key]: duplicate key owner in this mapping (first at line 1:1); PyYAML would silently keep only the last value",
            "error[allow/not-a-warning]: only warnings can be acknowledged; `yaml/duplicate-key` on line 2 is an error",
        ],
        "{out}"
    );
    insta::assert_snapshot!("allow_faults", masked(&out));
}

/// A file that does not parse still shows its source line, from the text the load read (no
/// second read): with a byte order mark the line is shown without it, and the caret sits
/// under the column the loader counted without it.
#[test]
fn a_file_that_does_not_parse_shows_its_source_line() {
    let tmp = repo();
    std::fs::write(
        tmp.path().join("inferencex-e2e/notes.yaml"),
        "\u{feff}team: a: b\n",
    )
    .unwrap();
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let expected = [
        "error[yaml/syntax]: YAML syntax error: mapping values are not allowed in this context",
        " --> inferencex-e2e/notes.yaml:1:8",
        "  |",
        "1 | team: a: b",
        "  |        ^",
    ]
    .join("\n");
    assert!(out.starts_with(&expected), "{out:?}");
}

const MASTER: &str = "inferencex-e2e/configs/nvidia-master.yaml";
const DIGEST: &str = "7cfd4dd8e0e902d2a3c0560565963c4e172091e1586aaed15ff5a0a131394d34";

/// A digest typo (one hex digit lost) is one finding, from the image check, saying what is
/// wrong in the user's terms; review does not report it a second time. (The edit changes the
/// entry's pin, so coverage asks for a changelog entry as it does for any repin.)
#[test]
fn a_digest_typo_is_one_finding_with_the_digit_count() {
    let tmp = repo();
    edit(tmp.path(), MASTER, |t| t.replacen(DIGEST, &DIGEST[..63], 1));
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let image: Vec<&str> = headers(&out)
        .into_iter()
        .filter(|h| h.contains("invalid digest") || h.contains("digest `"))
        .collect();
    assert_eq!(
        image,
        [format!(
            "error[image/malformed]: `dsv41flash-fp4-b300-sglang-agentic-dspark.image`: invalid digest `sha256:{}`: the digest has 63 hex digits; sha256 needs 64",
            &DIGEST[..63]
        )],
        "{out}"
    );
    assert!(!out.contains("review/image-public"), "{out}");
    insta::assert_snapshot!("digest_typo", masked(&out));
}

/// `cargo xtask validate --base no-such-rev` names the bad revision and gives no advice to run
/// inside a checkout (the user is in one).
#[test]
fn a_bad_base_is_named_without_contradicting_advice() {
    let tmp = repo();
    let (out, code) = validate(tmp.path(), &["--base", "no-such-rev"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        headers(&out),
        ["error[diff/base-not-found]: base revision `no-such-rev` not found"],
        "{out}"
    );
    assert!(!out.contains("no-history"), "{out}");
    assert!(!out.contains("run inside"), "{out}");
    insta::assert_snapshot!("bad_base", masked(&out));
}

const CHANGELOG: &str = "inferencex-e2e/perf-changelog.yaml";

/// Appends `entries` (raw text, starting at the blank separator line) to the changelog.
fn append(repo: &Path, entries: &str) {
    edit(repo, CHANGELOG, |t| format!("{t}{entries}"));
}

/// Five changelog faults in one branch are five findings of one `cargo xtask validate`: a tab
/// (at its column, 18), an invalid pr-link, two empty lines between appended entries, a
/// description that is not a list, and an empty line at the end; the summary counts the two
/// appended entries.
#[test]
fn five_changelog_faults_in_one_run() {
    let tmp = repo();
    append(
        tmp.path(),
        concat!(
            "\n- config-keys:\n    - dsr1-fp4-b300-sglang\n  description:\n",
            "    - \"Rerun once\tthe sweep\"\n  pr-link: see PR\n",
            "\n\n- config-keys:\n    - dsr1-fp4-b300-sglang\n  description: one line\n  pr-link: XXX\n\n",
        ),
    );
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let changelog: Vec<&str> = headers(&out)
        .into_iter()
        .filter(|h| h.starts_with("error[changelog/"))
        .collect();
    assert_eq!(changelog.len(), 5, "{out}");
    let text = std::fs::read_to_string(tmp.path().join(CHANGELOG)).unwrap();
    let tab_line = text.lines().position(|l| l.contains('\t')).unwrap() + 1;
    assert!(
        out.contains(&format!("{CHANGELOG}:{tab_line}:18\n")),
        "the tab is reported at its column: {out}"
    );
    assert!(out.contains("[strict vs base, 2 new entries]"), "{out}");
    // The blank line at the end is one fault: the changelog's finding, not the diff check's too.
    assert!(!out.contains("diff/blank-at-eof"), "{out}");
    insta::assert_snapshot!("changelog_five_faults", masked(&out));
}

/// Two swapped historical entries are one finding that names both positions.
#[test]
fn swapped_entries_are_named_as_reordered() {
    let tmp = repo();
    edit(tmp.path(), CHANGELOG, |t| {
        let body = t.trim_end_matches('\n');
        let entries: Vec<&str> = body.split("\n\n- config-keys:").collect();
        assert!(entries.len() >= 3, "the changelog has entries to swap");
        let mut swapped: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
        swapped.swap(1, 2);
        format!("{}\n", swapped.join("\n\n- config-keys:"))
    });
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let changelog: Vec<&str> = headers(&out)
        .into_iter()
        .filter(|h| h.contains("[changelog/"))
        .collect();
    assert_eq!(
        changelog,
        [
            "error[changelog/entry-reordered]: entries 2 and 3 are swapped: existing entries keep their positions"
        ],
        "{out}"
    );
    insta::assert_snapshot!("changelog_swapped", masked(&out));
}

/// A whitespace error on an appended changelog line shows the line (the diff check reports it
/// by repository path; the changelog itself has no other finding).
#[test]
fn an_appended_lines_whitespace_error_shows_its_source() {
    let tmp = repo();
    append(
        tmp.path(),
        "\n- config-keys:\n    - dsr1-fp4-b300-sglang\n  description:\n    - \"Rerun the sweep\"  \n  pr-link: XXX\n",
    );
    let (out, code) = validate(tmp.path(), &["--labels", "full-sweep-fail-fast"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        headers(&out),
        ["error[diff/trailing-whitespace]: trailing whitespace"],
        "{out}"
    );
    assert!(out.contains("|     - \"Rerun the sweep\"  \n"), "{out}");
    insta::assert_snapshot!("changelog_appended_whitespace", masked(&out));
}

const RECIPE_C24_ENV: &str = "    env: {CONC: \"24\", AGENTIC_WARMUP_GRACE_PERIOD: \"3600\"}";

/// A CONC copy-pasted into one override (`override_tp2_c24` keeps c16's `CONC: "16"`) is one
/// error at that override's CONC — the line that changed — not two errors on the unchanged
/// master row plus "remove the variant" warnings; the help gives the right value.
#[test]
fn a_copied_conc_is_blamed_on_the_override() {
    let tmp = repo();
    edit(tmp.path(), RECIPE, |t| {
        t.replace(
            RECIPE_C24_ENV,
            "    env: {CONC: \"16\", AGENTIC_WARMUP_GRACE_PERIOD: \"3600\"}",
        )
    });
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let matrix: Vec<&str> = headers(&out)
        .into_iter()
        .filter(|h| h.contains("[matrix/"))
        .collect();
    assert_eq!(
        matrix,
        [
            "error[matrix/duplicate-conc]: override_tp2_c24 pins CONC 16, the same as override_tp2_c16: the conc 16 point matches both, and no variant serves conc 24"
        ],
        "{out}"
    );
    assert!(out.contains(&format!("{RECIPE}:113:17\n")), "{out}");
    assert!(
        out.contains("= help: set `CONC: \"24\"` in override_tp2_c24 (its name says c24)"),
        "{out}"
    );
    insta::assert_snapshot!("binding_copied_conc", masked(&out));
}

/// A variant that lost its CONC is one error naming it (at its key), not five ambiguity
/// errors and five "unused variant" warnings about the variants it shadows.
#[test]
fn a_variant_without_conc_is_named_once() {
    let tmp = repo();
    edit(tmp.path(), RECIPE, |t| {
        t.replace(
            RECIPE_C24_ENV,
            "    env: {AGENTIC_WARMUP_GRACE_PERIOD: \"3600\"}",
        )
    });
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let matrix: Vec<&str> = headers(&out)
        .into_iter()
        .filter(|h| h.contains("[matrix/"))
        .collect();
    assert_eq!(
        matrix,
        [
            "error[matrix/variant-without-conc]: variant override_tp2_c24 pins no CONC, so it matches every point its other settings fit: 5 points (conc 1, 4, 16, 32, 48) match it and another variant"
        ],
        "{out}"
    );
    assert!(out.contains(&format!("{RECIPE}:106:1\n")), "{out}");
    insta::assert_snapshot!("binding_variant_without_conc", masked(&out));
}

/// A point no variant serves is described with the master config's spellings.
#[test]
fn binding_messages_use_yaml_spellings() {
    let tmp = repo();
    edit(tmp.path(), MASTER, |t| {
        t.replace(
            "conc-list: [1, 4, 16, 24, 32, 48]",
            "conc-list: [1, 4, 16, 24, 28, 32, 48]",
        )
    });
    let (out, _) = validate(tmp.path(), &[]);
    assert!(
        out.contains("(tp: 2, ep: 1, dp-attn: false, kv-offloading: none, conc: 28)"),
        "{out}"
    );
    assert!(!out.contains("False"), "{out}");
}

/// Findings name files the way their locations do, relative to the repository: never by the
/// absolute path of the checkout (a CI log would show the runner's layout, and the report
/// would read differently from every clone).
#[test]
fn messages_name_files_relative_to_the_repository() {
    let tmp = repo();
    edit(
        tmp.path(),
        "inferencex-e2e/configs/nvidia-master.yaml",
        |t| t.replacen("  runner: b300\n", "  runner: b300-nowhere\n", 1),
    );
    let absolute = tmp.path().canonicalize().unwrap().display().to_string();
    for format in ["human", "json", "github"] {
        let (out, code) = validate(tmp.path(), &["--format", format]);
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("is not a label in inferencex-e2e/configs/runners.yaml"),
            "{format}: {out}"
        );
        assert!(!out.contains(&absolute), "{format}: {out}");
    }
}

/// Near-miss suggestions (issue 43, item 4): a misspelt field, recipe file and variant each
/// get "did you mean" with the nearest name (infx_report::nearest).
#[test]
fn near_misses_are_suggested() {
    // The misspelt `conc-lsit` is one finding, its unknown-key with the C3 it causes folded in
    // as a note (issue 43, item 3).
    let tmp = repo();
    let master = "inferencex-e2e/configs/nvidia-master.yaml";
    edit(tmp.path(), master, |t| {
        t.replacen(
            "conc-list: [64, 128, 256], srt-recipe",
            "conc-lsit: [64, 128, 256], srt-recipe",
            1,
        )
        .replacen(
            "conc-end: 512, srt-recipe: \"fixed.yaml:override_dep8\"",
            "conc-end: 512, srt-recipe: \"fixed.yaml:override_dep9\"",
            1,
        )
        .replacen("srt-recipe: \"disagg.yaml:", "srt-recipe: \"disag.yaml:", 1)
    });
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let helps: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("= help: did you mean"))
        .map(str::trim)
        .collect();
    assert!(
        helps.iter().any(|h| h.contains("`conc-list`"))
            && helps.iter().any(|h| h.contains("`override_dep8`"))
            && helps.iter().any(|h| h.contains("`disagg.yaml`")),
        "{out}"
    );
    insta::assert_snapshot!("near_misses", masked(&out));
}

/// The verdict is the human report's last line (issue 43, item 7): the binding table comes
/// before the step summary.
#[test]
fn the_verdict_is_the_last_line() {
    let tmp = repo();
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("planned rows of "), "{out}");
    let last = out.lines().last().unwrap_or("");
    assert!(last.starts_with("validate: passed"), "{last}");
}

const AGENTIC_LANE: &str = "inferencex-e2e/configs/srt-recipes/agentic-single.yaml";
const NVIDIA: &str = "inferencex-e2e/configs/nvidia-master.yaml";

/// Renaming the agentic benchmark command in the lane block is one fault: one
/// `matrix/lane-block-value` error at the lane block's line, the 13 points that no longer bind
/// and the 13 variants left unused folded into it as notes with their locations (issue 43,
/// item 3); the two `entry-required` errors (the lane block changed two configs) stay.
#[test]
fn a_lane_block_fault_is_one_finding_at_the_lane_block() {
    let tmp = repo();
    edit(tmp.path(), AGENTIC_LANE, |t| {
        t.replace("srt_agentic.sh", "srt_agentic_v2.sh")
    });
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let h = headers(&out);
    assert_eq!(
        h.iter()
            .filter(|l| l.starts_with("error[matrix/lane-block-value]"))
            .count(),
        1,
        "{out}"
    );
    assert_eq!(h.len(), 3, "{out}");
    assert!(
        !out.contains("\nerror[matrix/binding-none]")
            && !out.contains("\nwarning[matrix/unused-variant]"),
        "{out}"
    );
    assert_eq!(out.matches("note: caused here: ").count(), 26, "{out}");
    insta::assert_snapshot!("lane_block_command_renamed", masked(&out));

    // JSON: the same one finding, its consequences as notes.
    let (json, _) = validate(tmp.path(), &["--format", "json"]);
    let found: Vec<serde_json::Value> = json
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("code").is_some())
        .collect();
    let codes: Vec<&str> = found.iter().filter_map(|v| v["code"].as_str()).collect();
    assert_eq!(
        codes
            .iter()
            .filter(|c| **c == "matrix/binding-none" || **c == "matrix/unused-variant")
            .count(),
        0,
        "{json}"
    );
    let cause = found
        .iter()
        .find(|v| v["code"] == "matrix/lane-block-value")
        .expect("the cause");
    assert_eq!(cause["path"], AGENTIC_LANE);
    assert_eq!(cause["line"], 5);
    assert_eq!(cause["notes"].as_array().map(Vec::len), Some(26));
    // SARIF: each consequence also a related location.
    let (sarif, _) = validate(tmp.path(), &["--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let result = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "matrix/lane-block-value")
        .expect("the cause in SARIF")
        .clone();
    assert_eq!(
        result["relatedLocations"].as_array().map(Vec::len),
        Some(26)
    );
    // GitHub: one annotation for the cause, carrying its consequences.
    let (gh, _) = validate(tmp.path(), &["--format", "github"]);
    assert_eq!(
        gh.matches("title=matrix/lane-block-value::").count(),
        1,
        "{gh}"
    );
    assert!(!gh.contains("title=matrix/binding-none"), "{gh}");
}

/// A variant that a point names with an explicit selector is selected, even when the point does
/// not bind to it: it is never "unused" with "remove the variant" (issue 43, item 3). Here every
/// TP2 point names its override; with the lane block's command broken, the folded notes list
/// the points and the unused TP4/DP4 variants, never a TP2 one.
#[test]
fn an_explicitly_selected_variant_is_never_unused() {
    let tmp = repo();
    edit(tmp.path(), NVIDIA, |t| {
        let row = "      - { tp: 2, ep: 1, kv-offloading: none, spec-decoding: mtp, conc-list: [1, 4, 16, 24, 32, 48], srt-recipe: agentic.yaml }\n";
        let rows: String = [1, 4, 16, 24, 32, 48]
            .iter()
            .map(|c| format!("      - {{ tp: 2, ep: 1, kv-offloading: none, spec-decoding: mtp, conc-list: [{c}], srt-recipe: \"agentic.yaml:override_tp2_c{c}\" }}\n"))
            .collect();
        t.replace(row, &rows)
    });
    edit(tmp.path(), AGENTIC_LANE, |t| {
        t.replace("srt_agentic.sh", "srt_agentic_v2.sh")
    });
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("variant override_tp2_"), "{out}");
    assert!(!out.contains("remove the variant"), "{out}");
    assert!(
        out.contains("variant override_tp4_c1 is not selected by any generated point"),
        "{out}"
    );
}

/// A vendor adds a point the cookbook does not publish yet (TP2 C64: a master row and its
/// override). Its published command cannot exist before the PR: locally
/// `review/cookbook-point-missing` is a warning, as a missing sweep label is; in CI on a
/// `pull_request` event it is an error, as the PR would merge without it (issue 43, item 2).
#[test]
fn an_unpublished_cookbook_point_warns_locally_and_fails_in_ci() {
    let tmp = repo();
    edit(tmp.path(), NVIDIA, |t| {
        t.replacen(
            "conc-list: [1, 4, 16, 24, 32, 48], srt-recipe: agentic.yaml",
            "conc-list: [1, 4, 16, 24, 32, 48, 64], srt-recipe: agentic.yaml",
            1,
        )
    });
    edit(tmp.path(), RECIPE, |t| {
        t.replacen(
            "# DP-attention across 4 ranks",
            "override_tp2_c64:\n  roles:\n    agg:\n      gpus: 2\n      args: {tensor-parallel-size: 2, expert-parallel-size: 1, mem-fraction-static: 0.8,\n             swa-prefix-tails: 3072, max-running-requests: 64, prefill-decode-interval: 64}\n  benchmark:\n    env: {CONC: \"64\", AGENTIC_WARMUP_GRACE_PERIOD: \"3600\"}\n\n# DP-attention across 4 ranks",
            1,
        )
    });
    let missing =
        "[review/cookbook-point-missing]: matrix point tp 2, ep 1, dp-attn false, conc 64";
    let (out, _) = validate(tmp.path(), &["--labels", "full-sweep-fail-fast"]);
    let h = headers(&out);
    assert!(
        h.iter()
            .any(|l| l.starts_with(&format!("warning{missing}"))),
        "{out}"
    );
    assert!(!out.contains(&format!("error{missing}")), "{out}");
    insta::assert_snapshot!("cookbook_point_unpublished_local", masked(&out));

    // The same change in CI, on the pull request's event: an error.
    let event = tmp.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"action":"synchronize","pull_request":{"number":4242,"labels":[{"name":"full-sweep-fail-fast"}]}}"#,
    )
    .unwrap();
    let (out, code) = validate(tmp.path(), &["--event", "event.json"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        headers(&out)
            .iter()
            .any(|l| l.starts_with(&format!("error{missing}"))),
        "{out}"
    );
}

/// An entry that re-runs dsr1-fp4-b300-sglang, valid on its own.
const RERUN: &str = "- config-keys:\n    - dsr1-fp4-b300-sglang\n  description:\n    - Re-run on the same image\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n";

/// Swaps the changelog's entries 2 and 3.
fn swap_entries_2_and_3(t: String) -> String {
    let body = t.trim_end_matches('\n');
    let mut entries: Vec<String> = body
        .split("\n\n- config-keys:")
        .map(str::to_string)
        .collect();
    entries.swap(1, 2);
    format!("{}\n", entries.join("\n\n- config-keys:"))
}

/// A reorder does not hide the appended entry's separator fault: both in one run, and coverage
/// judges the appended entry, which reads (issue 43, item 6).
#[test]
fn a_reorder_and_a_separator_fault_in_one_run() {
    let tmp = repo();
    edit(tmp.path(), CHANGELOG, swap_entries_2_and_3);
    append(tmp.path(), &format!("\n\n{RERUN}"));
    let (out, code) = validate(tmp.path(), &["--labels", "full-sweep-fail-fast"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        headers(&out),
        [
            "error[changelog/entry-reordered]: entries 2 and 3 are swapped: existing entries keep their positions",
            "error[changelog/separator]: appended changelog entries must have exactly one empty separator line",
        ],
        "{out}"
    );
    insta::assert_snapshot!("changelog_reorder_and_separator", masked(&out));
}

/// A trailing space added to a historical changelog line is one finding, the changelog's
/// `history-bytes` (it owns the changelog's history; docs/architecture.md, "One finding per
/// cause"), not also diff-check's trailing whitespace; coverage still reads the appended entry
/// (issue 43, item 6).
#[test]
fn a_historical_lines_trailing_space_is_one_finding() {
    let tmp = repo();
    edit(tmp.path(), CHANGELOG, |t| {
        t.replacen("at TP4 and DEP8\n", "at TP4 and DEP8 \n", 1)
    });
    append(tmp.path(), &format!("\n{RERUN}"));
    let (out, code) = validate(tmp.path(), &["--labels", "full-sweep-fail-fast"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        headers(&out),
        [
            "error[changelog/history-bytes]: appended entries changed historical perf-changelog.yaml bytes; restore the base file byte-for-byte and append at the end"
        ],
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("coverage") && l.contains(" ok ")),
        "{out}"
    );
    insta::assert_snapshot!("changelog_history_trailing_space", masked(&out));
}

/// A recipe file the change renamed: each reference to the old name (four rows of
/// dsr1-fp4-b300-sglang) says the file was renamed, and to what (issue 43, item 6).
#[test]
fn a_renamed_recipe_is_named_as_a_rename() {
    let tmp = repo();
    let dir = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b300-fp4";
    git(
        tmp.path(),
        &[
            "mv",
            &format!("{dir}/fixed.yaml"),
            &format!("{dir}/fixed-seq.yaml"),
        ],
    );
    let (out, code) = validate(tmp.path(), &[]);
    assert_eq!(code, 1, "{out}");
    let sr4: Vec<&str> = headers(&out)
        .into_iter()
        .filter(|h| h.starts_with("error[config/SR4]"))
        .collect();
    assert_eq!(sr4.len(), 4, "{out}");
    for h in sr4 {
        assert!(
            h.ends_with("fixed.yaml does not exist: the change renamed it to benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b300-fp4/fixed-seq.yaml"),
            "{out}"
        );
    }
    insta::assert_snapshot!("recipe_renamed", masked(&out));
}
