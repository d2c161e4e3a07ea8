//! Figures: a result laid out once as a [`scene::Scene`] (the lanes and their memory, or [`tile`]: shared memory
//! as rows of 16-byte chunks), then drawn by the page (Yew SVG elements) or written
//! as a standalone SVG ([`svg`]; the CLI adds PNG).
//!
//! May import: `model` (the results it draws). Never the languages, the program or the front ends.

pub mod scene;
pub mod svg;
pub mod tile;
