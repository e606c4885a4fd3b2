//! Node positions come from the parser's markers when they agree with the line index (no `\r`,
//! no byte order mark; docs/performance.md): every span of every node must equal what
//! `LineIndex` computes for the same byte offset, on hand-written shapes and on the whole
//! August corpus.

use infx_report::LineIndex;
use infx_yaml::{Node, Value, parse_str};
use std::path::{Path, PathBuf};

/// Every node's span (keys included) agrees with the line index; returns the nodes checked.
fn assert_positions_agree(path: &Path, text: &str) -> usize {
    let root = match parse_str(path, text) {
        Ok(r) => r,
        // A file that does not load has no spans to compare.
        Err(_) => return 0,
    };
    let idx = LineIndex::new(text);
    let mut todo: Vec<&Node> = vec![&root];
    let mut checked = 0;
    while let Some(n) = todo.pop() {
        for p in [n.span.start, n.span.end] {
            assert_eq!(
                p,
                idx.pos(text, p.offset()),
                "{}: position of a node at byte {}",
                path.display(),
                p.offset()
            );
        }
        checked += 1;
        match &n.value {
            Value::Seq(items) => todo.extend(items),
            Value::Map(m) => todo.extend(m.iter_nodes().flat_map(|(k, v)| [k, v])),
            _ => {}
        }
    }
    checked
}

#[test]
fn hand_written_shapes() {
    let shapes = [
        "a: 1\nb: [x, y, {z: 'q'}]\n",
        "key: |\n  block\n  text\nnext: >-\n  folded\n  more\n",
        "é: ünïcode\nlist:\n  - \"naïve\"  # comment\n  - 'it''s'\n",
        "\tkey: value\n",
        "a:\n\t- 1\n",
        "---\nbase: &b {x: 1}\nuse: *b\nmerged:\n  <<: *b\n  y: 2\n",
        "plain: multi\n  line\n  scalar\nlast: end",
        "emoji: \"😀 x\"\n😀: 1\n",
        "a: 1\r\nb: 2\r\n",
        "\u{feff}a: 1\nb: [1, 2]\n",
        "lone: cr\rnext: 1\n",
        "",
        "# only a comment\n",
    ];
    for text in shapes {
        assert_positions_agree(Path::new("shape.yaml"), text);
    }
}

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    let aug = dir.join("inferencex-aug2026");
    aug.is_dir().then_some(aug)
}

#[test]
fn every_node_of_the_august_corpus() {
    let Some(aug) = corpus() else {
        eprintln!("SKIP: every_node_of_the_august_corpus: ../shared/corpus not found");
        return;
    };
    let files = infx_yaml::yaml_files(&aug).unwrap_or_default();
    assert!(files.len() > 100, "only {} YAML files", files.len());
    let mut nodes = 0;
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        nodes += assert_positions_agree(f, &text);
    }
    assert!(nodes > 100_000, "only {nodes} nodes checked");
}

proptest::proptest! {
    #[test]
    fn yamlish_text_positions_agree(s in "[a-zé:\\-\\[\\]{}&*!|>'\" \n\t#,0-9.<]{0,120}") {
        assert_positions_agree(Path::new("p.yaml"), &s);
    }
}
