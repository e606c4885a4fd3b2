//! Every case of `../shared/corpus/goldens/matrix` plus the generation-time and accepted cases
//! of `goldens/validation`, run through the library: M/M must agree (rows byte-equal to
//! upstream's stdout; failures with the same exit code and message). Skips without the corpus.

use infx_matrix::parse_upstream_args;
use infx_matrix::{MasterConfigs, Runners, dumps_rows, generate};
use infx_yaml::{Document, Float, Mapping, Node, Value};
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.is_dir().then_some(dir)
}

fn shell_split(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut cur, mut in_word, mut quote) = (String::new(), false, None::<char>);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn reason(message: &str) -> String {
    let m = message.trim_end();
    for prefix in ["ValueError: ", "AssertionError: "] {
        if let Some(rest) = m.strip_prefix(prefix) {
            return rest.to_string();
        }
    }
    m.split_once(": error: ")
        .map_or(m.to_string(), |(_, r)| r.to_string())
}

/// Runs one invocation; `Ok(stdout)` or `Err((exit code, message))`.
fn run(
    args_line: &str,
    tree: &Path,
    mutate: impl FnOnce(&mut Vec<Document>),
) -> Result<String, (u8, String)> {
    let inv = parse_upstream_args(&shell_split(args_line)).map_err(|e| (2, e.0))?;
    let mut docs =
        infx_matrix::load_config_documents(&inv.config_files, tree).map_err(|d| (1, d.message))?;
    mutate(&mut docs);
    let configs = MasterConfigs::from_documents(&docs).map_err(|d| (1, d.message))?;
    let runner_doc =
        infx_matrix::load_runner_document(&inv.runner_config, tree).map_err(|d| (1, d.message))?;
    let runners = Runners::from_node(&runner_doc.root);
    let rows = generate(&configs, &runners, &inv.options).map_err(|d| (1, d.message))?;
    Ok(dumps_rows(&rows) + "\n")
}

fn verdict(dir: &Path, got: Result<String, (u8, String)>) -> Result<(), String> {
    let want: u8 = read(&dir.join("exit_code.txt"))
        .trim()
        .parse()
        .unwrap_or(255);
    match got {
        Ok(out) if want == 0 => {
            if out == read(&dir.join("stdout.json")) {
                Ok(())
            } else {
                Err("rows differ".into())
            }
        }
        Ok(_) => Err(format!("generated rows, upstream exit {want}")),
        Err((code, msg)) if code == want => {
            let golden = reason(&read(&dir.join("message.txt")));
            // argparse's own errors (mutually exclusive, invalid choice) are worded by argparse.
            if code == 2 || msg.trim() == golden.trim() {
                Ok(())
            } else {
                Err(format!("other reason: ours {msg:?}, want {golden:?}"))
            }
        }
        Err((code, msg)) => Err(format!("exit {code} (want {want}): {msg}")),
    }
}

fn json_node(v: &serde_json::Value, like: &Node) -> Node {
    let value = match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(Float {
                value: n.as_f64().unwrap_or(0.0),
                text: n.to_string().into_boxed_str(),
            }),
        },
        serde_json::Value::String(s) => Value::Str(s.clone()),
        serde_json::Value::Array(a) => Value::Seq(a.iter().map(|x| json_node(x, like)).collect()),
        serde_json::Value::Object(o) => {
            if let Some(inner) = o.get("copy_of") {
                return json_node(inner, like);
            }
            let mut m = Mapping::new();
            for (k, x) in o {
                m.insert(
                    Node::new(Value::Str(k.clone()), like.span),
                    json_node(x, like),
                );
            }
            Value::Map(m)
        }
    };
    Node::new(value, like.span)
}

fn apply(doc: &mut Document, ops: &serde_json::Value) {
    let like = doc.root.clone();
    for op in ops.as_array().into_iter().flatten() {
        let path = op["path"].as_array().cloned().unwrap_or_default();
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let mut node = std::sync::Arc::make_mut(&mut doc.root);
        for step in parents {
            node = match (&mut node.value, step) {
                (Value::Map(m), serde_json::Value::String(k)) => m.get_mut(k).expect("path"),
                (Value::Seq(s), serde_json::Value::Number(i)) => {
                    s.get_mut(i.as_u64().unwrap_or(0) as usize).expect("path")
                }
                _ => panic!("bad path {path:?}"),
            };
        }
        let new = json_node(&op["new"], &like);
        match (op["op"].as_str(), &mut node.value, last) {
            (Some("set" | "add"), Value::Map(m), serde_json::Value::String(k)) => {
                m.insert(Node::new(Value::Str(k.clone()), like.span), new);
            }
            (Some("set"), Value::Seq(s), serde_json::Value::Number(i)) => {
                s[i.as_u64().unwrap_or(0) as usize] = new;
            }
            (Some("delete"), Value::Map(m), serde_json::Value::String(k)) => {
                m.shift_remove(k);
            }
            other => panic!("unsupported op {other:?}"),
        }
    }
}

#[test]
fn every_golden_case_agrees() {
    let Some(corpus) = corpus() else {
        eprintln!("SKIP: every_golden_case_agrees: ../shared/corpus not found");
        return;
    };
    let tree = corpus.join("inferencex-aug2026");
    let mut total = 0;
    let mut failures = Vec::new();
    let matrix = corpus.join("goldens/matrix");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&matrix)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    cases.retain(|p| p.join("args.txt").is_file());
    cases.sort();
    for dir in &cases {
        total += 1;
        let got = run(read(&dir.join("args.txt")).trim(), &tree, |_| {});
        if let Err(e) = verdict(dir, got) {
            failures.push(format!("{}: {e}", dir.display()));
        }
    }
    let vdir = corpus.join("goldens/validation");
    for line in read(&vdir.join("cases.tsv")).lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if !matches!(cols.get(1), Some(&"generate" | &"accepted")) {
            continue;
        }
        total += 1;
        let dir = vdir.join(cols[0]);
        let mutation: serde_json::Value =
            serde_json::from_str(&read(&dir.join("mutation.json"))).expect("mutation.json");
        let file = mutation["mutated_file"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let args = read(&dir.join("args.txt"));
        let got = run(args.lines().next().unwrap_or(""), &tree, |docs| {
            for d in docs.iter_mut().filter(|d| d.path == Path::new(&file)) {
                apply(d, &mutation["ops"]);
            }
        });
        if let Err(e) = verdict(&dir, got) {
            failures.push(format!("{}: {e}", dir.display()));
        }
    }
    assert!(
        total >= 53,
        "expected at least 53 golden cases, found {total}"
    );
    assert!(
        failures.is_empty(),
        "{}/{total} agree; disagreements:\n{}",
        total - failures.len(),
        failures.join("\n")
    );
}
