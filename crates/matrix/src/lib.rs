//! infx-matrix: expands master configs into sweep-matrix rows exactly as InferenceX's generator
//! does (same rows, keys, key order and values), selects evals, splits the output for GitHub
//! Actions, and binds every generated point to exactly one srt-recipe variant.

pub mod args;
pub mod bind;
pub mod codes;
pub mod compare;
pub mod decimal;
pub mod evals;
pub mod explain;
pub mod generate;
pub mod github;
pub mod inputs;
pub mod json;
pub mod nodes;
pub mod rows;
pub mod sweep_row;

pub use generate::{
    EvalMode, FullSweep, Options, RowOrigin, Selection, SeqLen, TestConfig, expand,
    expand_config_keys, expand_with_origins, generate,
};
pub use inputs::{
    ConfigEntry, MasterConfigs, Runners, load_config_documents, load_runner_document,
};
pub use json::{Json, Object, dumps_rows};
pub use sweep_row::{ScenarioType, SweepRow};

/// A generated matrix row: an ordered JSON object.
pub type Row = Object;
