//! The diagnostic codes the xtask emits itself (`cargo xtask dry-run`, the process), and the collection of every crate's registry that `cargo xtask codes` lists
//! and checks against the code tables in docs/ (README, "Diagnostic codes").

use infx_report::Code;

infx_report::codes! {
    ENTRY_UNBOUND = warning("dry-run/entry-unbound", "the master configs do not generate, so the recipe is not bound from them");
    NO_POINTS = error("dry-run/no-points", "the config key or --point selects no bound sweep point");
    NOTHING_RENDERED = error("dry-run/nothing-rendered", "the config key's points generate but none is rendered (no recipe reference, recipes not in the tree, or none binds)");
    POINTS_UNBOUND = warning("dry-run/points-unbound", "--conc/--point given for a recipe no master entry binds; every variant is shown");
    UNBOUND_FRAGMENT = note("dry-run/unbound-fragment", "no master entry uses the recipe, so lane, model, image and precision stay unbound");
    OUT_OF_MEMORY = error("process/out-of-memory", "an allocation failed: the run stopped before its verdict (exit 1, never a pass)");
}

/// One crate's registry: the crate that emits the codes and its `ALL`.
#[derive(Clone, Copy, Debug)]
pub struct Registry {
    pub krate: &'static str,
    pub codes: &'static [Code],
}

/// Every registry of the workspace, in dependency order (leaf crates first).
pub const REGISTRIES: &[Registry] = &[
    Registry {
        krate: "infx-report",
        codes: infx_report::codes::ALL,
    },
    Registry {
        krate: "infx-fs",
        codes: infx_fs::codes::ALL,
    },
    Registry {
        krate: "infx-yaml",
        codes: infx_yaml::codes::ALL,
    },
    Registry {
        krate: "infx-git",
        codes: infx_git::codes::ALL,
    },
    Registry {
        krate: "infx-diff",
        codes: infx_diff::codes::ALL,
    },
    Registry {
        krate: "infx-config",
        codes: infx_config::codes::ALL,
    },
    Registry {
        krate: "infx-recipe",
        codes: infx_recipe::codes::ALL,
    },
    Registry {
        krate: "infx-matrix",
        codes: infx_matrix::codes::ALL,
    },
    Registry {
        krate: "infx-changelog",
        codes: infx_changelog::codes::ALL,
    },
    Registry {
        krate: "infx-image",
        codes: infx_image::codes::ALL,
    },
    Registry {
        krate: "infx-review",
        codes: infx_review::codes::ALL,
    },
    Registry {
        krate: "infx-validate",
        codes: infx_validate::codes::ALL,
    },
    Registry {
        krate: "xtask",
        codes: ALL,
    },
];

/// Every registered code with the crate that owns it, sorted by code name.
pub fn all_codes() -> Vec<(&'static str, Code)> {
    let mut v: Vec<(&'static str, Code)> = REGISTRIES
        .iter()
        .flat_map(|r| r.codes.iter().map(move |c| (r.krate, *c)))
        .collect();
    v.sort_by_key(|(_, c)| *c);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_well_formed_and_described() {
        let mut seen = HashSet::new();
        for (krate, c) in all_codes() {
            assert!(seen.insert(c), "{c} registered twice ({krate})");
            assert!(c.as_str().contains('/') && !c.rule().is_empty(), "{c}");
            assert!(!c.summary().is_empty(), "{c} has no summary");
        }
        assert!(seen.len() > 200, "{} codes", seen.len());
    }
}
