//! The loader's fast path against the parser (docs/yaml.md, "The fast path"): wherever the fast
//! path reads a text alone, its tree (every node's value, span and style) and its duplicate
//! keys must be the parser's, and where the parser fails it must have given up.

use infx_yaml::{DuplicateKeys, LoadOptions, build_both_ways, dump};
use std::path::{Path, PathBuf};

fn opts() -> LoadOptions {
    LoadOptions {
        duplicate_keys: DuplicateKeys::Record,
        ..LoadOptions::default()
    }
}

/// Whether the fast path read `text` alone; panics when its reading differs from the parser's.
fn agrees(path: &Path, text: &str) -> bool {
    let ((parsed, dups), fast) = build_both_ways(path, text, &opts());
    let Some((root, fast_dups)) = fast else {
        return false;
    };
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => panic!(
            "{}: the fast path read a text the parser refuses ({e:?}):\n{text}",
            path.display()
        ),
    };
    assert_eq!(
        dump(&parsed),
        dump(&root),
        "{}: the fast path's tree differs:\n{text}",
        path.display()
    );
    assert_eq!(
        format!("{dups:?}"),
        format!("{fast_dups:?}"),
        "{}: the fast path's duplicate keys differ:\n{text}",
        path.display()
    );
    true
}

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFX_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.join("inferencex-aug2026").is_dir().then_some(dir)
}

/// (files, bytes) under `dir`, and those the fast path read alone.
fn check_tree(dir: &Path) -> [usize; 4] {
    let mut n = [0; 4];
    for f in infx_yaml::yaml_files(dir).unwrap_or_default() {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        n[0] += 1;
        n[1] += text.len();
        if agrees(&f, &text) {
            n[2] += 1;
            n[3] += text.len();
        }
    }
    n
}

#[test]
fn the_corpus_reads_the_same_both_ways() {
    let bundled = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../inferencex-e2e");
    let [files, _, fast_files, _] = check_tree(&bundled);
    assert!(files > 10 && fast_files > files / 2, "{fast_files}/{files}");
    let Some(corpus) = corpus() else {
        eprintln!("SKIP: the_corpus_reads_the_same_both_ways: ../shared/corpus not found");
        return;
    };
    let [files, bytes, fast_files, fast_bytes] = check_tree(&corpus.join("inferencex-aug2026"));
    // The point of the fast path is that it reads nearly all of a real tree (81 % of the
    // August tree's bytes when it was written); far less means it gives up on common YAML.
    assert!(
        fast_bytes * 10 > bytes * 7,
        "the fast path read {fast_bytes} of {bytes} bytes ({fast_files} of {files} files)"
    );
    for dir in [
        "inferencex-oct2026",
        "srtctl-golden",
        "goldens",
        "srt-slurm-schema",
    ] {
        check_tree(&corpus.join(dir));
    }
}

#[test]
fn shapes_read_fast_or_given_to_the_parser() {
    let read = [
        "a: 1\n",
        "a: 1",
        "a:\n  b: 1\n  c:\n    - x\n    -\n    - y: 1\n      z:\nd: [1, 2 , x y ]\n",
        "g:\n- 1\n-   # c\n-\n- k: v\n  l: {m: 1, n: [a, b], o: }\nh: []\ni: {}\n",
        "g:\n-   # c\n  x: 1\n",
        "k : v # c\n'q''s': \"d q\"\n",
        "url: http://x.y/z#f\nt: 12:30\nn: -1\nf: -x\ni: nvcr.io#nvidia/x\n",
        "a: b\na: c\n",
        "a: [1, [2, [3]]]   # c\n",
        "é: ü # ç\nb: 'ß'\n",
        "# only\n\na: 1\n\n# end\n",
        "a: {b: [1, 2] , c: 'x' }\n",
        "a: 1\n   \n",
        "yes: no\n1: 2\n~: null\n1.5: .inf\n",
        "a: \"b\\n\\\"c\\x41\"\n",
        "a:\n  b c\nd:\n  - 1\ne:\n -\n   'x'\n",
        "a: &x 1\nb: *x\nc: &m\n  k: v\nd: *m\ne:\n  <<: *m\n  z: 1\nf: &s\n- 1\ng: &fl {p: 1}\nh: [*x, &y 3, *y]\n",
        "i: {image: vllm/x:nightly-1, b: a:b}\n",
    ];
    let given = [
        "a: &x\nb: 1\n",
        "a: *y\n",
        "a: &x 1\nb: &x 2\n",
        "- &a k: v\n",
        "a: [&x, 1]\n",
        "a: !!str 1\n",
        "a: |\n  x\n",
        "a: >\n  x\n",
        "a: b\n  c\n",
        "a: 'b\n  c'\n",
        "a: [1,\n  2]\n",
        "---\na: 1\n",
        "a: 1\n...\n",
        "? a\n: b\n",
        "a: b: c\n",
        "a: 1\r\n",
        "a:\n\t- 1\n",
        "a: 99999999999999999999\n",
        "a:\n  b: 1\n c: 2\n",
        "a: 1\n- b\n",
        "plain\n",
        "  a: 1\n",
        "a: {b:1}\n",
        "- a\n- - b\n",
        "a: [1, ]\n",
        "a: {b: 1,}\n",
        "a: [b: 1]\n",
        "[a]: 1\n",
        "a: 'x' y\n",
        "a: [x] y\n",
        "a: x\n# c\n   y\n",
        "",
        "# nothing\n",
    ];
    for text in read {
        assert!(agrees(Path::new("t.yaml"), text), "not read fast:\n{text}");
    }
    for text in given {
        assert!(!agrees(Path::new("t.yaml"), text), "read fast:\n{text}");
    }
}

/// Scalars as written: mostly what real files hold, some the fast path must give up on.
const SCALARS: &[&str] = &[
    "a",
    "1",
    "-1",
    "x y",
    "'it''s'",
    "\"dq\"",
    "http://x.y/z",
    "x#y",
    "é",
    "yes",
    "~",
    "null",
    "1.5",
    ".inf",
    "0x1f",
    "2020-01-01",
    "12:30",
    "'a b'",
    "\"é ü\"",
    "-x",
    "a-b",
    "1_000",
    "0o17",
    "+1",
    "1e3",
    "'#'",
    "\"a'b\"",
    "a'b",
    "a\"b",
    "nvcr.io#nvidia/x:1.0",
    "''",
    "\"\"",
    "=",
    "<<",
    "99999999999999999999",
    "&a x",
    "*a",
    "!t x",
    "|",
    "a: b",
    "'a\n  b'",
    "\"a\\tb\"",
    "? x",
    "@x",
    "a #c",
    r#""a\"b""#,
    r#""\\""#,
    r#""\x41\u00e9\U0001F600""#,
    r#""\/\ \N\_\0\e""#,
    r#""\q""#,
    r#""\uD800""#,
    r#""\x4""#,
    "\"a\\\n b\"",
    "*a1",
    "*a2",
    "*a0",
    "&a1 x",
    "a:b",
    "vllm/x:nightly-1",
    "&a-b_c 1",
    "*a-b_c",
    "&a1",
];
/// Keys as written.
const KEYS: &[&str] = &[
    "a", "b", "key", "a b", "'q'", "\"d\"", "1", "-x", "x#y", "é", "yes", "1.5", "~", "k-1",
    "'a''b'", "a", "b", "c", "d", "e", "<<", "[a]", "?a", "&a a",
];

/// A tree to write out: scalars are indexes into [`SCALARS`], keys into [`KEYS`].
#[derive(Debug, Clone)]
enum Tree {
    Scalar(usize),
    Seq(Vec<Tree>),
    Map(Vec<(usize, Tree)>),
}

fn tree() -> impl proptest::strategy::Strategy<Value = Tree> {
    use proptest::prelude::*;
    let leaf = (0..SCALARS.len()).prop_map(Tree::Scalar);
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Tree::Seq),
            proptest::collection::vec((0..KEYS.len(), inner), 0..4).prop_map(Tree::Map),
        ]
    })
}

/// Writes a tree as block YAML, each choice (indentation, flow or block, comments, blank lines,
/// spaces) taken from `choices` in turn.
struct Writer<'c> {
    out: String,
    choices: &'c [u8],
    next: usize,
}

impl Writer<'_> {
    fn choose(&mut self, n: u8) -> u8 {
        let c = self
            .choices
            .get(self.next % self.choices.len().max(1))
            .copied()
            .unwrap_or(0);
        self.next += 1;
        c % n
    }
    fn line_end(&mut self) {
        match self.choose(12) {
            0 => self.out.push_str("  # c"),
            1 => self.out.push_str("   "),
            _ => {}
        }
        self.out.push('\n');
        match self.choose(14) {
            0 => self.out.push('\n'),
            1 => {
                let n = self.choose(5) as usize;
                self.out.push_str(&" ".repeat(n));
                self.out.push_str("# between\n");
            }
            2 => self.out.push_str("  \n"),
            _ => {}
        }
    }
    /// Now and then an anchor before a collection: a new name, or one used already.
    fn maybe_anchor(&mut self) {
        if self.choose(5) == 0 {
            let n = self.choose(4);
            self.out.push_str(&format!("&a{n} "));
        }
    }
    fn flow(&mut self, t: &Tree) {
        let sp = |w: &mut Self| {
            if w.choose(3) == 0 {
                w.out.push(' ');
            }
        };
        match t {
            Tree::Scalar(i) => self.out.push_str(SCALARS[*i]),
            Tree::Seq(items) => {
                self.maybe_anchor();
                self.out.push('[');
                sp(self);
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        self.out.push(',');
                        sp(self);
                    }
                    self.flow(item);
                    sp(self);
                }
                self.out.push(']');
            }
            Tree::Map(pairs) => {
                self.maybe_anchor();
                self.out.push('{');
                sp(self);
                for (n, (k, v)) in pairs.iter().enumerate() {
                    if n > 0 {
                        self.out.push(',');
                        sp(self);
                    }
                    self.out.push_str(KEYS[*k]);
                    self.out.push(':');
                    if self.choose(4) > 0 || !matches!(v, Tree::Scalar(_)) {
                        self.out.push(' ');
                        self.flow(v);
                    }
                    sp(self);
                }
                self.out.push('}');
            }
        }
    }
    /// `t` after `key:` or `-` on a line: inline, or a block on the next lines at `indent`.
    fn after(&mut self, t: &Tree, indent: usize, in_map: bool) {
        let block = match t {
            Tree::Scalar(_) => false,
            Tree::Seq(v) => !v.is_empty() && self.choose(4) > 0,
            Tree::Map(v) => !v.is_empty() && self.choose(4) > 0,
        };
        if !block {
            if self.choose(8) == 0 {
                // On the next line, deeper.
                self.line_end();
                let deeper = indent + 1 + self.choose(4) as usize;
                self.out.push_str(&" ".repeat(deeper));
            } else {
                self.out.push(' ');
            }
            self.flow(t);
            self.line_end();
            return;
        }
        if self.choose(4) == 0 {
            self.out.push(' ');
            self.maybe_anchor();
            let kept = self.out.trim_end_matches(' ').len();
            self.out.truncate(kept);
        }
        self.line_end();
        let deeper = indent + [2, 2, 1, 4][self.choose(4) as usize];
        let at = match t {
            // A sequence under a key may sit at the key's column (indentless).
            Tree::Seq(_) if in_map && self.choose(2) == 0 => indent,
            _ => deeper,
        };
        self.block(t, at);
    }
    fn block(&mut self, t: &Tree, indent: usize) {
        match t {
            Tree::Scalar(_) => self.flow(t),
            Tree::Seq(items) => {
                for item in items {
                    self.out.push_str(&" ".repeat(indent));
                    self.out.push('-');
                    match item {
                        // `- k: v`: the mapping starts on the dash's line.
                        Tree::Map(pairs) if !pairs.is_empty() && self.choose(2) == 0 => {
                            let gap = 1 + self.choose(2) as usize;
                            self.out.push_str(&" ".repeat(gap));
                            self.map_entries(pairs, indent + 1 + gap, true);
                        }
                        Tree::Scalar(i) if SCALARS[*i].is_empty() => self.line_end(),
                        _ => self.after(item, indent, false),
                    }
                }
            }
            Tree::Map(pairs) => self.map_entries(pairs, indent, false),
        }
    }
    fn map_entries(&mut self, pairs: &[(usize, Tree)], indent: usize, first_inline: bool) {
        for (n, (k, v)) in pairs.iter().enumerate() {
            if n > 0 || !first_inline {
                self.out.push_str(&" ".repeat(indent));
            }
            self.out.push_str(KEYS[*k]);
            if self.choose(10) == 0 {
                self.out.push(' ');
            }
            self.out.push(':');
            self.after(v, indent, true);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]
    #[test]
    fn generated_texts_read_the_same_both_ways(
        t in tree(),
        choices in proptest::collection::vec(proptest::num::u8::ANY, 1..64),
        trim_end: bool,
    ) {
        let root = match t {
            Tree::Scalar(i) => Tree::Map(vec![(0, Tree::Scalar(i))]),
            t => t,
        };
        let mut w = Writer { out: String::new(), choices: &choices, next: 0 };
        w.block(&root, 0);
        let mut text = w.out;
        if trim_end {
            let kept = text.trim_end_matches(['\n', ' ']).len();
            text.truncate(kept);
        }
        agrees(Path::new("g.yaml"), &text);
    }
}
