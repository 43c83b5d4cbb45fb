import { describe, expect, it } from 'vitest';
import { ApiError, ERROR_WORDS } from '../../console/api-errors.js';
import { DEFAULT_MESSAGE } from '../../functions/shared/errors.js';

describe("the console's words for an API error", () => {
  it("tells a call's own message after its words", () => {
    const error = new ApiError('validation_error', 400, 'signature.secret: at least 16 characters');
    expect(error.message).toBe(`${ERROR_WORDS.validation_error} It said: signature.secret: at least 16 characters`);
  });

  it("leaves out the code's fixed line, which says nothing its words do not", () => {
    for (const code of ['not_found', 'unauthorized', 'invalid_code', 'ip_not_allowed'] as const) {
      expect(new ApiError(code, 404, DEFAULT_MESSAGE[code]).message, code).toBe(ERROR_WORDS[code]);
    }
  });
});
