//! The layout of a benchmark tree: what each file is ([`role`]), where a master entry's
//! srt-slurm recipe files live and whether the entry is multinode: the one reading of each that
//! config, matrix, image, review and validate share (docs/config.md, "Recipe files";
//! docs/architecture.md, "The tree layout").

use infx_yaml::{Node, Value};

/// [`LANES_DIR`] as a literal, so a lane's block path is a `&'static str` ([`lane_block_path!`]).
#[macro_export]
macro_rules! lanes_dir {
    () => {
        "configs/srt-recipes"
    };
}

/// The tree-relative path of the lane block called `$name` (`agentic-single`).
#[macro_export]
macro_rules! lane_block_path {
    ($name:literal) => {
        concat!($crate::lanes_dir!(), "/", $name, ".yaml")
    };
}

/// The folder of the master configs, runners.yaml and the lane blocks.
pub const CONFIGS_DIR: &str = "configs";
/// The folder of the launchers, shared benchmark scripts and the srt-slurm recipe trees.
pub const BENCHMARKS_DIR: &str = "benchmarks";
/// The master configs upstream's generator is given, in the order validate loads them.
pub const MASTER_CONFIGS: [&str; 2] = ["configs/nvidia-master.yaml", "configs/amd-master.yaml"];
/// The runner inventory.
pub const RUNNERS: &str = "configs/runners.yaml";
/// The perf changelog.
pub const CHANGELOG: &str = "perf-changelog.yaml";
/// The folder of the lanes' shared blocks ([`lane_block_path!`]).
pub const LANES_DIR: &str = lanes_dir!();
/// The folders review reads golden acceptance-length curves from, in lookup order.
pub const GOLDEN_DIRS: [&str; 2] = ["golden_al_distribution", "infx/golden_al_distribution"];
/// The folder of llm-d's recipes (a bare-file-name reference of a generation-1 entry).
pub const LLMD_RECIPES: &str = "benchmarks/multi_node/llm-d-recipes/";
/// Where the master configs and runners.yaml lived before upstream #1992 moved them to
/// [`CONFIGS_DIR`] (of the tree).
pub const LEGACY_CONFIGS_DIR: &str = ".github/configs";
/// The folder of the waiver files (`docs/waiver/<PR>.md`, docs/review.md).
pub const WAIVERS_DIR: &str = "docs/waiver";
/// The folder the benchmark tree sits in in this repository (upstream's tree is its
/// repository's root); `infx_git::NESTED_ROOT` names the same folder for the git layer below.
pub const BUNDLED_TREE: &str = "inferencex-e2e";
/// The folder a multinode reference relative to the srt-slurm checkout starts with
/// ([`checkout_recipe_path`]).
const CHECKOUT_RECIPES_DIR: &str = "recipes";
/// The folder name of an srt-slurm recipe tree (`benchmarks/{single,multi}_node/<this>`).
const RECIPES_FOLDER: &str = "srt-slurm-recipes";

/// What a file of a benchmark tree is, by its tree-relative path: the one reading of the tree
/// layout (docs/architecture.md, "The tree layout"). Tree-relative means relative to
/// `inferencex-e2e/` in this repository and to the repository root upstream, so one path shape
/// serves both layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// One of [`MASTER_CONFIGS`]: what the generator and validate's config load read.
    Master,
    /// Any other `*-master.yaml` (or `.yml`) under `configs/`, such as a retired one in
    /// `configs/deprecated/`: not loaded, but the image check reads its images (and `pin`
    /// pins those directly in `configs/`).
    OtherMaster,
    /// [`RUNNERS`].
    Runners,
    /// A file under [`LANES_DIR`]: a lane's shared block.
    Lane,
    /// A file in a `srt-slurm-recipes` folder under `benchmarks/`.
    Recipe,
    /// [`CHANGELOG`].
    Changelog,
    /// A file under one of [`GOLDEN_DIRS`].
    Golden,
    /// A single-node launcher: a shell script in `benchmarks/single_node/agentic/` or
    /// `benchmarks/single_node/fixed_seq_len/` ([`single_node_launchers`] names the ones a
    /// config's rows run).
    Launcher,
    /// Any other file under `benchmarks/`: shared scripts, multinode scripts, llm-d recipes.
    Benchmark,
    /// A file under `runners/` (upstream's `launch_<runner>.sh` and their helpers).
    RunnerScript,
    /// A file under `utils/evals/` (eval tasks a benchmark runs).
    EvalTask,
    /// Anything else.
    Other,
}

/// The role of the file at `rel`, relative to the tree.
pub fn role(rel: &std::path::Path) -> Role {
    let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
    let Some((name, dirs)) = parts.split_last() else {
        return Role::Other;
    };
    let joined = parts.join("/");
    if joined == CHANGELOG {
        return Role::Changelog;
    }
    if joined == RUNNERS {
        return Role::Runners;
    }
    if MASTER_CONFIGS.contains(&joined.as_str()) {
        return Role::Master;
    }
    let under = |dir: &str| {
        let dir: Vec<&str> = dir.split('/').collect();
        dirs.starts_with(&dir)
    };
    if under(LANES_DIR) {
        return Role::Lane;
    }
    if under(CONFIGS_DIR) && has_master_name(rel) {
        return Role::OtherMaster;
    }
    if GOLDEN_DIRS.iter().any(|d| under(d)) {
        return Role::Golden;
    }
    if under(BENCHMARKS_DIR) {
        return if dirs.contains(&RECIPES_FOLDER) {
            Role::Recipe
        } else if (dirs == ["benchmarks", "single_node", "agentic"]
            || dirs == ["benchmarks", "single_node", "fixed_seq_len"])
            && name.ends_with(".sh")
        {
            Role::Launcher
        } else {
            Role::Benchmark
        };
    }
    if under("runners") {
        return Role::RunnerScript;
    }
    if under("utils/evals") {
        return Role::EvalTask;
    }
    Role::Other
}

/// Whether the file's name is a master config's (`<name>-master.yaml` or `.yml`), wherever it
/// is: the image sites of a file read from anywhere (an absolute path) are read by this.
pub fn has_master_name(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with("-master.yaml") || n.ends_with("-master.yml"))
}

/// Whether a changed file is one a benchmark may run besides its recipe: a launcher, another
/// script or file under `benchmarks/`, `runners/` or `utils/evals/` that is not a recipe,
/// YAML or Markdown (docs/changelog.md, "Launchers are part of the row").
pub fn may_run(rel: &std::path::Path) -> bool {
    let ext = rel.extension().and_then(|e| e.to_str()).unwrap_or("");
    matches!(
        role(rel),
        Role::Launcher | Role::Benchmark | Role::RunnerScript | Role::EvalTask
    ) && !matches!(ext, "md" | "yaml" | "yml")
}

/// The tree-relative form of a repository path in either layout: below [`BUNDLED_TREE`] in this
/// repository, as it is upstream.
pub fn tree_relative(repo_path: &str) -> &str {
    repo_path
        .strip_prefix(BUNDLED_TREE)
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(repo_path)
}

/// `path` (a [`CONFIGS_DIR`] path such as one of [`MASTER_CONFIGS`]) with its first
/// `configs` replaced by `dir`: where that file lives when the configs folder is `dir`.
pub fn configs_path_in(path: &str, dir: &str) -> String {
    path.replacen(CONFIGS_DIR, dir, 1)
}

/// `path` (a [`CONFIGS_DIR`] path) at its place before upstream #1992
/// ([`LEGACY_CONFIGS_DIR`]).
pub fn legacy_configs_path(path: &str) -> String {
    configs_path_in(path, LEGACY_CONFIGS_DIR)
}

/// Whether the first component of the `/`-separated `path` is `dir` (and more follows).
fn first_folder_is(path: &str, dir: &str) -> bool {
    path.split_once('/').is_some_and(|(first, _)| first == dir)
}

/// Whether a recipe reference is written as a path: tree-relative under [`BENCHMARKS_DIR`] or
/// relative to the srt-slurm checkout (`recipes/`, [`checkout_recipe_path`]), as generation-1/2
/// entries wrote `srt-recipe`.
pub fn is_recipe_path_reference(reference: &str) -> bool {
    first_folder_is(reference, BENCHMARKS_DIR) || first_folder_is(reference, CHECKOUT_RECIPES_DIR)
}

/// Whether some folder of the `/`-separated `path` (in either layout, any prefix) is
/// [`BENCHMARKS_DIR`].
pub fn has_benchmarks_folder(path: &str) -> bool {
    path.rsplit_once('/')
        .is_some_and(|(dirs, _)| dirs.split('/').any(|d| d == BENCHMARKS_DIR))
}

/// The tree-relative part (`benchmarks/…`) of a path with any prefix (absolute,
/// repository-relative or tree-relative): from its last [`BENCHMARKS_DIR`] folder on, unless it
/// already starts with one; the whole path when it has none.
pub fn from_benchmarks_folder(path: &str) -> &str {
    if first_folder_is(path, BENCHMARKS_DIR) {
        return path;
    }
    let needle = format!("/{BENCHMARKS_DIR}/");
    match path.rfind(&needle) {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// The tree-relative part (`configs/…`) of a path with any prefix (absolute, repository-relative
/// or tree-relative): from the last `/configs/` in it on; the whole path when it has none.
pub fn from_configs_folder(path: &str) -> &str {
    let needle = format!("/{CONFIGS_DIR}/");
    path.rfind(&needle).map_or(path, |i| &path[i + 1..])
}

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
    let rest = reference
        .strip_prefix(CHECKOUT_RECIPES_DIR)?
        .strip_prefix('/')?;
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

    /// The tree-relative path of a repository path in either layout: the bundled one (the tree
    /// is `inferencex-e2e/`) and upstream's (the tree is the repository root).
    fn in_tree(repo_path: &str) -> Role {
        role(std::path::Path::new(tree_relative(repo_path)))
    }

    #[test]
    fn tree_relative_strips_only_the_bundled_tree_folder() {
        assert_eq!(
            tree_relative("inferencex-e2e/docs/waiver/5.md"),
            "docs/waiver/5.md"
        );
        assert_eq!(tree_relative("docs/waiver/5.md"), "docs/waiver/5.md");
        // A folder whose name only starts like the bundled tree's is not it.
        assert_eq!(
            tree_relative("inferencex-e2e-old/a.yaml"),
            "inferencex-e2e-old/a.yaml"
        );
    }

    /// Every path in both layouts has `want`.
    fn all_are(want: Role, paths: &[&str]) {
        for p in paths {
            assert_eq!(in_tree(p), want, "{p}");
            assert_eq!(in_tree(&format!("inferencex-e2e/{p}")), want, "bundled {p}");
        }
    }

    #[test]
    fn role_master() {
        all_are(
            Role::Master,
            &["configs/nvidia-master.yaml", "configs/amd-master.yaml"],
        );
        // Master-named but not given to the generator: retired (upstream's
        // configs/deprecated/), a third vendor's, the `.yml` spelling.
        all_are(
            Role::OtherMaster,
            &[
                "configs/deprecated/amd-gptoss-master.yaml",
                "configs/intel-master.yaml",
                "configs/x-master.yml",
            ],
        );
        // Outside configs/ a master-like name is no master (the image check used to read one
        // anywhere).
        all_are(Role::Other, &["nvidia-master.yaml", "utils/x-master.yaml"]);
        all_are(Role::Benchmark, &["benchmarks/x-master.yaml"]);
        assert!(has_master_name(std::path::Path::new(
            "/abs/t/configs/a-master.yml"
        )));
    }

    #[test]
    fn role_runners() {
        all_are(Role::Runners, &["configs/runners.yaml"]);
        all_are(Role::Other, &["configs/ci-priority.yaml", "runners.yaml"]);
        all_are(Role::RunnerScript, &["runners/runners.yaml"]);
    }

    #[test]
    fn role_lane() {
        all_are(
            Role::Lane,
            &[
                "configs/srt-recipes/agentic-single.yaml",
                "configs/srt-recipes/fixed-sequence-multi.yaml",
                "configs/srt-recipes/old/agentic-multi.yaml",
            ],
        );
        assert_eq!(
            lane_block_path!("agentic-single"),
            "configs/srt-recipes/agentic-single.yaml"
        );
        // A sibling folder whose name only starts like the lanes' folder.
        all_are(Role::Other, &["configs/srt-recipes-old/a.yaml"]);
    }

    #[test]
    fn role_recipe() {
        all_are(
            Role::Recipe,
            &[
                "benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/b300-fp4-mtp/agentic.yaml",
                "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/8k1k/disagg.yaml",
                "benchmarks/srt-slurm-recipes/a.yaml",
                "benchmarks/multi_node/srt-slurm-recipes/README.md",
            ],
        );
        // validate matched `srt-slurm-recipes/` as a substring, pin as a folder name: a folder
        // that only ends in the name holds no recipes (docs/architecture.md, "The tree layout").
        all_are(
            Role::Benchmark,
            &[
                "benchmarks/multi_node/old-srt-slurm-recipes/a.yaml",
                "benchmarks/multi_node/llm-d-recipes/x.yaml",
            ],
        );
        // The recipe folder outside benchmarks/ is not read as recipes.
        all_are(
            Role::Other,
            &[
                "srt-slurm-recipes/a.yaml",
                "configs/srt-slurm-recipes/a.yaml",
            ],
        );
    }

    #[test]
    fn role_changelog() {
        all_are(Role::Changelog, &["perf-changelog.yaml"]);
        all_are(Role::Other, &["docs/perf-changelog.yaml"]);
        all_are(Role::Benchmark, &["benchmarks/perf-changelog.yaml"]);
    }

    #[test]
    fn role_launcher_and_other_runnables() {
        all_are(
            Role::Launcher,
            &[
                "benchmarks/single_node/agentic/dsv41flash_fp4_b300_sglang_mtp.sh",
                "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_atom.sh",
            ],
        );
        all_are(
            Role::Benchmark,
            &[
                "benchmarks/benchmark_lib.sh",
                "benchmarks/single_node/agentic/README.md",
                "benchmarks/multi_node/amd_utils/server.sh",
            ],
        );
        all_are(Role::RunnerScript, &["runners/launch_b200-dgxc.sh"]);
        all_are(
            Role::EvalTask,
            &["utils/evals/gsm8k.yaml", "utils/evals/task.py"],
        );
        all_are(Role::Other, &["utils/bench_serving.py", "README.md"]);
        let runs = |p: &str| may_run(std::path::Path::new(p));
        assert!(runs("benchmarks/single_node/agentic/x.sh"));
        assert!(runs("benchmarks/benchmark_lib.sh"));
        assert!(runs("runners/launch_b200.sh"));
        assert!(runs("utils/evals/task.py"));
        assert!(!runs("utils/evals/gsm8k.yaml"));
        assert!(!runs("benchmarks/single_node/agentic/README.md"));
        assert!(!runs("benchmarks/single_node/srt-slurm-recipes/m/run.sh"));
        assert!(!runs("utils/bench_serving.py"));
    }

    #[test]
    fn configs_paths_move_with_their_folder() {
        assert_eq!(
            legacy_configs_path(MASTER_CONFIGS[0]),
            ".github/configs/nvidia-master.yaml"
        );
        assert_eq!(
            configs_path_in(RUNNERS, "inferencex-e2e/configs"),
            "inferencex-e2e/configs/runners.yaml"
        );
    }

    #[test]
    fn benchmarks_folder_in_any_prefix() {
        for (p, path_ref, has) in [
            ("benchmarks/a/b.yaml", true, true),
            ("recipes/a/b.yaml", true, false),
            ("benchmarks", false, false),
            ("benchmarksx/a.yaml", false, false),
            ("recipes", false, false),
            ("x/benchmarks/a.sh", false, true),
            ("inferencex-e2e/benchmarks/", false, true),
        ] {
            assert_eq!(is_recipe_path_reference(p), path_ref, "{p}");
            assert_eq!(has_benchmarks_folder(p), has, "{p}");
        }
        assert_eq!(
            from_benchmarks_folder("/t/benchmarks/x/benchmarks/a.yaml"),
            "benchmarks/a.yaml"
        );
        assert_eq!(
            from_benchmarks_folder("benchmarks/x/benchmarks/a.yaml"),
            "benchmarks/x/benchmarks/a.yaml"
        );
        assert_eq!(from_benchmarks_folder("configs/a.yaml"), "configs/a.yaml");
        assert_eq!(
            from_configs_folder("/t/inferencex-e2e/configs/a-master.yaml"),
            "configs/a-master.yaml"
        );
        assert_eq!(from_configs_folder("configs/a.yaml"), "configs/a.yaml");
    }

    #[test]
    fn role_golden() {
        all_are(
            Role::Golden,
            &[
                "golden_al_distribution/dsv4.json",
                "infx/golden_al_distribution/dsv41flash/curve.json",
            ],
        );
        // Where review does not look (validate's base export matched the name anywhere).
        all_are(
            Role::Other,
            &[
                "docs/golden_al_distribution/a.json",
                "xgolden_al_distribution/a.json",
            ],
        );
    }
}
