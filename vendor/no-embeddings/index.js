throw new Error('embedding providers are not installed in Flowgate (vendor/no-embeddings)');
