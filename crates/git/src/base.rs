//! The one resolution of "the base" of a change (docs/diff.md, "Base"): every command that
//! compares a change with its base (`validate`, `diff-check`, `review check`, `changelog
//! check`) resolves it here, so they pick the same commit in one clone.

use crate::Repo;
use git2::{ErrorCode, Oid};
use infx_report::Diagnostic;

/// The upstream branches tried, in order, when no base is given.
pub const DEFAULT_UPSTREAMS: [&str; 3] = ["origin/main", "upstream/main", "main"];

/// Git's well-known empty tree: usable as a base ("everything is new").
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// How the base was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaseSource {
    /// Given explicitly.
    Explicit,
    /// Merge-base of HEAD with this upstream branch.
    MergeBase { upstream: String },
    /// HEAD has no commit yet: everything is new.
    UnbornHead,
}

/// The resolved base: a commit, a bare tree (`--base <tree id>`), or nothing (the empty tree).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedBase {
    /// The base commit; `None` for a tree or the empty tree.
    pub commit: Option<Oid>,
    /// The tree to diff against; `None` for the empty tree.
    pub tree: Option<Oid>,
    pub source: BaseSource,
}

/// Why no base could be resolved. One fault, one code, whichever command asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseFault {
    /// The revision or every upstream candidate is missing (or HEAD is unborn for `REV...`).
    NotFound,
    /// HEAD and the upstream share no history.
    NoMergeBase,
    /// A shallow clone lacks the base or the merge-base.
    Shallow,
    /// The branch exists but its commit cannot be read: the object database is damaged (a
    /// corrupt pack, a missing object).
    Corrupt,
    /// Any other libgit2 failure.
    Git,
}

/// A base that cannot be resolved, with the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseError {
    pub fault: BaseFault,
    pub message: String,
    pub help: Option<String>,
    /// libgit2's own words, when it had any.
    pub note: Option<String>,
}

impl BaseError {
    fn new(fault: BaseFault, message: impl Into<String>) -> Self {
        BaseError {
            fault,
            message: message.into(),
            help: None,
            note: None,
        }
    }
    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
    /// A shallow clone lacks `what`; also used for the history walks that need a fetched commit.
    pub fn shallow(what: &str) -> Self {
        BaseError::new(
            BaseFault::Shallow,
            format!("this is a shallow clone and {what} is not in its history"),
        )
        .help("fetch the missing history: `git fetch --unshallow` (or `git fetch --deepen=200 origin` for less)")
    }
    fn git(e: &git2::Error) -> Self {
        BaseError::new(BaseFault::Git, format!("git: {}", e.message()))
    }

    /// The diagnostic code: the codes `validate` and `diff-check` always printed for these
    /// faults (docs/diff.md, "Base").
    pub fn code(&self) -> infx_report::Code {
        match self.fault {
            BaseFault::NotFound => crate::codes::BASE_NOT_FOUND,
            BaseFault::NoMergeBase => crate::codes::NO_MERGE_BASE,
            BaseFault::Shallow => crate::codes::SHALLOW,
            BaseFault::Corrupt => crate::codes::OBJECT,
            BaseFault::Git => crate::codes::LIBGIT2,
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(self.code(), self.message.clone());
        if let Some(h) = &self.help {
            d = d.with_help(h.clone());
        }
        if let Some(n) = &self.note {
            d = d.with_note(n.clone());
        }
        d
    }
}

impl std::fmt::Display for BaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::write_with_help(f, &self.message, self.help.as_deref())
    }
}

impl std::error::Error for BaseError {}

impl From<BaseError> for Diagnostic {
    fn from(e: BaseError) -> Self {
        e.to_diagnostic()
    }
}

impl Repo {
    /// HEAD's commit, `None` on an unborn branch.
    pub fn head_commit(&self) -> Result<Option<Oid>, BaseError> {
        match self.inner.head() {
            Ok(r) => r
                .peel_to_commit()
                .map(|c| Some(c.id()))
                .map_err(|e| BaseError::git(&e)),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
            Err(e) => Err(BaseError::git(&e)),
        }
    }

    /// The base of a change whose head is `head` (`None`: unborn): `base` when given (a
    /// revision or tree; `REV...` = the merge-base of `head` with REV; [`EMPTY_TREE`] = no
    /// base), otherwise the merge-base of `head` with the first of `upstreams` that exists
    /// (an unborn head has the empty tree as its base).
    pub fn resolve_change_base(
        &self,
        base: Option<&str>,
        upstreams: &[String],
        head: Option<Oid>,
    ) -> Result<ResolvedBase, BaseError> {
        let Some(spec) = base else {
            return self.default_base(upstreams, head);
        };
        if spec == EMPTY_TREE {
            return Ok(ResolvedBase {
                commit: None,
                tree: None,
                source: BaseSource::Explicit,
            });
        }
        let (name, want_merge_base) = match spec.strip_suffix("...") {
            Some(s) => (s, true),
            None => (spec, false),
        };
        let obj = self.find_base_rev(name)?;
        match obj.peel_to_commit() {
            Ok(c) if want_merge_base => {
                let h = head.ok_or_else(|| {
                    BaseError::new(
                        BaseFault::NotFound,
                        "HEAD has no commit, so it has no merge-base",
                    )
                    .help("commit first, or pass a plain --base <rev>")
                })?;
                let mb = self.base_merge_base(h, c.id(), name)?;
                self.commit_base(mb, BaseSource::Explicit)
            }
            Ok(c) => self.commit_base(c.id(), BaseSource::Explicit),
            // A tree-ish that is not a commit (e.g. a tree id) is a valid diff base too.
            Err(_) => {
                let tree = obj.peel_to_tree().map_err(|_| {
                    BaseError::new(
                        BaseFault::NotFound,
                        format!("`{name}` is not a commit or tree"),
                    )
                    .help("pass a branch, tag or commit with --base")
                })?;
                Ok(ResolvedBase {
                    commit: None,
                    tree: Some(tree.id()),
                    source: BaseSource::Explicit,
                })
            }
        }
    }

    fn default_base(
        &self,
        upstreams: &[String],
        head: Option<Oid>,
    ) -> Result<ResolvedBase, BaseError> {
        let Some(h) = head else {
            return Ok(ResolvedBase {
                commit: None,
                tree: None,
                source: BaseSource::UnbornHead,
            });
        };
        let found = upstreams.iter().find_map(|u| {
            self.inner
                .revparse_single(u)
                .ok()
                .and_then(|o| o.peel_to_commit().ok())
                .map(|c| (u, c.id()))
        });
        let Some((upstream, up)) = found else {
            // A branch that exists but does not read is damage, not absence.
            if let Some(e) = upstreams.iter().find_map(|u| self.damaged(u)) {
                return Err(e);
            }
            return Err(BaseError::new(
                BaseFault::NotFound,
                format!(
                    "none of the upstream branches {} exists",
                    upstreams.join(", ")
                ),
            )
            .help("pass the base with --base <rev>, or `git fetch origin main`"));
        };
        let mb = self.base_merge_base(h, up, upstream)?;
        self.commit_base(
            mb,
            BaseSource::MergeBase {
                upstream: upstream.clone(),
            },
        )
    }

    fn commit_base(&self, id: Oid, source: BaseSource) -> Result<ResolvedBase, BaseError> {
        let c = self.inner.find_commit(id).map_err(|e| BaseError::git(&e))?;
        Ok(ResolvedBase {
            commit: Some(id),
            tree: Some(c.tree_id()),
            source,
        })
    }

    /// A revision named by the user for a change (its base or target); a missing one is
    /// `diff/base-not-found`, or `diff/shallow` in a shallow clone.
    pub fn find_base_rev(&self, spec: &str) -> Result<git2::Object<'_>, BaseError> {
        self.inner.revparse_single(spec).map_err(|e| {
            if let Some(damage) = self.damaged(spec) {
                damage
            } else if self.is_shallow() && e.code() == ErrorCode::NotFound {
                BaseError::shallow(&format!("base `{spec}`"))
            } else {
                BaseError::new(BaseFault::NotFound, format!("base revision `{spec}` not found"))
                    .help("pass an existing branch, tag or commit with --base (e.g. --base origin/main); `git fetch` if it is a remote branch")
                    .note(e.message())
            }
        })
    }

    /// When `name` is a reference whose target object cannot be read (nor is missing from a
    /// shallow boundary), the fault that says so: a corrupt pack used to read as "none of the
    /// upstream branches exists" (docs/diff.md, "Base").
    fn damaged(&self, name: &str) -> Option<BaseError> {
        let reference = self.inner.resolve_reference_from_short_name(name).ok()?;
        let target = reference.resolve().ok()?.target()?;
        let e = match self.inner.find_object(target, None) {
            // A tag or tree is no commit, but not damage; an unreadable peel target is.
            Ok(o) => o
                .peel_to_commit()
                .err()
                .filter(|e| matches!(e.class(), git2::ErrorClass::Odb | git2::ErrorClass::Zlib))?,
            Err(e) => e,
        };
        if self.is_shallow() && e.code() == ErrorCode::NotFound {
            return None;
        }
        Some(
            BaseError::new(
                BaseFault::Corrupt,
                format!(
                    "`{name}` names commit {target}, which cannot be read: the repository's object database is damaged"
                ),
            )
            .help("run `git fsck` to see what is damaged; fetch again or re-clone the repository")
            .note(format!("libgit2: {}", e.message())),
        )
    }

    fn base_merge_base(&self, head: Oid, other: Oid, name: &str) -> Result<Oid, BaseError> {
        match self.inner.merge_base(head, other) {
            Ok(oid) => Ok(oid),
            Err(e) if e.code() == ErrorCode::NotFound => {
                if self.is_shallow() {
                    Err(BaseError::shallow(&format!(
                        "the merge-base of HEAD and `{name}`"
                    )))
                } else {
                    Err(BaseError::new(
                        BaseFault::NoMergeBase,
                        format!("HEAD and `{name}` have no common ancestor"),
                    )
                    .help("pass the base explicitly with --base <rev>"))
                }
            }
            Err(e) => Err(BaseError::git(&e)),
        }
    }
}
