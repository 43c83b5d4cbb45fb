/**
 * A static check over `functions/**`: secrets, keys, signatures, hashes and codes are never
 * compared with `===`, `!==`, `==`, `!=`, `switch`, `.equals(`, `localeCompare`, `Buffer.compare`
 * or a search (`includes`, `indexOf`, `startsWith`…), which all return as soon as a byte differs
 * and so leak through timing how much of a guess was right. They go through a helper built on
 * `crypto.timingSafeEqual`. The check is a heuristic on names; what it lets through is listed in
 * `ALLOWED`, each with the reason it is safe.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../functions/shared/errors.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCES = join(ROOT, 'functions');

/** Names that suggest a secret or something derived from one. */
const SENSITIVE = /secret|signature|api_?key|api-key|key_?hash|hmac|digest|code|token/i;

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);
/** Methods that compare their receiver with their argument byte by byte and stop early. */
const EARLY_EXIT_METHODS = new Set(['equals', 'localeCompare', 'compare', 'includes', 'indexOf', 'lastIndexOf', 'startsWith', 'endsWith']);

interface Comparison {
  file: string;
  line: number;
  text: string;
  /** The operator, `switch`, or the method name. */
  how: string;
  left: ts.Expression;
  right: ts.Expression;
}

const unwrap = (node: ts.Expression): ts.Expression =>
  ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node) || ts.isAsExpression(node) ? unwrap(node.expression) : node;
/** A literal is written in the source, so it is never a secret, whatever its words (`'urlencoded'`). */
const isLiteral = (node: ts.Expression) => ts.isStringLiteralLike(unwrap(node)) || ts.isNumericLiteral(unwrap(node));
const isSensitive = (node: ts.Expression) => !isLiteral(node) && SENSITIVE.test(unwrap(node).getText());
const readsLength = (node: ts.Expression) => {
  const inner = unwrap(node);
  return ts.isPropertyAccessExpression(inner) && ['length', 'size', 'byteLength'].includes(inner.name.text);
};
/** `SECRET_PREFIX`: a module constant named in upper case. */
const isNamedConstant = (node: ts.Expression) => ts.isIdentifier(unwrap(node)) && /^[A-Z][A-Z0-9_]*$/.test((unwrap(node) as ts.Identifier).text);

/**
 * What the heuristic lets through. A comparison passes when every sensitive side of it is
 * excused by one of these; anything else is reported with its file and line.
 */
const ALLOWED: { why: string; excuses: (sensitive: ts.Expression, other: ts.Expression, comparison: Comparison) => boolean }[] = [
  {
    why: 'a comparison with a length or size reveals at most a length, which is not secret (the helpers check lengths first too)',
    excuses: (sensitive, other) => readsLength(sensitive) || readsLength(other),
  },
  {
    why: "startsWith/endsWith with a prefix written in the source ('whsec_', SECRET_PREFIX) detects a public format, not a secret",
    excuses: (_sensitive, _other, comparison) =>
      (comparison.how === 'startsWith' || comparison.how === 'endsWith') && (isLiteral(comparison.right) || isNamedConstant(comparison.right)),
  },
  {
    why: "startsWith with a row's public format prefix (`rule.strip_prefix`, `row.secret_prefix`, such as 'whsec_') detects that format, not a secret",
    excuses: (_sensitive, _other, comparison) => {
      const node = unwrap(comparison.right);
      return comparison.how === 'startsWith' && ts.isPropertyAccessExpression(node) && (node.name.text === 'strip_prefix' || node.name.text === 'secret_prefix');
    },
  },
  {
    why: "a zod issue's `code` compared with a literal ('invalid_union') is a branch on the kind of validation problem",
    excuses: (sensitive, other) => {
      const node = unwrap(sensitive);
      return ts.isPropertyAccessExpression(node) && node.name.text === 'code' && node.expression.getText() === 'issue' && ts.isStringLiteralLike(unwrap(other));
    },
  },
  {
    why: 'a typeof test looks at the kind of value, not at its content',
    excuses: (sensitive) => ts.isTypeOfExpression(unwrap(sensitive)),
  },
  {
    why: 'a presence or flag test (against undefined, null, true or false) reveals nothing of the content',
    excuses: (_sensitive, other) => {
      const node = unwrap(other);
      return (ts.isIdentifier(node) && node.text === 'undefined') || ts.isVoidExpression(node)
        || [ts.SyntaxKind.NullKeyword, ts.SyntaxKind.TrueKeyword, ts.SyntaxKind.FalseKeyword].includes(node.kind);
    },
  },
  {
    why: "an error's `code` compared with an error-code literal such as 'invalid_code' is a branch on a public constant",
    excuses: (sensitive, other) => {
      const node = unwrap(sensitive);
      const literal = unwrap(other);
      return ts.isPropertyAccessExpression(node) && node.name.text === 'code'
        && ts.isStringLiteralLike(literal) && Object.hasOwn(ERROR_STATUS, literal.text);
    },
  },
  {
    why: 'an HTTP status (`status_code`, `statusCode`) compared with a number written in the source is a branch on a public status',
    excuses: (sensitive, other) => {
      const node = unwrap(sensitive);
      const name = ts.isPropertyAccessExpression(node) ? node.name.text : ts.isIdentifier(node) ? node.text : '';
      return /^status_?code$/i.test(name) && ts.isNumericLiteral(unwrap(other));
    },
  },
  {
    why: "a signature's `service` (which sender: public configuration) compared with a catalog id literal such as 'custom'",
    excuses: (sensitive, other) => {
      const node = unwrap(sensitive);
      return ts.isPropertyAccessExpression(node) && node.name.text === 'service' && ts.isStringLiteralLike(unwrap(other));
    },
  },
];

function isExcused(comparison: Comparison): boolean {
  const sides: [ts.Expression, ts.Expression][] = [[comparison.left, comparison.right], [comparison.right, comparison.left]];
  return sides.every(([side, other]) => !isSensitive(side) || ALLOWED.some((rule) => rule.excuses(side, other, comparison)));
}

/** Every equality-like comparison in one source text. */
function comparisonsIn(file: string, text: string): Comparison[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: Comparison[] = [];
  const add = (at: ts.Node, how: string, left: ts.Expression, right: ts.Expression, text = at.getText()) =>
    found.push({ file, line: source.getLineAndCharacterOfPosition(at.getStart()).line + 1, text: text.replace(/\s+/g, ' ').slice(0, 160), how, left, right });
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) add(node, node.operatorToken.getText(), node.left, node.right);
    if (ts.isSwitchStatement(node)) {
      for (const clause of node.caseBlock.clauses) {
        if (ts.isCaseClause(clause)) add(clause, 'switch', node.expression, clause.expression, `switch (${node.expression.getText()}) case ${clause.expression.getText()}`);
      }
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && EARLY_EXIT_METHODS.has(node.expression.name.text)) {
      const how = node.expression.name.text;
      const receiver = node.expression.expression;
      const [first, second] = node.arguments;
      // Buffer.compare(a, b) compares its arguments; the others compare the receiver with the first argument.
      if (ts.isIdentifier(receiver) && receiver.text === 'Buffer') {
        if (first && second) add(node, how, first, second);
      } else if (first) add(node, how, receiver, first);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const violationsIn = (file: string, text: string) => comparisonsIn(file, text).filter((c) => !isExcused(c));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const FILES = sourceFiles(SOURCES).map((path) => ({ path, name: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

// ---------------------------------------------------------------------------------------------
// Which functions compare in constant time.

interface FunctionInfo {
  file: string;
  line: number;
  name: string;
  calls: Set<string>;
}

/** Named functions (declarations and `const f = (…) =>`) with the names they call. */
function functionsIn(file: string, text: string): FunctionInfo[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: FunctionInfo[] = [];
  const callsIn = (body: ts.Node) => {
    const calls = new Set<string>();
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (ts.isIdentifier(callee)) calls.add(callee.text);
        else if (ts.isPropertyAccessExpression(callee)) calls.add(callee.name.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(body);
    return calls;
  };
  const visit = (node: ts.Node): void => {
    const line = () => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    if (ts.isFunctionDeclaration(node) && node.name && node.body) found.push({ file, line: line(), name: node.name.text, calls: callsIn(node.body) });
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer
      && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))) {
      found.push({ file, line: line(), name: node.name.text, calls: callsIn(node.initializer.body) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Whether a file takes `timingSafeEqual` from Node's crypto module (not some look-alike). */
const importsTimingSafeEqual = (text: string) =>
  /import\s*\{[^}]*\btimingSafeEqual\b[^}]*\}\s*from\s*'(node:)?crypto'/.test(text);

/**
 * The constant-time helpers: functions that call Node's `timingSafeEqual`, and functions that
 * call those (to a fixed point), e.g. a helper over `constantTimeEqual`.
 */
function constantTimeHelpers(files: typeof FILES): Map<string, FunctionInfo> {
  const all = files.flatMap((f) => functionsIn(f.name, f.text).map((fn) => ({ fn, direct: importsTimingSafeEqual(f.text) && fn.calls.has('timingSafeEqual') })));
  const helpers = new Map(all.filter((a) => a.direct).map((a) => [a.fn.name, a.fn]));
  for (let grew = true; grew;) {
    grew = false;
    for (const { fn } of all) {
      if (!helpers.has(fn.name) && [...fn.calls].some((call) => helpers.has(call))) {
        helpers.set(fn.name, fn);
        grew = true;
      }
    }
  }
  return helpers;
}

/** A function whose name says it compares secrets must be one of the constant-time helpers. */
const LOOKS_LIKE_A_SECRET_COMPARISON = /equal|compare|(signature|hash|digest|code|key|token|secret|hmac)\w*match/i;

/**
 * Files that hash or MAC without comparing the result in code: the hash is a storage key, and
 * the comparison happens as a DynamoDB key lookup or conditional write.
 */
const HASH_FOR_LOOKUP_ONLY: Record<string, string> = {
  'functions/domain/api-keys.ts': 'hashApiKey: the gateway finds a key by its hash (a GetItem), never comparing keys in code',
  'functions/domain/totp/recovery-codes.ts': 'hashRecoveryCode: a code is consumed by a conditional update that removes its hash from the stored set',
  'functions/domain/accounts/signing-key.ts': "publicSigningKey: a kid is the RFC 7638 thumbprint of a public key, a key's name, never a secret checked",
  'functions/adapters/lance/lance-search-engine.ts': "tableName: an account's search tables are named by its id's SHA-256, a name, never a secret checked",
  'functions/adapters/aws/node-sha256.ts': 'NodeSha256: the hash SigV4 signs outgoing requests with (the local S3 engine compares the signature it recomputes in constant time, in local/s3-signature.ts), never a secret checked here',
  'functions/adapters/aws/sqs-search-maintenance.ts': "maintenanceGroupOf and the deduplication id: SQS names for an index's jobs (its account's SHA-256 and a window), never a secret checked",
  'functions/domain/webhooks/batch-elements.ts': "elementContentId: a batch element without an id of its own is named by its content's SHA-256, a deduplication key, never a secret checked",
};
const COMPUTES_A_MAC_OR_HASH = /\b(createHmac|createHash|hmac)\(/;

describe('no secret is compared in variable time', () => {
  it('the heuristic flags what it should and excuses only what ALLOWED lists (self-test)', () => {
    const flagged = (code: string) => violationsIn('self-test.ts', code).map((c) => c.text);
    expect(flagged('if (signature === expected) ok();')).toHaveLength(1);
    expect(flagged('if (provided !== record.api_key_hash) deny();')).toHaveLength(1);
    expect(flagged('const same = a.equals(digest);')).toHaveLength(1);
    expect(flagged('const same = token.localeCompare(other) === 0;').length).toBeGreaterThanOrEqual(1);
    expect(flagged('const same = Buffer.compare(hmacA, b) === 0;').length).toBeGreaterThanOrEqual(1);
    expect(flagged("if (code === '000000') letIn();")).toHaveLength(1);
    expect(flagged('if (header.startsWith(secret)) go();')).toHaveLength(1);
    expect(flagged('const used = codes.includes(code);')).toHaveLength(1);
    expect(flagged("switch (secret) { case 'x': break; }")).toHaveLength(1);
    expect(flagged("if (error.code === userCode) retry();")).toHaveLength(1);
    expect(flagged("if (error.code === 'not_an_error_code') retry();")).toHaveLength(1);

    expect(flagged("if (error.code === 'invalid_code') retry();")).toEqual([]);
    expect(flagged('if (signature === undefined || secret.length === 0) return false;')).toEqual([]);
    expect(flagged("if (typeof token !== 'string') return;")).toEqual([]);
    expect(flagged('if (a === b && count !== 3) go();')).toEqual([]);
    expect(flagged("if (secret.startsWith('whsec_') || key.endsWith(KEY_SUFFIX)) strip();")).toEqual([]);
    expect(flagged("switch (mediaType) { case 'application/x-www-form-urlencoded': break; }")).toEqual([]);
    expect(flagged('if (bytes.length !== MAX_SECRET_BYTES) throw new Error();')).toEqual([]);
  });

  it('finds comparisons to check in functions/** (the scan is not empty)', () => {
    expect(FILES.length).toBeGreaterThan(30);
    expect(FILES.flatMap((f) => comparisonsIn(f.name, f.text)).length).toBeGreaterThan(50);
  });

  it('no ===, !==, ==, !=, switch, .equals(, localeCompare or search on a secret, key, signature, hash or code', () => {
    const violations = FILES.flatMap((f) => violationsIn(f.name, f.text)).map((v) => `${v.file}:${v.line}  ${v.text}`);
    expect(violations, `compare these with constantTimeEqual (functions/domain/webhooks/signatures/hmac.ts), or excuse them in ALLOWED with the reason:\n${violations.join('\n')}`).toEqual([]);
  });

  it('recognises helpers by their use of Node\'s timingSafeEqual, directly or through another helper (self-test)', () => {
    const helpers = constantTimeHelpers([
      { path: 'a.ts', name: 'a.ts', text: "import { timingSafeEqual } from 'node:crypto';\nexport function safeEqual(a, b) { return a.length === b.length && timingSafeEqual(a, b); }\nexport const anyMatch = (xs, y) => xs.some((x) => safeEqual(x, y));" },
      { path: 'b.ts', name: 'b.ts', text: 'const timingSafeEqual = (a, b) => a === b;\nexport function lookAlikeEqual(a, b) { return timingSafeEqual(a, b); }\nexport function sloppyEqual(a, b) { return a === b; }' },
    ]);
    expect([...helpers.keys()].sort()).toEqual(['anyMatch', 'safeEqual']);
  });

  it('the comparison helpers are built on crypto.timingSafeEqual', () => {
    const helpers = constantTimeHelpers(FILES);
    expect([...helpers.keys()]).toContain('constantTimeEqual');
    const suspects = FILES.flatMap((f) => functionsIn(f.name, f.text))
      .filter((fn) => LOOKS_LIKE_A_SECRET_COMPARISON.test(fn.name) && !helpers.has(fn.name));
    expect(suspects.map((fn) => `${fn.file}:${fn.line}  ${fn.name} does not reach crypto.timingSafeEqual`)).toEqual([]);
  });

  it('every file that computes a MAC or hash to check compares it through a constant-time helper', () => {
    const helpers = constantTimeHelpers(FILES);
    const unchecked = FILES.filter((f) => COMPUTES_A_MAC_OR_HASH.test(f.text) && !Object.hasOwn(HASH_FOR_LOOKUP_ONLY, f.name))
      .filter((f) => !functionsIn(f.name, f.text).some((fn) => helpers.has(fn.name)) && ![...helpers.keys()].some((name) => new RegExp(`\\b${name}\\(`).test(f.text)))
      .map((f) => `${f.name}: computes a MAC or hash but calls none of ${[...helpers.keys()].join(', ')}`);
    expect(unchecked).toEqual([]);
    for (const file of Object.keys(HASH_FOR_LOOKUP_ONLY)) expect(FILES.map((f) => f.name), `${file} is allow-listed but gone`).toContain(file);
  });
});
