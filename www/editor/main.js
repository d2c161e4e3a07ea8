// The page's code editor: CodeMirror 6 with highlighting for every input language, line numbers, search, and
// the analysis error marked at its line:column. Bundled at build time (.ci/bundle-editor.mjs) into
// warpscope-editor.js, which defines `window.warpscopeEditor`. The page works without it: the Yew app keeps a
// plain textarea until this script has loaded, and keeps it if creating an editor fails.
//
// The Yew state holds the text. The editor reports each edit with `onChange(text)`; `update({ text })` brings
// the editor to the state's text, and ignores the echoes of its own reports.
import { EditorState, Compartment, Annotation, StateField, StateEffect } from '@codemirror/state';
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
  highlightSpecialChars, Decoration,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { syntaxHighlighting, bracketMatching, indentOnInput } from '@codemirror/language';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { setDiagnostics, lintGutter, lintKeymap } from '@codemirror/lint';
import { cpp } from '@codemirror/lang-cpp';
import { classHighlighter } from '@lezer/highlight';
import { StyleModule } from 'style-mod';
import { ptx, sass, expr, addresses } from './languages.js';

// The page's Content-Security-Policy allows no inline <style> element (style-src 'self'), which is how
// CodeMirror adds its base styles to a document. Constructed stylesheets (CSSOM) are allowed, and CodeMirror
// uses them in shadow roots: mount its styles in the document the same way.
const documentRoot = {
  ownerDocument: document,
  get adoptedStyleSheets() { return document.adoptedStyleSheets; },
  set adoptedStyleSheets(sheets) { document.adoptedStyleSheets = sheets; },
};
const mountStyles = StyleModule.mount;
StyleModule.mount = (root, modules, options) => mountStyles(root === document ? documentRoot : root, modules, options);

const LANGUAGES = { cuda: () => cpp(), ptx: () => ptx, sass: () => sass, expr: () => expr, addresses: () => addresses };

/** Marks a transaction that brings the editor to the page's text (not an edit to report). */
const fromPage = Annotation.define();

/** The line of the instruction the figure shows. */
const markLine = StateEffect.define();
const selectedLine = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    marks = marks.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(markLine)) continue;
      const n = e.value;
      marks = n >= 1 && n <= tr.state.doc.lines
        ? Decoration.set([Decoration.line({ class: 'cm-instr-line' }).range(tr.state.doc.line(n).from)])
        : Decoration.none;
    }
    return marks;
  },
  provide: (f) => EditorView.decorations.from(f),
});

const theme = EditorView.theme({
  '&': { color: 'var(--fg)', backgroundColor: 'var(--panel)', border: '1px solid var(--edge)', borderRadius: '6px' },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
  '.cm-content': { caretColor: 'var(--fg)', fontFamily: 'inherit' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--fg)', borderLeftWidth: '2px' },
  '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', borderRight: '1px solid var(--edge)' },
  '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'var(--active-line)' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, ::selection':
    { backgroundColor: 'var(--selection)' },
  '.cm-scroller': { fontFamily: 'inherit', lineHeight: '1.4' },
  '.cm-instr-line': { boxShadow: 'inset 4px 0 0 var(--accent)' },
  '.cm-panels': { backgroundColor: 'var(--panel)', color: 'var(--fg)' },
  '.cm-tooltip': { backgroundColor: 'var(--bg)', color: 'var(--fg)', border: '1px solid var(--edge)' },
});

/** The document offset of 1-based `line` and `column` (columns count characters, as the page's errors do). */
function offsetOf(doc, line, column) {
  if (line < 1) return 0;
  if (line > doc.lines) return doc.length;
  const l = doc.line(line);
  let at = l.from;
  for (let c = 1; c < column && at < l.to; c++) {
    const code = doc.sliceString(at, at + 1).charCodeAt(0);
    at += code >= 0xd800 && code < 0xdc00 ? 2 : 1;
  }
  return Math.min(at, l.to);
}

function diagnostic(doc, error) {
  let from = offsetOf(doc, error.line, error.column);
  const line = doc.lineAt(from);
  let to = Math.min(from + 1, line.to);
  if (to === from && from > line.from) from -= 1;
  if (to === from && line.to > line.from) to = from + 1;
  return { from, to, severity: 'error', message: error.message, source: 'warpscope' };
}

class Editor {
  constructor(host, options) {
    this.onChange = options.onChange ?? (() => {});
    // Texts reported to the page and not yet seen back from it.
    this.pending = [];
    this.language = new Compartment();
    this.readOnly = new Compartment();
    // The content element's id and name: a compartment, because the page may hand an editor to another pane.
    this.attributes = new Compartment();
    this.id = options.id ?? 'pattern';
    this.lang = options.lang;
    this.error = null;
    this.readonlyOn = options.readonly;
    // The line to mark, and the animation frame that marks it (0: none pending).
    this.line = 0;
    this.lineFrame = 0;
    this.view = new EditorView({
      parent: host,
      state: EditorState.create({
        doc: options.text ?? '',
        extensions: [
          // Lines end at \n only, as the analysis counts them: a lone \r stays in the text (shown as a special
          // character), so the editor's line numbers are the error's and the instruction list's.
          EditorState.lineSeparator.of('\n'),
          lineNumbers(),
          highlightActiveLineGutter(),
          highlightSpecialChars(),
          history(),
          drawSelection(),
          indentOnInput(),
          bracketMatching(),
          highlightActiveLine(),
          highlightSelectionMatches(),
          syntaxHighlighting(classHighlighter),
          lintGutter(),
          // Long lines wrap instead of running out of a narrow column (a lab's editor at 1366x768 is about
          // 430 px wide): every character stays on screen, and the line numbers stay the text's.
          EditorView.lineWrapping,
          selectedLine,
          theme,
          keymap.of([...defaultKeymap, ...historyKeymap, ...searchKeymap, ...lintKeymap, indentWithTab]),
          this.language.of((LANGUAGES[options.lang] ?? LANGUAGES.expr)()),
          this.readOnly.of(readOnlyExtension(options.readonly)),
          // Typed text goes into the document directly instead of through the browser's editing of the
          // contenteditable element, which in Chromium wraps text typed over a selection in a
          // `<span style=...>` that the page's Content-Security-Policy refuses (a console error each time).
          EditorView.domEventHandlers({
            beforeinput(e, view) {
              if (e.inputType !== 'insertText' || e.isComposing || typeof e.data !== 'string' || view.state.readOnly) return false;
              // Replace what the browser would: the DOM's selection, which the editor's own may not have caught
              // up with yet (it follows the DOM's on selectionchange, a later task, and only while focused).
              let { from, to } = view.state.selection.main;
              const sel = document.getSelection();
              if (sel?.rangeCount && view.contentDOM.contains(sel.anchorNode) && view.contentDOM.contains(sel.focusNode)) {
                try {
                  const a = view.posAtDOM(sel.anchorNode, sel.anchorOffset);
                  const b = view.posAtDOM(sel.focusNode, sel.focusOffset);
                  [from, to] = [Math.min(a, b), Math.max(a, b)];
                } catch {
                  return false;
                }
              }
              e.preventDefault();
              view.dispatch({
                changes: { from, to, insert: e.data },
                selection: { anchor: from + e.data.length },
                scrollIntoView: true,
                userEvent: 'input.type',
              });
              return true;
            },
          }),
          this.attributes.of(contentAttributes(this.id, options.label)),
          EditorView.updateListener.of((u) => {
            if (!u.docChanged || u.transactions.every((t) => t.annotation(fromPage))) return;
            const text = u.state.doc.toString();
            this.pending.push(text);
            if (this.pending.length > 64) this.pending.shift();
            this.onChange(text);
          }),
        ],
      }),
    });
    this.update(options);
  }

  /** Brings the editor to the page's state: `{ id, text, lang, readonly, error: {line, column, message} | null,
   * line }` (any may be left out). */
  update(o) {
    const effects = [];
    let changes;
    if (typeof o.text === 'string') {
      const seen = this.pending.indexOf(o.text);
      if (seen >= 0) {
        this.pending.splice(0, seen + 1);
      } else {
        this.pending = [];
        const doc = this.view.state.doc.toString();
        if (doc !== o.text) changes = { from: 0, to: doc.length, insert: o.text };
      }
    }
    if (typeof o.lang === 'string' && o.lang !== this.lang) {
      this.lang = o.lang;
      effects.push(this.language.reconfigure((LANGUAGES[o.lang] ?? LANGUAGES.expr)()));
    }
    if (typeof o.readonly === 'boolean' && o.readonly !== this.readonlyOn) {
      this.readonlyOn = o.readonly;
      effects.push(this.readOnly.reconfigure(readOnlyExtension(o.readonly)));
    }
    if (typeof o.id === 'string' && o.id !== this.id) {
      this.id = o.id;
      effects.push(this.attributes.reconfigure(contentAttributes(o.id, o.label)));
    }
    if (changes || effects.length) {
      this.view.dispatch({ changes, effects, annotations: fromPage.of(true) });
    }
    // Each dispatch makes the editor read the DOM's selection, which lays out the whole page then and there.
    // The line mark follows each result and each animation step, which have just changed the page: it is
    // moved in the next animation frame, where the page is laid out once anyway, and only when it moves.
    if (typeof o.line === 'number') {
      this.line = o.line;
      this.lineFrame ||= requestAnimationFrame(() => {
        this.lineFrame = 0;
        const lines = this.view.state.doc.lines;
        const want = this.line >= 1 && this.line <= lines ? this.line : 0;
        if (want !== this.markedLine()) this.view.dispatch({ effects: markLine.of(want), annotations: fromPage.of(true) });
      });
    }
    if ('error' in o) {
      const key = o.error ? `${o.error.line}:${o.error.column}:${o.error.message}` : '';
      if (key !== this.error || changes) {
        this.error = key;
        const doc = this.view.state.doc;
        this.view.dispatch(setDiagnostics(this.view.state, o.error ? [diagnostic(doc, o.error)] : []));
      }
    }
  }

  /** The line marked as the figure's instruction (0: none), where edits since have moved the mark. */
  markedLine() {
    const { doc } = this.view.state;
    let n = 0;
    this.view.state.field(selectedLine).between(0, doc.length, (from) => { n = doc.lineAt(from).number; });
    return n;
  }

  text() { return this.view.state.doc.toString(); }

  destroy() {
    cancelAnimationFrame(this.lineFrame);
    this.view.destroy();
  }
}

function readOnlyExtension(on) {
  return on ? [EditorState.readOnly.of(true), EditorView.contentAttributes.of({ 'aria-readonly': 'true' })] : [];
}

function contentAttributes(id, label) {
  // The key hint under the editor (the page's `ID-keys`) says how Tab, which indents here, leaves.
  return EditorView.contentAttributes.of({ id, 'aria-label': label ?? 'access pattern', 'aria-describedby': `${id}-keys` });
}

function viewOf(el) {
  const dom = el?.closest?.('.cm-editor');
  return dom ? EditorView.findFromDOM(dom) : null;
}

window.warpscopeEditor = {
  /** Creates an editor in `host`: `{ text, lang, readonly, id, label, onChange(text), error, line }`. */
  create: (host, options) => new Editor(host, options ?? {}),
  /** The text of the editor that `el` (its content element, say `#pattern`) belongs to. */
  text: (el) => viewOf(el)?.state.doc.toString() ?? null,
  /** Replaces the whole text of the editor `el` belongs to, as one paste does. */
  setText(el, text) {
    const view = viewOf(el);
    if (!view) return false;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, userEvent: 'input.paste' });
    return true;
  },
};
window.dispatchEvent(new Event('warpscope-editor'));
