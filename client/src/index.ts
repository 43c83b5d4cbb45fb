// @flowgate/client: the browser-safe entry (fetch only, no Node import). Node adds file paths
// as upload bodies (index.node.ts, chosen by the `node` export condition).
export { createClient, type FlowgateClient } from './client.js';
export { FlowgateError, type FlowgateErrorCode } from './errors.js';
export { verifyProof, type ProofClaims, type VerifyProofOptions } from './proof.js';
export type { ClientOptions, RetryOptions, OperationId, BodyOf, DataOf, QueryOf, AnswerOf, CallInput, Transport } from './http.js';
export type { ListOptions } from './paging.js';
export type { KvView, ValueBody } from './views/kv.js';
export { SINGLE_PUT_MAX_BYTES, type ObjectsView, type UploadOptions, type UploadProgress, type DownloadOptions, type ObjectDownload } from './views/objects.js';
export type { StreamsView, StreamConsumer, ConsumedMessage, ConsumeOptions, PublishMessage } from './views/streams.js';
export type { AccountsView, Proof, ProofPurpose, TotpConfirmation } from './views/accounts.js';
export type { TriggersView } from './views/triggers.js';
export type { DeliveriesView, DeliveryFilters } from './views/deliveries.js';
export type { ApiKeysView } from './views/api-keys.js';
export type { UploadBody } from './upload-source.js';
export type * from './types.js';
