import type { SearchEngine } from '../../domain/search/types.js';
import type { Settings } from '../../settings.js';
import { portOnFirstCall } from '../lazy.js';

/**
 * The search engine of a function (the search routes, or the maintenance queue's consumer): one
 * connection and its table handles, kept while the environment is warm, with the engine's
 * module (native, from the layer) loaded by the first call, never at init. In a module of its
 * own so that the maintenance function's bundle holds none of the routes' code.
 */
export function searchEngineFor(settings: Pick<Settings, 'searchDataUri' | 'searchReadConsistencySeconds'>): SearchEngine {
  return portOnFirstCall<SearchEngine>(async () => {
    const { LanceSearchEngine } = await import('./lance-search-engine.js');
    return new LanceSearchEngine({ uri: settings.searchDataUri, readConsistencySeconds: settings.searchReadConsistencySeconds });
  }, {
    listIndexes: true, countIndexes: true, getIndex: true, saveIndex: true, deleteIndex: true, purgeIndex: true, stats: true, upsert: true,
    getDocument: true, deleteDocuments: true, deleteWhere: true, search: true, waitIndexed: true, indexNow: true, sweep: true,
  });
}
