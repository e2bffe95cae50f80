/**
 * The lexer of the label selector string syntax, a port of upstream's Lexer
 * (k8s.io/apimachinery/pkg/labels/selector.go). Blanks (space, tab, CR, LF)
 * separate tokens; a run of special symbols is read as the longest known
 * operator, and an unknown run is an `error` token whose literal is upstream's
 * message. `in` and `notin` come out as keywords; the parser decides where
 * they are plain identifiers.
 */

export type Token = 'error' | 'eos' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(';

const STRING2TOKEN = new Map<string, Token>([
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['==', '=='],
  ['=', '='],
  ['>', '>'],
  ['in', 'in'],
  ['<', '<'],
  ['!=', '!='],
  ['notin', 'notin'],
  ['(', '('],
]);

const EOF = '\0';
const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecialSymbol = (ch: string) => ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';

export class Lexer {
  private pos = 0;
  constructor(private readonly s: string) {}

  private read(): string {
    return this.pos < this.s.length ? this.s[this.pos++]! : EOF;
  }

  private unread(): void {
    this.pos--;
  }

  private scanIDOrKeyword(): [Token, string] {
    let buf = '';
    for (;;) {
      const ch = this.read();
      if (ch === EOF) break;
      if (isSpecialSymbol(ch) || isWhitespace(ch)) {
        this.unread();
        break;
      }
      buf += ch;
    }
    const t = STRING2TOKEN.get(buf);
    return t ? [t, buf] : ['id', buf];
  }

  private scanSpecialSymbol(): [Token, string] {
    let last: [Token, string] | undefined;
    let buf = '';
    for (;;) {
      const ch = this.read();
      if (ch === EOF) break;
      if (!isSpecialSymbol(ch)) {
        this.unread();
        break;
      }
      buf += ch;
      const t = STRING2TOKEN.get(buf);
      if (t) last = [t, buf];
      else if (last) {
        this.unread();
        break;
      }
    }
    return last ?? ['error', `error expected: keyword found '${buf}'`];
  }

  /** The next token and its literal; `eos` at the end of the input. */
  lex(): [Token, string] {
    let ch = this.read();
    while (isWhitespace(ch)) ch = this.read();
    if (ch === EOF) return ['eos', ''];
    this.unread();
    return isSpecialSymbol(ch) ? this.scanSpecialSymbol() : this.scanIDOrKeyword();
  }
}
