//! Where a master entry's srt-slurm recipe files live and whether the entry is multinode: the one
//! reading of both that config, matrix and review share (docs/config.md, "Recipe files").

use infx_yaml::{Node, Value};

/// Python truthiness of an optional YAML value: upstream reads `multinode` and its other flags
/// with `if value:`, so `null`, `0`, `""` and empty collections are false.
pub fn truthy(value: Option<&Node>) -> bool {
    match value.map(|n| &n.value) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Int(i)) => *i != 0,
        Some(Value::Float(f)) => f.value != 0.0,
        Some(Value::Str(s)) | Some(Value::Timestamp(s)) => !s.is_empty(),
        Some(Value::Seq(s)) => !s.is_empty(),
        Some(Value::Map(m)) => !m.is_empty(),
    }
}

/// Whether a master entry (its mapping) is multinode: its `multinode` is truthy. A non-boolean
/// value still selects a model here; the schema reports its type (`config/type`).
pub fn is_multinode(entry: &Node) -> bool {
    truthy(entry.get("multinode"))
}

/// The tree-relative folder of a lane's srt-slurm recipes.
pub fn recipes_root(multinode: bool) -> &'static str {
    if multinode {
        "benchmarks/multi_node/srt-slurm-recipes"
    } else {
        "benchmarks/single_node/srt-slurm-recipes"
    }
}

/// An [Oct-newest] entry's recipe folder: `srt-recipe-dir` under its lane's recipes root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecipeDir<'a> {
    pub multinode: bool,
    /// `srt-recipe-dir` as written (SR1 checks that it is a normalized relative path).
    pub dir: &'a str,
}

impl<'a> RecipeDir<'a> {
    /// The entry's recipe folder, when it has a string `srt-recipe-dir`.
    pub fn of_entry(entry: &'a Node) -> Option<Self> {
        let dir = entry.get("srt-recipe-dir").and_then(Node::as_str)?;
        Some(RecipeDir {
            multinode: is_multinode(entry),
            dir,
        })
    }

    /// The tree-relative path of a row reference's file (`<file>` of `<file>[:<selector>]`).
    pub fn file_path(&self, file: &str) -> String {
        format!("{}/{}/{file}", recipes_root(self.multinode), self.dir)
    }
}

/// A reference relative to the srt-slurm checkout (`recipes/<rest>`, upstream's multinode
/// `CONFIG_FILE` convention) as a tree-relative path; `None` for any other reference.
pub fn checkout_recipe_path(reference: &str) -> Option<String> {
    let rest = reference.strip_prefix("recipes/")?;
    Some(format!("{}/{rest}", recipes_root(true)))
}

/// The base GPU of a runner label, as upstream's launch scripts are named after it: the part
/// before the first `-` or `_` of its last `:` component, lower-cased (`b200-dgxc` → `b200`,
/// `cluster:mi355x-amds` → `mi355x`).
pub fn gpu_of_runner(runner: &str) -> String {
    let r = runner
        .rsplit(':')
        .next()
        .unwrap_or(runner)
        .to_ascii_lowercase();
    r.split(['-', '_']).next().unwrap_or("").to_string()
}

/// The single-node launcher scripts upstream's runner scripts (`runners/launch_<runner>.sh`)
/// run for a row (docs/changelog.md, "Launchers are part of the row"): under
/// `benchmarks/single_node/<agentic|fixed_seq_len>/`, first the framework-tagged name
/// `<model-prefix>_<precision>_<gpu>_<framework>[_mtp].sh`, and when that file does not exist
/// the historical one, `<model-prefix>_<precision>_<gpu>[_trt|_atom][_mtp].sh`. `_mtp` when the
/// row's `spec-decoding` is `mtp`. Both names are given; which one runs depends on the tree.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Launcher {
    pub tagged: String,
    pub historical: String,
}

/// Every launcher a single-node entry's rows can run (one per scenario and `spec-decoding`
/// kind, in row order); none for a multinode entry (srt-slurm runs its recipes) or one without
/// `model-prefix`, `precision`, `runner` or `framework`.
pub fn single_node_launchers(entry: &crate::view::EntryView<'_>) -> Vec<Launcher> {
    let (Some(prefix), Some(precision), Some(runner), Some(framework)) = (
        entry.model_prefix(),
        entry.precision(),
        entry.runner(),
        entry.framework(),
    ) else {
        return Vec::new();
    };
    if entry.is_multinode() {
        return Vec::new();
    }
    let gpu = gpu_of_runner(runner);
    let historical_suffix = match framework {
        "trt" => "_trt",
        "atom" => "_atom",
        _ => "",
    };
    let mut out: Vec<Launcher> = Vec::new();
    for r in entry.rows() {
        let dir = if crate::view::is_agentic_scenario(r.scenario) {
            "agentic"
        } else {
            "fixed_seq_len"
        };
        let mtp = if r.row.get("spec-decoding").and_then(Node::as_str) == Some("mtp") {
            "_mtp"
        } else {
            ""
        };
        let base = format!("benchmarks/single_node/{dir}/{prefix}_{precision}_{gpu}");
        let l = Launcher {
            tagged: format!("{base}_{framework}{mtp}.sh"),
            historical: format!("{base}{historical_suffix}{mtp}.sh"),
        };
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(yaml: &str) -> Node {
        infx_yaml::parse_str(std::path::Path::new("t.yaml"), yaml).expect("test yaml parses")
    }

    #[test]
    fn multinode_is_python_truthiness() {
        for (value, want) in [
            ("true", true),
            ("false", false),
            ("1", true),
            ("0", false),
            ("'yes'", true),
            ("''", false),
            ("null", false),
            ("[]", false),
            ("[x]", true),
        ] {
            let e = entry(&format!("multinode: {value}\n"));
            assert_eq!(is_multinode(&e), want, "multinode: {value}");
        }
        assert!(!is_multinode(&entry("image: x\n")));
    }

    #[test]
    fn recipe_files_resolve_under_the_lane_root() {
        let e = entry("multinode: true\nsrt-recipe-dir: dsr1/sglang\n");
        let d = RecipeDir::of_entry(&e).expect("has a dir");
        assert_eq!(
            d.file_path("a.yaml"),
            "benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/a.yaml"
        );
        let e = entry("multinode: false\nsrt-recipe-dir: m/x\n");
        assert_eq!(
            RecipeDir::of_entry(&e).map(|d| d.file_path("f.yaml")),
            Some("benchmarks/single_node/srt-slurm-recipes/m/x/f.yaml".to_string())
        );
        assert_eq!(RecipeDir::of_entry(&entry("srt-recipe-dir: 3\n")), None);
        assert_eq!(
            checkout_recipe_path("recipes/a/b.yaml").as_deref(),
            Some("benchmarks/multi_node/srt-slurm-recipes/a/b.yaml")
        );
        assert_eq!(checkout_recipe_path("a/b.yaml"), None);
    }
}
