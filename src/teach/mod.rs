//! Teaching: explanations and checked fixes, the named presets, and course labs (their files and grading).
//!
//! May import: `model`, `program`, `lang` (through `scenario`), `figure`. Never the front ends (`cli`, `app`).

pub mod explain;
pub mod lab;
pub mod lab_file;
pub mod presets;
