//! `cargo xtask matrix full-sweep|test-config …`: upstream's generator options, the same JSON
//! rows on stdout, the same errors (exit 2 for usage errors, 1 for generation errors).

use infx_matrix::{
    EvalMode, FullSweep, MasterConfigs, Options, Runners, ScenarioType, Selection, SeqLen,
    TestConfig,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Subcommand, Debug)]
pub enum MatrixCommand {
    /// Every config (filters as upstream's full-sweep).
    // The command line is read as argparse reads upstream's: a repeated option replaces the
    // earlier one and an unambiguous prefix names its option (docs/matrix.md, "Commands").
    #[command(infer_long_args = true, args_override_self = true)]
    FullSweep(Box<FullSweepArgs>),
    /// Selected config keys (as upstream's test-config).
    #[command(infer_long_args = true, args_override_self = true)]
    TestConfig(Box<TestConfigArgs>),
}

/// `cargo xtask matrix …` as [`crate::cli::Cli`] parses it, without the other subcommands:
/// the conformance harness and the tests read upstream's argument lines with it, and this
/// module does not import `cli`, which imports it (docs/architecture.md, "Module graph").
/// `cli`'s tests check that both parse alike.
#[derive(clap::Parser, Debug)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct MatrixLine {
    #[command(subcommand)]
    command: MatrixOnly,
}

#[derive(clap::Subcommand, Debug)]
enum MatrixOnly {
    /// Generate the sweep matrix exactly as InferenceX's generator does.
    #[command(subcommand)]
    Matrix(crate::lazy::Lazy<MatrixCommand>),
}

/// Parses `argv` (program name and `matrix` first) as `cargo xtask` parses it.
pub fn parse_line<I, T>(argv: I) -> Result<MatrixCommand, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let line = <MatrixLine as clap::Parser>::try_parse_from(argv)?;
    let MatrixOnly::Matrix(crate::lazy::Lazy(m)) = line.command;
    Ok(m)
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// One JSON array, byte-identical to upstream's `json.dumps` output.
    #[default]
    Json,
    /// `$GITHUB_OUTPUT` lines: `rows`, `chunk_count`, `chunk_<i>={"include": [...]}` (≤ 256 jobs each).
    Github,
}

#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// One or more master configs (YAML), walked in this order. Default: the tree's
    /// `configs/nvidia-master.yaml` and `configs/amd-master.yaml` (those present), as validate
    /// reads them.
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set)]
    pub config_files: Vec<PathBuf>,
    /// Runner inventory (default: the tree's `configs/runners.yaml`).
    #[arg(long, default_value = DEFAULT_RUNNERS)]
    pub runner_config: PathBuf,
    /// Throughput rows only (no eval marking).
    #[arg(long, conflicts_with = "evals_only")]
    pub no_evals: bool,
    /// Only the eval picks, as eval-only rows.
    #[arg(long)]
    pub evals_only: bool,
    /// Expand eval selection to every eligible row (eval-only rows).
    #[arg(long)]
    pub all_evals: bool,
    /// Expand runner labels into their concrete runners containing this substring.
    #[arg(long)]
    pub runner_node_filter: Option<String>,
    /// Scenario type(s) to include (default: all).
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set, value_parser = ScenarioType::NAMES)]
    pub scenario_type: Option<Vec<String>>,
    /// The benchmark tree; relative paths are resolved against it (messages keep the paths as
    /// given). Default: the tree validate finds (`inferencex-e2e/` of the enclosing git work
    /// tree, else the work tree), and relative paths name files from the current directory,
    /// falling back to that tree.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
    /// Also bind every generated point to exactly one srt-recipe variant of the tree at
    /// `--root` and print each point's recipe and variant on stderr (as validate's report);
    /// binding errors fail the run and print no matrix.
    #[arg(long)]
    pub bind: bool,
    /// Jobs per chunk for `--format github` (at most 256).
    #[arg(long, default_value_t = infx_matrix::MAX_JOBS_PER_MATRIX)]
    pub chunk_size: usize,
}

/// Tree-relative default of `--runner-config`.
const DEFAULT_RUNNERS: &str = infx_config::layout::RUNNERS;

/// Tree-relative master configs, in the order validate reads them.
const MASTER_CONFIGS: [&str; 2] = infx_config::layout::MASTER_CONFIGS;

impl CommonArgs {
    /// The benchmark tree: `--root`, else the one validate finds from the current directory.
    pub fn tree(&self) -> PathBuf {
        self.root.clone().unwrap_or_else(crate::paths::default_tree)
    }

    /// Fills in the default master configs and, without `--root`, re-bases paths given
    /// relative to the current directory onto the tree (docs/matrix.md, "Commands").
    fn resolve_paths(&mut self, tree: &Path) {
        if self.root.is_none() {
            let cwd = std::env::current_dir().unwrap_or_default();
            for p in self
                .config_files
                .iter_mut()
                .chain([&mut self.runner_config])
            {
                *p = from_cwd(p, &cwd, tree);
            }
        }
        if self.config_files.is_empty() {
            self.config_files = MASTER_CONFIGS
                .iter()
                .map(PathBuf::from)
                .filter(|p| tree.join(p).is_file())
                .collect();
        }
    }
}

/// `p` as given on the command line, expressed for a run based at `tree`: a relative path that
/// names a file from `cwd` becomes tree-relative (absolute when outside the tree); any other
/// path is left for the tree to resolve.
fn from_cwd(p: &Path, cwd: &Path, tree: &Path) -> PathBuf {
    let here = cwd.join(p);
    if p.is_absolute() || !here.is_file() {
        return p.to_path_buf();
    }
    let canonical = |x: &Path| std::fs::canonicalize(x).unwrap_or_else(|_| x.to_path_buf());
    let (here, tree) = (canonical(&here), canonical(tree));
    match here.strip_prefix(&tree) {
        Ok(rel) => rel.to_path_buf(),
        Err(_) => here,
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct FullSweepArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Keep configs whose key starts with any of these.
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set)]
    pub model_prefix: Option<Vec<String>>,
    /// Keep configs with any of these precisions (`fp4`, `fp8`, …).
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set)]
    pub precision: Option<Vec<String>>,
    /// Keep configs with any of these frameworks (`sglang`, `vllm`, `trt`, …).
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set)]
    pub framework: Option<Vec<String>>,
    /// Runner labels (keys of runners.yaml `labels`).
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set)]
    pub runner_type: Option<Vec<String>>,
    /// Keep fixed-sequence rows of these sequence lengths (default: all).
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set, value_parser = ["1k1k", "8k1k"])]
    pub seq_lens: Option<Vec<String>>,
    /// Concurrency step (must be > 1).
    #[arg(long, default_value_t = 2, allow_negative_numbers = true)]
    pub step_size: i64,
    /// Lowest concurrency kept (a row left with none is dropped).
    #[arg(long, allow_negative_numbers = true)]
    pub min_conc: Option<i64>,
    /// Highest concurrency kept (a row with none at or below it gets one at this value).
    #[arg(long, allow_negative_numbers = true)]
    pub max_conc: Option<i64>,
    /// Skip single-node rows with a larger tp.
    #[arg(long, allow_negative_numbers = true)]
    pub max_tp: Option<i64>,
    /// Clamp single-node ep to this.
    #[arg(long, allow_negative_numbers = true)]
    pub max_ep: Option<i64>,
    /// Only single-node configs (neither flag: both kinds).
    #[arg(long)]
    pub single_node: bool,
    /// Only multinode configs (neither flag: both kinds).
    #[arg(long)]
    pub multi_node: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct TestConfigArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Exact keys or shell globs (`*`, `?`, `[..]`).
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set, required = true)]
    pub config_keys: Vec<String>,
    /// Keep only these concurrencies.
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set, allow_negative_numbers = true)]
    pub conc: Option<Vec<i64>>,
    /// Keep fixed-sequence rows of these sequence lengths (default: all).
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set, value_parser = ["1k1k", "8k1k"])]
    pub seq_lens: Option<Vec<String>>,
    /// [Oct] Keep only these exact exp-names; each must match exactly one row.
    #[arg(long, num_args = 1.., action = clap::ArgAction::Set)]
    pub exp_names: Option<Vec<String>>,
}

/// A failed run: the exit code (2 usage, 1 generation) and the message.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
    pub diagnostic: Option<infx_report::Diagnostic>,
    /// Binding findings (errors and warnings) when `--bind` failed.
    pub findings: Vec<infx_report::Diagnostic>,
}

impl Failure {
    fn usage(msg: &str) -> Failure {
        Failure {
            code: 2,
            message: msg.to_string(),
            diagnostic: None,
            findings: Vec::new(),
        }
    }
    fn from_diag(d: infx_report::Diagnostic) -> Failure {
        Failure {
            code: 1,
            message: d.message.clone(),
            diagnostic: Some(d),
            findings: Vec::new(),
        }
    }
}

fn seq_lens(v: &Option<Vec<String>>) -> Option<Vec<SeqLen>> {
    v.as_ref()
        .map(|l| l.iter().filter_map(|s| SeqLen::parse(s)).collect())
}

/// Translates the arguments into generator options, with upstream's usage checks in its order.
pub fn options(cmd: &MatrixCommand) -> Result<(Options, &CommonArgs), Failure> {
    let (common, selection) = match cmd {
        MatrixCommand::FullSweep(a) => {
            if a.step_size <= 1 {
                return Err(Failure::usage("--step-size must be greater than 1"));
            }
            if let (Some(lo), Some(hi)) = (a.min_conc, a.max_conc)
                && lo > hi
            {
                return Err(Failure::usage(
                    "--min-conc must be less than or equal to --max-conc",
                ));
            }
            let (single, multi) = if !a.single_node && !a.multi_node {
                (true, true)
            } else {
                (a.single_node, a.multi_node)
            };
            (
                &a.common,
                Selection::FullSweep(FullSweep {
                    model_prefix: a.model_prefix.clone(),
                    precision: a.precision.clone(),
                    framework: a.framework.clone(),
                    runner_type: a.runner_type.clone(),
                    seq_lens: seq_lens(&a.seq_lens),
                    step_size: a.step_size,
                    min_conc: a.min_conc,
                    max_conc: a.max_conc,
                    max_tp: a.max_tp,
                    max_ep: a.max_ep,
                    single_node: single,
                    multi_node: multi,
                }),
            )
        }
        MatrixCommand::TestConfig(a) => (
            &a.common,
            Selection::TestConfig(TestConfig {
                config_keys: a.config_keys.clone(),
                conc: a.conc.clone(),
                seq_lens: seq_lens(&a.seq_lens),
            }),
        ),
    };
    if common.no_evals && common.all_evals {
        return Err(Failure::usage(
            "--all-evals cannot be combined with --no-evals",
        ));
    }
    let evals = if common.no_evals {
        EvalMode::None
    } else if common.all_evals {
        EvalMode::All
    } else if common.evals_only {
        EvalMode::Subset
    } else {
        EvalMode::Default
    };
    let scenario_types = common
        .scenario_type
        .as_ref()
        .map(|v| v.iter().filter_map(|s| ScenarioType::parse(s)).collect());
    Ok((
        Options {
            selection,
            evals,
            runner_node_filter: common.runner_node_filter.clone(),
            scenario_types,
        },
        common,
    ))
}

/// Runs the generator and returns the rows; relative paths resolve against `base`.
pub fn rows(cmd: &MatrixCommand, base: &Path) -> Result<Vec<infx_matrix::Row>, Failure> {
    let (opts, common) = options(cmd)?;
    let docs = infx_matrix::load_config_documents(&common.config_files, base)
        .map_err(Failure::from_diag)?;
    let exp_names = match cmd {
        MatrixCommand::TestConfig(a) => a.exp_names.as_deref(),
        MatrixCommand::FullSweep(_) => None,
    };
    let rows = generate_checked(
        &opts,
        docs,
        &common.runner_config,
        base,
        common.bind,
        exp_names,
    )?;
    Ok(rows)
}

/// Upstream's order: master files merged and validated, then the runner file, then rows.
/// Schema rules come from `infx-config`; its X5 (unknown runner label) is reported by
/// `validate` but does not stop generation, because upstream generates such rows.
pub fn generate_checked(
    opts: &infx_matrix::Options,
    docs: Vec<infx_yaml::Document>,
    runner_config: &Path,
    base: &Path,
    bind: bool,
    exp_names: Option<&[String]>,
) -> Result<Vec<infx_matrix::Row>, Failure> {
    MasterConfigs::from_documents(&docs).map_err(Failure::from_diag)?;
    let runner_doc =
        infx_matrix::load_runner_document(runner_config, base).map_err(Failure::from_diag)?;
    let loaded = infx_config::from_documents(docs, Some(runner_doc), base.to_path_buf());
    let runner_path = loaded.runners.as_ref().map(|r| r.path.clone());
    if let Some(d) = blocking_config_error(&infx_config::check(&loaded), runner_path.as_deref()) {
        return Err(Failure::from_diag(d));
    }
    let configs = MasterConfigs::from_loaded(&loaded).map_err(Failure::from_diag)?;
    let runners = match &loaded.runners {
        Some(r) => Runners::from_node(&r.root).with_tree_root(base),
        None => Runners::default(),
    };
    let rows = match exp_names {
        None => infx_matrix::generate(&configs, &runners, opts).map_err(Failure::from_diag)?,
        Some(names) => {
            // Upstream filters before eval selection and reports these as usage errors.
            let rows = infx_matrix::expand(&configs, &runners, opts).map_err(Failure::from_diag)?;
            let rows =
                infx_matrix::filter_exp_names(rows, names).map_err(|m| Failure::usage(&m))?;
            infx_matrix::select_evals(rows, opts.evals)
        }
    };
    if bind {
        let points = infx_matrix::expand_with_origins(&configs, &runners, opts)
            .map_err(Failure::from_diag)?;
        // The same row → variant column as validate's report (stderr: stdout is the matrix).
        let mut keys: Vec<String> = Vec::new();
        for (_, o) in &points {
            if !keys.contains(&o.key) {
                keys.push(o.key.clone());
            }
        }
        let (findings, records) =
            infx_validate::bind_and_record(&points, base, &Default::default(), &keys);
        let errors = findings.iter().filter(|d| d.is_error()).count();
        if errors > 0 {
            return Err(Failure {
                code: 1,
                message: format!("{errors} point(s) do not bind to exactly one recipe variant"),
                diagnostic: None,
                findings,
            });
        }
        print_findings(&findings, base);
        eprint!("{}", infx_validate::human_table(&records));
    }
    Ok(rows)
}

fn print_findings(findings: &[infx_report::Diagnostic], base: &Path) {
    if findings.is_empty() {
        return;
    }
    let mut sources = infx_report::SourceMap::default();
    for d in findings {
        if let Some(p) = &d.path
            && !sources.contains(p)
            && let Ok(text) = infx_fs::read_to_string(&base.join(p))
        {
            sources.insert(p.clone(), text);
        }
    }
    let mut sorted = findings.to_vec();
    infx_report::sort_for_report(&mut sorted);
    eprint!(
        "{}",
        crate::output::render(&sorted, &sources, crate::output::Format::Human)
    );
}

/// The first config finding that stops generation (errors other than X5), in upstream's order:
/// the master files are validated before the runner file (docs/config.md, "Random differential").
pub fn blocking_config_error(
    diags: &[infx_report::Diagnostic],
    runner_file: Option<&Path>,
) -> Option<infx_report::Diagnostic> {
    diags
        .iter()
        .filter(|d| d.is_error() && d.code != infx_config::codes::X5)
        .min_by_key(|d| runner_file.is_some() && d.path.as_deref() == runner_file)
        .cloned()
}

/// The exact stdout of a successful run (JSON array or GitHub output lines).
pub fn execute(cmd: &MatrixCommand, base: &Path) -> Result<String, Failure> {
    let rows = rows(cmd, base)?;
    let common = match cmd {
        MatrixCommand::FullSweep(a) => &a.common,
        MatrixCommand::TestConfig(a) => &a.common,
    };
    Ok(match common.format {
        OutputFormat::Json => infx_matrix::dumps_rows(&rows) + "\n",
        OutputFormat::Github => infx_matrix::github_output(&rows, common.chunk_size),
    })
}

pub fn run(mut cmd: MatrixCommand) -> anyhow::Result<ExitCode> {
    let common = match &mut cmd {
        MatrixCommand::FullSweep(a) => &mut a.common,
        MatrixCommand::TestConfig(a) => &mut a.common,
    };
    let root = common.tree();
    common.resolve_paths(&root);
    if common.config_files.is_empty() {
        eprintln!(
            "error: no master configs in {} (looked for {})",
            crate::hygiene::escape_line(&root.display().to_string()),
            MASTER_CONFIGS.join(", ")
        );
        eprintln!("help: pass --config-files, or --root <the benchmark tree>");
        return Ok(ExitCode::from(2));
    }
    match execute(&cmd, &root) {
        Ok(out) => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(out.as_bytes())?;
            stdout.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Err(f) => {
            print_findings(&f.findings, &root);
            match &f.diagnostic {
                Some(d) if d.path.is_some() => {
                    let mut sources = infx_report::SourceMap::default();
                    if let Some(p) = &d.path
                        && let Ok(text) = infx_fs::read_to_string(&root.join(p))
                    {
                        sources.insert(p.clone(), text);
                    }
                    eprint!(
                        "{}",
                        crate::output::render(
                            std::slice::from_ref(d),
                            &sources,
                            crate::output::Format::Human
                        )
                    );
                }
                _ => eprintln!("error: {}", crate::hygiene::escape_line(&f.message)),
            }
            Ok(ExitCode::from(f.code))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<MatrixCommand, clap::Error> {
        parse_line(["cargo xtask", "matrix"].iter().chain(args).copied())
    }

    fn usage_message(args: &[&str]) -> Option<(u8, String)> {
        let cmd = parse(args).ok()?;
        options(&cmd).err().map(|f| (f.code, f.message))
    }

    fn full_sweep(args: &[&str]) -> FullSweepArgs {
        match parse(&[&["full-sweep"], args].concat()) {
            Ok(MatrixCommand::FullSweep(a)) => *a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_repeated_option_replaces_the_earlier_one_as_argparse() {
        let a = full_sweep(&[
            "--config-files",
            "a.yaml",
            "--seq-lens",
            "1k1k",
            "--seq-lens",
            "8k1k",
            "--max-conc",
            "4",
            "--max-conc",
            "8",
            "--single-node",
            "--single-node",
            "--config-files",
            "b.yaml",
            "c.yaml",
        ]);
        assert_eq!(a.seq_lens, Some(vec!["8k1k".to_string()]));
        assert_eq!(a.max_conc, Some(8));
        assert!(a.single_node);
        assert_eq!(
            a.common.config_files,
            vec![PathBuf::from("b.yaml"), PathBuf::from("c.yaml")]
        );
    }

    #[test]
    fn unambiguous_prefixes_name_their_option_as_argparse() {
        let a = full_sweep(&[
            "--config-f",
            "a.yaml",
            "--max-c",
            "16",
            "--seq",
            "1k1k",
            "--no-e",
        ]);
        assert_eq!(a.common.config_files, vec![PathBuf::from("a.yaml")]);
        assert_eq!(a.max_conc, Some(16));
        assert_eq!(a.seq_lens, Some(vec!["1k1k".to_string()]));
        assert!(a.common.no_evals);
        // Ambiguous: --max-conc, --max-tp, --max-ep (argparse: "ambiguous option").
        assert!(parse(&["full-sweep", "--config-files", "a.yaml", "--max", "1"]).is_err());
        match parse(&[
            "test-config",
            "--config-files",
            "a",
            "--config-k",
            "k",
            "--con",
            "4",
        ]) {
            Err(e) => assert!(e.to_string().contains("--con"), "{e}"),
            Ok(c) => panic!("--con is ambiguous (--config-*, --conc): {c:?}"),
        }
    }

    #[test]
    fn usage_errors_exit_2_in_upstream_order() {
        let base = ["full-sweep", "--config-files", "a.yaml"];
        let with = |extra: &[&'static str]| [&base[..], extra].concat();
        assert_eq!(
            usage_message(&with(&[
                "--step-size",
                "1",
                "--min-conc",
                "9",
                "--max-conc",
                "1"
            ])),
            Some((2, "--step-size must be greater than 1".into()))
        );
        assert_eq!(
            usage_message(&with(&["--min-conc", "64", "--max-conc", "8"])),
            Some((
                2,
                "--min-conc must be less than or equal to --max-conc".into()
            ))
        );
        assert_eq!(
            usage_message(&with(&["--all-evals", "--no-evals"])),
            Some((2, "--all-evals cannot be combined with --no-evals".into()))
        );
        assert!(parse(&with(&["--no-evals", "--evals-only"])).is_err());
        assert!(parse(&with(&["--seq-lens", "2k1k"])).is_err());
        assert!(parse(&["test-config", "--config-files", "a.yaml"]).is_err());
    }

    /// A one-entry tree: 5 single-node rows (conc 1…16), all with exp-name `m_1k1k`.
    fn fixture() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        // Confinement is process-wide: once a test running beside these (validate's, diff-check's)
        // registers its root, a tree that is not registered is refused as outside the repository.
        infx_fs::confine_to(root).expect("confine");
        std::fs::create_dir_all(root.join("configs")).expect("mkdir");
        std::fs::write(
            root.join("configs/master.yaml"),
            "m-fp8-h200-sglang:\n  image: img\n  model: org/m\n  model-prefix: m\n  precision: fp8\n  \
             framework: sglang\n  runner: h200\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    \
             - isl: 1024\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-start: 1, conc-end: 16 }\n",
        )
        .expect("write");
        std::fs::write(
            root.join("configs/runners.yaml"),
            "labels:\n  h200: [h200-a, h200-b]\n",
        )
        .expect("write");
        tmp
    }

    #[test]
    fn exp_names_select_exactly_one_row_or_fail_as_usage() {
        let tmp = fixture();
        let root = tmp.path().to_string_lossy().to_string();
        let run = |names: &[&str]| {
            let mut args = vec![
                "test-config",
                "--root",
                root.as_str(),
                "--config-files",
                "configs/master.yaml",
                "--config-keys",
                "m-fp8-h200-sglang",
                "--exp-names",
            ];
            args.extend_from_slice(names);
            execute(&parse(&args).expect("args"), tmp.path()).map_err(|f| (f.code, f.message))
        };
        assert_eq!(
            run(&["m_1k1k"]),
            Err((2, "Experiment name(s) matched multiple rows: m_1k1k".into()))
        );
        assert_eq!(
            run(&["nope"]),
            Err((2, "Experiment name(s) not found: nope".into()))
        );
    }

    #[test]
    fn github_format_splits_rows_into_chunks() {
        // Another test's root registered first, as when tests run side by side.
        let other = tempfile::tempdir().expect("tempdir");
        infx_fs::confine_to(other.path()).expect("confine");
        let tmp = fixture();
        let root = tmp.path();
        let root_arg = root.to_string_lossy().to_string();
        let args = [
            "full-sweep",
            "--root",
            root_arg.as_str(),
            "--config-files",
            "configs/master.yaml",
            "--format",
            "github",
            "--chunk-size",
            "2",
        ];
        let out = match execute(&parse(&args).expect("args"), root) {
            Ok(o) => o,
            Err(f) => panic!("{}", f.message),
        };
        let lines: Vec<&str> = out.lines().collect();
        // conc 1, 2, 4, 8, 16 → 5 rows → chunks of 2, 2, 1.
        assert_eq!(lines[..2], ["rows=5", "chunk_count=3"]);
        assert!(
            lines[2].starts_with("chunk_0={\"include\": [{\"image\": \"img\""),
            "{}",
            lines[2]
        );
        assert!(
            lines[4].starts_with("chunk_2={\"include\": [{") && lines[4].contains("\"conc\": 16")
        );
        assert_eq!(lines.len(), 5);
        // The JSON format of the same run is upstream's array.
        let json = execute(&parse(&args[..5]).expect("args"), root)
            .map_err(|f| f.message)
            .expect("json");
        assert!(
            json.starts_with("[{\"image\": \"img\", \"model\": \"org/m\"")
                && json.ends_with("}]\n")
        );
    }
}
