import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  addOptions,
  givenBy,
  integer,
  listOption,
  oneOf,
  readOptions,
  seconds,
  switchOption,
  text,
  valueOption,
} from '../../src/commands/options.js';
import { usageMessage } from '../helpers/usage-error.js';

const TABLE = {
  pageSize: valueOption({ flags: '--page-size <n>', env: 'X_PAGE_SIZE', parse: integer(1, 100), default: 10, description: 'page size' }),
  mode: valueOption({
    flags: '-m, --mode <mode>',
    env: 'X_MODE',
    parse: oneOf(['fast', 'slow']),
    choices: ['fast', 'slow'],
    description: 'mode',
  }),
  name: valueOption({ flags: '--name <name>', parse: text, description: 'a name' }),
  store: listOption({ flags: '--store <code>', parse: text, description: 'stores' }),
  pathStyle: switchOption({ flags: '--path-style', env: 'X_PATH_STYLE', description: 'path style' }),
  wait: valueOption({ flags: '--wait <seconds>', parse: seconds(60), default: 5000, defaultText: '5', description: 'wait' }),
};

function parse(args: string[]): Record<string, unknown> {
  const command = addOptions(new Command('x').exitOverride(), TABLE);
  command.parse(args, { from: 'user' });
  return command.opts();
}

describe('readOptions', () => {
  it('gives defaults, undefined or empty for what is not set', () => {
    expect(readOptions(TABLE, parse([]), {})).toEqual({
      pageSize: 10,
      mode: undefined,
      name: undefined,
      store: [],
      pathStyle: false,
      wait: 5000,
    });
  });

  it('lets a flag beat its env var, and counts an empty env var as unset', () => {
    const env = { X_PAGE_SIZE: '20', X_MODE: '', X_PATH_STYLE: 'true' };
    expect(readOptions(TABLE, parse([]), env)).toMatchObject({ pageSize: 20, mode: undefined, pathStyle: true });
    expect(readOptions(TABLE, parse(['--page-size', '30', '-m', 'slow']), env)).toMatchObject({ pageSize: 30, mode: 'slow' });
    expect(readOptions(TABLE, parse([]), { X_PATH_STYLE: '0' }).pathStyle).toBe(false);
  });

  it('parses env values like flags and names the variable in the error', () => {
    expect(usageMessage(() => readOptions(TABLE, parse([]), { X_PAGE_SIZE: '500' }))).toBe(
      'X_PAGE_SIZE "500" must be a whole number from 1 to 100',
    );
    expect(usageMessage(() => readOptions(TABLE, parse(['--page-size', '1.5']), {}))).toBe(
      '--page-size "1.5" must be a whole number from 1 to 100',
    );
    expect(usageMessage(() => readOptions(TABLE, parse([]), { X_MODE: 'medium' }))).toBe('X_MODE "medium" must be one of fast, slow');
    expect(usageMessage(() => readOptions(TABLE, parse([]), { X_PATH_STYLE: 'yes' }))).toBe(
      'X_PATH_STYLE "yes" must be 1, true, 0 or false',
    );
    expect(usageMessage(() => readOptions(TABLE, parse(['--name', ' ']), {}))).toBe('--name needs a value');
  });

  it('collects a repeatable option in order, and takes seconds as whole milliseconds', () => {
    const values = readOptions(TABLE, parse(['--store', 'B', '--store', 'A', '--wait', '2.5']), {});
    expect(values.store).toEqual(['B', 'A']);
    expect(values.wait).toBe(2500);
    expect(usageMessage(() => readOptions(TABLE, parse(['--wait', '0.0001']), {}))).toMatch(/from 0.001 to 60/);
  });

  it('tells a flag from an env var', () => {
    expect(givenBy(TABLE.pageSize, parse(['--page-size', '3']), {})).toBe('flag');
    expect(givenBy(TABLE.pageSize, parse([]), { X_PAGE_SIZE: '3' })).toBe('env');
    expect(givenBy(TABLE.pageSize, parse([]), { X_PAGE_SIZE: '' })).toBeUndefined();
  });
});

describe('addOptions', () => {
  it('drives the help: env var and default after the description, choices from the table', () => {
    const help = addOptions(new Command('x'), TABLE).helpInformation();
    expect(help).toMatch(/--page-size <n>\s+page size \(env: X_PAGE_SIZE, default: 10\)/);
    expect(help).toMatch(/--wait <seconds>\s+wait \(default: 5\)/);
    expect(help).toMatch(
      /-m, --mode <mode>\s+mode \(choices: "fast", "slow", env: X_MODE\)|mode \(env: X_MODE\) \(choices: "fast", "slow"\)/,
    );
  });
});
