//! The impact of a change: the config keys whose benchmark can change between the base and the
//! working tree, each with the changed lines that caused it (README.md, "Before you open a PR").
//!
//! Values are compared parsed, not as text, so a comment-only or formatting-only edit impacts
//! nothing. Four sources: a master entry whose value changed (its image pin included), a recipe
//! file or lane block whose resolved variants changed for the entries that use it, and the
//! runners.yaml facts of an entry's runner. Pure: callers hand in the texts of both sides.

use infx_recipe::{ExpandOptions, Lane, RecipeFile, compose_lane};
use infx_yaml::{Document, LoadOptions, Node, top_level_sections};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One changed line that makes a config's benchmark change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// Relative to the benchmark tree's root.
    pub path: PathBuf,
    /// 1-based line on the new side.
    pub line: usize,
    /// Why it impacts the config ("master entry changed", "recipe variants changed", …).
    pub why: String,
}

/// A config key whose benchmark can change, with its causes in discovery order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Impacted {
    pub key: String,
    pub causes: Vec<Cause>,
}

/// The impacted keys, first-seen order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Impact {
    pub keys: Vec<Impacted>,
    /// Changed files a benchmark may run that no config can be tied to (a shared library
    /// script, an eval task, a multinode script): their impact is not assessed, and the
    /// report says so (docs/changelog.md, "Launchers are part of the row").
    pub not_assessed: Vec<PathBuf>,
}

impl Impact {
    fn add(&mut self, key: &str, cause: Cause) {
        match self.keys.iter_mut().find(|k| k.key == key) {
            Some(k) => {
                if !k.causes.contains(&cause) {
                    k.causes.push(cause);
                }
            }
            None => self.keys.push(Impacted {
                key: key.to_string(),
                causes: vec![cause],
            }),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
    pub fn get(&self, key: &str) -> Option<&Impacted> {
        self.keys.iter().find(|k| k.key == key)
    }
}

/// Whether the text may define a YAML anchor (`&name` outside a comment). Sections of such a
/// file are not independent (an alias elsewhere can change with them), so they are compared on
/// whole-file parses. Conservative: a `&` in a quoted value also counts.
fn may_define_anchor(text: &str) -> bool {
    let b = text.as_bytes();
    // Only the lines holding a `&` can define one: found with one SIMD pass. Each such line's
    // bounds and comment start are found once, so a long line of `&`s stays linear.
    let mut line_end = 0;
    let mut line_start = 0;
    let mut comment_at = usize::MAX;
    memchr::memchr_iter(b'&', b).any(|at| {
        if at >= line_end {
            line_start = memchr::memrchr(b'\n', &b[..at]).map_or(0, |i| i + 1);
            line_end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
            // ` #` starts a comment; what follows it on the line defines nothing.
            comment_at = memchr::memmem::find(&b[line_start..line_end], b" #")
                .map_or(usize::MAX, |i| line_start + i);
        }
        let named = b.get(at + 1).is_some_and(u8::is_ascii_alphanumeric);
        let spaced = at == line_start || b[at - 1] == b' ';
        named && spaced && at < comment_at.saturating_add(2)
    })
}

/// 1-based line of byte `offset` in `text`.
fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The first line (1-based, on the new side) where `old` and `new` part: where a change that
/// only removes lines is shown.
fn parting_line(old: &str, new: &str) -> usize {
    let same = old
        .lines()
        .zip(new.lines())
        .take_while(|(a, b)| a == b)
        .count();
    (same + 1).min(new.lines().count().max(1))
}

/// Lines added on the new side (1-based, relative to `new`), skipping blank and comment-only
/// lines: they cannot carry the value change. Falls back to nothing on a diff failure.
fn added_lines(old: Option<&str>, new: &str) -> Vec<usize> {
    let Ok(d) = infx_git::diff_lines(old.map(str::as_bytes), Some(new.as_bytes())) else {
        return Vec::new();
    };
    d.added
        .iter()
        .filter(|l| {
            let t = l.content.trim();
            !t.is_empty() && !t.starts_with('#')
        })
        .map(|l| l.line)
        .collect()
}

/// Impact of a master config file: every entry whose parsed value differs from the base's, or
/// that is new. `rel` is the file relative to the tree, `base` its base text (`None` = new
/// file), `head` the parsed working-tree document.
pub fn master_impact(rel: &Path, base: Option<&str>, head: &Document, out: &mut Impact) {
    let Some(map) = head.root.as_map() else {
        return;
    };
    let head_text: &str = &head.text;
    let head_sections = top_level_sections(head_text);
    let section_of = |key: &str| head_sections.iter().find(|(k, _)| *k == key);
    let key_line = |key: &str, fallback: &Node| {
        section_of(key).map_or(fallback.span.start.line(), |(_, r)| {
            line_at(head_text, r.start)
        })
    };
    let Some(base) = base else {
        for (key, knode, _) in map.iter() {
            out.add(key, new_config(rel, key_line(key, knode)));
        }
        return;
    };
    let base_sections = top_level_sections(base);
    let whole_file = may_define_anchor(base) || may_define_anchor(head_text);
    let base_root: std::cell::OnceCell<Option<Node>> = std::cell::OnceCell::new();
    let base_entry = |key: &str| {
        base_root
            .get_or_init(|| parse_base(rel, base))
            .as_ref()
            .and_then(|r| r.get(key).cloned())
    };
    for (key, knode, value) in map.iter() {
        let head_range = section_of(key).map(|(_, r)| r.clone());
        let base_range = base_sections
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, r)| r.clone());
        let (head_section, base_section) = (
            head_range.as_ref().and_then(|r| head_text.get(r.clone())),
            base_range.as_ref().and_then(|r| base.get(r.clone())),
        );
        if !whole_file && head_section.is_some() && head_section == base_section {
            continue;
        }
        // The base value: from the section alone when sections are independent (cheap),
        // else (or when the section does not parse alone) from the whole base file.
        let base_value = if base_range.is_none() && !whole_file {
            None
        } else {
            let alone = (!whole_file)
                .then(|| base_section.and_then(|s| parse_base(rel, s)))
                .flatten();
            match alone {
                Some(root) => root.get(key).cloned(),
                None => base_entry(key),
            }
        };
        let Some(base_value) = base_value else {
            out.add(key, new_config(rel, key_line(key, knode)));
            continue;
        };
        if base_value == *value {
            continue;
        }
        let start = head_range
            .as_ref()
            .map_or(knode.span.start.line(), |r| line_at(head_text, r.start));
        let lines = match head_section {
            Some(h) => added_lines(base_section, h)
                .into_iter()
                .map(|l| start + l - 1)
                .collect(),
            None => Vec::new(),
        };
        let why = format!("master entry '{key}' changed");
        if lines.is_empty() {
            out.add(key, cause(rel, start, &why));
        }
        for l in lines {
            out.add(key, cause(rel, l, &why));
        }
    }
}

fn cause(rel: &Path, line: usize, why: &str) -> Cause {
    Cause {
        path: rel.to_path_buf(),
        line,
        why: why.to_string(),
    }
}

fn new_config(rel: &Path, line: usize) -> Cause {
    cause(rel, line, "new config")
}

/// Impact of a launcher script that the rows of `keys` run (docs/changelog.md, "Launchers are
/// part of the row"): when its code differs between `base` and `head` (`None` = absent on that
/// side), every key is impacted, caused by the first changed code line. Blank and comment-only
/// lines are not code, so an edit of comments alone impacts nothing.
pub fn launcher_impact(
    rel: &Path,
    base: Option<&str>,
    head: Option<&str>,
    keys: &[&str],
    out: &mut Impact,
) {
    fn code(t: Option<&str>) -> Vec<&str> {
        t.unwrap_or("")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect()
    }
    if base.is_some() == head.is_some() && code(base) == code(head) {
        return;
    }
    let name = rel.file_name().map_or_else(
        || rel.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let (line, why) = match (base, head) {
        (_, None) => (1, format!("launcher `{name}` deleted")),
        (None, Some(_)) => (1, format!("launcher `{name}` added")),
        (Some(b), Some(h)) => (
            added_lines(base, h)
                .first()
                .copied()
                .unwrap_or_else(|| parting_line(b, h)),
            format!("launcher `{name}` changed"),
        ),
    };
    for key in keys {
        out.add(key, cause(rel, line, &why));
    }
}

/// One recipe file as a config uses it.
#[derive(Debug, Clone)]
pub struct RecipeUse<'a> {
    pub key: &'a str,
    /// Relative to the tree.
    pub rel: &'a str,
    /// The lane block the fragment is composed over; `None` for a complete recipe the launcher
    /// runs as written (a `CONFIG_FILE=` reference).
    pub lane: Option<Lane>,
    /// The variant a complete recipe's reference selects (`override_x`, `zip_override_y[0]`);
    /// `None` = every variant.
    pub selector: Option<&'a str>,
}

/// Reads a file of one side of the change (tree-relative path); `None` = absent.
pub(crate) type ReadSide<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The document validate's load already parsed from a working-tree file (tree-relative path),
/// if it holds one; `None` = parse the side's text (docs/architecture.md, "Parse once").
pub(crate) type ParsedSide<'a, 'd> = &'a dyn Fn(&str) -> Option<&'d Document>;

/// Impact of changed recipe files and lane blocks: every use whose recipe file or lane block
/// changed and whose resolved variants (lane block merged under the fragment, every variant
/// expanded) differ between the sides. `changed` holds the tree-relative changed paths;
/// `head_parsed` gives the head side's documents the caller already parsed (used only when
/// their text is the head text), the rest of each side is parsed here, once per file.
pub fn recipe_impact<'a, 'd>(
    uses: &[RecipeUse<'_>],
    changed: &BTreeSet<PathBuf>,
    base: ReadSide<'a>,
    head: ReadSide<'a>,
    head_parsed: ParsedSide<'a, 'd>,
    out: &mut Impact,
) {
    let no_documents = |_: &str| None;
    let mut base_side = Side::new(base, &no_documents, true);
    let mut head_side = Side::new(head, head_parsed, false);
    type Seen<'u> = (&'u str, Option<Lane>, Option<&'u str>, bool);
    let mut done: Vec<Seen<'_>> = Vec::new();
    for u in uses {
        let block = u.lane.map(Lane::block_path);
        let file_changed = changed.contains(Path::new(u.rel));
        let block_changed = block.is_some_and(|b| changed.contains(Path::new(b)));
        if !file_changed && !block_changed {
            continue;
        }
        let verdict = match done
            .iter()
            .find(|(r, l, s, _)| *r == u.rel && *l == u.lane && *s == u.selector)
        {
            Some((_, _, _, v)) => *v,
            None => {
                // A file or block gone from the head differs from a base that has it, whatever
                // the base's text: the base is not parsed for that (a tree-wide move takes
                // every recipe away from its old path; docs/performance.md, "Renames").
                let head = head_side.variants(u.rel, u.lane, u.selector);
                let v = match head {
                    None => base_side.has(u.rel, u.lane),
                    head => base_side.variants(u.rel, u.lane, u.selector) != head,
                };
                done.push((u.rel, u.lane, u.selector, v));
                v
            }
        };
        if !verdict {
            continue;
        }
        for (path, changed_here, what) in [
            (Some(u.rel), file_changed, "recipe"),
            (block, block_changed, "lane block"),
        ] {
            let Some(path) = path.filter(|_| changed_here) else {
                continue;
            };
            let Some(new) = head(path) else {
                continue;
            };
            let why = format!("{what} {path} resolves to different variants");
            let old = base(path);
            let lines = added_lines(old.as_deref(), &new);
            if lines.is_empty() {
                let line = old.as_deref().map_or(1, |o| parting_line(o, &new));
                out.add(u.key, cause(Path::new(path), line, &why));
            }
            for l in lines {
                out.add(u.key, cause(Path::new(path), l, &why));
            }
        }
    }
}

/// How a base side (master, runners, recipe) is parsed: as PyYAML reads it (a key written twice: the last value
/// wins), which is what upstream's tools run and what validate's other checks read (README,
/// the yaml step); the duplicate itself is the yaml step's error, not an impact.
fn as_pyyaml() -> LoadOptions {
    LoadOptions {
        duplicate_keys: infx_yaml::DuplicateKeys::KeepLast,
        ..LoadOptions::default()
    }
}

/// The prefix naming a base-side parse (`<base>/benchmarks/…`): never a working-tree path.
pub(crate) const BASE_SIDE: &str = "<base>/";

/// The prefix naming a head-side parse of a text other than the loaded working-tree file's
/// (a commit standing in for the change whose file was edited since): never a working-tree path.
pub(crate) const HEAD_SIDE: &str = "<head>/";

/// What a parse of `rel`'s text of one side (`prefix`: [`BASE_SIDE`] or [`HEAD_SIDE`]) is
/// named. Those texts are not the working tree's files, so their parses are named apart from
/// the load's (the parse count, docs/architecture.md); the name reaches no finding (a side that
/// does not parse is compared by its text).
fn side_name(prefix: &str, rel: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(prefix);
    name.push(rel);
    PathBuf::from(name)
}

/// `rel`'s base text (or a section of it) parsed as PyYAML reads it; `None` when it does not parse.
fn parse_base(rel: &Path, text: &str) -> Option<Node> {
    infx_yaml::parse_str_with(&side_name(BASE_SIDE, rel), text, &as_pyyaml()).ok()
}

/// A side's text and its recipe (`None`: it does not parse or is no mapping).
type SideFile = (String, Option<RecipeFile>);

/// One side of the change read as recipes: each file read and parsed at most once (a lane
/// block is shared by every fragment of its lane), or taken from `parsed`.
struct Side<'a, 'd> {
    read: ReadSide<'a>,
    parsed: ParsedSide<'a, 'd>,
    /// Tree-relative path → the file, `None` when absent on this side.
    files: HashMap<String, Option<SideFile>>,
    /// The base side: its parses are named apart ([`BASE_SIDE`]).
    base: bool,
}

impl<'a, 'd> Side<'a, 'd> {
    fn new(read: ReadSide<'a>, parsed: ParsedSide<'a, 'd>, base: bool) -> Self {
        Side {
            read,
            parsed,
            files: HashMap::new(),
            base,
        }
    }

    fn load(&mut self, rel: &str) {
        if self.files.contains_key(rel) {
            return;
        }
        let file = (self.read)(rel).map(|text| {
            let loaded = (self.parsed)(rel);
            let recipe = match loaded {
                // The load's document of this very text: no second parse.
                Some(doc) if *doc.text == *text => {
                    RecipeFile::from_parsed(Path::new(rel), doc.text.clone(), doc.root.clone()).ok()
                }
                _ => {
                    // A text other than the loaded file's (the base, or a commit standing in
                    // for the change) is no working-tree file: its parse is named apart.
                    let path = match (self.base, loaded) {
                        (true, _) => side_name(BASE_SIDE, Path::new(rel)),
                        (false, Some(_)) => side_name(HEAD_SIDE, Path::new(rel)),
                        (false, None) => PathBuf::from(rel),
                    };
                    infx_yaml::parse_str_with(&path, &text, &as_pyyaml())
                        .ok()
                        .and_then(|root| {
                            RecipeFile::from_parsed(&path, Arc::from(&*text), Arc::new(root)).ok()
                        })
                }
            };
            (text, recipe)
        });
        self.files.insert(rel.to_string(), file);
    }

    /// Whether this side has `rel` and, in `lane`, its block: where [`Self::variants`] answers
    /// `Some`. Read, not parsed.
    fn has(&self, rel: &str, lane: Option<Lane>) -> bool {
        let present = |rel: &str| match self.files.get(rel) {
            Some(file) => file.is_some(),
            None => (self.read)(rel).is_some(),
        };
        present(rel) && lane.is_none_or(|l| present(l.block_path()))
    }

    /// The resolved variants of `rel` in `lane` (`None`: the file as written, only the
    /// `selector`'s variant when it names one): (label, tree) in expansion order; `None` when
    /// the file or block is absent; the texts when either does not resolve (then any text
    /// change counts).
    fn variants(
        &mut self,
        rel: &str,
        lane: Option<Lane>,
        selector: Option<&str>,
    ) -> Option<Result<Vec<(String, Node)>, String>> {
        self.load(rel);
        let (file_text, file) = self.files.get(rel)?.as_ref()?;
        let Some(lane) = lane else {
            let resolve = || -> Option<Vec<(String, Node)>> {
                let selector = match selector {
                    Some(s) => Some(infx_recipe::Selector::parse_srtctl(s).ok()?),
                    None => None,
                };
                let found = file
                    .as_ref()?
                    .expand_with(selector.as_ref(), ExpandOptions::srtctl())
                    .ok()?;
                Some(
                    found
                        .into_iter()
                        .map(|v| (v.label, Arc::unwrap_or_clone(v.tree)))
                        .collect(),
                )
            };
            return Some(resolve().ok_or_else(|| file_text.clone()));
        };
        self.load(lane.block_path());
        let (file_text, file) = self.files.get(rel)?.as_ref()?;
        let (block_text, block) = self.files.get(lane.block_path())?.as_ref()?;
        let resolve = || -> Option<Vec<(String, Node)>> {
            let composed = compose_lane(file.as_ref()?, lane, block.as_ref()?);
            Some(
                composed
                    .expand_with(None, ExpandOptions::inferencex())
                    .ok()?
                    .into_iter()
                    .map(|v| (v.label, Arc::unwrap_or_clone(v.tree)))
                    .collect(),
            )
        };
        // An unresolvable side is compared by its text, so an edit of a broken recipe still
        // counts.
        Some(resolve().ok_or_else(|| format!("{file_text}\u{0}{block_text}")))
    }
}

/// Impact of a runners.yaml change: every entry whose runner's facts differ — its label's node
/// list and the records of the clusters those nodes sit in (`labels.cluster:<id>` →
/// `clusters.<id>`); a flat file (runner → nodes, the older shape) compares the runner's list.
/// `entries` = (config key, runner label) in master order.
pub fn runners_impact(
    rel: &Path,
    base: Option<&str>,
    head: &Document,
    entries: &[(&str, &str)],
    out: &mut Impact,
) {
    let base_root = base.and_then(|b| parse_base(rel, b));
    let changed_lines = added_lines(base, &head.text);
    for (key, runner) in entries {
        let before = base_root.as_ref().map(|r| runner_facts(r, runner));
        let after = runner_facts(&head.root, runner);
        if before.as_ref() == Some(&after) {
            continue;
        }
        let labels = head.root.get("labels").unwrap_or(&head.root);
        let at = labels
            .as_map()
            .and_then(|m| m.get_entry(runner))
            .map(|(k, _)| k.span.start.line());
        let why = format!("runners.yaml facts of runner '{runner}' changed");
        match (changed_lines.first(), at) {
            (Some(l), _) => out.add(key, cause(rel, *l, &why)),
            (None, Some(l)) => out.add(key, cause(rel, l, &why)),
            (None, None) => out.add(key, cause(rel, 1, &why)),
        }
    }
}

fn runner_facts(root: &Node, runner: &str) -> Vec<Option<Node>> {
    let Some(labels) = root.get("labels") else {
        return vec![root.get(runner).cloned()];
    };
    let nodes = labels.get(runner).cloned();
    let mut facts = vec![nodes.clone()];
    // [Aug] `hardware.<label>` records (DRAM, GPUs per node): the runner's own and those of its
    // GPU family, which the generator falls back to (infx-matrix `Runners`); a record that no
    // row reads is dropped again by the row comparison.
    if let Some(hw) = root.get("hardware").and_then(Node::as_map) {
        let want = infx_matrix::gpu_family(runner);
        for (label, _, record) in hw.iter() {
            if label == runner || infx_matrix::gpu_family(label) == want {
                facts.push(Some(record.clone()));
            }
        }
    }
    let names: Vec<&str> = nodes
        .as_ref()
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::as_str)
        .collect();
    if let Some(map) = labels.as_map() {
        for (label, _, members) in map.iter() {
            let Some(id) = label.strip_prefix("cluster:") else {
                continue;
            };
            let holds = members
                .as_seq()
                .unwrap_or_default()
                .iter()
                .filter_map(Node::as_str)
                .any(|n| names.contains(&n));
            if holds || label == runner {
                facts.push(root.get("clusters").and_then(|c| c.get(id)).cloned());
            }
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(path: &str, text: &str) -> Document {
        Document {
            path: PathBuf::from(path),
            text: Arc::from(text),
            root: infx_yaml::parse_str(Path::new(path), text).unwrap().into(),
        }
    }

    /// The line-split scan this replaced, kept as an oracle for the SIMD one.
    fn anchor_by_split(text: &str) -> bool {
        text.lines().any(|l| {
            let code = l.split(" #").next().unwrap_or(l);
            let b = code.as_bytes();
            b.windows(2).enumerate().any(|(i, w)| {
                w[0] == b'&' && w[1].is_ascii_alphanumeric() && (i == 0 || b[i - 1] == b' ')
            })
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn anchor_scan_matches_the_split_scan(text in "([a-c&# :\"'.\t\r-]|\n|é){0,80}") {
            proptest::prop_assert_eq!(may_define_anchor(&text), anchor_by_split(&text));
        }
    }

    const BASE: &str = "# header\na:\n  image: x@sha256:1\n  conc: [1, 4]\nb:\n  image: y\n";

    fn master(head: &str) -> Vec<(String, Vec<usize>)> {
        let mut out = Impact::default();
        master_impact(
            Path::new("configs/m.yaml"),
            Some(BASE),
            &doc("m", head),
            &mut out,
        );
        out.keys
            .into_iter()
            .map(|k| (k.key, k.causes.iter().map(|c| c.line).collect()))
            .collect()
    }

    #[test]
    fn comment_and_formatting_edits_impact_nothing() {
        let head = "# header\na:\n  # why four\n  image: x@sha256:1\n  conc: [1,   4]\n\nb:\n  image: 'y'\n";
        assert_eq!(master(head), vec![]);
    }

    #[test]
    fn a_value_change_impacts_its_entry_at_the_changed_line() {
        let head = "# header\na:\n  image: x@sha256:2\n  conc: [1, 4]\nb:\n  image: y\n";
        assert_eq!(master(head), vec![("a".to_string(), vec![3])]);
        let head =
            "# header\na:\n  image: x@sha256:1\n  conc: [1, 4]\nb:\n  image: y\nc:\n  image: z\n";
        assert_eq!(master(head), vec![("c".to_string(), vec![7])]);
    }

    /// A base entry with a key written twice is read as PyYAML reads it (last value wins),
    /// not dropped as unparsable: an unchanged entry stays unchanged, not a "new config".
    #[test]
    fn a_base_entry_with_a_duplicate_key_is_compared_by_its_last_value() {
        let base = "a:\n  image: old\n  image: x\nb:\n  image: y\n";
        let head = "a:\n  image: x\nb:\n  image: y\n";
        let mut out = Impact::default();
        master_impact(Path::new("m"), Some(base), &doc("m", head), &mut out);
        assert!(
            out.keys.is_empty(),
            "{:?}",
            out.keys.iter().map(|k| &k.key).collect::<Vec<_>>()
        );
        let head = "a:\n  image: z\nb:\n  image: y\n";
        let mut out = Impact::default();
        master_impact(Path::new("m"), Some(base), &doc("m", head), &mut out);
        assert_eq!(out.keys.len(), 1);
        assert!(
            out.keys[0].causes[0].why.contains("changed"),
            "{}",
            out.keys[0].causes[0].why
        );
    }

    #[test]
    fn anchors_compare_whole_files() {
        let base = "a: &common\n  image: x\nb:\n  <<: *common\n";
        let head = "a: &common\n  image: z\nb:\n  <<: *common\n";
        let mut out = Impact::default();
        master_impact(Path::new("m"), Some(base), &doc("m", head), &mut out);
        let keys: Vec<&str> = out.keys.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(keys, ["a", "b"]);
    }

    #[test]
    fn runner_facts_follow_clusters() {
        let base = "labels:\n  b300: [n1, n2]\n  cluster:x: [n1, n2]\n  h100: [m1]\nclusters:\n  x: {gpus: 8}\n";
        let head = "labels:\n  b300: [n1, n2]\n  cluster:x: [n1, n2]\n  h100: [m1]\nclusters:\n  x: {gpus: 4}\n";
        let mut out = Impact::default();
        runners_impact(
            Path::new("configs/runners.yaml"),
            Some(base),
            &doc("r", head),
            &[("k1", "b300"), ("k2", "h100"), ("k3", "cluster:x")],
            &mut out,
        );
        let keys: Vec<&str> = out.keys.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(keys, ["k1", "k3"]);
        assert_eq!(out.keys[0].causes[0].line, 6);
    }

    const RECIPE: &str = "benchmarks/single_node/srt-slurm-recipes/m/fixed.yaml";
    const BLOCK: &str = "benchmark:\n  type: custom\n";
    const FRAGMENT: &str = "base:\n  name: m\n  resources:\n    gpus_per_node: 8\noverride_tp4:\n  resources:\n    gpus_per_node: 4\n";

    /// The keys `recipe_impact` finds when the recipe goes from `base` to `head` (lane block
    /// unchanged), the head side read from `head_doc` when given.
    fn recipe_keys(base: &str, head: &str, head_doc: Option<&Document>) -> Vec<String> {
        recipe_keys_at(RECIPE, base, head, head_doc)
    }

    /// [`recipe_keys`] of a recipe at `recipe_rel` (a path no other test parses, so a test
    /// counting parses is not disturbed by tests running beside it in the process).
    fn recipe_keys_at(
        recipe_rel: &str,
        base: &str,
        head: &str,
        head_doc: Option<&Document>,
    ) -> Vec<String> {
        let uses = [RecipeUse {
            key: "m-fp4",
            rel: recipe_rel,
            lane: Some(Lane::FixedSeqSingle),
            selector: None,
        }];
        let changed = BTreeSet::from([PathBuf::from(recipe_rel)]);
        let side = |recipe: &str| {
            let recipe = recipe.to_string();
            move |rel: &str| {
                if rel == recipe_rel {
                    Some(recipe.clone())
                } else if rel == Lane::FixedSeqSingle.block_path() {
                    Some(BLOCK.to_string())
                } else {
                    None
                }
            }
        };
        let (base_side, head_side) = (side(base), side(head));
        let parsed = |rel: &str| head_doc.filter(|_| rel == recipe_rel);
        let mut out = Impact::default();
        recipe_impact(&uses, &changed, &base_side, &head_side, &parsed, &mut out);
        out.keys.into_iter().map(|k| k.key).collect()
    }

    /// A `CONFIG_FILE=` recipe runs as written, and a bundle's edit impacts only the configs
    /// whose selector names a variant it changes (docs/changelog.md, "Impact is about rows").
    #[test]
    fn a_config_file_recipe_edit_impacts_the_configs_binding_the_changed_variant() {
        const BUNDLE: &str = "base:\n  name: b\n  model: {path: m, container: c, precision: fp4}\n  resources: {gpu_type: gb300, gpus_per_node: 4}\noverride_a:\n  resources: {gpus_per_node: 2}\noverride_b:\n  resources: {gpus_per_node: 1}\n";
        let rel = "benchmarks/multi_node/srt-slurm-recipes/t/bundle.yaml";
        let head = BUNDLE.replace("gpus_per_node: 2", "gpus_per_node: 8");
        let uses = [
            RecipeUse {
                key: "uses-a",
                rel,
                lane: None,
                selector: Some("override_a"),
            },
            RecipeUse {
                key: "uses-b",
                rel,
                lane: None,
                selector: Some("override_b"),
            },
            RecipeUse {
                key: "uses-all",
                rel,
                lane: None,
                selector: None,
            },
        ];
        let changed = BTreeSet::from([PathBuf::from(rel)]);
        let base_side = |r: &str| (r == rel).then(|| BUNDLE.to_string());
        let head_side = |r: &str| (r == rel).then(|| head.clone());
        let parsed = |_: &str| None;
        let mut out = Impact::default();
        recipe_impact(&uses, &changed, &base_side, &head_side, &parsed, &mut out);
        let keys: Vec<String> = out.keys.into_iter().map(|k| k.key).collect();
        assert_eq!(keys, ["uses-a", "uses-all"]);
    }

    #[test]
    fn a_recipe_value_change_impacts_its_config() {
        let head = FRAGMENT.replace("gpus_per_node: 4", "gpus_per_node: 2");
        assert_eq!(recipe_keys(FRAGMENT, &head, None), ["m-fp4"]);
        assert!(recipe_keys(FRAGMENT, &format!("# why\n{FRAGMENT}"), None).is_empty());
    }

    /// Both sides are read as PyYAML reads them (README, "Impact"): a key written twice keeps
    /// its last value, so an edit that leaves the last value alone impacts nothing.
    #[test]
    fn a_duplicate_key_recipe_resolves_to_its_last_values() {
        let twice = FRAGMENT.replace("  name: m\n", "  name: old\n  name: m\n");
        // The duplicate added, then the overridden first value edited: same variants.
        assert!(recipe_keys(FRAGMENT, &twice, None).is_empty());
        let edited = twice.replace("name: old", "name: older");
        assert!(recipe_keys(&twice, &edited, None).is_empty());
        assert!(recipe_keys(&twice, &format!("# why\n{twice}"), None).is_empty());
        // The last value changed: a different variant.
        let last = twice.replace("name: m\n", "name: n\n");
        assert_eq!(recipe_keys(&twice, &last, None), ["m-fp4"]);
    }

    /// The head document validate's load parsed is used as it is (no second parse of the
    /// file); the base text is parsed once. Counted under the recipe's tree-relative path.
    #[test]
    fn the_head_side_reuses_the_loaded_document() {
        const COUNTED: &str = "benchmarks/single_node/srt-slurm-recipes/counted/fixed.yaml";
        let head_text = FRAGMENT.replace("gpus_per_node: 4", "gpus_per_node: 2");
        let head = doc(COUNTED, &head_text);
        infx_yaml::parse_count::start();
        let keys = recipe_keys_at(COUNTED, FRAGMENT, &head_text, Some(&head));
        let counts = infx_yaml::parse_count::take();
        assert_eq!(keys, ["m-fp4"]);
        // The head side is not parsed again; the base side's one parse is named apart.
        assert_eq!(counts.get(Path::new(COUNTED)), None, "{counts:?}");
        let base_name = format!("{BASE_SIDE}{COUNTED}");
        assert_eq!(counts.get(Path::new(&base_name)), Some(&1), "{counts:?}");
        // A document of another text (a commit stands in for the change and the file was
        // edited since) is not used; that head text's parse is named apart too.
        let stale = doc(COUNTED, FRAGMENT);
        infx_yaml::parse_count::start();
        assert_eq!(
            recipe_keys_at(COUNTED, FRAGMENT, &head_text, Some(&stale)),
            ["m-fp4"]
        );
        let counts = infx_yaml::parse_count::take();
        assert_eq!(counts.get(Path::new(COUNTED)), None, "{counts:?}");
        let head_name = format!("{HEAD_SIDE}{COUNTED}");
        assert_eq!(counts.get(Path::new(&head_name)), Some(&1), "{counts:?}");
    }
}
