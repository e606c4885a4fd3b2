//! The diagnostic codes of the review check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const APPEND_ONLY: Code = Code::error(
    "review/append-only",
    "an added append-only changelog entry fails its plan checks",
);
pub const ARCH_OVERRIDE: Code = Code::error(
    "review/arch-override",
    "the recipe overrides the model config, which may remove FLOPs",
);
pub const CODEOWNERS_SIGNER: Code = Code::error(
    "review/codeowners-signer",
    "the change needs a CODEOWNERS sign-off",
);
pub const CODEOWNERS_SYNTAX: Code = Code::error(
    "review/codeowners-syntax",
    "a CODEOWNERS line GitHub ignores",
);
pub const COOKBOOK_DIFF: Code = Code::error(
    "review/cookbook-diff",
    "the recipe differs from its published cookbook deployment",
);
pub const COOKBOOK_FILE: Code = Code::error("review/cookbook-file", "a cookbook file is malformed");
pub const COOKBOOK_POINT_MISSING: Code = Code::error(
    "review/cookbook-point-missing",
    "a matrix point has no cookbook point",
);
pub const COOKBOOK_POINT_UNMATCHED: Code = Code::error(
    "review/cookbook-point-unmatched",
    "a cookbook point has no matrix row",
);
pub const DP_CUDA_GRAPH: Code = Code::warning(
    "review/dp-cuda-graph",
    "DP attention without cuda-graph coverage of its batch sizes",
);
pub const DRAFT_PRECISION_ENV: Code = Code::warning(
    "review/draft-precision-env",
    "an environment variable changes the draft model's precision",
);
pub const DRAFT_PRECISION_FLAG: Code = Code::error(
    "review/draft-precision-flag",
    "a flag quantises the draft model",
);
pub const ENGINE_FIRST: Code = Code::error(
    "review/engine-first",
    "a vendor-framework entry comes without its vLLM/SGLang entry",
);
pub const ENGINE_PATCH: Code = Code::error("review/engine-patch", "the recipe patches the engine");
pub const EVENT_PUBLICATION: Code = Code::error(
    "review/event-publication",
    "the recipe turns event and metrics publication off",
);
pub const GOLDEN_AL: Code = Code::error(
    "review/golden-al",
    "the golden acceptance length is missing or wrong",
);
pub const GOLDEN_AL_CURVE: Code = Code::error(
    "review/golden-al-curve",
    "no golden acceptance curve or cell for the point",
);
pub const GOLDEN_AL_FILE: Code = Code::error(
    "review/golden-al-file",
    "a golden acceptance curve file is invalid",
);
pub const GOLDEN_AL_HARDCODED: Code = Code::error(
    "review/golden-al-hardcoded",
    "a recipe or master row hard-codes the simulated acceptance length",
);
pub const IMAGE_PUBLIC: Code = Code::error(
    "review/image-public",
    "the image is not from a public registry",
);
pub const IO: Code = Code::error(
    "review/io",
    "a file the reviewer checks need cannot be read",
);
pub const PARETO: Code = Code::warning(
    "review/pareto",
    "a result curve has too few or invalid Pareto frontier points",
);
pub const PARETO_INPUT: Code = Code::error(
    "review/pareto-input",
    "the Pareto check's input is malformed",
);
pub const UPSTREAM_IMAGE: Code = Code::error(
    "review/upstream-image",
    "an image not from the engine's upstream registry",
);
pub const WAIVER: Code = Code::error(
    "review/waiver",
    "a waiver file was not added by this change or lacks a section",
);

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    APPEND_ONLY,
    ARCH_OVERRIDE,
    CODEOWNERS_SIGNER,
    CODEOWNERS_SYNTAX,
    COOKBOOK_DIFF,
    COOKBOOK_FILE,
    COOKBOOK_POINT_MISSING,
    COOKBOOK_POINT_UNMATCHED,
    DP_CUDA_GRAPH,
    DRAFT_PRECISION_ENV,
    DRAFT_PRECISION_FLAG,
    ENGINE_FIRST,
    ENGINE_PATCH,
    EVENT_PUBLICATION,
    GOLDEN_AL,
    GOLDEN_AL_CURVE,
    GOLDEN_AL_FILE,
    GOLDEN_AL_HARDCODED,
    IMAGE_PUBLIC,
    IO,
    PARETO,
    PARETO_INPUT,
    UPSTREAM_IMAGE,
    WAIVER,
];
