//! The diagnostic codes of the image check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

use infx_report::Code;

pub const DIGEST_ALGORITHM: Code = Code::error(
    "image/digest-algorithm",
    "an image is pinned with a digest that is not sha256",
);
pub const DIGEST_MISMATCH: Code = Code::error(
    "image/digest-mismatch",
    "the registry served content whose digest differs",
);
pub const DIGEST_MISSING: Code = Code::error(
    "image/digest-missing",
    "the pinned digest no longer exists in the registry",
);
pub const EDIT: Code = Code::error(
    "image/edit",
    "pin produced overlapping edits and wrote nothing (a bug in infx)",
);
pub const MALFORMED: Code = Code::error("image/malformed", "an image reference does not parse");
pub const MISSING_PLATFORM: Code = Code::error(
    "image/missing-platform",
    "the index lacks a required platform",
);
pub const MISSING_TAG: Code = Code::error("image/missing-tag", "an image has a digest but no tag");
pub const NOT_A_STRING: Code = Code::error(
    "image/not-a-string",
    "a master config image is not a string",
);
pub const NOT_MULTI_ARCH: Code = Code::error(
    "image/not-multi-arch",
    "the pinned digest is a single-platform manifest, not an index",
);
pub const ONLY_UNMATCHED: Code = Code::error(
    "image/only-unmatched",
    "pin --only names no reference and no master config key in the files pinned",
);
pub const REGISTRY: Code = Code::error("image/registry", "the registry could not be asked");
pub const TAG_MISSING: Code = Code::warning(
    "image/tag-missing",
    "the tag is gone but the pinned content still exists",
);
pub const TAG_MOVED: Code = Code::error(
    "image/tag-moved",
    "the tag now points at a different index than the pin",
);
pub const TAG_NOT_FOUND: Code = Code::error(
    "image/tag-not-found",
    "the tag does not exist in the registry",
);
pub const UNPINNED: Code =
    Code::error("image/unpinned", "an image reference has no @sha256 digest");
pub const UNSUPPORTED_SCALAR: Code = Code::warning(
    "image/unsupported-scalar",
    "an image is written in a YAML style pin cannot edit byte-exactly",
);

/// Every code above, in name order.
pub const ALL: &[Code] = &[
    DIGEST_ALGORITHM,
    DIGEST_MISMATCH,
    DIGEST_MISSING,
    EDIT,
    MALFORMED,
    MISSING_PLATFORM,
    MISSING_TAG,
    NOT_A_STRING,
    NOT_MULTI_ARCH,
    ONLY_UNMATCHED,
    REGISTRY,
    TAG_MISSING,
    TAG_MOVED,
    TAG_NOT_FOUND,
    UNPINNED,
    UNSUPPORTED_SCALAR,
];
