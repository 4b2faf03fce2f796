import { UsageError } from '../../errors.js';

/**
 * The config file's text parsed as JSON, or a UsageError saying what is wrong and where: a syntax error by its line
 * and column (never the text around it, which may hold a secret), a byte order mark by what it is, and a key given
 * twice in one object by its path (JSON.parse would silently keep the last one).
 */
export function parseConfigJson(text: string, source: string): unknown {
  if (text.startsWith('\uFEFF')) {
    throw new UsageError(
      `${source} starts with a UTF-8 byte order mark (BOM, the bytes EF BB BF some editors add), which JSON does not allow: save it as UTF-8 without BOM`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const { line, column } = lineAndColumn(text, syntaxErrorPosition(text));
    throw new UsageError(`${source} is not valid JSON: syntax error at line ${line}, column ${column}`);
  }
  const duplicates = duplicateKeys(text);
  if (duplicates.length > 0) {
    throw new UsageError(`${source} gives a key twice in one object (only one may stay): ${duplicates.join(', ')}`);
  }
  return parsed;
}

class SyntaxErrorAt extends Error {
  constructor(readonly position: number) {
    super(`JSON syntax error at ${position}`);
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/**
 * Where a text that JSON.parse refused first stops being JSON. JSON.parse's own message gives a position only for
 * some errors (Node 20 says `Unexpected token` with the text around it and no position), so the text is read again
 * by this small reader of JSON's grammar, which only has to find the place.
 */
function syntaxErrorPosition(text: string): number {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxErrorAt(at);
  };
  const space = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at] as string)) at += 1;
  };
  const expect = (char: string): void => {
    if (text[at] !== char) fail();
    at += 1;
  };
  const string = (): void => {
    expect('"');
    for (;;) {
      const char = text[at];
      if (char === undefined || char < ' ') fail();
      if (char === '"') {
        at += 1;
        return;
      }
      if (char === '\\') {
        ESCAPE.lastIndex = at;
        if (!ESCAPE.test(text)) fail();
        at = ESCAPE.lastIndex;
      } else {
        at += 1;
      }
    }
  };
  const sequence = (close: string, item: () => void): void => {
    at += 1;
    space();
    if (text[at] === close) {
      at += 1;
      return;
    }
    for (;;) {
      item();
      space();
      if (text[at] === ',') at += 1;
      else return expect(close);
    }
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === '{') {
      sequence('}', () => {
        space();
        string();
        space();
        expect(':');
        value();
      });
    } else if (char === '[') {
      sequence(']', value);
    } else if (char === '"') {
      string();
    } else {
      const literal = ['true', 'false', 'null'].find((word) => text.startsWith(word, at));
      if (literal !== undefined) {
        at += literal.length;
        return;
      }
      NUMBER.lastIndex = at;
      if (!NUMBER.test(text)) fail();
      at = NUMBER.lastIndex;
    }
  };
  try {
    value();
    space();
    if (at < text.length) fail();
  } catch (error) {
    if (error instanceof SyntaxErrorAt) return error.position;
    throw error;
  }
  return text.length;
}

/** 1-based line and column of a character position. */
function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: position - lineStart + 1 };
}

interface ObjectFrame {
  readonly kind: 'object';
  readonly path: string;
  readonly keys: Set<string>;
  expectingKey: boolean;
  lastKey: string;
}

interface ArrayFrame {
  readonly kind: 'array';
  readonly path: string;
}

/** The paths (`platforms.android.clientId`) of keys given twice in one object of a text that is valid JSON. */
function duplicateKeys(text: string): string[] {
  const found: string[] = [];
  const stack: (ObjectFrame | ArrayFrame)[] = [];
  const childPath = (): string => {
    const top = stack.at(-1);
    if (top === undefined) return '';
    if (top.kind === 'array') return `${top.path}[]`;
    return top.path === '' ? top.lastKey : `${top.path}.${top.lastKey}`;
  };
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    const top = stack.at(-1);
    if (char === '{') {
      stack.push({ kind: 'object', path: childPath(), keys: new Set(), expectingKey: true, lastKey: '' });
    } else if (char === '[') {
      stack.push({ kind: 'array', path: childPath() });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',' && top?.kind === 'object') {
      top.expectingKey = true;
    } else if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.kind === 'object' && top.expectingKey) {
        const key = JSON.parse(text.slice(index, end + 1)) as string;
        const path = top.path === '' ? key : `${top.path}.${key}`;
        if (top.keys.has(key)) found.push(path);
        top.keys.add(key);
        top.lastKey = key;
        top.expectingKey = false;
      }
      index = end;
    }
  }
  return found;
}
