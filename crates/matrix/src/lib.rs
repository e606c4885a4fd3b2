//! infx-matrix: expands master configs into sweep-matrix rows exactly as InferenceX's generator
//! does (same rows, keys, key order and values), selects evals, splits the output for GitHub
//! Actions, and binds every generated point to exactly one srt-recipe variant.

mod args;
mod bind;
pub mod codes;
mod compare;
mod decimal;
mod evals;
mod explain;
mod generate;
mod github;
mod inputs;
mod json;
mod nodes;
mod rows;
mod sweep_row;

pub use args::{Invocation, UsageError, parse_upstream_args};
pub use bind::{
    BindReport, LaneFault, Misfit, PointFault, RecipeSet, RowRecipe, UnusedVariant, bind,
    bind_configs, load_recipes, load_recipes_in, recipe_path, row_recipe,
};
pub use compare::RowComparison;
pub use evals::{filter_exp_names, select as select_evals};
pub use explain::explain;
pub use generate::{
    EvalMode, FullSweep, Options, RowOrigin, Selection, SeqLen, TestConfig, expand,
    expand_config_keys, expand_with_origins, generate,
};
pub use github::{MAX_JOBS_PER_MATRIX, github_output};
pub use inputs::{
    ConfigEntry, MasterConfigs, Runners, gpu_family, load_config_documents, load_runner_document,
};
pub use json::{Json, Object, dumps_rows, json_float, write_str as write_json_str};
pub use sweep_row::{ScenarioType, SweepRow};

/// A generated matrix row: an ordered JSON object.
pub type Row = Object;
