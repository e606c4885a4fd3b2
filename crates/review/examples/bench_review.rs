//! Times `load_tree` and `review_tree` over a benchmark tree: `bench_review <tree> [runs]`.
//! Prints the median of each phase in milliseconds (used by bench/review.sh).

use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next() else {
        eprintln!("usage: bench_review <tree> [runs]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(21);
    let root = std::path::PathBuf::from(root);
    let (mut load, mut check) = (Vec::new(), Vec::new());
    let mut findings = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let (inputs, _) = infx_review::load::load_tree(&root);
        load.push(t0.elapsed().as_secs_f64() * 1e3);
        let t1 = Instant::now();
        findings = infx_review::review_tree(&inputs).len();
        check.push(t1.elapsed().as_secs_f64() * 1e3);
    }
    if std::env::var_os("BENCH_PHASES").is_some() {
        let (inputs, _) = infx_review::load::load_tree(&root);
        let t = Instant::now();
        let entries = infx_review::masters::entries(&inputs.masters);
        let _ = infx_review::images::check(&entries);
        let b = infx_review::masters::bindings(&entries);
        eprintln!("masters+bindings {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let vars: Vec<_> = inputs
            .recipes
            .iter()
            .map(infx_review::recipe::variants)
            .collect();
        eprintln!(
            "variants {:.2} ms ({} total)",
            t.elapsed().as_secs_f64() * 1e3,
            vars.iter().map(Vec::len).sum::<usize>()
        );
        let t = Instant::now();
        for (d, v) in inputs.recipes.iter().zip(&vars) {
            let _ = infx_review::recipe::check_variants(&d.path, v);
        }
        eprintln!("recipe checks {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for d in &inputs.recipes {
            let _ = infx_review::review_recipe(
                d,
                b.get(&d.path.to_string_lossy().to_string()),
                &inputs.golden,
                inputs.golden_mode,
            );
        }
        eprintln!(
            "review_recipe total {:.2} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    println!(
        "runs={runs} findings={findings} load_median_ms={:.2} checks_median_ms={:.2}",
        median(load),
        median(check)
    );
}
