// Broker benchmark: a cold burst on an empty cache (exactly one auth-server call); autocannon with a cached token
// against `area-metrics broker`, side by side with a bare node:http server and a minimal fastify route answering a
// constant body exactly as long as the broker's answer, each in its own process, in interleaved rounds; and a burst
// against a token being refreshed ahead while the auth server hangs.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { Agent, request } from 'undici';
import { BIN, ROOT, median, startSandboxProcess, stopChild, tempDir } from './lib.mjs';

/**
 * @typedef {(line: string) => void} Log
 * @typedef {{ url: string, child: import('node:child_process').ChildProcess, stop: () => Promise<void> }} Listening
 * @typedef {import('autocannon').Result & { serverCpuUsPerAnswer?: number, generatorCpuUsPerAnswer?: number }} CannonResult
 * @typedef {ReturnType<typeof loadResult>} LoadResult
 */

const APPLICATION = 'com.acme.shop';
const SECRET_ENV = 'BENCH_ANDROID_SECRET';
// App Check, as the broker sees it from a local issuer of the benchmark's own (keys made with jose here).
const PROJECT_NUMBER = '123456789';
const APP_ID = `1:${PROJECT_NUMBER}:android:bench`;
const ATTESTATION_HEADER = 'X-Firebase-AppCheck';

/**
 * Starts a server process whose first stdout line is `<what> listening on http://...`. Its stderr (the broker's log)
 * goes straight to a file: relayed through a pipe, every log line would cost the benchmark process, which is also
 * the load generator, CPU that the bare server's run does not.
 * @param {string} what
 * @param {string} file
 * @param {readonly string[]} args
 * @param {{ env?: NodeJS.ProcessEnv, stderrPath?: string }} [options]
 * @returns {Promise<Listening>}
 */
function startListening(what, file, args, { env = process.env, stderrPath } = {}) {
  const stderr = stderrPath ? openSync(stderrPath, 'w') : 'inherit';
  /** @type {import('node:child_process').ChildProcess} */
  let child;
  try {
    child = spawn(process.execPath, [file, ...args], { env, cwd: ROOT, stdio: ['ignore', 'pipe', stderr] });
  } finally {
    if (typeof stderr === 'number') closeSync(stderr); // the child holds its own copy
  }
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code} before listening (log: ${stderrPath ?? 'stderr'})`)));
    lines.once('line', (line) => {
      const match = new RegExp(`^${what} listening on (http://\\S+)$`).exec(line);
      if (!match) return reject(new Error(`unexpected first ${what} line: ${line}`));
      child.removeAllListeners('exit');
      lines.on('line', () => {});
      resolve({ url: /** @type {string} */ (match[1]), child, stop: () => stopChild(child) });
    });
  });
}

/** @param {string} sandboxUrl */
async function tokenCalls(sandboxUrl) {
  const response = await fetch(`${sandboxUrl}/_sandbox/requests`);
  const { requests } = /** @type {{ requests: { path: string }[] }} */ (await response.json());
  return requests.filter((entry) => entry.path.startsWith('/oauth2/token')).length;
}

/** `burst` requests at once, each on its own connection, for one application on an empty cache. */
/**
 * @param {string} brokerUrl
 * @param {number} burst
 */
async function coldBurst(brokerUrl, burst) {
  const agent = new Agent({ connections: burst, pipelining: 1 });
  const url = `${brokerUrl}/api/gatekeeper-token?application_package=${encodeURIComponent(APPLICATION)}`;
  const started = performance.now();
  try {
    const answers = await Promise.all(
      Array.from({ length: burst }, async () => {
        const response = await request(url, { dispatcher: agent });
        const body = /** @type {{ access_token?: string }} */ (await response.body.json());
        return { status: response.statusCode, token: body.access_token };
      }),
    );
    const ok = answers.filter((answer) => answer.status === 200);
    return {
      burst,
      ok: ok.length,
      distinctTokens: new Set(ok.map((answer) => answer.token)).size,
      wallMs: performance.now() - started,
    };
  } finally {
    await agent.close();
  }
}

const AUTOCANNON_CLI = join(ROOT, 'node_modules', 'autocannon', 'autocannon.js');

/** CPU time (user + system) a process has used so far, in ms; undefined where /proc is not there (not Linux). */
/** @param {number | undefined} pid @returns {number | undefined} */
function cpuMs(pid) {
  try {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms (USER_HZ is 100 on Linux)
  } catch {
    return undefined;
  }
}

/**
 * autocannon against `url`. By default in a process of its own, so that parsing the answers does not take CPU from
 * the benchmark process; `inProcess` runs it here (how the benchmark measured before, kept to compare). With the
 * server's pid, also the CPU time the server and the load generator spent per answer: on a shared 2-core machine
 * throughput moves with the neighbours' load, CPU per answer much less, and it says which side was the limit.
 * @param {string} url
 * @param {{ connections: number, durationSeconds: number, inProcess?: boolean, serverPid?: number, headers?: Record<string, string> }} options
 * @returns {Promise<CannonResult>}
 */
async function cannon(url, { connections, durationSeconds, inProcess = false, serverPid, headers = {} }) {
  if (inProcess) return autocannon({ url, connections, duration: durationSeconds, headers });
  const serverBefore = serverPid === undefined ? undefined : cpuMs(serverPid);
  const headerArgs = Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}=${value}`]);
  const child = spawn(
    process.execPath,
    [AUTOCANNON_CLI, '--json', '-c', String(connections), '-d', String(durationSeconds), ...headerArgs, url],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  /** @type {number | undefined} */
  let generatorMs;
  // Read while it runs: an exited process has no /proc entry. The last 100 ms of its life are not counted (~1%).
  const poll = setInterval(() => (generatorMs = cpuMs(child.pid) ?? generatorMs), 100);
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  /** @type {number | null} */
  const code = await new Promise((resolve) => child.once('close', resolve));
  clearInterval(poll);
  if (code !== 0) throw new Error(`autocannon exited with ${code}`);
  /** @type {CannonResult} */
  const result = JSON.parse(out);
  const serverAfter = serverPid === undefined ? undefined : cpuMs(serverPid);
  const perAnswer = (/** @type {number | undefined} */ ms) =>
    ms === undefined || result.requests.total === 0 ? undefined : (ms * 1000) / result.requests.total;
  result.serverCpuUsPerAnswer = serverBefore === undefined || serverAfter === undefined ? undefined : perAnswer(serverAfter - serverBefore);
  result.generatorCpuUsPerAnswer = perAnswer(generatorMs);
  return result;
}

const us = (/** @type {number | undefined} */ value) => (value === undefined ? 'n/a' : `${value.toFixed(1)} µs`);

/** @param {CannonResult} result */
function loadResult(result) {
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    serverCpuUsPerAnswer: result.serverCpuUsPerAnswer,
    generatorCpuUsPerAnswer: result.generatorCpuUsPerAnswer,
  };
}

/** The median of each measure over the rounds (each measure on its own), and every round's numbers. */
/** @param {LoadResult[]} rounds */
function medianResult(rounds) {
  /** @param {'requestsPerSecond' | 'p50Ms' | 'p99Ms' | 'serverCpuUsPerAnswer' | 'generatorCpuUsPerAnswer'} key */
  const pick = (key) => median(rounds.map((round) => round[key]));
  return {
    // Measured in every round (NaN only if there was none).
    requestsPerSecond: pick('requestsPerSecond') ?? Number.NaN,
    p50Ms: pick('p50Ms') ?? Number.NaN,
    p99Ms: pick('p99Ms') ?? Number.NaN,
    serverCpuUsPerAnswer: pick('serverCpuUsPerAnswer'),
    generatorCpuUsPerAnswer: pick('generatorCpuUsPerAnswer'),
    total: rounds.reduce((sum, round) => sum + round.total, 0),
    non2xx: rounds.reduce((sum, round) => sum + round.non2xx, 0),
    errors: rounds.reduce((sum, round) => sum + round.errors, 0),
    timeouts: rounds.reduce((sum, round) => sum + round.timeouts, 0),
    rounds,
  };
}

/**
 * autocannon runs in this process (one thread): on 2 cores a second load-generator thread or process only takes CPU
 * from the server under test. Every target is measured the same way, in interleaved rounds (bare, fastify, broker,
 * bare, ...) so that a burst of load from something else on the machine does not land on one target only; the
 * table shows each measure's median over the rounds.
 */
// The limits are on, as in production: every token request is counted against its client's rate and the in-flight
// cap. They are set high enough that the load generator, one address, is never refused.
const BENCH_LIMITS = { perClientPerMinute: 1_000_000_000, maxInFlight: 5000 };

/**
 * @param {{ log: Log, connections?: number, durationSeconds?: number, warmupSeconds?: number, burst?: number, rounds?: number,
 *   loadInProcess?: boolean, bareBytes?: number }} options
 */
export async function brokerBenchmark({
  log,
  connections = 100,
  durationSeconds = 10,
  warmupSeconds = 2,
  burst = 1000,
  rounds = 3,
  loadInProcess = false,
  bareBytes,
}) {
  const dir = await tempDir('broker');
  // The auth server is the sandbox's /oauth2/token, with a realistic 50 ms of latency so the burst's misses overlap.
  const sandbox = await startSandboxProcess(['--stores', '1', '--zones', '1', '--days', '1', '--token-latency-ms', '50']);
  /** A broker config on the sandbox, with the benchmark's limits; `extra` replaces or adds blocks. @param {string} name @param {Record<string, unknown>} extra */
  const writeConfig = async (name, extra = {}) => {
    const path = join(dir, name);
    const config = {
      authUrl: sandbox.url,
      platforms: { android: { clientId: 'demo-client', clientSecretEnv: SECRET_ENV } },
      applications: { [APPLICATION]: 'android' },
      cache: { marginSeconds: 60 },
      limits: BENCH_LIMITS,
      ...extra,
    };
    await writeFile(path, JSON.stringify(config));
    return path;
  };
  const configPath = await writeConfig('broker.json');
  const issuer = await startIssuer();
  const attestedConfigPath = await writeConfig('broker-attested.json', {
    applications: { [APPLICATION]: { platform: 'android', appId: APP_ID } },
    attestation: { mode: 'enforce', provider: 'firebase-app-check', projectNumber: PROJECT_NUMBER, jwksUrl: issuer.jwksUrl },
  });
  /** @type {Listening[]} */
  const servers = [];
  try {
    // Default log level (info: a line per miss or error, cache hits summed up every 60 s), written to a file.
    const broker = await startListening('broker', BIN, ['broker', '--config', configPath, '--port', '0'], {
      env: { ...process.env, [SECRET_ENV]: 'demo-secret' },
      stderrPath: join(dir, 'broker.log'),
    });
    servers.push(broker);

    const before = await tokenCalls(sandbox.url);
    const cold = await coldBurst(broker.url, burst);
    const authCalls = (await tokenCalls(sandbox.url)) - before;
    log(
      `cold burst: ${cold.burst} concurrent requests, ${cold.ok} answered 200 with ${cold.distinctTokens} distinct token(s) ` +
        `in ${(cold.wallMs / 1000).toFixed(2)} s; auth-server calls: ${authCalls}`,
    );

    const brokerUrl = `${broker.url}/api/gatekeeper-token?application_package=${encodeURIComponent(APPLICATION)}`;
    // The references answer as many bytes as the broker does (headers aside): like with like.
    const brokerBodyBytes = Buffer.byteLength(await (await fetch(brokerUrl)).text());
    const referenceBytes = bareBytes ?? brokerBodyBytes;
    const bare = await startListening('bare', join(ROOT, 'bench', 'bare-server.mjs'), ['--bytes', String(referenceBytes)]);
    servers.push(bare);
    const minimalFastify = await startListening('bare', join(ROOT, 'bench', 'bare-server.mjs'), [
      '--bytes',
      String(referenceBytes),
      '--fastify',
    ]);
    servers.push(minimalFastify);
    log(
      `broker's token answer: ${brokerBodyBytes} bytes; the references answer ${referenceBytes}; load generator ${loadInProcess ? 'in this process' : 'in its own process'}`,
    );

    // The same broker with App Check enforced, asked with one genuine token over and over (an app's requests).
    const attested = await startListening('broker', BIN, ['broker', '--config', attestedConfigPath, '--port', '0'], {
      env: { ...process.env, [SECRET_ENV]: 'demo-secret' },
      stderrPath: join(dir, 'broker-attested.log'),
    });
    servers.push(attested);
    const attestedUrl = `${attested.url}/api/gatekeeper-token?application_package=${encodeURIComponent(APPLICATION)}`;
    const genuine = await issuer.mint();
    const first = await fetch(attestedUrl, { headers: { [ATTESTATION_HEADER]: genuine } });
    if (first.status !== 200) throw new Error(`the attested broker answered ${first.status} to a genuine token`);
    await first.arrayBuffer();

    const targets = [
      { key: 'bare', name: `bare node:http, constant ${referenceBytes}-byte JSON`, url: `${bare.url}/`, pid: bare.child.pid },
      { key: 'fastify', name: 'minimal fastify route, same constant body', url: `${minimalFastify.url}/`, pid: minimalFastify.child.pid },
      { key: 'broker', name: 'area-metrics broker, cached token', url: brokerUrl, pid: broker.child.pid },
      {
        key: 'attested',
        name: 'area-metrics broker, cached token, App Check enforced (one genuine token, repeated)',
        url: attestedUrl,
        pid: attested.child.pid,
        headers: { [ATTESTATION_HEADER]: genuine },
      },
    ];
    /** @type {Record<string, LoadResult[]>} */
    const samples = Object.fromEntries(targets.map((target) => [target.key, []]));
    /** @param {(typeof targets)[number]} target @param {number} seconds */
    const generate = (target, seconds) =>
      cannon(target.url, {
        connections,
        durationSeconds: seconds,
        inProcess: loadInProcess,
        serverPid: target.pid,
        headers: target.headers,
      });
    for (const target of targets) await generate(target, warmupSeconds); // JIT and connection warm-up
    for (let round = 1; round <= rounds; round++) {
      for (const target of targets) {
        const result = loadResult(await generate(target, durationSeconds));
        samples[target.key]?.push(result);
        log(
          `round ${round}/${rounds} ${target.name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms} ms, ` +
            `p99 ${result.p99Ms} ms, non-2xx ${result.non2xx}, errors ${result.errors}; CPU per answer: server ${us(result.serverCpuUsPerAnswer)}, ` +
            `load generator ${us(result.generatorCpuUsPerAnswer)}`,
        );
      }
    }
    const load = {
      bare: medianResult(samples.bare ?? []),
      fastify: medianResult(samples.fastify ?? []),
      broker: medianResult(samples.broker ?? []),
      attested: medianResult(samples.attested ?? []),
    };
    for (const target of targets) {
      const result = load[/** @type {keyof typeof load} */ (target.key)];
      log(
        `${target.name} (median of ${rounds}): ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms} ms, ` +
          `p99 ${result.p99Ms} ms, ${((result.requestsPerSecond / load.bare.requestsPerSecond) * 100).toFixed(0)}% of bare; ` +
          `CPU per answer: server ${us(result.serverCpuUsPerAnswer)}, load generator ${us(result.generatorCpuUsPerAnswer)}`,
      );
    }
    const authCallsAfterLoad = (await tokenCalls(sandbox.url)) - before;
    const verifying = await verifyEveryRequest({ log, issuer, url: attestedUrl, pid: attested.child.pid });
    const refreshing = await refreshingBurst({ log, dir, connections, inProcess: loadInProcess });
    return {
      connections,
      durationSeconds,
      rounds,
      loadGenerator: loadInProcess ? 'in-process' : 'own process',
      brokerBodyBytes,
      referenceBytes,
      cold: { ...cold, authCalls },
      authCallsAfterLoad,
      load,
      targets: targets.map(({ headers: _headers, ...target }) => target),
      verifying,
      refreshing,
    };
  } finally {
    for (const server of servers) await server.stop();
    await issuer.stop();
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** An App Check issuer on loopback: one RS256 key, its JWKS at /v1/jwks, and genuine tokens for APP_ID. */
async function startIssuer() {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench-key', alg: 'RS256', use: 'sig' };
  const server = createServer((_request, response) => {
    response
      .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=21600' })
      .end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  let serial = 0;
  return {
    jwksUrl: `http://127.0.0.1:${port}/v1/jwks`,
    mint: () => {
      const iat = Math.floor(Date.now() / 1000);
      serial += 1;
      return new SignJWT({
        sub: APP_ID,
        aud: [`projects/${PROJECT_NUMBER}`, 'projects/bench'],
        iat,
        exp: iat + 3600,
        jti: `bench-${serial}`,
      })
        .setIssuer(`https://firebaseappcheck.googleapis.com/${PROJECT_NUMBER}`)
        .setProtectedHeader({ alg: 'RS256', kid: 'bench-key', typ: 'JWT' })
        .sign(privateKey);
    },
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * The cost of verifying: a new genuine token on every request (minted beforehand), 10 at a time, against the
 * broker with App Check enforced. Reports the rate, the latency and the server's CPU per answer, which is the
 * verification (signature, claims) on top of a cached-token answer through fastify.
 * @param {{ log: Log, issuer: Awaited<ReturnType<typeof startIssuer>>, url: string, pid: number | undefined, count?: number, concurrency?: number }} options
 */
async function verifyEveryRequest({ log, issuer, url, pid, count = 2000, concurrency = 10 }) {
  /** @type {string[]} */
  const tokens = [];
  for (let index = 0; index < count; index++) tokens.push(await issuer.mint());
  const agent = new Agent({ connections: concurrency, pipelining: 1 });
  /** @type {number[]} */
  const latencies = [];
  let failed = 0;
  const cpuBefore = cpuMs(pid);
  const started = performance.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < tokens.length) {
          const token = tokens[next++];
          const sent = performance.now();
          const response = await request(url, { dispatcher: agent, headers: { [ATTESTATION_HEADER]: token } });
          await response.body.dump();
          latencies.push(performance.now() - sent);
          if (response.statusCode !== 200) failed++;
        }
      }),
    );
  } finally {
    await agent.close();
  }
  const wallMs = performance.now() - started;
  const cpuAfter = cpuMs(pid);
  latencies.sort((a, b) => a - b);
  const at = (/** @type {number} */ share) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * share))] ?? NaN) * 10) / 10;
  const result = {
    requests: count,
    failed,
    requestsPerSecond: (count * 1000) / wallMs,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    serverCpuUsPerAnswer: cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1000) / count,
  };
  log(
    `verify on every request: ${count} new tokens, ${concurrency} at a time: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms} ms, ` +
      `p99 ${result.p99Ms} ms, failed ${failed}; server CPU per answer ${us(result.serverCpuUsPerAnswer)}`,
  );
  return result;
}

/** An auth server that issues opaque tokens valid for `ttlSeconds`, or (after `hang()`) never answers. */
/** @param {number} ttlSeconds */
async function startHangingAuthServer(ttlSeconds) {
  let calls = 0;
  let hanging = false;
  /** @type {Set<import('node:http').ServerResponse>} */
  const held = new Set();
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      calls++;
      if (hanging) {
        held.add(response);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ access_token: `bench-token-${calls}`, token_type: 'Bearer', expires_in: ttlSeconds }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return {
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`,
    calls: () => calls,
    hang: () => (hanging = true),
    stop: () =>
      new Promise((resolve) => {
        for (const response of held) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/**
 * A token within twice the margin of its expiry is served from the cache at once while one background refresh runs;
 * here that refresh hangs (the auth server stopped answering), and a 2 s burst must still be answered at once, with
 * one auth-server call. Token valid 16 s, margin 4 s: refreshed ahead from 8 s, past its refresh point at 12 s.
 * @param {{ log: Log, dir: string, connections: number, inProcess: boolean }} options
 */
async function refreshingBurst({ log, dir, connections, inProcess }) {
  const ttlSeconds = 16;
  const auth = await startHangingAuthServer(ttlSeconds);
  const configPath = join(dir, 'broker-refreshing.json');
  await writeFile(
    configPath,
    JSON.stringify({
      authUrl: auth.url,
      platforms: { android: { clientId: 'bench-client', clientSecretEnv: SECRET_ENV } },
      applications: { [APPLICATION]: 'android' },
      cache: { marginSeconds: 4 },
      limits: BENCH_LIMITS,
    }),
  );
  /** @type {Listening | undefined} */
  let broker;
  try {
    broker = await startListening('broker', BIN, ['broker', '--config', configPath, '--port', '0'], {
      env: { ...process.env, [SECRET_ENV]: 'demo-secret' },
      stderrPath: join(dir, 'broker-refreshing.log'),
    });
    const url = `${broker.url}/api/gatekeeper-token?application_package=${encodeURIComponent(APPLICATION)}`;
    const fetchedAt = Date.now();
    const first = /** @type {{ access_token?: string }} */ (await (await fetch(url)).json());
    auth.hang();
    await new Promise((resolve) => setTimeout(resolve, 8200 - (Date.now() - fetchedAt)));
    const callsBefore = auth.calls();
    const result = loadResult(await cannon(url, { connections, durationSeconds: 2, inProcess }));
    const authCalls = auth.calls() - callsBefore;
    const stillCached = /** @type {{ access_token?: string }} */ (await (await fetch(url)).json()).access_token === first.access_token;
    log(
      `refreshing burst: ${result.total} requests in 2 s while the auth server hangs, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ` +
        `non-2xx ${result.non2xx}, auth-server calls ${authCalls}, cached token still served: ${stillCached}`,
    );
    return { ...result, authCalls, stillCached, ttlSeconds, marginSeconds: 4 };
  } finally {
    await broker?.stop();
    await auth.stop();
  }
}
