// The pattern's text in end-to-end tests. The page shows it in a code editor (CodeMirror, whose `#pattern` is a
// contenteditable element: `page.fill('#pattern', text)` types into it) or, without the editor script, in a
// textarea. These read and paste the whole text either way. Not a test file itself.

/** The whole text of the pattern `selector` (`#pattern`, `#pattern-b`). */
export function patternText(page, selector = '#pattern') {
  return page.locator(selector).evaluate((el) => (el instanceof HTMLTextAreaElement ? el.value : window.warpscopeEditor.text(el)));
}

/** Replaces the whole text at once, as a paste does: one change, one report to the page. */
export function pastePattern(page, text, selector = '#pattern') {
  return page.locator(selector).evaluate((el, t) => {
    if (el instanceof HTMLTextAreaElement) {
      el.value = t;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    } else {
      window.warpscopeEditor.setText(el, t);
    }
  }, text);
}
