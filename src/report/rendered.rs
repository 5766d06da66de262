//! Report fields serialised ahead of time, off the critical path.
//!
//! A large batch's JSON report is hundreds of kilobytes (every edit, every file's diff), and
//! serialising it once the transaction had landed was a twentieth of the run. The two large
//! fields are rendered on another thread while the transaction runs ([`render`]), kept with their
//! value while it is unchanged (any mutable access drops the rendering), and used only by
//! [`super::Report::write_json`] and [`super::Report::to_json`] (the MCP server's): the
//! serialisations whose layout (pretty, two spaces, a field of the report's top level) they were
//! rendered for. Every other serialisation of a report sees the value itself.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// A value and, perhaps, its JSON as `write_json` prints it.
#[derive(Debug, Clone, Default)]
pub struct Rendered<T> {
    value: T,
    json: Option<Box<RawValue>>,
}

thread_local! {
    /// Set while `write_json` or `to_json` serialises a report on this thread: only then is a
    /// rendering used.
    static WRITING_JSON: Cell<bool> = const { Cell::new(false) };
}

/// Past about this many bytes of JSON a field is not rendered ahead: the rendering holds two
/// more copies of it until it is printed (one `replace_all` of 80,000 lines made a 7 MB diff:
/// 15 MB more at the peak, and a slower run), while what it saves is the per-item work of many
/// small items, not the copying of a large one.
pub const AHEAD_MAX: usize = 1 << 20;

/// [`render`] when `approx` (the caller's estimate of the JSON's size) is within [`AHEAD_MAX`].
pub fn render_ahead<T: Serialize>(value: &T, approx: usize) -> Option<Box<RawValue>> {
    (approx <= AHEAD_MAX).then(|| render(value)).flatten()
}

/// `value` as `write_json` prints a field of the report's top level: pretty, two spaces, each
/// line after the first one level further in (a JSON string holds no raw line break, so every
/// line break is the layout's). `None` if it does not serialise.
pub fn render<T: Serialize>(value: &T) -> Option<Box<RawValue>> {
    let text = serde_json::to_string_pretty(value).ok()?;
    RawValue::from_string(text.replace('\n', "\n  ")).ok()
}

impl<T> Rendered<T> {
    /// Keeps `json`, which must be [`render`] of this value as it is now.
    pub fn keep(&mut self, json: Option<Box<RawValue>>) {
        self.json = json;
    }
}

impl<T> From<T> for Rendered<T> {
    fn from(value: T) -> Rendered<T> {
        Rendered { value, json: None }
    }
}

impl<T> Deref for Rendered<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Rendered<T> {
    /// The value may change: its rendering goes.
    fn deref_mut(&mut self) -> &mut T {
        self.json = None;
        &mut self.value
    }
}

impl<'a, T> IntoIterator for &'a Rendered<Vec<T>> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.value.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Rendered<Vec<T>> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.json = None;
        self.value.iter_mut()
    }
}

impl<T: Serialize> Serialize for Rendered<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.json {
            Some(json) if WRITING_JSON.with(Cell::get) => json.serialize(s),
            _ => self.value.serialize(s),
        }
    }
}

/// While alive, this thread's serialisations use the renderings (see [`Rendered`]).
pub(super) struct WritingJson;

impl WritingJson {
    pub(super) fn start() -> WritingJson {
        WRITING_JSON.with(|w| w.set(true));
        WritingJson
    }
}

impl Drop for WritingJson {
    fn drop(&mut self) {
        WRITING_JSON.with(|w| w.set(false));
    }
}
