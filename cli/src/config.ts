import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, usage } from './errors.js';

/** A named set of credentials for one Flowgate deployment (or `npm start`). */
export interface Profile {
  base_url: string;
  /** The listen endpoint (`ws://` or `wss://`), for `flowgate listen`. */
  listen_url?: string;
  token?: string;
  api_key?: string;
  /** `login --local`: the data directory whose secret mints a fresh token when the kept one expires. */
  local?: { data_dir: string; sub: string };
}

interface ConfigFile {
  current?: string;
  profiles: Record<string, Profile>;
}

/** `$FLOWGATE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/flowgate`, else `~/.config/flowgate`. */
export function configDir(): string {
  if (process.env.FLOWGATE_CONFIG_DIR) return process.env.FLOWGATE_CONFIG_DIR;
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'flowgate');
}

export const configPath = () => join(configDir(), 'config.json');

export function readConfig(): ConfigFile {
  const path = configPath();
  if (!existsSync(path)) return { profiles: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as ConfigFile;
    return { ...parsed, profiles: parsed.profiles ?? {} };
  } catch {
    throw new CliError(`${path} is not valid JSON: fix or delete it, then run flowgate login again`);
  }
}

/** Written readable by its owner only (0600, in a 0700 directory): it holds credentials. */
export function writeConfig(config: ConfigFile): void {
  const dir = configDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = configPath();
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

export function saveProfile(name: string, profile: Profile): void {
  const config = readConfig();
  config.profiles[name] = profile;
  config.current = name;
  writeConfig(config);
}

/**
 * The profile a command runs with: `--profile`, else `FLOWGATE_PROFILE`, else the last one logged
 * in to; `FLOWGATE_BASE_URL`, `FLOWGATE_TOKEN`, `FLOWGATE_API_KEY` and `FLOWGATE_LISTEN_URL`
 * override its fields (with only the environment set, no profile is needed).
 */
export function resolveProfile(name: string | undefined): Profile & { name?: string } {
  const config = readConfig();
  const chosen = name ?? process.env.FLOWGATE_PROFILE ?? config.current;
  const stored = chosen === undefined ? undefined : config.profiles[chosen];
  if (name !== undefined && !stored) throw usage(`--profile: no profile named "${name}" (profiles: ${Object.keys(config.profiles).join(', ') || 'none; run flowgate login'})`);
  const env = process.env;
  const baseUrl = env.FLOWGATE_BASE_URL ?? stored?.base_url;
  if (!baseUrl) throw usage('not logged in: run flowgate login --base-url URL --token TOKEN (or set FLOWGATE_BASE_URL and FLOWGATE_TOKEN)');
  const fromEnv = env.FLOWGATE_TOKEN !== undefined || env.FLOWGATE_API_KEY !== undefined;
  return {
    ...(chosen !== undefined && stored && { name: chosen }),
    base_url: baseUrl.replace(/\/+$/, ''),
    ...((env.FLOWGATE_LISTEN_URL ?? stored?.listen_url) && { listen_url: env.FLOWGATE_LISTEN_URL ?? stored?.listen_url }),
    ...(fromEnv
      ? { ...(env.FLOWGATE_TOKEN && { token: env.FLOWGATE_TOKEN }), ...(env.FLOWGATE_API_KEY && { api_key: env.FLOWGATE_API_KEY }) }
      : { ...(stored?.token && { token: stored.token }), ...(stored?.api_key && { api_key: stored.api_key }), ...(stored?.local && { local: stored.local }) }),
  };
}
