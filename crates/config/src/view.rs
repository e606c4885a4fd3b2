//! A master-config entry as written: the one reader of an entry's fields for the crates that
//! must see every entry, valid or not (docs/architecture.md, "One owner per concept"). The
//! matrix generator echoes values as written (upstream's generator reads the dict, not a
//! model), review inspects entries the rules reject, and validate's recipe step and impact read
//! an entry's recipe references before the rules have run. The typed, validated model is
//! [`crate::MasterEntry`]; both are built from the same loaded [`Document`]s.

use crate::ScenarioType;
use crate::layout::{RecipeDir, checkout_recipe_path, is_multinode};
use infx_yaml::{Document, Node};
use std::path::Path;

/// One top-level entry of a master config, borrowed from its document.
#[derive(Debug, Clone, Copy)]
pub struct EntryView<'a> {
    pub key: &'a str,
    pub key_node: &'a Node,
    /// The entry's value (a mapping in a sound config; anything in a broken one).
    pub node: &'a Node,
    pub doc: &'a Document,
}

/// Every entry of the given master configs, in file order then key order (a document whose
/// root is not a mapping has none).
pub fn entries_of(docs: &[Document]) -> Vec<EntryView<'_>> {
    docs.iter().flat_map(entries_in).collect()
}

/// Every entry of one master config, in key order.
pub fn entries_in(doc: &Document) -> impl Iterator<Item = EntryView<'_>> {
    doc.root
        .as_map()
        .into_iter()
        .flat_map(|m| m.iter())
        .map(move |(key, key_node, node)| EntryView {
            key,
            key_node,
            node,
            doc,
        })
}

/// One search-space row: the scenario it belongs to (`fixed-seq-len`, `agentic-coding`) and
/// its node.
#[derive(Debug, Clone, Copy)]
pub struct ScenarioRow<'a> {
    pub scenario: &'a str,
    pub row: &'a Node,
}

/// Whether a scenario (a key of an entry's `scenarios`) is the agentic one.
pub fn is_agentic_scenario(name: &str) -> bool {
    name == ScenarioType::AgenticCoding.as_str()
}

/// A row's `srt-recipe` / `eval-srt-recipe` reference, `<file>[:<selector>]` split at the
/// first `:`, with the scenario of its row and the field (`srt-recipe` or `eval-srt-recipe`).
#[derive(Debug, Clone, Copy)]
pub struct SrtReference<'a> {
    pub scenario: &'a str,
    pub field: &'a str,
    pub file: &'a str,
    pub selector: Option<&'a str>,
}

impl SrtReference<'_> {
    pub fn is_eval(&self) -> bool {
        self.field == "eval-srt-recipe"
    }
    pub fn is_agentic(&self) -> bool {
        is_agentic_scenario(self.scenario)
    }
}

impl<'a> EntryView<'a> {
    /// The master config the entry is in, as it was read.
    pub fn path(&self) -> &'a Path {
        &self.doc.path
    }
    pub fn field(&self, name: &str) -> Option<&'a Node> {
        self.node.get(name)
    }
    /// A field's value when it is a string.
    pub fn str_field(&self, name: &str) -> Option<&'a str> {
        self.field(name).and_then(Node::as_str)
    }
    /// `image:` as written (any type: the image check reports a non-string).
    pub fn image(&self) -> Option<&'a Node> {
        self.field("image")
    }
    pub fn runner(&self) -> Option<&'a str> {
        self.str_field("runner")
    }
    pub fn framework(&self) -> Option<&'a str> {
        self.str_field("framework")
    }
    pub fn model(&self) -> Option<&'a str> {
        self.str_field("model")
    }
    pub fn model_prefix(&self) -> Option<&'a str> {
        self.str_field("model-prefix")
    }
    pub fn precision(&self) -> Option<&'a str> {
        self.str_field("precision")
    }
    /// `multinode` read as upstream reads it (Python truthiness; see [`is_multinode`]).
    pub fn is_multinode(&self) -> bool {
        is_multinode(self.node)
    }
    /// [Oct-newest] the entry's recipe folder (`srt-recipe-dir` under its lane's root).
    pub fn recipe_dir(&self) -> Option<RecipeDir<'a>> {
        RecipeDir::of_entry(self.node)
    }
    /// The scenarios as written: name and value, in key order (none when `scenarios` is not a
    /// mapping).
    pub fn scenarios(&self) -> impl Iterator<Item = (&'a str, &'a Node)> + 'a {
        self.field("scenarios")
            .and_then(Node::as_map)
            .into_iter()
            .flat_map(|m| m.iter())
            .map(|(name, _, value)| (name, value))
    }
    /// Whether the entry has an agentic scenario (written, whatever its value).
    pub fn is_agentic(&self) -> bool {
        self.scenarios().any(|(name, _)| is_agentic_scenario(name))
    }
    /// Every search-space row, scenario by scenario, block by block (`scenarios.<name>[i]
    /// .search-space[j]`); a part of the wrong shape contributes none.
    pub fn rows(&self) -> impl Iterator<Item = ScenarioRow<'a>> + 'a {
        self.scenarios().flat_map(|(scenario, blocks)| {
            blocks
                .as_seq()
                .unwrap_or_default()
                .iter()
                .filter_map(|block| block.get("search-space").and_then(Node::as_seq))
                .flatten()
                .map(move |row| ScenarioRow { scenario, row })
        })
    }
    /// Every row's `srt-recipe` and `eval-srt-recipe` string, in row order (`srt-recipe`
    /// first within a row).
    pub fn srt_references(&self) -> impl Iterator<Item = SrtReference<'a>> + 'a {
        self.rows().flat_map(|r| {
            ["srt-recipe", "eval-srt-recipe"]
                .into_iter()
                .filter_map(move |field| {
                    let text = r.row.get(field)?.as_str()?;
                    let (file, selector) = match text.split_once(':') {
                        Some((file, selector)) => (file, Some(selector)),
                        None => (text, None),
                    };
                    Some(SrtReference {
                        scenario: r.scenario,
                        field,
                        file,
                        selector,
                    })
                })
        })
    }
    /// Every `CONFIG_FILE=` / `EVAL_CONFIG_FILE=` item of every row's `additional-settings`
    /// (row, prefill, decode), in row order, with the node that writes it.
    pub fn recipe_settings(
        &self,
    ) -> impl Iterator<Item = (ScenarioRow<'a>, RecipeSetting<'a>, &'a Node)> + 'a {
        self.rows().flat_map(|r| {
            SETTINGS_SCOPES
                .into_iter()
                .filter_map(move |scope| match scope {
                    None => Some(r.row),
                    Some(side) => r.row.get(side),
                })
                .filter_map(|n| n.get("additional-settings").and_then(Node::as_seq))
                .flatten()
                .filter_map(move |item| Some((r, recipe_setting(item.as_str()?)?, item)))
        })
    }
    /// The tree-relative path of a row reference's file: under `srt-recipe-dir` ([Oct-newest]);
    /// without it, as a generation-1/2 reference ([`legacy_recipe_path`]).
    pub fn recipe_path(&self, file: &str) -> String {
        match self.recipe_dir() {
            Some(dir) => dir.file_path(file),
            None => legacy_recipe_path(file),
        }
    }
}

/// A generation-1/2 reference (a `CONFIG_FILE=` setting's value, or a full-path `srt-recipe`)
/// as a tree-relative path, selector stripped: `recipes/<x>` is the srt-slurm checkout's
/// multinode folder, a bare file name an llm-d recipe, anything else a tree path as written
/// (docs/config.md, "Recipe files").
pub fn legacy_recipe_path(reference: &str) -> String {
    legacy_recipe_ref(reference).path
}

/// A generation-1/2 reference read as [`legacy_recipe_path`] reads it, keeping the selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyRef<'a> {
    /// Tree-relative path of the file.
    pub path: String,
    /// The text after the last `:` when it names a variant ([`is_selector`]).
    pub selector: Option<&'a str>,
}

impl LegacyRef<'_> {
    /// An llm-d recipe (a bare file name): llm-d's launcher reads it, not srtctl.
    pub fn is_llmd(&self) -> bool {
        self.path.starts_with(crate::layout::LLMD_RECIPES)
    }
}

/// [`legacy_recipe_path`] with the selector it strips.
pub fn legacy_recipe_ref(reference: &str) -> LegacyRef<'_> {
    let reference = reference.trim();
    let (file, selector) = match reference.rsplit_once(':') {
        Some((file, selector)) if is_selector(selector) => (file, Some(selector)),
        _ => (reference, None),
    };
    let path = if let Some(path) = checkout_recipe_path(file) {
        path
    } else if !file.contains('/') {
        format!("{}{file}", crate::layout::LLMD_RECIPES)
    } else {
        file.to_string()
    };
    LegacyRef { path, selector }
}

/// Which recipe an `additional-settings` item selects: `CONFIG_FILE=<ref>` (the benchmark run)
/// or `EVAL_CONFIG_FILE=<ref>` (the eval run), as upstream's launchers read the exported
/// variables (docs/config.md, "Recipe files").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecipeSetting<'a> {
    pub eval: bool,
    /// The reference as written after `=`.
    pub value: &'a str,
}

impl RecipeSetting<'_> {
    /// The variable's name.
    pub fn name(&self) -> &'static str {
        if self.eval {
            "EVAL_CONFIG_FILE"
        } else {
            "CONFIG_FILE"
        }
    }
}

/// The recipe setting of one `additional-settings` item, if it is one.
pub fn recipe_setting(item: &str) -> Option<RecipeSetting<'_>> {
    if let Some(value) = item.strip_prefix("CONFIG_FILE=") {
        return Some(RecipeSetting { eval: false, value });
    }
    item.strip_prefix("EVAL_CONFIG_FILE=")
        .map(|value| RecipeSetting { eval: true, value })
}

/// Where a row's `additional-settings` lists sit: on the row, or on its prefill and decode
/// workers (exported in this order by upstream's multinode workflow, so a later one wins).
pub const SETTINGS_SCOPES: [Option<&str>; 3] = [None, Some("prefill"), Some("decode")];

/// Whether the text after a reference's last `:` names a variant (`base`, `override_*`,
/// `zip_override_*`) rather than being part of the path.
pub fn is_selector(text: &str) -> bool {
    text == "base" || text.starts_with("override_") || text.starts_with("zip_override_")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document {
            path: "configs/nvidia-master.yaml".into(),
            root: infx_yaml::parse_str(Path::new("m.yaml"), text)
                .expect("test yaml parses")
                .into(),
            text: text.into(),
        }
    }

    #[test]
    fn entries_and_fields_as_written() {
        let d = [doc(
            "a:\n  image: 3\n  runner: b300\n  multinode: 1\nb: [x]\n",
        )];
        let es = entries_of(&d);
        assert_eq!(es.iter().map(|e| e.key).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(es[0].runner(), Some("b300"));
        assert!(es[0].image().is_some_and(|n| n.as_str().is_none()));
        assert!(es[0].is_multinode());
        assert!(!es[1].is_multinode());
        assert_eq!(es[1].rows().count(), 0);
        assert_eq!(es[0].path(), Path::new("configs/nvidia-master.yaml"));
    }

    #[test]
    fn rows_and_references_in_order() {
        let d = [doc(concat!(
            "a:\n  srt-recipe-dir: m/s\n  scenarios:\n",
            "    fixed-seq-len:\n    - isl: 1\n      search-space:\n",
            "      - {srt-recipe: 'x.yaml:override_a', eval-srt-recipe: e.yaml}\n",
            "      - {tp: 4}\n",
            "    agentic-coding:\n    - search-space:\n      - {srt-recipe: y.yaml}\n",
            "    broken: 3\n",
        ))];
        let es = entries_of(&d);
        let e = es[0];
        assert_eq!(e.rows().count(), 3);
        let refs: Vec<_> = e
            .srt_references()
            .map(|r| (r.scenario, r.field, r.file, r.selector))
            .collect();
        assert_eq!(
            refs,
            [
                ("fixed-seq-len", "srt-recipe", "x.yaml", Some("override_a")),
                ("fixed-seq-len", "eval-srt-recipe", "e.yaml", None),
                ("agentic-coding", "srt-recipe", "y.yaml", None),
            ]
        );
        assert!(e.is_agentic());
        assert_eq!(
            e.recipe_path("x.yaml"),
            "benchmarks/single_node/srt-slurm-recipes/m/s/x.yaml"
        );
    }

    #[test]
    fn legacy_references_resolve_by_convention() {
        for (reference, path) in [
            (
                "recipes/a/b.yaml",
                "benchmarks/multi_node/srt-slurm-recipes/a/b.yaml",
            ),
            (
                "recipes/a/b.yaml:override_x",
                "benchmarks/multi_node/srt-slurm-recipes/a/b.yaml",
            ),
            ("x.yaml", "benchmarks/multi_node/llm-d-recipes/x.yaml"),
            (
                "benchmarks/multi_node/srt-slurm-recipes/t.yaml",
                "benchmarks/multi_node/srt-slurm-recipes/t.yaml",
            ),
            ("a/b.yaml:notaselector", "a/b.yaml:notaselector"),
        ] {
            assert_eq!(legacy_recipe_path(reference), path, "{reference}");
        }
        let r = legacy_recipe_ref("recipes/a/b.yaml:zip_override_g[1]");
        assert_eq!(r.selector, Some("zip_override_g[1]"));
        assert!(!r.is_llmd());
        assert!(legacy_recipe_ref("x.yaml").is_llmd());
    }

    #[test]
    fn recipe_settings_of_rows_and_workers() {
        let d = [doc(concat!(
            "a:\n  scenarios:\n    fixed-seq-len:\n    - search-space:\n",
            "      - prefill: {additional-settings: [X=1, 'CONFIG_FILE=recipes/p.yaml']}\n",
            "        decode: {additional-settings: ['EVAL_CONFIG_FILE=recipes/e.yaml']}\n",
            "      - additional-settings: ['CONFIG_FILE=recipes/r.yaml:base', 3]\n",
        ))];
        let es = entries_of(&d);
        let got: Vec<_> = es[0]
            .recipe_settings()
            .map(|(_, s, _)| (s.name(), s.value))
            .collect();
        assert_eq!(
            got,
            [
                ("CONFIG_FILE", "recipes/p.yaml"),
                ("EVAL_CONFIG_FILE", "recipes/e.yaml"),
                ("CONFIG_FILE", "recipes/r.yaml:base"),
            ]
        );
    }
}
