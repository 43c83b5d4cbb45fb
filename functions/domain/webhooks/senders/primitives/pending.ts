// Stand-ins for the primitives written on another branch (ed25519.ts, ecdsa.ts, x509-rsa.ts,
// jwt.ts, token.ts in this folder). Each refuses every request, so a row on one of them cannot
// pass before its real verifier is here. At merge, verify.ts imports the real files and this one
// is deleted; the catalog's proof count then requires those rows' proofs too (catalog.test.ts).
import type { Verification } from '../catalog-types.js';
import type { VerifyContext } from '../context.js';

/** Marks a stand-in, so the proof count can tell a primitive still to come from one that is here. */
export const PENDING_PRIMITIVE: unique symbol = Symbol.for('flowgate.senders.pending-primitive') as never;

type Params<P extends Verification['primitive']> = Extract<Verification, { primitive: P }>;
type Pending<P extends Verification['primitive']> = ((params: Params<P>, ctx: VerifyContext) => Promise<boolean>) & {
  readonly [PENDING_PRIMITIVE]: true;
};

function pending<P extends Verification['primitive']>(): Pending<P> {
  return Object.assign(async (_params: Params<P>, _ctx: VerifyContext) => false, { [PENDING_PRIMITIVE]: true as const });
}

export const verifyEd25519 = pending<'ed25519'>();
export const verifyEcdsaP256 = pending<'ecdsa_p256'>();
export const verifyX509Rsa = pending<'x509_rsa'>();
export const verifyJwt = pending<'jwt'>();
export const verifyStaticToken = pending<'static_token'>();
export const verifyBasic = pending<'basic'>();
