//! The bearer-token flow against a token-auth registry (Docker token-authentication spec).

mod common;

use common::*;
use infx_image::manifest::Platform;
use infx_image::{
    Client, ClientConfig, Credential, Reference, RegistryError, ResolveError, resolve,
};

fn r(s: &str) -> Reference {
    Reference::parse(&format!("127.0.0.1/{s}")).expect("reference")
}

#[test]
fn token_flow_anonymous_credentials_and_scope() {
    let Some(bin) = require_registry("token_flow_anonymous_credentials_and_scope") else {
        return;
    };
    let Some(openssl) = require_tool(
        "token_flow_anonymous_credentials_and_scope",
        "openssl",
        "INFX_OPENSSL",
    ) else {
        return;
    };
    let tokens = TokenService::start(&openssl, Some("ns/secret"));
    let reg = Registry::start(&bin, &tokens.registry_auth_config());
    let a = agent();

    // /v2/ asks for a token.
    let v2 = a
        .get(&format!("{}/v2/", reg.url()))
        .call()
        .expect("GET /v2/");
    assert_eq!(v2.status(), 401);
    let challenge = v2
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    assert!(challenge.starts_with("Bearer realm="), "{challenge}");

    // Push with a credentialed push token.
    let img = build_image(Flavour::Oci, "tok", None);
    let push = tokens.push_token("ns/img");
    push_image(&a, &reg.url(), "ns/img", "v1", &img, Some(&push));
    let before = tokens.token_requests();

    // Anonymous: 401 → token → retry; the token is reused for the second reference.
    let c = Client::new(ClientConfig {
        overrides: [("127.0.0.1".to_string(), reg.url())].into(),
        ..Default::default()
    });
    let got = resolve(&c, &r("ns/img:v1"), &Platform::defaults()).expect("anonymous resolve");
    assert_eq!(got.digest, img.index_digest());
    let again = resolve(&c, &r("ns/img:v1"), &Platform::defaults()).expect("second resolve");
    assert_eq!(again.digest, img.index_digest());
    assert_eq!(
        c.stats().token_requests,
        1,
        "one token per repository per run"
    );
    assert_eq!(tokens.token_requests() - before, 1);
    // Challenged GET, token GET, GET; then one GET with the cached token.
    assert_eq!(c.stats().requests, 4);
    let anon = tokens
        .server
        .requests()
        .last()
        .cloned()
        .expect("token request");
    assert!(
        anon.header("authorization").is_none(),
        "anonymous token request carries no credentials"
    );

    // Threads hitting the challenge together still fetch one token.
    for i in 0..8 {
        let tagged = build_image(Flavour::Oci, "tok", Some(&format!("p{i}")));
        put_manifest(
            &a,
            &reg.url(),
            "ns/img",
            &format!("p{i}"),
            tagged.index_media_type,
            &tagged.index,
            Some(&push),
        );
    }
    let par = Client::new(ClientConfig {
        overrides: [("127.0.0.1".to_string(), reg.url())].into(),
        ..Default::default()
    });
    let refs: Vec<Reference> = (0..8).map(|i| r(&format!("ns/img:p{i}"))).collect();
    let out = infx_report::parallel_map(
        &refs,
        8,
        |x| resolve(&par, x, &Platform::defaults()),
        &|_| {},
    );
    assert!(out.iter().all(|x| x.is_ok()), "{out:?}");
    assert_eq!(par.stats().token_requests, 1);

    // With credentials: they go to the token service as Basic, never elsewhere.
    let creds = Client::new(ClientConfig {
        overrides: [("127.0.0.1".to_string(), reg.url())].into(),
        credentials: [(
            "127.0.0.1".to_string(),
            Credential::from_user_password("tester", "pw"),
        )]
        .into(),
        ..Default::default()
    });
    resolve(&creds, &r("ns/img:v1"), &Platform::defaults()).expect("credentialed resolve");
    let last = tokens
        .server
        .requests()
        .last()
        .cloned()
        .expect("token request");
    assert_eq!(last.header("authorization"), Some("Basic dGVzdGVyOnB3"));

    // A token granting nothing for the repository: insufficient_scope, reported once, no loop.
    let denied = Client::new(ClientConfig {
        overrides: [("127.0.0.1".to_string(), reg.url())].into(),
        ..Default::default()
    });
    match resolve(&denied, &r("ns/secret:v1"), &Platform::defaults()) {
        Err(ResolveError::Registry(RegistryError::Unauthorized { detail, .. })) => {
            assert_eq!(detail, "insufficient_scope")
        }
        other => panic!("expected Unauthorized, got {other:?}"),
    }
    assert_eq!(denied.stats().token_requests, 1);

    // Unknown repository with a granting token service: 404, i.e. tag not found.
    assert!(matches!(
        resolve(&c, &r("ns/other:v1"), &Platform::defaults()),
        Err(ResolveError::TagNotFound { .. })
    ));
    reg.stop();
    drop(tokens);
}
