/** The cold-start bench's reference: a handler that imports nothing, bundled like the others. */
export const handler = async () => ({ statusCode: 204 });
