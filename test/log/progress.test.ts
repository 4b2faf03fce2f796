import { describe, expect, it } from 'vitest';
import { createImportProgress } from '../../src/log/progress.js';
import { useColor } from '../../src/log/logger.js';
import { captured } from '../helpers/cli.js';

/** A stream that says it is a terminal 80 columns wide, keeping what is written to it. */
function terminal(): ReturnType<typeof captured> & { isTTY: boolean; columns: number } {
  return Object.assign(captured(), { isTTY: true, columns: 80 });
}

const ESCAPE = '\x1b';

describe('the import progress', () => {
  it('on a terminal with NO_COLOR: plain lines, no spinner and no escape code at all', async () => {
    const stream = terminal();
    const color = useColor(stream, { NO_COLOR: '1' });
    const progress = await createImportProgress(stream, { format: 'text', level: 'info', color });
    progress.page('traffic 2026-11-20', 1, 10);
    progress.logger.warn('traffic 2026-11-20: a warning');
    progress.unitDone('traffic 2026-11-20: 10 rows -> traffic/2026-11-20.csv', {});
    progress.finish('imported 1 of 1 units', {}, true);
    expect(stream.text()).not.toContain(ESCAPE);
    expect(stream.text().split('\n')).toEqual([
      'warn: traffic 2026-11-20: a warning',
      'traffic 2026-11-20: 10 rows -> traffic/2026-11-20.csv',
      'imported 1 of 1 units',
      '',
    ]);
  });

  it('counts the warning lines it wrote, and none under -q, where it writes none', async () => {
    for (const [level, count] of [
      ['info', 2],
      ['error', 0],
    ] as const) {
      const stream = captured();
      const progress = await createImportProgress(stream, { format: 'text', level });
      progress.logger.warn('one');
      progress.logger.warn('two');
      expect(progress.warnings(), level).toBe(count);
      expect(
        stream
          .text()
          .split('\n')
          .filter((line) => / warn: /.test(line)),
        level,
      ).toHaveLength(count);
    }
  });
});
