//! Upstream's machine-checkable benchmark invariants (its AGENTS.md; docs/review.md,
//! "Upstream's invariants"): an MTP launcher benchmarks with the chat template, and an image
//! bump of a multinode entry moves its srt-slurm recipe's `model.container` with it.

use crate::codes;
use crate::masters::{Binding, Entry};
use crate::{Change, path_key};
use infx_report::{Diagnostic, Span};
use infx_yaml::{Document, Node};
use std::collections::BTreeMap;

/// The command every launcher benchmarks through (benchmarks/benchmark_lib.sh).
const BENCHMARK_COMMAND: &str = "run_benchmark_serving";
const CHAT_TEMPLATE: &str = "--use-chat-template";
/// Flags `run_benchmark_serving` turns into `--use-chat-template` (benchmark_lib.sh: `--dsv4`
/// selects DeepSeek-V4's chat encoding and implies the template).
const IMPLIES_CHAT_TEMPLATE: &[&str] = &["--dsv4"];

fn has_chat_template(command: &str) -> bool {
    // Words as the shell would see them after quoting, arrays and `$( … )`: the flag may sit
    // in `ARGS=(… --use-chat-template)` or `$( … && echo "--use-chat-template" )`.
    command
        .split(|c: char| c.is_whitespace() || "()\"'`;$".contains(c))
        .any(|w| w == CHAT_TEMPLATE || IMPLIES_CHAT_TEMPLATE.contains(&w))
}

/// Every added or modified `*_mtp.sh` that calls `run_benchmark_serving` passes
/// `--use-chat-template`: EAGLE-style drafts are trained on chat-formatted input, and raw
/// prompts lower the acceptance rate without an error. A call without it is accepted when the
/// script's code names the flag elsewhere (an argument array built before the call), and
/// `--dsv4` counts as the flag.
pub(crate) fn check_mtp_chat_template(change: &Change) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (path, text) in &change.mtp_launchers {
        let commands = shell_commands(text);
        if commands
            .iter()
            .any(|(_, c)| !is_call(c) && has_chat_template(c))
        {
            continue;
        }
        for (line, command) in commands {
            if is_call(&command) && !has_chat_template(&command) {
                let name = path.rsplit('/').next().unwrap_or(path);
                out.push(
                    Diagnostic::error(
                        codes::MTP_CHAT_TEMPLATE,
                        format!("`{name}` runs `{BENCHMARK_COMMAND}` without `{CHAT_TEMPLATE}`"),
                    )
                    .at(path, Span::line(line))
                    .with_help(format!("add `{CHAT_TEMPLATE}` to the call: MTP drafts are trained on chat-formatted prompts, and raw ones lower the acceptance rate silently"))
                    .with_note("upstream's AGENTS.md: MTP scripts MUST pass --use-chat-template to run_benchmark_serving"),
                );
            }
        }
    }
    out
}

/// Whether a logical command calls the benchmark command (not its definition).
fn is_call(command: &str) -> bool {
    command
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == '&' || c == '|')
        .any(|w| w == BENCHMARK_COMMAND)
        && !command.contains(&format!("{BENCHMARK_COMMAND}()"))
        && !command.starts_with("function ")
}

/// The logical commands of a shell script: lines joined at a trailing `\`, comments (a line
/// starting with `#`, or ` #` to the end) dropped, each with its first line (1-based).
fn shell_commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let code = if line.starts_with('#') {
            ""
        } else {
            line.find(" #").map_or(line, |at| &line[..at]).trim_end()
        };
        let (continued, code) = match code.strip_suffix('\\') {
            Some(c) => (true, c),
            None => (false, code),
        };
        let (first, mut joined) = current.take().unwrap_or((i + 1, String::new()));
        joined.push(' ');
        joined.push_str(code);
        if continued {
            current = Some((first, joined));
        } else if !joined.trim().is_empty() {
            out.push((first, joined.trim().to_string()));
        }
    }
    if let Some((first, joined)) = current {
        out.push((first, joined.trim().to_string()));
    }
    out
}

/// When the change bumps a multinode entry's `image:` (its line is added) or sets a recipe's
/// `model.container`, every variant of each in-tree recipe the entry binds that names an image
/// as `model.container` names the entry's image: srtctl runs the container the recipe names,
/// and the launcher keys its container aliases by the entry's `image:` ([`is_alias`]).
pub(crate) fn check_recipe_containers(
    entries: &[Entry<'_>],
    bindings: &BTreeMap<String, Binding>,
    recipes: &[Document],
    change: &Change,
) -> Vec<Diagnostic> {
    let is = |f: &crate::FileChange, path: &str| {
        f.path == path
            || f.path
                .strip_suffix(path)
                .is_some_and(|dir| dir.ends_with('/'))
    };
    let added = |path: &str, line: usize| {
        change
            .files
            .iter()
            .any(|f| is(f, path) && f.added_lines.has_line(line))
    };
    let mut out = Vec::new();
    for doc in recipes {
        let rel = path_key(doc);
        let Some(binding) = bindings.get(&rel) else {
            continue;
        };
        // Expanding a bundle is the costly part: only for a recipe this change touches, or
        // one whose entry's image line it adds.
        let recipe_touched = change.files.iter().any(|f| is(f, &rel));
        let expanded = std::cell::OnceCell::new();
        for key in &binding.keys {
            let Some(e) = entries.iter().find(|e| e.key == *key && e.is_multinode()) else {
                continue;
            };
            let Some(image) = e.image() else { continue };
            let Some(image_text) = image.as_str() else {
                continue;
            };
            let master = e.path().to_string_lossy().replace('\\', "/");
            let master_rel = infx_config::layout::from_configs_folder(&master);
            let bumped = added(master_rel, image.span.start.line());
            if !bumped && !recipe_touched {
                continue;
            }
            for v in expanded.get_or_init(|| crate::recipe::variants(doc)) {
                let Some(container) = v.node.get_path(&["model", "container"]) else {
                    continue;
                };
                let set_here = added(&rel, container.span.start.line());
                if !(bumped || set_here)
                    || container
                        .as_str()
                        .is_none_or(|c| c == image_text || is_alias(c))
                {
                    continue;
                }
                out.push(mismatch(doc, &v.name, container, key, image_text, bumped));
            }
        }
    }
    out
}

/// A container name without `/` or `:` (`dynamo-sglang`, `v0.5.11`) is an alias that the
/// runner's launcher maps to the entry's image in srtslurm.yaml's `containers`; only a
/// container written as an image reference can name another image.
fn is_alias(container: &str) -> bool {
    !container.contains(['/', ':'])
}

fn mismatch(
    doc: &Document,
    variant: &str,
    container: &Node,
    key: &str,
    image: &str,
    bumped: bool,
) -> Diagnostic {
    let shown = container
        .as_str()
        .map_or_else(String::new, |c| format!("`{c}`"));
    let what = if bumped {
        "sets its `image:` to"
    } else {
        "runs"
    };
    Diagnostic::error(
        codes::RECIPE_CONTAINER,
        format!("`model.container` of `{variant}` is {shown}, but entry '{key}' {what} `{image}`"),
    )
    .at(&doc.path, container.span)
    .with_help(format!("set `model.container: {image}` (the recipe and its master entry change together)"))
    .with_note("upstream's AGENTS.md: for image bumps, model.container must equal image:, since the launcher uses the latter as the container-alias key")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change_with_launcher(text: &str) -> Change {
        Change {
            mtp_launchers: vec![(
                "benchmarks/single_node/fixed_seq_len/m_fp4_b200_mtp.sh".to_string(),
                text.to_string(),
            )],
            ..Change::default()
        }
    }

    #[test]
    fn an_mtp_call_without_the_chat_template_is_found_on_its_first_line() {
        let text = "#!/bin/bash\n# run_benchmark_serving --use-chat-template (a comment)\nrun_benchmark_serving \\\n  --model \"$MODEL\" \\\n  --port 8888\n";
        let found = check_mtp_chat_template(&change_with_launcher(text));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, codes::MTP_CHAT_TEMPLATE);
        assert_eq!(found[0].span.map(|s| s.start.line()), Some(3));
    }

    #[test]
    fn the_flag_on_a_continued_line_or_in_an_array_passes() {
        let continued = "run_benchmark_serving \\\n  --model m \\\n  --use-chat-template\n";
        assert!(check_mtp_chat_template(&change_with_launcher(continued)).is_empty());
        let array = "ARGS=(--model m --use-chat-template)\nrun_benchmark_serving \"${ARGS[@]}\"\n";
        assert!(check_mtp_chat_template(&change_with_launcher(array)).is_empty());
        let dsv4 = "run_benchmark_serving --model m --dsv4\n";
        assert!(check_mtp_chat_template(&change_with_launcher(dsv4)).is_empty());
        let no_call = "vllm serve m\n";
        assert!(check_mtp_chat_template(&change_with_launcher(no_call)).is_empty());
    }

    const MASTER: &str = "m-fp4-gb300-dynamo-vllm:\n  image: vllm/vllm-openai:v0.21.0\n  multinode: true\n  framework: dynamo-vllm\n  scenarios:\n    fixed-seq-len:\n    - search-space:\n      - prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/v/r.yaml\"\n";
    const RECIPE_PATH: &str = "benchmarks/multi_node/srt-slurm-recipes/v/r.yaml";

    fn containers(recipe: &str, added: &[(&str, usize)]) -> Vec<Diagnostic> {
        let masters = vec![crate::test_support::doc(
            "configs/nvidia-master.yaml",
            MASTER,
        )];
        let recipes = vec![crate::test_support::doc(RECIPE_PATH, recipe)];
        let entries = crate::masters::entries(&masters);
        let bindings = crate::masters::bindings(&entries);
        let change = Change {
            files: added
                .iter()
                .map(|(path, line)| crate::FileChange {
                    path: path.to_string(),
                    old_path: None,
                    status: crate::Status::Modified,
                    added_lines: crate::patches::AddedLines::from_lines([(*line, String::new())]),
                })
                .collect(),
            ..Change::default()
        };
        check_recipe_containers(&entries, &bindings, &recipes, &change)
    }

    #[test]
    fn an_image_bump_must_move_the_recipe_container() {
        let stale = "name: r\nmodel:\n  container: vllm/vllm-openai:v0.20.1\n";
        let found = containers(stale, &[("configs/nvidia-master.yaml", 2)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, codes::RECIPE_CONTAINER);
        assert_eq!(found[0].span.map(|s| s.start.line()), Some(3));
        // Not bumped by this change, and the container line untouched: not this PR's concern.
        assert!(containers(stale, &[("configs/nvidia-master.yaml", 9)]).is_empty());
        // The same image, or an alias the launcher maps to the image, passes.
        let same = "name: r\nmodel:\n  container: vllm/vllm-openai:v0.21.0\n";
        assert!(containers(same, &[("configs/nvidia-master.yaml", 2)]).is_empty());
        let alias = "name: r\nmodel:\n  container: dynamo-vllm\n";
        assert!(containers(alias, &[("configs/nvidia-master.yaml", 2)]).is_empty());
    }

    #[test]
    fn setting_the_container_alone_is_checked_too() {
        let stale = "name: r\nmodel:\n  container: vllm/vllm-openai:v0.20.1\n";
        assert_eq!(containers(stale, &[(RECIPE_PATH, 3)]).len(), 1);
    }
}
