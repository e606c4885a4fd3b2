//! `cargo xtask conformance yaml --random N --seed S`: seeded random YAML texts read by PyYAML
//! itself (`yaml.safe_load`, in the changelog differential's venv) and by infx-yaml, compared
//! text by text (docs/yaml.md, "Random differential").
//!
//! Each text is a small document of block and flow collections, plain, quoted and block
//! scalars, anchors, aliases and comments, with characters PyYAML's reader or scanner treats
//! specially (tabs, DEL, VT, ESC, C1 controls, NEL, LS, PS, U+FFFE, and the acceptable NBSP and
//! U+FEFF) mixed into every kind of place: inside and around scalars and keys, in comments and
//! before them, in flow collections, in indentation, on block scalar header lines, on blank
//! lines; and now and then an anchor name used twice. Compared: the verdict; when both load,
//! the value; when PyYAML's reader, its tab rule or its anchor rule refuses the text, infx must
//! refuse it with the same rule, message and character position (and the other way round).

use super::oracle::Rng;
use anyhow::Context as _;
use infx_yaml::{LoadOptions, Node, Value};
use serde_json::{Map, Value as J, json};
use std::path::Path;

/// `target/inferencex-oracle/V/bin/python`: the changelog differential's venv has PyYAML.
pub fn oracle() -> Result<std::path::PathBuf, String> {
    super::changelog_random::oracle().map(|(python, _)| python)
}

/// One generated text and what went into it.
#[derive(Debug, Clone)]
pub struct Case {
    pub text: String,
    pub what: Vec<&'static str>,
}

/// The characters mixed in, with how they are named in a case's description.
const SPECIALS: &[(char, &str)] = &[
    ('\t', "tab"),
    ('\t', "tab"),
    ('\t', "tab"),
    ('\u{7f}', "DEL"),
    ('\u{0b}', "VT"),
    ('\u{1b}', "ESC"),
    ('\u{85}', "NEL"),
    ('\u{2028}', "LS"),
    ('\u{2029}', "PS"),
    ('\u{80}', "C1"),
    ('\u{9f}', "C1"),
    ('\u{fffe}', "U+FFFE"),
    ('\u{a0}', "NBSP"),
    ('\u{feff}', "U+FEFF"),
];

const WORDS: &[&str] = &[
    "alpha",
    "b200",
    "fp8",
    "sglang",
    "x",
    "on",
    "no",
    "null",
    "12",
    "0x1f",
    "deep-seek",
    "a_b",
    "v0.5",
    "tp",
    "ep",
    "~",
    "true",
];

struct Gen<'a> {
    rng: &'a mut Rng,
    /// Per-slot chance (percent) of a special character.
    rate: u64,
    what: Vec<&'static str>,
    /// Anchors whose node is complete (an alias to an open one would be a recursive
    /// structure, which infx refuses by design and PyYAML builds).
    anchors: Vec<String>,
    /// The column of the block collection being written: a quoted scalar's second line goes
    /// deeper (PyYAML accepts it less indented; YAML 1.2 and infx do not, a difference this
    /// differential is not about).
    indent: usize,
}

impl Gen<'_> {
    /// A special character, at this slot's chance; "" otherwise.
    fn special(&mut self, place: &'static str) -> String {
        if !self.rng.chance(self.rate) {
            return String::new();
        }
        let (c, name) = *self.rng.pick(SPECIALS).unwrap_or(&('\t', "tab"));
        self.what.push(name);
        self.what.push(place);
        c.to_string()
    }

    fn word(&mut self) -> String {
        self.rng.pick(WORDS).copied().unwrap_or("x").to_string()
    }

    /// A space between tokens, sometimes with a special before or after it.
    fn sep(&mut self, place: &'static str) -> String {
        let pre = self.special(place);
        let post = self.special(place);
        format!("{pre} {post}")
    }

    /// As [`Gen::sep`], without NEL, LS or PS: a line break before a value would put the value
    /// on a line of its own at column 0, where PyYAML accepts a scalar at its key's column and
    /// YAML 1.2 (and infx) refuse it: a difference of structure, not of characters
    /// (docs/yaml.md, "Not matched").
    fn sep_unbroken(&mut self, place: &'static str) -> String {
        let s = self.sep(place);
        if s.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
            self.what.push("(break dropped)");
            return s.replace(['\u{85}', '\u{2028}', '\u{2029}'], "");
        }
        s
    }

    /// A plain scalar, perhaps with a special inside or at an end.
    fn plain(&mut self, place: &'static str) -> String {
        let mut s = self.word();
        match self.rng.below(3) {
            0 => {
                let sp = self.special(place);
                let w = self.word();
                s = format!("{s}{sp}{w}");
            }
            1 => {
                let sp = self.special(place);
                s.push_str(&sp);
            }
            _ => {
                let w = self.word();
                s = format!("{s} {w}");
            }
        }
        s
    }

    fn quoted(&mut self) -> String {
        let a = self.word();
        let sp = self.special("in a quoted scalar");
        let b = self.word();
        match self.rng.below(4) {
            0 => format!("'{a}{sp}{b}'"),
            1 => format!("\"{a}{sp}{b}\""),
            // Escapes the reader never sees as characters.
            2 => format!("\"{a}\\t{sp}\\x7f{b}\""),
            _ => {
                let lead = self.special("starting a quoted scalar's second line");
                let pad = " ".repeat(self.indent + 4);
                format!("\"{a}{sp}\n{pad}{lead}{b}\"")
            }
        }
    }

    /// A scalar in flow context.
    fn flow_item(&mut self) -> String {
        if self.rng.chance(30) {
            self.quoted()
        } else {
            self.plain("in a flow scalar")
        }
    }

    fn flow(&mut self) -> String {
        let n = 1 + self.rng.below(3);
        let mut items = Vec::new();
        let map = self.rng.chance(40);
        for _ in 0..n {
            let item = self.flow_item();
            if map {
                let k = self.word();
                let sp = self.sep("after a flow key's colon");
                items.push(format!("{k}:{sp}{item}"));
            } else {
                items.push(item);
            }
        }
        let mut out = String::new();
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
                out.push_str(&self.sep("after a comma in a flow collection"));
            }
            out.push_str(item);
        }
        let end = self.special("before a flow collection's end");
        if map {
            format!("{{{out}{end}}}")
        } else {
            format!("[{out}{end}]")
        }
    }

    fn comment(&mut self) -> String {
        if !self.rng.chance(30) {
            return String::new();
        }
        let before = self.special("before a comment");
        let inside = self.special("in a comment");
        let w = self.word();
        format!("{before} # {w}{inside} {w}")
    }

    /// An anchor before a node: a fresh name, or now and then one already used; the name is
    /// kept for aliases by [`Gen::done`] once the node is written.
    fn anchor(&mut self) -> (String, Option<String>) {
        if !self.rng.chance(20) {
            return (String::new(), None);
        }
        let name = if !self.anchors.is_empty() && self.rng.chance(25) {
            self.what.push("an anchor defined twice");
            self.rng
                .pick(&self.anchors)
                .cloned()
                .unwrap_or_else(|| "a".into())
        } else {
            format!("a{}", self.rng.below(1000))
        };
        let sp = self.sep_unbroken("after an anchor");
        (format!("&{name}{sp}"), Some(name))
    }

    fn done(&mut self, anchor: Option<String>) {
        if let Some(name) = anchor {
            self.anchors.push(name);
        }
    }

    /// A block scalar's header and content lines at `indent`.
    fn block_scalar(&mut self, indent: usize) -> String {
        let kind = if self.rng.chance(50) { "|" } else { ">" };
        let chomp = *self.rng.pick(&["", "-", "+"]).unwrap_or(&"");
        let head = self.special("on a block scalar's header line");
        let mut out = format!("{kind}{chomp}{head}");
        if self.rng.chance(20) {
            let sp = self.special("in a block scalar header's comment");
            out.push_str(&format!(" # c{sp}"));
        }
        let pad = " ".repeat(indent);
        for _ in 0..1 + self.rng.below(3) {
            let lead = self.special("in a block scalar's indentation");
            let w = self.word();
            let mid = self.special("in a block scalar's content");
            let w2 = self.word();
            if lead.is_empty() || self.rng.chance(50) {
                out.push_str(&format!("\n{pad}{lead}{w}{mid} {w2}"));
            } else {
                out.push_str(&format!("\n{lead}{pad}{w}{mid} {w2}"));
            }
        }
        out
    }

    /// A value after `key:` at `indent` (the key's column): inline, or on the next lines.
    fn value(&mut self, indent: usize, depth: usize) -> String {
        let (anchor, name) = self.anchor();
        let v = self.value_after(&anchor, indent, depth);
        self.done(name);
        v
    }

    fn value_after(&mut self, anchor: &str, indent: usize, depth: usize) -> String {
        let choice = self.rng.below(if depth > 2 { 5 } else { 7 });
        match choice {
            0 | 1 => {
                let sp = self.sep_unbroken("after a key's colon");
                let p = self.plain("in a plain scalar");
                let c = self.comment();
                format!("{sp}{anchor}{p}{c}")
            }
            2 => {
                let sp = self.sep_unbroken("after a key's colon");
                let q = self.quoted();
                let c = self.comment();
                format!("{sp}{anchor}{q}{c}")
            }
            3 => {
                let sp = self.sep_unbroken("after a key's colon");
                let f = self.flow();
                let c = self.comment();
                format!("{sp}{anchor}{f}{c}")
            }
            4 => {
                let sp = self.sep_unbroken("after a key's colon");
                if !self.anchors.is_empty() && self.rng.chance(50) {
                    let name = self.rng.pick(&self.anchors).cloned().unwrap_or_default();
                    format!("{sp}*{name}")
                } else {
                    let b = self.block_scalar(indent + 2);
                    format!("{sp}{anchor}{b}")
                }
            }
            5 => {
                let body = self.mapping(indent + 2, depth + 1);
                format!(" {anchor}\n{body}")
            }
            _ => {
                let body = self.sequence(indent + 2, depth + 1);
                format!(" {anchor}\n{body}")
            }
        }
    }

    fn key(&mut self) -> String {
        match self.rng.below(5) {
            0 => {
                let sp = self.special("in a key");
                format!("'k{sp}ey'")
            }
            1 => {
                let sp = self.special("in a key");
                format!("k{sp}ey")
            }
            _ => self.word(),
        }
    }

    fn line_prefix(&mut self, indent: usize) -> String {
        let pad = " ".repeat(indent);
        let sp = self.special("in indentation");
        if sp.is_empty() {
            return pad;
        }
        if self.rng.chance(50) {
            format!("{sp}{pad}")
        } else {
            format!("{pad}{sp}")
        }
    }

    fn mapping(&mut self, indent: usize, depth: usize) -> String {
        let mut lines = Vec::new();
        let mut keys = std::collections::HashSet::new();
        for _ in 0..1 + self.rng.below(3) {
            let k = self.key();
            // PyYAML keeps a key written twice silently; infx refuses it (not what this
            // differential is about).
            if !keys.insert(k.clone()) {
                continue;
            }
            let prefix = self.line_prefix(indent);
            self.indent = indent;
            let v = self.value(indent, depth);
            lines.push(format!("{prefix}{k}:{v}"));
            if self.rng.chance(10) {
                let sp = self.special("on a blank line");
                lines.push(sp);
            }
            if self.rng.chance(10) {
                let sp = self.special("in a full-line comment");
                lines.push(format!("{}# note{sp}", " ".repeat(indent)));
            }
        }
        lines.join("\n")
    }

    fn sequence(&mut self, indent: usize, depth: usize) -> String {
        let mut lines = Vec::new();
        for _ in 0..1 + self.rng.below(3) {
            let prefix = self.line_prefix(indent);
            self.indent = indent;
            let item = if depth < 3 && self.rng.chance(25) {
                let k = self.word();
                let v = self.value(indent + 2, depth + 1);
                format!("{k}:{v}")
            } else {
                let sp = self.sep("after a sequence dash");
                let (a, name) = self.anchor();
                let p = if self.rng.chance(30) {
                    self.flow()
                } else {
                    self.plain("in a plain scalar")
                };
                self.done(name);
                format!("{sp}{a}{p}")
            };
            let item = item.trim_start_matches(' ').to_string();
            lines.push(format!("{prefix}- {item}"));
        }
        lines.join("\n")
    }
}

/// Case `i` of `seed`.
pub fn make_case(seed: u64, i: usize) -> Case {
    let mut rng = Rng::new(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let rate = *rng.pick(&[0u64, 2, 4, 8]).unwrap_or(&4);
    let mut g = Gen {
        rng: &mut rng,
        rate,
        what: Vec::new(),
        anchors: Vec::new(),
        indent: 0,
    };
    let mut text = if g.rng.chance(80) {
        g.mapping(0, 0)
    } else {
        g.sequence(0, 0)
    };
    if g.rng.chance(70) {
        text.push('\n');
    }
    let what = g.what;
    Case { text, what }
}

pub fn cases(count: usize, seed: u64) -> Vec<Case> {
    (0..count).map(|i| make_case(seed, i)).collect()
}

/// infx-yaml's value as the oracle writes PyYAML's (floats as `repr`, keys as `str`).
fn json_of(node: &Node) -> J {
    match &node.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => json!(i),
        Value::Float(f) => J::String(python_float_repr(f.value)),
        Value::Str(s) | Value::Timestamp(s) => J::String(s.clone()),
        Value::Seq(items) => J::Array(items.iter().map(json_of).collect()),
        Value::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m.iter_nodes() {
                out.insert(key_str(k), json_of(v));
            }
            J::Object(out)
        }
    }
}

fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else if f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

/// Python's `str()` of a key.
fn key_str(k: &Node) -> String {
    match &k.value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => python_float_repr(f.value),
        Value::Str(s) | Value::Timestamp(s) => s.clone(),
        _ => format!("{:?}", json_of(k)),
    }
}

/// infx-yaml's answer for `text`, as the oracle answers: `ok`/`value`, or the error's code,
/// message and character position.
pub fn ours(text: &str) -> J {
    let opts = LoadOptions {
        duplicate_keys: infx_yaml::DuplicateKeys::KeepLast,
        ..LoadOptions::default()
    };
    match infx_yaml::parse_str_with(Path::new("case.yaml"), text, &opts) {
        Ok(node) => json!({"ok": true, "value": json_of(&node)}),
        Err(d) => {
            let index = d
                .span
                .and_then(|s| text.get(..s.start.offset()))
                .map_or(-1, |t| t.chars().count() as i64);
            json!({"ok": false, "code": d.code.as_str(), "message": d.message, "index": index})
        }
    }
}

/// Which of PyYAML's character rules refused a text (`None`: another error).
fn rule_of_theirs(theirs: &J) -> Option<&'static str> {
    let kind = theirs["kind"].as_str().unwrap_or("");
    let problem = theirs["problem"].as_str().unwrap_or("");
    let context = theirs["context"].as_str().unwrap_or("");
    if kind == "ReaderError" {
        Some("yaml/character")
    } else if problem.contains("'\\t'") {
        Some("yaml/tab")
    } else if context.starts_with("found duplicate anchor") {
        Some("yaml/duplicate-anchor")
    } else {
        None
    }
}

/// A value with every YAML 1.1 line break (NEL, LS, PS) and every run of whitespace in its
/// strings read as one space: where infx's folding of those breaks may differ from PyYAML's.
fn folded(v: &J) -> J {
    match v {
        J::String(s) => J::String(
            s.replace(['\u{85}', '\u{2028}', '\u{2029}'], "\n")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        ),
        J::Array(items) => J::Array(items.iter().map(folded).collect()),
        J::Object(m) => J::Object(
            m.iter()
                .map(|(k, v)| match folded(&J::String(k.clone())) {
                    J::String(k) => (k, folded(v)),
                    _ => (k.clone(), folded(v)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `Ok(None)` when infx's answer agrees with PyYAML's, `Ok(Some(why))` for the documented
/// difference (docs/yaml.md, "Characters and tabs": a NEL, LS or PS inside a quoted, flow or
/// block scalar is folded or kept where PyYAML keeps or folds it; the verdict is the same),
/// else what differs.
pub fn compare(ours: &J, theirs: &J, text: &str) -> Result<Option<String>, String> {
    let (o_ok, t_ok) = (ours["ok"] == J::Bool(true), theirs["ok"] == J::Bool(true));
    match (o_ok, t_ok) {
        (true, true) if ours["value"] == theirs["value"] => Ok(None),
        (true, true)
            if text.contains(['\u{85}', '\u{2028}', '\u{2029}'])
                && folded(&ours["value"]) == folded(&theirs["value"]) =>
        {
            Ok(Some(format!(
                "a YAML 1.1 line break in a scalar read differently: infx {} / PyYAML {}",
                ours["value"], theirs["value"]
            )))
        }
        (true, true) => Err(format!(
            "values differ: infx {} / PyYAML {}",
            ours["value"], theirs["value"]
        )),
        (true, false) => Err(format!("infx loads it, PyYAML refuses: {theirs}")),
        (false, true) => Err(format!("PyYAML loads it, infx refuses: {ours}")),
        (false, false) => {
            let code = ours["code"].as_str().unwrap_or("");
            let ours_rule = ["yaml/character", "yaml/tab", "yaml/duplicate-anchor"]
                .contains(&code)
                .then_some(code);
            let theirs_rule = rule_of_theirs(theirs);
            if ours_rule.is_none() && theirs_rule.is_none() {
                return Ok(None);
            }
            if ours_rule != theirs_rule {
                // Two faults in one text, one of them a character that moves structure (a
                // YAML 1.1 line break puts what follows at column 0; NBSP and U+FEFF are not
                // spaces to PyYAML): which one PyYAML's parser meets first depends on its
                // token look-ahead, which infx does not reproduce. Both refuse the text
                // (docs/yaml.md, "Not matched").
                if text.contains(['\u{85}', '\u{2028}', '\u{2029}', '\u{a0}', '\u{feff}']) {
                    return Ok(Some(format!(
                        "both refuse; the first of two faults differs: infx {ours} / PyYAML {theirs}"
                    )));
                }
                return Err(format!("different rules: infx {ours} / PyYAML {theirs}"));
            }
            if ours["index"] != theirs["index"] {
                return Err(format!("positions differ: infx {ours} / PyYAML {theirs}"));
            }
            let message = ours["message"].as_str().unwrap_or("");
            let wanted = match theirs_rule {
                Some("yaml/duplicate-anchor") => theirs["context"].as_str(),
                _ => theirs["problem"].as_str(),
            }
            .unwrap_or("");
            let wanted = wanted.trim_end_matches("; first occurrence");
            if !message.contains(wanted) {
                return Err(format!("messages differ: infx {ours} / PyYAML {theirs}"));
            }
            Ok(None)
        }
    }
}

/// Runs `which` cases of `seed` through both readers. `Ok(None)`: no oracle (SKIP printed).
pub fn run_selected(
    seed: u64,
    which: &super::seeds::Cases,
) -> anyhow::Result<Option<super::Outcome>> {
    let python = match oracle() {
        Ok(p) => p,
        Err(why) => {
            println!("SKIP: yaml random differential: {why}");
            return Ok(None);
        }
    };
    let numbered: Vec<(usize, Case)> = match which {
        super::seeds::Cases::First(n) => cases(*n, seed).into_iter().enumerate().collect(),
        super::seeds::Cases::Only(list) => list.iter().map(|&i| (i, make_case(seed, i))).collect(),
    };
    let mut input = String::new();
    for (_, c) in &numbered {
        input.push_str(&json!({"text": c.text}).to_string());
        input.push('\n');
    }
    let script = xtask::paths::checkout_root().join("xtask-dev/oracle/yaml_oracle.py");
    let answers =
        super::oracle::json_lines_exchange(&python, &script, &script, &input, numbered.len())
            .context("PyYAML oracle")?;
    let mut outcome = super::Outcome {
        area: "yaml (random texts)",
        total: numbered.len(),
        ..Default::default()
    };
    let (mut loaded, mut refused, mut specials) = (0, 0, 0);
    for ((i, c), theirs) in numbered.iter().zip(&answers) {
        if theirs["ok"] == J::Bool(true) {
            loaded += 1;
        } else {
            refused += 1;
        }
        specials += usize::from(!c.what.is_empty());
        match compare(&ours(&c.text), theirs, &c.text) {
            Ok(None) => outcome.agree += 1,
            Ok(Some(why)) => {
                outcome.agree += 1;
                outcome.explained.push(format!("case {i}: {why}"));
            }
            Err(why) => outcome.disagreements.push(format!(
                "case {i} (seed {seed}; {}; text {:?}): {why}",
                c.what.join(" "),
                c.text
            )),
        }
    }
    println!(
        "  {} texts ({specials} with special characters): PyYAML loaded {loaded}, refused {refused}",
        numbered.len()
    );
    Ok(Some(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_makes_the_same_texts_and_mixes_specials_in() {
        let a = cases(200, 7);
        let b = cases(200, 7);
        assert!(a.iter().zip(&b).all(|(x, y)| x.text == y.text));
        let with = a.iter().filter(|c| !c.what.is_empty()).count();
        assert!(with > 50, "{with} of 200 texts have a special character");
        assert!(a.iter().any(|c| c.text.contains('\t')));
    }

    #[test]
    fn rules_must_match_by_code_position_and_message() {
        let theirs = json!({"ok": false, "kind": "ReaderError",
            "problem": "unacceptable character #x007f: special characters are not allowed", "index": 4});
        let ours_ok = ours("a: b\u{7f}");
        assert_eq!(compare(&ours_ok, &theirs, "a: b\u{7f}"), Ok(None));
        let shifted = json!({"ok": false, "code": "yaml/character",
            "message": "unacceptable character #x007f: special characters are not allowed", "index": 3});
        assert!(compare(&shifted, &theirs, "").is_err());
        let other = json!({"ok": false, "code": "yaml/syntax", "message": "x", "index": 4});
        assert!(compare(&other, &theirs, "").is_err());
    }
}
