//! Loads and checks the master configs + runners.yaml of a tree (`<root>/configs/*.yaml`).
//!
//! `cargo run --release -p infx-config --example config_check -- <root> [--bench N]`
//! prints every diagnostic; with `--bench N` it repeats load+check N times in-process and
//! prints one wall time per run in milliseconds (used by bench/config.sh).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(root) = args.first().map(PathBuf::from) else {
        eprintln!("usage: config_check <root> [--bench N]");
        return ExitCode::from(2);
    };
    let runs: usize = match args.iter().position(|a| a == "--bench") {
        Some(i) => match args.get(i + 1).and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => {
                eprintln!("--bench needs a run count");
                return ExitCode::from(2);
            }
        },
        None => 0,
    };
    if runs > 0 {
        for _ in 0..runs {
            let t = Instant::now();
            let loaded = infx_config::load_tree(&root);
            let load_ms = t.elapsed().as_secs_f64() * 1000.0;
            let checked = infx_config::validate(&loaded);
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            println!(
                "{ms:.3} {} entries {} diagnostics (load {load_ms:.3} ms, check {:.3} ms)",
                checked.entries.len(),
                checked.diagnostics.len(),
                ms - load_ms
            );
        }
        return ExitCode::SUCCESS;
    }
    let loaded = infx_config::load_tree(&root);
    let checked = infx_config::validate(&loaded);
    for d in &checked.diagnostics {
        println!("{d}");
        if let Some(h) = &d.help {
            println!("    help: {h}");
        }
    }
    println!(
        "dialect {:?}: {} entries, {} typed, {} diagnostics",
        loaded.dialect,
        loaded.entries.len(),
        checked.entries.len(),
        checked.diagnostics.len()
    );
    if checked.diagnostics.iter().any(|d| d.is_error()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
