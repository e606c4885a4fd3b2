//! Prints every node of every YAML file under the given directories (span, style, value), or
//! the file's error, so that two builds of the loader can be compared byte for byte after an
//! optimisation (docs/performance.md): `cargo run --release -p infx-yaml --example dump_tree --
//! DIR… > tree.txt`. `SIZES=1` prints the in-memory sizes of the tree's types instead.

use std::path::Path;

fn main() {
    if std::env::var_os("SIZES").is_some() {
        println!(
            "Node {} B, Value {} B, Mapping {} B, Span {} B",
            std::mem::size_of::<infx_yaml::Node>(),
            std::mem::size_of::<infx_yaml::Value>(),
            std::mem::size_of::<infx_yaml::Mapping>(),
            std::mem::size_of::<infx_yaml::Span>()
        );
        return;
    }
    for d in std::env::args().skip(1) {
        for f in infx_yaml::yaml_files(Path::new(&d)).unwrap_or_default() {
            let mut out = format!("== {}\n", f.display());
            match infx_yaml::load_file(&f) {
                Ok(doc) => out.push_str(&infx_yaml::dump(&doc.root)),
                Err(e) => {
                    out.push_str(&format!("ERR {e:?}\n"));
                }
            }
            print!("{out}");
        }
    }
}
