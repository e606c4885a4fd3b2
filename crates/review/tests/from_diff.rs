//! `Change::from_diff`: each changed file gets the added lines of its own text, whatever the
//! order of the texts, with statuses mapped and files without a text (deleted, binary) empty.

use infx_diff::{Base, BaseSource, ChangeSet, ChangedFile, FileText, Status as DiffStatus, WsRule};
use infx_review::{Change, Status};
use std::path::PathBuf;

fn text(path: &str, old: &str, new: &str) -> FileText {
    FileText::new(path, old.into(), new.into(), WsRule::default(), 7).expect("diff of buffers")
}

fn file(status: DiffStatus, path: &str, old_path: Option<&str>) -> ChangedFile {
    ChangedFile {
        status,
        path: PathBuf::from(path),
        old_path: old_path.map(PathBuf::from),
        same_content: false,
    }
}

#[test]
fn added_lines_follow_their_own_file() {
    let n = 2_000;
    let mut files = vec![
        file(DiffStatus::Deleted, "gone.yaml", None),
        file(DiffStatus::Renamed, "new/name.yaml", Some("old/name.yaml")),
        file(DiffStatus::Untracked, "untracked.yaml", None),
    ];
    files.extend((0..n).map(|i| file(DiffStatus::Modified, &format!("m/{i}.yaml"), None)));
    // Texts in reverse order of the files: a lookup by position would pair them wrongly.
    let mut texts: Vec<FileText> = (0..n)
        .rev()
        .map(|i| text(&format!("m/{i}.yaml"), "a: 1\n", &format!("a: 1\nb: {i}\n")))
        .collect();
    texts.push(text("new/name.yaml", "x: 1\n", "x: 1\ny: 2\nz: 3\n"));
    texts.push(text("untracked.yaml", "", "u: 1\n"));
    let diff = infx_diff::Change {
        set: ChangeSet {
            root: PathBuf::from("/repo"),
            base: Base {
                commit: None,
                source: BaseSource::UnbornHead,
            },
            head: None,
            files,
        },
        texts,
        binary: Vec::new(),
    };
    let c = Change::from_diff(&diff, Some(7));
    assert_eq!(c.pr, Some(7));
    assert_eq!(c.files.len(), n + 3);
    assert_eq!(c.files[0].status, Status::Deleted);
    assert!(c.files[0].added_lines.is_empty());
    assert_eq!(c.files[1].status, Status::Renamed);
    assert_eq!(c.files[1].old_path.as_deref(), Some("old/name.yaml"));
    assert_eq!(
        c.files[1].added_lines,
        [(2, "y: 2".to_string()), (3, "z: 3".to_string())]
    );
    assert_eq!(c.files[2].status, Status::Added);
    assert_eq!(c.files[2].added_lines, [(1, "u: 1".to_string())]);
    for (i, f) in c.files[3..].iter().enumerate() {
        assert_eq!(f.path, format!("m/{i}.yaml"));
        assert_eq!(f.status, Status::Modified);
        assert_eq!(f.added_lines, [(2, format!("b: {i}"))]);
    }
}
