//! Draws a [`Scene`] as SVG elements: the same shapes and colours the SVG exporter writes.

use crate::figure::scene::{paint, Anchor, Item, Scene, Theme};
use yew::prelude::*;

/// The figure's properties.
#[derive(Properties, PartialEq)]
pub struct FigureProps {
    /// The laid-out figure.
    pub scene: std::rc::Rc<Scene>,
    /// The colour theme.
    pub theme: Theme,
    /// The element id (`figure` for the main pane).
    pub id: AttrValue,
}

fn num(v: f64) -> String {
    format!("{:.1}", v)
}

/// The SVG figure.
#[component(Figure)]
pub fn figure(props: &FigureProps) -> Html {
    let s = &props.scene;
    let theme = props.theme;
    let items = s.items.iter().map(|item| match item {
        Item::Rect { x, y, w, h, class, tip } => {
            let (fill, stroke, sw) = paint(*class, theme);
            html! {
                <rect x={num(*x)} y={num(*y)} width={num(*w)} height={num(*h)} rx="3" fill={fill}
                    stroke={if sw > 0.0 { stroke } else { "none" }} stroke-width={num(sw)}>
                    if let Some(t) = tip { <title>{ t.clone() }</title> }
                </rect>
            }
        }
        Item::Line { x1, y1, x2, y2, class } => {
            let (_, stroke, sw) = paint(*class, theme);
            html! { <line x1={num(*x1)} y1={num(*y1)} x2={num(*x2)} y2={num(*y2)} stroke={stroke} stroke-width={num(sw)} /> }
        }
        Item::Text { x, y, text, size, class, anchor } => {
            let (fill, _, _) = paint(*class, theme);
            let anchor = match anchor {
                Anchor::Start => "start",
                Anchor::Middle => "middle",
                Anchor::End => "end",
            };
            html! { <text x={num(*x)} y={num(*y)} font-size={num(*size)} fill={fill} text-anchor={anchor}>{ text.clone() }</text> }
        }
    });
    html! {
        <svg id={props.id.clone()} class="figure" viewBox={format!("0 0 {} {}", num(s.width), num(s.height))}
            role="img" aria-label={s.caption.clone()} font-family={crate::figure::svg::FONT}>
            { for items }
        </svg>
    }
}
