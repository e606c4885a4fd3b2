//! `cargo xtask dry-run` the way a contributor first tries it (issue 15, item 1): by config key
//! on a fresh clone with no other flag, by the file of a recipe master entries use, and on a
//! fragment no entry uses. Each runs the binary in a throwaway clone of the bundled tree.

use std::path::Path;
use std::process::Command;
mod support;
use support::{copy_dir, git};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");
const RECIPE: &str = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml";

/// A clone of the bundled tree: a git work tree holding `inferencex-e2e/`, nothing else.
fn fresh_clone() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ws = xtask::paths::workspace_root();
    copy_dir(
        &ws.join("inferencex-e2e"),
        &tmp.path().join("inferencex-e2e"),
    );
    git(tmp.path(), &["init", "-q", "-b", "main"]);
    tmp
}

/// Runs `cargo xtask <args>` standing in `dir`; (exit code, stdout).
fn xtask_in(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(XTASK)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("xtask runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The lines of the block of variant `n` (`[n/…] …` up to the next block or the summary).
fn block(text: &str, n: usize) -> String {
    let head = format!("[{n}/");
    text.lines()
        .skip_while(|l| !l.starts_with(&head))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || !(l.starts_with('[') || l.starts_with("dry-run:")))
        .map(|(_, l)| format!("{l}\n"))
        .collect()
}

#[test]
fn dry_run_by_config_key_renders_every_point_as_launched() {
    let clone = fresh_clone();
    // The exact command of issue 15: no flag but the key.
    let (code, text) = xtask_in(
        clone.path(),
        &[
            "dry-run",
            "--config-key",
            "dsv41flash-fp4-b300-sglang-agentic-dspark",
        ],
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.ends_with(
            "dry-run: dsv41flash-fp4-b300-sglang-agentic-dspark: 9 point(s) rendered, 0 invalid\n"
        ),
        "{text}"
    );
    assert!(
        !text.contains("(invalid)") && !text.contains("error["),
        "{text}"
    );
    // Points in the entry's order, each with the variant the binder chose.
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(heads.len(), 9, "{text}");
    assert!(heads[0].starts_with("[1/9] override_tp4_c1:"), "{heads:?}");
    assert!(
        heads[8].starts_with("[9/9] override_dp4_c192:"),
        "{heads:?}"
    );
    // DP4: the router in front of the DP-attention worker, and the point's bindings.
    let dp4 = block(&text, 9);
    assert!(
        dp4.contains("router sglang-router[0] on <ip0>\n")
            && dp4.contains("--policy cache_aware --dp-aware"),
        "{dp4}"
    );
    assert!(
        dp4.contains("point tp 4, ep 4, dp-attn true, conc 192, kv-offloading none;"),
        "{dp4}"
    );
    assert!(
        dp4.contains("  env CONC=192\n")
            && dp4.contains("  env MODEL=deepseek-ai/DeepSeek-V4.1-Flash\n"),
        "{dp4}"
    );
    assert!(
        dp4.contains("--model-path deepseek-ai/DeepSeek-V4.1-Flash"),
        "{dp4}"
    );
    insta::assert_snapshot!("dry_run_config_key_dsv41_dp4", dp4);

    // --conc keeps the points of those concurrencies only.
    let (code, text) = xtask_in(
        clone.path(),
        &[
            "dry-run",
            "--config-key",
            "dsv41flash-fp4-b300-sglang-agentic-dspark",
            "--conc",
            "192",
            "--quiet",
        ],
    );
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("dry_run_config_key_conc_192", text);

    // --point: by variant, or by the row's values; a point matching any is kept.
    let (code, text) = xtask_in(
        clone.path(),
        &[
            "dry-run",
            "--config-key",
            "dsv41flash-fp4-b300-sglang-agentic-dspark",
            "--point",
            "tp=2,conc=16",
            "--point",
            "override_dp4_c192",
            "--quiet",
        ],
    );
    assert_eq!(code, 0, "{text}");
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(
        heads,
        [
            "[1/2] override_tp2_c16: dsv41flash-fp4-b300-sglang-agentic_tp2_c16",
            "[2/2] override_dp4_c192: dsv41flash-fp4-b300-sglang-agentic_dp4_c192"
        ],
        "{text}"
    );
    assert!(!text.contains("unused-variant"), "{text}");
    // A misspelt key: the advice names this command's flag.
    let (code, text) = xtask_in(clone.path(), &["dry-run", "--config-key", "dsv41flash"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("help: check the key's spelling") && !text.contains("--config-keys"),
        "{text}"
    );
}

#[test]
fn dry_run_of_a_used_recipe_binds_from_its_entry_in_file_order() {
    let clone = fresh_clone();
    let (code, text) = xtask_in(clone.path(), &["dry-run", "--quiet", RECIPE]);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("dry_run_used_recipe_quiet", text);
    // A selector keeps the bound variants it names.
    let (code, text) = xtask_in(
        clone.path(),
        &["dry-run", "--quiet", &format!("{RECIPE}:override_tp2_*")],
    );
    assert_eq!(code, 0, "{text}");
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(heads.len(), 6, "{text}");
    assert!(
        heads.iter().all(|h| h.contains("override_tp2_c")),
        "{heads:?}"
    );
    // Two entries use the recipe: the first binds, the other is listed.
    support::edit(
        clone.path(),
        "inferencex-e2e/configs/nvidia-master.yaml",
        |t| {
            let start = t
                .find("dsv41flash-fp4-b300-sglang-agentic-dspark:")
                .expect("entry");
            let entry = t[start..].to_string();
            format!("{t}{}", entry.replacen("-dspark:", "-dspark-copy:", 1))
        },
    );
    let (_, text) = xtask_in(clone.path(), &["dry-run", "--quiet", RECIPE]);
    assert!(
        text.contains("note: also used by dsv41flash-fp4-b300-sglang-agentic-dspark-copy; pass --config-key to choose"),
        "{text}"
    );
}

#[test]
fn a_fragment_no_entry_uses_gets_the_flags_to_bind_it() {
    let clone = fresh_clone();
    let copy = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/draft.yaml";
    std::fs::copy(clone.path().join(RECIPE), clone.path().join(copy)).expect("copy");
    let (code, text) = xtask_in(clone.path(), &["dry-run", "--quiet", copy]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("help: dry-run it as a fragment with --lane <LANE> --model <MODEL>"),
        "{text}"
    );
    // Unbound variants are listed in file order, not sorted.
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert!(heads[0].starts_with("[1/9] override_tp4_c1:"), "{heads:?}");
    assert!(
        heads[8].starts_with("[9/9] override_dp4_c192:"),
        "{heads:?}"
    );
    let note: String = text
        .split("\n\n")
        .find(|b| b.contains("dry-run/unbound-fragment"))
        .unwrap_or_default()
        .to_string();
    insta::assert_snapshot!("dry_run_unbound_fragment_note", note);
    // Point selection needs an entry: said, not silently ignored.
    let (_, text) = xtask_in(clone.path(), &["dry-run", "--quiet", copy, "--conc", "4"]);
    assert!(text.contains("warning[dry-run/points-unbound]"), "{text}");
    // With the flags it names, the fragment validates.
    let (code, text) = xtask_in(
        clone.path(),
        &[
            "dry-run",
            "--quiet",
            copy,
            "--lane",
            "agentic-single",
            "--model",
            "deepseek-ai/DeepSeek-V4.1-Flash",
            "--image",
            "lmsysorg/sglang:nightly",
            "--precision",
            "fp4",
        ],
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.ends_with("9 variant(s), 0 invalid\n"), "{text}");
}

#[test]
fn a_point_no_variant_serves_is_the_binders_finding_and_the_rest_still_render() {
    let clone = fresh_clone();
    support::edit(
        clone.path(),
        "inferencex-e2e/configs/nvidia-master.yaml",
        |t| {
            t.replacen(
                "conc-list: [1, 4, 16, 24, 32, 48]",
                "conc-list: [1, 4, 16, 24, 28, 32, 48]",
                1,
            )
        },
    );
    let (code, text) = xtask_in(
        clone.path(),
        &[
            "dry-run",
            "--config-key",
            "dsv41flash-fp4-b300-sglang-agentic-dspark",
            "--quiet",
        ],
    );
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(
            "1 point(s) of dsv41flash-fp4-b300-sglang-agentic-dspark bind to no single variant"
        ),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with('[')).count(),
        9,
        "{text}"
    );
    let finding: String = text
        .split("\n\n")
        .find(|b| b.contains("error[matrix/binding-none]"))
        .unwrap_or_default()
        .to_string();
    // Located as validate locates it: repository-relative, with the entry's line.
    assert!(
        finding.contains("--> inferencex-e2e/configs/nvidia-master.yaml:104:9"),
        "{finding}"
    );
    insta::assert_snapshot!("dry_run_config_key_binding_none", finding);
}
