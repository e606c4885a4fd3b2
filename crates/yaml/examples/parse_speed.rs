//! Parses every YAML file under the given directories and prints the time and throughput
//! (release build): `cargo run --release -p infx-yaml --example parse_speed -- DIR…`.
//! The loader runs under the allocator of the xtask binaries, mimalloc, as validate runs it
//! (docs/performance.md, "The allocator: mimalloc").

use std::path::{Path, PathBuf};
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut files = Vec::new();
    for d in std::env::args().skip(1) {
        files.extend(infx_yaml::yaml_files(Path::new(&d)).unwrap_or_default());
    }
    let texts: Vec<(PathBuf, String)> = files
        .iter()
        .filter_map(|f| Some((f.clone(), std::fs::read_to_string(f).ok()?)))
        .collect();
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let mut ok = 0;
        for (p, text) in &texts {
            if infx_yaml::parse_str(p, text).is_ok() {
                ok += 1;
            }
        }
        times.push(t.elapsed().as_secs_f64());
        std::hint::black_box(ok);
    }
    if std::env::var_os("EVENTS_ONLY").is_some() {
        times.clear();
        for _ in 0..5 {
            let t = Instant::now();
            let mut n = 0usize;
            for (_, text) in &texts {
                let mut parser = saphyr_parser::Parser::new_from_str(text);
                while let Some(Ok(_)) = parser.next_event() {
                    n += 1;
                }
            }
            times.push(t.elapsed().as_secs_f64());
            std::hint::black_box(n);
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{} files, {:.1} MB: median {:.1} ms ({:.1} MB/s)",
        texts.len(),
        bytes as f64 / 1e6,
        median * 1e3,
        bytes as f64 / 1e6 / median
    );
}
