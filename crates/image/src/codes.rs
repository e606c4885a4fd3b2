//! The diagnostic codes of the image check: every code it emits, with its default severity and
//! a one-line summary (`cargo xtask codes` lists them; docs/ documents each one).

infx_report::codes! {
    DIGEST_ALGORITHM = error("image/digest-algorithm", "an image is pinned with a digest that is not sha256");
    DIGEST_MISMATCH = error("image/digest-mismatch", "the registry served content whose digest differs");
    DIGEST_MISSING = error("image/digest-missing", "the pinned digest no longer exists in the registry");
    EDIT = error("image/edit", "pin produced overlapping edits and wrote nothing (a bug in infx)");
    MALFORMED = error("image/malformed", "an image reference does not parse");
    MISSING_PLATFORM = error("image/missing-platform", "the index lacks a required platform");
    MISSING_TAG = error("image/missing-tag", "an image has a digest but no tag");
    NOT_A_STRING = error("image/not-a-string", "a master config image is not a string");
    NOT_MULTI_ARCH = error("image/not-multi-arch", "the pinned digest is a single-platform manifest, not an index");
    PIN_DROPPED = error("image/pin-dropped", "a change replaced a digest-pinned image by an unpinned reference");
    POLICY = error("image/policy", "the tree's infx.yaml states no valid image-pins policy");
    ONLY_UNMATCHED = error("image/only-unmatched", "pin --only names no reference and no master config key in the files pinned");
    REGISTRY = error("image/registry", "the registry could not be asked");
    TAG_MISSING = warning("image/tag-missing", "the tag is gone but the pinned content still exists");
    TAG_MOVED = error("image/tag-moved", "the tag now points at a different index than the pin");
    TAG_ONLY = warning("image/tag-only", "an image is referenced by tag only (the tree does not require pins)");
    TAG_NOT_FOUND = error("image/tag-not-found", "the tag does not exist in the registry");
    UNPINNED = error("image/unpinned", "an image reference has no @sha256 digest");
    UNSUPPORTED_SCALAR = warning("image/unsupported-scalar", "an image is written in a YAML style pin cannot edit byte-exactly");
}
