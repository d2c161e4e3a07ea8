// Highlighting for the page's own input languages: PTX, SASS, address expressions and address lists, as small
// stream tokenizers (CUDA uses @codemirror/lang-cpp). Token names are @lezer/highlight tag names; the page's
// stylesheet colours them through their `tok-*` classes.
import { StreamLanguage } from '@codemirror/language';

const NUMBER = /^(?:0[xX][0-9a-fA-F]+|0[fFdD][0-9a-fA-F]{8,16}|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)[uUlL]*/;

function blockComment(stream, state) {
  if (stream.skipTo('*/')) {
    stream.match('*/');
    state.comment = false;
  } else {
    stream.skipToEnd();
  }
  return 'comment';
}

/** PTX: directives, opcodes with their type suffixes, registers, labels, guards. */
export const ptx = StreamLanguage.define({
  name: 'ptx',
  startState: () => ({ comment: false, start: true }),
  token(stream, state) {
    if (stream.sol()) state.start = true;
    if (state.comment) return blockComment(stream, state);
    if (stream.eatSpace()) return null;
    if (stream.match('//')) { stream.skipToEnd(); return 'comment'; }
    if (stream.match('/*')) { state.comment = true; return blockComment(stream, state); }
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return 'string';
    if (stream.match(/^@!?%?[\w$]+/)) return 'meta';
    if (stream.match(/^%[\w$]+(?:\.[xyzw])?/)) {
      return /^%(?:n?tid|n?ctaid|laneid|warpid|nwarpid|smid|clock|lanemask)/.test(stream.current()) ? 'variableName.special' : 'variableName';
    }
    if (state.start && stream.match(/^[$\w]+:/)) return 'labelName';
    if (stream.match(/^\.[A-Za-z_]\w*/)) { state.start = false; return 'keyword'; }
    if (stream.match(NUMBER)) return 'number';
    if (stream.match(/^[A-Za-z_$][\w$]*/)) {
      if (state.start) { state.start = false; return 'keyword'; }
      return 'variableName';
    }
    const ch = stream.next();
    if (ch === ';' || ch === '{' || ch === '}') state.start = true;
    return /[-+*/%&|^!<>=~]/.test(ch) ? 'operator' : 'punctuation';
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
});

const SASS_REGISTER = /^-?!?\|?(?:R\d+|RZ|UR\d+|URZ|UP\d|UPT|P\d|PT|SR_[A-Z_.0-9]+|SRZ|B\d+)(?:\.[A-Z0-9_]+)*\|?/;

/** SASS as cuobjdump -sass and nvdisasm print it: addresses, opcodes, registers, constant banks, labels. */
export const sass = StreamLanguage.define({
  name: 'sass',
  startState: () => ({ comment: false, start: true }),
  token(stream, state) {
    if (stream.sol()) state.start = true;
    if (state.comment) return blockComment(stream, state);
    if (stream.eatSpace()) return null;
    if (stream.match('//')) { stream.skipToEnd(); return 'comment'; }
    if (stream.match('/*')) { state.comment = true; return blockComment(stream, state); }
    if (stream.match(/^[{}]/)) return 'punctuation';
    if (stream.match(/^@!?U?P(?:\d|T)/)) return 'meta';
    if (state.start && stream.match(/^\.?[\w.$]+:/)) return 'labelName';
    if (stream.match(/^\.[a-z]\w*/)) return 'meta';
    if (stream.match(/^@?"(?:[^"\\]|\\.)*"?/)) return 'string';
    if (state.start && stream.match(/^(?:Function|code for|arch|host|compile_size|Fatbin)\b/)) { stream.skipToEnd(); return 'meta'; }
    if (stream.match(/^\.L_[\w]+/) || stream.match(/^`\(\.L_[\w]+\)/)) return 'labelName';
    if (stream.match(/^c\[/)) { stream.backUp(1); return 'atom'; }
    if (stream.match(SASS_REGISTER)) return 'variableName';
    if (stream.match(/^-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:e[+-]?\d+)?|\+?INF|-?QNAN)/)) return 'number';
    if (stream.match(/^[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*/)) {
      if (state.start) { state.start = false; return 'keyword'; }
      return 'atom';
    }
    if (stream.match(/^[A-Za-z_$][\w$.@]*/)) return 'variableName';
    const ch = stream.next();
    if (ch === ';') state.start = true;
    return /[-+*|~!]/.test(ch) ? 'operator' : 'punctuation';
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
});

const BUILTINS = /^(?:lane|warp|tid|threadIdx|blockIdx|blockDim|gridDim|warpSize)$/;
const FUNCTIONS = /^(?:min|max|abs|sw128|sw64|sw32|swizzle)$/;

/** Address expressions: the thread's built-in variables, functions, `if` and `from`. */
export const expr = StreamLanguage.define({
  name: 'expr',
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match('//')) { stream.skipToEnd(); return 'comment'; }
    if (stream.match(NUMBER)) return 'number';
    if (stream.match(/^[A-Za-z_]\w*/)) {
      const word = stream.current();
      if (word === 'if' || word === 'from') return 'keyword';
      if (BUILTINS.test(word)) return 'variableName.special';
      if (FUNCTIONS.test(word)) return 'variableName.function';
      return 'variableName';
    }
    if (stream.match(/^\.[xyz]\b/)) return 'propertyName';
    const ch = stream.next();
    return /[()[\],]/.test(ch) ? 'punctuation' : 'operator';
  },
  languageData: { commentTokens: { line: '//' } },
});

/** Address lists: 32 addresses a warp, `-` for an inactive lane, a mnemonic line starts an instruction. */
export const addresses = StreamLanguage.define({
  name: 'addresses',
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match('//') || stream.match('#')) { stream.skipToEnd(); return 'comment'; }
    if (stream.match(/^(?:0[xX][0-9a-fA-F_]+|\d+)/)) return 'number';
    if (stream.match(/^-(?=[\s,]|$)/)) return 'atom';
    if (stream.match(/^op\b/)) return 'keyword';
    if (stream.match(/^[A-Za-z][\w.]*/)) return 'keyword';
    stream.next();
    return 'punctuation';
  },
  languageData: { commentTokens: { line: '#' } },
});
