//! Output for GitHub Actions: the rows split into chunks of at most 256 jobs (GitHub's limit
//! per matrix), each chunk a `{"include": [...]}` object that `fromJSON` turns into a
//! `strategy.matrix` directly. Printed as `$GITHUB_OUTPUT` lines:
//!
//! ```text
//! rows=1820
//! chunk_count=8
//! chunk_0={"include": [...]}
//! ...
//! ```

use crate::json::{Json, Object};

/// GitHub's maximum number of jobs one matrix may generate.
pub const MAX_JOBS_PER_MATRIX: usize = 256;

/// The rows as chunks of at most `max_jobs` (clamped to 1..=256).
pub(crate) fn chunks(rows: &[Object], max_jobs: usize) -> Vec<Json> {
    let size = max_jobs.clamp(1, MAX_JOBS_PER_MATRIX);
    rows.chunks(size)
        .map(|c| {
            let mut o = Object::new();
            o.set(
                "include",
                Json::List(c.iter().cloned().map(Json::Object).collect()),
            );
            Json::Object(o)
        })
        .collect()
}

/// `$GITHUB_OUTPUT` lines: `rows`, `chunk_count`, then `chunk_<i>` per chunk (one line each;
/// the JSON never contains a raw newline because strings are escaped).
pub fn github_output(rows: &[Object], max_jobs: usize) -> String {
    let chunks = chunks(rows, max_jobs);
    let mut out = format!("rows={}\nchunk_count={}\n", rows.len(), chunks.len());
    for (i, c) in chunks.iter().enumerate() {
        out.push_str(&format!("chunk_{i}={}\n", c.to_python()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: i64) -> Object {
        let mut o = Object::new();
        o.put("conc", Json::Int(i));
        o.put("exp-name", Json::str("a\nb"));
        o
    }

    #[test]
    fn chunks_hold_at_most_256_jobs_and_keep_order() {
        let rows: Vec<Object> = (0..600).map(row).collect();
        let c = chunks(&rows, 1000);
        let sizes: Vec<usize> = c
            .iter()
            .filter_map(|j| j.as_object()?.get("include")?.as_list().map(<[Json]>::len))
            .collect();
        assert_eq!(sizes, [256, 256, 88]);
        let out = github_output(&rows, 256);
        assert_eq!(out.lines().count(), 2 + 3);
        assert!(out.starts_with("rows=600\nchunk_count=3\nchunk_0={\"include\": [{\"conc\": 0, "));
        assert!(
            out.lines()
                .nth(4)
                .is_some_and(|l| l.starts_with("chunk_2="))
        );
    }

    #[test]
    fn no_rows_means_no_chunks() {
        assert_eq!(github_output(&[], 256), "rows=0\nchunk_count=0\n");
    }
}
