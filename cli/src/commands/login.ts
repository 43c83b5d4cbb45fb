import type { Command } from 'commander';
import { resolve } from 'node:path';
import { act, define } from '../command.js';
import { configPath, resolveProfile, saveProfile, type Profile } from '../config.js';
import { usage } from '../errors.js';
import { localToken, tokenExpired } from '../local-token.js';
import { info, printJson, printTable } from '../output.js';
import { readConfig } from '../config.js';
import { Api } from '../api.js';

/** `npm start`'s default ports: the gateway on PORT (3000), its listen endpoint on the next. */
const LOCAL_PORT = 3000;

async function recordedAddress(dataDir: string) {
  const { readLocalAddress } = await import('../../../local/data-dir-files.js');
  return readLocalAddress(dataDir);
}

export function registerLogin(program: Command): void {
  define(program, 'login', 'Keep a profile: the base URL and a credential (a user token or an API key), in your config directory (mode 0600)', [
    'flowgate login --local',
    'flowgate login --base-url https://api.example.com --token "$TOKEN" --listen-url wss://ws.example.com/live',
    'flowgate login --profile ci --base-url https://api.example.com --api-key "$API_KEY"',
  ])
    .option('--base-url <url>', 'the gateway base URL')
    .option('--token <token>', 'a user\'s bearer token')
    .option('--api-key <key>', 'an API key (listen needs the triggers scope)')
    .option('--listen-url <url>', 'the listen endpoint (ws:// or wss://), for flowgate listen')
    .option('--local', 'use the local stack (npm start): read its data directory and mint tokens as they are needed')
    .option('--data-dir <dir>', 'with --local: the data directory (default FLOWGATE_DATA_DIR, else .flowgate)')
    .option('--sub <sub>', 'with --local: the user the tokens are for', 'local-user')
    .action(act(async (context, options: { baseUrl?: string; token?: string; apiKey?: string; listenUrl?: string; local?: boolean; dataDir?: string; sub: string }) => {
      const name = program.opts<{ profile?: string }>().profile ?? 'default';
      let profile: Profile;
      if (options.local) {
        if (options.token || options.apiKey) throw usage('--local mints its own tokens: leave out --token and --api-key');
        const dataDir = resolve(options.dataDir ?? process.env.FLOWGATE_DATA_DIR ?? '.flowgate');
        // The running stack's own record first: it knows the ports it was started on, where this
        // terminal's PORT may not; then PORT and LISTEN_PORT, as npm start reads them.
        const recorded = options.baseUrl ? undefined : await recordedAddress(dataDir);
        const port = Number(process.env.PORT ?? LOCAL_PORT);
        const baseUrl = options.baseUrl ?? recorded?.base_url ?? `http://127.0.0.1:${port}`;
        const basePort = Number(new URL(baseUrl).port || port);
        const listenUrl = options.listenUrl ?? recorded?.listen_url ?? `ws://127.0.0.1:${Number(process.env.LISTEN_PORT ?? basePort + 1)}`;
        await localToken(dataDir, options.sub);
        profile = { base_url: baseUrl, listen_url: listenUrl, local: { data_dir: dataDir, sub: options.sub } };
      } else {
        if (!options.baseUrl) throw usage("option '--base-url <url>' is required (or use --local)");
        if (!options.token === !options.apiKey) throw usage('give one of --token or --api-key');
        profile = {
          base_url: options.baseUrl.replace(/\/+$/, ''),
          ...(options.listenUrl && { listen_url: options.listenUrl }),
          ...(options.token && { token: options.token }),
          ...(options.apiKey && { api_key: options.apiKey }),
        };
      }
      // Checked before it is kept: a typo in the URL or a dead token says so now.
      await new Api(profile).request('GET', '/triggers', { query: { limit: 1 } });
      saveProfile(name, profile);
      if (context.json) printJson({ profile: name, base_url: profile.base_url, listen_url: profile.listen_url ?? null, config: configPath() });
      else info(`Logged in: profile "${name}" (${profile.base_url}) kept in ${configPath()}`);
    }));

  define(program, 'profiles', 'List the profiles kept in your config directory', ['flowgate profiles', 'flowgate profiles --json'])
    .action(act(async (context) => {
      const config = readConfig();
      const rows = Object.entries(config.profiles).map(([name, p]) => ({
        name, current: name === config.current, base_url: p.base_url, listen_url: p.listen_url ?? null, credential: p.local ? 'local' : p.token ? 'token' : 'api_key',
      }));
      if (context.json) return printJson(rows);
      printTable(['', 'NAME', 'BASE URL', 'CREDENTIAL'], rows.map((r) => [r.current ? '*' : '', r.name, r.base_url, r.credential]));
    }));

  define(program, 'token', 'Print a bearer token for the profile (a local profile mints a fresh one), for curl and scripts', [
    'TOKEN=$(flowgate token)',
    'curl -H "Authorization: Bearer $(flowgate token)" http://127.0.0.1:3000/triggers',
  ])
    .action(act(async (context) => {
      const globals = program.opts<{ profile?: string }>();
      const profile = resolveProfile(globals.profile);
      let token = profile.token;
      if (profile.local && (!token || tokenExpired(token))) token = await localToken(profile.local.data_dir, profile.local.sub);
      if (!token) throw usage('this profile holds an API key, not a token: use it as X-Api-Key');
      if (context.json) printJson({ token });
      else process.stdout.write(`${token}\n`);
    }));
}
