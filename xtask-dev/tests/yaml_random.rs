//! The YAML differential against PyYAML itself (docs/yaml.md, "Random differential") on its
//! fixed seed (xtask-dev/src/conformance/seeds.rs): 10,000 generated texts with tabs, control
//! characters, YAML 1.1 line breaks and redefined anchors in every kind of place, read by
//! `yaml.safe_load` and by infx-yaml; verdicts, values, and the character rules' messages and
//! positions must agree. `INFX_SEED` (and `INFX_CASES`) replays another seed. Skips visibly
//! without ../shared/reference or when the venv cannot be made.

use xtask_dev::conformance::seeds::{self, Differential};

#[test]
fn fixed_seed_yaml_texts_agree_with_pyyaml() {
    if let Err(why) = xtask_dev::conformance::yaml_random::oracle() {
        println!("SKIP: yaml random differential: {why}");
        return;
    }
    // The YAML differential reads no corpus; the argument is unused.
    let failures = seeds::check_fixed(Differential::Yaml, std::path::Path::new("."))
        .expect("the differential runs");
    assert!(
        failures.is_empty(),
        "disagreements with PyYAML:\n{failures}"
    );
}
