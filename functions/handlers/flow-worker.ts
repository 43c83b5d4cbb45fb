// Placeholder until this function is built; answers like an unknown route.
import { AppError, toHttpResponse } from '../shared/errors.js';

export const handler = async (): Promise<unknown> => toHttpResponse(new AppError('not_found'));
