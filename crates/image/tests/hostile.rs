//! Hostile and broken registries, played by a hand-rolled HTTP server on 127.0.0.1.

mod common;

use common::*;
use infx_image::manifest::{self, Platform};
use infx_image::{
    Client, ClientConfig, Credential, Digest, Reference, RegistryError, ResolveError, resolve,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn client(url: &str, tweak: impl FnOnce(&mut ClientConfig)) -> Client {
    let mut cfg = ClientConfig {
        overrides: [("127.0.0.1".to_string(), url.to_string())].into(),
        backoff: Duration::from_millis(5),
        ..Default::default()
    };
    tweak(&mut cfg);
    Client::new(cfg)
}

fn r(s: &str) -> Reference {
    Reference::parse(&format!("127.0.0.1/{s}")).expect("reference")
}

/// Serves `body` as an OCI index for tag `v1` and its digest, with `header_digest` announced.
fn serve_index(body: Vec<u8>, header_digest: Digest) -> impl Fn(&Req) -> Resp + Send + Sync {
    move |req| {
        if req.path.ends_with("/manifests/v1") || req.path.contains("/manifests/sha256:") {
            Resp::new(200)
                .header("Content-Type", manifest::OCI_INDEX)
                .header("Docker-Content-Digest", &header_digest.to_string())
                .body(body.clone())
        } else {
            Resp::new(404)
        }
    }
}

#[test]
fn digest_mismatch_is_a_hard_error() {
    let img = build_image(Flavour::Oci, "x", None);
    let wrong = Digest::sha256_of(b"something else");
    let srv = FakeServer::start(serve_index(img.index.clone(), wrong.clone()));
    let c = client(&srv.url(), |_| {});
    match resolve(&c, &r("ns/img:v1"), &Platform::defaults()) {
        Err(ResolveError::Registry(RegistryError::DigestMismatch {
            expected, actual, ..
        })) => {
            assert_eq!(expected, wrong);
            assert_eq!(actual, img.index_digest());
        }
        other => panic!("expected DigestMismatch, got {other:?}"),
    }
    // Header honest, body tampered: GET by digest hashes the bytes, never trusts the header.
    let tampered = FakeServer::start(serve_index(
        b"{\"manifests\":[]}".to_vec(),
        img.index_digest(),
    ));
    let c = client(&tampered.url(), |_| {});
    assert!(matches!(
        c.get_manifest(&r("ns/img"), &img.index_digest().to_string()),
        Err(RegistryError::DigestMismatch { .. })
    ));
}

#[test]
fn media_type_mismatch_and_single_platform() {
    let img = build_image(Flavour::Oci, "x", None);
    let d = img.index_digest();
    let body = img.index.clone();
    let srv = FakeServer::start(move |_req| {
        Resp::new(200)
            .header("Content-Type", manifest::DOCKER_LIST)
            .header("Docker-Content-Digest", &d.to_string())
            .body(body.clone())
    });
    let c = client(&srv.url(), |_| {});
    let e = c
        .get_manifest(&r("ns/img"), "v1")
        .expect_err("mediaType differs from Content-Type");
    assert!(
        e.to_string()
            .contains("differs from the manifest's mediaType"),
        "{e}"
    );

    let plat = img.platforms[0].manifest.clone();
    let pd = Digest::sha256_of(&plat);
    let single = FakeServer::start(move |_req| {
        Resp::new(200)
            .header("Content-Type", manifest::OCI_MANIFEST)
            .header("Docker-Content-Digest", &pd.to_string())
            .body(plat.clone())
    });
    let c = client(&single.url(), |_| {});
    assert!(matches!(
        resolve(&c, &r("ns/img:v1"), &Platform::defaults()),
        Err(ResolveError::NotMultiArch { .. })
    ));
    // One request: the GET of the tag.
    assert_eq!(single.requests().len(), 1);
}

#[test]
fn oversize_bodies_are_refused() {
    let big = vec![b' '; 5 << 20];
    let d = Digest::sha256_of(&big);
    let announced = {
        let big = big.clone();
        FakeServer::start(move |_req| {
            Resp::new(200)
                .header("Content-Type", manifest::OCI_INDEX)
                .header("Docker-Content-Digest", &d.to_string())
                .body(big.clone())
        })
    };
    let c = client(&announced.url(), |_| {});
    assert!(
        matches!(c.get_manifest(&r("ns/img"), "v1"), Err(RegistryError::TooLarge { limit, .. }) if limit == 4 << 20)
    );
    // Without Content-Length the read itself stops at the limit.
    let streamed = FakeServer::start(move |_req| {
        Resp::new(200)
            .header("Content-Type", manifest::OCI_INDEX)
            .body(big.clone())
            .no_length()
    });
    let c = client(&streamed.url(), |cfg| cfg.max_manifest_bytes = 1 << 20);
    assert!(matches!(
        c.get_manifest(&r("ns/img"), "v1"),
        Err(RegistryError::TooLarge { .. })
    ));
}

#[test]
fn rate_limit_then_success_and_5xx_retries() {
    let img = build_image(Flavour::Oci, "x", None);
    let d = img.index_digest();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let body = img.index.clone();
    let srv = FakeServer::start(move |_req| match h.fetch_add(1, Ordering::SeqCst) {
        0 => Resp::new(429)
            .header("Retry-After", "0")
            .header("ratelimit-remaining", "0;w=21600"),
        1 => Resp::new(503),
        _ => Resp::new(200)
            .header("Content-Type", manifest::OCI_INDEX)
            .header("Docker-Content-Digest", &d.to_string())
            .body(body.clone()),
    });
    let c = client(&srv.url(), |_| {});
    let got = c
        .get_manifest(&r("ns/img"), "v1")
        .expect("success after 429 and 503")
        .expect("found");
    assert_eq!(got.digest, img.index_digest());
    assert_eq!(hits.load(Ordering::SeqCst), 3);

    // A Retry-After beyond the cap fails at once and says why.
    let slow = FakeServer::start(|_req| {
        Resp::new(429)
            .header("Retry-After", "3600")
            .header("ratelimit-limit", "100;w=21600")
            .header("ratelimit-remaining", "0;w=21600")
    });
    let c = client(&slow.url(), |_| {});
    let start = Instant::now();
    match c.head_manifest(&r("ns/img"), "v1") {
        Err(RegistryError::RateLimited { detail, .. }) => {
            assert!(
                detail.contains("Retry-After 3600s")
                    && detail.contains("ratelimit-remaining: 0;w=21600"),
                "{detail}"
            )
        }
        other => panic!("expected RateLimited, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(slow.requests().len(), 1);

    // Retries are bounded.
    let down = FakeServer::start(|_req| Resp::new(502));
    let c = client(&down.url(), |cfg| cfg.retries = 2);
    assert!(matches!(
        c.head_manifest(&r("ns/img"), "v1"),
        Err(RegistryError::Http { status: 502, .. })
    ));
    assert_eq!(down.requests().len(), 3);
}

#[test]
fn slow_server_times_out() {
    let srv = FakeServer::start(|_req| Resp::new(200).delay(Duration::from_secs(3)));
    let c = client(&srv.url(), |cfg| {
        cfg.timeout = Duration::from_millis(300);
        cfg.retries = 1;
    });
    let start = Instant::now();
    let e = c.head_manifest(&r("ns/img"), "v1").expect_err("timeout");
    assert!(matches!(e, RegistryError::Timeout { .. }), "{e:?}");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn redirect_to_another_host_carries_no_credentials() {
    let img = build_image(Flavour::Oci, "x", None);
    let d = img.index_digest();
    let body = img.index.clone();
    // Host B serves the content (like a blob store behind a registry).
    let b = FakeServer::start(move |_req| {
        Resp::new(200)
            .header("Content-Type", manifest::OCI_INDEX)
            .header("Docker-Content-Digest", &d.to_string())
            .body(body.clone())
    });
    let b_url = format!("http://localhost:{}", b.port);
    // Host A wants a token, then redirects every manifest request to B.
    let a = Arc::new(std::sync::Mutex::new(String::new()));
    let a_url = a.clone();
    let srv_a = FakeServer::start(move |req| {
        let me = a_url.lock().map(|s| s.clone()).unwrap_or_default();
        if req.path.starts_with("/token") {
            return Resp::new(200).body(r#"{"token":"sekrit-token","expires_in":300}"#);
        }
        match req.header("authorization") {
            Some("Bearer sekrit-token") => {
                Resp::new(307).header("Location", &format!("{b_url}{}", req.path))
            }
            _ => Resp::new(401).header(
                "WWW-Authenticate",
                &format!(r#"Bearer realm="{me}/token",service="a""#),
            ),
        }
    });
    if let Ok(mut s) = a.lock() {
        *s = srv_a.url();
    }
    let c = client(&srv_a.url(), |cfg| {
        cfg.credentials = [(
            "127.0.0.1".to_string(),
            Credential::from_user_password("u", "p"),
        )]
        .into();
    });
    let got =
        resolve(&c, &r("ns/img:v1"), &Platform::defaults()).expect("resolve through redirect");
    assert_eq!(got.digest, img.index_digest());
    let at_b = b.requests();
    assert!(!at_b.is_empty());
    assert!(
        at_b.iter().all(|q| q.header("authorization").is_none()),
        "credentials leaked to another host: {at_b:?}"
    );
    // The token request (same origin as A) did get the Basic credentials.
    assert!(
        srv_a.requests().iter().any(
            |q| q.path.starts_with("/token") && q.header("authorization") == Some("Basic dTpw")
        )
    );
}

#[test]
fn unauthorized_without_challenge_and_hermetic() {
    let srv = FakeServer::start(|_req| Resp::new(401));
    let c = client(&srv.url(), |_| {});
    assert!(matches!(
        c.head_manifest(&r("ns/img"), "v1"),
        Err(RegistryError::Unauthorized { .. })
    ));
    let h = client(&srv.url(), |cfg| cfg.hermetic = true);
    assert!(matches!(
        h.head_manifest(&r("ns/img"), "v1"),
        Err(RegistryError::Hermetic { .. })
    ));
    assert_eq!(srv.requests().len(), 1, "the hermetic client sent nothing");
}

#[test]
fn redirect_to_a_file_url_is_reported_as_such() {
    let srv = FakeServer::start(|_req| Resp::new(302).header("Location", "file:///etc/passwd"));
    let c = client(&srv.url(), |_| {});
    match resolve(&c, &r("ns/img:v1"), &Platform::defaults()) {
        Err(ResolveError::Registry(RegistryError::Protocol { detail, .. })) => {
            assert!(detail.contains("`file:` URL"), "{detail}");
        }
        other => panic!("expected a refused redirect, got {other:?}"),
    }
    // Refused before any request to the redirect's target: one exchange, no retry.
    assert_eq!(srv.requests().len(), 1);
}

#[test]
fn slow_loris_is_bounded_by_the_retry_deadline() {
    // Every attempt times out; without the deadline 9 retries × 300 ms would take ~3 s.
    let srv = FakeServer::start(|_req| Resp::new(200).delay(Duration::from_secs(3)));
    let c = client(&srv.url(), |cfg| {
        cfg.timeout = Duration::from_millis(300);
        cfg.retries = 9;
        cfg.retry_deadline = Duration::from_millis(700);
    });
    let start = Instant::now();
    let e = c.head_manifest(&r("ns/img"), "v1").expect_err("timeout");
    let took = start.elapsed();
    assert!(matches!(e, RegistryError::Timeout { .. }), "{e:?}");
    // At most deadline + one attempt (+ scheduling slack on a loaded machine).
    assert!(took < Duration::from_millis(1600), "{took:?}");
    let attempts = srv.requests().len();
    assert!((2..=4).contains(&attempts), "{attempts} attempts");
}
