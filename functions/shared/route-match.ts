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
  return { route, pattern: new RegExp(`^${source}$`), params, specificity };
}

/** Matches request paths to a route table the way API Gateway HTTP APIs do. */
export class RouteMatcher {
  private readonly compiled: CompiledRoute[];

  constructor(routes: readonly RouteSpec[]) {
    this.compiled = routes.map(compile).sort((a, b) => b.specificity - a.specificity);
  }

  /**
   * @param rawPath the path as sent, still percent-encoded; parameters are decoded after matching so
   * that `%2F` inside a key never splits a segment. Returns `not_found` for undecodable parameters.
   */
  lookup(method: string, rawPath: string): RouteLookup {
    const allow = new Set<HttpMethod>();
    for (const candidate of this.compiled) {
      const found = candidate.pattern.exec(rawPath);
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
