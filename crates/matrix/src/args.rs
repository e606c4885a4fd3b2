//! Upstream's generator command line (`full-sweep …` / `test-config …`, argparse-style) turned
//! into [`Options`], for callers that hold an upstream argument list (the changelog planner,
//! golden tests). The `cargo xtask matrix` CLI itself is clap-based and builds the same options.

use crate::generate::{EvalMode, FullSweep, Options, Selection, SeqLen, TestConfig};
use crate::sweep_row::ScenarioType;
use std::path::PathBuf;

/// A parsed invocation: the inputs plus the generator options.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub config_files: Vec<PathBuf>,
    pub runner_config: PathBuf,
    pub options: Options,
}

/// An argparse-style usage error (upstream exits 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

/// The values of `--name v1 v2 …`, each one of a fixed set that `parse` knows; an unknown one
/// is argparse's "invalid choice" error, followed by `choose_from` (" (choose from …)" or "").
fn choices<T>(
    name: &str,
    values: Option<Vec<String>>,
    parse: impl Fn(&str) -> Option<T>,
    choose_from: &str,
) -> Result<Option<Vec<T>>, UsageError> {
    values
        .map(|v| {
            v.iter()
                .map(|s| {
                    parse(s).ok_or_else(|| {
                        UsageError(format!(
                            "argument --{name}: invalid choice: '{s}'{choose_from}"
                        ))
                    })
                })
                .collect()
        })
        .transpose()
}

/// Parses `args` (without the program name), with upstream's checks in upstream's order.
pub fn parse_upstream_args(args: &[String]) -> Result<Invocation, UsageError> {
    let usage = |m: String| Err(UsageError(m));
    let Some((command, rest)) = args.split_first() else {
        return usage("the following arguments are required: command".into());
    };
    let full = match command.as_str() {
        "full-sweep" => true,
        "test-config" => false,
        other => return usage(format!("argument command: invalid choice: '{other}'")),
    };
    // Collect `--flag v1 v2 …` groups.
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for a in rest {
        if let Some(flag) = a.strip_prefix("--") {
            groups.push((flag.to_string(), Vec::new()));
        } else if let Some((_, vals)) = groups.last_mut() {
            vals.push(a.clone());
        } else {
            return usage(format!("unrecognized arguments: {a}"));
        }
    }
    let get = |name: &str| {
        groups
            .iter()
            .rev()
            .find(|(f, _)| f == name)
            .map(|(_, v)| v.clone())
    };
    let flag = |name: &str| groups.iter().any(|(f, _)| f == name);
    let int = |name: &str| -> Result<Option<i64>, UsageError> {
        match get(name) {
            None => Ok(None),
            Some(v) if v.len() == 1 => v[0].parse().map(Some).map_err(|_| {
                UsageError(format!("argument --{name}: invalid int value: '{}'", v[0]))
            }),
            Some(_) => Err(UsageError(format!(
                "argument --{name}: expected one argument"
            ))),
        }
    };
    let seq_lens = choices(
        "seq-lens",
        get("seq-lens"),
        SeqLen::parse,
        " (choose from '1k1k', '8k1k')",
    )?;
    let scenario_types = choices(
        "scenario-type",
        get("scenario-type"),
        ScenarioType::parse,
        "",
    )?;
    if flag("no-evals") && flag("evals-only") {
        return usage("argument --evals-only: not allowed with argument --no-evals".into());
    }
    let Some(config_files) = get("config-files").filter(|v| !v.is_empty()) else {
        return usage("the following arguments are required: --config-files".into());
    };
    let selection = if full {
        let step_size = int("step-size")?.unwrap_or(2);
        let (min_conc, max_conc) = (int("min-conc")?, int("max-conc")?);
        if step_size <= 1 {
            return usage("--step-size must be greater than 1".into());
        }
        if let (Some(lo), Some(hi)) = (min_conc, max_conc)
            && lo > hi
        {
            return usage("--min-conc must be less than or equal to --max-conc".into());
        }
        let (single, multi) = match (flag("single-node"), flag("multi-node")) {
            (false, false) => (true, true),
            pair => pair,
        };
        Selection::FullSweep(FullSweep {
            model_prefix: get("model-prefix"),
            precision: get("precision"),
            framework: get("framework"),
            runner_type: get("runner-type"),
            seq_lens,
            step_size,
            min_conc,
            max_conc,
            max_tp: int("max-tp")?,
            max_ep: int("max-ep")?,
            single_node: single,
            multi_node: multi,
        })
    } else {
        let Some(config_keys) = get("config-keys").filter(|v| !v.is_empty()) else {
            return usage("the following arguments are required: --config-keys".into());
        };
        let conc = match get("conc") {
            None => None,
            Some(v) => Some(
                v.iter()
                    .map(|s| {
                        s.parse().map_err(|_| {
                            UsageError(format!("argument --conc: invalid int value: '{s}'"))
                        })
                    })
                    .collect::<Result<Vec<i64>, _>>()?,
            ),
        };
        Selection::TestConfig(TestConfig {
            config_keys,
            conc,
            seq_lens,
        })
    };
    if flag("no-evals") && flag("all-evals") {
        return usage("--all-evals cannot be combined with --no-evals".into());
    }
    let evals = if flag("no-evals") {
        EvalMode::None
    } else if flag("all-evals") {
        EvalMode::All
    } else if flag("evals-only") {
        EvalMode::Subset
    } else {
        EvalMode::Default
    };
    Ok(Invocation {
        config_files: config_files.into_iter().map(PathBuf::from).collect(),
        runner_config: get("runner-config")
            .and_then(|v| v.into_iter().next())
            .map_or_else(
                || PathBuf::from(infx_config::layout::RUNNERS),
                PathBuf::from,
            ),
        options: Options {
            selection,
            evals,
            runner_node_filter: get("runner-node-filter").and_then(|v| v.into_iter().next()),
            scenario_types,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn upstream_usage_errors() {
        let e = |s: &str| parse_upstream_args(&argv(s)).err().map(|e| e.0);
        assert_eq!(
            e("full-sweep --config-files a.yaml --step-size 1").as_deref(),
            Some("--step-size must be greater than 1")
        );
        assert_eq!(
            e("full-sweep --config-files a.yaml --min-conc 64 --max-conc 8").as_deref(),
            Some("--min-conc must be less than or equal to --max-conc")
        );
        assert_eq!(
            e("full-sweep --config-files a.yaml --all-evals --no-evals").as_deref(),
            Some("--all-evals cannot be combined with --no-evals")
        );
        assert!(e("full-sweep --config-files a.yaml --seq-lens 2k1k").is_some());
        assert!(e("test-config --config-files a.yaml").is_some());
    }

    #[test]
    fn defaults_and_modes() {
        let inv = parse_upstream_args(&argv(
            "test-config --config-files a.yaml b.yaml --config-keys k --evals-only",
        ))
        .map_err(|e| e.0);
        let Ok(inv) = inv else { panic!("{inv:?}") };
        assert_eq!(inv.config_files.len(), 2);
        assert_eq!(inv.runner_config, PathBuf::from("configs/runners.yaml"));
        assert_eq!(inv.options.evals, EvalMode::Subset);
        let Ok(fs) = parse_upstream_args(&argv("full-sweep --config-files a --single-node")) else {
            panic!()
        };
        match fs.options.selection {
            Selection::FullSweep(f) => assert!(f.single_node && !f.multi_node && f.step_size == 2),
            Selection::TestConfig(_) => panic!("wrong command"),
        }
    }
}
