//! `pin` end to end against a real registry: a fixture tree and the bundled `inferencex-e2e/`
//! tree, pinned on a temporary copy; only digests may change; a second run changes nothing; a
//! failing run writes nothing.

mod common;

use common::*;
use infx_image::VerifyOptions;
use infx_image::codes;
use infx_image::manifest::Platform;
use infx_image::pin;
use infx_image::{Client, ClientConfig, Digest, Reference};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for e in std::fs::read_dir(src).expect("read_dir") {
        let e = e.expect("entry");
        let to = dst.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut files = Vec::new();
    pin::yaml_files(root, &mut files).expect("walk");
    files
        .into_iter()
        .map(|p| (p.clone(), std::fs::read_to_string(&p).expect("read")))
        .collect()
}

fn strip_digests(s: &str) -> String {
    let mut out = s.to_string();
    while let Some(i) = out.find("@sha256:") {
        out.replace_range(i..i + 8 + 64, "");
    }
    out
}

/// Every registry name of the tree served by the one local registry.
fn client(reg: &Registry) -> Client {
    let names = ["docker.io", "nvcr.io", "ghcr.io", "quay.io"];
    Client::new(ClientConfig {
        overrides: names.iter().map(|n| (n.to_string(), reg.url())).collect(),
        ..Default::default()
    })
}

/// Seeds one two-platform index per distinct tag of the tree (each with its own digest).
fn seed(reg: &Registry, root: &Path) -> BTreeMap<String, Digest> {
    let loaded = pin::load(&pin::discover(root).expect("discover"));
    let a = agent();
    let base = build_image(Flavour::Oci, "seed", None);
    let mut expected = BTreeMap::new();
    let mut repos = std::collections::BTreeSet::new();
    for s in &loaded.sites {
        let Ok(r) = Reference::parse(&s.written) else {
            continue;
        };
        let Some(tag) = r.effective_tag() else {
            continue;
        };
        if repos.insert(r.repository.clone()) {
            push_image(&a, &reg.url(), &r.repository, "seed-base", &base, None);
        }
        let img = build_image(Flavour::Oci, "seed", Some(&r.tagged()));
        put_manifest(
            &a,
            &reg.url(),
            &r.repository,
            tag,
            img.index_media_type,
            &img.index,
            None,
        );
        expected.insert(r.tagged(), img.index_digest());
    }
    expected
}

fn run_pin(c: &Client, root: &Path) -> pin::Plan {
    let loaded = pin::load(&pin::discover(root).expect("discover"));
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let resolved = pin::resolve_sites(c, &loaded.sites, &Platform::defaults(), 8, &|_, _| {});
    let plan = pin::plan(&loaded.docs, &loaded.sites, &resolved);
    if !plan.has_errors() {
        pin::write_all(&plan.files, &root.join(".infx-pin.journal"), &|_| {}).expect("write");
    }
    plan
}

/// Pins a copy of `src`; checks the byte-identity-except-digests property, idempotence and
/// `--check`. Returns the number of changed references.
fn pin_copy_of(reg: &Registry, src: &Path) -> usize {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("tree");
    copy_tree(src, &root);
    let expected = seed(reg, &root);
    let before = snapshot(&root);
    let c = client(reg);
    let plan = run_pin(&c, &root);
    assert!(!plan.has_errors(), "{:?}", plan.diagnostics);
    let after = snapshot(&root);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (path, old) in &before {
        let new = &after[path];
        assert_eq!(
            strip_digests(old),
            strip_digests(new),
            "{} differs beyond digests",
            path.display()
        );
    }
    // Every reference now carries its tag's seeded index digest.
    let loaded = pin::load(&pin::discover(&root).expect("discover"));
    for s in &loaded.sites {
        let r = Reference::parse(&s.written).expect("parse");
        if let Some(want) = expected.get(&r.tagged()) {
            assert_eq!(r.digest.as_ref(), Some(want), "{}", s.written);
        }
    }
    assert!(
        infx_image::check_offline(&loaded.sites)
            .iter()
            .all(|d| d.code != codes::UNPINNED)
    );
    let online = infx_image::check_online(
        &c,
        &loaded.sites,
        &VerifyOptions {
            deep: true,
            ..Default::default()
        },
        4,
        &|_, _| {},
    );
    assert!(online.is_empty(), "{online:?}");
    // Second run: nothing to do.
    let again = run_pin(&c, &root);
    assert!(
        again.changes.is_empty() && again.files.is_empty(),
        "{:?}",
        again.changes
    );
    assert_eq!(snapshot(&root), after);
    plan.changes.len()
}

#[test]
fn pin_fixture_tree() {
    let Some(bin) = require_registry("pin_fixture_tree") else {
        return;
    };
    let reg = Registry::start(&bin, "");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tree");
    // 5 master references (the merged alias is one scalar) + 2 recipe references.
    assert_eq!(pin_copy_of(&reg, &src), 7);
    reg.stop();
}

#[test]
fn pin_bundled_tree() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../inferencex-e2e");
    if !src.join("configs").is_dir() {
        skip("pin_bundled_tree: inferencex-e2e/configs not found");
        return;
    }
    let Some(bin) = require_registry("pin_bundled_tree") else {
        return;
    };
    let reg = Registry::start(&bin, "");
    let changed = pin_copy_of(&reg, &src);
    assert!(changed > 0, "the bundled tree has image references");
    reg.stop();
}

#[test]
fn a_failing_run_writes_nothing() {
    let Some(bin) = require_registry("a_failing_run_writes_nothing") else {
        return;
    };
    let reg = Registry::start(&bin, "");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("tree");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tree"),
        &root,
    );
    seed(&reg, &root);
    // One more entry whose tag is a single-platform image, and one whose tag does not exist.
    let amd = root.join("configs/amd-master.yaml");
    let mut text = std::fs::read_to_string(&amd).expect("read");
    text.push_str("single-arch:\n  image: lmsysorg/sglang-rocm:seed-base-amd64\nmissing:\n  image: lmsysorg/sglang-rocm:no-such-tag\n");
    std::fs::write(&amd, &text).expect("write");
    let before = snapshot(&root);
    let plan = run_pin(&client(&reg), &root);
    let codes: Vec<_> = plan.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [codes::NOT_MULTI_ARCH, codes::TAG_NOT_FOUND]);
    assert!(
        plan.diagnostics
            .iter()
            .all(|d| d.path.as_deref() == Some(amd.as_path()))
    );
    assert_eq!(snapshot(&root), before, "nothing written");
    reg.stop();
}

#[test]
fn online_check_diagnostics() {
    let Some(bin) = require_registry("online_check_diagnostics") else {
        return;
    };
    let reg = Registry::start(&bin, "");
    let a = agent();
    let first = build_image(Flavour::Oci, "first", None);
    let second = build_image(Flavour::Oci, "second", None);
    let gone = build_image(Flavour::Oci, "gone", None);
    push_image(&a, &reg.url(), "ns/img", "v1", &first, None);
    push_image(&a, &reg.url(), "ns/img", "v2", &second, None);
    push_image(&a, &reg.url(), "ns/img", "v3", &gone, None);
    let text = format!(
        "good:\n  image: ns/img:v2@{}\nplatform:\n  image: ns/img:v2@{}\nmoved:\n  image: ns/img:v1@{}\ngone:\n  image: ns/img:v3@{}\nunpinned:\n  image: ns/img:v1\n",
        second.index_digest(),
        second.platform_digest("arm64"),
        second.index_digest(),
        gone.index_digest(),
    );
    let del = a
        .delete(&format!(
            "{}/v2/ns/img/manifests/{}",
            reg.url(),
            gone.index_digest()
        ))
        .call()
        .expect("DELETE");
    assert_eq!(del.status(), 202);
    let path = PathBuf::from("configs/test-master.yaml");
    let root = infx_yaml::parse_str(&path, &text).expect("yaml");
    let doc = infx_yaml::Document {
        path,
        text: text.into(),
        root: root.into(),
    };
    let (sites, _) = infx_image::sites_in(&doc);
    let c = client(&reg);
    let diags = infx_image::check_online(&c, &sites, &VerifyOptions::default(), 4, &|_, _| {});
    let got: Vec<(infx_report::Code, usize)> = diags
        .iter()
        .map(|d| (d.code, d.span.map(|s| s.start.line()).unwrap_or(0)))
        .collect();
    assert_eq!(
        got,
        [
            (codes::NOT_MULTI_ARCH, 4),
            (codes::TAG_MOVED, 6),
            (codes::DIGEST_MISSING, 8)
        ]
    );
    assert!(
        diags[1].message.contains(&first.index_digest().to_string()),
        "{}",
        diags[1].message
    );
    // Unpinned is the offline check's finding.
    let offline: Vec<_> = infx_image::check_offline(&sites)
        .into_iter()
        .map(|d| d.code)
        .collect();
    assert_eq!(offline, [codes::UNPINNED]);
    reg.stop();
}
