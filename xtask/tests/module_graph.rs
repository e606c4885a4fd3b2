//! xtask's modules import each other without a cycle, and so do xtask-dev's (issue #40 item 6;
//! docs/architecture.md, "Module graph"): scripts/module-graph.py reads the `crate::` paths and
//! exits 1 on a cycle.

use std::path::Path;
use std::process::Command;

#[test]
fn xtask_modules_form_no_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let script = root.join("scripts/module-graph.py");
    let out = match Command::new("python3")
        .arg(&script)
        .arg(root.join("xtask"))
        .arg(root.join("xtask-dev"))
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("SKIP: xtask_modules_form_no_import_cycle: python3 cannot run ({e})");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && stdout.lines().filter(|l| *l == "no cycle").count() == 2
            && !stdout.contains("CYCLE"),
        "{}:\n{stdout}{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
