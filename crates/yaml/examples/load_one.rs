//! Loads one YAML file the way `validate` does (`infx_yaml::load_file`) and prints `ok NODES`
//! or the finding's code; bench/yaml-hostile.sh runs it under GNU time for peak RSS per input
//! byte: `cargo run --release -p infx-yaml --example load_one -- FILE`.

use std::path::Path;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: load_one FILE");
        std::process::exit(2);
    };
    match infx_yaml::load_file(Path::new(&path)) {
        Ok(doc) => println!("ok {}", doc.root.count()),
        Err(d) => println!("{}", d.code),
    }
}
