//! Check 0 (decidable part): CODEOWNERS with GitHub's semantics.
//!
//! Patterns follow gitignore rules with GitHub's restrictions (no `!`, no `[]`, `\#` escapes `#`);
//! the **last** matching line wins and owners never accumulate. Owner comparison is
//! case-insensitive.

use crate::codes;
use infx_report::{Diagnostic, Span};
use std::path::{Path, PathBuf};

pub(crate) const CODE_PARSE: infx_report::Code = codes::CODEOWNERS_SYNTAX;
pub(crate) const CODE_SIGNER: infx_report::Code = codes::CODEOWNERS_SIGNER;

/// One CODEOWNERS rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// 1-based line in the file.
    pub line: usize,
    pub pattern: String,
    /// Owners as written (`@user`, `@org/team`, e-mail). Empty: the pattern un-owns paths.
    pub owners: Vec<String>,
    anchored: bool,
    dir_only: bool,
    /// The pattern body (leading and trailing `/` removed).
    body: String,
}

impl Rule {
    /// The lone `*` catch-all (matches every path).
    pub fn is_catch_all(&self) -> bool {
        self.body == "*" || self.body == "**"
    }

    /// Whether this rule matches `path` (repository-relative, `/`-separated, no leading `/`).
    pub fn matches(&self, path: &str) -> bool {
        let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        if comps.is_empty() {
            return false;
        }
        if self.anchored {
            // The pattern names a file, or a directory whose contents all match.
            for k in 1..=comps.len() {
                let is_dir = k < comps.len();
                if self.dir_only && !is_dir {
                    continue;
                }
                if glob_match(self.body.as_bytes(), comps[..k].join("/").as_bytes()) {
                    return true;
                }
            }
            false
        } else {
            // No slash: the name matches at any depth, as a file or as a directory.
            comps.iter().enumerate().any(|(i, c)| {
                let is_dir = i + 1 < comps.len();
                (!self.dir_only || is_dir) && glob_match(self.body.as_bytes(), c.as_bytes())
            })
        }
    }
}

/// A parsed CODEOWNERS file.
#[derive(Clone, Debug, Default)]
pub struct CodeOwners {
    pub path: PathBuf,
    pub rules: Vec<Rule>,
}

/// Where the owners of one path come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathOwners {
    pub path: String,
    /// The winning rule (last match), if any.
    pub rule: Option<Rule>,
}

impl PathOwners {
    pub fn owners(&self) -> &[String] {
        self.rule
            .as_ref()
            .map(|r| r.owners.as_slice())
            .unwrap_or(&[])
    }
    /// Owned by a rule other than the catch-all.
    pub fn is_specific(&self) -> bool {
        self.rule
            .as_ref()
            .is_some_and(|r| !r.is_catch_all() && !r.owners.is_empty())
    }
}

/// Parses CODEOWNERS text. Lines that cannot be used are reported and skipped.
pub(crate) fn parse(path: &Path, text: &str) -> (CodeOwners, Vec<Diagnostic>) {
    let mut rules = Vec::new();
    let mut diags = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line_no = idx + 1;
        let line = strip_comment(raw);
        let mut fields = line.split_whitespace();
        let Some(pattern) = fields.next() else {
            continue;
        };
        let owners: Vec<String> = fields.map(str::to_string).collect();
        let pattern = pattern.replace("\\#", "#");
        if let Some(problem) = unsupported(&pattern) {
            diags.push(
                Diagnostic::error(
                    CODE_PARSE,
                    format!("CODEOWNERS pattern `{pattern}` {problem}"),
                )
                .at(path, Span::line(line_no))
                .with_help("GitHub ignores this line; rewrite the pattern without `!` or `[...]`"),
            );
            continue;
        }
        if let Some(bad) = owners
            .iter()
            .find(|o| !o.starts_with('@') && !o.contains('@'))
        {
            diags.push(
                Diagnostic::error(
                    CODE_PARSE,
                    format!("CODEOWNERS owner `{bad}` is not `@user`, `@org/team` or an e-mail"),
                )
                .at(path, Span::line(line_no))
                .with_help("GitHub rejects the line; prefix logins with `@`"),
            );
            continue;
        }
        let dir_only = pattern.ends_with('/') && pattern.len() > 1;
        let trimmed = pattern.trim_end_matches('/');
        let anchored = trimmed.starts_with('/') || trimmed.contains('/');
        let body = trimmed.trim_start_matches('/').to_string();
        let body = if body.is_empty() {
            "**".to_string()
        } else {
            body
        };
        rules.push(Rule {
            line: line_no,
            pattern: pattern.clone(),
            owners,
            anchored,
            dir_only,
            body,
        });
    }
    (
        CodeOwners {
            path: path.to_path_buf(),
            rules,
        },
        diags,
    )
}

fn strip_comment(line: &str) -> String {
    // `#` starts a comment unless escaped as `\#`.
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'#') {
            out.push_str("\\#");
            chars.next();
        } else if c == '#' {
            break;
        } else {
            out.push(c);
        }
    }
    out
}

fn unsupported(pattern: &str) -> Option<&'static str> {
    if pattern.starts_with('!') {
        Some("uses `!` negation, which CODEOWNERS does not support")
    } else if pattern.contains('[') {
        Some("uses a `[...]` range, which CODEOWNERS does not support")
    } else {
        None
    }
}

/// gitignore-style glob: `*` and `?` stay inside one path component, `**` crosses `/`,
/// `**/` also matches zero directories. Not `infx_fs::fnmatch`: CODEOWNERS patterns are
/// paths with gitignore rules (docs/review.md), where `/` is special and fnmatch's is not.
fn glob_match(p: &[u8], s: &[u8]) -> bool {
    if p.is_empty() {
        return s.is_empty();
    }
    if p.starts_with(b"**") {
        let rest = &p[2..];
        if let Some(after) = rest.strip_prefix(b"/") {
            // Zero or more whole directories.
            if glob_match(after, s) {
                return true;
            }
            return s
                .iter()
                .enumerate()
                .any(|(i, &c)| c == b'/' && glob_match(after, &s[i + 1..]));
        }
        return (0..=s.len()).any(|i| glob_match(rest, &s[i..]));
    }
    match p[0] {
        b'*' => {
            let rest = &p[1..];
            for i in 0..=s.len() {
                if glob_match(rest, &s[i..]) {
                    return true;
                }
                if i < s.len() && s[i] == b'/' {
                    break;
                }
            }
            false
        }
        b'?' => !s.is_empty() && s[0] != b'/' && glob_match(&p[1..], &s[1..]),
        b'\\' if p.len() > 1 => !s.is_empty() && s[0] == p[1] && glob_match(&p[2..], &s[1..]),
        c => !s.is_empty() && s[0] == c && glob_match(&p[1..], &s[1..]),
    }
}

impl CodeOwners {
    /// Owners of one path: the last matching rule wins.
    pub fn resolve(&self, path: &str) -> PathOwners {
        let path = path.trim_start_matches('/');
        let rule = self.rules.iter().rev().find(|r| r.matches(path)).cloned();
        PathOwners {
            path: path.to_string(),
            rule,
        }
    }

    /// Every owner named anywhere in the file (lower-cased, first-seen order).
    pub fn all_owners(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.rules {
            for o in &r.owners {
                let o = o.to_ascii_lowercase();
                if !out.contains(&o) {
                    out.push(o);
                }
            }
        }
        out
    }
}

/// A changed path; renames carry the source path too (both count).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedPath {
    pub path: String,
    pub old_path: Option<String>,
}

/// The signer and what is known about them offline.
#[derive(Clone, Debug, Default)]
pub struct Signer {
    /// `@login` (with or without `@`).
    pub login: String,
    /// Teams (`@org/team`) the signer is declared to belong to (team membership is not
    /// readable offline; the caller states it).
    pub teams: Vec<String>,
}

impl Signer {
    fn owns(&self, owners: &[String]) -> bool {
        let me = normalise_login(&self.login);
        owners.iter().any(|o| {
            let o = o.to_ascii_lowercase();
            o == me || self.teams.iter().any(|t| normalise_login(t) == o)
        })
    }
}

fn normalise_login(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    if s.starts_with('@') || s.contains('@') {
        s
    } else {
        format!("@{s}")
    }
}

/// The paths of a change with their owners (rename sources included, de-duplicated, in order).
pub fn owners_of_change(co: &CodeOwners, changed: &[ChangedPath]) -> Vec<PathOwners> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for c in changed {
        for p in std::iter::once(&c.path).chain(c.old_path.as_ref()) {
            if seen.insert(p.clone()) {
                out.push(co.resolve(p));
            }
        }
    }
    out
}

/// The core team the [Oct] scope rule exempts.
pub const OCT_CORE_TEAM: &str = "@semianalysisai/core";

/// [Oct] scope rule (`signoff_scope.py`): the union of the winning owners over all changed paths,
/// minus the core team. Users with admin permission and role are also exempt upstream, which is
/// not decidable offline, so they stay in the list. Empty: sign-off is "N/A".
pub fn required_owners(owners: &[PathOwners]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for po in owners {
        for o in po.owners() {
            let l = o.to_ascii_lowercase();
            if l != OCT_CORE_TEAM && !out.iter().any(|x| x.eq_ignore_ascii_case(o)) {
                out.push(o.clone());
            }
        }
    }
    out
}

/// Check 0: the signer must own every specifically owned changed path; catch-all paths accept any
/// CODEOWNER (anyone listed in the file, directly or through a declared team).
pub fn check_signer(co: &CodeOwners, changed: &[ChangedPath], signer: &Signer) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let login = normalise_login(&signer.login);
    let team_note = |owners: &[String], d: Diagnostic| -> Diagnostic {
        let teams: Vec<&String> = owners.iter().filter(|o| o.contains('/')).collect();
        if teams.is_empty() {
            d
        } else {
            d.with_note(format!(
                "team membership is not readable offline: if {login} belongs to {}, pass `--member-of <team>`",
                teams.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" or ")
            ))
        }
    };
    let all = co.all_owners();
    let anyone_listed = signer.owns(&all);
    let mut catch_all: Vec<(String, usize)> = Vec::new();
    for po in owners_of_change(co, changed) {
        let Some(rule) = &po.rule else { continue };
        if rule.owners.is_empty() {
            continue;
        }
        if po.is_specific() {
            if !signer.owns(&rule.owners) {
                let d = Diagnostic::error(
                    CODE_SIGNER,
                    format!(
                        "{login} does not own `{}`: CODEOWNERS line {} (`{}`) assigns it to {}",
                        po.path,
                        rule.line,
                        rule.pattern,
                        rule.owners.join(" ")
                    ),
                )
                .at(&co.path, Span::line(rule.line))
                .with_help("ask one of these owners to sign off, or split the change");
                diags.push(team_note(&rule.owners, d));
            }
        } else if !anyone_listed {
            catch_all.push((po.path.clone(), rule.line));
        }
    }
    if let Some(&(_, line)) = catch_all.first() {
        let mut d = Diagnostic::error(
            CODE_SIGNER,
            format!(
                "{login} is not a CODEOWNER: {} changed path(s) fall to the catch-all, which accepts anyone listed in CODEOWNERS",
                catch_all.len()
            ),
        )
        .at(&co.path, Span::line(line))
        .with_help("a CODEOWNER must sign off");
        for (p, _) in catch_all.iter().take(10) {
            d = d.with_note(format!("catch-all path: {p}"));
        }
        if catch_all.len() > 10 {
            d = d.with_note(format!("… and {} more", catch_all.len() - 10));
        }
        diags.push(team_note(&all, d));
    }
    diags
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUG: &str = "* @InferenceX/core\n\n# AMD master config\nconfigs/amd-master.yaml @billishyahao @chunfangamd @seungrokj @yctseng0211 @1am9trash\n\n# NVIDIA master config\nconfigs/nvidia-master.yaml @ankur-singh @kedarpotdar-nv @InferenceX/core\n\n# PoR\nMODELS.md @ankur-singh @chunfangamd @InferenceX/core\nMODELS_zh.md @ankur-singh @chunfangamd @InferenceX/core\n\n# OperatorX experimental\nexperimental/operatorx/ @hbarclay\n";

    fn co() -> CodeOwners {
        let (co, d) = parse(Path::new(".github/CODEOWNERS"), AUG);
        assert!(d.is_empty());
        co
    }
    fn changed(paths: &[&str]) -> Vec<ChangedPath> {
        paths
            .iter()
            .map(|p| ChangedPath {
                path: p.to_string(),
                old_path: None,
            })
            .collect()
    }
    fn signer(l: &str) -> Signer {
        Signer {
            login: l.into(),
            teams: vec![],
        }
    }

    #[test]
    fn worked_results_from_the_spec() {
        let co = co();
        let owners = |p: &str| co.resolve(p).owners().join(" ");
        assert_eq!(
            owners("configs/amd-master.yaml"),
            "@billishyahao @chunfangamd @seungrokj @yctseng0211 @1am9trash"
        );
        assert_eq!(
            owners("configs/nvidia-master.yaml"),
            "@ankur-singh @kedarpotdar-nv @InferenceX/core"
        );
        assert_eq!(
            owners("configs/deprecated/amd-master.yaml"),
            "@InferenceX/core"
        );
        assert!(
            !co.resolve("configs/deprecated/amd-master.yaml")
                .is_specific()
        );
        assert_eq!(
            owners("docs/MODELS.md"),
            "@ankur-singh @chunfangamd @InferenceX/core"
        );
        assert_eq!(
            owners("inferencex-e2e/docs/MODELS.md"),
            "@ankur-singh @chunfangamd @InferenceX/core"
        );
        assert_eq!(owners("experimental/operatorx/a/b.py"), "@hbarclay");
        assert_eq!(
            owners("inferencex-e2e/configs/amd-master.yaml"),
            "@InferenceX/core"
        );
    }

    #[test]
    fn check0_examples() {
        let co = co();
        // Pass: AMD master + a benchmark script, signer on the AMD line.
        assert!(
            check_signer(
                &co,
                &changed(&["configs/amd-master.yaml", "benchmarks/single_node/x.sh"]),
                &signer("@seungrokj")
            )
            .is_empty()
        );
        // Fail: NVIDIA master only, signer from the AMD line.
        let d = check_signer(
            &co,
            &changed(&["configs/nvidia-master.yaml"]),
            &signer("@chunfangamd"),
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, CODE_SIGNER);
        assert_eq!(d[0].span.map(|s| s.start.line()), Some(7));
        // Pass: catch-all paths only, signer listed elsewhere in the file.
        assert!(
            check_signer(
                &co,
                &changed(&["benchmarks/single_node/a.sh", "perf-changelog.yaml"]),
                &signer("@hbarclay")
            )
            .is_empty()
        );
        // Declared team membership satisfies a team owner.
        let s = Signer {
            login: "@someone".into(),
            teams: vec!["@inferencex/core".into()],
        };
        assert!(check_signer(&co, &changed(&["configs/nvidia-master.yaml"]), &s).is_empty());
    }

    #[test]
    fn renames_count_both_paths_and_last_match_wins() {
        let co = co();
        let c = vec![ChangedPath {
            path: "configs/x.yaml".into(),
            old_path: Some("configs/amd-master.yaml".into()),
        }];
        let d = check_signer(&co, &c, &signer("@ankur-singh"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].message.contains("configs/amd-master.yaml"));
    }

    #[test]
    fn oct_scope_rule() {
        let (co, _) = parse(
            Path::new("C"),
            "* @SemiAnalysisAI/core\nconfigs/amd-master.yaml @a @SemiAnalysisAI/core\n",
        );
        assert!(
            required_owners(&owners_of_change(&co, &changed(&["benchmarks/x.sh"]))).is_empty(),
            "N/A"
        );
        let r = required_owners(&owners_of_change(
            &co,
            &changed(&["configs/amd-master.yaml", "x"]),
        ));
        assert_eq!(r, ["@a"]);
    }

    #[test]
    fn glob_semantics() {
        let (co, _) = parse(
            Path::new("C"),
            "/docs/*.md @a\nsrc/**/gen.rs @b\n*.py @c\nbuild/ @d\n\\#odd @e\n",
        );
        assert_eq!(co.resolve("docs/x.md").owners(), ["@a"]);
        assert!(co.resolve("docs/sub/x.md").rule.is_none());
        assert_eq!(co.resolve("src/gen.rs").owners(), ["@b"]);
        assert_eq!(co.resolve("src/a/b/gen.rs").owners(), ["@b"]);
        assert_eq!(co.resolve("deep/x/y.py").owners(), ["@c"]);
        assert_eq!(co.resolve("a/build/out.o").owners(), ["@d"]);
        assert!(
            co.resolve("a/build").rule.is_none(),
            "a file named build is not the directory"
        );
        assert_eq!(co.resolve("#odd").owners(), ["@e"]);
    }

    #[test]
    fn unsupported_syntax_is_reported() {
        let (co, d) = parse(Path::new("C"), "!x @a\n[ab].md @b\nok @c\n");
        assert_eq!(d.len(), 2);
        assert!(d.iter().all(|d| d.code == CODE_PARSE));
        assert_eq!(co.rules.len(), 1);
    }
}
