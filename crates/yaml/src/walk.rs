//! Finding YAML files: one walker for every command that reads a tree.

use std::path::{Path, PathBuf};

/// Every `*.yaml` / `*.yml` file below `dir`, depth first in sorted order, skipping hidden
/// entries (`.git`, editor files). An absent `dir` has none.
pub fn yaml_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(dir, &mut out)?;
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out)?;
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
            out.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_depth_first_without_hidden_entries() {
        let dir = std::env::temp_dir().join(format!("infx-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for f in [
            "b.yaml",
            "a/z.yml",
            "a/y.txt",
            ".git/x.yaml",
            "c/.hidden.yaml",
            "c/d.yaml",
        ] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        let found: Vec<String> = yaml_files(&dir)
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect();
        assert_eq!(found, ["a/z.yml", "b.yaml", "c/d.yaml"]);
        assert!(yaml_files(&dir.join("absent")).unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
