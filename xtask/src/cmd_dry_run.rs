//! `cargo xtask dry-run FILE[:SELECTOR]…` (owner: recipe): expand srt-slurm recipe variants like
//! `srtctl dry-run`, validate each (schema 1 or 2), and print their launch commands.

use crate::output::{self, Format};
use infx_recipe::{
    Lane, RecipeFile, RecipeKind, RecipeRef, VariantReport, bind_model, check_fragment,
    compose_lane, dry_run, load_recipe, load_recipe_file,
};
use infx_report::{Diagnostic, SourceMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DryFormat {
    /// Diagnostics (rustc-like) and one block of launch commands per variant.
    #[default]
    Text,
    /// One JSON document: every variant with its diagnostics and rendered commands.
    Json,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneArg {
    FixedSequenceSingle,
    FixedSequenceMulti,
    AgenticSingle,
    AgenticMulti,
}

impl From<LaneArg> for Lane {
    fn from(l: LaneArg) -> Lane {
        match l {
            LaneArg::FixedSequenceSingle => Lane::FixedSeqSingle,
            LaneArg::FixedSequenceMulti => Lane::FixedSeqMulti,
            LaneArg::AgenticSingle => Lane::AgenticSingle,
            LaneArg::AgenticMulti => Lane::AgenticMulti,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Recipe file(s), each optionally with a selector (`file.yaml:override_x`,
    /// `file.yaml:zip_override_g[2]`, `file.yaml:base`, `file.yaml:'*mtp*'`). Without a
    /// selector every variant of a bundle (base excluded, as srtctl does).
    #[arg(required = true)]
    pub target: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DryFormat::Text)]
    pub format: DryFormat,
    /// Treat the file as an InferenceX fragment of this lane: check the fragment rules and merge
    /// the lane's shared block (`configs/srt-recipes/<lane>.yaml` of --tree) under its base.
    #[arg(long, value_enum)]
    pub lane: Option<LaneArg>,
    /// The benchmark tree holding `configs/srt-recipes/`. Default: `inferencex-e2e/` of the git
    /// work tree enclosing the current directory, or that work tree itself when it has none.
    #[arg(long, default_value_os_t = crate::paths::default_tree(), hide_default_value = true)]
    pub tree: PathBuf,
    /// Bind a model into every variant like the launcher does (`model.path: hf:<MODEL>`).
    #[arg(long, requires_all = ["image", "precision"])]
    pub model: Option<String>,
    /// Image to bind (`model.container`), with --model.
    #[arg(long)]
    pub image: Option<String>,
    /// Precision to bind (`model.precision`), with --model.
    #[arg(long)]
    pub precision: Option<String>,
    /// Validate only: print diagnostics and the summary, not the launch commands.
    #[arg(long)]
    pub quiet: bool,
    /// Also print each resolved variant: the recipe srtctl would submit after the selector,
    /// the merge and its YAML round trip (JSON: a `resolved` object per variant).
    #[arg(long)]
    pub resolved: bool,
}

struct FileRun {
    target: String,
    error: Option<Diagnostic>,
    findings: Vec<Diagnostic>,
    variants: Vec<VariantReport>,
    sources: Vec<(PathBuf, String)>,
}

fn run_one(args: &Args, target: &str) -> FileRun {
    let mut out = FileRun {
        target: target.to_string(),
        error: None,
        findings: vec![],
        variants: vec![],
        sources: vec![],
    };
    let reference = match RecipeRef::parse_srtctl(target) {
        Ok(r) => r,
        Err(mut d) => {
            // Point at the file the selector was meant for (the text before the last ':').
            if d.path.is_none()
                && let Some((file, _)) = target.rsplit_once(':')
                && !file.is_empty()
            {
                d = d.at(
                    file,
                    infx_report::Span::point(infx_report::Pos {
                        offset: 0,
                        line: 1,
                        col: 1,
                    }),
                );
            }
            out.error = Some(d);
            return out;
        }
    };
    let file = match load_recipe_file(Path::new(&reference.path)) {
        Ok(f) => f,
        Err(d) => {
            out.error = Some(d);
            return out;
        }
    };
    let file: RecipeFile = match args.lane {
        None => file,
        Some(l) => {
            let lane = Lane::from(l);
            out.findings.extend(check_fragment(&file, lane));
            match load_recipe(&args.tree, lane.block_path()) {
                Ok(block) => compose_lane(&file, lane, &block),
                Err(mut d) => {
                    d.path = Some(args.tree.join(lane.block_path()));
                    out.error = Some(d);
                    return out;
                }
            }
        }
    };
    for s in file.sources.iter() {
        out.sources.push((s.path.clone(), s.text.to_string()));
    }
    if reference.selector.is_some() && file.kind() != RecipeKind::Bundle {
        let sel = reference
            .selector
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default();
        out.findings.push(
            Diagnostic::warning(
                "recipe/selector-ignored",
                format!("Selector ':{sel}' ignored — config is not an override file"),
            )
            .at(file.path(), file.root.span)
            .with_help("drop the selector; a plain recipe has exactly one variant"),
        );
    }
    let selector = if file.kind() == RecipeKind::Bundle {
        reference.selector.as_ref()
    } else {
        None
    };
    match dry_run(&file, selector) {
        Ok(mut vs) => {
            if let (Some(m), Some(i), Some(p)) = (&args.model, &args.image, &args.precision) {
                for r in &mut vs {
                    bind_model(&mut r.variant, m, i, p);
                    r.diagnostics = infx_recipe::validate(&r.variant);
                    r.rendered = infx_recipe::render(&r.variant);
                }
            }
            out.variants = vs;
        }
        Err(d) => out.error = Some(d),
    }
    out
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let runs: Vec<FileRun> = args.target.iter().map(|t| run_one(&args, t)).collect();
    let mut sources = SourceMap::new();
    for r in &runs {
        for (p, t) in &r.sources {
            sources.insert(p, t.clone());
        }
    }
    let mut failed = false;
    let mut n_variants = 0;
    let mut n_bad = 0;
    let mut json_out = Vec::new();
    for r in &runs {
        let mut file_diags: Vec<Diagnostic> = r.findings.clone();
        if let Some(e) = &r.error {
            file_diags.push(e.clone());
        }
        failed |= file_diags.iter().any(Diagnostic::is_error);
        if args.format == DryFormat::Text && !file_diags.is_empty() {
            print!("{}", output::render(&file_diags, &sources, Format::Human));
        }
        let total = r.variants.len();
        let mut jv = Vec::new();
        for (i, v) in r.variants.iter().enumerate() {
            n_variants += 1;
            let bad = v.diagnostics.iter().any(Diagnostic::is_error);
            n_bad += bad as usize;
            failed |= bad;
            match args.format {
                DryFormat::Text => {
                    let label = if v.variant.label.is_empty() { "recipe".to_string() } else { v.variant.label.clone() };
                    let name = v.variant.name.clone().unwrap_or_else(|| "<no name>".into());
                    let head = format!("[{}/{total}] {label}: {name}{}", i + 1, if bad { "  (invalid)" } else { "" });
                    // Names and rendered values come from the recipe: no forged lines.
                    println!("{}", crate::hygiene::escape_line(&head));
                    if !v.diagnostics.is_empty() {
                        print!("{}", output::render(&v.diagnostics, &sources, Format::Human));
                    }
                    if args.resolved {
                        println!("--- resolved");
                        print!("{}", infx_recipe::emit::to_yaml(&v.variant.tree));
                        println!("---");
                    }
                    if !args.quiet {
                        print!("{}", crate::hygiene::escape_lines(&v.rendered.to_text()));
                    }
                }
                DryFormat::Json => jv.push(serde_json::json!({
                    "label": v.variant.label,
                    "selector": v.variant.selector_text(),
                    "name": v.variant.name,
                    "ok": !bad,
                    "diagnostics": v.diagnostics,
                    "rendered": if args.quiet { serde_json::Value::Null } else { v.rendered.to_json() },
                    "resolved": if args.resolved { resolved_json(&v.variant.tree) } else { serde_json::Value::Null },
                })),
            }
        }
        if args.format == DryFormat::Json {
            json_out.push(serde_json::json!({
                "target": r.target,
                "diagnostics": file_diags,
                "variants": jv,
            }));
        }
    }
    match args.format {
        DryFormat::Json => println!("{}", serde_json::to_string_pretty(&json_out)?),
        DryFormat::Text => {
            let files_bad = runs.iter().filter(|r| r.error.is_some()).count();
            println!(
                "dry-run: {} file(s), {n_variants} variant(s), {n_bad} invalid{}",
                runs.len(),
                if files_bad > 0 {
                    format!(", {files_bad} file(s) failed to expand")
                } else {
                    String::new()
                }
            );
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The resolved tree as JSON for `--format json --resolved` (dates stay their text).
fn resolved_json(n: &infx_yaml::Node) -> serde_json::Value {
    use infx_yaml::Value;
    use serde_json::Value as J;
    match &n.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(f.value)
            .map(J::Number)
            .unwrap_or_else(|| J::String(f.text.clone())),
        Value::Str(s) | Value::Timestamp(s) => J::String(s.clone()),
        Value::Seq(items) => J::Array(items.iter().map(resolved_json).collect()),
        Value::Map(m) => J::Object(
            m.iter_nodes()
                .map(|(k, v)| (infx_recipe::pystr::py_str(k), resolved_json(v)))
                .collect(),
        ),
    }
}
