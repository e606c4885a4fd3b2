//! The diagnostic codes of the review check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    APPEND_ONLY = error("review/append-only", "an added append-only changelog entry fails its plan checks");
    ARCH_OVERRIDE = error("review/arch-override", "the recipe overrides the model config, which may remove FLOPs");
    CODEOWNERS_SIGNER = error("review/codeowners-signer", "the change needs a CODEOWNERS sign-off");
    CODEOWNERS_SYNTAX = error("review/codeowners-syntax", "a CODEOWNERS line GitHub ignores");
    COOKBOOK_DIFF = error("review/cookbook-diff", "the recipe differs from its published cookbook deployment");
    COOKBOOK_FILE = error("review/cookbook-file", "a cookbook file is malformed");
    COOKBOOK_POINT_MISSING = error("review/cookbook-point-missing", "a matrix point has no cookbook point");
    COOKBOOK_POINT_UNMATCHED = error("review/cookbook-point-unmatched", "a cookbook point has no matrix row");
    DP_CUDA_GRAPH = warning("review/dp-cuda-graph", "DP attention without cuda-graph coverage of its batch sizes");
    DRAFT_PRECISION_ENV = warning("review/draft-precision-env", "an environment variable changes the draft model's precision");
    DRAFT_PRECISION_FLAG = error("review/draft-precision-flag", "a flag quantises the draft model");
    ENGINE_FIRST = error("review/engine-first", "a vendor-framework entry comes without its vLLM/SGLang entry");
    ENGINE_PATCH = error("review/engine-patch", "the recipe patches the engine");
    EVENT_PUBLICATION = error("review/event-publication", "the recipe turns event and metrics publication off");
    GOLDEN_AL = error("review/golden-al", "the golden acceptance length is missing or wrong");
    GOLDEN_AL_CURVE = error("review/golden-al-curve", "no golden acceptance curve or cell for the point");
    GOLDEN_AL_FILE = error("review/golden-al-file", "a golden acceptance curve file is invalid");
    GOLDEN_AL_HARDCODED = error("review/golden-al-hardcoded", "a recipe or master row hard-codes the simulated acceptance length");
    IMAGE_PUBLIC = error("review/image-public", "the image is not from a public registry");
    MTP_CHAT_TEMPLATE = error("review/mtp-chat-template", "an MTP launcher runs the benchmark without `--use-chat-template`");
    RECIPE_CONTAINER = error("review/recipe-container", "an image bump leaves the recipe's `model.container` on another image");
    IO = error("review/io", "a file the reviewer checks need cannot be read");
    PARETO = warning("review/pareto", "a result curve has too few or invalid Pareto frontier points");
    PARETO_INPUT = error("review/pareto-input", "the Pareto check's input is malformed");
    UPSTREAM_IMAGE = error("review/upstream-image", "an image not from the engine's upstream registry");
    WAIVER = error("review/waiver", "a waiver file was not added by this change or lacks a section");
}

/// The rules the [Oct] checklist added (spec: "1.3 [Oct] deltas"): Check 8's
/// `publish_events_and_metrics: false` prohibition, Check 13 (the draft runs as shipped) and
/// AGENTS.md's ban on hard-coded acceptance lengths (Check 11). A tree of the [Aug] layout was
/// reviewed without them (docs/review.md, "Rules carry their checklist").
pub const OCT_ONLY: &[infx_report::Code] = &[
    EVENT_PUBLICATION,
    DRAFT_PRECISION_ENV,
    DRAFT_PRECISION_FLAG,
    GOLDEN_AL_HARDCODED,
];
