/**
 * Lambda refuses a function whose environment variables take more than 4 KB "for all environment
 * variables associated with the function, in aggregate" (Lambda quotas,
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). What it measures is
 * the variables as one compact JSON object: its refusal quotes the "String measured", e.g.
 * `{"KEY":"value",...}` (github-aws-runners/terraform-aws-github-runner#3594). Counting that
 * (names, values, quotes and separators, in UTF-8 bytes) can only over-count names plus values.
 */
export const LAMBDA_ENVIRONMENT_MAX_BYTES = 4096;

/**
 * Longest values of CloudFormation's pseudo parameters, with room to spare: account ids are 12
 * digits; the longest partition is `aws-us-gov` (10) and region codes run to 15 characters
 * (`us-isof-south-1`); the longest URL suffix is `amazonaws.com.cn` (16).
 */
const PSEUDO_PARAMETER_MAX_BYTES: Record<string, number> = {
  'AWS::AccountId': 12,
  'AWS::Partition': 16,
  'AWS::Region': 20,
  'AWS::URLSuffix': 20,
};
const ACCOUNT = PSEUDO_PARAMETER_MAX_BYTES['AWS::AccountId']!;
const PARTITION = PSEUDO_PARAMETER_MAX_BYTES['AWS::Partition']!;
const REGION = PSEUDO_PARAMETER_MAX_BYTES['AWS::Region']!;
const URL_SUFFIX = PSEUDO_PARAMETER_MAX_BYTES['AWS::URLSuffix']!;
const length = (...parts: (string | number)[]) => parts.reduce<number>((sum, part) => sum + (typeof part === 'number' ? part : part.length), 0);

/**
 * What a resource's `Ref` or `Fn::GetAtt` resolves to at most, by `<type> <attribute>`. Values
 * the stack passes to its functions are not known at synth, so each is counted at its longest.
 * A kind not listed here fails the check: add it with its documented bound.
 */
const RESOLVED_MAX_BYTES: Record<string, number> = {
  // Table names are 3 to 255 characters (DynamoDB naming rules).
  'AWS::DynamoDB::Table Ref': 255,
  // Bucket names are 3 to 63 characters (S3 bucket naming rules).
  'AWS::S3::Bucket Ref': 63,
  // <bucket>.s3.<region>.<suffix>: the bucket's regional host, its name at most 63 characters.
  'AWS::S3::Bucket RegionalDomainName': length(63, '.s3.', REGION, '.', URL_SUFFIX),
  // https://sqs.<region>.<suffix>/<account>/<queue name>; queue names are at most 80 characters.
  'AWS::SQS::Queue Ref': length('https://sqs.', REGION, '.', URL_SUFFIX, '/', ACCOUNT, '/', 80),
  // arn:<partition>:kms:<region>:<account>:key/<key id, a 36-character UUID>.
  'AWS::KMS::Key Arn': length('arn:', PARTITION, ':kms:', REGION, ':', ACCOUNT, ':key/', 36),
  // https://cognito-idp.<region>.<suffix>/<user pool id>; pool ids are at most 55 characters
  // (Cognito API, UserPoolId), app client ids at most 128 (ClientId).
  'AWS::Cognito::UserPool ProviderURL': length('https://cognito-idp.', REGION, '.', URL_SUFFIX, '/', 55),
  'AWS::Cognito::UserPoolClient Ref': 128,
  // A prefix domain's prefix: at most 63 characters (Cognito API, CreateUserPoolDomain Domain).
  'AWS::Cognito::UserPoolDomain Ref': 63,
  // https://<api id>.execute-api.<region>.<suffix>; API ids are 10 characters, counted as 16.
  'AWS::ApiGatewayV2::Api ApiEndpoint': length('https://', 16, '.execute-api.', REGION, '.', URL_SUFFIX),
  // An API's id (the listen endpoint's callback URL is built from it): 10 characters, counted as 16.
  'AWS::ApiGatewayV2::Api Ref': 16,
  // arn:<partition>:lambda:<region>:<account>:function:<name>; function names are at most 64 characters.
  'AWS::Lambda::Function Arn': length('arn:', PARTITION, ':lambda:', REGION, ':', ACCOUNT, ':function:', 64),
  // https://<url id>.lambda-url.<region>.on.aws/; url ids are 32 characters, counted as 40.
  'AWS::Lambda::Url FunctionUrl': length('https://', 40, '.lambda-url.', REGION, '.on.aws/'),
};

/** A literal string's bytes inside a JSON string (escapes included, quotes not). */
const literalBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/**
 * The most bytes a CloudFormation value (a string, or `Ref` / `Fn::GetAtt` / `Fn::Join` of them)
 * can take once deployed. `resourceTypeOf` names the type of a logical id in the template.
 */
function valueBytesUpperBound(value: unknown, resourceTypeOf: (logicalId: string) => string | undefined): number {
  if (typeof value === 'string') return literalBytes(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const [[intrinsic, argument], ...rest] = Object.entries(value);
    if (rest.length === 0 && intrinsic === 'Ref' && typeof argument === 'string') {
      const bound = PSEUDO_PARAMETER_MAX_BYTES[argument] ?? RESOLVED_MAX_BYTES[`${resourceTypeOf(argument)} Ref`];
      if (bound !== undefined) return bound;
    }
    if (rest.length === 0 && intrinsic === 'Fn::GetAtt' && Array.isArray(argument)) {
      const bound = RESOLVED_MAX_BYTES[`${resourceTypeOf(String(argument[0]))} ${String(argument[1])}`];
      if (bound !== undefined) return bound;
    }
    if (rest.length === 0 && intrinsic === 'Fn::Join' && Array.isArray(argument) && typeof argument[0] === 'string' && Array.isArray(argument[1])) {
      const parts = argument[1] as unknown[];
      return parts.reduce<number>((sum, part) => sum + valueBytesUpperBound(part, resourceTypeOf), 0) + literalBytes(argument[0]) * Math.max(0, parts.length - 1);
    }
  }
  throw new Error(`no known upper bound for the length of ${JSON.stringify(value)}: add one to RESOLVED_MAX_BYTES in lib/lambda-environment-size.ts`);
}

/** The most bytes each variable can add to the measured JSON object (`"NAME":"value"` and its comma). */
export function environmentBytesByVariable(
  variables: Record<string, unknown>,
  resourceTypeOf: (logicalId: string) => string | undefined,
): Record<string, number> {
  return Object.fromEntries(Object.entries(variables).map(([name, value]) =>
    [name, literalBytes(name) + valueBytesUpperBound(value, resourceTypeOf) + '"":"",'.length]));
}

/** The most bytes Lambda can measure for these variables once deployed (see above). */
export function environmentBytesUpperBound(
  variables: Record<string, unknown>,
  resourceTypeOf: (logicalId: string) => string | undefined,
): number {
  const perVariable = Object.values(environmentBytesByVariable(variables, resourceTypeOf));
  // Braces, less the comma the last variable does not have.
  return '{}'.length + perVariable.reduce((sum, bytes) => sum + bytes, 0) - Math.min(1, perVariable.length);
}
