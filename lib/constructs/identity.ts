import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  CfnUserPoolGroup,
  FeaturePlan,
  Mfa,
  OAuthScope,
  StandardThreatProtectionMode,
  UserPool,
  UserPoolClientIdentityProvider,
  type UserPoolClient,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { SETTINGS } from '../../functions/settings.js';

/** Who issues the bearer tokens the gateway accepts. */
export type AuthSettings =
  | {
    kind: 'cognito';
    /** Cognito's Plus plan with threat protection enforced (billed per monthly active user). */
    threatProtection: boolean;
    /** Prefix of the hosted UI's domain, unique in the region. @default `<stack name, made valid>-<account id>` */
    domainPrefix?: string;
  }
  | {
    kind: 'external';
    issuer: string;
    jwksUrl: string;
    /** Required: without it any token the issuer signs, for any app, would pass. */
    audience: string;
    /** Accepted JWT algorithms, fixed here and never taken from a token. */
    algorithms: string[];
  };

export interface IdentityProps {
  auth: AuthSettings;
  /** The user pool holds the users: it follows the data's removal policy. */
  removal: 'retain' | 'destroy';
  /**
   * The console's URLs (`<api>/console`, and behind a custom domain its public one): the hosted UI
   * sends users back there, and nowhere else. The first is the one the outputs name.
   */
  consoleUrls: readonly string[];
  /** The stack's name: the hosted UI's default domain prefix is made from it. */
  stackName: string;
  /** The administrators' group (`ADMIN_GROUP`): created in the user pool; an external issuer puts it in its tokens' `groups`. */
  adminGroup: string;
}

/** Words Cognito refuses in a domain prefix. */
const RESERVED_PREFIX_WORDS = /aws|amazon|cognito/g;
/** A prefix's longest: 63 characters, of which the account id and its hyphen take 13. */
const MAX_PREFIX_STACK_PART = 63 - 13;

/**
 * The stack-name part of the hosted UI's default domain prefix, `<this>-<account id>`: prefixes
 * are unique in a region across every account, so the account keeps it ours, and the stack name
 * lets a second stack in the same account and region have one too. Cognito takes lower-case
 * letters, digits and hyphens, and none of its reserved words: each is spelt with hyphens between
 * its letters (`aws` → `a-w-s`), which keeps names apart and cannot form another reserved word,
 * since none starts with the last letter of one. The default stack keeps `flowgate-<account id>`.
 * https://docs.aws.amazon.com/cognito/latest/developerguide/cognito-user-pools-assign-domain-prefix.html
 */
export function domainPrefixStackPart(stackName: string): string {
  return stackName.toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(RESERVED_PREFIX_WORDS, (word) => word.split('').join('-'))
    .slice(0, MAX_PREFIX_STACK_PART)
    .replace(/^-+|-+$/g, '') || 'flowgate';
}

/**
 * The bearer-token settings of the gateway functions (`AUTH_JWKS_URL`, `AUTH_ISSUER`,
 * `AUTH_AUDIENCE`, `AUTH_JWT_ALGORITHMS` in `functions/settings.ts`). By default a Cognito
 * user pool, its hosted UI and a public app client are created and the handlers accept that client's
 * ID tokens (the console gets them through the hosted UI, returning to `consoleUrls`);
 * CDK context can name an external issuer instead. The handlers verify tokens themselves (no API
 * Gateway authorizer), so this needs no IAM: the JWKS is public.
 */
export class Identity extends Construct {
  readonly environment: Readonly<Record<string, string>>;
  readonly userPool?: UserPool;
  readonly userPoolClient?: UserPoolClient;
  /** The hosted UI the console signs in with (`CONSOLE_COGNITO_DOMAIN`). */
  readonly hostedUi?: UserPoolDomain;
  /** The administrators: ID tokens of its members carry it in `cognito:groups`. */
  readonly adminGroup?: CfnUserPoolGroup;

  constructor(scope: Construct, id: string, props: IdentityProps) {
    super(scope, id);
    const { auth } = props;
    if (auth.kind === 'external') {
      this.environment = {
        [SETTINGS.authIssuer.env]: auth.issuer,
        [SETTINGS.authJwksUrl.env]: auth.jwksUrl,
        [SETTINGS.authJwtAlgorithms.env]: auth.algorithms.join(','),
        [SETTINGS.authAudience.env]: auth.audience,
      };
      return;
    }

    const retain = props.removal === 'retain';
    this.userPool = new UserPool(this, 'UserPool', {
      // Operators invite users; open sign-up is a choice to make deliberately.
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      autoVerify: { email: true },
      passwordPolicy: { minLength: 12, requireLowercase: true, requireUppercase: true, requireDigits: true, requireSymbols: true, tempPasswordValidity: Duration.days(3) },
      // Authenticator apps only: no SMS, so no SNS role and no SMS spend.
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      featurePlan: auth.threatProtection ? FeaturePlan.PLUS : FeaturePlan.ESSENTIALS,
      ...(auth.threatProtection ? { standardThreatProtectionMode: StandardThreatProtectionMode.FULL_FUNCTION } : {}),
      deletionProtection: retain,
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    // Operators add administrators (`aws cognito-idp admin-add-user-to-group`); membership is in the ID token.
    this.adminGroup = new CfnUserPoolGroup(this, 'Administrators', {
      userPoolId: this.userPool.userPoolId,
      groupName: props.adminGroup,
      description: 'Flowgate administrators: may mint admin API keys and reset a user\'s factors, each with a fresh step-up proof',
    });
    this.hostedUi = this.userPool.addDomain('HostedUi', {
      cognitoDomain: { domainPrefix: auth.domainPrefix ?? Fn.join('-', [domainPrefixStackPart(props.stackName), Aws.ACCOUNT_ID]) },
    });
    this.userPoolClient = this.userPool.addClient('AppClient', {
      // A public client (browser, mobile): SRP sign-in, no secret. The console signs in through the
      // hosted UI with the authorization code grant and PKCE (console/pkce.ts); the implicit grant,
      // which hands tokens over in the URL, is not offered.
      generateSecret: false,
      authFlows: { userSrp: true },
      oAuth: {
        flows: { authorizationCodeGrant: true, implicitCodeGrant: false, clientCredentials: false },
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL],
        callbackUrls: [...props.consoleUrls],
        logoutUrls: [...props.consoleUrls],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
    });
    if (!auth.threatProtection) {
      Validations.of(this.userPool).acknowledge({
        id: 'AwsSolutions-COG8',
        reason: 'Threat protection needs the Cognito Plus plan, billed per monthly active user; it is opt-in with the CDK context cognitoThreatProtection=true. Sign-in already requires a strong password and TOTP MFA.',
      });
    }

    const issuer = this.userPool.userPoolProviderUrl;
    this.environment = {
      [SETTINGS.authIssuer.env]: issuer,
      [SETTINGS.authJwksUrl.env]: `${issuer}/.well-known/jwks.json`,
      // ID tokens carry `aud` = the app client; access tokens have none and are refused.
      [SETTINGS.authAudience.env]: this.userPoolClient.userPoolClientId,
      [SETTINGS.authJwtAlgorithms.env]: 'RS256',
      // The console (system function): where the hosted UI is, and the client it signs in as.
      [SETTINGS.consoleCognitoDomain.env]: this.hostedUi.baseUrl(),
      [SETTINGS.consoleCognitoClientId.env]: this.userPoolClient.userPoolClientId,
    };
    new CfnOutput(this, 'UserPoolId', { key: 'UserPoolId', value: this.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { key: 'UserPoolClientId', value: this.userPoolClient.userPoolClientId });
    new CfnOutput(this, 'HostedUiUrl', { key: 'HostedUiUrl', value: this.hostedUi.baseUrl() });
  }
}
