//! Prints every node of every YAML file under the given directories (span, style, value), or
//! the file's error, so that two builds of the loader can be compared byte for byte after an
//! optimisation (docs/performance.md): `cargo run --release -p infx-yaml --example dump_tree --
//! DIR… > tree.txt`. `SIZES=1` prints the in-memory sizes of the tree's types instead.

use std::fmt::Write;
use std::path::Path;

fn dump(n: &infx_yaml::Node, depth: usize, out: &mut String) {
    let (a, b) = (n.span.start, n.span.end);
    let _ = write!(
        out,
        "{:depth$}{:?} {}:{}:{}-{}:{}:{} ",
        "",
        n.style,
        a.offset(),
        a.line(),
        a.col(),
        b.offset(),
        b.line(),
        b.col()
    );
    match &n.value {
        infx_yaml::Value::Seq(items) => {
            let _ = writeln!(out, "seq {}", items.len());
            for i in items {
                dump(i, depth + 1, out);
            }
        }
        infx_yaml::Value::Map(m) => {
            let _ = writeln!(out, "map {}", m.len());
            for (k, v) in m.iter_nodes() {
                dump(k, depth + 1, out);
                dump(v, depth + 2, out);
            }
        }
        v => {
            let _ = writeln!(out, "{v:?}");
        }
    }
}

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
                Ok(doc) => dump(&doc.root, 0, &mut out),
                Err(e) => {
                    let _ = writeln!(out, "ERR {e:?}");
                }
            }
            print!("{out}");
        }
    }
}
