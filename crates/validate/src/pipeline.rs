//! The schedule of one run's load: the named loaders of [`super::inputs`], in the order their
//! data needs, and the config check beside them (docs/architecture.md, "The validate
//! pipeline"). The loaders return data; the only findings worked out here are the config
//! check's, which [`super::checks`] computes and the pipeline runs early, because its verdict
//! decides what else is loaded (the impact and the plan of sound configs only).

use super::beside::Beside;
use super::checks::{ConfigChecked, config_rules};
use super::inputs::{self, Inputs, ParseScope, ReviewSide, YamlStep};
use super::steps;
use super::{Options, baseline, contribution};
use infx_yaml::DocIndex;

/// Loads everything one run reads, with the config check worked out beside the load. Never
/// panics on repository content.
///
/// The overlap, which the one-config change's time rests on (docs/performance.md): the master
/// configs are parsed (a large one in pieces on both cores) while change detection waits on
/// the file system and libgit2; the rules that read only the configs then run on the thread
/// that parsed them, beside the changelog's load and the change's impact here; SR3/SR4, which
/// open recipe files, run beside the touched keys and the review inputs that need no
/// documents, which all only read the configs. The impact is worked out before the check's
/// verdict is known and dropped when the configs are unsound.
pub(crate) fn load(opts: &Options) -> (Inputs, ConfigChecked) {
    let root = inputs::canonical_root(opts);
    let read_log = (!opts.all && !opts.no_repository).then(|| infx_fs::ReadLog::start(&root));
    // The thread that parses the configs goes on with the config rules (handed over here as
    // soon as they are done) and then with the base's parse of a modified master config
    // (`baseline::parse_ahead`), whose jobs this thread sends once the change is known: no
    // thread of its own, and so no fresh heap, for either (docs/performance.md, "Threads cost
    // pages"). Without a repository it runs in place before the change is known, and no jobs
    // come.
    let (rules_done, rules) = std::sync::mpsc::sync_channel(1);
    let (send_jobs, jobs) = std::sync::mpsc::sync_channel::<Vec<baseline::AheadJob>>(1);
    let send_jobs = (!opts.no_repository).then_some(send_jobs);
    let after_configs = move |configs: std::sync::Arc<infx_config::LoadedConfigs>| {
        let ran = config_rules::before_recipes(&configs);
        // Let go of the configs first: the load owns them alone again once the rules arrive.
        drop(configs);
        let _ = rules_done.send(ran);
        match jobs.recv() {
            Ok(jobs) if !jobs.is_empty() => baseline::parse_ahead(jobs),
            _ => Vec::new(),
        }
    };
    let inputs::DetectedAndParsed {
        mut change,
        change_elapsed,
        files,
        mut parsed,
        mut yaml_elapsed,
        configs,
        config_load_elapsed,
        after_configs: ahead,
        deferred,
    } = inputs::detect_and_parse(
        &root,
        opts,
        ParseScope::Run,
        || steps::detect_change(&root, opts),
        after_configs,
    );
    change.share_texts(
        parsed
            .docs
            .iter()
            .chain(&configs.masters)
            .chain(&configs.runners),
    );
    // The base's parse of a modified master config, beside the rest of the load: on the base's
    // run it would be on the critical path (docs/performance.md, "Session 42: where the
    // one-config change stands"). Owned data, for the configs' thread.
    if let Some(send) = send_jobs {
        let _ = send.send(baseline::ahead_jobs(
            opts,
            &change,
            &root,
            &configs,
            &parsed.findings,
        ));
    }
    let pr = inputs::load_pr(opts, &change);
    let whole_tree = opts.whole_tree(&change.mode);

    // One index of the parsed documents for SR4 and the impact's head side.
    let documents = DocIndex::new(&parsed.docs).with_failures(&parsed.failures);
    let finish =
        |(rules, early_elapsed)| config_rules::finish(rules, &configs, &documents, early_elapsed);
    let (config_findings, config_elapsed, changelog, impact, touched, review_side) =
        std::thread::scope(|scope| {
            // The config rules still run on the thread that parsed the configs; what needs
            // only the configs goes on here meanwhile.
            let changelog = steps::load_changelog(&root, &change, &configs);
            let impact = contribution::change_impact(
                &root,
                &change,
                &configs,
                &documents,
                &changelog.scope.keys,
            );
            // A panic on the configs' thread is a bug: the rules run here instead.
            let rules = rules
                .recv()
                .unwrap_or_else(|_| config_rules::before_recipes(&configs));
            // A thread only when SR3/SR4 have recipe files to open: every thread costs its
            // own allocator heap (docs/performance.md, "The allocator: mimalloc").
            let on_thread = rules.0.opens_recipe_files();
            let check = Beside::start(scope, on_thread, || finish(rules));
            let touched = inputs::load_touched(opts, &root, &change, &configs, &changelog);
            let review_side = ReviewSide::load(
                &root,
                &change,
                &configs,
                changelog.scope.append_only,
                opts.checklist,
            );
            let (findings, elapsed) = check.join().unwrap_or_else(|_| config_rules::panicked());
            (findings, elapsed, changelog, impact, touched, review_side)
        });
    // The configs' thread let go of them before it handed over the rules.
    let mut configs = inputs::own_configs(configs);
    let config = config_rules::verdict(config_findings, config_elapsed, &change, &root);
    let impact = if config.failed {
        Default::default()
    } else {
        impact
    };

    let modifiers =
        infx_changelog::modifiers(pr.context.as_ref().map_or(&[][..], |p| &p.labels[..]));
    if !whole_tree {
        yaml_elapsed +=
            inputs::parse_touched_recipes(&mut parsed, opts, &root, &files, &configs, &touched);
    }
    let shown = inputs::load_shown(opts, &change, &configs, &impact, &changelog);
    let planned = if config.failed {
        Ok(Default::default())
    } else {
        inputs::load_plan(&change, &mut configs, &changelog, modifiers)
    };
    let (mut review, docs, review_load_findings) =
        inputs::review_inputs(&root, review_side, std::mem::take(&mut parsed.docs));
    // With the golden curves known, the added recipes no config references are checked as
    // they are parsed; only then does the review take its view of the change, whose texts the
    // parses share (docs/performance.md, "Memory per added file").
    let t = std::time::Instant::now();
    let checked_recipes = inputs::check_added_recipes(&deferred, &review, &mut change, &mut parsed);
    yaml_elapsed += t.elapsed();
    review.change = inputs::review_change(&change, pr.number);
    let pin_policy = inputs::load_images(&root, &docs, &parsed.failures);
    // A panicking parse costs only the head start: the base's run parses as before.
    let base_parses = ahead.join().unwrap_or_default();
    let inputs = Inputs {
        opts: opts.clone(),
        root,
        change,
        change_elapsed,
        pr,
        yaml: YamlStep {
            findings: parsed.findings,
            files: parsed.files,
            whole_tree,
            elapsed: yaml_elapsed,
        },
        docs,
        raw_sources: parsed.raw,
        checked_recipes,
        parse_failures: parsed.failures,
        configs,
        config_load_elapsed,
        modifiers,
        changelog,
        impact,
        touched,
        shown,
        planned,
        review,
        review_load_findings,
        pin_policy,
        base_image_sites: Default::default(),
        base_parses,
        read_log,
    };
    (inputs, config)
}

#[cfg(test)]
mod tests {
    use crate::{Options, validate_keeping_inputs};
    use std::path::Path;

    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("a folder");
        for e in std::fs::read_dir(from).expect("a listing") {
            let e = e.expect("an entry");
            let (src, dst) = (e.path(), to.join(e.file_name()));
            if e.file_type().expect("a type").is_dir() {
                copy_tree(&src, &dst);
            } else {
                std::fs::copy(&src, &dst).expect("a copy");
            }
        }
    }

    /// A change that adds recipe files: copies of the bundled tree's recipes under new folders
    /// (no config references them; their review findings and allow comments count), one with
    /// a key twice, one that does not parse, one with an unpinned image, and a recipe the
    /// configs do reference, deleted in the base. Checked as each is parsed or as parsed
    /// documents, the report is the same; the first way keeps no tree of the unreferenced ones.
    #[test]
    fn added_recipes_checked_as_parsed_report_as_documents() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let repo = infx_fs::canonical(dir.path()).expect("a canonical folder");
        let git = |args: &[&str]| crate::test_git::git(&repo, args);
        let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../inferencex-e2e");
        let root = repo.join("inferencex-e2e");
        copy_tree(&bundled, &root);
        let referenced = "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b300-fp4/fixed.yaml";
        let referenced_text = std::fs::read_to_string(root.join(referenced)).expect("read");
        std::fs::remove_file(root.join(referenced)).expect("removed");
        git(&["init", "-q", "-b", "main"]);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "base"]);
        git(&["update-ref", "refs/remotes/origin/main", "HEAD"]);
        git(&["checkout", "-q", "-b", "topic"]);
        std::fs::write(root.join(referenced), &referenced_text).expect("written");
        let recipes: Vec<_> = infx_yaml::walk_yaml(&root.join("benchmarks"))
            .files
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("srt-slurm-recipes/"))
            .collect();
        assert!(recipes.len() >= 5, "the bundled tree's recipes");
        let mut added = 0;
        for copy in 0..3 {
            for (i, src) in recipes.iter().enumerate() {
                let rel = src.strip_prefix(&root).expect("below the tree");
                let text = std::fs::read_to_string(src).expect("read");
                let text = match (copy, i) {
                    (1, 0) => text + "base:\n  schema: 2\n",
                    (1, 1) => text + "  - [unclosed\n",
                    (2, 0) => text + "nginx_container: nginx:1.27\n",
                    _ => text,
                };
                let to = root.join(rel.to_string_lossy().replace(
                    "srt-slurm-recipes/",
                    &format!("srt-slurm-recipes/copy{copy}/"),
                ));
                std::fs::create_dir_all(to.parent().expect("a folder")).expect("folders");
                std::fs::write(&to, text).expect("written");
                added += 1;
            }
        }
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "topic"]);
        let run = |from: usize| {
            let opts = Options {
                check_added_recipes_from: from,
                ..Options::new(&root)
            };
            validate_keeping_inputs(&opts)
        };
        let (streamed, s_inputs) = run(0);
        let (whole, w_inputs) = run(usize::MAX);
        // One failed to parse; the referenced one is a document.
        assert_eq!(s_inputs.checked_recipes.len(), added - 1);
        assert!(w_inputs.checked_recipes.is_empty());
        let as_document = |i: &crate::Inputs| {
            i.review
                .recipes
                .iter()
                .any(|d| d.path == root.join(referenced))
        };
        assert!(as_document(&s_inputs) && as_document(&w_inputs));
        // Each checked recipe's text is the change's: one copy.
        let Some(Ok(change)) = &s_inputs.change.loaded else {
            panic!("the change is loaded");
        };
        for r in &s_inputs.checked_recipes {
            let t = change.texts.iter().find(|t| repo.join(&t.path) == r.path);
            let t = t.expect("the change has each added file's text");
            assert!(
                std::ptr::eq(t.new.as_ptr(), r.text.as_ptr()),
                "{}",
                r.path.display()
            );
        }
        let summary = |r: &crate::Report| -> Vec<_> {
            r.checks
                .iter()
                .map(|c| {
                    (
                        c.name,
                        c.status.clone(),
                        c.scope.clone(),
                        c.diagnostics.clone(),
                    )
                })
                .collect()
        };
        assert_eq!(summary(&streamed), summary(&whole));
        assert_eq!(streamed.diagnostics(), whole.diagnostics());
        // What the copies exercise: their images, their review, the parse errors, the allow.
        let codes: std::collections::BTreeSet<String> = whole
            .diagnostics()
            .iter()
            .filter(|d| {
                d.path
                    .as_ref()
                    .is_some_and(|p| p.to_string_lossy().contains("/copy"))
            })
            .map(|d| d.code.to_string())
            .collect();
        let expected = [
            "image/unpinned",
            "review/golden-al",
            "yaml/duplicate-key",
            "yaml/syntax",
        ];
        for code in expected {
            assert!(codes.contains(code), "{code} in {codes:?}");
        }
        // The bundled agentic recipe's allow comment, in each copy too.
        assert!(
            streamed.acknowledged.len() > 1,
            "the copies' allow comments"
        );
        assert_eq!(streamed.acknowledged, whole.acknowledged);
    }
}
