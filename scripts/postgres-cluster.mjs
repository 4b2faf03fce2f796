// A throwaway PostgreSQL cluster for the tests (test/helpers/postgres.ts) and the benchmark (bench/postgres.mjs): the
// one place that knows where the binaries are, how root runs them, and how the cluster is set up.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.mjs';

const run = promisify(execFile);

/**
 * The folder of initdb, pg_ctl and postgres: the newest /usr/lib/postgresql/<version>/bin (where the Debian package
 * puts them, off PATH), else wherever PATH has initdb; undefined when PostgreSQL is not installed.
 * @type {string | undefined}
 */
export const postgresBin = (() => {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(join(root, name, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest !== undefined) return join(root, newest, 'bin');
  for (const folder of (process.env.PATH ?? '').split(':')) if (folder && existsSync(join(folder, 'initdb'))) return folder;
  return undefined;
})();

/** The server's superuser, trusted over loopback; every other role logs in with a SCRAM password. */
export const SUPERUSER = 'postgres';

/** Root may not run PostgreSQL: as root, its commands run as the `postgres` system user, in a folder it owns. */
const asRoot = userInfo().uid === 0;

/**
 * @param {string} binary
 * @param {readonly string[]} args
 * @returns {[string, string[]]}
 */
function command(binary, args) {
  const path = join(postgresBin ?? '', binary);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, [...args]];
}

/**
 * The `postgres` system user's ids when this process is root (it gives that user the cluster's folder, or a
 * tablespace's); undefined otherwise.
 * @returns {Promise<{ uid: number, gid: number } | undefined>}
 */
export async function postgresOwner() {
  if (!asRoot) return undefined;
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

/**
 * @typedef {{ host: string, port: number, certificate: string | undefined, cpuSeconds: () => number, stop: () => Promise<void> }} Cluster
 */

/** Clock ticks a second in /proc's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * The CPU time the server has spent so far: its postmaster's own and that of its ended children (each session's
 * backend is counted once its connection has closed), from /proc; NaN where there is no /proc.
 * @param {string} data the cluster's data folder
 */
function serverCpuSeconds(data) {
  try {
    const pid = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0];
    // The fields after the command's closing parenthesis: utime, stime, cutime and cstime are the 12th to 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/**
 * initdb into `data` (a folder `owner` may write in), with the cluster's settings.
 * @param {string} data
 */
async function initdb(data) {
  await run(
    ...command('initdb', ['-D', data, '-U', SUPERUSER, '--auth=trust', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C']),
  );
}

/**
 * initdb's data folder, made once in `folder` (per version) and copied for each cluster: the test run's clusters,
 * one per file, each a 20 ms copy instead of a 650 ms initdb. Made beside its place and renamed into it, so that of
 * two processes making it at once each finds a whole one.
 * @param {string} folder
 * @param {{ uid: number, gid: number } | undefined} owner
 * @returns {Promise<string>}
 */
async function initializedData(folder, owner) {
  const template = join(folder, `area-metrics-pg-template-${basename(dirname(postgresBin ?? ''))}`);
  if (existsSync(template)) return template;
  const making = mkdtempSync(`${template}-making-`);
  chmodSync(making, 0o755);
  if (owner !== undefined) chownSync(making, owner.uid, owner.gid);
  try {
    await initdb(join(making, 'data'));
    renameSync(join(making, 'data'), template);
  } catch (error) {
    // Another process made it first: theirs is as good.
    if (!existsSync(template)) throw error;
  } finally {
    rmSync(making, { recursive: true, force: true });
  }
  return template;
}

/**
 * A throwaway cluster: initdb into a temp folder, then pg_ctl start on a free loopback port with its unix socket in
 * that folder, durability off (its data need not survive a power cut). Loopback connections: the superuser trusted,
 * every other role by SCRAM password. With `tls`, the server offers TLS with a self-signed certificate (for
 * 127.0.0.1 and localhost, its file is `certificate`), and the role `tls_only` is let in over TLS alone. With
 * `templates`, a folder that outlives the cluster (the test run's), the data folder is a copy of one initdb made there.
 * @param {{ tls?: boolean, templates?: string }} [options]
 * @returns {Promise<Cluster>}
 */
export async function startCluster(options = {}) {
  if (!postgresBin) throw new Error('PostgreSQL is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'area-metrics-pg-'));
  chmodSync(dir, 0o755);
  const owner = await postgresOwner();
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  if (options.templates === undefined) await initdb(data);
  else await run('cp', ['-a', await initializedData(options.templates, owner), data]);
  const hba = [
    `local all ${SUPERUSER} trust`,
    `host all ${SUPERUSER} 127.0.0.1/32 trust`,
    ...(options.tls ? ['hostnossl all tls_only 127.0.0.1/32 reject'] : []),
    'host all all 127.0.0.1/32 scram-sha-256',
  ];
  writeFileSync(join(data, 'pg_hba.conf'), `${hba.join('\n')}\n`);
  const certificate = options.tls ? join(dir, 'server.crt') : undefined;
  if (certificate !== undefined) {
    const key = join(data, 'server.key');
    const served = join(data, 'server.crt');
    await run('openssl', [
      ...['req', '-new', '-x509', '-days', '2', '-nodes', '-subj', '/CN=localhost'],
      ...['-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', served],
    ]);
    writeFileSync(certificate, readFileSync(served));
    chmodSync(key, 0o600);
    if (owner !== undefined) for (const file of [key, served]) chownSync(file, owner.uid, owner.gid);
  }
  const port = await freePort();
  const settings = [
    `-c port=${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    "-c password_encryption='scram-sha-256'",
    ...(options.tls ? ['-c ssl=on'] : []),
  ];
  await run(...command('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', settings.join(' '), '-w', '-s', 'start']));
  let stopped = false;
  return {
    host: '127.0.0.1',
    port,
    certificate,
    cpuSeconds: () => serverCpuSeconds(data),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await run(...command('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-s', 'stop'])).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
