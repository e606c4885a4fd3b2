//! Master-config keys of one revision and the changelog's `config-keys` resolution
//! (`*` is the only wildcard; full match; first-seen order; zero matches is an error).

use crate::codes;
use infx_report::Code;
use infx_yaml::{LoadOptions, Value};
use std::collections::HashSet;
use std::path::Path;

/// The top-level keys of the merged master configs, AMD first, then NVIDIA, in file order.
#[derive(Debug, Clone, Default)]
pub struct MasterKeys {
    keys: Vec<String>,
    set: HashSet<String>,
}

/// A failure to load master configs or to resolve a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// [`codes::MASTER_CONFIGS`] or [`codes::CONFIG_KEY`].
    pub code: Code,
    pub message: String,
    pub help: Option<String>,
}

impl MasterKeys {
    pub fn from_keys<I: IntoIterator<Item = String>>(keys: I) -> Self {
        let mut m = MasterKeys::default();
        for k in keys {
            if m.set.insert(k.clone()) {
                m.keys.push(k);
            }
        }
        m
    }

    /// Loads the masters as upstream's `load_config_files(…, validate=False)`: each file a
    /// mapping (PyYAML semantics: a duplicate key inside one file is tolerated), no `*` in a
    /// key, no key in two files. `files` = `(path for messages, text)` in merge order.
    pub fn load(files: &[(&str, &str)]) -> Result<MasterKeys, KeyError> {
        let mut out = MasterKeys::default();
        let opts = LoadOptions {
            duplicate_keys: infx_yaml::DuplicateKeys::KeepLast,
            ..LoadOptions::default()
        };
        for (path, text) in files {
            // Fast path: only the top-level keys are needed, so scan events without building
            // the tree; anything unusual falls back to the full loader below.
            if let Some(keys) = scan_top_keys(text) {
                let keys = keys.map_err(|e| KeyError {
                    message: format!("{path} is {}", e.message),
                    ..e
                })?;
                if let Some(k) = keys.iter().find(|k| k.contains('*')) {
                    return Err(KeyError {
                        code: codes::MASTER_CONFIGS,
                        message: format!(
                            " Wildcard '*' is not allowed in master config keys: '{k}'"
                        ),
                        help: Some(
                            "rename the config key; '*' is reserved for changelog patterns".into(),
                        ),
                    });
                }
                out = MasterKeys::merge(&[
                    (String::new(), out.keys.clone()),
                    (path.to_string(), keys),
                ])?;
                continue;
            }
            let root =
                infx_yaml::parse_str_with(Path::new(path), text, &opts).map_err(|d| KeyError {
                    code: codes::MASTER_CONFIGS,
                    message: format!("{path} is not valid YAML: {}", d.message),
                    help: d.help,
                })?;
            let Value::Map(m) = &root.value else {
                return Err(KeyError {
                    code: codes::MASTER_CONFIGS,
                    message: format!("Config file '{path}' must contain a dictionary"),
                    help: None,
                });
            };
            let mut dups = Vec::new();
            let mut these = Vec::new();
            for (k, _) in m.iter_nodes() {
                let key = match &k.value {
                    Value::Str(s) => s.clone(),
                    other => format!("{other:?}"),
                };
                if key.contains('*') {
                    return Err(KeyError {
                        code: codes::MASTER_CONFIGS,
                        message: format!(
                            " Wildcard '*' is not allowed in master config keys: '{key}'"
                        ),
                        help: Some(
                            "rename the config key; '*' is reserved for changelog patterns".into(),
                        ),
                    });
                }
                if out.set.contains(&key) {
                    dups.push(key.clone());
                }
                these.push(key);
            }
            if !dups.is_empty() {
                dups.sort();
                return Err(KeyError {
                    code: codes::MASTER_CONFIGS,
                    message: format!(
                        "Duplicate configuration keys found in '{path}': {}",
                        dups.join(", ")
                    ),
                    help: Some("a config key may live in only one master file".into()),
                });
            }
            for k in these {
                if out.set.insert(k.clone()) {
                    out.keys.push(k);
                }
            }
        }
        Ok(out)
    }

    /// Merges per-file key lists (each already loaded with [`MasterKeys::load`]) with the
    /// cross-file rule: a key in two files is an error.
    pub fn merge(files: &[(String, Vec<String>)]) -> Result<MasterKeys, KeyError> {
        let mut out = MasterKeys::default();
        for (path, keys) in files {
            let mut dups: Vec<&String> = keys.iter().filter(|k| out.set.contains(*k)).collect();
            if !dups.is_empty() {
                dups.sort();
                dups.dedup();
                return Err(KeyError {
                    code: codes::MASTER_CONFIGS,
                    message: format!(
                        "Duplicate configuration keys found in '{path}': {}",
                        dups.iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    help: Some("a config key may live in only one master file".into()),
                });
            }
            for k in keys {
                if out.set.insert(k.clone()) {
                    out.keys.push(k.clone());
                }
            }
        }
        Ok(out)
    }

    pub fn keys(&self) -> &[String] {
        &self.keys
    }
    pub fn contains(&self, k: &str) -> bool {
        self.set.contains(k)
    }
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The top-level keys of a YAML mapping document from the event stream, PyYAML order (first
/// position wins for a repeated key). `None` = not a plain case (root not a mapping, a
/// non-string-looking or complex key, merge keys, tags, several documents, an alias to an
/// unknown anchor): use the full loader. `Some(Err)` = a YAML syntax error. An event scan, not
/// [`infx_yaml::top_level_sections`]' line scan: a file the full loader rejects must fail here
/// too.
fn scan_top_keys(text: &str) -> Option<Result<Vec<String>, KeyError>> {
    use saphyr_parser::{Event, Parser, ScalarStyle};
    let mut parser = Parser::new_from_str(text);
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut docs = 0;
    let mut root_seen = false;
    let mut anchors: HashSet<usize> = HashSet::new();
    let mut keys: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    while let Some(ev) = parser.next_event() {
        let (ev, _) = match ev {
            Ok(e) => e,
            Err(e) => {
                return Some(Err(KeyError {
                    code: codes::MASTER_CONFIGS,
                    message: format!("not valid YAML: {} at line {}", e.info(), e.marker().line()),
                    help: None,
                }));
            }
        };
        let at_key = depth == 1 && expect_key;
        let is_map = matches!(ev, Event::MappingStart(..));
        match ev {
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                docs += 1;
                if docs > 1 {
                    return None;
                }
            }
            Event::MappingStart(anchor, tag) | Event::SequenceStart(anchor, tag) => {
                if tag.is_some() || at_key || (depth == 0 && (!is_map || root_seen)) {
                    return None;
                }
                if anchor != 0 {
                    anchors.insert(anchor);
                }
                if depth == 0 {
                    root_seen = true;
                    expect_key = true;
                } else if depth == 1 {
                    expect_key = true; // the value of a top-level key ends here
                }
                depth += 1;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                depth = depth.checked_sub(1)?;
            }
            Event::Alias(id) => {
                if at_key || !anchors.contains(&id) || depth == 0 {
                    return None;
                }
                if depth == 1 {
                    expect_key = true;
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                if tag.is_some() || depth == 0 {
                    return None;
                }
                if anchor != 0 {
                    anchors.insert(anchor);
                }
                if at_key {
                    if anchor != 0 || (style == ScalarStyle::Plain && !plain_is_str(&value)) {
                        return None;
                    }
                    if seen.insert(value.to_string()) {
                        keys.push(value.into_owned());
                    }
                    expect_key = false;
                } else if depth == 1 {
                    expect_key = true;
                }
            }
        }
    }
    root_seen.then_some(Ok(keys))
}

/// A plain scalar that YAML 1.1 certainly reads as a string (has a letter other than e/E, is
/// not a bool/null word, not `.inf`/`.nan`, not the merge key).
fn plain_is_str(s: &str) -> bool {
    const WORDS: &[&str] = &["y", "n", "yes", "no", "true", "false", "on", "off", "null"];
    let lower = s.to_ascii_lowercase();
    !s.is_empty()
        && s != "<<"
        && !WORDS.contains(&lower.as_str())
        && !s.starts_with(['.', '+', '-', '~', '='])
        && s.chars().any(|c| c.is_alphabetic() && c != 'e' && c != 'E')
}

/// Full match of `pat` where `*` matches any run of characters except a newline (Python
/// `re.fullmatch` with `.*`); every other character is literal (`?` and `[` included). Not
/// `infx_fs::fnmatch`: upstream resolves config-keys with a regex, not fnmatch
/// (docs/changelog.md).
pub(crate) fn star_match(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && p[i] != '*' && p[i] == t[j] {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            // `.` does not match a newline: a star cannot swallow one.
            if t[sj] == '\n' {
                return false;
            }
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == '*' {
        i += 1;
    }
    i == p.len()
}

/// Resolves an entry's `config-keys` (upstream `get_config_keys_from_master`).
pub fn resolve_keys(patterns: &[String], master: &MasterKeys) -> Result<Vec<String>, KeyError> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for p in patterns {
        if p.contains('*') {
            let matched: Vec<&String> = master.keys.iter().filter(|k| star_match(p, k)).collect();
            if matched.is_empty() {
                return Err(KeyError {
                    code: codes::CONFIG_KEY,
                    message: format!("No config keys matched the wildcard pattern '{p}' in master configs."),
                    help: Some("check the pattern against the keys of configs/*-master.yaml at this revision".into()),
                });
            }
            for k in matched {
                if seen.insert(k) {
                    out.push(k.clone());
                }
            }
        } else if let Some(k) = master.set.get(p.as_str()) {
            if seen.insert(k) {
                out.push(k.clone());
            }
        } else {
            let typo = infx_report::nearest(p, master.keys.iter().map(String::as_str));
            let near: Vec<&str> = master
                .keys
                .iter()
                .filter(|k| k.starts_with(p.split('-').next().unwrap_or("")))
                .take(3)
                .map(String::as_str)
                .collect();
            return Err(KeyError {
                code: codes::CONFIG_KEY,
                message: format!("Config key '{p}' not found in master configs."),
                help: Some(match (typo, near.is_empty()) {
                    (Some(t), _) => format!("did you mean `{t}`?"),
                    (None, true) => "use a key of configs/amd-master.yaml or configs/nvidia-master.yaml (or a pattern with *)".into(),
                    (None, false) => format!("did you mean one of: {}?", near.join(", ")),
                }),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A misspelt key gets the nearest key (infx_report::nearest), not every key sharing its
    /// first word.
    #[test]
    fn a_misspelt_key_suggests_its_nearest() {
        let m = MasterKeys::from_keys(
            [
                "dsr1-fp4-b300-sglang",
                "dsr1-fp8-b300-sglang",
                "dsr1-fp4-b200-sglang",
            ]
            .map(String::from),
        );
        let e = resolve_keys(&["dsr1-fp4-b300-sglnag".into()], &m).unwrap_err();
        assert_eq!(
            e.help.as_deref(),
            Some("did you mean `dsr1-fp4-b300-sglang`?")
        );
    }

    #[test]
    fn resolution_order_and_errors() {
        let m = MasterKeys::from_keys(["config-b", "config-a", "other"].map(String::from));
        let r = resolve_keys(&["config-*".into(), "config-a".into()], &m).unwrap();
        assert_eq!(r, ["config-b", "config-a"]);
        assert!(
            resolve_keys(&["nope-*".into()], &m)
                .unwrap_err()
                .message
                .contains("No config keys matched")
        );
        assert!(
            resolve_keys(&["config-?".into()], &m)
                .unwrap_err()
                .message
                .contains("not found")
        );
        assert_eq!(resolve_keys(&["*".into()], &m).unwrap().len(), 3);
    }

    #[test]
    fn loads_masters_like_upstream() {
        let m = MasterKeys::load(&[("amd", "a: 1\nb: 2\na: 3\n"), ("nv", "c: 1\n")]).unwrap();
        assert_eq!(m.keys(), ["a", "b", "c"]);
        assert!(
            MasterKeys::load(&[("amd", "a: 1\n"), ("nv", "a: 1\n")])
                .unwrap_err()
                .message
                .contains("Duplicate")
        );
        assert!(MasterKeys::load(&[("amd", "a*: 1\n")]).is_err());
        assert!(MasterKeys::load(&[("amd", "- 1\n")]).is_err());
        assert!(MasterKeys::load(&[("amd", "a: [\n")]).is_err());
    }

    #[test]
    fn fast_scan_agrees_with_full_loader() {
        let cases = [
            "a: 1\nb: {x: 1}\nc:\n  - 1\n",
            "a: &x {k: 1}\nb: *x\na: 2\n",
            "70b-fp8-h100: 1\ngptoss: [1]\n",
            "'quoted*key': 1\n",
            "<<: {m: 1}\nz: 2\n",
            "true: 1\n",
            "- a\n",
            "a: [\n",
            "",
        ];
        for c in cases {
            let fast = scan_top_keys(c);
            let opts = LoadOptions {
                duplicate_keys: infx_yaml::DuplicateKeys::KeepLast,
                ..LoadOptions::default()
            };
            let full = infx_yaml::parse_str_with(Path::new("f"), c, &opts);
            match (fast, full) {
                (None, _) => {}
                (Some(Ok(k)), Ok(root)) => {
                    let want: Vec<String> = root
                        .as_map()
                        .map(|m| m.keys().map(String::from).collect())
                        .unwrap_or_default();
                    assert_eq!(k, want, "{c:?}");
                }
                (Some(Err(_)), Err(_)) => {}
                (f, g) => panic!("{c:?}: fast {f:?} vs full {:?}", g.map(|_| ())),
            }
        }
        assert!(scan_top_keys("<<: {m: 1}\n").is_none());
        assert!(scan_top_keys("true: 1\n").is_none());
        assert!(matches!(scan_top_keys("a: [\n"), Some(Err(_))));
    }

    #[test]
    fn star_semantics() {
        assert!(star_match("dsv4-*-vllm", "dsv4-fp4-b200-vllm"));
        assert!(!star_match("dsv4-*-vllm", "dsv4-fp4-b200-vllm-mtp"));
        assert!(star_match("a*b*c", "aXbYbc"));
        assert!(!star_match("a?c", "abc"));
        assert!(star_match("a?c", "a?c"));
        assert!(!star_match("a*c", "a\nc"));
    }

    proptest! {
        #[test]
        fn star_alone_matches_everything_without_newline(s in "[a-z0-9-]{0,20}") {
            prop_assert!(star_match("*", &s));
            prop_assert!(star_match(&s, &s));
            let pat = format!("{s}*");
            let text = format!("{s}tail");
            prop_assert!(star_match(&pat, &text), "{} vs {}", pat, text);
        }
    }
}
