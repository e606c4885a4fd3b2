//! Resolution and verification against a real registry (CNCF Distribution) on loopback.

mod common;

use common::*;
use infx_image::manifest::{self, Platform};
use infx_image::{Client, ClientConfig, Reference, ResolveError, resolve, verify};
use infx_image::{Finding, VerifyOptions};

fn client_for(reg: &Registry) -> Client {
    Client::new(ClientConfig {
        overrides: [("127.0.0.1".to_string(), reg.url())].into(),
        ..Default::default()
    })
}

/// `127.0.0.1/<repo>:<tag>` names the test registry through the override.
fn r(s: &str) -> Reference {
    Reference::parse(&format!("127.0.0.1/{s}")).expect("reference")
}

#[test]
fn index_list_and_single_platform() {
    let Some(bin) = require_registry("index_list_and_single_platform") else {
        return;
    };
    let reg = Registry::start(&bin, "");
    let a = agent();
    let oci = build_image(Flavour::Oci, "one", None);
    let docker = build_image(Flavour::Docker, "one", None);
    push_image(&a, &reg.url(), "ns/img", "v1", &oci, None);
    push_image(&a, &reg.url(), "ns/dockerimg", "v1", &docker, None);
    let c = client_for(&reg);
    let req = Platform::defaults();

    // 1. OCI index.
    let got = resolve(&c, &r("ns/img:v1"), &req).expect("resolve OCI index");
    assert_eq!(got.digest, oci.index_digest());
    assert_eq!(got.media_type, manifest::OCI_INDEX);
    assert_eq!(
        got.platforms
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>(),
        ["linux/amd64", "linux/arm64/v8"]
    );

    // 2. Docker manifest list.
    let got = resolve(&c, &r("ns/dockerimg:v1"), &req).expect("resolve Docker list");
    assert_eq!(got.digest, docker.index_digest());
    assert_eq!(got.media_type, manifest::DOCKER_LIST);

    // 3. Single-platform tag: refused, and its digest reported.
    match resolve(&c, &r("ns/img:v1-amd64"), &req) {
        Err(ResolveError::NotMultiArch { digest, media_type }) => {
            assert_eq!(digest, oci.platform_digest("amd64"));
            assert_eq!(media_type, manifest::OCI_MANIFEST);
        }
        other => panic!("expected NotMultiArch, got {other:?}"),
    }
    // A pin on a platform digest is told apart from a good pin.
    let platform_pin = r(&format!("ns/img:v1@{}", oci.platform_digest("amd64")));
    assert_eq!(
        verify(&c, &platform_pin, &VerifyOptions::default()).expect("verify"),
        [Finding::NotIndex {
            media_type: manifest::OCI_MANIFEST.into(),
            tag_now: Some(oci.index_digest()),
        }]
    );
    let good = r(&format!("ns/img:v1@{}", oci.index_digest()));
    assert_eq!(
        verify(&c, &good, &VerifyOptions::default()).expect("verify"),
        []
    );
    assert_eq!(
        verify(
            &c,
            &good,
            &VerifyOptions {
                deep: true,
                ..Default::default()
            }
        )
        .expect("deep verify"),
        []
    );
    // Requiring a platform the index lacks.
    let s390 = vec![Platform::parse("linux/s390x").expect("platform")];
    assert!(matches!(
        resolve(&c, &r("ns/img:v1"), &s390),
        Err(ResolveError::MissingPlatforms { .. })
    ));
    let deep = VerifyOptions {
        deep: true,
        required: s390,
    };
    assert!(matches!(
        verify(&c, &good, &deep).expect("verify").as_slice(),
        [Finding::MissingPlatforms { .. }]
    ));

    // 5. Unknown tag and unknown repository.
    assert!(matches!(
        resolve(&c, &r("ns/img:nope"), &req),
        Err(ResolveError::TagNotFound { .. })
    ));
    assert!(matches!(
        resolve(&c, &r("ns/none:v1"), &req),
        Err(ResolveError::TagNotFound { .. })
    ));
    reg.stop();
}

#[test]
fn accept_header_pitfall_is_real() {
    // The registry behaviour our four-type Accept protects against (docs/image.md,
    // "Commands": the Accept pitfall).
    let Some(bin) = require_registry("accept_header_pitfall_is_real") else {
        return;
    };
    let reg = Registry::start(&bin, "");
    let a = agent();
    let oci = build_image(Flavour::Oci, "p", None);
    let docker = build_image(Flavour::Docker, "p", None);
    push_image(&a, &reg.url(), "ns/img", "v1", &oci, None);
    push_image(&a, &reg.url(), "ns/dockerimg", "v1", &docker, None);
    let head = |repo: &str, accept: &str| {
        let resp = a
            .head(&format!("{}/v2/{repo}/manifests/v1", reg.url()))
            .header("Accept", accept)
            .call()
            .expect("HEAD");
        let d = resp
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        (resp.status().as_u16(), d)
    };
    // A list asked for with only the single-manifest type: the amd64 digest, silently.
    let (s, d) = head("ns/dockerimg", manifest::DOCKER_MANIFEST);
    assert_eq!(
        (s, d),
        (200, Some(docker.platform_digest("amd64").to_string()))
    );
    // An OCI index without the index type: 404.
    assert_eq!(head("ns/img", manifest::OCI_MANIFEST).0, 404);
    // With our Accept: the index / list digests.
    assert_eq!(
        head("ns/dockerimg", manifest::ACCEPT).1,
        Some(docker.index_digest().to_string())
    );
    assert_eq!(
        head("ns/img", manifest::ACCEPT).1,
        Some(oci.index_digest().to_string())
    );
    reg.stop();
}

#[test]
fn moved_tag_and_deleted_digest() {
    let Some(bin) = require_registry("moved_tag_and_deleted_digest") else {
        return;
    };
    let reg = Registry::start(&bin, "");
    let a = agent();
    let first = build_image(Flavour::Oci, "first", None);
    let second = build_image(Flavour::Oci, "second", None);
    push_image(&a, &reg.url(), "ns/img", "v1", &first, None);
    let c = client_for(&reg);
    let pinned = resolve(&c, &r("ns/img:v1"), &Platform::defaults()).expect("resolve");
    let pin = r(&format!("ns/img:v1@{}", pinned.digest));
    assert_eq!(
        verify(&c, &pin, &VerifyOptions::default()).expect("verify"),
        []
    );

    // 6. The tag moves: stale pin, the new digest reported; the old content still exists.
    push_image(&a, &reg.url(), "ns/img", "v1", &second, None);
    assert_eq!(
        verify(&c, &pin, &VerifyOptions::default()).expect("verify"),
        [Finding::TagMoved {
            now: second.index_digest()
        }]
    );

    // 7. The pinned digest is deleted: "digest missing", distinct from "moved".
    let del = a
        .delete(&format!(
            "{}/v2/ns/img/manifests/{}",
            reg.url(),
            first.index_digest()
        ))
        .call()
        .expect("DELETE");
    assert_eq!(del.status(), 202);
    assert_eq!(
        verify(&c, &pin, &VerifyOptions::default()).expect("verify"),
        [Finding::DigestMissing]
    );
    assert_eq!(
        verify(
            &c,
            &pin,
            &VerifyOptions {
                deep: true,
                ..Default::default()
            }
        )
        .expect("verify"),
        [Finding::DigestMissing]
    );
    // A deleted tag with the content still there.
    let keep = r(&format!("ns/img:gone@{}", second.index_digest()));
    assert_eq!(
        verify(&c, &keep, &VerifyOptions::default()).expect("verify"),
        [Finding::TagMissing]
    );
    reg.stop();
}

#[test]
fn one_get_per_pin() {
    let Some(bin) = require_registry("one_get_per_pin") else {
        return;
    };
    let reg = Registry::start(&bin, "");
    let a = agent();
    let img = build_image(Flavour::Oci, "k", None);
    push_blob(&a, &reg.url(), "ns/many", &img.blobs[0], None);
    push_image(&a, &reg.url(), "ns/many", "base", &img, None);
    for i in 0..20 {
        let tagged = build_image(Flavour::Oci, "k", Some(&format!("t{i}")));
        put_manifest(
            &a,
            &reg.url(),
            "ns/many",
            &format!("t{i}"),
            tagged.index_media_type,
            &tagged.index,
            None,
        );
    }
    let c = client_for(&reg);
    let refs: Vec<Reference> = (0..20).map(|i| r(&format!("ns/many:t{i}"))).collect();
    let out =
        infx_report::parallel_map(&refs, 8, |x| resolve(&c, x, &Platform::defaults()), &|_| {});
    assert!(out.iter().all(|x| x.is_ok()), "{out:?}");
    let distinct: std::collections::BTreeSet<_> = out
        .iter()
        .filter_map(|x| x.as_ref().ok())
        .map(|x| x.digest.clone())
        .collect();
    assert_eq!(distinct.len(), 20);
    // One GET per reference (verified by hashing the body); no auth probes.
    assert_eq!(c.stats().requests, 20);
    reg.stop();
}
