import type { HttpMethod, RouteSpec } from '../manifest.js';

interface CompiledRoute {
  route: RouteSpec;
  pattern: RegExp;
  params: string[];
  /** Literal segments win over parameters, single-segment parameters over greedy ones (as API Gateway chooses). */
  specificity: number;
}

export interface RouteMatch {
  route: RouteSpec;
  pathParameters: Record<string, string>;
}

export type RouteLookup =
  | { kind: 'matched'; match: RouteMatch }
  | { kind: 'method_not_allowed'; allow: HttpMethod[] }
  | { kind: 'not_found' };

function compile(route: RouteSpec): CompiledRoute {
  const params: string[] = [];
  let specificity = 0;
  const source = route.path
    .split('/')
    .map((segment) => {
      const param = /^\{([A-Za-z_]+)(\+?)\}$/.exec(segment);
      if (!param) {
        specificity += 1000;
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      }
      params.push(param[1]!);
      if (param[2]) return '(.+)';
      specificity += 10;
      return '([^/]+)';
    })
    .join('/');
  // `s`: the routed path is decoded, so a key may hold a line break that `.` must match too.
  return { route, pattern: new RegExp(`^${source}$`, 's'), params, specificity };
}

/** Matches request paths to a route table the way API Gateway HTTP APIs do. */
export class RouteMatcher {
  private readonly compiled: CompiledRoute[];

  constructor(routes: readonly RouteSpec[]) {
    this.compiled = routes.map(compile).sort((a, b) => b.specificity - a.specificity);
  }

  /**
   * @param path the path API Gateway routes on: the request path percent-decoded once, so a `%2F`
   * sent in it already separates segments (see `apiGatewayPath` in local/api-gateway.ts for the
   * sources). Each parameter is decoded once more, as API Gateway decodes `rawPath`; `not_found`
   * when one does not decode.
   */
  lookup(method: string, path: string): RouteLookup {
    const allow = new Set<HttpMethod>();
    for (const candidate of this.compiled) {
      const found = candidate.pattern.exec(path);
      if (!found) continue;
      if (candidate.route.method !== 'ANY' && candidate.route.method !== method) {
        allow.add(candidate.route.method);
        continue;
      }
      const pathParameters: Record<string, string> = {};
      try {
        candidate.params.forEach((name, i) => (pathParameters[name] = decodeURIComponent(found[i + 1]!)));
      } catch {
        return { kind: 'not_found' };
      }
      return { kind: 'matched', match: { route: candidate.route, pathParameters } };
    }
    return allow.size > 0 ? { kind: 'method_not_allowed', allow: [...allow].sort() } : { kind: 'not_found' };
  }
}
