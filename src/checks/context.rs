//! The state under check where it is not the working tree's: the files whose content there
//! differs (`check --staged`: the index's; `apply --branch`: the branch's), with that content or
//! `None` where that state lacks them.
//!
//! A branch's context costs a `git diff` against the branch's base and a walk for untracked
//! files (30–45 ms in repositories of 9,000–50,000 files), and only some checks read it: the
//! references check once it looks across files, the import lookups of an edited import line,
//! the package checkers' mirrors and verify. So it can be made lazily, by the first reader, on
//! whichever thread that is; a run whose checks read nothing across files never pays for it.
//!
//! Invariants: the files are sorted by path, each path once; a context is made at most once, and
//! a failure to make it is kept and reported by every reader ([`Context::files`],
//! [`Context::failed`]), never taken for an empty context.

use std::sync::{Arc, OnceLock};

use super::ContextFile;

type Maker = Box<dyn Fn() -> Result<Vec<ContextFile>, String> + Send + Sync>;

/// Files of the state under check that the working tree does not hold as they are there. Cheap
/// to clone (shared).
#[derive(Clone)]
pub struct Context(Arc<Inner>);

struct Inner {
    make: Option<Maker>,
    made: OnceLock<Result<Vec<ContextFile>, String>>,
}

impl Context {
    /// No context: the working tree is the state under check.
    pub fn none() -> Context {
        Context::of(Vec::new())
    }

    /// A context known now.
    pub fn of(mut files: Vec<ContextFile>) -> Context {
        sorted(&mut files);
        Context(Arc::new(Inner {
            make: None,
            made: OnceLock::from(Ok(files)),
        }))
    }

    /// A context made by `make` when it is first read.
    pub fn lazy(
        make: impl Fn() -> Result<Vec<ContextFile>, String> + Send + Sync + 'static,
    ) -> Context {
        Context(Arc::new(Inner {
            make: Some(Box::new(make)),
            made: OnceLock::new(),
        }))
    }

    fn made(&self) -> &Result<Vec<ContextFile>, String> {
        self.0.made.get_or_init(|| match &self.0.make {
            Some(make) => make().map(|mut files| {
                sorted(&mut files);
                files
            }),
            None => Ok(Vec::new()),
        })
    }

    /// Every file of the context, made now if it was not yet.
    pub fn files(&self) -> Result<&[ContextFile], String> {
        match self.made() {
            Ok(files) => Ok(files),
            Err(e) => Err(e.clone()),
        }
    }

    /// `rel` in the state under check: `None` when the context does not list it (the working
    /// tree's file speaks for it), `Some(None)` when that state lacks it. A context that could
    /// not be made lists nothing; its readers report that with [`Context::failed`].
    pub fn get(&self, rel: &str) -> Option<Option<&[u8]>> {
        let files = self.made().as_ref().ok()?;
        let i = files.binary_search_by(|(r, _)| r.as_str().cmp(rel)).ok()?;
        Some(files[i].1.as_deref().map(Vec::as_slice))
    }

    /// Why the context could not be made, once a reader tried; never makes it.
    pub fn failed(&self) -> Option<String> {
        self.0.made.get()?.as_ref().err().cloned()
    }

    /// Whether a context was made or given.
    #[cfg(test)]
    fn is_made(&self) -> bool {
        self.0.made.get().is_some()
    }
}

fn sorted(files: &mut Vec<ContextFile>) {
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
}

impl Default for Context {
    fn default() -> Self {
        Context::none()
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.made.get() {
            Some(Ok(files)) => write!(f, "Context({} files)", files.len()),
            Some(Err(e)) => write!(f, "Context(failed: {e})"),
            None => f.write_str("Context(not made yet)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn file(rel: &str, content: Option<&str>) -> ContextFile {
        (rel.into(), content.map(|c| Arc::new(c.as_bytes().to_vec())))
    }

    #[test]
    fn a_lazy_context_is_made_once_by_its_first_reader() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let ctx = Context::lazy(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(vec![file("b.py", None), file("a.py", Some("x"))])
        });
        assert!(!ctx.is_made());
        assert_eq!(ctx.failed(), None);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        let clone = ctx.clone();
        std::thread::scope(|s| {
            s.spawn(|| clone.get("a.py"));
            s.spawn(|| ctx.files().map(<[_]>::len));
        });
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(ctx.get("a.py"), Some(Some(&b"x"[..])));
        assert_eq!(ctx.get("b.py"), Some(None));
        assert_eq!(ctx.get("c.py"), None);
        let names: Vec<&str> = ctx.files().unwrap().iter().map(|f| f.0.as_str()).collect();
        assert_eq!(names, ["a.py", "b.py"]);
    }

    #[test]
    fn a_context_that_could_not_be_made_says_so_to_every_reader() {
        let ctx = Context::lazy(|| Err("git diff failed".into()));
        assert_eq!(ctx.get("a.py"), None);
        assert_eq!(ctx.failed().as_deref(), Some("git diff failed"));
        assert_eq!(ctx.files().unwrap_err(), "git diff failed");
    }

    #[test]
    fn a_given_context_is_sorted_and_each_path_once() {
        let ctx = Context::of(vec![file("z", None), file("a", Some("1")), file("z", None)]);
        assert!(ctx.is_made());
        assert_eq!(ctx.files().unwrap().len(), 2);
        assert_eq!(ctx.get("z"), Some(None));
        assert!(Context::none().files().unwrap().is_empty());
    }
}
