//! How often change detection reads a changed working-tree file: once when the binary sniff's
//! prefix holds all of it (docs/performance.md, "One read of a small new file"). A test binary
//! of its own: the byte counter is the process's.

mod common;

use common::Repo;
use infx_diff::{ChangeOptions, load_change};

#[test]
fn a_small_new_file_is_read_once_and_a_large_one_sniffed_then_read() {
    let r = Repo::new();
    r.write("base.txt", b"base\n");
    r.commit_all("base");
    let small: Vec<Vec<u8>> = [10usize, 100, 5000, 8000]
        .iter()
        .map(|&n| b"abcdefghi\n".iter().copied().cycle().take(n).collect())
        .collect();
    for (i, text) in small.iter().enumerate() {
        r.write(&format!("new/small{i}.txt"), text);
    }
    let large: Vec<u8> = b"0123456789abcde\n"
        .iter()
        .copied()
        .cycle()
        .take(9000)
        .collect();
    r.write("new/large.txt", &large);
    r.git(&["add", "-A"]);
    let before = infx_fs::bytes_read();
    let change = load_change(r.path(), &ChangeOptions::default()).unwrap_or_else(|d| panic!("{d}"));
    let read = infx_fs::bytes_read() - before;
    let small_bytes: usize = small.iter().map(Vec::len).sum();
    // The large file: its first 8,000 bytes for the sniff, then all of it for the text.
    assert_eq!(read as usize, small_bytes + 8000 + large.len());
    // And the texts are the files' bytes.
    let texts: Vec<&[u8]> = change.texts.iter().map(|t| &t.new[..]).collect();
    assert!(small.iter().all(|s| texts.contains(&s.as_slice())));
    assert!(texts.contains(&large.as_slice()));
}
