import type { Primitive, SenderRow, Verification } from './catalog-types.js';
import type { VerifyContext } from './context.js';
import { verifyHmac } from './primitives/hmac.js';

type PrimitiveVerifier<P extends Primitive> = (params: Extract<Verification, { primitive: P }>, ctx: VerifyContext) => boolean | Promise<boolean>;

/**
 * A primitive loaded with the first delivery that needs it. HMAC serves most senders and is at
 * hand; the others (Ed25519, ECDSA, tokens, jose's JWT, X.509) serve a few each, so the receiver's
 * init does not carry them (its bundle has a 300 KB budget at init).
 */
function onFirstUse<P extends Primitive>(load: () => Promise<PrimitiveVerifier<P>>): PrimitiveVerifier<P> {
  let loaded: Promise<PrimitiveVerifier<P>> | undefined;
  return async (params, ctx) => (await (loaded ??= load()))(params, ctx);
}

/** One verifier per primitive: a sender is a row of parameters, never a branch here. */
const PRIMITIVES: { readonly [P in Primitive]: PrimitiveVerifier<P> } = {
  hmac: verifyHmac,
  ed25519: onFirstUse(async () => (await import('./primitives/ed25519.js')).verifyEd25519),
  ecdsa_p256: onFirstUse(async () => (await import('./primitives/ecdsa.js')).verifyEcdsaP256),
  x509_rsa: onFirstUse(async () => (await import('./primitives/x509-rsa.js')).verifyX509Rsa),
  jwt: onFirstUse(async () => (await import('./primitives/jwt.js')).verifyJwt),
  static_token: onFirstUse(async () => (await import('./primitives/token.js')).verifyStaticToken),
  basic: onFirstUse(async () => (await import('./primitives/token.js')).verifyBasic),
  any_of: (params, ctx) => verifyAnyOf(params.schemes, ctx),
  // The `custom` row itself names no scheme: `customRow(params)` gives the trigger's HMAC settings.
  configured: () => false,
  // Listed so the count is honest, never verifiable here (the row says why).
  unsupported: () => false,
};

/** True when one of the schemes verifies: each is tried, in order, until one does. */
async function verifyAnyOf(schemes: readonly Verification[], ctx: VerifyContext): Promise<boolean> {
  for (const scheme of schemes) {
    if (await (PRIMITIVES[scheme.primitive] as PrimitiveVerifier<Primitive>)(scheme as never, ctx)) return true;
  }
  return false;
}

/**
 * True when `ctx.request` is genuinely from the sender `row` describes, signed with one of
 * `ctx.secrets`. Resolves `false` for anything wrong with the request; rejects with a
 * `TypeError` only for a misconfiguration (no secret, an empty secret), a fault of ours rather
 * than of the sender.
 */
export function verifySender(row: SenderRow, ctx: VerifyContext): Promise<boolean> {
  // An empty key or token is guessable by anyone, so it must never reach a primitive.
  if (ctx.secrets.length === 0 || !ctx.secrets.every(Boolean)) {
    return Promise.reject(new TypeError(`verifySender(${row.id}): at least one non-empty secret is required`));
  }
  const verify = PRIMITIVES[row.verification.primitive] as PrimitiveVerifier<Primitive>;
  // Not an async function: most primitives answer synchronously, and this runs on every delivery.
  try {
    const verified = verify(row.verification as never, ctx);
    return typeof verified === 'boolean' ? Promise.resolve(verified) : verified;
  } catch (error) {
    return Promise.reject(error);
  }
}
