//! Model notes: what the product says next to a result where sources disagree or hardware departs from the
//! simple rule. The notes the hardware model gives, and when, are one table in [`crate::model::arch::notes`];
//! the languages add notes about the input (which kernel ran, which values were assumed).
//!
//! May import: nothing of the crate.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A documented disagreement between sources, or a place where hardware departs from the simple rule, that
/// touches this result. The product shows these to users; it never hides them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// A stable identifier (`kepler-3.0-l1-default`).
    pub id: Cow<'static, str>,
    /// One or two sentences for the user.
    pub text: String,
    /// Where the rule and the disagreement are documented.
    pub source: Cow<'static, str>,
}

impl Note {
    /// A note with a fixed identifier and source.
    pub fn new(id: &'static str, text: impl Into<String>, source: &'static str) -> Note {
        Note { id: Cow::Borrowed(id), text: text.into(), source: Cow::Borrowed(source) }
    }
}
