/** The parts of `asl-validator` (which ships no types) that `lib/flow-definition.ts` uses. */
declare module 'asl-validator' {
  interface AslValidationError {
    'Error code': string;
    Message: string;
  }
  interface AslValidationResult {
    isValid: boolean;
    errors: AslValidationError[];
    errorsText(separator?: string): string;
  }
  /** Validates a parsed state machine definition. It writes defaults into `definition`: pass a copy. */
  export default function validateAsl(definition: unknown, options?: { checkPaths?: boolean; checkArn?: boolean }): AslValidationResult;
}
