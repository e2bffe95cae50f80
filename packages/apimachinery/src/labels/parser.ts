/**
 * The label selector string syntax (`?labelSelector=`), a port of upstream's
 * Parser (k8s.io/apimachinery/pkg/labels/selector.go): `k=v`, `k==v`, `k!=v`,
 * `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>1`, `k<1`, comma meaning AND,
 * blanks ignored between tokens. It accepts and rejects the same inputs as
 * upstream and fails with the same messages (`unable to parse requirement:
 * <nil>: Invalid value: "a/b/c": ...`, `found 'x', expected: ',' or 'end of
 * string'`, ...), always as `SelectorParseError`.
 */
import { type PathLike, aggregateMessage, invalid } from '../field-errors.js';
import { isQualifiedName } from '../validation/format.js';
import { type Token, Lexer } from './lexer.js';
import { type Operator, type Requirement, BINARY_OPERATORS, SelectorParseError, byString, newRequirement } from './requirement.js';
import { type LabelSelector, everything } from './selector.js';

/** Where a token is read: in values, `in`/`notin` are plain identifiers. */
type Context = 'keyAndOperator' | 'values';

class Parser {
  private readonly items: [Token, string][] = [];
  private position = 0;

  constructor(
    input: string,
    private readonly basePath: string | undefined,
  ) {
    const lexer = new Lexer(input);
    for (;;) {
      const item = lexer.lex();
      this.items.push(item);
      if (item[0] === 'eos') break;
    }
  }

  private at(i: number, ctx: Context): [Token, string] {
    const [tok, lit] = this.items[Math.min(i, this.items.length - 1)]!;
    return ctx === 'values' && (tok === 'in' || tok === 'notin') ? ['id', lit] : [tok, lit];
  }

  private lookahead(ctx: Context): [Token, string] {
    return this.at(this.position, ctx);
  }

  private consume(ctx: Context): [Token, string] {
    return this.at(this.position++, ctx);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const [tok, lit] = this.lookahead('values');
      switch (tok) {
        case 'id':
        case '!': {
          try {
            reqs.push(this.parseRequirement());
          } catch (e) {
            const err = e as SelectorParseError;
            throw new SelectorParseError(`unable to parse requirement: ${err.message}`, err.fieldErrors ?? []);
          }
          const [t, l] = this.consume('values');
          if (t === 'eos') return reqs;
          if (t === ',') {
            const [t2, l2] = this.lookahead('values');
            if (t2 !== 'id' && t2 !== '!') throw new SelectorParseError(`found '${l2}', expected: identifier after ','`);
            break;
          }
          throw new SelectorParseError(`found '${l}', expected: ',' or 'end of string'`);
        }
        case 'eos':
          return reqs;
        default:
          throw new SelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): Requirement {
    const [key, inferred] = this.parseKeyAndInferOperator();
    if (inferred === 'exists' || inferred === '!') return newRequirement(key, inferred, [], this.basePath);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort(byString), this.basePath);
  }

  private parseKeyAndInferOperator(): [string, Operator | ''] {
    let op: Operator | '' = '';
    let [tok, lit] = this.consume('values');
    if (tok === '!') {
      op = '!';
      [tok, lit] = this.consume('values');
    }
    if (tok !== 'id') throw new SelectorParseError(`found '${lit}', expected: identifier`);
    const keyErrs = isQualifiedName(lit);
    if (keyErrs.length) {
      const e = invalid(this.basePath ?? '<nil>', lit, keyErrs.join('; '));
      throw new SelectorParseError(aggregateMessage([e]), [e]);
    }
    const [next] = this.lookahead('values');
    if ((next === 'eos' || next === ',') && op !== '!') op = 'exists';
    return [lit, op];
  }

  private parseOperator(): Operator {
    const [tok, lit] = this.consume('keyAndOperator');
    switch (tok) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return tok;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new SelectorParseError(`found '${lit}', expected: ${BINARY_OPERATORS.join(', ')}`);
    }
  }

  private parseValues(): Set<string> {
    let [tok, lit] = this.consume('values');
    if (tok !== '(') throw new SelectorParseError(`found '${lit}' expected: '('`);
    [tok, lit] = this.lookahead('values');
    switch (tok) {
      case 'id':
      case ',': {
        const s = this.parseIdentifiersList();
        if (this.consume('values')[0] !== ')') throw new SelectorParseError(`found '${lit}', expected: ')'`);
        return s;
      }
      case ')':
        this.consume('values');
        return new Set(['']);
      default:
        throw new SelectorParseError(`found '${lit}', expected: ',', ')' or identifier`);
    }
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const [tok, lit] = this.consume('values');
      if (tok === 'id') {
        s.add(lit);
        const [tok2, lit2] = this.lookahead('values');
        if (tok2 === ',') continue;
        if (tok2 === ')') return s;
        throw new SelectorParseError(`found '${lit2}', expected: ',' or ')'`);
      }
      if (tok === ',') {
        if (s.size === 0) s.add(''); // "(,"
        const [tok2] = this.lookahead('values');
        if (tok2 === ')') {
          s.add(''); // ",)"
          return s;
        }
        if (tok2 === ',') s.add(''); // ",,"
        continue;
      }
      throw new SelectorParseError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const [ahead] = this.lookahead('values');
    if (ahead === 'eos' || ahead === ',') return new Set(['']);
    const [tok, lit] = this.consume('values');
    if (tok === 'id') return new Set([lit]);
    throw new SelectorParseError(`found '${lit}', expected: identifier`);
  }
}

/**
 * labels.Parse: the `labelSelector` string syntax. `basePath` is upstream's
 * `field.WithPath` option (it prefixes the paths in validation messages).
 */
export function parseLabelSelector(s: string, basePath?: PathLike): LabelSelector {
  const reqs = new Parser(s, basePath === undefined ? undefined : String(basePath)).parse();
  return everything().add(...reqs);
}
