import { KMSClient } from '@aws-sdk/client-kms';
import { clientOptions, oncePerConfig } from '../clients.js';

export const kmsClient = oncePerConfig((aws) => new KMSClient(clientOptions(aws, 'kms')));
