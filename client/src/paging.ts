/** One page of a list: its items and the cursor of the next page (`null` on the last). */
export interface Page<T> {
  items: readonly T[];
  next: string | null | undefined;
}

/**
 * The items of every page, one after another: the next page is fetched when the loop reaches the
 * end of the one before, so a `break` fetches nothing more.
 */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.items;
    cursor = page.next ?? undefined;
  } while (cursor !== undefined);
}

/** Options every list takes: how many items a page asks for (the API's `limit`). */
export interface ListOptions {
  pageSize?: number;
  signal?: AbortSignal;
}
