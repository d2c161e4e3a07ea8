//! Text that cites the model reference, drawn with its citations as links: `docs/model.md#atomics` in a note,
//! a message or a preset's explanation becomes a link to the reference published with the page
//! (`model.html#atomics`), under the section's title. The command line prints the same text as it is.

use crate::text::{runs, Run, MODEL_PAGE};
use yew::prelude::*;

/// `text` with each citation of the model reference as a link that opens the section in a new tab.
pub fn cited(text: &str) -> Html {
    html! {
        { for runs(text).into_iter().map(|r| match r {
            Run::Text(t) => html! { { t.to_string() } },
            Run::Cite { anchor, title } => html! {
                <a class="cite" href={format!("{MODEL_PAGE}#{anchor}")} target="_blank" rel="noopener"
                    title="warpscope's model reference: the rule, its sources, and where they disagree">
                    { format!("model reference: {title}") }
                </a>
            },
        }) }
    }
}
