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
                (pr.number, opts.checklist),
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
    let (review, docs, review_load_findings) =
        inputs::review_inputs(&root, review_side, parsed.docs);
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
