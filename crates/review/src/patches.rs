//! Check 10: no engine patches without a waiver (`docs/waiver/<PR>.md` added in the same PR with
//! the required sections).

use crate::codes;
use infx_report::{Diagnostic, Span};
use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) const CODE: infx_report::Code = codes::ENGINE_PATCH;
pub(crate) const CODE_WAIVER: infx_report::Code = codes::WAIVER;

/// How a file changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Added,
    Modified,
    Deleted,
    Renamed,
}

/// One file of the change: its status and the lines it adds (1-based head line numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub old_path: Option<String>,
    pub status: Status,
    pub added_lines: AddedLines,
}

/// The lines a change adds to one file: each line's number and its byte range in the file's
/// text, which is shared with the diff rather than copied line by line (a change adding 16k
/// recipe files held a `String` per added line; docs/performance.md,
/// "Memory per added file (session 40)").
#[derive(Clone, Debug, Default)]
pub struct AddedLines {
    /// Valid UTF-8 (checked once when built), so every line slice is too.
    text: Arc<[u8]>,
    lines: Lines,
}

/// Which lines of [`AddedLines::text`] were added.
#[derive(Clone, Debug)]
enum Lines {
    /// (1-based number, start, end) of each line, `end` before its line break.
    Picked(Vec<(u32, u32, u32)>),
    /// Every line of the text (a new file's): found again when asked, not held, 12 bytes a
    /// line less for each of a large change's new files (docs/performance.md, "Memory per
    /// added file (session 40)").
    All(usize),
}

impl Default for Lines {
    fn default() -> Self {
        Lines::Picked(Vec::new())
    }
}

impl AddedLines {
    /// The lines of `text` numbered `numbers` (1-based; a number past the end is left out), in
    /// the order of `numbers`, as `str::lines` splits them. Ascending numbers (a diff's,
    /// always) are picked in one walk over the text. A text that is not UTF-8 is replaced by
    /// its lossy form (one copy).
    pub fn pick(text: Arc<[u8]>, numbers: &[usize]) -> AddedLines {
        // A rename or mode change adds no line: no reason to look at its text.
        if numbers.is_empty() {
            return AddedLines::default();
        }
        let text = match std::str::from_utf8(&text) {
            Ok(_) => text,
            Err(_) => Arc::from(String::from_utf8_lossy(&text).as_bytes()),
        };
        let number =
            |n: usize, (start, end): (u32, u32)| Some((u32::try_from(n).ok()?, start, end));
        let lines = if numbers.is_sorted() {
            // A diff's numbers ascend: one walk that stops at the last one, without a vector of
            // every line (the changed file can be a whole master config).
            // 1, 2, … to the last line: every line, numbered as the text runs.
            if numbers.iter().enumerate().all(|(i, &n)| n == i + 1)
                && line_ranges(&text).count() == numbers.len()
            {
                return AddedLines {
                    text,
                    lines: Lines::All(numbers.len()),
                };
            }
            let mut wanted = numbers.iter().copied().peekable();
            let mut lines = Vec::with_capacity(numbers.len());
            for (i, range) in line_ranges(&text).enumerate() {
                while wanted.next_if(|&n| n < i + 1).is_some() {}
                while wanted.next_if_eq(&(i + 1)).is_some() {
                    lines.extend(number(i + 1, range));
                }
                if wanted.peek().is_none() {
                    break;
                }
            }
            lines
        } else {
            let all: Vec<(u32, u32)> = line_ranges(&text).collect();
            numbers
                .iter()
                .filter_map(|&n| number(n, *all.get(n.checked_sub(1)?)?))
                .collect()
        };
        AddedLines {
            text,
            lines: Lines::Picked(lines),
        }
    }

    /// Lines given with their text (a patch's `+` lines, tests).
    pub fn from_lines(lines: impl IntoIterator<Item = (usize, String)>) -> AddedLines {
        let mut text = String::new();
        let mut out = Vec::new();
        for (n, line) in lines {
            let start = text.len();
            text.push_str(&line);
            if let (Ok(n), Ok(start), Ok(end)) = (
                u32::try_from(n),
                u32::try_from(start),
                u32::try_from(text.len()),
            ) {
                out.push((n, start, end));
            }
            text.push('\n');
        }
        AddedLines {
            text: Arc::from(text.into_bytes()),
            lines: Lines::Picked(out),
        }
    }

    /// Each added line: its number and its text.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        let (picked, all) = match &self.lines {
            Lines::Picked(lines) => (Some(lines.iter().copied()), None),
            Lines::All(_) => (None, Some(line_ranges(&self.text).zip(1u32..))),
        };
        let all = all
            .into_iter()
            .flatten()
            .map(|((start, end), n)| (n, start, end));
        picked
            .into_iter()
            .flatten()
            .chain(all)
            .map(|(n, start, end)| {
                let bytes = self
                    .text
                    .get(start as usize..end as usize)
                    .unwrap_or_default();
                (n as usize, std::str::from_utf8(bytes).unwrap_or_default())
            })
    }

    pub fn len(&self) -> usize {
        match &self.lines {
            Lines::Picked(lines) => lines.len(),
            Lines::All(count) => *count,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether line `n` is one of them.
    pub fn has_line(&self, n: usize) -> bool {
        match &self.lines {
            Lines::Picked(lines) => lines.iter().any(|&(m, ..)| m as usize == n),
            Lines::All(count) => (1..=*count).contains(&n),
        }
    }
}

impl PartialEq for AddedLines {
    /// Same numbers with the same texts; where the texts live does not matter.
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for AddedLines {}

impl<S: AsRef<str>> PartialEq<[(usize, S)]> for AddedLines {
    fn eq(&self, other: &[(usize, S)]) -> bool {
        self.iter().eq(other.iter().map(|(n, s)| (*n, s.as_ref())))
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[(usize, S); N]> for AddedLines {
    fn eq(&self, other: &[(usize, S); N]) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>> PartialEq<Vec<(usize, S)>> for AddedLines {
    fn eq(&self, other: &Vec<(usize, S)>) -> bool {
        *self == other[..]
    }
}

/// (start, end) of every line of `text` as `str::lines` gives them: split at `\n`, a `\r`
/// before it dropped, no empty last line after a final line break.
fn line_ranges(text: &[u8]) -> impl Iterator<Item = (u32, u32)> + '_ {
    let sat = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let mut start = 0usize;
    let mut breaks = memchr::memchr_iter(b'\n', text);
    std::iter::from_fn(move || match breaks.next() {
        Some(nl) => {
            let end = if nl > start && text[nl - 1] == b'\r' {
                nl - 1
            } else {
                nl
            };
            let range = (sat(start), sat(end));
            start = nl + 1;
            Some(range)
        }
        // A last line without a line break keeps a `\r` (as `str::lines` does).
        None if start < text.len() => {
            let range = (sat(start), sat(text.len()));
            start = text.len();
            Some(range)
        }
        None => None,
    })
}

/// Waiver files present at head, by PR number, with their text.
pub type Waivers = BTreeMap<u64, (String, String)>;

/// The required waiver sections, each recognised by any of its words on a heading or label line.
pub(crate) const WAIVER_SECTIONS: &[(&str, &[&str])] = &[
    ("config covered", &["config"]),
    ("what is patched", &["patched", "what is patch", "patch"]),
    ("why the stock image fails", &["why", "stock image"]),
    ("upstream links", &["upstream"]),
    ("removal plan", &["removal", "remove"]),
];

/// The substrings `patch_indicator` looks for, all lower-case ASCII; a line matches one when it
/// contains it in any ASCII case (the same as searching the line's `to_ascii_lowercase` copy).
/// The index of each needle is its bit in [`needles_present`]'s mask.
const NEEDLES: &[&[u8]] = &[
    b"git apply",
    b"git am ",
    b"patch ",
    b"sitecustomize",
    // Engine install locations.
    b"site-packages",
    b"dist-packages",
    b"/sgl-workspace",
    b"find_spec",
    b"sglang/srt/",
    b"vllm/model_executor",
    b"vllm/v1/",
    b"tensorrt_llm/",
    // Writes.
    b"sed -i",
    b"cat >",
    b"tee ",
    b"<<",
    b" cp ",
    b" > ",
    // Installs.
    b"pip install",
    b"pip3 install",
    b"uv pip install",
    // Engine packages.
    b"vllm",
    b"sglang",
    b"tensorrt",
    b"trtllm",
    b"flashinfer",
    b"sgl-kernel",
    b"sgl_kernel",
    // Wheel sources.
    b".whl",
    b"git+",
];

/// Bit masks of [`NEEDLES`] by group (bit i = `NEEDLES[i]`).
const fn bits(from: usize, to: usize) -> u64 {
    let mut m = 0u64;
    let mut i = from;
    while i < to {
        m |= 1 << i;
        i += 1;
    }
    m
}
const GIT_APPLY: u64 = bits(0, 2);
const PATCH_WORD: u64 = bits(2, 3);
const SITECUSTOMIZE: u64 = bits(3, 4);
const ENGINE_LOCATIONS: u64 = bits(4, 12);
const WRITES: u64 = bits(12, 18);
const INSTALLS: u64 = bits(18, 21);
const ENGINE_PACKAGES: u64 = bits(21, 28);
const WHEEL_SOURCES: u64 = bits(28, 30);

/// For each lower-case byte, the needles that start with it: the scan tries only those.
const NEEDLES_BY_FIRST_BYTE: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < NEEDLES.len() {
        table[NEEDLES[i][0] as usize] |= 1 << i;
        i += 1;
    }
    table
};

/// Which needles occur in `line`, ignoring ASCII case: one pass over its bytes, no copy
/// (Check 10 scans every added line of a change, docs/performance.md).
fn needles_present(line: &[u8]) -> u64 {
    let mut found = 0u64;
    for at in 0..line.len() {
        let mut candidates = NEEDLES_BY_FIRST_BYTE[line[at].to_ascii_lowercase() as usize] & !found;
        while candidates != 0 {
            let i = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            if starts_with_ignore_ascii_case(&line[at..], NEEDLES[i]) {
                found |= 1 << i;
            }
        }
    }
    found
}

fn starts_with_ignore_ascii_case(hay: &[u8], lower_needle: &[u8]) -> bool {
    hay.len() >= lower_needle.len() && hay[..lower_needle.len()].eq_ignore_ascii_case(lower_needle)
}

/// Why an added line looks like an engine patch, or `None`.
pub(crate) fn patch_indicator(line: &str) -> Option<&'static str> {
    let t = line.trim();
    if t.starts_with('#') || t.starts_with("//") {
        return None; // comments never patch anything
    }
    let found = needles_present(t.as_bytes());
    let any = |group: u64| found & group != 0;
    if any(GIT_APPLY) {
        return Some("applies a patch with git");
    }
    if any(PATCH_WORD) && has_patch_command(t) {
        return Some("runs `patch`");
    }
    if any(SITECUSTOMIZE) {
        return Some("installs a sitecustomize hook");
    }
    let writes = any(WRITES)
        || starts_with_ignore_ascii_case(t.as_bytes(), b"cp ")
        || starts_with_ignore_ascii_case(t.as_bytes(), b"mv ");
    if any(ENGINE_LOCATIONS) && writes {
        return Some("rewrites installed engine sources");
    }
    if any(INSTALLS) && any(ENGINE_PACKAGES) && any(WHEEL_SOURCES) {
        return Some("installs a rebuilt or forked engine wheel");
    }
    None
}

/// Whether `line` runs `patch` with an option or a redirected input: the word `patch ` (any
/// ASCII case) after a command boundary, followed by `-` or `<`.
fn has_patch_command(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut start = 0;
    while let Some(i) = find_ignore_ascii_case(&bytes[start..], b"patch ") {
        let at = start + i;
        let boundary = at == 0
            || matches!(
                bytes[at - 1],
                b' ' | b';' | b'&' | b'|' | b'(' | b'`' | b'\t'
            );
        // `at + 6` ends the ASCII match, so it is a char boundary.
        let rest = line[at + 6..].trim_start();
        if boundary && (rest.starts_with('-') || rest.starts_with('<')) {
            return true;
        }
        start = at + 6;
    }
    false
}

fn find_ignore_ascii_case(hay: &[u8], lower_needle: &[u8]) -> Option<usize> {
    (0..hay.len()).find(|&at| starts_with_ignore_ascii_case(&hay[at..], lower_needle))
}

/// Parses `git diff -U0 -M` output (no colour) into file changes with their added lines.
#[cfg(test)]
pub(crate) fn parse_unified_diff(text: &str) -> Vec<FileChange> {
    let mut out: Vec<FileChange> = Vec::new();
    // The current file's `+` lines, until the next file starts.
    let mut pending: Vec<(usize, String)> = Vec::new();
    let mut in_hunk = false;
    let mut next_line = 0usize;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            if let Some(done) = out.last_mut() {
                done.added_lines = AddedLines::from_lines(std::mem::take(&mut pending));
            }
            // `a/<old> b/<new>`; renames are confirmed by the `rename from/to` lines.
            let b = rest.split_once(" b/").map(|(_, b)| b).unwrap_or(rest);
            out.push(FileChange {
                path: b.to_string(),
                old_path: None,
                status: Status::Modified,
                added_lines: AddedLines::default(),
            });
            in_hunk = false;
            continue;
        }
        let Some(cur) = out.last_mut() else { continue };
        if !in_hunk {
            if line.starts_with("new file mode") {
                cur.status = Status::Added;
            } else if line.starts_with("deleted file mode") {
                cur.status = Status::Deleted;
            } else if let Some(from) = line.strip_prefix("rename from ") {
                cur.status = Status::Renamed;
                cur.old_path = Some(from.to_string());
            } else if let Some(to) = line.strip_prefix("rename to ") {
                cur.path = to.to_string();
            }
        }
        if let Some(h) = line.strip_prefix("@@ ") {
            // @@ -a,b +c,d @@
            next_line = h
                .split_whitespace()
                .find_map(|t| t.strip_prefix('+'))
                .and_then(|t| t.split(',').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            in_hunk = true;
        } else if in_hunk {
            if let Some(added) = line.strip_prefix('+') {
                pending.push((next_line, added.to_string()));
                next_line += 1;
            } else if line.starts_with(' ') {
                next_line += 1;
            }
        }
    }
    if let Some(done) = out.last_mut() {
        done.added_lines = AddedLines::from_lines(pending);
    }
    out
}

/// Missing sections of a waiver text.
pub(crate) fn missing_sections(text: &str) -> Vec<&'static str> {
    let labels: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with('#') || l.starts_with("**") || l.starts_with("- **") || l.contains(':')
        })
        .map(str::to_ascii_lowercase)
        .collect();
    WAIVER_SECTIONS
        .iter()
        .filter(|(_, words)| !labels.iter().any(|l| words.iter().any(|w| l.contains(w))))
        .map(|(name, _)| *name)
        .collect()
}

fn waiver_path(p: &str) -> Option<u64> {
    let rest = infx_config::layout::tree_relative(p)
        .strip_prefix(infx_config::layout::WAIVERS_DIR)?
        .strip_prefix('/')?;
    rest.strip_suffix(".md")?.parse().ok()
}

/// Check 10 over a change. `pr` is the PR number when known; `waivers` the waiver files at head.
/// Whether a changed file (its lower-cased repository path) is code a benchmark runs, whose
/// added lines can patch the engine: launchers, recipes and the Python they call. Not CI
/// workflows (their prose and steps run on GitHub's machines), not Python tests (a test
/// *named* after sitecustomize patches nothing), not YAML or JSON outside `benchmarks/`
/// (master configs and the changelog describe, they do not run): docs/review.md, "Check 10".
fn run_by_a_benchmark(lower: &str) -> bool {
    let name = lower.rsplit('/').next().unwrap_or(lower);
    let python_test = lower.ends_with(".py")
        && (name.starts_with("test_")
            || name.ends_with("_test.py")
            || name == "conftest.py"
            || lower.contains("/tests/")
            || lower.starts_with("tests/"));
    let data = [".yaml", ".yml", ".json"]
        .iter()
        .any(|e| lower.ends_with(e));
    let in_benchmarks = infx_config::layout::has_benchmarks_folder(lower);
    !(lower.starts_with(".github/") || lower.contains("/.github/") || python_test)
        && (!data || in_benchmarks)
}

pub(crate) fn check(changes: &[FileChange], pr: Option<u64>, waivers: &Waivers) -> Vec<Diagnostic> {
    let mut findings: Vec<Diagnostic> = Vec::new();
    for f in changes {
        if f.status == Status::Deleted {
            continue;
        }
        let lower = f.path.to_ascii_lowercase();
        if (lower.ends_with(".patch") || lower.ends_with(".diff"))
            && matches!(f.status, Status::Added | Status::Renamed)
        {
            findings.push(
                Diagnostic::error(CODE, format!("the change adds the patch file `{}`", f.path))
                    .with_path(&f.path),
            );
        }
        if lower.ends_with(".patch")
            || lower.ends_with(".diff")
            || lower.ends_with(".md")
            || lower.starts_with("docs/")
            || lower.contains("/docs/")
        {
            continue; // prose may quote commands
        }
        if !run_by_a_benchmark(&lower) {
            continue;
        }
        for (line, text) in f.added_lines.iter() {
            if let Some(why) = patch_indicator(text) {
                findings.push(
                    Diagnostic::error(CODE, format!("added line {why}: `{}`", text.trim()))
                        .at(&f.path, Span::line(line)),
                );
            }
        }
    }
    if findings.is_empty() {
        return findings;
    }
    let added_in_pr = |n: u64| {
        changes
            .iter()
            .any(|c| c.status == Status::Added && waiver_path(&c.path) == Some(n))
    };
    let help_missing = |n: &str| {
        format!(
            "the pinned image must run as shipped; otherwise add docs/waiver/{n}.md in this PR with: config covered, what is patched, why the stock image fails, upstream links, removal plan"
        )
    };
    match pr {
        None => findings
            .into_iter()
            .map(|d| {
                d.with_help(help_missing("<PR>")).with_note(
                    "the PR number is unknown (pass --pr N), so no waiver can be matched",
                )
            })
            .collect(),
        Some(n) => match waivers.get(&n) {
            None => findings
                .into_iter()
                .map(|d| d.with_help(help_missing(&n.to_string())))
                .collect(),
            Some((path, text)) => {
                let mut out = Vec::new();
                if !added_in_pr(n) {
                    out.push(
                        Diagnostic::error(
                            CODE_WAIVER,
                            format!("waiver `{path}` exists but is not added by this PR"),
                        )
                        .with_path(path)
                        .with_help("a waiver must be added in the PR that introduces the patch"),
                    );
                }
                let missing = missing_sections(text);
                if !missing.is_empty() {
                    out.push(
                        Diagnostic::error(
                            CODE_WAIVER,
                            format!("waiver `{path}` lacks: {}", missing.join(", ")),
                        )
                        .with_path(path)
                        .with_help("add a heading or `Label:` line for each required section"),
                    );
                }
                if out.is_empty() {
                    // Waived: keep the findings visible as notes so a reviewer links the waiver.
                    findings
                        .into_iter()
                        .map(|mut d| {
                            d.severity = infx_report::Severity::Note;
                            d.with_note(format!("waived by {path} (presence is not approval)"))
                        })
                        .collect()
                } else {
                    out.extend(findings);
                    out
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn script(path: &str, lines: &[&str]) -> FileChange {
        FileChange {
            path: path.into(),
            old_path: None,
            status: Status::Added,
            added_lines: AddedLines::from_lines(
                lines
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (i + 1, l.to_string())),
            ),
        }
    }
    const WAIVER: &str = "# Waiver 2508\n## Config covered\nkimik3\n## What is patched\nx\n## Why the stock image fails\ny\n## Upstream links\nhttps://github.com/x/y/pull/1\n## Removal plan\nbump\n";

    #[test]
    fn indicators() {
        assert!(patch_indicator("git apply fix.patch").is_some());
        assert!(patch_indicator("  patch -p1 < fix.diff").is_some());
        assert!(
            patch_indicator("sed -i 's/a/b/' /usr/lib/python3/dist-packages/vllm/x.py").is_some()
        );
        assert!(patch_indicator("cat > $(python -c 'import importlib.util; print(importlib.util.find_spec(\"sglang\").origin)') <<EOF").is_some());
        assert!(patch_indicator("pip install https://x/vllm-0.1+fork.whl").is_some());
        assert!(patch_indicator("# git apply fix.patch").is_none());
        assert!(patch_indicator("pip install aiperf==0.3").is_none());
        assert!(patch_indicator("dispatch -x").is_none());
        assert!(patch_indicator("sed -i 's/a/b/' results.json").is_none());
    }

    /// The indicator as first written (search a lower-cased copy), kept as the oracle for the
    /// one-pass scan: both must agree on every line.
    fn indicator_by_lowercase_copy(line: &str) -> Option<&'static str> {
        let t = line.trim();
        if t.starts_with('#') || t.starts_with("//") {
            return None;
        }
        let l = t.to_ascii_lowercase();
        let has = |group: u64| {
            NEEDLES
                .iter()
                .enumerate()
                .any(|(i, n)| group & (1 << i) != 0 && l.contains(std::str::from_utf8(n).unwrap()))
        };
        if has(GIT_APPLY) {
            return Some("applies a patch with git");
        }
        if has_patch_command(&l) {
            return Some("runs `patch`");
        }
        if has(SITECUSTOMIZE) {
            return Some("installs a sitecustomize hook");
        }
        let writes = has(WRITES) || l.starts_with("cp ") || l.starts_with("mv ");
        if has(ENGINE_LOCATIONS) && writes {
            return Some("rewrites installed engine sources");
        }
        if has(INSTALLS) && has(ENGINE_PACKAGES) && has(WHEEL_SOURCES) {
            return Some("installs a rebuilt or forked engine wheel");
        }
        None
    }

    #[test]
    fn case_folding_is_ascii_only_and_matches_the_lowercase_copy() {
        // Any ASCII case matches.
        assert_eq!(
            patch_indicator("GIT APPLY x.patch"),
            Some("applies a patch with git")
        );
        assert_eq!(patch_indicator("(PaTcH -p1 < x)"), Some("runs `patch`"));
        assert_eq!(
            patch_indicator("CP x /usr/lib/Python3/Site-Packages/vllm/a.py"),
            Some("rewrites installed engine sources")
        );
        assert_eq!(
            patch_indicator("UV PIP INSTALL ./SGLang-1.0.WHL"),
            Some("installs a rebuilt or forked engine wheel")
        );
        // Non-ASCII look-alikes do not fold: the Kelvin sign is not `k`, dotted İ is not `i`.
        assert_eq!(patch_indicator("pip install sgl-\u{212A}ernel.whl"), None);
        assert_eq!(patch_indicator("SİTECUSTOMIZE"), None);
        // A needle split by a multi-byte character, at the line's end, or cut short.
        assert_eq!(patch_indicator("git\u{a0}apply"), None);
        assert_eq!(patch_indicator("echo git appl"), None);
        assert_eq!(patch_indicator("ßpatch -R"), None);
        assert_eq!(patch_indicator("é;patch -R"), Some("runs `patch`"));
        // Combinations of fragments in three cases agree with the lower-cased copy.
        let fragments = [
            "git apply",
            "git am ",
            "patch ",
            "-p1",
            "<",
            "sitecustomize",
            "site-packages",
            "/sgl-workspace",
            "vllm/v1/",
            "sed -i",
            "cat >",
            "tee ",
            "<<",
            "cp ",
            "mv ",
            " > ",
            "pip install",
            "pip3 install",
            "vllm",
            "sgl_kernel",
            ".whl",
            "git+",
            "x",
            "é",
            "# ",
            "\t",
            ";",
            "İ",
        ];
        let cased = |s: &str, k: usize| match k {
            0 => s.to_string(),
            1 => s.to_ascii_uppercase(),
            _ => s
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if i % 2 == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect(),
        };
        let mut checked = 0;
        for (a, fa) in fragments.iter().enumerate() {
            for fb in &fragments {
                for fc in &fragments[a % 5..a % 5 + 6] {
                    for k in 0..3 {
                        let line = format!("{}{}{}", cased(fa, k), fb, cased(fc, 2 - k));
                        assert_eq!(
                            patch_indicator(&line),
                            indicator_by_lowercase_copy(&line),
                            "{line:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// `pick` gives `str::lines`' lines at the numbers asked for (in their order; a number
        /// past the end left out), whether it keeps them or, for every line, finds them again.
        #[test]
        fn picked_lines_are_the_texts_lines(
            lines in proptest::collection::vec("(a|b c| |)\\r?", 0..8),
            ends in proptest::option::of("(x|\\r)"),
            every in proptest::bool::ANY,
            numbers in proptest::collection::vec(0usize..10, 0..6),
            sorted in proptest::bool::ANY,
        ) {
            let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            text.extend(ends);
            let want_lines: Vec<&str> = text.lines().collect();
            let numbers: Vec<usize> = if every {
                (1..=want_lines.len()).collect()
            } else {
                let mut n = numbers;
                if sorted {
                    n.sort_unstable();
                }
                n
            };
            let picked = AddedLines::pick(Arc::from(text.as_bytes()), &numbers);
            let want: Vec<(usize, &str)> = numbers
                .iter()
                .filter_map(|&n| Some((n, *want_lines.get(n.checked_sub(1)?)?)))
                .collect();
            proptest::prop_assert_eq!(picked.iter().collect::<Vec<_>>(), want.clone());
            proptest::prop_assert_eq!(picked.len(), want.len());
            for n in 0..12 {
                proptest::prop_assert_eq!(picked.has_line(n), want.iter().any(|&(m, _)| m == n));
            }
        }
    }

    #[test]
    fn failing_fixture_without_waiver() {
        let c = vec![script(
            "benchmarks/single_node/x.sh",
            &["set -e", "git apply fix.patch"],
        )];
        let d = check(&c, Some(9999), &Waivers::new());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, CODE);
        assert_eq!(d[0].span.map(|s| s.start.line()), Some(2));
    }

    #[test]
    fn passing_fixture_with_waiver_added_in_the_pr() {
        let c = vec![
            script(
                "benchmarks/single_node/agentic/apply_k3_container_patches.sh",
                &["git apply /tmp/k3.patch"],
            ),
            script("docs/waiver/2508.md", &[]),
        ];
        let mut w = Waivers::new();
        w.insert(2508, ("docs/waiver/2508.md".into(), WAIVER.into()));
        let d = check(&c, Some(2508), &w);
        assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
    }

    #[test]
    fn incomplete_or_preexisting_waiver_fails() {
        let c = vec![script("a.sh", &["git apply x.patch"])];
        let mut w = Waivers::new();
        w.insert(
            7,
            (
                "docs/waiver/7.md".into(),
                "# Waiver\n## Config covered\n".into(),
            ),
        );
        let d = check(&c, Some(7), &w);
        let codes: Vec<_> = d.iter().map(|d| d.code).collect();
        assert_eq!(codes, [CODE_WAIVER, CODE_WAIVER, CODE]);
    }

    #[test]
    fn unified_diff_parsing() {
        let d = "diff --git a/x.sh b/x.sh\nnew file mode 100644\n--- /dev/null\n+++ b/x.sh\n@@ -0,0 +1,2 @@\n+set -e\n+git apply a.patch\ndiff --git a/old.md b/new.md\nsimilarity index 90%\nrename from old.md\nrename to new.md\n@@ -3 +3,0 @@\n-gone\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -10,2 +12 @@\n-a\n-b\n+c\n";
        let f = parse_unified_diff(d);
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].status, f[0].added_lines.len()), (Status::Added, 2));
        assert_eq!(
            f[0].added_lines.iter().nth(1),
            Some((2, "git apply a.patch"))
        );
        assert_eq!(
            (f[1].status, f[1].path.as_str(), f[1].old_path.as_deref()),
            (Status::Renamed, "new.md", Some("old.md"))
        );
        assert_eq!(f[2].added_lines, vec![(12, "c".to_string())]);
    }

    #[test]
    fn only_code_a_benchmark_runs_is_read_for_patches() {
        // The real cases of upstream #1947 and #2217: a Python test's name, a file comparison
        // in a test, a workflow's prose; and a launcher line that does patch.
        let changes = [
            script(
                "utils/evals/test_eval_patches.py",
                &["def test_lm_eval_sitecustomize_hooks(tmp_path):"],
            ),
            script(
                ".github/workflows/run-sweep.yml",
                &["  # Patchwork includes patch files, git apply and more"],
            ),
            script(
                "configs/nvidia-master.yaml",
                &["  - \"pip install vllm-1.0.whl in the image\""],
            ),
            script(
                "benchmarks/single_node/x.sh",
                &["cp fix.py /usr/lib/python3/dist-packages/vllm/x.py"],
            ),
        ];
        let d = check(&changes, None, &Waivers::new());
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(
            d[0].path.as_deref(),
            Some(Path::new("benchmarks/single_node/x.sh"))
        );
        for (path, yes) in [
            ("benchmarks/benchmark_lib.sh", true),
            ("utils/evals/run_eval.py", true),
            ("benchmarks/multi_node/r.yaml", true),
            ("utils/evals/tests/helpers.py", false),
            ("perf-changelog.yaml", false),
            (".github/workflows/x.yml", false),
        ] {
            assert_eq!(run_by_a_benchmark(path), yes, "{path}");
        }
    }

    #[test]
    fn added_patch_file_is_a_finding() {
        let c = vec![script("benchmarks/fix.patch", &["--- a/x", "+++ b/x"])];
        let d = check(&c, None, &Waivers::new());
        assert_eq!(d.len(), 1);
        assert!(d[0].message.contains("patch file"));
    }
}
