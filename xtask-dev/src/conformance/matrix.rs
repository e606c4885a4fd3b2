//! `cargo xtask conformance matrix`: every case of `goldens/matrix` (rows byte-equal to
//! upstream's stdout, order included; failing invocations rejected with the same exit code and
//! reason) plus the generation-time and accepted cases of `goldens/validation` (mutations that
//! pass input validation and either fail while generating rows or generate rows).

use anyhow::Context;
use infx_yaml::{Document, Float, Mapping, Node, Span, Value};
use std::path::{Path, PathBuf};
use xtask::cmd_matrix::{self, Failure, MatrixCommand};

pub fn run(corpus: &Path) -> anyhow::Result<super::Outcome> {
    let mut outcome = super::Outcome {
        area: "matrix",
        ..Default::default()
    };
    let tree = corpus.join("inferencex-aug2026");
    let matrix_dir = corpus.join("goldens").join("matrix");
    for case in case_dirs(&matrix_dir)? {
        outcome.total += 1;
        match matrix_case(&case, &tree) {
            Ok(()) => outcome.agree += 1,
            Err(why) => outcome
                .disagreements
                .push(format!("{}: {why}", name(&case))),
        }
    }
    let validation_dir = corpus.join("goldens").join("validation");
    let cases_tsv = std::fs::read_to_string(validation_dir.join("cases.tsv"))
        .with_context(|| format!("reading {}", validation_dir.join("cases.tsv").display()))?;
    for line in cases_tsv.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (Some(case), Some(phase)) = (cols.first(), cols.get(1)) else {
            continue;
        };
        if *phase != "generate" && *phase != "accepted" {
            continue;
        }
        outcome.total += 1;
        let dir = validation_dir.join(case);
        match validation_case(&dir, &tree) {
            Ok(()) => outcome.agree += 1,
            Err(why) => match why.strip_prefix(EXPLAINED) {
                Some(reason) => {
                    outcome.agree += 1;
                    outcome
                        .explained
                        .push(format!("validation/{case}: {reason}"));
                }
                None => outcome
                    .disagreements
                    .push(format!("validation/{case}: {why}")),
            },
        }
    }
    Ok(outcome)
}

fn name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn case_dirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("args.txt").is_file())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// Parses upstream's argument line with our CLI. `Err(code)` when clap rejects it.
fn parse(args_line: &str) -> Result<MatrixCommand, u8> {
    parse_words(infx_review::cookbook::split_words(args_line))
}

/// Parses upstream's argument words with our CLI. `Err(code)` when clap rejects them.
pub(crate) fn parse_words(words: Vec<String>) -> Result<MatrixCommand, u8> {
    let mut argv = vec!["cargo xtask".to_string(), "matrix".to_string()];
    argv.extend(words);
    xtask::cmd_matrix::parse_line(argv).map_err(|e| if e.use_stderr() { 2 } else { 0 })
}

fn read(p: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
}

/// The reason part of upstream's message: the exception text, or argparse's error.
fn golden_reason(message: &str) -> String {
    let m = message.trim_end();
    for prefix in ["ValueError: ", "AssertionError: "] {
        if let Some(rest) = m.strip_prefix(prefix) {
            return rest.to_string();
        }
    }
    match m.split_once(": error: ") {
        Some((_, rest)) => rest.to_string(),
        None => m.to_string(),
    }
}

fn compare_failure(dir: &Path, failure: &Failure, want_code: u8) -> Result<(), String> {
    if failure.code != want_code {
        return Err(format!(
            "exit {} (want {want_code}): {}",
            failure.code, failure.message
        ));
    }
    let golden = read(&dir.join("message.txt")).map_err(|e| e.to_string())?;
    let want = golden_reason(&golden);
    if failure.message.trim() == want.trim() {
        Ok(())
    } else {
        Err(format!(
            "rejected for another reason:\n    ours: {}\n    want: {}",
            first_line(&failure.message),
            first_line(&want)
        ))
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn compare_rows(dir: &Path, ours: &str) -> Result<(), String> {
    let want = read(&dir.join("stdout.json")).map_err(|e| e.to_string())?;
    if ours == want {
        return Ok(());
    }
    // Locate the first differing row for the report.
    let (o, w): (Vec<&str>, Vec<&str>) =
        (ours.split("}, {").collect(), want.split("}, {").collect());
    let i = o
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b)
        .unwrap_or(o.len().min(w.len()));
    Err(format!(
        "rows differ ({} vs {} row texts), first at row {i}:\n    ours: {}\n    want: {}",
        o.len(),
        w.len(),
        o.get(i).map_or("<none>", |s| &s[..s.len().min(400)]),
        w.get(i).map_or("<none>", |s| &s[..s.len().min(400)])
    ))
}

fn want_code(dir: &Path) -> Result<u8, String> {
    read(&dir.join("exit_code.txt"))
        .map_err(|e| e.to_string())?
        .trim()
        .parse()
        .map_err(|e| format!("exit_code.txt: {e}"))
}

fn matrix_case(dir: &Path, tree: &Path) -> Result<(), String> {
    let args = read(&dir.join("args.txt")).map_err(|e| e.to_string())?;
    let want = want_code(dir)?;
    let cmd = match parse(args.trim()) {
        Ok(c) => c,
        // argparse and clap word their errors differently: the exit code is the reason here.
        Err(code) if code == want && want == 2 => return Ok(()),
        Err(code) => {
            return Err(format!(
                "our CLI rejected the arguments (exit {code}), upstream exit {want}"
            ));
        }
    };
    match cmd_matrix::execute(&cmd, tree) {
        Ok(out) if want == 0 => compare_rows(dir, &out),
        Ok(_) => Err(format!(
            "we generated rows, upstream failed with exit {want}"
        )),
        Err(f) if want == 0 => Err(format!(
            "we failed (exit {}): {}",
            f.code,
            first_line(&f.message)
        )),
        Err(f) => compare_failure(dir, &f, want),
    }
}

/// Rebuilds a mutated master config in memory (the ops of `mutation.json` applied to the
/// parsed tree) and runs the case's command against it.
fn validation_case(dir: &Path, tree: &Path) -> Result<(), String> {
    let mutation: serde_json::Value =
        serde_json::from_str(&read(&dir.join("mutation.json")).map_err(|e| e.to_string())?)
            .map_err(|e| format!("mutation.json: {e}"))?;
    let args = read(&dir.join("args.txt")).map_err(|e| e.to_string())?;
    let line = args.lines().next().unwrap_or("");
    let want = want_code(dir)?;
    let cmd = parse(line).map_err(|c| format!("our CLI rejected the arguments (exit {c})"))?;
    let mutated_file = mutation["mutated_file"].as_str().unwrap_or_default();
    let (opts, common) = cmd_matrix::options(&cmd).map_err(|f| f.message)?;
    let mut docs =
        infx_matrix::load_config_documents(&common.config_files, tree).map_err(|d| d.message)?;
    for doc in &mut docs {
        if doc.path == Path::new(mutated_file) {
            apply_ops(doc, &mutation["ops"])?;
        }
    }
    match cmd_matrix::generate_checked(&opts, docs, &common.runner_config, tree, false, None) {
        Ok(rows) if want == 0 => compare_rows(dir, &(infx_matrix::dumps_rows(&rows) + "\n")),
        Ok(_) => Err(format!(
            "we generated rows, upstream failed with exit {want}"
        )),
        Err(f) if want == 0 => match stricter(dir, &f) {
            Some(reason) => Err(format!("{EXPLAINED}{reason}")),
            None => Err(format!("we failed: {}", first_line(&f.message))),
        },
        Err(f) => compare_failure(dir, &f, want),
    }
}

/// Marks a disagreement that is a deliberate, documented strictness of ours.
pub const EXPLAINED: &str = "explained: ";

/// Cases upstream accepts and we reject on purpose (the config schema's reasons).
fn stricter(dir: &Path, f: &Failure) -> Option<String> {
    let code = f.diagnostic.as_ref().map(|d| d.code)?;
    match (name(dir).as_str(), code) {
        ("accepted-tp-as-string", infx_config::codes::TYPE) => Some(format!(
            "upstream copies tp '4' as the string \"4\" into rows; infx-config requires a native integer ({})",
            first_line(&f.message)
        )),
        _ => None,
    }
}

fn apply_ops(doc: &mut Document, ops: &serde_json::Value) -> Result<(), String> {
    let span = doc.root.span;
    for op in ops.as_array().map(Vec::as_slice).unwrap_or_default() {
        let kind = op["op"].as_str().unwrap_or_default();
        let path = op["path"].as_array().ok_or("op without path")?;
        let (last, parents) = path.split_last().ok_or("empty op path")?;
        let mut node = std::sync::Arc::make_mut(&mut doc.root);
        for step in parents {
            node = child(node, step).ok_or_else(|| format!("op path {path:?} does not exist"))?;
        }
        match kind {
            "set" | "add" => {
                let value = json_to_node(&op["new"], &span)?;
                match (&mut node.value, last) {
                    (Value::Map(m), serde_json::Value::String(k)) => {
                        m.insert(Node::new(Value::Str(k.clone()), value.span), value);
                    }
                    (Value::Seq(items), serde_json::Value::Number(i)) => {
                        let i = i.as_u64().ok_or("bad index")? as usize;
                        if kind == "add" {
                            items.insert(i.min(items.len()), value);
                        } else {
                            *items.get_mut(i).ok_or("index out of range")? = value;
                        }
                    }
                    _ => return Err(format!("cannot {kind} at {path:?}")),
                }
            }
            "delete" => match (&mut node.value, last) {
                (Value::Map(m), serde_json::Value::String(k)) => {
                    m.shift_remove(k);
                }
                (Value::Seq(items), serde_json::Value::Number(i)) => {
                    let i = i.as_u64().ok_or("bad index")? as usize;
                    if i < items.len() {
                        items.remove(i);
                    }
                }
                _ => return Err(format!("cannot delete at {path:?}")),
            },
            "wrap-root-in-list" => {
                let root = std::mem::replace(
                    std::sync::Arc::make_mut(&mut doc.root),
                    Node::new(Value::Null, Span::default()),
                );
                doc.root = Node::new(Value::Seq(vec![root]), Span::default()).into();
            }
            other => return Err(format!("unknown op {other}")),
        }
    }
    Ok(())
}

fn child<'n>(node: &'n mut Node, step: &serde_json::Value) -> Option<&'n mut Node> {
    match (&mut node.value, step) {
        (Value::Map(m), serde_json::Value::String(k)) => m.get_mut(k),
        (Value::Seq(items), serde_json::Value::Number(i)) => items.get_mut(i.as_u64()? as usize),
        _ => None,
    }
}

fn json_to_node(v: &serde_json::Value, span: &Span) -> Result<Node, String> {
    let value = match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => {
                let f = n.as_f64().ok_or("bad number")?;
                Value::Float(Float {
                    value: f,
                    text: n.to_string().into_boxed_str(),
                })
            }
        },
        serde_json::Value::String(s) => Value::Str(s.clone()),
        serde_json::Value::Array(items) => Value::Seq(
            items
                .iter()
                .map(|i| json_to_node(i, span))
                .collect::<Result<_, _>>()?,
        ),
        serde_json::Value::Object(o) => {
            if let Some(inner) = o.get("copy_of") {
                return json_to_node(inner, span);
            }
            let mut m = Mapping::new();
            for (k, val) in o {
                m.insert(
                    Node::new(Value::Str(k.clone()), *span),
                    json_to_node(val, span)?,
                );
            }
            Value::Map(m)
        }
    };
    Ok(Node::new(value, *span))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_arguments_split_like_a_shell() {
        assert_eq!(
            infx_review::cookbook::split_words("a 'b c' \"d\\\"e\" f\\ g"),
            ["a", "b c", "d\"e", "f g"]
        );
        assert_eq!(
            infx_review::cookbook::split_words("--config-keys 'dsv4-*'"),
            ["--config-keys", "dsv4-*"]
        );
    }

    #[test]
    fn golden_reasons() {
        assert_eq!(golden_reason("ValueError: x y\n"), "x y");
        assert_eq!(
            golden_reason("prog full-sweep: error: argument --x: bad"),
            "argument --x: bad"
        );
    }
}
