//! Writes a [`Scene`] as a standalone SVG document: colours inlined from the theme, a font stack that every
//! browser and Inkscape can resolve, no scripts, no embedded raster. A pure function returning a string.

use crate::figure::scene::{paint, wrap, Anchor, Item, Scene, Theme, LINE_H, TEXT};
use std::fmt::Write as _;

/// The font stack used in exported figures.
pub const FONT: &str = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif";

/// Escapes text for XML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

fn num(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// The scene as an SVG document.
pub fn to_svg(scene: &Scene, theme: Theme) -> String {
    // The caption goes under the figure, at the figure's text size, on as many lines as it needs.
    let caption = wrap(&scene.caption, TEXT, scene.width - 32.0);
    let extra = LINE_H * caption.len().saturating_sub(1) as f64;
    let height = scene.height + extra;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"{FONT}\" role=\"img\">\n<title>{t}</title>\n",
        w = num(scene.width),
        h = num(height),
        t = escape(&scene.caption)
    );
    if extra > 0.0 {
        let (bg, _, _) = paint(crate::figure::scene::Class::Background, theme);
        let _ = writeln!(
            out,
            "<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{bg}\"/>",
            num(scene.height - 4.0),
            num(scene.width),
            num(extra + 4.0)
        );
    }
    for item in &scene.items {
        match item {
            Item::Rect { x, y, w, h, class, tip } => {
                let (fill, stroke, sw) = paint(*class, theme);
                let _ = write!(
                    out,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"",
                    num(*x),
                    num(*y),
                    num(*w),
                    num(*h)
                );
                if sw > 0.0 {
                    let _ = write!(out, " stroke=\"{stroke}\" stroke-width=\"{}\"", num(sw));
                }
                match tip {
                    Some(t) => {
                        let _ = writeln!(out, " rx=\"3\"><title>{}</title></rect>", escape(t));
                    }
                    None => out.push_str(" rx=\"3\"/>\n"),
                }
            }
            Item::Line { x1, y1, x2, y2, class } => {
                let (_, stroke, sw) = paint(*class, theme);
                let _ = writeln!(
                    out,
                    "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\" stroke-width=\"{}\"/>",
                    num(*x1),
                    num(*y1),
                    num(*x2),
                    num(*y2),
                    num(sw)
                );
            }
            Item::Text { x, y, text, size, class, anchor } => {
                let (fill, _, _) = paint(*class, theme);
                let anchor = match anchor {
                    Anchor::Start => "start",
                    Anchor::Middle => "middle",
                    Anchor::End => "end",
                };
                let _ = writeln!(
                    out,
                    "<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{fill}\" text-anchor=\"{anchor}\">{}</text>",
                    num(*x),
                    num(*y),
                    num(*size),
                    escape(text)
                );
            }
        }
    }
    let (fill, _, _) = paint(crate::figure::scene::Class::Label, theme);
    for (i, line) in caption.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text x=\"16\" y=\"{}\" font-size=\"{}\" fill=\"{fill}\">{}</text>",
            num(scene.height - 12.0 + LINE_H * i as f64),
            num(TEXT),
            escape(line)
        );
    }
    out.push_str("</svg>\n");
    out
}
