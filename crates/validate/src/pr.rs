//! What validate knows about the pull request: `--labels` / `--pr`, or inside GitHub Actions
//! the `pull_request` event payload (`GITHUB_EVENT_PATH`). See README "Before you open a PR".

use crate::codes;
use infx_report::Diagnostic;
use std::path::{Path, PathBuf};

/// The pull request as the event payload describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrEvent {
    pub labels: Vec<String>,
    pub number: Option<u64>,
    pub head_sha: Option<String>,
}

/// The event file a run reads: `--event FILE`, else `GITHUB_EVENT_PATH` when GitHub Actions
/// reports a `pull_request` (or `pull_request_target`) event.
pub fn event_path_from_env() -> Option<PathBuf> {
    let actions = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    let name = std::env::var("GITHUB_EVENT_NAME").unwrap_or_default();
    if !actions || !matches!(name.as_str(), "pull_request" | "pull_request_target") {
        return None;
    }
    std::env::var_os("GITHUB_EVENT_PATH").map(PathBuf::from)
}

/// Event payloads are a few hundred KiB at most; a larger file is not one.
const MAX_EVENT_BYTES: u64 = 16 << 20;

/// Reads a `pull_request` event payload. `Ok(None)`: the payload has no `pull_request` (e.g. a
/// push event), so there is no PR to describe.
pub fn read_event(path: &Path) -> Result<Option<PrEvent>, Diagnostic> {
    let fail = |why: String| {
        Diagnostic::error(
            codes::PR_EVENT,
            format!("cannot read the event payload {}: {why}", path.display()),
        )
        .with_help("pass the PR's labels with --labels and its number with --pr instead")
    };
    let size = std::fs::metadata(path)
        .map_err(|e| fail(e.to_string()))?
        .len();
    if size > MAX_EVENT_BYTES {
        return Err(fail(format!(
            "{size} bytes is larger than any event payload"
        )));
    }
    // The runner's file, outside the tree: regular and size-limited, not confined.
    let bytes = infx_fs::read_unconfined(path).map_err(|e| fail(e.message))?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
    let Some(pr) = v.get("pull_request").filter(|p| p.is_object()) else {
        return Ok(None);
    };
    let labels = pr
        .get("labels")
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|l| l.get("name").and_then(serde_json::Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(PrEvent {
        labels,
        number: pr.get("number").and_then(serde_json::Value::as_u64),
        head_sha: pr
            .get("head")
            .and_then(|h| h.get("sha"))
            .and_then(serde_json::Value::as_str)
            .filter(|s| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_string),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_labels_number_and_head() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("event.json");
        let sha = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(
            &p,
            format!(r#"{{"action":"labeled","pull_request":{{"number":42,"labels":[{{"name":"full-sweep-fail-fast"}},{{"name":"all-evals"}}],"head":{{"sha":"{sha}"}}}}}}"#),
        )
        .unwrap();
        let e = read_event(&p).unwrap().unwrap();
        assert_eq!(e.labels, ["full-sweep-fail-fast", "all-evals"]);
        assert_eq!(e.number, Some(42));
        assert_eq!(e.head_sha.as_deref(), Some(sha));
        std::fs::write(&p, r#"{"ref":"refs/heads/main"}"#).unwrap();
        assert_eq!(read_event(&p).unwrap(), None);
        std::fs::write(&p, "not json").unwrap();
        assert_eq!(read_event(&p).unwrap_err().code, codes::PR_EVENT);
    }
}
