import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { synth, type Synthesized } from '../support/synth.js';

/*
 * flowgate listen's endpoint deployed: the WebSocket API, its $connect authorizer, the connections
 * table and exactly the grants the push and the routes need.
 */

let built: Synthesized;
beforeAll(() => {
  built = synth({ listenApi: true });
});

/** The policy statements of the role of the function whose description names `entry`. */
function statementsOf(entry: string): Record<string, any>[] {
  const fn = Object.values(built.template.findResources('AWS::Lambda::Function')).find((r) => String(r.Properties.Description).includes(entry))!;
  const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
  return Object.values(built.template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, any>[]);
}
const actionsOn = (statements: Record<string, any>[], resourceLogicalId: string) =>
  statements.filter((s) => JSON.stringify(s.Resource).includes(resourceLogicalId)).flatMap((s) => [s.Action].flat()).sort();

describe('the listen endpoint (context listenApi)', () => {
  it('is not deployed unless asked for: without it no delivery pays for a query of listeners', () => {
    const plain = synth();
    plain.template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
    expect(JSON.stringify(plain.template.toJSON())).not.toContain('LISTEN_CONNECTIONS_TABLE');
  });

  it('is a WebSocket API with $connect (authorized), $disconnect and $default routes, on a throttled stage', () => {
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET', RouteSelectionExpression: '$request.body.action' });
    for (const key of ['$connect', '$disconnect', '$default']) built.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: key });
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$connect', AuthorizationType: 'CUSTOM', AuthorizerId: Match.anyValue() });
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default', AuthorizationType: 'NONE' });
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'live', AutoDeploy: true, DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 } });
    built.template.hasOutput('*', { Description: Match.stringLikeRegexp('listen endpoint') });
  });

  it("lets $connect in through a REQUEST authorizer running the gateway's own credential check", () => {
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', { AuthorizerType: 'REQUEST', AuthorizerUri: Match.anyValue() });
    built.template.hasResourceProperties('AWS::Lambda::Function', { Description: Match.stringLikeRegexp('functions/entries/listen-authorizer.ts'), Environment: { Variables: Match.objectLike({ AUTH_TABLE: Match.anyValue() }) } });
  });

  it('keeps connections in a table of their own whose items expire (TTL)', () => {
    built.template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    });
    built.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('functions/entries/webhook.ts'),
      Environment: { Variables: Match.objectLike({ LISTEN_CONNECTIONS_TABLE: Match.anyValue(), LISTEN_CALLBACK_URL: Match.anyValue() }) },
    });
  });

  it("grants each function exactly what it touches: the receiver finds connections, posts, reads a listener's answer and closes its wait; the routes keep connections and answers; the authorizer reads API keys", () => {
    const connections = Object.keys(built.template.findResources('AWS::DynamoDB::Table')).find((id) => id.includes('ListenConnections'))!;
    expect(connections).toBeDefined();
    const webhook = statementsOf('functions/entries/webhook.ts');
    expect(actionsOn(webhook, connections)).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(webhook.some((s) => [s.Action].flat().includes('execute-api:ManageConnections'))).toBe(true);
    const listen = statementsOf('functions/entries/listen.ts');
    expect(actionsOn(listen, connections)).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(listen.some((s) => [s.Action].flat().includes('execute-api:ManageConnections'))).toBe(true);
    const authorizer = statementsOf('functions/entries/listen-authorizer.ts');
    expect(authorizer.flatMap((s) => [s.Action].flat()).filter((a: string) => a.startsWith('dynamodb:'))).toEqual(['dynamodb:GetItem']);
    expect(actionsOn(authorizer, connections)).toEqual([]);
    expect(authorizer.some((s) => [s.Action].flat().includes('execute-api:ManageConnections'))).toBe(false);
  });
});
