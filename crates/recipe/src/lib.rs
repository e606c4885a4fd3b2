//! infx-recipe: srt-slurm recipes (schema 1 and 2) — loading with provenance, variant
//! expansion, lanes and fragment rules, schema validation and rendering of launch commands.
//!
//! # Public API (stable; the matrix binder and the reviewer call these)
//!
//! ```text
//! // references
//! RecipeRef::parse_inferencex(s: &str) -> Result<RecipeRef, Diagnostic>   // first ':' (master configs)
//! RecipeRef::parse_srtctl(s: &str) -> Result<RecipeRef, Diagnostic>       // last ':', globs (dry-run)
//! RecipeRef { path: String, selector: Option<Selector> }
//! Selector::{Base, Override(String), Zip { key: String, index: Option<usize> }, Glob(String)}
//!
//! // loading (root-escape protection: '..', absolute paths, symlinks out of `root`)
//! load_recipe(root: &Path, rel: &str) -> Result<RecipeFile, Diagnostic>
//! load_recipe_file(path: &Path) -> Result<RecipeFile, Diagnostic>          // CLI, no root
//! RecipeFile::parse(path: &Path, text: String) -> Result<RecipeFile, Diagnostic>
//! RecipeFile::kind(&self) -> RecipeKind                                   // Plain | Bundle | Sweep
//!
//! // lanes and fragments (docs/recipe.md, "Lanes and the bundled recipe")
//! Lane::{FixedSeqSingle, FixedSeqMulti, AgenticSingle, AgenticMulti}; Lane::of(agentic, multinode)
//! Lane::block_path(self) -> &'static str                                  // relative to inferencex-e2e/
//! compose_lane(fragment: &RecipeFile, lane: Lane, lane_block: &RecipeFile) -> RecipeFile
//! check_fragment(fragment: &RecipeFile, lane: Lane) -> Vec<Diagnostic>
//! bind_model(v: &mut Variant, model: &str, image: &str, precision: &str)  // the model part only
//!
//! // expansion
//! RecipeFile::expand(&self, selector: Option<&Selector>) -> Result<Vec<Variant>, Diagnostic>  // srtctl rules
//! RecipeFile::expand_with(&self, selector: Option<&Selector>, opts: ExpandOptions) -> Result<Vec<Variant>, Diagnostic>
//! ExpandOptions::srtctl() / ExpandOptions::inferencex()
//! Variant { name: Option<String>, label: String, selector: Option<Selector>, tree: infx_yaml::Node,
//!           origins: Origins, sources: Sources }
//! Variant::selector_text(&self) -> String; Variant::origin_of(&self, path: &str) -> Option<&Origin>;
//! Variant::file_of(&self, path: &str) -> &Path
//!
//! // validation and rendering
//! validate(variant: &Variant) -> Vec<Diagnostic>          // schema 1 or 2 by the `schema` key
//! render(variant: &Variant) -> Rendered                  // .to_text() / .to_json()
//! dry_run(file: &RecipeFile, selector: Option<&Selector>) -> Result<Vec<VariantReport>, Diagnostic>
//! to_yaml(tree: &Node) -> String                        // block YAML that reads back the same
//! schema1::load(tree: &Node) -> Result<serde_json::Value, schema1::Failure>  // srtctl's defaulted dump
//! srtctl::dry_run(file, selector, cluster: Option<&Node>) -> srtctl::Run      // c88ef731 emulation
//! ```
//!
//! Provenance: every value of a variant records the file and block that set it (`base`,
//! `override_x`, `zip_override_g[i]`, `lane:<name>`, `binder`), so a schema error points at line:col in
//! the file that wrote the offending value.

mod check;
pub mod codes;
mod coerce;
mod emit;
mod lane;
mod merge;
mod pystr;
mod recipe;
mod reference;
mod render;
pub mod schema1;
mod schema2;
mod source;
pub mod srtctl;

pub use check::{VariantReport, checked_variants, dry_run, into_checked_variants, validate};
pub use coerce::to_int as coerce_int;
pub use emit::to_yaml;
pub use lane::{Lane, bind_model, check_fragment, compose_lane};
pub use pystr::{json_str, py_float, py_str, py_str_repr};
pub use recipe::{
    ExpandOptions, RecipeFile, RecipeKind, Variant, ZipNulls, load_recipe, load_recipe_file,
    load_recipe_in,
};
pub use reference::{RecipeRef, Selector};
pub use render::{
    PROFILING_NOT_RENDERED, Process, Rendered, engine_args, render, router_args, shell_quote,
};
pub use source::{Origin, Origins, Source, Sources};
