//! Against the recorded srtctl outputs (../shared/corpus/srtctl-golden): accept/reject and the
//! fully defaulted configuration of every accepted dry-run variant. The full comparison
//! (failing fields, messages, resolve-override) is `cargo xtask conformance recipes`.

use infx_recipe::srtctl::dry_run;
use infx_recipe::{RecipeRef, load_recipe_file};
use std::path::PathBuf;

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.join("srtctl-golden").is_dir().then_some(dir)
}

#[test]
fn srtctl_golden_dry_runs() {
    let Some(corpus) = corpus() else {
        eprintln!("SKIP: srtctl_golden_dry_runs: ../shared/corpus not found");
        return;
    };
    let index = std::fs::read_to_string(corpus.join("srtctl-golden/index.tsv")).unwrap();
    let (mut total, mut agree) = (0, 0);
    let mut bad = Vec::new();
    for line in index.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f[2] != "dry-run" || f[4] == "missing" || f[4] == "unparseable" {
            continue;
        }
        let dir = corpus.join("srtctl-golden/cases").join(f[0]);
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let file = meta["recipe_file"].as_str().unwrap();
        let arg = if f[3].is_empty() {
            file.to_string()
        } else {
            format!("{file}:{}", f[3])
        };
        total += 1;
        let Ok(r) = RecipeRef::parse_srtctl(&arg) else {
            agree += (f[5] != "0") as usize;
            continue;
        };
        let cluster = std::fs::read_to_string(dir.join("srtslurm.yaml"))
            .ok()
            .and_then(|t| infx_yaml::parse_str(&dir, &t).ok());
        let ok = match load_recipe_file(&dir.join(&r.path)) {
            Err(_) => f[5] != "0",
            Ok(recipe) => {
                let run = dry_run(&recipe, r.selector.as_ref(), cluster.as_ref());
                let configs_match =
                    run.configs.iter().enumerate().all(
                        |(i, (_, cfg))| match std::fs::read_to_string(
                            dir.join(format!("derived/config_{}.json", i + 1)),
                        ) {
                            Ok(t) => serde_json::from_str::<serde_json::Value>(&t).unwrap() == *cfg,
                            Err(_) => f[4] == "sweep",
                        },
                    );
                configs_match && run.error.is_none() == (f[5] == "0")
            }
        };
        if ok {
            agree += 1;
        } else {
            bad.push(f[0].to_string());
        }
    }
    assert!(total > 800, "corpus index has {total} dry-run cases");
    assert!(
        agree * 100 >= total * 99,
        "{agree}/{total} agree; first disagreements: {:?}",
        &bad[..bad.len().min(5)]
    );
}

/// The three schema-2 recipes of the later InferenceX layout (which srtctl c88ef731 rejects)
/// validate under the schema-2 rules once a model is bound, as the launcher does.
#[test]
fn newest_schema2_recipes_validate() {
    let Some(corpus) = corpus() else {
        eprintln!("SKIP: newest_schema2_recipes_validate: ../shared/corpus not found");
        return;
    };
    let dir = corpus.join("srtctl-golden/cases/inferencex-newest");
    let mut n = 0;
    for case in std::fs::read_dir(&dir).unwrap().flatten() {
        let all = case.path().join("all");
        let Some(file) = std::fs::read_dir(&all)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "yaml"))
        else {
            continue;
        };
        let recipe = load_recipe_file(&file).unwrap();
        // Fragments get their benchmark client from the lane block.
        let lane = if file.to_string_lossy().contains("agentic") {
            infx_recipe::Lane::AgenticSingle
        } else {
            infx_recipe::Lane::FixedSeqSingle
        };
        let tree = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../inferencex-e2e");
        let block = infx_recipe::load_recipe(&tree, lane.block_path()).unwrap();
        let recipe = infx_recipe::compose_lane(&recipe, lane, &block);
        for mut v in recipe.expand(None).unwrap() {
            infx_recipe::bind_model(&mut v, "org/model", "registry/image:tag", "fp4");
            let ds = infx_recipe::validate(&v);
            assert!(ds.is_empty(), "{} {}: {ds:?}", file.display(), v.label);
            assert!(!infx_recipe::render(&v).processes.is_empty());
            n += 1;
        }
    }
    assert!(n >= 20, "{n} variants checked");
}
