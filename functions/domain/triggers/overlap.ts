/**
 * An old signing secret or API key may keep working for a while after its replacement (an
 * overlap), until a time stored with the trigger. The receiver checks that time against its own
 * clock on every request, so an overlap ends on time whatever its cache holds.
 */

/** True while an overlap that ends at `expiresAt` (ISO 8601) has not ended at `now`. */
export const isLive = (expiresAt: string | undefined, now: Date): boolean =>
  expiresAt !== undefined && Date.parse(expiresAt) > now.getTime();
