/** A fresh one-hour token for `sub`, signed with the local stack's secret: `AUTH_JWT_SECRET` when set, else the data directory's. */
export async function localToken(dataDir: string, sub: string): Promise<string> {
  const { readTokenSecret, DataDirError } = await import('../../local/data-dir-files.js');
  const { mintLocalToken } = await import('../../local/token.js');
  try {
    const secret = process.env.AUTH_JWT_SECRET || (await readTokenSecret(dataDir));
    return await mintLocalToken({ secret, sub });
  } catch (error) {
    if (error instanceof DataDirError) {
      const { CliError } = await import('./errors.js');
      throw new CliError(error.message);
    }
    throw error;
  }
}

/** Whether a JWT's `exp` is under a minute away (or it cannot be read). */
export function tokenExpired(token: string): boolean {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { exp?: number };
    return claims.exp !== undefined && claims.exp * 1000 < Date.now() + 60_000;
  } catch {
    return true;
  }
}
