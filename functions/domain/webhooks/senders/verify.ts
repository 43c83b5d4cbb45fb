import type { Primitive, SenderRow, Verification } from './catalog-types.js';
import type { VerifyContext } from './context.js';
import { verifyEcdsaP256 } from './primitives/ecdsa.js';
import { verifyEd25519 } from './primitives/ed25519.js';
import { verifyHmac } from './primitives/hmac.js';
import { verifyBasic, verifyStaticToken } from './primitives/token.js';

/**
 * The JWT (jose) and X.509 primitives are most of the verifiers' code and serve three senders
 * (Google, Netlify; SNS, PayPal): they load with the first delivery that needs one, not with the
 * receiver's init.
 */
let jwtModule: Promise<typeof import('./primitives/jwt.js')> | undefined;
let x509Module: Promise<typeof import('./primitives/x509-rsa.js')> | undefined;
const verifyJwt: PrimitiveVerifier<'jwt'> = async (params, ctx) => (await (jwtModule ??= import('./primitives/jwt.js'))).verifyJwt(params, ctx);
const verifyX509Rsa: PrimitiveVerifier<'x509_rsa'> = async (params, ctx) => (await (x509Module ??= import('./primitives/x509-rsa.js'))).verifyX509Rsa(params, ctx);

type PrimitiveVerifier<P extends Primitive> = (params: Extract<Verification, { primitive: P }>, ctx: VerifyContext) => boolean | Promise<boolean>;

/** One verifier per primitive: a sender is a row of parameters, never a branch here. */
const PRIMITIVES: { readonly [P in Primitive]: PrimitiveVerifier<P> } = {
  hmac: verifyHmac,
  ed25519: verifyEd25519,
  ecdsa_p256: verifyEcdsaP256,
  x509_rsa: verifyX509Rsa,
  jwt: verifyJwt,
  static_token: verifyStaticToken,
  basic: verifyBasic,
  // The `custom` row itself names no scheme: `customRow(params)` gives the trigger's HMAC settings.
  configured: () => false,
  // Listed so the count is honest, never verifiable here (the row says why).
  unsupported: () => false,
};

/**
 * True when `ctx.request` is genuinely from the sender `row` describes, signed with one of
 * `ctx.secrets`. Resolves `false` for anything wrong with the request; rejects with a
 * `TypeError` only for a misconfiguration (no secret, an empty secret), a fault of ours rather
 * than of the sender, as `verifySignature` does.
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
