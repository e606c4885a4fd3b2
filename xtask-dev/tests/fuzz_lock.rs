//! fuzz/ is its own workspace with its own lock: a crate version there that the main lock lacks
//! means fuzz/Cargo.lock went stale (the fuzz build would then fuzz other dependency versions
//! than the ones shipped, and rewrite the lock in CI).

use xtask_dev::cmd_test::registry_crates;

#[test]
fn fuzz_lock_uses_the_workspace_versions() {
    let root = xtask::paths::workspace_root();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let main = registry_crates(&read("Cargo.lock"));
    let fuzz = registry_crates(&read("fuzz/Cargo.lock"));
    let fuzz_only = ["cargo-package-libfuzzer-sys-", "cargo-package-arbitrary-"];
    let stale: Vec<&String> = fuzz
        .iter()
        .filter(|c| !fuzz_only.iter().any(|p| c.starts_with(p)))
        .filter(|c| !main.contains(*c))
        .collect();
    assert!(fuzz.len() > 20, "fuzz/Cargo.lock looks empty");
    assert_eq!(stale, Vec::<&String>::new(), "update fuzz/Cargo.lock");
}
