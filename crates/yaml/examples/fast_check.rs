//! Holds the loader's fast path to the parser on every YAML file under the given directories:
//! prints each file whose fast reading differs (tree, spans, styles or duplicate keys), and
//! how many files and bytes the fast path read alone (docs/yaml.md, "The fast path"):
//! `cargo run --release -p infx-yaml --example fast_check -- DIR…`.

use std::path::Path;

fn main() {
    let opts = infx_yaml::LoadOptions {
        duplicate_keys: infx_yaml::DuplicateKeys::Record,
        ..Default::default()
    };
    let (mut files, mut fast_files, mut bytes, mut fast_bytes, mut differ) = (0, 0, 0, 0, 0);
    for d in std::env::args().skip(1) {
        for f in infx_yaml::yaml_files(Path::new(&d)).unwrap_or_default() {
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            files += 1;
            bytes += text.len();
            let ((parsed, dups), fast) = infx_yaml::build_both_ways(&f, &text, &opts);
            let Some((root, fast_dups)) = fast else {
                if std::env::var_os("SHOW_BAILS").is_some() {
                    println!("bail {}", f.display());
                }
                continue;
            };
            fast_files += 1;
            fast_bytes += text.len();
            let same = match &parsed {
                Ok(p) => infx_yaml::dump(p) == infx_yaml::dump(&root),
                Err(_) => false,
            } && format!("{dups:?}") == format!("{fast_dups:?}");
            if !same {
                differ += 1;
                println!("DIFFERS {}", f.display());
                if let Some(dir) = std::env::var_os("DIFF_DIR") {
                    let dir = Path::new(&dir);
                    let parser = match &parsed {
                        Ok(p) => infx_yaml::dump(p),
                        Err(e) => format!("ERR {e:?}\n"),
                    };
                    let _ = std::fs::write(dir.join("parser"), format!("{parser}{dups:?}\n"));
                    let fast = infx_yaml::dump(&root);
                    let _ = std::fs::write(dir.join("fast"), format!("{fast}{fast_dups:?}\n"));
                }
            }
        }
    }
    println!(
        "{fast_files}/{files} files, {fast_bytes}/{bytes} bytes read by the fast path; {differ} differ"
    );
}
