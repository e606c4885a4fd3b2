//! Bench (run by `bench/image.sh`): resolve + verify N references against a local
//! docker-registry with infx-image, versus `skopeo inspect --raw` run sequentially for the same
//! references. Prints medians and the ratio.
//!
//! Usage: bench_image [--refs N] [--runs R] [--skopeo-runs S] [--skopeo PATH] [--registry PATH]

#[path = "../tests/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use common::*;
use infx_image::manifest::Platform;
use infx_image::{Client, ClientConfig, Reference, resolve};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let mut refs_n = 100usize;
    let mut runs = 7usize;
    let mut skopeo_runs = 3usize;
    let mut skopeo = String::from("skopeo");
    let mut registry = String::from("docker-registry");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--refs" => refs_n = v.parse().expect("--refs N"),
            "--runs" => runs = v.parse().expect("--runs R"),
            "--skopeo-runs" => skopeo_runs = v.parse().expect("--skopeo-runs S"),
            "--skopeo" => skopeo = v,
            "--registry" => registry = v,
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    // duct runs a relative `Path` from the working directory, so look the name up in PATH.
    let registry = if registry.contains('/') {
        std::path::PathBuf::from(&registry)
    } else {
        require_tool("bench_image", &registry, "INFX_DOCKER_REGISTRY")
            .expect("docker-registry not found")
    };
    let reg = Registry::start(&registry, "");
    let a = agent();
    // 10 repositories × N/10 tags, every tag its own two-platform index.
    let base = build_image(Flavour::Oci, "bench", None);
    let mut refs = Vec::new();
    for k in 0..refs_n {
        let repo = format!("bench/img{}", k % 10);
        if k < 10 {
            push_image(&a, &reg.url(), &repo, "base", &base, None);
        }
        let tag = format!("t{k}");
        let img = build_image(Flavour::Oci, "bench", Some(&tag));
        put_manifest(
            &a,
            &reg.url(),
            &repo,
            &tag,
            img.index_media_type,
            &img.index,
            None,
        );
        refs.push((format!("{repo}:{tag}"), img.index_digest()));
    }
    println!(
        "registry: docker-registry on {} with {} references in 10 repositories",
        reg.url(),
        refs.len()
    );

    let parsed: Vec<(Reference, infx_image::Digest)> = refs
        .iter()
        .map(|(s, d)| {
            (
                Reference::parse(&format!("127.0.0.1/{s}")).expect("ref"),
                d.clone(),
            )
        })
        .collect();
    let run_infx = |jobs: usize| {
        let mut times = Vec::new();
        for _ in 0..runs {
            // A fresh client per run: cold connections, as in one `cargo xtask pin` invocation.
            let c = Client::new(ClientConfig {
                overrides: [("127.0.0.1".to_string(), reg.url())].into(),
                ..Default::default()
            });
            let t = Instant::now();
            let out = infx_report::parallel_map(
                &parsed,
                jobs,
                |(r, _)| resolve(&c, r, &Platform::defaults()),
                &|_| {},
            );
            times.push(t.elapsed());
            for ((_, want), got) in parsed.iter().zip(&out) {
                assert_eq!(
                    got.as_ref().map(|g| &g.digest).ok(),
                    Some(want),
                    "wrong digest"
                );
            }
        }
        median(times)
    };
    let par = run_infx(8);
    let seq = run_infx(1);

    let mut times = Vec::new();
    for _ in 0..skopeo_runs {
        let t = Instant::now();
        for (s, want) in &refs {
            let out = duct::cmd(
                &skopeo,
                [
                    "inspect",
                    "--raw",
                    "--tls-verify=false",
                    &format!("docker://127.0.0.1:{}/{s}", reg.port),
                ],
            )
            .stdout_capture()
            .run()
            .expect("skopeo inspect --raw");
            // Verify like we do: hash the bytes received.
            assert_eq!(
                &infx_image::Digest::sha256_of(&out.stdout),
                want,
                "skopeo bytes"
            );
        }
        times.push(t.elapsed());
    }
    let sk = median(times);
    println!(
        "infx-image resolve+verify, 8 parallel (GET tag, sha256 vs header, platforms), median of {runs}: {}",
        ms(par)
    );
    println!(
        "infx-image resolve+verify, sequential, median of {runs}: {}",
        ms(seq)
    );
    println!(
        "skopeo inspect --raw sequential ({skopeo}), + sha256, median of {skopeo_runs}: {}",
        ms(sk)
    );
    println!(
        "ratio skopeo / infx parallel:   {:.1}x",
        sk.as_secs_f64() / par.as_secs_f64()
    );
    println!(
        "ratio skopeo / infx sequential: {:.1}x",
        sk.as_secs_f64() / seq.as_secs_f64()
    );
    reg.stop();
}
