/**
 * Python literals as `ast.literal_eval` reads them and `str()` prints them. DocVQA's CSV keeps each
 * answer list as a Python literal (`['1/8/93', 'January 8, 1993']`), and the reference turns every
 * element into text with `str()`, so `1e3` becomes "1000.0" and a nested list its repr. Sets, bytes,
 * f-strings, complex numbers and operators are not read (the caller keeps the text as it is, as the
 * reference does for anything `literal_eval` refuses).
 */

export type PyValue =
  | { t: 'str'; v: string }
  | { t: 'int'; v: bigint }
  | { t: 'float'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'none' }
  | { t: 'list' | 'tuple'; items: PyValue[] }
  | { t: 'dict'; entries: [PyValue, PyValue][] };

class NotALiteral extends Error {}

/** The value of a Python literal, or undefined when `ast.literal_eval` would refuse the text. */
export function parsePyLiteral(text: string): PyValue | undefined {
  try {
    const p = new Parser(text.replace(/^[ \t]+/, ''));
    const value = p.value();
    p.space();
    if (!p.done()) return undefined;
    return value;
  } catch (err) {
    if (err instanceof NotALiteral) return undefined;
    throw err;
  }
}

/** Python's `str(value)`. */
export function pyStr(value: PyValue): string {
  return value.t === 'str' ? value.v : pyRepr(value);
}

/** Python's `repr(value)`. */
export function pyRepr(value: PyValue): string {
  switch (value.t) {
    case 'str':
      return reprString(value.v);
    case 'int':
      return value.v.toString();
    case 'float':
      return reprFloat(value.v);
    case 'bool':
      return value.v ? 'True' : 'False';
    case 'none':
      return 'None';
    case 'list':
      return `[${value.items.map(pyRepr).join(', ')}]`;
    case 'tuple':
      return value.items.length === 1
        ? `(${pyRepr(value.items[0])},)`
        : `(${value.items.map(pyRepr).join(', ')})`;
    case 'dict':
      return `{${value.entries.map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
  }
}

const unprintable = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch !== ' ' && unprintable.test(ch)) {
      const cp = ch.codePointAt(0)!;
      out += cp < 0x100 ? `\\x${hex(cp, 2)}` : cp < 0x10000 ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
    } else out += ch;
  }
  return out + quote;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** Python's float repr: shortest round-trip digits, fixed notation for 1e-4 ≤ |x| < 1e16. */
export function reprFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exp = Number(expText);
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    return `${sign}${whole}.${digits.slice(exp + 1) || '0'}`;
  }
  const lead = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${lead}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

const simpleEscapes: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\n': '',
};

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  done(): boolean {
    return this.i >= this.s.length;
  }

  space(): void {
    while (this.i < this.s.length && ' \t\n\r\f'.includes(this.s[this.i])) this.i++;
  }

  private fail(): never {
    throw new NotALiteral();
  }

  value(): PyValue {
    this.space();
    const ch = this.s[this.i];
    if (ch === undefined) this.fail();
    if (ch === '[') return { t: 'list', items: this.sequence(']') };
    if (ch === '(') return this.parenthesised();
    if (ch === '{') return this.dict();
    if (ch === '+' || ch === '-') {
      this.i++;
      this.space();
      const n = this.number();
      if (ch === '+') return n;
      return n.t === 'int' ? { t: 'int', v: -n.v } : { t: 'float', v: -n.v };
    }
    if (/[0-9.]/.test(ch)) return this.number();
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i))?.[0] ?? '';
    const quoteAfter = this.s[this.i + word.length];
    if (quoteAfter === "'" || quoteAfter === '"') return this.strings();
    this.i += word.length;
    if (word === 'True' || word === 'False') return { t: 'bool', v: word === 'True' };
    if (word === 'None') return { t: 'none' };
    return this.fail();
  }

  private sequence(close: string): PyValue[] {
    this.i++;
    const items: PyValue[] = [];
    for (;;) {
      this.space();
      if (this.s[this.i] === close) {
        this.i++;
        return items;
      }
      items.push(this.value());
      this.space();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== close) this.fail();
    }
  }

  private parenthesised(): PyValue {
    const start = this.i;
    const items = this.sequence(')');
    // `(x)` is x itself; a tuple needs a comma (or nothing at all).
    const inner = this.s.slice(start + 1, this.i - 1).trim();
    if (items.length === 1 && !inner.endsWith(',')) return items[0];
    return { t: 'tuple', items };
  }

  private dict(): PyValue {
    this.i++;
    const entries: [PyValue, PyValue][] = [];
    for (;;) {
      this.space();
      if (this.s[this.i] === '}') {
        this.i++;
        return { t: 'dict', entries };
      }
      const key = this.value();
      if (key.t === 'list' || key.t === 'dict') this.fail();
      this.space();
      if (this.s[this.i] !== ':') this.fail(); // a set: not read here
      this.i++;
      const value = this.value();
      const at = entries.findIndex(([k]) => pyRepr(k) === pyRepr(key));
      if (at >= 0) entries[at] = [entries[at][0], value];
      else entries.push([key, value]);
      this.space();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== '}') this.fail();
    }
  }

  private number(): { t: 'int'; v: bigint } | { t: 'float'; v: number } {
    const rest = this.s.slice(this.i);
    const radix = /^0([xXoObB])((?:_?[0-9a-fA-F])+)(?![\w.])/.exec(rest);
    if (radix) {
      this.i += radix[0].length;
      const base = { x: 16, o: 8, b: 2 }[radix[1].toLowerCase() as 'x' | 'o' | 'b'];
      const digits = radix[2].replace(/_/g, '');
      let v = 0n;
      for (const d of digits) {
        const n = parseInt(d, 16);
        if (n >= base) this.fail();
        v = v * BigInt(base) + BigInt(n);
      }
      return { t: 'int', v };
    }
    const digitRun = '[0-9](?:_?[0-9])*';
    const float = new RegExp(
      `^(?:(?:${digitRun})?\\.${digitRun}|${digitRun}\\.?)(?:[eE][-+]?${digitRun})?(?![\\w.])`,
    ).exec(rest);
    if (!float) return this.fail();
    const text = float[0].replace(/_/g, '');
    this.i += float[0].length;
    if (/^[0-9]+$/.test(text)) {
      // Python refuses leading zeros in a decimal integer ("007"), except for zero itself.
      if (text.length > 1 && text.startsWith('0') && /[1-9]/.test(text)) this.fail();
      return { t: 'int', v: BigInt(text) };
    }
    return { t: 'float', v: Number(text) };
  }

  /** One or more adjacent string literals, concatenated as Python does. */
  private strings(): PyValue {
    let v = '';
    let any = false;
    for (;;) {
      this.space();
      const m = /^([A-Za-z]{0,2})(['"])/.exec(this.s.slice(this.i));
      if (!m) break;
      const prefix = m[1].toLowerCase();
      if (prefix !== '' && prefix !== 'u' && prefix !== 'r') {
        if (any) this.fail();
        return this.fail(); // bytes and f-strings are not read
      }
      this.i += m[1].length;
      v += this.string(prefix === 'r');
      any = true;
    }
    return { t: 'str', v };
  }

  private string(raw: boolean): string {
    const q = this.s[this.i];
    const triple = this.s.startsWith(q.repeat(3), this.i);
    const close = triple ? q.repeat(3) : q;
    this.i += close.length;
    let out = '';
    for (;;) {
      if (this.i >= this.s.length) this.fail();
      if (this.s.startsWith(close, this.i)) {
        this.i += close.length;
        return out;
      }
      const ch = this.s[this.i];
      if (ch === '\n' && !triple) this.fail();
      if (ch !== '\\') {
        out += ch;
        this.i++;
        continue;
      }
      const next = this.s[this.i + 1];
      if (next === undefined) this.fail();
      if (raw) {
        out += ch + next;
        this.i += 2;
        continue;
      }
      out += this.escape(next);
    }
  }

  private escape(next: string): string {
    this.i += 2;
    if (next in simpleEscapes) return simpleEscapes[next];
    if (/[0-7]/.test(next)) {
      const m = /^[0-7]{1,2}/.exec(this.s.slice(this.i))?.[0] ?? '';
      this.i += m.length;
      return String.fromCodePoint(parseInt(next + m, 8));
    }
    const width = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
    if (width > 0) {
      const digits = this.s.slice(this.i, this.i + width);
      if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(digits)) this.fail();
      const cp = parseInt(digits, 16);
      if (cp > 0x10ffff) this.fail();
      this.i += width;
      return String.fromCodePoint(cp);
    }
    if (next === 'N') this.fail(); // \N{name}: not read
    return `\\${next}`;
  }
}
