//! Share links: the whole view (every pane's scenario and selection, the animation step, the theme) as a
//! compact, URL-safe, versioned string, `1.` followed by deflated JSON in URL-safe base64.
//!
//! A link made today opens the same view in later releases: the version prefix says how to read it, fields
//! added later have defaults, and fields are plain strings rather than internal enums. Decoding never
//! panics: a malformed, truncated, hostile or future-version link is an error value with a clear message,
//! and the page then shows the default view.
//!
//! May import: `text`, `model`, `program`, `lang`, `scenario`, `figure`.

use crate::figure::scene::Theme;
use crate::scenario::{Scenario, Setting};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The version written by this release.
pub const VERSION: u32 = 1;
/// The longest link text accepted, in characters.
pub const MAX_LINK_CHARS: usize = 64 * 1024;
/// The largest decoded state accepted, in bytes (guards against decompression bombs).
pub const MAX_STATE_BYTES: usize = 1 << 20;

/// One pane, as stored in a link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PaneState {
    /// `8.0`.
    pub cc: String,
    /// `expr`, `cuda`, `sass`, `addresses`.
    pub lang: String,
    /// The pattern.
    pub text: String,
    /// The instruction.
    pub op: String,
    /// `32x8`.
    pub block: String,
    /// `1`.
    pub grid: String,
    /// `NAME=VALUE` settings.
    pub sets: Vec<String>,
    /// `default`, `on`, `off`.
    pub l1: String,
    /// 4 or 8.
    pub bank_mode: u8,
    /// `measured` or `documented` (empty in links written before it existed: measured).
    #[serde(default)]
    pub shared_model: String,
    /// Strict alignment.
    pub strict: bool,
    /// The preset the pattern came from, if any.
    pub preset: String,
    /// Selected instruction.
    pub instr: usize,
    /// Selected warp-level issue.
    pub issue: usize,
    /// The kernel chosen in a listing or module with several (empty: the first).
    pub kernel: String,
    /// Named CuTe layouts (empty in links written before they existed: none).
    #[serde(default)]
    pub layout: String,
    /// Bytes per layout element (absent in links written before it existed: 1).
    #[serde(default)]
    pub elem_bytes: u32,
    /// Where data-dependent conditions hold (`runs`, `true`, `false`, a lane mask; absent: `runs`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub data_branches: String,
    /// The files a CUDA text includes, given with it (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<crate::lang::Header>,
    /// The memory system (`on`, with the device's changes; absent: off).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub caches: String,
}

impl Default for PaneState {
    fn default() -> PaneState {
        PaneState::from_scenario(&Scenario::default(), "", 0, 0)
    }
}

impl PaneState {
    /// Stores a scenario and its selection.
    pub fn from_scenario(sc: &Scenario, preset: &str, instr: usize, issue: usize) -> PaneState {
        PaneState {
            cc: sc.value(Setting::Cc),
            lang: sc.value(Setting::Lang),
            text: sc.text.clone(),
            op: sc.op.clone(),
            block: sc.value(Setting::Block),
            grid: sc.value(Setting::Grid),
            sets: sc.sets.clone(),
            l1: sc.value(Setting::L1),
            bank_mode: sc.config.bank_mode.bytes(),
            shared_model: sc.value(Setting::SharedModel),
            strict: sc.config.strict_align,
            preset: preset.to_string(),
            instr,
            issue,
            kernel: sc.value(Setting::Kernel),
            layout: sc.layout.clone(),
            elem_bytes: sc.elem_bytes,
            data_branches: if sc.data_branches == crate::program::DataBranches::default() {
                String::new()
            } else {
                sc.value(Setting::DataBranches)
            },
            headers: sc.headers.clone(),
            caches: if sc.caches.is_some() { sc.value(Setting::Caches) } else { String::new() },
        }
    }

    /// The scenario it stores, checking every field.
    pub fn scenario(&self) -> Result<Scenario, String> {
        if self.text.len() > crate::lang::lex::MAX_INPUT_BYTES {
            return Err("the pattern is larger than 1 MB".into());
        }
        let mut sc =
            Scenario { text: self.text.clone(), op: self.op.clone(), sets: self.sets.clone(), ..Scenario::default() };
        // Links written before the bank mode was stored have 0 there: the default, 4-byte banks.
        let bank_mode = if self.bank_mode == 0 { 4 } else { self.bank_mode };
        let elem_bytes = self.elem_bytes.max(1);
        for (setting, value) in [
            (Setting::Cc, self.cc.as_str()),
            (Setting::Lang, &self.lang),
            (Setting::Block, &self.block),
            (Setting::Grid, &self.grid),
            (Setting::L1, &self.l1),
            (Setting::BankMode, &bank_mode.to_string()),
            (Setting::SharedModel, &self.shared_model),
            (Setting::Kernel, &self.kernel),
            (Setting::Layout, &self.layout),
            (Setting::ElemBytes, &elem_bytes.to_string()),
            (Setting::DataBranches, &self.data_branches),
            (Setting::Caches, &self.caches),
        ] {
            sc.set(setting, value).map_err(|e| e.error.message)?;
        }
        sc.config.strict_align = self.strict;
        sc.headers = self.headers.clone();
        Ok(sc)
    }
}

/// The whole view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewState {
    /// One pane, or two when comparing.
    pub panes: Vec<PaneState>,
    /// Animation step (absent: the finished picture).
    pub step: Option<usize>,
    /// Colour theme.
    pub theme: Theme,
    /// Every warp of the selected instruction stacked, instead of one warp in detail (absent: one warp).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub all_warps: bool,
    /// Shared memory drawn as a tile of 16-byte chunks (absent: the lanes).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tile: bool,
    /// Projection mode: the page's large type for a lecture hall (absent: the usual sizes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub projection: bool,
}

impl Default for ViewState {
    fn default() -> ViewState {
        ViewState {
            panes: vec![PaneState::default()],
            step: None,
            theme: Theme::Light,
            all_warps: false,
            tile: false,
            projection: false,
        }
    }
}

/// Why a link could not be opened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShareError {
    /// Not of the form `N.data`.
    #[error("this is not a warpscope link: it should start with a version number and a dot")]
    NoVersion,
    /// Made by a newer release.
    #[error("this link was made by a newer warpscope (format {0}; this page reads format {VERSION})")]
    Future(u32),
    /// Too long to be one of ours.
    #[error("this link is {0} characters long; warpscope links are at most {MAX_LINK_CHARS}")]
    TooLong(usize),
    /// Characters outside URL-safe base64.
    #[error("this link is damaged: character {0} is not part of a warpscope link")]
    BadCharacter(usize),
    /// Cut short or altered.
    #[error("this link is damaged or cut short: {0}")]
    Corrupt(String),
    /// Well-formed but describing an impossible view.
    #[error("this link describes a view warpscope cannot show: {0}")]
    Invalid(String),
}

/// Writes a view as link text.
pub fn encode(view: &ViewState) -> String {
    pack(&serde_json::to_vec(view).unwrap_or_default())
}

/// Reads link text (with or without a leading `#`).
pub fn decode(link: &str) -> Result<ViewState, ShareError> {
    let json = unpack(link)?;
    let view: ViewState =
        serde_json::from_slice(&json).map_err(|e| ShareError::Corrupt(plain_words(&e.to_string())))?;
    validate(view)
}

/// Packs a view's JSON as link text: the version, a dot, deflated JSON in URL-safe base64. The page passes
/// JSON made by the browser; [`encode`] passes serde_json's.
pub fn pack(json: &[u8]) -> String {
    // Level 6 bounds deflate's match search: level 9 takes seconds on large repetitive text.
    let packed = miniz_oxide::deflate::compress_to_vec(json, 6);
    format!("{VERSION}.{}", URL_SAFE_NO_PAD.encode(packed))
}

/// Unpacks link text to the view's JSON, checking the version, the characters and the size.
pub fn unpack(link: &str) -> Result<Vec<u8>, ShareError> {
    let link = link.trim().trim_start_matches('#');
    if link.len() > MAX_LINK_CHARS {
        return Err(ShareError::TooLong(link.len()));
    }
    let (version, data) = link.split_once('.').ok_or(ShareError::NoVersion)?;
    let version: u32 = version.parse().map_err(|_| ShareError::NoVersion)?;
    if version > VERSION {
        return Err(ShareError::Future(version));
    }
    if version == 0 {
        return Err(ShareError::NoVersion);
    }
    if let Some(i) = data.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
        return Err(ShareError::BadCharacter(i + 1 + link.len() - data.len()));
    }
    // In words: the decoder's own messages name bits and symbols ("Invalid last symbol 55").
    let packed = URL_SAFE_NO_PAD.decode(data).map_err(|e| {
        ShareError::Corrupt(match e {
            base64::DecodeError::InvalidLength(_) | base64::DecodeError::InvalidLastSymbol { .. } => {
                "its last characters are missing (copy the whole link)".to_string()
            }
            _ => "its characters do not spell a warpscope view".to_string(),
        })
    })?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_STATE_BYTES).map_err(|e| {
        ShareError::Corrupt(match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
                format!("it unpacks to more than {MAX_STATE_BYTES} bytes, more than any warpscope view")
            }
            _ => "its packed data does not unpack".to_string(),
        })
    })?;
    check_depth(&json)?;
    Ok(json)
}

/// The deepest a view's JSON nests (`{"panes": [{"sets": [...]}]}` is 3): deeper data is refused before it
/// is deserialised, whose recursion a link nested thousands deep once overflowed (the page died).
pub const MAX_JSON_DEPTH: usize = 16;

/// Refuses JSON whose arrays and objects nest deeper than [`MAX_JSON_DEPTH`], in one pass over the bytes
/// (brackets inside strings do not count).
fn check_depth(json: &[u8]) -> Result<(), ShareError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in json {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(ShareError::Corrupt(format!(
                        "its data nests more than {MAX_JSON_DEPTH} levels deep; a warpscope view nests 3"
                    )));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Checks that a decoded view can be shown: one or two panes, every field valid.
pub fn validate(view: ViewState) -> Result<ViewState, ShareError> {
    if view.panes.is_empty() || view.panes.len() > 2 {
        return Err(ShareError::Invalid(format!("{} panes (one or two)", view.panes.len())));
    }
    for p in &view.panes {
        p.scenario().map_err(ShareError::Invalid)?;
    }
    Ok(view)
}

/// A deserialiser's complaint about a link's data (`invalid type: floating point `80.0`, expected a
/// string`) in plain words: what the link holds where a view holds something else.
pub fn plain_words(raw: &str) -> String {
    let raw = raw.trim_start_matches("Error: ");
    // serde_json says where; the words below say what.
    let raw = raw.split_once(" at line ").map_or(raw, |(m, _)| m);
    let not_a_view = "its data is not a warpscope view".to_string();
    if let Some(rest) = raw.strip_prefix("unknown variant ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let name = found.trim_matches('`');
        let choices = expected.replace('`', "");
        return format!(
            "it holds `{}` where a warpscope view has {choices}",
            name.chars().take(40).collect::<String>()
        );
    }
    let Some(rest) = raw.strip_prefix("invalid type: ") else { return not_a_view };
    let Some((found, expected)) = rest.split_once(", expected ") else { return not_a_view };
    let expected = match expected {
        "a string" => "text",
        "usize" | "u8" | "u16" | "u32" | "u64" => "a whole number",
        "a boolean" => "true or false",
        "a sequence" => "a list",
        _ => return not_a_view,
    };
    let found = if let Some(n) = found.strip_prefix("floating point ").or_else(|| found.strip_prefix("integer ")) {
        let n = n.trim_matches('`');
        let n = n.strip_suffix(".0").unwrap_or(n);
        if n.len() > 20 {
            "a number".to_string()
        } else {
            format!("the number {n}")
        }
    } else if found.starts_with("string") {
        "text".to_string()
    } else if found.starts_with("boolean") {
        "true or false".to_string()
    } else if found == "sequence" {
        "a list".to_string()
    } else if found == "map" {
        "a group of fields".to_string()
    } else {
        "a value of another kind".to_string()
    };
    format!("it holds {found} where a warpscope view has {expected}")
}
